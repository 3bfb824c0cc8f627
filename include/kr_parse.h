/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Packet header parsing: Ethernet (+ up to two VLAN tags), IPv4 (any valid ihl), IPv6 (a
 * bounded walk over hop-by-hop, routing, destination-options and fragment headers), UDP
 * and TCP (the ports and flags; TCP options are skipped by the data offset).
 *
 * The same source compiles into the BPF programs (clang -target bpf, direct packet
 * access: `data`/`end` are the packet pointers) and into userspace (gcc, `data`/`end`
 * delimit a buffer): the userspace build is the reference the kernel is compared with.
 * Every read goes through kr_at(), which checks the bytes against `end` first.
 *
 * kr_parse() fills struct kr_pkt with offsets from the start of the frame and returns
 * enum kr_parse_rc.  Lengths that lie are errors: an IPv4 total length below the header
 * length or beyond the frame, an IPv6 payload length beyond the frame (or 0: jumbograms
 * are not supported), a UDP length below 8 or beyond the IP packet, a TCP data offset below
 * 5 words or beyond the IP packet.  Ethernet padding
 * after the IP packet is allowed.
 */
#ifndef KR_PARSE_H
#define KR_PARSE_H

#ifndef __bpf__
#include <linux/types.h>
#include <stddef.h>
#endif
#include "kr_datapath_kern_user.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Byte order without libc/bpf_endian in the shared code: load big-endian bytes. */
#define KR_BE16(p) ((__u16)(((__u16)((const __u8 *)(p))[0] << 8) | ((const __u8 *)(p))[1]))

enum kr_ether {
	KR_ETH_HLEN = 14,
	KR_ETH_P_IP = 0x0800,
	KR_ETH_P_IPV6 = 0x86DD,
	KR_ETH_P_8021Q = 0x8100,
	KR_ETH_P_8021AD = 0x88A8,
	KR_VLAN_HLEN = 4,
};

enum kr_ipproto {
	KR_IPPROTO_HOPOPTS = 0,
	KR_IPPROTO_IPIP = 4,
	KR_IPPROTO_TCP = 6,
	KR_IPPROTO_UDP = 17,
	KR_IPPROTO_IPV6 = 41,
	KR_IPPROTO_ROUTING = 43,
	KR_IPPROTO_FRAGMENT = 44,
	KR_IPPROTO_DSTOPTS = 60,
};

/* Index into a power-of-2 buffer (or an offset forced into a range).  In BPF the compiler must not drop the mask because it
 * "knows" the bound from an earlier test on another copy of the value: the verifier
 * needs the mask on the register it adds to the pointer. */
#ifdef __bpf__
static __always_inline __u32 kr_idx(__u32 x, __u32 mask)
{
	asm volatile("" : "+r"(x));
	return x & mask;
}
#else
static inline __u32 kr_idx(__u32 x, __u32 mask)
{
	return x & mask;
}
#endif
/* Largest header offset we follow (keeps every offset bounded for the verifier). */
#define KR_MAX_HDR_OFF	0x4000u
#define KR_IPV6_HLEN	40
#define KR_UDP_HLEN	8
#define KR_TCP_HLEN	20

/* TCP flags (kr_pkt.tcp_flags: the header's byte 13) */
#define KR_TCP_FIN	0x01
#define KR_TCP_SYN	0x02
#define KR_TCP_RST	0x04
#define KR_TCP_ACK	0x10

enum kr_parse_rc {
	KR_PARSE_OK = 0,	/* UDP or TCP: kr_pkt complete */
	KR_PARSE_NOT_OURS = 1,	/* not IPv4/IPv6, not UDP/TCP, 3+ VLAN tags: pass untouched */
	KR_PARSE_FRAGMENT = 2,	/* non-first fragment: pass untouched */
	KR_PARSE_ERROR = 3,	/* malformed or truncated header: pass untouched */
};

struct kr_pkt {
	__u32 l3_off;		/* IP header */
	__u32 l3_len;		/* IP packet length (IPv4 total length, IPv6 40 + payload) */
	__u32 l4_off;		/* UDP / TCP header */
	__u32 pl_off;		/* UDP / TCP payload */
	__u32 pl_len;		/* UDP payload length (UDP length - 8); TCP: up to the IP end */
	__u8 family;		/* 4 or 6 */
	__u8 proto;		/* L4 protocol (IPPROTO_UDP or IPPROTO_TCP when OK) */
	__u8 nvlan;		/* VLAN tags seen (0..2) */
	__u8 tcp_flags;		/* TCP: KR_TCP_* (0 for UDP) */
	__u8 src[16];		/* source address (IPv4: first 4 bytes) */
	__u8 dst[16];		/* destination address */
	__u8 sport[2];		/* source port, network order bytes */
	__u8 dport[2];		/* destination port, network order bytes */
};
_Static_assert(sizeof(struct kr_pkt) == 60, "kr_pkt layout");

struct kr_cur {
	const __u8 *data;	/* first byte of the frame */
	const __u8 *end;	/* one past the last byte */
};

/* Pointer to `len` bytes at `off`, or NULL when they are not all in the frame. */
static __always_inline const __u8 *kr_at(const struct kr_cur *c, __u32 off, __u32 len)
{
	const __u8 *p;

	if (off > KR_MAX_HDR_OFF)
		return NULL;
	p = c->data + off;
	if (p + len > c->end)
		return NULL;
	return p;
}

/* Length of the frame.  "len bytes from off fit" is off + len <= kr_frame_len() (off <=
 * KR_MAX_HDR_OFF and len <= 0xffff + 40: no overflow); with a select on off < length,
 * clang spilled the comparison's operands (issue 14). */
static __always_inline __u32 kr_frame_len(const struct kr_cur *c)
{
	return (__u32)(c->end - c->data);
}

/* Copy 4 bytes / 2 bytes from the frame into kr_pkt: in BPF one load and one store
 * (unaligned packet loads are allowed unless the program is loaded with strict alignment,
 * or on architectures without efficient unaligned access), where byte copies cost 8 / 4
 * instructions a field and a later wider read of the field stalled on the byte stores. */
static __always_inline void kr_copy4(__u8 *d, const __u8 *s)
{
#ifdef __bpf__
	*(__u32 *)d = *(const __u32 *)s;
#else
	__builtin_memcpy(d, s, 4);
#endif
}

static __always_inline void kr_copy2(__u8 *d, const __u8 *s)
{
#ifdef __bpf__
	*(__u16 *)d = *(const __u16 *)s;
#else
	__builtin_memcpy(d, s, 2);
#endif
}

static __always_inline void kr_copy16(__u8 *d, const __u8 *s)
{
	int i;

	for (i = 0; i < 16; i += 4)
		kr_copy4(d + i, s + i);
}

/* Ethernet + up to KR_MAX_VLANS tags: *off = L3 offset, *proto = its ethertype. */
static __always_inline int kr_parse_eth(const struct kr_cur *c, struct kr_pkt *pkt,
					__u32 *off, __u16 *proto)
{
	const __u8 *p = kr_at(c, 0, KR_ETH_HLEN);
	__u32 o = KR_ETH_HLEN;
	int i;

	if (!p)
		return KR_PARSE_ERROR;
	*proto = KR_BE16(p + 12);
	for (i = 0; i < KR_MAX_VLANS; i++) {
		if (*proto != KR_ETH_P_8021Q && *proto != KR_ETH_P_8021AD)
			break;
		p = kr_at(c, o, KR_VLAN_HLEN);
		if (!p)
			return KR_PARSE_ERROR;
		*proto = KR_BE16(p + 2);
		o += KR_VLAN_HLEN;
		pkt->nvlan++;
	}
	if (*proto == KR_ETH_P_8021Q || *proto == KR_ETH_P_8021AD)
		return KR_PARSE_NOT_OURS;	/* a third tag: not a frame we route */
	*off = o;
	return KR_PARSE_OK;
}

/* IPv4 at pkt->l3_off: any ihl >= 5 (options skipped), total length checked. */
static __always_inline int kr_parse_ipv4(const struct kr_cur *c, struct kr_pkt *pkt)
{
	const __u8 *ip = kr_at(c, pkt->l3_off, 20);
	__u32 ihl, tot, frag;

	if (!ip)
		return KR_PARSE_ERROR;
	ihl = (__u32)(ip[0] & 0x0f) * 4;
	tot = KR_BE16(ip + 2);
	if ((ip[0] >> 4) != 4 || ihl < 20 || tot < ihl || pkt->l3_off + tot > kr_frame_len(c))
		return KR_PARSE_ERROR;
	frag = KR_BE16(ip + 6);
	if (frag & 0x1fff)
		return KR_PARSE_FRAGMENT;
	pkt->family = 4;
	pkt->proto = ip[9];
	pkt->l3_len = tot;
	pkt->l4_off = pkt->l3_off + ihl;
	kr_copy4(pkt->src, ip + 12);
	kr_copy4(pkt->dst, ip + 16);
	return KR_PARSE_OK;
}

/* One IPv6 extension header at *off (type nh): advances *off, sets *nh to the next. */
static __always_inline int kr_ipv6_ext(const struct kr_cur *c, __u32 *off, __u8 *nh)
{
	const __u8 *h = kr_at(c, *off, 8);

	if (!h)
		return KR_PARSE_ERROR;
	if (*nh == KR_IPPROTO_FRAGMENT) {
		if (KR_BE16(h + 2) & 0xfff8)
			return KR_PARSE_FRAGMENT;	/* non-first fragment */
		*off += 8;
	} else {
		*off += ((__u32)h[1] + 1) * 8;
	}
	*nh = h[0];
	return KR_PARSE_OK;
}

static __always_inline int kr_is_ipv6_ext(__u8 nh)
{
	return nh == KR_IPPROTO_HOPOPTS || nh == KR_IPPROTO_ROUTING ||
	       nh == KR_IPPROTO_DSTOPTS || nh == KR_IPPROTO_FRAGMENT;
}

/* IPv6 at pkt->l3_off with at most KR_MAX_IPV6_EXT extension headers. */
static __always_inline int kr_parse_ipv6(const struct kr_cur *c, struct kr_pkt *pkt)
{
	const __u8 *ip = kr_at(c, pkt->l3_off, KR_IPV6_HLEN);
	__u32 off, plen, end;
	__u8 nh;
	int i, rc;

	if (!ip)
		return KR_PARSE_ERROR;
	plen = KR_BE16(ip + 4);
	if ((ip[0] >> 4) != 6 || plen == 0 ||
	    pkt->l3_off + KR_IPV6_HLEN + plen > kr_frame_len(c))
		return KR_PARSE_ERROR;
	pkt->family = 6;
	pkt->l3_len = KR_IPV6_HLEN + plen;
	kr_copy16(pkt->src, ip + 8);
	kr_copy16(pkt->dst, ip + 24);
	nh = ip[6];
	off = pkt->l3_off + KR_IPV6_HLEN;
	end = pkt->l3_off + pkt->l3_len;
	for (i = 0; i < KR_MAX_IPV6_EXT; i++) {
		if (!kr_is_ipv6_ext(nh))
			break;
		/* a no-op (off <= KR_MAX_HDR_OFF here): gives every path the same range,
		 * so the verifier walks each step once, not once per path */
		if (off > KR_MAX_HDR_OFF)
			return KR_PARSE_ERROR;
		off = kr_idx(off, 2 * KR_MAX_HDR_OFF - 1);
		rc = kr_ipv6_ext(c, &off, &nh);
		if (rc != KR_PARSE_OK)
			return rc;
		if (off > end)
			return KR_PARSE_ERROR;
	}
	if (kr_is_ipv6_ext(nh))
		return KR_PARSE_ERROR;		/* more extension headers than we walk */
	pkt->proto = nh;
	pkt->l4_off = off;
	return KR_PARSE_OK;
}

/* UDP at pkt->l4_off, inside the IP packet. */
static __always_inline int kr_parse_udp(const struct kr_cur *c, struct kr_pkt *pkt)
{
	__u32 l3_end = pkt->l3_off + pkt->l3_len;
	const __u8 *u;
	__u32 ulen;

	if (pkt->l4_off + KR_UDP_HLEN > l3_end)
		return KR_PARSE_ERROR;
	u = kr_at(c, pkt->l4_off, KR_UDP_HLEN);
	if (!u)
		return KR_PARSE_ERROR;
	ulen = KR_BE16(u + 4);
	if (ulen < KR_UDP_HLEN || pkt->l4_off + ulen > l3_end)
		return KR_PARSE_ERROR;
	kr_copy2(pkt->sport, u);
	kr_copy2(pkt->dport, u + 2);
	pkt->pl_off = pkt->l4_off + KR_UDP_HLEN;
	pkt->pl_len = ulen - KR_UDP_HLEN;
	return KR_PARSE_OK;
}

/* TCP at pkt->l4_off, inside the IP packet: a data offset of 5..15 words that fits. */
static __always_inline int kr_parse_tcp(const struct kr_cur *c, struct kr_pkt *pkt)
{
	__u32 l3_end = pkt->l3_off + pkt->l3_len;
	const __u8 *t;
	__u32 doff;

	if (pkt->l4_off + KR_TCP_HLEN > l3_end)
		return KR_PARSE_ERROR;
	t = kr_at(c, pkt->l4_off, KR_TCP_HLEN);
	if (!t)
		return KR_PARSE_ERROR;
	doff = (__u32)(t[12] >> 4) * 4;
	if (doff < KR_TCP_HLEN || pkt->l4_off + doff > l3_end)
		return KR_PARSE_ERROR;
	kr_copy2(pkt->sport, t);
	kr_copy2(pkt->dport, t + 2);
	pkt->tcp_flags = t[13];
	pkt->pl_off = pkt->l4_off + doff;
	pkt->pl_len = l3_end - pkt->pl_off;
	return KR_PARSE_OK;
}

/* The header parse; with tcp false a TCP segment is checked (a malformed header is an
 * error either way) and then KR_PARSE_NOT_OURS (pkt->proto says so).  pkt must be zeroed
 * by the caller. */
static __always_inline int kr_parse_l4(const __u8 *data, const __u8 *end, struct kr_pkt *pkt,
				       const int tcp)
{
	struct kr_cur c = { .data = data, .end = end };
	__u16 proto = 0;
	__u32 off = 0;
	int rc;

	rc = kr_parse_eth(&c, pkt, &off, &proto);
	if (rc != KR_PARSE_OK)
		return rc;
	pkt->l3_off = off;
	if (proto == KR_ETH_P_IP)
		rc = kr_parse_ipv4(&c, pkt);
	else if (proto == KR_ETH_P_IPV6)
		rc = kr_parse_ipv6(&c, pkt);
	else
		return KR_PARSE_NOT_OURS;
	if (rc != KR_PARSE_OK)
		return rc;
	if (pkt->proto == KR_IPPROTO_UDP)
		return kr_parse_udp(&c, pkt);
	if (pkt->proto == KR_IPPROTO_TCP) {
		rc = kr_parse_tcp(&c, pkt);
		return tcp || rc != KR_PARSE_OK ? rc : KR_PARSE_NOT_OURS;
	}
	return KR_PARSE_NOT_OURS;
}

/* The whole header parse (UDP and TCP).  pkt must be zeroed by the caller. */
static __always_inline int kr_parse(const __u8 *data, const __u8 *end, struct kr_pkt *pkt)
{
	return kr_parse_l4(data, end, pkt, 1);
}

#endif /* KR_PARSE_H */
