// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow target: constructor and destructor, map, status, messages, hints,
 * suspend and resume.
 *
 * Table line:
 *   <start> <length> wow <origin_dev> <cache_dev> <#opt_args> [<opt_args>...]
 * (options in dm-wow-args.c, user guide in Documentation/dm-wow.rst)
 *
 * Lifecycle: the constructor checks everything and reads the superblock but
 * writes nothing; the first preresume formats the cache device or recovers
 * its log (the table it replaces is suspended by then, so the log is
 * final); resume starts destage; postsuspend stops destage, waits for it
 * and commits.
 *
 * Locking: wc->lock guards the fields the target owns (cleaner, the
 * sequential-cutoff state) and every call into the other parts that says
 * "lock held"; map takes it once per bio, to look up and pin.
 */
#include <linux/blkdev.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "dm-wow.h"
#include "dm-wow-super.h"
#include "dm-wow-clean.h"
#include "dm-wow-destage.h"
#include "dm-wow-log.h"
#include "dm-wow-seg.h"
#include "dm-wow-compat.h"

/*
 * What names the origin independent of its /dev name, which can change at
 * boot: a partition's UUID (GPT, or an MBR disk signature and number),
 * else the disk's unique id (SCSI VPD page 0x83, NVMe EUI-64/NGUID) with
 * the partition's start.  "" when the device offers none (virtio-blk,
 * loop, device-mapper): then the origin's size is all that is checked.
 */
static void wow_origin_id(struct block_device *bdev, char *id, size_t len)
{
	struct gendisk *disk = bdev->bd_disk;
	int t, n;
	u8 uid[16];

	memset(id, 0, len);
	if (bdev_is_partition(bdev) && bdev->bd_meta_info &&
	    bdev->bd_meta_info->uuid[0]) {
		snprintf(id, len, "part:%s", bdev->bd_meta_info->uuid);
		return;
	}
	if (!disk->fops->get_unique_id)
		return;
	for (t = BLK_UID_NAA; t >= BLK_UID_T10; t--) {
		n = disk->fops->get_unique_id(disk, uid, t);
		if (n > 0 && n <= sizeof(uid)) {
			snprintf(id, len, "uid:%d:%*phN:%llu", t, n, uid,
				 (unsigned long long)bdev->bd_start_sect);
			return;
		}
	}
}

/*
 * Read the first block of the cache device and decide: recover an existing
 * superblock or format a zeroed device (both at preresume), or refuse.
 */
static int wow_check_superblock(struct wow_cache *wc, char **error)
{
	struct block_device *bdev = wc->cache_dev->bdev;
	unsigned int len = wc->args.block_size, probe;
	char origin_id[WOW_ORIGIN_ID_LEN];
	struct wow_geometry table;
	struct wow_sb_info sb;
	enum wow_sb_kind kind;
	const char *why;
	void *buf;
	int r;

	/*
	 * The superblock and the health block, and enough after them to find
	 * others' signatures (the device holds at least an erase block)
	 */
	probe = max_t(u64, 2 * len, min_t(u64, WOW_PROBE_BYTES,
					  bdev_nr_bytes(bdev) & ~(u64)(len - 1)));

	wow_geometry_init(&table, &wc->args, wc->ti->len,
			  bdev_nr_sectors(bdev));
	wow_origin_id(wc->origin_dev->bdev, origin_id, sizeof(origin_id));

	buf = kvzalloc(probe, GFP_KERNEL);
	if (!buf) {
		*error = "Cannot allocate superblock buffer";
		return -ENOMEM;
	}
	r = wow_sync_io(bdev, 0, buf, probe, REQ_OP_READ);
	if (r) {
		*error = "Cannot read the cache device's superblock";
		goto out;
	}

	kind = wow_sb_decode(buf, len, &sb, &why);
	if (kind == WOW_SB_ZERO) {
		why = wow_foreign_signature(buf, probe);
		if (why)
			kind = WOW_SB_FOREIGN;
	}
	if (wc->args.format)
		kind = WOW_SB_ZERO;

	switch (kind) {
	case WOW_SB_VALID:
		/* no write_group_size named: the one the cache was formatted with */
		wow_args_set_group(&wc->args, sb.geo.write_group_size);
		table.write_group_size = wc->args.write_group_size;
		why = wow_sb_geometry_mismatch(&sb.geo, &table);
		if (why) {
			*error = (char *)why;
			r = -EINVAL;
		} else if (sb.origin_id[0] && origin_id[0] &&
			   strcmp(sb.origin_id, origin_id)) {
			DMERR("%s: origin %pg is %s; the cache belongs to %s",
			      wow_name(wc), wc->origin_dev->bdev, origin_id,
			      sb.origin_id);
			*error = "Origin is not the device this cache was formatted for";
			r = -EINVAL;
		}
		break;
	case WOW_SB_ZERO:
		memset(&sb, 0, sizeof(sb));
		sb.version = WOW_SB_VERSION;
		sb.geo = table;
		strscpy(sb.origin_id, origin_id, sizeof(sb.origin_id));
		get_random_bytes(sb.uuid, sizeof(sb.uuid));
		wc->needs_format = true;
		break;
	case WOW_SB_CORRUPT:
		*error = "Cache superblock is corrupt; use 'format' to reinitialise";
		r = -EINVAL;
		break;
	case WOW_SB_NEWER:
		*error = "Cache superblock is from a newer dm-wow";
		r = -EINVAL;
		break;
	case WOW_SB_FOREIGN:
	default:
		*error = "Cache device holds foreign data; use 'format' to initialise it";
		r = -EINVAL;
		break;
	}
	if (!r)
		wow_log_set_sb(wc, &sb);
	if (!r && kind == WOW_SB_VALID)
		wow_health_load(wc, buf + len);
	if (r && why)
		DMERR("%s: cache device %pg: %s", wow_name(wc), bdev, why);
out:
	kvfree(buf);
	return r;
}

/*
 * block_size is the logical block size the device exposes.  Kernels whose
 * block layer validates queue limits (those with block features: 6.11 on,
 * Debian's 6.12) cap it at the page size and refuse a table above it with
 * a message that names no cause: say why first.
 */
#ifdef BLK_FEAT_WRITE_CACHE
#define MSG_BLOCK_SIZE_PAGE "block_size above the page size is not supported by this kernel (logical blocks are capped at the page size since 6.11)"
static bool wow_block_size_too_large(u32 block_size)
{
	return block_size > PAGE_SIZE;
}
#else
#define MSG_BLOCK_SIZE_PAGE ""
static bool wow_block_size_too_large(u32 block_size)
{
	return false;
}
#endif

static int wow_check_devices(struct wow_cache *wc, char **error)
{
	struct block_device *origin = wc->origin_dev->bdev;
	struct block_device *cache = wc->cache_dev->bdev;
	sector_t block_sectors = wc->args.block_size >> SECTOR_SHIFT;
	u64 segs;

	if (origin == cache) {
		*error = "Origin and cache must be different devices";
		return -EINVAL;
	}
	if (wow_block_size_too_large(wc->args.block_size)) {
		*error = MSG_BLOCK_SIZE_PAGE;
		return -EINVAL;
	}
	if (wc->ti->len & (block_sectors - 1)) {
		*error = "Target length must be a multiple of block_size";
		return -EINVAL;
	}
	if (wc->ti->len > bdev_nr_sectors(origin)) {
		*error = "Target length exceeds the origin device";
		return -EINVAL;
	}
	if ((wc->ti->len >> (ilog2(block_sectors))) > WOW_MAX_OBLOCK) {
		*error = "Origin too large for block_size";
		return -EINVAL;
	}
	if (bdev_logical_block_size(origin) > wc->args.block_size) {
		*error = "block_size is smaller than the origin's logical block size";
		return -EINVAL;
	}
	if (bdev_logical_block_size(cache) > wc->args.block_size) {
		*error = "block_size is smaller than the cache's logical block size";
		return -EINVAL;
	}
	if (bdev_nr_sectors(cache) <
	    wow_min_cache_sectors_v(WOW_SB_VERSION, wc->args.erase_block_size,
				    wc->args.block_size)) {
		*error = "Cache device too small: needs its metadata and 4 segments";
		return -EINVAL;
	}
	segs = wow_nr_segments_v(WOW_SB_VERSION, bdev_nr_sectors(cache),
				 wc->args.erase_block_size,
				 wc->args.block_size);
	if (segs * (wc->args.erase_block_size / wc->args.block_size) >
	    WOW_MAX_SLOTS) {
		*error = "Cache device too large for block_size";
		return -EINVAL;
	}
	return 0;
}

static void wow_dtr(struct dm_target *ti)
{
	struct wow_cache *wc = ti->private;

	if (!wc)
		return;
	if (wc->wq) {
		wow_destage_stop(wc);
		wow_log_stop(wc);
		destroy_workqueue(wc->wq);
	}
	wow_log_free(wc);
	wow_clean_free(wc);
	wow_destage_free(wc);
	wow_core_free(wc);
	if (wc->cache_dev)
		dm_put_device(ti, wc->cache_dev);
	if (wc->origin_dev)
		dm_put_device(ti, wc->origin_dev);
	kfree(wc);
}

static int wow_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	wow_open_mode_t mode = dm_table_get_mode(ti->table);
	const char *origin_path, *cache_path;
	struct wow_cache *wc;
	int r;

	if (argc < 3) {
		ti->error = "Not enough arguments: <origin_dev> <cache_dev> <#opt_args>";
		return -EINVAL;
	}
	if (!(mode & WOW_OPEN_WRITE)) {
		ti->error = "A write-back cache cannot be read-only";
		return -EINVAL;
	}

	wc = kzalloc(sizeof(*wc), GFP_KERNEL);
	if (!wc) {
		ti->error = "Cannot allocate the cache context";
		return -ENOMEM;
	}
	ti->private = wc;
	wc->ti = ti;
	spin_lock_init(&wc->lock);
	wc->last_io = jiffies;

	origin_path = dm_shift_arg(&as);
	cache_path = dm_shift_arg(&as);
	wow_args_init(&wc->args);
	r = wow_parse_opt_args(&wc->args, &as, &ti->error);
	if (r)
		goto bad;

	r = dm_get_device(ti, origin_path, mode, &wc->origin_dev);
	if (r) {
		ti->error = "Cannot open the origin device";
		goto bad;
	}
	/* no write_group_size named: a full stripe of a RAID origin */
	wow_args_set_group(&wc->args, bdev_io_opt(wc->origin_dev->bdev));
	r = dm_get_device(ti, cache_path, mode, &wc->cache_dev);
	if (r) {
		ti->error = "Cannot open the cache device";
		goto bad;
	}
	r = wow_check_devices(wc, &ti->error);
	if (r)
		goto bad;
	r = wow_check_superblock(wc, &ti->error);
	if (r)
		goto bad;

	r = wow_core_alloc(wc);
	if (!r)
		r = wow_log_alloc(wc);
	if (!r)
		r = wow_destage_alloc(wc);
	if (!r)
		r = wow_clean_alloc(wc);
	if (r) {
		ti->error = "Cannot allocate the index";
		goto bad;
	}
	wc->wq = alloc_workqueue("dm-wow", WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	if (!wc->wq) {
		ti->error = "Cannot allocate the workqueue";
		r = -ENOMEM;
		goto bad;
	}
	wc->cleaner = wc->args.cleaner ||
		      (wc->health.flags & WOW_SB_F_NEEDS_CHECK);
	wow_policy_set_drain(&wc->policy, wc->cleaner);

	r = dm_set_target_max_io_len(ti, wc->max_record_blocks <<
					 wc->block_shift);
	if (r)
		goto bad;
	ti->num_flush_bios = 1;
	ti->flush_supported = true;
	ti->num_discard_bios = 1;
	ti->discards_supported = true;
	ti->per_io_data_size = sizeof(struct wow_io);
	return 0;

bad:
	wow_dtr(ti);
	ti->private = NULL;
	return r;
}

/*
 * A read: the longest leading run that is either all uncached (to the
 * origin) or cached in consecutive slots of one segment (to the cache);
 * dm resubmits the rest.  A cached run pins its segment until the read
 * completes, so reclaim cannot reuse it under the reader.
 */
static int wow_map_read(struct wow_cache *wc, struct bio *bio,
			struct wow_io *io)
{
	u64 ob = wow_bio_oblock(wc, bio);
	u32 n = wow_bio_blocks(wc, bio), i, first, s;

	spin_lock_irq(&wc->lock);
	first = wow_index_lookup(&wc->index, to_oblock(ob));
	if (first != WOW_NO_SLOT &&
	    (wow_slot_at(&wc->index, first)->flags & WOW_SLOT_BAD)) {
		/* its data does not match its crc32c: an error, not it */
		spin_unlock_irq(&wc->lock);
		if (n > 1)
			dm_accept_partial_bio(bio, 1 << wc->block_shift);
		return DM_MAPIO_KILL;
	}
	for (i = 1; i < n; i++) {
		s = wow_index_lookup(&wc->index, to_oblock(ob + i));
		if (first == WOW_NO_SLOT ? s != WOW_NO_SLOT :
		    s != first + i ||
		    wow_slot_seg(wc, s) != wow_slot_seg(wc, first) ||
		    (wow_slot_at(&wc->index, s)->flags & WOW_SLOT_BAD))
			break;
	}
	if (first != WOW_NO_SLOT) {
		io->seg = wow_slot_seg(wc, first);
		wow_log_pin(wc, io->seg);
	}
	spin_unlock_irq(&wc->lock);

	if (i < n)
		dm_accept_partial_bio(bio, i << wc->block_shift);
	if (first == WOW_NO_SLOT) {
		atomic64_inc(&wc->stats.read_misses);
		bio_set_dev(bio, wc->origin_dev->bdev);
		bio->bi_iter.bi_sector = ob << wc->block_shift;
	} else {
		atomic64_inc(&wc->stats.read_hits);
		bio_set_dev(bio, wc->cache_dev->bdev);
		bio->bi_iter.bi_sector = wow_slot_sector(wc, first);
	}
	return DM_MAPIO_REMAPPED;
}

/*
 * May this write go straight to the origin (cleaner mode, or its stream
 * past the sequential cutoff: @stream blocks before it)?  Only if no
 * block of it is cached or being destaged: a cached copy must be replaced
 * through the log, or recovery could bring it back.  Lock held.
 */
static bool wow_bypass(struct wow_cache *wc, struct bio *bio, u64 stream)
{
	u64 ob = wow_bio_oblock(wc, bio), cutoff = wc->args.sequential_cutoff;
	u32 n = wow_bio_blocks(wc, bio), i;
	bool want = wc->cleaner;

	lockdep_assert_held(&wc->lock);
	if (cutoff && stream)
		want |= (stream + n) * wc->args.block_size > cutoff;
	if (!want)
		return false;
	for (i = 0; i < n; i++)
		if (wow_index_lookup(&wc->index, to_oblock(ob + i)) !=
		    WOW_NO_SLOT || wow_policy_busy(&wc->policy, ob + i))
			return false;
	return true;
}

static int wow_map(struct dm_target *ti, struct bio *bio)
{
	struct wow_cache *wc = ti->private;
	struct wow_io *io = wow_bio_io(bio);
	bool bypass;
	u64 stream;

	io->seg = WOW_NO_SEG;
	io->bypass = false;
	io->sequential = false;
	WRITE_ONCE(wc->last_io, jiffies);

	if (bio->bi_opf & REQ_PREFLUSH && !bio_sectors(bio)) {
		atomic64_inc(&wc->stats.flushes);
		wow_log_queue_flush(wc, bio);
		return DM_MAPIO_SUBMITTED;
	}
	if (bio_op(bio) == REQ_OP_DISCARD) {
		atomic64_inc(&wc->stats.discards);
		wow_log_queue_discard(wc, bio);
		return DM_MAPIO_SUBMITTED;
	}
	if (!op_is_write(bio_op(bio)))
		return wow_map_read(wc, bio, io);
	if (bio_op(bio) != REQ_OP_WRITE)
		return DM_MAPIO_KILL;

	spin_lock_irq(&wc->lock);
	if (wc->state != WOW_STATE_OK) {
		spin_unlock_irq(&wc->lock);
		return DM_MAPIO_KILL;
	}
	stream = wow_streams_note(&wc->streams, wow_bio_oblock(wc, bio),
				  wow_bio_blocks(wc, bio));
	io->sequential = stream;
	bypass = wow_bypass(wc, bio, stream);
	spin_unlock_irq(&wc->lock);

	if (bypass) {
		io->bypass = true;
		atomic64_inc(&wc->stats.writes_bypassed);
		bio_set_dev(bio, wc->origin_dev->bdev);
		bio->bi_iter.bi_sector = dm_target_offset(ti,
							  bio->bi_iter.bi_sector);
		return DM_MAPIO_REMAPPED;
	}
	wow_log_queue_write(wc, bio);
	return DM_MAPIO_SUBMITTED;
}

static int wow_end_io(struct dm_target *ti, struct bio *bio,
		      blk_status_t *error)
{
	struct wow_cache *wc = ti->private;
	struct wow_io *io = wow_bio_io(bio);

	if (io->bypass) {
		wow_log_bypass_done(wc);
		return DM_ENDIO_DONE;
	}
	if (io->seg == WOW_NO_SEG)
		return DM_ENDIO_DONE;
	if (*error && *error != BLK_STS_AGAIN) {
		atomic64_inc(&wc->stats.cache_errors);
		wow_error(wc, WOW_STATE_FAILED, "cache read",
			  blk_status_to_errno(*error));
		*error = BLK_STS_IOERR;
	}
	wow_log_unpin(wc, io->seg);
	io->seg = WOW_NO_SEG;
	return DM_ENDIO_DONE;
}

static int wow_preresume(struct dm_target *ti)
{
	struct wow_cache *wc = ti->private;
	int r;

	if (wc->loaded)
		return 0;
	/* the table this one replaces may have failed since our ctr */
	if (!wc->needs_format && wow_health_reload(wc) && !wc->cleaner) {
		wc->cleaner = true;
		wow_policy_set_drain(&wc->policy, true);
	}
	r = wc->needs_format ? wow_log_format(wc) : wow_log_recover(wc);
	if (r) {
		DMERR("%s: cannot %s the cache device: %d", wow_name(wc),
		      wc->needs_format ? "format" : "recover", r);
		return r;
	}
	wc->loaded = true;
	return 0;
}

static void wow_resume(struct dm_target *ti)
{
	struct wow_cache *wc = ti->private;

	wow_destage_start(wc);
}

static void wow_postsuspend(struct dm_target *ti)
{
	struct wow_cache *wc = ti->private;

	wow_destage_stop(wc);
	flush_work(&wc->commit_work);
	wow_log_stop(wc);
	if (!wc->loaded)
		return;
	/* durable first, so the clean marks' record can say so */
	if (wow_log_commit(wc))
		DMERR("%s: commit at suspend failed", wow_name(wc));
	if (wow_log_mark_clean(wc))
		DMWARN("%s: no clean marks written; the next load destages cached blocks again",
		       wow_name(wc));
	if (wow_log_commit(wc))
		DMERR("%s: commit at suspend failed", wow_name(wc));
	else if (wow_log_checkpoint(wc))
		DMWARN("%s: no checkpoint written; the next load scans the log",
		       wow_name(wc));
}

static const char *wow_state_name(struct wow_cache *wc)
{
	switch (wc->state) {
	case WOW_STATE_READ_ONLY:
		return "read_only";
	case WOW_STATE_FAILED:
		return "failed";
	default:
		return wc->cleaner ? "cleaning" : "ok";
	}
}

#define STAT(x) ((u64)atomic64_read(&wc->stats.x))

/*
 * INFO status:
 *   <state> <policy> <block_size> <cache_blocks> <free_blocks>
 *   <dirty_blocks> [<key>=<value>...]
 * The key=value fields are listed in Documentation/dm-wow.rst.
 *
 * TABLE status: <origin_dev> <cache_dev> <#opt_args> [<opt_args>...], the
 * options the table line named ('format' excepted: reloading the same line
 * must not wipe the cache).
 */
static void wow_status(struct dm_target *ti, status_type_t type,
		       unsigned int status_flags, char *result,
		       unsigned int maxlen)
{
	struct wow_cache *wc = ti->private;
	struct wow_policy_stats ps;
	struct wow_thresholds thresh;
	u64 free, dirty, valid, groups, recency, hand, writes;
	u32 free_segs, inflight;
	unsigned long oldest;
	struct wow_args args;
	bool needs_check;
	unsigned int sz = 0;

	spin_lock_irq(&wc->lock);
	args = wc->args;
	free = wow_seg_free_blocks(wc);
	dirty = wc->dirty_blocks;
	valid = wc->valid_blocks;
	free_segs = wow_seg_nr_free(wc);
	inflight = wow_destage_inflight(wc);
	groups = wc->policy.nr_groups;
	recency = wc->policy.nr_recency;
	hand = wc->policy.hand;
	thresh = wc->thresh;
	oldest = wow_destage_oldest_dirty(wc);
	ps = wc->policy.stats;
	needs_check = wc->health.flags & WOW_SB_F_NEEDS_CHECK;
	spin_unlock_irq(&wc->lock);

	switch (type) {
	case STATUSTYPE_INFO:
		DMEMIT("%s %s %u %u %llu %llu", wow_state_name(wc),
		       wow_policy_name(args.policy), args.block_size,
		       wc->nr_slots, free, dirty);
		DMEMIT(" read_hits=%llu read_misses=%llu",
		       STAT(read_hits), STAT(read_misses));
		DMEMIT(" write_hits=%llu write_misses=%llu writes_bypassed=%llu",
		       STAT(write_hits), STAT(write_misses),
		       STAT(writes_bypassed));
		writes = STAT(destage_writes);
		DMEMIT(" destage_writes=%llu destage_blocks=%llu merged_blocks=%llu",
		       writes, STAT(destage_blocks), STAT(merged_blocks));
		DMEMIT(" commits=%llu flushes=%llu discards=%llu reclaimed_segments=%llu",
		       STAT(commits), STAT(flushes), STAT(discards),
		       STAT(reclaimed_segments));
		DMEMIT(" origin_errors=%llu cache_errors=%llu",
		       STAT(origin_errors), STAT(cache_errors));
		DMEMIT(" segments=%u free_segments=%u valid_blocks=%llu",
		       wc->nr_segments, free_segs, valid);
		DMEMIT(" low_watermark=%u high_watermark=%u destage_inflight=%u",
		       thresh.low / 100, thresh.high / 100, inflight);
		DMEMIT(" hand=%llu dirty_groups=%llu recency_bits=%llu",
		       hand, groups, recency);
		DMEMIT(" destage_runs=%llu sweeps=%llu", ps.runs, ps.sweeps);
		DMEMIT(" mean_run_blocks=%llu mean_seek_sectors=%llu age_oldest_s=%u",
		       ps.runs ? div64_u64(ps.run_blocks, ps.runs) : 0,
		       writes ? div64_u64(STAT(seek_sectors), writes) : 0,
		       dirty ? jiffies_to_msecs(jiffies - oldest) / 1000 : 0);
		DMEMIT(" copied_blocks=%llu log_blocks=%llu load_dropped=%llu",
		       STAT(copied_blocks), STAT(log_blocks), wc->load_dropped);
		DMEMIT(" needs_check=%u", needs_check);
		DMEMIT(" load_kib=%llu loaded_from=%s", wc->load_bytes >> 10,
		       wc->needs_format ? "format" :
		       wc->load_from_ckpt ? "checkpoint" : "log");
		/* the runtime tunables in effect, named as their options */
		DMEMIT(" max_destage_ios=%u max_destage_size=%u max_age=%u sequential_cutoff=%llu",
		       args.max_destage_ios, args.max_destage_size,
		       args.max_age_s, (u64)args.sequential_cutoff);
		DMEMIT(" write_group_size=%u", args.write_group_size);
		DMEMIT(" bad_blocks=%llu", STAT(bad_blocks));
		break;
	case STATUSTYPE_TABLE:
		args.set &= ~BIT(WOW_OPT_FORMAT);
		DMEMIT("%s %s ", wc->origin_dev->name, wc->cache_dev->name);
		sz += wow_emit_opt_args(&args, result + sz, maxlen - sz);
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",origin=%s,cache=%s;", wc->origin_dev->name,
		       wc->cache_dev->name);
		break;
	}
}

static void wow_clear_stats(struct wow_cache *wc)
{
	atomic64_t *a = (atomic64_t *)&wc->stats;
	size_t i;

	for (i = 0; i < sizeof(wc->stats) / sizeof(*a); i++)
		atomic64_set(&a[i], 0);
	spin_lock_irq(&wc->lock);
	wow_policy_clear_stats(&wc->policy);
	spin_unlock_irq(&wc->lock);
}

/*
 * Messages:
 *   <tunable> <value>	low_watermark, high_watermark, max_destage_ios,
 *			max_destage_size, max_age, sequential_cutoff
 *   cleaner on|off
 *   commit
 *   clear_stats
 */
static int wow_message(struct dm_target *ti, unsigned int argc, char **argv,
		       char *result, unsigned int maxlen)
{
	struct wow_cache *wc = ti->private;
	char *error = NULL;
	int r = 0;

	if (argc == 1 && !strcasecmp(argv[0], "commit")) {
		if (!wc->loaded)
			return 0;
		flush_work(&wc->commit_work);
		return wow_log_commit(wc);
	}
	if (argc == 1 && !strcasecmp(argv[0], "clear_stats")) {
		wow_clear_stats(wc);
		return 0;
	}
	if (argc == 2 && !strcasecmp(argv[0], "cleaner")) {
		if (strcasecmp(argv[1], "on") && strcasecmp(argv[1], "off")) {
			DMWARN("%s: cleaner takes 'on' or 'off'", wow_name(wc));
			return -EINVAL;
		}
		spin_lock_irq(&wc->lock);
		wc->cleaner = !strcasecmp(argv[1], "on");
		wow_policy_set_drain(&wc->policy, wc->cleaner);
		spin_unlock_irq(&wc->lock);
		wow_kick(wc);
		return 0;
	}
	if (argc == 2) {
		spin_lock_irq(&wc->lock);
		r = wow_parse_tunable(&wc->args, argv[0], argv[1], &error);
		if (!r)
			wow_destage_set_watermarks(wc);
		spin_unlock_irq(&wc->lock);
		if (r)
			DMWARN("%s: message '%s %s' refused: %s", wow_name(wc),
			       argv[0], argv[1], error);
		else
			wow_kick(wc);
		return r;
	}
	DMWARN("%s: unrecognised message '%s' (%u words)", wow_name(wc),
	       argc ? argv[0] : "", argc);
	return -EINVAL;
}

static int wow_iterate_devices(struct dm_target *ti,
			       iterate_devices_callout_fn fn, void *data)
{
	struct wow_cache *wc = ti->private;

	return fn(ti, wc->origin_dev, 0, ti->len, data);
}

static void wow_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct wow_cache *wc = ti->private;
	unsigned int bs = wc->args.block_size;

	/* the fields themselves: 6.11 dropped blk_limits_io_min/opt */
	limits->logical_block_size = bs;
	limits->physical_block_size = max(limits->physical_block_size, bs);
	limits->io_min = max(limits->io_min, limits->physical_block_size);
	limits->io_opt = wc->args.write_group_size;
	limits->discard_granularity = bs;
	limits->max_discard_sectors = UINT_MAX >> SECTOR_SHIFT;
	limits->max_hw_discard_sectors = limits->max_discard_sectors;
}

static struct target_type wow_target = {
	.name = "wow",
	.version = { 0, 2, 0 },
	.module = THIS_MODULE,
	.ctr = wow_ctr,
	.dtr = wow_dtr,
	.map = wow_map,
	.end_io = wow_end_io,
	.postsuspend = wow_postsuspend,
	.preresume = wow_preresume,
	.resume = wow_resume,
	.status = wow_status,
	.message = wow_message,
	.iterate_devices = wow_iterate_devices,
	.io_hints = wow_io_hints,
};

static int __init dm_wow_init(void)
{
	int r = wow_super_init();

	if (r)
		return r;
	r = dm_register_target(&wow_target);
	if (r) {
		DMERR("register failed %d", r);
		wow_super_exit();
	}
	return r;
}

static void __exit dm_wow_exit(void)
{
	dm_unregister_target(&wow_target);
	wow_super_exit();
}

module_init(dm_wow_init);
module_exit(dm_wow_exit);

MODULE_DESCRIPTION(DM_NAME " write-back cache with WOW destage ordering");
MODULE_AUTHOR("dm-wow developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(DM_WOW_VERSION);
