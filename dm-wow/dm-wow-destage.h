/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow destage (dm-wow-destage.c): the rate, the runs, their cache reads
 * and origin writes, the origin flush, and the housekeeping tick that
 * adapts the thresholds.  Its state is opaque: struct wow_destage is
 * defined in dm-wow-destage.c alone; wc->destage points to it
 * (wow_destage_alloc) and the target goes through the calls below.
 *
 * What stays in struct wow_cache, and why: wc->stopped (destage writes it;
 * cleaning and the checkpoints read it under the lock, and they may not
 * call destage: calls go target -> destage -> clean -> log -> core),
 * wc->thresh (destage sets it from the watermark options and its tick
 * adapts it; the log's dirty pacing reads its high watermark, the status
 * line both) and wc->destage_work (the core's wow_kick() queues it, so
 * that the log, cleaning and the target wake destage without calling it).
 *
 * Locking: wc->lock guards the run lists and counts and the origin flush
 * state.  A call runs with the lock held, and asserts it, when its comment
 * says "lock held"; the others take it themselves.  Only the target calls
 * in; destage calls the log, cleaning, the core and the pure leaves.
 */
#ifndef DM_WOW_DESTAGE_H
#define DM_WOW_DESTAGE_H

#include "dm-wow.h"

struct wow_destage;

/*
 * The destage state, stopped, its run reserve sized from max_destage_ios
 * and max_destage_size, the thresholds (wc->thresh) from the watermark
 * options.  The constructor's (args parsed, before the workqueue
 * exists); GFP_KERNEL; -ENOMEM.  wow_destage_free() must follow, even on
 * failure.
 */
int wow_destage_alloc(struct wow_cache *wc);

/*
 * Free what wow_destage_alloc() took (or none, when it was not called);
 * destage is stopped and nothing is in flight (wow_destage_stop()).  May
 * sleep.
 */
void wow_destage_free(struct wow_cache *wc);

/*
 * Start destage, cleaning and the housekeeping tick (resume).  Takes the
 * lock; does not sleep.
 */
void wow_destage_start(struct wow_cache *wc);

/*
 * Stop starting destage runs and cleaning copies, stop the tick, and wait
 * until no run, cleaning record or copy is in flight (postsuspend, dtr).
 * Takes the lock; sleeps.
 */
void wow_destage_stop(struct wow_cache *wc);

/*
 * The thresholds (wc->thresh) start again from the watermark options in
 * wc->args, as wow_destage_alloc() set them: after a message changed a
 * tunable.  Lock held.
 */
void wow_destage_set_watermarks(struct wow_cache *wc);

/*
 * Destage runs in flight (reading the cache, writing the origin, or
 * waiting for the origin flush), for the status line.  Lock held.
 */
u32 wow_destage_inflight(struct wow_cache *wc);

/*
 * The open time (jiffies) of the oldest segment with dirty blocks, as the
 * last tick found it, for the status line.  Lock held.
 */
unsigned long wow_destage_oldest_dirty(struct wow_cache *wc);

#endif /* DM_WOW_DESTAGE_H */
