// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark programs of the ring stage (tests/bench/bench_ring.c), run through
 * BPF_PROG_TEST_RUN with a large repeat count.  Every variant starts with the same tiny
 * stage, kr_bench_key(): it writes a new key into the packet from a per-run counter
 * (key = mix32(counter++ ^ seed): a bijection, so every packet of a run has a different
 * key), and reads it back from the packet as the key hash.  Then:
 *   bench_none   (a) no ring lookup: the answer is derived from the hash alone
 *   bench_limit  (c) (a) + one read of a random element of the published ring's own map
 *                    (as large as the ring): what no lookup can beat
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

SEC("xdp")
int bench_limit(struct xdp_md *ctx)
{
	const struct kr_image_hdr *hdr;
	struct kr_ring_test_pkt *p;
	__u32 h, key, c, zero = 0;
	const __u32 *w;
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
	c = (__u32)(((__u64)h * hdr->nchunks) >> 32);	/* a random chunk of the ring's map */
	w = bpf_map_lookup_elem(ring, &c);
	if (!w)
		return XDP_ABORTED;
	/* a random word in it (of the KR_CHUNK_BYTES / 4: the whole chunk, so the reads cover
	 * the whole ring's memory) */
	c = ((h & 0xffff) * (KR_CHUNK_BYTES / 4)) >> 16;
	KR_BARRIER_VAR(c);	/* the shift's bound, not a rounded-up mask of it */
	p->route.backend_id = w[c];
	p->reason = 0;
	return XDP_TX;
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
