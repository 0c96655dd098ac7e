// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for dm-wow's table line options (dm-wow-args.c).
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "../dm-wow.h"

/* Parse "<#opt_args> [<opt_args>...]" given as one string. */
static int parse_line(struct kunit *test, const char *line,
		      struct wow_args *a, char **error)
{
	struct dm_arg_set as;
	char **argv;
	int argc, r;

	argv = argv_split(GFP_KERNEL, line, &argc);
	KUNIT_ASSERT_NOT_NULL(test, argv);
	as.argc = argc;
	as.argv = argv;
	wow_args_init(a);
	*error = NULL;
	r = wow_parse_opt_args(a, &as, error);
	argv_free(argv);
	return r;
}

static void wow_args_defaults_with_no_options(struct kunit *test)
{
	struct wow_args a;
	char *error;

	KUNIT_ASSERT_EQ(test, parse_line(test, "0", &a, &error), 0);
	KUNIT_EXPECT_EQ(test, a.block_size, 4096U);
	KUNIT_EXPECT_EQ(test, a.erase_block_size, 1U << 20);
	KUNIT_EXPECT_EQ(test, a.write_group_size, 128U << 10);
	KUNIT_EXPECT_EQ(test, a.policy, WOW_POLICY_WOW);
	KUNIT_EXPECT_EQ(test, a.low_watermark_pct, 20U);
	KUNIT_EXPECT_EQ(test, a.high_watermark_pct, 30U);
	KUNIT_EXPECT_EQ(test, a.max_destage_ios, 32U);
	KUNIT_EXPECT_EQ(test, a.max_destage_size, 1U << 20);
	KUNIT_EXPECT_EQ(test, a.max_age_s, 0U);
	KUNIT_EXPECT_EQ(test, a.sequential_cutoff, 0ULL);
	KUNIT_EXPECT_FALSE(test, a.cleaner);
	KUNIT_EXPECT_FALSE(test, a.format);
	KUNIT_EXPECT_EQ(test, a.set, 0UL);
}

static void wow_args_every_option_parsed(struct kunit *test)
{
	struct wow_args a;
	char *error;

	KUNIT_ASSERT_EQ(test,
			parse_line(test,
				   "22 block_size 8192 erase_block_size 2097152 write_group_size 262144 policy lrw low_watermark 40 high_watermark 60 max_destage_ios 7 max_destage_size 65536 max_age 30 sequential_cutoff 4194304 cleaner format",
				   &a, &error), 0);
	KUNIT_EXPECT_EQ(test, a.block_size, 8192U);
	KUNIT_EXPECT_EQ(test, a.erase_block_size, 2097152U);
	KUNIT_EXPECT_EQ(test, a.write_group_size, 262144U);
	KUNIT_EXPECT_EQ(test, a.policy, WOW_POLICY_LRW);
	KUNIT_EXPECT_EQ(test, a.low_watermark_pct, 40U);
	KUNIT_EXPECT_EQ(test, a.high_watermark_pct, 60U);
	KUNIT_EXPECT_EQ(test, a.max_destage_ios, 7U);
	KUNIT_EXPECT_EQ(test, a.max_destage_size, 65536U);
	KUNIT_EXPECT_EQ(test, a.max_age_s, 30U);
	KUNIT_EXPECT_EQ(test, a.sequential_cutoff, 4194304ULL);
	KUNIT_EXPECT_TRUE(test, a.cleaner);
	KUNIT_EXPECT_TRUE(test, a.format);
	KUNIT_EXPECT_EQ(test, a.set, BIT(WOW_NR_OPTS) - 1);
}

static void wow_args_limits_accepted(struct kunit *test)
{
	static const char * const good[] = {
		"2 block_size 512",
		"2 block_size 65536",
		"4 block_size 65536 erase_block_size 262144",
		"2 erase_block_size 268435456",
		"2 erase_block_size 16384",
		"2 write_group_size 4096",
		"2 write_group_size 67108864",
		"2 policy cscan",
		"4 low_watermark 0 high_watermark 1",
		"4 low_watermark 99 high_watermark 100",
		"2 max_destage_ios 1",
		"2 max_destage_ios 4096",
		"2 max_destage_size 4096",
		"2 max_destage_size 8388608",
		"2 max_age 604800",
		"2 sequential_cutoff 1073741824",
		"1 cleaner",
	};
	struct wow_args a;
	char *error;
	int i;

	for (i = 0; i < ARRAY_SIZE(good); i++)
		KUNIT_EXPECT_EQ_MSG(test, parse_line(test, good[i], &a, &error),
				    0, "'%s' refused: %s", good[i],
				    error ? error : "");
}

struct bad_line {
	const char *line;
	const char *error;	/* a substring of the expected message */
};

static const struct bad_line bad_lines[] = {
	{ "", "#opt_args" },
	{ "x", "#opt_args" },
	{ "-1", "#opt_args" },
	{ "4294967296", "#opt_args" },
	{ "99", "Not enough" },
	{ "3 block_size 4096", "Not enough" },
	{ "1 block_size 4096", "Too many" },
	{ "0 cleaner", "Too many" },
	{ "2 bogus 1", "Unrecognised" },
	{ "1 block_size", "missing its value" },
	{ "4 block_size 4096 block_size 4096", "twice" },
	{ "2 cleaner cleaner", "twice" },
	{ "2 block_size 0", "block_size" },
	{ "2 block_size 1000", "block_size" },
	{ "2 block_size 256", "block_size" },
	{ "2 block_size 131072", "block_size" },
	{ "2 block_size -4096", "block_size" },
	{ "2 block_size +4096", "block_size" },
	{ "2 block_size 0x1000", "block_size" },
	{ "2 block_size abc", "block_size" },
	{ "2 block_size 99999999999999999999", "block_size" },
	{ "2 block_size 4294971392", "block_size" },
	{ "2 erase_block_size 1000000", "erase_block_size" },
	{ "2 erase_block_size 536870912", "erase_block_size" },
	{ "2 erase_block_size 8192", "erase_block_size" },
	{ "4 block_size 65536 erase_block_size 131072", "erase_block_size" },
	{ "2 write_group_size 3000", "write_group_size" },
	{ "2 write_group_size 134217728", "write_group_size" },
	{ "4 block_size 8192 write_group_size 4096", "write_group_size" },
	{ "2 policy lru", "policy" },
	{ "2 policy WOW", "policy" },
	{ "2 low_watermark 100", "low_watermark" },
	{ "2 high_watermark 0", "high_watermark" },
	{ "2 high_watermark 101", "high_watermark" },
	{ "4 low_watermark 90 high_watermark 80", "below" },
	{ "4 low_watermark 50 high_watermark 50", "below" },
	{ "2 max_destage_ios 0", "max_destage_ios" },
	{ "2 max_destage_ios 4097", "max_destage_ios" },
	{ "2 max_destage_size 6000", "max_destage_size" },
	{ "2 max_destage_size 16777216", "max_destage_size" },
	{ "4 block_size 8192 max_destage_size 4096", "max_destage_size" },
	{ "2 max_age 604801", "max_age" },
	{ "2 sequential_cutoff 1073741825", "sequential_cutoff" },
	{ "2 sequential_cutoff 18446744073709551616", "sequential_cutoff" },
};

static void wow_args_bad_lines_refused(struct kunit *test)
{
	struct wow_args a;
	char *error;
	int i;

	for (i = 0; i < ARRAY_SIZE(bad_lines); i++) {
		const struct bad_line *b = &bad_lines[i];
		int r = parse_line(test, b->line, &a, &error);

		KUNIT_EXPECT_EQ_MSG(test, r, -EINVAL, "'%s' accepted", b->line);
		KUNIT_EXPECT_NOT_NULL_MSG(test, error, "'%s': no message",
					  b->line);
		if (error)
			KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(error, b->error),
						  "'%s': message '%s' lacks '%s'",
						  b->line, error, b->error);
	}
}

static void wow_args_one_watermark_keeps_gap(struct kunit *test)
{
	struct wow_args a;
	char *error;

	KUNIT_ASSERT_EQ(test, parse_line(test, "2 high_watermark 50", &a,
					 &error), 0);
	KUNIT_EXPECT_EQ(test, a.low_watermark_pct, 40U);
	KUNIT_EXPECT_EQ(test, a.high_watermark_pct, 50U);

	KUNIT_ASSERT_EQ(test, parse_line(test, "2 high_watermark 5", &a,
					 &error), 0);
	KUNIT_EXPECT_EQ(test, a.low_watermark_pct, 0U);

	KUNIT_ASSERT_EQ(test, parse_line(test, "2 low_watermark 95", &a,
					 &error), 0);
	KUNIT_EXPECT_EQ(test, a.high_watermark_pct, 100U);

	KUNIT_ASSERT_EQ(test, parse_line(test, "2 low_watermark 20", &a,
					 &error), 0);
	KUNIT_EXPECT_EQ(test, a.high_watermark_pct, 30U);
}

static void wow_args_emit_round_trips(struct kunit *test)
{
	static const char * const lines[] = {
		"0",
		"1 cleaner",
		"4 block_size 8192 policy cscan",
		"2 high_watermark 50",
		"21 block_size 512 erase_block_size 16384 write_group_size 1024 policy lrw low_watermark 1 high_watermark 2 max_destage_ios 4096 max_destage_size 8388608 max_age 1 sequential_cutoff 1073741824 cleaner",
	};
	struct wow_args a, b;
	char *error, buf[256];
	int i;

	for (i = 0; i < ARRAY_SIZE(lines); i++) {
		KUNIT_ASSERT_EQ(test, parse_line(test, lines[i], &a, &error), 0);
		wow_emit_opt_args(&a, buf, sizeof(buf));
		KUNIT_EXPECT_STREQ(test, buf, lines[i]);
		KUNIT_ASSERT_EQ(test, parse_line(test, buf, &b, &error), 0);
		KUNIT_EXPECT_EQ(test, memcmp(&a, &b, sizeof(a)), 0);
	}
}

static void wow_args_tunable_changes_only_when_valid(struct kunit *test)
{
	struct wow_args a, before;
	char *error;

	KUNIT_ASSERT_EQ(test, parse_line(test, "0", &a, &error), 0);

	KUNIT_EXPECT_EQ(test, wow_parse_tunable(&a, "max_destage_ios", "8",
						&error), 0);
	KUNIT_EXPECT_EQ(test, a.max_destage_ios, 8U);
	KUNIT_EXPECT_EQ(test, wow_parse_tunable(&a, "low_watermark", "30",
						&error), 0);
	KUNIT_EXPECT_EQ(test, a.low_watermark_pct, 30U);
	KUNIT_EXPECT_EQ(test, a.set, 0UL);

	/* high below low moves low along, and the other way round */
	KUNIT_EXPECT_EQ(test, wow_parse_tunable(&a, "high_watermark", "20",
						&error), 0);
	KUNIT_EXPECT_EQ(test, a.low_watermark_pct, 10U);
	KUNIT_EXPECT_EQ(test, wow_parse_tunable(&a, "low_watermark", "95",
						&error), 0);
	KUNIT_EXPECT_EQ(test, a.high_watermark_pct, 100U);

	before = a;
	KUNIT_EXPECT_EQ(test, wow_parse_tunable(&a, "high_watermark", "0",
						&error), -EINVAL);
	KUNIT_EXPECT_EQ(test, wow_parse_tunable(&a, "max_destage_ios", "0",
						&error), -EINVAL);
	KUNIT_EXPECT_EQ(test, wow_parse_tunable(&a, "block_size", "8192",
						&error), -EINVAL);
	KUNIT_EXPECT_EQ(test, wow_parse_tunable(&a, "policy", "lrw",
						&error), -EINVAL);
	KUNIT_EXPECT_EQ(test, wow_parse_tunable(&a, "nonsense", "1",
						&error), -EINVAL);
	KUNIT_EXPECT_EQ(test, wow_parse_tunable(&a, "max_destage_size", "5000",
						&error), -EINVAL);
	KUNIT_EXPECT_EQ(test, memcmp(&a, &before, sizeof(a)), 0);
}

/*
 * With no write_group_size named, the group is the origin's optimal I/O
 * size when that is a power of two from block_size to 64 MiB; with no
 * max_destage_size named, one write holds at least a whole group.
 */
static void wow_args_group_from_io_opt(struct kunit *test)
{
	static const struct {
		const char *line;
		u32 io_opt, group, destage;
	} cases[] = {
		{ "0", 0, 128U << 10, 1U << 20 },
		{ "0", 262144, 256U << 10, 1U << 20 },		/* RAID-5 4+1 x 64K */
		{ "0", 196608, 128U << 10, 1U << 20 },		/* 3 x 64K: not 2^n */
		{ "0", 2048, 128U << 10, 1U << 20 },		/* < block_size */
		{ "0", 4096, 4096, 1U << 20 },
		{ "0", 4U << 20, 4U << 20, 4U << 20 },
		{ "0", 64U << 20, 64U << 20, 8U << 20 },
		{ "0", 1U << 31, 128U << 10, 1U << 20 },	/* > 64 MiB */
		{ "2 write_group_size 65536", 262144, 64U << 10, 1U << 20 },
		{ "2 max_destage_size 65536", 262144, 256U << 10, 64U << 10 },
		{ "2 block_size 65536", 32768, 128U << 10, 1U << 20 },
	};
	struct wow_args a;
	char *error;
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned long set;

		KUNIT_ASSERT_EQ(test, parse_line(test, cases[i].line, &a,
						 &error), 0);
		set = a.set;
		wow_args_set_group(&a, cases[i].io_opt);
		KUNIT_EXPECT_EQ_MSG(test, a.write_group_size, cases[i].group,
				    "case %d", i);
		KUNIT_EXPECT_EQ_MSG(test, a.max_destage_size,
				    cases[i].destage, "case %d", i);
		/* a resolved default is not the user's: TABLE omits it */
		KUNIT_EXPECT_EQ_MSG(test, a.set, set, "case %d", i);
	}
}

static struct kunit_case wow_args_cases[] = {
	KUNIT_CASE(wow_args_defaults_with_no_options),
	KUNIT_CASE(wow_args_every_option_parsed),
	KUNIT_CASE(wow_args_limits_accepted),
	KUNIT_CASE(wow_args_bad_lines_refused),
	KUNIT_CASE(wow_args_one_watermark_keeps_gap),
	KUNIT_CASE(wow_args_emit_round_trips),
	KUNIT_CASE(wow_args_tunable_changes_only_when_valid),
	KUNIT_CASE(wow_args_group_from_io_opt),
	{}
};

static struct kunit_suite wow_args_suite = {
	.name = "dm_wow_args",
	.test_cases = wow_args_cases,
};

kunit_test_suite(wow_args_suite);
