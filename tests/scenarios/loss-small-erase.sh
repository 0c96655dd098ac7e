#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Issue 34 A: small erase blocks (64 KiB: 16 blocks a segment, records of
# at most 8 data blocks) on small caches, no crash.  fio writes 4 KiB and
# 16 KiB blocks (O_SYNC, never a block twice) with crc32c verify headers
# for a few seconds; everything reads back through the device; then
# cleaner on, drain, remove, and the origin alone must hold every block.
# Cases (cache MiB : low : high watermark : block sizes): the default
# watermarks and 90/95 (the log then cleans by copying), mixed sizes and
# 16 KiB writes alone.
#
# Each verify pass runs with --verify_state_save=0.  Without it fio's
# verify-only run rewrites the state file with its own progress, and the
# next pass checks blocks the writer never wrote ("bad magic header 0"):
# the issue's report of A came from that (reproduced with no dm-wow at all,
# on a plain file; Documentation/reliability.md).
#
# vm: origin=2G cache=64M timeout=900
. "${WOW_LIB:-/wow/lib.sh}"

: "${WOW_LOSS_CASES:=4:20:30:4k/80:16k/20 16:90:95:4k/80:16k/20 16:20:30:16k 64:20:30:4k/80:16k/20}"
: "${WOW_LOSS_SECONDS:=6}"
cd /tmp || fail "no /tmp"
wow_reset_disks
n=0
for c in $WOW_LOSS_CASES; do
	n=$((n + 1))
	IFS=: read -r mib low high bss <<-EOF2
	$c
	EOF2
	JOB="--rw=randwrite --bssplit=$bss --size=1g --sync=1 --iodepth=16 --randseed=$((34 + n))"
	info "case $n: cache $mib MiB, erase_block_size 65536, watermarks $low/$high, writes $bss"
	zero_dev "$ORIGIN" 1100
	run dmsetup create lc --table "0 $((mib * 2048)) linear $CACHE 0" > /dev/null
	C=$(dm_node lc)
	zero_dev "$C" 4
	wow_create ls "$ORIGIN" "$C" erase_block_size 65536 \
		low_watermark "$low" high_watermark "$high"
	D=$(dm_node ls)
	rm -f ./*verify.state
	fio_run "$D" --verify=crc32c --do_verify=0 --verify_state_save=1 \
		--time_based --runtime="$WOW_LOSS_SECONDS" $JOB
	echo "status after writing: $(wow_status ls)"
	fio_check_state "$D" $JOB
	wow_clean_remove ls
	dmsetup remove lc
	info "case $n: the origin alone"
	fio_check_state "$ORIGIN" $JOB
done
echo "loss-small-erase: $n cases ok"
