#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# needs_check latched by the table a reload replaces (issue 34, finding
# 9): `dmsetup reload` runs the new table's constructor, which reads the
# health block, while the old table is still live.  If the old one fails
# after that (here: a log write error, needs_check written to the health
# block), the resume must still bring the new table up knowing it:
# needs_check=1 and cleaner mode, as any later load would.  Before the
# fix the new table kept what its constructor had read (needs_check=0,
# state ok) until the next load.
#
# The cache device is erase block 0 (linear: the health block stays
# writable) followed by the segments through dm-flakey (lib.sh
# seg_fault_table), as in cache-needs-check.
#
# vm: origin=2G cache=256M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"


wow_reset_disks
seg_fault_table "$CACHE" up | dmsetup create cd || fail "cannot create cd"
C=$(dm_node cd)
JOB="--offset=0 --size=64M --io_size=4M --bs=4k --randseed=62"

wow_create nr "$ORIGIN" "$C" low_watermark 98 high_watermark 99
D=$(dm_node nr)
fio_verify "$D" --rw=randwrite --iodepth=16 $JOB

info "load the next table (its constructor reads the health block now)"
run dmsetup reload nr --table "$(wow_table "$ORIGIN" "$C" low_watermark 98 high_watermark 99)"

info "the live table fails a log write: read_only, needs_check recorded"
seg_fault_set "$CACHE" down
if dd if=/dev/urandom of="$D" bs=4k count=1 seek=200000 oflag=direct \
	2> /dev/null; then
	fail "a write succeeded with the cache failing writes"
fi
wow_status nr | grep -q "^read_only " ||
	fail "not read_only after a log write error: $(wow_status nr)"
sleep 1				# the health block is written by a worker
seg_fault_set "$CACHE" up

info "resume: the new table goes live"
dmesg_clear
run dmsetup resume nr
dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
st=$(wow_status nr)
echo "status: $st"
[ "$(wow_stat nr needs_check)" = 1 ] ||
	fail "the new table missed the needs_check its predecessor latched: $st"
case "$st" in cleaning\ *) ;; *)
	fail "a needs_check cache came up outside cleaner mode: $st" ;;
esac
fio_verify_only "$D" --rw=randwrite --iodepth=16 $JOB
wow_wait_clean nr 120
wow_remove nr
fio_verify_only "$ORIGIN" --rw=randwrite --iodepth=16 $JOB
run dmsetup remove cd
echo "cache-needs-check-reload: ok"
