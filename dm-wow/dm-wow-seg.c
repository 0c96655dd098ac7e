// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow segments: the table of log segments, their states, the free list
 * and the write order, opening and closing the log head, and the walk that
 * prunes the tombstones segments hold.
 *
 * A segment's life, every change made by the log's parts (cleaning asks
 * through wow_log_retire_seg() and wow_log_free_seg()):
 *
 *            wow_seg_open()          wow_seg_close_if_short(), full
 *   FREE -----------------------> OPEN ---------------------------> CLOSED
 *    ^   (head of the free list;                                   |  ^
 *    |    not on the last checkpoint's                             |  |
 *    |    replay chain: wow_seg_on_chain)                          |  |
 *    |                                    wow_log_retire_seg():    |  |
 *    |                                    cleaning's victim, every |  | record
 *    |                                    block clean              |  | failed
 *    |                                                             v  |
 *    |  wow_log_free_seg(),          finish_batch():           FREEING
 *    |  wow_log_reap_drained():                                 |
 *    +----------------------- DRAINING <------------------------+
 *       no read or destage    (its tombstones are durable;    (its record
 *       run pins it           nothing current in it goes      of tombstones
 *                             straight here from CLOSED)      is queued)
 *
 * Recovery rebuilds FREE, OPEN (the log head) and CLOSED; FREEING and
 * DRAINING exist only while the device runs.
 *
 * Locking: wc->lock guards all of it; functions marked "lock held" assert
 * it, "lock held or recovering" ones are also called by recovery before
 * the device is live.
 */
#include <linux/jiffies.h>
#include <linux/list_sort.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>

#include "dm-wow.h"
#include "dm-wow-victim.h"
#include "dm-wow-seg.h"

/* A log segment: one erase block of the cache device. */
struct wow_segment {
	u64 seq;		/* open seq of the life on disk; 0: none */
	/*
	 * The life this one replaced: still what recovery would find until
	 * the new life's first record is durable (durable_seq >= seq).
	 */
	u64 prev_seq;
	u64 max_seq;		/* newest record of that life */
	unsigned long open_time;	/* jiffies when opened or recovered */
	u32 wp;			/* next block to write */
	u32 nr_valid;		/* slots holding current copies */
	u32 nr_dirty;		/* of which dirty */
	u32 nr_bad;		/* of which WOW_SLOT_BAD: never a victim */
	enum wow_seg_state state;
	atomic_t pins;		/* reads in flight from this segment */
	struct list_head list;	/* free list */
	struct list_head order;	/* the write order, while it has a life */
	/* tombstones whose newest copy lives here */
	struct wow_tomb_range *tombs;
	u32 nr_tombs;
	u32 max_tombs;
};

/*
 * The segment table, the part's state: wc->segs points to it and only
 * this file sees inside.  wc->lock guards it all, but the changed bits
 * (atomic) and what the notes below say.
 */
struct wow_segs {
	struct wow_segment *table;	/* wc->nr_segments of them */
	/*
	 * A bit per segment whose checkpoint entry (seq, max_seq, wp,
	 * nr_tombs, free or not) changed since a background checkpoint last
	 * copied it (wow_seg_changed, wow_seg_next_changed): set after the
	 * change, atomically
	 */
	unsigned long *changed;
	/* free segments: opened from its head, freed to its tail */
	struct list_head free;
	u32 nr_free;
	/* retired (DRAINING) segments a read or a destage run still pins */
	struct list_head drained;
	/* segments with a life on disk, oldest first (seq order) */
	struct list_head order;
	u32 lrw_cursor;			/* first slot in that order not clean */
	u32 open;			/* the log head; WOW_NO_SEG when none */
	bool open_reserved;		/* the head came from the reserve */
	/*
	 * wow_seg_visit: a lower bound of wow_seg_min_disk_seq() and the
	 * tombstones held, from the last whole pass, and the pass under way
	 */
	struct wow_life_pass life_pass;
	/*
	 * The chain a load would replay, as dm-wow-ckptlog.c sets it once a
	 * checkpoint is written (wow_seg_chain_start): the newest one's
	 * next_seq (0: none, a load scans the log) and log head, and the one
	 * before it in the other area while a load may fall back to it
	 * (prev_seq 0: none).  Their segments are not reopened
	 * (wow_seg_on_chain).
	 */
	u64 ckpt_seq;
	u32 ckpt_head;
	u64 ckpt_prev_seq;
	u32 ckpt_prev_head;
	bool ckpt_wanted;		/* the next segment to open waits */
	bool ckpt_reading;		/* a checkpoint reads the tombstones */
};

/*
 * The policy's source: is the current cached copy of @ob dirty, for
 * destage?  A bad one (its data does not match its crc) is not.  (lock
 * held or recovering)
 */
bool wow_seg_oblock_dirty(void *ctx, u64 ob)
{
	struct wow_cache *wc = ctx;
	u32 slot = wow_index_lookup(&wc->index, to_oblock(ob));

	return slot != WOW_NO_SLOT &&
	       (wow_slot_at(&wc->index, slot)->flags &
		(WOW_SLOT_DIRTY | WOW_SLOT_BAD)) == WOW_SLOT_DIRTY;
}

/* ---- write order: lrw's source ---- */

/*
 * The log is its own record of write order: a block written (or written
 * again) gets a slot at the head, so the dirty blocks in the order they
 * were last written are the dirty slots of the segments in seq order
 * (wc->seg_order), each from block 0 to its write pointer.  lrw walks
 * that; wc->segs->lrw_cursor keeps its place: every slot before it is clean or
 * dead, and stays so (only the head gets new dirty slots).
 */

/* The slot after @slot in write order, or WOW_NO_SLOT (lock held). */
static u32 order_next(struct wow_cache *wc, u32 slot)
{
	struct wow_segment *seg = &wc->segs->table[wow_slot_seg(wc, slot)];

	lockdep_assert_held(&wc->lock);
	if (slot % wc->blocks_per_seg + 1 < seg->wp)
		return slot + 1;
	if (list_is_last(&seg->order, &wc->segs->order))
		return WOW_NO_SLOT;
	seg = list_next_entry(seg, order);
	return wow_seg_slot(wc, seg - wc->segs->table, 0);
}

/* The first slot in write order (lock held). */
static u32 order_first(struct wow_cache *wc)
{
	struct wow_segment *seg;

	lockdep_assert_held(&wc->lock);
	seg = list_first_entry_or_null(&wc->segs->order, struct wow_segment,
				       order);
	return seg ? wow_seg_slot(wc, seg - wc->segs->table, 0) : WOW_NO_SLOT;
}

static bool slot_dirty(struct wow_cache *wc, u32 slot)
{
	u16 f = wow_slot_at(&wc->index, slot)->flags;

	return (f & (WOW_SLOT_VALID | WOW_SLOT_DIRTY)) ==
	       (WOW_SLOT_VALID | WOW_SLOT_DIRTY);
}

/*
 * lrw's source (struct wow_policy_src.older): the next dirty block not
 * held by a destage or copy, in write order after *@pos
 * (WOW_POLICY_OLDEST: from the cursor).  Lock held or recovering.
 */
static bool oblock_older(void *ctx, u64 *pos, u64 *ob)
{
	struct wow_cache *wc = ctx;
	u32 slot;

	if (*pos == WOW_POLICY_OLDEST) {
		if (wc->segs->lrw_cursor == WOW_NO_SLOT)
			wc->segs->lrw_cursor = order_first(wc);
		/* move past what went clean or dead */
		while (wc->segs->lrw_cursor != WOW_NO_SLOT &&
		       !slot_dirty(wc, wc->segs->lrw_cursor)) {
			slot = order_next(wc, wc->segs->lrw_cursor);
			if (slot == WOW_NO_SLOT)
				break;	/* the head: more may come here */
			wc->segs->lrw_cursor = slot;
		}
		slot = wc->segs->lrw_cursor;
	} else {
		slot = order_next(wc, *pos);
	}
	for (; slot != WOW_NO_SLOT; slot = order_next(wc, slot)) {
		if (!slot_dirty(wc, slot) ||
		    (wow_slot_at(&wc->index, slot)->flags &
		     (WOW_SLOT_DESTAGING | WOW_SLOT_BAD)))
			continue;
		*pos = slot;
		*ob = from_oblock(wow_slot_oblock(wow_slot_at(&wc->index,
							      slot)));
		return true;
	}
	return false;
}

int wow_seg_policy_init(struct wow_cache *wc, const struct wow_policy_ops *ops)
{
	const struct wow_policy_src src = {
		.dirty = wow_seg_oblock_dirty, .older = oblock_older, .ctx = wc,
	};

	return wow_policy_init(&wc->policy, ops,
			       wc->args.write_group_size / wc->args.block_size,
			       DIV_ROUND_UP_SECTOR_T(wc->ti->len,
						     1 << wc->block_shift),
			       &src);
}

/*
 * The open time of the oldest segment with dirty blocks, jiffies if none
 * (lock held).  The write order is the open order, so the first such
 * segment in it is the oldest: the walk passes only the clean segments
 * before it (every segment, at each tick, before issue 34's finding 7).
 */
unsigned long wow_seg_oldest_dirty(struct wow_cache *wc)
{
	struct wow_segment *seg;

	lockdep_assert_held(&wc->lock);
	list_for_each_entry(seg, &wc->segs->order, order)
		if (seg->nr_dirty)
			return seg->open_time;
	return jiffies;
}

/* Segment @s leaves the write order (lock held or recovering). */
static void order_del(struct wow_cache *wc, u32 s)
{
	struct wow_segment *seg = &wc->segs->table[s];

	if (list_empty(&seg->order))
		return;
	if (wc->segs->lrw_cursor != WOW_NO_SLOT &&
	    wow_slot_seg(wc, wc->segs->lrw_cursor) == s)
		wc->segs->lrw_cursor =
			list_is_last(&seg->order, &wc->segs->order) ?
			WOW_NO_SLOT :
			wow_seg_slot(wc, list_next_entry(seg, order) -
					 wc->segs->table, 0);
	list_del_init(&seg->order);
}

static int cmp_seg_seq(const void *a, const void *b, const void *priv)
{
	const struct wow_segment *segs = priv;
	u64 x = segs[*(const u32 *)a].seq, y = segs[*(const u32 *)b].seq;

	return x < y ? -1 : x > y;
}

/* After a load: the segments with a life, in seq order (recovering). */
int wow_seg_order_rebuild(struct wow_cache *wc)
{
	u32 *ids, n = 0, s;

	ids = kvmalloc_array(max(wc->nr_segments, 1U), sizeof(*ids),
			     GFP_KERNEL);
	if (!ids)
		return -ENOMEM;
	INIT_LIST_HEAD(&wc->segs->order);
	wc->segs->lrw_cursor = WOW_NO_SLOT;
	for (s = 0; s < wc->nr_segments; s++) {
		INIT_LIST_HEAD(&wc->segs->table[s].order);
		if (wc->segs->table[s].state != WOW_SEG_FREE)
			ids[n++] = s;
	}
	sort_r(ids, n, sizeof(*ids), cmp_seg_seq, NULL, wc->segs->table);
	for (s = 0; s < n; s++)
		list_add_tail(&wc->segs->table[ids[s]].order, &wc->segs->order);
	kvfree(ids);
	/* the load set the segments by hand: a checkpoint copies them all */
	wow_seg_all_changed(wc);
	return 0;
}

void wow_seg_free_add(struct wow_cache *wc, u32 s)
{
	order_del(wc, s);
	wc->segs->table[s].state = WOW_SEG_FREE;
	list_add_tail(&wc->segs->table[s].list, &wc->segs->free);
	wc->segs->nr_free++;
	wow_seg_changed(wc, s);
}

void wow_seg_changed(struct wow_cache *wc, u32 s)
{
	set_bit(s, wc->segs->changed);
}

bool wow_seg_is_changed(struct wow_cache *wc, u32 s)
{
	return test_bit(s, wc->segs->changed);
}

void wow_seg_all_changed(struct wow_cache *wc)
{
	bitmap_fill(wc->segs->changed, wc->nr_segments);
}

u64 wow_seg_next_changed(struct wow_cache *wc, u64 s)
{
	for (;;) {
		s = find_next_bit(wc->segs->changed, wc->nr_segments, s);
		if (s >= wc->nr_segments)
			return U64_MAX;
		if (test_and_clear_bit(s, wc->segs->changed))
			return s;
	}
}

/*
 * The segment the log goes on in when the open one ends: the head of the
 * free list (segments are freed to its tail and opened from its head
 * only), or WOW_NO_SEG (lock held).
 */
u32 wow_seg_next_free(struct wow_cache *wc)
{
	lockdep_assert_held(&wc->lock);
	if (list_empty(&wc->segs->free))
		return WOW_NO_SEG;
	return list_first_entry(&wc->segs->free, struct wow_segment, list) -
	       wc->segs->table;
}

/* Blocks new writes can still use: free segments and the open tail (lock held). */
u64 wow_seg_free_blocks(struct wow_cache *wc)
{
	u64 n = (u64)wc->segs->nr_free * wc->blocks_per_seg;

	lockdep_assert_held(&wc->lock);
	if (wc->segs->open != WOW_NO_SEG)
		n += wc->blocks_per_seg - wc->segs->table[wc->segs->open].wp;
	return n;
}

/*
 * The oldest life recovery could find in segment @seg (lock held or
 * recovering).
 */
static u64 seg_disk_seq(struct wow_cache *wc, struct wow_segment *seg)
{
	return wow_seg_disk_seq(seg->seq, seg->prev_seq, wc->durable_seq);
}

/* wow_seg_min_life's view of segment @s (lock held or recovering) */
static u64 seg_life(void *ctx, u32 s, u64 *prev_seq)
{
	struct wow_cache *wc = ctx;

	*prev_seq = wc->segs->table[s].prev_seq;
	return wc->segs->table[s].seq;
}

/*
 * The smallest open seq of any segment life still on the device, as a
 * power cut now would leave it (lock held or recovering; the rule is
 * dm-wow-tombs.c's, the tools' too).
 */
u64 wow_seg_min_disk_seq(struct wow_cache *wc)
{
	return wow_seg_min_life(wc->nr_segments, wc->durable_seq, seg_life,
				wc);
}

/* Make room for @more tombstones held by segment @s (may sleep). */
int wow_seg_reserve_tombs(struct wow_cache *wc, u32 s, u32 more)
{
	struct wow_segment *seg = &wc->segs->table[s];
	struct wow_tomb_range *n;
	u32 want = seg->nr_tombs + more;

	if (want <= seg->max_tombs)
		return 0;
	want = max(want, 2 * seg->max_tombs);
	n = kvmalloc_array(want, sizeof(*n), GFP_NOIO);
	if (!n)
		return -ENOMEM;
	spin_lock_irq(&wc->lock);
	if (seg->nr_tombs)
		memcpy(n, seg->tombs, seg->nr_tombs * sizeof(*n));
	swap(seg->tombs, n);
	seg->max_tombs = want;
	spin_unlock_irq(&wc->lock);
	kvfree(n);
	return 0;
}

/*
 * Visit segment @s on the cleaner's walk over the segments (lock held):
 * drop the tombstones it holds that no record on the device can need any
 * more, below the last pass's bound of the oldest life, and count it in
 * the pass under way (wow_life_pass_visit, dm-wow-tombs.c: why a pass
 * that reads each segment at a different time still gives a bound never
 * above the true oldest life).
 *
 * Not while a checkpoint reads the lists without the lock (ckpt_reading):
 * it would count one number of a segment's tombstones and write another,
 * and the next load would find the checkpoint does not check and scan the
 * whole log (issue 34, finding 5); they are pruned at the next visit.
 */
void wow_seg_visit(struct wow_cache *wc, u32 s)
{
	struct wow_segment *seg = &wc->segs->table[s];
	u32 i, n;

	lockdep_assert_held(&wc->lock);
	if (!wc->segs->ckpt_reading && seg->state != WOW_SEG_FREEING) {
		/* a FREEING segment's meta is being written from its list */
		for (i = 0, n = 0; i < seg->nr_tombs; i++)
			if (seg->tombs[i].t >= wc->segs->life_pass.bound)
				seg->tombs[n++] = seg->tombs[i];
		if (n != seg->nr_tombs) {
			seg->nr_tombs = n;
			wow_seg_changed(wc, s);
		}
	}
	wow_life_pass_visit(&wc->segs->life_pass, wc->nr_segments, wc->next_seq,
			    seg_disk_seq(wc, seg), seg->nr_tombs);
}

/*
 * A lower bound of wow_seg_min_disk_seq() from the last whole pass of
 * wow_seg_visit(), or from the load (lock held): O(1), where the
 * exact minimum walks every segment.
 */
u64 wow_seg_min_disk_seq_bound(struct wow_cache *wc)
{
	lockdep_assert_held(&wc->lock);
	return wc->segs->life_pass.bound;
}

/* Tombstones held, as the last whole pass counted them (lock held). */
u64 wow_seg_held_tombs(struct wow_cache *wc)
{
	lockdep_assert_held(&wc->lock);
	return wc->segs->life_pass.held;
}

/* Close the open segment if @need blocks do not fit (lock held). */
void wow_seg_close_if_short(struct wow_cache *wc, u32 need)
{
	struct wow_segment *seg;

	lockdep_assert_held(&wc->lock);
	if (wc->segs->open == WOW_NO_SEG)
		return;
	seg = &wc->segs->table[wc->segs->open];
	if (wc->blocks_per_seg - seg->wp >= need)
		return;
	seg->state = WOW_SEG_CLOSED;
	wow_seg_changed(wc, wc->segs->open);
	wc->segs->open = WOW_NO_SEG;
}

/*
 * Are records of segment @s on the chain a load from the last checkpoint
 * (or, in format version 4, the one before it, still valid) replays?  Its
 * life was the log head then, or has a record at or after the
 * checkpoint's next_seq.  A new life there before a newer checkpoint
 * would break the chain where the replay must go on: the records after
 * it would be lost, or a later one vouching for the missing one would
 * make the load refuse the cache (lock held).
 */
bool wow_seg_on_chain(struct wow_cache *wc, u32 s)
{
	struct wow_segs *st = wc->segs;
	struct wow_segment *seg = &st->table[s];
	u64 life = max(seg->seq, seg->max_seq);

	lockdep_assert_held(&wc->lock);
	return (st->ckpt_seq &&
		(s == st->ckpt_head || life >= st->ckpt_seq)) ||
	       (st->ckpt_prev_seq &&
		(s == st->ckpt_prev_head || life >= st->ckpt_prev_seq));
}

void wow_seg_chain_start(struct wow_cache *wc, u64 seq, u32 head,
			 bool keep_prev)
{
	struct wow_segs *st = wc->segs;

	lockdep_assert_held(&wc->lock);
	st->ckpt_prev_seq = keep_prev ? st->ckpt_seq : 0;
	st->ckpt_prev_head = st->ckpt_head;
	st->ckpt_seq = seq;
	st->ckpt_head = head;
}

void wow_seg_chain_clear(struct wow_cache *wc)
{
	lockdep_assert_held(&wc->lock);
	wc->segs->ckpt_seq = 0;
	wc->segs->ckpt_prev_seq = 0;
	wc->segs->ckpt_wanted = false;
}

bool wow_seg_has_chain(struct wow_cache *wc)
{
	lockdep_assert_held(&wc->lock);
	return wc->segs->ckpt_seq;
}

bool wow_seg_ckpt_wanted(struct wow_cache *wc)
{
	lockdep_assert_held(&wc->lock);
	return wc->segs->ckpt_wanted;
}

void wow_seg_ckpt_met(struct wow_cache *wc)
{
	lockdep_assert_held(&wc->lock);
	wc->segs->ckpt_wanted = false;
}

void wow_seg_hold_tombs(struct wow_cache *wc, bool hold)
{
	lockdep_assert_held(&wc->lock);
	wc->segs->ckpt_reading = hold;
}

/*
 * Open a free segment for the record with seq @seq (lock held).  Only the
 * one the chain names (the last record's or checkpoint's next segment),
 * and not one on the replay's chain: else a checkpoint is due first
 * (periodic_checkpoint).  A segment the chain does not name would be a
 * life the replay never reaches: everything written in it, FUA writes
 * included, would be lost at the next load after a crash (issue 34,
 * finding 1: a checkpoint taken with the free list empty named no next
 * segment, and cleaning freed one while it was written).
 */
bool wow_seg_open(struct wow_cache *wc, bool reserve, u64 seq)
{
	struct wow_segment *seg;

	lockdep_assert_held(&wc->lock);
	if (wc->segs->open != WOW_NO_SEG)
		return true;
	if (!wc->segs->nr_free ||
	    (!reserve && wc->segs->nr_free <= WOW_RESERVE_SEGMENTS))
		return false;
	if (!wow_chain_may_open(wc->segs->ckpt_seq != 0, wc->chain_next,
				wow_seg_next_free(wc)) ||
	    wow_seg_on_chain(wc, wow_seg_next_free(wc))) {
		wc->segs->ckpt_wanted = true;
		return false;
	}
	seg = list_first_entry(&wc->segs->free, struct wow_segment, list);
	list_del_init(&seg->list);
	/* taken from the reserve: only reclaim's records may fill it */
	wc->segs->open_reserved = wc->segs->nr_free <= WOW_RESERVE_SEGMENTS;
	wc->segs->nr_free--;
	wc->segs->open = seg - wc->segs->table;
	seg->state = WOW_SEG_OPEN;
	list_add_tail(&seg->order, &wc->segs->order);
	seg->prev_seq = seg_disk_seq(wc, seg);
	seg->seq = seq;
	seg->max_seq = 0;
	seg->open_time = jiffies;
	seg->wp = 0;
	seg->nr_tombs = 0;
	wow_seg_changed(wc, wc->segs->open);
	return true;
}

/* ---- what the other parts read and set of one segment ---- */

u64 wow_seg_seq(struct wow_cache *wc, u32 s)
{
	return wc->segs->table[s].seq;
}

u32 wow_seg_wp(struct wow_cache *wc, u32 s)
{
	return wc->segs->table[s].wp;
}

u32 wow_seg_head(struct wow_cache *wc)
{
	return wc->segs->open;
}

void wow_seg_ckpt_info(struct wow_cache *wc, u32 s,
		       struct wow_ckpt_seg_info *si)
{
	struct wow_segment *seg = &wc->segs->table[s];

	si->seq = seg->seq;
	si->max_seq = seg->seq ? seg->max_seq : 0;
	si->wp = seg->seq ? seg->wp : 0;
	si->nr_tombs = seg->seq ? seg->nr_tombs : 0;
	si->closed = seg->seq && seg->state != WOW_SEG_FREE;
}

const struct wow_tomb_range *wow_seg_tombs(struct wow_cache *wc, u32 s,
					   u32 *n)
{
	*n = wc->segs->table[s].nr_tombs;
	return wc->segs->table[s].tombs;
}

void wow_seg_set_life(struct wow_cache *wc, u32 s, u64 seq, u64 max_seq,
		      u32 wp)
{
	struct wow_segment *seg = &wc->segs->table[s];

	seg->seq = seq;
	seg->max_seq = max_seq;
	seg->wp = wp;
	seg->open_time = jiffies;
}

void wow_seg_add_tombs(struct wow_cache *wc, u32 s,
		       const struct wow_tomb_range *t, u32 n)
{
	struct wow_segment *seg = &wc->segs->table[s];

	memcpy(seg->tombs + seg->nr_tombs, t, n * sizeof(*t));
	seg->nr_tombs += n;
}

u32 wow_seg_nr_free(struct wow_cache *wc)
{
	return wc->segs->nr_free;
}

enum wow_seg_state wow_seg_state(struct wow_cache *wc, u32 s)
{
	lockdep_assert_held(&wc->lock);
	return wc->segs->table[s].state;
}

u32 wow_seg_nr_dirty(struct wow_cache *wc, u32 s)
{
	lockdep_assert_held(&wc->lock);
	return wc->segs->table[s].nr_dirty;
}

u32 wow_seg_nr_bad(struct wow_cache *wc, u32 s)
{
	lockdep_assert_held(&wc->lock);
	return wc->segs->table[s].nr_bad;
}

bool wow_seg_cleanable(struct wow_cache *wc, u32 s)
{
	struct wow_segment *seg = &wc->segs->table[s];

	lockdep_assert_held(&wc->lock);
	return seg->state == WOW_SEG_CLOSED && !seg->nr_bad;
}

void wow_seg_usage(struct wow_cache *wc, u32 s, struct wow_seg_usage *u)
{
	struct wow_segment *seg = &wc->segs->table[s];
	u64 newest = max(seg->max_seq, seg->seq);

	lockdep_assert_held(&wc->lock);
	u->nr_dirty = seg->nr_dirty;
	u->age = wc->next_seq > newest ? wc->next_seq - newest : 0;
}

u32 wow_seg_oldest_cleanable(struct wow_cache *wc, u32 walk)
{
	struct wow_segment *seg;
	u32 n = 0;

	lockdep_assert_held(&wc->lock);
	list_for_each_entry(seg, &wc->segs->order, order) {
		if (seg->state == WOW_SEG_CLOSED && !seg->nr_bad)
			return seg - wc->segs->table;
		if (++n == walk)
			break;
	}
	return WOW_NO_SEG;
}

u64 wow_seg_max_seq(struct wow_cache *wc, u32 s)
{
	return wc->segs->table[s].max_seq;
}

void wow_seg_count(struct wow_cache *wc, u32 s, int valid, int dirty,
		   int bad)
{
	struct wow_segment *seg = &wc->segs->table[s];

	seg->nr_valid += valid;
	seg->nr_dirty += dirty;
	seg->nr_bad += bad;
}

/* ---- recovery ---- */

void wow_seg_new_life(struct wow_cache *wc, u32 s, u64 seq)
{
	struct wow_segment *seg = &wc->segs->table[s];

	seg->seq = seq;
	seg->max_seq = 0;
	seg->wp = 0;
	seg->nr_tombs = 0;
	seg->open_time = jiffies;
}

void wow_seg_set_written(struct wow_cache *wc, u32 s, u64 max_seq, u32 wp)
{
	wc->segs->table[s].max_seq = max_seq;
	wc->segs->table[s].wp = wp;
}

/* wow_tomb_prune_held's view of segment @s (recovering) */
static void seg_held(void *ctx, u32 s, struct wow_tomb_held *h)
{
	struct wow_cache *wc = ctx;
	struct wow_segment *seg = &wc->segs->table[s];

	h->tombs = seg->tombs;
	h->nr = &seg->nr_tombs;
	h->seg_seq = seg->seq;
}

/*
 * Drop tombstones no record on the device can need any more, and copies
 * of a tombstone that reclaim carried forward (the newest holder keeps
 * it), so segments whose tombstones all moved on are free again
 * (recovering; the rule is dm-wow-tombs.c's, the tools' too).
 */
int wow_seg_prune_tombs(struct wow_cache *wc)
{
	u64 min = wow_seg_min_disk_seq(wc);
	int r;

	r = wow_tomb_prune_held(wc->nr_segments, min, seg_held, wc);
	if (r)
		return r;
	/* the runtime's lower bound starts here (wow_seg_visit) */
	wow_life_pass_init(&wc->segs->life_pass, min_t(u64, min, wc->next_seq));
	return 0;
}

/* Segment @seg after a load (the rule is dm-wow-tombs.c's, the tools' too) */
static enum wow_seg_fate seg_fate(struct wow_segment *seg)
{
	return wow_seg_load_fate(seg->seq, seg->nr_valid, seg->nr_tombs);
}

/*
 * After a load (recovering): empty segments go on the free list first,
 * then dead ones (nothing current, no tombstone), oldest content first;
 * the rest are closed; then the write order.
 */
int wow_seg_load_done(struct wow_cache *wc)
{
	struct wow_segment *seg;
	u32 s;

	for (s = 0; s < wc->nr_segments; s++)
		if (seg_fate(&wc->segs->table[s]) == WOW_SEG_FATE_EMPTY)
			wow_seg_free_add(wc, s);
	for (s = 0; s < wc->nr_segments; s++) {
		seg = &wc->segs->table[s];
		switch (seg_fate(seg)) {
		case WOW_SEG_FATE_EMPTY:
			break;
		case WOW_SEG_FATE_DEAD:
			wow_seg_free_add(wc, s);
			break;
		case WOW_SEG_FATE_CLOSED:
			seg->state = WOW_SEG_CLOSED;
			break;
		}
	}
	return wow_seg_order_rebuild(wc);
}

/* Forget what a failed load built (recovering). */
void wow_seg_reset(struct wow_cache *wc)
{
	u32 s;

	for (s = 0; s < wc->nr_segments; s++) {
		struct wow_segment *seg = &wc->segs->table[s];

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
	INIT_LIST_HEAD(&wc->segs->free);
	INIT_LIST_HEAD(&wc->segs->drained);
	wow_life_pass_init(&wc->segs->life_pass, 0);
	INIT_LIST_HEAD(&wc->segs->order);
	wc->segs->lrw_cursor = WOW_NO_SLOT;
	wc->segs->nr_free = 0;
}

/* ---- the table ---- */

int wow_seg_alloc(struct wow_cache *wc)
{
	struct wow_segs *st;
	u32 i;

	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	wc->segs = st;
	st->table = vzalloc(array_size(wc->nr_segments, sizeof(*st->table)));
	st->changed = bitmap_alloc(wc->nr_segments, GFP_KERNEL);
	if (!st->table || !st->changed)
		return -ENOMEM;
	wow_seg_all_changed(wc);
	INIT_LIST_HEAD(&wc->segs->free);
	INIT_LIST_HEAD(&wc->segs->drained);
	INIT_LIST_HEAD(&wc->segs->order);
	wc->segs->lrw_cursor = WOW_NO_SLOT;
	for (i = 0; i < wc->nr_segments; i++) {
		INIT_LIST_HEAD(&wc->segs->table[i].list);
		INIT_LIST_HEAD(&wc->segs->table[i].order);
		atomic_set(&wc->segs->table[i].pins, 0);
	}
	wc->segs->open = WOW_NO_SEG;
	return 0;
}

void wow_seg_free(struct wow_cache *wc)
{
	struct wow_segs *st = wc->segs;
	u32 i;

	if (!st)
		return;
	if (st->table) {
		for (i = 0; i < wc->nr_segments; i++)
			kvfree(st->table[i].tombs);
		vfree(st->table);
	}
	bitmap_free(st->changed);
	kfree(st);
	wc->segs = NULL;
}

/* ---- the log's calls ---- */

u64 wow_seg_prev_seq(struct wow_cache *wc, u32 s)
{
	lockdep_assert_held(&wc->lock);
	return wc->segs->table[s].prev_seq;
}

bool wow_seg_head_reserved(struct wow_cache *wc)
{
	lockdep_assert_held(&wc->lock);
	if (wc->segs->open_reserved && wc->segs->nr_free > WOW_RESERVE_SEGMENTS)
		wc->segs->open_reserved = false;	/* the reserve is back */
	return wc->segs->open != WOW_NO_SEG && wc->segs->open_reserved;
}

bool wow_seg_room(struct wow_cache *wc, u32 nr)
{
	struct wow_segs *st = wc->segs;

	lockdep_assert_held(&wc->lock);
	return (st->open != WOW_NO_SEG &&
		wc->blocks_per_seg - st->table[st->open].wp >= nr) ||
	       st->nr_free > WOW_RESERVE_SEGMENTS +
			     DIV_ROUND_UP(nr, wc->blocks_per_seg);
}

void wow_seg_append(struct wow_cache *wc, u32 s, u32 n)
{
	lockdep_assert_held(&wc->lock);
	wc->segs->table[s].wp += n;
	wow_seg_changed(wc, s);
}

void wow_seg_record_done(struct wow_cache *wc, u32 s, u64 seq,
			 const struct wow_tomb *t, u32 n)
{
	struct wow_segment *seg = &wc->segs->table[s];
	u32 i;

	lockdep_assert_held(&wc->lock);
	seg->max_seq = seq;
	for (i = 0; i < n; i++) {
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
	wow_seg_changed(wc, s);
}

void wow_seg_pin(struct wow_cache *wc, u32 s)
{
	lockdep_assert_held(&wc->lock);
	atomic_inc(&wc->segs->table[s].pins);
}

bool wow_seg_unpin(struct wow_cache *wc, u32 s)
{
	return atomic_dec_and_test(&wc->segs->table[s].pins) &&
	       READ_ONCE(wc->segs->table[s].state) == WOW_SEG_DRAINING;
}

u32 wow_seg_retire_room(struct wow_cache *wc, u32 s)
{
	lockdep_assert_held(&wc->lock);
	return wc->segs->table[s].nr_valid + wc->segs->table[s].nr_tombs;
}

u32 wow_seg_live_tombs(struct wow_cache *wc, u32 s, u64 min_seq,
		       struct wow_tomb_range *to)
{
	struct wow_segment *seg = &wc->segs->table[s];
	u32 i, n = 0;

	lockdep_assert_held(&wc->lock);
	for (i = 0; i < seg->nr_tombs; i++)
		if (seg->tombs[i].t >= min_seq)
			to[n++] = seg->tombs[i];
	return n;
}

void wow_seg_freeing(struct wow_cache *wc, u32 s)
{
	lockdep_assert_held(&wc->lock);
	wc->segs->table[s].state = WOW_SEG_FREEING;
}

void wow_seg_reclose(struct wow_cache *wc, u32 s)
{
	lockdep_assert_held(&wc->lock);
	wc->segs->table[s].state = WOW_SEG_CLOSED;
}

void wow_seg_drain(struct wow_cache *wc, u32 s)
{
	lockdep_assert_held(&wc->lock);
	wc->segs->table[s].nr_tombs = 0;
	wc->segs->table[s].state = WOW_SEG_DRAINING;
	wow_seg_changed(wc, s);
}

bool wow_seg_drained_add(struct wow_cache *wc, u32 s)
{
	struct wow_segment *seg = &wc->segs->table[s];

	lockdep_assert_held(&wc->lock);
	if (seg->state != WOW_SEG_DRAINING)
		return false;
	if (list_empty(&seg->list))
		list_add_tail(&seg->list, &wc->segs->drained);
	return true;
}

u32 wow_seg_reap_drained(struct wow_cache *wc)
{
	struct wow_segment *seg, *tmp;
	u32 n = 0;

	lockdep_assert_held(&wc->lock);
	list_for_each_entry_safe(seg, tmp, &wc->segs->drained, list) {
		if (atomic_read(&seg->pins))
			continue;
		list_del_init(&seg->list);
		wow_seg_free_add(wc, seg - wc->segs->table);
		atomic64_inc(&wc->stats.reclaimed_segments);
		n++;
	}
	return n;
}

#if IS_ENABLED(CONFIG_DM_WOW_KUNIT_TEST)
/* the tests look inside the table: they live with it */
#include "tests/seg_kunit.c"
#endif
