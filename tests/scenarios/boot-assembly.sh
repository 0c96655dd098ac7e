#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Boot-time assembly from /etc/wowtab, as far as a guest without systemd
# can show it, with the real systemd-udevd and the rules and tools at the
# paths `make install` puts them (wowvm copies them there):
#  1. udev without a wowtab gives the origin's ext2 a by-uuid link (so the
#     checks below can fail); with a wowtab naming it by id, a change and an
#     add event take the link and ID_FS_UUID away (ID_FS_TYPE=dm_wow_origin,
#     WOW_ORIGIN_OF=slow) while its by-id link (the unit's .device) stays: no
#     device in the udev database answers a lookup by the file system's UUID.
#  2. The installed generator makes dm-wow@slow.service from the wowtab; its
#     BindsTo names the by-id links' .device units; its ExecStart line, run
#     as it stands (udev sync on), creates /dev/mapper/slow with the origin's
#     size in whole blocks.  The by-uuid link now leads to the dm-wow device;
#     the origin cannot be mounted while it is active (busy).
#  3. udev tags the cache ID_FS_TYPE=dm_wow_cache (wow-probe).
#  4. ExecStop removes the device: the origin (stale if the file written
#     through dm-wow was still dirty then: reported, not asserted, as an
#     idle device destages within a second) still has no by-uuid link and
#     no ID_FS_UUID after new events; `wowtab start slow` (by name) brings
#     the file back.
#
# vm: origin=2G cache=64M timeout=240
. "${WOW_LIB:-/wow/lib.sh}"
: "${WOW_INTERACTIVE:=}"
set -eu

WOWTAB_BIN=/usr/local/sbin/wowtab
GEN=/usr/lib/systemd/system-generators/dm-wow-generator
RULES=/usr/lib/udev/rules.d/61-dm-wow.rules
PROBE=/usr/lib/udev/wow-probe
UDEVD=/lib/systemd/systemd-udevd

[ -x /usr/bin/udevadm ] && [ -e "$UDEVD" ] || skip "no udevadm in the guest"
for f in "$WOWTAB_BIN" "$GEN" "$RULES" "$PROBE"; do
	[ -e "$f" ] || skip "$f is missing (make -C userspace)"
done
grep -q "IMPORT{program}=\"$WOWTAB_BIN udev-origin\"" "$RULES" ||
	fail "$RULES does not call $WOWTAB_BIN (built for other paths?)"

OLINK=/dev/disk/by-id/virtio-origin
CLINK=/dev/disk/by-id/virtio-cache

prop() {	# prop DEV KEY: the udev property's value
	udevadm info --query=property --name="$1" 2>/dev/null |
		sed -n "s/^$2=//p"
}

settle() {
	udevadm settle --timeout=60 || fail "udevadm settle timed out"
}

udev_event() {	# udev_event ACTION DEV...
	a=$1
	shift
	for d in "$@"; do
		udevadm trigger --action="$a" --name-match="$d" ||
			fail "udevadm trigger $a $d"
	done
	settle
}

# which devices the udev database gives this file system UUID
by_uuid_lookup() {
	for d in /sys/class/block/*; do
		n=/dev/${d##*/}
		[ "$(prop "$n" ID_FS_UUID)" = "$1" ] && echo "$n"
	done
	return 0
}

modprobe ext4 2>/dev/null || true	# ext2 too
grep -qw ext2 /proc/filesystems || skip "no ext2 in the guest kernel"
zero_dev "$CACHE" 4
rm -f /etc/wowtab

# an ext2 file system on the first 64 MiB of the origin
# 4 KiB blocks: the dm-wow device's logical block size (block_size)
run mke2fs -q -F -b 4096 -L slowfs "$ORIGIN" 65536
sync
u=$(od -An -tx1 -j 1128 -N 16 "$ORIGIN" | tr -d ' \n')
UUID=$(echo "$u" | sed 's/^\(.\{8\}\)\(.\{4\}\)\(.\{4\}\)\(.\{4\}\)/\1-\2-\3-\4-/')
info "origin file system UUID $UUID"

info "1. udev, no wowtab: the origin's file system is found"
$UDEVD --daemon --resolve-names=never || fail "systemd-udevd did not start"
BUSY=
# at the end: udevd stops, and the links it made go (the scenarios after
# this one in the same boot expect no udev links)
trap '[ -z "$BUSY" ] || kill $BUSY 2>/dev/null; udevadm control --exit 2>/dev/null; rm -rf /dev/disk' EXIT
udevadm trigger --action=add --subsystem-match=block || fail "udevadm trigger"
settle
[ -L "$OLINK" ] && [ -L "$CLINK" ] || fail "no by-id links: $(ls /dev/disk/by-id 2>&1)"
[ "$(readlink -f "/dev/disk/by-uuid/$UUID")" = "$ORIGIN" ] ||
	fail "control: no by-uuid link to the origin without a wowtab ($(ls -l /dev/disk/by-uuid 2>&1))"
[ "$(by_uuid_lookup "$UUID")" = "$ORIGIN" ] ||
	fail "control: the udev database does not find $UUID on the origin"
[ "$(prop "$ORIGIN" ID_FS_TYPE)" = ext2 ] || fail "control: ID_FS_TYPE is not ext2"
echo "ok: without a wowtab, /dev/disk/by-uuid/$UUID -> $ORIGIN"

info "1. the origin listed in /etc/wowtab: hidden"
cat >/etc/wowtab <<EOF
# name origin cache options
slow $OLINK $CLINK -
EOF
for action in change add; do
	udev_event "$action" "$ORIGIN"
	[ ! -e "/dev/disk/by-uuid/$UUID" ] ||
		fail "$action: by-uuid link still there: $(ls -l /dev/disk/by-uuid/)"
	[ -z "$(by_uuid_lookup "$UUID")" ] ||
		fail "$action: the udev database still finds $UUID on $(by_uuid_lookup "$UUID")"
	[ "$(prop "$ORIGIN" ID_FS_TYPE)" = dm_wow_origin ] ||
		fail "$action: ID_FS_TYPE=$(prop "$ORIGIN" ID_FS_TYPE)"
	[ "$(prop "$ORIGIN" WOW_ORIGIN_OF)" = slow ] || fail "$action: no WOW_ORIGIN_OF"
	[ "$(prop "$ORIGIN" WOW_ORIGIN_FS_TYPE)" = ext2 ] || fail "$action: no WOW_ORIGIN_FS_TYPE"
	[ "$(prop "$ORIGIN" UDISKS_IGNORE)" = 1 ] || fail "$action: no UDISKS_IGNORE"
	[ -z "$(prop "$ORIGIN" ID_FS_LABEL)" ] || fail "$action: ID_FS_LABEL is still set"
	[ ! -e /dev/disk/by-label/slowfs ] || fail "$action: by-label link still there"
	[ "$(readlink -f "$OLINK")" = "$ORIGIN" ] || fail "$action: the by-id link went"
	echo "ok: after $action, no by-uuid or by-label link, ID_FS_TYPE=dm_wow_origin, by-id kept"
done
udevadm info --query=property --name="$ORIGIN" | grep -e '^ID_FS' -e '^WOW_' -e '^DEVLINKS'

info "2. the generator's unit"
mkdir -p /tmp/gen
run "$GEN" /tmp/gen /tmp/gen /tmp/gen
U=/tmp/gen/dm-wow@slow.service
[ -f "$U" ] || fail "no $U: $(ls -R /tmp/gen)"
cat "$U"
[ -L /tmp/gen/local-fs.target.requires/dm-wow@slow.service ] ||
	fail "not required by local-fs.target"
grep -qx 'BindsTo=dev-disk-by\\x2did-virtio\\x2dorigin.device dev-disk-by\\x2did-virtio\\x2dcache.device' "$U" ||
	fail "BindsTo does not name the by-id .device units"
cmd=$(sed -n 's/^ExecStart=//p' "$U")
case $cmd in *\\*) fail "ExecStart has systemd escapes this test does not undo: $cmd" ;; esac
info "running ExecStart: $cmd"
(
	unset DM_DISABLE_UDEV	# as under systemd: dmsetup waits for udev
	timeout 120 sh -c "$cmd"
) || fail "ExecStart failed"
settle
dm_exists slow || fail "no device slow after ExecStart"
[ -b /dev/mapper/slow ] || fail "no /dev/mapper/slow"
set -- $(dmsetup table slow)
want=$(($(blockdev --getsz "$ORIGIN") / 8 * 8))
[ "$3" = wow ] && [ "$2" = "$want" ] || fail "table: $*; want length $want"
echo "ok: ExecStart made: $*"
# fstab's UUID= now resolves to the dm-wow device
[ "$(readlink -f "/dev/disk/by-uuid/$UUID")" = "$(readlink -f /dev/mapper/slow)" ] ||
	fail "by-uuid does not lead to the dm-wow device: $(ls -l /dev/disk/by-uuid/ 2>&1)"
echo "ok: /dev/disk/by-uuid/$UUID -> $(readlink -f "/dev/disk/by-uuid/$UUID") (the dm-wow device)"
mkdir -p /mnt/o /mnt/w
run mount -t ext2 "/dev/disk/by-uuid/$UUID" /mnt/w
echo "written through dm-wow" >/mnt/w/dirty-file
run umount /mnt/w
# keep the device busy (idle for 1 s, dm-wow destages everything) until
# ExecStop, so the file is likely still only in the cache then
wow_keep_busy /dev/mapper/slow
if msg=$(mount -t ext2 -o ro "$ORIGIN" /mnt/o 2>&1); then
	umount /mnt/o
	fail "the origin could be mounted while the dm-wow device is active"
fi
case $msg in
*busy*) echo "ok: mount of the origin refused while the device is active: $msg" ;;
*) fail "mount of the origin failed, not as busy: $msg" ;;
esac

info "3. the cache device is recognised"
udev_event change "$CACHE"
[ "$(prop "$CACHE" ID_FS_TYPE)" = dm_wow_cache ] ||
	fail "cache ID_FS_TYPE=$(prop "$CACHE" ID_FS_TYPE)"
[ "$(prop "$CACHE" WOW_CACHE_SB)" = valid ] || fail "cache superblock not valid"
[ -n "$(prop "$CACHE" ID_FS_UUID)" ] || fail "cache has no ID_FS_UUID"
udevadm info --query=property --name="$CACHE" | grep -e '^ID_FS' -e '^WOW_'

info "4. ExecStop: the origin is stale and stays hidden"
wow_stop_busy
dirty=$(wow_field slow 6)
echo "dirty blocks at ExecStop: $dirty"
cmd=$(sed -n 's/^ExecStop=//p' "$U")
(unset DM_DISABLE_UDEV; timeout 120 sh -c "$cmd") || fail "ExecStop failed"
settle
dm_exists slow && fail "slow still exists after ExecStop"
udev_event change "$ORIGIN"
udev_event add "$ORIGIN"
[ ! -e "/dev/disk/by-uuid/$UUID" ] ||
	fail "by-uuid link back after the removal: $(ls -l /dev/disk/by-uuid/)"
[ -z "$(by_uuid_lookup "$UUID")" ] ||
	fail "the udev database finds $UUID on $(by_uuid_lookup "$UUID")"
echo "ok: no by-uuid link and no device with ID_FS_UUID=$UUID"
# what the rules cannot stop (wowtab(5)): naming the origin itself
run mount -t ext2 -o ro "$ORIGIN" /mnt/o
if [ -e /mnt/o/dirty-file ]; then
	# not what this scenario tests: the removal came after an idle destage
	echo "info: dirty-file reached the origin before the removal ($dirty dirty blocks then)"
else
	echo "info: the origin, named by hand, is stale (no dirty-file; $dirty dirty blocks in the cache): what the rules hide"
fi
run umount /mnt/o
echo "info: busybox findfs UUID=$UUID (scans devices, as libblkid does without the link): $(findfs "UUID=$UUID" 2>&1)"

info "4. wowtab start slow (by name) brings the data back"
(unset DM_DISABLE_UDEV; timeout 120 "$WOWTAB_BIN" start slow) || fail "wowtab start slow"
settle
run mount -t ext2 -o ro /dev/mapper/slow /mnt/w
[ "$(cat /mnt/w/dirty-file)" = "written through dm-wow" ] || fail "dirty-file lost"
run umount /mnt/w
echo "ok: dirty-file read back through dm-wow"
(unset DM_DISABLE_UDEV; timeout 120 "$WOWTAB_BIN" stop slow) || fail "wowtab stop slow"
rm -f /etc/wowtab
echo "PASS"
