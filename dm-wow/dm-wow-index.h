/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow index: origin block -> cache slot (dm-wow-index.c).
 *
 * Part of the portable core: it includes dm-wow-types.h, not dm-wow.h,
 * so the module and the userspace tools (wowctl check, dump, writeback)
 * build dm-wow-index.c unchanged.  Pure bookkeeping: no locking (the
 * caller holds the cache's lock, or is alone: recovering, KUnit, the
 * tools), no allocation after wow_index_init, no I/O.
 */
#ifndef DM_WOW_INDEX_H
#define DM_WOW_INDEX_H

#include "dm-wow-types.h"

/*
 * An origin block number indexes the origin in block_size units; the
 * wrapper makes mixing it with a cache slot (u32) a compile-time error.
 */
typedef struct { u64 v; } oblock_t;

static inline oblock_t to_oblock(u64 v) { return (oblock_t){ v }; }
static inline u64 from_oblock(oblock_t b) { return b.v; }

#define WOW_NO_SLOT		U32_MAX
#define WOW_MAX_SLOTS		(U32_MAX - 1)

/* wow_slot.flags */
#define WOW_SLOT_VALID		0x0001	/* the current copy of its block */
#define WOW_SLOT_DIRTY		0x0002	/* not yet durable on the origin */
#define WOW_SLOT_DESTAGING	0x0004	/* a destage write is in flight */
#define WOW_SLOT_CRC		0x0008	/* crc is the block's (format 5) */
/* BAD: its data does not match crc: reads fail, never destaged or copied */
#define WOW_SLOT_BAD		0x0010

/*
 * 16 bytes: a 48-bit origin block, flags, the hash chain link, and the
 * crc32c of the block's data as its record has it (WOW_SLOT_CRC), so a
 * destage or a copy checks the very block it read.
 */
struct wow_slot {
	u32 ob_lo;
	u16 ob_hi;
	u16 flags;
	u32 next;
	u32 crc;
};

/* Slots and bucket heads per chunk: 2 MiB each. */
#define WOW_SLOT_CHUNK_SHIFT	17
#define WOW_HEAD_CHUNK_SHIFT	19

/*
 * What changed since a checkpoint area was last written: a bitmap per area
 * (track), a bit per 2^WOW_TRACK_SHIFT slots, set when a slot's entry in a
 * checkpoint's slot table (its block, VALID, DIRTY) may have changed.
 */
#define WOW_INDEX_TRACKS	2
#define WOW_TRACK_SHIFT		9

struct wow_index {
	u32 nr_slots;
	u32 nr_valid;
	unsigned int hash_bits;		/* 2^hash_bits buckets */
	u32 nr_slot_chunks;
	u32 nr_head_chunks;
	struct wow_slot **slot_chunks;
	u32 **head_chunks;
	u32 nr_track_bits;
	unsigned long *track[WOW_INDEX_TRACKS];
	/*
	 * while a checkpoint is written from the index (the log's): called
	 * before a slot's checkpoint entry changes, with the index's lock
	 */
	void (*before_change)(void *ctx, u32 slot);
	void *change_ctx;
};

static inline struct wow_slot *wow_slot_at(struct wow_index *ix, u32 slot)
{
	return &ix->slot_chunks[slot >> WOW_SLOT_CHUNK_SHIFT]
			       [slot & ((1U << WOW_SLOT_CHUNK_SHIFT) - 1)];
}

static inline u32 *wow_index_head(struct wow_index *ix, u32 bucket)
{
	return &ix->head_chunks[bucket >> WOW_HEAD_CHUNK_SHIFT]
			       [bucket & ((1U << WOW_HEAD_CHUNK_SHIFT) - 1)];
}

static inline oblock_t wow_slot_oblock(const struct wow_slot *sl)
{
	return to_oblock(((u64)sl->ob_hi << 32) | sl->ob_lo);
}

static inline void wow_slot_set_oblock(struct wow_slot *sl, oblock_t b)
{
	sl->ob_lo = lower_32_bits(from_oblock(b));
	sl->ob_hi = upper_32_bits(from_oblock(b));
}

static inline void wow_slot_clear(struct wow_slot *sl)
{
	sl->ob_lo = 0;
	sl->ob_hi = 0;
	sl->flags = 0;
	sl->next = WOW_NO_SLOT;
	sl->crc = 0;
}

/*
 * 2^hash_bits bucket heads for @nr_slots slots: a power of two, at most
 * half as many as slots (chains of two to four at a full cache).
 */
static inline unsigned int wow_index_hash_bits(u32 nr_slots)
{
	return nr_slots < 4 ? 0 : ilog2(nr_slots / 2);
}

int wow_index_init(struct wow_index *ix, u32 nr_slots);
void wow_index_exit(struct wow_index *ix);
u32 wow_index_lookup(struct wow_index *ix, oblock_t b);
u32 wow_index_insert(struct wow_index *ix, oblock_t b, u32 slot, u16 flags);
void wow_index_remove(struct wow_index *ix, u32 slot);
void wow_index_set_flags(struct wow_index *ix, u32 slot, u16 set, u16 clear);
void wow_index_set_crc(struct wow_index *ix, u32 slot, u32 crc);
u64 wow_index_bytes(const struct wow_index *ix);
int wow_index_count(struct wow_index *ix, u32 first, u32 n,
		    u32 blocks_per_seg, u64 *valid, u64 *dirty,
		    int (*count)(void *ctx, u32 slot, u32 seg, bool dirty),
		    void *ctx);
void wow_index_take_changes(struct wow_index *ix, unsigned int t,
			    unsigned long *to);
void wow_index_add_changes(struct wow_index *ix, unsigned int t,
			   const unsigned long *from);
void wow_index_mark_all(struct wow_index *ix, unsigned int t);
u64 wow_index_next_changed(const struct wow_index *ix,
			   const unsigned long *map, u64 slot);

/* Whether @map (a track's bits) names any of slots [@first, @first + @n). */
static inline bool wow_index_changed(const struct wow_index *ix,
				     const unsigned long *map, u64 first, u64 n)
{
	return n && wow_index_next_changed(ix, map, first) < first + n;
}

#endif /* DM_WOW_INDEX_H */
