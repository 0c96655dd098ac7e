#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Malformed table lines are refused with a kernel message, leave no device
# behind and change nothing on either device (invariant 7).  Then: a cache
# holding a superblock that disagrees with the table, and a cache holding
# foreign data, are refused and left byte-identical unless `format` is
# given.
#
# vm: origin=2G cache=256M timeout=240
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
LEN=$(size_sectors "$ORIGIN")
CLEN=$(size_sectors "$CACHE")

# Recognisable data on both devices; the cache's first 64 KiB (the largest
# block size) stays zero so the cache looks blank: a target that wrongly
# accepted a table would format it, and the checksums would show.
fill_pattern "$ORIGIN" 8 origin
fill_pattern "$CACHE" 8 cache
dd if=/dev/zero of="$CACHE" bs=64k count=1 oflag=direct conv=notrunc \
	2> /dev/null || fail "cannot zero the cache's first 64 KiB"
[ "$(dd if="$CACHE" bs=64k count=1 2> /dev/null | md5sum)" = \
	"$(dd if=/dev/zero bs=64k count=1 2> /dev/null | md5sum)" ] ||
	fail "cache does not start with 64 KiB of zeros"
# A 1 MiB dm-linear slice of the cache, zeroed, beyond the checked 8 MiB.
zero_dev "$CACHE" 1 16
run dmsetup create small --table "0 2048 linear $CACHE 32768"
SMALL=$(dm_node small)

o_sum=$(sum_dev "$ORIGIN" 8)
c_sum=$(sum_dev "$CACHE" 8)
s_sum=$(sum_dev "$SMALL" 1)

T="0 $LEN wow $ORIGIN $CACHE"
B="block_size"

info "argument count"
expect_create_fails "no arguments" "0 $LEN wow"
expect_create_fails "one argument" "0 $LEN wow $ORIGIN"
expect_create_fails "two arguments" "$T"
expect_create_fails "#opt_args not a number" "$T x"
expect_create_fails "#opt_args negative" "$T -1"
expect_create_fails "#opt_args > words (2 for 1)" "$T 2 $B"
expect_create_fails "#opt_args > words (5 for 2)" "$T 5 policy wow"
expect_create_fails "extra words, 0 opt args" "$T 0 $B 4096"
expect_create_fails "extra word after options" "$T 2 $B 4096 policy"

info "option names"
expect_create_fails "unknown option" "$T 2 frobnicate 1"
expect_create_fails "option missing its value" "$T 1 $B"
expect_create_fails "policy missing its value" "$T 1 policy"
expect_create_fails "duplicate option" "$T 4 $B 4096 $B 4096"
expect_create_fails "duplicate flag" "$T 2 cleaner cleaner"

info "block_size"
for v in 0 1000 131072 256 -4096 99999999999999999999 abc 4096x; do
	expect_create_fails "block_size $v" "$T 2 $B $v"
done

info "erase_block_size, write_group_size"
expect_create_fails "erase_block_size not 2^n" "$T 2 erase_block_size 12288"
expect_create_fails "erase_block_size < 4 blocks" "$T 2 erase_block_size 8192"
expect_create_fails "erase_block_size < 4 blocks (64k)" \
	"$T 4 $B 65536 erase_block_size 131072"
expect_create_fails "erase_block_size > 256M" \
	"$T 2 erase_block_size 536870912"
expect_create_fails "write_group_size not 2^n" "$T 2 write_group_size 3000"
expect_create_fails "write_group_size < block" "$T 2 write_group_size 2048"
expect_create_fails "write_group_size > 64M" \
	"$T 2 write_group_size 134217728"

info "policy, watermarks"
expect_create_fails "policy lru" "$T 2 policy lru"
expect_create_fails "policy wowx" "$T 2 policy wowx"
expect_create_fails "low_watermark 100" "$T 2 low_watermark 100"
expect_create_fails "low_watermark -1" "$T 2 low_watermark -1"
expect_create_fails "high_watermark 0" "$T 2 high_watermark 0"
expect_create_fails "high_watermark 101" "$T 2 high_watermark 101"
expect_create_fails "low 90 > high 80" "$T 4 low_watermark 90 high_watermark 80"
expect_create_fails "low 80 = high 80" "$T 4 low_watermark 80 high_watermark 80"

info "destage limits, max_age, sequential_cutoff"
expect_create_fails "max_destage_ios 0" "$T 2 max_destage_ios 0"
expect_create_fails "max_destage_ios 4097" "$T 2 max_destage_ios 4097"
expect_create_fails "max_destage_size not k*block" \
	"$T 2 max_destage_size 6144"
expect_create_fails "max_destage_size < block" \
	"$T 4 $B 8192 max_destage_size 4096"
expect_create_fails "max_destage_size 0" "$T 2 max_destage_size 0"
expect_create_fails "max_destage_size > 8M" "$T 2 max_destage_size 16777216"
expect_create_fails "max_age 604801" "$T 2 max_age 604801"
expect_create_fails "max_age -1" "$T 2 max_age -1"
expect_create_fails "sequential_cutoff > 1G" \
	"$T 2 sequential_cutoff 1073741825"

info "devices and lengths"
expect_create_fails "origin = cache" "0 $CLEN wow $CACHE $CACHE 0"
expect_create_fails "nonexistent origin" "0 $LEN wow /dev/nonexistent $CACHE 0"
expect_create_fails "nonexistent cache" "0 $LEN wow $ORIGIN /dev/nonexistent 0"
expect_create_fails "zero length (dm core)" "0 0 wow $ORIGIN $CACHE 0" \
	"zero-length|wow:"
expect_create_fails "length > origin" "0 $((LEN + 8)) wow $ORIGIN $CACHE 0"
expect_create_fails "length not k*block (4k)" \
	"0 $((LEN - 4)) wow $ORIGIN $CACHE 0"
expect_create_fails "length not k*block (64k)" \
	"0 $((LEN - 8)) wow $ORIGIN $CACHE 2 $B 65536"
expect_create_fails "cache too small (1 MiB)" "0 $LEN wow $ORIGIN $SMALL 0"

info "neither device changed, no device left behind"
[ "$(dm_count)" -eq 1 ] || fail "dm devices left behind: $(dmsetup ls)"
[ "$(sum_dev "$ORIGIN" 8)" = "$o_sum" ] || fail "origin content changed"
[ "$(sum_dev "$CACHE" 8)" = "$c_sum" ] || fail "cache content changed"
[ "$(sum_dev "$SMALL" 1)" = "$s_sum" ] || fail "small cache content changed"
run dmsetup remove small

info "control: a good table on the same devices is accepted"
wow_create good "$ORIGIN" "$CACHE"
wow_remove good

info "cache holding a superblock that disagrees with the table"
c_sum=$(sum_dev "$CACHE" 8)
expect_create_fails "superblock: other block_size" "$T 2 $B 8192"
expect_create_fails "superblock: other erase_block_size" \
	"$T 2 erase_block_size 2097152"
HALF=$((LEN / 2))
run dmsetup create half --table "0 $HALF linear $ORIGIN 0"
expect_create_fails "superblock: other origin size" \
	"0 $HALF wow $(dm_node half) $CACHE 0"
[ "$(sum_dev "$CACHE" 8)" = "$c_sum" ] ||
	fail "refused tables changed a formatted cache"
info "... accepted with format"
wow_create fmt "$(dm_node half)" "$CACHE" format
wow_remove fmt
run dmsetup remove half

info "cache holding foreign data"
dd if=/dev/urandom of="$CACHE" bs=4k count=1 oflag=direct conv=notrunc \
	2> /dev/null || fail "cannot write random data"
c_sum=$(sum_dev "$CACHE" 8)
expect_create_fails "foreign data, no format" "$T 0"
expect_create_fails "foreign data, options, no format" "$T 2 policy cscan"
[ "$(sum_dev "$CACHE" 8)" = "$c_sum" ] ||
	fail "refused table changed a cache holding foreign data"
info "... accepted with format"
wow_create fmt "$ORIGIN" "$CACHE" format
wow_remove fmt

echo "bad-tables: $BAD_TABLES tables refused, devices unchanged"
[ "$BAD_TABLES" -ge 22 ] || fail "only $BAD_TABLES bad tables checked"
