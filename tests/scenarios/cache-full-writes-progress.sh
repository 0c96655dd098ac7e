#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Writes to a full cache wait for space and then complete (invariant 9):
# a 64 MiB cache first takes 128 MiB of random 4k writes and a zipf-skewed
# overwrite load (the log wraps, most of the cache ends up clean but still
# cached), then 64 MiB of random writes of 4k..1M.  Every job must finish;
# wow_watch fails the scenario if the status stops moving for 60 s while
# I/O is pending (a stall: blocked tasks go to the console).  The last
# job's data must verify.
#
# This scenario has a boot of its own (origin=1G): a stalled device cannot
# be removed, and would make the scenarios after it in a shared boot fail.
#
# vm: origin=1G cache=64M timeout=240
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
wow_create fw "$ORIGIN" "$CACHE"
D=$(dm_node fw)
wow_watch fw

MIX="--rw=randwrite --bsrange=4k-1m --blockalign=4k --offset=256M --size=64M --randseed=103"
info "random 4k writes, twice the cache"
fio_run "$D" --rw=randwrite --bs=4k --offset=0 --size=128M --iodepth=32 \
	--randseed=101
info "zipf overwrites of a hot set"
fio_run "$D" --rw=randwrite --bs=4k --offset=0 --size=32M --io_size=24M \
	--norandommap --random_distribution=zipf:1.1 --iodepth=16 --randseed=102
echo "status: $(wow_status fw)"
info "random writes of 4k..1M into the full cache"
fio_run "$D" $MIX --iodepth=8 --verify=crc32c --do_verify=0
echo "status: $(wow_status fw)"
fio_verify_only "$D" $MIX --iodepth=8
wow_no_errors fw
wow_unwatch
wow_remove fw
echo "cache-full-writes-progress: ok"
