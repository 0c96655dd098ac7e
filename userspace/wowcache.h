/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wowcache: offline view of a dm-wow cache device or image (issue 15).
 *
 *   wowc_open        read the superblock and the health block
 *   wowc_view_build  rebuild what a load would: from the checkpoint when
 *                    it is valid, and the log written since it replayed
 *                    along its chain (as the kernel does), or from a scan
 *                    of every log record; the index, the segments, the
 *                    verdict on bad records, and the problems found
 *   wowc_check       both sources, cross-checked; a report
 *   wowc_dump_json   the superblock, health, checkpoint, segments with
 *                    their records, and the index, as JSON
 *   wowc_writeback   copy every dirty block to the origin
 *   wowc_msize       what a cache of a given size costs in metadata and RAM
 *
 * The rules are the kernel's own code, built here: the whole-log scan
 * (dm-wow/dm-wow-scan.c), the checkpoint's read and every check of it
 * (dm-wow-ckptread.c), the chain replayed after it (dm-wow-chain.c,
 * dm-wow-replay.c), the decoders (dm-wow-sb.c, dm-wow-record.c,
 * dm-wow-ckpt.c), the index (dm-wow-index.c) and the tombstones
 * (dm-wow-tombs.c): the two agree on what is valid because they run the
 * same code.  The on-disk layout comes from dm-wow/dm-wow-format.h, which
 * is included, not copied.
 * wowcache.c opens the device, wowview.c builds the view, and each
 * command has a file of its own (wowcache-int.h says which).
 *
 * Severity of what is found, and the exit code of the commands:
 * 0 clean, 1 operational error (cannot open, read or write), 2 usage,
 * 3 warnings only, 4 errors.
 */
#ifndef WOWCACHE_H
#define WOWCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define WOWC_EXIT_CLEAN		0
#define WOWC_EXIT_OPERR		1
#define WOWC_EXIT_USAGE		2
#define WOWC_EXIT_WARN		3
#define WOWC_EXIT_ERROR		4

#define WOWC_ERR_LEN		256

enum wowc_sev { WOWC_SEV_INFO, WOWC_SEV_WARN, WOWC_SEV_ERROR };

struct wowc_problem {
	enum wowc_sev sev;
	char *msg;
};

struct wowc_problems {
	struct wowc_problem *p;
	size_t nr, max;
};

/* ---- the device: superblock, health block, checkpoint header ---- */

enum wowc_sb_kind {
	WOWC_SB_VALID,
	WOWC_SB_ZERO,		/* blank: the kernel would format it */
	WOWC_SB_FOREIGN,	/* not a dm-wow superblock */
	WOWC_SB_CORRUPT,	/* checksum, version or geometry */
	WOWC_SB_NEWER,		/* a version this tool does not know */
};

struct wowc_sb {
	uint32_t version, flags, block_size, erase_block_size;
	uint32_t write_group_size;
	uint64_t origin_sectors, cache_sectors, first_segment_sector;
	uint64_t nr_segments, format_seq;
	uint8_t uuid[16];
	char origin_id[65];
};

struct wowc_health {
	bool ours;		/* our magic and uuid (else: says nothing) */
	uint32_t flags, state;
	uint64_t time;
	char what[65];
	bool needs_check;
};

enum wowc_ckpt_state {
	WOWC_CKPT_NONE,		/* no header of this cache (or version 1) */
	WOWC_CKPT_TORN,		/* ours, but its checksum or version fails */
	WOWC_CKPT_RETIRED,	/* ours, not valid: the log is what loads */
	WOWC_CKPT_MISFIT,	/* valid, but not this cache's geometry */
	WOWC_CKPT_BAD,		/* valid header, a block or entry fails */
	WOWC_CKPT_VALID,	/* the kernel loads from it */
};

struct wowc_ckpt {
	enum wowc_ckpt_state state;
	char why[128];		/* MISFIT, BAD: what */
	uint32_t flags;
	uint64_t generation, next_seq, completed_seq, nr_slots, nr_segments;
	uint64_t slot_blocks, seg_blocks, nr_tombs;
	/* the log head it names: where a load replays from (WOWC_NO_SEG: none) */
	uint32_t head_seg, head_wp, next_seg;
	bool closing_bad;	/* TORN: version 3's closing copy differs */
};

#define WOWC_NO_SEG		UINT32_MAX

struct wowc {
	int fd;
	char *path;
	bool direct;		/* O_DIRECT: a block device */
	uint64_t size;		/* bytes */
	enum wowc_sb_kind sb_kind;
	const char *sb_why;
	struct wowc_sb sb;
	struct wowc_health health;
	struct wowc_ckpt ckpt;
	/*
	 * format version 4: the area ckpt is read from (0 or 1: the newest
	 * valid, as the kernel picks), and the other one's header
	 */
	int ckpt_area;
	struct wowc_ckpt ckpt_other;
	/* geometry, from a valid superblock */
	uint32_t bs, bps;	/* block size, blocks per segment */
	uint64_t nr_segments, nr_slots, nr_oblocks;
	struct wowc_problems probs;	/* superblock, health, device */
};

/*
 * Open @path (read-only; O_EXCL on a block device, so one a dm table
 * holds is refused) and read its superblock, health block and
 * checkpoint header.  Returns 0, or -errno with @err set when it cannot
 * be opened or read; a superblock that is not valid is not an error
 * here (see sb_kind and probs).
 */
int wowc_open(const char *path, struct wowc **cp, char *err);
void wowc_close(struct wowc *c);

/* ---- a rebuild: what a load would find ---- */

enum wowc_rec_status {
	WOWC_REC_OK,		/* taken */
	WOWC_REC_BAD,		/* ours, header fails its checks */
	WOWC_REC_DROPPED,	/* header intact, record not taken */
	WOWC_REC_PROOF,		/* read past a bad record, for its claim */
	WOWC_REC_SALVAGED,	/* past a bad record, taken by writeback */
};

struct wowc_rec {
	uint64_t seq, seg_seq, durable_seq;
	uint32_t block;		/* in its segment */
	uint16_t nr_data, nr_tombs;
	uint32_t next_seg;	/* where the log goes on (WOWC_NO_SEG: unknown) */
	enum wowc_rec_status status;
	const char *why;	/* BAD, DROPPED */
};

/* a tombstone range: the module's (dm-wow/dm-wow-tombs.h) */
struct wow_tomb_range;
/* the index: the module's (dm-wow/dm-wow-index.h) */
struct wow_index;

struct wowc_seg {
	uint64_t seq, max_seq;	/* the life's first and newest record */
	uint32_t wp;		/* blocks written */
	bool closed;		/* after the load: closed, else free */
	uint32_t nr_tombs, max_tombs;	/* held tombstones (kills) */
	struct wow_tomb_range *tombs;
	uint32_t nr_recs, max_recs;	/* what the scan read (log only) */
	struct wowc_rec *recs;
	uint64_t nr_valid, nr_dirty;
};

/* An origin block whose newest version is in a bad record. */
struct wowc_lost {
	uint64_t oblock, seq;
};

/* A bad record that a later record proves durable. */
struct wowc_corrupt {
	uint64_t seq;
	uint32_t seg;
	bool harmless;		/* every block it held has a newer version */
	bool known;		/* its origin blocks are known */
	uint64_t proof_seq;	/* the record whose durable_seq covers it */
	uint32_t proof_seg;
};

/* A segment's newest valid header: records up to durable were durable. */
struct wowc_claim {
	uint64_t seq, durable;
	uint64_t proof;		/* the record that said durable */
};

enum wowc_source { WOWC_SRC_LOG, WOWC_SRC_CKPT };

/* wowc_view_build flags */
#define WOWC_SCAN	0x1	/* the log, even when the checkpoint is valid */
#define WOWC_SALVAGE	0x2	/* take intact records past a bad one */

struct wowc_view {
	struct wowc *c;
	enum wowc_source source;
	unsigned int flags;
	struct wowc_seg *segs;
	struct wow_index *ix;	/* the kernel's (dm-wow-index.c): wowc_slot */
	uint64_t *slot_seq;	/* seq of its record (log only) */
	uint64_t valid_blocks, dirty_blocks;
	uint64_t nr_records, nr_dropped, max_seq, max_seen;
	uint64_t next_seq;	/* the next load's first seq (0: exhausted) */
	bool refused;		/* the kernel would refuse the load */
	/* the replay after a checkpoint (source WOWC_SRC_CKPT) */
	uint64_t nr_replayed;	/* records replayed along the chain */
	uint64_t nr_replay_dropped;	/* torn records it dropped */
	uint64_t replay_end;	/* the seq the chain stopped at */
	uint8_t *uncertain;	/* per slot: a cover the replay could not
				 * decide for a checkpointed copy
				 * (WOWC_UNSURE_*) */
	struct wowc_corrupt *corrupt;	/* vouched bad records */
	uint32_t nr_corrupt;
	struct wowc_claim *claims;	/* per segment (log only) */
	struct wowc_lost *lost;	/* versions in bad records (salvage) */
	size_t nr_lost, max_lost;
	struct wow_tomb_range *kenv, *cenv;	/* kill and clean envelopes */
	uint32_t nr_kenv, nr_cenv;
	struct wowc_problems probs;
};

/* wowc_slot: bits 0..45 the origin block, 46 dirty, 47 valid */
#define WOWC_SLOT_DIRTY		((uint64_t)1 << 46)
#define WOWC_SLOT_VALID		((uint64_t)1 << 47)
#define WOWC_SLOT_OBLOCK	(((uint64_t)1 << 46) - 1)
#define WOWC_NO_SLOT		UINT32_MAX
#define WOWC_UNSURE_CLEAN	0x1	/* a clean mark that may cover it */
#define WOWC_UNSURE_KILL	0x2	/* a tombstone that may kill it */

/*
 * Rebuild the index and the segments of @c (valid superblock) into @v.
 * Returns 0, or -errno with @err set when the device cannot be read or
 * memory is short.  What the rebuild finds is in v->probs.
 */
int wowc_view_build(struct wowc *c, unsigned int flags, struct wowc_view *v,
		    char *err);
void wowc_view_free(struct wowc_view *v);
/* The slot holding the current copy of @oblock, or WOWC_NO_SLOT. */
uint32_t wowc_lookup(const struct wowc_view *v, uint64_t oblock);
/*
 * Slot @slot of the index: its origin block (kept when it is not valid:
 * the last one it held) and WOWC_SLOT_DIRTY, WOWC_SLOT_VALID.
 */
uint64_t wowc_slot(const struct wowc_view *v, uint32_t slot);

/* The worst severity in @c and @v (@v may be NULL), as an exit code. */
int wowc_exit_code(const struct wowc *c, const struct wowc_view *v);

/* ---- the commands ---- */

/* Check everything and print a report; returns the exit code. */
int wowc_check(const char *path, FILE *out, FILE *errf);
/* Print the JSON dump; returns the exit code. */
int wowc_dump(const char *path, unsigned int flags, FILE *out, FILE *errf);

#define WOWC_WB_DRY_RUN	0x1
#define WOWC_WB_FORCE	0x2	/* an origin of another size */

struct wowc_wb_result {
	uint64_t dirty;		/* dirty blocks in the index */
	uint64_t written;	/* blocks written (or, dry run, to write) */
	uint64_t unrecoverable;	/* blocks whose newest version is lost */
	uint32_t unknown;	/* lost records whose blocks are unknown */
};

/* Write every dirty block back; returns the exit code. */
int wowc_writeback(const char *cache, const char *origin, unsigned int flags,
		   FILE *out, FILE *errf, struct wowc_wb_result *res);

struct wowc_msize {
	uint64_t cache_bytes;
	uint32_t block_size, erase_block_size;
	uint64_t nr_segments, nr_slots;
	uint64_t ckpt_area_blocks;	/* the whole area */
	uint64_t first_segment_sector;
	uint64_t metadata_bytes;	/* before the first segment */
	uint64_t unused_bytes;		/* the tail shorter than a segment */
	uint64_t index_bytes;		/* the kernel's RAM for the index */
	uint64_t load_bytes_min;	/* a load after a clean shutdown */
	uint64_t load_bytes_max;	/* ... with the most tombstones */
};

/* Fill @m; -EINVAL with @err set for a geometry the kernel refuses. */
int wowc_msize(uint64_t cache_bytes, uint32_t block_size,
	       uint32_t erase_block_size, struct wowc_msize *m, char *err);
void wowc_msize_print(FILE *f, const struct wowc_msize *m, bool json);

#endif /* WOWCACHE_H */
