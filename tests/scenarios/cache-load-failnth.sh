#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every allocation a table load makes can fail, and each failure must give
# a clean error and leave nothing behind; a load retried after a failed
# one must count nothing twice (invariant 7; the retry half of issue 13's
# "failed preresume double-counts").  With the kernel's fault injection
# (/proc/self/fail-nth, failslab and fail_page_alloc set to fail sleeping
# allocations too), the N-th fault point of `dmsetup load` (ctr) and, in
# turn, of `dmsetup resume` (preresume: recovery) fails, for N = 1, 2, ...
# until N passes every fault point of the call.  After each failed resume
# the resume is retried without faults: valid_blocks must be exactly the
# 2048 blocks written, the data must read back, and cleaner mode must
# reach dirty_blocks 0.  Needs a kernel with CONFIG_FAULT_INJECTION,
# FAILSLAB and FAIL_PAGE_ALLOC (the debug kernel); skipped elsewhere.
#
# The cache is small (64 MiB, 63 segments): recovery allocates per segment,
# so the fault points grow with the segments (255 on a 256 MiB cache, 10 s
# each on the debug kernel) while the sites they reach stay the same.
#
# vm: origin=2G cache=64M timeout=1200
. "${WOW_LIB:-/wow/lib.sh}"

command -v failnth > /dev/null || fail "no failnth in the guest"
[ -e /proc/self/fail-nth ] || skip "no /proc/self/fail-nth (kernel without fault injection)"
FS=/sys/kernel/debug/failslab FP=/sys/kernel/debug/fail_page_alloc
grep -q ' /sys/kernel/debug debugfs ' /proc/mounts ||
	mount -t debugfs none /sys/kernel/debug
[ -d $FS ] || skip "no failslab"
for f in $FS $FP; do
	[ -d $f ] || continue
	echo N > $f/ignore-gfp-wait
	[ -e $f/ignore-gfp-highmem ] && echo N > $f/ignore-gfp-highmem
	[ -e $f/min-order ] && echo 0 > $f/min-order
	[ -e $f/cache-filter ] && echo N > $f/cache-filter
	echo 0 > $f/verbose
done

MAX=$([ "${WOW_PROFILE:-quick}" = full ] && echo 400 || echo 60)
wow_reset_disks
wow_create lf "$ORIGIN" "$CACHE" low_watermark 98 high_watermark 99
dd if=/dev/urandom of=/tmp/lf.data bs=1M count=8 2> /dev/null
run dd if=/tmp/lf.data of="$(dm_node lf)" bs=1M oflag=direct conv=notrunc
wow_remove lf
TABLE=$(wow_table "$ORIGIN" "$CACHE" low_watermark 98 high_watermark 99)

check_loaded() {	# check_loaded WHAT
	_v=$(wow_stat lf valid_blocks)
	[ "$_v" = 2048 ] || fail "$1: $_v valid blocks, not 2048: $(wow_status lf)"
	_got=$(dd if="$(dm_node lf)" bs=1M count=8 iflag=direct 2> /dev/null | md5sum)
	[ "$_got" = "$(md5sum < /tmp/lf.data)" ] || fail "$1: data differs"
}

LEN=$(size_sectors "$ORIGIN")
PARAMS=${TABLE#* * wow }
ctr_failed=0 ctr_ok=0 pre_failed=0 pre_ok=0 streak=0
n=1
while [ $n -le "$MAX" ]; do
	# ctr: the N-th fault point of the table load fails
	run dmsetup create lf --notable
	out=$(failnth $n load lf 0 "$LEN" wow "$PARAMS") && rc=0 || rc=$?
	[ $rc -le 1 ] || fail "failnth: $out"
	case $out in
	injected*)
		ctr_failed=$((ctr_failed + 1))
		[ $rc = 1 ] || echo "ctr fault $n: injected, but the load succeeded ($out)"
		[ $rc = 1 ] || run dmsetup clear lf
		run dmsetup load lf --table "$TABLE" ;;
	*)
		ctr_ok=$((ctr_ok + 1))
		[ $rc = 0 ] || fail "ctr with fault $n not reached failed: $out" ;;
	esac
	# preresume: the N-th fault point of the first resume fails
	out=$(failnth $n resume lf) && rc=0 || rc=$?
	[ $rc -le 1 ] || fail "failnth: $out"
	case $out in
	injected*)
		pre_failed=$((pre_failed + 1))
		[ $rc = 0 ] || run dmsetup resume lf
		run dmsetup mknodes lf
		check_loaded "after preresume fault $n and a retry"
		streak=0 ;;
	*)
		pre_ok=$((pre_ok + 1))
		[ $rc = 0 ] || fail "resume with fault $n not reached failed: $out"
		run dmsetup mknodes lf
		check_loaded "resume with fault $n not reached"
		streak=$((streak + 1)) ;;
	esac
	wow_remove lf
	# both calls have fewer than N fault points: every one was tried
	[ $streak -ge 2 ] && break
	n=$((n + 1))
done
echo "fault points: ctr $ctr_failed failed / $ctr_ok passed, preresume $pre_failed failed / $pre_ok passed"
[ $pre_failed -gt 0 ] || fail "no preresume allocation failed: fault injection did not act"
info "after all that: cleaner mode drains to the origin"
wow_create lf "$ORIGIN" "$CACHE"
check_loaded "final load"
wow_message lf cleaner on
wow_wait_clean lf 300
wow_no_errors lf
wow_remove lf
echo "cache-load-failnth: ok"
