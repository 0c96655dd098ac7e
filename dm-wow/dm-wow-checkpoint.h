/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow checkpoint I/O (dm-wow-checkpoint.c): writing a checkpoint area
 * (in place, or from a snapshot in the background), retiring it, reading
 * it back.  What goes in comes from its owner through struct
 * wow_ckpt_ops (the log's checkpoints, dm-wow-ckptlog.c); the blocks'
 * codec is dm-wow-ckpt.c, the reader's decisions dm-wow-ckptread.c.
 */
#ifndef DM_WOW_CHECKPOINT_H
#define DM_WOW_CHECKPOINT_H

#include "dm-wow.h"

struct wow_ckpt_area {
	struct block_device *bdev;	/* the cache device */
	u64 first_block;		/* where the area starts */
	u64 nr_blocks;			/* up to the first segment */
	bool closing;			/* version 3: appended, closing copy */
	u32 version;			/* the format's (slot entry size) */
	u32 block_size;
	u32 blocks_per_seg;
	const u8 *uuid;
	u64 nr_slots;
	u64 nr_segments;
	u64 max_tombs;			/* room in the segment stream */
	u64 nr_oblocks;			/* origin blocks (a slot's must be less) */
	/*
	 * What the log knows of the area's slot table: @csums, a crc32c per
	 * slot table block, what each block on disk holds (a write and a
	 * read fill it); @whole: nothing is known, so a write writes every
	 * block (into erased flash), not only those ops->slots_changed names.
	 */
	__le32 *csums;
	bool whole;
};

/*
 * What a checkpoint holds, from its owner (the log); what a read hands
 * back goes through struct wow_ckpt_load_ops (dm-wow-ckptread.h).
 */
struct wow_ckpt_ops {
	/* the entries of @n slots from @first, and segments from @first */
	void (*slot_entries)(void *ctx, u64 first, u32 n,
			     struct wow_ckpt_entry *e);
	/*
	 * a snapshot's next slot table block: its number in @b and a copy of
	 * its slots (slot_raw_bytes each) in @raw, as they were when the
	 * snapshot was taken; 1, or 0 when none is left, -EAGAIN when the
	 * snapshot was lost.  raw_entries: their entries, from the copy.
	 */
	int (*take_block)(void *ctx, void *raw, u64 *b);
	/*
	 * optional, a snapshot's: true while its writer must not pause
	 * (blocks it has yet to take are copied when they change first, and
	 * that room is filling up).  No lock: a hint.
	 */
	bool (*hurry)(void *ctx);
	void (*raw_entries)(const void *raw, u32 n, struct wow_ckpt_entry *e);
	u32 slot_raw_bytes;
	/* the first slot from @slot changed since the area was written */
	u64 (*next_changed)(void *ctx, u64 slot);
	void (*seg_infos)(void *ctx, u64 first, u64 n,
			  struct wow_ckpt_seg_info *si);
	/*
	 * optional: the first segment from @s whose seg_infos entry changed
	 * since this call last named it (taken), or U64_MAX; every segment
	 * counts as changed at first.  A snapshot then copies only those.
	 */
	u64 (*next_seg_changed)(void *ctx, u64 s);
	const struct wow_tomb_range *(*seg_tombs)(void *ctx, u64 s);
	void *ctx;
};

/*
 * Every call sleeps (it waits for its I/O, allocates with GFP_NOIO or
 * under memalloc_noio_save) and takes no lock of the log's: the caller
 * holds what makes the log's state stand still (the checkpoints' mutex;
 * the ops' callbacks take wc->lock where they read what changes).  I/O
 * goes through the metadata bio_set (dm-wow-super.h), never fs_bio_set.
 */

/*
 * Encode slot table block @b into @blk (@e: room for a block's entries);
 * returns its crc32c, as @a->csums holds it once written.
 */
__le32 wow_ckpt_block_encode(const struct wow_ckpt_area *a,
			     const struct wow_ckpt_ops *ops, void *blk, u64 b,
			     struct wow_ckpt_entry *e);

/*
 * Write a header that is not valid (@ci says so), with FUA: the checkpoint
 * on disk is retired and the next load scans the log.  The tables stay.
 */
int wow_ckpt_write_header(const struct wow_ckpt_area *a,
			  const struct wow_ckpt_info *ci);

/*
 * Write a checkpoint of generation ci->generation with ci's seqs, in
 * place; the table sizes and ci->nr_tombs are filled here.  Only the slot
 * table blocks that changed since the area was written (ops->next_changed)
 * unless @a is whole; the header goes last with PREFLUSH and FUA.
 * -ENOSPC (nothing written): more tombstones than the area has room for.
 * @kept: the background's snapshot, reused (no other writer uses it
 * meanwhile), or NULL: one is allocated for this write.
 */
struct wow_ckpt_snap;
int wow_ckpt_write(const struct wow_ckpt_area *a, struct wow_ckpt_info *ci,
		   const struct wow_ckpt_ops *ops, struct wow_ckpt_snap *kept);

/*
 * A checkpoint written in the background, in two steps.  The snapshot
 * (allocated once for @nr_segments, kept from one checkpoint to the next;
 * NULL on no memory) takes, between two records, what a checkpoint holds
 * besides its slot table (wow_ckpt_snap_take; -E2BIG when @a is whole,
 * -ENOSPC: too many tombstones).  wow_ckpt_snap_write then writes it while
 * the log goes on, taking the changed slot table blocks one by one from
 * ops->take_block and pausing between bursts unless ops->hurry; -EAGAIN
 * when the snapshot was lost (what it wrote matches @a->csums).
 * wow_ckpt_snap_seg and wow_ckpt_snap_nr_tombs read it back (checks).
 */
struct wow_ckpt_snap *wow_ckpt_snap_alloc(u64 nr_segments);
int wow_ckpt_snap_take(const struct wow_ckpt_area *a, struct wow_ckpt_info *ci,
		       const struct wow_ckpt_ops *ops, struct wow_ckpt_snap *sn);
int wow_ckpt_snap_write(const struct wow_ckpt_area *a,
			struct wow_ckpt_info *ci,
			const struct wow_ckpt_snap *sn);
void wow_ckpt_snap_free(struct wow_ckpt_snap *sn);
const struct wow_ckpt_seg_info *wow_ckpt_snap_seg(const struct wow_ckpt_snap *sn,
						  u64 s);
u64 wow_ckpt_snap_nr_tombs(const struct wow_ckpt_snap *sn);

/*
 * Read the header: 0 if it is a valid checkpoint's (in version 3 and
 * later, with a closing copy the same), else -ENOENT; -ENOMEM.
 */
int wow_ckpt_read_header(const struct wow_ckpt_area *a,
			 struct wow_ckpt_info *ci);

/*
 * Read checkpoint @ci (its header valid) and hand every segment,
 * tombstone and valid slot to @ops (dm-wow-ckptread.c decides what is
 * valid); @a->csums gets the slot table blocks' crc32cs.  -EUCLEAN when a
 * block does not check: what was handed over must be forgotten and the
 * log scanned.  A callback's error stops it.
 */
struct wow_ckpt_load_ops;
int wow_ckpt_read(const struct wow_ckpt_area *a,
		  const struct wow_ckpt_info *ci,
		  const struct wow_ckpt_load_ops *ops);

#endif /* DM_WOW_CHECKPOINT_H */
