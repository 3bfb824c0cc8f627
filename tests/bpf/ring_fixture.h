/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Test/bench fixture of the ring stage: synthetic rings (random sorted point hashes,
 * crafted collisions kept as duplicates, dense and empty buckets) encoded into the kernel
 * image layout of include/kr_image_kern_user.h, written here independently of the engine's
 * encoder so the two can be checked against each other.  Also the reference lookups: the
 * shared kr_image_find() on the buffer and a plain lower bound over the points.
 */
#ifndef KR_RING_FIXTURE_H
#define KR_RING_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kr_image_kern_user.h"

struct fx_img {
	uint8_t *buf;		/* nchunks * KR_CHUNK_BYTES */
	uint32_t nchunks;
};

static inline const void *fx_chunk_get(void *ring, uint32_t n)
{
	struct fx_img *im = ring;

	return n < im->nchunks ? im->buf + (size_t)n * KR_CHUNK_BYTES : NULL;
}
#define KR_CHUNK_GET(ring, n) fx_chunk_get(ring, n)
#include "kr_lookup.h"

static inline uint64_t fx_rand(uint64_t *s)	/* splitmix64 */
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void fx_radix_sort(uint32_t *a, uint32_t *tmp, size_t n)
{
	for (int pass = 0; pass < 2; pass++) {
		size_t cnt[65537] = { 0 };
		int sh = pass * 16;

		for (size_t i = 0; i < n; i++)
			cnt[((a[i] >> sh) & 0xffff) + 1]++;
		for (int i = 0; i < 65536; i++)
			cnt[i + 1] += cnt[i];
		for (size_t i = 0; i < n; i++)
			tmp[cnt[(a[i] >> sh) & 0xffff]++] = a[i];
		memcpy(a, tmp, n * sizeof(*a));
	}
}

/* Encode sorted points (hash ascending; equal hashes = winner then kept duplicates). */
static inline int fx_encode(struct fx_img *im, const uint32_t *hash, const uint16_t *backend,
			    uint32_t n, const uint32_t *bt, uint32_t nb)
{
	uint32_t bits = kr_image_bucket_bits(n), nidx = (1u << bits) + 1;
	uint32_t idx_chunks = (nidx + KR_IDX_PER_CHUNK - 1) / KR_IDX_PER_CHUNK;
	/* the table in chunk 0 after the header up to KR_BT0_MAX backends */
	uint32_t bt_chunks = nb <= KR_BT0_MAX ? 0 : (nb + KR_BT_PER_CHUNK - 1) / KR_BT_PER_CHUNK;
	uint32_t pt_chunks = (n + KR_PTS_PER_CHUNK - 1) / KR_PTS_PER_CHUNK;
	struct kr_image_hdr *h;
	struct kr_point *pts;
	uint32_t *idx, *btab, i, k, ndups = 0, maxb = 0;

	im->nchunks = 1 + idx_chunks + bt_chunks + pt_chunks;
	im->buf = calloc(im->nchunks, KR_CHUNK_BYTES);
	if (!im->buf)
		return -1;
	h = (struct kr_image_hdr *)im->buf;
	h->magic = KR_IMAGE_MAGIC;
	h->format = KR_IMAGE_FORMAT;
	h->npoints = n;
	h->nbackends = nb;
	h->bucket_bits = bits;
	h->idx_chunk = 1;
	h->bt_chunk = bt_chunks ? 1 + idx_chunks : 0;
	h->pt_chunk = 1 + idx_chunks + bt_chunks;
	h->nchunks = im->nchunks;
	h->ring_version = 2;
	idx = (uint32_t *)(im->buf + (size_t)h->idx_chunk * KR_CHUNK_BYTES);
	btab = (uint32_t *)(im->buf + (bt_chunks ? (size_t)h->bt_chunk * KR_CHUNK_BYTES :
						   KR_BT0_OFF));
	pts = (struct kr_point *)(im->buf + (size_t)h->pt_chunk * KR_CHUNK_BYTES);
	memcpy(btab, bt, nb * sizeof(*bt));
	for (i = 0, k = 0; k < nidx; k++) {
		uint64_t start = (uint64_t)k << (32 - bits);

		while (i < n && hash[i] < start)
			i++;
		idx[k] = i;
		if (k && idx[k] - idx[k - 1] > maxb)
			maxb = idx[k] - idx[k - 1];
	}
	idx[nidx - 1] = n;
	for (i = 0; i < n; i++) {
		pts[i].hash_lo = hash[i] & 0xffff;
		pts[i].hash_hi = hash[i] >> 16;
		pts[i].backend = backend[i];
		if (i && hash[i] == hash[i - 1])
			ndups++;
	}
	memset(pts + n, 0xff, ((size_t)pt_chunks * KR_PTS_PER_CHUNK - n) * sizeof(*pts));
	h->ndups = ndups;
	h->max_bucket = maxb;
	return 0;
}

/* Plain lower bound over the hashes: first >= key, wrapping to 0. */
static inline uint32_t fx_plain_lb(const uint32_t *hash, uint32_t n, uint32_t key)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (hash[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo >= n ? 0 : lo;
}

#endif
