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
#include <fcntl.h>
#include <unistd.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <libdevmapper.h>

#include "json.h"
#include "kargs.h"
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
	const char *msg;
	uint64_t v;

	if (wow_kargs_parse(WOW_OPT_POLICY, word, &v, &msg))
		return -EINVAL;
	*p = v;
	return 0;
}

/* Write the message to @err (when given), return @ret. */
int wow_fail(char *err, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err, WOW_ERR_LEN, fmt, ap);
		va_end(ap);
	}
	return ret;
}

#define fail wow_fail

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

/*
 * G(ENUM, member, heading, unit, description): one numeric field that goes
 * up and down (a Prometheus gauge); C(...): one that only counts up, until
 * clear_stats or a reload (a counter).
 */
#define F(e, m, head, u, desc, k) \
	[WOW_F_##e] = { #m, head, u, desc, WOW_FT_U64, \
			offsetof(struct wow_status, m), k }
#define G(e, m, head, u, desc) F(e, m, head, u, desc, WOW_MK_GAUGE)
#define C(e, m, head, u, desc) F(e, m, head, u, desc, WOW_MK_COUNTER)

const struct wow_field wow_fields[WOW_NR_FIELDS] = {
	[WOW_F_STATE] = { "state", "State", "",
		"ok; cleaning (cleaner mode: destaging everything, new writes "
		"go to the origin); read_only (cache device error, no new "
		"dirty data); failed (the cache can no longer be trusted)",
		WOW_FT_STATE, offsetof(struct wow_status, state),
		WOW_MK_STATESET },
	[WOW_F_POLICY] = { "policy", "Policy", "",
		"destage order: wow, cscan or lrw",
		WOW_FT_POLICY, offsetof(struct wow_status, policy),
		WOW_MK_STATESET },
	G(BLOCK_SIZE, block_size, "Block size", "bytes",
	  "cache block size, also the logical block size of the device"),
	G(CACHE_BLOCKS, cache_blocks, "Cache blocks", "blocks",
	  "data blocks the cache device can hold (all log segments)"),
	G(FREE_BLOCKS, free_blocks, "Free blocks", "blocks",
	  "cache blocks available for new writes"),
	G(DIRTY_BLOCKS, dirty_blocks, "Dirty blocks", "blocks",
	  "cache blocks holding data not yet destaged to the origin"),
	C(READ_HITS, read_hits, "Read hits", "bios",
	  "reads (or runs of a split read) served from the cache"),
	C(READ_MISSES, read_misses, "Read misses", "bios",
	  "reads (or runs of a split read) served from the origin"),
	C(WRITE_HITS, write_hits, "Write hits", "bios",
	  "cached writes of which a block was already cached"),
	C(WRITE_MISSES, write_misses, "Write misses", "bios",
	  "cached writes of blocks that were not cached"),
	C(WRITES_BYPASSED, writes_bypassed, "Writes bypassed", "bios",
	  "writes sent straight to the origin (sequential_cutoff, "
	  "cleaner mode)"),
	C(DESTAGE_WRITES, destage_writes, "Destage writes", "writes",
	  "origin writes issued by destage"),
	C(DESTAGE_BLOCKS, destage_blocks, "Destaged blocks", "blocks",
	  "dirty blocks written back to the origin"),
	C(MERGED_BLOCKS, merged_blocks, "Merged blocks", "blocks",
	  "destaged blocks that rode in an origin write started by a "
	  "contiguous neighbour (write-IO elision)"),
	C(COMMITS, commits, "Commits", "records",
	  "log appends completed (one record per group commit)"),
	C(FLUSHES, flushes, "Flushes", "bios",
	  "FLUSH requests received from the layer above"),
	C(RECLAIMED_SEGMENTS, reclaimed_segments, "Reclaimed segments",
	  "segments",
	  "log segments made wholly free by cleaning"),
	C(COPIED_BLOCKS, copied_blocks, "Copied blocks", "blocks",
	  "dirty blocks cleaning copied forward to the head of the log"),
	C(LOG_BLOCKS, log_blocks, "Log blocks written", "blocks",
	  "blocks the log wrote to the cache device: record headers, "
	  "user data and copies (over the user's blocks: the cache's write "
	  "amplification)"),
	G(LOAD_DROPPED, load_dropped, "Dropped at load", "records",
	  "log records the last load dropped as torn or corrupt (the tail "
	  "of a power cut; the kernel log says which)"),
	G(NEEDS_CHECK, needs_check, "Needs check", "flag",
	  "1 once the cache device failed an I/O, now or before this load "
	  "(the cache loads in cleaner mode); cleared only by format"),
	C(ORIGIN_ERRORS, origin_errors, "Origin errors", "errors",
	  "I/O errors from the origin device (data stays dirty, retried)"),
	C(CACHE_ERRORS, cache_errors, "Cache errors", "errors",
	  "I/O errors from the cache device"),
	G(SEGMENTS, segments, "Segments", "segments",
	  "log segments on the cache device (one erase block each)"),
	G(FREE_SEGMENTS, free_segments, "Free segments", "segments",
	  "log segments holding no live data, ready for writing"),
	G(LOW_WATERMARK, low_watermark, "Low watermark", "%",
	  "dirty occupancy below which destage is idle (current value)"),
	G(HIGH_WATERMARK, high_watermark, "High watermark", "%",
	  "dirty occupancy at which destage runs max_destage_ios writes "
	  "(current value, adapted by the wow policy)"),
	G(DESTAGE_INFLIGHT, destage_inflight, "Destage in flight", "writes",
	  "destage writes to the origin in flight now"),
	G(HAND, hand, "Destage hand", "write group",
	  "write group number the destage hand points at"),
	G(DIRTY_GROUPS, dirty_groups, "Dirty groups", "groups",
	  "write groups holding dirty blocks"),
	G(RECENCY_BITS, recency_bits, "Recency bits set", "groups",
	  "dirty write groups whose recency bit is set (skipped once by "
	  "the hand)"),
	C(DESTAGE_RUNS, destage_runs, "Destage runs", "runs",
	  "runs of contiguous dirty blocks destaged"),
	G(MEAN_RUN_BLOCKS, mean_run_blocks, "Mean run length", "blocks",
	  "mean length of a destaged run"),
	G(MEAN_SEEK_SECTORS, mean_seek_sectors, "Mean destage seek",
	  "sectors",
	  "mean origin distance between consecutive destage writes"),
	G(AGE_OLDEST_S, age_oldest_s, "Oldest dirty age", "s",
	  "age of the oldest log segment holding dirty data (0 when clean)"),
	G(VALID_BLOCKS, valid_blocks, "Valid blocks", "blocks",
	  "cache blocks holding a current copy, clean or dirty"),
	C(DISCARDS, discards, "Discards", "bios",
	  "discard requests received"),
	C(SWEEPS, sweeps, "Sweeps", "sweeps",
	  "times the destage hand wrapped around (cscan, wow)"),
	G(LOAD_KIB, load_kib, "Metadata read at load", "KiB",
	  "metadata the last load read from the cache device (checkpoint "
	  "or log)"),
	[WOW_F_LOADED_FROM] = { "loaded_from", "Loaded from", "",
		"checkpoint (a checkpoint and the log written since), log (the "
		"whole log scanned) or format (the cache was blank)",
		WOW_FT_WORD, offsetof(struct wow_status, loaded_from),
		WOW_MK_INFO },
	C(BAD_BLOCKS, bad_blocks, "Bad blocks", "blocks",
	  "cached blocks whose data did not match their crc32c when destage "
	  "or cleaning read them: not destaged, reads of them fail until "
	  "they are written again (the kernel log names them); sets "
	  "needs_check"),
};

#undef C
#undef G
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
	case WOW_FT_WORD:
		return (const char *)st + wow_fields[id].offset;
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
	case WOW_FT_WORD:
		if (strlen(word) >= WOW_WORD_LEN)
			return fail(err, -EINVAL, "%s: '%s' is too long",
				    f->id, word);
		strcpy(p, word);
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

/* dm-wow.h: wow_reclaim_threshold, WOW_RESERVE_SEGMENTS */
#define KERNEL_RESERVE_SEGMENTS	2

bool wow_occupancy_pct(const struct wow_status *st, double *pct)
{
	uint64_t segs = st->segments, keep, usable, bps;

	if (!wow_status_has(st, WOW_F_SEGMENTS) || !segs ||
	    !wow_status_has(st, WOW_F_DIRTY_BLOCKS))
		return false;
	bps = st->cache_blocks / segs;
	keep = KERNEL_RESERVE_SEGMENTS + 2 + segs / 32;
	usable = segs - (keep < segs - 1 ? keep : segs - 1);
	if (!bps)
		return false;
	/* basis points, rounded down and capped as the kernel does */
	*pct = (double)(st->dirty_blocks * 10000 / (usable * bps));
	if (*pct > 10000)
		*pct = 10000;
	*pct /= 100;
	return true;
}

static bool mean_destage_write_kib(const struct wow_status *st, double *v)
{
	if (!wow_status_has(st, WOW_F_DESTAGE_WRITES) ||
	    !wow_status_has(st, WOW_F_DESTAGE_BLOCKS) || !st->destage_writes)
		return false;
	*v = (double)st->destage_blocks * st->block_size /
	     st->destage_writes / 1024;
	return true;
}

static bool mean_seek_mib(const struct wow_status *st, double *v)
{
	if (!wow_status_has(st, WOW_F_MEAN_SEEK_SECTORS))
		return false;
	*v = st->mean_seek_sectors / 2048.0;
	return true;
}

const struct wow_derived wow_derived[] = {
	{ "cache_size_mib", "Cache size", "MiB", WOW_DV_PRODUCT,
	  WOW_F_CACHE_BLOCKS, WOW_F_BLOCK_SIZE, 1.0 / (1 << 20), NULL,
	  "cache_blocks x block_size" },
	{ "dirty_pct", "Dirty", "%", WOW_DV_RATIO,
	  WOW_F_DIRTY_BLOCKS, WOW_F_CACHE_BLOCKS, 100, NULL,
	  "dirty_blocks over cache_blocks" },
	{ "free_pct", "Free", "%", WOW_DV_RATIO,
	  WOW_F_FREE_BLOCKS, WOW_F_CACHE_BLOCKS, 100, NULL,
	  "free_blocks over cache_blocks" },
	{ "read_hit_pct", "Read hit ratio", "%", WOW_DV_SHARE,
	  WOW_F_READ_HITS, WOW_F_READ_MISSES, 100, NULL,
	  "read_hits over read_hits + read_misses" },
	{ "write_hit_pct", "Write hit ratio", "%", WOW_DV_SHARE,
	  WOW_F_WRITE_HITS, WOW_F_WRITE_MISSES, 100, NULL,
	  "write_hits over write_hits + write_misses" },
	{ "blocks_per_destage_write", "Blocks per destage write", "blocks",
	  WOW_DV_RATIO, WOW_F_DESTAGE_BLOCKS, WOW_F_DESTAGE_WRITES, 1, NULL,
	  "destage_blocks over destage_writes: the mean merged write" },
	{ "dirty_mib", "Dirty data", "MiB", WOW_DV_PRODUCT,
	  WOW_F_DIRTY_BLOCKS, WOW_F_BLOCK_SIZE, 1.0 / (1 << 20), NULL,
	  "dirty_blocks x block_size" },
	{ "occupancy_pct", "Dirty occupancy (destage)", "%", WOW_DV_FN,
	  0, 0, 1, wow_occupancy_pct,
	  "what the watermarks are compared with: dirty_blocks over the "
	  "blocks of the segments the log may fill before cleaning starts "
	  "(segments less 4 and 1/32 of them)" },
	{ "mean_destage_write_kib", "Mean merged destage write", "KiB",
	  WOW_DV_FN, 0, 0, 1, mean_destage_write_kib,
	  "destage_blocks x block_size over destage_writes" },
	{ "mean_seek_mib", "Mean destage seek", "MiB", WOW_DV_FN,
	  0, 0, 1, mean_seek_mib, "mean_seek_sectors in MiB" },
};

const size_t wow_nr_derived = ARRAY_SIZE(wow_derived);

bool wow_derived_get(const struct wow_derived *d,
		     const struct wow_status *st, double *v)
{
	double a = wow_status_u64(st, d->a), b = wow_status_u64(st, d->b);

	if (d->op == WOW_DV_FN)
		return d->fn(st, v);
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

/* ---- effective tunables, health, rates ---- */

static const char *const source_names[] = {
	[WOW_SRC_DEFAULT] = "default",
	[WOW_SRC_TABLE] = "table",
	[WOW_SRC_STATUS] = "status",
};

const char *wow_source_name(enum wow_source s)
{
	return (unsigned int)s < ARRAY_SIZE(source_names) ?
	       source_names[s] : "?";
}

void wow_tunables(const struct wow_status *st, const struct wow_table *t,
		  struct wow_tunable out[WOW_NR_OPTS])
{
	size_t k;
	int i;

	for (i = 0; i < WOW_NR_OPTS; i++) {
		out[i].value = wow_opt_default(i);
		out[i].source = WOW_SRC_DEFAULT;
		if (t && (t->set & (1U << i))) {
			out[i].value = t->val[i];
			out[i].source = WOW_SRC_TABLE;
		}
		for (k = 0; k < st->nr_other; k++) {
			uint64_t v;

			/*
			 * The status says what is in effect; it is the
			 * source only where it differs from the table or the
			 * default (a set of an option the table did not name)
			 */
			if (strcmp(st->other[k].key, wow_opts[i].name) ||
			    parse_u64(st->other[k].value, &v) ||
			    v == out[i].value)
				continue;
			out[i].value = v;
			out[i].source = WOW_SRC_STATUS;
		}
	}
	/* one watermark named alone: the other 10 points away */
	if (out[WOW_OPT_HIGH_WATERMARK].source == WOW_SRC_TABLE &&
	    out[WOW_OPT_LOW_WATERMARK].source == WOW_SRC_DEFAULT) {
		uint64_t h = out[WOW_OPT_HIGH_WATERMARK].value;

		out[WOW_OPT_LOW_WATERMARK].value = h > 10 ? h - 10 : 0;
		out[WOW_OPT_LOW_WATERMARK].source = WOW_SRC_TABLE;
	}
	if (out[WOW_OPT_LOW_WATERMARK].source == WOW_SRC_TABLE &&
	    out[WOW_OPT_HIGH_WATERMARK].source == WOW_SRC_DEFAULT) {
		uint64_t l = out[WOW_OPT_LOW_WATERMARK].value;

		out[WOW_OPT_HIGH_WATERMARK].value = l + 10 > 100 ? 100 : l + 10;
		out[WOW_OPT_HIGH_WATERMARK].source = WOW_SRC_TABLE;
	}
	if (wow_status_has(st, WOW_F_BLOCK_SIZE)) {
		out[WOW_OPT_BLOCK_SIZE].value = st->block_size;
		out[WOW_OPT_BLOCK_SIZE].source = WOW_SRC_STATUS;
	}
	if (wow_status_has(st, WOW_F_POLICY)) {
		out[WOW_OPT_POLICY].value = st->policy;
		out[WOW_OPT_POLICY].source = WOW_SRC_STATUS;
	}
	if (wow_status_has(st, WOW_F_LOW_WATERMARK)) {
		out[WOW_OPT_LOW_WATERMARK].value = st->low_watermark;
		out[WOW_OPT_LOW_WATERMARK].source = WOW_SRC_STATUS;
	}
	if (wow_status_has(st, WOW_F_HIGH_WATERMARK)) {
		out[WOW_OPT_HIGH_WATERMARK].value = st->high_watermark;
		out[WOW_OPT_HIGH_WATERMARK].source = WOW_SRC_STATUS;
	}
	if (wow_status_has(st, WOW_F_STATE) &&
	    (st->state == WOW_STATE_OK || st->state == WOW_STATE_CLEANING)) {
		out[WOW_OPT_CLEANER].value = st->state == WOW_STATE_CLEANING;
		out[WOW_OPT_CLEANER].source = WOW_SRC_STATUS;
	}
}

static const char *const health_names[] = {
	[WOW_HEALTH_OK] = "ok",
	[WOW_HEALTH_DEGRADED] = "degraded",
	[WOW_HEALTH_FAILED] = "failed",
};

const char *wow_health_name(enum wow_health_level h)
{
	return (unsigned int)h < ARRAY_SIZE(health_names) ?
	       health_names[h] : "?";
}

enum wow_health_level wow_health_of(const struct wow_status *st, char *why)
{
	if (st->state == WOW_STATE_FAILED) {
		fail(why, 0, "state failed: the cache can no longer be trusted");
		return WOW_HEALTH_FAILED;
	}
	if (st->state == WOW_STATE_READ_ONLY) {
		fail(why, 0, "state read_only: the cache device failed a write");
		return WOW_HEALTH_DEGRADED;
	}
	if (wow_status_has(st, WOW_F_NEEDS_CHECK) && st->needs_check) {
		fail(why, 0, "needs_check: the cache device failed an I/O "
		     "(the kernel log says when); check or replace it");
		return WOW_HEALTH_DEGRADED;
	}
	fail(why, 0, "%s", "");
	return WOW_HEALTH_OK;
}

/* (cur - prev) / seconds of one counter (0 when not reported); false
 * when it went back */
static bool per_s(const struct wow_status *prev, const struct wow_status *cur,
		  enum wow_field_id id, double seconds, double *v)
{
	uint64_t a = wow_status_u64(prev, id), b = wow_status_u64(cur, id);

	*v = 0;
	if (!wow_status_has(prev, id) || !wow_status_has(cur, id))
		return true;	/* not reported: 0 */
	if (b < a)
		return false;
	*v = (b - a) / seconds;
	return true;
}

bool wow_rates_get(const struct wow_status *prev, const struct wow_status *cur,
		   double seconds, struct wow_rates *r)
{
	double mib = cur->block_size / 1048576.0;
	bool ok = true;

	memset(r, 0, sizeof(*r));
	if (!(seconds > 0) || prev->block_size != cur->block_size)
		return false;
	r->seconds = seconds;
	ok &= per_s(prev, cur, WOW_F_DESTAGE_BLOCKS, seconds, &r->destage_mib_s);
	ok &= per_s(prev, cur, WOW_F_DESTAGE_WRITES, seconds,
		    &r->destage_writes_s);
	ok &= per_s(prev, cur, WOW_F_LOG_BLOCKS, seconds, &r->log_mib_s);
	ok &= per_s(prev, cur, WOW_F_READ_HITS, seconds, &r->read_hits_s);
	ok &= per_s(prev, cur, WOW_F_READ_MISSES, seconds, &r->read_misses_s);
	ok &= per_s(prev, cur, WOW_F_WRITE_HITS, seconds, &r->write_hits_s);
	ok &= per_s(prev, cur, WOW_F_WRITE_MISSES, seconds,
		    &r->write_misses_s);
	r->destage_mib_s *= mib;
	r->log_mib_s *= mib;
	r->dirty_blocks_s = ((double)cur->dirty_blocks -
			     (double)prev->dirty_blocks) / seconds;
	return ok;
}

/* ---- table line ---- */

/* O(ENUM, name, unit, type, bytes) */
#define O(e, n, u, ty, by) [WOW_OPT_##e] = { n, u, WOW_OT_##ty, by }

const struct wow_opt_info wow_opts[WOW_NR_OPTS] = {
	O(BLOCK_SIZE, "block_size", "bytes", U64, true),
	O(ERASE_BLOCK_SIZE, "erase_block_size", "bytes", U64, true),
	O(WRITE_GROUP_SIZE, "write_group_size", "bytes", U64, true),
	O(POLICY, "policy", "", POLICY, false),
	O(LOW_WATERMARK, "low_watermark", "%", U64, false),
	O(HIGH_WATERMARK, "high_watermark", "%", U64, false),
	O(MAX_DESTAGE_IOS, "max_destage_ios", "writes", U64, false),
	O(MAX_DESTAGE_SIZE, "max_destage_size", "bytes", U64, true),
	O(MAX_AGE, "max_age", "s", U64, false),
	O(SEQUENTIAL_CUTOFF, "sequential_cutoff", "bytes", U64, true),
	O(CLEANER, "cleaner", "", FLAG, false),
	O(FORMAT, "format", "", FLAG, false),
};

#undef O

int wow_opt_lookup(const char *name)
{
	return wow_kargs_find(name);
}

uint64_t wow_opt_default(int id)
{
	return wow_kargs_default(id);
}

int wow_parse_size(const char *s, uint64_t *v)
{
	static const char *const sfx[] = { "", "K", "M", "G", "T" };
	const char *end = s;
	char num[24];
	size_t k, n;

	if (!s)
		return -EINVAL;
	while (*end >= '0' && *end <= '9')
		end++;
	n = end - s;
	if (!n || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	if (parse_u64(num, v))
		return -EINVAL;
	for (k = 0; k < ARRAY_SIZE(sfx); k++) {
		size_t l = strlen(sfx[k]);

		if (strncasecmp(end, sfx[k], l))
			continue;
		if (end[l] && strcasecmp(end + l, "iB") &&
		    (!l || strcasecmp(end + l, "B")))
			continue;
		if (k && *v > (UINT64_MAX >> (10 * k)))
			return -EINVAL;
		*v <<= 10 * k;
		return 0;
	}
	return -EINVAL;
}

/* A value of option @id: the kernel's check of it (dm-wow-args.c). */
static int opt_value(int id, const char *val, uint64_t *v, char *err)
{
	const struct wow_opt_info *o = &wow_opts[id];
	const char *msg;
	char num[24];
	int r;

	if (o->type == WOW_OT_POLICY) {
		if (wow_kargs_parse(id, val, v, &msg))
			return fail(err, -EINVAL, "%s (not '%s')", msg, val);
		return 0;
	}
	r = o->bytes ? wow_parse_size(val, v) : parse_u64(val, v);
	if (r)
		return fail(err, -EINVAL, "%s: '%s' is not a %s", o->name, val,
			    o->bytes ? "size (bytes, or with a K, M, G suffix)" :
			    "decimal number");
	snprintf(num, sizeof(num), "%" PRIu64, *v);
	if (wow_kargs_parse(id, num, v, &msg))
		return fail(err, -EINVAL, "%s (not %s)", msg, val);
	return 0;
}

int wow_table_add_option(struct wow_table *t, const char *kv, char *err)
{
	const char *eq = strchr(kv, '=');
	size_t n = eq ? (size_t)(eq - kv) : strlen(kv);
	char name[32];
	int id = -1;

	if (n < sizeof(name)) {
		memcpy(name, kv, n);
		name[n] = '\0';
		id = wow_opt_lookup(name);
	}
	if (id < 0)
		return fail(err, -EINVAL, "unknown option '%.*s' (options: "
			    "block_size, erase_block_size, write_group_size, "
			    "policy, low_watermark, high_watermark, "
			    "max_destage_ios, max_destage_size, max_age, "
			    "sequential_cutoff, cleaner, format)", (int)n, kv);
	if (t->set & (1U << id))
		return fail(err, -EINVAL, "option '%s' given twice", name);
	if (wow_opts[id].type == WOW_OT_FLAG) {
		if (eq)
			return fail(err, -EINVAL, "option '%s' takes no value",
				    name);
		t->val[id] = 1;
	} else if (!eq || !eq[1]) {
		return fail(err, -EINVAL, "option '%s' needs a value: %s=VALUE",
			    name, name);
	} else if (opt_value(id, eq + 1, &t->val[id], err)) {
		return -EINVAL;
	}
	t->set |= 1U << id;
	return 0;
}

int wow_table_check(const struct wow_table *t, uint64_t eff[WOW_NR_OPTS],
		    char *err)
{
	const char *msg;

	if (wow_kargs_check(t->set, t->val, eff, &msg))
		return fail(err, -EINVAL, "%s", msg);
	return 0;
}

int wow_tunable_value(const char *name, const char *value, char *out,
		      char *err)
{
	int id = wow_opt_lookup(name);
	uint64_t v;
	int r;

	if (id < 0 || !wow_kargs_runtime(id))
		return fail(err, -EINVAL, "'%s' is not a runtime tunable "
			    "(low_watermark, high_watermark, max_destage_ios, "
			    "max_destage_size, max_age, sequential_cutoff)",
			    name);
	r = wow_opts[id].bytes ? wow_parse_size(value, &v) :
				 parse_u64(value, &v);
	if (r)
		return fail(err, -EINVAL, "%s: '%s' is not a %s", name, value,
			    wow_opts[id].bytes ?
			    "size (bytes, or with a K, M, G suffix)" :
			    "decimal number");
	snprintf(out, 24, "%" PRIu64, v);
	return 0;
}

static int table_opt(struct wow_table *t, struct words *ws, size_t *i,
		     char *err)
{
	const char *name = ws->w[*i], *val;
	enum wow_policy p;
	int id = wow_opt_lookup(name);

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

static void row(FILE *f, const char *heading, const char *value,
		const char *unit)
{
	fprintf(f, "  %-26s %14s%s%s\n", heading, value, *unit ? " " : "",
		unit);
}

/* The value of a tunable as a word: policy name, on/off, a number. */
static const char *tunable_text(int id, uint64_t v, char *buf)
{
	if (wow_opts[id].type == WOW_OT_POLICY)
		return wow_policy_name(v);
	if (wow_opts[id].type == WOW_OT_FLAG)
		return v ? "on" : "off";
	snprintf(buf, 24, "%" PRIu64, v);
	return buf;
}

/* The rates of struct wow_rates: id, heading, unit, member */
static const struct {
	const char *id, *heading, *unit;
	size_t offset;
} rate_rows[] = {
#define R(m, head, u) { #m, head, u, offsetof(struct wow_rates, m) }
	R(destage_mib_s, "Destage", "MiB/s"),
	R(destage_writes_s, "Destage writes", "writes/s"),
	R(dirty_blocks_s, "Dirty blocks change", "blocks/s"),
	R(log_mib_s, "Cache device writes", "MiB/s"),
	R(read_hits_s, "Read hits", "bios/s"),
	R(read_misses_s, "Read misses", "bios/s"),
	R(write_hits_s, "Write hits", "bios/s"),
	R(write_misses_s, "Write misses", "bios/s"),
#undef R
};

static double rate_of(const struct wow_rates *r, size_t i)
{
	return *(const double *)((const char *)r + rate_rows[i].offset);
}

void wow_print_report_text(FILE *f, const struct wow_report *r)
{
	const struct wow_status *st = r->st;
	struct wow_tunable tun[WOW_NR_OPTS];
	char buf[64], why[WOW_ERR_LEN];
	enum wow_health_level h = wow_health_of(st, why);
	size_t i;
	double v;

	fprintf(f, "%s: %s%s%s\n", r->name, wow_health_name(h), *why ? ": " : "",
		why);
	if (r->table) {
		char *o = wow_dev_describe(r->table->origin);
		char *c = wow_dev_describe(r->table->cache);

		fprintf(f, "  %-26s %s\n  %-26s %s\n", "Origin",
			o ? o : r->table->origin, "Cache",
			c ? c : r->table->cache);
		free(o);
		free(c);
	}
	for (i = 0; i < WOW_NR_FIELDS; i++)
		if (wow_status_has(st, i))
			row(f, wow_fields[i].heading,
			    wow_status_text(st, i, buf), wow_fields[i].unit);
	for (i = 0; i < st->nr_other; i++)
		row(f, st->other[i].key, st->other[i].value, "");
	fputs(" Derived\n", f);
	for (i = 0; i < wow_nr_derived; i++) {
		if (!wow_derived_get(&wow_derived[i], st, &v))
			continue;
		snprintf(buf, sizeof(buf), "%.1f", v);
		row(f, wow_derived[i].heading, buf, wow_derived[i].unit);
	}
	if (r->rates) {
		fprintf(f, " Rates (over the last %.1f s)\n", r->rates->seconds);
		for (i = 0; i < ARRAY_SIZE(rate_rows); i++) {
			snprintf(buf, sizeof(buf), "%.1f", rate_of(r->rates, i));
			row(f, rate_rows[i].heading, buf, rate_rows[i].unit);
		}
	}
	fputs(" Tunables (where the value comes from)\n", f);
	wow_tunables(st, r->table, tun);
	for (i = 0; i < WOW_NR_OPTS; i++) {
		char unit[48];

		if (i == WOW_OPT_FORMAT)
			continue;
		snprintf(unit, sizeof(unit), "%s%s(%s)", wow_opts[i].unit,
			 *wow_opts[i].unit ? " " : "",
			 wow_source_name(tun[i].source));
		row(f, wow_opts[i].name, tunable_text(i, tun[i].value, buf),
		    unit);
	}
}

/* A status word: a number if it is one, else a string */
static void json_word(struct json *j, const char *word)
{
	uint64_t v;

	if (!parse_u64(word, &v))
		json_u64(j, v);
	else
		json_str(j, word);
}

void wow_print_report_json(FILE *f, const struct wow_report *r)
{
	const struct wow_status *st = r->st;
	struct wow_tunable tun[WOW_NR_OPTS];
	char buf[32], why[WOW_ERR_LEN];
	enum wow_health_level h = wow_health_of(st, why);
	struct json j;
	size_t i;
	double v;

	json_init(&j, f, false);
	json_open(&j, '{', -1);
	json_key(&j, "name");
	json_str(&j, r->name);
	for (i = 0; i < WOW_NR_FIELDS; i++) {
		if (!wow_status_has(st, i))
			continue;
		json_key(&j, wow_fields[i].id);
		if (wow_fields[i].type == WOW_FT_U64)
			json_u64(&j, wow_status_u64(st, i));
		else
			json_str(&j, wow_status_text(st, i, buf));
	}
	json_key(&j, "health");
	json_str(&j, wow_health_name(h));
	json_key(&j, "health_reason");
	json_str(&j, why);
	json_key(&j, "derived");
	json_open(&j, '{', -1);
	for (i = 0; i < wow_nr_derived; i++) {
		if (!wow_derived_get(&wow_derived[i], st, &v))
			continue;
		json_key(&j, wow_derived[i].id);
		json_double(&j, v);
	}
	json_close(&j);
	json_key(&j, "rates");
	if (r->rates) {
		json_open(&j, '{', -1);
		json_key(&j, "seconds");
		json_double(&j, r->rates->seconds);
		for (i = 0; i < ARRAY_SIZE(rate_rows); i++) {
			json_key(&j, rate_rows[i].id);
			json_double(&j, rate_of(r->rates, i));
		}
		json_close(&j);
	} else {
		json_null(&j);
	}
	json_key(&j, "tunables");
	wow_tunables(st, r->table, tun);
	json_open(&j, '{', -1);
	for (i = 0; i < WOW_NR_OPTS; i++) {
		if (i == WOW_OPT_FORMAT)
			continue;
		json_key(&j, wow_opts[i].name);
		json_open(&j, '{', -1);
		json_key(&j, "value");
		if (wow_opts[i].type == WOW_OT_POLICY)
			json_str(&j, wow_policy_name(tun[i].value));
		else if (wow_opts[i].type == WOW_OT_FLAG)
			json_bool(&j, tun[i].value);
		else
			json_u64(&j, tun[i].value);
		json_key(&j, "unit");
		json_str(&j, wow_opts[i].unit);
		json_key(&j, "source");
		json_str(&j, wow_source_name(tun[i].source));
		json_close(&j);
	}
	json_close(&j);
	json_key(&j, "table");
	if (r->table) {
		char *line = wow_table_format(r->table);

		json_open(&j, '{', -1);
		json_key(&j, "origin");
		json_str(&j, r->table->origin);
		json_key(&j, "cache");
		json_str(&j, r->table->cache);
		json_key(&j, "params");
		json_str(&j, line);	/* null when out of memory */
		free(line);
		json_close(&j);
	} else {
		json_null(&j);
	}
	json_key(&j, "other");
	json_open(&j, '{', -1);
	for (i = 0; i < st->nr_other; i++) {
		json_key(&j, st->other[i].key);
		json_word(&j, st->other[i].value);
	}
	json_close(&j);
	json_close(&j);
}

void wow_print_status_text(FILE *f, const char *name,
			   const struct wow_status *st)
{
	struct wow_report r = { .name = name, .st = st };

	wow_print_report_text(f, &r);
}

void wow_print_status_json(FILE *f, const char *name,
			   const struct wow_status *st)
{
	struct wow_report r = { .name = name, .st = st };

	wow_print_report_json(f, &r);
}

/* ---- Prometheus text exposition (wowctl status --prometheus) ---- */

/*
 * A field's unit in the status line, and the base unit Prometheus names
 * want: the suffix the metric gets, the factor to it, and the suffix of
 * the field id (if any) that the base unit's suffix replaces.
 */
static const struct {
	const char *unit, *suffix, *id_suffix;
	uint64_t mul, div;
} prom_units[] = {
	{ "bytes", "_bytes", "", 1, 1 },
	{ "KiB", "_bytes", "_kib", 1024, 1 },
	{ "sectors", "_bytes", "_sectors", 512, 1 },
	{ "s", "_seconds", "_s", 1, 1 },
	{ "%", "_ratio", "", 1, 100 },
};

static int prom_unit(const struct wow_field *fl)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(prom_units); i++)
		if (!strcmp(fl->unit, prom_units[i].unit))
			return i;
	return -1;
}

/* Ids that would read as a unit (promtool: "bits" is no base unit) */
static const struct {
	enum wow_field_id id;
	const char *name;
} prom_renamed[] = {
	{ WOW_F_RECENCY_BITS, "recency_groups" },
};

void wow_prom_name(enum wow_field_id id, char *buf, size_t len)
{
	const struct wow_field *fl = &wow_fields[id];
	const char *base = fl->id;
	int u = prom_unit(fl);
	size_t i, n, sl = u < 0 ? 0 : strlen(prom_units[u].id_suffix);

	for (i = 0; i < ARRAY_SIZE(prom_renamed); i++)
		if (prom_renamed[i].id == id)
			base = prom_renamed[i].name;
	n = strlen(base);
	if (sl && n > sl && !strcmp(base + n - sl, prom_units[u].id_suffix))
		n -= sl;
	snprintf(buf, len, "dm_wow_%.*s%s%s", (int)n, base,
		 u < 0 ? "" : prom_units[u].suffix,
		 fl->kind == WOW_MK_COUNTER ? "_total" : "");
}

/* HELP text: backslash and newline escaped */
static void prom_help(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

/* A label value: backslash, double quote and newline escaped */
static void prom_label(FILE *f, const char *name, const char *value)
{
	fprintf(f, "%s=\"", name);
	for (; *value; value++) {
		if (*value == '\\' || *value == '"')
			fputc('\\', f);
		if (*value == '\n')
			fputs("\\n", f);
		else
			fputc(*value, f);
	}
	fputc('"', f);
}

static void prom_sample(FILE *f, const char *metric, const char *device,
			const char *label, const char *word, const char *value)
{
	fprintf(f, "%s{", metric);
	prom_label(f, "device", device);
	if (label) {
		fputc(',', f);
		prom_label(f, label, word);
	}
	fprintf(f, "} %s\n", value);
}

static void prom_family(FILE *f, const char *metric, const char *help,
			const char *unit, const char *id, const char *type)
{
	fprintf(f, "# HELP %s ", metric);
	prom_help(f, help);
	if (id) {
		fprintf(f, " (status field %s", id);
		if (*unit)
			fprintf(f, ", there in %s", unit);
		fputc(')', f);
	}
	fprintf(f, "\n# TYPE %s %s\n", metric, type);
}

/* A numeric field in its base unit: exact for integers, else %.15g (0.35, not 0.34999...) */
static const char *prom_value(const struct wow_field *fl, uint64_t v,
			      char *buf, size_t len)
{
	int u = prom_unit(fl);
	uint64_t mul = u < 0 ? 1 : prom_units[u].mul;
	uint64_t div = u < 0 ? 1 : prom_units[u].div;

	if (div == 1 && v <= UINT64_MAX / mul)
		snprintf(buf, len, "%" PRIu64, v * mul);
	else
		snprintf(buf, len, "%.15g", (double)v * mul / div);
	return buf;
}

/* The words a state set field can take */
static void prom_words(enum wow_field_id id, const char *const **w,
		       size_t *n)
{
	if (wow_fields[id].type == WOW_FT_STATE) {
		*w = state_names;
		*n = ARRAY_SIZE(state_names);
	} else {
		*w = policy_names;
		*n = ARRAY_SIZE(policy_names);
	}
}

static void prom_field(FILE *f, enum wow_field_id id,
		       const struct wow_report *r, size_t nr)
{
	const struct wow_field *fl = &wow_fields[id];
	const char *const *words;
	char metric[64], buf[32];
	size_t i, j, nw, shown = 0;

	for (i = 0; i < nr; i++)
		shown += wow_status_has(r[i].st, id);
	if (!shown)
		return;
	wow_prom_name(id, metric, sizeof(metric));
	prom_family(f, metric, fl->description, fl->unit, fl->id,
		    fl->kind == WOW_MK_COUNTER ? "counter" : "gauge");
	for (i = 0; i < nr; i++) {
		const struct wow_status *st = r[i].st;
		const char *now = wow_status_text(st, id, buf);

		if (!wow_status_has(st, id))
			continue;
		switch (fl->kind) {
		case WOW_MK_STATESET:
			prom_words(id, &words, &nw);
			for (j = 0; j < nw; j++)
				prom_sample(f, metric, r[i].name, fl->id,
					    words[j],
					    strcmp(words[j], now) ? "0" : "1");
			break;
		case WOW_MK_INFO:
			prom_sample(f, metric, r[i].name, fl->id, now, "1");
			break;
		default:
			prom_sample(f, metric, r[i].name, NULL, NULL,
				    prom_value(fl, wow_status_u64(st, id), buf,
					       sizeof(buf)));
		}
	}
}

void wow_print_prometheus(FILE *f, const struct wow_report *r, size_t nr)
{
	size_t i, j;

	for (i = 0; i < WOW_NR_FIELDS; i++)
		prom_field(f, i, r, nr);
	if (!nr)
		return;
	/* wow_health_of, as status --health sees it */
	prom_family(f, "dm_wow_health",
		    "ok, degraded (read_only, or needs_check=1) or failed, as "
		    "wowctl status --health judges it", "", NULL, "gauge");
	for (i = 0; i < nr; i++) {
		enum wow_health_level h = wow_health_of(r[i].st, NULL);

		for (j = 0; j < ARRAY_SIZE(health_names); j++)
			prom_sample(f, "dm_wow_health", r[i].name, "health",
				    health_names[j], j == h ? "1" : "0");
	}
}

/* ---- wowctl status: a list of devices ---- */

void wow_samples_free(struct wow_samples *ss)
{
	size_t i;

	for (i = 0; i < ss->nr; i++) {
		free(ss->s[i].name);
		wow_status_free(&ss->s[i].st);
	}
	free(ss->s);
	ss->s = NULL;
	ss->nr = 0;
}

static struct wow_sample *sample_find(struct wow_samples *ss, const char *name)
{
	size_t i;

	for (i = 0; i < ss->nr; i++)
		if (!strcmp(ss->s[i].name, name))
			return &ss->s[i];
	return NULL;
}

/* Keep @st (moved: the caller's copy is emptied) as @name's last sample. */
static void sample_keep(struct wow_samples *ss, const char *name,
			struct wow_status *st, double now)
{
	struct wow_sample *s = sample_find(ss, name), *v;

	if (!s) {
		v = realloc(ss->s, (ss->nr + 1) * sizeof(*v));
		if (!v)
			return;
		ss->s = v;
		s = &v[ss->nr];
		s->name = strdup(name);
		if (!s->name)
			return;
		memset(&s->st, 0, sizeof(s->st));
		ss->nr++;
	}
	wow_status_free(&s->st);
	s->st = *st;
	s->time = now;
	memset(st, 0, sizeof(*st));
}

/* Fetch and parse @name's status; *tline is the table's, or NULL. */
static int fetch_one(const char *name, wow_fetch_fn *fetch, void *ctx,
		     struct wow_status *st, char **tline, char *err)
{
	char *sline = NULL, e2[WOW_ERR_LEN];
	int ret;

	*tline = NULL;
	ret = fetch(ctx, name, &sline, tline, err);
	if (!ret) {
		ret = wow_status_parse(sline, st, e2);
		if (ret)
			fail(err, ret, "%s: bad status line '%s': %s", name,
			     sline, e2);
	}
	free(sline);
	if (ret) {
		free(*tline);
		*tline = NULL;
	}
	return ret;
}

/* One device, rendered into *text; 0 or -errno with @err set. */
static int show_one(const char *name, unsigned int flags, wow_fetch_fn *fetch,
		    void *ctx, struct wow_samples *samples, double now,
		    enum wow_health_level *worst, char **text, char *err)
{
	char *tline = NULL;
	struct wow_report r = { .name = name };
	struct wow_sample *prev;
	struct wow_rates rates;
	struct wow_status st;
	struct wow_table t;
	bool have_t = false;
	size_t len;
	FILE *f;
	int ret;

	*text = NULL;
	ret = fetch_one(name, fetch, ctx, &st, &tline, err);
	if (ret)
		return ret;
	if (tline && !wow_table_parse(tline, &t, NULL))
		have_t = true;
	r.st = &st;
	r.table = have_t ? &t : NULL;
	prev = samples ? sample_find(samples, name) : NULL;
	if (prev && wow_rates_get(&prev->st, &st, now - prev->time, &rates))
		r.rates = &rates;
	if (worst && wow_health_of(&st, NULL) > *worst)
		*worst = wow_health_of(&st, NULL);
	f = open_memstream(text, &len);
	if (!f) {
		ret = fail(err, -ENOMEM, "out of memory");
	} else {
		if (flags & WOW_SHOW_JSON)
			wow_print_report_json(f, &r);
		else
			wow_print_report_text(f, &r);
		if (fclose(f)) {
			free(*text);
			*text = NULL;
			ret = fail(err, -ENOMEM, "out of memory");
		}
	}
	if (samples)
		sample_keep(samples, name, &st, now);
	wow_status_free(&st);
	if (have_t)
		wow_table_free(&t);
	free(tline);
	return ret;
}

/* Every device's status first: a metric's samples must stay together. */
static int show_prometheus(FILE *out, FILE *errf, char *const *names,
			   size_t nr, wow_fetch_fn *fetch, void *ctx,
			   enum wow_health_level *worst)
{
	struct wow_status *st = calloc(nr ? nr : 1, sizeof(*st));
	struct wow_report *r = calloc(nr ? nr : 1, sizeof(*r));
	char err[WOW_ERR_LEN], *tline;
	size_t i, n = 0;
	int ret = 0;

	if (!st || !r) {
		free(st);
		free(r);
		fprintf(errf, "wowctl: out of memory\n");
		return 1;
	}
	for (i = 0; i < nr; i++) {
		if (fetch_one(names[i], fetch, ctx, &st[n], &tline, err)) {
			fprintf(errf, "wowctl: %s\n", err);
			ret = 1;
			continue;
		}
		free(tline);
		if (worst && wow_health_of(&st[n], NULL) > *worst)
			*worst = wow_health_of(&st[n], NULL);
		r[n].name = names[i];
		r[n].st = &st[n];
		n++;
	}
	wow_print_prometheus(out, r, n);
	for (i = 0; i < n; i++)
		wow_status_free(&st[i]);
	free(st);
	free(r);
	fflush(out);
	return ret;
}

int wow_show(FILE *out, FILE *errf, char *const *names, size_t nr,
	     unsigned int flags, wow_fetch_fn *fetch, void *ctx,
	     struct wow_samples *samples, double now,
	     enum wow_health_level *worst)
{
	bool json = flags & WOW_SHOW_JSON;
	bool array = json && (nr != 1 || (flags & WOW_SHOW_ARRAY));
	char err[WOW_ERR_LEN], *text;
	size_t i, shown = 0;
	int ret = 0;

	if (flags & WOW_SHOW_PROMETHEUS)
		return show_prometheus(out, errf, names, nr, fetch, ctx, worst);
	if (array)
		fputc('[', out);
	for (i = 0; i < nr; i++) {
		if (show_one(names[i], flags, fetch, ctx, samples, now, worst,
			     &text, err)) {
			fprintf(errf, "wowctl: %s\n", err);
			ret = 1;
			continue;
		}
		/* the separator only once the device's text is complete */
		if (shown++)
			fputs(json ? "," : "\n", out);
		fputs(text, out);
		free(text);
	}
	if (array)
		fputc(']', out);
	if (json && (array || shown))
		fputc('\n', out);
	fflush(out);
	return ret;
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
	struct json j;
	int i;

	json_init(&j, f, false);
	json_open(&j, '[', 0);
	for (i = 0; i < WOW_NR_FIELDS; i++) {
		json_open(&j, '{', -1);
		json_key(&j, "id");
		json_str(&j, wow_fields[i].id);
		json_key(&j, "position");
		if (i < WOW_NR_PREFIX)
			json_int(&j, i + 1);
		else
			json_null(&j);
		json_key(&j, "heading");
		json_str(&j, wow_fields[i].heading);
		json_key(&j, "unit");
		json_str(&j, wow_fields[i].unit);
		json_key(&j, "description");
		json_str(&j, wow_fields[i].description);
		json_close(&j);
	}
	json_close(&j);
	fputc('\n', f);
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

/* ---- the kernel's reasons ---- */

bool wow_kmsg_match(const char *rec, char *out, size_t len)
{
	const char *m = rec, *end, *dm;
	size_t n;

	if (*m == '<') {		/* klogctl: "<3>[   1.234] msg" */
		m = strchr(m, '>');
		if (!m)
			return false;
		m++;
		if (*m == '[') {
			m = strchr(m, ']');
			if (!m)
				return false;
			m++;
			while (*m == ' ')
				m++;
		}
	} else {			/* /dev/kmsg: "3,12,34,-;msg" */
		const char *semi = strchr(m, ';'), *nl = strchr(m, '\n');

		if (semi && (!nl || semi < nl))
			m = semi + 1;
	}
	end = strchr(m, '\n');
	n = end ? (size_t)(end - m) : strlen(m);
	dm = "device-mapper: ";
	if (n <= strlen(dm) || strncmp(m, dm, strlen(dm)))
		return false;
	m += strlen(dm);
	n -= strlen(dm);
	/* "wow: ..." (DMERR) or "table: 254:0: wow: ..." (ti->error) */
	if (strncmp(m, "wow: ", 5)) {
		const char *d = n > 7 && !strncmp(m, "table: ", 7) ?
				memchr(m + 7, ' ', n - 7) : NULL;

		/* "table: <maj:min>: wow: " */
		if (!d || (size_t)(d - m) + 6 > n || d[-1] != ':' ||
		    strncmp(d + 1, "wow: ", 5))
			return false;
	}
	if (n >= len)
		n = len - 1;
	memcpy(out, m, n);
	out[n] = '\0';
	return true;
}

/* The last line of the klogctl buffer (caller frees), "" if none. */
static char *klog_read(void)
{
	int size = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */
	char *buf;
	int n;

	if (size <= 0)
		size = 1 << 20;
	buf = malloc(size + 1);
	if (!buf)
		return NULL;
	n = klogctl(3, buf, size);		/* SYSLOG_ACTION_READ_ALL */
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

static char *last_line(const char *buf)
{
	const char *end = buf + strlen(buf), *p;

	while (end > buf && end[-1] == '\n')
		end--;
	for (p = end; p > buf && p[-1] != '\n'; p--)
		;
	return strndup(p, end - p);
}

void wow_kmsg_open(struct wow_kmsg *k)
{
	char *buf;

	k->before = NULL;
	k->fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (k->fd >= 0) {
		if (lseek(k->fd, 0, SEEK_END) >= 0)
			return;
		close(k->fd);
		k->fd = -1;
	}
	buf = klog_read();
	if (buf)
		k->before = last_line(buf);
	free(buf);
}

static void add_line(FILE *f, bool *any, const char *rec)
{
	char msg[1024];

	if (!wow_kmsg_match(rec, msg, sizeof(msg)))
		return;
	fprintf(f, "%s%s", *any ? "\n" : "", msg);
	*any = true;
}

char *wow_kmsg_collect(struct wow_kmsg *k)
{
	char rec[8192], *buf = NULL, *log, *p, *nl;
	bool any = false;
	size_t len;
	ssize_t n;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		goto out;
	if (k->fd >= 0) {
		for (;;) {
			n = read(k->fd, rec, sizeof(rec) - 1);
			if (n < 0 && errno == EPIPE)
				continue;	/* overwritten: read on */
			if (n <= 0)
				break;
			rec[n] = '\0';
			add_line(f, &any, rec);
		}
	} else if (k->before && (log = klog_read())) {
		/* the lines after the last one seen before */
		p = *k->before ? NULL : log;
		for (nl = log; *k->before && (nl = strstr(nl, k->before));
		     nl++)
			p = nl + strlen(k->before);
		for (; p && *p; p = nl ? nl + 1 : p + strlen(p)) {
			nl = strchr(p, '\n');
			if (nl)
				*nl = '\0';
			add_line(f, &any, p);
			if (!nl)
				break;
		}
		free(log);
	}
	fclose(f);
	if (!any) {
		free(buf);
		buf = NULL;
	}
out:
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	free(k->before);
	k->before = NULL;
	return buf;
}

/* "; the kernel said: LINE; LINE" for @err, from @k (closed) */
static void kmsg_reason(struct wow_kmsg *k, char *err)
{
	char *why = wow_kmsg_collect(k), *p;
	size_t n;

	if (!err)
		goto out;
	n = strlen(err);
	if (!why) {
		snprintf(err + n, WOW_ERR_LEN - n,
			 " (no reason in the kernel log)");
		goto out;
	}
	for (p = why; (p = strchr(p, '\n'));)
		*p = ';';
	snprintf(err + n, WOW_ERR_LEN - n, "; the kernel said: %s", why);
out:
	free(why);
}

/* ---- device-mapper ---- */

static void dm_log_quiet(int level, const char *file, int line, int dm_errno,
			 const char *f, ...)
{
	(void)level;
	(void)file;
	(void)line;
	(void)dm_errno;
	(void)f;
}

void wow_dm_quiet(void)
{
	if (!getenv("WOWCTL_DEBUG"))
		dm_log_with_errno_init(dm_log_quiet);
}

static struct dm_task *dm_run(int type, const char *dev, const char *msg,
			      char *err)
{
	struct dm_task *dmt = dm_task_create(type);
	struct wow_kmsg k = { .fd = -1 };
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
	if (msg)
		wow_kmsg_open(&k);
	if (!dm_task_run(dmt)) {
		e = dm_task_get_errno(dmt);
		if (e == ENXIO)
			fail(err, -ENODEV, "%s: no such device", dev);
		else if (msg)
			fail(err, -EIO, "%s: message '%s' refused: %s",
			     dev, msg, strerror(e ? e : EIO));
		else
			fail(err, -EIO, "%s: device-mapper request failed: %s",
			     dev ? dev : "list", strerror(e ? e : EIO));
		if (msg && e != ENXIO)
			kmsg_reason(&k, err);
		goto fail;
	}
	if (msg)
		free(wow_kmsg_collect(&k));
	return dmt;
fail:
	if (k.fd >= 0)
		free(wow_kmsg_collect(&k));
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

int wow_dm_fetch(void *ctx, const char *name, char **status, char **table,
		 char *err)
{
	int r;

	(void)ctx;
	*status = *table = NULL;
	r = wow_dm_params(name, false, status, err);
	if (r)
		return r;
	/* the table is extra: a device gone since is reported as gone */
	r = wow_dm_params(name, true, table, err);
	if (r) {
		free(*status);
		*status = NULL;
	}
	return r;
}

/* Run @dmt with a udev cookie and wait for udev (or make the nodes). */
static int dm_run_udev(struct dm_task *dmt)
{
	uint32_t cookie = 0;
	int ok;

	ok = dm_task_set_cookie(dmt, &cookie, 0) && dm_task_run(dmt);
	if (cookie)
		dm_udev_wait(cookie);
	return ok;
}

int wow_dm_create(const char *name, uint64_t sectors, const char *params,
		  char *err)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_CREATE);
	struct wow_kmsg k;
	int r = 0, e;

	if (!dmt)
		return fail(err, -ENODEV,
			    "cannot use device-mapper (dm-mod loaded? root?)");
	if (!dm_task_set_name(dmt, name) ||
	    !dm_task_add_target(dmt, 0, sectors, WOW_TARGET_NAME, params)) {
		r = fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	wow_kmsg_open(&k);
	if (!dm_run_udev(dmt)) {
		e = dm_task_get_errno(dmt);
		if (e == EBUSY || e == EEXIST) {
			r = fail(err, -EEXIST, "%s: a device-mapper device of "
				 "that name exists", name);
			free(wow_kmsg_collect(&k));
		} else {
			r = fail(err, -EIO, "%s: the kernel refused the table "
				 "(%s)", name, strerror(e ? e : EINVAL));
			kmsg_reason(&k, err);
		}
		goto out;
	}
	free(wow_kmsg_collect(&k));
out:
	dm_task_destroy(dmt);
	return r;
}

int wow_dm_remove(const char *dev, char *err)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_REMOVE);
	int r = 0, e;

	if (!dmt)
		return fail(err, -ENODEV,
			    "cannot use device-mapper (dm-mod loaded? root?)");
	if (!dm_set_dev(dmt, dev)) {
		r = fail(err, -EINVAL, "%s: not a device-mapper device", dev);
		goto out;
	}
	dm_task_retry_remove(dmt);
	if (!dm_run_udev(dmt)) {
		e = dm_task_get_errno(dmt);
		if (e == ENXIO)
			r = fail(err, -ENODEV, "%s: no such device", dev);
		else if (e == EBUSY)
			r = fail(err, -EBUSY, "%s: in use (mounted, open, or "
				 "held by another device)", dev);
		else
			r = fail(err, -EIO, "%s: remove failed: %s", dev,
				 strerror(e ? e : EIO));
	}
out:
	dm_task_destroy(dmt);
	return r;
}

int wow_dm_suspend(const char *dev, bool suspend, char *err)
{
	struct dm_task *dmt = dm_task_create(suspend ? DM_DEVICE_SUSPEND :
						       DM_DEVICE_RESUME);
	int r = 0, ok;

	if (!dmt)
		return fail(err, -ENODEV,
			    "cannot use device-mapper (dm-mod loaded? root?)");
	if (!dm_set_dev(dmt, dev)) {
		r = fail(err, -EINVAL, "%s: not a device-mapper device", dev);
		goto out;
	}
	ok = suspend ? dm_task_run(dmt) : dm_run_udev(dmt);
	if (!ok)
		r = fail(err, -EIO, "%s: %s failed: %s", dev,
			 suspend ? "suspend" : "resume",
			 strerror(dm_task_get_errno(dmt) ?: EIO));
out:
	dm_task_destroy(dmt);
	return r;
}

int wow_dm_open_count(const char *dev, int *count, char *err)
{
	struct dm_task *dmt = dm_run(DM_DEVICE_INFO, dev, NULL, err);
	struct dm_info info;
	int r = 0;

	if (!dmt)
		return -EIO;
	if (!dm_task_get_info(dmt, &info) || !info.exists)
		r = fail(err, -ENODEV, "%s: no such device", dev);
	else
		*count = info.open_count;
	dm_task_destroy(dmt);
	return r;
}
