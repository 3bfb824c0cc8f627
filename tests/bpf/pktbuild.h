/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A small packet builder for the data path tests: describe the packet, get the bytes.
 *   struct pkt_spec s = PKT_V4("10.0.0.1", 1234, "192.0.2.1", 53);
 *   s.nvlan = 2; s.payload = q; s.plen = n;
 *   size_t len = pkt_build(&s, buf);
 * Lengths (IPv4 total, IPv6 payload, UDP) and checksums (IPv4 header, UDP, TCP) are filled
 * in unless a lie_* field asks for a wrong one.  proto 6 builds a TCP header (tcp_opts
 * option bytes, tcp_flags, data offset doff_override when set) before the payload.
 */
#ifndef KR_PKTBUILD_H
#define KR_PKTBUILD_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

/* Program return values as the tests compare them (the kernel's enums, without vmlinux.h). */
#define XDP_DROP_	1
#define XDP_PASS_	2
#define XDP_TX_		3
#define XDP_REDIRECT_	4
#define TC_OK_		0
#define TC_SHOT_	2
#define TC_REDIRECT_	7

#define PKT_MAX 4096

struct pkt_spec {
	int family;			/* 4 or 6 */
	const char *src, *dst;		/* addresses */
	uint16_t sport, dport;
	uint8_t proto;			/* 0 = UDP; 6 = TCP */
	uint8_t tcp_flags;		/* TCP: the flags byte (0x02 SYN, 0x10 ACK, ...) */
	int tcp_opts;			/* TCP option bytes (multiple of 4, <= 40) */
	int doff_override;		/* TCP: write this data offset (words) instead (lies) */
	int nvlan;			/* 0..3 tags; tpid[i] (0 = 802.1Q, then 802.1ad outer) */
	uint16_t tpid[3];
	uint16_t ethertype;		/* 0 = by family */
	int ip_opts;			/* IPv4 option bytes (multiple of 4, <= 40) */
	int ihl_override;		/* IPv4: write this ihl instead (lies) */
	int lie_tot;			/* added to IPv4 total length / IPv6 payload length */
	int lie_udp;			/* added to the UDP length */
	int frag;			/* 0 none; 1 first fragment (MF); 2 non-first fragment */
	uint8_t ext[10];		/* IPv6 extension headers in order (0, 43, 60, 44) */
	int next;
	const uint8_t *payload;
	size_t plen;
	int pad_to;			/* Ethernet padding up to this frame length */
};

#define PKT_V4(s, sp, d, dp) ((struct pkt_spec){ .family = 4, .src = s, .sport = sp, .dst = d, .dport = dp })
#define PKT_V6(s, sp, d, dp) ((struct pkt_spec){ .family = 6, .src = s, .sport = sp, .dst = d, .dport = dp })

static const uint8_t pkt_dmac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0xaa };	/* the router */
static const uint8_t pkt_smac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0xcc };	/* the client */

static inline void pkt_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* Ones'-complement sum of 16-bit big-endian words. */
static inline uint32_t pkt_sum(const uint8_t *p, size_t n, uint32_t sum)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

static inline uint16_t pkt_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Builds the frame into out (PKT_MAX bytes); returns its length. */
static inline size_t pkt_build(const struct pkt_spec *s, uint8_t *out)
{
	uint8_t src[16] = { 0 }, dst[16] = { 0 };
	int af = s->family == 6 ? AF_INET6 : AF_INET, alen = s->family == 6 ? 16 : 4;
	uint8_t proto = s->proto ? s->proto : 17;
	size_t o = 0, l3, l4, hlen = proto == 6 ? 20 + s->tcp_opts : 8, ulen = hlen + s->plen;
	uint32_t sum;

	inet_pton(af, s->src, src);
	inet_pton(af, s->dst, dst);
	memset(out, 0, PKT_MAX);
	memcpy(out, pkt_dmac, 6);
	memcpy(out + 6, pkt_smac, 6);
	o = 12;
	for (int i = 0; i < s->nvlan; i++) {
		uint16_t tpid = s->tpid[i] ? s->tpid[i] : (i == 0 && s->nvlan > 1 ? 0x88a8 : 0x8100);

		pkt_put16(out + o, tpid);
		pkt_put16(out + o + 2, 100 + i);	/* VLAN id */
		o += 4;
	}
	pkt_put16(out + o, s->ethertype ? s->ethertype : s->family == 6 ? 0x86dd : 0x0800);
	o += 2;
	l3 = o;
	if (s->family == 4) {
		int hl = 20 + s->ip_opts;

		out[o] = 0x40 | (s->ihl_override ? s->ihl_override : hl / 4);
		pkt_put16(out + o + 2, (uint16_t)(hl + ulen + s->lie_tot));
		pkt_put16(out + o + 4, 0x1234);
		if (s->frag == 1)
			pkt_put16(out + o + 6, 0x2000);		/* MF, offset 0 */
		else if (s->frag == 2)
			pkt_put16(out + o + 6, 0x0010);		/* offset 16 * 8 */
		out[o + 8] = 64;
		out[o + 9] = proto;
		memcpy(out + o + 12, src, 4);
		memcpy(out + o + 16, dst, 4);
		for (int i = 0; i < s->ip_opts; i++)
			out[o + 20 + i] = 1;			/* NOP options */
		pkt_put16(out + o + 10, pkt_fold(pkt_sum(out + o, hl, 0)));
		o += hl;
	} else {
		size_t ext_len = 0;
		uint8_t nh;

		for (int i = 0; i < s->next; i++)
			ext_len += s->ext[i] == 44 ? 8 : 16;
		out[o] = 0x60;
		pkt_put16(out + o + 4, (uint16_t)(ext_len + ulen + s->lie_tot));
		out[o + 6] = s->next ? s->ext[0] : proto;
		out[o + 7] = 64;
		memcpy(out + o + 8, src, 16);
		memcpy(out + o + 24, dst, 16);
		o += 40;
		for (int i = 0; i < s->next; i++) {
			nh = i + 1 < s->next ? s->ext[i + 1] : proto;
			out[o] = nh;
			if (s->ext[i] == 44) {
				pkt_put16(out + o + 2, s->frag == 2 ? (16 << 3) : 1);	/* M */
				out[o + 7] = 0x42;		/* identification */
				o += 8;
			} else {
				out[o + 1] = 1;			/* 16 bytes */
				out[o + 2] = 1;			/* PadN option filling it */
				out[o + 3] = 12;
				o += 16;
			}
		}
	}
	l4 = o;
	pkt_put16(out + o, s->sport);
	pkt_put16(out + o + 2, s->dport);
	if (proto == 6) {
		pkt_put16(out + o + 4, 0x1000);			/* sequence number */
		pkt_put16(out + o + 10, 0x2000);		/* acknowledgment */
		out[o + 12] = (uint8_t)((s->doff_override ? (size_t)s->doff_override : hlen / 4) << 4);
		out[o + 13] = s->tcp_flags;
		pkt_put16(out + o + 14, 65535);			/* window */
		for (int i = 0; i < s->tcp_opts; i++)
			out[o + 20 + i] = 1;			/* NOP options */
	} else {
		pkt_put16(out + o + 4, (uint16_t)(ulen + s->lie_udp));
	}
	if (s->plen)
		memcpy(out + o + hlen, s->payload, s->plen);
	o += ulen;
	/* UDP / TCP checksum over the pseudo header */
	sum = pkt_sum(src, alen, 0);
	sum = pkt_sum(dst, alen, sum);
	sum += proto + ulen;
	sum = pkt_sum(out + l4, ulen, sum);
	if (proto == 6)
		pkt_put16(out + l4 + 16, pkt_fold(sum));
	else
		pkt_put16(out + l4 + 6, pkt_fold(sum) ? pkt_fold(sum) : 0xffff);
	(void)l3;
	if (s->pad_to && (size_t)s->pad_to > o)
		o = s->pad_to;
	return o;
}

/* Offset of the L3 header in a frame built from s. */
static inline size_t pkt_l3_off(const struct pkt_spec *s)
{
	return 14 + 4 * s->nvlan;
}

#endif
