// SPDX-License-Identifier: GPL-2.0
/*
 * wow-probe: tell udev whether a block device is a dm-wow cache device, as
 * blkid does for file systems (blkid does not know dm-wow).  Installed to
 * the udev directory and called from 61-dm-wow.rules:
 *
 *   IMPORT{program}="/usr/lib/udev/wow-probe $devnode"
 *
 * It reads the first 4 KiB of DEVICE, read-only and with O_DIRECT where it
 * can (dm-wow writes its superblock with bios, so the page cache may still
 * hold what blkid read before the format), and prints KEY=VALUE lines:
 *
 *   WOW_CACHE=1                 the dm-wow superblock magic is at offset 8
 *   WOW_CACHE_LINK_1..16        the device's udev links (DEVLINKS in the
 *                               environment) but by-uuid and by-label ones,
 *                               which an older signature may have made,
 *                               relative to /dev, one each, for the rules'
 *                               SYMLINK= (udev 252 has no SYMLINK-=)
 *   WOW_CACHE_SB=valid|corrupt  its crc32c checks (corrupt: magic only)
 *   WOW_CACHE_VERSION, WOW_CACHE_UUID, WOW_CACHE_BLOCK_SIZE,
 *   WOW_CACHE_ORIGIN_SECTORS, WOW_CACHE_ORIGIN_ID
 *                               from a valid superblock (needs_check
 *                               lives in the health block: wowctl check)
 *
 * Nothing is printed for another device.  Exit status: 0 (a cache or not),
 * 1 the device cannot be read, 2 usage.  Never writes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <endian.h>
#include <linux/types.h>

#define __packed __attribute__((packed))
#include "../dm-wow/dm-wow-format.h"
#include "crc32c.h"
#include "wow-version.h"

#define PROBE_BYTES	4096
#define MAX_LINKS	16	/* WOW_CACHE_LINK_1..16 in 61-dm-wow.rules */

static int read_head(const char *path, unsigned char *buf)
{
	ssize_t n;
	int fd;

	/* O_DIRECT: past the page cache; not every file system has it */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
	if (fd < 0 && errno == EINVAL)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "wow-probe: %s: %s\n", path, strerror(errno));
		return -1;
	}
	n = pread(fd, buf, PROBE_BYTES, 0);
	if (n < 0 && errno == EINVAL) {
		/* O_DIRECT refused at read time (some files): once more */
		close(fd);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "wow-probe: %s: %s\n", path,
				strerror(errno));
			return -1;
		}
		n = pread(fd, buf, PROBE_BYTES, 0);
	}
	if (n < 0) {
		fprintf(stderr, "wow-probe: %s: read: %s\n", path,
			strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	/* shorter than a superblock: not a cache */
	if (n < WOW_SB_CSUM_BYTES)
		memset(buf, 0, PROBE_BYTES);
	return 0;
}

/* a udev property value: printable, no quotes, spaces or backslashes */
static void put_safe(const char *key, const char *val, size_t len)
{
	size_t i;

	printf("%s=", key);
	for (i = 0; i < len && val[i]; i++) {
		unsigned char ch = val[i];

		putchar(ch > 0x20 && ch < 0x7f && !strchr("\"'\\`$", ch) ?
			ch : '_');
	}
	putchar('\n');
}

static void put_links(void)
{
	const char *links = getenv("DEVLINKS");
	char *copy, *l, *save = NULL;
	int i = 0;

	copy = links ? strdup(links) : NULL;
	for (l = copy ? strtok_r(copy, " ", &save) : NULL; l;
	     l = strtok_r(NULL, " ", &save)) {
		if (strncmp(l, "/dev/", 5) ||
		    !strncmp(l, "/dev/disk/by-uuid/", 18) ||
		    !strncmp(l, "/dev/disk/by-label/", 19) ||
		    strpbrk(l, "\"'$"))
			continue;
		if (i == MAX_LINKS) {
			fprintf(stderr, "wow-probe: more than %d links, %s dropped\n",
				MAX_LINKS, l);
			continue;
		}
		printf("WOW_CACHE_LINK_%d=%s\n", ++i, l + 5);
	}
	free(copy);
}

static int probe(const char *path)
{
	static unsigned char buf[PROBE_BYTES] __attribute__((aligned(4096)));
	const struct wow_superblock *sb = (const void *)buf;
	const uint8_t *u = sb->uuid;

	if (read_head(path, buf))
		return 1;
	if (le64toh(sb->magic) != WOW_SB_MAGIC)
		return 0;
	printf("WOW_CACHE=1\n");
	put_links();
	if (le32toh(sb->csum) != crc32c(WOW_CSUM_SEED, buf + 4,
					WOW_SB_CSUM_BYTES - 4)) {
		printf("WOW_CACHE_SB=corrupt\n");
		return 0;
	}
	printf("WOW_CACHE_SB=valid\n");
	printf("WOW_CACHE_VERSION=%" PRIu32 "\n", le32toh(sb->version));
	printf("WOW_CACHE_UUID=%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	       "%02x%02x%02x%02x%02x%02x\n", u[0], u[1], u[2], u[3], u[4],
	       u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
	       u[15]);
	printf("WOW_CACHE_BLOCK_SIZE=%" PRIu32 "\n", le32toh(sb->block_size));
	printf("WOW_CACHE_ORIGIN_SECTORS=%" PRIu64 "\n",
	       (uint64_t)le64toh(sb->origin_sectors));
	if (sb->origin_id[0])
		put_safe("WOW_CACHE_ORIGIN_ID", sb->origin_id,
			 sizeof(sb->origin_id));
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: wow-probe DEVICE | --version\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	bool version = false;
	int ch;

	opterr = 0;	/* one usage line, not getopt's messages */
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (ch != 'V')
			return usage();
		version = true;
	}
	if (version && argc == 2) {
		printf("wow-probe %s\n", WOW_VERSION);
		return 0;
	}
	if (version || optind != argc - 1)
		return usage();
	return probe(argv[optind]);
}
