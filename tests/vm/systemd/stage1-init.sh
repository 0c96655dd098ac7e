#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the systemd test VM's initramfs (tests/vm/systemd-vm.py): the
# host's / (read-only, virtio-9p tag "rootfs") under a tmpfs overlay becomes
# the root, the files in /payload (the dm-wow module, `make install`'s files,
# the test's /etc; systemd-vm.py ran depmod for the module on the host) are
# copied over it, and systemd is PID 1.  /modules lists the modules to
# insmod, in order; /stage1.conf sets KV, and for tests/vm/deb-vm.py
# UPPER (an ext4 device holding the overlay's upper layer, kept from boot
# to boot, instead of a tmpfs) and NO_MODULE=1 (the packages bring
# dm-wow.ko: the payload has none).
set -eu
export PATH=/bin:/sbin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

say() { echo "wowvm-stage1: $*" > /dev/kmsg; }
fail() {
	say "FAILED: $*"
	echo o > /proc/sysrq-trigger
	sleep 60
}

UPPER="" NO_MODULE=""
. /stage1.conf
while read -r m; do
	insmod "$m" || fail "insmod $m"
done < /modules

mkdir -p /lower /rw /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 \
	rootfs /lower || fail "cannot mount the 9p root"
if [ -n "$UPPER" ]; then
	mount -t ext4 "$UPPER" /rw || fail "cannot mount $UPPER"
else
	mount -t tmpfs -o mode=0755,size=512m tmpfs /rw || fail "tmpfs"
fi
mkdir -p /rw/upper /rw/work
mount -t overlay overlay \
	-o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
	fail "cannot mount the overlay root"
cp -a /payload/. /newroot/ || fail "cannot copy the payload"
[ -n "$NO_MODULE" ] || [ -f "/newroot/lib/modules/$KV/updates/dkms/dm-wow.ko" ] ||
	fail "no dm-wow.ko for $KV in the new root"
say "root ready: 9p / under an overlay (${UPPER:-tmpfs}); exec systemd"
umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /lib/systemd/systemd
