// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Socket addresses: parsing (and its error messages), the IP text form against Rust's
 * Display (the expected strings are those of Rust's own std tests for Ipv6Addr Display,
 * plus the vectors' e_* forms), the v2 tie order, and CRC-32 against known values.
 */
#include <string.h>
#include "tap.h"
#include "addr.h"
#include "continuum.h"
#include "crc32.h"

static void fmt_case(const char *in, const char *want)
{
	struct kr_sockaddr a;
	struct kr_err err = { "" };
	char buf[KR_IP_STRLEN];

	if (kr_sockaddr_parse(in, &a, &err)) {
		CHECK(0, "parse %s (%s)", in, err.msg);
		return;
	}
	kr_ip_format(&a, buf);
	CHECK(!strcmp(buf, want), "Display(%s) = %s", in, want);
	if (strcmp(buf, want))
		DIAG("got '%s'", buf);
}

/* IPv6 from 8 groups, formatted. */
static void groups_case(const uint16_t g[8], const char *want)
{
	struct kr_sockaddr a = { .family = 6 };
	char buf[KR_IP_STRLEN];

	for (int i = 0; i < 8; i++) {
		a.ip[2 * i] = (uint8_t)(g[i] >> 8);
		a.ip[2 * i + 1] = (uint8_t)g[i];
	}
	kr_ip_format(&a, buf);
	CHECK(!strcmp(buf, want), "Display(groups) = %s", want);
	if (strcmp(buf, want))
		DIAG("got '%s'", buf);
}

static void rust_std_cases(void)
{
	/* library/core/tests/net/ip_addr.rs: ipv6_addr_to_string */
	groups_case((const uint16_t[8]){ 0, 0, 0, 0, 0, 0xffff, 0xc000, 0x280 }, "::ffff:192.0.2.128");
	groups_case((const uint16_t[8]){ 0, 0, 0, 0, 0, 0, 0xc000, 0x280 }, "::c000:280");
	groups_case((const uint16_t[8]){ 8, 9, 10, 11, 12, 13, 14, 15 }, "8:9:a:b:c:d:e:f");
	groups_case((const uint16_t[8]){ 0x1111, 0x2222, 0x3333, 0x4444, 0x5555, 0x6666, 0x7777,
					 0x8888 }, "1111:2222:3333:4444:5555:6666:7777:8888");
	groups_case((const uint16_t[8]){ 0xae, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304 },
		    "ae::ffff:102:304");
	groups_case((const uint16_t[8]){ 1, 2, 3, 4, 5, 6, 0, 8 }, "1:2:3:4:5:6:0:8");
	groups_case((const uint16_t[8]){ 0 }, "::");
	groups_case((const uint16_t[8]){ 0, 0, 0, 0, 0, 0, 0, 1 }, "::1");
	groups_case((const uint16_t[8]){ 1, 0, 0, 0, 0, 0, 0, 0 }, "1::");
	groups_case((const uint16_t[8]){ 1, 0, 0, 4, 0, 0, 0, 8 }, "1:0:0:4::8");
	groups_case((const uint16_t[8]){ 1, 0, 0, 4, 5, 0, 0, 8 }, "1::4:5:0:0:8");
}

static void vector_forms(void)
{
	/* tests/vectors/e_*: the ring digests there only match with these forms */
	fmt_case("[::1]:8080", "::1");
	fmt_case("[2001:db8::1]:443", "2001:db8::1");
	fmt_case("[2001:db8:0:0:1:0:0:1]:443", "2001:db8::1:0:0:1");
	fmt_case("[2001:db8:1:0:1:1:1:1]:443", "2001:db8:1:0:1:1:1:1");
	fmt_case("[::ffff:10.0.0.1]:80", "::ffff:10.0.0.1");
	fmt_case("[::10.0.0.1]:80", "::a00:1");
	fmt_case("[FE80::ABCD:0:0:0]:65535", "fe80::abcd:0:0:0");
	fmt_case("10.0.0.1:80", "10.0.0.1");
	fmt_case("192.168.1.1:1", "192.168.1.1");
	fmt_case("[1:2:3:4:5:6:7:8]:0", "1:2:3:4:5:6:7:8");
	fmt_case("0.0.0.0:0", "0.0.0.0");
	fmt_case("255.255.255.255:65535", "255.255.255.255");
	fmt_case("[0:0:0:0:0:fffe:1:2]:1", "::fffe:1:2");
	fmt_case("[0:0:1::]:1", "0:0:1::");
}

static void socket_format(void)
{
	struct kr_sockaddr a;
	char buf[KR_SOCKADDR_STRLEN], base[KR_SOCKADDR_STRLEN];
	size_t n;

	kr_sockaddr_parse("[2001:DB8::1]:443", &a, NULL);
	kr_sockaddr_format(&a, buf);
	CHECK(!strcmp(buf, "[2001:db8::1]:443"), "SocketAddr Display [2001:db8::1]:443 (%s)", buf);
	CHECK(a.family == 6 && a.port == 443, "family 6, port 443");
	kr_sockaddr_parse("10.1.2.3:080", &a, NULL);
	kr_sockaddr_format(&a, buf);
	CHECK(!strcmp(buf, "10.1.2.3:80"), "SocketAddr Display 10.1.2.3:80 (%s)", buf);
	n = kr_ring_base_string(&a, base);
	CHECK(n == 11 && !memcmp(base, "10.1.2.3\0" "80", 11), "base string ip NUL port");
}

static void parse_error(const char *in, const char *want)
{
	struct kr_sockaddr a;
	struct kr_err err = { "" };
	int r = kr_sockaddr_parse(in, &a, &err);

	CHECK(r == -1 && strstr(err.msg, want), "parse '%s' fails: ...%s...", in, want);
	if (r != -1 || !strstr(err.msg, want))
		DIAG("got %d '%s'", r, err.msg);
}

static void parse_errors(void)
{
	parse_error("", "empty");
	parse_error("10.0.0.1", "missing ':<port>'");
	parse_error("10.0.0.1:", "missing port");
	parse_error("10.0.0.256:80", "'10.0.0.256' is not an IPv4 address");
	parse_error("10.0.0:80", "'10.0.0' is not an IPv4 address");
	parse_error("010.0.0.1:80", "'010.0.0.1' is not an IPv4 address");
	parse_error("host:80", "'host' is not an IPv4 address");
	parse_error("10.0.0.1:65536", "bad port '65536'");
	parse_error("10.0.0.1:-1", "bad port '-1'");
	parse_error("10.0.0.1:8o", "bad port '8o'");
	parse_error("10.0.0.1:99999999999", "bad port");
	parse_error("2001:db8::1:80", "IPv6 addresses need brackets");
	parse_error("[2001:db8::1:80", "missing ']'");
	parse_error("[2001:db8::1]", "missing ':<port>' after ']'");
	parse_error("[2001:db8::1]80", "missing ':<port>' after ']'");
	parse_error("[2001:db8::g]:80", "'2001:db8::g' is not an IPv6 address");
	parse_error("[1:2:3:4:5:6:7:8:9]:80", "is not an IPv6 address");
	parse_error("[10.0.0.1]:80", "'10.0.0.1' is not an IPv6 address");
}

static int cmp_s(const char *x, const char *y)
{
	struct kr_sockaddr a, b;

	kr_sockaddr_parse(x, &a, NULL);
	kr_sockaddr_parse(y, &b, NULL);
	return kr_sockaddr_cmp(&a, &b);
}

static void order(void)
{
	CHECK(cmp_s("255.255.255.255:65535", "[::]:0") < 0, "every IPv4 before every IPv6");
	CHECK(cmp_s("[::]:0", "1.0.0.0:0") > 0, "IPv6 after IPv4");
	CHECK(cmp_s("10.100.0.147:8080", "10.100.47.118:8080") < 0, "IPv4 by octets");
	CHECK(cmp_s("10.0.0.2:1", "10.0.0.10:1") < 0, "octets numerically, not as text");
	CHECK(cmp_s("10.0.0.1:9", "10.0.0.1:10") < 0, "then by port");
	CHECK(cmp_s("10.0.0.2:1", "10.0.0.1:65535") > 0, "octets before port");
	CHECK(cmp_s("[::1]:80", "[::1]:80") == 0, "equal");
	CHECK(cmp_s("[2001:db8::1]:1", "[2001:db8::2]:0") < 0, "IPv6 by octets");
	CHECK(cmp_s("[fe80::1]:1", "[2001:db8::1]:9") > 0, "IPv6 by octets (first group)");
}

static void crc(void)
{
	uint8_t buf[1000];
	uint32_t whole, part, bitwise;

	CHECK_EQ_U(kr_crc32("123456789", 9), 0xcbf43926, "crc32('123456789') = cbf43926");
	CHECK_EQ_U(kr_crc32("", 0), 0, "crc32('') = 0");
	CHECK_EQ_U(kr_crc32("key-0", 5), 0x79eb8fec, "crc32('key-0') = 79eb8fec (vectors)");
	CHECK_EQ_U(kr_crc32("The quick brown fox jumps over the lazy dog", 43), 0x414fa339,
		   "crc32(quick brown fox) = 414fa339");
	for (int i = 0; i < 1000; i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	for (size_t len = 0; len < 300; len += 7) {
		for (size_t cut = 0; cut <= len; cut += 5) {
			whole = kr_crc32(buf + 1, len);
			part = kr_crc32_update(kr_crc32(buf + 1, cut), buf + 1 + cut, len - cut);
			if (whole != part)
				break;
		}
		/* bitwise reference */
		bitwise = 0xffffffff;
		for (size_t i = 0; i < len; i++) {
			bitwise ^= buf[1 + i];
			for (int k = 0; k < 8; k++)
				bitwise = (bitwise >> 1) ^ (0xEDB88320u & -(bitwise & 1));
		}
		if (~bitwise != whole || whole != part) {
			CHECK(0, "crc32 len %zu: slice-by-8 = bitwise = chained", len);
			return;
		}
	}
	CHECK(1, "crc32 slice-by-8 = bitwise reference = chained updates (lengths 0..300)");
	whole = kr_crc32("abc\0" "80\x01\x02\x03\x04", 10);
	part = kr_crc32_le32(kr_crc32("abc\0" "80", 6), 0x04030201);
	CHECK_EQ_U(part, whole, "kr_crc32_le32 = update with 4 little-endian bytes");
	whole = kr_crc32("abc\0" "80\x01\x01\0\0\0\0", 12);
	CHECK_EQ_U(kr_crc32_le32x2(kr_crc32("abc\0", 4), 0x01013038, 0), whole,
		   "kr_crc32_le32x2 = update with 8 little-endian bytes");
}

int main(void)
{
	rust_std_cases();
	vector_forms();
	socket_format();
	parse_errors();
	order();
	crc();
	return tap_done();
}
