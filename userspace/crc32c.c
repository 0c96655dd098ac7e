// SPDX-License-Identifier: GPL-2.0
/*
 * crc32c (Castagnoli), slice by 8, with the kernel's convention (crc32c.h).
 */
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "crc32c.h"

static uint32_t crc_tab[8][256];
static bool crc_ready;

static void crc_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78U : c >> 1;
		crc_tab[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			crc_tab[j][i] = (crc_tab[j - 1][i] >> 8) ^
					crc_tab[0][crc_tab[j - 1][i] & 0xff];
	crc_ready = true;
}

uint32_t crc32c(uint32_t c, const void *buf, unsigned int len)
{
	const uint8_t *p = buf;

	if (!crc_ready)
		crc_init();
	while (len && ((uintptr_t)p & 7)) {
		c = crc_tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
		len--;
	}
	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		v = le64toh(v) ^ c;
		c = crc_tab[7][v & 0xff] ^ crc_tab[6][(v >> 8) & 0xff] ^
		    crc_tab[5][(v >> 16) & 0xff] ^
		    crc_tab[4][(v >> 24) & 0xff] ^
		    crc_tab[3][(v >> 32) & 0xff] ^
		    crc_tab[2][(v >> 40) & 0xff] ^
		    crc_tab[1][(v >> 48) & 0xff] ^ crc_tab[0][v >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = crc_tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}
