/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow recovery's scan of the whole log (dm-wow-scan.c), and the
 * window and slot seqs the replay shares with it.  Runs in preresume,
 * before the device is live: no locking.
 */
#ifndef DM_WOW_SCAN_H
#define DM_WOW_SCAN_H

#include "dm-wow.h"

/* Recovery's verdicts, as the kernel log says them. */
#define MSG_DURABLE_CORRUPT "%s: log record %llu (segment %u) was durable (record %llu of segment %u says so) but is corrupt; not loading"
#define MSG_DURABLE_HARMLESS "%s: log record %llu (segment %u) was durable but is corrupt; every block it held has a newer version: dropped"
#define MSG_DROPPED "%s: segment %u: dropped a torn or corrupt log record at block %u"
#define MSG_BROKEN "%s: segment %u: the log breaks at block %u and goes on at block %u (record %llu): the records between are lost"
#define MSG_DROPPED_FIRST "%s: segment %u: dropped a torn or corrupt log record at block 0: the first of the segment, so all of its records"

struct wow_scan {
	/* seq of the record each slot came from, in chunks */
	u64 **slot_seq;
	u32 nr_seq_chunks;
	/* the window: blocks [win_off, win_off + win_n) of segment win_seg */
	void *buf;
	u32 win_blocks;		/* its size */
	u32 win_seg;
	u32 win_off;
	u32 win_n;		/* 0: empty */
	u64 *oblocks;		/* one record's origin blocks */
	u32 *crcs;		/* and their crc32cs (WOW_REC_CRCS) */
	struct wow_tomb_range *cleans;	/* clean marks found */
	u32 nr_cleans;
	u32 max_cleans;
	u64 max_seq;
	u64 max_seen;		/* newest seq in any header, valid or not */
	u64 nr_records;
	u64 nr_dropped;
	/* per segment: its newest claim, "records up to durable were durable" */
	struct wow_claim {
		u64 seq;
		u64 durable;
	} *claims;
	/*
	 * Bad records (torn or corrupt), then their sorted seqs.  When the
	 * bad record's header is intact, lost[] lists the origin blocks whose
	 * versions dropping it (and the rest of its segment) loses.
	 */
	struct wow_suspect {
		u64 seq;	/* first: wow_cmp_u64 sorts by it */
		u32 seg;
		bool known;	/* lost[] is complete */
		bool judged;
		u32 nr_lost;
		u64 *lost;
	} *sus;
	u64 *suspects;
	u32 nr_suspects;
	/* the envelope of the tombstones (apply_tombs) */
	struct wow_tomb_range *kenv;
	u32 nr_kenv;
};

/* 2 MiB chunks: no allocation grows with the cache */
#define WOW_SEQ_CHUNK	BIT(18)

u64 wow_replay_seq(struct wow_scan *sc, u32 slot);
int wow_replay_set_seq(struct wow_scan *sc, u32 slot, u64 seq);
void wow_scan_save_crcs(struct wow_scan *sc, void *hdr,
			const struct wow_record_info *ri);
bool wow_scan_data_check(const struct wow_scan *sc,
			 const struct wow_record_info *ri, u32 first,
			 const void *p, u32 n, u32 bs, u32 *csum);
void *wow_scan_blocks(struct wow_cache *wc, struct wow_scan *sc, u32 s,
		      u32 off, u32 n, bool probe);
int wow_scan_log(struct wow_cache *wc, struct wow_scan *sc);
void wow_scan_free(struct wow_scan *sc);

#endif /* DM_WOW_SCAN_H */
