// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Socket address parsing, Rust-exact text form, and the v2 tie order. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "addr.h"

#define ADDR_FORMS "expected <IPv4>:<port> or [<IPv6>]:<port>"

static int parse_port(const char *s, const char *p, uint16_t *port, struct kr_err *err)
{
	uint32_t v = 0;
	const char *q;

	if (!*p)
		return kr_errf(err, "bad address '%s': missing port after ':' (%s)", s, ADDR_FORMS);
	for (q = p; *q; q++) {
		if (*q < '0' || *q > '9')
			return kr_errf(err, "bad port '%s' in '%s': expected a number 0..65535",
				       p, s);
		v = v * 10 + (uint32_t)(*q - '0');
		if (v > 65535)
			return kr_errf(err, "bad port '%s' in '%s': expected a number 0..65535",
				       p, s);
	}
	*port = (uint16_t)v;
	return 0;
}

static int parse_v6(const char *s, struct kr_sockaddr *a, struct kr_err *err)
{
	const char *close = strchr(s, ']');
	char ip[64];
	size_t n;

	if (!close)
		return kr_errf(err, "bad address '%s': missing ']' (%s)", s, ADDR_FORMS);
	n = (size_t)(close - s - 1);
	if (n >= sizeof(ip))
		return kr_errf(err, "bad address '%s': '%.*s' is not an IPv6 address", s,
			       (int)n, s + 1);
	memcpy(ip, s + 1, n);
	ip[n] = 0;
	if (inet_pton(AF_INET6, ip, a->ip) != 1)
		return kr_errf(err, "bad address '%s': '%s' is not an IPv6 address", s, ip);
	if (close[1] != ':')
		return kr_errf(err, "bad address '%s': missing ':<port>' after ']' (%s)", s,
			       ADDR_FORMS);
	a->family = 6;
	return parse_port(s, close + 2, &a->port, err);
}

static int parse_v4(const char *s, struct kr_sockaddr *a, struct kr_err *err)
{
	const char *colon = strchr(s, ':');
	char ip[32];
	size_t n;

	if (!colon)
		return kr_errf(err, "bad address '%s': missing ':<port>' (%s)", s, ADDR_FORMS);
	if (strchr(colon + 1, ':'))
		return kr_errf(err, "bad address '%s': IPv6 addresses need brackets, "
			       "as in [2001:db8::1]:443 (%s)", s, ADDR_FORMS);
	n = (size_t)(colon - s);
	if (n >= sizeof(ip) || n == 0)
		return kr_errf(err, "bad address '%s': '%.*s' is not an IPv4 address (%s)", s,
			       (int)n, s, ADDR_FORMS);
	memcpy(ip, s, n);
	ip[n] = 0;
	if (inet_pton(AF_INET, ip, a->ip) != 1)
		return kr_errf(err, "bad address '%s': '%s' is not an IPv4 address (%s)", s, ip,
			       ADDR_FORMS);
	a->family = 4;
	return parse_port(s, colon + 1, &a->port, err);
}

int kr_sockaddr_parse(const char *s, struct kr_sockaddr *a, struct kr_err *err)
{
	memset(a, 0, sizeof(*a));
	if (!*s)
		return kr_errf(err, "bad address '': empty (%s)", ADDR_FORMS);
	if (s[0] == '[')
		return parse_v6(s, a, err);
	return parse_v4(s, a, err);
}

static size_t hex_groups(char *p, const uint16_t *g, int from, int to)
{
	size_t n = 0;

	for (int i = from; i < to; i++)
		n += (size_t)sprintf(p + n, i == from ? "%x" : ":%x", g[i]);
	return n;
}

size_t kr_ip_format(const struct kr_sockaddr *a, char *buf)
{
	int best = -1, best_len = 0, cur = -1, cur_len = 0;
	const uint8_t *ip = a->ip;
	uint16_t g[8];
	size_t n;

	if (a->family == 4)
		return (size_t)sprintf(buf, "%u.%u.%u.%u", ip[0], ip[1], ip[2], ip[3]);
	for (int i = 0; i < 8; i++)
		g[i] = (uint16_t)(ip[2 * i] << 8 | ip[2 * i + 1]);
	if (!g[0] && !g[1] && !g[2] && !g[3] && !g[4] && g[5] == 0xffff)
		return (size_t)sprintf(buf, "::ffff:%u.%u.%u.%u", ip[12], ip[13], ip[14], ip[15]);
	/* Longest run of zero groups; the first one wins ties (strictly longer replaces). */
	for (int i = 0; i < 8; i++) {
		if (g[i]) {
			cur_len = 0;
			continue;
		}
		if (!cur_len)
			cur = i;
		if (++cur_len > best_len) {
			best = cur;
			best_len = cur_len;
		}
	}
	if (best_len < 2)
		return hex_groups(buf, g, 0, 8);
	n = hex_groups(buf, g, 0, best);
	n += (size_t)sprintf(buf + n, "::");
	n += hex_groups(buf + n, g, best + best_len, 8);
	return n;
}

size_t kr_sockaddr_format(const struct kr_sockaddr *a, char *buf)
{
	char ip[KR_IP_STRLEN];

	kr_ip_format(a, ip);
	if (a->family == 4)
		return (size_t)sprintf(buf, "%s:%u", ip, a->port);
	return (size_t)sprintf(buf, "[%s]:%u", ip, a->port);
}

int kr_sockaddr_cmp(const struct kr_sockaddr *a, const struct kr_sockaddr *b)
{
	int c;

	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	c = memcmp(a->ip, b->ip, a->family == 4 ? 4 : 16);
	if (c)
		return c < 0 ? -1 : 1;
	return a->port < b->port ? -1 : a->port > b->port;
}

int kr_ip_unmap(const struct kr_sockaddr *a, struct kr_sockaddr *v4)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	*v4 = *a;
	if (a->family != 6 || memcmp(a->ip, mapped, 12))
		return 0;
	memset(v4->ip, 0, sizeof(v4->ip));
	memcpy(v4->ip, a->ip + 12, 4);
	v4->family = 4;
	return 1;
}

const char *kr_ip_not_unicast(const struct kr_sockaddr *a)
{
	static const uint8_t zero[16];
	struct kr_sockaddr v4;

	if (!memcmp(a->ip, zero, a->family == 4 ? 4 : 16))
		return "the unspecified address";
	if (a->family == 4) {
		if ((a->ip[0] & 0xf0) == 0xe0)
			return "a multicast address";
		if (a->ip[0] == 255 && a->ip[1] == 255 && a->ip[2] == 255 && a->ip[3] == 255)
			return "the broadcast address";
		return NULL;
	}
	if (a->ip[0] == 0xff)
		return "a multicast address";
	if (kr_ip_unmap(a, &v4))
		return "an IPv4-mapped IPv6 address";
	return NULL;
}
