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
# check-debug only): 600.  On the debug kernel a case takes about 3.5 s
# (the forks around it), so 3,000 would have taken three hours;
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
tunables() {	# the tunables in the status, and the table line
	wow_status fm | tr ' ' '\n' | grep -E '^(low|high)_watermark=' | tr '\n' ' '
	dmsetup table fm
}
cases=0 refused=0 accepted=0 FAILED=""
while read -r cls msg; do
	cases=$((cases + 1))
	before=$(tunables)
	before_t=$(dmsetup table fm)
	dmesg_clear
	# shellcheck disable=SC2086
	bounded 30 /tmp/fm.out dmsetup message fm 0 -- $msg
	rc=$?
	[ $rc -ne 124 ] || fail "case $cases: message did not finish in 30 s: $msg"
	set -- $(wow_status fm)
	case "$1" in ok | cleaning) ;; *) fuzz_nok "state '$1' after message: $msg" ;; esac
	[ "$5" -le "$4" ] 2> /dev/null || fuzz_nok "insane status after message: $*"
	if [ $rc -ne 0 ]; then
		refused=$((refused + 1))
		dmesg_since | grep -q 'wow' ||
			fuzz_nok "refused without a kernel message: $msg ($(cat /tmp/fm.out))"
		[ "$(tunables)" = "$before" ] ||
			fuzz_nok "refused message changed the device: $msg: '$before' -> '$(tunables)'"
		[ $((cases % 10)) -ne 1 ] ||
			echo "refused [$cls] $(echo "$msg" | cut -c1-60) -> $(dmesg_since | grep wow | head -n 1 | cut -c1-100)"
		continue
	fi
	accepted=$((accepted + 1))
	[ "$cls" = A ] || fuzz_nok "accepted a message that must be refused: $msg"
	[ "$(dmsetup table fm)" = "$before_t" ] ||
		fuzz_nok "message changed the table line: $msg"
done < /tmp/fm.cases
kill -TERM $LOAD
wait $LOAD
cat /tmp/fm.load
grep -q ' 0 stale, 0 bad' /tmp/fm.load || fuzz_nok "the load saw wrong data"
run wowpat verify "$D" /tmp/fm.state 4096 4096
wow_no_errors fm
wow_remove fm
echo "fuzz-messages: $cases cases ($PROFILE, seed $SEED): $refused refused (device unchanged), $accepted accepted; load data intact"
[ -z "$FAILED" ] || fail "${FAILED#; }"
