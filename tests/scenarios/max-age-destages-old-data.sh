#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# max_age: dirty data older than max_age is destaged even below the low
# watermark and while foreground I/O keeps the device busy (so idle
# destage cannot be what cleaned it).  Control: with max_age 0 the same
# dirty data stays dirty under the same load.
#
# vm: origin=2G cache=256M timeout=200
. "${WOW_LIB:-/wow/lib.sh}"

# busy_reads DEV SECONDS: keep DEV busy with reads
busy_reads() {
	fio --name=busy --filename="$1" --ioengine=libaio --direct=1 \
		--rw=randread --bs=4k --iodepth=4 --size=64M --offset=1536M \
		--time_based --runtime="$2" > /dev/null 2>&1 ||
		fail "busy reads failed"
}

for age in 0 2; do
	info "max_age $age"
	wow_reset_disks
	wow_create ma "$ORIGIN" "$CACHE" max_age "$age"
	D=$(dm_node ma)
	# the reads start first: a gap of 1 s between the write and the
	# reads (a slow fio start) would let idle destage clean everything
	busy_reads "$D" 30 &
	busy=$!
	sleep 1
	fio_verify "$D" --rw=randwrite --iodepth=8 --offset=0 --size=1G \
		--io_size=4M --bs=4k --randseed=61
	sleep 8
	dirty=$(wow_field ma 6)
	echo "max_age $age: $dirty dirty blocks 8 s after the writes, under reads: $(wow_status ma)"
	if [ "$age" -eq 0 ]; then
		[ "$dirty" -gt 0 ] || fail "destaged without max_age: idle?"
	else
		[ "$dirty" -eq 0 ] || fail "max_age $age left $dirty dirty blocks"
	fi
	wait $busy || fail "busy reads failed"
	wow_remove ma
done
echo "max-age-destages-old-data: ok"
