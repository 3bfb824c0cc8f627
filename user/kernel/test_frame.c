// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Frames for BPF_PROG_TEST_RUN (test_frame.h). */
#include <string.h>
#include <arpa/inet.h>
#include "test_frame.h"

/* The IPv4 header checksum (RFC 1071). */
static uint16_t ip_csum(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)b[i] << 8 | b[i + 1];
	if (n & 1)
		s += (uint32_t)b[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return htons((uint16_t)~s);
}

size_t kr_test_frame_udp4(uint8_t *buf, uint32_t vip, uint16_t port, const void *payload,
			  size_t len)
{
	static const uint8_t dmac[ETH_ALEN] = { 2, 0, 0, 0, 0, 1 };
	static const uint8_t smac[ETH_ALEN] = { 2, 0, 0, 0, 0, 2 };
	struct ethhdr *eth = (struct ethhdr *)buf;
	struct iphdr *ip = (struct iphdr *)(eth + 1);
	struct udphdr *udp = (struct udphdr *)(ip + 1);

	memset(buf, 0, KR_TEST_FRAME_HDR);
	memcpy(eth->h_dest, dmac, ETH_ALEN);
	memcpy(eth->h_source, smac, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons((uint16_t)(sizeof(*ip) + sizeof(*udp) + len));
	ip->saddr = htonl(0xc6336401u);	/* 198.51.100.1 */
	ip->daddr = htonl(vip);
	ip->check = ip_csum(ip, sizeof(*ip));
	udp->source = htons(40000);
	udp->dest = htons(port);
	udp->len = htons((uint16_t)(sizeof(*udp) + len));
	memmove(udp + 1, payload, len);
	return KR_TEST_FRAME_HDR + len;
}
