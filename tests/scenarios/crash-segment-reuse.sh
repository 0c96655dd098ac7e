#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A segment the replay walks is not reused before a newer checkpoint.
#
# A load after a crash reads the last checkpoint, then follows the log's
# chain from the head it names, record after record.  If a segment
# written after that checkpoint is freed (its blocks all overwritten) and
# opened again before the next checkpoint, the chain meets the new life
# where it expects the old one: the records after the break are not
# replayed, or a later record vouching for the missing one makes the load
# refuse the cache (EUCLEAN).  Boot 1 stretches the interval between
# checkpoints (module parameter checkpoint_interval; a user may set it),
# overwrites a 4 MiB hot set with 160 MiB of 4 KiB writes through a
# 64 MiB cache, so its segments die young and the free list turns over
# two times after the load's checkpoint, writes one last known pass,
# commits and cuts the power.  Boot 2 must load the cache and read back
# exactly what was committed.
#
# vm: origin=2G cache=64M timeout=240 boots=2
. "${WOW_LIB:-/wow/lib.sh}"

SUM=$RESULTS/$WOW_NAME.sum
PARAM=/sys/module/dm_wow/parameters/checkpoint_interval

case $WOW_BOOT in
1)
	wow_reset_disks
	wow_create sr "$ORIGIN" "$CACHE"
	D=$(dm_node sr)
	echo 1073741824 > "$PARAM" || fail "cannot set $PARAM"
	fio_run "$D" --rw=randwrite --bs=4k --offset=0 --size=4M \
		--io_size=160M --iodepth=16 --randseed=71
	fio_run "$D" --rw=write --bs=64k --offset=0 --size=4M --iodepth=4 \
		--verify=crc32c --do_verify=0
	wow_message sr commit
	echo "at the cut: $(wow_status sr)"
	[ "$(wow_stat sr reclaimed_segments)" -ge 60 ] ||
		fail "only $(wow_stat sr reclaimed_segments) segments reclaimed: the free list did not turn over"
	dd if="$D" bs=1M count=4 iflag=direct 2> /dev/null | md5sum > "$SUM" ||
		fail "cannot read the hot set"
	wow_power_cut
	;;
2)
	wow_create sr "$ORIGIN" "$CACHE"
	dmesg_since | grep -E 'wow: .*(checkpoint|replayed|torn|durable)' |
		sed 's/^/    kernel: /'
	echo "loaded: $(wow_status sr)"
	got=$(dd if="$(dm_node sr)" bs=1M count=4 iflag=direct 2> /dev/null |
		md5sum)
	[ "$got" = "$(cat "$SUM")" ] ||
		fail "the hot set reads back other data than was committed"
	fio_verify_only "$(dm_node sr)" --rw=write --bs=64k --offset=0 \
		--size=4M --iodepth=4
	wow_remove sr
	;;
esac
