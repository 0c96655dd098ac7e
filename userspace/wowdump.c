// SPDX-License-Identifier: GPL-2.0
/*
 * wowctl dump (see wowcache.h): the superblock, health, checkpoint,
 * segments with their records, and the index a load rebuilds, as JSON.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "../dm-wow/dm-wow-types.h"
#include "../dm-wow/dm-wow-format.h"
#include "../dm-wow/dm-wow-ckpt.h"

#include "json.h"
#include "wowcache-int.h"

static const char *rec_status_name(enum wowc_rec_status s)
{
	static const char *const names[] = {
		[WOWC_REC_OK] = "ok",
		[WOWC_REC_BAD] = "bad",
		[WOWC_REC_DROPPED] = "dropped",
		[WOWC_REC_PROOF] = "proof",
		[WOWC_REC_SALVAGED] = "salvaged",
	};

	return names[s];
}

/* a segment number, or null for none (WOWC_NO_SEG) */
static void json_seg(struct json *j, uint32_t s)
{
	if (s == WOWC_NO_SEG)
		json_null(j);
	else
		json_u64(j, s);
}

static void json_sb(struct json *j, const struct wowc *c)
{
	const struct wowc_sb *s = &c->sb;
	char u[40];

	wowc_uuid_str(s->uuid, u);
	json_open(j, '{', -1);
	wowc_json_kv(j, "version", s->version);
	wowc_json_kv(j, "flags", s->flags);
	wowc_json_kv(j, "block_size", s->block_size);
	wowc_json_kv(j, "erase_block_size", s->erase_block_size);
	wowc_json_kv(j, "write_group_size", s->write_group_size);
	wowc_json_kv(j, "origin_sectors", s->origin_sectors);
	wowc_json_kv(j, "cache_sectors", s->cache_sectors);
	wowc_json_kv(j, "first_segment_sector", s->first_segment_sector);
	wowc_json_kv(j, "nr_segments", s->nr_segments);
	wowc_json_kv(j, "format_seq", s->format_seq);
	json_key(j, "uuid");
	json_str(j, u);
	json_key(j, "origin_id");
	json_str(j, s->origin_id);
	wowc_json_kv(j, "cache_blocks", c->nr_slots);
	json_close(j);
}

static void json_ckpt(struct json *j, const struct wowc_ckpt *k)
{
	json_open(j, '{', -1);
	json_key(j, "state");
	json_str(j, wowc_ckpt_state_name(k->state));
	if (k->state >= WOWC_CKPT_RETIRED) {
		wowc_json_kv(j, "generation", k->generation);
		json_key(j, "valid");
		json_bool(j, k->flags & WOW_CKPT_VALID);
		wowc_json_kv(j, "next_seq", k->next_seq);
		wowc_json_kv(j, "completed_seq", k->completed_seq);
		wowc_json_kv(j, "nr_slots", k->nr_slots);
		wowc_json_kv(j, "nr_segments", k->nr_segments);
		wowc_json_kv(j, "slot_blocks", k->slot_blocks);
		wowc_json_kv(j, "seg_blocks", k->seg_blocks);
		wowc_json_kv(j, "nr_tombs", k->nr_tombs);
	}
	if (k->state >= WOWC_CKPT_MISFIT) {
		json_key(j, "head_seg");
		json_seg(j, k->head_seg);
		wowc_json_kv(j, "head_wp", k->head_wp);
		json_key(j, "next_seg");
		json_seg(j, k->next_seg);
	}
	if (k->why[0]) {
		json_key(j, "why");
		json_str(j, k->why);
	}
	json_close(j);
}

/* segment @i: its state in @v, its records from the scan @lg */
static void json_segment(struct json *j, const struct wowc *c, uint64_t i,
			 const struct wowc_view *v, const struct wowc_view *lg)
{
	const struct wowc_seg *sg = &v->segs[i], *ls = &lg->segs[i];
	uint32_t n;

	json_open(j, '{', -1);
	wowc_json_kv(j, "segment", i);
	wowc_json_kv(j, "offset", wowc_seg_offset(c, i));
	wowc_json_kv(j, "seq", sg->seq);
	wowc_json_kv(j, "max_seq", sg->max_seq);
	wowc_json_kv(j, "wp", sg->wp);
	json_key(j, "state");
	json_str(j, sg->closed ? "closed" : "free");
	wowc_json_kv(j, "valid", sg->nr_valid);
	wowc_json_kv(j, "dirty", sg->nr_dirty);
	json_key(j, "tombs");
	json_open(j, '[', -1);
	for (n = 0; n < sg->nr_tombs; n++) {
		json_open(j, '{', -1);
		wowc_json_kv(j, "start", sg->tombs[n].start);
		wowc_json_kv(j, "nr", sg->tombs[n].nr);
		wowc_json_kv(j, "t", sg->tombs[n].t);
		json_close(j);
	}
	json_close(j);
	json_key(j, "records");
	json_open(j, '[', 6);
	for (n = 0; n < ls->nr_recs; n++) {
		const struct wowc_rec *r = &ls->recs[n];

		json_open(j, '{', -1);
		wowc_json_kv(j, "block", r->block);
		wowc_json_kv(j, "seq", r->seq);
		wowc_json_kv(j, "seg_seq", r->seg_seq);
		wowc_json_kv(j, "durable_seq", r->durable_seq);
		wowc_json_kv(j, "nr_data", r->nr_data);
		wowc_json_kv(j, "nr_tombs", r->nr_tombs);
		json_key(j, "next_seg");
		json_seg(j, r->next_seg);
		json_key(j, "status");
		json_str(j, rec_status_name(r->status));
		if (r->why) {
			json_key(j, "why");
			json_str(j, r->why);
		}
		json_close(j);
	}
	json_close(j);
	json_close(j);
}

/* the index a load rebuilds: every valid block, by origin block */
static void json_index(struct json *j, const struct wowc *c,
		       const struct wowc_view *v)
{
	uint64_t *obs = malloc((v->valid_blocks + 1) * sizeof(*obs));
	uint64_t i, n = 0;

	json_open(j, '{', -1);
	wowc_json_kv(j, "valid_blocks", v->valid_blocks);
	wowc_json_kv(j, "dirty_blocks", v->dirty_blocks);
	json_key(j, "blocks");
	json_open(j, '[', 4);
	for (i = 0; obs && i < c->nr_slots; i++) {
		uint64_t sl = wowc_slot(v, i);

		if (sl & WOWC_SLOT_VALID)
			obs[n++] = sl & WOWC_SLOT_OBLOCK;
	}
	if (obs)
		qsort(obs, n, sizeof(*obs), cmp_u64);
	for (i = 0; i < n; i++) {
		uint32_t sl = wowc_lookup(v, obs[i]);

		json_open(j, '{', -1);
		wowc_json_kv(j, "oblock", obs[i]);
		wowc_json_kv(j, "slot", sl);
		json_key(j, "dirty");
		json_bool(j, wowc_slot(v, sl) & WOWC_SLOT_DIRTY);
		json_close(j);
	}
	free(obs);
	json_close(j);
	json_close(j);
}

static void dump_json(FILE *f, struct wowc *c, const struct wowc_view *v,
		      const struct wowc_view *lg)
{
	struct json j;
	uint64_t i;

	json_init(&j, f, true);
	json_open(&j, '{', 2);
	json_key(&j, "device");
	json_str(&j, c->path);
	wowc_json_kv(&j, "size", c->size);
	json_key(&j, "superblock");
	json_sb(&j, c);
	json_key(&j, "health");
	json_open(&j, '{', -1);
	json_key(&j, "written");
	json_bool(&j, c->health.ours);
	json_key(&j, "needs_check");
	json_bool(&j, c->health.needs_check);
	wowc_json_kv(&j, "state", c->health.state);
	wowc_json_kv(&j, "time", c->health.time);
	json_key(&j, "what");
	json_str(&j, c->health.what);
	json_close(&j);
	json_key(&j, "checkpoint");
	json_ckpt(&j, &c->ckpt);
	json_key(&j, "source");
	json_str(&j, v->source == WOWC_SRC_CKPT ? "checkpoint" : "log");
	json_key(&j, "loads");
	json_bool(&j, !v->refused);
	wowc_json_kv(&j, "next_seq", v->next_seq);
	wowc_json_kv(&j, "replayed", v->nr_replayed);
	wowc_json_kv(&j, "replay_dropped", v->nr_replay_dropped);
	wowc_json_kv(&j, "records", lg->nr_records);
	wowc_json_kv(&j, "dropped", lg->nr_dropped);
	json_key(&j, "segments");
	json_open(&j, '[', 4);
	for (i = 0; i < c->nr_segments; i++)
		json_segment(&j, c, i, v, lg);
	json_close(&j);
	json_key(&j, "index");
	json_index(&j, c, v);
	json_key(&j, "problems");
	json_open(&j, '[', 4);
	wowc_json_problems(&j, &c->probs);
	wowc_json_problems(&j, &v->probs);
	if (lg != v)
		wowc_json_problems(&j, &lg->probs);
	json_close(&j);
	json_close(&j);
	fputc('\n', f);
}

int wowc_dump(const char *path, unsigned int flags, FILE *out, FILE *errf)
{
	struct wowc_view v = { 0 }, lg = { 0 };
	char err[WOWC_ERR_LEN];
	struct wowc *c;
	int rc;

	if (wowc_open(path, &c, err)) {
		fprintf(errf, "wowctl: %s\n", err);
		return WOWC_EXIT_OPERR;
	}
	if (c->sb_kind != WOWC_SB_VALID) {
		struct json j;

		json_init(&j, out, true);
		json_open(&j, '{', 2);
		json_key(&j, "device");
		json_str(&j, path);
		json_key(&j, "superblock");
		json_null(&j);
		json_key(&j, "problems");
		json_open(&j, '[', 4);
		wowc_json_problems(&j, &c->probs);
		json_close(&j);
		json_close(&j);
		fputc('\n', out);
		rc = wowc_exit_code(c, NULL);
		wowc_close(c);
		return rc;
	}
	if (wowc_view_build(c, flags & WOWC_SCAN, &v, err) ||
	    (v.source == WOWC_SRC_CKPT &&
	     wowc_view_build(c, WOWC_SCAN, &lg, err))) {
		fprintf(errf, "wowctl: %s\n", err);
		wowc_view_free(&v);
		wowc_close(c);
		return WOWC_EXIT_OPERR;
	}
	dump_json(out, c, &v, lg.c ? &lg : &v);
	rc = wowc_exit_code(c, &v);
	if (lg.c && wowc_exit_code(c, &lg) > rc)
		rc = wowc_exit_code(c, &lg);
	wowc_view_free(&v);
	wowc_view_free(&lg);
	wowc_close(c);
	return rc;
}
