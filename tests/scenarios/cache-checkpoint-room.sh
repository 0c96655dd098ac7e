#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Checkpoints keep fitting on a small cache under a hot set (reliability.md,
# defect 23).
#
# Cleaning drops a victim's clean copies behind tombstones, which a
# checkpoint carries while an older segment life is on the device.  The
# checkpoint area's room for them was nr_slots / 8 + 64; a small cache
# under a hot set with cold writes beside it held more, and every
# checkpoint failed with -ENOSPC ("checkpoint failed: -28"): the last one
# stayed, or was retired, and a load after a crash replayed or scanned
# more than the bound.  A format 3 area gives tombstones what its whole
# erase blocks leave.
#
# An 8 MiB cache (6 segments, 1,536 blocks): 4 KiB random writes, 90% to
# a 24 MiB hot set and 10% over the rest of the origin, until the log has
# turned over many times.  No checkpoint may fail or be retired, cleaning
# must have reclaimed segments, and the load after a clean shutdown must
# read the checkpoint.
#
# vm: origin=1G cache=8M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

W="--rw=randwrite --bs=4k --offset=0 --size=1G --io_size=96M --iodepth=16
   --random_distribution=zoned:90/2.35:10/97.65 --randseed=23"

wow_reset_disks
wow_create cr "$ORIGIN" "$CACHE"
D=$(dm_node cr)

dmesg_clear
fio_run "$D" $W
k=$(dmesg_since)
echo "after the load: $(wow_status cr)"
n=$(echo "$k" | grep -c 'checkpoint failed')
echo "$k" | grep -E 'wow: .*(checkpoint|tombstones)' | sort | uniq -c |
	sed 's/^/    kernel: /' | head -n 5
[ "$(wow_stat cr reclaimed_segments)" -ge 30 ] ||
	fail "only $(wow_stat cr reclaimed_segments) segments reclaimed: the log did not turn over"
[ "$n" -eq 0 ] || fail "$n checkpoints failed (too many tombstones for the area?)"
echo "$k" | grep -q 'too many tombstones' &&
	fail "a checkpoint was retired for too many tombstones"

run dmsetup suspend cr
run dmsetup resume cr
wow_remove cr
wow_create cr "$ORIGIN" "$CACHE"
dmesg_since | grep -E 'wow: .*(loaded|recovered)' | sed 's/^/    kernel: /'
dmesg_since | grep -q 'loaded checkpoint' ||
	fail "the load after a clean shutdown did not use the checkpoint"
wow_remove cr
