#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# `make install` and `make uninstall` into a DESTDIR (no DKMS run, no root
# paths touched): the files, their modes, the paths substituted into them,
# one version everywhere.  One PASS:/FAIL: line per case.
# Usage: tests/install.sh  (from userspace/ or anywhere in the tree)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
failed=0
D=$(mktemp -d /tmp/wow-install.XXXXXX)
trap 'rm -rf "$D"' EXIT

pass() { echo "PASS: userspace/$1"; }
fail() { echo "FAIL: userspace/$1 ($2)"; failed=1; }
check() {
	name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}

V=$(cat "$top/dm-wow/VERSION")

# install PREFIX: make install into $D/PREFIX-named root; the file list
inst() {
	root=$D/root$(echo "$1" | tr / _)
	make -s -C "$top" install DESTDIR="$root" PREFIX="$1" >"$D/log" 2>&1 ||
		{ cat "$D/log"; return 1; }
	(cd "$root" && find . \( -type f -o -type l \) | sort)
}

list=$(inst /usr/local) || list=
want="./usr/lib/systemd/system-generators/dm-wow-generator
./usr/lib/udev/rules.d/61-dm-wow.rules
./usr/lib/udev/wow-probe
./usr/local/sbin/wowctl
./usr/local/sbin/wowtab
./usr/local/share/man/man5/wowtab.5
./usr/local/share/man/man8/wowctl.8
./usr/src/dm-wow-$V/Kbuild
./usr/src/dm-wow-$V/Kconfig
./usr/src/dm-wow-$V/Makefile
./usr/src/dm-wow-$V/VERSION"
got=$(printf '%s\n' "$list" | grep -v -e '\.[ch]$' -e '/dkms\.conf$')
check install_files "got:
$list" [ "$got" = "$want" ]
echo "install: DESTDIR files (PREFIX=/usr/local):"
printf '%s\n' "$list" | sed 's/^\./    /'
r=$D/root_usr_local
nsrc=$(printf '%s\n' "$list" | grep -c "^./usr/src/dm-wow-$V/.*\.[ch]\$" || true)
nrepo=$(cd "$top/dm-wow" && ls dm-wow-*.[ch] dm-wow.h | wc -l)
check install_module_sources "$nsrc of $nrepo" [ "$nsrc" -eq "$nrepo" ]
check install_no_build_leftovers "" sh -c "! printf '%s\n' '$list' | grep -q -e '\.mod' -e '\.o\$' -e '\.ko\$'"
check install_no_kunit_sources "" [ ! -e "$r/usr/src/dm-wow-$V/tests" ]
check install_dkms_conf_version "$(grep PACKAGE_VERSION "$r/usr/src/dm-wow-$V/dkms.conf" 2>&1)" \
	grep -qx "PACKAGE_VERSION=\"$V\"" "$r/usr/src/dm-wow-$V/dkms.conf"
check install_dkms_conf_no_werror "" \
	sh -c "! grep -q -e Werror -e WOW_WERROR=1 '$r/usr/src/dm-wow-$V/dkms.conf'"
check install_wowtab_version "$("$r/usr/local/sbin/wowtab" --version 2>&1)" \
	[ "$("$r/usr/local/sbin/wowtab" --version)" = "wowtab $V" ]
check install_probe_version "$("$r/usr/lib/udev/wow-probe" --version 2>&1)" \
	[ "$("$r/usr/lib/udev/wow-probe" --version)" = "wow-probe $V" ]
check install_module_version_line "" \
	grep -q '^MODULE_VERSION(DM_WOW_VERSION);' "$r/usr/src/dm-wow-$V/dm-wow-target.c"
check install_executables "" test -x "$r/usr/local/sbin/wowctl" -a \
	-x "$r/usr/local/sbin/wowtab" -a -x "$r/usr/lib/udev/wow-probe" -a \
	-x "$r/usr/lib/systemd/system-generators/dm-wow-generator"
check install_rules_name_installed_paths "$(grep IMPORT "$r/usr/lib/udev/rules.d/61-dm-wow.rules")" \
	sh -c "grep -q 'IMPORT{program}=\"/usr/local/sbin/wowtab udev-origin\"' '$r/usr/lib/udev/rules.d/61-dm-wow.rules' &&
	       grep -q 'IMPORT{program}=\"/usr/lib/udev/wow-probe \$devnode\"' '$r/usr/lib/udev/rules.d/61-dm-wow.rules'"
check install_no_unsubstituted_paths "" \
	sh -c "! grep -l '@[A-Z]*@' '$r/usr/local/sbin/wowtab' '$r/usr/lib/udev/rules.d/61-dm-wow.rules' '$r/usr/lib/systemd/system-generators/dm-wow-generator'"

# the generator, as installed, names the installed wowtab in its units
mkdir "$D/gen"
printf 'g /dev/disk/by-id/o /dev/disk/by-id/c\n' >"$D/tab"
WOWTAB=$D/tab "$r/usr/lib/systemd/system-generators/dm-wow-generator" "$D/gen" "$D/gen" "$D/gen" || true
check install_generator_execstart "$(cat "$D/gen/dm-wow@g.service" 2>&1 | grep Exec)" \
	grep -qx 'ExecStart=/usr/local/sbin/wowtab start g /dev/disk/by-id/o /dev/disk/by-id/c -' "$D/gen/dm-wow@g.service"

# PREFIX=/usr: the tools and their paths move, systemd and udev do not
list=$(inst /usr) || list=
check install_prefix_usr "$list" sh -c "printf '%s\n' '$list' | grep -qx ./usr/sbin/wowtab &&
	printf '%s\n' '$list' | grep -qx ./usr/share/man/man5/wowtab.5 &&
	! printf '%s\n' '$list' | grep -q /usr/local/"
check install_prefix_usr_rules "" \
	grep -q '/usr/sbin/wowtab udev-origin' "$D/root_usr/usr/lib/udev/rules.d/61-dm-wow.rules"

# uninstall leaves nothing (but directories)
make -s -C "$top" uninstall DESTDIR="$r" PREFIX=/usr/local >"$D/log" 2>&1 || cat "$D/log"
left=$(cd "$r" && find . \( -type f -o -type l \) | sort)
check uninstall_removes_everything "left: $left" [ -z "$left" ]

# the tree's own copies (the tests' and the VM's) keep the default paths
check install_leaves_tree_files_alone "" \
	sh -c "! [ -e '$top/userspace/wowtab' ] || grep -q \"^SELF='/usr/local/sbin/wowtab'\" '$top/userspace/wowtab'"
exit $failed
