// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Human key forms: the exact key bytes (include/kr_key.h "Key bytes") and every error. */
#include <string.h>
#include "tap.h"
#include "keyform.h"

static struct kr_err kerr;
static const char *const err = kerr.msg;

/* ok when TYPE ARG gives exactly the bytes of HEX ("-" = empty). */
static void expect(enum kr_key_type t, const struct kr_keyspec *spec, const char *arg,
		   const char *hex)
{
	struct kr_key k;
	char got[2 * KR_MAX_KEY_LEN + 1];
	int r = kr_keyform(t, spec, arg, &k, &kerr);

	if (r == 0)
		kr_key_hex(&k, got, sizeof(got));
	CHECK(r == 0 && !strcmp(got, hex), "%s '%s' -> %s", kr_key_type_name(t), arg, hex);
	if (r)
		DIAG("error: %s", err);
	else if (strcmp(got, hex))
		DIAG("got %s", got);
}

/* ok when TYPE ARG fails with a message containing WANT. */
static void expect_err(enum kr_key_type t, const struct kr_keyspec *spec, const char *arg,
		       const char *want)
{
	struct kr_key k;
	int r;

	kerr.msg[0] = 0;
	r = kr_keyform(t, spec, arg, &k, &kerr);
	CHECK(r == -1 && strstr(err, want), "%s '%.40s': error '%s'", kr_key_type_name(t), arg,
	      want);
	if (r != -1 || !strstr(err, want))
		DIAG("r=%d, message: %s", r, err);
}

static void test_dns(void)
{
	const char *www = "03777777076578616d706c6503636f6d00";
	char name[400];

	expect(KR_KEY_DNS, NULL, "www.example.com", www);
	expect(KR_KEY_DNS, NULL, "www.Example.COM.", www);
	expect(KR_KEY_DNS, NULL, "WWW.EXAMPLE.COM", www);
	expect(KR_KEY_DNS, NULL, ".", "00");
	expect(KR_KEY_DNS, NULL, "com", "03636f6d00");
	expect(KR_KEY_DNS, NULL, "a\\.b.c", "03612e620163" "00");
	expect(KR_KEY_DNS, NULL, "\\065\\066c", "0361626300");	/* \065 = 'A', lowercased */
	expect(KR_KEY_DNS, NULL, "_sip._udp.X", "045f736970045f7564700178" "00");
	expect(KR_KEY_DNS, NULL, "\xc3\x84.de", "02c384026465" "00");	/* non-ASCII kept */
	expect_err(KR_KEY_DNS, NULL, "", "empty");
	expect_err(KR_KEY_DNS, NULL, "a..b", "empty label at character 3");
	expect_err(KR_KEY_DNS, NULL, ".a", "empty label at character 1");
	expect_err(KR_KEY_DNS, NULL, "a.b..", "empty label");
	expect_err(KR_KEY_DNS, NULL, "a\\", "bad escape");
	expect_err(KR_KEY_DNS, NULL, "a\\256", "bad escape");
	/* 63-byte label ok, 64 not */
	memset(name, 'x', 63);
	strcpy(name + 63, ".com");
	{
		struct kr_key k;

		CHECK(kr_keyform_dns(name, &k, &kerr) == 0 && k.len == 69 &&
		      k.b[0] == 63 && k.b[64] == 3 && k.b[68] == 0, "63-byte label: 69 wire bytes");
	}
	memset(name, 'x', 64);
	strcpy(name + 64, ".com");
	expect_err(KR_KEY_DNS, NULL, name, "label at character 1 is longer than 63 bytes");
	/* 255 wire bytes ok: 3 x (1 + 63) + (1 + 61) + 1 */
	memset(name, 'a', sizeof(name));
	name[63] = name[127] = name[191] = '.';
	name[253] = 0;
	{
		struct kr_key k;

		CHECK(kr_keyform_dns(name, &k, &kerr) == 0 && k.len == 255 &&
		      k.b[254] == 0 && k.b[192] == 61, "253-character name: 255 wire bytes");
		if (k.len != 255)
			DIAG("len %u: %s", k.len, err);
	}
	name[253] = 'a';
	name[254] = 0;
	expect_err(KR_KEY_DNS, NULL, name, "longer than 255 bytes in wire format");
}

static void test_tuple(void)
{
	expect(KR_KEY_TUPLE, NULL, "10.0.0.1:53", "0a0000010035");
	expect(KR_KEY_TUPLE, NULL, "192.168.1.254:65535", "c0a801feffff");
	expect(KR_KEY_TUPLE, NULL, "[2001:db8::1]:443",
	       "20010db8000000000000000000000001" "01bb");
	expect(KR_KEY_TUPLE, NULL, "[::ffff:1.2.3.4]:80",
	       "00000000000000000000ffff01020304" "0050");
	expect(KR_KEY_TUPLE, NULL, "0.0.0.0:0", "000000000000");
	expect_err(KR_KEY_TUPLE, NULL, "10.0.0.1", "missing ':<port>'");
	expect_err(KR_KEY_TUPLE, NULL, "10.0.0.1:70000", "bad port");
	expect_err(KR_KEY_TUPLE, NULL, "2001:db8::1:53", "need brackets");
	expect_err(KR_KEY_TUPLE, NULL, "[2001:db8::1]", "missing ':<port>'");
	expect_err(KR_KEY_TUPLE, NULL, "example.com:53", "not an IPv4 address");
}

static void test_quic(void)
{
	expect(KR_KEY_QUIC, NULL, "0a0B0c0D", "0a0b0c0d");
	expect(KR_KEY_QUIC, NULL, "0x0102", "0102");
	expect(KR_KEY_QUIC, NULL, "01:02:03", "010203");
	expect_err(KR_KEY_QUIC, NULL, "", "empty (a zero-length destination connection ID gives no key");
	expect(KR_KEY_QUIC, NULL, "000102030405060708090a0b0c0d0e0f10111213",
	       "000102030405060708090a0b0c0d0e0f10111213");
	expect_err(KR_KEY_QUIC, NULL, "000102030405060708090a0b0c0d0e0f1011121314",
		   "more than 20 bytes");
	expect_err(KR_KEY_QUIC, NULL, "abc", "odd number of hex digits");
	expect_err(KR_KEY_QUIC, NULL, "ab-x1", "bad character at position 4");
	expect_err(KR_KEY_QUIC, NULL, "zz", "bad character at position 1");
}

static void test_payload(void)
{
	struct kr_keyspec fixed = { .type = KR_KEY_PAYLOAD, .offset = 2, .length = 3,
				    .delimiter = -1 };
	struct kr_keyspec delim = { .type = KR_KEY_PAYLOAD, .offset = 4, .delimiter = '|' };
	struct kr_keyspec tail = { .type = KR_KEY_PAYLOAD, .offset = 3, .delimiter = -1 };
	char big[300];

	expect(KR_KEY_PAYLOAD, NULL, "hello", "68656c6c6f");
	expect(KR_KEY_PAYLOAD, NULL, "", "-");
	expect(KR_KEY_PAYLOAD, NULL, "hex:00ff10", "00ff10");
	expect(KR_KEY_PAYLOAD, NULL, "hex:", "-");
	expect(KR_KEY_PAYLOAD, &fixed, "abcdefg", "636465");
	expect(KR_KEY_PAYLOAD, &fixed, "abcde", "636465");
	expect(KR_KEY_PAYLOAD, &delim, "hex:00000001" "73656e736f722d3137" "7c" "7878",
	       "73656e736f722d3137");
	expect(KR_KEY_PAYLOAD, &delim, "0001|x", "-");	/* delimiter right at the offset */
	expect(KR_KEY_PAYLOAD, &tail, "abcdef", "646566");
	expect(KR_KEY_PAYLOAD, &tail, "abc", "-");
	expect_err(KR_KEY_PAYLOAD, &fixed, "abcd", "the key needs 3");
	expect_err(KR_KEY_PAYLOAD, &delim, "0001nodelim", "no delimiter byte 0x7c after offset 4 (no key");
	expect_err(KR_KEY_PAYLOAD, &delim, "0001", "no delimiter");	/* offset = length */
	expect_err(KR_KEY_PAYLOAD, &tail, "ab", "ends before the key offset 3");
	expect_err(KR_KEY_PAYLOAD, NULL, "hex:0g", "bad character");
	expect_err(KR_KEY_PAYLOAD, NULL, "hex:123", "odd number of hex digits");
	memset(big, 'k', 255);
	big[255] = 0;
	{
		struct kr_key k;

		CHECK(kr_keyform_payload(big, NULL, &k, &kerr) == 0 && k.len == 255,
		      "255-byte payload key accepted");
	}
	big[255] = 'k';
	big[256] = 0;
	expect_err(KR_KEY_PAYLOAD, NULL, big, "256 bytes long: keys are at most 255 bytes");
	/* a long payload is fine when the service takes a short key out of it */
	expect(KR_KEY_PAYLOAD, &fixed, big, "6b6b6b");
	/* no delimiter: 252 bytes after the offset: no key; 295: too long */
	expect_err(KR_KEY_PAYLOAD, &delim, big, "no delimiter byte 0x7c after offset 4 (no key");
	memset(big, 'k', 299);
	big[299] = 0;
	expect_err(KR_KEY_PAYLOAD, &delim, big, "keys are at most 255 bytes");
	big[200] = '|';
	{
		struct kr_key k;

		CHECK(kr_keyform_payload(big, &delim, &k, &kerr) == 0 && k.len == 196,
		      "delimiter at byte 200, offset 4: 196-byte key");
	}
}

static void test_memcache(void)
{
	expect(KR_KEY_MEMCACHE, NULL, "user:42", "757365723a3432");
	expect(KR_KEY_MEMCACHE, NULL, "get foo bar", "666f6f");
	expect(KR_KEY_MEMCACHE, NULL, "set foo 0 0 5", "666f6f");
	expect(KR_KEY_MEMCACHE, NULL, "delete foo", "666f6f");
	expect(KR_KEY_MEMCACHE, NULL, "gat 100 foo", "666f6f");
	expect(KR_KEY_MEMCACHE, NULL, "mg foo v", "666f6f");
	expect_err(KR_KEY_MEMCACHE, NULL, "GET foo", "expected a command line");	/* case */
	expect(KR_KEY_MEMCACHE, NULL, "gets  foo\t", "666f6f");
	expect_err(KR_KEY_MEMCACHE, NULL, "", "empty");
	expect_err(KR_KEY_MEMCACHE, NULL, "frob foo", "expected a command line");
	expect(KR_KEY_MEMCACHE, NULL, "get", "676574");	/* "get" alone is a key */
	expect_err(KR_KEY_MEMCACHE, NULL, "get ", "no key after the command");
	expect_err(KR_KEY_MEMCACHE, NULL, "a\x01", "control characters");
}

static void test_types(void)
{
	enum kr_key_type t;

	CHECK(kr_key_type_parse("dns", &t) == 0 && t == KR_KEY_DNS, "type dns");
	CHECK(kr_key_type_parse("quic", &t) == 0 && t == KR_KEY_QUIC, "type quic");
	CHECK(kr_key_type_parse("DNS", &t) == -1, "type names are lowercase");
	CHECK(!strcmp(kr_key_type_name(KR_KEY_MEMCACHE), "memcache"), "type name memcache");
	expect_err(KR_KEY_NONE, NULL, "x", "unknown key type");
}

/* kr_key_print: the key bytes of a human form read back as a human reads them. */
static void print_case(enum kr_key_type t, const char *arg, const char *want)
{
	char buf[KR_KEY_PRINT_MAX];
	struct kr_key k;

	if (kr_keyform(t, NULL, arg, &k, &kerr)) {
		CHECK(0, "%s '%s': %s", kr_key_type_name(t), arg, err);
		return;
	}
	kr_key_print(t, k.b, k.len, buf, sizeof(buf));
	CHECK(!strcmp(buf, want), "print %s '%s' -> '%s'", kr_key_type_name(t), arg, want);
	if (strcmp(buf, want))
		DIAG("got '%s'", buf);
}

static void test_print(void)
{
	static const uint8_t bad_dns[] = { 5, 'a', 'b' };	/* label past the end */
	static const uint8_t odd[] = { 3, 'a', '.', 0xff, 0 };
	char buf[KR_KEY_PRINT_MAX];

	print_case(KR_KEY_DNS, "www.Example.COM", "www.example.com.");
	print_case(KR_KEY_DNS, ".", ".");
	print_case(KR_KEY_TUPLE, "10.0.0.1:5353", "10.0.0.1:5353");
	print_case(KR_KEY_TUPLE, "[2001:db8::1]:443", "[2001:db8::1]:443");
	print_case(KR_KEY_MEMCACHE, "get user:42", "user:42");
	print_case(KR_KEY_PAYLOAD, "hex:61005c62", "a\\x00\\\\b");
	print_case(KR_KEY_QUIC, "0a0b0c0d", "0a0b0c0d");
	CHECK(!strcmp(kr_key_print(KR_KEY_DNS, odd, sizeof(odd), buf, sizeof(buf)),
		      "a\\046\\255."), "print dns: a dot and a byte 255 in a label as \\DDD");
	CHECK(!strcmp(kr_key_print(KR_KEY_DNS, bad_dns, sizeof(bad_dns), buf, sizeof(buf)),
		      "056162"), "print dns: malformed wire bytes as hex");
	CHECK(!strcmp(kr_key_print(KR_KEY_PAYLOAD, odd, 0, buf, sizeof(buf)), "-"),
	      "print: the empty key is '-'");
}

int main(void)
{
	test_dns();
	test_tuple();
	test_quic();
	test_payload();
	test_memcache();
	test_types();
	test_print();
	return tap_done();
}
