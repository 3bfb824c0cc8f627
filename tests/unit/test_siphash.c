// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Keyed hashing of keys (include/kr_siphash.h) and why it exists.
 *  - kr_siphash_cd(c = 2, d = 4) reproduces the reference SipHash-2-4 vectors (key
 *    00..0f, messages 00.. of length 0..n), so the round function, the block loop, the
 *    tail and the length byte are right; SipHash-1-3 is the same code with c = 1, d = 3.
 *  - SipHash-1-3 against an independent reference written separately below (a byte-wise
 *    SipHash-c-d over the explicitly padded message, state as an array, rounds from a
 *    rotation table; shares no code with kr_siphash.h), itself checked against the same
 *    published SipHash-2-4 vectors: every length 0..255, random keys and secrets, and
 *    the 32-bit fold the ring uses.
 *  - Hash flooding: keys crafted (by brute force over CRC-32, which needs no secret) so
 *    that crc32(key) falls in one backend's arcs of a 10-backend ring ALL land on that
 *    backend with CRC-32, and spread over every backend with the keyed hash; a second
 *    secret moves ~90% of the keys (the cost of rotating it).
 */
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "kr_siphash.h"
#include "continuum.h"
#include "crc32.h"

static const struct kr_hash_secret ref_key = { 0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull };

/* The first entries of vectors_sip64[] of the reference implementation (SipHash-2-4,
 * key 00 01 .. 0f, message 00 01 .. (len-1)), as little-endian u64; and the paper's
 * example (15 bytes). */
static const struct { uint32_t len; uint64_t h; } vec24[] = {
	{ 0, 0x726fdb47dd0e0e31ull },
	{ 1, 0x74f839c593dc67fdull },
	{ 2, 0x0d6c8009d9a94f5aull },
	{ 3, 0x85676696d7fb7e2dull },
	{ 15, 0xa129ca6149be45e5ull },
};

static uint64_t rng = 0x5eed;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void test_vectors(void)
{
	uint8_t msg[256];

	for (int i = 0; i < 256; i++)
		msg[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof(vec24) / sizeof(vec24[0]); i++)
		CHECK_EQ_U(kr_siphash_cd(msg, vec24[i].len, &ref_key, 2, 4), vec24[i].h,
			   "SipHash-2-4 reference vector, %u-byte message", vec24[i].len);
}

/* ---- the independent reference ----------------------------------------------------- */

static uint64_t ref_rotl(uint64_t x, unsigned b)
{
	return b ? (x << b) | (x >> (64 - b)) : x;
}

/* One SipRound on st[4], as a table of four ARX steps: st[a] += st[b]; st[b] is rotated
 * left by r and xored with the new st[a]; then st[a] is rotated by 32 when asked. */
static void ref_round(uint64_t st[4])
{
	static const struct { int a, b; unsigned r, rot_a; } step[4] = {
		{ 0, 1, 13, 32 }, { 2, 3, 16, 0 }, { 0, 3, 21, 0 }, { 2, 1, 17, 32 },
	};

	for (int i = 0; i < 4; i++) {
		st[step[i].a] += st[step[i].b];
		st[step[i].b] = ref_rotl(st[step[i].b], step[i].r) ^ st[step[i].a];
		st[step[i].a] = ref_rotl(st[step[i].a], step[i].rot_a);
	}
}

/* SipHash-c-d: the message padded to a multiple of 8 bytes with zeros and the length
 * byte last, read as little-endian words byte by byte; the key as 16 bytes. */
static uint64_t ref_siphash(const uint8_t key[16], const uint8_t *msg, size_t len, int c, int d)
{
	static const char init[4][9] = { "somepseu", "dorandom", "lygenera", "tedbytes" };
	uint8_t padded[264] = { 0 };
	size_t plen = (len / 8 + 1) * 8;
	uint64_t st[4], k[2] = { 0, 0 };

	for (int i = 0; i < 16; i++)
		k[i / 8] |= (uint64_t)key[i] << (8 * (i % 8));
	for (int i = 0; i < 4; i++) {
		uint64_t w = 0;

		for (int j = 0; j < 8; j++)	/* the ASCII constants, big-endian */
			w = w << 8 | (uint8_t)init[i][j];
		st[i] = w ^ k[i % 2];
	}
	memcpy(padded, msg, len);
	padded[plen - 1] = (uint8_t)len;
	for (size_t o = 0; o < plen; o += 8) {
		uint64_t m = 0;

		for (int j = 7; j >= 0; j--)
			m = m << 8 | padded[o + j];
		st[3] ^= m;
		for (int r = 0; r < c; r++)
			ref_round(st);
		st[0] ^= m;
	}
	st[2] ^= 0xff;
	for (int r = 0; r < d; r++)
		ref_round(st);
	return st[0] ^ st[1] ^ st[2] ^ st[3];
}

static void test_reference(void)
{
	uint8_t msg[256], key[16];
	struct kr_hash_secret k;
	int bad24 = 0, bad13 = 0, bad32 = 0, n = 0;

	for (int i = 0; i < 256; i++)
		msg[i] = (uint8_t)i;
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof(vec24) / sizeof(vec24[0]); i++)
		bad24 += ref_siphash(key, msg, vec24[i].len, 2, 4) != vec24[i].h;
	CHECK(bad24 == 0, "the independent reference reproduces the published SipHash-2-4 "
	      "vectors (%d wrong)", bad24);
	for (int round = 0; round < 64; round++) {
		for (int i = 0; i < 16; i++)
			key[i] = round ? (uint8_t)rnd() : (uint8_t)i;
		for (int i = 0; i < 256; i++)
			msg[i] = round ? (uint8_t)rnd() : (uint8_t)i;
		kr_hash_secret_from_bytes(&k, key);
		for (uint32_t len = 0; len <= 255; len++, n++) {
			uint64_t want = ref_siphash(key, msg, len, 1, 3);

			bad13 += kr_siphash13(msg, len, &k) != want;
			bad32 += kr_siphash13_32(msg, len, &k) != (uint32_t)(want ^ (want >> 32));
		}
	}
	CHECK(bad13 == 0, "kr_siphash13 = the independent SipHash-1-3 reference: %d messages "
	      "(every length 0..255, 64 secrets), %d differ", n, bad13);
	CHECK(bad32 == 0, "kr_siphash13_32 = the reference folded to 32 bits (%d differ)", bad32);
}

static void test_properties(void)
{
	struct kr_hash_secret k = ref_key, k2 = ref_key;
	uint8_t a[256] = { 0 }, b[256], unal[260];
	uint8_t s[16];
	int diff = 0, same_tail = 1;

	for (int i = 0; i < 256; i++)
		a[i] = (uint8_t)rnd();
	memcpy(b, a, sizeof(b));
	for (int i = 0; i < 16; i++)
		s[i] = (uint8_t)i;
	kr_hash_secret_from_bytes(&k2, s);
	CHECK(k2.k0 == ref_key.k0 && k2.k1 == ref_key.k1, "secret bytes 00..0f -> k0, k1 "
	      "little-endian (the reference's key order)");
	/* every length 0..255: 1-3 differs from 2-4, the hash depends on the length, bytes
	 * past len are ignored, and an unaligned buffer gives the same hash */
	for (uint32_t len = 0; len <= 255; len++) {
		uint64_t h = kr_siphash13(a, len, &k);

		memcpy(unal + 1, a, 256);
		diff += h != kr_siphash_cd(a, len, &k, 2, 4) && (len == 255 ||
			h != kr_siphash13(a, len + 1, &k)) && h == kr_siphash13(unal + 1, len, &k);
		b[len < 255 ? len : 0] ^= len < 255 ? 0x80 : 0;
		same_tail &= len == 255 || kr_siphash13(a, len, &k) == kr_siphash13(b, len, &k);
		b[len < 255 ? len : 0] = a[len < 255 ? len : 0];
	}
	CHECK(diff == 256, "every length 0..255: SipHash-1-3 != 2-4, depends on the length, "
	      "same hash from an unaligned buffer (%d of 256)", diff);
	CHECK(same_tail, "bytes after len do not change the hash");
	/* every secret bit and every key bit changes about half of the 64 output bits */
	{
		uint64_t h0 = kr_siphash13(a, 37, &k), tot = 0;
		int n = 0;

		for (int bit = 0; bit < 128; bit++, n++) {
			struct kr_hash_secret kk = k;

			if (bit < 64)
				kk.k0 ^= 1ull << bit;
			else
				kk.k1 ^= 1ull << (bit - 64);
			tot += (uint64_t)__builtin_popcountll(h0 ^ kr_siphash13(a, 37, &kk));
		}
		for (int bit = 0; bit < 37 * 8; bit++, n++) {
			a[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			tot += (uint64_t)__builtin_popcountll(h0 ^ kr_siphash13(a, 37, &k));
			a[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
		CHECK(tot > 28ull * n && tot < 36ull * n, "avalanche: a flipped secret or key "
		      "bit changes %.1f of 64 output bits on average", (double)tot / n);
	}
}

#define NBE	10
#define TARGET	3
#define NKEYS	20000
#define KLEN	16

static void test_flooding(void)
{
	struct kr_backend_spec b[NBE];
	struct kr_hash_secret sec, sec2;
	static uint8_t keys[NKEYS][KLEN];
	uint32_t crc_hits[NBE] = { 0 }, sip_hits[NBE] = { 0 }, moved = 0, tries = 0, maxs = 0;
	struct kr_ring *r = NULL;
	struct kr_err err;
	char a[32];

	for (int i = 0; i < NBE; i++) {
		snprintf(a, sizeof(a), "10.0.0.%d:53", i + 1);
		kr_sockaddr_parse(a, &b[i].addr, &err);
		b[i].weight = 1;
	}
	if (kr_ring_build(&r, b, NBE, KR_RING_V2, 160, &err)) {
		CHECK(0, "ring build: %s", err.msg);
		return;
	}
	/* The attacker: random printable keys, kept when crc32 lands on backend TARGET. */
	for (int n = 0; n < NKEYS; tries++) {
		for (int i = 0; i < KLEN; i++)
			keys[n][i] = (uint8_t)('a' + rnd() % 26);
		if (r->backend[kr_ring_lower_bound(r, kr_crc32(keys[n], KLEN))] == TARGET)
			n++;
	}
	sec.k0 = rnd(), sec.k1 = rnd();
	sec2.k0 = rnd(), sec2.k1 = rnd();
	for (int n = 0; n < NKEYS; n++) {
		uint32_t s1 = r->backend[kr_ring_lower_bound(r, kr_siphash13_32(keys[n], KLEN, &sec))];
		uint32_t s2 = r->backend[kr_ring_lower_bound(r, kr_siphash13_32(keys[n], KLEN, &sec2))];

		crc_hits[r->backend[kr_ring_lower_bound(r, kr_crc32(keys[n], KLEN))]]++;
		sip_hits[s1]++;
		moved += s1 != s2;
	}
	for (int i = 0; i < NBE; i++)
		maxs = sip_hits[i] > maxs ? sip_hits[i] : maxs;
	DIAG("%d crafted keys from %u random tries (~%u per key for %d backends)", NKEYS, tries,
	     tries / NKEYS, NBE);
	DIAG("per backend, CRC-32:    %u %u %u %u %u %u %u %u %u %u", crc_hits[0], crc_hits[1],
	     crc_hits[2], crc_hits[3], crc_hits[4], crc_hits[5], crc_hits[6], crc_hits[7],
	     crc_hits[8], crc_hits[9]);
	DIAG("per backend, SipHash13: %u %u %u %u %u %u %u %u %u %u", sip_hits[0], sip_hits[1],
	     sip_hits[2], sip_hits[3], sip_hits[4], sip_hits[5], sip_hits[6], sip_hits[7],
	     sip_hits[8], sip_hits[9]);
	CHECK_EQ_U(crc_hits[TARGET], NKEYS, "CRC-32: every crafted key lands on backend %d",
		   TARGET);
	CHECK(maxs < NKEYS * 15 / 100 && sip_hits[TARGET] < NKEYS * 15 / 100,
	      "keyed hash: the same keys spread, largest backend share %.1f%% (fair share 10%%), "
	      "target backend %.1f%%", 100.0 * maxs / NKEYS, 100.0 * sip_hits[TARGET] / NKEYS);
	for (int i = 0; i < NBE; i++)
		CHECK(sip_hits[i] > NKEYS * 5 / 100, "keyed hash: backend %d gets %.1f%% of them",
		      i, 100.0 * sip_hits[i] / NKEYS);
	CHECK(moved > NKEYS * 80 / 100, "another secret moves %.1f%% of the keys (rotation = "
	      "a full reshuffle)", 100.0 * moved / NKEYS);
	kr_ring_free(r);
}

int main(void)
{
	test_vectors();
	test_reference();
	test_properties();
	test_flooding();
	return tap_done();
}
