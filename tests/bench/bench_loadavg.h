/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The load average before and after a benchmark (the machine may be shared: figures of
 * different runs compare only through their ratios).  bench_loadavg_begin() prints the
 * "before" line and registers the "after" line for exit.
 */
#ifndef KR_BENCH_LOADAVG_H
#define KR_BENCH_LOADAVG_H

#include <stdio.h>
#include <stdlib.h>

static void bench_loadavg_print(const char *when)
{
	char buf[128] = "";
	FILE *f = fopen("/proc/loadavg", "r");

	if (f && fgets(buf, sizeof(buf), f))
		printf("load average %s: %s", when, buf);
	if (f)
		fclose(f);
	fflush(stdout);
}

static void bench_loadavg_after(void)
{
	bench_loadavg_print("after");
}

static inline void bench_loadavg_begin(void)
{
	bench_loadavg_print("before");
	atexit(bench_loadavg_after);
}

#endif
