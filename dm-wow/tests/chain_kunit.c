// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for recovery's decisions along the log's chain
 * (dm-wow-chain.c), with a log made of plain numbers: each block of each
 * segment is empty, a bad header of ours, or a record (seq, the seq of its
 * segment's life, durable_seq, data blocks, next segment, data intact or
 * not).  The tests check which records are applied, in what order, and
 * whether the chain's end is a torn tail or a durable record lost.
 */
#include <kunit/test.h>

#include "../dm-wow.h"

#define NSEG	4
#define BPS	8

struct fblk {
	enum { EMPTY, BAD, REC } what;
	u64 seq, life, durable;
	u32 nr_data, next;
	bool data_bad;
};

struct flog {
	struct fblk b[NSEG][BPS];
	u32 applied[16][2];		/* (segment, block) in order */
	u32 nr_applied;
	u32 torn[4][2];
	u32 nr_torn;
	int fail_at;			/* header reads before an I/O error */
};

static int f_header(void *ctx, u32 s, u32 off, bool probe,
		    enum wow_rec_kind *kind, struct wow_record_info *ri)
{
	struct flog *l = ctx;
	const struct fblk *b = &l->b[s][off];

	if (l->fail_at && !--l->fail_at)
		return -EIO;
	*kind = b->what == REC ? WOW_REC_OK :
		b->what == BAD ? WOW_REC_BAD : WOW_REC_FOREIGN;
	if (b->what == REC)
		*ri = (struct wow_record_info){
			.seq = b->seq, .seg_seq = b->life,
			.durable_seq = b->durable, .nr_data = b->nr_data,
			.next_seg = b->next,
		};
	return 0;
}

static int f_data(void *ctx, u32 s, u32 off, const struct wow_record_info *ri)
{
	struct flog *l = ctx;

	return !l->b[s][off].data_bad;
}

static int f_apply(void *ctx, u32 s, u32 off, const struct wow_record_info *ri)
{
	struct flog *l = ctx;

	if (l->nr_applied < ARRAY_SIZE(l->applied)) {
		l->applied[l->nr_applied][0] = s;
		l->applied[l->nr_applied][1] = off;
	}
	l->nr_applied++;
	return 0;
}

static void f_torn(void *ctx, u32 s, u32 off)
{
	struct flog *l = ctx;

	if (l->nr_torn < ARRAY_SIZE(l->torn)) {
		l->torn[l->nr_torn][0] = s;
		l->torn[l->nr_torn][1] = off;
	}
	l->nr_torn++;
}

static const struct wow_chain_ops f_ops = {
	.header = f_header, .data = f_data, .apply = f_apply, .torn = f_torn,
};

/* A record at (@s, @off) of the life @life, @nr data blocks. */
static void rec(struct flog *l, u32 s, u32 off, u64 seq, u64 life,
		u64 durable, u32 nr, u32 next)
{
	l->b[s][off] = (struct fblk){ .what = REC, .seq = seq, .life = life,
		.durable = durable, .nr_data = nr, .next = next };
}

static struct flog *new_log(struct kunit *test)
{
	struct flog *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, l);
	return l;
}

/* The chain from the head (@seg, @wp) of the life @life, next seq @seq. */
static struct wow_chain head(u32 seg, u32 wp, u32 next, u64 seq, u64 life)
{
	return (struct wow_chain){
		.nr_segments = NSEG, .blocks_per_seg = BPS,
		.head_seg = seg, .head_wp = wp, .next_seg = next,
		.next_seq = seq, .head_life = life,
	};
}

static void expect_applied(struct kunit *test, struct flog *l, u32 i, u32 s,
			   u32 off)
{
	KUNIT_ASSERT_LT(test, i, l->nr_applied);
	KUNIT_EXPECT_EQ(test, l->applied[i][0], s);
	KUNIT_EXPECT_EQ(test, l->applied[i][1], off);
}

/*
 * Segment 1 from block 2 (life 10), full at block 7; the log goes on at
 * block 0 of segment 3 (a new life), and ends there at an empty block.
 */
static void wow_chain_follows_segments(struct kunit *test)
{
	struct flog *l = new_log(test);
	struct wow_chain c = head(1, 2, 3, 12, 10);

	rec(l, 1, 2, 12, 10, 11, 1, 3);		/* blocks 2-3 */
	rec(l, 1, 4, 13, 10, 12, 2, 3);		/* blocks 4-6 */
	rec(l, 1, 7, 14, 10, 13, 0, 3);		/* block 7: a header alone */
	rec(l, 3, 0, 15, 15, 14, 3, 0);		/* new life of segment 3 */
	rec(l, 3, 4, 16, 15, 15, 0, 0);
	/* a stale record of an older life further on: not the chain's */
	rec(l, 3, 6, 9, 7, 8, 0, 0);

	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), 0);
	KUNIT_EXPECT_EQ(test, l->nr_applied, 5U);
	expect_applied(test, l, 0, 1, 2);
	expect_applied(test, l, 2, 1, 7);
	expect_applied(test, l, 3, 3, 0);
	expect_applied(test, l, 4, 3, 4);
	KUNIT_EXPECT_EQ(test, c.expected, 17ULL);
	KUNIT_EXPECT_EQ(test, c.records, 5ULL);
	KUNIT_EXPECT_EQ(test, c.life, 15ULL);
	KUNIT_EXPECT_EQ(test, c.dropped, 0ULL);
	KUNIT_EXPECT_EQ(test, l->nr_torn, 0U);
}

/* After a clean shutdown the head block is empty: nothing to replay. */
static void wow_chain_empty(struct kunit *test)
{
	struct flog *l = new_log(test);
	struct wow_chain c = head(0, 3, 1, 40, 30);

	rec(l, 0, 1, 39, 30, 38, 1, 1);		/* before the head: done */
	/* segment 1 holds an older life (seq 5): the chain does not go on */
	rec(l, 1, 0, 5, 5, 4, 0, 2);
	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), 0);
	KUNIT_EXPECT_EQ(test, l->nr_applied, 0U);
	KUNIT_EXPECT_EQ(test, c.expected, 40ULL);
	KUNIT_EXPECT_EQ(test, c.dropped, 0ULL);
}

/* Torn tails: a bad header; an intact header whose data is not. */
static void wow_chain_torn_tail(struct kunit *test)
{
	struct flog *l = new_log(test);
	struct wow_chain c = head(2, 0, 3, 20, 0);

	rec(l, 2, 0, 20, 20, 19, 1, 3);
	l->b[2][2].what = BAD;
	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), 0);
	KUNIT_EXPECT_EQ(test, l->nr_applied, 1U);
	KUNIT_EXPECT_EQ(test, c.dropped, 1ULL);
	KUNIT_ASSERT_EQ(test, l->nr_torn, 1U);
	KUNIT_EXPECT_EQ(test, l->torn[0][0], 2U);
	KUNIT_EXPECT_EQ(test, l->torn[0][1], 2U);

	l = new_log(test);
	rec(l, 2, 0, 20, 20, 19, 1, 3);
	rec(l, 2, 2, 21, 20, 20, 3, 3);
	l->b[2][2].data_bad = true;
	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), 0);
	KUNIT_EXPECT_EQ(test, l->nr_applied, 1U);
	KUNIT_EXPECT_EQ(test, c.expected, 21ULL);
	KUNIT_EXPECT_EQ(test, c.dropped, 1ULL);

	/* the tail torn at block 0 of the next segment */
	l = new_log(test);
	rec(l, 2, 0, 20, 20, 19, BPS - 1, 3);	/* fills segment 2 */
	l->b[3][0].what = BAD;
	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), 0);
	KUNIT_EXPECT_EQ(test, c.dropped, 1ULL);
	KUNIT_ASSERT_EQ(test, l->nr_torn, 1U);
	KUNIT_EXPECT_EQ(test, l->torn[0][0], 3U);
	KUNIT_EXPECT_EQ(test, l->torn[0][1], 0U);
}

/* A record that does not fit its segment, or of another life, ends it. */
static void wow_chain_rejects_misfits(struct kunit *test)
{
	struct flog *l = new_log(test);
	struct wow_chain c = head(0, 4, 1, 50, 44);

	rec(l, 0, 4, 50, 44, 49, 4, 1);		/* 1 + 4 > 8 - 4 blocks */
	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), 0);
	KUNIT_EXPECT_EQ(test, l->nr_applied, 0U);
	/* an intact next-seq header that was not applied: torn */
	KUNIT_EXPECT_EQ(test, c.dropped, 1ULL);

	l = new_log(test);
	rec(l, 0, 4, 50, 43, 49, 0, 1);		/* another life's seg_seq */
	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), 0);
	KUNIT_EXPECT_EQ(test, l->nr_applied, 0U);

	/* block 0 must open a life: seg_seq == seq */
	l = new_log(test);
	c = head(0, BPS, 1, 50, 44);
	rec(l, 1, 0, 50, 44, 49, 0, 2);
	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), 0);
	KUNIT_EXPECT_EQ(test, l->nr_applied, 0U);
}

/*
 * A lost record that a later one says was durable: in the same segment,
 * at block 0 of the next, or in the rest of the next when its block 0 is
 * ours but bad.  Then the load is refused.
 */
static void wow_chain_vouched_loss_refused(struct kunit *test)
{
	struct flog *l = new_log(test);
	struct wow_chain c = head(1, 0, 2, 60, 0);

	rec(l, 1, 0, 60, 60, 59, 0, 2);
	l->b[1][1].what = BAD;			/* seq 61, lost */
	rec(l, 1, 3, 62, 60, 61, 0, 2);		/* says 61 was durable */
	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), -EUCLEAN);
	KUNIT_EXPECT_EQ(test, c.expected, 61ULL);
	KUNIT_EXPECT_EQ(test, c.vouched_by, 62ULL);
	KUNIT_EXPECT_EQ(test, c.vouched_seg, 1U);
	KUNIT_EXPECT_EQ(test, c.vouched_off, 3U);

	/* the same record saying 61 was not yet durable: torn */
	l->b[1][3].durable = 60;
	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), 0);
	KUNIT_EXPECT_EQ(test, c.dropped, 1ULL);

	/* block 0 of the next segment vouches */
	l = new_log(test);
	rec(l, 1, 0, 60, 60, 59, 0, 2);
	rec(l, 2, 0, 62, 62, 61, 0, 3);
	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), -EUCLEAN);

	/* next's block 0 is the lost one (bad); its life's rest vouches */
	l = new_log(test);
	rec(l, 1, 0, 60, 60, 59, BPS - 1, 2);
	l->b[2][0].what = BAD;
	rec(l, 2, 3, 62, 61, 61, 0, 3);
	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), -EUCLEAN);
	KUNIT_EXPECT_EQ(test, c.vouched_by, 62ULL);
	KUNIT_EXPECT_EQ(test, c.vouched_seg, 2U);
	KUNIT_EXPECT_EQ(test, c.vouched_off, 3U);
}

/* A later epoch (a load since) says nothing of this epoch's seqs. */
static void wow_chain_other_epoch_does_not_vouch(struct kunit *test)
{
	u64 e = 5ULL << WOW_EPOCH_SHIFT;
	struct flog *l = new_log(test);
	struct wow_chain c = head(1, 0, 2, e, 0);

	rec(l, 1, 0, e, e, e - 1, 0, 2);
	l->b[1][1].what = BAD;
	rec(l, 1, 3, e + (1ULL << WOW_EPOCH_SHIFT), e,
	    e + (1ULL << WOW_EPOCH_SHIFT), 0, 2);
	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), 0);
	KUNIT_EXPECT_EQ(test, c.dropped, 1ULL);
}

/* An I/O error ends the replay with that error, wherever it comes. */
static void wow_chain_io_error(struct kunit *test)
{
	int at;

	for (at = 1; at <= 4; at++) {
		struct flog *l = new_log(test);
		struct wow_chain c = head(0, 0, 1, 1, 0);

		rec(l, 0, 0, 1, 1, 0, 0, 1);
		rec(l, 0, 1, 2, 1, 1, 0, 1);
		l->fail_at = at;
		KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), -EIO);
	}
}

/*
 * Issue 34, finding 1: a checkpoint taken while the free list was empty
 * names no next segment; cleaning frees segment 2 while it is written.
 * Had the log opened segment 2 (not named), a load from that checkpoint
 * would replay none of the records written there: the writer must not
 * open it until a checkpoint names it (wow_chain_may_open), and then the
 * replay finds them.
 */
static void wow_chain_unnamed_segment(struct kunit *test)
{
	struct flog *l = new_log(test);
	struct wow_chain c = head(0, BPS, WOW_NO_SEG, 20, 10);

	KUNIT_EXPECT_FALSE(test, wow_chain_may_open(true, WOW_NO_SEG, 2));
	KUNIT_EXPECT_FALSE(test, wow_chain_may_open(true, 1, 2));
	KUNIT_EXPECT_TRUE(test, wow_chain_may_open(true, 2, 2));
	/* no checkpoint anchors a chain: loads scan, any segment will do */
	KUNIT_EXPECT_TRUE(test, wow_chain_may_open(false, WOW_NO_SEG, 2));

	/* what the rule prevents: FUA records in segment 2 never replayed */
	rec(l, 2, 0, 20, 20, 19, 1, WOW_NO_SEG);
	rec(l, 2, 2, 21, 20, 21, 1, WOW_NO_SEG);
	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), 0);
	KUNIT_EXPECT_EQ(test, l->nr_applied, 0U);

	/* a checkpoint naming segment 2 first: both records are found */
	c = head(0, BPS, 2, 20, 10);
	KUNIT_EXPECT_EQ(test, wow_chain_replay(&c, &f_ops, l), 0);
	KUNIT_EXPECT_EQ(test, l->nr_applied, 2U);
	expect_applied(test, l, 0, 2, 0);
	expect_applied(test, l, 1, 2, 2);
}

/* A load's sources, scripted: what each returns, and the calls made. */
struct fload {
	int ckpt, replay, scan;
	u64 replay_seen, scan_seen;
	char calls[4];
	u32 nr;
};

static int fl_ckpt(void *ctx)
{
	struct fload *f = ctx;

	f->calls[f->nr++] = 'c';
	return f->ckpt;
}

static int fl_replay(void *ctx, u64 *seen)
{
	struct fload *f = ctx;

	f->calls[f->nr++] = 'r';
	*seen = f->replay_seen;
	return f->replay;
}

static int fl_scan(void *ctx, u64 *seen)
{
	struct fload *f = ctx;

	f->calls[f->nr++] = 's';
	*seen = f->scan_seen;
	return f->scan;
}

/* Run wow_load_log over @f: its verdict, @next its next seq. */
static int fl_run(struct fload *f, u64 format_seq, u64 *next)
{
	const struct wow_load_ops ops = {
		.ckpt = fl_ckpt,
		.replay = fl_replay,
		.scan = fl_scan,
		.ctx = f,
	};

	*next = 7;
	return wow_load_log(&ops, format_seq, next);
}

/*
 * The checkpoint and the log since it, else the whole log: when there is
 * no valid checkpoint or the replay asks for a scan; an error ends the
 * load; the next seq opens the epoch after every seq seen and the format.
 */
static void wow_chain_load_sources(struct kunit *test)
{
	const u64 e3 = 3ULL << WOW_EPOCH_SHIFT;
	struct fload f = { .replay_seen = e3 + 5, .scan_seen = 99 };
	u64 next;

	KUNIT_EXPECT_EQ(test, fl_run(&f, 0, &next), 0);
	KUNIT_EXPECT_STREQ(test, f.calls, "cr");
	KUNIT_EXPECT_EQ(test, next, 4ULL << WOW_EPOCH_SHIFT);

	f = (struct fload){ .ckpt = 1, .replay_seen = e3, .scan_seen = 99 };
	KUNIT_EXPECT_EQ(test, fl_run(&f, 0, &next), 0);
	KUNIT_EXPECT_STREQ(test, f.calls, "cs");
	KUNIT_EXPECT_EQ(test, next, 1ULL << WOW_EPOCH_SHIFT);

	/* the replay asks for the whole log; the format's seq is newer */
	f = (struct fload){ .replay = 1, .replay_seen = 5, .scan_seen = 99 };
	KUNIT_EXPECT_EQ(test, fl_run(&f, e3, &next), 0);
	KUNIT_EXPECT_STREQ(test, f.calls, "crs");
	KUNIT_EXPECT_EQ(test, next, 4ULL << WOW_EPOCH_SHIFT);

	/* errors end it, the next seq untouched */
	f = (struct fload){ .ckpt = -ENOMEM };
	KUNIT_EXPECT_EQ(test, fl_run(&f, 0, &next), -ENOMEM);
	KUNIT_EXPECT_STREQ(test, f.calls, "c");
	KUNIT_EXPECT_EQ(test, next, 7ULL);
	f = (struct fload){ .replay = -EUCLEAN };
	KUNIT_EXPECT_EQ(test, fl_run(&f, 0, &next), -EUCLEAN);
	KUNIT_EXPECT_STREQ(test, f.calls, "cr");
	f = (struct fload){ .ckpt = 1, .scan = -EIO };
	KUNIT_EXPECT_EQ(test, fl_run(&f, 0, &next), -EIO);
	KUNIT_EXPECT_STREQ(test, f.calls, "cs");
	KUNIT_EXPECT_EQ(test, next, 7ULL);

	/* the seq space exhausted */
	f = (struct fload){ .replay_seen = U64_MAX };
	KUNIT_EXPECT_EQ(test, fl_run(&f, 0, &next), 0);
	KUNIT_EXPECT_EQ(test, next, 0ULL);
}

static struct kunit_case wow_chain_cases[] = {
	KUNIT_CASE(wow_chain_follows_segments),
	KUNIT_CASE(wow_chain_empty),
	KUNIT_CASE(wow_chain_torn_tail),
	KUNIT_CASE(wow_chain_rejects_misfits),
	KUNIT_CASE(wow_chain_vouched_loss_refused),
	KUNIT_CASE(wow_chain_other_epoch_does_not_vouch),
	KUNIT_CASE(wow_chain_io_error),
	KUNIT_CASE(wow_chain_unnamed_segment),
	KUNIT_CASE(wow_chain_load_sources),
	{}
};

static struct kunit_suite wow_chain_suite = {
	.name = "dm_wow_chain",
	.test_cases = wow_chain_cases,
};

kunit_test_suite(wow_chain_suite);
