/* SPDX-License-Identifier: GPL-2.0 OR LGPL-2.1 */
/*
 * dm-wow on-disk format, shared by the kernel target and userspace.
 *
 * Cache device layout (E = erase_block_size, B = block_size), version 4:
 *
 *   0          B      2B       E                 E+A                 F
 *   +----------+------+--------+-----------------+-----------------+-----
 *   |superblock|health| unused | checkpoint      | checkpoint      | seg 0
 *   |          |      |        | area 0          | area 1          | ...
 *   +----------+------+--------+-----------------+-----------------+-----
 *   |<------- metadata: F = first_segment_sector, a multiple of E ->|
 *
 * Two checkpoint areas, each A = wow_ckpt_span_v() blocks (whole erase
 * blocks), start at erase block 1, so that each checkpoint is written
 * into erased flash from its start, front to back (see the checkpoint
 * below): the only cache writes that are not appends are the
 * superblock's and the health block's.  Checkpoints go to the two areas
 * in turn (never to the one holding the newest valid checkpoint), so a
 * crash while one is written leaves the other to load from.
 *
 * Version 3 has one area (at erase block 1, whole erase blocks, the
 * segments right after it); a crash while its checkpoint is written
 * leaves none, and the load scans the log.  Version 2 put the area in
 * erase block 0 (blocks 2..) and rewrote it in place.  Caches of both
 * keep their layout and are still read and written.
 * Version 1 has no checkpoint area: F = E, blocks 2.. of erase block 0
 * are never written.  The area's place and size and the segment count
 * follow from the version, the cache size, E and B
 * (wow_ckpt_first_block_v, wow_nr_segments_v, wow_first_segment_sector_v).
 *
 * The superblock is one block at offset 0, written at format time and
 * otherwise rewritten only when the whole device is reformatted.  Its first
 * WOW_SB_CSUM_BYTES bytes are covered by a crc32c; the rest of the block is
 * zero.  All integers are little endian.
 *
 * Log segments start at F and fill the device in whole erase blocks; a
 * tail shorter than one erase block is never used.
 *
 * A segment holds log records appended back to back from its start:
 *
 *   segment:  | rec hdr | data ... data | rec hdr | data ... | rec hdr | ...
 *   rec hdr:  | struct wow_record | struct wow_tomb tomb[nr_tombs] |
 *             | __le64 oblock[nr_data] | __le32 crc[nr_data] (WOW_REC_CRCS) |
 *             | zeros to the block end |
 *
 * Each record is one block of header followed by nr_data blocks of data,
 * written with one I/O at the segment's write pointer.  A record of
 * tombstones only (nr_data 0) may take a segment's last block.  Of two
 * data blocks of one record for the same origin block, the later is the
 * current copy.  Its csum covers the
 * whole header block (csum zeroed) and, through data_csum, the data blocks.
 * From format version 5 every record has WOW_REC_CRCS: a crc32c of each
 * data block follows the origin blocks (so destage and cleaning can check
 * the very block they read), and data_csum is the crc32c of that array
 * (the data is hashed once, block by block); before, data_csum is the
 * crc32c of the data blocks.
 * seq grows by one per record across the device; seg_seq is the seq of the
 * first record of the segment's current life, so records left from an
 * earlier life of the segment are told apart and the recovery scan of a
 * segment stops at the first record that is torn, corrupt, or older.
 * Records of one segment life have consecutive seqs.  durable_seq lets
 * recovery tell a torn tail (a record never made durable, dropped) from
 * corruption of a record a later one proves durable (the load is refused).
 * Every load starts a new epoch (seq >> 32): its first seq is the start of
 * the epoch after every seq the load saw, and a record's durable_seq
 * vouches only for records of its own epoch, so a torn record dropped by
 * one load is never proven durable by records written after it.
 *
 * A tombstone says: every record of origin blocks [start, start + nr) with
 * seq <= t is dead.  Tombstones are written when cached copies are dropped
 * (discard, reclaim of a segment) and carried forward while an older record
 * they kill may still be on the device.  With WOW_TOMB_CLEAN it is a clean
 * mark instead: those records were destaged.  Clean marks are written at a
 * clean shutdown so recovery need not destage again; losing one is safe.
 */
#ifndef DM_WOW_FORMAT_H
#define DM_WOW_FORMAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
/* userspace defines __packed and le<->cpu helpers before including this */
#include <linux/types.h>
#endif

#define WOW_SB_MAGIC		0x48434143574f5744ULL	/* "DWOWCACH" */
/* 5; 4: no block crcs; 3: one area; 2: in erase block 0; 1: none */
#define WOW_SB_VERSION		5
#define WOW_SB_CSUM_BYTES	512	/* crc32c covers this prefix */
#define WOW_CSUM_SEED		0xd3f00d5eU

/* superblock flags */
#define WOW_SB_F_CLEAN		0x00000001U	/* last shutdown committed */
#define WOW_SB_F_NEEDS_CHECK	0x00000002U	/* metadata error was seen */

#define WOW_MIN_BLOCK_SIZE	512U
#define WOW_MAX_BLOCK_SIZE	65536U
/* An erase block holds at least this many cache blocks. */
#define WOW_MIN_BLOCKS_PER_SEGMENT	4U
#define WOW_MAX_ERASE_BLOCK_SIZE	268435456U
#define WOW_MAX_WRITE_GROUP_SIZE	67108864U
/* A cache device holds at least this many log segments. */
#define WOW_MIN_SEGMENTS	4U

#define WOW_REC_MAGIC		0x52574f57U	/* "WOWR" */

struct wow_record {
	__le32 csum;		/* crc32c of the header block, csum zeroed */
	__le32 magic;
	__le64 seq;
	__le64 seg_seq;
	__le64 durable_seq;	/* every record <= this was durable */
	__u8 uuid[16];		/* the superblock's */
	__le32 data_csum;	/* crc32c of the data blocks, or of crc[] */
	__le16 nr_data;
	__le16 nr_tombs;
	__le32 flags;		/* WOW_REC_CRCS */
	/*
	 * Version 2: where the log goes on when this segment ends: the
	 * segment number + 1 (0: not known when written).  It is the head
	 * of the free list, the segment opened next.
	 */
	__le32 next_seg;
} __packed;

/* record flags */
#define WOW_REC_CRCS		0x00000001U	/* crc[nr_data] follows oblock[] */

#define WOW_TOMB_CLEAN		0x00000001U	/* a clean mark, not a kill */

struct wow_tomb {
	__le64 start;		/* origin block */
	__le64 t;		/* applies to records with seq <= t */
	__le32 nr;		/* origin blocks */
	__le32 flags;
} __packed;

/*
 * Data blocks a header block of @block_size bytes with @nr_tombs
 * tombstones can describe: 8 bytes each, 12 with WOW_REC_CRCS in @flags.
 */
static inline unsigned int wow_record_capacity(__u32 block_size,
					       unsigned int nr_tombs,
					       __u32 flags)
{
	unsigned int room = block_size - sizeof(struct wow_record) -
			    nr_tombs * sizeof(struct wow_tomb);

	return room / (sizeof(__le64) +
		       (flags & WOW_REC_CRCS ? sizeof(__le32) : 0));
}

/* The record flags a cache in format @version writes. */
static inline __u32 wow_record_flags_v(__u32 version)
{
	return version >= 5 ? WOW_REC_CRCS : 0;
}

#define WOW_ORIGIN_ID_LEN	64

struct wow_superblock {
	__le32 csum;		/* crc32c of bytes 4..WOW_SB_CSUM_BYTES-1 */
	__le32 version;
	__le64 magic;
	__le32 flags;
	__le32 block_size;	/* bytes */
	__le32 erase_block_size;	/* bytes */
	__le32 write_group_size;	/* bytes */
	__le64 origin_sectors;	/* length of the origin the cache belongs to */
	__le64 cache_sectors;	/* size of the cache device at format */
	__le64 first_segment_sector;
	__le64 nr_segments;
	__le64 format_seq;	/* log sequence numbers start above this */
	__u8 uuid[16];		/* stamped into every log record */
	/*
	 * What named the origin at format, independent of its /dev name (a
	 * partition's UUID, or a disk's unique id and the partition start),
	 * NUL padded; all zero when the origin had none.  Zero in caches
	 * formatted before it was recorded.
	 */
	char origin_id[WOW_ORIGIN_ID_LEN];
	__u8 padding[WOW_SB_CSUM_BYTES - 88 - WOW_ORIGIN_ID_LEN];
} __packed;

/*
 * The health block: block 1 of erase block 0 (offset block_size), whole
 * block, its first WOW_SB_CSUM_BYTES covered by a crc32c like the
 * superblock's, the rest zero.  The superblock is never rewritten; this
 * block is, with FUA, when the cache device fails an I/O (the target goes
 * read_only or failed), so the next load knows: WOW_SB_F_NEEDS_CHECK.
 * Format writes it with no flag.  A block with another magic or another
 * uuid (never written, or left from an earlier format) says nothing; one
 * with our magic and uuid that fails its checksum was torn while being
 * written, which only happens when an error is being recorded, so it too
 * means needs_check.
 */
#define WOW_HEALTH_MAGIC	0x48544c48574f5744ULL	/* "DWOWHLTH" */
#define WOW_HEALTH_VERSION	1
#define WOW_HEALTH_WHAT_LEN	64

struct wow_health {
	__le32 csum;		/* crc32c of bytes 4..WOW_SB_CSUM_BYTES-1 */
	__le32 version;
	__le64 magic;
	__u8 uuid[16];		/* the superblock's */
	__le32 flags;		/* WOW_SB_F_NEEDS_CHECK */
	__le32 state;		/* 1 read_only, 2 failed, when written */
	__le64 time;		/* seconds since 1970 when written */
	char what[WOW_HEALTH_WHAT_LEN];	/* what failed, NUL padded */
	__u8 padding[WOW_SB_CSUM_BYTES - 48 - WOW_HEALTH_WHAT_LEN];
} __packed;

/*
 * The checkpoint (format versions 2 and 3): what a load needs, written at
 * a clean shutdown and every checkpoint_interval of log, so that the next
 * load reads it and the log written since instead of the whole log.
 * Documentation/design.rst, Checkpoint, has the commit order.
 *
 * The area starts at wow_ckpt_first_block_v(): block 2 in version 2 (after
 * the superblock and the health block), erase block 1 in version 3:
 *
 *   | header | slot table ...           | segment stream ...     | header |
 *   | 1 blk  | S blocks, 6 B per slot   | G blocks, each sealed  | (v3)   |
 *   |        | (10 in v5; no trailer)   | with a wow_ckpt_trailer |        |
 *
 * Slot table: one 6-byte little-endian entry per cache slot, in slot
 * order, wow_ckpt_slots_per_block() to a block (the rest of a block is
 * zero): bits 0..45 the origin block, bit 46 dirty, bit 47 valid; 0 when
 * the slot holds nothing.  From version 5 an entry is 10 bytes: those 6,
 * then the crc32c of the block's data (0 when the slot holds nothing).
 * Segment stream: the payloads of the G blocks, as one stream of bytes:
 * struct wow_ckpt_seg per segment, then a __le32 crc32c per slot table
 * block, then the tombstones the segments hold (struct wow_tomb, in
 * segment order, nr_tombs each).  Each block ends with a trailer naming
 * the checkpoint's generation and the block's index, under a crc32c of
 * the block, so a block left from another checkpoint, torn or misplaced
 * is told apart.
 *
 * Version 3 writes the area as an append: the area's erase blocks are
 * discarded, then the header, the tables and a second copy of the header
 * (the closing copy, block 1 + S + G) are written front to back, the
 * closing copy last, with PREFLUSH and FUA.  The checkpoint is valid only
 * when both copies are the same, say WOW_CKPT_VALID and every block
 * checks.  Version 2 writes the tables, then the header (last, PREFLUSH
 * and FUA) over the one before; it has no closing copy.
 * A checkpoint is a base: a load replays the records written after it,
 * from the log head it names along the chain of the records' next_seg
 * (Documentation/design.rst).
 */
#define WOW_CKPT_MAGIC		0x54504b43574f5744ULL	/* "DWOWCKPT" */
#define WOW_CKPT_VERSION	1
#define WOW_CKPT_VALID		0x00000001U
#define WOW_CKPT_FIRST_BLOCK	2
#define WOW_CKPT_SLOT_BYTES	6	/* 10 from version 5: + the crc32c */
#define WOW_CKPT_SLOT_BYTES_V5	10
#define WOW_CKPT_OBLOCK_BITS	46
#define WOW_CKPT_SLOT_DIRTY	0x0000400000000000ULL	/* bit 46 */
#define WOW_CKPT_SLOT_VALID	0x0000800000000000ULL	/* bit 47 */
#define WOW_CKPT_OBLOCK_MASK	0x00003fffffffffffULL	/* bits 0..45 */

struct wow_ckpt_header {
	__le32 csum;		/* crc32c of bytes 4..WOW_SB_CSUM_BYTES-1 */
	__le32 version;
	__le64 magic;
	__u8 uuid[16];		/* the superblock's */
	__le32 flags;		/* WOW_CKPT_VALID */
	__le32 reserved;
	__le64 generation;	/* of every segment stream block */
	__le64 next_seq;	/* the log's: every record on disk is older */
	__le64 completed_seq;	/* the newest record */
	__le64 nr_slots;
	__le64 nr_segments;
	__le64 slot_blocks;	/* S */
	__le64 seg_blocks;	/* G */
	__le64 nr_tombs;	/* tombstones in the segment stream */
	/*
	 * The log head when it was written, where a load replays from:
	 * the open segment + 1 (0: none) and its write pointer, and the
	 * segment opened next + 1 (0: not known).  The first record after
	 * the checkpoint has seq next_seq, or starts a later epoch.
	 */
	__le32 head_seg;
	__le32 head_wp;
	__le32 next_seg;
	__le32 reserved2;
	__u8 padding[WOW_SB_CSUM_BYTES - 120];
} __packed;

struct wow_ckpt_trailer {
	__le32 csum;		/* crc32c of the block, this field zeroed */
	__le32 index;		/* the block's index in the segment stream */
	__le64 generation;
} __packed;

#define WOW_CKPT_SEG_CLOSED	1	/* else free: seq and the rest 0 */

struct wow_ckpt_seg {
	__le64 seq;		/* the life's first record */
	__le64 max_seq;		/* its newest record */
	__le32 wp;		/* blocks written */
	__le32 nr_tombs;	/* tombstones it holds */
	__le32 state;		/* WOW_CKPT_SEG_CLOSED or 0 */
	__le32 reserved;
} __packed;

/* Bytes of a slot table entry in format @version. */
static inline __u32 wow_ckpt_slot_bytes(__u32 version)
{
	return version >= 5 ? WOW_CKPT_SLOT_BYTES_V5 : WOW_CKPT_SLOT_BYTES;
}

static inline __u32 wow_ckpt_slots_per_block(__u32 version,
					     __u32 block_size)
{
	return block_size / wow_ckpt_slot_bytes(version);
}

/* Tombstones a checkpoint has room for: past this none is written. */
static inline __u64 wow_ckpt_max_tombs(__u64 nr_slots)
{
	return nr_slots / 8 + 64;
}

static inline __u64 wow_ckpt_slot_blocks(__u32 version, __u64 nr_slots,
					 __u32 block_size)
{
	__u32 per = wow_ckpt_slots_per_block(version, block_size);

	return (nr_slots + per - 1) / per;
}

/* Blocks of the segment stream holding @nr_tombs tombstones. */
static inline __u64 wow_ckpt_seg_blocks(__u32 version, __u64 nr_slots,
					__u64 nr_segments, __u64 nr_tombs,
					__u32 block_size)
{
	__u64 bytes = nr_segments * sizeof(struct wow_ckpt_seg) +
		      wow_ckpt_slot_blocks(version, nr_slots, block_size) * 4 +
		      nr_tombs * sizeof(struct wow_tomb);
	__u32 payload = block_size - sizeof(struct wow_ckpt_trailer);

	return (bytes + payload - 1) / payload;
}

/*
 * The whole checkpoint metadata of a cache of @nr_segments segments in
 * format @version, in blocks: the header, the tables at their largest,
 * and from version 3 the closing copy of the header.  Version 4 has two
 * areas, each that much rounded up to whole erase blocks
 * (wow_ckpt_span_v): this is both.
 */
static inline __u64 wow_ckpt_one_area_blocks_v(__u32 version,
					       __u64 nr_segments,
					       __u32 erase_block_size,
					       __u32 block_size)
{
	__u64 slots = nr_segments * (erase_block_size / block_size);

	return (version >= 3 ? 2 : 1) +
	       wow_ckpt_slot_blocks(version, slots, block_size) +
	       wow_ckpt_seg_blocks(version, slots, nr_segments,
				   wow_ckpt_max_tombs(slots), block_size);
}

/*
 * Version 4: blocks from the start of area 0 to the start of area 1,
 * one area rounded up to whole erase blocks.  0 before version 4 (one
 * area).
 */
static inline __u64 wow_ckpt_span_v(__u32 version, __u64 nr_segments,
				    __u32 erase_block_size, __u32 block_size)
{
	__u64 per_eb = erase_block_size / block_size;
	__u64 one = wow_ckpt_one_area_blocks_v(version, nr_segments,
					       erase_block_size, block_size);

	if (version < 4)
		return 0;
	return (one + per_eb - 1) / per_eb * per_eb;
}

static inline __u64 wow_ckpt_area_blocks_v(__u32 version, __u64 nr_segments,
					   __u32 erase_block_size,
					   __u32 block_size)
{
	if (version >= 4)
		return 2 * wow_ckpt_span_v(version, nr_segments,
					   erase_block_size, block_size);
	return wow_ckpt_one_area_blocks_v(version, nr_segments,
					  erase_block_size, block_size);
}

/*
 * Tombstones a checkpoint of a cache in format @version has room for.
 * Version 2 sized its area for wow_ckpt_max_tombs().  Version 3's area
 * (and each of version 4's two) takes whole erase blocks: what the two headers and the slot table
 * leave of them holds the segment stream, so small caches (whose tables
 * fill a fraction of one erase block) hold many more tombstones than
 * nr_slots / 8 without a byte more on the device.
 */
static inline __u64 wow_ckpt_max_tombs_v(__u32 version, __u64 nr_segments,
					 __u32 erase_block_size,
					 __u32 block_size)
{
	__u64 per_eb = erase_block_size / block_size;
	__u64 slots = nr_segments * per_eb;
	__u64 slot_blocks = wow_ckpt_slot_blocks(version, slots, block_size);
	__u64 blocks = wow_ckpt_one_area_blocks_v(version, nr_segments,
						  erase_block_size,
						  block_size);
	__u64 bytes, fixed;

	if (version < 3)
		return wow_ckpt_max_tombs(slots);
	blocks = (blocks + per_eb - 1) / per_eb * per_eb;
	bytes = (blocks - 2 - slot_blocks) *
		(block_size - sizeof(struct wow_ckpt_trailer));
	fixed = nr_segments * sizeof(struct wow_ckpt_seg) + slot_blocks * 4;
	return (bytes - fixed) / sizeof(struct wow_tomb);
}

/* The block of the cache device where the checkpoint area starts. */
static inline __u64 wow_ckpt_first_block_v(__u32 version,
					   __u32 erase_block_size,
					   __u32 block_size)
{
	return version >= 3 ? erase_block_size / block_size :
			      WOW_CKPT_FIRST_BLOCK;
}

/*
 * Geometry derived from the superblock fields; the same math is used to
 * format, to check a table against a superblock, and by userspace.
 * Version 1 has no checkpoint: segments start at erase block 1.  Version 2
 * puts the checkpoint area after the health block, version 3 at erase
 * block 1, and both start the segments at the first erase block boundary
 * after it.
 */
static inline __u64 wow_first_segment_sector_v(__u32 version,
					       __u64 nr_segments,
					       __u32 erase_block_size,
					       __u32 block_size)
{
	__u64 bytes;

	if (version < 2)
		return erase_block_size >> 9;
	bytes = (wow_ckpt_first_block_v(version, erase_block_size,
					block_size) +
		 wow_ckpt_area_blocks_v(version, nr_segments,
					erase_block_size, block_size)) *
		(__u64)block_size;
	bytes = (bytes + erase_block_size - 1) & ~(__u64)(erase_block_size - 1);
	return bytes >> 9;
}

static inline __u64 wow_first_segment_sector(__u32 erase_block_size)
{
	return wow_first_segment_sector_v(1, 0, erase_block_size, 512);
}

static inline __u64 wow_nr_segments(__u64 cache_sectors,
				    __u32 erase_block_size)
{
	__u64 first = wow_first_segment_sector(erase_block_size);
	__u64 seg_sectors = erase_block_size >> 9;

	if (cache_sectors <= first)
		return 0;
	return (cache_sectors - first) / seg_sectors;
}

/*
 * Segments of a cache of @cache_sectors in format @version: as many as fit
 * after the metadata their own checkpoint area needs.  Each segment fewer
 * frees at least a segment's sectors, so one step per excess segment.
 */
static inline __u64 wow_nr_segments_v(__u32 version, __u64 cache_sectors,
				      __u32 erase_block_size,
				      __u32 block_size)
{
	__u64 seg_sectors = erase_block_size >> 9;
	__u64 n = wow_nr_segments(cache_sectors, erase_block_size);
	__u64 hi = n + 1, mid;	/* hi: a count that does not fit */

	while (n) {
		__u64 need = wow_first_segment_sector_v(version, n,
							erase_block_size,
							block_size) +
			     n * seg_sectors;
		__u64 less = (need - cache_sectors + seg_sectors - 1) /
			     seg_sectors;

		if (need <= cache_sectors)
			break;
		hi = n;
		n -= less < n ? less : n;
	}
	/*
	 * Version 4 rounds two areas up to whole erase blocks, so a step can
	 * overshoot: the most that fits, between the last step's count (fits)
	 * and the one before (does not), by halves.  (Not before version 4:
	 * its caches' superblocks hold the count the steps gave.)
	 */
	while (version >= 4 && n && n + 1 < hi) {
		mid = n + (hi - n) / 2;
		if (wow_first_segment_sector_v(version, mid, erase_block_size,
					       block_size) +
		    mid * seg_sectors <= cache_sectors)
			n = mid;
		else
			hi = mid;
	}
	return n;
}

/* Smallest cache device, in sectors, for an erase block size. */
static inline __u64 wow_min_cache_sectors_v(__u32 version,
					    __u32 erase_block_size,
					    __u32 block_size)
{
	return wow_first_segment_sector_v(version, WOW_MIN_SEGMENTS,
					  erase_block_size, block_size) +
	       (__u64)WOW_MIN_SEGMENTS * (erase_block_size >> 9);
}

static inline __u64 wow_min_cache_sectors(__u32 erase_block_size)
{
	return wow_min_cache_sectors_v(1, erase_block_size, 512);
}

#endif /* DM_WOW_FORMAT_H */
