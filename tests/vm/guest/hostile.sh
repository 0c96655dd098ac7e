# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the hostile-input, fault and geometry campaigns (busybox ash),
# sourced after lib.sh:   . /wow/guest/hostile.sh
#
# WOW_PROFILE: quick (default: CI, a few minutes of TCG time per scenario)
# or full (the large counts).

PROFILE=${WOW_PROFILE:-quick}
case "$PROFILE" in
quick | full) ;;
*) fail "WOW_PROFILE must be quick or full, not '$PROFILE'" ;;
esac
echo "profile: $PROFILE"

# bounded SECS OUT CMD...: run CMD in the background with stdout and stderr
# to OUT and wait at most SECS seconds.  Returns CMD's exit status, or 124
# when it did not finish in time (then it is left running: a process stuck
# in the kernel cannot be killed; its pid is in BOUNDED_PID).
bounded() {
	_secs=$1 _out=$2
	shift 2
	"$@" > "$_out" 2>&1 &
	BOUNDED_PID=$!
	_t=0
	while kill -0 $BOUNDED_PID 2> /dev/null; do
		if [ $_t -ge $((_secs * 5)) ]; then
			kill -TERM $BOUNDED_PID 2> /dev/null
			return 124
		fi
		sleep 0.2
		_t=$((_t + 1))
	done
	wait $BOUNDED_PID
}

# uptime_ds: time since boot in tenths of a second (busybox date has no %N)
uptime_ds() {
	awk '{ printf "%d\n", $1 * 10 }' /proc/uptime
}

# rnd N: set R to a pseudo-random number 0..N-1 (an LCG from RND_STATE,
# so runs repeat; call it directly, not in $(...), or the state is lost)
RND_STATE=${RND_STATE:-12345}
rnd() {
	RND_STATE=$(( (RND_STATE * 1103515245 + 12345) % 2147483648 ))
	R=$(( (RND_STATE / 256) % $1 ))
}

# sum_head DEV [KIB]: md5 of the first KIB KiB (default 1024) of DEV
sum_head() {
	dd if="$1" bs=64k count=$(( ${2:-1024} / 64 )) iflag=direct 2> /dev/null |
		md5sum | cut -d' ' -f1
}

# kmsg_wow: the first dm-wow / dm table kernel message since dmesg_clear
kmsg_wow() {
	dmesg_since | grep -E 'wow|device-mapper' | head -n 1
}

# ---- dm-flakey ----
# flakey NAME DEV up|errors|error_writes|drop_writes: create NAME over the
# whole DEV, or switch it by a table reload: up = pass everything;
# errors = fail every read and write (dm-flakey's down interval with no
# feature); error_writes / drop_writes = that feature (reads pass).
FAULTS=0
flakey() {
	_len=$(size_sectors "$2")
	case "$3" in
	up) _t="0 $_len flakey $2 0 1 0" ;;
	errors) _t="0 $_len flakey $2 0 0 1" ;;
	*) _t="0 $_len flakey $2 0 0 1 1 $3" ;;
	esac
	if dm_exists "$1"; then
		dmsetup suspend "$1" && dmsetup reload "$1" --table "$_t" &&
			dmsetup resume "$1" || fail "cannot switch $1 to $3"
		[ "$3" = up ] || FAULTS=$((FAULTS + 1))
	else
		dmsetup create "$1" --table "$_t" || fail "cannot create $1"
	fi
	echo "[$(cut -d' ' -f1 /proc/uptime)] $1: $3"
}
