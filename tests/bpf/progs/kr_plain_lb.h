/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The benchmarks' baseline (b): a plain lower bound over all image points, point by point
 * (branchless halving, one chunk lookup per step): first point with hash >= h, wrapping.
 * Shared by tests/bpf/progs/kr_ring_bench.bpf.c and kr_dpbench.h.  Include after kr_lookup.h.
 */
#ifndef KR_PLAIN_LB_H
#define KR_PLAIN_LB_H

static __always_inline int kr_plain_lb(void *ring, const struct kr_image_hdr *hdr, __u32 h,
				       __u32 *out)
{
	__u32 n = hdr->npoints, b = 0, ph, pb;
	int s;

	if (n == 0)
		return -1;
	for (s = 0; s < KR_SEARCH_STEPS; s++) {
		__u32 half = n >> 1;

		if (half == 0)
			break;
		if (kr_point_get(ring, hdr, b + half, &ph, &pb))
			return -1;
		b += half & kr_lt_mask(ph, h);
		n -= half;
	}
	if (kr_point_get(ring, hdr, b, &ph, &pb))
		return -1;
	b += 1 & kr_lt_mask(ph, h);
	*out = b >= hdr->npoints ? 0 : b;
	return 0;
}

#endif /* KR_PLAIN_LB_H */
