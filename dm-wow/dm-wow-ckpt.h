/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow checkpoint codec (dm-wow-ckpt.c): the entries of a checkpoint
 * area (header, slot table, segment stream; dm-wow-format.h), the sealing
 * and checking of its blocks, the segment stream's bytes on its blocks.
 *
 * Part of the portable core: pure (no locking, no allocation, no I/O, any
 * context), built unchanged by the module and the userspace tools
 * (dm-wow-types.h).  dm-wow-checkpoint.c writes and reads the blocks.
 */
#ifndef DM_WOW_CKPT_H
#define DM_WOW_CKPT_H

#include "dm-wow-types.h"
#include "dm-wow-format.h"
#include "dm-wow-tombs.h"

/* A checkpoint header, decoded. */
struct wow_ckpt_info {
	bool valid;
	u32 head_seg;			/* WOW_NO_SEG: none open */
	u32 head_wp;
	u32 next_seg;			/* WOW_NO_SEG: not known */
	u64 generation;
	u64 next_seq;
	u64 completed_seq;
	u64 nr_slots;
	u64 nr_segments;
	u64 slot_blocks;
	u64 seg_blocks;
	u64 nr_tombs;
	u64 written;			/* blocks a write wrote (not on disk) */
};

/*
 * A slot table entry: @e the 48 bits (wow_ckpt_slot_encode), @crc the
 * crc32c of the slot's data (format version 5; 0 for an empty slot).
 */
struct wow_ckpt_entry {
	u64 e;
	u32 crc;
};

/*
 * A segment stream entry (struct wow_ckpt_seg), decoded: the segment's
 * life opened by record @seq (0: the segment is free), its newest record
 * @max_seq, @wp blocks written, @nr_tombs tombstones held; @closed: no
 * longer written.
 */
struct wow_ckpt_seg_info {
	u64 seq;
	u64 max_seq;
	u32 wp;
	u32 nr_tombs;
	bool closed;
};

/* A slot's 48-bit entry for @oblock: 0 when not @valid. */
u64 wow_ckpt_slot_encode(u64 oblock, bool valid, bool dirty);
/*
 * Decode slot entry @e into its parts: false when it is malformed (bits
 * past the entry, or dirty or addressed but not valid).  An empty slot
 * (0) decodes as not valid.
 */
bool wow_ckpt_slot_decode(u64 e, u64 *oblock, bool *valid, bool *dirty);
/*
 * Entry @entry of a slot table block of @bytes-byte entries
 * (wow_ckpt_slot_bytes): put from, or get into, @e.
 */
void wow_ckpt_slot_put(void *blk, u32 bytes, u32 entry,
		       const struct wow_ckpt_entry *e);
void wow_ckpt_slot_get(const void *blk, u32 bytes, u32 entry,
		       struct wow_ckpt_entry *e);
/* The crc32c a slot table block of @block_size bytes is checked against. */
u32 wow_ckpt_slot_block_csum(const void *blk, u32 block_size);
/* Seal segment stream block number @index of generation @gen: its trailer. */
void wow_ckpt_seal(void *blk, u32 block_size, u64 gen, u32 index);
/* True when @blk is segment stream block @index of generation @gen, intact. */
bool wow_ckpt_block_ok(const void *blk, u32 block_size, u64 gen, u32 index);
/*
 * Copy up to @len bytes between @data and the segment stream at byte
 * @pos, through @n blocks holding stream blocks from @first on (to the
 * blocks when @to_blocks).  Returns the bytes copied: fewer than @len
 * where the blocks end, 0 when @pos is outside them.
 */
u32 wow_ckpt_stream_copy(void *blocks, u32 block_size, u64 first, u32 n,
			 u64 pos, void *data, u32 len, bool to_blocks);
/* Encode @si as segment stream entry @e (every byte of it). */
void wow_ckpt_seg_encode(struct wow_ckpt_seg *e,
			 const struct wow_ckpt_seg_info *si);
/*
 * Decode segment stream entry @e into @si (filled whatever the verdict):
 * false when it is malformed for a checkpoint whose header says
 * @next_seq, of segments of @blocks_per_seg blocks: @wp past the segment,
 * @max_seq below @seq or not below @next_seq, state bits other than
 * WOW_CKPT_SEG_CLOSED, or a free segment (@seq 0) closed, written or
 * holding tombstones.
 */
bool wow_ckpt_seg_decode(const struct wow_ckpt_seg *e, u32 blocks_per_seg,
			 u64 next_seq, struct wow_ckpt_seg_info *si);
/* Encode @tr as tombstone entry @e of the segment stream. */
void wow_ckpt_tomb_encode(struct wow_tomb *e, const struct wow_tomb_range *tr);
/*
 * Decode tombstone entry @e of the segment stream into @tr (filled
 * whatever the verdict): false when it is malformed for a checkpoint
 * whose header says @next_seq: any flag set (a checkpoint holds no clean
 * marks), or @t not below @next_seq.
 */
bool wow_ckpt_tomb_decode(const struct wow_tomb *e, u64 next_seq,
			  struct wow_tomb_range *tr);
/* Encode @ci as the header block (all @block_size bytes) of cache @uuid. */
void wow_ckpt_header_encode(void *block, u32 block_size, const u8 *uuid,
			    const struct wow_ckpt_info *ci);
/* What a checkpoint header is (wow_ckpt_header_judge), in its order. */
enum wow_ckpt_hdr {
	WOW_CKPT_HDR_VALID,		/* a valid checkpoint of this cache */
	WOW_CKPT_HDR_FOREIGN,		/* another magic or uuid: not ours */
	WOW_CKPT_HDR_TORN,		/* ours; its version or checksum fails */
	WOW_CKPT_HDR_RETIRED,		/* whole but not valid */
	/* valid, but not this cache's: */
	WOW_CKPT_HDR_COUNTS,		/* its slot or segment count */
	WOW_CKPT_HDR_SLOT_BLOCKS,	/* its slot table size */
	WOW_CKPT_HDR_TOMBS,		/* more tombstones than the area holds */
	WOW_CKPT_HDR_SEG_BLOCKS,	/* its segment stream size */
	WOW_CKPT_HDR_SEQS,		/* completed_seq not below next_seq */
};

/*
 * Judge a checkpoint header: WOW_CKPT_HDR_VALID when it is a valid
 * checkpoint of the cache with @uuid and this geometry (@max_tombs:
 * wow_ckpt_max_tombs_v), else the first thing wrong, in the order above.
 * @ci is filled from any header with our magic, uuid and checksum.
 */
enum wow_ckpt_hdr wow_ckpt_header_judge(const void *block, u32 version,
					u32 block_size, const u8 *uuid,
					u64 nr_slots, u64 nr_segments,
					u64 max_tombs, struct wow_ckpt_info *ci);
/* wow_ckpt_header_judge(...) == WOW_CKPT_HDR_VALID */
bool wow_ckpt_header_decode(const void *block, u32 version, u32 block_size,
			    const u8 *uuid, u64 nr_slots, u64 nr_segments,
			    u64 max_tombs, struct wow_ckpt_info *ci);
/*
 * Replay: does a tombstone or clean mark with @t cover a checkpointed copy
 * whose segment life's newest record had seq @life_max (0: none)?
 */
bool wow_ckpt_covers(u64 life_max, u64 t);

/*
 * Format version 4 writes two areas in turn: a load starts from the
 * newest valid one.  Whether area 1 is that one, from whether each
 * header is valid (and fits the cache) and its generation.
 */
static inline bool wow_ckpt_pick_second(bool valid0, u64 gen0, bool valid1,
					u64 gen1)
{
	return valid1 && (!valid0 || gen1 > gen0);
}

#endif
