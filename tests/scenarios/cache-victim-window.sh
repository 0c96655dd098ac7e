#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Issue 34, finding 7: a victim pick's work is bounded.  A 128 MiB cache
# of 16 KiB erase blocks has 8,192 segments, twice the 4,096 a pick walks
# before it settles for the best it saw (WOW_VICTIM_WINDOW, dm-wow-clean.c;
# the lock is held for 256 at a time).  200 MiB of random writes over
# 1 GiB (8 times the cache: the log wraps) keep cleaning busy; the test
# build's hook test_victim_scan_max says the most segments a pick that found
# a victim walked: at most 4,096 (a pick walking the whole table, as
# before, makes it about 8,100).  Meanwhile the walk is what prunes dead tombstones and gives
# the log its lower bound of the oldest segment life
# (wow_log_visit_seg): everything written must read back through the
# device, after a reload (the log replayed with those tombstones), and
# from the origin alone once cleaned.
#
# vm: origin=2G cache=128M timeout=900
. "${WOW_LIB:-/wow/lib.sh}"

JOB="--rw=randwrite --bs=4k --size=1g --iodepth=16 --randseed=347"
cd /tmp || fail "no /tmp"
wow_reset_disks
wow_test_hook test_victim_scan_max 0 ||
	skip "not a test build (no test_victim_scan_max)"
wow_create vw "$ORIGIN" "$CACHE" erase_block_size 16384
D=$(dm_node vw)
echo "status: $(wow_status vw)"
rm -f ./*verify.state
fio_run "$D" --verify=crc32c --do_verify=0 --verify_state_save=1 \
	--io_size="${WOW_WINDOW_MIB:-200}m" $JOB
st=$(wow_status vw)
echo "status after writing: $st"
max=$(cat /sys/module/dm_wow/parameters/test_victim_scan_max)
echo "most segments a pick that found a victim walked: $max"
[ "$(wow_stat vw reclaimed_segments)" -gt 0 ] ||
	fail "no segment was reclaimed: the log never wrapped ($st)"
[ "$max" -gt 0 ] || fail "no pick found a victim lazy recycling allows"
[ "$max" -le 4096 ] ||
	fail "a pick walked $max segments of 8192 (bound: 4096)"
fio_check_state "$D" $JOB
info "reload: the log replayed"
wow_remove vw
wow_create vw "$ORIGIN" "$CACHE" erase_block_size 16384
fio_check_state "$D" $JOB
wow_clean_remove vw
info "the origin alone"
fio_check_state "$ORIGIN" $JOB
echo "cache-victim-window: ok ($max segments at most)"
