#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Sequential writes set no recency bit, even while other writes run beside
# them: two sequential streams (8 MiB each, 4 KiB writes, iodepth 4) and a
# thin random stream run at once with destage held back (the dirty data
# stays under the low watermark, and a reader keeps the device from
# looking idle), so every group they touch is still dirty at the end.
# Each stream group takes 32 writes, 31 of them to a group already dirty:
# a rule that lost a stream as soon as another write came between two of
# its writes set a bit on nearly all 128 stream groups (as the single
# stream end of earlier modules did: wow then spared the log groups of an
# SPC-1-like mix it should have destaged).  The random stream's 256
# writes over 1 GiB hit a dirty group only a few times.
#
# vm: origin=2G cache=256M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
wow_create st "$ORIGIN" "$CACHE" policy wow low_watermark 50 high_watermark 60
D=$(dm_node st)
# a reader keeps the device from looking idle (an idle device destages,
# and the hand would clear the bits it passes) until the status is read
wow_keep_busy "$D" 500000
echo "+ fio: two sequential streams and a random one, at once"
fio --ioengine=libaio --direct=1 --filename="$D" --bs=4k --group_reporting \
	--output=/tmp/wow-fio.out \
	--name=seq1 --rw=write --iodepth=4 --offset=0 --size=8M \
	--name=seq2 --rw=write --iodepth=4 --offset=512M --size=8M \
	--name=rand --rw=randwrite --iodepth=1 --offset=1G --size=1G \
	--number_ios=256 --rate_iops=100 --randseed=7 ||
	fail "fio failed: $(cat /tmp/wow-fio.out)"
grep -E 'IOPS=' /tmp/wow-fio.out | sed 's/^/    /'
st=$(wow_status st)
wow_stop_busy
echo "status: $st"
groups=$(echo "$st" | tr ' ' '\n' | sed -n 's/^dirty_groups=//p')
bits=$(echo "$st" | tr ' ' '\n' | sed -n 's/^recency_bits=//p')
runs=$(echo "$st" | tr ' ' '\n' | sed -n 's/^destage_runs=//p')
[ "$runs" -eq 0 ] || fail "$runs destage runs: the hand moved"
[ "$groups" -ge 128 ] || fail "only $groups dirty groups"
echo "recency bits: $bits of $groups dirty groups"
[ "$bits" -le 8 ] ||
	fail "$bits recency bits: sequential writes beside others set them"
wow_remove st
echo "policy-wow-streams: ok"
