#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Invariant 2 for writes that bypass the cache (cleaner mode): a FLUSH
# covers every write completed before it was issued, including a bypassed
# write that was still in flight when an earlier FLUSH flushed the origin.
# The origin is dm-log-writes over dm-delay (writes take 2 s, flushes none),
# so the log holds only what a flush made durable.  A 64 KiB write W goes
# to the origin (cleaner mode: nothing cached); while it is in flight a
# FLUSH F1 flushes the origin; after W completes, FLUSH F2 must flush the
# origin again.  Replaying the log (a power cut right after F2) must give
# W's data.  (The defect: the "origin needs a flush" flag was set when W
# was sent and cleared by F1, so F2 flushed nothing.)
#
# vm: origin=2G cache=256M timeout=180
. "${WOW_LIB:-/wow/lib.sh}"

command -v logreplay > /dev/null || fail "no logreplay in the guest"
MIB=2048
wow_reset_disks
run dmsetup create bf-od --table "0 $((256 * MIB)) linear $ORIGIN 0"
run dmsetup create bf-ol --table "0 $((256 * MIB)) linear $ORIGIN $((256 * MIB))"
run dmsetup create bf-or --table "0 $((256 * MIB)) linear $ORIGIN $((512 * MIB))"
zero_dev "$(dm_node bf-ol)" 1
OD=$(dm_node bf-od)
run dmsetup create bf-dl --table "0 $((256 * MIB)) delay $OD 0 0 $OD 0 2000 $OD 0 0"
run dmsetup create bf-lw --table "0 $((256 * MIB)) log-writes $(dm_node bf-dl) $(dm_node bf-ol)"
wow_create bf "$(dm_node bf-lw)" "$CACHE" cleaner
D=$(dm_node bf)

dd if=/dev/urandom of=/tmp/bf.w bs=64k count=1 2> /dev/null
info "W: a bypassed write that takes 2 s; F1 while it is in flight"
dd if=/tmp/bf.w of="$D" bs=64k seek=16 oflag=direct conv=notrunc \
	2> /dev/null &
WPID=$!
sleep 0.5
run dd if=/dev/zero of="$D" bs=4k count=0 conv=fsync	# F1
wait $WPID || fail "W failed"
[ "$(wow_stat bf writes_bypassed)" -ge 1 ] || fail "W was not bypassed: $(wow_status bf)"
info "F2 after W completed"
run dd if=/dev/zero of="$D" bs=4k count=0 conv=fsync	# F2
run dmsetup message bf-lw 0 mark after-f2

info "the origin as a power cut after F2 leaves it"
zero_dev "$(dm_node bf-or)" 2
run logreplay "$(dm_node bf-ol)" "$(dm_node bf-or)" after-f2
got=$(dd if="$(dm_node bf-or)" bs=64k skip=16 count=1 iflag=direct \
	2> /dev/null | md5sum)
[ "$got" = "$(md5sum < /tmp/bf.w)" ] ||
	fail "W completed before F2 was issued, but F2 did not make it durable on the origin"
wow_remove bf
for d in bf-lw bf-dl bf-or bf-ol bf-od; do
	run dmsetup remove $d
done
echo "crash-bypass-flush: ok"
