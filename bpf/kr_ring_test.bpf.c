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

/* The global backends map, as the data path defines it (backend id -> struct kr_backend). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KR_MAX_BACKEND_IDS);
	__type(key, __u32);
	__type(value, struct kr_backend);
} kr_backends SEC(".maps");

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
