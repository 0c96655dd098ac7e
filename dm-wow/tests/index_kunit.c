// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for dm-wow's index (dm-wow-index.c).
 */
#include <kunit/test.h>
#include <linux/random.h>
#include <linux/vmalloc.h>

#include "../dm-wow.h"

static struct wow_index *new_index(struct kunit *test, u32 nr)
{
	struct wow_index *ix = kunit_kzalloc(test, sizeof(*ix), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ix);
	KUNIT_ASSERT_EQ(test, wow_index_init(ix, nr), 0);
	return ix;
}

static void wow_index_slot_is_16_bytes(struct kunit *test)
{
	/* plus at most 2 bytes of bucket heads per slot */
	KUNIT_EXPECT_EQ(test, sizeof(struct wow_slot), 16UL);
}

/*
 * At most 18 bytes per slot (and a bit per 512 slots for each checkpoint
 * area's track), and chains of two to four when full.
 */
static void wow_index_memory_bound(struct kunit *test)
{
	static const u32 sizes[] = { 1, 2, 3, 4, 5, 1000, 131073, 2097157 };
	u32 i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct wow_index *ix = new_index(test, sizes[i]);
		u64 buckets = 1ULL << ix->hash_bits;

		KUNIT_EXPECT_LE_MSG(test, wow_index_bytes(ix),
				    18ULL * sizes[i] + sizes[i] / 1024 + 256,
				    "%u slots", sizes[i]);
		if (sizes[i] >= 4) {
			KUNIT_EXPECT_LE(test, 2 * buckets, (u64)sizes[i]);
			KUNIT_EXPECT_GT(test, 4 * buckets, (u64)sizes[i]);
		}
		wow_index_exit(ix);
	}
}

static void wow_index_lookup_empty(struct kunit *test)
{
	struct wow_index *ix = new_index(test, 64);

	KUNIT_EXPECT_EQ(test, wow_index_lookup(ix, to_oblock(0)), WOW_NO_SLOT);
	KUNIT_EXPECT_EQ(test, wow_index_lookup(ix, to_oblock(12345)),
			WOW_NO_SLOT);
	KUNIT_EXPECT_EQ(test, ix->nr_valid, 0U);
	wow_index_exit(ix);
}

/*
 * A slot's crc is its data's (format 5): set after the insert that made
 * it current, gone with the next insert there; it changes the slot's
 * entry.  BAD is not in a checkpoint.
 */
static void wow_index_block_crc(struct kunit *test)
{
	struct wow_index *ix = new_index(test, 4096);
	unsigned long *m;
	struct wow_slot *sl = wow_slot_at(ix, 1000);

	m = kunit_kcalloc(test, BITS_TO_LONGS(ix->nr_track_bits),
			  sizeof(unsigned long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	wow_index_insert(ix, to_oblock(7), 1000, WOW_SLOT_DIRTY);
	KUNIT_EXPECT_FALSE(test, sl->flags & WOW_SLOT_CRC);
	wow_index_take_changes(ix, 0, m);
	wow_index_set_crc(ix, 1000, 0xdeadbeef);
	KUNIT_EXPECT_TRUE(test, sl->flags & WOW_SLOT_CRC);
	KUNIT_EXPECT_EQ(test, sl->crc, 0xdeadbeefU);
	KUNIT_EXPECT_TRUE(test, wow_index_changed(ix, ix->track[0], 1000, 1));
	wow_index_take_changes(ix, 0, m);
	wow_index_set_flags(ix, 1000, WOW_SLOT_BAD, 0);
	KUNIT_EXPECT_FALSE(test, wow_index_changed(ix, ix->track[0], 0, 4096));
	KUNIT_EXPECT_TRUE(test, sl->flags & WOW_SLOT_CRC);
	/* another copy in the slot: neither its crc nor BAD are known */
	wow_index_remove(ix, 1000);
	wow_index_insert(ix, to_oblock(8), 1000, WOW_SLOT_DIRTY);
	KUNIT_EXPECT_FALSE(test, sl->flags & (WOW_SLOT_CRC | WOW_SLOT_BAD));
	wow_index_exit(ix);
}

/* Slots a checkpoint area must be written again for, one track an area. */
static void wow_index_tracks_changes(struct kunit *test)
{
	struct wow_index *ix = new_index(test, 4096);
	unsigned long *m;
	unsigned int t;

	m = kunit_kcalloc(test, BITS_TO_LONGS(ix->nr_track_bits),
			  sizeof(unsigned long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_EXPECT_EQ(test, ix->nr_track_bits, 4096U >> WOW_TRACK_SHIFT);
	/* a fresh index knows nothing of either area */
	for (t = 0; t < WOW_INDEX_TRACKS; t++) {
		wow_index_take_changes(ix, t, m);
		KUNIT_EXPECT_TRUE(test, wow_index_changed(ix, m, 0, 1));
		KUNIT_EXPECT_TRUE(test, wow_index_changed(ix, m, 4095, 1));
		KUNIT_EXPECT_FALSE(test, wow_index_changed(ix, ix->track[t],
							   0, 4096));
	}

	/* an insert changes its slot's entry in both areas */
	wow_index_insert(ix, to_oblock(7), 1000, WOW_SLOT_DIRTY);
	wow_index_take_changes(ix, 0, m);
	KUNIT_EXPECT_TRUE(test, wow_index_changed(ix, m, 1000, 1));
	KUNIT_EXPECT_TRUE(test, wow_index_changed(ix, m, 0, 1001));
	KUNIT_EXPECT_FALSE(test, wow_index_changed(ix, m, 0, 512));
	KUNIT_EXPECT_FALSE(test, wow_index_changed(ix, m, 1024, 3072));
	KUNIT_EXPECT_FALSE(test, wow_index_changed(ix, m, 1000, 0));
	KUNIT_EXPECT_EQ(test, wow_index_next_changed(ix, m, 0), 512ULL);
	KUNIT_EXPECT_EQ(test, wow_index_next_changed(ix, m, 700), 700ULL);
	KUNIT_EXPECT_EQ(test, wow_index_next_changed(ix, m, 1024), U64_MAX);
	KUNIT_EXPECT_EQ(test, wow_index_next_changed(ix, m, 5000), U64_MAX);
	KUNIT_EXPECT_TRUE(test, wow_index_changed(ix, ix->track[1], 1000, 1));
	wow_index_take_changes(ix, 1, m);

	/* DESTAGING is not in a checkpoint; DIRTY is */
	wow_index_set_flags(ix, 1000, WOW_SLOT_DESTAGING, 0);
	KUNIT_EXPECT_FALSE(test, wow_index_changed(ix, ix->track[0], 0, 4096));
	wow_index_set_flags(ix, 1000, 0, WOW_SLOT_DIRTY | WOW_SLOT_DESTAGING);
	KUNIT_EXPECT_TRUE(test, wow_index_changed(ix, ix->track[0], 1000, 1));
	wow_index_take_changes(ix, 0, m);
	wow_index_take_changes(ix, 1, m);

	/* a new copy changes the old slot's entry too; so does a remove */
	wow_index_insert(ix, to_oblock(7), 3000, WOW_SLOT_DIRTY);
	wow_index_take_changes(ix, 0, m);
	KUNIT_EXPECT_TRUE(test, wow_index_changed(ix, m, 1000, 1));
	KUNIT_EXPECT_TRUE(test, wow_index_changed(ix, m, 3000, 1));
	KUNIT_EXPECT_FALSE(test, wow_index_changed(ix, m, 1536, 1024));
	wow_index_remove(ix, 3000);
	KUNIT_EXPECT_TRUE(test, wow_index_changed(ix, ix->track[0], 3000, 1));
	KUNIT_EXPECT_FALSE(test, wow_index_changed(ix, ix->track[0], 0, 2048));

	/* bits taken for a write that failed go back */
	bitmap_zero(m, ix->nr_track_bits);
	__set_bit(1, m);
	wow_index_add_changes(ix, 0, m);
	KUNIT_EXPECT_TRUE(test, wow_index_changed(ix, ix->track[0], 600, 1));
	KUNIT_EXPECT_TRUE(test, wow_index_changed(ix, ix->track[0], 3000, 1));
	wow_index_mark_all(ix, 0);
	KUNIT_EXPECT_TRUE(test, wow_index_changed(ix, ix->track[0], 0, 1));
	wow_index_exit(ix);
}

struct seen {
	struct wow_index *ix;
	u32 calls;
	u32 slot;
	u16 flags;		/* the slot's, when told */
};

static void note_change(void *ctx, u32 slot)
{
	struct seen *s = ctx;

	s->calls++;
	s->slot = slot;
	s->flags = wow_slot_at(s->ix, slot)->flags;
}

/* before_change comes before the entry changes (a checkpoint copies it). */
static void wow_index_before_change(struct kunit *test)
{
	struct wow_index *ix = new_index(test, 4096);
	struct seen s = { .ix = ix };

	ix->before_change = note_change;
	ix->change_ctx = &s;
	wow_index_insert(ix, to_oblock(9), 100, WOW_SLOT_DIRTY);
	KUNIT_EXPECT_EQ(test, s.calls, 1U);
	KUNIT_EXPECT_EQ(test, s.flags, (u16)0);
	wow_index_set_flags(ix, 100, WOW_SLOT_DESTAGING, 0);
	KUNIT_EXPECT_EQ(test, s.calls, 1U);
	wow_index_set_flags(ix, 100, 0, WOW_SLOT_DIRTY);
	KUNIT_EXPECT_EQ(test, s.calls, 2U);
	KUNIT_EXPECT_TRUE(test, s.flags & WOW_SLOT_DIRTY);
	/* a new copy: the new slot, then the old one, each before */
	wow_index_insert(ix, to_oblock(9), 200, WOW_SLOT_DIRTY);
	KUNIT_EXPECT_EQ(test, s.calls, 4U);
	KUNIT_EXPECT_EQ(test, s.slot, 100U);
	KUNIT_EXPECT_TRUE(test, s.flags & WOW_SLOT_VALID);
	wow_index_remove(ix, 200);
	KUNIT_EXPECT_EQ(test, s.calls, 5U);
	KUNIT_EXPECT_TRUE(test, s.flags & WOW_SLOT_VALID);
	ix->before_change = NULL;
	wow_index_exit(ix);
}

static void wow_index_insert_replace_remove(struct kunit *test)
{
	struct wow_index *ix = new_index(test, 64);

	KUNIT_EXPECT_EQ(test, wow_index_insert(ix, to_oblock(7), 3,
					       WOW_SLOT_DIRTY), WOW_NO_SLOT);
	KUNIT_EXPECT_EQ(test, wow_index_lookup(ix, to_oblock(7)), 3U);
	KUNIT_EXPECT_EQ(test, wow_slot_at(ix, 3)->flags,
			WOW_SLOT_VALID | WOW_SLOT_DIRTY);

	/* an overwrite moves the block and returns the stale slot */
	KUNIT_EXPECT_EQ(test, wow_index_insert(ix, to_oblock(7), 9,
					       WOW_SLOT_DIRTY), 3U);
	KUNIT_EXPECT_EQ(test, wow_index_lookup(ix, to_oblock(7)), 9U);
	KUNIT_EXPECT_EQ(test, wow_slot_at(ix, 3)->flags, 0);
	KUNIT_EXPECT_EQ(test, ix->nr_valid, 1U);

	wow_index_remove(ix, 9);
	KUNIT_EXPECT_EQ(test, wow_index_lookup(ix, to_oblock(7)), WOW_NO_SLOT);
	KUNIT_EXPECT_EQ(test, ix->nr_valid, 0U);
	wow_index_exit(ix);
}

static void wow_index_48_bit_blocks(struct kunit *test)
{
	struct wow_index *ix = new_index(test, 8);
	oblock_t big = to_oblock(WOW_MAX_OBLOCK);
	oblock_t alias = to_oblock(WOW_MAX_OBLOCK & 0xffffffffULL);

	wow_index_insert(ix, big, 1, 0);
	wow_index_insert(ix, alias, 2, 0);
	KUNIT_EXPECT_EQ(test, wow_index_lookup(ix, big), 1U);
	KUNIT_EXPECT_EQ(test, wow_index_lookup(ix, alias), 2U);
	KUNIT_EXPECT_EQ(test, from_oblock(wow_slot_oblock(wow_slot_at(ix, 1))),
			WOW_MAX_OBLOCK);
	wow_index_exit(ix);
}

/* Random inserts, overwrites and removals checked against a plain array. */
static void model_run(struct kunit *test, u32 nr_slots, u32 nr_blocks,
		      u32 ops)
{
	struct wow_index *ix = new_index(test, nr_slots);
	u32 *where = vmalloc(nr_blocks * sizeof(u32));	/* block -> slot */
	u32 *owner = vmalloc(nr_slots * sizeof(u32));	/* slot -> block */
	u32 i, b, s, valid = 0;
	u32 rnd = 1;

	KUNIT_ASSERT_NOT_NULL(test, where);
	KUNIT_ASSERT_NOT_NULL(test, owner);
	for (i = 0; i < nr_blocks; i++)
		where[i] = WOW_NO_SLOT;
	for (i = 0; i < nr_slots; i++)
		owner[i] = U32_MAX;

	for (i = 0; i < ops; i++) {
		rnd = rnd * 1103515245 + 12345;
		b = (rnd >> 4) % nr_blocks;
		rnd = rnd * 1103515245 + 12345;
		s = (rnd >> 4) % nr_slots;

		if (i % 5 == 4) {
			/* remove whatever slot s holds */
			if (owner[s] != U32_MAX) {
				wow_index_remove(ix, s);
				where[owner[s]] = WOW_NO_SLOT;
				owner[s] = U32_MAX;
				valid--;
			}
			continue;
		}
		if (owner[s] != U32_MAX) {
			/* the slot is being reused: drop its block first */
			wow_index_remove(ix, s);
			where[owner[s]] = WOW_NO_SLOT;
			owner[s] = U32_MAX;
			valid--;
		}
		KUNIT_ASSERT_EQ(test, wow_index_insert(ix, to_oblock(b), s, 0),
				where[b]);
		if (where[b] != WOW_NO_SLOT) {
			owner[where[b]] = U32_MAX;
			valid--;
		}
		where[b] = s;
		owner[s] = b;
		valid++;
	}
	for (b = 0; b < nr_blocks; b++)
		KUNIT_EXPECT_EQ(test, wow_index_lookup(ix, to_oblock(b)),
				where[b]);
	KUNIT_EXPECT_EQ(test, ix->nr_valid, valid);
	vfree(where);
	vfree(owner);
	wow_index_exit(ix);
}

static void wow_index_matches_reference_model(struct kunit *test)
{
	model_run(test, 512, 2048, 20000);
}

/* Across chunks of slots (2^17 each) and of bucket heads (2^19 each). */
static void wow_index_across_chunks(struct kunit *test)
{
	model_run(test, (1U << 21) + 5, 1U << 22, 300000);
}

/* What wow_index_count handed over: per segment, valid and dirty. */
struct count_seen {
	u32 valid[4], dirty[4];
	u32 calls, fail_at;	/* fail_at: return -ENOMEM at this call */
};

static int count_seg(void *ctx, u32 slot, u32 seg, bool dirty)
{
	struct count_seen *c = ctx;

	if (++c->calls == c->fail_at)
		return -ENOMEM;
	c->valid[seg]++;
	c->dirty[seg] += dirty;
	return 0;
}

/*
 * A load counts the valid slots, and the dirty ones among them, in total
 * and per segment; a stale or empty slot is not counted; chunks add up to
 * the whole; the callback's error stops the count.
 */
static void wow_index_count_load(struct kunit *test)
{
	struct wow_index *ix = new_index(test, 16);	/* 4 segments of 4 */
	struct count_seen c = { };
	u64 valid = 0, dirty = 0;

	wow_index_insert(ix, to_oblock(7), 1, WOW_SLOT_DIRTY);
	wow_index_insert(ix, to_oblock(8), 2, 0);
	wow_index_insert(ix, to_oblock(9), 9, WOW_SLOT_DIRTY);
	wow_index_insert(ix, to_oblock(8), 14, WOW_SLOT_DIRTY); /* 2 stale */
	wow_index_insert(ix, to_oblock(5), 15, 0);

	KUNIT_EXPECT_EQ(test, wow_index_count(ix, 0, 16, 4, &valid, &dirty,
					      count_seg, &c), 0);
	KUNIT_EXPECT_EQ(test, valid, 4ULL);
	KUNIT_EXPECT_EQ(test, dirty, 3ULL);
	KUNIT_EXPECT_EQ(test, c.valid[0], 1U);
	KUNIT_EXPECT_EQ(test, c.dirty[0], 1U);
	KUNIT_EXPECT_EQ(test, c.valid[1], 0U);
	KUNIT_EXPECT_EQ(test, c.valid[2], 1U);
	KUNIT_EXPECT_EQ(test, c.dirty[2], 1U);
	KUNIT_EXPECT_EQ(test, c.valid[3], 2U);
	KUNIT_EXPECT_EQ(test, c.dirty[3], 1U);

	/* in chunks: the same */
	memset(&c, 0, sizeof(c));
	valid = 0;
	dirty = 0;
	KUNIT_EXPECT_EQ(test, wow_index_count(ix, 0, 10, 4, &valid, &dirty,
					      count_seg, &c), 0);
	KUNIT_EXPECT_EQ(test, wow_index_count(ix, 10, 6, 4, &valid, &dirty,
					      count_seg, &c), 0);
	KUNIT_EXPECT_EQ(test, valid, 4ULL);
	KUNIT_EXPECT_EQ(test, dirty, 3ULL);
	KUNIT_EXPECT_EQ(test, c.valid[3], 2U);

	/* an error stops it */
	memset(&c, 0, sizeof(c));
	c.fail_at = 2;
	valid = 0;
	dirty = 0;
	KUNIT_EXPECT_EQ(test, wow_index_count(ix, 0, 16, 4, &valid, &dirty,
					      count_seg, &c), -ENOMEM);
	KUNIT_EXPECT_EQ(test, c.calls, 2U);
	KUNIT_EXPECT_EQ(test, dirty, 1ULL);
}

static struct kunit_case wow_index_cases[] = {
	KUNIT_CASE(wow_index_slot_is_16_bytes),
	KUNIT_CASE(wow_index_count_load),
	KUNIT_CASE(wow_index_block_crc),
	KUNIT_CASE(wow_index_lookup_empty),
	KUNIT_CASE(wow_index_insert_replace_remove),
	KUNIT_CASE(wow_index_tracks_changes),
	KUNIT_CASE(wow_index_before_change),
	KUNIT_CASE(wow_index_48_bit_blocks),
	KUNIT_CASE(wow_index_matches_reference_model),
	KUNIT_CASE(wow_index_memory_bound),
	KUNIT_CASE(wow_index_across_chunks),
	{}
};

static struct kunit_suite wow_index_suite = {
	.name = "dm_wow_index",
	.test_cases = wow_index_cases,
};

kunit_test_suite(wow_index_suite);
