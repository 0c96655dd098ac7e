// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow index: origin block -> cache slot.
 *
 * One struct wow_slot per cache block of the log area (16 bytes) and one
 * 32-bit hash bucket head per two to four slots (a power of two buckets,
 * at most half as many as slots): at most 18 bytes of RAM per cache block,
 * chains of two to four at a full cache.  Both arrays are cut into chunks
 * of at most 2 MiB, so no allocation is large however big the cache (a
 * 4 TiB cache of 4 KiB blocks has 2^30 slots).  A slot holding the current
 * copy of an origin block is VALID and sits on the chain of its bucket; a
 * slot holding a stale copy, a record header or nothing is not on any
 * chain.
 *
 * It also keeps, for each checkpoint area, a bitmap of the slots whose
 * checkpoint entry (block, VALID, DIRTY) changed since that area was
 * written (a bit per 2^WOW_TRACK_SHIFT slots): a checkpoint rewrites only
 * the slot table blocks it names.
 *
 * The index is pure bookkeeping: no locking (the caller holds the cache's
 * lock), no allocation after init, no I/O.  KUnit drives it directly.
 */
#include "dm-wow-index.h"

static void free_chunks(void **chunks, u32 n)
{
	u32 i;

	if (!chunks)
		return;
	for (i = 0; i < n; i++)
		kvfree(chunks[i]);
	kvfree(chunks);
}

/* @n elements of @size bytes in chunks of 2^@shift elements. */
static void **alloc_chunks(u64 n, size_t size, u32 shift, u32 *nr_chunks)
{
	u32 nc = DIV_ROUND_UP_ULL(n, 1ULL << shift), i;
	void **chunks = kvcalloc(nc, sizeof(*chunks), GFP_KERNEL);

	*nr_chunks = nc;
	if (!chunks)
		return NULL;
	for (i = 0; i < nc; i++) {
		u64 left = n - ((u64)i << shift);

		chunks[i] = kvmalloc_array(min_t(u64, left, 1ULL << shift),
					   size, GFP_KERNEL);
		if (!chunks[i]) {
			free_chunks(chunks, nc);
			return NULL;
		}
	}
	return chunks;
}

int wow_index_init(struct wow_index *ix, u32 nr_slots)
{
	u32 nb, i;
	unsigned int t;

	memset(ix->track, 0, sizeof(ix->track));
	ix->before_change = NULL;
	ix->change_ctx = NULL;
	ix->slot_chunks = NULL;
	ix->head_chunks = NULL;
	if (!nr_slots || nr_slots > WOW_MAX_SLOTS)
		return -EINVAL;
	ix->nr_slots = nr_slots;
	ix->hash_bits = wow_index_hash_bits(nr_slots);
	nb = 1U << ix->hash_bits;
	ix->slot_chunks = (struct wow_slot **)alloc_chunks(nr_slots,
				sizeof(struct wow_slot), WOW_SLOT_CHUNK_SHIFT,
				&ix->nr_slot_chunks);
	ix->head_chunks = (u32 **)alloc_chunks(nb, sizeof(u32),
				WOW_HEAD_CHUNK_SHIFT, &ix->nr_head_chunks);
	ix->nr_track_bits = DIV_ROUND_UP(nr_slots, 1U << WOW_TRACK_SHIFT);
	for (t = 0; t < WOW_INDEX_TRACKS; t++)
		ix->track[t] = kvcalloc(BITS_TO_LONGS(ix->nr_track_bits),
					sizeof(unsigned long), GFP_KERNEL);
	if (!ix->slot_chunks || !ix->head_chunks || !ix->track[0] ||
	    !ix->track[1]) {
		wow_index_exit(ix);
		return -ENOMEM;
	}
	/* nothing is known of what a checkpoint area holds */
	for (t = 0; t < WOW_INDEX_TRACKS; t++)
		wow_index_mark_all(ix, t);
	for (i = 0; i < nb; i++)
		*wow_index_head(ix, i) = WOW_NO_SLOT;
	for (i = 0; i < nr_slots; i++) {
		wow_slot_clear(wow_slot_at(ix, i));
		/* 2^30 slots at 4 TiB: let others run (it sleeps anyway) */
		if (!(i & 0xffff))
			cond_resched();
	}
	ix->nr_valid = 0;
	return 0;
}

void wow_index_exit(struct wow_index *ix)
{
	unsigned int t;

	free_chunks((void **)ix->slot_chunks, ix->nr_slot_chunks);
	free_chunks((void **)ix->head_chunks, ix->nr_head_chunks);
	for (t = 0; t < WOW_INDEX_TRACKS; t++) {
		kvfree(ix->track[t]);
		ix->track[t] = NULL;
	}
	ix->slot_chunks = NULL;
	ix->head_chunks = NULL;
}

/* Bytes of RAM the index holds (for the status line and the tests). */
u64 wow_index_bytes(const struct wow_index *ix)
{
	return (u64)ix->nr_slots * sizeof(struct wow_slot) +
	       (4ULL << ix->hash_bits) +
	       ((u64)ix->nr_slot_chunks + ix->nr_head_chunks) * sizeof(void *) +
	       WOW_INDEX_TRACKS * BITS_TO_LONGS(ix->nr_track_bits) *
	       sizeof(unsigned long);
}

/*
 * @slot's checkpoint entry is about to change: it may differ from what
 * every area holds, and a checkpoint being written from the index may
 * want it as it was first (before_change).
 */
static void mark(struct wow_index *ix, u32 slot)
{
	unsigned int t;

	for (t = 0; t < WOW_INDEX_TRACKS; t++)
		__set_bit(slot >> WOW_TRACK_SHIFT, ix->track[t]);
	if (ix->before_change)
		ix->before_change(ix->change_ctx, slot);
}

/*
 * Move track @t's bits to @to (nr_track_bits of them) and start it over:
 * the caller writes what they name to area @t.
 */
void wow_index_take_changes(struct wow_index *ix, unsigned int t,
			    unsigned long *to)
{
	bitmap_copy(to, ix->track[t], ix->nr_track_bits);
	bitmap_zero(ix->track[t], ix->nr_track_bits);
}

/* Put taken bits back (their write failed): they are written next time. */
void wow_index_add_changes(struct wow_index *ix, unsigned int t,
			   const unsigned long *from)
{
	bitmap_or(ix->track[t], ix->track[t], from, ix->nr_track_bits);
}

/* Area @t is not known to hold anything: every slot counts as changed. */
void wow_index_mark_all(struct wow_index *ix, unsigned int t)
{
	bitmap_fill(ix->track[t], ix->nr_track_bits);
}

/* The first slot from @slot that @map (a track's bits) names, or U64_MAX. */
u64 wow_index_next_changed(const struct wow_index *ix,
			   const unsigned long *map, u64 slot)
{
	u64 bit;

	if (slot >= ix->nr_slots)
		return U64_MAX;
	bit = find_next_bit(map, ix->nr_track_bits, slot >> WOW_TRACK_SHIFT);
	if (bit >= ix->nr_track_bits)
		return U64_MAX;
	return max(slot, bit << WOW_TRACK_SHIFT);
}

static u32 *bucket(struct wow_index *ix, oblock_t b)
{
	return wow_index_head(ix, ix->hash_bits ?
			      hash_64(from_oblock(b), ix->hash_bits) : 0);
}

/* The slot holding the current copy of @b, or WOW_NO_SLOT. */
u32 wow_index_lookup(struct wow_index *ix, oblock_t b)
{
	u32 s = *bucket(ix, b);

	while (s != WOW_NO_SLOT) {
		struct wow_slot *sl = wow_slot_at(ix, s);

		if (wow_slot_oblock(sl).v == b.v)
			return s;
		s = sl->next;
	}
	return WOW_NO_SLOT;
}

/* Unlink @slot from its chain; it keeps its origin block, loses VALID. */
void wow_index_remove(struct wow_index *ix, u32 slot)
{
	struct wow_slot *sl = wow_slot_at(ix, slot);
	u32 *p = bucket(ix, wow_slot_oblock(sl));

	if (WARN_ON_ONCE(!(sl->flags & WOW_SLOT_VALID)))
		return;
	while (*p != slot) {
		if (WARN_ON_ONCE(*p == WOW_NO_SLOT))
			return;
		p = &wow_slot_at(ix, *p)->next;
	}
	mark(ix, slot);
	*p = sl->next;
	sl->next = WOW_NO_SLOT;
	sl->flags &= ~(WOW_SLOT_VALID | WOW_SLOT_DIRTY);
	ix->nr_valid--;
}

/*
 * Set, then clear, flags of @slot: DIRTY and DESTAGING (VALID is insert's
 * and remove's).
 */
void wow_index_set_flags(struct wow_index *ix, u32 slot, u16 set, u16 clear)
{
	struct wow_slot *sl = wow_slot_at(ix, slot);
	u16 to = (sl->flags | set) & ~clear;

	WARN_ON_ONCE((set | clear) & WOW_SLOT_VALID);
	/* a checkpoint holds VALID and DIRTY, not DESTAGING */
	if ((sl->flags ^ to) & WOW_SLOT_DIRTY && (sl->flags & WOW_SLOT_VALID))
		mark(ix, slot);
	sl->flags = to;
}

/*
 * The crc32c of @slot's data, as its record has it (WOW_SLOT_CRC): set
 * after the insert that made it current (which clears it).
 */
void wow_index_set_crc(struct wow_index *ix, u32 slot, u32 crc)
{
	struct wow_slot *sl = wow_slot_at(ix, slot);

	mark(ix, slot);
	sl->crc = crc;
	sl->flags |= WOW_SLOT_CRC;
}

/*
 * Make @slot the current copy of @b with @flags (VALID is added).  Returns
 * the slot that held the previous current copy, now stale, or WOW_NO_SLOT.
 */
u32 wow_index_insert(struct wow_index *ix, oblock_t b, u32 slot, u16 flags)
{
	struct wow_slot *sl = wow_slot_at(ix, slot);
	u32 old = wow_index_lookup(ix, b);
	u32 *head;

	mark(ix, slot);
	if (old == slot) {
		sl->flags = flags | WOW_SLOT_VALID;
		return WOW_NO_SLOT;
	}
	if (old != WOW_NO_SLOT)
		wow_index_remove(ix, old);
	if (WARN_ON_ONCE(sl->flags & WOW_SLOT_VALID))
		wow_index_remove(ix, slot);

	head = bucket(ix, b);
	wow_slot_set_oblock(sl, b);
	sl->flags = flags | WOW_SLOT_VALID;
	sl->next = *head;
	*head = slot;
	ix->nr_valid++;
	return old;
}

/*
 * What a load left in @ix, slots [@first, @first + @n): each valid slot
 * (a current copy) counted in *@valid, and in *@dirty too when dirty, and
 * handed to @count with its segment (@blocks_per_seg slots each) and
 * whether dirty, for the segment's counts.  0, or the first -errno @count
 * returns (the slot is in *@valid, not in *@dirty).  The module's load and
 * the tools' view both count with it; the module in chunks, rescheduling
 * between them.
 */
int wow_index_count(struct wow_index *ix, u32 first, u32 n,
		    u32 blocks_per_seg, u64 *valid, u64 *dirty,
		    int (*count)(void *ctx, u32 slot, u32 seg, bool dirty),
		    void *ctx)
{
	struct wow_slot *sl;
	bool d;
	u32 i;
	int r;

	for (i = first; i - first < n; i++) {
		sl = wow_slot_at(ix, i);
		if (!(sl->flags & WOW_SLOT_VALID))
			continue;
		d = sl->flags & WOW_SLOT_DIRTY;
		(*valid)++;
		r = count(ctx, i, i / blocks_per_seg, d);
		if (r)
			return r;
		if (d)
			(*dirty)++;
	}
	return 0;
}
