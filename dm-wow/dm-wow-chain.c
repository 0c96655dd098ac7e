// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow chain: recovery's decisions over the log written since a
 * checkpoint, record by record.
 *
 * From the log head the checkpoint names, the next record is the one at
 * the write pointer with seq one more than the last, of the segment's
 * current life (a header at block 0 opens a new life: its seg_seq is its
 * own seq), its data intact.  Where a segment's records end, the log goes
 * on at block 0 of the segment the last record names (next_seg).  The
 * first block that is not the next record ends the chain; then:
 *
 *  - a header of ours that is bad, or intact and the next seq but whose
 *    data is not, is a torn tail: dropped (the write that tore was never
 *    acknowledged);
 *  - unless a later record of the same epoch says that seq was durable
 *    (its durable_seq covers it): in the rest of the segment, at block 0
 *    of the next one, or in the rest of the next one when its block 0 is
 *    ours but bad.  Then a record acknowledged as durable is lost, and the
 *    load is refused (-EUCLEAN) rather than silently losing it.
 *
 * The reads and what a record does to the cache are the caller's, through
 * struct wow_chain_ops; so the decisions here are pure, KUnit drives them
 * with a log made of plain numbers (tests/chain_kunit.c), and the
 * userspace tools build this file too (wowctl check and dump decide as a
 * load would).
 *
 * Above the chain, the load's order of sources (wow_load_log): the
 * checkpoint and the log since it, else the whole log; the module's load
 * and the tools' view both run it, through struct wow_load_ops.
 *
 * No locking: recovery runs before the device is live.
 */
#ifdef __KERNEL__
#include <linux/errno.h>
#else
#include <errno.h>
#endif

#include "dm-wow-chain.h"

/* Is (@s, @off) a block of the log? */
static bool in_log(const struct wow_chain *c, __u32 s, __u32 off)
{
	return s < c->nr_segments && off < c->blocks_per_seg;
}

/*
 * Is the record at block @off of segment @s the next of the log?  1 if
 * so (*@ri filled), 0 if not, or a negative errno.
 */
static int next_record(struct wow_chain *c, const struct wow_chain_ops *ops,
		       void *ctx, __u32 s, __u32 off, bool probe,
		       struct wow_record_info *ri)
{
	enum wow_rec_kind kind;
	int r;

	if (!in_log(c, s, off))
		return 0;
	r = ops->header(ctx, s, off, probe, &kind, ri);
	if (r)
		return r;
	if (kind != WOW_REC_OK || ri->seq != c->expected ||
	    ri->nr_data > c->blocks_per_seg - off - 1 ||
	    (off ? ri->seg_seq != c->life : ri->seg_seq != ri->seq))
		return 0;
	return ops->data(ctx, s, off, ri);
}

/*
 * Where the chain ended, block @off of segment @s: a record of ours that
 * did not check (its header bad, or intact and the next of the log but
 * its data not) is a torn tail.  1 if it was one, 0 if not, or an errno.
 */
static int torn(struct wow_chain *c, const struct wow_chain_ops *ops,
		void *ctx, __u32 s, __u32 off)
{
	struct wow_record_info ri;
	enum wow_rec_kind kind;
	int r;

	if (!in_log(c, s, off))
		return 0;
	r = ops->header(ctx, s, off, true, &kind, &ri);
	if (r)
		return r;
	if (kind != WOW_REC_BAD &&
	    (kind != WOW_REC_OK || ri.seq != c->expected))
		return 0;
	c->dropped++;
	if (ops->torn)
		ops->torn(ctx, s, off);
	return 1;
}

/*
 * Does a record say seq c->expected was durable?  Its durable_seq covers
 * it and it is later; in the same epoch (a load starts a new one, whose
 * durable_seq says nothing of an older epoch's seqs) unless @any_epoch.
 */
static bool vouches(const struct wow_chain *c, enum wow_rec_kind kind,
		    const struct wow_record_info *ri, bool any_epoch)
{
	__u64 e = c->expected;

	return kind == WOW_REC_OK && ri->seq > e && ri->durable_seq >= e &&
	       (any_epoch || wow_epoch(ri->seq) == wow_epoch(e));
}

/*
 * The chain ended at seq c->expected, at block @off of segment @s (or at
 * block 0 of @next): 0 for a torn tail, -EUCLEAN if a later record says
 * the missing one was durable (c->vouched_by names it), or an errno.  A
 * first header damaged into something not ours is not told from a torn
 * one (the whole-log scan cannot either).
 */
static int vouched(struct wow_chain *c, const struct wow_chain_ops *ops,
		   void *ctx, __u32 s, __u32 off, __u32 next)
{
	struct wow_record_info ri;
	enum wow_rec_kind kind;
	__u64 e = c->expected;
	bool ours = false;
	__u32 i;
	int r;

	if (next < c->nr_segments) {
		r = ops->header(ctx, next, 0, true, &kind, &ri);
		if (r)
			return r;
		c->vouched_seg = next;
		c->vouched_off = 0;
		if (vouches(c, kind, &ri, false))
			goto corrupt;
		/*
		 * The missing record may be that block itself: a header of
		 * ours that is bad, or that is the next one but whose data
		 * is not.  Then the rest of its life follows it there.
		 */
		ours = kind == WOW_REC_BAD ||
		       (kind == WOW_REC_OK && ri.seq == e && ri.seg_seq == e);
	}
	for (i = 1; ours && i < c->blocks_per_seg; i++) {
		r = ops->header(ctx, next, i, false, &kind, &ri);
		if (r)
			return r;
		/* the life the missing record opened */
		c->vouched_seg = next;
		c->vouched_off = i;
		if (kind == WOW_REC_OK && ri.seg_seq == e &&
		    vouches(c, kind, &ri, true))
			goto corrupt;
	}
	for (i = off + 1; s < c->nr_segments && i < c->blocks_per_seg; i++) {
		r = ops->header(ctx, s, i, false, &kind, &ri);
		if (r)
			return r;
		c->vouched_seg = s;
		c->vouched_off = i;
		if (kind == WOW_REC_OK && ri.seg_seq == c->life &&
		    vouches(c, kind, &ri, false))
			goto corrupt;
	}
	return 0;
corrupt:
	c->vouched_by = ri.seq;
	return -EUCLEAN;
}

/*
 * Replay the log along its chain from the head in @c (head_seg, head_wp,
 * next_seg, next_seq, head_life), applying each record through @ops.
 * On return c->expected is the seq after the last record applied,
 * c->records how many were, c->dropped the torn records dropped.
 * Returns 0, -EUCLEAN when a durable record is lost, or an error of @ops.
 */
int wow_chain_replay(struct wow_chain *c, const struct wow_chain_ops *ops,
		     void *ctx)
{
	__u32 s = c->head_seg, off = c->head_wp, next = c->next_seg;
	struct wow_record_info ri;
	int r;

	c->expected = c->next_seq;
	c->life = c->head_life;
	c->records = 0;
	c->dropped = 0;
	c->vouched_by = 0;
	for (;;) {
		r = next_record(c, ops, ctx, s, off, !c->records, &ri);
		if (!r) {
			/* the chain leaves @s: block 0 of the next segment */
			if (next >= c->nr_segments || next == s)
				break;
			r = next_record(c, ops, ctx, next, 0, true, &ri);
			if (!r)
				break;
			if (r > 0) {
				s = next;
				off = 0;
			}
		}
		if (r < 0)
			return r;
		if (!off)
			c->life = ri.seq;
		r = ops->apply(ctx, s, off, &ri);
		if (r)
			return r;
		c->expected++;
		c->records++;
		off += 1 + ri.nr_data;
		next = ri.next_seg;
	}
	r = torn(c, ops, ctx, s, off);
	if (!r && next < c->nr_segments && next != s)
		r = torn(c, ops, ctx, next, 0);
	if (r < 0)
		return r;
	return vouched(c, ops, ctx, s, off, next);
}

/*
 * Only the segment the chain names: a load after a crash follows the
 * chain from the last checkpoint, and a segment opened that no record or
 * checkpoint named is a life it never reaches (everything written there,
 * FUA and flushed writes included, would be lost; and its old slots
 * would serve other blocks' data).  The named segment may be none
 * (WOW_NO_SEG: the free list was empty): then nothing may be opened until
 * a checkpoint names the new head.
 */
bool wow_chain_may_open(bool chained, __u32 named, __u32 head)
{
	return !chained || named == head;
}

/*
 * A load: from the checkpoint and the log written since it when a valid
 * one is on disk, else (none, it does not check, or @ops->replay asks for
 * it) from the whole log.  Then *@next_seq is the first seq of a new
 * epoch past every seq the load saw and @format_seq (0: the seq space is
 * exhausted).  0, or the first -errno of @ops.
 */
int wow_load_log(const struct wow_load_ops *ops, __u64 format_seq,
		 __u64 *next_seq)
{
	__u64 seen = 0;
	int r = ops->ckpt(ops->ctx);

	if (r < 0)
		return r;
	if (!r) {
		r = ops->replay(ops->ctx, &seen);
		if (r < 0)
			return r;
	}
	if (r) {
		r = ops->scan(ops->ctx, &seen);
		if (r)
			return r;
	}
	if (seen < format_seq)
		seen = format_seq;
	*next_seq = wow_next_epoch_seq(seen);
	return 0;
}
