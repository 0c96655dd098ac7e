#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Destage order seen by the origin, per policy, for the same dirty set:
# 8192 random 4 KiB writes over 1 GiB are loaded with destage held back
# (dirty stays under the low watermark while fio runs), then cleaner mode
# destages everything under blktrace.  wow and cscan must write the origin
# in ascending order within each sweep (descents <= sweeps), lrw must not
# (its order is write time, so about every other write descends).
#
# vm: origin=2G cache=256M timeout=400
. "${WOW_LIB:-/wow/lib.sh}"

for policy in cscan wow lrw; do
	info "policy $policy"
	wow_reset_disks
	blktrace_anchor
	wow_create ord "$ORIGIN" "$CACHE" policy "$policy"
	D=$(dm_node ord)
	rm -f /tmp/orig.*
	blktrace -d "$ORIGIN" -a write -D /tmp -o orig > /tmp/blktrace.out 2>&1 &
	BT=$!
	sleep 2
	fio_run "$D" --rw=randwrite --bs=4k --iodepth=16 --offset=0 \
		--size=1G --io_size=32M --randrepeat=1 --randseed=31
	run dmsetup message ord 0 cleaner on
	wait_clean ord 300
	sleep 1
	kill -INT "$BT"
	wait "$BT"
	blkparse -D /tmp -i orig -o /tmp/orig.txt > /dev/null 2>&1 ||
		fail "blkparse failed: $(cat /tmp/blktrace.out)"
	set -- $(origin_descents /tmp/orig.txt)
	writes=$1 descents=$2
	sweeps=$(wow_key ord sweeps)
	echo "policy $policy: $writes origin writes, $descents descents," \
		"$sweeps sweeps, status: $(wow_status ord)"
	[ "$writes" -gt 100 ] || fail "$policy: only $writes origin writes traced"
	case $policy in
	cscan|wow)
		[ "$descents" -le $((sweeps + 1)) ] ||
			fail "$policy: $descents descents in $sweeps sweeps"
		;;
	lrw)
		[ "$descents" -gt $((writes / 5)) ] ||
			fail "lrw: only $descents descents in $writes writes"
		;;
	esac
	wow_remove ord
done
echo "destage-order: ok"
