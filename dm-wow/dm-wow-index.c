// SPDX-License-Identifier: GPL-2.0
/*
 * dm-wow index: origin block -> cache slot.
 *
 * One struct wow_slot per cache block of the log area (12 bytes) and one
 * 32-bit hash bucket head per slot (4 bytes): 16 bytes of RAM per cached
 * block.  A slot holding the current copy of an origin block is VALID and
 * sits on the chain of its bucket; a slot holding a stale copy, a record
 * header or nothing is not on any chain.
 *
 * The index is pure bookkeeping: no locking (the caller holds the cache's
 * lock), no allocation after init, no I/O.  KUnit drives it directly.
 */
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "dm-wow.h"

/* kvmalloc refuses more than INT_MAX bytes; a 1 TiB cache needs more. */
static void *alloc_array(size_t n, size_t size)
{
	size_t bytes = array_size(n, size);

	return bytes > INT_MAX ? vmalloc(bytes) : kvmalloc(bytes, GFP_KERNEL);
}

int wow_index_init(struct wow_index *ix, u32 nr_slots)
{
	u32 i;

	if (!nr_slots || nr_slots > WOW_MAX_SLOTS)
		return -EINVAL;
	ix->nr_slots = nr_slots;
	ix->hash_bits = ilog2(roundup_pow_of_two(nr_slots));
	ix->heads = alloc_array(1U << ix->hash_bits, sizeof(u32));
	ix->slots = alloc_array(nr_slots, sizeof(struct wow_slot));
	if (!ix->heads || !ix->slots) {
		wow_index_exit(ix);
		return -ENOMEM;
	}
	for (i = 0; i < (1U << ix->hash_bits); i++)
		ix->heads[i] = WOW_NO_SLOT;
	for (i = 0; i < nr_slots; i++)
		wow_slot_clear(&ix->slots[i]);
	ix->nr_valid = 0;
	return 0;
}

void wow_index_exit(struct wow_index *ix)
{
	kvfree(ix->heads);
	kvfree(ix->slots);
	ix->heads = NULL;
	ix->slots = NULL;
}

static u32 *bucket(struct wow_index *ix, oblock_t b)
{
	return &ix->heads[hash_64(from_oblock(b), ix->hash_bits)];
}

/* The slot holding the current copy of @b, or WOW_NO_SLOT. */
u32 wow_index_lookup(struct wow_index *ix, oblock_t b)
{
	u32 s = *bucket(ix, b);

	while (s != WOW_NO_SLOT) {
		struct wow_slot *sl = &ix->slots[s];

		if (wow_slot_oblock(sl).v == b.v)
			return s;
		s = sl->next;
	}
	return WOW_NO_SLOT;
}

/* Unlink @slot from its chain; it keeps its origin block, loses VALID. */
void wow_index_remove(struct wow_index *ix, u32 slot)
{
	struct wow_slot *sl = &ix->slots[slot];
	u32 *p = bucket(ix, wow_slot_oblock(sl));

	if (WARN_ON_ONCE(!(sl->flags & WOW_SLOT_VALID)))
		return;
	while (*p != slot) {
		if (WARN_ON_ONCE(*p == WOW_NO_SLOT))
			return;
		p = &ix->slots[*p].next;
	}
	*p = sl->next;
	sl->next = WOW_NO_SLOT;
	sl->flags &= ~(WOW_SLOT_VALID | WOW_SLOT_DIRTY);
	ix->nr_valid--;
}

/*
 * Make @slot the current copy of @b with @flags (VALID is added).  Returns
 * the slot that held the previous current copy, now stale, or WOW_NO_SLOT.
 */
u32 wow_index_insert(struct wow_index *ix, oblock_t b, u32 slot, u16 flags)
{
	struct wow_slot *sl = &ix->slots[slot];
	u32 old = wow_index_lookup(ix, b);
	u32 *head;

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
