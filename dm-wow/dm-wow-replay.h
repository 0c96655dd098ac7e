/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow replay: what a record replayed after a checkpoint does to the
 * index and the segments (dm-wow-replay.c).  Its copies become the newest
 * of their blocks, dirty; a record at block 0 of a segment starts a new
 * life, and the old one's copies are gone; its tombstones kill, and its
 * clean marks clean, the copies they cover, as the scan would: a replayed
 * copy when its seq <= t, a checkpointed one when wow_ckpt_covers says so
 * for its segment's checkpointed life.  Which record comes next is
 * dm-wow-chain.c's decision; this file is what the chain's apply does.
 *
 * Part of the portable core: it includes dm-wow-types.h and other pure
 * headers only, so the module (dm-wow-recover.c) and the userspace tools
 * (wowcache.c) build it unchanged.  It changes the index and the segments
 * only through struct wow_replay_ops, the caller's; so KUnit drives it on
 * plain arrays (tests/replay_kunit.c).
 *
 * Contracts, for every call below: pure but for the ops and its own
 * memory (kvmalloc/kvfree, GFP_KERNEL: may sleep, so process context);
 * locking: none (recovery runs before the device is live; the ops take
 * whatever lock they need).
 */
#ifndef DM_WOW_REPLAY_H
#define DM_WOW_REPLAY_H

#include "dm-wow-types.h"
#include "dm-wow-chain.h"
#include "dm-wow-tombs.h"

/* The effects of a replay: the caller's (the cache; wowctl's view; KUnit). */
struct wow_replay_ops {
	/* the slot that holds origin block @b now: true, *@slot; or false */
	bool (*lookup)(void *ctx, u64 b, u32 *slot);
	/* does slot @slot hold a valid copy?  Then of origin block *@b */
	bool (*valid)(void *ctx, u32 slot, u64 *b);
	/* slot @slot (free in the index) now holds @b's newest copy, dirty */
	void (*insert)(void *ctx, u64 b, u32 slot);
	/* slot @slot's copy leaves the index */
	void (*remove)(void *ctx, u32 slot);
	/* slot @slot's copy is clean (destaged) */
	void (*clean)(void *ctx, u32 slot);
	/* optional: slot @slot's copy has block crc @crc (WOW_REC_CRCS) */
	void (*set_crc)(void *ctx, u32 slot, u32 crc);
	/* seq of the replayed record slot @slot's copy came from; 0: none */
	u64 (*seq)(void *ctx, u32 slot);
	/*
	 * Slot @slot's copy came from record @seq (0: forget it); 0 or
	 * -errno.  Setting 0 never fails.
	 */
	int (*set_seq)(void *ctx, u32 slot, u64 seq);
	/*
	 * The newest seq of segment @s's life as the checkpoint loaded it;
	 * 0 when it holds no checkpointed life.  Asked once per segment, by
	 * wow_replay_init.
	 */
	u64 (*ckpt_max)(void *ctx, u32 s);
	/* segment @s starts a new life of seq @seq: empty, no tombstones */
	void (*new_life)(void *ctx, u32 s, u64 seq);
	/* room for @n more tombstones of segment @s: 0 or -errno */
	int (*reserve_tombs)(void *ctx, u32 s, u32 n);
	/* segment @s holds tombstone @t (room reserved) */
	void (*add_tomb)(void *ctx, u32 s, const struct wow_tomb_range *t);
	/* segment @s's newest record is @seq; its next free block @wp */
	void (*written)(void *ctx, u32 s, u64 seq, u32 wp);
	/*
	 * Optional: tombstone or clean mark @t did not cover slot @slot's
	 * checkpointed copy, whose segment still holds its checkpointed life
	 * (the copy may be older than @t or not: the checkpoint does not
	 * say).  wowctl check notes these; the kernel keeps the copy.
	 */
	void (*uncovered)(void *ctx, u32 slot, const struct wow_tomb_range *t);
};

struct wow_replay {
	u32 nr_segments;
	u32 blocks_per_seg;
	u32 nr_slots;		/* nr_segments * blocks_per_seg */
	u64 nr_oblocks;		/* origin blocks: a record past them fails */
	const struct wow_replay_ops *ops;
	void *ctx;
	/* private to dm-wow-replay.c */
	u64 *ckpt_max;		/* per segment: see ops->ckpt_max */
};

/*
 * Set up @rp (its geometry, ops and ctx filled in by the caller): asks
 * ops->ckpt_max of every segment.  0 or -ENOMEM; either way
 * wow_replay_free frees it.
 */
int wow_replay_init(struct wow_replay *rp);

/* Free what wow_replay_init allocated; @rp may be zeroed, never set up. */
void wow_replay_free(struct wow_replay *rp);

/*
 * Apply the record at block @off of segment @s: header @hdr (checked:
 * wow_record_check said ours and whole, its data checked), @ri decoded
 * from it.  At block 0 a new life of the segment begins first.  Then its
 * copies are the newest of their blocks (dirty, with their crcs), then
 * its tombstones are added to the segment and kill, and its clean marks
 * clean, what they cover; the segment's written state follows the
 * record.  0; -EUCLEAN when an origin block is past the origin's end
 * (nothing of the record applied, but a new life begun); or an op's
 * -errno.
 */
int wow_replay_apply(struct wow_replay *rp, u32 s, u32 off, const void *hdr,
		     const struct wow_record_info *ri);

/*
 * Apply tombstone or clean mark @t alone (as wow_replay_apply does for
 * each of a record's): a range no longer than the slots by index lookups,
 * a longer one by a walk of every slot.  Both reach the same copies.
 */
void wow_replay_tomb(struct wow_replay *rp, const struct wow_tomb_range *t);

#endif
