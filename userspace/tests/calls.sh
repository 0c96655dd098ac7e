#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The calls between libwow's objects go one way (libwow.h says which): no
# object calls, through others, back into itself.  From nm: an edge A -> B
# when A uses a symbol B defines.
# Usage: tests/calls.sh path/to/libwow.a
LIB=${1:-./libwow.a}

cycle=$(nm -A "$LIB" 2> /dev/null | awk '
	{
		split($1, p, ":"); o = p[2]
		if ($2 == "U") { use[o, $3] = 1; objs[o] = 1 }
		else if ($2 ~ /^[TDRBC]$/) { def[$3] = o; objs[o] = 1 }
	}
	END {
		for (k in use) {
			split(k, q, SUBSEP)
			if ((q[2] in def) && def[q[2]] != q[1])
				reach[q[1], def[q[2]]] = 1
		}
		do {	# the transitive closure
			more = 0
			for (k in reach) {
				split(k, q, SUBSEP)
				for (c in objs)
					if (((q[2], c) in reach) && !((q[1], c) in reach)) {
						reach[q[1], c] = 1
						more = 1
					}
			}
		} while (more)
		for (o in objs)
			if ((o, o) in reach)
				print o
	}' | sort | tr '\n' ' ')
if [ -z "$(nm -A "$LIB" 2> /dev/null | head -1)" ]; then
	echo "FAIL: userspace/libwow_calls_one_way (no symbols in $LIB)"
	exit 1
elif [ -z "$cycle" ]; then
	echo "PASS: userspace/libwow_calls_one_way"
else
	echo "FAIL: userspace/libwow_calls_one_way (in a circle: $cycle)"
	exit 1
fi
