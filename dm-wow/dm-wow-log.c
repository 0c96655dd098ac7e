// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow log: group commit, tombstones, checkpoints and recovery.
 *
 * Writes queue up while one log append is in flight; the commit worker then
 * takes everything queued that fits the open segment into one record (one
 * header block and the data of every write bio, one I/O) and submits it.
 *
 * Commit order of one append:
 *   1. if the batch holds a FUA or PREFLUSH write, a flush request, a
 *      discard or reclaim tombstones: flush the origin when writes bypassed
 *      the cache since its last flush;
 *   2. write header + data at the segment's write pointer, with
 *      PREFLUSH | FUA in the cases of step 1, so every earlier record of
 *      the segment is durable too and a recovery scan reaches this one;
 *   3. on completion: insert the written blocks into the index (dirty),
 *      drop the blocks the tombstones name, hand reclaimed segments back,
 *      then complete the bios.
 * A segment is reused only after a durable record carries tombstones for
 * every current copy it held, so no stale record can be replayed over
 * newer data.
 *
 * A segment's life (its states, the free list, the write order, the log
 * head): dm-wow-seg.c.
 *
 * Locking: wc->lock guards the segments, the index, the policy, the
 * pending lists and the batch; the commit worker (one at a time, on
 * wc->wq) gathers and submits with the lock dropped around I/O.  Recovery
 * and format run before the device is live and take the lock only where
 * a worker could already run.  Functions marked "lock held" assert it.
 */
#include <linux/blkdev.h>
#include <linux/bsearch.h>
#include <linux/crc32c.h>
#include <linux/highmem.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>

#include "dm-wow.h"
#include "dm-wow-seg.h"
#include "dm-wow-ckptlog.h"

/* A paced write's turn has come. */
static void pace_work(struct work_struct *ws)
{
	struct wow_cache *wc = container_of(to_delayed_work(ws),
					    struct wow_cache, pace_work);

	queue_work(wc->wq, &wc->commit_work);
}

/* The superblock the constructor found, or the one format will write. */
void wow_log_set_sb(struct wow_cache *wc, const struct wow_sb_info *sb)
{
	wc->sb = *sb;
}

int wow_log_alloc(struct wow_cache *wc)
{
	const struct wow_policy_ops *ops[WOW_NR_POLICIES] = {
		[WOW_POLICY_WOW] = &wow_policy_wow_ops,
		[WOW_POLICY_CSCAN] = &wow_policy_cscan_ops,
		[WOW_POLICY_LRW] = &wow_policy_lrw_ops,
	};
	u32 bs = wc->args.block_size;
	u32 i, cap;
	int r;

	wc->block_shift = ilog2(bs >> SECTOR_SHIFT);
	wc->blocks_per_seg = wc->args.erase_block_size / bs;
	wc->nr_segments = wc->sb.geo.nr_segments;
	wc->nr_slots = wc->nr_segments * wc->blocks_per_seg;

	cap = min3(wc->blocks_per_seg - 1,
		   wow_record_capacity(bs, 0,
				       wow_record_flags_v(wc->sb.version)),
		   WOW_RECORD_DATA_BYTES / bs);
	wc->max_record_blocks = rounddown_pow_of_two(cap);

	wc->segs = vzalloc(array_size(wc->nr_segments, sizeof(*wc->segs)));
	if (!wc->segs)
		return -ENOMEM;
	INIT_LIST_HEAD(&wc->free_segs);
	INIT_LIST_HEAD(&wc->drained);
	INIT_LIST_HEAD(&wc->seg_order);
	wc->lrw_cursor = WOW_NO_SLOT;
	for (i = 0; i < wc->nr_segments; i++) {
		INIT_LIST_HEAD(&wc->segs[i].list);
		INIT_LIST_HEAD(&wc->segs[i].order);
		atomic_set(&wc->segs[i].pins, 0);
	}
	wc->open_seg = WOW_NO_SEG;

	r = wow_index_init(&wc->index, wc->nr_slots);
	if (r)
		return r;
	for (i = 0; i < WOW_INDEX_TRACKS; i++) {
		wc->ckpt_csums[i] = kvcalloc(wow_ckpt_slot_blocks(wc->sb.version,
								  wc->nr_slots,
								  bs),
					     sizeof(__le32), GFP_KERNEL);
		if (!wc->ckpt_csums[i])
			return -ENOMEM;
	}
	wc->ckpt_changes = kvcalloc(BITS_TO_LONGS(wc->index.nr_track_bits),
				    sizeof(unsigned long), GFP_KERNEL);
	wc->ckpt_snap = wow_ckpt_snap_alloc(wc->nr_segments);
	wc->ckpt_cow_map = bitmap_zalloc(wow_ckpt_slot_blocks(wc->sb.version,
							      wc->nr_slots, bs),
					 GFP_KERNEL);
	wc->ckpt_cow_room = min_t(u64, WOW_CKPT_COW_BLOCKS,
				  wow_ckpt_slot_blocks(wc->sb.version,
						       wc->nr_slots, bs));
	wc->ckpt_cow_raw = kvmalloc_array(wc->ckpt_cow_room,
					  wow_ckpt_slots_per_block(wc->sb.version,
								   bs) *
					  sizeof(struct wow_slot), GFP_KERNEL);
	wc->ckpt_cow_ids = kvmalloc_array(wc->ckpt_cow_room,
					  sizeof(*wc->ckpt_cow_ids), GFP_KERNEL);
	if (!wc->ckpt_changes || !wc->ckpt_snap || !wc->ckpt_cow_map ||
	    !wc->ckpt_cow_raw || !wc->ckpt_cow_ids)
		return -ENOMEM;
	r = wow_seg_policy_init(wc, ops[wc->args.policy]);
	if (r)
		return r;

	wc->marks = kmalloc_array(WOW_CLEAN_MARKS, sizeof(*wc->marks),
				  GFP_KERNEL);
	if (!wc->marks)
		return -ENOMEM;
	wc->batch.hdr = kmalloc(bs, GFP_KERNEL);
	wc->batch.pages = kcalloc(WOW_RECORD_DATA_BYTES / PAGE_SIZE,
				  sizeof(struct page *), GFP_KERNEL);
	if (!wc->batch.hdr || !wc->batch.pages)
		return -ENOMEM;
	for (i = 0; i < WOW_RECORD_DATA_BYTES / PAGE_SIZE; i++) {
		wc->batch.pages[i] = alloc_page(GFP_KERNEL);
		if (!wc->batch.pages[i])
			return -ENOMEM;
	}
	r = bioset_init(&wc->log_bs, 4, 0, BIOSET_NEED_BVECS);
	if (r)
		return r;
	bio_list_init(&wc->pending_writes);
	bio_list_init(&wc->pending_flushes);
	bio_list_init(&wc->pending_discards);
	INIT_LIST_HEAD(&wc->pending_metas);
	INIT_LIST_HEAD(&wc->pending_copies);
	INIT_LIST_HEAD(&wc->copies_done);
	INIT_LIST_HEAD(&wc->batch.metas);
	INIT_LIST_HEAD(&wc->batch.copies);
	INIT_WORK(&wc->commit_work, wow_log_commit_work);
	INIT_WORK(&wc->ckpt_work, wow_ckptlog_work);
	INIT_DELAYED_WORK(&wc->pace_work, pace_work);
	mutex_init(&wc->ckpt_mutex);
	wow_pace_init(&wc->pace);
	wow_pace_init(&wc->dpace);
	wc->pace_sample_ns = ktime_get_ns();
	return 0;
}

/*
 * Stop the pacing timer and let a record in flight end (no user bio is in
 * flight: postsuspend, dtr).
 */
void wow_log_stop(struct wow_cache *wc)
{
	cancel_delayed_work_sync(&wc->pace_work);
	/*
	 * A record no bio waits for (clean marks alone) may still be in
	 * flight: suspend waited for the bios only.  The checkpoint written
	 * next must come after it (issue 34, finding 9).  Destage is
	 * stopped, so no new marks come and this ends.
	 */
	while (READ_ONCE(wc->batch.busy) || READ_ONCE(wc->batch.done)) {
		wait_event_timeout(wc->idle_wait, !READ_ONCE(wc->batch.busy) &&
				   !READ_ONCE(wc->batch.done), HZ);
		flush_work(&wc->commit_work);
	}
	/* and a checkpoint written in the background */
	wait_event(wc->idle_wait, !READ_ONCE(wc->ckpt_busy));
	flush_work(&wc->ckpt_work);
}

void wow_log_free(struct wow_cache *wc)
{
	u32 i;

	if (wc->segs) {
		for (i = 0; i < wc->nr_segments; i++)
			kvfree(wc->segs[i].tombs);
		vfree(wc->segs);
		wc->segs = NULL;
	}
	if (wc->policy.ops)
		wow_policy_exit(&wc->policy);
	wow_index_exit(&wc->index);
	for (i = 0; i < WOW_INDEX_TRACKS; i++) {
		kvfree(wc->ckpt_csums[i]);
		wc->ckpt_csums[i] = NULL;
		wc->ckpt_known[i] = false;
	}
	kvfree(wc->ckpt_changes);
	wc->ckpt_changes = NULL;
	wow_ckpt_snap_free(wc->ckpt_snap);
	wc->ckpt_snap = NULL;
	bitmap_free(wc->ckpt_cow_map);
	wc->ckpt_cow_map = NULL;
	kvfree(wc->ckpt_cow_raw);
	wc->ckpt_cow_raw = NULL;
	kvfree(wc->ckpt_cow_ids);
	wc->ckpt_cow_ids = NULL;
	kfree(wc->marks);
	wc->marks = NULL;
	kfree(wc->batch.hdr);
	wc->batch.hdr = NULL;
	if (wc->batch.pages) {
		for (i = 0; i < WOW_RECORD_DATA_BYTES / PAGE_SIZE; i++)
			if (wc->batch.pages[i])
				__free_page(wc->batch.pages[i]);
		kfree(wc->batch.pages);
		wc->batch.pages = NULL;
	}
	bioset_exit(&wc->log_bs);
}

/*
 * The log is its own record of write order: a block written (or written
 * again) gets a slot at the head, so the dirty blocks in the order they
 * were last written are the dirty slots of the segments in seq order
 * (wc->seg_order), each from block 0 to its write pointer.  lrw walks
 * that; wc->lrw_cursor keeps its place: every slot before it is clean or
 * dead, and stays so (only the head gets new dirty slots).
 */

/* The crc32c of @len bytes at byte @off of @pages (lowmem, back to back). */
static u32 pages_crc(struct page **pages, u32 off, u32 len)
{
	u32 c = ~0U, n;

	for (; len; off += n, len -= n) {
		n = min_t(u32, len, PAGE_SIZE - offset_in_page(off));
		c = crc32c(c, page_address(pages[off >> PAGE_SHIFT]) +
			   offset_in_page(off), n);
	}
	return c;
}

/*
 * The crc32c of each of the batch's data blocks into @crcs (a block spans
 * pages, or a page holds blocks); returns the crc32c of the array.
 */
static u32 batch_block_crcs(struct wow_cache *wc, __le32 *crcs)
{
	struct wow_batch *b = &wc->batch;
	u32 bs = wc->args.block_size, i;

	for (i = 0; i < b->nr_data; i++)
		crcs[i] = cpu_to_le32(pages_crc(b->pages, i * bs, bs));
	return crc32c(~0U, crcs, b->nr_data * sizeof(*crcs));
}

/* The batch's data slots take their crcs from its header (lock held). */
static void set_batch_crcs(struct wow_cache *wc)
{
	struct wow_batch *b = &wc->batch;
	__le32 *crcs = wow_record_crcs(b->hdr, b->nr_tombs, b->nr_data);
	u32 first = wow_seg_slot(wc, b->seg, b->block + 1), i;

	lockdep_assert_held(&wc->lock);
	for (i = 0; i < b->nr_data; i++)
		if (wow_slot_at(&wc->index, first + i)->flags & WOW_SLOT_VALID)
			wow_index_set_crc(&wc->index, first + i,
					  le32_to_cpu(crcs[i]));
}

#define MSG_BAD_BLOCK "%s: origin block %llu: its cached copy (cache block %u) does not match its crc32c (%08x, read %08x): not destaged; reads of it fail until it is written again"

/*
 * Blocks read from the cache for destage or cleaning: @n blocks back to
 * back in @pages, read from @slots (WOW_NO_SLOT: left out) for origin
 * blocks @obs (NULL: @first on).  Each block still current where it was
 * read, whose crc the index knows (format 5), is checked against it; one
 * that does not match is marked WOW_SLOT_BAD: it is not destaged or
 * copied (it keeps its segment from cleaning), reads of it fail, the
 * kernel log names it and needs_check is latched.  @crcs: room for @n.
 * Returns how many were bad.  Lock not held.
 */
u32 wow_log_check_blocks(struct wow_cache *wc, const u32 *slots,
			 const u64 *obs, u64 first, u32 n, struct page **pages,
			 u32 *crcs)
{
	u32 bs = wc->args.block_size, i, bad = 0;

	if (!(wow_record_flags_v(wc->sb.version) & WOW_REC_CRCS))
		return 0;
	for (i = 0; i < n; i++)
		if (slots[i] != WOW_NO_SLOT)
			crcs[i] = pages_crc(pages, i * bs, bs);
	spin_lock_irq(&wc->lock);
	for (i = 0; i < n; i++) {
		u64 ob = obs ? obs[i] : first + i;
		struct wow_slot *sl;

		if (slots[i] == WOW_NO_SLOT)
			continue;
		sl = wow_slot_at(&wc->index, slots[i]);
		if ((sl->flags & (WOW_SLOT_VALID | WOW_SLOT_CRC | WOW_SLOT_BAD)) !=
		    (WOW_SLOT_VALID | WOW_SLOT_CRC) ||
		    from_oblock(wow_slot_oblock(sl)) != ob || sl->crc == crcs[i])
			continue;
		wow_index_set_flags(&wc->index, slots[i], WOW_SLOT_BAD, 0);
		wc->segs[wow_slot_seg(wc, slots[i])].nr_bad++;
		bad++;
		DMERR_LIMIT(MSG_BAD_BLOCK, wow_name(wc), ob, slots[i], sl->crc,
			    crcs[i]);
	}
	spin_unlock_irq(&wc->lock);
	if (bad) {
		atomic64_add(bad, &wc->stats.bad_blocks);
		wow_latch_check(wc, "a cached block's crc32c");
	}
	return bad;
}

/*
 * Forget slot @slot's current copy (lock held).  @replaced: a new dirty
 * copy takes its place at once (its group stays dirty; the policy hears of
 * the write); else the policy forgets the block once the index has.
 */
static void __drop_slot(struct wow_cache *wc, u32 slot, bool replaced)
{
	struct wow_slot *sl = wow_slot_at(&wc->index, slot);
	struct wow_segment *seg = &wc->segs[wow_slot_seg(wc, slot)];
	u64 ob = from_oblock(wow_slot_oblock(sl));
	bool forget = false;

	lockdep_assert_held(&wc->lock);
	if (sl->flags & WOW_SLOT_DIRTY) {
		/* a DESTAGING copy: its run_done tells the policy */
		forget = !replaced && !(sl->flags & WOW_SLOT_DESTAGING);
		wc->segs[wow_slot_seg(wc, slot)].nr_dirty--;
		wc->dirty_blocks--;
	}
	if (sl->flags & WOW_SLOT_BAD)
		seg->nr_bad--;
	seg->nr_valid--;
	wc->valid_blocks--;
	wow_index_remove(&wc->index, slot);
	if (forget)
		wow_policy_forget(&wc->policy, ob);
}

static void drop_slot(struct wow_cache *wc, u32 slot)
{
	__drop_slot(wc, slot, false);
}

/* Drop every cached copy of [start, start + nr) (lock held). */
static void drop_range(struct wow_cache *wc, u64 start, u64 nr)
{
	u64 b;
	u32 s;

	lockdep_assert_held(&wc->lock);
	if (nr <= wc->nr_slots) {
		for (b = start; b < start + nr; b++) {
			s = wow_index_lookup(&wc->index, to_oblock(b));
			if (s != WOW_NO_SLOT)
				drop_slot(wc, s);
		}
		return;
	}
	for (s = 0; s < wc->nr_slots; s++) {
		struct wow_slot *sl = wow_slot_at(&wc->index, s);

		b = from_oblock(wow_slot_oblock(sl));
		if ((sl->flags & WOW_SLOT_VALID) && b >= start && b < start + nr)
			drop_slot(wc, s);
	}
}

static bool range_cached(struct wow_cache *wc, u64 start, u64 nr)
{
	u64 b;

	if (nr > 64)
		return wc->valid_blocks != 0;
	for (b = start; b < start + nr; b++)
		if (wow_index_lookup(&wc->index, to_oblock(b)) != WOW_NO_SLOT)
			return true;
	return false;
}

static void queue_bio(struct wow_cache *wc, struct bio_list *list,
		      struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&wc->lock, flags);
	bio_list_add(list, bio);
	spin_unlock_irqrestore(&wc->lock, flags);
	queue_work(wc->wq, &wc->commit_work);
}

/*
 * A write that bypassed the cache completed on the origin: the next FLUSH
 * must flush the origin too.  Only at completion: a FLUSH covers the
 * writes completed before it was issued, so the origin flush a later
 * FLUSH issues must come after this write completed.
 */
void wow_log_bypass_done(struct wow_cache *wc)
{
	unsigned long flags;

	spin_lock_irqsave(&wc->lock, flags);
	wow_flush_gen_write(&wc->origin_gen);
	spin_unlock_irqrestore(&wc->lock, flags);
}

void wow_log_queue_write(struct wow_cache *wc, struct bio *bio)
{
	queue_bio(wc, &wc->pending_writes, bio);
}

void wow_log_queue_flush(struct wow_cache *wc, struct bio *bio)
{
	queue_bio(wc, &wc->pending_flushes, bio);
}

void wow_log_queue_discard(struct wow_cache *wc, struct bio *bio)
{
	queue_bio(wc, &wc->pending_discards, bio);
}

/* Cleaning's copy, read: append it (from its last read's completion). */
void wow_log_queue_copy(struct wow_cache *wc, struct wow_copy *c)
{
	unsigned long flags;

	spin_lock_irqsave(&wc->lock, flags);
	list_add_tail(&c->list, &wc->pending_copies);
	queue_work(wc->wq, &wc->commit_work);
	spin_unlock_irqrestore(&wc->lock, flags);
}

/*
 * Give copied block @i back to destage with its slot unmoved, and leave it
 * out of the copy (lock held).
 */
static void release_copied(struct wow_cache *wc, struct wow_copy *c, u32 i)
{
	u64 ob = c->oblocks[i];
	u32 src = c->slots[i];

	lockdep_assert_held(&wc->lock);
	if (src == WOW_NO_SLOT)
		return;
	if (wow_index_lookup(&wc->index, to_oblock(ob)) == src) {
		wow_index_set_flags(&wc->index, src, 0, WOW_SLOT_DESTAGING);
		/* its group lives while the block is held; a bad one goes */
		if (!(wow_slot_at(&wc->index, src)->flags & WOW_SLOT_BAD))
			WARN_ON_ONCE(wow_policy_mark_dirty(&wc->policy, ob));
	}
	wow_policy_run_done(&wc->policy, ob, 1);
	wow_log_unpin(wc, wow_slot_seg(wc, src));
	c->slots[i] = WOW_NO_SLOT;
}

/* Hand copies back to cleaning, what is left of them released (lock held). */
static void copies_done(struct wow_cache *wc, struct list_head *copies)
{
	struct wow_copy *c, *tmp;
	u32 i;

	lockdep_assert_held(&wc->lock);
	list_for_each_entry_safe(c, tmp, copies, list) {
		for (i = 0; i < c->nr; i++)
			release_copied(wc, c, i);
		list_move_tail(&c->list, &wc->copies_done);
	}
}

/*
 * Leave out the blocks of @c no longer current at the slot they were read
 * from (written or discarded since); sets and returns how many are left
 * (lock held).  Their slots cannot change again before the record is
 * finished: only finishing a record moves or drops a copy.
 */
static u32 prune_copy(struct wow_cache *wc, struct wow_copy *c)
{
	u32 i, cur, n = 0;

	lockdep_assert_held(&wc->lock);
	for (i = 0; i < c->nr; i++) {
		if (c->slots[i] == WOW_NO_SLOT)
			continue;
		cur = wow_index_lookup(&wc->index, to_oblock(c->oblocks[i]));
		if (c->status || cur != c->slots[i] ||
		    (wow_slot_at(&wc->index, cur)->flags & WOW_SLOT_BAD))
			release_copied(wc, c, i);
		else
			n++;
	}
	c->nr_live = n;
	return n;
}

static void free_metas(struct list_head *metas, int error)
{
	struct wow_meta *m, *tmp;

	list_for_each_entry_safe(m, tmp, metas, list) {
		list_del_init(&m->list);
		if (m->done) {
			m->error = error;
			complete(m->done);
		}
		kvfree(m->tombs);
		kvfree(m->own_last);
		kfree(m);
	}
}

/* Reclaim metas that failed: their victims stay (lock held). */
static void unvictim(struct wow_cache *wc, struct list_head *metas)
{
	struct wow_meta *m;

	lockdep_assert_held(&wc->lock);
	list_for_each_entry(m, metas, list) {
		if (m->victim == WOW_NO_SEG)
			continue;
		wc->segs[m->victim].state = WOW_SEG_CLOSED;
		wc->meta_inflight = false;
	}
}

/*
 * Withdraw cleaning's records not yet written (suspend): victims stay,
 * copied blocks stay where they are.
 */
void wow_log_cancel_metas(struct wow_cache *wc)
{
	LIST_HEAD(metas);

	spin_lock_irq(&wc->lock);
	unvictim(wc, &wc->pending_metas);
	list_splice_init(&wc->pending_metas, &metas);
	copies_done(wc, &wc->pending_copies);
	spin_unlock_irq(&wc->lock);
	free_metas(&metas, -EAGAIN);
	wow_kick(wc);
}

/*
 * Tombstones for a clean victim: its current copies, and the tombstones
 * it holds that are still needed.  NULL when that is none (nothing
 * current in it): then no record is needed and it is DRAINING already.
 */
static struct wow_meta *build_meta(struct wow_cache *wc, u32 v)
{
	u32 first = v * wc->blocks_per_seg, i, n, cap;
	struct wow_segment *seg = &wc->segs[v];
	struct wow_meta *m;
	u64 min_seq;

	spin_lock_irq(&wc->lock);
	cap = seg->nr_valid + seg->nr_tombs;
	spin_unlock_irq(&wc->lock);

	m = kzalloc(sizeof(*m), GFP_NOIO);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->tombs = kvmalloc_array(max(cap, 1U), sizeof(*m->tombs), GFP_NOIO);
	m->own_last = kvmalloc_array(max(cap, 1U), sizeof(*m->own_last),
				     GFP_NOIO);
	if (!m->tombs || !m->own_last) {
		kvfree(m->tombs);
		kvfree(m->own_last);
		kfree(m);
		return ERR_PTR(-ENOMEM);
	}
	m->victim = v;

	spin_lock_irq(&wc->lock);
	min_seq = wow_seg_min_disk_seq_bound(wc);
	n = 0;
	for (i = 0; i < wc->blocks_per_seg; i++) {
		struct wow_slot *sl = wow_slot_at(&wc->index, first + i);
		u64 b = from_oblock(wow_slot_oblock(sl));

		if (!(sl->flags & WOW_SLOT_VALID))
			continue;
		if (n && m->tombs[n - 1].start + m->tombs[n - 1].nr == b) {
			m->tombs[n - 1].nr++;
			m->own_last[n - 1] = i;
			continue;
		}
		m->tombs[n].start = b;
		m->tombs[n].nr = 1;
		m->tombs[n].t = seg->max_seq;
		m->tombs[n].flags = 0;
		m->own_last[n] = i;
		n++;
	}
	m->nr_own = n;
	for (i = 0; i < seg->nr_tombs; i++)
		if (seg->tombs[i].t >= min_seq)
			m->tombs[n++] = seg->tombs[i];
	if (!n) {
		seg->nr_tombs = 0;
		seg->state = WOW_SEG_DRAINING;
		spin_unlock_irq(&wc->lock);
		kvfree(m->tombs);
		kvfree(m->own_last);
		kfree(m);
		return NULL;
	}
	m->nr_tombs = n;
	seg->state = WOW_SEG_FREEING;
	wc->meta_inflight = true;
	spin_unlock_irq(&wc->lock);
	return m;
}

/*
 * A read from segment @s is in flight (lock held): the segment is not
 * freed under it.
 */
void wow_log_pin(struct wow_cache *wc, u32 s)
{
	lockdep_assert_held(&wc->lock);
	atomic_inc(&wc->segs[s].pins);
}

/* The read is done; a retired segment it held may be freed now. */
void wow_log_unpin(struct wow_cache *wc, u32 s)
{
	if (atomic_dec_and_test(&wc->segs[s].pins) &&
	    READ_ONCE(wc->segs[s].state) == WOW_SEG_DRAINING)
		wow_kick(wc);
}

/* Take the copies the log is done with (lock held), for cleaning to free. */
void wow_log_take_copies_done(struct wow_cache *wc, struct list_head *done)
{
	lockdep_assert_held(&wc->lock);
	list_splice_init(&wc->copies_done, done);
}

/*
 * Segment lifecycle, the cleaning end (cleaning picks the victim and
 * copies its dirty blocks forward; the log changes the segment's state):
 * a closed victim with every block clean is retired, FREEING while the
 * record of tombstones for its copies is written (none needed when it
 * holds nothing current), DRAINING until reads and destage runs from it
 * finish, then FREE.
 * Returns 0, or -ENOMEM: the next kick tries again.
 */
int wow_log_retire_seg(struct wow_cache *wc, u32 v)
{
	struct wow_meta *m = build_meta(wc, v);

	if (IS_ERR(m))
		return PTR_ERR(m);
	if (m)
		wow_log_queue_meta(wc, m);
	else
		wow_kick(wc);
	return 0;
}

/*
 * The retired segment @v goes back on the free list once no read or
 * destage run pins it (lock held): true when cleaning is done with it,
 * freed now or, while pinned, left on the drained list for
 * wow_log_reap_drained (a destage run to a slow origin can pin it for
 * seconds: cleaning goes on with other victims meanwhile).
 */
bool wow_log_free_seg(struct wow_cache *wc, u32 v)
{
	struct wow_segment *seg = &wc->segs[v];

	lockdep_assert_held(&wc->lock);
	if (seg->state != WOW_SEG_DRAINING)
		return false;
	if (list_empty(&seg->list))
		list_add_tail(&seg->list, &wc->drained);
	wow_log_reap_drained(wc);
	return true;
}

/*
 * Free the drained segments no pin holds any more (lock held); returns
 * how many.  The list holds only retired segments: those still pinned
 * stay (a few).
 */
u32 wow_log_reap_drained(struct wow_cache *wc)
{
	struct wow_segment *seg, *tmp;
	u32 n = 0;

	lockdep_assert_held(&wc->lock);
	list_for_each_entry_safe(seg, tmp, &wc->drained, list) {
		if (atomic_read(&seg->pins))
			continue;
		list_del_init(&seg->list);
		wow_seg_free_add(wc, seg - wc->segs);
		atomic64_inc(&wc->stats.reclaimed_segments);
		n++;
	}
	return n;
}

/* Has a retired segment's record been handed to the log? (lock held) */
bool wow_log_meta_inflight(struct wow_cache *wc)
{
	lockdep_assert_held(&wc->lock);
	return wc->meta_inflight;
}

void wow_log_queue_meta(struct wow_cache *wc, struct wow_meta *m)
{
	spin_lock_irq(&wc->lock);
	list_add_tail(&m->list, &wc->pending_metas);
	spin_unlock_irq(&wc->lock);
	queue_work(wc->wq, &wc->commit_work);
}

/*
 * Destage progress (lock held): the copy of origin block @ob recorded at
 * or before seq @t is durable on the origin.  A clean mark for it goes
 * into a coming record, so that after a crash recovery takes the block as
 * clean and does not destage it again.  Any @t from the destaged copy's
 * record up to completed_seq is right: no newer copy of @ob completed
 * while the destaged one is still current.  Marks are hints: when there
 * is no room for one it is dropped, and after a crash the block is
 * destaged once more (the same data).
 */
static void note_clean(struct wow_cache *wc, u64 ob, u64 t)
{
	struct wow_tomb_range *last = wc->nr_marks ?
				      &wc->marks[wc->nr_marks - 1] : NULL;

	lockdep_assert_held(&wc->lock);
	if (last && last->t == t && last->start + last->nr == ob &&
	    last->nr < U32_MAX) {
		last->nr++;
		return;
	}
	if (wc->nr_marks == WOW_CLEAN_MARKS)
		return;
	if (!wc->nr_marks)
		wc->marks_at = jiffies;
	last = &wc->marks[wc->nr_marks++];
	last->start = ob;
	last->nr = 1;
	last->t = t;
	last->flags = WOW_TOMB_CLEAN;
	if (wc->nr_marks == WOW_CLEAN_MARKS / 2)
		queue_work(wc->wq, &wc->commit_work);
}

/* Do the pending marks want a record of their own? (lock held) */
/*
 * Destage made the copy at @slot, of origin block @ob, durable on the
 * origin (lock held): the block is clean, and a clean mark says so.
 */
void wow_log_block_clean(struct wow_cache *wc, u32 slot, u64 ob)
{
	lockdep_assert_held(&wc->lock);
	wow_index_set_flags(&wc->index, slot, 0, WOW_SLOT_DIRTY);
	wc->segs[wow_slot_seg(wc, slot)].nr_dirty--;
	wc->dirty_blocks--;
	note_clean(wc, ob, wc->completed_seq);
}

static bool marks_due(struct wow_cache *wc)
{
	return wc->nr_marks &&
	       (wc->nr_marks >= WOW_CLEAN_MARKS / 2 ||
		time_after_eq(jiffies, wc->marks_at +
			      msecs_to_jiffies(WOW_MARKS_DUE_MS))) &&
	       !wow_log_short(wc);
}

/*
 * The housekeeping tick: sample the rate cleaning frees log space
 * (segments freed less the blocks copied to free them) and the rate
 * destage cleans dirty blocks, and have clean marks that waited long
 * enough written.
 */
void wow_log_tick(struct wow_cache *wc)
{
	u64 now = ktime_get_ns();
	u64 rec = atomic64_read(&wc->stats.reclaimed_segments);
	u64 copied = atomic64_read(&wc->stats.copied_blocks);
	u64 destaged = atomic64_read(&wc->stats.destage_blocks);
	u64 freed, used;
	bool due;

	spin_lock_irq(&wc->lock);
	/* clear_stats restarts the counters: start the sample over */
	if (rec >= wc->pace_reclaimed && copied >= wc->pace_copied) {
		freed = (rec - wc->pace_reclaimed) * wc->blocks_per_seg;
		used = copied - wc->pace_copied;
		wow_pace_sample(&wc->pace, freed > used ? freed - used : 0,
				now - wc->pace_sample_ns);
	}
	if (destaged >= wc->pace_destaged)
		wow_pace_sample(&wc->dpace, destaged - wc->pace_destaged,
				now - wc->pace_sample_ns);
	wc->pace_reclaimed = rec;
	wc->pace_copied = copied;
	wc->pace_destaged = destaged;
	wc->pace_sample_ns = now;
	due = marks_due(wc);
	spin_unlock_irq(&wc->lock);
	if (due)
		queue_work(wc->wq, &wc->commit_work);
}

/*
 * Flush the origin for the bypassed writes up to @gen (what
 * wow_flush_gen_begin gave; 0: none to flush), and count them durable
 * only once the flush succeeded.  Sleeps.
 */
static int flush_origin_bypassed(struct wow_cache *wc, u64 gen)
{
	int r;

	if (!gen)
		return 0;
	r = blkdev_issue_flush(wc->origin_dev->bdev);
	if (r) {
		atomic64_inc(&wc->stats.origin_errors);
		return r;
	}
	spin_lock_irq(&wc->lock);
	wow_flush_gen_end(&wc->origin_gen, gen);
	spin_unlock_irq(&wc->lock);
	return 0;
}

/*
 * Make every completed write durable: flush the cache device if a record
 * completed since its last flush, and the origin if writes bypassed the
 * cache since its last flush.  Sleeps.
 */
int wow_log_commit(struct wow_cache *wc)
{
	u64 seq, origin;
	int r;

	spin_lock_irq(&wc->lock);
	seq = wc->completed_seq;
	origin = wow_flush_gen_begin(&wc->origin_gen);
	spin_unlock_irq(&wc->lock);

	r = flush_origin_bypassed(wc, origin);
	if (r)
		return r;
	if (READ_ONCE(wc->durable_seq) >= seq)
		return 0;
	r = blkdev_issue_flush(wc->cache_dev->bdev);
	if (r) {
		wow_error(wc, WOW_STATE_READ_ONLY, "cache flush", r);
		return r;
	}
	spin_lock_irq(&wc->lock);
	if (wc->durable_seq < seq)
		wc->durable_seq = seq;
	spin_unlock_irq(&wc->lock);
	return 0;
}

static void batch_endio(struct bio *bio)
{
	struct wow_cache *wc = bio->bi_private;
	blk_status_t status = bio->bi_status;
	unsigned long flags;

	bio_put(bio);
	spin_lock_irqsave(&wc->lock, flags);
	wc->batch.status = status;
	wc->batch.busy = false;
	wc->batch.done = true;
	/* under the lock: suspend cannot see the batch done before this */
	queue_work(wc->wq, &wc->commit_work);
	spin_unlock_irqrestore(&wc->lock, flags);
}

static void end_bios(struct bio_list *list, blk_status_t status)
{
	struct bio *bio;

	while ((bio = bio_list_pop(list))) {
		bio->bi_status = status;
		bio_endio(bio);
	}
}

/* Pass a discard down to the origin (its tombstone, if any, is durable). */
static void discard_origin(struct wow_cache *wc, struct bio *bio)
{
	struct block_device *origin = wc->origin_dev->bdev;

	if (!bdev_max_discard_sectors(origin)) {
		bio_endio(bio);
		return;
	}
	bio_set_dev(bio, origin);
	bio->bi_iter.bi_sector = dm_target_offset(wc->ti,
						  bio->bi_iter.bi_sector);
	submit_bio_noacct(bio);
}

static void fail_batch(struct wow_cache *wc, struct list_head *metas)
{
	struct wow_batch *b = &wc->batch;

	wow_error(wc, WOW_STATE_READ_ONLY, "log write",
		  blk_status_to_errno(b->status));
	end_bios(&b->writes, BLK_STS_IOERR);
	end_bios(&b->flushes, BLK_STS_IOERR);
	end_bios(&b->discards, BLK_STS_IOERR);
	spin_lock_irq(&wc->lock);
	unvictim(wc, metas);
	copies_done(wc, &b->copies);
	spin_unlock_irq(&wc->lock);
	free_metas(metas, -EIO);
	wake_up(&wc->idle_wait);
	wow_kick(wc);
}

/* Record the batch's tombstones as held by its segment (lock held). */
static void hold_tombs(struct wow_cache *wc)
{
	struct wow_batch *b = &wc->batch;
	struct wow_tomb *t = wow_record_tombs(b->hdr);
	struct wow_segment *seg = &wc->segs[b->seg];
	u32 i;

	lockdep_assert_held(&wc->lock);
	for (i = 0; i < b->nr_tombs; i++) {
		struct wow_tomb_range *r = &seg->tombs[seg->nr_tombs];

		/* clean marks are hints: never carried */
		if (le32_to_cpu(t[i].flags) & WOW_TOMB_CLEAN)
			continue;
		r->start = le64_to_cpu(t[i].start);
		r->t = le64_to_cpu(t[i].t);
		r->nr = le32_to_cpu(t[i].nr);
		r->flags = 0;
		seg->nr_tombs++;
	}
}

/* Insert one written bio's blocks, starting at @slot (lock held). */
static void insert_write(struct wow_cache *wc, struct bio *bio, u32 slot)
{
	struct wow_segment *seg = &wc->segs[wow_slot_seg(wc, slot)];
	u64 ob = wow_bio_oblock(wc, bio);
	u32 n = wow_bio_blocks(wc, bio), i;
	bool hit = false;

	lockdep_assert_held(&wc->lock);
	for (i = 0; i < n; i++, slot++) {
		u32 old = wow_index_lookup(&wc->index, to_oblock(ob + i));

		if (old != WOW_NO_SLOT) {
			hit = true;
			__drop_slot(wc, old, true);
		}
		wow_index_insert(&wc->index, to_oblock(ob + i), slot,
				 WOW_SLOT_DIRTY);
		seg->nr_valid++;
		wc->segs[wow_slot_seg(wc, slot)].nr_dirty++;
		wc->valid_blocks++;
		wc->dirty_blocks++;
	}
	WARN_ON_ONCE(wow_policy_note_write(&wc->policy, ob, n,
					   wow_bio_io(bio)->sequential));
	atomic64_inc(hit ? &wc->stats.write_hits : &wc->stats.write_misses);
}

/*
 * Insert cleaning's copy of @ob at @slot in place of the one at @src, which
 * it still is (the copy was pruned when gathered); give it back to destage
 * (lock held).
 */
static void insert_copy(struct wow_cache *wc, u64 ob, u32 src, u32 slot)
{
	u32 old = wow_index_lookup(&wc->index, to_oblock(ob));

	lockdep_assert_held(&wc->lock);
	WARN_ON_ONCE(old != src);
	if (old != WOW_NO_SLOT)
		__drop_slot(wc, old, true);	/* DESTAGING: the policy keeps it */
	wow_index_insert(&wc->index, to_oblock(ob), slot, WOW_SLOT_DIRTY);
	wc->segs[wow_slot_seg(wc, slot)].nr_valid++;
	wc->segs[wow_slot_seg(wc, slot)].nr_dirty++;
	wc->valid_blocks++;
	wc->dirty_blocks++;
	WARN_ON_ONCE(wow_policy_mark_dirty(&wc->policy, ob));
	wow_policy_run_done(&wc->policy, ob, 1);
}

/* Insert the batch's copies, from @slot; returns the slot after (lock held). */
static u32 insert_copies(struct wow_cache *wc, u32 slot)
{
	struct wow_copy *c;
	u32 i, n = 0;

	lockdep_assert_held(&wc->lock);
	list_for_each_entry(c, &wc->batch.copies, list) {
		for (i = 0; i < c->nr; i++) {
			if (c->slots[i] == WOW_NO_SLOT)
				continue;
			insert_copy(wc, c->oblocks[i], c->slots[i], slot++);
			wow_log_unpin(wc, wow_slot_seg(wc, c->slots[i]));
			c->slots[i] = WOW_NO_SLOT;
			n++;
		}
	}
	atomic64_add(n, &wc->stats.copied_blocks);
	copies_done(wc, &wc->batch.copies);
	return slot;
}

/*
 * Victim @m's tombstones written so far (a meta larger than a record goes
 * over several): drop the copies they kill now, so the index follows the
 * log record by record.  A checkpoint taken before the record with the
 * rest would otherwise hold copies a record before it killed, and a load
 * from it keep them (lock held).
 */
static void drop_tombstoned(struct wow_cache *wc, struct wow_meta *m)
{
	u32 upto = min(m->done_tombs, m->nr_own), i, slot;

	lockdep_assert_held(&wc->lock);
	if (upto <= m->nr_dropped)
		return;
	for (i = m->nr_dropped ? m->own_last[m->nr_dropped - 1] + 1 : 0;
	     i <= m->own_last[upto - 1]; i++) {
		slot = wow_seg_slot(wc, m->victim, i);
		if (wow_slot_at(&wc->index, slot)->flags & WOW_SLOT_VALID)
			drop_slot(wc, slot);
	}
	m->nr_dropped = upto;
}

/*
 * Step 3 of the commit order: the batch's record is written (or failed).
 * Returns -ENOMEM when memory for the bookkeeping could not be had yet.
 */
static int finish_batch(struct wow_cache *wc)
{
	struct wow_batch *b = &wc->batch;
	struct wow_meta *m;
	struct list_head metas;
	struct bio *bio;
	u32 slot, i;

	INIT_LIST_HEAD(&metas);
	if (b->status) {
		list_splice_init(&b->metas, &metas);
		fail_batch(wc, &metas);
		b->done = false;
		b->status = BLK_STS_OK;
		return 0;
	}

	if (wow_seg_reserve_tombs(wc, b->seg, b->nr_tombs))
		return -ENOMEM;
	list_splice_init(&b->metas, &metas);

	spin_lock_irq(&wc->lock);
	wc->ckpt_log_blocks += 1 + b->nr_data;
	wc->completed_seq = b->seq;
	if (b->fua)
		wc->durable_seq = b->seq;
	else if (b->preflush)
		wc->durable_seq = max(wc->durable_seq, b->seq - 1);
	wc->segs[b->seg].max_seq = b->seq;
	hold_tombs(wc);

	/* the copies first: a write of the same block in the record is newer */
	slot = insert_copies(wc, wow_seg_slot(wc, b->seg, b->block + 1));
	bio_list_for_each(bio, &b->writes) {
		insert_write(wc, bio, slot);
		slot += wow_bio_blocks(wc, bio);
	}

	/* the data's crcs, from the header (format 5) */
	if (wow_record_flags_v(wc->sb.version) & WOW_REC_CRCS)
		set_batch_crcs(wc);

	/* after the writes: a tombstone kills data of its own record too */
	bio_list_for_each(bio, &b->discards)
		drop_range(wc, wow_bio_oblock(wc, bio),
			   wow_bio_blocks(wc, bio));

	/* a victim's tombstones written so far: their copies are dead */
	m = list_first_entry_or_null(&wc->pending_metas, struct wow_meta,
				     list);
	if (m && m->victim != WOW_NO_SEG)
		drop_tombstoned(wc, m);

	list_for_each_entry(m, &metas, list) {
		struct wow_segment *v;

		if (m->victim == WOW_NO_SEG)
			continue;
		/* every copy left in the victim is clean and tombstoned */
		v = &wc->segs[m->victim];
		for (i = 0; i < wc->blocks_per_seg; i++) {
			slot = wow_seg_slot(wc, m->victim, i);
			if (wow_slot_at(&wc->index, slot)->flags & WOW_SLOT_VALID)
				drop_slot(wc, slot);
		}
		v->nr_tombs = 0;
		v->state = WOW_SEG_DRAINING;
		wc->meta_inflight = false;
	}
	b->done = false;
	spin_unlock_irq(&wc->lock);

	free_metas(&metas, 0);
	wake_up(&wc->idle_wait);
	atomic64_inc(&wc->stats.commits);
	/*
	 * Bypassed writes a PREFLUSH covers are durable only if the origin
	 * flush worked; the data of the record is durable either way.
	 */
	while ((bio = bio_list_pop(&b->writes))) {
		bio->bi_status = b->origin_failed &&
				 (bio->bi_opf & REQ_PREFLUSH) ?
				 BLK_STS_IOERR : BLK_STS_OK;
		bio_endio(bio);
	}
	end_bios(&b->flushes, b->origin_failed ? BLK_STS_IOERR : BLK_STS_OK);
	b->origin_failed = false;
	while ((bio = bio_list_pop(&b->discards)))
		discard_origin(wc, bio);
	wow_kick(wc);
	return 0;
}

static bool fua_bio(struct bio *bio)
{
	return bio->bi_opf & (REQ_FUA | REQ_PREFLUSH);
}

static u32 tomb_room(struct wow_cache *wc, u32 nr_tombs)
{
	u32 max = wow_max_tombs(wc->args.block_size);

	/* leave room for data when writes are waiting */
	if (!bio_list_empty(&wc->pending_writes))
		max = min(max, 64U);
	return max > nr_tombs ? max - nr_tombs : 0;
}

static void add_tomb(struct wow_batch *b, const struct wow_tomb_range *r)
{
	struct wow_tomb *tombs = wow_record_tombs(b->hdr);

	tombs[b->nr_tombs].start = cpu_to_le64(r->start);
	tombs[b->nr_tombs].t = cpu_to_le64(r->t);
	tombs[b->nr_tombs].nr = cpu_to_le32(r->nr);
	tombs[b->nr_tombs].flags = cpu_to_le32(r->flags);
	b->nr_tombs++;
}

/*
 * Destage progress into the header (lock held): a record of marks alone
 * takes as many as fit, any other record only as many as leave its data
 * room (@room blocks, up to a record's worth) whole.
 */
static void add_marks(struct wow_cache *wc, struct wow_batch *b, bool only,
		      u32 room)
{
	u32 bs = wc->args.block_size, n = 0;
	u32 want = min(room, WOW_RECORD_DATA_BYTES / bs);

	lockdep_assert_held(&wc->lock);
	while (n < wc->nr_marks && tomb_room(wc, b->nr_tombs) &&
	       (only || wow_record_capacity(bs, b->nr_tombs + 1,
					    wow_record_flags_v(wc->sb.version)) >=
		want))
		add_tomb(b, &wc->marks[n++]);
	wc->nr_marks -= n;
	memmove(wc->marks, wc->marks + n, wc->nr_marks * sizeof(*wc->marks));
}

/*
 * Prune every pending copy (its nr_live is then current for this gather)
 * and hand back the ones left with nothing; returns the first one's
 * blocks, 0 if none is left (lock held).
 */
static u32 prune_copies(struct wow_cache *wc)
{
	struct wow_copy *c, *tmp;
	bool emptied = false;

	lockdep_assert_held(&wc->lock);
	list_for_each_entry_safe(c, tmp, &wc->pending_copies, list) {
		if (prune_copy(wc, c))
			continue;
		list_move_tail(&c->list, &wc->copies_done);
		emptied = true;
	}
	if (emptied)
		wow_kick(wc);
	c = list_first_entry_or_null(&wc->pending_copies, struct wow_copy,
				     list);
	return c ? c->nr_live : 0;
}

/*
 * Pacing (dm-wow-pace.c): blocks per second new data may take while free
 * space is short.  It starts where cleaning starts, and stops at the
 * reserve (lock held).
 */
static u64 pace_rate(struct wow_cache *wc)
{
	u64 bps = wc->blocks_per_seg;

	lockdep_assert_held(&wc->lock);
	return wow_pace_rate(wow_seg_free_blocks(wc), WOW_RESERVE_SEGMENTS * bps,
			     wow_reclaim_threshold(wc) * bps,
			     wc->pace.freed_rate);
}

/*
 * Dirty pacing (dm-wow-pace.c): blocks per second that may become dirty
 * once dirty occupancy passes the high watermark; none in cleaner mode,
 * where writes bypass the cache (lock held).
 */
static u64 dirty_pace_rate(struct wow_cache *wc)
{
	lockdep_assert_held(&wc->lock);
	if (wc->cleaner)
		return WOW_PACE_UNLIMITED;
	return wow_pace_dirty_rate(wow_occupancy_bp(wc), wc->thresh.high,
				   WOW_PACE_DIRTY_SPAN_BP,
				   wc->dpace.freed_rate);
}

/* Blocks of @bio whose cached copy is not dirty (lock held). */
static u32 new_dirty_blocks(struct wow_cache *wc, struct bio *bio)
{
	u64 ob = wow_bio_oblock(wc, bio);
	u32 i, n = wow_bio_blocks(wc, bio), fresh = 0;

	lockdep_assert_held(&wc->lock);
	for (i = 0; i < n; i++)
		fresh += !wow_seg_oblock_dirty(wc, ob + i);
	return fresh;
}

/* Blocks of the queued writes, counted up to @cap (lock held). */
static u64 queued_blocks(struct wow_cache *wc, u64 cap)
{
	struct bio *bio;
	u64 n = 0;

	lockdep_assert_held(&wc->lock);
	bio_list_for_each(bio, &wc->pending_writes) {
		n += wow_bio_blocks(wc, bio);
		if (n >= cap)
			break;
	}
	return n;
}

/* The queued blocks a batch at @rate can ask for: 1/16 s of it. */
static u64 batch_cap(u64 rate)
{
	return rate == WOW_PACE_UNLIMITED ? 0 : rate / 16;
}

/*
 * May @bio's data go into the log now, at @rate (space) and @drate (new
 * dirty data)?  The @first write of a record waits until a batch has
 * accrued in each bucket that paces (wow_pace_batch), so that paced
 * writes go in together: one header per write would double the log's
 * writes.  If not, the pacing timer kicks the commit worker when its turn
 * comes (or cleaning does, when it frees a segment).  Lock held.
 */
static bool pace_admit(struct wow_cache *wc, struct bio *bio, u64 rate,
		       u64 drate, bool first)
{
	u32 n = wow_bio_blocks(wc, bio), fresh = 0, batch, dbatch;
	u64 now = ktime_get_ns(), wait = 0, queued = 0;

	lockdep_assert_held(&wc->lock);
	if (drate != WOW_PACE_UNLIMITED)
		fresh = new_dirty_blocks(wc, bio);
	if (first)
		queued = queued_blocks(wc, max(batch_cap(rate),
					       batch_cap(drate)));
	batch = first && rate ? wow_pace_batch(rate, queued, n) : n;
	dbatch = first ? wow_pace_batch(drate, queued, fresh) : fresh;
	if (drate != WOW_PACE_UNLIMITED &&
	    !wow_pace_admit_batch(&wc->dpace, fresh, dbatch, drate, now,
				  &wait))
		goto later;
	if (wow_pace_admit_batch(&wc->pace, n, batch, rate, now, &wait))
		return true;
	if (fresh)
		wow_pace_refund(&wc->dpace, fresh);
later:
	if (wait)
		mod_delayed_work(wc->wq, &wc->pace_work,
				 max_t(unsigned long, nsecs_to_jiffies(wait), 1));
	return false;
}

/*
 * Gather the next batch (lock held).  Returns false when there is no
 * record to write.  Flush requests go to *flushes unless a record carries
 * them; discards of uncached ranges go to *direct; in a degraded state
 * writes and discards go to *failed.
 */
static bool gather_batch(struct wow_cache *wc, struct bio_list *flushes,
			 struct bio_list *direct, struct bio_list *failed,
			 struct list_head *failed_metas)
{
	struct wow_batch *b = &wc->batch;
	struct wow_meta *m, *tmp;
	struct wow_copy *c, *ctmp;
	struct bio_list cached;
	u32 room, data_cap, copy_blocks;
	bool reserve, tombs, only_marks, first_admitted = false;
	struct bio *bio;
	u64 rate, drate;

	lockdep_assert_held(&wc->lock);
	bio_list_merge(flushes, &wc->pending_flushes);
	bio_list_init(&wc->pending_flushes);

	if (wc->state != WOW_STATE_OK) {
		bio_list_merge(failed, &wc->pending_writes);
		bio_list_init(&wc->pending_writes);
		bio_list_merge(failed, &wc->pending_discards);
		bio_list_init(&wc->pending_discards);
		unvictim(wc, &wc->pending_metas);
		list_splice_init(&wc->pending_metas, failed_metas);
		copies_done(wc, &wc->pending_copies);
		wow_kick(wc);
		return false;
	}

	bio_list_init(&cached);
	while ((bio = bio_list_pop(&wc->pending_discards))) {
		if (range_cached(wc, wow_bio_oblock(wc, bio),
				 wow_bio_blocks(wc, bio)))
			bio_list_add(&cached, bio);
		else
			bio_list_add(direct, bio);
	}
	bio_list_merge(&wc->pending_discards, &cached);

	copy_blocks = prune_copies(wc);
	/* only cleaning's records may take the reserve: they free space */
	reserve = !list_empty(&wc->pending_metas) || copy_blocks;
	tombs = !list_empty(&wc->pending_metas) ||
		!bio_list_empty(&wc->pending_discards);
	bio = bio_list_peek(&wc->pending_writes);
	if (wc->open_reserved && wc->nr_free_segs > WOW_RESERVE_SEGMENTS)
		wc->open_reserved = false;	/* the reserve is back */
	if (wc->open_seg != WOW_NO_SEG && wc->open_reserved)
		bio = NULL;			/* writes wait for space */
	rate = pace_rate(wc);
	drate = dirty_pace_rate(wc);
	if (bio && !tombs && !copy_blocks) {
		/* admitted now: the loop below takes it without asking again */
		first_admitted = pace_admit(wc, bio, rate, drate, true);
		if (!first_admitted)
			bio = NULL;		/* not its turn yet */
	}
	only_marks = !tombs && !bio && !copy_blocks;
	if (only_marks && !marks_due(wc)) {
		if (!bio_list_empty(&wc->pending_writes))
			wow_kick(wc);
		return false;
	}
	wow_seg_close_if_short(wc, 1 + (tombs || only_marks ? 0 :
				copy_blocks ? copy_blocks :
				wow_bio_blocks(wc, bio)));
	if (!wow_seg_open(wc, reserve, wc->next_seq)) {
		wow_kick(wc);
		return false;
	}

	memset(b->hdr, 0, wc->args.block_size);
	b->seg = wc->open_seg;
	b->block = wc->segs[b->seg].wp;
	b->seq = wc->next_seq++;
	b->nr_tombs = 0;
	b->nr_data = 0;
	b->fua = !bio_list_empty(flushes);
	/*
	 * The first record of a reused segment overwrites the earlier life:
	 * the records that made that life dead must be durable first.
	 */
	b->preflush = !b->block && wc->segs[b->seg].prev_seq &&
		      wc->durable_seq < wc->completed_seq;
	room = wc->blocks_per_seg - b->block - 1;

	/* reclaim tombstones first: they free space */
	list_for_each_entry_safe(m, tmp, &wc->pending_metas, list) {
		while (m->done_tombs < m->nr_tombs &&
		       tomb_room(wc, b->nr_tombs)) {
			add_tomb(b, &m->tombs[m->done_tombs++]);
		}
		/* clean marks are hints: the commit at suspend flushes them */
		if (m->victim != WOW_NO_SEG)
			b->fua = true;
		if (m->done_tombs < m->nr_tombs)
			break;
		list_move_tail(&m->list, &b->metas);
	}

	/* discards of cached ranges: a tombstone each */
	while (tomb_room(wc, b->nr_tombs) &&
	       (bio = bio_list_pop(&wc->pending_discards))) {
		struct wow_tomb_range r = {
			.start = wow_bio_oblock(wc, bio),
			.t = b->seq,
			.nr = wow_bio_blocks(wc, bio),
		};

		add_tomb(b, &r);
		bio_list_add(&b->discards, bio);
		b->fua = true;
	}

	add_marks(wc, b, only_marks, room);
	data_cap = min3(room, wow_record_capacity(wc->args.block_size,
						  b->nr_tombs,
						  wow_record_flags_v(wc->sb.version)),
			WOW_RECORD_DATA_BYTES / wc->args.block_size);

	/*
	 * cleaning's copies first: they free space, and a write of the same
	 * block later in the record is the newer copy
	 */
	list_for_each_entry_safe(c, ctmp, &wc->pending_copies, list) {
		if (b->nr_data + c->nr_live > data_cap)
			break;
		list_move_tail(&c->list, &b->copies);
		b->nr_data += c->nr_live;
	}

	if (wc->open_reserved)
		data_cap = 0;
	while ((bio = bio_list_peek(&wc->pending_writes))) {
		u32 n = wow_bio_blocks(wc, bio);

		if (b->nr_data + n > data_cap)
			break;
		if (!first_admitted && !pace_admit(wc, bio, rate, drate, false))
			break;
		first_admitted = false;
		bio_list_add(&b->writes, bio_list_pop(&wc->pending_writes));
		b->nr_data += n;
		if (fua_bio(bio))
			b->fua = true;
	}
	WARN_ON_ONCE(!b->nr_data && !b->nr_tombs);

	bio_list_merge(&b->flushes, flushes);
	bio_list_init(flushes);
	wc->segs[b->seg].wp += 1 + b->nr_data;
	b->busy = true;
	return true;
}

/* Copy @len bytes to the batch's data at @off (pages are lowmem). */
static void copy_to_batch(struct wow_batch *b, u32 off, const void *src,
			  u32 len)
{
	while (len) {
		u32 in = offset_in_page(off);
		u32 n = min_t(u32, len, PAGE_SIZE - in);

		memcpy(page_address(b->pages[off >> PAGE_SHIFT]) + in, src, n);
		src += n;
		off += n;
		len -= n;
	}
}

/* Copy @len bytes at byte @from of @pages to the batch's data at @off. */
static void copy_pages_to_batch(struct wow_batch *b, u32 off,
				struct page **pages, u32 from, u32 len)
{
	while (len) {
		u32 in = offset_in_page(from);
		u32 n = min_t(u32, len, PAGE_SIZE - in);

		copy_to_batch(b, off, page_address(pages[from >> PAGE_SHIFT]) +
			      in, n);
		from += n;
		off += n;
		len -= n;
	}
}

/*
 * Copy the batch's data out of its bios; returns the record's data_csum:
 * with WOW_REC_CRCS (@flags) each block's crc32c goes into the header
 * and data_csum is theirs, else it is the data's.
 */
static u32 copy_batch_data(struct wow_cache *wc, u32 flags)
{
	struct wow_batch *b = &wc->batch;
	__le64 *oblocks = wow_record_oblocks(b->hdr, b->nr_tombs);
	u32 i = 0, off = 0;
	struct bvec_iter iter;
	struct wow_copy *c;
	struct bio_vec bv;
	struct bio *wbio;
	u32 j, bs = wc->args.block_size;

	/* cleaning's copies first, as finish_batch inserts them */
	list_for_each_entry(c, &b->copies, list) {
		for (j = 0; j < c->nr; j++) {
			if (c->slots[j] == WOW_NO_SLOT)
				continue;
			oblocks[i++] = cpu_to_le64(c->oblocks[j]);
			copy_pages_to_batch(b, off, c->pages, j * bs, bs);
			off += bs;
		}
	}
	bio_list_for_each(wbio, &b->writes) {
		u64 ob = wow_bio_oblock(wc, wbio);
		u32 n = wow_bio_blocks(wc, wbio), j;

		for (j = 0; j < n; j++)
			oblocks[i++] = cpu_to_le64(ob + j);
		bio_for_each_segment(bv, wbio, iter) {
			void *p = bvec_kmap_local(&bv);

			copy_to_batch(b, off, p, bv.bv_len);
			kunmap_local(p);
			off += bv.bv_len;
		}
	}
	if (flags & WOW_REC_CRCS)
		return batch_block_crcs(wc, wow_record_crcs(b->hdr, b->nr_tombs,
							    b->nr_data));
	return pages_crc(b->pages, 0, off);
}

/* Add @len bytes at @page to *@bio, chaining a new bio when it is full. */
#ifdef WOW_TEST_HOOKS
/*
 * Test builds only: a record's bio holds at most this many KiB (0: as
 * much as fits), so a scenario sees records of several bios, which the
 * block layer's page merging otherwise makes rare (issue 34, finding 3).
 */
static unsigned int test_record_bio_kib;
module_param(test_record_bio_kib, uint, 0644);
MODULE_PARM_DESC(test_record_bio_kib,
		 "test builds: at most this many KiB in a log record's bio (0: no limit)");

static bool record_bio_full(struct bio *bio)
{
	u32 kib = READ_ONCE(test_record_bio_kib);

	return kib && bio->bi_iter.bi_size >= kib << 10;
}
#else
static bool record_bio_full(struct bio *bio)
{
	return false;
}
#endif

/*
 * Add @len bytes at @page to the record's bio *@bio; when it is full, it
 * goes on @full (not submitted yet) and a new one chained to it takes its
 * place.
 */
static void add_record_page(struct wow_cache *wc, struct bio **bio,
			    struct bio_list *full, struct page *page, u32 len,
			    u32 off, blk_opf_t opf)
{
	struct bio *next;

	if (!record_bio_full(*bio) && bio_add_page(*bio, page, len, off) == len)
		return;
	next = bio_alloc_bioset(wc->cache_dev->bdev, BIO_MAX_VECS, opf,
				GFP_NOIO, &wc->log_bs);
	next->bi_iter.bi_sector = bio_end_sector(*bio);
	bio_chain(*bio, next);
	bio_list_add(full, *bio);
	*bio = next;
	__bio_add_page(next, page, len, off);
}

/* Fill the header block and the checksums, build and submit the I/O. */
static void submit_batch(struct wow_cache *wc)
{
	struct wow_batch *b = &wc->batch;
	u32 bs = wc->args.block_size, off, data_bytes = b->nr_data * bs;
	blk_opf_t opf = REQ_OP_WRITE | REQ_SYNC | (b->fua ? REQ_FUA : 0);
	blk_opf_t first = b->fua || b->preflush ? REQ_PREFLUSH : 0;
	struct wow_record_info ri;
	struct bio_list full;
	u64 origin_flush;
	struct bio *bio;

	ri.flags = wow_record_flags_v(wc->sb.version);
	ri.data_csum = copy_batch_data(wc, ri.flags);
	ri.seq = b->seq;
	ri.seg_seq = wc->segs[b->seg].seq;
	ri.nr_data = b->nr_data;
	ri.nr_tombs = b->nr_tombs;
	spin_lock_irq(&wc->lock);
	ri.durable_seq = b->fua || b->preflush ? b->seq - 1 : wc->durable_seq;
	ri.next_seg = wow_seg_next_free(wc);
	wc->chain_next = ri.next_seg;
	origin_flush = b->fua ? wow_flush_gen_begin(&wc->origin_gen) : 0;
	spin_unlock_irq(&wc->lock);
	wow_record_seal(b->hdr, bs, wc->sb.uuid, &ri);

	/*
	 * A failed origin flush fails only the bios that asked for one
	 * (finish_batch); the record is written all the same, since its
	 * blocks are taken at the write pointer already.
	 */
	if (flush_origin_bypassed(wc, origin_flush))
		b->origin_failed = true;

	bio_list_init(&full);
	bio = bio_alloc_bioset(wc->cache_dev->bdev, BIO_MAX_VECS, opf | first,
			       GFP_NOIO, &wc->log_bs);
	bio->bi_iter.bi_sector =
		wow_slot_sector(wc, wow_seg_slot(wc, b->seg, b->block));
	for (off = 0; off < bs; ) {
		void *p = b->hdr + off;
		u32 len = min_t(u32, bs - off, PAGE_SIZE - offset_in_page(p));

		add_record_page(wc, &bio, &full, virt_to_page(p), len,
				offset_in_page(p), opf);
		off += len;
	}
	for (off = 0; off < data_bytes; off += PAGE_SIZE)
		add_record_page(wc, &bio, &full, b->pages[off >> PAGE_SHIFT],
				min_t(u32, data_bytes - off, PAGE_SIZE), 0, opf);
	bio->bi_private = wc;
	bio->bi_end_io = batch_endio;
	atomic64_add(1 + b->nr_data, &wc->stats.log_blocks);

	/*
	 * A record built as more than one bio that needs the flush first
	 * (the first record of a reused segment overwrites the earlier life;
	 * a FUA record vouches for every earlier one): a PREFLUSH on its
	 * first bio orders only that bio, so the flush is issued and waited
	 * for before any of them, else a power cut could find the earlier
	 * life overwritten and its replacement not durable (issue 34, finding
	 * 3: 4 KiB blocks, erase blocks of 2 MiB or more).  Decided from the
	 * bios as built (pages the block layer merged make fewer).  A failed
	 * flush leaves the PREFLUSH on the first bio (the cache then fails
	 * the record).
	 */
	if (first && !bio_list_empty(&full) &&
	    !blkdev_issue_flush(wc->cache_dev->bdev))
		full.head->bi_opf &= ~REQ_PREFLUSH;
	while (!bio_list_empty(&full))
		submit_bio(bio_list_pop(&full));
	submit_bio(bio);
}

void wow_log_commit_work(struct work_struct *ws)
{
	struct wow_cache *wc = container_of(ws, struct wow_cache, commit_work);
	struct bio_list flushes, direct, failed;
	LIST_HEAD(failed_metas);
	struct bio *bio;
	bool busy, done, go;

	spin_lock_irq(&wc->lock);
	busy = wc->batch.busy;
	done = wc->batch.done;
	spin_unlock_irq(&wc->lock);
	if (busy)
		return;
	if (done && finish_batch(wc)) {
		/* no memory for the bookkeeping yet: wait a little, retry */
		schedule_timeout_uninterruptible(msecs_to_jiffies(10));
		queue_work(wc->wq, &wc->commit_work);
		return;
	}
	/* no record in flight: the log head is where the next one goes */
	if (wow_ckptlog_periodic(wc) == -ENOMEM) {
		spin_lock_irq(&wc->lock);
		go = wc->ckpt_wanted;
		spin_unlock_irq(&wc->lock);
		if (go) {
			/* a segment waits for it: no memory yet, retry */
			schedule_timeout_uninterruptible(msecs_to_jiffies(10));
			queue_work(wc->wq, &wc->commit_work);
			return;
		}
	}

	bio_list_init(&flushes);
	bio_list_init(&direct);
	bio_list_init(&failed);
	spin_lock_irq(&wc->lock);
	go = gather_batch(wc, &flushes, &direct, &failed, &failed_metas);
	spin_unlock_irq(&wc->lock);

	if (!list_empty(&failed_metas)) {
		free_metas(&failed_metas, -EIO);
		wake_up(&wc->idle_wait);
	}
	end_bios(&failed, BLK_STS_IOERR);
	while ((bio = bio_list_pop(&direct)))
		discard_origin(wc, bio);
	if (!bio_list_empty(&flushes)) {
		int r = wow_log_commit(wc);

		end_bios(&flushes, r ? BLK_STS_IOERR : BLK_STS_OK);
	}
	if (go) {
		submit_batch(wc);
		return;
	}
	/*
	 * the segment to open is on the replay's chain: checkpoint, go on
	 * (one in the background runs this again when it ends)
	 */
	spin_lock_irq(&wc->lock);
	go = wc->ckpt_wanted && wc->state == WOW_STATE_OK && !wc->ckpt_busy;
	spin_unlock_irq(&wc->lock);
	if (go)
		queue_work(wc->wq, &wc->commit_work);
}

/* ---- format and recovery ---- */

/* A fresh cache: write the superblock; every segment is free. */
int wow_log_format(struct wow_cache *wc)
{
	struct wow_health_info clear = { };
	u32 bs = wc->args.block_size, i;
	void *buf;
	int r;

	buf = kzalloc(bs, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	/* the health block, all clear; the superblock makes both durable */
	wow_health_encode(buf, bs, wc->sb.uuid, &clear);
	r = wow_sync_io(wc->cache_dev->bdev, bs >> SECTOR_SHIFT, buf, bs,
			REQ_OP_WRITE | REQ_SYNC);
	if (r) {
		kfree(buf);
		return r;
	}
	wow_sb_encode(buf, &wc->sb);
	r = wow_sync_io(wc->cache_dev->bdev, 0, buf, bs,
			REQ_OP_WRITE | REQ_SYNC | REQ_PREFLUSH | REQ_FUA);
	kfree(buf);
	if (r)
		return r;
	for (i = 0; i < wc->nr_segments; i++)
		wow_seg_free_add(wc, i);
	wc->next_seq = wc->sb.format_seq + 1;
	wc->ckpt_area = -1;
	/*
	 * The chain starts here: a power cut before the first clean shutdown
	 * replays the log from this checkpoint instead of scanning every
	 * segment (a 1 TiB cache: 4.6 GiB read, minutes).
	 */
	r = wow_ckptlog_write(wc, false, true);
	if (r == -ENOSPC)
		r = wow_ckptlog_retire(wc);
	if (!r)
		r = wow_ckptlog_know_both(wc);
	if (r)
		return r;
	DMINFO("%s: formatted %pg: %u segments of %u blocks of %u bytes",
	       wow_name(wc), wc->cache_dev->bdev, wc->nr_segments,
	       wc->blocks_per_seg, bs);
	return 0;
}

/* Recovery's verdicts, as the kernel log says them. */
#define MSG_DURABLE_CORRUPT "%s: log record %llu (segment %u) was durable (record %llu of segment %u says so) but is corrupt; not loading"
#define MSG_DURABLE_HARMLESS "%s: log record %llu (segment %u) was durable but is corrupt; every block it held has a newer version: dropped"
#define MSG_DROPPED "%s: segment %u: dropped a torn or corrupt log record at block %u"
#define MSG_BROKEN "%s: segment %u: the log breaks at block %u and goes on at block %u (record %llu): the records between are lost"
#define MSG_DROPPED_FIRST "%s: segment %u: dropped a torn or corrupt log record at block 0: the first of the segment, so all of its records"

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

struct wow_scan {
	/* seq of the record each slot came from, in chunks */
	u64 **slot_seq;
	u32 nr_seq_chunks;
	/* the window: blocks [win_off, win_off + win_n) of segment win_seg */
	void *buf;
	u32 win_blocks;		/* its size */
	u32 win_seg;
	u32 win_off;
	u32 win_n;		/* 0: empty */
	u64 *oblocks;		/* one record's origin blocks */
	u32 *crcs;		/* and their crc32cs (WOW_REC_CRCS) */
	struct wow_tomb_range *cleans;	/* clean marks found */
	u32 nr_cleans;
	u32 max_cleans;
	u64 max_seq;
	u64 max_seen;		/* newest seq in any header, valid or not */
	u64 nr_records;
	u64 nr_dropped;
	/* per segment: its newest claim, "records up to durable were durable" */
	struct wow_claim {
		u64 seq;
		u64 durable;
	} *claims;
	/*
	 * Bad records (torn or corrupt), then their sorted seqs.  When the
	 * bad record's header is intact, lost[] lists the origin blocks whose
	 * versions dropping it (and the rest of its segment) loses.
	 */
	struct wow_suspect {
		u64 seq;	/* first: cmp_u64 sorts by it */
		u32 seg;
		bool known;	/* lost[] is complete */
		bool judged;
		u32 nr_lost;
		u64 *lost;
	} *sus;
	u64 *suspects;
	u32 nr_suspects;
	/* the envelope of the tombstones (apply_tombs) */
	struct wow_tomb_range *kenv;
	u32 nr_kenv;
};

/* 2 MiB chunks: no allocation grows with the cache */
#define WOW_SEQ_CHUNK	BIT(18)

static u64 *slot_seq(struct wow_scan *sc, u32 slot)
{
	return &sc->slot_seq[slot / WOW_SEQ_CHUNK][slot % WOW_SEQ_CHUNK];
}

/*
 * The replay's slot seqs, in chunks allocated when a replayed record
 * first writes one (a load after a clean shutdown replays nothing and
 * allocates none: issue 34, finding 8).  0: not replayed.
 */
static u64 replay_seq(struct wow_scan *sc, u32 slot)
{
	return sc->slot_seq[slot / WOW_SEQ_CHUNK] ? *slot_seq(sc, slot) : 0;
}

static int replay_set_seq(struct wow_scan *sc, u32 slot, u64 seq)
{
	u64 **chunk = &sc->slot_seq[slot / WOW_SEQ_CHUNK];

	if (!*chunk) {
		if (!seq)
			return 0;
		*chunk = kvcalloc(WOW_SEQ_CHUNK, sizeof(u64), GFP_KERNEL);
		if (!*chunk)
			return -ENOMEM;
	}
	*slot_seq(sc, slot) = seq;
	return 0;
}

static int add_clean_mark(struct wow_scan *sc, struct wow_tomb_range *tr)
{
	if (sc->nr_cleans == sc->max_cleans) {
		u32 want = max(64U, 2 * sc->max_cleans);
		struct wow_tomb_range *n;

		n = kvmalloc_array(want, sizeof(*n), GFP_KERNEL);
		if (!n)
			return -ENOMEM;
		if (sc->nr_cleans)
			memcpy(n, sc->cleans, sc->nr_cleans * sizeof(*n));
		kvfree(sc->cleans);
		sc->cleans = n;
		sc->max_cleans = want;
	}
	sc->cleans[sc->nr_cleans++] = *tr;
	return 0;
}

/* A record's block crcs (WOW_REC_CRCS), kept while its data is read. */
static void save_crcs(struct wow_scan *sc, void *hdr,
		      const struct wow_record_info *ri)
{
	__le32 *c = wow_record_crcs(hdr, ri->nr_tombs, ri->nr_data);
	u32 i;

	if (!(ri->flags & WOW_REC_CRCS))
		return;
	for (i = 0; i < ri->nr_data; i++)
		sc->crcs[i] = le32_to_cpu(c[i]);
}

/*
 * Data blocks [@first, @first + @n) of record @ri, at @p: with block
 * crcs, false unless each matches; else they go into *@csum, which the
 * caller compares with data_csum once all are in.
 */
static bool data_check(const struct wow_scan *sc,
		       const struct wow_record_info *ri, u32 first,
		       const void *p, u32 n, u32 bs, u32 *csum)
{
	u32 i;

	if (!(ri->flags & WOW_REC_CRCS)) {
		*csum = crc32c(*csum, p, n * bs);
		return true;
	}
	for (i = 0; i < n; i++)
		if (wow_block_crc(p + i * bs, bs) != sc->crcs[first + i])
			return false;
	return true;
}

/*
 * Blocks [@off, @off + @n) of segment @s (@n <= win_blocks), from the
 * scan's window; when they are not in it, the window is read again from
 * @off: just @n blocks for a @probe (the first header of a segment, which
 * may hold no record at all), else as much of the segment as it holds, in
 * one large read.  So a segment's records cost a few large reads, not one
 * per header.  Returns the blocks or an ERR_PTR.
 */
static void *scan_blocks(struct wow_cache *wc, struct wow_scan *sc, u32 s,
			 u32 off, u32 n, bool probe)
{
	u32 bs = wc->args.block_size, len;
	int r;

	if (sc->win_n && sc->win_seg == s && off >= sc->win_off &&
	    off + n <= sc->win_off + sc->win_n)
		return sc->buf + (size_t)(off - sc->win_off) * bs;
	len = probe ? n : min(sc->win_blocks, wc->blocks_per_seg - off);
	sc->win_n = 0;
	r = wow_sync_io(wc->cache_dev->bdev,
			wow_slot_sector(wc, wow_seg_slot(wc, s, off)), sc->buf,
			len * bs, REQ_OP_READ);
	if (r)
		return ERR_PTR(r);
	wc->load_bytes += (u64)len * bs;
	sc->win_seg = s;
	sc->win_off = off;
	sc->win_n = len;
	return sc->buf;
}

/* A valid header of segment @s says records up to @durable were durable. */
static void note_claim(struct wow_scan *sc, u32 s, u64 seq, u64 durable)
{
	struct wow_claim *c = &sc->claims[s];

	sc->max_seen = max(sc->max_seen, seq);
	if (!c->seq) {
		c->seq = seq;
		c->durable = durable;
	} else if (wow_epoch(seq) == wow_epoch(c->seq)) {
		c->durable = max(c->durable, durable);
	}
}

/* Add @n origin blocks a suspect's drop loses. */
static void suspect_loses(struct wow_suspect *su, const u64 *b, u32 n)
{
	u64 *more;

	if (!su->known || !n)
		return;
	more = kvmalloc_array(su->nr_lost + n, sizeof(u64), GFP_KERNEL);
	if (!more) {
		su->known = false;	/* then it is judged by its seq only */
		return;
	}
	if (su->nr_lost)
		memcpy(more, su->lost, su->nr_lost * sizeof(u64));
	memcpy(more + su->nr_lost, b, n * sizeof(u64));
	kvfree(su->lost);
	su->lost = more;
	su->nr_lost += n;
}

/*
 * At most one per segment: the scan of a segment stops at a bad record.
 * @b (@n blocks) are its origin blocks when its header is intact, else
 * NULL.
 */
static struct wow_suspect *note_suspect(struct wow_scan *sc, u32 s, u64 seq,
					const u64 *b, u32 n)
{
	struct wow_suspect *su = &sc->sus[sc->nr_suspects++];

	sc->max_seen = max(sc->max_seen, seq);
	memset(su, 0, sizeof(*su));
	su->seq = seq;
	su->seg = s;
	su->known = !!b;
	suspect_loses(su, b, n);
	return su;
}

/*
 * Does dropping suspect @su lose nothing?  So when each block it would
 * lose has a newer recovered version or a tombstone that kills its
 * version: the stale records of a freed segment's earlier life, damaged
 * by a torn write of the segment's next life, are such.
 */
static bool suspect_harmless(struct wow_cache *wc, struct wow_scan *sc,
			     struct wow_suspect *su)
{
	const struct wow_tomb_range *e;
	u32 i, slot;

	if (!su->known)
		return false;
	for (i = 0; i < su->nr_lost; i++) {
		slot = wow_index_lookup(&wc->index, to_oblock(su->lost[i]));
		if (slot != WOW_NO_SLOT && *slot_seq(sc, slot) > su->seq)
			continue;
		e = wow_tomb_find(sc->kenv, sc->nr_kenv, su->lost[i]);
		if (e && e->t >= su->seq)
			continue;
		return false;
	}
	return true;
}

/*
 * Torn or corrupt?  A bad record that a valid record of its epoch proves
 * durable was durable and is corrupt now: refuse the load rather than
 * serve an older version, unless dropping it loses nothing.  Any other
 * bad record is the torn tail of a power cut (never durable, so never
 * acknowledged) and is dropped.  Each suspect is judged once.
 */
static int judge_suspects(struct wow_cache *wc, struct wow_scan *sc)
{
	struct wow_suspect *su;
	u64 *starts = NULL;
	u32 s, j, nr_starts = 0;
	int i, r = 0;

	if (!sc->nr_suspects)
		return 0;
	/* seq first in struct wow_suspect: cmp_u64 sorts by it */
	sort(sc->sus, sc->nr_suspects, sizeof(*sc->sus), cmp_u64, NULL);
	for (j = 0; j < sc->nr_suspects; j++)
		sc->suspects[j] = sc->sus[j].seq;
	/*
	 * A life's records run on in another segment's life: the record
	 * after a segment's last may be the first of another segment, found
	 * intact there.  What the scan took for missing (a bad block after the
	 * life's end, such as a header torn in an earlier life) is not.
	 */
	starts = kvmalloc_array(wc->nr_segments, sizeof(u64), GFP_KERNEL);
	if (!starts)
		return -ENOMEM;
	for (s = 0; s < wc->nr_segments; s++)
		if (wc->segs[s].seq)
			starts[nr_starts++] = wc->segs[s].seq;
	sort(starts, nr_starts, sizeof(u64), cmp_u64, NULL);
	for (s = 0; s < wc->nr_segments; s++) {
		struct wow_claim *c = &sc->claims[s];

		if (!c->seq)
			continue;
		i = wow_first_vouched(sc->suspects, sc->nr_suspects, c->seq,
				      c->durable);
		for (j = i; i >= 0 && j < sc->nr_suspects &&
		     sc->suspects[j] <= c->durable &&
		     wow_epoch(sc->suspects[j]) == wow_epoch(c->seq); j++) {
			su = &sc->sus[j];
			if (su->judged)
				continue;
			su->judged = true;
			if (bsearch(&su->seq, starts, nr_starts, sizeof(u64),
				    cmp_u64))
				continue;
			if (suspect_harmless(wc, sc, su)) {
				DMWARN(MSG_DURABLE_HARMLESS, wow_name(wc),
				       su->seq, su->seg);
				continue;
			}
			DMERR(MSG_DURABLE_CORRUPT, wow_name(wc), su->seq,
			      su->seg, c->seq, s);
			r = -EUCLEAN;
			goto out;
		}
	}
out:
	kvfree(starts);
	return r;
}

/*
 * After a bad record whose header is intact: read on, headers only, for
 * the durable_seq of later records of the same life (they are not
 * applied).  That is what tells a corrupt durable record from a torn one.
 */
static int scan_proof(struct wow_cache *wc, struct wow_scan *sc, u32 s,
		      u32 off, u64 last, u64 seg_seq, struct wow_suspect *su)
{
	u32 bs = wc->args.block_size, bps = wc->blocks_per_seg;
	struct wow_record_info ri;
	void *hdr;

	while (off < bps) {
		hdr = scan_blocks(wc, sc, s, off, 1, false);
		if (IS_ERR(hdr))
			return PTR_ERR(hdr);
		if (wow_record_check(hdr, bs, wc->sb.uuid, &ri) !=
		    WOW_REC_OK || ri.seg_seq != seg_seq || ri.seq != last + 1 ||
		    ri.nr_data > bps - off - 1)
			break;
		note_claim(sc, s, ri.seq, ri.durable_seq);
		if (su && su->known) {
			__le64 *raw = wow_record_oblocks(hdr, ri.nr_tombs);
			u32 i;

			for (i = 0; i < ri.nr_data; i++)
				sc->oblocks[i] = le64_to_cpu(raw[i]);
			suspect_loses(su, sc->oblocks, ri.nr_data);
		}
		last = ri.seq;
		off += 1 + ri.nr_data;
	}
	return 0;
}

/*
 * The chain of segment @s's life (@seg_seq, last record @last) ended at
 * block @off: at a header that is not the life's next record (torn,
 * corrupt, zeroed, never written, or an older life's).  If a record of the
 * same life follows further on, the chain broke rather than ended, and the
 * records between are lost: note a suspect for the first of them (unless
 * one is noted already; its blocks are unknown) and the claims of what
 * follows, so that losing a durable record this way refuses the load
 * instead of passing in silence.
 */
static int find_continuation(struct wow_cache *wc, struct wow_scan *sc, u32 s,
			     u32 off, u64 last, u64 seg_seq, bool noted)
{
	u32 bs = wc->args.block_size, bps = wc->blocks_per_seg, k, n, i;
	struct wow_record_info ri;
	void *p;

	for (k = off + 1; k < bps; k += n) {
		n = min(bps - k, sc->win_blocks);
		p = scan_blocks(wc, sc, s, k, n, false);
		if (IS_ERR(p))
			return PTR_ERR(p);
		for (i = 0; i < n; i++) {
			if (wow_record_check(p + (size_t)i * bs, bs,
					     wc->sb.uuid, &ri) != WOW_REC_OK ||
			    ri.seg_seq != seg_seq || ri.seq <= last ||
			    ri.nr_data > bps - (k + i) - 1)
				continue;
			if (!noted)
				note_suspect(sc, s, last + 1, NULL, 0);
			DMWARN(MSG_BROKEN, wow_name(wc), s, off, k + i, ri.seq);
			note_claim(sc, s, ri.seq, ri.durable_seq);
			return scan_proof(wc, sc, s, k + i + 1 + ri.nr_data,
					  ri.seq, seg_seq, NULL);
		}
	}
	return 0;
}

/*
 * Scan one segment's records from its start.  A record is taken when its
 * header and data checksums hold, it carries our uuid and it continues the
 * segment's life (seg_seq, consecutive seq).  The scan stops at the first
 * record that does not; one that is ours but bad (torn or corrupt, rather
 * than the end of the log) is reported.
 */
static int scan_segment(struct wow_cache *wc, struct wow_scan *sc, u32 s)
{
	struct wow_segment *seg = &wc->segs[s];
	u32 bs = wc->args.block_size, bps = wc->blocks_per_seg, off = 0;
	u64 nr_oblocks = wc->ti->len >> wc->block_shift;
	struct wow_suspect *su = NULL;
	u64 seg_seq = 0, last = 0;
	bool followed = false;
	int r;

	while (off < bps) {
		struct wow_record_info ri;
		enum wow_rec_kind kind;
		u32 i, done, csum, nt = 0;
		bool ok, decoded = false;

		void *hdr = scan_blocks(wc, sc, s, off, 1, !off);

		if (IS_ERR(hdr))
			return PTR_ERR(hdr);
		kind = wow_record_check(hdr, bs, wc->sb.uuid, &ri);
		if (kind == WOW_REC_FOREIGN ||
		    (kind == WOW_REC_OK && off && ri.seg_seq != seg_seq))
			break;
		ok = kind == WOW_REC_OK && ri.nr_data <= bps - off - 1 &&
		     (off ? ri.seq == last + 1 : ri.seq == ri.seg_seq);
		if (ok) {
			struct wow_tomb *t = wow_record_tombs(hdr);
			__le64 *raw = wow_record_oblocks(hdr, ri.nr_tombs);

			r = wow_seg_reserve_tombs(wc, s, ri.nr_tombs);
			if (r)
				return r;
			nt = 0;
			for (i = 0; i < ri.nr_tombs; i++) {
				struct wow_tomb_range tr = {
					.start = le64_to_cpu(t[i].start),
					.t = le64_to_cpu(t[i].t),
					.nr = le32_to_cpu(t[i].nr),
					.flags = le32_to_cpu(t[i].flags),
				};

				if (!(tr.flags & WOW_TOMB_CLEAN)) {
					seg->tombs[seg->nr_tombs + nt++] = tr;
					continue;
				}
				r = add_clean_mark(sc, &tr);
				if (r)
					return r;
			}
			for (i = 0; i < ri.nr_data; i++) {
				sc->oblocks[i] = le64_to_cpu(raw[i]);
				ok &= sc->oblocks[i] < nr_oblocks;
			}
			save_crcs(sc, hdr, &ri);
			decoded = ok;
		}
		/* the data: crc in window-sized chunks (hdr may move) */
		csum = ~0U;
		for (done = 0; ok && done < ri.nr_data; ) {
			u32 n = min(ri.nr_data - done, sc->win_blocks);
			void *data = scan_blocks(wc, sc, s, off + 1 + done, n,
						 false);

			if (IS_ERR(data))
				return PTR_ERR(data);
			ok &= data_check(sc, &ri, done, data, n, bs, &csum);
			done += n;
		}
		ok &= (ri.flags & WOW_REC_CRCS) || csum == ri.data_csum;
		if (!ok) {
			/*
			 * Which record is missing: the one this intact header
			 * describes if it is the life's next, else (a torn or
			 * corrupt header, or a gap in the seqs) the next one.
			 * An intact header's claim holds even when its data
			 * does not: it can prove the missing record durable.
			 */
			bool own = kind == WOW_REC_OK &&
				   (!off || ri.seq == last + 1);
			u64 sseq = own ? ri.seq : off ? last + 1 : 0;

			if (kind == WOW_REC_OK)
				note_claim(sc, s, ri.seq, ri.durable_seq);
			sc->nr_dropped++;
			/* its origin blocks are known if its header held */
			if (sseq)
				su = note_suspect(sc, s, sseq,
						  own && decoded ?
						  sc->oblocks : NULL,
						  ri.nr_data);
			if (off)
				DMWARN(MSG_DROPPED, wow_name(wc), s, off);
			else
				DMERR(MSG_DROPPED_FIRST, wow_name(wc), s);
			if (kind == WOW_REC_OK && ri.nr_data <= bps - off - 1) {
				r = scan_proof(wc, sc, s, off + 1 + ri.nr_data,
					       ri.seq, ri.seg_seq, su);
				if (r)
					return r;
				followed = true;
			}
			break;
		}

		seg->nr_tombs += nt;
		for (i = 0; i < ri.nr_data; i++) {
			u32 slot = wow_seg_slot(wc, s, off + 1 + i);
			oblock_t b = to_oblock(sc->oblocks[i]);
			u32 cur = wow_index_lookup(&wc->index, b);

			*slot_seq(sc, slot) = ri.seq;
			wow_slot_set_oblock(wow_slot_at(&wc->index, slot), b);
			/* of two copies in one record the later is current */
			if (cur == WOW_NO_SLOT || *slot_seq(sc, cur) <= ri.seq) {
				wow_index_insert(&wc->index, b, slot,
						 WOW_SLOT_DIRTY);
				if (ri.flags & WOW_REC_CRCS)
					wow_index_set_crc(&wc->index, slot,
							  sc->crcs[i]);
			}
		}
		note_claim(sc, s, ri.seq, ri.durable_seq);
		if (!off)
			seg_seq = ri.seq;
		last = ri.seq;
		sc->nr_records++;
		sc->max_seq = max(sc->max_seq, ri.seq);
		off += 1 + ri.nr_data;
	}
	if (seg_seq && !followed && off < bps) {
		r = find_continuation(wc, sc, s, off, last, seg_seq, !!su);
		if (r)
			return r;
	}
	seg->seq = seg_seq;
	seg->max_seq = last;
	seg->open_time = jiffies;
	seg->wp = off;
	return 0;
}

/*
 * Apply every tombstone (it kills the copies of its range with seq <= t)
 * and then every clean mark (those copies were destaged) to the recovered
 * index, through their envelopes: one pass over the slots, however many
 * and however wide the ranges are.
 */
static int apply_tombs(struct wow_cache *wc, struct wow_scan *sc)
{
	struct wow_tomb_range *kills, *kenv, *cenv;
	const struct wow_tomb_range *e;
	u32 nk = 0, nke = 0, nce = 0, s, i;
	u32 *heap = NULL;
	u64 total = 0;
	int r = -ENOMEM;

	for (s = 0; s < wc->nr_segments; s++)
		total += wc->segs[s].nr_tombs;
	if (total > U32_MAX / 2)
		return -EFBIG;
	kills = kvmalloc_array(max_t(u64, total, 1), sizeof(*kills),
			       GFP_KERNEL);
	kenv = kvmalloc_array(max_t(u64, 2 * total, 1), sizeof(*kenv),
			      GFP_KERNEL);
	cenv = kvmalloc_array(max(2 * sc->nr_cleans, 1U), sizeof(*cenv),
			      GFP_KERNEL);
	heap = kvmalloc_array(max_t(u64, max_t(u64, total, sc->nr_cleans), 1),
			      sizeof(*heap), GFP_KERNEL);
	if (!kills || !kenv || !cenv || !heap)
		goto out;
	for (s = 0; s < wc->nr_segments; s++)
		for (i = 0; i < wc->segs[s].nr_tombs; i++)
			kills[nk++] = wc->segs[s].tombs[i];
	nke = wow_tomb_envelope(kills, nk, kenv, heap);
	nce = wow_tomb_envelope(sc->cleans, sc->nr_cleans, cenv, heap);

	for (s = 0; s < wc->nr_slots; s++) {
		struct wow_slot *sl = wow_slot_at(&wc->index, s);
		u64 b = from_oblock(wow_slot_oblock(sl));

		if (!(sl->flags & WOW_SLOT_VALID))
			continue;
		e = wow_tomb_find(kenv, nke, b);
		if (e && *slot_seq(sc, s) <= e->t) {
			wow_index_remove(&wc->index, s);
			continue;
		}
		e = wow_tomb_find(cenv, nce, b);
		if (e && *slot_seq(sc, s) <= e->t)
			wow_index_set_flags(&wc->index, s, 0, WOW_SLOT_DIRTY);
		if (!(s % 4096))
			cond_resched();
	}
	/* judge_suspects asks it which lost versions were dead anyway */
	sc->kenv = kenv;
	sc->nr_kenv = nke;
	kenv = NULL;
	r = 0;
out:
	kvfree(kills);
	kvfree(kenv);
	kvfree(cenv);
	kvfree(heap);
	return r;
}

/* Drop tombstones no record on the device can need any more. */
struct tomb_ref {
	struct wow_tomb_range *tr;
	u64 seg_seq;
};

static int cmp_tomb_ref(const void *a, const void *b)
{
	const struct tomb_ref *x = a, *y = b;

	if (x->tr->start != y->tr->start)
		return x->tr->start < y->tr->start ? -1 : 1;
	if (x->tr->nr != y->tr->nr)
		return x->tr->nr < y->tr->nr ? -1 : 1;
	if (x->tr->t != y->tr->t)
		return x->tr->t < y->tr->t ? -1 : 1;
	/* newest holder first */
	return x->seg_seq > y->seg_seq ? -1 : x->seg_seq < y->seg_seq;
}

#define TOMB_DROP	0x80000000U	/* in memory only: to be dropped */

/*
 * Drop tombstones no record on the device can need any more, and copies
 * of a tombstone that reclaim carried forward (the newest holder keeps
 * it), so segments whose tombstones all moved on are free again.
 */
static int prune_tombs(struct wow_cache *wc)
{
	u64 min = wow_seg_min_disk_seq(wc), total = 0;
	struct tomb_ref *refs;
	u32 s, i, n;

	for (s = 0; s < wc->nr_segments; s++)
		total += wc->segs[s].nr_tombs;
	refs = kvmalloc_array(max_t(u64, total, 1), sizeof(*refs), GFP_KERNEL);
	if (!refs)
		return -ENOMEM;
	n = 0;
	for (s = 0; s < wc->nr_segments; s++)
		for (i = 0; i < wc->segs[s].nr_tombs; i++) {
			refs[n].tr = &wc->segs[s].tombs[i];
			refs[n++].seg_seq = wc->segs[s].seq;
		}
	sort(refs, n, sizeof(*refs), cmp_tomb_ref, NULL);
	for (i = 0; i < n; i++)
		if (refs[i].tr->t < min ||
		    (i && !cmp_tomb_ref(&(struct tomb_ref){ refs[i].tr, 0 },
					&(struct tomb_ref){ refs[i - 1].tr, 0 })))
			refs[i].tr->flags |= TOMB_DROP;
	kvfree(refs);

	for (s = 0; s < wc->nr_segments; s++) {
		struct wow_segment *seg = &wc->segs[s];

		for (i = 0, n = 0; i < seg->nr_tombs; i++)
			if (!(seg->tombs[i].flags & TOMB_DROP))
				seg->tombs[n++] = seg->tombs[i];
		seg->nr_tombs = n;
	}
	/* the runtime's lower bound starts here (wow_seg_visit) */
	wc->min_disk_seq = min_t(u64, min, wc->next_seq);
	return 0;
}

/*
 * Forget what a failed recovery built, so that a retried preresume starts
 * from nothing (and counts nothing twice).
 */
static int reset_log(struct wow_cache *wc)
{
	const struct wow_policy_ops *ops;
	u32 s;
	int r;

	for (s = 0; s < wc->nr_segments; s++) {
		struct wow_segment *seg = &wc->segs[s];

		seg->seq = 0;
		seg->prev_seq = 0;
		seg->max_seq = 0;
		seg->wp = 0;
		seg->nr_valid = 0;
		seg->nr_dirty = 0;
		seg->nr_tombs = 0;
		seg->state = WOW_SEG_FREE;
		INIT_LIST_HEAD(&seg->list);
		INIT_LIST_HEAD(&seg->order);
	}
	INIT_LIST_HEAD(&wc->free_segs);
	INIT_LIST_HEAD(&wc->drained);
	wc->min_disk_seq = 0;
	wc->held_tombs = 0;
	wc->tomb_pass_seen = 0;
	wc->tomb_pass_held = 0;
	INIT_LIST_HEAD(&wc->seg_order);
	wc->lrw_cursor = WOW_NO_SLOT;
	wc->nr_free_segs = 0;
	wc->valid_blocks = 0;
	wc->dirty_blocks = 0;
	ops = wc->policy.ops;
	wow_policy_exit(&wc->policy);
	r = wow_seg_policy_init(wc, ops);
	if (r)
		return r;
	wow_policy_set_drain(&wc->policy, wc->cleaner);
	wow_index_exit(&wc->index);
	/* (a new index's tracks name every slot) */
	wc->ckpt_known[0] = false;
	wc->ckpt_known[1] = false;
	return wow_index_init(&wc->index, wc->nr_slots);
}

#define MSG_LOADED_CKPT "%s: loaded checkpoint %llu (%llu KiB read): %llu dirty of %llu valid blocks, %u free segments"
#define MSG_RECOVERED "%s: recovered %llu records (%llu KiB read): %llu dirty of %llu valid blocks, %u free segments, %llu dropped"
#define MSG_CKPT_NOT_WHOLE "%s: checkpoint %llu (area %d) is not whole, written when the log stopped; loading checkpoint %llu (area %d)"

/*
 * Load from the checkpoint: 0 when the index and the segments came from
 * it; otherwise nothing was kept and the log must be scanned.
 */
static int load_checkpoint(struct wow_cache *wc, struct wow_ckpt_info *ci)
{
	struct wow_ckpt_info other;
	struct wow_ckpt_ops ops;
	struct wow_ckpt_area a;
	int r, r1, k = 0;

	wc->ckpt_area = -1;
	if (wc->sb.version < 2)
		return -ENOENT;
	wow_ckptlog_area(wc, &a, 0);
	r = wow_ckpt_read_header(&a, ci);
	wc->ckpt_gen = ci->generation;
	wc->load_bytes += a.block_size;
	if (wc->sb.version >= 4) {
		/*
		 * The newest valid of the two.  A newer one that is not
		 * valid was being written when the log stopped (its closing
		 * copy missing): nothing was written after it began, so the
		 * other one, with the log since, is the whole state.  The
		 * generations go on from the newest either holds.
		 */
		wow_ckptlog_area(wc, &a, 1);
		r1 = wow_ckpt_read_header(&a, &other);
		wc->load_bytes += a.block_size;
		if (r1 == -ENOMEM)
			return r1;
		if (!r1 && (r || other.generation > ci->generation)) {
			swap(*ci, other);
			swap(r, r1);
			k = 1;
		}
		wc->ckpt_gen = max(ci->generation, other.generation);
		/* (a retired header, not valid, says nothing) */
		if (!r && other.valid && other.generation > ci->generation)
			DMINFO(MSG_CKPT_NOT_WHOLE,
			       wow_name(wc), other.generation, 1 - k,
			       ci->generation, k);
		wow_ckptlog_area(wc, &a, k);
	}
	if (r)
		return r;
	wc->load_bytes += (ci->slot_blocks + ci->seg_blocks) * a.block_size;
	wow_ckptlog_ops_init(wc, &ops);
	r = wow_ckpt_read(&a, ci, &ops);
	if (r) {
		DMWARN("%s: checkpoint %llu does not check (%d); scanning the log",
		       wow_name(wc), ci->generation, r);
		/*
		 * the next checkpoint goes to the other area: a crash while
		 * it is written must leave this one, which makes the load
		 * scan again, not an older one whose chain no longer holds
		 */
		wc->ckpt_area = k;
		if (reset_log(wc))
			return -ENOMEM;
		return r;
	}
	wc->ckpt_live = true;
	wc->ckpt_area = k;
	/*
	 * the index is what area k holds (and its csums came with it): from
	 * here the replay's changes are what its next checkpoint writes
	 */
	wow_index_take_changes(&wc->index, k, wc->ckpt_changes);
	wc->ckpt_known[k] = true;
	return 0;
}

/*
 * Rebuild the index from the log: every segment, every record.  What a
 * clean mark covers is clean; what was destaged since the last mark is
 * destaged again.
 */
#define MSG_STAYS_V1 "%s: format version 1 with no room for a checkpoint: every load scans the whole log; to move to version 4, drain it ('cleaner on' until dirty_blocks is 0) and reload the table with 'format'"

/*
 * After the scan of a version 1 cache: where version 2 keeps its geometry
 * (the checkpoint area fits in erase block 0, which version 1 never
 * writes past the health block), rewrite the superblock as version 2
 * (one sector, FUA), so clean shutdowns write checkpoints from now on.
 * A larger cache stays version 1.
 */
static void upgrade_v1(struct wow_cache *wc)
{
	const struct wow_geometry *g = &wc->sb.geo;
	struct wow_sb_info v2 = wc->sb;
	void *buf;
	int r;

	if (wc->sb.version != 1)
		return;
	if (wow_nr_segments_v(2, g->cache_sectors, g->erase_block_size,
			      g->block_size) != g->nr_segments ||
	    wow_first_segment_sector_v(2, g->nr_segments, g->erase_block_size,
				       g->block_size) !=
	    g->first_segment_sector) {
		DMWARN(MSG_STAYS_V1, wow_name(wc));
		return;
	}
	buf = kzalloc(g->block_size, GFP_KERNEL);
	if (!buf)
		return;
	v2.version = 2;
	wow_sb_encode(buf, &v2);
	r = wow_sync_io(wc->cache_dev->bdev, 0, buf, g->block_size,
			REQ_OP_WRITE | REQ_SYNC | REQ_FUA);
	kfree(buf);
	if (r) {
		DMWARN("%s: cannot upgrade the superblock to format version 2: %d",
		       wow_name(wc), r);
		return;
	}
	wc->sb.version = 2;
	DMINFO("%s: upgraded to format version 2 (checkpoints at clean shutdown)",
	       wow_name(wc));
}

static int scan_log(struct wow_cache *wc, struct wow_scan *sc)
{
	u32 bs = wc->args.block_size, s;
	int r;

	/* a record (header and up to 1 MiB of data) fits the window */
	sc->win_blocks = min(wc->blocks_per_seg,
			     max(WOW_SCAN_WINDOW_BYTES / bs,
				 1 + wc->max_record_blocks));
	sc->nr_seq_chunks = DIV_ROUND_UP(wc->nr_slots, WOW_SEQ_CHUNK);
	sc->slot_seq = kvcalloc(sc->nr_seq_chunks, sizeof(u64 *), GFP_KERNEL);
	for (s = 0; sc->slot_seq && s < sc->nr_seq_chunks; s++) {
		sc->slot_seq[s] = kvcalloc(WOW_SEQ_CHUNK, sizeof(u64),
					   GFP_KERNEL);
		if (!sc->slot_seq[s])
			return -ENOMEM;
	}
	sc->claims = vzalloc(array_size(wc->nr_segments, sizeof(*sc->claims)));
	sc->sus = vmalloc(array_size(wc->nr_segments, sizeof(*sc->sus)));
	sc->suspects = vmalloc(array_size(wc->nr_segments, sizeof(u64)));
	sc->buf = kvmalloc(array_size(sc->win_blocks, bs), GFP_KERNEL);
	sc->oblocks = kvmalloc_array(wow_record_capacity(bs, 0, 0), sizeof(u64),
				     GFP_KERNEL);
	sc->crcs = kvmalloc_array(wow_record_capacity(bs, 0, 0), sizeof(u32),
				  GFP_KERNEL);
	if (!sc->slot_seq || !sc->claims || !sc->sus || !sc->suspects ||
	    !sc->buf || !sc->oblocks || !sc->crcs)
		return -ENOMEM;

	for (s = 0; s < wc->nr_segments; s++) {
		r = scan_segment(wc, sc, s);
		if (r) {
			DMERR("%s: cannot read the log: %d", wow_name(wc), r);
			return r;
		}
		cond_resched();
	}

	r = apply_tombs(wc, sc);
	if (!r)
		r = judge_suspects(wc, sc);
	return r;
}

static void scan_free(struct wow_scan *sc)
{
	u32 i;

	for (i = 0; sc->slot_seq && i < sc->nr_seq_chunks; i++)
		kvfree(sc->slot_seq[i]);
	kvfree(sc->slot_seq);
	vfree(sc->claims);
	for (i = 0; i < sc->nr_suspects; i++)
		kvfree(sc->sus[i].lost);
	vfree(sc->sus);
	vfree(sc->suspects);
	kvfree(sc->kenv);
	kvfree(sc->cleans);
	kvfree(sc->buf);
	kvfree(sc->oblocks);
	kvfree(sc->crcs);
}

/* ---- replay of the log since the checkpoint, along its chain ---- */

struct wow_replay {
	struct wow_scan sc;		/* window, slot seqs */
	u64 *ckpt_max;			/* per segment: newest seq of its
					 * checkpointed life (0: none left)
					 */
	u64 expected;			/* seq of the next record */
	u64 records;
	u64 dropped;			/* a torn tail, as the scan says */
};

/*
 * Does tombstone or clean mark @t cover slot @slot's copy?  A replayed
 * copy's seq is known; a checkpointed one's only lies in its segment's
 * life (wow_ckpt_covers).
 */
static bool replay_covers(struct wow_cache *wc, struct wow_replay *rp,
			  u32 slot, u64 t)
{
	u64 seq = replay_seq(&rp->sc, slot);

	if (seq)
		return seq <= t;
	return wow_ckpt_covers(rp->ckpt_max[wow_slot_seg(wc, slot)], t);
}

static void replay_cover(struct wow_cache *wc, u32 slot,
			 const struct wow_tomb_range *tr)
{
	if (tr->flags & WOW_TOMB_CLEAN)
		wow_index_set_flags(&wc->index, slot, 0, WOW_SLOT_DIRTY);
	else
		wow_index_remove(&wc->index, slot);
}

/* Apply a tombstone or clean mark: a narrow range by lookups, else all */
static void replay_tomb(struct wow_cache *wc, struct wow_replay *rp,
			const struct wow_tomb_range *tr)
{
	u64 b, end = tr->start + tr->nr;
	u32 s;

	if (tr->nr <= wc->nr_slots) {
		for (b = tr->start; b < end; b++) {
			s = wow_index_lookup(&wc->index, to_oblock(b));
			if (s != WOW_NO_SLOT && replay_covers(wc, rp, s, tr->t))
				replay_cover(wc, s, tr);
		}
		return;
	}
	for (s = 0; s < wc->nr_slots; s++) {
		struct wow_slot *sl = wow_slot_at(&wc->index, s);

		b = from_oblock(wow_slot_oblock(sl));
		if ((sl->flags & WOW_SLOT_VALID) && b >= tr->start && b < end &&
		    replay_covers(wc, rp, s, tr->t))
			replay_cover(wc, s, tr);
	}
}

/* A new life of segment @s begins in the replay: its old content is gone. */
static void replay_new_life(struct wow_cache *wc, struct wow_replay *rp,
			    u32 s, u64 seq)
{
	struct wow_segment *seg = &wc->segs[s];
	u32 i, slot;

	for (i = 0; i < wc->blocks_per_seg; i++) {
		slot = wow_seg_slot(wc, s, i);
		if (wow_slot_at(&wc->index, slot)->flags & WOW_SLOT_VALID)
			wow_index_remove(&wc->index, slot);
		replay_set_seq(&rp->sc, slot, 0);	/* never fails */
	}
	rp->ckpt_max[s] = 0;
	seg->seq = seq;
	seg->max_seq = 0;
	seg->wp = 0;
	seg->nr_tombs = 0;
	seg->open_time = jiffies;
}

/*
 * Apply the next record (header @hdr at block @off of segment @s): its
 * copies are the newest of their blocks; then its tombstones and clean
 * marks, as the scan would (a copy is covered when its seq <= t).
 */
static int replay_record(struct wow_cache *wc, struct wow_replay *rp, u32 s,
			 u32 off, void *hdr, const struct wow_record_info *ri)
{
	u64 nr_oblocks = wc->ti->len >> wc->block_shift;
	struct wow_segment *seg = &wc->segs[s];
	struct wow_tomb *t = wow_record_tombs(hdr);
	__le64 *raw = wow_record_oblocks(hdr, ri->nr_tombs);
	__le32 *crcs = wow_record_crcs(hdr, ri->nr_tombs, ri->nr_data);
	u32 i, slot, cur;
	int r;

	for (i = 0; i < ri->nr_data; i++)
		if (le64_to_cpu(raw[i]) >= nr_oblocks)
			return -EUCLEAN;
	r = wow_seg_reserve_tombs(wc, s, ri->nr_tombs);
	if (r)
		return r;
	for (i = 0; i < ri->nr_data; i++) {
		oblock_t b = to_oblock(le64_to_cpu(raw[i]));

		slot = wow_seg_slot(wc, s, off + 1 + i);
		cur = wow_index_lookup(&wc->index, b);
		if (cur != WOW_NO_SLOT)
			wow_index_remove(&wc->index, cur);
		r = replay_set_seq(&rp->sc, slot, ri->seq);
		if (r)
			return r;
		wow_index_insert(&wc->index, b, slot, WOW_SLOT_DIRTY);
		if (ri->flags & WOW_REC_CRCS)
			wow_index_set_crc(&wc->index, slot,
					  le32_to_cpu(crcs[i]));
	}
	for (i = 0; i < ri->nr_tombs; i++) {
		struct wow_tomb_range tr = {
			.start = le64_to_cpu(t[i].start),
			.t = le64_to_cpu(t[i].t),
			.nr = le32_to_cpu(t[i].nr),
			.flags = le32_to_cpu(t[i].flags),
		};

		if (!(tr.flags & WOW_TOMB_CLEAN))
			seg->tombs[seg->nr_tombs++] = tr;
		replay_tomb(wc, rp, &tr);
	}
	seg->max_seq = ri->seq;
	seg->wp = off + 1 + ri->nr_data;
	return 0;
}

/* struct wow_chain_ops over the cache device, for wow_chain_replay(). */
struct wow_replay_ctx {
	struct wow_cache *wc;
	struct wow_replay *rp;
};

static int replay_header(void *ctx, u32 s, u32 off, bool probe,
			 enum wow_rec_kind *kind, struct wow_record_info *ri)
{
	struct wow_replay_ctx *x = ctx;
	struct wow_cache *wc = x->wc;
	void *hdr;

	/* a probe reads the header block alone (where the log may end) */
	hdr = scan_blocks(wc, &x->rp->sc, s, off, 1, probe || !off);
	if (IS_ERR(hdr))
		return PTR_ERR(hdr);
	*kind = wow_record_check(hdr, wc->args.block_size, wc->sb.uuid, ri);
	return 0;
}

static int replay_data(void *ctx, u32 s, u32 off,
		       const struct wow_record_info *ri)
{
	struct wow_replay_ctx *x = ctx;
	struct wow_cache *wc = x->wc;
	struct wow_scan *sc = &x->rp->sc;
	u32 bs = wc->args.block_size, done, n, csum = ~0U;
	void *p;

	/*
	 * A probe read the header alone: read the record again from its
	 * header, with the rest of the segment, so that the data and the
	 * header apply reads come from one window (else the segment is read
	 * twice: from the data on, then from the header on).
	 */
	if (ri->nr_data) {
		p = scan_blocks(wc, sc, s, off, 2, false);
		if (IS_ERR(p))
			return PTR_ERR(p);
		save_crcs(sc, p, ri);
	}
	for (done = 0; done < ri->nr_data; done += n) {
		n = min(ri->nr_data - done, sc->win_blocks);
		p = scan_blocks(wc, sc, s, off + 1 + done, n, false);
		if (IS_ERR(p))
			return PTR_ERR(p);
		if (!data_check(sc, ri, done, p, n, bs, &csum))
			return false;
	}
	return (ri->flags & WOW_REC_CRCS) || csum == ri->data_csum;
}

static int replay_apply(void *ctx, u32 s, u32 off,
			const struct wow_record_info *ri)
{
	struct wow_replay_ctx *x = ctx;
	void *hdr = scan_blocks(x->wc, &x->rp->sc, s, off, 1, false);

	if (IS_ERR(hdr))
		return PTR_ERR(hdr);
	if (!off)
		replay_new_life(x->wc, x->rp, s, ri->seq);
	cond_resched();
	return replay_record(x->wc, x->rp, s, off, hdr, ri);
}

static void replay_torn(void *ctx, u32 s, u32 off)
{
	struct wow_replay_ctx *x = ctx;

	DMWARN(MSG_DROPPED, wow_name(x->wc), s, off);
}

static const struct wow_chain_ops replay_ops = {
	.header = replay_header,
	.data = replay_data,
	.apply = replay_apply,
	.torn = replay_torn,
};

#define MSG_CHAIN_CORRUPT "%s: log record %llu was durable (record %llu says so) but is corrupt; not loading"

/*
 * Replay the log written since the checkpoint @ci along its chain
 * (dm-wow-chain.c decides; the callbacks above read and apply).
 */
static int replay_chain(struct wow_cache *wc, struct wow_replay *rp,
			const struct wow_ckpt_info *ci)
{
	struct wow_replay_ctx x = { .wc = wc, .rp = rp };
	struct wow_chain c = {
		.nr_segments = wc->nr_segments,
		.blocks_per_seg = wc->blocks_per_seg,
		.head_seg = ci->head_seg,
		.head_wp = ci->head_wp,
		.next_seg = ci->next_seg,
		.next_seq = ci->next_seq,
		.head_life = ci->head_seg < wc->nr_segments ?
			     wc->segs[ci->head_seg].seq : 0,
	};
	int r = wow_chain_replay(&c, &replay_ops, &x);

	rp->expected = c.expected;
	rp->records = c.records;
	rp->dropped = c.dropped;
	if (r == -EUCLEAN)
		DMERR(MSG_CHAIN_CORRUPT, wow_name(wc), c.expected,
		      c.vouched_by);
	return r;
}

/*
 * After a checkpoint was loaded: replay what was logged since.  Sets
 * *@expected to the seq after the last record replayed.
 */
static int replay_log(struct wow_cache *wc, const struct wow_ckpt_info *ci,
		      u64 *expected, u64 *dropped)
{
	struct wow_replay rp = { };
	u32 bs = wc->args.block_size, i;
	int r = -ENOMEM;

	rp.sc.win_blocks = min(wc->blocks_per_seg,
			       max(WOW_SCAN_WINDOW_BYTES / bs,
				   1 + wc->max_record_blocks));
	rp.sc.buf = kvmalloc(array_size(rp.sc.win_blocks, bs), GFP_KERNEL);
	rp.ckpt_max = kvmalloc_array(wc->nr_segments, sizeof(u64),
				     GFP_KERNEL);
	rp.sc.nr_seq_chunks = DIV_ROUND_UP(wc->nr_slots, WOW_SEQ_CHUNK);
	rp.sc.slot_seq = kvcalloc(rp.sc.nr_seq_chunks, sizeof(u64 *),
				  GFP_KERNEL);
	rp.sc.crcs = kvmalloc_array(wow_record_capacity(bs, 0, 0), sizeof(u32),
				    GFP_KERNEL);
	/* the chunks themselves as records are replayed (replay_set_seq) */
	if (!rp.sc.buf || !rp.ckpt_max || !rp.sc.slot_seq || !rp.sc.crcs)
		goto out;
	for (i = 0; i < wc->nr_segments; i++)
		rp.ckpt_max[i] = wc->segs[i].seq ? wc->segs[i].max_seq : 0;
	r = replay_chain(wc, &rp, ci);
	*expected = rp.expected;
	*dropped = rp.dropped;
	if (!r && rp.records)
		DMINFO("%s: replayed %llu records written after checkpoint %llu",
		       wow_name(wc), rp.records, ci->generation);
out:
	kvfree(rp.ckpt_max);
	scan_free(&rp.sc);
	return r;
}

/*
 * Load the index and the segments: from the checkpoint when a valid one
 * is on disk, and the log written since it (nothing after a clean
 * shutdown), else from the whole log.  The newest record of each block
 * wins, unless a tombstone kills it.  A recovered copy is dirty unless a
 * clean mark covers it.  Then a new checkpoint anchors the log's chain:
 * the next record is the one it names.
 */
int wow_log_recover(struct wow_cache *wc)
{
	struct wow_scan sc = { };
	struct wow_ckpt_info ci;
	u64 seen, newest;
	u32 s, i;
	int r;

	/* a failed earlier attempt could not rebuild the index */
	if (!wc->index.slot_chunks && wow_index_init(&wc->index, wc->nr_slots))
		return -ENOMEM;

	wc->load_bytes = 0;
	r = load_checkpoint(wc, &ci);
	if (r == -ENOMEM)
		goto out;
	if (!r) {
		u64 expected;

		r = replay_log(wc, &ci, &expected, &sc.nr_dropped);
		if (r)
			goto out;
		seen = expected - 1;
		newest = expected - 1;
	} else {
		r = scan_log(wc, &sc);
		if (r)
			goto out;
		seen = sc.max_seen;
		newest = sc.max_seq;
	}
	/* a new epoch: nothing written from now on vouches for a dropped record */
	wc->next_seq = wow_next_epoch_seq(max(seen, wc->sb.format_seq));
	if (!wc->next_seq) {
		DMERR("%s: log sequence numbers exhausted; not loading",
		      wow_name(wc));
		r = -EOVERFLOW;
		goto out;
	}

	/* count what survived; survivors are dirty unless marked clean */
	for (i = 0; i < wc->nr_slots; i++) {
		struct wow_slot *sl = wow_slot_at(&wc->index, i);

		if (!(i & 0xffff))
			cond_resched();
		if (!(sl->flags & WOW_SLOT_VALID))
			continue;
		wc->segs[wow_slot_seg(wc, i)].nr_valid++;
		wc->valid_blocks++;
		if (!(sl->flags & WOW_SLOT_DIRTY))
			continue;
		if (!wc->policy.nr_spare) {
			struct wow_group *g;

			g = kmalloc(wow_policy_group_bytes(&wc->policy),
				    GFP_KERNEL);
			if (!g) {
				r = -ENOMEM;
				goto out;
			}
			wow_policy_add_spare(&wc->policy, g);
		}
		wow_policy_mark_dirty(&wc->policy,
				      from_oblock(wow_slot_oblock(sl)));
		wc->segs[wow_slot_seg(wc, i)].nr_dirty++;
		wc->dirty_blocks++;
	}

	r = prune_tombs(wc);
	if (r)
		goto out;
	/* empty segments first, then dead ones, oldest content first */
	for (s = 0; s < wc->nr_segments; s++)
		if (!wc->segs[s].seq)
			wow_seg_free_add(wc, s);
	for (s = 0; s < wc->nr_segments; s++) {
		struct wow_segment *seg = &wc->segs[s];

		if (!seg->seq)
			continue;
		if (!seg->nr_valid && !seg->nr_tombs)
			wow_seg_free_add(wc, s);
		else
			seg->state = WOW_SEG_CLOSED;
	}
	r = wow_seg_order_rebuild(wc);
	if (r)
		goto out;

	wc->completed_seq = newest;
	wc->durable_seq = newest;
	wc->load_dropped = sc.nr_dropped;
	wc->load_from_ckpt = wc->ckpt_live;
	upgrade_v1(wc);
	/*
	 * whatever was read, the chain starts again here (a new epoch: the
	 * checkpoint loaded from no longer leads to the log head)
	 */
	r = wow_ckptlog_write(wc, false, true);
	if (r == -ENOSPC)
		r = wow_ckptlog_retire(wc);
	if (!r)
		r = wow_ckptlog_know_both(wc);
	if (r) {
		DMERR("%s: cannot write a checkpoint at load: %d",
		      wow_name(wc), r);
		goto out;
	}
	if (wc->ckpt_live)
		DMINFO(MSG_LOADED_CKPT, wow_name(wc), ci.generation,
		       wc->load_bytes >> 10, wc->dirty_blocks, wc->valid_blocks, wc->nr_free_segs);
	else
		DMINFO(MSG_RECOVERED, wow_name(wc), sc.nr_records,
		       wc->load_bytes >> 10, wc->dirty_blocks, wc->valid_blocks, wc->nr_free_segs,
		       sc.nr_dropped);
	r = 0;
out:
	if (r) {
		wc->ckpt_live = false;
		if (reset_log(wc))
			DMERR("%s: cannot reset the index after a failed recovery",
			      wow_name(wc));
	}
	scan_free(&sc);
	return r;
}

/*
 * At a clean shutdown: append clean marks for every clean cached block, so
 * the next load need not destage them again.  Destage must be stopped.
 */
int wow_log_mark_clean(struct wow_cache *wc)
{
	DECLARE_COMPLETION_ONSTACK(done);
	struct wow_meta *m;
	u64 *blocks, t;
	u32 n = 0, i, nr;
	int r;

	spin_lock_irq(&wc->lock);
	nr = wc->valid_blocks - wc->dirty_blocks;
	spin_unlock_irq(&wc->lock);
	/*
	 * Marks are hints, and 32 bytes a clean block while they are built
	 * (finding 6: past INT_MAX bytes above ~89M blocks, a WARN and no
	 * marks at all).  A cache with checkpoints has the checkpoint that
	 * follows say which blocks are clean: beyond WOW_SHUTDOWN_MARKS it
	 * writes the empty mark only.  A version 1 cache marks as many as
	 * WOW_SHUTDOWN_MARKS_V1 (the rest are destaged again after a load).
	 */
	if (wc->sb.version >= 2 && nr > WOW_SHUTDOWN_MARKS)
		nr = 0;
	nr = min(nr, WOW_SHUTDOWN_MARKS_V1);

	/*
	 * Even with nothing clean, one (empty) mark is written: its record
	 * says every earlier record was durable, so recovery can tell a
	 * corrupt newest record from a torn one.
	 */
	blocks = kvmalloc_array(max(nr, 1U), sizeof(*blocks), GFP_KERNEL);
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (m)
		m->tombs = kvmalloc_array(max(nr, 1U), sizeof(*m->tombs),
					  GFP_KERNEL);
	if (!blocks || !m || !m->tombs) {
		r = -ENOMEM;
		goto out;
	}

	spin_lock_irq(&wc->lock);
	t = wc->completed_seq;
	/* these marks cover every clean block: the pending ones too */
	wc->nr_marks = 0;
	for (i = 0; i < wc->nr_slots && n < nr; i++) {
		struct wow_slot *sl = wow_slot_at(&wc->index, i);

		if ((sl->flags & (WOW_SLOT_VALID | WOW_SLOT_DIRTY)) ==
		    WOW_SLOT_VALID)
			blocks[n++] = from_oblock(wow_slot_oblock(sl));
		/*
		 * interrupts on now and then: destage and the log are stopped,
		 * so the index does not change meanwhile
		 */
		if (!((i + 1) & 0xffff)) {
			spin_unlock_irq(&wc->lock);
			cond_resched();
			spin_lock_irq(&wc->lock);
		}
	}
	spin_unlock_irq(&wc->lock);

	sort(blocks, n, sizeof(*blocks), cmp_u64, NULL);
	for (i = 0; i < n; i++) {
		struct wow_tomb_range *tr = &m->tombs[m->nr_tombs];

		if (m->nr_tombs && tr[-1].start + tr[-1].nr == blocks[i]) {
			tr[-1].nr++;
			continue;
		}
		tr->start = blocks[i];
		tr->nr = 1;
		tr->t = t;
		tr->flags = WOW_TOMB_CLEAN;
		m->nr_tombs++;
	}
	if (!m->nr_tombs) {
		m->tombs[0].start = 0;
		m->tombs[0].nr = 0;
		m->tombs[0].t = t;
		m->tombs[0].flags = WOW_TOMB_CLEAN;
		m->nr_tombs = 1;
	}
	m->victim = WOW_NO_SEG;
	m->done = &done;

	/*
	 * a hint: skip it rather than wait for space that may never come
	 * (a segment on the replay's chain comes free by a checkpoint: the
	 * commit worker writes one for a waiting record while suspended)
	 */
	nr = DIV_ROUND_UP(m->nr_tombs, wow_max_tombs(wc->args.block_size));
	spin_lock_irq(&wc->lock);
	nr = 2 * (nr + 1);
	r = wc->state == WOW_STATE_OK &&
	    ((wc->open_seg != WOW_NO_SEG &&
	      wc->blocks_per_seg - wc->segs[wc->open_seg].wp >= nr) ||
	     wc->nr_free_segs > WOW_RESERVE_SEGMENTS +
				DIV_ROUND_UP(nr, wc->blocks_per_seg)) ?
	    0 : -ENOSPC;
	spin_unlock_irq(&wc->lock);
	if (r)
		goto out;
	wow_log_queue_meta(wc, m);
	m = NULL;
	wait_for_completion(&done);
	r = 0;
out:
	if (m)
		kvfree(m->tombs);
	kfree(m);
	kvfree(blocks);
	return r;
}
