#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A record of more than one bio flushes before any of its bios (issue 34,
# finding 3).  The first record of a reused segment overwrites the
# segment's earlier life, so the records that made that life dead must be
# durable first: a PREFLUSH on the record's first bio orders only that
# bio, and the others could reach the device (and a power cut find the
# old life overwritten, its replacement not durable) before the flush
# ends.  The rule: such a record waits for an explicit flush, and its
# first bio carries no PREFLUSH of its own.
#
# The block layer merges the batch's physically contiguous pages, so in
# this VM a 1 MiB record is one bio; the test build's hook
# test_record_bio_kib=64 cuts every record into bios of 64 KiB.  A 64 MiB
# cache of 4 MiB erase blocks takes 1 MiB writes over 256 MiB, twice (the
# log wraps, segments are reused); a blktrace of the cache device must
# show, for every record of several bios at the start of a reused
# segment, no PREFLUSH on its first bio as submitted, and some of them
# submitted after a completed data-less flush (the rule exercised); the
# second pass verifies through the device and, cleaned, on the origin.  Fails with the module
# before the fix (the PREFLUSH on the first bio only).
#
# vm: origin=1G cache=64M timeout=600
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
blktrace_anchor
wow_test_hook test_record_bio_kib 64 ||
	skip "the module has no test hooks (built without WOW_TEST_HOOKS)"
BT=/tmp/bt
rm -rf $BT
mkdir -p $BT
info "trace the cache device"
blktrace -d "$CACHE" -b 1024 -n 16 -D $BT -o cache > $BT/blktrace.log 2>&1 &
BTPID=$!
sleep 2
kill -0 $BTPID 2> /dev/null || { cat $BT/blktrace.log; fail "blktrace did not start"; }

wow_create fo "$ORIGIN" "$CACHE" erase_block_size 4194304 low_watermark 10 \
	high_watermark 20
D=$(dm_node fo)
V="--rw=write --bs=1m --size=256m --iodepth=4"
fio_run "$D" $V
fio_verify "$D" $V
echo "status: $(wow_status fo)"
wow_message fo cleaner on
wow_wait_clean fo 300
wow_no_errors fo
wow_remove fo
info "the origin alone holds the second pass"
fio_verify_only "$ORIGIN" $V
wow_test_hook test_record_bio_kib 0
sleep 1
kill -INT $BTPID
wait $BTPID
grep -q 'You have .*dropped' $BT/blktrace.log &&
	fail "blktrace dropped events: the trace is incomplete"

info "check the trace"
blkparse -i cache -D $BT -f "%a %d %S %n\n" -o $BT/parsed.txt > /dev/null 2>&1 ||
	fail "blkparse failed"
META=$(read_u "$CACHE" 48 8)
echo "$(wc -l < $BT/parsed.txt) trace lines; segments from sector $META"
# a candidate: the first bio of a record at a reused segment's start, as
# dm-wow submits it (Q: below, the block layer turns a PREFLUSH write into
# a flush and the write, so the flag is seen only there); judged when the
# next log write submitted continues it (a record of several bios)
awk -v meta="$META" -v seg=8192 '
	$1 == "C" && $2 ~ /^F/ && $4 == 0 { flushed = NR }
	# a record completed before the next log write was submitted: that
	# one is the next record (one is in flight at a time), not more of it
	$1 == "C" && cand != "" && $3 == cand { cand = "" }
	$1 != "Q" || $2 !~ /W/ || $4 == 0 || $3 < meta { next }
	{
		if (cand != "" && $3 == cand_end) {
			multi++
			if (cand_f) {
				bad++
				if (bad == 1)
					print "VIOLATION: the first bio of a record of several at the start of a reused segment carries the PREFLUSH: " cand_line
			} else if (cand_flushed) {
				after_flush++
			}
		}
		cand = ""
		if (($3 - meta) % seg == 0) {
			if (seen[$3]) {
				cand = $3
				cand_end = $3 + $4
				cand_f = $2 ~ /^F/
				cand_flushed = flushed > last_w
				cand_line = $0
			}
			seen[$3] = 1
		}
		last_w = NR
	}
	END {
		printf "%d records of several bios at a reused segment start, %d after a data-less flush, %d with the PREFLUSH on their first bio\n", multi, after_flush, bad
		exit (bad > 0 || after_flush == 0)
	}' $BT/parsed.txt > $BT/check.txt
rc=$?
sed 's/^/    /' $BT/check.txt
[ $rc = 0 ] || fail "a record of several bios was not ordered behind its flush: $(head -n 1 $BT/check.txt)"
echo "cache-record-flush-order: ok"
