// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow cleaning: frees log segments, so that writes find room.
 *
 * When free segments run short (wow_log_short), cleaning picks a victim
 * among the closed segments (dm-wow-victim.c: cost-benefit and lazy
 * recycling) and frees it in three steps:
 *
 *   1. copy forward: its dirty blocks are read from the cache, checked
 *      against their crc32c (a block that does not match is marked bad
 *      and left where it is: wow_log_check_blocks) and appended at the
 *      log head as ordinary record data (struct wow_copy, through group
 *      commit), a record's worth at a time.  The origin sees only the
 *      policy's order; the cache sees only aligned appends.
 *   2. tombstones: once none of its blocks is dirty (copied, or destaged
 *      by runs that were in flight), a durable record carries tombstones
 *      for the clean copies it still holds and the tombstones it held that
 *      are still needed (struct wow_meta);
 *   3. once reads from it finished, it joins the free list.
 * Steps 2 and 3 are the log's (wow_log_retire_seg, wow_log_free_seg): the
 * segment's state is the log's alone.
 *
 * Its state, struct wow_clean, is defined here alone (wc->clean); destage
 * and the target call dm-wow-clean.h.
 *
 * Locking: wc->lock guards the victim and the counts here, and what the log
 * and the index own; copies
 * and metas are allocated and reads submitted outside it.  A copy belongs
 * to cleaning until queued to the log, and again once the log hands it
 * back on copies_done (written, left out, or failed).
 */
#include <linux/blkdev.h>
#include <linux/jiffies.h>
#include <linux/slab.h>

#include "dm-wow.h"
#include "dm-wow-victim.h"
#include "dm-wow-clean.h"
#include "dm-wow-log.h"
#include "dm-wow-seg.h"

/* Cleaning's state (wc->clean): under wc->lock unless noted. */
struct wow_clean {
	mempool_t copy_pool;		/* reserve of copy structs */
	u32 victim;			/* segment being cleaned */
	u32 copies_inflight;		/* reading, or queued to the log */
	struct list_head copies_read;	/* read: to check, then queue */
	unsigned long clean_pick_at;	/* jiffies of the last victim scan */
	u32 victim_cursor;		/* where the next scan starts */
	/* the log is short and no segment is cheap to clean (last scan) */
	bool clean_starved;
	unsigned long urgent_since;	/* jiffies: urgent, nothing freed */
};

/*
 * Urgent (free segments down to the reserve plus one), a victim needs
 * less to come free the longer no segment has been freed: at first as
 * much as lazy recycling asks (destage, at full rate, makes segments
 * cheap; copying mostly dirty segments makes the log turn over faster
 * than destage empties it, so they stay dirty: seen settling at 2 to 6
 * copies per write), after WOW_CLEAN_URGENT_MS half, after five times
 * that anything that gains 1/16 (destage is not freeing: origin errors,
 * or groups spared again and again).  Lock held.
 */
static u32 urgent_free_pct(struct wow_cache *wc)
{
	struct wow_clean *cl = wc->clean;
	unsigned long waited, step = msecs_to_jiffies(WOW_CLEAN_URGENT_MS);

	lockdep_assert_held(&wc->lock);
	if (!cl->urgent_since)
		cl->urgent_since = jiffies ?: 1;
	waited = jiffies - cl->urgent_since;
	if (waited < step)
		return WOW_CLEAN_MIN_FREE_PCT;
	if (waited < 5 * step)
		return WOW_CLEAN_URGENT_FREE_PCT;
	return 0;
}

/*
 * The victim, by cost and benefit among the closed segments that lazy
 * recycling allows; when none qualifies, the log is starved (destage runs
 * at full rate until one does) and, when urgent, what urgent_free_pct
 * allows goes.  Tombstones must be kept while an older segment life is on
 * the device: while many are held, the oldest closed segment goes first if
 * it gains anything, which keeps the oldest life young and the tombstones
 * few.
 *
 * The work is bounded (issue 34, finding 7): the scan takes the lock for
 * WOW_VICTIM_CHUNK segments at a time and yields between chunks, starts
 * where the last one stopped, and settles for the best of the
 * WOW_VICTIM_WINDOW segments it saw when one of them qualifies (as f2fs's
 * max_victim_search), so a pick costs the same at 64 GiB as at 4 GiB; only
 * a log where nothing qualifies is walked whole, once, to say it starved.
 * Every segment the walk passes is a wow_seg_visit(): its dead
 * tombstones go.  Called without the lock, which it takes and drops; its
 * answer may be stale by the time the caller holds the lock again, which
 * checks the victim's state before it acts.
 */
#define WOW_VICTIM_CHUNK	256
#define WOW_VICTIM_WINDOW	4096
/* the oldest closed segment is looked for this far into the write order */
#define WOW_VICTIM_OLDEST_WALK	64

#ifdef WOW_TEST_HOOKS
/*
 * Test builds only: the most segments one pick walked when it found a
 * victim lazy recycling allows (cache-victim-window reads it; write 0 to
 * start again).
 */
static unsigned int test_victim_scan_max;
module_param(test_victim_scan_max, uint, 0644);
MODULE_PARM_DESC(test_victim_scan_max,
		 "test builds: most segments a victim pick that found one walked");

static void note_scan(u32 seen)
{
	if (seen > READ_ONCE(test_victim_scan_max))
		WRITE_ONCE(test_victim_scan_max, seen);
}
#else
static void note_scan(u32 seen)
{
}
#endif

static bool still_victim(struct wow_cache *wc, u32 v, u32 pct, bool urgent)
{
	struct wow_seg_usage u;

	if (!wow_seg_cleanable(wc, v))
		return false;
	wow_seg_usage(wc, v, &u);
	return wow_victim_eligible(&u, wc->blocks_per_seg,
				   urgent ? pct : WOW_CLEAN_MIN_FREE_PCT,
				   urgent && !pct);
}

static u32 pick_victim(struct wow_cache *wc)
{
	struct wow_clean *cl = wc->clean;
	struct wow_victim_pick lazy, tier;
	u32 n = wc->nr_segments, seen = 0, i, s, pct, oldest, v;
	struct wow_seg_usage u;
	bool urgent;

	spin_lock_irq(&wc->lock);
	urgent = wow_seg_nr_free(wc) <= WOW_RESERVE_SEGMENTS + 1;
	if (!urgent)
		cl->urgent_since = 0;
	pct = urgent ? urgent_free_pct(wc) : 0;
	spin_unlock_irq(&wc->lock);

	wow_victim_pick_init(&lazy);
	wow_victim_pick_init(&tier);
	while (seen < n &&
	       (seen < WOW_VICTIM_WINDOW || lazy.seg == WOW_NO_SEG)) {
		spin_lock_irq(&wc->lock);
		for (i = 0; i < WOW_VICTIM_CHUNK && seen < n; i++, seen++) {
			s = cl->victim_cursor;
			cl->victim_cursor = s + 1 < n ? s + 1 : 0;
			wow_seg_visit(wc, s);
			/* a bad block stays where it is until written again */
			if (!wow_seg_cleanable(wc, s))
				continue;
			wow_seg_usage(wc, s, &u);
			wow_victim_consider(&lazy, s, &u, wc->blocks_per_seg,
					    WOW_CLEAN_MIN_FREE_PCT, false);
			if (urgent)
				wow_victim_consider(&tier, s, &u,
						    wc->blocks_per_seg, pct,
						    !pct);
		}
		spin_unlock_irq(&wc->lock);
		cond_resched();
	}

	if (lazy.seg != WOW_NO_SEG)
		note_scan(seen);
	spin_lock_irq(&wc->lock);
	cl->clean_starved = lazy.seg == WOW_NO_SEG;
	v = lazy.seg != WOW_NO_SEG ? lazy.seg : tier.seg;
	if (v != WOW_NO_SEG &&
	    !still_victim(wc, v, pct, lazy.seg == WOW_NO_SEG && urgent))
		v = WOW_NO_SEG;
	oldest = wow_seg_oldest_cleanable(wc, WOW_VICTIM_OLDEST_WALK);
	if (oldest != WOW_NO_SEG &&
	    wow_seg_held_tombs(wc) > wc->nr_slots / 16) {
		wow_seg_usage(wc, oldest, &u);
		if (wow_victim_eligible(&u, wc->blocks_per_seg, 0, true))
			v = oldest;
	}
	spin_unlock_irq(&wc->lock);
	return v;
}

/*
 * Is the log short of space that cleaning cannot free cheaply?  Then
 * destage runs at full rate, whatever the occupancy: it makes segments
 * cheap to clean (lock held).
 */
bool wow_clean_starved(struct wow_cache *wc)
{
	struct wow_clean *cl = wc->clean;

	lockdep_assert_held(&wc->lock);
	return cl->clean_starved && wow_log_short(wc);
}

/* ---- copies ---- */

/* One allocation: the struct, then oblocks, page pointers and slots. */
static size_t copy_bytes(struct wow_cache *wc)
{
	u32 max = wc->max_record_blocks;

	return sizeof(struct wow_copy) + max * (sizeof(u64) + 2 * sizeof(u32)) +
	       DIV_ROUND_UP(max * wc->args.block_size, PAGE_SIZE) *
	       sizeof(struct page *);
}

/* The reserve of copy structs (pages: dm-wow-destage.c's reserve). */
int wow_clean_alloc(struct wow_cache *wc)
{
	struct wow_clean *cl;

	cl = kzalloc(sizeof(*cl), GFP_KERNEL);
	if (!cl)
		return -ENOMEM;
	wc->clean = cl;
	cl->victim = WOW_NO_SEG;
	INIT_LIST_HEAD(&cl->copies_read);
	return mempool_init_kmalloc_pool(&cl->copy_pool, WOW_CLEAN_COPIES,
					 copy_bytes(wc));
}

void wow_clean_free(struct wow_cache *wc)
{
	/* (none when the table failed before wow_clean_alloc) */
	if (!wc->clean)
		return;
	mempool_exit(&wc->clean->copy_pool);
	kfree(wc->clean);
	wc->clean = NULL;
}

static void free_copy(struct wow_copy *c)
{
	struct wow_cache *wc = c->wc;
	struct wow_clean *cl = wc->clean;

	wow_bg_pages_free(wc, c->pages, c->nr_pages);
	wow_bg_struct_free(&cl->copy_pool, c, c->pooled);
}

/*
 * A copy with room for a record's worth of blocks and their data, from the
 * allocator or else the reserves (see dm-wow-destage.c): NULL if neither
 * has it now (cleaning tries again at the next kick).
 */
static struct wow_copy *alloc_copy(struct wow_cache *wc)
{
	struct wow_clean *cl = wc->clean;
	u32 max = wc->max_record_blocks, i;
	size_t bytes = copy_bytes(wc);
	struct wow_copy *c;
	bool pooled;

	c = wow_bg_struct_alloc(&cl->copy_pool, bytes, &pooled);
	if (!c)
		return NULL;
	if (pooled)
		memset(c, 0, bytes);
	c->wc = wc;
	c->pooled = pooled;
	c->nr_pages = DIV_ROUND_UP(max * wc->args.block_size, PAGE_SIZE);
	c->oblocks = (u64 *)(c + 1);
	c->pages = (struct page **)(c->oblocks + max);
	c->slots = (u32 *)(c->pages + c->nr_pages);
	c->crcs = c->slots + max;
	for (i = 0; i < c->nr_pages; i++) {
		c->pages[i] = wow_bg_page_alloc(wc);
		if (!c->pages[i]) {
			free_copy(c);
			return NULL;
		}
	}
	return c;
}

/*
 * Take up to the copy's room of the victim's dirty blocks that no destage
 * run holds: held from the policy, slots DESTAGING, the victim pinned once
 * per block until the log inserts or releases it (lock held).
 */
static void fill_copy(struct wow_cache *wc, struct wow_copy *c, u32 max)
{
	struct wow_clean *cl = wc->clean;
	u32 first = cl->victim * wc->blocks_per_seg, i;

	lockdep_assert_held(&wc->lock);
	c->nr = 0;
	for (i = 0; i < wc->blocks_per_seg && c->nr < max; i++) {
		struct wow_slot *sl = wow_slot_at(&wc->index, first + i);
		u64 ob = from_oblock(wow_slot_oblock(sl));

		if ((sl->flags & (WOW_SLOT_VALID | WOW_SLOT_DIRTY |
				  WOW_SLOT_DESTAGING | WOW_SLOT_BAD)) !=
		    (WOW_SLOT_VALID | WOW_SLOT_DIRTY))
			continue;
		if (!wow_policy_hold(&wc->policy, ob))
			continue;
		wow_index_set_flags(&wc->index, first + i,
				    WOW_SLOT_DESTAGING, 0);
		wow_log_pin(wc, cl->victim);
		c->oblocks[c->nr] = ob;
		c->slots[c->nr] = first + i;
		c->nr++;
	}
}

/*
 * The last read of a copy completed: cleaning checks its blocks and hands
 * it to the log (which leaves it out if a read failed), in the worker
 * (check_copies).  It stays counted in copies_inflight, so suspend waits.
 */
static void copy_read_endio(struct bio *bio)
{
	struct wow_copy *c = bio->bi_private;
	struct wow_cache *wc = c->wc;
	struct wow_clean *cl = wc->clean;
	unsigned long flags;

	if (bio->bi_status)
		c->status = bio->bi_status;
	bio_put(bio);
	if (!atomic_dec_and_test(&c->pending))
		return;
	spin_lock_irqsave(&wc->lock, flags);
	list_add_tail(&c->list, &cl->copies_read);
	wow_kick(wc);
	spin_unlock_irqrestore(&wc->lock, flags);
}

/*
 * The copies read: each block against its crc32c (a bad one is marked,
 * and the log leaves it out), then to the log.
 */
static void check_copies(struct wow_cache *wc)
{
	struct wow_clean *cl = wc->clean;
	struct wow_copy *c, *tmp;
	LIST_HEAD(read);

	spin_lock_irq(&wc->lock);
	list_splice_init(&cl->copies_read, &read);
	spin_unlock_irq(&wc->lock);
	list_for_each_entry_safe(c, tmp, &read, list) {
		list_del_init(&c->list);
		if (!c->status)
			wow_log_check_blocks(wc, c->slots, c->oblocks, 0, c->nr,
					     c->pages, c->crcs);
		wow_log_queue_copy(wc, c);
	}
}

static void submit_copy_reads(struct wow_cache *wc, struct wow_copy *c)
{
	wow_bg_read(wc, c->slots, c->nr, c->pages, &c->pending,
		    copy_read_endio, c);
}

/* Start copying a record's worth of the victim's dirty blocks forward. */
static void start_copy(struct wow_cache *wc)
{
	struct wow_clean *cl = wc->clean;
	u32 max = wc->max_record_blocks;
	struct wow_copy *c = alloc_copy(wc);

	if (!c)
		return;		/* the next kick tries again */
	/* a policy node per busy group; short of them, fewer blocks held */
	wow_policy_refill(wc, max);
	spin_lock_irq(&wc->lock);
	if (cl->victim == WOW_NO_SEG || wc->stopped) {
		spin_unlock_irq(&wc->lock);
		free_copy(c);
		return;
	}
	fill_copy(wc, c, max);
	if (c->nr)
		cl->copies_inflight++;
	spin_unlock_irq(&wc->lock);
	if (!c->nr) {
		free_copy(c);
		return;
	}
	submit_copy_reads(wc, c);
}

/*
 * Free the copies the log handed back; a failed read fails the cache.
 * Returns how many were freed.
 */
u32 wow_clean_free_done(struct wow_cache *wc)
{
	struct wow_clean *cl = wc->clean;
	struct wow_copy *c, *tmp;
	blk_status_t status = BLK_STS_OK;
	LIST_HEAD(done);
	u32 n = 0;

	spin_lock_irq(&wc->lock);
	wow_log_take_copies_done(wc, &done);
	list_for_each_entry(c, &done, list) {
		cl->copies_inflight--;
		if (c->status)
			status = c->status;
	}
	spin_unlock_irq(&wc->lock);
	list_for_each_entry_safe(c, tmp, &done, list) {
		free_copy(c);
		n++;
	}
	if (status) {
		atomic64_inc(&wc->stats.cache_errors);
		wow_error(wc, WOW_STATE_FAILED, "cache read during cleaning",
			  blk_status_to_errno(status));
	}
	if (n)
		wake_up(&wc->idle_wait);
	return n;
}

/* Does the victim hold dirty blocks no run or copy holds yet? (lock held) */
static bool victim_copyable(struct wow_cache *wc)
{
	struct wow_clean *cl = wc->clean;
	u32 first = cl->victim * wc->blocks_per_seg, i;

	lockdep_assert_held(&wc->lock);
	for (i = 0; i < wc->blocks_per_seg; i++)
		if ((wow_slot_at(&wc->index, first + i)->flags &
		     (WOW_SLOT_VALID | WOW_SLOT_DIRTY | WOW_SLOT_DESTAGING |
		      WOW_SLOT_BAD)) == (WOW_SLOT_VALID | WOW_SLOT_DIRTY))
			return true;
	return false;
}

/* One step of cleaning: pick a victim, copy, record it, free it. */
void wow_clean(struct wow_cache *wc)
{
	struct wow_clean *cl = wc->clean;
	bool copy;
	u32 v;

	check_copies(wc);
	wow_clean_free_done(wc);
	spin_lock_irq(&wc->lock);
	if (wow_log_reap_drained(wc)) {
		cl->urgent_since = 0;	/* progress */
		/* writers may be waiting for the space */
		queue_work(wc->wq, &wc->commit_work);
	}
	if (cl->victim != WOW_NO_SEG) {
		if (wow_log_free_seg(wc, cl->victim)) {
			cl->victim = WOW_NO_SEG;
			cl->urgent_since = 0;	/* progress */
			spin_unlock_irq(&wc->lock);
			/* writers may be waiting for the space */
			queue_work(wc->wq, &wc->commit_work);
			wow_kick(wc);
			return;
		}
	}
	/*
	 * Scan for a victim once a jiffy at most: destage work runs at every
	 * bio completion, and when no segment qualifies yet the answer does
	 * not change that fast.
	 */
	if (cl->victim == WOW_NO_SEG && !wc->stopped &&
	    wc->state == WOW_STATE_OK && wow_log_short(wc) &&
	    time_after(jiffies, cl->clean_pick_at)) {
		cl->clean_pick_at = jiffies;
		spin_unlock_irq(&wc->lock);
		v = pick_victim(wc);
		spin_lock_irq(&wc->lock);
		/* only cleaning moves a CLOSED segment on; checked anyway */
		if (cl->victim == WOW_NO_SEG && !wc->stopped &&
		    v != WOW_NO_SEG && wow_seg_state(wc, v) == WOW_SEG_CLOSED)
			cl->victim = v;
	}
	if (cl->victim == WOW_NO_SEG || wow_log_meta_inflight(wc) ||
	    wc->stopped) {
		spin_unlock_irq(&wc->lock);
		return;
	}
	if (wow_seg_state(wc, cl->victim) != WOW_SEG_CLOSED) {
		spin_unlock_irq(&wc->lock);
		return;
	}
	if (wow_seg_nr_bad(wc, cl->victim)) {
		/* a copy found a bad block in it: another victim */
		cl->victim = WOW_NO_SEG;
		spin_unlock_irq(&wc->lock);
		wow_kick(wc);
		return;
	}
	if (wow_seg_nr_dirty(wc, cl->victim)) {
		/* copies, or runs in flight, will clean it */
		copy = cl->copies_inflight < WOW_CLEAN_COPIES &&
		       wc->state == WOW_STATE_OK && victim_copyable(wc);
		spin_unlock_irq(&wc->lock);
		if (copy)
			start_copy(wc);
		return;
	}
	v = cl->victim;
	spin_unlock_irq(&wc->lock);
	wow_log_retire_seg(wc, v);
}

u32 wow_clean_inflight(struct wow_cache *wc)
{
	return READ_ONCE(wc->clean->copies_inflight);
}
