// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * QUIC-LB codec (include/kr_quic_lb.h) in userspace.
 *  - AES-128: the FIPS-197 Appendix C.1 example, and 2000 random keys/blocks against
 *    nettle (an independent implementation), both directions.
 *  - Every line of tests/data/quic_lb_vectors.txt (see tests/data/README.txt): the CID
 *    decodes to exactly the server ID (and, where all passes run, the nonce), and the
 *    server ID + nonce encode to exactly the CID (the first octet included).
 *  - Round trips over every length pair (sid 1..15, nonce 4..18, sum <= 19) and mode, with
 *    server-use octets; a CID one octet too short is refused; a changed ciphertext octet
 *    changes the decoded plaintext.
 *  - The server header (include/quic_lb_server.h): config strings, errors, encoding.
 */
#include <stdlib.h>
#include <string.h>
#include <nettle/aes.h>
#include "tap.h"
#include "kr_quic_lb.h"
#include "quic_lb_server.h"

static uint64_t rng = 0x91c;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

static int unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = strlen(s);

	if (n % 2 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return (int)(n / 2);
}

static void hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = 0;
}

static void test_aes(void)
{
	static const uint8_t key[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	static const uint8_t pt[16] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
					0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
	static const uint8_t ct[16] = { 0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
					0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a };
	struct kr_aes128 k;
	uint8_t out[16];
	int bad_enc = 0, bad_dec = 0;

	kr_aes128_setkey(&k, key);
	kr_aes128_encrypt(&k, pt, out);
	CHECK(memcmp(out, ct, 16) == 0, "AES-128 FIPS-197 C.1 encrypt");
	kr_aes128_decrypt(&k, ct, out);
	CHECK(memcmp(out, pt, 16) == 0, "AES-128 FIPS-197 C.1 decrypt");

	for (int i = 0; i < 2000; i++) {
		struct aes128_ctx ne, nd;
		uint8_t kk[16], in[16], a[16], b[16];

		fill(kk, 16);
		fill(in, 16);
		kr_aes128_setkey(&k, kk);
		aes128_set_encrypt_key(&ne, kk);
		aes128_set_decrypt_key(&nd, kk);
		kr_aes128_encrypt(&k, in, a);
		aes128_encrypt(&ne, 16, b, in);
		bad_enc += memcmp(a, b, 16) != 0;
		kr_aes128_decrypt(&k, in, a);
		aes128_decrypt(&nd, 16, b, in);
		bad_dec += memcmp(a, b, 16) != 0;
	}
	CHECK_EQ_U(bad_enc, 0, "AES-128 encrypt == nettle for 2000 random keys and blocks");
	CHECK_EQ_U(bad_dec, 0, "AES-128 decrypt == nettle for 2000 random keys and blocks");
}

static void test_vectors(void)
{
	FILE *f = fopen("tests/data/quic_lb_vectors.txt", "r");
	char line[512];
	int n = 0, bad_dec = 0, bad_enc = 0, modes[3] = { 0 };

	CHECK(f != NULL, "open tests/data/quic_lb_vectors.txt");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char keyhex[64], sidhex[64], noncehex[64], cidhex[64], got[80];
		unsigned cr, sl, nl;
		uint8_t key[16], sid[16], nonce[32], cid[32];
		struct kr_qlb_conf c;
		struct kr_qlb_work w = { 0 };
		int have_key, cl, rc;
		__u32 len;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%u %u %u %63s %63s %63s %63s", &cr, &sl, &nl, keyhex, sidhex,
			   noncehex, cidhex) != 7) {
			CHECK(0, "vector line parses: %s", line);
			continue;
		}
		n++;
		have_key = strcmp(keyhex, "-") != 0;
		if ((have_key && unhex(keyhex, key, 16) != 16) || unhex(sidhex, sid, 16) != (int)sl ||
		    unhex(noncehex, nonce, 32) != (int)nl || (cl = unhex(cidhex, cid, 32)) < 0 ||
		    kr_qlb_conf_init(&c, sl, nl, 0, have_key ? key : NULL) != 0) {
			CHECK(0, "vector %d fields: %s", n, line);
			continue;
		}
		modes[c.mode]++;
		memcpy(w.cid, cid, (size_t)cl);
		rc = kr_qlb_decode(&c, &w, (__u32)cl);
		if (rc != KR_QLB_OK || memcmp(w.pt, sid, sl) != 0 ||
		    ((c.mode != KR_QLB_FOUR_PASS || nl < sl) && memcmp(w.pt + sl, nonce, nl) != 0)) {
			hex(w.pt, sl + nl, got);
			DIAG("vector %d decode: rc %d got %s want %s %s", n, rc, got, sidhex, noncehex);
			bad_dec++;
		}
		memset(&w, 0, sizeof(w));
		memcpy(w.pt, sid, sl);
		memcpy(w.pt + sl, nonce, nl);
		len = kr_qlb_encode(&c, &w, cr);
		if (len != (__u32)cl || memcmp(w.cid, cid, (size_t)cl) != 0) {
			hex(w.cid, len, got);
			DIAG("vector %d encode: got %s want %s", n, got, cidhex);
			bad_enc++;
		}
	}
	fclose(f);
	CHECK(n >= 40, "vectors read: %d", n);
	CHECK(modes[0] > 0 && modes[1] > 0 && modes[2] > 0,
	      "vectors cover every mode (plaintext %d, single pass %d, four pass %d)",
	      modes[0], modes[1], modes[2]);
	CHECK_EQ_U(bad_dec, 0, "every vector decodes to its server ID (and nonce)");
	CHECK_EQ_U(bad_enc, 0, "every vector encodes to its CID");
}

static void test_roundtrip(void)
{
	int bad = 0, short_ok = 0, tamper_same = 0, cases = 0, su_bad = 0;

	for (unsigned sl = KR_QLB_MIN_SID_LEN; sl <= KR_QLB_MAX_SID_LEN; sl++)
		for (unsigned nl = KR_QLB_MIN_NONCE_LEN; nl <= KR_QLB_MAX_NONCE_LEN; nl++) {
			if (sl + nl > KR_QLB_MAX_PLAIN_LEN)
				continue;
			for (int keyed = 0; keyed < 2; keyed++)
				for (int t = 0; t < 8; t++) {
					struct kr_qlb_conf c;
					struct kr_qlb_work w = { 0 }, d;
					uint8_t key[16], pt[32];
					unsigned su = (unsigned)(t % 3) <= KR_QLB_MAX_PLAIN_LEN - sl - nl ?
						      (unsigned)(t % 3) : 0;
					__u32 len, cr = (__u32)(rnd() % 7);

					fill(key, 16);
					fill(pt, sizeof(pt));
					kr_qlb_conf_init(&c, sl, nl, su, keyed ? key : NULL);
					memcpy(w.pt, pt, sl + nl + su);
					len = kr_qlb_encode(&c, &w, cr);
					cases++;
					if (len != 1 + sl + nl + su || w.cid[0] != ((cr << 5) | (len - 1)) ||
					    memcmp(w.cid + 1 + sl + nl, pt + sl + nl, su) != 0)
						su_bad++;
					d = w;
					memset(d.pt, 0, sizeof(d.pt));
					if (kr_qlb_decode(&c, &d, len) != KR_QLB_OK ||
					    memcmp(d.pt, pt, sl) != 0)
						bad++;
					d = w;
					if (kr_qlb_decode(&c, &d, sl + nl) == KR_QLB_TOO_SHORT)
						short_ok++;
					if (keyed) {
						d = w;
						d.cid[1 + (rnd() % (sl + nl))] ^= 0x01;
						kr_qlb_decode(&c, &d, len);
						if (memcmp(d.pt, pt, sl + nl) == 0)
							tamper_same++;
					}
				}
		}
	CHECK_EQ_U(bad, 0, "round trip: every length pair and mode decodes its server ID (%d CIDs)", cases);
	CHECK_EQ_U(su_bad, 0, "encode: length, first octet (rotation | length - 1), server-use octets in clear");
	CHECK_EQ_U(short_ok, cases, "a CID one octet shorter than 1 + sid + nonce is too short");
	CHECK_EQ_U(tamper_same, 0, "keyed: flipping one ciphertext bit changes the decoded plaintext");
}

static void test_conf_limits(void)
{
	struct kr_qlb_conf c;

	CHECK(kr_qlb_conf_init(&c, 0, 8, 0, NULL) != 0, "server ID length 0 refused");
	CHECK(kr_qlb_conf_init(&c, 16, 4, 0, NULL) != 0, "server ID length 16 refused");
	CHECK(kr_qlb_conf_init(&c, 4, 3, 0, NULL) != 0, "nonce length 3 refused");
	CHECK(kr_qlb_conf_init(&c, 1, 19, 0, NULL) != 0, "nonce length 19 refused");
	CHECK(kr_qlb_conf_init(&c, 10, 10, 0, NULL) != 0, "sid + nonce = 20 refused");
	CHECK(kr_qlb_conf_init(&c, 8, 8, 4, NULL) != 0, "sid + nonce + server use = 20 refused");
	CHECK(kr_qlb_conf_init(&c, 15, 4, 0, NULL) == 0, "15 + 4 accepted");
	CHECK(kr_qlb_conf_init(&c, 1, 18, 0, NULL) == 0, "1 + 18 accepted");
}

static void test_server_header(void)
{
	struct quic_lb_server s;
	char err[256];
	uint8_t cid[20], rnd_bytes[32];
	size_t len;

	CHECK(quic_lb_server_parse(&s, "cr=2,sid=0a0b,nonce=6,key=8f95f09245765f80256934e50c66207f",
				   err, sizeof(err)) == 0, "server config parses: %s", err);
	fill(rnd_bytes, sizeof(rnd_bytes));
	len = quic_lb_server_encode(&s, rnd_bytes, cid, sizeof(cid));
	CHECK_EQ_U(len, 9, "server CID length 1 + 2 + 6");
	CHECK_EQ_U(cid[0], (2u << 5) | 8, "server CID first octet");
	{
		struct kr_qlb_work w = { 0 };

		memcpy(w.cid, cid, len);
		CHECK(kr_qlb_decode(&s.conf, &w, (__u32)len) == KR_QLB_OK && w.pt[0] == 0x0a &&
		      w.pt[1] == 0x0b, "server CID decodes to its server ID");
	}
	CHECK(quic_lb_server_parse(&s, "cr=7,sid=0a,nonce=6", err, sizeof(err)) != 0 &&
	      strstr(err, "0..6"), "config rotation 7 refused: %s", err);
	CHECK(quic_lb_server_parse(&s, "cr=0,sid=0a0b0c0d0e0f0a0b0c0d,nonce=10", err, sizeof(err)) != 0 &&
	      strstr(err, "19"), "sid 10 + nonce 10 refused: %s", err);
	CHECK(quic_lb_server_parse(&s, "cr=0,sid=0a,nonce=6,key=00", err, sizeof(err)) != 0,
	      "short key refused: %s", err);
	CHECK(quic_lb_server_parse(&s, "cr=0,sid=0g,nonce=6", err, sizeof(err)) != 0,
	      "bad hex refused: %s", err);
	CHECK(quic_lb_server_parse(&s, "cr=0,nonce=6", err, sizeof(err)) != 0,
	      "missing sid refused: %s", err);
	CHECK(quic_lb_server_parse(&s, "cr=1,sid=0a,nonce=6,su=2,bogus=1", err, sizeof(err)) != 0 &&
	      strstr(err, "bogus"), "unknown field refused: %s", err);
	CHECK(quic_lb_server_parse(&s, "cr=1,sid=0a,nonce=6,su=2", err, sizeof(err)) == 0,
	      "server-use length accepted: %s", err);
	len = quic_lb_server_encode(&s, rnd_bytes, cid, sizeof(cid));
	CHECK_EQ_U(len, 10, "server CID with 2 server-use octets");
	CHECK_EQ_U(quic_lb_server_encode(&s, rnd_bytes, cid, 9), 0, "too small an output buffer: 0");
}

int main(void)
{
	test_aes();
	test_vectors();
	test_roundtrip();
	test_conf_limits();
	test_server_header();
	return tap_done();
}
