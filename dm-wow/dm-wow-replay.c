// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow replay: what a record replayed after a checkpoint does to the
 * index and the segments.
 *
 * The replay walks the log written since the checkpoint along its chain
 * (dm-wow-chain.c); each record it applies is the newest the cache has
 * seen, so its copies become the newest of their blocks, dirty.  Its
 * tombstones and clean marks then act as the whole-log scan's would: a
 * copy is covered when its seq <= t.  A replayed copy's seq is known; a
 * checkpointed one's is not (the checkpoint keeps no seq per slot), only
 * its segment's life, whose newest seq the checkpoint gives: such a copy
 * is covered when wow_ckpt_covers says the whole life is.  A record at
 * block 0 of a segment begins a new life: the old one's copies are gone.
 *
 * The effects are the caller's, through struct wow_replay_ops; so the
 * decisions here are pure, KUnit drives them on plain arrays
 * (tests/replay_kunit.c), and the userspace tools build this file too.
 *
 * No locking: recovery runs before the device is live.
 */
#include "dm-wow-types.h"
#include "dm-wow-record.h"
#include "dm-wow-ckpt.h"
#include "dm-wow-replay.h"

int wow_replay_init(struct wow_replay *rp)
{
	u32 s;

	rp->ckpt_max = kvmalloc_array(rp->nr_segments ? rp->nr_segments : 1,
				      sizeof(u64), GFP_KERNEL);
	if (!rp->ckpt_max)
		return -ENOMEM;
	for (s = 0; s < rp->nr_segments; s++)
		rp->ckpt_max[s] = rp->ops->ckpt_max(rp->ctx, s);
	return 0;
}

void wow_replay_free(struct wow_replay *rp)
{
	kvfree(rp->ckpt_max);
	rp->ckpt_max = NULL;
}

/*
 * Does tombstone or clean mark @t cover slot @slot's copy?  A replayed
 * copy's seq is known; a checkpointed one's only lies in its segment's
 * life (wow_ckpt_covers).
 */
static bool replay_covers(struct wow_replay *rp, u32 slot,
			  const struct wow_tomb_range *t)
{
	u64 seq = rp->ops->seq(rp->ctx, slot);
	u64 life_max = rp->ckpt_max[slot / rp->blocks_per_seg];

	if (seq)
		return seq <= t->t;
	if (wow_ckpt_covers(life_max, t->t))
		return true;
	if (life_max && rp->ops->uncovered)
		rp->ops->uncovered(rp->ctx, slot, t);
	return false;
}

static void replay_cover(struct wow_replay *rp, u32 slot,
			 const struct wow_tomb_range *t)
{
	if (!replay_covers(rp, slot, t))
		return;
	if (t->flags & WOW_TOMB_CLEAN)
		rp->ops->clean(rp->ctx, slot);
	else
		rp->ops->remove(rp->ctx, slot);
}

void wow_replay_tomb(struct wow_replay *rp, const struct wow_tomb_range *t)
{
	u64 b, end = t->start + t->nr;
	u32 slot;

	if (t->nr <= rp->nr_slots) {
		for (b = t->start; b < end; b++)
			if (rp->ops->lookup(rp->ctx, b, &slot))
				replay_cover(rp, slot, t);
		return;
	}
	for (slot = 0; slot < rp->nr_slots; slot++)
		if (rp->ops->valid(rp->ctx, slot, &b) && b >= t->start &&
		    b < end)
			replay_cover(rp, slot, t);
}

/* A new life of segment @s begins in the replay: its old content is gone. */
static void replay_new_life(struct wow_replay *rp, u32 s, u64 seq)
{
	u32 i, slot;
	u64 b;

	for (i = 0; i < rp->blocks_per_seg; i++) {
		slot = s * rp->blocks_per_seg + i;
		if (rp->ops->valid(rp->ctx, slot, &b))
			rp->ops->remove(rp->ctx, slot);
		rp->ops->set_seq(rp->ctx, slot, 0);	/* never fails */
	}
	rp->ckpt_max[s] = 0;
	rp->ops->new_life(rp->ctx, s, seq);
}

int wow_replay_apply(struct wow_replay *rp, u32 s, u32 off, const void *hdr,
		     const struct wow_record_info *ri)
{
	const struct wow_replay_ops *ops = rp->ops;
	void *h = (void *)hdr;	/* the record.h accessors take no const */
	struct wow_tomb *tombs = wow_record_tombs(h);
	__le64 *raw = wow_record_oblocks(h, ri->nr_tombs);
	__le32 *crcs = wow_record_crcs(h, ri->nr_tombs, ri->nr_data);
	u32 i, slot, cur;
	int r;

	if (!off)
		replay_new_life(rp, s, ri->seq);
	for (i = 0; i < ri->nr_data; i++)
		if (le64_to_cpu(raw[i]) >= rp->nr_oblocks)
			return -EUCLEAN;
	r = ops->reserve_tombs(rp->ctx, s, ri->nr_tombs);
	if (r)
		return r;
	for (i = 0; i < ri->nr_data; i++) {
		u64 b = le64_to_cpu(raw[i]);

		slot = s * rp->blocks_per_seg + off + 1 + i;
		if (ops->lookup(rp->ctx, b, &cur))
			ops->remove(rp->ctx, cur);
		r = ops->set_seq(rp->ctx, slot, ri->seq);
		if (r)
			return r;
		ops->insert(rp->ctx, b, slot);
		if ((ri->flags & WOW_REC_CRCS) && ops->set_crc)
			ops->set_crc(rp->ctx, slot, le32_to_cpu(crcs[i]));
	}
	for (i = 0; i < ri->nr_tombs; i++) {
		struct wow_tomb_range t = wow_tomb_decode(&tombs[i]);

		if (!(t.flags & WOW_TOMB_CLEAN))
			ops->add_tomb(rp->ctx, s, &t);
		wow_replay_tomb(rp, &t);
	}
	ops->written(rp->ctx, s, ri->seq, off + 1 + ri->nr_data);
	return 0;
}
