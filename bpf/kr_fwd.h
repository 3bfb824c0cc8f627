/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Forwarding stage of keyrouter.bpf.c: `l2` (MAC rewrite) and `ipip` (IPv4/IPv6 outer
 * header chosen by the backend's family, next hop from bpf_fib_lookup()).  The XDP and TC
 * programs share this code; `xdp` is a compile-time constant after inlining, and only the
 * packet-growth helper and the verdicts differ.
 *
 * Every function leaves the packet untouched when it fails (lookups happen before the
 * packet is grown or written), so the caller can pass it to the stack.
 */
#ifndef KR_FWD_H
#define KR_FWD_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "kr_parse.h"
#include "kr_maps.h"

#define KR_AF_INET	2
#define KR_AF_INET6	10
#define KR_TTL		64

enum kr_act {
	KR_ACT_CONTINUE = -1,	/* stage done, next stage */
	KR_ACT_TCP = -2,	/* parse done: a TCP segment (its own path) */
	KR_ACT_PASS = 0,
	KR_ACT_DROP = 1,
	KR_ACT_TX = 2,		/* out of the ingress device (XDP_TX) */
	KR_ACT_REDIRECT = 3,	/* bpf_redirect() was called */
	KR_ACT_FAIL = 4,	/* forwarding failed, packet untouched */
};

static __always_inline void kr_frame(void *ctx, const bool xdp, __u8 **data, __u8 **end)
{
	if (xdp) {
		struct xdp_md *x = ctx;

		*data = (__u8 *)(long)x->data;
		*end = (__u8 *)(long)x->data_end;
	} else {
		struct __sk_buff *s = ctx;

		*data = (__u8 *)(long)s->data;
		*end = (__u8 *)(long)s->data_end;
	}
}

static __always_inline void kr_mac_copy(__u8 *d, const __u8 *s)
{
	int i;

	for (i = 0; i < 6; i++)
		d[i] = s[i];
}

/* A MAC from a map value (or the frame) into the frame: one 4-byte and one 2-byte load and
 * store instead of 6 byte copies (kr_parse.h kr_copy4/kr_copy2: unaligned packet and map
 * value accesses are allowed without strict alignment; not for the stack, hence
 * kr_mac_copy for the rest). */
static __always_inline void kr_mac_put(__u8 *d, const __u8 *s)
{
	kr_copy4(d, s);
	kr_copy2(d + 4, s + 4);
}

#define KR_XDP_REDIRECT	4	/* XDP_REDIRECT */
#define KR_TC_REDIRECT	7	/* TC_ACT_REDIRECT */

/* Send out of `egress`: XDP_TX when it is the ingress device, else redirect.  (With flags
 * 0 bpf_redirect() cannot fail; if it ever did, the rewritten packet is dropped.) */
static __always_inline int kr_out(const bool xdp, __u32 egress, __u32 ingress)
{
	if (xdp && egress == ingress)
		return KR_ACT_TX;
	if (bpf_redirect(egress, 0) != (xdp ? KR_XDP_REDIRECT : KR_TC_REDIRECT))
		return KR_ACT_DROP;
	return KR_ACT_REDIRECT;
}

/* l2: destination MAC = backend's, source MAC = the egress device's (kr_device_macs, else
 * kr_devices; neither: the MAC the packet was sent to when it leaves by its ingress
 * device). */
static __always_inline int kr_fwd_l2(void *ctx, const bool xdp, __u32 ingress,
				     const struct kr_backend *be)
{
	__u32 egress = be->ifindex ? be->ifindex : ingress;
	const struct kr_device *dev;
	__u8 *data, *end;

	kr_frame(ctx, xdp, &data, &end);
	if (data + KR_ETH_HLEN > end)
		return KR_ACT_FAIL;
	dev = egress < KR_DEVICE_SLOTS ? bpf_map_lookup_elem(&kr_device_macs, &egress) : NULL;
	if (!dev || !(dev->flags & KR_DEVICE_F_MAC))
		dev = bpf_map_lookup_elem(&kr_devices, &egress);
	if (dev)
		kr_mac_put(data + 6, dev->mac);
	else if (egress == ingress)
		kr_mac_put(data + 6, data);	/* we were the destination */
	else
		return KR_ACT_FAIL;
	kr_mac_put(data, be->mac);
	return kr_out(xdp, egress, ingress);
}

static __always_inline __u16 kr_ipv4_csum(const __u8 *h)
{
	const __u16 *w = (const __u16 *)h;
	__u32 sum = 0;
	int i;

	for (i = 0; i < 10; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

static __always_inline void kr_put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* Next hop to the backend: fills fib (egress ifindex, MACs).  0 or -1. */
static __always_inline int kr_fib(void *ctx, struct bpf_fib_lookup *fib, const struct kr_pkt *pkt,
				  const struct kr_service *svc, const struct kr_backend *be,
				  __u32 ingress)
{
	int i;

	fib->ifindex = ingress;
	fib->l4_protocol = pkt->family == 6 ? KR_IPPROTO_IPV6 : KR_IPPROTO_IPIP;
	if (be->family == 6) {
		fib->family = KR_AF_INET6;
		fib->tot_len = KR_IPV6_HLEN + pkt->l3_len;
		for (i = 0; i < 16; i++) {
			((__u8 *)fib->ipv6_src)[i] = svc->tun_src6[i];
			((__u8 *)fib->ipv6_dst)[i] = be->addr[i];
		}
	} else if (be->family == 4) {
		fib->family = KR_AF_INET;
		fib->tot_len = 20 + pkt->l3_len;
		for (i = 0; i < 4; i++) {
			((__u8 *)&fib->ipv4_src)[i] = svc->tun_src4[i];
			((__u8 *)&fib->ipv4_dst)[i] = be->addr[i];
		}
	} else {
		return -1;
	}
	if (bpf_fib_lookup(ctx, fib, sizeof(*fib), 0) != BPF_FIB_LKUP_RET_SUCCESS)
		return -1;
	return 0;
}

static __always_inline void kr_put_ipv4(__u8 *ip, const struct bpf_fib_lookup *fib, __u32 inner_len,
					__u8 proto)
{
	int i;

	ip[0] = 0x45;
	ip[1] = 0;
	kr_put16(ip + 2, 20 + inner_len);
	for (i = 4; i < 8; i++)
		ip[i] = 0;			/* id, flags, fragment offset */
	ip[8] = KR_TTL;
	ip[9] = proto;
	ip[10] = ip[11] = 0;
	for (i = 0; i < 4; i++) {
		ip[12 + i] = ((const __u8 *)&fib->ipv4_src)[i];
		ip[16 + i] = ((const __u8 *)&fib->ipv4_dst)[i];
	}
	*(__u16 *)(ip + 10) = kr_ipv4_csum(ip);
}

static __always_inline void kr_put_ipv6(__u8 *ip, const struct bpf_fib_lookup *fib, __u32 inner_len,
					__u8 proto, __u32 flow)
{
	int i;

	ip[0] = 0x60;			/* version 6, traffic class 0 */
	ip[1] = (flow >> 16) & 0x0f;	/* flow label: key hash (ECMP entropy) */
	ip[2] = (flow >> 8) & 0xff;
	ip[3] = flow & 0xff;
	kr_put16(ip + 4, inner_len);
	ip[6] = proto;
	ip[7] = KR_TTL;
	for (i = 0; i < 16; i++) {
		ip[8 + i] = ((const __u8 *)fib->ipv6_src)[i];
		ip[24 + i] = ((const __u8 *)fib->ipv6_dst)[i];
	}
}

#define KR_BE16_CONST(x)	((__u32)__builtin_bswap16(x))	/* skb->protocol: network order */

/* skb->protocol, read as one context load (the barrier keeps the compiler from turning
 * the field's offset into a pointer the verifier refuses). */
static __always_inline __u32 kr_skb_protocol(struct __sk_buff *skb)
{
	__u32 p = skb->protocol;

	asm volatile("" : "+r"(p));
	return p;
}

/*
 * TC: the room for the outer header, right after the Ethernet header.  Every VLAN tag goes
 * first: one the device moved into skb metadata would be put back on the encapsulated
 * frame, and tags left in the frame (the inner one of 802.1ad) sit where the outer header
 * goes; after the pops the IP packet follows the Ethernet header and skb->protocol names
 * its family.  Then bpf_skb_adjust_room() inserts the room and, with the ENCAP_L3 flag of
 * the outer family, also sets skb->protocol to it (IPv4 in IPv6, IPv6 in IPv4), so the
 * egress device (qdiscs, offloads, tc filters) sees the frame's real protocol.
 */
static __always_inline int kr_tc_encap_room(struct __sk_buff *skb, __u32 outer, __u8 family)
{
	__u32 proto = kr_skb_protocol(skb);
	int i;

	for (i = 0; i <= KR_MAX_VLANS; i++) {
		if (!skb->vlan_present && proto != KR_BE16_CONST(KR_ETH_P_8021Q) &&
		    proto != KR_BE16_CONST(KR_ETH_P_8021AD))
			break;
		if (bpf_skb_vlan_pop(skb))
			return -1;
		proto = kr_skb_protocol(skb);
	}
	if (proto != KR_BE16_CONST(KR_ETH_P_IP) && proto != KR_BE16_CONST(KR_ETH_P_IPV6))
		return -1;
	return bpf_skb_adjust_room(skb, outer, BPF_ADJ_ROOM_MAC,
				   family == 6 ? BPF_F_ADJ_ROOM_ENCAP_L3_IPV6 :
						 BPF_F_ADJ_ROOM_ENCAP_L3_IPV4) ? -1 : 0;
}

/* ipip: [Ethernet][outer IPv4/IPv6][the inner IP packet, VLAN tags removed]. */
static __always_inline int kr_fwd_ipip(void *ctx, const bool xdp, __u32 ingress,
				       const struct kr_pkt *pkt, const struct kr_service *svc,
				       const struct kr_backend *be, __u32 key_hash)
{
	struct bpf_fib_lookup fib = {};
	__u32 outer, inner_len = pkt->l3_len;
	__u8 proto = pkt->family == 6 ? KR_IPPROTO_IPV6 : KR_IPPROTO_IPIP;
	__u8 *data, *end;
	int delta;

	if (kr_fib(ctx, &fib, pkt, svc, be, ingress))
		return KR_ACT_FAIL;
	outer = be->family == 6 ? KR_IPV6_HLEN : 20;
	if (pkt->l3_off > KR_ETH_HLEN + KR_MAX_VLANS * KR_VLAN_HLEN || inner_len > 0xffff - outer)
		return KR_ACT_FAIL;
	delta = (int)(KR_ETH_HLEN + outer) - (int)pkt->l3_off;
	if (xdp) {
		if (bpf_xdp_adjust_head(ctx, -delta))
			return KR_ACT_FAIL;
	} else if (kr_tc_encap_room(ctx, outer, be->family)) {
		return KR_ACT_FAIL;
	}
	kr_frame(ctx, xdp, &data, &end);
	if (data + KR_ETH_HLEN + KR_IPV6_HLEN > end)
		return KR_ACT_DROP;		/* cannot happen: we just made the room */
	kr_mac_copy(data, fib.dmac);
	kr_mac_copy(data + 6, fib.smac);
	if (be->family == 6) {
		kr_put16(data + 12, KR_ETH_P_IPV6);
		kr_put_ipv6(data + KR_ETH_HLEN, &fib, inner_len, proto, key_hash);
	} else {
		kr_put16(data + 12, KR_ETH_P_IP);
		kr_put_ipv4(data + KR_ETH_HLEN, &fib, inner_len, proto);
	}
	return kr_out(xdp, fib.ifindex, ingress);
}

#endif /* KR_FWD_H */
