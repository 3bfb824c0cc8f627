// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Small helpers (see util.h). */
#include <time.h>
#include "util.h"

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t kr_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t kr_wall_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

int kr_parse_u32(const char *s, uint32_t min, uint32_t *v)
{
	uint64_t x = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
		if (x > UINT32_MAX)
			return -1;
	}
	if (x < min)
		return -1;
	*v = (uint32_t)x;
	return 0;
}
