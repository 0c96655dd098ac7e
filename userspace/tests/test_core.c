// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the portable core as userspace builds it: the module's own
 * dm-wow-ckpt.c, dm-wow-record.c, dm-wow-sb.c and dm-wow-tombs.c over
 * wow-kernel-compat.h, and crc32c.c, with plain numbers.  KUnit tests the
 * same files in the kernel (tests/ckpt_kunit.c, tests/format_kunit.c,
 * tests/tombs_kunit.c); these check that the
 * userspace build means the same: the kernel's crc32c convention, the
 * byte order, the codecs' round trips and their refusals.
 * Prints one "PASS: userspace/<name>" or "FAIL: userspace/<name> (<why>)"
 * line per case and exits 1 if any failed.
 */
#include <stdio.h>

#include "../../dm-wow/dm-wow-types.h"
#include "../../dm-wow/dm-wow-args.h"
#include "../../dm-wow/dm-wow-ckpt.h"
#include "../../dm-wow/dm-wow-record.h"
#include "../../dm-wow/dm-wow-sb.h"
#include "../../dm-wow/dm-wow-tombs.h"
#include "expect.h"

#define BS	512U

/* crc32c one bit at a time, the kernel's convention: the reference */
static u32 crc_bitwise(u32 c, const void *buf, size_t len)
{
	const u8 *p = buf;
	int k;

	while (len--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78U : c >> 1;
	}
	return c;
}

static const char *crc32c_vectors(void)
{
	static u8 buf[300];
	u32 i, off, len;

	/* the check value of CRC-32C is 0xe3069283, inverted in and out */
	EXPECT_EQ(crc32c(~0U, "123456789", 9), ~0xe3069283U);
	EXPECT_EQ(~crc32c(~0U, "123456789", 9), 0xe3069283U);
	/* no inversion: a zero seed over zero bytes stays zero */
	EXPECT_EQ(crc32c(0, buf, sizeof(buf)), 0);
	EXPECT_EQ(crc32c(WOW_CSUM_SEED, buf, 0), WOW_CSUM_SEED);
	/* 32 bytes of 0xff (RFC 3720 B.4: 0x62a8ab43, inverted) */
	memset(buf, 0xff, 32);
	EXPECT_EQ(~crc32c(~0U, buf, 32), 0x62a8ab43U);
	/* every alignment and tail of the slice-by-8 path, and a split */
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = i * 7 + 3;
	for (off = 0; off < 8; off++)
		for (len = 0; len + off <= sizeof(buf); len += 13) {
			u32 want = crc_bitwise(WOW_CSUM_SEED, buf + off, len);

			EXPECT_EQ(crc32c(WOW_CSUM_SEED, buf + off, len), want);
			EXPECT_EQ(crc32c(crc32c(WOW_CSUM_SEED, buf + off,
						len / 3),
					 buf + off + len / 3, len - len / 3),
				  want);
		}
	return NULL;
}

static const char *ckpt_slot_entries(void)
{
	static u8 blk[BS];
	struct wow_ckpt_entry e = { 0 }, g;
	u64 ob;
	bool valid, dirty;
	u32 bytes;

	e.e = wow_ckpt_slot_encode(12345, true, true);
	EXPECT(wow_ckpt_slot_decode(e.e, &ob, &valid, &dirty));
	EXPECT_EQ(ob, 12345);
	EXPECT(valid && dirty);
	e.e = wow_ckpt_slot_encode(WOW_MAX_OBLOCK, true, false);
	EXPECT(wow_ckpt_slot_decode(e.e, &ob, &valid, &dirty));
	EXPECT_EQ(ob, WOW_MAX_OBLOCK);
	EXPECT(valid && !dirty);
	/* empty: 0, decodes as not valid */
	EXPECT_EQ(wow_ckpt_slot_encode(99, false, true), 0);
	EXPECT(wow_ckpt_slot_decode(0, &ob, &valid, &dirty));
	EXPECT(!valid && !dirty);
	/* malformed: dirty or addressed without valid, bits past 48 */
	EXPECT(!wow_ckpt_slot_decode(WOW_CKPT_SLOT_DIRTY, &ob, &valid,
				     &dirty));
	EXPECT(!wow_ckpt_slot_decode(7, &ob, &valid, &dirty));
	EXPECT(!wow_ckpt_slot_decode(WOW_CKPT_SLOT_VALID | (1ULL << 48), &ob,
				     &valid, &dirty));

	/* put and get, 6-byte entries (no crc) and 10-byte ones */
	for (bytes = WOW_CKPT_SLOT_BYTES; bytes <= WOW_CKPT_SLOT_BYTES_V5;
	     bytes += WOW_CKPT_SLOT_BYTES_V5 - WOW_CKPT_SLOT_BYTES) {
		memset(blk, 0, sizeof(blk));
		e.e = wow_ckpt_slot_encode(0x123456789aULL, true, true);
		e.crc = 0xdeadbeef;
		wow_ckpt_slot_put(blk, bytes, 3, &e);
		wow_ckpt_slot_get(blk, bytes, 3, &g);
		EXPECT_EQ(g.e, e.e);
		EXPECT_EQ(g.crc, bytes > WOW_CKPT_SLOT_BYTES ? 0xdeadbeef : 0);
		/* little endian, at entry * bytes */
		EXPECT_EQ(blk[3 * bytes], 0x9a);
		EXPECT_EQ(blk[3 * bytes + 5], 0xc0);
		wow_ckpt_slot_get(blk, bytes, 2, &g);
		EXPECT_EQ(g.e, 0);
		EXPECT_EQ(g.crc, 0);
	}
	EXPECT_EQ(wow_ckpt_slot_block_csum(blk, BS),
		  crc_bitwise(WOW_CSUM_SEED, blk, BS));
	return NULL;
}

static const char *ckpt_block_seal(void)
{
	static u8 blk[BS];
	__le32 csum;
	u32 i;

	for (i = 0; i < BS; i++)
		blk[i] = i;
	wow_ckpt_seal(blk, BS, 7, 3);
	EXPECT(wow_ckpt_block_ok(blk, BS, 7, 3));
	/* the csum: of the whole block, its own 4 bytes taken as zero */
	memcpy(&csum, blk + BS - 16, 4);
	memset(blk + BS - 16, 0, 4);
	EXPECT_EQ(le32_to_cpu(csum), crc_bitwise(WOW_CSUM_SEED, blk, BS));
	memcpy(blk + BS - 16, &csum, 4);
	/* the trailer: index, then generation, little endian */
	EXPECT_EQ(blk[BS - 12], 3);
	EXPECT_EQ(blk[BS - 8], 7);
	EXPECT(!wow_ckpt_block_ok(blk, BS, 8, 3));
	EXPECT(!wow_ckpt_block_ok(blk, BS, 6, 3));
	EXPECT(!wow_ckpt_block_ok(blk, BS, 7, 4));
	blk[100] ^= 1;
	EXPECT(!wow_ckpt_block_ok(blk, BS, 7, 3));
	blk[100] ^= 1;
	EXPECT(wow_ckpt_block_ok(blk, BS, 7, 3));
	blk[BS - 16] ^= 0x80;		/* the trailer's csum */
	EXPECT(!wow_ckpt_block_ok(blk, BS, 7, 3));
	return NULL;
}

static const char *ckpt_stream_copy(void)
{
	static u8 blocks[3 * BS], data[1200], back[1200];
	u32 payload = BS - sizeof(struct wow_ckpt_trailer), i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = i * 13;
	/* blocks 5..7 of the stream; from byte 5 * payload + 10 on */
	EXPECT_EQ(wow_ckpt_stream_copy(blocks, BS, 5, 3, 5 * payload + 10,
				       data, sizeof(data), true),
		  sizeof(data));
	EXPECT_EQ(blocks[10], data[0]);
	EXPECT_EQ(blocks[BS], data[payload - 10]);
	EXPECT_EQ(wow_ckpt_stream_copy(blocks, BS, 5, 3, 5 * payload + 10,
				       back, sizeof(back), false),
		  sizeof(back));
	EXPECT(!memcmp(data, back, sizeof(data)));
	/* where the blocks end, and outside them */
	EXPECT_EQ(wow_ckpt_stream_copy(blocks, BS, 5, 3, 8 * payload - 4,
				       back, sizeof(back), false), 4);
	EXPECT_EQ(wow_ckpt_stream_copy(blocks, BS, 5, 3, 4 * payload,
				       back, sizeof(back), false), 0);
	return NULL;
}

static const char *ckpt_header(void)
{
	static u8 blk[BS];
	static const u8 uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	static const u8 other[16] = { 9 };
	const u32 v = WOW_SB_VERSION;
	const u64 slots = 1000, segs = 40, room = 200;
	struct wow_ckpt_info ci = {
		.valid = true, .head_seg = 3, .head_wp = 9, .next_seg = 17,
		.generation = 42, .next_seq = 1000, .completed_seq = 990,
		.nr_slots = slots, .nr_segments = segs, .nr_tombs = 5,
	}, got;

	ci.slot_blocks = wow_ckpt_slot_blocks(v, slots, BS);
	ci.seg_blocks = wow_ckpt_seg_blocks(v, slots, segs, ci.nr_tombs, BS);
	wow_ckpt_header_encode(blk, BS, uuid, &ci);
	EXPECT(wow_ckpt_header_decode(blk, v, BS, uuid, slots, segs, room,
				      &got));
	/* its csum: the first WOW_SB_CSUM_BYTES past the csum itself */
	EXPECT_EQ(le32_to_cpu(((struct wow_ckpt_header *)blk)->csum),
		  crc_bitwise(WOW_CSUM_SEED, blk + 4, WOW_SB_CSUM_BYTES - 4));
	EXPECT_EQ(got.generation, 42);
	EXPECT_EQ(got.head_seg, 3);
	EXPECT_EQ(got.head_wp, 9);
	EXPECT_EQ(got.next_seg, 17);
	EXPECT_EQ(got.next_seq, 1000);
	EXPECT_EQ(got.completed_seq, 990);
	EXPECT_EQ(got.nr_tombs, 5);
	/* another cache, geometry, or room for fewer tombstones */
	EXPECT(!wow_ckpt_header_decode(blk, v, BS, other, slots, segs, room,
				       &got));
	EXPECT(!wow_ckpt_header_decode(blk, v, BS, uuid, slots + 1, segs,
				       room, &got));
	EXPECT(!wow_ckpt_header_decode(blk, v, BS, uuid, slots, segs, 4,
				       &got));
	/* a byte changed under the checksum */
	blk[40] ^= 1;
	EXPECT(!wow_ckpt_header_decode(blk, v, BS, uuid, slots, segs, room,
				       &got));
	EXPECT_EQ(got.generation, 0);
	/* retired (not valid): refused, but its generation is known */
	ci.valid = false;
	wow_ckpt_header_encode(blk, BS, uuid, &ci);
	EXPECT(!wow_ckpt_header_decode(blk, v, BS, uuid, slots, segs, room,
				       &got));
	EXPECT_EQ(got.generation, 42);
	/* none open: WOW_NO_SEG (U32_MAX) round trips through 0 on disk */
	ci.valid = true;
	ci.head_seg = U32_MAX;
	wow_ckpt_header_encode(blk, BS, uuid, &ci);
	EXPECT(wow_ckpt_header_decode(blk, v, BS, uuid, slots, segs, room,
				      &got));
	EXPECT_EQ(got.head_seg, U32_MAX);
	EXPECT(wow_ckpt_covers(10, 10));
	EXPECT(!wow_ckpt_covers(10, 9));
	EXPECT(!wow_ckpt_covers(0, 100));
	return NULL;
}

/* Decode @si, encoded, for 64-block segments and next_seq 100. */
static bool seg_trip(const struct wow_ckpt_seg_info *si,
		     struct wow_ckpt_seg_info *got)
{
	struct wow_ckpt_seg e;

	memset(&e, 0xa5, sizeof(e));
	wow_ckpt_seg_encode(&e, si);
	return wow_ckpt_seg_decode(&e, 64, 100, got);
}

static const char *ckpt_seg_entries(void)
{
	struct wow_ckpt_seg_info si = {
		.seq = 10, .max_seq = 99, .wp = 64, .nr_tombs = 3,
		.closed = true,
	}, got, bad;
	struct wow_ckpt_seg e;
	const u8 *b = (const void *)&e;

	/* round trip, and the bytes: little endian, reserved zero */
	EXPECT(seg_trip(&si, &got));
	EXPECT_EQ(got.seq, 10);
	EXPECT_EQ(got.max_seq, 99);
	EXPECT_EQ(got.wp, 64);
	EXPECT_EQ(got.nr_tombs, 3);
	EXPECT(got.closed);
	memset(&e, 0xa5, sizeof(e));
	wow_ckpt_seg_encode(&e, &si);
	EXPECT_EQ(b[0], 10);
	EXPECT_EQ(b[8], 99);
	EXPECT_EQ(b[16], 64);
	EXPECT_EQ(b[20], 3);
	EXPECT_EQ(le32_to_cpu(e.state), WOW_CKPT_SEG_CLOSED);
	EXPECT_EQ(le32_to_cpu(e.reserved), 0);
	si.closed = false;
	EXPECT(seg_trip(&si, &got) && !got.closed);
	/* a free segment: all zero */
	memset(&bad, 0, sizeof(bad));
	EXPECT(seg_trip(&bad, &got));
	EXPECT(!got.seq && !got.closed);
	/* one fault at a time; @got still holds what the entry says */
	bad = si;
	bad.wp = 65;
	EXPECT(!seg_trip(&bad, &got));
	EXPECT_EQ(got.wp, 65);
	bad = si;
	bad.max_seq = 9;
	EXPECT(!seg_trip(&bad, &got));
	bad.max_seq = 10;
	EXPECT(seg_trip(&bad, &got));
	bad = si;
	bad.max_seq = 100;
	EXPECT(!seg_trip(&bad, &got));
	wow_ckpt_seg_encode(&e, &si);
	e.state = cpu_to_le32(2);
	EXPECT(!wow_ckpt_seg_decode(&e, 64, 100, &got));
	e.state = cpu_to_le32(WOW_CKPT_SEG_CLOSED | 0x80000000U);
	EXPECT(!wow_ckpt_seg_decode(&e, 64, 100, &got));
	EXPECT(!got.closed);
	memset(&bad, 0, sizeof(bad));
	bad.closed = true;
	EXPECT(!seg_trip(&bad, &got));
	memset(&bad, 0, sizeof(bad));
	bad.wp = 1;
	EXPECT(!seg_trip(&bad, &got));
	memset(&bad, 0, sizeof(bad));
	bad.nr_tombs = 1;
	EXPECT(!seg_trip(&bad, &got));
	/* a free segment's max_seq is not looked at (as the reader never did) */
	memset(&bad, 0, sizeof(bad));
	bad.max_seq = 5;
	EXPECT(seg_trip(&bad, &got));
	return NULL;
}

static const char *ckpt_tomb_entries(void)
{
	struct wow_tomb_range tr = {
		.start = WOW_MAX_OBLOCK, .t = 99, .nr = 0xfffffffeU,
	}, got;
	struct wow_tomb e;
	const u8 *b = (const void *)&e;

	memset(&e, 0xa5, sizeof(e));
	wow_ckpt_tomb_encode(&e, &tr);
	EXPECT(wow_ckpt_tomb_decode(&e, 100, &got));
	EXPECT_EQ(got.start, WOW_MAX_OBLOCK);
	EXPECT_EQ(got.t, 99);
	EXPECT_EQ(got.nr, 0xfffffffeU);
	EXPECT_EQ(got.flags, 0);
	EXPECT_EQ(b[8], 99);
	EXPECT_EQ(b[16], 0xfe);
	EXPECT_EQ(le32_to_cpu(e.flags), 0);
	/* t not below next_seq */
	EXPECT(!wow_ckpt_tomb_decode(&e, 99, &got));
	EXPECT_EQ(got.t, 99);
	/* a clean mark (or any flag): a checkpoint holds kills only */
	tr.flags = WOW_TOMB_CLEAN;
	wow_ckpt_tomb_encode(&e, &tr);
	EXPECT(!wow_ckpt_tomb_decode(&e, 100, &got));
	EXPECT_EQ(got.flags, WOW_TOMB_CLEAN);
	tr.flags = 0x100;
	wow_ckpt_tomb_encode(&e, &tr);
	EXPECT(!wow_ckpt_tomb_decode(&e, 100, &got));
	return NULL;
}

/* A record header of cache @uuid: 2 tombstones, 3 data blocks with crcs. */
static void make_record(u8 *hdr, const u8 *uuid, u64 tomb_t)
{
	struct wow_record_info ri = {
		.seq = 100, .seg_seq = 90, .durable_seq = 99,
		.nr_data = 3, .nr_tombs = 2, .next_seg = 7,
		.flags = WOW_REC_CRCS,
	};
	struct wow_tomb *t = wow_record_tombs(hdr);
	__le64 *ob = wow_record_oblocks(hdr, 2);
	__le32 *crc = wow_record_crcs(hdr, 2, 3);
	u32 i;

	memset(hdr, 0, BS);
	for (i = 0; i < 2; i++) {
		t[i].start = cpu_to_le64(1000 * i);
		t[i].nr = cpu_to_le32(8);
		t[i].t = cpu_to_le64(tomb_t - i);
	}
	for (i = 0; i < 3; i++) {
		ob[i] = cpu_to_le64(50 + i);
		crc[i] = cpu_to_le32(0x1000 + i);
	}
	ri.data_csum = crc32c(~0U, crc, 3 * sizeof(*crc));
	wow_record_seal(hdr, BS, uuid, &ri);
}

/* An all-zero header but for its fields, sealed; then checked. */
static enum wow_rec_kind plain(u8 *hdr, const u8 *uuid, u64 seq, u64 seg_seq,
			       u32 nr_tombs, u32 nr_data, u32 flags)
{
	struct wow_record_info ri = {
		.seq = seq, .seg_seq = seg_seq, .nr_tombs = nr_tombs,
		.nr_data = nr_data, .flags = flags, .next_seg = 1,
	};

	memset(hdr, 0, BS);
	wow_record_seal(hdr, BS, uuid, &ri);
	return wow_record_check(hdr, BS, uuid, &ri);
}

static const char *record_seal_check(void)
{
	static const u8 uuid[16] = { 7, 7, 7 };
	static const u8 other[16] = { 8 };
	static u8 hdr[BS];
	struct wow_record_info ri;
	const struct wow_record *r = (const void *)hdr;
	static const u8 zero[4];
	const char *what;
	u32 csum;

	make_record(hdr, uuid, 100);
	EXPECT_EQ(wow_record_check(hdr, BS, uuid, &ri), WOW_REC_OK);
	EXPECT_EQ(ri.seq, 100);
	EXPECT_EQ(ri.seg_seq, 90);
	EXPECT_EQ(ri.durable_seq, 99);
	EXPECT_EQ(ri.nr_data, 3);
	EXPECT_EQ(ri.nr_tombs, 2);
	EXPECT_EQ(ri.next_seg, 7);
	EXPECT_EQ(ri.flags, WOW_REC_CRCS);
	/* next_seg + 1 on disk; the csum over the block, its field zero */
	EXPECT_EQ(le32_to_cpu(r->next_seg), 8);
	csum = crc_bitwise(WOW_CSUM_SEED, zero, 4);
	EXPECT_EQ(le32_to_cpu(r->csum), crc_bitwise(csum, hdr + 4, BS - 4));
	EXPECT_EQ(wow_record_check(hdr, BS, other, &ri), WOW_REC_FOREIGN);
	/* any byte of the block, even past the fields */
	hdr[BS - 1] ^= 1;
	EXPECT_EQ(wow_record_check(hdr, BS, uuid, &ri), WOW_REC_BAD);
	/* a block crc that is not data_csum's, sealed anyway */
	make_record(hdr, uuid, 100);
	wow_record_crcs(hdr, 2, 3)[1] ^= cpu_to_le32(1);
	ri.seq = 100;
	ri.seg_seq = 90;
	ri.durable_seq = 99;
	ri.nr_data = 3;
	ri.nr_tombs = 2;
	ri.next_seg = 7;
	ri.flags = WOW_REC_CRCS;
	ri.data_csum = le32_to_cpu(r->data_csum);
	wow_record_seal(hdr, BS, uuid, &ri);
	EXPECT_EQ(wow_record_check(hdr, BS, uuid, &ri), WOW_REC_BAD);
	/* a tombstone past its own record */
	make_record(hdr, uuid, 101);
	EXPECT_EQ(wow_record_check(hdr, BS, uuid, &ri), WOW_REC_BAD);
	/* one thing wrong at a time in an otherwise empty header */
	EXPECT_EQ(plain(hdr, uuid, 5, 5, 0, 0, 0), WOW_REC_OK);
	EXPECT_EQ(plain(hdr, uuid, 0, 0, 0, 0, 0), WOW_REC_BAD);
	EXPECT_EQ(plain(hdr, uuid, 5, 6, 0, 0, 0), WOW_REC_BAD);
	EXPECT_EQ(plain(hdr, uuid, 5, 5, 0, 0, 2), WOW_REC_BAD);
	EXPECT_EQ(wow_max_tombs(BS), (BS - sizeof(struct wow_record)) /
		  sizeof(struct wow_tomb));
	EXPECT_EQ(plain(hdr, uuid, 5, 5, wow_max_tombs(BS), 0, 0),
		  WOW_REC_OK);
	EXPECT_EQ(plain(hdr, uuid, 5, 5, wow_max_tombs(BS) + 1, 0, 0),
		  WOW_REC_BAD);
	EXPECT_EQ(plain(hdr, uuid, 5, 5, 1, wow_record_capacity(BS, 1, 0), 0),
		  WOW_REC_OK);
	EXPECT_EQ(plain(hdr, uuid, 5, 5, 1,
			wow_record_capacity(BS, 1, 0) + 1, 0), WOW_REC_BAD);
	/* why: the first fault, in the documented order */
	plain(hdr, uuid, 0, 1, 0, 0, 2);
	EXPECT_EQ(wow_record_judge(hdr, BS, uuid, &ri, &what), WOW_REC_BAD);
	EXPECT(!strcmp(what, "unknown record flags"));
	plain(hdr, uuid, 0, 1, 0, 0, 0);
	EXPECT_EQ(wow_record_judge(hdr, BS, uuid, &ri, &what), WOW_REC_BAD);
	EXPECT(!strcmp(what, "seq 0"));
	plain(hdr, uuid, 5, 6, 0, 0, 0);
	EXPECT_EQ(wow_record_judge(hdr, BS, uuid, &ri, &what), WOW_REC_BAD);
	EXPECT(!strcmp(what, "seq below seg_seq"));
	hdr[BS - 1] = 1;
	EXPECT_EQ(wow_record_judge(hdr, BS, uuid, &ri, &what), WOW_REC_BAD);
	EXPECT(!strcmp(what, "header checksum"));
	what = NULL;
	plain(hdr, uuid, 5, 5, 0, 0, 0);
	EXPECT_EQ(wow_record_judge(hdr, BS, uuid, &ri, &what), WOW_REC_OK);
	EXPECT(!what);
	EXPECT_EQ(wow_block_crc(hdr, BS), crc_bitwise(~0U, hdr, BS));
	return NULL;
}

static const char *tomb_envelope(void)
{
	struct wow_tomb_range r[] = {
		{ .start = 10, .nr = 10, .t = 5 },	/* [10, 20) t 5 */
		{ .start = 15, .nr = 10, .t = 9 },	/* [15, 25) t 9 */
		{ .start = 0, .nr = 4, .t = 2 },	/* [0, 4) t 2 */
		{ .start = 12, .nr = 2, .t = 1 },	/* under the first */
		{ .start = 30, .nr = 0, .t = 99 },	/* empty: ignored */
		{ .start = WOW_MAX_OBLOCK + 1, .nr = 5, .t = 99 },
	};
	struct wow_tomb_range out[2 * ARRAY_SIZE(r)];
	const struct wow_tomb_range *e;
	u32 heap[ARRAY_SIZE(r)], n;

	n = wow_tomb_envelope(r, ARRAY_SIZE(r), out, heap);
	EXPECT_EQ(n, 3);
	EXPECT_EQ(out[0].start, 0);
	EXPECT_EQ(out[0].nr, 4);
	EXPECT_EQ(out[0].t, 2);
	EXPECT_EQ(out[1].start, 10);
	EXPECT_EQ(out[1].nr, 5);
	EXPECT_EQ(out[1].t, 5);
	EXPECT_EQ(out[2].start, 15);
	EXPECT_EQ(out[2].nr, 10);
	EXPECT_EQ(out[2].t, 9);
	e = wow_tomb_find(out, n, 13);
	EXPECT(e && e->t == 5);
	e = wow_tomb_find(out, n, 24);
	EXPECT(e && e->t == 9);
	EXPECT(!wow_tomb_find(out, n, 25));
	EXPECT(!wow_tomb_find(out, n, 4));
	EXPECT(!wow_tomb_find(out, n, 31));
	EXPECT(!wow_tomb_find(out, n, WOW_MAX_OBLOCK + 2));
	EXPECT_EQ(wow_tomb_envelope(r, 0, out, heap), 0);
	return NULL;
}

static const char *tomb_life_pass(void)
{
	struct wow_life_pass p;

	EXPECT_EQ(wow_seg_disk_seq(50, 20, 49), 20);	/* old life still */
	EXPECT_EQ(wow_seg_disk_seq(50, 20, 50), 50);
	EXPECT_EQ(wow_seg_disk_seq(50, 0, 0), 50);
	wow_life_pass_init(&p, 0);
	EXPECT(!wow_life_pass_visit(&p, 3, 100, 40, 2));
	EXPECT(!wow_life_pass_visit(&p, 3, 100, 0, 0));
	EXPECT(wow_life_pass_visit(&p, 3, 100, 30, 1));
	EXPECT_EQ(p.bound, 30);
	EXPECT_EQ(p.held, 3);
	/* a lower minimum later never lowers the published bound */
	EXPECT(!wow_life_pass_visit(&p, 3, 200, 10, 0));
	EXPECT(!wow_life_pass_visit(&p, 3, 200, 0, 0));
	EXPECT(wow_life_pass_visit(&p, 3, 200, 0, 0));
	EXPECT_EQ(p.bound, 30);
	EXPECT_EQ(p.held, 0);
	return NULL;
}

/* A superblock's fields: @nsegs segments, the rest following from them. */
static void sb_geo(struct wow_sb_info *in, u32 version, u32 bs, u32 ebs,
		   u32 wgs, u64 nsegs)
{
	struct wow_geometry *g = &in->geo;

	memset(in, 0, sizeof(*in));
	in->version = version;
	in->flags = 4;
	in->format_seq = 0x123456789aULL;
	memset(in->uuid, 0x5a, sizeof(in->uuid));
	strcpy(in->origin_id, "wwn-0x5000c500a1b2c3d4");
	g->block_size = bs;
	g->erase_block_size = ebs;
	g->write_group_size = wgs;
	g->origin_sectors = 1ULL << 30;
	g->first_segment_sector = wow_first_segment_sector_v(version, nsegs,
							     ebs, bs);
	g->cache_sectors = g->first_segment_sector + nsegs * (ebs >> 9) + 3;
	g->nr_segments = wow_nr_segments_v(version, g->cache_sectors, ebs,
					   bs);
}

/* Encode @in, decode it: the kind, and @reason. */
static enum wow_sb_kind sb_trip(const struct wow_sb_info *in,
				struct wow_sb_info *out, const char **reason)
{
	static u8 blk[BS];

	memset(blk, 0xee, sizeof(blk));
	wow_sb_encode((void *)blk, in);
	return wow_sb_decode(blk, sizeof(blk), out, reason);
}

/* CORRUPT for an inconsistent geometry, with that reason. */
static bool sb_bad_geo(const struct wow_sb_info *in)
{
	struct wow_sb_info out;
	const char *reason;

	return sb_trip(in, &out, &reason) == WOW_SB_CORRUPT &&
	       !strcmp(reason, "superblock geometry is inconsistent");
}

static bool sb_ok(const struct wow_sb_info *in)
{
	struct wow_sb_info out;
	const char *reason = "unset";

	return sb_trip(in, &out, &reason) == WOW_SB_VALID && !reason;
}

static const char *sb_round_trip_and_kinds(void)
{
	static u8 blk[BS];
	struct wow_superblock *sb = (void *)blk;
	struct wow_sb_info in, out;
	const char *reason;

	sb_geo(&in, WOW_SB_VERSION, 512, 8192, 4096, 8);
	EXPECT_EQ(sb_trip(&in, &out, &reason), WOW_SB_VALID);
	EXPECT(!reason);
	EXPECT(!memcmp(&in.geo, &out.geo, sizeof(in.geo)));
	EXPECT_EQ(out.version, WOW_SB_VERSION);
	EXPECT_EQ(out.flags, 4);
	EXPECT_EQ(out.format_seq, 0x123456789aULL);
	EXPECT(!memcmp(out.uuid, in.uuid, sizeof(in.uuid)));
	EXPECT(!strcmp(out.origin_id, in.origin_id));
	/* the bytes: little endian, the checksum the kernel's, zero after */
	wow_sb_encode(sb, &in);
	EXPECT_EQ(le64_to_cpu(sb->magic), WOW_SB_MAGIC);
	EXPECT_EQ(blk[offsetof(struct wow_superblock, format_seq)], 0x9a);
	EXPECT_EQ(le32_to_cpu(sb->csum),
		  crc_bitwise(WOW_CSUM_SEED, blk + 4, WOW_SB_CSUM_BYTES - 4));
	/* all zero: blank, no reason */
	memset(blk, 0, sizeof(blk));
	reason = "unset";
	EXPECT_EQ(wow_sb_decode(blk, BS, &out, &reason), WOW_SB_ZERO);
	EXPECT(!reason);
	/* another magic */
	wow_sb_encode(sb, &in);
	blk[offsetof(struct wow_superblock, magic)] ^= 1;
	EXPECT_EQ(wow_sb_decode(blk, BS, &out, &reason), WOW_SB_FOREIGN);
	EXPECT(!strcmp(reason, "no dm-wow superblock"));
	/* a byte under the checksum */
	wow_sb_encode(sb, &in);
	blk[WOW_SB_CSUM_BYTES - 1] ^= 1;
	EXPECT_EQ(wow_sb_decode(blk, BS, &out, &reason), WOW_SB_CORRUPT);
	EXPECT(!strcmp(reason, "superblock checksum mismatch"));
	/* a version after ours; version 0 */
	in.version = WOW_SB_VERSION + 1;
	EXPECT_EQ(sb_trip(&in, &out, &reason), WOW_SB_NEWER);
	EXPECT(!strcmp(reason, "superblock version is newer than this module"));
	in.version = 0;
	EXPECT_EQ(sb_trip(&in, &out, &reason), WOW_SB_CORRUPT);
	EXPECT(!strcmp(reason, "superblock version is invalid"));
	/* a full origin_id field: the kernel keeps 63 bytes of it */
	sb_geo(&in, 1, 512, 8192, 4096, 8);
	wow_sb_encode(sb, &in);
	memset(sb->origin_id, 'x', WOW_ORIGIN_ID_LEN);
	sb->csum = cpu_to_le32(crc_bitwise(WOW_CSUM_SEED, blk + 4,
					   WOW_SB_CSUM_BYTES - 4));
	EXPECT_EQ(wow_sb_decode(blk, BS, &out, &reason), WOW_SB_VALID);
	EXPECT_EQ(strlen(out.origin_id), WOW_ORIGIN_ID_LEN - 1);
	return NULL;
}

/*
 * Each geometry check alone: version 1's first segment and count do not
 * depend on the block size, so one field is wrong at a time.
 */
static const char *sb_geometry_refusals(void)
{
	struct wow_sb_info in;

	sb_geo(&in, 1, 512, 8192, 4096, 8);
	EXPECT(sb_ok(&in));
	sb_geo(&in, 1, 768, 8192, 4096, 8);		/* not a power of 2 */
	EXPECT(sb_bad_geo(&in));
	sb_geo(&in, 1, 256, 8192, 4096, 8);		/* below 512 */
	EXPECT(sb_bad_geo(&in));
	sb_geo(&in, 1, 65536, 1 << 20, 65536, 8);	/* the largest */
	EXPECT(sb_ok(&in));
	sb_geo(&in, 1, 131072, 1 << 20, 131072, 8);
	EXPECT(sb_bad_geo(&in));
	sb_geo(&in, 1, 512, 12288, 4096, 8);		/* erase block */
	EXPECT(sb_bad_geo(&in));
	sb_geo(&in, 1, 4096, 16384, 4096, 8);		/* 4 blocks */
	EXPECT(sb_ok(&in));
	sb_geo(&in, 1, 4096, 8192, 4096, 8);		/* 2 blocks */
	EXPECT(sb_bad_geo(&in));
	sb_geo(&in, 1, 512, WOW_MAX_ERASE_BLOCK_SIZE, 4096, 8);
	EXPECT(sb_ok(&in));
	sb_geo(&in, 1, 512, 2 * WOW_MAX_ERASE_BLOCK_SIZE, 4096, 8);
	EXPECT(sb_bad_geo(&in));
	sb_geo(&in, 1, 512, 8192, 6144, 8);		/* write group */
	EXPECT(sb_bad_geo(&in));
	sb_geo(&in, 1, 4096, 16384, 2048, 8);		/* below a block */
	EXPECT(sb_bad_geo(&in));
	sb_geo(&in, 1, 512, 8192, WOW_MAX_WRITE_GROUP_SIZE, 8);
	EXPECT(sb_ok(&in));
	sb_geo(&in, 1, 512, 8192, 2 * WOW_MAX_WRITE_GROUP_SIZE, 8);
	EXPECT(sb_bad_geo(&in));
	sb_geo(&in, WOW_SB_VERSION, 512, 8192, 4096, 8);
	in.geo.nr_segments++;				/* does not follow */
	EXPECT(sb_bad_geo(&in));
	sb_geo(&in, WOW_SB_VERSION, 512, 8192, 4096, 8);
	in.geo.first_segment_sector += 16;
	EXPECT(sb_bad_geo(&in));
	sb_geo(&in, 1, 512, 8192, 4096, WOW_MIN_SEGMENTS);
	EXPECT(sb_ok(&in));
	sb_geo(&in, 1, 512, 8192, 4096, WOW_MIN_SEGMENTS - 1);
	EXPECT(sb_bad_geo(&in));
	sb_geo(&in, 1, 512, 8192, 4096, 8);
	in.geo.origin_sectors = 0;
	EXPECT(sb_bad_geo(&in));
	return NULL;
}

/* @msg says @sub (NULL says nothing) */
static bool says(const char *msg, const char *sub)
{
	return msg && strstr(msg, sub);
}

static const char *sb_geometry_mismatch(void)
{
	struct wow_sb_info in;
	struct wow_geometry t;

	sb_geo(&in, WOW_SB_VERSION, 512, 8192, 4096, 8);
	t = in.geo;
	EXPECT(!wow_sb_geometry_mismatch(&in.geo, &t));
	t.cache_sectors += 1 << 20;		/* grown: fine */
	EXPECT(!wow_sb_geometry_mismatch(&in.geo, &t));
	t.cache_sectors = in.geo.cache_sectors - 1;
	EXPECT(says(wow_sb_geometry_mismatch(&in.geo, &t),
		    "Cache device is smaller than when it was formatted"));
	t = in.geo;
	t.block_size = 4096;
	EXPECT(says(wow_sb_geometry_mismatch(&in.geo, &t),
		    "another block_size"));
	t = in.geo;
	t.erase_block_size = 16384;
	EXPECT(says(wow_sb_geometry_mismatch(&in.geo, &t),
		    "another erase_block_size"));
	t = in.geo;
	t.write_group_size = 8192;
	EXPECT(says(wow_sb_geometry_mismatch(&in.geo, &t),
		    "another write_group_size"));
	t = in.geo;
	t.origin_sectors++;
	EXPECT(says(wow_sb_geometry_mismatch(&in.geo, &t),
		    "an origin of another length"));
	return NULL;
}

static const char *health_round_trip_and_torn(void)
{
	static const u8 uuid[16] = { 1, 2, 3 };
	static const u8 other[16] = { 1, 2, 4 };
	static u8 blk[BS];
	struct wow_health *hb = (void *)blk;
	struct wow_health_info h = {
		.flags = WOW_SB_F_NEEDS_CHECK, .state = 3, .time = 1700000000,
	}, got;
	u32 i;

	strcpy(h.what, "metadata write failed");
	memset(blk, 0xee, sizeof(blk));
	wow_health_encode(blk, BS, uuid, &h);
	EXPECT(wow_health_ours(blk, BS, uuid));
	EXPECT(wow_health_decode(blk, BS, uuid, &got));
	EXPECT_EQ(got.flags, WOW_SB_F_NEEDS_CHECK);
	EXPECT_EQ(got.state, 3);
	EXPECT_EQ(got.time, 1700000000);
	EXPECT(!strcmp(got.what, "metadata write failed"));
	EXPECT_EQ(le32_to_cpu(hb->csum),
		  crc_bitwise(WOW_CSUM_SEED, blk + 4, WOW_SB_CSUM_BYTES - 4));
	for (i = offsetof(struct wow_health, what) + 21; i < BS; i++)
		EXPECT_EQ(blk[i], 0);
	/* all clear */
	h.flags = 0;
	wow_health_encode(blk, BS, uuid, &h);
	EXPECT(!wow_health_decode(blk, BS, uuid, &got));
	EXPECT_EQ(got.state, 3);
	/* not ours: says nothing */
	h.flags = WOW_SB_F_NEEDS_CHECK;
	wow_health_encode(blk, BS, uuid, &h);
	EXPECT(!wow_health_ours(blk, BS, other));
	EXPECT(!wow_health_decode(blk, BS, other, &got));
	EXPECT(!got.flags && !got.state && !got.time && !got.what[0]);
	EXPECT(!wow_health_ours(blk, sizeof(*hb) - 1, uuid));
	EXPECT(!wow_health_decode(blk, sizeof(*hb) - 1, uuid, &got));
	blk[offsetof(struct wow_health, magic)] ^= 1;
	EXPECT(!wow_health_ours(blk, BS, uuid));
	EXPECT(!wow_health_decode(blk, BS, uuid, &got));
	/* ours, torn (a bad checksum, all clear or not): needs_check */
	h.flags = 0;
	wow_health_encode(blk, BS, uuid, &h);
	blk[WOW_SB_CSUM_BYTES - 1] ^= 1;
	EXPECT(wow_health_ours(blk, BS, uuid));
	EXPECT(wow_health_decode(blk, BS, uuid, &got));
	EXPECT_EQ(got.flags, WOW_SB_F_NEEDS_CHECK);
	EXPECT(!got.state && !got.time);
	EXPECT(!strcmp(got.what, "(health block unreadable)"));
	/* ours, sealed, but a version we do not know */
	wow_health_encode(blk, BS, uuid, &h);
	hb->version = cpu_to_le32(WOW_HEALTH_VERSION + 1);
	hb->csum = cpu_to_le32(crc_bitwise(WOW_CSUM_SEED, blk + 4,
					   WOW_SB_CSUM_BYTES - 4));
	EXPECT(wow_health_decode(blk, BS, uuid, &got));
	EXPECT(!strcmp(got.what, "(health block unreadable)"));
	/* what: cut to fit, NUL terminated */
	memset(h.what, 'w', sizeof(h.what) - 1);
	h.what[sizeof(h.what) - 1] = 0;
	wow_health_encode(blk, BS, uuid, &h);
	EXPECT(!wow_health_decode(blk, BS, uuid, &got));
	EXPECT_EQ(strlen(got.what), WOW_HEALTH_WHAT_LEN - 1);
	return NULL;
}

/* ---- dm-wow-args.c: the kernel's table line options ---- */

/* wow_parse_opt_args on @line split at spaces (at most 32 words) */
static int args_line(struct wow_args *a, const char *line, char **error)
{
	char buf[256], *words[32], *save = NULL, *w;
	struct dm_arg_set as = { 0, words };

	snprintf(buf, sizeof(buf), "%s", line);
	for (w = strtok_r(buf, " ", &save); w && as.argc < 32;
	     w = strtok_r(NULL, " ", &save))
		words[as.argc++] = w;
	wow_args_init(a);
	*error = NULL;
	return wow_parse_opt_args(a, &as, error);
}

static const char *args_parse_and_emit(void)
{
	struct wow_args a;
	char *error, out[128];
	unsigned int n;

	EXPECT(!args_line(&a, "0", &error));
	EXPECT(a.block_size == 4096 && a.high_watermark_pct == 30 &&
	       a.max_destage_size == 1048576 && !a.set);
	EXPECT(!args_line(&a, "7 block_size 8192 policy cscan high_watermark 50 "
			  "format", &error));
	EXPECT(a.block_size == 8192 && a.policy == WOW_POLICY_CSCAN &&
	       a.low_watermark_pct == 40 && a.format && !a.cleaner);
	EXPECT(wow_args_value(&a, WOW_OPT_LOW_WATERMARK) == 40 &&
	       wow_args_value(&a, WOW_OPT_FORMAT) == 1);
	n = wow_emit_opt_args(&a, out, sizeof(out));
	EXPECT(n == strlen(out));
	EXPECT(!strcmp(out, "7 block_size 8192 policy cscan high_watermark 50 "
		       "format"));
	n = wow_emit_opt_args(&a, out, 10);	/* cut, as DMEMIT cuts */
	EXPECT(n == 9 && !strcmp(out, "7 block_s"));
	EXPECT(wow_find_opt("max_age") == WOW_OPT_MAX_AGE &&
	       wow_find_opt("maxage") == -1);
	EXPECT(!strcmp(wow_opt_name(WOW_OPT_SEQUENTIAL_CUTOFF),
		       "sequential_cutoff"));
	EXPECT(wow_opt_runtime(WOW_OPT_MAX_AGE) &&
	       !wow_opt_runtime(WOW_OPT_BLOCK_SIZE) &&
	       !wow_opt_has_value(WOW_OPT_CLEANER));
	return NULL;
}

/* the kernel's messages, word for word, from the userspace build */
static const char *args_refusals(void)
{
	static const struct {
		const char *line, *error;
	} bad[] = {
		{ "2 block_size 3000", "Invalid block_size: must be a power "
		  "of two from 512 to 65536" },
		/* kstrtou32: out of range, not wrapped */
		{ "2 block_size 4294971392", "Invalid block_size: must be a "
		  "power of two from 512 to 65536" },
		{ "2 max_age +1", "Invalid max_age: must be from 0 to 604800 "
		  "seconds" },
		{ "2 max_age 0x10", "Invalid max_age: must be from 0 to 604800 "
		  "seconds" },
		{ "2 sequential_cutoff 18446744073709551616", "Invalid "
		  "sequential_cutoff: must be from 0 to 1 GiB" },
		{ "2 policy lru", "Invalid policy: must be wow, cscan or lrw" },
		{ "4 block_size 65536 erase_block_size 131072", "Invalid "
		  "erase_block_size: must be at least 4 blocks" },
		{ "4 low_watermark 60 high_watermark 60", "Invalid watermarks: "
		  "low_watermark must be below high_watermark" },
		{ "1 blocksize", "Unrecognised optional argument" },
		{ "2 cleaner cleaner", "Optional argument given twice" },
		{ "1 max_age", "Optional argument is missing its value" },
		{ "3 max_age 1", "Not enough optional arguments: #opt_args "
		  "counts more words than follow" },
		{ "x", "Invalid #opt_args: must be a number of words" },
	};
	struct wow_args a;
	char *error;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT(args_line(&a, bad[i].line, &error) == -EINVAL);
		if (!error || strcmp(error, bad[i].error)) {
			snprintf(why, sizeof(why), "'%s': got '%s'",
				 bad[i].line, error ? error : "(null)");
			return why;
		}
	}
	/* the message a flag given a value gets, and max_age "12\n" */
	wow_args_init(&a);
	EXPECT(wow_parse_opt(&a, WOW_OPT_FORMAT, "1", &error) == -EINVAL);
	EXPECT(!wow_parse_opt(&a, WOW_OPT_MAX_AGE, "12\n", &error) &&
	       a.max_age_s == 12);
	return NULL;
}

static const struct {
	const char *name;
	const char *(*fn)(void);
} cases[] = {
	{ "core_crc32c_kernel_convention", crc32c_vectors },
	{ "core_ckpt_slot_entries", ckpt_slot_entries },
	{ "core_ckpt_block_seal_and_check", ckpt_block_seal },
	{ "core_ckpt_stream_copy", ckpt_stream_copy },
	{ "core_ckpt_header_round_trip_and_refusals", ckpt_header },
	{ "core_ckpt_seg_entry_round_trip_and_refusals", ckpt_seg_entries },
	{ "core_ckpt_tomb_entry_round_trip_and_refusals", ckpt_tomb_entries },
	{ "core_record_seal_and_check", record_seal_check },
	{ "core_sb_round_trip_and_kinds", sb_round_trip_and_kinds },
	{ "core_sb_geometry_refusals", sb_geometry_refusals },
	{ "core_sb_geometry_mismatch", sb_geometry_mismatch },
	{ "core_health_round_trip_and_torn", health_round_trip_and_torn },
	{ "core_tomb_envelope_and_find", tomb_envelope },
	{ "core_tomb_life_pass", tomb_life_pass },
	{ "core_args_parse_and_emit", args_parse_and_emit },
	{ "core_args_kernel_refusals", args_refusals },
};

int main(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		report(cases[i].name, cases[i].fn());
	return failed;
}
