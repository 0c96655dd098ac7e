// SPDX-License-Identifier: LGPL-2.1
/*
 * libwow: status and table parsing, field tables, output, and
 * device-mapper access for dm-wow.  See libwow.h for the map.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <libdevmapper.h>

#include "libwow.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

_Static_assert(WOW_NR_FIELDS <= 64, "wow_status.present is 64 bits");
_Static_assert(WOW_NR_OPTS <= 32, "wow_table.set is 32 bits");

static const char *const state_names[] = {
	[WOW_STATE_OK] = "ok",
	[WOW_STATE_CLEANING] = "cleaning",
	[WOW_STATE_READ_ONLY] = "read_only",
	[WOW_STATE_FAILED] = "failed",
};

static const char *const policy_names[] = {
	[WOW_POLICY_WOW] = "wow",
	[WOW_POLICY_CSCAN] = "cscan",
	[WOW_POLICY_LRW] = "lrw",
};

const char *wow_state_name(enum wow_state s)
{
	return (unsigned int)s < ARRAY_SIZE(state_names) ? state_names[s] : "?";
}

const char *wow_policy_name(enum wow_policy p)
{
	return (unsigned int)p < ARRAY_SIZE(policy_names) ? policy_names[p] : "?";
}

static int lookup(const char *const *names, size_t nr, const char *word)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (!strcmp(names[i], word))
			return i;
	return -1;
}

int wow_policy_parse(const char *word, enum wow_policy *p)
{
	int i = lookup(policy_names, ARRAY_SIZE(policy_names), word);

	if (i < 0)
		return -EINVAL;
	*p = i;
	return 0;
}

static int fail(char *err, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err, WOW_ERR_LEN, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* Strict unsigned decimal: digits only, no sign, no overflow. */
static int parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	unsigned int d;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		d = *s - '0';
		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

/* A line split into whitespace separated words, all inside buf. */
struct words {
	char *buf;
	char **w;
	size_t n;
};

static void words_free(struct words *ws)
{
	free(ws->buf);
	free(ws->w);
}

static int words_split(const char *line, struct words *ws)
{
	size_t cap = 0;
	char *save, *tok, **w;

	memset(ws, 0, sizeof(*ws));
	ws->buf = strdup(line);
	if (!ws->buf)
		return -ENOMEM;
	for (tok = strtok_r(ws->buf, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (ws->n == cap) {
			cap = cap ? 2 * cap : 16;
			w = realloc(ws->w, cap * sizeof(*w));
			if (!w) {
				words_free(ws);
				return -ENOMEM;
			}
			ws->w = w;
		}
		ws->w[ws->n++] = tok;
	}
	return 0;
}

/* ---- status fields ---- */

/* F(ENUM, member, heading, unit, description): one numeric field */
#define F(e, m, head, u, desc) \
	[WOW_F_##e] = { #m, head, u, desc, WOW_FT_U64, \
			offsetof(struct wow_status, m) }

const struct wow_field wow_fields[WOW_NR_FIELDS] = {
	[WOW_F_STATE] = { "state", "State", "",
		"ok; cleaning (cleaner mode: destaging everything, new writes "
		"go to the origin); read_only (cache device error, no new "
		"dirty data); failed (the cache can no longer be trusted)",
		WOW_FT_STATE, offsetof(struct wow_status, state) },
	[WOW_F_POLICY] = { "policy", "Policy", "",
		"destage order: wow, cscan or lrw",
		WOW_FT_POLICY, offsetof(struct wow_status, policy) },
	F(BLOCK_SIZE, block_size, "Block size", "bytes",
	  "cache block size, also the logical block size of the device"),
	F(CACHE_BLOCKS, cache_blocks, "Cache blocks", "blocks",
	  "data blocks the cache device can hold (all log segments)"),
	F(FREE_BLOCKS, free_blocks, "Free blocks", "blocks",
	  "cache blocks available for new writes"),
	F(DIRTY_BLOCKS, dirty_blocks, "Dirty blocks", "blocks",
	  "cache blocks holding data not yet destaged to the origin"),
	F(READ_HITS, read_hits, "Read hits", "bios",
	  "reads (or runs of a split read) served from the cache"),
	F(READ_MISSES, read_misses, "Read misses", "bios",
	  "reads (or runs of a split read) served from the origin"),
	F(WRITE_HITS, write_hits, "Write hits", "bios",
	  "cached writes of which a block was already cached"),
	F(WRITE_MISSES, write_misses, "Write misses", "bios",
	  "cached writes of blocks that were not cached"),
	F(WRITES_BYPASSED, writes_bypassed, "Writes bypassed", "bios",
	  "writes sent straight to the origin (sequential_cutoff, "
	  "cleaner mode)"),
	F(DESTAGE_WRITES, destage_writes, "Destage writes", "writes",
	  "origin writes issued by destage"),
	F(DESTAGE_BLOCKS, destage_blocks, "Destaged blocks", "blocks",
	  "dirty blocks written back to the origin"),
	F(MERGED_BLOCKS, merged_blocks, "Merged blocks", "blocks",
	  "destaged blocks that rode in an origin write started by a "
	  "contiguous neighbour (write-IO elision)"),
	F(COMMITS, commits, "Commits", "records",
	  "log appends completed (one record per group commit)"),
	F(FLUSHES, flushes, "Flushes", "bios",
	  "FLUSH requests received from the layer above"),
	F(RECLAIMED_SEGMENTS, reclaimed_segments, "Reclaimed segments",
	  "segments",
	  "log segments made wholly free by cleaning"),
	F(COPIED_BLOCKS, copied_blocks, "Copied blocks", "blocks",
	  "dirty blocks cleaning copied forward to the head of the log"),
	F(LOG_BLOCKS, log_blocks, "Log blocks written", "blocks",
	  "blocks the log wrote to the cache device: record headers, "
	  "user data and copies (over the user's blocks: the cache's write "
	  "amplification)"),
	F(LOAD_DROPPED, load_dropped, "Dropped at load", "records",
	  "log records the last load dropped as torn or corrupt (the tail "
	  "of a power cut; the kernel log says which)"),
	F(NEEDS_CHECK, needs_check, "Needs check", "flag",
	  "1 once the cache device failed an I/O, now or before this load "
	  "(the cache loads in cleaner mode); cleared only by format"),
	F(ORIGIN_ERRORS, origin_errors, "Origin errors", "errors",
	  "I/O errors from the origin device (data stays dirty, retried)"),
	F(CACHE_ERRORS, cache_errors, "Cache errors", "errors",
	  "I/O errors from the cache device"),
	F(SEGMENTS, segments, "Segments", "segments",
	  "log segments on the cache device (one erase block each)"),
	F(FREE_SEGMENTS, free_segments, "Free segments", "segments",
	  "log segments holding no live data, ready for writing"),
	F(LOW_WATERMARK, low_watermark, "Low watermark", "%",
	  "dirty occupancy below which destage is idle (current value)"),
	F(HIGH_WATERMARK, high_watermark, "High watermark", "%",
	  "dirty occupancy at which destage runs max_destage_ios writes "
	  "(current value, adapted by the wow policy)"),
	F(DESTAGE_INFLIGHT, destage_inflight, "Destage in flight", "writes",
	  "destage writes to the origin in flight now"),
	F(HAND, hand, "Destage hand", "write group",
	  "write group number the destage hand points at"),
	F(DIRTY_GROUPS, dirty_groups, "Dirty groups", "groups",
	  "write groups holding dirty blocks"),
	F(RECENCY_BITS, recency_bits, "Recency bits set", "groups",
	  "dirty write groups whose recency bit is set (skipped once by "
	  "the hand)"),
	F(DESTAGE_RUNS, destage_runs, "Destage runs", "runs",
	  "runs of contiguous dirty blocks destaged"),
	F(MEAN_RUN_BLOCKS, mean_run_blocks, "Mean run length", "blocks",
	  "mean length of a destaged run"),
	F(MEAN_SEEK_SECTORS, mean_seek_sectors, "Mean destage seek",
	  "sectors",
	  "mean origin distance between consecutive destage writes"),
	F(AGE_OLDEST_S, age_oldest_s, "Oldest dirty age", "s",
	  "age of the oldest log segment holding dirty data (0 when clean)"),
	F(VALID_BLOCKS, valid_blocks, "Valid blocks", "blocks",
	  "cache blocks holding a current copy, clean or dirty"),
	F(DISCARDS, discards, "Discards", "bios",
	  "discard requests received"),
	F(SWEEPS, sweeps, "Sweeps", "sweeps",
	  "times the destage hand wrapped around (cscan, wow)"),
};

#undef F

static int field_lookup(const char *id)
{
	int i;

	for (i = 0; i < WOW_NR_FIELDS; i++)
		if (!strcmp(wow_fields[i].id, id))
			return i;
	return -1;
}

bool wow_status_has(const struct wow_status *st, enum wow_field_id id)
{
	return st->present & (1ULL << id);
}

uint64_t wow_status_u64(const struct wow_status *st, enum wow_field_id id)
{
	return *(const uint64_t *)((const char *)st + wow_fields[id].offset);
}

const char *wow_status_text(const struct wow_status *st,
			    enum wow_field_id id, char *buf)
{
	switch (wow_fields[id].type) {
	case WOW_FT_STATE:
		return wow_state_name(st->state);
	case WOW_FT_POLICY:
		return wow_policy_name(st->policy);
	default:
		snprintf(buf, 24, "%" PRIu64, wow_status_u64(st, id));
		return buf;
	}
}

static int status_set(struct wow_status *st, int id, const char *word,
		      char *err)
{
	const struct wow_field *f = &wow_fields[id];
	void *p = (char *)st + f->offset;
	int i, r;

	switch (f->type) {
	case WOW_FT_STATE:
		i = lookup(state_names, ARRAY_SIZE(state_names), word);
		if (i < 0)
			return fail(err, -EINVAL, "unknown state '%s'", word);
		*(enum wow_state *)p = i;
		break;
	case WOW_FT_POLICY:
		if (wow_policy_parse(word, p))
			return fail(err, -EINVAL, "unknown policy '%s'", word);
		break;
	case WOW_FT_U64:
		r = parse_u64(word, p);
		if (r == -ERANGE)
			return fail(err, r, "%s: '%s' overflows 64 bits",
				    f->id, word);
		if (r)
			return fail(err, r, "%s: '%s' is not a number",
				    f->id, word);
		break;
	}
	st->present |= 1ULL << id;
	return 0;
}

static bool key_valid(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') ||
		      *k == '_'))
			return false;
	return true;
}

static int status_add_other(struct wow_status *st, const char *key,
			    const char *value, char *err)
{
	struct wow_kv *kv;
	size_t i;

	for (i = 0; i < st->nr_other; i++)
		if (!strcmp(st->other[i].key, key))
			return fail(err, -EINVAL, "key '%s' given twice", key);
	kv = realloc(st->other, (st->nr_other + 1) * sizeof(*kv));
	if (!kv)
		return fail(err, -ENOMEM, "out of memory");
	st->other = kv;
	kv = &st->other[st->nr_other];
	kv->key = strdup(key);
	kv->value = strdup(value);
	if (!kv->key || !kv->value) {
		free(kv->key);
		free(kv->value);
		return fail(err, -ENOMEM, "out of memory");
	}
	st->nr_other++;
	return 0;
}

static int status_parse_kv(struct wow_status *st, char *tok, char *err)
{
	char *eq = strchr(tok, '=');
	int id;

	if (!eq)
		return fail(err, -EINVAL, "'%s' is not key=value", tok);
	*eq = '\0';
	if (!key_valid(tok))
		return fail(err, -EINVAL, "bad key '%s'", tok);
	if (!eq[1])
		return fail(err, -EINVAL, "key '%s' has no value", tok);
	id = field_lookup(tok);
	if (id < 0)
		return status_add_other(st, tok, eq + 1, err);
	if (id < WOW_NR_PREFIX || wow_status_has(st, id))
		return fail(err, -EINVAL, "key '%s' given twice", tok);
	return status_set(st, id, eq + 1, err);
}

int wow_status_parse(const char *line, struct wow_status *st, char *err)
{
	struct words ws;
	size_t i;
	int r;

	memset(st, 0, sizeof(*st));
	r = words_split(line, &ws);
	if (r)
		return fail(err, r, "out of memory");
	if (ws.n < WOW_NR_PREFIX) {
		r = fail(err, -EINVAL,
			 "status has %zu fields, the prefix needs %d", ws.n,
			 WOW_NR_PREFIX);
		goto out;
	}
	for (i = 0; i < WOW_NR_PREFIX && !r; i++)
		r = status_set(st, i, ws.w[i], err);
	for (; i < ws.n && !r; i++)
		r = status_parse_kv(st, ws.w[i], err);
out:
	words_free(&ws);
	if (r)
		wow_status_free(st);
	return r;
}

void wow_status_free(struct wow_status *st)
{
	size_t i;

	for (i = 0; i < st->nr_other; i++) {
		free(st->other[i].key);
		free(st->other[i].value);
	}
	free(st->other);
	st->other = NULL;
	st->nr_other = 0;
}

/* ---- derived figures ---- */

const struct wow_derived wow_derived[] = {
	{ "cache_size_mib", "Cache size", "MiB", WOW_DV_PRODUCT,
	  WOW_F_CACHE_BLOCKS, WOW_F_BLOCK_SIZE, 1.0 / (1 << 20) },
	{ "dirty_pct", "Dirty", "%", WOW_DV_RATIO,
	  WOW_F_DIRTY_BLOCKS, WOW_F_CACHE_BLOCKS, 100 },
	{ "free_pct", "Free", "%", WOW_DV_RATIO,
	  WOW_F_FREE_BLOCKS, WOW_F_CACHE_BLOCKS, 100 },
	{ "read_hit_pct", "Read hit ratio", "%", WOW_DV_SHARE,
	  WOW_F_READ_HITS, WOW_F_READ_MISSES, 100 },
	{ "write_hit_pct", "Write hit ratio", "%", WOW_DV_SHARE,
	  WOW_F_WRITE_HITS, WOW_F_WRITE_MISSES, 100 },
	{ "blocks_per_destage_write", "Blocks per destage write", "blocks",
	  WOW_DV_RATIO, WOW_F_DESTAGE_BLOCKS, WOW_F_DESTAGE_WRITES, 1 },
};

const size_t wow_nr_derived = ARRAY_SIZE(wow_derived);

bool wow_derived_get(const struct wow_derived *d,
		     const struct wow_status *st, double *v)
{
	double a = wow_status_u64(st, d->a), b = wow_status_u64(st, d->b);

	if (!wow_status_has(st, d->a) || !wow_status_has(st, d->b))
		return false;
	if (d->op == WOW_DV_PRODUCT) {
		*v = d->scale * a * b;
		return true;
	}
	if (d->op == WOW_DV_SHARE)
		b += a;
	if (!b)
		return false;
	*v = d->scale * a / b;
	return true;
}

/* ---- table line ---- */

const struct wow_opt wow_opts[WOW_NR_OPTS] = {
	[WOW_OPT_BLOCK_SIZE] = { "block_size", "bytes", WOW_OT_U64 },
	[WOW_OPT_ERASE_BLOCK_SIZE] = { "erase_block_size", "bytes",
				       WOW_OT_U64 },
	[WOW_OPT_WRITE_GROUP_SIZE] = { "write_group_size", "bytes",
				       WOW_OT_U64 },
	[WOW_OPT_POLICY] = { "policy", "", WOW_OT_POLICY },
	[WOW_OPT_LOW_WATERMARK] = { "low_watermark", "%", WOW_OT_U64 },
	[WOW_OPT_HIGH_WATERMARK] = { "high_watermark", "%", WOW_OT_U64 },
	[WOW_OPT_MAX_DESTAGE_IOS] = { "max_destage_ios", "writes",
				      WOW_OT_U64 },
	[WOW_OPT_MAX_DESTAGE_SIZE] = { "max_destage_size", "bytes",
				       WOW_OT_U64 },
	[WOW_OPT_MAX_AGE] = { "max_age", "s", WOW_OT_U64 },
	[WOW_OPT_SEQUENTIAL_CUTOFF] = { "sequential_cutoff", "bytes",
					WOW_OT_U64 },
	[WOW_OPT_CLEANER] = { "cleaner", "", WOW_OT_FLAG },
	[WOW_OPT_FORMAT] = { "format", "", WOW_OT_FLAG },
};

static int opt_lookup(const char *name)
{
	int i;

	for (i = 0; i < WOW_NR_OPTS; i++)
		if (!strcmp(wow_opts[i].name, name))
			return i;
	return -1;
}

static int table_opt(struct wow_table *t, struct words *ws, size_t *i,
		     char *err)
{
	const char *name = ws->w[*i], *val;
	enum wow_policy p;
	int id = opt_lookup(name);

	if (id < 0)
		return fail(err, -EINVAL, "unknown option '%s'", name);
	if (t->set & (1U << id))
		return fail(err, -EINVAL, "option '%s' given twice", name);
	t->set |= 1U << id;
	(*i)++;
	if (wow_opts[id].type == WOW_OT_FLAG) {
		t->val[id] = 1;
		return 0;
	}
	if (*i >= ws->n)
		return fail(err, -EINVAL, "option '%s' needs a value", name);
	val = ws->w[(*i)++];
	if (wow_opts[id].type == WOW_OT_POLICY) {
		if (wow_policy_parse(val, &p))
			return fail(err, -EINVAL, "unknown policy '%s'", val);
		t->val[id] = p;
		return 0;
	}
	if (parse_u64(val, &t->val[id]))
		return fail(err, -EINVAL, "%s: '%s' is not a number", name,
			    val);
	return 0;
}

int wow_table_parse(const char *line, struct wow_table *t, char *err)
{
	struct words ws;
	uint64_t nr;
	size_t i;
	int r;

	memset(t, 0, sizeof(*t));
	r = words_split(line, &ws);
	if (r)
		return fail(err, r, "out of memory");
	if (ws.n < 3) {
		r = fail(err, -EINVAL,
			 "expected <origin> <cache> <#opt_args> [opts]");
		goto out;
	}
	if (parse_u64(ws.w[2], &nr) || nr != ws.n - 3) {
		r = fail(err, -EINVAL, "#opt_args is '%s' but %zu words follow",
			 ws.w[2], ws.n - 3);
		goto out;
	}
	t->origin = strdup(ws.w[0]);
	t->cache = strdup(ws.w[1]);
	if (!t->origin || !t->cache) {
		r = fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 3; i < ws.n && !r;)
		r = table_opt(t, &ws, &i, err);
out:
	words_free(&ws);
	if (r)
		wow_table_free(t);
	return r;
}

void wow_table_free(struct wow_table *t)
{
	free(t->origin);
	free(t->cache);
	t->origin = NULL;
	t->cache = NULL;
}

char *wow_table_format(const struct wow_table *t)
{
	unsigned int nr = 0;
	char *buf = NULL;
	size_t len;
	FILE *f;
	int i;

	for (i = 0; i < WOW_NR_OPTS; i++)
		if (t->set & (1U << i))
			nr += wow_opts[i].type == WOW_OT_FLAG ? 1 : 2;
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "%s %s %u", t->origin, t->cache, nr);
	for (i = 0; i < WOW_NR_OPTS; i++) {
		if (!(t->set & (1U << i)))
			continue;
		fprintf(f, " %s", wow_opts[i].name);
		if (wow_opts[i].type == WOW_OT_POLICY)
			fprintf(f, " %s", wow_policy_name(t->val[i]));
		else if (wow_opts[i].type == WOW_OT_U64)
			fprintf(f, " %" PRIu64, t->val[i]);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- output ---- */

void wow_json_string(FILE *f, const char *s)
{
	unsigned char c;

	fputc('"', f);
	for (; (c = *s); s++) {
		switch (c) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

static void row(FILE *f, const char *heading, const char *value,
		const char *unit)
{
	fprintf(f, "  %-26s %14s%s%s\n", heading, value, *unit ? " " : "",
		unit);
}

void wow_print_status_text(FILE *f, const char *name,
			   const struct wow_status *st)
{
	char buf[32];
	size_t i;
	double v;

	fprintf(f, "%s\n", name);
	for (i = 0; i < WOW_NR_FIELDS; i++)
		if (wow_status_has(st, i))
			row(f, wow_fields[i].heading,
			    wow_status_text(st, i, buf), wow_fields[i].unit);
	for (i = 0; i < wow_nr_derived; i++) {
		if (!wow_derived_get(&wow_derived[i], st, &v))
			continue;
		snprintf(buf, sizeof(buf), "%.1f", v);
		row(f, wow_derived[i].heading, buf, wow_derived[i].unit);
	}
	for (i = 0; i < st->nr_other; i++)
		row(f, st->other[i].key, st->other[i].value, "");
}

static void json_value(FILE *f, const char *word)
{
	uint64_t v;

	if (!parse_u64(word, &v))
		fprintf(f, "%" PRIu64, v);
	else
		wow_json_string(f, word);
}

static void json_key(FILE *f, const char *sep, const char *key)
{
	fputs(sep, f);
	wow_json_string(f, key);
	fputc(':', f);
}

void wow_print_status_json(FILE *f, const char *name,
			   const struct wow_status *st)
{
	const char *sep = "";
	char buf[32];
	size_t i;
	double v;

	fputc('{', f);
	json_key(f, "", "name");
	wow_json_string(f, name);
	for (i = 0; i < WOW_NR_FIELDS; i++) {
		if (!wow_status_has(st, i))
			continue;
		json_key(f, ",", wow_fields[i].id);
		if (wow_fields[i].type == WOW_FT_U64)
			fprintf(f, "%" PRIu64, wow_status_u64(st, i));
		else
			wow_json_string(f, wow_status_text(st, i, buf));
	}
	json_key(f, ",", "derived");
	fputc('{', f);
	for (i = 0; i < wow_nr_derived; i++) {
		if (!wow_derived_get(&wow_derived[i], st, &v))
			continue;
		json_key(f, sep, wow_derived[i].id);
		fprintf(f, "%.3f", v);
		sep = ",";
	}
	fputc('}', f);
	json_key(f, ",", "other");
	fputc('{', f);
	for (i = 0; i < st->nr_other; i++) {
		json_key(f, i ? "," : "", st->other[i].key);
		json_value(f, st->other[i].value);
	}
	fputs("}}", f);
}

void wow_print_table_text(FILE *f, const struct wow_table *t)
{
	char buf[24];
	int i;

	fprintf(f, "%-20s %s\n%-20s %s\n", "origin", t->origin, "cache",
		t->cache);
	for (i = 0; i < WOW_NR_OPTS; i++) {
		if (!(t->set & (1U << i)))
			continue;
		if (wow_opts[i].type == WOW_OT_FLAG) {
			fprintf(f, "%-20s on\n", wow_opts[i].name);
			continue;
		}
		if (wow_opts[i].type == WOW_OT_POLICY)
			snprintf(buf, sizeof(buf), "%s",
				 wow_policy_name(t->val[i]));
		else
			snprintf(buf, sizeof(buf), "%" PRIu64, t->val[i]);
		fprintf(f, "%-20s %s%s%s\n", wow_opts[i].name, buf,
			*wow_opts[i].unit ? " " : "", wow_opts[i].unit);
	}
}

/* "1".."6" for the positional fields, "key" for key=value; buf[12] */
static const char *position(int i, char *buf)
{
	if (i >= WOW_NR_PREFIX)
		return "key";
	snprintf(buf, 12, "%d", i + 1);
	return buf;
}

void wow_print_fields_text(FILE *f)
{
	char buf[12];
	int i;

	fprintf(f, "%-20s %-4s %-12s %s\n", "FIELD", "POS", "UNIT",
		"DESCRIPTION");
	for (i = 0; i < WOW_NR_FIELDS; i++)
		fprintf(f, "%-20s %-4s %-12s %s\n", wow_fields[i].id,
			position(i, buf), wow_fields[i].unit,
			wow_fields[i].description);
}

void wow_print_fields_json(FILE *f)
{
	int i;

	fputc('[', f);
	for (i = 0; i < WOW_NR_FIELDS; i++) {
		json_key(f, i ? ",\n{" : "{", "id");
		wow_json_string(f, wow_fields[i].id);
		json_key(f, ",", "position");
		if (i < WOW_NR_PREFIX)
			fprintf(f, "%d", i + 1);
		else
			fputs("null", f);
		json_key(f, ",", "heading");
		wow_json_string(f, wow_fields[i].heading);
		json_key(f, ",", "unit");
		wow_json_string(f, wow_fields[i].unit);
		json_key(f, ",", "description");
		wow_json_string(f, wow_fields[i].description);
		fputc('}', f);
	}
	fputs("]\n", f);
}

static void rst_cell(FILE *f, const char *lead, const char *text)
{
	fprintf(f, "   %s -%s%s\n", lead, *text ? " " : "", text);
}

void wow_print_fields_rst(FILE *f)
{
	char buf[12], id[40];
	int i;

	fputs(".. Generated by `wowctl fields --rst`; do not edit.\n\n"
	      ".. list-table:: dm-wow status fields\n"
	      "   :header-rows: 1\n"
	      "   :widths: 22 8 12 58\n\n"
	      "   * - Field\n     - Position\n     - Unit\n"
	      "     - Description\n", f);
	for (i = 0; i < WOW_NR_FIELDS; i++) {
		snprintf(id, sizeof(id), "``%s``", wow_fields[i].id);
		rst_cell(f, "*", id);
		rst_cell(f, " ", position(i, buf));
		rst_cell(f, " ", wow_fields[i].unit);
		rst_cell(f, " ", wow_fields[i].description);
	}
}

/* ---- device-mapper ---- */

static int dm_set_dev(struct dm_task *dmt, const char *dev)
{
	struct stat sb;

	if (!strncmp(dev, "/dev/mapper/", 12))
		return dm_task_set_name(dmt, dev + 12);
	if (dev[0] != '/')
		return dm_task_set_name(dmt, dev);
	if (stat(dev, &sb) || !S_ISBLK(sb.st_mode))
		return 0;
	return dm_task_set_major_minor(dmt, major(sb.st_rdev),
				       minor(sb.st_rdev), 0);
}

static struct dm_task *dm_run(int type, const char *dev, const char *msg,
			      char *err)
{
	struct dm_task *dmt = dm_task_create(type);
	int e;

	if (!dmt) {
		fail(err, -ENODEV,
		     "cannot use device-mapper (dm-mod loaded? root?)");
		return NULL;
	}
	if (dev && !dm_set_dev(dmt, dev)) {
		fail(err, -EINVAL, "%s: not a device-mapper device", dev);
		goto fail;
	}
	if (msg && (!dm_task_set_sector(dmt, 0) ||
		    !dm_task_set_message(dmt, msg))) {
		fail(err, -ENOMEM, "out of memory");
		goto fail;
	}
	if (!dm_task_run(dmt)) {
		e = dm_task_get_errno(dmt);
		if (e == ENXIO)
			fail(err, -ENODEV, "%s: no such device", dev);
		else if (msg)
			fail(err, -EIO, "%s: message '%s' rejected: %s",
			     dev, msg, strerror(e ? e : EIO));
		else
			fail(err, -EIO, "%s: device-mapper request failed: %s",
			     dev ? dev : "list", strerror(e ? e : EIO));
		goto fail;
	}
	return dmt;
fail:
	dm_task_destroy(dmt);
	return NULL;
}

int wow_dm_params(const char *dev, bool table, char **params, char *err)
{
	struct dm_task *dmt;
	struct dm_info info;
	uint64_t start, len;
	char *type, *p;
	void *next = NULL;
	int r = fail(err, -EINVAL, "%s: not a wow device", dev);

	dmt = dm_run(table ? DM_DEVICE_TABLE : DM_DEVICE_STATUS, dev, NULL,
		     err);
	if (!dmt)
		return -EIO;
	if (!dm_task_get_info(dmt, &info) || !info.exists) {
		r = fail(err, -ENODEV, "%s: no such device", dev);
		goto out;
	}
	do {
		next = dm_get_next_target(dmt, next, &start, &len, &type, &p);
		if (type && !strcmp(type, WOW_TARGET_NAME)) {
			*params = strdup(p ? p : "");
			r = *params ? 0 : fail(err, -ENOMEM, "out of memory");
			break;
		}
	} while (next);
out:
	dm_task_destroy(dmt);
	return r;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int wow_dm_list(char ***names, size_t *nr, char *err)
{
	struct dm_task *dmt = dm_run(DM_DEVICE_LIST, NULL, NULL, err);
	struct dm_names *n;
	char **v = NULL, *p;
	int r = 0;

	*names = NULL;
	*nr = 0;
	if (!dmt)
		return -EIO;
	for (n = dm_task_get_names(dmt); n && n->dev;
	     n = (void *)((char *)n + n->next)) {
		if (!wow_dm_params(n->name, true, &p, NULL)) {
			free(p);
			v = realloc(*names, (*nr + 1) * sizeof(*v));
			if (!v) {
				r = fail(err, -ENOMEM, "out of memory");
				break;
			}
			*names = v;
			v[*nr] = strdup(n->name);
			if (!v[*nr]) {
				r = fail(err, -ENOMEM, "out of memory");
				break;
			}
			(*nr)++;
		}
		if (!n->next)
			break;
	}
	dm_task_destroy(dmt);
	if (*nr)
		qsort(*names, *nr, sizeof(**names), cmp_names);
	return r;
}

int wow_dm_message(const char *dev, const char *msg, char **response,
		   char *err)
{
	struct dm_task *dmt;
	const char *resp;
	char *p;
	int r;

	*response = NULL;
	/* refuse to send wow messages to other targets */
	r = wow_dm_params(dev, false, &p, err);
	if (r)
		return r;
	free(p);
	dmt = dm_run(DM_DEVICE_TARGET_MSG, dev, msg, err);
	if (!dmt)
		return -EIO;
	resp = dm_task_get_message_response(dmt);
	if (resp && *resp)
		*response = strdup(resp);
	dm_task_destroy(dmt);
	return 0;
}
