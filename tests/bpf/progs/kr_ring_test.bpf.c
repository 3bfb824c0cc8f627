// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test harness of the ring stage alone: an XDP program that reads (ring_id, key_hash) from
 * the packet, calls kr_ring_route() and writes the verdict back into the packet
 * (struct kr_ring_test_pkt).  Run through BPF_PROG_TEST_RUN by tests/bpf/test_ring.c; never
 * attached to a device.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "kr_ring_test_kern_user.h"

/* The data path's backends map (backend id -> struct kr_backend), with room for every id. */
#define KR_BACKENDS_MAX_ENTRIES KR_MAX_BACKEND_IDS
#include "kr_backend_map.h"

#include "kr_ring.h"

SEC("xdp")
int kr_ring_test(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct kr_ring_test_pkt *p = data;
	struct kr_route r;

	if ((void *)(p + 1) > data_end)
		return XDP_ABORTED;
	p->reason = kr_ring_route_subset(p->ring_id, p->subset_id, p->key_hash,
					 data_end - data, &r);
	p->route = r;
	return XDP_TX;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
