/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow destage policies.
 *
 * The origin is cut into aligned write groups of blocks_per_group blocks.
 * Which blocks are dirty is the index's to know: the policy asks its source
 * (wow_policy_src.dirty: the current cached copy of a block is dirty) and
 * keeps, per origin group, two bits in dense bitmaps cut into chunks: the
 * group has dirty or busy blocks (the map the sweep walks), and wow's
 * recency bit.  A block whose destage write (or cleaning copy) is in flight
 * is busy: a node per busy group holds their bitmap, so that a block is
 * never handed out twice at once, and a block re-dirtied while busy becomes
 * eligible again only when its destage is done.  lrw, a baseline, asks the
 * source for the dirty blocks in the order they were written
 * (wow_policy_src.older: the log's own order) and keeps nothing of its own.
 *
 * Memory: 2 bits per origin group (2 MiB per TiB of origin at 128 KiB
 * groups), in chunks of 1 MiB; a node per busy group (bounded by the I/O
 * in flight), whatever the policy.
 *
 * Policies differ only in which group they destage next (the ops table);
 * each run handed out is a range of contiguous eligible blocks inside one
 * group.  Nothing here blocks, allocates (but at init) or sees a bio:
 * nodes come from a spare list the caller refills (wow_policy_add_spare)
 * outside its lock, so KUnit drives the policies with plain numbers.
 *
 * Locking: none here; the caller serialises every call (dm-wow holds
 * wc->lock, and the source's dirty() runs under it).
 */
#ifndef DM_WOW_POLICY_H
#define DM_WOW_POLICY_H

#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/types.h>

/* A busy group. */
struct wow_group {
	struct rb_node node;		/* in wow_policy.groups, by gno */
	struct list_head lru;		/* on the spare list */
	u64 gno;
	u32 nr_busy;			/* bits set in busy */
	unsigned long busy[];		/* blocks being destaged */
};

/* One bit per origin group, in chunks (no large allocation). */
struct wow_gbits {
	unsigned long **chunk;
	u32 nr_chunks;
	u64 nr_bits;
};

struct wow_policy;

/*
 * Which writes continue a sequential stream, and how long the stream is:
 * for note_write's @sequential and for sequential_cutoff.  Where the last
 * WOW_STREAMS streams ended and how many blocks each has written, the
 * most recent first.  One end for the whole device would lose every
 * stream as soon as two run at once (a log beside random writes): each
 * write of a stream would then set its group's recency bit, and no stream
 * would ever reach the cutoff.
 */
#define WOW_STREAMS		16
#define WOW_STREAM_SLACK	8	/* blocks a write may land off the end */

struct wow_streams {
	u64 end[WOW_STREAMS];
	u64 len[WOW_STREAMS];		/* blocks written in the stream */
	u32 nr;
};

/* *pos for wow_policy_src.older: from the least recently written. */
#define WOW_POLICY_OLDEST	U64_MAX

struct wow_policy_src {
	/* is the current cached copy of @oblock dirty? */
	bool (*dirty)(void *ctx, u64 oblock);
	/*
	 * lrw: the next dirty block in the order the blocks were last
	 * written, after *@pos (WOW_POLICY_OLDEST: the least recently
	 * written), leaving out blocks a destage or copy holds: its origin
	 * block in *@oblock, its place in *@pos.  false: no more.
	 */
	bool (*older)(void *ctx, u64 *pos, u64 *oblock);
	void *ctx;
};

struct wow_policy_ops {
	const char *name;
	/* a write hit group @gno; @hit: the group was already dirty */
	void (*note_write)(struct wow_policy *p, u64 gno, bool hit,
			   bool sequential);
	/* the next group to destage from (false: none); may move the hand */
	bool (*pick)(struct wow_policy *p, u64 *gno);
	/* a hand sweeps the groups: it finishes the group it opened */
	bool sweeps;
};

struct wow_policy_stats {
	u64 runs;			/* runs handed out */
	u64 run_blocks;			/* blocks in them */
	u64 recency_skips;		/* wow: groups skipped by the hand */
	u64 sweeps;			/* times the hand wrapped */
};

struct wow_policy {
	const struct wow_policy_ops *ops;
	struct wow_policy_src src;
	struct wow_gbits dirty;		/* groups with dirty or busy blocks */
	struct wow_gbits recent;	/* wow: re-written since the hand passed */
	struct rb_root groups;		/* busy groups */
	struct list_head spare;
	u32 nr_spare;
	u32 blocks_per_group;
	u32 group_shift;		/* log2(blocks_per_group) */
	u64 nr_gnos;			/* groups of the origin */
	u64 nr_groups;			/* groups with dirty or busy blocks */
	u64 nr_busy;			/* blocks being destaged */
	u64 nr_recency;			/* groups with the recency bit set */
	u64 hand;			/* group number the hand stands at */
	/*
	 * wow, cscan: the hand is destaging its group (hand_open) and has
	 * handed out its blocks below hand_bit.  The sweep finishes the
	 * group, from hand_bit up, before it moves on, whatever the group's
	 * recency bit: the WOW paper destages a group as one unit, so a
	 * write that hits the group between two of its runs must not send
	 * the hand on with the group half destaged.
	 */
	bool hand_open;
	u32 hand_bit;
	bool drain;			/* destage all: set no recency bits */
	struct wow_policy_stats stats;
};

/*
 * Destage rate thresholds, in basis points (1/100 %) of dirty occupancy.
 * The configured pair is where they start; the current pair adapts.
 */
struct wow_thresholds {
	u32 cfg_low;
	u32 cfg_high;
	u32 low;
	u32 high;
};

#define WOW_MIN_HIGH_BP		1000	/* never below 10% of the cache */

void wow_thresholds_init(struct wow_thresholds *t, u32 low_pct, u32 high_pct);
u32 wow_rate(u64 occupancy_bp, const struct wow_thresholds *t, u32 max_ios);
void wow_thresholds_adapt(struct wow_thresholds *t, u32 peak_bp);

extern const struct wow_policy_ops wow_policy_wow_ops;
extern const struct wow_policy_ops wow_policy_cscan_ops;
extern const struct wow_policy_ops wow_policy_lrw_ops;

int wow_policy_init(struct wow_policy *p, const struct wow_policy_ops *ops,
		    u32 blocks_per_group, u64 nr_oblocks,
		    const struct wow_policy_src *src);
void wow_policy_exit(struct wow_policy *p);
size_t wow_policy_group_bytes(const struct wow_policy *p);
size_t wow_policy_map_bytes(const struct wow_policy *p);
/* Spare nodes to add so that @n node-taking calls cannot fail. */
u32 wow_policy_spares_wanted(const struct wow_policy *p, u32 n);
void wow_policy_add_spare(struct wow_policy *p, struct wow_group *g);
void wow_policy_trim_spares(struct wow_policy *p, u32 keep,
			    struct list_head *out);

int wow_policy_note_write(struct wow_policy *p, u64 oblock, u32 nr,
			  bool sequential);
u64 wow_streams_note(struct wow_streams *s, u64 oblock, u32 nr);
int wow_policy_mark_dirty(struct wow_policy *p, u64 oblock);
void wow_policy_forget(struct wow_policy *p, u64 oblock);
bool wow_policy_busy(struct wow_policy *p, u64 oblock);
u32 wow_policy_next_run(struct wow_policy *p, u64 *start, u32 max);
u32 wow_policy_claim(struct wow_policy *p, u64 start, u32 max);
bool wow_policy_hold(struct wow_policy *p, u64 oblock);
void wow_policy_run_done(struct wow_policy *p, u64 start, u32 nr);
void wow_policy_set_drain(struct wow_policy *p, bool drain);
void wow_policy_clear_stats(struct wow_policy *p);

#endif /* DM_WOW_POLICY_H */
