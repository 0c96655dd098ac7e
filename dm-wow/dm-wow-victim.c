// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow victim choice: which closed segment cleaning frees next.
 *
 * Cleaning frees a segment by copying its dirty blocks forward to the log
 * head and dropping its clean ones, so the cost of a victim is its dirty
 * blocks (read once, written once) and the benefit is the space it gives
 * back.  As in the LFS cleaner, benefit is weighed by age: a segment whose
 * newest record is old holds cold data that will not die by itself soon,
 * while a young segment's blocks are still being overwritten and cleaning
 * it now copies data about to die.  With u the dirty share of the segment:
 *
 *	score = (1 - u) * age / (1 + u)
 *
 * A segment with no dirty block costs nothing but a tombstone record: it
 * beats every segment that needs copying, and of those the oldest wins.
 *
 * Lazy recycling (the RWStore seed's threshold): outside an emergency a
 * segment is a victim only when at least min_free_pct of it comes free, so
 * cleaning always gives back whole runs of space and never copies a nearly
 * full segment to gain a few blocks.  When free space is at the reserve
 * (urgent), any segment that gains at least 1/16 of its blocks qualifies.
 *
 * Pure arithmetic: no locking, no allocation, no I/O.  KUnit drives it.
 */
#include "dm-wow.h"
#include "dm-wow-victim.h"

/* Ages are capped so that the score's products cannot overflow. */
#define WOW_VICTIM_MAX_AGE	BIT_ULL(32)
/* Above every score of a segment with dirty blocks (2^10 * 2^32 + 1). */
#define WOW_VICTIM_FREE_SCORE	BIT_ULL(43)

bool wow_victim_eligible(const struct wow_seg_usage *u, u32 blocks,
			 u32 min_free_pct, bool urgent)
{
	u32 gain;

	if (!blocks || u->nr_dirty >= blocks)
		return false;
	gain = blocks - u->nr_dirty;
	if (urgent)
		return gain >= max(blocks / 16, 1U);
	return (u64)gain * 100 >= (u64)min_free_pct * blocks;
}

u64 wow_victim_score(const struct wow_seg_usage *u, u32 blocks)
{
	u64 age = min(u->age, WOW_VICTIM_MAX_AGE) + 1;

	if (!blocks || u->nr_dirty >= blocks)
		return 0;
	if (!u->nr_dirty)
		return WOW_VICTIM_FREE_SCORE + age;
	/* (blocks - dirty) / (blocks + dirty), in 1/1024, times age */
	return div_u64((u64)(blocks - u->nr_dirty) << 10,
		       blocks + u->nr_dirty) * age + 1;
}

void wow_victim_pick_init(struct wow_victim_pick *p)
{
	p->seg = WOW_NO_SEG;
	p->score = 0;
	p->nr_dirty = 0;
}

/*
 * Offer segment @seg to the choice.  Of equal scores the one with fewer
 * dirty blocks wins, then the first offered.
 */
void wow_victim_consider(struct wow_victim_pick *p, u32 seg,
			 const struct wow_seg_usage *u, u32 blocks,
			 u32 min_free_pct, bool urgent)
{
	u64 score;

	if (!wow_victim_eligible(u, blocks, min_free_pct, urgent))
		return;
	score = wow_victim_score(u, blocks);
	if (p->seg != WOW_NO_SEG &&
	    (score < p->score ||
	     (score == p->score && u->nr_dirty >= p->nr_dirty)))
		return;
	p->seg = seg;
	p->score = score;
	p->nr_dirty = u->nr_dirty;
}
