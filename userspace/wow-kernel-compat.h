/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel names dm-wow's portable core uses (dm-wow/dm-wow-types.h),
 * for its userspace build: the same names with the kernel's meaning.
 * Only what the core's files need; add a name here when one needs it.
 */
#ifndef WOW_KERNEL_COMPAT_H
#define WOW_KERNEL_COMPAT_H

#ifdef __KERNEL__
#error "wow-kernel-compat.h is for userspace builds"
#endif

#include <assert.h>
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>	/* __u64, __le32, ... */

#include "crc32c.h"

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#ifndef __packed
#define __packed	__attribute__((packed))
#endif

#define U8_MAX		((u8)~0U)
#define U16_MAX		((u16)~0U)
#define U32_MAX		((u32)~0U)
#define U64_MAX		((u64)~0ULL)
#define S64_MAX		((s64)(U64_MAX >> 1))

#define cpu_to_le16(x)	((__le16)htole16(x))
#define cpu_to_le32(x)	((__le32)htole32(x))
#define cpu_to_le64(x)	((__le64)htole64(x))
#define le16_to_cpu(x)	le16toh((__u16)(x))
#define le32_to_cpu(x)	le32toh((__u32)(x))
#define le64_to_cpu(x)	le64toh((__u64)(x))

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define BUILD_BUG_ON(c)	_Static_assert(!(c), #c)
#define BIT(n)		(1UL << (n))

/* as the kernel's: each argument evaluated once, of one type */
#define min(a, b)	({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); \
			   (void)(&_a == &_b); _a < _b ? _a : _b; })
#define max(a, b)	({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); \
			   (void)(&_a == &_b); _a > _b ? _a : _b; })
#define min_t(t, a, b)	({ t _a = (a); t _b = (b); _a < _b ? _a : _b; })
#define max_t(t, a, b)	({ t _a = (a); t _b = (b); _a > _b ? _a : _b; })
#define clamp(v, lo, hi) min(max(v, lo), hi)

static inline u64 div_u64_rem(u64 dividend, u32 divisor, u32 *remainder)
{
	*remainder = dividend % divisor;
	return dividend / divisor;
}

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

static inline bool is_power_of_2(unsigned long n)
{
	return n && !(n & (n - 1));
}

#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define DIV_ROUND_UP_ULL(n, d)	DIV_ROUND_UP((unsigned long long)(n), (d))
#define lower_32_bits(n)	((u32)((n) & 0xffffffff))
#define upper_32_bits(n)	((u32)((u64)(n) >> 32))

/* floor(log2(@n)), @n > 0 */
#define ilog2(n)	(63 - __builtin_clzll((unsigned long long)(n)))

/* linux/hash.h: the multiplicative hash, its top @bits bits */
#define GOLDEN_RATIO_64	0x61C8864680B583EBull

static inline u32 hash_64(u64 val, unsigned int bits)
{
	return (u32)((val * GOLDEN_RATIO_64) >> (64 - bits));
}

/* as the kernel's: true when @c holds, said on stderr the first time */
#define WARN_ON_ONCE(c) ({						\
	static bool _warned;						\
	bool _c = !!(c);						\
									\
	if (_c && !_warned) {						\
		_warned = true;						\
		fprintf(stderr, "WARNING: %s:%d: %s\n", __FILE__,	\
			__LINE__, #c);					\
	}								\
	_c;								\
})

/* nothing to yield to */
static inline void cond_resched(void)
{
}

/* linux/bitmap.h, for bitmaps of unsigned longs */
#define BITS_PER_LONG		(8 * (int)sizeof(long))
#define BITS_TO_LONGS(n)	DIV_ROUND_UP(n, BITS_PER_LONG)

static inline void __set_bit(unsigned long nr, unsigned long *map)
{
	map[nr / BITS_PER_LONG] |= 1UL << (nr % BITS_PER_LONG);
}

static inline void bitmap_zero(unsigned long *map, unsigned int nbits)
{
	memset(map, 0, BITS_TO_LONGS(nbits) * sizeof(long));
}

/* the bits past @nbits in the last long are set too: never read */
static inline void bitmap_fill(unsigned long *map, unsigned int nbits)
{
	memset(map, 0xff, BITS_TO_LONGS(nbits) * sizeof(long));
}

static inline void bitmap_copy(unsigned long *to, const unsigned long *from,
			       unsigned int nbits)
{
	memcpy(to, from, BITS_TO_LONGS(nbits) * sizeof(long));
}

static inline void bitmap_or(unsigned long *to, const unsigned long *a,
			     const unsigned long *b, unsigned int nbits)
{
	unsigned int i;

	for (i = 0; i < BITS_TO_LONGS(nbits); i++)
		to[i] = a[i] | b[i];
}

/* The first set bit of @map at or after @off, or @size. */
static inline unsigned long find_next_bit(const unsigned long *map,
					  unsigned long size,
					  unsigned long off)
{
	for (; off < size; off++)
		if (map[off / BITS_PER_LONG] & (1UL << (off % BITS_PER_LONG)))
			return off;
	return size;
}

/* The first byte of @n at @s that is not @c, or NULL. */
static inline void *memchr_inv(const void *s, int c, size_t n)
{
	const u8 *p = s;
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != (u8)c)
			return (void *)(p + i);
	return NULL;
}

/* Copy @src into @dst of @size bytes, NUL terminated: -E2BIG if cut. */
static inline long strscpy(char *dst, const char *src, size_t size)
{
	size_t len;

	if (!size)
		return -E2BIG;
	len = strnlen(src, size);
	if (len == size) {
		memcpy(dst, src, size - 1);
		dst[size - 1] = 0;
		return -E2BIG;
	}
	memcpy(dst, src, len + 1);
	return len;
}

/* strscpy, the rest of @dst zeroed */
static inline long strscpy_pad(char *dst, const char *src, size_t size)
{
	long r = strscpy(dst, src, size);
	size_t len = r < 0 ? (size ? size - 1 : 0) : (size_t)r;

	if (size > len + 1)
		memset(dst + len + 1, 0, size - len - 1);
	return r;
}

/* The kernel's sort() is not stable either; @swap_func is not used. */
static inline void sort(void *base, size_t num, size_t size,
			int (*cmp_func)(const void *, const void *),
			void (*swap_func)(void *, void *, int))
{
	(void)swap_func;
	qsort(base, num, size, cmp_func);
}

/* bsearch(): the C library's has the kernel's arguments and meaning */

/* GFP flags mean nothing here */
typedef unsigned int gfp_t;
#define GFP_KERNEL	0U
#define GFP_NOIO	0U
#define GFP_NOWAIT	0U
#define __GFP_NOWARN	0U
#define __GFP_ZERO	1U

static inline void *kmalloc(size_t n, gfp_t gfp)
{
	return gfp & __GFP_ZERO ? calloc(1, n ? n : 1) : malloc(n ? n : 1);
}

static inline void *kzalloc(size_t n, gfp_t gfp)
{
	return kmalloc(n, gfp | __GFP_ZERO);
}

static inline void *kvmalloc(size_t n, gfp_t gfp)
{
	return kmalloc(n, gfp);
}

static inline void *kvzalloc(size_t n, gfp_t gfp)
{
	return kzalloc(n, gfp);
}

/* NULL when @n * @size overflows, as the kernel's */
static inline void *kvmalloc_array(size_t n, size_t size, gfp_t gfp)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return kvmalloc(n * size, gfp);
}

static inline void *kvcalloc(size_t n, size_t size, gfp_t gfp)
{
	return kvmalloc_array(n, size, gfp | __GFP_ZERO);
}

static inline void kfree(const void *p)
{
	free((void *)p);
}

static inline void kvfree(const void *p)
{
	free((void *)p);
}

/*
 * kstrtoull() and friends, as the kernel's: the whole of @s a number in
 * @base (a trailing newline allowed), -ERANGE when it does not fit.
 */
static inline int kstrtoull(const char *s, unsigned int base,
			    unsigned long long *res)
{
	char *end;

	if (*s == '-' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*res = strtoull(s, &end, base);
	if (end == s || (*end && !(end[0] == '\n' && !end[1])))
		return -EINVAL;
	return errno == ERANGE ? -ERANGE : 0;
}

static inline int kstrtou64(const char *s, unsigned int base, u64 *res)
{
	unsigned long long v;
	int r = kstrtoull(s, base, &v);

	if (!r)
		*res = v;
	return r;
}

static inline int kstrtou32(const char *s, unsigned int base, u32 *res)
{
	unsigned long long v;
	int r = kstrtoull(s, base, &v);

	if (r)
		return r;
	if (v > U32_MAX)
		return -ERANGE;
	*res = v;
	return 0;
}

/* snprintf that returns what it wrote (@size - 1 at most), as the kernel's */
static inline int scnprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int scnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!size)
		return 0;
	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n < 0 ? 0 : (size_t)n >= size ? (int)size - 1 : n;
}

/* device-mapper's table line words (linux/device-mapper.h) */
struct dm_arg_set {
	unsigned int argc;
	char **argv;
};

static inline const char *dm_shift_arg(struct dm_arg_set *as)
{
	if (!as->argc)
		return NULL;
	as->argc--;
	return *as->argv++;
}

#define DMEMIT(x...) (sz += ((sz >= maxlen) ? 0 : \
			     scnprintf(result + sz, maxlen - sz, x)))

#endif
