// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the origin flush generations (struct wow_flush_gen in
 * dm-wow.h), with plain numbers: a bypassed write counts as durable only
 * once a flush issued after it has succeeded, whatever other committers
 * do meanwhile.
 */
#include <kunit/test.h>

#include "../dm-wow.h"

/* Nothing bypassed: no flush; one write: one flush covers it. */
static void wow_flush_gen_basic(struct kunit *test)
{
	struct wow_flush_gen g = {};
	u64 gen;

	KUNIT_EXPECT_EQ(test, wow_flush_gen_begin(&g), 0ULL);
	wow_flush_gen_write(&g);
	gen = wow_flush_gen_begin(&g);
	KUNIT_EXPECT_NE(test, gen, 0ULL);
	wow_flush_gen_end(&g, gen);
	KUNIT_EXPECT_EQ(test, wow_flush_gen_begin(&g), 0ULL);
}

/*
 * While one committer's flush is in flight, a second committer (a FLUSH
 * beside a FUA record, or the destager's commit) must flush too: it may
 * not answer before the write is durable.
 */
static void wow_flush_gen_in_flight_covers_nothing(struct kunit *test)
{
	struct wow_flush_gen g = {};
	u64 first;

	wow_flush_gen_write(&g);
	first = wow_flush_gen_begin(&g);
	KUNIT_EXPECT_NE(test, first, 0ULL);
	/* the first flush has not ended */
	KUNIT_EXPECT_EQ(test, wow_flush_gen_begin(&g), first);
}

/* A failed flush (no end) leaves the write to the next one. */
static void wow_flush_gen_failed_flush(struct kunit *test)
{
	struct wow_flush_gen g = {};

	wow_flush_gen_write(&g);
	KUNIT_EXPECT_NE(test, wow_flush_gen_begin(&g), 0ULL);
	KUNIT_EXPECT_NE(test, wow_flush_gen_begin(&g), 0ULL);
}

/*
 * A write that completes after a flush was issued is not covered by it;
 * flushes that end out of order never move the mark back.
 */
static void wow_flush_gen_later_write(struct kunit *test)
{
	struct wow_flush_gen g = {};
	u64 g1, g2;

	wow_flush_gen_write(&g);
	g1 = wow_flush_gen_begin(&g);
	wow_flush_gen_write(&g);
	wow_flush_gen_end(&g, g1);
	g2 = wow_flush_gen_begin(&g);
	KUNIT_EXPECT_GT(test, g2, g1);
	wow_flush_gen_write(&g);
	wow_flush_gen_end(&g, wow_flush_gen_begin(&g));
	wow_flush_gen_end(&g, g2);	/* the older flush ends last */
	KUNIT_EXPECT_EQ(test, wow_flush_gen_begin(&g), 0ULL);
}

static struct kunit_case wow_flush_gen_cases[] = {
	KUNIT_CASE(wow_flush_gen_basic),
	KUNIT_CASE(wow_flush_gen_in_flight_covers_nothing),
	KUNIT_CASE(wow_flush_gen_failed_flush),
	KUNIT_CASE(wow_flush_gen_later_write),
	{}
};

static struct kunit_suite wow_flush_gen_suite = {
	.name = "dm_wow_flush_gen",
	.test_cases = wow_flush_gen_cases,
};

kunit_test_suite(wow_flush_gen_suite);
