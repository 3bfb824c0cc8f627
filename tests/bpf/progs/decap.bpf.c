// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Backend-side decapsulator for keyrouter's `ipip` forwarding mode.
 *
 * A backend normally decapsulates with an ordinary tunnel device (ipip for IPv4-in-IPv4,
 * sit for IPv6-in-IPv4, ip6tnl for IPv4/IPv6-in-IPv6).  Kernels built without those
 * (CONFIG_NET_IPIP, CONFIG_IPV6_SIT, CONFIG_IPV6_TUNNEL all unset, as on the CI machine)
 * cannot; this XDP program does the same job on the backend's receiving interface: it
 * strips the outer IPv4 (protocol 4 or 41) or IPv6 (next header 4 or 41, no extension
 * headers) header and hands the inner packet to the stack, which delivers it to the VIP on
 * the loopback device exactly as a tunnel device would.  Everything else passes untouched.
 *
 * Used by tests/lib/topo.sh (end-to-end tests and `make demo`) when `ip link add ... type
 * ipip` fails.  Attach: ip link set dev eth0 xdp obj build/tests/progs/decap.bpf.o sec xdp
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define ETH_P_IP_BE	bpf_htons(0x0800)
#define ETH_P_IPV6_BE	bpf_htons(0x86DD)
#define PROTO_IPIP	4
#define PROTO_IPV6	41

/* Outer header length to strip and the inner EtherType, or 0 when not a tunnel packet. */
static __always_inline int outer_len(void *data, void *end, __u16 proto, __u16 *inner)
{
	__u8 next;
	int len;

	if (proto == ETH_P_IP_BE) {
		struct iphdr *ip = data;

		if ((void *)(ip + 1) > end)
			return 0;
		len = ip->ihl * 4;
		if (len < (int)sizeof(*ip) || ip->frag_off & bpf_htons(0x3fff))
			return 0;
		next = ip->protocol;
	} else if (proto == ETH_P_IPV6_BE) {
		struct ipv6hdr *ip6 = data;

		if ((void *)(ip6 + 1) > end)
			return 0;
		len = sizeof(*ip6);
		next = ip6->nexthdr;
	} else {
		return 0;
	}
	if (next == PROTO_IPIP)
		*inner = ETH_P_IP_BE;
	else if (next == PROTO_IPV6)
		*inner = ETH_P_IPV6_BE;
	else
		return 0;
	return len;
}

SEC("xdp")
int kr_decap(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data, *neth;
	struct ethhdr copy;
	__u16 inner = 0;
	int len;

	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	len = outer_len(eth + 1, end, eth->h_proto, &inner);
	if (len <= 0 || len > 60)
		return XDP_PASS;
	copy = *eth;
	copy.h_proto = inner;
	if (bpf_xdp_adjust_head(ctx, len))
		return XDP_PASS;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	neth = data;
	if ((void *)(neth + 1) > end)
		return XDP_DROP;
	*neth = copy;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
