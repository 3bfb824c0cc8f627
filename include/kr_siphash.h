/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Keyed hash of keys (opt-in defence against hash flooding, SECURITY.md): SipHash-c-d
 * (Aumasson & Bernstein) with a 128-bit secret; keyrouter uses SipHash-1-3 (as Rust's
 * std HashMap and the Linux kernel's hsiphash on 64-bit), and kr_siphash_cd() with c = 2,
 * d = 4 reproduces the reference SipHash-2-4 vectors (tests/unit/test_siphash.c).
 *
 * The same code in BPF and userspace.  Keys are at most KR_SIP_MAX_LEN (255) bytes; `buf`
 * holds them at [0, len) (in BPF: a map-value buffer of at least 256 bytes, e.g. the
 * per-CPU key buffer).  Little-endian hosts only (x86-64, arm64): 8-byte blocks are read
 * as native u64.
 *
 * The ring placement is NOT compatible with pingora-ketama/nginx when this hash is used:
 * the ring (points, CRC-32 of the backend addresses) stays the same, but a key's position
 * on it is kr_siphash13_32(key) instead of crc32(key).
 */
#ifndef KR_SIPHASH_H
#define KR_SIPHASH_H

#ifndef __bpf__
#include <linux/types.h>
#endif
#include "kr_layout.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "kr_siphash.h: little-endian only");

#define KR_SIP_MAX_LEN		255u
#define KR_SIP_SECRET_LEN	16	/* bytes: 32 hex digits in the secret file */

/* The secret: k0 = bytes 0..7, k1 = bytes 8..15 of the 16-byte key, little-endian (the
 * reference implementation's byte order). */
struct kr_hash_secret {
	__u64 k0;
	__u64 k1;
};
KR_LAYOUT_SIZE(kr_hash_secret, 16);
KR_LAYOUT_AT(kr_hash_secret, k0, 0);
KR_LAYOUT_AT(kr_hash_secret, k1, 8);

static __always_inline __u64 kr_rotl64(__u64 x, int b)
{
	return (x << b) | (x >> (64 - b));
}

#define KR_SIPROUND(v0, v1, v2, v3)                                                        \
	do {                                                                               \
		v0 += v1; v1 = kr_rotl64(v1, 13); v1 ^= v0; v0 = kr_rotl64(v0, 32);       \
		v2 += v3; v3 = kr_rotl64(v3, 16); v3 ^= v2;                               \
		v0 += v3; v3 = kr_rotl64(v3, 21); v3 ^= v0;                               \
		v2 += v1; v1 = kr_rotl64(v1, 17); v1 ^= v2; v2 = kr_rotl64(v2, 32);       \
	} while (0)

/* SipHash-c-d of buf[0..len) (len clamped to KR_SIP_MAX_LEN); c and d are constants. */
static __always_inline __u64 kr_siphash_cd(const __u8 *buf, __u32 len,
					   const struct kr_hash_secret *k, const int c,
					   const int d)
{
	__u64 v0 = k->k0 ^ 0x736f6d6570736575ull, v1 = k->k1 ^ 0x646f72616e646f6dull;
	__u64 v2 = k->k0 ^ 0x6c7967656e657261ull, v3 = k->k1 ^ 0x7465646279746573ull;
	__u64 m, b;
	__u32 i, nblk, off;
	int r;

	if (len > KR_SIP_MAX_LEN)
		len = KR_SIP_MAX_LEN;
	nblk = len >> 3;
	for (i = 0; i < KR_SIP_MAX_LEN / 8; i++) {	/* bounded: 31 blocks at most */
		if (i >= nblk)
			break;
		off = (i << 3) & 0xf8;
#ifdef __bpf__
		m = *(const __u64 *)(buf + off);
#else
		__builtin_memcpy(&m, buf + off, 8);	/* buf may be unaligned */
#endif
		v3 ^= m;
		for (r = 0; r < c; r++)
			KR_SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	b = (__u64)(len & 0xff) << 56;
	off = (nblk << 3) & 0xf8;
	for (i = 0; i < 7; i++) {			/* the 0..7 tail bytes */
		if (i >= (len & 7))
			break;
		b |= (__u64)buf[(off + i) & 0xff] << (8 * i);
	}
	v3 ^= b;
	for (r = 0; r < c; r++)
		KR_SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (r = 0; r < d; r++)
		KR_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* SipHash-1-3 of a key. */
static __always_inline __u64 kr_siphash13(const __u8 *buf, __u32 len,
					  const struct kr_hash_secret *k)
{
	return kr_siphash_cd(buf, len, k, 1, 3);
}

/* The 32-bit key hash the ring is searched with (in place of crc32(key)). */
static __always_inline __u32 kr_siphash13_32(const __u8 *buf, __u32 len,
					     const struct kr_hash_secret *k)
{
	__u64 h = kr_siphash13(buf, len, k);

	return (__u32)(h ^ (h >> 32));
}

/* Secret from its 16 bytes (as written in the secret file, in hex, in order). */
static __always_inline void kr_hash_secret_from_bytes(struct kr_hash_secret *k, const __u8 *s)
{
	__u64 a = 0, b = 0;
	int i;

	for (i = 7; i >= 0; i--) {
		a = a << 8 | s[i];
		b = b << 8 | s[8 + i];
	}
	k->k0 = a;
	k->k1 = b;
}

#endif /* KR_SIPHASH_H */
