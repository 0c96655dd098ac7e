// SPDX-License-Identifier: GPL-2.0
/*
 * logreplay: apply a dm-log-writes log to a device.
 *
 *     logreplay LOGDEV TARGET MARK
 *
 * dm-log-writes logs a write only once a flush that completed after it
 * (or its own FUA) made it durable, so the log is what the device would
 * hold after a power cut at the moment it was read.  The log must end in
 * the mark MARK (dmsetup message DEV 0 mark MARK): that checks the parse
 * and that the superblock's entry count is current.  Prints the number of
 * writes, flushes and discards applied.  Exit 1 on a malformed log.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_FLUSH	(1 << 0)
#define LOG_FUA		(1 << 1)
#define LOG_DISCARD	(1 << 2)
#define LOG_MARK	(1 << 3)
#define LOG_MAGIC	0x6a736677736872ULL
#define LOG_VERSION	1ULL

struct log_super {
	uint64_t magic;
	uint64_t version;
	uint64_t nr_entries;
	uint32_t sectorsize;
} __attribute__((packed));

struct log_entry {
	uint64_t sector;
	uint64_t nr_sectors;
	uint64_t flags;
	uint64_t data_len;
} __attribute__((packed));

static void die(const char *msg)
{
	fprintf(stderr, "logreplay: %s%s%s\n", msg, errno ? ": " : "",
		errno ? strerror(errno) : "");
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: logreplay LOGDEV TARGET MARK\n"
		"       logreplay index LOGDEV IDXFILE [MARK]\n"
		"       logreplay points IDXFILE\n"
		"       logreplay apply LOGDEV IDXFILE TARGET A B\n"
		"       logreplay variant LOGDEV IDXFILE TARGET A B all|subset|torn SEED [CLO CHI]\n"
		"       logreplay records LOGDEV IDXFILE LO HI\n");
	exit(2);
}

static void read_at(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	if (n != (ssize_t)len) {
		if (n >= 0)
			errno = 0;
		die("short read of the log");
	}
}

/* ---- index, flush points, windows and their variants ---- */

/*
 * The index (a file) holds one struct ient per log entry, in log order, so
 * that later calls reach any entry without parsing the log again.
 */
struct ient {
	uint64_t off;		/* byte offset of the entry's data in the log */
	uint64_t sector;	/* in 512-byte sectors on the logged device */
	uint64_t nr;		/* sectors */
	uint64_t flags;
};

static struct ient *idx;
static uint64_t nidx;

static void load_index(const char *path)
{
	FILE *f = fopen(path, "r");
	long len;

	if (!f)
		die("cannot open the index");
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	nidx = len / sizeof(*idx);
	idx = malloc(len + 1);
	if (!idx || fread(idx, sizeof(*idx), nidx, f) != nidx)
		die("cannot read the index");
	fclose(f);
}

/* logreplay index LOGDEV IDXFILE [MARK] */
static int cmd_index(int argc, char **argv)
{
	uint64_t i, off, flushes = 0, fuas = 0, discards = 0, writes = 0, n = 0;
	struct log_super sb;
	struct log_entry e;
	char *sector;
	int log, marked = 0, after = 0;
	FILE *f;

	if (argc < 2)
		usage();
	log = open(argv[0], O_RDONLY);
	if (log < 0)
		die("cannot open the log");
	read_at(log, &sb, sizeof(sb), 0);
	errno = 0;
	if (sb.magic != LOG_MAGIC || sb.version != LOG_VERSION ||
	    sb.sectorsize != 512)
		die("not a dm-log-writes log with 512-byte sectors");
	sector = malloc(sb.sectorsize);
	f = fopen(argv[1], "w");
	if (!sector || !f)
		die("cannot write the index");
	off = sb.sectorsize;
	for (i = 0; i < sb.nr_entries; i++) {
		struct ient x;

		read_at(log, sector, sb.sectorsize, off);
		memcpy(&e, sector, sizeof(e));
		off += sb.sectorsize;
		if (e.flags & LOG_MARK) {
			marked |= argc > 2 && e.data_len == strlen(argv[2]) &&
				  !memcmp(sector + sizeof(e), argv[2],
					  e.data_len);
			continue;
		}
		/* entries after the mark: logged by the table's destructor,
		 * writes no flush covered */
		if (marked && after++ < 8)
			fprintf(stderr, "logreplay: after the mark: entry %llu sector %llu +%llu flags %llx\n",
				(unsigned long long)n,
				(unsigned long long)e.sector,
				(unsigned long long)e.nr_sectors,
				(unsigned long long)e.flags);
		x.off = off;
		x.sector = e.sector;
		x.nr = e.nr_sectors;
		x.flags = e.flags;
		if (!(e.flags & LOG_DISCARD))
			off += e.nr_sectors * sb.sectorsize;
		if (e.nr_sectors > (128u << 11)) {
			errno = 0;
			die("an entry longer than 128 MiB: not a log entry");
		}
		flushes += !!(e.flags & LOG_FLUSH);
		fuas += (e.flags & (LOG_FUA | LOG_FLUSH)) == LOG_FUA;
		discards += !!(e.flags & LOG_DISCARD);
		writes += !(e.flags & LOG_DISCARD) && e.nr_sectors;
		if (fwrite(&x, sizeof(x), 1, f) != 1)
			die("cannot write the index");
		n++;
	}
	errno = 0;
	if (argc > 2 && !marked)
		die("the log holds no mark");
	if (fclose(f))
		die("cannot write the index");
	printf("%llu entries: %llu writes (%llu FUA without flush), %llu flushes, %llu discards\n",
	       (unsigned long long)n, (unsigned long long)writes,
	       (unsigned long long)fuas, (unsigned long long)flushes,
	       (unsigned long long)discards);
	return 0;
}

/*
 * logreplay points IDXFILE
 * One line per flush point: "N ENTRY WEND".  The state at point N is
 * entries [0, ENTRY] applied in order (ENTRY is the flush entry, logged
 * after every write its flush covered); its window is [ENTRY + 1, WEND):
 * the writes and FUA writes logged up to and including the next flush
 * entry, which a power cut after the point may keep in part.
 */
static int cmd_points(int argc, char **argv)
{
	uint64_t i, j, n = 0;

	if (argc < 1)
		usage();
	load_index(argv[0]);
	for (i = 0; i < nidx; i++) {
		if (!(idx[i].flags & LOG_FLUSH))
			continue;
		for (j = i + 1; j < nidx && !(idx[j].flags & LOG_FLUSH); j++)
			;
		printf("%llu %llu %llu\n", (unsigned long long)n++,
		       (unsigned long long)i,
		       (unsigned long long)(j < nidx ? j + 1 : nidx));
	}
	return 0;
}

static int tfd = -1, lfd = -1;
static char *dbuf;
static size_t dcap;

/* Apply entry i, or only its first nr sectors; discards write zeros. */
static void apply_one(uint64_t i, uint64_t nr)
{
	struct ient *x = &idx[i];
	size_t len = nr * 512;

	if (!nr || (x->flags & LOG_MARK))
		return;
	if (len > dcap) {
		free(dbuf);
		dcap = len;
		if (posix_memalign((void **)&dbuf, 4096, dcap))
			die("out of memory");
	}
	if (x->flags & LOG_DISCARD)
		memset(dbuf, 0, len);
	else
		read_at(lfd, dbuf, len, x->off);
	if (pwrite(tfd, dbuf, len, x->sector * 512) != (ssize_t)len)
		die("cannot write the target");
}

/* buffered: the log read ahead, the target written back at the fsync */
static void open_pair(const char *logdev, const char *target, int direct)
{
	lfd = open(logdev, O_RDONLY);
	tfd = open(target, O_WRONLY | (direct ? O_DIRECT : 0));
	if (lfd < 0 || tfd < 0)
		die("cannot open the devices");
}

static uint64_t num(const char *s)
{
	return strtoull(s, NULL, 0);
}

/* logreplay apply LOGDEV IDXFILE TARGET A B: entries [A, B) in order */
static int cmd_apply(int argc, char **argv)
{
	uint64_t i, a, b;

	if (argc < 5)
		usage();
	load_index(argv[1]);
	open_pair(argv[0], argv[2], 0);
	a = num(argv[3]);
	b = num(argv[4]);
	if (b > nidx)
		b = nidx;
	for (i = a; i < b; i++)
		apply_one(i, idx[i].nr);
	if (fsync(tfd))
		die("cannot sync the target");
	return 0;
}

static uint64_t rs;

static uint64_t rnd(void)
{
	uint64_t x;

	rs += 0x9e3779b97f4a7c15ull;
	x = rs;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * logreplay variant LOGDEV IDXFILE TARGET A B MODE SEED [CLO CHI]
 * Apply one crash state of the window [A, B) over a target that holds the
 * state at its flush point:
 *   all	every entry, in order;
 *   subset	FUA-only entries up to a random cut (a FUA write completed
 *		before the power cut is on the media); when the cut keeps
 *		them all, every other entry (plain writes, discards) kept or
 *		not at random (a volatile write cache keeps any subset);
 *   torn	the newest write that touches sectors [CLO, CHI) (the
 *		cache device) only in part: its first block (8 sectors:
 *		"header written, data not") or a random prefix; if it is
 *		a plain write, every other entry too; if it is a FUA write,
 *		only the FUA writes before it.
 *
 * The log does not say when a write was issued, only when it completed
 * (FUA) or was flushed (plain), so a plain write of the window may have
 * been issued after any FUA write of it completed (as the journal's
 * discards are, or dm-wow's next record after a FUA one): keeping such a
 * write without that FUA write would be a state no disk can reach.  So
 * plain writes are kept only with every FUA write of the window, and a
 * torn FUA write ends the state.  Dropping every plain write is always
 * possible (a volatile cache lost them).
 * Prints one line saying what it applied.
 */
static int cmd_variant(int argc, char **argv)
{
	uint64_t i, a, b, clo = 0, chi = 0, fua_total = 0, fua_cut, fua_seen = 0;
	uint64_t kept = 0, dropped = 0, torn = UINT64_MAX, tnr = 0;
	const char *mode;

	if (argc < 7)
		usage();
	load_index(argv[1]);
	open_pair(argv[0], argv[2], 1);
	a = num(argv[3]);
	b = num(argv[4]);
	mode = argv[5];
	rs = num(argv[6]);
	if (argc > 8) {
		clo = num(argv[7]);
		chi = num(argv[8]);
	}
	if (b > nidx)
		b = nidx;
	for (i = a; i < b; i++)
		fua_total += (idx[i].flags & (LOG_FUA | LOG_FLUSH)) == LOG_FUA;
	fua_cut = fua_total;
	if (!strcmp(mode, "subset")) {
		/* half the time every FUA write, and plain ones at random */
		if (rnd() % 2)
			fua_cut = rnd() % (fua_total + 1);
	} else if (!strcmp(mode, "torn")) {
		for (i = b; i-- > a;)
			if (!(idx[i].flags & LOG_DISCARD) && idx[i].nr &&
			    idx[i].sector < chi &&
			    idx[i].sector + idx[i].nr > clo) {
				torn = i;
				break;
			}
		if (torn != UINT64_MAX) {
			uint64_t nr = idx[torn].nr;

			if (nr > 8 && rnd() % 2)
				tnr = 8;
			else
				tnr = nr > 1 ? 1 + rnd() % (nr - 1) : 0;
			/* a torn FUA write: the state ends with it */
			if ((idx[torn].flags & (LOG_FUA | LOG_FLUSH)) ==
			    LOG_FUA) {
				fua_cut = 0;
				for (i = a; i < torn; i++)
					fua_cut += (idx[i].flags &
						    (LOG_FUA | LOG_FLUSH)) ==
						   LOG_FUA;
			}
		}
	} else if (strcmp(mode, "all")) {
		usage();
	}
	for (i = a; i < b; i++) {
		struct ient *x = &idx[i];
		int keep;

		if (i == torn)
			keep = 1;
		else if ((x->flags & (LOG_FUA | LOG_FLUSH)) == LOG_FUA)
			keep = fua_seen++ < fua_cut;
		else if (fua_cut < fua_total)
			keep = 0;	/* maybe issued after a FUA cut off */
		else if (!strcmp(mode, "subset"))
			keep = rnd() % 2;
		else
			keep = 1;
		if (!x->nr)
			continue;
		if (!keep) {
			dropped++;
			continue;
		}
		kept++;
		apply_one(i, i == torn ? tnr : x->nr);
	}
	if (fsync(tfd))
		die("cannot sync the target");
	printf("%s [%llu,%llu): %llu applied, %llu dropped, FUA cut %llu/%llu",
	       mode, (unsigned long long)a, (unsigned long long)b,
	       (unsigned long long)kept, (unsigned long long)dropped,
	       (unsigned long long)fua_cut, (unsigned long long)fua_total);
	if (torn != UINT64_MAX)
		printf(", entry %llu (sector %llu) torn to %llu/%llu sectors",
		       (unsigned long long)torn,
		       (unsigned long long)idx[torn].sector,
		       (unsigned long long)tnr,
		       (unsigned long long)idx[torn].nr);
	else if (!strcmp(mode, "torn"))
		printf(", no cache write to tear");
	printf("\n");
	return 0;
}

/*
 * logreplay records LOGDEV IDXFILE LO HI
 * A check of the recording, not of dm-wow's recovery: dm-wow writes one
 * log record at a time (the next only once the last completed), so the
 * record headers (magic "WOWR" at byte 4, seq at byte 8) written to
 * sectors [LO, HI) must appear in the log in ascending seq order.  A
 * record logged after a newer one means the log holds a state no disk
 * shows (two flushes in flight, see the README).  Prints the counts;
 * exit 1 if any record is out of order.
 */
static int cmd_records(int argc, char **argv)
{
	uint64_t i, lo, hi, seq, newest = 0, n = 0, bad = 0;
	unsigned char hdr[16];
	int log;

	if (argc < 4)
		usage();
	load_index(argv[1]);
	log = open(argv[0], O_RDONLY);
	if (log < 0)
		die("cannot open the log");
	lo = num(argv[2]);
	hi = num(argv[3]);
	for (i = 0; i < nidx; i++) {
		if (idx[i].flags & LOG_DISCARD || !idx[i].nr ||
		    idx[i].sector < lo || idx[i].sector >= hi)
			continue;
		read_at(log, hdr, sizeof(hdr), idx[i].off);
		if (memcmp(hdr + 4, "WOWR", 4))
			continue;
		memcpy(&seq, hdr + 8, sizeof(seq));
		n++;
		if (seq < newest && bad++ < 5)
			fprintf(stderr, "logreplay: entry %llu: record %llu logged after record %llu\n",
				(unsigned long long)i, (unsigned long long)seq,
				(unsigned long long)newest);
		if (seq > newest)
			newest = seq;
	}
	printf("%llu records, %llu logged out of seq order\n",
	       (unsigned long long)n, (unsigned long long)bad);
	return bad ? 1 : 0;
}

static int replay_all(int argc, char **argv);

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "records"))
		return cmd_records(argc - 2, argv + 2);
	if (argc > 1 && !strcmp(argv[1], "index"))
		return cmd_index(argc - 2, argv + 2);
	if (argc > 1 && !strcmp(argv[1], "points"))
		return cmd_points(argc - 2, argv + 2);
	if (argc > 1 && !strcmp(argv[1], "apply"))
		return cmd_apply(argc - 2, argv + 2);
	if (argc > 1 && !strcmp(argv[1], "variant"))
		return cmd_variant(argc - 2, argv + 2);
	if (argc != 4)
		usage();
	return replay_all(argc, argv);
}

static int replay_all(int argc, char **argv)
{
	uint64_t i, off, writes = 0, flushes = 0, discards = 0;
	struct log_super sb;
	struct log_entry e;
	int log, dev, marked = 0;
	char *sector, *data = NULL;
	size_t cap = 0;

	(void)argc;
	log = open(argv[1], O_RDONLY);
	dev = open(argv[2], O_WRONLY);
	if (log < 0 || dev < 0)
		die("cannot open the devices");
	read_at(log, &sb, sizeof(sb), 0);
	errno = 0;
	if (sb.magic != LOG_MAGIC || sb.version != LOG_VERSION ||
	    sb.sectorsize < 512 || sb.sectorsize > 65536 ||
	    (sb.sectorsize & (sb.sectorsize - 1)))
		die("not a dm-log-writes log");
	sector = malloc(sb.sectorsize);
	if (!sector)
		die("out of memory");

	off = sb.sectorsize;
	for (i = 0; i < sb.nr_entries; i++) {
		uint64_t len;

		read_at(log, sector, sb.sectorsize, off);
		memcpy(&e, sector, sizeof(e));
		off += sb.sectorsize;
		marked = 0;
		if (e.flags & LOG_MARK) {
			size_t n = strlen(argv[3]);

			marked = e.data_len == n && n <= sb.sectorsize - sizeof(e) &&
				 !memcmp(sector + sizeof(e), argv[3], n);
			continue;
		}
		if (e.flags & LOG_FLUSH)
			flushes++;
		if (e.flags & LOG_DISCARD) {
			discards++;	/* data left in place, as on a disk */
			continue;
		}
		if (!e.nr_sectors)
			continue;
		len = e.nr_sectors * sb.sectorsize;
		if (len > (64u << 20)) {
			errno = 0;
			die("an entry longer than 64 MiB: not a log entry");
		}
		if (len > cap) {
			free(data);
			cap = len;
			data = malloc(cap);
			if (!data)
				die("out of memory");
		}
		read_at(log, data, len, off);
		off += len;
		if (pwrite(dev, data, len, e.sector * sb.sectorsize) !=
		    (ssize_t)len)
			die("cannot write the target");
		writes++;
	}
	errno = 0;
	if (!marked)
		die("the log does not end in the mark");
	if (fsync(dev))
		die("cannot sync the target");
	printf("%llu writes, %llu flushes, %llu discards applied\n",
	       (unsigned long long)writes, (unsigned long long)flushes,
	       (unsigned long long)discards);
	return 0;
}
