#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Crash consistency (invariants 2 and 3) over five power cuts.  Each boot
# but the last runs `wowcrash write` on the wow device: 4 threads write
# self-describing 4 KiB blocks (O_DIRECT, some O_DSYNC = FUA) over 256 MiB
# and journal, on the host's 9p share, every write a completed fdatasync
# (FLUSH) or FUA made durable; after 3..7 s the power is cut (sysrq b).
# Every boot after the first recovers the cache and `wowcrash check`s that
# each block holds a valid record of itself at least as new as its newest
# journalled generation, and at least as new as what the previous checks
# read (no resurrection after a later recovery); blocks nobody wrote must
# still be zero.  The cache is small (64 MiB) and destage is forced on odd
# boots (watermarks 0/1 %), so cuts land during destage, reclaim and cache-
# full waits.  The last boot also cleans the cache, removes the device and
# checks the origin alone (no older version was destaged over a newer one).
#
# vm: origin=2G cache=64M timeout=150 boots=6
. "${WOW_LIB:-/wow/lib.sh}"

LAST=6
J=$RESULTS/$WOW_NAME.journal
command -v wowcrash > /dev/null || fail "no wowcrash in the guest"

if [ "$WOW_BOOT" -eq 1 ]; then
	wow_reset_disks
	zero_dev "$ORIGIN" 256 64	# wowcrash's span starts out zero
	rm -rf "$J"
	mkdir -p "$J" || fail "cannot make $J"
fi
case $WOW_BOOT in
1 | 3 | 5) OPTS="low_watermark 0 high_watermark 1" ;;
*) OPTS="" ;;
esac
wow_create pc "$ORIGIN" "$CACHE" $OPTS
D=$(dm_node pc)
dmesg_since | grep -E 'wow' | sed 's/^/    kernel: /'
echo "status: $(wow_status pc)"

if [ "$WOW_BOOT" -gt 1 ]; then
	info "check after power cut $((WOW_BOOT - 1))"
	run wowcrash check "$D" "$J" "$WOW_BOOT"
fi

if [ "$WOW_BOOT" -lt $LAST ]; then
	# how long to write before the cut, per boot
	set -- 4 7 3 6 5
	eval T=\${$WOW_BOOT}
	info "write for $T s, then cut the power"
	wowcrash write "$D" "$J" "$WOW_BOOT" $((WOW_BOOT * 7919)) \
		> /tmp/pc-write.out 2>&1 &
	WPID=$!
	sleep "$T"
	kill -0 $WPID 2> /dev/null || { cat /tmp/pc-write.out; fail "wowcrash write died"; }
	echo "status at the cut: $(wow_status pc)"
	cat "$J"/j-"$WOW_BOOT"-*.txt | wc -l | sed 's/^/journalled writes this boot: /'
	wow_power_cut
fi

info "clean the cache, then check the origin alone"
wow_message pc cleaner on
wow_wait_clean pc 120
echo "status: $(wow_status pc)"
wow_no_errors pc
wow_remove pc
run wowcrash check "$ORIGIN" "$J"
echo "crash-power-cut: ok"
