// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow tombstones: how long one is needed, and their envelope at
 * recovery.
 *
 * A tombstone (start, nr, t) kills records of its range with seq <= t.  It
 * is needed while a segment life that opened at a seq <= t may still be
 * found on the device by recovery: wow_seg_disk_seq() says which life that
 * is for a segment, wow_seg_min_disk_seq() (dm-wow-seg.c) takes the oldest.
 *
 * Recovery must know, for each recovered copy of origin block b, the
 * largest t over all tombstones (or clean marks) whose range covers b.
 * Checking every range against every block costs the product of their
 * numbers, and crafted (checksum-valid) records can make both large.  The
 * envelope turns any set of overlapping ranges into sorted, disjoint
 * pieces, each carrying the largest t of the ranges that cover it, in
 * O(n log n); a lookup is then a binary search.
 *
 * Pure: no locking, no allocation, no I/O.  KUnit drives it directly.
 */
#include "dm-wow-tombs.h"

/*
 * The oldest life of a segment that a power cut now could leave for
 * recovery to find.  @seq opened the segment's current life, @prev_seq the
 * life it replaced (0: none); until the new life's first record is durable
 * (@durable_seq >= @seq), block 0 may still hold the old life's header.
 * 0 when the segment never held a record.
 */
u64 wow_seg_disk_seq(u64 seq, u64 prev_seq, u64 durable_seq)
{
	if (prev_seq && durable_seq < seq)
		return prev_seq;
	return seq;
}

/*
 * The smallest open seq of any segment life still on the device, as a
 * power cut now would leave it: a reused segment's earlier life counts
 * until the new life's first record is durable.
 */
u64 wow_seg_min_life(u32 nr_segments, u64 durable_seq,
		     u64 (*life)(void *ctx, u32 s, u64 *prev_seq), void *ctx)
{
	u64 min = U64_MAX, seq, prev;
	u32 s;

	for (s = 0; s < nr_segments; s++) {
		prev = 0;
		seq = life(ctx, s, &prev);
		seq = wow_seg_disk_seq(seq, prev, durable_seq);
		if (seq && seq < min)
			min = seq;
	}
	return min;
}

/*
 * A segment after a load: free when it never held a record (empty) or
 * holds nothing a load needs (dead: no current block, no tombstone, so
 * reclaim has nothing to move out of it), else closed: it keeps its life
 * until reclaim empties it.
 */
enum wow_seg_fate wow_seg_load_fate(u64 seq, u64 nr_valid, u32 nr_tombs)
{
	if (!seq)
		return WOW_SEG_FATE_EMPTY;
	if (!nr_valid && !nr_tombs)
		return WOW_SEG_FATE_DEAD;
	return WOW_SEG_FATE_CLOSED;
}

/*
 * The runtime's bound of the oldest segment life (wow_seg_visit): a walk
 * visits the segments one by one, with the lock dropped between chunks,
 * so a pass reads each at a different time.  Its minimum is still never
 * above the true one once the pass ends: a segment's oldest life only
 * moves forward (wow_seg_disk_seq: the old life until the new one's first
 * record is durable, then the new), and a life opened after the pass began
 * has a seq at least the pass's first @next_seq, where the minimum
 * starts.  A bound too low keeps a tombstone longer; one too high would
 * drop a tombstone while a record it kills can still be found.  So a
 * published bound only rises.  @bound: where it starts (the exact
 * minimum at the load, or 0: keep every tombstone).
 */
void wow_life_pass_init(struct wow_life_pass *p, u64 bound)
{
	p->bound = bound;
	p->held = 0;
	p->pass_min = 0;
	p->pass_held = 0;
	p->seen = 0;
}

/*
 * Visit one segment of @nr_segments: @disk_seq its oldest life on the
 * device (0: none), @nr_tombs the tombstones it still holds; @next_seq
 * the log's next seq now.  True when the visit ended a pass, whose bound
 * and count are then published.
 */
bool wow_life_pass_visit(struct wow_life_pass *p, u32 nr_segments,
			 u64 next_seq, u64 disk_seq, u32 nr_tombs)
{
	if (!p->seen)
		p->pass_min = next_seq;
	if (disk_seq && disk_seq < p->pass_min)
		p->pass_min = disk_seq;
	p->pass_held += nr_tombs;
	if (++p->seen < nr_segments)
		return false;
	p->bound = max(p->bound, p->pass_min);
	p->held = p->pass_held;
	p->seen = 0;
	p->pass_held = 0;
	return true;
}

static int cmp_start(const void *a, const void *b)
{
	const struct wow_tomb_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static u64 range_end(const struct wow_tomb_range *r)
{
	return r->start + r->nr;
}

/* A max-heap of indices into @r, by t. */
static bool heap_above(const struct wow_tomb_range *r, u32 a, u32 b)
{
	return r[a].t > r[b].t;
}

static void heap_push(const struct wow_tomb_range *r, u32 *heap, u32 *h,
		      u32 idx)
{
	u32 i = (*h)++;

	while (i && heap_above(r, idx, heap[(i - 1) / 2])) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = idx;
}

static void heap_pop(const struct wow_tomb_range *r, u32 *heap, u32 *h)
{
	u32 last = heap[--(*h)], i = 0, c;

	while ((c = 2 * i + 1) < *h) {
		if (c + 1 < *h && heap_above(r, heap[c + 1], heap[c]))
			c++;
		if (!heap_above(r, heap[c], last))
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (*h)
		heap[i] = last;
}

/*
 * The envelope of @n ranges @r (sorted by start in place): at most 2 * @n
 * disjoint pieces in @out, ascending, each with the largest t of the
 * ranges covering it (flags from that range).  Ranges that are empty or
 * start past WOW_MAX_OBLOCK cover no block and are ignored.  @heap is
 * scratch for @n entries.  Returns the number of pieces.
 */
u32 wow_tomb_envelope(struct wow_tomb_range *r, u32 n,
		      struct wow_tomb_range *out, u32 *heap)
{
	u32 i = 0, h = 0, k = 0;
	u64 x = 0, next;

	sort(r, n, sizeof(*r), cmp_start, NULL);
	while (i < n || h) {
		if (!h)
			x = r[i].start;
		for (; i < n && r[i].start <= x; i++)
			if (r[i].nr && r[i].start <= WOW_MAX_OBLOCK)
				heap_push(r, heap, &h, i);
		while (h && range_end(&r[heap[0]]) <= x)
			heap_pop(r, heap, &h);
		if (!h)
			continue;
		next = range_end(&r[heap[0]]);
		if (i < n && r[i].start < next)
			next = r[i].start;
		if (k && range_end(&out[k - 1]) == x &&
		    out[k - 1].t == r[heap[0]].t &&
		    out[k - 1].flags == r[heap[0]].flags &&
		    out[k - 1].nr + (next - x) > out[k - 1].nr &&
		    out[k - 1].nr + (next - x) <= U32_MAX) {
			out[k - 1].nr += next - x;
		} else {
			out[k].start = x;
			out[k].nr = next - x;
			out[k].t = r[heap[0]].t;
			out[k].flags = r[heap[0]].flags;
			k++;
		}
		x = next;
	}
	return k;
}

/* The piece of envelope @env (@n pieces) covering block @b, or NULL. */
static int cmp_tomb_ref(const void *a, const void *b)
{
	const struct wow_tomb_ref *x = a, *y = b;

	if (x->tr->start != y->tr->start)
		return x->tr->start < y->tr->start ? -1 : 1;
	if (x->tr->nr != y->tr->nr)
		return x->tr->nr < y->tr->nr ? -1 : 1;
	if (x->tr->t != y->tr->t)
		return x->tr->t < y->tr->t ? -1 : 1;
	/* newest holder first */
	return x->seg_seq > y->seg_seq ? -1 : x->seg_seq < y->seg_seq;
}

void wow_tomb_prune(struct wow_tomb_ref *refs, u32 n, u64 min)
{
	u32 i;

	sort(refs, n, sizeof(*refs), cmp_tomb_ref, NULL);
	for (i = 0; i < n; i++)
		if (refs[i].tr->t < min ||
		    (i && !cmp_tomb_ref(&(struct wow_tomb_ref){ refs[i].tr, 0 },
					&(struct wow_tomb_ref){ refs[i - 1].tr, 0 })))
			refs[i].tr->flags |= WOW_TOMB_DROP;
}

int wow_tomb_prune_held(u32 nr_segments, u64 min,
			void (*held)(void *ctx, u32 s, struct wow_tomb_held *h),
			void *ctx)
{
	struct wow_tomb_ref *refs;
	struct wow_tomb_held h;
	u64 total = 0;
	u32 s, i, n;

	for (s = 0; s < nr_segments; s++) {
		held(ctx, s, &h);
		total += *h.nr;
	}
	refs = kvmalloc_array(max_t(u64, total, 1), sizeof(*refs), GFP_KERNEL);
	if (!refs)
		return -ENOMEM;
	n = 0;
	for (s = 0; s < nr_segments; s++) {
		held(ctx, s, &h);
		for (i = 0; i < *h.nr; i++) {
			refs[n].tr = &h.tombs[i];
			refs[n++].seg_seq = h.seg_seq;
		}
	}
	wow_tomb_prune(refs, n, min);
	kvfree(refs);

	for (s = 0; s < nr_segments; s++) {
		held(ctx, s, &h);
		for (i = 0, n = 0; i < *h.nr; i++)
			if (!(h.tombs[i].flags & WOW_TOMB_DROP))
				h.tombs[n++] = h.tombs[i];
		*h.nr = n;
	}
	return 0;
}

const struct wow_tomb_range *wow_tomb_find(const struct wow_tomb_range *env,
					   u32 n, u64 b)
{
	u32 lo = 0, hi = n;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (range_end(&env[mid]) <= b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && env[lo].start <= b ? &env[lo] : NULL;
}
