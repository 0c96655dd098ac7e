/* SPDX-License-Identifier: GPL-2.0 */
/*
 * crc32c (Castagnoli) with the kernel's convention: crc32c(seed, buf, len)
 * is the raw update, with no inversion before or after, so a result equals
 * the module's for the same seed and bytes (the module seeds with
 * WOW_CSUM_SEED, or ~0 for data).
 */
#ifndef WOW_CRC32C_H
#define WOW_CRC32C_H

#include <stdint.h>

uint32_t crc32c(uint32_t crc, const void *buf, unsigned int len);

#endif
