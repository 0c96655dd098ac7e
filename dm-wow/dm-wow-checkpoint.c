// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow checkpoint I/O: write a checkpoint area, read one back, retire
 * one.  The layout is in dm-wow-format.h, the entries' codec in
 * dm-wow-ckpt.c, the reading and its checks in dm-wow-ckptread.c (here
 * only its reads); what goes in and what comes out is the log's
 * (dm-wow-ckptlog.c), through the callbacks of struct wow_ckpt_ops and
 * struct wow_ckpt_load_ops, so this file knows nothing of segments or the
 * index and holds no state.
 *
 * Locking: none here.  The callers run with the log quiet (postsuspend,
 * preresume) or from the commit worker; a snapshot (wow_ckpt_snap_take,
 * from the commit worker) is written by wow_ckpt_snap_write from any
 * context that may sleep, taking the slot table blocks through
 * ops->take_block (the log's lock is the log's business).
 *
 * Commit order of a checkpoint, format versions 3 and 4 (the checkpoint
 * is not valid before 4; version 4 writes into the one of its two areas
 * not holding the newest valid checkpoint, the log's choice, so the area
 * given here is all this file knows):
 *   1. when nothing is known of what the area holds (the first write
 *      there since the cache was loaded or formatted): discard its erase
 *      blocks (when the device takes discards), to write it whole;
 *   2. the header, valid;
 *   3. the slot table's blocks that changed since the area was last
 *      written (all of them in a whole write), then the segment stream,
 *      in large writes;
 *   4. the closing copy of the header, with PREFLUSH | FUA.
 * Version 2 (the area in erase block 0, rewritten in place):
 *   1. the slot table's changed blocks, then the segment stream;
 *   2. the header, valid, with PREFLUSH | FUA.
 * A crash before the last step leaves no checkpoint whose blocks all
 * check in this area: the next load takes the other area's (version 4)
 * or scans the log.
 */
#include <linux/blkdev.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "dm-wow.h"
#include "dm-wow-checkpoint.h"
#include "dm-wow-super.h"
#include "dm-wow-ckptread.h"

/* Reads and writes of the tables go through a window of this size. */
#define WOW_CKPT_WINDOW_BYTES	SZ_1M

/*
 * Blocks sealed or encoded between two chances to yield the CPU.  A
 * window's crc32cs are a few milliseconds of CPU where crc32c is not an
 * instruction (and tens of them in an emulated guest); without a
 * cond_resched between, a write woken on the CPU a checkpoint writer holds
 * waits for the whole loop (the kernels we ship on preempt voluntarily).
 */
#define WOW_CKPT_YIELD_BLOCKS	16

/* Segment entries put into the stream between two chances to yield. */
#define WOW_CKPT_YIELD_SEGS	256

/*
 * A background checkpoint's duty cycle: after each WOW_CKPT_BURST_US of
 * CPU it sleeps about as long, so it never holds a CPU for more than that
 * at a time while it encodes and seals its blocks.  cond_resched alone
 * gives the CPU only to a task that waits for it; a vCPU that stays busy
 * still takes a host core from the threads that complete the other
 * vCPU's I/O (Documentation/reliability.md, the checkpoint stall), and a
 * CPU the writer leaves idle can run a write's completion the moment it
 * comes.  It does not pause while the snapshot says hurry (the slot
 * table blocks that change before it takes them fill their room).  A
 * checkpoint written while writes wait (wow_ckpt_write) runs at full
 * speed.
 */
#define WOW_CKPT_BURST_US	1000

struct ckpt_io {
	const struct wow_ckpt_area *a;
	const struct wow_ckpt_info *ci;
	void *buf;			/* the window */
	u32 win;			/* its size, in blocks */
	u64 first;			/* stream block buf holds first */
	u64 pos;			/* stream byte */
	bool pace;			/* a background write: ckpt_yield sleeps */
	const struct wow_ckpt_ops *ops;	/* its hurry, when it pauses */
	u64 since;			/* ns: when it last slept */
};

/*
 * A chance to give the CPU back, between two pieces of a checkpoint's
 * work: a background one (@io->pace) sleeps once it has run
 * WOW_CKPT_BURST_US since it last did.
 */
static void ckpt_yield(struct ckpt_io *io)
{
	u64 now;

	if (io->pace && !(io->ops->hurry && io->ops->hurry(io->ops->ctx))) {
		now = ktime_get_ns();
		if (now - io->since >= WOW_CKPT_BURST_US * NSEC_PER_USEC) {
			usleep_range(WOW_CKPT_BURST_US,
				     WOW_CKPT_BURST_US * 3 / 2);
			io->since = ktime_get_ns();
			return;
		}
	}
	cond_resched();
}

static sector_t area_sector(const struct wow_ckpt_area *a, u64 block)
{
	return (a->first_block + block) * (a->block_size >> SECTOR_SHIFT);
}

/* Block of the area where the closing copy of the header goes. */
static u64 closing_block(const struct wow_ckpt_info *ci)
{
	return 1 + ci->slot_blocks + ci->seg_blocks;
}

/*
 * Version 3: start the area over in erased flash.  A device that takes no
 * discards gets none (its own translation layer copes); one that fails
 * one is only told less: neither stops the checkpoint.
 */
static void area_discard(const struct wow_ckpt_area *a)
{
	if (!a->closing || !bdev_max_discard_sectors(a->bdev))
		return;
	blkdev_issue_discard(a->bdev, area_sector(a, 0),
			     a->nr_blocks * (a->block_size >> SECTOR_SHIFT),
			     GFP_KERNEL);
}

/* Block of the area where the segment stream starts. */
static u64 stream_start(const struct wow_ckpt_info *ci)
{
	return 1 + ci->slot_blocks;
}

static int io_init(struct ckpt_io *io, const struct wow_ckpt_area *a,
		   const struct wow_ckpt_info *ci)
{
	memset(io, 0, sizeof(*io));
	io->a = a;
	io->ci = ci;
	io->win = max(1U, WOW_CKPT_WINDOW_BYTES / a->block_size);
	io->buf = kvzalloc(io->win * a->block_size, GFP_KERNEL);
	return io->buf ? 0 : -ENOMEM;
}

/* Write the header encoding @ci at area block @block, with @opf. */
static int header_write(const struct wow_ckpt_area *a,
			const struct wow_ckpt_info *ci, u64 block,
			blk_opf_t opf)
{
	void *blk = kzalloc(a->block_size, GFP_KERNEL);
	int r;

	if (!blk)
		return -ENOMEM;
	wow_ckpt_header_encode(blk, a->block_size, a->uuid, ci);
	r = wow_sync_io(a->bdev, area_sector(a, block), blk, a->block_size,
			REQ_OP_WRITE | opf);
	kfree(blk);
	return r;
}

/*
 * Write a header that is not valid (@ci says so), durably: the checkpoint
 * on disk is retired and the next load scans the log.  The tables stay
 * (a checkpoint there later writes only what changed) unless nothing is
 * known of them.
 */
int wow_ckpt_write_header(const struct wow_ckpt_area *a,
			  const struct wow_ckpt_info *ci)
{
	if (a->whole)
		area_discard(a);
	return header_write(a, ci, 0,
			    REQ_SYNC | REQ_PREFLUSH | REQ_FUA);
}

/* Write the window's stream blocks, sealed; the window then follows. */
static int stream_flush(struct ckpt_io *io, u64 upto)
{
	u32 bs = io->a->block_size, n, i;
	int r;

	n = min_t(u64, io->win, upto - io->first);
	for (i = 0; i < n; i++) {
		wow_ckpt_seal(io->buf + i * bs, bs, io->ci->generation,
			      io->first + i);
		if (i % WOW_CKPT_YIELD_BLOCKS == WOW_CKPT_YIELD_BLOCKS - 1)
			ckpt_yield(io);
	}
	r = wow_sync_io(io->a->bdev,
			area_sector(io->a, stream_start(io->ci) + io->first),
			io->buf, n * bs, REQ_OP_WRITE);
	/* the CPU was free while it waited */
	io->since = ktime_get_ns();
	memset(io->buf, 0, io->win * bs);
	io->first += io->win;
	return r;
}

static int stream_put(struct ckpt_io *io, const void *data, u32 len)
{
	int r;

	while (len) {
		u32 c = wow_ckpt_stream_copy(io->buf, io->a->block_size,
					     io->first, io->win, io->pos,
					     (void *)data, len, true);

		io->pos += c;
		data += c;
		len -= c;
		if (len) {
			r = stream_flush(io, io->first + io->win);
			if (r)
				return r;
		}
	}
	return 0;
}

/* Slots in slot table block @b. */
static u32 block_slots(const struct wow_ckpt_area *a, u64 b)
{
	u32 per = wow_ckpt_slots_per_block(a->version, a->block_size);

	return min_t(u64, a->nr_slots - b * per, per);
}

/* A slot table block of the @n entries @e, in @blk; its crc32c. */
static __le32 block_fill(const struct wow_ckpt_area *a, void *blk,
			 const struct wow_ckpt_entry *e, u32 n)
{
	u32 i;

	memset(blk, 0, a->block_size);
	for (i = 0; i < n; i++)
		wow_ckpt_slot_put(blk, wow_ckpt_slot_bytes(a->version), i,
				  &e[i]);
	return cpu_to_le32(wow_ckpt_slot_block_csum(blk, a->block_size));
}

/*
 * Encode slot table block @b into @blk (@e: room for a block's entries);
 * its crc32c, as @a->csums holds it once written.
 */
__le32 wow_ckpt_block_encode(const struct wow_ckpt_area *a,
			     const struct wow_ckpt_ops *ops, void *blk, u64 b,
			     struct wow_ckpt_entry *e)
{
	u32 per = wow_ckpt_slots_per_block(a->version, a->block_size);

	ops->slot_entries(ops->ctx, b * per, block_slots(a, b), e);
	return block_fill(a, blk, e, block_slots(a, b));
}

/*
 * The first slot table block from @b whose slots changed since the area
 * was written (every block when it is whole), or @nr.
 */
static u64 next_changed_block(const struct wow_ckpt_area *a,
			      const struct wow_ckpt_ops *ops, u64 b, u64 nr)
{
	u32 per = wow_ckpt_slots_per_block(a->version, a->block_size);
	u64 slot;

	if (a->whole || b >= nr)
		return min(b, nr);
	slot = ops->next_changed(ops->ctx, b * per);
	return slot == U64_MAX ? nr : max(b, div_u64(slot, per));
}

struct wow_ckpt_snap {
	struct wow_ckpt_ops ops;	/* take_block, raw_entries: the writer's */
	struct wow_ckpt_seg_info *segs;	/* every segment */
	/*
	 * @segs holds every segment as the last snapshot took it (zeros at
	 * first), and @nr_tombs their tombstones: a snapshot kept from one
	 * checkpoint to the next copies only the segments
	 * ops->next_seg_changed names (all of them the first time)
	 */
	u64 nr_tombs;
	struct wow_tomb_range *tombs;	/* ci->nr_tombs, in segment order */
};

void wow_ckpt_snap_free(struct wow_ckpt_snap *sn)
{
	if (!sn)
		return;
	kvfree(sn->segs);
	kvfree(sn->tombs);
	kfree(sn);
}

/*
 * A snapshot for a cache of @nr_segments segments, kept from one
 * checkpoint to the next (wow_ckpt_snap_take), so taking one allocates
 * only when more changed than ever before.
 */
struct wow_ckpt_snap *wow_ckpt_snap_alloc(u64 nr_segments)
{
	struct wow_ckpt_snap *sn = kzalloc(sizeof(*sn), GFP_KERNEL);

	if (!sn)
		return NULL;
	sn->segs = kvcalloc(max_t(u64, nr_segments, 1), sizeof(*sn->segs),
			    GFP_KERNEL);
	if (!sn->segs) {
		kfree(sn);
		return NULL;
	}
	return sn;
}

/*
 * Bring @sn's segments up to date: all of them, or for a snapshot kept
 * from one checkpoint to the next (@changed_only) whose @ops name what
 * changed (next_seg_changed), only those.
 */
static void take_seg_infos(const struct wow_ckpt_area *a,
			   const struct wow_ckpt_ops *ops,
			   struct wow_ckpt_snap *sn, bool changed_only)
{
	u64 s;

	if (!changed_only || !ops->next_seg_changed) {
		ops->seg_infos(ops->ctx, 0, a->nr_segments, sn->segs);
		sn->nr_tombs = 0;
		for (s = 0; s < a->nr_segments; s++)
			sn->nr_tombs += sn->segs[s].nr_tombs;
		return;
	}
	s = 0;
	while ((s = ops->next_seg_changed(ops->ctx, s)) < a->nr_segments) {
		sn->nr_tombs -= sn->segs[s].nr_tombs;
		ops->seg_infos(ops->ctx, s, 1, &sn->segs[s]);
		sn->nr_tombs += sn->segs[s].nr_tombs;
		s++;
	}
}

/*
 * Fill ci's table sizes and take the segments and their tombstones into
 * @sn (its segs with room for every segment; @changed_only: @sn is kept
 * from one snapshot to the next, take_seg_infos): -ENOSPC when there are
 * more tombstones than the area has room for.
 */
static int take_segs(const struct wow_ckpt_area *a, struct wow_ckpt_info *ci,
		     const struct wow_ckpt_ops *ops, struct wow_ckpt_snap *sn,
		     bool changed_only)
{
	u64 s, t = 0;
	u32 i;

	ci->valid = true;
	ci->nr_slots = a->nr_slots;
	ci->nr_segments = a->nr_segments;
	ci->slot_blocks = wow_ckpt_slot_blocks(a->version, a->nr_slots,
					       a->block_size);
	take_seg_infos(a, ops, sn, changed_only);
	ci->nr_tombs = sn->nr_tombs;
	if (ci->nr_tombs > a->max_tombs)
		return -ENOSPC;
	ci->seg_blocks = wow_ckpt_seg_blocks(a->version, a->nr_slots,
					     a->nr_segments,
					     ci->nr_tombs, a->block_size);
	kvfree(sn->tombs);
	sn->tombs = NULL;
	if (!ci->nr_tombs)
		return 0;
	sn->tombs = kvmalloc_array(ci->nr_tombs, sizeof(*sn->tombs),
				   GFP_KERNEL);
	if (!sn->tombs)
		return -ENOMEM;
	for (s = 0; s < a->nr_segments; s++) {
		const struct wow_tomb_range *tr;

		if (!sn->segs[s].nr_tombs)
			continue;
		tr = ops->seg_tombs(ops->ctx, s);
		for (i = 0; i < sn->segs[s].nr_tombs; i++)
			sn->tombs[t++] = tr[i];
	}
	return 0;
}

/*
 * The segment stream from @sn (segments, slot block csums, tombstones),
 * then the closing copy of the header (version 3 on; the header in
 * version 2), with PREFLUSH and FUA: the checkpoint is whole.
 */
static int write_tail(struct ckpt_io *io, const struct wow_ckpt_area *a,
		      struct wow_ckpt_info *ci, const struct wow_ckpt_snap *sn)
{
	u64 s, t;
	int r = 0;

	memset(io->buf, 0, io->win * a->block_size);
	for (s = 0; s < a->nr_segments && !r; s++) {
		struct wow_ckpt_seg e;

		wow_ckpt_seg_encode(&e, &sn->segs[s]);
		r = stream_put(io, &e, sizeof(e));
		if (s % WOW_CKPT_YIELD_SEGS == WOW_CKPT_YIELD_SEGS - 1)
			ckpt_yield(io);
	}
	if (!r)
		r = stream_put(io, a->csums, ci->slot_blocks * sizeof(__le32));
	for (t = 0; t < ci->nr_tombs && !r; t++) {
		struct wow_tomb e;

		wow_ckpt_tomb_encode(&e, &sn->tombs[t]);
		r = stream_put(io, &e, sizeof(e));
	}
	if (!r)
		r = stream_flush(io, ci->seg_blocks);
	ci->written += ci->seg_blocks;
	if (!r)
		r = header_write(a, ci, a->closing ? closing_block(ci) : 0,
				 REQ_SYNC | REQ_PREFLUSH | REQ_FUA);
	return r;
}

/* Version 3 on: the header first (after a discard, when whole). */
static int write_head(const struct wow_ckpt_area *a,
		      const struct wow_ckpt_info *ci)
{
	if (!a->closing)
		return 0;
	if (a->whole)
		area_discard(a);
	return header_write(a, ci, 0, 0);
}

/*
 * Write a checkpoint of generation ci->generation with ci's seqs; the
 * table sizes and ci->nr_tombs are filled here.  -ENOSPC (nothing
 * written) when the segments hold more tombstones than the area has room
 * for.  The caller has made sure no valid header is on disk.
 *
 * Unless @a is whole, the slot table's blocks whose slots did not change
 * since the area was last written are not written again: they hold what
 * they held, and @a->csums says what that is.  The rest of the area (the
 * header, the segment stream, the closing copy) is written every time.
 * A checkpoint's cost is then what changed, plus a segment stream of 32
 * bytes a segment: not the whole slot table (6 bytes a cache block).
 * @kept: the snapshot background checkpoints keep (no other writer uses
 * it meanwhile), brought up to date by the segments marked changed; NULL:
 * a snapshot of every segment is allocated for this write.
 */
int wow_ckpt_write(const struct wow_ckpt_area *a, struct wow_ckpt_info *ci,
		   const struct wow_ckpt_ops *ops, struct wow_ckpt_snap *kept)
{
	u32 bs = a->block_size;
	struct wow_ckpt_snap *sn = kept ?: wow_ckpt_snap_alloc(a->nr_segments);
	struct ckpt_io io = { };
	struct wow_ckpt_entry *e;
	u64 b, nr;
	u32 i;
	int r;

	/* the header and its closing copy; the tables are counted below */
	ci->written = 1 + (a->closing ? 1 : 0);
	e = kmalloc_array(wow_ckpt_slots_per_block(a->version, bs), sizeof(*e),
			  GFP_KERNEL);
	r = e && sn ? take_segs(a, ci, ops, sn, !!kept) : -ENOMEM;
	if (!r)
		r = io_init(&io, a, ci);
	if (r) {
		kfree(e);
		if (!kept)
			wow_ckpt_snap_free(sn);
		return r;
	}
	r = write_head(a, ci);

	/*
	 * the slot table, a window at a time: the blocks whose slots changed
	 * since this area was written (all of them when it is whole), each
	 * run of them in one write; the others hold what they should
	 */
	nr = ci->slot_blocks;
	b = next_changed_block(a, ops, 0, nr);
	while (!r && b < nr) {
		u64 first = b;

		for (i = 0; i < io.win && b < nr && b == first + i; i++) {
			a->csums[b] = wow_ckpt_block_encode(a, ops,
							    io.buf + i * bs,
							    b, e);
			b = next_changed_block(a, ops, b + 1, nr);
			if (i % WOW_CKPT_YIELD_BLOCKS ==
			    WOW_CKPT_YIELD_BLOCKS - 1)
				ckpt_yield(&io);
		}
		r = wow_sync_io(a->bdev, area_sector(a, 1 + first), io.buf,
				i * bs, REQ_OP_WRITE);
		ci->written += i;
		ckpt_yield(&io);
	}
	if (!r)
		r = write_tail(&io, a, ci, sn);
	kfree(e);
	kvfree(io.buf);
	if (!kept)
		wow_ckpt_snap_free(sn);
	return r;
}

/*
 * Take what a checkpoint of @a (not whole: -E2BIG) holds besides its slot
 * table, as it is now: ci's table sizes, the segments and their
 * tombstones.  The slot table blocks that changed come later, one at a
 * time, from ops->take_block (the log copies each on write, so each is as
 * it was now).  -ENOSPC: too many tombstones.
 */
int wow_ckpt_snap_take(const struct wow_ckpt_area *a, struct wow_ckpt_info *ci,
		       const struct wow_ckpt_ops *ops, struct wow_ckpt_snap *sn)
{
	if (a->whole)
		return -E2BIG;
	sn->ops = *ops;
	return take_segs(a, ci, ops, sn, true);
}

/*
 * Snapshot @sn's entry of segment @s, and the tombstones it counts in
 * all: what its next checkpoint writes (for checks).
 */
const struct wow_ckpt_seg_info *wow_ckpt_snap_seg(const struct wow_ckpt_snap *sn,
						  u64 s)
{
	return &sn->segs[s];
}

u64 wow_ckpt_snap_nr_tombs(const struct wow_ckpt_snap *sn)
{
	return sn->nr_tombs;
}

/*
 * Slot table blocks a background checkpoint takes at a time: the rest
 * stay in the log's index, copied only if they change first.
 */
#define WOW_CKPT_TAKE_BLOCKS	64

/*
 * Write checkpoint @ci into @a from snapshot @sn: its header, the slot
 * table blocks ops->take_block hands over (each run of neighbours in one
 * write), the segment stream, the closing copy.  -EAGAIN when take_block
 * says the snapshot was lost: the checkpoint is not whole, and what it
 * wrote matches @a->csums.
 */
int wow_ckpt_snap_write(const struct wow_ckpt_area *a,
			struct wow_ckpt_info *ci,
			const struct wow_ckpt_snap *sn)
{
	const struct wow_ckpt_ops *ops = &sn->ops;
	u32 bs = a->block_size, per = wow_ckpt_slots_per_block(a->version, bs);
	u64 raw = (u64)per * ops->slot_raw_bytes, *ids;
	struct wow_ckpt_entry *e;
	struct ckpt_io io;
	void *slots;
	u32 n, i, run, take;
	int r;

	ci->written = 1 + (a->closing ? 1 : 0);
	r = io_init(&io, a, ci);
	if (r)
		return r;
	/*
	 * paced, but not while the blocks changed ahead of it fill their
	 * room (ops->hurry): each pause leaves more of them to change first
	 */
	io.pace = true;
	io.ops = ops;
	io.since = ktime_get_ns();
	take = min_t(u32, io.win, WOW_CKPT_TAKE_BLOCKS);
	e = kmalloc_array(per, sizeof(*e), GFP_KERNEL);
	ids = kmalloc_array(io.win, sizeof(*ids), GFP_KERNEL);
	slots = kvmalloc_array(io.win, raw, GFP_KERNEL);
	if (!e || !ids || !slots) {
		r = -ENOMEM;
		goto out;
	}
	r = write_head(a, ci);
	for (n = take; !r && n == take;) {
		/* a batch of blocks, as they were at the snapshot */
		for (n = 0; n < take; n++) {
			r = ops->take_block(ops->ctx, slots + n * raw, &ids[n]);
			if (r <= 0)
				break;
		}
		if (r > 0)
			r = 0;
		for (i = 0; i < n && !r; i++) {
			u32 c = block_slots(a, ids[i]);

			ops->raw_entries(slots + i * raw, c, e);
			a->csums[ids[i]] = block_fill(a, io.buf + i * bs, e, c);
			if (i % WOW_CKPT_YIELD_BLOCKS ==
			    WOW_CKPT_YIELD_BLOCKS - 1)
				ckpt_yield(&io);
		}
		for (i = 0; i < n && !r; i += run) {
			for (run = 1; i + run < n && ids[i + run] == ids[i] + run;
			     run++)
				;
			r = wow_sync_io(a->bdev, area_sector(a, 1 + ids[i]),
					io.buf + i * bs, run * bs, REQ_OP_WRITE);
		}
		/* the CPU was free while it waited, as in stream_flush */
		io.since = ktime_get_ns();
		ci->written += n;
		ckpt_yield(&io);
	}
	if (!r)
		r = write_tail(&io, a, ci, sn);
out:
	kfree(e);
	kfree(ids);
	kvfree(slots);
	kvfree(io.buf);
	return r;
}

/*
 * Reading goes through the portable reader (dm-wow-ckptread.c), which
 * checks everything; here are its reads: a window's read started ahead
 * (rd_start) is waited for by rd_read, the next window's read in flight
 * while the reader takes this one in.
 */
struct ckpt_rd {
	struct wow_ckpt_reader rd;
	const struct wow_ckpt_area *a;
	struct wow_aio aio[2];		/* per window */
	bool started[2];
};

/* The window @buf is (the header's buffer counts as window 0). */
static int rd_window(struct ckpt_rd *io, void *buf)
{
	return buf == io->rd.win[1];
}

static int rd_read(void *ctx, u64 block, u32 n, void *buf)
{
	struct ckpt_rd *io = ctx;
	int k = rd_window(io, buf);

	if (io->started[k]) {
		io->started[k] = false;
		/* between two windows: a chance to give the CPU back */
		cond_resched();
		return wow_aio_wait(&io->aio[k]);
	}
	return wow_sync_io(io->a->bdev, area_sector(io->a, block), buf,
			   n * io->a->block_size, REQ_OP_READ);
}

static void rd_start(void *ctx, u64 block, u32 n, void *buf)
{
	struct ckpt_rd *io = ctx;
	int k = rd_window(io, buf);

	io->started[k] = true;
	wow_aio_start(&io->aio[k], io->a->bdev, area_sector(io->a, block),
		      buf, n * io->a->block_size, REQ_OP_READ);
}

static void rd_init(struct ckpt_rd *io, const struct wow_ckpt_area *a)
{
	memset(io, 0, sizeof(*io));
	io->a = a;
	io->rd = (struct wow_ckpt_reader) {
		.version = a->version,
		.block_size = a->block_size,
		.blocks_per_seg = a->blocks_per_seg,
		.uuid = a->uuid,
		.nr_slots = a->nr_slots,
		.nr_segments = a->nr_segments,
		.max_tombs = a->max_tombs,
		.nr_oblocks = a->nr_oblocks,
		.read = rd_read,
		.start = rd_start,
		.ctx = io,
	};
}

/*
 * Read the header: 0 if it is a valid checkpoint's (in version 3, with a
 * closing copy the same, byte for byte), else -ENOENT.
 */
int wow_ckpt_read_header(const struct wow_ckpt_area *a,
			 struct wow_ckpt_info *ci)
{
	void *blk = kzalloc(2 * a->block_size, GFP_KERNEL);
	struct ckpt_rd io;
	int r;

	if (!blk)
		return -ENOMEM;
	rd_init(&io, a);
	r = wow_ckptread_header(&io.rd, blk, ci);
	kfree(blk);
	return r;
}

/*
 * Read the checkpoint @ci (its header read and valid) and hand every
 * segment, tombstone and valid slot to @ops, in 1 MiB reads, the slot
 * table's a window ahead; @a->csums gets the slot table blocks' crc32cs.
 * -EUCLEAN when a block does not check or an entry is malformed: what was
 * handed over must then be forgotten and the log scanned instead.  A
 * callback's error stops it.
 */
int wow_ckpt_read(const struct wow_ckpt_area *a,
		  const struct wow_ckpt_info *ci,
		  const struct wow_ckpt_load_ops *ops)
{
	u32 win = max(1U, WOW_CKPT_WINDOW_BYTES / a->block_size);
	struct wow_ckpt_reader *rd;
	struct ckpt_rd io;
	int r = -ENOMEM;

	rd_init(&io, a);
	rd = &io.rd;
	rd->win_blocks = win;
	rd->win[0] = kvzalloc(win * a->block_size, GFP_KERNEL);
	rd->win[1] = kvzalloc(win * a->block_size, GFP_KERNEL);
	rd->csums = a->csums;
	rd->segs = kvmalloc_array(a->nr_segments, sizeof(*rd->segs),
				  GFP_KERNEL);
	if (rd->win[0] && rd->win[1] && rd->segs)
		r = wow_ckptread_load(rd, ci, ops);
	kvfree(rd->win[0]);
	kvfree(rd->win[1]);
	kvfree(rd->segs);
	return r;
}
