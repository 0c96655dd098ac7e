#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of `make test-vm-systemd` (tests/vm/systemd-vm.py): runs
# as wow-check.service, after local-fs.target, in a VM whose PID 1 is
# systemd and whose /etc/wowtab lists
#   slow /dev/disk/by-id/virtio-origin /dev/disk/by-id/virtio-cache OPTIONS
# (OPTIONS slow destage down: see systemd-vm.py) and whose /etc/fstab
# mounts UUID=$FS_UUID (the origin's ext4, made on the host) on /mnt/wow.
# Every boot checks that systemd ran the generator and started
# dm-wow@slow.service before local-fs-pre.target, that the table is
# right, that the fstab mount is on /dev/mapper/slow and that the origin is
# hidden from udev's by-uuid lookups and cannot be mounted.  Boot 1 writes
# files through the mount and keeps the device busy until it is removed at
# shutdown (wow-busy.service), so they are still dirty in the cache then;
# boot 2 reads them back.  Boot 3 has no cache disk: the unit fails, the
# fstab mount times out, and nothing mounts the origin.
#
# Writes one line per case to /results/boot$WOW_BOOT.results, "PASS NAME" or
# "FAIL NAME why", the cases' output to /results/boot$WOW_BOOT.log, then
# "done" to /results/boot$WOW_BOOT.done.  The unit powers off after it.
set -eu
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

. /etc/wowtest.conf	# WOW_BOOT, FS_UUID, TOKEN, BREAK, TABLE_OPTIONS

NAME=slow
MNT=/mnt/wow
OLINK=/dev/disk/by-id/virtio-origin
CLINK=/dev/disk/by-id/virtio-cache
UNIT=dm-wow@$NAME.service
MOUNT_UNIT=mnt-wow.mount

mkdir -p /results
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

# in a check: `no "why"` prints the reason and fails.  A check runs in a
# command substitution, where set -e still holds (dash): a command that
# fails there ends the check as failed, without a reason, so commands that
# only show something end in `|| true`.
no() { echo "why: $*"; return 1; }

prop() {	# prop DEV KEY: the udev property's value
	udevadm info --query=property --name="$1" 2>/dev/null |
		sed -n "s/^$2=//p"
}

devno() {	# devno PATH: MAJ:MIN of the block device the path leads to
	cat "/sys/class/block/$(basename "$(readlink -f "$1")")/dev"
}

ts() {		# ts UNIT: when it became active (monotonic usec), 0 if never
	systemctl show -P ActiveEnterTimestampMonotonic "$1"
}

# ---- the cases ---------------------------------------------------------------

c_generator() {
	fp=$(systemctl show -P FragmentPath "$UNIT")
	sp=$(systemctl show -P SourcePath "$UNIT")
	echo "FragmentPath=$fp SourcePath=$sp"
	[ "$fp" = "/run/systemd/generator/$UNIT" ] ||
		no "$UNIT does not come from the generator (FragmentPath=$fp)"
	[ "$sp" = /etc/wowtab ] || no "SourcePath=$sp, not /etc/wowtab"
	cat "$fp"
	ls -l /run/systemd/generator/local-fs.target.requires/ || true
	[ -L "/run/systemd/generator/local-fs.target.requires/$UNIT" ] ||
		no "local-fs.target does not require $UNIT"
	st=$(systemctl show -P ActiveState "$UNIT")
	res=$(systemctl show -P Result "$UNIT")
	echo "ActiveState=$st Result=$res"
	journalctl -b --no-pager -o short-monotonic -u "$UNIT" || true
	[ "$st" = active ] && [ "$res" = success ] ||
		no "$UNIT is $st ($res)"
}

c_order() {
	w=$(ts "$UNIT")
	pre=$(ts local-fs-pre.target)
	m=$(ts "$MOUNT_UNIT")
	lf=$(ts local-fs.target)
	echo "active since (monotonic usec): $UNIT $w, local-fs-pre.target $pre, $MOUNT_UNIT $m, local-fs.target $lf"
	systemctl show -p After -p Before -p BindsTo -p RequiredBy "$UNIT"
	systemctl show -p What -p After -p Requires -p BindsTo "$MOUNT_UNIT"
	systemd-analyze critical-chain "$MOUNT_UNIT" 2>&1 || true
	[ "$w" -gt 0 ] || no "$UNIT never became active"
	[ "$pre" -gt 0 ] && [ "$m" -gt 0 ] && [ "$lf" -gt 0 ] ||
		no "local-fs-pre.target, $MOUNT_UNIT or local-fs.target never became active"
	[ "$w" -le "$pre" ] ||
		no "$UNIT became active after local-fs-pre.target ($w > $pre)"
	# bound to the by-id .device units, and started once both were there
	start=$(systemctl show -P InactiveExitTimestampMonotonic "$UNIT")
	for l in "$OLINK" "$CLINK"; do
		d=$(systemd-escape --path --suffix=device "$l")
		bb=$(systemctl show -P BoundBy "$d")
		dt=$(ts "$d")
		echo "$d: active since $dt, BoundBy=$bb; $UNIT started at $start"
		case " $bb " in
		*" $UNIT "*) ;;
		*) no "$UNIT does not bind to $d (BoundBy=$bb)" ;;
		esac
		[ "$dt" -gt 0 ] && [ "$dt" -le "$start" ] ||
			no "$d became active at $dt, $UNIT started at $start"
	done
	[ "$pre" -le "$m" ] && [ "$m" -le "$lf" ] ||
		no "mount order: local-fs-pre $pre, mount $m, local-fs $lf"
}

c_table() {
	[ -b "/dev/mapper/$NAME" ] || no "no /dev/mapper/$NAME"
	t=$(dmsetup table "$NAME") || no "no table for $NAME"
	echo "table: $t"
	dmsetup status "$NAME"
	# shellcheck disable=SC2086
	set -- $t
	o=$(devno "$OLINK") c=$(devno "$CLINK")
	want=$(($(blockdev --getsz "$OLINK") / 8 * 8))
	[ "$1 $2 $3" = "0 $want wow" ] || no "table '$t': want 0 $want wow"
	[ "${t#0 * wow }" = "$o $c $TABLE_OPTIONS" ] ||
		no "table '$t': want origin $o, cache $c, options $TABLE_OPTIONS"
	dmsetup info -c -o name,major,minor,open,attr "$NAME"
}

# the cache device as udev's rules and wow-probe see it: in boot 2 as
# coldplug found it; in boot 1 it was blank then (dm-wow formatted it at the
# first load, which makes no uevent), so after a change event
c_cache_tagged() {
	if [ "$WOW_BOOT" = 1 ]; then
		udevadm trigger --action=change --settle "$CLINK" ||
			no "udevadm trigger change $CLINK"
	fi
	udevadm info --query=property --name="$CLINK" |
		grep -e '^ID_FS' -e '^WOW_' || true
	ft=$(prop "$CLINK" ID_FS_TYPE)
	[ "$ft" = dm_wow_cache ] || no "the cache's ID_FS_TYPE is '$ft'"
	[ "$(prop "$CLINK" WOW_CACHE_SB)" = valid ] || no "no WOW_CACHE_SB=valid"
}

c_mount() {
	findmnt "$MNT" || no "nothing mounted on $MNT"
	src=$(findmnt -n -o SOURCE "$MNT")
	mm=$(findmnt -n -o MAJ:MIN "$MNT" | tr -d ' ')
	dm=$(devno "/dev/mapper/$NAME")
	o=$(devno "$OLINK")
	# What= as systemd-fstab-generator wrote it (systemctl show gives
	# the source of the mount now)
	fp=$(systemctl show -P FragmentPath "$MOUNT_UNIT")
	what=$(sed -n 's/^What=//p' "$fp")
	echo "$MNT: SOURCE=$src MAJ:MIN=$mm; $NAME is $dm, the origin $o; $fp: What=$what"
	[ "$what" = "/dev/disk/by-uuid/$FS_UUID" ] ||
		no "$MOUNT_UNIT is not fstab's UUID=$FS_UUID ($fp: What=$what)"
	[ "$mm" = "$dm" ] || no "$MNT is on $src ($mm), not /dev/mapper/$NAME ($dm)"
	[ "$src" = "/dev/mapper/$NAME" ] || no "findmnt SOURCE is $src"
	# no mount anywhere of the origin (field 3 of mountinfo: MAJ:MIN)
	on=$(awk -v d="$o" '$3 == d { print $5 }' /proc/self/mountinfo)
	[ -z "$on" ] || no "the origin ($o) is mounted on $on"
}

c_origin_hidden() {
	udevadm info --query=property --name="$OLINK" |
		grep -e '^DEVNAME' -e '^ID_FS' -e '^WOW_' -e '^DEVLINKS' -e '^UDISKS' ||
		true
	ls -l /dev/disk/by-uuid/ || true
	lsblk -o NAME,MAJ:MIN,FSTYPE,UUID,MOUNTPOINTS || true
	ft=$(prop "$OLINK" ID_FS_TYPE)
	[ "$ft" = dm_wow_origin ] || no "the origin's ID_FS_TYPE is '$ft'"
	[ "$(prop "$OLINK" WOW_ORIGIN_OF)" = "$NAME" ] || no "no WOW_ORIGIN_OF=$NAME"
	[ -z "$(prop "$OLINK" ID_FS_UUID)" ] || no "the origin has ID_FS_UUID"
	[ "$(prop "$OLINK" UDISKS_IGNORE)" = 1 ] || no "no UDISKS_IGNORE=1"
	dm=$(readlink -f "/dev/mapper/$NAME")
	l=$(readlink -f "/dev/disk/by-uuid/$FS_UUID") ||
		no "no /dev/disk/by-uuid/$FS_UUID"
	[ "$l" = "$dm" ] || no "/dev/disk/by-uuid/$FS_UUID leads to $l, not $dm"
	# which devices the udev database gives the UUID
	owners=$(udevadm info --export-db | awk -v u="$FS_UUID" '
		/^P: / { dev = "" }
		/^N: / { dev = "/dev/" substr($0, 4) }
		$0 == "E: ID_FS_UUID=" u { print dev }')
	echo "udev database: ID_FS_UUID=$FS_UUID on: $owners"
	[ "$owners" = "$dm" ] ||
		no "the udev database has ID_FS_UUID=$FS_UUID on: $(echo $owners)"
	b=$(blkid -U "$FS_UUID") || no "blkid -U $FS_UUID finds nothing"
	echo "blkid -U $FS_UUID: $b"
	[ "$(readlink -f "$b")" = "$dm" ] || no "blkid -U $FS_UUID gives $b, not $dm"
	f=$(findfs "UUID=$FS_UUID") || no "findfs finds nothing"
	[ "$(readlink -f "$f")" = "$dm" ] || no "findfs UUID=$FS_UUID gives $f, not $dm"
	ls=$(lsblk -dno FSTYPE "$OLINK")
	[ "$ls" = dm_wow_origin ] || no "lsblk shows the origin as '$ls'"
}

c_origin_busy() {
	mkdir -p /mnt/origin
	for how in "$OLINK" "UUID=$FS_UUID"; do
		# by UUID must find the dm-wow device, which is mounted already:
		# mount -t ext4 of it elsewhere would work, so only ask which
		if [ "${how%%=*}" = UUID ]; then
			d=$(mount --fake -v -o ro "$how" /mnt/origin 2>&1) || true
			echo "mount --fake $how: $d"
			case $d in
			*"$(readlink -f "$OLINK")"* | *"$OLINK"*) no "mount $how would take the origin: $d" ;;
			esac
			continue
		fi
		if msg=$(mount -t ext4 -o ro "$how" /mnt/origin 2>&1); then
			umount /mnt/origin
			no "the origin could be mounted ($how) while $NAME is active"
		fi
		echo "mount -o ro $how: $msg"
		case $msg in
		*busy*) ;;
		*) no "mount of the origin failed, not as busy: $msg" ;;
		esac
	done
}

# boot 1: keep the device busy (an idle dm-wow destages everything within
# a second) until its ExecStop, then write through the mount
c_write() {
	# more than the gap between wow-busy's stop and dm-wow's suspend at
	# shutdown (about a second) can destage once the device is idle; made
	# in tmpfs first, as urandom is slow, then copied in a few seconds
	head -c 134217728 /dev/urandom >/run/wowtest-data
	systemctl start wow-busy.service || no "cannot start wow-busy.service"
	sleep 2
	systemctl is-active wow-busy.service || no "wow-busy.service is not running"
	echo "$TOKEN" >"$MNT/token"
	cp /run/wowtest-data "$MNT/data"
	rm /run/wowtest-data
	(cd "$MNT" && sha256sum data >data.sha256)
	sync -f "$MNT/token" "$MNT/data" "$MNT/data.sha256" || no "sync failed"
	sync
	cat "$MNT/data.sha256"
	s=$(dmsetup status "$NAME")
	echo "status after the writes: $s"
	# shellcheck disable=SC2086
	set -- $s
	echo "dirty blocks: $9"
	[ "$9" -gt 0 ] || no "nothing dirty after the writes (destaged already?): $s"
}

# boot 1, after c_write: the origin by itself, read without mounting, has
# not got the new files (they are dirty in the cache): what must never be
# mounted alone
c_origin_stale() {
	d=$(debugfs -R 'cat /token' "$OLINK" 2>&1) || true
	echo "debugfs -R 'cat /token' $OLINK: $d"
	case $d in
	*"$TOKEN"*) no "the origin by itself has the token already (destaged)" ;;
	esac
	echo "status: $(dmsetup status "$NAME")"
}

# boot 2: what boot 1 wrote, through the device assembled at boot
c_data() {
	ls -l "$MNT"
	t=$(cat "$MNT/token") || no "no $MNT/token"
	[ "$t" = "$TOKEN" ] || no "token is '$t', not '$TOKEN'"
	(cd "$MNT" && sha256sum -c data.sha256) || no "data does not match its sha256"
	echo "status: $(dmsetup status "$NAME")"
}

# boot 3, without the cache disk: the unit cannot start, and the file
# system fstab names by UUID is mounted from nowhere, the origin least of all
c_nocache() {
	st=$(systemctl show -P ActiveState "$UNIT")
	echo "$UNIT: $st ($(systemctl show -P Result "$UNIT"))"
	systemctl --failed --no-pager || true
	journalctl -b --no-pager -o short-monotonic -u "$UNIT" -u "$MOUNT_UNIT" || true
	[ ! -e "$CLINK" ] || no "$CLINK exists: the cache disk is there"
	[ "$st" != active ] || no "$UNIT is active without its cache"
	! dmsetup info "$NAME" >/dev/null 2>&1 || no "$NAME exists"
	findmnt "$MNT" && no "something is mounted on $MNT"
	o=$(devno "$OLINK")
	on=$(awk -v d="$o" '$3 == d { print $5 }' /proc/self/mountinfo)
	[ -z "$on" ] || no "the origin ($o) is mounted on $on"
	ls -l /dev/disk/by-uuid/ 2>&1 || true
	[ ! -e "/dev/disk/by-uuid/$FS_UUID" ] ||
		no "/dev/disk/by-uuid/$FS_UUID exists: $(ls -l "/dev/disk/by-uuid/$FS_UUID")"
	ft=$(prop "$OLINK" ID_FS_TYPE)
	[ "$ft" = dm_wow_origin ] || no "the origin's ID_FS_TYPE is '$ft'"
	[ -z "$(prop "$OLINK" ID_FS_UUID)" ] || no "the origin has ID_FS_UUID"
	r=$(systemctl show -P Result "$MOUNT_UNIT")
	echo "$MOUNT_UNIT: $(systemctl show -P ActiveState "$MOUNT_UNIT") ($r)"
}

# ---- main -------------------------------------------------------------------

say "check.sh boot $WOW_BOOT${BREAK:+ (broken: $BREAK)}"
{
	echo "boot $WOW_BOOT, FS_UUID=$FS_UUID${BREAK:+, broken: $BREAK}"
	uname -a
	cat /etc/wowtab /etc/fstab
	systemctl --failed --no-pager || true
	systemd-analyze 2>&1 || true
} >>"$LOG" 2>&1
case $WOW_BOOT in
1 | 2)
	check generator-made-unit c_generator
	check assembled-before-local-fs c_order
	check table-from-wowtab c_table
	check cache-tagged-by-udev c_cache_tagged
	check fstab-uuid-mounts-dm-device c_mount
	check origin-hidden-from-udev c_origin_hidden
	check origin-not-mountable c_origin_busy
	;;
esac
case $WOW_BOOT in
1)
	check writes-stay-dirty c_write
	check origin-alone-is-stale c_origin_stale
	;;
2) check data-read-back c_data ;;
3) check no-cache-origin-not-mounted c_nocache ;;
esac
journalctl -b --no-pager -o short-monotonic >"/results/boot$WOW_BOOT.journal" 2>&1 || true
echo done >"/results/boot$WOW_BOOT.done"
sync
umount /results || true
