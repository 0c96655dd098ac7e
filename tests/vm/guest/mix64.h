/* SPDX-License-Identifier: GPL-2.0 */
/* mix64: a 64-bit finaliser (MurmurHash3's fmix64) for the guest tools. */
#ifndef WOW_GUEST_MIX64_H
#define WOW_GUEST_MIX64_H

#include <stdint.h>

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
