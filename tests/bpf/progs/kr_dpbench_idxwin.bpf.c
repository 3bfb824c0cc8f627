// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The data path program built for tests/bench/xdp_forward.c: see kr_dpbench.h. */
#define KR_BENCH_VARIANT KR_BENCH_IDX_WIN
#include "kr_dpbench.h"
