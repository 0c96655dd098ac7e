// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow recovery's scan of the whole log (moved from dm-wow-recover.c).
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
#include "dm-wow-scan.h"

static u64 *slot_seq(struct wow_scan *sc, u32 slot)
{
	return &sc->slot_seq[slot / WOW_SEQ_CHUNK][slot % WOW_SEQ_CHUNK];
}

/*
 * The replay's slot seqs, in chunks allocated when a replayed record
 * first writes one (a load after a clean shutdown replays nothing and
 * allocates none: issue 34, finding 8).  0: not replayed.
 */
u64 wow_replay_seq(struct wow_scan *sc, u32 slot)
{
	return sc->slot_seq[slot / WOW_SEQ_CHUNK] ? *slot_seq(sc, slot) : 0;
}

int wow_replay_set_seq(struct wow_scan *sc, u32 slot, u64 seq)
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
void wow_scan_save_crcs(struct wow_scan *sc, void *hdr,
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
bool wow_scan_data_check(const struct wow_scan *sc,
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
void *wow_scan_blocks(struct wow_cache *wc, struct wow_scan *sc, u32 s,
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
		hdr = wow_scan_blocks(wc, sc, s, off, 1, false);
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
		p = wow_scan_blocks(wc, sc, s, k, n, false);
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

		void *hdr = wow_scan_blocks(wc, sc, s, off, 1, !off);

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
			wow_scan_save_crcs(sc, hdr, &ri);
			decoded = ok;
		}
		/* the data: crc in window-sized chunks (hdr may move) */
		csum = ~0U;
		for (done = 0; ok && done < ri.nr_data; ) {
			u32 n = min(ri.nr_data - done, sc->win_blocks);
			void *data = wow_scan_blocks(wc, sc, s, off + 1 + done, n,
						 false);

			if (IS_ERR(data))
				return PTR_ERR(data);
			ok &= wow_scan_data_check(sc, &ri, done, data, n, bs, &csum);
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

int wow_scan_log(struct wow_cache *wc, struct wow_scan *sc)
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

void wow_scan_free(struct wow_scan *sc)
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
