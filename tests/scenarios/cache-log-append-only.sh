#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Invariant 5 from a blktrace of the cache device: while a 64 MiB cache
# takes random writes twice its size (the log wraps, reclaim frees and
# reuses segments), overwrites of a hot set, mixed sizes, FUA writes, a
# discard, a reload (recovery) and more writes, every write the cache device
# is given (blktrace D events) must be whole 4 KiB blocks, the metadata
# before the first segment may only get the superblock and the health
# block (once each, at format: no error happens here), and inside each
# 1 MiB erase block after it writes must append at its write pointer (a
# write at an erase block's start reuses the segment).  The checkpoint
# areas before the first segment are only counted: since 2026-11-28 a
# checkpoint rewrites in place the slot table blocks that changed since
# its area was written (format version 3 and 4 wrote each checkpoint front
# to back after a discard before; version 2's area, in erase block 0, was
# always rewritten in place).  tests/vm/guest/cachecheck.awk checks the
# trace and prints the write amplification under an erase-block model; it
# is shown to catch a mid-segment rewrite on synthetic traces and on the
# real trace with one early write repeated at its end.
#
# vm: origin=2G cache=64M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

CHECK=/wow/guest/cachecheck.awk
[ -f $CHECK ] || fail "no $CHECK in the guest"

info "self-test of the checker on synthetic traces"
cat > /tmp/bt-good.txt <<-'TRACE'
	D W 0 8
	D WS 2048 16
	D FWFS 2064 8
	D W 4096 256
	D W 2048 8
	D W 2056 8
	Q W 5000 8
TRACE
cat > /tmp/bt-bad.txt <<-'TRACE'
	D W 0 8
	D WS 2048 16
	D W 2064 8
	D W 2056 8
TRACE
awk -f $CHECK /tmp/bt-good.txt | sed 's/^/    good: /'
awk -f $CHECK /tmp/bt-good.txt > /dev/null || fail "checker rejects a good trace"
awk -f $CHECK /tmp/bt-bad.txt | sed 's/^/    bad: /'
awk -f $CHECK /tmp/bt-bad.txt > /dev/null &&
	fail "checker accepts a mid-segment rewrite"
printf 'D W 0 8\nD W 2048 4\n' | awk -f $CHECK > /dev/null &&
	fail "checker accepts a partial-block write"
printf 'D W 0 8\nD W 8 8\n' | awk -f $CHECK > /dev/null ||
	fail "checker rejects the health block written at format"
printf 'D W 0 8\nD W 8 8\nD W 8 8\n' | awk -f $CHECK > /dev/null &&
	fail "checker accepts the health block written twice with no error"
printf 'D W 0 8\nD W 16 8\n' | awk -f $CHECK > /dev/null &&
	fail "checker accepts a write to erase block 0 past the health block"
printf 'D W 0 8\nD W 16 8\nD W 16 8\n' | awk -v meta=2048 -f $CHECK > /dev/null ||
	fail "checker rejects checkpoint area writes (format version 2)"
printf 'D W 0 8\nD W 2040 16\n' | awk -v meta=2048 -f $CHECK > /dev/null &&
	fail "checker accepts a checkpoint write that runs into the log"

wow_reset_disks
blktrace_anchor
BT=/tmp/bt
rm -rf $BT
mkdir -p $BT
info "trace the cache device"
blktrace -d "$CACHE" -a write -b 1024 -n 16 -D $BT -o cache \
	> $BT/blktrace.log 2>&1 &
BTPID=$!
sleep 2
kill -0 $BTPID 2> /dev/null || { cat $BT/blktrace.log; fail "blktrace did not start"; }

wow_create la "$ORIGIN" "$CACHE"
D=$(dm_node la)
wow_watch la
info "random 4k writes, twice the cache"
fio_run "$D" --rw=randwrite --bs=4k --offset=0 --size=128M --iodepth=32 \
	--randseed=91
info "zipf overwrites of a hot set"
fio_run "$D" --rw=randwrite --bs=4k --offset=0 --size=32M --io_size=24M \
	--norandommap --random_distribution=zipf:1.1 --iodepth=16 --randseed=92
info "mixed sizes 4k..128k, then FUA writes"
fio_run "$D" --rw=randwrite --bsrange=4k-128k --blockalign=4k --offset=256M \
	--size=64M --iodepth=8 --randseed=93
fio_run "$D" --rw=randwrite --bs=4k --offset=512M --size=4M --iodepth=16 \
	--sync=1 --randseed=94
run blkdiscard -o $((16 << 20)) -l $((4 << 20)) "$D"
st=$(wow_status la)
echo "status: $st"
info "reload, then more writes"
wow_remove la
wow_create la "$ORIGIN" "$CACHE"
D=$(dm_node la)
fio_run "$D" --rw=randwrite --bs=4k --offset=64M --size=32M --iodepth=32 \
	--randseed=95
wow_message la cleaner on
wow_wait_clean la 120
st2=$(wow_status la)
echo "status: $st2"
wow_no_errors la
wow_remove la
sleep 1
kill -INT $BTPID
wait $BTPID
cat $BT/blktrace.log | sed 's/^/    /'
grep -q 'You have .*dropped' $BT/blktrace.log &&
	fail "blktrace dropped events: the trace is incomplete"
[ "$(echo "$st" | sed 's/.*reclaimed_segments=\([0-9]*\).*/\1/')" -gt 0 ] ||
	fail "no segment was reclaimed: the log did not wrap"

info "check the trace"
blkparse -i cache -D $BT -f "%a %d %S %n\n" -o $BT/parsed.txt > /dev/null 2>&1 ||
	fail "blkparse failed"
echo "$(wc -l < $BT/parsed.txt) trace lines"
META=$(read_u "$CACHE" 48 8)	# first_segment_sector: the checkpoint area ends
echo "segments start at sector $META, format version $(read_u "$CACHE" 4 4)"
awk -v ev=Q -v meta="$META" -f $CHECK $BT/parsed.txt | sed 's/^/    Q (submitted by dm-wow): /'
awk -v meta="$META" -f $CHECK $BT/parsed.txt > $BT/check.txt
rc=$?
sed 's/^/    D (given to the device): /' $BT/check.txt
if [ $rc -ne 0 ]; then
	gzip -c $BT/parsed.txt > "$RESULTS/$WOW_NAME.trace.gz"
	fail "cache-device writes break invariant 5 (trace in $WOW_NAME.trace.gz): $(grep -m1 VIOLATION $BT/check.txt)"
fi
# and the checker catches a rewrite in this very trace: repeat, at the end,
# an early segment write that did not start its erase block
awk -v meta="$META" '$1 == "D" && $2 ~ /W/ && $3 >= 2048 && $3 >= meta &&
	$3 % 2048 && $4 > 0 { print; exit }' $BT/parsed.txt > $BT/rewrite.txt
[ -s $BT/rewrite.txt ] || fail "no mid-segment write in the trace"
if cat $BT/parsed.txt $BT/rewrite.txt | awk -v meta="$META" -f $CHECK > $BT/check2.txt; then
	fail "the checker missed a rewrite appended to the real trace: $(cat $BT/rewrite.txt)"
fi
echo "checker self-test on the real trace + a rewrite: $(grep -m1 VIOLATION $BT/check2.txt)"
echo "cache-log-append-only: ok"
