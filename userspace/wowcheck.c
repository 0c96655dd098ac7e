// SPDX-License-Identifier: GPL-2.0
/*
 * wowctl check (see wowcache.h): the checkpoint and the log replayed
 * after it against a scan of the whole log, and a report.
 */
#include <inttypes.h>

#include "../dm-wow/dm-wow-types.h"

#include "wowcache-int.h"

/*
 * The checkpoint and the log replayed after it (@ck, what the kernel
 * loads) against a scan of the whole log (@lg).  They must agree on every
 * copy (the same origin block in the same slot) and on every dirty block,
 * except where, slot by slot, they legitimately differ:
 *
 *  - clean in @ck, dirty in @lg: destaged since the last clean mark.
 *    Clean marks are written only at a clean shutdown (they are hints and
 *    not carried forward); a checkpoint keeps the clean bits destage set,
 *    the scan cannot know them and re-marks the block dirty (a load by the
 *    scan would destage it again).  A note.
 *  - dirty in @ck, clean in @lg, WOWC_UNSURE_CLEAN: a clean mark replayed
 *    after the checkpoint whose t lies within the life of the segment of a
 *    checkpointed copy: the copy's own seq is not in the checkpoint, so the
 *    replay (wow_ckpt_covers) keeps it dirty; it is destaged again.  A note.
 *  - valid in @ck, not in @lg, WOWC_UNSURE_KILL: a tombstone likewise.
 *    The kernel's own tombstones always decide (a discard's t is its own
 *    record's seq, reclaim's the victim's newest, a carried one's is above
 *    every survivor), so this is counted as a disagreement: the load keeps
 *    a copy the log says is dead.
 *  - the copies of records the scan takes that the chain does not reach
 *    (seq at or past where the replay stopped), and the older copies they
 *    replace: reported once, by record.
 *
 * Any other difference is a disagreement (a warning).
 */
static void compare_views(struct wowc *c, const struct wowc_view *ck,
			  const struct wowc_view *lg, struct wowc_problems *ps)
{
	uint64_t s, differ = 0, first = UINT64_MAX, hints = 0, unsure = 0;
	uint64_t past = 0, past_newest = 0, lost = 0, lost_seq = 0, kills = 0;
	const uint64_t vd = WOWC_SLOT_VALID | WOWC_SLOT_OBLOCK;
	uint32_t j;

	/*
	 * Records past the end of the chain, with an intact header (taken by
	 * the scan, or dropped or read for its claim past a bad one): a
	 * load does not replay them.  One a later record proves durable is
	 * lost, whether the scan takes it or refuses the cache for it.
	 */
	for (s = 0; s < c->nr_segments; s++)
		for (j = 0; j < lg->segs[s].nr_recs; j++) {
			const struct wowc_rec *r = &lg->segs[s].recs[j];

			if (r->status == WOWC_REC_BAD || r->seq < ck->replay_end ||
			    ck->refused)
				continue;
			if (r->status == WOWC_REC_OK)
				past++;
			past_newest = max(past_newest, r->seq);
			if (wowc_vouched(lg, r->seq) && !lost++)
				lost_seq = r->seq;
		}
	if (lost)
		wowc_problem(ps, WOWC_SEV_ERROR,
			     "%" PRIu64 " log records proven durable (the first %" PRIu64 ") are past the end of the chain the kernel replays after checkpoint %" PRIu64 " (it stops at record %" PRIu64 " and loads): a load loses them",
			     lost, lost_seq, c->ckpt.generation,
			     ck->replay_end);
	else if (past)
		wowc_problem(ps, WOWC_SEV_WARN,
			     "%" PRIu64 " intact log records (newest %" PRIu64 ") are past the end of the chain the kernel replays after checkpoint %" PRIu64 " (it stops at record %" PRIu64 "); none proven durable: a load drops them as a torn tail, a scan would take them",
			     past, past_newest, c->ckpt.generation,
			     ck->replay_end);

	for (s = 0; s < c->nr_slots; s++) {
		uint64_t a = wowc_slot(ck, s), b = wowc_slot(lg, s);
		uint32_t o;

		if (!(a & WOWC_SLOT_VALID) && !(b & WOWC_SLOT_VALID))
			continue;
		if ((a & vd) == (b & vd)) {
			if (!(a & WOWC_SLOT_DIRTY) && (b & WOWC_SLOT_DIRTY))
				hints++;
			else if ((a & WOWC_SLOT_DIRTY) &&
				 !(b & WOWC_SLOT_DIRTY)) {
				if (ck->uncertain[s] & WOWC_UNSURE_CLEAN)
					unsure++;
				else
					goto differ;
			}
			continue;
		}
		/* a copy of a record past the chain, or one it replaced */
		if ((b & WOWC_SLOT_VALID) && lg->slot_seq[s] >= ck->replay_end)
			continue;
		if (a & WOWC_SLOT_VALID) {
			o = wowc_lookup(lg, a & WOWC_SLOT_OBLOCK);
			if (o != WOWC_NO_SLOT &&
			    lg->slot_seq[o] >= ck->replay_end)
				continue;
			if (!(b & WOWC_SLOT_VALID) &&
			    (ck->uncertain[s] & WOWC_UNSURE_KILL))
				kills++;
		}
differ:
		differ++;
		if (first == UINT64_MAX)
			first = s;
	}
	if (differ) {
		uint64_t a = wowc_slot(ck, first), b = wowc_slot(lg, first);

		wowc_problem(ps, WOWC_SEV_WARN,
			     "the checkpoint (and the log replayed after it) and the log disagree on %" PRIu64 " slots; first slot %" PRIu64 ": checkpoint %s%s block %" PRIu64 ", log %s%s block %" PRIu64 "%s",
			     differ, first,
			     a & WOWC_SLOT_VALID ? "valid" : "empty",
			     a & WOWC_SLOT_DIRTY ? " dirty" : "",
			     a & WOWC_SLOT_OBLOCK,
			     b & WOWC_SLOT_VALID ? "valid" : "empty",
			     b & WOWC_SLOT_DIRTY ? " dirty" : "",
			     b & WOWC_SLOT_OBLOCK,
			     kills ? " (some copies a tombstone after the checkpoint may kill: its t lies within their segment life, the load keeps them)" : "");
	}
	if (hints)
		wowc_problem(ps, WOWC_SEV_INFO,
			     "%" PRIu64 " blocks clean in the checkpoint have no clean mark in the log (a load after a crash would destage them again)",
			     hints);
	if (unsure)
		wowc_problem(ps, WOWC_SEV_INFO,
			     "%" PRIu64 " checkpointed blocks a clean mark after the checkpoint may cover stay dirty in the replay (its t lies within their segment life; they are destaged again)",
			     unsure);
	if (lg->refused && !ck->refused && !lost)
		wowc_problem(ps, WOWC_SEV_INFO,
			     "the kernel loads the checkpoint and does not read what the scan refuses: the corrupt data is served from the cache as it is");
}

static void print_summary(FILE *out, const struct wowc *c)
{
	const struct wowc_sb *s = &c->sb;
	char u[40];

	wowc_uuid_str(s->uuid, u);
	fprintf(out, "superblock: version %u, uuid %s, block_size %u, erase_block_size %u, write_group_size %u\n",
		s->version, u, s->block_size, s->erase_block_size,
		s->write_group_size);
	fprintf(out, "  origin %" PRIu64 " sectors%s%s%s, cache %" PRIu64 " sectors, %" PRIu64 " segments from sector %" PRIu64 ", %" PRIu64 " cache blocks\n",
		s->origin_sectors, s->origin_id[0] ? " (" : "",
		s->origin_id, s->origin_id[0] ? ")" : "", s->cache_sectors,
		s->nr_segments, s->first_segment_sector, c->nr_slots);
	if (c->health.needs_check)
		fprintf(out, "health: needs_check (%s)\n", c->health.what);
	else
		fprintf(out, "health: clear\n");
	if (s->version < 2) {
		fprintf(out, "checkpoint: none (format version 1)\n");
		return;
	}
	fprintf(out, "checkpoint: %s", wowc_ckpt_state_name(c->ckpt.state));
	if (c->ckpt.state >= WOWC_CKPT_RETIRED)
		fprintf(out, ", generation %" PRIu64, c->ckpt.generation);
	if (c->ckpt.state >= WOWC_CKPT_MISFIT)
		fprintf(out, ", next_seq %" PRIu64 ", %" PRIu64 " tombstones",
			c->ckpt.next_seq, c->ckpt.nr_tombs);
	if (c->ckpt.state >= WOWC_CKPT_MISFIT) {
		if (c->ckpt.head_seg == WOWC_NO_SEG)
			fprintf(out, ", log head: none");
		else
			fprintf(out, ", log head: segment %u block %u",
				c->ckpt.head_seg, c->ckpt.head_wp);
		if (c->ckpt.next_seg == WOWC_NO_SEG)
			fprintf(out, ", next segment unknown");
		else
			fprintf(out, ", next segment %u", c->ckpt.next_seg);
	}
	if (c->ckpt.why[0])
		fprintf(out, " (%s)", c->ckpt.why);
	fputc('\n', out);
}

static uint64_t nr_free(const struct wowc *c, const struct wowc_view *v)
{
	uint64_t s, n = 0;

	for (s = 0; s < c->nr_segments; s++)
		n += !v->segs[s].closed;
	return n;
}

int wowc_check(const char *path, FILE *out, FILE *errf)
{
	struct wowc_view ck = { 0 }, lg = { 0 };
	struct wowc_problems ps = { 0 };
	char err[WOWC_ERR_LEN];
	struct wowc *c;
	int rc, w;

	if (wowc_open(path, &c, err)) {
		fprintf(errf, "wowctl: %s\n", err);
		return WOWC_EXIT_OPERR;
	}
	fprintf(out, "%s: %" PRIu64 " bytes\n", path, c->size);
	if (c->sb_kind != WOWC_SB_VALID) {
		wowc_print_problems(out, &c->probs);
		rc = wowc_exit_code(c, NULL);
		goto out;
	}
	print_summary(out, c);
	if (c->ckpt.state == WOWC_CKPT_VALID) {
		if (wowc_view_build(c, 0, &ck, err)) {
			fprintf(errf, "wowctl: %s\n", err);
			rc = WOWC_EXIT_OPERR;
			goto out;
		}
		if (ck.source == WOWC_SRC_CKPT)
			fprintf(out, "checkpoint: checks; %" PRIu64 " records replayed after it (the chain ends at record %" PRIu64 "): %" PRIu64 " dirty of %" PRIu64 " valid blocks, %" PRIu64 " free segments\n",
				ck.nr_replayed, ck.replay_end,
				ck.dirty_blocks, ck.valid_blocks,
				nr_free(c, &ck));
	}
	if (wowc_view_build(c, WOWC_SCAN, &lg, err)) {
		fprintf(errf, "wowctl: %s\n", err);
		rc = WOWC_EXIT_OPERR;
		goto out;
	}
	fprintf(out, "log: %" PRIu64 " records (%" PRIu64 " dropped): %" PRIu64 " dirty of %" PRIu64 " valid blocks, %" PRIu64 " free segments; newest record %" PRIu64 "\n",
		lg.nr_records, lg.nr_dropped, lg.dirty_blocks, lg.valid_blocks,
		nr_free(c, &lg), lg.max_seq);
	if (ck.c && ck.source == WOWC_SRC_CKPT)
		compare_views(c, &ck, &lg, &ps);
	fprintf(out, "a load reads the %s: %s\n",
		ck.c && ck.source == WOWC_SRC_CKPT ? "checkpoint" : "log",
		(ck.c && ck.source == WOWC_SRC_CKPT ? ck.refused : lg.refused) ?
		"REFUSED" : "loads");
	wowc_print_problems(out, &c->probs);
	if (ck.c)
		wowc_print_problems(out, &ck.probs);
	wowc_print_problems(out, &lg.probs);
	wowc_print_problems(out, &ps);
	rc = wowc_exit_code(c, &lg);
	if (ck.c && wowc_exit_code(c, &ck) > rc)
		rc = wowc_exit_code(c, &ck);
	w = wowc_worst(&ps);
	if (w == WOWC_SEV_ERROR)
		rc = WOWC_EXIT_ERROR;
	else if (w == WOWC_SEV_WARN && rc < WOWC_EXIT_WARN)
		rc = WOWC_EXIT_WARN;
out:
	fprintf(out, "result: %s\n", rc == WOWC_EXIT_CLEAN ? "clean" :
		rc == WOWC_EXIT_WARN ? "warnings" : "errors");
	wowc_problems_free(&ps);
	wowc_view_free(&ck);
	wowc_view_free(&lg);
	wowc_close(c);
	return rc;
}
