/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wowcache's insides, shared by its files and by nothing else (wowctl
 * uses wowcache.h):
 *
 *   wowcache.c      the device: open, read, superblock, health block,
 *                   checkpoint headers and the pick; problems, names
 *   wowview.c       the view a load rebuilds, by the kernel's recovery
 *   wowcheck.c      check          wowdump.c       dump
 *   wowwriteback.c  writeback      wowmsize.c      metadata-size
 *
 * The calls go one way: the commands call the view and the device, the
 * view calls the device, the device calls none of them.
 */
#ifndef WOWCACHE_INT_H
#define WOWCACHE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "wowcache.h"

struct json;
struct wow_ckpt_reader;

/* buffers for O_DIRECT reads are aligned to this, and so are the reads */
#define IO_ALIGN	4096U

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- wowcache.c: problems, errors ---- */

/* @err (WOWC_ERR_LEN bytes, may be NULL) set from @fmt */
void wowc_seterr(char *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A problem of severity @sev added to @ps (out of memory: dropped). */
void wowc_problem(struct wowc_problems *ps, enum wowc_sev sev,
		  const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void wowc_problems_free(struct wowc_problems *ps);
/* The worst severity in @ps, -1 for none. */
int wowc_worst(const struct wowc_problems *ps);
/* Each problem on a line of its own: "severity: message". */
void wowc_print_problems(FILE *f, const struct wowc_problems *ps);
/* Each problem, a JSON object on a line of its own. */
void wowc_json_problems(struct json *j, const struct wowc_problems *ps);

/* ---- wowcache.c: I/O ---- */

/* @n bytes zeroed, aligned to IO_ALIGN (free() them), or NULL. */
void *wowc_xalloc(size_t n);
/* @len bytes at @off of the cache; aligned through a bounce if direct. */
int wowc_read(const struct wowc *c, void *buf, size_t len, uint64_t off);
/* The size in bytes of the device or file open at @fd: 0 or -errno. */
int wowc_dev_size(int fd, uint64_t *size);
/*
 * Open a device or image with @mode: a block device with O_EXCL (the
 * tools are for an unused cache) and, read-only, O_DIRECT (*@direct).
 * The fd, or -errno with @err set.
 */
int wowc_open_dev(const char *path, int mode, bool *direct, char *err);

/* ---- wowcache.c: the geometry and the checkpoint area ---- */

/* Byte offset of segment @s on the cache. */
uint64_t wowc_seg_offset(const struct wowc *c, uint64_t s);
/* Tombstones this cache's checkpoint area has room for. */
uint64_t wowc_ckpt_room(const struct wowc *c);
/* A reader of checkpoint area c->ckpt_area (no memory for a load yet). */
void wowc_ckpt_reader(struct wowc *c, struct wow_ckpt_reader *rdr);

/* ---- wowview.c: the view ---- */

/*
 * Whether a claim of the log scan's (@v from the log: v->claims) covers
 * record @seq: a valid record of its epoch says every record up to one
 * at or past @seq was durable.
 */
bool wowc_vouched(const struct wowc_view *v, uint64_t seq);

/* ---- wowcache.c: names ---- */

/* @u as 8-4-4-4-12 hex digits into @out (37 bytes). */
void wowc_uuid_str(const uint8_t *u, char *out);
const char *wowc_ckpt_state_name(enum wowc_ckpt_state s);
/* "key": unsigned number */
void wowc_json_kv(struct json *j, const char *key, uint64_t v);

#endif /* WOWCACHE_INT_H */
