/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the kernel's API moved between the kernels dm-wow builds and is
 * tested on: Debian 12's 6.1 and 6.12, and trixie-backports' 7.2 and 7.3
 * (tests/vm/kernel-bpo.sh).  One source tree: each difference
 * is settled here once, named for the kernel version that brought it, and
 * the code uses the wow_ / WOW_ name.  Tested where a feature macro tells
 * (no LINUX_VERSION_CODE: a distribution kernel may carry a change back).
 */
#ifndef DM_WOW_COMPAT_H
#define DM_WOW_COMPAT_H

#include <linux/blkdev.h>
#include <linux/fs.h>

/*
 * Linux 6.5 ("block: replace fmode_t with a block-specific type for block
 * open flags"): dm_table_get_mode() returns, and dm_get_device() takes, a
 * blk_mode_t, whose write bit is BLK_OPEN_WRITE (FMODE_WRITE before).  The
 * bits are equal, but sparse holds the two types apart (6.12 and 7.x:
 * "incorrect type in initializer").
 */
#ifdef BLK_OPEN_WRITE
#define wow_open_mode_t	blk_mode_t
#define WOW_OPEN_WRITE	BLK_OPEN_WRITE
#else
#define wow_open_mode_t	fmode_t
#define WOW_OPEN_WRITE	FMODE_WRITE
#endif

#endif /* DM_WOW_COMPAT_H */
