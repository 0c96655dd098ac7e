#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build dm-wow into a User-Mode Linux kernel from Debian's linux-source-6.1,
# run its KUnit tests and print one line per test case:
#   PASS: kunit/<suite>.<case>   FAIL: kunit/<suite>.<case>   SKIP: ...
# followed by a one-line summary.  Exits non-zero when a case failed, the
# kernel did not configure or build, or no test ran.
#
# Usage: tests/kunit/run.sh [FILTER_GLOB] [kunit.py run options...]
#   e.g. tests/kunit/run.sh 'dm_wow_args*'
#        tests/kunit/run.sh 'dm_wow_args.*bad*'
#        tests/kunit/run.sh --kconfig_add=CONFIG_KASAN=y
# Every argument is passed to `kunit.py run` as it is.
#
# Environment:
#   WOW_CACHE           cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/dm-wow);
#                       the kernel tree and build live in $WOW_CACHE/kunit/
#   WOW_SRC             module sources to test (default: this repo's dm-wow/)
#   WOW_KUNIT_JOBS      make -j (default 2)
#   WOW_KUNIT_TIMEOUT   seconds allowed for the test run itself (default 180)
#   WOW_KUNIT_VERBOSE=1 also print kunit.py's own output
#   PYTHON              python interpreter (default python3)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

WOW_CACHE=${WOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dm-wow}
WOW_SRC=$(cd "${WOW_SRC:-$repo/dm-wow}" 2>/dev/null && pwd) || {
	echo "FAIL: kunit/setup (no module sources at ${WOW_SRC:-$repo/dm-wow})"
	exit 1
}
PYTHON=${PYTHON:-python3}
JOBS=${WOW_KUNIT_JOBS:-2}
TIMEOUT=${WOW_KUNIT_TIMEOUT:-180}
PKG=linux-source-6.1
TARBALL=/usr/src/linux-source-6.1.tar.xz

# Config the runner adds to every build, on top of dm-wow/tests/.kunitconfig.
# (None is needed on Debian 12 / gcc 12 today; keep the hook.)
RUNNER_KCONFIG=()

die() {
	# die <name> <message>: a runner-level failure, counted as one FAIL.
	echo "FAIL: kunit/$1 ($2)"
	exit 1
}

key=$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null) && [ -n "$key" ] ||
	die setup "$PKG is not installed; run scripts/setup.sh"
[ -r "$TARBALL" ] || die setup "$TARBALL is missing; reinstall $PKG"

kdir=$WOW_CACHE/kunit
src=$kdir/src-$key
build=$kdir/build-$key
log=$kdir/last-run.log
mkdir -p "$kdir" || die setup "cannot create $kdir"

# One run at a time per cache: the tree and build directory are shared.
exec 9>"$kdir/.lock"
if ! flock -n 9; then
	echo "kunit: waiting for another run using $kdir ..." >&2
	flock 9
fi

# 1. The kernel tree, extracted once per package version.  The tarball is
#    unpacked into a temporary directory and renamed into place, so a tree
#    at $src is always complete.
if [ ! -d "$src" ]; then
	rm -rf "$kdir"/.src-*.tmp.* 2>/dev/null
	echo "kunit: extracting $TARBALL ($key) into $kdir ..." >&2
	tmp=$(mktemp -d "$kdir/.src-$key.tmp.XXXXXX") || die setup "mktemp failed"
	if ! tar -C "$tmp" -xJf "$TARBALL"; then
		rm -rf "$tmp"
		die setup "extracting $TARBALL failed"
	fi
	top=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	[ -n "$top" ] && [ -f "$top/tools/testing/kunit/kunit.py" ] || {
		rm -rf "$tmp"
		die setup "$TARBALL does not hold a kernel tree with kunit.py"
	}
	mv "$top" "$src" && rmdir "$tmp" || die setup "cannot move the tree to $src"
	# Trees and builds of older package versions are dead weight (1.5 GB).
	for old in "$kdir"/src-* "$kdir"/build-*; do
		case $old in
		"$src" | "$build" | *'*') ;;
		*) echo "kunit: removing stale $old" >&2; rm -rf "$old" ;;
		esac
	done
fi

# 2. Hook dm-wow into drivers/md.  The link is re-pointed every run (clones
#    live in different places); if it used to point elsewhere, drop dm-wow's
#    objects so make cannot keep ones built from the other copy.
link=$src/drivers/md/dm-wow
if [ -e "$link" ] && [ ! -L "$link" ]; then
	die setup "$link exists and is not a symlink"
fi
mkdir -p "$build" || die setup "cannot create $build"
if [ "$(readlink "$link" 2>/dev/null)" != "$WOW_SRC" ] ||
   [ "$(cat "$build/.dm-wow-src" 2>/dev/null)" != "$WOW_SRC" ]; then
	rm -rf "$build/drivers/md/dm-wow"
fi
ln -sfn "$WOW_SRC" "$link" || die setup "cannot link $link"
echo "$WOW_SRC" >"$build/.dm-wow-src"

kconfig=$src/drivers/md/Kconfig
if ! grep -q '^source "drivers/md/dm-wow/Kconfig"' "$kconfig"; then
	# Insert before the last endif (the one closing `if MD`).
	last=$(grep -n '^endif' "$kconfig" | tail -n 1 | cut -d: -f1)
	[ -n "$last" ] || die setup "no endif in $kconfig"
	sed "${last}i source \"drivers/md/dm-wow/Kconfig\"\\
" "$kconfig" >"$kconfig.tmp" && mv "$kconfig.tmp" "$kconfig" ||
		die setup "cannot edit $kconfig"
fi
mkfile=$src/drivers/md/Makefile
if ! grep -q '^obj-$(CONFIG_DM_WOW)[[:space:]]*+= dm-wow/' "$mkfile"; then
	printf 'obj-$(CONFIG_DM_WOW)\t\t+= dm-wow/\n' >>"$mkfile" ||
		die setup "cannot edit $mkfile"
fi

kunitconfig=$WOW_SRC/tests/.kunitconfig
[ -f "$kunitconfig" ] || die setup "$kunitconfig is missing"

# 3. Configure, build and run.  kunit.py writes the kernel's console to
#    $build/test.log; remove the old one so a failed build cannot be
#    mistaken for a run.
rm -f "$build/test.log"
# dm-wow's Kbuild adds -Werror only when asked (DKMS builds go without)
export WOW_WERROR=1
stamp=$kdir/.run-stamp
touch "$stamp"
start=$(date +%s)
args=(run --arch=um --kunitconfig="$kunitconfig" --build_dir="$build"
      --jobs="$JOBS" --timeout="$TIMEOUT")
for c in "${RUNNER_KCONFIG[@]}"; do
	args+=(--kconfig_add="$c")
done
if [ "${WOW_KUNIT_VERBOSE:-0}" = 1 ]; then
	(cd "$src" && "$PYTHON" tools/testing/kunit/kunit.py "${args[@]}" "$@") \
		</dev/null 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
else
	(cd "$src" && "$PYTHON" tools/testing/kunit/kunit.py "${args[@]}" "$@") \
		</dev/null >"$log" 2>&1
	rc=$?
fi
elapsed=$(( $(date +%s) - start ))

# The build must not write into the module's source directory.
leaked=$(find "$WOW_SRC" -newer "$stamp" \( -name '*.o' -o -name '*.cmd' \
	-o -name '*.a' -o -name 'modules.order' \) 2>/dev/null | head -n 5)
leak_rc=0
if [ -n "$leaked" ]; then
	echo "FAIL: kunit/build-output-in-source (build wrote into $WOW_SRC:" \
		$leaked")"
	leak_rc=1
fi

if [ ! -s "$build/test.log" ]; then
	# The kernel never ran: configuration or build failed.  Show paths in
	# the module as the developer knows them, not through the cache.
	errs=': (fatal )?error:|undefined reference|multiple definition|: In function'
	ntail=40
	if grep -qE "$errs" "$log"; then
		echo "kunit: build errors:"
		grep -E -A3 "$errs" "$log" | grep -v '^--$' | head -n 80 |
			sed "s|^ERROR:root:||; s|$src/drivers/md/dm-wow/|$WOW_SRC/|g; s/^/    /"
		ntail=12
	fi
	echo "kunit: last lines of $log:"
	tail -n "$ntail" "$log" | sed "s|$src/drivers/md/dm-wow/|$WOW_SRC/|g; s/^/    /"
	if ! grep -q 'Building KUnit Kernel' "$log"; then
		echo "FAIL: kunit/config (kernel configuration failed, kunit.py exit $rc; log: $log)"
	else
		echo "FAIL: kunit/build (kernel build failed after ${elapsed}s, kunit.py exit $rc; log: $log)"
	fi
	exit 1
fi

# Compiler warnings in dm-wow's own files (only shown when they were just
# recompiled; the rest of the kernel's warnings stay in the log).
if grep -q "drivers/md/dm-wow/.*warning:" "$log"; then
	echo "kunit: compiler warnings in $WOW_SRC:"
	awk '/drivers\/md\/dm-wow\/.*warning:/ { show = 1; print; next }
	     show && /^ +([0-9]+ )?\|/ { print; next } { show = 0 }' "$log" |
		head -n 60 |
		sed "s|$src/drivers/md/dm-wow/|$WOW_SRC/|g; s/^/    /"
fi

timed_out=()
if grep -q "timed out after [0-9]* seconds" "$log"; then
	timed_out=(--timed-out "$TIMEOUT")
fi
"$PYTHON" "$here/ktap_report.py" --kernel-src "$src" --linux "$build/linux" \
	"${timed_out[@]}" \
	--summary-suffix "${elapsed}s; log: $log, console: $build/test.log" \
	"$build/test.log"
report_rc=$?

if [ "$report_rc" -eq 0 ] && [ "$rc" -ne 0 ]; then
	echo "kunit: last lines of $log:"
	tail -n 20 "$log" | sed 's/^/    /'
	echo "FAIL: kunit/runner (kunit.py exited $rc although every case passed)"
	exit 1
fi
[ "$report_rc" -eq 0 ] && [ "$leak_rc" -eq 0 ]
