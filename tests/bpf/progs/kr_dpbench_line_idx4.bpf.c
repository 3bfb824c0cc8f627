// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Benchmark build: (e) with one cache line of points counted, the index read from 4 times its region (kr_dpbench.h). */
#define KR_BENCH_IDX_SCALE 4
#define KR_BENCH_VARIANT KR_BENCH_IDX_LINE
#include "kr_dpbench.h"
