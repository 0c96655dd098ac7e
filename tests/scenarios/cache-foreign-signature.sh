#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Invariant 7 for a cache device that is in use by something else although
# its first block is zero: an md v1.2 RAID member and a bcache device keep
# their superblock at 4 KiB, and with block_size 512 an LVM label or a GPT
# header sits past the first block.  Without `format` the table is refused
# ("foreign"), and nothing on either device changes; with `format` it is
# formatted; a truly blank device is formatted without it.
#
# vm: origin=2G cache=256M timeout=120
. "${WOW_LIB:-/wow/lib.sh}"

sums() { echo "cache=$(sum_dev "$CACHE" 2) origin=$(sum_dev "$ORIGIN" 2)"; }
# plant OFFSET HEX...: write bytes at OFFSET of the (zeroed) cache device
plant() {
	_off=$1
	shift
	zero_dev "$CACHE" 2
	dd if=/dev/zero of=/tmp/fs.blk bs=4096 count=17 2> /dev/null
	_esc=""
	for _h in "$@"; do
		_esc="$_esc$(printf '\\%03o' $((0x$_h)))"
	done
	# shellcheck disable=SC2059
	printf "$_esc" | dd of=/tmp/fs.blk bs=1 seek="$_off" conv=notrunc \
		2> /dev/null
	dd if=/tmp/fs.blk of="$CACHE" bs=4096 count=17 oflag=direct \
		conv=notrunc 2> /dev/null || fail "cannot write the cache"
}
n=0
check() {	# check DESC OPTS...
	_d=$1
	shift
	_before=$(sums)
	expect_create_fails "$_d" "$(wow_table "$ORIGIN" "$CACHE" "$@")" 'foreign'
	[ "$(sums)" = "$_before" ] || fail "$_d: refused, but a device changed"
	dmesg_since | grep wow | sed 's/^/    kernel: /'
	n=$((n + 1))
}

wow_reset_disks
plant 4096 fc 4e 2b a9
check "md v1.2 superblock at 4 KiB"
plant 4120 c6 85 73 f6 4e 1a 45 ca 82 65 f5 7f 48 ba 6d 81
check "bcache superblock at 4 KiB"
plant 512 4c 41 42 45 4c 4f 4e 45
check "LVM label in sector 1, block_size 512" block_size 512 erase_block_size 65536
plant 512 45 46 49 20 50 41 52 54
check "GPT header in sector 1, block_size 512" block_size 512 erase_block_size 65536

info "with format: formatted"
plant 4096 fc 4e 2b a9
wow_create fs "$ORIGIN" "$CACHE" format
wow_remove fs
info "a blank device: formatted without format"
zero_dev "$CACHE" 2
wow_create fs "$ORIGIN" "$CACHE"
wow_remove fs
echo "$n foreign signatures refused"
echo "cache-foreign-signature: ok"
