/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow checkpoint reader (dm-wow-ckptread.c): read a checkpoint area
 * (dm-wow-format.h) and check every part of it, the header and its
 * closing copy, then the segment stream (each block's seal, each segment
 * entry, the tombstone total, each tombstone) and the slot table (each
 * block against its crc32c from the stream, each entry, each valid slot's
 * place); hand every segment, tombstone and valid slot to the caller, and
 * say what was wrong when something was.
 *
 * Part of the portable core: it includes dm-wow-types.h and other pure
 * headers only, so the module (dm-wow-checkpoint.c, its I/O) and the
 * userspace tools (wowcache.c, an image) build it unchanged, and KUnit
 * reads areas held in memory (tests/ckptread_kunit.c).  It reads blocks
 * only through the reader's read (and start) callbacks, into memory the
 * caller gives it, and hands what it read only to struct
 * wow_ckpt_load_ops: it allocates nothing.
 *
 * Contracts, for every call below: pure but for the callbacks, which may
 * sleep (then so does the call: process context); locking: none (a load
 * runs before the device is live; the callbacks take what they need).
 */
#ifndef DM_WOW_CKPTREAD_H
#define DM_WOW_CKPTREAD_H

#include "dm-wow-types.h"
#include "dm-wow-ckpt.h"
#include "dm-wow-tombs.h"

/*
 * What was wrong with a checkpoint a read refused: @fault, and where
 * (@fault_index, @fault_value) as each says.
 */
enum wow_ckpt_fault {
	WOW_CKPT_FAULT_NONE,
	/*
	 * the header is not a valid checkpoint's of this cache:
	 * @fault_index is wow_ckpt_header_judge's verdict (enum wow_ckpt_hdr)
	 */
	WOW_CKPT_FAULT_HEADER,
	/* format version 3 on: the closing copy is not the header's twin */
	WOW_CKPT_FAULT_CLOSING,
	/*
	 * segment stream block @fault_index does not check: its crc32c, the
	 * generation or the index in its trailer (wow_ckpt_block_ok)
	 */
	WOW_CKPT_FAULT_STREAM_BLOCK,
	/* the segment stream ends before its entries do */
	WOW_CKPT_FAULT_STREAM_END,
	/* segment @fault_index's entry is malformed (wow_ckpt_seg_decode) */
	WOW_CKPT_FAULT_SEG,
	/*
	 * the segments' entries hold @fault_index tombstones in all, the
	 * header says @fault_value
	 */
	WOW_CKPT_FAULT_TOMB_TOTAL,
	/*
	 * a tombstone of segment @fault_index is malformed
	 * (wow_ckpt_tomb_decode)
	 */
	WOW_CKPT_FAULT_TOMB,
	/* slot table block @fault_index does not match its crc32c */
	WOW_CKPT_FAULT_SLOT_BLOCK,
	/*
	 * slot @fault_index's entry is malformed (wow_ckpt_slot_decode, or
	 * an empty slot with a crc)
	 */
	WOW_CKPT_FAULT_SLOT,
	/*
	 * valid slot @fault_index, of origin block @fault_value, cannot be:
	 * the block is past the origin, or the slot is not in a written
	 * block of a segment life (a free segment, block 0, at or past the
	 * write pointer), or load_slot found the block cached already
	 */
	WOW_CKPT_FAULT_SLOT_PLACE,
};

/*
 * What the reader keeps of a segment from the stream to the slot table:
 * its write pointer (0 for a free segment: wow_ckpt_seg_decode) and the
 * tombstones it holds.
 */
struct wow_ckpt_seg_pos {
	u32 wp;
	u32 nr_tombs;
};

/* A checkpoint area to read: the caller fills in all but the fault. */
struct wow_ckpt_reader {
	/* the cache */
	u32 version;		/* the format's: entry size; closing copy (3 on) */
	u32 block_size;
	u32 blocks_per_seg;
	const u8 *uuid;
	u64 nr_slots;		/* nr_segments * blocks_per_seg */
	u64 nr_segments;
	u64 max_tombs;		/* the area's room: wow_ckpt_max_tombs_v */
	u64 nr_oblocks;		/* origin blocks */

	/*
	 * Read blocks [@block, @block + @n) of the area (block 0: the
	 * header) into @buf: 0 or -errno.  When the same read was started
	 * (@start), wait for it instead.  May sleep.
	 */
	int (*read)(void *ctx, u64 block, u32 n, void *buf);
	/*
	 * Optional: start that read and return; the reader calls read()
	 * with the same arguments before it touches @buf or returns.  With
	 * it the slot table is read a window ahead, into the other window.
	 */
	void (*start)(void *ctx, u64 block, u32 n, void *buf);
	void *ctx;

	/*
	 * Memory for wow_ckptread_load: @win[0], and with @start @win[1],
	 * @win_blocks blocks each (the reads go a window at a time); @csums
	 * a crc32c per slot table block (filled from the stream: what the
	 * blocks on disk hold); @segs an entry per segment.
	 */
	void *win[2];
	u32 win_blocks;
	__le32 *csums;
	struct wow_ckpt_seg_pos *segs;

	/* what was wrong, when a call below returned -ENOENT or -EUCLEAN */
	enum wow_ckpt_fault fault;
	u64 fault_index;
	u64 fault_value;
};

/* What a checkpoint holds, handed to the one loading it. */
struct wow_ckpt_load_ops {
	/* segment @s's entry; 0 or -errno (which stops the load) */
	int (*load_seg)(void *ctx, u64 s, const struct wow_ckpt_seg_info *si);
	/* a tombstone segment @s holds (in order); 0 or -errno */
	int (*load_tomb)(void *ctx, u64 s, const struct wow_tomb_range *tr);
	/*
	 * whether origin block @oblock is cached already: a slot loaded
	 * before holds it (then a second slot holding it is malformed:
	 * WOW_CKPT_FAULT_SLOT_PLACE)
	 */
	bool (*cached)(void *ctx, u64 oblock);
	/*
	 * valid slot @slot holds origin block @oblock (not cached yet),
	 * @dirty or not, its data's crc32c @crc when @has_crc (format
	 * version 5); 0 or -errno
	 */
	int (*load_slot)(void *ctx, u64 slot, u64 oblock, bool dirty, u32 crc,
			 bool has_crc);
	void *ctx;
};

/*
 * Read the header of @rd's area into @buf (two blocks: the header, then
 * its closing copy) and decode it into @ci.  0 when it is a valid
 * checkpoint of this cache (format version 3 on: with a closing copy the
 * same, byte for byte, at the block the header's table sizes give);
 * -ENOENT when not (@rd->fault says why: HEADER or CLOSING; @ci is filled
 * from any header with our magic, uuid and checksum, so its generation is
 * known); or read()'s -errno.
 */
int wow_ckptread_header(struct wow_ckpt_reader *rd, void *buf,
			struct wow_ckpt_info *ci);

/*
 * Read the checkpoint @ci (wow_ckptread_header said valid) and hand every
 * segment, tombstone and valid slot to @ops, in that order: first the
 * segment stream a window at a time (every block of a window checked
 * before an entry of it is decoded), then the slot table (every block of
 * a window against its crc32c before its entries).  0; -EUCLEAN when
 * something does not check (@rd->fault says what: what was handed over
 * must then be forgotten and the log scanned); read()'s -errno, or an
 * op's.  @rd->csums holds the slot table's crc32cs once the stream is
 * read.  No read started is left in flight.
 */
int wow_ckptread_load(struct wow_ckpt_reader *rd,
		      const struct wow_ckpt_info *ci,
		      const struct wow_ckpt_load_ops *ops);

#endif
