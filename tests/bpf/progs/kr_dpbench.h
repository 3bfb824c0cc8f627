/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Benchmark builds of the data path program (tests/bench/bench_datapath.c), a template:
 * tests/bpf/progs/kr_dpbench_*.bpf.c define KR_BENCH_VARIANT and #include this file, which
 * builds the shipped pipeline (bpf/kr_datapath.h: parse, service, payload key, CRC-32, ring
 * stage, l2 forward, counters, with the same XDP and TC entry points as keyrouter.bpf.c)
 * with the variant's ring stage, so the programs differ from the shipped one ONLY in the
 * ring stage, kr_program_route():
 *   KR_BENCH_FULL   the real ring stage (kr_ring_route_bytes)
 *   KR_BENCH_NONE   (a) no ring lookup: backend id = 1 + (hash & 15)
 *   KR_BENCH_LIMIT  (c) (a) + one read of a random element of the published image map of
 *                   ring 0 slot 0 (as large as the ring): outer map, header, one chunk.
 *                   Nothing waits for the value read, so the CPU may overlap the reads of
 *                   consecutive packets (the test run repeats the program back to back;
 *                   (d) shows whether it does)
 *   KR_BENCH_DEP    (d) (c), but the next packet's key waits for the value read (a zero
 *                   computed from it is added to the counter): one read's whole latency
 *   KR_BENCH_IDX_DEP (e) (d) after one random read of the image's bucket index (chunks
 *                   [idx_chunk, pt_chunk): the index, and the backend table when it has
 *                   chunks of its own, which the benchmark's 16-backend rings do not)
 *                   whose value the second read's address waits for: the latency floor
 *                   of any lookup that reads an index, then points
 *   KR_BENCH_IDX_WIN (e) with the shipped lookup's window in place of the one word: KR_WINDOW
 *                   points from a random place of the chunk, counted (kr_ptr_count)
 *   KR_BENCH_IDX_LINE (e) with the least window in place of the one word: the KR_BENCH_LINE_PTS
 *                   (10) points whose hashes lie in one 64-byte cache line of the chunk
 *                   (aligned: the map value's offset in struct bpf_array, read by CO-RE),
 *                   counted.  What an index-then-points lookup would cost whose guess always
 *                   fell within a line of the answer; with KR_BENCH_IDX_SCALE = k > 1 the
 *                   index read is from a region k times the ring's index (points chunks
 *                   stand in for it): what a k times finer index would cost to read
 *   KR_BENCH_FIND   the shipped kr_image_find() alone (index pair, guess, windows, fallback),
 *                   backend from the answer's position: the full stage without the
 *                   control word, the backend table and state, spill and slot counters
 *   KR_BENCH_PLAIN  (b) control word, slot, a plain lower-bound binary search over the
 *                   image points (one chunk lookup per step), backend table, backend state
 * The key-varying step is the same in every variant (kr_bench_key(), at the start of the
 * XDP program): it writes a per-run counter (.bss kr_bench_ctr, reset by userspace before
 * each run) into the first 4 bytes of the UDP payload, so every packet of a test run has a
 * different key (BPF_PROG_TEST_RUN repeats the program on one buffer).
 */
#ifndef KR_DPBENCH_H
#define KR_DPBENCH_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define KR_BENCH_FULL	1
#define KR_BENCH_NONE	2
#define KR_BENCH_LIMIT	3
#define KR_BENCH_PLAIN	4
#define KR_BENCH_DEP	5
#define KR_BENCH_IDX_DEP	6
#define KR_BENCH_IDX_WIN	7
#define KR_BENCH_IDX_LINE	8
#define KR_BENCH_FIND	9

/* Where the bench packet's payload starts: Ethernet (14) + IPv4 without options (20) +
 * UDP (8).  Packets of another shape are left alone. */
#define KR_BENCH_PL_OFF	42

__u32 kr_bench_ctr;
/* Where in the payload the counter goes (0..255; default the first 4 bytes).  The QUIC-LB
 * benchmark (tests/bench/bench_quic_lb.c) moves it into a CID's ring key or behind the
 * CID. */
__u32 kr_bench_key_off;

static __always_inline void kr_bench_key(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	__u32 *k = data + KR_BENCH_PL_OFF + (kr_bench_key_off & 0xff);

	if ((void *)(k + 1) <= data_end)
		*k = kr_bench_ctr++;
}

/* The pipeline: after the .bss variables above and before the .data one below, so the
 * builds' sections keep the order of the shipped object's (.rodata, .maps, then .data). */
#include "kr_datapath.h"

/* The backend ids (a) and (c)-(e) route to: 1 + (hash & mask).  Default 15 (16 backends, hot
 * in the caches); xdp_forward also sets 2047, the 2048 backends of its rings, so that the
 * backend's state, MAC and counters are read at random as for the real lookup's answers. */
__u32 kr_bench_backend_mask = 15;

/* Variants that ignore an argument (`bytes`, `ring_id`) still have to receive it: otherwise clang passes garbage in
 * its register, and the verifier rejects a non-scalar argument of a global function. */
#define KR_BENCH_USE(x) asm volatile("" : : "r"(x))

#if KR_BENCH_VARIANT == KR_BENCH_NONE
static __always_inline int kr_bench_route(__u32 ring_id, __u32 h, __u32 bytes,
					  struct kr_route *out)
{
	KR_BENCH_USE(bytes);
	KR_BENCH_USE(ring_id);
	out->key_hash = h;
	out->slot = 0;
	out->image_index = out->first_index = out->walk = 0;
	out->backend_id = 1 + (h & kr_bench_backend_mask);
	return KR_ROUTE_OK;
}
#elif KR_BENCH_VARIANT == KR_BENCH_LIMIT || KR_BENCH_VARIANT == KR_BENCH_DEP || \
	KR_BENCH_VARIANT == KR_BENCH_IDX_DEP || KR_BENCH_VARIANT == KR_BENCH_IDX_WIN || \
	KR_BENCH_VARIANT == KR_BENCH_IDX_LINE || KR_BENCH_VARIANT == KR_BENCH_FIND
#if KR_BENCH_VARIANT == KR_BENCH_IDX_LINE
#include <bpf/bpf_core_read.h>
#ifndef KR_BENCH_IDX_SCALE
#define KR_BENCH_IDX_SCALE	1
#endif
#define KR_BENCH_LINE_PTS	10	/* 6-byte points whose 4 hash bytes fit any 64-byte line */
#endif
static __always_inline int kr_bench_route(__u32 ring_id, __u32 h, __u32 bytes,
					  struct kr_route *out)
{
	const struct kr_image_hdr *hdr;
	__u32 key = ring_id * 2, zero = 0, c;
	const __u32 *w;
	void *ring;

	KR_BENCH_USE(bytes);
	out->key_hash = h;
	out->slot = 0;
	out->image_index = out->first_index = out->walk = 0;
	ring = bpf_map_lookup_elem(&kr_rings, &key);
	if (!ring)
		return KR_ROUTE_NO_RING;
	hdr = bpf_map_lookup_elem(ring, &zero);
	if (!hdr)
		return KR_ROUTE_BAD_IMAGE;
#if KR_BENCH_VARIANT == KR_BENCH_FIND
	/* the shipped search alone: the backend from the answer's position */
	(void)w;
	if (hdr->magic != KR_IMAGE_MAGIC || kr_image_find(ring, hdr, h, &c, &key))
		return KR_ROUTE_BAD_IMAGE;	/* (key: the point's ring-local backend) */
	out->image_index = out->first_index = c;
	out->backend_id = 1 + ((c ^ h) & kr_bench_backend_mask);
	return KR_ROUTE_OK;
#else
#if KR_BENCH_VARIANT == KR_BENCH_IDX_DEP || KR_BENCH_VARIANT == KR_BENCH_IDX_WIN || \
	KR_BENCH_VARIANT == KR_BENCH_IDX_LINE
	/* a random index word first; the points read's address waits for its value */
#if KR_BENCH_VARIANT == KR_BENCH_IDX_LINE && KR_BENCH_IDX_SCALE > 1
	c = (hdr->pt_chunk - hdr->idx_chunk) * KR_BENCH_IDX_SCALE;	/* a larger index's size */
	c = hdr->pt_chunk + (__u32)(((__u64)kr_mix32(h ^ 0x9e3779b9) *
				     kr_min_u32(c, hdr->nchunks - hdr->pt_chunk)) >> 32);
#else
	c = hdr->idx_chunk + (__u32)(((__u64)kr_mix32(h ^ 0x9e3779b9) *
				       (hdr->pt_chunk - hdr->idx_chunk)) >> 32);
#endif
	w = bpf_map_lookup_elem(ring, &c);
	if (!w)
		return KR_ROUTE_BAD_IMAGE;
	c = ((h >> 16) * (KR_CHUNK_BYTES / 4)) >> 16;
	KR_BARRIER_VAR(c);
	c = w[c];
	asm volatile("%[c] &= 0" : [c] "+r"(c));	/* 0, once the value is there */
	h ^= c;
#endif
	c = (__u32)(((__u64)h * hdr->nchunks) >> 32);	/* a random chunk of the image */
	w = bpf_map_lookup_elem(ring, &c);
	if (!w)
		return KR_ROUTE_BAD_IMAGE;
	/* a random word of the whole chunk (so the reads cover the whole image); the answer
	 * depends on the value read */
#if KR_BENCH_VARIANT == KR_BENCH_IDX_LINE
	/* the points of one cache line: the value starts off = offsetof(struct bpf_array,
	 * value) bytes past a line (the array is page-aligned: vmalloc, or kmalloc of more
	 * than a page), so line-aligned places of the chunk are (64 - off % 64) % 64 + 64 j;
	 * the first point from there, and the 9 after it, have their hashes in that line */
	c = ((kr_mix32(h) & 0xffff) * (KR_CHUNK_BYTES / 64 - 2)) >> 16;
	c = (64 - (bpf_core_field_offset(struct bpf_array, value) & 63)) % 64 + 64 * c;
	c = ((c + 5) * 43691) >> 18;	/* ceil(c / 6): the first point starting there */
	c = kr_min_u32(c, KR_PTS_PER_CHUNK - KR_BENCH_LINE_PTS);
	KR_BARRIER_VAR(c);
	c &= KR_PTS_PER_CHUNK - 1;
	if (c > KR_PTS_PER_CHUNK - KR_BENCH_LINE_PTS)
		return KR_ROUTE_BAD_IMAGE;	/* never: a bound for the verifier */
	c = kr_ptr_count((const struct kr_point *)(const void *)w + c, h, KR_BENCH_LINE_PTS);
#elif KR_BENCH_VARIANT == KR_BENCH_IDX_WIN
	/* the shipped lookup's window instead of one word: KR_WINDOW points from a random
	 * place of the chunk, counted as kr_window_at() counts them */
	c = ((kr_mix32(h) & 0xffff) * (KR_PTS_PER_CHUNK - KR_WINDOW)) >> 16;
	KR_BARRIER_VAR(c);
	c = kr_ptr_count((const struct kr_point *)(const void *)w + c, h, KR_WINDOW);
#else
	c = ((kr_mix32(h) & 0xffff) * (KR_CHUNK_BYTES / 4)) >> 16;
	KR_BARRIER_VAR(c);	/* the shift's bound, not a rounded-up mask of it */
	c = w[c];
#endif
	out->backend_id = 1 + ((c ^ h) & kr_bench_backend_mask);
#if KR_BENCH_VARIANT == KR_BENCH_DEP || KR_BENCH_VARIANT == KR_BENCH_IDX_DEP || \
	KR_BENCH_VARIANT == KR_BENCH_IDX_WIN || KR_BENCH_VARIANT == KR_BENCH_IDX_LINE
	asm volatile("%[c] &= 0" : [c] "+r"(c));	/* 0, once the value is there */
	kr_bench_ctr += c;
#endif
	return KR_ROUTE_OK;
#endif /* KR_BENCH_FIND */
}
#elif KR_BENCH_VARIANT == KR_BENCH_PLAIN
#include "kr_plain_lb.h"

static __always_inline int kr_bench_route(__u32 ring_id, __u32 h, __u32 bytes,
					  struct kr_route *out)
{
	const struct kr_image_hdr *hdr;
	struct kr_subset_key sk = { 0 };
	__u32 key, idx, ph, b, id, zero = 0;
	const __u64 *ctl;
	void *ring;
	int up;

	KR_BENCH_USE(bytes);
	out->key_hash = h;
	out->slot = 0;
	out->backend_id = out->image_index = out->first_index = out->walk = 0;
	ctl = bpf_map_lookup_elem(&kr_ring_ctl, &ring_id);
	if (!ctl)
		return KR_ROUTE_NO_RING;
	out->slot = kr_ctl_slot(*ctl, h);
	key = ring_id * 2 + out->slot;
	ring = bpf_map_lookup_elem(&kr_rings, &key);
	if (!ring)
		return KR_ROUTE_NO_RING;
	hdr = bpf_map_lookup_elem(ring, &zero);
	if (!hdr)
		return KR_ROUTE_BAD_IMAGE;
	if (kr_plain_lb(ring, hdr, h, &idx) || kr_point_get(ring, hdr, idx, &ph, &b))
		return KR_ROUTE_BAD_IMAGE;
	up = kr_ring_backend_up(ring, hdr, b, &sk);
	id = sk.backend_id;
	if (up <= 0)
		return up < 0 ? KR_ROUTE_BAD_IMAGE : KR_ROUTE_ALL_DOWN;
	out->backend_id = id;
	out->image_index = out->first_index = idx;
	return KR_ROUTE_OK;
}
#else
static __always_inline int kr_bench_route(__u32 ring_id, __u32 h, __u32 bytes,
					  struct kr_route *out)
{
	return kr_ring_route_bytes(ring_id, h, bytes, out);
}
#endif

/* The variants have no subsets. */
static __always_inline int kr_program_route(__u32 ring_id, __u32 subset, __u32 key_hash,
					    __u32 bytes, struct kr_route *out)
{
	KR_BENCH_USE(subset);
	return kr_bench_route(ring_id, key_hash, bytes, out);
}

SEC("xdp")
int kr_xdp(struct xdp_md *ctx)
{
	kr_bench_key(ctx);
	return kr_xdp_verdict(ctx);
}

SEC("tc")
int kr_tc(struct __sk_buff *skb)
{
	return kr_tc_verdict(skb);
}

#endif /* KR_DPBENCH_H */
