/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow superblock and health block codec (dm-wow-sb.c): encode, decode
 * and judge the first two blocks of a cache device (dm-wow-format.h), and
 * compare a superblock's geometry with a table line's.
 *
 * Part of the portable core: pure (no locking, no allocation, no I/O, any
 * context), built unchanged by the module and the userspace tools
 * (dm-wow-types.h).  dm-wow-super.c and dm-wow-core.c read and write the
 * blocks; wowctl judges an image with the same calls.
 */
#ifndef DM_WOW_SB_H
#define DM_WOW_SB_H

#include "dm-wow-types.h"
#include "dm-wow-format.h"

/* Geometry of one cache device, as the superblock records it. */
struct wow_geometry {
	u32 block_size;			/* bytes */
	u32 erase_block_size;		/* bytes */
	u32 write_group_size;		/* bytes */
	u64 origin_sectors;
	u64 cache_sectors;
	u64 first_segment_sector;
	u64 nr_segments;
};

struct wow_sb_info {
	struct wow_geometry geo;
	u32 version;		/* 1: no checkpoint; 2: in erase block 0 */
	u32 flags;
	u64 format_seq;
	u8 uuid[16];
	char origin_id[WOW_ORIGIN_ID_LEN];	/* NUL terminated; "" none */
};

/* What the first block of a cache device holds. */
enum wow_sb_kind {
	WOW_SB_ZERO,		/* all zeros: format on first use */
	WOW_SB_VALID,		/* a dm-wow superblock this code reads */
	WOW_SB_CORRUPT,		/* dm-wow magic, but checksum or fields bad */
	WOW_SB_NEWER,		/* dm-wow superblock of a later version */
	WOW_SB_FOREIGN,		/* anything else */
};

/* Encode @info as superblock @sb (every byte of it), sealed. */
void wow_sb_encode(struct wow_superblock *sb, const struct wow_sb_info *info);
/*
 * Classify the first @len bytes of a cache device (@len >= 512), in this
 * order: all zero (ZERO), another magic (FOREIGN), a bad checksum
 * (CORRUPT), a version above WOW_SB_VERSION (NEWER), version 0 (CORRUPT),
 * then a geometry no format writes (CORRUPT: block, erase block or write
 * group size out of range or not a power of 2, a segment count or first
 * segment that does not follow from the sizes, too few segments, no
 * origin).  @info is filled for VALID and for a bad geometry; @why says
 * what is wrong (NULL for VALID and ZERO).
 */
enum wow_sb_kind wow_sb_decode(const void *block, unsigned int len,
			       struct wow_sb_info *info, const char **why);
/*
 * NULL when a table's geometry matches the superblock's, else a message
 * for ti->error.  The cache device may have grown since format; the
 * superblock's segment count is what counts then.
 */
const char *wow_sb_geometry_mismatch(const struct wow_geometry *sb,
				     const struct wow_geometry *table);

/* The health block (dm-wow-format.h): what the last load should know. */
struct wow_health_info {
	u32 flags;		/* WOW_SB_F_NEEDS_CHECK */
	u32 state;		/* enum wow_state when written */
	u64 time;		/* seconds since 1970 */
	char what[WOW_HEALTH_WHAT_LEN];	/* NUL terminated */
};

/* Encode @h as the health block of cache @uuid, in all @len bytes. */
void wow_health_encode(void *block, unsigned int len, const u8 *uuid,
		       const struct wow_health_info *h);
/*
 * True when the @len bytes at @block hold a health block of the cache
 * with @uuid (its magic and uuid; whole or torn).
 */
bool wow_health_ours(const void *block, unsigned int len, const u8 *uuid);
/*
 * Decode the health block of the cache with @uuid into @h.  One that is
 * not ours (wow_health_ours) says nothing: all clear.  Ours with a bad
 * checksum or an unknown version was torn while an error was being
 * recorded: needs_check, what "(health block unreadable)".  Returns true
 * when @h says needs_check.
 */
bool wow_health_decode(const void *block, unsigned int len, const u8 *uuid,
		       struct wow_health_info *h);

#endif
