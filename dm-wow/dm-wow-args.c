// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow table line options: one small parser per option into struct
 * wow_args, cross-checks once all are read, and the TABLE status emitter
 * that round-trips them.  Nothing here touches a device, so KUnit drives it
 * with plain strings (tests/args_kunit.c), and it builds unchanged in
 * userspace, where libwow checks wowctl's options with it.  Locking: none
 * (pure; the caller serialises changes to a live table's tunables under
 * wc->lock).
 */
#include "dm-wow-args.h"

static const char * const policy_names[WOW_NR_POLICIES] = {
	[WOW_POLICY_WOW] = "wow",
	[WOW_POLICY_CSCAN] = "cscan",
	[WOW_POLICY_LRW] = "lrw",
};

const char *wow_policy_name(enum wow_policy_id id)
{
	return id < WOW_NR_POLICIES ? policy_names[id] : "unknown";
}

void wow_args_init(struct wow_args *a)
{
	memset(a, 0, sizeof(*a));
	a->block_size = WOW_DEFAULT_BLOCK_SIZE;
	a->erase_block_size = WOW_DEFAULT_ERASE_BLOCK_SIZE;
	a->write_group_size = WOW_DEFAULT_WRITE_GROUP_SIZE;
	a->policy = WOW_POLICY_WOW;
	a->low_watermark_pct = WOW_DEFAULT_LOW_WATERMARK_PCT;
	a->high_watermark_pct = WOW_DEFAULT_HIGH_WATERMARK_PCT;
	a->max_destage_ios = WOW_DEFAULT_MAX_DESTAGE_IOS;
	a->max_destage_size = WOW_DEFAULT_MAX_DESTAGE_SIZE;
	a->max_age_s = WOW_DEFAULT_MAX_AGE_S;
	a->sequential_cutoff = WOW_DEFAULT_SEQUENTIAL_CUTOFF;
}

/* Decimal only: "0x1000", "-1", "+1", " 1" and overflow are refused. */
static int parse_u32(const char *v, u32 *out)
{
	if (!v || !isdigit(*v))
		return -EINVAL;
	return kstrtou32(v, 10, out);
}

static int parse_u64(const char *v, u64 *out)
{
	if (!v || !isdigit(*v))
		return -EINVAL;
	return kstrtou64(v, 10, out);
}

static int parse_block_size(struct wow_args *a, const char *v, char **error)
{
	u32 n;

	if (parse_u32(v, &n) || !is_power_of_2(n) ||
	    n < WOW_MIN_BLOCK_SIZE || n > WOW_MAX_BLOCK_SIZE) {
		*error = "Invalid block_size: must be a power of two from 512 to 65536";
		return -EINVAL;
	}
	a->block_size = n;
	return 0;
}

static int parse_erase_block_size(struct wow_args *a, const char *v,
				  char **error)
{
	u32 n;

	if (parse_u32(v, &n) || !is_power_of_2(n) ||
	    n < WOW_MIN_BLOCK_SIZE * WOW_MIN_BLOCKS_PER_SEGMENT ||
	    n > WOW_MAX_ERASE_BLOCK_SIZE) {
		*error = "Invalid erase_block_size: must be a power of two from 2048 to 256 MiB";
		return -EINVAL;
	}
	a->erase_block_size = n;
	return 0;
}

static int parse_write_group_size(struct wow_args *a, const char *v,
				  char **error)
{
	u32 n;

	if (parse_u32(v, &n) || !is_power_of_2(n) ||
	    n < WOW_MIN_BLOCK_SIZE || n > WOW_MAX_WRITE_GROUP_SIZE) {
		*error = "Invalid write_group_size: must be a power of two from 512 to 64 MiB";
		return -EINVAL;
	}
	a->write_group_size = n;
	return 0;
}

static int parse_policy(struct wow_args *a, const char *v, char **error)
{
	int i;

	for (i = 0; i < WOW_NR_POLICIES; i++) {
		if (!strcmp(v, policy_names[i])) {
			a->policy = i;
			return 0;
		}
	}
	*error = "Invalid policy: must be wow, cscan or lrw";
	return -EINVAL;
}

static int parse_low_watermark(struct wow_args *a, const char *v,
			       char **error)
{
	u32 n;

	if (parse_u32(v, &n) || n > 99) {
		*error = "Invalid low_watermark: must be a percentage from 0 to 99";
		return -EINVAL;
	}
	a->low_watermark_pct = n;
	return 0;
}

static int parse_high_watermark(struct wow_args *a, const char *v,
				char **error)
{
	u32 n;

	if (parse_u32(v, &n) || n < 1 || n > 100) {
		*error = "Invalid high_watermark: must be a percentage from 1 to 100";
		return -EINVAL;
	}
	a->high_watermark_pct = n;
	return 0;
}

static int parse_max_destage_ios(struct wow_args *a, const char *v,
				 char **error)
{
	u32 n;

	if (parse_u32(v, &n) || n < 1 || n > WOW_MAX_DESTAGE_IOS_LIMIT) {
		*error = "Invalid max_destage_ios: must be from 1 to 4096";
		return -EINVAL;
	}
	a->max_destage_ios = n;
	return 0;
}

static int parse_max_destage_size(struct wow_args *a, const char *v,
				  char **error)
{
	u32 n;

	if (parse_u32(v, &n) || n < WOW_MIN_BLOCK_SIZE ||
	    n > WOW_MAX_DESTAGE_SIZE_LIMIT) {
		*error = "Invalid max_destage_size: must be from block_size to 8 MiB";
		return -EINVAL;
	}
	a->max_destage_size = n;
	return 0;
}

static int parse_max_age(struct wow_args *a, const char *v, char **error)
{
	u32 n;

	if (parse_u32(v, &n) || n > WOW_MAX_AGE_LIMIT_S) {
		*error = "Invalid max_age: must be from 0 to 604800 seconds";
		return -EINVAL;
	}
	a->max_age_s = n;
	return 0;
}

static int parse_sequential_cutoff(struct wow_args *a, const char *v,
				   char **error)
{
	u64 n;

	if (parse_u64(v, &n) || n > WOW_SEQUENTIAL_CUTOFF_LIMIT) {
		*error = "Invalid sequential_cutoff: must be from 0 to 1 GiB";
		return -EINVAL;
	}
	a->sequential_cutoff = n;
	return 0;
}

struct wow_opt_desc {
	const char *name;
	bool has_value;
	bool runtime;		/* may be changed with a message */
	int (*parse)(struct wow_args *a, const char *v, char **error);
};

static const struct wow_opt_desc opt_descs[WOW_NR_OPTS] = {
	[WOW_OPT_BLOCK_SIZE] = { "block_size", true, false, parse_block_size },
	[WOW_OPT_ERASE_BLOCK_SIZE] = { "erase_block_size", true, false,
				       parse_erase_block_size },
	[WOW_OPT_WRITE_GROUP_SIZE] = { "write_group_size", true, false,
				       parse_write_group_size },
	[WOW_OPT_POLICY] = { "policy", true, false, parse_policy },
	[WOW_OPT_LOW_WATERMARK] = { "low_watermark", true, true,
				    parse_low_watermark },
	[WOW_OPT_HIGH_WATERMARK] = { "high_watermark", true, true,
				     parse_high_watermark },
	[WOW_OPT_MAX_DESTAGE_IOS] = { "max_destage_ios", true, true,
				      parse_max_destage_ios },
	[WOW_OPT_MAX_DESTAGE_SIZE] = { "max_destage_size", true, true,
				       parse_max_destage_size },
	[WOW_OPT_MAX_AGE] = { "max_age", true, true, parse_max_age },
	[WOW_OPT_SEQUENTIAL_CUTOFF] = { "sequential_cutoff", true, true,
					parse_sequential_cutoff },
	[WOW_OPT_CLEANER] = { "cleaner", false, false, NULL },
	[WOW_OPT_FORMAT] = { "format", false, false, NULL },
};

int wow_find_opt(const char *name)
{
	int i;

	for (i = 0; i < WOW_NR_OPTS; i++)
		if (!strcmp(name, opt_descs[i].name))
			return i;
	return -1;
}

const char *wow_opt_name(enum wow_opt id)
{
	return opt_descs[id].name;
}

bool wow_opt_has_value(enum wow_opt id)
{
	return opt_descs[id].has_value;
}

bool wow_opt_runtime(enum wow_opt id)
{
	return opt_descs[id].runtime;
}

int wow_parse_opt(struct wow_args *a, enum wow_opt id, const char *v,
		  char **error)
{
	if (!opt_descs[id].has_value) {
		*error = "Optional argument takes no value";
		return -EINVAL;
	}
	return opt_descs[id].parse(a, v, error);
}

/* Checks that involve more than one option. */
static int check_args(struct wow_args *a, char **error)
{
	if (a->erase_block_size < a->block_size * WOW_MIN_BLOCKS_PER_SEGMENT) {
		*error = "Invalid erase_block_size: must be at least 4 blocks";
		return -EINVAL;
	}
	if (a->write_group_size < a->block_size) {
		*error = "Invalid write_group_size: must be at least block_size";
		return -EINVAL;
	}
	if (a->max_destage_size < a->block_size ||
	    a->max_destage_size % a->block_size) {
		*error = "Invalid max_destage_size: must be a multiple of block_size";
		return -EINVAL;
	}
	if (a->low_watermark_pct >= a->high_watermark_pct) {
		*error = "Invalid watermarks: low_watermark must be below high_watermark";
		return -EINVAL;
	}
	return 0;
}

/*
 * Parse "<#opt_args> [<opt_args>...]" from @as, which must then be empty.
 * Only one of the watermarks named: the other is kept 10 points away, as the
 * WOW paper does.  On failure *error names the problem and @a is undefined.
 */
int wow_parse_opt_args(struct wow_args *a, struct dm_arg_set *as,
		       char **error)
{
	const char *count = dm_shift_arg(as);
	u32 nr;
	int r;

	if (!count || parse_u32(count, &nr)) {
		*error = "Invalid #opt_args: must be a number of words";
		return -EINVAL;
	}
	if (nr > as->argc) {
		*error = "Not enough optional arguments: #opt_args counts more words than follow";
		return -EINVAL;
	}
	if (nr < as->argc) {
		*error = "Too many arguments: more words follow than #opt_args counts";
		return -EINVAL;
	}

	while (as->argc) {
		const char *name = dm_shift_arg(as);
		const char *value = NULL;
		int id = wow_find_opt(name);

		if (id < 0) {
			*error = "Unrecognised optional argument";
			return -EINVAL;
		}
		if (a->set & BIT(id)) {
			*error = "Optional argument given twice";
			return -EINVAL;
		}
		a->set |= BIT(id);

		if (!opt_descs[id].has_value) {
			if (id == WOW_OPT_CLEANER)
				a->cleaner = true;
			else
				a->format = true;
			continue;
		}
		value = dm_shift_arg(as);
		if (!value) {
			*error = "Optional argument is missing its value";
			return -EINVAL;
		}
		r = opt_descs[id].parse(a, value, error);
		if (r)
			return r;
	}

	if ((a->set & BIT(WOW_OPT_HIGH_WATERMARK)) &&
	    !(a->set & BIT(WOW_OPT_LOW_WATERMARK)))
		a->low_watermark_pct = a->high_watermark_pct > 10 ?
				       a->high_watermark_pct - 10 : 0;
	if ((a->set & BIT(WOW_OPT_LOW_WATERMARK)) &&
	    !(a->set & BIT(WOW_OPT_HIGH_WATERMARK)))
		a->high_watermark_pct = min(a->low_watermark_pct + 10, 100U);

	return check_args(a, error);
}

/*
 * Change one runtime tunable ("<name> <value>" message).  @a changes only
 * when the new value passes every check.
 */
int wow_parse_tunable(struct wow_args *a, const char *name,
		      const char *value, char **error)
{
	struct wow_args tmp = *a;
	int id = wow_find_opt(name);
	int r;

	if (id < 0 || !opt_descs[id].runtime) {
		*error = "Not a runtime tunable";
		return -EINVAL;
	}
	r = opt_descs[id].parse(&tmp, value, error);
	if (r)
		return r;
	/* moving one watermark past the other moves the other along */
	if (tmp.low_watermark_pct >= tmp.high_watermark_pct) {
		if (id == WOW_OPT_HIGH_WATERMARK)
			tmp.low_watermark_pct = tmp.high_watermark_pct > 10 ?
						tmp.high_watermark_pct - 10 : 0;
		else if (id == WOW_OPT_LOW_WATERMARK)
			tmp.high_watermark_pct =
				min(tmp.low_watermark_pct + 10, 100U);
	}
	r = check_args(&tmp, error);
	if (r)
		return r;
	*a = tmp;
	return 0;
}

/*
 * The defaults that depend on the devices, once the table line is parsed.
 * With no write_group_size named, the group is @group_size (the origin's
 * optimal I/O size, a full RAID stripe; or the group a superblock already
 * holds) when that is a power of two from block_size to
 * WOW_MAX_WRITE_GROUP_SIZE, else WOW_DEFAULT_WRITE_GROUP_SIZE.  With no
 * max_destage_size named, it is at least one group (up to its limit), so a
 * group whose blocks are all dirty goes to the origin as one write: on
 * RAID-5 or 6, a full-stripe write with no read-modify-write.  @a stays
 * valid for check_args() either way; named options are never changed.
 */
void wow_args_set_group(struct wow_args *a, u32 group_size)
{
	if (!(a->set & BIT(WOW_OPT_WRITE_GROUP_SIZE))) {
		if (is_power_of_2(group_size) &&
		    group_size >= a->block_size &&
		    group_size <= WOW_MAX_WRITE_GROUP_SIZE)
			a->write_group_size = group_size;
		else
			a->write_group_size = WOW_DEFAULT_WRITE_GROUP_SIZE;
	}
	if (!(a->set & BIT(WOW_OPT_MAX_DESTAGE_SIZE)))
		a->max_destage_size = clamp(a->write_group_size,
					    WOW_DEFAULT_MAX_DESTAGE_SIZE,
					    WOW_MAX_DESTAGE_SIZE_LIMIT);
}

u64 wow_args_value(const struct wow_args *a, enum wow_opt id)
{
	switch (id) {
	case WOW_OPT_BLOCK_SIZE:
		return a->block_size;
	case WOW_OPT_ERASE_BLOCK_SIZE:
		return a->erase_block_size;
	case WOW_OPT_WRITE_GROUP_SIZE:
		return a->write_group_size;
	case WOW_OPT_POLICY:
		return a->policy;
	case WOW_OPT_LOW_WATERMARK:
		return a->low_watermark_pct;
	case WOW_OPT_HIGH_WATERMARK:
		return a->high_watermark_pct;
	case WOW_OPT_MAX_DESTAGE_IOS:
		return a->max_destage_ios;
	case WOW_OPT_MAX_DESTAGE_SIZE:
		return a->max_destage_size;
	case WOW_OPT_MAX_AGE:
		return a->max_age_s;
	case WOW_OPT_SEQUENTIAL_CUTOFF:
		return a->sequential_cutoff;
	case WOW_OPT_CLEANER:
		return a->cleaner;
	case WOW_OPT_FORMAT:
		return a->format;
	default:
		return 0;
	}
}

/*
 * Emit "<#opt_args> [<opt_args>...]" for the options the table line named,
 * with the values the constructor accepted, in a fixed order.  Returns the
 * number of characters written (as DMEMIT counts them).
 */
unsigned int wow_emit_opt_args(const struct wow_args *a, char *result,
			       unsigned int maxlen)
{
	unsigned int sz = 0, words = 0;
	int i;

	for (i = 0; i < WOW_NR_OPTS; i++)
		if (a->set & BIT(i))
			words += opt_descs[i].has_value ? 2 : 1;

	DMEMIT("%u", words);
	for (i = 0; i < WOW_NR_OPTS; i++) {
		if (!(a->set & BIT(i)))
			continue;
		DMEMIT(" %s", opt_descs[i].name);
		if (i == WOW_OPT_POLICY)
			DMEMIT(" %s", wow_policy_name(a->policy));
		else if (opt_descs[i].has_value)
			DMEMIT(" %llu",
			       (unsigned long long)wow_args_value(a, i));
	}
	return sz;
}
