// SPDX-License-Identifier: GPL-2.0
/*
 * wowcache: a dm-wow cache device or image, offline (see wowcache.h):
 * open it, read and decode its superblock, health block and checkpoint
 * headers (the kernel's own decoders and checkpoint reader, built here),
 * pick the checkpoint a load starts from; and what the commands share:
 * problems, reads, names.  The view a load rebuilds is wowview.c's; the
 * commands are wowcheck.c, wowdump.c, wowwriteback.c and wowmsize.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>

#include "../dm-wow/dm-wow-types.h"
#include "../dm-wow/dm-wow-format.h"
#include "../dm-wow/dm-wow-ckpt.h"
#include "../dm-wow/dm-wow-ckptread.h"
#include "../dm-wow/dm-wow-index.h"
#include "../dm-wow/dm-wow-sb.h"

#include "json.h"
#include "wowcache-int.h"

void wowc_seterr(char *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err, WOWC_ERR_LEN, fmt, ap);
	va_end(ap);
}

/* ---- problems ---- */

void wowc_problem(struct wowc_problems *ps, enum wowc_sev sev,
		  const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (ps->nr == ps->max) {
		size_t want = ps->max ? 2 * ps->max : 16;
		struct wowc_problem *n = realloc(ps->p, want * sizeof(*n));

		if (!n) {
			free(msg);
			return;
		}
		ps->p = n;
		ps->max = want;
	}
	ps->p[ps->nr].sev = sev;
	ps->p[ps->nr++].msg = msg ? msg : strdup("(out of memory)");
}

void wowc_problems_free(struct wowc_problems *ps)
{
	size_t i;

	for (i = 0; i < ps->nr; i++)
		free(ps->p[i].msg);
	free(ps->p);
	memset(ps, 0, sizeof(*ps));
}

int wowc_worst(const struct wowc_problems *ps)
{
	int w = -1;
	size_t i;

	for (i = 0; i < ps->nr; i++)
		if ((int)ps->p[i].sev > w)
			w = ps->p[i].sev;
	return w;
}

int wowc_exit_code(const struct wowc *c, const struct wowc_view *v)
{
	int w = wowc_worst(&c->probs);

	if (v && wowc_worst(&v->probs) > w)
		w = wowc_worst(&v->probs);
	if (w == WOWC_SEV_ERROR)
		return WOWC_EXIT_ERROR;
	if (w == WOWC_SEV_WARN)
		return WOWC_EXIT_WARN;
	return WOWC_EXIT_CLEAN;
}

static const char *sev_name(enum wowc_sev s)
{
	return s == WOWC_SEV_ERROR ? "error" : s == WOWC_SEV_WARN ? "warning" :
	       "note";
}

/* ---- I/O ---- */

void *wowc_xalloc(size_t n)
{
	void *p;

	if (posix_memalign(&p, IO_ALIGN, n ? n : 1))
		return NULL;
	memset(p, 0, n);
	return p;
}

static int pread_full(int fd, void *buf, size_t len, uint64_t off,
		      size_t need)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done,
				  off + done);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!r)
			break;
		done += r;
	}
	return done >= need ? 0 : -EIO;
}

/* @len bytes at @off of the cache; aligned through a bounce if direct. */
int wowc_read(const struct wowc *c, void *buf, size_t len, uint64_t off)
{
	uint64_t a, e;
	void *b;
	int r;

	if (off + len > c->size)
		return -ENXIO;
	if (!c->direct || (!((uintptr_t)buf % IO_ALIGN) &&
			   !(off % IO_ALIGN) && !(len % IO_ALIGN)))
		return pread_full(c->fd, buf, len, off, len);
	a = off & ~(uint64_t)(IO_ALIGN - 1);
	e = (off + len + IO_ALIGN - 1) & ~(uint64_t)(IO_ALIGN - 1);
	b = wowc_xalloc(e - a);
	if (!b)
		return -ENOMEM;
	r = pread_full(c->fd, b, e - a, a, off + len - a);
	if (!r)
		memcpy(buf, (char *)b + (off - a), len);
	free(b);
	return r;
}

int wowc_dev_size(int fd, uint64_t *size)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, size))
			return -errno;
		return 0;
	}
	*size = st.st_size;
	return 0;
}

/*
 * Open a device or image: a block device with O_EXCL (a dm table that
 * holds it makes this fail: the tools are for an unused cache) and, when
 * @direct, O_DIRECT so that what the kernel wrote behind the page cache is
 * what is read.
 */
int wowc_open_dev(const char *path, int mode, bool *direct, char *err)
{
	struct stat st;
	int fd;

	*direct = false;
	if (stat(path, &st)) {
		wowc_seterr(err, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISBLK(st.st_mode)) {
		fd = open(path, mode | O_CLOEXEC);
		if (fd < 0)
			wowc_seterr(err, "%s: %s", path, strerror(errno));
		return fd < 0 ? -errno : fd;
	}
	if (mode == O_RDONLY) {
		fd = open(path, mode | O_EXCL | O_DIRECT | O_CLOEXEC);
		if (fd >= 0) {
			*direct = true;
			return fd;
		}
		if (errno != EINVAL)
			goto fail;
	}
	fd = open(path, mode | O_EXCL | O_CLOEXEC);
	if (fd >= 0)
		return fd;
fail:
	if (errno == EBUSY)
		wowc_seterr(err, "%s: in use (a device-mapper table or a mount holds it); remove the wow device first", path);
	else
		wowc_seterr(err, "%s: %s", path, strerror(errno));
	return -errno;
}

/* ---- superblock, health block, checkpoint header ---- */

/* wow_sb_decode, then what wow_check_devices refuses */
static void sb_decode(struct wowc *c, const void *blk, size_t len)
{
	static const enum wowc_sb_kind kinds[] = {
		[WOW_SB_ZERO] = WOWC_SB_ZERO,
		[WOW_SB_VALID] = WOWC_SB_VALID,
		[WOW_SB_CORRUPT] = WOWC_SB_CORRUPT,
		[WOW_SB_NEWER] = WOWC_SB_NEWER,
		[WOW_SB_FOREIGN] = WOWC_SB_FOREIGN,
	};
	const struct wow_superblock *sb = blk;
	struct wow_sb_info info = { 0 };
	const struct wow_geometry *g = &info.geo;
	struct wowc_sb *s = &c->sb;
	enum wow_sb_kind kind;
	uint64_t bsec;

	/* filled only as far as the decode got: zero before */
	kind = wow_sb_decode(blk, len, &info, &c->sb_why);
	c->sb_kind = kinds[kind];
	if (kind == WOW_SB_ZERO)
		c->sb_why = "no superblock: the device is blank (the kernel formats it on first use)";
	else if (kind == WOW_SB_NEWER)
		c->sb_why = "superblock version is newer than this tool";
	s->version = info.version;
	s->flags = info.flags;
	s->block_size = g->block_size;
	s->erase_block_size = g->erase_block_size;
	s->write_group_size = g->write_group_size;
	s->origin_sectors = g->origin_sectors;
	s->cache_sectors = g->cache_sectors;
	s->first_segment_sector = g->first_segment_sector;
	s->nr_segments = g->nr_segments;
	s->format_seq = info.format_seq;
	memcpy(s->uuid, info.uuid, sizeof(s->uuid));
	memcpy(s->origin_id, info.origin_id, WOW_ORIGIN_ID_LEN);
	/* wowctl shows all of a full field; the kernel keeps one byte less */
	if (strlen(s->origin_id) == WOW_ORIGIN_ID_LEN - 1)
		s->origin_id[WOW_ORIGIN_ID_LEN - 1] =
			sb->origin_id[WOW_ORIGIN_ID_LEN - 1];
	s->origin_id[WOW_ORIGIN_ID_LEN] = 0;
	if (kind != WOW_SB_VALID)
		return;
	c->sb_kind = WOWC_SB_CORRUPT;
	bsec = s->block_size >> 9;
	c->bs = s->block_size;
	c->bps = s->erase_block_size / s->block_size;
	c->nr_segments = s->nr_segments;
	c->nr_slots = s->nr_segments * c->bps;
	c->nr_oblocks = s->origin_sectors / bsec;
	/* what the kernel's table checks would refuse (wow_check_devices) */
	if (s->origin_sectors % bsec) {
		c->sb_why = "origin length is not a multiple of block_size";
		return;
	}
	if (c->nr_oblocks > WOW_CKPT_OBLOCK_MASK) {
		c->sb_why = "origin too large for block_size";
		return;
	}
	if (c->nr_slots > WOW_MAX_SLOTS) {
		c->sb_why = "cache too large for block_size";
		return;
	}
	c->sb_kind = WOWC_SB_VALID;
	c->sb_why = NULL;
}

/* wow_health_decode, and whether the block is ours at all */
static void health_decode(struct wowc *c, const void *blk)
{
	const struct wow_health *hb = blk;
	struct wowc_health *h = &c->health;
	struct wow_health_info hi;

	memset(h, 0, sizeof(*h));
	h->needs_check = wow_health_decode(blk, c->bs, c->sb.uuid, &hi);
	h->ours = wow_health_ours(blk, c->bs, c->sb.uuid);
	h->flags = hi.flags;
	h->state = hi.state;
	h->time = hi.time;
	memcpy(h->what, hi.what, sizeof(hi.what));
	/* wowctl shows all of a full field; the kernel keeps one byte less */
	if (strlen(h->what) == WOW_HEALTH_WHAT_LEN - 1)
		h->what[WOW_HEALTH_WHAT_LEN - 1] =
			hb->what[WOW_HEALTH_WHAT_LEN - 1];
	h->what[WOW_HEALTH_WHAT_LEN] = 0;
}

/* Tombstones this cache's checkpoint area has room for. */
uint64_t wowc_ckpt_room(const struct wowc *c)
{
	return wow_ckpt_max_tombs_v(c->sb.version, c->nr_segments,
				    c->sb.erase_block_size, c->bs);
}

/*
 * ---- the checkpoint: the kernel's own reader (dm-wow-ckptread.c) reads
 * and checks it; here its reads of the image ----
 */

/* Byte offset of block @block of checkpoint area c->ckpt_area. */
static uint64_t ckpt_sector_off(const struct wowc *c, uint64_t block)
{
	uint64_t span = wow_ckpt_span_v(c->sb.version, c->nr_segments,
					c->sb.erase_block_size, c->bs);

	return (wow_ckpt_first_block_v(c->sb.version, c->sb.erase_block_size,
				       c->bs) + c->ckpt_area * span + block) *
	       (uint64_t)c->bs;
}

static int ckpt_read(void *ctx, u64 block, u32 n, void *buf)
{
	const struct wowc *c = ctx;

	return wowc_read(c, buf, (size_t)n * c->bs, ckpt_sector_off(c, block));
}

/* A reader of checkpoint area c->ckpt_area (no memory for a load yet). */
void wowc_ckpt_reader(struct wowc *c, struct wow_ckpt_reader *rdr)
{
	*rdr = (struct wow_ckpt_reader) {
		.version = c->sb.version,
		.block_size = c->bs,
		.blocks_per_seg = c->bps,
		.uuid = c->sb.uuid,
		.nr_slots = c->nr_slots,
		.nr_segments = c->nr_segments,
		.max_tombs = wowc_ckpt_room(c),
		.nr_oblocks = c->nr_oblocks,
		.read = ckpt_read,
		.ctx = c,
	};
}

/* MISFIT: what does not fit this cache, the kernel's verdict in words */
static const char *const ckpt_misfits[] = {
	[WOW_CKPT_HDR_COUNTS] = "its slot or segment count is not this cache's",
	[WOW_CKPT_HDR_SLOT_BLOCKS] = "its slot table size is wrong",
	[WOW_CKPT_HDR_TOMBS] = "more tombstones than the area holds",
	[WOW_CKPT_HDR_SEG_BLOCKS] = "its segment stream size is wrong",
	[WOW_CKPT_HDR_SEQS] = "completed_seq is not below next_seq",
};

/*
 * Read checkpoint area c->ckpt_area's header (with the closing copy from
 * version 3; @buf two blocks) with the kernel's reader, and set c->ckpt
 * from its verdict and what it decoded.
 */
static int ckpt_area_read(struct wowc *c, void *buf)
{
	struct wowc_ckpt *k = &c->ckpt;
	struct wow_ckpt_reader rdr;
	struct wow_ckpt_info ci;
	enum wow_ckpt_hdr h;
	int r;

	wowc_ckpt_reader(c, &rdr);
	r = wow_ckptread_header(&rdr, buf, &ci);
	if (r && r != -ENOENT)
		return r;
	h = rdr.fault == WOW_CKPT_FAULT_HEADER ? rdr.fault_index :
						  WOW_CKPT_HDR_VALID;
	memset(k, 0, sizeof(*k));
	if (h == WOW_CKPT_HDR_FOREIGN || h == WOW_CKPT_HDR_TORN) {
		k->state = h == WOW_CKPT_HDR_TORN ? WOWC_CKPT_TORN :
						    WOWC_CKPT_NONE;
		return 0;
	}
	k->flags = ci.valid ? WOW_CKPT_VALID : 0;
	k->generation = ci.generation;
	k->next_seq = ci.next_seq;
	k->completed_seq = ci.completed_seq;
	k->nr_slots = ci.nr_slots;
	k->nr_segments = ci.nr_segments;
	k->slot_blocks = ci.slot_blocks;
	k->seg_blocks = ci.seg_blocks;
	k->nr_tombs = ci.nr_tombs;
	/* WOWC_NO_SEG: none (not known) */
	k->head_seg = ci.head_seg;
	k->head_wp = ci.head_wp;
	k->next_seg = ci.next_seg;
	k->closing_bad = rdr.fault == WOW_CKPT_FAULT_CLOSING;
	if (h == WOW_CKPT_HDR_VALID)
		k->state = k->closing_bad ? WOWC_CKPT_TORN : WOWC_CKPT_VALID;
	else if (h == WOW_CKPT_HDR_RETIRED)
		k->state = WOWC_CKPT_RETIRED;
	else
		k->state = WOWC_CKPT_MISFIT;
	if (k->state == WOWC_CKPT_MISFIT)
		strcpy(k->why, ckpt_misfits[h]);
	return 0;
}

/*
 * The checkpoint a load starts from, as load_checkpoint picks it: in
 * version 4 the newest valid of the two areas (the other's header kept in
 * c->ckpt_other), a newer one that is not whole said as a note.
 */
static int ckpt_pick(struct wowc *c, void *buf)
{
	struct wowc_ckpt a0;
	int r;

	c->ckpt_area = 0;
	r = ckpt_area_read(c, buf);
	if (r || c->sb.version < 4)
		return r;
	a0 = c->ckpt;
	c->ckpt_area = 1;
	r = ckpt_area_read(c, buf);
	if (r)
		return r;
	if (wow_ckpt_pick_second(a0.state == WOWC_CKPT_VALID, a0.generation,
				 c->ckpt.state == WOWC_CKPT_VALID,
				 c->ckpt.generation)) {
		c->ckpt_other = a0;
	} else {
		c->ckpt_other = c->ckpt;
		c->ckpt = a0;
		c->ckpt_area = 0;
	}
	if (c->ckpt.state == WOWC_CKPT_VALID &&
	    c->ckpt_other.state == WOWC_CKPT_TORN &&
	    c->ckpt_other.closing_bad &&
	    c->ckpt_other.generation > c->ckpt.generation)
		wowc_problem(&c->probs, WOWC_SEV_INFO,
			     "checkpoint %" PRIu64 " (area %d) is not whole (a power cut while it was written?); the kernel loads checkpoint %" PRIu64 " (area %d)",
			     c->ckpt_other.generation, 1 - c->ckpt_area,
			     c->ckpt.generation, c->ckpt_area);
	return 0;
}

int wowc_open(const char *path, struct wowc **cp, char *err)
{
	struct wowc *c = calloc(1, sizeof(*c));
	uint8_t *buf = NULL;
	size_t len;
	int r;

	*cp = NULL;
	if (!c) {
		wowc_seterr(err, "out of memory");
		return -ENOMEM;
	}
	c->path = strdup(path);
	c->fd = wowc_open_dev(path, O_RDONLY, &c->direct, err);
	if (c->fd < 0) {
		r = c->fd;
		goto fail;
	}
	r = wowc_dev_size(c->fd, &c->size);
	if (r) {
		wowc_seterr(err, "%s: cannot size: %s", path, strerror(-r));
		goto fail;
	}
	if (c->size < WOW_SB_CSUM_BYTES) {
		wowc_seterr(err, "%s: too small to hold a superblock", path);
		r = -EINVAL;
		goto fail;
	}
	len = min_t(u64, c->size, IO_ALIGN);
	/* two blocks: a checkpoint header and its closing copy */
	buf = wowc_xalloc(2 * WOW_MAX_BLOCK_SIZE);
	if (!buf) {
		r = -ENOMEM;
		wowc_seterr(err, "out of memory");
		goto fail;
	}
	r = wowc_read(c, buf, len, 0);
	if (r) {
		wowc_seterr(err, "%s: cannot read the superblock: %s", path,
			    strerror(-r));
		goto fail;
	}
	sb_decode(c, buf, len);
	if (c->sb_kind != WOWC_SB_VALID) {
		wowc_problem(&c->probs, WOWC_SEV_ERROR, "%s", c->sb_why);
		goto out;
	}
	if (c->size < c->sb.cache_sectors * 512) {
		wowc_problem(&c->probs, WOWC_SEV_ERROR,
			     "the device (%" PRIu64 " bytes) is smaller than when it was formatted (%" PRIu64 " bytes): the kernel refuses it",
			     c->size, c->sb.cache_sectors * 512);
		c->sb_kind = WOWC_SB_CORRUPT;
		c->sb_why = "the device is smaller than the superblock says";
		goto out;
	}
	r = wowc_read(c, buf, c->bs, c->bs);
	if (r) {
		wowc_seterr(err, "%s: cannot read the health block: %s", path,
			    strerror(-r));
		goto fail;
	}
	health_decode(c, buf);
	if (c->health.needs_check)
		wowc_problem(&c->probs, WOWC_SEV_WARN,
			     "needs_check: the cache device failed before (%s, at %" PRIu64 " s since 1970); the kernel loads it in cleaner mode",
			     c->health.what, c->health.time);
	if (c->sb.version >= 2) {
		r = ckpt_pick(c, buf);
		if (r) {
			wowc_seterr(err, "%s: cannot read a checkpoint header: %s",
				    path, strerror(-r));
			goto fail;
		}
		if (c->ckpt.state == WOWC_CKPT_TORN && c->ckpt.closing_bad)
			wowc_problem(&c->probs, WOWC_SEV_WARN,
				     "checkpoint %" PRIu64 ": its closing copy of the header is missing or differs (the write was cut short); the kernel scans the log",
				     c->ckpt.generation);
		else if (c->ckpt.state == WOWC_CKPT_TORN)
			wowc_problem(&c->probs, WOWC_SEV_WARN,
				     "checkpoint header: ours, but its checksum or version fails (torn?); the kernel scans the log");
		else if (c->ckpt.state == WOWC_CKPT_MISFIT)
			wowc_problem(&c->probs, WOWC_SEV_ERROR,
				     "checkpoint %" PRIu64 ": marked valid, but %s; the kernel scans the log",
				     c->ckpt.generation, c->ckpt.why);
	}
out:
	free(buf);
	*cp = c;
	return 0;
fail:
	free(buf);
	wowc_close(c);
	return r;
}

void wowc_close(struct wowc *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c->path);
	wowc_problems_free(&c->probs);
	free(c);
}

/* ---- the segments ---- */

uint64_t wowc_seg_offset(const struct wowc *c, uint64_t s)
{
	return c->sb.first_segment_sector * 512 +
	       s * (uint64_t)c->sb.erase_block_size;
}

/* ---- output helpers ---- */

void wowc_uuid_str(const uint8_t *u, char *out)
{
	static const int dash[] = { 4, 6, 8, 10 };
	int i, k = 0;
	size_t d = 0;

	for (i = 0; i < 16; i++) {
		if (d < ARRAY_SIZE(dash) && i == dash[d]) {
			out[k++] = '-';
			d++;
		}
		k += sprintf(out + k, "%02x", u[i]);
	}
	out[k] = 0;
}

const char *wowc_ckpt_state_name(enum wowc_ckpt_state s)
{
	static const char *const names[] = {
		[WOWC_CKPT_NONE] = "none",
		[WOWC_CKPT_TORN] = "torn",
		[WOWC_CKPT_RETIRED] = "retired",
		[WOWC_CKPT_MISFIT] = "misfit",
		[WOWC_CKPT_BAD] = "bad",
		[WOWC_CKPT_VALID] = "valid",
	};

	return names[s];
}

void wowc_print_problems(FILE *f, const struct wowc_problems *ps)
{
	size_t i;

	for (i = 0; i < ps->nr; i++)
		fprintf(f, "%s: %s\n", sev_name(ps->p[i].sev), ps->p[i].msg);
}

/* each problem, an object on a line of its own */
void wowc_json_problems(struct json *j, const struct wowc_problems *ps)
{
	size_t i;

	for (i = 0; i < ps->nr; i++) {
		json_open(j, '{', -1);
		json_key(j, "severity");
		json_str(j, sev_name(ps->p[i].sev));
		json_key(j, "message");
		json_str(j, ps->p[i].msg);
		json_close(j);
	}
}


/* "key": unsigned number */
void wowc_json_kv(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}
