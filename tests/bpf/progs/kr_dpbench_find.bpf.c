// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Benchmark build: the shipped kr_image_find() alone, no rest of the ring stage (kr_dpbench.h). */
#define KR_BENCH_VARIANT KR_BENCH_FIND
#include "kr_dpbench.h"
