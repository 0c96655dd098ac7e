/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow's log, as the other parts call it: the target (its lifecycle,
 * the write path, suspend), destage and cleaning.  Four files own it:
 * dm-wow-log.c (lifecycle, group commit, clean marks, the segments'
 * cleaning end), dm-wow-recover.c (format, load), dm-wow-ckptlog.c
 * (checkpoints) and dm-wow-seg.c (segments; its own header).
 *
 * Locking: wc->lock guards the log's state.  "Lock held" calls assert it;
 * "takes the lock" ones take it themselves (irqsave where the call comes
 * from bio completion); the others run where no worker of the log runs
 * (ctr, dtr, preresume, postsuspend) and say so.
 */
#ifndef DM_WOW_LOG_H
#define DM_WOW_LOG_H

#include "dm-wow.h"

/* ---- lifecycle (the target's ctr, dtr, preresume, postsuspend) ---- */

/* The superblock the constructor found, or the one format will write. */
void wow_log_set_sb(struct wow_cache *wc, const struct wow_sb_info *sb);

/*
 * The log's memory (segments, the index, the policy, the record buffer,
 * its bio_set) and its work items.  ctr; sleeps; -ENOMEM.  wow_log_free()
 * undoes it (dtr, or a failed ctr).
 */
int wow_log_alloc(struct wow_cache *wc);
void wow_log_free(struct wow_cache *wc);

/*
 * A fresh cache: write the superblock and the first checkpoint; every
 * segment is free.  ctr, before the device is live; sleeps.
 */
int wow_log_format(struct wow_cache *wc);

/*
 * Load the index and the segments: from the newest valid checkpoint and
 * the log after it along its chain, else from a scan of the whole log;
 * then a new checkpoint anchors the chain.  preresume, no worker running;
 * sleeps.  On failure nothing it built is kept (a retry starts over).
 */
int wow_log_recover(struct wow_cache *wc);

/*
 * Let the record in flight end and stop the pacing timer: no user bio is
 * in flight (postsuspend, dtr).  Sleeps.
 */
void wow_log_stop(struct wow_cache *wc);

/* ---- the write path (the target's map and end_io) ---- */

/*
 * Queue a write, a FLUSH (empty, or one the target took apart) or a
 * discard of cached blocks for the next record; the commit worker
 * completes the bio when it is durable (or fails it).  Take the lock
 * (irqsave); any context.
 */
void wow_log_queue_write(struct wow_cache *wc, struct bio *bio);
void wow_log_queue_flush(struct wow_cache *wc, struct bio *bio);
void wow_log_queue_discard(struct wow_cache *wc, struct bio *bio);

/*
 * A write that went around the cache completed on the origin: the next
 * FLUSH flushes the origin too.  From its completion; takes the lock.
 */
void wow_log_bypass_done(struct wow_cache *wc);

/*
 * Make every completed write durable (the cache device flushed if a
 * record completed since its last flush, the origin if writes went
 * around the cache).  Sleeps; takes the lock.
 */
int wow_log_commit(struct wow_cache *wc);

/* ---- suspend ---- */

/*
 * Withdraw cleaning's records not yet written: victims stay, copied
 * blocks stay where they are.  Takes the lock.
 */
void wow_log_cancel_metas(struct wow_cache *wc);

/*
 * At a clean shutdown, destage stopped: a record of clean marks for every
 * clean cached block, then a checkpoint (wow_log_checkpoint), so the next
 * load destages nothing twice and replays nothing.  Sleep.
 */
int wow_log_mark_clean(struct wow_cache *wc);
int wow_log_checkpoint(struct wow_cache *wc);

/* ---- destage ---- */

/*
 * Destage made the copy at @slot, of origin block @ob, durable on the
 * origin: it is clean, and a clean mark will say so.  Lock held.
 */
void wow_log_block_clean(struct wow_cache *wc, u32 slot, u64 ob);

/*
 * Blocks read from the cache for destage or cleaning, @n back to back in
 * @pages, from @slots (WOW_NO_SLOT: left out) for origin blocks @obs (NULL:
 * @first on): each still current, whose crc the index knows, is checked;
 * one that does not match is marked bad (never destaged or copied, reads
 * of it fail), named in the kernel log, and needs_check is latched.
 * @crcs: room for @n.  Returns how many were bad.  Takes the lock.
 */
u32 wow_log_check_blocks(struct wow_cache *wc, const u32 *slots,
			 const u64 *obs, u64 first, u32 n, struct page **pages,
			 u32 *crcs);

/*
 * The housekeeping tick: the rates pacing needs, clean marks that waited
 * long enough.  Takes the lock.
 */
void wow_log_tick(struct wow_cache *wc);

/*
 * A read from segment @s is in flight: the segment is not freed under it
 * until unpinned (a retired one may be freed then).  Lock held.
 */
void wow_log_pin(struct wow_cache *wc, u32 s);
void wow_log_unpin(struct wow_cache *wc, u32 s);

/* ---- cleaning: the segments' cleaning end ---- */

/* Cleaning's copy, read: append it to the log.  Takes the lock (irqsave). */
void wow_log_queue_copy(struct wow_cache *wc, struct wow_copy *c);

/* Take the copies the log is done with, for cleaning to free.  Lock held. */
void wow_log_take_copies_done(struct wow_cache *wc, struct list_head *done);

/*
 * Retire the closed victim @v, every block of it clean: FREEING while the
 * record of tombstones for its copies is written (none when it holds
 * nothing current), then DRAINING.  Takes the lock; may sleep (GFP_NOIO);
 * -ENOMEM: the next kick tries again.
 */
int wow_log_retire_seg(struct wow_cache *wc, u32 v);

/*
 * Has a retired segment's record been handed to the log, not yet written?
 * Exact under the lock; without it, for a wait's condition.
 */
bool wow_log_meta_inflight(struct wow_cache *wc);

/*
 * The retired @v goes on the free list once nothing pins it: true when
 * cleaning is done with it (freed, or left on the drained list for
 * wow_log_reap_drained, which frees those no pin holds and returns how
 * many).  Lock held.
 */
bool wow_log_free_seg(struct wow_cache *wc, u32 v);
u32 wow_log_reap_drained(struct wow_cache *wc);

#endif /* DM_WOW_LOG_H */
