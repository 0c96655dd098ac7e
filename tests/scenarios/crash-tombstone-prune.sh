#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A held tombstone is dropped only once no segment life that could hold
# the records it kills is left on the device: the cleaner's walk prunes
# below a lower bound of the oldest life (wow_seg_visit, dm-wow-seg.c), and
# a victim carries forward the tombstones it holds that are still needed.
# One dropped too soon lets a scan of the whole log bring a dead copy back.
#
# 16 KiB erase blocks (a segment: a header and 3 data blocks) on a 64 MiB
# cache, watermarks 90/95 and the device kept busy, so nothing is
# destaged (and what is, in a VM slow enough to look idle, never reaches
# the origin: it sits behind dm-flakey dropping writes until the reload).  Two writers at once fill [0, 4M) with 4 KiB blocks, "C" in
# the even ones and "V" in the odd ones, so records mix them; the odd ones
# are then discarded: their tombstones go in records of segments of their
# own, and the segments holding the dead "V" copies keep their dirty "C"
# blocks (not a victim: under 80% would come free).  60 MiB of rewrites
# of 4 MiB elsewhere (dead at once, cheap to clean) make the log wrap:
# cleaning takes the segments of the discards' records (nothing dirty in
# them), whose tombstones must go forward with them.
# After a removal the checkpoints are dropped, so the next load scans the
# whole log: no "V" may be read back, through the device or, once
# cleaned, from the origin alone.  A module whose walk drops every
# tombstone (its lower bound set to next_seq) fails here.
#
# vm: origin=1G cache=64M timeout=900
. "${WOW_LIB:-/wow/lib.sh}"

EB=16384
OPTS="erase_block_size $EB low_watermark 90 high_watermark 95 sequential_cutoff 0"
# vbytes DEV: how many bytes of [0, 4M) of DEV read "V"
vbytes() {
	dd if="$1" bs=1M count=4 iflag=direct 2> /dev/null | tr -cd V | wc -c
}

wow_reset_disks
zero_dev "$ORIGIN" 4
OSZ=$(size_sectors "$ORIGIN")
run dmsetup create og --table "0 $OSZ flakey $ORIGIN 0 0 3600 1 drop_writes" \
	> /dev/null
OG=$(dm_node og)
wow_create tp "$OG" "$CACHE" $OPTS
D=$(dm_node tp)
wow_watch tp
wow_keep_busy "$D" 8192
info "C in the even 4 KiB blocks of [0, 4M), V in the odd ones, at once"
fio --filename="$D" --ioengine=libaio --direct=1 --bs=4k --iodepth=8 \
	--output=/tmp/tp-fio.out \
	--name=c --rw=write:4k --offset=0 --size=4m --buffer_pattern=0x43 \
	--name=v --rw=write:4k --offset=4k --size=4m --buffer_pattern=0x56 ||
	fail "fio failed: $(cat /tmp/tp-fio.out)"
v=$(vbytes "$D")
[ "$v" = $((2 * 1048576)) ] || fail "setup: $v bytes read V, not 2 MiB"
info "discard the odd blocks"
fio --name=t --filename="$D" --ioengine=libaio --direct=1 --bs=4k \
	--iodepth=8 --rw=trim:4k --offset=4k --size=4m \
	--output=/tmp/tp-fio.out || fail "fio trim failed: $(cat /tmp/tp-fio.out)"
[ "$(vbytes "$D")" = 0 ] || fail "V still read after the discard"
st=$(wow_status tp)
echo "status: $st"
info "60 MiB rewriting 4 MiB elsewhere: cleaning takes the discards' segments"
fio_run "$D" --rw=randwrite --bs=64k --offset=128m --size=4m \
	--io_size=60m --iodepth=16 --randseed=3403 --norandommap
st=$(wow_status tp)
echo "status: $st"
[ "$(wow_stat tp reclaimed_segments)" -gt 0 ] ||
	fail "setup: no segment was reclaimed ($st)"
[ "$(vbytes "$D")" = 0 ] || fail "V read back before any reload"
wow_stop_busy
wow_no_errors tp
wow_remove tp
dmsetup remove og
info "reload by a scan of the whole log"
drop_checkpoint "$CACHE"
[ "$(vbytes "$ORIGIN")" = 0 ] || fail "setup: V reached the origin"
wow_create tp "$ORIGIN" "$CACHE" $OPTS
D=$(dm_node tp)
dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
echo "status after the scan: $(wow_status tp)"
v=$(vbytes "$D")
[ "$v" = 0 ] ||
	fail "$v bytes of discarded blocks came back after the scan (their tombstones were dropped while the dead copies were on the device)"
wow_clean_remove tp
info "the origin alone"
v=$(vbytes "$ORIGIN")
[ "$v" = 0 ] || fail "$v bytes of discarded blocks were destaged to the origin"
echo "crash-tombstone-prune: ok"
