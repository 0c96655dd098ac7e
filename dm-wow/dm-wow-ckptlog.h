/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow, the log's checkpoints (dm-wow-ckptlog.c): when one is due,
 * where it goes, what goes in, and the log's side of loading one.
 *
 * Called by the log's commit worker and its lifecycle (dm-wow-log.c) and
 * by recovery and format; it calls the segments (dm-wow-seg.h), the index
 * and the checkpoint I/O (dm-wow-checkpoint.c), never back into them.
 */
#ifndef DM_WOW_CKPTLOG_H
#define DM_WOW_CKPTLOG_H

#include "dm-wow.h"
#include "dm-wow-checkpoint.h"

/*
 * Slot table blocks a background checkpoint copies on write before it
 * takes them, at most (8 MiB of slots at 4 KiB blocks; a cache with fewer
 * blocks has room for all); more, and it is lost.
 */
#define WOW_CKPT_COW_BLOCKS	1024

/*
 * The checkpoints' state (struct wow_ckptlog, this part's alone:
 * wc->ckptlog), allocated at the constructor once the index is (its
 * tracks size it), freed at the destructor (also after a failed
 * allocation).  Sleep.
 */
int wow_ckptlog_alloc(struct wow_cache *wc);
void wow_ckptlog_free(struct wow_cache *wc);

/*
 * Wait for a checkpoint written in the background to end (none allocated:
 * nothing to wait for).  Sleeps.
 */
void wow_ckptlog_stop(struct wow_cache *wc);

/*
 * The commit worker appended @blocks of log (a record): a checkpoint is
 * due once the interval passes.  Lock held.
 */
void wow_ckptlog_logged(struct wow_cache *wc, u64 blocks);

/* A checkpoint is being written in the background.  Lock held. */
bool wow_ckptlog_busy(struct wow_cache *wc);

/*
 * Recovering.  wow_ckptlog_none: format, no checkpoint on disk is valid
 * yet (the first goes to area 0).  wow_ckptlog_forget: the index was
 * rebuilt empty, so nothing is known of what either area holds (the next
 * checkpoint in each is written whole) and none was loaded.
 * wow_ckptlog_loaded: the last load read a checkpoint.
 */
void wow_ckptlog_none(struct wow_cache *wc);
void wow_ckptlog_forget(struct wow_cache *wc);
bool wow_ckptlog_loaded(struct wow_cache *wc);

/*
 * Recovering: read the newest valid checkpoint (of the two areas in
 * format version 4) into the index and the segments, and make its area
 * the current one.  0: loaded, @ci says what it holds.  -ENOENT (version
 * 1) or a header's error: none to load, nothing changed.  -ENOMEM.
 * Another error with *@touched set: the read failed part way, after it
 * filled some of the index and the segments: the caller empties them
 * (and calls wow_ckptlog_forget) and scans the log.  Adds what it read
 * to wc->load_bytes.  Sleeps.
 */
int wow_ckptlog_load(struct wow_cache *wc, struct wow_ckpt_info *ci,
		     bool *touched);

/*
 * Write a checkpoint of the log as it stands, and wait for it: the caller
 * holds the next record back (the commit worker) or the log is stopped
 * (suspend, format, the end of a load).  Takes the checkpoint mutex;
 * sleeps.
 * @say: log it; @epoch: a new epoch starts (format, load), no older
 * checkpoint's chain leads on.  0, or the error that latched the state.
 */
int wow_ckptlog_write(struct wow_cache *wc, bool say, bool epoch);

/*
 * No checkpoint fits where the chain must start again: the areas' headers
 * are rewritten not valid, so the next load scans the log.  Sleeps.
 */
int wow_ckptlog_retire(struct wow_cache *wc);

/*
 * Format version 4, after the checkpoint of a format or a load: write the
 * other area too when nothing is known of it.  Sleeps.
 */
int wow_ckptlog_know_both(struct wow_cache *wc);

/*
 * The commit worker, no record in flight: take a checkpoint when one is
 * due (the interval passed, or the chain rule wants one), in the
 * background when it can.  Sleeps; -ENOMEM when it could not start.
 */
int wow_ckptlog_periodic(struct wow_cache *wc);

#endif /* DM_WOW_CKPTLOG_H */
