# SPDX-License-Identifier: GPL-2.0
#
# Crash consistency (invariants 2, 3 and 6) at every flush point, with lost,
# reordered and torn writes.  One dm-log-writes device records a small
# region (on null_blk, see below); the wow origin (64 MiB), the wow cache
# (8 MiB, 512 KiB erase blocks, so the log fills and reclaim runs) and a
# journal (32 MiB) are dm-linear slices of it, so every write and FLUSH/FUA
# of all three lands in one log, in one order.
#
# Phase 1 records: `wowcrash write` runs on the wow device and journals each
# write the block layer acknowledged durable (and each discard, before it
# is issued) as a FUA entry on the journal slice, while the script slows
# destage (so cleaning copies dirty blocks forward), switches cleaner mode
# on and off, suspends and resumes, and reloads the table.
# A clean shutdown with dirty data ends it; then the recorded cache is loaded, cleaned
# and removed, and the origin alone must hold every journalled write.
#
# Phase 2, at each flush point (all, or an even sample of the profile's
# budget): a base copy of the region is advanced by replaying the log in
# order up to the point; a dm-snapshot of it (COW on a ram disk) gets a
# variant of the window after the point (all of it; a random subset, FUA
# writes up to a random cut: reordering and loss; the newest cache-device
# write torn to a prefix); dm-wow is loaded over the snapshot's slices and
# `wowcrash check` must find every journalled write at least as new, blocks
# nobody wrote zero, and nothing older.  Then a few more writes, a clean
# shutdown, a second load and a second check (nothing older than the first
# check saw); then cleaner on, the device drained and removed, and the
# origin alone checked the same way (nothing older than the second check
# saw).  Before each load at a point, `wowctl check` and `wowctl dump`
# read the same state: check's verdict must be the module's (loads or
# refused, from the checkpoint or the log, no errors in a log it loads
# from; errors in a log it loads a checkpoint over are counted, and the
# first states kept in the results directory, not failed) and
# dump's load must equal the module's, index and all (a test build logs
# each load's counts and index digest, test_load_report; loadline.awk
# computes the same line from dump).  Failures are counted and described;
# the scenario fails if there is any.
#
# Phase 2 runs in one worker per online CPU (at most 2), each with its own
# devices, taking every other point of the sample.
#
# WOW_PROFILE=quick (default): up to 200 points, one variant each
# (rotating subset/torn/all), the second load after a dropped record and
# for every third variant only, phase 2 cut short (with a note) after
# 1200 s; full: up to 1000 points, one rotating variant each, the second
# load as in quick, no time limit (give wowvm.py a longer timeout).
# WOW_FP_BUDGET overrides the number of points, WOW_FP_VARIANTS the
# variants ("torn subset all": all three at every point), WOW_FP_SHARD=K/N
# checks only every Nth point of the sample, from the Kth.
#
# The scenarios crash-flush-points (WOW_FP_GEOMETRY=small),
# crash-flush-points-large (large) and crash-flush-points-tiny (tiny)
# source this file from /wow/guest.

command -v wowcrash > /dev/null || fail "no wowcrash in the guest"
command -v logreplay > /dev/null || fail "no logreplay in the guest"

PROFILE=${WOW_PROFILE:-quick}
case $PROFILE in
quick) BUDGET=200 VARIANTS="rotate" SECOND=some WRITE_S=16 LIMIT_S=1200 ;;
full) BUDGET=1000 VARIANTS="rotate" SECOND=some WRITE_S=30 LIMIT_S=0 ;;
*) fail "unknown WOW_PROFILE '$PROFILE' (quick or full)" ;;
esac

MIB=2048			# sectors
OLEN=$((64 * MIB))		# wow origin slice
JLEN=$((32 * MIB))		# journal slice
BASE_OFF=$((128 * MIB))		# the replay base, on the cache disk too
export WOWCRASH_SPAN="4 16"	# owned blocks in 4..20 MiB of the origin
# WOW_FP_GEOMETRY: small (default): an 8 MiB cache of 512 KiB erase
# blocks, 4 KiB writes, a checkpoint every 256 log blocks (1/8 of the
# cache); large: a 32 MiB cache of 4 MiB erase blocks (6 segments), writes
# of up to 1 MiB (a record of 257 blocks takes more than one bio: issue
# 34, finding 3) and a checkpoint every 32 log blocks while the cache is
# kept full (90/95 for the first half of the recording: checkpoints taken
# while no segment is free, finding 1); tiny: a 2 MiB cache of 512-byte
# blocks and 64 KiB erase blocks, a checkpoint every 16 log blocks
GEOMETRY=${WOW_FP_GEOMETRY:-small}
case $GEOMETRY in
small) CLEN=$((8 * MIB)) OPTS="erase_block_size 524288" CKPT=256 FULL=1 ;;
large) CLEN=$((32 * MIB)) OPTS="erase_block_size 4194304" CKPT=32 FULL=3
	export WOWCRASH_RUN=256 ;;
tiny) CLEN=$((2 * MIB)) OPTS="block_size 512 erase_block_size 65536" CKPT=16 FULL=1 ;;
*) fail "unknown WOW_FP_GEOMETRY '$GEOMETRY' (small, large or tiny)" ;;
esac
RLEN=$((OLEN + CLEN + JLEN))	# the logged region
[ -z "$WOW_FP_BUDGET" ] || BUDGET=$WOW_FP_BUDGET
[ -z "$WOW_FP_VARIANTS" ] || VARIANTS=$WOW_FP_VARIANTS
T=/tmp/fp

now() { cut -d' ' -f1 /proc/uptime; }
# tick NAME: add the centiseconds since the last tick to TIME_NAME (no fork)
LAST=0
tick() {
	read -r _up _ < /proc/uptime
	_cs=$(( ${_up%.*}${_up#*.} ))
	[ $LAST = 0 ] || eval "TIME_$1=\$((\${TIME_$1:-0} + _cs - LAST))"
	LAST=$_cs
}
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
T0=$(now)

# slices NAME_PREFIX DEV: origin, cache and journal slices of DEV
slices() {
	run dmsetup create "${1}o" --table "0 $OLEN linear $2 0"
	run dmsetup create "${1}c" --table "0 $CLEN linear $2 $OLEN"
	run dmsetup create "${1}j" --table "0 $JLEN linear $2 $((OLEN + CLEN))"
}

wow_reset_disks
rm -rf $T
mkdir -p $T || fail "cannot make $T"
info "profile $PROFILE, geometry $GEOMETRY ($OPTS, cache $((CLEN / MIB)) MiB, checkpoint every $CKPT blocks${WOWCRASH_RUN:+, writes up to $WOWCRASH_RUN blocks}): budget $BUDGET flush points, variants: $VARIANTS"

# ---- phase 1: record ----

# dm-log-writes hands each flush the writes completed when it is *mapped*
# and logs them when it *completes*: two flushes in flight at once can log
# an earlier write after the later flush (a state no disk shows; it was
# seen: a record missing while the next one, written after it completed,
# proves it durable).  So while recording, the logged device completes a
# flush in the same call that maps it (null_blk: bio based, completion in
# the submitter, a volatile cache so flushes pass), one CPU runs and the
# kernel preempts nothing (preempt=none: a task gives up the CPU only where
# it sleeps, and nothing sleeps between a flush's map and its completion),
# so no other flush is mapped between.  (With one CPU but voluntary
# preemption, the might_sleep() in submit_bio_noacct still let a flush be
# mapped in between: seen once in 200 states.)
modprobe -r null_blk 2> /dev/null
modprobe null_blk nr_devices=1 queue_mode=0 irqmode=0 memory_backed=1 \
	cache_size=16 discard=1 gb=1 || fail "cannot load null_blk"
[ -b /dev/nullb0 ] || fail "no /dev/nullb0"
grep -q "write back" /sys/block/nullb0/queue/write_cache ||
	fail "/dev/nullb0 has no volatile cache: flushes would not reach dm-log-writes"
# Switching the preemption model patches kernel text (static calls, with
# int3 breakpoints); under TCG another vCPU can still run the old code
# and trap on a breakpoint that is gone ("Oops: int3" in __fput, seen
# once on 6.12 with the switch back to voluntary just after CPU 1 came
# back).  So the switch is made only while one CPU runs: CPUs go offline
# first and come back last.
CPUS_OFF=""
PREEMPT=/sys/kernel/debug/sched/preempt PREEMPT_WAS=""
# shellcheck disable=SC2317
cpus_on() {
	[ -z "$PREEMPT_WAS" ] || echo "$PREEMPT_WAS" > $PREEMPT
	PREEMPT_WAS=""
	for c in $CPUS_OFF; do echo 1 > "$c"; done
	CPUS_OFF=""
}
trap cpus_on EXIT
for c in /sys/devices/system/cpu/cpu[1-9]*/online; do
	[ -e "$c" ] && [ "$(cat "$c")" = 1 ] || continue
	echo 0 > "$c" || fail "cannot take $(dirname "$c") offline"
	CPUS_OFF="$CPUS_OFF $c"
done
grep -q ' /sys/kernel/debug debugfs ' /proc/mounts ||
	mount -t debugfs none /sys/kernel/debug
# Linux 7.x with lazy preemption (x86) has only full and lazy, and lazy
# still preempts at a tick: a recording there came out of seq order (7.3,
# records 2289 and 2291), so the scenario skips.
if [ -w $PREEMPT ]; then
	PREEMPT_WAS=$(sed 's/.*(\([a-z]*\)).*/\1/' $PREEMPT)
	if ! echo none > $PREEMPT 2> /dev/null; then
		PREEMPT_WAS=""
		grep -q "(lazy)" $PREEMPT &&
			skip "no preempt=none on $(uname -r) (lazy preemption only): the recording needs it"
		fail "cannot set preempt=none"
	fi
fi
grep -q "(none)" $PREEMPT 2> /dev/null ||
	grep -q "^CONFIG_PREEMPT_NONE=y" "/boot/config-$(uname -r)" 2> /dev/null ||
	fail "cannot record with preempt=none (no $PREEMPT)"
echo "recording on $(grep -c ^processor /proc/cpuinfo) CPU, preempt $(cat $PREEMPT 2> /dev/null), data on /dev/nullb0"
run dmsetup create fpl --table "0 $(size_sectors "$ORIGIN") linear $ORIGIN 0"
zero_dev "$(dm_node fpl)" 1
run dmsetup create lw --table "0 $RLEN log-writes /dev/nullb0 $(dm_node fpl)"
slices l "$(dm_node lw)"
wow_create fp "$(dm_node lo)" "$(dm_node lc)" $OPTS
D=$(dm_node fp)
TABLE=$(dmsetup table fp)
wow_watch fp 5

# checkpoints every $CKPT log blocks: flush points fall before, inside and
# after them, with up to $CKPT blocks of log to replay
CKI=/sys/module/dm_wow/parameters/checkpoint_interval
[ -w $CKI ] || fail "no $CKI"
echo $CKPT > $CKI
info "record: wowcrash write for $WRITE_S s with discards; cleaner on/off, suspend/resume, reload"
WOWCRASH_DISCARD=1 wowcrash write "$D" "$(dm_node lj)" 1 7 \
	> $T/write.out 2>&1 &
WPID=$!
step() {
	sleep "$1"
	kill -0 $WPID 2> /dev/null || { cat $T/write.out; fail "wowcrash write ended early"; }
	echo "[$(since "$T0") s] $(wow_status fp | cut -d' ' -f1-6)"
}
W=$((WRITE_S / 6))
# destage nothing below 90% at first: the log fills with dirty data, and
# cleaning must copy dirty blocks forward to free segments
wow_message fp high_watermark 95
wow_message fp low_watermark 90
step $((W * FULL))
wow_message fp low_watermark 80
wow_message fp high_watermark 90
wow_message fp cleaner on
step $W
wow_message fp cleaner off
step $W
run dmsetup suspend fp
run dmsetup resume fp
step $W
run dmsetup reload fp --table "$TABLE"
run dmsetup suspend fp
run dmsetup resume fp
step $W
wow_message fp low_watermark 0
wow_message fp high_watermark 1
step $W
# end with dirty data: the clean shutdown must leave it for the next load
# to destage (the origin check below)
wow_message fp high_watermark 95
wow_message fp low_watermark 90
step $W
kill -ALRM $WPID	# wowcrash stops at SIGALRM
wait $WPID || { cat $T/write.out; fail "wowcrash write failed"; }
cat $T/write.out
wow_unwatch
st=$(wow_status fp)
echo "status: $st"
wow_no_errors fp
# (destage can still drain it all first: a starved log destages at full
# rate whatever the watermarks, seen on the large geometry under load;
# the crash states' origin checks below do not depend on it)
[ "$(wow_stat fp dirty_blocks)" -gt 0 ] ||
	echo "NOTE: the recording ends with nothing dirty: the origin check after it tests destage, not the load's dirty bits"
[ "$(wow_stat fp reclaimed_segments)" -gt 0 ] ||
	fail "no segment was reclaimed while recording: $st"
[ "$(wow_stat fp copied_blocks)" -gt 0 ] ||
	fail "cleaning copied no block forward while recording: $st"
wow_remove fp
for d in lo lc lj; do run dmsetup remove $d; done
run dmsetup message lw 0 mark end
sleep 1
run dmsetup remove lw
cpus_on
# The recording's own end, on the origin alone: load it, clean it,
# remove it; every journalled write must be on the origin (issue 34:
# every campaign ends there).
slices e /dev/nullb0
wow_create fe "$(dm_node eo)" "$(dm_node ec)" $OPTS
wow_message fe cleaner on
wow_wait_clean fe 300
wow_remove fe
wowcrash check "$(dm_node eo)" "$(dm_node ej)" > $T/origin.out 2>&1 || {
	cat $T/origin.out
	fail "the origin alone, after cleaning the recorded cache, misses journalled writes"
}
echo "the origin alone after cleaning: $(tail -n 1 $T/origin.out)"
for d in eo ec ej; do run dmsetup remove $d; done
modprobe -r null_blk 2> /dev/null
run logreplay index "$(dm_node fpl)" $T/idx end
# the recording itself: dm-wow's records must be logged in seq order
logreplay records "$(dm_node fpl)" $T/idx $OLEN $((OLEN + CLEN)) \
	> $T/records.out 2>&1 || {
	cat $T/records.out
	fail "the log holds dm-wow's records out of seq order: a log no disk shows (flushes in flight at once) or records written concurrently"
}
cat $T/records.out
logreplay points $T/idx > $T/points || fail "logreplay points failed"
NP=$(wc -l < $T/points)
echo "recorded in $(since "$T0") s: $NP flush points"
[ "$NP" -gt 0 ] || fail "no flush points in the log"

# ---- phase 2: every flush point ----

# The points are shared out among WORKERS (one per online CPU, at most 2;
# WOW_FP_WORKERS overrides): worker K takes every WORKERS-th point of the
# sample and has its own devices: a base (the state at its current point)
# on the cache disk, a snapshot of it with its COW on a ram disk, the
# slices wow is loaded on, and the wow device fwK.  (Two COW devices per
# worker, used in turn: a new snapshot table on the COW device of the one
# it replaces takes over its exceptions.)
WORKERS=${WOW_FP_WORKERS:-$(grep -c ^processor /proc/cpuinfo)}
[ "$WORKERS" -ge 1 ] 2> /dev/null || WORKERS=1
[ "$WORKERS" -le 2 ] || WORKERS=2
modprobe brd rd_nr=$((2 * WORKERS)) rd_size=131072 max_part=0 ||
	fail "cannot load brd"
[ -b /dev/ram$((2 * WORKERS - 1)) ] &&
	[ "$(size_sectors /dev/ram$((2 * WORKERS - 1)))" -ge $((128 * MIB)) ] ||
	fail "no $((2 * WORKERS)) ram disks of 128 MiB (brd loaded before with other sizes?)"
[ $((BASE_OFF + WORKERS * RLEN)) -le "$(size_sectors "$CACHE")" ] ||
	fail "the cache disk is too small for $WORKERS bases"

# pick an even sample of the points
awk -v np="$NP" -v b="$BUDGET" 'BEGIN { if (b > np) b = np; step = np / b; next_i = 0 }
	{ if (NR - 1 >= next_i) { print; next_i += step } }' $T/points \
	> $T/sample
# WOW_FP_SHARD=K/N: this boot checks points K, K+N, ... of the sample
# (make check-debug runs N shards, each a boot with its own recording,
# so that no boot outlives a session and an interrupted run resumes)
if [ -n "${WOW_FP_SHARD:-}" ]; then
	SK=${WOW_FP_SHARD%/*} SN=${WOW_FP_SHARD#*/}
	[ "$SK" -ge 0 ] 2> /dev/null && [ "$SK" -lt "$SN" ] ||
		fail "bad WOW_FP_SHARD '$WOW_FP_SHARD' (K/N, 0 <= K < N)"
	awk -v k="$SK" -v n="$SN" '(NR - 1) % n == k' $T/sample > $T/shard
	mv $T/shard $T/sample
	echo "shard $SK of $SN: every ${SN}th point of an even sample of $BUDGET"
fi
echo "checking $(wc -l < $T/sample) of $NP flush points, $WORKERS worker(s)"
# each state is first read by wowctl check and dump, whose view of the
# load must equal the module's (issue 36: the tools run the module's load)
command -v wowctl > /dev/null || fail "no wowctl in the guest (make -C userspace)"
TLR=/sys/module/dm_wow/parameters/test_load_report
[ -w $TLR ] || fail "no $TLR (a test build of dm-wow logs each load's index digest)"
echo 1 > $TLR
T1=$(now)

# kmsg_mark / kmsg_since: kernel messages about dm-wow and snapshots since
# the mark, to describe a failure (dmesg is shared by the workers, so
# nothing clears it: the lines after the count at the mark, which may hold
# another worker's lines too, and none once the ring buffer wraps; no
# verdict depends on them)
kmsg_mark() {
	KMSG_N=$(dmesg | wc -l)
}
kmsg_since() {
	dmesg | sed "1,${KMSG_N}d; s/^\[[ 0-9.]*\] //" | grep -E "wow|snapshot"
}

# failed KIND WHAT DETAIL_FILE: count and describe one failure
failed() {
	FAILS=$((FAILS + 1))
	eval "F_$1=\$((\${F_$1:-0} + 1))"
	_kind=$1
	shift
	echo "FAILURE $K.$FAILS: point $n (entry $e, window [$((e + 1)),$w)) variant $v seed $seed: $1"
	echo "    variant: $vdesc"
	[ -z "$2" ] || grep -E 'VIOLATION|wowcrash' "$2" | head -n 3 |
		sed 's/^/    /'
	# the kernel's messages for the first three of each kind
	eval "_shown=\${SHOWN_$_kind:-0}"
	[ "$_shown" -lt 3 ] || return 0
	eval "SHOWN_$_kind=$((_shown + 1))"
	cat $TW/kmsg 2> /dev/null | tail -n 8 | sed 's/^/    kernel: /'
}

# offline_view: before the module loads the state, wowctl's view of the
# cache slice: `wowctl check`'s verdict (OFF_VERDICT: "a load reads the
# checkpoint|log: loads|REFUSED", OFF_RESULT: clean, warnings or errors)
# and `wowctl dump`'s load as the line the module's test hook logs for its
# own (OFF_LOAD, tests/vm/guest/loadline.awk)
offline_view() {
	tick other
	wowctl check "$SC" > $TW/wcheck.out 2>&1
	OFF_VERDICT=$(sed -n 's/^a load reads the //p' $TW/wcheck.out)
	OFF_RESULT=$(sed -n 's/^result: //p' $TW/wcheck.out)
	# its exit status is the problems' worst (3: warnings, as for a
	# dropped torn record); 1 and 2 are its own failures
	wowctl dump "$SC" > $TW/dump.json 2> $TW/dump.err
	case $? in
	1 | 2) OFF_LOAD="wowctl dump failed: $(head -n 1 $TW/dump.err)" ;;
	*) OFF_LOAD=$(awk -f /wow/guest/loadline.awk $TW/dump.json) ;;
	esac
	tick offline
}

# check_errors: wowctl check's errors, the first three
check_errors() {
	grep '^error: ' $TW/wcheck.out | head -n 3 | sed 's/^/    wowctl: /'
}

# keep_state: the cache slice of this state and wowctl check's report, in
# the results directory for a look (wowctl check/dump on the host)
keep_state() {
	_img=$RESULTS/$WOW_NAME-state-w$K-p$n.img
	dd if="$SC" of="$_img" bs=64k 2> /dev/null &&
		cp $TW/wcheck.out "${_img%.img}.check" &&
		echo "    kept: $(basename "$_img") (the cache slice) and its wowctl check"
}

# offline_agree LOADED: after the module's load at the point (LOADED 1
# when it loaded, 0 when it refused), the two must agree: check's verdict
# and result, and dump's load against the module's own line (its source,
# next seq, dropped records, counts, free segments and index digest)
offline_agree() {
	OFFLINE=$((OFFLINE + 1))
	if [ "$1" = 0 ]; then
		case $OFF_VERDICT in
		*": REFUSED") return 0 ;;
		esac
		failed offline "the module refused a state wowctl check says loads ($OFF_VERDICT)" ""
		return 1
	fi
	_dev=$(dmsetup info -c --noheadings -o major,minor --separator : "fw$K")
	_line=$(dmesg | sed -n "s/^\[[ 0-9.]*\] //; s/^device-mapper: wow: $_dev: test: //p" | tail -n 1)
	_src=${_line#loaded from }
	_src=${_src%%,*}
	if [ "$OFF_VERDICT" != "$_src: loads" ]; then
		failed offline "wowctl check's verdict '$OFF_VERDICT' ($OFF_RESULT), the module loaded from the $_src" $TW/wcheck.out
		return 1
	fi
	if [ "$OFF_RESULT" = errors ] && [ "$_src" = log ]; then
		failed offline "wowctl check finds errors in a log the module loads" $TW/wcheck.out
		check_errors
		keep_state
		return 1
	fi
	if [ "$OFF_RESULT" = errors ]; then
		# the whole log alone would not load: not the module's path,
		# counted and shown (issue 36 notes), not a failure
		SCAN_ERRORS=$((SCAN_ERRORS + 1))
		if [ $SCAN_ERRORS -le 3 ]; then
			echo "NOTE: point $n (entry $e) variant $v seed $seed: the module loads from the checkpoint; wowctl check finds errors in the whole log, which a load without a checkpoint would refuse"
			check_errors
			keep_state
		fi
	fi
	if [ "$_line" != "$OFF_LOAD" ]; then
		failed offline "wowctl dump's load and the module's differ" ""
		echo "    wowctl dump: $OFF_LOAD"
		echo "    the module:  ${_line:-(no test line: is test_load_report on?)}"
		keep_state
		return 1
	fi
	return 0
}

# load_check N WHICH OBS_OUT [OBS_IN]: load wow over the slices (load N
# of this variant), check it
load_check() {
	_n=$1 _which=$2
	shift 2
	kmsg_mark
	tick other
	if ! dmsetup create "fw$K" --table "$WT" 2> $TW/create.err; then
		kmsg_since > $TW/kmsg
		failed "refused$_n" "$_which refused: $(grep -E 'wow: .*(not loading|cannot|error)' $TW/kmsg | head -n 1)" ""
		[ "$_n" != 1 ] || offline_agree 0
		dmsetup remove "fw$K" > /dev/null 2>&1
		return 1
	fi
	tick load
	kmsg_since > $TW/kmsg
	[ "$_n" != 1 ] || offline_agree 1
	_dropped=0
	if [ "$(wow_stat "fw$K" load_dropped)" != 0 ]; then
		DROPPED=$((DROPPED + 1))
		_dropped=1
	fi
	tick other
	if ! wowcrash check "$FW" "$SJ" "$@" > $TW/check.out 2>&1; then
		failed "check$_n" "check failed after the $_which" $TW/check.out
		dmsetup remove "fw$K"
		return 1
	fi
	tick check
	return 0
}

# renew_apply: renew the snapshot (on the other COW device: not in a
# subshell, COW must change here) and apply the variant; sets vdesc
renew_apply() {
	COW=$((1 - COW))
	dmsetup reload "fps$K" --table "$SNAP$((2 * K + COW)) N 128" &&
		dmsetup resume "fps$K" || fail "cannot renew the snapshot"
	logreplay variant "$(dm_node fpl)" $T/idx "$S" $((e + 1)) "$w" "$v" \
		$seed $OLEN $((OLEN + CLEN)) > $TW/variant.out ||
		fail "logreplay variant failed"
	vdesc=$(cat $TW/variant.out)
}

# origin_check: clean the loaded device, remove it, and check the origin
# alone (every journalled write at least as new as the second check saw):
# a recovery that counts a dirty block clean loses it only here
origin_check() {
	tick other
	ORIGIN_CHECKS=$((ORIGIN_CHECKS + 1))
	_t=$(( $(date +%s) + 300 ))
	if dmsetup message "fw$K" 0 cleaner on; then
		while [ "$(wow_stat "fw$K" dirty_blocks)" != 0 ] &&
			[ "$(date +%s)" -lt $_t ]; do
			sleep 0.2
		done
	fi
	_st=$(wow_status "fw$K")
	dmsetup remove "fw$K" || fail "cannot remove the recovered device"
	tick clean
	if [ "$(echo "$_st" | cut -d' ' -f6)" != 0 ]; then
		failed origin "cleaning did not finish in 300 s: $_st" ""
		return 1
	fi
	if ! wowcrash check "$SO" "$SJ" $TW/o3 $TW/o2 > $TW/origin.out 2>&1
	then
		failed origin "the origin alone, after cleaning, misses journalled writes" $TW/origin.out
		return 1
	fi
	tick check
}

# retry_variant: after a failure at the point, build the same state again
# and load and check it once more: is it the log's state or a race?
retry_variant() {
	_vdesc=$vdesc
	renew_apply
	vdesc=$_vdesc
	if dmsetup create "fw$K" --table "$WT" > /dev/null 2>&1; then
		if wowcrash check "$FW" "$SJ" > $TW/retry.out 2>&1
		then
			_r="passed"
		else
			_r="failed again ($(grep -c VIOLATION $TW/retry.out) violations)"
		fi
		dmsetup remove "fw$K" || fail "cannot remove the recovered device"
	else
		_r="refused again"
	fi
	echo "    the same state rebuilt, loaded and checked again: $_r"
}

# worker K: the points of the sample whose index is K modulo WORKERS;
# writes its counts to $T/wK/counts
worker() {
	K=$1
	TW=$T/w$K
	mkdir -p $TW
	CHECKED=0 TRIED=0 SECONDS_DONE=0 FAILS=0 TORN=0 DROPPED=0 POS=0
	OFFLINE=0 SCAN_ERRORS=0
	ORIGIN_CHECKS=0
	LAST=0
	run dmsetup create "fpb$K" --table "0 $RLEN linear $CACHE $((BASE_OFF + K * RLEN))"
	B=$(dm_node "fpb$K")
	zero_dev "$B" $((RLEN / MIB))
	SNAP="0 $RLEN snapshot $B /dev/ram"
	COW=0
	run dmsetup create "fps$K" --table "$SNAP$((2 * K)) N 128"
	S=$(dm_node "fps$K")
	slices "s$K" "$S"
	SO=$(dm_node "s${K}o") SC=$(dm_node "s${K}c") SJ=$(dm_node "s${K}j")
	# shellcheck disable=SC2086
	WT="0 $OLEN wow $SO $SC $(set -- $OPTS; echo $#) $OPTS"
	FW=/dev/mapper/fw$K

	tick other
	_i=-1
	while read -r n e w; do
		_i=$((_i + 1))
		[ $((_i % WORKERS)) = "$K" ] || continue
		logreplay apply "$(dm_node fpl)" $T/idx "$B" $POS $((e + 1)) ||
			fail "cannot advance the base to entry $e"
		POS=$((e + 1))
		tick advance
		if [ "$VARIANTS" = rotate ]; then
			set -- subset torn all
			eval vl=\${$((_i % 3 + 1))}
		else
			vl=$VARIANTS
		fi
		for v in $vl; do
			seed=$((n * 8 + TRIED % 8 + 1))
			TRIED=$((TRIED + 1))
			renew_apply
			tick variant
			case $vdesc in *" torn to "*) TORN=$((TORN + 1)) ;; esac
			offline_view
			if ! load_check 1 "load at the crash point" $TW/o1; then
				retry_variant
				continue
			fi
			# a few more writes, a clean shutdown, load and check
			# again (quick: after a dropped record and every third
			# variant)
			if [ "$SECOND" = some ] && [ $_dropped = 0 ] &&
				[ $((TRIED % 3)) != 1 ]; then
				tick other
				dmsetup remove "fw$K" ||
					fail "cannot remove the recovered device"
				tick remove
				continue
			fi
			SECONDS_DONE=$((SECONDS_DONE + 1))
			if ! WOWCRASH_WRITES=4 wowcrash write "$FW" "$SJ" 2 \
				$seed > $TW/more.out 2>&1; then
				failed write "writes after recovery failed" $TW/more.out
				dmsetup remove "fw$K"
				continue
			fi
			tick write
			dmsetup remove "fw$K" ||
				fail "cannot remove the recovered device"
			tick remove
			load_check 2 "load after writes and a clean shutdown" \
				$TW/o2 $TW/o1 || continue
			origin_check
		done
		CHECKED=$((CHECKED + 1))
		if [ "$LIMIT_S" -gt 0 ] &&
			[ $(((LAST - ${T1%.*}00) / 100)) -gt "$LIMIT_S" ]; then
			echo "NOTE: worker $K stops after $CHECKED points: phase 2 ran past ${LIMIT_S} s"
			break
		fi
		if [ $((CHECKED % 25)) = 0 ]; then
			echo "[$(since "$T0") s] worker $K: $CHECKED points, $TRIED variants, $FAILS failures"
		fi
	done < $T/sample
	for d in "s${K}j" "s${K}c" "s${K}o" "fps$K" "fpb$K"; do
		dmsetup remove "$d"
	done
	echo "CHECKED=$CHECKED TRIED=$TRIED SECONDS_DONE=$SECONDS_DONE" \
		"ORIGIN_CHECKS=$ORIGIN_CHECKS F_origin=${F_origin:-0}" \
		"OFFLINE=$OFFLINE F_offline=${F_offline:-0}" \
		"SCAN_ERRORS=$SCAN_ERRORS" \
		"TIME_offline=${TIME_offline:-0}" \
		"TIME_clean=${TIME_clean:-0}" \
		"FAILS=$FAILS TORN=$TORN DROPPED=$DROPPED" \
		"F_refused1=${F_refused1:-0} F_check1=${F_check1:-0}" \
		"F_write=${F_write:-0} F_refused2=${F_refused2:-0}" \
		"F_check2=${F_check2:-0}" \
		"TIME_advance=${TIME_advance:-0} TIME_variant=${TIME_variant:-0}" \
		"TIME_load=${TIME_load:-0} TIME_check=${TIME_check:-0}" \
		"TIME_write=${TIME_write:-0} TIME_remove=${TIME_remove:-0}" \
		"TIME_other=${TIME_other:-0}" > $TW/counts
}

K=0
while [ $K -lt "$WORKERS" ]; do
	( worker $K ) &
	eval "PID_$K=\$!"
	K=$((K + 1))
done
K=0
while [ $K -lt "$WORKERS" ]; do
	eval "wait \$PID_$K" || fail "worker $K failed (see above)"
	K=$((K + 1))
done

# the workers' counts, summed
for k in CHECKED TRIED SECONDS_DONE ORIGIN_CHECKS OFFLINE F_offline \
	SCAN_ERRORS FAILS TORN DROPPED F_refused1 F_check1 F_write F_refused2 \
	F_check2 F_origin TIME_offline TIME_advance TIME_variant TIME_load \
	TIME_check TIME_write TIME_remove TIME_clean TIME_other; do
	eval "$k=0"
done
K=0
while [ $K -lt "$WORKERS" ]; do
	[ -f $T/w$K/counts ] || fail "worker $K left no counts"
	for kv in $(cat $T/w$K/counts); do
		eval "${kv%%=*}=\$((\$${kv%%=*} + ${kv#*=}))"
	done
	K=$((K + 1))
done

echo "crash-flush-points: $CHECKED flush points checked (of $NP), $TRIED variants tried ($TORN torn, $DROPPED loads dropped a torn record, $SECONDS_DONE also written, shut down, loaded and checked again, $ORIGIN_CHECKS of them then cleaned and checked on the origin alone; $OFFLINE compared with wowctl check and dump first, $SCAN_ERRORS of them loaded from a checkpoint over a log wowctl check finds errors in), $FAILS failures; phase 2 took $(since "$T1") s with $WORKERS worker(s)"
echo "phase 2 time in s, summed over workers: advance $((TIME_advance / 100)), wowctl $((TIME_offline / 100)), snapshot and variant $((TIME_variant / 100)), load $((TIME_load / 100)), check $((TIME_check / 100)), write $((TIME_write / 100)), remove $((TIME_remove / 100)), clean $((TIME_clean / 100)), other $((TIME_other / 100))"
run dmsetup remove fpl
echo 0 > $CKI
echo 0 > $TLR
echo "failures by kind: load at the point refused ${F_refused1:-0}, check at the point ${F_check1:-0}, writes after recovery ${F_write:-0}, load after a clean shutdown refused ${F_refused2:-0}, check after it ${F_check2:-0}, the origin after cleaning ${F_origin:-0}, wowctl and the module disagree ${F_offline:-0}"
[ $FAILS = 0 ] || fail "$FAILS of $TRIED crash states failed (first ones above)"
echo "crash-flush-points: ok"
