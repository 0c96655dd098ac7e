#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# write_group_size defaults to the origin's optimal I/O size (issue 35): over
# a dm-stripe of two 128 KiB chunks (io_opt 256 KiB, a full stripe) a table
# with no write_group_size gets 256 KiB groups, shown in the status and as
# the target's own io_opt, and TABLE does not name it.  A group written
# whole is destaged as one write of the whole group.  The cache reloads
# with the same line and with the value named; another value is refused; a
# cache formatted with a named group keeps it when the line names none.
# Over the plain disk (no io_opt) the default stays 128 KiB.
#
# vm: origin=2G cache=256M timeout=240
. "${WOW_LIB:-/wow/lib.sh}"

GROUP=262144

# stripe: the origin, two slices of the disk striped in 128 KiB chunks
stripe() {
	run dmsetup create st --table \
		"0 2097152 striped 2 256 $ORIGIN 0 $ORIGIN 1048576"
	ST=$(dm_node st)
}

# opt_io NAME: the optimal_io_size dm device NAME reports
opt_io() {
	cat /sys/block/dm-$(dmsetup info -c --noheadings -o minor "$1" |
			    tr -d ' ')/queue/optimal_io_size
}

# expect_stat NAME KEY VALUE
expect_stat() {
	_v=$(wow_stat "$1" "$2")
	[ "$_v" = "$3" ] || fail "$1: $2 is '$_v', not $3: $(wow_status "$1")"
}

wow_reset_disks
stripe
[ "$(opt_io st)" = $GROUP ] ||
	skip "the striped origin reports optimal_io_size $(opt_io st), not $GROUP"
S=$(dev_id "$ST") && C=$(dev_id "$CACHE") || fail "cannot stat disks"
LEN=$(size_sectors "$ST")

info "no write_group_size: the origin's optimal I/O size"
wow_create w "$ST" "$CACHE"
echo "status: $(wow_status w)"
expect_stat w write_group_size $GROUP
expect_stat w max_destage_size 1048576
[ "$(dmsetup table w)" = "0 $LEN wow $S $C 0" ] ||
	fail "TABLE names what the user did not: $(dmsetup table w)"
[ "$(opt_io w)" = $GROUP ] || fail "w reports optimal_io_size $(opt_io w)"

info "a group written whole goes to the origin as one write"
D=$(dm_node w)
dd if=/dev/urandom of=/tmp/group bs=$GROUP count=1 2> /dev/null
want=$(md5sum < /tmp/group | cut -d' ' -f1)
wow_message w clear_stats
run dd if=/tmp/group of="$D" bs=$GROUP seek=4 oflag=direct conv=notrunc
wow_message w cleaner on
wow_wait_clean w 60
echo "status: $(wow_status w)"
expect_stat w destage_blocks $((GROUP / 4096))
expect_stat w destage_writes 1
wow_message w cleaner off
got=$(dd if="$ST" bs=$GROUP skip=4 count=1 iflag=direct 2> /dev/null |
      md5sum | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "the origin does not hold the destaged group"

info "dirty data kept across remove and create with the same line"
dd if=/dev/urandom of=/tmp/data bs=1M count=4 2> /dev/null
run dd if=/tmp/data of="$D" bs=1M seek=16 oflag=direct conv=notrunc
want=$(md5sum < /tmp/data | cut -d' ' -f1)
wow_remove w
wow_create w "$ST" "$CACHE"
expect_stat w write_group_size $GROUP
[ "$(sum_dev "$(dm_node w)" 4 16)" = "$want" ] ||
	fail "data not read back after create with the same line"

info "reload naming the resolved value"
run dmsetup suspend w
run dmsetup reload w --table "0 $LEN wow $ST $CACHE 2 write_group_size $GROUP"
run dmsetup resume w
[ "$(dmsetup table w)" = "0 $LEN wow $S $C 2 write_group_size $GROUP" ] ||
	fail "TABLE after reload: $(dmsetup table w)"
expect_stat w write_group_size $GROUP
[ "$(sum_dev "$(dm_node w)" 4 16)" = "$want" ] ||
	fail "data not read back after reload"
wow_remove w

info "another write_group_size is refused"
expect_create_fails "write_group_size 131072 over a 256 KiB cache" \
	"0 $LEN wow $ST $CACHE 2 write_group_size 131072" \
	"another write_group_size"

info "a cache formatted with a named group keeps it when none is named"
run dmsetup remove st
wow_reset_disks
stripe
wow_create w "$ST" "$CACHE" write_group_size 131072
wow_remove w
wow_create w "$ST" "$CACHE"
expect_stat w write_group_size 131072
[ "$(dmsetup table w)" = "0 $LEN wow $S $C 0" ] ||
	fail "TABLE names what the user did not: $(dmsetup table w)"
wow_remove w
run dmsetup remove st

info "an origin with no optimal I/O size: the default group"
wow_reset_disks
wow_create w "$ORIGIN" "$CACHE"
expect_stat w write_group_size 131072
wow_remove w
echo "group-io-opt: ok"
