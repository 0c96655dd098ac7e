#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: dm-wow's Debian packages, built with debhelper and dh-dkms from
# a copy of the tree (the files git knows, plus new ones not ignored), so
# the tree itself stays clean:
#   dm-wow-dkms_V_all.deb   the module's sources and dkms.conf; its
#                           postinst has DKMS build dm-wow.ko for the
#                           installed kernels, its prerm removes it
#   wowctl_V_amd64.deb      wowctl, wowtab, the systemd generator, the udev
#                           rules and wow-probe, man pages, examples
# and the source package; then lintian over them (its output in
# lintian.txt; any error fails the build).
#
# Environment:
#   DEB_VERSION  the packages' version (default dm-wow/VERSION; a rebuild
#                of the same sources is e.g. 0.2.0+1); the module's own
#                version, and DKMS's, stay dm-wow/VERSION
#   DEB_MODULE_VERSION  a version for everything, dm-wow/VERSION of the
#                copy included (tests/vm/deb-vm.py builds an upgrade so:
#                a module DKMS must replace); DEB_VERSION defaults to it
#   DEB_OUT      where the files go (default results/deb)
#   DEB_NOCHECK=1  skip the unit tests dh_auto_test runs
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
VERSION=${DEB_MODULE_VERSION:-$(cat "$top/dm-wow/VERSION")}
DEB_VERSION=${DEB_VERSION:-$VERSION}
OUT=${DEB_OUT:-$top/results/deb}
case $DEB_VERSION in
'' | *[!0-9A-Za-z.+~]*) echo "deb: bad version '$DEB_VERSION' (native: no '-')" >&2; exit 1 ;;
esac

say() { echo "deb: $*" >&2; }
for t in dpkg-buildpackage dh dh_dkms lintian fakeroot; do
	command -v "$t" >/dev/null ||
		{ say "$t is missing (scripts/setup.sh installs it)"; exit 1; }
done

stage=$(mktemp -d /tmp/dm-wow-deb.XXXXXX)
trap 'rm -rf "$stage"' EXIT
src=$stage/dm-wow-$DEB_VERSION
mkdir -p "$src"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		tar --null -T - -cf -) | tar -xf - -C "$src"
	desc=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)
	when=$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)
else
	# a tarball: everything but build output
	(cd "$top" && tar --exclude=./results --exclude='*.o' --exclude='*.ko' \
		-cf - .) | tar -xf - -C "$src"
	desc=tarball
	when=$(date +%s)
fi
[ -d "$src/debian" ] || { say "no debian/ in the tree"; exit 1; }
[ -z "${DEB_MODULE_VERSION:-}" ] || echo "$VERSION" >"$src/dm-wow/VERSION"

# the changelog: one entry, this version (dm-wow/VERSION is the one source)
cat >"$src/debian/changelog" <<CHANGELOG
dm-wow ($DEB_VERSION) unstable; urgency=medium

  * dm-wow $VERSION, built from $desc.

 -- dm-wow developers <dm-wow@lists.example.org>  $(date -R -u -d "@$when")
CHANGELOG

export SOURCE_DATE_EPOCH=$when
opts=()
[ "${DEB_NOCHECK:-0}" = 1 ] && export DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}"
say "building dm-wow $DEB_VERSION in $stage"
if ! (cd "$src" && dpkg-buildpackage -us -uc "${opts[@]}") >"$stage/build.log" 2>&1; then
	tail -n 40 "$stage/build.log" >&2
	say "dpkg-buildpackage failed"
	exit 1
fi
mkdir -p "$OUT"
for f in "$stage"/*_"$DEB_VERSION"*; do
	cp "$f" "$OUT/"
done
cp "$stage/build.log" "$OUT/build-$DEB_VERSION.log"
changes=$(ls "$OUT"/dm-wow_"$DEB_VERSION"_*.changes)
say "lintian $(basename "$changes")"
rc=0
lintian --allow-root --fail-on error --display-info "$changes" \
	>"$OUT/lintian-$DEB_VERSION.txt" 2>&1 || rc=$?
cat "$OUT/lintian-$DEB_VERSION.txt"
if [ $rc -ne 0 ]; then
	say "lintian found errors (exit $rc)"
	exit 1
fi
ls -1 "$OUT"/*_"$DEB_VERSION"_*.deb
