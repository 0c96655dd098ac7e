// SPDX-License-Identifier: GPL-2.0
/*
 * wowctl writeback (see wowcache.h): every dirty block of the view a load
 * rebuilds, salvaged past a bad record, copied to the origin; the
 * versions lost for good are named, not written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../dm-wow/dm-wow-types.h"
#include "../dm-wow/dm-wow-tombs.h"

#include "wowcache-int.h"

struct wb_blk {
	uint64_t oblock;
	uint32_t slot;
};

static int cmp_wb(const void *a, const void *b)
{
	const struct wb_blk *x = a, *y = b;

	return x->oblock < y->oblock ? -1 : x->oblock > y->oblock;
}

static int cmp_lost(const void *a, const void *b)
{
	const struct wowc_lost *x = a, *y = b;

	if (x->oblock != y->oblock)
		return x->oblock < y->oblock ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pwrite(fd, (const char *)buf + done, len - done,
				   off + done);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += r;
	}
	return 0;
}

/*
 * Is a lost version (@l, in a bad record) one that was acknowledged, and
 * is it gone: not superseded by a recovered newer version, not killed,
 * not destaged (a clean mark covers it)?  Vouched: a claim of its epoch
 * covers its seq (a corrupt record, not a torn write).
 */
static bool lost_for_good(const struct wowc_view *v, const struct wowc_lost *l)
{
	const struct wow_tomb_range *e;
	uint32_t slot = wowc_lookup(v, l->oblock);

	if (!wowc_vouched(v, l->seq))
		return false;
	if (slot != WOWC_NO_SLOT && v->slot_seq[slot] > l->seq)
		return false;
	e = wow_tomb_find(v->kenv, v->nr_kenv, l->oblock);
	if (e && e->t >= l->seq)
		return false;
	e = wow_tomb_find(v->cenv, v->nr_cenv, l->oblock);
	if (e && e->t >= l->seq)
		return false;
	return true;
}

int wowc_writeback(const char *cache, const char *origin, unsigned int flags,
		   FILE *out, FILE *errf, struct wowc_wb_result *res)
{
	struct wowc_wb_result dummy;
	struct wowc_view v = { 0 };
	char err[WOWC_ERR_LEN];
	struct wb_blk *list = NULL;
	uint64_t *skip = NULL, nr_skip = 0, osize, i, n = 0;
	uint8_t *buf = NULL;
	struct wowc *c = NULL;
	bool odirect;
	int ofd = -1, rc, r;
	size_t max_run;

	if (!res)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	if (wowc_open(cache, &c, err)) {
		fprintf(errf, "wowctl: %s\n", err);
		return WOWC_EXIT_OPERR;
	}
	if (c->sb_kind != WOWC_SB_VALID) {
		wowc_print_problems(out, &c->probs);
		fprintf(errf, "wowctl: %s: cannot write back: %s\n", cache,
			c->sb_why);
		rc = WOWC_EXIT_ERROR;
		goto out;
	}
	ofd = wowc_open_dev(origin,
			    (flags & WOWC_WB_DRY_RUN) ? O_RDONLY : O_WRONLY,
			    &odirect, err);
	if (ofd < 0) {
		fprintf(errf, "wowctl: %s\n", err);
		rc = WOWC_EXIT_OPERR;
		goto out;
	}
	r = wowc_dev_size(ofd, &osize);
	if (r) {
		fprintf(errf, "wowctl: %s: cannot size: %s\n", origin,
			strerror(-r));
		rc = WOWC_EXIT_OPERR;
		goto out;
	}
	if (osize != c->sb.origin_sectors * 512 && !(flags & WOWC_WB_FORCE)) {
		fprintf(errf, "wowctl: %s is %" PRIu64 " bytes, the cache's origin %" PRIu64 " bytes; not writing (--force to write all the same)\n",
			origin, osize, c->sb.origin_sectors * 512);
		rc = WOWC_EXIT_OPERR;
		goto out;
	}
	if (osize < c->sb.origin_sectors * 512 && !(flags & WOWC_WB_DRY_RUN)) {
		fprintf(errf, "wowctl: %s is smaller than the cache's origin; blocks past its end fail\n",
			origin);
	}
	if (wowc_view_build(c, WOWC_SALVAGE | (flags & WOWC_SCAN), &v, err)) {
		fprintf(errf, "wowctl: %s\n", err);
		rc = WOWC_EXIT_OPERR;
		goto out;
	}
	wowc_print_problems(out, &c->probs);
	wowc_print_problems(out, &v.probs);

	/* versions lost for good: their blocks are not written (older copies) */
	qsort(v.lost, v.nr_lost, sizeof(*v.lost), cmp_lost);
	skip = malloc((v.nr_lost + 1) * sizeof(*skip));
	list = malloc((v.dirty_blocks + 1) * sizeof(*list));
	max_run = (1U << 20) / c->bs;
	buf = wowc_xalloc(max_run * c->bs);
	if (!skip || !list || !buf) {
		fprintf(errf, "wowctl: out of memory\n");
		rc = WOWC_EXIT_OPERR;
		goto out;
	}
	for (i = 0; i < v.nr_lost; i++)
		if (lost_for_good(&v, &v.lost[i]) &&
		    (!nr_skip || skip[nr_skip - 1] != v.lost[i].oblock)) {
			skip[nr_skip++] = v.lost[i].oblock;
			fprintf(out, "lost: origin block %" PRIu64 ": its newest version (record %" PRIu64 ") is corrupt; not written, the origin keeps what it has\n",
				v.lost[i].oblock, v.lost[i].seq);
		}
	res->unrecoverable = nr_skip;
	for (i = 0; i < v.nr_corrupt; i++)
		if (!v.corrupt[i].known && !v.corrupt[i].harmless) {
			res->unknown++;
			fprintf(out, "lost: record %" PRIu64 " of segment %u is corrupt and its origin blocks are unknown\n",
				v.corrupt[i].seq, v.corrupt[i].seg);
		}

	for (i = 0; i < c->nr_slots; i++) {
		uint64_t sl = wowc_slot(&v, i);

		if ((sl & (WOWC_SLOT_VALID | WOWC_SLOT_DIRTY)) ==
		    (WOWC_SLOT_VALID | WOWC_SLOT_DIRTY)) {
			list[n].oblock = sl & WOWC_SLOT_OBLOCK;
			list[n++].slot = i;
		}
	}
	res->dirty = n;
	qsort(list, n, sizeof(*list), cmp_wb);
	rc = WOWC_EXIT_CLEAN;
	for (i = 0; i < n; ) {
		uint64_t run = 1, base = c->sb.first_segment_sector * 512;

		if (bsearch(&list[i].oblock, skip, nr_skip, sizeof(*skip),
			    cmp_u64)) {
			i++;
			continue;
		}
		while (i + run < n && run < max_run &&
		       list[i + run].oblock == list[i].oblock + run &&
		       list[i + run].slot == list[i].slot + run &&
		       !bsearch(&list[i + run].oblock, skip, nr_skip,
				sizeof(*skip), cmp_u64))
			run++;
		if (!(flags & WOWC_WB_DRY_RUN)) {
			r = wowc_read(c, buf, run * c->bs,
				      base + (uint64_t)list[i].slot * c->bs);
			if (r) {
				fprintf(errf, "wowctl: %s: cannot read cache slot %u: %s\n",
					cache, list[i].slot, strerror(-r));
				rc = WOWC_EXIT_OPERR;
				goto out;
			}
			r = pwrite_full(ofd, buf, run * c->bs,
					list[i].oblock * c->bs);
			if (r) {
				fprintf(errf, "wowctl: %s: cannot write origin block %" PRIu64 ": %s\n",
					origin, list[i].oblock, strerror(-r));
				rc = WOWC_EXIT_OPERR;
				goto out;
			}
		}
		res->written += run;
		i += run;
	}
	if (!(flags & WOWC_WB_DRY_RUN) && fsync(ofd)) {
		fprintf(errf, "wowctl: %s: fsync: %s\n", origin,
			strerror(errno));
		rc = WOWC_EXIT_OPERR;
		goto out;
	}
	fprintf(out, "writeback (from the %s%s): %" PRIu64 " dirty blocks of %" PRIu64 " valid; %" PRIu64 " %s, %" PRIu64 " lost%s\n",
		v.source == WOWC_SRC_CKPT ? "checkpoint" : "log",
		flags & WOWC_WB_DRY_RUN ? ", dry run" : "",
		res->dirty, v.valid_blocks, res->written,
		flags & WOWC_WB_DRY_RUN ? "to write" : "written",
		res->unrecoverable,
		res->unknown ? " (and records whose blocks are unknown)" : "");
	rc = wowc_exit_code(c, &v);
	if (res->unrecoverable || res->unknown)
		rc = WOWC_EXIT_ERROR;
out:
	if (ofd >= 0)
		close(ofd);
	free(buf);
	free(skip);
	free(list);
	wowc_view_free(&v);
	wowc_close(c);
	return rc;
}
