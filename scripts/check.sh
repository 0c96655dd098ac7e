#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every test suite and print one countable summary line.
#
# Each suite is a command that prints one line per test case,
#   PASS: <suite>/<case>   FAIL: <suite>/<case>   SKIP: <suite>/<case>
# and exits non-zero when anything failed (or when it could not run at all).
# A suite that exits non-zero without printing a FAIL line counts as one
# failure of its own, so a crash in a runner can never look like success.
set -uo pipefail

cd "$(dirname "$0")/.."
LOGDIR=${WOW_CHECK_LOGDIR:-$(mktemp -d /tmp/dm-wow-check.XXXXXX)}
mkdir -p "$LOGDIR"

# A word A+B runs suites A and B at once (each boots one VM at a time, so
# together they keep the two cores busy), their output printed as each
# ends.
suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
	# (vm-deb, `make test-vm-deb`, is not here: DKMS builds the module
	# twice in a TCG guest, 20 minutes with the boots)
	suites=(style userspace bench-tools kunit vm vm612+vm-systemd vm72+vm73)
fi

pass=0 fail=0 skip=0
# count SUITE RC START: add up the suite's log, print its summary line
count() {
	local s=$1 rc=$2 start=$3 log="$LOGDIR/$1.log" p f k
	p=$(grep -c '^PASS: ' "$log")
	f=$(grep -c '^FAIL: ' "$log")
	k=$(grep -c '^SKIP: ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL: $s/runner (exit $rc)"
		f=1
	fi
	if [ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$k" -eq 0 ]; then
		echo "FAIL: $s/runner (no test ran)"
		f=$((f + 1))
	fi
	echo "=== suite $s: $p passed, $f failed, $k skipped ($(( $(date +%s) - start ))s)"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + k))
}

for word in "${suites[@]}"; do
	start=$(date +%s)
	if [ "${word#*+}" = "$word" ]; then
		echo "=== suite: $word"
		make --no-print-directory "test-$word" 2>&1 | tee "$LOGDIR/$word.log"
		count "$word" "${PIPESTATUS[0]}" "$start"
		continue
	fi
	IFS=+ read -r -a group <<< "$word"
	pids=()
	for s in "${group[@]}"; do
		make --no-print-directory "test-$s" > "$LOGDIR/$s.log" 2>&1 &
		pids+=($!)
	done
	for i in "${!group[@]}"; do
		wait "${pids[$i]}"
		rc=$?
		echo "=== suite: ${group[$i]} (at once with: ${word//+/, })"
		cat "$LOGDIR/${group[$i]}.log"
		count "${group[$i]}" "$rc" "$start"
	done
done

echo "logs: $LOGDIR"
grep -h '^FAIL: ' "$LOGDIR"/*.log 2>/dev/null | sed 's/^/  /'
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
