#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A FUA write costs one flush of the cache device, not two (issue 37), and
# never less than its promise (invariant 2).  A record that holds a FUA
# write vouches for every record before it (its durable_seq), so it
# flushes them first (PREFLUSH), unless each of them is durable already:
# written FUA itself, or flushed since.  Then O_SYNC writes one at a time
# are FUA records with no PREFLUSH (virtio-blk has no FUA: the block layer
# flushes after the write, one flush a write; with the PREFLUSH besides
# it was two, and the write's latency nearly doubled).
#
# A blktrace of the cache device, two phases of 4 KiB direct writes to a
# 256 MiB cache, each record alone (one writer, one write at a time):
#  1. 300 O_DSYNC writes (fio --sync=1): at most a few of their records
#     (the first, if a record before it was plain) may carry a PREFLUSH;
#     before the change every one did.
#  2. 40 times a plain write, then an O_DSYNC one: each FUA record follows
#     a plain record not yet durable, so each must carry the PREFLUSH, or
#     find it flushed since by another flush of the cache device (destage
#     flushes the log before it reads: a loaded VM can leave the device
#     idle long enough between two writes).  The trace is read in order:
#     no FUA record may follow a plain one with no flush between.  A
#     module that skipped the PREFLUSH whenever the record is FUA fails
#     here; the flush-point campaign's crash states then lose the FUA
#     write.
# Both phases' data verify through the device and, cleaned, on the origin.
#
# vm: origin=1G cache=256M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

BT=/tmp/bt
wow_reset_disks
blktrace_anchor
wow_create ff "$ORIGIN" "$CACHE" sequential_cutoff 0
D=$(dm_node ff)
META=$(read_u "$CACHE" 48 8)

# trace_on / trace_off NAME: a blktrace of the cache device's writes,
# parsed to $BT/NAME.txt as "action rwbs sector sectors" (log writes only:
# from the first segment's sector on, with data)
trace_on() {
	rm -rf $BT && mkdir -p $BT
	blktrace -d "$CACHE" -a write -b 1024 -n 16 -D $BT -o cache \
		> $BT/blktrace.log 2>&1 &
	BTPID=$!
	sleep 2
	kill -0 $BTPID 2> /dev/null ||
		{ cat $BT/blktrace.log; fail "blktrace did not start"; }
}
trace_off() {
	sleep 1
	kill -INT $BTPID
	wait $BTPID
	grep -q 'You have .*dropped' $BT/blktrace.log &&
		fail "blktrace dropped events: the trace is incomplete"
	blkparse -i cache -D $BT -f "%a %d %S %n\n" -o $BT/all.txt \
		> /dev/null 2>&1 || fail "blkparse failed"
	awk -v meta="$META" '$1 == "Q" && $2 ~ /W/ && $4 > 0 && $3 >= meta' \
		$BT/all.txt > /tmp/ff-$1.txt
	# every write and flush submitted, in order, for uncovered()
	awk '$1 == "Q" && $2 ~ /W/' $BT/all.txt > /tmp/ff-$1-all.txt
	echo "$1: $(wc -l < /tmp/ff-$1.txt) log writes submitted"
}
# uncovered NAME: FUA log records submitted after a plain log record with
# no flush of the cache device between (a PREFLUSH of their own, an empty
# flush, any write's PREFLUSH): the plain record they vouch for may not be
# durable
uncovered() {
	awk -v meta="$META" '
		{ pre = $2 ~ /^F/; fua = $2 ~ /WF/; rec = $4 > 0 && $3 >= meta }
		pre { plain = 0 }
		rec && fua && plain { bad++ }
		rec && !fua { plain = 1 }
		END { print bad + 0 }' /tmp/ff-$1-all.txt
}
# fua NAME: "FUA-RECORDS WITH-PREFLUSH" of a trace (rwbs: F first is the
# PREFLUSH, F after W the FUA)
fua() {
	awk '$2 ~ /WF/ { n++; if ($2 ~ /^F/) p++ }
		END { printf "%d %d\n", n, p }' /tmp/ff-$1.txt
}

info "1: O_DSYNC writes one at a time"
V1="--rw=randwrite --bs=4k --size=64m --iodepth=1 --sync=1 --number_ios=300 --randseed=37"
trace_on
fio_verify "$D" $V1 --do_verify=0
trace_off sync
set -- $(fua sync)
echo "    $1 FUA records, $2 of them with a PREFLUSH"
[ "$1" -ge 300 ] || fail "expected 300 FUA records, the trace has $1"
[ "$2" -le 3 ] ||
	fail "$2 of $1 FUA records flushed first, though the records before them were durable (one flush a write is enough)"

info "2: a plain write, then an O_DSYNC write, 40 times"
trace_on
i=0
while [ $i -lt 40 ]; do
	# blocks 32768 on (128 MiB), past phase 1's 64 MiB: the plain one
	# (busybox dd), then the O_DSYNC one (fio: dd has no oflag=dsync)
	b=$((32768 + i * 2))
	dd if=/dev/urandom of=/tmp/ff-p$i bs=4096 count=1 2> /dev/null
	dd if=/tmp/ff-p$i of="$D" bs=4096 count=1 seek=$b oflag=direct \
		conv=notrunc 2> /dev/null || fail "plain write $i failed"
	fio --name=ff --filename="$D" --ioengine=psync --direct=1 --sync=1 \
		--rw=write --bs=4k --size=4k --offset=$(((b + 1) * 4096)) \
		--verify=crc32c --do_verify=0 --output=/tmp/ff-fio.out ||
		fail "O_DSYNC write $i failed: $(cat /tmp/ff-fio.out)"
	i=$((i + 1))
done
trace_off mixed
set -- $(fua mixed)
echo "    $1 FUA records, $2 of them with a PREFLUSH"
[ "$1" -ge 40 ] || fail "expected 40 FUA records, the trace has $1"
BAD=$(uncovered mixed)
echo "    $BAD FUA records after a plain one with no flush between"
[ "$BAD" = 0 ] ||
	fail "$BAD of $1 FUA records after a plain one had no flush before them: the plain record they vouch for may not be durable"

# check_mixed DEV: phase 2's blocks read back from DEV
check_mixed() {
	i=0
	while [ $i -lt 40 ]; do
		b=$((32768 + i * 2))
		dd if="$1" of=/tmp/ff-read bs=4096 skip=$b count=1 \
			iflag=direct 2> /dev/null || fail "cannot read $1"
		cmp -s /tmp/ff-read /tmp/ff-p$i ||
			fail "plain write $i (block $b) is not on $1"
		fio --name=ff --filename="$1" --ioengine=psync --direct=1 \
			--rw=write --bs=4k --size=4k \
			--offset=$(((b + 1) * 4096)) --verify=crc32c \
			--verify_only=1 --verify_fatal=1 \
			--output=/tmp/ff-fio.out ||
			fail "O_DSYNC write $i (block $((b + 1))) is not on $1: $(cat /tmp/ff-fio.out)"
		i=$((i + 1))
	done
}
check_mixed "$D"
fio_verify_only "$D" $V1
wow_message ff cleaner on
wow_wait_clean ff 120
wow_no_errors ff
wow_remove ff
info "the origin alone"
check_mixed "$ORIGIN"
fio_verify_only "$ORIGIN" $V1
echo "cache-fua-flush: ok"
