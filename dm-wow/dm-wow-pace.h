/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow write pacing (dm-wow-pace.c): how fast the log admits new data
 * when free space runs short, and new dirty data once the cache is dirty
 * past its high watermark (the formulas are drawn at the top of
 * dm-wow-pace.c).  Pure arithmetic on plain numbers (nanoseconds, blocks,
 * basis points): no lock of its own, no clock, no I/O.  The log keeps a
 * struct wow_pace per kind and calls these under wc->lock.
 */
#ifndef DM_WOW_PACE_H
#define DM_WOW_PACE_H

#include "dm-wow.h"

#define WOW_PACE_UNLIMITED	U64_MAX

/* A token bucket, and the rate space comes back at. */
struct wow_pace {
	u64 freed_rate;		/* blocks per second freed or cleaned (EWMA) */
	u64 tokens;		/* in 1/1024 of a block */
	u64 last_ns;		/* when tokens last accrued */
};

/* Dirty pacing: its span above the high watermark, its least rate. */
#define WOW_PACE_DIRTY_SPAN_BP	500U
#define WOW_PACE_DIRTY_FLOOR	8U

/*
 * The admission rate in blocks per second with @free blocks free:
 * WOW_PACE_UNLIMITED at or above @start, 0 at or below @reserve, and
 * between them from four times @freed_rate down to it.
 */
u64 wow_pace_rate(u64 free, u64 reserve, u64 start, u64 freed_rate);

/*
 * The rate new dirty blocks are admitted at with dirty occupancy @occ_bp
 * (basis points): unlimited below @high_bp, then from four times
 * @cleaned_rate down to half of it over @span_bp, never below
 * WOW_PACE_DIRTY_FLOOR.
 */
u64 wow_pace_dirty_rate(u32 occ_bp, u32 high_bp, u32 span_bp,
			u64 cleaned_rate);

/* An empty bucket, no rate known. */
void wow_pace_init(struct wow_pace *p);

/* @n blocks admitted did not go in after all: their tokens come back. */
void wow_pace_refund(struct wow_pace *p, u32 n);

/* @freed blocks came free over the last @elapsed_ns (the EWMA's sample). */
void wow_pace_sample(struct wow_pace *p, u64 freed, u64 elapsed_ns);

/*
 * May @n blocks go in at @now_ns at @rate blocks per second (once @batch
 * blocks' worth has accrued, for wow_pace_admit_batch)?  If so they take
 * their tokens; if not, *@wait_ns is how long until they may, or 0 when
 * the rate is 0 (wait until space is freed).
 */
bool wow_pace_admit(struct wow_pace *p, u32 n, u64 rate, u64 now_ns,
		    u64 *wait_ns);
bool wow_pace_admit_batch(struct wow_pace *p, u32 n, u32 batch, u64 rate,
			  u64 now_ns, u64 *wait_ns);

/*
 * The blocks a paced record waits for: 1/16 s at @rate, or the @queued
 * blocks when fewer, never fewer than the @first write needs.
 */
u32 wow_pace_batch(u64 rate, u64 queued, u32 first);

#endif /* DM_WOW_PACE_H */
