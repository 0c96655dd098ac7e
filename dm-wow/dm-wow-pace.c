// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow write pacing: how fast the log admits new data when space runs
 * short.
 *
 * Without pacing, writes take free space as fast as they come until none
 * is left, then every writer waits for the next segment that cleaning or
 * destage frees: some writes wait for a whole segment's worth of origin
 * I/O while the rest pass at once.  With it, once free space falls below
 * a start level the log admits data at a rate tied to the rate space is
 * being freed, so every write waits a little instead:
 *
 *	free >= start		no limit
 *	reserve < free < start	freed_rate * (1 + 3x),  x = (free - reserve) /
 *				(start - reserve), and at least the margin
 *				(free - reserve) * x per second
 *	free <= reserve		nothing (the reserve is cleaning's own)
 *
 * At the start level writes may run at four times the rate space comes
 * back; near the reserve they run at that rate, so free space settles
 * above the reserve instead of hitting it.  The floor keeps a cache whose
 * freed rate is not known yet (nothing freed so far) from stalling while
 * it still has space.  Admission is a token bucket: tokens accrue at the
 * rate, at most a burst of 1/16 s (and never less than the write asking).
 *
 * Dirty pacing holds new dirty data to the rate destage cleans it.  Free
 * space alone starts pacing too late: a log whose segments are mostly
 * dirty frees a segment only by copying most of it, so once the fill has
 * outrun destage, cleaning cannot catch up and writes stall until destage
 * has drained the cache (seen: 85% dirty in 3 s, then 70 s of stall).  So
 * once dirty occupancy reaches the high watermark, blocks that become
 * dirty (rewrites of dirty blocks are free) are admitted at
 *
 *	occupancy < high		no limit
 *	high <= occupancy < high + span	cleaned_rate * (4 - 3.5 y),
 *					y = (occupancy - high) / span
 *	occupancy >= high + span	cleaned_rate / 2
 *
 * and never below WOW_PACE_DIRTY_FLOOR blocks per second, so occupancy
 * settles where the two rates meet, 6/7 of the span above high (the
 * oldest segments stay clean, and cleaning them costs no copies).
 *
 * Pure arithmetic on plain numbers (nanoseconds and blocks): no locking,
 * no clock, no I/O.  KUnit drives it.
 */
#include "dm-wow.h"
#include "dm-wow-pace.h"

#define NSEC	1000000000ULL
/* Tokens are counted in 1/2^10 of a block. */
#define TOKEN_SHIFT	10

u64 wow_pace_rate(u64 free, u64 reserve, u64 start, u64 freed_rate)
{
	u64 margin, x, rate, floor;

	if (free >= start)
		return WOW_PACE_UNLIMITED;
	if (free <= reserve)
		return 0;
	margin = free - reserve;
	/* x in 1/1024; start > free > reserve, so start > reserve */
	x = div64_u64(margin << 10, start - reserve);
	rate = freed_rate > (U64_MAX >> 13) ? U64_MAX >> 3 :
	       (freed_rate * (1024 + 3 * x)) >> 10;
	floor = (margin * x) >> 10;
	return max3(rate, floor, 1ULL);
}

u64 wow_pace_dirty_rate(u32 occ_bp, u32 high_bp, u32 span_bp,
			u64 cleaned_rate)
{
	u64 y, rate;

	if (occ_bp < high_bp)
		return WOW_PACE_UNLIMITED;
	/* y in 1/1024 of the span */
	y = span_bp && occ_bp - high_bp < span_bp ?
	    div_u64((u64)(occ_bp - high_bp) << 10, span_bp) : 1024;
	cleaned_rate = min(cleaned_rate, 1ULL << 40);
	/* (4 - 3.5 y) in 1/2048: 8192 - 7 y */
	rate = (cleaned_rate * (8192 - 7 * y)) >> 11;
	return max_t(u64, rate, WOW_PACE_DIRTY_FLOOR);
}

void wow_pace_init(struct wow_pace *p)
{
	p->freed_rate = 0;
	p->tokens = 0;
	p->last_ns = 0;
}

/* @freed blocks came free over the last @elapsed_ns. */
void wow_pace_sample(struct wow_pace *p, u64 freed, u64 elapsed_ns)
{
	u64 inst;

	if (!elapsed_ns)
		return;
	freed = min(freed, 1ULL << 32);
	elapsed_ns = max(elapsed_ns, 1000ULL);
	inst = div64_u64(freed * NSEC, elapsed_ns);
	p->freed_rate = p->freed_rate ? (3 * p->freed_rate + inst) / 4 : inst;
}

/* @n blocks admitted by wow_pace_admit() did not go in after all. */
void wow_pace_refund(struct wow_pace *p, u32 n)
{
	p->tokens += (u64)n << TOKEN_SHIFT;
}

/*
 * Accrue tokens up to @now_ns at @rate and say whether @n blocks' worth
 * is there; if not, *@wait_ns is how long until it is, or 0 when the rate
 * is zero (wait until space is freed).
 */
static bool accrue(struct wow_pace *p, u32 n, u64 rate, u64 now_ns,
		   u64 *wait_ns)
{
	u64 want = (u64)n << TOKEN_SHIFT, burst, dt, add;

	*wait_ns = 0;
	if (rate == WOW_PACE_UNLIMITED) {
		p->tokens = 0;
		p->last_ns = now_ns;
		return true;
	}
	burst = max((rate << TOKEN_SHIFT) / 16, want);
	dt = now_ns > p->last_ns ? min(now_ns - p->last_ns, NSEC) : 0;
	p->last_ns = max(now_ns, p->last_ns);
	/* dt <= 2^30 ns: a rate capped at 2^32 keeps the product in range */
	add = div64_u64(min(rate, 1ULL << 32) * dt, NSEC >> TOKEN_SHIFT);
	p->tokens = min(p->tokens + add, burst);
	if (p->tokens >= want)
		return true;
	if (rate)
		*wait_ns = div64_u64((want - p->tokens) * (NSEC >> TOKEN_SHIFT),
				     rate) + 1;
	return false;
}

/*
 * May @n blocks be admitted at @now_ns, at @rate blocks per second, once
 * @batch blocks' worth has accrued (the first write of a paced record
 * waits for a batch; the others ask for their own blocks)?  If so they
 * take their @n tokens; if not, *@wait_ns is how long until they may, or
 * 0 when the rate is zero (wait until space is freed).
 */
bool wow_pace_admit_batch(struct wow_pace *p, u32 n, u32 batch, u64 rate,
			  u64 now_ns, u64 *wait_ns)
{
	if (!accrue(p, max(n, batch), rate, now_ns, wait_ns))
		return false;
	if (rate != WOW_PACE_UNLIMITED)
		p->tokens -= (u64)n << TOKEN_SHIFT;
	return true;
}

bool wow_pace_admit(struct wow_pace *p, u32 n, u64 rate, u64 now_ns,
		    u64 *wait_ns)
{
	return wow_pace_admit_batch(p, n, n, rate, now_ns, wait_ns);
}

/*
 * The blocks a paced record waits for: a burst's worth (1/16 s at @rate),
 * or all of the @queued blocks when fewer, so that paced writes go in as
 * records of many writes, not one header per write; never fewer than the
 * @first write needs.
 */
u32 wow_pace_batch(u64 rate, u64 queued, u32 first)
{
	if (rate == WOW_PACE_UNLIMITED)
		return max(first, 1U);
	return clamp_t(u64, max_t(u64, min(rate / 16, queued), first), 1,
		       U32_MAX);
}
