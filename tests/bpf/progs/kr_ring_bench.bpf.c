// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark programs of the ring stage (tests/bench/bench_ring.c), run through
 * BPF_PROG_TEST_RUN with a large repeat count.  Every variant starts with the same tiny
 * stage, kr_bench_key(): it writes a new key into the packet from a per-run counter
 * (key = mix32(counter++ ^ seed): a bijection, so every packet of a run has a different
 * key), and reads it back from the packet as the key hash.  Then:
 *   bench_none   (a) no ring lookup: the answer is derived from the hash alone
 *   bench_limit  (c) (a) + one read of a random element of the published ring's own map
 *                    (as large as the ring): what no lookup can beat.  Nothing waits for
 *                    the value read, so the CPU runs on into the next packets while the
 *                    read is in flight: the reads of consecutive packets overlap
 *   bench_dep    (d) (c), but the next packet's key waits for the value read (it adds a
 *                    zero computed from it): one random read's whole latency per packet
 *   bench_idx_dep (e) (d) after one random read of the ring's bucket index, whose value
 *                    the second read's address waits for: the latency floor of any
 *                    index-then-points lookup
 *   bench_full   kr_ring_route(): control word, slot, bucket index, walk check, counters
 *   bench_plain  (b) as bench_full, but the point is found by a plain lower-bound binary
 *                    search over the image's points (one map lookup per step)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "kr_ring_test_kern_user.h"

/* The data path's backends map (backend id -> struct kr_backend), with room for every id. */
#define KR_BACKENDS_MAX_ENTRIES KR_MAX_BACKEND_IDS
#include "kr_backend_map.h"

#include "kr_ring.h"

__u32 kr_bench_ctr;		/* per-run counter: the userspace side resets it */
const volatile __u32 kr_bench_seed = 0;

/* The stage every variant shares: a new key in the packet, read back as the hash. */
static __always_inline struct kr_ring_test_pkt *kr_bench_key(struct xdp_md *ctx, __u32 *hash)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct kr_ring_test_pkt *p = data;

	if ((void *)(p + 1) > data_end)
		return NULL;
	p->key_hash = kr_mix32(kr_bench_ctr++ ^ kr_bench_seed);
	*hash = p->key_hash;
	return p;
}

SEC("xdp")
int bench_none(struct xdp_md *ctx)
{
	struct kr_ring_test_pkt *p;
	__u32 h;

	p = kr_bench_key(ctx, &h);
	if (!p)
		return XDP_ABORTED;
	p->route.backend_id = h & 7;
	p->reason = 0;
	return XDP_TX;
}

/* A random word of chunks [first, first + n) of the ring (h picks the chunk, then the word:
 * of the whole chunk, so the reads cover the whole range), or -1. */
static __always_inline int kr_bench_read(void *ring, __u32 first, __u32 n, __u32 h, __u32 *val)
{
	__u32 c = first + (__u32)(((__u64)h * n) >> 32);
	const __u32 *w;

	w = bpf_map_lookup_elem(ring, &c);
	if (!w)
		return -1;
	c = ((h & 0xffff) * (KR_CHUNK_BYTES / 4)) >> 16;
	KR_BARRIER_VAR(c);	/* the shift's bound, not a rounded-up mask of it */
	*val = w[c];
	return 0;
}

/* A value that is always 0 but that the compiler (and the CPU) must wait for x to compute. */
static __always_inline __u32 kr_bench_zero_of(__u32 x)
{
	asm volatile("%[x] &= 0" : [x] "+r"(x));
	return x;
}

/* The reference reads of bench_limit, bench_dep and bench_idx_dep: one random read of the
 * ring's whole map (after one of its index when idx_first, at an address that depends on
 * it); when dep, the next packet's key waits for the value read. */
static __always_inline int kr_bench_reads(struct xdp_md *ctx, int idx_first, int dep)
{
	const struct kr_image_hdr *hdr;
	struct kr_ring_test_pkt *p;
	__u32 h, key, v = 0, zero = 0;
	void *ring;

	p = kr_bench_key(ctx, &h);
	if (!p)
		return XDP_ABORTED;
	key = p->ring_id * 2;
	ring = bpf_map_lookup_elem(&kr_rings, &key);
	if (!ring)
		return XDP_ABORTED;
	hdr = bpf_map_lookup_elem(ring, &zero);
	if (!hdr)
		return XDP_ABORTED;
	if (idx_first) {
		if (kr_bench_read(ring, hdr->idx_chunk, hdr->pt_chunk - hdr->idx_chunk, h, &v))
			return XDP_ABORTED;
		h ^= kr_bench_zero_of(v);
	}
	if (kr_bench_read(ring, 0, hdr->nchunks, h, &v))
		return XDP_ABORTED;
	if (dep)
		kr_bench_ctr += kr_bench_zero_of(v);
	p->route.backend_id = v;
	p->reason = 0;
	return XDP_TX;
}

SEC("xdp")
int bench_limit(struct xdp_md *ctx)
{
	return kr_bench_reads(ctx, 0, 0);
}

SEC("xdp")
int bench_dep(struct xdp_md *ctx)
{
	return kr_bench_reads(ctx, 0, 1);
}

SEC("xdp")
int bench_idx_dep(struct xdp_md *ctx)
{
	return kr_bench_reads(ctx, 1, 1);
}

SEC("xdp")
int bench_full(struct xdp_md *ctx)
{
	struct kr_ring_test_pkt *p;
	struct kr_route r;
	__u32 h;

	p = kr_bench_key(ctx, &h);
	if (!p)
		return XDP_ABORTED;
	p->reason = kr_ring_route(p->ring_id, h, &r);
	p->route.backend_id = r.backend_id;
	return XDP_TX;
}

#include "kr_plain_lb.h"

SEC("xdp")
int bench_plain(struct xdp_md *ctx)
{
	const struct kr_image_hdr *hdr;
	struct kr_ring_test_pkt *p;
	struct kr_subset_key sk = { 0 };
	__u32 h, key, idx, ph, b, zero = 0;
	const __u64 *ctl;
	void *ring;

	p = kr_bench_key(ctx, &h);
	if (!p)
		return XDP_ABORTED;
	ctl = bpf_map_lookup_elem(&kr_ring_ctl, &p->ring_id);
	if (!ctl)
		return XDP_ABORTED;
	key = p->ring_id * 2 + kr_ctl_slot(*ctl, h);
	ring = bpf_map_lookup_elem(&kr_rings, &key);
	if (!ring)
		return XDP_ABORTED;
	hdr = bpf_map_lookup_elem(ring, &zero);
	if (!hdr)
		return XDP_ABORTED;
	if (kr_plain_lb(ring, hdr, h, &idx) || kr_point_get(ring, hdr, idx, &ph, &b))
		return XDP_ABORTED;
	p->reason = kr_ring_backend_up(ring, hdr, b, &sk) > 0 ? 0 : KR_ROUTE_ALL_DOWN;
	p->route.backend_id = sk.backend_id;
	p->route.image_index = idx;
	return XDP_TX;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
