#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A checkpoint written in the background while the log goes on is the log
# as it stood when it started (issue 34: checkpoints that do not stall
# writes).  The commit worker marks the slot table blocks that changed
# and the writer takes them a batch at a time; a block that changes
# before the writer takes it is copied first (copy on write), so what is
# written is what the index held at the start, which is what the replay
# after it assumes.
#
# Boot 1: a 256 MiB cache (99 slot table blocks an area) over "cc", a dm
# table over the cache disk (discards off).  fio writes 64 MiB
# sequentially at 1 GiB; a suspend and resume writes a checkpoint.  cc is
# reloaded so that writes to the other area past its header wait 3 s each
# in dm-delay.  fio's O_SYNC random writes (4 MB/s) start; after 3 s
# checkpoint_interval 256 starts a background checkpoint there (then the
# interval goes back up, so no other starts): its batches of blocks take
# 3 s each to write while the writes go on and change the blocks it has
# not taken yet.  2 s after its closing copy is on disk, fio saves its
# state and cuts the power (its trigger file).
# Boot 2: `wowctl check` on the cache device alone (0, or 3 for a torn
# tail; no disagreement between the checkpoint and the log), the load
# reads that checkpoint (not the log) and replays the log after it, every
# acknowledged write verifies through the device, then on the origin
# alone after cleaning.  Fails with a module whose writer takes blocks as
# they are when it gets to them (no copy on write): the checkpoint holds
# copies written after it started, which the load refuses or the check
# finds.
#
# vm: origin=2G cache=256M timeout=600 boots=2
. "${WOW_LIB:-/wow/lib.sh}"
# test builds: each checkpoint's unwritten blocks checked against the index
wow_test_hook test_verify_checkpoints 1 || :

P1="--rw=write --bs=64k --offset=1g --size=64m"
P2="--rw=randwrite --bssplit=4k/80:16k/20 --offset=0 --size=512m --sync=1 --iodepth=16 --randseed=341 --rate=4m"
S=$RESULTS/$WOW_NAME.state
mkdir -p "$S" && cd "$S" || fail "cannot use $S"
BS=4096
CKI=/sys/module/dm_wow/parameters/checkpoint_interval

case $WOW_BOOT in
1)
	wow_reset_disks
	rm -f ./*verify.state "$S/gen"
	echo 0 > "/sys/block/${CACHE##*/}/queue/discard_max_bytes" ||
		fail "cannot turn discards off on $CACHE"
	LEN=$(size_sectors "$CACHE")
	run dmsetup create cc --table "0 $LEN linear $CACHE 0"
	wow_create bg "$ORIGIN" "$(dm_node cc)"
	D=$(dm_node bg)
	[ "$(read_u "$CACHE" 4 4)" -ge 4 ] ||
		skip "format version $(read_u "$CACHE" 4 4): one checkpoint area"
	fio_run "$D" $P1 --verify=crc32c --do_verify=0
	run dmsetup suspend bg
	run dmsetup resume bg
	NEWEST=$(ckpt_newest "$CACHE")
	[ -n "$NEWEST" ] || fail "no valid checkpoint on the cache"
	set -- $(ckpt_blocks "$CACHE")
	SPAN=$(($2 - $1))
	OTHER=$1
	[ "$NEWEST" = "$1" ] && OTHER=$2
	G0=$(read_u "$CACHE" $((OTHER * BS + 40)) 8)
	echo "the next checkpoint goes to the area at block $OTHER ($SPAN blocks; generation $G0 there now)"
	# writes to the other area past its header wait 3 s each
	H=$(((OTHER + 1) * 8)) L=$(((SPAN - 1) * 8))
	run dmsetup suspend cc
	printf '%s\n' "0 $H linear $CACHE 0" \
		"$H $L delay $CACHE $H 0 $CACHE $H 3000 $CACHE $H 0" \
		"$((H + L)) $((LEN - H - L)) linear $CACHE $((H + L))" |
		dmsetup load cc || fail "cannot load the delaying table"
	run dmsetup resume cc
	touch "$RESULTS/$WOW_NAME.reboot" || fail "cannot write reboot marker"
	echo "--- power cut (boot 1) by fio's trigger, after a background checkpoint"
	rm -f /tmp/cut-now
	fio --name=wow --filename="$D" --ioengine=libaio --direct=1 \
		--verify=crc32c --do_verify=0 --verify_state_save=1 $P2 \
		--trigger-file=/tmp/cut-now \
		--trigger="sh -c 'echo b > /proc/sysrq-trigger'" \
		--output=/tmp/cut-fio.out &
	sleep 3
	echo 256 > $CKI
	G1=$G0
	for _i in $(seq 1 20); do
		sleep 0.5
		G1=$(read_u "$CACHE" $((OTHER * BS + 40)) 8)
		[ "$G1" -gt "$G0" ] && break
	done
	echo 4294967295 > $CKI
	echo "checkpoint $G1 started in the background; log_blocks $(wow_stat bg log_blocks)"
	echo "$G1" > "$S/gen"
	# its closing copy: the header again, after the tables
	for _i in $(seq 1 120); do
		sleep 0.5
		[ "$(ckpt_newest "$CACHE")" = "$OTHER" ] && break
	done
	echo "newest valid checkpoint now in the area at block $(ckpt_newest "$CACHE"); log_blocks $(wow_stat bg log_blocks)"
	# a few more acknowledged writes after it, then the cut
	sleep 2
	touch /tmp/cut-now
	wait
	cat /tmp/cut-fio.out
	wow_cut_late
	;;
esac

G1=$(cat "$S/gen" 2> /dev/null)
[ -n "$G1" ] || fail "boot 1 did not see the checkpoint start"
echo "+ wowctl check $CACHE"
wowctl check "$CACHE" > /tmp/ck.out 2>&1
RC=$?
sed 's/^/    /' /tmp/ck.out
case $RC in 0 | 3) ;; *) fail "wowctl check exited $RC" ;; esac
! grep -q "disagree" /tmp/ck.out ||
	fail "the background checkpoint and the log disagree"
info "load after the cut"
wow_create bg "$ORIGIN" "$CACHE"
D=$(dm_node bg)
dmesg_since | grep wow | sed 's/^/    kernel: /'
dmesg_since | grep -q "loaded checkpoint $G1 " ||
	fail "the load did not take checkpoint $G1, the one written in the background"
[ "$(wow_stat bg loaded_from)" = checkpoint ] ||
	fail "loaded by the log scan, not from the checkpoint"
ls ./*verify.state > /dev/null 2>&1 || fail "fio saved no write state"
fio_check_state "$D" $P2
fio_verify_only "$D" $P1
wow_clean_remove bg
info "the origin alone"
fio_check_state "$ORIGIN" $P2
fio_verify_only "$ORIGIN" $P1
echo "checkpoint-background: ok"
