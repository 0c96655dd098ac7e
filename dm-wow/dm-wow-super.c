// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow superblock: the geometry a table line asks for, the signatures
 * of other formats, log epochs, and the metadata I/O (wow_aio_start,
 * wow_sync_io).  The superblock and health block codec is the pure
 * dm-wow-sb.c; the layout is drawn in dm-wow-format.h.
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "dm-wow.h"
#include "dm-wow-super.h"

void wow_geometry_init(struct wow_geometry *g, const struct wow_args *a,
		       u64 origin_sectors, u64 cache_sectors)
{
	g->block_size = a->block_size;
	g->erase_block_size = a->erase_block_size;
	g->write_group_size = a->write_group_size;
	g->origin_sectors = origin_sectors;
	g->cache_sectors = cache_sectors;
	g->nr_segments = wow_nr_segments_v(WOW_SB_VERSION, cache_sectors,
					   a->erase_block_size, a->block_size);
	g->first_segment_sector =
		wow_first_segment_sector_v(WOW_SB_VERSION, g->nr_segments,
					   a->erase_block_size, a->block_size);
}

/*
 * Well-known signatures of other on-disk formats, looked for in the first
 * WOW_PROBE_BYTES of a cache device whose first block is all zeros: a
 * device holding one of these is in use, not blank (with a small
 * block_size, or an md v1.2 or bcache superblock at 4 KiB, the first
 * block alone can be zero).
 */
static const struct {
	u32 off;
	u8 len;
	const char *magic;
	const char *name;
} foreign_sigs[] = {
	{ 4096, 4, "\xfc\x4e\x2b\xa9", "an md RAID (v1.2) superblock" },
	{ 4096 + 24, 16, "\xc6\x85\x73\xf6\x4e\x1a\x45\xca"
			 "\x82\x65\xf5\x7f\x48\xba\x6d\x81",
	  "a bcache superblock" },
	{ 0, 8, "LABELONE", "an LVM physical volume label" },
	{ 512, 8, "LABELONE", "an LVM physical volume label" },
	{ 1024, 8, "LABELONE", "an LVM physical volume label" },
	{ 1536, 8, "LABELONE", "an LVM physical volume label" },
	{ 512, 8, "EFI PART", "a GPT partition table" },
	{ 1024 + 56, 2, "\x53\xef", "an ext2/3/4 file system" },
	{ 65536 + 64, 8, "_BHRfS_M", "a btrfs file system" },
	{ 4096 - 10, 10, "SWAPSPACE2", "a swap area" },
};

/* The format whose signature the first @len bytes hold, or NULL. */
const char *wow_foreign_signature(const void *buf, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(foreign_sigs); i++)
		if (foreign_sigs[i].off + foreign_sigs[i].len <= len &&
		    !memcmp(buf + foreign_sigs[i].off, foreign_sigs[i].magic,
			    foreign_sigs[i].len))
			return foreign_sigs[i].name;
	return NULL;
}

static void aio_endio(struct bio *bio)
{
	struct wow_aio *a = bio->bi_private;

	a->error = blk_status_to_errno(bio->bi_status);
	bio_put(bio);
	complete(&a->done);
}

/*
 * Metadata I/O (superblock, health block, checkpoints, a load's reads)
 * takes its bios from its own bio_set, not fs_bio_set: a checkpoint is
 * written by the commit worker that writes wait for, and fs_bio_set's
 * reserve may be held by the very writers waiting (issue 34, finding 4).
 * Every bio of one I/O is submitted before the next is allocated, and
 * completes without waiting for anything else, so a small reserve does.
 */
static struct bio_set wow_meta_bs;

int wow_super_init(void)
{
	return bioset_init(&wow_meta_bs, 4, 0, BIOSET_NEED_BVECS);
}

void wow_super_exit(void)
{
	bioset_exit(&wow_meta_bs);
}

/*
 * Start I/O of a kmalloc'ed or vmalloc'ed buffer, of any length: in bios
 * of up to BIO_MAX_VECS pages, all in flight at once (each chained to the
 * next; the last one completes @a).  wow_aio_wait() waits for it and
 * returns its error, or the error of starting it.
 */
void wow_aio_start(struct wow_aio *a, struct block_device *bdev,
		   sector_t sector, void *buf, unsigned int len, blk_opf_t opf)
{
	struct bio *bio = NULL, *next;

	init_completion(&a->done);
	a->error = 0;
	a->submitted = false;
	while (len) {
		unsigned int nr = DIV_ROUND_UP(offset_in_page(buf) + len,
					       PAGE_SIZE);

		next = bio_alloc_bioset(bdev,
					min_t(unsigned int, nr, BIO_MAX_VECS),
					opf, GFP_NOIO, &wow_meta_bs);
		next->bi_iter.bi_sector = sector;
		while (len) {
			unsigned int chunk = min_t(unsigned int, len,
						   PAGE_SIZE -
						   offset_in_page(buf));
			struct page *page = is_vmalloc_addr(buf) ?
					    vmalloc_to_page(buf) :
					    virt_to_page(buf);

			if (!bio_add_page(next, page, chunk,
					  offset_in_page(buf)))
				break;
			buf += chunk;
			len -= chunk;
			sector += chunk >> SECTOR_SHIFT;
		}
		if (WARN_ON_ONCE(!next->bi_iter.bi_size)) {
			bio_put(next);
			a->error = -EIO;
			break;
		}
		if (bio) {
			bio_chain(bio, next);
			submit_bio(bio);
		}
		bio = next;
	}
	if (!bio)
		return;
	bio->bi_opf |= REQ_SYNC;
	bio->bi_private = a;
	bio->bi_end_io = aio_endio;
	a->submitted = true;
	submit_bio(bio);
}

int wow_aio_wait(struct wow_aio *a)
{
	int start_error = a->error;

	if (!a->submitted)
		return start_error;
	wait_for_completion_io(&a->done);
	a->submitted = false;
	return start_error ?: a->error;
}

/* Synchronous I/O of a buffer (wow_aio_start, then wait). */
int wow_sync_io(struct block_device *bdev, sector_t sector, void *buf,
		unsigned int len, blk_opf_t opf)
{
	struct wow_aio a;

	wow_aio_start(&a, bdev, sector, buf, len, opf);
	return wow_aio_wait(&a);
}
