// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Traffic ends of the throughput benchmark (tests/bench/xdp_forward.c).  Test-only.
 *
 *   kr_gen    run by BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES: writes a new 4-byte
 *             key (this CPU's counter in gen_ctr, times 64, plus the CPU number: distinct
 *             keys on every CPU, and no cache line written by two CPUs, so that generators
 *             on several CPUs do not slow each other down) into the first bytes of the UDP
 *             payload and returns XDP_TX, which the kernel turns into a transmit out of
 *             the context's ingress device (a veth: the frame arrives at its peer's receive
 *             queue of this CPU, smp_processor_id() % queues).
 *   kr_sink   attached (native) to the peer of the router's egress veth: counts frames
 *             and bytes per CPU in sink_stats, and drops them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define GEN_PL_OFF	42	/* Ethernet + IPv4 without options + UDP */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} gen_ctr SEC(".maps");

struct sink_stat {
	__u64 frames;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sink_stat);
} sink_stats SEC(".maps");

SEC("xdp")
int kr_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 *k = data + GEN_PL_OFF, zero = 0, *c = bpf_map_lookup_elem(&gen_ctr, &zero);

	if ((void *)(k + 1) > end || !c)
		return XDP_ABORTED;
	*k = (*c)++ << 6 | (bpf_get_smp_processor_id() & 63);
	return XDP_TX;
}

SEC("xdp")
int kr_sink(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct sink_stat *s = bpf_map_lookup_elem(&sink_stats, &zero);

	if (s) {
		s->frames++;
		s->bytes += ctx->data_end - ctx->data;
	}
	return XDP_DROP;
}
