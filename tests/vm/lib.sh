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

info() {
	echo "--- $*"
}

# run CMD...: echo and run a command; fail if it fails
run() {
	echo "+ $*"
	"$@" || fail "command failed (exit $?): $*"
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
