// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for dm-wow's tombstone envelope (dm-wow-tombs.c), with plain
 * numbers: pieces, lookups, a brute-force comparison, and crafted ranges
 * that must cost no more than their number.
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "../dm-wow.h"

#define R(s, n, tt) { .start = (s), .nr = (n), .t = (tt) }

static u32 envelope(struct kunit *test, struct wow_tomb_range *r, u32 n,
		    struct wow_tomb_range **out)
{
	u32 *heap = kunit_kcalloc(test, max(n, 1U), sizeof(*heap), GFP_KERNEL);

	*out = kunit_kcalloc(test, max(2 * n, 1U), sizeof(**out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, heap);
	KUNIT_ASSERT_NOT_NULL(test, *out);
	return wow_tomb_envelope(r, n, *out, heap);
}

static void expect_piece(struct kunit *test, const struct wow_tomb_range *p,
			 u64 start, u32 nr, u64 t)
{
	KUNIT_EXPECT_EQ(test, p->start, start);
	KUNIT_EXPECT_EQ(test, p->nr, nr);
	KUNIT_EXPECT_EQ(test, p->t, t);
}

static void wow_tombs_overlaps(struct kunit *test)
{
	struct wow_tomb_range r[] = {
		R(5, 10, 7), R(0, 10, 5), R(8, 1, 9), R(40, 0, 99),
		R(WOW_MAX_OBLOCK + 1, 5, 99), R(30, 5, 2), R(33, 10, 2),
	};
	struct wow_tomb_range *env;
	u32 n = envelope(test, r, ARRAY_SIZE(r), &env);

	KUNIT_ASSERT_EQ(test, n, 5U);
	expect_piece(test, &env[0], 0, 5, 5);
	expect_piece(test, &env[1], 5, 3, 7);
	expect_piece(test, &env[2], 8, 1, 9);
	expect_piece(test, &env[3], 9, 6, 7);
	/* touching ranges of equal t merge */
	expect_piece(test, &env[4], 30, 13, 2);

	KUNIT_EXPECT_PTR_EQ(test, wow_tomb_find(env, n, 0), &env[0]);
	KUNIT_EXPECT_PTR_EQ(test, wow_tomb_find(env, n, 8), &env[2]);
	KUNIT_EXPECT_PTR_EQ(test, wow_tomb_find(env, n, 14), &env[3]);
	KUNIT_EXPECT_NULL(test, wow_tomb_find(env, n, 15));
	KUNIT_EXPECT_NULL(test, wow_tomb_find(env, n, 29));
	KUNIT_EXPECT_PTR_EQ(test, wow_tomb_find(env, n, 42), &env[4]);
	KUNIT_EXPECT_NULL(test, wow_tomb_find(env, n, 43));
	KUNIT_EXPECT_NULL(test, wow_tomb_find(env, n, WOW_MAX_OBLOCK + 2));
	KUNIT_EXPECT_NULL(test, wow_tomb_find(env, 0, 0));
}

static void wow_tombs_nested(struct kunit *test)
{
	struct wow_tomb_range r[] = { R(0, 100, 9), R(10, 10, 3) };
	struct wow_tomb_range *env;
	u32 n = envelope(test, r, ARRAY_SIZE(r), &env);

	/* a lower t inside a higher one changes nothing */
	KUNIT_ASSERT_EQ(test, n, 1U);
	expect_piece(test, &env[0], 0, 100, 9);
}

/* Every block's piece holds the largest t of the ranges covering it. */
static void wow_tombs_brute_force(struct kunit *test)
{
	const u32 nr = 60;
	struct wow_tomb_range *r, *orig, *env;
	u32 seed = 12345, i, n, round;
	u64 b;

	r = kunit_kcalloc(test, nr, sizeof(*r), GFP_KERNEL);
	orig = kunit_kcalloc(test, nr, sizeof(*orig), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_NOT_NULL(test, orig);
	for (round = 0; round < 20; round++) {
		for (i = 0; i < nr; i++) {
			seed = seed * 1103515245 + 12345;
			r[i].start = (seed >> 8) % 200;
			seed = seed * 1103515245 + 12345;
			r[i].nr = (seed >> 8) % (round < 10 ? 8 : 60);
			seed = seed * 1103515245 + 12345;
			r[i].t = (seed >> 8) % 50;
			r[i].flags = 0;
		}
		memcpy(orig, r, nr * sizeof(*r));
		n = envelope(test, r, nr, &env);
		KUNIT_EXPECT_LE(test, n, 2U * nr);
		for (b = 0; b < 270; b++) {
			const struct wow_tomb_range *e = wow_tomb_find(env, n, b);
			bool covered = false;
			u64 best = 0;

			for (i = 0; i < nr; i++)
				if (b >= orig[i].start &&
				    b < orig[i].start + orig[i].nr) {
					best = covered ? max(best, orig[i].t) :
						orig[i].t;
					covered = true;
				}
			KUNIT_EXPECT_EQ(test, !!e, covered);
			if (e && covered)
				KUNIT_EXPECT_EQ(test, e->t, best);
		}
		for (i = 1; i < n; i++)
			KUNIT_EXPECT_LE(test, env[i - 1].start + env[i - 1].nr,
					env[i].start);
	}
}

/*
 * Crafted but valid: many ranges, each as wide as a tombstone can be.
 * The envelope is one piece; nothing here is per block.
 */
static void wow_tombs_crafted_wide(struct kunit *test)
{
	u32 n = 20000, i, k;
	struct wow_tomb_range *r, *env;

	r = kunit_kcalloc(test, n, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	for (i = 0; i < n; i++) {
		r[i].start = i % 7;
		r[i].nr = U32_MAX;
		r[i].t = i;
	}
	k = envelope(test, r, n, &env);
	KUNIT_EXPECT_LE(test, k, 8U);
	KUNIT_EXPECT_EQ(test, wow_tomb_find(env, k, 1ULL << 31)->t,
			(u64)n - 1);
	KUNIT_EXPECT_NULL(test, wow_tomb_find(env, k, 6ULL + U32_MAX));
}

/*
 * A reused segment's earlier life stays what recovery finds until the new
 * life's first record is durable; tombstones killing its records must be
 * kept until then.
 */
static void wow_tombs_seg_disk_seq(struct kunit *test)
{
	/* never written */
	KUNIT_EXPECT_EQ(test, wow_seg_disk_seq(0, 0, 50), 0ULL);
	/* first life: no earlier one */
	KUNIT_EXPECT_EQ(test, wow_seg_disk_seq(40, 0, 10), 40ULL);
	/* reused at 40 over the life of 7: 7 until record 40 is durable */
	KUNIT_EXPECT_EQ(test, wow_seg_disk_seq(40, 7, 39), 7ULL);
	KUNIT_EXPECT_EQ(test, wow_seg_disk_seq(40, 7, 40), 40ULL);
	KUNIT_EXPECT_EQ(test, wow_seg_disk_seq(40, 7, 41), 40ULL);
}

/* Segments' lives for wow_seg_min_life: seq, then prev_seq. */
static u64 lives_life(void *ctx, u32 s, u64 *prev_seq)
{
	const u64 (*lives)[2] = ctx;

	*prev_seq = lives[s][1];
	return lives[s][0];
}

/*
 * The oldest life on the device: an empty segment has none, a reused one
 * its earlier life until the new one's first record is durable.
 */
static void wow_tombs_seg_min_life(struct kunit *test)
{
	static const u64 lives[][2] = {
		{ 0, 0 }, { 90, 0 }, { 60, 0 }, { 120, 30 }, { 0, 0 },
	};

	KUNIT_EXPECT_EQ(test, wow_seg_min_life(0, 0, lives_life,
					       (void *)lives), U64_MAX);
	KUNIT_EXPECT_EQ(test, wow_seg_min_life(1, 0, lives_life,
					       (void *)lives), U64_MAX);
	KUNIT_EXPECT_EQ(test, wow_seg_min_life(3, 0, lives_life,
					       (void *)lives), 60ULL);
	/* segment 3's life of 30 is on the device until 120 is durable */
	KUNIT_EXPECT_EQ(test, wow_seg_min_life(5, 119, lives_life,
					       (void *)lives), 30ULL);
	KUNIT_EXPECT_EQ(test, wow_seg_min_life(5, 120, lives_life,
					       (void *)lives), 60ULL);
}

/*
 * After a load a segment is free when it never held a record or holds
 * neither a current block nor a tombstone; else it stays closed.
 */
static void wow_tombs_seg_load_fate(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, wow_seg_load_fate(0, 0, 0), WOW_SEG_FATE_EMPTY);
	KUNIT_EXPECT_EQ(test, wow_seg_load_fate(40, 0, 0), WOW_SEG_FATE_DEAD);
	KUNIT_EXPECT_EQ(test, wow_seg_load_fate(40, 3, 0),
			WOW_SEG_FATE_CLOSED);
	/* a tombstone alone keeps the life */
	KUNIT_EXPECT_EQ(test, wow_seg_load_fate(40, 0, 1),
			WOW_SEG_FATE_CLOSED);
	KUNIT_EXPECT_EQ(test, wow_seg_load_fate(40, 1ULL << 32, 2),
			WOW_SEG_FATE_CLOSED);
}

/* A pass reads each segment once; its bound is published at its end. */
static void wow_tombs_life_pass_bound(struct kunit *test)
{
	struct wow_life_pass p;

	wow_life_pass_init(&p, 3);
	KUNIT_EXPECT_FALSE(test, wow_life_pass_visit(&p, 3, 20, 9, 4));
	KUNIT_EXPECT_FALSE(test, wow_life_pass_visit(&p, 3, 21, 0, 0));
	KUNIT_EXPECT_EQ(test, p.bound, 3ULL);	/* not before the end */
	KUNIT_EXPECT_TRUE(test, wow_life_pass_visit(&p, 3, 22, 5, 2));
	KUNIT_EXPECT_EQ(test, p.bound, 5ULL);
	KUNIT_EXPECT_EQ(test, p.held, 6ULL);
	/* the next pass counts from nothing */
	KUNIT_EXPECT_FALSE(test, wow_life_pass_visit(&p, 3, 23, 9, 1));
	KUNIT_EXPECT_FALSE(test, wow_life_pass_visit(&p, 3, 23, 12, 0));
	KUNIT_EXPECT_TRUE(test, wow_life_pass_visit(&p, 3, 23, 10, 0));
	KUNIT_EXPECT_EQ(test, p.bound, 9ULL);
	KUNIT_EXPECT_EQ(test, p.held, 1ULL);
}

/*
 * With no life on the device the bound is the next seq as the pass began:
 * a life opened while it ran is no older than that.
 */
static void wow_tombs_life_pass_no_life(struct kunit *test)
{
	struct wow_life_pass p;

	wow_life_pass_init(&p, 0);
	wow_life_pass_visit(&p, 2, 20, 0, 0);
	/* segment 0, already visited, opens at 20 and 21 is written */
	KUNIT_EXPECT_TRUE(test, wow_life_pass_visit(&p, 2, 30, 0, 0));
	KUNIT_EXPECT_EQ(test, p.bound, 20ULL);
}

/* A published bound never goes back down. */
static void wow_tombs_life_pass_rises(struct kunit *test)
{
	struct wow_life_pass p;

	wow_life_pass_init(&p, 50);
	KUNIT_EXPECT_TRUE(test, wow_life_pass_visit(&p, 1, 60, 40, 0));
	KUNIT_EXPECT_EQ(test, p.bound, 50ULL);
}

/*
 * A model log of 8 segments whose lives move on while a walk passes over
 * them in steps: segments reopen at the next seq (their old life counting
 * until the new one's first record is durable), records become durable.
 * After every pass the bound must not be above the oldest life then on
 * the device, and it must not trail the oldest life at the pass's start.
 */
#define LP_SEGS 8

struct lp_seg {
	u64 seq, prev;
};

static u64 lp_oldest(const struct lp_seg *sg, u64 durable, u64 next)
{
	u64 min = U64_MAX, d;
	int i;

	for (i = 0; i < LP_SEGS; i++) {
		d = wow_seg_disk_seq(sg[i].seq, sg[i].prev, durable);
		if (d && d < min)
			min = d;
	}
	return min == U64_MAX ? next : min;
}

static void wow_tombs_life_pass_model(struct kunit *test)
{
	struct lp_seg sg[LP_SEGS] = {};
	struct wow_life_pass p;
	u64 next = 1, durable = 0, start_oldest = 0, x = 34;
	u32 cursor = 0, step, passes = 0;
	struct lp_seg *o;

	wow_life_pass_init(&p, 0);
	for (step = 0; step < 20000; step++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		switch ((x >> 33) % 4) {
		case 0:	/* a segment reopens at the next seq */
			o = &sg[(x >> 40) % LP_SEGS];
			o->prev = wow_seg_disk_seq(o->seq, o->prev, durable);
			o->seq = next++;
			break;
		case 1:	/* records up to here are durable */
			durable = next - 1;
			break;
		default:	/* the walk goes on */
			if (!p.seen)
				start_oldest = lp_oldest(sg, durable, next);
			if (wow_life_pass_visit(&p, LP_SEGS, next,
						wow_seg_disk_seq(sg[cursor].seq,
								 sg[cursor].prev,
								 durable), 0)) {
				passes++;
				KUNIT_EXPECT_LE(test, p.bound,
						lp_oldest(sg, durable, next));
				KUNIT_EXPECT_GE(test, p.bound, start_oldest);
			}
			cursor = (cursor + 1) % LP_SEGS;
		}
	}
	KUNIT_EXPECT_GT(test, passes, 1000U);
}

/*
 * At load: a tombstone below the oldest life goes; of a tombstone that
 * reclaim carried forward, the newest holder keeps its copy; another
 * range, or another t, is another tombstone.
 */
static void wow_tombs_prune_at_load(struct kunit *test)
{
	struct wow_tomb_range tr[] = {
		{ .start = 10, .nr = 4, .t = 20 },	/* held by life 30 */
		{ .start = 10, .nr = 4, .t = 20 },	/* the same, by 50 */
		{ .start = 10, .nr = 4, .t = 21 },	/* another t */
		{ .start = 10, .nr = 4, .t = 7 },	/* below the oldest */
		{ .start = 11, .nr = 4, .t = 20 },	/* another range */
	};
	struct wow_tomb_ref refs[] = {
		{ &tr[0], 30 }, { &tr[1], 50 }, { &tr[2], 30 },
		{ &tr[3], 50 }, { &tr[4], 30 },
	};

	wow_tomb_prune(refs, ARRAY_SIZE(refs), 8);
	KUNIT_EXPECT_TRUE(test, tr[0].flags & WOW_TOMB_DROP);
	KUNIT_EXPECT_FALSE(test, tr[1].flags & WOW_TOMB_DROP);
	KUNIT_EXPECT_FALSE(test, tr[2].flags & WOW_TOMB_DROP);
	KUNIT_EXPECT_TRUE(test, tr[3].flags & WOW_TOMB_DROP);
	KUNIT_EXPECT_FALSE(test, tr[4].flags & WOW_TOMB_DROP);
}

struct held_segs {
	struct wow_tomb_range *tombs[3];
	u32 nr[3];
	u64 seq[3];
};

static void held_seg(void *ctx, u32 s, struct wow_tomb_held *h)
{
	struct held_segs *hs = ctx;

	h->tombs = hs->tombs[s];
	h->nr = &hs->nr[s];
	h->seg_seq = hs->seq[s];
}

/*
 * wow_tomb_prune_held: every segment's tombstones pruned together (a
 * carried copy in one segment, its newer holder in another), those
 * dropped taken out, the rest kept in their order and counted.
 */
static void wow_tombs_prune_held(struct kunit *test)
{
	struct wow_tomb_range a[] = {
		{ .start = 10, .nr = 4, .t = 20 },	/* life 50 holds it too */
		{ .start = 1, .nr = 1, .t = 7 },	/* below the oldest */
		{ .start = 30, .nr = 2, .t = 40 },
	};
	struct wow_tomb_range b[] = {
		{ .start = 10, .nr = 4, .t = 20 },
		{ .start = 5, .nr = 1, .t = 9 },
	};
	struct held_segs hs = {
		.tombs = { a, NULL, b }, .nr = { 3, 0, 2 }, .seq = { 30, 0, 50 },
	};

	KUNIT_ASSERT_EQ(test, wow_tomb_prune_held(3, 8, held_seg, &hs), 0);
	KUNIT_EXPECT_EQ(test, hs.nr[0], 1U);
	KUNIT_EXPECT_EQ(test, a[0].start, 30ULL);
	KUNIT_EXPECT_EQ(test, a[0].t, 40ULL);
	KUNIT_EXPECT_EQ(test, hs.nr[1], 0U);
	KUNIT_EXPECT_EQ(test, hs.nr[2], 2U);
	KUNIT_EXPECT_EQ(test, b[0].start, 10ULL);
	KUNIT_EXPECT_EQ(test, b[1].start, 5ULL);
}

static struct kunit_case wow_tombs_cases[] = {
	KUNIT_CASE(wow_tombs_seg_disk_seq),
	KUNIT_CASE(wow_tombs_seg_load_fate),
	KUNIT_CASE(wow_tombs_seg_min_life),
	KUNIT_CASE(wow_tombs_life_pass_bound),
	KUNIT_CASE(wow_tombs_life_pass_no_life),
	KUNIT_CASE(wow_tombs_life_pass_rises),
	KUNIT_CASE(wow_tombs_life_pass_model),
	KUNIT_CASE(wow_tombs_overlaps),
	KUNIT_CASE(wow_tombs_nested),
	KUNIT_CASE(wow_tombs_brute_force),
	KUNIT_CASE(wow_tombs_crafted_wide),
	KUNIT_CASE(wow_tombs_prune_at_load),
	KUNIT_CASE(wow_tombs_prune_held),
	{}
};

static struct kunit_suite wow_tombs_suite = {
	.name = "dm_wow_tombs",
	.test_cases = wow_tombs_cases,
};

kunit_test_suite(wow_tombs_suite);
