#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The second kernel a Debian user meets: 6.12 (Debian 13's, and Debian 12's
# security updates'), installed by scripts/setup.sh beside Debian 12's 6.1.
#
# Usage: tests/vm/kernel2.sh [kv|module|smoke]
#   kv      print its version (the newest /lib/modules/6.12.* with a
#           build/ tree and a /boot/vmlinuz); exit 1 if there is none
#   module  build dm-wow.ko for it from a copy of dm-wow/ (never inside
#           dm-wow/, where the 6.1 build lives); print the .ko path
#   smoke   build it and boot the smoke subset (SMOKE below) on 6.12;
#           result lines PASS: vm612/<scenario>; with no 6.12 kernel
#           installed, one SKIP line
#
# Layout: $WOW_CACHE/kernel2/<kv>/<hash>/src/, one copy of the module
# sources per content hash (the newest four kept), built with kbuild's
# own flags plus dm-wow's -Werror (WOW_WERROR=1).
# Environment: WOW_CACHE, WOW_SRC (module sources, default this repo's
# dm-wow/), KV2 (the version, instead of the newest 6.12).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
WOW_CACHE=${WOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dm-wow}
WOW_SRC=$(cd "${WOW_SRC:-$repo/dm-wow}" && pwd)

# make check's subset on the second kernel: creation and the table, every
# geometry (blocks above the page size refused there), verified fio, the
# crash campaign at a few points, suspend/reload, the offline tools
SMOKE="create-remove geometry-matrix fio-verify crash-flush-points
	cache-suspend-reload wowctl-offline"

say() { echo "kernel2: $*" >&2; }
die() { say "$*"; exit 1; }

kv2() {
	local d v
	if [ -n "${KV2:-}" ]; then
		echo "$KV2"
		return 0
	fi
	for d in $(ls -d /lib/modules/6.12.*/build 2>/dev/null | sort -V -r); do
		v=$(basename "$(dirname "$d")")
		[ -r "/boot/vmlinuz-$v" ] || continue
		echo "$v"
		return 0
	done
	return 1
}

cmd=${1:-kv}
case $cmd in
kv)
	kv2 || die "no 6.12 kernel with headers (run scripts/setup.sh)"
	;;
module)
	kv=$(kv2) || die "no 6.12 kernel with headers (run scripts/setup.sh)"
	top=$WOW_CACHE/kernel2/$kv
	mkdir -p "$top"
	exec 9>"$top/.lock"
	flock 9
	hash=$(cd "$WOW_SRC" && find . -type f \( -name '*.[ch]' -o -name Kbuild \
		-o -name Makefile -o -name Kconfig -o -name VERSION \) -print0 | sort -z |
		xargs -0 sha256sum | sha256sum | cut -c1-16)
	m=$top/$hash
	if [ ! -f "$m/src/dm-wow.ko" ]; then
		mkdir -p "$m"
		rsync -a --delete --exclude='*.o' --exclude='*.ko' \
			--exclude='*.mod*' --exclude='.*.cmd' \
			--exclude='Module.symvers' --exclude='modules.order' \
			--exclude='.tmp*' "$WOW_SRC/" "$m/src/" ||
			die "cannot copy $WOW_SRC"
		make -C "/lib/modules/$kv/build" M="$m/src" WOW_WERROR=1 modules \
			>"$m/build.log" 2>&1 ||
			die "dm-wow build for $kv failed:$(echo; tail -n 30 "$m/build.log")"
	fi
	touch "$m"
	ls -dt "$top"/*/ 2>/dev/null | grep -E '/[0-9a-f]{16}/$' |
		tail -n +5 | xargs -r rm -rf
	echo "$m/src/dm-wow.ko"
	;;
smoke)
	if ! kv=$(kv2); then
		echo "SKIP: vm612/all (no 6.12 kernel with headers; scripts/setup.sh installs one)"
		exit 0
	fi
	ko=$("$0" module)
	scen=()
	for s in $SMOKE; do
		scen+=("$repo/tests/scenarios/$s.sh")
	done
	KV=$kv exec "$repo/tests/vm/wowvm.py" run --suite vm612 --module "$ko" \
		--env WOW_FP_BUDGET=40 --jobs "${WOW_VM_JOBS:-2}" "${scen[@]}"
	;;
*)
	die "unknown command '$cmd' (kv|module|smoke)"
	;;
esac
