// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for dm-wow's on-disk superblock and geometry math
 * (dm-wow-format.h, dm-wow-super.c).
 */
#include <kunit/test.h>
#include <linux/crc32c.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../dm-wow.h"
#include "../dm-wow-scan.h"
#include "../dm-wow-super.h"

#define TEST_BLOCK 4096

static void make_info(struct wow_sb_info *info)
{
	struct wow_args a;
	int i;

	wow_args_init(&a);
	memset(info, 0, sizeof(*info));
	/* 1 GiB origin, 64 MiB + 3 sectors of cache */
	wow_geometry_init(&info->geo, &a, 2097152, 131072 + 3);
	info->version = WOW_SB_VERSION;
	info->flags = WOW_SB_F_CLEAN;
	info->format_seq = 77;
	for (i = 0; i < sizeof(info->uuid); i++)
		info->uuid[i] = i * 7 + 1;
}

static void *encoded_block(struct kunit *test, struct wow_sb_info *info)
{
	void *buf = kunit_kzalloc(test, TEST_BLOCK, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	make_info(info);
	wow_sb_encode(buf, info);
	return buf;
}

static void wow_format_struct_is_512_bytes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct wow_superblock), 512UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct wow_superblock, uuid), 72UL);
}

static void wow_format_geometry_math(struct kunit *test)
{
	/* 1 MiB erase blocks: first segment at sector 2048 */
	KUNIT_EXPECT_EQ(test, wow_first_segment_sector(1U << 20), 2048ULL);
	/* 64 MiB + 3 sectors: 63 whole segments after erase block 0 */
	KUNIT_EXPECT_EQ(test, wow_nr_segments(131072 + 3, 1U << 20), 63ULL);
	KUNIT_EXPECT_EQ(test, wow_nr_segments(2048, 1U << 20), 0ULL);
	KUNIT_EXPECT_EQ(test, wow_nr_segments(100, 1U << 20), 0ULL);
	KUNIT_EXPECT_EQ(test, wow_nr_segments(2048 + 2047, 1U << 20), 0ULL);
	KUNIT_EXPECT_EQ(test, wow_nr_segments(4096, 1U << 20), 1ULL);
	KUNIT_EXPECT_EQ(test, wow_min_cache_sectors(1U << 20), 5ULL * 2048);
	KUNIT_EXPECT_EQ(test, wow_min_cache_sectors(16384), 5ULL * 32);
}

static void wow_format_encode_decode_round_trip(struct kunit *test)
{
	struct wow_sb_info info, out;
	const char *why;
	void *buf = encoded_block(test, &info);

	KUNIT_ASSERT_EQ(test, wow_sb_decode(buf, TEST_BLOCK, &out, &why),
			WOW_SB_VALID);
	KUNIT_EXPECT_NULL(test, why);
	KUNIT_EXPECT_EQ(test, memcmp(&info, &out, sizeof(info)), 0);
	/* version 4: erase blocks 1 and 2 are the two checkpoint areas */
	KUNIT_EXPECT_EQ(test, out.geo.nr_segments, 61ULL);
	KUNIT_EXPECT_EQ(test, out.geo.first_segment_sector, 6144ULL);
	KUNIT_EXPECT_EQ(test, out.format_seq, 77ULL);
	/* nothing past the checksummed prefix is written */
	KUNIT_EXPECT_NULL(test, memchr_inv(buf + WOW_SB_CSUM_BYTES, 0,
					   TEST_BLOCK - WOW_SB_CSUM_BYTES));
}

static void wow_format_little_endian_layout(struct kunit *test)
{
	struct wow_sb_info info;
	u8 *b = encoded_block(test, &info);

	/* version 5 at offset 4, magic "DWOWCACH" at offset 8 */
	KUNIT_EXPECT_EQ(test, b[4], 5);
	KUNIT_EXPECT_EQ(test, memcmp(b + 8, "DWOWCACH", 8), 0);
	/* block_size 4096 at offset 20 */
	KUNIT_EXPECT_EQ(test, b[20], 0x00);
	KUNIT_EXPECT_EQ(test, b[21], 0x10);
	/* the checksum at offset 0 is crc32c of the rest of the prefix */
	KUNIT_EXPECT_EQ(test, le32_to_cpup((__le32 *)b),
			crc32c(WOW_CSUM_SEED, b + 4, WOW_SB_CSUM_BYTES - 4));
}

static void wow_format_every_flipped_byte_detected(struct kunit *test)
{
	struct wow_sb_info info, out;
	const char *why;
	u8 *b = encoded_block(test, &info);
	int i;

	for (i = 0; i < WOW_SB_CSUM_BYTES; i++) {
		enum wow_sb_kind k;

		b[i] ^= 0x5a;
		k = wow_sb_decode(b, TEST_BLOCK, &out, &why);
		KUNIT_EXPECT_NE_MSG(test, k, WOW_SB_VALID, "byte %d", i);
		KUNIT_EXPECT_NE_MSG(test, k, WOW_SB_ZERO, "byte %d", i);
		KUNIT_EXPECT_NOT_NULL(test, why);
		b[i] ^= 0x5a;
	}
	KUNIT_EXPECT_EQ(test, wow_sb_decode(b, TEST_BLOCK, &out, &why),
			WOW_SB_VALID);
}

static void wow_format_classifies_zero_and_foreign(struct kunit *test)
{
	struct wow_sb_info out;
	const char *why;
	u8 *b = kunit_kzalloc(test, TEST_BLOCK, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(b, TEST_BLOCK, &out, &why),
			WOW_SB_ZERO);
	/* a non-zero byte anywhere in the block makes it not blank */
	b[TEST_BLOCK - 1] = 1;
	KUNIT_EXPECT_EQ(test, wow_sb_decode(b, TEST_BLOCK, &out, &why),
			WOW_SB_FOREIGN);
	memcpy(b, "XFSB", 4);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(b, TEST_BLOCK, &out, &why),
			WOW_SB_FOREIGN);
}

/* Re-seal a modified superblock so only the field change is seen. */
static void reseal(u8 *b)
{
	*(__le32 *)b = cpu_to_le32(crc32c(WOW_CSUM_SEED, b + 4,
					  WOW_SB_CSUM_BYTES - 4));
}

/*
 * A version 1 superblock (no checkpoint area) still decodes, with its own
 * geometry; each version's geometry is wrong for the other where they
 * differ (a cache whose checkpoint area takes an erase block).
 */
static void wow_format_version1_geometry(struct kunit *test)
{
	struct wow_sb_info info, out;
	struct wow_args a;
	const char *why;
	void *buf = kunit_kzalloc(test, TEST_BLOCK, GFP_KERNEL);
	u64 cache = 4ULL << 21;		/* 4 GiB */

	KUNIT_ASSERT_NOT_NULL(test, buf);
	make_info(&info);
	wow_args_init(&a);
	wow_geometry_init(&info.geo, &a, 2097152, cache);
	KUNIT_ASSERT_GT(test, info.geo.first_segment_sector,
			wow_first_segment_sector(a.erase_block_size));
	wow_sb_encode(buf, &info);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(buf, TEST_BLOCK, &out, &why),
			WOW_SB_VALID);
	KUNIT_EXPECT_EQ(test, out.version, 5U);
	/* version 4's slot entries are 6 bytes, not 10: smaller areas */
	info.version = 4;
	wow_sb_encode(buf, &info);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(buf, TEST_BLOCK, &out, &why),
			WOW_SB_CORRUPT);
	/* version 3 has one area: its segments start sooner */
	info.version = 3;
	wow_sb_encode(buf, &info);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(buf, TEST_BLOCK, &out, &why),
			WOW_SB_CORRUPT);
	info.version = 4;
	/* version 2's area starts in erase block 0: its geometry differs */
	info.version = 2;
	wow_sb_encode(buf, &info);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(buf, TEST_BLOCK, &out, &why),
			WOW_SB_CORRUPT);

	info.version = 1;
	wow_sb_encode(buf, &info);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(buf, TEST_BLOCK, &out, &why),
			WOW_SB_CORRUPT);
	info.geo.first_segment_sector =
		wow_first_segment_sector(a.erase_block_size);
	info.geo.nr_segments = wow_nr_segments(cache, a.erase_block_size);
	wow_sb_encode(buf, &info);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(buf, TEST_BLOCK, &out, &why),
			WOW_SB_VALID);
	KUNIT_EXPECT_EQ(test, out.version, 1U);
	KUNIT_EXPECT_EQ(test, out.geo.nr_segments, info.geo.nr_segments);
	info.version = 2;
	wow_sb_encode(buf, &info);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(buf, TEST_BLOCK, &out, &why),
			WOW_SB_CORRUPT);
	info.version = 3;
	wow_sb_encode(buf, &info);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(buf, TEST_BLOCK, &out, &why),
			WOW_SB_CORRUPT);
}

static void wow_format_newer_version_refused(struct kunit *test)
{
	struct wow_sb_info info, out;
	const char *why;
	u8 *b = encoded_block(test, &info);

	b[4] = WOW_SB_VERSION + 1;
	reseal(b);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(b, TEST_BLOCK, &out, &why),
			WOW_SB_NEWER);
	b[4] = 0;
	reseal(b);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(b, TEST_BLOCK, &out, &why),
			WOW_SB_CORRUPT);
}

static void wow_format_inconsistent_geometry_refused(struct kunit *test)
{
	struct wow_sb_info info, out;
	struct wow_superblock *sb;
	const char *why;
	u8 *b = encoded_block(test, &info);

	sb = (struct wow_superblock *)b;
	sb->nr_segments = cpu_to_le64(64);	/* does not fit */
	reseal(b);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(b, TEST_BLOCK, &out, &why),
			WOW_SB_CORRUPT);

	wow_sb_encode((void *)b, &info);
	sb->block_size = cpu_to_le32(3000);
	reseal(b);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(b, TEST_BLOCK, &out, &why),
			WOW_SB_CORRUPT);

	wow_sb_encode((void *)b, &info);
	sb->origin_sectors = 0;
	reseal(b);
	KUNIT_EXPECT_EQ(test, wow_sb_decode(b, TEST_BLOCK, &out, &why),
			WOW_SB_CORRUPT);
}

static void wow_format_table_mismatch_named(struct kunit *test)
{
	struct wow_sb_info info;
	struct wow_geometry t;

	make_info(&info);
	t = info.geo;
	KUNIT_EXPECT_NULL(test, wow_sb_geometry_mismatch(&info.geo, &t));

	t.cache_sectors += 4096;	/* a grown cache device is fine */
	KUNIT_EXPECT_NULL(test, wow_sb_geometry_mismatch(&info.geo, &t));

	t = info.geo;
	t.block_size = 8192;
	KUNIT_EXPECT_NOT_NULL(test, strstr(wow_sb_geometry_mismatch(&info.geo,
								    &t),
					   "block_size"));
	t = info.geo;
	t.erase_block_size = 2U << 20;
	KUNIT_EXPECT_NOT_NULL(test, strstr(wow_sb_geometry_mismatch(&info.geo,
								    &t),
					   "erase_block_size"));
	t = info.geo;
	t.write_group_size = 4096;
	KUNIT_EXPECT_NOT_NULL(test, strstr(wow_sb_geometry_mismatch(&info.geo,
								    &t),
					   "write_group_size"));
	t = info.geo;
	t.origin_sectors += 8;
	KUNIT_EXPECT_NOT_NULL(test, strstr(wow_sb_geometry_mismatch(&info.geo,
								    &t),
					   "origin"));
	t = info.geo;
	t.cache_sectors -= 8;
	KUNIT_EXPECT_NOT_NULL(test, strstr(wow_sb_geometry_mismatch(&info.geo,
								    &t),
					   "smaller"));
}

static const u8 test_uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };

static void *sealed_record(struct kunit *test, struct wow_record_info *ri)
{
	u8 *b = kunit_kzalloc(test, TEST_BLOCK, GFP_KERNEL);
	__le64 *ob;
	struct wow_tomb *t;

	KUNIT_ASSERT_NOT_NULL(test, b);
	ri->seq = 42;
	ri->seg_seq = 40;
	ri->durable_seq = 41;
	ri->data_csum = 0xabcdef01;
	ri->nr_data = 3;
	ri->nr_tombs = 2;
	ri->next_seg = 9;
	ri->flags = 0;
	t = wow_record_tombs(b);
	t[0].start = cpu_to_le64(100);
	t[0].t = cpu_to_le64(17);
	t[0].nr = cpu_to_le32(8);
	t[1].start = cpu_to_le64(900);
	t[1].t = cpu_to_le64(42);
	t[1].nr = cpu_to_le32(1);
	ob = wow_record_oblocks(b, 2);
	ob[0] = cpu_to_le64(5);
	ob[1] = cpu_to_le64(6);
	ob[2] = cpu_to_le64(1000);
	wow_record_seal(b, TEST_BLOCK, test_uuid, ri);
	return b;
}

static void wow_format_record_layout(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct wow_record), 64UL);
	KUNIT_EXPECT_EQ(test, sizeof(struct wow_tomb), 24UL);
	/* 4096-byte header: (4096 - 64) / 8 origin blocks without tombs */
	KUNIT_EXPECT_EQ(test, wow_record_capacity(4096, 0, 0), 504U);
	KUNIT_EXPECT_EQ(test, wow_record_capacity(4096, 2, 0), 498U);
	KUNIT_EXPECT_EQ(test, wow_record_capacity(512, 0, 0), 56U);
	/* with block crcs 12 bytes each: (4096 - 64) / 12 */
	KUNIT_EXPECT_EQ(test, wow_record_capacity(4096, 0, WOW_REC_CRCS), 336U);
	KUNIT_EXPECT_EQ(test, wow_record_capacity(4096, 2, WOW_REC_CRCS), 332U);
	KUNIT_EXPECT_EQ(test, wow_record_capacity(512, 0, WOW_REC_CRCS), 37U);
	/* format version 5 writes them, earlier versions do not */
	KUNIT_EXPECT_EQ(test, wow_record_flags_v(5), WOW_REC_CRCS);
	KUNIT_EXPECT_EQ(test, wow_record_flags_v(4), 0U);
	KUNIT_EXPECT_EQ(test, wow_max_tombs(512), 18U);
	KUNIT_EXPECT_EQ(test, wow_max_tombs(4096), 168U);
}

static void wow_format_record_round_trip(struct kunit *test)
{
	struct wow_record_info ri, out;
	u8 *b = sealed_record(test, &ri);

	KUNIT_ASSERT_EQ(test, wow_record_check(b, TEST_BLOCK, test_uuid, &out),
			WOW_REC_OK);
	KUNIT_EXPECT_EQ(test, out.seq, 42ULL);
	KUNIT_EXPECT_EQ(test, out.seg_seq, 40ULL);
	KUNIT_EXPECT_EQ(test, out.durable_seq, 41ULL);
	KUNIT_EXPECT_EQ(test, out.data_csum, 0xabcdef01U);
	KUNIT_EXPECT_EQ(test, out.nr_data, 3U);
	KUNIT_EXPECT_EQ(test, out.nr_tombs, 2U);
	KUNIT_EXPECT_EQ(test, out.flags, 0U);
	/* where the log goes on, + 1 at offset 60 (0: not known) */
	KUNIT_EXPECT_EQ(test, out.next_seg, 9U);
	KUNIT_EXPECT_EQ(test, b[60], 10);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(wow_record_oblocks(b, 2)[2]), 1000ULL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(wow_record_tombs(b)[0].nr), 8U);
	/* magic "WOWR" at offset 4, seq at 8 */
	KUNIT_EXPECT_EQ(test, memcmp(b + 4, "WOWR", 4), 0);
	KUNIT_EXPECT_EQ(test, b[8], 42);
}

static void wow_format_record_every_byte_covered(struct kunit *test)
{
	struct wow_record_info ri, out;
	u8 *b = sealed_record(test, &ri);
	int i;

	/* any flipped bit anywhere in the header block is caught */
	for (i = 0; i < TEST_BLOCK; i++) {
		enum wow_rec_kind k;

		b[i] ^= 0x10;
		k = wow_record_check(b, TEST_BLOCK, test_uuid, &out);
		KUNIT_EXPECT_NE_MSG(test, k, WOW_REC_OK, "byte %d", i);
		b[i] ^= 0x10;
	}
	KUNIT_EXPECT_EQ(test, wow_record_check(b, TEST_BLOCK, test_uuid, &out),
			WOW_REC_OK);
}

/* wow_record_judge names the first fault; NULL for a good header */
static void wow_format_record_judge_says_why(struct kunit *test)
{
	struct wow_record_info ri, out;
	u8 *b = sealed_record(test, &ri);
	const char *why = NULL;

	KUNIT_EXPECT_EQ(test, wow_record_judge(b, TEST_BLOCK, test_uuid, &out,
					       &why), WOW_REC_OK);
	KUNIT_EXPECT_NULL(test, why);
	b[100] ^= 1;
	KUNIT_EXPECT_EQ(test, wow_record_judge(b, TEST_BLOCK, test_uuid, &out,
					       &why), WOW_REC_BAD);
	KUNIT_EXPECT_STREQ(test, why, "header checksum");
	/* unknown flags come before a seq below seg_seq */
	ri.flags = 2;
	ri.seq = 39;
	wow_record_seal(b, TEST_BLOCK, test_uuid, &ri);
	KUNIT_EXPECT_EQ(test, wow_record_judge(b, TEST_BLOCK, test_uuid, &out,
					       &why), WOW_REC_BAD);
	KUNIT_EXPECT_STREQ(test, why, "unknown record flags");
	ri.flags = 0;
	wow_record_seal(b, TEST_BLOCK, test_uuid, &ri);
	KUNIT_EXPECT_EQ(test, wow_record_judge(b, TEST_BLOCK, test_uuid, &out,
					       &why), WOW_REC_BAD);
	KUNIT_EXPECT_STREQ(test, why, "seq below seg_seq");
	ri.seq = 42;
	wow_record_tombs(b)[1].t = cpu_to_le64(43);
	wow_record_seal(b, TEST_BLOCK, test_uuid, &ri);
	KUNIT_EXPECT_EQ(test, wow_record_judge(b, TEST_BLOCK, test_uuid, &out,
					       &why), WOW_REC_BAD);
	KUNIT_EXPECT_STREQ(test, why, "a tombstone reaches past its record");
	/* the same verdict as wow_record_check, which names nothing */
	KUNIT_EXPECT_EQ(test, wow_record_check(b, TEST_BLOCK, test_uuid, &out),
			WOW_REC_BAD);
}

static void wow_format_record_foreign_and_bad(struct kunit *test)
{
	static const u8 other[16] = { 9 };
	struct wow_record_info ri, out;
	u8 *b = sealed_record(test, &ri);
	u8 *z = kunit_kzalloc(test, TEST_BLOCK, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, z);
	/* another format's record, or zeros: the end of the log */
	KUNIT_EXPECT_EQ(test, wow_record_check(b, TEST_BLOCK, other, &out),
			WOW_REC_FOREIGN);
	KUNIT_EXPECT_EQ(test, wow_record_check(z, TEST_BLOCK, test_uuid, &out),
			WOW_REC_FOREIGN);
	/* ours with a bad checksum: torn or corrupt */
	b[100] ^= 1;
	KUNIT_EXPECT_EQ(test, wow_record_check(b, TEST_BLOCK, test_uuid, &out),
			WOW_REC_BAD);
	b[100] ^= 1;
	/* counts that cannot fit are refused even when sealed */
	ri.nr_data = 600;
	wow_record_seal(b, TEST_BLOCK, test_uuid, &ri);
	KUNIT_EXPECT_EQ(test, wow_record_check(b, TEST_BLOCK, test_uuid, &out),
			WOW_REC_BAD);
	ri.nr_data = 1;
	ri.seq = 39;	/* older than its segment's life */
	wow_record_seal(b, TEST_BLOCK, test_uuid, &ri);
	KUNIT_EXPECT_EQ(test, wow_record_check(b, TEST_BLOCK, test_uuid, &out),
			WOW_REC_BAD);
	/* a tombstone may speak of its own record (a discard), not later */
	ri.seq = 42;
	wow_record_seal(b, TEST_BLOCK, test_uuid, &ri);
	KUNIT_EXPECT_EQ(test, wow_record_check(b, TEST_BLOCK, test_uuid, &out),
			WOW_REC_OK);
	wow_record_tombs(b)[1].t = cpu_to_le64(43);
	wow_record_seal(b, TEST_BLOCK, test_uuid, &ri);
	KUNIT_EXPECT_EQ(test, wow_record_check(b, TEST_BLOCK, test_uuid, &out),
			WOW_REC_BAD);
	wow_record_tombs(b)[1].t = cpu_to_le64(U64_MAX);
	wow_record_seal(b, TEST_BLOCK, test_uuid, &ri);
	KUNIT_EXPECT_EQ(test, wow_record_check(b, TEST_BLOCK, test_uuid, &out),
			WOW_REC_BAD);
}

/*
 * Version 5: each data block's crc32c follows the origin blocks, and
 * data_csum is the crc32c of those crcs: a header whose data_csum is not
 * theirs, or with a flag not known, is refused.
 */
static void wow_format_record_block_crcs(struct kunit *test)
{
	struct wow_record_info ri, out;
	u8 *b = sealed_record(test, &ri);
	u8 *data = kunit_kzalloc(test, 3 * TEST_BLOCK, GFP_KERNEL);
	__le32 *crcs = wow_record_crcs(b, 2, 3);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, data);
	for (i = 0; i < 3 * TEST_BLOCK; i++)
		data[i] = i * 7 + i / TEST_BLOCK;
	for (i = 0; i < 3; i++)
		crcs[i] = cpu_to_le32(wow_block_crc(data + i * TEST_BLOCK,
						    TEST_BLOCK));
	/* right after the three origin blocks */
	KUNIT_EXPECT_PTR_EQ(test, (void *)crcs,
			    (void *)(wow_record_oblocks(b, 2) + 3));
	KUNIT_EXPECT_EQ(test, wow_block_crc(data, TEST_BLOCK),
			crc32c(~0U, data, TEST_BLOCK));
	KUNIT_EXPECT_NE(test, le32_to_cpu(crcs[0]), le32_to_cpu(crcs[1]));
	ri.flags = WOW_REC_CRCS;
	ri.data_csum = crc32c(~0U, crcs, 3 * sizeof(*crcs));
	wow_record_seal(b, TEST_BLOCK, test_uuid, &ri);
	KUNIT_ASSERT_EQ(test, wow_record_check(b, TEST_BLOCK, test_uuid, &out),
			WOW_REC_OK);
	KUNIT_EXPECT_EQ(test, out.flags, WOW_REC_CRCS);
	KUNIT_EXPECT_EQ(test, out.data_csum, ri.data_csum);
	/* data_csum must be the crcs' */
	ri.data_csum ^= 1;
	wow_record_seal(b, TEST_BLOCK, test_uuid, &ri);
	KUNIT_EXPECT_EQ(test, wow_record_check(b, TEST_BLOCK, test_uuid, &out),
			WOW_REC_BAD);
	/* a flag this module does not know */
	ri.data_csum ^= 1;
	ri.flags = WOW_REC_CRCS | 2;
	wow_record_seal(b, TEST_BLOCK, test_uuid, &ri);
	KUNIT_EXPECT_EQ(test, wow_record_check(b, TEST_BLOCK, test_uuid, &out),
			WOW_REC_BAD);
	/* more blocks than fit at 12 bytes each (they would at 8) */
	ri.flags = WOW_REC_CRCS;
	ri.nr_data = 400;
	wow_record_seal(b, TEST_BLOCK, test_uuid, &ri);
	KUNIT_EXPECT_EQ(test, wow_record_check(b, TEST_BLOCK, test_uuid, &out),
			WOW_REC_BAD);
}

/* Every load starts a fresh epoch above anything it saw. */
static void wow_format_next_epoch(struct kunit *test)
{
	u64 e1 = 1ULL << WOW_EPOCH_SHIFT;

	KUNIT_EXPECT_EQ(test, wow_next_epoch_seq(0), e1);
	KUNIT_EXPECT_EQ(test, wow_next_epoch_seq(77), e1);
	KUNIT_EXPECT_EQ(test, wow_next_epoch_seq(e1 - 1), e1);
	KUNIT_EXPECT_EQ(test, wow_next_epoch_seq(e1), 2 * e1);
	KUNIT_EXPECT_EQ(test, wow_next_epoch_seq(3 * e1 + 12345), 4 * e1);
	KUNIT_EXPECT_EQ(test, wow_epoch(3 * e1 + 12345), 3ULL);
	/* the last epoch has no successor: the load is refused */
	KUNIT_EXPECT_EQ(test, wow_next_epoch_seq(U64_MAX), 0ULL);
	KUNIT_EXPECT_EQ(test, wow_next_epoch_seq(U64_MAX - e1),
			U64_MAX - (e1 - 1));
}

/*
 * Torn or corrupt, with plain numbers.  A claim (seq, durable_seq) proves
 * a bad record durable only within its own epoch.
 */
static void wow_format_vouching(struct kunit *test)
{
	u64 e1 = 1ULL << WOW_EPOCH_SHIFT;
	const u64 torn[] = { 10 };
	const u64 many[] = { 5, 10, e1 + 3 };

	/* nothing bad: nothing to prove */
	KUNIT_EXPECT_EQ(test, wow_first_vouched(torn, 0, 12, 11), -1);
	/* a later record of the same epoch says 10 was durable: corrupt */
	KUNIT_EXPECT_EQ(test, wow_first_vouched(torn, 1, 12, 11), 0);
	KUNIT_EXPECT_EQ(test, wow_first_vouched(torn, 1, 11, 10), 0);
	/* claims below it: a torn tail */
	KUNIT_EXPECT_EQ(test, wow_first_vouched(torn, 1, 11, 9), -1);
	KUNIT_EXPECT_EQ(test, wow_first_vouched(torn, 1, 9, 8), -1);
	/*
	 * The defect this rule fixes: record 10 was dropped as torn at a
	 * load; everything written after that load (epoch 1) says "every
	 * record before me was durable".  That must not make 10 corrupt.
	 */
	KUNIT_EXPECT_EQ(test, wow_first_vouched(torn, 1, e1 + 5, e1 + 4), -1);
	KUNIT_EXPECT_EQ(test, wow_first_vouched(torn, 1, e1, 9), -1);
	/* several suspects: the first one the claim covers */
	KUNIT_EXPECT_EQ(test, wow_first_vouched(many, 3, 8, 7), 0);
	KUNIT_EXPECT_EQ(test, wow_first_vouched(many, 3, 11, 4), -1);
	KUNIT_EXPECT_EQ(test, wow_first_vouched(many, 3, 4, 4), -1);
	KUNIT_EXPECT_EQ(test, wow_first_vouched(many, 3, e1 + 7, e1 + 6), 2);
	KUNIT_EXPECT_EQ(test, wow_first_vouched(many, 3, e1 + 7, e1 + 2), -1);
}

/* A zero first block is not blank when another format's signature follows. */
static void wow_format_foreign_signatures(struct kunit *test)
{
	static const u8 bcache[] = { 0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a,
				     0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f,
				     0x48, 0xba, 0x6d, 0x81 };
	u8 *buf = kunit_kzalloc(test, WOW_PROBE_BYTES, GFP_KERNEL);
	const char *name;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_EXPECT_NULL(test, wow_foreign_signature(buf, WOW_PROBE_BYTES));

	/* md v1.2: magic 0xa92b4efc, little endian, at 4 KiB */
	buf[4096] = 0xfc;
	buf[4097] = 0x4e;
	buf[4098] = 0x2b;
	buf[4099] = 0xa9;
	name = wow_foreign_signature(buf, WOW_PROBE_BYTES);
	KUNIT_ASSERT_NOT_NULL(test, name);
	KUNIT_EXPECT_NOT_NULL(test, strstr(name, "md RAID"));
	/* only what was read counts */
	KUNIT_EXPECT_NULL(test, wow_foreign_signature(buf, 4096));
	memset(buf, 0, WOW_PROBE_BYTES);

	memcpy(buf + 4096 + 24, bcache, sizeof(bcache));
	name = wow_foreign_signature(buf, WOW_PROBE_BYTES);
	KUNIT_ASSERT_NOT_NULL(test, name);
	KUNIT_EXPECT_NOT_NULL(test, strstr(name, "bcache"));
	memset(buf, 0, WOW_PROBE_BYTES);

	memcpy(buf + 512, "LABELONE", 8);
	KUNIT_EXPECT_NOT_NULL(test, wow_foreign_signature(buf, 4096));
	memset(buf, 0, WOW_PROBE_BYTES);

	memcpy(buf + 65536 + 64, "_BHRfS_M", 8);
	KUNIT_EXPECT_NOT_NULL(test, wow_foreign_signature(buf,
							  WOW_PROBE_BYTES));
	memset(buf, 0, WOW_PROBE_BYTES);

	/* other bytes there are data, not a signature */
	memset(buf + 4096, 0x5a, 8192);
	KUNIT_EXPECT_NULL(test, wow_foreign_signature(buf, WOW_PROBE_BYTES));
}

/*
 * The health block: round trip; another uuid or magic says nothing; our
 * magic and uuid with any byte of the checksummed part flipped (a torn
 * write while an error was being recorded) says needs_check.
 */
static void wow_format_health_block(struct kunit *test)
{
	const u8 uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
	const u8 other[16] = { 9 };
	struct wow_health_info h = {
		.flags = WOW_SB_F_NEEDS_CHECK, .state = 1, .time = 1234567,
	}, out;
	u8 *buf = kunit_kzalloc(test, 4096, GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, sizeof(struct wow_health), 512UL);
	strscpy(h.what, "log record write", sizeof(h.what));
	wow_health_encode(buf, 4096, uuid, &h);
	KUNIT_EXPECT_TRUE(test, wow_health_decode(buf, 4096, uuid, &out));
	KUNIT_EXPECT_EQ(test, out.state, 1U);
	KUNIT_EXPECT_EQ(test, out.time, 1234567ULL);
	KUNIT_EXPECT_STREQ(test, out.what, "log record write");
	KUNIT_EXPECT_FALSE(test, wow_health_decode(buf, 4096, other, &out));
	KUNIT_EXPECT_EQ(test, out.flags, 0U);

	/* all clear, as format writes it */
	memset(&h, 0, sizeof(h));
	wow_health_encode(buf, 4096, uuid, &h);
	KUNIT_EXPECT_FALSE(test, wow_health_decode(buf, 4096, uuid, &out));
	for (i = 4; i < 512; i++) {
		if (i >= 8 && i < 32)
			continue;	/* magic and uuid: not ours at all */
		buf[i] ^= 0x10;
		KUNIT_EXPECT_TRUE(test, wow_health_decode(buf, 4096, uuid,
							  &out));
		buf[i] ^= 0x10;
	}
	buf[0] ^= 1;
	KUNIT_EXPECT_TRUE(test, wow_health_decode(buf, 4096, uuid, &out));
	/* never written: zeros */
	memset(buf, 0, 4096);
	KUNIT_EXPECT_FALSE(test, wow_health_decode(buf, 4096, uuid, &out));
}

static struct kunit_case wow_format_cases[] = {
	KUNIT_CASE(wow_format_health_block),
	KUNIT_CASE(wow_format_foreign_signatures),
	KUNIT_CASE(wow_format_next_epoch),
	KUNIT_CASE(wow_format_vouching),
	KUNIT_CASE(wow_format_record_layout),
	KUNIT_CASE(wow_format_record_round_trip),
	KUNIT_CASE(wow_format_record_every_byte_covered),
	KUNIT_CASE(wow_format_record_foreign_and_bad),
	KUNIT_CASE(wow_format_record_judge_says_why),
	KUNIT_CASE(wow_format_record_block_crcs),
	KUNIT_CASE(wow_format_struct_is_512_bytes),
	KUNIT_CASE(wow_format_geometry_math),
	KUNIT_CASE(wow_format_encode_decode_round_trip),
	KUNIT_CASE(wow_format_little_endian_layout),
	KUNIT_CASE(wow_format_every_flipped_byte_detected),
	KUNIT_CASE(wow_format_classifies_zero_and_foreign),
	KUNIT_CASE(wow_format_version1_geometry),
	KUNIT_CASE(wow_format_newer_version_refused),
	KUNIT_CASE(wow_format_inconsistent_geometry_refused),
	KUNIT_CASE(wow_format_table_mismatch_named),
	{}
};

static struct kunit_suite wow_format_suite = {
	.name = "dm_wow_format",
	.test_cases = wow_format_cases,
};

kunit_test_suite(wow_format_suite);
