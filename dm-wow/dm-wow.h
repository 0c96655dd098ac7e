/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow: a persistent write-back cache with WOW destage ordering.
 *
 * Shared types and, one section per file, the functions each file offers.
 */
#ifndef DM_WOW_H
#define DM_WOW_H

#include <linux/types.h>
#include <linux/bio.h>
#include <linux/device-mapper.h>
#include <linux/completion.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/mempool.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "dm-wow-format.h"
#include "dm-wow-index.h"
#include "dm-wow-args.h"
#include "dm-wow-chain.h"
#include "dm-wow-ckpt.h"
#include "dm-wow-record.h"
#include "dm-wow-sb.h"
#include "dm-wow-tombs.h"
#include "dm-wow-policy.h"

#define DM_MSG_PREFIX "wow"

/* dm-wow-index.c, origin block -> cache slot (pure): dm-wow-index.h */

/* dm-wow-sb.c, the superblock and health block codec (pure): dm-wow-sb.h */

/* dm-wow-ckpt.c, the checkpoint codec (pure): dm-wow-ckpt.h */

/* dm-wow-ckptread.c, the checkpoint reader (pure): dm-wow-ckptread.h */

/* dm-wow-super.c, the superblock's geometry and metadata I/O: dm-wow-super.h */

/* dm-wow-checkpoint.c, checkpoint I/O: dm-wow-checkpoint.h */

/* dm-wow-record.c, the record header codec (pure): dm-wow-record.h */

/* ---- the cache: shared by dm-wow-{target,log,destage}.c ---- */

/* Most data bytes in one log record. */
#define WOW_RECORD_DATA_BYTES	SZ_1M
/*
 * Destage progress: clean marks waiting for a record, at most this many
 * ranges; a record of marks alone is written once half of them are taken
 * or the oldest has waited WOW_MARKS_DUE_MS.
 */
#define WOW_CLEAN_MARKS		256U
/* clean blocks marked at a clean shutdown: with checkpoints, and without */
#define WOW_SHUTDOWN_MARKS	(1024U * 1024)
#define WOW_SHUTDOWN_MARKS_V1	(64U * 1024 * 1024)
#define WOW_MARKS_DUE_MS	1000U
/* Recovery reads a segment in windows of this much (or the segment). */
#define WOW_SCAN_WINDOW_BYTES	SZ_2M
/* Free segments only reclaim's own records may use. */
#define WOW_RESERVE_SEGMENTS	2U
/* Destage at full rate after this long without foreground I/O. */
#define WOW_IDLE_MS		1000U
/* Period of the housekeeping tick. */
#define WOW_TICK_MS		100U
/*
 * Destage writes kept in flight below the low watermark for runs that
 * continue the previous destage write (a sequential stream).
 */
#define WOW_SEQ_QUEUE		2U
/*
 * Lazy recycling: outside an emergency, cleaning takes a victim only when
 * at least this share of it comes free (its dirty blocks are copied): at
 * 80%, a freed block costs at most a quarter of a block copied.  While the
 * log is short and no segment qualifies, destage runs at full rate
 * (wow_clean_starved) until one does.
 */
#define WOW_CLEAN_MIN_FREE_PCT	80U
/*
 * Once free segments are down to the reserve plus one (urgent) and none
 * came free for WOW_CLEAN_URGENT_MS, a victim needs only this much free;
 * after five times that, anything that gains space (dm-wow-clean.c).
 */
#define WOW_CLEAN_URGENT_FREE_PCT	50U
#define WOW_CLEAN_URGENT_MS		1000U
/* max_destage_ios counted up to this when the reserves are sized. */
#define WOW_RESERVE_IOS		256U
/* Copies (reads of a victim's dirty blocks, then records) in flight. */
#define WOW_CLEAN_COPIES	2U
/* Ticks per adaptation of the destage thresholds. */
#define WOW_ADAPT_TICKS		10U
/* Wait before retrying destage after an origin error. */
#define WOW_ORIGIN_RETRY_MS	1000U

enum wow_state {
	WOW_STATE_OK,
	WOW_STATE_READ_ONLY,
	WOW_STATE_FAILED,
};

/* dm-wow-tombs.c, tombstone lifetime and envelope (pure): dm-wow-tombs.h */

/* dm-wow-victim.c, which closed segment cleaning frees next: dm-wow-victim.h */

/* dm-wow-pace.c, how fast the log admits data: dm-wow-pace.h */

/* A reclaim request to the log: write these tombstones durably. */
struct wow_meta {
	struct list_head list;
	struct wow_tomb_range *tombs;
	u32 nr_tombs;
	u32 done_tombs;		/* already written */
	u32 victim;		/* segment being freed, or WOW_NO_SEG */
	/*
	 * A victim's: its first nr_own tombstones kill its current copies,
	 * in slot order, the k-th up to its slot own_last[k]; the first
	 * nr_dropped of them are written and their copies dropped (a meta
	 * larger than a record is written over several).
	 */
	u32 nr_own;
	u32 nr_dropped;
	u32 *own_last;
	struct completion *done;	/* completed when written (or not) */
	int error;
};

/*
 * Blocks cleaning copies forward out of a victim segment: read from the
 * cache (dm-wow-clean.c), then appended by the log as ordinary record data
 * ahead of the writes of the same record.  From the read until the record
 * is finished the blocks are held from the policy and their slots marked
 * DESTAGING, so no destage run takes them and a write or discard of one
 * is seen: a block no longer at its slot when the record is gathered is
 * left out.
 */
struct wow_copy {
	struct list_head list;
	struct wow_cache *wc;
	u32 nr;			/* blocks */
	u32 nr_live;		/* not left out, as of the last pruning */
	atomic_t pending;	/* read bios in flight */
	blk_status_t status;	/* a read failed */
	bool pooled;		/* from copy_pool */
	u32 nr_pages;
	struct page **pages;	/* the blocks' data, back to back */
	u64 *oblocks;
	u32 *slots;		/* where each was read; WOW_NO_SLOT: left out */
	u32 *crcs;		/* of the blocks read (wow_log_check_blocks) */
	/* oblocks, pages, slots and crcs live in the same allocation */
};

struct wow_stats {
	atomic64_t read_hits;
	atomic64_t read_misses;
	atomic64_t write_hits;
	atomic64_t write_misses;
	atomic64_t writes_bypassed;
	atomic64_t destage_writes;
	atomic64_t destage_blocks;
	atomic64_t merged_blocks;
	atomic64_t commits;
	atomic64_t flushes;
	atomic64_t discards;
	atomic64_t reclaimed_segments;
	atomic64_t copied_blocks;	/* by cleaning */
	atomic64_t log_blocks;		/* written by the log: headers, data */
	atomic64_t origin_errors;
	atomic64_t cache_errors;
	atomic64_t bad_blocks;		/* cached blocks not matching their crc */
	atomic64_t seek_sectors;	/* sum of origin distances */
};

/*
 * Writes that bypassed the cache against the origin flushes that made them
 * durable.  A flush covers the writes that completed before it was
 * issued, and only once it has succeeded: a committer takes the count
 * before it issues the flush (wow_flush_gen_begin) and records it after
 * success (wow_flush_gen_end).  A second committer while that flush is in
 * flight still finds the writes unflushed and flushes too: clearing a
 * flag before the flush ended once let it acknowledge a FLUSH whose
 * bypassed writes the origin had not yet made durable.  Lock held.
 */
struct wow_flush_gen {
	u64 done;			/* writes completed */
	u64 flushed;			/* of them, covered by a flush done */
};

static inline void wow_flush_gen_write(struct wow_flush_gen *g)
{
	g->done++;
}

/* Before an origin flush: what it would cover; 0 when none is needed. */
static inline u64 wow_flush_gen_begin(const struct wow_flush_gen *g)
{
	return g->done > g->flushed ? g->done : 0;
}

/* The flush begun at @gen succeeded. */
static inline void wow_flush_gen_end(struct wow_flush_gen *g, u64 gen)
{
	if (gen > g->flushed)
		g->flushed = gen;
}

/*
 * One cache.  Each section names the part that owns its fields: only that
 * part's files write them (scripts/ownership.py checks it); the others
 * read them, under the lock where the field says so, and change them
 * through the owner's functions.  Parts: target (dm-wow-target.c), core
 * (dm-wow-core.c, the index), log (dm-wow-log.c, dm-wow-seg.c,
 * dm-wow-ckptlog.c, dm-wow-recover.c), destage (dm-wow-destage.c), clean
 * (dm-wow-clean.c).
 */
struct wow_segs;
struct wow_ckptlog;
struct wow_commit;
struct wow_destage;
struct wow_clean;

struct wow_cache {
	/* owner: target (constructor, messages, map) */
	struct dm_target *ti;
	struct dm_dev *origin_dev;
	struct dm_dev *cache_dev;
	struct workqueue_struct *wq;
	spinlock_t lock;		/* everything below, unless noted */
	struct wow_args args;
	bool cleaner;
	bool loaded;			/* preresume formatted or recovered */
	bool needs_format;		/* ctr: format at first preresume */
	/* every write's stream, at map: for the cutoff and the policy */
	struct wow_streams streams;
	unsigned long last_io;		/* jiffies of the last user bio */

	/* owner: core (the error latch, background I/O) */
	enum wow_state state;
	/*
	 * What the health block says: WOW_SB_F_NEEDS_CHECK since an error was
	 * latched, here or before this load
	 */
	struct wow_health_info health;
	struct work_struct health_work;	/* writes it */
	struct bio_set bg_bs;		/* cache reads, origin writes, flushes */
	mempool_t page_pool;		/* reserve of data pages */
	/* data pages kept for reuse (wow_bg_page_alloc), under kept_lock */
	spinlock_t kept_lock;
	struct page **kept_pages;
	u32 nr_kept;
	/*
	 * woken as background work ends (destage runs, the log's records and
	 * checkpoints, cleaning's copies); suspend and the log wait on it
	 */
	wait_queue_head_t idle_wait;

	/* owner: log (segments, group commit, checkpoints, recovery) */
	struct wow_sb_info sb;
	u32 block_shift;		/* log2(block_size / 512) */
	u32 blocks_per_seg;
	u32 nr_segments;
	u32 nr_slots;
	u32 max_record_blocks;		/* data blocks per record */
	/* the segment table: dm-wow-seg.c's alone (dm-wow-seg.h) */
	struct wow_segs *segs;
	/* the index and the policy change only through their own functions */
	struct wow_index index;
	struct wow_policy policy;
	u64 dirty_blocks;
	u64 valid_blocks;
	u64 next_seq;
	u64 completed_seq;		/* newest record completed */
	u64 durable_seq;		/* every record <= this is durable */
	u64 load_dropped;		/* records the last load dropped */
	u64 load_bytes;			/* metadata the last load read */
	bool load_from_ckpt;		/* it read the checkpoint */
	/* the checkpoints: dm-wow-ckptlog.c's alone (dm-wow-ckptlog.h) */
	struct wow_ckptlog *ckptlog;
	u32 chain_next;			/* next_seg of the last record */
	/*
	 * group commit (queues, the record being written, clean marks,
	 * pacing): dm-wow-log.c's alone (dm-wow-log.h); its worker stays
	 * here, which the checkpoints, cleaning and destage queue
	 */
	struct wow_commit *commit;
	struct work_struct commit_work;

	/*
	 * owner: destage (rate, runs, the origin flush): its state is opaque,
	 * dm-wow-destage.c's alone (dm-wow-destage.h); what stays here is read
	 * by parts that may not call destage (dm-wow-destage.h says who)
	 */
	struct wow_destage *destage;
	bool stopped;			/* suspended: no destage, no cleaning */
	struct wow_thresholds thresh;	/* current destage thresholds */
	struct work_struct destage_work;	/* its worker: wow_kick() queues it */

	/*
	 * owner: clean (victims, copies): its state is opaque, dm-wow-clean.c's
	 * alone (dm-wow-clean.h)
	 */
	struct wow_clean *clean;

	/* owner: any (atomic counters: each part counts what it does) */
	struct wow_stats stats;
};

#define WOW_NO_SEG	U32_MAX

static inline u32 wow_slot_seg(struct wow_cache *wc, u32 slot)
{
	return slot / wc->blocks_per_seg;
}

static inline sector_t wow_slot_sector(struct wow_cache *wc, u32 slot)
{
	return wc->sb.geo.first_segment_sector +
	       ((sector_t)slot << wc->block_shift);
}

static inline u64 wow_bio_oblock(struct wow_cache *wc, struct bio *bio)
{
	return dm_target_offset(wc->ti, bio->bi_iter.bi_sector) >>
	       wc->block_shift;
}

static inline u32 wow_bio_blocks(struct wow_cache *wc, struct bio *bio)
{
	return bio_sectors(bio) >> wc->block_shift;
}

/*
 * Per-bio data.  The target writes it at map; the log reads a logged
 * write's stream verdict when it inserts the write.
 */
struct wow_io {
	u32 seg;		/* a cached read pins this segment */
	bool bypass;		/* a write sent straight to the origin */
	bool sequential;	/* a write continues a stream (wow_streams) */
};

static inline struct wow_io *wow_bio_io(struct bio *bio)
{
	return dm_per_bio_data(bio, sizeof(struct wow_io));
}

static inline const char *wow_name(struct wow_cache *wc)
{
	return dm_table_device_name(wc->ti->table);
}

/* Free segments below this start cleaning: lazy, but never too late. */
static inline u32 wow_reclaim_threshold(struct wow_cache *wc)
{
	return WOW_RESERVE_SEGMENTS + 2 + wc->nr_segments / 32;
}

/*
 * Dirty occupancy, in basis points, as the destage rate sees it: dirty
 * blocks over the blocks the log can hold while keeping the free segments
 * cleaning starts at.  Partly stale segments are cleaning's to free (it
 * copies their dirty blocks forward), so they do not count (lock held).
 */
static inline u32 wow_occupancy_bp(struct wow_cache *wc)
{
	u32 usable = wc->nr_segments - min(wc->nr_segments - 1,
					   wow_reclaim_threshold(wc));
	u64 blocks = div64_u64(wc->dirty_blocks * 10000,
			       (u64)usable * wc->blocks_per_seg);

	return min_t(u64, blocks, 10000);
}

/* ---- dm-wow-core.c: the error latch, the kick, background I/O ---- */

void wow_latch_check(struct wow_cache *wc, const char *what);
void wow_error(struct wow_cache *wc, enum wow_state state, const char *what,
	       int err);
void wow_health_load(struct wow_cache *wc, const void *blk);
bool wow_health_reload(struct wow_cache *wc);
void wow_kick(struct wow_cache *wc);
int wow_policy_refill(struct wow_cache *wc, u32 n);
int wow_core_alloc(struct wow_cache *wc);
void wow_core_free(struct wow_cache *wc);
struct page *wow_bg_page_alloc(struct wow_cache *wc);
void wow_bg_pages_free(struct wow_cache *wc, struct page **pages, u32 n);
void *wow_bg_struct_alloc(mempool_t *pool, size_t bytes, bool *pooled);
void wow_bg_struct_free(mempool_t *pool, void *p, bool pooled);
struct bio *wow_bg_bio(struct wow_cache *wc, struct block_device *bdev,
		       blk_opf_t opf, struct page **pages, u32 off, u32 len);
void wow_bg_read(struct wow_cache *wc, const u32 *slots, u32 nr,
		 struct page **pages, atomic_t *pending, bio_end_io_t *end_io,
		 void *private);
int wow_cmp_u64(const void *a, const void *b);

/* dm-wow-destage.c, rate, runs, merging, origin writes: dm-wow-destage.h */

/* dm-wow-clean.c, cleaning (victims, copy-forward): dm-wow-clean.h */

#endif /* DM_WOW_H */
