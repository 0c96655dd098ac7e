#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Discard of cached blocks: blkdiscard over part of a cached region must not
# disturb any other block (fio verify of the rest), must read back the same
# before and after a reload (the discard tombstone keeps the dropped cached
# copies from coming back at recovery: the origin held other data, so a
# resurrected copy would show), and must not kill data written after it
# (a rewrite of part of the discarded range survives the reload).
#
# vm: origin=2G cache=256M timeout=180
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
# The origin under region A holds a pattern, so cached data that came back
# after the discard would differ from what the origin says.
fill_pattern "$ORIGIN" 32 origin-before-discard

wow_create dc "$ORIGIN" "$CACHE"
D=$(dm_node dc)

# Region A = [0, 24M) in three parts; region B = [64M, 80M).
A1="--offset=0 --size=8M --rw=randwrite --bs=4k --randseed=41"
A2="--offset=8M --size=8M --rw=randwrite --bs=4k --randseed=42"
A3="--offset=16M --size=8M --rw=randwrite --bsrange=4k-64k --blockalign=4k --randseed=43"
B="--offset=64M --size=16M --rw=randwrite --bs=4k --randseed=44"
A2R="--offset=12M --size=4M --rw=randwrite --bs=4k --randseed=45"

info "write A1 A2 A3 B"
for j in "$A1" "$A2" "$A3" "$B"; do
	fio_run "$D" $j --iodepth=16 --verify=crc32c --do_verify=0
done
echo "status: $(wow_status dc)"

info "discard [8M, 16M) (all of A2)"
run blkdiscard -o $((8 << 20)) -l $((8 << 20)) "$D"
st=$(wow_status dc)
echo "status: $st"
[ "$(wow_stat dc discards)" -gt 0 ] || fail "no discard counted: $st"

info "everything else is intact"
fio_verify_only "$D" $A1 --iodepth=16
fio_verify_only "$D" $A3 --iodepth=16
fio_verify_only "$D" $B --iodepth=16
# what the discarded range reads now (the discard is passed to the origin,
# which may or may not drop it: whatever it reads, it must stay so)
H8=$(sum_dev "$D" 4 8)

info "rewrite [12M, 16M) after the discard"
fio_verify "$D" $A2R --iodepth=16

info "reload: the tombstone must kill the old copies, not the rewrite"
wow_remove dc
wow_create dc "$ORIGIN" "$CACHE"
D=$(dm_node dc)
dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
[ "$(sum_dev "$D" 4 8)" = "$H8" ] ||
	fail "discarded range [8M,12M) reads differently after reload (old cached data resurrected?)"
fio_verify_only "$D" $A2R --iodepth=16
fio_verify_only "$D" $A1 --iodepth=16
fio_verify_only "$D" $A3 --iodepth=16
fio_verify_only "$D" $B --iodepth=16

info "discard across uncached [60M,64M) and cached [64M,68M), reload again"
H68=$(sum_dev "$D" 12 68)
run blkdiscard -o $((60 << 20)) -l $((8 << 20)) "$D"
H60=$(sum_dev "$D" 8 60)
[ "$(sum_dev "$D" 12 68)" = "$H68" ] ||
	fail "[68M,80M) changed by a discard of [60M,68M)"
wow_remove dc
wow_create dc "$ORIGIN" "$CACHE"
D=$(dm_node dc)
[ "$(sum_dev "$D" 8 60)" = "$H60" ] ||
	fail "discarded [60M,68M) reads differently after reload"
[ "$(sum_dev "$D" 12 68)" = "$H68" ] ||
	fail "[68M,80M) changed across reload"
fio_verify_only "$D" $A2R --iodepth=16
wow_no_errors dc
wow_remove dc
echo "cache-discard: ok"
