/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Key extractors: the bytes a service hashes for a packet.  Shared by the BPF programs and
 * the userspace reference (same source, see kr_parse.h).
 *
 * The caller copies the first kr_key_window() bytes of the UDP payload into s->win (in
 * BPF with bpf_xdp_load_bytes()/bpf_skb_load_bytes()); kr_key_extract() reads only that
 * window and the parsed headers, and writes the key to s->key.  Variable-length scans:
 * DNS names and payload delimiters are plain loops bounded by the key size, every position
 * derived from the loop counter and masked into its buffer (KR_WIN/KR_KEY), so the verifier
 * walks each step once and prunes the paths inside it (fast: no call per byte); the
 * memcached command line (a small state machine whose key position depends on the data)
 * uses kr_loop(): bpf_loop() in BPF, checked once per step state, a plain loop in
 * userspace.
 *
 * Key bytes (every key is at most KR_MAX_KEY_LEN bytes):
 *   tuple     source address + source port, network order: 4 + 2 (IPv4) or 16 + 2 (IPv6).
 *   payload   payload_len != 0: bytes [payload_off, payload_off + payload_len), which must
 *             lie inside the payload; else with KR_SVC_F_PAYLOAD_DELIM: from payload_off up
 *             to (not including) the first payload_delim byte (none: no key; none in the
 *             255 bytes after payload_off: too long); else from payload_off to the end of
 *             the payload (the whole payload for offset 0; an empty payload is the empty
 *             key).  The same as user/core/keyform.c kr_key_from_payload().
 *   dns       a query (QR = 0, QDCOUNT >= 1): the first question's name in wire format
 *             from offset 12, labels of 1..63 bytes, A-Z lowercased, the final zero label
 *             included.  A compression pointer, a label > 63 or a truncated name: no key.
 *   memcache  8-byte UDP frame header, then an ASCII command; the key is the first key
 *             token: the 2nd token of get, gets, set, add, replace, append, prepend, cas,
 *             delete, incr, decr, touch, mg, ms, md, ma; the 3rd of gat, gats.  Tokens are
 *             separated by runs of ' ' or '\t'; a key token ends at ' ', '\t', '\r', '\n'
 *             or the end of the payload (user/core/keyform.c splits the same way).  Commands are case-sensitive (as memcached).  Unknown command or
 *             empty key: no key.  The key must start within the first KR_PAYLOAD_WINDOW
 *             payload bytes.
 *   quic      long header (first bit 1): the Destination Connection ID (length byte at
 *             offset 5, 1..255 bytes from offset 6); short header: the quic_cid_len bytes
 *             from offset 1.  A zero-length or truncated DCID: no key.
 */
#ifndef KR_KEY_H
#define KR_KEY_H

#include "kr_parse.h"

#define KR_WIN_MASK	(KR_PAYLOAD_WINDOW - 1)
#define KR_KEY_MASK	(KR_KEY_BUF - 1)
_Static_assert((KR_PAYLOAD_WINDOW & KR_WIN_MASK) == 0, "window is a power of 2");
_Static_assert(KR_KEY_BUF == KR_MAX_KEY_LEN + 1 && (KR_KEY_BUF & KR_KEY_MASK) == 0, "key buf");
_Static_assert(KR_MAX_PAYLOAD_OFFSET + KR_KEY_BUF <= KR_PAYLOAD_WINDOW, "window fits a key");

#define KR_WIN(s, x)	((s)->win[kr_idx((x), KR_WIN_MASK)])
#define KR_KEY(s, x)	((s)->key[kr_idx((x), KR_KEY_MASK)])

/* Per-CPU scratch (a map value in BPF): the payload window, the key, and the data path's
 * copy of the packet's service (kr_datapath.h kr_stage_service: one pointer type for
 * the rest of the program, wherever the service was found). */
struct kr_scratch {
	__u8 win[KR_PAYLOAD_WINDOW];
	__u8 key[KR_KEY_BUF];
	struct kr_service svc;
	__u32 trace_gap;	/* run-time trace: packets left until the next sampled one */
	__u32 pad;
};
KR_LAYOUT_SIZE(kr_scratch, 824);
KR_LAYOUT_AT(kr_scratch, win, 0);
KR_LAYOUT_AT(kr_scratch, key, 512);
KR_LAYOUT_AT(kr_scratch, svc, 768);
KR_LAYOUT_AT(kr_scratch, trace_gap, 816);

#ifdef __bpf__
#define kr_loop(n, fn, ctx) bpf_loop((n), (fn), (ctx), 0)
#else
static inline long kr_loop(__u32 n, long (*fn)(__u32, void *), void *ctx)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (fn(i, ctx))
			return i + 1;
	return n;
}
#endif

/*
 * State of the memcached scans (the bpf_loop context).  Step i reads window byte
 * start + i: positions are derived from i (which the verifier does not track) and from
 * fields that never change during a scan, so the verifier checks a step once, not once
 * per byte.
 */
struct kr_scan {
	struct kr_scratch *s;
	__u32 start;		/* window index of step 0 */
	__u32 wlen;		/* valid window bytes */
	__u32 pl_len;		/* payload length (may exceed the window) */
	__u32 klen;		/* key bytes written (result) */
	__u32 kstart;		/* memcache: window index of the first key byte */
	__u32 adv;		/* bytes passed by 8-byte strides, beyond one per step */
	__u32 rem;		/* tokens to skip before the key */
	__u32 state;		/* KR_MC_* */
	__u32 status;		/* enum kr_key_status when the scan stops */
};

/* Payload bytes an extractor needs in the window. */
static __always_inline __u32 kr_key_window(const struct kr_service *svc, const struct kr_pkt *pkt)
{
	__u32 need;

	switch (svc->key_type) {
	case KR_KEY_PAYLOAD:
		need = (__u32)svc->payload_off + (svc->payload_len ? svc->payload_len : KR_KEY_BUF);
		break;
	case KR_KEY_DNS:
		need = 12 + KR_KEY_BUF;
		break;
	case KR_KEY_MEMCACHE:
		need = KR_PAYLOAD_WINDOW;
		break;
	case KR_KEY_QUIC:
		need = 6 + KR_KEY_BUF;
		break;
	default:
		return 0;
	}
	if (need > KR_PAYLOAD_WINDOW)
		need = KR_PAYLOAD_WINDOW;
	return pkt->pl_len < need ? pkt->pl_len : need;
}

/* 8 bytes from byte offset `from` to byte offset `to` of the scratch area (to: a multiple
 * of 8; from: any).  In BPF one load and one store (unaligned loads from a map value are
 * allowed); in userspace memcpy (no unaligned access in C). */
static __always_inline void kr_scratch_copy8(struct kr_scratch *s, __u32 to, __u32 from)
{
#ifdef __bpf__
	*(__u64 *)((__u8 *)s + to) = *(const __u64 *)((const __u8 *)s + from);
#else
	__builtin_memcpy((__u8 *)s + to, (const __u8 *)s + from, 8);
#endif
}

/*
 * key = window[start, start + len); start + len <= KR_PAYLOAD_WINDOW, len <= 255.  Eight
 * bytes a step: the last step copies up to 7 bytes past the key into key bytes past len
 * (undefined for every reader, as they were), and may read up to 7 bytes past the window,
 * which ends where the key buffer starts inside struct kr_scratch: the read stays in the
 * scratch area and only those bytes past len get them.
 */
static __always_inline void kr_key_copy(struct kr_scratch *s, __u32 start, __u32 len)
{
	__u32 i;

	for (i = 0; i < KR_KEY_BUF / 8; i++) {
		if (i * 8 >= len)
			break;
		kr_scratch_copy8(s, KR_PAYLOAD_WINDOW + kr_idx(i * 8, KR_KEY_MASK & ~7u),
				 kr_idx(start + i * 8, KR_WIN_MASK));
	}
}
_Static_assert(__builtin_offsetof(struct kr_scratch, key) == KR_PAYLOAD_WINDOW &&
	       sizeof(struct kr_scratch) >= KR_PAYLOAD_WINDOW + KR_KEY_BUF &&
	       KR_KEY_BUF % 8 == 0, "kr_key_copy: key buffer right after the window, 8-byte steps");

static __always_inline int kr_key_tuple(const struct kr_pkt *pkt, struct kr_scratch *s,
					__u32 *klen)
{
	__u32 n = pkt->family == 6 ? 16 : 4, i;

	for (i = 0; i < 16; i++)
		if (i < n)
			s->key[i] = pkt->src[i];
	KR_KEY(s, n) = pkt->sport[0];
	KR_KEY(s, (n + 1)) = pkt->sport[1];
	*klen = n + 2;
	return KR_KEY_OK;
}

/* payload: key = window[off, first delim); none in the payload: no key; none in the
 * KR_MAX_KEY_LEN bytes after off: too long.  (The window holds off + 256 bytes when the
 * payload is longer, so the end of the window is the end of the payload.) */
static __always_inline int kr_key_delim(struct kr_scratch *s, __u32 off, __u32 wlen, __u8 delim,
					__u32 *klen)
{
	__u32 i, pos;
	__u8 b;

	for (i = 0; i < KR_KEY_BUF; i++) {
		pos = off + i;
		if (pos >= wlen)
			return KR_KEY_NOT_FOUND;
		b = KR_WIN(s, pos);
		if (b == delim) {
			*klen = i;
			return KR_KEY_OK;
		}
		if (i >= KR_MAX_KEY_LEN)
			return KR_KEY_TOO_LONG;
		KR_KEY(s, i) = b;
	}
	return KR_KEY_TOO_LONG;
}

/* Where a `payload` key starts: payload_off, inside the payload. */
static __always_inline int kr_payload_start(const struct kr_service *svc,
					    const struct kr_pkt *pkt)
{
	if (svc->payload_off > KR_MAX_PAYLOAD_OFFSET)
		return KR_KEY_BAD_SERVICE;
	if (svc->payload_off > pkt->pl_len)
		return KR_KEY_NOT_FOUND;
	return KR_KEY_OK;
}

/* The span of a `payload` key without a delimiter: [payload_off, payload_off +
 * payload_len), or to the end of the payload when payload_len is 0, in *off and *len; or
 * the key status that says why there is none.  (The XDP data path copies it from the
 * frame itself: kr_datapath.h kr_key_span_xdp.) */
static __always_inline int kr_payload_span(const struct kr_service *svc,
					   const struct kr_pkt *pkt, __u32 *off, __u32 *len)
{
	__u32 o = svc->payload_off, l = svc->payload_len;
	int rc = kr_payload_start(svc, pkt);

	if (rc != KR_KEY_OK)
		return rc;
	if (!l)
		l = pkt->pl_len - o;
	if (l > KR_MAX_KEY_LEN)
		return KR_KEY_TOO_LONG;
	if (o + l > pkt->pl_len)
		return KR_KEY_NOT_FOUND;
	*off = o;
	*len = l;
	return KR_KEY_OK;
}

/* payload without a delimiter, from the window (wlen bytes).  (The data path calls this
 * one inline.) */
static __always_inline int kr_key_payload_span(const struct kr_service *svc,
					       const struct kr_pkt *pkt, struct kr_scratch *s,
					       __u32 wlen, __u32 *klen)
{
	__u32 off = 0, len = 0;
	int rc = kr_payload_span(svc, pkt, &off, &len);

	*klen = 0;
	if (rc != KR_KEY_OK)
		return rc;
	if (off + len > wlen)
		return KR_KEY_NOT_FOUND;
	kr_key_copy(s, off, len);
	*klen = len;
	return KR_KEY_OK;
}

static __always_inline int kr_key_payload(const struct kr_service *svc, const struct kr_pkt *pkt,
					  struct kr_scratch *s, __u32 wlen, __u32 *klen)
{
	if (!svc->payload_len && (svc->flags & KR_SVC_F_PAYLOAD_DELIM)) {
		int rc = kr_payload_start(svc, pkt);

		if (rc != KR_KEY_OK)
			return rc;
		return kr_key_delim(s, svc->payload_off, wlen, svc->payload_delim, klen);
	}
	return kr_key_payload_span(svc, pkt, s, wlen, klen);
}

/* dns: the question name, byte by byte (a plain bounded loop: the verifier prunes the
 * label-length/label-byte paths at each step, `rem` being only compared). */
static __always_inline int kr_key_dns(const struct kr_pkt *pkt, struct kr_scratch *s, __u32 wlen,
				      __u32 *klen)
{
	__u32 i, pos, rem = 0;
	__u8 b;

	(void)pkt;
	if (wlen < 12 || (s->win[2] & 0x80) || (s->win[4] == 0 && s->win[5] == 0))
		return KR_KEY_NOT_FOUND;		/* not a query, or no question */
	for (i = 0; i < KR_KEY_BUF; i++) {
		pos = 12 + i;
		if (pos >= wlen)
			return KR_KEY_NOT_FOUND;	/* truncated name */
		if (i >= KR_MAX_KEY_LEN)
			return KR_KEY_TOO_LONG;
		b = KR_WIN(s, pos);
		if (rem == 0) {
			if (b > 63)
				return KR_KEY_NOT_FOUND;	/* compression pointer / bad label */
			KR_KEY(s, i) = b;
			if (b == 0) {
				*klen = i + 1;		/* the root label ends the name */
				return KR_KEY_OK;
			}
			rem = b;
			continue;
		}
		if (b >= 'A' && b <= 'Z')
			b += 'a' - 'A';
		rem--;
		KR_KEY(s, i) = b;
	}
	return KR_KEY_TOO_LONG;
}

/* memcache: scanner states */
enum { KR_MC_SPACE = 1, KR_MC_SKIP = 2 };

#define KR_MC2(a, b)		(((__u64)(a) << 8) | (b))
#define KR_MC3(a, b, c)		((KR_MC2(a, b) << 8) | (c))
#define KR_MC4(a, b, c, d)	((KR_MC3(a, b, c) << 8) | (d))
#define KR_MC5(a, b, c, d, e)	((KR_MC4(a, b, c, d) << 8) | (e))
#define KR_MC6(a, b, c, d, e, f)	((KR_MC5(a, b, c, d, e) << 8) | (f))
#define KR_MC7(a, b, c, d, e, f, g)	((KR_MC6(a, b, c, d, e, f) << 8) | (g))

/* Tokens before the key for a command, or -1 when it has no key we know. */
static __always_inline int kr_mc_skip(__u64 cmd)
{
	switch (cmd) {
	case KR_MC3('g', 'e', 't'): case KR_MC4('g', 'e', 't', 's'):
	case KR_MC3('s', 'e', 't'): case KR_MC3('a', 'd', 'd'):
	case KR_MC7('r', 'e', 'p', 'l', 'a', 'c', 'e'):
	case KR_MC6('a', 'p', 'p', 'e', 'n', 'd'):
	case KR_MC7('p', 'r', 'e', 'p', 'e', 'n', 'd'):
	case KR_MC3('c', 'a', 's'): case KR_MC6('d', 'e', 'l', 'e', 't', 'e'):
	case KR_MC4('i', 'n', 'c', 'r'): case KR_MC4('d', 'e', 'c', 'r'):
	case KR_MC5('t', 'o', 'u', 'c', 'h'):
	case KR_MC2('m', 'g'): case KR_MC2('m', 's'): case KR_MC2('m', 'd'): case KR_MC2('m', 'a'):
		return 0;
	case KR_MC3('g', 'a', 't'): case KR_MC4('g', 'a', 't', 's'):
		return 1;
	default:
		return -1;
	}
}

static __always_inline int kr_mc_is_space(__u8 b)
{
	return b == ' ' || b == '\t';
}

static __always_inline int kr_mc_is_end(__u8 b)
{
	return b == ' ' || b == '\t' || b == '\r' || b == '\n';
}

/* Are the 8 window bytes from pos all in the window and all separators (space), or all
 * token bytes (!space: no separator, no line end)?  Lets a scan step pass 8 bytes of a
 * run at once: a step is a bpf_loop() call (~9 ns), and a run of separators before the key
 * could otherwise cost one call per byte. */
static __always_inline int kr_mc_run8(const struct kr_scan *sc, __u32 pos, int space)
{
	__u32 j;
	__u8 b;

	if (pos + 8 > sc->wlen)
		return 0;
	for (j = 0; j < 8; j++) {
		b = KR_WIN(sc->s, pos + j);
		if (space ? !kr_mc_is_space(b) : kr_mc_is_end(b))
			return 0;
	}
	return 1;
}

/* memcache: find the key token: skip spaces, and for gat/gats the exptime token.  Step i
 * looks at window byte start + adv + i (adv: bytes passed by 8-byte strides beyond one per
 * step). */
static long kr_mc_find_step(__u32 i, void *ctx)
{
	struct kr_scan *sc = (struct kr_scan *)ctx;
	__u32 pos = sc->start + sc->adv + i;
	__u8 b;

	if (pos >= sc->wlen)
		return 1;				/* no key in the window */
	b = KR_WIN(sc->s, pos);
	if (b == '\r' || b == '\n')
		return 1;				/* end of the command: no key */
	if (sc->state == KR_MC_SPACE) {
		if (kr_mc_is_space(b)) {
			if (kr_mc_run8(sc, pos, 1))
				sc->adv += 7;		/* 8 separators in one step */
			return 0;
		}
		if (sc->rem) {
			sc->state = KR_MC_SKIP;
			return 0;
		}
		sc->kstart = pos;			/* the key's first byte */
		sc->status = KR_KEY_OK;
		return 1;
	}
	if (kr_mc_is_space(b)) {			/* end of the skipped token */
		sc->rem = 0;
		sc->state = KR_MC_SPACE;
	} else if (kr_mc_run8(sc, pos, 0)) {
		sc->adv += 7;				/* 8 bytes of the skipped token */
	}
	return 0;
}

/* memcache: the key token from kstart, one byte per step, or 8 when the next 8 are all key
 * bytes and stay within KR_MAX_KEY_LEN (key index = adv + i). */
static long kr_mc_key_step(__u32 i, void *ctx)
{
	struct kr_scan *sc = (struct kr_scan *)ctx;
	__u32 k = sc->adv + i, pos = sc->start + k, j;
	__u8 b;

	if (pos >= sc->wlen) {
		/* the end of the payload ends the key; the end of the window does not */
		sc->status = pos >= sc->pl_len ? KR_KEY_OK : KR_KEY_NOT_FOUND;
		return 1;
	}
	b = KR_WIN(sc->s, pos);
	if (kr_mc_is_end(b)) {
		sc->status = KR_KEY_OK;
		return 1;
	}
	if (k >= KR_MAX_KEY_LEN) {
		sc->status = KR_KEY_TOO_LONG;
		return 1;
	}
	if (k + 8 <= KR_MAX_KEY_LEN && kr_mc_run8(sc, pos, 0)) {
		for (j = 0; j < 8; j++)
			KR_KEY(sc->s, k + j) = KR_WIN(sc->s, pos + j);
		sc->adv += 7;
		sc->klen = k + 8;
		return 0;
	}
	KR_KEY(sc->s, k) = b;
	sc->klen = k + 1;
	return 0;
}

/* The command word at payload offset 8 (up to 7 bytes, then a space or tab): the tokens to skip
 * before the key (0 or 1), or -1. *end = offset of the space. */
static __always_inline int kr_mc_command(const struct kr_scratch *s, __u32 wlen, __u32 *end)
{
	__u64 cmd = 0;
	__u32 i;
	__u8 b;

	for (i = 8; i < 16; i++) {
		if (i >= wlen)
			return -1;
		b = s->win[i];
		if (kr_mc_is_space(b)) {
			*end = i;
			return kr_mc_skip(cmd);
		}
		/* a NUL is no command byte: the word is packed into an integer, where
		 * leading zero bytes would vanish ("\0get" read as "get") */
		if (kr_mc_is_end(b) || b == 0 || i == 15)
			return -1;
		cmd = (cmd << 8) | b;
	}
	return -1;
}

static __always_inline int kr_key_memcache(const struct kr_pkt *pkt, struct kr_scratch *s,
					   __u32 wlen, __u32 *klen)
{
	struct kr_scan sc = {};
	__u32 end = 0;
	int skip = kr_mc_command(s, wlen, &end);

	if (skip < 0)
		return KR_KEY_NOT_FOUND;
	sc.s = s;
	sc.start = end + 1;
	sc.wlen = wlen;
	sc.rem = skip;
	sc.state = KR_MC_SPACE;
	sc.status = KR_KEY_NOT_FOUND;
	kr_loop(KR_PAYLOAD_WINDOW, kr_mc_find_step, &sc);
	if (sc.status != KR_KEY_OK)
		return KR_KEY_NOT_FOUND;
	sc.start = sc.kstart;
	sc.adv = 0;
	sc.pl_len = pkt->pl_len;
	sc.status = KR_KEY_TOO_LONG;
	kr_loop(KR_KEY_BUF + 1, kr_mc_key_step, &sc);
	*klen = sc.klen;
	return sc.status;
}

static __always_inline int kr_key_quic(const struct kr_service *svc, const struct kr_pkt *pkt,
				       struct kr_scratch *s, __u32 wlen, __u32 *klen)
{
	__u32 start = 1, len = svc->quic_cid_len;

	if (wlen < 1)
		return KR_KEY_NOT_FOUND;
	if (s->win[0] & 0x80) {				/* long header */
		if (wlen < 6)
			return KR_KEY_NOT_FOUND;
		start = 6;
		len = s->win[5];
	} else if (len == 0) {
		return KR_KEY_BAD_SERVICE;
	}
	if (len == 0 || start + len > wlen || start + len > pkt->pl_len)
		return KR_KEY_NOT_FOUND;
	kr_key_copy(s, start, len);
	*klen = len;
	return KR_KEY_OK;
}

/* The service's key for the packet: enum kr_key_status; s->key[0..*klen) when OK. */
static __always_inline int kr_key_extract(const struct kr_service *svc, const struct kr_pkt *pkt,
					  struct kr_scratch *s, __u32 wlen, __u32 *klen)
{
	*klen = 0;
	if (wlen > KR_PAYLOAD_WINDOW)
		return KR_KEY_BAD_SERVICE;
	switch (svc->key_type) {
	case KR_KEY_TUPLE:
		return kr_key_tuple(pkt, s, klen);
	case KR_KEY_PAYLOAD:
		return kr_key_payload(svc, pkt, s, wlen, klen);
	case KR_KEY_DNS:
		return kr_key_dns(pkt, s, wlen, klen);
	case KR_KEY_MEMCACHE:
		return kr_key_memcache(pkt, s, wlen, klen);
	case KR_KEY_QUIC:
		return kr_key_quic(svc, pkt, s, wlen, klen);
	default:
		return KR_KEY_BAD_SERVICE;
	}
}

#endif /* KR_KEY_H */
