// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow recovery: format a fresh cache, and load one: from its newest
 * valid checkpoint and a replay of the log after it along its chain, or,
 * with no checkpoint to trust, a scan of the whole log (the records, the
 * proofs of durability, the breaks and where the log goes on, the
 * suspects), then the tombstones' envelope; version 1 caches upgraded.
 * The replay's decisions are dm-wow-chain.c's (the walk) and
 * dm-wow-replay.c's (what a record does), the scan's dm-wow-scan.c's (pure:
 * the userspace tools build them too); here are their reads of the cache
 * device and what they do to the index and the segments.
 *
 * Runs in preresume (and the constructor's format), before the device is
 * live: no worker runs, so the segments, the index and the policy are
 * changed without the lock, which is taken only where a worker could
 * already run.  It calls the segments (dm-wow-seg.h) and the checkpoints
 * (dm-wow-ckptlog.h); nothing calls back into it.
 */
#include <linux/blkdev.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "dm-wow.h"
#include "dm-wow-super.h"
#include "dm-wow-log.h"
#include "dm-wow-seg.h"
#include "dm-wow-ckptlog.h"
#include "dm-wow-ckptread.h"
#include "dm-wow-scan.h"
#include "dm-wow-replay.h"

/* A fresh cache: write the superblock; every segment is free. */
int wow_log_format(struct wow_cache *wc)
{
	struct wow_health_info clear = { };
	u32 bs = wc->args.block_size, i;
	void *buf;
	int r;

	buf = kzalloc(bs, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	/* the health block, all clear; the superblock makes both durable */
	wow_health_encode(buf, bs, wc->sb.uuid, &clear);
	r = wow_sync_io(wc->cache_dev->bdev, bs >> SECTOR_SHIFT, buf, bs,
			REQ_OP_WRITE | REQ_SYNC);
	if (r) {
		kfree(buf);
		return r;
	}
	wow_sb_encode(buf, &wc->sb);
	r = wow_sync_io(wc->cache_dev->bdev, 0, buf, bs,
			REQ_OP_WRITE | REQ_SYNC | REQ_PREFLUSH | REQ_FUA);
	kfree(buf);
	if (r)
		return r;
	for (i = 0; i < wc->nr_segments; i++)
		wow_seg_free_add(wc, i);
	wc->next_seq = wc->sb.format_seq + 1;
	wow_ckptlog_none(wc);
	/*
	 * The chain starts here: a power cut before the first clean shutdown
	 * replays the log from this checkpoint instead of scanning every
	 * segment (a 1 TiB cache: 4.6 GiB read, minutes).
	 */
	r = wow_ckptlog_write(wc, false, true);
	if (r == -ENOSPC)
		r = wow_ckptlog_retire(wc);
	if (!r)
		r = wow_ckptlog_know_both(wc);
	if (r)
		return r;
	DMINFO("%s: formatted %pg: %u segments of %u blocks of %u bytes",
	       wow_name(wc), wc->cache_dev->bdev, wc->nr_segments,
	       wc->blocks_per_seg, bs);
	return 0;
}

/* Recovery's verdicts, as the kernel log says them. */
#define MSG_DURABLE_CORRUPT "%s: log record %llu (segment %u) was durable (record %llu of segment %u says so) but is corrupt; not loading"
#define MSG_DURABLE_HARMLESS "%s: log record %llu (segment %u) was durable but is corrupt; every block it held has a newer version: dropped"
#define MSG_DROPPED "%s: segment %u: dropped a torn or corrupt log record at block %u"
#define MSG_BROKEN "%s: segment %u: the log breaks at block %u and goes on at block %u (record %llu): the records between are lost"
#define MSG_DROPPED_FIRST "%s: segment %u: dropped a torn or corrupt log record at block 0: the first of the segment, so all of its records"

/*
 * The window: blocks [win_off, win_off + win_n) of segment win_seg, read
 * in one go for the scan and the replay.
 */
struct wow_win {
	void *buf;
	u32 win_blocks;		/* its size */
	u32 win_seg;
	u32 win_off;
	u32 win_n;		/* 0: empty */
};

static int win_init(struct wow_cache *wc, struct wow_win *w)
{
	u32 bs = wc->args.block_size;

	/* a record (header and up to 1 MiB of data) fits the window */
	w->win_blocks = min(wc->blocks_per_seg,
			    max(WOW_SCAN_WINDOW_BYTES / bs,
				1 + wc->max_record_blocks));
	w->buf = kvmalloc(array_size(w->win_blocks, bs), GFP_KERNEL);
	return w->buf ? 0 : -ENOMEM;
}

/*
 * Blocks [@off, @off + @n) of segment @s (@n <= win_blocks), from the
 * window; when they are not in it, the window is read again from @off:
 * just @n blocks for a @probe (the first header of a segment, which may
 * hold no record at all), else as much of the segment as it holds, in one
 * large read.  So a segment's records cost a few large reads, not one per
 * header.  Returns the blocks or an ERR_PTR.
 */
static void *scan_blocks(struct wow_cache *wc, struct wow_win *w, u32 s,
			 u32 off, u32 n, bool probe)
{
	u32 bs = wc->args.block_size, len;
	int r;

	if (w->win_n && w->win_seg == s && off >= w->win_off &&
	    off + n <= w->win_off + w->win_n)
		return w->buf + (size_t)(off - w->win_off) * bs;
	len = probe ? n : min(w->win_blocks, wc->blocks_per_seg - off);
	w->win_n = 0;
	r = wow_sync_io(wc->cache_dev->bdev,
			wow_slot_sector(wc, wow_seg_slot(wc, s, off)), w->buf,
			len * bs, REQ_OP_READ);
	if (r)
		return ERR_PTR(r);
	wc->load_bytes += (u64)len * bs;
	w->win_seg = s;
	w->win_off = off;
	w->win_n = len;
	return w->buf;
}

/* ---- the scan of the whole log: dm-wow-scan.c decides ---- */

/* struct wow_scan_ops over the cache device, the index and the segments */
struct wow_scan_ctx {
	struct wow_cache *wc;
	struct wow_win win;
};

static int scan_read(void *ctx, u32 s, u32 off, u32 n, bool probe, void **p)
{
	struct wow_scan_ctx *x = ctx;
	void *b = scan_blocks(x->wc, &x->win, s, off, n, probe);

	if (IS_ERR(b))
		return PTR_ERR(b);
	*p = b;
	return 0;
}

static int scan_reserve_tombs(void *ctx, u32 s, u32 n)
{
	struct wow_scan_ctx *x = ctx;

	return wow_seg_reserve_tombs(x->wc, s, n);
}

static void scan_add_tombs(void *ctx, u32 s, const struct wow_tomb_range *t,
			   u32 n)
{
	struct wow_scan_ctx *x = ctx;

	wow_seg_add_tombs(x->wc, s, t, n);
}

static const struct wow_tomb_range *scan_tombs(void *ctx, u32 s, u32 *n)
{
	struct wow_scan_ctx *x = ctx;

	return wow_seg_tombs(x->wc, s, n);
}

static bool scan_lookup(void *ctx, u64 b, u32 *slot)
{
	struct wow_scan_ctx *x = ctx;

	*slot = wow_index_lookup(&x->wc->index, to_oblock(b));
	return *slot != WOW_NO_SLOT;
}

static void scan_place(void *ctx, u32 slot, u64 b, u64 seq, bool newest,
		       bool has_crc, u32 crc)
{
	struct wow_scan_ctx *x = ctx;
	struct wow_index *ix = &x->wc->index;

	wow_slot_set_oblock(wow_slot_at(ix, slot), to_oblock(b));
	if (!newest)
		return;
	wow_index_insert(ix, to_oblock(b), slot, WOW_SLOT_DIRTY);
	if (has_crc)
		wow_index_set_crc(ix, slot, crc);
}

static bool scan_valid(void *ctx, u32 slot, u64 *b)
{
	struct wow_scan_ctx *x = ctx;
	struct wow_slot *sl = wow_slot_at(&x->wc->index, slot);

	*b = from_oblock(wow_slot_oblock(sl));
	return sl->flags & WOW_SLOT_VALID;
}

static void scan_kill(void *ctx, u32 slot)
{
	struct wow_scan_ctx *x = ctx;

	wow_index_remove(&x->wc->index, slot);
}

static void scan_clean(void *ctx, u32 slot)
{
	struct wow_scan_ctx *x = ctx;

	wow_index_set_flags(&x->wc->index, slot, 0, WOW_SLOT_DIRTY);
}

static void scan_note(void *ctx, const struct wow_scan_note *n)
{
	struct wow_scan_ctx *x = ctx;
	const char *name = wow_name(x->wc);

	switch (n->what) {
	case WOW_SCAN_DROPPED:
		DMWARN(MSG_DROPPED, name, n->seg, n->off);
		break;
	case WOW_SCAN_DROPPED_FIRST:
		DMERR(MSG_DROPPED_FIRST, name, n->seg);
		break;
	case WOW_SCAN_BROKEN:
		DMWARN(MSG_BROKEN, name, n->seg, n->off, n->at, n->seq);
		break;
	case WOW_SCAN_DURABLE_HARMLESS:
		DMWARN(MSG_DURABLE_HARMLESS, name, n->seq, n->seg);
		break;
	case WOW_SCAN_DURABLE_CORRUPT:
		DMERR(MSG_DURABLE_CORRUPT, name, n->seq, n->seg, n->by_seq,
		      n->by_seg);
		break;
	}
}

static void scan_resched(void *ctx)
{
	cond_resched();
}

static const struct wow_scan_ops scan_ops = {
	.read = scan_read,
	.reserve_tombs = scan_reserve_tombs,
	.add_tombs = scan_add_tombs,
	.tombs = scan_tombs,
	.lookup = scan_lookup,
	.place = scan_place,
	.valid = scan_valid,
	.kill = scan_kill,
	.clean = scan_clean,
	.note = scan_note,
	.resched = scan_resched,
};

/*
 * Rebuild the index and the segments from the whole log: every segment,
 * every record (dm-wow-scan.c decides, the ops above read and act); then
 * the tombstones and clean marks, then the suspects are judged.  *@tot:
 * what the scan counted.
 */
static int scan_log(struct wow_cache *wc, struct wow_scan_totals *tot)
{
	struct wow_scan_ctx x = { .wc = wc };
	struct wow_scan_geo g = {
		.uuid = wc->sb.uuid,
		.nr_oblocks = wc->ti->len >> wc->block_shift,
		.nr_segments = wc->nr_segments,
		.blocks_per_seg = wc->blocks_per_seg,
		.block_size = wc->args.block_size,
	};
	struct wow_scan *sc = NULL;
	struct wow_scan_seg life;
	u32 s;
	int r;

	r = win_init(wc, &x.win);
	if (r)
		return r;
	g.win_blocks = x.win.win_blocks;
	sc = wow_scan_alloc(&g, &scan_ops, &x);
	if (!sc) {
		r = -ENOMEM;
		goto out;
	}
	for (s = 0; s < wc->nr_segments; s++) {
		r = wow_scan_segment(sc, s, &life);
		if (r) {
			DMERR("%s: cannot read the log: %d", wow_name(wc), r);
			goto out;
		}
		wow_seg_set_life(wc, s, life.seq, life.max_seq, life.wp);
		cond_resched();
	}
	r = wow_scan_finish(sc);
	*tot = *wow_scan_totals(sc);
out:
	wow_scan_free(sc);
	kvfree(x.win.buf);
	return r;
}

/*
 * Forget what a failed recovery built, so that a retried preresume starts
 * from nothing (and counts nothing twice).
 */
static int reset_log(struct wow_cache *wc)
{
	const struct wow_policy_ops *ops;
	int r;

	wow_seg_reset(wc);
	wc->valid_blocks = 0;
	wc->dirty_blocks = 0;
	ops = wc->policy.ops;
	wow_policy_exit(&wc->policy);
	r = wow_seg_policy_init(wc, ops);
	if (r)
		return r;
	wow_policy_set_drain(&wc->policy, wc->cleaner);
	wow_index_exit(&wc->index);
	/* (a new index's tracks name every slot) */
	wow_ckptlog_forget(wc);
	return wow_index_init(&wc->index, wc->nr_slots);
}

#define MSG_LOADED_CKPT "%s: loaded checkpoint %llu (%llu KiB read): %llu dirty of %llu valid blocks, %u free segments"
#define MSG_RECOVERED "%s: recovered %llu records (%llu KiB read): %llu dirty of %llu valid blocks, %u free segments, %llu dropped"

/*
 * Load from the checkpoint: 0 when the index and the segments came from
 * it; otherwise nothing was kept and the log must be scanned.
 */
static int load_checkpoint(struct wow_cache *wc, struct wow_ckpt_info *ci)
{
	bool touched = false;
	int r = wow_ckptlog_load(wc, ci, &touched);

	if (r && touched && reset_log(wc))
		return -ENOMEM;
	return r;
}

/*
 * Rebuild the index from the log: every segment, every record.  What a
 * clean mark covers is clean; what was destaged since the last mark is
 * destaged again.
 */
#define MSG_STAYS_V1 "%s: format version 1 with no room for a checkpoint: every load scans the whole log; to move to version 4, drain it ('cleaner on' until dirty_blocks is 0) and reload the table with 'format'"

/*
 * After the scan of a version 1 cache: where version 2 keeps its geometry
 * (the checkpoint area fits in erase block 0, which version 1 never
 * writes past the health block), rewrite the superblock as version 2
 * (one sector, FUA), so clean shutdowns write checkpoints from now on.
 * A larger cache stays version 1.
 */
static void upgrade_v1(struct wow_cache *wc)
{
	const struct wow_geometry *g = &wc->sb.geo;
	struct wow_sb_info v2 = wc->sb;
	void *buf;
	int r;

	if (wc->sb.version != 1)
		return;
	if (wow_nr_segments_v(2, g->cache_sectors, g->erase_block_size,
			      g->block_size) != g->nr_segments ||
	    wow_first_segment_sector_v(2, g->nr_segments, g->erase_block_size,
				       g->block_size) !=
	    g->first_segment_sector) {
		DMWARN(MSG_STAYS_V1, wow_name(wc));
		return;
	}
	buf = kzalloc(g->block_size, GFP_KERNEL);
	if (!buf)
		return;
	v2.version = 2;
	wow_sb_encode(buf, &v2);
	r = wow_sync_io(wc->cache_dev->bdev, 0, buf, g->block_size,
			REQ_OP_WRITE | REQ_SYNC | REQ_FUA);
	kfree(buf);
	if (r) {
		DMWARN("%s: cannot upgrade the superblock to format version 2: %d",
		       wow_name(wc), r);
		return;
	}
	wc->sb.version = 2;
	DMINFO("%s: upgraded to format version 2 (checkpoints at clean shutdown)",
	       wow_name(wc));
}

/* ---- replay of the log since the checkpoint, along its chain ---- */

struct replay_run {
	/*
	 * first: the replay's effects on the index and the held tombstones
	 * that the scan has too are the scan's own callbacks, which take a
	 * pointer to this
	 */
	struct wow_scan_ctx sc;
	struct wow_replay core;		/* the decisions: dm-wow-replay.c */
	struct wow_seqs seqs;		/* of the records replayed */
	u32 *crcs;			/* one record's block crcs */
	u64 expected;			/* seq of the next record */
	u64 records;
	u64 dropped;			/* a torn tail, as the scan says */
};

/* the scan's callbacks take a struct replay_run as its struct wow_scan_ctx */
static_assert(offsetof(struct replay_run, sc) == 0);

/* struct wow_replay_ops over the cache's index and segments */
static void rops_insert(void *ctx, u64 b, u32 slot)
{
	struct replay_run *x = ctx;

	wow_index_insert(&x->sc.wc->index, to_oblock(b), slot, WOW_SLOT_DIRTY);
}

static void rops_set_crc(void *ctx, u32 slot, u32 crc)
{
	struct replay_run *x = ctx;

	wow_index_set_crc(&x->sc.wc->index, slot, crc);
}

static u64 rops_seq(void *ctx, u32 slot)
{
	struct replay_run *x = ctx;

	return wow_seqs_get(&x->seqs, slot);
}

static int rops_set_seq(void *ctx, u32 slot, u64 seq)
{
	struct replay_run *x = ctx;

	return wow_seqs_set(&x->seqs, slot, seq);
}

static u64 rops_ckpt_max(void *ctx, u32 s)
{
	struct replay_run *x = ctx;

	return wow_seg_seq(x->sc.wc, s) ? wow_seg_max_seq(x->sc.wc, s) : 0;
}

static void rops_new_life(void *ctx, u32 s, u64 seq)
{
	struct replay_run *x = ctx;

	wow_seg_new_life(x->sc.wc, s, seq);
}

static void rops_add_tomb(void *ctx, u32 s, const struct wow_tomb_range *t)
{
	struct replay_run *x = ctx;

	wow_seg_add_tombs(x->sc.wc, s, t, 1);
}

static void rops_written(void *ctx, u32 s, u64 seq, u32 wp)
{
	struct replay_run *x = ctx;

	wow_seg_set_written(x->sc.wc, s, seq, wp);
}

static const struct wow_replay_ops replay_effects = {
	.lookup = scan_lookup,
	.valid = scan_valid,
	.insert = rops_insert,
	.remove = scan_kill,
	.clean = scan_clean,
	.set_crc = rops_set_crc,
	.seq = rops_seq,
	.set_seq = rops_set_seq,
	.ckpt_max = rops_ckpt_max,
	.new_life = rops_new_life,
	.reserve_tombs = scan_reserve_tombs,
	.add_tomb = rops_add_tomb,
	.written = rops_written,
};

/* struct wow_chain_ops over the cache device, for wow_chain_replay(). */
static int replay_header(void *ctx, u32 s, u32 off, bool probe,
			 enum wow_rec_kind *kind, struct wow_record_info *ri)
{
	struct replay_run *x = ctx;
	struct wow_cache *wc = x->sc.wc;
	void *hdr;

	/* a probe reads the header block alone (where the log may end) */
	hdr = scan_blocks(wc, &x->sc.win, s, off, 1, probe || !off);
	if (IS_ERR(hdr))
		return PTR_ERR(hdr);
	*kind = wow_record_check(hdr, wc->args.block_size, wc->sb.uuid, ri);
	return 0;
}

static int replay_data(void *ctx, u32 s, u32 off,
		       const struct wow_record_info *ri)
{
	struct replay_run *x = ctx;
	struct wow_cache *wc = x->sc.wc;
	u32 bs = wc->args.block_size, done, n, csum = ~0U;
	void *p;

	/*
	 * A probe read the header alone: read the record again from its
	 * header, with the rest of the segment, so that the data and the
	 * header apply reads come from one window (else the segment is read
	 * twice: from the data on, then from the header on).
	 */
	if (ri->nr_data) {
		p = scan_blocks(wc, &x->sc.win, s, off, 2, false);
		if (IS_ERR(p))
			return PTR_ERR(p);
		wow_scan_save_crcs(x->crcs, p, ri);
	}
	for (done = 0; done < ri->nr_data; done += n) {
		n = min(ri->nr_data - done, x->sc.win.win_blocks);
		p = scan_blocks(wc, &x->sc.win, s, off + 1 + done, n, false);
		if (IS_ERR(p))
			return PTR_ERR(p);
		if (!wow_scan_data_check(x->crcs, ri, done, p, n, bs, &csum))
			return false;
	}
	return (ri->flags & WOW_REC_CRCS) || csum == ri->data_csum;
}

/* what the record does is dm-wow-replay.c's decision */
static int replay_apply(void *ctx, u32 s, u32 off,
			const struct wow_record_info *ri)
{
	struct replay_run *x = ctx;
	void *hdr = scan_blocks(x->sc.wc, &x->sc.win, s, off, 1, false);

	if (IS_ERR(hdr))
		return PTR_ERR(hdr);
	cond_resched();
	return wow_replay_apply(&x->core, s, off, hdr, ri);
}

static void replay_torn(void *ctx, u32 s, u32 off)
{
	struct replay_run *x = ctx;

	DMWARN(MSG_DROPPED, wow_name(x->sc.wc), s, off);
}

static const struct wow_chain_ops replay_ops = {
	.header = replay_header,
	.data = replay_data,
	.apply = replay_apply,
	.torn = replay_torn,
};

#define MSG_CHAIN_CORRUPT "%s: log record %llu was durable (record %llu says so) but is corrupt; not loading"

/*
 * Replay the log written since the checkpoint @ci along its chain
 * (dm-wow-chain.c decides the walk, dm-wow-replay.c what each record
 * does; the callbacks above read and apply).
 */
static int replay_chain(struct replay_run *x, const struct wow_ckpt_info *ci)
{
	struct wow_cache *wc = x->sc.wc;
	struct wow_chain c = {
		.nr_segments = wc->nr_segments,
		.blocks_per_seg = wc->blocks_per_seg,
		.head_seg = ci->head_seg,
		.head_wp = ci->head_wp,
		.next_seg = ci->next_seg,
		.next_seq = ci->next_seq,
		.head_life = ci->head_seg < wc->nr_segments ?
			     wow_seg_seq(wc, ci->head_seg) : 0,
	};
	int r = wow_chain_replay(&c, &replay_ops, x);

	x->expected = c.expected;
	x->records = c.records;
	x->dropped = c.dropped;
	if (r == -EUCLEAN)
		DMERR(MSG_CHAIN_CORRUPT, wow_name(wc), c.expected,
		      c.vouched_by);
	return r;
}

/*
 * After a checkpoint was loaded: replay what was logged since.  Sets
 * *@expected to the seq after the last record replayed.
 */
static int replay_log(struct wow_cache *wc, const struct wow_ckpt_info *ci,
		      u64 *expected, u64 *dropped)
{
	struct replay_run x = {
		.sc.wc = wc,
		.core = {
			.nr_segments = wc->nr_segments,
			.blocks_per_seg = wc->blocks_per_seg,
			.nr_slots = wc->nr_slots,
			.nr_oblocks = wc->ti->len >> wc->block_shift,
			.ops = &replay_effects,
		},
	};
	u32 bs = wc->args.block_size;
	int r = -ENOMEM;

	x.core.ctx = &x;
	win_init(wc, &x.sc.win);
	x.crcs = kvmalloc_array(wow_record_capacity(bs, 0, 0), sizeof(u32),
				GFP_KERNEL);
	/* the chunks themselves as records are replayed (wow_seqs_set) */
	if (wow_seqs_init(&x.seqs, wc->nr_slots, false) || !x.sc.win.buf ||
	    !x.crcs || wow_replay_init(&x.core))
		goto out;
	r = replay_chain(&x, ci);
	*expected = x.expected;
	*dropped = x.dropped;
	if (!r && x.records)
		DMINFO("%s: replayed %llu records written after checkpoint %llu",
		       wow_name(wc), x.records, ci->generation);
out:
	wow_replay_free(&x.core);
	kvfree(x.crcs);
	wow_seqs_free(&x.seqs);
	kvfree(x.sc.win.buf);
	return r;
}

/*
 * wow_index_count's view of valid slot @slot of segment @s, after a load:
 * counted in its segment, and a dirty one in the policy (may sleep)
 */
static int count_slot(void *ctx, u32 slot, u32 s, bool dirty)
{
	struct wow_cache *wc = ctx;
	struct wow_slot *sl = wow_slot_at(&wc->index, slot);
	struct wow_group *g;

	wow_seg_count(wc, s, 1, 0, 0);
	if (!dirty)
		return 0;
	if (!wc->policy.nr_spare) {
		g = kmalloc(wow_policy_group_bytes(&wc->policy), GFP_KERNEL);
		if (!g)
			return -ENOMEM;
		wow_policy_add_spare(&wc->policy, g);
	}
	wow_policy_mark_dirty(&wc->policy, from_oblock(wow_slot_oblock(sl)));
	wow_seg_count(wc, s, 0, 1, 0);
	return 0;
}

/* A load's sources, for wow_load_log, and what they tell the load. */
struct load_run {
	struct wow_cache *wc;
	struct wow_ckpt_info ci;
	struct wow_scan_totals tot;
	u64 newest;
};

static int load_ckpt(void *ctx)
{
	struct load_run *l = ctx;
	int r = load_checkpoint(l->wc, &l->ci);

	if (r == -ENOMEM)
		return r;
	return r ? 1 : 0;
}

static int load_replay(void *ctx, u64 *seen)
{
	struct load_run *l = ctx;
	u64 expected;
	int r = replay_log(l->wc, &l->ci, &expected, &l->tot.dropped);

	if (r)
		return r;
	*seen = expected - 1;
	l->newest = expected - 1;
	return 0;
}

static int load_scan(void *ctx, u64 *seen)
{
	struct load_run *l = ctx;
	int r = scan_log(l->wc, &l->tot);

	if (r)
		return r;
	*seen = l->tot.max_seen;
	l->newest = l->tot.max_seq;
	return 0;
}

#ifdef WOW_TEST_HOOKS
/*
 * Test builds only: one kernel log line per load with what it loaded, for
 * a scenario to compare with wowctl dump's view of the same image before
 * the load (crash-flush-points: the tools and the module agree): the
 * source, the next seq, records dropped, the counts, free segments and a
 * digest of the index.  The digest folds each valid slot, in slot order
 * (the slot, its origin block's low and high halves, 1 when dirty), into
 * two 32-bit polynomial hashes that the guest's awk computes exactly.
 */
static bool test_load_report;
module_param(test_load_report, bool, 0644);
MODULE_PARM_DESC(test_load_report,
		 "test builds: log each load's counts and index digest");

#define MSG_TEST_LOADED "%s: test: loaded from %s, next seq %llu, %llu dropped, %llu valid, %llu dirty, %u free segments, index digest %u.%u"

static void fold(u32 *h, u32 *g, u32 x)
{
	*h = *h * 65599 + x;
	*g = *g * 1000003 + x;
}

static void test_report_load(struct wow_cache *wc, bool from_ckpt,
			     u64 next_seq, u64 dropped)
{
	struct wow_slot *sl;
	u32 h = 0, g = 0, i;
	u64 ob;

	if (!READ_ONCE(test_load_report))
		return;
	for (i = 0; i < wc->nr_slots; i++) {
		if (!(i & 0xffff))
			cond_resched();
		sl = wow_slot_at(&wc->index, i);
		if (!(sl->flags & WOW_SLOT_VALID))
			continue;
		ob = from_oblock(wow_slot_oblock(sl));
		fold(&h, &g, i);
		fold(&h, &g, lower_32_bits(ob));
		fold(&h, &g, upper_32_bits(ob));
		fold(&h, &g, !!(sl->flags & WOW_SLOT_DIRTY));
	}
	DMINFO(MSG_TEST_LOADED, wow_name(wc),
	       from_ckpt ? "checkpoint" : "log", next_seq, dropped,
	       wc->valid_blocks, wc->dirty_blocks, wow_seg_nr_free(wc), h, g);
}
#else
static void test_report_load(struct wow_cache *wc, bool from_ckpt,
			     u64 next_seq, u64 dropped)
{
}
#endif

/*
 * Load the index and the segments: from the checkpoint when a valid one
 * is on disk, and the log written since it (nothing after a clean
 * shutdown), else from the whole log (wow_load_log, the tools' rule
 * too).  The newest record of each block wins, unless a tombstone kills
 * it.  A recovered copy is dirty unless a
 * clean mark covers it.  Then a new checkpoint anchors the log's chain:
 * the next record is the one it names.
 */
int wow_log_recover(struct wow_cache *wc)
{
	struct load_run l = { .wc = wc };
	const struct wow_load_ops ops = {
		.ckpt = load_ckpt,
		.replay = load_replay,
		.scan = load_scan,
		.ctx = &l,
	};
	u32 i, n;
	int r;

	/* a failed earlier attempt could not rebuild the index */
	if (!wc->index.slot_chunks && wow_index_init(&wc->index, wc->nr_slots))
		return -ENOMEM;

	wc->load_bytes = 0;
	/* a new epoch: nothing written from now on vouches for a dropped record */
	r = wow_load_log(&ops, wc->sb.format_seq, &wc->next_seq);
	if (r)
		goto out;
	if (!wc->next_seq) {
		DMERR("%s: log sequence numbers exhausted; not loading",
		      wow_name(wc));
		r = -EOVERFLOW;
		goto out;
	}

	/* count what survived; survivors are dirty unless marked clean */
	for (i = 0; i < wc->nr_slots; i += n) {
		n = min(wc->nr_slots - i, 0x10000U);
		cond_resched();
		r = wow_index_count(&wc->index, i, n, wc->blocks_per_seg,
				    &wc->valid_blocks, &wc->dirty_blocks,
				    count_slot, wc);
		if (r)
			goto out;
	}

	r = wow_seg_prune_tombs(wc);
	if (r)
		goto out;
	/* empty segments first, then dead ones, oldest content first */
	r = wow_seg_load_done(wc);
	if (r)
		goto out;

	wc->completed_seq = l.newest;
	wc->durable_seq = l.newest;
	wc->load_dropped = l.tot.dropped;
	wc->load_from_ckpt = wow_ckptlog_loaded(wc);
	test_report_load(wc, wc->load_from_ckpt, wc->next_seq, l.tot.dropped);
	upgrade_v1(wc);
	/*
	 * whatever was read, the chain starts again here (a new epoch: the
	 * checkpoint loaded from no longer leads to the log head)
	 */
	r = wow_ckptlog_write(wc, false, true);
	if (r == -ENOSPC)
		r = wow_ckptlog_retire(wc);
	if (!r)
		r = wow_ckptlog_know_both(wc);
	if (r) {
		DMERR("%s: cannot write a checkpoint at load: %d",
		      wow_name(wc), r);
		goto out;
	}
	if (wc->load_from_ckpt)
		DMINFO(MSG_LOADED_CKPT, wow_name(wc), l.ci.generation,
		       wc->load_bytes >> 10, wc->dirty_blocks, wc->valid_blocks,
		       wow_seg_nr_free(wc));
	else
		DMINFO(MSG_RECOVERED, wow_name(wc), l.tot.records,
		       wc->load_bytes >> 10, wc->dirty_blocks, wc->valid_blocks,
		       wow_seg_nr_free(wc), l.tot.dropped);
	r = 0;
out:
	if (r) {
		if (reset_log(wc))
			DMERR("%s: cannot reset the index after a failed recovery",
			      wow_name(wc));
	}
	return r;
}

