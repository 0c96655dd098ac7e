// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the checkpoint reader (dm-wow-ckptread.c) on checkpoint
 * areas held in memory: a checkpoint is written with the codec
 * (dm-wow-ckpt.c) from plain arrays of segments, tombstones and slots,
 * read back a window of two blocks at a time (the slot table a window
 * ahead), and what the load hands over is compared with what was written.
 * Then one part at a time is damaged: a stream block's seal, its
 * generation, the tombstone total, a slot table block, a slot entry, a
 * slot's place, the closing copy; each must be refused with its fault and
 * where it is, and no read may be left in flight.
 */
#include <kunit/test.h>

#include "../dm-wow-ckptread.h"

#define VER		5		/* 10-byte slot entries, closing copy */
#define BS		512
#define NSEG		32
#define BPS		8
#define NSLOT		(NSEG * BPS)
#define LIVE(s)		((s) % 3 == 0)	/* segments 0, 3, ... hold a life */
#define NOBL		1024		/* origin blocks */
#define GEN		9
#define NEXT_SEQ	1000
#define WIN		2		/* blocks a read takes at most */
#define MAX_BLOCKS	16		/* room for the area */
#define MAX_TOMBS	8
#define SLOT(s, i)	((s) * BPS + (i))

static const u8 uuid[16] = { 3, 1, 4, 1, 5, 9, 2, 6 };

struct ck {
	struct kunit *test;
	/* what the checkpoint holds, in segment order */
	struct wow_ckpt_seg_info seg[NSEG];
	struct wow_ckpt_entry slot[NSLOT];
	struct wow_tomb_range tomb[MAX_TOMBS];
	u32 tomb_seg[MAX_TOMBS];
	u32 nr_tombs;
	/* the area, written from them */
	struct wow_ckpt_info ci;
	u8 area[MAX_BLOCKS][BS];
	u64 nr_blocks;
	/* the reader and its memory */
	struct wow_ckpt_reader rd;
	u8 hdr[2 * BS];
	u8 stream[MAX_BLOCKS * BS];	/* the writer's */
	u8 win[2][WIN * BS];
	__le32 csums[MAX_BLOCKS];
	struct wow_ckpt_seg_pos pos[NSEG];
	bool started[2];		/* a window's read in flight */
	u64 start_block[2];
	u32 nr_reads;
	u32 nr_starts;
	/* what the load handed over */
	u32 got_segs;
	struct wow_ckpt_seg_info got_seg[NSEG];
	u32 got_tombs;
	struct wow_tomb_range got_tomb[MAX_TOMBS];
	u64 got_tomb_seg[MAX_TOMBS];
	u32 got_slots;
	bool got[NSLOT];
	u64 got_ob[NSLOT];
	bool got_dirty[NSLOT];
	u32 got_crc[NSLOT];
	bool cached[NOBL];		/* an origin block handed over */
};

/* Stream blocks of the checkpoint. */
static u64 ck_slot_blocks(void)
{
	return wow_ckpt_slot_blocks(VER, NSLOT, BS);
}

/*
 * Write the area from the arrays: the slot table, the segment stream
 * (sealed with @gen), the header saying @hdr_tombs tombstones, the closing
 * copy.
 */
static void ck_write_as(struct ck *c, u64 gen, u64 hdr_tombs)
{
	u32 per = wow_ckpt_slots_per_block(VER, BS), i;
	u64 sb = ck_slot_blocks(), gb, b, s;
	u8 *stream = c->stream;
	__le32 csum[MAX_BLOCKS];
	u32 pos = 0;

	memset(c->area, 0, sizeof(c->area));
	for (b = 0; b < sb; b++) {
		for (i = 0; i < per && b * per + i < NSLOT; i++)
			wow_ckpt_slot_put(c->area[1 + b], wow_ckpt_slot_bytes(VER),
					  i, &c->slot[b * per + i]);
		csum[b] = cpu_to_le32(wow_ckpt_slot_block_csum(c->area[1 + b],
							       BS));
	}
	for (s = 0; s < NSEG; s++) {
		struct wow_ckpt_seg e;

		wow_ckpt_seg_encode(&e, &c->seg[s]);
		memcpy(stream + pos, &e, sizeof(e));
		pos += sizeof(e);
	}
	memcpy(stream + pos, csum, sb * sizeof(*csum));
	pos += sb * sizeof(*csum);
	for (i = 0; i < c->nr_tombs; i++) {
		struct wow_tomb e;

		wow_ckpt_tomb_encode(&e, &c->tomb[i]);
		memcpy(stream + pos, &e, sizeof(e));
		pos += sizeof(e);
	}
	c->ci = (struct wow_ckpt_info) {
		.valid = true,
		.generation = GEN,
		.next_seq = NEXT_SEQ,
		.completed_seq = NEXT_SEQ - 1,
		.nr_slots = NSLOT,
		.nr_segments = NSEG,
		.slot_blocks = sb,
		.seg_blocks = wow_ckpt_seg_blocks(VER, NSLOT, NSEG, hdr_tombs,
						  BS),
		.nr_tombs = hdr_tombs,
	};
	gb = c->ci.seg_blocks;
	c->nr_blocks = 1 + sb + gb + 1;
	KUNIT_ASSERT_LE(c->test, c->nr_blocks, (u64)MAX_BLOCKS);
	/* several windows of each table */
	KUNIT_ASSERT_GT(c->test, gb, (u64)WIN);
	KUNIT_ASSERT_GT(c->test, sb, (u64)WIN);
	wow_ckpt_stream_copy(c->area[1 + sb], BS, 0, gb, 0, stream, pos, true);
	for (b = 0; b < gb; b++)
		wow_ckpt_seal(c->area[1 + sb + b], BS, gen, b);
	wow_ckpt_header_encode(c->area[0], BS, uuid, &c->ci);
	memcpy(c->area[1 + sb + gb], c->area[0], BS);
}

static void ck_write(struct ck *c)
{
	ck_write_as(c, GEN, c->nr_tombs);
}

static int ck_read(void *ctx, u64 block, u32 n, void *buf)
{
	struct ck *c = ctx;
	int k = buf == c->win[1];

	c->nr_reads++;
	KUNIT_EXPECT_LE(c->test, n, (u32)WIN);
	if (c->started[k]) {
		KUNIT_EXPECT_EQ(c->test, c->start_block[k], block);
		c->started[k] = false;
	}
	if (block + n > c->nr_blocks)
		return -EIO;
	memcpy(buf, c->area[block], n * BS);
	return 0;
}

static void ck_start(void *ctx, u64 block, u32 n, void *buf)
{
	struct ck *c = ctx;
	int k = buf == c->win[1];

	c->nr_starts++;
	KUNIT_EXPECT_TRUE(c->test, buf == c->win[0] || buf == c->win[1]);
	KUNIT_EXPECT_FALSE(c->test, c->started[k]);
	c->started[k] = true;
	c->start_block[k] = block;
}

static int ck_load_seg(void *ctx, u64 s, const struct wow_ckpt_seg_info *si)
{
	struct ck *c = ctx;

	KUNIT_EXPECT_EQ(c->test, s, (u64)c->got_segs);
	c->got_seg[c->got_segs++] = *si;
	return 0;
}

static int ck_load_tomb(void *ctx, u64 s, const struct wow_tomb_range *tr)
{
	struct ck *c = ctx;

	if (c->got_tombs == MAX_TOMBS)
		return -ENOMEM;
	c->got_tomb_seg[c->got_tombs] = s;
	c->got_tomb[c->got_tombs++] = *tr;
	return 0;
}

static int ck_load_slot(void *ctx, u64 slot, u64 ob, bool dirty, u32 crc,
			bool has_crc)
{
	struct ck *c = ctx;

	KUNIT_EXPECT_TRUE(c->test, has_crc);
	/* the reader asked first */
	KUNIT_EXPECT_FALSE(c->test, c->cached[ob]);
	c->cached[ob] = true;
	c->got_slots++;
	c->got[slot] = true;
	c->got_ob[slot] = ob;
	c->got_dirty[slot] = dirty;
	c->got_crc[slot] = crc;
	return 0;
}

static bool ck_cached(void *ctx, u64 ob)
{
	return ((struct ck *)ctx)->cached[ob];
}

static void ck_add_tomb(struct ck *c, u32 s, u64 start, u64 t, u32 nr)
{
	c->tomb[c->nr_tombs] = (struct wow_tomb_range) {
		.start = start, .t = t, .nr = nr,
	};
	c->tomb_seg[c->nr_tombs++] = s;
	c->seg[s].nr_tombs++;
}

/* The reader over @c's area; @ahead: the slot table read a window ahead. */
static void ck_reader(struct ck *c, bool ahead)
{
	c->rd = (struct wow_ckpt_reader) {
		.version = VER,
		.block_size = BS,
		.blocks_per_seg = BPS,
		.uuid = uuid,
		.nr_slots = NSLOT,
		.nr_segments = NSEG,
		.max_tombs = 64,
		.nr_oblocks = NOBL,
		.read = ck_read,
		.start = ahead ? ck_start : NULL,
		.ctx = c,
		.win = { c->win[0], c->win[1] },
		.win_blocks = WIN,
		.csums = c->csums,
		.segs = c->pos,
	};
}

/*
 * A good checkpoint: every third segment holds a life (the odd ones
 * written to block 5, the even ones whole), a valid slot in each of their
 * written blocks but block 0, three tombstones (two of segment 3, one of
 * segment 6); the rest free and empty.
 */
static struct ck *ck_good(struct kunit *test)
{
	struct ck *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	u32 s, i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->test = test;
	for (s = 0; s < NSEG; s++) {
		if (!LIVE(s))
			continue;
		c->seg[s] = (struct wow_ckpt_seg_info) {
			.seq = 10 * (s + 1),
			.max_seq = 10 * (s + 1) + 5,
			.wp = s % 2 ? 5 : BPS,
			.closed = true,
		};
		for (i = 1; i < c->seg[s].wp; i++) {
			u32 slot = SLOT(s, i);

			c->slot[slot].e = wow_ckpt_slot_encode(slot + 7, true,
							       slot & 1);
			c->slot[slot].crc = 0x1000 + slot;
		}
	}
	ck_add_tomb(c, 3, 500, 32, 4);
	ck_add_tomb(c, 3, 40, 35, 1);
	ck_add_tomb(c, 6, 7, 190, 2);
	ck_write(c);
	ck_reader(c, true);
	return c;
}

/* Read @c's header, then the checkpoint: the load's verdict. */
static int ck_load(struct ck *c)
{
	const struct wow_ckpt_load_ops ops = {
		.load_seg = ck_load_seg,
		.load_tomb = ck_load_tomb,
		.cached = ck_cached,
		.load_slot = ck_load_slot,
		.ctx = c,
	};
	struct wow_ckpt_info ci;
	int r;

	r = wow_ckptread_header(&c->rd, c->hdr, &ci);
	if (r)
		return r;
	KUNIT_EXPECT_EQ(c->test, ci.generation, (u64)GEN);
	r = wow_ckptread_load(&c->rd, &ci, &ops);
	/* whatever the verdict, no read is left in flight */
	KUNIT_EXPECT_FALSE(c->test, c->started[0]);
	KUNIT_EXPECT_FALSE(c->test, c->started[1]);
	return r;
}

/* Expect the load refused with @fault at @index. */
static void ck_expect_fault(struct ck *c, int r, enum wow_ckpt_fault fault,
			    u64 index)
{
	KUNIT_EXPECT_EQ(c->test, r, -EUCLEAN);
	KUNIT_EXPECT_EQ(c->test, (int)c->rd.fault, (int)fault);
	KUNIT_EXPECT_EQ(c->test, c->rd.fault_index, index);
}

/* Everything a good checkpoint holds is handed over, as it was written. */
static void ck_expect_all(struct ck *c)
{
	struct kunit *test = c->test;
	u32 s, i, valid = 0;

	KUNIT_EXPECT_EQ(test, c->got_segs, (u32)NSEG);
	for (s = 0; s < NSEG; s++) {
		KUNIT_EXPECT_EQ(test, c->got_seg[s].seq, c->seg[s].seq);
		KUNIT_EXPECT_EQ(test, c->got_seg[s].max_seq, c->seg[s].max_seq);
		KUNIT_EXPECT_EQ(test, c->got_seg[s].wp, c->seg[s].wp);
		KUNIT_EXPECT_EQ(test, c->got_seg[s].nr_tombs,
				c->seg[s].nr_tombs);
		KUNIT_EXPECT_EQ(test, c->got_seg[s].closed, c->seg[s].closed);
	}
	KUNIT_EXPECT_EQ(test, c->got_tombs, c->nr_tombs);
	for (i = 0; i < c->nr_tombs; i++) {
		KUNIT_EXPECT_EQ(test, c->got_tomb_seg[i], (u64)c->tomb_seg[i]);
		KUNIT_EXPECT_EQ(test, c->got_tomb[i].start, c->tomb[i].start);
		KUNIT_EXPECT_EQ(test, c->got_tomb[i].t, c->tomb[i].t);
		KUNIT_EXPECT_EQ(test, c->got_tomb[i].nr, c->tomb[i].nr);
	}
	for (i = 0; i < NSLOT; i++) {
		u64 ob;
		bool v, d;

		KUNIT_ASSERT_TRUE(test, wow_ckpt_slot_decode(c->slot[i].e, &ob,
							     &v, &d));
		KUNIT_EXPECT_EQ(test, c->got[i], v);
		if (!v)
			continue;
		valid++;
		KUNIT_EXPECT_EQ(test, c->got_ob[i], ob);
		KUNIT_EXPECT_EQ(test, c->got_dirty[i], d);
		KUNIT_EXPECT_EQ(test, c->got_crc[i], c->slot[i].crc);
	}
	KUNIT_EXPECT_EQ(test, c->got_slots, valid);
	KUNIT_EXPECT_GT(test, valid, 0U);
	/* the slot table's crc32cs, as the stream holds them */
	for (i = 0; i < ck_slot_blocks(); i++)
		KUNIT_EXPECT_EQ(test, le32_to_cpu(c->csums[i]),
				wow_ckpt_slot_block_csum(c->area[1 + i], BS));
}

/*
 * A good checkpoint loads every segment, tombstone and valid slot, with
 * the slot table a window ahead (every window but the first started
 * before the one before it is taken in) and without.
 */
static void wow_ckptread_good_loads_everything(struct kunit *test)
{
	struct ck *c = ck_good(test);
	u64 windows = DIV_ROUND_UP(ck_slot_blocks(), WIN);

	KUNIT_EXPECT_EQ(test, ck_load(c), 0);
	KUNIT_EXPECT_EQ(test, (int)c->rd.fault, (int)WOW_CKPT_FAULT_NONE);
	ck_expect_all(c);
	KUNIT_EXPECT_EQ(test, (u64)c->nr_starts, windows);

	c = ck_good(test);
	ck_reader(c, false);
	KUNIT_EXPECT_EQ(test, ck_load(c), 0);
	ck_expect_all(c);
	KUNIT_EXPECT_EQ(test, c->nr_starts, 0U);
}

/* A stream block whose bytes changed under its seal is refused. */
static void wow_ckptread_bad_seal_refused(struct kunit *test)
{
	struct ck *c = ck_good(test);
	u64 first = 1 + ck_slot_blocks();

	/* in the second window: the first one's segments went over */
	c->area[first + WIN][17] ^= 0x20;
	ck_expect_fault(c, ck_load(c), WOW_CKPT_FAULT_STREAM_BLOCK, WIN);
	KUNIT_EXPECT_GT(test, c->got_segs, 0U);
	KUNIT_EXPECT_EQ(test, c->got_slots, 0U);
}

/*
 * A stream block sealed whole but by another checkpoint (another
 * generation: one left from the one before) is refused.
 */
static void wow_ckptread_wrong_generation_refused(struct kunit *test)
{
	struct ck *c = ck_good(test);
	u64 first = 1 + ck_slot_blocks();

	wow_ckpt_seal(c->area[first + 1], BS, GEN - 1, 1);
	ck_expect_fault(c, ck_load(c), WOW_CKPT_FAULT_STREAM_BLOCK, 1);
	/* and one sealed for another place in the stream */
	c = ck_good(test);
	wow_ckpt_seal(c->area[first], BS, GEN, 1);
	ck_expect_fault(c, ck_load(c), WOW_CKPT_FAULT_STREAM_BLOCK, 0);
	/* the whole stream of another generation */
	c = ck_good(test);
	ck_write_as(c, GEN + 1, c->nr_tombs);
	ck_expect_fault(c, ck_load(c), WOW_CKPT_FAULT_STREAM_BLOCK, 0);
}

/*
 * The segments' entries holding more tombstones than the header says is
 * refused before a tombstone is handed over; so is a malformed tombstone
 * or segment entry.
 */
static void wow_ckptread_tomb_total_mismatch_refused(struct kunit *test)
{
	struct ck *c = ck_good(test);

	/* segment 9 says it holds one; the stream has three in all */
	c->seg[9].nr_tombs = 1;
	ck_write_as(c, GEN, c->nr_tombs);
	ck_expect_fault(c, ck_load(c), WOW_CKPT_FAULT_TOMB_TOTAL, 4);
	KUNIT_EXPECT_EQ(test, c->rd.fault_value, 3ULL);
	KUNIT_EXPECT_EQ(test, c->got_tombs, 0U);
	KUNIT_EXPECT_EQ(test, c->got_segs, (u32)NSEG);

	/* a tombstone of segment 6 that is a clean mark */
	c = ck_good(test);
	c->tomb[2].flags = WOW_TOMB_CLEAN;
	ck_write(c);
	ck_expect_fault(c, ck_load(c), WOW_CKPT_FAULT_TOMB, 6);
	KUNIT_EXPECT_EQ(test, c->got_tombs, 2U);

	/* segment 6's write pointer past its end */
	c = ck_good(test);
	c->seg[6].wp = BPS + 1;
	ck_write(c);
	ck_expect_fault(c, ck_load(c), WOW_CKPT_FAULT_SEG, 6);
	KUNIT_EXPECT_EQ(test, c->got_segs, 6U);
}

/* A slot table block that does not match its crc32c is refused. */
static void wow_ckptread_bad_slot_block_csum_refused(struct kunit *test)
{
	struct ck *c = ck_good(test);
	u32 per = wow_ckpt_slots_per_block(VER, BS);

	/* block 3, the second window's second block */
	c->area[1 + 3][100] ^= 1;
	ck_expect_fault(c, ck_load(c), WOW_CKPT_FAULT_SLOT_BLOCK, 3);
	/* the first window's slots went over; none from block 2 on */
	KUNIT_EXPECT_TRUE(test, c->got[SLOT(0, 1)]);
	KUNIT_EXPECT_TRUE(test, c->got[2 * per - 1]);
	KUNIT_EXPECT_FALSE(test, c->got[2 * per]);
	KUNIT_EXPECT_FALSE(test, c->got[SLOT(30, 1)]);
	/* the third window's read was started, and waited for */
	KUNIT_EXPECT_EQ(test, c->nr_starts, 3U);
}

/*
 * A slot entry that cannot be (dirty but not valid; an empty slot with a
 * crc) is refused, though its block checks.
 */
static void wow_ckptread_malformed_slot_refused(struct kunit *test)
{
	struct ck *c = ck_good(test);

	/* segment 13 is free: its slots empty */
	c->slot[SLOT(13, 3)].e = WOW_CKPT_SLOT_DIRTY | 5;
	ck_write(c);
	ck_expect_fault(c, ck_load(c), WOW_CKPT_FAULT_SLOT, SLOT(13, 3));

	c = ck_good(test);
	c->slot[SLOT(1, 6)].crc = 0xabc;
	ck_write(c);
	ck_expect_fault(c, ck_load(c), WOW_CKPT_FAULT_SLOT, SLOT(1, 6));
}

/*
 * A valid slot where no copy can be (past the origin, block 0, a free
 * segment, past the write pointer, a block cached twice) is refused.
 */
static void wow_ckptread_misplaced_slot_refused(struct kunit *test)
{
	static const struct {
		u32 slot;
		u64 ob;
	} bad[] = {
		{ SLOT(3, 2), NOBL },		/* past the origin */
		{ SLOT(6, 0), 900 },		/* block 0: the record's */
		{ SLOT(20, 2), 901 },		/* a free segment */
		{ SLOT(3, 5), 902 },		/* at the write pointer */
		{ SLOT(9, 2), SLOT(0, 1) + 7 },	/* slot (0, 1)'s block */
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct ck *c = ck_good(test);

		c->slot[bad[i].slot].e = wow_ckpt_slot_encode(bad[i].ob, true,
							      false);
		ck_write(c);
		ck_expect_fault(c, ck_load(c), WOW_CKPT_FAULT_SLOT_PLACE,
				bad[i].slot);
		KUNIT_EXPECT_EQ(test, c->rd.fault_value, bad[i].ob);
	}
}

/*
 * An origin block is cached once: the reader asks the loader
 * (ops->cached) and refuses a slot whose block is cached already, before
 * it is handed over, whether an earlier slot of this checkpoint or the
 * loader itself holds it.
 */
static void wow_ckptread_cached_twice_refused(struct kunit *test)
{
	struct ck *c = ck_good(test);
	u64 ob = SLOT(3, 1) + 7;	/* slot (3, 1)'s block */

	c->slot[SLOT(6, 3)].e = wow_ckpt_slot_encode(ob, true, false);
	ck_write(c);
	ck_expect_fault(c, ck_load(c), WOW_CKPT_FAULT_SLOT_PLACE, SLOT(6, 3));
	KUNIT_EXPECT_EQ(test, c->rd.fault_value, ob);
	KUNIT_EXPECT_TRUE(test, c->got[SLOT(3, 1)]);
	KUNIT_EXPECT_FALSE(test, c->got[SLOT(6, 3)]);

	/* the loader holds slot (0, 2)'s block already */
	c = ck_good(test);
	ob = SLOT(0, 2) + 7;
	c->cached[ob] = true;
	ck_expect_fault(c, ck_load(c), WOW_CKPT_FAULT_SLOT_PLACE, SLOT(0, 2));
	KUNIT_EXPECT_EQ(test, c->rd.fault_value, ob);
	KUNIT_EXPECT_FALSE(test, c->got[SLOT(0, 2)]);
}

/*
 * The header: a closing copy that differs is no checkpoint (-ENOENT,
 * nothing read past it), nor is a header whose checksum fails, one
 * retired, or one with more tombstones than the area holds; the fault
 * carries the header's verdict.
 */
static void wow_ckptread_header_and_closing_copy(struct kunit *test)
{
	struct ck *c = ck_good(test);
	struct wow_ckpt_info ci;

	c->area[c->nr_blocks - 1][200] ^= 4;
	KUNIT_EXPECT_EQ(test, ck_load(c), -ENOENT);
	KUNIT_EXPECT_EQ(test, (int)c->rd.fault, (int)WOW_CKPT_FAULT_CLOSING);
	KUNIT_EXPECT_EQ(test, c->nr_reads, 2U);
	KUNIT_EXPECT_EQ(test, c->got_segs, 0U);

	c = ck_good(test);
	c->area[0][60] ^= 1;
	KUNIT_EXPECT_EQ(test, wow_ckptread_header(&c->rd, c->hdr, &ci),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, (int)c->rd.fault, (int)WOW_CKPT_FAULT_HEADER);
	KUNIT_EXPECT_EQ(test, c->rd.fault_index, (u64)WOW_CKPT_HDR_TORN);
	KUNIT_EXPECT_EQ(test, c->nr_reads, 1U);

	/* whole but retired, and valid with more tombstones than room */
	c = ck_good(test);
	c->ci.valid = false;
	wow_ckpt_header_encode(c->area[0], BS, uuid, &c->ci);
	KUNIT_EXPECT_EQ(test, wow_ckptread_header(&c->rd, c->hdr, &ci),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, c->rd.fault_index, (u64)WOW_CKPT_HDR_RETIRED);
	KUNIT_EXPECT_EQ(test, ci.generation, (u64)GEN);
	c = ck_good(test);
	c->rd.max_tombs = c->nr_tombs - 1;
	KUNIT_EXPECT_EQ(test, wow_ckptread_header(&c->rd, c->hdr, &ci),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, c->rd.fault_index, (u64)WOW_CKPT_HDR_TOMBS);
}

static struct kunit_case wow_ckptread_cases[] = {
	KUNIT_CASE(wow_ckptread_good_loads_everything),
	KUNIT_CASE(wow_ckptread_bad_seal_refused),
	KUNIT_CASE(wow_ckptread_wrong_generation_refused),
	KUNIT_CASE(wow_ckptread_tomb_total_mismatch_refused),
	KUNIT_CASE(wow_ckptread_bad_slot_block_csum_refused),
	KUNIT_CASE(wow_ckptread_malformed_slot_refused),
	KUNIT_CASE(wow_ckptread_misplaced_slot_refused),
	KUNIT_CASE(wow_ckptread_cached_twice_refused),
	KUNIT_CASE(wow_ckptread_header_and_closing_copy),
	{}
};

static struct kunit_suite wow_ckptread_suite = {
	.name = "dm_wow_ckptread",
	.test_cases = wow_ckptread_cases,
};

kunit_test_suite(wow_ckptread_suite);
