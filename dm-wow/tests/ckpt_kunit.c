// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the checkpoint codec (dm-wow-ckpt.c) and the version 2
 * geometry (dm-wow-format.h): area sizes, slot entries, sealed blocks, the
 * segment stream's bytes over blocks, the header.
 */
#include <kunit/test.h>

#include "../dm-wow.h"

static const u8 uuid[16] = { 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };

/* The header tests' caches are version 2's: room for slots / 8 + 64. */
#define MAXT(slots)	wow_ckpt_max_tombs(slots)

/* At 4 KiB blocks the slot table is 6 bytes per block: under 1/512. */
static void wow_ckpt_area_sizes(struct kunit *test)
{
	u64 slots = 1ULL << 28;		/* 1 TiB of 4 KiB blocks */
	u64 segs = slots / 512;		/* 2 MiB erase blocks */
	u64 sb = wow_ckpt_slot_blocks(4, slots, 4096);
	u64 read = (1 + sb + wow_ckpt_seg_blocks(4, slots, segs, 0, 4096)) *
		   4096ULL;

	KUNIT_EXPECT_EQ(test, wow_ckpt_slots_per_block(4, 4096), 682U);
	KUNIT_EXPECT_EQ(test, wow_ckpt_slots_per_block(4, 512), 85U);
	KUNIT_EXPECT_EQ(test, sb, DIV_ROUND_UP_ULL(slots, 682));
	/* what a load after a clean shutdown reads: under 1/512 */
	KUNIT_EXPECT_LT(test, read, (slots * 4096) / 512);
	KUNIT_EXPECT_EQ(test, wow_ckpt_seg_blocks(4, slots, segs, 10, 4096),
			DIV_ROUND_UP_ULL(segs * 32 + sb * 4 + 10 * 24, 4080));
	/* 682 slots fill one block; 683 need two */
	KUNIT_EXPECT_EQ(test, wow_ckpt_slot_blocks(4, 682, 4096), 1ULL);
	KUNIT_EXPECT_EQ(test, wow_ckpt_slot_blocks(4, 683, 4096), 2ULL);
	KUNIT_EXPECT_EQ(test, wow_ckpt_area_blocks_v(2, 1, 16384, 4096),
			1 + 1 + wow_ckpt_seg_blocks(4, 4, 1, 64, 4096));
	/* version 5's entries hold the crc too: 10 bytes, 409 a block */
	KUNIT_EXPECT_EQ(test, wow_ckpt_slot_blocks(5, slots, 4096),
			DIV_ROUND_UP_ULL(slots, 409));
	KUNIT_EXPECT_GT(test, wow_ckpt_area_blocks_v(5, segs, 2 << 20, 4096),
			wow_ckpt_area_blocks_v(4, segs, 2 << 20, 4096));
	/* version 3 adds the closing copy of the header */
	KUNIT_EXPECT_EQ(test, wow_ckpt_area_blocks_v(3, 1, 16384, 4096),
			2 + 1 + wow_ckpt_seg_blocks(4, 4, 1, 64, 4096));
}

/* Version 2 geometry: segments fit after their own area, aligned. */
static void wow_ckpt_geometry(struct kunit *test)
{
	u32 eb = 1U << 20, bs = 4096;
	u64 cache = 64ULL << 11;	/* 64 MiB in sectors */
	u64 n, first;

	/* a small cache: the area fits in erase block 0 */
	KUNIT_EXPECT_EQ(test, wow_nr_segments_v(2, cache, eb, bs), 63ULL);
	KUNIT_EXPECT_EQ(test, wow_first_segment_sector_v(2, 63, eb, bs),
			2048ULL);
	/* version 1 is unchanged */
	KUNIT_EXPECT_EQ(test, wow_nr_segments_v(1, cache, eb, bs), 63ULL);
	KUNIT_EXPECT_EQ(test, wow_first_segment_sector_v(1, 63, eb, bs),
			2048ULL);
	/* 64 GiB: the area takes erase blocks; whatever n is, it fits */
	cache = 64ULL << 21;
	n = wow_nr_segments_v(2, cache, eb, bs);
	first = wow_first_segment_sector_v(2, n, eb, bs);
	KUNIT_EXPECT_GT(test, first, 2048ULL);
	KUNIT_EXPECT_EQ(test, first % 2048, 0ULL);
	KUNIT_EXPECT_LE(test, first + n * 2048, cache);
	/* and one more segment would not */
	KUNIT_EXPECT_GT(test, wow_first_segment_sector_v(2, n + 1, eb, bs) +
			(n + 1) * 2048, cache);
	KUNIT_EXPECT_GE(test, (first >> 3) * 4096ULL,
			(2 + wow_ckpt_area_blocks_v(2, n, eb, bs)) * 4096ULL);
	/*
	 * 16 KiB erase blocks of 4 blocks: the area (header, a slot block, a
	 * stream block) does not fit beside the superblock and health block,
	 * so the segments start at the second erase block
	 */
	KUNIT_EXPECT_EQ(test, wow_first_segment_sector_v(2, 4, 16384, 4096),
			64ULL);
	KUNIT_EXPECT_EQ(test, wow_min_cache_sectors_v(2, 16384, 4096),
			64ULL + 4 * 32);
	KUNIT_EXPECT_EQ(test, wow_nr_segments_v(2, 64 + 4 * 32, 16384, 4096),
			4ULL);
	KUNIT_EXPECT_EQ(test, wow_nr_segments_v(2, 64 + 4 * 32 - 1, 16384,
						4096), 3ULL);

	/*
	 * Version 3: erase block 0 holds only the superblock and the health
	 * block; the area starts at erase block 1 and takes whole erase
	 * blocks, so a 64 MiB cache has one segment fewer than version 2
	 */
	cache = 64ULL << 11;
	KUNIT_EXPECT_EQ(test, wow_ckpt_first_block_v(3, eb, bs), 256ULL);
	KUNIT_EXPECT_EQ(test, wow_ckpt_first_block_v(2, eb, bs), 2ULL);
	KUNIT_EXPECT_EQ(test, wow_nr_segments_v(3, cache, eb, bs), 62ULL);
	KUNIT_EXPECT_EQ(test, wow_first_segment_sector_v(3, 62, eb, bs),
			4096ULL);
	KUNIT_EXPECT_EQ(test, wow_min_cache_sectors_v(3, eb, bs),
			(2 + 4) * 2048ULL);
	cache = 64ULL << 21;
	n = wow_nr_segments_v(3, cache, eb, bs);
	first = wow_first_segment_sector_v(3, n, eb, bs);
	KUNIT_EXPECT_EQ(test, first % 2048, 0ULL);
	KUNIT_EXPECT_LE(test, first + n * 2048, cache);
	KUNIT_EXPECT_GT(test, wow_first_segment_sector_v(3, n + 1, eb, bs) +
			(n + 1) * 2048, cache);
	KUNIT_EXPECT_GE(test, first * 512ULL,
			(256 + wow_ckpt_area_blocks_v(3, n, eb, bs)) * 4096ULL);

	/*
	 * Version 4: two areas, each version 3's rounded up to whole erase
	 * blocks, area 1 right after area 0, the segments right after it:
	 * a 64 MiB cache has one segment fewer than version 3
	 */
	cache = 64ULL << 11;
	KUNIT_EXPECT_EQ(test, wow_ckpt_span_v(3, 61, eb, bs), 0ULL);
	KUNIT_EXPECT_EQ(test, wow_ckpt_span_v(4, 61, eb, bs), 256ULL);
	KUNIT_EXPECT_EQ(test, wow_ckpt_area_blocks_v(4, 61, eb, bs), 512ULL);
	KUNIT_EXPECT_EQ(test, wow_ckpt_first_block_v(4, eb, bs), 256ULL);
	KUNIT_EXPECT_EQ(test, wow_nr_segments_v(4, cache, eb, bs), 61ULL);
	KUNIT_EXPECT_EQ(test, wow_first_segment_sector_v(4, 61, eb, bs),
			3 * 2048ULL);
	KUNIT_EXPECT_EQ(test, wow_min_cache_sectors_v(4, eb, bs),
			(3 + 4) * 2048ULL);
	/* each area holds as much as version 3's one */
	KUNIT_EXPECT_EQ(test, wow_ckpt_max_tombs_v(4, 61, eb, bs),
			wow_ckpt_max_tombs_v(3, 61, eb, bs));
	cache = 64ULL << 21;
	n = wow_nr_segments_v(4, cache, eb, bs);
	first = wow_first_segment_sector_v(4, n, eb, bs);
	KUNIT_EXPECT_EQ(test, first % 2048, 0ULL);
	KUNIT_EXPECT_LE(test, first + n * 2048, cache);
	KUNIT_EXPECT_GT(test, wow_first_segment_sector_v(4, n + 1, eb, bs) +
			(n + 1) * 2048, cache);
	KUNIT_EXPECT_EQ(test, wow_ckpt_span_v(4, n, eb, bs) % 256, 0ULL);
	KUNIT_EXPECT_GE(test, wow_ckpt_span_v(4, n, eb, bs),
			wow_ckpt_area_blocks_v(3, n, eb, bs));
	KUNIT_EXPECT_EQ(test, first * 512ULL,
			(256 + 2 * wow_ckpt_span_v(4, n, eb, bs)) * 4096ULL);
}

/*
 * Version 4's segment count is the most that fits beside its two areas,
 * found in a few steps even for sizes no cache has (a fuzzed superblock:
 * an earlier version stepped up one segment at a time and spun for
 * minutes in the constructor, fuzz-metadata).
 */
static void wow_ckpt_v4_count_is_max(struct kunit *test)
{
	static const u64 sizes[] = { 7ULL << 11, 64ULL << 11, 1ULL << 31,
				     (1ULL << 40) + 12345, (1ULL << 50) + 7 };
	static const u32 geo[][2] = { { 2048, 512 }, { 1 << 20, 4096 },
				      { 4 << 20, 65536 }, { 16384, 4096 } };
	u32 i, j;

	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		for (j = 0; j < ARRAY_SIZE(geo); j++) {
			u32 eb = geo[j][0], bs = geo[j][1];
			u64 c = sizes[i], seg = eb >> 9;
			u64 n = wow_nr_segments_v(4, c, eb, bs);

			if (n)
				KUNIT_EXPECT_LE(test,
						wow_first_segment_sector_v(4, n, eb, bs) +
						n * seg, c);
			KUNIT_EXPECT_GT(test,
					wow_first_segment_sector_v(4, n + 1, eb, bs) +
					(n + 1) * seg, c);
		}
}

/*
 * Version 3's room for tombstones is what its whole erase blocks leave:
 * a stream of that many fits, one more does not, and it is never less
 * than version 2's slots / 8 + 64.  Version 2 keeps its own.
 */
static void wow_ckpt_tomb_room(struct kunit *test)
{
	static const u64 segs[] = { 4, 14, 127, 1024, 65536 };
	static const u32 ebs[] = { 1 << 20, 4 << 20 };
	u32 bs = 4096, i, j;

	for (j = 0; j < ARRAY_SIZE(ebs); j++) {
		u32 eb = ebs[j], per = eb / bs;

		for (i = 0; i < ARRAY_SIZE(segs); i++) {
			u64 n = segs[i], slots = n * per;
			u64 room = wow_ckpt_max_tombs_v(3, n, eb, bs);
			u64 area = wow_first_segment_sector_v(3, n, eb, bs) /
				   (bs >> 9) - per;
			u64 sb = wow_ckpt_slot_blocks(4, slots, bs);

			KUNIT_EXPECT_GE(test, room, wow_ckpt_max_tombs(slots));
			KUNIT_EXPECT_LE(test, 2 + sb +
					wow_ckpt_seg_blocks(4, slots, n, room, bs),
					area);
			KUNIT_EXPECT_GT(test, 2 + sb +
					wow_ckpt_seg_blocks(4, slots, n, room + 1,
							    bs), area);
			KUNIT_EXPECT_EQ(test,
					wow_ckpt_max_tombs_v(2, n, eb, bs),
					wow_ckpt_max_tombs(slots));
		}
	}
	/* a 16 MiB cache: 14 segments, one erase block of area */
	KUNIT_EXPECT_EQ(test, wow_ckpt_max_tombs_v(3, 14, 1 << 20, 4096),
			((256 - 2 - 6) * 4080ULL - 14 * 32 - 6 * 4) / 24);
}

static void wow_ckpt_slot_entries(struct kunit *test)
{
	u8 *blk = kunit_kzalloc(test, 4096, GFP_KERNEL);
	struct wow_ckpt_entry x, y;
	u64 ob, e;
	bool v, d;

	KUNIT_ASSERT_NOT_NULL(test, blk);
	KUNIT_EXPECT_EQ(test, wow_ckpt_slot_encode(5, false, true), 0ULL);
	KUNIT_EXPECT_TRUE(test, wow_ckpt_slot_decode(0, &ob, &v, &d));
	KUNIT_EXPECT_FALSE(test, v);
	e = wow_ckpt_slot_encode(WOW_MAX_OBLOCK, true, true);
	KUNIT_EXPECT_TRUE(test, wow_ckpt_slot_decode(e, &ob, &v, &d));
	KUNIT_EXPECT_EQ(test, ob, WOW_MAX_OBLOCK);
	KUNIT_EXPECT_TRUE(test, v);
	KUNIT_EXPECT_TRUE(test, d);
	e = wow_ckpt_slot_encode(12345, true, false);
	KUNIT_EXPECT_TRUE(test, wow_ckpt_slot_decode(e, &ob, &v, &d));
	KUNIT_EXPECT_EQ(test, ob, 12345ULL);
	KUNIT_EXPECT_TRUE(test, v);
	KUNIT_EXPECT_FALSE(test, d);
	/* malformed: past 48 bits, dirty without valid, a block when empty */
	KUNIT_EXPECT_FALSE(test, wow_ckpt_slot_decode(WOW_CKPT_SLOT_VALID |
						      (1ULL << 50), &ob, &v,
						      &d));
	KUNIT_EXPECT_FALSE(test, wow_ckpt_slot_decode(WOW_CKPT_SLOT_DIRTY,
						      &ob, &v, &d));
	KUNIT_EXPECT_FALSE(test, wow_ckpt_slot_decode(7, &ob, &v, &d));

	/* 6 bytes each, little endian, neighbours untouched */
	x.e = 0x80123456789aULL;
	x.crc = 0xdeadbeef;
	wow_ckpt_slot_put(blk, 6, 1, &x);
	KUNIT_EXPECT_EQ(test, blk[5], 0U);
	KUNIT_EXPECT_EQ(test, blk[6], 0x9aU);
	KUNIT_EXPECT_EQ(test, blk[11], 0x80U);
	KUNIT_EXPECT_EQ(test, blk[12], 0U);
	wow_ckpt_slot_get(blk, 6, 1, &y);
	KUNIT_EXPECT_EQ(test, y.e, 0x80123456789aULL);
	KUNIT_EXPECT_EQ(test, y.crc, 0U);
	wow_ckpt_slot_get(blk, 6, 0, &y);
	KUNIT_EXPECT_EQ(test, y.e, 0ULL);
	x.e = e;
	wow_ckpt_slot_put(blk, 6, 681, &x);
	wow_ckpt_slot_get(blk, 6, 681, &y);
	KUNIT_EXPECT_EQ(test, y.e, e);
	wow_ckpt_slot_get(blk, 6, 1, &y);
	KUNIT_EXPECT_EQ(test, y.e, 0x80123456789aULL);

	/* version 5: 10 bytes each, the crc32c after the 48 bits */
	memset(blk, 0, 4096);
	KUNIT_EXPECT_EQ(test, wow_ckpt_slot_bytes(5), 10U);
	KUNIT_EXPECT_EQ(test, wow_ckpt_slot_bytes(4), 6U);
	KUNIT_EXPECT_EQ(test, wow_ckpt_slots_per_block(5, 4096), 409U);
	x.e = 0x80123456789aULL;
	x.crc = 0xdeadbeef;
	wow_ckpt_slot_put(blk, 10, 1, &x);
	KUNIT_EXPECT_EQ(test, blk[9], 0U);
	KUNIT_EXPECT_EQ(test, blk[10], 0x9aU);
	KUNIT_EXPECT_EQ(test, blk[15], 0x80U);
	KUNIT_EXPECT_EQ(test, blk[16], 0xefU);
	KUNIT_EXPECT_EQ(test, blk[19], 0xdeU);
	KUNIT_EXPECT_EQ(test, blk[20], 0U);
	wow_ckpt_slot_get(blk, 10, 1, &y);
	KUNIT_EXPECT_EQ(test, y.e, x.e);
	KUNIT_EXPECT_EQ(test, y.crc, 0xdeadbeefU);
	wow_ckpt_slot_put(blk, 10, 408, &x);
	wow_ckpt_slot_get(blk, 10, 408, &y);
	KUNIT_EXPECT_EQ(test, y.crc, 0xdeadbeefU);
	wow_ckpt_slot_get(blk, 10, 0, &y);
	KUNIT_EXPECT_EQ(test, y.e, 0ULL);
	KUNIT_EXPECT_EQ(test, y.crc, 0U);
}

/* A sealed block checks only as its own generation and index, intact. */
static void wow_ckpt_sealed_blocks(struct kunit *test)
{
	u8 *blk = kunit_kzalloc(test, 4096, GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, blk);
	for (i = 0; i < 4080; i++)
		blk[i] = i * 7;
	wow_ckpt_seal(blk, 4096, 42, 9);
	KUNIT_EXPECT_TRUE(test, wow_ckpt_block_ok(blk, 4096, 42, 9));
	KUNIT_EXPECT_FALSE(test, wow_ckpt_block_ok(blk, 4096, 41, 9));
	KUNIT_EXPECT_FALSE(test, wow_ckpt_block_ok(blk, 4096, 42, 10));
	for (i = 0; i < 4096; i++) {
		blk[i] ^= 0x01;
		KUNIT_EXPECT_FALSE(test, wow_ckpt_block_ok(blk, 4096, 42, 9));
		blk[i] ^= 0x01;
	}
	KUNIT_EXPECT_TRUE(test, wow_ckpt_block_ok(blk, 4096, 42, 9));
	memset(blk, 0, 4096);
	KUNIT_EXPECT_FALSE(test, wow_ckpt_block_ok(blk, 4096, 0, 0));
}

/*
 * The segment stream over 512-byte blocks (496 bytes of payload each):
 * a record that straddles blocks and windows goes in and comes back out.
 */
static void wow_ckpt_stream_bytes(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, 2 * 512, GFP_KERNEL);
	u8 in[40], out[40];
	u32 i, c;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < sizeof(in); i++)
		in[i] = i + 1;
	/* window of blocks 0..1: 20 bytes before block 1, 20 in it */
	c = wow_ckpt_stream_copy(buf, 512, 0, 2, 476, in, 40, true);
	KUNIT_EXPECT_EQ(test, c, 40U);
	KUNIT_EXPECT_EQ(test, buf[476], 1U);
	KUNIT_EXPECT_EQ(test, buf[495], 20U);
	KUNIT_EXPECT_EQ(test, buf[496], 0U);	/* the trailer: untouched */
	KUNIT_EXPECT_EQ(test, buf[512], 21U);
	c = wow_ckpt_stream_copy(buf, 512, 0, 2, 476, out, 40, false);
	KUNIT_EXPECT_EQ(test, c, 40U);
	KUNIT_EXPECT_EQ(test, memcmp(in, out, 40), 0);
	/* the window ends inside: only what fits */
	c = wow_ckpt_stream_copy(buf, 512, 0, 2, 2 * 496 - 8, in, 40, true);
	KUNIT_EXPECT_EQ(test, c, 8U);
	/* outside the window */
	KUNIT_EXPECT_EQ(test, wow_ckpt_stream_copy(buf, 512, 2, 2, 10, in, 4,
						   true), 0U);
	/* a window of blocks 2..3: byte 2 * 496 is its first */
	memset(buf, 0, 1024);
	c = wow_ckpt_stream_copy(buf, 512, 2, 2, 2 * 496, in, 4, true);
	KUNIT_EXPECT_EQ(test, c, 4U);
	KUNIT_EXPECT_EQ(test, buf[0], 1U);
}

static void wow_ckpt_header_round_trip(struct kunit *test)
{
	u8 *blk = kunit_kzalloc(test, 4096, GFP_KERNEL);
	const u8 other[16] = { 1 };
	struct wow_ckpt_info ci = {
		.valid = true, .generation = 3, .next_seq = 1000,
		.completed_seq = 999, .nr_slots = 4096, .nr_segments = 16,
		.nr_tombs = 5,
	}, out;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, blk);
	ci.slot_blocks = wow_ckpt_slot_blocks(4, 4096, 4096);
	ci.seg_blocks = wow_ckpt_seg_blocks(4, 4096, 16, 5, 4096);
	wow_ckpt_header_encode(blk, 4096, uuid, &ci);
	KUNIT_EXPECT_TRUE(test, wow_ckpt_header_decode(blk, 4, 4096, uuid, 4096,
						       16, MAXT(4096), &out));
	KUNIT_EXPECT_EQ(test, out.generation, 3ULL);
	KUNIT_EXPECT_EQ(test, out.next_seq, 1000ULL);
	KUNIT_EXPECT_EQ(test, out.completed_seq, 999ULL);
	KUNIT_EXPECT_EQ(test, out.nr_tombs, 5ULL);
	KUNIT_EXPECT_EQ(test, out.slot_blocks, ci.slot_blocks);
	/* another cache, another geometry: no checkpoint */
	KUNIT_EXPECT_FALSE(test, wow_ckpt_header_decode(blk, 4, 4096, other, 4096,
							16, MAXT(4096), &out));
	KUNIT_EXPECT_FALSE(test, wow_ckpt_header_decode(blk, 4, 4096, uuid, 8192,
							16, MAXT(8192), &out));
	KUNIT_EXPECT_FALSE(test, wow_ckpt_header_decode(blk, 4, 4096, uuid, 4096,
							15, MAXT(4096), &out));
	/* any flipped byte of the covered part */
	for (i = 0; i < 512; i++) {
		blk[i] ^= 0x80;
		KUNIT_EXPECT_FALSE(test, wow_ckpt_header_decode(blk, 4, 4096, uuid,
								4096, 16, MAXT(4096),
								&out));
		blk[i] ^= 0x80;
	}
	/* retired: written before the first record after a load or resume */
	ci.valid = false;
	wow_ckpt_header_encode(blk, 4096, uuid, &ci);
	KUNIT_EXPECT_FALSE(test, wow_ckpt_header_decode(blk, 4, 4096, uuid, 4096,
							16, MAXT(4096), &out));
	KUNIT_EXPECT_EQ(test, out.generation, 3ULL);
	/* table sizes that do not match the counts */
	ci.valid = true;
	ci.seg_blocks++;
	wow_ckpt_header_encode(blk, 4096, uuid, &ci);
	KUNIT_EXPECT_FALSE(test, wow_ckpt_header_decode(blk, 4, 4096, uuid, 4096,
							16, MAXT(4096), &out));
	ci.seg_blocks--;
	ci.slot_blocks++;
	wow_ckpt_header_encode(blk, 4096, uuid, &ci);
	KUNIT_EXPECT_FALSE(test, wow_ckpt_header_decode(blk, 4, 4096, uuid, 4096,
							16, MAXT(4096), &out));
	ci.slot_blocks--;
	/* more tombstones than the area holds */
	ci.nr_tombs = wow_ckpt_max_tombs(4096) + 1;
	ci.seg_blocks = wow_ckpt_seg_blocks(4, 4096, 16, ci.nr_tombs, 4096);
	wow_ckpt_header_encode(blk, 4096, uuid, &ci);
	KUNIT_EXPECT_FALSE(test, wow_ckpt_header_decode(blk, 4, 4096, uuid, 4096,
							16, MAXT(4096), &out));
	/* seqs out of order */
	ci.nr_tombs = 5;
	ci.seg_blocks = wow_ckpt_seg_blocks(4, 4096, 16, 5, 4096);
	ci.completed_seq = ci.next_seq;
	wow_ckpt_header_encode(blk, 4096, uuid, &ci);
	KUNIT_EXPECT_FALSE(test, wow_ckpt_header_decode(blk, 4, 4096, uuid, 4096,
							16, MAXT(4096), &out));
}

/*
 * Replay over a checkpoint: which tombstones (t) cover a checkpointed
 * copy whose segment life's newest record was @life_max.
 */
static void wow_ckpt_covers_rules(struct kunit *test)
{
	/* a discard after the checkpoint: t past every checkpointed seq */
	KUNIT_EXPECT_TRUE(test, wow_ckpt_covers(100, 150));
	/* reclaim of the victim: t = its newest seq */
	KUNIT_EXPECT_TRUE(test, wow_ckpt_covers(100, 100));
	/* carried forward: older than the copy that survived it */
	KUNIT_EXPECT_FALSE(test, wow_ckpt_covers(100, 99));
	KUNIT_EXPECT_FALSE(test, wow_ckpt_covers(100, 1));
	/* no checkpointed copy is left in the segment */
	KUNIT_EXPECT_FALSE(test, wow_ckpt_covers(0, 150));
}

/* The log head the header names round-trips, "none" included. */
static void wow_ckpt_header_head(struct kunit *test)
{
	u8 *blk = kunit_kzalloc(test, 4096, GFP_KERNEL);
	struct wow_ckpt_info ci = {
		.valid = true, .generation = 1, .next_seq = 10,
		.completed_seq = 9, .nr_slots = 4096, .nr_segments = 16,
		.head_seg = 7, .head_wp = 33, .next_seg = WOW_NO_SEG,
	}, out;

	KUNIT_ASSERT_NOT_NULL(test, blk);
	ci.slot_blocks = wow_ckpt_slot_blocks(4, 4096, 4096);
	ci.seg_blocks = wow_ckpt_seg_blocks(4, 4096, 16, 0, 4096);
	wow_ckpt_header_encode(blk, 4096, uuid, &ci);
	KUNIT_ASSERT_TRUE(test, wow_ckpt_header_decode(blk, 4, 4096, uuid, 4096,
						       16, MAXT(4096), &out));
	KUNIT_EXPECT_EQ(test, out.head_seg, 7U);
	KUNIT_EXPECT_EQ(test, out.head_wp, 33U);
	KUNIT_EXPECT_EQ(test, out.next_seg, WOW_NO_SEG);
	ci.head_seg = WOW_NO_SEG;
	ci.next_seg = 0;
	wow_ckpt_header_encode(blk, 4096, uuid, &ci);
	KUNIT_ASSERT_TRUE(test, wow_ckpt_header_decode(blk, 4, 4096, uuid, 4096,
						       16, MAXT(4096), &out));
	KUNIT_EXPECT_EQ(test, out.head_seg, WOW_NO_SEG);
	KUNIT_EXPECT_EQ(test, out.next_seg, 0U);
}

static struct kunit_case wow_ckpt_cases[] = {
	KUNIT_CASE(wow_ckpt_covers_rules),
	KUNIT_CASE(wow_ckpt_header_head),
	KUNIT_CASE(wow_ckpt_area_sizes),
	KUNIT_CASE(wow_ckpt_geometry),
	KUNIT_CASE(wow_ckpt_v4_count_is_max),
	KUNIT_CASE(wow_ckpt_tomb_room),
	KUNIT_CASE(wow_ckpt_slot_entries),
	KUNIT_CASE(wow_ckpt_sealed_blocks),
	KUNIT_CASE(wow_ckpt_stream_bytes),
	KUNIT_CASE(wow_ckpt_header_round_trip),
	{}
};

static struct kunit_suite wow_ckpt_suite = {
	.name = "dm_wow_ckpt",
	.test_cases = wow_ckpt_cases,
};

kunit_test_suite(wow_ckpt_suite);
