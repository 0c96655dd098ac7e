#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Hostile messages (invariant 7): random valid tunable messages and mutated
# ones (missing or extra values, huge, negative and overflowing numbers,
# unknown words, table-only options, bad cleaner arguments, 400-character
# tokens, watermarks out of range) from /wow/guest/fuzzgen.awk, sent to a
# live device while a verified load runs (passed after `--`, so that
# dmsetup does not take "-1" for an option).  A message of the must-refuse
# class must fail with a kernel message and leave the table line and every tunable in the status
# as they were; any message must leave a sane status; at the end the load's
# data verifies and the device is removable.  quick: 200, full (make
# check-debug only): 600.  On the debug kernel a process costs a good part
# of a second, so a case runs 6 to 9 (it ran 22, and took about 3.5 s);
# timeout_full also makes it one of the first boots check-debug starts.
#
# vm: origin=2G cache=256M timeout=900 timeout_full=5400
. "${WOW_LIB:-/wow/lib.sh}"
. /wow/guest/hostile.sh

if [ "$PROFILE" = full ]; then N=600; else N=200; fi
SEED=${WOW_FUZZ_SEED:-1123}
wow_reset_disks
wow_create fm "$ORIGIN" "$CACHE"
D=$(dm_node fm)
awk -v seed=$SEED -v n=$N -v mode=message -f /wow/guest/fuzzgen.awk > /tmp/fm.cases
if [ "$WOW_BREAK" = fuzz-messages ]; then
	# self-test: a good message marked must-refuse must be caught
	echo "R low_watermark 50" > /tmp/fm.all
	cat /tmp/fm.cases >> /tmp/fm.all && mv /tmp/fm.all /tmp/fm.cases
fi
wowpat load "$D" /tmp/fm.state 100000 7 4096 4096 > /tmp/fm.load 2>&1 &
LOAD=$!
# tunables STATUS...: TUN = the tunables in a status line (the rest of it
# moves with the load); shell builtins only, a case runs few processes
tunables() {
	TUN=""
	for _w in "$@"; do
		case $_w in low_watermark=* | high_watermark=*) TUN="$TUN $_w" ;; esac
	done
}
# cs: the time since boot in hundredths of a second, from a builtin read
cs() {
	read -r _up _ < /proc/uptime
	CS=${_up%.*}${_up#*.}
	while [ "${CS#0}" != "$CS" ]; do CS=${CS#0}; done
	CS=${CS:-0}
}
# where a case's time goes (the message, or the checks around it), and
# the slowest cases: on the debug kernel a case took 5 to 10 s with three
# VMs on two cores, and the reason was not known
case_done() {	# a case ends: add up its times (c0, c1, c2), note it if slow
	cs
	_all=$((CS - c0)) _msg=$((c2 - c1))
	t_msg=$((t_msg + _msg)) t_all=$((t_all + _all))
	[ $_all -ge 300 ] && [ $nslow -lt 10 ] || return 0
	nslow=$((nslow + 1))
	echo "slow case $cases: $((_all / 100)).$((_all % 100 / 10)) s (the message $((_msg / 100)).$((_msg % 100 / 10)) s): [$cls] $(echo "$msg" | cut -c1-60)"
}
cases=0 refused=0 accepted=0 FAILED="" t_msg=0 t_all=0 nslow=0
while read -r cls msg; do
	cases=$((cases + 1))
	cs; c0=$CS
	# shellcheck disable=SC2046
	tunables $(dmsetup status fm)
	before=$TUN
	before_t=$(dmsetup table fm)
	dmesg_clear
	cs; c1=$CS
	# shellcheck disable=SC2086
	bounded 30 /tmp/fm.out dmsetup message fm 0 -- $msg
	rc=$?
	cs; c2=$CS
	[ $rc -ne 124 ] || fail "case $cases: message did not finish in 30 s: $msg"
	st=$(dmsetup status fm)
	tunables $st
	# shellcheck disable=SC2086
	set -- $st
	shift 3		# <start> <length> wow
	case "$1" in ok | cleaning) ;; *) fuzz_nok "state '$1' after message: $msg" ;; esac
	[ "$5" -le "$4" ] 2> /dev/null || fuzz_nok "insane status after message: $*"
	if [ $rc -ne 0 ]; then
		refused=$((refused + 1))
		kmsg=$(dmesg_since)
		case $kmsg in *wow*) ;; *)
			fuzz_nok "refused without a kernel message: $msg ($(cat /tmp/fm.out))" ;;
		esac
		after_t=$(dmsetup table fm)
		[ "$TUN" = "$before" ] && [ "$after_t" = "$before_t" ] ||
			fuzz_nok "refused message changed the device: $msg: '$before $before_t' -> '$TUN $after_t'"
		[ $((cases % 10)) -ne 1 ] ||
			echo "refused [$cls] $(echo "$msg" | cut -c1-60) -> $(echo "$kmsg" | grep wow | head -n 1 | cut -c1-100)"
		case_done
		continue
	fi
	accepted=$((accepted + 1))
	[ "$cls" = A ] || fuzz_nok "accepted a message that must be refused: $msg"
	[ "$(dmsetup table fm)" = "$before_t" ] ||
		fuzz_nok "message changed the table line: $msg"
	case_done
done < /tmp/fm.cases
echo "time: $((t_all / 100)) s in $cases cases, $((t_msg / 100)) s of it in the messages"
kill -TERM $LOAD
wait $LOAD
cat /tmp/fm.load
grep -q ' 0 stale, 0 bad' /tmp/fm.load || fuzz_nok "the load saw wrong data"
run wowpat verify "$D" /tmp/fm.state 4096 4096
wow_no_errors fm
wow_remove fm
echo "fuzz-messages: $cases cases ($PROFILE, seed $SEED): $refused refused (device unchanged), $accepted accepted; load data intact"
[ -z "$FAILED" ] || fail "${FAILED#; }"
