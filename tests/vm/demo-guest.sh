#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of `make demo` (tests/vm/demo.sh): create a wow device over
# /dev/vda (origin, 2 GiB) and /dev/vdb (cache, 256 MiB), run 20 s of
# verified 4k random writes, show what the target reports.
#
# vm: origin=2G cache=256M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
echo
echo "== dm-wow demo: origin $ORIGIN ($(($(size_sectors "$ORIGIN") / 2048)) MiB)," \
	"cache $CACHE ($(($(size_sectors "$CACHE") / 2048)) MiB)"
wow_create demo "$ORIGIN" "$CACHE"
D=$(dm_node demo)
echo
echo "== dmsetup table demo"
dmsetup table demo
echo "== dmsetup status demo (fresh)"
dmsetup status demo
echo
echo "== fio: 4k random writes, iodepth 16, 20 s, crc32c verify of every block"
fio --name=demo --filename="$D" --ioengine=libaio --direct=1 \
	--rw=randwrite --bs=4k --iodepth=16 --size=1G \
	--time_based --runtime=20 \
	--verify=crc32c --verify_fatal=1 --verify_backlog=4096 \
	--group_reporting --output=/tmp/demo-fio.out
rc=$?
grep -E '^ *(write|read):|err=|^ *lat \((u|m)sec\):' /tmp/demo-fio.out
[ $rc -eq 0 ] || { cat /tmp/demo-fio.out; fail "fio failed (exit $rc)"; }
echo "   fio: all verified blocks matched"
echo
echo "== dmsetup status demo"
dmsetup status demo
echo "== dmsetup table demo"
dmsetup table demo
if [ -x /usr/bin/wowctl ]; then
	echo
	echo "== wowctl status demo"
	wowctl status demo || fail "wowctl status failed"
fi
echo
wow_remove demo
echo "== demo done"
