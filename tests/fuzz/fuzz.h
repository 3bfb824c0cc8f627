/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared bits of the libFuzzer harnesses (tests/fuzz/fuzz_*.c, built with `make FUZZ=1
 * fuzz-bins`, run by tests/bats/fuzz.bats and scripts/fuzz.sh).  A harness checks
 * properties, not just "no crash": FUZZ_ASSERT aborts (libFuzzer saves the input as
 * crash-*), printing what did not hold.
 */
#ifndef KR_FUZZ_H
#define KR_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ASSERT(cond, ...)                                                             \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: property failed: %s: ", __FILE__, __LINE__, \
				#cond);                                                    \
			fprintf(stderr, __VA_ARGS__);                                      \
			fputc('\n', stderr);                                               \
			abort();                                                           \
		}                                                                          \
	} while (0)

/* data[0..size) as a NUL-terminated string (stops at an embedded NUL, as a C string
 * from argv or a file line would); free() it. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

/* Little cursor to take parameters off the front of the input. */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint32_t fuzz_u8(struct fuzz_in *in)
{
	uint32_t v = 0;

	if (in->n) {
		v = in->p[0];
		in->p++, in->n--;
	}
	return v;
}

static inline uint32_t fuzz_u16(struct fuzz_in *in)
{
	return fuzz_u8(in) | fuzz_u8(in) << 8;
}

/* Is the NUL-terminated string err within errlen bytes? */
static inline int fuzz_err_bounded(const char *err, size_t errlen)
{
	return errlen == 0 || memchr(err, 0, errlen) != NULL;
}

#endif
