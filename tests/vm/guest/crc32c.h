/* SPDX-License-Identifier: GPL-2.0 */
/*
 * crc32c (Castagnoli) for the guest tools, table driven.  crc32c_raw() is
 * the kernel's crc32c(): no inversion in or out, the caller's seed;
 * crc32c() is the usual one, inverted in and out.  Call crc_init() once.
 */
#ifndef WOW_GUEST_CRC32C_H
#define WOW_GUEST_CRC32C_H

#include <stddef.h>
#include <stdint.h>

static uint32_t crc32c_table[256];

static inline void crc_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc32c_table[i] = c;
	}
}

static inline uint32_t crc32c_raw(uint32_t c, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len--)
		c = crc32c_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

static inline uint32_t crc32c(const void *buf, size_t len)
{
	return ~crc32c_raw(~0u, buf, len);
}

#endif
