// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow core: what every part of the target shares and no part owns.
 *
 *  - the error latch: wow_error() moves the cache to read_only or failed,
 *    never back, and records needs_check in the health block, so the next
 *    load knows (the state is persisted, not only in memory);
 *  - the kick: wow_kick() wakes the destage worker, which also runs
 *    cleaning; the log and the target report to destage this way, never
 *    by calling into it;
 *  - memory and bios for background I/O (destage runs, cleaning's copies):
 *    a private bio_set and a page reserve, so the I/O that frees log space
 *    makes progress when memory is short;
 *  - the policy's spare nodes, allocated outside the lock
 *    (wow_policy_refill) before a call that takes one.
 *
 * The index (dm-wow-index.c) and the counters (struct wow_stats, atomic)
 * are the rest of the core.
 *
 * Locking: wc->lock guards the state and the health record; the rest here
 * needs no lock.  Calls nothing in the log, destage or cleaning.
 */
#include <linux/blkdev.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "dm-wow.h"
#include "dm-wow-super.h"

/* Record needs_check for the health block, and have it written (lock held). */
static void latch_health(struct wow_cache *wc, const char *what)
{
	lockdep_assert_held(&wc->lock);
	wc->health.flags = WOW_SB_F_NEEDS_CHECK;
	wc->health.state = wc->state;
	wc->health.time = ktime_get_real_seconds();
	strscpy(wc->health.what, what, sizeof(wc->health.what));
	if (wc->wq)
		queue_work(wc->wq, &wc->health_work);
}

/*
 * Latch needs_check without changing the state: something was found
 * wrong on the cache device that the cache works around (a block whose
 * data does not match its crc32c).  Persisted like wow_error's; the next
 * load drains in cleaner mode.
 */
void wow_latch_check(struct wow_cache *wc, const char *what)
{
	unsigned long flags;
	bool changed;

	spin_lock_irqsave(&wc->lock, flags);
	changed = !(wc->health.flags & WOW_SB_F_NEEDS_CHECK);
	if (changed)
		latch_health(wc, what);
	spin_unlock_irqrestore(&wc->lock, flags);
	if (changed)
		DMERR("%s: %s: needs_check set", wow_name(wc), what);
}

void wow_error(struct wow_cache *wc, enum wow_state state, const char *what,
	       int err)
{
	unsigned long flags;
	bool changed = false;

	spin_lock_irqsave(&wc->lock, flags);
	if (state > wc->state) {
		wc->state = state;
		changed = true;
		/* persist it: the next load must know (needs_check) */
		latch_health(wc, what);
	}
	spin_unlock_irqrestore(&wc->lock, flags);
	if (changed)
		DMERR("%s: %s failed (%d): cache is now %s", wow_name(wc), what,
		      err, state == WOW_STATE_FAILED ? "failed" : "read_only");
}

/*
 * Write the health block (needs_check and what failed) with FUA.  The
 * device just failed an I/O, so this may fail too: then only the kernel
 * log tells.  No reclaim through our own device while allocating.
 */
static void wow_health_work(struct work_struct *ws)
{
	struct wow_cache *wc = container_of(ws, struct wow_cache, health_work);
	u32 bs = wc->args.block_size;
	struct wow_health_info h;
	unsigned int noio;
	void *buf;
	int r = -ENOMEM;

	spin_lock_irq(&wc->lock);
	h = wc->health;
	spin_unlock_irq(&wc->lock);
	noio = memalloc_noio_save();
	buf = kmalloc(bs, GFP_NOIO);
	if (buf) {
		wow_health_encode(buf, bs, wc->sb.uuid, &h);
		r = wow_sync_io(wc->cache_dev->bdev, bs >> SECTOR_SHIFT, buf,
				bs, REQ_OP_WRITE | REQ_SYNC | REQ_FUA);
		kfree(buf);
	}
	memalloc_noio_restore(noio);
	if (r)
		DMERR("%s: cannot record needs_check on the cache device (%d)",
		      wow_name(wc), r);
}

#define MSG_NEEDS_CHECK "%s: needs_check: the cache device failed before (%s, at %llu s since 1970); loading in cleaner mode, so dirty data drains to the origin; 'format' clears it"

/*
 * The health block of a valid cache (block 1, which the probe read).
 * needs_check loads the cache in cleaner mode: its dirty data drains to
 * the origin and new writes go there.
 */
void wow_health_load(struct wow_cache *wc, const void *blk)
{
	if (wow_health_decode(blk, wc->args.block_size, wc->sb.uuid,
			      &wc->health))
		DMERR(MSG_NEEDS_CHECK, wow_name(wc), wc->health.what,
		      wc->health.time);
}

/*
 * Read the health block again, at the first preresume: a reload runs the
 * new table's constructor while the old table is live, and an error the
 * old one latches between the two (its needs_check written to the health
 * block) would otherwise go unseen (issue 34, finding 9).  Returns
 * whether needs_check is set.  Nothing runs on @wc yet: no lock.
 */
bool wow_health_reload(struct wow_cache *wc)
{
	u32 bs = wc->args.block_size;
	void *buf;

	if (wc->health.flags & WOW_SB_F_NEEDS_CHECK)
		return true;
	buf = kmalloc(bs, GFP_KERNEL);
	if (buf && !wow_sync_io(wc->cache_dev->bdev, bs >> SECTOR_SHIFT, buf,
				bs, REQ_OP_READ))
		wow_health_load(wc, buf);
	kfree(buf);
	return wc->health.flags & WOW_SB_F_NEEDS_CHECK;
}

/*
 * Allocate spare policy nodes so that @n calls that take one cannot fail:
 * note_write with lrw (a node per dirty group), a run or a hold (a node
 * per busy group).  Lock not held.
 */
int wow_policy_refill(struct wow_cache *wc, u32 n)
{
	size_t sz = wow_policy_group_bytes(&wc->policy);
	u32 want;

	spin_lock_irq(&wc->lock);
	want = wow_policy_spares_wanted(&wc->policy, n);
	spin_unlock_irq(&wc->lock);
	while (want--) {
		struct wow_group *g = kmalloc(sz, GFP_NOIO);

		if (!g)
			return -ENOMEM;
		spin_lock_irq(&wc->lock);
		wow_policy_add_spare(&wc->policy, g);
		spin_unlock_irq(&wc->lock);
	}
	return 0;
}

/* Wake the destage worker (it runs cleaning too). */
void wow_kick(struct wow_cache *wc)
{
	queue_work(wc->wq, &wc->destage_work);
}

/*
 * Memory for background I/O (destage runs, cleaning's copies), which frees
 * the log space writes wait for, so it must make progress when memory is
 * short.  Bios come from a private bio_set of 2 * max_destage_ios + 4.
 * Data pages come from the allocator while it has them (no retries, no
 * warnings), else from a reserve sized when the table is loaded: pages
 * for one run of max_destage_size and one copy (max_destage_ios counted up
 * to WOW_RESERVE_IOS).  Structs (runs, copies) come the same way from
 * their owners' pools (wow_bg_struct_alloc).  Everything goes back through
 * mempool_free, which refills a reserve first; so while nothing is in
 * flight the reserves are full and one run or copy can always start.
 * Nothing waits on a reserve: a run that finds none is retried when a run
 * in flight ends.
 *
 * Data pages are kept for reuse besides: a page background I/O frees goes,
 * once the reserve is full, onto a stack of up to WOW_KEPT_PAGES, and the
 * next run or copy takes it from there before asking the allocator.  A
 * steady destage then allocates no pages, and no page is cleared to be
 * overwritten at once (kernels built with init_on_alloc, Debian's among
 * them, zero every page they hand out: a 1 MiB run cleared 1 MiB).
 */
#define WOW_KEPT_PAGES	1024

int wow_core_alloc(struct wow_cache *wc)
{
	u32 bs = wc->args.block_size;
	u32 ios = min(wc->args.max_destage_ios, WOW_RESERVE_IOS);
	u32 blocks = wc->args.max_destage_size / bs;
	int r;

	init_waitqueue_head(&wc->idle_wait);
	INIT_WORK(&wc->health_work, wow_health_work);
	spin_lock_init(&wc->kept_lock);
	wc->kept_pages = kvmalloc_array(WOW_KEPT_PAGES,
					sizeof(*wc->kept_pages), GFP_KERNEL);
	if (!wc->kept_pages)
		return -ENOMEM;
	r = bioset_init(&wc->bg_bs, 2 * ios + 4, 0, BIOSET_NEED_BVECS);
	if (!r)
		r = mempool_init_page_pool(&wc->page_pool,
					   DIV_ROUND_UP(blocks * bs, PAGE_SIZE) +
					   WOW_RECORD_DATA_BYTES / PAGE_SIZE, 0);
	return r;
}

void wow_core_free(struct wow_cache *wc)
{
	while (wc->nr_kept)
		__free_page(wc->kept_pages[--wc->nr_kept]);
	kvfree(wc->kept_pages);
	mempool_exit(&wc->page_pool);
	bioset_exit(&wc->bg_bs);
}

/*
 * A page for background I/O (its contents undefined): a kept one, else the
 * allocator's, else the reserve's.  Any context.
 */
struct page *wow_bg_page_alloc(struct wow_cache *wc)
{
	struct page *page = NULL;
	unsigned long flags;

	spin_lock_irqsave(&wc->kept_lock, flags);
	if (wc->nr_kept)
		page = wc->kept_pages[--wc->nr_kept];
	spin_unlock_irqrestore(&wc->kept_lock, flags);
	if (page)
		return page;
	page = alloc_page(GFP_NOIO | __GFP_NORETRY | __GFP_NOWARN);
	return page ?: mempool_alloc(&wc->page_pool, GFP_NOWAIT);
}

/*
 * Free @pages[0..@n), skipping holes (a buffer allocated in part): to the
 * reserve while it is short (mempool_free refills it first), then onto the
 * kept stack while it has room, then to the allocator.  Any context.
 */
void wow_bg_pages_free(struct wow_cache *wc, struct page **pages, u32 n)
{
	unsigned long flags;
	u32 i = 0;

	while (i < n && READ_ONCE(wc->page_pool.curr_nr) <
	       wc->page_pool.min_nr) {
		if (pages[i])
			mempool_free(pages[i], &wc->page_pool);
		i++;
	}
	spin_lock_irqsave(&wc->kept_lock, flags);
	for (; i < n && wc->nr_kept < WOW_KEPT_PAGES; i++)
		if (pages[i])
			wc->kept_pages[wc->nr_kept++] = pages[i];
	spin_unlock_irqrestore(&wc->kept_lock, flags);
	for (; i < n; i++)
		if (pages[i])
			mempool_free(pages[i], &wc->page_pool);
}

/*
 * A zeroed struct of @bytes (a run, a copy) from the allocator, else from
 * @pool, whose elements hold @bytes of the table's load-time sizes:
 * *@pooled says which, for wow_bg_struct_free().
 */
void *wow_bg_struct_alloc(mempool_t *pool, size_t bytes, bool *pooled)
{
	void *p = kzalloc(bytes, GFP_NOIO | __GFP_NORETRY | __GFP_NOWARN);

	*pooled = !p;
	return p ?: mempool_alloc(pool, GFP_NOWAIT);
}

void wow_bg_struct_free(mempool_t *pool, void *p, bool pooled)
{
	if (pooled)
		mempool_free(p, pool);
	else
		kfree(p);
}

/* Pages bytes [@off, @off + @len) of a buffer span. */
static u32 span_pages(u32 off, u32 len)
{
	return DIV_ROUND_UP(offset_in_page(off) + len, PAGE_SIZE);
}

/* Add bytes [@off, @off + @len) of the buffer @pages to @bio. */
static void bg_add_pages(struct bio *bio, struct page **pages, u32 off,
			 u32 len)
{
	while (len) {
		u32 in = offset_in_page(off);
		u32 n = min_t(u32, len, PAGE_SIZE - in);

		__bio_add_page(bio, pages[off >> PAGE_SHIFT], n, in);
		off += n;
		len -= n;
	}
}

/*
 * A background bio on @bdev (from the private bio_set) carrying bytes
 * [@off, @off + @len) of the buffer @pages; @len 0: no data (a flush).
 */
struct bio *wow_bg_bio(struct wow_cache *wc, struct block_device *bdev,
		       blk_opf_t opf, struct page **pages, u32 off, u32 len)
{
	struct bio *bio = bio_alloc_bioset(bdev, len ? span_pages(off, len) : 0,
					   opf, GFP_NOIO, &wc->bg_bs);

	if (len)
		bg_add_pages(bio, pages, off, len);
	return bio;
}

/* The end of the read from block @i: consecutive slots, one bio's pages. */
static u32 read_range_end(struct wow_cache *wc, const u32 *slots, u32 nr,
			  u32 i)
{
	u32 bs = wc->args.block_size, j;

	for (j = i + 1; j < nr && slots[j] == slots[j - 1] + 1 &&
	     span_pages(i * bs, (j + 1 - i) * bs) <= BIO_MAX_VECS; j++)
		;
	return j;
}

/*
 * Read the blocks at cache slots @slots[0..@nr) into @pages, back to back
 * (a destage run, a cleaning copy): one bio per range of consecutive
 * slots.  *@pending is set to the number of bios before the first is
 * submitted; each completes through @end_io with @private.
 */
void wow_bg_read(struct wow_cache *wc, const u32 *slots, u32 nr,
		 struct page **pages, atomic_t *pending, bio_end_io_t *end_io,
		 void *private)
{
	u32 bs = wc->args.block_size, i, j, n = 0;

	for (i = 0; i < nr; i = j, n++)
		j = read_range_end(wc, slots, nr, i);
	atomic_set(pending, n);
	for (i = 0; i < nr; i = j) {
		struct bio *bio;

		j = read_range_end(wc, slots, nr, i);
		bio = wow_bg_bio(wc, wc->cache_dev->bdev, REQ_OP_READ, pages,
				 i * bs, (j - i) * bs);
		bio->bi_iter.bi_sector = wow_slot_sector(wc, slots[i]);
		bio->bi_private = private;
		bio->bi_end_io = end_io;
		submit_bio(bio);
	}
}

/* sort()'s comparison of two u64 (the log's, recovery's). */
int wow_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}
