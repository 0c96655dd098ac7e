// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow target: constructor and destructor, map, status, messages, hints.
 *
 * Table line:
 *   <start> <length> wow <origin_dev> <cache_dev> <#opt_args> [<opt_args>...]
 * (options in dm-wow-args.c, user guide in Documentation/dm-wow.rst)
 *
 * This is the skeleton the cache grows in: the cache device is checked and
 * formatted, and I/O passes straight through to the origin.
 */
#include <linux/blkdev.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "dm-wow.h"

enum wow_state {
	WOW_STATE_OK,
	WOW_STATE_READ_ONLY,
	WOW_STATE_FAILED,
};

struct wow_stats {
	atomic64_t read_misses;
	atomic64_t writes_bypassed;
	atomic64_t flushes;
	atomic64_t discards;
	atomic64_t commits;
};

struct wow_cache {
	struct dm_target *ti;
	struct dm_dev *origin_dev;
	struct dm_dev *cache_dev;

	spinlock_t lock;		/* args (tunables), cleaner */
	struct wow_args args;
	bool cleaner;
	enum wow_state state;

	struct wow_sb_info sb;
	u64 cache_blocks;		/* data blocks the log can hold */

	struct wow_stats stats;
};

static const char *wow_name(struct wow_cache *wc)
{
	return dm_table_device_name(wc->ti->table);
}

/*
 * Read the first block of the cache device and decide: recover an existing
 * superblock, format a zeroed device, or refuse.  Nothing is written unless
 * every check has passed.
 */
static int wow_open_superblock(struct wow_cache *wc, char **error)
{
	struct block_device *bdev = wc->cache_dev->bdev;
	unsigned int len = wc->args.block_size;
	struct wow_geometry table;
	enum wow_sb_kind kind;
	const char *why;
	void *buf;
	int r;

	wow_geometry_init(&table, &wc->args, wc->ti->len,
			  bdev_nr_sectors(bdev));

	buf = kzalloc(len, GFP_KERNEL);
	if (!buf) {
		*error = "Cannot allocate superblock buffer";
		return -ENOMEM;
	}
	r = wow_sync_io(bdev, 0, buf, len, REQ_OP_READ);
	if (r) {
		*error = "Cannot read the cache device's superblock";
		goto out;
	}

	kind = wow_sb_decode(buf, len, &wc->sb, &why);
	if (wc->args.format)
		kind = WOW_SB_ZERO;

	switch (kind) {
	case WOW_SB_VALID:
		why = wow_sb_geometry_mismatch(&wc->sb.geo, &table);
		if (why) {
			*error = (char *)why;
			r = -EINVAL;
			goto out;
		}
		break;
	case WOW_SB_ZERO:
		memset(&wc->sb, 0, sizeof(wc->sb));
		wc->sb.geo = table;
		wc->sb.flags = WOW_SB_F_CLEAN;
		get_random_bytes(wc->sb.uuid, sizeof(wc->sb.uuid));
		memset(buf, 0, len);
		wow_sb_encode(buf, &wc->sb);
		r = wow_sync_io(bdev, 0, buf, len,
				REQ_OP_WRITE | REQ_SYNC | REQ_PREFLUSH | REQ_FUA);
		if (r) {
			*error = "Cannot write the cache device's superblock";
			goto out;
		}
		DMINFO("%s: formatted cache device %pg: %llu segments of %u bytes",
		       wow_name(wc), bdev, table.nr_segments,
		       table.erase_block_size);
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
	if (r && why)
		DMERR("%s: cache device %pg: %s", wow_name(wc), bdev, why);
out:
	kfree(buf);
	return r;
}

static int wow_check_devices(struct wow_cache *wc, char **error)
{
	struct block_device *origin = wc->origin_dev->bdev;
	struct block_device *cache = wc->cache_dev->bdev;
	sector_t block_sectors = wc->args.block_size >> SECTOR_SHIFT;

	if (origin == cache) {
		*error = "Origin and cache must be different devices";
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
	if (bdev_logical_block_size(origin) > wc->args.block_size) {
		*error = "block_size is smaller than the origin's logical block size";
		return -EINVAL;
	}
	if (bdev_logical_block_size(cache) > wc->args.block_size) {
		*error = "block_size is smaller than the cache's logical block size";
		return -EINVAL;
	}
	if (bdev_nr_sectors(cache) <
	    wow_min_cache_sectors(wc->args.erase_block_size)) {
		*error = "Cache device too small: needs one erase block of metadata and 4 segments";
		return -EINVAL;
	}
	return 0;
}

static void wow_dtr(struct dm_target *ti)
{
	struct wow_cache *wc = ti->private;

	if (!wc)
		return;
	if (wc->cache_dev)
		dm_put_device(ti, wc->cache_dev);
	if (wc->origin_dev)
		dm_put_device(ti, wc->origin_dev);
	kfree(wc);
}

static int wow_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	fmode_t mode = dm_table_get_mode(ti->table);
	const char *origin_path, *cache_path;
	struct wow_cache *wc;
	int r;

	if (argc < 3) {
		ti->error = "Not enough arguments: <origin_dev> <cache_dev> <#opt_args>";
		return -EINVAL;
	}
	if (!(mode & FMODE_WRITE)) {
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
	r = dm_get_device(ti, cache_path, mode, &wc->cache_dev);
	if (r) {
		ti->error = "Cannot open the cache device";
		goto bad;
	}
	r = wow_check_devices(wc, &ti->error);
	if (r)
		goto bad;
	r = wow_open_superblock(wc, &ti->error);
	if (r)
		goto bad;

	wc->cleaner = wc->args.cleaner;
	wc->cache_blocks = wc->sb.geo.nr_segments *
			   (wc->args.erase_block_size / wc->args.block_size);

	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->flush_supported = true;
	return 0;

bad:
	wow_dtr(ti);
	ti->private = NULL;
	return r;
}

static int wow_map(struct dm_target *ti, struct bio *bio)
{
	struct wow_cache *wc = ti->private;

	bio_set_dev(bio, wc->origin_dev->bdev);
	if (bio_sectors(bio) || op_is_zone_mgmt(bio_op(bio)))
		bio->bi_iter.bi_sector = dm_target_offset(ti,
							  bio->bi_iter.bi_sector);

	if (op_is_flush(bio->bi_opf) && !bio_sectors(bio))
		atomic64_inc(&wc->stats.flushes);
	else if (bio_op(bio) == REQ_OP_DISCARD)
		atomic64_inc(&wc->stats.discards);
	else if (op_is_write(bio_op(bio)))
		atomic64_inc(&wc->stats.writes_bypassed);
	else
		atomic64_inc(&wc->stats.read_misses);
	return DM_MAPIO_REMAPPED;
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
	struct wow_args args, table_args;
	unsigned int sz = 0;

	spin_lock_irq(&wc->lock);
	args = wc->args;
	spin_unlock_irq(&wc->lock);

	switch (type) {
	case STATUSTYPE_INFO:
		DMEMIT("%s %s %u %llu %llu %llu", wow_state_name(wc),
		       wow_policy_name(args.policy), args.block_size,
		       wc->cache_blocks, wc->cache_blocks, 0ULL);
		DMEMIT(" read_misses=%lld writes_bypassed=%lld",
		       atomic64_read(&wc->stats.read_misses),
		       atomic64_read(&wc->stats.writes_bypassed));
		DMEMIT(" flushes=%lld discards=%lld commits=%lld",
		       atomic64_read(&wc->stats.flushes),
		       atomic64_read(&wc->stats.discards),
		       atomic64_read(&wc->stats.commits));
		DMEMIT(" segments=%llu low_watermark=%u high_watermark=%u",
		       wc->sb.geo.nr_segments, args.low_watermark_pct,
		       args.high_watermark_pct);
		break;
	case STATUSTYPE_TABLE:
		table_args = args;
		table_args.set &= ~BIT(WOW_OPT_FORMAT);
		DMEMIT("%s %s ", wc->origin_dev->name, wc->cache_dev->name);
		sz += wow_emit_opt_args(&table_args, result + sz, maxlen - sz);
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
	atomic64_set(&wc->stats.read_misses, 0);
	atomic64_set(&wc->stats.writes_bypassed, 0);
	atomic64_set(&wc->stats.flushes, 0);
	atomic64_set(&wc->stats.discards, 0);
	atomic64_set(&wc->stats.commits, 0);
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
		r = blkdev_issue_flush(wc->origin_dev->bdev);
		if (!r)
			atomic64_inc(&wc->stats.commits);
		return r;
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
		spin_unlock_irq(&wc->lock);
		return 0;
	}
	if (argc == 2) {
		spin_lock_irq(&wc->lock);
		r = wow_parse_tunable(&wc->args, argv[0], argv[1], &error);
		spin_unlock_irq(&wc->lock);
		if (r)
			DMWARN("%s: message '%s %s' refused: %s", wow_name(wc),
			       argv[0], argv[1], error);
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

	limits->logical_block_size = bs;
	limits->physical_block_size = max(limits->physical_block_size, bs);
	blk_limits_io_min(limits, bs);
	blk_limits_io_opt(limits, wc->args.write_group_size);
}

static struct target_type wow_target = {
	.name = "wow",
	.version = { 0, 1, 0 },
	.module = THIS_MODULE,
	.ctr = wow_ctr,
	.dtr = wow_dtr,
	.map = wow_map,
	.status = wow_status,
	.message = wow_message,
	.iterate_devices = wow_iterate_devices,
	.io_hints = wow_io_hints,
};

static int __init dm_wow_init(void)
{
	int r = dm_register_target(&wow_target);

	if (r)
		DMERR("register failed %d", r);
	return r;
}

static void __exit dm_wow_exit(void)
{
	dm_unregister_target(&wow_target);
}

module_init(dm_wow_init);
module_exit(dm_wow_exit);

MODULE_DESCRIPTION(DM_NAME " write-back cache with WOW destage ordering");
MODULE_AUTHOR("dm-wow developers");
MODULE_LICENSE("GPL");
