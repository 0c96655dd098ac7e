# SPDX-License-Identifier: GPL-2.0
#
# Helpers for dm-wow VM scenarios (busybox ash).  Source it with
#     . "${WOW_LIB:-/wow/lib.sh}"
#
# Environment given by the VM init: RESULTS (9p results dir), WOW_NAME,
# WOW_BOOT (1, 2, ...), ORIGIN (/dev/vda), CACHE (/dev/vdb).
#
# fail() exits the shell it runs in (in the interactive VM shell, where
# WOW_INTERACTIVE is set, it returns 1): call the checking helpers directly,
# not inside $(...).

: "${RESULTS:=/results}"
: "${WOW_BOOT:=1}"
: "${ORIGIN:=/dev/vda}"
: "${CACHE:=/dev/vdb}"
: "${WOW_NAME:=$(basename "$0" .sh)}"
export DM_DISABLE_UDEV=1

# ---- messages ----

# fail MSG: print "FAILED: MSG" (the runner shows it as the reason), exit 1
fail() {
	echo "FAILED: $*"
	# in the interactive shell (wowvm.py shell) do not log the user out
	[ -n "$WOW_INTERACTIVE" ] && return 1
	exit 1
}

# skip MSG: this scenario cannot run on this kernel or machine: print
# "SKIPPED: MSG" and exit 77 (the runner prints SKIP: vm/NAME (MSG))
skip() {
	echo "SKIPPED: $*"
	exit 77
}

info() {
	echo "--- $*"
}

# run CMD...: echo and run a command; fail if it fails
run() {
	echo "+ $*"
	"$@" || fail "command failed (exit $?): $*"
}

# fuzz_nok MSG: a fuzz case ($cases) went wrong: print it, add it to
# $FAILED, and fail the scenario once more than ten have
fuzz_nok() {
	echo "NOT OK case $cases: $*"
	FAILED="$FAILED; case $cases: $*"
	[ $(echo "$FAILED" | tr ';' '\n' | wc -l) -le 10 ] || fail "${FAILED#; }"
}

# ---- kernel log ----

# dmesg_clear: forget the kernel messages so far (dmesg_since shows new ones)
dmesg_clear() {
	dmesg -c > /dev/null
}

# dmesg_since: kernel messages since the last dmesg_clear, without times
dmesg_since() {
	dmesg | sed 's/^\[[ 0-9.]*\] //'
}

# ---- block devices ----

# size_sectors DEV: size in 512-byte sectors
size_sectors() {
	blockdev --getsz "$1"
}

# dev_id DEV: major:minor of a block device, as dm prints it in tables
dev_id() {
	set -- $(stat -L -c '%t %T' "$1") || return 1
	printf '%d:%d\n' "0x$1" "0x$2"
}

# dm_node NAME: path of the device node of dm device NAME (made if needed)
dm_node() {
	[ -b "/dev/mapper/$1" ] || dmsetup mknodes "$1" > /dev/null 2>&1
	[ -b "/dev/mapper/$1" ] || fail "no device node for dm device $1"
	echo "/dev/mapper/$1"
}

# dm_exists NAME: true if dm device NAME exists
dm_exists() {
	dmsetup info "$1" > /dev/null 2>&1
}

# dm_count: number of dm devices
dm_count() {
	dmsetup ls 2>/dev/null | grep -vc '^No devices found'
}

# zero_dev DEV MIB [SEEK_MIB]: zero MIB MiB of DEV (from SEEK_MIB MiB on)
zero_dev() {
	dd if=/dev/zero of="$1" bs=1M count="$2" seek="${3:-0}" oflag=direct \
		conv=notrunc 2> /dev/null || fail "cannot zero $1"
}

# sum_dev DEV MIB [SKIP_MIB]: md5 of MIB MiB of DEV (from SKIP_MIB MiB on)
sum_dev() {
	dd if="$1" bs=1M count="$2" skip="${3:-0}" iflag=direct 2> /dev/null |
		md5sum | cut -d' ' -f1
}

# fill_pattern DEV MIB [TAG]: write a recognisable text pattern
# ("dm-wow TAG ", repeated) over the first MIB MiB of DEV
fill_pattern() {
	fio --name=pattern --filename="$1" --rw=write --bs=1M --size="$2M" \
		--ioengine=psync --direct=1 \
		--buffer_pattern="\"dm-wow ${3:-pattern} \"" \
		--output=/tmp/wow-pattern.out > /dev/null 2>&1 ||
		fail "cannot write the pattern to $1: $(cat /tmp/wow-pattern.out)"
}

# wow_reset_disks [DEV...]: remove every dm device, zero the first 4 MiB of
# the devices (default: origin and cache) so that a cache looks unused
wow_reset_disks() {
	# a scenario that failed in wow_keep_busy left the hook set
	[ ! -e /sys/module/dm_wow/parameters/test_never_idle ] ||
		echo 0 > /sys/module/dm_wow/parameters/test_never_idle
	if [ "$(dm_count)" -gt 0 ]; then
		dmsetup remove_all > /dev/null 2>&1
		[ "$(dm_count)" -eq 0 ] ||
			fail "cannot remove old dm devices: $(dmsetup ls)"
	fi
	[ $# -gt 0 ] || set -- "$ORIGIN" "$CACHE"
	for _d in "$@"; do
		zero_dev "$_d" 4
	done
}

# blktrace_anchor: hold the block layer's tracepoints on for the rest of
# the boot, with a blktrace of an idle loop device that is never stopped.
# Turning them on or off (the first blktrace starting, the last stopping)
# patches kernel text through int3 breakpoints, and under TCG a vCPU that
# is in blk_mq_submit_bio just then can go on trapping on a breakpoint
# already gone: both vCPUs stuck for minutes at blk_mq_submit_bio+0x1bf,
# in dm-wow's commit and destage workers, while checkpoint-stall started
# a blktrace (Documentation/reliability.md).  With the tracepoints held
# on, a scenario's own blktraces start and stop without patching.  Call it
# while no I/O runs (before the devices are made).
blktrace_anchor() {
	[ -s /tmp/bt-anchor/pid ] &&
		kill -0 "$(cat /tmp/bt-anchor/pid)" 2> /dev/null && return 0
	mkdir -p /tmp/bt-anchor
	modprobe loop 2> /dev/null
	dd if=/dev/zero of=/tmp/bt-anchor/disk bs=64k count=1 2> /dev/null
	_bl=$(losetup -f) && losetup "$_bl" /tmp/bt-anchor/disk ||
		fail "blktrace_anchor: no loop device"
	blktrace -d "$_bl" -b 4 -n 2 -D /tmp/bt-anchor -o anchor \
		> /tmp/bt-anchor/log 2>&1 &
	echo $! > /tmp/bt-anchor/pid
	sleep 1
	kill -0 "$(cat /tmp/bt-anchor/pid)" 2> /dev/null ||
		fail "blktrace_anchor: blktrace did not start: $(cat /tmp/bt-anchor/log)"
}

# blktrace_anchor_stop: let the tracepoints go (they turn off unless
# another blktrace runs); again only while no I/O runs.
blktrace_anchor_stop() {
	[ -s /tmp/bt-anchor/pid ] || return 0
	kill -INT "$(cat /tmp/bt-anchor/pid)" 2> /dev/null
	while kill -0 "$(cat /tmp/bt-anchor/pid)" 2> /dev/null; do
		sleep 0.1
	done
	rm -f /tmp/bt-anchor/pid
	losetup -d "$(losetup -a | sed -n 's|^\(/dev/loop[0-9]*\):.*bt-anchor.*|\1|p' | head -n 1)" \
		2> /dev/null
}

# ---- wow devices ----

# wow_table ORIGIN CACHE [OPT...]: the table line for the whole origin
wow_table() {
	_o=$1 _c=$2
	shift 2
	_len=$(size_sectors "$_o") || fail "cannot size $_o"
	echo "0 $_len wow $_o $_c $# $*" | sed 's/ $//'
}

# wow_create NAME ORIGIN CACHE [OPT...]: create a wow device over the whole
# origin with these optional args (their count is added); fail on error
wow_create() {
	_n=$1
	shift
	_t=$(wow_table "$@")
	echo "+ dmsetup create $_n --table '$_t'"
	dmesg_clear
	if ! dmsetup create "$_n" --table "$_t"; then
		dmesg_since | tail -n 20
		fail "cannot create wow device $_n: $_t"
	fi
	dm_node "$_n" > /dev/null
}

# wow_remove NAME: remove dm device NAME; fail on error
wow_remove() {
	echo "+ dmsetup remove $1"
	dmsetup remove "$1" || fail "cannot remove $1"
	! dm_exists "$1" || fail "$1 still exists after remove"
}

# wow_status NAME: the target's INFO status (after "<start> <len> wow ")
wow_status() {
	dmsetup status "$1" | sed 's/^[0-9]* [0-9]* wow //'
}

# wow_table_of NAME: the target's TABLE status (after "<start> <len> wow ")
wow_table_of() {
	dmsetup table "$1" | sed 's/^[0-9]* [0-9]* wow //'
}

# wow_field NAME N: field N (1 = state) of the INFO status
wow_field() {
	wow_status "$1" | awk -v n="$2" '{ print $n }'
}

# big_blocks: does this kernel take a block_size above the page size?
# Since 6.11 the block layer caps a logical block at the page size and
# dm-wow refuses larger blocks with a reason; before, it takes 512..65536.
big_blocks() {
	_v=$(uname -r)
	_maj=${_v%%.*} _min=${_v#*.}
	_min=${_min%%[!0-9]*}
	[ "$_maj" -lt 6 ] || { [ "$_maj" -eq 6 ] && [ "$_min" -lt 11 ]; }
}

# expect_create_fails DESC TABLE [MSG_REGEX]
# Try `dmsetup create` with TABLE: it must be refused, leave no device,
# and log a kernel message matching MSG_REGEX (default "wow:", as in
# "device-mapper: table: 254:N: wow: <error>").  Prints that message.
# Check `dm_count` yourself afterwards if other devices could appear.
BAD_TABLES=0
expect_create_fails() {
	_desc=$1 _t=$2 _re=${3:-wow:}
	dmesg_clear
	if dmsetup create wow_bad --table "$_t" > /tmp/wow-bad.out 2>&1; then
		dmsetup remove wow_bad > /dev/null 2>&1
		fail "$_desc: table accepted: $_t"
	fi
	if dm_exists wow_bad; then
		dmsetup remove wow_bad > /dev/null 2>&1
		fail "$_desc: refused, but a device was left behind: $_t"
	fi
	_k=$(dmesg_since)
	# prefer dm's report of ti->error ("table: 254:N: wow: <error>")
	_msg=$(echo "$_k" | grep -E -- "$_re" | grep 'table: ' | head -n 1)
	[ -n "$_msg" ] || _msg=$(echo "$_k" | grep -E -- "$_re" | head -n 1)
	if [ -z "$_msg" ]; then
		echo "dmsetup said: $(cat /tmp/wow-bad.out)"
		echo "kernel said: $_k"
		fail "$_desc: refused without a kernel message matching '$_re': $_t"
	fi
	BAD_TABLES=$((BAD_TABLES + 1))
	printf 'ok %2d  %-36s %s\n' "$BAD_TABLES" "$_desc" \
		"${_msg#device-mapper: table: *: }"
}

# ---- fio ----

# fio_run DEV [FIO OPTION...]: fio on DEV, direct libaio; fail on error
fio_run() {
	_dev=$1
	shift
	echo "+ fio $* ($_dev)"
	fio --name=wow --filename="$_dev" --ioengine=libaio --direct=1 \
		--group_reporting --output=/tmp/wow-fio.out "$@"
	_rc=$?
	grep -E 'IOPS=|err=|verify|bad|mismatch|error' /tmp/wow-fio.out |
		sed 's/^/    /'
	if [ $_rc -ne 0 ]; then
		grep -v -E '^ +(\||[sc]?lat|cpu|IO depths|submit|complete)' \
			/tmp/wow-fio.out
		fail "fio failed (exit $_rc): $*"
	fi
}

# fio_verify DEV [FIO OPTION...]: write with crc32c verify data, then read
# it all back and check it (fio's write-then-verify)
fio_verify() {
	_dev=$1
	shift
	fio_run "$_dev" --verify=crc32c --verify_fatal=1 --do_verify=1 "$@"
}

# fio_verify_only DEV [FIO OPTION...]: read back and check what a former
# fio_verify with the same options wrote
fio_verify_only() {
	_dev=$1
	shift
	fio_run "$_dev" --verify=crc32c --verify_fatal=1 --verify_only=1 "$@"
}

# fio_check_state DEV [FIO OPTION...]: read back and check what a writer
# with these options and --verify_state_save=1 wrote (its state file in
# the current directory).  --verify_state_save=0: a verify-only run
# otherwise rewrites the state file with its own progress, and a second
# check would then test blocks the writer never wrote (issue 34's A, B).
# The check reads at --iodepth=1: fio skips the writes that were in
# flight when the state was saved (a power cut) by comparing a read's
# number with the reads *completed* so far, so with reads in flight it
# reaches the last writes before it knows to skip them, and reads writes
# that never completed as if they had (crash-checkpoint-cut: the last 15
# of 6,639 writes, held by a checkpoint at iodepth 16, "bad magic header
# 0"; found by replaying fio's offsets with --write_iolog).  And the
# check runs on a copy of the writer's state (in a directory of its own,
# the current one's state files copied in), so the writer's is never
# touched: --verify_state_save=0 or not, a verify-only run leaves a state
# that makes the next one check less (crash-checkpoint-cut: 63.1 MiB read
# by the first check, 1.6 MiB by each later one).
fio_check_state() {
	_dev=$1 _here=$(pwd)
	shift
	rm -rf /tmp/wow-vstate && mkdir /tmp/wow-vstate ||
		fail "cannot make /tmp/wow-vstate"
	cp ./*verify.state /tmp/wow-vstate/ 2> /dev/null ||
		fail "no fio write state in $_here"
	cd /tmp/wow-vstate || fail "cannot use /tmp/wow-vstate"
	fio_run "$_dev" --verify=crc32c --verify_only=1 --verify_state_save=0 \
		--verify_state_load=1 --verify_fatal=1 "$@" --iodepth=1
	cd "$_here" || fail "cannot go back to $_here"
}

# wow_clean_remove NAME [SECONDS]: cleaner on, wait (default 600 s) until
# nothing is dirty, remove: the origin alone then holds every write
wow_clean_remove() {
	wow_message "$1" cleaner on
	wow_wait_clean "$1" "${2:-600}"
	echo "status after cleaning: $(wow_status "$1")"
	wow_remove "$1"
}

# ---- a cache device whose segments fail writes (needs_check) ----

# seg_fault_table DEV up|down: a table for a device "cd" over DEV: its
# first erase block (1 MiB: superblock, health block) linear, the rest
# through dm-flakey, failing writes when down; so log writes fail while
# the health block can still be written
seg_fault_table() {
	_len=$(size_sectors "$1")
	echo "0 2048 linear $1 0"
	if [ "$2" = up ]; then
		echo "2048 $((_len - 2048)) flakey $1 2048 1 0"
	else
		echo "2048 $((_len - 2048)) flakey $1 2048 0 1 1 error_writes"
	fi
}

# seg_fault_set DEV up|down: switch "cd" (made from seg_fault_table DEV)
seg_fault_set() {
	run dmsetup suspend cd
	seg_fault_table "$1" "$2" | dmsetup reload cd || fail "cannot reload cd"
	run dmsetup resume cd
}

# ---- multi-boot ----

# wow_power_cut: ask the runner for another boot on the same disks and cut
# the power now (nothing is flushed).  Needs "boots=N" in the header.
wow_power_cut() {
	touch "$RESULTS/$WOW_NAME.reboot" || fail "cannot write reboot marker"
	echo "--- power cut (boot $WOW_BOOT)"
	echo b > /proc/sysrq-trigger
	sleep 30
	fail "power cut did not happen"
}

# wow_cut_late: after a job whose trigger was to cut the power ended
# without cutting it (the job finished first): cut it now, and say so.
# The boot that follows still loads after a power cut (all the job's
# writes acknowledged), not after the clean shutdown a reboot would be.
wow_cut_late() {
	echo "--- the job ended before its trigger: power cut now (boot $WOW_BOOT)"
	echo b > /proc/sysrq-trigger
	sleep 30
	fail "the power cut did not happen"
}

# ---- destage policies (issue 4) ----

# wait_clean NAME [SECONDS]: wait until NAME has no dirty blocks
wait_clean() {
	_i=0
	while [ "$(wow_field "$1" 6)" -ne 0 ]; do
		_i=$((_i + 1))
		[ "$_i" -le "${2:-300}" ] ||
			fail "$1 still dirty after ${2:-300} s: $(wow_status "$1")"
		sleep 1
	done
}

# wow_key NAME KEY: the value of KEY=... in NAME's INFO status
wow_key() {
	wow_status "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# policy_keeps_data POLICY: data written through a wow device with
# POLICY, destaged at once (watermarks 0/1) and in cleaner mode, reads
# back through the device and then from the origin alone.
policy_keeps_data() {
	wow_reset_disks
	wow_create pk "$ORIGIN" "$CACHE" policy "$1" low_watermark 0 \
		high_watermark 1 max_destage_size 65536
	_d=$(dm_node pk)
	_job="--offset=0 --size=192M --bsrange=4k-256k --blockalign=4k"
	fio_verify "$_d" --rw=randwrite --iodepth=16 --randseed=21 $_job
	run dmsetup message pk 0 cleaner on
	wait_clean pk
	_st=$(wow_status pk)
	echo "status: $_st"
	[ "$(wow_key pk destage_writes)" -gt 0 ] || fail "nothing destaged"
	echo "$_st" | grep -q "^cleaning $1 " || fail "not '$1' in cleaner mode"
	wow_remove pk
	info "read back from the origin alone"
	fio_verify_only "$ORIGIN" --rw=randwrite --iodepth=16 --randseed=21 $_job
}

# origin_descents TRACE: "writes descents" of the data writes dispatched
# (D events) in a blkparse text file, in order
origin_descents() {
	awk '$6 == "D" && $7 ~ /W/ && $9 == "+" && $10 > 0 {
		n++; if (n > 1 && $8 < prev) d++; prev = $8
	} END { print n + 0, d + 0 }' "$1"
}

# ---- cache scenarios (issue 3) ----
#
# Guest tools from tests/vm/guest: /usr/bin/wowcrash (built static by
# wowvm.py) and /wow/guest/*.awk.

# wow_stat NAME KEY: one status value: a fixed field by name (state policy
# block_size cache_blocks free_blocks dirty_blocks) or a key=value key
wow_stat() {
	wow_status "$1" | awk -v k="$2" '
		BEGIN { split("state policy block_size cache_blocks free_blocks dirty_blocks", f, " ")
			for (i in f) pos[f[i]] = i }
		{ if (k in pos) { print $pos[k]; exit }
		  for (i = 7; i <= NF; i++) if (index($i, k "=") == 1) {
			print substr($i, length(k) + 2); exit } }'
}

# wow_message NAME WORD...: send a message to the target; fail if refused
wow_message() {
	_n=$1
	shift
	echo "+ dmsetup message $_n 0 $*"
	dmsetup message "$_n" 0 "$@" || fail "message '$*' to $_n failed"
}

# wow_wait_clean NAME [SECONDS [POLL]]: wait until dirty_blocks is 0
# (default 60 s), looking every POLL seconds (default 0.5)
wow_wait_clean() {
	_t=$(( $(date +%s) + ${2:-60} ))
	while [ "$(wow_stat "$1" dirty_blocks)" != 0 ]; do
		[ "$(date +%s)" -lt "$_t" ] ||
			fail "$1 still has $(wow_stat "$1" dirty_blocks) dirty blocks after ${2:-60} s: $(wow_status "$1")"
		sleep "${3:-0.5}"
	done
}

# wow_no_errors NAME: fail if the target left state ok/cleaning or counted
# an origin or cache error
wow_no_errors() {
	_st=$(wow_status "$1")
	case "$_st" in
	ok\ * | cleaning\ *) ;;
	*) fail "$1 is in state ${_st%% *}: $_st" ;;
	esac
	[ "$(wow_stat "$1" origin_errors)" = 0 ] &&
		[ "$(wow_stat "$1" cache_errors)" = 0 ] ||
		fail "$1 counted I/O errors: $_st"
}

# read_u DEV BYTE_OFFSET SIZE: unsigned little-endian integer (SIZE 1, 2, 4
# or 8 bytes) read from DEV with O_DIRECT (not through the page cache)
read_u() {
	_blk=$(($2 / 4096))
	dd if="$1" of=/tmp/wow-ru.blk bs=4096 skip=$_blk count=1 iflag=direct \
		2> /dev/null || fail "cannot read $1 at block $_blk"
	od -An -tu"$3" -j $(($2 % 4096)) -N "$3" /tmp/wow-ru.blk | tr -d ' '
}

# flip_byte DEV BYTE_OFFSET: invert one byte of DEV (O_DIRECT read-modify-
# write of its 4 KiB block); prints "old new" byte values
flip_byte() {
	_blk=$(($2 / 4096)) _off=$(($2 % 4096))
	dd if="$1" of=/tmp/wow-fb.blk bs=4096 skip=$_blk count=1 iflag=direct \
		2> /dev/null || fail "cannot read $1 at block $_blk"
	_old=$(od -An -tu1 -j $_off -N 1 /tmp/wow-fb.blk | tr -d ' ')
	_new=$((_old ^ 255))
	# shellcheck disable=SC2059
	printf "\\$(printf %o $_new)" | dd of=/tmp/wow-fb.blk bs=1 seek=$_off \
		conv=notrunc 2> /dev/null
	dd if=/tmp/wow-fb.blk of="$1" bs=4096 seek=$_blk count=1 oflag=direct \
		conv=notrunc 2> /dev/null || fail "cannot write $1 at block $_blk"
	echo "$_old $_new"
}

# ckpt_block CACHE: the block where the (first) checkpoint area starts
# (format version 2: block 2; versions 3 and 4: erase block 1; version 1:
# none, prints 0)
ckpt_block() {
	case $(read_u "$1" 4 4) in
	1) echo 0 ;;
	2) echo 2 ;;
	*) echo $(( $(read_u "$1" 24 4) / $(read_u "$1" 20 4) )) ;;
	esac
}

# ckpt_blocks CACHE: the block where each checkpoint area starts, one a
# line (format version 4: two areas, the second right after the first,
# the segments right after it; versions 2 and 3: one; version 1: none)
ckpt_blocks() {
	_cb=$(ckpt_block "$1")
	[ "$_cb" != 0 ] || return 0
	echo "$_cb"
	[ "$(read_u "$1" 4 4)" -ge 4 ] || return 0
	echo $(( _cb + ($(read_u "$1" 48 8) * 512 / $(read_u "$1" 20 4) - _cb) / 2 ))
}

# ckpt_newest CACHE: the first block of the area holding the newest valid
# checkpoint (the highest generation whose header says valid and whose
# closing copy, version 3 and later, is the same block); nothing if none
ckpt_newest() {
	_bs=$(read_u "$1" 20 4) _best="" _bg=-1
	for _b in $(ckpt_blocks "$1"); do
		_o=$((_b * _bs))
		[ $(( $(read_u "$1" $((_o + 32)) 4) & 1 )) = 1 ] || continue
		_g=$(read_u "$1" $((_o + 40)) 8)
		if [ "$(read_u "$1" 4 4)" -ge 3 ]; then
			_c=$((_b + 1 + $(read_u "$1" $((_o + 80)) 8) + $(read_u "$1" $((_o + 88)) 8)))
			[ "$(dd if="$1" bs="$_bs" skip="$_b" count=1 iflag=direct 2> /dev/null | md5sum)" = \
			  "$(dd if="$1" bs="$_bs" skip="$_c" count=1 iflag=direct 2> /dev/null | md5sum)" ] ||
				continue
		fi
		[ "$_g" -gt "$_bg" ] || continue
		_best=$_b _bg=$_g
	done
	echo "$_best"
}

# drop_checkpoint CACHE: zero every checkpoint header (format versions 2
# to 4), as a crash after later records would leave them retired, so the
# next load scans the log: for tests of the scan on a cache that was
# removed cleanly
drop_checkpoint() {
	[ "$(read_u "$1" 4 4)" -ge 2 ] || return 0
	for _b in $(ckpt_blocks "$1"); do
		dd if=/dev/zero of="$1" bs="$(read_u "$1" 20 4)" \
			seek="$_b" count=1 \
			oflag=direct conv=notrunc 2> /dev/null ||
			fail "cannot zero the checkpoint header of $1"
	done
}

# log_records CACHE [SEGMENT] [BLOCK_SIZE] [ERASE_BLOCK_SIZE]: walk the
# records of one log segment (default 0; 4096, 1 MiB) from its start, one
# line per record while the magic holds:
#     <byte offset on CACHE> <seq> <seg_seq> <durable_seq> <nr_data> <nr_tombs>
# (no checksum is checked: this is for finding records to damage)
log_records() {
	_dev=$1 _bs=${3:-4096} _eb=${4:-1048576}
	_first=$(($(read_u "$_dev" 48 8) * 512))	# first_segment_sector
	_pos=$((_first + ${2:-0} * _eb)) _end=$((_first + (${2:-0} + 1) * _eb))
	while [ $((_pos + _bs)) -le $_end ]; do
		dd if="$_dev" of=/tmp/wow-lr.blk bs="$_bs" skip=$((_pos / _bs)) \
			count=1 iflag=direct 2> /dev/null || break
		# magic "WOWR" at byte 4
		[ "$(od -An -tx4 -j 4 -N 4 /tmp/wow-lr.blk | tr -d ' ')" = \
			52574f57 ] || break
		set -- $(od -An -tu8 -j 8 -N 24 /tmp/wow-lr.blk) \
			$(od -An -tu2 -j 52 -N 4 /tmp/wow-lr.blk)
		echo "$_pos $1 $2 $3 $4 $5"
		_pos=$((_pos + (1 + $4) * _bs))
	done
}

# wow_watch NAME [SECONDS] [ROUNDS]: log NAME's status every SECONDS
# (default 10) in the background until the scenario ends (or wow_unwatch),
# so a slow scenario shows where it stood.  When the status has not changed
# for ROUNDS rounds (default 6) while fio or wowcrash runs, the device has
# stalled: dump the blocked tasks to the console (sysrq w), print the
# FAILED line, and end the scenario (the stuck I/O stays stuck).
wow_watch() {
	(
		_prev="" _same=0
		while sleep "${2:-10}"; do
			dm_exists "$1" || continue
			_s=$(wow_status "$1" | sed 's/ age_oldest_s=[0-9]*//')
			echo "watch [$(cut -d' ' -f1 /proc/uptime)]: $_s"
			if [ "$_s" = "$_prev" ] && pidof fio wowcrash > /dev/null
			then
				_same=$((_same + 1))
			else
				_same=0
			fi
			_prev=$_s
			[ $_same -ge "${3:-6}" ] || continue
			echo w > /proc/sysrq-trigger
			echo "FAILED: $1 stalled: no progress for $((_same * ${2:-10})) s with I/O pending (blocked tasks on the console): $_s"
			kill -TERM $$
			exit 1
		done
	) &
	WOW_WATCH_PID=$!
	trap wow_unwatch EXIT
}

# wow_unwatch: stop wow_watch
wow_unwatch() {
	[ -z "$WOW_WATCH_PID" ] || kill "$WOW_WATCH_PID" 2> /dev/null
	WOW_WATCH_PID=
}

# wow_test_hook NAME VALUE: set the module parameter NAME, a hook of the
# project's test builds (WOW_TEST_HOOKS); false when the module has none
wow_test_hook() {
	[ -e "/sys/module/dm_wow/parameters/$1" ] || return 1
	echo "$2" > "/sys/module/dm_wow/parameters/$1" ||
		fail "cannot set the test hook $1"
	echo "test hook: $1=$2"
}

# wow_keep_busy DEV [BLOCK]: the device never looks idle (a dm-wow device
# idle for a second destages everything, and a slow VM takes that long
# between two commands): the test builds' hook test_never_idle, and
# besides (for a module without it) a read of 4 KiB block BLOCK (default
# 0) of DEV every 0.2 s in the background (pid in BUSY), which a loaded
# host can delay past that second
wow_keep_busy() {
	wow_test_hook test_never_idle 1 > /dev/null || :
	( while :; do
		dd if="$1" of=/dev/null bs=4k count=1 skip="${2:-0}" \
			iflag=direct 2> /dev/null
		sleep 0.2
	done ) &
	BUSY=$!
}

# wow_stop_busy: stop wow_keep_busy's reader
wow_stop_busy() {
	if [ -n "$BUSY" ]; then
		kill "$BUSY" 2> /dev/null || :
		wait "$BUSY" 2> /dev/null || :
	fi
	BUSY=
	wow_test_hook test_never_idle 0 > /dev/null || :
}
