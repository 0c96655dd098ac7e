#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The destage policy is switched by a table reload while dirty data is
# cached: the new table reports the new policy, its TABLE line names it,
# the dirty data survives the switch and still reads back, and runtime
# tunables change by message and are refused when out of range.
#
# vm: origin=2G cache=256M timeout=240
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
wow_create ps "$ORIGIN" "$CACHE" policy cscan
D=$(dm_node ps)
JOB="--offset=0 --size=1G --io_size=16M --bs=4k --randseed=41"
fio_verify "$D" --rw=randwrite --iodepth=16 $JOB
dirty=$(wow_field ps 6)
[ "$dirty" -gt 0 ] || fail "nothing dirty before the switch: $(wow_status ps)"

for policy in wow lrw cscan; do
	info "reload with policy $policy"
	run dmsetup reload ps --table "$(wow_table "$ORIGIN" "$CACHE" policy $policy)"
	run dmsetup resume ps
	st=$(wow_status ps)
	echo "status: $st"
	echo "$st" | grep -q "^ok $policy 4096 " || fail "policy is not $policy: $st"
	wow_table_of ps | grep -q " 2 policy $policy\$" ||
		fail "TABLE does not name $policy: $(wow_table_of ps)"
	fio_verify_only "$D" --rw=randwrite --iodepth=16 $JOB
done

info "runtime tunables"
run dmsetup message ps 0 max_destage_ios 4
run dmsetup message ps 0 high_watermark 50
wow_status ps | grep -q " high_watermark=50 " ||
	fail "high_watermark not 50: $(wow_status ps)"
for bad in "max_destage_ios 0" "high_watermark 101" "low_watermark 100" \
	"block_size 8192" "policy wow" "no_such_tunable 1" "max_age x"; do
	if dmsetup message ps 0 $bad 2>/dev/null; then
		fail "message '$bad' accepted"
	fi
	echo "refused: $bad"
done
wow_status ps | grep -q " high_watermark=50 " ||
	fail "a refused message changed high_watermark: $(wow_status ps)"
run dmsetup message ps 0 cleaner on
wait_clean ps
wow_remove ps
fio_verify_only "$ORIGIN" --rw=randwrite --iodepth=16 $JOB
echo "policy-switch-by-reload: ok"
