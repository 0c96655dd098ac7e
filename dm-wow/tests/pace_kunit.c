// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for write pacing (dm-wow-pace.c), with plain numbers: the
 * admitted rate against free space, the freed-rate average, and the token
 * bucket over simulated time.
 */
#include <kunit/test.h>

#include "../dm-wow.h"
#include "../dm-wow-pace.h"

#define MS	1000000ULL	/* ns */

static void wow_pace_rate_levels(struct kunit *test)
{
	/* reserve 100 blocks, pacing starts at 1100, space frees at 1000/s */
	KUNIT_EXPECT_EQ(test, wow_pace_rate(1100, 100, 1100, 1000),
			WOW_PACE_UNLIMITED);
	KUNIT_EXPECT_EQ(test, wow_pace_rate(5000, 100, 1100, 1000),
			WOW_PACE_UNLIMITED);
	KUNIT_EXPECT_EQ(test, wow_pace_rate(100, 100, 1100, 1000), 0ULL);
	KUNIT_EXPECT_EQ(test, wow_pace_rate(0, 100, 1100, 1000), 0ULL);
	/* just under the start: four times the freed rate */
	KUNIT_EXPECT_EQ(test, wow_pace_rate(1099, 100, 1100, 1000), 3994ULL);
	/* half way: 2.5 times */
	KUNIT_EXPECT_EQ(test, wow_pace_rate(600, 100, 1100, 1000), 2500ULL);
	/* one block above the reserve: the freed rate */
	KUNIT_EXPECT_EQ(test, wow_pace_rate(101, 100, 1100, 1000), 1002ULL);
	/* nothing freed yet: the margin, scaled, and never zero */
	KUNIT_EXPECT_EQ(test, wow_pace_rate(600, 100, 1100, 0), 250ULL);
	KUNIT_EXPECT_EQ(test, wow_pace_rate(101, 100, 1100, 0), 1ULL);
	/* absurd freed rates saturate */
	KUNIT_EXPECT_GT(test, wow_pace_rate(600, 100, 1100, U64_MAX), 1ULL << 60);
}

/* More free space never admits less. */
static void wow_pace_rate_monotone(struct kunit *test)
{
	u64 f, prev, r, least;
	u64 rates[] = { 0, 1, 37, 1000, 1ULL << 40 };
	u32 i;

	for (i = 0; i < ARRAY_SIZE(rates); i++) {
		least = rates[i] ? rates[i] : 1;
		prev = 0;
		for (f = 0; f <= 5000; f++) {
			r = wow_pace_rate(f, 1000, 4000, rates[i]);
			KUNIT_ASSERT_GE_MSG(test, r, prev, "free %llu rate %llu",
					    f, rates[i]);
			if (f > 1000 && f < 4000)
				KUNIT_ASSERT_GE(test, r, least);
			prev = r;
		}
	}
}

static void wow_pace_dirty_levels(struct kunit *test)
{
	/* high 4000 bp, span 500, destage cleans 200 blocks/s */
	KUNIT_EXPECT_EQ(test, wow_pace_dirty_rate(0, 4000, 500, 200),
			WOW_PACE_UNLIMITED);
	KUNIT_EXPECT_EQ(test, wow_pace_dirty_rate(3999, 4000, 500, 200),
			WOW_PACE_UNLIMITED);
	/* at high: four times the cleaned rate */
	KUNIT_EXPECT_EQ(test, wow_pace_dirty_rate(4000, 4000, 500, 200), 800ULL);
	/* half the span: 4 - 1.75 */
	KUNIT_EXPECT_EQ(test, wow_pace_dirty_rate(4250, 4000, 500, 200), 450ULL);
	/* at and past the span: half the cleaned rate */
	KUNIT_EXPECT_EQ(test, wow_pace_dirty_rate(4500, 4000, 500, 200), 100ULL);
	KUNIT_EXPECT_EQ(test, wow_pace_dirty_rate(10000, 4000, 500, 200), 100ULL);
	/* settles where admission meets the cleaned rate: 6/7 of the span */
	KUNIT_EXPECT_GE(test, wow_pace_dirty_rate(4428, 4000, 500, 200), 200ULL);
	KUNIT_EXPECT_LE(test, wow_pace_dirty_rate(4430, 4000, 500, 200), 200ULL);
	/* nothing cleaned yet, or no span: the floor, never zero */
	KUNIT_EXPECT_EQ(test, wow_pace_dirty_rate(4100, 4000, 500, 0),
			(u64)WOW_PACE_DIRTY_FLOOR);
	KUNIT_EXPECT_EQ(test, wow_pace_dirty_rate(10000, 10000, 0, 200), 100ULL);
	/* absurd cleaned rates do not overflow */
	KUNIT_EXPECT_GT(test, wow_pace_dirty_rate(4000, 4000, 500, U64_MAX),
			1ULL << 41);
}

/* More dirty data never admits more; the floor always holds. */
static void wow_pace_dirty_monotone(struct kunit *test)
{
	u64 rates[] = { 0, 1, 175, 1ULL << 40 };
	u64 prev, r;
	u32 i, occ;

	for (i = 0; i < ARRAY_SIZE(rates); i++) {
		prev = WOW_PACE_UNLIMITED;
		for (occ = 0; occ <= 10000; occ++) {
			r = wow_pace_dirty_rate(occ, 6000, 500, rates[i]);
			KUNIT_ASSERT_LE_MSG(test, r, prev, "occ %u rate %llu",
					    occ, rates[i]);
			KUNIT_ASSERT_GE(test, r, (u64)WOW_PACE_DIRTY_FLOOR);
			prev = r;
		}
	}
}

/* A refund puts back what an admission took. */
static void wow_pace_refunds(struct kunit *test)
{
	struct wow_pace p;
	u64 wait, now = 1000 * MS;

	wow_pace_init(&p);
	/* a burst of 62.5 blocks from the idle start */
	KUNIT_EXPECT_TRUE(test, wow_pace_admit(&p, 4, 1000, now, &wait));
	KUNIT_EXPECT_TRUE(test, wow_pace_admit(&p, 58, 1000, now, &wait));
	KUNIT_EXPECT_FALSE(test, wow_pace_admit(&p, 58, 1000, now, &wait));
	wow_pace_refund(&p, 58);
	KUNIT_EXPECT_TRUE(test, wow_pace_admit(&p, 58, 1000, now, &wait));
	KUNIT_EXPECT_FALSE(test, wow_pace_admit(&p, 1, 1000, now, &wait));
}

/* Paced records wait for a batch: a burst, or what is queued. */
static void wow_pace_batches(struct kunit *test)
{
	struct wow_pace p;
	u64 wait, now = 1000 * MS;

	KUNIT_EXPECT_EQ(test, wow_pace_batch(WOW_PACE_UNLIMITED, 100, 1), 1U);
	KUNIT_EXPECT_EQ(test, wow_pace_batch(1600, 1000, 1), 100U);
	KUNIT_EXPECT_EQ(test, wow_pace_batch(1600, 7, 1), 7U);
	KUNIT_EXPECT_EQ(test, wow_pace_batch(8, 7, 1), 1U);
	KUNIT_EXPECT_EQ(test, wow_pace_batch(1600, 0, 0), 1U);
	/* never less than the first write asks */
	KUNIT_EXPECT_EQ(test, wow_pace_batch(128, 1000, 16), 16U);
	KUNIT_EXPECT_EQ(test, wow_pace_batch(1600, 1000, 256), 256U);

	wow_pace_init(&p);
	/* 160 blocks/s from an empty bucket: a batch of 10 waits ~62 ms */
	KUNIT_EXPECT_TRUE(test, wow_pace_admit(&p, 10, 160, now, &wait));
	KUNIT_EXPECT_FALSE(test, wow_pace_admit_batch(&p, 1, 10, 160, now,
						      &wait));
	KUNIT_EXPECT_GE(test, wait, 60 * MS);
	KUNIT_EXPECT_LE(test, wait, 64 * MS);
	/* the batch is waited for, but only the write's blocks are taken */
	now += wait;
	KUNIT_EXPECT_TRUE(test, wow_pace_admit_batch(&p, 1, 10, 160, now,
						     &wait));
	KUNIT_EXPECT_FALSE(test, wow_pace_admit_batch(&p, 1, 10, 160, now,
						      &wait));
	/* so nine more writes of one block go in, the eleventh waits */
	for (int i = 0; i < 9; i++)
		KUNIT_EXPECT_TRUE(test, wow_pace_admit(&p, 1, 160, now, &wait));
	KUNIT_EXPECT_FALSE(test, wow_pace_admit(&p, 1, 160, now, &wait));
}

/*
 * A write larger than a burst, first of its record: as the commit worker
 * asks (admit it once the batch has accrued, else wait what admit says),
 * it goes in within its time at the rate.
 */
static void wow_pace_big_write_behind_batch(struct kunit *test)
{
	struct wow_pace p;
	u64 wait, now = 1000 * MS, start;
	u32 batch = wow_pace_batch(128, 16, 16), tries;

	wow_pace_init(&p);
	KUNIT_EXPECT_TRUE(test, wow_pace_admit(&p, 8, 128, now, &wait));
	start = now;
	for (tries = 0; tries < 1000; tries++) {
		if (wow_pace_admit_batch(&p, 16, batch, 128, now, &wait))
			break;
		KUNIT_ASSERT_GT(test, wait, 0ULL);
		now += wait;
	}
	KUNIT_EXPECT_LT(test, tries, 1000U);
	/* 16 blocks at 128 a second: 125 ms, give or take a tick */
	KUNIT_EXPECT_LE(test, now - start, 130 * MS);

	/* a batch smaller than the write still waits for all of the write */
	KUNIT_EXPECT_FALSE(test, wow_pace_admit_batch(&p, 16, 8, 128,
						      now + 70 * MS, &wait));
	now += 126 * MS;
	KUNIT_EXPECT_TRUE(test, wow_pace_admit_batch(&p, 16, 8, 128, now,
						     &wait));
	KUNIT_EXPECT_FALSE(test, wow_pace_admit(&p, 1, 128, now, &wait));
}

static void wow_pace_sampling(struct kunit *test)
{
	struct wow_pace p;

	wow_pace_init(&p);
	/* no time, no sample */
	wow_pace_sample(&p, 500, 0);
	KUNIT_EXPECT_EQ(test, p.freed_rate, 0ULL);
	/* the first sample sets the rate: 256 blocks in 100 ms */
	wow_pace_sample(&p, 256, 100 * MS);
	KUNIT_EXPECT_EQ(test, p.freed_rate, 2560ULL);
	/* then each weighs a quarter */
	wow_pace_sample(&p, 0, 100 * MS);
	KUNIT_EXPECT_EQ(test, p.freed_rate, 1920ULL);
	wow_pace_sample(&p, 512, 100 * MS);
	KUNIT_EXPECT_EQ(test, p.freed_rate, (3 * 1920ULL + 5120) / 4);
	/* huge counts over tiny times do not overflow */
	wow_pace_sample(&p, U64_MAX, 1);
	KUNIT_EXPECT_GT(test, p.freed_rate, 1ULL << 40);
}

static void wow_pace_bucket(struct kunit *test)
{
	struct wow_pace p;
	u64 wait, now = 5000 * MS;

	wow_pace_init(&p);
	/* unlimited: always, and the bucket stays empty */
	KUNIT_EXPECT_TRUE(test, wow_pace_admit(&p, 1000, WOW_PACE_UNLIMITED,
					       now, &wait));
	KUNIT_EXPECT_EQ(test, p.tokens, 0ULL);
	/* rate 0: wait for space, no time to name */
	KUNIT_EXPECT_FALSE(test, wow_pace_admit(&p, 1, 0, now, &wait));
	KUNIT_EXPECT_EQ(test, wait, 0ULL);

	/* 1000 blocks/s, bucket empty: 8 blocks wait about 8 ms */
	KUNIT_EXPECT_FALSE(test, wow_pace_admit(&p, 8, 1000, now, &wait));
	KUNIT_EXPECT_GE(test, wait, 7 * MS);
	KUNIT_EXPECT_LE(test, wait, 9 * MS);
	now += wait;
	KUNIT_EXPECT_TRUE(test, wow_pace_admit(&p, 8, 1000, now, &wait));
	KUNIT_EXPECT_FALSE(test, wow_pace_admit(&p, 8, 1000, now, &wait));

	/* a long idle fills only a burst of 1/16 s: 62 blocks */
	now += 10000 * MS;
	KUNIT_EXPECT_TRUE(test, wow_pace_admit(&p, 62, 1000, now, &wait));
	KUNIT_EXPECT_FALSE(test, wow_pace_admit(&p, 1, 1000, now, &wait));

	/* a write larger than the burst still gets in, after its time */
	KUNIT_EXPECT_FALSE(test, wow_pace_admit(&p, 256, 1000, now, &wait));
	KUNIT_EXPECT_GE(test, wait, 255 * MS);
	now += wait;
	KUNIT_EXPECT_TRUE(test, wow_pace_admit(&p, 256, 1000, now, &wait));

	/* a clock that steps back adds nothing */
	KUNIT_EXPECT_FALSE(test, wow_pace_admit(&p, 1, 1000, now - 500 * MS,
						&wait));
}

/* Over simulated seconds the bucket admits the rate, give or take a burst. */
static void wow_pace_long_run(struct kunit *test)
{
	struct wow_pace p;
	u64 now = 0, admitted = 0, wait;
	u32 step;

	wow_pace_init(&p);
	for (step = 0; step < 100000 && now < 10000 * MS; step++) {
		if (wow_pace_admit(&p, 8, 3000, now, &wait)) {
			admitted += 8;
			continue;
		}
		KUNIT_ASSERT_GT(test, wait, 0ULL);
		now += wait;
	}
	KUNIT_EXPECT_GE(test, admitted, 29900ULL);
	KUNIT_EXPECT_LE(test, admitted, 30000ULL + 3000 / 16 + 8);
}

static struct kunit_case wow_pace_cases[] = {
	KUNIT_CASE(wow_pace_rate_levels),
	KUNIT_CASE(wow_pace_rate_monotone),
	KUNIT_CASE(wow_pace_dirty_levels),
	KUNIT_CASE(wow_pace_dirty_monotone),
	KUNIT_CASE(wow_pace_refunds),
	KUNIT_CASE(wow_pace_batches),
	KUNIT_CASE(wow_pace_big_write_behind_batch),
	KUNIT_CASE(wow_pace_sampling),
	KUNIT_CASE(wow_pace_bucket),
	KUNIT_CASE(wow_pace_long_run),
	{}
};

static struct kunit_suite wow_pace_suite = {
	.name = "dm_wow_pace",
	.test_cases = wow_pace_cases,
};

kunit_test_suite(wow_pace_suite);
