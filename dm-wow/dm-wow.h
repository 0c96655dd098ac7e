/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow: a persistent write-back cache with WOW destage ordering.
 *
 * Shared types and, one section per file, the functions each file offers.
 */
#ifndef DM_WOW_H
#define DM_WOW_H

#include <linux/types.h>
#include <linux/device-mapper.h>

#include "dm-wow-format.h"

#define DM_MSG_PREFIX "wow"

/*
 * Distinct block spaces.  An origin block number indexes the origin in
 * block_size units; a cache block number indexes the whole cache device in
 * block_size units; a segment number indexes log segments.  The wrappers
 * make mixing them a compile-time error.
 */
typedef struct { u64 v; } oblock_t;
typedef struct { u64 v; } cblock_t;
typedef struct { u32 v; } segno_t;

static inline oblock_t to_oblock(u64 v) { return (oblock_t){ v }; }
static inline u64 from_oblock(oblock_t b) { return b.v; }
static inline cblock_t to_cblock(u64 v) { return (cblock_t){ v }; }
static inline u64 from_cblock(cblock_t b) { return b.v; }
static inline segno_t to_segno(u32 v) { return (segno_t){ v }; }
static inline u32 from_segno(segno_t s) { return s.v; }

/* ---- dm-wow-args.c: table line options ---- */

enum wow_policy_id {
	WOW_POLICY_WOW,
	WOW_POLICY_CSCAN,
	WOW_POLICY_LRW,
	WOW_NR_POLICIES,
};

/* Bits of wow_args.set: which options the table line named. */
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

/* Defaults, chosen in Documentation/dm-wow.rst. */
#define WOW_DEFAULT_BLOCK_SIZE		4096U
#define WOW_DEFAULT_ERASE_BLOCK_SIZE	1048576U
#define WOW_DEFAULT_WRITE_GROUP_SIZE	131072U
#define WOW_DEFAULT_LOW_WATERMARK_PCT	80U
#define WOW_DEFAULT_HIGH_WATERMARK_PCT	90U
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
int wow_parse_opt_args(struct wow_args *a, struct dm_arg_set *as,
		       char **error);
int wow_parse_tunable(struct wow_args *a, const char *name,
		      const char *value, char **error);
unsigned int wow_emit_opt_args(const struct wow_args *a, char *result,
			       unsigned int maxlen);

/* ---- dm-wow-index.c: origin block -> cache slot ---- */

#define WOW_NO_SLOT		U32_MAX
#define WOW_MAX_SLOTS		(U32_MAX - 1)
#define WOW_MAX_OBLOCK		((1ULL << 48) - 1)

/* wow_slot.flags */
#define WOW_SLOT_VALID		0x0001	/* the current copy of its block */
#define WOW_SLOT_DIRTY		0x0002	/* not yet durable on the origin */
#define WOW_SLOT_DESTAGING	0x0004	/* a destage write is in flight */

/* 12 bytes: a 48-bit origin block, flags, and the hash chain link. */
struct wow_slot {
	u32 ob_lo;
	u16 ob_hi;
	u16 flags;
	u32 next;
};

struct wow_index {
	u32 nr_slots;
	u32 nr_valid;
	unsigned int hash_bits;
	u32 *heads;
	struct wow_slot *slots;
};

static inline oblock_t wow_slot_oblock(const struct wow_slot *sl)
{
	return to_oblock(((u64)sl->ob_hi << 32) | sl->ob_lo);
}

static inline void wow_slot_set_oblock(struct wow_slot *sl, oblock_t b)
{
	sl->ob_lo = lower_32_bits(from_oblock(b));
	sl->ob_hi = upper_32_bits(from_oblock(b));
}

static inline void wow_slot_clear(struct wow_slot *sl)
{
	sl->ob_lo = 0;
	sl->ob_hi = 0;
	sl->flags = 0;
	sl->next = WOW_NO_SLOT;
}

int wow_index_init(struct wow_index *ix, u32 nr_slots);
void wow_index_exit(struct wow_index *ix);
u32 wow_index_lookup(struct wow_index *ix, oblock_t b);
u32 wow_index_insert(struct wow_index *ix, oblock_t b, u32 slot, u16 flags);
void wow_index_remove(struct wow_index *ix, u32 slot);

/* ---- dm-wow-super.c: the superblock ---- */

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
	u32 flags;
	u64 format_seq;
	u8 uuid[16];
};

/* What the first block of a cache device holds. */
enum wow_sb_kind {
	WOW_SB_ZERO,		/* all zeros: format on first use */
	WOW_SB_VALID,		/* a dm-wow superblock this code reads */
	WOW_SB_CORRUPT,		/* dm-wow magic, but checksum or fields bad */
	WOW_SB_NEWER,		/* dm-wow superblock of a later version */
	WOW_SB_FOREIGN,		/* anything else */
};

void wow_geometry_init(struct wow_geometry *g, const struct wow_args *a,
		       u64 origin_sectors, u64 cache_sectors);
void wow_sb_encode(struct wow_superblock *sb, const struct wow_sb_info *info);
enum wow_sb_kind wow_sb_decode(const void *block, unsigned int len,
			       struct wow_sb_info *info, const char **why);
const char *wow_sb_geometry_mismatch(const struct wow_geometry *sb,
				     const struct wow_geometry *table);
int wow_sync_io(struct block_device *bdev, sector_t sector, void *buf,
		unsigned int len, blk_opf_t opf);

#endif /* DM_WOW_H */
