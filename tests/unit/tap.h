/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Minimal TAP output for the C test programs; tests/run.sh counts the "ok"/"not ok" lines.
 *   CHECK(cond, "name %d", i)             one test point (on failure: the condition, file:line)
 *   CHECK_EQ_U(actual, expected, "name")  prints both values on failure
 *   SKIP(reason, "name")                  a test point that cannot run here, and why
 *   tap_done()                            prints the plan, returns the exit status
 */
#ifndef KR_TAP_H
#define KR_TAP_H
#include <stdio.h>
#include <inttypes.h>
#include <stdarg.h>

static int tap_n, tap_failed;

static inline void tap_result(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void tap_result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!ok)
		tap_failed++;
	fflush(stdout);
}

/* A failed CHECK says what it checked and where (the values: CHECK_EQ_U). */
#define CHECK(cond, ...)                                                                  \
	do {                                                                              \
		int ok_ = !!(cond);                                                       \
		tap_result(ok_, __VA_ARGS__);                                             \
		if (!ok_)                                                                 \
			printf("#   failed: %s  [%s:%d]\n", #cond, __FILE__, __LINE__);    \
	} while (0)
#define CHECK_EQ_U(a, e, ...)                                                             \
	do {                                                                              \
		uint64_t a_ = (uint64_t)(a), e_ = (uint64_t)(e);                          \
		tap_result(a_ == e_, __VA_ARGS__);                                        \
		if (a_ != e_)                                                             \
			printf("#   actual %" PRIu64 " (0x%" PRIx64 "), expected %" PRIu64     \
			       " (0x%" PRIx64 ")  [%s:%d]\n", a_, a_, e_, e_, __FILE__, __LINE__); \
	} while (0)
/* A test point that could not run here: "ok N - name # SKIP reason" (tests/run.sh counts
 * and names it; never a silent pass). */
#define SKIP(reason, ...)                                                                 \
	do {                                                                              \
		printf("ok %d - ", ++tap_n);                                              \
		printf(__VA_ARGS__);                                                      \
		printf(" # SKIP %s\n", (reason));                                         \
		fflush(stdout);                                                           \
	} while (0)
#define DIAG(...) (printf("# " __VA_ARGS__), putchar('\n'))

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
#endif
