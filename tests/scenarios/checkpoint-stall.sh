#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What a checkpoint costs the writes that wait for it (issue 34): a 64
# GiB cache (sparse image, 4 KiB blocks, 1 MiB erase blocks: a slot table
# of 96 MiB an area, of which a checkpoint writes the blocks whose slots
# changed since that area was written; whole, before 2026-11-28, each
# checkpoint stalled writes for seconds) takes O_SYNC 4 KiB
# random writes at iodepth 1 for 30 s twice: with no checkpoint due
# (checkpoint_interval at its largest) and with one every 16,384 log
# blocks (64 MiB).  fio's completion latency percentiles and maximum of
# both runs, the checkpoints written in each (from the areas'
# generations) and the ratio of the second run's maximum to the first
# run's p99.9 and to its maximum are printed (in the TCG VM the largest
# latency of 30 s with no checkpoint is itself 2 to 4 times its p99.9).
# A measurement, not a test of timing: it fails only when no checkpoint
# was written while it should have been, or an
# I/O failed.  Takes minutes: WOW_LARGE=1 (make check-large).
#
# vm: origin=2G cache=64G timeout=1200
. "${WOW_LIB:-/wow/lib.sh}"

[ "${WOW_LARGE:-0}" = 1 ] ||
	skip "a 64 GiB cache's checkpoints take minutes: run with WOW_LARGE=1 (make check-large)"

CKI=/sys/module/dm_wow/parameters/checkpoint_interval
BS=4096
JOB="--rw=randwrite --bs=4k --size=1g --iodepth=1 --sync=1 --time_based --runtime=30 --randseed=34 --percentile_list=50:99:99.9"

# gens: the highest generation of the areas' headers (one per checkpoint
# written, and one per area retired)
gens() {
	_s=0
	for _b in $(ckpt_blocks "$CACHE"); do
		_g=$(read_u "$CACHE" $((_b * BS + 40)) 8)
		[ "$_g" -le $_s ] || _s=$_g
	done
	echo $_s
}

# lat NAME: run the job, print clat p50/p99/p99.9/max in us; sets
# P999 and MAX (us)
lat() {
	fio --name=wow --filename="$D" --ioengine=libaio --direct=1 $JOB \
		--output-format=json --output=/tmp/cs-$1.json ||
		fail "fio failed ($1)"
	eval "$(awk '
		/"clat_ns"/ { c = 1 }
		c && /"max"/ { gsub(/[^0-9.]/, "", $3); m = $3 }
		c && /"50.000000"/ { gsub(/[^0-9]/, "", $3); p50 = $3 }
		c && /"99.000000"/ { gsub(/[^0-9]/, "", $3); p99 = $3 }
		c && /"99.900000"/ { gsub(/[^0-9]/, "", $3); p999 = $3; mx = m }
		/"lat_ns"/ { c = 0 }
		END { printf "P50=%d P99=%d P999=%d MAX=%d\n", p50 / 1000,
			p99 / 1000, p999 / 1000, mx / 1000 }' /tmp/cs-$1.json)"
	IOS=$(grep '"total_ios"' /tmp/cs-$1.json | tr -dc '0-9\n' | sort -n | tail -n 1)
	echo "$1: $IOS writes; clat p50 ${P50} us, p99 ${P99} us, p99.9 ${P999} us, max ${MAX} us"
}

wow_reset_disks
wow_create cs "$ORIGIN" "$CACHE" sequential_cutoff 0
D=$(dm_node cs)
[ "$(read_u "$CACHE" 4 4)" -ge 2 ] || skip "no checkpoints (format version 1)"
echo "checkpoint area: $(($(read_u "$CACHE" 48 8) * 512 / 1048576 - 1)) MiB from erase block 1"

echo 4294967295 > $CKI
G0=$(gens)
lat none
G1=$(gens)
BASE_P999=$P999 BASE_MAX=$MAX
echo 16384 > $CKI
lat every64m
G2=$(gens)
echo 0 > $CKI
echo "checkpoint generations: $((G1 - G0)) in the first run, $((G2 - G1)) in the second"
[ $((G2 - G1)) -gt 0 ] || fail "no checkpoint was written in the second run"
wow_no_errors cs
wow_remove cs
awk -v m="$MAX" -v p="$BASE_P999" -v bm="$BASE_MAX" 'BEGIN {
	printf "checkpoint-stall: largest write latency with checkpoints %d us = %.1f x the p99.9 without (%d us), %.1f x the largest without (%d us)\n",
		m, p ? m / p : 0, p, bm ? m / bm : 0, bm }'
echo "checkpoint-stall: ok"
