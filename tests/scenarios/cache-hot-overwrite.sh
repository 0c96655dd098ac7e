#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Overwrites of cached blocks (invariant 1): a zipf-skewed hot set written
# many times over, and a 1 MiB region rewritten ~32 times, each checked by
# fio's crc32c verify against the last write of every block; writes must
# hit cached blocks (write_hits > 0).  After the device is removed and
# created again (recovery from a log full of superseded copies) the newest
# data must still be there (md5 of both regions unchanged).
#
# vm: origin=2G cache=256M timeout=240
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
wow_create hot "$ORIGIN" "$CACHE"
D=$(dm_node hot)

# fio tracks overlapping writes with norandommap and verifies the newest.
info "zipf hot set: 32 MiB region, 12 MiB of 4k writes, iodepth 16"
fio_verify "$D" --rw=randwrite --bs=4k --iodepth=16 --offset=0 --size=32M \
	--io_size=12M --norandommap --serialize_overlap=1 --random_distribution=zipf:1.2 \
	--randseed=21
info "1 MiB region rewritten ~32 times, 4k writes, iodepth 8"
fio_verify "$D" --rw=randwrite --bs=4k --iodepth=8 --offset=512M --size=1M \
	--io_size=32M --norandommap --serialize_overlap=1 --randseed=22
info "the same 256 KiB rewritten sequentially 20 times"
fio_verify "$D" --rw=write --bs=16k --iodepth=4 --offset=768M --size=256k \
	--loops=20 --randseed=23

st=$(wow_status hot)
echo "status: $st"
[ "$(wow_stat hot write_hits)" -gt 0 ] ||
	fail "overwrites of cached blocks counted no write_hits: $st"
wow_no_errors hot

H1=$(sum_dev "$D" 32 0) H2=$(sum_dev "$D" 1 512) H3=$(sum_dev "$D" 1 768)
info "remove, create again (recovery), compare"
wow_remove hot
wow_create hot "$ORIGIN" "$CACHE"
D=$(dm_node hot)
dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
[ "$(sum_dev "$D" 32 0)" = "$H1" ] || fail "hot set changed across reload"
[ "$(sum_dev "$D" 1 512)" = "$H2" ] ||
	fail "rewritten 1 MiB region changed across reload"
[ "$(sum_dev "$D" 1 768)" = "$H3" ] ||
	fail "sequentially rewritten region changed across reload"
info "after reload: $(wow_status hot)"
wow_no_errors hot
wow_remove hot
echo "cache-hot-overwrite: ok"
