/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The userspace unit tests' checks: a case is a function returning NULL
 * when it passes, else why it failed (EXPECT, EXPECT_EQ); report() prints
 * one "PASS: userspace/<name>" or "FAIL: userspace/<name> (<why>)" line
 * and remembers a failure in @failed, the exit status.
 */
#ifndef WOW_TESTS_EXPECT_H
#define WOW_TESTS_EXPECT_H

#include <stdio.h>

static char why[512];
static int failed;

#define EXPECT(cond)							\
	do {								\
		if (!(cond)) {						\
			snprintf(why, sizeof(why), "line %d: %s",	\
				 __LINE__, #cond);			\
			return why;					\
		}							\
	} while (0)

#define EXPECT_EQ(got, want)						\
	do {								\
		long long g_ = (long long)(got), w_ = (long long)(want); \
		if (g_ != w_) {						\
			snprintf(why, sizeof(why),			\
				 "line %d: %s is %lld, want %lld",	\
				 __LINE__, #got, g_, w_);		\
			return why;					\
		}							\
	} while (0)

static inline void report(const char *name, const char *fail)
{
	if (fail) {
		printf("FAIL: userspace/%s (%s)\n", name, fail);
		failed = 1;
	} else {
		printf("PASS: userspace/%s\n", name);
	}
}

#endif
