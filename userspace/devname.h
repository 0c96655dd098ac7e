/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * devname: block devices by their names (devname.c).  The bottom of
 * libwow: it calls nothing of libwow.c or wowdev.c, which both call it.
 */
#ifndef WOW_DEVNAME_H
#define WOW_DEVNAME_H

#include <stdint.h>

/* The best link to @rdev in @dir, or NULL (caller frees). */
char *wow_dev_stable_path(const char *dir, uint64_t rdev);
/*
 * "MAJ:MIN" as the kernel names a table's device, as a path: its
 * /dev/disk/by-id link, else /dev/mapper/NAME or /dev/NAME (from sysfs),
 * with the numbers: "/dev/vdb (254:16)".  Anything else comes back as
 * it is.  Caller frees.
 */
char *wow_dev_describe(const char *majmin);

#endif
