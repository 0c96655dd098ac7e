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
#include "dm-wow-pace.h"
#include "dm-wow-log.h"
#include "dm-wow-seg.h"
#include "dm-wow-ckptlog.h"

/* The one log append in flight. */
struct wow_batch {
	struct bio_list writes;
	struct bio_list flushes;
	struct bio_list discards;
	struct list_head metas;	/* whose last tombstones are in here */
	struct list_head copies;	/* whose blocks are in here, first */
	u32 seg;
	u32 block;		/* header block within the segment */
	u32 nr_data;
	u32 nr_tombs;
	u64 seq;
	bool fua;		/* PREFLUSH | FUA */
	bool preflush;		/* PREFLUSH alone: it reuses a segment */
	bool origin_failed;	/* the origin flush before it failed */
	bool busy;		/* submitted, not completed */
	bool done;		/* completed, not finished */
	blk_status_t status;
	void *hdr;		/* block_size bytes */
	/*
	 * WOW_RECORD_DATA_BYTES: the data, copied out of the bios before its
	 * checksum is taken, so a page changed in flight cannot make the
	 * record's checksum wrong.
	 */
	struct page **pages;
};

/*
 * Group commit's state, this file's alone (wc->commit).  Under wc->lock
 * unless noted.
 */
struct wow_commit {
	struct wow_cache *wc;
	struct wow_flush_gen origin_gen;	/* bypass writes, origin flushes */
	struct bio_list pending_writes;
	struct bio_list pending_flushes;
	struct bio_list pending_discards;
	struct list_head pending_metas;
	struct list_head pending_copies;
	struct list_head copies_done;	/* finished or failed: to free */
	bool meta_inflight;		/* a retired segment's record */
	struct wow_batch batch;
	/* destage progress: clean marks for the coming records (hints) */
	struct wow_tomb_range *marks;
	u32 nr_marks;
	unsigned long marks_at;		/* jiffies: the oldest was noted */
	struct wow_pace pace;		/* admission while space is short */
	struct wow_pace dpace;		/* new dirty data past high */
	struct delayed_work pace_work;	/* a paced write's turn */
	u64 pace_reclaimed;		/* stats at the last sample */
	u64 pace_copied;
	u64 pace_destaged;
	u64 pace_sample_ns;
	struct bio_set log_bs;		/* record bios */
};

static void wow_log_queue_meta(struct wow_cache *wc, struct wow_meta *m);
static void wow_log_commit_work(struct work_struct *ws);

/* A paced write's turn has come. */
static void pace_work(struct work_struct *ws)
{
	struct wow_commit *cm = container_of(to_delayed_work(ws),
					     struct wow_commit, pace_work);

	queue_work(cm->wc->wq, &cm->wc->commit_work);
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
	struct wow_commit *cm;
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

	cm = kzalloc(sizeof(*cm), GFP_KERNEL);
	if (!cm)
		return -ENOMEM;
	wc->commit = cm;
	cm->wc = wc;
	r = wow_seg_alloc(wc);
	if (r)
		return r;

	r = wow_index_init(&wc->index, wc->nr_slots);
	if (r)
		return r;
	r = wow_ckptlog_alloc(wc);
	if (r)
		return r;
	r = wow_seg_policy_init(wc, ops[wc->args.policy]);
	if (r)
		return r;

	cm->marks = kmalloc_array(WOW_CLEAN_MARKS, sizeof(*cm->marks),
				  GFP_KERNEL);
	if (!cm->marks)
		return -ENOMEM;
	cm->batch.hdr = kmalloc(bs, GFP_KERNEL);
	cm->batch.pages = kcalloc(WOW_RECORD_DATA_BYTES / PAGE_SIZE,
				  sizeof(struct page *), GFP_KERNEL);
	if (!cm->batch.hdr || !cm->batch.pages)
		return -ENOMEM;
	for (i = 0; i < WOW_RECORD_DATA_BYTES / PAGE_SIZE; i++) {
		cm->batch.pages[i] = alloc_page(GFP_KERNEL);
		if (!cm->batch.pages[i])
			return -ENOMEM;
	}
	r = bioset_init(&cm->log_bs, 4, 0, BIOSET_NEED_BVECS);
	if (r)
		return r;
	bio_list_init(&cm->pending_writes);
	bio_list_init(&cm->pending_flushes);
	bio_list_init(&cm->pending_discards);
	INIT_LIST_HEAD(&cm->pending_metas);
	INIT_LIST_HEAD(&cm->pending_copies);
	INIT_LIST_HEAD(&cm->copies_done);
	INIT_LIST_HEAD(&cm->batch.metas);
	INIT_LIST_HEAD(&cm->batch.copies);
	INIT_WORK(&wc->commit_work, wow_log_commit_work);
	INIT_DELAYED_WORK(&cm->pace_work, pace_work);
	wow_pace_init(&cm->pace);
	wow_pace_init(&cm->dpace);
	cm->pace_sample_ns = ktime_get_ns();
	return 0;
}

/*
 * Stop the pacing timer and let a record in flight end (no user bio is in
 * flight: postsuspend, dtr).
 */
void wow_log_stop(struct wow_cache *wc)
{
	struct wow_commit *cm = wc->commit;

	cancel_delayed_work_sync(&cm->pace_work);
	/*
	 * A record no bio waits for (clean marks alone) may still be in
	 * flight: suspend waited for the bios only.  The checkpoint written
	 * next must come after it (issue 34, finding 9).  Destage is
	 * stopped, so no new marks come and this ends.
	 */
	while (READ_ONCE(cm->batch.busy) || READ_ONCE(cm->batch.done)) {
		wait_event_timeout(wc->idle_wait, !READ_ONCE(cm->batch.busy) &&
				   !READ_ONCE(cm->batch.done), HZ);
		flush_work(&wc->commit_work);
	}
	/* and a checkpoint written in the background */
	wow_ckptlog_stop(wc);
}

void wow_log_free(struct wow_cache *wc)
{
	struct wow_commit *cm = wc->commit;
	u32 i;

	wow_seg_free(wc);
	if (wc->policy.ops)
		wow_policy_exit(&wc->policy);
	wow_index_exit(&wc->index);
	wow_ckptlog_free(wc);
	if (!cm)
		return;
	kfree(cm->marks);
	kfree(cm->batch.hdr);
	if (cm->batch.pages) {
		for (i = 0; i < WOW_RECORD_DATA_BYTES / PAGE_SIZE; i++)
			if (cm->batch.pages[i])
				__free_page(cm->batch.pages[i]);
		kfree(cm->batch.pages);
	}
	bioset_exit(&cm->log_bs);
	kfree(cm);
	wc->commit = NULL;
}

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
	struct wow_commit *cm = wc->commit;
	struct wow_batch *b = &cm->batch;
	u32 bs = wc->args.block_size, i;

	for (i = 0; i < b->nr_data; i++)
		crcs[i] = cpu_to_le32(pages_crc(b->pages, i * bs, bs));
	return crc32c(~0U, crcs, b->nr_data * sizeof(*crcs));
}

/* The batch's data slots take their crcs from its header (lock held). */
static void set_batch_crcs(struct wow_cache *wc)
{
	struct wow_commit *cm = wc->commit;
	struct wow_batch *b = &cm->batch;
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
		wow_seg_count(wc, wow_slot_seg(wc, slots[i]), 0, 0, 1);
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
	u64 ob = from_oblock(wow_slot_oblock(sl));
	bool forget = false, dirty = sl->flags & WOW_SLOT_DIRTY;

	lockdep_assert_held(&wc->lock);
	if (dirty) {
		/* a DESTAGING copy: its run_done tells the policy */
		forget = !replaced && !(sl->flags & WOW_SLOT_DESTAGING);
		wc->dirty_blocks--;
	}
	wow_seg_count(wc, wow_slot_seg(wc, slot), -1, dirty ? -1 : 0,
		      sl->flags & WOW_SLOT_BAD ? -1 : 0);
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
	struct wow_commit *cm = wc->commit;
	unsigned long flags;

	spin_lock_irqsave(&wc->lock, flags);
	wow_flush_gen_write(&cm->origin_gen);
	spin_unlock_irqrestore(&wc->lock, flags);
}

void wow_log_queue_write(struct wow_cache *wc, struct bio *bio)
{
	struct wow_commit *cm = wc->commit;

	queue_bio(wc, &cm->pending_writes, bio);
}

void wow_log_queue_flush(struct wow_cache *wc, struct bio *bio)
{
	struct wow_commit *cm = wc->commit;

	queue_bio(wc, &cm->pending_flushes, bio);
}

void wow_log_queue_discard(struct wow_cache *wc, struct bio *bio)
{
	struct wow_commit *cm = wc->commit;

	queue_bio(wc, &cm->pending_discards, bio);
}

/* Cleaning's copy, read: append it (from its last read's completion). */
void wow_log_queue_copy(struct wow_cache *wc, struct wow_copy *c)
{
	struct wow_commit *cm = wc->commit;
	unsigned long flags;

	spin_lock_irqsave(&wc->lock, flags);
	list_add_tail(&c->list, &cm->pending_copies);
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
	struct wow_commit *cm = wc->commit;
	struct wow_copy *c, *tmp;
	u32 i;

	lockdep_assert_held(&wc->lock);
	list_for_each_entry_safe(c, tmp, copies, list) {
		for (i = 0; i < c->nr; i++)
			release_copied(wc, c, i);
		list_move_tail(&c->list, &cm->copies_done);
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
	struct wow_commit *cm = wc->commit;
	struct wow_meta *m;

	lockdep_assert_held(&wc->lock);
	list_for_each_entry(m, metas, list) {
		if (m->victim == WOW_NO_SEG)
			continue;
		wow_seg_reclose(wc, m->victim);
		cm->meta_inflight = false;
	}
}

/*
 * Withdraw cleaning's records not yet written (suspend): victims stay,
 * copied blocks stay where they are.
 */
void wow_log_cancel_metas(struct wow_cache *wc)
{
	struct wow_commit *cm = wc->commit;
	LIST_HEAD(metas);

	spin_lock_irq(&wc->lock);
	unvictim(wc, &cm->pending_metas);
	list_splice_init(&cm->pending_metas, &metas);
	copies_done(wc, &cm->pending_copies);
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
	struct wow_commit *cm = wc->commit;
	u32 first = v * wc->blocks_per_seg, i, n, cap;
	struct wow_meta *m;
	u64 min_seq, max_seq;

	spin_lock_irq(&wc->lock);
	cap = wow_seg_retire_room(wc, v);
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
	max_seq = wow_seg_max_seq(wc, v);
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
		m->tombs[n].t = max_seq;
		m->tombs[n].flags = 0;
		m->own_last[n] = i;
		n++;
	}
	m->nr_own = n;
	n += wow_seg_live_tombs(wc, v, min_seq, m->tombs + n);
	if (!n) {
		wow_seg_drain(wc, v);
		spin_unlock_irq(&wc->lock);
		kvfree(m->tombs);
		kvfree(m->own_last);
		kfree(m);
		return NULL;
	}
	m->nr_tombs = n;
	wow_seg_freeing(wc, v);
	cm->meta_inflight = true;
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
	wow_seg_pin(wc, s);
}

/* The read is done; a retired segment it held may be freed now. */
void wow_log_unpin(struct wow_cache *wc, u32 s)
{
	if (wow_seg_unpin(wc, s))
		wow_kick(wc);
}

/* Take the copies the log is done with (lock held), for cleaning to free. */
void wow_log_take_copies_done(struct wow_cache *wc, struct list_head *done)
{
	struct wow_commit *cm = wc->commit;

	lockdep_assert_held(&wc->lock);
	list_splice_init(&cm->copies_done, done);
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
	lockdep_assert_held(&wc->lock);
	if (!wow_seg_drained_add(wc, v))
		return false;
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
	lockdep_assert_held(&wc->lock);
	return wow_seg_reap_drained(wc);
}

/* Has a retired segment's record been handed to the log, not yet written? */
bool wow_log_meta_inflight(struct wow_cache *wc)
{
	return READ_ONCE(wc->commit->meta_inflight);
}

static void wow_log_queue_meta(struct wow_cache *wc, struct wow_meta *m)
{
	struct wow_commit *cm = wc->commit;

	spin_lock_irq(&wc->lock);
	list_add_tail(&m->list, &cm->pending_metas);
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
	struct wow_commit *cm = wc->commit;
	struct wow_tomb_range *last = cm->nr_marks ?
				      &cm->marks[cm->nr_marks - 1] : NULL;

	lockdep_assert_held(&wc->lock);
	if (last && last->t == t && last->start + last->nr == ob &&
	    last->nr < U32_MAX) {
		last->nr++;
		return;
	}
	if (cm->nr_marks == WOW_CLEAN_MARKS)
		return;
	if (!cm->nr_marks)
		cm->marks_at = jiffies;
	last = &cm->marks[cm->nr_marks++];
	last->start = ob;
	last->nr = 1;
	last->t = t;
	last->flags = WOW_TOMB_CLEAN;
	if (cm->nr_marks == WOW_CLEAN_MARKS / 2)
		queue_work(wc->wq, &wc->commit_work);
}

/*
 * Destage made the copy at @slot, of origin block @ob, durable on the
 * origin (lock held): the block is clean, and a clean mark says so.
 */
void wow_log_block_clean(struct wow_cache *wc, u32 slot, u64 ob)
{
	lockdep_assert_held(&wc->lock);
	wow_index_set_flags(&wc->index, slot, 0, WOW_SLOT_DIRTY);
	wow_seg_count(wc, wow_slot_seg(wc, slot), 0, -1, 0);
	wc->dirty_blocks--;
	note_clean(wc, ob, wc->completed_seq);
}

/* Do the pending marks want a record of their own? (lock held) */
static bool marks_due(struct wow_cache *wc)
{
	struct wow_commit *cm = wc->commit;

	lockdep_assert_held(&wc->lock);
	return cm->nr_marks &&
	       (cm->nr_marks >= WOW_CLEAN_MARKS / 2 ||
		time_after_eq(jiffies, cm->marks_at +
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
	struct wow_commit *cm = wc->commit;
	u64 now = ktime_get_ns();
	u64 rec = atomic64_read(&wc->stats.reclaimed_segments);
	u64 copied = atomic64_read(&wc->stats.copied_blocks);
	u64 destaged = atomic64_read(&wc->stats.destage_blocks);
	u64 freed, used;
	bool due;

	spin_lock_irq(&wc->lock);
	/* clear_stats restarts the counters: start the sample over */
	if (rec >= cm->pace_reclaimed && copied >= cm->pace_copied) {
		freed = (rec - cm->pace_reclaimed) * wc->blocks_per_seg;
		used = copied - cm->pace_copied;
		wow_pace_sample(&cm->pace, freed > used ? freed - used : 0,
				now - cm->pace_sample_ns);
	}
	if (destaged >= cm->pace_destaged)
		wow_pace_sample(&cm->dpace, destaged - cm->pace_destaged,
				now - cm->pace_sample_ns);
	cm->pace_reclaimed = rec;
	cm->pace_copied = copied;
	cm->pace_destaged = destaged;
	cm->pace_sample_ns = now;
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
	struct wow_commit *cm = wc->commit;
	int r;

	if (!gen)
		return 0;
	r = blkdev_issue_flush(wc->origin_dev->bdev);
	if (r) {
		atomic64_inc(&wc->stats.origin_errors);
		return r;
	}
	spin_lock_irq(&wc->lock);
	wow_flush_gen_end(&cm->origin_gen, gen);
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
	struct wow_commit *cm = wc->commit;
	u64 seq, origin;
	int r;

	spin_lock_irq(&wc->lock);
	seq = wc->completed_seq;
	origin = wow_flush_gen_begin(&cm->origin_gen);
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
	struct wow_commit *cm = wc->commit;
	blk_status_t status = bio->bi_status;
	unsigned long flags;

	bio_put(bio);
	spin_lock_irqsave(&wc->lock, flags);
	cm->batch.status = status;
	cm->batch.busy = false;
	cm->batch.done = true;
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
	struct wow_commit *cm = wc->commit;
	struct wow_batch *b = &cm->batch;

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

/* Insert one written bio's blocks, starting at @slot (lock held). */
static void insert_write(struct wow_cache *wc, struct bio *bio, u32 slot)
{
	u64 ob = wow_bio_oblock(wc, bio);
	u32 n = wow_bio_blocks(wc, bio), s = wow_slot_seg(wc, slot), i;
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
		wc->valid_blocks++;
		wc->dirty_blocks++;
	}
	/* a record lies in one segment: so do the bio's blocks */
	wow_seg_count(wc, s, n, n, 0);
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
	wow_seg_count(wc, wow_slot_seg(wc, slot), 1, 1, 0);
	wc->valid_blocks++;
	wc->dirty_blocks++;
	WARN_ON_ONCE(wow_policy_mark_dirty(&wc->policy, ob));
	wow_policy_run_done(&wc->policy, ob, 1);
}

/* Insert the batch's copies, from @slot; returns the slot after (lock held). */
static u32 insert_copies(struct wow_cache *wc, u32 slot)
{
	struct wow_commit *cm = wc->commit;
	struct wow_copy *c;
	u32 i, n = 0;

	lockdep_assert_held(&wc->lock);
	list_for_each_entry(c, &cm->batch.copies, list) {
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
	copies_done(wc, &cm->batch.copies);
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
	struct wow_commit *cm = wc->commit;
	struct wow_batch *b = &cm->batch;
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
	wow_ckptlog_logged(wc, 1 + b->nr_data);
	wc->completed_seq = b->seq;
	if (b->fua)
		wc->durable_seq = b->seq;
	else if (b->preflush)
		wc->durable_seq = max(wc->durable_seq, b->seq - 1);
	/* its max_seq and the tombstones it holds: one change */
	wow_seg_record_done(wc, b->seg, b->seq, wow_record_tombs(b->hdr),
			    b->nr_tombs);

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
	m = list_first_entry_or_null(&cm->pending_metas, struct wow_meta,
				     list);
	if (m && m->victim != WOW_NO_SEG)
		drop_tombstoned(wc, m);

	list_for_each_entry(m, &metas, list) {
		if (m->victim == WOW_NO_SEG)
			continue;
		/* every copy left in the victim is clean and tombstoned */
		for (i = 0; i < wc->blocks_per_seg; i++) {
			slot = wow_seg_slot(wc, m->victim, i);
			if (wow_slot_at(&wc->index, slot)->flags & WOW_SLOT_VALID)
				drop_slot(wc, slot);
		}
		wow_seg_drain(wc, m->victim);
		cm->meta_inflight = false;
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
	struct wow_commit *cm = wc->commit;
	u32 max = wow_max_tombs(wc->args.block_size);

	/* leave room for data when writes are waiting */
	if (!bio_list_empty(&cm->pending_writes))
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
	struct wow_commit *cm = wc->commit;
	u32 bs = wc->args.block_size, n = 0;
	u32 want = min(room, WOW_RECORD_DATA_BYTES / bs);

	lockdep_assert_held(&wc->lock);
	while (n < cm->nr_marks && tomb_room(wc, b->nr_tombs) &&
	       (only || wow_record_capacity(bs, b->nr_tombs + 1,
					    wow_record_flags_v(wc->sb.version)) >=
		want))
		add_tomb(b, &cm->marks[n++]);
	cm->nr_marks -= n;
	memmove(cm->marks, cm->marks + n, cm->nr_marks * sizeof(*cm->marks));
}

/*
 * Prune every pending copy (its nr_live is then current for this gather)
 * and hand back the ones left with nothing; returns the first one's
 * blocks, 0 if none is left (lock held).
 */
static u32 prune_copies(struct wow_cache *wc)
{
	struct wow_commit *cm = wc->commit;
	struct wow_copy *c, *tmp;
	bool emptied = false;

	lockdep_assert_held(&wc->lock);
	list_for_each_entry_safe(c, tmp, &cm->pending_copies, list) {
		if (prune_copy(wc, c))
			continue;
		list_move_tail(&c->list, &cm->copies_done);
		emptied = true;
	}
	if (emptied)
		wow_kick(wc);
	c = list_first_entry_or_null(&cm->pending_copies, struct wow_copy,
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
	struct wow_commit *cm = wc->commit;
	u64 bps = wc->blocks_per_seg;

	lockdep_assert_held(&wc->lock);
	return wow_pace_rate(wow_seg_free_blocks(wc), WOW_RESERVE_SEGMENTS * bps,
			     wow_reclaim_threshold(wc) * bps,
			     cm->pace.freed_rate);
}

/*
 * Dirty pacing (dm-wow-pace.c): blocks per second that may become dirty
 * once dirty occupancy passes the high watermark; none in cleaner mode,
 * where writes bypass the cache (lock held).
 */
static u64 dirty_pace_rate(struct wow_cache *wc)
{
	struct wow_commit *cm = wc->commit;

	lockdep_assert_held(&wc->lock);
	if (wc->cleaner)
		return WOW_PACE_UNLIMITED;
	return wow_pace_dirty_rate(wow_occupancy_bp(wc), wc->thresh.high,
				   WOW_PACE_DIRTY_SPAN_BP,
				   cm->dpace.freed_rate);
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
	struct wow_commit *cm = wc->commit;
	struct bio *bio;
	u64 n = 0;

	lockdep_assert_held(&wc->lock);
	bio_list_for_each(bio, &cm->pending_writes) {
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
	struct wow_commit *cm = wc->commit;
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
	    !wow_pace_admit_batch(&cm->dpace, fresh, dbatch, drate, now,
				  &wait))
		goto later;
	if (wow_pace_admit_batch(&cm->pace, n, batch, rate, now, &wait))
		return true;
	if (fresh)
		wow_pace_refund(&cm->dpace, fresh);
later:
	if (wait)
		mod_delayed_work(wc->wq, &cm->pace_work,
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
	struct wow_commit *cm = wc->commit;
	struct wow_batch *b = &cm->batch;
	struct wow_meta *m, *tmp;
	struct wow_copy *c, *ctmp;
	struct bio_list cached;
	u32 room, data_cap, copy_blocks;
	bool reserve, tombs, only_marks, first_admitted = false;
	struct bio *bio;
	u64 rate, drate;

	lockdep_assert_held(&wc->lock);
	bio_list_merge(flushes, &cm->pending_flushes);
	bio_list_init(&cm->pending_flushes);

	if (wc->state != WOW_STATE_OK) {
		bio_list_merge(failed, &cm->pending_writes);
		bio_list_init(&cm->pending_writes);
		bio_list_merge(failed, &cm->pending_discards);
		bio_list_init(&cm->pending_discards);
		unvictim(wc, &cm->pending_metas);
		list_splice_init(&cm->pending_metas, failed_metas);
		copies_done(wc, &cm->pending_copies);
		wow_kick(wc);
		return false;
	}

	bio_list_init(&cached);
	while ((bio = bio_list_pop(&cm->pending_discards))) {
		if (range_cached(wc, wow_bio_oblock(wc, bio),
				 wow_bio_blocks(wc, bio)))
			bio_list_add(&cached, bio);
		else
			bio_list_add(direct, bio);
	}
	bio_list_merge(&cm->pending_discards, &cached);

	copy_blocks = prune_copies(wc);
	/* only cleaning's records may take the reserve: they free space */
	reserve = !list_empty(&cm->pending_metas) || copy_blocks;
	tombs = !list_empty(&cm->pending_metas) ||
		!bio_list_empty(&cm->pending_discards);
	bio = bio_list_peek(&cm->pending_writes);
	if (wow_seg_head_reserved(wc))
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
		if (!bio_list_empty(&cm->pending_writes))
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
	b->seg = wow_seg_head(wc);
	b->block = wow_seg_wp(wc, b->seg);
	b->seq = wc->next_seq++;
	b->nr_tombs = 0;
	b->nr_data = 0;
	b->fua = !bio_list_empty(flushes);
	/*
	 * The first record of a reused segment overwrites the earlier life:
	 * the records that made that life dead must be durable first.
	 */
	b->preflush = !b->block && wow_seg_prev_seq(wc, b->seg) &&
		      wc->durable_seq < wc->completed_seq;
	room = wc->blocks_per_seg - b->block - 1;

	/* reclaim tombstones first: they free space */
	list_for_each_entry_safe(m, tmp, &cm->pending_metas, list) {
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
	       (bio = bio_list_pop(&cm->pending_discards))) {
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
	list_for_each_entry_safe(c, ctmp, &cm->pending_copies, list) {
		if (b->nr_data + c->nr_live > data_cap)
			break;
		list_move_tail(&c->list, &b->copies);
		b->nr_data += c->nr_live;
	}

	if (wow_seg_head_reserved(wc))
		data_cap = 0;
	while ((bio = bio_list_peek(&cm->pending_writes))) {
		u32 n = wow_bio_blocks(wc, bio);

		if (b->nr_data + n > data_cap)
			break;
		if (!first_admitted && !pace_admit(wc, bio, rate, drate, false))
			break;
		first_admitted = false;
		bio_list_add(&b->writes, bio_list_pop(&cm->pending_writes));
		b->nr_data += n;
		if (fua_bio(bio))
			b->fua = true;
	}
	WARN_ON_ONCE(!b->nr_data && !b->nr_tombs);

	bio_list_merge(&b->flushes, flushes);
	bio_list_init(flushes);
	wow_seg_append(wc, b->seg, 1 + b->nr_data);
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
	struct wow_commit *cm = wc->commit;
	struct wow_batch *b = &cm->batch;
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
	struct wow_commit *cm = wc->commit;
	struct bio *next;

	if (!record_bio_full(*bio) && bio_add_page(*bio, page, len, off) == len)
		return;
	next = bio_alloc_bioset(wc->cache_dev->bdev, BIO_MAX_VECS, opf,
				GFP_NOIO, &cm->log_bs);
	next->bi_iter.bi_sector = bio_end_sector(*bio);
	bio_chain(*bio, next);
	bio_list_add(full, *bio);
	*bio = next;
	__bio_add_page(next, page, len, off);
}

/* Fill the header block and the checksums, build and submit the I/O. */
static void submit_batch(struct wow_cache *wc)
{
	struct wow_commit *cm = wc->commit;
	struct wow_batch *b = &cm->batch;
	u32 bs = wc->args.block_size, off, data_bytes = b->nr_data * bs;
	blk_opf_t opf = REQ_OP_WRITE | REQ_SYNC | (b->fua ? REQ_FUA : 0);
	blk_opf_t first = 0;
	struct wow_record_info ri;
	struct bio_list full;
	u64 origin_flush;
	struct bio *bio;

	ri.flags = wow_record_flags_v(wc->sb.version);
	ri.data_csum = copy_batch_data(wc, ri.flags);
	ri.seq = b->seq;
	ri.seg_seq = wow_seg_seq(wc, b->seg);
	ri.nr_data = b->nr_data;
	ri.nr_tombs = b->nr_tombs;
	spin_lock_irq(&wc->lock);
	/*
	 * A FUA record vouches for every earlier one (its durable_seq is
	 * seq - 1), so it flushes them first, unless each is durable already
	 * (written FUA, or flushed since): O_SYNC writes one at a time then
	 * cost one flush of the cache device each, not two (a device without
	 * FUA, as virtio-blk, flushes after the write besides: issue 37).
	 * The first record of a reused segment needs it only in that case
	 * too (b->preflush says so).
	 */
	if (b->preflush || (b->fua && wc->durable_seq < wc->completed_seq))
		first = REQ_PREFLUSH;
	ri.durable_seq = b->fua || b->preflush ? b->seq - 1 : wc->durable_seq;
	ri.next_seg = wow_seg_next_free(wc);
	wc->chain_next = ri.next_seg;
	origin_flush = b->fua ? wow_flush_gen_begin(&cm->origin_gen) : 0;
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
			       GFP_NOIO, &cm->log_bs);
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

static void wow_log_commit_work(struct work_struct *ws)
{
	struct wow_cache *wc = container_of(ws, struct wow_cache, commit_work);
	struct wow_commit *cm = wc->commit;
	struct bio_list flushes, direct, failed;
	LIST_HEAD(failed_metas);
	struct bio *bio;
	bool busy, done, go;

	spin_lock_irq(&wc->lock);
	busy = cm->batch.busy;
	done = cm->batch.done;
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
		go = wow_seg_ckpt_wanted(wc);
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
	go = wow_seg_ckpt_wanted(wc) && wc->state == WOW_STATE_OK &&
	     !wow_ckptlog_busy(wc);
	spin_unlock_irq(&wc->lock);
	if (go)
		queue_work(wc->wq, &wc->commit_work);
}

/*
 * At a clean shutdown: append clean marks for every clean cached block, so
 * the next load need not destage them again.  Destage must be stopped.
 */
int wow_log_mark_clean(struct wow_cache *wc)
{
	struct wow_commit *cm = wc->commit;
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
	cm->nr_marks = 0;
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

	sort(blocks, n, sizeof(*blocks), wow_cmp_u64, NULL);
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
	    wow_seg_room(wc, nr) ? 0 : -ENOSPC;
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
