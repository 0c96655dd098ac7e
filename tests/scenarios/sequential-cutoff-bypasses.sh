#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# sequential_cutoff: a sequential stream past the cutoff goes straight to
# the origin (writes_bypassed grows, the cache takes only the head of the
# stream); blocks already cached are still written through the log, so a
# stream over cached data never leaves a stale cached copy behind.  Each
# stream counts its own bytes: two streams at once, with random writes
# beside them, both bypass past the cutoff.
#
# vm: origin=2G cache=256M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

wow_reset_disks
wow_create sc "$ORIGIN" "$CACHE" sequential_cutoff 1048576
D=$(dm_node sc)

info "cache some blocks inside the range the stream will cover"
fio_verify "$D" --rw=randwrite --iodepth=8 --offset=32M --size=8M \
	--io_size=2M --bs=4k --randseed=71
info "a 64 MiB sequential stream over them"
fio_verify "$D" --rw=write --iodepth=4 --offset=0 --size=64M --bs=128k \
	--randseed=72
st=$(wow_status sc)
echo "status: $st"
byp=$(wow_key sc writes_bypassed)
[ "$byp" -gt 0 ] || fail "nothing bypassed"
valid=$(wow_key sc valid_blocks)
[ "$valid" -lt 16384 ] || fail "the whole stream was cached ($valid blocks)"

info "two 32 MiB streams and a thin random one, at once"
# Each stream is past the cutoff after its first 8 writes: of its 256
# writes, 248 may bypass.  A detector with one end for the whole device
# loses both streams whenever a write of another comes between two of
# theirs, and then bypasses few of them.
FIO2="--ioengine=libaio --direct=1 --bs=128k --verify=crc32c
	--verify_fatal=1 --group_reporting --output=/tmp/sc.fio
	--name=seq1 --filename=$D --rw=write --iodepth=4 --offset=128M
	--size=32M --randseed=73
	--name=seq2 --filename=$D --rw=write --iodepth=4 --offset=640M
	--size=32M --randseed=74
	--name=rand --filename=$D --rw=randwrite --bs=4k --iodepth=1
	--offset=1G --size=1G --number_ios=512 --rate_iops=200 --randseed=75"
byp0=$(wow_key sc writes_bypassed)
# shellcheck disable=SC2086
fio $FIO2 --do_verify=1 || fail "fio failed: $(cat /tmp/sc.fio)"
grep -E 'IOPS=' /tmp/sc.fio | sed 's/^/    /'
st=$(wow_status sc)
echo "status: $st"
byp2=$(($(wow_key sc writes_bypassed) - byp0))
echo "$byp2 of the streams' 512 writes bypassed"
[ "$byp2" -ge 400 ] ||
	fail "only $byp2 of 512 stream writes bypassed: streams beside others are lost"
[ "$byp2" -le 496 ] || fail "$byp2 writes bypassed: more than the streams past the cutoff"

run dmsetup message sc 0 cleaner on
wait_clean sc
wow_remove sc
fio_verify_only "$ORIGIN" --rw=write --iodepth=4 --offset=0 --size=64M \
	--bs=128k --randseed=72
# shellcheck disable=SC2086
fio $(echo "$FIO2" | sed "s|$D|$ORIGIN|g") --verify_only=1 ||
	fail "the streams do not read back from the origin: $(cat /tmp/sc.fio)"
echo "sequential-cutoff-bypasses: ok ($byp + $byp2 writes bypassed)"
