// SPDX-License-Identifier: LGPL-2.1
/*
 * libwow: the names of block devices, from the devices alone (udev's
 * /dev/disk/by-id links, sysfs): wowdev.c names a new device's origin and
 * cache by them, libwow.c a table's.  Needs nothing else of libwow.  See
 * devname.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "devname.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define BY_ID_DIR	"/dev/disk/by-id"

/* ---- stable paths ---- */

/*
 * Kinds of /dev/disk/by-id links, the most stable first: what names the
 * device itself (dm and md uuids, the WWN, NVMe ids), then the bus's
 * model and serial; dm-name- and lvm-pv-uuid- (a name that can be changed,
 * a PV label) only when nothing else is there.
 */
static const char *const by_id_rank[] = {
	"dm-uuid-", "md-uuid-", "wwn-", "nvme-eui.", "nvme-uuid.",
	"nvme-nguid.", "nvme-", "scsi-3", "scsi-", "ata-", "usb-", "mmc-",
	"virtio-",
};

static int link_rank(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(by_id_rank); i++)
		if (!strncmp(name, by_id_rank[i], strlen(by_id_rank[i])))
			return i;
	if (!strncmp(name, "dm-name-", 8) || !strncmp(name, "lvm-pv-uuid-", 12))
		return ARRAY_SIZE(by_id_rank) + 1;
	return ARRAY_SIZE(by_id_rank);
}

char *wow_dev_stable_path(const char *dir, uint64_t rdev)
{
	char path[4096], *best = NULL;
	int best_rank = 0, rank;
	struct dirent *de;
	struct stat st;
	DIR *d;

	d = opendir(dir ? dir : BY_ID_DIR);
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir ? dir : BY_ID_DIR,
			 de->d_name);
		/* through the link: the device it names now */
		if (stat(path, &st) || (uint64_t)st.st_rdev != rdev ||
		    !(S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode)))
			continue;
		rank = link_rank(de->d_name);
		if (best && (rank > best_rank ||
			     (rank == best_rank &&
			      strcmp(strrchr(best, '/') + 1, de->d_name) <= 0)))
			continue;
		free(best);
		best = strdup(path);
		best_rank = rank;
	}
	closedir(d);
	return best;
}

char *wow_dev_describe(const char *majmin)
{
	char link[512], path[600], name[128] = "", *best, *out = NULL;
	unsigned int ma, mi;
	ssize_t n;
	FILE *f;
	int end = 0;

	if (sscanf(majmin, "%u:%u%n", &ma, &mi, &end) != 2 || majmin[end])
		return strdup(majmin);
	best = wow_dev_stable_path(NULL, makedev(ma, mi));
	if (!best) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/dm/name",
			 ma, mi);
		f = fopen(path, "r");
		if (f) {
			if (fgets(name, sizeof(name), f))
				name[strcspn(name, "\n")] = '\0';
			fclose(f);
		}
		if (*name) {
			snprintf(path, sizeof(path), "/dev/mapper/%s", name);
		} else {
			snprintf(path, sizeof(path), "/sys/dev/block/%u:%u",
				 ma, mi);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				return strdup(majmin);
			link[n] = '\0';
			snprintf(path, sizeof(path), "/dev/%s",
				 strrchr(link, '/') ? strrchr(link, '/') + 1 :
				 link);
		}
		best = strdup(path);
	}
	if (best && asprintf(&out, "%s (%s)", best, majmin) < 0)
		out = NULL;
	free(best);
	return out ? out : strdup(majmin);
}
