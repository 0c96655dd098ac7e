#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The checkpoint (format versions 2 to 4, issue 14).  A 256 MiB cache takes
# 16 MiB that it destages (clean blocks), 24 MiB more that stay dirty, and
# a discard (tombstones), and is removed cleanly; then:
#  (a) the next load reads the checkpoint, not the log: status says
#      loaded_from=checkpoint, the cache device's sectors read while the
#      table loads are at most 1/512 of the cache (1/384 from format
#      version 5, whose slot entries hold each block's crc) plus the superblock
#      probe (68 KiB) and one erase block (the rest of the log head's
#      segment, read to tell a torn tail from a corrupt record), dirty_blocks and valid_blocks are what they were at
#      the removal, and the data verifies.  The same cache with its
#      checkpoint dropped loads by the log scan; both reads are printed.
#  (b) records written after a checkpoint are replayed along the log's
#      chain: after more writes and a commit, a power cut; the next boot
#      loads the checkpoint and replays what followed it ("replayed N
#      records"), reading far less than the scan, and every write
#      verifies, the ones after the load too; a range cached and then
#      discarded after the checkpoint reads zeros (its tombstone is
#      replayed over the copies).
#  (c) a damaged checkpoint (a byte flipped in its header, in a slot table
#      block, in a segment stream block) is not used: the load scans the
#      log ("does not check") and the data verifies.
#  (d) a version 1 cache (the log moved to version 1's place and the
#      superblock forged back to version 1) loads by the scan and is
#      upgraded: its geometry is version 2's, so the superblock is
#      rewritten as version 2 and the next load uses a checkpoint (version
#      2's, in erase block 0).
#  (e) a version 1 cache where version 2's checkpoint would move the
#      segments (16 KiB erase blocks) stays version 1, says so, and keeps
#      working: written data reads back after a reload (by the scan).
#  (f) a version 3 cache (forged from a version 4 one: the log moved down
#      one erase block) loads by the scan, writes a version 3 checkpoint
#      at its clean shutdown and loads from it, still version 3.
#  Caches formatted now are version 4 (two areas from erase block 1, each
#  checkpoint appended, with a closing copy of its header, into the one
#  not holding the newest): (a) to (c); (c) damages the newest one.
#
# vm: origin=2G cache=256M timeout=420 boots=2
. "${WOW_LIB:-/wow/lib.sh}"
# test builds: each checkpoint's unwritten blocks checked against the index
wow_test_hook test_verify_checkpoints 1 || :

DEV=$(basename "$(readlink -f "$CACHE")")
CSECT=$(size_sectors "$CACHE")
# A2 is written to be discarded in part, so it is not verified
A="--rw=randwrite --bs=4k --offset=0 --size=8M --randseed=61"
A2="--rw=randwrite --bs=4k --offset=8M --size=8M --randseed=64"
B="--rw=randwrite --bsrange=4k-128k --blockalign=4k --offset=512M --size=24M --randseed=62"
C="--rw=randwrite --bs=4k --offset=1G --size=8M --randseed=63"
FAILED=""
nok() { echo "NOT OK: $*"; FAILED="$FAILED; $*"; }

reads() { awk '{ print $3 }' "/sys/block/$DEV/stat"; }

# load NAME: create the device, print what the load read; sets LOAD_READ
# (sectors of the cache device read while the table loaded)
load() {
	_r0=$(reads)
	wow_create ck "$ORIGIN" "$CACHE"
	LOAD_READ=$(($(reads) - _r0))
	echo "$1: $(wow_stat ck loaded_from), $LOAD_READ sectors read (load_kib=$(wow_stat ck load_kib)); dirty $(wow_stat ck dirty_blocks) valid $(wow_stat ck valid_blocks)"
	dmesg_since | grep -E 'wow: .*(checkpoint|recovered)' | sed 's/^/    kernel: /'
}

verify_all() {	# verify_all WHAT: A, B and (with c) C read back
	fio_verify_only "$(dm_node ck)" $A --iodepth=16
	fio_verify_only "$(dm_node ck)" $B --iodepth=8
	[ "${1:-}" != c ] || fio_verify_only "$(dm_node ck)" $C --iodepth=16
}

# counts MSG: "DIRTY VALID" from the kernel's line matching MSG
counts() {
	dmesg_since | grep -E "wow: .*$1" | tail -n 1 |
		sed -n 's/.* \([0-9]*\) dirty of \([0-9]*\) valid blocks.*/\1 \2/p'
}

remove() {	# remove: what the checkpoint written at the removal holds
	dmesg_clear
	wow_remove ck
	SAVED=$(counts 'checkpoint [0-9]* written')
	echo "removed: checkpoint of $SAVED (dirty valid)"
	[ -n "$SAVED" ] || nok "no checkpoint written at the removal"
}

# same_counts WHAT: the load found what the last checkpoint held
same_counts() {
	_got=$(counts '(loaded checkpoint|recovered)')
	[ -n "$_got" ] && [ "$_got" = "$SAVED" ] ||
		nok "$1: loaded '$_got' (dirty valid), the checkpoint held '$SAVED'"
}

case $WOW_BOOT in
1)
	wow_reset_disks
	wow_create ck "$ORIGIN" "$CACHE" low_watermark 0 high_watermark 1
	D=$(dm_node ck)
	info "write A and A2 and destage them, then B (kept dirty), then discard 1 MiB of A2"
	fio_run "$D" $A --iodepth=16 --verify=crc32c --do_verify=0
	fio_run "$D" $A2 --iodepth=16
	wow_wait_clean ck 120
	wow_remove ck
	wow_create ck "$ORIGIN" "$CACHE" low_watermark 90 high_watermark 95
	D=$(dm_node ck)
	fio_run "$D" $B --iodepth=8 --verify=crc32c --do_verify=0
	run blkdiscard -o $((8 << 20)) -l $((1 << 20)) "$D"
	echo "before removal: $(wow_status ck)"
	remove
	set -- $SAVED
	[ "${1:-0}" -gt 0 ] && [ "${2:-0}" -gt "$1" ] ||
		fail "want both dirty and clean blocks cached: '$SAVED' (dirty valid)"

	info "(a) load after a clean shutdown: the checkpoint"
	load "(a) checkpoint"
	[ "$(wow_stat ck loaded_from)" = checkpoint ] ||
		nok "(a) not loaded from the checkpoint"
	# 1/512 (1/384 in version 5: 10-byte slot entries), the superblock
	# probe, and the rest of the log head's segment (read to tell a torn
	# tail from a corrupt record)
	FRAC=512
	[ "$(read_u "$CACHE" 4 4)" -lt 5 ] || FRAC=384
	LIMIT=$((CSECT / FRAC + 136 + 2048))
	[ "$LOAD_READ" -le $LIMIT ] ||
		nok "(a) the load read $LOAD_READ sectors, more than 1/$FRAC of the cache, the probe and an erase block ($LIMIT)"
	same_counts "(a)"
	CKREAD=$LOAD_READ
	verify_all
	remove
	drop_checkpoint "$CACHE"
	load "(a) the same cache by the log scan"
	[ "$(wow_stat ck loaded_from)" = log ] ||
		nok "(a) a dropped checkpoint was used"
	same_counts "(a) scan"
	echo "(a) read at load: checkpoint $CKREAD sectors, log scan $LOAD_READ sectors, cache $CSECT sectors"
	verify_all
	remove

	info "(b) writes after a checkpoint load, then a power cut"
	load "(b) checkpoint"
	[ "$(wow_stat ck loaded_from)" = checkpoint ] ||
		nok "(b) not loaded from the checkpoint"
	fio_run "$(dm_node ck)" $C --iodepth=16 --verify=crc32c --do_verify=0
	# a tombstone in the replay: F cached, committed, then discarded,
	# must read zeros after the cut (the origin under it is zero)
	run dd if=/dev/urandom of=/tmp/ck.f bs=64k count=8
	run dd if=/tmp/ck.f of="$(dm_node ck)" bs=64k seek=$((1536 * 16)) \
		oflag=direct conv=notrunc
	wow_message ck commit
	run blkdiscard -o $((1536 << 20)) -l $((512 << 10)) "$(dm_node ck)"
	wow_message ck commit
	echo "at the cut: $(wow_status ck)"
	[ -z "$FAILED" ] || fail "${FAILED#; }"
	wow_power_cut
	;;
2)
	load "(b) after the cut"
	[ "$(wow_stat ck loaded_from)" = checkpoint ] ||
		nok "(b) not loaded from the checkpoint and the log after it"
	dmesg_since | grep -q 'replayed [0-9]* records' ||
		nok "(b) nothing replayed after the checkpoint"
	[ "$(dd if="$(dm_node ck)" bs=64k skip=$((1536 * 16)) count=8 \
		iflag=direct 2> /dev/null | tr -d '\0' | wc -c)" = 0 ] ||
		nok "(b) a block discarded after the checkpoint came back"
	verify_all c
	remove

	info "(c) damaged checkpoints are not used"
	# the newest checkpoint's header (its area's first block), first
	# slot table block, first stream block and (format version 3 and
	# later) the header's closing copy after the tables (S slot table and
	# G stream blocks, as the header says at offsets 80 and 88).  Format
	# version 4 keeps the checkpoint before it valid in the other area
	# (its chain reaches the log head): a newest checkpoint without a
	# whole header (as a power cut while writing it leaves it) is passed
	# over for that one; damaged tables under a whole header mean the
	# scan
	BS=4096
	V=$(read_u "$CACHE" 4 4)
	WHATS="header slot_table segment_stream"
	[ "$V" -ge 3 ] && WHATS="$WHATS closing_copy"
	for what in $WHATS; do
		load "(c) before damaging the $what"
		[ "$(wow_stat ck loaded_from)" = checkpoint ] ||
			nok "(c) not loaded from the checkpoint"
		remove
		CB=$(ckpt_newest "$CACHE")
		[ -n "$CB" ] || nok "(c) no valid checkpoint after a clean shutdown"
		NV=0
		for b in $(ckpt_blocks "$CACHE"); do
			[ "$b" = "$CB" ] || [ "$(read_u "$CACHE" $((b * BS + 32)) 4)" = 0 ] ||
				NV=$((NV + 1))
		done
		[ "$V" -lt 4 ] || [ $NV = 1 ] ||
			nok "(c) version 4 kept no valid checkpoint in the other area"
		SB=$(read_u "$CACHE" $((CB * BS + 80)) 8)
		GB=$(read_u "$CACHE" $((CB * BS + 88)) 8)
		case $what in
		header) off=$((CB * BS + 40)) ;;
		slot_table) off=$(((CB + 1) * BS + 100)) ;;
		segment_stream) off=$(((CB + 1 + SB) * BS + 10)) ;;
		closing_copy) off=$(((CB + 1 + SB + GB) * BS + 40)) ;;
		esac
		echo "flip byte $off ($what of the area at block $CB; $SB slot table and $GB stream blocks): $(flip_byte "$CACHE" "$off")"
		load "(c) damaged $what"
		case $V$what in
		[45]header | [45]closing_copy)
			[ "$(wow_stat ck loaded_from)" = checkpoint ] ||
				nok "(c) a checkpoint with a damaged $what: not loaded from the one before it"
			[ $what = header ] ||
				dmesg_since | grep -q 'is not whole, written when the log stopped; loading checkpoint' ||
				nok "(c) no message that the newest checkpoint was passed over"
			;;
		*)
			[ "$(wow_stat ck loaded_from)" = log ] ||
				nok "(c) a checkpoint with a damaged $what was used"
			;;
		esac
		same_counts "(c) $what"
		verify_all c
		remove
	done

	info "(d) a version 1 cache is upgraded where its geometry allows"
	command -v wowforge > /dev/null || fail "no wowforge in the guest"
	# version 1's segments start at erase block 1, version 3's and 4's
	# after the checkpoint areas (erase block 2 or 3 here): move the log
	# down to erase block 1, clear what is left after it, and forge the
	# superblock to version 1
	EBS=$(read_u "$CACHE" 24 4)
	NEB=$((CSECT * 512 / EBS))
	FEB=$(($(read_u "$CACHE" 48 8) * 512 / EBS))
	[ "$FEB" -ge 2 ] || nok "(d) segment 0 is at erase block $FEB"
	run dd if="$CACHE" of="$CACHE" bs="$EBS" skip=$FEB seek=1 \
		count=$((NEB - FEB)) iflag=direct oflag=direct conv=notrunc
	run dd if=/dev/zero of="$CACHE" bs="$EBS" seek=$((NEB - FEB + 1)) \
		count=$((FEB - 1)) oflag=direct conv=notrunc
	run wowforge sb "$CACHE" version 1
	run wowforge sb "$CACHE" first_segment_sector $((EBS / 512))
	run wowforge sb "$CACHE" nr_segments $((NEB - 1))
	load "(d) version 1"
	[ "$(wow_stat ck loaded_from)" = log ] ||
		nok "(d) a version 1 cache was not loaded by the log scan"
	dmesg_since | grep -q 'upgraded to format version 2' ||
		nok "(d) no upgrade message"
	[ "$(read_u "$CACHE" 4 4)" = 2 ] ||
		nok "(d) the superblock still says version $(read_u "$CACHE" 4 4)"
	verify_all c
	remove
	load "(d) after the upgrade"
	[ "$(wow_stat ck loaded_from)" = checkpoint ] ||
		nok "(d) the upgraded cache wrote no checkpoint"
	same_counts "(d)"
	verify_all c
	wow_remove ck

	info "(e) a version 1 cache whose checkpoint would not fit stays version 1"
	# 16 KiB erase blocks: version 2 would put the segments after the
	# area, version 1 has them at erase block 1; a blank cache forged to
	# version 1
	wow_reset_disks
	wow_create ck "$ORIGIN" "$CACHE" erase_block_size 16384
	wow_remove ck
	run wowforge sb "$CACHE" version 1
	run wowforge sb "$CACHE" first_segment_sector 32
	run wowforge sb "$CACHE" nr_segments $(((CSECT - 32) / 32))
	load16() {
		_r0=$(reads)
		wow_create ck "$ORIGIN" "$CACHE" erase_block_size 16384
		echo "$1: $(wow_stat ck loaded_from), $(($(reads) - _r0)) sectors read"
	}
	load16 "(e) version 1, 16 KiB erase blocks"
	dmesg_since | grep -q 'format version 1 with no room for a checkpoint' ||
		nok "(e) no message that the cache stays version 1"
	[ "$(read_u "$CACHE" 4 4)" = 1 ] ||
		nok "(e) the superblock was changed to version $(read_u "$CACHE" 4 4)"
	fio_run "$(dm_node ck)" $C --iodepth=16 --verify=crc32c --do_verify=0
	wow_remove ck
	load16 "(e) reloaded"
	[ "$(wow_stat ck loaded_from)" = log ] ||
		nok "(e) a version 1 cache was loaded from a checkpoint"
	fio_verify_only "$(dm_node ck)" $C --iodepth=16
	wow_remove ck

	info "(f) a version 3 cache (one checkpoint area) keeps version 3"
	# version 4's segments start after two areas (erase block 3 here),
	# version 3's after one: move the log down one erase block, clear
	# the last, forge the superblock to version 3.  Area 0's checkpoint
	# counts version 4's segments, so the first load scans; the clean
	# shutdown then writes a version 3 checkpoint, which the next load
	# reads
	wow_reset_disks
	wow_create ck "$ORIGIN" "$CACHE"
	fio_run "$(dm_node ck)" $A --verify=crc32c --do_verify=0
	wow_remove ck
	EBS=$(read_u "$CACHE" 24 4)
	NEB=$((CSECT * 512 / EBS))
	FEB=$(($(read_u "$CACHE" 48 8) * 512 / EBS))
	[ "$FEB" = 3 ] || nok "(f) version 4's segment 0 is at erase block $FEB, not 3"
	run dd if="$CACHE" of="$CACHE" bs="$EBS" skip=3 seek=2 \
		count=$((NEB - 3)) iflag=direct oflag=direct conv=notrunc
	run dd if=/dev/zero of="$CACHE" bs="$EBS" seek=$((NEB - 1)) count=1 \
		oflag=direct conv=notrunc
	run wowforge sb "$CACHE" version 3
	run wowforge sb "$CACHE" first_segment_sector $((2 * EBS / 512))
	run wowforge sb "$CACHE" nr_segments $((NEB - 2))
	load "(f) version 3, forged"
	[ "$(wow_stat ck loaded_from)" = log ] ||
		nok "(f) version 4's checkpoint was used on a version 3 cache"
	fio_verify_only "$(dm_node ck)" $A
	remove
	load "(f) version 3, after a clean shutdown"
	[ "$(wow_stat ck loaded_from)" = checkpoint ] ||
		nok "(f) the version 3 cache wrote no checkpoint it could load"
	[ "$(read_u "$CACHE" 4 4)" = 3 ] ||
		nok "(f) the superblock says version $(read_u "$CACHE" 4 4)"
	fio_verify_only "$(dm_node ck)" $A
	wow_remove ck

	[ -z "$FAILED" ] || fail "${FAILED#; }"
	echo "cache-checkpoint: ok"
	;;
esac
