/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libwow: userspace view of a dm-wow target.
 *
 *   wow_status_*   parse the INFO status line (the only parser of it)
 *   wow_fields[]   the one table of status fields: id, heading, unit,
 *                  description; drives text, JSON and documentation output
 *   wow_table_*    parse and format the table line (after "<start> <len> wow")
 *   wow_opts[]     the table options as wowctl shows them;
 *                  wow_table_add_option, wow_table_check check them with
 *                  the kernel's own dm-wow-args.c (kargs.c) so that a bad
 *                  option is caught, in the kernel's words, before the
 *                  kernel sees it
 *   wow_tunables   the effective value of every option, and where it came
 *                  from (status, table, default)
 *   wow_health_*   ok, degraded or failed, for monitoring
 *   wow_rates_*    rates from two status samples
 *   wow_print_*    text, JSON and Prometheus output built from the tables
 *                  above
 *   wow_show       the status of a list of devices (wowctl status)
 *   wow_kmsg_*     the kernel's reason for a refusal (/dev/kmsg)
 *   wow_dm_*       device-mapper access through libdevmapper
 *   wow_dev_*, wow_plan_*  (wowdev.c) block devices and the checks and
 *                  table of a new device (wowctl create)
 *   wow_dev_stable_path, wow_dev_describe  (devname.c, devname.h) a
 *                  device's name: its by-id link, its dm or kernel name
 *
 * The calls go one way: wowdev.c calls libwow.c and wowcache's files
 * (wowcache.c, wowview.c, wowmsize.c: wowcache-int.h says their own
 * order); libwow.c calls devname.c, json.c and kargs.c (over
 * dm-wow-args.c), which call nothing of the others.
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

#include "../dm-wow/dm-wow-opts.h"
#include "devname.h"

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
/* dm-wow-args.c's names */
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
	WOW_F_LOAD_KIB,
	WOW_F_LOADED_FROM,
	WOW_F_BAD_BLOCKS,
	WOW_NR_FIELDS
};

#define WOW_NR_PREFIX	(WOW_F_DIRTY_BLOCKS + 1)

enum wow_field_type { WOW_FT_U64, WOW_FT_STATE, WOW_FT_POLICY, WOW_FT_WORD };

#define WOW_WORD_LEN	24	/* a WOW_FT_WORD value, with its NUL */

/*
 * What a field is as a Prometheus metric (wowctl status --prometheus): a
 * gauge; a counter (only goes up, reset by clear_stats or a reload); a
 * state set (one sample per possible word, 1 for the current one); an info
 * gauge (always 1, the word as a label).
 */
enum wow_metric_kind {
	WOW_MK_GAUGE, WOW_MK_COUNTER, WOW_MK_STATESET, WOW_MK_INFO
};

struct wow_field {
	const char *id;		/* word in the status line */
	const char *heading;	/* human heading */
	const char *unit;
	const char *description;
	enum wow_field_type type;
	size_t offset;		/* of the value in struct wow_status */
	enum wow_metric_kind kind;
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
	uint64_t load_kib;
	char loaded_from[WOW_WORD_LEN];
	uint64_t bad_blocks;
	uint64_t present;	/* bit (1 << wow_field_id) per field seen */
	struct wow_kv *other;	/* unknown keys, in line order */
	size_t nr_other;
};

/* Write a message to @err (WOW_ERR_LEN bytes, may be NULL); return @ret. */
int wow_fail(char *err, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

int wow_status_parse(const char *line, struct wow_status *st, char *err);
void wow_status_free(struct wow_status *st);
bool wow_status_has(const struct wow_status *st, enum wow_field_id id);
/* Numeric (WOW_FT_U64) fields only. */
uint64_t wow_status_u64(const struct wow_status *st, enum wow_field_id id);
/* Value as text; buf needs 24 bytes. */
const char *wow_status_text(const struct wow_status *st,
			    enum wow_field_id id, char *buf);

/*
 * Figures computed from two fields: a * b, a / b or a / (a + b), scaled;
 * or by a function of the status (WOW_DV_FN).
 */
enum wow_derived_op { WOW_DV_PRODUCT, WOW_DV_RATIO, WOW_DV_SHARE, WOW_DV_FN };

struct wow_derived {
	const char *id, *heading, *unit;
	enum wow_derived_op op;
	enum wow_field_id a, b;
	double scale;
	bool (*fn)(const struct wow_status *st, double *v);
	const char *description;
};

extern const struct wow_derived wow_derived[];
extern const size_t wow_nr_derived;
/* false when a field is missing or the divisor is 0 */
bool wow_derived_get(const struct wow_derived *d,
		     const struct wow_status *st, double *v);

/* ---- table line: <origin> <cache> <#opt_args> [<opt_args>...] ---- */

/* the options by the kernel's ids (enum wow_opt, dm-wow-opts.h) */

enum wow_opt_type { WOW_OT_U64, WOW_OT_POLICY, WOW_OT_FLAG };

/*
 * How wowctl shows and takes an option.  The names (the kernel's, in this
 * order), defaults, limits, messages and which options are runtime
 * tunables are dm-wow-args.c's alone: libwow checks options with it
 * (kargs.c).
 */
struct wow_opt_info {
	const char *name;
	const char *unit;
	enum wow_opt_type type;
	bool bytes;		/* a size: K, M, G, T suffixes accepted */
};

extern const struct wow_opt_info wow_opts[WOW_NR_OPTS];

struct wow_table {
	char *origin;
	char *cache;
	uint64_t val[WOW_NR_OPTS];	/* policy as enum wow_policy, flag 1 */
	uint32_t set;			/* bit (1 << enum wow_opt) per option */
};

int wow_table_parse(const char *line, struct wow_table *t, char *err);
void wow_table_free(struct wow_table *t);
/* Canonical line, options in wow_opts[] order; caller frees. */
char *wow_table_format(const struct wow_table *t);

int wow_opt_lookup(const char *name);
/* Option @id when the table line does not name it (dm-wow-args.c's) */
uint64_t wow_opt_default(int id);
/* Decimal, with an optional K, M, G or T suffix (KiB...; "KB", "KiB" too). */
int wow_parse_size(const char *s, uint64_t *v);
/*
 * One option, "KEY=VALUE" or a flag "KEY", into @t (sizes may carry a
 * suffix; stored in bytes).  Refuses unknown names, values out of the
 * kernel's range, and an option given twice, as the kernel would.
 */
int wow_table_add_option(struct wow_table *t, const char *kv, char *err);
/*
 * The checks the kernel's constructor makes of the options as a whole
 * (each value's range, then erase block >= 4 blocks, write group >= block,
 * max_destage_size a multiple of block_size, low below high, one watermark
 * alone setting the other 10 points away); @eff (may be NULL) gets the
 * effective value of every option.  The message is the kernel's.
 */
int wow_table_check(const struct wow_table *t, uint64_t eff[WOW_NR_OPTS],
		    char *err);
/*
 * The value of a "set NAME VALUE" message: NAME must be a runtime
 * tunable; a size suffix is turned into bytes.  @out gets the decimal
 * value (24 bytes).  Ranges are left to the kernel, which knows the
 * values it checks them against.
 */
int wow_tunable_value(const char *name, const char *value, char *out,
		      char *err);

/* ---- effective tunables, health, rates ---- */

enum wow_source { WOW_SRC_DEFAULT, WOW_SRC_TABLE, WOW_SRC_STATUS };

const char *wow_source_name(enum wow_source s);

struct wow_tunable {
	uint64_t value;		/* policy as enum wow_policy, flag 0 or 1 */
	enum wow_source source;
};

/*
 * Every option but format, as in force: from the status where it reports
 * the value (block_size, policy, the current watermarks, cleaner from the
 * state, and any key named like an option), else from the table line
 * (@t may be NULL), else the default.  The kernel keeps the table's values
 * up to date with runtime changes of the options the table names; one
 * changed at run time that the table does not name is not visible.
 */
void wow_tunables(const struct wow_status *st, const struct wow_table *t,
		  struct wow_tunable out[WOW_NR_OPTS]);

enum wow_health_level { WOW_HEALTH_OK, WOW_HEALTH_DEGRADED, WOW_HEALTH_FAILED };

const char *wow_health_name(enum wow_health_level h);
/*
 * failed: state failed; degraded: read_only, or needs_check=1 (the cache
 * device failed an I/O, now or before: it loads in cleaner mode).  @why
 * (WOW_ERR_LEN, may be NULL) says which.
 */
enum wow_health_level wow_health_of(const struct wow_status *st, char *why);

/* Dirty occupancy as destage rates it (dm-wow.h wow_occupancy_bp), %. */
bool wow_occupancy_pct(const struct wow_status *st, double *pct);

/* Rates between two samples of one device, @seconds apart. */
struct wow_rates {
	double seconds;
	double destage_mib_s;		/* destage_blocks */
	double destage_writes_s;	/* destage_writes */
	double dirty_blocks_s;		/* dirty_blocks change, < 0 draining */
	double log_mib_s;		/* log_blocks: cache device writes */
	double read_hits_s, read_misses_s, write_hits_s, write_misses_s;
};

/* false when @seconds is not positive or a counter went back (clear_stats) */
bool wow_rates_get(const struct wow_status *prev, const struct wow_status *cur,
		   double seconds, struct wow_rates *r);

/* ---- output ---- */

/* One device: its status, and what else is known of it. */
struct wow_report {
	const char *name;
	const struct wow_status *st;
	const struct wow_table *table;	/* NULL: not known */
	const struct wow_rates *rates;	/* NULL: one sample only */
};

void wow_print_report_text(FILE *f, const struct wow_report *r);
void wow_print_report_json(FILE *f, const struct wow_report *r);

void wow_print_status_text(FILE *f, const char *name,
			   const struct wow_status *st);
void wow_print_status_json(FILE *f, const char *name,
			   const struct wow_status *st);
void wow_print_table_text(FILE *f, const struct wow_table *t);
/*
 * The Prometheus text exposition format (node_exporter's textfile
 * collector) of @nr devices: per status field one metric family, HELP and
 * TYPE first, then one sample per device (label device="NAME"); values in
 * base units (bytes, seconds, ratios).  Field kinds (enum
 * wow_metric_kind) decide gauge or counter (name ending in _total); state
 * and policy become state sets (a label of that name, 1 for the current
 * word, 0 for the others), loaded_from an info gauge; dm_wow_health last.
 */
void wow_print_prometheus(FILE *f, const struct wow_report *r, size_t nr);
/* The metric name of field @id: dm_wow_<id without unit suffix><unit>[_total] */
void wow_prom_name(enum wow_field_id id, char *buf, size_t len);
void wow_print_fields_text(FILE *f);
void wow_print_fields_json(FILE *f);
void wow_print_fields_rst(FILE *f);

/* ---- wowctl status: a list of devices ---- */

/*
 * Where wow_show gets a device's INFO status and table params (the strings
 * after "wow"); returns 0, or -errno with @err set (the device vanished,
 * ...).  wow_dm_fetch is the real one.  Both strings are the caller's.
 */
typedef int wow_fetch_fn(void *ctx, const char *name, char **status,
			 char **table, char *err);
int wow_dm_fetch(void *ctx, const char *name, char **status, char **table,
		 char *err);

/* The last sample of each device, for rates (wow_show keeps it). */
struct wow_sample {
	char *name;
	struct wow_status st;
	double time;
};

struct wow_samples {
	struct wow_sample *s;
	size_t nr;
};

void wow_samples_free(struct wow_samples *ss);

#define WOW_SHOW_JSON	(1U << 0)
#define WOW_SHOW_ARRAY	(1U << 1)	/* JSON: an array even of one */
#define WOW_SHOW_PROMETHEUS (1U << 2)	/* wow_print_prometheus; no samples */

/*
 * Print the status of each device in @names, in order: text blocks
 * separated by a blank line, or JSON (one line: an array, or with one
 * name and no WOW_SHOW_ARRAY the object alone), or with
 * WOW_SHOW_PROMETHEUS the Prometheus text format of them all (@samples
 * unused).  A device that cannot be
 * read (vanished since it was listed, not a wow device, a bad line) is
 * left out, with a message on @errf, and the JSON stays valid.  With
 * @samples, rates against the last sample (@now, in seconds) are shown
 * and the samples updated.  Returns 0, or 1 when a device was left out;
 * *@worst (may be NULL) gets the worst health seen.
 */
int wow_show(FILE *out, FILE *errf, char *const *names, size_t nr,
	     unsigned int flags, wow_fetch_fn *fetch, void *ctx,
	     struct wow_samples *samples, double now,
	     enum wow_health_level *worst);

/* ---- the kernel's reasons (device-mapper logs them, returns EINVAL) ---- */

struct wow_kmsg {
	int fd;			/* /dev/kmsg, at its end; -1: klogctl */
	char *before;		/* klogctl: the buffer's last line then */
};

/* Start watching the kernel log (before the request). */
void wow_kmsg_open(struct wow_kmsg *k);
/*
 * The dm-wow messages logged since wow_kmsg_open, one per line without
 * the "device-mapper: " prefix (caller frees; NULL: none), and close.
 */
char *wow_kmsg_collect(struct wow_kmsg *k);
/*
 * One /dev/kmsg record ("PRI,SEQ,TS,FLAGS;MESSAGE\n[ KEY=VALUE\n]...") or
 * one klogctl line ("<PRI>[  TS] MESSAGE"): the message if it is dm-wow's
 * ("device-mapper: ... wow: ..." or "device-mapper: wow: ..."), written to
 * @out (@len bytes) without "device-mapper: "; else false.
 */
bool wow_kmsg_match(const char *rec, char *out, size_t len);

/* ---- device-mapper; dev is a dm name or /dev/mapper/NAME ---- */

/* Silence libdevmapper's own messages (wowctl reports its own). */
void wow_dm_quiet(void);

/* Names of all devices with a wow target; caller frees each and the array. */
int wow_dm_list(char ***names, size_t *nr, char *err);
/* INFO status (table == false) or table params of the wow target. */
int wow_dm_params(const char *dev, bool table, char **params, char *err);
int wow_dm_message(const char *dev, const char *msg, char **response,
		   char *err);
/*
 * Create NAME with one wow target "0 @sectors wow @params" and wait for
 * udev (or make the node without it).  A refusal's reason from the kernel
 * log goes into @err.
 */
int wow_dm_create(const char *name, uint64_t sectors, const char *params,
		  char *err);
/* Remove (retrying while udev holds it briefly). */
int wow_dm_remove(const char *dev, char *err);
int wow_dm_suspend(const char *dev, bool suspend, char *err);
/* The device's open count (mounts, holders, open file descriptors). */
int wow_dm_open_count(const char *dev, int *count, char *err);

/* ---- wowdev.c: block devices and the plan of a new device ---- */

struct wow_dev {
	char *path;		/* as given */
	char *stable;		/* /dev/disk/by-id link to it, else path */
	uint64_t rdev;		/* dev_t */
	uint64_t sectors;
	unsigned int logical_block_size;
	bool read_only;
	bool busy;		/* an exclusive open failed: mounted, held */
	bool is_blk;		/* else a regular file (an image, for tests) */
};

/*
 * Probe the block device (or, for tests, regular file) @path: size,
 * logical block size, read-only,
 * whether it is in use, and its stable path: a link in @by_id_dir
 * (NULL: /dev/disk/by-id) to the same device, the best kind first
 * (dm-uuid-, wwn-, nvme-eui., nvme-, scsi-, ata-, virtio-, others; then by
 * name), not a -part link of another device.
 */
int wow_dev_probe(const char *path, const char *by_id_dir,
		  struct wow_dev *d, char *err);
void wow_dev_free(struct wow_dev *d);

#define WOW_PLAN_FORCE	(1U << 0)	/* format over dirty data */
#define WOW_PLAN_FILES	(1U << 1)	/* accept regular files (tests) */

/* What the cache device holds, as the plan found it. */
enum wow_plan_cache {
	WOW_PLAN_BLANK,		/* formatted on first use */
	WOW_PLAN_REOPEN,	/* a dm-wow cache, reopened */
	WOW_PLAN_FORMAT,	/* format named: reinitialised */
};

struct wow_plan {
	struct wow_table t;	/* origin and cache: the stable paths */
	uint64_t sectors;	/* target length */
	enum wow_plan_cache cache;
	uint64_t dirty_blocks;	/* in the cache found (REOPEN, FORMAT) */
	bool dirty_known;
	uint32_t adopted;	/* options taken from the cache's superblock */
};

/*
 * Everything the kernel would refuse, checked before asking it: the
 * options (wow_table_check), the two devices (different, writable, not in
 * use, logical block sizes, the page size limit of 6.11 and later, the
 * origin not too large for block_size, the cache large enough for its
 * metadata and 4 segments and not too large), and the cache's superblock
 * (a dm-wow cache must match the geometry and origin length, unless
 * format; geometry options not given are taken from it; foreign or
 * corrupt data needs format; format of a cache with dirty data needs
 * WOW_PLAN_FORCE).  @t has the options; @plan gets the table to load.
 */
int wow_plan_make(const struct wow_table *t, const struct wow_dev *origin,
		  const struct wow_dev *cache, unsigned int flags,
		  struct wow_plan *plan, char *err);
void wow_plan_free(struct wow_plan *plan);

#endif /* LIBWOW_H */
