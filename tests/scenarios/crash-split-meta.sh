#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A checkpoint taken while a reclaim's tombstones are written over several
# records (issue 34: checkpoint-incremental (b) found the checkpoint and
# the log disagreeing on 108 slots once).  A clean victim with many
# scattered copies needs more tombstones than one record holds; the
# records before the last one already say its copies are dead.  Until the
# last one finished, the index still held them all, so a checkpoint taken
# between (here: before every record, checkpoint_interval 1) named copies
# a record before it had killed, and a load from it kept them (clean
# copies, so no data was wrong; but the checkpoint and the log disagree,
# `wowctl check` warns, and they are reclaimed twice).
#
# A 64 MiB cache over random 4 KiB writes to 256 MiB (low_watermark 10
# high_watermark 20: destage keeps most blocks clean, reclaim frees
# victims full of scattered clean copies; the first round turns the
# cache over).  Eight times: the cache device is
# frozen under the running load (dm-flakey drops every write from then
# on: the state of a power cut at that instant), the device is removed,
# and `wowctl check` on the frozen cache must find the checkpoint agreeing
# with the log (exit 0, or 3 for a torn tail); the next round loads it.
# Then the data written after the last freeze, verified through the
# device and on the origin alone after cleaning.
#
# vm: origin=1G cache=64M timeout=900
. "${WOW_LIB:-/wow/lib.sh}"
# test builds: each checkpoint's unwritten blocks checked against the index
wow_test_hook test_verify_checkpoints 1 || :

command -v wowctl > /dev/null || skip "no wowctl in the guest (make -C userspace)"
CKI=/sys/module/dm_wow/parameters/checkpoint_interval
OPTS="low_watermark 10 high_watermark 20"
W="--rw=randwrite --bs=4k --size=256m --iodepth=32 --direct=1 --ioengine=libaio"
LEN=$(size_sectors "$CACHE") || fail "cannot size $CACHE"

# fz up|down: the frozen-or-not cache device "fz" over $CACHE
fz_table() {
	if [ "$1" = up ]; then
		echo "0 $LEN linear $CACHE 0"
	else
		echo "0 $LEN flakey $CACHE 0 0 1 1 drop_writes"
	fi
}

wow_reset_disks
echo 1 > $CKI
dmsetup create fz --table "$(fz_table up)" || fail "cannot create fz"
wow_create sm "$ORIGIN" /dev/mapper/fz $OPTS
wow_remove sm
for round in 1 2 3 4 5 6 7 8; do
	info "round $round: load, write, freeze the cache device"
	dmesg_clear
	wow_create sm "$ORIGIN" /dev/mapper/fz $OPTS
	dmesg_since | grep "wow:" | sed 's/^/    kernel: /'
	D=$(dm_node sm)
	fio --name=w --filename="$D" $W --randseed=$round --time_based \
		--runtime=120 --output=/tmp/sm-fio.out > /dev/null 2>&1 &
	FIO=$!
	# the first round turns the cache over: reclaim runs from then on
	if [ $round = 1 ]; then sleep 45; else sleep $((3 + round)); fi
	echo "status: $(wow_status sm)"
	run dmsetup suspend fz
	fz_table down | dmsetup reload fz || fail "cannot reload fz"
	run dmsetup resume fz
	kill $FIO 2> /dev/null
	wait $FIO
	wow_remove sm
	run dmsetup suspend fz
	fz_table up | dmsetup reload fz || fail "cannot reload fz"
	run dmsetup resume fz
	echo "+ wowctl check (round $round)"
	wowctl check /dev/mapper/fz > /tmp/sm-ck.out 2>&1
	RC=$?
	sed 's/^/    /' /tmp/sm-ck.out
	case $RC in
	0 | 3) ;;
	*) fail "(round $round) wowctl check exited $RC" ;;
	esac
	! grep -q "disagree" /tmp/sm-ck.out ||
		fail "(round $round) the checkpoint and the log disagree"
done

info "the data written after the last freeze"
wow_create sm "$ORIGIN" /dev/mapper/fz $OPTS
D=$(dm_node sm)
V="--rw=randwrite --bs=4k --size=32m --offset=512m --iodepth=8"
fio_verify "$D" $V
wow_clean_remove sm
fio_verify_only "$ORIGIN" $V
dmsetup remove fz || fail "cannot remove fz"
echo "crash-split-meta: ok"
