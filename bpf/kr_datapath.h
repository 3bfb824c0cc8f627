/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The data path of keyrouter.bpf.c: its stages, in order, and the pipeline that runs them.
 *
 *   parse (Ethernet, VLANs, IPv4/IPv6, UDP/TCP) -> service lookup
 *   -> [TCP: the flow's entry -> its backend, kr_flow.h] -> key extraction -> crc32
 *   -> [quic + QUIC-LB: server ID in the DCID -> its backend, kr_quic_lb_stage.h]
 *   -> ring stage (slot, bucket lookup, failover walk: kr_ring.h)
 *   -> [TCP SYN: its embryonic entry] -> forward -> counters
 *
 * Each stage is a small function returning a verdict or KR_ACT_CONTINUE.  The parser and
 * the extractors (include/kr_parse.h, include/kr_key.h) are the same source as the
 * userspace reference.  The extractors run in a global function (kr_extract), so the
 * verifier checks them once instead of once per path through the program; the XDP common
 * path of a `payload` service avoids it and every other call but the ring stage's (a call
 * costs a few ns a packet: docs/ring.md "Issue 14's changes to the common path"): XDP
 * parses inline (TC keeps kr_parse_tc), and copies a payload key from the frame inline.
 *
 * Anything that is not a packet for a service is passed untouched; a packet for a
 * service that cannot be routed follows the service's policy (pass or drop); every
 * packet is counted in kr_counters (seen, and one of passed / routed / dropped).
 *
 * A program is this header (the license included), its ring stage and its two entry points:
 *
 *   #include "kr_datapath.h"
 *   static __always_inline int kr_program_route(ring_id, subset, key_hash, bytes, out)
 *   SEC("xdp") int kr_xdp(ctx)  { return kr_xdp_verdict(ctx); }
 *   SEC("tc")  int kr_tc(skb)   { return kr_tc_verdict(skb); }
 *
 * keyrouter.bpf.c (what ships) routes with kr_ring_route_subset(); the benchmark builds
 * (a template under tests/bpf/progs/) with the variants they compare it with.
 *
 * The stage headers each include what they need, so they build in any order (lint.bats
 * compiles each one alone).  The order below is the order of the object's maps and of its
 * .rodata / .bss variables, which `keyrouter upgrade` compares with the running program's:
 * keep it.  Each header is included once per program (a BPF object is one translation
 * unit): the global functions some of them define (kr_ring_walk_slow, kr_quic_lb,
 * kr_aes128_encrypt_block; __noinline and not static, so the verifier checks each once,
 * by its prototype) belong to the program that includes them.
 *
 * Build parameters, all for test and benchmark builds (tests/bpf/progs/), none set by the
 * shipped one: KR_WINDOW (include/kr_lookup.h: the lookup window), KR_BACKENDS_MAX_ENTRIES
 * (kr_backend_map.h), KR_RING_BACKEND_ID (kr_ring.h: ring-local backend -> global id),
 * KR_NO_TRACE (no run-time decision trace: kr_trace.h, kr_trace_decision() below).
 */
#ifndef KR_DATAPATH_H
#define KR_DATAPATH_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "kr_datapath_kern_user.h"
#include "kr_quic_lb_aes.h"	/* the QUIC-LB block cipher, a global function */
#include "kr_parse.h"
#include "kr_key.h"
#include "kr_crc32.h"
#include "kr_maps.h"
#include "kr_ring.h"		/* ring maps, the ring stage */
#include "kr_fwd.h"		/* forwarding */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "kr_key_trace.h"	/* kr_cfg_trace, kr_trace_last */
#include "kr_quic_lb_stage.h"	/* QUIC-LB maps and stage */
#include "kr_trace.h"		/* per-service counters, run-time decision trace */
#include "kr_flow.h"		/* TCP flow tables and stage */

#define TC_ACT_OK	0
#define TC_ACT_SHOT	2
#define TC_ACT_REDIRECT	7

/* What one packet carries through the stages. */
struct kr_state {
	struct kr_pkt pkt;
	struct kr_route route;
	struct kr_counters *cnt;
	struct kr_scratch *s;
	__u32 frame_len;
	__u32 klen;
	__u32 hash;
	__u32 why;		/* a packet of a service: enum kr_trace_why | route reason << 8 */
};

/* The packet's service: its copy in the scratch (kr_stage_service), not a pointer in the
 * state (8 bytes of the XDP program's stack, which the three-frame limit counts). */
#define KR_SVC(st) ((const struct kr_service *)&(st)->s->svc)

/* ---- global subprograms: verified once each -------------------------------------- */

__noinline int kr_parse_tc(struct __sk_buff *skb, struct kr_pkt *pkt)
{
	if (!pkt)
		return KR_PARSE_ERROR;
	return kr_parse((const __u8 *)(long)skb->data, (const __u8 *)(long)skb->data_end, pkt);
}

/* Returns enum kr_key_status | key length << 8. */
__noinline int kr_extract(const struct kr_service *svc, const struct kr_pkt *pkt,
			  struct kr_scratch *s, __u32 wlen)
{
	__u32 klen = 0;
	int st;

	if (!svc || !pkt || !s)
		return KR_KEY_BAD_SERVICE;
	st = kr_key_extract(svc, pkt, s, wlen, &klen);
	return st | (int)((klen & 0xffff) << 8);
}

/*
 * XDP: copy len (1..KR_PAYLOAD_WINDOW) bytes at packet offset off into s->win straight from
 * the frame's linear data -- 8 bytes per step, then the last bytes one by one -- without
 * the bpf_xdp_load_bytes() helper (a call and a generic copy per packet).  Returns 0, or -1
 * when the bytes are not all in the linear data (a multi-buffer frame): the caller then
 * uses the helper.
 */
static __always_inline int kr_copy_window_xdp(struct xdp_md *ctx, __u32 off, __u32 len,
					      struct kr_scratch *s)
{
	const __u8 *data = (const __u8 *)(long)ctx->data, *end = (const __u8 *)(long)ctx->data_end;
	const __u8 *p;
	__u32 i, n;

	if (!s || off >= 2 * KR_MAX_HDR_OFF || len > KR_PAYLOAD_WINDOW)
		return -1;
	p = data + kr_idx(off, 2 * KR_MAX_HDR_OFF - 1);	/* bounded on the register used */
	len = kr_idx(len, 2 * KR_PAYLOAD_WINDOW - 1);
	n = len / 8;
	for (i = 0; i < KR_PAYLOAD_WINDOW / 8; i++) {
		const __u8 *q;

		if (i >= n)
			break;
		q = p + i * 8;
		asm volatile("" : "+r"(q));	/* the check and the load on this register */
		if (q + 8 > end)
			return -1;
		/* one 8-byte store (through &s->win[] clang wrote 8 byte stores) */
		*(__u64 *)((__u8 *)s + kr_idx(i * 8, KR_WIN_MASK & ~7u)) = *(const __u64 *)q;
	}
	for (i = n * 8; i < KR_PAYLOAD_WINDOW; i++) {
		const __u8 *q;

		if (i >= len)
			break;
		q = p + kr_idx(i, KR_WIN_MASK);
		asm volatile("" : "+r"(q));
		if (q + 1 > end)
			return -1;
		s->win[kr_idx(i, KR_WIN_MASK)] = *q;
	}
	return 0;
}

/*
 * XDP: copy the len (0..KR_MAX_KEY_LEN) bytes at packet offset off into s->key straight
 * from the frame's linear data, 8 bytes per step (the last step may copy up to 7 frame
 * bytes past the key into key bytes past len, undefined for every reader as with
 * kr_key_copy()), then the last bytes one by one where fewer than 8 are left in the frame.
 * 0, or -1 when the bytes are not all in the linear data (the caller then takes the
 * window path).
 */
static __always_inline int kr_copy_key_xdp(struct xdp_md *ctx, __u32 off, __u32 len,
					   struct kr_scratch *s)
{
	const __u8 *data = (const __u8 *)(long)ctx->data, *end = (const __u8 *)(long)ctx->data_end;
	const __u8 *p, *q;
	__u32 i, j, k;

	if (off >= 2 * KR_MAX_HDR_OFF || len > KR_MAX_KEY_LEN)
		return -1;
	p = data + kr_idx(off, 2 * KR_MAX_HDR_OFF - 1);
	for (i = 0; i < KR_KEY_BUF / 8; i++) {
		if (i * 8 >= len)
			return 0;
		q = p + i * 8;
		asm volatile("" : "+r"(q));
		if (q + 8 > end)
			break;
		*(__u64 *)((__u8 *)s + KR_PAYLOAD_WINDOW + kr_idx(i * 8, KR_KEY_MASK & ~7u)) =
			*(const __u64 *)q;
	}
	for (k = 0; k < 8; k++) {
		j = i * 8 + k;
		if (j >= len)
			return 0;
		q = p + kr_idx(j, KR_KEY_MASK);
		asm volatile("" : "+r"(q));
		if (q + 1 > end)
			return -1;
		s->key[kr_idx(j, KR_KEY_MASK)] = *q;
	}
	return -1;	/* more than 8 key bytes past the linear data */
}

/* Keyed hash of the key in s->key (services with KR_SVC_F_KEYED_HASH): SipHash-1-3 with
 * the secret of kr_hash_key, folded to 32 bits. */
__noinline int kr_keyed_hash(const struct kr_scratch *s, __u32 len)
{
	const struct kr_hash_secret *k;
	__u32 zero = 0;

	if (!s)
		return 0;
	k = bpf_map_lookup_elem(&kr_hash_key, &zero);
	if (!k)
		return 0;
	return (int)kr_siphash13_32(s->key, len & 0xff, k);
}

/* The ring stage (kr_ring.h): slot, bucket lookup, failover walk.  0 or a reason.  XDP
 * inlines it: a global function's call and return cost ~7 ns a packet here (a return goes
 * through the kernel's return thunk; issue 14); the failover walk stays a global function
 * (kr_ring_walk_slow).  TC calls it as the global function kr_route(): inlined there, its
 * frame joins the TC program's, over the 512-byte stack of three frames.  The stage itself
 * is the program's, kr_program_route(), defined after this header (keyrouter.bpf.c: the
 * ring stage of kr_ring.h). */
static __always_inline int kr_program_route(__u32 ring_id, __u32 subset, __u32 key_hash,
					    __u32 bytes, struct kr_route *out);

static __always_inline int kr_route_inline(__u32 ring_id, __u32 subset, __u32 key_hash,
					   __u32 bytes, struct kr_route *out)
{
	if (!out)
		return KR_ROUTE_BAD_IMAGE;
	return kr_program_route(ring_id, subset, key_hash, bytes, out);
}

__noinline int kr_route(__u32 ring_id, __u32 subset, __u32 key_hash, __u32 bytes,
			struct kr_route *out)
{
	return kr_route_inline(ring_id, subset, key_hash, bytes, out);
}

/* ---- stages ------------------------------------------------------------------------ */

static __always_inline int kr_pass(struct kr_state *st)
{
	st->cnt->passed++;
	return KR_ACT_PASS;
}

/* A service policy (pass/drop) for a packet we could not route. */
static __always_inline int kr_policy(struct kr_state *st, __u8 policy, __u64 *dropped_reason)
{
	if (policy == KR_POLICY_DROP) {
		st->cnt->dropped++;
		(*dropped_reason)++;
		return KR_ACT_DROP;
	}
	return kr_pass(st);
}

/* Bytes the parser can read at most (headers up to KR_MAX_HDR_OFF, then an IPv6 header). */
#define KR_TC_PULL_MAX	(KR_MAX_HDR_OFF + KR_IPV6_HLEN)

static __always_inline int kr_stage_parse(void *ctx, const bool xdp, struct kr_state *st)
{
	int rc;

	if (xdp) {	/* inline: one call less per packet (TC keeps its global function) */
		struct xdp_md *x = ctx;

		rc = kr_parse_l4((const __u8 *)(long)x->data, (const __u8 *)(long)x->data_end,
				 &st->pkt, 0);

	} else {
		rc = kr_parse_tc(ctx, &st->pkt);
	}

	if (!xdp && rc == KR_PARSE_ERROR) {
		struct __sk_buff *skb = ctx;

		/* Headers beyond the first pull (deep IPv6 extension headers in a non-linear
		 * skb): pull everything the parser can read and parse again, so TC sees what
		 * XDP sees.  Only on this error path: the common case pulls 256 bytes. */
		if (skb->data_end - skb->data < skb->len &&
		    !bpf_skb_pull_data(skb, skb->len < KR_TC_PULL_MAX ? skb->len : KR_TC_PULL_MAX)) {
			__builtin_memset(&st->pkt, 0, sizeof(st->pkt));
			rc = kr_parse_tc(ctx, &st->pkt);
		}
	}

	switch (rc) {
	case KR_PARSE_OK:
		if (!xdp && st->pkt.proto == KR_IPPROTO_TCP)
			return KR_ACT_TCP;
		return KR_ACT_CONTINUE;
	case KR_PARSE_FRAGMENT:
		st->cnt->fragment++;
		break;
	case KR_PARSE_NOT_OURS:
		st->cnt->passed_nomatch++;
		break;
	default:
		st->cnt->parse_error++;
		break;
	}
	return kr_pass(st);
}

/* Does UDP port p (host order) have only wildcard services (kr_service_ports)? */
static __always_inline int kr_port_no_exact(__u32 p)
{
	const struct kr_service_ports *sp;
	__u32 zero = 0;

	sp = bpf_map_lookup_elem(&kr_service_ports, &zero);
	return sp && ((sp->no_exact[(p >> 6) & (KR_PORT_WORDS - 1)] >> (p & 63)) & 1);
}

/* Port p's wildcard service from kr_port_wild / kr_wild_svcs (two array lookups the
 * verifier inlines), or NULL: then kr_services decides. */
static __always_inline const struct kr_service *kr_port_wildcard(__u32 p)
{
	const __u32 *w = bpf_map_lookup_elem(&kr_port_wild, &p);
	__u32 i;

	if (!w || !*w)
		return NULL;
	i = *w - 1;
	return bpf_map_lookup_elem(&kr_wild_svcs, &i);
}

/* *d = *s in 8-byte words (both 8-byte aligned: a map value, the scratch): 5 loads and
 * stores where the struct's 4-byte alignment made clang copy 10 words of 4. */
static __always_inline void kr_svc_copy(struct kr_service *d, const struct kr_service *s)
{
	__u64 *dw = (__u64 *)d;
	const __u64 *sw = (const __u64 *)s;
	int i;

	_Static_assert(sizeof(*d) % 8 == 0, "kr_service: whole 8-byte words");
	for (i = 0; i < (int)(sizeof(*d) / 8); i++)
		dw[i] = sw[i];
}

/* (VIP, port, protocol) exactly, else the port's wildcard entry.  The lookup key is built
 * only for a hash lookup, its port from the port in a register (a 16-bit load of the port's
 * two bytes in kr_pkt, stored separately, waited for both stores: -2 ns a packet, issue 14).
 * The port tables (kr_service_ports, kr_port_wild) are UDP's: TCP looks in kr_services. */
/* TCP: (VIP, port, TCP), else the port's wildcard (VIP 0, family 0), the key in the flow
 * scratch (the UDP path's key is on the stack, which has no room for a second one). */
static __always_inline const struct kr_service *kr_tcp_service(struct kr_state *st, __u32 port,
							      const __u32 *zero)
{
	struct kr_flow_scratch *fs;
	const struct kr_service *svc;
	int i;

	fs = bpf_map_lookup_elem(&kr_flow_scratch, zero);
	if (!fs)
		return NULL;
	for (i = 0; i < 16; i++)
		fs->svc.addr[i] = st->pkt.dst[i];
	fs->svc.port = bpf_htons(port);
	fs->svc.proto = KR_IPPROTO_TCP;
	fs->svc.family = st->pkt.family;
	svc = bpf_map_lookup_elem(&kr_services, &fs->svc);
	if (svc)
		return svc;
	for (i = 0; i < 16; i++)
		fs->svc.addr[i] = 0;
	fs->svc.family = 0;
	return bpf_map_lookup_elem(&kr_services, &fs->svc);
}

static __always_inline int kr_stage_service(struct kr_state *st, const bool tcp,
					    const __u32 *zero)
{
	struct kr_service_key k;
	const struct kr_service *svc = NULL;
	__u32 port = (__u32)st->pkt.dport[0] << 8 | st->pkt.dport[1];
	int i;

	if (tcp)
		svc = kr_tcp_service(st, port, zero);
	else if (!kr_port_no_exact(port)) {
		for (i = 0; i < 16; i++)
			k.addr[i] = st->pkt.dst[i];
		k.port = bpf_htons(port);
		k.proto = KR_IPPROTO_UDP;
		k.family = st->pkt.family;
		svc = bpf_map_lookup_elem(&kr_services, &k);
	}
	if (!svc && !tcp)
		svc = kr_port_wildcard(port);
	if (!svc && !tcp) {
		for (i = 0; i < 16; i++)
			k.addr[i] = 0;
		k.port = bpf_htons(port);
		k.proto = KR_IPPROTO_UDP;
		k.family = 0;
		svc = bpf_map_lookup_elem(&kr_services, &k);
	}
	if (!svc) {
		st->cnt->passed_nomatch++;
		return kr_pass(st);
	}
	/* Copied into the per-CPU scratch (not onto the stack: the stack is full), so the
	 * rest of the program sees one pointer type: with the map value of kr_services or
	 * of kr_wild_svcs the verifier would check everything after this twice. */
	kr_svc_copy(&st->s->svc, svc);
	return KR_ACT_CONTINUE;
}

static __always_inline void kr_trace(struct kr_state *st, int ring_rc)
{
	__u32 i;

	if (!kr_cfg_trace)
		return;
	kr_trace_last.seq++;
	kr_trace_last.status = KR_KEY_OK;
	kr_trace_last.key_len = st->klen;
	kr_trace_last.key_hash = st->hash;
	kr_trace_last.ring_rc = ring_rc;
	kr_trace_last.route = st->route;
	for (i = 0; i < KR_KEY_BUF; i++)
		kr_trace_last.key[i] = st->s->key[i];
}

/* A packet whose key was not found (status): recorded with an empty key. */
static __always_inline void kr_trace_miss(int status)
{
	if (!kr_cfg_trace)
		return;
	kr_trace_last.seq++;
	kr_trace_last.status = status;
	kr_trace_last.key_len = 0;
	kr_trace_last.key_hash = 0;
	kr_trace_last.ring_rc = 0;
}

/* Copy len (1..KR_PAYLOAD_WINDOW) payload bytes at off to buf; 0 copies nothing. */
static __always_inline long kr_load_window(void *ctx, const bool xdp, __u32 off,
					   struct kr_scratch *s, __u64 len)
{
	if (len == 0)
		return 0;
	/* two separate tests the compiler cannot merge into one on a copy of len */
	asm volatile("" : "+r"(len));
	if (len > KR_PAYLOAD_WINDOW)
		return -1;
	if (xdp) {
		if (!kr_copy_window_xdp(ctx, off, len, s))
			return 0;
		return bpf_xdp_load_bytes(ctx, off, s->win, len);
	}
	return bpf_skb_load_bytes(ctx, off, s->win, len);
}

/*
 * XDP, a `payload` service without a delimiter: the key's span (kr_payload_span(), as
 * kr_key_payload_span() finds it in the window: the same answers), the key copied
 * straight from the frame into s->key: no window copy, no second copy.  Returns the key
 * status, or -1 when the key is not all in the frame's linear data (the caller then takes
 * the window path).
 */
static __always_inline int kr_key_span_xdp(struct xdp_md *ctx, struct kr_state *st)
{
	__u32 off = 0, len = 0;
	int rc = kr_payload_span(KR_SVC(st), &st->pkt, &off, &len);

	st->klen = 0;
	if (rc != KR_KEY_OK)
		return rc;
	if (kr_copy_key_xdp(ctx, st->pkt.pl_off + off, len, st->s))
		return -1;
	st->klen = len;
	return KR_KEY_OK;
}

/* Copy the payload window, extract the key, hash it. */
static __always_inline int kr_stage_key(void *ctx, const bool xdp, struct kr_state *st)
{
	bool span = KR_SVC(st)->key_type == KR_KEY_PAYLOAD &&
		    (KR_SVC(st)->payload_len || !(KR_SVC(st)->flags & KR_SVC_F_PAYLOAD_DELIM));
	__u32 wlen;
	long err;
	int rc = -1;

	if (xdp && span)
		rc = kr_key_span_xdp(ctx, st);
	if (rc < 0) {
		wlen = kr_key_window(KR_SVC(st), &st->pkt);
		err = kr_load_window(ctx, xdp, st->pkt.pl_off, st->s, wlen);
		if (err) {
			rc = KR_KEY_NOT_FOUND;
		} else if (span) {
			/* a fixed span of the payload: inline (no call); the scans stay in
			 * kr_extract */
			rc = kr_key_payload_span(KR_SVC(st), &st->pkt, st->s, wlen, &st->klen);
		} else {
			rc = kr_extract(KR_SVC(st), &st->pkt, st->s, wlen);
			st->klen = (rc >> 8) & 0xffff;
			rc &= 0xff;
		}
	}
	if (rc == KR_KEY_OK && st->klen > KR_MAX_KEY_LEN)
		rc = KR_KEY_TOO_LONG;
	if (rc != KR_KEY_OK)
		kr_trace_miss(rc);
	switch (rc) {
	case KR_KEY_OK:
		if (KR_SVC(st)->flags & KR_SVC_F_KEYED_HASH)
			st->hash = (__u32)kr_keyed_hash(st->s, st->klen);
		else
			st->hash = kr_crc32_key(st->s->key, st->klen);
		return KR_ACT_CONTINUE;
	case KR_KEY_NOT_FOUND:
		st->cnt->no_key++;
		st->why = KR_TW_NO_KEY;
		return kr_policy(st, KR_SVC(st)->policy_no_key, &st->cnt->dropped_no_key);
	case KR_KEY_TOO_LONG:
		st->cnt->key_too_long++;
		st->why = KR_TW_KEY_TOO_LONG;
		return kr_policy(st, KR_SVC(st)->policy_too_long, &st->cnt->dropped_key_too_long);
	default:
		st->cnt->bad_service++;
		st->why = KR_TW_BAD_SERVICE;
		return kr_pass(st);
	}
}

/* The ring stage's outcome rc (enum kr_route_reason): counted, traced (key: the debug
 * trace of the key, kr_cfg_trace), the policy when it did not route. */
static __always_inline int kr_ring_verdict(struct kr_state *st, int rc, const bool key)
{
	if (key)
		kr_trace(st, rc);
	switch (rc) {
	case KR_ROUTE_OK:
		if (kr_route_failover(&st->route))
			st->cnt->failover_walks++;
		return KR_ACT_CONTINUE;
	case KR_ROUTE_ALL_DOWN:
		st->cnt->all_down++;
		break;
	case KR_ROUTE_WALK_LIMIT:
		st->cnt->walk_limit++;
		break;
	case KR_ROUTE_BAD_IMAGE:
		st->cnt->bad_image++;
		break;
	default:
		st->cnt->no_ring++;
		break;
	}
	st->why = KR_TW_NO_ROUTE | (__u32)rc << 8;
	return kr_policy(st, KR_SVC(st)->policy_no_route, &st->cnt->dropped_no_route);
}

/* Ring slot, point, failover walk (kr_ring.h). */
static __always_inline int kr_stage_ring(const bool xdp, struct kr_state *st)
{
	const struct kr_service *svc = KR_SVC(st);
	int rc;

	/* a QUIC connection ID must not move while the connection lives: no spill, no
	 * replicas for its keys */
	st->route.flags = svc->key_type == KR_KEY_QUIC ? KR_RT_F_NOSPILL : 0;
	if (xdp)
		rc = kr_route_inline(svc->ring_id, svc->subset_id, st->hash, st->frame_len,
				     &st->route);
	else
		rc = kr_route(svc->ring_id, svc->subset_id, st->hash, st->frame_len, &st->route);
	if (rc == KR_ROUTE_HOT)		/* a hot key: the replica of this client */
		rc = kr_ring_replica(&st->pkt, st->frame_len, &st->route);
	return kr_ring_verdict(st, rc, true);
}

/*
 * TCP: the flow's tuple (source address and port, whatever the service's extractor: its
 * UDP packets keep theirs) into s->key, and its crc32.  A global function (the verifier
 * checks it once, apart from the UDP pipeline, whose program is close to the verifier's
 * limit) that calls none: its frame is the last of the three the stack limit counts.
 */
__noinline int kr_tcp_key(const struct kr_pkt *pkt, struct kr_scratch *s)
{
	__u32 klen = 0;

	if (!pkt || !s)
		return 0;
	kr_key_tuple(pkt, s, &klen);
	return (int)kr_crc32_key(s->key, klen);
}

/* A TCP segment: its flow's entry, else the ring (never spilled, no replicas: the ring
 * stage never answers KR_ROUTE_HOT here); a SYN the ring routed writes its embryonic
 * entry. */
static __always_inline int kr_stage_tcp(const bool xdp, struct kr_state *st)
{
	const struct kr_service *svc = KR_SVC(st);
	__u32 id = svc->stats_id;
	int rc = KR_ROUTE_OK;

	if (!kr_flow_find(&st->pkt, &st->route, id < KR_MAX_SVC_STATS ? id : 0)) {
		st->hash = (__u32)kr_tcp_key(&st->pkt, st->s);
		st->klen = st->pkt.family == 6 ? 18 : 6;	/* the tuple */
		if (svc->flags & KR_SVC_F_KEYED_HASH)
			st->hash = (__u32)kr_keyed_hash(st->s, st->klen);
		st->route.flags = KR_RT_F_NOSPILL | KR_RT_F_TCP |
				  (kr_tcp_is_syn(st->pkt.tcp_flags) ? KR_RT_F_SYN : 0);
		if (xdp)
			rc = kr_route_inline(svc->ring_id, svc->subset_id, st->hash,
					     st->frame_len, &st->route);
		else
			rc = kr_route(svc->ring_id, svc->subset_id, st->hash, st->frame_len,
				      &st->route);
		if (rc == KR_ROUTE_OK && (st->route.flags & KR_RT_F_SYN))
			kr_flow_syn(&st->route);
	}
	return kr_ring_verdict(st, rc, false);	/* (a TCP key is its tuple: not traced) */
}

/* QUIC-LB (kr_quic_lb_stage.h): true when the DCID's server ID chose the backend (no
 * ring lookup); false: the ring decides, on the DCID hashed by kr_stage_key. */
static __always_inline bool kr_stage_quic_lb(struct kr_state *st)
{
	__u32 wlen;

	if (KR_SVC(st)->key_type != KR_KEY_QUIC || !(KR_SVC(st)->flags & KR_SVC_F_QUIC_LB))
		return false;
	wlen = kr_key_window(KR_SVC(st), &st->pkt);
	if (kr_quic_lb(st->s, wlen, KR_SVC(st)->qlb_id | (__u32)KR_SVC(st)->qlb_tag << 16,
		       &st->route) != KR_QLB_ROUTED)
		return false;
	kr_trace(st, KR_ROUTE_OK);
	st->why = KR_TW_QUIC_LB;
	return true;
}

/* The ingress device, read where forwarding needs it (XDP: three dependent loads, which
 * the packets that are not forwarded do not pay). */
static __always_inline __u32 kr_ingress(void *ctx, const bool xdp)
{
	if (xdp)
		return ((struct xdp_md *)ctx)->ingress_ifindex;
	return ((struct __sk_buff *)ctx)->ifindex;
}

static __always_inline int kr_stage_forward(void *ctx, const bool xdp, struct kr_state *st)
{
	__u32 id = st->route.backend_id;
	const struct kr_backend *be = bpf_map_lookup_elem(&kr_backends, &id);
	struct kr_backend_stats *bs;
	int act = KR_ACT_FAIL;

	if (be && KR_SVC(st)->fwd_mode == KR_FWD_L2)
		act = kr_fwd_l2(ctx, xdp, kr_ingress(ctx, xdp), be);
	else if (be && KR_SVC(st)->fwd_mode == KR_FWD_IPIP)
		act = kr_fwd_ipip(ctx, xdp, kr_ingress(ctx, xdp), &st->pkt, KR_SVC(st), be,
				  st->hash);
	if (act == KR_ACT_FAIL) {
		st->cnt->fwd_error++;
		st->why = KR_TW_FWD_ERROR;
		return kr_pass(st);
	}
	if (act == KR_ACT_DROP) {
		st->cnt->dropped++;
		st->why = KR_TW_FWD_DROP;
		return act;
	}
	st->cnt->routed++;
	bs = bpf_map_lookup_elem(&kr_backend_stats, &id);
	if (bs) {
		bs->packets++;
		bs->bytes += st->frame_len;
	}
	return act;
}

/* A packet of a service after its service stage: key, QUIC-LB, ring, forwarding; a TCP
 * segment: its flow, else the ring, forwarding. */
static __always_inline int kr_core_service(void *ctx, const bool xdp, const bool tcp,
					   struct kr_state *st)
{
	int act;

	if (tcp) {
		act = kr_stage_tcp(xdp, st);
		if (act != KR_ACT_CONTINUE)
			return act;
	} else {
		act = kr_stage_key(ctx, xdp, st);
		if (act != KR_ACT_CONTINUE)
			return act;
		if (!kr_stage_quic_lb(st)) {
			act = kr_stage_ring(xdp, st);
			if (act != KR_ACT_CONTINUE)
				return act;
		}
	}
	return kr_stage_forward(ctx, xdp, st);
}

/* The verdict of a packet of a service (enum kr_trace_verdict). */
static __always_inline __u32 kr_verdict(int act)
{
	return act == KR_ACT_DROP ? KR_TV_DROPPED : act == KR_ACT_PASS ? KR_TV_PASSED :
	       KR_TV_ROUTED;
}

/* Per-service counters, once the packet's fate is known: one lookup a packet. */
static __always_inline void kr_svc_count(struct kr_state *st, __u32 verdict, __u32 *key)
{
	struct kr_svc_stats *ss;
	__u32 why = st->why & 0xff;

	*key = KR_SVC(st)->stats_id < KR_MAX_SVC_STATS ? KR_SVC(st)->stats_id : 0;
	ss = bpf_map_lookup_elem(&kr_svc_stats, key);
	if (!ss)
		return;
	ss->packets++;
	if (verdict == KR_TV_ROUTED) {
		ss->routed++;
		ss->bytes += st->frame_len;
		if (why == KR_TW_QUIC_LB)
			ss->quic_lb_routed++;
		else if (kr_route_failover(&st->route))
			ss->failover_walks++;
		return;
	}
	if (verdict == KR_TV_DROPPED)
		ss->dropped++;
	else
		ss->passed++;
	switch (why) {
	case KR_TW_NO_KEY:
		ss->no_key++;
		if (verdict == KR_TV_DROPPED)
			ss->dropped_no_key++;
		break;
	case KR_TW_KEY_TOO_LONG:
		ss->key_too_long++;
		if (verdict == KR_TV_DROPPED)
			ss->dropped_key_too_long++;
		break;
	case KR_TW_NO_ROUTE:
		ss->no_route++;
		if (verdict == KR_TV_DROPPED)
			ss->dropped_no_route++;
		break;
	case KR_TW_FWD_ERROR:
		ss->fwd_error++;
		break;
	case KR_TW_BAD_SERVICE:
		ss->bad_service++;
		break;
	default:
		break;
	}
}

/* The run-time trace (kr_trace.h): when kr_trace_ctl is off, one inlined array lookup,
 * one load and a branch. */
static __always_inline void kr_trace_decision(struct kr_state *st, __u32 verdict, __u32 *key)
{
#ifndef KR_NO_TRACE
	const struct kr_trace_ctl *c;

	*key = 0;
	c = bpf_map_lookup_elem(&kr_trace_ctl, key);
	if (!c || !c->on)
		return;
	/* 1 in c->sample: random gaps, uniform on 1..2 * sample - 1 (mean: sample), counted
	 * down in the per-CPU scratch, so an unsampled packet costs a decrement, not a call */
	if (c->sample > 1) {
		if (st->s->trace_gap > 1) {
			st->s->trace_gap--;
			return;
		}
		st->s->trace_gap = 1 + bpf_get_prandom_u32() % (2 * c->sample - 1);
	}
	st->route.key_hash = st->hash;	/* (a QUIC-LB route did not set it) */
	/* verdict, why, route reason, key length (0 when too long): one word */
	kr_trace_emit(c, st->s, &st->route, st->frame_len,
		      verdict | (st->why & 0xffff) << 8 |
		      (st->klen > KR_MAX_KEY_LEN ? 0 : st->klen) << 24);
#endif
}

/* After the parse: service, the rest, counters, trace. */
static __always_inline int kr_core_l4(void *ctx, const bool xdp, const bool tcp,
				      struct kr_state *st, __u32 *key /* 0 */)
{
	int act = kr_stage_service(st, tcp, key);

	if (act != KR_ACT_CONTINUE)
		return act;
	act = kr_core_service(ctx, xdp, tcp, st);
	kr_svc_count(st, kr_verdict(act), key);
	kr_trace_decision(st, kr_verdict(act), key);
	return act;
}

/* The whole pipeline; `xdp` is a constant, so each program keeps only its own helpers. */
static __always_inline int kr_core(void *ctx, const bool xdp)
{
	struct kr_state st;
	__u32 zero = 0;
	int act;

	/* what the stages read before they write it (the parser adds to pkt; the rest of
	 * the state is written first): not the whole state, 17 stores a packet */
	__builtin_memset(&st.pkt, 0, sizeof(st.pkt));
	__builtin_memset(&st.route, 0, sizeof(st.route));
	st.klen = 0;
	st.hash = 0;
	st.why = KR_TW_ROUTED;

	st.cnt = bpf_map_lookup_elem(&kr_counters, &zero);
	st.s = bpf_map_lookup_elem(&kr_scratch_buf, &zero);
	if (!st.cnt || !st.s)
		return KR_ACT_PASS;
	st.cnt->seen++;
	if (xdp) {
		struct xdp_md *x = ctx;

		st.frame_len = x->data_end - x->data;
	} else {
		struct __sk_buff *skb = ctx;

		st.frame_len = skb->len;
		/* headers in the linear part, so direct packet access sees them; if the pull
		 * fails the parser sees only the linear part: a truncated frame, passed and
		 * counted as a parse error */
		if (skb->data_end - skb->data < skb->len)
			(void)bpf_skb_pull_data(skb, skb->len < 256 ? skb->len : 256);
	}
	act = kr_stage_parse(ctx, xdp, &st);
	if (act == KR_ACT_TCP)	/* a path of its own: the verifier checks it apart */
		return kr_core_l4(ctx, xdp, true, &st, &zero);
	if (act != KR_ACT_CONTINUE)
		return act;
	return kr_core_l4(ctx, xdp, false, &st, &zero);
}

/* The verdicts of the two entry points. */
static __always_inline int kr_xdp_verdict(struct xdp_md *ctx)
{
	switch (kr_core(ctx, true)) {
	case KR_ACT_DROP:
		return XDP_DROP;
	case KR_ACT_TX:
		return XDP_TX;
	case KR_ACT_REDIRECT:
		return XDP_REDIRECT;
	default:
		return XDP_PASS;
	}
}

static __always_inline int kr_tc_verdict(struct __sk_buff *skb)
{
	switch (kr_core(skb, false)) {
	case KR_ACT_DROP:
		return TC_ACT_SHOT;
	case KR_ACT_TX:
	case KR_ACT_REDIRECT:
		return TC_ACT_REDIRECT;
	default:
		return TC_ACT_OK;
	}
}

#endif /* KR_DATAPATH_H */
