#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of `make demo` (tests/vm/demo.sh).  /dev/vda, the origin,
# is an emulated 7200 rpm disk (scripts/hdd-nbdkit.py over NBD: every
# request takes its modelled seek + rotation + transfer time, scaled down);
# /dev/vdb, the cache, is a fast file-backed disk.  The demo measures the
# bare disk, then runs 20 s of verified 4k random writes through a wow
# device, and watches dm-wow destage the dirty data to the disk in sweep
# order once the writes stop.
#
# vm: origin=2G cache=256M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

# fio_iops OUT: the write IOPS fio reported
fio_iops() {
	sed -n 's/^ *write: IOPS=\([^,]*\),.*/\1/p' "$1" | head -n 1
}

# show_destage: one line of what the wow device reports
show_destage() {
	_d=$(wow_stat demo dirty_blocks) _c=$(wow_stat demo cache_blocks)
	printf '  %5ss  dirty %6d blocks (%2d%%)  destaged %6d writes, mean seek %6.1f MiB, %d sweep(s)\n' \
		"$(($(date +%s) - T0))" "$_d" $((_d * 100 / _c)) \
		"$(wow_stat demo destage_writes)" \
		"$(wow_stat demo mean_seek_sectors | awk '{ print $1 / 2048 }')" \
		"$(wow_stat demo sweeps)"
}

wow_reset_disks
echo 1 > /sys/block/vda/queue/rotational
echo mq-deadline > /sys/block/vda/queue/scheduler 2> /dev/null
echo
echo "== dm-wow demo: origin $ORIGIN, an emulated 7200 rpm disk of" \
	"$(($(size_sectors "$ORIGIN") / 2048)) MiB; cache $CACHE" \
	"($(($(size_sectors "$CACHE") / 2048)) MiB, a fast disk)"
echo
echo "== the disk alone: 10 s of 4k random writes, iodepth 16"
fio --name=raw --filename="$ORIGIN" --ioengine=libaio --direct=1 \
	--rw=randwrite --bs=4k --iodepth=16 --norandommap \
	--time_based --runtime=10 --output=/tmp/demo-raw.out ||
	fail "fio on the bare disk failed: $(cat /tmp/demo-raw.out)"
RAW=$(fio_iops /tmp/demo-raw.out)
echo "   $RAW IOPS: every write pays a seek and half a revolution"
echo
wow_create demo "$ORIGIN" "$CACHE"
D=$(dm_node demo)
echo "== dmsetup table demo"
dmsetup table demo
echo "== dmsetup status demo (fresh)"
dmsetup status demo
echo
echo "== through dm-wow: 20 s of 4k random writes, iodepth 16, crc32c verify"
T0=$(date +%s)
(
	while sleep 5; do
		show_destage
	done
) &
MON=$!
fio --name=demo --filename="$D" --ioengine=libaio --direct=1 \
	--rw=randwrite --bs=4k --iodepth=16 --size=2G --norandommap \
	--time_based --runtime=20 \
	--verify=crc32c --verify_fatal=1 --verify_backlog=4096 \
	--group_reporting --output=/tmp/demo-fio.out
rc=$?
kill $MON
wait $MON 2> /dev/null
[ $rc -eq 0 ] || { cat /tmp/demo-fio.out; fail "fio failed (exit $rc)"; }
echo "   $(fio_iops /tmp/demo-fio.out) IOPS into the cache (the disk alone:" \
	"$RAW); every verified block matched"
echo
echo "== the writes stopped: after 1 s idle dm-wow destages at full rate,"
echo "   sweeping the disk in address order (CSCAN, sparing re-written groups)"
T0=$(date +%s)
show_destage
W0=$(wow_stat demo destage_writes)
while [ "$(wow_stat demo dirty_blocks)" -gt 0 ]; do
	[ $(($(date +%s) - T0)) -lt 120 ] || fail "still dirty after 120 s"
	sleep 3
	show_destage
done
T=$(($(date +%s) - T0))
W=$(($(wow_stat demo destage_writes) - W0))
[ "$T" -gt 0 ] || T=1
echo "   destaged $W writes in about $T s ($((W / T)) writes/s), mean seek" \
	"$(wow_stat demo mean_seek_sectors | awk '{ printf "%.1f", $1 / 2048 }') MiB;" \
	"random writes seek a third of the disk on average"
echo
echo "== dmsetup status demo"
dmsetup status demo
if [ -x /usr/bin/wowctl ]; then
	echo
	echo "== wowctl status demo"
	wowctl status demo || fail "wowctl status failed"
fi
echo
wow_remove demo
echo "== demo done (the bench: make bench-quick; Documentation/benchmarks.md)"
