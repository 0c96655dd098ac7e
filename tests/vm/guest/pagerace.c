// SPDX-License-Identifier: GPL-2.0
/*
 * pagerace: write a block device with O_DIRECT from a buffer that another
 * thread keeps changing while the writes are in flight.
 *
 *     pagerace DEV MIB SECONDS
 *
 * Nothing says what such a write leaves on the device, but the device must
 * stay usable: a cache that checksums the pages of a bio while they can
 * still change would write records whose data does not match their
 * checksum, and then call them corrupt at the next load.  Writes 64 KiB at
 * a time over the first MIB MiB, an fdatasync every 16 writes, for
 * SECONDS.  Prints the number of writes.  Exit 0, or 2 on an I/O error.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK	65536

static volatile int stop;
static unsigned char *buf;

static void *scribble(void *arg)
{
	uint32_t x = 2463534242u;

	(void)arg;
	while (!stop) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		((volatile unsigned char *)buf)[x % CHUNK] ^= (unsigned char)x | 1;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long mib, secs, writes = 0, off = 0;
	pthread_t t;
	time_t end;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: pagerace DEV MIB SECONDS\n");
		return 2;
	}
	mib = atol(argv[2]);
	secs = atol(argv[3]);
	fd = open(argv[1], O_WRONLY | O_DIRECT);
	if (fd < 0 || mib < 1 || posix_memalign((void **)&buf, 4096, CHUNK)) {
		perror("pagerace");
		return 2;
	}
	memset(buf, 0x5a, CHUNK);
	if (pthread_create(&t, NULL, scribble, NULL)) {
		perror("pagerace: thread");
		return 2;
	}
	end = time(NULL) + secs;
	while (time(NULL) < end) {
		if (pwrite(fd, buf, CHUNK, off) != CHUNK) {
			perror("pagerace: write");
			return 2;
		}
		off = (off + CHUNK) % (mib << 20);
		if (!(++writes % 16) && fdatasync(fd)) {
			perror("pagerace: fdatasync");
			return 2;
		}
	}
	stop = 1;
	pthread_join(t, NULL);
	if (fdatasync(fd)) {
		perror("pagerace: fdatasync");
		return 2;
	}
	printf("%ld writes\n", writes);
	return 0;
}
