/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow segments (dm-wow-seg.c): the segment table's states, the free
 * list, the write order, the log head, and the tombstones segments hold.
 * The table is opaque: struct wow_segs and struct wow_segment are
 * defined in dm-wow-seg.c alone; wc->segs points to it (wow_seg_alloc)
 * and the other files go through the calls below.
 *
 * Locking: wc->lock guards all of it.  A call runs with the lock held,
 * and asserts it, unless its comment says "recovering" (called by
 * recovery and format only, before the device is live and any worker
 * runs: no lock) or "or recovering" (both: no assert), or that it takes
 * the lock itself.  None sleeps unless it says so.  The log's other parts
 * (dm-wow-log.c), cleaning, destage and the target call in; this part
 * calls only the index, the policy, the chain rule and the tombstones'
 * pure code.
 */
#ifndef DM_WOW_SEG_H
#define DM_WOW_SEG_H

#include "dm-wow.h"
#include "dm-wow-victim.h"

/* A segment's state (the diagram at the top of dm-wow-seg.c). */
enum wow_seg_state {
	WOW_SEG_FREE,		/* on the free list */
	WOW_SEG_OPEN,		/* the log head: records append here */
	WOW_SEG_CLOSED,		/* full or recovered: read and destaged */
	WOW_SEG_FREEING,	/* its tombstone record is being written */
	WOW_SEG_DRAINING,	/* waiting for reads to finish */
};

/* The slot of block @block of segment @seg. */
static inline u32 wow_seg_slot(struct wow_cache *wc, u32 seg, u32 block)
{
	return seg * wc->blocks_per_seg + block;
}

/*
 * The policy with its source, the log's write order (wow_policy_src):
 * wow_seg_oblock_dirty() says whether the current copy of origin block
 * @ob is dirty and not bad, lrw's walk follows the segments in seq order;
 * the policy calls them with the lock held or recovering.
 * wow_seg_policy_init(): recovering (wow_log_alloc, recovery's reset).
 */
bool wow_seg_oblock_dirty(void *ctx, u64 ob);
int wow_seg_policy_init(struct wow_cache *wc, const struct wow_policy_ops *ops);

/* The open time of the oldest segment with dirty blocks, jiffies if none. */
unsigned long wow_seg_oldest_dirty(struct wow_cache *wc);

/*
 * After a load: the write order, every segment with a life in seq order;
 * every segment counts as changed (wow_seg_changed).  Recovering;
 * allocates (GFP_KERNEL), -ENOMEM.
 */
int wow_seg_order_rebuild(struct wow_cache *wc);

/*
 * Segment @s is free: it leaves the write order and joins the free list's
 * tail.  Or recovering.
 */
void wow_seg_free_add(struct wow_cache *wc, u32 s);

/* The segment the log goes on in next (the free list's head), or WOW_NO_SEG. */
u32 wow_seg_next_free(struct wow_cache *wc);

/* Blocks new writes can still use: the free segments and the open tail. */
u64 wow_seg_free_blocks(struct wow_cache *wc);

/*
 * The smallest open seq of any segment life a power cut now would leave
 * on the device, exactly: walks every segment.  Or recovering (the
 * runtime uses wow_seg_min_disk_seq_bound(), O(1)).
 */
u64 wow_seg_min_disk_seq(struct wow_cache *wc);

/*
 * Make room for @more tombstones held by segment @s.  Takes the lock
 * itself; may sleep (GFP_NOIO); -ENOMEM.
 */
int wow_seg_reserve_tombs(struct wow_cache *wc, u32 s, u32 more);

/*
 * One step of the cleaner's walk over the segments: segment @s drops the
 * tombstones no record on the device can need (not while a checkpoint
 * reads the lists), and counts in the pass.  After each whole pass,
 * wow_seg_min_disk_seq_bound() is a lower bound of
 * wow_seg_min_disk_seq() and wow_seg_held_tombs() the tombstones held.
 */
void wow_seg_visit(struct wow_cache *wc, u32 s);
u64 wow_seg_min_disk_seq_bound(struct wow_cache *wc);
u64 wow_seg_held_tombs(struct wow_cache *wc);

/*
 * Segment @s's checkpoint entry (its seq, max_seq, wp, nr_tombs, or
 * whether it is free) has just changed: a background checkpoint copies
 * it again (wow_seg_next_changed).  Called after the change, so that a
 * snapshot that takes the bit reads the new entry or sees the bit again
 * next time.  Any context (an atomic bit); every segment starts changed.
 */
void wow_seg_changed(struct wow_cache *wc, u32 s);

/* Is segment @s marked changed (not taken since)?  Any context. */
bool wow_seg_is_changed(struct wow_cache *wc, u32 s);

/* Every segment counts as changed (a load rebuilt the table).  Or recovering. */
void wow_seg_all_changed(struct wow_cache *wc);

/*
 * The first segment from @s changed since it was last taken, its bit
 * cleared (taken), or U64_MAX.  The commit worker, between records (as
 * the checkpoint's snapshot reads the segments); no lock needed.
 */
u64 wow_seg_next_changed(struct wow_cache *wc, u64 s);

/* The open segment is closed if @need more blocks do not fit in it. */
void wow_seg_close_if_short(struct wow_cache *wc, u32 need);

/*
 * Are records of segment @s on the chain a load from the last checkpoint
 * (or the one before it) replays?  Then a new life there must wait for a
 * newer checkpoint.
 */
bool wow_seg_on_chain(struct wow_cache *wc, u32 s);

/*
 * The chain a load would replay (dm-wow-ckptlog.c's calls, lock held).
 * wow_seg_chain_start: a checkpoint with next_seq @seq and log head @head
 * is written; the one before it stays on the chain when @keep_prev (its
 * chain reaches the log head and a load may fall back to it), else it
 * leaves.  wow_seg_chain_clear: no checkpoint is valid (the next load
 * scans): any segment may be reopened, none waits.  wow_seg_has_chain:
 * a checkpoint is.
 */
void wow_seg_chain_start(struct wow_cache *wc, u64 seq, u32 head,
			 bool keep_prev);
void wow_seg_chain_clear(struct wow_cache *wc);
bool wow_seg_has_chain(struct wow_cache *wc);

/*
 * The next segment to open waits for a checkpoint (wow_seg_open found it
 * on the chain, or not the one the chain names): the commit worker writes
 * one (wow_seg_ckpt_wanted), and the checkpoint that starts the chain
 * where the log goes on says so (wow_seg_ckpt_met).  Lock held.
 */
bool wow_seg_ckpt_wanted(struct wow_cache *wc);
void wow_seg_ckpt_met(struct wow_cache *wc);

/*
 * A checkpoint reads the segments' tombstone lists (@hold) or is done:
 * wow_seg_visit does not compact them meanwhile.  Lock held.
 */
void wow_seg_hold_tombs(struct wow_cache *wc, bool hold);

/*
 * Open the free list's head as the log head for the record with seq
 * @seq; true when a segment is open (it may have been already).  False
 * when none may open: no free segment, only the reserve and not @reserve,
 * or the chain rule forbids the head (then wc->ckpt_wanted is set: a
 * checkpoint must come first).
 */
bool wow_seg_open(struct wow_cache *wc, bool reserve, u64 seq);

/* ---- what the other parts read and set of one segment ---- */

/*
 * Segment @s's open seq (0: no life on disk) and its write pointer (the
 * next block to write).  No assert: the lock held, or recovering, or the
 * commit worker reading its batch's segment while the record is in
 * flight (the log head: nothing else changes its seq then).
 */
u64 wow_seg_seq(struct wow_cache *wc, u32 s);
u32 wow_seg_wp(struct wow_cache *wc, u32 s);

/* The open segment (the log head), or WOW_NO_SEG.  Or recovering. */
u32 wow_seg_head(struct wow_cache *wc);

/*
 * What a checkpoint holds of segment @s, into @si.  No assert: the lock
 * held, or recovering, or the checkpoint's reader (the commit worker
 * between two records with ckpt_reading set: nothing it reads changes).
 */
void wow_seg_ckpt_info(struct wow_cache *wc, u32 s,
		       struct wow_ckpt_seg_info *si);

/*
 * The tombstones segment @s holds, @n of them; valid until the next
 * change to its list.  Locking as wow_seg_ckpt_info().
 */
const struct wow_tomb_range *wow_seg_tombs(struct wow_cache *wc, u32 s,
					   u32 *n);

/*
 * A load found segment @s's life: open seq @seq, newest record @max_seq,
 * written up to block @wp; its open time is now.  Recovering.
 */
void wow_seg_set_life(struct wow_cache *wc, u32 s, u64 seq, u64 max_seq,
		      u32 wp);

/*
 * Segment @s holds @n more tombstones, copied from @t; the room was
 * reserved first (wow_seg_reserve_tombs).  Recovering.
 */
void wow_seg_add_tombs(struct wow_cache *wc, u32 s,
		       const struct wow_tomb_range *t, u32 n);

/* Free segments (on the free list).  Or recovering. */
u32 wow_seg_nr_free(struct wow_cache *wc);

/*
 * Segment @s's state, and its counts of dirty and of bad slots (a bad
 * one never leaves: the segment is no victim).  Lock held.
 */
enum wow_seg_state wow_seg_state(struct wow_cache *wc, u32 s);
u32 wow_seg_nr_dirty(struct wow_cache *wc, u32 s);
u32 wow_seg_nr_bad(struct wow_cache *wc, u32 s);

/*
 * Cleaning's view of segment @s: may it be a victim (closed, no bad
 * block), and what would freeing it cost and gain (@u: its dirty blocks,
 * the records appended since its newest).  Lock held.
 */
bool wow_seg_cleanable(struct wow_cache *wc, u32 s);
void wow_seg_usage(struct wow_cache *wc, u32 s, struct wow_seg_usage *u);

/*
 * The oldest segment in write order that may be a victim, looking at
 * @walk segments at most, or WOW_NO_SEG.  Lock held.
 */
u32 wow_seg_oldest_cleanable(struct wow_cache *wc, u32 walk);

/* Segment @s's newest record (its life's).  Locking as wow_seg_seq(). */
u64 wow_seg_max_seq(struct wow_cache *wc, u32 s);

/*
 * Segment @s's slots: @valid more hold current copies, @dirty more of them
 * are dirty, @bad more do not match their crc (each may be negative).  Or
 * recovering.
 */
void wow_seg_count(struct wow_cache *wc, u32 s, int valid, int dirty,
		   int bad);

/*
 * Recovery's steps, in order (recovering, all of them): a replay that
 * finds a new life of segment @s begins it (wow_seg_new_life: its old
 * content and tombstones are gone) and applies its records
 * (wow_seg_set_written: written up to block @wp, newest record
 * @max_seq); once the index is counted (wow_seg_count), the tombstones
 * no record on the device needs go (wow_seg_prune_tombs: may sleep,
 * GFP_KERNEL, -ENOMEM; the walk's bound starts there), then every
 * segment is free or closed and the write order is rebuilt
 * (wow_seg_load_done: may sleep, GFP_KERNEL, -ENOMEM).  wow_seg_reset()
 * forgets it all after a failed load: every segment free and off every
 * list (its held tombstones' memory stays, for the next load).
 */
void wow_seg_new_life(struct wow_cache *wc, u32 s, u64 seq);
void wow_seg_set_written(struct wow_cache *wc, u32 s, u64 max_seq, u32 wp);
int wow_seg_prune_tombs(struct wow_cache *wc);
int wow_seg_load_done(struct wow_cache *wc);
void wow_seg_reset(struct wow_cache *wc);

/* ---- what the log asks of the segments ---- */

/*
 * The segment table for wc->nr_segments segments: every one free, on no
 * list yet (recovery or format puts them on the free list), and marked
 * changed; no log head.  Recovering (the constructor, through
 * wow_log_alloc); may sleep (GFP_KERNEL); -ENOMEM.  wow_seg_free() frees
 * what it allocated, also after it failed (wc->segs NULL: nothing); the
 * destructor, after the last I/O; may sleep.
 */
int wow_seg_alloc(struct wow_cache *wc);
void wow_seg_free(struct wow_cache *wc);

/*
 * The log wants space: cleaning runs, writes are paced.  Lock held (no
 * assert: an inline read of the count).
 */
static inline bool wow_log_short(struct wow_cache *wc)
{
	return wow_seg_nr_free(wc) < wow_reclaim_threshold(wc);
}

/*
 * The open segment's earlier life, recovery's to find until the new
 * life's first record is durable (0: none).  Lock held.
 */
u64 wow_seg_prev_seq(struct wow_cache *wc, u32 s);

/*
 * Is the log head reclaim's alone?  True while it came from the reserve
 * (only reclaim's records may fill it: writes wait), false when there is
 * no head.  The reserve coming back (more free segments than it) ends
 * that first.  Lock held.
 */
bool wow_seg_head_reserved(struct wow_cache *wc);

/*
 * Would @nr blocks fit at the log head, or in free segments past the
 * reserve?  Lock held.
 */
bool wow_seg_room(struct wow_cache *wc, u32 nr);

/*
 * A record of @n blocks (header and data) was laid at segment @s's write
 * pointer, which moves past it; the segment counts as changed.  Lock held.
 */
void wow_seg_append(struct wow_cache *wc, u32 s, u32 n);

/*
 * The record with seq @seq in segment @s finished: its newest record,
 * and the @n tombstones @t of the record it now holds (clean marks are
 * hints: never held; the room was reserved, wow_seg_reserve_tombs); the
 * segment counts as changed once, after both.  Lock held.
 */
void wow_seg_record_done(struct wow_cache *wc, u32 s, u64 seq,
			 const struct wow_tomb *t, u32 n);

/*
 * A read or a destage run from segment @s is in flight (lock held): the
 * segment is not freed under it.  wow_seg_unpin() ends it, in any
 * context; true when that was the last pin of a DRAINING segment (it may
 * be freed now: kick the worker).
 */
void wow_seg_pin(struct wow_cache *wc, u32 s);
bool wow_seg_unpin(struct wow_cache *wc, u32 s);

/*
 * Retiring a victim, @s, closed with every block clean (the state
 * diagram in dm-wow-seg.c).  wow_seg_retire_room(): the most tombstones
 * its record can need (its current copies and those it holds).
 * wow_seg_live_tombs(): copies to @to those it holds whose t is at or
 * above @min_seq (the oldest life on the device, or a lower bound of it:
 * the others can kill nothing there), returns how many.  wow_seg_freeing(): its
 * record is queued (FREEING).  wow_seg_reclose(): that record was
 * withdrawn or failed: CLOSED again.  wow_seg_drain(): its tombstones are
 * durable or none was needed; it holds none now (DRAINING).  All with the
 * lock held.
 */
u32 wow_seg_retire_room(struct wow_cache *wc, u32 s);
u32 wow_seg_live_tombs(struct wow_cache *wc, u32 s, u64 min_seq,
		       struct wow_tomb_range *to);
void wow_seg_freeing(struct wow_cache *wc, u32 s);
void wow_seg_reclose(struct wow_cache *wc, u32 s);
void wow_seg_drain(struct wow_cache *wc, u32 s);

/*
 * A DRAINING segment @s waits on the drained list for its pins to go:
 * true when it is DRAINING (then on that list), false otherwise.
 * wow_seg_reap_drained() frees those no pin holds any more, returns how
 * many.  Lock held.
 */
bool wow_seg_drained_add(struct wow_cache *wc, u32 s);
u32 wow_seg_reap_drained(struct wow_cache *wc);

#endif /* DM_WOW_SEG_H */
