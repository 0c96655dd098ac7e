/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow superblock (dm-wow-super.c): the geometry a table line asks for,
 * the signatures of other formats, log epochs, and the metadata I/O every
 * part's metadata goes through.  No locks; the I/O calls sleep.
 */
#ifndef DM_WOW_SUPER_H
#define DM_WOW_SUPER_H

#include "dm-wow.h"

/*
 * The layout (dm-wow-format.h) a table line's @a gives on a cache device
 * of @cache_sectors over an origin of @origin_sectors.
 */
void wow_geometry_init(struct wow_geometry *g, const struct wow_args *a,
		       u64 origin_sectors, u64 cache_sectors);

/* Bytes read at the start of a cache device to tell blank from in use. */
#define WOW_PROBE_BYTES		(68U << 10)
/* The format whose signature the first @len bytes hold, or NULL. */
const char *wow_foreign_signature(const void *buf, unsigned int len);

/* wow_next_epoch_seq: dm-wow-chain.h (pure) */

/*
 * Metadata I/O of a kmalloc'ed or vmalloc'ed buffer of any length, with
 * bios from the metadata bio_set (not fs_bio_set: a checkpoint is written
 * where writes wait): wow_aio_start puts it all in flight, wow_aio_wait
 * waits and returns its error (or starting it's); wow_sync_io does both.
 * Sleep.
 */
struct wow_aio {
	struct completion done;
	int error;
	bool submitted;
};

void wow_aio_start(struct wow_aio *a, struct block_device *bdev,
		   sector_t sector, void *buf, unsigned int len, blk_opf_t opf);
int wow_aio_wait(struct wow_aio *a);
int wow_sync_io(struct block_device *bdev, sector_t sector, void *buf,
		unsigned int len, blk_opf_t opf);

/* The metadata bio_set: at module load and unload. */
int wow_super_init(void);
void wow_super_exit(void);

#endif /* DM_WOW_SUPER_H */
