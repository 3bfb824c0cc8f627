/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Socket addresses as pingora-ketama sees them (Rust's SocketAddr):
 *   parse     "1.2.3.4:80", "[2001:db8::1]:443"
 *   format    the IP exactly as Rust's Display prints it (it is hashed into every point):
 *             IPv6 per RFC 5952 (lowercase, longest run of >= 2 zero groups compressed,
 *             first run wins ties), "::ffff:a.b.c.d" for IPv4-mapped, IPv4-compatible
 *             addresses in hex ("::a00:1")
 *   compare   the v2 tie rule: every IPv4 before every IPv6; then (octets, port)
 */
#ifndef KR_ADDR_H
#define KR_ADDR_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"

struct kr_sockaddr {
	uint8_t family;		/* 4 or 6 */
	uint8_t pad;
	uint16_t port;		/* host order */
	uint8_t ip[16];		/* network order; IPv4 in ip[0..3], the rest zero */
};
_Static_assert(sizeof(struct kr_sockaddr) == 20, "kr_sockaddr layout");

#define KR_IP_STRLEN		46	/* longest IP text + NUL */
#define KR_SOCKADDR_STRLEN	56	/* "[" ip "]:" port + NUL */

/* Parses "<IPv4>:<port>" or "[<IPv6>]:<port>". 0, or -1 with err set. */
int kr_sockaddr_parse(const char *s, struct kr_sockaddr *a, struct kr_err *err);
/* The IP as Rust's Display prints it; returns its length. buf >= KR_IP_STRLEN. */
size_t kr_ip_format(const struct kr_sockaddr *a, char *buf);
/* "1.2.3.4:80" / "[::1]:80" (Rust's SocketAddr Display); buf >= KR_SOCKADDR_STRLEN. */
size_t kr_sockaddr_format(const struct kr_sockaddr *a, char *buf);
/* <0, 0, >0: IPv4 before IPv6, then octets, then port. */
int kr_sockaddr_cmp(const struct kr_sockaddr *a, const struct kr_sockaddr *b);

/* Why IP a can be no unicast host (a backend, a VIP, a tunnel source), or NULL:
 * "the unspecified address", "a multicast address", "the broadcast address",
 * "an IPv4-mapped IPv6 address". */
const char *kr_ip_not_unicast(const struct kr_sockaddr *a);
/* An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as the IPv4 address it maps (into v4);
 * 1 if it was one, else 0 (v4 = a). */
int kr_ip_unmap(const struct kr_sockaddr *a, struct kr_sockaddr *v4);

#endif
