// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow superblock and health block codec: encode and decode with
 * crc32c, the superblock's checks in the order wow_sb_decode gives them,
 * and the comparison of a superblock with a table line.  The layout is
 * drawn in dm-wow-format.h.
 *
 * Pure: no locking, no allocation, no I/O (dm-wow-sb.h).
 */
#include "dm-wow-sb.h"

static_assert(sizeof(struct wow_superblock) == WOW_SB_CSUM_BYTES);

static u32 sb_csum(const struct wow_superblock *sb)
{
	return crc32c(WOW_CSUM_SEED, (const u8 *)sb + sizeof(sb->csum),
		      WOW_SB_CSUM_BYTES - sizeof(sb->csum));
}

void wow_sb_encode(struct wow_superblock *sb, const struct wow_sb_info *info)
{
	const struct wow_geometry *g = &info->geo;

	memset(sb, 0, sizeof(*sb));
	sb->version = cpu_to_le32(info->version);
	sb->magic = cpu_to_le64(WOW_SB_MAGIC);
	sb->flags = cpu_to_le32(info->flags);
	sb->block_size = cpu_to_le32(g->block_size);
	sb->erase_block_size = cpu_to_le32(g->erase_block_size);
	sb->write_group_size = cpu_to_le32(g->write_group_size);
	sb->origin_sectors = cpu_to_le64(g->origin_sectors);
	sb->cache_sectors = cpu_to_le64(g->cache_sectors);
	sb->first_segment_sector = cpu_to_le64(g->first_segment_sector);
	sb->nr_segments = cpu_to_le64(g->nr_segments);
	sb->format_seq = cpu_to_le64(info->format_seq);
	memcpy(sb->uuid, info->uuid, sizeof(sb->uuid));
	memcpy(sb->origin_id, info->origin_id, sizeof(sb->origin_id));
	sb->csum = cpu_to_le32(sb_csum(sb));
}

static_assert(sizeof(struct wow_health) == WOW_SB_CSUM_BYTES);

static u32 health_csum(const struct wow_health *hb)
{
	return crc32c(WOW_CSUM_SEED, (const u8 *)hb + sizeof(hb->csum),
		      WOW_SB_CSUM_BYTES - sizeof(hb->csum));
}

/* The health block for @h, in a whole block of @len bytes. */
void wow_health_encode(void *block, unsigned int len, const u8 *uuid,
		       const struct wow_health_info *h)
{
	struct wow_health *hb = block;

	memset(block, 0, len);
	hb->version = cpu_to_le32(WOW_HEALTH_VERSION);
	hb->magic = cpu_to_le64(WOW_HEALTH_MAGIC);
	memcpy(hb->uuid, uuid, sizeof(hb->uuid));
	hb->flags = cpu_to_le32(h->flags);
	hb->state = cpu_to_le32(h->state);
	hb->time = cpu_to_le64(h->time);
	strscpy_pad(hb->what, h->what, sizeof(hb->what));
	hb->csum = cpu_to_le32(health_csum(hb));
}

bool wow_health_ours(const void *block, unsigned int len, const u8 *uuid)
{
	const struct wow_health *hb = block;

	return len >= sizeof(*hb) &&
	       le64_to_cpu(hb->magic) == WOW_HEALTH_MAGIC &&
	       !memcmp(hb->uuid, uuid, sizeof(hb->uuid));
}

/*
 * Decode a health block for the cache with @uuid into @h.  Another magic
 * or uuid says nothing (all clear); our magic and uuid with a bad checksum
 * or an unknown version was torn while an error was being recorded:
 * needs_check.  Returns true when @h says needs_check.
 */
bool wow_health_decode(const void *block, unsigned int len, const u8 *uuid,
		       struct wow_health_info *h)
{
	const struct wow_health *hb = block;

	memset(h, 0, sizeof(*h));
	if (!wow_health_ours(block, len, uuid))
		return false;
	if (le32_to_cpu(hb->csum) != health_csum(hb) ||
	    le32_to_cpu(hb->version) != WOW_HEALTH_VERSION) {
		h->flags = WOW_SB_F_NEEDS_CHECK;
		strscpy(h->what, "(health block unreadable)", sizeof(h->what));
		return true;
	}
	h->flags = le32_to_cpu(hb->flags);
	h->state = le32_to_cpu(hb->state);
	h->time = le64_to_cpu(hb->time);
	memcpy(h->what, hb->what, sizeof(h->what));
	h->what[sizeof(h->what) - 1] = 0;
	return h->flags & WOW_SB_F_NEEDS_CHECK;
}

static bool all_zero(const void *buf, unsigned int len)
{
	return !memchr_inv(buf, 0, len);
}

static bool valid_block_geometry(u32 bs, u32 ebs, u32 wgs)
{
	return is_power_of_2(bs) && bs >= WOW_MIN_BLOCK_SIZE &&
	       bs <= WOW_MAX_BLOCK_SIZE && is_power_of_2(ebs) &&
	       ebs >= bs * WOW_MIN_BLOCKS_PER_SEGMENT &&
	       ebs <= WOW_MAX_ERASE_BLOCK_SIZE && is_power_of_2(wgs) &&
	       wgs >= bs && wgs <= WOW_MAX_WRITE_GROUP_SIZE;
}

/*
 * Classify the first @len bytes of a cache device (len >= 512).  For a
 * valid superblock, fill @info.  For anything else, *why says what is wrong.
 */
enum wow_sb_kind wow_sb_decode(const void *block, unsigned int len,
			       struct wow_sb_info *info, const char **why)
{
	const struct wow_superblock *sb = block;
	struct wow_geometry *g = &info->geo;

	*why = NULL;
	if (all_zero(block, len))
		return WOW_SB_ZERO;
	if (le64_to_cpu(sb->magic) != WOW_SB_MAGIC) {
		*why = "no dm-wow superblock";
		return WOW_SB_FOREIGN;
	}
	if (le32_to_cpu(sb->csum) != sb_csum(sb)) {
		*why = "superblock checksum mismatch";
		return WOW_SB_CORRUPT;
	}
	if (le32_to_cpu(sb->version) > WOW_SB_VERSION) {
		*why = "superblock version is newer than this module";
		return WOW_SB_NEWER;
	}
	if (le32_to_cpu(sb->version) < 1) {
		*why = "superblock version is invalid";
		return WOW_SB_CORRUPT;
	}

	memset(info, 0, sizeof(*info));
	info->version = le32_to_cpu(sb->version);
	info->flags = le32_to_cpu(sb->flags);
	info->format_seq = le64_to_cpu(sb->format_seq);
	memcpy(info->uuid, sb->uuid, sizeof(info->uuid));
	memcpy(info->origin_id, sb->origin_id, sizeof(info->origin_id));
	info->origin_id[sizeof(info->origin_id) - 1] = 0;
	g->block_size = le32_to_cpu(sb->block_size);
	g->erase_block_size = le32_to_cpu(sb->erase_block_size);
	g->write_group_size = le32_to_cpu(sb->write_group_size);
	g->origin_sectors = le64_to_cpu(sb->origin_sectors);
	g->cache_sectors = le64_to_cpu(sb->cache_sectors);
	g->first_segment_sector = le64_to_cpu(sb->first_segment_sector);
	g->nr_segments = le64_to_cpu(sb->nr_segments);

	if (!valid_block_geometry(g->block_size, g->erase_block_size,
				  g->write_group_size) ||
	    g->nr_segments != wow_nr_segments_v(info->version,
						g->cache_sectors,
						g->erase_block_size,
						g->block_size) ||
	    g->first_segment_sector !=
		    wow_first_segment_sector_v(info->version, g->nr_segments,
					       g->erase_block_size,
					       g->block_size) ||
	    g->nr_segments < WOW_MIN_SEGMENTS || !g->origin_sectors) {
		*why = "superblock geometry is inconsistent";
		return WOW_SB_CORRUPT;
	}
	return WOW_SB_VALID;
}

/*
 * NULL when a table's geometry matches the superblock's, else a message
 * for ti->error.  The cache device may have grown since format; the
 * superblock's segment count is what counts then.
 */
const char *wow_sb_geometry_mismatch(const struct wow_geometry *sb,
				     const struct wow_geometry *table)
{
	if (sb->block_size != table->block_size)
		return "Cache has another block_size; use 'format' to reinitialise";
	if (sb->erase_block_size != table->erase_block_size)
		return "Cache has another erase_block_size; use 'format' to reinitialise";
	if (sb->write_group_size != table->write_group_size)
		return "Cache has another write_group_size; use 'format' to reinitialise";
	if (sb->origin_sectors != table->origin_sectors)
		return "Cache belongs to an origin of another length; use 'format' to reinitialise";
	if (sb->cache_sectors > table->cache_sectors)
		return "Cache device is smaller than when it was formatted";
	return NULL;
}
