// SPDX-License-Identifier: GPL-2.0
/*
 * wowctl metadata-size (see wowcache.h): what a cache of a given size
 * costs in metadata on the device and in the kernel's RAM, from the
 * format's own layout functions.
 */
#include <inttypes.h>
#include <string.h>

#include "../dm-wow/dm-wow-types.h"
#include "../dm-wow/dm-wow-format.h"
#include "../dm-wow/dm-wow-ckpt.h"
#include "../dm-wow/dm-wow-index.h"
#include "../dm-wow/dm-wow-sb.h"

#include "json.h"
#include "wowcache-int.h"

/* What a clean load reads: the header and its closing copy, the tables. */
static uint64_t ckpt_load_bytes(uint64_t slots, uint64_t segs, uint64_t tombs,
				uint32_t bs)
{
	return (2 + wow_ckpt_slot_blocks(WOW_SB_VERSION, slots, bs) +
		wow_ckpt_seg_blocks(WOW_SB_VERSION, slots, segs, tombs, bs)) *
	       (uint64_t)bs;
}

int wowc_msize(uint64_t cache_bytes, uint32_t bs, uint32_t ebs,
	       struct wowc_msize *m, char *err)
{
	uint64_t sectors = cache_bytes >> 9, min, slots;

	memset(m, 0, sizeof(*m));
	if (!is_power_of_2(bs) || bs < WOW_MIN_BLOCK_SIZE ||
	    bs > WOW_MAX_BLOCK_SIZE) {
		wowc_seterr(err, "block size must be a power of 2 from %u to %u",
			    WOW_MIN_BLOCK_SIZE, WOW_MAX_BLOCK_SIZE);
		return -EINVAL;
	}
	if (!is_power_of_2(ebs) || ebs < bs * WOW_MIN_BLOCKS_PER_SEGMENT ||
	    ebs > WOW_MAX_ERASE_BLOCK_SIZE) {
		wowc_seterr(err, "erase block size must be a power of 2 of at least 4 blocks, at most %u",
			    WOW_MAX_ERASE_BLOCK_SIZE);
		return -EINVAL;
	}
	min = wow_min_cache_sectors_v(WOW_SB_VERSION, ebs, bs);
	if (sectors < min) {
		wowc_seterr(err, "cache too small: needs %" PRIu64 " bytes for its metadata and %u segments",
			    min * 512, WOW_MIN_SEGMENTS);
		return -EINVAL;
	}
	m->cache_bytes = cache_bytes;
	m->block_size = bs;
	m->erase_block_size = ebs;
	m->nr_segments = wow_nr_segments_v(WOW_SB_VERSION, sectors, ebs, bs);
	m->nr_slots = slots = m->nr_segments * (ebs / bs);
	if (slots > WOW_MAX_SLOTS) {
		wowc_seterr(err, "cache too large for block size %u (%" PRIu64 " blocks)",
			    bs, slots);
		return -EINVAL;
	}
	m->ckpt_area_blocks = wow_ckpt_area_blocks_v(WOW_SB_VERSION,
						     m->nr_segments, ebs, bs);
	m->first_segment_sector = wow_first_segment_sector_v(WOW_SB_VERSION,
							     m->nr_segments,
							     ebs, bs);
	m->metadata_bytes = m->first_segment_sector * 512;
	m->unused_bytes = cache_bytes - m->metadata_bytes -
			  m->nr_segments * ebs;
	/* dm-wow-index.c's slots and bucket heads */
	m->index_bytes = slots * sizeof(struct wow_slot) +
			 ((uint64_t)sizeof(u32) << wow_index_hash_bits(slots));
	/* with no tombstone, and with every one the area has room for */
	m->load_bytes_min = ckpt_load_bytes(slots, m->nr_segments, 0, bs);
	m->load_bytes_max = ckpt_load_bytes(slots, m->nr_segments,
					    wow_ckpt_max_tombs_v(WOW_SB_VERSION,
								 m->nr_segments,
								 ebs, bs), bs);
	return 0;
}

void wowc_msize_print(FILE *f, const struct wowc_msize *m, bool json)
{
	if (json) {
		struct json j;

		json_init(&j, f, true);
		json_open(&j, '{', -1);
		wowc_json_kv(&j, "cache_bytes", m->cache_bytes);
		wowc_json_kv(&j, "block_size", m->block_size);
		wowc_json_kv(&j, "erase_block_size", m->erase_block_size);
		wowc_json_kv(&j, "segments", m->nr_segments);
		wowc_json_kv(&j, "cache_blocks", m->nr_slots);
		wowc_json_kv(&j, "checkpoint_area_blocks", m->ckpt_area_blocks);
		wowc_json_kv(&j, "checkpoint_area_bytes",
			     m->ckpt_area_blocks * m->block_size);
		wowc_json_kv(&j, "first_segment_sector", m->first_segment_sector);
		wowc_json_kv(&j, "first_segment_offset", m->metadata_bytes);
		wowc_json_kv(&j, "unused_bytes", m->unused_bytes);
		wowc_json_kv(&j, "index_ram_bytes", m->index_bytes);
		wowc_json_kv(&j, "clean_load_bytes", m->load_bytes_min);
		wowc_json_kv(&j, "clean_load_bytes_max", m->load_bytes_max);
		json_close(&j);
		fputc('\n', f);
		return;
	}
	fprintf(f, "cache size:              %" PRIu64 " bytes\n", m->cache_bytes);
	fprintf(f, "block size:              %u bytes\n", m->block_size);
	fprintf(f, "erase block size:        %u bytes\n", m->erase_block_size);
	fprintf(f, "segments:                %" PRIu64 " (%" PRIu64 " cache blocks, %" PRIu64 " bytes)\n",
		m->nr_segments, m->nr_slots, m->nr_slots * m->block_size);
	fprintf(f, "checkpoint area:         %" PRIu64 " blocks (%" PRIu64 " bytes) from block %" PRIu64 " (erase block 1)\n",
		m->ckpt_area_blocks, m->ckpt_area_blocks * m->block_size,
		(uint64_t)wow_ckpt_first_block_v(WOW_SB_VERSION,
						 m->erase_block_size,
						 m->block_size));
	fprintf(f, "first segment:           sector %" PRIu64 " (offset %" PRIu64 " bytes; metadata before it)\n",
		m->first_segment_sector, m->metadata_bytes);
	fprintf(f, "unused tail:             %" PRIu64 " bytes\n", m->unused_bytes);
	fprintf(f, "index RAM:               %" PRIu64 " bytes (12-byte slot and up to 2 bytes of hash heads per cache block)\n",
		m->index_bytes);
	fprintf(f, "load after clean shutdown: %" PRIu64 " bytes read (%" PRIu64 " with the most tombstones)\n",
		m->load_bytes_min, m->load_bytes_max);
}
