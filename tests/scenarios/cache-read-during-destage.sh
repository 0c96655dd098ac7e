#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Reads while destage runs (invariant 1): 48 MiB of random 4k writes stay
# (mostly) dirty in the cache; then the watermarks are dropped to 0/1 % so
# destage runs at full rate, and at the same time a verify-read of that data
# and a write+verify load on another region run.  Every read must return
# the last write, whether it comes from the cache, the origin, or a block in
# the middle of its destage.  The destage counters must move during the reads,
# and everything must verify again once the cache is clean.
#
# vm: origin=2G cache=256M timeout=240
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
wow_create rd "$ORIGIN" "$CACHE"
D=$(dm_node rd)

A="--rw=randwrite --bs=4k --offset=0 --size=48M --randseed=31"
B="--rw=randwrite --bsrange=4k-128k --blockalign=4k --offset=1G --size=24M --randseed=32"

info "write region A (48 MiB, random 4k), no read-back yet"
fio_run "$D" $A --iodepth=16 --verify=crc32c --do_verify=0
st0=$(wow_status rd)
echo "status after writing: $st0"
dirty0=$(wow_stat rd dirty_blocks)
destaged0=$(wow_stat rd destage_blocks)
# (below the low watermark only a sequential trickle is destaged, so most
# of A is still dirty)
[ "$dirty0" -gt 4000 ] ||
	fail "expected much of region A (12288 blocks) dirty in the cache: $st0"

info "force destage at full rate, verify A and write+verify B meanwhile"
wow_message rd low_watermark 0
wow_message rd high_watermark 1
fio --name=A --filename="$D" --ioengine=libaio --direct=1 $A --iodepth=8 \
	--verify=crc32c --verify_fatal=1 --verify_only=1 \
	--output=/tmp/rd-A.out &
PA=$!
fio --name=B --filename="$D" --ioengine=libaio --direct=1 $B --iodepth=8 \
	--verify=crc32c --verify_fatal=1 --do_verify=1 \
	--output=/tmp/rd-B.out &
PB=$!
sleep 2
st1=$(wow_status rd)
echo "status 2 s in: $st1"
wait $PA
rA=$?
wait $PB
rB=$?
st2=$(wow_status rd)
echo "status after the reads: $st2"
grep -E 'IOPS|err=|verify|bad' /tmp/rd-A.out /tmp/rd-B.out | sed 's/^/    /'
[ $rA -eq 0 ] || { cat /tmp/rd-A.out; fail "verify-read of A during destage failed"; }
[ $rB -eq 0 ] || { cat /tmp/rd-B.out; fail "write+verify of B during destage failed"; }
destaged1=$(wow_stat rd destage_blocks)
[ "$destaged1" -gt "$destaged0" ] ||
	fail "destage did not run during the reads: $st2"
[ "$(wow_stat rd read_hits)" -gt 0 ] || fail "no read hit the cache: $st2"
echo "destaged $((destaged1 - destaged0)) blocks while reading"

info "wait until clean, verify A and B again (clean copies and origin)"
wow_wait_clean rd 90
fio_verify_only "$D" $A --iodepth=16
fio_verify_only "$D" $B --iodepth=8
wow_no_errors rd
wow_remove rd
echo "cache-read-during-destage: ok"
