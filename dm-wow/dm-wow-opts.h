/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow table line options: their ids, in the order dm-wow-args.c's table
 * lists them.  The one list the module (dm-wow-args.h) and libwow
 * (userspace/libwow.h) both number options by; no includes, so userspace
 * takes it without the kernel's other names.
 */
#ifndef DM_WOW_OPTS_H
#define DM_WOW_OPTS_H

/* Also the bits of wow_args.set: which options the table line named. */
enum wow_opt {
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
	WOW_NR_OPTS,
};

#endif
