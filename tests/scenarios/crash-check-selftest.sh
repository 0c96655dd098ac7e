#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The crash checker can fail: `wowcrash write` runs for a few seconds on a
# wow device, `wowcrash check` passes, and then each kind of damage to one
# journalled block -- an older valid generation (lost/resurrected write),
# a bad checksum, zeros, another block's record -- and a write to a block
# no thread owns must each make `wowcrash check` fail.
#
# vm: origin=2G cache=64M timeout=180
. "${WOW_LIB:-/wow/lib.sh}"

command -v wowcrash > /dev/null || fail "no wowcrash in the guest"
wow_reset_disks
# wowcrash's span must start out zero (earlier scenarios in this boot wrote
# there): 64 MiB..320 MiB
zero_dev "$ORIGIN" 256 64
wow_create cs "$ORIGIN" "$CACHE" low_watermark 0 high_watermark 1
D=$(dm_node cs)
J=/tmp/cs-journal
rm -rf $J
mkdir -p $J

info "write for 4 s"
run wowcrash write "$D" $J 1 7 4
info "check (must pass)"
run wowcrash check "$D" $J
for mode in old garbage zero swap; do
	info "forge: $mode"
	run wowcrash forge "$D" $J $mode
	if wowcrash check "$D" $J > /tmp/cs-check.out; then
		cat /tmp/cs-check.out
		fail "check passed although a journalled block holds '$mode'"
	fi
	sed 's/^/    /' /tmp/cs-check.out
done
info "stray write to a block no thread owns"
set -- $(wowcrash span)
dd if=/dev/urandom of="$D" bs=4096 seek=$(($1 / 4096 + 1)) count=1 \
	oflag=direct conv=notrunc 2> /dev/null
if wowcrash check "$D" $J > /tmp/cs-check.out; then
	cat /tmp/cs-check.out
	fail "check passed although a block no thread owns was written"
fi
sed 's/^/    /' /tmp/cs-check.out
grep -q ' 1 stray' /tmp/cs-check.out || fail "the stray write was not counted"
wow_remove cs
echo "crash-check-selftest: ok"
