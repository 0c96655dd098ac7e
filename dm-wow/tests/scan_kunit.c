// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for recovery's scan of the whole log (dm-wow-scan.c), on a
 * log in memory: real record headers (wow_record_seal) and data blocks in
 * a plain array, an index of plain arrays behind struct wow_scan_ops.  The
 * tests check which copies the scan keeps, which it drops, which the
 * tombstones kill, and when a lost record refuses the load.
 */
#include <kunit/test.h>

#include "../dm-wow-record.h"
#include "../dm-wow-scan.h"

#define NSEG	4
#define BPS	8
#define BS	512
#define NOBL	64		/* origin blocks */
#define NNOTE	8

static const u8 uuid[16] = { 0xd3, 0x0f, 0x77, 1, 2, 3, 4, 5 };

struct slog {
	u8 blk[NSEG][BPS][BS];
	/* the index: a copy per slot */
	bool valid[NSEG * BPS];
	bool dirty[NSEG * BPS];
	u64 oblock[NSEG * BPS];
	struct wow_tomb_range tombs[NSEG][16];
	u32 nr_tombs[NSEG];
	struct wow_scan_note notes[NNOTE];
	u32 nr_notes;
	struct wow_scan_seg life[NSEG];
	u32 flags;			/* WOW_SCAN_*: the geometry's */
	u64 lost[8];			/* ops->lost: origin blocks */
	u32 nr_lost;
	u32 nr_records[WOW_SCAN_REC_SALVAGED + 1];
	u32 nr_corrupt;			/* JUDGE_ALL: verdicts "corrupt" */
};

static int s_read(void *ctx, u32 s, u32 off, u32 n, bool probe, void **p)
{
	struct slog *l = ctx;

	if (s >= NSEG || off + n > BPS)
		return -EIO;
	*p = l->blk[s][off];
	return 0;
}

static int s_reserve_tombs(void *ctx, u32 s, u32 n)
{
	struct slog *l = ctx;

	return l->nr_tombs[s] + n > ARRAY_SIZE(l->tombs[s]) ? -ENOMEM : 0;
}

static void s_add_tombs(void *ctx, u32 s, const struct wow_tomb_range *t,
			u32 n)
{
	struct slog *l = ctx;

	memcpy(&l->tombs[s][l->nr_tombs[s]], t, n * sizeof(*t));
	l->nr_tombs[s] += n;
}

static const struct wow_tomb_range *s_tombs(void *ctx, u32 s, u32 *n)
{
	struct slog *l = ctx;

	*n = l->nr_tombs[s];
	return l->tombs[s];
}

static bool s_lookup(void *ctx, u64 b, u32 *slot)
{
	struct slog *l = ctx;
	u32 i;

	for (i = 0; i < NSEG * BPS; i++)
		if (l->valid[i] && l->oblock[i] == b) {
			*slot = i;
			return true;
		}
	return false;
}

static void s_place(void *ctx, u32 slot, u64 b, u64 seq, bool newest,
		    bool has_crc, u32 crc)
{
	struct slog *l = ctx;
	u32 old;

	l->oblock[slot] = b;
	if (!newest)
		return;
	if (s_lookup(ctx, b, &old))
		l->valid[old] = false;
	l->valid[slot] = true;
	l->dirty[slot] = true;
}

static bool s_valid(void *ctx, u32 slot, u64 *b)
{
	struct slog *l = ctx;

	*b = l->oblock[slot];
	return l->valid[slot];
}

static void s_kill(void *ctx, u32 slot)
{
	struct slog *l = ctx;

	l->valid[slot] = false;
}

static void s_clean(void *ctx, u32 slot)
{
	struct slog *l = ctx;

	l->dirty[slot] = false;
}

static void s_note(void *ctx, const struct wow_scan_note *n)
{
	struct slog *l = ctx;

	if (l->nr_notes < NNOTE)
		l->notes[l->nr_notes] = *n;
	l->nr_notes++;
}

static int s_record(void *ctx, u32 s, u32 off,
		    const struct wow_record_info *ri, enum wow_scan_rec st,
		    const char *why)
{
	struct slog *l = ctx;

	l->nr_records[st]++;
	return 0;
}

static int s_lost(void *ctx, u64 b, u64 seq)
{
	struct slog *l = ctx;

	if (l->nr_lost < ARRAY_SIZE(l->lost))
		l->lost[l->nr_lost] = b;
	l->nr_lost++;
	return 0;
}

static const struct wow_scan_ops s_ops = {
	.read = s_read, .reserve_tombs = s_reserve_tombs,
	.add_tombs = s_add_tombs, .tombs = s_tombs, .lookup = s_lookup,
	.place = s_place, .valid = s_valid, .kill = s_kill,
	.clean = s_clean, .note = s_note, .record = s_record, .lost = s_lost,
};

static struct slog *new_log(struct kunit *test)
{
	struct slog *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, l);
	return l;
}

/*
 * Write a record at block @off of segment @s: seq @seq of the life @life,
 * durable_seq @durable, data for origin blocks @obs (@n), tombstones @t
 * (@nt).  Each data block is filled with its seq and origin block.
 */
static void rec(struct slog *l, u32 s, u32 off, u64 seq, u64 life,
		u64 durable, const u64 *obs, u32 n,
		const struct wow_tomb_range *t, u32 nt)
{
	struct wow_record_info ri = {
		.seq = seq, .seg_seq = life, .durable_seq = durable,
		.nr_data = n, .nr_tombs = nt, .next_seg = U32_MAX,
	};
	void *hdr = l->blk[s][off];
	struct wow_tomb *wt = wow_record_tombs(hdr);
	__le64 *raw = wow_record_oblocks(hdr, nt);
	u32 i;

	memset(hdr, 0, BS);
	for (i = 0; i < nt; i++) {
		wt[i].start = cpu_to_le64(t[i].start);
		wt[i].t = cpu_to_le64(t[i].t);
		wt[i].nr = cpu_to_le32(t[i].nr);
		wt[i].flags = cpu_to_le32(t[i].flags);
	}
	for (i = 0; i < n; i++) {
		raw[i] = cpu_to_le64(obs[i]);
		memset(l->blk[s][off + 1 + i], (u8)seq, BS);
		memcpy(l->blk[s][off + 1 + i], &obs[i], sizeof(obs[i]));
	}
	ri.data_csum = n ? crc32c(~0U, l->blk[s][off + 1], n * BS) : ~0U;
	wow_record_seal(hdr, BS, uuid, &ri);
}

/* Scan every segment, then finish: wow_scan_finish's result. */
static int scan(struct kunit *test, struct slog *l, struct wow_scan_totals *tot)
{
	struct wow_scan_geo g = {
		.uuid = uuid, .nr_oblocks = NOBL, .nr_segments = NSEG,
		.blocks_per_seg = BPS, .block_size = BS, .win_blocks = BPS,
		.flags = l->flags,
	};
	struct wow_scan *sc = wow_scan_alloc(&g, &s_ops, l);
	u32 s;
	int r;

	KUNIT_ASSERT_NOT_NULL(test, sc);
	for (s = 0; s < NSEG; s++)
		KUNIT_ASSERT_EQ(test, wow_scan_segment(sc, s, &l->life[s]), 0);
	r = wow_scan_finish(sc);
	*tot = *wow_scan_totals(sc);
	if (l->flags & WOW_SCAN_JUDGE_ALL) {
		const struct wow_scan_suspect *su;
		u32 i, n;

		su = wow_scan_suspects(sc, &n);
		for (i = 0; i < n; i++)
			if (su[i].vouched && !su[i].start && !su[i].harmless)
				l->nr_corrupt++;
	}
	wow_scan_free(sc);
	return r;
}

/* The slot holding origin block @b's copy, or -1. */
static int holder(struct slog *l, u64 b)
{
	u32 slot;

	return s_lookup(l, b, &slot) ? (int)slot : -1;
}

#define SLOT(s, off)	((int)((s) * BPS + (off)))

/*
 * A power cut tore the last record of a segment (its data never all
 * written, so never acknowledged): it is dropped, the records before it
 * stay, and the load goes on.
 */
static void wow_scan_drops_torn_tail(struct kunit *test)
{
	static const u64 a[] = { 1, 2 }, b[] = { 3 };
	struct wow_scan_totals tot;
	struct slog *l = new_log(test);

	rec(l, 0, 0, 1, 1, 0, a, 2, NULL, 0);
	rec(l, 0, 3, 2, 1, 1, b, 1, NULL, 0);
	l->blk[0][4][100] ^= 0xff;		/* its data is torn */

	KUNIT_EXPECT_EQ(test, scan(test, l, &tot), 0);
	KUNIT_EXPECT_EQ(test, tot.records, 1ULL);
	KUNIT_EXPECT_EQ(test, tot.dropped, 1ULL);
	KUNIT_EXPECT_EQ(test, tot.max_seq, 1ULL);
	KUNIT_EXPECT_EQ(test, tot.max_seen, 2ULL);
	KUNIT_EXPECT_EQ(test, holder(l, 1), SLOT(0, 1));
	KUNIT_EXPECT_EQ(test, holder(l, 2), SLOT(0, 2));
	KUNIT_EXPECT_EQ(test, holder(l, 3), -1);
	KUNIT_EXPECT_EQ(test, l->life[0].seq, 1ULL);
	KUNIT_EXPECT_EQ(test, l->life[0].max_seq, 1ULL);
	KUNIT_EXPECT_EQ(test, l->life[0].wp, 3U);
	KUNIT_ASSERT_EQ(test, l->nr_notes, 1U);
	KUNIT_EXPECT_EQ(test, l->notes[0].what, WOW_SCAN_DROPPED);
	KUNIT_EXPECT_EQ(test, l->notes[0].seg, 0U);
	KUNIT_EXPECT_EQ(test, l->notes[0].off, 3U);
}

/*
 * Segment 1's old life, 10: records 10, 11 and 12 at blocks 0, 2 and 4,
 * for origin blocks 1, 2 and 3.
 */
static void old_life(struct slog *l)
{
	static const u64 a[] = { 1 }, b[] = { 2 }, c[] = { 3 };

	rec(l, 1, 0, 10, 10, 9, a, 1, NULL, 0);
	rec(l, 1, 2, 11, 10, 10, b, 1, NULL, 0);
	rec(l, 1, 4, 12, 10, 11, c, 1, NULL, 0);
}

/*
 * A segment freed and reused: its new life wrote over the start of the
 * old one.  The old life's records after the new life's end are intact
 * but not of this life: the scan stops there, quietly, and their copies
 * do not come back.
 */
static void wow_scan_reused_segment_keeps_old_life_out(struct kunit *test)
{
	static const u64 c[] = { 3 };
	struct wow_scan_totals tot;
	struct slog *l = new_log(test);

	old_life(l);
	/* the new life, 20, over its first record */
	rec(l, 1, 0, 20, 20, 19, c, 1, NULL, 0);

	KUNIT_EXPECT_EQ(test, scan(test, l, &tot), 0);
	KUNIT_EXPECT_EQ(test, tot.records, 1ULL);
	KUNIT_EXPECT_EQ(test, tot.dropped, 0ULL);
	KUNIT_EXPECT_EQ(test, l->nr_notes, 0U);
	KUNIT_EXPECT_EQ(test, l->life[1].seq, 20ULL);
	KUNIT_EXPECT_EQ(test, l->life[1].max_seq, 20ULL);
	KUNIT_EXPECT_EQ(test, l->life[1].wp, 2U);
	KUNIT_EXPECT_EQ(test, holder(l, 1), -1);
	KUNIT_EXPECT_EQ(test, holder(l, 2), -1);
	KUNIT_EXPECT_EQ(test, holder(l, 3), SLOT(1, 1));
}

/*
 * A segment freed and reused, and a power cut: the new life's first
 * record (over the old life's first) was lost, its second (over the old
 * life's second) was written.  The old life's third record lies intact
 * beyond, and a later record says every seq up to 29 was durable.  The
 * old life's second record is gone, but a newer life of the segment
 * proves the old life dead before it was overwritten (reuse waits for
 * that): nothing is lost, the load goes on.  (Seen by
 * crash-flush-points-tiny: wowctl check said a load of the log alone
 * would be refused.)
 */
static void wow_scan_newer_life_ends_the_old_one(struct kunit *test)
{
	static const u64 d[] = { 4 };
	struct wow_scan_totals tot;
	struct slog *l = new_log(test);

	old_life(l);
	/* the new life, 20: its second record, over the old life's second */
	rec(l, 1, 2, 21, 20, 19, d, 1, NULL, 0);
	/* later, elsewhere: every seq up to 29 durable */
	rec(l, 2, 0, 30, 30, 29, NULL, 0, NULL, 0);

	KUNIT_EXPECT_EQ(test, scan(test, l, &tot), 0);
	KUNIT_EXPECT_EQ(test, l->life[1].seq, 10ULL);
	KUNIT_EXPECT_EQ(test, l->life[1].max_seq, 10ULL);
	KUNIT_EXPECT_EQ(test, l->life[1].wp, 2U);
	KUNIT_EXPECT_EQ(test, holder(l, 1), SLOT(1, 1));
	KUNIT_EXPECT_EQ(test, holder(l, 3), -1);
	KUNIT_EXPECT_EQ(test, holder(l, 4), -1);
	KUNIT_EXPECT_EQ(test, l->nr_notes, 0U);
}

/*
 * A tombstone kills the copies of its range with seq <= t, not newer
 * ones; a clean mark leaves the copies it covers valid but clean.
 */
static void wow_scan_tombstones_kill_older_copies(struct kunit *test)
{
	static const u64 a[] = { 5, 6 }, b[] = { 6 };
	static const struct wow_tomb_range kill = { .start = 5, .nr = 2, .t = 1 };
	static const struct wow_tomb_range mark = {
		.start = 6, .nr = 1, .t = 2, .flags = WOW_TOMB_CLEAN,
	};
	struct wow_scan_totals tot;
	struct slog *l = new_log(test);

	rec(l, 0, 0, 1, 1, 0, a, 2, NULL, 0);	/* 5 and 6 */
	rec(l, 2, 0, 2, 2, 1, b, 1, NULL, 0);	/* 6 again */
	rec(l, 3, 0, 3, 3, 2, NULL, 0, &kill, 1);
	rec(l, 3, 1, 4, 3, 3, NULL, 0, &mark, 1);

	KUNIT_EXPECT_EQ(test, scan(test, l, &tot), 0);
	KUNIT_EXPECT_EQ(test, tot.records, 4ULL);
	KUNIT_EXPECT_EQ(test, holder(l, 5), -1);
	KUNIT_EXPECT_EQ(test, holder(l, 6), SLOT(2, 1));
	KUNIT_EXPECT_FALSE(test, l->dirty[SLOT(2, 1)]);
	/* the segment holds the tombstone, not the clean mark */
	KUNIT_EXPECT_EQ(test, l->nr_tombs[3], 1U);
	KUNIT_EXPECT_EQ(test, l->tombs[3][0].start, 5ULL);
	KUNIT_EXPECT_EQ(test, l->life[3].wp, 2U);
}

/*
 * A block written twice: the copy of the newer seq wins, whichever
 * segment the scan reads first; of two copies in one record, the later.
 */
static void wow_scan_newest_copy_wins(struct kunit *test)
{
	static const u64 a[] = { 7, 8, 8 }, b[] = { 7 };
	struct wow_scan_totals tot;
	struct slog *l = new_log(test);

	rec(l, 0, 0, 5, 5, 4, b, 1, NULL, 0);	/* 7, newer, scanned first */
	rec(l, 1, 0, 2, 2, 1, a, 3, NULL, 0);	/* 7 older; 8 twice */

	KUNIT_EXPECT_EQ(test, scan(test, l, &tot), 0);
	KUNIT_EXPECT_EQ(test, tot.records, 2ULL);
	KUNIT_EXPECT_EQ(test, holder(l, 7), SLOT(0, 1));
	KUNIT_EXPECT_EQ(test, holder(l, 8), SLOT(1, 3));
	KUNIT_EXPECT_FALSE(test, l->valid[SLOT(1, 1)]);
	KUNIT_EXPECT_FALSE(test, l->valid[SLOT(1, 2)]);
	/* the slot still says which block its stale copy was */
	KUNIT_EXPECT_EQ(test, l->oblock[SLOT(1, 1)], 7ULL);
}

/*
 * A bad record that a later record of its life says was durable is not
 * a torn tail but a lost write: the load is refused, naming both.
 */
static void wow_scan_durable_suspect_refuses(struct kunit *test)
{
	static const u64 a[] = { 1 }, b[] = { 9 }, c[] = { 2 };
	struct wow_scan_totals tot;
	struct slog *l = new_log(test);

	rec(l, 2, 0, 1, 1, 0, a, 1, NULL, 0);
	rec(l, 2, 2, 2, 1, 1, b, 1, NULL, 0);
	rec(l, 2, 4, 3, 1, 2, c, 1, NULL, 0);	/* says 2 was durable */
	l->blk[2][3][9] ^= 1;			/* record 2 is corrupt */

	KUNIT_EXPECT_EQ(test, scan(test, l, &tot), -EUCLEAN);
	KUNIT_EXPECT_EQ(test, tot.dropped, 1ULL);
	KUNIT_EXPECT_EQ(test, tot.max_seen, 3ULL);
	KUNIT_ASSERT_EQ(test, l->nr_notes, 2U);
	KUNIT_EXPECT_EQ(test, l->notes[0].what, WOW_SCAN_DROPPED);
	KUNIT_EXPECT_EQ(test, l->notes[1].what, WOW_SCAN_DURABLE_CORRUPT);
	KUNIT_EXPECT_EQ(test, l->notes[1].seq, 2ULL);
	KUNIT_EXPECT_EQ(test, l->notes[1].seg, 2U);
	KUNIT_EXPECT_EQ(test, l->notes[1].by_seq, 1ULL);	/* the life's first claim */
	KUNIT_EXPECT_EQ(test, l->notes[1].by_seg, 2U);
}

/*
 * The same lost record, when every block it held, and every block of the
 * rest of its segment (dropped with it), has a newer copy: it is dropped
 * with a warning and the load goes on.
 */
static void wow_scan_harmless_suspect_dropped(struct kunit *test)
{
	static const u64 a[] = { 1 }, b[] = { 9 }, c[] = { 2 }, d[] = { 9, 2 };
	struct wow_scan_totals tot;
	struct slog *l = new_log(test);

	rec(l, 2, 0, 1, 1, 0, a, 1, NULL, 0);
	rec(l, 2, 2, 2, 1, 1, b, 1, NULL, 0);
	rec(l, 2, 4, 3, 1, 2, c, 1, NULL, 0);
	l->blk[2][3][9] ^= 1;
	rec(l, 3, 0, 4, 4, 3, d, 2, NULL, 0);	/* 9 and 2 again, newer */

	KUNIT_EXPECT_EQ(test, scan(test, l, &tot), 0);
	KUNIT_EXPECT_EQ(test, holder(l, 9), SLOT(3, 1));
	KUNIT_ASSERT_EQ(test, l->nr_notes, 2U);
	KUNIT_EXPECT_EQ(test, l->notes[1].what, WOW_SCAN_DURABLE_HARMLESS);
	KUNIT_EXPECT_EQ(test, l->notes[1].seq, 2ULL);
}

/* Two segments, each with a record a later one proves durable lost. */
static void two_corrupt_segments(struct slog *l)
{
	static const u64 a[] = { 1 }, b[] = { 9 }, c[] = { 2 };
	static const u64 d[] = { 3 }, e[] = { 10 }, f[] = { 4 };

	rec(l, 0, 0, 1, 1, 0, a, 1, NULL, 0);
	rec(l, 0, 2, 2, 1, 1, b, 1, NULL, 0);
	rec(l, 0, 4, 3, 1, 2, c, 1, NULL, 0);
	l->blk[0][3][9] ^= 1;
	rec(l, 1, 0, 4, 4, 3, d, 1, NULL, 0);
	rec(l, 1, 2, 5, 4, 4, e, 1, NULL, 0);
	rec(l, 1, 4, 6, 4, 5, f, 1, NULL, 0);
	l->blk[1][3][9] ^= 1;
}

/*
 * A load stops at the first record proved durable and lost; wowctl
 * (WOW_SCAN_JUDGE_ALL) judges every suspect and the scan goes on.
 */
static void wow_scan_judge_all_judges_every_suspect(struct kunit *test)
{
	struct wow_scan_totals tot;
	struct slog *l = new_log(test);

	two_corrupt_segments(l);
	KUNIT_EXPECT_EQ(test, scan(test, l, &tot), -EUCLEAN);
	/* two drops, one refusal */
	KUNIT_EXPECT_EQ(test, l->nr_notes, 3U);

	l = new_log(test);
	two_corrupt_segments(l);
	l->flags = WOW_SCAN_JUDGE_ALL;
	KUNIT_EXPECT_EQ(test, scan(test, l, &tot), 0);
	KUNIT_EXPECT_EQ(test, l->nr_corrupt, 2U);
	KUNIT_EXPECT_EQ(test, l->nr_notes, 2U);
	KUNIT_EXPECT_EQ(test, l->nr_records[WOW_SCAN_REC_TAKEN], 2U);
	KUNIT_EXPECT_EQ(test, l->nr_records[WOW_SCAN_REC_DROPPED], 2U);
	KUNIT_EXPECT_EQ(test, l->nr_records[WOW_SCAN_REC_PROOF], 2U);
}

/*
 * Writeback (WOW_SCAN_SALVAGE) takes a record read past a bad one when
 * its data checks; the bad record's versions are lost.
 */
static void wow_scan_salvage_takes_records_past_a_bad_one(struct kunit *test)
{
	struct wow_scan_totals tot;
	struct slog *l = new_log(test);

	two_corrupt_segments(l);
	l->flags = WOW_SCAN_JUDGE_ALL | WOW_SCAN_SALVAGE;
	KUNIT_EXPECT_EQ(test, scan(test, l, &tot), 0);
	KUNIT_EXPECT_EQ(test, l->nr_records[WOW_SCAN_REC_SALVAGED], 2U);
	KUNIT_EXPECT_EQ(test, holder(l, 2), SLOT(0, 5));
	KUNIT_EXPECT_EQ(test, holder(l, 4), SLOT(1, 5));
	KUNIT_EXPECT_EQ(test, holder(l, 9), -1);
	KUNIT_ASSERT_EQ(test, l->nr_lost, 2U);
	KUNIT_EXPECT_EQ(test, l->lost[0], 9ULL);
	KUNIT_EXPECT_EQ(test, l->lost[1], 10ULL);
	/* salvaged records are not counted as a load's */
	KUNIT_EXPECT_EQ(test, tot.records, 2ULL);
}

static struct kunit_case wow_scan_cases[] = {
	KUNIT_CASE(wow_scan_drops_torn_tail),
	KUNIT_CASE(wow_scan_reused_segment_keeps_old_life_out),
	KUNIT_CASE(wow_scan_newer_life_ends_the_old_one),
	KUNIT_CASE(wow_scan_tombstones_kill_older_copies),
	KUNIT_CASE(wow_scan_newest_copy_wins),
	KUNIT_CASE(wow_scan_durable_suspect_refuses),
	KUNIT_CASE(wow_scan_harmless_suspect_dropped),
	KUNIT_CASE(wow_scan_judge_all_judges_every_suspect),
	KUNIT_CASE(wow_scan_salvage_takes_records_past_a_bad_one),
	{}
};

static struct kunit_suite wow_scan_suite = {
	.name = "dm_wow_scan",
	.test_cases = wow_scan_cases,
};

kunit_test_suite(wow_scan_suite);
