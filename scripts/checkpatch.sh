#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the kernel's checkpatch.pl --strict over every kernel source file of
# dm-wow; one PASS:/FAIL: line per file.  checkpatch comes from the kernel
# tree tests/kunit/run.sh extracts into $WOW_CACHE.
set -uo pipefail
cd "$(dirname "$0")/.."
WOW_CACHE=${WOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dm-wow}
key=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null)
CP=$WOW_CACHE/kunit/src-$key/scripts/checkpatch.pl
if [ ! -x "$CP" ]; then
	tests/kunit/run.sh --extract-only >/dev/null || exit 1
fi
rc=0
for f in dm-wow/*.c dm-wow/*.h dm-wow/tests/*.c; do
	case $f in *.mod.c) continue ;; esac
	out=$("$CP" --no-tree --strict --quiet -f "$f" 2>&1)
	if [ -z "$out" ]; then
		echo "PASS: style/$(basename "$f")"
	else
		echo "FAIL: style/$(basename "$f")"
		echo "$out" | sed 's/^/    /'
		rc=1
	fi
done
exit $rc
