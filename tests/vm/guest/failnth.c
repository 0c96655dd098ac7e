// SPDX-License-Identifier: GPL-2.0
/*
 * failnth: make the N-th fault point (slab or page allocation, with the
 * kernel's fault injection) of one device-mapper ioctl fail.
 *
 *     failnth N resume NAME
 *     failnth N load NAME START LENGTH TARGET PARAMS
 *
 * The ioctl buffer is built first; then N goes to /proc/thread-self/
 * fail-nth right before the ioctl, so the count starts at the ioctl, not
 * in exec or the C library.  Prints "injected" when the N-th fault point
 * was reached (the ioctl met a failure), "not reached" when the ioctl has
 * fewer than N, then the ioctl's result ("ok" or the errno).  Exit 0 when
 * the ioctl succeeded, 1 when it failed, 2 on a usage or setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static union {
	struct dm_ioctl io;
	char raw[16384];
} buf;

static void usage(void)
{
	fprintf(stderr, "usage: failnth N resume NAME\n"
		"       failnth N load NAME START LENGTH TARGET PARAMS\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct dm_ioctl *io = &buf.io;
	unsigned long cmd;
	char left[32];
	int ctl, fn, r, err;
	ssize_t n;

	if (argc < 4)
		usage();
	memset(&buf, 0, sizeof(buf));
	io->version[0] = DM_VERSION_MAJOR;
	io->version[1] = 0;
	io->version[2] = 0;
	io->data_size = sizeof(buf);
	io->data_start = sizeof(*io);
	snprintf(io->name, sizeof(io->name), "%s", argv[3]);
	if (!strcmp(argv[2], "resume") && argc == 4) {
		cmd = DM_DEV_SUSPEND;
	} else if (!strcmp(argv[2], "load") && argc == 8) {
		struct dm_target_spec *t = (void *)(buf.raw + sizeof(*io));
		char *params = (char *)(t + 1);

		cmd = DM_TABLE_LOAD;
		io->target_count = 1;
		t->sector_start = strtoull(argv[4], NULL, 0);
		t->length = strtoull(argv[5], NULL, 0);
		snprintf(t->target_type, sizeof(t->target_type), "%s", argv[6]);
		if (strlen(argv[7]) + sizeof(*io) + sizeof(*t) + 8 >= sizeof(buf))
			usage();
		strcpy(params, argv[7]);
		t->next = 0;
	} else {
		usage();
	}

	ctl = open("/dev/mapper/control", O_RDWR);
	fn = open("/proc/thread-self/fail-nth", O_RDWR);
	if (ctl < 0 || fn < 0) {
		perror("failnth: open");
		return 2;
	}
	if (write(fn, argv[1], strlen(argv[1])) < 0) {
		perror("failnth: fail-nth");
		return 2;
	}
	r = ioctl(ctl, cmd, io);
	err = errno;
	n = pread(fn, left, sizeof(left) - 1, 0);
	left[n > 0 ? n : 0] = 0;
	if (write(fn, "0", 1) < 0)
		perror("failnth: fail-nth reset");
	printf("%s %s\n", atoi(left) ? "not reached" : "injected",
	       r ? strerror(err) : "ok");
	return r ? 1 : 0;
}
