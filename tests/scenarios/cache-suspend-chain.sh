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
# Each round writes once and suspends: one round in about six finds the
# next segment on the chain.  Every suspend must finish, write its marks
# and its checkpoint; the chain case must have come at least once; the
# data must read back.
#
# vm: origin=1G cache=8M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

PARAM=/sys/module/dm_wow/parameters/checkpoint_interval
W="--rw=write --bs=1020k --offset=0 --size=1020k --iodepth=1"

wow_reset_disks
echo 1073741824 > "$PARAM" || fail "cannot set $PARAM"
wow_create sc "$ORIGIN" "$CACHE"
D=$(dm_node sc)

chain=0
round=1
while [ $round -le 18 ]; do
	fio_run "$D" $W --verify=crc32c --do_verify=0 --randseed=$round
	dmesg_clear
	if ! timeout 60 dmsetup suspend sc; then
		dmesg_since | tail -n 20
		fail "round $round: suspend did not finish in 60 s"
	fi
	k=$(dmesg_since)
	echo "$k" | grep -E 'wow: .*(checkpoint|marks)' |
		sed "s/^/    round $round kernel: /"
	echo "$k" | grep -q 'no clean marks written' &&
		fail "round $round: suspend skipped its clean marks"
	echo "$k" | grep -q 'no checkpoint written' &&
		fail "round $round: suspend wrote no checkpoint"
	n=$(echo "$k" | grep -c 'checkpoint [0-9]* written')
	[ "$n" -ge 1 ] || fail "round $round: no checkpoint at suspend"
	[ "$n" -ge 2 ] && chain=$((chain + 1))
	run dmsetup resume sc
	round=$((round + 1))
done
echo "suspends that waited for a checkpoint: $chain of 18"
[ $chain -ge 1 ] ||
	fail "no suspend found its segment on the replay chain: the case was not reached"

fio_verify_only "$D" $W --randseed=18
echo "status: $(wow_status sc)"
wow_remove sc
echo 0 > "$PARAM"
