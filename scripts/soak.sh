#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make soak [DURATION=10m] [KERNEL=debian|debug] [SOAK_SEED=N]
#           [SOAK_CORRUPT=device|origin]
# Boot one VM and run tests/vm/soak.sh in it for DURATION (30s, 10m, 2h or
# plain seconds): verified mixed fio under suspends, reloads, cleaner
# switches and origin error windows, then a full verify.  Prints the guest's
# output live, a PASS:/FAIL: line and the counts; exits non-zero on failure.
# SOAK_CORRUPT is the self-test: it flips one byte of verified data, so the
# soak must fail.
set -uo pipefail
cd "$(dirname "$0")/.."

dur=${DURATION:-10m}
case $dur in
*[0-9]s) secs=${dur%s} ;;
*[0-9]m) secs=$(( ${dur%m} * 60 )) ;;
*[0-9]h) secs=$(( ${dur%h} * 3600 )) ;;
*[0-9]) secs=$dur ;;
*) echo "soak: DURATION=$dur: want N, Ns, Nm or Nh" >&2; exit 2 ;;
esac
[ "$secs" -gt 0 ] 2>/dev/null || { echo "soak: bad DURATION=$dur" >&2; exit 2; }
kernel=${KERNEL:-debian}
case $kernel in debian | debug) ;; *)
	echo "soak: KERNEL=$kernel: want debian or debug" >&2; exit 2 ;;
esac

args=(run -v --flavour "$kernel" --env "WOW_SOAK_SECONDS=$secs"
      --timeout $(( secs + 1800 )))
[ -n "${SOAK_SEED:-}" ] && args+=(--env "WOW_SOAK_SEED=$SOAK_SEED")
[ -n "${SOAK_CORRUPT:-}" ] && args+=(--env "WOW_SOAK_CORRUPT=$SOAK_CORRUPT")
log=$(mktemp /tmp/dm-wow-soak.XXXXXX)
start=$(date +%s)
echo "soak: $secs s on the $kernel kernel (log $log)"
tests/vm/wowvm.py "${args[@]}" tests/vm/soak.sh 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
echo "soak: wall time $(( $(date +%s) - start )) s"
grep -h '^SOAK-SUMMARY' "$log" | tail -n 1
exit "$rc"
