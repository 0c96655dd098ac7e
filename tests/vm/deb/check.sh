#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of `make test-vm-deb` (tests/vm/deb-vm.py): runs as
# wow-check.service once local file systems are mounted, in a VM whose PID
# 1 is systemd, whose root is the host's / under an overlay kept on a disk
# from boot to boot, and which has the packages `make deb` built in
# /root/debs/old and /root/debs/new (the new ones a later version of
# module and tools: an upgrade DKMS must carry out).
#   boot 1  apt installs the old packages (DKMS builds dm-wow.ko for the
#           running kernel); /etc/wowtab gets a line
#   boot 2  the packaged generator assembled the device at boot; data is
#           written; wowctl status --prometheus (promtool, when the host has
#           it); apt upgrades to the new packages (DKMS replaces the module;
#           the device in use keeps working)
#   boot 3  the device is assembled with the new module, the data is there;
#           the device is stopped and apt purges both packages: nothing of
#           theirs is left (sources, DKMS tree, module, tools, generator)
# Writes one line per case to /results/boot$WOW_BOOT.results, "PASS NAME" or
# "FAIL NAME why", the cases' output to /results/boot$WOW_BOOT.log, then
# "done" to /results/boot$WOW_BOOT.done.  The unit powers off after it.
set -eu
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export DEBIAN_FRONTEND=noninteractive

. /etc/wowtest.conf	# WOW_BOOT, OLD, NEW (versions), PROMTOOL

NAME=slow
UNIT=dm-wow@$NAME.service
KV=$(uname -r)
STATE=/var/lib/wowtest

mkdir -p /results "$STATE"
mount -t 9p -o trans=virtio,version=9p2000.L results /results
RES=/results/boot$WOW_BOOT.results
LOG=/results/boot$WOW_BOOT.log
: >"$RES"
: >"$LOG"

say() { echo "wowtest: $*" >/dev/kmsg; }

# check CASE FUNCTION: run it, its output to $LOG, its verdict to $RES
check() {
	c="boot$WOW_BOOT-$1"
	shift
	say "start $c"
	if out=$("$@" 2>&1); then
		echo "PASS $c" >>"$RES"
		say "PASS $c"
	else
		why=$(printf '%s\n' "$out" | sed -n 's/^why: //p' | tail -n 1)
		echo "FAIL $c ${why:-failed}" >>"$RES"
		say "FAIL $c ${why:-}"
	fi
	printf '=== %s\n%s\n' "$c" "$out" >>"$LOG"
}

no() { echo "why: $*"; return 1; }

pkg_version() {	# the installed version of $1, or nothing
	dpkg-query -W -f='${db:Status-Abbrev} ${Version}\n' "$1" 2>/dev/null |
		awk '$1 == "ii" { print $2 }'
}

# beat CMD...: run it with a line on the console every 30 s (DKMS builds
# for minutes under TCG; the host takes a silent console for a hung VM)
beat() {
	"$@" &
	pid=$!
	n=0
	while kill -0 $pid 2>/dev/null; do
		sleep 1
		n=$((n + 1))
		[ $((n % 30)) -ne 0 ] || say "still at $1 ($n s)"
	done
	wait $pid
}

apt_install() {	# apt_install DIR: both packages of DIR (the VM has no network)
	beat apt-get install -y -q \
		-o Dpkg::Options::=--force-confnew \
		"$1"/dm-wow-dkms_*_all.deb "$1"/wowctl_*_amd64.deb ||
		no "apt-get install of $1 failed"
}

# ---- boot 1: install ---------------------------------------------------------

c_prepare() {
	# DKMS builds for the running kernel and the newest one with
	# headers: the host's other kernels lose their build link here (one
	# build under TCG is minutes); man-db's trigger would index every
	# manual page over 9p
	for b in /lib/modules/*/build; do
		[ "$b" = "/lib/modules/$KV/build" ] || rm -f "$b"
	done
	[ -e "/lib/modules/$KV/build/Makefile" ] || no "no headers for $KV"
	rm -f /var/lib/man-db/auto-update
	if dpkg-query -W dm-wow-dkms wowctl 2>/dev/null | grep -q .; then
		dpkg-query -W dm-wow-dkms wowctl
		[ -z "$(pkg_version dm-wow-dkms)$(pkg_version wowctl)" ] ||
			no "a package is installed already"
	fi
	true
}

c_apt_install() {
	t0=$(cut -d' ' -f1 /proc/uptime)
	apt_install /root/debs/old
	echo "apt-get install took $(awk "BEGIN { print $(cut -d' ' -f1 /proc/uptime) - $t0 }") s"
	[ "$(pkg_version dm-wow-dkms)" = "$OLD" ] ||
		no "dm-wow-dkms is '$(pkg_version dm-wow-dkms)', not $OLD"
	[ "$(pkg_version wowctl)" = "$OLD" ] ||
		no "wowctl is '$(pkg_version wowctl)', not $OLD"
}

# dkms_installed VERSION: DKMS built and installed it for $KV
dkms_installed() {
	dkms status -m dm-wow
	dkms status -m dm-wow -v "$1" -k "$KV" | grep -q ": installed" ||
		no "dkms status has no dm-wow/$1 installed for $KV"
	f=/lib/modules/$KV/updates/dkms/dm-wow.ko
	[ -f "$f" ] || [ -f "$f.xz" ] || no "no $f"
	v=$(modinfo -k "$KV" -F version dm-wow) || no "modinfo dm-wow failed"
	[ "$v" = "$1" ] || no "modinfo dm-wow says version $v, not $1"
	modinfo -k "$KV" -F filename dm-wow
}

c_dkms_built() { dkms_installed "$OLD"; }

c_files() {
	for f in /usr/sbin/wowctl /usr/sbin/wowtab /usr/lib/udev/wow-probe \
		/usr/lib/udev/rules.d/61-dm-wow.rules \
		/usr/lib/systemd/system-generators/dm-wow-generator \
		/usr/share/man/man8/wowctl.8.gz /usr/share/man/man5/wowtab.5.gz \
		/usr/share/doc/wowctl/examples/dm-wow-metrics.timer \
		"/usr/src/dm-wow-$OLD/dkms.conf"; do
		[ -e "$f" ] || no "no $f"
	done
	[ "$(wowtab --version)" = "wowtab $OLD" ] ||
		no "wowtab --version: $(wowtab --version)"
}

c_wowtab() {
	printf '%s\n' "# written by tests/vm/deb/check.sh" \
		"$NAME /dev/disk/by-id/virtio-origin /dev/disk/by-id/virtio-cache -" \
		>/etc/wowtab
	wowtab check || no "wowtab check refused /etc/wowtab"
}

# ---- boot 2: assembled by the packaged generator; upgrade --------------------

c_assembled() {
	systemctl status --no-pager "$UNIT" || true
	[ "$(systemctl is-active "$UNIT")" = active ] || no "$UNIT is not active"
	fp=$(systemctl show -P FragmentPath "$UNIT")
	case $fp in
	/run/systemd/generator*) ;;
	*) no "$UNIT comes from '$fp', not the generator" ;;
	esac
	dmsetup table "$NAME" | grep -q " wow " || no "$NAME is no wow device"
	[ -b "/dev/mapper/$NAME" ] || no "no /dev/mapper/$NAME"
}

c_module_is() {	# the loaded module's version
	v=$(cat /sys/module/dm_wow/version 2>/dev/null) || no "dm_wow is not loaded"
	[ "$v" = "$1" ] || no "the loaded dm_wow is $v, not $1"
	echo "dm_wow $v loaded"
}

c_write() {
	dd if=/dev/urandom of="$STATE/data" bs=1M count=16 status=none
	dd if="$STATE/data" of="/dev/mapper/$NAME" bs=1M oflag=direct \
		status=none || no "cannot write to $NAME"
	sha256sum <"$STATE/data" >"$STATE/sum"
	wowctl status "$NAME"
}

c_read() {
	[ -s "$STATE/sum" ] || no "boot 2 left no checksum"
	sum=$(dd if="/dev/mapper/$NAME" bs=1M count=16 iflag=direct \
		status=none | sha256sum)
	[ "$sum" = "$(cat "$STATE/sum")" ] || no "the data read back differs"
}

c_prometheus() {
	wowctl status --prometheus "$NAME" >"$STATE/metrics" ||
		no "wowctl status --prometheus failed"
	cat "$STATE/metrics"
	grep -qx "dm_wow_state{device=\"$NAME\",state=\"ok\"} 1" "$STATE/metrics" ||
		no "no ok state sample"
	grep -q "^dm_wow_dirty_blocks{device=\"$NAME\"} [0-9]" "$STATE/metrics" ||
		no "no dm_wow_dirty_blocks sample"
	grep -q "^dm_wow_write_misses_total{device=\"$NAME\"} [1-9]" "$STATE/metrics" ||
		no "no write misses counted after the writes"
	if [ -n "$PROMTOOL" ] && [ -x "$PROMTOOL" ]; then
		"$PROMTOOL" check metrics <"$STATE/metrics" ||
			no "promtool check metrics refused it"
		echo "promtool check metrics: ok"
	fi
}

c_apt_upgrade() {
	t0=$(cut -d' ' -f1 /proc/uptime)
	apt_install /root/debs/new
	echo "apt-get install (upgrade) took $(awk "BEGIN { print $(cut -d' ' -f1 /proc/uptime) - $t0 }") s"
	[ "$(pkg_version dm-wow-dkms)" = "$NEW" ] ||
		no "dm-wow-dkms is '$(pkg_version dm-wow-dkms)', not $NEW"
	[ "$(pkg_version wowctl)" = "$NEW" ] ||
		no "wowctl is '$(pkg_version wowctl)', not $NEW"
	[ "$(wowtab --version)" = "wowtab $NEW" ] ||
		no "wowtab --version: $(wowtab --version)"
}

c_dkms_upgraded() {
	dkms_installed "$NEW"
	if dkms status -m dm-wow -v "$OLD" | grep -q .; then
		no "dm-wow/$OLD is still in DKMS's tree"
	fi
	[ ! -e "/usr/src/dm-wow-$OLD" ] || no "/usr/src/dm-wow-$OLD is left"
}

# ---- boot 3: the new module; purge -------------------------------------------

c_purge() {
	systemctl stop "$UNIT" || no "cannot stop $UNIT"
	! dmsetup info "$NAME" >/dev/null 2>&1 || no "$NAME is still there"
	beat apt-get purge -y -q dm-wow-dkms wowctl || no "apt-get purge failed"
	for p in dm-wow-dkms wowctl; do
		s=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
		case $s in
		"" | "un "* | "pn "*) ;;
		*) no "$p is left as '$s'" ;;
		esac
	done
}

c_purged() {
	for f in /usr/sbin/wowctl /usr/sbin/wowtab /usr/lib/udev/wow-probe \
		/usr/lib/udev/rules.d/61-dm-wow.rules \
		/usr/lib/systemd/system-generators/dm-wow-generator \
		/usr/share/doc/wowctl "/usr/src/dm-wow-$NEW" /var/lib/dkms/dm-wow \
		"/lib/modules/$KV/updates/dkms/dm-wow.ko"; do
		[ ! -e "$f" ] || no "$f is left"
	done
	if dkms status -m dm-wow | grep -q .; then
		no "dkms status still lists dm-wow"
	fi
	if modinfo -k "$KV" dm-wow >/dev/null 2>&1; then
		no "modinfo still finds a dm-wow module for $KV"
	fi
}

case $WOW_BOOT in
1)
	check prepare c_prepare
	check apt-install c_apt_install
	check dkms-built c_dkms_built
	check files-installed c_files
	check wowtab-line c_wowtab
	;;
2)
	check assembled-by-wowtab c_assembled
	check module-old c_module_is "$OLD"
	check write c_write
	check prometheus c_prometheus
	check apt-upgrade c_apt_upgrade
	check dkms-upgraded c_dkms_upgraded
	check still-reads c_read
	;;
3)
	check assembled-by-wowtab c_assembled
	check module-new c_module_is "$NEW"
	check data-kept c_read
	check apt-purge c_purge
	check nothing-left c_purged
	;;
esac
echo done >"/results/boot$WOW_BOOT.done"
sync
