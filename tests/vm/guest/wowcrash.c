// SPDX-License-Identifier: GPL-2.0
/*
 * wowcrash: a crash-consistency load and checker for block devices, run in
 * the dm-wow test VM (tests/scenarios/crash-*.sh).
 *
 *   wowcrash write DEV JDIR BOOT SEED [SECONDS]
 *	T threads, each owning a disjoint set of 4 KiB blocks of DEV, write
 *	self-describing blocks with O_DIRECT until killed (or for SECONDS).
 *	After an fdatasync() returns, the writes completed before it began are
 *	appended to the thread's journal JDIR/j-BOOT-T.txt (fsync'd, so the
 *	host has it before the guest dies); an O_DSYNC (FUA) write is
 *	journalled as soon as it returns.  The journal therefore lists only
 *	writes the block layer promised to be durable.
 *
 *   wowcrash check DEV JDIR [OBSERVED]
 *	Reads every journal (and every earlier observation file JDIR/o-*.txt),
 *	computes for each owned block the newest generation proven durable
 *	(g_min), reads the whole span of DEV and fails if any owned block is
 *	not a valid record of that block with generation >= g_min (invariants
 *	2 and 3), or if any block of the span not owned by anyone is not zero
 *	(misdirected writes).  A block that was never journalled may be zero
 *	or any valid record of itself.  With OBSERVED, the generations seen
 *	are written to JDIR/o-OBSERVED.txt: what a recovered device served
 *	was on the media, so a later recovery must not go back before it.
 *
 *   wowcrash forge DEV JDIR old|garbage|zero|swap
 *	Test the checker: damage one journalled block in a way check must
 *	catch (an older valid generation, a bad checksum, zeros, another
 *	block's record), with O_DIRECT + fsync.
 *
 *   wowcrash span
 *	Print "OFFSET_BYTES LENGTH_BYTES" of the span wowcrash uses.
 *
 * When JDIR is a block device (a region of its own, e.g. a slice of the
 * same dm-log-writes device as DEV), the journal is kept on it: one FUA
 * entry (512 bytes, crc32c) per batch, at slot = entry number, so a crash
 * state of that device holds a subset of the acknowledged entries.  Then
 * `check DEV JDEV [OBS_OUT [OBS_IN]]` takes observation files by path,
 * and WOWCRASH_DISCARD=1 makes `write` discard some owned blocks
 * (journalled before the discard is issued: the block is unspecified until
 * its next journalled write).  WOWCRASH_SPAN="OFFSET_MIB LENGTH_MIB" moves
 * the span; WOWCRASH_WRITES=N stops each thread after N writes; SIGALRM
 * stops `write`.
 *
 * Block layout (little endian): magic "WOWCRASH", block number (4 KiB units
 * from the start of DEV), generation, thread, crc32c of the block with the
 * crc field zero; the rest is a pseudo-random fill from (block, gen).
 * Generation = BOOT * 1e9 + a per-thread counter, so it grows per block.
 *
 * Exit status: 0 ok, 1 violations found, 2 usage or I/O error.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BS		4096u
#define NTHREADS	4u
#define STRIDE		32u			/* blocks per slot */
#define HOT_BLOCKS	64u			/* per thread */
#define GEN_PER_BOOT	1000000000ull
#define MAGIC		0x4853415243574f57ull	/* "WOWCRASH" */

/*
 * The span: by default 256 MiB from 64 MiB into DEV (2048 owned blocks per
 * thread); WOWCRASH_SPAN="OFFSET_MIB LENGTH_MIB" moves and sizes it (the
 * length a multiple of 1 MiB, at least 8 MiB).
 */
static unsigned int per_thread = 2048;		/* owned blocks per thread */
static uint64_t span_offset = 64ull << 20;	/* bytes into DEV */
/*
 * WOWCRASH_RUN=N (2..256): writes of up to N contiguous blocks.  Then each
 * thread owns whole chunks of N blocks, the threads' chunks taking turns
 * (every block of the span is owned), and a quarter of the writes are one
 * I/O of 1..N blocks inside one chunk, each block its own generation.
 */
static unsigned int run_max = 1;
static unsigned int span_stride = STRIDE;	/* span blocks per owned one */
#define SPAN_BLOCKS	((uint64_t)per_thread * span_stride)
#define FIRST_BLOCK	(span_offset / BS)

/*
 * Block journal (JDIR is a block device): 512-byte entries, each a batch of
 * (block, generation) items written with O_DIRECT | O_DSYNC (FUA) at slot
 * = entry number.  A discard item has JDISCARD set in its generation and
 * is journalled before the discard is issued.
 */
#define JSECT		512u
#define JMAGIC		0x314c4e524a574f57ull	/* "WOWJRNL1" */
#define JITEMS		30u
#define JDISCARD	(1ull << 63)

struct jitem {
	uint64_t block;
	uint64_t gen;
};

struct jent {
	uint64_t magic;
	uint64_t slot;
	uint32_t thread;
	uint32_t n;
	uint32_t crc;
	uint32_t pad;
	struct jitem item[JITEMS];
};

struct hdr {
	uint64_t magic;
	uint64_t block;
	uint64_t gen;
	uint32_t thread;
	uint32_t crc;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "wowcrash: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

/* ---- crc32c (Castagnoli), table driven ---- */

#include "crc32c.h"
#include "mix64.h"

/* ---- ownership ---- */

/* Block number (in DEV, 4 KiB units) of thread t's i-th block. */
static uint64_t owned_block(unsigned int t, unsigned int i)
{
	if (run_max > 1)
		return FIRST_BLOCK + (uint64_t)(i / run_max) * run_max * NTHREADS +
		       t * run_max + i % run_max;
	return FIRST_BLOCK + (uint64_t)i * STRIDE + t * (STRIDE / NTHREADS) +
	       (i * 7u + t) % (STRIDE / NTHREADS);
}

/* Owner thread of a block of the span, or -1. */
static int owner_of(uint64_t b)
{
	uint64_t rel = b - FIRST_BLOCK;
	unsigned int i = rel / STRIDE, t = (rel % STRIDE) / (STRIDE / NTHREADS);

	if (b < FIRST_BLOCK || rel >= SPAN_BLOCKS)
		return -1;
	if (run_max > 1)
		return (rel % ((uint64_t)run_max * NTHREADS)) / run_max;
	return owned_block(t, i) == b ? (int)t : -1;
}

/* ---- block contents ---- */

static void fill_block(void *buf, uint64_t b, uint64_t gen, unsigned int t)
{
	uint64_t *w = buf, s = mix64(b * 0x9e3779b97f4a7c15ull ^ gen);
	struct hdr *h = buf;
	unsigned int i;

	for (i = sizeof(*h) / 8; i < BS / 8; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		w[i] = s;
	}
	h->magic = MAGIC;
	h->block = b;
	h->gen = gen;
	h->thread = t;
	h->crc = 0;
	h->crc = crc32c(buf, BS);
}

enum verdict { V_ZERO, V_OK, V_BAD };

/* Is buf a valid record of block b? Fills *gen. */
static enum verdict judge_block(const void *buf, uint64_t b, uint64_t *gen,
				const char **why)
{
	static const uint8_t zero[BS];
	struct hdr h;
	uint8_t tmp[BS];

	if (!memcmp(buf, zero, BS))
		return V_ZERO;
	memcpy(&h, buf, sizeof(h));
	*gen = h.gen;
	if (h.magic != MAGIC) {
		*why = "garbage (no magic)";
		return V_BAD;
	}
	memcpy(tmp, buf, BS);
	((struct hdr *)tmp)->crc = 0;
	if (crc32c(tmp, BS) != h.crc) {
		*why = "bad checksum";
		return V_BAD;
	}
	if (h.block != b) {
		*why = "record of another block";
		return V_BAD;
	}
	if ((int)h.thread != owner_of(b)) {
		*why = "wrong owner thread";
		return V_BAD;
	}
	return V_OK;
}

/* ---- journals ---- */

static uint64_t line_check(uint64_t b, uint64_t g)
{
	return mix64(b ^ mix64(g)) % 1000003u;
}


/* Append lines to fd and make them durable on the host; die on error. */
static void journal_append(int fd, const uint64_t *blk, const uint64_t *gen,
			   unsigned int n)
{
	char buf[64 * 64];
	unsigned int i, len = 0;

	for (i = 0; i < n; i++) {
		len += snprintf(buf + len, sizeof(buf) - len,
				"%" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
				blk[i], gen[i], line_check(blk[i], gen[i]));
		if (len > sizeof(buf) - 64 || i == n - 1) {
			if (write(fd, buf, len) != (ssize_t)len)
				die("journal write: %s", strerror(errno));
			len = 0;
		}
	}
	if (fsync(fd))
		die("journal fsync: %s", strerror(errno));
}

/* ---- block journal ---- */

static int jblock;		/* JDIR is a block device */
static uint64_t jslots;		/* entries it holds */
static uint64_t jnext;		/* next free slot (atomic) */
static volatile int jfull;

static uint32_t jent_crc(struct jent *e)
{
	uint32_t saved = e->crc, c;

	e->crc = 0;
	c = crc32c(e, sizeof(*e));
	e->crc = saved;
	return c;
}

static int jent_valid(struct jent *e, uint64_t slot)
{
	return e->magic == JMAGIC && e->slot == slot && e->n >= 1 &&
	       e->n <= JITEMS && e->crc == jent_crc(e);
}

static int all_zero(const void *buf, size_t len)
{
	const uint64_t *p = buf;
	size_t i;

	for (i = 0; i < len / sizeof(*p); i++)
		if (p[i])
			return 0;
	return 1;
}

static int is_blockdev(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISBLK(st.st_mode);
}

/*
 * Read the block journal: call fn for each item of each valid entry;
 * returns the number of valid entries and sets jnext past the last one.
 * Slots are taken in order from one counter and each writer has one entry
 * in flight, so the journal is its entries, a gap of a few slots at most,
 * then zeros to its end: the read stops at the first chunk of 2048 slots
 * that is all zeros (most of a 32 MiB journal slice, and under a debug
 * kernel most of the time a check takes).
 */
static uint64_t bjournal_read(const char *path,
			      void (*fn)(uint64_t b, uint64_t g))
{
	uint64_t size, i, valid = 0, chunk = 2048, j;
	struct jent *buf;
	int fd = open(path, O_RDONLY | O_DIRECT);

	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	size = lseek(fd, 0, SEEK_END);
	jslots = size / JSECT;
	if (posix_memalign((void **)&buf, BS, chunk * JSECT))
		die("out of memory");
	for (i = 0; i < jslots; i += chunk) {
		uint64_t n = jslots - i < chunk ? jslots - i : chunk;

		if (pread(fd, buf, n * JSECT, i * JSECT) != (ssize_t)(n * JSECT))
			die("read %s: %s", path, strerror(errno));
		if (all_zero(buf, n * JSECT))
			break;
		for (j = 0; j < n; j++) {
			struct jent *e = &buf[j];
			unsigned int k;

			if (!jent_valid(e, i + j))
				continue;
			valid++;
			jnext = i + j + 1;
			for (k = 0; fn && k < e->n; k++)
				fn(e->item[k].block, e->item[k].gen);
		}
	}
	free(buf);
	close(fd);
	return valid;
}

/* ---- write ---- */

struct wctx {
	const char *dev, *jdir;
	unsigned int t, boot;
	uint64_t seed, max_writes;
	int discards;
	volatile int *stop;
	uint64_t writes, flushes, fuas, nr_discards, run_writes;
	struct jent *jent;
};

static uint64_t rng(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return mix64(*s);
}

/*
 * Journal n items; in block mode as one FUA entry (n <= JITEMS).  A full
 * journal stops every writer (the items are not journalled: harmless).
 */
static void journal(struct wctx *c, int jfd, const uint64_t *blk,
		    const uint64_t *gen, unsigned int n)
{
	struct jent *e = c->jent;
	uint64_t slot;
	unsigned int i;

	if (!jblock) {
		journal_append(jfd, blk, gen, n);
		return;
	}
	slot = __atomic_fetch_add(&jnext, 1, __ATOMIC_SEQ_CST);
	if (slot >= jslots) {
		jfull = 1;
		*c->stop = 1;
		return;
	}
	memset(e, 0, sizeof(*e));
	e->magic = JMAGIC;
	e->slot = slot;
	e->thread = c->t;
	e->n = n;
	for (i = 0; i < n; i++) {
		e->item[i].block = blk[i];
		e->item[i].gen = gen[i];
	}
	e->crc = jent_crc(e);
	if (pwrite(jfd, e, JSECT, slot * JSECT) != JSECT)
		die("journal write at slot %" PRIu64 ": %s", slot,
		    strerror(errno));
}

/* Journal n items, as many entries as they need. */
static void journal_items(struct wctx *c, int jfd, const uint64_t *blk,
			  const uint64_t *gen, unsigned int n)
{
	unsigned int j, m;

	for (j = 0; j < n && !*c->stop; j += m) {
		m = n - j < JITEMS ? n - j : JITEMS;
		journal(c, jfd, blk + j, gen + j, m);
	}
}

/* Is block @b among the @n blocks of @list? */
static int pending(const uint64_t *list, unsigned int n, uint64_t b)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (list[i] == b)
			return 1;
	return 0;
}

/*
 * One write of 1..run_max contiguous blocks of one of this thread's
 * chunks (the pending unflushed writes are flushed and journalled first:
 * c->pblk/pgen), FUA or followed by a flush, then journalled.
 */
static void write_run(struct wctx *c, int fd, int dfd, int jfd, void *buf,
		      uint64_t r, uint64_t *counter, const uint64_t *pblk,
		      const uint64_t *pgen, unsigned int np)
{
	uint64_t blk[256], gen[256];
	unsigned int chunks = per_thread / run_max, k, off, ch, j;
	int fua = (r >> 40) % 4 == 0;

	if (np) {
		if (fdatasync(fd))
			die("fdatasync: %s", strerror(errno));
		c->flushes++;
		journal_items(c, jfd, pblk, pgen, np);
	}
	k = 1 + (r >> 24) % run_max;
	off = (r >> 32) % (run_max - k + 1);
	ch = (r >> 44) % 2 ? (r >> 48) % 2 : (r >> 48) % chunks;
	for (j = 0; j < k; j++) {
		blk[j] = owned_block(c->t, ch * run_max + off + j);
		gen[j] = c->boot * GEN_PER_BOOT + ++*counter;
		fill_block((char *)buf + (size_t)j * BS, blk[j], gen[j], c->t);
	}
	if (pwrite(fua ? dfd : fd, buf, (size_t)k * BS, blk[0] * BS) !=
	    (ssize_t)(k * BS))
		die("write blocks %" PRIu64 "+%u: %s", blk[0], k,
		    strerror(errno));
	c->writes++;
	c->run_writes++;
	if (fua) {
		c->fuas++;
	} else {
		if (fdatasync(fd))
			die("fdatasync: %s", strerror(errno));
		c->flushes++;
	}
	journal_items(c, jfd, blk, gen, k);
}

static void *writer(void *arg)
{
	struct wctx *c = arg;
	uint64_t s = c->seed * 1000 + c->t, counter = 0;
	uint64_t pblk[64], pgen[64], dblk[64];
	unsigned int np = 0, nd = 0, flush_every = 8;
	char path[4096];
	void *buf;
	int fd, dfd, jfd;

	if (jblock) {
		jfd = open(c->jdir, O_WRONLY | O_DIRECT | O_DSYNC);
		if (jfd < 0)
			die("%s: %s", c->jdir, strerror(errno));
	} else {
		snprintf(path, sizeof(path), "%s/j-%u-%u.txt", c->jdir,
			 c->boot, c->t);
		jfd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (jfd < 0)
			die("%s: %s", path, strerror(errno));
	}
	fd = open(c->dev, O_RDWR | O_DIRECT);
	dfd = open(c->dev, O_RDWR | O_DIRECT | O_DSYNC);
	if (fd < 0 || dfd < 0)
		die("%s: %s", c->dev, strerror(errno));
	if (posix_memalign(&buf, BS, (size_t)run_max * BS) ||
	    posix_memalign((void **)&c->jent, BS, sizeof(*c->jent)))
		die("out of memory");

	while (!*c->stop && (!c->max_writes || c->writes < c->max_writes)) {
		uint64_t r = rng(&s);
		unsigned int i = r % 2 ? (r >> 8) % HOT_BLOCKS :
					 (r >> 8) % per_thread;
		uint64_t b = owned_block(c->t, i);
		uint64_t gen = c->boot * GEN_PER_BOOT + ++counter;
		int fua = (r >> 40) % 8 == 0;

		if (c->discards && (r >> 32) % 32 == 0) {
			/* journal the intent first: once the discard may
			 * have reached the media, the journal says so */
			uint64_t dg = gen | JDISCARD, range[2] = { b * BS, BS };

			journal(c, jfd, &b, &dg, 1);
			if (*c->stop)
				break;
			if (ioctl(fd, BLKDISCARD, range))
				die("discard block %" PRIu64 ": %s", b,
				    strerror(errno));
			c->nr_discards++;
			if (nd < 64)
				dblk[nd++] = b;
			continue;
		}
		if (run_max > 1 && (r >> 20) % 4 == 0) {
			write_run(c, fd, dfd, jfd, buf, r, &counter, pblk,
				  pgen, np);
			np = 0;
			nd = 0;
			continue;
		}
		/*
		 * dm-log-writes logs a FUA write when it completes but an
		 * unflushed write or discard only at the next flush: a FUA
		 * write over an unflushed one of the same block would land
		 * before it in the log, a state no disk shows (the later write
		 * wins on a disk).  So the unflushed ones are flushed first.
		 */
		if (fua && (pending(pblk, np, b) || pending(dblk, nd, b) ||
			    nd >= 64)) {
			if (fdatasync(fd))
				die("fdatasync: %s", strerror(errno));
			c->flushes++;
			if (np)
				journal(c, jfd, pblk, pgen, np);
			np = 0;
			nd = 0;
		}
		fill_block(buf, b, gen, c->t);
		if (pwrite(fua ? dfd : fd, buf, BS, b * BS) != BS)
			die("write block %" PRIu64 ": %s", b, strerror(errno));
		c->writes++;
		if (fua) {
			c->fuas++;
			journal(c, jfd, &b, &gen, 1);
		} else {
			pblk[np] = b;
			pgen[np] = gen;
			np++;
		}
		if (np >= flush_every ||
		    (np && c->max_writes && c->writes >= c->max_writes)) {
			if (fdatasync(fd))
				die("fdatasync: %s", strerror(errno));
			c->flushes++;
			journal(c, jfd, pblk, pgen, np);
			np = 0;
			nd = 0;
			flush_every = 2 + (r >> 48) % 14;
		}
	}
	free(c->jent);
	free(buf);
	close(fd);
	close(dfd);
	close(jfd);
	return NULL;
}

static volatile int stop_flag;

static void on_alarm(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int cmd_write(int argc, char **argv)
{
	struct wctx ctx[NTHREADS];
	pthread_t th[NTHREADS];
	uint64_t w = 0, f = 0, u = 0, d = 0, rw = 0, jstart = 0;
	const char *e;
	unsigned int t;

	if (argc < 4)
		die("usage: write DEV JDIR BOOT SEED [SECONDS]");
	signal(SIGALRM, on_alarm);	/* also: kill -ALRM stops it */
	if (argc > 4 && atoi(argv[4]) > 0)
		alarm(atoi(argv[4]));
	jblock = is_blockdev(argv[1]);
	if (jblock) {
		bjournal_read(argv[1], NULL);
		jstart = jnext;
	}
	for (t = 0; t < NTHREADS; t++) {
		ctx[t] = (struct wctx){ .dev = argv[0], .jdir = argv[1],
			.t = t, .boot = atoi(argv[2]),
			.seed = strtoull(argv[3], NULL, 0), .stop = &stop_flag };
		e = getenv("WOWCRASH_WRITES");
		if (e)
			ctx[t].max_writes = strtoull(e, NULL, 0);
		e = getenv("WOWCRASH_DISCARD");
		ctx[t].discards = jblock && e && atoi(e);
		if (pthread_create(&th[t], NULL, writer, &ctx[t]))
			die("pthread_create failed");
	}
	for (t = 0; t < NTHREADS; t++) {
		pthread_join(th[t], NULL);
		w += ctx[t].writes;
		f += ctx[t].flushes;
		u += ctx[t].fuas;
		d += ctx[t].nr_discards;
		rw += ctx[t].run_writes;
	}
	printf("wowcrash write: %" PRIu64 " writes, %" PRIu64
	       " flushes, %" PRIu64 " FUA writes", w, f, u);
	if (run_max > 1)
		printf(", %" PRIu64 " of up to %u blocks", rw, run_max);
	if (jblock)
		printf(", %" PRIu64 " discards, journal entries %" PRIu64
		       "..%" PRIu64 " of %" PRIu64 "%s", d, jstart,
		       jnext < jslots ? jnext : jslots, jslots,
		       jfull ? " (full: stopped)" : "");
	printf("\n");
	return 0;
}

/* ---- check ---- */

/* Per owned block: the durable lower bounds and what was read. */
struct bound {
	uint64_t journal;	/* newest journalled generation */
	uint64_t seen;		/* newest generation an earlier check saw */
	uint64_t discard;	/* newest journalled discard (its counter) */
};

static struct bound *bounds;	/* indexed by block - FIRST_BLOCK */
static uint64_t nr_jlines, nr_bad_jlines, nr_olines;

static void read_journal(const char *path, int observed)
{
	FILE *f = fopen(path, "r");
	char line[256];

	if (!f)
		die("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		uint64_t b, g, k;
		char nl;

		/* only whole lines with a good check value count (a power cut
		 * may leave a torn last line) */
		if (sscanf(line, "%" SCNu64 " %" SCNu64 " %" SCNu64 "%c",
			   &b, &g, &k, &nl) != 4 || nl != '\n' ||
		    k != line_check(b, g) || owner_of(b) < 0) {
			nr_bad_jlines++;
			continue;
		}
		if (observed) {
			nr_olines++;
			if (g > bounds[b - FIRST_BLOCK].seen)
				bounds[b - FIRST_BLOCK].seen = g;
		} else {
			nr_jlines++;
			if (g > bounds[b - FIRST_BLOCK].journal)
				bounds[b - FIRST_BLOCK].journal = g;
		}
	}
	fclose(f);
}

static void bjournal_item(uint64_t b, uint64_t g)
{
	struct bound *bd;

	if (owner_of(b) < 0) {
		nr_bad_jlines++;
		return;
	}
	nr_jlines++;
	bd = &bounds[b - FIRST_BLOCK];
	if (g & JDISCARD) {
		g &= ~JDISCARD;
		if (g > bd->discard)
			bd->discard = g;
	} else if (g > bd->journal) {
		bd->journal = g;
	}
}

static void read_journals(const char *jdir)
{
	DIR *d;
	struct dirent *e;
	char path[4096];

	if (jblock) {
		bjournal_read(jdir, bjournal_item);
		return;
	}
	d = opendir(jdir);
	if (!d)
		die("%s: %s", jdir, strerror(errno));
	while ((e = readdir(d))) {
		int j = !strncmp(e->d_name, "j-", 2),
		    o = !strncmp(e->d_name, "o-", 2);

		if (!j && !o)
			continue;
		snprintf(path, sizeof(path), "%s/%s", jdir, e->d_name);
		read_journal(path, o);
	}
	closedir(d);
}

static unsigned int nr_shown;

static void violation(const char *fmt, ...)
{
	va_list ap;

	if (++nr_shown > 20)
		return;
	va_start(ap, fmt);
	printf("VIOLATION: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

static int cmd_check(int argc, char **argv)
{
	uint64_t checked = 0, zero = 0, newer = 0, equal = 0, never = 0;
	uint64_t viol = 0, stray = 0, chunk_blocks = 256, i, j, disc = 0;
	FILE *obs = NULL;
	uint8_t *buf;
	int fd;

	if (argc < 2)
		die("usage: check DEV JDIR [OBSERVED]");
	bounds = calloc(SPAN_BLOCKS, sizeof(*bounds));
	if (!bounds || posix_memalign((void **)&buf, BS, chunk_blocks * BS))
		die("out of memory");
	jblock = is_blockdev(argv[1]);
	read_journals(argv[1]);
	/* block journal: [OBS_OUT [OBS_IN]], observation files by path */
	if (jblock && argc > 3)
		read_journal(argv[3], 1);
	if (argc > 2) {
		char path[4096];

		if (jblock)
			snprintf(path, sizeof(path), "%s", argv[2]);
		else
			snprintf(path, sizeof(path), "%s/o-%s.txt", argv[1],
				 argv[2]);
		obs = fopen(path, "w");
		if (!obs)
			die("%s: %s", path, strerror(errno));
	}
	fd = open(argv[0], O_RDONLY | O_DIRECT);
	if (fd < 0)
		die("%s: %s", argv[0], strerror(errno));

	for (i = 0; i < SPAN_BLOCKS; i += chunk_blocks) {
		ssize_t want = chunk_blocks * BS;

		if (pread(fd, buf, want, (FIRST_BLOCK + i) * BS) != want)
			die("read %s at block %" PRIu64 ": %s", argv[0],
			    FIRST_BLOCK + i, strerror(errno));
		for (j = 0; j < chunk_blocks; j++) {
			uint64_t b = FIRST_BLOCK + i + j, gen = 0;
			struct bound *bd = &bounds[i + j];
			uint64_t min = bd->journal > bd->seen ? bd->journal :
				       bd->seen;
			const char *why = "";
			enum verdict v = judge_block(buf + j * BS, b, &gen,
						     &why);

			if (owner_of(b) < 0) {
				if (v != V_ZERO) {
					stray++;
					violation("block %" PRIu64 " is owned by no thread but is not zero (%s gen %" PRIu64 ")",
						  b, v == V_OK ? "a record," :
						  why, gen);
				}
				continue;
			}
			checked++;
			/* discarded since the newest bound: unspecified
			 * content, but never another block's or garbage */
			if (bd->discard > bd->journal &&
			    bd->discard > bd->seen) {
				disc++;
				min = 0;
				bd->journal = 0;
				bd->seen = 0;
			}
			if (v == V_BAD) {
				viol++;
				violation("block %" PRIu64 ": %s (journal %" PRIu64 ", seen %" PRIu64 ")",
					  b, why, bd->journal, bd->seen);
				continue;
			}
			if (v == V_ZERO) {
				zero++;
				if (min) {
					viol++;
					violation("block %" PRIu64 " reads zeros but generation %" PRIu64 " was %s",
						  b, min, bd->journal >= bd->seen ?
						  "journalled durable" :
						  "seen after an earlier recovery");
				}
				continue;
			}
			if (obs)
				fprintf(obs, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
					b, gen, line_check(b, gen));
			if (!min)
				never++;
			else if (gen == min)
				equal++;
			else if (gen > min)
				newer++;
			if (gen < bd->journal) {
				viol++;
				violation("block %" PRIu64 " has generation %" PRIu64 ", older than journalled durable %" PRIu64 " (lost or resurrected)",
					  b, gen, bd->journal);
			} else if (gen < bd->seen) {
				viol++;
				violation("block %" PRIu64 " has generation %" PRIu64 ", older than %" PRIu64 " seen after an earlier recovery (resurrected)",
					  b, gen, bd->seen);
			}
		}
	}
	close(fd);
	if (obs && (fflush(obs) || fsync(fileno(obs)) || fclose(obs)))
		die("cannot write the observation file");
	printf("wowcrash check %s: %" PRIu64 " journal lines (%" PRIu64
	       " torn/bad ignored), %" PRIu64 " observed; %" PRIu64
	       " blocks checked: %" PRIu64 " zero, %" PRIu64
	       " never journalled, %" PRIu64 " at the journalled generation, %"
	       PRIu64 " newer than the journal, %" PRIu64 " discarded; %"
	       PRIu64 " violations, %" PRIu64 " stray writes\n",
	       argv[0], nr_jlines, nr_bad_jlines, nr_olines, checked, zero,
	       never, equal, newer, disc, viol, stray);
	return viol || stray ? 1 : 0;
}

/* ---- forge ---- */

static int cmd_forge(int argc, char **argv)
{
	uint64_t i, b = 0, g = 0, other = 0;
	void *buf;
	int fd;

	if (argc < 3)
		die("usage: forge DEV JDIR old|garbage|zero|swap");
	bounds = calloc(SPAN_BLOCKS, sizeof(*bounds));
	if (!bounds || posix_memalign(&buf, BS, BS))
		die("out of memory");
	read_journals(argv[1]);
	/* the journalled block with the highest generation, and another */
	for (i = 0; i < SPAN_BLOCKS; i++) {
		if (bounds[i].journal > g) {
			if (b)
				other = b;
			g = bounds[i].journal;
			b = FIRST_BLOCK + i;
		} else if (bounds[i].journal && !other) {
			other = FIRST_BLOCK + i;
		}
	}
	if (!b || !other)
		die("forge: the journals name fewer than two blocks");
	if (!strcmp(argv[2], "old"))
		fill_block(buf, b, g - 1, owner_of(b));
	else if (!strcmp(argv[2], "garbage")) {
		fill_block(buf, b, g, owner_of(b));
		((uint8_t *)buf)[BS / 2] ^= 0x5a;
	} else if (!strcmp(argv[2], "zero"))
		memset(buf, 0, BS);
	else if (!strcmp(argv[2], "swap"))
		fill_block(buf, other, g + 1, owner_of(other));
	else
		die("forge: unknown mode %s", argv[2]);
	fd = open(argv[0], O_RDWR | O_DIRECT);
	if (fd < 0)
		die("%s: %s", argv[0], strerror(errno));
	if (pwrite(fd, buf, BS, b * BS) != BS || fsync(fd))
		die("forge write: %s", strerror(errno));
	close(fd);
	printf("wowcrash forge: block %" PRIu64 " (journalled generation %"
	       PRIu64 ") now holds %s\n", b, g, argv[2]);
	return 0;
}

int main(int argc, char **argv)
{
	const char *span = getenv("WOWCRASH_SPAN");
	const char *run = getenv("WOWCRASH_RUN");

	crc_init();
	if (run) {
		run_max = atoi(run);
		if (run_max < 1 || run_max > 256)
			die("WOWCRASH_RUN=N: 1..256 blocks");
	}
	if (span) {
		unsigned long long off, len;

		if (sscanf(span, "%llu %llu", &off, &len) != 2 || len < 8 ||
		    len > (1 << 20))
			die("WOWCRASH_SPAN=\"OFFSET_MIB LENGTH_MIB\" (length 8 MiB or more)");
		span_offset = off << 20;
		per_thread = (len << 20) / BS / STRIDE;
	}
	if (run_max > 1) {
		/* the same span, every block owned */
		per_thread = (uint64_t)per_thread * STRIDE / NTHREADS /
			     run_max * run_max;
		span_stride = NTHREADS;
		if (per_thread / run_max < 2)
			die("WOWCRASH_RUN=%u: the span holds too few chunks",
			    run_max);
	}
	if (argc >= 2 && !strcmp(argv[1], "write"))
		return cmd_write(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return cmd_check(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "forge"))
		return cmd_forge(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "span")) {
		printf("%llu %llu\n", (unsigned long long)span_offset,
		       (unsigned long long)SPAN_BLOCKS * BS);
		return 0;
	}
	fprintf(stderr,
		"usage: wowcrash write DEV JDIR BOOT SEED [SECONDS]\n"
		"       wowcrash check DEV JDIR [OBSERVED]\n"
		"       wowcrash check DEV JDEV [OBS_OUT [OBS_IN]]\n"
		"       wowcrash forge DEV JDIR old|garbage|zero|swap\n"
		"       wowcrash span\n"
		"env: WOWCRASH_SPAN=\"OFFSET_MIB LENGTH_MIB\" WOWCRASH_WRITES=N WOWCRASH_DISCARD=1\n"
		"     WOWCRASH_RUN=N (writes of up to N contiguous blocks)\n");
	return 2;
}
