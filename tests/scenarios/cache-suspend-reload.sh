#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Suspend/resume and table reload with dirty data (invariant 1): data
# written before `dmsetup suspend`/`resume`, and before `dmsetup reload`
# (same table) + `resume` (the new table loads the checkpoint the old one
# wrote at its suspend), must verify afterwards; dirty data must survive a suspend
# (dirty_blocks stays > 0; below the low watermark and busy, nothing is
# destaged at all).  Then the same cycles run while a fio
# write+verify load keeps I/O in flight: no I/O error, everything verifies.
#
# vm: origin=2G cache=256M timeout=240
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
wow_create sr "$ORIGIN" "$CACHE"
D=$(dm_node sr)
TABLE=$(dmsetup table sr)

A="--rw=randwrite --bs=4k --offset=0 --size=24M --randseed=51"
B="--rw=randwrite --bsrange=4k-256k --blockalign=4k --offset=256M --size=32M --randseed=52"
C="--rw=randwrite --bs=4k --offset=512M --size=32M --randseed=53"

info "write A, suspend with dirty data, resume, verify"
# A device idle for a second destages everything: a read every 0.2 s keeps
# it busy from the writes to the check, so A is still dirty when suspended
# however slow the VM (a fio exit and a dmsetup took over a second on 6.12)
wow_keep_busy "$D" 262144
fio_run "$D" $A --iodepth=16 --verify=crc32c --do_verify=0
run dmsetup suspend sr
st=$(wow_status sr)
echo "suspended: $(dmsetup info -c --noheadings -o attr sr) $st"
run dmsetup resume sr
wow_stop_busy
echo "$st" | awk '{ exit !($6 > 0) }' ||
	fail "no dirty data while suspended (destaged everything?): $st"
# below the low watermark, busy, no max_age: nothing destaged at all (a
# continuation of a destage that never was drained A from block 0)
echo "$st" | grep -q ' destage_writes=0 ' ||
	fail "destaged below the low watermark with no destage to continue: $st"
fio_verify_only "$D" $A --iodepth=16

info "write B, reload the same table with dirty data, verify A and B"
fio_run "$D" $B --iodepth=8 --verify=crc32c --do_verify=0
echo "before reload: $(wow_status sr)"
dmesg_clear
run dmsetup reload sr --table "$TABLE"
run dmsetup resume sr
dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
dmesg_since | grep -q 'loaded checkpoint' ||
	fail "the reloaded table did not load the checkpoint the suspend wrote"
echo "after reload: $(wow_status sr)"
[ "$(dmsetup table sr)" = "$TABLE" ] || fail "table changed: $(dmsetup table sr)"
fio_verify_only "$D" $A --iodepth=16
fio_verify_only "$D" $B --iodepth=8

info "suspend/resume and reload/resume cycles under a write+verify load"
fio --name=C --filename="$D" --ioengine=libaio --direct=1 $C --iodepth=16 \
	--verify=crc32c --verify_fatal=1 --do_verify=1 \
	--output=/tmp/sr-C.out &
PC=$!
for i in 1 2 3; do
	sleep 1
	run dmsetup suspend sr
	sleep 0.3
	run dmsetup resume sr
	sleep 1
	run dmsetup reload sr --table "$TABLE"
	run dmsetup resume sr
	echo "cycle $i: $(wow_status sr)"
done
wait $PC
rc=$?
grep -E 'IOPS|err=|verify|bad' /tmp/sr-C.out | sed 's/^/    /'
[ $rc -eq 0 ] || { cat /tmp/sr-C.out; fail "fio load across suspend/reload failed"; }
kill -0 $PC 2> /dev/null && fail "fio still running"

info "verify everything once more"
fio_verify_only "$D" $A --iodepth=16
fio_verify_only "$D" $B --iodepth=8
fio_verify_only "$D" $C --iodepth=16
wow_no_errors sr
wow_remove sr
echo "cache-suspend-reload: ok"
