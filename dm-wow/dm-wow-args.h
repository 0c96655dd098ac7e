/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow table line options (dm-wow-args.c): their names, defaults, limits
 * and messages, the one table the module and libwow both parse with (the
 * file builds unchanged in userspace, over dm-wow-types.h).
 */
#ifndef DM_WOW_ARGS_H
#define DM_WOW_ARGS_H

#include "dm-wow-types.h"
#include "dm-wow-format.h"
#include "dm-wow-opts.h"

#ifdef __KERNEL__
#include <linux/device-mapper.h>	/* struct dm_arg_set, DMEMIT */
#endif

enum wow_policy_id {
	WOW_POLICY_WOW,
	WOW_POLICY_CSCAN,
	WOW_POLICY_LRW,
	WOW_NR_POLICIES,
};

/* Defaults, chosen in Documentation/dm-wow.rst. */
#define WOW_DEFAULT_BLOCK_SIZE		4096U
#define WOW_DEFAULT_ERASE_BLOCK_SIZE	1048576U
#define WOW_DEFAULT_WRITE_GROUP_SIZE	131072U
#define WOW_DEFAULT_LOW_WATERMARK_PCT	20U
#define WOW_DEFAULT_HIGH_WATERMARK_PCT	30U
#define WOW_DEFAULT_MAX_DESTAGE_IOS	32U
#define WOW_DEFAULT_MAX_DESTAGE_SIZE	1048576U
#define WOW_DEFAULT_MAX_AGE_S		0U
#define WOW_DEFAULT_SEQUENTIAL_CUTOFF	0ULL

#define WOW_MAX_DESTAGE_IOS_LIMIT	4096U
#define WOW_MAX_DESTAGE_SIZE_LIMIT	8388608U
#define WOW_MAX_AGE_LIMIT_S		604800U
#define WOW_SEQUENTIAL_CUTOFF_LIMIT	1073741824ULL

struct wow_args {
	u32 block_size;			/* bytes */
	u32 erase_block_size;		/* bytes */
	u32 write_group_size;		/* bytes */
	enum wow_policy_id policy;
	u32 low_watermark_pct;
	u32 high_watermark_pct;
	u32 max_destage_ios;
	u32 max_destage_size;		/* bytes */
	u32 max_age_s;
	u64 sequential_cutoff;		/* bytes, 0 = off */
	bool cleaner;
	bool format;
	unsigned long set;		/* BIT(enum wow_opt) per named option */
};

const char *wow_policy_name(enum wow_policy_id id);
void wow_args_init(struct wow_args *a);
/* The option named @name (enum wow_opt), or -1. */
int wow_find_opt(const char *name);
const char *wow_opt_name(enum wow_opt id);
bool wow_opt_has_value(enum wow_opt id);
bool wow_opt_runtime(enum wow_opt id);
/*
 * One option's value: @v checked against the option's limits alone into
 * @a (a flag takes no value: -EINVAL), not yet marked named in a->set.
 */
int wow_parse_opt(struct wow_args *a, enum wow_opt id, const char *v,
		  char **error);
/* Option @id's value in @a: a number, the policy's id, a flag 0 or 1. */
u64 wow_args_value(const struct wow_args *a, enum wow_opt id);
int wow_parse_opt_args(struct wow_args *a, struct dm_arg_set *as,
		       char **error);
int wow_parse_tunable(struct wow_args *a, const char *name,
		      const char *value, char **error);
unsigned int wow_emit_opt_args(const struct wow_args *a, char *result,
			       unsigned int maxlen);
void wow_args_set_group(struct wow_args *a, u32 group_size);

#endif
