# SPDX-License-Identifier: GPL-2.0
#
# cachecheck.awk: check a blktrace of dm-wow's cache device against
# invariant 5 (DESIGN.md): every write is block-aligned and whole blocks,
# erase block 0 is written only in its first block (the superblock, once, at
# format) and its second (the health block: at format, and again only when
# the cache device fails an I/O), and inside every other erase block (a log
# segment) writes only
# append at the write pointer.  A write at the start of an erase block is
# always allowed and resets that erase block's write pointer (the segment
# is reused from its start; records never straddle segments).
#
# Input, one event a line, in time order (blkparse's default sort):
#     blkparse -i TRACE -f "%a %d %S %n\n"
# i.e. ACTION RWBS SECTOR NR_SECTORS.  Only events whose action is `ev`
# (default D, what the device was given) and whose RWBS has a W are
# writes; discards are counted, not checked.
#
# Format version 2 adds the checkpoint area: blocks 2.. up to the first
# segment (meta, sectors), rewritten whole at every clean shutdown and its
# header (block 2) rewritten before the first record after a load: writes
# there are allowed and counted, never checked as appends.
#
# Variables (-v): ev (D), eb (erase block, sectors, 2048 = 1 MiB), bs (block,
# sectors, 8 = 4 KiB), meta (first segment sector; 0: version 1, segments
# from erase block 1 and no checkpoint area), max_sb (superblock writes
# allowed, 1), max_health (health block writes allowed, 1), show
# (violations listed, 10).
#
# Prints totals and the write amplification under an erase-block model
# (each non-append write costs a read-modify-write of its erase block):
#     WA = (bytes + erase_block_bytes * non_append_writes) / bytes
# Exits 1 on any violation, 2 when there was no write at all.

BEGIN {
	if (ev == "") ev = "D"
	if (eb == "") eb = 2048
	if (bs == "") bs = 8
	if (max_sb == "") max_sb = 1
	if (max_health == "") max_health = 1
	if (show == "") show = 10
	if (meta == "") meta = 0
	ckpt = 0; ckpt_sectors = 0
	writes = 0; sectors = 0; viol = 0; nonappend = 0; resets = 0
	sb = 0; health = 0; discards = 0; opened = 0; lines = 0
}

function bad(why) {
	viol++
	if (viol <= show)
		printf "VIOLATION %d: %s %s sector %d + %d (erase block %d, offset %d): %s\n",
			viol, $1, $2, $3, $4, e, off, why
}

$1 == ev && NF >= 4 && $4 ~ /^[0-9]+$/ {
	lines++
	if ($2 ~ /D/) { discards++; next }
	if ($2 !~ /W/ || $4 == 0) next
	s = $3 + 0; n = $4 + 0
	writes++; sectors += n
	e = int(s / eb); off = s - e * eb
	if (s % bs || n % bs) { bad("not whole aligned blocks"); nonappend++; next }
	if (meta && s >= 2 * bs && s < meta) {
		if (s + n > meta) bad("checkpoint write runs into the log")
		ckpt++; ckpt_sectors += n
		next
	}
	if (e == 0 || s < meta) {
		if (s == 0 && n == bs) {
			sb++
			if (sb > max_sb) bad("superblock written " sb " times")
		} else if (s == bs && n == bs) {
			health++
			if (health > max_health)
				bad("health block written " health " times")
		} else {
			bad("write to erase block 0 beyond the superblock and health block")
		}
		next
	}
	if (off + n > eb) {
		bad("straddles an erase block boundary")
		nonappend++
		wp[e] = eb
		next
	}
	if (off == 0) {
		if (e in wp) resets++
		else opened++
		wp[e] = n
		next
	}
	cur = (e in wp) ? wp[e] : 0
	if (off != cur) {
		bad("not at the write pointer " cur)
		nonappend++
	}
	wp[e] = off + n
}

END {
	bytes = sectors * 512
	printf "cachecheck: %d %s events, %d writes, %d bytes (%.1f MiB), %d discards\n",
		lines, ev, writes, bytes, bytes / 1048576, discards
	printf "cachecheck: %d erase blocks opened, %d reused from their start, %d superblock writes\n",
		opened, resets, sb
	if (meta)
		printf "cachecheck: %d checkpoint area writes (%.1f MiB)\n",
			ckpt, ckpt_sectors / 2048
	printf "cachecheck: %d non-append writes, %d violations\n", nonappend, viol
	if (bytes > 0)
		printf "cachecheck: write amplification (erase-block model) %.3f\n",
			(bytes + eb * 512 * nonappend) / bytes
	if (viol) exit 1
	if (!writes) { print "cachecheck: no writes in the trace"; exit 2 }
}
