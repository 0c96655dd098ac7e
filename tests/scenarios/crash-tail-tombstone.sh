#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A record in the last block of a segment (defect 17).  A record of
# tombstones only (a discard of cached blocks, or reclaim's record) needs
# one block, so it can take a segment's last block; recovery scanned only
# while a header and one data block still fitted, never read it, and the
# copies it killed came back at the next load: crash-flush-points saw a
# discarded block's older cached data shadow every later write to it.
#
# With 4-block segments: one 2-block write (header + 2 data blocks), then
# a discard of one of them puts its tombstone record in block 3 of the
# segment (checked on the cache device).  After a reload the discarded
# block must not be cached again (one cached block, not two) and must read
# what it read before the reload.
#
# vm: origin=1G cache=64M timeout=120
. "${WOW_LIB:-/wow/lib.sh}"

BS=4096 EB=16384
wow_reset_disks
# the origin holds a pattern: a resurrected cached copy would differ
fill_pattern "$ORIGIN" 1 origin-under-the-cache

wow_create tt "$ORIGIN" "$CACHE" erase_block_size $EB
D=$(dm_node tt)

info "one 8 KiB write (blocks 0 and 1): a record of header + 2 blocks"
head -c $((2 * BS)) /dev/zero | tr '\0' 'C' > /tmp/tt.data
run dd if=/tmp/tt.data of="$D" bs=$((2 * BS)) count=1 oflag=direct conv=notrunc

info "discard block 0: its tombstone record takes the segment's last block"
run blkdiscard -o 0 -l $BS "$D"
log_records "$CACHE" 0 $BS $EB > /tmp/tt.records
sed 's/^/    record (pos seq seg_seq durable nr_data nr_tombs): /' /tmp/tt.records
# pos seq seg_seq durable nr_data nr_tombs; segment 0 starts at the
# superblock's first_segment_sector (after the checkpoint area)
FIRST=$(($(read_u "$CACHE" 48 8) * 512))
last=$(awk -v f=$FIRST -v bs=$BS '$1 == f + 3 * bs && $5 == 0 && $6 >= 1' \
	/tmp/tt.records)
[ -n "$last" ] ||
	fail "setup: no tombstone record in the segment's last block (see the records above)"
BEFORE=$(dd if="$D" bs=$BS count=1 iflag=direct 2> /dev/null | md5sum)
CNOW=$(dd if=/tmp/tt.data bs=$BS count=1 2> /dev/null | md5sum)
V=$(wow_stat tt valid_blocks)
[ "$V" = 1 ] || fail "$V cached blocks after the discard, not 1 (block 1)"

info "reload: the tombstone in the last block must be found"
wow_remove tt
drop_checkpoint "$CACHE"	# by the log scan, as after a crash
wow_create tt "$ORIGIN" "$CACHE" erase_block_size $EB
D=$(dm_node tt)
dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
# (destage may have written block 0 to the origin before the discard, so
# its content cannot tell; the count of cached blocks can)
V=$(wow_stat tt valid_blocks)
[ "$V" = 1 ] ||
	fail "$V cached blocks after the reload, not 1: the discarded block came back (its tombstone, in the segment's last block, was not recovered)"
[ "$(dd if="$D" bs=$BS count=1 iflag=direct 2> /dev/null | md5sum)" = "$BEFORE" ] ||
	fail "block 0 reads differently after the reload"
# block 1 was not discarded and must still read the cached data
[ "$(dd if="$D" bs=$BS skip=1 count=1 iflag=direct 2> /dev/null | md5sum)" = "$CNOW" ] ||
	fail "block 1 lost its data"
wow_no_errors tt
wow_remove tt
echo "crash-tail-tombstone: ok"
