#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Invariant 8 when the origin fails the flush a log append needs: an
# O_SYNC write (FUA, then a FLUSH) to a cached block while a bypassed write
# is waiting for an origin flush, and that flush fails (dm-flakey
# error_writes under the origin).  The origin error must keep the device
# usable (state stays "cleaning", not read_only; the FUA write's data is
# in the log), the FLUSHes must fail while the bypassed write cannot be
# made durable, and once the fault clears a FLUSH succeeds and cleaning
# ends with the data on the origin.
#
# vm: origin=2G cache=256M timeout=240
. "${WOW_LIB:-/wow/lib.sh}"

LEN=$(size_sectors "$ORIGIN")
wow_reset_disks
run dmsetup create of-fl --table "0 $LEN flakey $ORIGIN 0 3600 0"
wow_create of "$(dm_node of-fl)" "$CACHE"
D=$(dm_node of)
dd if=/dev/urandom of=/tmp/of.b1 bs=4k count=1 2> /dev/null
# B2: what fio writes with --buffer_pattern=0x5a (O_DIRECT|O_SYNC: FUA)
dd if=/dev/zero bs=4k count=1 2> /dev/null | tr '\000' Z > /tmp/of.b2
dd if=/dev/urandom of=/tmp/of.w bs=64k count=1 2> /dev/null
run dd if=/tmp/of.b1 of="$D" bs=4k seek=100 oflag=direct conv=notrunc
wow_message of cleaner on
# B1's destage commits the log first, and that commit flushes the origin:
# were it to run after W, W would be durable before the fault and the
# O_SYNC write below rightly succeed.  So B1 is clean (it stays cached)
# before W, and nothing flushes the origin between W and the fault.
wow_wait_clean of 60
info "W: bypassed (cleaner mode, block not cached)"
run dd if=/tmp/of.w of="$D" bs=64k seek=64 oflag=direct conv=notrunc
[ "$(wow_stat of writes_bypassed)" -ge 1 ] || fail "W was not bypassed: $(wow_status of)"

info "origin fails every write and flush from now on"
run dmsetup suspend of-fl
run dmsetup reload of-fl --table "0 $LEN flakey $ORIGIN 0 0 3600 1 error_writes"
run dmsetup resume of-fl
info "O_SYNC write to the cached block: its append needs the origin flush"
# A block device's O_SYNC write is a FUA write and then a FLUSH; the FLUSH
# must fail (W cannot be made durable), the FUA write itself need not.
if fio --name=fua --filename="$D" --rw=write --bs=4k --offset=409600 \
	--size=4k --direct=1 --sync=1 --ioengine=psync --buffer_pattern=0x5a \
	--output=/tmp/of.fio; then
	fail "an O_SYNC write succeeded while the origin cannot flush W"
fi
st=$(wow_status of)
echo "status: $st"
[ "${st%% *}" = cleaning ] || fail "an origin flush error changed the state: $st"
[ "$(wow_stat of origin_errors)" -ge 1 ] || fail "no origin error counted: $st"
if dd if=/dev/zero of="$D" bs=4k count=0 conv=fsync 2> /dev/null; then
	fail "a FLUSH succeeded while the origin could not make W durable"
fi
echo "FLUSH failed while the origin fails: as it must"
got=$(dd if="$D" bs=4k skip=100 count=1 iflag=direct 2> /dev/null | md5sum)
[ "$got" = "$(md5sum < /tmp/of.b2)" ] || fail "the FUA write does not read back"

info "the fault clears: FLUSH works, cleaning ends"
run dmsetup suspend of-fl
run dmsetup reload of-fl --table "0 $LEN flakey $ORIGIN 0 3600 0"
run dmsetup resume of-fl
run dd if=/dev/zero of="$D" bs=4k count=0 conv=fsync
wow_wait_clean of 120
st=$(wow_status of)
[ "${st%% *}" = cleaning ] || fail "state after the fault: $st"
wow_remove of
run dmsetup remove of-fl
got=$(dd if="$ORIGIN" bs=4k skip=100 count=1 iflag=direct 2> /dev/null | md5sum)
[ "$got" = "$(md5sum < /tmp/of.b2)" ] || fail "the cached block did not reach the origin"
got=$(dd if="$ORIGIN" bs=64k skip=64 count=1 iflag=direct 2> /dev/null | md5sum)
[ "$got" = "$(md5sum < /tmp/of.w)" ] || fail "W is not on the origin"
echo "fault-origin-flush: ok"
