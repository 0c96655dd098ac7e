#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Destage progress is durable (issue 14): blocks destaged before a crash
# are not destaged again after it.  Boot 1 writes 8 MiB of random data in
# 4 KiB to 256 KiB pieces through a cache that destages at once
# (watermarks 0/1), waits until nothing is dirty and for the clean marks
# to reach the log (a record of marks is due at most 1 s after the last
# destage; the scenario waits 3 s), then cuts the power: no clean
# shutdown, so no shutdown record of clean marks.  Boot 2 loads the cache:
# it must come up with no dirty block, destage nothing within 5 s, and
# read the data back, from the cache and then from the origin alone.
# Then it does the same with a cache that is suspended and resumed
# between the writes and the cut (marks pending at a suspend are covered
# by the shutdown record).
#
# vm: origin=2G cache=64M timeout=180 boots=3
. "${WOW_LIB:-/wow/lib.sh}"

DATA=$RESULTS/$WOW_NAME.data
OPTS="low_watermark 0 high_watermark 1"

# write_destage_cut: write DATA at 64 MiB, let it all destage, cut power
write_destage_cut() {
	wow_create dp "$ORIGIN" "$CACHE" $OPTS
	D=$(dm_node dp)
	fio_run "$D" --rw=randwrite --bsrange=4k-256k --blockalign=4k \
		--offset=64M --size=8M --iodepth=8 --randseed=$WOW_BOOT
	wow_wait_clean dp 120
	echo "destaged: $(wow_stat dp destage_blocks) blocks in $(wow_stat dp destage_writes) writes"
	[ "${1:-}" != suspend ] || { run dmsetup suspend dp; run dmsetup resume dp; }
	sleep 3
	echo "status at the cut: $(wow_status dp)"
	dd if="$D" bs=1M skip=64 count=8 iflag=direct 2> /dev/null |
		md5sum > "$DATA" || fail "cannot read the data back"
	wow_power_cut
}

# check_no_destage: load after the cut; nothing dirty, nothing destaged
check_no_destage() {
	wow_create dp "$ORIGIN" "$CACHE" $OPTS
	D=$(dm_node dp)
	echo "status at load: $(wow_status dp)"
	dmesg_since | grep -E 'wow: .*recovered' | sed 's/^/    kernel: /'
	_dirty=$(wow_stat dp dirty_blocks)
	[ "$_dirty" = 0 ] ||
		fail "$_dirty blocks destaged before the crash came back dirty"
	sleep 5
	_dw=$(wow_stat dp destage_writes)
	[ "$_dw" = 0 ] || fail "$_dw destage writes after recovery of a clean cache: $(wow_status dp)"
	_got=$(dd if="$D" bs=1M skip=64 count=8 iflag=direct 2> /dev/null | md5sum)
	[ "$_got" = "$(cat "$DATA")" ] || fail "data read through the cache differs"
	wow_remove dp
	_got=$(dd if="$ORIGIN" bs=1M skip=64 count=8 iflag=direct 2> /dev/null | md5sum)
	[ "$_got" = "$(cat "$DATA")" ] || fail "data on the origin alone differs"
}

case $WOW_BOOT in
1)
	wow_reset_disks
	info "write, destage, cut the power"
	write_destage_cut ;;
2)
	info "after the cut: the destaged blocks must be clean"
	check_no_destage
	info "again, with a suspend and resume before the cut"
	wow_reset_disks
	write_destage_cut suspend ;;
3)
	check_no_destage
	echo "crash-destage-progress: ok" ;;
esac
