// SPDX-License-Identifier: GPL-2.0
/*
 * wowforge: craft dm-wow metadata with valid checksums (fuzz-metadata.sh).
 * The checksums are computed exactly as dm-wow-super.c does: the kernel's
 * crc32c(seed, buf, len) has no pre- or post-inversion; a record header's
 * csum is crc32c over the block with the csum field zero, seeded with
 * WOW_CSUM_SEED; data_csum is crc32c(~0, data blocks); the superblock's is
 * crc32c(WOW_CSUM_SEED, bytes 4..511).
 *
 *   wowforge scan DEV
 *	"SEG WP SEG_SEQ LAST_SEQ" for every segment holding records (header
 *	checksums checked, consecutive seqs), then "max_seq N".
 *   wowforge sb DEV FIELD VALUE
 *	Set a superblock field (version flags block_size erase_block_size
 *	write_group_size origin_sectors cache_sectors first_segment_sector
 *	nr_segments format_seq magic) and re-seal it.
 *   wowforge rec DEV SEG [KEY=VALUE...]
 *	Append a sealed record at SEG's write pointer (or at=BLOCK).
 *	Defaults: seq = the segment's last + 1 (empty segment: max_seq + 1),
 *	seg_seq = the segment's (empty: seq), durable = seq - 1, no data.
 *	Keys: seq seg_seq durable at nr_data (data blocks, origin blocks
 *	ob, ob+S, ob+2S, ... with S = ob_stride, default 1; 0 gives every
 *	data block the same origin block) ob ob_stride,
 *	tomb=START:NR:T:FLAGS (repeatable),
 *	tombs=K:START:NR:T:FLAGS:STRIDE (K tombstones, START += STRIDE),
 *	hdr_nr_data / hdr_nr_tombs (lie in the header), badcsum=1.
 *	Prints "rec SEG at BLOCK seq N".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#define __packed __attribute__((packed))
#include "../../../dm-wow/dm-wow-format.h"

#include "crc32c.h"

static int fd;
static struct wow_superblock sb;
static uint32_t bs, eb, bps;
static uint64_t nsegs;

static void *xalloc(size_t n)
{
	void *p;

	if (posix_memalign(&p, 4096, n)) {
		perror("wowforge");
		exit(2);
	}
	memset(p, 0, n);
	return p;
}

static void io(int wr, void *buf, size_t len, uint64_t off)
{
	ssize_t r = wr ? pwrite(fd, buf, len, off) : pread(fd, buf, len, off);

	if (r != (ssize_t)len) {
		fprintf(stderr, "wowforge: %s at %" PRIu64 ": %s\n",
			wr ? "write" : "read", off, strerror(errno));
		exit(2);
	}
}

static uint64_t blk_off(uint64_t seg, uint64_t blk)
{
	return sb.first_segment_sector * 512 + (uint64_t)eb * seg + blk * bs;
}

/*
 * A record written behind the kernel's back, as the kernel would: the
 * checkpoints (format versions 2 to 4) are retired first, so the next load
 * scans the log and sees the record.  An all-zero header is no checkpoint.
 */
static void retire_checkpoint(void)
{
	uint64_t first, span;
	void *z;

	if (sb.version < 2)
		return;
	z = xalloc(bs);
	first = wow_ckpt_first_block_v(sb.version, eb, bs);
	span = wow_ckpt_span_v(sb.version, sb.nr_segments, eb, bs);
	io(1, z, bs, first * (uint64_t)bs);
	if (span)	/* version 4: the second area too */
		io(1, z, bs, (first + span) * (uint64_t)bs);
	free(z);
}

static uint32_t rec_csum(void *hdr)
{
	static const uint8_t zero[4];

	return crc32c_raw(crc32c_raw(WOW_CSUM_SEED, zero, 4), (uint8_t *)hdr + 4, bs - 4);
}

static void open_dev(const char *dev)
{
	void *b = xalloc(4096);

	fd = open(dev, O_RDWR | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "wowforge: %s: %s\n", dev, strerror(errno));
		exit(2);
	}
	io(0, b, 4096, 0);
	memcpy(&sb, b, sizeof(sb));
	bs = sb.block_size;
	eb = sb.erase_block_size;
	nsegs = sb.nr_segments;
	if (sb.magic != WOW_SB_MAGIC || bs < 512 || eb < 4 * bs) {
		fprintf(stderr, "wowforge: no dm-wow superblock on %s\n", dev);
		exit(2);
	}
	bps = eb / bs;
}

struct segstate {
	uint64_t wp, seg_seq, last;
};

/* the chain of intact records of a segment (headers only) */
static void scan_seg(uint64_t s, struct segstate *st, void *buf)
{
	struct wow_record *r = buf;

	memset(st, 0, sizeof(*st));
	while (st->wp + 1 < bps) {
		io(0, buf, bs, blk_off(s, st->wp));
		if (r->magic != WOW_REC_MAGIC ||
		    memcmp(r->uuid, sb.uuid, 16) || r->csum != rec_csum(buf))
			break;
		if (st->wp ? r->seq != st->last + 1 || r->seg_seq != st->seg_seq :
		    r->seq != r->seg_seq)
			break;
		if (!st->wp)
			st->seg_seq = r->seq;
		st->last = r->seq;
		st->wp += 1 + r->nr_data;
	}
}

static uint64_t max_seq(void *buf)
{
	struct segstate st;
	uint64_t s, m = sb.format_seq;

	for (s = 0; s < nsegs; s++) {
		scan_seg(s, &st, buf);
		if (st.last > m)
			m = st.last;
	}
	return m;
}

static int cmd_scan(void)
{
	void *buf = xalloc(bs);
	struct segstate st;
	uint64_t s, m = sb.format_seq;

	for (s = 0; s < nsegs; s++) {
		scan_seg(s, &st, buf);
		if (!st.wp)
			continue;
		printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", s,
		       st.wp, st.seg_seq, st.last);
		if (st.last > m)
			m = st.last;
	}
	printf("max_seq %" PRIu64 "\n", m);
	return 0;
}

static int cmd_sb(const char *field, const char *val)
{
	uint64_t v = strtoull(val, NULL, 0);
	void *b = xalloc(4096);
	struct wow_superblock *p = b;

	io(0, b, 4096, 0);
#define F(name) if (!strcmp(field, #name)) p->name = v; else
	F(version) F(flags) F(block_size) F(erase_block_size)
	F(write_group_size) F(origin_sectors) F(cache_sectors)
	F(first_segment_sector) F(nr_segments) F(format_seq) F(magic) {
		fprintf(stderr, "wowforge: unknown field %s\n", field);
		return 2;
	}
#undef F
	p->csum = crc32c_raw(WOW_CSUM_SEED, (uint8_t *)b + 4, WOW_SB_CSUM_BYTES - 4);
	io(1, b, 4096, 0);
	return fsync(fd) ? 2 : 0;
}

static int cmd_rec(uint64_t s, int argc, char **argv)
{
	uint64_t seq = 0, seg_seq = 0, durable = 0, at = 0, nr_data = 0, ob = 0;
	uint64_t ob_stride = 1;
	int has_seq = 0, has_segseq = 0, has_dur = 0, has_at = 0, badcsum = 0;
	long hdr_nd = -1, hdr_nt = -1;
	uint32_t nt = 0, maxt = (bs - sizeof(struct wow_record)) /
				sizeof(struct wow_tomb);
	struct wow_tomb *tombs = calloc(maxt + 1, sizeof(*tombs));
	void *buf = xalloc(bs), *data;
	struct wow_record *r = buf;
	struct segstate st;
	uint64_t i, dcsum;
	__le64 *obl;
	int a;

	for (a = 0; a < argc; a++) {
		char *k = argv[a], *v = strchr(k, '=');
		unsigned long long K, S, N, T, Fl, St;

		if (!v)
			return -1;
		*v++ = 0;
		if (!strcmp(k, "seq")) { seq = strtoull(v, NULL, 0); has_seq = 1; }
		else if (!strcmp(k, "seg_seq")) { seg_seq = strtoull(v, NULL, 0); has_segseq = 1; }
		else if (!strcmp(k, "durable")) { durable = strtoull(v, NULL, 0); has_dur = 1; }
		else if (!strcmp(k, "at")) { at = strtoull(v, NULL, 0); has_at = 1; }
		else if (!strcmp(k, "nr_data")) nr_data = strtoull(v, NULL, 0);
		else if (!strcmp(k, "ob")) ob = strtoull(v, NULL, 0);
		else if (!strcmp(k, "ob_stride")) ob_stride = strtoull(v, NULL, 0);
		else if (!strcmp(k, "hdr_nr_data")) hdr_nd = strtol(v, NULL, 0);
		else if (!strcmp(k, "hdr_nr_tombs")) hdr_nt = strtol(v, NULL, 0);
		else if (!strcmp(k, "badcsum")) badcsum = 1;
		else if (!strcmp(k, "tomb") &&
			 sscanf(v, "%llu:%llu:%llu:%llu", &S, &N, &T, &Fl) == 4) {
			if (nt < maxt)
				tombs[nt++] = (struct wow_tomb){ S, T, N, Fl };
		} else if (!strcmp(k, "tombs") &&
			   sscanf(v, "%llu:%llu:%llu:%llu:%llu:%llu", &K, &S,
				  &N, &T, &Fl, &St) == 6) {
			for (; K && nt < maxt; K--, S += St)
				tombs[nt++] = (struct wow_tomb){ S, T, N, Fl };
		} else
			return -1;
	}
	scan_seg(s, &st, buf);
	if (!has_at)
		at = st.wp;
	if (!has_seq)
		seq = st.wp ? st.last + 1 : max_seq(buf) + 1;
	if (!has_segseq)
		seg_seq = st.wp ? st.seg_seq : seq;
	if (!has_dur)
		durable = seq - 1;
	if (nr_data > (bs - sizeof(*r) - nt * sizeof(*tombs)) / 8)
		nr_data = (bs - sizeof(*r) - nt * sizeof(*tombs)) / 8;
	if (at + 1 + nr_data > bps) {
		fprintf(stderr, "wowforge: no room in segment %" PRIu64 "\n", s);
		return 2;
	}
	data = xalloc(nr_data * bs + 1);
	for (i = 0; i < nr_data * bs; i++)
		((uint8_t *)data)[i] = (uint8_t)(i * 7 + seq + i / bs * 13);
	dcsum = crc32c_raw(~0U, data, nr_data * bs);
	memset(buf, 0, bs);
	memcpy((uint8_t *)buf + sizeof(*r), tombs, nt * sizeof(*tombs));
	obl = (__le64 *)((uint8_t *)buf + sizeof(*r) + nt * sizeof(*tombs));
	for (i = 0; i < nr_data; i++)
		obl[i] = ob + i * ob_stride;
	r->magic = WOW_REC_MAGIC;
	r->seq = seq;
	r->seg_seq = seg_seq;
	r->durable_seq = durable;
	memcpy(r->uuid, sb.uuid, 16);
	r->data_csum = (uint32_t)dcsum;
	r->nr_data = hdr_nd >= 0 ? hdr_nd : (long)nr_data;
	r->nr_tombs = hdr_nt >= 0 ? hdr_nt : (long)nt;
	r->csum = rec_csum(buf) ^ (badcsum ? 1 : 0);
	retire_checkpoint();
	io(1, buf, bs, blk_off(s, at));
	if (nr_data)
		io(1, data, nr_data * bs, blk_off(s, at + 1));
	if (fsync(fd))
		return 2;
	printf("rec %" PRIu64 " at %" PRIu64 " seq %" PRIu64 " seg_seq %" PRIu64 " durable %" PRIu64 " nr_data %" PRIu64 " nr_tombs %u\n",
	       s, at, seq, seg_seq, durable, nr_data, nt);
	return 0;
}

int main(int argc, char **argv)
{
	int r = -1;

	crc_init();
	if (argc >= 3) {
		open_dev(argv[2]);
		if (!strcmp(argv[1], "scan") && argc == 3)
			r = cmd_scan();
		else if (!strcmp(argv[1], "sb") && argc == 5)
			r = cmd_sb(argv[3], argv[4]);
		else if (!strcmp(argv[1], "rec") && argc >= 4)
			r = cmd_rec(strtoull(argv[3], NULL, 0), argc - 4,
				    argv + 4);
	}
	if (r < 0) {
		fprintf(stderr, "usage: wowforge scan DEV | sb DEV FIELD VALUE | rec DEV SEG [KEY=VALUE...]\n");
		return 2;
	}
	return r;
}
