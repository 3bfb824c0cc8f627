// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The shipped data path program, but routing to backend 1 + (ring-local index & 15) without
 * the backend table (bpf/kr_ring.h, KR_BENCH_HOT_BACKENDS): the full lookup with its answers'
 * backend entries hot, as (a) and (c) have them.  Measured by tests/bench/xdp_forward.c. */
#define KR_BENCH_HOT_BACKENDS 1
#include "keyrouter.bpf.c"
