#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Today's kernels beside Debian 12's 6.1 and 6.12: Debian 13's
# trixie-backports 7.2 and 7.3 (issue 38).  Their packages need a newer C
# library than Debian 12's, so nothing is installed: a private apt
# configuration (its own sources file, lists and archives under
# $WOW_CACHE/apt-trixie; the host's apt is left alone) downloads them,
# dpkg-deb -x takes them apart, and the kbuild host programs that need
# glibc 2.38 (modpost, objtool, resolve_btfids, ...) are built again from
# the matching linux-source.
#
# Usage: tests/vm/kernel-bpo.sh COMMAND SERIES     (SERIES: 7.2 or 7.3)
#   fetch   download, extract and fix the kernel (once per package version,
#           cached); print its kernel dir (wowvm.py --kernel-dir: vmlinuz,
#           kernelrelease, root/lib/modules/KV)
#   kv      print its version (fetching it first)
#   kdir    print its headers' build dir (make -C KDIR M=...)
#   module  build dm-wow.ko for it from a copy of dm-wow/; print the .ko
#   vars    the make variables a module build against it needs
#   smoke   build it and boot the smoke subset of make check's vm612 on it;
#           result lines PASS: vm72/<scenario> (vm73/...); when the kernel
#           cannot be had (no network on a first run), one SKIP line
# Usage: tests/vm/kernel-bpo.sh sparse
#   print the path of a sparse new enough for these kernels (built once
#   from unstable's source package into $WOW_CACHE/sparse/)
#
# Layout: $WOW_CACHE/kernel-bpo/<series>/<package version>/
#   debs/       the .debs (deleted once extracted)
#   root/       image, modules, headers, kbuild, extracted; root/lib ->
#               usr/lib (trixie's packages use /usr/lib/modules)
#   vmlinuz, kernelrelease, .complete
#   hostprogs.log, the host programs' build log
#   mod/<hash>/src/dm-wow.ko  the module per source hash (newest 4 kept)
# The newest complete version of a series is used without asking the
# archive; a new one is fetched only when none is cached (WOW_BPO_UPDATE=1
# asks the archive for a newer one).
# Environment: WOW_CACHE, WOW_SRC (module sources, default dm-wow/),
# WOW_BPO_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
WOW_CACHE=${WOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dm-wow}
WOW_SRC=$(cd "${WOW_SRC:-$repo/dm-wow}" && pwd)
MIRROR=${WOW_BPO_MIRROR:-http://deb.debian.org/debian}

# the same subset as vm612 (tests/vm/kernel2.sh), and crash-power-cut:
# crash-flush-points skips on 7.x (its recording needs preempt=none, which
# x86 kernels with lazy preemption lack), so a crash test that needs no
# recording stands in
SMOKE="create-remove geometry-matrix fio-verify crash-flush-points
	cache-suspend-reload wowctl-offline crash-power-cut"

say() { echo "kernel-bpo: $*" >&2; }
die() { say "$*"; exit 1; }

cmd=${1:-}
series=${2:-}
case $cmd:$series in
sparse:) ;;
*:7.2 | *:7.3) ;;
*) die "usage: $0 fetch|kv|kdir|vars|module|smoke 7.2|7.3, or $0 sparse" ;;
esac
suite=vm${series//./}
top=$WOW_CACHE/kernel-bpo/${series:-none}
[ -z "$series" ] || mkdir -p "$top"

# ---- private apt: trixie-backports (the kernels, linux-source-7.3) and
# unstable (linux-source-7.2: backports keeps only the newest source) ----
A=$WOW_CACHE/apt-trixie
apt_private() {
	local tool=$1
	shift
	"$tool" -o Dir::Etc::sourcelist="$A/sources.list" \
		-o Dir::Etc::sourceparts=- -o Dir::State::Lists="$A/lists" \
		-o Dir::Cache="$A/cache" -o Dir::State::status=/dev/null \
		-o APT::Get::List-Cleanup=0 -o Debug::NoLocking=1 "$@"
}
apt_setup() {
	mkdir -p "$A/lists/partial" "$A/cache/archives/partial"
	cat >"$A/sources.list" <<-EOF
	deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR trixie-backports main
	deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR unstable main
	deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR unstable main
	EOF
	apt_private apt-get update -q >"$A/update.log" 2>&1 ||
		{ tail -n 5 "$A/update.log" >&2; return 1; }
}

# what a complete kernel dir holds (its .complete); a dir of another
# format is fetched again
FORMAT=2

# the newest complete version cached for this series
cached() {
	local d
	for d in $(ls -d "$top"/*/.complete 2>/dev/null | sort -V -r); do
		[ "$(cat "$d")" = "$FORMAT" ] || continue
		dirname "$d"
		return 0
	done
	return 1
}

# GLIBC_x.y versions an ELF file needs above Debian 12's 2.36
needs_new_glibc() {
	objdump -T "$1" 2>/dev/null | grep -oE 'GLIBC_2\.[0-9]+' |
		awk -F. '$2 > 36 { found = 1 } END { exit !found }'
}

# The source's build of a kbuild program: Debian's kbuild runs
# modpost.real-lsb-64 and objtool.real-x86 through wrappers; other
# variants (32-bit, big-endian, powerpc) are never run here: none.
source_of() {
	case $1 in
	scripts/mod/modpost.real-lsb-64) echo scripts/mod/modpost ;;
	tools/objtool/objtool.real-x86) echo tools/objtool/objtool ;;
	*.real-*) ;;
	*) echo "$1" ;;
	esac
}

# build the kbuild host programs from linux-source and put them in place
host_programs() {
	local d=$1 kv=$2 srcdeb=$3 kb b rel from s=$1/src
	kb=$(ls -d "$d"/root/usr/lib/linux-kbuild-* | head -n 1)
	if [ ! -f "$s/.built" ]; then
		say "building the kbuild host programs of $kv from $(basename "$srcdeb")"
		rm -rf "$s" "$d/srcdeb"
		mkdir -p "$s" "$d/srcdeb"
		dpkg-deb --fsys-tarfile "$srcdeb" | tar -x -C "$d/srcdeb" \
			--wildcards './usr/src/linux-source-*.tar.xz'
		tar -xJf "$d"/srcdeb/usr/src/linux-source-*.tar.xz -C "$s" \
			--strip-components=1
		rm -rf "$d/srcdeb"
		cp "$d/root/usr/src/linux-headers-$kv/.config" "$s/.config"
		# the host's gcc is older than the one that built the kernel:
		# the config is re-evaluated for it, which changes nothing
		# the host programs depend on
		(cd "$s" && make olddefconfig && make -j"$(nproc)" modules_prepare &&
			make -j"$(nproc)" -C tools/bpf/resolve_btfids) \
			>"$d/hostprogs.log" 2>&1 ||
			{ tail -n 30 "$d/hostprogs.log" >&2; return 1; }
		touch "$s/.built"
	fi
	# every ELF program of linux-kbuild that needs a newer C library
	while IFS= read -r b; do
		file -b "$b" | grep -q '^ELF' || continue
		needs_new_glibc "$b" || continue
		rel=${b#"$kb"/}
		from=$(source_of "$rel")
		if [ -z "$from" ]; then
			rm -f "$b"
			echo "removed $rel (not run on x86-64)" >>"$d/hostprogs.log"
			continue
		fi
		[ -x "$s/$from" ] ||
			{ say "no $from built from the source"; return 1; }
		cp "$s/$from" "$b"
		echo "replaced $rel with the source's $from" >>"$d/hostprogs.log"
	done < <(find "$kb" -type f -perm -u+x)
	while IFS= read -r b; do
		if file -b "$b" | grep -q '^ELF' && needs_new_glibc "$b"; then
			say "$b still needs a newer C library"
			return 1
		fi
	done < <(find "$kb" -type f -perm -u+x)
	# what Debian's kbuild leaves out and C=2 needs (the style suite's
	# sparse runs: without it kbuild calls sparse unusable)
	[ -e "$kb/scripts/checker-valid.sh" ] ||
		cp "$s/scripts/checker-valid.sh" "$kb/scripts/"
	rm -rf "$s"
}

fetch() {
	local d kv v img pkgs p src srcv
	if [ "${WOW_BPO_UPDATE:-0}" != 1 ] && d=$(cached); then
		echo "$d"
		return 0
	fi
	exec 8>"$top/.lock"
	flock 8
	if [ "${WOW_BPO_UPDATE:-0}" != 1 ] && d=$(cached); then
		echo "$d"
		return 0
	fi
	apt_setup || { say "cannot reach the archive"; return 1; }
	img=$(apt_private apt-cache pkgnames "linux-image-$series." |
		grep -E "^linux-image-${series//./\\.}\.[0-9]+\+deb13-amd64$" |
		sort -V | tail -n 1)
	[ -n "$img" ] || { say "no linux-image-$series.*+deb13-amd64"; return 1; }
	kv=${img#linux-image-}
	v=$(apt_private apt-cache show "$img" | awk '/^Version:/ { print $2; exit }')
	d=$top/$v
	if [ "$(cat "$d/.complete" 2>/dev/null)" = "$FORMAT" ]; then
		echo "$d"
		return 0
	fi
	rm -f "$d/.complete"
	say "fetching $img $v (trixie-backports)"
	rm -rf "$d/root"
	mkdir -p "$d/debs" "$d/root"
	abi=${kv%-amd64}
	# linux-image-KV is empty: the image is in linux-binary, the
	# modules in linux-modules, modules.builtin and .order in linux-base
	pkgs=("linux-binary-$kv" "linux-modules-$kv" "linux-base-$kv"
		"linux-headers-$kv" "linux-headers-$abi-common"
		"linux-kbuild-$abi")
	src=linux-source-$series
	srcv=$(apt_private apt-cache policy "$src" |
		awk '/Candidate:/ { print $2 }')
	[ -n "$srcv" ] && [ "$srcv" != "(none)" ] || { say "no $src"; return 1; }
	chmod 0755 "$d/debs"
	for p in "${pkgs[@]}" "$src"; do
		pv=$v
		[ "$p" = "$src" ] && pv=$srcv
		ls "$d/debs/${p}_"*.deb >/dev/null 2>&1 && continue
		(cd "$d/debs" && apt_private apt-get download -q "$p=$pv") \
			>>"$d/download.log" 2>&1 ||
			{ tail -n 5 "$d/download.log" >&2; return 1; }
	done
	for p in "${pkgs[@]}"; do
		dpkg-deb -x "$d"/debs/"${p}"_*.deb "$d/root"
	done
	if [ ! -e "$d/root/lib" ] && [ -d "$d/root/usr/lib/modules" ]; then
		ln -s usr/lib "$d/root/lib"
	fi
	# trixie's packages keep the image beside the modules
	for p in "boot/vmlinuz-$kv" "usr/lib/modules/$kv/vmlinuz" ""; do
		[ -n "$p" ] || { say "no vmlinuz for $kv"; return 1; }
		[ -f "$d/root/$p" ] && break
	done
	[ -f "$d/root/usr/src/linux-headers-$kv/.config" ] ||
		{ say "no headers for $kv"; return 1; }
	ln -sf "root/$p" "$d/vmlinuz"
	# the headers name their common half by its installed path
	sed -i "s|/usr/src/|$d/root/usr/src/|g" \
		"$d/root/usr/src/linux-headers-$kv/Makefile"
	echo "$kv" >"$d/kernelrelease"
	depmod -b "$d/root" "$kv"
	host_programs "$d" "$kv" "$(ls "$d"/debs/"$src"_*.deb)"
	echo "$src $srcv" >"$d/hostprogs.source"
	rm -rf "$d/debs"
	echo "$FORMAT" >"$d/.complete"
	say "$kv ready in $d"
	echo "$d"
}

# A sparse that knows __typeof_unqual__, which Linux 6.14 and later
# require of it (scripts/checker-valid.sh; Debian 12's 0.6.4 does not):
# built from unstable's source package into $WOW_CACHE/sparse/<version>/
# (its binary package needs glibc 2.38).  Prints the binary's path.
sparse_new() {
	local t v dir
	for dir in $(ls -d "$WOW_CACHE"/sparse/*/sparse 2>/dev/null | sort -V -r); do
		echo "$dir"
		return 0
	done
	mkdir -p "$WOW_CACHE/sparse"
	exec 7>"$WOW_CACHE/sparse/.lock"
	flock 7
	apt_setup || { say "cannot reach the archive"; return 1; }
	v=$(apt_private apt-cache showsrc sparse | awk '/^Version:/ { print $2 }' |
		sort -V | tail -n 1)
	[ -n "$v" ] || { say "no sparse source package"; return 1; }
	t=$(mktemp -d "$WOW_CACHE/sparse/build.XXXXXX")
	chmod 0755 "$t"
	say "building sparse $v from its source package"
	(cd "$t" && apt_private apt-get source -q --download-only "sparse=$v" &&
		dpkg-source -x --no-check sparse_*.dsc src &&
		make -C src -j"$(nproc)" CC=gcc sparse) >"$t/build.log" 2>&1 ||
		{ tail -n 20 "$t/build.log" >&2; rm -rf "$t"; return 1; }
	mkdir -p "$WOW_CACHE/sparse/$v"
	cp "$t/src/sparse" "$WOW_CACHE/sparse/$v/sparse"
	rm -rf "$t"
	echo "$WOW_CACHE/sparse/$v/sparse"
}

kdir_of() {
	echo "$1/root/usr/src/linux-headers-$(cat "$1/kernelrelease")"
}

module() {
	local d=$1 kd hash m
	kd=$(kdir_of "$d")
	exec 9>"$d/.modlock"
	flock 9
	hash=$(cd "$WOW_SRC" && find . -type f \( -name '*.[ch]' -o -name Kbuild \
		-o -name Makefile -o -name Kconfig -o -name VERSION \) -print0 |
		sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
	m=$d/mod/$hash
	if [ ! -f "$m/src/dm-wow.ko" ]; then
		mkdir -p "$m"
		rsync -a --delete --exclude='*.o' --exclude='*.ko' \
			--exclude='*.mod*' --exclude='.*.cmd' \
			--exclude='Module.symvers' --exclude='modules.order' \
			--exclude='.tmp*' "$WOW_SRC/" "$m/src/" ||
			die "cannot copy $WOW_SRC"
		# shellcheck disable=SC2046
		make -C "$kd" M="$m/src" WOW_WERROR=1 $(kbuild_vars "$d") \
			modules >"$m/build.log" 2>&1 ||
			die "dm-wow build for $(cat "$d/kernelrelease") failed:$(echo; tail -n 30 "$m/build.log")"
	fi
	touch "$m"
	ls -dt "$d"/mod/*/ 2>/dev/null | tail -n +5 | xargs -r rm -rf
	echo "$m/src/dm-wow.ko"
}

# Make variables for a module build against these headers with Debian
# 12's tools (the headers name gcc-14 and pahole 1.30):
#   CC=gcc HOSTCC=gcc    gcc 12
#   CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT=   gcc 14's
#                        -fmin-function-alignment=16 becomes gcc 12's
#                        -falign-functions=16, as for a kernel built by it
#   CONFIG_DEBUG_INFO_BTF_MODULES=   no BTF for the module: pahole 1.24
#                        lacks --btf_features (the module loads without)
kbuild_vars() {
	echo "CC=gcc HOSTCC=gcc CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT=" \
		"CONFIG_DEBUG_INFO_BTF_MODULES="
}

case $cmd in
fetch)
	fetch
	;;
kv)
	d=$(fetch) || exit 1
	cat "$d/kernelrelease"
	;;
kdir)
	d=$(fetch) || exit 1
	kdir_of "$d"
	;;
vars)
	d=$(fetch) || exit 1
	kbuild_vars "$d"
	;;
sparse)
	sparse_new
	;;
module)
	d=$(fetch) || exit 1
	module "$d"
	;;
smoke)
	if ! d=$(fetch); then
		echo "SKIP: $suite/all (Linux $series could not be fetched from trixie-backports)"
		exit 0
	fi
	ko=$(module "$d")
	scen=()
	for s in $SMOKE; do
		scen+=("$repo/tests/scenarios/$s.sh")
	done
	exec "$repo/tests/vm/wowvm.py" run --suite "$suite" --kernel-dir "$d" \
		--module "$ko" --env WOW_FP_BUDGET=40 --jobs "${WOW_VM_JOBS:-1}" \
		"${scen[@]}"
	;;
*)
	die "unknown command '$cmd' (fetch|kv|kdir|vars|module|smoke)"
	;;
esac
