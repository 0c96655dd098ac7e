// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libwow's parsers, formatters and field table.  Prints one
 * "PASS: userspace/<name>" or "FAIL: userspace/<name> (<why>)" line per
 * case and exits 1 if any failed.  Needs no root and no devices.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "../json.h"
#include "../kargs.h"
#include "../libwow.h"
#include "expect.h"

/* the JSON checker the test guest uses (wowjson) */
#define WOWJSON_NO_MAIN
#include "../../tests/vm/guest/wowjson.c"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* For one-line results: report what came out. */
#define EXPECT_STR(got, want)						\
	do {								\
		const char *g_ = (got);					\
		if (!g_ || strcmp(g_, want)) {				\
			snprintf(why, sizeof(why), "line %d: got '%s'",	\
				 __LINE__, g_ ? g_ : "(null)");		\
			return why;					\
		}							\
	} while (0)

/*
 * Run fn(f) on a memory stream; returns the text, caller frees.  Not
 * inlined: gcc 12 takes &buf for the text and warns of dangling pointers.
 */
static __attribute__((noinline)) char *
capture(void (*fn)(FILE *f, const void *arg), const void *arg)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	fn(f, arg);
	fclose(f);
	return buf;
}

/* ---- status ---- */

static const char *status_prefix_only(void)
{
	struct wow_status st;
	char err[WOW_ERR_LEN];

	EXPECT(!wow_status_parse("cleaning lrw 4096 1000 900 100\n", &st, err));
	EXPECT(st.state == WOW_STATE_CLEANING && st.policy == WOW_POLICY_LRW);
	EXPECT(st.block_size == 4096 && st.cache_blocks == 1000);
	EXPECT(st.free_blocks == 900 && st.dirty_blocks == 100);
	EXPECT(st.present == (1ULL << WOW_NR_PREFIX) - 1);
	EXPECT(st.nr_other == 0);
	wow_status_free(&st);
	return NULL;
}

static const char *status_states_and_policies(void)
{
	static const char *const lines[] = {
		"ok wow 512 1 1 0",	"cleaning cscan 512 1 1 0",
		"read_only lrw 512 1 1 0", "failed wow 512 1 1 0",
	};
	struct wow_status st;
	unsigned int i;

	for (i = 0; i < 4; i++) {
		EXPECT(!wow_status_parse(lines[i], &st, NULL));
		EXPECT(st.state == (enum wow_state)i);
		EXPECT(st.policy == (enum wow_policy)(i % 3));
		EXPECT(!strncmp(lines[i], wow_state_name(st.state),
				strlen(wow_state_name(st.state))));
	}
	return NULL;
}

/* Every known key, value 1000 + id, lands in its own member. */
static const char *status_all_known_keys(void)
{
	char line[2048] = "ok wow 4096 18446744073709551615 7 3";
	char err[WOW_ERR_LEN];
	struct wow_status st;
	int i;

	for (i = WOW_NR_FIELDS - 1; i >= WOW_NR_PREFIX; i--)
		sprintf(line + strlen(line), "\t%s=%d ", wow_fields[i].id,
			1000 + i);
	EXPECT(!wow_status_parse(line, &st, err));
	EXPECT(st.present == (1ULL << WOW_NR_FIELDS) - 1);
	EXPECT(st.cache_blocks == UINT64_MAX);
	for (i = WOW_NR_PREFIX; i < WOW_NR_FIELDS; i++)
		if (wow_fields[i].type == WOW_FT_U64)
			EXPECT(wow_status_u64(&st, i) == 1000u + i);
	snprintf(err, sizeof(err), "%d", 1000 + WOW_F_LOADED_FROM);
	EXPECT(!strcmp(st.loaded_from, err));
	EXPECT(st.read_hits == 1000 + WOW_F_READ_HITS);
	EXPECT(st.hand == 1000 + WOW_F_HAND);
	EXPECT(st.age_oldest_s == 1000 + WOW_F_AGE_OLDEST_S);
	EXPECT(st.nr_other == 0);
	wow_status_free(&st);
	return NULL;
}

static const char *status_unknown_keys_kept(void)
{
	struct wow_status st;
	char err[WOW_ERR_LEN];

	EXPECT(!wow_status_parse("ok cscan 512 8 8 0 zz_new=12 read_hits=5 "
				 "mode=fast", &st, err));
	EXPECT(st.read_hits == 5 && wow_status_has(&st, WOW_F_READ_HITS));
	EXPECT(!wow_status_has(&st, WOW_F_READ_MISSES));
	EXPECT(st.nr_other == 2);
	EXPECT(!strcmp(st.other[0].key, "zz_new"));
	EXPECT(!strcmp(st.other[0].value, "12"));
	EXPECT(!strcmp(st.other[1].key, "mode"));
	EXPECT(!strcmp(st.other[1].value, "fast"));
	wow_status_free(&st);
	EXPECT(st.nr_other == 0 && !st.other);
	return NULL;
}

static const struct bad_line {
	const char *name, *line, *err;
} bad_status[] = {
	{ "empty", "", "prefix" },
	{ "missing_prefix_field", "ok wow 4096 1000 900", "prefix" },
	{ "bad_state", "fine wow 4096 1 1 0", "state 'fine'" },
	{ "state_case", "OK wow 4096 1 1 0", "state 'OK'" },
	{ "bad_policy", "ok lru 4096 1 1 0", "policy 'lru'" },
	{ "non_numeric", "ok wow 4k 1 1 0", "block_size: '4k' is not" },
	{ "signed_number", "ok wow 4096 1 -1 0", "'-1' is not a number" },
	{ "overflow", "ok wow 4096 18446744073709551616 1 0", "overflows" },
	{ "token_without_eq", "ok wow 4096 1 1 0 read_hits", "not key=value" },
	{ "extra_positional", "ok wow 4096 1 1 0 7", "'7' is not key=value" },
	{ "empty_value", "ok wow 4096 1 1 0 read_hits=", "no value" },
	{ "empty_key", "ok wow 4096 1 1 0 =5", "bad key" },
	{ "bad_key_chars", "ok wow 512 1 1 0 Read-Hits=1", "bad key" },
	{ "known_key_word", "ok wow 512 1 1 0 commits=many", "not a number" },
	{ "known_key_overflow", "ok wow 512 1 1 0 hand=99999999999999999999",
	  "overflows" },
	{ "duplicate_key", "ok wow 512 1 1 0 flushes=1 flushes=2", "twice" },
	{ "duplicate_unknown", "ok wow 512 1 1 0 x=1 y=2 x=2", "twice" },
	{ "prefix_as_key", "ok wow 512 1 1 0 state=ok", "twice" },
};

static const char *status_rejects(const struct bad_line *b)
{
	char err[WOW_ERR_LEN] = "";
	struct wow_status st;
	int r = wow_status_parse(b->line, &st, err);

	if (!r)
		return "accepted";
	EXPECT(r < 0);
	if (!strstr(err, b->err)) {
		snprintf(why, sizeof(why), "error '%s' lacks '%s'", err, b->err);
		return why;
	}
	EXPECT(st.nr_other == 0 && !st.other);
	return NULL;
}

/* ---- table ---- */

static const char *table_round_trip(void)
{
	static const char line[] =
		"8:16 259:2 22 block_size 4096 erase_block_size 1048576 "
		"write_group_size 65536 policy cscan low_watermark 70 "
		"high_watermark 85 max_destage_ios 32 max_destage_size 524288 "
		"max_age 30 sequential_cutoff 0 cleaner format";
	struct wow_table t;
	char err[WOW_ERR_LEN], *out;

	EXPECT(!wow_table_parse(line, &t, err));
	EXPECT(!strcmp(t.origin, "8:16") && !strcmp(t.cache, "259:2"));
	EXPECT(t.set == (1U << WOW_NR_OPTS) - 1);
	EXPECT(t.val[WOW_OPT_POLICY] == WOW_POLICY_CSCAN);
	EXPECT(t.val[WOW_OPT_ERASE_BLOCK_SIZE] == 1048576);
	EXPECT(t.val[WOW_OPT_MAX_AGE] == 30 && t.val[WOW_OPT_FORMAT] == 1);
	out = wow_table_format(&t);
	EXPECT_STR(out, line);
	free(out);
	wow_table_free(&t);
	return NULL;
}

static const char *table_canonical_order(void)
{
	struct wow_table t, u;
	char *out, *again;

	EXPECT(!wow_table_parse("/dev/sdb /dev/nvme0n1p2 5 cleaner  "
				"policy lrw max_age 9", &t, NULL));
	out = wow_table_format(&t);
	EXPECT_STR(out, "/dev/sdb /dev/nvme0n1p2 5 policy lrw max_age 9 "
		   "cleaner");
	EXPECT(!wow_table_parse(out, &u, NULL));
	again = wow_table_format(&u);
	EXPECT_STR(again, out);
	EXPECT(u.set == t.set && !memcmp(u.val, t.val, sizeof(t.val)));
	free(out);
	free(again);
	wow_table_free(&t);
	wow_table_free(&u);
	EXPECT(!wow_table_parse("a b 0", &t, NULL) && t.set == 0);
	out = wow_table_format(&t);
	EXPECT_STR(out, "a b 0");
	free(out);
	wow_table_free(&t);
	return NULL;
}

static const struct bad_line bad_table[] = {
	{ "too_few_words", "8:16 259:2", "expected <origin>" },
	{ "count_too_high", "a b 3 policy wow", "'3' but 2" },
	{ "count_too_low", "a b 1 policy wow", "'1' but 2" },
	{ "count_not_number", "a b x", "'x'" },
	{ "unknown_option", "a b 2 blocksize 4096", "unknown option" },
	{ "missing_value", "a b 1 max_age", "needs a value" },
	{ "bad_policy", "a b 2 policy lru", "policy 'lru'" },
	{ "bad_number", "a b 2 block_size 4k", "not a number" },
	{ "duplicate", "a b 3 cleaner cleaner format", "twice" },
};

static const char *table_rejects(const struct bad_line *b)
{
	char err[WOW_ERR_LEN] = "";
	struct wow_table t;

	if (!wow_table_parse(b->line, &t, err))
		return "accepted";
	if (!strstr(err, b->err)) {
		snprintf(why, sizeof(why), "error '%s' lacks '%s'", err, b->err);
		return why;
	}
	EXPECT(!t.origin && !t.cache);
	return NULL;
}

/* libwow's table names each option (the kernel's ids) as the kernel does */
static const char *opts_are_the_kernels(void)
{
	int i;

	for (i = 0; i < WOW_NR_OPTS; i++) {
		EXPECT_STR(wow_kargs_name(i), wow_opts[i].name);
		EXPECT(wow_opt_lookup(wow_opts[i].name) == i);
	}
	EXPECT(wow_opt_default(WOW_OPT_BLOCK_SIZE) == 4096 &&
	       wow_opt_default(WOW_OPT_HIGH_WATERMARK) == 30 &&
	       wow_opt_default(WOW_OPT_POLICY) == WOW_POLICY_WOW);
	EXPECT(wow_kargs_runtime(WOW_OPT_SEQUENTIAL_CUTOFF) &&
	       !wow_kargs_runtime(WOW_OPT_POLICY));
	EXPECT_STR(wow_policy_name(WOW_POLICY_LRW), "lrw");
	return NULL;
}

/* ---- output ---- */

static void json_escape_str(FILE *f, const void *s)
{
	json_string(f, s);
}

static const char *json_escaping(void)
{
	char *out = capture(json_escape_str, "a\"b\\c/\n\r\t\x01\x1f\x7f z\xc3\xa9");

	EXPECT_STR(out, "\"a\\\"b\\\\c/\\n\\r\\t\\u0001\\u001f\\u007f "
		   "z\xc3\xa9\"");
	free(out);
	return NULL;
}

/* Valid JSON: the reason in why */
static const char *json_valid(const char *s)
{
	const char *w;
	size_t off;

	if (wowjson_check(s, strlen(s), &off, &w))
		return NULL;
	snprintf(why, sizeof(why), "not JSON at %zu (expected %s): %.80s", off,
		 w, s);
	return why;
}

/* every control character, DEL, and UTF-8 of 2, 3 and 4 bytes */
static const char *json_escaping_controls(void)
{
	char in[40], want[256], *out, *w = want;
	int c, n = 0;

	for (c = 1; c < 0x20; c++)
		in[n++] = c;
	in[n++] = 0x7f;
	in[n] = '\0';
	w += sprintf(w, "\"");
	for (c = 1; c < 0x20; c++)
		w += c == '\n' ? sprintf(w, "\\n") : c == '\r' ?
		     sprintf(w, "\\r") : c == '\t' ? sprintf(w, "\\t") :
		     sprintf(w, "\\u%04x", c);
	sprintf(w, "\\u007f\"");
	out = capture(json_escape_str, in);
	EXPECT_STR(out, want);
	free(out);
	out = capture(json_escape_str, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"\\");
	EXPECT_STR(out, "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\\\"\\\\\"");
	free(out);
	out = capture(json_escape_str, "");
	EXPECT_STR(out, "\"\"");
	free(out);
	return NULL;
}

/* a little of everything, compact and inline */
static void json_compact(FILE *f, const void *arg)
{
	struct json j;

	(void)arg;
	json_init(&j, f, false);
	json_open(&j, '{', -1);
	json_key(&j, "a");
	json_open(&j, '[', -1);
	json_u64(&j, 18446744073709551615ULL);
	json_str(&j, "x");
	json_str(&j, NULL);
	json_open(&j, '{', -1);
	json_close(&j);
	json_open(&j, '[', -1);
	json_close(&j);
	json_close(&j);
	json_key(&j, "b\"\n");
	json_open(&j, '{', -1);
	json_key(&j, "c");
	json_bool(&j, true);
	json_key(&j, "d");
	json_int(&j, -3);
	json_close(&j);
	json_key(&j, "e");
	json_double(&j, 0.5);
	json_key(&j, "f");
	json_double(&j, 1e308 * 10);	/* infinity */
	json_close(&j);
}

/* spaced, members on lines of their own (wowctl dump's layout) */
static void json_lines(FILE *f, const void *arg)
{
	struct json j;

	(void)arg;
	json_init(&j, f, true);
	json_open(&j, '{', 2);
	json_key(&j, "a");
	json_u64(&j, 1);
	json_key(&j, "list");
	json_open(&j, '[', 4);
	json_open(&j, '{', -1);
	json_key(&j, "x");
	json_null(&j);
	json_key(&j, "y");
	json_bool(&j, false);
	json_close(&j);
	json_u64(&j, 2);
	json_close(&j);
	json_key(&j, "none");
	json_open(&j, '[', 4);
	json_close(&j);
	json_close(&j);
}

static const char *json_writer(void)
{
	char *out = capture(json_compact, NULL);

	EXPECT_STR(out, "{\"a\":[18446744073709551615,\"x\",null,{},[]],"
		   "\"b\\\"\\n\":{\"c\":true,\"d\":-3},\"e\":0.500,"
		   "\"f\":null}");
	EXPECT(!json_valid(out));
	free(out);
	out = capture(json_lines, NULL);
	EXPECT_STR(out, "{\n  \"a\": 1,\n  \"list\": [\n    {\"x\": null, "
		   "\"y\": false},\n    2\n  ],\n  \"none\": []\n}");
	EXPECT(!json_valid(out));
	free(out);
	return NULL;
}

static void status_json(FILE *f, const void *st)
{
	wow_print_status_json(f, "my\"dev", st);
}

static const char *json_status_output(void)
{
	struct wow_status st;
	char *out;

	EXPECT(!wow_status_parse("read_only wow 4096 200 150 50 commits=3 "
				 "n=17 w=a\"b\\c", &st, NULL));
	out = capture(status_json, &st);
	EXPECT_STR(out, "{\"name\":\"my\\\"dev\",\"state\":\"read_only\","
		"\"policy\":\"wow\",\"block_size\":4096,\"cache_blocks\":200,"
		"\"free_blocks\":150,\"dirty_blocks\":50,\"commits\":3,"
		"\"health\":\"degraded\",\"health_reason\":\"state read_only: "
		"the cache device failed a write\","
		"\"derived\":{\"cache_size_mib\":0.781,\"dirty_pct\":25.000,"
		"\"free_pct\":75.000,\"dirty_mib\":0.195},\"rates\":null,"
		"\"tunables\":{\"block_size\":{\"value\":4096,\"unit\":\"bytes\","
		"\"source\":\"status\"},\"erase_block_size\":{\"value\":1048576,"
		"\"unit\":\"bytes\",\"source\":\"default\"},"
		"\"write_group_size\":{\"value\":131072,\"unit\":\"bytes\","
		"\"source\":\"default\"},\"policy\":{\"value\":\"wow\","
		"\"unit\":\"\",\"source\":\"status\"},\"low_watermark\":"
		"{\"value\":20,\"unit\":\"%\",\"source\":\"default\"},"
		"\"high_watermark\":{\"value\":30,\"unit\":\"%\",\"source\":"
		"\"default\"},\"max_destage_ios\":{\"value\":32,\"unit\":"
		"\"writes\",\"source\":\"default\"},\"max_destage_size\":"
		"{\"value\":1048576,\"unit\":\"bytes\",\"source\":\"default\"},"
		"\"max_age\":{\"value\":0,\"unit\":\"s\",\"source\":"
		"\"default\"},\"sequential_cutoff\":{\"value\":0,\"unit\":"
		"\"bytes\",\"source\":\"default\"},\"cleaner\":{\"value\":"
		"false,\"unit\":\"\",\"source\":\"default\"}},\"table\":null,"
		"\"other\":{\"n\":17,\"w\":\"a\\\"b\\\\c\"}}");
	free(out);
	wow_status_free(&st);
	return NULL;
}

static void status_text(FILE *f, const void *st)
{
	wow_print_status_text(f, "slow", st);
}

static const char *text_status_output(void)
{
	struct wow_status st;
	char *out;

	EXPECT(!wow_status_parse("ok wow 4096 1000 900 100 read_hits=3 "
				 "read_misses=1 low_watermark=80 extra=x",
				 &st, NULL));
	out = capture(status_text, &st);
	EXPECT(!strncmp(out, "slow: ok\n", 9));
	EXPECT(strstr(out, "  State ") && strstr(out, " ok\n"));
	EXPECT(strstr(out, "  Dirty blocks ") && strstr(out, " 100 blocks\n"));
	EXPECT(strstr(out, " 80 %\n") && strstr(out, "  Low watermark "));
	EXPECT(strstr(out, "  Dirty ") && strstr(out, " 10.0 %\n"));
	EXPECT(strstr(out, "  Read hit ratio ") && strstr(out, " 75.0 %\n"));
	EXPECT(!strstr(out, "Write hit ratio"));
	EXPECT(strstr(out, "  extra ") && strstr(out, " x\n"));
	free(out);
	wow_status_free(&st);
	return NULL;
}

static const char *derived_figures(void)
{
	/* -1: cannot be computed (no write hits or misses yet) */
	static const double want[] = { 1.0, 25, 0, 80, -1, 2.5, 0.25, -1,
				       2.5, 0.5 };
	struct wow_status st;
	size_t i;
	double v;

	EXPECT(wow_nr_derived == ARRAY_SIZE(want));
	EXPECT(!wow_status_parse("ok wow 1024 1024 0 256 read_hits=8 "
				 "read_misses=2 write_hits=0 write_misses=0 "
				 "destage_writes=4 destage_blocks=10 "
				 "mean_seek_sectors=1024", &st, NULL));
	for (i = 0; i < wow_nr_derived; i++) {
		bool ok = wow_derived_get(&wow_derived[i], &st, &v);

		if (want[i] < 0)
			EXPECT(!ok);
		else
			EXPECT(ok && v == want[i]);
	}
	st.cache_blocks = 0;
	EXPECT(!wow_derived_get(&wow_derived[1], &st, &v));
	return NULL;
}

/* dm-wow.h wow_occupancy_bp: dirty over (segments - 4 - segments/32) */
static const char *occupancy_as_the_kernel(void)
{
	struct wow_status st;
	double pct;

	/* 64 segments of 256 blocks: 64 - (2 + 2 + 2) = 58 usable */
	EXPECT(!wow_status_parse("ok wow 4096 16384 0 7424 segments=64", &st,
				 NULL));
	EXPECT(wow_occupancy_pct(&st, &pct) && pct == 50);
	st.dirty_blocks = 1;	/* 10000 / 14848 rounds down to 0 bp */
	EXPECT(wow_occupancy_pct(&st, &pct) && pct == 0);
	st.dirty_blocks = 16384;	/* capped */
	EXPECT(wow_occupancy_pct(&st, &pct) && pct == 100);
	/* 4 segments: all but one held back, 1 usable */
	EXPECT(!wow_status_parse("ok wow 4096 1024 0 128 segments=4", &st,
				 NULL));
	EXPECT(wow_occupancy_pct(&st, &pct) && pct == 50);
	EXPECT(!wow_status_parse("ok wow 4096 1024 0 128", &st, NULL));
	EXPECT(!wow_occupancy_pct(&st, &pct));
	return NULL;
}

/* ---- options, tunables, health, rates ---- */

static const char *options_parse(void)
{
	struct wow_table t = { 0 };
	char err[WOW_ERR_LEN], *out;
	uint64_t eff[WOW_NR_OPTS];

	t.origin = "o";
	t.cache = "c";
	EXPECT(!wow_table_add_option(&t, "block_size=8K", err));
	EXPECT(!wow_table_add_option(&t, "erase_block_size=4MiB", err));
	EXPECT(!wow_table_add_option(&t, "policy=cscan", err));
	EXPECT(!wow_table_add_option(&t, "high_watermark=50", err));
	EXPECT(!wow_table_add_option(&t, "max_destage_size=64k", err));
	EXPECT(!wow_table_add_option(&t, "cleaner", err));
	EXPECT(t.val[WOW_OPT_BLOCK_SIZE] == 8192);
	EXPECT(t.val[WOW_OPT_ERASE_BLOCK_SIZE] == 4 << 20);
	EXPECT(t.val[WOW_OPT_POLICY] == WOW_POLICY_CSCAN);
	EXPECT(!wow_table_check(&t, eff, err));
	/* high alone: low 10 points below */
	EXPECT(eff[WOW_OPT_LOW_WATERMARK] == 40);
	EXPECT(eff[WOW_OPT_HIGH_WATERMARK] == 50);
	EXPECT(eff[WOW_OPT_MAX_AGE] == 0 && eff[WOW_OPT_WRITE_GROUP_SIZE] == 131072);
	out = wow_table_format(&t);
	EXPECT_STR(out, "o c 11 block_size 8192 erase_block_size 4194304 "
		   "policy cscan high_watermark 50 max_destage_size 65536 "
		   "cleaner");
	free(out);
	memset(&t, 0, sizeof(t));
	EXPECT(!wow_table_add_option(&t, "low_watermark=95", err));
	EXPECT(!wow_table_check(&t, eff, err));
	EXPECT(eff[WOW_OPT_HIGH_WATERMARK] == 100);
	return NULL;
}

static const struct bad_line bad_option[] = {
	{ "unknown", "blocksize=4096", "unknown option 'blocksize'" },
	{ "no_value", "max_age", "needs a value" },
	{ "empty_value", "max_age=", "needs a value" },
	{ "flag_with_value", "cleaner=1", "takes no value" },
	{ "not_pow2", "block_size=3000", "Invalid block_size: must be a power of two" },
	{ "too_small", "block_size=256", "Invalid block_size" },
	{ "too_large", "block_size=128K", "Invalid block_size" },
	{ "erase_too_small", "erase_block_size=1K", "from 2048 to 256 MiB" },
	{ "erase_too_large", "erase_block_size=512M", "Invalid erase_block_size" },
	{ "group_not_pow2", "write_group_size=3K", "Invalid write_group_size" },
	{ "bad_policy", "policy=lru", "Invalid policy: must be wow, cscan or lrw" },
	{ "low_too_high", "low_watermark=100", "from 0 to 99" },
	{ "high_zero", "high_watermark=0", "from 1 to 100" },
	{ "ios_zero", "max_destage_ios=0", "from 1 to 4096" },
	{ "ios_large", "max_destage_ios=4097", "from 1 to 4096" },
	{ "destage_size_large", "max_destage_size=16M", "to 8 MiB" },
	{ "age_large", "max_age=604801", "from 0 to 604800 seconds" },
	{ "cutoff_large", "sequential_cutoff=2G", "from 0 to 1 GiB" },
	{ "negative", "max_age=-1", "not a decimal number" },
	{ "hex", "max_age=0x10", "not a decimal number" },
	{ "bad_suffix", "block_size=4Q", "not a size" },
	{ "suffix_on_count", "max_destage_ios=1K", "not a decimal number" },
};

static const char *option_rejects(const struct bad_line *b)
{
	struct wow_table t = { 0 };
	char err[WOW_ERR_LEN] = "";

	if (!wow_table_add_option(&t, b->line, err))
		return "accepted";
	if (!strstr(err, b->err)) {
		snprintf(why, sizeof(why), "error '%s' lacks '%s'", err, b->err);
		return why;
	}
	EXPECT(t.set == 0);
	return NULL;
}

/* What the kernel's check_args refuses of options that each pass. */
static const struct bad_line bad_combination[] = {
	{ "erase_under_4_blocks", "block_size=64K erase_block_size=128K",
	  "Invalid erase_block_size: must be at least 4 blocks" },
	{ "group_under_block", "block_size=8K write_group_size=4K",
	  "Invalid write_group_size: must be at least block_size" },
	{ "destage_not_multiple", "block_size=8K max_destage_size=12K",
	  "Invalid max_destage_size: must be a multiple of block_size" },
	{ "destage_under_block", "block_size=16K max_destage_size=8K",
	  "multiple of block_size" },
	{ "low_not_below_high", "low_watermark=60 high_watermark=60",
	  "low_watermark must be below high_watermark" },
	{ "twice", "max_age=1 max_age=2", "given twice" },
};

static const char *combination_rejects(const struct bad_line *b)
{
	struct wow_table t = { 0 };
	char err[WOW_ERR_LEN] = "", buf[128], *save, *tok;
	int r = 0;

	snprintf(buf, sizeof(buf), "%s", b->line);
	for (tok = strtok_r(buf, " ", &save); tok && !r;
	     tok = strtok_r(NULL, " ", &save))
		r = wow_table_add_option(&t, tok, err);
	if (!r && !wow_table_check(&t, NULL, err))
		return "accepted";
	if (!strstr(err, b->err)) {
		snprintf(why, sizeof(why), "error '%s' lacks '%s'", err, b->err);
		return why;
	}
	return NULL;
}

static const char *tunable_values(void)
{
	char err[WOW_ERR_LEN], out[24];

	EXPECT(!wow_tunable_value("max_destage_size", "256K", out, err));
	EXPECT_STR(out, "262144");
	EXPECT(!wow_tunable_value("low_watermark", "50", out, err));
	EXPECT_STR(out, "50");
	EXPECT(wow_tunable_value("block_size", "4096", out, err));
	EXPECT(strstr(err, "not a runtime tunable"));
	EXPECT(wow_tunable_value("max_age", "1m", out, err));
	EXPECT(wow_tunable_value("nonsense", "1", out, err));
	return NULL;
}

static const char *tunables_sources(void)
{
	struct wow_tunable tun[WOW_NR_OPTS];
	struct wow_status st;
	struct wow_table t;

	EXPECT(!wow_status_parse("cleaning cscan 8192 100 100 0 "
				 "low_watermark=33 high_watermark=43 "
				 "max_age=17 max_destage_ios=7 "
				 "sequential_cutoff=0", &st, NULL));
	EXPECT(!wow_table_parse("8:1 8:2 6 block_size 8192 max_destage_ios 7 "
				"max_age 5", &t, NULL));
	wow_tunables(&st, &t, tun);
	EXPECT(tun[WOW_OPT_BLOCK_SIZE].value == 8192 &&
	       tun[WOW_OPT_BLOCK_SIZE].source == WOW_SRC_STATUS);
	EXPECT(tun[WOW_OPT_POLICY].value == WOW_POLICY_CSCAN);
	EXPECT(tun[WOW_OPT_LOW_WATERMARK].value == 33 &&
	       tun[WOW_OPT_LOW_WATERMARK].source == WOW_SRC_STATUS);
	EXPECT(tun[WOW_OPT_MAX_DESTAGE_IOS].value == 7 &&
	       tun[WOW_OPT_MAX_DESTAGE_IOS].source == WOW_SRC_TABLE);
	/* a key in the status named like an option wins over the table */
	EXPECT(tun[WOW_OPT_MAX_AGE].value == 17 &&
	       tun[WOW_OPT_MAX_AGE].source == WOW_SRC_STATUS);
	/* the status agreeing with the table or the default: not its source */
	EXPECT(tun[WOW_OPT_SEQUENTIAL_CUTOFF].value == 0 &&
	       tun[WOW_OPT_SEQUENTIAL_CUTOFF].source == WOW_SRC_DEFAULT);
	EXPECT(tun[WOW_OPT_CLEANER].value == 1 &&
	       tun[WOW_OPT_CLEANER].source == WOW_SRC_STATUS);
	wow_status_free(&st);
	wow_table_free(&t);
	/* a table naming low alone: high 10 above, from the table */
	EXPECT(!wow_status_parse("ok wow 4096 100 100 0", &st, NULL));
	EXPECT(!wow_table_parse("a b 2 low_watermark 30", &t, NULL));
	wow_tunables(&st, &t, tun);
	EXPECT(tun[WOW_OPT_HIGH_WATERMARK].value == 40 &&
	       tun[WOW_OPT_HIGH_WATERMARK].source == WOW_SRC_TABLE);
	EXPECT(tun[WOW_OPT_CLEANER].value == 0);
	wow_status_free(&st);
	wow_table_free(&t);
	return NULL;
}

static const char *health_levels(void)
{
	static const struct {
		const char *line;
		enum wow_health_level h;
		const char *why;
	} c[] = {
		{ "ok wow 4096 1 1 0 needs_check=0", WOW_HEALTH_OK, "" },
		{ "cleaning wow 4096 1 1 0", WOW_HEALTH_OK, "" },
		{ "cleaning wow 4096 1 1 0 needs_check=1",
		  WOW_HEALTH_DEGRADED, "needs_check" },
		{ "read_only wow 4096 1 1 0", WOW_HEALTH_DEGRADED, "read_only" },
		{ "failed wow 4096 1 1 0 needs_check=1", WOW_HEALTH_FAILED,
		  "failed" },
	};
	char err[WOW_ERR_LEN];
	struct wow_status st;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		EXPECT(!wow_status_parse(c[i].line, &st, NULL));
		EXPECT(wow_health_of(&st, err) == c[i].h);
		EXPECT(strstr(err, c[i].why));
		EXPECT(wow_health_of(&st, NULL) == c[i].h);
	}
	return NULL;
}

static const char *rates_from_two_samples(void)
{
	struct wow_status a, b;
	struct wow_rates r;

	EXPECT(!wow_status_parse("ok wow 4096 1000 0 500 destage_blocks=100 "
				 "destage_writes=10 log_blocks=0 read_hits=0 "
				 "read_misses=0 write_hits=0 write_misses=0",
				 &a, NULL));
	EXPECT(!wow_status_parse("ok wow 4096 1000 0 244 destage_blocks=612 "
				 "destage_writes=30 log_blocks=256 read_hits=4 "
				 "read_misses=2 write_hits=0 write_misses=8",
				 &b, NULL));
	EXPECT(wow_rates_get(&a, &b, 2, &r));
	EXPECT(r.destage_mib_s == 1.0 && r.destage_writes_s == 10);
	EXPECT(r.dirty_blocks_s == -128 && r.log_mib_s == 0.5);
	EXPECT(r.read_hits_s == 2 && r.write_misses_s == 4);
	EXPECT(!wow_rates_get(&a, &b, 0, &r));
	/* clear_stats in between: counters went back */
	EXPECT(!wow_rates_get(&b, &a, 2, &r));
	return NULL;
}

/* ---- wow_show: a list of devices, one vanishing ---- */

struct fake {
	const char *name, *status, *table;	/* status NULL: vanished */
};

static const struct fake fakes[] = {
	{ "gone", NULL, NULL },
	{ "a\"b", "ok wow 4096 1024 1000 24 read_hits=1 read_misses=3 "
	  "segments=4 mode=x\\y", "8:16 8:32 2 max_age 30" },
	{ "bad", "ok wow 4096 12", "8:16 8:32 0" },
	{ "dead", "failed lrw 512 8 8 0", NULL },
	{ "gone2", NULL, NULL },
	/* every field, as a 6.1 guest printed them (and bad_blocks, format 5) */
	{ "full", "ok wow 4096 61184 30210 28002 read_hits=10 read_misses=2 "
	  "write_hits=300 write_misses=31000 writes_bypassed=0 "
	  "destage_writes=900 destage_blocks=2998 merged_blocks=2000 "
	  "commits=7000 flushes=12 reclaimed_segments=40 copied_blocks=55 "
	  "log_blocks=40000 load_dropped=0 needs_check=0 origin_errors=0 "
	  "cache_errors=0 segments=240 free_segments=118 low_watermark=20 "
	  "high_watermark=35 destage_inflight=3 hand=517 dirty_groups=700 "
	  "recency_bits=120 destage_runs=950 mean_run_blocks=3 "
	  "mean_seek_sectors=96000 age_oldest_s=41 valid_blocks=30974 "
	  "discards=0 sweeps=2 load_kib=1540 loaded_from=checkpoint "
	  "bad_blocks=0",
	  "8:16 8:32 0" },
};

static int fake_fetch(void *ctx, const char *name, char **status,
		      char **table, char *err)
{
	size_t i;

	(void)ctx;
	*status = *table = NULL;
	for (i = 0; i < ARRAY_SIZE(fakes); i++) {
		if (strcmp(fakes[i].name, name))
			continue;
		if (!fakes[i].status)
			break;
		*status = strdup(fakes[i].status);
		*table = fakes[i].table ? strdup(fakes[i].table) : NULL;
		return 0;
	}
	snprintf(err, WOW_ERR_LEN, "%s: no such device", name);
	return -ENODEV;
}

struct show_args {
	const char *const *names;
	size_t nr;
	unsigned int flags;
	struct wow_samples *samples;
	double now;
	int ret;
	enum wow_health_level worst;
};

static void show(FILE *f, const void *arg)
{
	struct show_args *a = (struct show_args *)arg;
	FILE *devnull = fopen("/dev/null", "w");

	a->worst = WOW_HEALTH_OK;
	a->ret = wow_show(f, devnull, (char *const *)a->names, a->nr, a->flags,
			  fake_fetch, NULL, a->samples, a->now, &a->worst);
	fclose(devnull);
}

static const char *json_get_str(const char *s, const char *path, char *buf,
				size_t len)
{
	const char *v;
	size_t n;

	if (!wowjson_get(s, strlen(s), path, &v, &n))
		return "(missing)";
	snprintf(buf, len, "%.*s", (int)n, v);
	return buf;
}

static const char *show_json_device_vanished(void)
{
	static const char *const first[] = { "gone", "a\"b" };
	static const char *const all[] = { "gone", "a\"b", "bad", "dead",
					   "gone2" };
	static const char *const none[] = { "gone" };
	struct show_args a = { .names = first, .nr = 2,
			       .flags = WOW_SHOW_JSON };
	const char *bad;
	char *out, buf[64];

	/* the first device vanished between the list and its status */
	out = capture(show, &a);
	bad = json_valid(out);
	if (bad)
		return bad;
	EXPECT(a.ret == 1);
	EXPECT_STR(json_get_str(out, "0.name", buf, sizeof(buf)),
		   "\"a\\\"b\"");
	EXPECT(!strstr(out, "[,") && out[strlen(out) - 1] == '\n');
	free(out);
	/* vanished, bad and failed devices among good ones */
	a.names = all;
	a.nr = ARRAY_SIZE(all);
	out = capture(show, &a);
	bad = json_valid(out);
	if (bad)
		return bad;
	EXPECT_STR(json_get_str(out, "1.name", buf, sizeof(buf)), "\"dead\"");
	EXPECT_STR(json_get_str(out, "1.health", buf, sizeof(buf)),
		   "\"failed\"");
	EXPECT(!wowjson_get(out, strlen(out), "2", &bad, &a.nr));
	EXPECT(a.ret == 1 && a.worst == WOW_HEALTH_FAILED);
	free(out);
	/* nothing left: an empty array */
	a.names = none;
	a.nr = 1;
	a.flags |= WOW_SHOW_ARRAY;
	out = capture(show, &a);
	EXPECT_STR(out, "[]\n");
	free(out);
	/* one name, not an array: the object, or nothing */
	a.flags = WOW_SHOW_JSON;
	out = capture(show, &a);
	EXPECT_STR(out, "");
	free(out);
	a.names = first + 1;
	out = capture(show, &a);
	EXPECT(out[0] == '{' && !json_valid(out) && a.ret == 0);
	free(out);
	return NULL;
}

static const char *show_json_keys(void)
{
	static const char *const one[] = { "a\"b" };
	struct wow_samples ss = { 0 };
	struct show_args a = { .names = one, .nr = 1,
			       .flags = WOW_SHOW_JSON | WOW_SHOW_ARRAY,
			       .samples = &ss, .now = 10 };
	char *out, buf[128];
	const char *bad;

	free(capture(show, &a));
	a.now = 12;
	out = capture(show, &a);
	bad = json_valid(out);
	if (bad)
		return bad;
	EXPECT_STR(json_get_str(out, "0.dirty_blocks", buf, sizeof(buf)), "24");
	EXPECT_STR(json_get_str(out, "0.health", buf, sizeof(buf)), "\"ok\"");
	EXPECT_STR(json_get_str(out, "0.derived.read_hit_pct", buf,
				sizeof(buf)), "25.000");
	EXPECT_STR(json_get_str(out, "0.derived.occupancy_pct", buf,
				sizeof(buf)), "9.370");
	EXPECT_STR(json_get_str(out, "0.rates.seconds", buf, sizeof(buf)),
		   "2.000");
	EXPECT_STR(json_get_str(out, "0.tunables.max_age.value", buf,
				sizeof(buf)), "30");
	EXPECT_STR(json_get_str(out, "0.tunables.max_age.source", buf,
				sizeof(buf)), "\"table\"");
	EXPECT_STR(json_get_str(out, "0.tunables.cleaner.value", buf,
				sizeof(buf)), "false");
	EXPECT_STR(json_get_str(out, "0.table.params", buf, sizeof(buf)),
		   "\"8:16 8:32 2 max_age 30\"");
	EXPECT_STR(json_get_str(out, "0.other.mode", buf, sizeof(buf)),
		   "\"x\\\\y\"");
	free(out);
	wow_samples_free(&ss);
	return NULL;
}

static const char *show_text(void)
{
	static const char *const two[] = { "gone", "a\"b", "dead" };
	struct show_args a = { .names = two, .nr = 3 };
	char *out = capture(show, &a);

	EXPECT(!strncmp(out, "a\"b: ok\n", 7));
	EXPECT(strstr(out, "\ndead: failed: state failed"));
	EXPECT(strstr(out, "  max_age ") && strstr(out, " 30 s (table)\n"));
	EXPECT(strstr(out, "  Dirty occupancy (destage) "));
	EXPECT(!strstr(out, "Rates"));
	EXPECT(a.ret == 1 && a.worst == WOW_HEALTH_FAILED);
	free(out);
	return NULL;
}

/* ---- the kernel's reasons ---- */

static const char *kmsg_matches(void)
{
	static const struct {
		const char *rec, *want;
	} c[] = {
		{ "3,812,1234567,-;device-mapper: table: 254:0: wow: Cache "
		  "device too small: needs its metadata and 4 segments\n",
		  "table: 254:0: wow: Cache device too small: needs its "
		  "metadata and 4 segments" },
		{ "4,813,1234999,-;device-mapper: wow: 254:0: message "
		  "'max_age 1' refused: Invalid max_age\n SUBSYSTEM=block\n",
		  "wow: 254:0: message 'max_age 1' refused: Invalid max_age" },
		{ "<3>[   12.345678] device-mapper: wow: 254:1: cache device "
		  "vdb: no dm-wow superblock",
		  "wow: 254:1: cache device vdb: no dm-wow superblock" },
		{ "<3>device-mapper: table: 254:2: wow: Origin and cache must "
		  "be different devices",
		  "table: 254:2: wow: Origin and cache must be different "
		  "devices" },
		{ "3,814,1235000,-;device-mapper: ioctl: error adding target "
		  "to table\n", NULL },
		{ "3,815,1235001,-;device-mapper: table: 254:3: writecache: "
		  "wow: no\n", NULL },
		{ "6,816,1235002,-;EXT4-fs (vda): wow: mounted\n", NULL },
	};
	char out[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		bool m = wow_kmsg_match(c[i].rec, out, sizeof(out));

		if (!c[i].want) {
			EXPECT(!m);
			continue;
		}
		EXPECT(m);
		EXPECT_STR(out, c[i].want);
	}
	EXPECT(wow_kmsg_match(c[0].rec, out, 10) && strlen(out) == 9);
	return NULL;
}

/* ---- devices ---- */

static const char *stable_path_best_link(void)
{
	char dir[] = "/tmp/wow-by-id.XXXXXX", p[128], *got;
	static const char *const links[][2] = {
		{ "virtio-abc", "/dev/null" },
		{ "dm-name-x", "/dev/null" },
		{ "wwn-0x5000", "/dev/null" },
		{ "ata-Disk_1", "/dev/null" },
		{ "ata-Disk_2", "/dev/zero" },
		{ "wwn-0x4999-part1", "/dev/zero" },
		{ "scsi-1ATA", "/dev/zero" },
	};
	struct stat n, z;
	size_t i;

	EXPECT(mkdtemp(dir));
	for (i = 0; i < ARRAY_SIZE(links); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, links[i][0]);
		EXPECT(!symlink(links[i][1], p));
	}
	EXPECT(!stat("/dev/null", &n) && !stat("/dev/zero", &z));
	got = wow_dev_stable_path(dir, n.st_rdev);
	snprintf(p, sizeof(p), "%s/wwn-0x5000", dir);
	EXPECT(got && !strcmp(got, p));
	free(got);
	got = wow_dev_stable_path(dir, z.st_rdev);
	snprintf(p, sizeof(p), "%s/wwn-0x4999-part1", dir);
	EXPECT(got && !strcmp(got, p));
	free(got);
	EXPECT(!wow_dev_stable_path(dir, 12345));
	EXPECT(!wow_dev_stable_path("/nonexistent/by-id", n.st_rdev));
	for (i = 0; i < ARRAY_SIZE(links); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, links[i][0]);
		unlink(p);
	}
	rmdir(dir);
	return NULL;
}

/* an image file of @bytes, its first 4 KiB @fill */
static int image(char *path, uint64_t bytes, int fill)
{
	char blk[4096];
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	memset(blk, fill, sizeof(blk));
	if (ftruncate(fd, bytes) || pwrite(fd, blk, sizeof(blk), 0) != 4096) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static const char *plan_on_images(void)
{
	char o[] = "/tmp/wow-o.XXXXXX", c[] = "/tmp/wow-c.XXXXXX";
	char small[] = "/tmp/wow-s.XXXXXX", junk[] = "/tmp/wow-j.XXXXXX";
	struct wow_dev od, cd, sd, jd;
	struct wow_table t = { 0 };
	char err[WOW_ERR_LEN], *line;
	struct wow_plan p;

	EXPECT(!image(o, (64 << 20) + 3 * 512, 0));	/* not whole blocks */
	EXPECT(!image(c, 16 << 20, 0));
	EXPECT(!image(small, 4 << 20, 0));
	EXPECT(!image(junk, 16 << 20, 'x'));
	EXPECT(!wow_dev_probe(o, NULL, &od, err));
	EXPECT(!wow_dev_probe(c, NULL, &cd, err));
	EXPECT(!wow_dev_probe(small, NULL, &sd, err));
	EXPECT(!wow_dev_probe(junk, NULL, &jd, err));
	EXPECT(!od.is_blk && od.sectors == (64 << 11) + 3);
	EXPECT(!strcmp(od.stable, o));
	/* files only for tests */
	EXPECT(wow_plan_make(&t, &od, &cd, 0, &p, err));
	EXPECT(strstr(err, "not a block device"));
	/* a blank cache: formatted by the kernel; whole blocks */
	EXPECT(!wow_plan_make(&t, &od, &cd, WOW_PLAN_FILES, &p, err));
	EXPECT(p.cache == WOW_PLAN_BLANK && p.sectors == 64 << 11);
	line = wow_table_format(&p.t);
	EXPECT(line && !strncmp(line, o, strlen(o)) && strstr(line, " 0"));
	free(line);
	wow_plan_free(&p);
	/* 512-byte blocks cover the odd sectors too */
	EXPECT(!wow_table_add_option(&t, "block_size=512", err));
	EXPECT(!wow_plan_make(&t, &od, &cd, WOW_PLAN_FILES, &p, err));
	EXPECT(p.sectors == (64 << 11) + 3);
	wow_plan_free(&p);
	memset(&t, 0, sizeof(t));
	/* too small for 4 segments and the metadata */
	EXPECT(wow_plan_make(&t, &od, &sd, WOW_PLAN_FILES, &p, err));
	EXPECT(strstr(err, "cache too small"));
	/* ... which smaller erase blocks fix */
	EXPECT(!wow_table_add_option(&t, "erase_block_size=256K", err));
	EXPECT(!wow_plan_make(&t, &od, &sd, WOW_PLAN_FILES, &p, err));
	wow_plan_free(&p);
	memset(&t, 0, sizeof(t));
	/* the same device twice */
	EXPECT(wow_plan_make(&t, &cd, &cd, WOW_PLAN_FILES, &p, err));
	EXPECT(strstr(err, "must be different devices"));
	/* foreign data: only with format */
	EXPECT(wow_plan_make(&t, &od, &jd, WOW_PLAN_FILES, &p, err));
	EXPECT(strstr(err, "foreign data") && strstr(err, "format"));
	EXPECT(!wow_table_add_option(&t, "format", err));
	EXPECT(!wow_plan_make(&t, &od, &jd, WOW_PLAN_FILES, &p, err));
	EXPECT(p.cache == WOW_PLAN_FORMAT);
	line = wow_table_format(&p.t);
	EXPECT(line && strstr(line, " 1 format"));
	free(line);
	wow_plan_free(&p);
	/* a bad option never reaches the devices */
	memset(&t, 0, sizeof(t));
	t.set = 1U << WOW_OPT_BLOCK_SIZE;
	t.val[WOW_OPT_BLOCK_SIZE] = 1000;
	EXPECT(wow_plan_make(&t, &od, &cd, WOW_PLAN_FILES, &p, err));
	EXPECT(strstr(err, "Invalid block_size"));
	/* an origin smaller than a block */
	memset(&t, 0, sizeof(t));
	od.sectors = 7;
	EXPECT(wow_plan_make(&t, &od, &cd, WOW_PLAN_FILES, &p, err));
	EXPECT(strstr(err, "smaller than one block"));
	od.read_only = true;
	EXPECT(wow_plan_make(&t, &od, &cd, WOW_PLAN_FILES, &p, err));
	EXPECT(strstr(err, "read-only"));
	wow_dev_free(&od);
	wow_dev_free(&cd);
	wow_dev_free(&sd);
	wow_dev_free(&jd);
	unlink(o);
	unlink(c);
	unlink(small);
	unlink(junk);
	return NULL;
}

/* ---- field table ---- */

static const char *fields_complete(void)
{
	struct wow_status st = { .present = 0 };
	char buf[24];
	int i;

	for (i = 0; i < WOW_NR_FIELDS; i++) {
		const struct wow_field *f = &wow_fields[i];

		EXPECT(f->id && *f->id && f->heading && *f->heading);
		EXPECT(f->description && strlen(f->description) > 10);
		EXPECT(f->unit && (*f->unit || f->type != WOW_FT_U64));
		EXPECT((f->type != WOW_FT_U64) ==
		       (i < 2 || i == WOW_F_LOADED_FROM));
		EXPECT(!strchr(f->id, '=') && !strchr(f->id, ' '));
	}
	/* each numeric field reads back the member it names */
	for (i = WOW_F_BLOCK_SIZE; i < WOW_NR_FIELDS; i++) {
		if (wow_fields[i].type != WOW_FT_U64)
			continue;
		memset(&st, 0, sizeof(st));
		*(uint64_t *)((char *)&st + wow_fields[i].offset) = 42;
		EXPECT(!strcmp(wow_status_text(&st, i, buf), "42"));
	}
	return NULL;
}

static const char *fields_unique(void)
{
	int i, j;

	for (i = 0; i < WOW_NR_FIELDS; i++)
		for (j = i + 1; j < WOW_NR_FIELDS; j++) {
			EXPECT(strcmp(wow_fields[i].id, wow_fields[j].id));
			EXPECT(strcmp(wow_fields[i].heading,
				      wow_fields[j].heading));
			EXPECT(wow_fields[i].offset != wow_fields[j].offset);
		}
	for (i = 0; i < WOW_NR_OPTS; i++)
		for (j = i + 1; j < WOW_NR_OPTS; j++)
			EXPECT(strcmp(wow_opts[i].name, wow_opts[j].name));
	return NULL;
}

static void fields_rst(FILE *f, const void *arg)
{
	(void)arg;
	wow_print_fields_rst(f);
}

static const char *fields_rst_lists_every_field(void)
{
	char *out = capture(fields_rst, NULL), id[64], *p;
	int i;

	EXPECT(strstr(out, ".. list-table::"));
	for (i = 0; i < WOW_NR_FIELDS; i++) {
		snprintf(id, sizeof(id), "   * - ``%s``\n", wow_fields[i].id);
		p = strstr(out, id);
		EXPECT(p && !strstr(p + 1, id));
		EXPECT(strstr(p, wow_fields[i].description));
	}
	EXPECT(!strstr(out, " \n")); /* no trailing blanks */
	free(out);
	return NULL;
}

/* ---- wowctl status --prometheus ---- */

static bool prom_name_ok(const char *s, size_t n, bool metric)
{
	size_t i;

	if (!n || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      (metric && s[i] == ':')))
			return false;
	return true;
}

/*
 * A strict reader of the text exposition format (version 0.0.4) and of
 * the naming rules: every line a HELP, a TYPE or a sample; each family's
 * HELP and TYPE before its samples, its samples together, a family only
 * once; names and label names valid, label values only with \\, \" and
 * \n escapes, no label twice, no sample twice; values floats; counters
 * end in _total and gauges do not; no unit but base units (no _kib,
 * _sectors, _percent, _pct, _bits); _ratio gauges between 0 and 1.
 * Returns NULL, or why not (with the line).  *@nr_samples counts samples.
 */
static const char *prom_check(const char *text, size_t *nr_samples)
{
	char family[128] = "", type[16] = "", seen[8192] = " ";
	char samples[65536] = "\n";
	const char *line = text, *end, *p, *q;
	int lineno = 0, state = 0;	/* 0 want HELP, 1 TYPE, 2 samples */

	*nr_samples = 0;
#define PBAD(msg)							\
	do {								\
		snprintf(why, sizeof(why), "line %d: %s: %.*s", lineno,	\
			 msg, (int)(end - line), line);			\
		return why;						\
	} while (0)
	for (; *line; line = end + 1) {
		lineno++;
		end = strchr(line, '\n');
		if (!end) {
			end = line + strlen(line);
			PBAD("no newline at the end");
		}
		if (!strncmp(line, "# HELP ", 7)) {
			p = line + 7;
			q = memchr(p, ' ', end - p);
			if (!q || !prom_name_ok(p, q - p, true) || q + 1 >= end)
				PBAD("bad HELP");
			if (state == 1 || (size_t)(q - p) >= sizeof(family) - 2)
				PBAD("HELP where TYPE was due");
			snprintf(family, sizeof(family), "%.*s", (int)(q - p), p);
			{
				char key[132];

				snprintf(key, sizeof(key), " %s ", family);
				if (strstr(seen, key))
					PBAD("family seen before");
				if (strlen(seen) + strlen(key) >= sizeof(seen))
					PBAD("too many families");
				strcat(seen, key + 1);
			}
			for (q++; q < end; q++)
				if (*q == '\\' && q[1] != '\\' && q[1] != 'n')
					PBAD("bad escape in HELP");
				else if (*q == '\\')
					q++;
			if (strstr(family, "_kib") || strstr(family, "_sectors") ||
			    strstr(family, "_percent") || strstr(family, "_pct") ||
			    strstr(family, "_bits"))
				PBAD("not a base unit");
			state = 1;
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			size_t fl = strlen(family);

			p = line + 7;
			if (state != 1 || strncmp(p, family, fl) || p[fl] != ' ')
				PBAD("TYPE not after its HELP");
			p += fl + 1;
			snprintf(type, sizeof(type), "%.*s", (int)(end - p), p);
			if (strcmp(type, "counter") && strcmp(type, "gauge"))
				PBAD("type neither counter nor gauge");
			fl = strlen(family);
			if (!strcmp(type, "counter") !=
			    (fl > 6 && !strcmp(family + fl - 6, "_total")))
				PBAD("counters, and only they, end in _total");
			state = 2;
			continue;
		}
		if (line[0] == '#')
			PBAD("unknown comment");
		/* a sample: NAME{LABELS} VALUE */
		if (state != 2)
			PBAD("sample before its HELP and TYPE");
		p = line;
		q = p;
		while (q < end && *q != '{' && *q != ' ')
			q++;
		if ((size_t)(q - p) != strlen(family) ||
		    strncmp(p, family, q - p))
			PBAD("sample outside its family");
		if (*q == '{') {
			char names[512] = " ";

			q++;
			while (*q != '}') {
				const char *ln = q;

				while (q < end && *q != '=')
					q++;
				if (q >= end || !prom_name_ok(ln, q - ln, false) ||
				    q[1] != '"')
					PBAD("bad label");
				{
					char key[80];

					snprintf(key, sizeof(key), " %.*s ",
						 (int)(q - ln), ln);
					if (strstr(names, key))
						PBAD("label twice");
					strncat(names, key + 1,
						sizeof(names) - strlen(names) - 1);
				}
				for (q += 2; q < end && *q != '"'; q++) {
					if (*q == '\\' && q[1] != '\\' &&
					    q[1] != '"' && q[1] != 'n')
						PBAD("bad escape in a label");
					if (*q == '\\')
						q++;
				}
				if (q >= end)
					PBAD("label value not closed");
				q++;
				if (*q == ',')
					q++;
				else if (*q != '}')
					PBAD("labels not separated");
			}
			q++;
		}
		if (*q != ' ')
			PBAD("no value");
		{
			char num[64], *e, key[600];
			double v;

			snprintf(num, sizeof(num), "%.*s",
				 (int)(end - q - 1), q + 1);
			v = strtod(num, &e);
			if (!*num || *e)
				PBAD("value not a float");
			if (strstr(family, "_ratio") && (v < 0 || v > 1))
				PBAD("ratio out of 0..1");
			if (!strcmp(type, "counter") && v < 0)
				PBAD("negative counter");
			snprintf(key, sizeof(key), "\n%.*s\n", (int)(q - line),
				 line);
			if (strstr(samples, key))
				PBAD("sample twice");
			if (strlen(samples) + strlen(key) >= sizeof(samples))
				PBAD("too many samples");
			strcat(samples, key + 1);
		}
		(*nr_samples)++;
	}
#undef PBAD
	if (state == 1) {
		snprintf(why, sizeof(why), "HELP of %s without TYPE", family);
		return why;
	}
	return NULL;
}

static const char *const prom_devs[] = { "gone", "a\"b", "bad", "dead",
					 "full" };

static void prom_sample_out(FILE *f, const void *arg)
{
	struct show_args *a = (struct show_args *)arg;

	show(f, a);
}

static const char *prometheus_exposition(void)
{
	struct show_args a = { .names = prom_devs, .nr = ARRAY_SIZE(prom_devs),
			       .flags = WOW_SHOW_PROMETHEUS };
	const char *bad;
	char *out, name[64], want[160];
	size_t n, i, fields = 0;

	out = capture(prom_sample_out, &a);
	bad = prom_check(out, &n);
	if (bad) {
		free(out);
		return bad;
	}
	EXPECT(a.ret == 1 && a.worst == WOW_HEALTH_FAILED);
	/* one family per field, each of "full"'s fields a sample */
	for (i = 0; i < WOW_NR_FIELDS; i++) {
		wow_prom_name(i, name, sizeof(name));
		snprintf(want, sizeof(want), "# TYPE %s %s\n", name,
			 wow_fields[i].kind == WOW_MK_COUNTER ? "counter" :
			 "gauge");
		EXPECT(strstr(out, want));
		snprintf(want, sizeof(want), "\n%s{device=\"full\"", name);
		EXPECT(strstr(out, want));
		fields++;
	}
	/*
	 * 3 devices: 4 states, 3 policies, 4 numbers of the prefix and 3
	 * healths each; a"b 3 keys; full every key (loaded_from: one sample)
	 */
	EXPECT(fields == WOW_NR_FIELDS);
	EXPECT(n == 3 * (4 + 3 + 4 + 3) + 3 + WOW_NR_FIELDS - WOW_NR_PREFIX);
	/* base units, label escapes, state sets */
	EXPECT(strstr(out, "\ndm_wow_block_size_bytes{device=\"a\\\"b\"} 4096\n"));
	EXPECT(strstr(out, "\ndm_wow_high_watermark_ratio{device=\"full\"} 0.35\n"));
	EXPECT(strstr(out, "\ndm_wow_load_bytes{device=\"full\"} 1576960\n"));
	EXPECT(strstr(out, "\ndm_wow_mean_seek_bytes{device=\"full\"} 49152000\n"));
	EXPECT(strstr(out, "\ndm_wow_age_oldest_seconds{device=\"full\"} 41\n"));
	EXPECT(strstr(out, "\ndm_wow_read_hits_total{device=\"full\"} 10\n"));
	EXPECT(strstr(out, "\ndm_wow_state{device=\"dead\",state=\"failed\"} 1\n"));
	EXPECT(strstr(out, "\ndm_wow_state{device=\"dead\",state=\"ok\"} 0\n"));
	EXPECT(strstr(out, "\ndm_wow_policy{device=\"full\",policy=\"wow\"} 1\n"));
	EXPECT(strstr(out, "\ndm_wow_loaded_from{device=\"full\",loaded_from=\"checkpoint\"} 1\n"));
	EXPECT(strstr(out, "\ndm_wow_health{device=\"dead\",health=\"failed\"} 1\n"));
	EXPECT(!strstr(out, "dm_wow_mode"));	/* unknown keys: no metric */
	free(out);
	/* no device: nothing at all */
	a.nr = 1;
	out = capture(prom_sample_out, &a);
	EXPECT_STR(out, "");
	free(out);
	return NULL;
}

/* The checker itself: each rule catches its break */
static const char *prometheus_checker_rejects(void)
{
	static const char *const bad[] = {
		"x 1\n",
		"# HELP a_total h\n# TYPE a_total gauge\na_total 1\n",
		"# HELP a h\n# TYPE a counter\na 1\n",
		"# HELP a h\n# TYPE a gauge\na{d=\"x\"} 1\na{d=\"x\"} 2\n",
		"# HELP a h\n# TYPE a gauge\nb 1\n",
		"# HELP a h\n# TYPE a gauge\na{d=\"x\\q\"} 1\n",
		"# HELP a h\n# TYPE a gauge\na{d=\"x\",d=\"y\"} 1\n",
		"# HELP a h\n# TYPE a gauge\na one\n",
		"# HELP a h\n# TYPE a gauge\na 1",
		"# HELP a_kib h\n# TYPE a_kib gauge\na_kib 1\n",
		"# HELP a_ratio h\n# TYPE a_ratio gauge\na_ratio 35\n",
		"# HELP a h\n# TYPE a gauge\na 1\n# HELP b h\n# TYPE b gauge\n"
		"b 1\n# HELP a h\n# TYPE a gauge\n",
		"# HELP a h\n",
		"# TYPE a gauge\na 1\n",
		"# HELP 1a h\n# TYPE 1a gauge\n1a 1\n",
	};
	size_t i, n;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (!prom_check(bad[i], &n)) {
			snprintf(why, sizeof(why), "accepted case %zu", i);
			return why;
		}
	EXPECT(!prom_check("# HELP a h \\\\ \\n\n# TYPE a gauge\n"
			   "a{d=\"\\\"\\\\\\n\",e=\"\"} 1.5e3\n", &n) && n == 1);
	return NULL;
}

#define T(fn)	{ #fn, fn }

static const struct {
	const char *name;
	const char *(*fn)(void);
} tests[] = {
	T(status_prefix_only),
	T(prometheus_exposition),
	T(prometheus_checker_rejects),
	T(status_states_and_policies),
	T(status_all_known_keys),
	T(status_unknown_keys_kept),
	T(table_round_trip),
	T(table_canonical_order),
	T(opts_are_the_kernels),
	T(json_escaping),
	T(json_escaping_controls),
	T(json_writer),
	T(json_status_output),
	T(text_status_output),
	T(derived_figures),
	T(occupancy_as_the_kernel),
	T(options_parse),
	T(tunable_values),
	T(tunables_sources),
	T(health_levels),
	T(rates_from_two_samples),
	T(show_json_device_vanished),
	T(show_json_keys),
	T(show_text),
	T(kmsg_matches),
	T(stable_path_best_link),
	T(plan_on_images),
	T(fields_complete),
	T(fields_unique),
	T(fields_rst_lists_every_field),
};

int main(int argc, char **argv)
{
	char name[128];
	size_t i;

	/* the fake devices' metrics, for promtool (tests/prometheus.sh) */
	if (argc == 2 && !strcmp(argv[1], "--prometheus-sample")) {
		FILE *devnull = fopen("/dev/null", "w");

		wow_show(stdout, devnull, (char *const *)prom_devs,
			 ARRAY_SIZE(prom_devs), WOW_SHOW_PROMETHEUS, fake_fetch,
			 NULL, NULL, 0, NULL);
		return 0;
	}

	for (i = 0; i < ARRAY_SIZE(tests); i++)
		report(tests[i].name, tests[i].fn());
	for (i = 0; i < ARRAY_SIZE(bad_status); i++) {
		snprintf(name, sizeof(name), "status_rejects_%s",
			 bad_status[i].name);
		report(name, status_rejects(&bad_status[i]));
	}
	for (i = 0; i < ARRAY_SIZE(bad_option); i++) {
		snprintf(name, sizeof(name), "option_rejects_%s",
			 bad_option[i].name);
		report(name, option_rejects(&bad_option[i]));
	}
	for (i = 0; i < ARRAY_SIZE(bad_combination); i++) {
		snprintf(name, sizeof(name), "options_reject_%s",
			 bad_combination[i].name);
		report(name, combination_rejects(&bad_combination[i]));
	}
	for (i = 0; i < ARRAY_SIZE(bad_table); i++) {
		snprintf(name, sizeof(name), "table_rejects_%s",
			 bad_table[i].name);
		report(name, table_rejects(&bad_table[i]));
	}
	return failed;
}
