#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Issue 34 B: cleaning after a power cut.  fio writes 4 KiB and 16 KiB
# blocks with O_SYNC (every completed write is durable; never a block
# twice) and crc32c verify headers; after 5 s fio saves its write state
# (on the 9p share) and its trigger cuts the power (sysrq b).  The next
# boot reassembles the cache, checks every acknowledged write through the
# device, turns the cleaner on, drains it, removes the device and checks
# the origin alone: recovery must not count a dirty block as clean.
# Two cases, each a write boot and a check boot: a 256 MiB cache with the
# default table line (origin [0, 1 GiB)), and a 16 MiB cache at
# low_watermark 90 high_watermark 95 (origin [1 GiB, 2 GiB)).
# (Each verify pass runs with --verify_state_save=0: fio's verify-only
# run otherwise rewrites the state file with its own progress, and a
# second pass then checks blocks the writer never wrote.)
#
# vm: origin=2G cache=256M timeout=600 boots=4
. "${WOW_LIB:-/wow/lib.sh}"

: "${WOW_CUT_SECONDS:=5}"
case $WOW_BOOT in
1 | 2)
	CASE=1 OFF=0 OPTS=""
	C=$CACHE ;;
*)
	CASE=2 OFF=1g OPTS="low_watermark 90 high_watermark 95" ;;
esac
JOB="--rw=randwrite --bssplit=4k/80:16k/20 --offset=$OFF --size=1g --sync=1 --iodepth=16 --randseed=$((34 + CASE))"
S=$RESULTS/$WOW_NAME.state$CASE
mkdir -p "$S" && cd "$S" || fail "cannot use $S"

if [ "$CASE" = 2 ]; then
	run dmsetup create lc --table "0 32768 linear $CACHE 0" > /dev/null
	C=$(dm_node lc)
fi

case $WOW_BOOT in
1 | 3)
	info "case $CASE: format, write for $WOW_CUT_SECONDS s, cut the power"
	[ "$WOW_BOOT" = 1 ] && wow_reset_disks
	[ "$WOW_BOOT" = 3 ] && zero_dev "$C" 4
	rm -f ./*verify.state
	wow_create cut "$ORIGIN" "$C" $OPTS
	D=$(dm_node cut)
	touch "$RESULTS/$WOW_NAME.reboot" || fail "cannot write reboot marker"
	echo "--- power cut (boot $WOW_BOOT) by fio's trigger"
	fio --name=wow --filename="$D" --ioengine=libaio --direct=1 \
		--verify=crc32c --do_verify=0 --verify_state_save=1 $JOB \
		--trigger-timeout="$WOW_CUT_SECONDS" \
		--trigger="sh -c 'sync; echo b > /proc/sysrq-trigger'" \
		--output=/tmp/cut-fio.out
	cat /tmp/cut-fio.out
	wow_cut_late
	;;
esac

info "case $CASE: reassemble after the power cut"
wow_create cut "$ORIGIN" "$C" $OPTS
D=$(dm_node cut)
dmesg_since | grep wow | sed 's/^/    kernel: /'
echo "status: $(wow_status cut)"
ls ./*verify.state > /dev/null 2>&1 || fail "fio saved no write state"
fio_check_state "$D" $JOB
wow_clean_remove cut
[ "$CASE" = 2 ] && dmsetup remove lc
info "case $CASE: the origin alone"
fio_check_state "$ORIGIN" $JOB
echo "crash-clean-after-cut: case $CASE ok"
# case 1 checked: one more boot pair for case 2
[ "$CASE" = 1 ] && { touch "$RESULTS/$WOW_NAME.reboot" || fail "cannot write reboot marker"; }
exit 0
