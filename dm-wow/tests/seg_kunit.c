// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for dm-wow's segments (dm-wow-seg.c) on a cache struct of a
 * few segments and nothing else: the free list's order, the log head's
 * opening (the reserve, the chain rule, a segment on the replay's chain),
 * closing, the oldest life on the device, the walk's pruning, and the
 * marks a background checkpoint's snapshot copies by.
 *
 * The segment table is opaque: dm-wow-seg.c includes this file (when
 * CONFIG_DM_WOW_KUNIT_TEST is set), so the tests see inside it.
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "../dm-wow.h"
#include "../dm-wow-seg.h"

#define NSEG 6

static struct wow_cache *seg_cache(struct kunit *test)
{
	struct wow_cache *wc = kunit_kzalloc(test, sizeof(*wc), GFP_KERNEL);
	u32 s;

	KUNIT_ASSERT_NOT_NULL(test, wc);
	wc->segs = kunit_kzalloc(test, sizeof(*wc->segs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wc->segs);
	wc->segs->table = kunit_kcalloc(test, NSEG, sizeof(*wc->segs->table),
					GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wc->segs->table);
	wc->segs->changed = kunit_kcalloc(test, BITS_TO_LONGS(NSEG),
					  sizeof(unsigned long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wc->segs->changed);
	spin_lock_init(&wc->lock);
	wc->nr_segments = NSEG;
	wc->blocks_per_seg = 8;
	wc->nr_slots = NSEG * 8;
	wc->segs->open = WOW_NO_SEG;
	wc->segs->lrw_cursor = WOW_NO_SLOT;
	wc->chain_next = WOW_NO_SEG;
	INIT_LIST_HEAD(&wc->segs->free);
	INIT_LIST_HEAD(&wc->segs->order);
	for (s = 0; s < NSEG; s++) {
		INIT_LIST_HEAD(&wc->segs->table[s].list);
		INIT_LIST_HEAD(&wc->segs->table[s].order);
	}
	return wc;
}

/* Free the segments in this order (as recovery and cleaning do). */
static void free_in(struct wow_cache *wc, const u32 *order, u32 n)
{
	u32 i;

	spin_lock_irq(&wc->lock);
	for (i = 0; i < n; i++)
		wow_seg_free_add(wc, order[i]);
	spin_unlock_irq(&wc->lock);
}

static bool seg_open(struct wow_cache *wc, bool reserve, u64 seq)
{
	bool ok;

	spin_lock_irq(&wc->lock);
	ok = wow_seg_open(wc, reserve, seq);
	spin_unlock_irq(&wc->lock);
	return ok;
}

static void seg_close_all(struct wow_cache *wc)
{
	spin_lock_irq(&wc->lock);
	if (wc->segs->open != WOW_NO_SEG)
		wc->segs->table[wc->segs->open].wp = wc->blocks_per_seg;
	wow_seg_close_if_short(wc, 1);
	spin_unlock_irq(&wc->lock);
}

/* Segments are opened from the free list's head, freed to its tail. */
static void wow_seg_fifo(struct kunit *test)
{
	static const u32 order[] = { 2, 0, 3, 1, 5, 4 };
	struct wow_cache *wc = seg_cache(test);

	free_in(wc, order, NSEG);
	KUNIT_EXPECT_EQ(test, wc->segs->nr_free, NSEG);
	spin_lock_irq(&wc->lock);
	KUNIT_EXPECT_EQ(test, wow_seg_next_free(wc), 2U);
	spin_unlock_irq(&wc->lock);
	KUNIT_ASSERT_TRUE(test, seg_open(wc, false, 10));
	KUNIT_EXPECT_EQ(test, wc->segs->open, 2U);
	KUNIT_EXPECT_EQ(test, wc->segs->table[2].state, WOW_SEG_OPEN);
	KUNIT_EXPECT_EQ(test, wc->segs->table[2].seq, 10ULL);
	KUNIT_EXPECT_EQ(test, wc->segs->nr_free, NSEG - 1);
	/* open already: a second call keeps it */
	KUNIT_EXPECT_TRUE(test, seg_open(wc, false, 11));
	KUNIT_EXPECT_EQ(test, wc->segs->open, 2U);
	seg_close_all(wc);
	KUNIT_EXPECT_EQ(test, wc->segs->table[2].state, WOW_SEG_CLOSED);
	KUNIT_EXPECT_EQ(test, wc->segs->open, WOW_NO_SEG);
	KUNIT_ASSERT_TRUE(test, seg_open(wc, false, 12));
	KUNIT_EXPECT_EQ(test, wc->segs->open, 0U);
	/* freed again: to the tail, out of the write order */
	seg_close_all(wc);
	free_in(wc, order, 1);
	KUNIT_EXPECT_EQ(test, wc->segs->table[2].state, WOW_SEG_FREE);
	KUNIT_EXPECT_TRUE(test, list_empty(&wc->segs->table[2].order));
	KUNIT_EXPECT_EQ(test, list_last_entry(&wc->segs->free,
					      struct wow_segment, list) -
			      wc->segs->table, 2);
}

/* A segment closes only when what is asked does not fit. */
static void wow_seg_close_short(struct kunit *test)
{
	static const u32 order[] = { 0, 1, 2, 3, 4, 5 };
	struct wow_cache *wc = seg_cache(test);

	free_in(wc, order, NSEG);
	KUNIT_ASSERT_TRUE(test, seg_open(wc, false, 1));
	wc->segs->table[0].wp = 5;
	spin_lock_irq(&wc->lock);
	wow_seg_close_if_short(wc, 3);
	KUNIT_EXPECT_EQ(test, wc->segs->open, 0U);
	wow_seg_close_if_short(wc, 4);
	spin_unlock_irq(&wc->lock);
	KUNIT_EXPECT_EQ(test, wc->segs->open, WOW_NO_SEG);
	KUNIT_EXPECT_EQ(test, wc->segs->table[0].state, WOW_SEG_CLOSED);
}

/* The last WOW_RESERVE_SEGMENTS free segments are reclaim's alone. */
static void wow_seg_reserve(struct kunit *test)
{
	static const u32 order[] = { 0, 1, 2 };
	struct wow_cache *wc = seg_cache(test);

	free_in(wc, order, 3);
	KUNIT_ASSERT_TRUE(test, seg_open(wc, false, 1));
	KUNIT_EXPECT_FALSE(test, wc->segs->open_reserved);
	seg_close_all(wc);
	KUNIT_EXPECT_EQ(test, wc->segs->nr_free, WOW_RESERVE_SEGMENTS);
	KUNIT_EXPECT_FALSE(test, seg_open(wc, false, 2));
	KUNIT_ASSERT_TRUE(test, seg_open(wc, true, 2));
	KUNIT_EXPECT_TRUE(test, wc->segs->open_reserved);
	seg_close_all(wc);
	KUNIT_ASSERT_TRUE(test, seg_open(wc, true, 3));
	seg_close_all(wc);
	KUNIT_EXPECT_FALSE(test, seg_open(wc, true, 4));
}

/*
 * With a checkpoint, only the segment the chain names opens, and not one
 * whose records the replay from a checkpoint still reads: a checkpoint
 * is wanted first.
 */
static void wow_seg_chain_rule(struct kunit *test)
{
	static const u32 order[] = { 3, 4, 5, 0 };
	struct wow_cache *wc = seg_cache(test);

	free_in(wc, order, 4);
	wc->segs->ckpt_seq = 20;
	wc->segs->ckpt_head = 1;
	wc->chain_next = 4;		/* not the free list's head (3) */
	KUNIT_EXPECT_FALSE(test, seg_open(wc, false, 30));
	KUNIT_EXPECT_TRUE(test, wc->segs->ckpt_wanted);
	wc->segs->ckpt_wanted = false;
	wc->chain_next = 3;
	wc->segs->table[3].seq = 12;
	/* a record at or after the checkpoint */
	wc->segs->table[3].max_seq = 21;
	KUNIT_EXPECT_FALSE(test, seg_open(wc, false, 30));
	KUNIT_EXPECT_TRUE(test, wc->segs->ckpt_wanted);
	wc->segs->ckpt_wanted = false;
	wc->segs->table[3].max_seq = 19;
	KUNIT_EXPECT_TRUE(test, seg_open(wc, false, 30));
	KUNIT_EXPECT_EQ(test, wc->segs->open, 3U);
	/* its earlier life counts until the new one's first record is durable */
	KUNIT_EXPECT_EQ(test, wc->segs->table[3].prev_seq, 12ULL);
	spin_lock_irq(&wc->lock);
	KUNIT_EXPECT_TRUE(test, wow_seg_on_chain(wc, 1));	/* the head */
	spin_unlock_irq(&wc->lock);
}

/*
 * The chain the checkpoints set: the one before stays on it only when
 * kept (version 4, its chain reaching the log head), and a cleared chain
 * lets any segment reopen.
 */
static void wow_seg_chain_moves(struct kunit *test)
{
	struct wow_cache *wc = seg_cache(test);

	wc->segs->table[2].seq = 5;	/* a life before either checkpoint */
	wc->segs->table[3].seq = 25;	/* after the first, before the second */
	spin_lock_irq(&wc->lock);
	KUNIT_EXPECT_FALSE(test, wow_seg_has_chain(wc));
	wow_seg_chain_start(wc, 20, 1, false);
	KUNIT_EXPECT_TRUE(test, wow_seg_has_chain(wc));
	KUNIT_EXPECT_TRUE(test, wow_seg_on_chain(wc, 1));
	KUNIT_EXPECT_TRUE(test, wow_seg_on_chain(wc, 3));
	KUNIT_EXPECT_FALSE(test, wow_seg_on_chain(wc, 2));
	/* kept: the first one's chain still counts */
	wow_seg_chain_start(wc, 30, 4, true);
	KUNIT_EXPECT_TRUE(test, wow_seg_on_chain(wc, 1));
	KUNIT_EXPECT_TRUE(test, wow_seg_on_chain(wc, 3));
	KUNIT_EXPECT_TRUE(test, wow_seg_on_chain(wc, 4));
	/* not kept: only the newest */
	wow_seg_chain_start(wc, 40, 5, false);
	KUNIT_EXPECT_FALSE(test, wow_seg_on_chain(wc, 1));
	KUNIT_EXPECT_FALSE(test, wow_seg_on_chain(wc, 3));
	KUNIT_EXPECT_TRUE(test, wow_seg_on_chain(wc, 5));
	wc->segs->ckpt_wanted = true;
	wow_seg_chain_clear(wc);
	KUNIT_EXPECT_FALSE(test, wow_seg_has_chain(wc));
	KUNIT_EXPECT_FALSE(test, wow_seg_on_chain(wc, 5));
	KUNIT_EXPECT_FALSE(test, wow_seg_ckpt_wanted(wc));
	spin_unlock_irq(&wc->lock);
}

/* The oldest life on the device, with a reused segment's earlier one. */
static void wow_seg_min_disk(struct kunit *test)
{
	struct wow_cache *wc = seg_cache(test);

	wc->segs->table[0].seq = 40;
	wc->segs->table[0].prev_seq = 7;
	wc->segs->table[1].seq = 25;
	wc->durable_seq = 39;
	KUNIT_EXPECT_EQ(test, wow_seg_min_disk_seq(wc), 7ULL);
	wc->durable_seq = 40;
	KUNIT_EXPECT_EQ(test, wow_seg_min_disk_seq(wc), 25ULL);
	wc->segs->table[1].seq = 0;
	KUNIT_EXPECT_EQ(test, wow_seg_min_disk_seq(wc), 40ULL);
}

/*
 * The walk drops tombstones below the last pass's bound, except while a
 * checkpoint reads the lists or from a segment whose record carries them.
 */
static void wow_seg_visit_prunes(struct kunit *test)
{
	struct wow_tomb_range *t;
	struct wow_cache *wc = seg_cache(test);
	u32 s;

	for (s = 0; s < 3; s++) {
		t = kunit_kcalloc(test, 3, sizeof(*t), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, t);
		t[0].t = 5;
		t[1].t = 50;
		t[2].t = 9;
		wc->segs->table[s].tombs = t;
		wc->segs->table[s].nr_tombs = 3;
		wc->segs->table[s].max_tombs = 3;
		wc->segs->table[s].state = WOW_SEG_CLOSED;
	}
	wc->segs->table[1].state = WOW_SEG_FREEING;
	wow_life_pass_init(&wc->segs->life_pass, 10);
	wc->next_seq = 100;
	spin_lock_irq(&wc->lock);
	wow_seg_visit(wc, 0);
	wow_seg_visit(wc, 1);
	wc->segs->ckpt_reading = true;
	wow_seg_visit(wc, 2);
	wc->segs->ckpt_reading = false;
	spin_unlock_irq(&wc->lock);
	KUNIT_EXPECT_EQ(test, wc->segs->table[0].nr_tombs, 1U);
	KUNIT_EXPECT_EQ(test, wc->segs->table[0].tombs[0].t, 50ULL);
	KUNIT_EXPECT_EQ(test, wc->segs->table[1].nr_tombs, 3U);
	KUNIT_EXPECT_EQ(test, wc->segs->table[2].nr_tombs, 3U);
	/* not a whole pass yet (6 segments): nothing published */
	spin_lock_irq(&wc->lock);
	KUNIT_EXPECT_EQ(test, wow_seg_min_disk_seq_bound(wc), 10ULL);
	for (s = 3; s < NSEG; s++)
		wow_seg_visit(wc, s);
	/* no life on the device: the bound is next_seq as the pass began */
	KUNIT_EXPECT_EQ(test, wow_seg_min_disk_seq_bound(wc), 100ULL);
	KUNIT_EXPECT_EQ(test, wow_seg_held_tombs(wc), 7ULL);
	spin_unlock_irq(&wc->lock);
}

/* Take every mark; the segments taken, as a bit mask. */
static u32 take_marks(struct wow_cache *wc)
{
	u64 s = 0;
	u32 got = 0;

	while ((s = wow_seg_next_changed(wc, s)) != U64_MAX)
		got |= 1U << s++;
	return got;
}

/*
 * Every change to what a checkpoint holds of a segment marks it, and a
 * mark is taken once: freeing, opening, closing, a walk that drops
 * tombstones (not one that drops none); a load marks them all.
 */
static void wow_seg_marks_changes(struct kunit *test)
{
	static const u32 order[] = { 4, 1, 2, 3 };
	struct wow_tomb_range *t;
	struct wow_cache *wc = seg_cache(test);

	wow_seg_all_changed(wc);
	KUNIT_EXPECT_EQ(test, take_marks(wc), 0x3fU);
	KUNIT_EXPECT_EQ(test, take_marks(wc), 0U);
	free_in(wc, order, 4);
	KUNIT_EXPECT_EQ(test, take_marks(wc), 0x1eU);
	KUNIT_ASSERT_TRUE(test, seg_open(wc, false, 7));
	KUNIT_EXPECT_EQ(test, take_marks(wc), 1U << 4);
	seg_close_all(wc);
	KUNIT_EXPECT_EQ(test, take_marks(wc), 1U << 4);
	spin_lock_irq(&wc->lock);
	KUNIT_EXPECT_FALSE(test, wow_seg_is_changed(wc, 1));
	wow_seg_changed(wc, 1);
	KUNIT_EXPECT_TRUE(test, wow_seg_is_changed(wc, 1));
	spin_unlock_irq(&wc->lock);
	KUNIT_EXPECT_EQ(test, take_marks(wc), 1U << 1);

	t = kunit_kcalloc(test, 2, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t[0].t = 5;
	t[1].t = 50;
	wc->segs->table[0].tombs = t;
	wc->segs->table[0].nr_tombs = 2;
	wc->segs->table[0].max_tombs = 2;
	wc->segs->table[0].state = WOW_SEG_CLOSED;
	wow_life_pass_init(&wc->segs->life_pass, 3);
	wc->next_seq = 100;
	spin_lock_irq(&wc->lock);
	wow_seg_visit(wc, 0);		/* bound 3: drops none */
	spin_unlock_irq(&wc->lock);
	KUNIT_EXPECT_EQ(test, take_marks(wc), 0U);
	wow_life_pass_init(&wc->segs->life_pass, 10);
	spin_lock_irq(&wc->lock);
	wow_seg_visit(wc, 0);		/* bound 10: drops the first */
	spin_unlock_irq(&wc->lock);
	KUNIT_EXPECT_EQ(test, wc->segs->table[0].nr_tombs, 1U);
	KUNIT_EXPECT_EQ(test, take_marks(wc), 1U);
	KUNIT_ASSERT_EQ(test, wow_seg_order_rebuild(wc), 0);
	KUNIT_EXPECT_EQ(test, take_marks(wc), 0x3fU);
}

static struct kunit_case wow_seg_cases[] = {
	KUNIT_CASE(wow_seg_fifo),
	KUNIT_CASE(wow_seg_close_short),
	KUNIT_CASE(wow_seg_reserve),
	KUNIT_CASE(wow_seg_chain_moves),
	KUNIT_CASE(wow_seg_chain_rule),
	KUNIT_CASE(wow_seg_min_disk),
	KUNIT_CASE(wow_seg_visit_prunes),
	KUNIT_CASE(wow_seg_marks_changes),
	{}
};

static struct kunit_suite wow_seg_suite = {
	.name = "dm_wow_seg",
	.test_cases = wow_seg_cases,
};

kunit_test_suite(wow_seg_suite);
