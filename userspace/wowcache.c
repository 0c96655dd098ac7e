// SPDX-License-Identifier: GPL-2.0
/*
 * wowcache: offline view of a dm-wow cache device or image (see
 * wowcache.h).  Each rule below names the kernel function it mirrors; a
 * change to the kernel's recovery must be made here too, or check and the
 * kernel disagree on what is valid.
 */
#define _GNU_SOURCE
#include <endian.h>
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
#include <linux/types.h>

#include "../dm-wow/dm-wow-types.h"
#include "../dm-wow/dm-wow-format.h"
#include "../dm-wow/dm-wow-chain.h"
#include "../dm-wow/dm-wow-ckpt.h"
#include "../dm-wow/dm-wow-ckptread.h"
#include "../dm-wow/dm-wow-record.h"
#include "../dm-wow/dm-wow-replay.h"
#include "../dm-wow/dm-wow-sb.h"
#include "../dm-wow/dm-wow-scan.h"
#include "../dm-wow/dm-wow-tombs.h"

#include "json.h"
#include "wowcache.h"

#define IO_ALIGN	4096U
#define EPOCH_SHIFT	32	/* dm-wow.h WOW_EPOCH_SHIFT */
#define MAX_SLOTS	(UINT32_MAX - 1)	/* dm-wow.h WOW_MAX_SLOTS */

static uint64_t epoch(uint64_t seq)
{
	return seq >> EPOCH_SHIFT;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void seterr(char *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err, WOWC_ERR_LEN, fmt, ap);
	va_end(ap);
}

/* ---- problems ---- */

static __attribute__((format(printf, 3, 4)))
void problem(struct wowc_problems *ps, enum wowc_sev sev, const char *fmt, ...)
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

static void problems_free(struct wowc_problems *ps)
{
	size_t i;

	for (i = 0; i < ps->nr; i++)
		free(ps->p[i].msg);
	free(ps->p);
	memset(ps, 0, sizeof(*ps));
}

static int worst(const struct wowc_problems *ps)
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
	int w = worst(&c->probs);

	if (v && worst(&v->probs) > w)
		w = worst(&v->probs);
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

static void *xalloc(size_t n)
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
static int rd(const struct wowc *c, void *buf, size_t len, uint64_t off)
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
	b = xalloc(e - a);
	if (!b)
		return -ENOMEM;
	r = pread_full(c->fd, b, e - a, a, off + len - a);
	if (!r)
		memcpy(buf, (char *)b + (off - a), len);
	free(b);
	return r;
}

static int dev_size(int fd, uint64_t *size)
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
static int open_dev(const char *path, int mode, bool *direct, char *err)
{
	struct stat st;
	int fd;

	*direct = false;
	if (stat(path, &st)) {
		seterr(err, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISBLK(st.st_mode)) {
		fd = open(path, mode | O_CLOEXEC);
		if (fd < 0)
			seterr(err, "%s: %s", path, strerror(errno));
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
		seterr(err, "%s: in use (a device-mapper table or a mount holds it); remove the wow device first", path);
	else
		seterr(err, "%s: %s", path, strerror(errno));
	return -errno;
}

/* ---- superblock, health block, checkpoint header ---- */

static bool pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

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
	if (c->nr_slots > MAX_SLOTS) {
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
static uint64_t ckpt_room(const struct wowc *c)
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

	return rd(c, buf, (size_t)n * c->bs, ckpt_sector_off(c, block));
}

/* A reader of checkpoint area c->ckpt_area (no memory for a load yet). */
static void ckpt_reader(struct wowc *c, struct wow_ckpt_reader *rdr)
{
	*rdr = (struct wow_ckpt_reader) {
		.version = c->sb.version,
		.block_size = c->bs,
		.blocks_per_seg = c->bps,
		.uuid = c->sb.uuid,
		.nr_slots = c->nr_slots,
		.nr_segments = c->nr_segments,
		.max_tombs = ckpt_room(c),
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

	ckpt_reader(c, &rdr);
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
	if (c->ckpt.state == WOWC_CKPT_VALID &&
	    (a0.state != WOWC_CKPT_VALID ||
	     c->ckpt.generation > a0.generation)) {
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
		problem(&c->probs, WOWC_SEV_INFO,
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
		seterr(err, "out of memory");
		return -ENOMEM;
	}
	c->path = strdup(path);
	c->fd = open_dev(path, O_RDONLY, &c->direct, err);
	if (c->fd < 0) {
		r = c->fd;
		goto fail;
	}
	r = dev_size(c->fd, &c->size);
	if (r) {
		seterr(err, "%s: cannot size: %s", path, strerror(-r));
		goto fail;
	}
	if (c->size < WOW_SB_CSUM_BYTES) {
		seterr(err, "%s: too small to hold a superblock", path);
		r = -EINVAL;
		goto fail;
	}
	len = min64(c->size, IO_ALIGN);
	/* two blocks: a checkpoint header and its closing copy */
	buf = xalloc(2 * WOW_MAX_BLOCK_SIZE);
	if (!buf) {
		r = -ENOMEM;
		seterr(err, "out of memory");
		goto fail;
	}
	r = rd(c, buf, len, 0);
	if (r) {
		seterr(err, "%s: cannot read the superblock: %s", path,
		       strerror(-r));
		goto fail;
	}
	sb_decode(c, buf, len);
	if (c->sb_kind != WOWC_SB_VALID) {
		problem(&c->probs, WOWC_SEV_ERROR, "%s", c->sb_why);
		goto out;
	}
	if (c->size < c->sb.cache_sectors * 512) {
		problem(&c->probs, WOWC_SEV_ERROR,
			"the device (%" PRIu64 " bytes) is smaller than when it was formatted (%" PRIu64 " bytes): the kernel refuses it",
			c->size, c->sb.cache_sectors * 512);
		c->sb_kind = WOWC_SB_CORRUPT;
		c->sb_why = "the device is smaller than the superblock says";
		goto out;
	}
	r = rd(c, buf, c->bs, c->bs);
	if (r) {
		seterr(err, "%s: cannot read the health block: %s", path,
		       strerror(-r));
		goto fail;
	}
	health_decode(c, buf);
	if (c->health.needs_check)
		problem(&c->probs, WOWC_SEV_WARN,
			"needs_check: the cache device failed before (%s, at %" PRIu64 " s since 1970); the kernel loads it in cleaner mode",
			c->health.what, c->health.time);
	if (c->sb.version >= 2) {
		r = ckpt_pick(c, buf);
		if (r) {
			seterr(err, "%s: cannot read a checkpoint header: %s",
			       path, strerror(-r));
			goto fail;
		}
		if (c->ckpt.state == WOWC_CKPT_TORN && c->ckpt.closing_bad)
			problem(&c->probs, WOWC_SEV_WARN,
				"checkpoint %" PRIu64 ": its closing copy of the header is missing or differs (the write was cut short); the kernel scans the log",
				c->ckpt.generation);
		else if (c->ckpt.state == WOWC_CKPT_TORN)
			problem(&c->probs, WOWC_SEV_WARN,
				"checkpoint header: ours, but its checksum or version fails (torn?); the kernel scans the log");
		else if (c->ckpt.state == WOWC_CKPT_MISFIT)
			problem(&c->probs, WOWC_SEV_ERROR,
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
	problems_free(&c->probs);
	free(c);
}

/* ---- the index (dm-wow-index.c): oblock -> slot, chained by hash ---- */

static uint32_t hash_ob(const struct wowc_view *v, uint64_t ob)
{
	return v->hash_bits ?
	       (uint32_t)((ob * 0x61c8864680b583ebULL) >> (64 - v->hash_bits)) :
	       0;
}

uint32_t wowc_lookup(const struct wowc_view *v, uint64_t ob)
{
	uint32_t s = v->heads[hash_ob(v, ob)];

	while (s != WOWC_NO_SLOT) {
		if ((v->slot[s] & WOWC_SLOT_OBLOCK) == ob)
			return s;
		s = v->next[s];
	}
	return WOWC_NO_SLOT;
}

static void ix_remove(struct wowc_view *v, uint32_t slot)
{
	uint32_t *p = &v->heads[hash_ob(v, v->slot[slot] & WOWC_SLOT_OBLOCK)];

	if (!(v->slot[slot] & WOWC_SLOT_VALID))
		return;
	while (*p != slot) {
		if (*p == WOWC_NO_SLOT)
			return;
		p = &v->next[*p];
	}
	*p = v->next[slot];
	v->next[slot] = WOWC_NO_SLOT;
	v->slot[slot] &= ~(WOWC_SLOT_VALID | WOWC_SLOT_DIRTY);
}

/* wow_index_insert */
static void ix_insert(struct wowc_view *v, uint64_t ob, uint32_t slot,
		      bool dirty)
{
	uint32_t old = wowc_lookup(v, ob), *head;
	uint64_t flags = WOWC_SLOT_VALID | (dirty ? WOWC_SLOT_DIRTY : 0);

	if (old == slot) {
		v->slot[slot] = ob | flags;
		return;
	}
	if (old != WOWC_NO_SLOT)
		ix_remove(v, old);
	if (v->slot[slot] & WOWC_SLOT_VALID)
		ix_remove(v, slot);
	head = &v->heads[hash_ob(v, ob)];
	v->slot[slot] = ob | flags;
	v->next[slot] = *head;
	*head = slot;
}

static int ix_init(struct wowc_view *v, uint64_t nr_slots)
{
	uint64_t nb, i;

	/* as dm-wow-index.c: at most half as many heads as slots */
	v->hash_bits = 0;
	while ((2ULL << v->hash_bits) <= nr_slots / 2 && v->hash_bits < 31)
		v->hash_bits++;
	nb = 1ULL << v->hash_bits;
	v->slot = calloc(nr_slots ? nr_slots : 1, sizeof(*v->slot));
	v->slot_seq = calloc(nr_slots ? nr_slots : 1, sizeof(*v->slot_seq));
	v->next = malloc((nr_slots ? nr_slots : 1) * sizeof(*v->next));
	v->heads = malloc(nb * sizeof(*v->heads));
	if (!v->slot || !v->slot_seq || !v->next || !v->heads)
		return -ENOMEM;
	for (i = 0; i < nr_slots; i++)
		v->next[i] = WOWC_NO_SLOT;
	for (i = 0; i < nb; i++)
		v->heads[i] = WOWC_NO_SLOT;
	return 0;
}

/*
 * ---- the log scan: the kernel's own (dm-wow-scan.c) decides; here its
 * reads and what it does to the view ----
 */

struct scan {
	struct wowc *c;
	struct wowc_view *v;
	uint8_t *buf;		/* one segment */
	uint32_t buf_seg;	/* which, UINT32_MAX: none */
	bool buf_whole;		/* all of it, else block 0 only */
	int io_err;
};

static uint64_t seg_offset(const struct wowc *c, uint64_t s)
{
	return c->sb.first_segment_sector * 512 +
	       s * (uint64_t)c->sb.erase_block_size;
}

/* Block @off of segment @s; block 0 alone is read first (a probe). */
static const uint8_t *blk(struct scan *sc, uint32_t s, uint32_t off)
{
	const struct wowc *c = sc->c;
	int r;

	if (sc->buf_seg != s || (!sc->buf_whole && off)) {
		sc->buf_seg = UINT32_MAX;
		r = rd(c, sc->buf, off ? (size_t)c->bps * c->bs : c->bs,
		       seg_offset(c, s));
		if (r) {
			sc->io_err = r;
			return NULL;
		}
		sc->buf_seg = s;
		sc->buf_whole = off != 0;
	}
	return sc->buf + (size_t)off * c->bs;
}

/*
 * wow_record_judge: the kernel's verdict, and in *@why (when @why) what
 * is wrong with a bad header; @ri is zero for a foreign one
 */
static enum wow_rec_kind rec_check(const struct wowc *c, const uint8_t *hdr,
				   struct wow_record_info *ri,
				   const char **why)
{
	memset(ri, 0, sizeof(*ri));
	if (why)
		*why = NULL;
	return wow_record_judge(hdr, c->bs, c->sb.uuid, ri, why);
}

static int grow(void **p, size_t *max, size_t want, size_t size)
{
	size_t n = *max ? *max : 8;
	void *q;

	if (want <= *max)
		return 0;
	while (n < want)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*max = n;
	return 0;
}

static int seg_add_tomb(struct wowc_seg *seg, const struct wow_tomb_range *t,
			uint32_t at)
{
	size_t max = seg->max_tombs;

	if (grow((void **)&seg->tombs, &max, (size_t)at + 1,
		 sizeof(*seg->tombs)))
		return -ENOMEM;
	seg->max_tombs = max;
	seg->tombs[at] = *t;
	return 0;
}

static int add_rec(struct wowc_seg *seg, const struct wow_record_info *ri,
		   uint32_t block, enum wowc_rec_status st, const char *why)
{
	size_t max = seg->max_recs;
	struct wowc_rec *r;

	if (grow((void **)&seg->recs, &max, (size_t)seg->nr_recs + 1,
		 sizeof(*seg->recs)))
		return -ENOMEM;
	seg->max_recs = max;
	r = &seg->recs[seg->nr_recs++];
	r->seq = ri->seq;
	r->seg_seq = ri->seg_seq;
	r->durable_seq = ri->durable_seq;
	r->block = block;
	r->nr_data = ri->nr_data;
	r->nr_tombs = ri->nr_tombs;
	r->next_seg = ri->next_seg;
	r->status = st;
	r->why = why;
	return 0;
}

static int add_lost(struct wowc_view *v, uint64_t ob, uint64_t seq)
{
	if (grow((void **)&v->lost, &v->max_lost, v->nr_lost + 1,
		 sizeof(*v->lost)))
		return -ENOMEM;
	v->lost[v->nr_lost].oblock = ob;
	v->lost[v->nr_lost++].seq = seq;
	return 0;
}

/*
 * The data of the record whose header is @hdr, at @d: with WOW_REC_CRCS
 * each block against its crc (data_csum is theirs, checked with the
 * header), else data_csum, crc32c(~0, data blocks).
 */
static bool rec_data_ok(const struct wowc *c, const uint8_t *hdr,
			const uint8_t *d, uint32_t nr_data, uint32_t nr_tombs,
			uint32_t flags, uint32_t data_csum)
{
	const __le32 *crcs = wow_record_crcs((void *)hdr, nr_tombs, nr_data);
	uint32_t i;

	if (!(flags & WOW_REC_CRCS))
		return crc32c(~0U, d, (size_t)nr_data * c->bs) ==
		       data_csum;
	for (i = 0; i < nr_data; i++)
		if (wow_block_crc(d + (size_t)i * c->bs, c->bs) !=
		    le32toh(crcs[i]))
			return false;
	return true;
}

/* ---- the checkpoint's load: struct wow_ckpt_load_ops over the view ---- */

static int ckpt_load_seg(void *ctx, u64 s, const struct wow_ckpt_seg_info *si)
{
	struct wowc_seg *seg = &((struct wowc_view *)ctx)->segs[s];

	seg->seq = si->seq;
	seg->max_seq = si->max_seq;
	seg->wp = si->wp;
	return 0;
}

static int ckpt_load_tomb(void *ctx, u64 s, const struct wow_tomb_range *tr)
{
	struct wowc_seg *seg = &((struct wowc_view *)ctx)->segs[s];

	return seg_add_tomb(seg, tr, seg->nr_tombs++);
}

static int ckpt_load_slot(void *ctx, u64 slot, u64 ob, bool dirty, u32 crc,
			  bool has_crc)
{
	struct wowc_view *v = ctx;

	(void)crc;
	(void)has_crc;
	if (wowc_lookup(v, ob) != WOWC_NO_SLOT)
		return -EEXIST;
	ix_insert(v, ob, slot, dirty);
	return 0;
}

/* What the reader found wrong, in words: with its index, then its value. */
static const char *const ckpt_faults[] = {
	[WOW_CKPT_FAULT_STREAM_BLOCK] = "segment stream block %" PRIu64 " does not check",
	[WOW_CKPT_FAULT_STREAM_END] = "the segment stream ends before its entries",
	[WOW_CKPT_FAULT_SEG] = "segment %" PRIu64 "'s entry makes no sense",
	[WOW_CKPT_FAULT_TOMB_TOTAL] = "the segments hold %" PRIu64 " tombstones, the header says %" PRIu64,
	[WOW_CKPT_FAULT_TOMB] = "a tombstone of segment %" PRIu64 " makes no sense",
	[WOW_CKPT_FAULT_SLOT_BLOCK] = "slot table block %" PRIu64 " does not check",
	[WOW_CKPT_FAULT_SLOT] = "slot %" PRIu64 "'s entry is malformed",
	[WOW_CKPT_FAULT_SLOT_PLACE] = "slot %" PRIu64 " (origin block %" PRIu64 ") makes no sense",
};

/*
 * Load the valid checkpoint into @v with the kernel's reader: 0, or a
 * reason in @why (the kernel then forgets it and scans the log), or
 * -errno.
 */
static int ckpt_load(struct wowc *c, struct wowc_view *v, char *why,
		     size_t whylen)
{
	const struct wowc_ckpt *k = &c->ckpt;
	const struct wow_ckpt_load_ops ops = {
		.load_seg = ckpt_load_seg,
		.load_tomb = ckpt_load_tomb,
		.load_slot = ckpt_load_slot,
		.ctx = v,
	};
	const struct wow_ckpt_info ci = {
		.valid = true,
		.generation = k->generation,
		.next_seq = k->next_seq,
		.completed_seq = k->completed_seq,
		.nr_slots = k->nr_slots,
		.nr_segments = k->nr_segments,
		.slot_blocks = k->slot_blocks,
		.seg_blocks = k->seg_blocks,
		.nr_tombs = k->nr_tombs,
	};
	struct wow_ckpt_reader rdr;
	int r = -ENOMEM;

	ckpt_reader(c, &rdr);
	/*
	 * one window for the whole stream, then the whole slot table: every
	 * block checked before an entry is read, so the first fault named is
	 * the one it always was
	 */
	rdr.win_blocks = max64(k->seg_blocks, k->slot_blocks);
	rdr.win[0] = xalloc((size_t)rdr.win_blocks * c->bs);
	rdr.csums = calloc(k->slot_blocks ? k->slot_blocks : 1,
			   sizeof(*rdr.csums));
	rdr.segs = calloc(c->nr_segments ? c->nr_segments : 1,
			  sizeof(*rdr.segs));
	if (rdr.win[0] && rdr.csums && rdr.segs)
		r = wow_ckptread_load(&rdr, &ci, &ops);
	if (r == -EUCLEAN) {
		snprintf(why, whylen, ckpt_faults[rdr.fault] ?: "it does not check",
			 rdr.fault_index, rdr.fault_value);
		r = 1;
	}
	free(rdr.win[0]);
	free(rdr.csums);
	free(rdr.segs);
	return r;
}

/*
 * The view's side of the kernel's ops that the scan and the replay both
 * take (struct wow_scan_ops, struct wow_replay_ops): one body each.
 */
static bool view_lookup(struct wowc_view *v, u64 b, u32 *slot)
{
	*slot = wowc_lookup(v, b);
	return *slot != WOWC_NO_SLOT;
}

static bool view_valid(struct wowc_view *v, u32 slot, u64 *b)
{
	*b = v->slot[slot] & WOWC_SLOT_OBLOCK;
	return v->slot[slot] & WOWC_SLOT_VALID;
}

static int view_reserve_tombs(struct wowc_view *v, u32 s, u32 n)
{
	struct wowc_seg *seg = &v->segs[s];
	size_t max = seg->max_tombs;

	if (grow((void **)&seg->tombs, &max, (size_t)seg->nr_tombs + n,
		 sizeof(*seg->tombs)))
		return -ENOMEM;
	seg->max_tombs = max;
	return 0;
}

/* ---- the replay after a checkpoint (dm-wow-recover.c replay_*) ---- */

/*
 * The checkpoint is a base: written periodically, at a clean shutdown and
 * at the end of every load, its header names the log head (head_seg,
 * head_wp, next_seg, next_seq).  What was logged after it is replayed
 * along the log's chain: record after record, seq one more each time, in
 * the head segment from head_wp on, and where a segment's records end, at
 * block 0 of the segment the last record (or the header, before any
 * record) names as next.
 */
struct replay {
	struct scan sc;		/* the buffer; sc.v the view */
	struct wow_replay core;	/* what a record does: dm-wow-replay.c */
	uint8_t *hdr;		/* a copy of the record being applied */
	bool past_end;		/* a record named a block past the origin */
};

/* struct wow_replay_ops over the view */
static bool rops_lookup(void *ctx, u64 b, u32 *slot)
{
	return view_lookup(((struct replay *)ctx)->sc.v, b, slot);
}

static bool rops_valid(void *ctx, u32 slot, u64 *b)
{
	return view_valid(((struct replay *)ctx)->sc.v, slot, b);
}

static void rops_insert(void *ctx, u64 b, u32 slot)
{
	struct replay *rp = ctx;

	ix_insert(rp->sc.v, b, slot, true);
}

static void rops_remove(void *ctx, u32 slot)
{
	struct replay *rp = ctx;

	ix_remove(rp->sc.v, slot);
}

static void rops_clean(void *ctx, u32 slot)
{
	struct replay *rp = ctx;

	rp->sc.v->slot[slot] &= ~WOWC_SLOT_DIRTY;
}

static u64 rops_seq(void *ctx, u32 slot)
{
	struct replay *rp = ctx;

	return rp->sc.v->slot_seq[slot];
}

/* a copy's seq is known from here on: no cover of it is uncertain */
static int rops_set_seq(void *ctx, u32 slot, u64 seq)
{
	struct replay *rp = ctx;

	rp->sc.v->slot_seq[slot] = seq;
	rp->sc.v->uncertain[slot] = 0;
	return 0;
}

static u64 rops_ckpt_max(void *ctx, u32 s)
{
	struct replay *rp = ctx;
	const struct wowc_seg *seg = &rp->sc.v->segs[s];

	return seg->seq ? seg->max_seq : 0;
}

static void rops_new_life(void *ctx, u32 s, u64 seq)
{
	struct replay *rp = ctx;
	struct wowc_seg *seg = &rp->sc.v->segs[s];

	seg->seq = seq;
	seg->max_seq = 0;
	seg->wp = 0;
	seg->nr_tombs = 0;
}

static int rops_reserve_tombs(void *ctx, u32 s, u32 n)
{
	return view_reserve_tombs(((struct replay *)ctx)->sc.v, s, n);
}

static void rops_add_tomb(void *ctx, u32 s, const struct wow_tomb_range *t)
{
	struct replay *rp = ctx;
	struct wowc_seg *seg = &rp->sc.v->segs[s];

	seg->tombs[seg->nr_tombs++] = *t;
}

static void rops_written(void *ctx, u32 s, u64 seq, u32 wp)
{
	struct replay *rp = ctx;
	struct wowc_seg *seg = &rp->sc.v->segs[s];

	seg->max_seq = seq;
	seg->wp = wp;
}

/*
 * A checkpointed copy is covered only when t reaches its life's newest
 * seq.  When t lies within that life (t >= its first seq), the copy may
 * or may not be older than t: the kernel keeps it (dirty, or valid);
 * noted in v->uncertain for check's comparison with the scan.
 */
static void rops_uncovered(void *ctx, u32 slot, const struct wow_tomb_range *t)
{
	struct replay *rp = ctx;
	struct wowc_view *v = rp->sc.v;
	bool clean = t->flags & WOW_TOMB_CLEAN;

	if (t->t >= v->segs[slot / rp->sc.c->bps].seq &&
	    (!clean || (v->slot[slot] & WOWC_SLOT_DIRTY)))
		v->uncertain[slot] |= clean ? WOWC_UNSURE_CLEAN :
					      WOWC_UNSURE_KILL;
}

static const struct wow_replay_ops replay_effects = {
	.lookup = rops_lookup,
	.valid = rops_valid,
	.insert = rops_insert,
	.remove = rops_remove,
	.clean = rops_clean,
	.seq = rops_seq,
	.set_seq = rops_set_seq,
	.ckpt_max = rops_ckpt_max,
	.new_life = rops_new_life,
	.reserve_tombs = rops_reserve_tombs,
	.add_tomb = rops_add_tomb,
	.written = rops_written,
	.uncovered = rops_uncovered,
};

/*
 * The chain's decisions, and what each record does, are the module's own
 * (dm-wow-chain.c, dm-wow-replay.c, built here too); these callbacks read
 * through the scan's buffer, and the ops above apply to the view, as
 * dm-wow-recover.c's do to the cache.
 */
static int chain_header(void *ctx, uint32_t s, uint32_t off, bool probe,
			enum wow_rec_kind *kind, struct wow_record_info *wi)
{
	struct replay *rp = ctx;
	const uint8_t *p = blk(&rp->sc, s, off);

	(void)probe;
	if (!p)
		return rp->sc.io_err;
	*kind = rec_check(rp->sc.c, p, wi, NULL);
	return 0;
}

/* The record's data checks; its header is kept for chain_apply. */
static int chain_data(void *ctx, uint32_t s, uint32_t off,
		      const struct wow_record_info *wi)
{
	struct replay *rp = ctx;
	const struct wowc *c = rp->sc.c;
	const uint8_t *p = blk(&rp->sc, s, off);

	if (!p)
		return rp->sc.io_err;
	memcpy(rp->hdr, p, c->bs);
	if (!wi->nr_data)
		return wi->data_csum == ~0U;
	p = blk(&rp->sc, s, off + 1);
	if (!p)
		return rp->sc.io_err;
	return rec_data_ok(c, rp->hdr, p, wi->nr_data, wi->nr_tombs,
			   wi->flags, wi->data_csum);
}

static int chain_apply(void *ctx, uint32_t s, uint32_t off,
		       const struct wow_record_info *ri)
{
	struct replay *rp = ctx;
	const struct wowc *c = rp->sc.c;
	struct wowc_view *v = rp->sc.v;
	int r;

	r = wow_replay_apply(&rp->core, s, off, rp->hdr, ri);
	if (r == -EUCLEAN) {
		v->refused = true;
		rp->past_end = true;
		problem(&v->probs, WOWC_SEV_ERROR,
			"log record %" PRIu64 " (segment %u, block %u), replayed after checkpoint %" PRIu64 ", names an origin block past the origin's end: the kernel refuses to load this cache",
			(uint64_t)ri->seq, s, off, c->ckpt.generation);
	}
	return r;
}

static const struct wow_chain_ops chain_ops = {
	.header = chain_header,
	.data = chain_data,
	.apply = chain_apply,
};

/*
 * replay_log: after the checkpoint was loaded into @v, the log written
 * since it, along its chain.  0, 1 when the kernel would refuse the load,
 * or -errno.
 */
static int replay_log(struct wowc *c, struct wowc_view *v)
{
	struct replay rp = {
		.sc = { .c = c, .v = v, .buf_seg = UINT32_MAX },
		.core = {
			.nr_segments = c->nr_segments, .blocks_per_seg = c->bps,
			.nr_slots = c->nr_slots, .nr_oblocks = c->nr_oblocks,
			.ops = &replay_effects,
		},
	};
	struct wow_chain ch = {
		.nr_segments = c->nr_segments, .blocks_per_seg = c->bps,
		.head_seg = c->ckpt.head_seg, .head_wp = c->ckpt.head_wp,
		.next_seg = c->ckpt.next_seg, .next_seq = c->ckpt.next_seq,
	};
	int r = -ENOMEM;

	rp.core.ctx = &rp;
	rp.sc.buf = xalloc((size_t)c->bps * c->bs);
	rp.hdr = malloc(c->bs);
	if (!rp.sc.buf || !rp.hdr || wow_replay_init(&rp.core))
		goto out;
	if (ch.head_seg < c->nr_segments)
		ch.head_life = v->segs[ch.head_seg].seq;
	r = wow_chain_replay(&ch, &chain_ops, &rp);
	v->replay_end = (uint64_t)ch.expected;
	v->nr_replayed += ch.records;
	if (r == -EUCLEAN && !rp.past_end) {
		v->refused = true;
		problem(&v->probs, WOWC_SEV_ERROR,
			"log record %" PRIu64 " was durable (record %" PRIu64 " at segment %u, block %u says so) but is corrupt or missing where the chain after checkpoint %" PRIu64 " goes on: the kernel refuses to load this cache",
			(uint64_t)ch.expected, (uint64_t)ch.vouched_by,
			ch.vouched_seg, ch.vouched_off, c->ckpt.generation);
	}
	if (r == -EUCLEAN)
		r = 1;
out:
	free(rp.sc.buf);
	free(rp.hdr);
	wow_replay_free(&rp.core);
	return r;
}

/* ---- building a view ---- */

static void view_reset(struct wowc_view *v)
{
	uint64_t s;

	if (v->segs)
		for (s = 0; s < v->c->nr_segments; s++) {
			free(v->segs[s].tombs);
			free(v->segs[s].recs);
		}
	free(v->segs);
	free(v->slot);
	free(v->slot_seq);
	free(v->uncertain);
	v->uncertain = NULL;
	free(v->next);
	free(v->heads);
	free(v->corrupt);
	free(v->claims);
	free(v->lost);
	free(v->kenv);
	free(v->cenv);
	v->segs = NULL;
	v->slot = v->slot_seq = NULL;
	v->next = v->heads = NULL;
	v->corrupt = NULL;
	v->claims = NULL;
	v->lost = NULL;
	v->kenv = v->cenv = NULL;
	v->nr_corrupt = 0;
	v->nr_lost = v->max_lost = 0;
	v->nr_kenv = v->nr_cenv = 0;
	v->valid_blocks = v->dirty_blocks = 0;
	v->nr_records = v->nr_dropped = v->max_seq = v->max_seen = 0;
	v->refused = false;
	v->nr_replayed = v->replay_end = 0;
}

static int view_alloc(struct wowc_view *v)
{
	v->segs = calloc(v->c->nr_segments, sizeof(*v->segs));
	v->uncertain = calloc(v->c->nr_slots ? v->c->nr_slots : 1, 1);
	if (!v->segs || !v->uncertain)
		return -ENOMEM;
	return ix_init(v, v->c->nr_slots);
}

/* struct wow_scan_ops over the image and the view */
static int scan_read(void *ctx, u32 s, u32 off, u32 n, bool probe, void **p)
{
	struct scan *sc = ctx;

	(void)probe;	/* blk reads block 0 alone, the rest whole */
	if (!blk(sc, s, off + n - 1))
		return sc->io_err;
	*p = sc->buf + (size_t)off * sc->c->bs;
	return 0;
}

static int scan_reserve_tombs(void *ctx, u32 s, u32 n)
{
	return view_reserve_tombs(((struct scan *)ctx)->v, s, n);
}

static void scan_add_tombs(void *ctx, u32 s, const struct wow_tomb_range *t,
			   u32 n)
{
	struct scan *sc = ctx;
	struct wowc_seg *seg = &sc->v->segs[s];

	memcpy(seg->tombs + seg->nr_tombs, t, n * sizeof(*t));
	seg->nr_tombs += n;
}

static const struct wow_tomb_range *scan_tombs(void *ctx, u32 s, u32 *n)
{
	struct scan *sc = ctx;

	*n = sc->v->segs[s].nr_tombs;
	return sc->v->segs[s].tombs;
}

static bool scan_lookup(void *ctx, u64 b, u32 *slot)
{
	return view_lookup(((struct scan *)ctx)->v, b, slot);
}

static void scan_place(void *ctx, u32 slot, u64 b, u64 seq, bool newest,
		       bool has_crc, u32 crc)
{
	struct scan *sc = ctx;
	struct wowc_view *v = sc->v;

	(void)has_crc;
	(void)crc;
	v->slot_seq[slot] = seq;
	if (!(v->slot[slot] & WOWC_SLOT_VALID))
		v->slot[slot] = b;
	if (newest)
		ix_insert(v, b, slot, true);
}

static bool scan_valid(void *ctx, u32 slot, u64 *b)
{
	return view_valid(((struct scan *)ctx)->v, slot, b);
}

static void scan_kill(void *ctx, u32 slot)
{
	struct scan *sc = ctx;

	ix_remove(sc->v, slot);
}

static void scan_clean(void *ctx, u32 slot)
{
	struct scan *sc = ctx;

	sc->v->slot[slot] &= ~WOWC_SLOT_DIRTY;
}

/* the kernel's messages as it says them while it scans; the rest after */
static void scan_note(void *ctx, const struct wow_scan_note *n)
{
	struct scan *sc = ctx;

	if (n->what == WOW_SCAN_DROPPED_FIRST && !n->seq)
		problem(&sc->v->probs, WOWC_SEV_WARN,
			"segment %u: dropped a torn or corrupt log record at block 0 (%s): the first of the segment, so all of its records (the kernel reports this at error level)",
			n->seg, n->why);
	else if (n->what == WOW_SCAN_BROKEN)
		problem(&sc->v->probs, WOWC_SEV_WARN,
			"segment %u: the log breaks at block %u and goes on at block %u (record %" PRIu64 "): the records between are lost",
			n->seg, n->off, n->at, (uint64_t)n->seq);
}

static int scan_record(void *ctx, u32 s, u32 off,
		       const struct wow_record_info *ri, enum wow_scan_rec st,
		       const char *why)
{
	static const enum wowc_rec_status status[] = {
		[WOW_SCAN_REC_TAKEN] = WOWC_REC_OK,
		[WOW_SCAN_REC_BAD] = WOWC_REC_BAD,
		[WOW_SCAN_REC_DROPPED] = WOWC_REC_DROPPED,
		[WOW_SCAN_REC_PROOF] = WOWC_REC_PROOF,
		[WOW_SCAN_REC_SALVAGED] = WOWC_REC_SALVAGED,
	};
	struct scan *sc = ctx;

	return add_rec(&sc->v->segs[s], ri, off, status[st], why) ? -ENOMEM :
								      0;
}

static int scan_lost(void *ctx, u64 b, u64 seq)
{
	struct scan *sc = ctx;

	return add_lost(sc->v, b, seq) ? -ENOMEM : 0;
}

static const struct wow_scan_ops scan_ops = {
	.read = scan_read,
	.reserve_tombs = scan_reserve_tombs,
	.add_tombs = scan_add_tombs,
	.tombs = scan_tombs,
	.lookup = scan_lookup,
	.place = scan_place,
	.valid = scan_valid,
	.kill = scan_kill,
	.clean = scan_clean,
	.note = scan_note,
	.record = scan_record,
	.lost = scan_lost,
};

/*
 * The scan's verdicts on the bad records (sorted by seq): a bad record
 * that a valid record of its epoch proves durable is corrupt (the load is
 * refused) unless dropping it loses nothing; any other is a torn tail.
 * Unlike the kernel, every suspect is judged (WOW_SCAN_JUDGE_ALL) and
 * reported, not just the first that refuses the load.
 */
static int report_suspects(struct wowc_view *v,
			   const struct wow_scan_suspect *sus, uint32_t n)
{
	uint32_t j;

	for (j = 0; j < n; j++) {
		const struct wow_scan_suspect *su = &sus[j];
		struct wowc_corrupt *co;

		if (!su->vouched) {
			problem(&v->probs, WOWC_SEV_WARN,
				"segment %u: dropped a torn or corrupt log record at block %u (record %" PRIu64 ": %s); nothing proves it durable, so it is a torn write that was never acknowledged",
				su->seg, su->block, (uint64_t)su->seq, su->what);
			continue;
		}
		if (su->start) {
			problem(&v->probs, WOWC_SEV_WARN,
				"segment %u: dropped a torn or corrupt log record at block %u (%s); record %" PRIu64 " is the first of another segment's life, so nothing is missing",
				su->seg, su->block, su->what, (uint64_t)su->seq);
			continue;
		}
		co = realloc(v->corrupt, (v->nr_corrupt + 1) * sizeof(*co));
		if (!co)
			return -ENOMEM;
		v->corrupt = co;
		co += v->nr_corrupt++;
		co->seq = su->seq;
		co->seg = su->seg;
		co->harmless = su->harmless;
		co->known = su->known;
		co->proof_seq = su->proof_seq;
		co->proof_seg = su->proof_seg;
		if (su->harmless) {
			problem(&v->probs, WOWC_SEV_WARN,
				"log record %" PRIu64 " (segment %u, block %u) was durable but is corrupt (%s); every block it held has a newer version: dropped",
				(uint64_t)su->seq, su->seg, su->block, su->what);
			continue;
		}
		if (!(v->flags & WOWC_SALVAGE))
			v->refused = true;
		problem(&v->probs, WOWC_SEV_ERROR,
			"log record %" PRIu64 " (segment %u, block %u) was durable (record %" PRIu64 " of segment %u says so) but is corrupt (%s): the kernel refuses to load this cache",
			(uint64_t)su->seq, su->seg, su->block,
			(uint64_t)su->proof_seq, su->proof_seg, su->what);
	}
	return 0;
}

/* An envelope of the scan's, copied into the view (*@n pieces). */
static struct wow_tomb_range *copy_env(const struct wow_tomb_range *e,
				       uint32_t n)
{
	struct wow_tomb_range *c = malloc(((size_t)n + 1) * sizeof(*c));

	if (c && n)
		memcpy(c, e, n * sizeof(*c));
	return c;
}

/* Rebuild the view from the whole log, as a load without a checkpoint. */
static int scan_log(struct wowc *c, struct wowc_view *v)
{
	struct scan sc = { .c = c, .v = v, .buf_seg = UINT32_MAX };
	struct wow_scan_geo g = {
		.uuid = c->sb.uuid,
		.nr_oblocks = c->nr_oblocks,
		.nr_segments = c->nr_segments,
		.blocks_per_seg = c->bps,
		.block_size = c->bs,
		.win_blocks = c->bps,
		.flags = WOW_SCAN_JUDGE_ALL |
			 (v->flags & WOWC_SALVAGE ? WOW_SCAN_SALVAGE : 0),
	};
	const struct wow_tomb_range *kenv, *cenv;
	const struct wow_scan_claim *cl;
	const struct wow_scan_totals *tot;
	const struct wow_scan_suspect *sus;
	struct wow_scan *ws = NULL;
	struct wow_scan_seg life;
	uint32_t nsus, nk, nc;
	uint64_t s;
	int r = -ENOMEM;

	sc.buf = xalloc((size_t)c->bps * c->bs);
	v->claims = calloc(c->nr_segments, sizeof(*v->claims));
	if (sc.buf && v->claims)
		ws = wow_scan_alloc(&g, &scan_ops, &sc);
	if (!ws)
		goto out;
	for (s = 0; s < c->nr_segments; s++) {
		r = wow_scan_segment(ws, s, &life);
		if (r)
			goto out;
		v->segs[s].seq = life.seq;
		v->segs[s].max_seq = life.max_seq;
		v->segs[s].wp = life.wp;
	}
	r = wow_scan_finish(ws);
	if (r)
		goto out;
	tot = wow_scan_totals(ws);
	v->nr_records = tot->records;
	v->nr_dropped = tot->dropped;
	v->max_seq = tot->max_seq;
	v->max_seen = tot->max_seen;
	cl = wow_scan_claims(ws);
	for (s = 0; s < c->nr_segments; s++) {
		v->claims[s].seq = cl[s].seq;
		v->claims[s].durable = cl[s].durable;
		v->claims[s].proof = cl[s].proof;
	}
	wow_scan_envelopes(ws, &kenv, &nk, &cenv, &nc);
	v->kenv = copy_env(kenv, nk);
	v->cenv = copy_env(cenv, nc);
	r = -ENOMEM;
	if (!v->kenv || !v->cenv)
		goto out;
	v->nr_kenv = nk;
	v->nr_cenv = nc;
	sus = wow_scan_suspects(ws, &nsus);
	r = report_suspects(v, sus, nsus);
out:
	wow_scan_free(ws);
	free(sc.buf);
	return r;
}

/* prune_tombs: drop what no record on the device can need */
static int prune_tombs(struct wowc *c, struct wowc_view *v)
{
	uint64_t min = UINT64_MAX, total = 0, s;
	struct wow_tomb_ref *refs;
	uint32_t i, n = 0;

	for (s = 0; s < c->nr_segments; s++) {
		total += v->segs[s].nr_tombs;
		if (v->segs[s].seq && v->segs[s].seq < min)
			min = v->segs[s].seq;
	}
	refs = malloc((total ? total : 1) * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	for (s = 0; s < c->nr_segments; s++)
		for (i = 0; i < v->segs[s].nr_tombs; i++) {
			refs[n].tr = &v->segs[s].tombs[i];
			refs[n++].seg_seq = v->segs[s].seq;
		}
	wow_tomb_prune(refs, n, min);
	free(refs);
	for (s = 0; s < c->nr_segments; s++) {
		struct wowc_seg *seg = &v->segs[s];
		uint32_t k = 0;

		for (i = 0; i < seg->nr_tombs; i++)
			if (!(seg->tombs[i].flags & WOW_TOMB_DROP))
				seg->tombs[k++] = seg->tombs[i];
		seg->nr_tombs = k;
	}
	return 0;
}

/* the rest of wow_log_recover: counts, next seq, segment states */
static int finish(struct wowc *c, struct wowc_view *v)
{
	uint64_t seen, s, e;
	int r;

	/* after a replay, the kernel knows of no seq past the chain's end */
	seen = v->source == WOWC_SRC_CKPT ? v->replay_end - 1 : v->max_seen;
	seen = max64(seen, c->sb.format_seq);
	e = epoch(seen) + 1;
	v->next_seq = e > epoch(UINT64_MAX) ? 0 : e << EPOCH_SHIFT;
	if (!v->next_seq) {
		v->refused = true;
		problem(&v->probs, WOWC_SEV_ERROR,
			"log sequence numbers exhausted: the kernel refuses to load this cache");
	}
	for (s = 0; s < c->nr_slots; s++) {
		struct wowc_seg *seg = &v->segs[s / c->bps];

		if (!(v->slot[s] & WOWC_SLOT_VALID))
			continue;
		seg->nr_valid++;
		v->valid_blocks++;
		if (v->slot[s] & WOWC_SLOT_DIRTY) {
			seg->nr_dirty++;
			v->dirty_blocks++;
		}
	}
	r = prune_tombs(c, v);
	if (r)
		return r;
	/*
	 * Every load ends with a checkpoint (write_checkpoint at the end of
	 * wow_log_recover); with more tombstones than the area holds that
	 * write fails (-ENOSPC), and the load retires the checkpoint on disk
	 * instead: it loads, but the next load scans the whole log.
	 */
	if (c->sb.version >= 2) {
		uint64_t tombs = 0;

		for (s = 0; s < c->nr_segments; s++)
			tombs += v->segs[s].nr_tombs;
		if (tombs > ckpt_room(c))
			problem(&v->probs, WOWC_SEV_WARN,
				"the segments hold %" PRIu64 " tombstones, more than a checkpoint has room for (%" PRIu64 "): a load retires the checkpoint and the next load scans the log",
				tombs, ckpt_room(c));
	}
	for (s = 0; s < c->nr_segments; s++) {
		struct wowc_seg *seg = &v->segs[s];

		seg->closed = seg->seq && (seg->nr_valid || seg->nr_tombs);
	}
	return 0;
}

int wowc_view_build(struct wowc *c, unsigned int flags, struct wowc_view *v,
		    char *err)
{
	char why[sizeof(c->ckpt.why)];
	int r;

	memset(v, 0, sizeof(*v));
	v->c = c;
	v->flags = flags;
	if (c->sb_kind != WOWC_SB_VALID) {
		seterr(err, "%s: %s", c->path, c->sb_why);
		return -EINVAL;
	}
	r = view_alloc(v);
	if (r)
		goto fail;
	if (!(flags & WOWC_SCAN) && c->ckpt.state == WOWC_CKPT_VALID) {
		v->source = WOWC_SRC_CKPT;
		r = ckpt_load(c, v, why, sizeof(why));
		if (r < 0)
			goto fail;
		if (!r) {
			r = replay_log(c, v);
			if (r < 0)
				goto fail;
			if (r && (flags & WOWC_SALVAGE)) {
				/*
				 * The kernel refuses the load.  Writeback takes
				 * what the whole log holds instead: the scan
				 * salvages past the bad record and names the
				 * versions lost (a block the checkpoint has
				 * clean is written again: harmless).
				 */
				problem(&v->probs, WOWC_SEV_INFO,
					"writing back what a scan of the whole log finds instead");
				view_reset(v);
				r = view_alloc(v);
				if (r)
					goto fail;
				goto scan;
			}
			r = finish(c, v);
			if (r)
				goto fail;
			return 0;
		}
		c->ckpt.state = WOWC_CKPT_BAD;
		snprintf(c->ckpt.why, sizeof(c->ckpt.why), "%s", why);
		problem(&v->probs, WOWC_SEV_ERROR,
			"checkpoint %" PRIu64 " does not check (%s); the kernel scans the log instead",
			c->ckpt.generation, why);
		view_reset(v);
		r = view_alloc(v);
		if (r)
			goto fail;
	}
scan:
	v->source = WOWC_SRC_LOG;
	r = scan_log(c, v);
	if (!r)
		r = finish(c, v);
	if (!r)
		return 0;
fail:
	seterr(err, "%s: %s", c->path, r == -ENOMEM ? "out of memory" :
	       r == -EFBIG ? "too many tombstones" : strerror(-r));
	wowc_view_free(v);
	return r;
}

void wowc_view_free(struct wowc_view *v)
{
	if (!v->c)
		return;
	view_reset(v);
	problems_free(&v->probs);
	v->c = NULL;
}

/* ---- output helpers ---- */

static void uuid_str(const uint8_t *u, char *out)
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

static const char *ckpt_state_name(enum wowc_ckpt_state s)
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

static void print_problems(FILE *f, const struct wowc_problems *ps)
{
	size_t i;

	for (i = 0; i < ps->nr; i++)
		fprintf(f, "%s: %s\n", sev_name(ps->p[i].sev), ps->p[i].msg);
}

/* each problem, an object on a line of its own */
static void json_problems(struct json *j, const struct wowc_problems *ps)
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

/* ---- check ---- */

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
	uint32_t i, j;

	/*
	 * Records past the end of the chain, with an intact header (taken by
	 * the scan, or dropped or read for its claim past a bad one): a
	 * load does not replay them.  One a later record proves durable is
	 * lost, whether the scan takes it or refuses the cache for it.
	 */
	for (s = 0; s < c->nr_segments; s++)
		for (j = 0; j < lg->segs[s].nr_recs; j++) {
			const struct wowc_rec *r = &lg->segs[s].recs[j];
			bool durable = false;

			if (r->status == WOWC_REC_BAD || r->seq < ck->replay_end ||
			    ck->refused)
				continue;
			if (r->status == WOWC_REC_OK)
				past++;
			past_newest = max64(past_newest, r->seq);
			for (i = 0; i < c->nr_segments && !durable; i++)
				durable = lg->claims[i].seq &&
					  epoch(lg->claims[i].seq) ==
					  epoch(r->seq) &&
					  lg->claims[i].durable >= r->seq;
			if (durable && !lost++)
				lost_seq = r->seq;
		}
	if (lost)
		problem(ps, WOWC_SEV_ERROR,
			"%" PRIu64 " log records proven durable (the first %" PRIu64 ") are past the end of the chain the kernel replays after checkpoint %" PRIu64 " (it stops at record %" PRIu64 " and loads): a load loses them",
			lost, lost_seq, c->ckpt.generation, ck->replay_end);
	else if (past)
		problem(ps, WOWC_SEV_WARN,
			"%" PRIu64 " intact log records (newest %" PRIu64 ") are past the end of the chain the kernel replays after checkpoint %" PRIu64 " (it stops at record %" PRIu64 "); none proven durable: a load drops them as a torn tail, a scan would take them",
			past, past_newest, c->ckpt.generation,
			ck->replay_end);

	for (s = 0; s < c->nr_slots; s++) {
		uint64_t a = ck->slot[s], b = lg->slot[s];
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
		uint64_t a = ck->slot[first], b = lg->slot[first];

		problem(ps, WOWC_SEV_WARN,
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
		problem(ps, WOWC_SEV_INFO,
			"%" PRIu64 " blocks clean in the checkpoint have no clean mark in the log (a load after a crash would destage them again)",
			hints);
	if (unsure)
		problem(ps, WOWC_SEV_INFO,
			"%" PRIu64 " checkpointed blocks a clean mark after the checkpoint may cover stay dirty in the replay (its t lies within their segment life; they are destaged again)",
			unsure);
	if (lg->refused && !ck->refused && !lost)
		problem(ps, WOWC_SEV_INFO,
			"the kernel loads the checkpoint and does not read what the scan refuses: the corrupt data is served from the cache as it is");
}

static void print_summary(FILE *out, const struct wowc *c)
{
	const struct wowc_sb *s = &c->sb;
	char u[40];

	uuid_str(s->uuid, u);
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
	fprintf(out, "checkpoint: %s", ckpt_state_name(c->ckpt.state));
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
		print_problems(out, &c->probs);
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
	print_problems(out, &c->probs);
	if (ck.c)
		print_problems(out, &ck.probs);
	print_problems(out, &lg.probs);
	print_problems(out, &ps);
	rc = wowc_exit_code(c, &lg);
	if (ck.c && wowc_exit_code(c, &ck) > rc)
		rc = wowc_exit_code(c, &ck);
	w = worst(&ps);
	if (w == WOWC_SEV_ERROR)
		rc = WOWC_EXIT_ERROR;
	else if (w == WOWC_SEV_WARN && rc < WOWC_EXIT_WARN)
		rc = WOWC_EXIT_WARN;
out:
	fprintf(out, "result: %s\n", rc == WOWC_EXIT_CLEAN ? "clean" :
		rc == WOWC_EXIT_WARN ? "warnings" : "errors");
	problems_free(&ps);
	wowc_view_free(&ck);
	wowc_view_free(&lg);
	wowc_close(c);
	return rc;
}

/* ---- dump ---- */

/* a segment number, or null for none (WOWC_NO_SEG) */
static void json_seg(struct json *j, uint32_t s)
{
	if (s == WOWC_NO_SEG)
		json_null(j);
	else
		json_u64(j, s);
}

/* "key": unsigned number */
static void json_kv(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}

static void json_sb(struct json *j, const struct wowc *c)
{
	const struct wowc_sb *s = &c->sb;
	char u[40];

	uuid_str(s->uuid, u);
	json_open(j, '{', -1);
	json_kv(j, "version", s->version);
	json_kv(j, "flags", s->flags);
	json_kv(j, "block_size", s->block_size);
	json_kv(j, "erase_block_size", s->erase_block_size);
	json_kv(j, "write_group_size", s->write_group_size);
	json_kv(j, "origin_sectors", s->origin_sectors);
	json_kv(j, "cache_sectors", s->cache_sectors);
	json_kv(j, "first_segment_sector", s->first_segment_sector);
	json_kv(j, "nr_segments", s->nr_segments);
	json_kv(j, "format_seq", s->format_seq);
	json_key(j, "uuid");
	json_str(j, u);
	json_key(j, "origin_id");
	json_str(j, s->origin_id);
	json_kv(j, "cache_blocks", c->nr_slots);
	json_close(j);
}

static void json_ckpt(struct json *j, const struct wowc_ckpt *k)
{
	json_open(j, '{', -1);
	json_key(j, "state");
	json_str(j, ckpt_state_name(k->state));
	if (k->state >= WOWC_CKPT_RETIRED) {
		json_kv(j, "generation", k->generation);
		json_key(j, "valid");
		json_bool(j, k->flags & WOW_CKPT_VALID);
		json_kv(j, "next_seq", k->next_seq);
		json_kv(j, "completed_seq", k->completed_seq);
		json_kv(j, "nr_slots", k->nr_slots);
		json_kv(j, "nr_segments", k->nr_segments);
		json_kv(j, "slot_blocks", k->slot_blocks);
		json_kv(j, "seg_blocks", k->seg_blocks);
		json_kv(j, "nr_tombs", k->nr_tombs);
	}
	if (k->state >= WOWC_CKPT_MISFIT) {
		json_key(j, "head_seg");
		json_seg(j, k->head_seg);
		json_kv(j, "head_wp", k->head_wp);
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
	json_kv(j, "segment", i);
	json_kv(j, "offset", seg_offset(c, i));
	json_kv(j, "seq", sg->seq);
	json_kv(j, "max_seq", sg->max_seq);
	json_kv(j, "wp", sg->wp);
	json_key(j, "state");
	json_str(j, sg->closed ? "closed" : "free");
	json_kv(j, "valid", sg->nr_valid);
	json_kv(j, "dirty", sg->nr_dirty);
	json_key(j, "tombs");
	json_open(j, '[', -1);
	for (n = 0; n < sg->nr_tombs; n++) {
		json_open(j, '{', -1);
		json_kv(j, "start", sg->tombs[n].start);
		json_kv(j, "nr", sg->tombs[n].nr);
		json_kv(j, "t", sg->tombs[n].t);
		json_close(j);
	}
	json_close(j);
	json_key(j, "records");
	json_open(j, '[', 6);
	for (n = 0; n < ls->nr_recs; n++) {
		const struct wowc_rec *r = &ls->recs[n];

		json_open(j, '{', -1);
		json_kv(j, "block", r->block);
		json_kv(j, "seq", r->seq);
		json_kv(j, "seg_seq", r->seg_seq);
		json_kv(j, "durable_seq", r->durable_seq);
		json_kv(j, "nr_data", r->nr_data);
		json_kv(j, "nr_tombs", r->nr_tombs);
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
	json_kv(j, "valid_blocks", v->valid_blocks);
	json_kv(j, "dirty_blocks", v->dirty_blocks);
	json_key(j, "blocks");
	json_open(j, '[', 4);
	for (i = 0; obs && i < c->nr_slots; i++)
		if (v->slot[i] & WOWC_SLOT_VALID)
			obs[n++] = v->slot[i] & WOWC_SLOT_OBLOCK;
	if (obs)
		qsort(obs, n, sizeof(*obs), cmp_u64);
	for (i = 0; i < n; i++) {
		uint32_t sl = wowc_lookup(v, obs[i]);

		json_open(j, '{', -1);
		json_kv(j, "oblock", obs[i]);
		json_kv(j, "slot", sl);
		json_key(j, "dirty");
		json_bool(j, v->slot[sl] & WOWC_SLOT_DIRTY);
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
	json_kv(&j, "size", c->size);
	json_key(&j, "superblock");
	json_sb(&j, c);
	json_key(&j, "health");
	json_open(&j, '{', -1);
	json_key(&j, "written");
	json_bool(&j, c->health.ours);
	json_key(&j, "needs_check");
	json_bool(&j, c->health.needs_check);
	json_kv(&j, "state", c->health.state);
	json_kv(&j, "time", c->health.time);
	json_key(&j, "what");
	json_str(&j, c->health.what);
	json_close(&j);
	json_key(&j, "checkpoint");
	json_ckpt(&j, &c->ckpt);
	json_key(&j, "source");
	json_str(&j, v->source == WOWC_SRC_CKPT ? "checkpoint" : "log");
	json_key(&j, "loads");
	json_bool(&j, !v->refused);
	json_kv(&j, "next_seq", v->next_seq);
	json_kv(&j, "replayed", v->nr_replayed);
	json_kv(&j, "records", lg->nr_records);
	json_kv(&j, "dropped", lg->nr_dropped);
	json_key(&j, "segments");
	json_open(&j, '[', 4);
	for (i = 0; i < c->nr_segments; i++)
		json_segment(&j, c, i, v, lg);
	json_close(&j);
	json_key(&j, "index");
	json_index(&j, c, v);
	json_key(&j, "problems");
	json_open(&j, '[', 4);
	json_problems(&j, &c->probs);
	json_problems(&j, &v->probs);
	if (lg != v)
		json_problems(&j, &lg->probs);
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
		json_problems(&j, &c->probs);
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

/* ---- writeback ---- */

struct wb_blk {
	uint64_t oblock;
	uint32_t slot;
};

static int cmp_wb(const void *a, const void *b)
{
	const struct wb_blk *x = a, *y = b;

	return x->oblock < y->oblock ? -1 : x->oblock > y->oblock;
}

static int cmp_lost(const void *a, const void *b)
{
	const struct wowc_lost *x = a, *y = b;

	if (x->oblock != y->oblock)
		return x->oblock < y->oblock ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pwrite(fd, (const char *)buf + done, len - done,
				   off + done);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += r;
	}
	return 0;
}

/*
 * Is a lost version (@l, in a bad record) one that was acknowledged, and
 * is it gone: not superseded by a recovered newer version, not killed,
 * not destaged (a clean mark covers it)?  Vouched: a claim of its epoch
 * covers its seq (a corrupt record, not a torn write).
 */
static bool lost_for_good(const struct wowc_view *v, const struct wowc_lost *l)
{
	const struct wow_tomb_range *e;
	uint32_t slot = wowc_lookup(v, l->oblock);
	bool vouched = false;
	uint64_t i;

	for (i = 0; i < v->c->nr_segments && !vouched; i++)
		vouched = v->claims[i].seq &&
			  epoch(v->claims[i].seq) == epoch(l->seq) &&
			  l->seq <= v->claims[i].durable;
	if (!vouched)
		return false;
	if (slot != WOWC_NO_SLOT && v->slot_seq[slot] > l->seq)
		return false;
	e = wow_tomb_find(v->kenv, v->nr_kenv, l->oblock);
	if (e && e->t >= l->seq)
		return false;
	e = wow_tomb_find(v->cenv, v->nr_cenv, l->oblock);
	if (e && e->t >= l->seq)
		return false;
	return true;
}

int wowc_writeback(const char *cache, const char *origin, unsigned int flags,
		   FILE *out, FILE *errf, struct wowc_wb_result *res)
{
	struct wowc_wb_result dummy;
	struct wowc_view v = { 0 };
	char err[WOWC_ERR_LEN];
	struct wb_blk *list = NULL;
	uint64_t *skip = NULL, nr_skip = 0, osize, i, n = 0;
	uint8_t *buf = NULL;
	struct wowc *c = NULL;
	bool odirect;
	int ofd = -1, rc, r;
	size_t max_run;

	if (!res)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	if (wowc_open(cache, &c, err)) {
		fprintf(errf, "wowctl: %s\n", err);
		return WOWC_EXIT_OPERR;
	}
	if (c->sb_kind != WOWC_SB_VALID) {
		print_problems(out, &c->probs);
		fprintf(errf, "wowctl: %s: cannot write back: %s\n", cache,
			c->sb_why);
		rc = WOWC_EXIT_ERROR;
		goto out;
	}
	ofd = open_dev(origin, (flags & WOWC_WB_DRY_RUN) ? O_RDONLY : O_WRONLY,
		       &odirect, err);
	if (ofd < 0) {
		fprintf(errf, "wowctl: %s\n", err);
		rc = WOWC_EXIT_OPERR;
		goto out;
	}
	r = dev_size(ofd, &osize);
	if (r) {
		fprintf(errf, "wowctl: %s: cannot size: %s\n", origin,
			strerror(-r));
		rc = WOWC_EXIT_OPERR;
		goto out;
	}
	if (osize != c->sb.origin_sectors * 512 && !(flags & WOWC_WB_FORCE)) {
		fprintf(errf, "wowctl: %s is %" PRIu64 " bytes, the cache's origin %" PRIu64 " bytes; not writing (--force to write all the same)\n",
			origin, osize, c->sb.origin_sectors * 512);
		rc = WOWC_EXIT_OPERR;
		goto out;
	}
	if (osize < c->sb.origin_sectors * 512 && !(flags & WOWC_WB_DRY_RUN)) {
		fprintf(errf, "wowctl: %s is smaller than the cache's origin; blocks past its end fail\n",
			origin);
	}
	if (wowc_view_build(c, WOWC_SALVAGE | (flags & WOWC_SCAN), &v, err)) {
		fprintf(errf, "wowctl: %s\n", err);
		rc = WOWC_EXIT_OPERR;
		goto out;
	}
	print_problems(out, &c->probs);
	print_problems(out, &v.probs);

	/* versions lost for good: their blocks are not written (older copies) */
	qsort(v.lost, v.nr_lost, sizeof(*v.lost), cmp_lost);
	skip = malloc((v.nr_lost + 1) * sizeof(*skip));
	list = malloc((v.dirty_blocks + 1) * sizeof(*list));
	max_run = (1U << 20) / c->bs;
	buf = xalloc(max_run * c->bs);
	if (!skip || !list || !buf) {
		fprintf(errf, "wowctl: out of memory\n");
		rc = WOWC_EXIT_OPERR;
		goto out;
	}
	for (i = 0; i < v.nr_lost; i++)
		if (lost_for_good(&v, &v.lost[i]) &&
		    (!nr_skip || skip[nr_skip - 1] != v.lost[i].oblock)) {
			skip[nr_skip++] = v.lost[i].oblock;
			fprintf(out, "lost: origin block %" PRIu64 ": its newest version (record %" PRIu64 ") is corrupt; not written, the origin keeps what it has\n",
				v.lost[i].oblock, v.lost[i].seq);
		}
	res->unrecoverable = nr_skip;
	for (i = 0; i < v.nr_corrupt; i++)
		if (!v.corrupt[i].known && !v.corrupt[i].harmless) {
			res->unknown++;
			fprintf(out, "lost: record %" PRIu64 " of segment %u is corrupt and its origin blocks are unknown\n",
				v.corrupt[i].seq, v.corrupt[i].seg);
		}

	for (i = 0; i < c->nr_slots; i++)
		if ((v.slot[i] & (WOWC_SLOT_VALID | WOWC_SLOT_DIRTY)) ==
		    (WOWC_SLOT_VALID | WOWC_SLOT_DIRTY)) {
			list[n].oblock = v.slot[i] & WOWC_SLOT_OBLOCK;
			list[n++].slot = i;
		}
	res->dirty = n;
	qsort(list, n, sizeof(*list), cmp_wb);
	rc = WOWC_EXIT_CLEAN;
	for (i = 0; i < n; ) {
		uint64_t run = 1, base = c->sb.first_segment_sector * 512;

		if (bsearch(&list[i].oblock, skip, nr_skip, sizeof(*skip),
			    cmp_u64)) {
			i++;
			continue;
		}
		while (i + run < n && run < max_run &&
		       list[i + run].oblock == list[i].oblock + run &&
		       list[i + run].slot == list[i].slot + run &&
		       !bsearch(&list[i + run].oblock, skip, nr_skip,
				sizeof(*skip), cmp_u64))
			run++;
		if (!(flags & WOWC_WB_DRY_RUN)) {
			r = rd(c, buf, run * c->bs,
			       base + (uint64_t)list[i].slot * c->bs);
			if (r) {
				fprintf(errf, "wowctl: %s: cannot read cache slot %u: %s\n",
					cache, list[i].slot, strerror(-r));
				rc = WOWC_EXIT_OPERR;
				goto out;
			}
			r = pwrite_full(ofd, buf, run * c->bs,
					list[i].oblock * c->bs);
			if (r) {
				fprintf(errf, "wowctl: %s: cannot write origin block %" PRIu64 ": %s\n",
					origin, list[i].oblock, strerror(-r));
				rc = WOWC_EXIT_OPERR;
				goto out;
			}
		}
		res->written += run;
		i += run;
	}
	if (!(flags & WOWC_WB_DRY_RUN) && fsync(ofd)) {
		fprintf(errf, "wowctl: %s: fsync: %s\n", origin,
			strerror(errno));
		rc = WOWC_EXIT_OPERR;
		goto out;
	}
	fprintf(out, "writeback (from the %s%s): %" PRIu64 " dirty blocks of %" PRIu64 " valid; %" PRIu64 " %s, %" PRIu64 " lost%s\n",
		v.source == WOWC_SRC_CKPT ? "checkpoint" : "log",
		flags & WOWC_WB_DRY_RUN ? ", dry run" : "",
		res->dirty, v.valid_blocks, res->written,
		flags & WOWC_WB_DRY_RUN ? "to write" : "written",
		res->unrecoverable,
		res->unknown ? " (and records whose blocks are unknown)" : "");
	rc = wowc_exit_code(c, &v);
	if (res->unrecoverable || res->unknown)
		rc = WOWC_EXIT_ERROR;
out:
	if (ofd >= 0)
		close(ofd);
	free(buf);
	free(skip);
	free(list);
	wowc_view_free(&v);
	wowc_close(c);
	return rc;
}

/* ---- metadata size ---- */

/* What a clean load reads: the header and its closing copy, the tables. */
static uint64_t ckpt_load_bytes(uint64_t slots, uint64_t segs, uint64_t tombs,
				uint32_t bs)
{
	return (2 + wow_ckpt_slot_blocks(WOW_SB_VERSION, slots, bs) +
		wow_ckpt_seg_blocks(WOW_SB_VERSION, slots, segs, tombs, bs)) *
	       (uint64_t)bs;
}

int wowc_msize(uint64_t cache_bytes, uint32_t bs, uint32_t ebs,
	       struct wowc_msize *m, char *err)
{
	uint64_t sectors = cache_bytes >> 9, hb = 0, slots;

	memset(m, 0, sizeof(*m));
	if (!pow2(bs) || bs < WOW_MIN_BLOCK_SIZE || bs > WOW_MAX_BLOCK_SIZE) {
		seterr(err, "block size must be a power of 2 from %u to %u",
		       WOW_MIN_BLOCK_SIZE, WOW_MAX_BLOCK_SIZE);
		return -EINVAL;
	}
	if (!pow2(ebs) || ebs < bs * WOW_MIN_BLOCKS_PER_SEGMENT ||
	    ebs > WOW_MAX_ERASE_BLOCK_SIZE) {
		seterr(err, "erase block size must be a power of 2 of at least 4 blocks, at most %u",
		       WOW_MAX_ERASE_BLOCK_SIZE);
		return -EINVAL;
	}
	if (sectors < wow_min_cache_sectors_v(WOW_SB_VERSION, ebs, bs)) {
		seterr(err, "cache too small: needs %" PRIu64 " bytes for its metadata and %u segments",
		       wow_min_cache_sectors_v(WOW_SB_VERSION, ebs, bs) * 512,
		       WOW_MIN_SEGMENTS);
		return -EINVAL;
	}
	m->cache_bytes = cache_bytes;
	m->block_size = bs;
	m->erase_block_size = ebs;
	m->nr_segments = wow_nr_segments_v(WOW_SB_VERSION, sectors, ebs, bs);
	m->nr_slots = slots = m->nr_segments * (ebs / bs);
	if (slots > MAX_SLOTS) {
		seterr(err, "cache too large for block size %u (%" PRIu64 " blocks)",
		       bs, slots);
		return -EINVAL;
	}
	m->ckpt_area_blocks = wow_ckpt_area_blocks_v(WOW_SB_VERSION,
						     m->nr_segments, ebs, bs);
	m->first_segment_sector = wow_first_segment_sector_v(WOW_SB_VERSION,
							     m->nr_segments,
							     ebs, bs);
	m->metadata_bytes = m->first_segment_sector * 512;
	m->unused_bytes = cache_bytes - m->metadata_bytes -
			  m->nr_segments * ebs;
	/* dm-wow-index.c: 12-byte slots, 2^ilog2(slots / 2) 4-byte heads */
	while (slots >= 4 && (2ULL << hb) <= slots / 2)
		hb++;
	m->index_bytes = slots * 16 + (4ULL << hb);
	/* with no tombstone, and with every one the area has room for */
	m->load_bytes_min = ckpt_load_bytes(slots, m->nr_segments, 0, bs);
	m->load_bytes_max = ckpt_load_bytes(slots, m->nr_segments,
					    wow_ckpt_max_tombs_v(WOW_SB_VERSION,
								 m->nr_segments,
								 ebs, bs), bs);
	return 0;
}

void wowc_msize_print(FILE *f, const struct wowc_msize *m, bool json)
{
	if (json) {
		struct json j;

		json_init(&j, f, true);
		json_open(&j, '{', -1);
		json_kv(&j, "cache_bytes", m->cache_bytes);
		json_kv(&j, "block_size", m->block_size);
		json_kv(&j, "erase_block_size", m->erase_block_size);
		json_kv(&j, "segments", m->nr_segments);
		json_kv(&j, "cache_blocks", m->nr_slots);
		json_kv(&j, "checkpoint_area_blocks", m->ckpt_area_blocks);
		json_kv(&j, "checkpoint_area_bytes",
			m->ckpt_area_blocks * m->block_size);
		json_kv(&j, "first_segment_sector", m->first_segment_sector);
		json_kv(&j, "first_segment_offset", m->metadata_bytes);
		json_kv(&j, "unused_bytes", m->unused_bytes);
		json_kv(&j, "index_ram_bytes", m->index_bytes);
		json_kv(&j, "clean_load_bytes", m->load_bytes_min);
		json_kv(&j, "clean_load_bytes_max", m->load_bytes_max);
		json_close(&j);
		fputc('\n', f);
		return;
	}
	fprintf(f, "cache size:              %" PRIu64 " bytes\n", m->cache_bytes);
	fprintf(f, "block size:              %u bytes\n", m->block_size);
	fprintf(f, "erase block size:        %u bytes\n", m->erase_block_size);
	fprintf(f, "segments:                %" PRIu64 " (%" PRIu64 " cache blocks, %" PRIu64 " bytes)\n",
		m->nr_segments, m->nr_slots, m->nr_slots * m->block_size);
	fprintf(f, "checkpoint area:         %" PRIu64 " blocks (%" PRIu64 " bytes) from block %" PRIu64 " (erase block 1)\n",
		m->ckpt_area_blocks, m->ckpt_area_blocks * m->block_size,
		(uint64_t)wow_ckpt_first_block_v(WOW_SB_VERSION,
						 m->erase_block_size,
						 m->block_size));
	fprintf(f, "first segment:           sector %" PRIu64 " (offset %" PRIu64 " bytes; metadata before it)\n",
		m->first_segment_sector, m->metadata_bytes);
	fprintf(f, "unused tail:             %" PRIu64 " bytes\n", m->unused_bytes);
	fprintf(f, "index RAM:               %" PRIu64 " bytes (12-byte slot and up to 2 bytes of hash heads per cache block)\n",
		m->index_bytes);
	fprintf(f, "load after clean shutdown: %" PRIu64 " bytes read (%" PRIu64 " with the most tombstones)\n",
		m->load_bytes_min, m->load_bytes_max);
}
