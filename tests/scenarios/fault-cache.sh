#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Cache-device faults under a verified load (invariant 8), dm-flakey under
# the cache switched by table reloads at pseudo-random moments while
# wowpat load writes and reads 4 KiB blocks through the wow device:
#  (A) write errors: the target goes read_only or failed; every read
#      returns the last acknowledged data (or the data of a write that
#      failed, which may have reached the media) or EIO, never older data;
#  (B) read and write errors: the same, state failed or read_only;
#  (C) dropped writes (drop_writes: the cache device acknowledges writes it
#      does not store; nobody can see that at once).  What is right after
#      the fault clears and the device is removed and created again: the
#      load either is refused with a kernel message, changing nothing, or
#      succeeds and every block written before the drop window holds that
#      data or a newer version of itself (never an older one, never another
#      block's or garbage); no hang.  Blocks written only during the window
#      may read old (the device never stored them).  Blocks written and
#      committed after it should hold their data too, but the scan cannot
#      promise that (see (C) below): reported as a known limit.  The load
#      is by the scan: the checkpoint written at the removal trusted the
#      device, so it is dropped first.
# After each fault clears, the device is removed and created again on the
# same cache (recovery) and must be back to ok with every acknowledged
# block readable, and take new writes.
#
# vm: origin=2G cache=256M timeout=600
. "${WOW_LIB:-/wow/lib.sh}"
. /wow/guest/hostile.sh

if [ "$PROFILE" = full ]; then ROUNDS=10; else ROUNDS=1; fi
NB=8192
RND_STATE=815
FAILED=""
nok() { echo "NOT OK: $*"; FAILED="$FAILED; $*"; }

setup() {
	wow_reset_disks
	flakey cf "$CACHE" up
	wow_create fc "$ORIGIN" "$(dm_node cf)"
	D=$(dm_node fc)
}

# reload_and_check TAG: fault cleared; remove and create the device again
# on the same cache; ok state; everything acknowledged (or a failed write's
# data) reads back without error; new writes work
reload_and_check() {
	flakey cf "$CACHE" up
	bounded 60 /tmp/fc.rm dmsetup remove fc
	[ $? -eq 0 ] || { nok "$1: cannot remove after the fault: $(cat /tmp/fc.rm)"; return 1; }
	dmesg_clear
	bounded 60 /tmp/fc.cr dmsetup create fc --table "$(wow_table "$ORIGIN" "$(dm_node cf)")"
	rc=$?
	dmesg_since | grep wow | sed 's/^/    kernel: /'
	[ $rc -eq 0 ] || { nok "$1: not loadable after the fault cleared (exit $rc): $(cat /tmp/fc.cr)"; return 1; }
	st=$(wow_status fc)
	case "$st" in ok\ *) ;; *) nok "$1: state after reload: $st" ;; esac
	wowpat verify "$D" /tmp/fc.state $NB 4096 || nok "$1: acknowledged data lost or stale after reload"
	wowpat load "$D" /tmp/fc.state2 3 99 $NB 4096 | tail -n 1 ||
		nok "$1: new writes fail after reload"
	wowpat verify "$D" /tmp/fc.state2 $NB 4096 > /dev/null ||
		nok "$1: new writes do not read back"
}

# error_case TAG MODE STATES: fault MODE at a random moment of the load
error_case() {
	setup
	rnd 30
	wowpat load "$D" /tmp/fc.state 10 $((ROUND * 10 + $3)) $NB 4096 eio-ok > /tmp/fc.load 2>&1 &
	LOAD=$!
	sleep "$((R / 10 + 1)).$((R % 10))"
	flakey cf "$CACHE" $2
	wait $LOAD
	rc=$?
	cat /tmp/fc.load
	[ $rc -eq 0 ] || nok "$1: the load read stale or wrong data (exit $rc)"
	st=$(wow_status fc)
	echo "    status: $(echo "$st" | cut -d' ' -f1-6) cache_errors=$(wow_stat fc cache_errors)"
	case "$st" in read_only\ * | failed\ *) ;; *)
		nok "$1: state ${st%% *} after cache faults (want read_only or failed)" ;;
	esac
	grep -q 'writes (0 failed)' /tmp/fc.load && grep -q 'reads (0 failed)' /tmp/fc.load &&
		nok "$1: no I/O failed after the fault (the fault did not hit)"
	info "$1: reads while the fault lasts: correct or EIO"
	wowpat verify "$D" /tmp/fc.state $NB 4096 eio-ok ||
		nok "$1: a read returned stale or wrong data"
	reload_and_check "$1"
}

ROUND=0
while [ $ROUND -lt $ROUNDS ]; do
	ROUND=$((ROUND + 1))
	info "round $ROUND (A) cache write errors"
	error_case "(A) write errors" error_writes 1
	info "round $ROUND (B) cache read and write errors"
	error_case "(B) read+write errors" errors 2

	info "round $ROUND (C) dropped cache writes"
	setup
	run wowpat load "$D" /tmp/fc.pre 4 $((ROUND * 10 + 3)) $NB 4096
	wow_message fc commit
	rnd 20
	wowpat load "$D" /tmp/fc.win $((R / 10 + 3)) $((ROUND * 10 + 4)) $NB 4096 eio-ok > /tmp/fc.load 2>&1 &
	LOAD=$!
	sleep 1
	flakey cf "$CACHE" drop_writes
	sleep "$((R / 10 + 1)).$((R % 10))"
	flakey cf "$CACHE" up
	wait $LOAD
	echo "    load across the drop window (reads may be stale: the cache device lied): $(tail -n 1 /tmp/fc.load)"
	info "(C) after the window: new writes, committed"
	run wowpat load "$D" /tmp/fc.post 3 $((ROUND * 10 + 5)) $NB 4096
	wow_message fc commit
	st=$(wow_status fc)
	echo "    status: $(echo "$st" | cut -d' ' -f1-6)"
	bounded 60 /tmp/fc.rm dmsetup remove fc || nok "(C) cannot remove: $(cat /tmp/fc.rm)"
	# the checkpoint the removal wrote describes what the target
	# believes, the writes the device dropped included, so it points at
	# data that was never stored (design.rst, Known limits): (C) checks
	# what the log scan makes of a device that lied
	drop_checkpoint "$(dm_node cf)"
	c_sum=$(sum_head "$(dm_node cf)" 8192)
	o_sum=$(sum_head "$ORIGIN" 65536)
	dmesg_clear
	bounded 60 /tmp/fc.cr dmsetup create fc --table "$(wow_table "$ORIGIN" "$(dm_node cf)")"
	rc=$?
	dmesg_since | grep wow | sed 's/^/    kernel: /'
	if [ $rc -eq 124 ]; then
		nok "(C) load after dropped writes did not finish in 60 s"
	elif [ $rc -ne 0 ]; then
		msg=$(dmesg_since | grep 'wow' | grep -E 'not loading|corrupt|error' | head -n 1)
		[ -n "$msg" ] || nok "(C) refused without a kernel message"
		[ "$(sum_head "$(dm_node cf)" 8192)" = "$c_sum" ] &&
			[ "$(sum_head "$ORIGIN" 65536)" = "$o_sum" ] ||
			nok "(C) refused load changed a device"
		echo "    (C) refused after dropped writes: $msg"
	else
		echo "    (C) loaded after dropped writes: $(wow_status fc | cut -d' ' -f1-6)"
		wowpat verify "$D" /tmp/fc.pre $NB 4096 atleast ||
			nok "(C) a block written before the drop window reads older data or garbage after reload"
		# Format 1 cannot promise these: when the device dropped the
		# first record of a segment opened in the window, the records
		# of that segment life written after it (after the window too)
		# are not found (block 0 is not a record of this cache, so the
		# segment looks free).  Seen on kept disks: segment 26, blocks
		# 0-163 dropped, 46 records from block 164 on lost.  Reported,
		# not failed, until the checkpoint's allocation chain (format 2,
		# Documentation/log-v2.md) lets recovery look there.
		wowpat verify "$D" /tmp/fc.post $NB 4096 atleast ||
			echo "KNOWN LIMIT (format 1): (C) a block written and committed after the fault cleared reads older data after reload: a segment's first record was dropped in the window"
		bounded 60 /tmp/fc.rm dmsetup remove fc || nok "(C) cannot remove after reload"
	fi
	dmsetup remove fc > /dev/null 2>&1
	dmsetup remove cf > /dev/null 2>&1
done

echo "fault-cache: $FAULTS faults injected ($PROFILE, $ROUNDS rounds of write errors, read+write errors, dropped writes)"
[ -z "$FAILED" ] || fail "${FAILED#; }"
