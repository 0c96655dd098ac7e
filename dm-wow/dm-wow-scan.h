/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow scan: recovery's decisions over the whole log (dm-wow-scan.c),
 * when no checkpoint can be trusted: which records are taken, the proof
 * that a segment's records belong to its life, where a broken life goes
 * on, the suspects (bad records) and whether one was durable, which copy
 * of a block wins (the newest seq), what the tombstones and clean marks
 * do to the recovered copies.
 *
 * Part of the portable core: it includes dm-wow-types.h and other pure
 * headers only, so the module and the userspace tools build it unchanged.
 * It reads blocks and changes the index and the segments only through
 * struct wow_scan_ops, the caller's; so KUnit drives it with a log in
 * memory (tests/scan_kunit.c).
 *
 * A load (dm-wow-recover.c) calls wow_scan_alloc, wow_scan_segment for
 * every segment, wow_scan_finish, wow_scan_free; wowctl (wowcache.c) the
 * same with WOW_SCAN_JUDGE_ALL, and WOW_SCAN_SALVAGE for writeback.
 *
 * Contracts, for every call below: pure but for the ops and its own
 * memory (kvmalloc/kvfree, GFP_KERNEL: may sleep, so process context);
 * locking: none (recovery runs before the device is live; the ops take
 * whatever lock they need); a call that fails returns a negative errno
 * (-ENOMEM, an op's own, -EFBIG, -EUCLEAN as said) and leaves the scan to
 * be freed, not resumed.
 */
#ifndef DM_WOW_SCAN_H
#define DM_WOW_SCAN_H

#include "dm-wow-types.h"
#include "dm-wow-chain.h"
#include "dm-wow-tombs.h"

/* What the scan tells its caller as it goes (the kernel logs each). */
enum wow_scan_event {
	/* a torn or corrupt record at block @off (> 0) of segment @seg */
	WOW_SCAN_DROPPED,
	/* the same at block 0 of segment @seg: all of its records */
	WOW_SCAN_DROPPED_FIRST,
	/*
	 * segment @seg's life breaks at block @off and goes on at block @at
	 * (record @seq): the records between are lost
	 */
	WOW_SCAN_BROKEN,
	/*
	 * record @seq (segment @seg) was durable but is corrupt; every block
	 * it held has a newer version: dropped
	 */
	WOW_SCAN_DURABLE_HARMLESS,
	/*
	 * record @seq (segment @seg) was durable (segment @by_seg's claims
	 * say so; @by_seq is its first valid record, as the kernel log has
	 * always named it) but is corrupt: wow_scan_finish fails, -EUCLEAN
	 */
	WOW_SCAN_DURABLE_CORRUPT,
};

struct wow_scan_note {
	enum wow_scan_event what;
	u32 seg;
	u32 off;
	u32 at;
	u32 by_seg;
	/* DROPPED, DROPPED_FIRST: the suspect's seq, 0 when none is noted */
	u64 seq;
	u64 by_seq;
	const char *why;	/* DROPPED, DROPPED_FIRST: what is wrong */
};

/* What became of a record the scan read (ops->record). */
enum wow_scan_rec {
	WOW_SCAN_REC_TAKEN,
	WOW_SCAN_REC_BAD,	/* ours, its header fails its checks */
	WOW_SCAN_REC_DROPPED,	/* its header intact, the record not taken */
	WOW_SCAN_REC_PROOF,	/* read past a bad one for its claim only */
	WOW_SCAN_REC_SALVAGED,	/* the same, taken (WOW_SCAN_SALVAGE) */
};

/* The reads and the effects of a scan: the caller's (the log; KUnit). */
struct wow_scan_ops {
	/*
	 * Blocks [@off, @off + @n) of segment @s (@n <= win_blocks) into *@p,
	 * valid until the next read.  @probe: only these are wanted now (the
	 * first header of a segment, which may hold no record at all).  0 or
	 * a negative errno, which ends the scan.
	 */
	int (*read)(void *ctx, u32 s, u32 off, u32 n, bool probe, void **p);
	/* room for @n more tombstones of segment @s: 0 or -errno */
	int (*reserve_tombs)(void *ctx, u32 s, u32 n);
	/* segment @s holds tombstones @t (@n, room reserved) */
	void (*add_tombs)(void *ctx, u32 s, const struct wow_tomb_range *t,
			  u32 n);
	/* segment @s's tombstones, *@n of them */
	const struct wow_tomb_range *(*tombs)(void *ctx, u32 s, u32 *n);
	/* the slot that holds origin block @b now: true, *@slot; or false */
	bool (*lookup)(void *ctx, u64 b, u32 *slot);
	/*
	 * Slot @slot holds a copy of origin block @b, of record @seq;
	 * @newest: it is now the block's dirty copy in the index (with block
	 * crc @crc when @has_crc)
	 */
	void (*place)(void *ctx, u32 slot, u64 b, u64 seq, bool newest,
		      bool has_crc, u32 crc);
	/* does slot @slot hold a valid copy?  Then of origin block *@b */
	bool (*valid)(void *ctx, u32 slot, u64 *b);
	/* a tombstone kills slot @slot's copy */
	void (*kill)(void *ctx, u32 slot);
	/* a clean mark says slot @slot's copy was destaged */
	void (*clean)(void *ctx, u32 slot);
	/* what the scan found (see enum wow_scan_event) */
	void (*note)(void *ctx, const struct wow_scan_note *n);
	/*
	 * Optional: each record read, in the order of its segment, with what
	 * became of it and (BAD, DROPPED) why; 0 or -errno.
	 */
	int (*record)(void *ctx, u32 s, u32 off,
		      const struct wow_record_info *ri, enum wow_scan_rec st,
		      const char *why);
	/*
	 * WOW_SCAN_SALVAGE only: origin block @b's version of seq @seq is in
	 * a record not taken; 0 or -errno.
	 */
	int (*lost)(void *ctx, u64 b, u64 seq);
	/* a long loop may let others run here (optional) */
	void (*resched)(void *ctx);
};

/* The log, as the scan needs it. */
struct wow_scan_geo {
	const u8 *uuid;			/* the superblock's */
	u64 nr_oblocks;			/* origin blocks: larger ones are bad */
	u32 nr_segments;
	u32 blocks_per_seg;
	u32 block_size;
	u32 win_blocks;			/* most blocks one read returns */
	u32 flags;			/* WOW_SCAN_* */
};

/*
 * wowctl's: judge every suspect (wow_scan_suspects says each verdict)
 * rather than note the first refusal and stop, as a load does.
 */
#define WOW_SCAN_JUDGE_ALL	0x1
/*
 * writeback's: a record read past a bad one is taken when its data
 * checks; the versions of records not taken go to ops->lost.
 */
#define WOW_SCAN_SALVAGE	0x2

/* A segment's life, as its scan found it. */
struct wow_scan_seg {
	u64 seq;			/* the seq that opened it (0: none) */
	u64 max_seq;			/* its last record's */
	u32 wp;				/* the block after its last record */
};

struct wow_scan_totals {
	u64 max_seq;			/* newest record taken */
	u64 max_seen;			/* newest seq in any header, valid or not */
	u64 records;			/* taken */
	u64 dropped;			/* torn or corrupt records dropped */
};

/* A segment's newest claim: records up to @durable were durable. */
struct wow_scan_claim {
	u64 seq;			/* the first valid header's (0: none) */
	u64 durable;
	u64 proof;			/* the record that claimed @durable */
};

/* A bad record (torn or corrupt): at most one per segment. */
struct wow_scan_suspect {
	u64 seq;			/* first: sorted by it */
	u32 seg;
	u32 block;			/* where the scan found it bad */
	const char *what;		/* what was found */
	bool known;			/* lost[] is complete */
	bool judged;
	/* the verdict: a claim covers it ... */
	bool vouched;
	/* ... but another segment's life starts with it: nothing missing */
	bool start;
	/* ... but every block it loses has a newer copy or is killed */
	bool harmless;
	u64 proof_seq;			/* vouched: the claim's proof */
	u32 proof_seg;
	u32 nr_lost;			/* when its header was intact: the */
	u64 *lost;			/* origin blocks dropping it loses */
};

struct wow_scan;

/* A scan of the log @g; NULL: no memory.  @ops and @ctx outlive it. */
struct wow_scan *wow_scan_alloc(const struct wow_scan_geo *g,
				const struct wow_scan_ops *ops, void *ctx);
/*
 * Scan segment @s's records from its start (each segment once, any
 * order): the records taken are placed, their tombstones added; *@out is
 * the life found.
 */
int wow_scan_segment(struct wow_scan *sc, u32 s, struct wow_scan_seg *out);
/*
 * After every segment: apply the tombstones, then the clean marks, to the
 * copies placed (ops->valid, kill, clean), then judge the suspects:
 * -EUCLEAN when a record proved durable is corrupt and dropping it loses
 * a block (never with WOW_SCAN_JUDGE_ALL: wow_scan_suspects has every
 * verdict).  -EFBIG: more tombstones than it can envelop.
 */
int wow_scan_finish(struct wow_scan *sc);
const struct wow_scan_totals *wow_scan_totals(const struct wow_scan *sc);
/* Per segment: its claim (nr_segments of them). */
const struct wow_scan_claim *wow_scan_claims(const struct wow_scan *sc);
/* The suspects (*@n), sorted by seq after wow_scan_finish. */
const struct wow_scan_suspect *wow_scan_suspects(const struct wow_scan *sc,
						 u32 *n);
/*
 * After wow_scan_finish: the envelopes of the tombstones (*@kenv, *@nk)
 * and of the clean marks (*@cenv, *@nc), valid until wow_scan_free.
 */
void wow_scan_envelopes(const struct wow_scan *sc,
			const struct wow_tomb_range **kenv, u32 *nk,
			const struct wow_tomb_range **cenv, u32 *nc);
/* Free the scan (NULL: nothing). */
void wow_scan_free(struct wow_scan *sc);

/*
 * Seqs by slot, in chunks of WOW_SEQ_CHUNK (2 MiB: no allocation grows
 * with the cache).  The scan's has every chunk; the replay's allocates a
 * chunk when a record first writes into it (a load after a clean shutdown
 * replays nothing and allocates none).
 */
#define WOW_SEQ_CHUNK		BIT(18)

struct wow_seqs {
	u64 **chunk;
	u32 nr_chunks;
};

/* For @nr_slots slots; @all: every chunk now.  0 or -ENOMEM. */
int wow_seqs_init(struct wow_seqs *t, u32 nr_slots, bool all);
/* The seq of slot @slot's copy; 0: none set. */
u64 wow_seqs_get(const struct wow_seqs *t, u32 slot);
/* Set it: 0 or -ENOMEM (never for 0, nor with every chunk allocated). */
int wow_seqs_set(struct wow_seqs *t, u32 slot, u64 seq);
void wow_seqs_free(struct wow_seqs *t);

/*
 * A record's data, checked: its block crcs (WOW_REC_CRCS) copied out of
 * header @hdr into @crcs (room for wow_record_capacity(bs, 0, 0)) before
 * the data is read; then, for data blocks [@first, @first + @n) at @p,
 * wow_scan_data_check is false unless each matches its crc, or (without
 * crcs) adds them to *@csum, which the caller compares with data_csum
 * once all are in (start it at ~0).
 */
void wow_scan_save_crcs(u32 *crcs, void *hdr,
			const struct wow_record_info *ri);
bool wow_scan_data_check(const u32 *crcs, const struct wow_record_info *ri,
			 u32 first, const void *p, u32 n, u32 bs, u32 *csum);

/*
 * The first of @n sorted suspects' seqs that the claim of record @seq
 * ("every record up to @durable_seq was durable") covers, in its epoch:
 * its index, or -1.
 */
int wow_first_vouched(const u64 *suspects, u32 n, u64 seq, u64 durable_seq);

#endif /* DM_WOW_SCAN_H */
