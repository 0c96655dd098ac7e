/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-wow chain: recovery's decisions along the log's chain since a
 * checkpoint (dm-wow-chain.c), and the decoded record header they read;
 * the load's order of sources (wow_load_log).
 *
 * Shared, as source, by the module and the userspace tools (wowctl check
 * builds dm-wow-chain.c too), so the two agree on which records a load
 * replays and when it refuses: this header needs only <linux/types.h>.
 */
#ifndef DM_WOW_CHAIN_H
#define DM_WOW_CHAIN_H

#include <linux/types.h>
#ifndef __KERNEL__
#include <stdbool.h>
#endif

/* A seq's epoch: a load starts a new one (wow_next_epoch_seq). */
#define WOW_EPOCH_SHIFT		32

static inline __u64 wow_epoch(__u64 seq)
{
	return seq >> WOW_EPOCH_SHIFT;
}

/*
 * Log epochs.  Every load starts a new epoch: its first seq is the start of
 * the epoch after the newest seq the load saw, valid or not.  A record's
 * durable_seq vouches only for records of its own epoch, so a record a
 * load dropped as a torn tail (never durable) is never covered by the
 * claims of records written after that load (and its seq is never used
 * again).  Returns 0 when the seq space is exhausted.
 */
static inline __u64 wow_next_epoch_seq(__u64 seen)
{
	__u64 e = wow_epoch(seen) + 1;

	if (e > wow_epoch(~(__u64)0))
		return 0;
	return e << WOW_EPOCH_SHIFT;
}

/* A log record header, decoded. */
struct wow_record_info {
	__u64 seq;
	__u64 seg_seq;
	__u64 durable_seq;
	__u32 data_csum;
	__u32 nr_data;
	__u32 nr_tombs;
	__u32 next_seg;		/* WOW_NO_SEG: not known */
	__u32 flags;		/* WOW_REC_CRCS */
};

enum wow_rec_kind {
	WOW_REC_OK,
	WOW_REC_FOREIGN,	/* not a record of this cache: end of log */
	WOW_REC_BAD,		/* ours, but checksum or counts are wrong */
};

/* The reads and effects of a replay: the caller's (the log; KUnit; wowctl). */
struct wow_chain_ops {
	/*
	 * The header at block @off of segment @s: *@kind, and *@ri when
	 * WOW_REC_OK.  @probe: the header alone is wanted now.  0 or a
	 * negative errno (which ends the replay).
	 */
	int (*header)(void *ctx, __u32 s, __u32 off, bool probe,
		      enum wow_rec_kind *kind, struct wow_record_info *ri);
	/* 1: the data of the record at (@s, @off) checks, 0: not; or -errno */
	int (*data)(void *ctx, __u32 s, __u32 off,
		    const struct wow_record_info *ri);
	/* apply the next record, at (@s, @off): block 0 opens a new life */
	int (*apply)(void *ctx, __u32 s, __u32 off,
		     const struct wow_record_info *ri);
	/* a torn record at (@s, @off) is dropped (optional) */
	void (*torn)(void *ctx, __u32 s, __u32 off);
};

struct wow_chain {
	/* in: the log's geometry and the head the checkpoint names */
	__u32 nr_segments;
	__u32 blocks_per_seg;
	__u32 head_seg;
	__u32 head_wp;
	__u32 next_seg;
	__u64 next_seq;
	__u64 head_life;		/* seq that opened head_seg's life */
	/* out */
	__u64 expected;			/* seq after the last record applied */
	__u64 life;			/* of the segment the chain ended in */
	__u64 records;
	__u64 dropped;			/* torn records */
	/* -EUCLEAN: the record that says the lost one was durable */
	__u64 vouched_by;
	__u32 vouched_seg;
	__u32 vouched_off;
};

int wow_chain_replay(struct wow_chain *c, const struct wow_chain_ops *ops,
		     void *ctx);

/*
 * The writer's side: may the log open @head (the free list's head) as its
 * next segment, when the last record or checkpoint written named @named?
 * @chained: a checkpoint anchors a chain (without one, loads scan every
 * segment).  Pure; the log asks it with its lock held.
 */
bool wow_chain_may_open(bool chained, __u32 named, __u32 head);

/*
 * The load's sources, for wow_load_log: the module's (dm-wow-recover.c)
 * and the tools' view (userspace/wowview.c).  Each forgets what it built
 * before it asks for the next source.
 */
struct wow_load_ops {
	/*
	 * load the checkpoint: 0; 1 when there is none or it did not check
	 * (what it loaded forgotten: scan the log); or -errno
	 */
	int (*ckpt)(void *ctx);
	/*
	 * after it, the log written since, along its chain: 0 and *@seen the
	 * last seq known; 1: scan the whole log instead (what was loaded
	 * forgotten); or -errno
	 */
	int (*replay)(void *ctx, __u64 *seen);
	/* the whole log: 0 and *@seen the newest seq seen, or -errno */
	int (*scan)(void *ctx, __u64 *seen);
	void *ctx;
};

int wow_load_log(const struct wow_load_ops *ops, __u64 format_seq,
		 __u64 *next_seq);

#endif /* DM_WOW_CHAIN_H */
