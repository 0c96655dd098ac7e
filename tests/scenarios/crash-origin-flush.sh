#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Invariant 4: a cached copy is reclaimed only after its destage write is
# durable on the origin.  The origin is behind dm-log-writes, which logs a
# write only once a flush that completed after it made it durable (or its
# own FUA), so replaying the log gives what the origin would hold after a
# power cut.  `wowcrash write` (journal of durable writes) runs on a 64 MiB
# cache with destage forced (watermarks 0/1 %) until segments have been
# reclaimed.  Then the origin, and after it the cache, are suspended
# (I/O frozen; the origin first, so no flush can land after the cache's
# last record).  A copy of the frozen cache and the replayed origin log are
# assembled as a second wow device, and `wowcrash check` must find every
# journalled write on it.  A reclaim recorded before the destaged data was
# flushed to the origin leaves that block zero or old on the replayed origin.
#
# vm: origin=2G cache=64M timeout=240
. "${WOW_LIB:-/wow/lib.sh}"

command -v wowcrash > /dev/null || fail "no wowcrash in the guest"
command -v logreplay > /dev/null || fail "no logreplay in the guest"
MIB=2048		# sectors
DATA=384		# MiB: wowcrash writes from 64 to 320 MiB
CLEN=$(size_sectors "$CACHE")
J=/tmp/of-journal

wow_reset_disks
# origin disk: the data (od), the write log (ol), the replay target (or), a
# copy of the cache (cc); the cache disk behind a linear map (cl)
run dmsetup create od --table "0 $((DATA * MIB)) linear $ORIGIN 0"
run dmsetup create ol --table "0 $((1024 * MIB)) linear $ORIGIN $((DATA * MIB))"
run dmsetup create or --table "0 $((DATA * MIB)) linear $ORIGIN $(((DATA + 1024) * MIB))"
run dmsetup create cc --table "0 $CLEN linear $ORIGIN $(((2 * DATA + 1024) * MIB))"
run dmsetup create cl --table "0 $CLEN linear $CACHE 0"
zero_dev "$(dm_node od)" 320
zero_dev "$(dm_node ol)" 1
run dmsetup create lw --table "0 $((DATA * MIB)) log-writes $(dm_node od) $(dm_node ol)"
wow_create of "$(dm_node lw)" "$(dm_node cl)" low_watermark 0 high_watermark 1
D=$(dm_node of)

rm -rf "$J"
mkdir -p "$J" || fail "cannot make $J"
info "write through a 64 MiB cache with destage forced until segments are reclaimed"
wowcrash write "$D" "$J" 1 4242 > /tmp/of-write.out 2>&1 &
WPID=$!
n=0
while [ "$(wow_stat of reclaimed_segments)" -lt 4 ]; do
	n=$((n + 1))
	[ $n -lt 120 ] || fail "no reclaim after 120 s: $(wow_status of)"
	sleep 1
done
sleep 2
kill -0 $WPID 2> /dev/null || { cat /tmp/of-write.out; fail "wowcrash write died"; }

info "freeze the origin, then the cache"
run dmsetup suspend --noflush lw
run dmsetup suspend --noflush cl
st=$(wow_status of)
echo "status at the freeze: $st"
cp -r "$J" "$J.frozen" || fail "cannot copy the journal"
cat "$J.frozen"/j-1-*.txt | wc -l | sed 's/^/journalled writes: /'
[ "$(wow_stat of reclaimed_segments)" -gt 0 ] ||
	fail "no segment was reclaimed before the freeze: the check would prove nothing"
run dmsetup message lw 0 mark frozen
sleep 1
run dd if="$CACHE" of="$(dm_node cc)" bs=1M count=$((CLEN / MIB)) iflag=direct oflag=direct
zero_dev "$(dm_node or)" 320
run logreplay "$(dm_node ol)" "$(dm_node or)" frozen

info "assemble the frozen cache over the replayed origin and check"
wow_create ofr "$(dm_node or)" "$(dm_node cc)"
echo "recovered: $(wow_status ofr)"
run wowcrash check "$(dm_node ofr)" "$J.frozen"
wow_remove ofr

info "thaw and tear down"
run dmsetup resume cl
run dmsetup resume lw
kill $WPID 2> /dev/null
wait $WPID 2> /dev/null
wow_no_errors of
wow_remove of
run dmsetup remove lw
for d in cl cc or ol od; do
	run dmsetup remove $d
done
echo "crash-origin-flush: ok"
