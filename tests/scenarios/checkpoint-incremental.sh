#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Checkpoints write only what changed (issue 34: checkpoints that do not
# stall writes).  Each checkpoint area keeps its slot table between
# checkpoints; a checkpoint rewrites only the slot table blocks whose
# slots changed since that area was written (the index tracks them), and
# the segment stream.  A block it skips must still say what the slots
# hold: a change the index did not track would leave a stale entry that a
# load takes as the truth.
#
# A 64 MiB cache (16,384 slots, 25 slot table blocks an area) at
# low_watermark 20 high_watermark 30, a checkpoint every 256 log blocks:
# fio fills [0, 56 MiB) once, then rewrites [0, 24 MiB) and [24, 48 MiB)
# at random (4 and 16 KiB, O_SYNC, crc32c headers: every older copy is
# killed, destage and reclaim run all along), and [48, 56 MiB) is
# discarded (tombstones).  Then:
#  (a) the clean removal's checkpoint wrote fewer blocks than the whole
#      area ("checkpoint N written (W of its T blocks"); `wowctl check`
#      on the cache device alone finds the checkpoint agreeing with the
#      log slot by slot; the next load reads the checkpoint and every
#      acknowledged write verifies through the device.
#  (b) random writes over [64, 576 MiB) (the cache turns over; the loaded
#      area's checkpoints write the replay's changes and the log's), power
#      cut by fio's trigger;
#      the next boot: `wowctl check` again (0, or 3 for a torn tail, and
#      no disagreement), the load replays after the checkpoint, every
#      write verifies through the device, then on the origin alone after
#      cleaning.
# Fails with a module whose index does not track a change (a skipped
# block then holds a stale entry: check disagrees, data does not verify).
#
# vm: origin=2G cache=64M timeout=600 boots=2
. "${WOW_LIB:-/wow/lib.sh}"
# test builds: each checkpoint's unwritten blocks checked against the index
wow_test_hook test_verify_checkpoints 1 || :

command -v wowctl > /dev/null || skip "no wowctl in the guest (make -C userspace)"
CKI=/sys/module/dm_wow/parameters/checkpoint_interval
OPTS="low_watermark 20 high_watermark 30"
W="--bssplit=4k/80:16k/20 --sync=1 --iodepth=16"
J2="--rw=randwrite $W --offset=0 --size=24m --randseed=2"
J3="--rw=randwrite $W --offset=24m --size=24m --randseed=3"
J4="--rw=randwrite $W --offset=64m --size=512m --randseed=4"
S=$RESULTS/$WOW_NAME.state
mkdir -p "$S/2" "$S/3" "$S/4" || fail "cannot make $S"

# check_offline WHAT OKCODES: wowctl check on the cache device alone
check_offline() {
	echo "+ wowctl check $CACHE ($1)"
	wowctl check "$CACHE" > /tmp/ck.out 2>&1
	_rc=$?
	sed 's/^/    /' /tmp/ck.out
	case " $2 " in
	*" $_rc "*) ;;
	*) fail "($1) wowctl check exited $_rc" ;;
	esac
	! grep -q "disagree" /tmp/ck.out ||
		fail "($1) the checkpoint and the log disagree"
}

# verify DEV: every acknowledged write of the jobs whose state is saved
verify() {
	for _j in 2 3 4; do
		ls "$S/$_j"/*verify.state > /dev/null 2>&1 || continue
		cd "$S/$_j" || fail "cannot use $S/$_j"
		eval "fio_check_state \"$1\" \$J$_j"
	done
	cd / || fail "cannot cd /"
}

case $WOW_BOOT in
1)
	wow_reset_disks
	rm -f "$S"/*/*verify.state
	echo 256 > $CKI
	wow_create inc "$ORIGIN" "$CACHE" $OPTS
	D=$(dm_node inc)
	info "fill [0, 56 MiB), rewrite [0, 48 MiB) at random, discard [48, 56 MiB)"
	fio_run "$D" --rw=write --bs=64k --size=56m
	cd "$S/2" && fio_run "$D" --verify=crc32c --do_verify=0 \
		--verify_state_save=1 $J2
	cd "$S/3" && fio_run "$D" --verify=crc32c --do_verify=0 \
		--verify_state_save=1 $J3
	cd / || fail "cannot cd /"
	run blkdiscard -o $((48 << 20)) -l $((8 << 20)) "$D"
	echo "status: $(wow_status inc)"
	dmesg_clear
	wow_remove inc
	LINE=$(dmesg_since | grep -E 'wow: .*checkpoint [0-9]+ written' | tail -n 1)
	echo "kernel: $LINE"
	WR=$(echo "$LINE" | sed -n 's/.*written (\([0-9]*\) of its \([0-9]*\) blocks.*/\1 \2/p')
	[ -n "$WR" ] || fail "(a) no checkpoint written at the removal"
	set -- $WR
	[ "$1" -lt "$2" ] ||
		fail "(a) the removal's checkpoint wrote $1 of its $2 blocks: not only what changed"
	echo "(a) the removal's checkpoint wrote $1 of its $2 blocks"
	check_offline a 0

	info "(a) load from the checkpoint, verify"
	dmesg_clear
	wow_create inc "$ORIGIN" "$CACHE" $OPTS
	D=$(dm_node inc)
	dmesg_since | grep wow | sed 's/^/    kernel: /'
	[ "$(wow_stat inc loaded_from)" = checkpoint ] ||
		fail "(a) loaded from $(wow_stat inc loaded_from), not the checkpoint"
	verify "$D"

	info "(b) more writes, power cut by fio's trigger"
	cd "$S/4" || fail "cannot use $S/4"
	touch "$RESULTS/$WOW_NAME.reboot" || fail "cannot write reboot marker"
	echo "--- power cut (boot 1) by fio's trigger"
	fio --name=wow --filename="$D" --ioengine=libaio --direct=1 \
		--verify=crc32c --do_verify=0 --verify_state_save=1 $J4 \
		--trigger-timeout=4 \
		--trigger="sh -c 'sync; echo b > /proc/sysrq-trigger'" \
		--output=/tmp/cut-fio.out
	cat /tmp/cut-fio.out
	wow_cut_late
	;;
esac

# boot 2: after the power cut
check_offline b "0 3"
info "(b) reassemble, verify, clean, the origin alone"
dmesg_clear
wow_create inc "$ORIGIN" "$CACHE" $OPTS
D=$(dm_node inc)
dmesg_since | grep wow | sed 's/^/    kernel: /'
echo "status: $(wow_status inc)"
[ "$(wow_stat inc loaded_from)" = checkpoint ] ||
	fail "(b) loaded from $(wow_stat inc loaded_from), not the checkpoint"
verify "$D"
wow_clean_remove inc
verify "$ORIGIN"
echo "checkpoint-incremental: ok"
