/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ring image lookup through the bucket index -- the same code in the BPF programs and in
 * userspace (the reference the tests compare the kernel against).
 *
 * Before including this file, define
 *     KR_CHUNK_GET(ring, n)   -> const void * to chunk n of the image, or NULL
 * In BPF that is a bpf_map_lookup_elem() on the inner array map; in userspace a pointer
 * into the encoded image buffer (see user/image.h).
 */
#ifndef KR_LOOKUP_H
#define KR_LOOKUP_H

#include "kr_image_kern_user.h"

#ifndef KR_CHUNK_GET
#error "define KR_CHUNK_GET(ring, chunk) before including kr_lookup.h"
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Entry k of the bucket index. */
static __always_inline int kr_idx_entry(void *ring, const struct kr_image_hdr *hdr, __u32 k,
					__u32 *out)
{
	__u32 c = k / KR_IDX_PER_CHUNK, off = k % KR_IDX_PER_CHUNK;
	const __u32 *e;

	if (off >= KR_IDX_PER_CHUNK)
		return -1;
	e = (const __u32 *)KR_CHUNK_GET(ring, hdr->idx_chunk + c);
	if (!e)
		return -1;
	*out = e[off];
	return 0;
}

/* Point i of the image (hash and ring-local backend index). */
static __always_inline int kr_point_get(void *ring, const struct kr_image_hdr *hdr, __u32 i,
					__u32 *hash, __u32 *backend)
{
	const struct kr_point *p;

	p = (const struct kr_point *)KR_CHUNK_GET(ring, hdr->pt_chunk + (i >> KR_PTS_SHIFT));
	if (!p)
		return -1;
	p += i & (KR_PTS_PER_CHUNK - 1);
	*hash = kr_point_hash(p);
	*backend = p->backend;
	return 0;
}

/* Global backend id of ring-local backend index b. */
static __always_inline int kr_bt_get(void *ring, const struct kr_image_hdr *hdr, __u32 b,
				     __u32 *id)
{
	__u32 c = b / KR_BT_PER_CHUNK, off = b % KR_BT_PER_CHUNK;
	const __u32 *e;

	if (b >= hdr->nbackends || off >= KR_BT_PER_CHUNK)
		return -1;
	e = (const __u32 *)KR_CHUNK_GET(ring, hdr->bt_chunk + c);
	if (!e)
		return -1;
	*id = e[off];
	return 0;
}

/*
 * Image index of the first point with hash >= h; past the last point, 0 (wrap-around).
 * The key's top bucket_bits select a bucket [idx[k], idx[k+1]); a binary search inside it
 * finds the point.  If no point of the bucket qualifies the answer is idx[k+1], the first
 * point of the next non-empty bucket.  Buckets of any size are searched completely.
 * Returns 0, or -1 when the image is inconsistent (a chunk is missing, an entry is out of
 * range): the caller must then not route with this image.
 */
static __always_inline int kr_image_lower_bound(void *ring, const struct kr_image_hdr *hdr,
						__u32 h, __u32 *out)
{
	__u32 bits = hdr->bucket_bits, n = hdr->npoints;
	__u32 lo, hi, k;
	int i;

	if (bits < KR_MIN_BUCKET_BITS || bits > KR_MAX_BUCKET_BITS || n == 0)
		return -1;
	k = h >> (32 - bits);
	if (kr_idx_entry(ring, hdr, k, &lo) || kr_idx_entry(ring, hdr, k + 1, &hi))
		return -1;
	if (hi > n || lo > hi)
		return -1;
	for (i = 0; i < KR_SEARCH_STEPS && lo < hi; i++) {
		__u32 mid = lo + ((hi - lo) >> 1), mh, mb;

		if (kr_point_get(ring, hdr, mid, &mh, &mb))
			return -1;
		if (mh < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	*out = lo >= n ? 0 : lo;
	return 0;
}

#endif /* KR_LOOKUP_H */
