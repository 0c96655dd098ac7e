#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what dm-wow's build, tests, demo and bench need.  Idempotent and
# quiet when everything is present.  Runs apt-get update at most once.
set -euo pipefail

PKGS=(
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	qemu-system-x86 busybox-static dmsetup libdevmapper-dev pkg-config fio
	blktrace kmod cpio xz-utils
	# make install (the module through DKMS); the boot-assembly scenario's
	# udev and systemd-escape; test-vm-systemd boots the host's / with
	# systemd as PID 1 (and makes and reads its ext4 with e2fsprogs)
	dkms udev systemd e2fsprogs util-linux
	# UML / KUnit build
	build-essential flex bison bc libelf-dev libssl-dev python3
	# bench (mdadm: the bench's md RAID-5 and RAID-10 origins, in its guest;
	# linux-perf: bench.py --perf, the CPU profile, in its guest)
	nbdkit nbdkit-plugin-python python3-matplotlib python3-pytest bcache-tools
	mdadm linux-perf
	# make deb (debhelper, dh-dkms, lintian); the style suite's sparse
	# (C=2) and coccicheck; tests/vm/kernel-bpo.sh (the 7.x kernels taken
	# apart: file and objdump find the programs it builds again)
	debhelper dh-dkms lintian fakeroot sparse coccinelle file binutils
	rsync dpkg-dev
)

# The second kernel (issue 15: Debian 13's, and Debian 12's security
# updates'): the newest 6.12 image and its headers.  make check builds the
# module for it and boots it for a smoke subset (tests/vm/kernel2.sh).
KERNEL2_RE='^linux-image-6\.12\.[0-9]+\+deb12-amd64$'

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
updated=0
apt_update() {
	[ $updated = 1 ] && return 0
	$SUDO apt-get update -q >/dev/null
	updated=1
}

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# the installed 6.12 image, else the archive's newest (after one update)
k2=$(dpkg-query -W -f='${Package} ${Status}\n' 'linux-image-6.12.*' 2>/dev/null |
	awk '/install ok installed/ { print $1 }' | grep -E "$KERNEL2_RE" |
	sort -V | tail -n 1 || true)
if [ -z "$k2" ]; then
	apt_update
	k2=$(apt-cache pkgnames linux-image-6.12. | grep -E "$KERNEL2_RE" |
		sort -V | tail -n 1 || true)
fi
if [ -n "$k2" ]; then
	PKGS+=("$k2" "linux-headers-${k2#linux-image-}")
else
	echo "setup: no 6.12 kernel in the archive; make check skips its smoke run" >&2
fi

missing=()
for p in "${PKGS[@]}"; do
	installed "$p" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	apt_update
	$SUDO apt-get install -y -q "${missing[@]}" >/dev/null
fi

# promtool (userspace/tests/prometheus.sh checks wowctl status --prometheus
# with it): taken out of Debian's prometheus package into
# $WOW_CACHE/promtool/<version>, not installed (the package would start a
# Prometheus server on this machine)
WOW_CACHE=${WOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dm-wow}
if ! ls "$WOW_CACHE"/promtool/*/usr/bin/promtool >/dev/null 2>&1; then
	apt_update
	pv=$(apt-cache policy prometheus | awk '/Candidate:/ { print $2 }')
	if [ -z "$pv" ] || [ "$pv" = "(none)" ]; then
		echo "setup: no prometheus package; userspace skips promtool" >&2
	else
		echo "setup: extracting promtool from prometheus $pv"
		t=$(mktemp -d /tmp/wow-promtool.XXXXXX)
		chmod 0755 "$t"
		(cd "$t" && apt-get download -q "prometheus=$pv" >/dev/null 2>&1) &&
			mkdir -p "$WOW_CACHE/promtool" &&
			dpkg-deb -x "$t"/prometheus_*.deb "$t/x" &&
			rm -f "$t/x/usr/bin/prometheus" &&
			rm -rf "$WOW_CACHE/promtool/$pv" &&
			mv "$t/x" "$WOW_CACHE/promtool/$pv" ||
			echo "setup: could not extract promtool" >&2
		rm -rf "$t"
	fi
fi

# Today's kernels, 7.2 and 7.3 from trixie-backports (make check's vm72
# and vm73, the style suite's sparse and W=1 builds): taken apart into
# $WOW_CACHE/kernel-bpo/ once per package version, nothing installed
# (tests/vm/kernel-bpo.sh), and a sparse new enough for them
for s in 7.2 7.3; do
	"$(dirname "$0")/../tests/vm/kernel-bpo.sh" fetch "$s" >/dev/null ||
		echo "setup: no Linux $s (tests/vm/kernel-bpo.sh fetch $s)" >&2
done
"$(dirname "$0")/../tests/vm/kernel-bpo.sh" sparse >/dev/null ||
	echo "setup: no sparse for Linux 7.x (tests/vm/kernel-bpo.sh sparse)" >&2
