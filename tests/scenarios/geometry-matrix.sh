#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Geometry matrix: block_size 512..65536 with erase_block_size from the
# smallest allowed (WOW_MIN_BLOCKS_PER_SEGMENT blocks) up to 4 MiB, powers
# of two.  Each combination gets its own dm-linear slices of the disks (a
# combination that hangs cannot spoil the next one), then O_DIRECT writes
# of 1, 3, 5 and 17 blocks, 128 KiB, 1 MiB and overlapping 2- and 3-block
# writes (wowpat geo), each pwrite() timed out after $WT seconds, and the
# data checked: through the device, after remove + create (recovery from
# the log), and from the origin alone after cleaner mode destaged it all.
# quick: a fixed spread of combinations (incl. the ones known to hang);
# full: every combination.  Prints how many combinations ran and passed.
#
# vm: origin=1G cache=4G timeout=1500
. "${WOW_LIB:-/wow/lib.sh}"
. /wow/guest/hostile.sh

WT=${WOW_GEO_TIMEOUT:-30}	# seconds a write, check, create or remove may take
OSL=16384			# origin slice: 8 MiB in sectors
CSL=65536			# cache slice: 32 MiB (7 x 4 MiB erase blocks + room)

if [ "$PROFILE" = full ]; then
	COMBOS=""
	bs=512
	while [ $bs -le 65536 ]; do
		eb=$((bs * 4))
		while [ $eb -le 4194304 ]; do
			COMBOS="$COMBOS $bs:$eb"
			eb=$((eb * 2))
		done
		bs=$((bs * 2))
	done
else
	# every block size, small and large erase blocks; 8192:2097152 is
	# the known hang (1 MiB write never completes)
	COMBOS="512:2048 512:4194304 1024:65536 2048:8192 4096:16384
		4096:1048576 8192:32768 16384:4194304
		32768:131072 65536:262144 65536:4194304 8192:2097152"
fi
: "${WOW_GEO_COMBOS:=$COMBOS}"

ran=0 passed=0 failed="" i=0
PAGE=$(getconf PAGESIZE 2>/dev/null || echo 4096)
max_slices=$(( $(size_sectors "$CACHE") / CSL ))
dmesg_clear

# step DESC CMD...: a bounded step of the current combination; on failure
# note it (with the last output lines) and return 1
step() {
	_desc=$1
	shift
	bounded "$WT" /tmp/geo.out "$@"
	_rc=$?
	[ $_rc -eq 0 ] && return 0
	if [ $_rc -eq 124 ]; then
		_why="$_desc did not finish in $WT s (last: $(tail -n 1 /tmp/geo.out))"
	else
		_why="$_desc failed (exit $_rc): $(tail -n 3 /tmp/geo.out | tr '\n' ' ')"
	fi
	echo "    FAIL bs=$bs eb=$eb: $_why"
	dm_exists "$d" && echo "    status: $(dmsetup status "$d" 2>&1)"
	failed="$failed; bs=$bs eb=$eb: $_why"
	return 1
}

combo() {	# runs one combination; returns 1 on a failure
	t0=$(uptime_ds)
	o=o$i c=c$i d=g$i
	run dmsetup create $o --table "0 $OSL linear $ORIGIN $((i * OSL))" \
		> /dev/null
	run dmsetup create $c --table "0 $CSL linear $CACHE $((i * CSL))" \
		> /dev/null
	OD=$(dm_node $o) CD=$(dm_node $c)
	T="0 $OSL wow $OD $CD 4 block_size $bs erase_block_size $eb"
	if [ $bs -gt "$PAGE" ] && ! big_blocks; then
		# refused with the reason, and nothing left behind
		dmesg_clear
		if dmsetup create $d --table "$T" > /tmp/geo.out 2>&1; then
			echo "    FAIL bs=$bs eb=$eb: accepted above the page size"
			failed="$failed; bs=$bs eb=$eb: accepted"
			return 1
		fi
		if dm_exists $d || ! dmesg_since |
		    grep -q 'block_size above the page size is not supported'; then
			echo "    FAIL bs=$bs eb=$eb: refused without the reason, or left a device"
			failed="$failed; bs=$bs eb=$eb: refusal"
			return 1
		fi
		dmsetup remove $o $c > /dev/null 2>&1
		echo "ok bs=$bs eb=$eb: refused on $(uname -r) (block above the page size)"
		return 0
	fi
	step "create" dmsetup create $d --table "$T" || return 1
	D=$(dm_node $d)
	step "write" wowpat geo write "$D" $bs $i || return 1
	step "check" wowpat geo check "$D" $bs $i || return 1
	step "remove" dmsetup remove $d || return 1
	step "re-create (recovery)" dmsetup create $d --table "$T" || return 1
	step "check after recovery" wowpat geo check "$D" $bs $i || return 1
	step "cleaner on" dmsetup message $d 0 cleaner on || return 1
	_n=0
	while [ "$(wow_stat $d dirty_blocks)" != 0 ]; do
		_n=$((_n + 1))
		if [ $_n -gt $((WT * 2)) ]; then
			echo "    FAIL bs=$bs eb=$eb: cleaner left $(wow_stat $d dirty_blocks) dirty blocks after $WT s"
			failed="$failed; bs=$bs eb=$eb: cleaner did not drain"
			return 1
		fi
		sleep 0.5
	done
	st=$(wow_status $d)
	case "$st" in cleaning\ *) ;; *)
		echo "    FAIL bs=$bs eb=$eb: state after cleaning: $st"
		failed="$failed; bs=$bs eb=$eb: state ${st%% *}"
		return 1 ;;
	esac
	step "remove after cleaning" dmsetup remove $d || return 1
	step "check the origin alone" wowpat geo check "$OD" $bs $i || return 1
	dmsetup remove $o $c > /dev/null 2>&1
	echo "ok bs=$bs eb=$eb ($(( ($(uptime_ds) - t0) / 10 )) s)"
}

for be in $WOW_GEO_COMBOS; do
	bs=${be%%:*} eb=${be#*:}
	[ $i -lt "$max_slices" ] || fail "more combinations than cache slices"
	ran=$((ran + 1))
	if combo; then
		passed=$((passed + 1))
	else
		# leave what hangs; the next combination has its own slices
		dmesg_since | grep -E 'wow|WARN|BUG|gather_batch' | head -n 5 |
			sed 's/^/    kernel: /'
		dmesg_clear
	fi
	i=$((i + 1))
done

echo "geometry-matrix: $ran combinations ran ($PROFILE), $passed passed, $((ran - passed)) failed"
[ -z "$failed" ] || fail "${failed#; }"
