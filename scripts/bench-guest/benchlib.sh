# SPDX-License-Identifier: GPL-2.0
#
# Guest half of the dm-wow evaluation bench (scripts/bench.py).  busybox ash.
# The host generates one small scenario per run that sources /wow/lib.sh and
# this file (/wow/bench/benchlib.sh) and calls bench_destage (measurement 1),
# bench_closed (measurements 2 and 3: the closed loop, saturated or at a
# fixed rate, which is in the job file), bench_cpu (4: RAM disks) or
# bench_flush (5: plain and FUA writes).  fio job files are in
# /wow/bench/jobs/.
#
# Disks: /dev/vda = 8 GiB file-backed origin (measurement 1, traced),
#        /dev/vdb = cache disk (sliced with dm-linear to the cache size),
#        /dev/vdc = the live emulated HDD (scripts/hdd-nbdkit.py, NBD),
#        /dev/vdd.. = in a bench run with RAID runs, the arrays' members:
#                   live emulated disks (10K rpm), one server each;
#                   raid_setup builds md RAID-5 (4+1) or RAID-10 (2+2)
#                   over them and points B_HDD at it.
#
# Systems (names as in scripts/wowbench/systems.py):
#   wow cscan lrw  dm-wow with that policy
#   writecache     dm-writecache, ssd mode, 4 KiB blocks
#   dmcache        dm-cache, writeback, smq, 32 KiB blocks (its minimum);
#                  metadata on a 16 MiB dm-linear slice of the cache disk
#   bcache         bcache, writeback, 4 KiB blocks, buckets of 1 MiB or
#                  less: the kernel wants at least 1024 of them,
#                  sequential_cutoff 0 and congestion bypass off (so that it
#                  caches every write, as the others do)
#   raw            the origin itself
#   ssd            the cache disk alone: a dm-linear slice of it of the
#                  cache size (fio runs there; the HDD is left idle)
#   linear         dm-linear over the origin (bench_cpu's reference)
#
# Each run writes into $RESULTS/$WOW_NAME/: meta.txt (key=value lines),
# fio.json, status-*.txt, and for bench_destage the binary blktrace of both
# disks (bt/vda.blktrace.N, bt/vdb.blktrace.N: the host runs blkparse); for
# bench_closed the fio IOPS logs (iops_*.log), its completion latency
# histograms (lat_clat_hist.*.log, one line a second), dirty.txt and, for
# dm-wow, status-samples.txt (closed_watch).

: "${B_TRACE_ORIGIN:=/dev/vda}"
: "${B_CACHE:=/dev/vdb}"
: "${B_HDD:=/dev/vdc}"
: "${B_WATCH:=/tmp/closed-watch.txt}"	# closed_watch's samples, for awk
B_JOBS=/wow/bench/jobs
B_META_MB=16			# dm-cache metadata slice

OUT=$RESULTS/$WOW_NAME
mkdir -p "$OUT" || fail "cannot make $OUT"

meta() {
	echo "$1=$2" >> "$OUT/meta.txt"
}

now() {
	cut -d' ' -f1 /proc/uptime
}

# phase NAME: note the time a phase starts (in the run's output)
phase() {
	echo "@ $(now) $1"
}

# ---- devices ----

# hdd_setup DEV: what a rotating disk gets: rotational, mq-deadline
hdd_setup() {
	_b=$(basename "$1")
	echo 1 > "/sys/block/$_b/queue/rotational" 2> /dev/null
	echo mq-deadline > "/sys/block/$_b/queue/scheduler" 2> /dev/null
	meta "scheduler_$_b" "$(cat "/sys/block/$_b/queue/scheduler")"
}

bcache_stop_all() {
	[ -d /sys/fs/bcache ] || return 0
	for _s in /sys/block/bcache*/bcache/stop; do
		[ -e "$_s" ] && echo 1 > "$_s"
	done
	for _s in /sys/fs/bcache/*-*/stop; do
		[ -e "$_s" ] && echo 1 > "$_s"
	done
	_i=0
	while ls -d /sys/block/bcache* /sys/fs/bcache/*-* > /dev/null 2>&1; do
		_i=$((_i + 1))
		[ $_i -lt 100 ] || fail "bcache devices do not go away"
		sleep 0.2
	done
}

# bench_reset: no dm or bcache devices; zero the heads of the disks so no
# cache finds old metadata (bcache's backing superblock is on the origin)
bench_reset() {
	bcache_stop_all
	if [ "$(dm_count)" -gt 0 ]; then
		dmsetup remove_all > /dev/null 2>&1
		[ "$(dm_count)" -eq 0 ] || fail "cannot remove dm devices: $(dmsetup ls)"
	fi
	zero_dev "$B_CACHE" 1
	zero_dev "$B_CACHE" 1 $B_META_MB
	for _d in "$B_TRACE_ORIGIN" "$B_HDD"; do
		[ -b "$_d" ] && zero_dev "$_d" 1
	done
	return 0
}

# linear NAME DEV START_MB SIZE_MB: a dm-linear slice; prints its node
linear() {
	dmsetup create "$1" --table "0 $(($4 * 2048)) linear $2 $(($3 * 2048))" ||
		fail "cannot create linear $1"
	dm_node "$1"
}

# bench_create TABLE: create the device "bench" from TABLE; sets BDEV
bench_create() {
	echo "+ dmsetup create bench --table '$1'"
	dmsetup create bench --table "$1" ||
		fail "cannot create: $1: $(dmesg | tail -n 5)"
	BDEV=$(dm_node bench)
}

# sys_create SYSTEM ORIGIN CACHE_MB hold|live: build SYSTEM over ORIGIN with
# a CACHE_MB MiB cache; sets BDEV (the device to run fio on).  "hold" keeps
# destage back while the dirty set is loaded (measurement 1).
sys_create() {
	_sys=$1 _org=$2 _mb=$3 _mode=$4
	_len=$(size_sectors "$_org")
	SYS=$_sys
	case $_sys in
	raw)
		BDEV=$_org
		;;
	linear)
		bench_create "0 $_len linear $_org 0"
		;;
	ssd)
		BDEV=$(linear bcache_dev "$B_CACHE" 0 "$_mb")
		;;
	wow | cscan | lrw)
		_c=$(linear bcache_dev "$B_CACHE" 0 "$_mb")
		# B_WOW_TABLE_OPTS: the profile's options for every table
		# (the RAID runs' erase_block_size)
		_opt="policy $_sys ${B_WOW_TABLE_OPTS:-}"
		[ "$_mode" = hold ] &&
			_opt="$_opt low_watermark 99 high_watermark 100"
		# scripts/bench.py --wow-opts: extra table options (closed loop)
		[ "$_mode" = live ] && _opt="$_opt ${B_WOW_OPTS:-}"
		set -- $_opt
		_t="0 $_len wow $_org $_c $# $_opt"
		bench_create "$_t"
		;;
	writecache)
		_c=$(linear bcache_dev "$B_CACHE" 0 "$_mb")
		_opt=""
		[ "$_mode" = hold ] && _opt="high_watermark 100 low_watermark 99"
		set -- $_opt
		_t="0 $_len writecache s $_org $_c 4096 $# $_opt"
		bench_create "$_t"
		;;
	dmcache)
		_m=$(linear bcache_meta "$B_CACHE" 0 $B_META_MB)
		_c=$(linear bcache_dev "$B_CACHE" $B_META_MB "$_mb")
		DMCACHE_TABLE="0 $_len cache $_m $_c $_org 64 1 writeback"
		_t="$DMCACHE_TABLE smq 0"
		bench_create "$_t"
		;;
	bcache)
		modprobe bcache || fail "modprobe bcache"
		_c=$(linear bcache_dev "$B_CACHE" 0 "$_mb")
		# 1 MiB buckets, smaller when the cache would have fewer than
		# 1024 (the kernel's minimum)
		_bk=1024
		while [ $((_mb * 1024 / _bk)) -lt 1024 ] && [ $_bk -gt 8 ]; do
			_bk=$((_bk / 2))
		done
		meta bucket_bytes $((_bk * 1024))
		run make-bcache --wipe-bcache --block 4k --bucket ${_bk}k \
			--writeback -C "$_c" -B "$_org" > /tmp/make-bcache.out
		for _d in "$_c" "$_org"; do
			echo "$(readlink -f "$_d")" > /sys/fs/bcache/register 2> /dev/null
		done
		_i=0
		BCACHE_SYS=
		while [ -z "$BCACHE_SYS" ]; do
			for _b in /sys/block/bcache*; do
				[ -e "$_b/bcache/state" ] || continue
				[ "$(cat "$_b/bcache/state")" != "no cache" ] &&
					BCACHE_SYS=$_b
			done
			_i=$((_i + 1))
			[ $_i -lt 100 ] || fail "bcache did not attach: $(ls /sys/block):" \
				"$(cat /sys/block/bcache*/bcache/state):" \
				"$(cat /tmp/make-bcache.out): $(dmesg | grep -i bcache | tail -n 8)"
			[ -n "$BCACHE_SYS" ] || sleep 0.1
		done
		BDEV=/dev/$(basename "$BCACHE_SYS")
		_set=$(ls -d /sys/fs/bcache/*-* | head -n 1)
		echo 0 > "$BCACHE_SYS/bcache/sequential_cutoff"
		echo 0 > "$_set/congested_read_threshold_us"
		echo 0 > "$_set/congested_write_threshold_us"
		[ "$_mode" = hold ] && echo 0 > "$BCACHE_SYS/bcache/writeback_running"
		;;
	*)
		fail "unknown system $_sys"
		;;
	esac
	[ -b "$BDEV" ] || fail "no block device $BDEV for $_sys"
	meta device "$BDEV"
	CACHE_NODES=
	for _n in bcache_dev bcache_meta; do
		dm_exists "$_n" && CACHE_NODES="$CACHE_NODES $(dm_node "$_n")"
	done
	case $_sys in
	raw | ssd | linear) ;;
	*) sys_status > "$OUT/status-created.txt" ;;
	esac
}

# sectors_written DEV: sectors written to block device DEV so far
sectors_written() {
	read _x _x _x _x _x _x _sw _x < "$(dev_stat "$1")"
	echo "$_sw"
}

# cache_sectors: sectors written so far to the cache's dm-linear slices
# ($CACHE_NODES, from sys_create: the cache slice and dm-cache's metadata
# slice): every byte a cache writes to its cache device, data, metadata
# and cleaning's copies; 0 without a cache
cache_sectors() {
	_cs=0
	for _n in ${CACHE_NODES:-}; do
		_cs=$((_cs + $(sectors_written "$_n")))
	done
	echo "$_cs"
}

# io_snap NAME: note the sectors written so far to the device fio runs on
# ($BDEV) and to the cache (cache_sectors) as NAME_dev_sectors and
# NAME_cache_sectors (the host takes cleaning's cost from them)
io_snap() {
	meta "$1_dev_sectors" "$(sectors_written "$BDEV")"
	meta "$1_cache_sectors" "$(cache_sectors)"
}

# sys_status: the system's status, one or more lines
sys_status() {
	case $SYS in
	raw | ssd | linear) echo "$SYS" ;;
	bcache)
		for _f in state dirty_data writeback_rate writeback_percent \
			writeback_running sequential_cutoff; do
			echo "$_f $(cat "$BCACHE_SYS/bcache/$_f")"
		done
		;;
	*) dmsetup status bench ;;
	esac
}

# sys_dirty: dirty data now, in KiB (dm-cache: whole 32 KiB blocks)
sys_dirty() {
	case $SYS in
	raw | ssd | linear) echo 0 ;;
	wow | cscan | lrw)
		echo $(($(wow_field bench 6) * 4))
		;;
	writecache)
		# <error> <blocks> <free> <under writeback> ...
		dmsetup status bench | awk '{ print ($5 - $6) * 4 }'
		;;
	dmcache)
		dmsetup status bench | awk '{ print $14 * 32 }'
		;;
	bcache)
		# dirty_data is human-readable: 0.0k, 12.3M, 1.1G
		awk '{ v = $1 + 0; u = substr($1, length($1));
			m = (u == "k") ? 1 : (u == "M") ? 1024 : (u == "G") ? 1048576 :
			    (u == "T") ? 1073741824 : 1 / 1024;
			printf "%d\n", v * m + 0.5 }' "$BCACHE_SYS/bcache/dirty_data"
		;;
	esac
}

# sys_destage_all: destage everything at full rate, wait until clean
sys_destage_all() {
	case $SYS in
	raw | ssd | linear) sync ;;
	wow | cscan | lrw)
		dmsetup message bench 0 cleaner on || fail "cleaner on refused"
		;;
	writecache)
		dmsetup message bench 0 cleaner || fail "cleaner refused"
		;;
	dmcache)
		dmsetup reload bench --table "$DMCACHE_TABLE cleaner 0" ||
			fail "cannot load the cleaner policy"
		dmsetup suspend bench && dmsetup resume bench ||
			fail "cannot switch to the cleaner policy"
		;;
	bcache)
		# no 30 s pause after each pass over the index
		echo 0 > "$BCACHE_SYS/bcache/writeback_delay"
		echo 0 > "$BCACHE_SYS/bcache/writeback_percent"
		echo 1000000000 > "$BCACHE_SYS/bcache/writeback_rate" 2> /dev/null
		echo 1 > "$BCACHE_SYS/bcache/writeback_running"
		;;
	esac
	_t0=$(date +%s)
	while :; do
		_d=$(sys_dirty)
		if [ "$_d" = 0 ]; then
			case $SYS in
			writecache)
				# nothing under writeback either
				dmsetup status bench | awk '{ exit !($7 == 0) }' && break ;;
			bcache)
				[ "$(cat "$BCACHE_SYS/bcache/state")" = clean ] && break ;;
			*) break ;;
			esac
		fi
		[ $(($(date +%s) - _t0)) -lt "${B_DESTAGE_TIMEOUT:-900}" ] ||
			fail "$SYS still dirty ($_d KiB) after ${B_DESTAGE_TIMEOUT:-900} s: $(sys_status)"
		sleep 0.2
	done
}

sys_remove() {
	case $SYS in
	bcache) bcache_stop_all ;;
	esac
	dmsetup remove_all > /dev/null 2>&1
	[ "$(dm_count)" -eq 0 ] || fail "cannot remove dm devices: $(dmsetup ls)"
}

# ---- md arrays over live disks (the RAID runs) ----

: "${B_MD:=/dev/md0}"

# raid_modules: load md and the raid456/raid10 personalities (the host
# puts them and their order in /wow/bench/raid-modules: the base
# initramfs lacks them)
raid_modules() {
	[ -d /sys/module/raid456 ] && [ -d /sys/module/raid10 ] && return 0
	[ -f /wow/bench/raid-modules ] || fail "no /wow/bench/raid-modules"
	while read -r _m; do
		[ -n "$_m" ] && insmod "$_m" 2> /dev/null
	done < /wow/bench/raid-modules
	[ -d /sys/module/raid456 ] && [ -d /sys/module/raid10 ] ||
		fail "cannot load raid456/raid10: $(dmesg | tail -n 5)"
}

# raid_members N: the first N member disks (/dev/vdd on, each checked by
# its serial, extra2 on: scripts/bench.py attaches them after the HDD)
raid_members() {
	_rm=
	for _i in $(seq 1 "$1"); do
		_l=$(echo defghijk | cut -c"$_i")
		_dev=/dev/vd$_l
		[ -b "$_dev" ] || fail "no member disk $_dev"
		[ "$(cat "/sys/block/vd$_l/serial" 2> /dev/null)" = "extra$((_i + 1))" ] ||
			fail "$_dev is not member $_i (serial $(cat "/sys/block/vd$_l/serial"))"
		_rm="$_rm $_dev"
	done
	echo $_rm
}

# raid_stop: stop the array if there is one
raid_stop() {
	[ -e /sys/block/${B_MD#/dev/}/md ] || return 0
	mdadm --stop "$B_MD" > /dev/null 2>&1 ||
		fail "cannot stop $B_MD: $(cat /proc/mdstat)"
}

# raid_setup raid5|raid10: a fresh md array over the live members (no
# resync: --assume-clean, the members read zeros), 64 KiB chunks, no
# bitmap, data from 1 MiB on each member (systems.MD_DATA_OFFSET_MB);
# sets B_HDD to it, so bench_closed runs over it
raid_setup() {
	raid_modules
	raid_stop
	case $1 in
	raid5) _n=5 _lv="--level=5 --layout=left-symmetric" ;;
	raid10) _n=4 _lv="--level=10 --layout=n2" ;;
	*) fail "unknown array $1" ;;
	esac
	_devs=$(raid_members $_n)
	for _d in $_devs; do
		mdadm --zero-superblock "$_d" > /dev/null 2>&1
		hdd_setup "$_d"
	done
	echo "+ mdadm --create $B_MD $_lv --raid-devices=$_n --chunk=64 $_devs"
	echo y | mdadm --create "$B_MD" --run --assume-clean --metadata=1.2 \
		$_lv --raid-devices=$_n --chunk=64 --bitmap=none \
		--data-offset=1M $_devs > /tmp/mdadm.out 2>&1 ||
		fail "mdadm --create failed: $(cat /tmp/mdadm.out)"
	[ -b "$B_MD" ] || fail "no $B_MD after mdadm --create"
	_md=${B_MD#/dev/}
	meta raid "$1"
	meta raid_members "$(echo $_devs)"
	meta raid_sectors "$(size_sectors "$B_MD")"
	meta raid_optimal_io "$(cat /sys/block/$_md/queue/optimal_io_size)"
	[ -e /sys/block/$_md/md/stripe_cache_size ] &&
		meta raid_stripe_cache "$(cat /sys/block/$_md/md/stripe_cache_size)"
	cat /proc/mdstat
	B_HDD=$B_MD
}

# ---- fio ----

# run_fio JOB [/tmp] [FIO OPTION...]: run /wow/bench/jobs/JOB.fio on $BDEV;
# its JSON output goes to the run's results (with /tmp: left in /tmp/fio.json)
run_fio() {
	_job=$1
	shift
	_keep=
	[ "$1" = /tmp ] && { _keep=1; shift; }
	echo "+ fio $_job.fio $* (DEV=$BDEV)"
	# one file name for every system: fio seeds its zipf generator from
	# the name, and every system must get the same writes
	ln -sfn "$BDEV" /tmp/bench-dev
	DEV=/tmp/bench-dev fio --output-format=json --output=/tmp/fio.json \
		"$@" "$B_JOBS/$_job.fio" > /tmp/fio.err 2>&1
	_rc=$?
	[ -n "$_keep" ] || cp /tmp/fio.json "$OUT/fio.json"
	if [ $_rc -ne 0 ]; then
		cat /tmp/fio.err /tmp/fio.json | head -n 40
		fail "fio $_job failed (exit $_rc)"
	fi
}

# ---- measurement 1: modelled destage ----

# bench_destage SYSTEM JOB CACHE_MB: load the dirty set with destage held
# back, then destage everything; blktrace both disks throughout.  A 4 KiB
# read of the origin's last block (a marker) separates load and destage.
bench_destage() {
	_sys=$1 _job=$2 _mb=$3
	phase reset
	bench_reset
	# the tracepoints on before any I/O (tests/vm/lib.sh), off at the end
	blktrace_anchor
	hdd_setup "$B_TRACE_ORIGIN"
	meta measurement destage
	meta system "$_sys"
	meta workload "$_job"
	meta cache_mb "$_mb"
	meta origin_sectors "$(size_sectors "$B_TRACE_ORIGIN")"
	meta origin_dev "$(dev_id "$B_TRACE_ORIGIN" | tr : ,)"
	meta cache_dev "$(dev_id "$B_CACHE" | tr : ,)"
	phase create
	sys_create "$_sys" "$B_TRACE_ORIGIN" "$_mb" hold
	rm -rf /tmp/bt
	mkdir -p /tmp/bt
	blktrace -d "$B_TRACE_ORIGIN" -d "$B_CACHE" -a issue -b 1024 -n 32 \
		-D /tmp/bt > /tmp/bt/blktrace.log 2>&1 &
	_bt=$!
	sleep 1
	kill -0 $_bt 2> /dev/null ||
		fail "blktrace did not start: $(cat /tmp/bt/blktrace.log)"
	phase load
	io_snap start
	_last=$(($(size_sectors "$B_TRACE_ORIGIN") / 8 - 1))
	_bd_t0=$(now)
	run_fio "$_job" /tmp
	_bd_t1=$(now)
	# No pause here: dm-wow destages at full rate after 1 s without I/O.
	# The marker, a read no system issues, separates load and destage.
	dd if="$B_TRACE_ORIGIN" of=/dev/null bs=4096 skip=$_last count=1 \
		iflag=direct 2> /dev/null || fail "marker read failed"
	sys_status > /tmp/status-loaded.txt
	_dirty=$(sys_dirty)
	sys_destage_all
	_bd_t2=$(now)
	io_snap end
	phase "destaged (from $_bd_t1)"
	meta marker_sector $((_last * 8))
	meta dirty_kib_loaded "$_dirty"
	cp /tmp/status-loaded.txt /tmp/fio.json "$OUT/"
	phase traces
	sync
	sleep 0.2
	kill -INT $_bt
	wait $_bt
	sys_status > "$OUT/status-clean.txt"
	meta load_s "$(awk -v a="$_bd_t0" -v b="$_bd_t1" 'BEGIN { print b - a }')"
	meta destage_s "$(awk -v a="$_bd_t1" -v b="$_bd_t2" 'BEGIN { print b - a }')"
	cp /tmp/bt/blktrace.log "$OUT/blktrace.log"
	_drop=$(sed -n 's/.*(dropped \([0-9]*\)).*/\1/p' /tmp/bt/blktrace.log |
		awk '{ s += $1 } END { print s + 0 }')
	meta dropped_events "$_drop"
	# the binary traces go to the host, whose blkparse is many times
	# faster than the guest's under TCG (scripts/wowbench/report.py)
	mkdir -p "$OUT/bt"
	for _d in "$B_TRACE_ORIGIN" "$B_CACHE"; do
		_n=$(basename "$_d")
		ls /tmp/bt/"$_n".blktrace.* > /dev/null 2>&1 ||
			fail "no $_n trace: $(cat /tmp/bt/blktrace.log)"
		cp /tmp/bt/"$_n".blktrace.* "$OUT/bt/" ||
			fail "cannot copy the $_n trace"
	done
	meta trace_origin "$(basename "$B_TRACE_ORIGIN")"
	meta trace_cache "$(basename "$B_CACHE")"
	rm -rf /tmp/bt
	phase remove
	sys_remove
	blktrace_anchor_stop
	phase done
}

# ---- measurement 2: closed-loop throughput on the live HDD ----

# now_cs: uptime in centiseconds (an integer; /proc/uptime has 2 decimals)
now_cs() {
	read _u _x < /proc/uptime
	echo "${_u%.*}${_u#*.}"
}

# dev_stat DEV: /sys path of the I/O counters of block device DEV
dev_stat() {
	echo "/sys/dev/block/$(dev_id "$1")/stat"
}

# alive PID: true while process PID runs (a zombie does not)
alive() {
	kill -0 "$1" 2> /dev/null || return 1
	! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2> /dev/null
}

# closed_watch FIO_PID CACHE_KIB WINDOW_S TURNOVER_PCT ORIGIN_STAT DEV_STAT
#
# Runs while fio does.  Time 0 is the first I/O fio completes on the device
# (fio's own clock, within a poll; fio may spend seconds setting up a zipf
# generator first).  Once a second prints "t dirty_kib origin_sectors
# dev_writes dev_sectors cache_sectors": seconds, dirty data, sectors
# written to the origin (the HDD), writes completed on and sectors
# written to the device fio runs on, and sectors written to the cache
# (cache_sectors), all since time 0; for
# dm-wow also appends "t <dmsetup status>" to $OUT/status-samples.txt (the
# host takes log_blocks from it: the log's writes over the window).
#
# Stops fio (SIGINT) by one rule, the same for every system:
#   full      the dirty data grew by at most 1% of the cache over the last
#             5 samples (5 s or more): the cache is as full as it gets,
#             and has been since the first of them (at 5 s for a cache that
#             keeps nothing dirty, and for the raw disk);
#   turnover  the origin has been written, since that first sample,
#             TURNOVER_PCT% of the largest dirty amount seen since (for a
#             write-back cache: the destager has been through its dirty
#             data once);
#   stop      at the first sample at least WINDOW_S seconds after turnover
#             whose last WINDOW_S seconds look steady (closed_stable): the
#             host measures the last WINDOW_S seconds of fio's log and
#             checks them itself (scripts/wowbench/report.py steady_state).
# fio's --runtime caps a run that never gets there (meta closed_stop).
closed_watch() {
	_pid=$1 _ckib=$2 _win=$3 _turn=$4 _ost=$5 _dst=$6
	read _x _x _x _x _w0 _x _x _x < "$_dst"
	read _x _x _x _x _x _x _o0 _x < "$_ost"
	_r0=$(awk '{ print $1 }' "$_dst")
	_i=0
	while alive "$_pid" && [ $_i -lt 1200 ]; do
		read _r _x _x _x _w _x < "$_dst"
		[ "$_w" != "$_w0" ] || [ "$_r" != "$_r0" ] && break
		_i=$((_i + 1))
		sleep 0.1
	done
	_t0=$(now_cs)
	meta closed_t0 "$_t0"
	read _x _x _x _x _x _x _s0 _x < "$_dst"
	_c0=$(cache_sectors)
	: > "$B_WATCH"
	_d1=-1 _d2=-1 _d3=-1 _d4=-1 _d5=-1
	_o1=0 _o2=0 _o3=0 _o4=0 _o5=0
	_full= _turned= _stop= _dmax=0 _ofull=0 _int=
	while alive "$_pid"; do
		_t=$(($(now_cs) - _t0))
		_d=$(sys_dirty)
		read _x _x _x _x _w _x < "$_dst"
		_w=$((_w - _w0))
		read _x _x _x _x _x _x _o _x < "$_ost"
		_o=$((_o - _o0))
		read _x _x _x _x _x _x _s _x < "$_dst"
		_c=$(cache_sectors)
		printf '%d.%02d %s %d %d %d %d\n' $((_t / 100)) $((_t % 100)) \
			"$_d" "$_o" "$_w" $((_s - _s0)) $((_c - _c0)) |
			tee -a "$B_WATCH"
		case ${SYS:-} in
		wow | cscan | lrw)
			printf '%d.%02d %s\n' $((_t / 100)) $((_t % 100)) \
				"$(dmsetup status bench)" >> "$OUT/status-samples.txt"
			;;
		esac
		# _d5, _o5: the dirty data and origin count 5 samples ago; full
		# since then (the turnover counts from there)
		if [ -z "$_full" ] && [ $_t -ge 500 ] && [ "$_d5" -ge 0 ] &&
			[ $((_d - _d5)) -le $((_ckib / 100)) ]; then
			_full=$_t _ofull=$_o5 _dmax=$_d
			for _x in $_d1 $_d2 $_d3 $_d4 $_d5; do
				[ "$_x" -gt "$_dmax" ] && _dmax=$_x
			done
			meta closed_full_cs "$_full"
		fi
		_d5=$_d4 _d4=$_d3 _d3=$_d2 _d2=$_d1 _d1=$_d
		_o5=$_o4 _o4=$_o3 _o3=$_o2 _o2=$_o1 _o1=$_o
		if [ -n "$_full" ] && [ -z "$_turned" ]; then
			[ "$_d" -gt "$_dmax" ] && _dmax=$_d
			if [ $(((_o - _ofull) * 100)) -ge \
				$((_dmax * 2 * _turn)) ]; then
				_turned=$_t
				_stop=$((_t + _win * 100))
				meta closed_turnover_cs "$_turned"
			fi
		fi
		if [ -n "$_stop" ] && [ -z "$_int" ] && [ $_t -ge $_stop ] &&
			closed_stable $_t "$_win" "$_ckib" < "$B_WATCH"
		then
			kill -INT "$_pid" 2> /dev/null
			_int=$_t
			meta closed_stop steady
			meta closed_stop_cs "$_t"
		fi
		if [ -n "$_int" ] && [ $((_t - _int)) -gt 6000 ]; then
			kill -KILL "$_pid" 2> /dev/null
			meta closed_stop killed
		fi
		sleep 1
	done
	[ -n "$_int" ] || meta closed_stop runtime
}

# closed_stable NOW_CS WINDOW_S CACHE_KIB < SAMPLES: true if the samples
# (closed_watch's lines) of the last WINDOW_S seconds before NOW_CS look
# steady, by the host's rule (report.steady_state) on the guest's counters
# with a margin (the host allows 5% and 20%, its window is fio's): the
# dirty data moved by at most 4% of the cache (least-squares slope times
# WINDOW_S), and the device's writes in the window's two halves differ by
# at most 15% of the mean plus the largest step between two samples over a
# half's writes.
closed_stable() {
	awk -v now="$1" -v win="$2" -v ckib="$3" '
	{ t[NR] = $1; d[NR] = $2; w[NR] = $4 }
	END {
		s = now / 100 - win - 0.5; n = 0
		for (i = 1; i <= NR; i++)
			if (t[i] >= s) { n++; T[n] = t[i]; D[n] = d[i]; W[n] = w[i] }
		if (n < 4 || T[n] <= T[1]) exit 1
		mt = 0; md = 0
		for (i = 1; i <= n; i++) { mt += T[i]; md += D[i] }
		mt /= n; md /= n; num = 0; den = 0
		for (i = 1; i <= n; i++) {
			# no "^": busybox awk may lack math support
			num += (T[i] - mt) * (D[i] - md)
			den += (T[i] - mt) * (T[i] - mt)
		}
		drift = num / den * win
		if (drift < 0) drift = -drift
		if (drift > 0.04 * ckib) exit 1
		tot = W[n] - W[1]
		if (tot <= 0) exit 1
		mid = (T[1] + T[n]) / 2; step = 0
		for (i = 2; i <= n; i++) {
			if (W[i] - W[i - 1] > step) step = W[i] - W[i - 1]
			if (T[i - 1] <= mid && mid <= T[i])
				wm = W[i - 1] + (W[i] - W[i - 1]) * (mid - T[i - 1]) / \
					(T[i] - T[i - 1])
		}
		h1 = (wm - W[1]) / (mid - T[1]); h2 = (W[n] - wm) / (T[n] - mid)
		mean = tot / (T[n] - T[1]); ch = (h2 - h1) / mean
		if (ch < 0) ch = -ch
		exit !(ch <= 0.15 + step / (tot / 2))
	}'
}

# bench_closed SYSTEM JOB CACHE_MB RUNTIME_S [WINDOW_S TURNOVER_PCT]: run
# JOB (time-based, at most RUNTIME_S seconds; a rate-limited job has its
# rate_iops) on SYSTEM over the emulated HDD, logging IOPS and completion
# latency histograms (fio) and dirty data (closed_watch) once a second, and
# stop once the cache turned over and the last WINDOW_S seconds were
# steady (closed_watch).  The host measures the last WINDOW_S seconds of
# fio's log.  Without WINDOW_S, fio runs for RUNTIME_S.
bench_closed() {
	_sys=$1 _job=$2 _mb=$3 _rt=$4 _cwin=${5:-0} _cturn=${6:-100}
	phase reset
	bench_reset
	hdd_setup "$B_HDD"
	meta measurement closed
	meta system "$_sys"
	meta workload "$_job"
	meta cache_mb "$_mb"
	meta runtime_s "$_rt"
	meta window_s "$_cwin"
	meta turnover_pct "$_cturn"
	meta origin_sectors "$(size_sectors "$B_HDD")"
	sys_create "$_sys" "$B_HDD" "$_mb" live
	rm -f /tmp/iops_* /tmp/lat_* /tmp/fio.json /tmp/*.iolog
	ln -sfn "$BDEV" /tmp/bench-dev
	# an iolog workload (scripts/wowbench/spc1.py): its log, unpacked
	if [ -f "$B_JOBS/$_job.iolog.gz" ]; then
		gunzip -c "$B_JOBS/$_job.iolog.gz" > "/tmp/$_job.iolog" ||
			fail "cannot unpack $_job.iolog.gz"
		meta iolog "$_job"
	fi
	phase fio
	echo "+ fio $_job.fio --runtime=$_rt (DEV=$BDEV)"
	DEV=/tmp/bench-dev fio --output-format=json --output=/tmp/fio.json \
		--runtime="$_rt" --time_based --write_iops_log=/tmp/iops \
		--log_avg_msec=1000 --write_hist_log=/tmp/lat \
		--log_hist_msec=1000 --percentile_list=50:99:99.9 \
		"$B_JOBS/$_job.fio" > /tmp/fio.err 2>&1 &
	_fio=$!
	if [ "$_cwin" -gt 0 ]; then
		closed_watch $_fio $((_mb * 1024)) "$_cwin" "$_cturn" \
			"$(dev_stat "$B_HDD")" "$(dev_stat "$BDEV")" > "$OUT/dirty.txt"
	else
		closed_watch $_fio $((_mb * 1024)) 100000 100000 \
			"$(dev_stat "$B_HDD")" "$(dev_stat "$BDEV")" > "$OUT/dirty.txt"
	fi
	wait $_fio
	_rc=$?
	phase "fio done (exit $_rc)"
	cp /tmp/fio.json "$OUT/fio.json"
	_stopped=$(sed -n 's/^closed_stop=//p' "$OUT/meta.txt")
	# fio stopped by SIGINT exits non-zero; its output is complete
	if [ $_rc -ne 0 ] && [ "$_stopped" != steady ]; then
		cat /tmp/fio.err /tmp/fio.json | head -n 40
		fail "fio $_job failed (exit $_rc)"
	fi
	grep -q '"jobs"' /tmp/fio.json || fail "fio $_job: no JSON output"
	sys_status > "$OUT/status-end.txt"
	for _f in /tmp/iops_iops.*.log /tmp/lat_clat_hist.*.log; do
		cp "$_f" "$OUT/" || fail "cannot copy $_f"
	done
	rm -f /tmp/iops_* /tmp/lat_* /tmp/*.iolog
	phase remove
	sys_remove
	phase done
}

# ---- measurement 4: CPU cost on RAM disks ----

# perf_start: sample every CPU (the software clock: TCG has no PMU), with
# call chains, until perf_stop; the host copied perf and its libraries in
# (bench.py --perf).  perf_stop writes the profile into $OUT: perf-self.txt
# (self time by symbol), perf-children.txt (time under each symbol,
# callees included), perf-script.txt.gz (every sample's stack, for flame
# graphs: the host folds it) and kallsyms-modules.txt.gz (the module each
# module symbol is in: perf reports them all as the kernel's).
perf_start() {
	command -v perf > /dev/null || fail "perf is not in the VM"
	echo 0 > /proc/sys/kernel/kptr_restrict
	echo -1 > /proc/sys/kernel/perf_event_paranoid
	perf record -a -g -F 499 -o /tmp/perf.data > /tmp/perf.err 2>&1 &
	B_PERF_PID=$!
	sleep 1
	kill -0 "$B_PERF_PID" 2> /dev/null ||
		fail "perf record: $(cat /tmp/perf.err)"
	meta perf_hz 499
}

perf_stop() {
	kill -INT "$B_PERF_PID"
	wait "$B_PERF_PID"
	phase perf-report
	perf report -i /tmp/perf.data --stdio --no-children -g none \
		--sort dso,sym --percent-limit 0.1 > "$OUT/perf-self.txt" \
		2> /tmp/perf.err || fail "perf report: $(cat /tmp/perf.err)"
	perf report -i /tmp/perf.data --stdio --children -g none \
		--sort sym --percent-limit 1 > "$OUT/perf-children.txt" \
		2> /dev/null
	perf script -i /tmp/perf.data -F comm,ip,sym 2> /dev/null |
		gzip > "$OUT/perf-script.txt.gz"
	# which module each symbol is in: perf names them all kernel.kallsyms
	awk '$4 ~ /^\[/ { print $3, $4 }' /proc/kallsyms |
		gzip > "$OUT/kallsyms-modules.txt.gz"
	meta perf_samples "$(perf report -i /tmp/perf.data --stdio \
		--no-children -g none --sort dso 2> /dev/null |
		sed -n 's/^# Samples: \([0-9]*\).*/\1/p' | head -1)"
	rm -f /tmp/perf.data
}

# cpu_busy_each: "cpuN busy ticks" for every CPU (/proc/stat), one a line
cpu_busy_each() {
	awk '$1 ~ /^cpu[0-9]+$/ { print $1, $2 + $3 + $4 + $7 + $8 }' /proc/stat
}

# bench_cpu SYSTEM JOB CACHE_MB ORIGIN_MB [JOBS]: two RAM disks (brd,
# ORIGIN_MB each), SYSTEM over /dev/ram0 with a CACHE_MB slice of
# /dev/ram1 as its cache (dm-linear: over /dev/ram0 alone), and JOB (time
# based: 4 KiB random writes at iodepth 32) on it.  With nothing slow under
# it, the IOPS is what the CPU allows.  Notes the CPU time the guest spent
# (/proc/stat, in USER_HZ ticks: in all and each CPU's) and the bytes
# written to the cache.  JOBS (default 1): the fio jobs JOB runs, each
# pinned to its own CPU by the job file; the guest must have that many.
bench_cpu() {
	_sys=$1 _job=$2 _mb=$3 _omb=$4 _jobs=${5:-1}
	_ncpu=$(grep -c '^processor' /proc/cpuinfo)
	[ "$_jobs" -le "$_ncpu" ] ||
		fail "$_jobs fio jobs, one a CPU, but the guest has $_ncpu CPUs"
	phase reset
	bench_reset
	rmmod brd 2> /dev/null
	modprobe brd rd_nr=2 rd_size=$((_omb * 1024)) max_part=0 ||
		fail "modprobe brd"
	[ -b /dev/ram0 ] && [ -b /dev/ram1 ] || fail "no /dev/ram0, /dev/ram1"
	B_CACHE=/dev/ram1
	meta measurement cpu
	meta system "$_sys"
	meta workload "$_job"
	meta cache_mb "$_mb"
	meta origin_mb "$_omb"
	meta jobs "$_jobs"
	meta guest_cpus "$_ncpu"
	phase create
	sys_create "$_sys" /dev/ram0 "$_mb" live
	[ "$B_PERF" = 1 ] && perf_start
	io_snap start
	cpu_busy_each > /tmp/cpu-busy-start.txt
	read _x _u _n _s _i _w _q _sq _x < /proc/stat
	_cs=$(awk '$1 == "ctxt" { print $2 }' /proc/stat)
	phase fio
	run_fio "$_job"
	read _x _u2 _n2 _s2 _i2 _w2 _q2 _sq2 _x < /proc/stat
	_cs2=$(awk '$1 == "ctxt" { print $2 }' /proc/stat)
	cpu_busy_each > /tmp/cpu-busy-end.txt
	io_snap end
	[ "$B_PERF" = 1 ] && perf_stop
	meta cpu_busy_ticks $((_u2 + _n2 + _s2 + _q2 + _sq2 - _u - _n - _s - _q - _sq))
	meta cpu_idle_ticks $((_i2 + _w2 - _i - _w))
	# every CPU's context switches (a worker woken and run is one or two)
	meta context_switches $((_cs2 - _cs))
	# each CPU's busy ticks (cpu0_busy_ticks=...): both busy with two jobs
	awk 'NR == FNR { a[$1] = $2; next }
		{ print $1 "_busy_ticks=" ($2 - a[$1]) }' \
		/tmp/cpu-busy-start.txt /tmp/cpu-busy-end.txt >> "$OUT/meta.txt"
	case $_sys in
	linear) ;;
	*) sys_status > "$OUT/status-end.txt" ;;
	esac
	phase remove
	sys_remove
	rmmod brd || fail "rmmod brd"
	phase done
}

# ---- measurement 5: flush cost ----

# bench_flush SYSTEM JOB CACHE_MB: SYSTEM over the file-backed origin
# (/dev/vda) with a CACHE_MB cache on the file-backed cache disk (ssd: the
# cache slice alone), and JOB on it: 4 KiB random writes at iodepth 32,
# plain or every one FUA (fio sync=1), a fixed number of them that fills
# the cache a quarter at most (so no destage is waited for), or a
# runtime cap.
bench_flush() {
	_sys=$1 _job=$2 _mb=$3
	phase reset
	bench_reset
	meta measurement flush
	meta system "$_sys"
	meta workload "$_job"
	meta cache_mb "$_mb"
	phase create
	sys_create "$_sys" "$B_TRACE_ORIGIN" "$_mb" live
	io_snap start
	phase fio
	run_fio "$_job"
	io_snap end
	case $_sys in
	ssd) ;;
	*) sys_status > "$OUT/status-end.txt" ;;
	esac
	phase remove
	sys_remove
	phase done
}
