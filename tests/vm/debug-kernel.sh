#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) the dm-wow debug kernel, an x86_64 kernel from Debian's
# linux-source-6.1 with KASAN, lockdep, KFENCE, kmemleak, ... (the fragment
# tests/vm/debug.config over x86_64_defconfig + kvm_guest.config), and
# dm-wow.ko built against it.
#
# Usage: tests/vm/debug-kernel.sh [kernel|module|dir|status]
#   kernel  build the kernel if it is not cached; print its directory
#   module  kernel, then build dm-wow.ko for it from a copy of dm-wow/
#           (never inside dm-wow/ itself); print the .ko path
#   dir     print the cache directory the current fragment maps to (no build)
#   status  say whether it is built
#
# Layout ($WOW_CACHE/debug-kernel/):
#   src-<pkgver>[-p<hash>]/    the extracted tree with debug-patches/
#                              applied (shared by every config; built
#                              with O=, so it stays clean)
#   <pkgver>-<cfghash>/        one build, keyed by the linux-source-6.1
#                              version and a hash of debug.config, the
#                              recipe and the patches
#     obj/                     kbuild output (O=)
#     vmlinuz                  bzImage
#     root/lib/modules/<kv>/   modules_install (stripped) + depmod
#     kernelrelease            <kv>
#     build.log, done
#     dm-wow/<hash>/src/       a copy of the module sources per content hash,
#                              built against obj/ (the newest four kept)
#
# Environment: WOW_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/dm-wow),
# WOW_SRC (module sources, default this repo's dm-wow/), WOW_DEBUG_JOBS
# (make -j, default 2), WOW_KERNEL_DIR (use this built kernel dir instead of
# the one debug.config maps to; `module` only).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
WOW_CACHE=${WOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dm-wow}
WOW_SRC=$(cd "${WOW_SRC:-$repo/dm-wow}" && pwd)
JOBS=${WOW_DEBUG_JOBS:-2}
PKG=linux-source-6.1
TARBALL=/usr/src/linux-source-6.1.tar.xz
FRAGMENT=$here/debug.config
# patches applied to the extracted source (tests/vm/debug-patches/*.patch,
# -p1, in name order): workarounds for the kernel under TCG, none dm-wow's
PATCHES=$(ls "$here"/debug-patches/*.patch 2>/dev/null || true)
# Bump when the recipe below changes in a way that changes the build.
RECIPE=wow-debug-kernel-1

say() { echo "debug-kernel: $*" >&2; }
die() { say "$*"; exit 1; }

pkgver=$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null) && [ -n "$pkgver" ] ||
	die "$PKG is not installed; run scripts/setup.sh"
[ -r "$TARBALL" ] || die "$TARBALL is missing; reinstall $PKG"
cfghash=$( { echo "$RECIPE"; cat "$FRAGMENT"; [ -z "$PATCHES" ] || cat $PATCHES; } |
	sha256sum | cut -c1-12)
top=$WOW_CACHE/debug-kernel
src=$top/src-$pkgver
[ -z "$PATCHES" ] || src=$src-p$(cat $PATCHES | sha256sum | cut -c1-8)
dir=$top/$pkgver-$cfghash
if [ -n "${WOW_KERNEL_DIR:-}" ]; then
	# a kernel dir named by the caller (wowvm.py --kernel-dir): use it as
	# it is, never build or prune
	dir=$(cd "$WOW_KERNEL_DIR" && pwd)
	[ -f "$dir/done" ] || [ -f "$dir/kernelrelease" ] ||
		die "$dir is not a built kernel dir"
	[ -d "$dir/obj" ] || die "$dir has no obj/ to build dm-wow against"
fi

cmd=${1:-kernel}
case $cmd in
dir) echo "$dir"; exit 0 ;;
status)
	if [ -f "$dir/done" ]; then echo "built: $dir ($(cat "$dir/kernelrelease"))"
	else echo "not built: $dir"; exit 1; fi
	exit 0 ;;
kernel | module) ;;
*) die "unknown command '$cmd' (kernel|module|dir|status)" ;;
esac

mkdir -p "$top"
exec 9>"$top/.lock"
if ! flock -n 9; then
	say "waiting for another build using $top ..."
	flock 9
fi

extract() {
	[ -d "$src" ] && return 0
	rm -rf "$top"/.src-*.tmp.* 2>/dev/null || true
	say "extracting $TARBALL ($pkgver) ..."
	local tmp t
	tmp=$(mktemp -d "$top/.src-$pkgver.tmp.XXXXXX")
	tar -C "$tmp" -xJf "$TARBALL" || { rm -rf "$tmp"; die "extracting failed"; }
	t=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	[ -f "$t/Makefile" ] || { rm -rf "$tmp"; die "no kernel tree in $TARBALL"; }
	local p
	for p in $PATCHES; do
		say "applying $(basename "$p")"
		patch -d "$t" -p1 --quiet --forward < "$p" ||
			{ rm -rf "$tmp"; die "$p does not apply to $PKG $pkgver"; }
	done
	mv "$t" "$src" && rmdir "$tmp"
}

check_config() {
	# Every option the fragment sets must have come out that way.
	local bad=0 line sym want got
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) sym=${line%%=*}; want=${line#*=} ;;
		"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *}; want=n ;;
		*) continue ;;
		esac
		got=$(grep -E "^$sym=" "$dir/obj/.config" | head -n1 | cut -d= -f2-)
		[ -n "$got" ] || got=n
		# built in where a module was asked for is fine (something else
		# selected it =y)
		if [ "$want" != "$got" ] && ! { [ "$want" = m ] && [ "$got" = y ]; }; then
			say "config: $sym wanted $want, got $got"
			bad=1
		fi
	done <"$FRAGMENT"
	return $bad
}

build_kernel() {
	[ -f "$dir/done" ] && return 0
	[ -n "${WOW_KERNEL_DIR:-}" ] && return 0
	extract
	mkdir -p "$dir/obj"
	rm -f "$dir/done"
	# another build of the same source (an older fragment): start from
	# its objects, so that make redoes only what the change touches
	local prev
	if [ ! -f "$dir/obj/.config" ]; then
		prev=""
		for d in $(ls -dt "$top/$pkgver"-*/ 2>/dev/null); do
			[ "$d" != "$dir/" ] && [ -f "$d/done" ] && { prev=$d; break; }
		done
		if [ -n "$prev" ]; then
			say "starting from the objects of ${prev%/}"
			cp -a "${prev%/}/obj/." "$dir/obj/"
		fi
	fi
	local log=$dir/build.log t0=$SECONDS
	say "building $dir (log: $log) ..."
	{
		set -e
		make -C "$src" O="$dir/obj" x86_64_defconfig kvm_guest.config
		"$src/scripts/kconfig/merge_config.sh" -m -O "$dir/obj" \
			"$dir/obj/.config" "$FRAGMENT"
		make -C "$src" O="$dir/obj" olddefconfig
	} >"$log" 2>&1 || die "configuring failed; see $log"
	check_config || die "the fragment did not apply (see above; $dir/obj/.config)"
	nice make -C "$src" O="$dir/obj" -j"$JOBS" bzImage modules >>"$log" 2>&1 ||
		die "build failed; tail of $log:$(echo; tail -n 30 "$log")"
	rm -rf "$dir/root"
	make -C "$src" O="$dir/obj" INSTALL_MOD_PATH="$dir/root" \
		INSTALL_MOD_STRIP=1 DEPMOD=/sbin/depmod modules_install >>"$log" 2>&1 ||
		die "modules_install failed; see $log"
	cp "$dir/obj/arch/x86/boot/bzImage" "$dir/vmlinuz"
	make -s -C "$src" O="$dir/obj" kernelrelease | tail -n1 >"$dir/kernelrelease"
	local kv
	kv=$(cat "$dir/kernelrelease")
	rm -f "$dir/root/lib/modules/$kv/build" "$dir/root/lib/modules/$kv/source"
	echo "$((SECONDS - t0))" >"$dir/build-seconds"
	touch "$dir/done"
	say "built $kv in $((SECONDS - t0)) s"
	# Builds of other configs or package versions are dead weight (GBs).
	local old
	for old in "$top"/*-*; do
		case $old in
		"$dir" | "$src" | *'*') ;;
		"$top"/src-*) rm -rf "$old" ;;
		*) [ -d "$old" ] && { say "removing stale $old"; rm -rf "$old"; } ;;
		esac
	done
}

build_module() {
	# A copy of the sources, so kbuild's output never lands in dm-wow/
	# (where the Debian 6.1 build lives): one per content hash, so that
	# checkouts building at once never share one (and never see another's
	# older mtimes).  The newest four are kept.
	local hash m
	hash=$(cd "$WOW_SRC" && find . -type f \( -name '*.[ch]' -o -name Kbuild \
		-o -name Makefile -o -name Kconfig -o -name VERSION \) -print0 | sort -z |
		xargs -0 sha256sum | sha256sum | cut -c1-16)
	m=$dir/dm-wow/$hash
	if [ ! -f "$m/src/dm-wow.ko" ]; then
		mkdir -p "$m"
		rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='*.mod*' \
			--exclude='.*.cmd' --exclude='Module.symvers' \
			--exclude='modules.order' --exclude='.tmp*' \
			"$WOW_SRC/" "$m/src/" || die "cannot copy $WOW_SRC"
		make -C "$dir/obj" M="$m/src" -j"$JOBS" WOW_WERROR=1 modules >"$m/build.log" 2>&1 ||
			die "dm-wow build failed:$(echo; tail -n 30 "$m/build.log")"
	fi
	touch "$m"
	ls -dt "$dir"/dm-wow/*/ 2>/dev/null | grep -E '/[0-9a-f]{16}/$' |
		tail -n +5 | xargs -r rm -rf
	echo "$m/src/dm-wow.ko"
}

build_kernel
case $cmd in
kernel) echo "$dir" ;;
module) build_module ;;
esac
