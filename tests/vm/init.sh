#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the dm-wow test VM; tests/vm/wowvm.py copies it to /init of the
# per-boot initramfs overlay, together with /wow/plan:
#   WOW_MODE       run | shell
#   WOW_KV         kernel version
#   WOW_BOOT       1, 2, ... (multi-boot scenarios)
#   WOW_SCENARIOS  names to run, in order (/wow/scenarios/NAME.sh)
#   WOW_ECHO       non-empty: copy scenario output to the console too
#   WOW_PROFILE    quick | full, exported to the scenarios
#   WOW_HUNG_TASK_SECS  hung task timeout (default 90)
#   WOW_KMEMLEAK   non-empty: kmemleak scan after each scenario; leaks whose
#                  record mentions wow go to the console as
#                  "wowvm: kmemleak: ..." (a failure), all of them to
#                  /results/NAME.kmemleak
#   WOW_FLAVOUR    debian | debug | custom (information)
#   WOW_EXPORT     names of further plan variables to export (wowvm --env)
#
# Markers written to /dev/kmsg (so they sit in order among kernel messages
# on the console) tell the host what runs when:
#   === wowvm: ready | === scenario: NAME | === end: NAME rc=N |
#   === reboot: NAME | === wowvm: done
# Results go to the 9p share at /results: NAME.out (output), NAME.rc.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=${TERM:-linux}
# No udev in the guest: libdevmapper makes the /dev/mapper nodes itself.
export DM_DISABLE_UDEV=1

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm /tmp /results /run
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
hostname wowvm

kmsg() { echo "$*" > /dev/kmsg; }

halt_now() {
	sync
	umount /results 2>/dev/null
	poweroff -f
	echo o > /proc/sysrq-trigger
	sleep 30
}

. /wow/plan
KV=${WOW_KV:-$(uname -r)}
export WOW_PROFILE=${WOW_PROFILE:-quick}
for v in $WOW_EXPORT; do
	export "$v"
done

echo 1 > /proc/sys/kernel/sysrq
echo "${WOW_HUNG_TASK_SECS:-90}" > /proc/sys/kernel/hung_task_timeout_secs 2>/dev/null
echo 7 > /proc/sys/kernel/printk 2>/dev/null

boot_errors=""
boot_error() {
	kmsg "wowvm: boot error: $*"
	boot_errors="$boot_errors$*; "
}

for m in virtio_pci virtio_blk 9pnet_virtio 9p dm-mod; do
	modprobe "$m" || boot_error "modprobe $m failed"
done

# The disks: vda = origin, vdb = cache, vdc... = extra (QEMU serials say so).
i=0
while [ ! -b /dev/vdb ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
for d in vda:origin vdb:cache; do
	serial=$(cat "/sys/block/${d%%:*}/serial" 2>/dev/null)
	[ "$serial" = "${d#*:}" ] ||
		boot_error "/dev/${d%%:*} has serial '$serial', wanted '${d#*:}'"
done

mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 results /results ||
	boot_error "cannot mount the 9p results share"

WOW_MODULE=absent
modmsg=""
if [ -f "/lib/modules/$KV/extra/dm-wow.ko" ]; then
	depmod -a "$KV" 2>&1
	if modmsg=$(modprobe dm-wow 2>&1); then
		WOW_MODULE=loaded
	else
		WOW_MODULE=failed
		boot_error "modprobe dm-wow failed: $modmsg"
	fi
fi
export WOW_MODULE

kmsg "=== wowvm: ready (boot $WOW_BOOT, dm-wow $WOW_MODULE)"

KMEMLEAK=/sys/kernel/debug/kmemleak
kmemleak_start() {
	[ -n "$WOW_KMEMLEAK" ] || return 0
	# what leaked before this scenario is not its fault
	echo clear > $KMEMLEAK 2>/dev/null
}

kmemleak_check() {
	[ -n "$WOW_KMEMLEAK" ] || return 0
	if ! [ -w $KMEMLEAK ]; then
		kmsg "wowvm: kmemleak is not available (disabled at boot?)"
		return 0
	fi
	name=$1
	# kmemleak does not report objects younger than 5 s
	sleep 6
	echo scan > $KMEMLEAK
	cat $KMEMLEAK > /tmp/kmemleak.txt
	[ -s /tmp/kmemleak.txt ] || return 0
	cp /tmp/kmemleak.txt "/results/$name.kmemleak"
	# One record per "unreferenced object" line; print (at most 40 lines
	# of) the records that mention wow.
	awk '/^unreferenced object/ { if (rec ~ /wow/) print rec; rec = "" }
	     { rec = rec $0 "\n" }
	     END { if (rec ~ /wow/) print rec }' /tmp/kmemleak.txt |
		grep -v '^$' | head -n 40 |
		while IFS= read -r l; do
			kmsg "wowvm: kmemleak: $l"
		done
	echo clear > $KMEMLEAK
}

run_one() {
	name=$1
	out=/results/$name.out
	script=/wow/scenarios/$name.sh
	[ "${WOW_BOOT:-1}" -gt 1 ] && echo "--- boot $WOW_BOOT" >> "$out"
	kmsg "=== scenario: $name"
	dmesg -c > /dev/null
	kmemleak_start
	mkdir -p "/tmp/wow-$name"
	cd "/tmp/wow-$name" || exit 1
	set -- env RESULTS=/results WOW_NAME="$name" WOW_BOOT="$WOW_BOOT" \
		WOW_LIB=/wow/lib.sh ORIGIN=/dev/vda CACHE=/dev/vdb \
		WOW_PROFILE="$WOW_PROFILE" \
		sh "$script"
	if [ -n "$boot_errors" ]; then
		echo "FAILED: VM setup: $boot_errors" >> "$out"
		rc=1
	elif [ -n "$WOW_ECHO" ]; then
		rm -f /tmp/wow-rc
		{ "$@" < /dev/null 2>&1; echo $? > /tmp/wow-rc; } |
			while IFS= read -r l; do
				echo "$l" >> "$out"
				echo "@@| $l" > /dev/console
			done
		rc=$(cat /tmp/wow-rc 2>/dev/null || echo 125)
	else
		"$@" < /dev/null >> "$out" 2>&1
		rc=$?
	fi
	cd /
	if [ -e "/results/$name.reboot" ] && [ "$rc" -ne 0 ]; then
		# It asked for another boot, then failed before the power cut
		# (wow_power_cut touches the marker first): booting again would
		# judge it by the later boot alone and lose this failure.
		rm -f "/results/$name.reboot"
		echo "wowvm: boot ${WOW_BOOT:-1} exited $rc after asking for another boot: not booted again" >> "$out"
	fi
	if [ -e "/results/$name.reboot" ]; then
		# The scenario wants another boot but did not cut the power.
		kmsg "=== reboot: $name"
		dmsetup remove_all > /dev/null 2>&1
		halt_now
	fi
	# Leave nothing behind for the next scenario in this boot.
	if [ -n "$(dmsetup ls 2>/dev/null | grep -v 'No devices found')" ]; then
		echo "wowvm: removing leftover dm devices:" >> "$out"
		dmsetup ls >> "$out" 2>&1
		dmsetup remove_all >> "$out" 2>&1
	fi
	kmemleak_check "$name"
	echo "$rc" > "/results/$name.rc"
	sync
	kmsg "=== end: $name rc=$rc"
}

case "$WOW_MODE" in
run)
	for s in $WOW_SCENARIOS; do
		run_one "$s"
	done
	kmsg "=== wowvm: done"
	;;
shell)
	cat > /root/.profile <<-'EOF'
	export WOW_LIB=/wow/lib.sh RESULTS=/results ORIGIN=/dev/vda CACHE=/dev/vdb
	export WOW_BOOT=1 WOW_NAME=shell WOW_INTERACTIVE=1
	. /wow/lib.sh
	PS1='wowvm:$PWD# '
	EOF
	cat <<-EOF

	dm-wow test VM ($KV), dm-wow: $WOW_MODULE
	  /dev/vda = origin, /dev/vdb = cache; /results = host results dir (9p)
	  helpers from /wow/lib.sh are loaded (wow_create, wow_remove, ...);
	  scenarios: /wow/scenarios; run one: sh /wow/scenarios/NAME.sh
	  exit (or Ctrl-D) powers the VM off; Ctrl-A x kills QEMU.
	${boot_errors:+  boot errors: $boot_errors}
	EOF
	cd /root
	setsid cttyhack sh -l
	;;
*)
	kmsg "wowvm: unknown mode '$WOW_MODE'"
	;;
esac
halt_now
