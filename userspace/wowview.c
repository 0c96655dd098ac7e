// SPDX-License-Identifier: GPL-2.0
/*
 * wowcache's view (see wowcache.h): what a load of the cache rebuilds,
 * by the kernel's own recovery, built here: the checkpoint read and
 * loaded by dm-wow-ckptread.c, the log after it replayed along its chain
 * (dm-wow-chain.c, dm-wow-replay.c), or the whole log scanned
 * (dm-wow-scan.c); the callbacks below read the image and apply to the
 * view, as dm-wow-recover.c's do to the cache.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../dm-wow/dm-wow-types.h"
#include "../dm-wow/dm-wow-format.h"
#include "../dm-wow/dm-wow-index.h"
#include "../dm-wow/dm-wow-chain.h"
#include "../dm-wow/dm-wow-ckpt.h"
#include "../dm-wow/dm-wow-ckptread.h"
#include "../dm-wow/dm-wow-record.h"
#include "../dm-wow/dm-wow-replay.h"
#include "../dm-wow/dm-wow-scan.h"
#include "../dm-wow/dm-wow-tombs.h"

#include "wowcache-int.h"

/* ---- the index: the kernel's (dm-wow-index.c) ---- */

uint32_t wowc_lookup(const struct wowc_view *v, uint64_t ob)
{
	return wow_index_lookup(v->ix, to_oblock(ob));
}

uint64_t wowc_slot(const struct wowc_view *v, uint32_t slot)
{
	const struct wow_slot *sl = wow_slot_at(v->ix, slot);

	return (from_oblock(wow_slot_oblock(sl)) & WOWC_SLOT_OBLOCK) |
	       (sl->flags & WOW_SLOT_DIRTY ? WOWC_SLOT_DIRTY : 0) |
	       (sl->flags & WOW_SLOT_VALID ? WOWC_SLOT_VALID : 0);
}

static void ix_insert(struct wowc_view *v, uint64_t ob, uint32_t slot,
		      bool dirty)
{
	wow_index_insert(v->ix, to_oblock(ob), slot,
			 dirty ? WOW_SLOT_DIRTY : 0);
}

static void ix_clean(struct wowc_view *v, uint32_t slot)
{
	wow_index_set_flags(v->ix, slot, 0, WOW_SLOT_DIRTY);
}

/*
 * ---- the log scan: the kernel's own (dm-wow-scan.c) decides; here its
 * reads and what it does to the view ----
 */

struct scan {
	struct wowc *c;
	struct wowc_view *v;
	uint8_t *buf;		/* one segment */
	uint32_t buf_seg;	/* which, UINT32_MAX: none */
	bool buf_whole;		/* all of it, else block 0 only */
	int io_err;
};


/* Block @off of segment @s; block 0 alone is read first (a probe). */
static const uint8_t *blk(struct scan *sc, uint32_t s, uint32_t off)
{
	const struct wowc *c = sc->c;
	int r;

	if (sc->buf_seg != s || (!sc->buf_whole && off)) {
		sc->buf_seg = UINT32_MAX;
		r = wowc_read(c, sc->buf, off ? (size_t)c->bps * c->bs : c->bs,
			      wowc_seg_offset(c, s));
		if (r) {
			sc->io_err = r;
			return NULL;
		}
		sc->buf_seg = s;
		sc->buf_whole = off != 0;
	}
	return sc->buf + (size_t)off * c->bs;
}

/*
 * wow_record_judge: the kernel's verdict, and in *@why (when @why) what
 * is wrong with a bad header; @ri is zero for a foreign one
 */
static enum wow_rec_kind rec_check(const struct wowc *c, const uint8_t *hdr,
				   struct wow_record_info *ri,
				   const char **why)
{
	memset(ri, 0, sizeof(*ri));
	if (why)
		*why = NULL;
	return wow_record_judge(hdr, c->bs, c->sb.uuid, ri, why);
}

static int grow(void **p, size_t *max, size_t want, size_t size)
{
	size_t n = *max ? *max : 8;
	void *q;

	if (want <= *max)
		return 0;
	while (n < want)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*max = n;
	return 0;
}

static int seg_add_tomb(struct wowc_seg *seg, const struct wow_tomb_range *t,
			uint32_t at)
{
	size_t max = seg->max_tombs;

	if (grow((void **)&seg->tombs, &max, (size_t)at + 1,
		 sizeof(*seg->tombs)))
		return -ENOMEM;
	seg->max_tombs = max;
	seg->tombs[at] = *t;
	return 0;
}

static int add_rec(struct wowc_seg *seg, const struct wow_record_info *ri,
		   uint32_t block, enum wowc_rec_status st, const char *why)
{
	size_t max = seg->max_recs;
	struct wowc_rec *r;

	if (grow((void **)&seg->recs, &max, (size_t)seg->nr_recs + 1,
		 sizeof(*seg->recs)))
		return -ENOMEM;
	seg->max_recs = max;
	r = &seg->recs[seg->nr_recs++];
	r->seq = ri->seq;
	r->seg_seq = ri->seg_seq;
	r->durable_seq = ri->durable_seq;
	r->block = block;
	r->nr_data = ri->nr_data;
	r->nr_tombs = ri->nr_tombs;
	r->next_seg = ri->next_seg;
	r->status = st;
	r->why = why;
	return 0;
}

static int add_lost(struct wowc_view *v, uint64_t ob, uint64_t seq)
{
	if (grow((void **)&v->lost, &v->max_lost, v->nr_lost + 1,
		 sizeof(*v->lost)))
		return -ENOMEM;
	v->lost[v->nr_lost].oblock = ob;
	v->lost[v->nr_lost++].seq = seq;
	return 0;
}

/* ---- the checkpoint's load: struct wow_ckpt_load_ops over the view ---- */

static int ckpt_load_seg(void *ctx, u64 s, const struct wow_ckpt_seg_info *si)
{
	struct wowc_seg *seg = &((struct wowc_view *)ctx)->segs[s];

	seg->seq = si->seq;
	seg->max_seq = si->max_seq;
	seg->wp = si->wp;
	return 0;
}

static int ckpt_load_tomb(void *ctx, u64 s, const struct wow_tomb_range *tr)
{
	struct wowc_seg *seg = &((struct wowc_view *)ctx)->segs[s];

	return seg_add_tomb(seg, tr, seg->nr_tombs++);
}

static bool ckpt_cached(void *ctx, u64 ob)
{
	return wowc_lookup(ctx, ob) != WOWC_NO_SLOT;
}

static int ckpt_load_slot(void *ctx, u64 slot, u64 ob, bool dirty, u32 crc,
			  bool has_crc)
{
	struct wowc_view *v = ctx;

	(void)crc;
	(void)has_crc;
	ix_insert(v, ob, slot, dirty);
	return 0;
}

/* What the reader found wrong, in words: with its index, then its value. */
static const char *const ckpt_faults[] = {
	[WOW_CKPT_FAULT_STREAM_BLOCK] = "segment stream block %" PRIu64 " does not check",
	[WOW_CKPT_FAULT_STREAM_END] = "the segment stream ends before its entries",
	[WOW_CKPT_FAULT_SEG] = "segment %" PRIu64 "'s entry makes no sense",
	[WOW_CKPT_FAULT_TOMB_TOTAL] = "the segments hold %" PRIu64 " tombstones, the header says %" PRIu64,
	[WOW_CKPT_FAULT_TOMB] = "a tombstone of segment %" PRIu64 " makes no sense",
	[WOW_CKPT_FAULT_SLOT_BLOCK] = "slot table block %" PRIu64 " does not check",
	[WOW_CKPT_FAULT_SLOT] = "slot %" PRIu64 "'s entry is malformed",
	[WOW_CKPT_FAULT_SLOT_PLACE] = "slot %" PRIu64 " (origin block %" PRIu64 ") makes no sense",
};

/*
 * Load the valid checkpoint into @v with the kernel's reader: 0, or a
 * reason in @why (the kernel then forgets it and scans the log), or
 * -errno.
 */
static int ckpt_load(struct wowc *c, struct wowc_view *v, char *why,
		     size_t whylen)
{
	const struct wowc_ckpt *k = &c->ckpt;
	const struct wow_ckpt_load_ops ops = {
		.load_seg = ckpt_load_seg,
		.load_tomb = ckpt_load_tomb,
		.cached = ckpt_cached,
		.load_slot = ckpt_load_slot,
		.ctx = v,
	};
	const struct wow_ckpt_info ci = {
		.valid = true,
		.generation = k->generation,
		.next_seq = k->next_seq,
		.completed_seq = k->completed_seq,
		.nr_slots = k->nr_slots,
		.nr_segments = k->nr_segments,
		.slot_blocks = k->slot_blocks,
		.seg_blocks = k->seg_blocks,
		.nr_tombs = k->nr_tombs,
	};
	struct wow_ckpt_reader rdr;
	int r = -ENOMEM;

	wowc_ckpt_reader(c, &rdr);
	/*
	 * one window for the whole stream, then the whole slot table: every
	 * block checked before an entry is read, so the first fault named is
	 * the one it always was
	 */
	rdr.win_blocks = max(k->seg_blocks, k->slot_blocks);
	rdr.win[0] = wowc_xalloc((size_t)rdr.win_blocks * c->bs);
	rdr.csums = calloc(k->slot_blocks ? k->slot_blocks : 1,
			   sizeof(*rdr.csums));
	rdr.segs = calloc(c->nr_segments ? c->nr_segments : 1,
			  sizeof(*rdr.segs));
	if (rdr.win[0] && rdr.csums && rdr.segs)
		r = wow_ckptread_load(&rdr, &ci, &ops);
	if (r == -EUCLEAN) {
		snprintf(why, whylen, ckpt_faults[rdr.fault] ?: "it does not check",
			 rdr.fault_index, rdr.fault_value);
		r = 1;
	}
	free(rdr.win[0]);
	free(rdr.csums);
	free(rdr.segs);
	return r;
}

/*
 * The view's side of the kernel's ops that the scan and the replay both
 * take (struct wow_scan_ops, struct wow_replay_ops): one body each.
 */
static bool view_lookup(struct wowc_view *v, u64 b, u32 *slot)
{
	*slot = wowc_lookup(v, b);
	return *slot != WOWC_NO_SLOT;
}

static bool view_valid(struct wowc_view *v, u32 slot, u64 *b)
{
	const struct wow_slot *sl = wow_slot_at(v->ix, slot);

	*b = from_oblock(wow_slot_oblock(sl));
	return sl->flags & WOW_SLOT_VALID;
}

static int view_reserve_tombs(struct wowc_view *v, u32 s, u32 n)
{
	struct wowc_seg *seg = &v->segs[s];
	size_t max = seg->max_tombs;

	if (grow((void **)&seg->tombs, &max, (size_t)seg->nr_tombs + n,
		 sizeof(*seg->tombs)))
		return -ENOMEM;
	seg->max_tombs = max;
	return 0;
}

/* ---- the replay after a checkpoint (dm-wow-recover.c replay_*) ---- */

/*
 * The checkpoint is a base: written periodically, at a clean shutdown and
 * at the end of every load, its header names the log head (head_seg,
 * head_wp, next_seg, next_seq).  What was logged after it is replayed
 * along the log's chain: record after record, seq one more each time, in
 * the head segment from head_wp on, and where a segment's records end, at
 * block 0 of the segment the last record (or the header, before any
 * record) names as next.
 */
struct replay {
	struct scan sc;		/* the buffer; sc.v the view */
	struct wow_replay core;	/* what a record does: dm-wow-replay.c */
	uint8_t *hdr;		/* a copy of the record being applied */
	u32 *crcs;		/* its block crcs (wow_scan_save_crcs) */
	bool past_end;		/* a record named a block past the origin */
};

/* struct wow_replay_ops over the view */
static bool rops_lookup(void *ctx, u64 b, u32 *slot)
{
	return view_lookup(((struct replay *)ctx)->sc.v, b, slot);
}

static bool rops_valid(void *ctx, u32 slot, u64 *b)
{
	return view_valid(((struct replay *)ctx)->sc.v, slot, b);
}

static void rops_insert(void *ctx, u64 b, u32 slot)
{
	struct replay *rp = ctx;

	ix_insert(rp->sc.v, b, slot, true);
}

static void rops_remove(void *ctx, u32 slot)
{
	struct replay *rp = ctx;

	wow_index_remove(rp->sc.v->ix, slot);
}

static void rops_clean(void *ctx, u32 slot)
{
	struct replay *rp = ctx;

	ix_clean(rp->sc.v, slot);
}

static u64 rops_seq(void *ctx, u32 slot)
{
	struct replay *rp = ctx;

	return rp->sc.v->slot_seq[slot];
}

/* a copy's seq is known from here on: no cover of it is uncertain */
static int rops_set_seq(void *ctx, u32 slot, u64 seq)
{
	struct replay *rp = ctx;

	rp->sc.v->slot_seq[slot] = seq;
	rp->sc.v->uncertain[slot] = 0;
	return 0;
}

static u64 rops_ckpt_max(void *ctx, u32 s)
{
	struct replay *rp = ctx;
	const struct wowc_seg *seg = &rp->sc.v->segs[s];

	return seg->seq ? seg->max_seq : 0;
}

static void rops_new_life(void *ctx, u32 s, u64 seq)
{
	struct replay *rp = ctx;
	struct wowc_seg *seg = &rp->sc.v->segs[s];

	seg->seq = seq;
	seg->max_seq = 0;
	seg->wp = 0;
	seg->nr_tombs = 0;
}

static int rops_reserve_tombs(void *ctx, u32 s, u32 n)
{
	return view_reserve_tombs(((struct replay *)ctx)->sc.v, s, n);
}

static void rops_add_tomb(void *ctx, u32 s, const struct wow_tomb_range *t)
{
	struct replay *rp = ctx;
	struct wowc_seg *seg = &rp->sc.v->segs[s];

	seg->tombs[seg->nr_tombs++] = *t;
}

static void rops_written(void *ctx, u32 s, u64 seq, u32 wp)
{
	struct replay *rp = ctx;
	struct wowc_seg *seg = &rp->sc.v->segs[s];

	seg->max_seq = seq;
	seg->wp = wp;
}

/*
 * A checkpointed copy is covered only when t reaches its life's newest
 * seq.  When t lies within that life (t >= its first seq), the copy may
 * or may not be older than t: the kernel keeps it (dirty, or valid);
 * noted in v->uncertain for check's comparison with the scan.
 */
static void rops_uncovered(void *ctx, u32 slot, const struct wow_tomb_range *t)
{
	struct replay *rp = ctx;
	struct wowc_view *v = rp->sc.v;
	bool clean = t->flags & WOW_TOMB_CLEAN;

	if (t->t >= v->segs[slot / rp->sc.c->bps].seq &&
	    (!clean || (wowc_slot(v, slot) & WOWC_SLOT_DIRTY)))
		v->uncertain[slot] |= clean ? WOWC_UNSURE_CLEAN :
					      WOWC_UNSURE_KILL;
}

static const struct wow_replay_ops replay_effects = {
	.lookup = rops_lookup,
	.valid = rops_valid,
	.insert = rops_insert,
	.remove = rops_remove,
	.clean = rops_clean,
	.seq = rops_seq,
	.set_seq = rops_set_seq,
	.ckpt_max = rops_ckpt_max,
	.new_life = rops_new_life,
	.reserve_tombs = rops_reserve_tombs,
	.add_tomb = rops_add_tomb,
	.written = rops_written,
	.uncovered = rops_uncovered,
};

/*
 * The chain's decisions, and what each record does, are the module's own
 * (dm-wow-chain.c, dm-wow-replay.c, built here too); these callbacks read
 * through the scan's buffer, and the ops above apply to the view, as
 * dm-wow-recover.c's do to the cache.
 */
static int chain_header(void *ctx, uint32_t s, uint32_t off, bool probe,
			enum wow_rec_kind *kind, struct wow_record_info *wi)
{
	struct replay *rp = ctx;
	const uint8_t *p = blk(&rp->sc, s, off);

	(void)probe;
	if (!p)
		return rp->sc.io_err;
	*kind = rec_check(rp->sc.c, p, wi, NULL);
	return 0;
}

/*
 * The record's data checks, by the scan's own check (as the kernel's
 * replay_data); its header is kept for chain_apply.
 */
static int chain_data(void *ctx, uint32_t s, uint32_t off,
		      const struct wow_record_info *wi)
{
	struct replay *rp = ctx;
	const struct wowc *c = rp->sc.c;
	const uint8_t *p = blk(&rp->sc, s, off);
	u32 csum = ~0U;

	if (!p)
		return rp->sc.io_err;
	memcpy(rp->hdr, p, c->bs);
	if (wi->nr_data) {
		wow_scan_save_crcs(rp->crcs, rp->hdr, wi);
		p = blk(&rp->sc, s, off + 1);
		if (!p)
			return rp->sc.io_err;
		if (!wow_scan_data_check(rp->crcs, wi, 0, p, wi->nr_data,
					 c->bs, &csum))
			return false;
	}
	return (wi->flags & WOW_REC_CRCS) || csum == wi->data_csum;
}

static int chain_apply(void *ctx, uint32_t s, uint32_t off,
		       const struct wow_record_info *ri)
{
	struct replay *rp = ctx;
	const struct wowc *c = rp->sc.c;
	struct wowc_view *v = rp->sc.v;
	int r;

	r = wow_replay_apply(&rp->core, s, off, rp->hdr, ri);
	if (r == -EUCLEAN) {
		v->refused = true;
		rp->past_end = true;
		wowc_problem(&v->probs, WOWC_SEV_ERROR,
			     "log record %" PRIu64 " (segment %u, block %u), replayed after checkpoint %" PRIu64 ", names an origin block past the origin's end: the kernel refuses to load this cache",
			     (uint64_t)ri->seq, s, off, c->ckpt.generation);
	}
	return r;
}

static const struct wow_chain_ops chain_ops = {
	.header = chain_header,
	.data = chain_data,
	.apply = chain_apply,
};

/*
 * replay_log: after the checkpoint was loaded into @v, the log written
 * since it, along its chain.  0, 1 when the kernel would refuse the load,
 * or -errno.
 */
static int replay_log(struct wowc *c, struct wowc_view *v)
{
	struct replay rp = {
		.sc = { .c = c, .v = v, .buf_seg = UINT32_MAX },
		.core = {
			.nr_segments = c->nr_segments, .blocks_per_seg = c->bps,
			.nr_slots = c->nr_slots, .nr_oblocks = c->nr_oblocks,
			.ops = &replay_effects,
		},
	};
	struct wow_chain ch = {
		.nr_segments = c->nr_segments, .blocks_per_seg = c->bps,
		.head_seg = c->ckpt.head_seg, .head_wp = c->ckpt.head_wp,
		.next_seg = c->ckpt.next_seg, .next_seq = c->ckpt.next_seq,
	};
	int r = -ENOMEM;

	rp.core.ctx = &rp;
	rp.sc.buf = wowc_xalloc((size_t)c->bps * c->bs);
	rp.hdr = malloc(c->bs);
	rp.crcs = calloc(wow_record_capacity(c->bs, 0, 0), sizeof(*rp.crcs));
	if (!rp.sc.buf || !rp.hdr || !rp.crcs || wow_replay_init(&rp.core))
		goto out;
	if (ch.head_seg < c->nr_segments)
		ch.head_life = v->segs[ch.head_seg].seq;
	r = wow_chain_replay(&ch, &chain_ops, &rp);
	v->replay_end = (uint64_t)ch.expected;
	v->nr_replayed += ch.records;
	v->nr_replay_dropped += ch.dropped;
	if (r == -EUCLEAN && !rp.past_end) {
		v->refused = true;
		wowc_problem(&v->probs, WOWC_SEV_ERROR,
			     "log record %" PRIu64 " was durable (record %" PRIu64 " at segment %u, block %u says so) but is corrupt or missing where the chain after checkpoint %" PRIu64 " goes on: the kernel refuses to load this cache",
			     (uint64_t)ch.expected, (uint64_t)ch.vouched_by,
			     ch.vouched_seg, ch.vouched_off,
			     c->ckpt.generation);
	}
	if (r == -EUCLEAN)
		r = 1;
out:
	free(rp.sc.buf);
	free(rp.hdr);
	free(rp.crcs);
	wow_replay_free(&rp.core);
	return r;
}

/* ---- building a view ---- */

static void view_reset(struct wowc_view *v)
{
	uint64_t s;

	if (v->segs)
		for (s = 0; s < v->c->nr_segments; s++) {
			free(v->segs[s].tombs);
			free(v->segs[s].recs);
		}
	free(v->segs);
	if (v->ix)
		wow_index_exit(v->ix);
	free(v->ix);
	free(v->slot_seq);
	free(v->uncertain);
	v->uncertain = NULL;
	free(v->corrupt);
	free(v->claims);
	free(v->lost);
	free(v->kenv);
	free(v->cenv);
	v->segs = NULL;
	v->ix = NULL;
	v->slot_seq = NULL;
	v->corrupt = NULL;
	v->claims = NULL;
	v->lost = NULL;
	v->kenv = v->cenv = NULL;
	v->nr_corrupt = 0;
	v->nr_lost = v->max_lost = 0;
	v->nr_kenv = v->nr_cenv = 0;
	v->valid_blocks = v->dirty_blocks = 0;
	v->nr_records = v->nr_dropped = v->max_seq = v->max_seen = 0;
	v->refused = false;
	v->nr_replayed = v->replay_end = v->nr_replay_dropped = 0;
}

static int view_alloc(struct wowc_view *v)
{
	uint64_t n = v->c->nr_slots ? v->c->nr_slots : 1;

	v->segs = calloc(v->c->nr_segments, sizeof(*v->segs));
	v->uncertain = calloc(n, 1);
	v->slot_seq = calloc(n, sizeof(*v->slot_seq));
	v->ix = calloc(1, sizeof(*v->ix));
	if (!v->segs || !v->uncertain || !v->slot_seq || !v->ix)
		return -ENOMEM;
	return wow_index_init(v->ix, v->c->nr_slots);
}

/* struct wow_scan_ops over the image and the view */
static int scan_read(void *ctx, u32 s, u32 off, u32 n, bool probe, void **p)
{
	struct scan *sc = ctx;

	(void)probe;	/* blk reads block 0 alone, the rest whole */
	if (!blk(sc, s, off + n - 1))
		return sc->io_err;
	*p = sc->buf + (size_t)off * sc->c->bs;
	return 0;
}

static int scan_reserve_tombs(void *ctx, u32 s, u32 n)
{
	return view_reserve_tombs(((struct scan *)ctx)->v, s, n);
}

static void scan_add_tombs(void *ctx, u32 s, const struct wow_tomb_range *t,
			   u32 n)
{
	struct scan *sc = ctx;
	struct wowc_seg *seg = &sc->v->segs[s];

	memcpy(seg->tombs + seg->nr_tombs, t, n * sizeof(*t));
	seg->nr_tombs += n;
}

static const struct wow_tomb_range *scan_tombs(void *ctx, u32 s, u32 *n)
{
	struct scan *sc = ctx;

	*n = sc->v->segs[s].nr_tombs;
	return sc->v->segs[s].tombs;
}

static bool scan_lookup(void *ctx, u64 b, u32 *slot)
{
	return view_lookup(((struct scan *)ctx)->v, b, slot);
}

static void scan_place(void *ctx, u32 slot, u64 b, u64 seq, bool newest,
		       bool has_crc, u32 crc)
{
	struct scan *sc = ctx;
	struct wowc_view *v = sc->v;

	(void)has_crc;
	(void)crc;
	v->slot_seq[slot] = seq;
	/* a stale copy keeps its block, as the kernel's scan_place */
	if (!(wowc_slot(v, slot) & WOWC_SLOT_VALID))
		wow_slot_set_oblock(wow_slot_at(v->ix, slot), to_oblock(b));
	if (newest)
		ix_insert(v, b, slot, true);
}

static bool scan_valid(void *ctx, u32 slot, u64 *b)
{
	return view_valid(((struct scan *)ctx)->v, slot, b);
}

static void scan_kill(void *ctx, u32 slot)
{
	struct scan *sc = ctx;

	wow_index_remove(sc->v->ix, slot);
}

static void scan_clean(void *ctx, u32 slot)
{
	struct scan *sc = ctx;

	ix_clean(sc->v, slot);
}

/* the kernel's messages as it says them while it scans; the rest after */
static void scan_note(void *ctx, const struct wow_scan_note *n)
{
	struct scan *sc = ctx;

	if (n->what == WOW_SCAN_DROPPED_FIRST && !n->seq)
		wowc_problem(&sc->v->probs, WOWC_SEV_WARN,
			     "segment %u: dropped a torn or corrupt log record at block 0 (%s): the first of the segment, so all of its records (the kernel reports this at error level)",
			     n->seg, n->why);
	else if (n->what == WOW_SCAN_BROKEN)
		wowc_problem(&sc->v->probs, WOWC_SEV_WARN,
			     "segment %u: the log breaks at block %u and goes on at block %u (record %" PRIu64 "): the records between are lost",
			     n->seg, n->off, n->at, (uint64_t)n->seq);
}

static int scan_record(void *ctx, u32 s, u32 off,
		       const struct wow_record_info *ri, enum wow_scan_rec st,
		       const char *why)
{
	static const enum wowc_rec_status status[] = {
		[WOW_SCAN_REC_TAKEN] = WOWC_REC_OK,
		[WOW_SCAN_REC_BAD] = WOWC_REC_BAD,
		[WOW_SCAN_REC_DROPPED] = WOWC_REC_DROPPED,
		[WOW_SCAN_REC_PROOF] = WOWC_REC_PROOF,
		[WOW_SCAN_REC_SALVAGED] = WOWC_REC_SALVAGED,
	};
	struct scan *sc = ctx;

	return add_rec(&sc->v->segs[s], ri, off, status[st], why) ? -ENOMEM :
								      0;
}

static int scan_lost(void *ctx, u64 b, u64 seq)
{
	struct scan *sc = ctx;

	return add_lost(sc->v, b, seq) ? -ENOMEM : 0;
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
	.record = scan_record,
	.lost = scan_lost,
};

/*
 * The scan's verdicts on the bad records (sorted by seq): a bad record
 * that a valid record of its epoch proves durable is corrupt (the load is
 * refused) unless dropping it loses nothing; any other is a torn tail.
 * Unlike the kernel, every suspect is judged (WOW_SCAN_JUDGE_ALL) and
 * reported, not just the first that refuses the load.
 */
static int report_suspects(struct wowc_view *v,
			   const struct wow_scan_suspect *sus, uint32_t n)
{
	uint32_t j;

	for (j = 0; j < n; j++) {
		const struct wow_scan_suspect *su = &sus[j];
		struct wowc_corrupt *co;

		if (!su->vouched) {
			wowc_problem(&v->probs, WOWC_SEV_WARN,
				     "segment %u: dropped a torn or corrupt log record at block %u (record %" PRIu64 ": %s); nothing proves it durable, so it is a torn write that was never acknowledged",
				     su->seg, su->block, (uint64_t)su->seq,
				     su->what);
			continue;
		}
		if (su->start) {
			wowc_problem(&v->probs, WOWC_SEV_WARN,
				     "segment %u: dropped a torn or corrupt log record at block %u (%s); record %" PRIu64 " is the first of another segment's life, so nothing is missing",
				     su->seg, su->block, su->what,
				     (uint64_t)su->seq);
			continue;
		}
		co = realloc(v->corrupt, (v->nr_corrupt + 1) * sizeof(*co));
		if (!co)
			return -ENOMEM;
		v->corrupt = co;
		co += v->nr_corrupt++;
		co->seq = su->seq;
		co->seg = su->seg;
		co->harmless = su->harmless;
		co->known = su->known;
		co->proof_seq = su->proof_seq;
		co->proof_seg = su->proof_seg;
		if (su->harmless) {
			wowc_problem(&v->probs, WOWC_SEV_WARN,
				     "log record %" PRIu64 " (segment %u, block %u) was durable but is corrupt (%s); every block it held has a newer version: dropped",
				     (uint64_t)su->seq, su->seg, su->block,
				     su->what);
			continue;
		}
		if (!(v->flags & WOWC_SALVAGE))
			v->refused = true;
		wowc_problem(&v->probs, WOWC_SEV_ERROR,
			     "log record %" PRIu64 " (segment %u, block %u) was durable (record %" PRIu64 " of segment %u says so) but is corrupt (%s): the kernel refuses to load this cache",
			     (uint64_t)su->seq, su->seg, su->block,
			     (uint64_t)su->proof_seq, su->proof_seg, su->what);
	}
	return 0;
}

/* An envelope of the scan's, copied into the view (*@n pieces). */
static struct wow_tomb_range *copy_env(const struct wow_tomb_range *e,
				       uint32_t n)
{
	struct wow_tomb_range *c = malloc(((size_t)n + 1) * sizeof(*c));

	if (c && n)
		memcpy(c, e, n * sizeof(*c));
	return c;
}

/* Rebuild the view from the whole log, as a load without a checkpoint. */
static int scan_log(struct wowc *c, struct wowc_view *v)
{
	struct scan sc = { .c = c, .v = v, .buf_seg = UINT32_MAX };
	struct wow_scan_geo g = {
		.uuid = c->sb.uuid,
		.nr_oblocks = c->nr_oblocks,
		.nr_segments = c->nr_segments,
		.blocks_per_seg = c->bps,
		.block_size = c->bs,
		.win_blocks = c->bps,
		.flags = WOW_SCAN_JUDGE_ALL |
			 (v->flags & WOWC_SALVAGE ? WOW_SCAN_SALVAGE : 0),
	};
	const struct wow_tomb_range *kenv, *cenv;
	const struct wow_scan_claim *cl;
	const struct wow_scan_totals *tot;
	const struct wow_scan_suspect *sus;
	struct wow_scan *ws = NULL;
	struct wow_scan_seg life;
	uint32_t nsus, nk, nc;
	uint64_t s;
	int r = -ENOMEM;

	sc.buf = wowc_xalloc((size_t)c->bps * c->bs);
	v->claims = calloc(c->nr_segments, sizeof(*v->claims));
	if (sc.buf && v->claims)
		ws = wow_scan_alloc(&g, &scan_ops, &sc);
	if (!ws)
		goto out;
	for (s = 0; s < c->nr_segments; s++) {
		r = wow_scan_segment(ws, s, &life);
		if (r)
			goto out;
		v->segs[s].seq = life.seq;
		v->segs[s].max_seq = life.max_seq;
		v->segs[s].wp = life.wp;
	}
	r = wow_scan_finish(ws);
	if (r)
		goto out;
	tot = wow_scan_totals(ws);
	v->nr_records = tot->records;
	v->nr_dropped = tot->dropped;
	v->max_seq = tot->max_seq;
	v->max_seen = tot->max_seen;
	cl = wow_scan_claims(ws);
	for (s = 0; s < c->nr_segments; s++) {
		v->claims[s].seq = cl[s].seq;
		v->claims[s].durable = cl[s].durable;
		v->claims[s].proof = cl[s].proof;
	}
	wow_scan_envelopes(ws, &kenv, &nk, &cenv, &nc);
	v->kenv = copy_env(kenv, nk);
	v->cenv = copy_env(cenv, nc);
	r = -ENOMEM;
	if (!v->kenv || !v->cenv)
		goto out;
	v->nr_kenv = nk;
	v->nr_cenv = nc;
	sus = wow_scan_suspects(ws, &nsus);
	r = report_suspects(v, sus, nsus);
out:
	wow_scan_free(ws);
	free(sc.buf);
	return r;
}

/* wow_tomb_prune_held's view of segment @s */
static void view_held(void *ctx, u32 s, struct wow_tomb_held *h)
{
	struct wowc_seg *seg = &((struct wowc_view *)ctx)->segs[s];

	h->tombs = seg->tombs;
	h->nr = &seg->nr_tombs;
	h->seg_seq = seg->seq;
}

/*
 * wow_seg_min_life's view of segment @s: a load leaves no earlier life
 * waiting for a new one's first record
 */
static u64 view_life(void *ctx, u32 s, u64 *prev_seq)
{
	*prev_seq = 0;
	return ((struct wowc_view *)ctx)->segs[s].seq;
}

/*
 * prune_tombs: drop what no record on the device can need, as the
 * kernel's wow_seg_prune_tombs (the oldest life on the device its bound)
 */
static int prune_tombs(struct wowc *c, struct wowc_view *v)
{
	uint64_t min = wow_seg_min_life(c->nr_segments, 0, view_life, v);

	return wow_tomb_prune_held(c->nr_segments, min, view_held, v);
}

/* wow_index_count's view of valid slot @slot of segment @s */
static int view_count(void *ctx, u32 slot, u32 s, bool dirty)
{
	struct wowc_seg *seg = &((struct wowc_view *)ctx)->segs[s];

	(void)slot;
	seg->nr_valid++;
	seg->nr_dirty += dirty;
	return 0;
}

/* the rest of wow_log_recover: counts, next seq @next_seq, segment states */
static int finish(struct wowc *c, struct wowc_view *v, uint64_t next_seq)
{
	uint64_t s;
	int r;

	v->next_seq = next_seq;
	if (!v->next_seq) {
		v->refused = true;
		wowc_problem(&v->probs, WOWC_SEV_ERROR,
			     "log sequence numbers exhausted: the kernel refuses to load this cache");
	}
	r = wow_index_count(v->ix, 0, c->nr_slots, c->bps, &v->valid_blocks,
			    &v->dirty_blocks, view_count, v);
	if (r)
		return r;
	r = prune_tombs(c, v);
	if (r)
		return r;
	/*
	 * Every load ends with a checkpoint (write_checkpoint at the end of
	 * wow_log_recover); with more tombstones than the area holds that
	 * write fails (-ENOSPC), and the load retires the checkpoint on disk
	 * instead: it loads, but the next load scans the whole log.
	 */
	if (c->sb.version >= 2) {
		uint64_t tombs = 0;

		for (s = 0; s < c->nr_segments; s++)
			tombs += v->segs[s].nr_tombs;
		if (tombs > wowc_ckpt_room(c))
			wowc_problem(&v->probs, WOWC_SEV_WARN,
				     "the segments hold %" PRIu64 " tombstones, more than a checkpoint has room for (%" PRIu64 "): a load retires the checkpoint and the next load scans the log",
				     tombs, wowc_ckpt_room(c));
	}
	for (s = 0; s < c->nr_segments; s++) {
		struct wowc_seg *seg = &v->segs[s];

		seg->closed = wow_seg_load_fate(seg->seq, seg->nr_valid,
						 seg->nr_tombs) ==
			      WOW_SEG_FATE_CLOSED;
	}
	return 0;
}

/*
 * The view's sources for wow_load_log, the kernel's order of them: the
 * checkpoint when a valid one is on disk (and no scan was asked for) ...
 */
static int view_ckpt(void *ctx)
{
	struct wowc_view *v = ctx;
	struct wowc *c = v->c;
	char why[sizeof(c->ckpt.why)];
	int r;

	if ((v->flags & WOWC_SCAN) || c->ckpt.state != WOWC_CKPT_VALID)
		return 1;
	v->source = WOWC_SRC_CKPT;
	r = ckpt_load(c, v, why, sizeof(why));
	if (r <= 0)
		return r;
	c->ckpt.state = WOWC_CKPT_BAD;
	snprintf(c->ckpt.why, sizeof(c->ckpt.why), "%s", why);
	wowc_problem(&v->probs, WOWC_SEV_ERROR,
		     "checkpoint %" PRIu64 " does not check (%s); the kernel scans the log instead",
		     c->ckpt.generation, why);
	view_reset(v);
	return view_alloc(v) ?: 1;
}

/* ... and the log written since it ... */
static int view_replay(void *ctx, __u64 *seen)
{
	struct wowc_view *v = ctx;
	int r = replay_log(v->c, v);

	if (r < 0)
		return r;
	if (r && (v->flags & WOWC_SALVAGE)) {
		/*
		 * The kernel refuses the load.  Writeback takes what the
		 * whole log holds instead: the scan salvages past the bad
		 * record and names the versions lost (a block the
		 * checkpoint has clean is written again: harmless).
		 */
		wowc_problem(&v->probs, WOWC_SEV_INFO,
			     "writing back what a scan of the whole log finds instead");
		view_reset(v);
		return view_alloc(v) ?: 1;
	}
	/* the kernel knows of no seq past the chain's end */
	*seen = v->replay_end - 1;
	return 0;
}

/* ... else the whole log */
static int view_scan(void *ctx, __u64 *seen)
{
	struct wowc_view *v = ctx;
	int r;

	v->source = WOWC_SRC_LOG;
	r = scan_log(v->c, v);
	*seen = v->max_seen;
	return r;
}

int wowc_view_build(struct wowc *c, unsigned int flags, struct wowc_view *v,
		    char *err)
{
	const struct wow_load_ops ops = {
		.ckpt = view_ckpt,
		.replay = view_replay,
		.scan = view_scan,
		.ctx = v,
	};
	__u64 next_seq;
	int r;

	memset(v, 0, sizeof(*v));
	v->c = c;
	v->flags = flags;
	if (c->sb_kind != WOWC_SB_VALID) {
		wowc_seterr(err, "%s: %s", c->path, c->sb_why);
		return -EINVAL;
	}
	r = view_alloc(v);
	if (!r)
		r = wow_load_log(&ops, c->sb.format_seq, &next_seq);
	if (!r)
		r = finish(c, v, next_seq);
	if (!r)
		return 0;

	wowc_seterr(err, "%s: %s", c->path, r == -ENOMEM ? "out of memory" :
		    r == -EFBIG ? "too many tombstones" : strerror(-r));
	wowc_view_free(v);
	return r;
}

bool wowc_vouched(const struct wowc_view *v, uint64_t seq)
{
	uint64_t i;

	for (i = 0; i < v->c->nr_segments; i++)
		if (v->claims[i].seq &&
		    wow_epoch(v->claims[i].seq) == wow_epoch(seq) &&
		    v->claims[i].durable >= seq)
			return true;
	return false;
}

void wowc_view_free(struct wowc_view *v)
{
	if (!v->c)
		return;
	view_reset(v);
	wowc_problems_free(&v->probs);
	v->c = NULL;
}
