#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# wowctl status --prometheus (libwow's wow_print_prometheus, on the fake
# devices of test_libwow) through Prometheus's own parser and linter,
# `promtool check metrics`.  test_libwow's prometheus_* cases check the
# same text with a strict reader of their own; this one asks the reference.
# promtool: $PROMTOOL, else on PATH, else the newest one scripts/setup.sh
# extracted from Debian's prometheus package into $WOW_CACHE/promtool/
# (installing the package would start a Prometheus server).  Without one:
# a SKIP line.
# Usage: tests/prometheus.sh path/to/test_libwow
set -eu
TEST_LIBWOW=${1:-./tests/test_libwow}
WOW_CACHE=${WOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dm-wow}

promtool=${PROMTOOL:-$(command -v promtool || true)}
if [ -z "$promtool" ]; then
	promtool=$(ls -d "$WOW_CACHE"/promtool/*/usr/bin/promtool 2>/dev/null |
		sort -V | tail -n 1)
fi
if [ -z "$promtool" ] || [ ! -x "$promtool" ]; then
	echo "SKIP: userspace/promtool_check_metrics (no promtool; scripts/setup.sh extracts one)"
	exit 0
fi
out=$(mktemp /tmp/wow-prom.XXXXXX)
trap 'rm -f "$out" "$out.lint"' EXIT
"$TEST_LIBWOW" --prometheus-sample >"$out"
# promtool 2.42 prints lint problems and exits 3; a parse error exits 1
if "$promtool" check metrics <"$out" >"$out.lint" 2>&1 && [ ! -s "$out.lint" ] &&
   [ "$(grep -c '^# TYPE ' "$out")" -gt 40 ]; then
	echo "PASS: userspace/promtool_check_metrics"
else
	echo "FAIL: userspace/promtool_check_metrics ($(head -c 300 "$out.lint" | tr '\n' ' '))"
	exit 1
fi
