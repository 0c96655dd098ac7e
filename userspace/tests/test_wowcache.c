// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of wowcache (wowctl check, dump, writeback, metadata-size) on
 * synthetic cache images.  A tiny writer here builds each image in a temp
 * file: superblock, health block, log records (with data), a checkpoint;
 * its checksums come from tests/vm/guest/crc32c.h, not from the library.
 * Prints one "PASS: userspace/<name>" or "FAIL: userspace/<name> (<why>)"
 * line per case and exits 1 if any failed.  Needs no root and no devices.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#define __packed __attribute__((packed))
#include "../../dm-wow/dm-wow-format.h"
#include "../../tests/vm/guest/crc32c.h"
#include "../wowcache.h"
#include "expect.h"

/* ---- the image writer ---- */

#define BS		512U		/* block size */
#define EBS		8192U		/* erase block: 16 blocks */
#define BPS		(EBS / BS)
#define ORIGIN_BLOCKS	1024ULL
#define E1		(1ULL << 32)	/* seqs of epoch 1 */
#define E2		(2ULL << 32)

struct img {
	char path[64];
	char opath[64];		/* an origin image */
	int fd;
	uint32_t version;
	uint64_t nsegs, first;	/* first segment, bytes */
	uint64_t size;
	uint8_t uuid[16];
};

static void put_le(void *p, uint64_t v, int n)
{
	uint8_t *b = p;
	int i;

	for (i = 0; i < n; i++)
		b[i] = v >> (8 * i);
}

static void wr(struct img *m, const void *buf, size_t len, uint64_t off)
{
	if (pwrite(m->fd, buf, len, off) != (ssize_t)len)
		abort();
}

static void rd(struct img *m, void *buf, size_t len, uint64_t off)
{
	if (pread(m->fd, buf, len, off) != (ssize_t)len)
		abort();
}

static void seal512(void *blk)
{
	put_le(blk, crc32c_raw(WOW_CSUM_SEED, (uint8_t *)blk + 4, 508), 4);
}

static void write_health(struct img *m, uint32_t flags)
{
	uint8_t blk[BS] = { 0 };
	struct wow_health *h = (void *)blk;

	put_le(&h->version, WOW_HEALTH_VERSION, 4);
	put_le(&h->magic, WOW_HEALTH_MAGIC, 8);
	memcpy(h->uuid, m->uuid, 16);
	put_le(&h->flags, flags, 4);
	if (flags) {
		put_le(&h->state, 1, 4);
		put_le(&h->time, 1700000000, 8);
		strcpy(h->what, "a test wrote it");
	}
	seal512(blk);
	wr(m, blk, BS, BS);
}

/* A formatted cache of @nsegs segments (the cache size follows). */
static void img_new(struct img *m, uint32_t version, uint64_t nsegs)
{
	uint8_t blk[BS] = { 0 };
	struct wow_superblock *sb = (void *)blk;
	uint64_t sectors;
	int i;

	memset(m, 0, sizeof(*m));
	crc_init();
	strcpy(m->path, "/tmp/wowc-test.XXXXXX");
	m->fd = mkstemp(m->path);
	if (m->fd < 0)
		abort();
	m->version = version;
	m->first = wow_first_segment_sector_v(version, nsegs, EBS, BS) * 512;
	sectors = m->first / 512 + nsegs * (EBS / 512);
	m->nsegs = wow_nr_segments_v(version, sectors, EBS, BS);
	if (m->nsegs != nsegs)
		abort();
	m->size = sectors * 512;
	if (ftruncate(m->fd, m->size))
		abort();
	for (i = 0; i < 16; i++)
		m->uuid[i] = 0xa0 + i;
	put_le(&sb->version, version, 4);
	put_le(&sb->magic, WOW_SB_MAGIC, 8);
	put_le(&sb->block_size, BS, 4);
	put_le(&sb->erase_block_size, EBS, 4);
	put_le(&sb->write_group_size, 4096, 4);
	put_le(&sb->origin_sectors, ORIGIN_BLOCKS * BS / 512, 8);
	put_le(&sb->cache_sectors, sectors, 8);
	put_le(&sb->first_segment_sector, m->first / 512, 8);
	put_le(&sb->nr_segments, nsegs, 8);
	put_le(&sb->format_seq, E1 - 1, 8);
	memcpy(sb->uuid, m->uuid, 16);
	seal512(blk);
	wr(m, blk, BS, 0);
	write_health(m, 0);
}

/* WOWC_TEST_KEEP=1 keeps the images for a look (wowctl check/dump) */
static void img_free(struct img *m)
{
	close(m->fd);
	if (getenv("WOWC_TEST_KEEP")) {
		fprintf(stderr, "kept %s\n", m->path);
		return;
	}
	unlink(m->path);
	if (m->opath[0])
		unlink(m->opath);
}

static uint64_t blk_off(struct img *m, uint32_t seg, uint32_t block)
{
	return m->first + (uint64_t)seg * EBS + (uint64_t)block * BS;
}

/* What a data block of origin block @ob written by record @seq holds. */
static void pattern(void *blk, uint64_t ob, uint64_t seq)
{
	uint64_t v = (ob << 40) ^ seq ^ 0x5a5a000000000000ULL;
	uint8_t *p = blk;
	uint32_t i;

	for (i = 0; i < BS; i += 8)
		put_le(p + i, v + i, 8);
}

struct rec {
	uint32_t seg, at;	/* where */
	uint64_t seq, seg_seq, durable;
	uint32_t nr_data;
	uint64_t ob[16];
	uint32_t nr_tombs;
	struct { uint64_t start, t; uint32_t nr, flags; } tomb[4];
	uint32_t next;		/* next_seg as on disk: segment + 1, 0 unknown */
	/* damage */
	bool bad_data;		/* flip a data byte after sealing */
	bool bad_header;	/* flip a header byte after sealing */
};

/* Write record @r; returns the block after it. */
static uint32_t put_rec(struct img *m, const struct rec *r)
{
	uint8_t *buf = calloc(1 + r->nr_data, BS);
	uint8_t *p = buf + sizeof(struct wow_record);
	struct wow_record *h = (void *)buf;
	uint32_t i;

	for (i = 0; i < r->nr_tombs; i++, p += sizeof(struct wow_tomb)) {
		put_le(p, r->tomb[i].start, 8);
		put_le(p + 8, r->tomb[i].t, 8);
		put_le(p + 16, r->tomb[i].nr, 4);
		put_le(p + 20, r->tomb[i].flags, 4);
	}
	for (i = 0; i < r->nr_data; i++, p += 8) {
		put_le(p, r->ob[i], 8);
		pattern(buf + (1 + i) * BS, r->ob[i], r->seq);
	}
	put_le(&h->magic, WOW_REC_MAGIC, 4);
	put_le(&h->seq, r->seq, 8);
	put_le(&h->seg_seq, r->seg_seq, 8);
	put_le(&h->durable_seq, r->durable, 8);
	memcpy(h->uuid, m->uuid, 16);
	put_le(&h->data_csum, crc32c_raw(~0U, buf + BS, r->nr_data * BS), 4);
	put_le(&h->nr_data, r->nr_data, 2);
	put_le(&h->nr_tombs, r->nr_tombs, 2);
	put_le(&h->next_seg, r->next, 4);
	put_le(&h->csum, crc32c_raw(WOW_CSUM_SEED, buf, BS), 4);
	if (r->bad_data)
		buf[BS + 100] ^= 0xff;
	if (r->bad_header)
		buf[200] ^= 0xff;
	wr(m, buf, (1 + r->nr_data) * BS, blk_off(m, r->seg, r->at));
	free(buf);
	return r->at + 1 + r->nr_data;
}

/* ---- the checkpoint writer ---- */

struct ck_seg {
	uint64_t seq, max_seq;
	uint32_t wp, state;
	uint32_t nr_tombs;
	struct { uint64_t start, t; uint32_t nr, flags; } tomb[4];
};

static void stream_put(uint8_t *stream, uint64_t *pos, const void *d,
		       size_t len)
{
	memcpy(stream + *pos, d, len);
	*pos += len;
}

/*
 * Write a checkpoint of generation @gen: @slots[nr_slots] entries
 * (bits as in the format), @segs[nsegs]; valid or not.
 */
static uint32_t ck_head[3];	/* head_seg, head_wp, next_seg as on disk */

/* Format version 4: the area put_ckpt writes (0 or 1). */
static int ck_area;

/* The block where the image's checkpoint area (ck_area) starts. */
static uint64_t ck_base(const struct img *m)
{
	return wow_ckpt_first_block_v(m->version, EBS, BS) +
	       ck_area * wow_ckpt_span_v(m->version, m->nsegs, EBS, BS);
}

static void put_ckpt(struct img *m, uint64_t gen, uint64_t next_seq,
		     uint64_t completed, const uint64_t *slots,
		     const struct ck_seg *segs, bool valid)
{
	uint64_t nslots = m->nsegs * BPS, i, pos = 0, ntombs = 0;
	uint32_t per = wow_ckpt_slots_per_block(m->version, BS);
	uint32_t eb = wow_ckpt_slot_bytes(m->version);
	uint64_t sblocks = wow_ckpt_slot_blocks(m->version, nslots, BS);
	uint64_t gblocks;
	uint32_t payload = BS - sizeof(struct wow_ckpt_trailer), j;
	uint8_t *tab, *stream, *blocks, hdr[BS] = { 0 };
	struct wow_ckpt_header *h = (void *)hdr;

	for (i = 0; i < m->nsegs; i++)
		ntombs += segs[i].nr_tombs;
	gblocks = wow_ckpt_seg_blocks(m->version, nslots, m->nsegs, ntombs, BS);
	tab = calloc(sblocks, BS);
	stream = calloc(gblocks, payload);
	blocks = calloc(gblocks, BS);
	for (i = 0; i < nslots; i++)
		put_le(tab + (i / per) * BS + (i % per) * eb, slots[i], 6);
	for (i = 0; i < m->nsegs; i++) {
		uint8_t e[32] = { 0 };

		put_le(e, segs[i].seq, 8);
		put_le(e + 8, segs[i].max_seq, 8);
		put_le(e + 16, segs[i].wp, 4);
		put_le(e + 20, segs[i].nr_tombs, 4);
		put_le(e + 24, segs[i].state, 4);
		stream_put(stream, &pos, e, 32);
	}
	for (i = 0; i < sblocks; i++) {
		uint8_t c[4];

		put_le(c, crc32c_raw(WOW_CSUM_SEED, tab + i * BS, BS), 4);
		stream_put(stream, &pos, c, 4);
	}
	for (i = 0; i < m->nsegs; i++)
		for (j = 0; j < segs[i].nr_tombs; j++) {
			uint8_t t[24] = { 0 };

			put_le(t, segs[i].tomb[j].start, 8);
			put_le(t + 8, segs[i].tomb[j].t, 8);
			put_le(t + 16, segs[i].tomb[j].nr, 4);
			put_le(t + 20, segs[i].tomb[j].flags, 4);
			stream_put(stream, &pos, t, 24);
		}
	for (i = 0; i < gblocks; i++) {
		uint8_t *b = blocks + i * BS;
		uint32_t c;

		memcpy(b, stream + i * payload, payload);
		put_le(b + payload + 4, i, 4);
		put_le(b + payload + 8, gen, 8);
		c = crc32c_raw(WOW_CSUM_SEED, b, payload);
		c = crc32c_raw(c, "\0\0\0\0", 4);
		c = crc32c_raw(c, b + payload + 4, 12);
		put_le(b + payload, c, 4);
	}
	wr(m, tab, sblocks * BS, (ck_base(m) + 1) * BS);
	wr(m, blocks, gblocks * BS, (ck_base(m) + 1 + sblocks) * BS);
	put_le(&h->version, WOW_CKPT_VERSION, 4);
	put_le(&h->magic, WOW_CKPT_MAGIC, 8);
	memcpy(h->uuid, m->uuid, 16);
	put_le(&h->flags, valid ? WOW_CKPT_VALID : 0, 4);
	put_le(&h->generation, gen, 8);
	if (valid) {
		put_le(&h->next_seq, next_seq, 8);
		put_le(&h->completed_seq, completed, 8);
		put_le(&h->nr_slots, nslots, 8);
		put_le(&h->nr_segments, m->nsegs, 8);
		put_le(&h->slot_blocks, sblocks, 8);
		put_le(&h->seg_blocks, gblocks, 8);
		put_le(&h->nr_tombs, ntombs, 8);
		put_le(&h->head_seg, ck_head[0], 4);
		put_le(&h->head_wp, ck_head[1], 4);
		put_le(&h->next_seg, ck_head[2], 4);
	}
	seal512(hdr);
	wr(m, hdr, BS, ck_base(m) * BS);
	/* version 3: the closing copy after the tables */
	if (m->version >= 3)
		wr(m, hdr, BS, (ck_base(m) + 1 + sblocks + gblocks) * BS);
	free(tab);
	free(stream);
	free(blocks);
}

static void flip(struct img *m, uint64_t off)
{
	uint8_t b;

	rd(m, &b, 1, off);
	b ^= 0xff;
	wr(m, &b, 1, off);
}

static uint64_t slot_of(uint32_t seg, uint32_t block)
{
	return (uint64_t)seg * BPS + block;
}

static uint64_t ent(uint64_t ob, bool dirty)
{
	return ob | WOW_CKPT_SLOT_VALID | (dirty ? WOW_CKPT_SLOT_DIRTY : 0);
}

/* ---- running the library ---- */

static FILE *devnull(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

static int check(struct img *m)
{
	return wowc_check(m->path, devnull(), devnull());
}

/* check's report, caller frees */
static char *check_text(struct img *m, int *rc)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	*rc = wowc_check(m->path, f, f);
	fclose(f);
	return buf;
}

static char *dump_text(struct img *m, unsigned int flags, int *rc)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	*rc = wowc_dump(m->path, flags, f, devnull());
	fclose(f);
	return buf;
}

static struct wowc *c_open;

/* Build a view of @m; the caller calls done(). */
static int view(struct img *m, unsigned int flags, struct wowc_view *v)
{
	char err[WOWC_ERR_LEN];

	if (wowc_open(m->path, &c_open, err))
		return -1;
	return wowc_view_build(c_open, flags, v, err);
}

static void done(struct wowc_view *v)
{
	wowc_view_free(v);
	wowc_close(c_open);
	c_open = NULL;
}

/* 1 dirty, 0 clean, -1 not cached */
static int state(const struct wowc_view *v, uint64_t ob)
{
	uint32_t s = wowc_lookup(v, ob);

	if (s == WOWC_NO_SLOT)
		return -1;
	return !!(wowc_slot(v, s) & WOWC_SLOT_DIRTY);
}

static uint64_t slot_at(const struct wowc_view *v, uint64_t ob)
{
	return wowc_lookup(v, ob);
}

/*
 * The standard log: segment 0 holds
 *   A (seq E1+1) obs 1 2 3,  B (E1+2) obs 3 4,  C (E1+3) a clean mark
 *   for block 1 (t = E1+2), obs 5;
 * segment 1 holds D (E1+4) ob 6.  Blocks: 1 clean, 2 dirty, 3 (B) dirty,
 * 4, 5, 6 dirty.
 */
static void std_log(struct img *m, struct rec *r)
{
	memset(r, 0, 4 * sizeof(*r));
	r[0] = (struct rec){ .seg = 0, .at = 0, .seq = E1 + 1,
			     .seg_seq = E1 + 1, .durable = E1, .nr_data = 3,
			     .ob = { 1, 2, 3 } };
	r[1] = (struct rec){ .seg = 0, .at = 4, .seq = E1 + 2,
			     .seg_seq = E1 + 1, .durable = E1 + 1,
			     .nr_data = 2, .ob = { 3, 4 } };
	r[2] = (struct rec){ .seg = 0, .at = 7, .seq = E1 + 3,
			     .seg_seq = E1 + 1, .durable = E1 + 2,
			     .nr_data = 1, .ob = { 5 }, .nr_tombs = 1,
			     .tomb = { { 1, E1 + 2, 1, WOW_TOMB_CLEAN } } };
	r[3] = (struct rec){ .seg = 1, .at = 0, .seq = E1 + 4,
			     .seg_seq = E1 + 4, .durable = E1 + 3,
			     .nr_data = 1, .ob = { 6 } };
	(void)m;
}

static void put_all(struct img *m, struct rec *r, int n)
{
	int i;

	for (i = 0; i < n; i++)
		put_rec(m, &r[i]);
}

/* ---- cases ---- */

static const char *clean_log(void)
{
	struct wowc_view v;
	struct img m;
	struct rec r[4];
	char *t;
	int rc;

	img_new(&m, 2, 8);
	std_log(&m, r);
	put_all(&m, r, 4);
	EXPECT_EQ(check(&m), 0);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(v.source, WOWC_SRC_LOG);
	EXPECT_EQ(v.nr_records, 4);
	EXPECT_EQ(v.valid_blocks, 6);
	EXPECT_EQ(v.dirty_blocks, 5);
	EXPECT_EQ(state(&v, 1), 0);
	EXPECT_EQ(state(&v, 2), 1);
	EXPECT_EQ(slot_at(&v, 3), slot_of(0, 5));	/* B's, not A's */
	EXPECT_EQ(state(&v, 7), -1);
	EXPECT_EQ(v.segs[0].wp, 9);
	EXPECT_EQ(v.segs[1].seq, E1 + 4);
	EXPECT_EQ(v.next_seq, E2);
	EXPECT(!v.refused);
	done(&v);
	t = dump_text(&m, 0, &rc);
	EXPECT_EQ(rc, 0);
	EXPECT(strstr(t, "\"source\": \"log\""));
	EXPECT(strstr(t, "{\"oblock\": 1, \"slot\": 1, \"dirty\": false}"));
	EXPECT(strstr(t, "\"seq\": 4294967298, \"seg_seq\": 4294967297, \"durable_seq\": 4294967297, \"nr_data\": 2, \"nr_tombs\": 0, \"next_seg\": null, \"status\": \"ok\""));
	free(t);
	img_free(&m);
	return NULL;
}

/* The last record's data is bad and nothing after it: a torn tail. */
static const char *torn_tail(void)
{
	struct wowc_view v;
	struct img m;
	struct rec r[4];
	char *t;
	int rc;

	img_new(&m, 2, 8);
	std_log(&m, r);
	r[3].bad_data = true;
	r[3].ob[0] = 4;		/* a newer version of block 4, torn */
	put_all(&m, r, 4);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, WOWC_EXIT_WARN);
	EXPECT(strstr(t, "torn write"));
	free(t);
	EXPECT(!view(&m, 0, &v));
	EXPECT(!v.refused);
	EXPECT_EQ(v.nr_dropped, 1);
	EXPECT_EQ(slot_at(&v, 4), slot_of(0, 6));	/* B's version */
	EXPECT_EQ(v.segs[1].seq, 0);			/* nothing taken */
	EXPECT(!v.segs[1].closed);
	done(&v);
	img_free(&m);
	return NULL;
}

/*
 * B's data is corrupt and C (durable_seq = B) proves it durable: the load
 * is refused; with B's blocks all rewritten later, it is only a warning.
 */
static const char *durable_corrupt(void)
{
	struct wowc_view v;
	struct img m;
	struct rec r[4];
	char *t;
	int rc;

	img_new(&m, 2, 8);
	std_log(&m, r);
	r[1].bad_data = true;
	put_all(&m, r, 4);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, WOWC_EXIT_ERROR);
	EXPECT(strstr(t, "was durable"));
	EXPECT(strstr(t, "REFUSED"));
	free(t);
	EXPECT(!view(&m, 0, &v));
	EXPECT(v.refused);
	EXPECT_EQ(v.nr_corrupt, 1);
	EXPECT_EQ(v.corrupt[0].seq, E1 + 2);
	EXPECT_EQ(state(&v, 5), -1);	/* C is past B: not taken */
	EXPECT_EQ(state(&v, 6), 1);	/* D, another segment */
	done(&v);
	t = dump_text(&m, 0, &rc);
	EXPECT_EQ(rc, WOWC_EXIT_ERROR);
	EXPECT(strstr(t, "\"loads\": false"));
	EXPECT(strstr(t, "\"status\": \"dropped\", \"why\": \"data checksum\""));
	EXPECT(strstr(t, "\"status\": \"proof\""));
	free(t);
	img_free(&m);

	/* the same, but blocks 3 and 4 are written again in D */
	img_new(&m, 2, 8);
	std_log(&m, r);
	r[1].bad_data = true;
	r[2].nr_data = 0;	/* C: the clean mark alone */
	r[3].nr_data = 2;
	r[3].ob[0] = 3;
	r[3].ob[1] = 4;
	put_all(&m, r, 4);
	EXPECT_EQ(check(&m), WOWC_EXIT_WARN);
	EXPECT(!view(&m, 0, &v));
	EXPECT(!v.refused);
	EXPECT_EQ(slot_at(&v, 3), slot_of(1, 1));
	done(&v);
	img_free(&m);
	return NULL;
}

/*
 * A torn record of epoch 1 that a load dropped, and records of epoch 2
 * written after that load whose durable_seq is above its seq: they vouch
 * only for their own epoch, so it is still a torn tail.
 */
static const char *epochs(void)
{
	struct img m;
	struct rec r[4];

	img_new(&m, 2, 8);
	std_log(&m, r);
	r[2].bad_data = true;	/* C torn, in epoch 1 */
	r[3].seq = E2;		/* D: the next load's first record */
	r[3].seg_seq = E2;
	r[3].durable = E2 + 5 - 5;
	put_all(&m, r, 4);
	EXPECT_EQ(check(&m), WOWC_EXIT_WARN);
	/*
	 * ... and a corrupt record of epoch 2 that an epoch 2 record proves
	 * durable is refused, whatever the epoch 1 suspect below it
	 */
	{
		struct rec e[2] = {
			{ .seg = 1, .at = 2, .seq = E2 + 1, .seg_seq = E2,
			  .durable = E2, .nr_data = 1, .ob = { 8 },
			  .bad_data = true },
			{ .seg = 1, .at = 4, .seq = E2 + 2, .seg_seq = E2,
			  .durable = E2 + 1, .nr_data = 1, .ob = { 9 } },
		};

		put_all(&m, e, 2);
		EXPECT_EQ(check(&m), WOWC_EXIT_ERROR);
		{
			uint8_t z[4 * BS] = { 0 };

			/* zeros: the life ends at E2 again */
			wr(&m, z, sizeof(z), blk_off(&m, 1, 2));
		}
	}
	EXPECT_EQ(check(&m), WOWC_EXIT_WARN);
	/* D in epoch 1 (the same life) would prove C durable */
	r[3].seq = E1 + 4;
	r[3].seg_seq = E1 + 4;
	r[3].durable = E1 + 3;
	put_rec(&m, &r[3]);
	EXPECT_EQ(check(&m), WOWC_EXIT_ERROR);
	img_free(&m);

	/*
	 * A record of epoch 1 whose durable_seq (crafted) reaches into
	 * epoch 2 vouches for nothing there: segment 2 holds E2+5, torn
	 */
	img_new(&m, 2, 8);
	std_log(&m, r);
	put_all(&m, r, 2);
	{
		struct rec e[2] = {
			{ .seg = 2, .seq = E2 + 5, .seg_seq = E2 + 5,
			  .durable = E2 + 4, .nr_data = 1, .ob = { 8 },
			  .bad_data = true },
			{ .seg = 3, .seq = E1 + 9, .seg_seq = E1 + 9,
			  .durable = E2 + 7, .nr_data = 1, .ob = { 9 } },
		};

		put_all(&m, e, 2);
		EXPECT_EQ(check(&m), WOWC_EXIT_WARN);
	}
	img_free(&m);

	/*
	 * Crafted: the chain of segment 0 breaks after A and goes on with a
	 * record of the same life but of epoch 2; its claim is not merged
	 * with the life's epoch 1 claims, so the break is a torn tail
	 */
	img_new(&m, 2, 8);
	std_log(&m, r);
	r[1].bad_header = true;
	r[2].seq = E2 + 3;
	r[2].durable = E2 + 2;
	put_all(&m, r, 3);
	EXPECT_EQ(check(&m), WOWC_EXIT_WARN);
	img_free(&m);
	return NULL;
}

/* A header that is not the life's next, then the life goes on. */
static const char *broken_chain(void)
{
	struct img m;
	struct rec r[5];
	char *t;
	int rc;

	img_new(&m, 2, 8);
	std_log(&m, r);
	r[1].bad_header = true;
	put_all(&m, r, 3);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, WOWC_EXIT_ERROR);	/* C says B was durable */
	free(t);
	img_free(&m);

	/* the first record's header torn: the segment is dropped */
	img_new(&m, 2, 8);
	std_log(&m, r);
	r[0].bad_header = true;
	put_all(&m, r, 4);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, WOWC_EXIT_WARN);
	EXPECT(strstr(t, "at block 0"));
	free(t);
	img_free(&m);

	/* a segment's first record whose seq is not its seg_seq */
	img_new(&m, 2, 8);
	std_log(&m, r);
	r[3].seg_seq = E1 + 3;
	put_all(&m, r, 4);
	EXPECT_EQ(check(&m), WOWC_EXIT_WARN);
	img_free(&m);

	/*
	 * A bad header after segment 0's life (torn in an earlier life),
	 * whose "missing" record E1+3 is the first of segment 1's life,
	 * which a later record proves durable: nothing is missing.
	 */
	img_new(&m, 2, 8);
	std_log(&m, r);
	r[2].bad_header = true;		/* C, at block 7 */
	r[2].seq = 77;
	r[2].seg_seq = 70;
	r[3].seq = r[3].seg_seq = E1 + 3;
	memset(&r[4], 0, sizeof(r[4]));
	put_all(&m, r, 4);
	r[3] = (struct rec){ .seg = 1, .at = 2, .seq = E1 + 4,
			     .seg_seq = E1 + 3, .durable = E1 + 3,
			     .nr_data = 1, .ob = { 7 } };
	put_rec(&m, &r[3]);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, WOWC_EXIT_WARN);
	EXPECT(strstr(t, "the first of another segment's life"));
	free(t);
	img_free(&m);
	return NULL;
}

/* Tombstones kill records with seq <= t; clean marks make blocks clean. */
static const char *tombstones(void)
{
	struct wowc_view v;
	struct img m;
	struct rec r[4];

	img_new(&m, 2, 8);
	memset(r, 0, sizeof(r));
	r[0] = (struct rec){ .seq = E1 + 1, .seg_seq = E1 + 1, .durable = E1,
			     .nr_data = 4, .ob = { 10, 11, 12, 13 } };
	/* kill 10..11 up to A; clean 12..13 up to A; write 11 again */
	r[1] = (struct rec){ .at = 5, .seq = E1 + 2, .seg_seq = E1 + 1,
			     .durable = E1 + 1, .nr_data = 1, .ob = { 11 },
			     .nr_tombs = 2,
			     .tomb = { { 10, E1 + 1, 2, 0 },
				       { 12, E1 + 1, 2, WOW_TOMB_CLEAN } } };
	/* in segment 1: 13 again, then a kill of 13 at E1+2 (too old) */
	r[2] = (struct rec){ .seg = 1, .seq = E1 + 3, .seg_seq = E1 + 3,
			     .durable = E1 + 2, .nr_data = 1, .ob = { 13 },
			     .nr_tombs = 1, .tomb = { { 13, E1 + 2, 1, 0 } } };
	put_all(&m, r, 3);
	EXPECT_EQ(check(&m), 0);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(state(&v, 10), -1);
	EXPECT_EQ(state(&v, 11), 1);
	EXPECT_EQ(slot_at(&v, 11), slot_of(0, 6));
	EXPECT_EQ(state(&v, 12), 0);
	EXPECT_EQ(state(&v, 13), 1);
	EXPECT_EQ(slot_at(&v, 13), slot_of(1, 1));
	EXPECT_EQ(v.valid_blocks, 3);
	EXPECT_EQ(v.dirty_blocks, 2);
	done(&v);

	/* two copies of one block in one record: the later is current */
	memset(&r[3], 0, sizeof(r[3]));
	r[3] = (struct rec){ .seg = 1, .at = 2, .seq = E1 + 4,
			     .seg_seq = E1 + 3, .durable = E1 + 3,
			     .nr_data = 2, .ob = { 20, 20 } };
	put_rec(&m, &r[3]);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(slot_at(&v, 20), slot_of(1, 4));
	done(&v);

	/* a tombstone past its own record: the header is bad */
	r[2].tomb[0].t = E1 + 4;
	put_rec(&m, &r[2]);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(v.nr_dropped, 1);
	EXPECT_EQ(v.segs[1].recs[0].status, WOWC_REC_BAD);
	done(&v);
	img_free(&m);
	return NULL;
}

/* The checkpoint of the standard log. */
static void std_ckpt(struct img *m, bool valid, uint64_t gen)
{
	uint64_t slots[8 * BPS] = { 0 };
	struct ck_seg segs[8] = { { 0 } };

	slots[slot_of(0, 1)] = ent(1, false);
	slots[slot_of(0, 2)] = ent(2, true);
	slots[slot_of(0, 5)] = ent(3, true);
	slots[slot_of(0, 6)] = ent(4, true);
	slots[slot_of(0, 8)] = ent(5, true);
	slots[slot_of(1, 1)] = ent(6, true);
	segs[0] = (struct ck_seg){ E1 + 1, E1 + 3, 9, WOW_CKPT_SEG_CLOSED, 0,
				   { { 0 } } };
	segs[1] = (struct ck_seg){ E1 + 4, E1 + 4, 2, WOW_CKPT_SEG_CLOSED, 0,
				   { { 0 } } };
	put_ckpt(m, gen, E1 + 5, E1 + 4, slots, segs, valid);
}

/*
 * A cache of @version with the standard log and a valid checkpoint of
 * generation 7: wowctl check passes and the view comes from the
 * checkpoint.  NULL, or what failed.
 */
static const char *std_ckpt_loads(struct img *m, uint32_t version)
{
	struct wowc_view v;
	struct rec r[4];
	char *t;
	int rc;

	img_new(m, version, 8);
	std_log(m, r);
	put_all(m, r, 4);
	std_ckpt(m, true, 7);
	t = check_text(m, &rc);
	EXPECT_EQ(rc, 0);
	EXPECT(strstr(t, "checkpoint: valid, generation 7"));
	free(t);
	EXPECT(!view(m, 0, &v));
	EXPECT_EQ(v.source, WOWC_SRC_CKPT);
	EXPECT_EQ(v.dirty_blocks, 5);
	done(&v);
	return NULL;
}

/*
 * Format version 3: the area at erase block 1, valid only with its closing
 * copy of the header the same as the header.
 */
static const char *checkpoint_v3(void)
{
	struct wowc_view v;
	struct img m;
	uint64_t closing;
	const char *e;
	char *t;
	int rc;

	e = std_ckpt_loads(&m, 3);
	if (e)
		return e;
	EXPECT_EQ(m.first, 2ULL * EBS);

	/* the closing copy damaged: cut short, the log is what loads */
	closing = ck_base(&m) + 1 +
		  wow_ckpt_slot_blocks(m.version, m.nsegs * (EBS / BS), BS) +
		  wow_ckpt_seg_blocks(m.version, m.nsegs * (EBS / BS), m.nsegs, 0, BS);
	flip(&m, closing * BS + 40);
	t = check_text(&m, &rc);
	EXPECT(strstr(t, "closing copy"));
	free(t);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(v.source, WOWC_SRC_LOG);
	EXPECT_EQ(v.dirty_blocks, 5);
	done(&v);
	flip(&m, closing * BS + 40);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(v.source, WOWC_SRC_CKPT);
	done(&v);
	img_free(&m);
	return NULL;
}

/*
 * Format version 4: two areas; the newest valid checkpoint loads, a newer
 * one cut short (no closing copy) is passed over with a note, and one
 * whose tables do not check under a whole header means the log.
 */
static const char *checkpoint_v4(void)
{
	struct wowc_view v;
	struct img m;
	uint64_t closing, span;
	const char *e;
	char *t;
	int rc;

	ck_area = 0;
	e = std_ckpt_loads(&m, 4);
	if (e)
		return e;
	span = wow_ckpt_span_v(4, m.nsegs, EBS, BS);
	EXPECT_EQ(m.first, (1 + 2 * span / (EBS / BS)) * EBS);
	/* generation 8 in area 1: it is the one */
	ck_area = 1;
	std_ckpt(&m, true, 8);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, 0);
	EXPECT(strstr(t, "checkpoint: valid, generation 8"));
	free(t);
	/* its closing copy missing: generation 7 loads, from area 0 */
	closing = ck_base(&m) + 1 +
		  wow_ckpt_slot_blocks(m.version, m.nsegs * (EBS / BS), BS) +
		  wow_ckpt_seg_blocks(m.version, m.nsegs * (EBS / BS), m.nsegs, 0, BS);
	flip(&m, closing * BS + 40);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, 0);
	EXPECT(strstr(t, "checkpoint: valid, generation 7"));
	EXPECT(strstr(t, "checkpoint 8 (area 1) is not whole"));
	free(t);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(v.source, WOWC_SRC_CKPT);
	EXPECT_EQ(v.dirty_blocks, 5);
	done(&v);
	/* whole again, but a slot table block of it damaged: the log */
	flip(&m, closing * BS + 40);
	flip(&m, (ck_base(&m) + 1) * BS + 100);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(v.source, WOWC_SRC_LOG);
	EXPECT_EQ(v.dirty_blocks, 5);
	done(&v);
	ck_area = 0;
	img_free(&m);
	return NULL;
}

static const char *checkpoint(void)
{
	struct wowc_view v;
	struct img m;
	struct rec r[4];
	const char *e;
	char *t;
	int rc;

	e = std_ckpt_loads(&m, 2);
	if (e)
		return e;
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(slot_at(&v, 3), slot_of(0, 5));
	EXPECT_EQ(v.next_seq, E2);
	done(&v);
	t = dump_text(&m, 0, &rc);
	EXPECT_EQ(rc, 0);
	EXPECT(strstr(t, "\"source\": \"checkpoint\""));
	EXPECT(strstr(t, "\"status\": \"ok\""));	/* records listed too */
	free(t);
	t = dump_text(&m, WOWC_SCAN, &rc);
	EXPECT(strstr(t, "\"source\": \"log\""));
	free(t);

	/* a slot table block that does not check: the log is scanned */
	flip(&m, (WOW_CKPT_FIRST_BLOCK + 1) * BS + BS - 1);	/* no entry */
	EXPECT_EQ(check(&m), WOWC_EXIT_ERROR);
	flip(&m, (WOW_CKPT_FIRST_BLOCK + 1) * BS + BS - 1);
	EXPECT_EQ(check(&m), 0);
	flip(&m, (WOW_CKPT_FIRST_BLOCK + 1) * BS + 7);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, WOWC_EXIT_ERROR);
	EXPECT(strstr(t, "does not check"));
	free(t);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(v.source, WOWC_SRC_LOG);
	EXPECT_EQ(v.dirty_blocks, 5);
	done(&v);

	/* retired (rewritten not valid): the log is what loads, all clean */
	std_ckpt(&m, false, 7);
	EXPECT_EQ(check(&m), 0);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(v.source, WOWC_SRC_LOG);
	done(&v);
	t = dump_text(&m, 0, &rc);
	EXPECT(strstr(t, "\"state\": \"retired\""));
	free(t);
	img_free(&m);

	/* sealed right, but a slot past its segment's write pointer */
	img_new(&m, 2, 8);
	std_log(&m, r);
	put_all(&m, r, 4);
	{
		uint64_t slots[8 * BPS] = { 0 };
		struct ck_seg segs[8] = { { 0 } };

		slots[slot_of(0, 2)] = ent(2, true);
		slots[slot_of(0, 12)] = ent(9, true);
		segs[0] = (struct ck_seg){ E1 + 1, E1 + 3, 9,
					   WOW_CKPT_SEG_CLOSED, 0, { { 0 } } };
		put_ckpt(&m, 4, E1 + 5, E1 + 4, slots, segs, true);
	}
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, WOWC_EXIT_ERROR);
	EXPECT(strstr(t, "slot 12 (origin block 9) makes no sense"));
	free(t);
	img_free(&m);
	return NULL;
}

/*
 * The standard log and its checkpoint, segment 0 holding a tombstone;
 * @fault breaks one segment or tombstone entry (0: none).  check's
 * report must hold @want.
 */
static const char *ckpt_entry_case(int fault, int want_rc, const char *want)
{
	uint64_t slots[8 * BPS] = { 0 };
	struct ck_seg segs[8] = { { 0 } };
	struct img m;
	struct rec r[4];
	char *t;
	int rc;
	bool ok;

	img_new(&m, 2, 8);
	std_log(&m, r);
	put_all(&m, r, 4);
	slots[slot_of(0, 1)] = ent(1, false);
	slots[slot_of(0, 2)] = ent(2, true);
	slots[slot_of(0, 5)] = ent(3, true);
	slots[slot_of(0, 6)] = ent(4, true);
	slots[slot_of(0, 8)] = ent(5, true);
	slots[slot_of(1, 1)] = ent(6, true);
	segs[0] = (struct ck_seg){ E1 + 1, E1 + 3, 9, WOW_CKPT_SEG_CLOSED, 1,
				   { { 500, E1 + 2, 3, 0 } } };
	segs[1] = (struct ck_seg){ E1 + 4, E1 + 4, 2, WOW_CKPT_SEG_CLOSED, 0,
				   { { 0 } } };
	switch (fault) {
	case 1:			/* written past the segment */
		segs[0].wp = BPS + 1;
		break;
	case 2:			/* a state bit the format lacks */
		segs[1].state = 2;
		break;
	case 3:			/* a free segment written */
		segs[2].wp = 1;
		break;
	case 4:			/* a clean mark in a checkpoint */
		segs[0].tomb[0].flags = WOW_TOMB_CLEAN;
		break;
	case 5:			/* a tombstone not below next_seq */
		segs[0].tomb[0].t = E1 + 5;
		break;
	}
	put_ckpt(&m, 7, E1 + 5, E1 + 4, slots, segs, true);
	t = check_text(&m, &rc);
	ok = rc == want_rc && strstr(t, want);
	free(t);
	img_free(&m);
	if (ok)
		return NULL;
	snprintf(why, sizeof(why), "fault %d: rc %d (want %d) or no \"%s\"",
		 fault, rc, want_rc, want);
	return why;
}

/* The checkpoint's segment and tombstone entries, and their refusals. */
static const char *checkpoint_entries(void)
{
	const char *e;

	e = ckpt_entry_case(0, 0, "checkpoint: valid, generation 7, next_seq 4294967301, 1 tombstones");
	if (!e)
		e = ckpt_entry_case(1, WOWC_EXIT_ERROR, "segment 0's entry makes no sense");
	if (!e)
		e = ckpt_entry_case(2, WOWC_EXIT_ERROR, "segment 1's entry makes no sense");
	if (!e)
		e = ckpt_entry_case(3, WOWC_EXIT_ERROR, "segment 2's entry makes no sense");
	if (!e)
		e = ckpt_entry_case(4, WOWC_EXIT_ERROR, "a tombstone of segment 0 makes no sense");
	if (!e)
		e = ckpt_entry_case(5, WOWC_EXIT_ERROR, "a tombstone of segment 0 makes no sense");
	return e;
}

/* A valid checkpoint that the log contradicts. */
static const char *checkpoint_vs_log(void)
{
	struct img m;
	struct rec r[5];
	char *t;
	int rc;

	img_new(&m, 2, 8);
	std_log(&m, r);
	put_all(&m, r, 4);
	std_ckpt(&m, true, 3);
	/*
	 * A record after the checkpoint that its chain does not reach (the
	 * header names no head): the kernel drops it, as a torn tail.
	 */
	memset(&r[4], 0, sizeof(r[4]));
	r[4] = (struct rec){ .seg = 1, .at = 2, .seq = E1 + 5,
			     .seg_seq = E1 + 4, .durable = E1 + 4,
			     .nr_data = 1, .ob = { 9 } };
	put_rec(&m, &r[4]);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, WOWC_EXIT_WARN);
	EXPECT(strstr(t, "1 intact log records (newest 4294967301) are past the end of the chain"));
	free(t);
	/* ... and one after it says it was durable: a load loses it */
	r[4] = (struct rec){ .seg = 1, .at = 4, .seq = E1 + 6,
			     .seg_seq = E1 + 4, .durable = E1 + 5,
			     .nr_data = 1, .ob = { 10 } };
	put_rec(&m, &r[4]);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, WOWC_EXIT_ERROR);
	EXPECT(strstr(t, "1 log records proven durable (the first 4294967301) are past the end of the chain"));
	free(t);
	img_free(&m);

	/* the log has a block the checkpoint says is dirty as clean */
	img_new(&m, 2, 8);
	std_log(&m, r);
	r[2].tomb[0].start = 2;	/* a clean mark for 2, not 1 */
	put_all(&m, r, 4);
	std_ckpt(&m, true, 3);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, WOWC_EXIT_WARN);
	EXPECT(strstr(t, "disagree on 1 slots"));
	free(t);
	img_free(&m);
	return NULL;
}

/* Rewrite superblock field bytes [@off, @off + @len) with @v, resealed. */
static void sb_set(struct img *m, uint32_t off, const void *v, size_t len)
{
	uint8_t blk[BS];

	rd(m, blk, BS, 0);
	memcpy(blk + off, v, len);
	seal512(blk);
	wr(m, blk, BS, 0);
}

/* A health block whose what is all @len bytes of @what, flags @flags. */
static void health_what(struct img *m, uint32_t flags, const char *what,
			size_t len)
{
	uint8_t blk[BS] = { 0 };
	struct wow_health *h = (void *)blk;

	write_health(m, flags);
	rd(m, blk, BS, BS);
	memcpy(h->what, what, len);
	seal512(blk);
	wr(m, blk, BS, BS);
}

/*
 * What wowctl shows of the superblock and the health block: the kind and
 * reason of a superblock it cannot use, whether the health block is the
 * cache's, fields that fill their whole width.
 */
static const char *superblock_and_health_fields(void)
{
	char full[WOW_HEALTH_WHAT_LEN + 1];
	uint8_t v[4];
	struct wowc *c;
	struct img m;
	char err[WOWC_ERR_LEN], *t;
	int rc;

	img_new(&m, 2, 8);
	memset(full, 'o', sizeof(full) - 1);
	full[sizeof(full) - 1] = 0;
	sb_set(&m, offsetof(struct wow_superblock, origin_id), full,
	       WOW_ORIGIN_ID_LEN);
	health_what(&m, WOW_SB_F_NEEDS_CHECK, full, WOW_HEALTH_WHAT_LEN);
	EXPECT(!wowc_open(m.path, &c, err));
	EXPECT_EQ(c->sb_kind, WOWC_SB_VALID);
	EXPECT(!strcmp(c->sb.origin_id, full));
	EXPECT(c->health.ours && c->health.needs_check);
	EXPECT(!strcmp(c->health.what, full));
	wowc_close(c);
	t = dump_text(&m, 0, &rc);
	EXPECT(strstr(t, "\"written\": true"));
	free(t);
	/* another cache's health block: says nothing */
	m.uuid[0] ^= 1;
	write_health(&m, WOW_SB_F_NEEDS_CHECK);
	m.uuid[0] ^= 1;
	EXPECT(!wowc_open(m.path, &c, err));
	EXPECT(!c->health.ours && !c->health.needs_check);
	wowc_close(c);
	t = dump_text(&m, 0, &rc);
	EXPECT(strstr(t, "\"written\": false"));
	free(t);
	/* a version after ours */
	put_le(v, WOW_SB_VERSION + 1, 4);
	sb_set(&m, offsetof(struct wow_superblock, version), v, 4);
	EXPECT(!wowc_open(m.path, &c, err));
	EXPECT_EQ(c->sb_kind, WOWC_SB_NEWER);
	EXPECT(!strcmp(c->sb_why,
		       "superblock version is newer than this tool"));
	wowc_close(c);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, WOWC_EXIT_ERROR);
	EXPECT(strstr(t, "superblock version is newer than this tool"));
	free(t);
	img_free(&m);
	return NULL;
}

static const char *superblock_and_health(void)
{
	struct img m;
	struct rec r[4];

	img_new(&m, 2, 8);
	std_log(&m, r);
	put_all(&m, r, 4);
	write_health(&m, WOW_SB_F_NEEDS_CHECK);
	EXPECT_EQ(check(&m), WOWC_EXIT_WARN);
	write_health(&m, 0);
	EXPECT_EQ(check(&m), 0);
	flip(&m, 40);		/* cache_sectors */
	EXPECT_EQ(check(&m), WOWC_EXIT_ERROR);
	flip(&m, 40);
	EXPECT_EQ(check(&m), 0);
	flip(&m, 300);		/* padding: only the checksum sees it */
	EXPECT_EQ(check(&m), WOWC_EXIT_ERROR);
	flip(&m, 300);
	EXPECT_EQ(check(&m), 0);
	{
		uint8_t z[BS] = { 0 };

		wr(&m, z, BS, 0);
	}
	EXPECT_EQ(check(&m), WOWC_EXIT_ERROR);
	EXPECT_EQ(wowc_check("/nonexistent/wowc", devnull(), devnull()),
		  WOWC_EXIT_OPERR);
	img_free(&m);
	return NULL;
}

/* Format version 1: no checkpoint area; segments from erase block 1. */
static const char *version1(void)
{
	struct wowc_view v;
	struct img m;
	struct rec r[4];

	img_new(&m, 1, 8);
	EXPECT_EQ(m.first, EBS);
	std_log(&m, r);
	put_all(&m, r, 4);
	EXPECT_EQ(check(&m), 0);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(v.dirty_blocks, 5);
	done(&v);
	img_free(&m);
	return NULL;
}

/* ---- writeback ---- */

static int origin_new(struct img *m, uint64_t blocks)
{
	uint8_t b[BS];
	uint64_t i;
	int fd;

	strcpy(m->opath, "/tmp/wowc-origin.XXXXXX");
	fd = mkstemp(m->opath);
	if (fd < 0)
		abort();
	for (i = 0; i < blocks; i++) {
		pattern(b, i, 0);	/* "old" data */
		if (pwrite(fd, b, BS, i * BS) != BS)
			abort();
	}
	return fd;
}

/* Origin block @ob holds what record @seq wrote (0: the old data). */
static bool holds(int fd, uint64_t ob, uint64_t seq)
{
	uint8_t a[BS], b[BS];

	if (pread(fd, a, BS, ob * BS) != BS)
		return false;
	pattern(b, ob, seq);
	return !memcmp(a, b, BS);
}

static const char *writeback(void)
{
	struct wowc_wb_result res;
	struct img m;
	struct rec r[4];
	uint64_t ob;
	int fd;

	img_new(&m, 2, 8);
	std_log(&m, r);
	put_all(&m, r, 4);
	fd = origin_new(&m, ORIGIN_BLOCKS);
	EXPECT_EQ(wowc_writeback(m.path, m.opath, WOWC_WB_DRY_RUN, devnull(),
				 devnull(), &res), 0);
	EXPECT_EQ(res.written, 5);
	EXPECT(holds(fd, 2, 0));
	EXPECT_EQ(wowc_writeback(m.path, m.opath, 0, devnull(), devnull(),
				 &res), 0);
	EXPECT_EQ(res.dirty, 5);
	EXPECT_EQ(res.written, 5);
	EXPECT(holds(fd, 1, 0));	/* clean: not written */
	EXPECT(holds(fd, 2, E1 + 1));
	EXPECT(holds(fd, 3, E1 + 2));	/* the newest version */
	EXPECT(holds(fd, 4, E1 + 2));
	EXPECT(holds(fd, 5, E1 + 3));
	EXPECT(holds(fd, 6, E1 + 4));
	for (ob = 7; ob < ORIGIN_BLOCKS; ob++)
		EXPECT(holds(fd, ob, 0));
	close(fd);
	unlink(m.opath);

	/* an origin of another size is refused, unless forced */
	fd = origin_new(&m, ORIGIN_BLOCKS + 1);
	EXPECT_EQ(wowc_writeback(m.path, m.opath, 0, devnull(), devnull(),
				 &res), WOWC_EXIT_OPERR);
	EXPECT(holds(fd, 2, 0));
	EXPECT_EQ(wowc_writeback(m.path, m.opath, WOWC_WB_FORCE, devnull(),
				 devnull(), &res), 0);
	EXPECT(holds(fd, 2, E1 + 1));
	close(fd);
	img_free(&m);
	return NULL;
}

/*
 * A durable record corrupt (the kernel refuses the cache): writeback
 * writes everything else, the records after it in its segment too, and
 * leaves the corrupt record's blocks alone (their older cached version
 * could be older than what was destaged).
 */
static const char *writeback_corrupt(void)
{
	struct wowc_wb_result res;
	struct img m;
	struct rec r[5];
	int fd;

	img_new(&m, 2, 8);
	std_log(&m, r);
	r[1].bad_data = true;		/* B: blocks 3 (older copy in A), 4 */
	r[2].nr_tombs = 0;		/* C: block 5 */
	memset(&r[4], 0, sizeof(r[4]));
	r[4] = (struct rec){ .seg = 0, .at = 9, .seq = E1 + 4,
			     .seg_seq = E1 + 1, .durable = E1 + 3,
			     .nr_data = 1, .ob = { 7 } };
	r[3].seq = r[3].seg_seq = E1 + 5;	/* D, in segment 1 */
	r[3].durable = E1 + 4;
	/* block 4 was destaged before the crash: the origin has B's */
	r[3].nr_tombs = 1;
	r[3].tomb[0].start = 4;
	r[3].tomb[0].nr = 1;
	r[3].tomb[0].t = E1 + 2;
	r[3].tomb[0].flags = WOW_TOMB_CLEAN;
	put_all(&m, r, 5);		/* E: after C in segment 0 */
	fd = origin_new(&m, ORIGIN_BLOCKS);
	EXPECT_EQ(wowc_writeback(m.path, m.opath, 0, devnull(), devnull(),
				 &res), WOWC_EXIT_ERROR);
	EXPECT_EQ(res.unrecoverable, 1);	/* block 3 */
	EXPECT(holds(fd, 1, E1 + 1));
	EXPECT(holds(fd, 2, E1 + 1));
	EXPECT(holds(fd, 3, 0));	/* not A's older copy */
	EXPECT(holds(fd, 4, 0));
	EXPECT(holds(fd, 5, E1 + 3));	/* salvaged from past B */
	EXPECT(holds(fd, 7, E1 + 4));
	EXPECT(holds(fd, 6, E1 + 5));
	EXPECT_EQ(res.written, 5);
	close(fd);
	img_free(&m);
	return NULL;
}

/*
 * Crafted: B and C corrupt, D proves both durable; block 4 (B, D) has a
 * newer version in F, and F kills block 5 up to B's seq.  The kernel's
 * test (each lost block newer than B, or killed at or after B) passes, so
 * it loads and check warns; but C's version of block 5 is newer than that
 * kill and lost: writeback says so (exit 4).
 */
static const char *writeback_lost_later(void)
{
	struct wowc_wb_result res;
	struct img m;
	struct rec r[5];
	int fd;

	img_new(&m, 2, 8);
	memset(r, 0, sizeof(r));
	r[0] = (struct rec){ .seq = E1 + 1, .seg_seq = E1 + 1, .durable = E1,
			     .nr_data = 1, .ob = { 1 } };
	r[1] = (struct rec){ .at = 2, .seq = E1 + 2, .seg_seq = E1 + 1,
			     .durable = E1 + 1, .nr_data = 1, .ob = { 4 },
			     .bad_data = true };
	r[2] = (struct rec){ .at = 4, .seq = E1 + 3, .seg_seq = E1 + 1,
			     .durable = E1 + 2, .nr_data = 1, .ob = { 5 },
			     .bad_data = true };
	r[3] = (struct rec){ .at = 6, .seq = E1 + 4, .seg_seq = E1 + 1,
			     .durable = E1 + 3, .nr_data = 1, .ob = { 4 } };
	r[4] = (struct rec){ .seg = 1, .seq = E1 + 5, .seg_seq = E1 + 5,
			     .durable = E1 + 4, .nr_data = 1, .ob = { 4 },
			     .nr_tombs = 1, .tomb = { { 5, E1 + 2, 1, 0 } } };
	put_all(&m, r, 5);
	EXPECT_EQ(check(&m), WOWC_EXIT_WARN);
	fd = origin_new(&m, ORIGIN_BLOCKS);
	EXPECT_EQ(wowc_writeback(m.path, m.opath, 0, devnull(), devnull(),
				 &res), WOWC_EXIT_ERROR);
	EXPECT_EQ(res.unrecoverable, 1);
	EXPECT(holds(fd, 4, E1 + 5));
	EXPECT(holds(fd, 1, E1 + 1));
	EXPECT(holds(fd, 5, 0));
	close(fd);
	img_free(&m);
	return NULL;
}

/* Writeback from a valid checkpoint: its dirty set, not the log's. */
static const char *writeback_checkpoint(void)
{
	struct wowc_wb_result res;
	uint64_t slots[8 * BPS] = { 0 };
	struct ck_seg segs[8] = { { 0 } };
	struct img m;
	struct rec r[4];
	int fd;

	img_new(&m, 2, 8);
	std_log(&m, r);
	put_all(&m, r, 4);
	/* blocks 2 and 6 are all the checkpoint has dirty */
	slots[slot_of(0, 1)] = ent(1, false);
	slots[slot_of(0, 2)] = ent(2, true);
	slots[slot_of(0, 5)] = ent(3, false);
	slots[slot_of(0, 6)] = ent(4, false);
	slots[slot_of(0, 8)] = ent(5, false);
	slots[slot_of(1, 1)] = ent(6, true);
	segs[0] = (struct ck_seg){ E1 + 1, E1 + 3, 9, WOW_CKPT_SEG_CLOSED, 0,
				   { { 0 } } };
	segs[1] = (struct ck_seg){ E1 + 4, E1 + 4, 2, WOW_CKPT_SEG_CLOSED, 0,
				   { { 0 } } };
	put_ckpt(&m, 2, E1 + 5, E1 + 4, slots, segs, true);
	fd = origin_new(&m, ORIGIN_BLOCKS);
	EXPECT_EQ(wowc_writeback(m.path, m.opath, 0, devnull(), devnull(),
				 &res), 0);
	EXPECT_EQ(res.written, 2);
	EXPECT(holds(fd, 2, E1 + 1));
	EXPECT(holds(fd, 6, E1 + 4));
	EXPECT(holds(fd, 3, 0));
	close(fd);
	img_free(&m);
	return NULL;
}

/*
 * The chain after a checkpoint.  The standard log and its checkpoint
 * (segment 0: A B C, segment 1: D, blocks 0..1), whose header names the
 * log head as segment 1, block 2, next segment 2 (on disk + 1).  Then:
 *   E (E1+5) at 1/2: obs 3 7, next 2
 *   F (E1+6) at 1/5: a discard of block 4 (t E1+6), ob 8
 *   G (E1+7) at 2/0: a new life going on in the next segment, obs 2 9
 */
static void chain_log(struct img *m, struct rec *r)
{
	memset(r, 0, 3 * sizeof(*r));
	r[0] = (struct rec){ .seg = 1, .at = 2, .seq = E1 + 5,
			     .seg_seq = E1 + 4, .durable = E1 + 4,
			     .nr_data = 2, .ob = { 3, 7 }, .next = 3 };
	r[1] = (struct rec){ .seg = 1, .at = 5, .seq = E1 + 6,
			     .seg_seq = E1 + 4, .durable = E1 + 5,
			     .nr_data = 1, .ob = { 8 }, .nr_tombs = 1,
			     .tomb = { { 4, E1 + 6, 1, 0 } }, .next = 3 };
	r[2] = (struct rec){ .seg = 2, .at = 0, .seq = E1 + 7,
			     .seg_seq = E1 + 7, .durable = E1 + 6,
			     .nr_data = 2, .ob = { 2, 9 }, .next = 4 };
	(void)m;
}

static void chain_img(struct img *m, struct rec *r)
{
	struct rec l[4];

	img_new(m, 2, 8);
	std_log(m, l);
	put_all(m, l, 4);
	ck_head[0] = 2;		/* segment 1 */
	ck_head[1] = 2;
	ck_head[2] = 3;		/* segment 2 */
	std_ckpt(m, true, 9);
	memset(ck_head, 0, sizeof(ck_head));
	chain_log(m, r);
	put_all(m, r, 3);
}

static const char *chain_replay(void)
{
	struct wowc_view v;
	struct img m;
	struct rec r[3];
	char *t;
	int rc;

	chain_img(&m, r);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(v.source, WOWC_SRC_CKPT);
	EXPECT_EQ(v.nr_replayed, 3);
	EXPECT_EQ(v.replay_end, E1 + 8);
	EXPECT(!v.refused);
	EXPECT_EQ(state(&v, 1), 0);		/* clean in the checkpoint */
	EXPECT_EQ(slot_at(&v, 3), slot_of(1, 3));	/* E replaces B's */
	EXPECT_EQ(state(&v, 7), 1);
	EXPECT_EQ(state(&v, 4), -1);	/* F's discard: a checkpointed copy */
	EXPECT_EQ(state(&v, 8), 1);
	EXPECT_EQ(slot_at(&v, 2), slot_of(2, 1));	/* G, in segment 2 */
	EXPECT_EQ(slot_at(&v, 9), slot_of(2, 2));
	EXPECT_EQ(v.dirty_blocks, 7);	/* 2 3 5 6 7 8 9 */
	EXPECT_EQ(v.valid_blocks, 8);
	EXPECT_EQ(v.segs[1].wp, 7);
	EXPECT_EQ(v.segs[2].seq, E1 + 7);
	EXPECT_EQ(v.segs[2].wp, 3);
	EXPECT_EQ(v.next_seq, E2);
	done(&v);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, 0);
	EXPECT(strstr(t, "log head: segment 1 block 2, next segment 2"));
	EXPECT(strstr(t, "3 records replayed after it"));
	EXPECT(strstr(t, "a load reads the checkpoint: loads"));
	free(t);
	t = dump_text(&m, 0, &rc);
	EXPECT_EQ(rc, 0);
	EXPECT(strstr(t, "\"head_seg\": 1, \"head_wp\": 2, \"next_seg\": 2"));
	EXPECT(strstr(t, "\"replayed\": 3,"));
	EXPECT(strstr(t, "\"nr_tombs\": 1, \"next_seg\": 2, \"status\": \"ok\""));
	EXPECT(strstr(t, "{\"oblock\": 9, \"slot\": 34, \"dirty\": true}"));
	free(t);
	t = dump_text(&m, WOWC_SCAN, &rc);
	EXPECT(strstr(t, "\"source\": \"log\""));
	EXPECT(strstr(t, "\"replayed\": 0,"));
	free(t);
	img_free(&m);
	return NULL;
}

/* A torn record after the checkpoint ends the chain: dropped. */
static const char *chain_torn_tail(void)
{
	struct wowc_view v;
	struct img m;
	struct rec r[3], h = { 0 };
	char *t;
	int rc;

	chain_img(&m, r);
	h = (struct rec){ .seg = 2, .at = 3, .seq = E1 + 8, .seg_seq = E1 + 7,
			  .durable = E1 + 7, .nr_data = 1, .ob = { 10 },
			  .next = 4, .bad_data = true };
	put_rec(&m, &h);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(v.source, WOWC_SRC_CKPT);
	EXPECT_EQ(v.nr_replayed, 3);
	EXPECT_EQ(v.nr_replay_dropped, 1);	/* as the kernel counts it */
	EXPECT(!v.refused);
	EXPECT_EQ(state(&v, 10), -1);
	EXPECT_EQ(v.segs[2].wp, 3);
	EXPECT_EQ(v.dirty_blocks, 7);
	done(&v);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, WOWC_EXIT_WARN);	/* the scan's torn tail */
	EXPECT(strstr(t, "a load reads the checkpoint: loads"));
	free(t);
	img_free(&m);
	return NULL;
}

/*
 * The record after G is corrupt, and a later one of its life (or block 0
 * of the segment G names) says it was durable: refused.
 */
static const char *chain_vouched(void)
{
	struct wowc_wb_result res;
	struct wowc_view v;
	struct img m;
	struct rec r[3], h, i;
	char *t;
	int rc, k, fd;

	for (k = 0; k < 2; k++) {
		chain_img(&m, r);
		h = (struct rec){ .seg = 2, .at = 3, .seq = E1 + 8,
				  .seg_seq = E1 + 7, .durable = E1 + 7,
				  .nr_data = 1, .ob = { 10 }, .next = 4,
				  .bad_data = true };
		if (!k)		/* further on in segment 2 */
			i = (struct rec){ .seg = 2, .at = 5, .seq = E1 + 9,
					  .seg_seq = E1 + 7, .durable = E1 + 8,
					  .nr_data = 1, .ob = { 11 },
					  .next = 4 };
		else		/* block 0 of segment 3, which G names */
			i = (struct rec){ .seg = 3, .at = 0, .seq = E1 + 9,
					  .seg_seq = E1 + 9, .durable = E1 + 8,
					  .nr_data = 1, .ob = { 11 },
					  .next = 5 };
		put_rec(&m, &h);
		put_rec(&m, &i);
		EXPECT(!view(&m, 0, &v));
		EXPECT_EQ(v.source, WOWC_SRC_CKPT);
		EXPECT(v.refused);
		EXPECT_EQ(v.nr_replayed, 3);
		done(&v);
		t = check_text(&m, &rc);
		EXPECT_EQ(rc, WOWC_EXIT_ERROR);
		EXPECT(strstr(t, "log record 4294967304 was durable (record 4294967305"));
		EXPECT(strstr(t, "a load reads the checkpoint: REFUSED"));
		free(t);
		t = dump_text(&m, 0, &rc);
		EXPECT_EQ(rc, WOWC_EXIT_ERROR);
		EXPECT(strstr(t, "\"loads\": false"));
		free(t);
		/* writeback: what the scan of the whole log finds */
		fd = origin_new(&m, ORIGIN_BLOCKS);
		EXPECT_EQ(wowc_writeback(m.path, m.opath, 0, devnull(),
					 devnull(), &res), WOWC_EXIT_ERROR);
		EXPECT(holds(fd, 9, E1 + 7));
		EXPECT(holds(fd, 7, E1 + 5));
		close(fd);
		img_free(&m);
	}
	/* the same, not vouched (durable_seq below it): a torn tail */
	chain_img(&m, r);
	h.seg = 2;
	h.at = 3;
	i = (struct rec){ .seg = 2, .at = 5, .seq = E1 + 9, .seg_seq = E1 + 7,
			  .durable = E1 + 7, .nr_data = 1, .ob = { 11 } };
	put_rec(&m, &h);
	put_rec(&m, &i);
	EXPECT(!view(&m, 0, &v));
	EXPECT(!v.refused);
	EXPECT_EQ(state(&v, 11), -1);
	done(&v);
	img_free(&m);
	return NULL;
}

/*
 * A checkpoint written at a load: no open segment (head "none"), the
 * next segment 0, which the log then starts over in (a new life: the
 * checkpointed copies of segment 0 are gone).
 */
static const char *chain_head_none(void)
{
	struct wowc_view v;
	struct img m;
	struct rec l[4], g = { 0 };
	char *t;
	int rc;

	img_new(&m, 2, 8);
	std_log(&m, l);
	put_all(&m, l, 4);
	ck_head[2] = 1;		/* next: segment 0 */
	std_ckpt(&m, true, 5);
	memset(ck_head, 0, sizeof(ck_head));
	g = (struct rec){ .seg = 0, .at = 0, .seq = E1 + 5, .seg_seq = E1 + 5,
			  .durable = E1 + 4, .nr_data = 1, .ob = { 30 },
			  .next = 3 };
	put_rec(&m, &g);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(v.source, WOWC_SRC_CKPT);
	EXPECT_EQ(v.nr_replayed, 1);
	EXPECT_EQ(state(&v, 30), 1);
	EXPECT_EQ(state(&v, 3), -1);
	EXPECT_EQ(state(&v, 1), -1);
	EXPECT_EQ(state(&v, 6), 1);
	EXPECT_EQ(v.valid_blocks, 2);
	EXPECT_EQ(v.segs[0].seq, E1 + 5);
	done(&v);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, 0);
	EXPECT(strstr(t, "log head: none, next segment 0"));
	free(t);
	t = dump_text(&m, 0, &rc);
	EXPECT(strstr(t, "\"head_seg\": null, \"head_wp\": 0, \"next_seg\": 0"));
	free(t);
	img_free(&m);
	return NULL;
}

/* A clean mark after the checkpoint within a checkpointed copy's life. */
static const char *chain_clean_mark_unsure(void)
{
	struct wowc_view v;
	struct img m;
	struct rec r[3], k = { 0 };
	char *t;
	int rc;

	chain_img(&m, r);
	/* block 5's checkpointed copy is C's (E1+3), life E1+1..E1+3 */
	k = (struct rec){ .seg = 2, .at = 3, .seq = E1 + 8, .seg_seq = E1 + 7,
			  .durable = E1 + 7, .nr_tombs = 1,
			  .tomb = { { 5, E1 + 2, 1, WOW_TOMB_CLEAN } } };
	put_rec(&m, &k);
	EXPECT(!view(&m, 0, &v));
	EXPECT_EQ(v.nr_replayed, 4);
	EXPECT_EQ(state(&v, 5), 1);	/* C's copy (E1+3): not covered */
	EXPECT(v.uncertain[slot_at(&v, 5)] & WOWC_UNSURE_CLEAN);
	done(&v);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, 0);	/* the scan: dirty too (E1+3 > t) */
	free(t);
	img_free(&m);
	return NULL;
}

/*
 * The chain breaks on the first record of the next segment (H at block 0
 * of segment 3, corrupt data) and a later record of that life (I) says H
 * was durable.  The kernel's replay_vouched reads the rest of that segment
 * when its block 0 is ours but bad, finds I, and refuses the load; so
 * does wowcache.
 */
static const char *chain_break_at_next_block0(void)
{
	struct wowc_view v;
	struct img m;
	struct rec r[3], h, i;
	char *t;
	int rc;

	chain_img(&m, r);
	h = (struct rec){ .seg = 3, .at = 0, .seq = E1 + 8, .seg_seq = E1 + 8,
			  .durable = E1 + 7, .nr_data = 1, .ob = { 10 },
			  .next = 5, .bad_data = true };
	i = (struct rec){ .seg = 3, .at = 2, .seq = E1 + 9, .seg_seq = E1 + 8,
			  .durable = E1 + 8, .nr_data = 1, .ob = { 11 },
			  .next = 5 };
	put_rec(&m, &h);
	put_rec(&m, &i);
	EXPECT(!view(&m, 0, &v));
	EXPECT(v.refused);		/* as the kernel */
	done(&v);
	t = check_text(&m, &rc);
	EXPECT_EQ(rc, WOWC_EXIT_ERROR);
	EXPECT(strstr(t, "was durable"));
	free(t);
	img_free(&m);
	return NULL;
}

static const char *metadata_size(void)
{
	struct wowc_msize ms;
	char err[WOWC_ERR_LEN];
	uint64_t n;

	EXPECT(!wowc_msize(64ULL << 30, 4096, 1 << 20, &ms, err));
	n = wow_nr_segments_v(5, (64ULL << 30) >> 9, 1 << 20, 4096);
	EXPECT_EQ(ms.nr_segments, n);
	EXPECT_EQ(ms.nr_slots, n * 256);
	EXPECT_EQ(ms.first_segment_sector,
		  wow_first_segment_sector_v(5, n, 1 << 20, 4096));
	EXPECT_EQ(ms.ckpt_area_blocks, wow_ckpt_area_blocks_v(5, n, 1 << 20, 4096));
	/*
	 * design.rst: a 64 GiB cache gives each of its two areas 210 MiB
	 * (format version 5: 10-byte slot entries; 146 MiB in version 4),
	 * right after erase block 0
	 */
	EXPECT_EQ(ms.ckpt_area_blocks * 4096 >> 20, 2 * 210);
	EXPECT_EQ(ms.first_segment_sector * 512, (1 + 2 * 210ULL) << 20);
	/* 16 bytes a slot (format 5's block crcs), bucket heads */
	EXPECT(ms.index_bytes <= 18 * ms.nr_slots);
	EXPECT(ms.index_bytes >= 16 * ms.nr_slots + 2 * ms.nr_slots / 2);
	EXPECT_EQ(ms.load_bytes_min, (2 + wow_ckpt_slot_blocks(WOW_SB_VERSION, n * 256, 4096) +
				       wow_ckpt_seg_blocks(WOW_SB_VERSION, n * 256, n, 0,
							   4096)) *
				      4096);
	/* at most one area's whole erase blocks; at least version 2's room */
	EXPECT(ms.load_bytes_max <= (ms.first_segment_sector * 512 - (1 << 20)) / 2);
	EXPECT(ms.load_bytes_max >= wow_ckpt_one_area_blocks_v(5, n, 1 << 20, 4096) * 4096);
	/* 16 MiB: one erase block of area, all but 8 blocks tombstones */
	EXPECT(!wowc_msize(16 << 20, 4096, 1 << 20, &ms, err));
	EXPECT_EQ(ms.load_bytes_max, 256 * 4096);
	EXPECT(wowc_msize(1 << 20, 4096, 1 << 20, &ms, err));	/* too small */
	EXPECT(wowc_msize(64 << 20, 3000, 1 << 20, &ms, err));
	return NULL;
}

static const struct {
	const char *name;
	const char *(*fn)(void);
} cases[] = {
	{ "wowcache_clean_log", clean_log },
	{ "wowcache_torn_tail_warns", torn_tail },
	{ "wowcache_durable_corrupt_refused", durable_corrupt },
	{ "wowcache_epochs", epochs },
	{ "wowcache_broken_chain", broken_chain },
	{ "wowcache_tombstones_and_clean_marks", tombstones },
	{ "wowcache_checkpoint_valid_bad_retired", checkpoint },
	{ "wowcache_checkpoint_v3_closing_copy", checkpoint_v3 },
	{ "wowcache_checkpoint_v4_two_areas", checkpoint_v4 },
	{ "wowcache_checkpoint_vs_log", checkpoint_vs_log },
	{ "wowcache_checkpoint_entries_refused", checkpoint_entries },
	{ "wowcache_superblock_and_health", superblock_and_health },
	{ "wowcache_superblock_and_health_fields",
	  superblock_and_health_fields },
	{ "wowcache_version1", version1 },
	{ "wowcache_writeback_dirty_newest", writeback },
	{ "wowcache_writeback_corrupt_durable", writeback_corrupt },
	{ "wowcache_writeback_lost_after_harmless", writeback_lost_later },
	{ "wowcache_writeback_from_checkpoint", writeback_checkpoint },
	{ "wowcache_chain_replay", chain_replay },
	{ "wowcache_chain_torn_tail_dropped", chain_torn_tail },
	{ "wowcache_chain_vouched_break_refused", chain_vouched },
	{ "wowcache_chain_head_none", chain_head_none },
	{ "wowcache_chain_clean_mark_unsure", chain_clean_mark_unsure },
	{ "wowcache_chain_break_at_next_block0", chain_break_at_next_block0 },
	{ "wowcache_metadata_size", metadata_size },
};

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		report(cases[i].name, cases[i].fn());
	return failed;
}
