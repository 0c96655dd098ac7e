/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow tombstones (dm-wow-tombs.c): how long one is needed, and their
 * envelope at recovery.
 *
 * Part of the portable core: pure (no locking, no allocation, no I/O, any
 * context), built unchanged by the module and the userspace tools
 * (dm-wow-types.h).
 */
#ifndef DM_WOW_TOMBS_H
#define DM_WOW_TOMBS_H

#include "dm-wow-types.h"
#include "dm-wow-format.h"

/* The largest origin block a slot entry names. */
#define WOW_MAX_OBLOCK		WOW_CKPT_OBLOCK_MASK

/* A tombstone range in memory: kills records of [start, start+nr) <= t. */
struct wow_tomb_range {
	u64 start;
	u64 t;
	u32 nr;
	u32 flags;		/* WOW_TOMB_CLEAN */
};

/* A record header's tombstone @t, decoded. */
static inline struct wow_tomb_range wow_tomb_decode(const struct wow_tomb *t)
{
	return (struct wow_tomb_range){
		.start = le64_to_cpu(t->start),
		.t = le64_to_cpu(t->t),
		.nr = le32_to_cpu(t->nr),
		.flags = le32_to_cpu(t->flags),
	};
}

/*
 * A walk over the segments, pass after pass (wow_life_pass_visit): the
 * lower bound of the oldest segment life on the device and the tombstones
 * held, as the last whole pass saw them, and the pass under way.
 */
struct wow_life_pass {
	u64 bound;
	u64 held;
	u64 pass_min;
	u64 pass_held;
	u32 seen;
};

/*
 * The oldest life of a segment a power cut now could leave: @seq opened
 * its current life, @prev_seq the one it replaced (0: none), @durable_seq
 * the log's durable seq.  0 when the segment never held a record.
 */
u64 wow_seg_disk_seq(u64 seq, u64 prev_seq, u64 durable_seq);
/*
 * The oldest of those over @nr_segments segments (@life gives segment s's
 * seq and sets its @prev_seq; @durable_seq as above): the bound below
 * which a held tombstone is needed no more.  U64_MAX when no segment
 * holds a life.  The module's segments (wow_seg_min_disk_seq) and the
 * tools' view both take it.
 */
u64 wow_seg_min_life(u32 nr_segments, u64 durable_seq,
		     u64 (*life)(void *ctx, u32 s, u64 *prev_seq), void *ctx);

/* What a segment is after a load (wow_seg_load_fate). */
enum wow_seg_fate {
	WOW_SEG_FATE_EMPTY,	/* never held a record: free, first */
	WOW_SEG_FATE_DEAD,	/* nothing current, no tombstone: free */
	WOW_SEG_FATE_CLOSED,	/* a current block or a tombstone: closed */
};

/*
 * After a load: segment life @seq (0: none) with @nr_valid current
 * blocks and @nr_tombs held tombstones is empty, dead or closed.  The
 * module's load (wow_seg_load_done) and the tools' view both ask it.
 */
enum wow_seg_fate wow_seg_load_fate(u64 seq, u64 nr_valid, u32 nr_tombs);
/* Start a walk whose published bound starts at @bound (0: keep all). */
void wow_life_pass_init(struct wow_life_pass *p, u64 bound);
/*
 * Visit one segment of @nr_segments (@disk_seq its oldest life, 0: none;
 * @nr_tombs the tombstones it holds; @next_seq the log's next seq).  True
 * when the visit ended a pass: then @p->bound (never lowered) and
 * @p->held are published.
 */
bool wow_life_pass_visit(struct wow_life_pass *p, u32 nr_segments,
			 u64 next_seq, u64 disk_seq, u32 nr_tombs);
/*
 * The envelope of @n ranges @r (sorted by start in place): at most 2 * @n
 * disjoint pieces in @out, ascending, each with the largest t of the
 * ranges covering it.  Empty ranges and ranges starting past
 * WOW_MAX_OBLOCK are ignored.  @heap: scratch for @n entries.  Returns
 * the number of pieces.  O(n log n).
 */
u32 wow_tomb_envelope(struct wow_tomb_range *r, u32 n,
		      struct wow_tomb_range *out, u32 *heap);
/* The piece of envelope @env (@n pieces) covering block @b, or NULL. */
const struct wow_tomb_range *wow_tomb_find(const struct wow_tomb_range *env,
					   u32 n, u64 b);

/* A tombstone held by a segment whose life began at @seg_seq. */
struct wow_tomb_ref {
	struct wow_tomb_range *tr;
	u64 seg_seq;
};

#define WOW_TOMB_DROP		0x80000000U	/* in memory only */

/*
 * At load: which held tombstones no record on the device can need any
 * more: those below @min (the oldest life on the device, as the caller
 * counts it), and the copies of one that reclaim carried forward (the
 * newest holder keeps it).  Sorts @refs (@n) and sets WOW_TOMB_DROP in
 * the flags of each to drop; the caller takes them out.
 */
void wow_tomb_prune(struct wow_tomb_ref *refs, u32 n, u64 min);

/* One segment's held tombstones, as wow_tomb_prune_held asks for them. */
struct wow_tomb_held {
	struct wow_tomb_range *tombs;
	u32 *nr;		/* how many; lowered by the prune */
	u64 seg_seq;		/* the segment life's first seq (0: none) */
};

/*
 * At load: wow_tomb_prune over the tombstones every segment holds (@held
 * says segment s's, for each s below @nr_segments), and those it drops
 * taken out, the rest kept in their order.  The module's segments and the
 * tools' offline view both prune with it.  0, or -ENOMEM (allocates:
 * may sleep).
 */
int wow_tomb_prune_held(u32 nr_segments, u64 min,
			void (*held)(void *ctx, u32 s, struct wow_tomb_held *h),
			void *ctx);

#endif
