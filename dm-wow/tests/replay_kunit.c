// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for what a record replayed after a checkpoint does
 * (dm-wow-replay.c), on plain arrays: an index of a copy per slot, the
 * seq each replayed copy came from, the segments' lives as the checkpoint
 * left them, behind struct wow_replay_ops.  Record headers are real ones
 * (the layout of dm-wow-record.h), never sealed: the replay trusts what
 * the chain checked.  The tests check which copies are the newest, which
 * the tombstones kill and the clean marks clean, what a new life drops,
 * that both ways of applying a range agree, and that a record naming a
 * block past the origin is refused.
 */
#include <kunit/test.h>

#include "../dm-wow-record.h"
#include "../dm-wow-replay.h"

#define NSEG	4
#define BPS	8
#define NSLOT	(NSEG * BPS)
#define BS	512
#define NOBL	64		/* origin blocks */
#define SLOT(s, i)	((s) * BPS + (i))

struct rstate {
	/* the index: a copy per slot */
	bool valid[NSLOT];
	bool dirty[NSLOT];
	u64 oblock[NSLOT];
	u32 crc[NSLOT];
	u64 seq[NSLOT];			/* of the replayed record, 0: none */
	/* the segments */
	u64 life[NSEG];			/* first seq of the life */
	u64 life_max[NSEG];		/* newest record of the life */
	u32 wp[NSEG];
	struct wow_tomb_range tombs[NSEG][8];
	u32 nr_tombs[NSEG];
	/* what the replay asked */
	u32 nr_lookups;
	u32 nr_valid;
	u32 nr_uncovered;
	u8 hdr[BS];
	struct wow_replay rp;
};

static bool r_lookup(void *ctx, u64 b, u32 *slot)
{
	struct rstate *st = ctx;
	u32 i;

	st->nr_lookups++;
	for (i = 0; i < NSLOT; i++)
		if (st->valid[i] && st->oblock[i] == b) {
			*slot = i;
			return true;
		}
	return false;
}

static bool r_valid(void *ctx, u32 slot, u64 *b)
{
	struct rstate *st = ctx;

	st->nr_valid++;
	*b = st->oblock[slot];
	return st->valid[slot];
}

static void r_insert(void *ctx, u64 b, u32 slot)
{
	struct rstate *st = ctx;

	st->valid[slot] = true;
	st->dirty[slot] = true;
	st->oblock[slot] = b;
}

static void r_remove(void *ctx, u32 slot)
{
	struct rstate *st = ctx;

	st->valid[slot] = false;
	st->dirty[slot] = false;
}

static void r_clean(void *ctx, u32 slot)
{
	struct rstate *st = ctx;

	st->dirty[slot] = false;
}

static void r_set_crc(void *ctx, u32 slot, u32 crc)
{
	struct rstate *st = ctx;

	st->crc[slot] = crc;
}

static u64 r_seq(void *ctx, u32 slot)
{
	struct rstate *st = ctx;

	return st->seq[slot];
}

static int r_set_seq(void *ctx, u32 slot, u64 seq)
{
	struct rstate *st = ctx;

	st->seq[slot] = seq;
	return 0;
}

static u64 r_ckpt_max(void *ctx, u32 s)
{
	struct rstate *st = ctx;

	return st->life[s] ? st->life_max[s] : 0;
}

static void r_new_life(void *ctx, u32 s, u64 seq)
{
	struct rstate *st = ctx;

	st->life[s] = seq;
	st->life_max[s] = 0;
	st->wp[s] = 0;
	st->nr_tombs[s] = 0;
}

static int r_reserve_tombs(void *ctx, u32 s, u32 n)
{
	struct rstate *st = ctx;

	return st->nr_tombs[s] + n > ARRAY_SIZE(st->tombs[s]) ? -ENOMEM : 0;
}

static void r_add_tomb(void *ctx, u32 s, const struct wow_tomb_range *t)
{
	struct rstate *st = ctx;

	st->tombs[s][st->nr_tombs[s]++] = *t;
}

static void r_written(void *ctx, u32 s, u64 seq, u32 wp)
{
	struct rstate *st = ctx;

	st->life_max[s] = seq;
	st->wp[s] = wp;
}

static void r_uncovered(void *ctx, u32 slot, const struct wow_tomb_range *t)
{
	struct rstate *st = ctx;

	st->nr_uncovered++;
}

static const struct wow_replay_ops r_ops = {
	.lookup = r_lookup,
	.valid = r_valid,
	.insert = r_insert,
	.remove = r_remove,
	.clean = r_clean,
	.set_crc = r_set_crc,
	.seq = r_seq,
	.set_seq = r_set_seq,
	.ckpt_max = r_ckpt_max,
	.new_life = r_new_life,
	.reserve_tombs = r_reserve_tombs,
	.add_tomb = r_add_tomb,
	.written = r_written,
	.uncovered = r_uncovered,
};

static struct rstate *new_state(struct kunit *test)
{
	struct rstate *st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, st);
	return st;
}

/* Segment @s holds a checkpointed life, records @first to @max. */
static void ckpt_life(struct rstate *st, u32 s, u64 first, u64 max)
{
	st->life[s] = first;
	st->life_max[s] = max;
	st->wp[s] = BPS;
}

/* The checkpoint has origin block @b's copy in slot @slot. */
static void ckpt_copy(struct rstate *st, u32 slot, u64 b, bool dirty)
{
	st->valid[slot] = true;
	st->dirty[slot] = dirty;
	st->oblock[slot] = b;
}

/* The replay, set up after the checkpoint's state is in. */
static void start(struct kunit *test, struct rstate *st)
{
	st->rp = (struct wow_replay){
		.nr_segments = NSEG, .blocks_per_seg = BPS, .nr_slots = NSLOT,
		.nr_oblocks = NOBL, .ops = &r_ops, .ctx = st,
	};
	KUNIT_ASSERT_EQ(test, wow_replay_init(&st->rp), 0);
}

static void stop(struct rstate *st)
{
	wow_replay_free(&st->rp);
}

/*
 * Apply the record at block @off of segment @s: seq @seq, data for origin
 * blocks @obs (@n, block crc 0x100 + i each), tombstones @t (@nt).
 */
static int rec(struct rstate *st, u32 s, u32 off, u64 seq, const u64 *obs,
	       u32 n, const struct wow_tomb_range *t, u32 nt)
{
	struct wow_record_info ri = {
		.seq = seq, .nr_data = n, .nr_tombs = nt,
		.flags = WOW_REC_CRCS,
	};
	struct wow_tomb *wt = wow_record_tombs(st->hdr);
	__le64 *raw = wow_record_oblocks(st->hdr, nt);
	__le32 *crcs = wow_record_crcs(st->hdr, nt, n);
	u32 i;

	memset(st->hdr, 0, BS);
	for (i = 0; i < nt; i++) {
		wt[i].start = cpu_to_le64(t[i].start);
		wt[i].t = cpu_to_le64(t[i].t);
		wt[i].nr = cpu_to_le32(t[i].nr);
		wt[i].flags = cpu_to_le32(t[i].flags);
	}
	for (i = 0; i < n; i++) {
		raw[i] = cpu_to_le64(obs[i]);
		crcs[i] = cpu_to_le32(0x100 + i);
	}
	return wow_replay_apply(&st->rp, s, off, st->hdr, &ri);
}

/* The slot holding origin block @b, -1 when none. */
static int holder(struct rstate *st, u64 b)
{
	u32 i;

	for (i = 0; i < NSLOT; i++)
		if (st->valid[i] && st->oblock[i] == b)
			return i;
	return -1;
}

static void wow_replay_record_copies_become_newest(struct kunit *test)
{
	struct rstate *st = new_state(test);
	static const u64 obs[] = { 5, 7 };

	ckpt_life(st, 0, 10, 20);
	ckpt_copy(st, SLOT(0, 2), 5, false);
	start(test, st);
	KUNIT_EXPECT_EQ(test, rec(st, 1, 0, 30, obs, 2, NULL, 0), 0);
	KUNIT_EXPECT_EQ(test, holder(st, 5), SLOT(1, 1));
	KUNIT_EXPECT_EQ(test, holder(st, 7), SLOT(1, 2));
	KUNIT_EXPECT_TRUE(test, st->dirty[SLOT(1, 1)]);
	KUNIT_EXPECT_FALSE(test, st->valid[SLOT(0, 2)]);
	KUNIT_EXPECT_EQ(test, st->seq[SLOT(1, 1)], 30ULL);
	KUNIT_EXPECT_EQ(test, st->crc[SLOT(1, 2)], 0x101U);
	/* the segment: a new life, written up to the record's end */
	KUNIT_EXPECT_EQ(test, st->life[1], 30ULL);
	KUNIT_EXPECT_EQ(test, st->life_max[1], 30ULL);
	KUNIT_EXPECT_EQ(test, st->wp[1], 3U);
	stop(st);
}

static void wow_replay_tombstone_covers_replayed_copy_by_seq(struct kunit *test)
{
	struct rstate *st = new_state(test);
	static const u64 obs1[] = { 5 }, obs2[] = { 6 };
	const struct wow_tomb_range kill = { .start = 5, .nr = 2, .t = 30 };

	start(test, st);
	KUNIT_EXPECT_EQ(test, rec(st, 1, 0, 30, obs1, 1, NULL, 0), 0);
	/* t 30: seq 30's copy of 5 goes, seq 31's copy of 6 stays */
	KUNIT_EXPECT_EQ(test, rec(st, 1, 2, 31, obs2, 1, &kill, 1), 0);
	KUNIT_EXPECT_EQ(test, holder(st, 5), -1);
	KUNIT_EXPECT_EQ(test, holder(st, 6), SLOT(1, 3));
	/* the segment holds the tombstone */
	KUNIT_ASSERT_EQ(test, st->nr_tombs[1], 1U);
	KUNIT_EXPECT_EQ(test, st->tombs[1][0].start, 5ULL);
	KUNIT_EXPECT_EQ(test, st->wp[1], 4U);
	stop(st);
}

static void wow_replay_tombstone_covers_checkpointed_copy_by_life(struct kunit *test)
{
	struct rstate *st = new_state(test);
	const struct wow_tomb_range kill = { .start = 3, .nr = 2, .t = 25 };

	ckpt_life(st, 0, 10, 20);
	ckpt_copy(st, SLOT(0, 1), 3, true);
	ckpt_life(st, 2, 22, 40);
	ckpt_copy(st, SLOT(2, 1), 4, true);
	start(test, st);
	KUNIT_EXPECT_EQ(test, rec(st, 1, 0, 50, NULL, 0, &kill, 1), 0);
	/* life 10..20 is all older than t 25; life 22..40 may not be */
	KUNIT_EXPECT_EQ(test, holder(st, 3), -1);
	KUNIT_EXPECT_EQ(test, holder(st, 4), SLOT(2, 1));
	KUNIT_EXPECT_EQ(test, st->nr_uncovered, 1U);
	stop(st);
}

static void wow_replay_clean_mark_cleans_and_is_not_held(struct kunit *test)
{
	struct rstate *st = new_state(test);
	static const u64 obs[] = { 8 };
	const struct wow_tomb_range marks[] = {
		{ .start = 3, .nr = 1, .t = 20, .flags = WOW_TOMB_CLEAN },
		{ .start = 8, .nr = 1, .t = 30, .flags = WOW_TOMB_CLEAN },
	};

	ckpt_life(st, 0, 10, 20);
	ckpt_copy(st, SLOT(0, 1), 3, true);
	start(test, st);
	KUNIT_EXPECT_EQ(test, rec(st, 1, 0, 30, obs, 1, NULL, 0), 0);
	KUNIT_EXPECT_EQ(test, rec(st, 1, 2, 31, NULL, 0, marks, 2), 0);
	KUNIT_EXPECT_EQ(test, holder(st, 3), SLOT(0, 1));
	KUNIT_EXPECT_FALSE(test, st->dirty[SLOT(0, 1)]);
	KUNIT_EXPECT_EQ(test, holder(st, 8), SLOT(1, 1));
	KUNIT_EXPECT_FALSE(test, st->dirty[SLOT(1, 1)]);
	KUNIT_EXPECT_EQ(test, st->nr_tombs[1], 0U);
	stop(st);
}

static void wow_replay_new_life_drops_old_copies(struct kunit *test)
{
	struct rstate *st = new_state(test);
	static const u64 obs[] = { 9 };
	const struct wow_tomb_range old = { .start = 1, .nr = 1, .t = 5 };

	ckpt_life(st, 0, 10, 20);
	ckpt_copy(st, SLOT(0, 0), 1, true);
	ckpt_copy(st, SLOT(0, 1), 2, false);
	ckpt_copy(st, SLOT(0, 5), 3, true);
	st->tombs[0][0] = old;
	st->nr_tombs[0] = 1;
	ckpt_copy(st, SLOT(2, 0), 4, true);
	start(test, st);
	KUNIT_EXPECT_EQ(test, rec(st, 0, 0, 30, obs, 1, NULL, 0), 0);
	KUNIT_EXPECT_EQ(test, holder(st, 1), -1);
	KUNIT_EXPECT_EQ(test, holder(st, 2), -1);
	KUNIT_EXPECT_EQ(test, holder(st, 3), -1);
	KUNIT_EXPECT_EQ(test, holder(st, 9), SLOT(0, 1));
	/* another segment's copy is untouched */
	KUNIT_EXPECT_EQ(test, holder(st, 4), SLOT(2, 0));
	KUNIT_EXPECT_EQ(test, st->life[0], 30ULL);
	KUNIT_EXPECT_EQ(test, st->nr_tombs[0], 0U);
	KUNIT_EXPECT_EQ(test, st->wp[0], 2U);
	stop(st);
}

/* The state both ways of applying a range start from. */
static void range_state(struct kunit *test, struct rstate *st)
{
	static const u64 obs1[] = { 1 }, obs2[] = { 40 };

	ckpt_life(st, 0, 10, 20);
	ckpt_copy(st, SLOT(0, 1), 50, true);
	ckpt_life(st, 2, 22, 40);
	ckpt_copy(st, SLOT(2, 1), 60, true);
	start(test, st);
	KUNIT_EXPECT_EQ(test, rec(st, 1, 0, 30, obs1, 1, NULL, 0), 0);
	KUNIT_EXPECT_EQ(test, rec(st, 1, 2, 36, obs2, 1, NULL, 0), 0);
}

static void wow_replay_wide_range_same_as_narrow(struct kunit *test)
{
	struct rstate *wide = new_state(test), *narrow = new_state(test);
	const struct wow_tomb_range all = { .start = 0, .nr = NOBL, .t = 35 };
	struct wow_tomb_range half = all;
	u32 lookups, walked;

	range_state(test, wide);
	range_state(test, narrow);
	/* NOBL > NSLOT: the wide one walks every slot */
	walked = wide->nr_valid;
	lookups = wide->nr_lookups;
	wow_replay_tomb(&wide->rp, &all);
	KUNIT_EXPECT_EQ(test, wide->nr_valid - walked, (u32)NSLOT);
	KUNIT_EXPECT_EQ(test, wide->nr_lookups, lookups);
	/* the same blocks in two halves of NSLOT: by lookups */
	half.nr = NOBL / 2;
	lookups = narrow->nr_lookups;
	wow_replay_tomb(&narrow->rp, &half);
	half.start = NOBL / 2;
	wow_replay_tomb(&narrow->rp, &half);
	KUNIT_EXPECT_EQ(test, narrow->nr_lookups - lookups, (u32)NOBL);
	/* seq 30 and life 10..20 covered; seq 36 and life 22..40 not */
	KUNIT_EXPECT_EQ(test, holder(wide, 1), -1);
	KUNIT_EXPECT_EQ(test, holder(wide, 50), -1);
	KUNIT_EXPECT_EQ(test, holder(wide, 40), SLOT(1, 3));
	KUNIT_EXPECT_EQ(test, holder(wide, 60), SLOT(2, 1));
	KUNIT_EXPECT_EQ(test, memcmp(wide->valid, narrow->valid,
				     sizeof(wide->valid)), 0);
	KUNIT_EXPECT_EQ(test, memcmp(wide->dirty, narrow->dirty,
				     sizeof(wide->dirty)), 0);
	KUNIT_EXPECT_EQ(test, wide->nr_uncovered, narrow->nr_uncovered);
	stop(wide);
	stop(narrow);
}

static void wow_replay_refuses_origin_block_past_end(struct kunit *test)
{
	struct rstate *st = new_state(test);
	static const u64 obs[] = { 3, NOBL };
	const struct wow_tomb_range kill = { .start = 5, .nr = 1, .t = 31 };
	static const u64 last[] = { NOBL - 1 };

	start(test, st);
	KUNIT_EXPECT_EQ(test, rec(st, 1, 0, 30, last, 1, NULL, 0), 0);
	KUNIT_EXPECT_EQ(test, rec(st, 1, 2, 31, obs, 2, &kill, 1), -EUCLEAN);
	/* nothing of the refused record is applied */
	KUNIT_EXPECT_EQ(test, holder(st, 3), -1);
	KUNIT_EXPECT_EQ(test, holder(st, NOBL - 1), SLOT(1, 1));
	KUNIT_EXPECT_EQ(test, st->nr_tombs[1], 0U);
	KUNIT_EXPECT_EQ(test, st->wp[1], 2U);
	KUNIT_EXPECT_EQ(test, st->life_max[1], 30ULL);
	stop(st);
}

static struct kunit_case wow_replay_cases[] = {
	KUNIT_CASE(wow_replay_record_copies_become_newest),
	KUNIT_CASE(wow_replay_tombstone_covers_replayed_copy_by_seq),
	KUNIT_CASE(wow_replay_tombstone_covers_checkpointed_copy_by_life),
	KUNIT_CASE(wow_replay_clean_mark_cleans_and_is_not_held),
	KUNIT_CASE(wow_replay_new_life_drops_old_copies),
	KUNIT_CASE(wow_replay_wide_range_same_as_narrow),
	KUNIT_CASE(wow_replay_refuses_origin_block_past_end),
	{}
};

static struct kunit_suite wow_replay_suite = {
	.name = "dm_wow_replay",
	.test_cases = wow_replay_cases,
};

kunit_test_suite(wow_replay_suite);
