# SPDX-License-Identifier: GPL-2.0
#
# loadline.awk: from `wowctl dump CACHE` (its JSON, as wowctl writes it:
# one top-level member, one segment and one index entry per line), the
# line a test build of dm-wow logs when it loads the same image
# (test_load_report, dm-wow-recover.c), without the device's name:
#
#   loaded from checkpoint|log, next seq N, N dropped, N valid, N dirty,
#   N free segments, index digest H.G
#
# H and G fold each valid slot, in slot order (the slot, its origin
# block's low and high 32 bits, 1 when dirty), as h = h * 65599 + x and
# g = g * 1000003 + x modulo 2^32: every product stays below 2^53, so
# awk's doubles compute them exactly.  When the dump says the image does
# not load, the line is "does not load".
#
# crash-flush-points compares it with the module's line for every crash
# state: the tools' view and the module's load must agree.

function val(line) {
	sub(/^[^:]*: /, "", line)
	sub(/,$/, "", line)
	gsub(/"/, "", line)
	return line
}

# the number after "KEY": on the current line
function num(key,	s) {
	s = $0
	if (!sub(".*\"" key "\": ", "", s))
		return -1
	sub(/[^0-9].*/, "", s)
	return s
}

BEGIN { free = 0; loads = ""; n = 0 }
/^  "source": / { source = val($0) }
/^  "loads": / { loads = val($0) }
/^  "next_seq": / { next_seq = val($0) }
/^  "dropped": / { dropped = val($0) }
/^  "replay_dropped": / { replay_dropped = val($0) }
/^    \{"segment": / && /"state": "free"/ { free++ }
/^  "index": / { valid = num("valid_blocks"); dirty = num("dirty_blocks") }
/^    \{"oblock": / {
	slot = num("slot")
	ob[slot] = num("oblock")
	d[slot] = /"dirty": true/ ? 1 : 0
	if (slot + 1 > n)
		n = slot + 1
}

function fold(x) {
	h = (h * 65599 + x) % 4294967296
	g = (g * 1000003 + x) % 4294967296
}

END {
	if (loads != "true") {
		print "does not load"
		exit 0
	}
	# a load from a checkpoint drops what its replay drops; "dropped" is
	# the whole log's
	if (source == "checkpoint")
		dropped = replay_dropped
	h = 0
	g = 0
	for (i = 0; i < n; i++) {
		if (!(i in ob))
			continue
		fold(i)
		fold(ob[i] % 4294967296)
		fold(int(ob[i] / 4294967296))
		fold(d[i])
	}
	printf "loaded from %s, next seq %s, %s dropped, %s valid, %s dirty, %d free segments, index digest %.0f.%.0f\n", \
		source, next_seq, dropped, valid, dirty, free, h, g
}
