// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The data path program built for tests/bench/bench_datapath.c: see
 * tests/bpf/progs/kr_dpbench.h. */
#define KR_BENCH_VARIANT KR_BENCH_FULL
#include "kr_dpbench.h"
