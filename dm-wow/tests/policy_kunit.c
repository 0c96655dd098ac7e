// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for dm-wow's destage policies (dm-wow-policy.c), driven with
 * synthetic write traces and checked against exact destage sequences.
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "../dm-wow-policy.h"

#define BPG 8		/* blocks per group in these tests */
#define MAX_WRITES 256
#define NR_OB 1024	/* origin blocks, unless a test says */
#define MAX_DIRTY 128

/*
 * The index, as the policy sees it: the set of origin blocks whose current
 * cached copy is dirty.  write() makes blocks dirty and tells the policy,
 * as the log does; a successful destage makes them clean before run_done.
 */
struct fake {
	struct wow_policy p;
	u64 dirty[MAX_DIRTY];
	u32 nr;
	u64 order[MAX_WRITES];		/* blocks as written, oldest first */
	u32 nr_order;
};

static int find_dirty(struct fake *f, u64 ob)
{
	u32 i;

	for (i = 0; i < f->nr; i++)
		if (f->dirty[i] == ob)
			return i;
	return -1;
}

static bool fake_dirty(void *ctx, u64 ob)
{
	return find_dirty(ctx, ob) >= 0;
}

static void set_dirty(struct fake *f, u64 ob)
{
	if (find_dirty(f, ob) < 0 && f->nr < MAX_DIRTY)
		f->dirty[f->nr++] = ob;
}

/* lrw's source: the log's order, where a later write of a block wins. */
static bool fake_older(void *ctx, u64 *pos, u64 *ob)
{
	struct fake *f = ctx;
	u32 i, j;

	for (i = *pos == WOW_POLICY_OLDEST ? 0 : *pos + 1; i < f->nr_order;
	     i++) {
		if (!fake_dirty(f, f->order[i]))
			continue;
		for (j = i + 1; j < f->nr_order; j++)
			if (f->order[j] == f->order[i])
				break;
		if (j < f->nr_order)
			continue;	/* written again later */
		*pos = i;
		*ob = f->order[i];
		return true;
	}
	return false;
}

static void set_clean(struct fake *f, u64 ob)
{
	int i = find_dirty(f, ob);

	if (i >= 0)
		f->dirty[i] = f->dirty[--f->nr];
}

static struct fake *new_fake(struct kunit *test,
			     const struct wow_policy_ops *ops, u64 nr_oblocks,
			     int spares)
{
	struct fake *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	struct wow_policy_src src = { .dirty = fake_dirty, .older = fake_older };
	int i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	src.ctx = f;
	KUNIT_ASSERT_EQ(test, wow_policy_init(&f->p, ops, BPG, nr_oblocks,
					      &src), 0);
	for (i = 0; i < spares; i++) {
		struct wow_group *g = kzalloc(wow_policy_group_bytes(&f->p),
					      GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, g);
		wow_policy_add_spare(&f->p, g);
	}
	return f;
}

static struct wow_policy *new_policy(struct kunit *test,
				     const struct wow_policy_ops *ops)
{
	return &new_fake(test, ops, NR_OB, 64)->p;
}

static struct fake *fake_of(struct wow_policy *p)
{
	return container_of(p, struct fake, p);
}

/* The log's side of a write: the blocks are dirty, then the policy hears. */
static int write(struct wow_policy *p, u64 ob, u32 nr, bool sequential)
{
	u32 i;

	struct fake *f = fake_of(p);

	for (i = 0; i < nr; i++) {
		set_dirty(f, ob + i);
		if (f->nr_order < MAX_WRITES)
			f->order[f->nr_order++] = ob + i;
	}
	return wow_policy_note_write(p, ob, nr, sequential);
}

/* A destage (or a held copy) of [start, start + nr) is over. */
static void destaged(struct wow_policy *p, u64 start, u32 nr, bool ok)
{
	u32 i;

	for (i = 0; ok && i < nr; i++)
		set_clean(fake_of(p), start + i);
	wow_policy_run_done(p, start, nr);
}

/* Destage everything with runs of at most @max, recording run starts. */
static int drain(struct wow_policy *p, u32 max, u64 *starts, u32 *lens,
		 int cap)
{
	int n = 0;
	u64 start;
	u32 len;

	while (n < cap && (len = wow_policy_next_run(p, &start, max))) {
		starts[n] = start;
		lens[n] = len;
		destaged(p, start, len, true);
		n++;
	}
	return n;
}

static void expect_runs(struct kunit *test, struct wow_policy *p, u32 max,
			const u64 *want_start, const u32 *want_len, int want)
{
	u64 starts[32];
	u32 lens[32];
	int i, n = drain(p, max, starts, lens, ARRAY_SIZE(starts));

	KUNIT_EXPECT_EQ(test, n, want);
	for (i = 0; i < min(n, want); i++) {
		KUNIT_EXPECT_EQ_MSG(test, starts[i], want_start[i], "run %d", i);
		KUNIT_EXPECT_EQ_MSG(test, lens[i], want_len[i], "run %d", i);
	}
	KUNIT_EXPECT_EQ(test, fake_of(p)->nr, 0U);
	KUNIT_EXPECT_EQ(test, p->nr_groups, 0ULL);
	KUNIT_EXPECT_EQ(test, p->nr_busy, 0ULL);
}

static void wow_policy_cscan_ascending_from_hand(struct kunit *test)
{
	struct wow_policy *p = new_policy(test, &wow_policy_cscan_ops);
	static const u64 s[] = { 16, 40, 43, 2 };
	static const u32 l[] = { 3, 2, 1, 2 };

	/* groups 0, 2, 5 dirty; hand at group 1 */
	write(p, 2, 2, false);	/* group 0: 2,3 */
	write(p, 16, 3, false);	/* group 2: 16..18 */
	write(p, 40, 2, false);	/* group 5: 40,41 */
	write(p, 43, 1, false);	/* group 5: 43 */
	p->hand = 1;
	expect_runs(test, p, 64, s, l, 4);
	KUNIT_EXPECT_EQ(test, p->stats.sweeps, 1ULL);
	wow_policy_exit(p);
}

static void wow_policy_runs_split_at_size_and_group(struct kunit *test)
{
	struct wow_policy *p = new_policy(test, &wow_policy_cscan_ops);
	static const u64 s[] = { 4, 7, 8, 11 };
	static const u32 l[] = { 3, 1, 3, 2 };

	/* 4..12 is contiguous but spans groups 0 and 1 */
	write(p, 4, 9, false);
	expect_runs(test, p, 3, s, l, 4);
	wow_policy_exit(p);
}

/*
 * A group whose blocks are all dirty, written in no order and with dirty
 * neighbours on both sides, goes out as one run: the whole group from its
 * first block (on RAID-5, a full-stripe write), under every policy, when
 * the size allows one group or more.
 */
static void wow_policy_full_group_one_run(struct kunit *test)
{
	static const u64 order[BPG] = { 13, 9, 15, 8, 10, 12, 14, 11 };
	const struct wow_policy_ops *ops[] = {
		&wow_policy_wow_ops, &wow_policy_cscan_ops, &wow_policy_lrw_ops,
	};
	static const u32 maxes[] = { BPG, 64 };
	int o, m, i;

	for (o = 0; o < ARRAY_SIZE(ops); o++) {
		for (m = 0; m < ARRAY_SIZE(maxes); m++) {
			struct wow_policy *p = new_policy(test, ops[o]);
			u64 starts[16];
			u32 lens[16];
			int n, full = 0;

			write(p, 7, 1, false);	/* group 0's last block */
			for (i = 0; i < BPG; i++)
				write(p, order[i], 1, false);	/* group 1 */
			write(p, 16, 1, false);	/* group 2's first */
			n = drain(p, maxes[m], starts, lens, ARRAY_SIZE(starts));
			KUNIT_EXPECT_EQ_MSG(test, n, 3, "ops %d max %u", o,
					    maxes[m]);
			for (i = 0; i < n; i++) {
				/* no run straddles a group boundary */
				KUNIT_EXPECT_EQ(test, starts[i] / BPG,
						(starts[i] + lens[i] - 1) / BPG);
				if (starts[i] / BPG != 1)
					continue;
				KUNIT_EXPECT_EQ_MSG(test, starts[i], 8ULL,
						    "ops %d max %u", o,
						    maxes[m]);
				KUNIT_EXPECT_EQ_MSG(test, lens[i], (u32)BPG,
						    "ops %d max %u", o,
						    maxes[m]);
				full++;
			}
			KUNIT_EXPECT_EQ_MSG(test, full, 1, "ops %d max %u", o,
					    maxes[m]);
			KUNIT_EXPECT_EQ(test, fake_of(p)->nr, 0U);
			wow_policy_exit(p);
		}
	}
}

static void wow_policy_wow_skips_recent_once(struct kunit *test)
{
	struct wow_policy *p = new_policy(test, &wow_policy_wow_ops);
	static const u64 s[] = { 8, 24, 0, 16 };
	static const u32 l[] = { 1, 1, 2, 2 };

	write(p, 0, 1, false);	/* group 0 */
	write(p, 8, 1, false);	/* group 1 */
	write(p, 16, 1, false);	/* group 2 */
	write(p, 24, 1, false);	/* group 3 */
	write(p, 1, 1, false);	/* hit: group 0 recent */
	write(p, 17, 1, false);	/* hit: group 2 recent */
	KUNIT_EXPECT_EQ(test, p->nr_recency, 2ULL);
	/* the hand skips 0 and 2 once (clearing their bits), then wraps */
	expect_runs(test, p, 64, s, l, 4);
	KUNIT_EXPECT_EQ(test, p->stats.recency_skips, 2ULL);
	KUNIT_EXPECT_EQ(test, p->nr_recency, 0ULL);
	wow_policy_exit(p);
}

/*
 * The hand finishes the group it is destaging before it moves on: a write
 * that hits the group between two of its runs sets the recency bit, but
 * the rest of the group still goes out in this turn (the WOW paper
 * destages a group as one unit); a block dirtied behind the hand waits for
 * the next turn.  The same order for cscan, which has no recency bits.
 */
static void wow_policy_hand_finishes_its_group(struct kunit *test)
{
	const struct wow_policy_ops *ops[] = {
		&wow_policy_wow_ops, &wow_policy_cscan_ops,
	};
	static const u64 s[] = { 2, 4, 6, 8, 0 };
	static const u32 l[] = { 1, 1, 1, 1, 1 };
	int o;

	for (o = 0; o < ARRAY_SIZE(ops); o++) {
		struct wow_policy *p = new_policy(test, ops[o]);
		u64 start;

		write(p, 0, 5, false);		/* group 0: one write */
		set_clean(fake_of(p), 1);	/* its runs: 0, 2, 4 */
		set_clean(fake_of(p), 3);
		write(p, 8, 1, false);		/* group 1 */
		KUNIT_EXPECT_EQ(test, p->nr_recency, 0ULL);
		KUNIT_EXPECT_EQ(test, wow_policy_next_run(p, &start, 64), 1U);
		KUNIT_EXPECT_EQ(test, start, 0ULL);
		destaged(p, start, 1, true);
		write(p, 6, 1, false);		/* a hit ahead of the hand */
		write(p, 0, 1, false);		/* and one behind it */
		KUNIT_EXPECT_EQ(test, p->nr_recency,
				ops[o] == &wow_policy_wow_ops ? 1ULL : 0ULL);
		expect_runs(test, p, 64, s, l, ARRAY_SIZE(s));
		wow_policy_exit(p);
	}
}

/* A held block (cleaning moves it) is no run's until given back. */
static void wow_policy_hold_and_give_back(struct kunit *test)
{
	struct wow_policy *p = new_policy(test, &wow_policy_wow_ops);
	u64 start;

	write(p, 0, 4, false);		/* blocks 0..3 */
	KUNIT_EXPECT_TRUE(test, wow_policy_hold(p, 2));
	KUNIT_EXPECT_FALSE(test, wow_policy_hold(p, 2));	/* busy */
	KUNIT_EXPECT_FALSE(test, wow_policy_hold(p, 9));	/* not dirty */
	KUNIT_EXPECT_EQ(test, p->nr_busy, 1ULL);
	KUNIT_EXPECT_EQ(test, p->stats.runs, 0ULL);
	/* the run stops at the held block, and the next one skips it */
	KUNIT_EXPECT_EQ(test, wow_policy_next_run(p, &start, 64), 2U);
	KUNIT_EXPECT_EQ(test, start, 0ULL);
	destaged(p, start, 2, true);
	KUNIT_EXPECT_EQ(test, wow_policy_next_run(p, &start, 64), 1U);
	KUNIT_EXPECT_EQ(test, start, 3ULL);
	destaged(p, start, 1, true);
	KUNIT_EXPECT_EQ(test, wow_policy_next_run(p, &start, 64), 0U);
	/* a write while held: eligible again only once it is given back */
	write(p, 2, 1, false);
	KUNIT_EXPECT_EQ(test, wow_policy_next_run(p, &start, 64), 0U);
	KUNIT_EXPECT_EQ(test, wow_policy_mark_dirty(p, 2), 0);
	destaged(p, 2, 1, false);	/* the copy landed: still dirty */
	KUNIT_EXPECT_EQ(test, wow_policy_next_run(p, &start, 64), 1U);
	KUNIT_EXPECT_EQ(test, start, 2ULL);
	destaged(p, 2, 1, true);
	/* given back with its copy dropped (no longer dirty): forgotten */
	write(p, 5, 1, false);
	KUNIT_EXPECT_TRUE(test, wow_policy_hold(p, 5));
	destaged(p, 5, 1, true);
	KUNIT_EXPECT_EQ(test, wow_policy_next_run(p, &start, 64), 0U);
	KUNIT_EXPECT_EQ(test, p->nr_groups, 0ULL);
	KUNIT_EXPECT_EQ(test, p->nr_busy, 0ULL);
	wow_policy_exit(p);
}

static void wow_policy_sequential_does_not_set_recency(struct kunit *test)
{
	struct wow_policy *p = new_policy(test, &wow_policy_wow_ops);

	write(p, 0, 2, false);
	write(p, 2, 2, true);	/* stream continues */
	KUNIT_EXPECT_EQ(test, p->nr_recency, 0ULL);
	write(p, 0, 1, false);	/* a real re-write */
	KUNIT_EXPECT_EQ(test, p->nr_recency, 1ULL);
	wow_policy_exit(p);
}

/*
 * Two streams and random writes at once (a log beside a database): each
 * write of either stream is seen to continue it; a single end for the
 * device would see none.
 */
static void wow_streams_interleaved(struct kunit *test)
{
	struct wow_streams s = {};
	u32 i, seq = 0;

	for (i = 0; i < 64; i++) {
		seq += !!wow_streams_note(&s, 1000 + i, 1);	/* stream A */
		seq += !!wow_streams_note(&s, 50000 + 2 * i, 2); /* stream B */
		KUNIT_EXPECT_FALSE(test, wow_streams_note(&s, 7919 * i + 100000,
							  1));
	}
	/* the first write of each stream starts it */
	KUNIT_EXPECT_EQ(test, seq, 126U);
}

/* Writes of one stream that reach the log a little out of order. */
static void wow_streams_reordered(struct kunit *test)
{
	struct wow_streams s = {};

	KUNIT_EXPECT_FALSE(test, wow_streams_note(&s, 100, 1));
	KUNIT_EXPECT_TRUE(test, wow_streams_note(&s, 102, 1));
	KUNIT_EXPECT_TRUE(test, wow_streams_note(&s, 101, 1));
	KUNIT_EXPECT_EQ(test, s.end[0], 103ULL);	/* the end never moves back */
	KUNIT_EXPECT_TRUE(test, wow_streams_note(&s, 103, 4));
	KUNIT_EXPECT_EQ(test, s.nr, 1U);
	/* far off the end: another stream */
	KUNIT_EXPECT_FALSE(test, wow_streams_note(&s, 107 + WOW_STREAM_SLACK + 1,
						  1));
	KUNIT_EXPECT_EQ(test, s.nr, 2U);
}

/*
 * Each stream counts its own blocks, whatever runs beside it: what
 * sequential_cutoff compares.  The count is what the stream wrote before
 * the write being noted.
 */
static void wow_streams_lengths(struct kunit *test)
{
	struct wow_streams s = {};
	u32 i;

	for (i = 0; i < 32; i++) {
		/* A: 32-block writes; B: 8-block writes; a random one */
		KUNIT_EXPECT_EQ(test, wow_streams_note(&s, 4096 + 32 * i, 32),
				32ULL * i);
		KUNIT_EXPECT_EQ(test, wow_streams_note(&s, 900000 + 8 * i, 8),
				8ULL * i);
		KUNIT_EXPECT_EQ(test, wow_streams_note(&s, 7919 * i + 100000,
						       1), 0ULL);
	}
	/* a write a little behind the end still counts in its stream */
	KUNIT_EXPECT_EQ(test, wow_streams_note(&s, 4096 + 32 * 32 - 4, 4),
			32ULL * 32);
	KUNIT_EXPECT_EQ(test, wow_streams_note(&s, 4096 + 32 * 32, 32),
			32ULL * 32 + 4);
	/* pushed out by WOW_STREAMS new streams, B starts again from 0 */
	for (i = 0; i < WOW_STREAMS; i++)
		wow_streams_note(&s, 2000000 + 1000 * i, 1);
	KUNIT_EXPECT_EQ(test, wow_streams_note(&s, 900000 + 8 * 32, 8), 0ULL);
	KUNIT_EXPECT_EQ(test, wow_streams_note(&s, 900000 + 8 * 33, 8), 8ULL);
}

/* WOW_STREAMS other streams push the least recent one out. */
static void wow_streams_forget_least_recent(struct kunit *test)
{
	struct wow_streams s = {};
	u32 i;

	wow_streams_note(&s, 0, 1);
	for (i = 1; i < WOW_STREAMS; i++)
		wow_streams_note(&s, i * 1000, 1);
	KUNIT_EXPECT_EQ(test, s.nr, (u32)WOW_STREAMS);
	/* the first stream is the least recent and still known */
	KUNIT_EXPECT_TRUE(test, wow_streams_note(&s, 1, 1));
	/* now stream 1000 is the least recent: one more new stream drops it */
	wow_streams_note(&s, 999999, 1);
	KUNIT_EXPECT_FALSE(test, wow_streams_note(&s, 1001, 1));
	KUNIT_EXPECT_TRUE(test, wow_streams_note(&s, 2, 1));
	KUNIT_EXPECT_EQ(test, s.nr, (u32)WOW_STREAMS);
}

static void wow_policy_drain_ignores_recency(struct kunit *test)
{
	struct wow_policy *p = new_policy(test, &wow_policy_wow_ops);
	static const u64 s[] = { 0, 8, 16, 24 };
	static const u32 l[] = { 2, 1, 2, 1 };

	write(p, 0, 1, false);	/* group 0 */
	write(p, 8, 1, false);	/* group 1 */
	write(p, 16, 1, false);	/* group 2 */
	write(p, 24, 1, false);	/* group 3 */
	write(p, 1, 1, false);	/* hit: group 0 recent */
	KUNIT_EXPECT_EQ(test, p->nr_recency, 1ULL);
	/* draining (cleaner mode) clears the bits and sets no new ones */
	wow_policy_set_drain(p, true);
	KUNIT_EXPECT_EQ(test, p->nr_recency, 0ULL);
	write(p, 17, 1, false);	/* hit: group 2 */
	KUNIT_EXPECT_EQ(test, p->nr_recency, 0ULL);
	/* one ascending pass, nothing skipped */
	expect_runs(test, p, 64, s, l, 4);
	KUNIT_EXPECT_EQ(test, p->stats.recency_skips, 0ULL);
	wow_policy_set_drain(p, false);
	write(p, 0, 1, false);
	write(p, 0, 1, false);
	KUNIT_EXPECT_EQ(test, p->nr_recency, 1ULL);
	wow_policy_exit(p);
}

static void wow_policy_lrw_oldest_write_first(struct kunit *test)
{
	struct wow_policy *p = new_policy(test, &wow_policy_lrw_ops);
	static const u64 s[] = { 40, 8, 0 };
	static const u32 l[] = { 1, 1, 1 };

	write(p, 0, 1, false);
	write(p, 40, 1, false);
	write(p, 8, 1, false);
	write(p, 0, 1, false);	/* group 0 is now newest */
	expect_runs(test, p, 64, s, l, 3);
	wow_policy_exit(p);
}

/*
 * lrw passes over what is busy: the oldest block's group while its
 * destage is in flight, and a block written again while its old copy is
 * being destaged (the source knows nothing of that).
 */
static void wow_policy_lrw_skips_busy(struct kunit *test)
{
	struct wow_policy *p = new_policy(test, &wow_policy_lrw_ops);
	u64 start;

	write(p, 16, 1, false);
	write(p, 0, 1, false);
	write(p, 8, 1, false);
	KUNIT_ASSERT_EQ(test, wow_policy_next_run(p, &start, 64), 1U);
	KUNIT_EXPECT_EQ(test, start, 16ULL);
	write(p, 16, 1, false);		/* again, while busy: now newest */
	KUNIT_ASSERT_EQ(test, wow_policy_next_run(p, &start, 64), 1U);
	KUNIT_EXPECT_EQ(test, start, 0ULL);
	KUNIT_ASSERT_EQ(test, wow_policy_next_run(p, &start, 64), 1U);
	KUNIT_EXPECT_EQ(test, start, 8ULL);
	/* 16's new copy waits for the old one's destage */
	KUNIT_EXPECT_EQ(test, wow_policy_next_run(p, &start, 64), 0U);
	wow_policy_run_done(p, 16, 1);	/* the old copy: not current */
	destaged(p, 0, 1, true);
	destaged(p, 8, 1, true);
	KUNIT_ASSERT_EQ(test, wow_policy_next_run(p, &start, 64), 1U);
	KUNIT_EXPECT_EQ(test, start, 16ULL);
	destaged(p, 16, 1, true);
	KUNIT_EXPECT_EQ(test, p->nr_groups, 0ULL);
	wow_policy_exit(p);
}

static void wow_policy_busy_block_not_handed_twice(struct kunit *test)
{
	struct wow_policy *p = new_policy(test, &wow_policy_cscan_ops);
	u64 start;

	write(p, 8, 2, false);
	KUNIT_ASSERT_EQ(test, wow_policy_next_run(p, &start, 64), 2U);
	KUNIT_EXPECT_TRUE(test, wow_policy_busy(p, 9));
	/* re-dirtied while its destage is in flight: not eligible yet */
	write(p, 9, 1, false);
	KUNIT_EXPECT_EQ(test, wow_policy_next_run(p, &start, 64), 0U);
	KUNIT_EXPECT_EQ(test, wow_policy_claim(p, 9, 64), 0U);
	/* the destaged copy of 9 is not the current one: 9 stays dirty */
	set_clean(fake_of(p), 8);
	wow_policy_run_done(p, 8, 2);
	KUNIT_EXPECT_FALSE(test, wow_policy_busy(p, 9));
	KUNIT_ASSERT_EQ(test, wow_policy_next_run(p, &start, 64), 1U);
	KUNIT_EXPECT_EQ(test, start, 9ULL);
	destaged(p, 9, 1, true);
	KUNIT_EXPECT_EQ(test, p->nr_groups, 0ULL);
	wow_policy_exit(p);
}

static void wow_policy_claim_and_forget(struct kunit *test)
{
	struct wow_policy *p = new_policy(test, &wow_policy_cscan_ops);
	u64 start;

	write(p, 0, 8, false);
	/* reclaim takes 3..7 out of order */
	KUNIT_EXPECT_EQ(test, wow_policy_claim(p, 3, 64), 5U);
	set_clean(fake_of(p), 1);	/* discarded */
	wow_policy_forget(p, 1);
	KUNIT_ASSERT_EQ(test, wow_policy_next_run(p, &start, 64), 1U);
	KUNIT_EXPECT_EQ(test, start, 0ULL);
	KUNIT_ASSERT_EQ(test, wow_policy_next_run(p, &start, 64), 1U);
	KUNIT_EXPECT_EQ(test, start, 2ULL);
	KUNIT_EXPECT_EQ(test, wow_policy_next_run(p, &start, 64), 0U);
	destaged(p, 0, 1, true);
	destaged(p, 2, 1, true);
	KUNIT_EXPECT_EQ(test, p->nr_groups, 1ULL);	/* 3..7 busy */
	destaged(p, 3, 5, true);
	KUNIT_EXPECT_EQ(test, p->nr_groups, 0ULL);
	KUNIT_EXPECT_EQ(test, p->nr_busy, 0ULL);
	/* a discard of a group's last dirty block: the group leaves at once */
	write(p, 20, 1, false);
	KUNIT_EXPECT_EQ(test, p->nr_groups, 1ULL);
	set_clean(fake_of(p), 20);
	wow_policy_forget(p, 20);
	KUNIT_EXPECT_EQ(test, p->nr_groups, 0ULL);
	wow_policy_exit(p);
}

/* Nodes only where needed: per busy group, whatever the policy. */
static void wow_policy_no_spare_fails_cleanly(struct kunit *test)
{
	struct fake *f = new_fake(test, &wow_policy_lrw_ops, NR_OB, 0);
	struct wow_policy *p = &f->p;
	u64 start;

	KUNIT_EXPECT_EQ(test, wow_policy_spares_wanted(p, 3), 3U);
	/* lrw's order is the source's: a write takes no node */
	KUNIT_EXPECT_EQ(test, write(p, 0, 1, false), 0);
	KUNIT_EXPECT_EQ(test, p->nr_groups, 1ULL);
	KUNIT_EXPECT_EQ(test, wow_policy_next_run(p, &start, 64), 0U);
	wow_policy_exit(p);

	f = new_fake(test, &wow_policy_wow_ops, NR_OB, 0);
	p = &f->p;
	/* wow keeps no node for a dirty group... */
	KUNIT_EXPECT_EQ(test, write(p, 0, 2, false), 0);
	KUNIT_EXPECT_EQ(test, p->nr_groups, 1ULL);
	/* ...but needs one for a busy group: nothing handed out without */
	KUNIT_EXPECT_EQ(test, wow_policy_next_run(p, &start, 64), 0U);
	KUNIT_EXPECT_FALSE(test, wow_policy_hold(p, 1));
	KUNIT_EXPECT_EQ(test, p->nr_busy, 0ULL);
	wow_policy_add_spare(p, kzalloc(wow_policy_group_bytes(p),
					GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, wow_policy_next_run(p, &start, 64), 2U);
	KUNIT_EXPECT_EQ(test, p->nr_spare, 0U);
	destaged(p, start, 2, true);
	KUNIT_EXPECT_EQ(test, p->nr_spare, 1U);	/* the node came back */
	wow_policy_exit(p);
}

/* A group whose blocks went clean unannounced: the sweep drops it. */
static void wow_policy_stale_group_dropped_by_sweep(struct kunit *test)
{
	struct wow_policy *p = new_policy(test, &wow_policy_wow_ops);
	u64 start;

	write(p, 8, 1, false);
	write(p, 8, 1, false);			/* recent */
	KUNIT_EXPECT_EQ(test, p->nr_recency, 1ULL);
	set_clean(fake_of(p), 8);		/* no forget */
	KUNIT_EXPECT_EQ(test, wow_policy_next_run(p, &start, 64), 0U);
	KUNIT_EXPECT_EQ(test, p->nr_groups, 0ULL);
	KUNIT_EXPECT_EQ(test, p->nr_recency, 0ULL);
	wow_policy_exit(p);
}

/* The group map spans chunks: the sweep crosses and wraps them. */
static void wow_policy_map_across_chunks(struct kunit *test)
{
	/* two chunks of the map: 2^23 + 100 groups */
	u64 nr = ((1ULL << 23) + 100) * BPG, last = nr - 1;
	struct fake *f = new_fake(test, &wow_policy_cscan_ops, nr, 8);
	struct wow_policy *p = &f->p;
	u64 mid = (1ULL << 23) * BPG - 1;	/* last block of chunk 0 */
	static u64 s[3];
	static const u32 l[] = { 1, 1, 1 };

	KUNIT_EXPECT_EQ(test, p->nr_gnos, (1ULL << 23) + 100);
	KUNIT_EXPECT_EQ(test, wow_policy_map_bytes(p),
			(size_t)2 * BITS_TO_LONGS((1ULL << 23) + 100) *
			sizeof(unsigned long));
	write(p, last, 1, false);
	write(p, 5, 1, false);
	write(p, mid, 1, false);
	p->hand = 1;
	s[0] = mid;
	s[1] = last;
	s[2] = 5;
	expect_runs(test, p, 64, s, l, 3);
	KUNIT_EXPECT_EQ(test, p->stats.sweeps, 1ULL);
	wow_policy_exit(p);
}

static void wow_policy_rate_curve(struct kunit *test)
{
	struct wow_thresholds t;

	wow_thresholds_init(&t, 80, 90);
	KUNIT_EXPECT_EQ(test, wow_rate(0, &t, 32), 0U);
	KUNIT_EXPECT_EQ(test, wow_rate(7999, &t, 32), 0U);
	KUNIT_EXPECT_EQ(test, wow_rate(8000, &t, 32), 1U);	/* at low */
	KUNIT_EXPECT_EQ(test, wow_rate(8500, &t, 32), 16U);	/* halfway */
	KUNIT_EXPECT_EQ(test, wow_rate(8999, &t, 32), 31U);
	KUNIT_EXPECT_EQ(test, wow_rate(9000, &t, 32), 32U);	/* at high */
	KUNIT_EXPECT_EQ(test, wow_rate(10000, &t, 32), 32U);
	KUNIT_EXPECT_EQ(test, wow_rate(8500, &t, 1), 1U);
}

static void wow_policy_thresholds_adapt(struct kunit *test)
{
	struct wow_thresholds t;
	int i;

	wow_thresholds_init(&t, 80, 90);
	/* target is 95%: a peak of 99% overshoots by 4 points */
	wow_thresholds_adapt(&t, 9900);
	KUNIT_EXPECT_EQ(test, t.high, 8600U);
	KUNIT_EXPECT_EQ(test, t.low, 7600U);
	/* at the target: unchanged */
	wow_thresholds_adapt(&t, 9500);
	KUNIT_EXPECT_EQ(test, t.high, 8600U);
	/* under the target: one point back up per period, never past 90% */
	wow_thresholds_adapt(&t, 5000);
	KUNIT_EXPECT_EQ(test, t.high, 8700U);
	for (i = 0; i < 10; i++)
		wow_thresholds_adapt(&t, 5000);
	KUNIT_EXPECT_EQ(test, t.high, 9000U);
	KUNIT_EXPECT_EQ(test, t.low, 8000U);
	/* repeated full caches: never below 10%, low stays 10 under */
	for (i = 0; i < 50; i++)
		wow_thresholds_adapt(&t, 10000);
	KUNIT_EXPECT_EQ(test, t.high, 1000U);
	KUNIT_EXPECT_EQ(test, t.low, 0U);
}

/*
 * At saturation destage runs at full rate from the high threshold up, so
 * dirty data settles above it: peaks over the lowered high threshold but
 * under the target must still bring it back (they once kept it at 10%).
 */
static void wow_policy_thresholds_recover(struct kunit *test)
{
	struct wow_thresholds t;
	int i;

	wow_thresholds_init(&t, 20, 30);
	/* target 65%: a fill to 100% drops high to the floor */
	wow_thresholds_adapt(&t, 10000);
	KUNIT_EXPECT_EQ(test, t.high, 1000U);
	KUNIT_EXPECT_EQ(test, t.low, 0U);
	/* dirty held a little over high, well under the target */
	for (i = 0; i < 10; i++)
		wow_thresholds_adapt(&t, t.high + 500);
	KUNIT_EXPECT_EQ(test, t.high, 2000U);
	for (i = 0; i < 20; i++)
		wow_thresholds_adapt(&t, t.high + 500);
	KUNIT_EXPECT_EQ(test, t.high, 3000U);
	KUNIT_EXPECT_EQ(test, t.low, 2000U);
	/* over the target again: down by the overshoot */
	wow_thresholds_adapt(&t, 7000);
	KUNIT_EXPECT_EQ(test, t.high, 2500U);
	KUNIT_EXPECT_EQ(test, t.low, 1500U);
}

static struct kunit_case wow_policy_cases[] = {
	KUNIT_CASE(wow_policy_rate_curve),
	KUNIT_CASE(wow_policy_thresholds_adapt),
	KUNIT_CASE(wow_policy_thresholds_recover),
	KUNIT_CASE(wow_policy_cscan_ascending_from_hand),
	KUNIT_CASE(wow_policy_runs_split_at_size_and_group),
	KUNIT_CASE(wow_policy_full_group_one_run),
	KUNIT_CASE(wow_policy_wow_skips_recent_once),
	KUNIT_CASE(wow_policy_hand_finishes_its_group),
	KUNIT_CASE(wow_policy_hold_and_give_back),
	KUNIT_CASE(wow_policy_sequential_does_not_set_recency),
	KUNIT_CASE(wow_streams_interleaved),
	KUNIT_CASE(wow_streams_reordered),
	KUNIT_CASE(wow_streams_lengths),
	KUNIT_CASE(wow_streams_forget_least_recent),
	KUNIT_CASE(wow_policy_drain_ignores_recency),
	KUNIT_CASE(wow_policy_lrw_oldest_write_first),
	KUNIT_CASE(wow_policy_lrw_skips_busy),
	KUNIT_CASE(wow_policy_busy_block_not_handed_twice),
	KUNIT_CASE(wow_policy_claim_and_forget),
	KUNIT_CASE(wow_policy_no_spare_fails_cleanly),
	KUNIT_CASE(wow_policy_stale_group_dropped_by_sweep),
	KUNIT_CASE(wow_policy_map_across_chunks),
	{}
};

static struct kunit_suite wow_policy_suite = {
	.name = "dm_wow_policy",
	.test_cases = wow_policy_cases,
};

kunit_test_suite(wow_policy_suite);
