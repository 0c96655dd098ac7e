// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow scan: recovery's decisions over the whole log, segment by
 * segment, when no checkpoint can be trusted.
 *
 * A segment's records are read from its start.  A record is taken when
 * its header and data checksums hold, it carries our uuid and it
 * continues the segment's life (seg_seq, consecutive seq); of a block's
 * copies the one of the newest seq wins.  The scan of a segment stops at
 * the first record that does not continue its life; one that is ours but
 * bad (torn or corrupt, rather than the end of the log) is a suspect.
 * After a suspect whose header is intact the rest of its life is read,
 * headers only, for the proof (durable_seq) that it was durable; where a
 * life ends early, a later record of the same life further on says it
 * broke instead.  Once every segment is in, the tombstones kill the
 * copies they cover, the clean marks clean theirs, and each suspect a
 * valid record proves durable refuses the load, unless every block it
 * held has a newer copy or a tombstone anyway.
 *
 * The reads and what the scan does to the index and the segments are the
 * caller's, through struct wow_scan_ops; so the decisions here are pure,
 * KUnit drives them with a log in memory (tests/scan_kunit.c), and the
 * userspace tools build this file too.
 *
 * No locking: recovery runs before the device is live.
 */
#include "dm-wow-types.h"
#include "dm-wow-record.h"
#include "dm-wow-tombs.h"
#include "dm-wow-scan.h"

struct wow_scan {
	struct wow_scan_geo g;
	const struct wow_scan_ops *ops;
	void *ctx;
	struct wow_scan_totals tot;
	/* seq of the record each slot came from */
	struct wow_seqs seqs;
	u64 *oblocks;		/* one record's origin blocks */
	u32 *crcs;		/* and their crc32cs (WOW_REC_CRCS) */
	struct wow_tomb_range *kills;	/* and its tombstones */
	struct wow_tomb_range *cleans;	/* clean marks found */
	u32 nr_cleans;
	u32 max_cleans;
	/* per segment: the seq that opened its life (0: none) */
	u64 *lives;
	/* per segment: its newest claim, "records up to durable were durable" */
	struct wow_scan_claim *claims;
	/*
	 * Bad records (torn or corrupt), then their sorted seqs.  When the
	 * bad record's header is intact, lost[] lists the origin blocks whose
	 * versions dropping it (and the rest of its segment) loses.
	 */
	struct wow_scan_suspect *sus;
	u64 *suspects;
	u32 nr_suspects;
	/* the envelopes of the tombstones and clean marks (apply_tombs) */
	struct wow_tomb_range *kenv;
	u32 nr_kenv;
	struct wow_tomb_range *cenv;
	u32 nr_cenv;
};

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

int wow_seqs_init(struct wow_seqs *t, u32 nr_slots, bool all)
{
	u32 i;

	t->nr_chunks = nr_slots / WOW_SEQ_CHUNK + !!(nr_slots % WOW_SEQ_CHUNK);
	t->chunk = kvcalloc(t->nr_chunks, sizeof(u64 *), GFP_KERNEL);
	if (!t->chunk)
		return -ENOMEM;
	for (i = 0; all && i < t->nr_chunks; i++) {
		t->chunk[i] = kvcalloc(WOW_SEQ_CHUNK, sizeof(u64), GFP_KERNEL);
		if (!t->chunk[i])
			return -ENOMEM;
	}
	return 0;
}

u64 wow_seqs_get(const struct wow_seqs *t, u32 slot)
{
	const u64 *c = t->chunk[slot / WOW_SEQ_CHUNK];

	return c ? c[slot % WOW_SEQ_CHUNK] : 0;
}

int wow_seqs_set(struct wow_seqs *t, u32 slot, u64 seq)
{
	u64 **chunk = &t->chunk[slot / WOW_SEQ_CHUNK];

	if (!*chunk) {
		if (!seq)
			return 0;
		*chunk = kvcalloc(WOW_SEQ_CHUNK, sizeof(u64), GFP_KERNEL);
		if (!*chunk)
			return -ENOMEM;
	}
	(*chunk)[slot % WOW_SEQ_CHUNK] = seq;
	return 0;
}

void wow_seqs_free(struct wow_seqs *t)
{
	u32 i;

	for (i = 0; t->chunk && i < t->nr_chunks; i++)
		kvfree(t->chunk[i]);
	kvfree(t->chunk);
	t->chunk = NULL;
}

/* The seq of the copy in slot @slot (every chunk is there). */
static u64 *slot_seq(struct wow_scan *sc, u32 slot)
{
	return &sc->seqs.chunk[slot / WOW_SEQ_CHUNK][slot % WOW_SEQ_CHUNK];
}

static u32 seg_slot(const struct wow_scan *sc, u32 s, u32 off)
{
	return s * sc->g.blocks_per_seg + off;
}

static void note_why(struct wow_scan *sc, enum wow_scan_event what, u32 seg,
		     u32 off, u32 at, u64 seq, u32 by_seg, u64 by_seq,
		     const char *why)
{
	struct wow_scan_note n = {
		.what = what, .seg = seg, .off = off, .at = at, .seq = seq,
		.by_seg = by_seg, .by_seq = by_seq, .why = why,
	};

	sc->ops->note(sc->ctx, &n);
}

static void note(struct wow_scan *sc, enum wow_scan_event what, u32 seg,
		 u32 off, u32 at, u64 seq, u32 by_seg, u64 by_seq)
{
	note_why(sc, what, seg, off, at, seq, by_seg, by_seq, NULL);
}

/* ops->record, when the caller keeps the records */
static int record(struct wow_scan *sc, u32 s, u32 off,
		  const struct wow_record_info *ri, enum wow_scan_rec st,
		  const char *why)
{
	return sc->ops->record ? sc->ops->record(sc->ctx, s, off, ri, st, why) :
				 0;
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
void wow_scan_save_crcs(u32 *crcs, void *hdr,
			const struct wow_record_info *ri)
{
	__le32 *c = wow_record_crcs(hdr, ri->nr_tombs, ri->nr_data);
	u32 i;

	if (!(ri->flags & WOW_REC_CRCS))
		return;
	for (i = 0; i < ri->nr_data; i++)
		crcs[i] = le32_to_cpu(c[i]);
}

/*
 * Data blocks [@first, @first + @n) of record @ri, at @p: with block
 * crcs, false unless each matches; else they go into *@csum, which the
 * caller compares with data_csum once all are in.
 */
bool wow_scan_data_check(const u32 *crcs, const struct wow_record_info *ri,
			 u32 first, const void *p, u32 n, u32 bs, u32 *csum)
{
	u32 i;

	if (!(ri->flags & WOW_REC_CRCS)) {
		*csum = crc32c(*csum, p, n * bs);
		return true;
	}
	for (i = 0; i < n; i++)
		if (wow_block_crc(p + i * bs, bs) != crcs[first + i])
			return false;
	return true;
}

/*
 * Recovery's verdict on bad records.  @suspects (sorted, ascending) are the
 * seqs of records a scan found torn or corrupt; a valid record with seq
 * @seq says every record of its epoch up to @durable_seq was durable.
 * Returns the index of the first suspect that claim proves durable (so it
 * is corrupt, not torn), or -1 when it proves none.
 */
int wow_first_vouched(const u64 *suspects, u32 n, u64 seq, u64 durable_seq)
{
	u64 lo = wow_epoch(seq) << WOW_EPOCH_SHIFT;
	u32 a = 0, b = n;

	while (a < b) {
		u32 mid = a + (b - a) / 2;

		if (suspects[mid] < lo)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == n || suspects[a] > durable_seq ||
	    wow_epoch(suspects[a]) != wow_epoch(seq))
		return -1;
	return a;
}

/* A valid header of segment @s says records up to @durable were durable. */
static void note_claim(struct wow_scan *sc, u32 s, u64 seq, u64 durable)
{
	struct wow_scan_claim *c = &sc->claims[s];

	sc->tot.max_seen = max(sc->tot.max_seen, seq);
	if (!c->seq) {
		c->seq = seq;
		c->durable = durable;
		c->proof = seq;
	} else if (wow_epoch(seq) == wow_epoch(c->seq) && durable > c->durable) {
		c->durable = durable;
		c->proof = seq;
	}
}

/* Add @n origin blocks a suspect's drop loses. */
static void suspect_loses(struct wow_scan_suspect *su, const u64 *b, u32 n)
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
static struct wow_scan_suspect *note_suspect(struct wow_scan *sc, u32 s,
					     u32 block, u64 seq, const u64 *b,
					     u32 n, const char *what)
{
	struct wow_scan_suspect *su = &sc->sus[sc->nr_suspects++];

	sc->tot.max_seen = max(sc->tot.max_seen, seq);
	memset(su, 0, sizeof(*su));
	su->seq = seq;
	su->seg = s;
	su->block = block;
	su->what = what;
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
static bool suspect_harmless(struct wow_scan *sc, struct wow_scan_suspect *su)
{
	const struct wow_tomb_range *e;
	u32 i, slot;

	if (!su->known)
		return false;
	for (i = 0; i < su->nr_lost; i++) {
		if (sc->ops->lookup(sc->ctx, su->lost[i], &slot) &&
		    *slot_seq(sc, slot) > su->seq)
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
static int judge_suspects(struct wow_scan *sc)
{
	struct wow_scan_suspect *su;
	u64 *starts = NULL;
	u32 s, j, nr_starts = 0;
	int i, r = 0;

	if (!sc->nr_suspects)
		return 0;
	/* seq first in struct wow_scan_suspect: cmp_u64 sorts by it */
	sort(sc->sus, sc->nr_suspects, sizeof(*sc->sus), cmp_u64, NULL);
	for (j = 0; j < sc->nr_suspects; j++)
		sc->suspects[j] = sc->sus[j].seq;
	/*
	 * A life's records run on in another segment's life: the record
	 * after a segment's last may be the first of another segment, found
	 * intact there.  What the scan took for missing (a bad block after the
	 * life's end, such as a header torn in an earlier life) is not.
	 */
	starts = kvmalloc_array(sc->g.nr_segments, sizeof(u64), GFP_KERNEL);
	if (!starts)
		return -ENOMEM;
	for (s = 0; s < sc->g.nr_segments; s++)
		if (sc->lives[s])
			starts[nr_starts++] = sc->lives[s];
	sort(starts, nr_starts, sizeof(u64), cmp_u64, NULL);
	for (s = 0; s < sc->g.nr_segments; s++) {
		struct wow_scan_claim *c = &sc->claims[s];

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
			su->vouched = true;
			su->proof_seq = c->proof;
			su->proof_seg = s;
			if (bsearch(&su->seq, starts, nr_starts, sizeof(u64),
				    cmp_u64)) {
				su->start = true;
				continue;
			}
			su->harmless = suspect_harmless(sc, su);
			if (sc->g.flags & WOW_SCAN_JUDGE_ALL)
				continue;
			if (su->harmless) {
				note(sc, WOW_SCAN_DURABLE_HARMLESS, su->seg, 0,
				     0, su->seq, 0, 0);
				continue;
			}
			note(sc, WOW_SCAN_DURABLE_CORRUPT, su->seg, 0, 0,
			     su->seq, s, c->seq);
			r = -EUCLEAN;
			goto out;
		}
	}
out:
	kvfree(starts);
	return r;
}

/*
 * Header @hdr (@ri, checked) continues its segment's life: decode its
 * tombstones, clean marks kept by the scan, the rest for the segment once
 * the record is taken: *@nt of them, in sc->kills.  0 or an errno.
 */
static int decode_tombs(struct wow_scan *sc, u32 s, void *hdr,
			const struct wow_record_info *ri, u32 *nt)
{
	struct wow_tomb *t = wow_record_tombs(hdr);
	u32 i;
	int r;

	r = sc->ops->reserve_tombs(sc->ctx, s, ri->nr_tombs);
	if (r)
		return r;
	*nt = 0;
	for (i = 0; i < ri->nr_tombs; i++) {
		struct wow_tomb_range tr = wow_tomb_decode(&t[i]);

		if (!(tr.flags & WOW_TOMB_CLEAN)) {
			sc->kills[(*nt)++] = tr;
			continue;
		}
		r = add_clean_mark(sc, &tr);
		if (r)
			return r;
	}
	return 0;
}

/* Its origin blocks into sc->oblocks: false if one is past the origin. */
static bool decode_oblocks(struct wow_scan *sc, void *hdr,
			   const struct wow_record_info *ri)
{
	__le64 *raw = wow_record_oblocks(hdr, ri->nr_tombs);
	bool ok = true;
	u32 i;

	for (i = 0; i < ri->nr_data; i++) {
		sc->oblocks[i] = le64_to_cpu(raw[i]);
		ok &= sc->oblocks[i] < sc->g.nr_oblocks;
	}
	return ok;
}

/*
 * Record @ri at block @off of segment @s, its block crcs saved in
 * sc->crcs: *@ok stays true only if its data checks.  The data is read in
 * window-sized chunks (a header read before may move).
 */
static int check_data(struct wow_scan *sc, u32 s, u32 off,
		      const struct wow_record_info *ri, bool *ok)
{
	u32 done, n, csum = ~0U;
	void *data;
	int r;

	for (done = 0; *ok && done < ri->nr_data; done += n) {
		n = min(ri->nr_data - done, sc->g.win_blocks);
		r = sc->ops->read(sc->ctx, s, off + 1 + done, n, false, &data);
		if (r)
			return r;
		*ok &= wow_scan_data_check(sc->crcs, ri, done, data, n,
					   sc->g.block_size, &csum);
	}
	*ok &= (ri->flags & WOW_REC_CRCS) || csum == ri->data_csum;
	return 0;
}

/*
 * Record @ri at block @off of segment @s is taken: its tombstones (@nt in
 * sc->kills) go to the segment, its copies are placed, each its block's
 * current copy unless a copy of a newer seq is (of two copies in one
 * record the later is current).
 */
static void take_record(struct wow_scan *sc, u32 s, u32 off,
			const struct wow_record_info *ri, u32 nt)
{
	bool crcs = ri->flags & WOW_REC_CRCS, newest;
	u32 i, slot, cur = 0;

	if (nt)
		sc->ops->add_tombs(sc->ctx, s, sc->kills, nt);
	for (i = 0; i < ri->nr_data; i++) {
		slot = seg_slot(sc, s, off + 1 + i);
		newest = !sc->ops->lookup(sc->ctx, sc->oblocks[i], &cur);
		*slot_seq(sc, slot) = ri->seq;
		newest = newest || *slot_seq(sc, cur) <= ri->seq;
		sc->ops->place(sc->ctx, slot, sc->oblocks[i], ri->seq, newest,
			       crcs, crcs ? sc->crcs[i] : 0);
	}
}

/*
 * WOW_SCAN_SALVAGE: record @ri (header @hdr) at block @off of segment @s,
 * read past a bad record of its life, is taken when its origin blocks lie
 * in the origin and its data checks (*@taken); else its versions are
 * lost (ops->lost).
 */
static int salvage(struct wow_scan *sc, u32 s, u32 off, void *hdr,
		   const struct wow_record_info *ri, bool *taken)
{
	bool in_range = decode_oblocks(sc, hdr, ri), ok = true;
	u32 i, nt;
	int r;

	*taken = false;
	wow_scan_save_crcs(sc->crcs, hdr, ri);
	r = check_data(sc, s, off, ri, &ok);
	if (r)
		return r;
	if (in_range && ok) {
		/* the data's reads may have moved the header */
		r = sc->ops->read(sc->ctx, s, off, 1, false, &hdr);
		if (!r)
			r = decode_tombs(sc, s, hdr, ri, &nt);
		if (r)
			return r;
		take_record(sc, s, off, ri, nt);
		*taken = true;
		return 0;
	}
	for (i = 0; i < ri->nr_data; i++) {
		if (sc->oblocks[i] >= sc->g.nr_oblocks)
			continue;
		r = sc->ops->lost(sc->ctx, sc->oblocks[i], ri->seq);
		if (r)
			return r;
	}
	return 0;
}

/* A record read for its claim only: salvaged (WOW_SCAN_SALVAGE) or not. */
static int proof_record(struct wow_scan *sc, u32 s, u32 off, void *hdr,
			const struct wow_record_info *ri)
{
	bool taken = false;
	int r;

	if (sc->g.flags & WOW_SCAN_SALVAGE) {
		r = salvage(sc, s, off, hdr, ri, &taken);
		if (r)
			return r;
	}
	return record(sc, s, off, ri, taken ? WOW_SCAN_REC_SALVAGED :
			     WOW_SCAN_REC_PROOF, NULL);
}

/*
 * After a bad record whose header is intact: read on, headers only, for
 * the durable_seq of later records of the same life (they are not
 * applied).  That is what tells a corrupt durable record from a torn one.
 */
static int scan_proof(struct wow_scan *sc, u32 s, u32 off, u64 last,
		      u64 seg_seq, struct wow_scan_suspect *su)
{
	u32 bs = sc->g.block_size, bps = sc->g.blocks_per_seg;
	struct wow_record_info ri;
	void *hdr;
	int r;

	while (off < bps) {
		r = sc->ops->read(sc->ctx, s, off, 1, false, &hdr);
		if (r)
			return r;
		if (wow_record_check(hdr, bs, sc->g.uuid, &ri) !=
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
		r = proof_record(sc, s, off, hdr, &ri);
		if (r)
			return r;
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
static int find_continuation(struct wow_scan *sc, u32 s, u32 off, u64 last,
			     u64 seg_seq, bool noted)
{
	u32 bs = sc->g.block_size, bps = sc->g.blocks_per_seg, k, n, i;
	struct wow_record_info ri;
	void *p, *hdr;
	int r;

	for (k = off + 1; k < bps; k += n) {
		n = min(bps - k, sc->g.win_blocks);
		r = sc->ops->read(sc->ctx, s, k, n, false, &p);
		if (r)
			return r;
		for (i = 0; i < n; i++) {
			hdr = p + (size_t)i * bs;
			if (wow_record_check(hdr, bs, sc->g.uuid, &ri) !=
			    WOW_REC_OK || ri.seg_seq != seg_seq ||
			    ri.seq <= last || ri.nr_data > bps - (k + i) - 1)
				continue;
			if (!noted)
				note_suspect(sc, s, off, last + 1, NULL, 0,
					     "the log breaks");
			note(sc, WOW_SCAN_BROKEN, s, off, k + i, ri.seq, 0, 0);
			note_claim(sc, s, ri.seq, ri.durable_seq);
			r = proof_record(sc, s, k + i, hdr, &ri);
			if (r)
				return r;
			return scan_proof(sc, s, k + i + 1 + ri.nr_data,
					  ri.seq, seg_seq, NULL);
		}
	}
	return 0;
}

/*
 * A record not taken at block @off of segment @s (@kind, @ri; @what is
 * wrong with it), after records of the life @seg_seq up to @last: note
 * it, and its suspect (*@su) when it is one; then read on for proofs if
 * its header holds (*@followed).
 */
static int drop_record(struct wow_scan *sc, u32 s, u32 off,
		       enum wow_rec_kind kind, const struct wow_record_info *ri,
		       bool decoded, u64 last, const char *what,
		       struct wow_scan_suspect **su, bool *followed)
{
	u32 bps = sc->g.blocks_per_seg, i;
	/*
	 * Which record is missing: the one this intact header describes if
	 * it is the life's next, else (a torn or corrupt header, or a gap in
	 * the seqs) the next one.  An intact header's claim holds even when
	 * its data does not: it can prove the missing record durable.
	 */
	bool own = kind == WOW_REC_OK && (!off || ri->seq == last + 1);
	u64 sseq = own ? ri->seq : off ? last + 1 : 0;
	int r;

	r = record(sc, s, off, ri, kind == WOW_REC_OK ? WOW_SCAN_REC_DROPPED :
		   WOW_SCAN_REC_BAD, what);
	if (r)
		return r;
	if (kind == WOW_REC_OK)
		note_claim(sc, s, ri->seq, ri->durable_seq);
	sc->tot.dropped++;
	/* its origin blocks are known if its header held */
	if (sseq)
		*su = note_suspect(sc, s, off, sseq,
				   own && decoded ? sc->oblocks : NULL,
				   ri->nr_data, what);
	note_why(sc, off ? WOW_SCAN_DROPPED : WOW_SCAN_DROPPED_FIRST, s, off,
		 0, sseq, 0, 0, what);
	for (i = 0; (sc->g.flags & WOW_SCAN_SALVAGE) && own && decoded &&
	     i < ri->nr_data; i++) {
		r = sc->ops->lost(sc->ctx, sc->oblocks[i], ri->seq);
		if (r)
			return r;
	}
	if (kind == WOW_REC_OK && ri->nr_data <= bps - off - 1) {
		r = scan_proof(sc, s, off + 1 + ri->nr_data, ri->seq,
			       ri->seg_seq, *su);
		if (r)
			return r;
		*followed = true;
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
int wow_scan_segment(struct wow_scan *sc, u32 s, struct wow_scan_seg *out)
{
	u32 bs = sc->g.block_size, bps = sc->g.blocks_per_seg, off = 0;
	struct wow_scan_suspect *su = NULL;
	u64 seg_seq = 0, last = 0;
	bool followed = false, newer = false;
	int r;

	while (off < bps) {
		const char *why = NULL, *bad_why = NULL;
		struct wow_record_info ri = { };
		enum wow_rec_kind kind;
		bool ok, decoded = false;
		void *hdr;
		u32 nt = 0;

		r = sc->ops->read(sc->ctx, s, off, 1, !off, &hdr);
		if (r)
			return r;
		kind = wow_record_judge(hdr, bs, sc->g.uuid, &ri, &bad_why);
		if (kind == WOW_REC_FOREIGN)
			break;
		if (kind == WOW_REC_OK && off && ri.seg_seq != seg_seq) {
			/*
			 * a newer life's record: the segment was reused, and
			 * reuse waits until the old life is dead and that is
			 * durable, so what the new life wrote over is lost
			 * harmlessly (its own first record may be lost: it was
			 * never made durable)
			 */
			newer = ri.seg_seq > seg_seq;
			break;
		}
		ok = kind == WOW_REC_OK;
		if (ok && ri.nr_data > bps - off - 1) {
			ok = false;
			why = "runs past the segment's end";
		} else if (ok && (off ? ri.seq != last + 1 :
				  ri.seq != ri.seg_seq)) {
			ok = false;
			why = off ? "seq does not continue the life" :
				    "the first record's seq is not seg_seq";
		}
		if (ok) {
			r = decode_tombs(sc, s, hdr, &ri, &nt);
			if (r)
				return r;
			ok = decode_oblocks(sc, hdr, &ri);
			wow_scan_save_crcs(sc->crcs, hdr, &ri);
			if (!ok)
				why = "an origin block past the origin's end";
			decoded = ok;
		}
		if (ok) {
			r = check_data(sc, s, off, &ri, &ok);
			if (r)
				return r;
			if (!ok)
				why = "data checksum";
		}
		if (!ok) {
			r = drop_record(sc, s, off, kind, &ri, decoded, last,
					kind == WOW_REC_OK ? why : bad_why,
					&su, &followed);
			if (r)
				return r;
			break;
		}

		take_record(sc, s, off, &ri, nt);
		r = record(sc, s, off, &ri, WOW_SCAN_REC_TAKEN, NULL);
		if (r)
			return r;
		note_claim(sc, s, ri.seq, ri.durable_seq);
		if (!off)
			seg_seq = ri.seq;
		last = ri.seq;
		sc->tot.records++;
		sc->tot.max_seq = max_t(u64, sc->tot.max_seq, ri.seq);
		off += 1 + ri.nr_data;
	}
	if (seg_seq && !followed && !newer && off < bps) {
		r = find_continuation(sc, s, off, last, seg_seq, !!su);
		if (r)
			return r;
	}
	sc->lives[s] = seg_seq;
	out->seq = seg_seq;
	out->max_seq = last;
	out->wp = off;
	return 0;
}

/*
 * Apply every tombstone (it kills the copies of its range with seq <= t)
 * and then every clean mark (those copies were destaged) to the recovered
 * index, through their envelopes: one pass over the slots, however many
 * and however wide the ranges are.
 */
static int apply_tombs(struct wow_scan *sc)
{
	u32 nr_slots = sc->g.nr_segments * sc->g.blocks_per_seg;
	struct wow_tomb_range *kills, *kenv, *cenv;
	const struct wow_tomb_range *e, *t;
	u32 nk = 0, nke = 0, nce = 0, s, i, n;
	u32 *heap = NULL;
	u64 total = 0, b;
	int r = -ENOMEM;

	for (s = 0; s < sc->g.nr_segments; s++) {
		sc->ops->tombs(sc->ctx, s, &n);
		total += n;
	}
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
	for (s = 0; s < sc->g.nr_segments; s++) {
		t = sc->ops->tombs(sc->ctx, s, &n);
		for (i = 0; i < n; i++)
			kills[nk++] = t[i];
	}
	nke = wow_tomb_envelope(kills, nk, kenv, heap);
	nce = wow_tomb_envelope(sc->cleans, sc->nr_cleans, cenv, heap);

	for (s = 0; s < nr_slots; s++) {
		if (!sc->ops->valid(sc->ctx, s, &b))
			continue;
		e = wow_tomb_find(kenv, nke, b);
		if (e && *slot_seq(sc, s) <= e->t) {
			sc->ops->kill(sc->ctx, s);
			continue;
		}
		e = wow_tomb_find(cenv, nce, b);
		if (e && *slot_seq(sc, s) <= e->t)
			sc->ops->clean(sc->ctx, s);
		if (!(s % 4096) && sc->ops->resched)
			sc->ops->resched(sc->ctx);
	}
	/* judge_suspects asks it which lost versions were dead anyway */
	sc->kenv = kenv;
	sc->nr_kenv = nke;
	kenv = NULL;
	sc->cenv = cenv;
	sc->nr_cenv = nce;
	cenv = NULL;
	r = 0;
out:
	kvfree(kills);
	kvfree(kenv);
	kvfree(cenv);
	kvfree(heap);
	return r;
}

int wow_scan_finish(struct wow_scan *sc)
{
	int r = apply_tombs(sc);

	if (!r)
		r = judge_suspects(sc);
	return r;
}

const struct wow_scan_totals *wow_scan_totals(const struct wow_scan *sc)
{
	return &sc->tot;
}

const struct wow_scan_claim *wow_scan_claims(const struct wow_scan *sc)
{
	return sc->claims;
}

const struct wow_scan_suspect *wow_scan_suspects(const struct wow_scan *sc,
						 u32 *n)
{
	*n = sc->nr_suspects;
	return sc->sus;
}

void wow_scan_envelopes(const struct wow_scan *sc,
			const struct wow_tomb_range **kenv, u32 *nk,
			const struct wow_tomb_range **cenv, u32 *nc)
{
	*kenv = sc->kenv;
	*nk = sc->nr_kenv;
	*cenv = sc->cenv;
	*nc = sc->nr_cenv;
}

struct wow_scan *wow_scan_alloc(const struct wow_scan_geo *g,
				const struct wow_scan_ops *ops, void *ctx)
{
	u32 nr_slots = g->nr_segments * g->blocks_per_seg;
	u32 cap = wow_record_capacity(g->block_size, 0, 0);
	struct wow_scan *sc = kzalloc(sizeof(*sc), GFP_KERNEL);

	if (!sc)
		return NULL;
	sc->g = *g;
	sc->ops = ops;
	sc->ctx = ctx;
	sc->claims = kvcalloc(g->nr_segments, sizeof(*sc->claims), GFP_KERNEL);
	sc->lives = kvcalloc(g->nr_segments, sizeof(u64), GFP_KERNEL);
	sc->sus = kvmalloc_array(g->nr_segments, sizeof(*sc->sus), GFP_KERNEL);
	sc->suspects = kvmalloc_array(g->nr_segments, sizeof(u64), GFP_KERNEL);
	sc->oblocks = kvmalloc_array(cap, sizeof(u64), GFP_KERNEL);
	sc->crcs = kvmalloc_array(cap, sizeof(u32), GFP_KERNEL);
	sc->kills = kvmalloc_array(max(wow_max_tombs(g->block_size), 1U),
				   sizeof(*sc->kills), GFP_KERNEL);
	if (wow_seqs_init(&sc->seqs, nr_slots, true) || !sc->claims ||
	    !sc->lives || !sc->sus || !sc->suspects || !sc->oblocks ||
	    !sc->crcs || !sc->kills) {
		wow_scan_free(sc);
		return NULL;
	}
	return sc;
}

void wow_scan_free(struct wow_scan *sc)
{
	u32 i;

	if (!sc)
		return;
	wow_seqs_free(&sc->seqs);
	kvfree(sc->claims);
	kvfree(sc->lives);
	for (i = 0; i < sc->nr_suspects; i++)
		kvfree(sc->sus[i].lost);
	kvfree(sc->sus);
	kvfree(sc->suspects);
	kvfree(sc->kenv);
	kvfree(sc->cenv);
	kvfree(sc->cleans);
	kvfree(sc->oblocks);
	kvfree(sc->crcs);
	kvfree(sc->kills);
	kfree(sc);
}
