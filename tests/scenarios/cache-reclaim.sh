#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A working set three times the cache: 200 MiB of writes of mixed sizes
# (4k..1M) through a 64 MiB cache, so the log wraps and reclaim must free
# segments (reclaimed_segments > 0) while writes wait for space (they must
# never fail, invariant 9).  Part of the data is overwritten after the log
# has wrapped; everything must verify (invariant 1) at once, and again after
# a reload (recovery of a wrapped log with tombstones: no older copy may
# come back, invariant 3).
#
# vm: origin=2G cache=64M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
wow_create rc "$ORIGIN" "$CACHE"
D=$(dm_node rc)
wow_watch rc
echo "status: $(wow_status rc)"

# 148 MiB in three parts, then the middle part again with other data.
P1="--rw=randwrite --bsrange=4k-1m --blockalign=4k --offset=0 --size=50M --randseed=71"
P2="--rw=randwrite --bsrange=4k-1m --blockalign=4k --offset=50M --size=50M --randseed=72"
P3="--rw=randwrite --bs=4k --offset=100M --size=48M --randseed=73"
P2N="--rw=randwrite --bsrange=4k-64k --blockalign=4k --offset=50M --size=50M --randseed=74"

info "write 148 MiB"
fio_verify "$D" $P1 --iodepth=8
fio_verify "$D" $P2 --iodepth=8
fio_run "$D" $P3 --iodepth=32 --verify=crc32c --do_verify=0
st=$(wow_status rc)
echo "status: $st"
[ "$(wow_stat rc reclaimed_segments)" -gt 0 ] ||
	fail "the log wrapped but no segment was reclaimed: $st"
info "overwrite [50M,100M) after the wrap"
fio_verify "$D" $P2N --iodepth=16
fio_verify_only "$D" $P3 --iodepth=32
fio_verify_only "$D" $P1 --iodepth=8
st=$(wow_status rc)
echo "status: $st"
wow_no_errors rc

info "reload (recover a wrapped log), verify everything"
wow_remove rc
wow_create rc "$ORIGIN" "$CACHE"
D=$(dm_node rc)
dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
fio_verify_only "$D" $P1 --iodepth=8
fio_verify_only "$D" $P2N --iodepth=16
fio_verify_only "$D" $P3 --iodepth=32
info "and once clean, from the origin alone"
wow_message rc cleaner on
wow_wait_clean rc 120
echo "status: $(wow_status rc)"
wow_no_errors rc
wow_remove rc
fio_verify_only "$ORIGIN" $P1 --iodepth=8
fio_verify_only "$ORIGIN" $P2N --iodepth=16
fio_verify_only "$ORIGIN" $P3 --iodepth=32
echo "cache-reclaim: ok"
