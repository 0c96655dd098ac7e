// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow destage: the rate, runs, merging and the origin writes.
 *
 * Destage takes runs of contiguous dirty blocks from the policy, and for
 * each: reads the blocks from the cache, writes them to the origin as one
 * write, and once a batch of origin writes completed, flushes the origin
 * and only then records the blocks clean.  Before the first cache read of
 * new runs the cache device is flushed if records completed since its last
 * flush, so nothing is destaged whose log record could still be lost.
 *
 * Cleaning (dm-wow-clean.c) frees the log's segments; destage only makes
 * their blocks clean (through the log: wow_log_block_clean).  The destage
 * worker also runs cleaning; the log and the target wake it with
 * wow_kick() and never call into destage.
 *
 * Its state, struct wow_destage, is defined here alone (wc->destage);
 * the target calls dm-wow-destage.h.
 *
 * Locking: wc->lock guards the run lists and counts, the origin flush
 * state, and what the log, the index and the policy own; cache reads,
 * origin writes and allocations happen outside it.  One destage worker
 * runs at a time (wc->destage_work); completions only move runs between
 * lists under the lock and kick it.
 */
#include <linux/blkdev.h>
#include <linux/jiffies.h>
#include <linux/slab.h>

#include "dm-wow.h"
#include "dm-wow-clean.h"
#include "dm-wow-destage.h"
#include "dm-wow-log.h"
#include "dm-wow-seg.h"

static void wow_tick(struct work_struct *ws);
static void wow_destage_work(struct work_struct *ws);

/* Destage's state (wc->destage): under wc->lock unless noted. */
struct wow_destage {
	struct wow_cache *wc;
	u32 peak_bp;			/* peak dirty occupancy this period */
	u32 ticks;
	mempool_t run_pool;		/* reserve of run structs */
	u32 reserve_run_blocks;		/* the longest run the reserve holds */
	/* full-size runs kept for reuse (alloc_run), under kept_runs_lock */
	spinlock_t kept_runs_lock;
	struct list_head kept_runs;
	u32 nr_kept_runs;
	/* (destage worker only) a run found no memory: runs the reserve holds */
	bool destage_lowmem;
	struct delayed_work tick;
	struct list_head runs_read;	/* runs reading, in policy order */
	struct list_head runs_written;	/* origin writes done */
	struct list_head runs_flushing;	/* covered by the origin flush */
	bool origin_flush_inflight;
	bool origin_flush_done;
	blk_status_t origin_flush_status;
	u32 runs_inflight;
	u32 runs_unflushed;		/* written, waiting for the flush */
	unsigned long origin_retry_at;
	u64 last_destage_end;		/* sector after the last destage */
	bool destaged;			/* there was a last destage */
	unsigned long oldest_dirty;	/* jiffies: oldest dirty segment */
};

struct wow_run {
	struct list_head list;
	struct wow_cache *wc;
	u64 start;			/* origin block */
	u32 nr;
	atomic_t pending;		/* bios in flight */
	bool read_done;			/* every cache read completed */
	blk_status_t status;
	bool pooled;			/* the struct came from run_pool */
	u32 cap;			/* blocks it has room for */
	u32 nr_pages;
	struct page **pages;		/* in the same allocation, after slots */
	u32 *crcs;			/* of the blocks read; after pages */
	u32 slots[];
};

#ifdef WOW_TEST_HOOKS
/*
 * Test builds only: no device counts as idle, so a scenario holds destage
 * back below the low watermark without keeping the device busy in time
 * (a loaded VM can let a second pass between two of its reads).
 */
static bool test_never_idle;
module_param(test_never_idle, bool, 0644);
MODULE_PARM_DESC(test_never_idle,
		 "test builds: no device counts as idle (no idle destage)");
#define never_idle() READ_ONCE(test_never_idle)
#else
#define never_idle() false
#endif

static bool device_idle(struct wow_cache *wc)
{
	return !never_idle() &&
	       time_after(jiffies, READ_ONCE(wc->last_io) +
			  msecs_to_jiffies(WOW_IDLE_MS));
}

/*
 * Destage writes to keep in flight: none below the low watermark, all
 * (max_destage_ios) at or above the high one, linear in between; all when
 * the device is idle, in cleaner mode, degraded (drain what we can), or
 * when the log is short and no segment is cheap to clean (destage makes
 * them cheap: wow_clean_starved).  Lock held.
 */
static u32 wow_destage_target(struct wow_cache *wc, bool idle)
{
	struct wow_destage *ds = wc->destage;
	u32 max = wc->args.max_destage_ios;

	lockdep_assert_held(&wc->lock);
	if (wc->stopped || !wc->dirty_blocks ||
	    time_before(jiffies, ds->origin_retry_at))
		return 0;
	if (wc->cleaner || idle || wc->state != WOW_STATE_OK ||
	    wow_clean_starved(wc))
		return max;
	if (wc->args.max_age_s &&
	    time_after(jiffies, ds->oldest_dirty +
		       (unsigned long)wc->args.max_age_s * HZ))
		return max;
	return wow_rate(wow_occupancy_bp(wc), &wc->thresh, max);
}

/*
 * Run structs come from the allocator while it has them, else from a
 * reserve of max_destage_ios (up to WOW_RESERVE_IOS) runs of
 * max_destage_size, so one run (cut to the reserve's size when memory is
 * short) can always start; their pages and bios are the core's
 * (dm-wow-core.c).  Up to WOW_KEPT_RUNS full-size runs the allocator gave
 * are kept for reuse instead of freed: a run of max_destage_size is some
 * KiB, which the slab zeroes on every allocation (kzalloc, and
 * init_on_alloc besides), while reuse clears only the struct's head.
 */
#define WOW_KEPT_RUNS	16

static size_t run_bytes(u32 blocks, u32 bs)
{
	/* slots[], then (pointer aligned) the page pointers, then crcs[] */
	return sizeof(struct wow_run) + ALIGN(blocks, 2) * sizeof(u32) +
	       DIV_ROUND_UP(blocks * bs, PAGE_SIZE) * sizeof(struct page *) +
	       blocks * sizeof(u32);
}

int wow_destage_alloc(struct wow_cache *wc)
{
	u32 bs = wc->args.block_size;
	u32 ios = min(wc->args.max_destage_ios, WOW_RESERVE_IOS);
	u32 blocks = wc->args.max_destage_size / bs;
	struct wow_destage *ds;

	ds = kzalloc(sizeof(*ds), GFP_KERNEL);
	if (!ds)
		return -ENOMEM;
	wc->destage = ds;
	ds->wc = wc;
	ds->reserve_run_blocks = blocks;
	INIT_LIST_HEAD(&ds->runs_read);
	INIT_LIST_HEAD(&ds->runs_written);
	INIT_LIST_HEAD(&ds->runs_flushing);
	INIT_WORK(&wc->destage_work, wow_destage_work);
	INIT_DELAYED_WORK(&ds->tick, wow_tick);
	wc->stopped = true;
	ds->oldest_dirty = jiffies;
	spin_lock_init(&ds->kept_runs_lock);
	INIT_LIST_HEAD(&ds->kept_runs);
	wow_thresholds_init(&wc->thresh, wc->args.low_watermark_pct,
			    wc->args.high_watermark_pct);
	return mempool_init_kmalloc_pool(&ds->run_pool, ios,
					 run_bytes(blocks, bs));
}

void wow_destage_free(struct wow_cache *wc)
{
	struct wow_destage *ds = wc->destage;
	struct wow_run *run, *tmp;

	/* (none when the table failed before wow_destage_alloc) */
	if (!ds)
		return;
	list_for_each_entry_safe(run, tmp, &ds->kept_runs, list)
		kfree(run);
	mempool_exit(&ds->run_pool);
	kfree(ds);
	wc->destage = NULL;
}

/* A run's full size: max_destage_size. */
static u32 full_run_blocks(struct wow_cache *wc)
{
	return wc->args.max_destage_size / wc->args.block_size;
}

static void free_run(struct wow_run *run)
{
	struct wow_cache *wc = run->wc;
	struct wow_destage *ds = wc->destage;
	unsigned long flags;
	bool kept = false;

	wow_bg_pages_free(wc, run->pages, run->nr_pages);
	if (!run->pooled && run->cap == full_run_blocks(wc)) {
		spin_lock_irqsave(&ds->kept_runs_lock, flags);
		if (ds->nr_kept_runs < WOW_KEPT_RUNS) {
			list_add(&run->list, &ds->kept_runs);
			ds->nr_kept_runs++;
			kept = true;
		}
		spin_unlock_irqrestore(&ds->kept_runs_lock, flags);
	}
	if (!kept)
		wow_bg_struct_free(&ds->run_pool, run, run->pooled);
}

/*
 * A kept run with room for @cap blocks, its head cleared; NULL if none is
 * kept.  One kept before max_destage_size changed (set_option) has room
 * for the old size only: it is freed, never handed out for the new one.
 */
static struct wow_run *kept_run(struct wow_cache *wc, u32 cap)
{
	struct wow_destage *ds = wc->destage;
	struct wow_run *run;
	unsigned long flags;

	spin_lock_irqsave(&ds->kept_runs_lock, flags);
	run = list_first_entry_or_null(&ds->kept_runs, struct wow_run, list);
	if (run) {
		list_del(&run->list);
		ds->nr_kept_runs--;
	}
	spin_unlock_irqrestore(&ds->kept_runs_lock, flags);
	if (run && run->cap != cap) {
		kfree(run);
		run = NULL;
	}
	if (run)
		memset(run, 0, sizeof(*run));
	return run;
}

/*
 * A run of at most *@max_blocks blocks; from the reserve (and *@max_blocks
 * cut to its size) when the allocator has nothing.
 */
static struct wow_run *alloc_run(struct wow_cache *wc, u32 *max_blocks)
{
	struct wow_destage *ds = wc->destage;
	u32 bs = wc->args.block_size, cap = *max_blocks;
	struct wow_run *run = NULL;
	bool pooled = false;

	if (cap == full_run_blocks(wc))
		run = kept_run(wc, cap);
	if (!run)
		run = wow_bg_struct_alloc(&ds->run_pool, run_bytes(cap, bs),
					  &pooled);
	if (!run)
		return NULL;
	if (pooled) {
		cap = min(cap, ds->reserve_run_blocks);
		memset(run, 0, run_bytes(cap, bs));
	}
	run->wc = wc;
	run->cap = cap;
	run->pooled = pooled;
	run->pages = (struct page **)&run->slots[ALIGN(cap, 2)];
	run->crcs = (u32 *)(run->pages + DIV_ROUND_UP(cap * bs, PAGE_SIZE));
	*max_blocks = cap;
	return run;
}

/* The buffer for the run's blocks, once its length is known. */
static int alloc_run_pages(struct wow_cache *wc, struct wow_run *run)
{
	u32 n = DIV_ROUND_UP(run->nr * wc->args.block_size, PAGE_SIZE), i;

	/* nr_pages counts the pages got (a reused run's array is not zeroed) */
	for (i = 0; i < n; i++) {
		run->pages[i] = wow_bg_page_alloc(wc);
		if (!run->pages[i])
			return -ENOMEM;
		run->nr_pages = i + 1;
	}
	return 0;
}

/* A bio of @run completed: the run, if it was the last one, else NULL. */
static struct wow_run *run_bio_done(struct bio *bio)
{
	struct wow_run *run = bio->bi_private;

	if (bio->bi_status)
		run->status = bio->bi_status;
	bio_put(bio);
	return atomic_dec_and_test(&run->pending) ? run : NULL;
}

/*
 * Runs stay on runs_read, in the order the policy handed them out, until
 * their cache reads are done; their origin writes are issued in that order
 * (process_reads), so the origin sees each sweep ascending.
 */
/*
 * Once published under the lock, the worker may complete and free the run,
 * and suspend then dtr destroy the workqueue: use wc, and kick before
 * dropping the lock.
 */
static void read_endio(struct bio *bio)
{
	struct wow_run *run = run_bio_done(bio);
	struct wow_cache *wc;
	unsigned long flags;

	if (!run)
		return;
	wc = run->wc;
	spin_lock_irqsave(&wc->lock, flags);
	run->read_done = true;
	wow_kick(wc);
	spin_unlock_irqrestore(&wc->lock, flags);
}

static void write_endio(struct bio *bio)
{
	struct wow_run *run = run_bio_done(bio);
	struct wow_cache *wc;
	unsigned long flags;

	if (!run)
		return;
	wc = run->wc;
	spin_lock_irqsave(&wc->lock, flags);
	list_add_tail(&run->list, &wc->destage->runs_written);
	wc->destage->runs_unflushed++;
	wow_kick(wc);
	spin_unlock_irqrestore(&wc->lock, flags);
}

/* Read the run's blocks from the cache, one bio per contiguous slot range. */
static void submit_reads(struct wow_cache *wc, struct wow_run *run)
{
	wow_bg_read(wc, run->slots, run->nr, run->pages, &run->pending,
		    read_endio, run);
}

/* Write the run to the origin: one write, split only at 1 MiB bios. */
static void submit_write(struct wow_cache *wc, struct wow_run *run)
{
	struct wow_destage *ds = wc->destage;
	u32 bytes = run->nr * wc->args.block_size, off;
	sector_t sector = run->start << wc->block_shift;
	sector_t end = sector + (bytes >> SECTOR_SHIFT);
	u64 last = ds->last_destage_end;

	atomic64_add(last > sector ? last - sector : sector - last,
		     &wc->stats.seek_sectors);
	ds->last_destage_end = end;
	ds->destaged = true;
	atomic64_inc(&wc->stats.destage_writes);
	atomic64_add(run->nr, &wc->stats.destage_blocks);
	atomic64_add(run->nr - 1, &wc->stats.merged_blocks);

	atomic_set(&run->pending, DIV_ROUND_UP(bytes, SZ_1M));
	for (off = 0; off < bytes; off += SZ_1M) {
		u32 len = min_t(u32, bytes - off, SZ_1M);
		struct bio *bio;

		bio = wow_bg_bio(wc, wc->origin_dev->bdev, REQ_OP_WRITE,
				 run->pages, off, len);
		bio->bi_iter.bi_sector = sector + (off >> SECTOR_SHIFT);
		bio->bi_private = run;
		bio->bi_end_io = write_endio;
		submit_bio(bio);
	}
}

/*
 * The run's origin write is durable (@ok) or failed: record its blocks
 * clean where the destaged copy is still the current one (and note them
 * for a clean mark in the log), else leave them dirty for a retry.  Each
 * slot's segment was pinned by fill_run, so a slot that is VALID for the
 * same origin block is the very copy the run read: a segment cannot be
 * freed and reopened under a run, and a later write of the block cannot
 * land in the slot the run read (issue 34, finding 2).  Lock held.
 */
static void complete_run(struct wow_cache *wc, struct wow_run *run, bool ok)
{
	struct wow_destage *ds = wc->destage;
	u32 i;

	lockdep_assert_held(&wc->lock);
	for (i = 0; i < run->nr; i++) {
		struct wow_slot *sl = wow_slot_at(&wc->index, run->slots[i]);
		bool current_copy = (sl->flags & WOW_SLOT_VALID) &&
				    (sl->flags & WOW_SLOT_DIRTY) &&
				    from_oblock(wow_slot_oblock(sl)) ==
				    run->start + i;

		wow_index_set_flags(&wc->index, run->slots[i], 0,
				    WOW_SLOT_DESTAGING);
		wow_log_unpin(wc, wow_slot_seg(wc, run->slots[i]));
		if (!current_copy)
			continue;
		if (ok) {
			wow_log_block_clean(wc, run->slots[i], run->start + i);
		} else if (!(sl->flags & WOW_SLOT_BAD)) {
			/* the group is alive while the run is busy */
			wow_policy_mark_dirty(&wc->policy, run->start + i);
		}
	}
	wow_policy_run_done(&wc->policy, run->start, run->nr);
	ds->runs_inflight--;
}

/* Cache reads done: write to the origin, or give up on a read error. */
static void process_reads(struct wow_cache *wc)
{
	struct wow_destage *ds = wc->destage;
	struct wow_run *run, *tmp;
	LIST_HEAD(done);
	LIST_HEAD(failed);
	bool errors = false;

	spin_lock_irq(&wc->lock);
	list_for_each_entry_safe(run, tmp, &ds->runs_read, list) {
		if (!run->read_done)
			break;
		list_move_tail(&run->list, &done);
	}
	spin_unlock_irq(&wc->lock);

	list_for_each_entry_safe(run, tmp, &done, list) {
		list_del(&run->list);
		/*
		 * a block that does not match its crc32c is not written: the
		 * run goes back, the others are destaged by later runs
		 */
		if (!run->status &&
		    !wow_log_check_blocks(wc, run->slots, NULL, run->start,
					  run->nr, run->pages, run->crcs)) {
			submit_write(wc, run);
			continue;
		}
		if (!run->status) {
			list_add_tail(&run->list, &failed);
			continue;
		}
		atomic64_inc(&wc->stats.cache_errors);
		wow_error(wc, WOW_STATE_FAILED, "cache read during destage",
			  blk_status_to_errno(run->status));
		list_add_tail(&run->list, &failed);
		errors = true;
	}
	if (list_empty(&failed))
		return;
	spin_lock_irq(&wc->lock);
	list_for_each_entry(run, &failed, list)
		complete_run(wc, run, false);
	if (errors)
		ds->origin_retry_at = jiffies +
				      msecs_to_jiffies(WOW_ORIGIN_RETRY_MS);
	spin_unlock_irq(&wc->lock);
	list_for_each_entry_safe(run, tmp, &failed, list)
		free_run(run);
	wake_up(&wc->idle_wait);
}

static void origin_flush_endio(struct bio *bio)
{
	struct wow_cache *wc = bio->bi_private;
	struct wow_destage *ds = wc->destage;
	blk_status_t status = bio->bi_status;
	unsigned long flags;

	bio_put(bio);
	spin_lock_irqsave(&wc->lock, flags);
	ds->origin_flush_status = status;
	ds->origin_flush_done = true;
	wow_kick(wc);
	spin_unlock_irqrestore(&wc->lock, flags);
}

static void submit_origin_flush(struct wow_cache *wc)
{
	struct bio *bio = wow_bg_bio(wc, wc->origin_dev->bdev,
				     REQ_OP_WRITE | REQ_PREFLUSH, NULL, 0, 0);

	bio->bi_private = wc;
	bio->bi_end_io = origin_flush_endio;
	submit_bio(bio);
}

/*
 * Origin writes done: flush the origin, then record the blocks clean.
 * The flush is asynchronous and one at a time, so the worker keeps the
 * origin's queue fed while it runs (a synchronous flush left the disk idle
 * after each one).  A flush covers only writes completed before it was
 * issued: runs whose writes complete meanwhile wait for the next flush.
 * Failed writes need no flush; they are done at once.
 */
static void process_writes(struct wow_cache *wc)
{
	struct wow_destage *ds = wc->destage;
	blk_status_t flush_status = BLK_STS_OK;
	struct wow_run *run, *tmp;
	bool flush = false, write_failed;
	LIST_HEAD(flushed);
	LIST_HEAD(failed);

	spin_lock_irq(&wc->lock);
	if (ds->origin_flush_done) {
		list_splice_init(&ds->runs_flushing, &flushed);
		flush_status = ds->origin_flush_status;
		ds->origin_flush_done = false;
		ds->origin_flush_inflight = false;
	}
	list_for_each_entry_safe(run, tmp, &ds->runs_written, list)
		if (run->status)
			list_move_tail(&run->list, &failed);
	if (!ds->origin_flush_inflight && !list_empty(&ds->runs_written)) {
		list_splice_init(&ds->runs_written, &ds->runs_flushing);
		ds->origin_flush_inflight = true;
		flush = true;
	}
	spin_unlock_irq(&wc->lock);
	if (flush)
		submit_origin_flush(wc);
	if (list_empty(&flushed) && list_empty(&failed))
		return;

	write_failed = !list_empty(&failed);
	list_splice_tail_init(&failed, &flushed);
	spin_lock_irq(&wc->lock);
	list_for_each_entry(run, &flushed, list) {
		bool ok = !run->status && !flush_status;

		ds->runs_unflushed--;
		if (!ok) {
			atomic64_inc(&wc->stats.origin_errors);
			ds->origin_retry_at = jiffies +
				msecs_to_jiffies(WOW_ORIGIN_RETRY_MS);
		}
		complete_run(wc, run, ok);
	}
	spin_unlock_irq(&wc->lock);
	if (flush_status || write_failed)
		DMERR_LIMIT("%s: origin write or flush failed; data stays dirty, retrying",
			    wow_name(wc));

	list_for_each_entry_safe(run, tmp, &flushed, list)
		free_run(run);
	wake_up(&wc->idle_wait);
}

/*
 * Fill @run with the blocks [start, start + n) the policy handed out, mark
 * their slots DESTAGING and pin their segments until complete_run (lock
 * held).
 */
static void fill_run(struct wow_cache *wc, struct wow_run *run, u64 start,
		     u32 n)
{
	struct wow_destage *ds = wc->destage;
	u32 i;

	lockdep_assert_held(&wc->lock);
	run->start = start;
	run->nr = n;
	for (i = 0; i < n; i++) {
		u32 s = wow_index_lookup(&wc->index, to_oblock(start + i));

		/* the policy only knows dirty, indexed blocks */
		if (WARN_ON_ONCE(s == WOW_NO_SLOT))
			s = 0;
		run->slots[i] = s;
		wow_index_set_flags(&wc->index, s, WOW_SLOT_DESTAGING, 0);
		wow_log_pin(wc, wow_slot_seg(wc, s));
	}
	ds->runs_inflight++;
}

/*
 * Runs reading the cache or writing the origin (lock held): the rate
 * target counts these, not the runs whose writes are done and only wait
 * for the origin flush.
 */
static u32 runs_busy(struct wow_cache *wc)
{
	struct wow_destage *ds = wc->destage;

	lockdep_assert_held(&wc->lock);
	return ds->runs_inflight - ds->runs_unflushed;
}

/* Start new runs up to the rate target. */
static void start_runs(struct wow_cache *wc)
{
	struct wow_destage *ds = wc->destage;
	u32 max_blocks = wc->args.max_destage_size / wc->args.block_size;
	struct wow_run *run, *tmp;
	LIST_HEAD(runs);
	bool idle = device_idle(wc);

	while (true) {
		u32 target, busy, n = 0;
		u64 start;

		spin_lock_irq(&wc->lock);
		max_blocks = wc->args.max_destage_size / wc->args.block_size;
		target = wow_destage_target(wc, idle);
		target = max(target, WOW_SEQ_QUEUE);
		busy = runs_busy(wc);
		spin_unlock_irq(&wc->lock);
		if (busy >= target)
			break;

		/* short of memory: runs the reserve can hold */
		if (ds->destage_lowmem)
			max_blocks = min(max_blocks, ds->reserve_run_blocks);
		run = alloc_run(wc, &max_blocks);
		if (!run)
			break;
		/* the policy's node for the run's group, if it needs one */
		if (wow_policy_refill(wc, 1)) {
			free_run(run);
			break;
		}
		spin_lock_irq(&wc->lock);
		if (wow_destage_target(wc, idle) > runs_busy(wc))
			n = wow_policy_next_run(&wc->policy, &start,
						max_blocks);
		if (!n && ds->destaged && runs_busy(wc) < WOW_SEQ_QUEUE &&
		    !wc->stopped &&
		    time_after_eq(jiffies, ds->origin_retry_at)) {
			/*
			 * The last destage continues: keep a small queue.
			 * Only after one: with none yet, block 0 is not
			 * where the disk's head is, and destaging from it
			 * would drain a dirty range at its start below the
			 * low watermark.
			 */
			start = ds->last_destage_end >> wc->block_shift;
			n = wow_policy_claim(&wc->policy, start, max_blocks);
		}
		if (n)
			fill_run(wc, run, start, n);
		spin_unlock_irq(&wc->lock);
		if (!n) {
			free_run(run);
			break;
		}
		if (alloc_run_pages(wc, run)) {
			spin_lock_irq(&wc->lock);
			complete_run(wc, run, false);
			spin_unlock_irq(&wc->lock);
			ds->destage_lowmem = true;
			free_run(run);
			break;
		}
		if (!run->pooled)
			ds->destage_lowmem = false;
		list_add_tail(&run->list, &runs);
	}
	if (list_empty(&runs))
		return;

	/* nothing is destaged whose log record could still be lost */
	if (wow_log_commit(wc)) {
		spin_lock_irq(&wc->lock);
		list_for_each_entry(run, &runs, list)
			complete_run(wc, run, false);
		spin_unlock_irq(&wc->lock);
		list_for_each_entry_safe(run, tmp, &runs, list)
			free_run(run);
		return;
	}
	list_for_each_entry(run, &runs, list)
		submit_reads(wc, run);
	/* reads may be done already: their read_endio kick saw no run */
	spin_lock_irq(&wc->lock);
	list_splice_tail(&runs, &ds->runs_read);
	spin_unlock_irq(&wc->lock);
	wow_kick(wc);
}

static void wow_destage_work(struct work_struct *ws)
{
	struct wow_cache *wc = container_of(ws, struct wow_cache,
					    destage_work);

	process_reads(wc);
	process_writes(wc);
	wow_clean(wc);
	start_runs(wc);
}

static void wow_tick(struct work_struct *ws)
{
	struct wow_destage *ds = container_of(to_delayed_work(ws),
					      struct wow_destage, tick);
	struct wow_cache *wc = ds->wc;
	struct wow_group *g, *tmp;
	LIST_HEAD(extra);

	spin_lock_irq(&wc->lock);
	ds->oldest_dirty = wow_seg_oldest_dirty(wc);
	ds->peak_bp = max(ds->peak_bp, wow_occupancy_bp(wc));
	if (++ds->ticks % WOW_ADAPT_TICKS == 0) {
		wow_thresholds_adapt(&wc->thresh, ds->peak_bp);
		ds->peak_bp = 0;
	}
	wow_policy_trim_spares(&wc->policy, 256, &extra);
	spin_unlock_irq(&wc->lock);
	wow_log_tick(wc);
	list_for_each_entry_safe(g, tmp, &extra, lru)
		kfree(g);
	wow_kick(wc);
	if (!READ_ONCE(wc->stopped))
		queue_delayed_work(wc->wq, &ds->tick,
				   msecs_to_jiffies(WOW_TICK_MS));
}

/* Start destage and cleaning (resume). */
void wow_destage_start(struct wow_cache *wc)
{
	struct wow_destage *ds = wc->destage;

	spin_lock_irq(&wc->lock);
	wc->stopped = false;
	spin_unlock_irq(&wc->lock);
	queue_delayed_work(wc->wq, &ds->tick, msecs_to_jiffies(WOW_TICK_MS));
	wow_kick(wc);
}

/* Stop starting destage and cleaning; wait for what is in flight. */
void wow_destage_stop(struct wow_cache *wc)
{
	struct wow_destage *ds = wc->destage;

	spin_lock_irq(&wc->lock);
	wc->stopped = true;
	spin_unlock_irq(&wc->lock);
	cancel_delayed_work_sync(&ds->tick);
	while (true) {
		flush_work(&wc->destage_work);
		/* a cleaning record that waits for space would wait forever */
		wow_log_cancel_metas(wc);
		flush_work(&wc->commit_work);
		/* free the copies the log handed back meanwhile */
		wow_clean_free_done(wc);
		if (wait_event_timeout(wc->idle_wait,
				       !READ_ONCE(ds->runs_inflight) &&
				       !wow_log_meta_inflight(wc) &&
				       !wow_clean_inflight(wc),
				       HZ / 10))
			break;
		wow_kick(wc);
	}
	flush_work(&wc->destage_work);
}

u32 wow_destage_inflight(struct wow_cache *wc)
{
	lockdep_assert_held(&wc->lock);
	return wc->destage->runs_inflight;
}

unsigned long wow_destage_oldest_dirty(struct wow_cache *wc)
{
	lockdep_assert_held(&wc->lock);
	return wc->destage->oldest_dirty;
}

void wow_destage_set_watermarks(struct wow_cache *wc)
{
	lockdep_assert_held(&wc->lock);
	wow_thresholds_init(&wc->thresh, wc->args.low_watermark_pct,
			    wc->args.high_watermark_pct);
}
