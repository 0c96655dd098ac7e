#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Issue 34: a power cut while a checkpoint is written loads from the other
# checkpoint area (format version 4) and the log after it, not by scanning
# the whole log.
#
# Boot 1: a 256 MiB cache (default table line) over "cc", a dm table over
# the cache disk (discards off, so a checkpoint's area is not discarded
# first).  fio writes 64 MiB sequentially at 1 GiB (phase 1), a suspend
# and resume writes a checkpoint after it; the area
# that does not hold the newest valid checkpoint is found; cc's table is
# reloaded so that writes to that area after its first block (the tables
# and the closing copy of the header) wait 60 s in dm-delay, while its
# header goes through.  fio's O_SYNC random writes (phase 2) run for 3 s,
# then checkpoint_interval 256 starts a checkpoint there at the next
# commit, which hangs in the delayed tables; the log must go on meanwhile
# (a checkpoint is written in the background: log_blocks grows in the 4 s
# after its header is seen; when it held every write back, it did not);
# after 9 s fio saves its write state and cuts the power.
# Boot 2: the cache is loaded from the cache disk itself: the kernel must
# say the newer checkpoint is not whole and load the other one (bytes read
# and time printed; a load that scans reads the whole log), every
# acknowledged write of both phases must read back, then the same after a
# clean shutdown and a load by the log scan (its bytes, for comparison),
# and after cleaning, on the origin alone.
#
# vm: origin=2G cache=256M timeout=600 boots=2
. "${WOW_LIB:-/wow/lib.sh}"
# test builds: each checkpoint's unwritten blocks checked against the index
wow_test_hook test_verify_checkpoints 1 || :

P1="--rw=write --bs=64k --offset=1g --size=64m"
P2="--rw=randwrite --bssplit=4k/80:16k/20 --offset=0 --size=512m --sync=1 --iodepth=16 --randseed=340"
S=$RESULTS/$WOW_NAME.state
mkdir -p "$S" && cd "$S" || fail "cannot use $S"
BS=4096
CKI=/sys/module/dm_wow/parameters/checkpoint_interval
now() { cut -d' ' -f1 /proc/uptime; }

case $WOW_BOOT in
1)
	wow_reset_disks
	rm -f ./*verify.state
	echo 0 > "/sys/block/${CACHE##*/}/queue/discard_max_bytes" ||
		fail "cannot turn discards off on $CACHE"
	LEN=$(size_sectors "$CACHE")
	run dmsetup create cc --table "0 $LEN linear $CACHE 0"
	wow_create cut "$ORIGIN" "$(dm_node cc)"
	D=$(dm_node cut)
	[ "$(read_u "$CACHE" 4 4)" -ge 4 ] ||
		skip "format version $(read_u "$CACHE" 4 4): one checkpoint area"
	fio_run "$D" $P1 --verify=crc32c --do_verify=0
	# a checkpoint after phase 1 (suspend writes one): the replay after
	# the cut starts there, not at the format's
	run dmsetup suspend cut
	run dmsetup resume cut
	NEWEST=$(ckpt_newest "$CACHE")
	[ -n "$NEWEST" ] || fail "no valid checkpoint on the cache"
	set -- $(ckpt_blocks "$CACHE")
	A0=$1 A1=$2 SPAN=$(($2 - $1))
	OTHER=$A0
	[ "$NEWEST" = "$A0" ] && OTHER=$A1
	echo "areas at blocks $A0 and $A1 ($SPAN blocks each); the newest valid checkpoint in the one at $NEWEST (generation $(read_u "$CACHE" $((NEWEST * BS + 40)) 8)); the next goes to $OTHER"
	# writes to the other area past its header wait 60 s; flushes and
	# reads do not
	H=$(((OTHER + 1) * 8)) L=$(((SPAN - 1) * 8))
	run dmsetup suspend cc
	printf '%s\n' "0 $H linear $CACHE 0" \
		"$H $L delay $CACHE $H 0 $CACHE $H 60000 $CACHE $H 0" \
		"$((H + L)) $((LEN - H - L)) linear $CACHE $((H + L))" |
		dmsetup load cc || fail "cannot load the delaying table"
	run dmsetup resume cc
	touch "$RESULTS/$WOW_NAME.reboot" || fail "cannot write reboot marker"
	echo "--- power cut (boot 1) by fio's trigger, a checkpoint hanging in its tables"
	fio --name=wow --filename="$D" --ioengine=libaio --direct=1 \
		--verify=crc32c --do_verify=0 --verify_state_save=1 $P2 \
		--trigger-timeout=9 \
		--trigger="sh -c 'echo b > /proc/sysrq-trigger'" \
		--output=/tmp/cut-fio.out &
	# 3 s of acknowledged writes, then a checkpoint at the next commit
	sleep 3
	echo "$(wow_status cut | cut -d' ' -f1-6) $(wow_stat cut commits) commits; checkpoint_interval 256"
	G0=$(read_u "$CACHE" $((OTHER * BS + 40)) 8)
	echo 256 > $CKI
	# the checkpoint starts at the next commit and hangs in its tables
	# for 60 s: the log goes on meanwhile (it is written in the
	# background), or, before 2026-11-28, every write waited for it
	sleep 1
	L1=$(wow_stat cut log_blocks)
	G1=$(read_u "$CACHE" $((OTHER * BS + 40)) 8)
	sleep 4
	L2=$(wow_stat cut log_blocks)
	# (a failure is said after the power cut, which comes anyway)
	rm -f "$S/boot1.failed"
	[ "$G1" -gt "$G0" ] ||
		echo "no checkpoint started in the other area (generation $G0, then $G1)" > "$S/boot1.failed"
	echo "checkpoint $G1 held in its tables: $((L2 - L1)) log blocks written meanwhile, in 4 s"
	[ "$L2" -gt "$L1" ] ||
		echo "writes waited for the checkpoint held in its tables (log_blocks $L1, then $L2)" > "$S/boot1.failed"
	wait
	cat /tmp/cut-fio.out
	wow_cut_late
	;;
esac

[ -e "$S/boot1.failed" ] && fail "boot 1: $(cat "$S/boot1.failed")"
info "load after the cut"
T0=$(now)
wow_create cut "$ORIGIN" "$CACHE"
T1=$(now)
D=$(dm_node cut)
dmesg_since | grep wow | sed 's/^/    kernel: /'
echo "status: $(wow_status cut)"
dmesg_since | grep -q 'is not whole, written when the log stopped; loading checkpoint' ||
	fail "the load did not pass over a checkpoint cut short"
[ "$(wow_stat cut loaded_from)" = checkpoint ] ||
	fail "loaded by the log scan, not from the other checkpoint"
CKIB=$(wow_stat cut load_kib)
CT=$(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.2f", b - a }')
ls ./*verify.state > /dev/null 2>&1 || fail "fio saved no write state"
fio_check_state "$D" $P2
fio_verify_only "$D" $P1
info "a clean shutdown, then the same cache by the log scan"
wow_remove cut
drop_checkpoint "$CACHE"
T0=$(now)
wow_create cut "$ORIGIN" "$CACHE"
T1=$(now)
[ "$(wow_stat cut loaded_from)" = log ] || fail "not loaded by the log scan"
SKIB=$(wow_stat cut load_kib)
ST=$(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.2f", b - a }')
fio_check_state "$D" $P2
wow_clean_remove cut
info "the origin alone"
fio_check_state "$ORIGIN" $P2
fio_verify_only "$ORIGIN" $P1
echo "load after a power cut during a checkpoint: from the other area, $CKIB KiB read in $CT s; the same cache by the log scan: $SKIB KiB in $ST s"
echo "crash-checkpoint-cut: ok"
