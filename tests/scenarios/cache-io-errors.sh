#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# I/O errors (invariant 8), injected with dm-flakey under each device:
# * origin write errors: destage fails, the data stays dirty and readable,
#   origin_errors counts, the state stays ok; once the origin works again
#   destage completes and the origin alone holds the data;
# * cache write errors: the target goes read_only, new writes fail, reads
#   of cached data still return it;
# * cache read errors: a read of a cached block fails (EIO), the target
#   goes failed, and stale data is never returned.
#
# vm: origin=2G cache=256M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

OLEN=$(size_sectors "$ORIGIN")
CLEN=$(size_sectors "$CACHE")
# flakey_up NAME DEV LEN / flakey_down NAME DEV LEN [FEATURE]
flakey_table_up() { echo "0 $3 flakey $2 0 1 0"; }
flakey_table_down() {
	if [ -n "$4" ]; then echo "0 $3 flakey $2 0 0 1 1 $4"
	else echo "0 $3 flakey $2 0 0 1"; fi
}
flakey_set() {	# NAME DEV LEN up|down [FEATURE]
	if [ "$4" = up ]; then t=$(flakey_table_up "$1" "$2" "$3")
	else t=$(flakey_table_down "$1" "$2" "$3" "$5"); fi
	run dmsetup suspend "$1"
	run dmsetup reload "$1" --table "$t"
	run dmsetup resume "$1"
}

wow_reset_disks
run dmsetup create of --table "$(flakey_table_up of "$ORIGIN" "$OLEN")"
run dmsetup create cf --table "$(flakey_table_up cf "$CACHE" "$CLEN")"
OF=$(dm_node of)
CF=$(dm_node cf)
wow_create ioe "$OF" "$CF"
D=$(dm_node ioe)
JOB="--offset=0 --size=1G --io_size=16M --bs=4k --randseed=51"

info "origin write errors"
fio_verify "$D" --rw=randwrite --iodepth=16 $JOB
flakey_set of "$ORIGIN" "$OLEN" down error_writes
run dmsetup message ioe 0 cleaner on
sleep 5
st=$(wow_status ioe)
echo "status: $st"
[ "$(wow_key ioe origin_errors)" -gt 0 ] || fail "no origin errors counted"
[ "$(wow_field ioe 6)" -gt 0 ] || fail "data was marked clean on failed writes"
echo "$st" | grep -q "^cleaning " || fail "state changed on origin errors"
fio_verify_only "$D" --rw=randwrite --iodepth=16 $JOB
flakey_set of "$ORIGIN" "$OLEN" up
wait_clean ioe 120
run dmsetup message ioe 0 cleaner off
wow_remove ioe
fio_verify_only "$OF" --rw=randwrite --iodepth=16 $JOB

info "cache write errors"
zero_dev "$CACHE" 4
wow_create ioe "$OF" "$CF"
JOB2="--offset=1G --size=512M --io_size=8M --bs=4k --randseed=52"
fio_verify "$D" --rw=randwrite --iodepth=16 $JOB2
flakey_set cf "$CACHE" "$CLEN" down error_writes
if dd if=/dev/urandom of="$D" bs=4k count=1 seek=100 oflag=direct \
	2>/dev/null; then
	fail "a write succeeded with the cache failing writes"
fi
wow_status ioe | grep -q "^read_only " ||
	fail "not read_only after a log write error: $(wow_status ioe)"
fio_verify_only "$D" --rw=randwrite --iodepth=16 $JOB2

info "cache read errors"
flakey_set cf "$CACHE" "$CLEN" down
if fio --name=wow --filename="$D" --ioengine=libaio --direct=1 \
	--verify=crc32c --verify_only=1 --verify_fatal=1 --rw=randwrite \
	--iodepth=1 $JOB2 --output=/tmp/wow-fio.out > /dev/null 2>&1; then
	fail "cached data read back while the cache device fails reads"
fi
grep -E "error|err=" /tmp/wow-fio.out | head -n 3
echo "reads of cached blocks failed, as they must"
wow_status ioe | grep -q "^failed " ||
	fail "not failed after a cache read error: $(wow_status ioe)"
grep -q "verify: bad" /tmp/wow-fio.out &&
	fail "a read returned wrong data instead of an error"
flakey_set cf "$CACHE" "$CLEN" up
dmsetup remove ioe || fail "cannot remove after errors"
dmsetup remove cf
dmsetup remove of
echo "cache-io-errors: ok"
