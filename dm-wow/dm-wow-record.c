// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow log record header codec: seal a header, check one and say what
 * it is (the layout is drawn in dm-wow-format.h; dm-wow-record.h).
 *
 * Pure: no locking, no allocation, no I/O.  Part of the portable core:
 * the userspace tools build this file too (wowctl check and dump judge a
 * record as a load does).
 */
#include "dm-wow-record.h"

u32 wow_max_tombs(u32 block_size)
{
	return (block_size - sizeof(struct wow_record)) /
	       sizeof(struct wow_tomb);
}

/* The crc32c of one data block, as a record's crc[] holds it. */
u32 wow_block_crc(const void *data, u32 block_size)
{
	return crc32c(~0U, data, block_size);
}

static u32 record_csum(const void *hdr, u32 block_size)
{
	static const u8 zero[4];
	u32 c = crc32c(WOW_CSUM_SEED, zero, sizeof(zero));

	return crc32c(c, hdr + sizeof(zero), block_size - sizeof(zero));
}

/*
 * Fill the fixed fields of a record header whose tombstones and origin
 * blocks are in place (the rest of the block zero), then its checksum.
 */
void wow_record_seal(void *hdr, u32 block_size, const u8 *uuid,
		     const struct wow_record_info *ri)
{
	struct wow_record *r = hdr;

	r->magic = cpu_to_le32(WOW_REC_MAGIC);
	r->seq = cpu_to_le64(ri->seq);
	r->seg_seq = cpu_to_le64(ri->seg_seq);
	r->durable_seq = cpu_to_le64(ri->durable_seq);
	memcpy(r->uuid, uuid, sizeof(r->uuid));
	r->data_csum = cpu_to_le32(ri->data_csum);
	r->nr_data = cpu_to_le16(ri->nr_data);
	r->nr_tombs = cpu_to_le16(ri->nr_tombs);
	r->flags = cpu_to_le32(ri->flags);
	r->next_seg = cpu_to_le32(ri->next_seg + 1);
	r->csum = cpu_to_le32(record_csum(hdr, block_size));
}

static enum wow_rec_kind bad(const char **why, const char *what)
{
	if (why)
		*why = what;
	return WOW_REC_BAD;
}

/*
 * Decode a record header block: ours and intact, ours but bad (with the
 * first fault found in *@why, when @why), or not ours.
 */
enum wow_rec_kind wow_record_judge(const void *hdr, u32 block_size,
				   const u8 *uuid, struct wow_record_info *ri,
				   const char **why)
{
	const struct wow_record *r = hdr;
	const struct wow_tomb *t = hdr + sizeof(*r);
	u32 i;

	if (le32_to_cpu(r->magic) != WOW_REC_MAGIC ||
	    memcmp(r->uuid, uuid, sizeof(r->uuid)))
		return WOW_REC_FOREIGN;
	ri->seq = le64_to_cpu(r->seq);
	ri->seg_seq = le64_to_cpu(r->seg_seq);
	ri->durable_seq = le64_to_cpu(r->durable_seq);
	ri->data_csum = le32_to_cpu(r->data_csum);
	ri->nr_data = le16_to_cpu(r->nr_data);
	ri->nr_tombs = le16_to_cpu(r->nr_tombs);
	ri->next_seg = le32_to_cpu(r->next_seg) - 1;
	ri->flags = le32_to_cpu(r->flags);
	if (le32_to_cpu(r->csum) != record_csum(hdr, block_size))
		return bad(why, "header checksum");
	if (ri->nr_tombs > wow_max_tombs(block_size))
		return bad(why, "more tombstones than a header holds");
	if (ri->flags & ~WOW_REC_CRCS)
		return bad(why, "unknown record flags");
	if (ri->nr_data > wow_record_capacity(block_size, ri->nr_tombs,
					      ri->flags))
		return bad(why, "more data blocks than a header holds");
	/* the block crcs are the header's: data_csum is theirs */
	if ((ri->flags & WOW_REC_CRCS) &&
	    ri->data_csum != crc32c(~0U, wow_record_crcs((void *)hdr,
							  ri->nr_tombs,
							  ri->nr_data),
				    ri->nr_data * sizeof(__le32)))
		return bad(why, "data_csum is not the block crcs'");
	if (!ri->seq)
		return bad(why, "seq 0");
	if (ri->seq < ri->seg_seq)
		return bad(why, "seq below seg_seq");
	/*
	 * A tombstone or clean mark speaks of records written before its
	 * own: one that reaches past it (crafted, or corrupt behind a
	 * matching checksum) would kill or clean writes not yet made.
	 */
	for (i = 0; i < ri->nr_tombs; i++)
		if (le64_to_cpu(t[i].t) > ri->seq)
			return bad(why, "a tombstone reaches past its record");
	return WOW_REC_OK;
}

enum wow_rec_kind wow_record_check(const void *hdr, u32 block_size,
				   const u8 *uuid,
				   struct wow_record_info *ri)
{
	return wow_record_judge(hdr, block_size, uuid, ri, NULL);
}
