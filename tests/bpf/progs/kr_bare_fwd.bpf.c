// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The bare forwarder: the most a router can do with a UDP packet here, as the baseline of
 * the throughput benchmark (tests/bench/xdp_forward.c) and of bench_datapath.  Parse
 * Ethernet / IPv4 / UDP (bounds, EtherType, header length, protocol), rewrite both MACs,
 * send to one fixed device (XDP_TX when it is the ingress device or 0, else
 * bpf_redirect()).  No service, no key, no hash, no ring, no counter.  Test-only.
 *
 * bare_ifindex, bare_dmac, bare_smac: set before load (skeleton .rodata).
 * bare_write_key: when set, the program first writes the per-run counter kr_bench_ctr
 * into the first 4 bytes of the UDP payload, exactly as the bench_datapath builds do
 * (kr_dpbench.h), so that the two are timed over the same work on the packet.
 * kr_key_only: only that key write, then XDP_TX: what a test run costs without a program's
 * own work (bench_datapath subtracts it to report the work of the bare forwarder and of
 * (a) themselves).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 bare_ifindex = 0;
const volatile __u8 bare_dmac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
const volatile __u8 bare_smac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
const volatile __u32 bare_write_key = 0;

__u32 kr_bench_ctr;

#define BARE_ETH_P_IP	0x0800
#define BARE_PL_OFF	42	/* Ethernet + IPv4 without options + UDP */

static __always_inline void bare_key(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 *k = data + BARE_PL_OFF;

	if (bare_write_key && (void *)(k + 1) <= end)
		*k = kr_bench_ctr++;
}

SEC("xdp")
int kr_key_only(struct xdp_md *ctx)
{
	bare_key(ctx);
	return XDP_TX;
}

SEC("xdp")
int kr_bare_fwd(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;
	int i;

	bare_key(ctx);
	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(BARE_ETH_P_IP))
		return XDP_PASS;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end || ip->ihl < 5 || ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	udp = (void *)ip + ip->ihl * 4;
	if ((void *)(udp + 1) > end)
		return XDP_PASS;
	for (i = 0; i < 6; i++) {
		eth->h_dest[i] = bare_dmac[i];
		eth->h_source[i] = bare_smac[i];
	}
	if (!bare_ifindex || bare_ifindex == ctx->ingress_ifindex)
		return XDP_TX;
	return bpf_redirect(bare_ifindex, 0);
}
