// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow destage policies: the write group bookkeeping they share, and the
 * three orders: wow (CSCAN over groups, sparing recently re-written groups
 * once), cscan (the same sweep without recency bits) and lrw (least recently
 * written group first).  See dm-wow-policy.h.
 */
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/slab.h>

#include "dm-wow-policy.h"

static unsigned long *dirty_bits(struct wow_group *g)
{
	return g->bits;
}

static unsigned long *busy_bits(struct wow_policy *p, struct wow_group *g)
{
	return g->bits + BITS_TO_LONGS(p->blocks_per_group);
}

size_t wow_policy_group_bytes(const struct wow_policy *p)
{
	return sizeof(struct wow_group) +
	       2 * BITS_TO_LONGS(p->blocks_per_group) * sizeof(unsigned long);
}

void wow_policy_init(struct wow_policy *p, const struct wow_policy_ops *ops,
		     u32 blocks_per_group)
{
	memset(p, 0, sizeof(*p));
	p->ops = ops;
	p->groups = RB_ROOT;
	INIT_LIST_HEAD(&p->lru);
	INIT_LIST_HEAD(&p->spare);
	p->blocks_per_group = blocks_per_group;
	p->group_shift = ilog2(blocks_per_group);
}

void wow_policy_exit(struct wow_policy *p)
{
	struct wow_group *g, *tmp;

	rbtree_postorder_for_each_entry_safe(g, tmp, &p->groups, node)
		kfree(g);
	p->groups = RB_ROOT;
	INIT_LIST_HEAD(&p->lru);
	list_for_each_entry_safe(g, tmp, &p->spare, lru)
		kfree(g);
	INIT_LIST_HEAD(&p->spare);
	p->nr_spare = 0;
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

/* The first group with gno >= @gno, or NULL. */
static struct wow_group *lower_bound(struct wow_policy *p, u64 gno)
{
	struct rb_node *n = p->groups.rb_node;
	struct wow_group *best = NULL;

	while (n) {
		struct wow_group *g = rb_entry(n, struct wow_group, node);

		if (g->gno >= gno) {
			best = g;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return best;
}

static struct wow_group *next_group(struct wow_group *g)
{
	struct rb_node *n = rb_next(&g->node);

	return n ? rb_entry(n, struct wow_group, node) : NULL;
}

static struct wow_group *first_group(struct wow_policy *p)
{
	struct rb_node *n = rb_first(&p->groups);

	return n ? rb_entry(n, struct wow_group, node) : NULL;
}

static struct wow_group *get_group(struct wow_policy *p, u64 gno, bool *hit)
{
	struct rb_node **link = &p->groups.rb_node, *parent = NULL;
	struct wow_group *g;

	while (*link) {
		parent = *link;
		g = rb_entry(parent, struct wow_group, node);
		if (gno < g->gno) {
			link = &parent->rb_left;
		} else if (gno > g->gno) {
			link = &parent->rb_right;
		} else {
			*hit = true;
			return g;
		}
	}
	*hit = false;
	if (list_empty(&p->spare))
		return NULL;
	g = list_first_entry(&p->spare, struct wow_group, lru);
	list_del(&g->lru);
	p->nr_spare--;

	memset(g, 0, wow_policy_group_bytes(p));
	g->gno = gno;
	rb_link_node(&g->node, parent, link);
	rb_insert_color(&g->node, &p->groups);
	list_add_tail(&g->lru, &p->lru);
	p->nr_groups++;
	return g;
}

static void put_group_if_idle(struct wow_policy *p, struct wow_group *g)
{
	if (g->nr_dirty || g->nr_busy)
		return;
	if (g->recency)
		p->nr_recency--;
	rb_erase(&g->node, &p->groups);
	list_move(&g->lru, &p->spare);
	p->nr_spare++;
	p->nr_groups--;
}

static bool set_dirty(struct wow_policy *p, struct wow_group *g, u32 bit)
{
	if (__test_and_set_bit(bit, dirty_bits(g)))
		return false;
	g->nr_dirty++;
	p->nr_dirty++;
	return true;
}

/*
 * Blocks [@oblock, @oblock + @nr) were written and are dirty.  One call per
 * write request: the policy sees one write per group it touches.  Fails
 * only when the caller did not refill enough spare groups.
 */
int wow_policy_note_write(struct wow_policy *p, u64 oblock, u32 nr,
			  bool sequential)
{
	while (nr) {
		u64 gno = oblock >> p->group_shift;
		u32 bit = oblock & (p->blocks_per_group - 1);
		u32 n = min(nr, p->blocks_per_group - bit);
		struct wow_group *g;
		bool hit;
		u32 i;

		g = get_group(p, gno, &hit);
		if (!g)
			return -ENOMEM;
		for (i = 0; i < n; i++)
			set_dirty(p, g, bit + i);
		g->last_write = ++p->clock;
		list_move_tail(&g->lru, &p->lru);
		if (p->ops->note_write)
			p->ops->note_write(p, g, hit, sequential);
		oblock += n;
		nr -= n;
	}
	return 0;
}

/* Make @oblock dirty again without counting a write (retry, recovery). */
int wow_policy_mark_dirty(struct wow_policy *p, u64 oblock)
{
	struct wow_group *g;
	bool hit;

	g = get_group(p, oblock >> p->group_shift, &hit);
	if (!g)
		return -ENOMEM;
	set_dirty(p, g, oblock & (p->blocks_per_group - 1));
	return 0;
}

/* @oblock is no longer dirty (discarded): stop tracking it. */
void wow_policy_forget(struct wow_policy *p, u64 oblock)
{
	struct wow_group *g = find_group(p, oblock >> p->group_shift);
	u32 bit = oblock & (p->blocks_per_group - 1);

	if (!g || !__test_and_clear_bit(bit, dirty_bits(g)))
		return;
	g->nr_dirty--;
	p->nr_dirty--;
	put_group_if_idle(p, g);
}

/* Is a destage write of @oblock in flight? */
bool wow_policy_busy(struct wow_policy *p, u64 oblock)
{
	struct wow_group *g = find_group(p, oblock >> p->group_shift);

	return g && test_bit(oblock & (p->blocks_per_group - 1),
			     busy_bits(p, g));
}

/* First block of @g at or after @from that is dirty and not busy. */
static u32 next_eligible(struct wow_policy *p, struct wow_group *g, u32 from)
{
	u32 bit = from;

	while (true) {
		bit = find_next_bit(dirty_bits(g), p->blocks_per_group, bit);
		if (bit >= p->blocks_per_group || !test_bit(bit, busy_bits(p, g)))
			return bit;
		bit++;
	}
}

static bool has_eligible(struct wow_policy *p, struct wow_group *g)
{
	return g->nr_dirty && next_eligible(p, g, 0) < p->blocks_per_group;
}

/* Hand out the eligible run of @g starting at @bit, at most @max blocks. */
static u32 take_run(struct wow_policy *p, struct wow_group *g, u32 bit,
		    u32 max)
{
	u32 n = 0;

	while (n < max && bit + n < p->blocks_per_group &&
	       test_bit(bit + n, dirty_bits(g)) &&
	       !test_bit(bit + n, busy_bits(p, g))) {
		__clear_bit(bit + n, dirty_bits(g));
		__set_bit(bit + n, busy_bits(p, g));
		n++;
	}
	g->nr_dirty -= n;
	g->nr_busy += n;
	p->nr_dirty -= n;
	p->nr_busy += n;
	if (n) {
		p->stats.runs++;
		p->stats.run_blocks += n;
	}
	return n;
}

/*
 * The next run the policy wants destaged: contiguous dirty blocks inside
 * one group, at most @max.  Returns its length (0: nothing eligible) and
 * sets *start.  The blocks are busy until wow_policy_run_done().
 */
u32 wow_policy_next_run(struct wow_policy *p, u64 *start, u32 max)
{
	struct wow_group *g = p->ops->pick(p);
	u32 bit;

	if (!g)
		return 0;
	bit = next_eligible(p, g, 0);
	*start = (g->gno << p->group_shift) + bit;
	return take_run(p, g, bit, max);
}

/* Take the run starting exactly at @start out of order (reclaim). */
u32 wow_policy_claim(struct wow_policy *p, u64 start, u32 max)
{
	struct wow_group *g = find_group(p, start >> p->group_shift);

	if (!g)
		return 0;
	return take_run(p, g, start & (p->blocks_per_group - 1), max);
}

/*
 * Take dirty @oblock away from destage while cleaning moves its copy: it
 * is busy, as in a run, until wow_policy_mark_dirty() and
 * wow_policy_run_done() give it back.  No run is counted.  False if it
 * is not dirty or busy already.
 */
bool wow_policy_hold(struct wow_policy *p, u64 oblock)
{
	struct wow_group *g = find_group(p, oblock >> p->group_shift);
	u32 bit = oblock & (p->blocks_per_group - 1);

	if (!g || !test_bit(bit, dirty_bits(g)) || test_bit(bit, busy_bits(p, g)))
		return false;
	__clear_bit(bit, dirty_bits(g));
	__set_bit(bit, busy_bits(p, g));
	g->nr_dirty--;
	g->nr_busy++;
	p->nr_dirty--;
	p->nr_busy++;
	return true;
}

/* The destage of [@start, @start + @nr) is over, written or not. */
void wow_policy_run_done(struct wow_policy *p, u64 start, u32 nr)
{
	struct wow_group *g = find_group(p, start >> p->group_shift);
	u32 bit = start & (p->blocks_per_group - 1);
	u32 i;

	if (WARN_ON_ONCE(!g))
		return;
	for (i = 0; i < nr; i++) {
		if (WARN_ON_ONCE(!__test_and_clear_bit(bit + i,
						       busy_bits(p, g))))
			continue;
		g->nr_busy--;
		p->nr_busy--;
	}
	put_group_if_idle(p, g);
}

/*
 * The CSCAN sweep: from the hand, the first group with eligible blocks,
 * wrapping from the highest group to the lowest.  With @spare_recent, a
 * group whose recency bit is set has the bit cleared and is passed over
 * (WOW); a full turn with every bit cleared then finds a group.
 */
static struct wow_group *sweep(struct wow_policy *p, bool spare_recent)
{
	u64 steps = 2 * p->nr_groups + 2;
	struct wow_group *g = lower_bound(p, p->hand);
	bool wrapped = false;

	while (steps--) {
		if (!g) {
			g = first_group(p);
			if (!g)
				return NULL;
			wrapped = true;
		}
		if (has_eligible(p, g)) {
			if (!spare_recent || !g->recency) {
				/* a new sweep starts only when the hand moves on */
				if (wrapped)
					p->stats.sweeps++;
				p->hand = g->gno;
				return g;
			}
			g->recency = false;
			p->nr_recency--;
			p->stats.recency_skips++;
		}
		g = next_group(g);
	}
	return NULL;
}

/*
 * Drain mode (cleaner): everything is to be destaged, so skipping a
 * re-written group would only cost the sweep a second pass.  Entering it
 * clears every recency bit; while in it, writes set none.
 */
void wow_policy_set_drain(struct wow_policy *p, bool drain)
{
	struct rb_node *n;

	p->drain = drain;
	if (!drain)
		return;
	for (n = rb_first(&p->groups); n && p->nr_recency; n = rb_next(n)) {
		struct wow_group *g = rb_entry(n, struct wow_group, node);

		if (g->recency) {
			g->recency = false;
			p->nr_recency--;
		}
	}
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
 * threshold by the overshoot; a peak below the current high threshold
 * raises it by 1% towards the configured value.  High never drops below
 * 10% of the cache; low stays the configured gap under high.
 */
void wow_thresholds_adapt(struct wow_thresholds *t, u32 peak_bp)
{
	u32 target = t->cfg_high + (10000 - t->cfg_high) / 2;
	u32 gap = t->cfg_high - t->cfg_low;

	if (peak_bp > target)
		t->high = t->high > WOW_MIN_HIGH_BP + (peak_bp - target) ?
			  t->high - (peak_bp - target) : WOW_MIN_HIGH_BP;
	else if (peak_bp < t->high)
		t->high = min(t->high + 100, t->cfg_high);
	t->high = max_t(u32, t->high, min_t(u32, WOW_MIN_HIGH_BP, t->cfg_high));
	t->low = t->high > gap ? t->high - gap : 0;
}

static void wow_note_write(struct wow_policy *p, struct wow_group *g,
			   bool hit, bool sequential)
{
	if (hit && !sequential && !g->recency && !p->drain) {
		g->recency = true;
		p->nr_recency++;
	}
}

/*
 * Sparing a recently written group pays when the write it waits for would
 * have made its destage wasted.  It does so even when the log is short of
 * space: cleaning copies a spared group's blocks forward, which costs
 * cache bandwidth, not origin seeks.
 */
static struct wow_group *wow_pick(struct wow_policy *p)
{
	return sweep(p, true);
}

static struct wow_group *cscan_pick(struct wow_policy *p)
{
	return sweep(p, false);
}

static struct wow_group *lrw_pick(struct wow_policy *p)
{
	struct wow_group *g;

	list_for_each_entry(g, &p->lru, lru) {
		if (has_eligible(p, g)) {
			p->hand = g->gno;
			return g;
		}
	}
	return NULL;
}

const struct wow_policy_ops wow_policy_wow_ops = {
	.name = "wow",
	.note_write = wow_note_write,
	.pick = wow_pick,
};

const struct wow_policy_ops wow_policy_cscan_ops = {
	.name = "cscan",
	.pick = cscan_pick,
};

const struct wow_policy_ops wow_policy_lrw_ops = {
	.name = "lrw",
	.pick = lrw_pick,
};
