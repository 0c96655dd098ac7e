// SPDX-License-Identifier: GPL-2.0
/*
 * wowpat: verified O_DIRECT I/O for the dm-wow geometry matrix and fault
 * campaigns (tests/scenarios/geometry-matrix.sh, fault-*.sh).
 *
 *   wowpat geo write|check DEV BS SEED
 *	A fixed layout of O_DIRECT writes, each one pwrite() of: 1 block,
 *	3 blocks, 5 blocks, 17 blocks, 128 KiB, 1 MiB, 2 blocks straddling
 *	the 1 MiB write's end, and 3 blocks over the middle of the 1 MiB
 *	write (sizes above 1 MiB or below one block are left out; every write
 *	is aligned to BS).  Each 512-byte sector carries its byte offset and
 *	the write's seed, then a pseudo-random fill.  "write" prints
 *	"write I OFFSET LENGTH" before each write (stdout, flushed), so a
 *	caller that times it out knows which write hung.  "check" reads the
 *	layout back and checks every sector holds the newest write covering
 *	it; it prints the first few bad sectors.
 *
 *   wowpat load DEV STATE SECONDS SEED NBLOCKS BS [eio-ok]
 *	One thread: random BS-sized O_DIRECT writes of blocks 0..NBLOCKS-1
 *	of DEV (each block self-describing: magic, block number, generation,
 *	crc32c), every fourth operation a read of a random written block that
 *	must hold its last acknowledged generation, or the generation of a
 *	later write that failed (it may or may not have reached the media);
 *	a block never acknowledged is not checked (its old content is unknown).
 *	A block holding an older generation is STALE: always a violation.
 *	Without eio-ok a failed write or read is a violation too; with it they
 *	are counted.  At the end (or at SIGTERM) STATE gets the generations
 *	(acknowledged, failed-after) per block.
 *
 *   wowpat verify DEV STATE NBLOCKS BS [eio-ok|atleast]
 *	Read every block written by a former load and check it as above;
 *	with atleast, a block may also hold any newer generation of itself
 *	(written by a later load with a higher SEED: generations start at
 *	SEED << 32).
 *
 * Output ends with a summary line; exit 0 ok, 1 violations, 2 usage/setup.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SECTOR 512
#define MAXW 16
#define BLK_MAGIC 0x54415057574f57ULL	/* "WOWWPAT" */

#include "crc32c.h"
#include "mix64.h"

static void *xalloc(size_t n)
{
	void *p;

	if (posix_memalign(&p, 65536, n ? n : 1)) {
		perror("posix_memalign");
		exit(2);
	}
	return p;
}

static int open_dev(const char *dev, int flags)
{
	int fd = open(dev, flags | O_DIRECT);

	if (fd < 0) {
		fprintf(stderr, "wowpat: open %s: %s\n", dev, strerror(errno));
		exit(2);
	}
	return fd;
}

/* ---- geo ---- */

struct wr {
	uint64_t off, len, seed;
};

static void fill_sector(uint8_t *p, uint64_t off, uint64_t seed)
{
	uint64_t *q = (uint64_t *)p, s = mix64(off ^ mix64(seed));
	unsigned int i;

	q[0] = BLK_MAGIC;
	q[1] = off;
	q[2] = seed;
	for (i = 3; i < SECTOR / 8; i++)
		q[i] = s = mix64(s + i);
}

static void add(struct wr *w, int *n, uint64_t off, uint64_t len,
		uint64_t seed)
{
	w[*n] = (struct wr){ off, len, seed + *n + 1 };
	(*n)++;
}

static int layout(uint64_t bs, uint64_t seed, struct wr *w)
{
	static const uint64_t blocks[] = { 1, 3, 5, 17 };
	uint64_t off = 0, mib = 1 << 20, big = 0;
	unsigned int i;
	int n = 0;

	for (i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
		if (blocks[i] * bs > mib)
			continue;
		add(w, &n, off, blocks[i] * bs, seed);
		off += (blocks[i] + 1) * bs;	/* a gap of one block */
	}
	if (131072 >= bs) {
		off = (off + 131071) & ~131071ULL;
		add(w, &n, off, 131072, seed);
		off += 131072 + bs;
	}
	/* 1 MiB, placed off any 1 MiB boundary when the block allows */
	off = (off + mib - 1) & ~(mib - 1);
	if (bs < mib / 2)
		off += bs;
	big = off;
	add(w, &n, off, mib, seed);
	/* 2 blocks over the end of the 1 MiB write */
	add(w, &n, big + mib - bs, 2 * bs, seed);
	/* 3 blocks over its middle */
	add(w, &n, big + mib / 2 - bs, 3 * bs, seed);
	return n;
}

static int geo(int argc, char **argv)
{
	uint64_t bs, seed, s, i, bad = 0;
	struct wr w[MAXW];
	int fd, n, k, write_mode;
	uint8_t *buf;

	if (argc != 6)
		return -1;
	write_mode = !strcmp(argv[2], "write");
	if (!write_mode && strcmp(argv[2], "check"))
		return -1;
	bs = strtoull(argv[4], NULL, 0);
	seed = strtoull(argv[5], NULL, 0) << 8;
	if (bs < 512 || (bs & (bs - 1)))
		return -1;
	n = layout(bs, seed, w);
	buf = xalloc(2 << 20);
	fd = open_dev(argv[3], write_mode ? O_WRONLY : O_RDONLY);
	for (k = 0; k < n; k++) {
		if (write_mode) {
			for (s = 0; s < w[k].len; s += SECTOR)
				fill_sector(buf + s, w[k].off + s, w[k].seed);
			printf("write %d %" PRIu64 " %" PRIu64 "\n", k, w[k].off,
			       w[k].len);
			fflush(stdout);
			if (pwrite(fd, buf, w[k].len, w[k].off) !=
			    (ssize_t)w[k].len) {
				printf("FAILED: write %d at %" PRIu64 " len %" PRIu64 ": %s\n",
				       k, w[k].off, w[k].len, strerror(errno));
				return 1;
			}
			continue;
		}
		if (pread(fd, buf, w[k].len, w[k].off) != (ssize_t)w[k].len) {
			printf("FAILED: read at %" PRIu64 " len %" PRIu64 ": %s\n",
			       w[k].off, w[k].len, strerror(errno));
			return 1;
		}
		for (s = 0; s < w[k].len; s += SECTOR) {
			uint64_t off = w[k].off + s, want = 0;
			uint8_t exp[SECTOR];
			const uint64_t *got = (const uint64_t *)(buf + s);

			for (i = 0; i < (uint64_t)n; i++)
				if (off >= w[i].off && off < w[i].off + w[i].len)
					want = w[i].seed;
			if (want != w[k].seed)
				continue;	/* checked with the newer write */
			fill_sector(exp, off, want);
			if (!memcmp(exp, buf + s, SECTOR))
				continue;
			if (bad++ < 5)
				printf("bad sector at byte %" PRIu64 " (write %d): holds %s offset %" PRIu64 " seed %" PRIu64 "%s, want seed %" PRIu64 "\n",
				       off, k,
				       got[0] == BLK_MAGIC ? "pattern" : "non-pattern",
				       got[1], got[2],
				       got[0] == BLK_MAGIC && got[2] < want &&
				       got[2] >= seed ? " (an OLDER write: stale)" : "",
				       want);
		}
	}
	close(fd);
	if (write_mode) {
		printf("wrote %d writes\n", n);
		return 0;
	}
	printf("checked %d writes: %" PRIu64 " bad sectors\n", n, bad);
	return bad ? 1 : 0;
}

/* ---- load / verify ---- */

struct blkhdr {
	uint64_t magic, block, gen;
	uint32_t crc, pad;
};

static uint64_t *acked, *failed;
static int atleast;	/* verify: any gen >= the acknowledged one will do */
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void make_block(uint8_t *p, uint64_t bs, uint64_t b, uint64_t gen)
{
	struct blkhdr *h = (struct blkhdr *)p;
	uint64_t *q = (uint64_t *)p, s = mix64(b * 1000003 + gen);
	uint64_t i;

	for (i = sizeof(*h) / 8; i < bs / 8; i++)
		q[i] = s = mix64(s + i);
	h->magic = BLK_MAGIC;
	h->block = b;
	h->gen = gen;
	h->pad = 0;
	h->crc = 0;
	h->crc = crc32c(p, bs);
}

/* 0: valid block b, *gen set; 1: zero; 2: garbage; 3: other block */
static int parse_block(uint8_t *p, uint64_t bs, uint64_t b, uint64_t *gen)
{
	struct blkhdr *h = (struct blkhdr *)p;
	uint32_t c = h->crc;
	uint64_t i;
	int r;

	if (h->magic != BLK_MAGIC) {
		for (i = 0; i < bs; i++)
			if (p[i])
				return 2;
		return 1;
	}
	h->crc = 0;
	r = crc32c(p, bs) == c ? 0 : 2;
	h->crc = c;
	if (!r && h->block != b)
		return 3;
	*gen = h->gen;
	return r;
}

struct counts {
	uint64_t writes, write_errs, reads, read_errs, bad, stale;
};

/* check block b's content; returns 1 on a violation */
static int judge(uint8_t *p, uint64_t bs, uint64_t b, struct counts *c,
		 const char *when)
{
	uint64_t gen = 0;
	int k = parse_block(p, bs, b, &gen);

	/* never acknowledged: its old content is unknown */
	if (!acked[b])
		return 0;
	/* failed[b]: the first failed write since the last acknowledged one;
	 * every later write of b failed too, any of them may be on the media */
	if (k == 0 && (gen == acked[b] || (failed[b] && gen >= failed[b])))
		return 0;
	if (k == 0 && atleast && gen >= acked[b])
		return 0;
	if (k == 0 && gen < acked[b])
		c->stale++;
	else
		c->bad++;
	if (c->stale + c->bad <= 10)
		printf("%s: block %" PRIu64 ": %s (gen %" PRIu64 "), want gen %" PRIu64 "%s\n",
		       when, b,
		       k == 0 ? (gen < acked[b] ? "STALE" : "unexpected gen") :
		       k == 1 ? "zeros" : k == 2 ? "garbage" : "another block",
		       gen, acked[b], failed[b] ? " or the gen of a failed write" : "");
	return 1;
}

static void save_state(const char *path, uint64_t n)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(acked, 8, n, f) != n || fwrite(failed, 8, n, f) != n ||
	    fclose(f)) {
		fprintf(stderr, "wowpat: cannot write %s\n", path);
		exit(2);
	}
}

static void load_state(const char *path, uint64_t n)
{
	FILE *f = fopen(path, "r");

	if (!f || fread(acked, 8, n, f) != n || fread(failed, 8, n, f) != n) {
		fprintf(stderr, "wowpat: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
}

static void summary(const char *what, struct counts *c, int eio_ok)
{
	printf("%s: %" PRIu64 " writes (%" PRIu64 " failed), %" PRIu64 " reads (%" PRIu64 " failed), %" PRIu64 " stale, %" PRIu64 " bad\n",
	       what, c->writes, c->write_errs, c->reads, c->read_errs,
	       c->stale, c->bad);
	(void)eio_ok;
}

static int load(int argc, char **argv)
{
	uint64_t secs, seed, nb, bs, gen = 0, op = 0, b;
	struct counts c = { 0 };
	int fd, eio_ok;
	time_t end;
	uint8_t *buf;

	if (argc < 8 || argc > 9)
		return -1;
	secs = strtoull(argv[4], NULL, 0);
	seed = strtoull(argv[5], NULL, 0);
	nb = strtoull(argv[6], NULL, 0);
	bs = strtoull(argv[7], NULL, 0);
	eio_ok = argc == 9 && !strcmp(argv[8], "eio-ok");
	if (!nb || bs < 512 || (bs & (bs - 1)))
		return -1;
	gen = seed << 32;	/* a later load with a higher SEED writes newer gens */
	acked = calloc(nb, 8);
	failed = calloc(nb, 8);
	buf = xalloc(bs);
	if (!acked || !failed)
		return 2;
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	fd = open_dev(argv[2], O_RDWR);
	end = time(NULL) + secs;
	while (!stop && time(NULL) < end) {
		uint64_t r = mix64(seed * 7919 + op++);

		b = r % nb;
		if ((op & 3) == 0) {
			/* read a block that was written */
			if (!acked[b] && !failed[b])
				continue;
			c.reads++;
			if (pread(fd, buf, bs, b * bs) != (ssize_t)bs) {
				c.read_errs++;
				if (!eio_ok && c.read_errs <= 5)
					printf("read error at block %" PRIu64 ": %s\n",
					       b, strerror(errno));
				continue;
			}
			judge(buf, bs, b, &c, "load read");
			continue;
		}
		make_block(buf, bs, b, ++gen);
		c.writes++;
		if (pwrite(fd, buf, bs, b * bs) == (ssize_t)bs) {
			acked[b] = gen;
			failed[b] = 0;
		} else {
			c.write_errs++;
			if (!failed[b])
				failed[b] = gen;
			if (!eio_ok && c.write_errs <= 5)
				printf("write error at block %" PRIu64 ": %s\n",
				       b, strerror(errno));
		}
	}
	close(fd);
	save_state(argv[3], nb);
	summary("load", &c, eio_ok);
	if (c.stale || c.bad)
		return 1;
	return !eio_ok && (c.write_errs || c.read_errs);
}

static int verify(int argc, char **argv)
{
	uint64_t nb, bs, b, written = 0;
	struct counts c = { 0 };
	int fd, eio_ok;
	uint8_t *buf;

	if (argc < 6 || argc > 7)
		return -1;
	nb = strtoull(argv[4], NULL, 0);
	bs = strtoull(argv[5], NULL, 0);
	eio_ok = argc == 7 && !strcmp(argv[6], "eio-ok");
	atleast = argc == 7 && !strcmp(argv[6], "atleast");
	if (!nb || bs < 512 || (bs & (bs - 1)))
		return -1;
	acked = calloc(nb, 8);
	failed = calloc(nb, 8);
	buf = xalloc(bs);
	if (!acked || !failed)
		return 2;
	load_state(argv[3], nb);
	fd = open_dev(argv[2], O_RDONLY);
	for (b = 0; b < nb; b++) {
		if (!acked[b] && !failed[b])
			continue;
		written++;
		c.reads++;
		if (pread(fd, buf, bs, b * bs) != (ssize_t)bs) {
			c.read_errs++;
			if (!eio_ok && c.read_errs <= 5)
				printf("read error at block %" PRIu64 ": %s\n", b,
				       strerror(errno));
			continue;
		}
		judge(buf, bs, b, &c, "verify");
	}
	close(fd);
	printf("verify: %" PRIu64 " written blocks: ", written);
	summary("verify", &c, eio_ok);
	if (c.stale || c.bad)
		return 1;
	return !eio_ok && c.read_errs;
}

int main(int argc, char **argv)
{
	int r = -1;

	crc_init();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "geo"))
		r = geo(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "load"))
		r = load(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "verify"))
		r = verify(argc, argv);
	if (r < 0) {
		fprintf(stderr,
			"usage: wowpat geo write|check DEV BS SEED\n"
			"       wowpat load DEV STATE SECONDS SEED NBLOCKS BS [eio-ok]\n"
			"       wowpat verify DEV STATE NBLOCKS BS [eio-ok|atleast]\n");
		return 2;
	}
	return r;
}
