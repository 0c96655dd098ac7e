#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Cleaner mode: `cleaner on` destages every dirty block (state `cleaning`,
# dirty_blocks reaches 0), writes made meanwhile go straight to the origin
# (writes_bypassed grows) or are destaged too, and then the origin ALONE,
# with the wow device removed, holds every acknowledged write: fio verifies
# all of it directly on the origin device.
#
# vm: origin=2G cache=256M timeout=240
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
wow_create cl "$ORIGIN" "$CACHE"
D=$(dm_node cl)

A="--rw=randwrite --bs=4k --offset=0 --size=32M --randseed=61"
B="--rw=randwrite --bsrange=4k-1m --blockalign=4k --offset=512M --size=64M --randseed=62"
C="--rw=randwrite --bs=4k --offset=1G --size=16M --randseed=63"
# A again with other data: the origin must end up with the newer copies
A2="--rw=randwrite --bsrange=4k-16k --blockalign=4k --offset=0 --size=32M --randseed=64"

info "write A, B, then overwrite A"
fio_run "$D" $A --iodepth=16 --verify=crc32c --do_verify=0
fio_run "$D" $B --iodepth=8 --verify=crc32c --do_verify=0
fio_run "$D" $A2 --iodepth=16 --verify=crc32c --do_verify=0
st=$(wow_status cl)
echo "status: $st"
[ "$(wow_stat cl dirty_blocks)" -gt 0 ] || fail "nothing dirty: $st"

info "cleaner on"
bypassed0=$(wow_stat cl writes_bypassed)
wow_message cl cleaner on
st=$(wow_status cl)
echo "status: $st"
[ "${st%% *}" = cleaning ] || fail "state is not 'cleaning' in cleaner mode: $st"
info "write C while cleaning"
fio_verify "$D" $C --iodepth=16
wow_wait_clean cl 120
st=$(wow_status cl)
echo "clean: $st"
[ "$(wow_stat cl writes_bypassed)" -gt "$bypassed0" ] ||
	fail "writes to uncached blocks in cleaner mode did not bypass the cache: $st"
wow_no_errors cl
wow_remove cl

info "verify everything on the origin alone"
fio_verify_only "$ORIGIN" $B --iodepth=8
fio_verify_only "$ORIGIN" $A2 --iodepth=16
fio_verify_only "$ORIGIN" $C --iodepth=16
echo "cache-cleaner: ok"
