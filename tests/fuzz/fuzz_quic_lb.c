// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * QUIC-LB codec (include/kr_quic_lb.h) and server configuration strings
 * (include/quic_lb_server.h) fuzzer.
 * Input: [what][...]; what & 1 = 0: the codec:
 *   [sid_len][nonce_len][su_len][keyed][cr][cid_len][key 16][cid / plaintext octets...]
 *  - kr_qlb_conf_init accepts exactly sid 1..15, nonce 4..18, sid + nonce + su <= 19;
 *  - kr_qlb_decode of any CID octets and length: OK exactly when 1 + sid + nonce <= length
 *    <= 20; when every pass ran (not the 3-pass four-pass decode), encoding the decoded
 *    plaintext again under the CID's rotation gives back the CID's octets (the cipher is a
 *    permutation), server-use octets included;
 *  - encode then decode of the input octets as plaintext gives back the server ID; the
 *    first octet is (rotation << 5) | (length - 1).
 * what & 1 = 1: the rest is a configuration string for quic_lb_server_parse: failure = a
 * bounded, non-empty message; success = CIDs of at most 20 octets whose server ID decodes.
 */
#include <stdbool.h>
#include "fuzz.h"
/* The codec's functions are forced inline (the BPF program needs that); here ASan and
 * UBSan over its fully inlined, unrolled AES and four-pass rounds took clang-14 two
 * minutes, most of the fuzzers' build and of `make test`.  Plain inline: the compiler
 * chooses, the code is the same, the build takes two seconds. */
#undef __always_inline
#define __always_inline inline
#include "kr_quic_lb.h"
#include "quic_lb_server.h"

static void codec(struct fuzz_in *in)
{
	uint32_t sl = fuzz_u8(in) % 17, nl = fuzz_u8(in) % 20, su = fuzz_u8(in) % 5;
	uint32_t keyed = fuzz_u8(in) & 1, cr = fuzz_u8(in) % 7, cid_len = fuzz_u8(in) % 25;
	uint8_t key[16] = { 0 }, bytes[32] = { 0 };
	struct kr_qlb_conf c;
	struct kr_qlb_work w, e;
	bool valid;
	int rc;

	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)fuzz_u8(in);
	for (int i = 0; i < 32; i++)
		bytes[i] = (uint8_t)fuzz_u8(in);
	valid = sl >= 1 && sl <= 15 && nl >= 4 && nl <= 18 && sl + nl + su <= 19;
	rc = kr_qlb_conf_init(&c, sl, nl, su, keyed ? key : NULL);
	FUZZ_ASSERT((rc == 0) == valid, "conf_init %d for %u + %u + %u", rc, sl, nl, su);
	if (!valid)
		return;

	/* decode whatever octets */
	memset(&w, 0, sizeof(w));
	memcpy(w.cid, bytes, 32);
	rc = kr_qlb_decode(&c, &w, cid_len);
	FUZZ_ASSERT((rc == KR_QLB_OK) == (cid_len >= 1 + sl + nl && cid_len <= 20),
		    "decode rc %d for a CID of %u (needs %u)", rc, cid_len, 1 + sl + nl);
	if (rc == KR_QLB_OK && (c.mode != KR_QLB_FOUR_PASS || nl < sl) &&
	    kr_qlb_config_rotation(bytes[0]) < KR_QLB_CR_UNROUTABLE && cid_len >= 1 + sl + nl + su) {
		uint32_t n;

		memset(&e, 0, sizeof(e));
		memcpy(e.pt, w.pt, sl + nl);
		memcpy(e.pt + sl + nl, bytes + 1 + sl + nl, su);
		n = kr_qlb_encode(&c, &e, kr_qlb_config_rotation(bytes[0]));
		FUZZ_ASSERT(n == 1 + sl + nl + su && !memcmp(e.cid + 1, bytes + 1, n - 1),
			    "decode then encode does not give the CID back (%u + %u, mode %u)", sl,
			    nl, c.mode);
	}

	/* encode then decode */
	memset(&e, 0, sizeof(e));
	memcpy(e.pt, bytes, sl + nl + su);
	{
		uint32_t n = kr_qlb_encode(&c, &e, cr);

		FUZZ_ASSERT(n == 1 + sl + nl + su && e.cid[0] == ((cr << 5) | (n - 1)),
			    "encode: length %u, first octet %02x", n, e.cid[0]);
		memset(&w, 0, sizeof(w));
		memcpy(w.cid, e.cid, n);
		FUZZ_ASSERT(kr_qlb_decode(&c, &w, n) == KR_QLB_OK && !memcmp(w.pt, bytes, sl),
			    "encode then decode loses the server ID (%u + %u, mode %u)", sl, nl,
			    c.mode);
	}
	memset(&c, 0, sizeof(c));
}

static void server(const uint8_t *p, size_t n)
{
	char *spec = fuzz_cstr(p, n), err[64];
	struct quic_lb_server s;
	uint8_t rnd[QUIC_LB_MAX_RANDOM], cid[20];
	size_t len;

	if (strstr(spec, "key_file")) {	/* no file system access from fuzzed input */
		free(spec);
		return;
	}
	memset(err, 'x', sizeof(err));
	if (quic_lb_server_parse(&s, spec, err, sizeof(err))) {
		FUZZ_ASSERT(fuzz_err_bounded(err, sizeof(err)) && err[0], "no bounded message");
		free(spec);
		return;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		rnd[i] = (uint8_t)(i * 31 + n);
	len = quic_lb_server_encode(&s, rnd, cid, sizeof(cid));
	FUZZ_ASSERT(len >= 6 && len <= 20 && len == quic_lb_server_cid_len(&s), "CID of %zu", len);
	{
		struct kr_qlb_work w;

		memset(&w, 0, sizeof(w));
		memcpy(w.cid, cid, len);
		FUZZ_ASSERT(kr_qlb_config_rotation(cid[0]) == s.config_rotation &&
			    kr_qlb_decode(&s.conf, &w, (__u32)len) == KR_QLB_OK &&
			    !memcmp(w.pt, s.sid, s.conf.sid_len), "server CID does not decode");
	}
	free(spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };

	if (fuzz_u8(&in) & 1)
		server(in.p, in.n);
	else
		codec(&in);
	return 0;
}
