#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A load (preresume) that fails part way, retried, must count nothing
# twice.  8 MiB of distinct blocks are logged (2048 blocks); then the cache
# device is reassembled with every sector past its fifth segment erroring,
# so recovery reads four segments and fails.  With the device whole again,
# `dmsetup resume` retries the load: valid_blocks must be exactly 2048,
# and cleaner mode must bring dirty_blocks to 0 (a double count would
# never get there), with every block reading back.
#
# vm: origin=2G cache=256M timeout=180
. "${WOW_LIB:-/wow/lib.sh}"

CLEN=$(size_sectors "$CACHE")
wow_reset_disks
run dmsetup create lr-c --table "0 $CLEN linear $CACHE 0"
wow_create lr "$ORIGIN" "$(dm_node lr-c)" low_watermark 98 high_watermark 99
dd if=/dev/urandom of=/tmp/lr.data bs=1M count=8 2> /dev/null
run dd if=/tmp/lr.data of="$(dm_node lr)" bs=1M oflag=direct conv=notrunc
st=$(wow_status lr)
echo "status: $st"
[ "$(wow_stat lr valid_blocks)" = 2048 ] || fail "expected 2048 valid blocks: $st"
wow_remove lr
# the scan is what fails part way: without the checkpoint the removal wrote
# (it sits before the first segment, so it would still read)
drop_checkpoint "$(dm_node lr-c)"
# the metadata (superblock, checkpoint area) and 4 segments of 1 MiB
GOOD=$(($(read_u "$(dm_node lr-c)" 48 8) + 4 * 2048))

info "the cache device errors past its fourth segment: the load fails"
run dmsetup suspend lr-c
run dmsetup reload lr-c --table "0 $GOOD linear $CACHE 0
$GOOD $((CLEN - GOOD)) error"
run dmsetup resume lr-c
run dmsetup create lr --notable
run dmsetup load lr --table "$(wow_table "$ORIGIN" "$(dm_node lr-c)" low_watermark 98 high_watermark 99)"
dmesg_clear
if dmsetup resume lr 2> /dev/null; then
	fail "the load succeeded though the cache device errors"
fi
dmesg_since | grep wow | sed 's/^/    kernel: /'

info "the device whole again: retry the load"
run dmsetup suspend lr-c
run dmsetup reload lr-c --table "0 $CLEN linear $CACHE 0"
run dmsetup resume lr-c
run dmsetup resume lr
dm_node lr > /dev/null
st=$(wow_status lr)
echo "status after the retry: $st"
[ "$(wow_stat lr valid_blocks)" = 2048 ] ||
	fail "the retried load counts $(wow_stat lr valid_blocks) valid blocks, not 2048: $st"
[ "$(wow_stat lr dirty_blocks)" -le 2048 ] || fail "more dirty than valid blocks: $st"
got=$(dd if="$(dm_node lr)" bs=1M count=8 iflag=direct 2> /dev/null | md5sum)
[ "$got" = "$(md5sum < /tmp/lr.data)" ] || fail "data differs after the retried load"
wow_message lr cleaner on
wow_wait_clean lr 120
wow_no_errors lr
wow_remove lr
run dmsetup remove lr-c
got=$(dd if="$ORIGIN" bs=1M count=8 iflag=direct 2> /dev/null | md5sum)
[ "$got" = "$(md5sum < /tmp/lr.data)" ] || fail "the origin does not hold the data after cleaning"
echo "cache-load-retry: ok"
