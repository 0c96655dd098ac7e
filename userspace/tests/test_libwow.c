// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libwow's parsers, formatters and field table.  Prints one
 * "PASS: userspace/<name>" or "FAIL: userspace/<name> (<why>)" line per
 * case and exits 1 if any failed.  Needs no root and no devices.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../libwow.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static char why[512];

#define EXPECT(cond)							\
	do {								\
		if (!(cond)) {						\
			snprintf(why, sizeof(why), "line %d: %s",	\
				 __LINE__, #cond);			\
			return why;					\
		}							\
	} while (0)

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

static int failed;

static void report(const char *name, const char *fail)
{
	if (fail) {
		printf("FAIL: userspace/%s (%s)\n", name, fail);
		failed = 1;
	} else {
		printf("PASS: userspace/%s\n", name);
	}
}

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
		EXPECT(wow_status_u64(&st, i) == 1000u + i);
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

/* ---- output ---- */

static void json_str(FILE *f, const void *s)
{
	wow_json_string(f, s);
}

static const char *json_escaping(void)
{
	char *out = capture(json_str, "a\"b\\c/\n\r\t\x01\x1f\x7f z\xc3\xa9");

	EXPECT_STR(out, "\"a\\\"b\\\\c/\\n\\r\\t\\u0001\\u001f\\u007f "
		   "z\xc3\xa9\"");
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
		"\"derived\":{\"cache_size_mib\":0.781,\"dirty_pct\":25.000,"
		"\"free_pct\":75.000},\"other\":{\"n\":17,"
		"\"w\":\"a\\\"b\\\\c\"}}");
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
	EXPECT(!strncmp(out, "slow\n", 5));
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
	static const double want[] = { 1.0, 25, 0, 80, -1, 2.5 };
	struct wow_status st;
	size_t i;
	double v;

	EXPECT(wow_nr_derived == 6);
	EXPECT(!wow_status_parse("ok wow 1024 1024 0 256 read_hits=8 "
				 "read_misses=2 write_hits=0 write_misses=0 "
				 "destage_writes=4 destage_blocks=10", &st, NULL));
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
		EXPECT((f->type != WOW_FT_U64) == (i < 2));
		EXPECT(!strchr(f->id, '=') && !strchr(f->id, ' '));
	}
	/* each numeric field reads back the member it names */
	for (i = WOW_F_BLOCK_SIZE; i < WOW_NR_FIELDS; i++) {
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

#define T(fn)	{ #fn, fn }

static const struct {
	const char *name;
	const char *(*fn)(void);
} tests[] = {
	T(status_prefix_only),
	T(status_states_and_policies),
	T(status_all_known_keys),
	T(status_unknown_keys_kept),
	T(table_round_trip),
	T(table_canonical_order),
	T(json_escaping),
	T(json_status_output),
	T(text_status_output),
	T(derived_figures),
	T(fields_complete),
	T(fields_unique),
	T(fields_rst_lists_every_field),
};

int main(void)
{
	char name[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tests); i++)
		report(tests[i].name, tests[i].fn());
	for (i = 0; i < ARRAY_SIZE(bad_status); i++) {
		snprintf(name, sizeof(name), "status_rejects_%s",
			 bad_status[i].name);
		report(name, status_rejects(&bad_status[i]));
	}
	for (i = 0; i < ARRAY_SIZE(bad_table); i++) {
		snprintf(name, sizeof(name), "table_rejects_%s",
			 bad_table[i].name);
		report(name, table_rejects(&bad_table[i]));
	}
	return failed;
}
