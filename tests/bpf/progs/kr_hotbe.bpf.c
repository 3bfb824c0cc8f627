// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The shipped data path program, but routing to backend 1 + (ring-local index & 15) without
 * the backend table (bpf/kr_ring.h KR_RING_BACKEND_ID): the answer's backend among 16, as (a)
 * and (c) route, so the full lookup runs with its answers' backend entries, MACs and counters
 * hot, not read at random.  Measured by tests/bench/xdp_forward.c. */
#define KR_RING_BACKEND_ID(ring, hdr, b, id) (*(id) = 1 + ((b) & 15), 0)
#include "keyrouter.bpf.c"
