/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Packet format of the ring stage's test and benchmark programs (bpf/kr_ring_test.bpf.c,
 * bpf/kr_ring_bench.bpf.c), run through BPF_PROG_TEST_RUN: the test writes ring_id and
 * key_hash, the program answers in place (XDP_TX) with the reason and the route.
 */
#ifndef KR_RING_TEST_KERN_USER_H
#define KR_RING_TEST_KERN_USER_H

#include "keyrouter_kern_user.h"

struct kr_ring_test_pkt {
	__u32 ring_id;
	__u32 key_hash;
	__u32 reason;		/* enum kr_route_reason, written by the program */
	__u32 subset_id;	/* 0: whole ring */
	struct kr_route route;	/* written by the program */
	__u8 fill[16];		/* up to 64 bytes: more than an Ethernet header */
};
_Static_assert(sizeof(struct kr_ring_test_pkt) == 64, "kr_ring_test_pkt layout");

#endif
