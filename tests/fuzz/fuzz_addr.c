// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Socket-address parser (user/core/addr.c) fuzzer.
 *  - text -> kr_sockaddr_parse: never crashes; on success the Rust-Display form parses
 *    back to the same address, and formatting is a fixed point;
 *  - 20 raw bytes as an address (family 4/6): its text form parses back to itself (every
 *    IPv6 the formatter prints -- RFC 5952, ::ffff:a.b.c.d, IPv4-compatible in hex --
 *    must be accepted by the parser, or a ring built from a config would not round-trip).
 */
#include "fuzz.h"
#include "addr.h"

static void roundtrip(const struct kr_sockaddr *a)
{
	char t1[KR_SOCKADDR_STRLEN], t2[KR_SOCKADDR_STRLEN];
	struct kr_sockaddr b;
	struct kr_err err;
	size_t n1, n2;

	n1 = kr_sockaddr_format(a, t1);
	FUZZ_ASSERT(n1 < KR_SOCKADDR_STRLEN && n1 == strlen(t1), "length %zu", n1);
	FUZZ_ASSERT(kr_sockaddr_parse(t1, &b, &err) == 0, "'%s': %s", t1, err.msg);
	FUZZ_ASSERT(kr_sockaddr_cmp(a, &b) == 0 && b.family == a->family, "'%s' parses to another address", t1);
	n2 = kr_sockaddr_format(&b, t2);
	FUZZ_ASSERT(n1 == n2 && !strcmp(t1, t2), "'%s' vs '%s'", t1, t2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kr_sockaddr a;
	struct kr_err err;
	char *s;

	s = fuzz_cstr(data, size);
	err.msg[0] = 0;
	if (kr_sockaddr_parse(s, &a, &err) == 0) {
		FUZZ_ASSERT(a.family == 4 || a.family == 6, "family %u", a.family);
		roundtrip(&a);
	} else {
		FUZZ_ASSERT(err.msg[0] && memchr(err.msg, 0, sizeof(err.msg)), "no error message for '%s'", s);
	}
	free(s);

	if (size >= sizeof(a)) {
		memcpy(&a, data, sizeof(a));
		a.family = (a.family & 1) ? 6 : 4;
		a.pad = 0;
		if (a.family == 4)
			memset(a.ip + 4, 0, 12);
		roundtrip(&a);
	}
	return 0;
}
