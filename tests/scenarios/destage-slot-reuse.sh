#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Issue 34, finding 2: a destage run must not mark a newer copy clean that
# landed in the slot it read.  The origin is dm-delay (writes held 20 s),
# so the first destage run of eight blocks X (one 32 KiB write: with 64 KiB
# erase blocks every such write opens a segment of its own, its data at
# blocks 1..8) stays in flight while X is written again and again: the
# run's segment goes stale, is cleaned, and, unless the run pins it, is
# reopened, until a write of X lands in the very slots the run read.  Then
# the delay is lifted (suspending dm-delay sends what it holds); the run
# completes, the cache is cleaned and removed, and the origin must hold
# the last write.  Which rewrite lands there depends on the free list's
# order, so each round writes one more time than the last, from one
# segment short of a turn of the log to three past it.
#
# vm: origin=256M cache=64M timeout=600
. "${WOW_LIB:-/wow/lib.sh}"

X=64			# X: origin blocks 64..71 (KiB 256..287)
SZ=$(size_sectors "$ORIGIN")
slow() {	# slow MS: the origin's write delay
	run dmsetup suspend dl
	run dmsetup reload dl --table "0 $SZ delay $ORIGIN 0 0 $ORIGIN 0 $1"
	run dmsetup resume dl
}
wx() {		# wx N: write version N of X (O_DIRECT, then fsync: FLUSH)
	fill_x "$1" > /tmp/x.$1
	dd if=/tmp/x."$1" of="$D" bs=32k count=1 seek=8 oflag=direct conv=fsync \
		2> /tmp/x.err || fail "write $1 of X failed: $(cat /tmp/x.err)"
}
fill_x() {	# 32 KiB of version N
	awk -v v="$1" 'BEGIN { for (i = 0; i < 1024; i++)
		printf "version %08d block %04d  pad\n", v, i }' | head -c 32768
}

wow_reset_disks
run dmsetup create dl --table "0 $SZ delay $ORIGIN 0 0 $ORIGIN 0 0"
OD=$(dm_node dl)
rounds=0 failed=""
for extra in -1 0 1 2 3; do
	rounds=$((rounds + 1))
	run dmsetup create sc --table "0 4096 linear $CACHE 0" > /dev/null
	C=$(dm_node sc)
	zero_dev "$C" 2
	slow 0
	dd if=/dev/zero of="$OD" bs=32k count=1 seek=8 oflag=direct 2> /dev/null
	slow 20000
	wow_create sr "$OD" "$C" erase_block_size 65536 low_watermark 0 \
		high_watermark 1
	D=$(dm_node sr)
	N=$(wow_stat sr segments)
	[ -n "$N" ] || N=$(wow_field sr 4)
	wx 1
	# the run of X is in flight (its origin write held by the delay)
	i=0
	while [ "$(wow_stat sr destage_inflight)" = 0 ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "no destage run started: $(wow_status sr)"
		sleep 0.1
	done
	last=$((N + extra + 1))
	v=2
	while [ $v -le $last ]; do
		wx $v
		v=$((v + 1))
	done
	echo "round $rounds: $N segments, X written $last times; $(wow_status sr | cut -d' ' -f1-6)"
	slow 0		# the held run completes now
	wow_message sr cleaner on
	wow_wait_clean sr 120
	wow_remove sr
	run dmsetup remove sc
	want=$(md5sum < /tmp/x.$last | cut -d' ' -f1)
	got=$(dd if="$OD" bs=32k count=1 skip=8 iflag=direct 2> /dev/null | md5sum | cut -d' ' -f1)
	if [ "$want" != "$got" ]; then
		have=$(dd if="$OD" bs=32 count=1 skip=8192 iflag=direct 2> /dev/null | head -c 16)
		echo "    FAIL round $rounds: the origin holds '$have', not version $last"
		failed="$failed $rounds"
	fi
done
dmsetup remove dl
[ -z "$failed" ] || fail "the origin lost the last write of X in round(s)$failed"
echo "destage-slot-reuse: $rounds rounds ok"
