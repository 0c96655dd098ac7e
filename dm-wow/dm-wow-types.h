/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow portable core: the types and helpers its pure files use.
 *
 * The pure files (dm-wow-ckpt.c, dm-wow-index.c, dm-wow-sb.c, ...)
 * include this header, not dm-wow.h, so the module and the userspace tools
 * build them unchanged.
 * In the kernel it is the kernel's own headers; in userspace,
 * userspace/wow-kernel-compat.h gives the same names the same meaning
 * (crc32c() as the kernel's: the raw Castagnoli update, no inversion).
 */
#ifndef DM_WOW_TYPES_H
#define DM_WOW_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/bitmap.h>
#include <linux/bsearch.h>
#include <linux/build_bug.h>
#include <linux/ctype.h>
#include <linux/crc32c.h>
#include <linux/errno.h>
#include <linux/hash.h>
#include <linux/limits.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <asm/byteorder.h>
#else
#include "../userspace/wow-kernel-compat.h"
#endif

#endif
