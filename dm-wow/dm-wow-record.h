/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow log record header codec (dm-wow-record.c): where a header's
 * tombstones, origin blocks and block crcs lie, sealing a header, and
 * checking one.  The layout is drawn in dm-wow-format.h.
 *
 * Part of the portable core: pure (no locking, no allocation, no I/O, any
 * context), built unchanged by the module and the userspace tools
 * (dm-wow-types.h).
 */
#ifndef DM_WOW_RECORD_H
#define DM_WOW_RECORD_H

#include "dm-wow-types.h"
#include "dm-wow-format.h"
#include "dm-wow-chain.h"

static inline struct wow_tomb *wow_record_tombs(void *hdr)
{
	return hdr + sizeof(struct wow_record);
}

static inline __le64 *wow_record_oblocks(void *hdr, u32 nr_tombs)
{
	return hdr + sizeof(struct wow_record) +
	       nr_tombs * sizeof(struct wow_tomb);
}

/* With WOW_REC_CRCS: the crc32c of each data block, after the oblocks. */
static inline __le32 *wow_record_crcs(void *hdr, u32 nr_tombs, u32 nr_data)
{
	return (__le32 *)(wow_record_oblocks(hdr, nr_tombs) + nr_data);
}

/* The most tombstones a header of @block_size bytes holds. */
u32 wow_max_tombs(u32 block_size);
/* The crc32c of one data block, as a record's crc[] holds it. */
u32 wow_block_crc(const void *data, u32 block_size);
/*
 * Fill the fixed fields of header @hdr (@block_size bytes) from @ri and
 * @uuid, then its checksum.  Its tombstones, origin blocks and block crcs
 * must be in place already, the rest of the block zero.
 */
void wow_record_seal(void *hdr, u32 block_size, const u8 *uuid,
		     const struct wow_record_info *ri);
/*
 * Check header block @hdr against the cache's @uuid: WOW_REC_FOREIGN (not
 * our magic and uuid: the end of a log), WOW_REC_BAD (ours, but its
 * checksum, counts, flags, seqs, block crcs' sum or a tombstone past its
 * own seq are wrong), or WOW_REC_OK.  @ri is filled unless FOREIGN; it is
 * to be trusted only when OK.  The data blocks are not read here.
 */
enum wow_rec_kind wow_record_check(const void *hdr, u32 block_size,
				   const u8 *uuid,
				   struct wow_record_info *ri);
/*
 * wow_record_check, saying why a header is bad: *@why (when @why is not
 * NULL) is set to a constant string naming the first fault found, in the
 * order: checksum, tombstone count, flags, data count, block crcs' sum,
 * seq 0, seq below seg_seq, a tombstone past the record.  wowctl prints it.
 */
enum wow_rec_kind wow_record_judge(const void *hdr, u32 block_size,
				   const u8 *uuid, struct wow_record_info *ri,
				   const char **why);

#endif
