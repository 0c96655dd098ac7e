#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Create and remove wow devices: INFO status prefix, TABLE round trip (with
# and without options), reopen of a formatted cache, suspend/resume, data
# kept across remove/create, and the module unloads when nothing uses it.
#
# vm: origin=2G cache=256M timeout=180
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
O=$(dev_id "$ORIGIN") && C=$(dev_id "$CACHE") || fail "cannot stat disks"
LEN=$(size_sectors "$ORIGIN")
CACHE_BLOCKS_MAX=$(($(size_sectors "$CACHE") / 8))

# check_status NAME POLICY BLOCK_SIZE: INFO status starts with
# "ok POLICY BLOCK_SIZE <cache_blocks> <free_blocks> <dirty_blocks>"
check_status() {
	st=$(wow_status "$1")
	echo "status: $st"
	echo "$st" | grep -Eq "^ok $2 $3 [0-9]+ [0-9]+ [0-9]+( |\$)" ||
		fail "status of $1 does not start with 'ok $2 $3 N N N': $st"
	set -- $st
	[ "$4" -gt 0 ] || fail "cache_blocks is 0: $st"
	[ "$4" -le $((CACHE_BLOCKS_MAX * 4096 / $3)) ] ||
		fail "cache_blocks $4 larger than the cache device: $st"
	[ "$5" -le "$4" ] || fail "free_blocks > cache_blocks: $st"
	[ "$6" -le "$4" ] || fail "dirty_blocks > cache_blocks: $st"
}

# check_table NAME EXPECTED: `dmsetup table NAME` prints EXPECTED exactly
check_table() {
	t=$(dmsetup table "$1")
	echo "table: $t"
	[ "$t" = "$2" ] || fail "table of $1 is '$t', expected '$2'"
	case " $t " in
	*" format "*)
		fail "table of $1 re-emits 'format': reloading it would wipe the cache"
		;;
	esac
}

info "create with no options (formats the blank cache)"
wow_create w "$ORIGIN" "$CACHE"
dm_node w
check_status w wow 4096
set -- $(wow_status w)
[ "$6" -eq 0 ] || fail "fresh cache has dirty_blocks=$6"
check_table w "0 $LEN wow $O $C 0"

info "write data, suspend/resume, read it back"
D=$(dm_node w)
dd if=/dev/urandom of=/tmp/data bs=1M count=4 2> /dev/null
run dd if=/tmp/data of="$D" bs=1M seek=100 oflag=direct conv=notrunc
want=$(md5sum < /tmp/data | cut -d' ' -f1)
run dmsetup suspend w
dmsetup info w | grep -q SUSPENDED || fail "w is not SUSPENDED after suspend"
run dmsetup resume w
dmsetup info w | grep -q ACTIVE || fail "w is not ACTIVE after resume"
dmsetup info w | grep -q SUSPENDED && fail "w still SUSPENDED after resume"
[ "$(sum_dev "$D" 4 100)" = "$want" ] || fail "data changed across suspend/resume"

info "table round trip: recreate from what dmsetup table printed"
tbl=$(dmsetup table w)
wow_remove w
dmesg_clear
run dmsetup create w2 --table "$tbl"
check_table w2 "$tbl"
check_status w2 wow 4096
[ "$(sum_dev "$(dm_node w2)" 4 100)" = "$want" ] ||
	fail "data written before remove is not read back after reopen"
wow_remove w2

# check_limits NAME BLOCK_SIZE WRITE_GROUP: the queue limits io_hints sets
check_limits() {
	q=/sys/block/dm-$(dmsetup info -c --noheadings -o minor "$1" | tr -d ' ')/queue
	lbs=$(cat $q/logical_block_size) min=$(cat $q/minimum_io_size)
	opt=$(cat $q/optimal_io_size)
	echo "limits: logical $lbs, minimum io $min, optimal io $opt"
	[ "$lbs" = "$2" ] || fail "logical_block_size $lbs, not $2"
	[ "$min" -ge "$2" ] || fail "minimum_io_size $min below the block size $2"
	[ "$opt" = "$3" ] || fail "optimal_io_size $opt, not the write group $3"
}

# a block above the page size where the kernel takes it, else below
if big_blocks; then
	BS=8192
else
	BS=2048
	info "block_size above the page size: refused on $(uname -r)"
	BAD_TABLES=0
	expect_create_fails "block_size 8192 on $(uname -r)" \
		"0 $LEN wow $ORIGIN $CACHE 2 block_size 8192" \
		"block_size above the page size is not supported"
fi

info "create with options (blank cache)"
wow_reset_disks
wow_create w "$ORIGIN" "$CACHE" block_size $BS policy cscan
check_table w "0 $LEN wow $O $C 4 block_size $BS policy cscan"
check_status w cscan $BS
check_limits w $BS 131072
wow_remove w

info "create again with the same options (reopens the cache)"
wow_create w "$ORIGIN" "$CACHE" block_size $BS policy cscan
check_table w "0 $LEN wow $O $C 4 block_size $BS policy cscan"
check_status w cscan $BS
wow_remove w

info "every tunable option round-trips"
wow_reset_disks
opts="block_size 4096 erase_block_size 2097152 write_group_size 262144"
opts="$opts policy lrw low_watermark 50 high_watermark 70 max_destage_ios 64"
opts="$opts max_destage_size 524288 max_age 30 sequential_cutoff 4194304"
wow_create w "$ORIGIN" "$CACHE" $opts
check_table w "0 $LEN wow $O $C 20 $opts"
check_status w lrw 4096
# the runtime tunables in effect are in the status too
wow_status w | grep -q ' max_destage_ios=64 max_destage_size=524288 max_age=30 sequential_cutoff=4194304' ||
	fail "the status lacks the tunables in effect: $(wow_status w)"
wow_remove w

info "format on a blank cache is not re-emitted; cleaner is"
wow_reset_disks
wow_create w "$ORIGIN" "$CACHE" format
check_table w "0 $LEN wow $O $C 0"
wow_remove w
wow_create w "$ORIGIN" "$CACHE" cleaner
check_table w "0 $LEN wow $O $C 1 cleaner"
wow_remove w

info "remove and create again"
wow_create w "$ORIGIN" "$CACHE"
check_status w wow 4096
wow_remove w
[ "$(dm_count)" -eq 0 ] || fail "dm devices left: $(dmsetup ls)"

info "module unloads and reloads"
run rmmod dm_wow
run modprobe dm-wow
wow_create w "$ORIGIN" "$CACHE"
check_status w wow 4096
wow_remove w
echo "create-remove: ok"
