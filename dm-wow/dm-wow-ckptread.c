// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow checkpoint reader: the header and its closing copy, the segment
 * stream, the slot table; every check a load makes of a checkpoint area,
 * and what was wrong when one fails (dm-wow-ckptread.h).
 *
 * Pure: no locking, no allocation; blocks come through the reader's read
 * (and start) callbacks, into the caller's memory.  dm-wow-checkpoint.c
 * reads the cache device with it, wowcache.c an image, KUnit memory.
 */
#include "dm-wow-ckptread.h"

/* Set what was wrong: -EUCLEAN, or -ENOENT for the header. */
static int fault(struct wow_ckpt_reader *rd, enum wow_ckpt_fault f,
		 u64 index, u64 value)
{
	rd->fault = f;
	rd->fault_index = index;
	rd->fault_value = value;
	return f == WOW_CKPT_FAULT_HEADER || f == WOW_CKPT_FAULT_CLOSING ?
	       -ENOENT : -EUCLEAN;
}

int wow_ckptread_header(struct wow_ckpt_reader *rd, void *buf,
			struct wow_ckpt_info *ci)
{
	u32 bs = rd->block_size;
	void *copy = buf + bs;
	enum wow_ckpt_hdr h;
	int r;

	rd->fault = WOW_CKPT_FAULT_NONE;
	r = rd->read(rd->ctx, 0, 1, buf);
	if (r)
		return r;
	h = wow_ckpt_header_judge(buf, rd->version, bs, rd->uuid, rd->nr_slots,
				  rd->nr_segments, rd->max_tombs, ci);
	if (h != WOW_CKPT_HDR_VALID)
		return fault(rd, WOW_CKPT_FAULT_HEADER, h, 0);
	if (rd->version < 3)
		return 0;
	/* decode checked the tables fit the area */
	r = rd->read(rd->ctx, 1 + ci->slot_blocks + ci->seg_blocks, 1, copy);
	if (r)
		return r;
	if (memcmp(buf, copy, bs))
		return fault(rd, WOW_CKPT_FAULT_CLOSING, 0, 0);
	return 0;
}

/* Where a load is in the segment stream. */
struct stream {
	u64 first;		/* stream block win[0] holds first */
	u32 n;			/* blocks it holds */
	u64 pos;		/* stream byte */
};

/* Read the stream's next window into win[0]; every block must check. */
static int stream_next(struct wow_ckpt_reader *rd,
		       const struct wow_ckpt_info *ci, struct stream *st)
{
	u32 bs = rd->block_size, i;
	int r;

	st->first += st->n;
	if (st->first >= ci->seg_blocks)
		return fault(rd, WOW_CKPT_FAULT_STREAM_END, st->first, 0);
	st->n = min_t(u64, rd->win_blocks, ci->seg_blocks - st->first);
	r = rd->read(rd->ctx, 1 + ci->slot_blocks + st->first, st->n,
		     rd->win[0]);
	if (r)
		return r;
	for (i = 0; i < st->n; i++)
		if (!wow_ckpt_block_ok(rd->win[0] + i * bs, bs,
				       ci->generation, st->first + i))
			return fault(rd, WOW_CKPT_FAULT_STREAM_BLOCK,
				     st->first + i, 0);
	return 0;
}

/* The stream's next @len bytes, into @data. */
static int stream_get(struct wow_ckpt_reader *rd,
		      const struct wow_ckpt_info *ci, struct stream *st,
		      void *data, u32 len)
{
	int r;

	while (len) {
		u32 c = wow_ckpt_stream_copy(rd->win[0], rd->block_size,
					     st->first, st->n, st->pos, data,
					     len, false);

		st->pos += c;
		data += c;
		len -= c;
		if (!len)
			break;
		r = stream_next(rd, ci, st);
		if (r)
			return r;
	}
	return 0;
}

/*
 * The segment stream: each segment's entry, the slot table blocks'
 * crc32cs (into @rd->csums), each segment's tombstones.
 */
static int read_stream(struct wow_ckpt_reader *rd,
		       const struct wow_ckpt_info *ci,
		       const struct wow_ckpt_load_ops *ops)
{
	struct stream st = { };
	u64 s, total = 0;
	u32 i;
	int r;

	for (s = 0; s < rd->nr_segments; s++) {
		struct wow_ckpt_seg e;
		struct wow_ckpt_seg_info si;

		r = stream_get(rd, ci, &st, &e, sizeof(e));
		if (r)
			return r;
		if (!wow_ckpt_seg_decode(&e, rd->blocks_per_seg, ci->next_seq,
					 &si))
			return fault(rd, WOW_CKPT_FAULT_SEG, s, 0);
		rd->segs[s].wp = si.wp;
		rd->segs[s].nr_tombs = si.nr_tombs;
		total += si.nr_tombs;
		r = ops->load_seg(ops->ctx, s, &si);
		if (r)
			return r;
	}
	if (total != ci->nr_tombs)
		return fault(rd, WOW_CKPT_FAULT_TOMB_TOTAL, total,
			     ci->nr_tombs);
	r = stream_get(rd, ci, &st, rd->csums,
		       ci->slot_blocks * sizeof(*rd->csums));
	if (r)
		return r;
	for (s = 0; s < rd->nr_segments; s++)
		for (i = 0; i < rd->segs[s].nr_tombs; i++) {
			struct wow_tomb t;
			struct wow_tomb_range tr;

			r = stream_get(rd, ci, &st, &t, sizeof(t));
			if (r)
				return r;
			if (!wow_ckpt_tomb_decode(&t, ci->next_seq, &tr))
				return fault(rd, WOW_CKPT_FAULT_TOMB, s, 0);
			r = ops->load_tomb(ops->ctx, s, &tr);
			if (r)
				return r;
		}
	return 0;
}

/*
 * Slot @slot's entry @e, from a block that checked: malformed, out of
 * place (or its origin block cached already), or handed to ops->load_slot
 * when valid.
 */
static int load_slot(struct wow_ckpt_reader *rd,
		     const struct wow_ckpt_load_ops *ops, u64 slot,
		     const struct wow_ckpt_entry *e)
{
	bool valid, dirty;
	u64 ob, s;
	u32 block;

	/* an empty slot has no crc either */
	if (!wow_ckpt_slot_decode(e->e, &ob, &valid, &dirty) ||
	    (!valid && e->crc))
		return fault(rd, WOW_CKPT_FAULT_SLOT, slot, 0);
	if (!valid)
		return 0;
	/* in a written block of a segment life (a free one's wp is 0) */
	s = div_u64_rem(slot, rd->blocks_per_seg, &block);
	if (ob >= rd->nr_oblocks || !block || block >= rd->segs[s].wp)
		return fault(rd, WOW_CKPT_FAULT_SLOT_PLACE, slot, ob);
	/* and its origin block cached once */
	if (ops->cached(ops->ctx, ob))
		return fault(rd, WOW_CKPT_FAULT_SLOT_PLACE, slot, ob);
	return ops->load_slot(ops->ctx, slot, ob, dirty, e->crc,
			      rd->version >= 5);
}

/* Slot table blocks [@b, @b + @n), in @buf: their csums, then entries. */
static int read_slot_window(struct wow_ckpt_reader *rd,
			    const struct wow_ckpt_load_ops *ops,
			    const void *buf, u64 b, u32 n)
{
	u32 bs = rd->block_size, i, k;
	u32 per = wow_ckpt_slots_per_block(rd->version, bs);
	u32 bytes = wow_ckpt_slot_bytes(rd->version);
	u64 slot, end = min(rd->nr_slots, (b + n) * per);
	int r;

	for (i = 0; i < n; i++)
		if (le32_to_cpu(rd->csums[b + i]) !=
		    wow_ckpt_slot_block_csum(buf + i * bs, bs))
			return fault(rd, WOW_CKPT_FAULT_SLOT_BLOCK, b + i, 0);
	for (slot = b * per; slot < end; slot++) {
		struct wow_ckpt_entry e;
		u64 blk = div_u64_rem(slot - b * per, per, &k);

		wow_ckpt_slot_get(buf + blk * bs, bytes, k, &e);
		r = load_slot(rd, ops, slot, &e);
		if (r)
			return r;
	}
	return 0;
}

/* Blocks of the slot table window from @b. */
static u32 slot_window(const struct wow_ckpt_reader *rd,
		       const struct wow_ckpt_info *ci, u64 b)
{
	return min_t(u64, rd->win_blocks, ci->slot_blocks - b);
}

/*
 * The slot table, a window at a time; with rd->start, the next window's
 * read in flight while this one is taken in.
 */
static int read_slots(struct wow_ckpt_reader *rd,
		      const struct wow_ckpt_info *ci,
		      const struct wow_ckpt_load_ops *ops)
{
	bool ahead;
	u64 b, next;
	u32 cur = 0;
	int r;

	if (rd->start && ci->slot_blocks)
		rd->start(rd->ctx, 1, slot_window(rd, ci, 0), rd->win[0]);
	for (b = 0; b < ci->slot_blocks; b = next) {
		u32 n = slot_window(rd, ci, b);

		next = b + n;
		r = rd->read(rd->ctx, 1 + b, n, rd->win[cur]);
		if (r)
			return r;
		ahead = rd->start && next < ci->slot_blocks;
		if (ahead)
			rd->start(rd->ctx, 1 + next, slot_window(rd, ci, next),
				  rd->win[!cur]);
		r = read_slot_window(rd, ops, rd->win[cur], b, n);
		if (r) {
			/* the next window's read, still in flight */
			if (ahead)
				rd->read(rd->ctx, 1 + next,
					 slot_window(rd, ci, next),
					 rd->win[!cur]);
			return r;
		}
		if (rd->start)
			cur = !cur;
	}
	return 0;
}

int wow_ckptread_load(struct wow_ckpt_reader *rd,
		      const struct wow_ckpt_info *ci,
		      const struct wow_ckpt_load_ops *ops)
{
	int r;

	rd->fault = WOW_CKPT_FAULT_NONE;
	/* the segment stream first: it vouches for the slot table */
	r = read_stream(rd, ci, ops);
	if (!r)
		r = read_slots(rd, ci, ops);
	return r;
}
