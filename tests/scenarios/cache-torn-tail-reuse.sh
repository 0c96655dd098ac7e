#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A bad block right after the end of a segment's life is not a lost
# record when the life's next record is the first of another segment.  A
# header torn in an earlier life of the segment (a power cut, the record
# dropped at that load) can sit exactly where a later life ends; recovery
# took it for the next record, lost, and since later records of that
# epoch prove the next record durable, refused the load (EUCLEAN): a
# bricked cache, though that record was intact in the next segment.
#
# 16-block segments: a 2-block write and six 1-block writes (records of 3
# and 2 blocks) end segment 0's life at block 15, and the next record opens
# segment 1.  A record header with a bad checksum is forged at block 15;
# the cache must load with every block written.
#
# vm: origin=1G cache=64M timeout=120
. "${WOW_LIB:-/wow/lib.sh}"

command -v wowforge > /dev/null || fail "no wowforge in the guest"
BS=4096 EB=65536
wow_reset_disks
wow_create tr "$ORIGIN" "$CACHE" erase_block_size $EB low_watermark 98 high_watermark 99
D=$(dm_node tr)
dd if=/dev/urandom of=/tmp/tr.data bs=$BS count=16 2> /dev/null
run dd if=/tmp/tr.data of="$D" bs=$((2 * BS)) count=1 oflag=direct conv=notrunc
for i in 2 3 4 5 6 7 8 9; do
	dd if=/tmp/tr.data of="$D" bs=$BS skip=$i seek=$i count=1 oflag=direct \
		conv=notrunc 2> /dev/null || fail "write of block $i failed"
done
WANT=$(dd if=/tmp/tr.data bs=$BS count=10 2> /dev/null | md5sum)
wow_remove tr

wowforge scan "$CACHE" > /tmp/tr.scan || fail "wowforge scan: $(cat /tmp/tr.scan)"
sed 's/^/    scan (seg wp seg_seq last_seq): /' /tmp/tr.scan
wp=$(awk '$1 == 0 { print $2 }' /tmp/tr.scan)
[ "$wp" = 15 ] || fail "setup: segment 0 ends at block ${wp:-?}, not 15"
last0=$(awk '$1 == 0 { print $4 }' /tmp/tr.scan)
awk -v s=$((last0 + 1)) '$1 != 0 && $3 == s { f = 1 } END { exit !f }' /tmp/tr.scan ||
	fail "setup: no segment's life starts at record $((last0 + 1))"

info "a torn header (bad checksum) of an earlier life at block 15 of segment 0"
out=$(wowforge rec "$CACHE" 0 badcsum=1) || fail "wowforge: $out"
echo "    $out"

dmesg_clear
wow_create tr "$ORIGIN" "$CACHE" erase_block_size $EB low_watermark 98 high_watermark 99
D=$(dm_node tr)
dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
[ "$(dd if="$D" bs=$BS count=10 iflag=direct 2> /dev/null | md5sum)" = "$WANT" ] ||
	fail "the blocks written read back differently"
wow_remove tr
echo "cache-torn-tail-reuse: ok"
