#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the kernel's checkpatch.pl --strict over every kernel source file of
# dm-wow; one PASS:/FAIL: line per file.  Then the structure rules
# (scripts/ownership.py: one owner per field, no call cycle between files).  checkpatch.pl comes from Debian's
# linux-source-6.1: the KUnit tree in $WOW_CACHE if it is there, else just
# the script and its data files, extracted once into $WOW_CACHE.  Last,
# the kernel's own checkers (scripts/kernel-checkers.sh): sparse and W=1
# builds on each kernel dm-wow is tested on, and coccicheck.
set -uo pipefail
cd "$(dirname "$0")/.."
WOW_CACHE=${WOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dm-wow}
key=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null)
CP=$WOW_CACHE/kunit/src-$key/scripts/checkpatch.pl
if [ ! -x "$CP" ]; then
	dir=$WOW_CACHE/checkpatch-$key
	CP=$dir/linux-source-6.1/scripts/checkpatch.pl
	if [ ! -x "$CP" ]; then
		rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" &&
			tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$dir.tmp" \
				linux-source-6.1/scripts/checkpatch.pl \
				linux-source-6.1/scripts/spelling.txt \
				linux-source-6.1/scripts/const_structs.checkpatch &&
			rm -rf "$dir" && mv "$dir.tmp" "$dir" ||
			{ echo "FAIL: style/extract-checkpatch"; exit 1; }
	fi
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
if out=$(python3 scripts/ownership.py 2>&1); then
	echo "PASS: style/ownership"
else
	echo "FAIL: style/ownership"
	echo "$out" | sed 's/^/    /'
	rc=1
fi
scripts/kernel-checkers.sh || rc=1
exit $rc
