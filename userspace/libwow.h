/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libwow: userspace view of a dm-wow target.
 *
 *   wow_status_*   parse the INFO status line (the only parser of it)
 *   wow_fields[]   the one table of status fields: id, heading, unit,
 *                  description; drives text, JSON and documentation output
 *   wow_table_*    parse and format the table line (after "<start> <len> wow")
 *   wow_print_*    text and JSON output built from the tables above
 *   wow_dm_*       device-mapper access through libdevmapper
 *
 * Functions that can fail return 0 or a negative errno and, when given an
 * err buffer of WOW_ERR_LEN bytes, leave a one-line reason in it.
 */
#ifndef LIBWOW_H
#define LIBWOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define WOW_TARGET_NAME	"wow"
#define WOW_ERR_LEN	256

enum wow_state {
	WOW_STATE_OK,
	WOW_STATE_CLEANING,
	WOW_STATE_READ_ONLY,
	WOW_STATE_FAILED,
};

enum wow_policy {
	WOW_POLICY_WOW,
	WOW_POLICY_CSCAN,
	WOW_POLICY_LRW,
};

const char *wow_state_name(enum wow_state s);
const char *wow_policy_name(enum wow_policy p);
int wow_policy_parse(const char *word, enum wow_policy *p);

/* ---- status fields: the first WOW_NR_PREFIX are positional ---- */

enum wow_field_id {
	WOW_F_STATE,
	WOW_F_POLICY,
	WOW_F_BLOCK_SIZE,
	WOW_F_CACHE_BLOCKS,
	WOW_F_FREE_BLOCKS,
	WOW_F_DIRTY_BLOCKS,
	/* key=value fields */
	WOW_F_READ_HITS,
	WOW_F_READ_MISSES,
	WOW_F_WRITE_HITS,
	WOW_F_WRITE_MISSES,
	WOW_F_WRITES_BYPASSED,
	WOW_F_DESTAGE_WRITES,
	WOW_F_DESTAGE_BLOCKS,
	WOW_F_MERGED_BLOCKS,
	WOW_F_COMMITS,
	WOW_F_FLUSHES,
	WOW_F_RECLAIMED_SEGMENTS,
	WOW_F_COPIED_BLOCKS,
	WOW_F_LOG_BLOCKS,
	WOW_F_LOAD_DROPPED,
	WOW_F_NEEDS_CHECK,
	WOW_F_ORIGIN_ERRORS,
	WOW_F_CACHE_ERRORS,
	WOW_F_SEGMENTS,
	WOW_F_FREE_SEGMENTS,
	WOW_F_LOW_WATERMARK,
	WOW_F_HIGH_WATERMARK,
	WOW_F_DESTAGE_INFLIGHT,
	WOW_F_HAND,
	WOW_F_DIRTY_GROUPS,
	WOW_F_RECENCY_BITS,
	WOW_F_DESTAGE_RUNS,
	WOW_F_MEAN_RUN_BLOCKS,
	WOW_F_MEAN_SEEK_SECTORS,
	WOW_F_AGE_OLDEST_S,
	WOW_F_VALID_BLOCKS,
	WOW_F_DISCARDS,
	WOW_F_SWEEPS,
	WOW_NR_FIELDS
};

#define WOW_NR_PREFIX	(WOW_F_DIRTY_BLOCKS + 1)

enum wow_field_type { WOW_FT_U64, WOW_FT_STATE, WOW_FT_POLICY };

struct wow_field {
	const char *id;		/* word in the status line */
	const char *heading;	/* human heading */
	const char *unit;
	const char *description;
	enum wow_field_type type;
	size_t offset;		/* of the value in struct wow_status */
};

extern const struct wow_field wow_fields[WOW_NR_FIELDS];

struct wow_kv {
	char *key;
	char *value;
};

struct wow_status {
	enum wow_state state;
	enum wow_policy policy;
	uint64_t block_size, cache_blocks, free_blocks, dirty_blocks;
	uint64_t read_hits, read_misses, write_hits, write_misses;
	uint64_t writes_bypassed, destage_writes, destage_blocks;
	uint64_t merged_blocks, commits, flushes, reclaimed_segments;
	uint64_t copied_blocks, log_blocks, load_dropped, needs_check;
	uint64_t origin_errors, cache_errors;
	uint64_t segments, free_segments, low_watermark, high_watermark;
	uint64_t destage_inflight, hand, dirty_groups, recency_bits;
	uint64_t destage_runs, mean_run_blocks, mean_seek_sectors;
	uint64_t age_oldest_s;
	uint64_t valid_blocks, discards, sweeps;
	uint64_t present;	/* bit (1 << wow_field_id) per field seen */
	struct wow_kv *other;	/* unknown keys, in line order */
	size_t nr_other;
};

int wow_status_parse(const char *line, struct wow_status *st, char *err);
void wow_status_free(struct wow_status *st);
bool wow_status_has(const struct wow_status *st, enum wow_field_id id);
/* Numeric (WOW_FT_U64) fields only. */
uint64_t wow_status_u64(const struct wow_status *st, enum wow_field_id id);
/* Value as text; buf needs 24 bytes. */
const char *wow_status_text(const struct wow_status *st,
			    enum wow_field_id id, char *buf);

/* Figures computed from two fields: a * b, a / b or a / (a + b), scaled. */
enum wow_derived_op { WOW_DV_PRODUCT, WOW_DV_RATIO, WOW_DV_SHARE };

struct wow_derived {
	const char *id, *heading, *unit;
	enum wow_derived_op op;
	enum wow_field_id a, b;
	double scale;
};

extern const struct wow_derived wow_derived[];
extern const size_t wow_nr_derived;
/* false when a field is missing or the divisor is 0 */
bool wow_derived_get(const struct wow_derived *d,
		     const struct wow_status *st, double *v);

/* ---- table line: <origin> <cache> <#opt_args> [<opt_args>...] ---- */

enum wow_opt_id {
	WOW_OPT_BLOCK_SIZE,
	WOW_OPT_ERASE_BLOCK_SIZE,
	WOW_OPT_WRITE_GROUP_SIZE,
	WOW_OPT_POLICY,
	WOW_OPT_LOW_WATERMARK,
	WOW_OPT_HIGH_WATERMARK,
	WOW_OPT_MAX_DESTAGE_IOS,
	WOW_OPT_MAX_DESTAGE_SIZE,
	WOW_OPT_MAX_AGE,
	WOW_OPT_SEQUENTIAL_CUTOFF,
	WOW_OPT_CLEANER,
	WOW_OPT_FORMAT,
	WOW_NR_OPTS
};

enum wow_opt_type { WOW_OT_U64, WOW_OT_POLICY, WOW_OT_FLAG };

struct wow_opt {
	const char *name;
	const char *unit;
	enum wow_opt_type type;
};

extern const struct wow_opt wow_opts[WOW_NR_OPTS];

struct wow_table {
	char *origin;
	char *cache;
	uint64_t val[WOW_NR_OPTS];	/* policy as enum wow_policy, flag 1 */
	uint32_t set;			/* bit (1 << wow_opt_id) per option */
};

int wow_table_parse(const char *line, struct wow_table *t, char *err);
void wow_table_free(struct wow_table *t);
/* Canonical line, options in wow_opts[] order; caller frees. */
char *wow_table_format(const struct wow_table *t);

/* ---- output ---- */

void wow_json_string(FILE *f, const char *s);
void wow_print_status_text(FILE *f, const char *name,
			   const struct wow_status *st);
void wow_print_status_json(FILE *f, const char *name,
			   const struct wow_status *st);
void wow_print_table_text(FILE *f, const struct wow_table *t);
void wow_print_fields_text(FILE *f);
void wow_print_fields_json(FILE *f);
void wow_print_fields_rst(FILE *f);

/* ---- device-mapper; dev is a dm name or /dev/mapper/NAME ---- */

/* Names of all devices with a wow target; caller frees each and the array. */
int wow_dm_list(char ***names, size_t *nr, char *err);
/* INFO status (table == false) or table params of the wow target. */
int wow_dm_params(const char *dev, bool table, char **params, char *err);
int wow_dm_message(const char *dev, const char *msg, char **response,
		   char *err);

#endif /* LIBWOW_H */
