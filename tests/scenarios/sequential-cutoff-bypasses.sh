#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# sequential_cutoff: a sequential stream past the cutoff goes straight to
# the origin (writes_bypassed grows, the cache takes only the head of the
# stream); blocks already cached are still written through the log, so a
# stream over cached data never leaves a stale cached copy behind.
#
# vm: origin=2G cache=256M timeout=200
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
wow_create sc "$ORIGIN" "$CACHE" sequential_cutoff 1048576
D=$(dm_node sc)

info "cache some blocks inside the range the stream will cover"
fio_verify "$D" --rw=randwrite --iodepth=8 --offset=32M --size=8M \
	--io_size=2M --bs=4k --randseed=71
info "a 64 MiB sequential stream over them"
fio_verify "$D" --rw=write --iodepth=4 --offset=0 --size=64M --bs=128k \
	--randseed=72
st=$(wow_status sc)
echo "status: $st"
byp=$(wow_key sc writes_bypassed)
[ "$byp" -gt 0 ] || fail "nothing bypassed"
valid=$(wow_key sc valid_blocks)
[ "$valid" -lt 16384 ] || fail "the whole stream was cached ($valid blocks)"
run dmsetup message sc 0 cleaner on
wait_clean sc
wow_remove sc
fio_verify_only "$ORIGIN" --rw=write --iodepth=4 --offset=0 --size=64M \
	--bs=128k --randseed=72
echo "sequential-cutoff-bypasses: ok ($byp writes bypassed)"
