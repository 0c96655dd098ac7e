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

static void wow_index_slot_is_12_bytes(struct kunit *test)
{
	/* plus at most 2 bytes of bucket heads per slot */
	KUNIT_EXPECT_EQ(test, sizeof(struct wow_slot), 12UL);
}

/* At most 14 bytes per slot, and chains of two to four when full. */
static void wow_index_memory_bound(struct kunit *test)
{
	static const u32 sizes[] = { 1, 2, 3, 4, 5, 1000, 131073, 2097157 };
	u32 i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct wow_index *ix = new_index(test, sizes[i]);
		u64 buckets = 1ULL << ix->hash_bits;

		KUNIT_EXPECT_LE_MSG(test, wow_index_bytes(ix),
				    14ULL * sizes[i] + 256, "%u slots", sizes[i]);
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

static struct kunit_case wow_index_cases[] = {
	KUNIT_CASE(wow_index_slot_is_12_bytes),
	KUNIT_CASE(wow_index_lookup_empty),
	KUNIT_CASE(wow_index_insert_replace_remove),
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
