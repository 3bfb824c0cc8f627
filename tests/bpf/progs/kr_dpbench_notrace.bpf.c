// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The full data path program without the run-time decision trace (KR_NO_TRACE): the
 * benchmark's reference for the cost of the trace when it is off (tests/bench/
 * bench_datapath.c; bpf/kr_trace.h). */
#define KR_BENCH_VARIANT KR_BENCH_FULL
#define KR_NO_TRACE 1
#include "kr_dpbench.h"
