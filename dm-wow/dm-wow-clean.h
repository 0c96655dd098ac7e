/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow cleaning (dm-wow-clean.c): the victim, its dirty blocks copied
 * forward (struct wow_copy), and the log asked to retire and free it.
 * Its state is opaque: struct wow_clean is defined in dm-wow-clean.c
 * alone; wc->clean points to it (wow_clean_alloc) and the others go
 * through the calls below.
 *
 * Locking: wc->lock guards the victim, the copy counts and lists.  A call
 * runs with the lock held, and asserts it, when its comment says "lock
 * held"; the others take it themselves.  The target (alloc, free) and
 * destage (the worker runs cleaning; the rate and suspend ask it) call
 * in; cleaning calls the log, the segments, the core and the pure leaves,
 * and wakes the worker with wow_kick(), never calling destage.
 */
#ifndef DM_WOW_CLEAN_H
#define DM_WOW_CLEAN_H

#include "dm-wow.h"

struct wow_clean;

/*
 * Cleaning's state, no victim, and its reserve of WOW_CLEAN_COPIES copy
 * structs of a record's worth (max_record_blocks: after wow_log_alloc).
 * The constructor's; GFP_KERNEL; -ENOMEM.  wow_clean_free() must follow,
 * even on failure.
 */
int wow_clean_alloc(struct wow_cache *wc);

/*
 * Free what wow_clean_alloc() took (or none, when it was not called); no
 * copy is in flight (wow_destage_stop()).
 */
void wow_clean_free(struct wow_cache *wc);

/*
 * One step of cleaning: check the copies read and queue them to the log,
 * free those it handed back, free a victim whose record is done, pick a
 * victim (at most once a jiffy) while the log is short, and start a copy.
 * The destage worker's; takes the lock itself and yields between chunks
 * of the victim scan (cond_resched).
 */
void wow_clean(struct wow_cache *wc);

/*
 * Free the copies the log handed back (written, left out or failed); a
 * failed read fails the cache (wow_error).  Returns how many were freed
 * and, when any, wakes wc->idle_wait.  Process context; takes the lock.
 */
u32 wow_clean_free_done(struct wow_cache *wc);

/*
 * Is the log short of space that cleaning cannot free cheaply (the last
 * victim scan found no segment lazy recycling allows)?  Then destage runs
 * at full rate.  Lock held.
 */
bool wow_clean_starved(struct wow_cache *wc);

/*
 * Copies in flight (reading the cache, or queued to the log), read once
 * without the lock: for suspend's wait on wc->idle_wait
 * (wow_destage_stop()), which copies_done and freeing wake.  Any context.
 */
u32 wow_clean_inflight(struct wow_cache *wc);

#endif /* DM_WOW_CLEAN_H */
