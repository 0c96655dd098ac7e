#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own checkers over dm-wow (the style suite runs this after
# checkpatch; scripts/checkpatch.sh):
#   style/sparse-<kernel>  sparse (C=2) over every file of the module
#   style/w1-<kernel>      gcc's W=1 warnings
#       one build of a copy of the module per kernel it is tested on:
#       Debian 12's 6.1 and 6.12, trixie-backports' 7.2 and 7.3 (their
#       headers from tests/vm/kernel-bpo.sh; a sparse that knows
#       __typeof_unqual__ for them, built once by it); any warning or error
#       in dm-wow's own files fails (kernel headers' own are not ours)
#   style/coccicheck       the kernel's coccinelle scripts (coccicheck,
#       report mode, from linux-source-6.1) over the module: a report not
#       in scripts/coccicheck.known fails (that file lists the ones found
#       when this check came, by file and message: fix one and drop its
#       line)
# A kernel that is not there gives SKIP lines.  A result is kept per
# content hash of the sources, kernel and this script under
# $WOW_CACHE/style/, so an unchanged tree is not built again.
#
# Environment: WOW_CACHE; WOW_SRC (the module sources, default dm-wow/: a
# copy with a planted warning shows the checks fail); WOW_STYLE_KERNELS
# (default "6.1 6.12 7.2 7.3"); WOW_STYLE_NOCACHE=1 runs everything.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
WOW_CACHE=${WOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dm-wow}
WOW_SRC=$(cd "${WOW_SRC:-$repo/dm-wow}" && pwd)
KERNELS=${WOW_STYLE_KERNELS:-6.1 6.12 7.2 7.3}
KNOWN=$repo/scripts/coccicheck.known
STORE=$WOW_CACHE/style
mkdir -p "$STORE"
tmp=$(mktemp -d /tmp/wow-style.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
rc=0

src_hash() {
	(cd "$WOW_SRC" && find . -type f \( -name '*.[ch]' -o -name Kbuild \
		-o -name Makefile -o -name VERSION \) -not -name '*.mod.c' \
		-not -path './tests/*' -print0 | sort -z | xargs -0 sha256sum
	 sha256sum "$repo/scripts/kernel-checkers.sh" "$KNOWN" | cut -c1-64
	 echo "$*") | sha256sum | cut -c1-16
}

# cached KEY: replay a kept result (its lines and verdict); 1 if none
cached() {
	[ "${WOW_STYLE_NOCACHE:-0}" != 1 ] && [ -f "$STORE/$1.out" ] || return 1
	cat "$STORE/$1.out"
	grep -q '^FAIL: ' "$STORE/$1.out" && rc=1
	touch "$STORE/$1.out"
	return 0
}

keep() {	# keep KEY FILE: keep the result (a run that passed or failed)
	cp "$2" "$STORE/$1.out"
	find "$STORE" -name '*.out' -mtime +7 -delete 2>/dev/null
}

copy_src() {	# copy_src DIR: the module's sources, no build output
	mkdir -p "$1"
	rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='*.mod*' \
		--exclude='.*.cmd' --exclude='Module.symvers' \
		--exclude='modules.order' --exclude='.tmp*' --exclude='tests/' \
		"$WOW_SRC/" "$1/"
}

# kernel K: print "KDIR|VARS|CHECK" for it, or nothing
kernel() {
	local kv kd
	case $1 in
	6.1)
		kv=$(scripts/kver.sh 2>/dev/null) || return 0
		echo "/lib/modules/$kv/build||sparse"
		;;
	6.12)
		kv=$(tests/vm/kernel2.sh kv 2>/dev/null) || return 0
		echo "/lib/modules/$kv/build||sparse"
		;;
	7.*)
		kd=$(tests/vm/kernel-bpo.sh kdir "$1" 2>/dev/null) || return 0
		echo "$kd|$(tests/vm/kernel-bpo.sh vars "$1")|$(tests/vm/kernel-bpo.sh sparse 2>/dev/null)"
		;;
	esac
}

# A warning or error of ours: a file of the module (absolute or relative
# path), line, column.  gcc's end in [-W...]; sparse's do not.
OURS='^([^ :]*/)?dm-wow[-a-z0-9]*\.[ch]:[0-9]+:[0-9]+: (warning|error):'

check_kernel() {
	local k=$1 spec kd vars chk key out d log n
	spec=$(kernel "$k")
	if [ -z "$spec" ] || [ ! -d "${spec%%|*}" ]; then
		echo "SKIP: style/sparse-$k (no headers for Linux $k)"
		echo "SKIP: style/w1-$k (no headers for Linux $k)"
		return
	fi
	IFS='|' read -r kd vars chk <<<"$spec"
	if [ -z "$chk" ]; then
		echo "FAIL: style/sparse-$k (no sparse for Linux $k: tests/vm/kernel-bpo.sh sparse)"
		rc=1
		chk=sparse
	fi
	key=k-$k-$(src_hash "$kd" "$vars" "$chk" "$("$chk" --version 2>&1)")
	cached "$key" && return
	out=$tmp/$k.out
	d=$tmp/src-$k
	log=$tmp/build-$k.log
	copy_src "$d"
	# shellcheck disable=SC2086
	nice -n 10 make -C "$kd" M="$d" C=2 CHECK="$chk" W=1 $vars \
		-j"$(nproc)" modules >"$log" 2>&1
	local brc=$?
	{
		if grep -q "sparse is not available" "$log"; then
			echo "FAIL: style/sparse-$k (kbuild found $chk unusable)"
		elif [ $brc -ne 0 ]; then
			echo "FAIL: style/sparse-$k (the build failed)"
		else
			n=$(grep -E "$OURS" "$log" | grep -cv '\[-W')
			if [ "$n" -eq 0 ] && grep -q ' CHECK ' "$log"; then
				echo "PASS: style/sparse-$k"
			elif [ "$n" -eq 0 ]; then
				echo "FAIL: style/sparse-$k (sparse checked no file)"
			else
				echo "FAIL: style/sparse-$k ($n warnings)"
				grep -E "$OURS" "$log" | grep -v '\[-W' |
					sed "s|$d/||; s/^/    /"
			fi
		fi
		n=$(grep -E "$OURS" "$log" | grep -c '\[-W')
		if [ $brc -ne 0 ]; then
			echo "FAIL: style/w1-$k (the build failed)"
			tail -n 20 "$log" | sed "s|$d/||; s/^/    /"
		elif [ "$n" -eq 0 ]; then
			echo "PASS: style/w1-$k"
		else
			echo "FAIL: style/w1-$k ($n warnings)"
			grep -E "$OURS" "$log" | grep '\[-W' | sed "s|$d/||; s/^/    /"
		fi
	} >"$out"
	cat "$out"
	grep -q '^FAIL: ' "$out" && rc=1
	keep "$key" "$out"
}

# coccinelle's scripts: the KUnit tree's linux-source-6.1 if it is there,
# else scripts/coccicheck and scripts/coccinelle/ extracted once
cocci_tree() {
	local key t
	key=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null)
	t=$WOW_CACHE/kunit/src-$key
	if [ -x "$t/scripts/coccicheck" ] && [ -d "$t/scripts/coccinelle" ]; then
		echo "$t"
		return
	fi
	t=$WOW_CACHE/coccinelle-$key
	if [ ! -d "$t/scripts/coccinelle" ]; then
		rm -rf "$t.tmp" && mkdir -p "$t.tmp" &&
			tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$t.tmp" \
				--strip-components=1 linux-source-6.1/scripts/coccicheck \
				linux-source-6.1/scripts/coccinelle &&
			rm -rf "$t" && mv "$t.tmp" "$t" || return 1
	fi
	echo "$t"
}

check_cocci() {
	local t key out d log
	if ! command -v spatch >/dev/null; then
		echo "FAIL: style/coccicheck (no spatch: scripts/setup.sh installs coccinelle)"
		rc=1
		return
	fi
	t=$(cocci_tree) || { echo "FAIL: style/coccicheck (no coccinelle scripts)"; rc=1; return; }
	key=cocci-$(src_hash "$t" "$(spatch --version | head -n 1)")
	cached "$key" && return
	out=$tmp/cocci.out
	d=$tmp/src-cocci
	log=$tmp/cocci.log
	copy_src "$d"
	srctree=$t KBUILD_EXTMOD=$d MODE=report J="$(nproc)" \
		nice -n 10 bash "$t/scripts/coccicheck" >"$log" 2>&1
	# reports as "FILE: MESSAGE" (no line numbers: they move)
	grep -E "^$d/[^ :]+:[0-9]+:[0-9-]+: " "$log" |
		sed -E -e "s|^$d/([^:]+):[0-9]+:[0-9-]+: |\1: |" \
			-e 's/line [0-9]+/line N/g' | sort >"$tmp/found"
	grep -v '^#' "$KNOWN" | sed '/^$/d' | sort >"$tmp/known"
	comm -23 "$tmp/found" "$tmp/known" >"$tmp/new"
	comm -13 "$tmp/found" "$tmp/known" >"$tmp/gone"
	{
		if [ -s "$tmp/new" ]; then
			echo "FAIL: style/coccicheck ($(wc -l <"$tmp/new") new reports)"
			sed 's/^/    /' "$tmp/new"
		elif ! grep -q "spatch -D report" "$log"; then
			echo "FAIL: style/coccicheck (spatch did not run)"
			tail -n 10 "$log" | sed 's/^/    /'
		else
			echo "PASS: style/coccicheck ($(wc -l <"$tmp/found") known reports)"
		fi
		if [ -s "$tmp/gone" ]; then
			echo "    fixed since (drop from scripts/coccicheck.known):"
			sed 's/^/      /' "$tmp/gone"
		fi
	} >"$out"
	cat "$out"
	grep -q '^FAIL: ' "$out" && rc=1
	keep "$key" "$out"
}

for k in $KERNELS; do
	check_kernel "$k"
done
check_cocci
exit $rc
