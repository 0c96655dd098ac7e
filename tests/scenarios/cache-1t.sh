#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A 1 TiB cache with 4 KiB blocks (sparse image; issue 14): it is created,
# filled in part (256 MiB in 1 MiB writes, 16 MiB in 4 KiB writes), power
# cut after a commit, and recovered in the next boot from the checkpoint
# written at format and the log since: every write reads back.  Then a clean shutdown and a load from the checkpoint.  What each
# load reads and how long it takes are printed.  The index takes 14 bytes
# per block (3.5 GiB) and the scan 8 more while it runs, so the VM gets
# 8 GiB; the run takes minutes, so it runs only when asked for
# (WOW_LARGE=1: make check-large).
#
# vm: origin=16G cache=1T mem=8G timeout=2400 boots=2
. "${WOW_LIB:-/wow/lib.sh}"

[ "${WOW_LARGE:-0}" = 1 ] ||
	skip "a 1 TiB cache takes minutes: run with WOW_LARGE=1 (make check-large)"

DEV=$(basename "$(readlink -f "$CACHE")")
BIG="--rw=randwrite --bs=1M --offset=0 --size=8G --io_size=256M --randseed=81"
SMALL="--rw=randwrite --bs=4k --offset=12G --size=16M --randseed=82"
OPTS="sequential_cutoff 0 low_watermark 90 high_watermark 95"

reads() { awk '{ print $3 }' "/sys/block/$DEV/stat"; }
now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

timed_create() {	# timed_create WHAT: create lt, print read and time
	_r0=$(reads) _t0=$(now_ms)
	wow_create lt "$ORIGIN" "$CACHE" $OPTS
	READ=$(($(reads) - _r0))
	echo "$1: read $((READ / 2048)) MiB in $(($(now_ms) - _t0)) ms; $(wow_stat lt loaded_from)"
	dmesg_since | grep -E 'wow: .*(formatted|checkpoint|recovered)' |
		sed 's/^/    kernel: /'
	grep -E 'MemTotal|MemAvailable' /proc/meminfo | tr -s ' ' | sed 's/^/    /'
}

case $WOW_BOOT in
1)
	wow_reset_disks
	timed_create "format"
	echo "cache: $(wow_stat lt cache_blocks) blocks of 4 KiB"
	fio_run "$(dm_node lt)" $BIG --iodepth=8 --verify=crc32c --do_verify=0
	fio_run "$(dm_node lt)" $SMALL --iodepth=16 --verify=crc32c --do_verify=0
	wow_message lt commit
	echo "at the cut: $(wow_status lt)"
	wow_power_cut
	;;
2)
	timed_create "after the power cut"
	# the checkpoint written at format, and the log since (272 MiB of
	# data and its headers), not a scan of a million segments
	[ "$(wow_stat lt loaded_from)" = checkpoint ] ||
		fail "not loaded from the format's checkpoint and the log since"
	LIMIT=$(( $(size_sectors "$CACHE") / 512 + (272 + 16) * 2048 ))
	[ "$READ" -le $LIMIT ] ||
		fail "the load after the cut read $READ sectors, more than the checkpoint and the log since it ($LIMIT)"
	fio_verify_only "$(dm_node lt)" $BIG --iodepth=8
	fio_verify_only "$(dm_node lt)" $SMALL --iodepth=16
	_t0=$(now_ms)
	wow_remove lt
	echo "clean shutdown (checkpoint written) in $(($(now_ms) - _t0)) ms"
	timed_create "after the clean shutdown"
	[ "$(wow_stat lt loaded_from)" = checkpoint ] ||
		fail "not loaded from the checkpoint"
	fio_verify_only "$(dm_node lt)" $SMALL --iodepth=16
	wow_remove lt
	echo "cache-1t: ok"
	;;
esac
