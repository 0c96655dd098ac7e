// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow recovery: format a fresh cache, and load one: from its newest
 * valid checkpoint and a replay of the log after it along its chain, or,
 * with no checkpoint to trust, a scan of the whole log (the records, the
 * proofs of durability, the breaks and where the log goes on, the
 * suspects), then the tombstones' envelope; version 1 caches upgraded.
 *
 * Runs in preresume (and the constructor's format), before the device is
 * live: no worker runs, so the segments, the index and the policy are
 * changed without the lock, which is taken only where a worker could
 * already run.  It calls the segments (dm-wow-seg.h) and the checkpoints
 * (dm-wow-ckptlog.h); nothing calls back into it.
 */
#include <linux/blkdev.h>
#include <linux/bsearch.h>
#include <linux/crc32c.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>

#include "dm-wow.h"
#include "dm-wow-log.h"
#include "dm-wow-seg.h"
#include "dm-wow-ckptlog.h"

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
	wc->ckpt_area = -1;
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

struct wow_scan {
	/* seq of the record each slot came from, in chunks */
	u64 **slot_seq;
	u32 nr_seq_chunks;
	/* the window: blocks [win_off, win_off + win_n) of segment win_seg */
	void *buf;
	u32 win_blocks;		/* its size */
	u32 win_seg;
	u32 win_off;
	u32 win_n;		/* 0: empty */
	u64 *oblocks;		/* one record's origin blocks */
	u32 *crcs;		/* and their crc32cs (WOW_REC_CRCS) */
	struct wow_tomb_range *cleans;	/* clean marks found */
	u32 nr_cleans;
	u32 max_cleans;
	u64 max_seq;
	u64 max_seen;		/* newest seq in any header, valid or not */
	u64 nr_records;
	u64 nr_dropped;
	/* per segment: its newest claim, "records up to durable were durable" */
	struct wow_claim {
		u64 seq;
		u64 durable;
	} *claims;
	/*
	 * Bad records (torn or corrupt), then their sorted seqs.  When the
	 * bad record's header is intact, lost[] lists the origin blocks whose
	 * versions dropping it (and the rest of its segment) loses.
	 */
	struct wow_suspect {
		u64 seq;	/* first: wow_cmp_u64 sorts by it */
		u32 seg;
		bool known;	/* lost[] is complete */
		bool judged;
		u32 nr_lost;
		u64 *lost;
	} *sus;
	u64 *suspects;
	u32 nr_suspects;
	/* the envelope of the tombstones (apply_tombs) */
	struct wow_tomb_range *kenv;
	u32 nr_kenv;
};

/* 2 MiB chunks: no allocation grows with the cache */
#define WOW_SEQ_CHUNK	BIT(18)

static u64 *slot_seq(struct wow_scan *sc, u32 slot)
{
	return &sc->slot_seq[slot / WOW_SEQ_CHUNK][slot % WOW_SEQ_CHUNK];
}

/*
 * The replay's slot seqs, in chunks allocated when a replayed record
 * first writes one (a load after a clean shutdown replays nothing and
 * allocates none: issue 34, finding 8).  0: not replayed.
 */
static u64 replay_seq(struct wow_scan *sc, u32 slot)
{
	return sc->slot_seq[slot / WOW_SEQ_CHUNK] ? *slot_seq(sc, slot) : 0;
}

static int replay_set_seq(struct wow_scan *sc, u32 slot, u64 seq)
{
	u64 **chunk = &sc->slot_seq[slot / WOW_SEQ_CHUNK];

	if (!*chunk) {
		if (!seq)
			return 0;
		*chunk = kvcalloc(WOW_SEQ_CHUNK, sizeof(u64), GFP_KERNEL);
		if (!*chunk)
			return -ENOMEM;
	}
	*slot_seq(sc, slot) = seq;
	return 0;
}

static int add_clean_mark(struct wow_scan *sc, struct wow_tomb_range *tr)
{
	if (sc->nr_cleans == sc->max_cleans) {
		u32 want = max(64U, 2 * sc->max_cleans);
		struct wow_tomb_range *n;

		n = kvmalloc_array(want, sizeof(*n), GFP_KERNEL);
		if (!n)
			return -ENOMEM;
		if (sc->nr_cleans)
			memcpy(n, sc->cleans, sc->nr_cleans * sizeof(*n));
		kvfree(sc->cleans);
		sc->cleans = n;
		sc->max_cleans = want;
	}
	sc->cleans[sc->nr_cleans++] = *tr;
	return 0;
}

/* A record's block crcs (WOW_REC_CRCS), kept while its data is read. */
static void save_crcs(struct wow_scan *sc, void *hdr,
		      const struct wow_record_info *ri)
{
	__le32 *c = wow_record_crcs(hdr, ri->nr_tombs, ri->nr_data);
	u32 i;

	if (!(ri->flags & WOW_REC_CRCS))
		return;
	for (i = 0; i < ri->nr_data; i++)
		sc->crcs[i] = le32_to_cpu(c[i]);
}

/*
 * Data blocks [@first, @first + @n) of record @ri, at @p: with block
 * crcs, false unless each matches; else they go into *@csum, which the
 * caller compares with data_csum once all are in.
 */
static bool data_check(const struct wow_scan *sc,
		       const struct wow_record_info *ri, u32 first,
		       const void *p, u32 n, u32 bs, u32 *csum)
{
	u32 i;

	if (!(ri->flags & WOW_REC_CRCS)) {
		*csum = crc32c(*csum, p, n * bs);
		return true;
	}
	for (i = 0; i < n; i++)
		if (wow_block_crc(p + i * bs, bs) != sc->crcs[first + i])
			return false;
	return true;
}

/*
 * Blocks [@off, @off + @n) of segment @s (@n <= win_blocks), from the
 * scan's window; when they are not in it, the window is read again from
 * @off: just @n blocks for a @probe (the first header of a segment, which
 * may hold no record at all), else as much of the segment as it holds, in
 * one large read.  So a segment's records cost a few large reads, not one
 * per header.  Returns the blocks or an ERR_PTR.
 */
static void *scan_blocks(struct wow_cache *wc, struct wow_scan *sc, u32 s,
			 u32 off, u32 n, bool probe)
{
	u32 bs = wc->args.block_size, len;
	int r;

	if (sc->win_n && sc->win_seg == s && off >= sc->win_off &&
	    off + n <= sc->win_off + sc->win_n)
		return sc->buf + (size_t)(off - sc->win_off) * bs;
	len = probe ? n : min(sc->win_blocks, wc->blocks_per_seg - off);
	sc->win_n = 0;
	r = wow_sync_io(wc->cache_dev->bdev,
			wow_slot_sector(wc, wow_seg_slot(wc, s, off)), sc->buf,
			len * bs, REQ_OP_READ);
	if (r)
		return ERR_PTR(r);
	wc->load_bytes += (u64)len * bs;
	sc->win_seg = s;
	sc->win_off = off;
	sc->win_n = len;
	return sc->buf;
}

/* A valid header of segment @s says records up to @durable were durable. */
static void note_claim(struct wow_scan *sc, u32 s, u64 seq, u64 durable)
{
	struct wow_claim *c = &sc->claims[s];

	sc->max_seen = max(sc->max_seen, seq);
	if (!c->seq) {
		c->seq = seq;
		c->durable = durable;
	} else if (wow_epoch(seq) == wow_epoch(c->seq)) {
		c->durable = max(c->durable, durable);
	}
}

/* Add @n origin blocks a suspect's drop loses. */
static void suspect_loses(struct wow_suspect *su, const u64 *b, u32 n)
{
	u64 *more;

	if (!su->known || !n)
		return;
	more = kvmalloc_array(su->nr_lost + n, sizeof(u64), GFP_KERNEL);
	if (!more) {
		su->known = false;	/* then it is judged by its seq only */
		return;
	}
	if (su->nr_lost)
		memcpy(more, su->lost, su->nr_lost * sizeof(u64));
	memcpy(more + su->nr_lost, b, n * sizeof(u64));
	kvfree(su->lost);
	su->lost = more;
	su->nr_lost += n;
}

/*
 * At most one per segment: the scan of a segment stops at a bad record.
 * @b (@n blocks) are its origin blocks when its header is intact, else
 * NULL.
 */
static struct wow_suspect *note_suspect(struct wow_scan *sc, u32 s, u64 seq,
					const u64 *b, u32 n)
{
	struct wow_suspect *su = &sc->sus[sc->nr_suspects++];

	sc->max_seen = max(sc->max_seen, seq);
	memset(su, 0, sizeof(*su));
	su->seq = seq;
	su->seg = s;
	su->known = !!b;
	suspect_loses(su, b, n);
	return su;
}

/*
 * Does dropping suspect @su lose nothing?  So when each block it would
 * lose has a newer recovered version or a tombstone that kills its
 * version: the stale records of a freed segment's earlier life, damaged
 * by a torn write of the segment's next life, are such.
 */
static bool suspect_harmless(struct wow_cache *wc, struct wow_scan *sc,
			     struct wow_suspect *su)
{
	const struct wow_tomb_range *e;
	u32 i, slot;

	if (!su->known)
		return false;
	for (i = 0; i < su->nr_lost; i++) {
		slot = wow_index_lookup(&wc->index, to_oblock(su->lost[i]));
		if (slot != WOW_NO_SLOT && *slot_seq(sc, slot) > su->seq)
			continue;
		e = wow_tomb_find(sc->kenv, sc->nr_kenv, su->lost[i]);
		if (e && e->t >= su->seq)
			continue;
		return false;
	}
	return true;
}

/*
 * Torn or corrupt?  A bad record that a valid record of its epoch proves
 * durable was durable and is corrupt now: refuse the load rather than
 * serve an older version, unless dropping it loses nothing.  Any other
 * bad record is the torn tail of a power cut (never durable, so never
 * acknowledged) and is dropped.  Each suspect is judged once.
 */
static int judge_suspects(struct wow_cache *wc, struct wow_scan *sc)
{
	struct wow_suspect *su;
	u64 *starts = NULL;
	u32 s, j, nr_starts = 0;
	int i, r = 0;

	if (!sc->nr_suspects)
		return 0;
	/* seq first in struct wow_suspect: wow_cmp_u64 sorts by it */
	sort(sc->sus, sc->nr_suspects, sizeof(*sc->sus), wow_cmp_u64, NULL);
	for (j = 0; j < sc->nr_suspects; j++)
		sc->suspects[j] = sc->sus[j].seq;
	/*
	 * A life's records run on in another segment's life: the record
	 * after a segment's last may be the first of another segment, found
	 * intact there.  What the scan took for missing (a bad block after the
	 * life's end, such as a header torn in an earlier life) is not.
	 */
	starts = kvmalloc_array(wc->nr_segments, sizeof(u64), GFP_KERNEL);
	if (!starts)
		return -ENOMEM;
	for (s = 0; s < wc->nr_segments; s++)
		if (wc->segs[s].seq)
			starts[nr_starts++] = wc->segs[s].seq;
	sort(starts, nr_starts, sizeof(u64), wow_cmp_u64, NULL);
	for (s = 0; s < wc->nr_segments; s++) {
		struct wow_claim *c = &sc->claims[s];

		if (!c->seq)
			continue;
		i = wow_first_vouched(sc->suspects, sc->nr_suspects, c->seq,
				      c->durable);
		for (j = i; i >= 0 && j < sc->nr_suspects &&
		     sc->suspects[j] <= c->durable &&
		     wow_epoch(sc->suspects[j]) == wow_epoch(c->seq); j++) {
			su = &sc->sus[j];
			if (su->judged)
				continue;
			su->judged = true;
			if (bsearch(&su->seq, starts, nr_starts, sizeof(u64),
				    wow_cmp_u64))
				continue;
			if (suspect_harmless(wc, sc, su)) {
				DMWARN(MSG_DURABLE_HARMLESS, wow_name(wc),
				       su->seq, su->seg);
				continue;
			}
			DMERR(MSG_DURABLE_CORRUPT, wow_name(wc), su->seq,
			      su->seg, c->seq, s);
			r = -EUCLEAN;
			goto out;
		}
	}
out:
	kvfree(starts);
	return r;
}

/*
 * After a bad record whose header is intact: read on, headers only, for
 * the durable_seq of later records of the same life (they are not
 * applied).  That is what tells a corrupt durable record from a torn one.
 */
static int scan_proof(struct wow_cache *wc, struct wow_scan *sc, u32 s,
		      u32 off, u64 last, u64 seg_seq, struct wow_suspect *su)
{
	u32 bs = wc->args.block_size, bps = wc->blocks_per_seg;
	struct wow_record_info ri;
	void *hdr;

	while (off < bps) {
		hdr = scan_blocks(wc, sc, s, off, 1, false);
		if (IS_ERR(hdr))
			return PTR_ERR(hdr);
		if (wow_record_check(hdr, bs, wc->sb.uuid, &ri) !=
		    WOW_REC_OK || ri.seg_seq != seg_seq || ri.seq != last + 1 ||
		    ri.nr_data > bps - off - 1)
			break;
		note_claim(sc, s, ri.seq, ri.durable_seq);
		if (su && su->known) {
			__le64 *raw = wow_record_oblocks(hdr, ri.nr_tombs);
			u32 i;

			for (i = 0; i < ri.nr_data; i++)
				sc->oblocks[i] = le64_to_cpu(raw[i]);
			suspect_loses(su, sc->oblocks, ri.nr_data);
		}
		last = ri.seq;
		off += 1 + ri.nr_data;
	}
	return 0;
}

/*
 * The chain of segment @s's life (@seg_seq, last record @last) ended at
 * block @off: at a header that is not the life's next record (torn,
 * corrupt, zeroed, never written, or an older life's).  If a record of the
 * same life follows further on, the chain broke rather than ended, and the
 * records between are lost: note a suspect for the first of them (unless
 * one is noted already; its blocks are unknown) and the claims of what
 * follows, so that losing a durable record this way refuses the load
 * instead of passing in silence.
 */
static int find_continuation(struct wow_cache *wc, struct wow_scan *sc, u32 s,
			     u32 off, u64 last, u64 seg_seq, bool noted)
{
	u32 bs = wc->args.block_size, bps = wc->blocks_per_seg, k, n, i;
	struct wow_record_info ri;
	void *p;

	for (k = off + 1; k < bps; k += n) {
		n = min(bps - k, sc->win_blocks);
		p = scan_blocks(wc, sc, s, k, n, false);
		if (IS_ERR(p))
			return PTR_ERR(p);
		for (i = 0; i < n; i++) {
			if (wow_record_check(p + (size_t)i * bs, bs,
					     wc->sb.uuid, &ri) != WOW_REC_OK ||
			    ri.seg_seq != seg_seq || ri.seq <= last ||
			    ri.nr_data > bps - (k + i) - 1)
				continue;
			if (!noted)
				note_suspect(sc, s, last + 1, NULL, 0);
			DMWARN(MSG_BROKEN, wow_name(wc), s, off, k + i, ri.seq);
			note_claim(sc, s, ri.seq, ri.durable_seq);
			return scan_proof(wc, sc, s, k + i + 1 + ri.nr_data,
					  ri.seq, seg_seq, NULL);
		}
	}
	return 0;
}

/*
 * Scan one segment's records from its start.  A record is taken when its
 * header and data checksums hold, it carries our uuid and it continues the
 * segment's life (seg_seq, consecutive seq).  The scan stops at the first
 * record that does not; one that is ours but bad (torn or corrupt, rather
 * than the end of the log) is reported.
 */
static int scan_segment(struct wow_cache *wc, struct wow_scan *sc, u32 s)
{
	struct wow_segment *seg = &wc->segs[s];
	u32 bs = wc->args.block_size, bps = wc->blocks_per_seg, off = 0;
	u64 nr_oblocks = wc->ti->len >> wc->block_shift;
	struct wow_suspect *su = NULL;
	u64 seg_seq = 0, last = 0;
	bool followed = false;
	int r;

	while (off < bps) {
		struct wow_record_info ri;
		enum wow_rec_kind kind;
		u32 i, done, csum, nt = 0;
		bool ok, decoded = false;

		void *hdr = scan_blocks(wc, sc, s, off, 1, !off);

		if (IS_ERR(hdr))
			return PTR_ERR(hdr);
		kind = wow_record_check(hdr, bs, wc->sb.uuid, &ri);
		if (kind == WOW_REC_FOREIGN ||
		    (kind == WOW_REC_OK && off && ri.seg_seq != seg_seq))
			break;
		ok = kind == WOW_REC_OK && ri.nr_data <= bps - off - 1 &&
		     (off ? ri.seq == last + 1 : ri.seq == ri.seg_seq);
		if (ok) {
			struct wow_tomb *t = wow_record_tombs(hdr);
			__le64 *raw = wow_record_oblocks(hdr, ri.nr_tombs);

			r = wow_seg_reserve_tombs(wc, s, ri.nr_tombs);
			if (r)
				return r;
			nt = 0;
			for (i = 0; i < ri.nr_tombs; i++) {
				struct wow_tomb_range tr = {
					.start = le64_to_cpu(t[i].start),
					.t = le64_to_cpu(t[i].t),
					.nr = le32_to_cpu(t[i].nr),
					.flags = le32_to_cpu(t[i].flags),
				};

				if (!(tr.flags & WOW_TOMB_CLEAN)) {
					seg->tombs[seg->nr_tombs + nt++] = tr;
					continue;
				}
				r = add_clean_mark(sc, &tr);
				if (r)
					return r;
			}
			for (i = 0; i < ri.nr_data; i++) {
				sc->oblocks[i] = le64_to_cpu(raw[i]);
				ok &= sc->oblocks[i] < nr_oblocks;
			}
			save_crcs(sc, hdr, &ri);
			decoded = ok;
		}
		/* the data: crc in window-sized chunks (hdr may move) */
		csum = ~0U;
		for (done = 0; ok && done < ri.nr_data; ) {
			u32 n = min(ri.nr_data - done, sc->win_blocks);
			void *data = scan_blocks(wc, sc, s, off + 1 + done, n,
						 false);

			if (IS_ERR(data))
				return PTR_ERR(data);
			ok &= data_check(sc, &ri, done, data, n, bs, &csum);
			done += n;
		}
		ok &= (ri.flags & WOW_REC_CRCS) || csum == ri.data_csum;
		if (!ok) {
			/*
			 * Which record is missing: the one this intact header
			 * describes if it is the life's next, else (a torn or
			 * corrupt header, or a gap in the seqs) the next one.
			 * An intact header's claim holds even when its data
			 * does not: it can prove the missing record durable.
			 */
			bool own = kind == WOW_REC_OK &&
				   (!off || ri.seq == last + 1);
			u64 sseq = own ? ri.seq : off ? last + 1 : 0;

			if (kind == WOW_REC_OK)
				note_claim(sc, s, ri.seq, ri.durable_seq);
			sc->nr_dropped++;
			/* its origin blocks are known if its header held */
			if (sseq)
				su = note_suspect(sc, s, sseq,
						  own && decoded ?
						  sc->oblocks : NULL,
						  ri.nr_data);
			if (off)
				DMWARN(MSG_DROPPED, wow_name(wc), s, off);
			else
				DMERR(MSG_DROPPED_FIRST, wow_name(wc), s);
			if (kind == WOW_REC_OK && ri.nr_data <= bps - off - 1) {
				r = scan_proof(wc, sc, s, off + 1 + ri.nr_data,
					       ri.seq, ri.seg_seq, su);
				if (r)
					return r;
				followed = true;
			}
			break;
		}

		seg->nr_tombs += nt;
		for (i = 0; i < ri.nr_data; i++) {
			u32 slot = wow_seg_slot(wc, s, off + 1 + i);
			oblock_t b = to_oblock(sc->oblocks[i]);
			u32 cur = wow_index_lookup(&wc->index, b);

			*slot_seq(sc, slot) = ri.seq;
			wow_slot_set_oblock(wow_slot_at(&wc->index, slot), b);
			/* of two copies in one record the later is current */
			if (cur == WOW_NO_SLOT || *slot_seq(sc, cur) <= ri.seq) {
				wow_index_insert(&wc->index, b, slot,
						 WOW_SLOT_DIRTY);
				if (ri.flags & WOW_REC_CRCS)
					wow_index_set_crc(&wc->index, slot,
							  sc->crcs[i]);
			}
		}
		note_claim(sc, s, ri.seq, ri.durable_seq);
		if (!off)
			seg_seq = ri.seq;
		last = ri.seq;
		sc->nr_records++;
		sc->max_seq = max(sc->max_seq, ri.seq);
		off += 1 + ri.nr_data;
	}
	if (seg_seq && !followed && off < bps) {
		r = find_continuation(wc, sc, s, off, last, seg_seq, !!su);
		if (r)
			return r;
	}
	seg->seq = seg_seq;
	seg->max_seq = last;
	seg->open_time = jiffies;
	seg->wp = off;
	return 0;
}

/*
 * Apply every tombstone (it kills the copies of its range with seq <= t)
 * and then every clean mark (those copies were destaged) to the recovered
 * index, through their envelopes: one pass over the slots, however many
 * and however wide the ranges are.
 */
static int apply_tombs(struct wow_cache *wc, struct wow_scan *sc)
{
	struct wow_tomb_range *kills, *kenv, *cenv;
	const struct wow_tomb_range *e;
	u32 nk = 0, nke = 0, nce = 0, s, i;
	u32 *heap = NULL;
	u64 total = 0;
	int r = -ENOMEM;

	for (s = 0; s < wc->nr_segments; s++)
		total += wc->segs[s].nr_tombs;
	if (total > U32_MAX / 2)
		return -EFBIG;
	kills = kvmalloc_array(max_t(u64, total, 1), sizeof(*kills),
			       GFP_KERNEL);
	kenv = kvmalloc_array(max_t(u64, 2 * total, 1), sizeof(*kenv),
			      GFP_KERNEL);
	cenv = kvmalloc_array(max(2 * sc->nr_cleans, 1U), sizeof(*cenv),
			      GFP_KERNEL);
	heap = kvmalloc_array(max_t(u64, max_t(u64, total, sc->nr_cleans), 1),
			      sizeof(*heap), GFP_KERNEL);
	if (!kills || !kenv || !cenv || !heap)
		goto out;
	for (s = 0; s < wc->nr_segments; s++)
		for (i = 0; i < wc->segs[s].nr_tombs; i++)
			kills[nk++] = wc->segs[s].tombs[i];
	nke = wow_tomb_envelope(kills, nk, kenv, heap);
	nce = wow_tomb_envelope(sc->cleans, sc->nr_cleans, cenv, heap);

	for (s = 0; s < wc->nr_slots; s++) {
		struct wow_slot *sl = wow_slot_at(&wc->index, s);
		u64 b = from_oblock(wow_slot_oblock(sl));

		if (!(sl->flags & WOW_SLOT_VALID))
			continue;
		e = wow_tomb_find(kenv, nke, b);
		if (e && *slot_seq(sc, s) <= e->t) {
			wow_index_remove(&wc->index, s);
			continue;
		}
		e = wow_tomb_find(cenv, nce, b);
		if (e && *slot_seq(sc, s) <= e->t)
			wow_index_set_flags(&wc->index, s, 0, WOW_SLOT_DIRTY);
		if (!(s % 4096))
			cond_resched();
	}
	/* judge_suspects asks it which lost versions were dead anyway */
	sc->kenv = kenv;
	sc->nr_kenv = nke;
	kenv = NULL;
	r = 0;
out:
	kvfree(kills);
	kvfree(kenv);
	kvfree(cenv);
	kvfree(heap);
	return r;
}

/* Drop tombstones no record on the device can need any more. */
struct tomb_ref {
	struct wow_tomb_range *tr;
	u64 seg_seq;
};

static int cmp_tomb_ref(const void *a, const void *b)
{
	const struct tomb_ref *x = a, *y = b;

	if (x->tr->start != y->tr->start)
		return x->tr->start < y->tr->start ? -1 : 1;
	if (x->tr->nr != y->tr->nr)
		return x->tr->nr < y->tr->nr ? -1 : 1;
	if (x->tr->t != y->tr->t)
		return x->tr->t < y->tr->t ? -1 : 1;
	/* newest holder first */
	return x->seg_seq > y->seg_seq ? -1 : x->seg_seq < y->seg_seq;
}

#define TOMB_DROP	0x80000000U	/* in memory only: to be dropped */

/*
 * Drop tombstones no record on the device can need any more, and copies
 * of a tombstone that reclaim carried forward (the newest holder keeps
 * it), so segments whose tombstones all moved on are free again.
 */
static int prune_tombs(struct wow_cache *wc)
{
	u64 min = wow_seg_min_disk_seq(wc), total = 0;
	struct tomb_ref *refs;
	u32 s, i, n;

	for (s = 0; s < wc->nr_segments; s++)
		total += wc->segs[s].nr_tombs;
	refs = kvmalloc_array(max_t(u64, total, 1), sizeof(*refs), GFP_KERNEL);
	if (!refs)
		return -ENOMEM;
	n = 0;
	for (s = 0; s < wc->nr_segments; s++)
		for (i = 0; i < wc->segs[s].nr_tombs; i++) {
			refs[n].tr = &wc->segs[s].tombs[i];
			refs[n++].seg_seq = wc->segs[s].seq;
		}
	sort(refs, n, sizeof(*refs), cmp_tomb_ref, NULL);
	for (i = 0; i < n; i++)
		if (refs[i].tr->t < min ||
		    (i && !cmp_tomb_ref(&(struct tomb_ref){ refs[i].tr, 0 },
					&(struct tomb_ref){ refs[i - 1].tr, 0 })))
			refs[i].tr->flags |= TOMB_DROP;
	kvfree(refs);

	for (s = 0; s < wc->nr_segments; s++) {
		struct wow_segment *seg = &wc->segs[s];

		for (i = 0, n = 0; i < seg->nr_tombs; i++)
			if (!(seg->tombs[i].flags & TOMB_DROP))
				seg->tombs[n++] = seg->tombs[i];
		seg->nr_tombs = n;
	}
	/* the runtime's lower bound starts here (wow_seg_visit) */
	wow_life_pass_init(&wc->life_pass, min_t(u64, min, wc->next_seq));
	return 0;
}

/*
 * Forget what a failed recovery built, so that a retried preresume starts
 * from nothing (and counts nothing twice).
 */
static int reset_log(struct wow_cache *wc)
{
	const struct wow_policy_ops *ops;
	u32 s;
	int r;

	for (s = 0; s < wc->nr_segments; s++) {
		struct wow_segment *seg = &wc->segs[s];

		seg->seq = 0;
		seg->prev_seq = 0;
		seg->max_seq = 0;
		seg->wp = 0;
		seg->nr_valid = 0;
		seg->nr_dirty = 0;
		seg->nr_tombs = 0;
		seg->state = WOW_SEG_FREE;
		INIT_LIST_HEAD(&seg->list);
		INIT_LIST_HEAD(&seg->order);
	}
	INIT_LIST_HEAD(&wc->free_segs);
	INIT_LIST_HEAD(&wc->drained);
	wow_life_pass_init(&wc->life_pass, 0);
	INIT_LIST_HEAD(&wc->seg_order);
	wc->lrw_cursor = WOW_NO_SLOT;
	wc->nr_free_segs = 0;
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
	wc->ckpt_known[0] = false;
	wc->ckpt_known[1] = false;
	return wow_index_init(&wc->index, wc->nr_slots);
}

#define MSG_LOADED_CKPT "%s: loaded checkpoint %llu (%llu KiB read): %llu dirty of %llu valid blocks, %u free segments"
#define MSG_RECOVERED "%s: recovered %llu records (%llu KiB read): %llu dirty of %llu valid blocks, %u free segments, %llu dropped"
#define MSG_CKPT_NOT_WHOLE "%s: checkpoint %llu (area %d) is not whole, written when the log stopped; loading checkpoint %llu (area %d)"

/*
 * Load from the checkpoint: 0 when the index and the segments came from
 * it; otherwise nothing was kept and the log must be scanned.
 */
static int load_checkpoint(struct wow_cache *wc, struct wow_ckpt_info *ci)
{
	struct wow_ckpt_info other;
	struct wow_ckpt_ops ops;
	struct wow_ckpt_area a;
	int r, r1, k = 0;

	wc->ckpt_area = -1;
	if (wc->sb.version < 2)
		return -ENOENT;
	wow_ckptlog_area(wc, &a, 0);
	r = wow_ckpt_read_header(&a, ci);
	wc->ckpt_gen = ci->generation;
	wc->load_bytes += a.block_size;
	if (wc->sb.version >= 4) {
		/*
		 * The newest valid of the two.  A newer one that is not
		 * valid was being written when the log stopped (its closing
		 * copy missing): nothing was written after it began, so the
		 * other one, with the log since, is the whole state.  The
		 * generations go on from the newest either holds.
		 */
		wow_ckptlog_area(wc, &a, 1);
		r1 = wow_ckpt_read_header(&a, &other);
		wc->load_bytes += a.block_size;
		if (r1 == -ENOMEM)
			return r1;
		if (!r1 && (r || other.generation > ci->generation)) {
			swap(*ci, other);
			swap(r, r1);
			k = 1;
		}
		wc->ckpt_gen = max(ci->generation, other.generation);
		/* (a retired header, not valid, says nothing) */
		if (!r && other.valid && other.generation > ci->generation)
			DMINFO(MSG_CKPT_NOT_WHOLE,
			       wow_name(wc), other.generation, 1 - k,
			       ci->generation, k);
		wow_ckptlog_area(wc, &a, k);
	}
	if (r)
		return r;
	wc->load_bytes += (ci->slot_blocks + ci->seg_blocks) * a.block_size;
	wow_ckptlog_ops_init(wc, &ops);
	r = wow_ckpt_read(&a, ci, &ops);
	if (r) {
		DMWARN("%s: checkpoint %llu does not check (%d); scanning the log",
		       wow_name(wc), ci->generation, r);
		/*
		 * the next checkpoint goes to the other area: a crash while
		 * it is written must leave this one, which makes the load
		 * scan again, not an older one whose chain no longer holds
		 */
		wc->ckpt_area = k;
		if (reset_log(wc))
			return -ENOMEM;
		return r;
	}
	wc->ckpt_live = true;
	wc->ckpt_area = k;
	/*
	 * the index is what area k holds (and its csums came with it): from
	 * here the replay's changes are what its next checkpoint writes
	 */
	wow_index_take_changes(&wc->index, k, wc->ckpt_changes);
	wc->ckpt_known[k] = true;
	return 0;
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

static int scan_log(struct wow_cache *wc, struct wow_scan *sc)
{
	u32 bs = wc->args.block_size, s;
	int r;

	/* a record (header and up to 1 MiB of data) fits the window */
	sc->win_blocks = min(wc->blocks_per_seg,
			     max(WOW_SCAN_WINDOW_BYTES / bs,
				 1 + wc->max_record_blocks));
	sc->nr_seq_chunks = DIV_ROUND_UP(wc->nr_slots, WOW_SEQ_CHUNK);
	sc->slot_seq = kvcalloc(sc->nr_seq_chunks, sizeof(u64 *), GFP_KERNEL);
	for (s = 0; sc->slot_seq && s < sc->nr_seq_chunks; s++) {
		sc->slot_seq[s] = kvcalloc(WOW_SEQ_CHUNK, sizeof(u64),
					   GFP_KERNEL);
		if (!sc->slot_seq[s])
			return -ENOMEM;
	}
	sc->claims = vzalloc(array_size(wc->nr_segments, sizeof(*sc->claims)));
	sc->sus = vmalloc(array_size(wc->nr_segments, sizeof(*sc->sus)));
	sc->suspects = vmalloc(array_size(wc->nr_segments, sizeof(u64)));
	sc->buf = kvmalloc(array_size(sc->win_blocks, bs), GFP_KERNEL);
	sc->oblocks = kvmalloc_array(wow_record_capacity(bs, 0, 0), sizeof(u64),
				     GFP_KERNEL);
	sc->crcs = kvmalloc_array(wow_record_capacity(bs, 0, 0), sizeof(u32),
				  GFP_KERNEL);
	if (!sc->slot_seq || !sc->claims || !sc->sus || !sc->suspects ||
	    !sc->buf || !sc->oblocks || !sc->crcs)
		return -ENOMEM;

	for (s = 0; s < wc->nr_segments; s++) {
		r = scan_segment(wc, sc, s);
		if (r) {
			DMERR("%s: cannot read the log: %d", wow_name(wc), r);
			return r;
		}
		cond_resched();
	}

	r = apply_tombs(wc, sc);
	if (!r)
		r = judge_suspects(wc, sc);
	return r;
}

static void scan_free(struct wow_scan *sc)
{
	u32 i;

	for (i = 0; sc->slot_seq && i < sc->nr_seq_chunks; i++)
		kvfree(sc->slot_seq[i]);
	kvfree(sc->slot_seq);
	vfree(sc->claims);
	for (i = 0; i < sc->nr_suspects; i++)
		kvfree(sc->sus[i].lost);
	vfree(sc->sus);
	vfree(sc->suspects);
	kvfree(sc->kenv);
	kvfree(sc->cleans);
	kvfree(sc->buf);
	kvfree(sc->oblocks);
	kvfree(sc->crcs);
}

/* ---- replay of the log since the checkpoint, along its chain ---- */

struct wow_replay {
	struct wow_scan sc;		/* window, slot seqs */
	u64 *ckpt_max;			/* per segment: newest seq of its
					 * checkpointed life (0: none left)
					 */
	u64 expected;			/* seq of the next record */
	u64 records;
	u64 dropped;			/* a torn tail, as the scan says */
};

/*
 * Does tombstone or clean mark @t cover slot @slot's copy?  A replayed
 * copy's seq is known; a checkpointed one's only lies in its segment's
 * life (wow_ckpt_covers).
 */
static bool replay_covers(struct wow_cache *wc, struct wow_replay *rp,
			  u32 slot, u64 t)
{
	u64 seq = replay_seq(&rp->sc, slot);

	if (seq)
		return seq <= t;
	return wow_ckpt_covers(rp->ckpt_max[wow_slot_seg(wc, slot)], t);
}

static void replay_cover(struct wow_cache *wc, u32 slot,
			 const struct wow_tomb_range *tr)
{
	if (tr->flags & WOW_TOMB_CLEAN)
		wow_index_set_flags(&wc->index, slot, 0, WOW_SLOT_DIRTY);
	else
		wow_index_remove(&wc->index, slot);
}

/* Apply a tombstone or clean mark: a narrow range by lookups, else all */
static void replay_tomb(struct wow_cache *wc, struct wow_replay *rp,
			const struct wow_tomb_range *tr)
{
	u64 b, end = tr->start + tr->nr;
	u32 s;

	if (tr->nr <= wc->nr_slots) {
		for (b = tr->start; b < end; b++) {
			s = wow_index_lookup(&wc->index, to_oblock(b));
			if (s != WOW_NO_SLOT && replay_covers(wc, rp, s, tr->t))
				replay_cover(wc, s, tr);
		}
		return;
	}
	for (s = 0; s < wc->nr_slots; s++) {
		struct wow_slot *sl = wow_slot_at(&wc->index, s);

		b = from_oblock(wow_slot_oblock(sl));
		if ((sl->flags & WOW_SLOT_VALID) && b >= tr->start && b < end &&
		    replay_covers(wc, rp, s, tr->t))
			replay_cover(wc, s, tr);
	}
}

/* A new life of segment @s begins in the replay: its old content is gone. */
static void replay_new_life(struct wow_cache *wc, struct wow_replay *rp,
			    u32 s, u64 seq)
{
	struct wow_segment *seg = &wc->segs[s];
	u32 i, slot;

	for (i = 0; i < wc->blocks_per_seg; i++) {
		slot = wow_seg_slot(wc, s, i);
		if (wow_slot_at(&wc->index, slot)->flags & WOW_SLOT_VALID)
			wow_index_remove(&wc->index, slot);
		replay_set_seq(&rp->sc, slot, 0);	/* never fails */
	}
	rp->ckpt_max[s] = 0;
	seg->seq = seq;
	seg->max_seq = 0;
	seg->wp = 0;
	seg->nr_tombs = 0;
	seg->open_time = jiffies;
}

/*
 * Apply the next record (header @hdr at block @off of segment @s): its
 * copies are the newest of their blocks; then its tombstones and clean
 * marks, as the scan would (a copy is covered when its seq <= t).
 */
static int replay_record(struct wow_cache *wc, struct wow_replay *rp, u32 s,
			 u32 off, void *hdr, const struct wow_record_info *ri)
{
	u64 nr_oblocks = wc->ti->len >> wc->block_shift;
	struct wow_segment *seg = &wc->segs[s];
	struct wow_tomb *t = wow_record_tombs(hdr);
	__le64 *raw = wow_record_oblocks(hdr, ri->nr_tombs);
	__le32 *crcs = wow_record_crcs(hdr, ri->nr_tombs, ri->nr_data);
	u32 i, slot, cur;
	int r;

	for (i = 0; i < ri->nr_data; i++)
		if (le64_to_cpu(raw[i]) >= nr_oblocks)
			return -EUCLEAN;
	r = wow_seg_reserve_tombs(wc, s, ri->nr_tombs);
	if (r)
		return r;
	for (i = 0; i < ri->nr_data; i++) {
		oblock_t b = to_oblock(le64_to_cpu(raw[i]));

		slot = wow_seg_slot(wc, s, off + 1 + i);
		cur = wow_index_lookup(&wc->index, b);
		if (cur != WOW_NO_SLOT)
			wow_index_remove(&wc->index, cur);
		r = replay_set_seq(&rp->sc, slot, ri->seq);
		if (r)
			return r;
		wow_index_insert(&wc->index, b, slot, WOW_SLOT_DIRTY);
		if (ri->flags & WOW_REC_CRCS)
			wow_index_set_crc(&wc->index, slot,
					  le32_to_cpu(crcs[i]));
	}
	for (i = 0; i < ri->nr_tombs; i++) {
		struct wow_tomb_range tr = {
			.start = le64_to_cpu(t[i].start),
			.t = le64_to_cpu(t[i].t),
			.nr = le32_to_cpu(t[i].nr),
			.flags = le32_to_cpu(t[i].flags),
		};

		if (!(tr.flags & WOW_TOMB_CLEAN))
			seg->tombs[seg->nr_tombs++] = tr;
		replay_tomb(wc, rp, &tr);
	}
	seg->max_seq = ri->seq;
	seg->wp = off + 1 + ri->nr_data;
	return 0;
}

/* struct wow_chain_ops over the cache device, for wow_chain_replay(). */
struct wow_replay_ctx {
	struct wow_cache *wc;
	struct wow_replay *rp;
};

static int replay_header(void *ctx, u32 s, u32 off, bool probe,
			 enum wow_rec_kind *kind, struct wow_record_info *ri)
{
	struct wow_replay_ctx *x = ctx;
	struct wow_cache *wc = x->wc;
	void *hdr;

	/* a probe reads the header block alone (where the log may end) */
	hdr = scan_blocks(wc, &x->rp->sc, s, off, 1, probe || !off);
	if (IS_ERR(hdr))
		return PTR_ERR(hdr);
	*kind = wow_record_check(hdr, wc->args.block_size, wc->sb.uuid, ri);
	return 0;
}

static int replay_data(void *ctx, u32 s, u32 off,
		       const struct wow_record_info *ri)
{
	struct wow_replay_ctx *x = ctx;
	struct wow_cache *wc = x->wc;
	struct wow_scan *sc = &x->rp->sc;
	u32 bs = wc->args.block_size, done, n, csum = ~0U;
	void *p;

	/*
	 * A probe read the header alone: read the record again from its
	 * header, with the rest of the segment, so that the data and the
	 * header apply reads come from one window (else the segment is read
	 * twice: from the data on, then from the header on).
	 */
	if (ri->nr_data) {
		p = scan_blocks(wc, sc, s, off, 2, false);
		if (IS_ERR(p))
			return PTR_ERR(p);
		save_crcs(sc, p, ri);
	}
	for (done = 0; done < ri->nr_data; done += n) {
		n = min(ri->nr_data - done, sc->win_blocks);
		p = scan_blocks(wc, sc, s, off + 1 + done, n, false);
		if (IS_ERR(p))
			return PTR_ERR(p);
		if (!data_check(sc, ri, done, p, n, bs, &csum))
			return false;
	}
	return (ri->flags & WOW_REC_CRCS) || csum == ri->data_csum;
}

static int replay_apply(void *ctx, u32 s, u32 off,
			const struct wow_record_info *ri)
{
	struct wow_replay_ctx *x = ctx;
	void *hdr = scan_blocks(x->wc, &x->rp->sc, s, off, 1, false);

	if (IS_ERR(hdr))
		return PTR_ERR(hdr);
	if (!off)
		replay_new_life(x->wc, x->rp, s, ri->seq);
	cond_resched();
	return replay_record(x->wc, x->rp, s, off, hdr, ri);
}

static void replay_torn(void *ctx, u32 s, u32 off)
{
	struct wow_replay_ctx *x = ctx;

	DMWARN(MSG_DROPPED, wow_name(x->wc), s, off);
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
 * (dm-wow-chain.c decides; the callbacks above read and apply).
 */
static int replay_chain(struct wow_cache *wc, struct wow_replay *rp,
			const struct wow_ckpt_info *ci)
{
	struct wow_replay_ctx x = { .wc = wc, .rp = rp };
	struct wow_chain c = {
		.nr_segments = wc->nr_segments,
		.blocks_per_seg = wc->blocks_per_seg,
		.head_seg = ci->head_seg,
		.head_wp = ci->head_wp,
		.next_seg = ci->next_seg,
		.next_seq = ci->next_seq,
		.head_life = ci->head_seg < wc->nr_segments ?
			     wc->segs[ci->head_seg].seq : 0,
	};
	int r = wow_chain_replay(&c, &replay_ops, &x);

	rp->expected = c.expected;
	rp->records = c.records;
	rp->dropped = c.dropped;
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
	struct wow_replay rp = { };
	u32 bs = wc->args.block_size, i;
	int r = -ENOMEM;

	rp.sc.win_blocks = min(wc->blocks_per_seg,
			       max(WOW_SCAN_WINDOW_BYTES / bs,
				   1 + wc->max_record_blocks));
	rp.sc.buf = kvmalloc(array_size(rp.sc.win_blocks, bs), GFP_KERNEL);
	rp.ckpt_max = kvmalloc_array(wc->nr_segments, sizeof(u64),
				     GFP_KERNEL);
	rp.sc.nr_seq_chunks = DIV_ROUND_UP(wc->nr_slots, WOW_SEQ_CHUNK);
	rp.sc.slot_seq = kvcalloc(rp.sc.nr_seq_chunks, sizeof(u64 *),
				  GFP_KERNEL);
	rp.sc.crcs = kvmalloc_array(wow_record_capacity(bs, 0, 0), sizeof(u32),
				    GFP_KERNEL);
	/* the chunks themselves as records are replayed (replay_set_seq) */
	if (!rp.sc.buf || !rp.ckpt_max || !rp.sc.slot_seq || !rp.sc.crcs)
		goto out;
	for (i = 0; i < wc->nr_segments; i++)
		rp.ckpt_max[i] = wc->segs[i].seq ? wc->segs[i].max_seq : 0;
	r = replay_chain(wc, &rp, ci);
	*expected = rp.expected;
	*dropped = rp.dropped;
	if (!r && rp.records)
		DMINFO("%s: replayed %llu records written after checkpoint %llu",
		       wow_name(wc), rp.records, ci->generation);
out:
	kvfree(rp.ckpt_max);
	scan_free(&rp.sc);
	return r;
}

/*
 * Load the index and the segments: from the checkpoint when a valid one
 * is on disk, and the log written since it (nothing after a clean
 * shutdown), else from the whole log.  The newest record of each block
 * wins, unless a tombstone kills it.  A recovered copy is dirty unless a
 * clean mark covers it.  Then a new checkpoint anchors the log's chain:
 * the next record is the one it names.
 */
int wow_log_recover(struct wow_cache *wc)
{
	struct wow_scan sc = { };
	struct wow_ckpt_info ci;
	u64 seen, newest;
	u32 s, i;
	int r;

	/* a failed earlier attempt could not rebuild the index */
	if (!wc->index.slot_chunks && wow_index_init(&wc->index, wc->nr_slots))
		return -ENOMEM;

	wc->load_bytes = 0;
	r = load_checkpoint(wc, &ci);
	if (r == -ENOMEM)
		goto out;
	if (!r) {
		u64 expected;

		r = replay_log(wc, &ci, &expected, &sc.nr_dropped);
		if (r)
			goto out;
		seen = expected - 1;
		newest = expected - 1;
	} else {
		r = scan_log(wc, &sc);
		if (r)
			goto out;
		seen = sc.max_seen;
		newest = sc.max_seq;
	}
	/* a new epoch: nothing written from now on vouches for a dropped record */
	wc->next_seq = wow_next_epoch_seq(max(seen, wc->sb.format_seq));
	if (!wc->next_seq) {
		DMERR("%s: log sequence numbers exhausted; not loading",
		      wow_name(wc));
		r = -EOVERFLOW;
		goto out;
	}

	/* count what survived; survivors are dirty unless marked clean */
	for (i = 0; i < wc->nr_slots; i++) {
		struct wow_slot *sl = wow_slot_at(&wc->index, i);

		if (!(i & 0xffff))
			cond_resched();
		if (!(sl->flags & WOW_SLOT_VALID))
			continue;
		wc->segs[wow_slot_seg(wc, i)].nr_valid++;
		wc->valid_blocks++;
		if (!(sl->flags & WOW_SLOT_DIRTY))
			continue;
		if (!wc->policy.nr_spare) {
			struct wow_group *g;

			g = kmalloc(wow_policy_group_bytes(&wc->policy),
				    GFP_KERNEL);
			if (!g) {
				r = -ENOMEM;
				goto out;
			}
			wow_policy_add_spare(&wc->policy, g);
		}
		wow_policy_mark_dirty(&wc->policy,
				      from_oblock(wow_slot_oblock(sl)));
		wc->segs[wow_slot_seg(wc, i)].nr_dirty++;
		wc->dirty_blocks++;
	}

	r = prune_tombs(wc);
	if (r)
		goto out;
	/* empty segments first, then dead ones, oldest content first */
	for (s = 0; s < wc->nr_segments; s++)
		if (!wc->segs[s].seq)
			wow_seg_free_add(wc, s);
	for (s = 0; s < wc->nr_segments; s++) {
		struct wow_segment *seg = &wc->segs[s];

		if (!seg->seq)
			continue;
		if (!seg->nr_valid && !seg->nr_tombs)
			wow_seg_free_add(wc, s);
		else
			seg->state = WOW_SEG_CLOSED;
	}
	r = wow_seg_order_rebuild(wc);
	if (r)
		goto out;

	wc->completed_seq = newest;
	wc->durable_seq = newest;
	wc->load_dropped = sc.nr_dropped;
	wc->load_from_ckpt = wc->ckpt_live;
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
	if (wc->ckpt_live)
		DMINFO(MSG_LOADED_CKPT, wow_name(wc), ci.generation,
		       wc->load_bytes >> 10, wc->dirty_blocks, wc->valid_blocks, wc->nr_free_segs);
	else
		DMINFO(MSG_RECOVERED, wow_name(wc), sc.nr_records,
		       wc->load_bytes >> 10, wc->dirty_blocks, wc->valid_blocks, wc->nr_free_segs,
		       sc.nr_dropped);
	r = 0;
out:
	if (r) {
		wc->ckpt_live = false;
		if (reset_log(wc))
			DMERR("%s: cannot reset the index after a failed recovery",
			      wow_name(wc));
	}
	scan_free(&sc);
	return r;
}

