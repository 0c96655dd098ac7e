#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Never destage rotten data (issue 34).  Format version 5 keeps a crc32c
# of every data block in its record; destage and cleaning check the very
# blocks they read from the cache against it.
#
# The origin holds "old" data over [0, 4 MiB); a cache writes "new" data
# over [0, 1 MiB) (256 dirty blocks), and one byte of the cached copy of
# origin block 100 is then flipped on the cache device under the live
# device (found with `wowctl dump` of a copy: the index's slot, the superblock's
# first segment sector).  In cleaner mode:
#  (a) destage writes every block but that one: dirty_blocks stays at 1,
#      bad_blocks=1, needs_check=1, the kernel log names origin block 100,
#      and a read of it through the device fails (EIO) instead of
#      returning the rotten data; its neighbours read back new; `wowctl
#      remove --clean` stops (exit 1) saying the block left is bad, and
#      leaves the device.
#  (b) the device removed, the origin alone: block 100 still holds the
#      old data, blocks 99 and 101 the new.
#  (c) loaded again from the checkpoint (needs_check: in cleaner mode):
#      the checkpoint carries the block's crc, so destage refuses it again
#      (bad_blocks=1, nothing destaged, the origin still old); block 100
#      written anew through the device: it drains, and the origin holds
#      the new write.
# Fails with a module that does not check (the rotten block reaches the
# origin, nothing is counted), and, in (c), with one whose checkpoint does
# not carry the crcs (the rotten block is destaged after the load).
#
# vm: origin=1G cache=64M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

command -v wowctl > /dev/null || skip "no wowctl in the guest (make -C userspace)"

# blk_sum DEV BLOCK: md5 of 4 KiB block BLOCK of DEV (O_DIRECT)
blk_sum() {
	dd if="$1" bs=4096 skip="$2" count=1 iflag=direct 2> /dev/null |
		md5sum | cut -d' ' -f1
}

wow_reset_disks
fill_pattern "$ORIGIN" 4 old
OLD=$(blk_sum "$ORIGIN" 100)
wow_create rot "$ORIGIN" "$CACHE"
D=$(dm_node rot)
# (an idle device destages everything: it must not before the flip)
wow_keep_busy "$D" 2000
[ "$(read_u "$CACHE" 4 4)" = 5 ] ||
	fail "the cache is format version $(read_u "$CACHE" 4 4), not 5"
fill_pattern "$D" 1 new
wow_message rot commit
NEW=$(blk_sum "$D" 100)
NEW99=$(blk_sum "$D" 99)
NEW101=$(blk_sum "$D" 101)
[ "$NEW" != "$OLD" ] || fail "the new data is the old"
[ "$(wow_stat rot dirty_blocks)" = 256 ] ||
	fail "256 blocks should be dirty: $(wow_status rot)"

info "flip a byte of origin block 100's cached copy on the cache device"
# (wowctl refuses a device in use: a copy of it, the record committed)
dd if="$CACHE" of=/tmp/rot-cache.img bs=1M iflag=direct 2> /dev/null ||
	fail "cannot copy $CACHE"
wowctl dump /tmp/rot-cache.img > /tmp/rot-dump.json 2> /tmp/rot-dump.err ||
	[ $? -eq 3 ] || fail "wowctl dump: $(cat /tmp/rot-dump.err)"
SLOT=$(tr -d '\n' < /tmp/rot-dump.json |
	sed -n 's/.*{"oblock": 100, "slot": \([0-9]*\), "dirty": true}.*/\1/p')
[ -n "$SLOT" ] || fail "wowctl dump does not list origin block 100 as dirty"
FSS=$(read_u "$CACHE" 48 8)
BS=$(read_u "$CACHE" 20 4)
[ "$BS" = 4096 ] || fail "block_size $BS"
echo "origin block 100: slot $SLOT, first segment sector $FSS"
echo "flipped: $(flip_byte "$CACHE" $((FSS * 512 + SLOT * 4096 + 1234)))"
# (a read before destage or cleaning checked it returns what the cache holds)
[ "$(blk_sum "$D" 100)" != "$NEW" ] ||
	fail "the flip did not reach origin block 100's cached copy"

[ "$(wow_stat rot dirty_blocks)" = 256 ] ||
	fail "256 blocks should still be dirty: $(wow_status rot)"
wow_stop_busy

info "(a) cleaner mode: everything but block 100 destages"
dmesg_clear
wow_message rot cleaner on
T=$(( $(date +%s) + 60 ))
while [ "$(wow_stat rot dirty_blocks)" -gt 1 ]; do
	[ "$(date +%s)" -lt "$T" ] || fail "(a) not drained: $(wow_status rot)"
	sleep 0.5
done
sleep 2
ST=$(wow_status rot)
echo "status: $ST"
[ "$(wow_stat rot dirty_blocks)" = 1 ] ||
	fail "(a) dirty_blocks is $(wow_stat rot dirty_blocks), not 1: the rotten block was destaged, or more were held"
[ "$(wow_stat rot bad_blocks)" = 1 ] ||
	fail "(a) bad_blocks is $(wow_stat rot bad_blocks), not 1"
[ "$(wow_stat rot needs_check)" = 1 ] || fail "(a) needs_check is not set"
[ "$(wow_stat rot cache_errors)" = 0 ] || fail "(a) cache errors counted"
dmesg_since | grep wow | sed 's/^/    kernel: /'
dmesg_since | grep -q "wow: .*origin block 100: its cached copy" ||
	fail "(a) the kernel log does not name origin block 100"
if dd if="$D" of=/dev/null bs=4096 skip=100 count=1 iflag=direct \
	2> /tmp/rot-dd.err; then
	fail "(a) reading block 100 through the device did not fail"
fi
echo "read of block 100: $(tail -n 1 /tmp/rot-dd.err)"
[ "$(blk_sum "$D" 99)" = "$NEW99" ] && [ "$(blk_sum "$D" 101)" = "$NEW101" ] ||
	fail "(a) blocks 99 and 101 do not read back new"
# wowctl's clean does not wait forever for a block that never drains
echo "+ wowctl remove --clean --interval 0.5 rot"
wowctl remove --clean --interval 0.5 rot > /tmp/rot-clean.out 2>&1
RC=$?
sed 's/^/    /' /tmp/rot-clean.out
[ $RC = 1 ] && grep -q "are bad" /tmp/rot-clean.out && dm_exists rot ||
	fail "(a) wowctl remove --clean exited $RC and did not say the block left is bad, or removed the device"

info "(b) the origin alone"
wow_remove rot
[ "$(blk_sum "$ORIGIN" 100)" = "$OLD" ] ||
	fail "(b) the origin's block 100 is not the old data: rotten data was destaged"
[ "$(blk_sum "$ORIGIN" 99)" = "$NEW99" ] &&
	[ "$(blk_sum "$ORIGIN" 101)" = "$NEW101" ] ||
	fail "(b) the origin's blocks 99 and 101 are not the new data"

info "(c) load again (from the checkpoint): block 100 is still refused"
dmesg_clear
wow_create rot "$ORIGIN" "$CACHE"
D=$(dm_node rot)
dmesg_since | grep wow | sed 's/^/    kernel: /'
[ "$(wow_stat rot loaded_from)" = checkpoint ] ||
	fail "(c) loaded from $(wow_stat rot loaded_from), not the checkpoint"
T=$(( $(date +%s) + 30 ))
while [ "$(wow_stat rot bad_blocks)" = 0 ]; do
	[ "$(date +%s)" -lt "$T" ] ||
		fail "(c) destage did not find block 100 bad after the load: $(wow_status rot)"
	sleep 0.5
done
echo "status: $(wow_status rot)"
[ "$(wow_stat rot dirty_blocks)" = 1 ] ||
	fail "(c) dirty_blocks is $(wow_stat rot dirty_blocks), not 1"
[ "$(wow_stat rot destage_blocks)" = 0 ] ||
	fail "(c) destage wrote $(wow_stat rot destage_blocks) blocks: the rotten one went to the origin"
[ "$(blk_sum "$ORIGIN" 100)" = "$OLD" ] ||
	fail "(c) the origin's block 100 is not the old data"
info "(c) write block 100 anew: it drains"
dd if=/dev/urandom of=/tmp/rot-new.blk bs=4096 count=1 2> /dev/null
dd if=/tmp/rot-new.blk of="$D" bs=4096 seek=100 count=1 oflag=direct \
	conv=notrunc 2> /dev/null || fail "(c) cannot write block 100"
WANT=$(md5sum < /tmp/rot-new.blk | cut -d' ' -f1)
wow_message rot cleaner on
wow_wait_clean rot 60
echo "status: $(wow_status rot)"
[ "$(blk_sum "$D" 100)" = "$WANT" ] || fail "(c) block 100 does not read back"
wow_remove rot
[ "$(blk_sum "$ORIGIN" 100)" = "$WANT" ] ||
	fail "(c) the origin's block 100 is not the new write"
echo "cache-rotten-block: ok"
