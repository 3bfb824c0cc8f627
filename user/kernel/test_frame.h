/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The frames the --via-kernel commands run through BPF_PROG_TEST_RUN. */
#ifndef KR_TEST_FRAME_H
#define KR_TEST_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>

#define KR_TEST_FRAME_HDR	(ETH_HLEN + sizeof(struct iphdr) + sizeof(struct udphdr))

/* Ethernet / IPv4 / UDP from 198.51.100.1:40000 to vip:port (host order) carrying
 * payload[0..len); buf holds KR_TEST_FRAME_HDR + len bytes.  Returns the frame length. */
size_t kr_test_frame_udp4(uint8_t *buf, uint32_t vip, uint16_t port, const void *payload,
			  size_t len);

#endif
