#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Invariant 7 for a wrong origin of the right size: after device names swap
# at boot, a table can name another disk or partition as the origin, and
# that disk would receive the cache's dirty data.  dm-wow records the
# origin's identity at format (a partition's UUID here: the MBR disk
# signature and partition number) and refuses another origin, changing
# nothing.  The origin disk gets two 512 MiB MBR partitions; a cache
# formatted over the first is refused over the second and loads again over
# the first with its data.  (Disks without a partition UUID or a unique id,
# such as virtio-blk whole disks, have no identity to check.)
#
# vm: origin=2G cache=256M timeout=120
. "${WOW_LIB:-/wow/lib.sh}"

P=512		# MiB per partition
wow_reset_disks
# MBR: disk signature 0x5eed0c0d, two Linux partitions at 1 MiB and 513 MiB
le32() {	# le32 N: four octal escapes, little endian
	printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $((($1 >> 8) & 255)) \
		$((($1 >> 16) & 255)) $((($1 >> 24) & 255))
}
part() {	# part START_SECTOR SECTORS: one 16-byte entry
	printf '\\000\\000\\000\\000\\203\\000\\000\\000%s%s' "$(le32 "$1")" "$(le32 "$2")"
}
dd if=/dev/zero of=/tmp/oi.mbr bs=512 count=1 2> /dev/null
# shellcheck disable=SC2059
printf "$(le32 $((0x5eed0c0d)))" | dd of=/tmp/oi.mbr bs=1 seek=440 conv=notrunc 2> /dev/null
# shellcheck disable=SC2059
printf "$(part 2048 $((P * 2048)))$(part $(((P + 1) * 2048)) $((P * 2048)))" |
	dd of=/tmp/oi.mbr bs=1 seek=446 conv=notrunc 2> /dev/null
printf '\125\252' | dd of=/tmp/oi.mbr bs=1 seek=510 conv=notrunc 2> /dev/null
run dd if=/tmp/oi.mbr of="$ORIGIN" bs=512 count=1 oflag=direct conv=notrunc
run blockdev --rereadpt "$ORIGIN"
sleep 1
P1=${ORIGIN}1 P2=${ORIGIN}2
[ -b "$P1" ] && [ -b "$P2" ] || fail "no partitions $P1 $P2: $(cat /proc/partitions)"
[ "$(size_sectors "$P1")" = "$(size_sectors "$P2")" ] || fail "partitions differ in size"

wow_create oi "$P1" "$CACHE"
dd if=/dev/urandom of=/tmp/oi.data bs=1M count=4 2> /dev/null
run dd if=/tmp/oi.data of="$(dm_node oi)" bs=1M oflag=direct conv=notrunc
wow_remove oi

before="cache=$(sum_dev "$CACHE" 8) p2=$(sum_dev "$P2" 8)"
expect_create_fails "another partition of the same size as the origin" \
	"$(wow_table "$P2" "$CACHE")" 'formatted for'
[ "cache=$(sum_dev "$CACHE" 8) p2=$(sum_dev "$P2" 8)" = "$before" ] ||
	fail "refused, but a device changed"
dmesg_since | grep wow | sed 's/^/    kernel: /'

info "the right origin: loads, data intact"
wow_create oi "$P1" "$CACHE"
got=$(dd if="$(dm_node oi)" bs=1M count=4 iflag=direct 2> /dev/null | md5sum)
[ "$got" = "$(md5sum < /tmp/oi.data)" ] || fail "data differs"
wow_remove oi
zero_dev "$ORIGIN" 1
run blockdev --rereadpt "$ORIGIN"
echo "origin-identity: ok"
