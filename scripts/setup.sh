#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what dm-wow's build, tests, demo and bench need.  Idempotent and
# quiet when everything is present.  Runs apt-get update at most once.
set -euo pipefail

PKGS=(
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	qemu-system-x86 busybox-static dmsetup libdevmapper-dev fio blktrace
	kmod cpio xz-utils
	# UML / KUnit build
	build-essential flex bison bc libelf-dev libssl-dev python3
	# bench
	nbdkit nbdkit-plugin-python python3-matplotlib python3-pytest bcache-tools
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -q >/dev/null
	$SUDO apt-get install -y -q "${missing[@]}" >/dev/null
fi
