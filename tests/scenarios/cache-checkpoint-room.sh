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
# turned over many times, with a checkpoint every 32 blocks of log (the
# parameter; 1/64 of this cache, the default before it had a floor of
# 256 MiB), so that checkpoints meet the tombstones at their most.  No
# checkpoint may fail or be retired, cleaning must have reclaimed
# segments, and the load after a clean shutdown must read the checkpoint.
#
# Then the same load on a fresh cache with the default interval: a
# checkpoint costs 1/683 of the cache, so 1/64 of the cache of log
# between two (the default before the floor) added 9% to the cache's
# writes (25% on a 6 MiB cache, with the headers); with the floor only
# segment reuse brings checkpoints here, about one a turn of the log.
# Fewer than 100 may be written (1/64 gives about 900).
#
# vm: origin=1G cache=8M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

W="--rw=randwrite --bs=4k --offset=0 --size=1G --io_size=96M --iodepth=16
   --random_distribution=zoned:90/2.35:10/97.65 --randseed=23"

PARAM=/sys/module/dm_wow/parameters/checkpoint_interval
wow_reset_disks
echo 32 > "$PARAM" || fail "cannot set $PARAM"
wow_create cr "$ORIGIN" "$CACHE"
D=$(dm_node cr)

dmesg_clear
fio_run "$D" $W
echo 0 > "$PARAM"
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
c=$(dmesg_since | sed -n 's/.*loaded checkpoint \([0-9]*\) .*/\1/p')
# (one every 32 blocks would be about 3,000; a checkpoint is written in
# the background and the next one waits for it, so far fewer complete,
# 394 on a loaded CI host; the default interval writes fewer than 100)
[ "${c:-0}" -ge 200 ] ||
	fail "only ${c:-no} checkpoints written: the interval was not applied"
dmesg_since | grep -q 'loaded checkpoint' ||
	fail "the load after a clean shutdown did not use the checkpoint"
wow_remove cr

info "the default interval"
wow_reset_disks
wow_create cr "$ORIGIN" "$CACHE"
fio_run "$(dm_node cr)" $W
wow_remove cr
wow_create cr "$ORIGIN" "$CACHE"
c=$(dmesg_since | sed -n 's/.*loaded checkpoint \([0-9]*\) .*/\1/p')
echo "checkpoints written: ${c:-none}"
[ -n "$c" ] && [ "$c" -ge 2 ] ||
	fail "no checkpoint was written while the log turned over"
[ "$c" -lt 100 ] || fail "$c checkpoints for 96 MiB of log on an 8 MiB cache"
wow_remove cr
