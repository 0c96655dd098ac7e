#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Suspend writes its clean marks even when the segment they need is on
# the last checkpoint's replay chain (reliability.md, defect 21).
#
# At a suspend the clean marks' record goes after the last user record.
# When the open segment is full, the record needs the next free segment;
# if that segment held records since the last checkpoint, it may be
# reopened only after a newer checkpoint.  The commit worker writes that
# checkpoint for a waiting record, also while suspending (then it says
# "checkpoint N written" as suspend's own does).  Once, with the log
# stopped, no checkpoint came and the removal hung in postsuspend; the
# first repair skipped the marks instead ("no clean marks written").
#
# An 8 MiB cache has 6 segments of 256 blocks.  With checkpoints only when
# a segment waits (checkpoint_interval stretched), one 1020 KiB write
# (255 blocks and a header) fills a segment, and rewriting the same range
# frees the one before, so the free list turns over one segment a write.
# Try k writes, for k = 1 .. 14, each on a freshly formatted cache, then a
# suspend: after about as many writes as there are segments, the next
# free segment is one written since the load's checkpoint.  Every suspend
# must finish and write its marks and its checkpoint, and the data must
# read back.  The writes go back to back: with a second between them (fio
# started for each) the idle device destaged and cleaned in between,
# which moved the free list, and about one run in two never reached the
# case.  When no k reaches it all the same, the scenario says skipped.
#
# vm: origin=1G cache=8M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

PARAM=/sys/module/dm_wow/parameters/checkpoint_interval

echo 1073741824 > "$PARAM" || fail "cannot set $PARAM"

# the data of the k writes, made beforehand so that dd writes back to back
i=1
while [ $i -le 14 ]; do
	dd if=/dev/urandom of=/tmp/sc.$i bs=1020k count=1 2> /dev/null ||
		fail "cannot make /tmp/sc.$i"
	i=$((i + 1))
done

chain=0
k=1
while [ $k -le 14 ]; do
	wow_reset_disks
	wow_create sc "$ORIGIN" "$CACHE"
	D=$(dm_node sc)
	echo "+ $k writes of 1020 KiB at offset 0"
	i=1
	while [ $i -le $k ]; do
		dd if=/tmp/sc.$i of="$D" bs=1020k count=1 oflag=direct \
			conv=notrunc 2> /dev/null || fail "write $i of $k failed"
		i=$((i + 1))
	done
	dmesg_clear
	if ! timeout 60 dmsetup suspend sc; then
		dmesg_since | tail -n 20
		fail "$k writes: suspend did not finish in 60 s"
	fi
	m=$(dmesg_since)
	echo "$m" | grep -E 'wow: .*(checkpoint|marks)' |
		sed "s/^/    $k writes, kernel: /"
	echo "$m" | grep -q 'no clean marks written' &&
		fail "$k writes: suspend skipped its clean marks"
	echo "$m" | grep -q 'no checkpoint written' &&
		fail "$k writes: suspend wrote no checkpoint"
	n=$(echo "$m" | grep -c 'checkpoint [0-9]* written')
	[ "$n" -ge 1 ] || fail "$k writes: no checkpoint at suspend"
	[ "$n" -ge 2 ] && chain=$((chain + 1))
	run dmsetup resume sc
	[ "$(dd if="$D" bs=1020k count=1 iflag=direct 2> /dev/null |
		md5sum)" = "$(md5sum < /tmp/sc.$k)" ] ||
		fail "$k writes: the last write does not read back"
	wow_remove sc
	k=$((k + 1))
done
echo "suspends that waited for a checkpoint: $chain of 14"
echo 0 > "$PARAM"
[ $chain -ge 1 ] ||
	skip "no suspend found its segment on the replay chain: the case was not reached"
