#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Data integrity through a wow device with fio's crc32c verification:
# random 4k writes, random writes of mixed sizes 4k..1M, sequential 1M
# writes, overwrites of cached blocks; each checked by reading back at once
# and again after the device was removed and created again (cache reopened).
#
# vm: origin=2G cache=256M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
wow_create fv "$ORIGIN" "$CACHE"
D=$(dm_node fv)

# Regions of the 2 GiB origin (they do not overlap):
R4K="--offset=0 --size=32M --bs=4k --randseed=11"
RMIX="--offset=256M --size=160M --bsrange=4k-1m --blockalign=4k --randseed=12"
RSEQ="--offset=1G --size=96M --bs=1m --randseed=13"
ROVR="--offset=0 --size=32M --bs=4k --randseed=14"

info "random 4k writes, iodepth 16"
fio_verify "$D" --rw=randwrite --iodepth=16 $R4K
info "random writes of mixed sizes 4k..1M, iodepth 8"
fio_verify "$D" --rw=randwrite --iodepth=8 $RMIX
info "sequential 1M writes, iodepth 4"
fio_verify "$D" --rw=write --iodepth=4 $RSEQ
info "overwrite the 4k region with new data (other seed)"
fio_verify "$D" --rw=randwrite --iodepth=16 $ROVR

info "status after writing"
dmsetup status fv

info "remove, create again, read everything back"
wow_remove fv
wow_create fv "$ORIGIN" "$CACHE"
D=$(dm_node fv)
fio_verify_only "$D" --rw=randwrite --iodepth=16 $ROVR
fio_verify_only "$D" --rw=randwrite --iodepth=8 $RMIX
fio_verify_only "$D" --rw=write --iodepth=4 $RSEQ
wow_remove fv
echo "fio-verify: ok"
