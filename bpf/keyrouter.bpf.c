// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * keyrouter data path: an XDP program and a TC (clsact ingress) program sharing one core,
 * the pipeline of kr_datapath.h with the ring stage of kr_ring.h.  This file is what
 * ships (build/bpf/keyrouter.bpf.o); the test and benchmark builds of the same pipeline
 * are in tests/bpf/progs/.
 */
#include "kr_datapath.h"

/* The ring stage: slot, bucket lookup, failover walk, counted in its slot. */
static __always_inline int kr_program_route(__u32 ring_id, __u32 subset, __u32 key_hash,
					    __u32 bytes, struct kr_route *out)
{
	return kr_ring_route_subset(ring_id, subset, key_hash, bytes, out);
}

SEC("xdp")
int kr_xdp(struct xdp_md *ctx)
{
	return kr_xdp_verdict(ctx);
}

SEC("tc")
int kr_tc(struct __sk_buff *skb)
{
	return kr_tc_verdict(skb);
}
