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

static void read_at(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	if (n != (ssize_t)len) {
		if (n >= 0)
			errno = 0;
		die("short read of the log");
	}
}

int main(int argc, char **argv)
{
	uint64_t i, off, writes = 0, flushes = 0, discards = 0;
	struct log_super sb;
	struct log_entry e;
	int log, dev, marked = 0;
	char *sector, *data = NULL;
	size_t cap = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: logreplay LOGDEV TARGET MARK\n");
		return 2;
	}
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
