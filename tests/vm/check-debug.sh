#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-debug: every VM scenario on the debug kernel (KASAN, lockdep,
# KFENCE, kmemleak, ...; tests/vm/debug-kernel.sh) with WOW_PROFILE=full,
# each crash-flush-points campaign (crash-flush-points, -large, -tiny) as
# $WOW_FP_SHARDS boots (default 5) of 1000/N points each, every boot with
# its own recording.
#
# A whole run needs about three hours of both cores of a 2-core machine
# (at 3579c9b, WOW_VM_JOBS=3: 2 h 52 min, the five shards about 35
# minutes each, three at a time with fuzz-messages, then the rest;
# WOW_VM_FIRST names scenarios to start first;
# WOW_CHECK_DEBUG_ONLY=REGEX runs and reports only the scenarios and shards
# whose names match, e.g. '^crash-flush-points' for the flush-point
# shards alone).  So it resumes: a scenario
# (or shard) that passed is kept, as soon as it passed (a run killed
# halfway keeps what passed before), under $WOW_CACHE/check-debug/<key>/
# with its output, the key naming what results depend on (dm-wow/,
# tests/vm/ and userspace/ as committed, or with their changes) and the
# debug kernel, each pass naming its scenario file's hash; a later run at
# the same key runs only what has not passed yet with its file as it is,
# and prints every result, earlier ones marked so.  WOW_CHECK_DEBUG_FRESH=1 starts over.
#
# Result lines: PASS/FAIL/SKIP: vm/<scenario>, as wowvm.py prints them,
# then the flush points checked over all shards.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
WOW_CACHE=${WOW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dm-wow}
SHARDS=${WOW_FP_SHARDS:-5}
JOBS=${WOW_VM_JOBS:-2}

say() { echo "check-debug: $*" >&2; }

kdir=$("$here/debug-kernel.sh" dir) || exit 1
"$here/debug-kernel.sh" module > /dev/null || exit 1

# the key: what a scenario's result depends on besides the scenario itself
# (the module, the VM harness and guest tools, the userspace tools), as
# committed or with their changes, and the kernel; each kept pass also
# names its scenario file's hash, so editing docs, the bench or one
# scenario keeps the other results
cd "$repo" || exit 1
DEPS="dm-wow tests/vm userspace"
tree=$( { git rev-parse $(printf 'HEAD:%s ' $DEPS) 2> /dev/null || echo notree
	git diff HEAD -- $DEPS 2> /dev/null; } | sha256sum | cut -c1-20)
key=$tree-$(basename "$kdir")
dir=$WOW_CACHE/check-debug/$key
[ "${WOW_CHECK_DEBUG_FRESH:-0}" = 1 ] && rm -rf "$dir"
mkdir -p "$dir/scenarios" "$dir/passed"
say "results kept in $dir"

# a pass counts while the scenario file is the one that passed
fhash() { sha256sum < "$1" | cut -c1-16; }
keep() {	# NAME LOGDIR: NAME passed; keep it with its output
	{ echo "$(date -u +%FT%TZ) $(cat "$dir/hash/$1")"
	  cat "$2/results/$1.out" 2> /dev/null; } > "$dir/passed/$1.tmp" &&
		mv "$dir/passed/$1.tmp" "$dir/passed/$1"
}
fresh() {	# NAME FILE: has NAME passed with FILE as it is?
	echo "$(fhash "$2")" > "$dir/hash/$1"
	[ -f "$dir/passed/$1" ] &&
		[ "$(head -n 1 "$dir/passed/$1" | cut -d' ' -f2)" = "$(cat "$dir/hash/$1")" ]
}

# the scenarios, the crash-flush-points campaigns cut into shards
mkdir -p "$dir/hash"
todo=()
names=()
nshards=0
ONLY=${WOW_CHECK_DEBUG_ONLY:-}
wanted() { [ -z "$ONLY" ] || printf '%s\n' "$1" | grep -q -E -- "$ONLY"; }
for s in tests/scenarios/*.sh; do
	n=$(basename "$s" .sh)
	case $n in crash-flush-points | crash-flush-points-[a-z]*) ;;
	*)
		wanted "$n" || continue
		names+=("$n")
		fresh "$n" "$s" || { rm -f "$dir/passed/$n"; todo+=("$s"); }
		continue ;;
	esac
	for ((k = 0; k < SHARDS; k++)); do
		sn=$n-$((k + 1))of$SHARDS
		wanted "$sn" || continue
		names+=("$sn")
		nshards=$((nshards + 1))
		w=$dir/scenarios/$sn.sh
		# the scenario itself, told its shard after the library loads
		sed "/^\. \"\${WOW_LIB:-\/wow\/lib.sh}\"/a WOW_FP_SHARD=$k/$SHARDS; export WOW_FP_SHARD" \
			"$s" > "$w"
		grep -q "^WOW_FP_SHARD=$k/$SHARDS" "$w" ||
			{ say "cannot make shard $sn of $s"; exit 1; }
		fresh "$sn" "$w" || { rm -f "$dir/passed/$sn"; todo+=("$w"); }
	done
done

out=$dir/last-run.log
: > "$out"
rc=0
if [ ${#todo[@]} -gt 0 ]; then
	say "${#todo[@]} of ${#names[@]} to run ($(( ${#names[@]} - ${#todo[@]} )) passed earlier at this tree)"
	"$here/wowvm.py" run --flavour debug --profile full --jobs "$JOBS" \
		--suite vm-new "${todo[@]}" 2>&1 | tee "$out" | {
		logs=
		while IFS= read -r line; do
			case $line in
			"vm: run directory "*) logs=${line#vm: run directory } ;;
			"PASS: vm-new/"*) keep "${line#PASS: vm-new/}" "$logs" ;;
			esac
			case $line in
			"PASS: vm-new/"* | "SKIP: vm-new/"*) ;;
			"FAIL: vm-new/"*) echo "FAIL: vm/${line#FAIL: vm-new/}" ;;
			*) printf '%s\n' "$line" ;;
			esac
		done
	}
	rc=${PIPESTATUS[0]}
	grep -E '^SKIP: vm-new/' "$out" | sed 's/^SKIP: vm-new\//SKIP: vm\//'
fi

# every result: this run's and the earlier ones
checked=0 shards=0
for n in "${names[@]}"; do
	if [ -f "$dir/passed/$n" ]; then
		if grep -q "^PASS: vm-new/$n\$" "$out" 2> /dev/null; then
			echo "PASS: vm/$n"
		else
			echo "PASS: vm/$n (passed earlier at this tree, $(head -n 1 "$dir/passed/$n" | cut -d' ' -f1))"
		fi
		case $n in crash-flush-points-*)
			c=$(sed -n 's/^crash-flush-points: \([0-9]*\) flush points checked.*/\1/p' \
				"$dir/passed/$n" | tail -n 1)
			checked=$((checked + ${c:-0}))
			shards=$((shards + 1)) ;;
		esac
	elif ! grep -q -E "^(FAIL|SKIP): vm-new/$n( |\$)" "$out" 2> /dev/null; then
		echo "FAIL: vm/$n (not run: the run stopped before it)"
	fi
done
echo "check-debug: $checked flush points checked without a failure on the debug kernel, in the $shards of $nshards flush-point shards that passed"
[ "$rc" -eq 0 ] || exit "$rc"
[ "$shards" -eq "$nshards" ] || exit 1
