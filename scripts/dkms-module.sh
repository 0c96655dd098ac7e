#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The module half of `make install` / `make uninstall`: dm-wow's sources go
# to $DESTDIR/usr/src/dm-wow-$VERSION/ with a dkms.conf made from
# dm-wow/dkms.conf.in, and (without DESTDIR) DKMS builds and installs the
# module.
#
# Usage: scripts/dkms-module.sh install|uninstall
# Environment:
#   DESTDIR       stage into this root; DKMS is not run (a package's
#                 postinst runs `dkms install dm-wow/VERSION`)
#   DKMS_KERNELS  kernel versions to build for (default: DKMS's own, the
#                 running kernel); words, e.g. "6.1.0-56-amd64 6.12.117+deb12-amd64"
#   NO_DKMS=1     copy the sources only, even without DESTDIR
#   DKMS          the dkms command (default dkms)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
DKMS=${DKMS:-dkms}
DESTDIR=${DESTDIR:-}
NO_DKMS=${NO_DKMS:-}
DKMS_KERNELS=${DKMS_KERNELS:-}
VERSION=$(cat "$top/dm-wow/VERSION")
case $VERSION in
'' | *[!0-9A-Za-z.+~-]*) echo "dkms-module: bad version '$VERSION' in dm-wow/VERSION" >&2; exit 1 ;;
esac
src=$DESTDIR/usr/src/dm-wow-$VERSION

say() { echo "dkms-module: $*" >&2; }

run_dkms() {
	[ -z "$DESTDIR" ] && [ "$NO_DKMS" != 1 ]
}

have_dkms() {
	command -v "$DKMS" >/dev/null 2>&1 ||
		{ say "dkms is not installed (apt-get install dkms; or NO_DKMS=1, or DESTDIR=... to stage only)"; exit 1; }
}

# dm-wow/VERSION added to DKMS's tree?
added() {
	"$DKMS" status -m dm-wow -v "$VERSION" 2>/dev/null | grep -q .
}

case ${1:-} in
install)
	if run_dkms; then
		have_dkms
		# a reinstall of the same version with other sources
		if added; then
			"$DKMS" remove -m dm-wow -v "$VERSION" --all >/dev/null
		fi
	fi
	rm -rf "$src"
	mkdir -p "$src"
	# what the module build needs: not the KUnit suites, not a build's
	# leftovers (dm-wow.mod.c)
	for f in "$top"/dm-wow/dm-wow-*.[ch] "$top"/dm-wow/dm-wow.h "$top"/dm-wow/Kbuild \
		"$top"/dm-wow/Kconfig "$top"/dm-wow/Makefile "$top"/dm-wow/VERSION; do
		cp "$f" "$src/"
	done
	sed "s/@VERSION@/$VERSION/g" "$top/dm-wow/dkms.conf.in" >"$src/dkms.conf"
	chmod 0644 "$src"/*
	run_dkms || exit 0
	"$DKMS" add -m dm-wow -v "$VERSION"
	if [ -z "$DKMS_KERNELS" ]; then
		"$DKMS" install -m dm-wow -v "$VERSION"
	else
		for k in $DKMS_KERNELS; do
			"$DKMS" install -m dm-wow -v "$VERSION" -k "$k"
		done
	fi
	;;
uninstall)
	if run_dkms; then
		have_dkms
		if added; then
			"$DKMS" remove -m dm-wow -v "$VERSION" --all
		fi
	fi
	rm -rf "$src"
	;;
*)
	echo "usage: $0 install|uninstall" >&2
	exit 2
	;;
esac
