#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Loading a 64 GiB cache (sparse images; issue 14): what a load reads from
# the cache device and how long it takes, after a clean shutdown (the
# checkpoint: at most 1/384 of the cache in format version 5 (1/512
# before its block crcs), plus the 68 KiB superblock
# probe) and after a power cut (the checkpoint and the 64 MiB of log
# written since it, replayed), beside dm-writecache's load
# of the same 64 GiB cache device with the same data written (it reads 16
# bytes per 4 KiB block: 1/256).  512 MiB are written through each in 1 MiB
# random writes; after the cut, 64 MiB more written before it must read
# back.  Only the bounds on what the loads read are asserted; the times
# are printed (Documentation/benchmarks.md quotes them).
#
# vm: origin=16G cache=64G timeout=1500 boots=2
. "${WOW_LIB:-/wow/lib.sh}"

DEV=$(basename "$(readlink -f "$CACHE")")
CSECT=$(size_sectors "$CACHE")
FILL="--rw=randwrite --bs=1M --offset=0 --size=8G --io_size=512M --randseed=71"
# the checkpoint's share of the cache: 1/512 (6-byte slot entries), 1/384
# from format version 5 (10 bytes: each block's crc32c; 1/410, and the
# segment stream)
FRAC=384
MORE="--rw=randwrite --bs=64k --offset=12G --size=64M --randseed=72"
OPTS="sequential_cutoff 0 low_watermark 90 high_watermark 95"
SUMMARY=$RESULTS/$WOW_NAME.summary

reads() { awk '{ print $3 }' "/sys/block/$DEV/stat"; }
now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }	# 10 ms steps

# timed_create WHAT NAME TABLE: create, print sectors read and time
timed_create() {
	_r0=$(reads) _t0=$(now_ms)
	dmesg_clear
	dmsetup create "$2" --table "$3" ||
		{ dmesg_since | tail -n 5; fail "$1: cannot create $2"; }
	dm_node "$2" > /dev/null
	READ=$(($(reads) - _r0)) MS=$(($(now_ms) - _t0))
	echo "$1: read $((READ / 2048)) MiB ($READ sectors) in $MS ms" |
		tee -a "$SUMMARY"
	dmesg_since | grep -E 'wow: .*(checkpoint|recovered)' |
		sed 's/^/    kernel: /'
}

case $WOW_BOOT in
1)
	: > "$SUMMARY"
	wow_reset_disks
	wow_create lg "$ORIGIN" "$CACHE" $OPTS
	echo "cache: $(wow_stat lg cache_blocks) blocks of 4 KiB"
	fio_run "$(dm_node lg)" $FILL --iodepth=8
	echo "after the fill: $(wow_status lg)"
	wow_remove lg

	timed_create "dm-wow, after a clean shutdown" lg \
		"$(wow_table "$ORIGIN" "$CACHE" $OPTS)"
	[ "$(wow_stat lg loaded_from)" = checkpoint ] ||
		fail "not loaded from the checkpoint: $(wow_status lg)"
	LIMIT=$((CSECT / FRAC + 136))
	[ "$READ" -le $LIMIT ] ||
		fail "the load read $READ sectors, more than 1/$FRAC of the cache and the probe ($LIMIT)"
	fio_run "$(dm_node lg)" $MORE --iodepth=8 --verify=crc32c --do_verify=0
	wow_message lg commit
	wow_power_cut
	;;
2)
	timed_create "dm-wow, after a power cut" lg \
		"$(wow_table "$ORIGIN" "$CACHE" $OPTS)"
	[ "$(wow_stat lg loaded_from)" = checkpoint ] ||
		fail "not loaded from the checkpoint and the log after it"
	# the checkpoint, the 64 MiB written since (and their headers), the
	# rest of a segment or two, the probe
	LIMIT=$((CSECT / FRAC + (64 + 8) * 2048))
	[ "$READ" -le $LIMIT ] ||
		fail "the load after the cut read $READ sectors, more than the checkpoint and the log since it ($LIMIT)"
	fio_verify_only "$(dm_node lg)" $MORE --iodepth=8
	echo "after the scan: $(wow_status lg)"
	run dmsetup remove lg

	info "dm-writecache on the same devices"
	zero_dev "$CACHE" 1
	WC="0 $(size_sectors "$ORIGIN") writecache s $ORIGIN $CACHE 4096 0"
	run dmsetup create wc --table "$WC"
	fio_run "$(dm_node wc)" $FILL --iodepth=8
	echo "dm-writecache status: $(dmsetup status wc)"
	run dmsetup remove wc
	timed_create "dm-writecache, after a clean shutdown" wc "$WC"
	run dmsetup remove wc
	echo "summary:"
	sed 's/^/    /' "$SUMMARY"
	echo "cache-load-64g: ok"
	;;
esac
