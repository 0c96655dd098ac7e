#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Origin faults under a verified load (invariant 8).  dm-flakey under the
# origin is switched by table reloads, at pseudo-random moments while
# wowpat load writes and reads back 4 KiB blocks through the wow device
# (destage running all the time: watermarks 0/1), between write errors and
# errors on every read and write.  Required: the load never sees an error
# or a wrong block (the cache holds every written block: 1 GiB, more than
# the full profile's load writes, some 56,000 blocks; on a 256 MiB cache the
# log turned over, cleaning dropped clean copies, and reads of those blocks
# went to the failing origin and failed, as they must), the state stays
# ok, origin_errors counts the failures, the data stays dirty while the
# origin fails; once the fault clears, `cleaner on` drains to the origin
# and the origin alone holds every acknowledged block.
#
# vm: origin=2G cache=1G timeout=600
. "${WOW_LIB:-/wow/lib.sh}"
. /wow/guest/hostile.sh

if [ "$PROFILE" = full ]; then ROUNDS=40; else ROUNDS=6; fi
NB=8192			# 32 MiB of 4 KiB blocks
RND_STATE=4711

wow_reset_disks
flakey of "$ORIGIN" up
wow_create fo "$(dm_node of)" "$CACHE" low_watermark 0 high_watermark 1
D=$(dm_node fo)
dmesg_clear

# the load runs across all the rounds
SECS=$((ROUNDS * 7 + 5))
wowpat load "$D" /tmp/fo.state $SECS 1 $NB 4096 > /tmp/fo.load 2>&1 &
LOAD=$!
r=0
while [ $r -lt $ROUNDS ]; do
	r=$((r + 1))
	rnd 30; sleep "$((R / 10 + 1)).$((R % 10))"
	rnd 2
	if [ $R -eq 0 ]; then mode=error_writes; else mode=errors; fi
	flakey of "$ORIGIN" $mode
	rnd 30; sleep "$((R / 10 + 1)).$((R % 10))"
	st=$(wow_status fo)
	echo "    during the fault: $(echo "$st" | cut -d' ' -f1-6) origin_errors=$(wow_stat fo origin_errors)"
	case "$st" in ok\ *) ;; *) fail "state ${st%% *} on origin faults: $st" ;; esac
	flakey of "$ORIGIN" up
done
echo "waiting for the load to end"
wait $LOAD
rc=$?
cat /tmp/fo.load
[ $rc -eq 0 ] || fail "the load saw errors or wrong data under origin faults (exit $rc)"
oe=$(wow_stat fo origin_errors)
[ "$oe" -gt 0 ] || fail "no origin errors counted: the faults did not hit destage"
wow_no_errors_but_origin() {
	st=$(wow_status fo)
	case "$st" in ok\ * | cleaning\ *) ;; *) fail "state ${st%% *}: $st" ;; esac
	[ "$(wow_stat fo cache_errors)" = 0 ] || fail "cache errors counted: $st"
}
wow_no_errors_but_origin
info "fault cleared: everything acknowledged reads back"
run wowpat verify "$D" /tmp/fo.state $NB 4096
info "cleaner on drains to the origin"
if [ "$WOW_BREAK" = fault-origin ]; then
	# self-test: more writes kept dirty (watermark 90), no cleaner; the
	# origin check below must then fail
	wow_message fo low_watermark 90
	wowpat load "$D" /tmp/fo.state 2 2 $NB 4096
else
	wow_message fo cleaner on
	wow_wait_clean fo 300
fi
wow_no_errors_but_origin
echo "status: $(wow_status fo)"
wow_remove fo
info "the origin alone holds every acknowledged block"
run wowpat verify "$(dm_node of)" /tmp/fo.state $NB 4096
run dmsetup remove of
echo "fault-origin: $FAULTS faults injected ($PROFILE), $oe origin errors counted, data intact"
