// SPDX-License-Identifier: LGPL-2.1
/*
 * libwow: block devices (named by devname.c), and the plan of a new wow
 * device (wowctl create): every check the kernel's constructor makes
 * (dm-wow-args.c, wow_check_devices and wow_check_superblock in
 * dm-wow-target.c, wow_sb_geometry_mismatch in dm-wow-super.c), made
 * before the kernel is asked, so that a refusal says why and what to do.
 * The cache device's superblock is read with wowcache.  See libwow.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <linux/fs.h>
#include <linux/types.h>

#define __packed __attribute__((packed))
#include "../dm-wow/dm-wow-format.h"

#include "libwow.h"
#include "wowcache.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define fail wow_fail

/* ---- block devices ---- */

int wow_dev_probe(const char *path, const char *by_id_dir,
		  struct wow_dev *d, char *err)
{
	struct stat st;
	int fd, ro = 0, lbs = 512;
	uint64_t bytes;

	memset(d, 0, sizeof(*d));
	if (stat(path, &st))
		return fail(err, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
		return fail(err, -ENOTBLK, "%s: not a block device", path);
	d->is_blk = S_ISBLK(st.st_mode);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, -errno, "%s: %s", path, strerror(errno));
	if (d->is_blk) {
		if (ioctl(fd, BLKGETSIZE64, &bytes) ||
		    ioctl(fd, BLKSSZGET, &lbs) || ioctl(fd, BLKROGET, &ro)) {
			fail(err, -errno, "%s: cannot size: %s", path,
			     strerror(errno));
			close(fd);
			return -EIO;
		}
		d->rdev = st.st_rdev;
	} else {
		bytes = st.st_size;
		ro = access(path, W_OK) != 0;
		d->rdev = st.st_ino;	/* tells two files apart */
	}
	close(fd);
	d->sectors = bytes >> 9;
	d->logical_block_size = lbs;
	d->read_only = ro;
	/* the kernel claims both devices exclusively */
	fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0 && errno == EBUSY)
		d->busy = true;
	else if (fd >= 0)
		close(fd);
	d->path = strdup(path);
	d->stable = d->is_blk ? wow_dev_stable_path(by_id_dir, d->rdev) : NULL;
	if (!d->stable)
		d->stable = strdup(path);
	if (!d->path || !d->stable) {
		wow_dev_free(d);
		return fail(err, -ENOMEM, "out of memory");
	}
	return 0;
}

void wow_dev_free(struct wow_dev *d)
{
	free(d->path);
	free(d->stable);
	d->path = d->stable = NULL;
}

/* ---- the plan of a new device ---- */

/* Linux 6.11 and later cap logical blocks at the page size. */
static bool kernel_caps_block_size(void)
{
	struct utsname u;
	unsigned int maj = 0, min = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &maj, &min) != 2)
		return false;
	return maj > 6 || (maj == 6 && min >= 11);
}

static int check_dev(const struct wow_dev *d, const char *role,
		     unsigned int flags, char *err)
{
	if (!d->is_blk && !(flags & WOW_PLAN_FILES))
		return fail(err, -ENOTBLK, "%s %s: not a block device", role,
			    d->path);
	if (d->read_only)
		return fail(err, -EROFS, "%s %s is read-only: a write-back "
			    "cache writes both devices", role, d->path);
	if (d->busy)
		return fail(err, -EBUSY, "%s %s is in use (mounted, or held by "
			    "md, LVM or another device-mapper table)", role,
			    d->path);
	return 0;
}

/*
 * Options the superblock fixes: taken from it when not given, refused
 * (as the kernel refuses them) when given otherwise.
 */
static int adopt_geometry(struct wow_plan *p, const struct wowc *c,
			  const char *cache, char *err)
{
	static const int ids[] = { WOW_OPT_BLOCK_SIZE,
				   WOW_OPT_ERASE_BLOCK_SIZE,
				   WOW_OPT_WRITE_GROUP_SIZE };
	const uint64_t sb[] = { c->sb.block_size, c->sb.erase_block_size,
				c->sb.write_group_size };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		int id = ids[i];

		if (!(p->t.set & (1U << id))) {
			p->t.val[id] = sb[i];
			if (sb[i] != wow_opt_default(id)) {
				p->t.set |= 1U << id;
				p->adopted |= 1U << id;
			}
			continue;
		}
		if (p->t.val[id] != sb[i])
			return fail(err, -EINVAL, "Cache has another %s: %s "
				    "was formatted with %s=%" PRIu64 ", not %"
				    PRIu64 "; leave %s out to reopen it, or "
				    "name format to reinitialise it (its data "
				    "is lost)", wow_opts[id].name, cache,
				    wow_opts[id].name, sb[i], p->t.val[id],
				    wow_opts[id].name);
	}
	return 0;
}

/* Open the cache's superblock: what it is, its dirty blocks. */
static int read_cache(struct wow_plan *p, const struct wow_dev *cache,
		      struct wowc **cp, char *err)
{
	char e[WOWC_ERR_LEN];
	struct wowc_view v;
	int r;

	r = wowc_open(cache->path, cp, e);
	if (r)
		return fail(err, r, "cannot read the cache's superblock: %s",
			    e);
	if ((*cp)->sb_kind != WOWC_SB_VALID)
		return 0;
	if (!wowc_view_build(*cp, 0, &v, e)) {
		p->dirty_blocks = v.dirty_blocks;
		p->dirty_known = !v.refused;
		wowc_view_free(&v);
	}
	return 0;
}

static int check_superblock(struct wow_plan *p, const struct wowc *c,
			    const struct wow_dev *cache, unsigned int flags,
			    char *err)
{
	bool format = p->t.set & (1U << WOW_OPT_FORMAT);

	switch (c->sb_kind) {
	case WOWC_SB_ZERO:
		p->cache = format ? WOW_PLAN_FORMAT : WOW_PLAN_BLANK;
		return 0;
	case WOWC_SB_VALID:
		break;
	case WOWC_SB_CORRUPT:
		if (format)
			goto format;
		return fail(err, -EINVAL, "Cache superblock is corrupt (%s: "
			    "%s); 'wowctl check %s' says more, 'wowctl "
			    "writeback' recovers its dirty data; name format "
			    "to reinitialise it", cache->path, c->sb_why,
			    cache->path);
	case WOWC_SB_NEWER:
		if (format)
			goto format;
		return fail(err, -EINVAL, "Cache superblock is from a newer "
			    "dm-wow (%s)", cache->path);
	case WOWC_SB_FOREIGN:
	default:
		if (format)
			goto format;
		return fail(err, -EINVAL, "Cache device holds foreign data "
			    "(%s: %s); name format to initialise it (what it "
			    "holds is lost)", cache->path, c->sb_why);
	}
	if (!format) {
		p->cache = WOW_PLAN_REOPEN;
		return adopt_geometry(p, c, cache->path, err);
	}
	if ((!p->dirty_known || p->dirty_blocks) && !(flags & WOW_PLAN_FORCE)) {
		if (!p->dirty_known)
			return fail(err, -EBUSY, "%s holds a dm-wow cache whose "
				    "dirty data cannot be counted ('wowctl "
				    "check' says why): format could lose data "
				    "not yet on its origin; 'wowctl writeback' "
				    "copies it there; --force formats anyway",
				    cache->path);
		return fail(err, -EBUSY, "%s holds a dm-wow cache with %" PRIu64
			    " dirty blocks (%.1f MiB) not yet on its origin: "
			    "format would lose them.  Create it without format "
			    "and 'wowctl clean' it first (or 'wowctl "
			    "writeback' it), or give --force to format anyway",
			    cache->path, p->dirty_blocks,
			    (double)p->dirty_blocks * c->sb.block_size /
			    (1 << 20));
	}
format:
	p->cache = WOW_PLAN_FORMAT;
	return 0;
}

int wow_plan_make(const struct wow_table *t, const struct wow_dev *origin,
		  const struct wow_dev *cache, unsigned int flags,
		  struct wow_plan *p, char *err)
{
	uint64_t eff[WOW_NR_OPTS], bs, bsec, sectors;
	char e[WOWC_ERR_LEN];
	struct wowc_msize m;
	struct wowc *c = NULL;
	long page = sysconf(_SC_PAGESIZE);
	int r;

	memset(p, 0, sizeof(*p));
	p->t = *t;
	p->t.origin = strdup(origin->stable);
	p->t.cache = strdup(cache->stable);
	if (!p->t.origin || !p->t.cache) {
		r = fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	/* the options alone, as the kernel parses them first */
	r = wow_table_check(&p->t, NULL, err);
	if (r)
		goto out;
	if (origin->rdev == cache->rdev && origin->is_blk == cache->is_blk) {
		r = fail(err, -EINVAL, "Origin and cache must be different "
			 "devices (%s, %s)", origin->path, cache->path);
		goto out;
	}
	r = check_dev(origin, "origin", flags, err);
	if (!r)
		r = check_dev(cache, "cache", flags, err);
	if (!r)
		r = read_cache(p, cache, &c, err);
	if (!r)
		r = check_superblock(p, c, cache, flags, err);
	if (!r)
		r = wow_table_check(&p->t, eff, err);
	if (r)
		goto out;
	bs = eff[WOW_OPT_BLOCK_SIZE];
	bsec = bs >> 9;
	if (kernel_caps_block_size() && page > 0 && bs > (uint64_t)page) {
		r = fail(err, -EINVAL, "block_size above the page size (%ld) is "
			 "not supported by this kernel (logical blocks are "
			 "capped at the page size since 6.11)", page);
		goto out;
	}
	if (origin->logical_block_size > bs || cache->logical_block_size > bs) {
		r = fail(err, -EINVAL, "block_size is smaller than the %s's "
			 "logical block size (%u)",
			 origin->logical_block_size > bs ? "origin" : "cache",
			 origin->logical_block_size > bs ?
			 origin->logical_block_size :
			 cache->logical_block_size);
		goto out;
	}
	/* the target covers the origin in whole blocks */
	sectors = origin->sectors / bsec * bsec;
	if (!sectors) {
		r = fail(err, -EINVAL, "origin %s (%" PRIu64 " bytes) is smaller "
			 "than one block (%" PRIu64 ")", origin->path,
			 origin->sectors << 9, bs);
		goto out;
	}
	if (sectors / bsec > WOW_CKPT_OBLOCK_MASK) {
		r = fail(err, -EINVAL, "Origin too large for block_size: %"
			 PRIu64 " blocks, at most %" PRIu64 "; a larger "
			 "block_size fits", sectors / bsec,
			 (uint64_t)WOW_CKPT_OBLOCK_MASK);
		goto out;
	}
	if (wowc_msize(cache->sectors << 9, bs, eff[WOW_OPT_ERASE_BLOCK_SIZE],
		       &m, e)) {
		r = fail(err, -EINVAL, "cache %s (%" PRIu64 " bytes): %s",
			 cache->path, cache->sectors << 9, e);
		goto out;
	}
	if (p->cache == WOW_PLAN_REOPEN) {
		if (c->sb.origin_sectors != sectors) {
			r = fail(err, -EINVAL, "Cache belongs to an origin of "
				 "another length: %s was formatted for %" PRIu64
				 " sectors, %s gives %" PRIu64 "; name format to "
				 "reinitialise it (its data is lost)",
				 cache->path, c->sb.origin_sectors,
				 origin->path, sectors);
			goto out;
		}
		if (c->sb.cache_sectors > cache->sectors) {
			r = fail(err, -EINVAL, "Cache device is smaller than "
				 "when it was formatted (%" PRIu64 " sectors, "
				 "now %" PRIu64 ")", c->sb.cache_sectors,
				 cache->sectors);
			goto out;
		}
	}
	p->sectors = sectors;
out:
	if (c)
		wowc_close(c);
	if (r)
		wow_plan_free(p);
	return r;
}

void wow_plan_free(struct wow_plan *p)
{
	wow_table_free(&p->t);
}
