#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The error state is persisted (issue 14: needs_check): when the cache
# device fails a log write, the target goes read_only and records
# needs_check in the health block (block 1 of erase block 0).  The next
# load must say so (kernel message, needs_check=1) and come up in cleaner
# mode: acknowledged data reads back, new writes work, dirty data drains to
# the origin.  It stays set over further loads until 'format'.
#
# The cache device is erase block 0 (linear) followed by the segments
# through dm-flakey, so log writes fail while the health block can still
# be written.
#
# vm: origin=2G cache=256M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"


wow_reset_disks
seg_fault_table "$CACHE" up | dmsetup create cd || fail "cannot create cd"
C=$(dm_node cd)
JOB="--offset=0 --size=512M --io_size=8M --bs=4k --randseed=61"

wow_create nc "$ORIGIN" "$C" low_watermark 98 high_watermark 99
D=$(dm_node nc)
[ "$(wow_stat nc needs_check)" = 0 ] || fail "needs_check set on a new cache"
fio_verify "$D" --rw=randwrite --iodepth=16 $JOB

info "the cache device fails log writes"
seg_fault_set "$CACHE" down
if dd if=/dev/urandom of="$D" bs=4k count=1 seek=200000 oflag=direct \
	2> /dev/null; then
	fail "a write succeeded with the cache failing writes"
fi
wow_status nc | grep -q "^read_only " ||
	fail "not read_only after a log write error: $(wow_status nc)"
[ "$(wow_stat nc needs_check)" = 1 ] || fail "needs_check not set: $(wow_status nc)"
sleep 1				# the health block is written by a worker
seg_fault_set "$CACHE" up
wow_remove nc

info "reload: needs_check, cleaner mode, data intact"
dmesg_clear
wow_create nc "$ORIGIN" "$C" low_watermark 98 high_watermark 99
dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
dmesg_since | grep -q "needs_check" || fail "no needs_check message at load"
[ "$(wow_stat nc needs_check)" = 1 ] || fail "needs_check lost at reload: $(wow_status nc)"
wow_status nc | grep -q "^cleaning " ||
	fail "a needs_check cache did not load in cleaner mode: $(wow_status nc)"
fio_verify_only "$D" --rw=randwrite --iodepth=16 $JOB
dd if=/dev/urandom of="$D" bs=4k count=16 seek=300000 oflag=direct \
	2> /dev/null || fail "a write failed on the reloaded cache"
wow_wait_clean nc 120
wow_remove nc
fio_verify_only "$ORIGIN" --rw=randwrite --iodepth=16 $JOB

info "still set at the next load; 'format' clears it"
wow_create nc "$ORIGIN" "$C"
[ "$(wow_stat nc needs_check)" = 1 ] || fail "needs_check lost at a second reload"
wow_remove nc
wow_create nc "$ORIGIN" "$C" format
[ "$(wow_stat nc needs_check)" = 0 ] || fail "format did not clear needs_check"
wow_status nc | grep -q "^ok " || fail "not ok after format: $(wow_status nc)"
wow_remove nc
wow_create nc "$ORIGIN" "$C"
[ "$(wow_stat nc needs_check)" = 0 ] || fail "needs_check back after format"
wow_remove nc
run dmsetup remove cd
echo "cache-needs-check: ok"
