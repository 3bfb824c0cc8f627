/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Packet format of the ring stage's test and benchmark programs (kr_ring_test.bpf.c,
 * kr_ring_bench.bpf.c here), run through BPF_PROG_TEST_RUN by tests/bpf/test_ring.c and
 * tests/bench/bench_ring.c: the test writes ring_id and key_hash, the program answers in
 * place (XDP_TX) with the reason and the route.  Test-only, so it lives with the tests.
 */
#ifndef KR_RING_TEST_KERN_USER_H
#define KR_RING_TEST_KERN_USER_H

#include "kr_datapath_kern_user.h"

struct kr_ring_test_pkt {
	__u32 ring_id;
	__u32 key_hash;
	__u32 reason;		/* enum kr_route_reason, written by the program */
	__u32 subset_id;	/* 0: whole ring */
	struct kr_route route;	/* written by the program */
	__u8 fill[16];		/* up to 64 bytes: more than an Ethernet header */
};
KR_LAYOUT_SIZE(kr_ring_test_pkt, 64);
KR_LAYOUT_AT(kr_ring_test_pkt, ring_id, 0);
KR_LAYOUT_AT(kr_ring_test_pkt, key_hash, 4);
KR_LAYOUT_AT(kr_ring_test_pkt, reason, 8);
KR_LAYOUT_AT(kr_ring_test_pkt, subset_id, 12);
KR_LAYOUT_AT(kr_ring_test_pkt, route, 16);
KR_LAYOUT_AT(kr_ring_test_pkt, fill, 48);

#endif
