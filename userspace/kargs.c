// SPDX-License-Identifier: GPL-2.0
/* kargs: the kernel's table line options for libwow; kargs.h says how. */
#include <inttypes.h>
#include <stdio.h>

#include "../dm-wow/dm-wow-args.h"
#include "kargs.h"

int wow_kargs_find(const char *name)
{
	return wow_find_opt(name);
}

const char *wow_kargs_name(int id)
{
	return wow_opt_name(id);
}

bool wow_kargs_runtime(int id)
{
	return wow_opt_runtime(id);
}

uint64_t wow_kargs_default(int id)
{
	struct wow_args a;

	wow_args_init(&a);
	return wow_args_value(&a, id);
}

int wow_kargs_parse(int id, const char *value, uint64_t *v, const char **msg)
{
	char *error = NULL;
	struct wow_args a;
	int r;

	wow_args_init(&a);
	r = wow_parse_opt(&a, id, value, &error);
	if (r) {
		*msg = error;
		return r;
	}
	*v = wow_args_value(&a, id);
	return 0;
}

int wow_kargs_check(uint32_t set, const uint64_t *val, uint64_t *eff,
		    const char **msg)
{
	char vals[WOW_NR_OPTS][24], count[12], *error = NULL;
	char *words[1 + 2 * WOW_NR_OPTS] = { count };
	struct dm_arg_set as = { .argc = 1, .argv = words };
	struct wow_args a;
	int i, r;

	/* the table line's "<#opt_args> [<opt_args>...]", as the kernel gets it */
	for (i = 0; i < WOW_NR_OPTS; i++) {
		if (!(set & BIT(i)))
			continue;
		words[as.argc++] = (char *)wow_opt_name(i);
		if (!wow_opt_has_value(i))
			continue;
		if (i == WOW_OPT_POLICY)
			snprintf(vals[i], sizeof(vals[i]), "%s",
				 wow_policy_name(val[i]));
		else
			snprintf(vals[i], sizeof(vals[i]), "%" PRIu64, val[i]);
		words[as.argc++] = vals[i];
	}
	snprintf(count, sizeof(count), "%u", as.argc - 1);
	wow_args_init(&a);
	r = wow_parse_opt_args(&a, &as, &error);
	if (r) {
		*msg = error;
		return r;
	}
	for (i = 0; eff && i < WOW_NR_OPTS; i++)
		eff[i] = wow_args_value(&a, i);
	return 0;
}
