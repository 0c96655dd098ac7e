/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow victim choice (dm-wow-victim.c): which closed segment cleaning
 * frees next, scored as the LFS cleaner does (cost-benefit with age), and
 * lazily (only a segment that gives back enough).  Pure arithmetic on
 * plain numbers: no lock, no allocation, no I/O; cleaning calls it under
 * its own lock.
 */
#ifndef DM_WOW_VICTIM_H
#define DM_WOW_VICTIM_H

#include "dm-wow.h"

/* What cleaning knows of one closed segment. */
struct wow_seg_usage {
	u32 nr_dirty;		/* blocks to copy forward */
	u64 age;		/* records appended since its newest one */
};

/* The best victim offered so far. */
struct wow_victim_pick {
	u32 seg;		/* WOW_NO_SEG: none */
	u32 nr_dirty;
	u64 score;
};

/*
 * May a segment of @blocks blocks, @u, be freed now: at least
 * @min_free_pct of it comes free, or when @urgent (free space at the
 * reserve) at least 1/16 of it?
 */
bool wow_victim_eligible(const struct wow_seg_usage *u, u32 blocks,
			 u32 min_free_pct, bool urgent);

/*
 * Its score, (1 - u) * age / (1 + u) with u its dirty share, scaled;
 * a segment with no dirty block beats every other.
 */
u64 wow_victim_score(const struct wow_seg_usage *u, u32 blocks);

/*
 * A choice: start it empty, offer each segment (one not eligible is
 * passed over; of equal scores the one with fewer dirty blocks wins, then
 * the first offered), read p->seg.
 */
void wow_victim_pick_init(struct wow_victim_pick *p);
void wow_victim_consider(struct wow_victim_pick *p, u32 seg,
			 const struct wow_seg_usage *u, u32 blocks,
			 u32 min_free_pct, bool urgent);

#endif /* DM_WOW_VICTIM_H */
