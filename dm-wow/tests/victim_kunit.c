// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for cleaning's victim choice (dm-wow-victim.c), with plain
 * numbers: the lazy recycling threshold, the cost-benefit order, clean
 * segments first, and a property check of the score's monotony.
 */
#include <kunit/test.h>
#include <linux/prandom.h>

#include "../dm-wow.h"
#include "../dm-wow-victim.h"

#define B	256U		/* blocks per segment */

static struct wow_seg_usage U(u32 dirty, u64 age)
{
	return (struct wow_seg_usage){ .nr_dirty = dirty, .age = age };
}

static void wow_victim_threshold(struct kunit *test)
{
	struct wow_seg_usage u;

	/* lazy: half of it must come free */
	u = U(128, 5);
	KUNIT_EXPECT_TRUE(test, wow_victim_eligible(&u, B, 50, false));
	u = U(129, 5);
	KUNIT_EXPECT_FALSE(test, wow_victim_eligible(&u, B, 50, false));
	/* urgent: 1/16 of it is enough */
	KUNIT_EXPECT_TRUE(test, wow_victim_eligible(&u, B, 50, true));
	u = U(B - 16, 5);
	KUNIT_EXPECT_TRUE(test, wow_victim_eligible(&u, B, 50, true));
	u = U(B - 15, 5);
	KUNIT_EXPECT_FALSE(test, wow_victim_eligible(&u, B, 50, true));
	/* a wholly dirty segment gains nothing, ever */
	u = U(B, 5);
	KUNIT_EXPECT_FALSE(test, wow_victim_eligible(&u, B, 0, true));
	KUNIT_EXPECT_EQ(test, wow_victim_score(&u, B), 0ULL);
	u = U(0, 0);
	KUNIT_EXPECT_FALSE(test, wow_victim_eligible(&u, 0, 0, true));
	/* tiny segments: urgent still needs one block of gain */
	u = U(3, 0);
	KUNIT_EXPECT_TRUE(test, wow_victim_eligible(&u, 4, 50, true));
	u = U(4, 0);
	KUNIT_EXPECT_FALSE(test, wow_victim_eligible(&u, 4, 50, true));
}

static void wow_victim_order(struct kunit *test)
{
	struct wow_seg_usage a, b;

	/* same age: fewer dirty blocks is better */
	a = U(10, 100);
	b = U(20, 100);
	KUNIT_EXPECT_GT(test, wow_victim_score(&a, B), wow_victim_score(&b, B));
	/* same dirt: older is better */
	a = U(64, 1000);
	b = U(64, 100);
	KUNIT_EXPECT_GT(test, wow_victim_score(&a, B), wow_victim_score(&b, B));
	/*
	 * The trade: u = 0.1 at age 100 scores (0.9 / 1.1) * 100 = 82, u =
	 * 0.5 at age 1000 scores (0.5 / 1.5) * 1000 = 333: the old, half
	 * dirty segment is the better buy (its data is cold; the young one's
	 * is still dying by itself).
	 */
	a = U(B / 10, 100);
	b = U(B / 2, 1000);
	KUNIT_EXPECT_GT(test, wow_victim_score(&b, B), wow_victim_score(&a, B));
	/* ... but at age 500 the young one is: (0.9 / 1.1) * 500 = 409 */
	a = U(B / 10, 500);
	KUNIT_EXPECT_GT(test, wow_victim_score(&a, B), wow_victim_score(&b, B));
	/* a clean segment costs nothing: it beats any dirty one */
	a = U(0, 0);
	b = U(1, 1ULL << 40);
	KUNIT_EXPECT_GT(test, wow_victim_score(&a, B), wow_victim_score(&b, B));
	/* and of two clean ones the older goes first */
	b = U(0, 7);
	KUNIT_EXPECT_GT(test, wow_victim_score(&b, B), wow_victim_score(&a, B));
	/* absurd ages saturate instead of wrapping */
	a = U(1, U64_MAX);
	b = U(1, 1ULL << 33);
	KUNIT_EXPECT_EQ(test, wow_victim_score(&a, B), wow_victim_score(&b, B));
	KUNIT_EXPECT_GT(test, wow_victim_score(&a, B), 0ULL);
	a = U(0, U64_MAX);
	KUNIT_EXPECT_GT(test, wow_victim_score(&a, B), wow_victim_score(&b, B));
}

static void wow_victim_pick_best(struct kunit *test)
{
	const struct wow_seg_usage segs[] = {
		U(200, 90000),	/* 0: too dirty unless urgent */
		U(100, 50),	/* 1 */
		U(100, 5000),	/* 2: best dirty one */
		U(B, 99999),	/* 3: never */
		U(100, 5000),	/* 4: same as 2, offered later */
		U(120, 5000),	/* 5 */
	};
	struct wow_victim_pick p;
	u32 i;

	wow_victim_pick_init(&p);
	KUNIT_EXPECT_EQ(test, p.seg, WOW_NO_SEG);
	for (i = 0; i < ARRAY_SIZE(segs); i++)
		wow_victim_consider(&p, i, &segs[i], B, 50, false);
	KUNIT_EXPECT_EQ(test, p.seg, 2U);

	/* urgent: segment 0 qualifies, and its age wins it */
	wow_victim_pick_init(&p);
	for (i = 0; i < ARRAY_SIZE(segs); i++)
		wow_victim_consider(&p, i, &segs[i], B, 50, true);
	KUNIT_EXPECT_EQ(test, p.seg, 0U);

	/* nothing eligible: no victim */
	wow_victim_pick_init(&p);
	wow_victim_consider(&p, 0, &segs[0], B, 50, false);
	wow_victim_consider(&p, 3, &segs[3], B, 50, true);
	KUNIT_EXPECT_EQ(test, p.seg, WOW_NO_SEG);
}

/* Fewer dirty blocks and more age never score lower. */
static void wow_victim_monotone(struct kunit *test)
{
	struct rnd_state rs;
	u32 i;

	prandom_seed_state(&rs, 42);
	for (i = 0; i < 20000; i++) {
		u32 blocks = 4 << (prandom_u32_state(&rs) % 16);
		struct wow_seg_usage a, b;

		a.nr_dirty = prandom_u32_state(&rs) % (blocks + 1);
		a.age = prandom_u32_state(&rs) >> (prandom_u32_state(&rs) % 32);
		b.nr_dirty = a.nr_dirty + prandom_u32_state(&rs) %
			     (blocks + 1 - a.nr_dirty);
		b.age = a.age - (a.age ? prandom_u32_state(&rs) % a.age : 0);
		KUNIT_ASSERT_GE_MSG(test, wow_victim_score(&a, blocks),
				    wow_victim_score(&b, blocks),
				    "blocks %u: a %u/%llu b %u/%llu", blocks,
				    a.nr_dirty, a.age, b.nr_dirty, b.age);
		if (wow_victim_eligible(&b, blocks, 50, false))
			KUNIT_ASSERT_TRUE(test, wow_victim_eligible(&a, blocks,
								    50, false));
	}
}

static struct kunit_case wow_victim_cases[] = {
	KUNIT_CASE(wow_victim_threshold),
	KUNIT_CASE(wow_victim_order),
	KUNIT_CASE(wow_victim_pick_best),
	KUNIT_CASE(wow_victim_monotone),
	{}
};

static struct kunit_suite wow_victim_suite = {
	.name = "dm_wow_victim",
	.test_cases = wow_victim_cases,
};

kunit_test_suite(wow_victim_suite);
