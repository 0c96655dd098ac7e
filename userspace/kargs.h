/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kargs: the kernel's table line options (dm-wow-args.c, built unchanged
 * here) in plain C types, for libwow.c, whose own names (libwow.h) would
 * clash with the kernel's.  An option is its enum wow_opt (dm-wow-opts.h,
 * the one list of ids both build with); a refusal comes back as the
 * kernel's own message.
 */
#ifndef WOW_KARGS_H
#define WOW_KARGS_H

#include <stdbool.h>
#include <stdint.h>

/* The option named @name, or -1 */
int wow_kargs_find(const char *name);
/* The kernel's name of option @id */
const char *wow_kargs_name(int id);
/* May option @id change on a live device (a "<name> <value>" message)? */
bool wow_kargs_runtime(int id);
/* Option @id when the table line does not name it */
uint64_t wow_kargs_default(int id);
/*
 * Option @id = @value (decimal, or a policy's name) against its limits
 * alone: 0 with the value in *@v (a policy: its id), or -EINVAL with the
 * kernel's message in *@msg.
 */
int wow_kargs_parse(int id, const char *value, uint64_t *v, const char **msg);
/*
 * The options in @set (a bit per id) with the values @val (a policy: its
 * id; a flag's value unused), the others their defaults, as the kernel's
 * constructor takes them: each checked, only one of the watermarks named
 * moves the other, then the checks across options.  0 with every option's
 * value in @eff (may be NULL), or -EINVAL with the kernel's message.
 */
int wow_kargs_check(uint32_t set, const uint64_t *val, uint64_t *eff,
		    const char **msg);

#endif
