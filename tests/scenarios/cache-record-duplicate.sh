#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Two copies of one origin block in one log record.  Two writes of the same
# block in flight together can share a group commit; the running cache
# takes the later one (the bios' order), so recovery must too, or a block
# reads one thing before a reload and another after it.  A record with two
# data blocks for origin block 5 is forged (wowforge, valid checksums) and
# block 5 must read the second.  Recovery kept the first before the fix.
#
# vm: origin=1G cache=64M timeout=120
. "${WOW_LIB:-/wow/lib.sh}"

command -v wowforge > /dev/null || fail "no wowforge in the guest"
BS=4096 EB=1048576
wow_reset_disks
wow_create rd "$ORIGIN" "$CACHE" erase_block_size $EB
wow_remove rd

info "forge a record in segment 1: data blocks 0 and 1 both of origin block 5"
out=$(wowforge rec "$CACHE" 1 nr_data=2 ob=5 ob_stride=0) ||
	fail "wowforge: $out"
echo "    $out"
at=$(echo "$out" | awk '$1 == "rec" && $3 == "at" { print $4 }')
[ -n "$at" ] || fail "no position in: $out"
# segment 1 starts an erase block after segment 0 (first_segment_sector);
# the record's data blocks follow its header
first=$(( ($(read_u "$CACHE" 48 8) * 512 + EB) / BS + at + 1 ))
A=$(dd if="$CACHE" bs=$BS skip=$first count=1 iflag=direct 2> /dev/null | md5sum)
B=$(dd if="$CACHE" bs=$BS skip=$((first + 1)) count=1 iflag=direct 2> /dev/null | md5sum)
[ "$A" != "$B" ] || fail "setup: the two forged copies have the same content"

wow_create rd "$ORIGIN" "$CACHE" erase_block_size $EB
D=$(dm_node rd)
dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
R=$(dd if="$D" bs=$BS skip=5 count=1 iflag=direct 2> /dev/null | md5sum)
[ "$R" != "$A" ] || fail "block 5 reads the record's first copy, not its later one"
[ "$R" = "$B" ] || fail "block 5 reads neither copy of the record"
wow_remove rd
echo "cache-record-duplicate: ok"
