// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow checkpoint codec: the entries of a checkpoint area (header, slot
 * table, segment stream; dm-wow-format.h), the sealing and checking of its
 * blocks, and the mapping of the segment stream's bytes onto blocks.
 *
 * Pure: no locking, no allocation, no I/O.  KUnit drives it with plain
 * numbers; dm-wow-checkpoint.c writes and reads the blocks it describes.
 */
#include "dm-wow-ckpt.h"

static_assert(sizeof(struct wow_ckpt_header) == WOW_SB_CSUM_BYTES);
static_assert(sizeof(struct wow_ckpt_trailer) == 16);
static_assert(sizeof(struct wow_ckpt_seg) == 32);

/* Bytes of a segment stream block before its trailer. */
static u32 wow_ckpt_payload(u32 block_size)
{
	return block_size - sizeof(struct wow_ckpt_trailer);
}

/* A slot's 48-bit entry: 0 for an empty slot. */
u64 wow_ckpt_slot_encode(u64 oblock, bool valid, bool dirty)
{
	if (!valid)
		return 0;
	return (oblock & WOW_CKPT_OBLOCK_MASK) | WOW_CKPT_SLOT_VALID |
	       (dirty ? WOW_CKPT_SLOT_DIRTY : 0);
}

/*
 * Decode a slot entry: false if it is malformed (bits past the entry, or
 * a dirty or addressed slot that is not valid).
 */
bool wow_ckpt_slot_decode(u64 e, u64 *oblock, bool *valid, bool *dirty)
{
	*valid = e & WOW_CKPT_SLOT_VALID;
	*dirty = e & WOW_CKPT_SLOT_DIRTY;
	*oblock = e & WOW_CKPT_OBLOCK_MASK;
	if (e >> (8 * WOW_CKPT_SLOT_BYTES))
		return false;
	return *valid || !e;
}

void wow_ckpt_seg_encode(struct wow_ckpt_seg *e,
			 const struct wow_ckpt_seg_info *si)
{
	*e = (struct wow_ckpt_seg) {
		.seq = cpu_to_le64(si->seq),
		.max_seq = cpu_to_le64(si->max_seq),
		.wp = cpu_to_le32(si->wp),
		.nr_tombs = cpu_to_le32(si->nr_tombs),
		.state = cpu_to_le32(si->closed ? WOW_CKPT_SEG_CLOSED : 0),
	};
}

bool wow_ckpt_seg_decode(const struct wow_ckpt_seg *e, u32 blocks_per_seg,
			 u64 next_seq, struct wow_ckpt_seg_info *si)
{
	u32 state = le32_to_cpu(e->state);

	si->seq = le64_to_cpu(e->seq);
	si->max_seq = le64_to_cpu(e->max_seq);
	si->wp = le32_to_cpu(e->wp);
	si->nr_tombs = le32_to_cpu(e->nr_tombs);
	si->closed = state == WOW_CKPT_SEG_CLOSED;
	return si->wp <= blocks_per_seg && si->max_seq >= si->seq &&
	       si->max_seq < next_seq && !(state & ~WOW_CKPT_SEG_CLOSED) &&
	       (si->seq || !(si->closed || si->wp || si->nr_tombs));
}

void wow_ckpt_tomb_encode(struct wow_tomb *e, const struct wow_tomb_range *tr)
{
	*e = (struct wow_tomb) {
		.start = cpu_to_le64(tr->start),
		.t = cpu_to_le64(tr->t),
		.nr = cpu_to_le32(tr->nr),
		.flags = cpu_to_le32(tr->flags),
	};
}

bool wow_ckpt_tomb_decode(const struct wow_tomb *e, u64 next_seq,
			  struct wow_tomb_range *tr)
{
	tr->start = le64_to_cpu(e->start);
	tr->t = le64_to_cpu(e->t);
	tr->nr = le32_to_cpu(e->nr);
	tr->flags = le32_to_cpu(e->flags);
	return !tr->flags && tr->t < next_seq;
}

/*
 * Entry @entry of a slot table block of @bytes-byte entries
 * (wow_ckpt_slot_bytes): the 48 bits, then from version 5 the crc32c,
 * little endian.
 */
void wow_ckpt_slot_put(void *blk, u32 bytes, u32 entry,
		       const struct wow_ckpt_entry *e)
{
	u8 *p = blk + entry * bytes;
	int i;

	for (i = 0; i < WOW_CKPT_SLOT_BYTES; i++)
		p[i] = e->e >> (8 * i);
	for (; i < bytes; i++)
		p[i] = e->crc >> (8 * (i - WOW_CKPT_SLOT_BYTES));
}

void wow_ckpt_slot_get(const void *blk, u32 bytes, u32 entry,
		       struct wow_ckpt_entry *e)
{
	const u8 *p = blk + entry * bytes;
	int i;

	e->e = 0;
	e->crc = 0;
	for (i = 0; i < WOW_CKPT_SLOT_BYTES; i++)
		e->e |= (u64)p[i] << (8 * i);
	for (; i < bytes; i++)
		e->crc |= (u32)p[i] << (8 * (i - WOW_CKPT_SLOT_BYTES));
}

/* The crc32c a slot table block is checked against. */
u32 wow_ckpt_slot_block_csum(const void *blk, u32 block_size)
{
	return crc32c(WOW_CSUM_SEED, blk, block_size);
}

static u32 block_csum(const void *blk, u32 block_size)
{
	static const u8 zero[4];
	u32 off = wow_ckpt_payload(block_size);
	u32 c = crc32c(WOW_CSUM_SEED, blk, off);

	/* the trailer, with its csum taken as zero */
	c = crc32c(c, zero, sizeof(zero));
	return crc32c(c, blk + off + sizeof(zero),
		      sizeof(struct wow_ckpt_trailer) - sizeof(zero));
}

/* Seal segment stream block number @index of generation @gen. */
void wow_ckpt_seal(void *blk, u32 block_size, u64 gen, u32 index)
{
	struct wow_ckpt_trailer *t = blk + wow_ckpt_payload(block_size);

	t->index = cpu_to_le32(index);
	t->generation = cpu_to_le64(gen);
	t->csum = cpu_to_le32(block_csum(blk, block_size));
}

/* Is this segment stream block number @index of generation @gen, intact? */
bool wow_ckpt_block_ok(const void *blk, u32 block_size, u64 gen, u32 index)
{
	const struct wow_ckpt_trailer *t = blk + wow_ckpt_payload(block_size);

	return le32_to_cpu(t->index) == index &&
	       le64_to_cpu(t->generation) == gen &&
	       le32_to_cpu(t->csum) == block_csum(blk, block_size);
}

/*
 * Copy up to @len bytes between @data and the segment stream at byte
 * @pos, through a buffer of @n blocks that holds stream blocks from
 * @first on (to the blocks when @to_blocks).  Returns the bytes copied:
 * fewer than @len where the buffer ends, 0 when @pos is outside it.
 */
u32 wow_ckpt_stream_copy(void *blocks, u32 block_size, u64 first, u32 n,
			 u64 pos, void *data, u32 len, bool to_blocks)
{
	u32 payload = wow_ckpt_payload(block_size), off, done = 0;
	u64 blk = div_u64_rem(pos, payload, &off);

	while (done < len && blk >= first && blk < first + n) {
		void *p = blocks + (blk - first) * block_size + off;
		u32 c = min(len - done, payload - off);

		if (to_blocks)
			memcpy(p, data + done, c);
		else
			memcpy(data + done, p, c);
		done += c;
		off = 0;
		blk++;
	}
	return done;
}

static u32 header_csum(const struct wow_ckpt_header *h)
{
	return crc32c(WOW_CSUM_SEED, (const u8 *)h + sizeof(h->csum),
		      WOW_SB_CSUM_BYTES - sizeof(h->csum));
}

void wow_ckpt_header_encode(void *block, u32 block_size, const u8 *uuid,
			    const struct wow_ckpt_info *ci)
{
	struct wow_ckpt_header *h = block;

	memset(block, 0, block_size);
	h->version = cpu_to_le32(WOW_CKPT_VERSION);
	h->magic = cpu_to_le64(WOW_CKPT_MAGIC);
	memcpy(h->uuid, uuid, sizeof(h->uuid));
	h->flags = cpu_to_le32(ci->valid ? WOW_CKPT_VALID : 0);
	h->generation = cpu_to_le64(ci->generation);
	h->next_seq = cpu_to_le64(ci->next_seq);
	h->completed_seq = cpu_to_le64(ci->completed_seq);
	h->nr_slots = cpu_to_le64(ci->nr_slots);
	h->nr_segments = cpu_to_le64(ci->nr_segments);
	h->slot_blocks = cpu_to_le64(ci->slot_blocks);
	h->seg_blocks = cpu_to_le64(ci->seg_blocks);
	h->nr_tombs = cpu_to_le64(ci->nr_tombs);
	h->head_seg = cpu_to_le32(ci->head_seg + 1);
	h->head_wp = cpu_to_le32(ci->head_wp);
	h->next_seg = cpu_to_le32(ci->next_seg + 1);
	h->csum = cpu_to_le32(header_csum(h));
}

/*
 * Judge a checkpoint header of the cache with @uuid, @nr_slots slots,
 * @nr_segments segments and room for @max_tombs tombstones
 * (wow_ckpt_max_tombs_v): WOW_CKPT_HDR_VALID when it is a valid
 * checkpoint's header that fits that cache; anything else (another magic
 * or uuid, a bad checksum, not valid, another geometry, more tombstones
 * than the area holds) means there is no checkpoint to load from, and the
 * verdict says which, in this order.  @ci is filled from any header with
 * our magic, uuid and checksum, so its generation is known.
 */
enum wow_ckpt_hdr wow_ckpt_header_judge(const void *block, u32 version,
					u32 block_size, const u8 *uuid,
					u64 nr_slots, u64 nr_segments,
					u64 max_tombs, struct wow_ckpt_info *ci)
{
	const struct wow_ckpt_header *h = block;

	memset(ci, 0, sizeof(*ci));
	if (block_size < sizeof(*h) ||
	    le64_to_cpu(h->magic) != WOW_CKPT_MAGIC ||
	    memcmp(h->uuid, uuid, sizeof(h->uuid)))
		return WOW_CKPT_HDR_FOREIGN;
	if (le32_to_cpu(h->version) != WOW_CKPT_VERSION ||
	    le32_to_cpu(h->csum) != header_csum(h))
		return WOW_CKPT_HDR_TORN;
	ci->valid = le32_to_cpu(h->flags) & WOW_CKPT_VALID;
	ci->generation = le64_to_cpu(h->generation);
	ci->next_seq = le64_to_cpu(h->next_seq);
	ci->completed_seq = le64_to_cpu(h->completed_seq);
	ci->nr_slots = le64_to_cpu(h->nr_slots);
	ci->nr_segments = le64_to_cpu(h->nr_segments);
	ci->slot_blocks = le64_to_cpu(h->slot_blocks);
	ci->seg_blocks = le64_to_cpu(h->seg_blocks);
	ci->nr_tombs = le64_to_cpu(h->nr_tombs);
	ci->head_seg = le32_to_cpu(h->head_seg) - 1;
	ci->head_wp = le32_to_cpu(h->head_wp);
	ci->next_seg = le32_to_cpu(h->next_seg) - 1;
	if (!ci->valid)
		return WOW_CKPT_HDR_RETIRED;
	if (ci->nr_slots != nr_slots || ci->nr_segments != nr_segments)
		return WOW_CKPT_HDR_COUNTS;
	if (ci->slot_blocks != wow_ckpt_slot_blocks(version, nr_slots,
						    block_size))
		return WOW_CKPT_HDR_SLOT_BLOCKS;
	if (ci->nr_tombs > max_tombs)
		return WOW_CKPT_HDR_TOMBS;
	if (ci->seg_blocks != wow_ckpt_seg_blocks(version, nr_slots,
						  nr_segments, ci->nr_tombs,
						  block_size))
		return WOW_CKPT_HDR_SEG_BLOCKS;
	if (ci->completed_seq >= ci->next_seq)
		return WOW_CKPT_HDR_SEQS;
	return WOW_CKPT_HDR_VALID;
}

bool wow_ckpt_header_decode(const void *block, u32 version, u32 block_size,
			    const u8 *uuid, u64 nr_slots, u64 nr_segments,
			    u64 max_tombs, struct wow_ckpt_info *ci)
{
	return wow_ckpt_header_judge(block, version, block_size, uuid,
				     nr_slots, nr_segments, max_tombs, ci) ==
	       WOW_CKPT_HDR_VALID;
}

/*
 * Replay: does a tombstone or clean mark with @t, written after a
 * checkpoint, cover a checkpointed copy whose segment life's newest record
 * had seq @life_max (0: none)?  The copy's own seq is not kept; it lies in
 * its life.  The tombstones written cover it exactly then: a discard's
 * (t = its own record's seq) covers every copy before it; reclaim's
 * (t = the victim's newest seq) covers the victim's copies; one carried
 * forward has a t every surviving copy is newer than.
 */
bool wow_ckpt_covers(u64 life_max, u64 t)
{
	return life_max && t >= life_max;
}
