// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow, the log's checkpoints: when one is due, which area it goes to,
 * what goes in (the index's slots, the segments and their tombstones, as
 * a snapshot between two records that a worker writes while the log goes
 * on, the slot table blocks copied on write), and the log's side of
 * loading one (the callbacks that fill the index and the segments).
 * dm-wow-checkpoint.c does the I/O, dm-wow-ckpt.c the codec.
 *
 * Locking: wc->lock guards what the snapshot copies; cl->mutex
 * serialises checkpoint writes (the commit worker's periodic one, the
 * background worker's, suspend's).  Functions marked "lock held" assert
 * it.
 */
#include <linux/blkdev.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "dm-wow.h"
#include "dm-wow-checkpoint.h"
#include "dm-wow-log.h"
#include "dm-wow-seg.h"
#include "dm-wow-ckptlog.h"
#include "dm-wow-ckptread.h"

/*
 * A checkpoint being written: what it holds, the area it goes to, the one
 * before it (-1: none) and whether that stays valid, and the counts it
 * reports.
 */
struct ckpt_run {
	struct wow_ckpt_info ci;
	int k;
	int prev;
	bool keep;
	u64 dirty;
	u64 valid;
};

/*
 * The checkpoints' state, this file's alone (wc->ckptlog).  Under
 * wc->lock unless noted.
 */
static void wow_ckptlog_work(struct work_struct *ws);

struct wow_ckptlog {
	struct wow_cache *wc;
	/*
	 * one checkpoint write at a time (the commit worker's, the
	 * background writer's, suspend's); the fields it alone uses say so
	 */
	struct mutex mutex;
	u64 gen;			/* the newest generation (mutex) */
	u64 log_blocks;			/* log written since the last one */
	/*
	 * per area: its slot table blocks' crc32c and whether what it holds
	 * is known (else the next checkpoint there writes it whole) (mutex);
	 * the index's track of that area, taken for the one being written
	 */
	__le32 *csums[WOW_INDEX_TRACKS];
	bool known[WOW_INDEX_TRACKS];
	unsigned long *changes;
	/*
	 * Format version 4: the area (0 or 1) holding the newest valid
	 * checkpoint, -1 none; the next goes to the other one (mutex, or
	 * recovering)
	 */
	int area;
	bool live;			/* the last load read one */
	/*
	 * the checkpoint written in the background (work): what it holds,
	 * taken between two records; busy until it ends
	 */
	struct ckpt_run cr;
	struct wow_ckpt_snap *snap;
	struct work_struct work;
	bool busy;
	u32 aborts;			/* lost snapshots in a row */
	/*
	 * its slot table blocks not yet handed to the writer (a bit each),
	 * and those copied before a change came: when more are copied than
	 * there is room for, the snapshot is lost (cow_lost)
	 */
	unsigned long *cow_map;
	u64 cow_next;			/* where the writer's walk is */
	void *cow_raw;
	u64 *cow_ids;
	u32 cow_room;
	u32 cow_n;
	bool cow_lost;
};

#define MSG_CKPT_NOT_WHOLE "%s: checkpoint %llu (area %d) is not whole, written when the log stopped; loading checkpoint %llu (area %d)"
#define MSG_CKPT_WRITTEN "%s: checkpoint %llu written (%llu of its %llu blocks, %llu tombstones): %llu dirty of %llu valid blocks"

int wow_ckptlog_alloc(struct wow_cache *wc)
{
	u32 bs = wc->args.block_size, i;
	u64 blocks = wow_ckpt_slot_blocks(wc->sb.version, wc->nr_slots, bs);
	struct wow_ckptlog *cl;

	cl = kzalloc(sizeof(*cl), GFP_KERNEL);
	if (!cl)
		return -ENOMEM;
	wc->ckptlog = cl;
	cl->wc = wc;
	cl->area = -1;
	mutex_init(&cl->mutex);
	INIT_WORK(&cl->work, wow_ckptlog_work);
	for (i = 0; i < WOW_INDEX_TRACKS; i++) {
		cl->csums[i] = kvcalloc(blocks, sizeof(__le32), GFP_KERNEL);
		if (!cl->csums[i])
			return -ENOMEM;
	}
	cl->changes = kvcalloc(BITS_TO_LONGS(wc->index.nr_track_bits),
			       sizeof(unsigned long), GFP_KERNEL);
	cl->snap = wow_ckpt_snap_alloc(wc->nr_segments);
	cl->cow_map = bitmap_zalloc(blocks, GFP_KERNEL);
	cl->cow_room = min_t(u64, WOW_CKPT_COW_BLOCKS, blocks);
	cl->cow_raw = kvmalloc_array(cl->cow_room,
				     wow_ckpt_slots_per_block(wc->sb.version,
							      bs) *
				     sizeof(struct wow_slot), GFP_KERNEL);
	cl->cow_ids = kvmalloc_array(cl->cow_room, sizeof(*cl->cow_ids),
				     GFP_KERNEL);
	if (!cl->changes || !cl->snap || !cl->cow_map || !cl->cow_raw ||
	    !cl->cow_ids)
		return -ENOMEM;
	return 0;
}

void wow_ckptlog_free(struct wow_cache *wc)
{
	struct wow_ckptlog *cl = wc->ckptlog;
	u32 i;

	if (!cl)
		return;
	for (i = 0; i < WOW_INDEX_TRACKS; i++)
		kvfree(cl->csums[i]);
	kvfree(cl->changes);
	wow_ckpt_snap_free(cl->snap);
	bitmap_free(cl->cow_map);
	kvfree(cl->cow_raw);
	kvfree(cl->cow_ids);
	kfree(cl);
	wc->ckptlog = NULL;
}

void wow_ckptlog_stop(struct wow_cache *wc)
{
	struct wow_ckptlog *cl = wc->ckptlog;

	if (!cl)
		return;
	wait_event(wc->idle_wait, !READ_ONCE(cl->busy));
	flush_work(&cl->work);
}

void wow_ckptlog_logged(struct wow_cache *wc, u64 blocks)
{
	lockdep_assert_held(&wc->lock);
	wc->ckptlog->log_blocks += blocks;
}

bool wow_ckptlog_busy(struct wow_cache *wc)
{
	lockdep_assert_held(&wc->lock);
	return wc->ckptlog->busy;
}

void wow_ckptlog_none(struct wow_cache *wc)
{
	wc->ckptlog->area = -1;
}

void wow_ckptlog_forget(struct wow_cache *wc)
{
	struct wow_ckptlog *cl = wc->ckptlog;

	cl->known[0] = false;
	cl->known[1] = false;
	cl->live = false;
}

bool wow_ckptlog_loaded(struct wow_cache *wc)
{
	return wc->ckptlog->live;
}

/*
 * Checkpoint area @k: 0, or in format version 4 also 1 (the two take
 * turns: ckpt_next_area).
 */
static void wow_ckptlog_area(struct wow_cache *wc, struct wow_ckpt_area *a, int k)
{
	struct wow_ckptlog *cl = wc->ckptlog;
	const struct wow_geometry *g = &wc->sb.geo;
	u64 span = wow_ckpt_span_v(wc->sb.version, wc->nr_segments,
				   g->erase_block_size, g->block_size);

	a->bdev = wc->cache_dev->bdev;
	a->first_block = wow_ckpt_first_block_v(wc->sb.version,
						g->erase_block_size,
						g->block_size) + k * span;
	a->nr_blocks = span ?: (g->first_segment_sector << SECTOR_SHIFT) /
			       g->block_size - a->first_block;
	a->closing = wc->sb.version >= 3;
	a->version = wc->sb.version;
	a->block_size = wc->args.block_size;
	a->blocks_per_seg = wc->blocks_per_seg;
	a->uuid = wc->sb.uuid;
	a->nr_slots = wc->nr_slots;
	a->nr_segments = wc->nr_segments;
	a->max_tombs = wow_ckpt_max_tombs_v(wc->sb.version, wc->nr_segments,
					    g->erase_block_size,
					    g->block_size);
	a->nr_oblocks = wc->ti->len >> wc->block_shift;
	a->csums = cl->csums[k];
	a->whole = !cl->known[k];
}

/*
 * The callbacks run with the log quiet (postsuspend: destage, cleaning
 * and the commit worker stopped; preresume: nothing started), so they
 * read and build the index and the segments without the lock.
 */
static void slot_entry(const struct wow_slot *sl, struct wow_ckpt_entry *e)
{
	bool valid = sl->flags & WOW_SLOT_VALID;

	e->e = wow_ckpt_slot_encode(from_oblock(wow_slot_oblock(sl)), valid,
				    sl->flags & WOW_SLOT_DIRTY);
	e->crc = valid && (sl->flags & WOW_SLOT_CRC) ? sl->crc : 0;
}

static void ckpt_slot_entries(void *ctx, u64 first, u32 n,
			      struct wow_ckpt_entry *e)
{
	struct wow_cache *wc = ctx;
	u32 i;

	for (i = 0; i < n; i++)
		slot_entry(wow_slot_at(&wc->index, first + i), &e[i]);
}

/* The slots themselves, a chunk's run at a time (struct wow_slot). */
static void slots_save(struct wow_cache *wc, u64 first, u32 n, void *raw)
{
	struct wow_slot *to = raw;

	while (n) {
		u32 c = min_t(u32, n, (1U << WOW_SLOT_CHUNK_SHIFT) -
				      (first & ((1U << WOW_SLOT_CHUNK_SHIFT) - 1)));

		memcpy(to, wow_slot_at(&wc->index, first), c * sizeof(*to));
		to += c;
		first += c;
		n -= c;
	}
}

/* Slots of slot table block @b, and their copy's bytes. */
static u32 table_block_slots(struct wow_cache *wc, u64 b)
{
	u32 per = wow_ckpt_slots_per_block(wc->sb.version,
						 wc->args.block_size);

	return min_t(u64, wc->nr_slots - b * per, per);
}

/*
 * The index's before_change while a checkpoint is written in the
 * background (lock held): a slot table block it has yet to take is copied
 * as it stands, before its first change, into the room kept for that
 * (copy on write).  With no room left the snapshot is lost: the writer
 * stops and the next checkpoint takes what it would have written.
 */
static void ckpt_before_change(void *ctx, u32 slot)
{
	struct wow_cache *wc = ctx;
	struct wow_ckptlog *cl = wc->ckptlog;
	u32 per = wow_ckpt_slots_per_block(wc->sb.version,
						 wc->args.block_size);
	u64 b = slot / per;

	lockdep_assert_held(&wc->lock);
	if (!__test_and_clear_bit(b, cl->cow_map))
		return;
	if (cl->cow_n == cl->cow_room) {
		WRITE_ONCE(cl->cow_lost, true);
		return;
	}
	slots_save(wc, b * per, table_block_slots(wc, b),
		   cl->cow_raw +
		   (size_t)cl->cow_n * per * sizeof(struct wow_slot));
	cl->cow_ids[cl->cow_n] = b;
	WRITE_ONCE(cl->cow_n, cl->cow_n + 1);
}

/*
 * struct wow_ckpt_ops.hurry: the room for blocks copied on write is half
 * full, or the snapshot is lost, so the writer takes its blocks without
 * pausing (a paused writer leaves more blocks to change first).  No lock:
 * a hint, read while the writer runs.
 */
static bool ckpt_hurry(void *ctx)
{
	struct wow_cache *wc = ctx;
	struct wow_ckptlog *cl = wc->ckptlog;

	return READ_ONCE(cl->cow_n) >= cl->cow_room / 2 ||
	       READ_ONCE(cl->cow_lost);
}

/*
 * The writer's next block (struct wow_ckpt_ops.take_block): one copied on
 * write, else the next the walk finds not yet changed since the snapshot,
 * copied now (it is as it was then).
 */
static int ckpt_take_block(void *ctx, void *raw, u64 *b)
{
	struct wow_cache *wc = ctx;
	struct wow_ckptlog *cl = wc->ckptlog;
	u32 per = wow_ckpt_slots_per_block(wc->sb.version,
						 wc->args.block_size);
	size_t bytes = (size_t)per * sizeof(struct wow_slot);
	u64 nr = wow_ckpt_slot_blocks(wc->sb.version, wc->nr_slots,
					 wc->args.block_size);
	int r = 1;

	spin_lock_irq(&wc->lock);
	if (cl->cow_lost) {
		r = -EAGAIN;
	} else if (cl->cow_n) {
		WRITE_ONCE(cl->cow_n, cl->cow_n - 1);
		*b = cl->cow_ids[cl->cow_n];
		memcpy(raw, cl->cow_raw + cl->cow_n * bytes,
		       table_block_slots(wc, *b) * sizeof(struct wow_slot));
	} else {
		*b = find_next_bit(cl->cow_map, nr, cl->cow_next);
		if (*b >= nr) {
			r = 0;
		} else {
			__clear_bit(*b, cl->cow_map);
			cl->cow_next = *b + 1;
			slots_save(wc, *b * per, table_block_slots(wc, *b),
				   raw);
		}
	}
	spin_unlock_irq(&wc->lock);
	return r;
}

static void ckpt_raw_entries(const void *raw, u32 n, struct wow_ckpt_entry *e)
{
	const struct wow_slot *sl = raw;
	u32 i;

	for (i = 0; i < n; i++)
		slot_entry(&sl[i], &e[i]);
}

/* A slot whose entry changed since the area was written (the track taken). */
static u64 ckpt_next_changed(void *ctx, u64 slot)
{
	struct wow_cache *wc = ctx;
	struct wow_ckptlog *cl = wc->ckptlog;

	return wow_index_next_changed(&wc->index, cl->changes, slot);
}

static void ckpt_seg_infos(void *ctx, u64 first, u64 n,
			   struct wow_ckpt_seg_info *si)
{
	struct wow_cache *wc = ctx;
	u64 i;

	for (i = 0; i < n; i++, si++)
		wow_seg_ckpt_info(wc, first + i, si);
}

static u64 ckpt_next_seg_changed(void *ctx, u64 s)
{
	return wow_seg_next_changed(ctx, s);
}

static const struct wow_tomb_range *ckpt_seg_tombs(void *ctx, u64 s)
{
	u32 n;

	return wow_seg_tombs(ctx, s, &n);
}

static int ckpt_load_seg(void *ctx, u64 s, const struct wow_ckpt_seg_info *si)
{
	wow_seg_set_life(ctx, s, si->seq, si->max_seq, si->wp);
	return 0;
}

static int ckpt_load_tomb(void *ctx, u64 s, const struct wow_tomb_range *tr)
{
	struct wow_cache *wc = ctx;
	int r = wow_seg_reserve_tombs(wc, s, 1);

	if (!r)
		wow_seg_add_tombs(wc, s, tr, 1);
	return r;
}

static bool ckpt_cached(void *ctx, u64 ob)
{
	struct wow_cache *wc = ctx;

	return wow_index_lookup(&wc->index, to_oblock(ob)) != WOW_NO_SLOT;
}

/*
 * A valid slot, in a written block of a segment life, its origin block
 * not cached yet (the reader checked).
 */
static int ckpt_load_slot(void *ctx, u64 slot, u64 ob, bool dirty, u32 crc,
			  bool has_crc)
{
	struct wow_cache *wc = ctx;

	wow_index_insert(&wc->index, to_oblock(ob), slot,
			 dirty ? WOW_SLOT_DIRTY : 0);
	if (has_crc)
		wow_index_set_crc(&wc->index, slot, crc);
	return 0;
}

static void wow_ckptlog_ops_init(struct wow_cache *wc, struct wow_ckpt_ops *ops)
{
	ops->slot_entries = ckpt_slot_entries;
	ops->take_block = ckpt_take_block;
	ops->hurry = ckpt_hurry;
	ops->raw_entries = ckpt_raw_entries;
	ops->slot_raw_bytes = sizeof(struct wow_slot);
	ops->next_changed = ckpt_next_changed;
	ops->seg_infos = ckpt_seg_infos;
	ops->next_seg_changed = ckpt_next_seg_changed;
	ops->seg_tombs = ckpt_seg_tombs;
	ops->ctx = wc;
}

static void wow_ckptlog_load_ops_init(struct wow_cache *wc,
				      struct wow_ckpt_load_ops *ops)
{
	ops->load_seg = ckpt_load_seg;
	ops->load_tomb = ckpt_load_tomb;
	ops->cached = ckpt_cached;
	ops->load_slot = ckpt_load_slot;
	ops->ctx = wc;
}

int wow_ckptlog_load(struct wow_cache *wc, struct wow_ckpt_info *ci,
		     bool *touched)
{
	struct wow_ckptlog *cl = wc->ckptlog;
	struct wow_ckpt_info other;
	struct wow_ckpt_load_ops ops;
	struct wow_ckpt_area a;
	int r, r1, k = 0;

	cl->area = -1;
	if (wc->sb.version < 2)
		return -ENOENT;
	wow_ckptlog_area(wc, &a, 0);
	r = wow_ckpt_read_header(&a, ci);
	cl->gen = ci->generation;
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
		if (wow_ckpt_pick_second(!r, ci->generation, !r1,
					 other.generation)) {
			swap(*ci, other);
			swap(r, r1);
			k = 1;
		}
		cl->gen = max(ci->generation, other.generation);
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
	wow_ckptlog_load_ops_init(wc, &ops);
	r = wow_ckpt_read(&a, ci, &ops);
	if (r) {
		DMWARN("%s: checkpoint %llu does not check (%d); scanning the log",
		       wow_name(wc), ci->generation, r);
		/*
		 * the next checkpoint goes to the other area: a crash while
		 * it is written must leave this one, which makes the load
		 * scan again, not an older one whose chain no longer holds
		 */
		cl->area = k;
		*touched = true;
		return r;
	}
	cl->live = true;
	cl->area = k;
	/*
	 * the index is what area k holds (and its csums came with it): from
	 * here the replay's changes are what its next checkpoint writes
	 */
	wow_index_take_changes(&wc->index, k, cl->changes);
	cl->known[k] = true;
	return 0;
}

/*
 * Write checkpoint area @k's header not valid (FUA): a load no longer
 * starts from it (the mutex held).
 */
static int retire_area(struct wow_cache *wc, int k)
{
	struct wow_ckptlog *cl = wc->ckptlog;
	struct wow_ckpt_info ci = { .generation = ++cl->gen };
	struct wow_ckpt_area a;

	wow_ckptlog_area(wc, &a, k);
	return wow_ckpt_write_header(&a, &ci);
}

/*
 * The area the next checkpoint goes to: in format version 4 never the one
 * holding the newest valid checkpoint, so a crash (or an error) while it
 * is written leaves that one for the next load; before, the only one.
 */
static int ckpt_next_area(struct wow_cache *wc)
{
	struct wow_ckptlog *cl = wc->ckptlog;

	return wc->sb.version >= 4 && cl->area == 0 ? 1 : 0;
}

#ifdef WOW_TEST_HOOKS
/*
 * Test builds only: check, as each checkpoint starts and once it is
 * written, that every slot table block of its area the index's track
 * does not name holds what the index does (its crc32c as the area's);
 * a block that does not is a change the track missed, which a load from
 * that area would take as the truth.  Kernel log and a WARN (a VM
 * scenario fails on it).  For small caches: it encodes every block under
 * the lock.
 */
static bool test_verify_checkpoints;
module_param(test_verify_checkpoints, bool, 0644);
MODULE_PARM_DESC(test_verify_checkpoints,
		 "test builds: check each checkpoint's unwritten blocks against the index");

#define MSG_TEST_UNTRACKED "%s: test: checkpoint area %d, slot table block %llu: not what the index holds, and not marked changed (%s of checkpoint %llu)"

static void verify_untracked(struct wow_cache *wc, int k, const char *when)
{
	struct wow_ckptlog *cl = wc->ckptlog;
	u32 per = wow_ckpt_slots_per_block(wc->sb.version,
					   wc->args.block_size);
	u64 nr = wow_ckpt_slot_blocks(wc->sb.version, wc->nr_slots,
				      wc->args.block_size);
	struct wow_ckpt_entry *e;
	struct wow_ckpt_area a;
	struct wow_ckpt_ops ops;
	u64 b, bad = 0;
	void *blk;

	lockdep_assert_held(&wc->lock);
	/* (past 4,096 blocks, 1.6 M slots, too long with interrupts off) */
	if (!READ_ONCE(test_verify_checkpoints) || !cl->known[k] ||
	    nr > 4096)
		return;
	wow_ckptlog_area(wc, &a, k);
	wow_ckptlog_ops_init(wc, &ops);
	blk = kmalloc(wc->args.block_size, GFP_ATOMIC);
	e = kmalloc_array(per, sizeof(*e), GFP_ATOMIC);
	for (b = 0; blk && e && b < nr; b++) {
		if (wow_index_changed(&wc->index, wc->index.track[k], b * per,
				      min_t(u64, wc->nr_slots - b * per, per)))
			continue;
		if (cl->csums[k][b] != wow_ckpt_block_encode(&a, &ops, blk, b,
							     e) &&
		    !bad++)
			DMERR(MSG_TEST_UNTRACKED, wow_name(wc), k, b, when,
			      cl->gen);
	}
	WARN_ON_ONCE(bad);
	kfree(blk);
	kfree(e);
}

#define MSG_TEST_STALE_SEG "%s: test: checkpoint %llu: the snapshot's segment %llu is not the segment now, and not marked changed"
#define MSG_TEST_STALE_TOMBS "%s: test: checkpoint %llu: the snapshot counts %llu tombstones, its segments %llu"

/*
 * Test builds only: right after a background checkpoint's snapshot, each
 * of its segments must be the segment now unless marked changed since
 * (the snapshot copies only those marked: a change site that does not
 * mark shows here).  Under the lock, where every change site runs, so a
 * change is seen with its mark.
 */
static void verify_snap_segs(struct wow_cache *wc,
			     const struct wow_ckpt_area *a)
{
	struct wow_ckptlog *cl = wc->ckptlog;
	const struct wow_ckpt_seg_info *si;
	struct wow_ckpt_seg_info now;
	u64 s, tombs = 0, bad = 0;

	if (!READ_ONCE(test_verify_checkpoints))
		return;
	spin_lock_irq(&wc->lock);
	for (s = 0; s < a->nr_segments; s++) {
		si = wow_ckpt_snap_seg(cl->snap, s);
		tombs += si->nr_tombs;
		if (wow_seg_is_changed(wc, s))
			continue;
		ckpt_seg_infos(wc, s, 1, &now);
		if ((now.seq != si->seq || now.max_seq != si->max_seq ||
		     now.wp != si->wp || now.nr_tombs != si->nr_tombs ||
		     now.closed != si->closed) && !bad++)
			DMERR(MSG_TEST_STALE_SEG, wow_name(wc), cl->gen, s);
	}
	spin_unlock_irq(&wc->lock);
	if (tombs != wow_ckpt_snap_nr_tombs(cl->snap) && !bad++)
		DMERR(MSG_TEST_STALE_TOMBS, wow_name(wc), cl->gen,
		      wow_ckpt_snap_nr_tombs(cl->snap), tombs);
	WARN_ON_ONCE(bad);
}
#else
static void verify_untracked(struct wow_cache *wc, int k, const char *when)
{
}

static void verify_snap_segs(struct wow_cache *wc,
			     const struct wow_ckpt_area *a)
{
}
#endif

/*
 * What a checkpoint holds and where it goes, taken when it starts: no
 * record in flight (the commit worker between records, or the log
 * stopped), so the index and the segments change only by destage turning
 * dirty bits clean, which is true either way.  False when none is written
 * (after an error, or nothing was ever logged).  The mutex and the lock
 * held; ckpt_reading is set (tombstone lists stay) until the tables are
 * read.
 */
static bool ckpt_start(struct wow_cache *wc, struct ckpt_run *cr, bool epoch)
{
	struct wow_ckptlog *cl = wc->ckptlog;
	bool ok = wc->state == WOW_STATE_OK && wc->completed_seq < wc->next_seq;

	lockdep_assert_held(&wc->lock);
	memset(&cr->ci, 0, sizeof(cr->ci));
	cr->k = ckpt_next_area(wc);
	/*
	 * Version 4 keeps the checkpoint before this one valid while its
	 * chain reaches the log head: it does unless this one starts the
	 * chain where the log's records do not lead (a load's new epoch, a
	 * next segment the last record could not name)
	 */
	cr->prev = wc->sb.version >= 4 ? cl->area : -1;
	cr->keep = cr->prev >= 0 && wow_seg_has_chain(wc) && !epoch &&
		   wc->chain_next == wow_seg_next_free(wc);
	cr->ci.next_seq = wc->next_seq;
	cr->ci.completed_seq = wc->completed_seq;
	cr->ci.head_seg = wow_seg_head(wc);
	cr->ci.head_wp = cr->ci.head_seg != WOW_NO_SEG ?
			 wow_seg_wp(wc, cr->ci.head_seg) : 0;
	cr->ci.next_seg = wow_seg_next_free(wc);
	cr->dirty = wc->dirty_blocks;
	cr->valid = wc->valid_blocks;
	cl->log_blocks = 0;
	wow_seg_hold_tombs(wc, ok);
	/*
	 * the slots changed since area k was written: only their blocks of
	 * the slot table are written (a change while it is written is
	 * written next time too)
	 */
	if (ok) {
		verify_untracked(wc, cr->k, "start");
		wow_index_take_changes(&wc->index, cr->k, cl->changes);
	}
	return ok;
}

/*
 * The checkpoint @cr was written (@r: 0) or not; the mutex held.  Once
 * written the chain starts at it, and the older one in the other area is
 * retired first when its chain no longer reaches the log head.
 */
static int ckpt_finish(struct wow_cache *wc, struct ckpt_run *cr, int r,
		       bool say)
{
	struct wow_ckptlog *cl = wc->ckptlog;
	bool closing = wc->sb.version >= 3;
	int r2;

	spin_lock_irq(&wc->lock);
	wow_seg_hold_tombs(wc, false);
	if (r)
		wow_index_add_changes(&wc->index, cr->k, cl->changes);
	spin_unlock_irq(&wc->lock);
	/*
	 * a write cut short leaves the area's blocks unknown; one that stopped
	 * (-EAGAIN) wrote only blocks its csums say
	 */
	if (r && r != -ENOSPC && r != -ENOMEM && r != -EAGAIN)
		cl->known[cr->k] = false;
	else if (!r)
		cl->known[cr->k] = true;
	if (r)
		return r;
	spin_lock_irq(&wc->lock);
	verify_untracked(wc, cr->k, "end");
	spin_unlock_irq(&wc->lock);
	/*
	 * before the chain moves here: an older checkpoint whose chain ends
	 * short of the log goes (a load could fall back to it)
	 */
	r2 = cr->prev >= 0 && !cr->keep ? retire_area(wc, cr->prev) : 0;
	spin_lock_irq(&wc->lock);
	cl->area = cr->k;
	if (wc->durable_seq < cr->ci.completed_seq)
		wc->durable_seq = cr->ci.completed_seq;
	/*
	 * Only now does the chain start at this checkpoint: a failed one
	 * leaves the last record's pointer in force.  If the free list's head
	 * changed while it was written (cleaning freed a segment into an empty
	 * list), wow_seg_open sees the two differ and asks for another.  A
	 * record written since (a checkpoint written in the background) named
	 * where the log goes on itself.
	 */
	if (wc->next_seq == cr->ci.next_seq) {
		wc->chain_next = cr->ci.next_seg;
		wow_seg_ckpt_met(wc);
	}
	wow_seg_chain_start(wc, cr->ci.next_seq, cr->ci.head_seg,
			    cr->keep && !r2);
	cl->aborts = 0;
	spin_unlock_irq(&wc->lock);
	if (say)
		DMINFO(MSG_CKPT_WRITTEN, wow_name(wc), cr->ci.generation,
		       cr->ci.written, 1 + cr->ci.slot_blocks +
		       cr->ci.seg_blocks + (closing ? 1 : 0), cr->ci.nr_tombs,
		       cr->dirty, cr->valid);
	return r2;
}

/*
 * Write a checkpoint of the log as it stands (ckpt_start), in place: the
 * caller waits for it (the commit worker holds the next record back, or
 * the log is stopped).  Its header names the log head, where a load
 * replays from.  The header goes with PREFLUSH, so every record the
 * checkpoint includes is durable first.  Skipped on a version 1 cache and
 * after an error; a cache whose segments hold more tombstones than the
 * area has room for keeps its last checkpoint (the next load replays
 * more).  A checkpoint written in the background is waited for first.
 * @epoch: written at format or at the end of a load, where a new epoch
 * starts and no older checkpoint's chain leads on (version 4 retires it).
 */
int wow_ckptlog_write(struct wow_cache *wc, bool say, bool epoch)
{
	struct wow_ckptlog *cl = wc->ckptlog;
	struct wow_ckpt_snap *kept;
	struct ckpt_run cr;
	struct wow_ckpt_area a;
	struct wow_ckpt_ops ops;
	unsigned int noio;
	bool ok;
	int r;

	if (wc->sb.version < 2)
		return 0;
	wait_event(wc->idle_wait, !READ_ONCE(cl->busy));
	/*
	 * The commit worker writes it while writes wait: no allocation here
	 * may recurse into I/O that could queue behind them (finding 4)
	 */
	noio = memalloc_noio_save();
	mutex_lock(&cl->mutex);
	spin_lock_irq(&wc->lock);
	ok = ckpt_start(wc, &cr, epoch);
	/* the background's snapshot, unless one is being written from it */
	kept = cl->busy ? NULL : cl->snap;
	spin_unlock_irq(&wc->lock);
	r = 0;
	if (ok) {
		wow_ckptlog_area(wc, &a, cr.k);
		wow_ckptlog_ops_init(wc, &ops);
		cr.ci.generation = ++cl->gen;
		r = wow_ckpt_write(&a, &cr.ci, &ops, kept);
		r = ckpt_finish(wc, &cr, r, say);
	}
	mutex_unlock(&cl->mutex);
	memalloc_noio_restore(noio);
	return r;
}

/*
 * A checkpoint in the background (the commit worker's periodic one): it
 * is the log as it stands now, between two records.  The segments' counts
 * and tombstones are copied now (wow_ckpt_snap_take); the slot table
 * blocks that changed since the area was written are marked
 * (cow_map) and the work item takes them one by one while the log goes
 * on, each as it is then unless a change came first, which copied it
 * before (ckpt_before_change).  Until it is whole the chain rule holds by
 * the checkpoint before it, whose chain covers this one's (it starts
 * earlier); a crash meanwhile loads that one.  0 once it is queued
 * (busy until it ends, and no other checkpoint starts); -E2BIG when
 * the area is not known: the caller writes it in place.
 */
/*
 * Mark the slot table blocks the changes taken name and have the index
 * say before a slot changes (lock held, the log between two records).
 */
static void cow_start(struct wow_cache *wc)
{
	struct wow_ckptlog *cl = wc->ckptlog;
	u32 per = wow_ckpt_slots_per_block(wc->sb.version,
						 wc->args.block_size);
	u64 nr = wow_ckpt_slot_blocks(wc->sb.version, wc->nr_slots,
					 wc->args.block_size);
	u64 slot = 0, b;

	lockdep_assert_held(&wc->lock);
	bitmap_zero(cl->cow_map, nr);
	while ((slot = wow_index_next_changed(&wc->index, cl->changes,
					      slot)) != U64_MAX) {
		/* a track bit's slots, in one or two blocks */
		u64 end = min_t(u64, (slot | ((1ULL << WOW_TRACK_SHIFT) - 1)) +
				1, wc->nr_slots);

		for (b = slot / per; b * per < end; b++)
			__set_bit(b, cl->cow_map);
		slot = end;
	}
	cl->cow_next = 0;
	WRITE_ONCE(cl->cow_n, 0);
	WRITE_ONCE(cl->cow_lost, false);
	wc->index.change_ctx = wc;
	wc->index.before_change = ckpt_before_change;
}

/* The background checkpoint ended: no more copies on write (lock held). */
static void cow_stop(struct wow_cache *wc)
{
	struct wow_ckptlog *cl = wc->ckptlog;

	lockdep_assert_held(&wc->lock);
	wc->index.before_change = NULL;
	wc->index.change_ctx = NULL;
	WRITE_ONCE(cl->cow_n, 0);
}

static int start_background_checkpoint(struct wow_cache *wc)
{
	struct wow_ckptlog *cl = wc->ckptlog;
	struct ckpt_run *cr = &cl->cr;
	struct wow_ckpt_area a;
	struct wow_ckpt_ops ops;
	unsigned int noio;
	bool ok;
	int r = 0;

	noio = memalloc_noio_save();
	mutex_lock(&cl->mutex);
	spin_lock_irq(&wc->lock);
	ok = ckpt_start(wc, cr, false);
	/* from the same instant: no slot changes between (not even destage's) */
	if (ok && cl->known[cr->k])
		cow_start(wc);
	spin_unlock_irq(&wc->lock);
	if (ok) {
		wow_ckptlog_area(wc, &a, cr->k);
		wow_ckptlog_ops_init(wc, &ops);
		cr->ci.generation = ++cl->gen;
		r = wow_ckpt_snap_take(&a, &cr->ci, &ops, cl->snap);
		if (!r)
			verify_snap_segs(wc, &a);
		spin_lock_irq(&wc->lock);
		wow_seg_hold_tombs(wc, false);
		if (r) {
			cow_stop(wc);
			wow_index_add_changes(&wc->index, cr->k,
					      cl->changes);
		} else {
			cl->busy = true;
		}
		spin_unlock_irq(&wc->lock);
	}
	mutex_unlock(&cl->mutex);
	memalloc_noio_restore(noio);
	if (ok && !r)
		queue_work(wc->wq, &cl->work);
	return r;
}

/* Write the snapshot start_background_checkpoint took; then go on. */
static void wow_ckptlog_work(struct work_struct *ws)
{
	struct wow_ckptlog *cl = container_of(ws, struct wow_ckptlog, work);
	struct wow_cache *wc = cl->wc;
	struct ckpt_run *cr = &cl->cr;
	struct wow_ckpt_area a;
	unsigned int noio;
	int r;

	noio = memalloc_noio_save();
	mutex_lock(&cl->mutex);
	wow_ckptlog_area(wc, &a, cr->k);
	r = wow_ckpt_snap_write(&a, &cr->ci, cl->snap);
	spin_lock_irq(&wc->lock);
	cow_stop(wc);
	spin_unlock_irq(&wc->lock);
	r = ckpt_finish(wc, cr, r, false);
	mutex_unlock(&cl->mutex);
	memalloc_noio_restore(noio);
	if (r && r != -EAGAIN) {
		DMWARN_LIMIT("%s: checkpoint failed: %d", wow_name(wc), r);
		if (r != -ENOSPC && r != -ENOMEM)
			wow_error(wc, WOW_STATE_READ_ONLY, "checkpoint write",
				  r);
	}
	spin_lock_irq(&wc->lock);
	cl->busy = false;
	/*
	 * lost (more changed ahead of the writer than it had room to copy):
	 * due again at once; after two in a row it is written in place
	 */
	if (r == -EAGAIN) {
		cl->aborts++;
		cl->log_blocks = U64_MAX / 2;
	}
	spin_unlock_irq(&wc->lock);
	wake_up_all(&wc->idle_wait);
	/* a segment may wait for it; and the next one may be due */
	queue_work(wc->wq, &wc->commit_work);
}

/*
 * No checkpoint fits (too many tombstones) where the chain must start
 * again: the one on disk would stop a replay short, so its header is
 * rewritten not valid (FUA) and the next load scans the log.  In version
 * 4 both areas: the one not holding the newest first (a crash between
 * leaves the newest, whose chain still holds: nothing was reopened).
 */
int wow_ckptlog_retire(struct wow_cache *wc)
{
	struct wow_ckptlog *cl = wc->ckptlog;
	unsigned int noio;
	int r, k, n;

	if (wc->sb.version < 2)
		return 0;
	noio = memalloc_noio_save();
	mutex_lock(&cl->mutex);
	DMWARN("%s: too many tombstones for a checkpoint; the next load scans the log",
	       wow_name(wc));
	k = ckpt_next_area(wc);
	r = 0;
	for (n = wc->sb.version >= 4 ? 2 : 1; n-- && !r; k ^= 1)
		r = retire_area(wc, k);
	if (!r) {
		cl->area = -1;
		/* the scan needs no chain: any segment may be reopened */
		spin_lock_irq(&wc->lock);
		wow_seg_chain_clear(wc);
		spin_unlock_irq(&wc->lock);
	}
	mutex_unlock(&cl->mutex);
	memalloc_noio_restore(noio);
	return r;
}

/*
 * Version 4, after the checkpoint of a format or a load: when nothing is
 * known of what the other area holds, write it too (whole, now, while no
 * write waits), so every checkpoint the running log writes is only what
 * changed since.  It keeps the first one valid (the same chain).
 */
int wow_ckptlog_know_both(struct wow_cache *wc)
{
	struct wow_ckptlog *cl = wc->ckptlog;

	if (wc->sb.version < 4 || cl->area < 0 ||
	    cl->known[!cl->area])
		return 0;
	return wow_ckptlog_write(wc, false, false);
}

/* At a clean shutdown (postsuspend, after the last commit). */
int wow_log_checkpoint(struct wow_cache *wc)
{
	return wow_ckptlog_write(wc, true, false);
}

/*
 * Commit worker, no record in flight: a checkpoint once the log written
 * since the last one passes the interval (the module parameter
 * checkpoint_interval; 0: 1/64 of the cache, and at least 256 MiB), so a
 * load after a crash replays at most that.  A checkpoint costs 1/683 of
 * the cache, so 1/64 alone would add 9% to the cache writes whatever the
 * size; the floor makes that at most 0.6% below 1 GiB, where a replay of
 * 256 MiB takes seconds.  A cache smaller than the floor gets about one
 * checkpoint a turn of its log: a segment written since the last one is
 * not reopened before the next (below).
 */
static unsigned int checkpoint_interval;
module_param(checkpoint_interval, uint, 0644);
MODULE_PARM_DESC(checkpoint_interval,
		 "log blocks written between checkpoints (0: 1/64 of the cache, at least 256 MiB)");

#define WOW_CKPT_INTERVAL_FLOOR	(256ULL << 20)	/* bytes of log */

int wow_ckptlog_periodic(struct wow_cache *wc)
{
	struct wow_ckptlog *cl = wc->ckptlog;
	u64 interval = READ_ONCE(checkpoint_interval) ?:
		       max_t(u64, wc->nr_slots / 64,
			     WOW_CKPT_INTERVAL_FLOOR / wc->args.block_size);
	bool due, wanted, stopped, busy;
	u32 aborts;
	int r;

	spin_lock_irq(&wc->lock);
	/*
	 * also when the last record could not name the segment the log
	 * goes on in (the free list was empty then) and one is free now:
	 * the replay could not follow the log there.  While suspended only
	 * for a record that waits for its segment (suspend's clean marks):
	 * suspend writes the last checkpoint itself.
	 */
	wanted = wow_seg_ckpt_wanted(wc);
	stopped = wc->stopped;
	due = wanted ||
	      (!stopped && (cl->log_blocks >= interval ||
			    wc->chain_next != wow_seg_next_free(wc)));
	/* one in the background: its end runs this again */
	busy = cl->busy;
	aborts = cl->aborts;
	spin_unlock_irq(&wc->lock);
	if (!due || busy)
		return 0;
	/*
	 * the interval's checkpoint in the background; one a segment waits
	 * for (writes wait for it either way), suspend's, or one after two
	 * lost in the background, in place
	 */
	r = -E2BIG;
	if (!wanted && !stopped && aborts < 2 && wc->sb.version >= 2)
		r = start_background_checkpoint(wc);
	if (r == -E2BIG || r == -ENOMEM)
		/* while suspending, said as suspend's own is */
		r = wow_ckptlog_write(wc, stopped, false);
	/*
	 * a segment on the replay's chain waits to be reopened: with no room
	 * for a checkpoint, the one on disk must go (the load scans)
	 */
	if (r == -ENOSPC && wanted)
		r = wow_ckptlog_retire(wc);
	if (r) {
		DMWARN_LIMIT("%s: checkpoint failed: %d", wow_name(wc), r);
		if (r != -ENOSPC && r != -ENOMEM)
			wow_error(wc, WOW_STATE_READ_ONLY, "checkpoint write",
				  r);
	}
	return r;
}

