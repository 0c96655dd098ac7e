#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Soak (make soak DURATION=...): mixed verified fio load on a wow device
# while, at random moments, the device is suspended/resumed, its table
# reloaded (policy switched), cleaner mode switched on/off, and the origin
# made to fail writes for a few seconds (dm-flakey under the origin,
# reloaded between an always-up table and error_writes; invariant 8: origin
# errors keep the data dirty and destage retries; cleaner mode is off in an
# error window, where it would send writes to the failing origin, and the
# watermarks are 2/5 % so destage runs into every window).  It stops after
# WOW_SOAK_SECONDS, then verifies every region through the device, drains
# the cache (cleaner) and verifies them again from the origin alone.
# Fails on any fio error or verify mismatch (the runner adds kernel reports).
#
# Not in tests/scenarios (make check does not run it).  Guest environment:
#   WOW_SOAK_SECONDS   how long the load runs (default 600)
#   WOW_SOAK_SEED      seed for the random schedule (default: random, printed)
#   WOW_SOAK_CORRUPT   self-test of the checks: "device" flips one byte of a
#                      verified region through the wow device before the
#                      final verify, "origin" one byte on the origin before
#                      the origin-only verify; the soak must then fail
#
# vm: origin=2G cache=256M timeout=900
. "${WOW_LIB:-/wow/lib.sh}"

SECS=${WOW_SOAK_SECONDS:-600}
SEED=${WOW_SOAK_SEED:-$(od -An -tu2 -N2 /dev/urandom | tr -d ' ')}
RANDOM=$SEED
CORRUPT=${WOW_SOAK_CORRUPT:-}
echo "soak: ${SECS}s, seed $SEED, profile ${WOW_PROFILE:-quick}${CORRUPT:+, corrupt $CORRUPT (self-test: must fail)}"

# Three regions whose last complete writer is recorded, so they can be
# verified at the end; a fourth for randrw (verified inside each job only).
REG=48M
REGION_OFF="0 512M 1024M"
SCRATCH_OFF=1536M
NREG=3

now() { date +%s; }
rnd() { echo $((RANDOM % $1)); }	# 0 .. $1-1

OLEN=$(size_sectors "$ORIGIN")
flakey_up() { echo "0 $OLEN flakey $ORIGIN 0 1 0"; }
flakey_down() { echo "0 $OLEN flakey $ORIGIN 0 0 1 1 error_writes"; }
origin_set() {	# up|down
	if [ "$1" = up ]; then _t=$(flakey_up); else _t=$(flakey_down); fi
	dmsetup suspend so && dmsetup reload so --table "$_t" &&
		dmsetup resume so || fail "cannot switch the origin $1"
}

wow_reset_disks
run dmsetup create so --table "$(flakey_up)"
OF=$(dm_node so)
# low watermarks: destage runs all the time, so error windows meet it
WM="low_watermark 2 high_watermark 5"
wow_create soak "$OF" "$CACHE" $WM
D=$(dm_node soak)
TABLE=$(dmsetup table soak)
BASE=${TABLE%% wow *}
echo "table: $TABLE"

W=/tmp/soak
rm -rf $W
mkdir -p $W
echo 0 > $W/verified_kb

add_kb() {	# add fio's read kB (terse field 6: verify reads count as reads)
	_kb=$(grep -E '^3;' "$1" | tail -n 1 | cut -d';' -f6)
	echo $(( $(cat $W/verified_kb) + ${_kb:-0} )) > $W/verified_kb
}

fio_job() {	# OUT ARGS...: fio on the wow device, crc32c verify, terse output
	_o=$1
	shift
	fio --name=soak --filename="$D" --ioengine=libaio --direct=1 \
		--verify=crc32c --verify_fatal=1 --group_reporting \
		--minimal "$@" > "$_o" 2>&1
}

# The load: one fio job after another until asked to stop.
worker() {
	RANDOM=$((SEED + 1))
	n=0
	while [ ! -e $W/stop ]; do
		n=$((n + 1))
		t=$(rnd 4)
		# the first job always leaves a region for the final verify
		[ $n = 1 ] && t=0
		seed=$((RANDOM * 32768 + RANDOM))
		if [ "$t" = 3 ]; then
			off=$SCRATCH_OFF
		else
			r=$(rnd $NREG)
			off=$(echo $REGION_OFF | cut -d' ' -f$((r + 1)))
		fi
		case $t in
		0) a="--rw=randwrite --bs=4k --iodepth=16" ;;
		1) a="--rw=randwrite --bsrange=4k-64k --blockalign=4k --iodepth=8" ;;
		2) a="--rw=write --bs=128k --iodepth=4" ;;
		3) a="--rw=randrw --rwmixread=40 --bs=4k --iodepth=16" ;;
		esac
		job="--offset=$off --size=$REG --randseed=$seed $a"
		echo "$n $job" >> $W/jobs
		if ! fio_job $W/fio.out --do_verify=1 $job; then
			{ echo "fio job $n failed: $job"; cat $W/fio.out; } > $W/failed
			touch $W/stop
			break
		fi
		add_kb $W/fio.out
		echo $((t)) >> $W/types
		[ "$t" = 3 ] || echo "$job" > $W/region.$r
	done
	echo "$n" > $W/worker.done
}

worker > $W/worker.log 2>&1 &
WPID=$!

POLICIES="wow cscan lrw"
susp=0 reloads=0 cleaner=0 errwin=0 errsusp=0 cl=off
start=$(now)
end=$((start + SECS))
next=$((start + 60))
while [ "$(now)" -lt $end ] && [ ! -e $W/failed ]; do
	if [ "$(now)" -ge $next ]; then
		next=$((next + 60))
		echo "soak: $(( $(now) - start )) s: $(wc -l < $W/jobs) fio jobs" \
			"started, $susp suspends, $reloads reloads, $cleaner" \
			"cleaner switches, $errwin error windows;" \
			"dirty $(wow_stat soak dirty_blocks)," \
			"origin_errors $(wow_stat soak origin_errors)"
	fi
	sleep $((2 + $(rnd 7)))
	[ -e $W/failed ] && break
	case $(rnd 4) in
	0)	dmsetup suspend soak || fail "suspend failed"
		sleep 0.$(rnd 10)
		dmsetup resume soak || fail "resume failed"
		susp=$((susp + 1)) ;;
	1)	p=$(echo $POLICIES | cut -d' ' -f$(($(rnd 3) + 1)))
		t="$BASE wow $OF $CACHE 6 policy $p $WM"
		[ "$(rnd 3)" = 0 ] && t=$TABLE
		dmsetup reload soak --table "$t" || fail "reload refused: $t"
		dmsetup resume soak || fail "resume after reload failed: $t"
		reloads=$((reloads + 1)) ;;
	2)	if [ $cl = off ]; then cl=on; else cl=off; fi
		dmsetup message soak 0 cleaner $cl || fail "cleaner $cl refused"
		cleaner=$((cleaner + 1)) ;;
	3)	w=$((2 + $(rnd 4)))
		# Cleaner mode sends writes to uncached blocks straight to the
		# origin, where an origin error fails them as the origin would:
		# windows run with it off (destage meets the failing origin at
		# these watermarks; cleaner mode drains the backlog after).
		if [ $cl = on ]; then
			cl=off
			dmsetup message soak 0 cleaner off || fail "cleaner off refused"
			cleaner=$((cleaner + 1))
		fi
		origin_set down
		spid=""
		if [ "$(rnd 2)" = 0 ]; then
			# suspend/resume the wow device while destage fails
			( dmsetup suspend soak && sleep 0.5 &&
				dmsetup resume soak ) > $W/errsusp.log 2>&1 &
			spid=$!
		fi
		sleep $w
		origin_set up
		if [ -n "$spid" ]; then
			wait $spid || fail "suspend/resume in an error window failed: $(cat $W/errsusp.log)"
			errsusp=$((errsusp + 1))
		fi
		errwin=$((errwin + 1)) ;;
	esac
done
touch $W/stop
info "load stopped after $SECS s; waiting for the last fio job"
wait $WPID
if [ -e $W/failed ]; then
	cat $W/failed
	fail "$(head -n 1 $W/failed)"
fi
jobs=$(cat $W/worker.done)
echo "status: $(wow_status soak)"
oerr=$(wow_stat soak origin_errors)
cerr=$(wow_stat soak cache_errors)
[ "$cerr" = 0 ] || fail "cache errors counted: $(wow_status soak)"
case "$(wow_status soak)" in
ok\ * | cleaning\ *) ;;
*) fail "wow device is in state $(wow_field soak 1)" ;;
esac

final_verify() {	# DEV LABEL
	for r in $(seq 0 $((NREG - 1))); do
		[ -e $W/region.$r ] || continue
		fio --name=soak --filename="$1" --ioengine=libaio --direct=1 \
			--verify=crc32c --verify_fatal=1 --verify_only=1 \
			--minimal $(cat $W/region.$r) > $W/final.out 2>&1 || {
			grep -v '^3;' $W/final.out | head -n 20
			fail "final verify of region $r $2 failed: $(cat $W/region.$r)"
		}
		add_kb $W/final.out
		echo "region $r verified $2"
	done
}

# self_corrupt DEV WHERE: the self-test: flip a byte of the first written
# region on DEV, so the final verification must fail
self_corrupt() {
	r=$(ls $W/region.* | head -n 1)
	r=${r##*.}
	off=$(echo $REGION_OFF | cut -d' ' -f$((r + 1)))
	off=$(( $(echo "$off" | sed 's/M$//') * 1048576 + 4096 * 37 + 100 ))
	echo "self-test: flipping byte $off of region $r $2: $(flip_byte "$1" $off)"
}

[ "$cl" = on ] && dmsetup message soak 0 cleaner off
[ "$CORRUPT" != device ] || self_corrupt "$D" "through the device"
final_verify "$D" "through the device"
run dmsetup message soak 0 cleaner on
wow_wait_clean soak 1800
echo "clean: $(wow_status soak)"
wow_remove soak
[ "$CORRUPT" != origin ] || self_corrupt "$OF" "on the origin"
final_verify "$OF" "from the origin alone"
run dmsetup remove so

kb=$(cat $W/verified_kb)
types=$(sort $W/types 2>/dev/null | uniq -c | awk '{ printf "%s%s:%s", s, $2, $1; s = " " }')
echo "soak: ok: $SECS s, seed $SEED: $jobs fio jobs (type:count $types;" \
	"0 randwrite 4k, 1 randwrite 4k-64k, 2 seq write 128k, 3 randrw)," \
	"$susp suspends, $reloads reloads, $cleaner cleaner switches," \
	"$errwin origin error windows ($errsusp with a suspend inside)," \
	"origin_errors=$oerr, $((kb / 1024)) MiB verified"
echo "SOAK-SUMMARY jobs=$jobs suspends=$susp reloads=$reloads cleaner=$cleaner errwin=$errwin errsusp=$errsusp origin_errors=$oerr verified_mib=$((kb / 1024)) seed=$SEED seconds=$SECS"
