#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# wowctl's offline tools on a cache the kernel wrote (issue 15).
#  (a) boot 1 writes A through a cache that destages at once (so clean
#      marks reach the log) and removes it cleanly (a checkpoint), loads
#      it again (the load writes a checkpoint naming the log head), writes
#      B, which stays dirty, and C, of which 1 MiB is discarded
#      (tombstones), commits and cuts the power.  Boot 2, before the kernel
#      loads it: `wowctl dump` must rebuild what the kernel then loads (a
#      checkpoint and the log replayed after it along its chain: "replayed
#      N records written after checkpoint G" and "loaded checkpoint G
#      (...): D dirty of V valid blocks, F free segments": the same N, D,
#      V and F; or, when it scans the log, "recovered N records (...)",
#      with the dropped count too) and `wowctl check` must pass (0, or 3
#      for a torn tail).  After a clean removal
#      `wowctl check` exits 0 (the checkpoint checks and agrees with the
#      log) and `wowctl dump` reads the checkpoint and finds what the
#      kernel wrote in it ("checkpoint N written (...): D dirty of V
#      valid blocks"), and with --scan the same from the log.
#  (b) boot 2 writes ten 128 KiB batches (each committed) and a fio
#      region over an origin holding a pattern, and cuts the power.  Boot
#      3 flips a data byte of a record written after the last checkpoint
#      (so the load replays it) that a later record of its segment proves
#      durable: `wowctl check` exits 4, the kernel refuses the cache, and
#      `wowctl
#      writeback` (exit 4) leaves the origin with every batch and the fio
#      region, except the corrupt record's blocks, which hold the old or
#      the new data (nothing else), and are the blocks it reports lost.
#
# vm: origin=2G cache=64M timeout=300 boots=3
. "${WOW_LIB:-/wow/lib.sh}"

command -v wowctl > /dev/null || skip "no wowctl in the guest (make -C userspace)"

A="--rw=randwrite --bs=4k --offset=0 --size=8M --randseed=71"
B="--rw=randwrite --bsrange=4k-64k --blockalign=4k --offset=64M --size=16M --randseed=72"
C="--rw=randwrite --bs=4k --offset=128M --size=4M --randseed=73"
F="--rw=randwrite --bs=4k --offset=4M --size=1M --randseed=74"
KEEP=$RESULTS/$WOW_NAME
FAILED=""
nok() { echo "NOT OK: $*"; FAILED="$FAILED; $*"; }

# wowctl_rc OUT CMD...: run wowctl, its output to OUT (and shown); sets RC
wowctl_rc() {
	_out=$1
	shift
	echo "+ wowctl $*"
	wowctl "$@" > "$_out" 2>&1
	RC=$?
	sed 's/^/    /' "$_out" | grep -v '^    *{"oblock"' | head -n 60
	echo "    (exit $RC)"
}

# jnum FILE KEY: the first number "KEY": N in a dump
jnum() {
	sed -n "s/.*\"$2\": \([0-9][0-9]*\).*/\1/p" "$1" | head -n 1
}

# dump_counts FILE: "records dirty valid free dropped" of a dump
dump_counts() {
	echo "$(jnum "$1" records) $(jnum "$1" dirty_blocks)" \
	     "$(jnum "$1" valid_blocks) $(grep -c '"state": "free"' "$1")" \
	     "$(jnum "$1" dropped)"
}

# kernel_recovered: the same from the kernel's "recovered" line
kernel_recovered() {
	dmesg_since | sed -n 's/.*recovered \([0-9]*\) records ([0-9]* KiB read): \([0-9]*\) dirty of \([0-9]*\) valid blocks, \([0-9]*\) free segments, \([0-9]*\) dropped.*/\1 \2 \3 \4 \5/p' | tail -n 1
}

# kernel_loaded: "replayed dirty valid free" from the kernel's lines of a
# load from the checkpoint (no "replayed" line: 0 records)
kernel_loaded() {
	_l=$(dmesg_since | sed -n 's/.*loaded checkpoint [0-9]* ([0-9]* KiB read): \([0-9]*\) dirty of \([0-9]*\) valid blocks, \([0-9]*\) free segments.*/\1 \2 \3/p' | tail -n 1)
	[ -n "$_l" ] || return 0
	_r=$(dmesg_since | sed -n 's/.*replayed \([0-9]*\) records written after checkpoint.*/\1/p' | tail -n 1)
	echo "${_r:-0} $_l"
}

# dump_loaded FILE: the same of a dump
dump_loaded() {
	echo "$(jnum "$1" replayed) $(jnum "$1" dirty_blocks)" \
	     "$(jnum "$1" valid_blocks) $(grep -c '"state": "free"' "$1")"
}

# kernel_counts MSG: "dirty valid" from the kernel's line matching MSG
kernel_counts() {
	dmesg_since | grep -E "wow: .*$1" | tail -n 1 |
		sed -n 's/.* \([0-9]*\) dirty of \([0-9]*\) valid blocks.*/\1 \2/p'
}

md5_blk() {	# md5_blk DEV BLOCK: md5 of 4 KiB block BLOCK
	dd if="$1" bs=4096 skip="$2" count=1 iflag=direct 2> /dev/null |
		md5sum | cut -c1-32
}

md5_fblk() {	# md5_fblk FILE BLOCK: the same of a file (on 9p: no O_DIRECT)
	dd if="$1" bs=4096 skip="$2" count=1 2> /dev/null | md5sum | cut -c1-32
}

# dump_rc FILE ARGS...: wowctl dump ARGS to FILE, show its summary; sets RC
dump_rc() {
	_out=$1
	shift
	echo "+ wowctl dump $*"
	wowctl dump "$@" > "$_out" 2> /tmp/dump.err
	RC=$?
	cat /tmp/dump.err
	grep -E '^  "(source|loads|next_seq|replayed|records|dropped|checkpoint)"|"index"|"severity"' "$_out" |
		sed 's/"blocks": \[.*//; s/^/    /'
	echo "    (exit $RC; records dirty valid free dropped: $(dump_counts "$_out"))"
}

case $WOW_BOOT in
1)
	wow_reset_disks
	info "(a) A, destaged; a clean removal; B dirty, C with a discard; a power cut"
	wow_create off "$ORIGIN" "$CACHE" low_watermark 0 high_watermark 1
	D=$(dm_node off)
	fio_run "$D" $A --iodepth=16 --verify=crc32c --do_verify=0
	wow_wait_clean off 120
	sleep 3
	wow_remove off
	wow_create off "$ORIGIN" "$CACHE"
	D=$(dm_node off)
	dmesg_since | grep -E 'wow: ' | sed 's/^/    kernel: /'
	fio_run "$D" $B --iodepth=8 --verify=crc32c --do_verify=0
	fio_run "$D" $C --iodepth=16
	run blkdiscard -o $((129 << 20)) -l $((1 << 20)) "$D"
	wow_message off commit
	echo "at the cut: $(wow_status off)"
	wow_power_cut
	;;
2)
	info "(a) before the kernel loads it: wowctl dump and check"
	dump_rc /tmp/d1.json "$CACHE"
	[ $RC -eq 0 ] || [ $RC -eq 3 ] || nok "(a) dump exited $RC"
	# the load at boot 1 (and every 1/64 of the cache of log) wrote a
	# checkpoint: the kernel loads it and replays the log written since
	if grep -q '"source": "checkpoint"' /tmp/d1.json; then
		TOOL=$(dump_loaded /tmp/d1.json) WHAT="replayed dirty valid free"
	else
		nok "(a) dump after a power cut does not read the checkpoint"
		TOOL=$(dump_counts /tmp/d1.json) WHAT="records dirty valid free dropped"
	fi
	wowctl_rc /tmp/c1.txt check "$CACHE"
	[ $RC -eq 0 ] || [ $RC -eq 3 ] || nok "(a) check of a power-cut cache exited $RC"
	grep -q 'records replayed after it' /tmp/c1.txt ||
		nok "(a) check does not say how many records a load replays"
	wow_create off "$ORIGIN" "$CACHE"
	dmesg_since | grep -E 'wow: ' | sed 's/^/    kernel: /'
	if [ "$WHAT" = "replayed dirty valid free" ]; then
		KERN=$(kernel_loaded)
	else
		KERN=$(kernel_recovered)
	fi
	echo "(a) $WHAT: wowctl '$TOOL', kernel '$KERN'"
	echo "(a) status: $(wow_status off)"
	[ -n "$KERN" ] && [ "$TOOL" = "$KERN" ] ||
		nok "(a) wowctl dump rebuilt '$TOOL', the kernel loaded '$KERN' ($WHAT)"
	D=$(dm_node off)
	fio_verify_only "$D" $A --iodepth=16
	fio_verify_only "$D" $B --iodepth=8

	info "(a) after a clean removal: check passes, dump reads the checkpoint"
	dmesg_clear
	wow_remove off
	SAVED=$(kernel_counts 'checkpoint [0-9]* written')
	[ -n "$SAVED" ] || nok "(a) no checkpoint written at the removal"
	wowctl_rc /tmp/c2.txt check "$CACHE"
	[ $RC -eq 0 ] || nok "(a) check of a cleanly removed cache exited $RC"
	dump_rc /tmp/d2.json "$CACHE"
	grep -q '"source": "checkpoint"' /tmp/d2.json ||
		nok "(a) dump after a clean removal does not read the checkpoint"
	set -- $(dump_counts /tmp/d2.json)
	echo "(a) checkpoint: wowctl '$2 $3', kernel '$SAVED' (dirty valid)"
	[ "$2 $3" = "$SAVED" ] ||
		nok "(a) dump of the checkpoint has '$2 $3', the kernel wrote '$SAVED' (dirty valid)"
	dump_rc /tmp/d3.json --scan "$CACHE"
	set -- $(dump_counts /tmp/d3.json)
	[ "$2 $3" = "$SAVED" ] ||
		nok "(a) dump --scan has '$2 $3', the checkpoint '$SAVED' (dirty valid)"
	grep -q '"source": "log"' /tmp/d3.json || nok "(a) dump --scan did not read the log"

	info "(b) ten committed batches and a fio region over a pattern; a power cut"
	wow_reset_disks
	fill_pattern "$ORIGIN" 8 old-b
	dd if="$ORIGIN" of="$KEEP.old" bs=1M count=8 iflag=direct 2> /dev/null ||
		fail "cannot save the origin's pattern"
	wow_create off "$ORIGIN" "$CACHE"
	D=$(dm_node off)
	# a reader keeps the device from looking idle: an idle dm-wow destages
	# everything within a second, and on the debug kernel the gaps between
	# these writes are that long, so every batch was clean (or written to
	# the origin) at the cut and no record was left to corrupt
	wow_keep_busy "$D"
	fio_run "$D" $F --iodepth=16 --verify=crc32c --do_verify=0
	wow_message off commit
	for i in 0 1 2 3 4 5 6 7 8 9; do
		dd if=/dev/urandom of="$KEEP.b$i" bs=128k count=1 2> /dev/null
		dd if="$KEEP.b$i" of="$D" bs=64k seek=$((i * 4)) oflag=direct \
			conv=notrunc 2> /dev/null || fail "cannot write batch $i"
		wow_message off commit
	done
	echo "at the cut: $(wow_status off)"
	wow_stop_busy
	[ -z "$FAILED" ] || fail "${FAILED#; }"
	wow_power_cut
	;;
3)
	info "(b) the healthy log, then a durable record's data corrupt"
	wowctl_rc /tmp/c3.txt check "$CACHE"
	# 3: a record of clean marks torn by the cut is possible
	[ $RC -eq 0 ] || [ $RC -eq 3 ] || nok "(b) check of the healthy log exited $RC"
	dump_rc /tmp/d4.json "$CACHE"
	grep -q '"source": "checkpoint"' /tmp/d4.json ||
		nok "(b) dump after a power cut does not read the checkpoint"
	# the log head the last checkpoint names: the load replays from there
	CKSEQ=$(sed -n 's/.*"checkpoint": {[^}]*"next_seq": \([0-9]*\).*/\1/p' /tmp/d4.json)
	echo "the checkpoint's next_seq: $CKSEQ"
	EB=$(read_u "$CACHE" 24 4)
	for sg in 0 1 2 3; do log_records "$CACHE" $sg 4096 "$EB"; done > /tmp/b.records
	echo "records (offset seq seg_seq durable_seq nr_data nr_tombs):"
	sed 's/^/    /' /tmp/b.records
	FIRST=$(($(read_u "$CACHE" 48 8) * 512))
	# the first record of batch data written after the checkpoint that a
	# later record of its segment proves durable (as the kernel's replay
	# looks for it) and whose blocks are all dirty (not destaged); not the
	# first of its segment: the kernel's replay_vouched looks only at
	# block 0 of the segment the chain goes on in, so a corrupt record
	# there is dropped as a torn tail with every record after it, and the
	# kernel loads (wowctl check says what is lost)
	sed -n 's/.*{"oblock": \([0-9]*\), "slot": \([0-9]*\), "dirty": \([a-z]*\)}.*/\1 \2 \3/p' \
		/tmp/d4.json > /tmp/b.index
	PICK="" LOST=""
	n=0
	while read -r pos seq _ _ nd _; do
		[ "$nd" -gt 0 ] && [ "$seq" -ge "${CKSEQ:-0}" ] &&
			[ $(((pos - FIRST) % EB)) -gt 0 ] || continue
		sg=$(((pos - FIRST) / EB))
		proof=$(awk -v s="$seq" -v lo=$((FIRST + sg * EB)) -v hi=$((FIRST + (sg + 1) * EB)) \
			'$1 >= lo && $1 < hi && $2 > s && $4 >= s { print $2; exit }' /tmp/b.records)
		[ -n "$proof" ] || continue
		s0=$(((pos - FIRST) / 4096 + 1))
		obs=$(awk -v s0=$s0 -v n="$nd" '$2 >= s0 && $2 < s0 + n { print $1 }' /tmp/b.index | sort -n)
		clean=$(awk -v s0=$s0 -v n="$nd" '$2 >= s0 && $2 < s0 + n && $3 != "true"' /tmp/b.index)
		# batch data (origin blocks below the fio region at 4 MiB), dirty
		[ -n "$obs" ] && [ "$(echo "$obs" | wc -l)" -eq "$nd" ] &&
			[ -z "$clean" ] && [ "$(echo "$obs" | head -n 1)" -lt 1024 ] ||
			continue
		n=$((n + 1))
		PICK="$pos $seq $proof" LOST=$obs
		break
	done < /tmp/b.records
	[ -n "$PICK" ] || fail "(b) no durable record of batch data found after the checkpoint"
	set -- $PICK
	echo "record $2 at byte $1 (proven durable by $3) holds origin blocks $(echo $LOST)"
	echo "flip byte $(($1 + 4096 + 100)): $(flip_byte "$CACHE" $(($1 + 4096 + 100)))"
	wowctl_rc /tmp/c4.txt check "$CACHE"
	[ $RC -eq 4 ] || nok "(b) check of a corrupt durable record exited $RC, want 4"
	grep -q 'was durable' /tmp/c4.txt || nok "(b) check does not say the record was durable"
	expect_create_fails "(b) the kernel refuses it" \
		"$(wow_table "$ORIGIN" "$CACHE")" 'not loading'

	info "(b) writeback of the refused cache"
	S0=$(sum_dev "$ORIGIN" 8)
	wowctl_rc /tmp/w1.txt writeback --dry-run "$CACHE" "$ORIGIN"
	[ $RC -eq 4 ] || nok "(b) writeback --dry-run exited $RC, want 4"
	[ "$(sum_dev "$ORIGIN" 8)" = "$S0" ] || nok "(b) --dry-run wrote to the origin"
	wowctl_rc /tmp/w2.txt writeback "$CACHE" "$ORIGIN"
	[ $RC -eq 4 ] || nok "(b) writeback exited $RC, want 4"
	# dirty and newest in the corrupt record: lost, every one
	REPORTED=$(sed -n 's/^lost: origin block \([0-9]*\):.*/\1/p' /tmp/w2.txt | sort -n)
	[ "$(echo $REPORTED)" = "$(echo $LOST)" ] ||
		nok "(b) writeback reported blocks '$(echo $REPORTED)' lost, the corrupt record held '$(echo $LOST)'"
	grep -q '^writeback (from the log): .* written' /tmp/w2.txt ||
		nok "(b) no writeback summary"
	fio_verify_only "$ORIGIN" $F --iodepth=16
	bad=0 new=0 old=0
	for i in 0 1 2 3 4 5 6 7 8 9; do
		# a batch that reads back whole: its blocks in the corrupt record
		# hold their new data (destaged before the cut, though the clean
		# marks saying so were not durable yet: seen on the debug kernel)
		if [ "$(dd if="$ORIGIN" bs=64k skip=$((i * 4)) count=2 iflag=direct \
			2> /dev/null | md5sum)" = "$(md5sum < "$KEEP.b$i")" ]; then
			new=$((new + $(echo "$LOST" |
				awk -v lo=$((i * 64)) '$1 >= lo && $1 < lo + 32' | wc -l)))
			continue
		fi
		for j in $(seq 0 31); do
			ob=$((i * 64 + j))
			got=$(md5_blk "$ORIGIN" $ob)
			n=$(md5_fblk "$KEEP.b$i" $j)
			o=$(md5_fblk "$KEEP.old" $ob)
			if ! echo "$LOST" | grep -qx $ob; then
				[ "$got" = "$n" ] && continue
				nok "(b) origin block $ob (batch $i) does not hold its write"
				bad=$((bad + 1))
			elif [ "$got" = "$n" ]; then
				new=$((new + 1))
			elif [ "$got" = "$o" ]; then
				old=$((old + 1))
			else
				nok "(b) origin block $ob of the corrupt record holds neither its old nor its new data"
			fi
		done
	done
	echo "(b) the corrupt record's blocks on the origin: $old old, $new new; $bad other blocks wrong"
	[ $((old + new)) -eq "$(echo "$LOST" | wc -l)" ] ||
		nok "(b) the corrupt record's blocks: $old old and $new new of $(echo "$LOST" | wc -l)"
	[ -z "$FAILED" ] || fail "${FAILED#; }"
	echo "wowctl-offline: ok"
	;;
esac
