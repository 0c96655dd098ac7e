#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Corrupt metadata on the cache device (invariants 6 and 7):
#  (a) a flipped byte in the superblock (checksum, version, magic, geometry,
#      padding): `dmsetup create` is refused with a message saying
#      "corrupt" or "foreign", no device is left, neither device changes;
#      with the original bytes back, the cache loads and its data verifies.
#  (b) a flipped data byte in a log record that later records prove durable
#      (written, committed, more records after it): the load is refused
#      ("... was durable but is corrupt; not loading"), nothing changes.
#      Checked for the first record of segment 0 (cache byte offset 1 MiB +
#      4 KiB + 100), a middle one, and one proven durable only by later
#      records of its own segment.
#  (c) a flipped data byte in the LAST record of the log (nothing after it
#      proves it durable, so it is indistinguishable from a torn write):
#      the record is dropped with "dropped a torn or corrupt log record at
#      block B", the device loads, the record before it is intact, and
#      every block of the dropped record reads as either its new data or
#      the origin's previous data -- never anything else (never the
#      corrupted bytes).  The log state for (c) is a copy of the cache taken
#      while the device was live after the last commit (what a power cut
#      would leave), so no clean marks written at removal follow it.
#  (d) after (c): the writes and the clean shutdown that followed the
#      drop, the next load still takes the dropped record as torn (it
#      was never durable) and loads; nothing is lost.
#  (e) a flipped data byte in a durable record whose every block was
#      rewritten later: dropping it loses nothing, so the cache loads with
#      the newer data (the stale records a torn write of a reused
#      segment's first record damages are such).
# Each sub-check is run and reported; the scenario fails at the end if any
# of them failed.
#
# vm: origin=2G cache=64M timeout=240
. "${WOW_LIB:-/wow/lib.sh}"

CM=/tmp/cm
mkdir -p $CM
FAILED=""
soft() {	# soft DESC CMD...: run a check in a subshell, note a failure
	_d=$1
	shift
	if ("$@"); then
		echo "ok: $_d"
	else
		echo "NOT OK: $_d"
		FAILED="$FAILED; $_d"
	fi
}
sums() { echo "cache=$(sum_dev "$CACHE" 8) origin=$(sum_dev "$ORIGIN" 8)"; }
snap() {	# snap NAME: copy the first 8 MiB of both devices
	dd if="$CACHE" of=$CM/$1.cache bs=1M count=8 iflag=direct 2> /dev/null &&
		dd if="$ORIGIN" of=$CM/$1.origin bs=1M count=8 iflag=direct \
			2> /dev/null || fail "cannot copy the devices"
}
restore() {	# restore NAME
	dd if=$CM/$1.cache of="$CACHE" bs=1M count=8 oflag=direct \
		conv=notrunc 2> /dev/null &&
		dd if=$CM/$1.origin of="$ORIGIN" bs=1M count=8 oflag=direct \
			conv=notrunc 2> /dev/null || fail "cannot restore the devices"
}
put() {		# put FILE DEV OFFSET_BYTES: write FILE (64 KiB units)
	dd if="$1" of="$2" bs=64k seek=$(($3 / 65536)) oflag=direct \
		conv=notrunc 2> /dev/null || fail "cannot write $1 to $2"
}
same() {	# same FILE DEV OFFSET_BYTES: DEV holds FILE there
	_n=$(($(stat -c %s "$1") / 65536))
	[ "$(dd if="$2" bs=64k skip=$(($3 / 65536)) count=$_n iflag=direct \
		2> /dev/null | md5sum)" = "$(md5sum < "$1")" ]
}
# refused DESC MSG_REGEX: create must fail with MSG_REGEX, change nothing
refused() {
	_before=$(sums)
	expect_create_fails "$1" "$(wow_table "$ORIGIN" "$CACHE")" "$2"
	[ "$(sums)" = "$_before" ] || fail "$1: refused, but a device changed"
}

# ---- (a) superblock ----
info "(a) superblock: write data, flip superblock bytes"
wow_reset_disks
wow_create cm "$ORIGIN" "$CACHE"
FA="--rw=randwrite --bs=4k --offset=0 --size=4M --randseed=81"
fio_run "$(dm_node cm)" $FA --iodepth=16 --verify=crc32c --do_verify=0
wow_remove cm
dd if="$CACHE" of=$CM/sb bs=4096 count=1 iflag=direct 2> /dev/null
S0=$(sums)
# csum, version, magic, block_size, origin_sectors, uuid, padding
for off in 0 4 8 20 32 72 300 511; do
	echo "flip superblock byte $off: $(flip_byte "$CACHE" $off)"
	soft "(a) superblock byte $off flipped is refused, nothing changes" \
		refused "superblock byte $off" 'corrupt|foreign'
	dd if=$CM/sb of="$CACHE" bs=4096 count=1 oflag=direct conv=notrunc \
		2> /dev/null
done
[ "$(sums)" = "$S0" ] || fail "devices differ after restoring the superblock"
info "(a) original superblock back: loads, data verifies"
wow_create cm "$ORIGIN" "$CACHE"
fio_verify_only "$(dm_node cm)" $FA --iodepth=16
wow_remove cm

# ---- (b) a durable record corrupt ----
# Ten committed 128 KiB batches fill segment 0 and go on in segment 1
# (the removal appends a clean-mark record too).  Three records are
# corrupted in turn, each proven durable by later records:
#   first  - the first record of segment 0 (1 MiB + 4 KiB + 100)
#   middle - the second record of segment 0 (later records in segments 0, 1)
#   tail   - the second record of segment 1, the last segment: only later
#            records of its own segment prove it durable
info "(b) ten committed batches, then corrupt the data of durable records"
wow_reset_disks
fill_pattern "$ORIGIN" 8 old-b
wow_create cm "$ORIGIN" "$CACHE"
for i in 0 1 2 3 4 5 6 7 8 9; do
	dd if=/dev/urandom of=$CM/b$i bs=128k count=1 2> /dev/null
	put $CM/b$i "$(dm_node cm)" $((i << 18))
	wow_message cm commit
done
wow_remove cm
# the checkpoint written at removal would stand in for the log: these
# checks are of the log scan a load after a crash runs
drop_checkpoint "$CACHE"
{ log_records "$CACHE" 0; log_records "$CACHE" 1; } > $CM/b.records
echo "records of segments 0 and 1 (offset seq seg_seq durable_seq nr_data nr_tombs):"
sed 's/^/    /' $CM/b.records
FIRST=$(($(read_u "$CACHE" 48 8) * 512))	# segment 0, as the superblock says
R0=$(awk -v e=$((FIRST + (1 << 20))) '$1 < e' $CM/b.records | sed -n 1p)
R1=$(awk -v e=$((FIRST + (1 << 20))) '$1 < e' $CM/b.records | sed -n 2p)
R2=$(awk -v e=$((FIRST + (1 << 20))) '$1 >= e' $CM/b.records | sed -n 2p)
[ "${R0%% *}" = "$FIRST" ] || fail "first record not at the start of segment 0 ($FIRST)"
[ -n "$R2" ] || fail "expected two or more records in segment 1"
snap b
for r in "first:$R0" "middle:$R1" "tail:$R2"; do
	set -- ${r#*:}
	name=${r%%:*} pos=$(($1 + 4096 + 100)) seq=$2
	# premise: a later record says this one was durable
	proof=$(awk -v s=$seq '$2 > s && $4 >= s { print $2; exit }' $CM/b.records)
	[ -n "$proof" ] || fail "no later record proves record $seq durable"
	echo "flip byte $pos (data of the $name record, seq $seq, proven durable by seq $proof): $(flip_byte "$CACHE" $pos)"
	soft "(b) corrupt data of the $name record (seq $seq, durable) is refused" \
		refused "$name record corrupt" 'not loading'
	dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
	restore b
done
info "(b) log intact again: loads, every batch reads back"
wow_create cm "$ORIGIN" "$CACHE"
for i in 0 1 2 3 4 5 6 7 8 9; do
	same $CM/b$i "$(dm_node cm)" $((i << 18)) || fail "batch $i lost"
done
wow_remove cm

# ---- (c) the last record corrupt ----
info "(c) two committed batches, copy the live log, corrupt the last record"
wow_reset_disks
fill_pattern "$ORIGIN" 8 old-c
OFFB=$((4 << 20))
dd if="$ORIGIN" of=$CM/c.old bs=64k skip=$((OFFB / 65536)) count=1 \
	iflag=direct 2> /dev/null
dd if=/dev/urandom of=$CM/c.a bs=64k count=1 2> /dev/null
dd if=/dev/urandom of=$CM/c.b bs=64k count=1 2> /dev/null
wow_create cm "$ORIGIN" "$CACHE"
put $CM/c.a "$(dm_node cm)" 0
wow_message cm commit
put $CM/c.b "$(dm_node cm)" $OFFB
wow_message cm commit
dd if="$CACHE" of=$CM/c.cache bs=1M count=8 iflag=direct 2> /dev/null
wow_remove cm
dd if=$CM/c.cache of="$CACHE" bs=1M count=8 oflag=direct conv=notrunc \
	2> /dev/null
log_records "$CACHE" 0 > $CM/c.records
echo "records of segment 0:"
sed 's/^/    /' $CM/c.records
[ "$(wc -l < $CM/c.records)" -eq 2 ] || fail "expected exactly 2 records"
LAST=$(sed -n 2p $CM/c.records | cut -d' ' -f1)
[ "$(sed -n 2p $CM/c.records | cut -d' ' -f5)" = 16 ] ||
	fail "the last record does not hold the 16 blocks of batch B"
LASTBLK=$(((LAST - $(read_u "$CACHE" 48 8) * 512) / 4096))
echo "flip byte $((LAST + 4096 + 100)): $(flip_byte "$CACHE" $((LAST + 4096 + 100)))"
# the corrupted version of block 0 of batch B, to make sure it never shows
dd if="$CACHE" bs=4096 skip=$((LAST / 4096 + 1)) count=1 iflag=direct \
	2> /dev/null | md5sum | cut -c1-32 > $CM/c.bad
wow_create cm "$ORIGIN" "$CACHE"
D=$(dm_node cm)
dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
dmesg_since | grep -q "dropped a torn or corrupt log record at block $LASTBLK" ||
	FAILED="$FAILED; (c) no 'dropped a torn or corrupt log record at block $LASTBLK' message"
same $CM/c.a "$D" 0 || FAILED="$FAILED; (c) batch A (the good record) lost"
new=0 old=0 bad=0
for i in $(seq 0 15); do
	got=$(dd if="$D" bs=4096 skip=$((OFFB / 4096 + i)) count=1 \
		iflag=direct 2> /dev/null | md5sum | cut -c1-32)
	n=$(dd if=$CM/c.b bs=4096 skip=$i count=1 2> /dev/null | md5sum | cut -c1-32)
	o=$(dd if=$CM/c.old bs=4096 skip=$i count=1 2> /dev/null | md5sum | cut -c1-32)
	if [ "$got" = "$n" ]; then
		new=$((new + 1))
	elif [ "$got" = "$o" ]; then
		old=$((old + 1))
	else
		bad=$((bad + 1))
		[ "$got" = "$(cat $CM/c.bad)" ] && echo "block $i: the corrupted data"
	fi
done
echo "(c) batch B blocks: $new new data, $old origin's old data, $bad other"
[ $bad -eq 0 ] || FAILED="$FAILED; (c) $bad blocks of the dropped record read neither new nor old data"
info "(c) the device works: write and verify"
fio_verify "$D" --rw=randwrite --bs=4k --offset=8M --size=8M --iodepth=16 \
	--randseed=82
wow_no_errors cm
wow_remove cm

# ---- (d) the dropped record after a clean shutdown ----
# The record dropped in (c) is still on the device, and everything written
# since says "every record before me was durable".  The next load must
# still take it as the torn tail it was (it was never durable), not as a
# durable record gone corrupt: that refusal would leave only `format`.
info "(d) after the clean shutdown that followed (c): load again"
drop_checkpoint "$CACHE"	# the scan is what is checked
dmesg_clear
if dmsetup create cm --table "$(wow_table "$ORIGIN" "$CACHE")"; then
	D=$(dm_node cm)
	same $CM/c.a "$D" 0 || FAILED="$FAILED; (d) batch A lost"
	fio_verify_only "$D" --rw=randwrite --bs=4k --offset=8M --size=8M \
		--iodepth=16 --randseed=82
	wow_no_errors cm
	wow_remove cm
else
	dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
	FAILED="$FAILED; (d) the cache does not load after a clean shutdown that followed a dropped torn record"
fi

# ---- (e) a durable record whose every block has a newer version ----
# Batch X (128 KiB) and then 1 MiB of Z are written and committed: segment
# 0 fills and the log goes on in segment 1.  Then X and Z are written again
# (Y, Z2), so every block segment 0 holds has a newer version elsewhere.
# The second record of segment 0 is corrupted: later records prove it
# durable, but dropping it (and the records after it in its segment) loses
# nothing, so the cache must load with the newer data.  This is what a torn
# write of a reused segment's first record does to the stale records of
# the segment's earlier life.
info "(e) corrupt a durable record whose blocks were all rewritten"
wow_reset_disks
wow_create cm "$ORIGIN" "$CACHE"
for f in x y; do
	dd if=/dev/urandom of=$CM/e.$f bs=128k count=1 2> /dev/null
done
for f in z z2; do
	dd if=/dev/urandom of=$CM/e.$f bs=1M count=1 2> /dev/null
done
put $CM/e.x "$(dm_node cm)" 0
put $CM/e.z "$(dm_node cm)" 1048576
wow_message cm commit
put $CM/e.y "$(dm_node cm)" 0
put $CM/e.z2 "$(dm_node cm)" 1048576
wow_message cm commit
wow_remove cm
drop_checkpoint "$CACHE"
log_records "$CACHE" 0 > $CM/e.records
sed 's/^/    /' $CM/e.records
set -- $(sed -n 2p $CM/e.records)
[ $# -eq 6 ] || fail "(e) no second record in segment 0"
echo "flip byte $(($1 + 4096 + 100)) (data of record $2): $(flip_byte "$CACHE" $(($1 + 4096 + 100)))"
if dmsetup create cm --table "$(wow_table "$ORIGIN" "$CACHE")"; then
	dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
	dmesg_since | grep -q "every block it held has a newer version" ||
		FAILED="$FAILED; (e) no 'every block it held has a newer version' message"
	same $CM/e.y "$(dm_node cm)" 0 || FAILED="$FAILED; (e) batch Y lost"
	same $CM/e.z2 "$(dm_node cm)" 1048576 || FAILED="$FAILED; (e) Z2 lost"
	wow_remove cm
else
	dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
	FAILED="$FAILED; (e) a corrupt durable record whose blocks all have newer versions made the load fail"
fi

[ -z "$FAILED" ] || fail "${FAILED#; }"
echo "cache-corrupt-metadata: ok"
