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

suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
	suites=(style userspace bench-tools kunit vm vm612 vm-systemd)
fi

pass=0 fail=0 skip=0
for s in "${suites[@]}"; do
	echo "=== suite: $s"
	log="$LOGDIR/$s.log"
	start=$(date +%s)
	make --no-print-directory "test-$s" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
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
done

echo "logs: $LOGDIR"
grep -h '^FAIL: ' "$LOGDIR"/*.log 2>/dev/null | sed 's/^/  /'
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
