// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow destage policies: the write group bookkeeping they share, and the
 * three orders: wow (CSCAN over groups, sparing recently re-written groups
 * once), cscan (the same sweep without recency bits) and lrw (the group of
 * the least recently written dirty block first).  See dm-wow-policy.h.
 *
 * Locking: none; the caller serialises every call (dm-wow: wc->lock).
 */
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/slab.h>

#include "dm-wow-policy.h"

/* ---- one bit per origin group, in 1 MiB chunks ---- */

#define GBITS_CHUNK_SHIFT	23
#define GBITS_CHUNK		BIT_ULL(GBITS_CHUNK_SHIFT)

static void gbits_exit(struct wow_gbits *b)
{
	u32 i;

	for (i = 0; b->chunk && i < b->nr_chunks; i++)
		kvfree(b->chunk[i]);
	kvfree(b->chunk);
	b->chunk = NULL;
	b->nr_chunks = 0;
}

static int gbits_init(struct wow_gbits *b, u64 nr_bits)
{
	u32 i;

	b->nr_bits = nr_bits;
	b->nr_chunks = (nr_bits + GBITS_CHUNK - 1) >> GBITS_CHUNK_SHIFT;
	b->chunk = kvcalloc(b->nr_chunks, sizeof(*b->chunk), GFP_KERNEL);
	if (!b->chunk)
		return -ENOMEM;
	for (i = 0; i < b->nr_chunks; i++) {
		u64 bits = min(nr_bits - ((u64)i << GBITS_CHUNK_SHIFT),
			       GBITS_CHUNK);

		b->chunk[i] = kvcalloc(BITS_TO_LONGS(bits),
				       sizeof(unsigned long), GFP_KERNEL);
		if (!b->chunk[i])
			return -ENOMEM;
	}
	return 0;
}

static unsigned long *gbits_chunk(struct wow_gbits *b, u64 bit)
{
	return b->chunk[bit >> GBITS_CHUNK_SHIFT];
}

static bool gbits_test(struct wow_gbits *b, u64 bit)
{
	return test_bit(bit & (GBITS_CHUNK - 1), gbits_chunk(b, bit));
}

static bool gbits_test_and_set(struct wow_gbits *b, u64 bit)
{
	return __test_and_set_bit(bit & (GBITS_CHUNK - 1), gbits_chunk(b, bit));
}

static bool gbits_test_and_clear(struct wow_gbits *b, u64 bit)
{
	return __test_and_clear_bit(bit & (GBITS_CHUNK - 1),
				    gbits_chunk(b, bit));
}

/* The first set bit at or after @from, or b->nr_bits. */
static u64 gbits_next(struct wow_gbits *b, u64 from)
{
	while (from < b->nr_bits) {
		u64 base = from & ~(GBITS_CHUNK - 1);
		u64 len = min(b->nr_bits - base, GBITS_CHUNK);
		u64 n = find_next_bit(gbits_chunk(b, from), len, from - base);

		if (n < len)
			return base + n;
		from = base + len;
	}
	return b->nr_bits;
}

static void gbits_zero(struct wow_gbits *b)
{
	u32 i;

	for (i = 0; i < b->nr_chunks; i++)
		bitmap_zero(b->chunk[i],
			    min(b->nr_bits - ((u64)i << GBITS_CHUNK_SHIFT),
				GBITS_CHUNK));
}

/* ---- group nodes: busy groups ---- */

size_t wow_policy_group_bytes(const struct wow_policy *p)
{
	return sizeof(struct wow_group) +
	       BITS_TO_LONGS(p->blocks_per_group) * sizeof(unsigned long);
}

/* Bytes of the group bitmaps (for the status and the docs' arithmetic). */
size_t wow_policy_map_bytes(const struct wow_policy *p)
{
	return 2 * BITS_TO_LONGS(p->nr_gnos) * sizeof(unsigned long);
}

int wow_policy_init(struct wow_policy *p, const struct wow_policy_ops *ops,
		    u32 blocks_per_group, u64 nr_oblocks,
		    const struct wow_policy_src *src)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->ops = ops;
	p->src = *src;
	p->groups = RB_ROOT;
	INIT_LIST_HEAD(&p->spare);
	p->blocks_per_group = blocks_per_group;
	p->group_shift = ilog2(blocks_per_group);
	p->nr_gnos = max_t(u64, 1, (nr_oblocks + blocks_per_group - 1) >>
				   p->group_shift);
	r = gbits_init(&p->dirty, p->nr_gnos);
	if (!r)
		r = gbits_init(&p->recent, p->nr_gnos);
	if (r)
		wow_policy_exit(p);
	return r;
}

void wow_policy_exit(struct wow_policy *p)
{
	struct wow_group *g, *tmp;

	rbtree_postorder_for_each_entry_safe(g, tmp, &p->groups, node)
		kfree(g);
	p->groups = RB_ROOT;
	list_for_each_entry_safe(g, tmp, &p->spare, lru)
		kfree(g);
	INIT_LIST_HEAD(&p->spare);
	p->nr_spare = 0;
	gbits_exit(&p->dirty);
	gbits_exit(&p->recent);
}

u32 wow_policy_spares_wanted(const struct wow_policy *p, u32 n)
{
	return n > p->nr_spare ? n - p->nr_spare : 0;
}

void wow_policy_add_spare(struct wow_policy *p, struct wow_group *g)
{
	list_add(&g->lru, &p->spare);
	p->nr_spare++;
}

/* Move all but @keep spare groups to @out, for the caller to free. */
void wow_policy_trim_spares(struct wow_policy *p, u32 keep,
			    struct list_head *out)
{
	while (p->nr_spare > keep) {
		struct wow_group *g = list_first_entry(&p->spare,
						       struct wow_group, lru);

		list_move(&g->lru, out);
		p->nr_spare--;
	}
}

static struct wow_group *find_group(struct wow_policy *p, u64 gno)
{
	struct rb_node *n = p->groups.rb_node;

	while (n) {
		struct wow_group *g = rb_entry(n, struct wow_group, node);

		if (gno < g->gno)
			n = n->rb_left;
		else if (gno > g->gno)
			n = n->rb_right;
		else
			return g;
	}
	return NULL;
}

/* @gno's node, made from a spare if it has none (NULL: no spare). */
static struct wow_group *get_group(struct wow_policy *p, u64 gno)
{
	struct rb_node **link = &p->groups.rb_node, *parent = NULL;
	struct wow_group *g;

	while (*link) {
		parent = *link;
		g = rb_entry(parent, struct wow_group, node);
		if (gno < g->gno)
			link = &parent->rb_left;
		else if (gno > g->gno)
			link = &parent->rb_right;
		else
			return g;
	}
	if (list_empty(&p->spare))
		return NULL;
	g = list_first_entry(&p->spare, struct wow_group, lru);
	list_del(&g->lru);
	p->nr_spare--;

	memset(g, 0, wow_policy_group_bytes(p));
	g->gno = gno;
	INIT_LIST_HEAD(&g->lru);
	rb_link_node(&g->node, parent, link);
	rb_insert_color(&g->node, &p->groups);
	return g;
}

static void put_node(struct wow_policy *p, struct wow_group *g)
{
	rb_erase(&g->node, &p->groups);
	list_del(&g->lru);
	list_add(&g->lru, &p->spare);
	p->nr_spare++;
}

/* A node is kept while its group is busy. */
static void put_node_if_unused(struct wow_policy *p, struct wow_group *g)
{
	if (g && !g->nr_busy)
		put_node(p, g);
}

static u64 oblock_of(struct wow_policy *p, u64 gno, u32 bit)
{
	return (gno << p->group_shift) + bit;
}

static bool block_dirty(struct wow_policy *p, u64 gno, u32 bit)
{
	return p->src.dirty(p->src.ctx, oblock_of(p, gno, bit));
}

static bool block_busy(struct wow_group *g, u32 bit)
{
	return g && test_bit(bit, g->busy);
}

/* First block of @gno at or after @from that is dirty and not busy. */
static u32 next_eligible(struct wow_policy *p, u64 gno, struct wow_group *g,
			 u32 from)
{
	u32 bit;

	for (bit = from; bit < p->blocks_per_group; bit++)
		if (!block_busy(g, bit) && block_dirty(p, gno, bit))
			return bit;
	return p->blocks_per_group;
}

/*
 * @gno has no dirty block and none busy: it leaves the map (and its
 * recency bit and node go).  Called where a block may have stopped being
 * dirty; a bit left behind (the source changed without telling) is
 * cleared when the sweep finds the group empty.
 */
static void put_group(struct wow_policy *p, u64 gno, struct wow_group *g)
{
	if (g && g->nr_busy)
		return;
	if (next_eligible(p, gno, g, 0) < p->blocks_per_group)
		return;
	if (gbits_test_and_clear(&p->dirty, gno))
		p->nr_groups--;
	if (gbits_test_and_clear(&p->recent, gno))
		p->nr_recency--;
	if (gno == p->hand)
		p->hand_open = false;
	if (g)
		put_node(p, g);
}

/* @gno has a dirty block: it is on the map. */
static int get_dirty_group(struct wow_policy *p, u64 gno, bool *hit)
{
	if (WARN_ON_ONCE(gno >= p->nr_gnos))
		return -EINVAL;
	*hit = gbits_test(&p->dirty, gno);
	if (!*hit) {
		gbits_test_and_set(&p->dirty, gno);
		p->nr_groups++;
	}
	return 0;
}

/*
 * Blocks [@oblock, @oblock + @nr) were written and are dirty (the source
 * says so already).  One call per write request: the policy sees one
 * write per group it touches.  Takes no node: fails only on a block past
 * the origin.
 */
int wow_policy_note_write(struct wow_policy *p, u64 oblock, u32 nr,
			  bool sequential)
{
	while (nr) {
		u64 gno = oblock >> p->group_shift;
		u32 bit = oblock & (p->blocks_per_group - 1);
		u32 n = min(nr, p->blocks_per_group - bit);
		bool hit;
		int r;

		r = get_dirty_group(p, gno, &hit);
		if (r)
			return r;
		if (p->ops->note_write)
			p->ops->note_write(p, gno, hit, sequential);
		oblock += n;
		nr -= n;
	}
	return 0;
}

/*
 * A write of [@oblock, @oblock + @nr): the blocks its stream wrote before
 * it if it continues one of the streams in @s, that is, starts within
 * WOW_STREAM_SLACK blocks of where one ended (either side: writes of one
 * stream in flight together may be submitted a little out of order); 0 if
 * it starts a new one.  Either way the write's stream becomes the most
 * recent; a new stream pushes out the least recent.
 */
u64 wow_streams_note(struct wow_streams *s, u64 oblock, u32 nr)
{
	u64 end = oblock + nr, len = 0;
	bool found = false;
	u32 i;

	for (i = 0; i < s->nr && !found; i++)
		found = oblock + WOW_STREAM_SLACK >= s->end[i] &&
			oblock <= s->end[i] + WOW_STREAM_SLACK;
	if (found) {
		i--;
		end = max(end, s->end[i]);
		len = s->len[i];
	} else {
		if (s->nr < WOW_STREAMS)
			s->nr++;
		i = s->nr - 1;
	}
	memmove(&s->end[1], &s->end[0], i * sizeof(s->end[0]));
	memmove(&s->len[1], &s->len[0], i * sizeof(s->len[0]));
	s->end[0] = end;
	s->len[0] = len + nr;
	return len;
}

/* @oblock is dirty again without a write (a failed destage, recovery). */
int wow_policy_mark_dirty(struct wow_policy *p, u64 oblock)
{
	bool hit;

	return get_dirty_group(p, oblock >> p->group_shift, &hit);
}

/* @oblock's dirty copy is gone (discarded; the source no longer has it). */
void wow_policy_forget(struct wow_policy *p, u64 oblock)
{
	u64 gno = oblock >> p->group_shift;

	if (gno < p->nr_gnos && gbits_test(&p->dirty, gno))
		put_group(p, gno, find_group(p, gno));
}

/* Is a destage write of @oblock in flight? */
bool wow_policy_busy(struct wow_policy *p, u64 oblock)
{
	return block_busy(find_group(p, oblock >> p->group_shift),
			  oblock & (p->blocks_per_group - 1));
}

/* Mark @n blocks of @g busy from @bit. */
static void set_busy(struct wow_policy *p, struct wow_group *g, u32 bit,
		     u32 n)
{
	bitmap_set(g->busy, bit, n);
	g->nr_busy += n;
	p->nr_busy += n;
}

/* Hand out the eligible run of @gno starting at @bit, at most @max blocks. */
static u32 take_run(struct wow_policy *p, u64 gno, u32 bit, u32 max)
{
	struct wow_group *g = find_group(p, gno);
	u32 n = 0;

	while (n < max && bit + n < p->blocks_per_group &&
	       !block_busy(g, bit + n) && block_dirty(p, gno, bit + n))
		n++;
	if (!n)
		return 0;
	g = g ?: get_group(p, gno);
	if (!g)
		return 0;
	set_busy(p, g, bit, n);
	p->stats.runs++;
	p->stats.run_blocks += n;
	return n;
}

/*
 * The next run the policy wants destaged: contiguous dirty blocks inside
 * one group, at most @max.  Returns its length (0: nothing eligible, or no
 * spare node) and sets *start.  The blocks are busy until
 * wow_policy_run_done().
 */
u32 wow_policy_next_run(struct wow_policy *p, u64 *start, u32 max)
{
	u64 gno;
	u32 bit, n;

	if (!p->ops->pick(p, &gno))
		return 0;
	bit = p->hand_open && gno == p->hand ? p->hand_bit : 0;
	bit = next_eligible(p, gno, find_group(p, gno), bit);
	*start = oblock_of(p, gno, bit);
	n = take_run(p, gno, bit, max);
	if (n && p->ops->sweeps) {
		p->hand_open = true;
		p->hand_bit = bit + n;
	}
	return n;
}

/* Take the run starting exactly at @start out of order (reclaim). */
u32 wow_policy_claim(struct wow_policy *p, u64 start, u32 max)
{
	u64 gno = start >> p->group_shift;

	if (gno >= p->nr_gnos || !gbits_test(&p->dirty, gno))
		return 0;
	return take_run(p, gno, start & (p->blocks_per_group - 1), max);
}

/*
 * Take dirty @oblock away from destage while cleaning moves its copy: it
 * is busy, as in a run, until wow_policy_run_done() gives it back.  No run
 * is counted.  False if it is not dirty, busy already, or no spare node.
 */
bool wow_policy_hold(struct wow_policy *p, u64 oblock)
{
	u64 gno = oblock >> p->group_shift;
	u32 bit = oblock & (p->blocks_per_group - 1);
	struct wow_group *g;

	if (gno >= p->nr_gnos || !gbits_test(&p->dirty, gno))
		return false;
	g = find_group(p, gno);
	if (block_busy(g, bit) || !block_dirty(p, gno, bit))
		return false;
	g = g ?: get_group(p, gno);
	if (!g)
		return false;
	set_busy(p, g, bit, 1);
	return true;
}

/*
 * The destage of [@start, @start + @nr) is over, written or not (the
 * source already says which blocks stay dirty).
 */
void wow_policy_run_done(struct wow_policy *p, u64 start, u32 nr)
{
	u64 gno = start >> p->group_shift;
	struct wow_group *g = find_group(p, gno);
	u32 bit = start & (p->blocks_per_group - 1);
	u32 i;

	if (WARN_ON_ONCE(!g))
		return;
	for (i = 0; i < nr; i++) {
		if (WARN_ON_ONCE(!__test_and_clear_bit(bit + i, g->busy)))
			continue;
		g->nr_busy--;
		p->nr_busy--;
	}
	if (g->nr_busy)
		return;
	put_group(p, gno, g);
	g = find_group(p, gno);
	put_node_if_unused(p, g);
}

/*
 * The CSCAN sweep: from the hand, the first group with eligible blocks,
 * wrapping from the highest group to the lowest.  With @spare_recent, a
 * group whose recency bit is set has the bit cleared and is passed over
 * (WOW); a full turn with every bit cleared then finds a group.  The
 * group the hand is destaging (hand_open) is finished first, from
 * hand_bit up, and never passed over; blocks dirtied behind hand_bit
 * wait for the next turn.
 */
static bool sweep(struct wow_policy *p, bool spare_recent, u64 *gnop)
{
	u64 steps = 2 * p->nr_groups + 2;
	u64 gno = gbits_next(&p->dirty, p->hand);
	bool wrapped = false;

	if (p->hand_open && gno == p->hand) {
		if (next_eligible(p, gno, find_group(p, gno), p->hand_bit) <
		    p->blocks_per_group) {
			*gnop = gno;
			return true;
		}
		/* the group is done for this turn: on to the next one */
		p->hand_open = false;
		gno = gbits_next(&p->dirty, gno + 1);
	}
	while (steps--) {
		struct wow_group *g;

		if (gno >= p->nr_gnos) {
			gno = gbits_next(&p->dirty, 0);
			if (gno >= p->nr_gnos)
				return false;
			wrapped = true;
		}
		g = find_group(p, gno);
		if (next_eligible(p, gno, g, 0) < p->blocks_per_group) {
			if (!spare_recent || !gbits_test(&p->recent, gno)) {
				/* a new sweep starts only when the hand moves on */
				if (wrapped)
					p->stats.sweeps++;
				p->hand = gno;
				*gnop = gno;
				return true;
			}
			gbits_test_and_clear(&p->recent, gno);
			p->nr_recency--;
			p->stats.recency_skips++;
		} else {
			/* a bit left behind: the group is empty */
			put_group(p, gno, g);
		}
		gno = gbits_next(&p->dirty, gno + 1);
	}
	return false;
}

/* Start the counters over (the "clear_stats" message). */
void wow_policy_clear_stats(struct wow_policy *p)
{
	memset(&p->stats, 0, sizeof(p->stats));
}

/*
 * Drain mode (cleaner): everything is to be destaged, so skipping a
 * re-written group would only cost the sweep a second pass.  Entering it
 * clears every recency bit; while in it, writes set none.
 */
void wow_policy_set_drain(struct wow_policy *p, bool drain)
{
	p->drain = drain;
	if (!drain || !p->nr_recency)
		return;
	gbits_zero(&p->recent);
	p->nr_recency = 0;
}

void wow_thresholds_init(struct wow_thresholds *t, u32 low_pct, u32 high_pct)
{
	t->cfg_low = low_pct * 100;
	t->cfg_high = high_pct * 100;
	t->low = t->cfg_low;
	t->high = t->cfg_high;
}

/*
 * Destage writes to keep in flight at @occupancy_bp: none below the low
 * threshold, @max_ios at or above the high one, linear in between.
 */
u32 wow_rate(u64 occupancy_bp, const struct wow_thresholds *t, u32 max_ios)
{
	if (occupancy_bp >= t->high)
		return max_ios;
	if (occupancy_bp < t->low)
		return 0;
	return 1 + div64_u64((u64)(max_ios - 1) * (occupancy_bp - t->low),
			     t->high - t->low);
}

/*
 * Adapt the high threshold to the peak occupancy of the last period (the
 * WOW paper's scheme): the target is halfway between the configured high
 * threshold and a full cache.  A peak above the target lowers the high
 * threshold by the overshoot; a peak below the target raises it by 1%
 * towards the configured value.  High never drops below 10% of the cache;
 * low stays the configured gap under high.
 *
 * Not "a peak below the current high threshold": at saturation destage
 * runs at full rate from the high threshold up and dirty data settles
 * above it, so once one burst had lowered it, it never came back (seen:
 * 8 MiB caches held at 10% for a whole run after the fill overshot).
 */
void wow_thresholds_adapt(struct wow_thresholds *t, u32 peak_bp)
{
	u32 target = t->cfg_high + (10000 - t->cfg_high) / 2;
	u32 gap = t->cfg_high - t->cfg_low;

	if (peak_bp > target)
		t->high = t->high > WOW_MIN_HIGH_BP + (peak_bp - target) ?
			  t->high - (peak_bp - target) : WOW_MIN_HIGH_BP;
	else if (peak_bp < target)
		t->high = min(t->high + 100, t->cfg_high);
	t->high = max_t(u32, t->high, min_t(u32, WOW_MIN_HIGH_BP, t->cfg_high));
	t->low = t->high > gap ? t->high - gap : 0;
}

static void wow_note_write(struct wow_policy *p, u64 gno, bool hit,
			   bool sequential)
{
	if (hit && !sequential && !p->drain &&
	    !gbits_test_and_set(&p->recent, gno))
		p->nr_recency++;
}

/*
 * Sparing a recently written group pays when the write it waits for would
 * have made its destage wasted.  It does so even when the log is short of
 * space: cleaning copies a spared group's blocks forward, which costs
 * cache bandwidth, not origin seeks.
 */
static bool wow_pick(struct wow_policy *p, u64 *gno)
{
	return sweep(p, true, gno);
}

static bool cscan_pick(struct wow_policy *p, u64 *gno)
{
	return sweep(p, false, gno);
}

/*
 * The group of the least recently written dirty block that no destage or
 * copy holds.  The source (the log) gives the blocks in write order and
 * leaves out those it knows are held; a block rewritten while its old
 * copy is held is busy here until that destage ends, so a few more may be
 * asked for, as many as blocks are busy.
 */
static bool lrw_pick(struct wow_policy *p, u64 *gno)
{
	u64 pos = WOW_POLICY_OLDEST, ob, tries = p->nr_busy + 1;

	while (tries-- && p->src.older(p->src.ctx, &pos, &ob)) {
		u64 g = ob >> p->group_shift;

		if (g >= p->nr_gnos || !gbits_test(&p->dirty, g) ||
		    block_busy(find_group(p, g), ob & (p->blocks_per_group - 1)))
			continue;
		p->hand = g;
		*gno = g;
		return true;
	}
	return false;
}

const struct wow_policy_ops wow_policy_wow_ops = {
	.name = "wow",
	.note_write = wow_note_write,
	.pick = wow_pick,
	.sweeps = true,
};

const struct wow_policy_ops wow_policy_cscan_ops = {
	.name = "cscan",
	.pick = cscan_pick,
	.sweeps = true,
};

const struct wow_policy_ops wow_policy_lrw_ops = {
	.name = "lrw",
	.pick = lrw_pick,
};
