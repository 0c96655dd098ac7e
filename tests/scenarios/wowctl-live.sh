#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# wowctl on a live device (issue 15): create (what the kernel would refuse
# is refused first, with the reason; by-id paths in the table; format over
# dirty data only with --force), status (text, --json checked by wowjson,
# --watch rates, --health), set (accepted and read back; refused with the
# kernel's reason), remove with dirty data (kept, reopened), clean
# (progress lines, Ctrl-C leaves the device usable), remove --clean, and
# the data read back through the device and then from the origin alone.
# The origin is dm-delay over vda: a slow write delay keeps data dirty
# and destage of one 4 KiB block at a time (max_destage_ios=1,
# max_destage_size=4K) keep data dirty until the scenario speeds both up.
#
# vm: origin=2G cache=64M timeout=400
. "${WOW_LIB:-/wow/lib.sh}"

command -v wowctl > /dev/null || skip "no wowctl in the guest (make -C userspace)"
command -v wowjson > /dev/null || fail "no wowjson in the guest"

FAILED=""
nok() { echo "NOT OK: $*"; FAILED="$FAILED; $*"; }

# wc_rc OUT ARGS...: wowctl ARGS, its output (both streams) to OUT and
# shown; sets RC
wc_rc() {
	_out=$1
	shift
	echo "+ wowctl $*"
	wowctl "$@" > "$_out" 2>&1
	RC=$?
	sed 's/^/    /' "$_out" | head -n 80
	echo "    (exit $RC)"
}

# expect OUT RC REGEX DESC: the last wc_rc exited RC and said REGEX
expect() {
	[ "$RC" -eq "$2" ] || nok "$4: exit $RC, want $2"
	[ -z "$3" ] || grep -Eq -- "$3" "$1" || nok "$4: no '$3' in the output"
}

# jget FILE PATH: a value of the JSON in FILE (fails the check if invalid)
jget() {
	wowjson "$2" < "$1" 2> /tmp/jget.err || {
		nok "JSON $1: $(cat /tmp/jget.err)"
		echo "?"
	}
}

# slow_origin MS: the origin's write delay (dm-delay reloaded)
SZ=$(size_sectors "$ORIGIN")
slow_origin() {
	_t="0 $SZ delay $ORIGIN 0 0 $ORIGIN 0 $1"
	if dm_exists slowo; then
		dmsetup suspend slowo && dmsetup load slowo --table "$_t" &&
			dmsetup resume slowo || fail "cannot reload slowo"
	else
		dmsetup create slowo --table "$_t" || fail "cannot create slowo"
	fi
	echo "origin write delay: $1 ms"
}

A="--rw=randwrite --bs=4k --offset=0 --size=16M --randseed=81 --iodepth=16"
B="--rw=randwrite --bs=4k --offset=64M --size=8M --randseed=82 --iodepth=16"

wow_reset_disks
modprobe dm-delay 2> /dev/null
slow_origin 200
O=$(dm_node slowo)
# the by-id links udev would make (the guest has no udev; links an earlier
# scenario of the boot left go first)
rm -rf /dev/disk/by-id
mkdir -p /dev/disk/by-id
ln -sf "$O" /dev/disk/by-id/dm-uuid-DELAY-wowlive
ln -sf ../../vdb /dev/disk/by-id/virtio-wowlive-cache
ln -sf ../../vdb /dev/disk/by-id/dm-name-not-this-one

info "create: what the kernel would refuse is refused first"
wc_rc /tmp/c0 create live "$O" "$CACHE" -o block_size=3000
expect /tmp/c0 2 'Invalid block_size: must be a power of two' "bad block_size"
wc_rc /tmp/c0 create live "$O" "$CACHE" -o low_watermark=50,high_watermark=40
expect /tmp/c0 2 'low_watermark must be below high_watermark' "watermarks"
wc_rc /tmp/c0 create live "$O" "$O"
expect /tmp/c0 1 'must be different devices' "same device twice"
wc_rc /tmp/c0 create live "$O" "$CACHE" -o erase_block_size=16M
expect /tmp/c0 1 'cache too small' "cache too small for 16 MiB segments"
[ "$(dm_count)" -eq 1 ] || nok "a refused create left a device: $(dmsetup ls)"

info "create"
OPTS="sequential_cutoff=1M,max_destage_ios=1 -o max_destage_size=4K"
wc_rc /tmp/c1 create live "$O" "$CACHE" -o $OPTS
expect /tmp/c1 0 '^created /dev/mapper/live' "create"
grep -q "^table  0 $SZ wow /dev/disk/by-id/dm-uuid-DELAY-wowlive /dev/disk/by-id/virtio-wowlive-cache 6 max_destage_ios 1 max_destage_size 4096 sequential_cutoff 1048576\$" /tmp/c1 ||
	nok "create: the table does not name the by-id paths: $(grep '^table' /tmp/c1)"
grep -q 'blank: the kernel formats it' /tmp/c1 || nok "create: no word of formatting"
D=$(dm_node live)
echo "dmsetup table: $(dmsetup table live)"
wc_rc /tmp/c0 create live "$O" "$CACHE"
expect /tmp/c0 1 'exists' "create over an existing name"

info "status: JSON and text"
wowctl status --json > /tmp/s0.json || nok "status --json exited $?"
cat /tmp/s0.json
[ "$(jget /tmp/s0.json '#')" = 1 ] || nok "status --json: not one device"
[ "$(jget /tmp/s0.json 0.name)" = live ] || nok "status --json: name"
[ "$(jget /tmp/s0.json 0.state)" = ok ] || nok "status --json: state"
[ "$(jget /tmp/s0.json 0.health)" = ok ] || nok "status --json: health"
[ "$(jget /tmp/s0.json 0.tunables.sequential_cutoff.value)" = 1048576 ] &&
	[ "$(jget /tmp/s0.json 0.tunables.sequential_cutoff.source)" = table ] ||
	nok "status --json: sequential_cutoff not 1048576 from the table"
[ "$(jget /tmp/s0.json 0.tunables.max_destage_ios.value)" = 1 ] ||
	nok "status --json: max_destage_ios not 1"
[ "$(jget /tmp/s0.json 0.tunables.max_age.value)" = 0 ] &&
	[ "$(jget /tmp/s0.json 0.tunables.max_age.source)" = default ] ||
	nok "status --json: max_age not the default 0"
[ "$(jget /tmp/s0.json 0.loaded_from)" = format ] || nok "status --json: loaded_from"

fio_run "$D" $A --verify=crc32c --do_verify=0
wc_rc /tmp/s1 status live
expect /tmp/s1 0 '^live: ok' "status text"
# the origin is a dm device: device-mapper's major is dynamic (253 on
# Debian's kernel, 252 on the debug kernel, where virtio_blk is built in)
DM_MAJOR=$(dmsetup info -c --noheadings -o major slowo | tr -d ' ')
[ -n "$DM_MAJOR" ] || fail "no major for slowo"
for w in "Origin +/dev/disk/by-id/dm-uuid-DELAY-wowlive \\($DM_MAJOR:" \
	'Cache +/dev/disk/by-id/virtio-wowlive-cache \(' 'Dirty blocks' 'Read hit ratio|Write hit ratio' 'Dirty occupancy \(destage\)' \
	'Mean destage seek' 'max_destage_ios +1 writes \(table\)' \
	'max_age +0 s \(default\)'; do
	grep -Eq "$w" /tmp/s1 || nok "status text lacks '$w'"
done
wowctl status --json live > /tmp/s2.json
DIRTY=$(jget /tmp/s2.json dirty_blocks)
echo "dirty after the writes: $DIRTY blocks, $(jget /tmp/s2.json derived.dirty_pct) %"
[ "$DIRTY" -gt 0 ] 2> /dev/null || nok "no dirty data after the writes (origin too fast?)"
wc_rc /tmp/s3 status --json --watch 1 --count 2 live
expect /tmp/s3 0 '"rates":\{"seconds":' "status --watch rates"
[ "$(wc -l < /tmp/s3)" -eq 2 ] || nok "status --watch --count 2: not two lines"
wowjson -l rates.destage_mib_s < /tmp/s3 > /dev/null || nok "status --watch: JSON lines"
wc_rc /tmp/s4 status --health
expect /tmp/s4 0 'live: ok' "status --health of a healthy device"

info "set: accepted and read back, refused with the kernel's reason"
wc_rc /tmp/t1 set live low_watermark 30
expect /tmp/t1 0 '' "set low_watermark"
wowctl status --json live > /tmp/t1.json
[ "$(jget /tmp/t1.json tunables.low_watermark.value)" = 30 ] ||
	nok "set low_watermark 30: not read back"
wc_rc /tmp/t1 set live high_watermark 20
expect /tmp/t1 0 '' "set high_watermark 20"
wowctl status --json live > /tmp/t1.json
# the low one moves along, 10 points below
[ "$(jget /tmp/t1.json tunables.low_watermark.value)" = 10 ] ||
	nok "set high_watermark 20: low_watermark not moved to 10"
wc_rc /tmp/t2 set live sequential_cutoff 256K
expect /tmp/t2 0 '' "set sequential_cutoff 256K"
wowctl status --json live > /tmp/t2.json
[ "$(jget /tmp/t2.json tunables.sequential_cutoff.value)" = 262144 ] ||
	nok "set sequential_cutoff 256K: not read back"
wc_rc /tmp/t3 set live max_destage_ios 0
expect /tmp/t3 1 "refused.*the kernel said: wow: .*Invalid max_destage_ios: must be from 1 to 4096" \
	"set max_destage_ios 0"
wc_rc /tmp/t4 set live max_destage_size 6K
expect /tmp/t4 1 'the kernel said: .*Invalid max_destage_size: must be a multiple of block_size' \
	"set max_destage_size 6K"
wc_rc /tmp/t5 set live block_size 8192
expect /tmp/t5 1 'not a runtime tunable' "set block_size"

info "remove with dirty data; format refused without --force; reopened"
wc_rc /tmp/r1 remove live
expect /tmp/r1 0 'its cache /dev/disk/by-id/virtio-wowlive-cache \([0-9:]*\) keeps [1-9][0-9]* dirty blocks' \
	"remove with dirty data"
dm_exists live && nok "remove: live still exists"
wc_rc /tmp/r2 create live "$O" "$CACHE" -o format
expect /tmp/r2 1 'dirty blocks .* not yet on its origin.*--force' "format over dirty data"
dm_exists live && nok "a refused format left live behind"
wc_rc /tmp/r3 create live "$O" "$CACHE" -o $OPTS
expect /tmp/r3 0 'reopened, [1-9][0-9]* dirty blocks' "reopen"
D=$(dm_node live)
fio_verify_only "$D" $A

info "clean: progress lines, then nothing dirty"
slow_origin 50
wc_rc /tmp/k1 set live max_destage_ios 4
wc_rc /tmp/k1 set live max_destage_size 64K
wc_rc /tmp/k2 clean --interval 1 live
expect /tmp/k2 0 'clean: 0 dirty blocks' "clean"
grep -Eq 'dirty blocks \([0-9.]+ MiB\) left, [0-9]+% done, [0-9.]+ MiB/s, ETA ' /tmp/k2 ||
	nok "clean: no progress line"
[ "$(wow_stat live dirty_blocks)" = 0 ] || nok "clean: still dirty: $(wow_status live)"
[ "$(wow_stat live state)" = cleaning ] || nok "clean: cleaner mode not left on"

info "clean, interrupted: the device stays usable"
wowctl cleaner live off
fio_run "$D" $B --verify=crc32c --do_verify=0
slow_origin 200
wowctl clean --interval 1 live > /tmp/k3 2>&1 &
CPID=$!
sleep 3
kill -INT $CPID
wait $CPID
RC=$?
sed 's/^/    /' /tmp/k3
echo "    (exit $RC)"
expect /tmp/k3 130 'interrupted: live is intact and usable, still in cleaner mode' \
	"clean interrupted"
dm_exists live || nok "interrupted clean: live is gone"
[ "$(wow_stat live state)" = cleaning ] || nok "interrupted clean: not in cleaner mode"
fio_verify_only "$D" $B

info "remove --clean"
slow_origin 20
wc_rc /tmp/m1 remove --clean --interval 1 live
expect /tmp/m1 0 'removed; nothing was dirty' "remove --clean"
dm_exists live && nok "remove --clean: live still exists"
wc_rc /tmp/m2 status --json
[ "$(cat /tmp/m2)" = "[]" ] || nok "status --json with no device: '$(cat /tmp/m2)'"

info "the data, from the origin alone"
dmsetup remove slowo
fio_verify_only "$ORIGIN" $A
fio_verify_only "$ORIGIN" $B

[ -z "$FAILED" ] || fail "${FAILED#; }"
echo "wowctl-live: ok"
