// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Kernel ring image encoder (layout: include/kr_image_kern_user.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include "image.h"
#include "util.h"


static uint32_t chunks_for(uint64_t entries, uint32_t per_chunk)
{
	return (uint32_t)((entries + per_chunk - 1) / per_chunk);
}

static void *chunk_ptr(struct kr_image *img, uint32_t n)
{
	return (char *)img->buf + (size_t)n * KR_CHUNK_BYTES;
}

/* Ring points encoded between two releases of what they were read from (2 MiB of hashes). */
#define RELEASE_POINTS	(1u << 19)

#define RELEASE_ALIGN	((uintptr_t)2 << 20)	/* whole (huge) pages: none is split */

/* Gives the whole 2 MiB-aligned pages of buffer p below byte `to` back to the kernel, from
 * *done on (their contents are gone; the allocation stays valid for free(), its first
 * page, where malloc keeps its header, is never one of them): the image's next page
 * faults then get pages the process just used, not ones the machine has to find and, in
 * a VM, the host to back (docs/engine.md "Benchmarks"). */
static void release_below(void *p, size_t to, uintptr_t *done)
{
	uintptr_t s = ((uintptr_t)p + RELEASE_ALIGN - 1) & ~(RELEASE_ALIGN - 1);
	uintptr_t e = ((uintptr_t)p + to) & ~(RELEASE_ALIGN - 1);

	if (*done > s)
		s = *done;
	if (e > s) {
		madvise((void *)s, e - s, MADV_DONTNEED);
		*done = e;
	}
}

/*
 * Ring points, each followed by its removed duplicates (recording where those went), and
 * the bucket index in the same pass, from the ring's own hashes (not read back from the
 * packed points): entry k = first image index with hash >= k << (32 - bits) -- always a
 * ring point, since a kept duplicate has its winner's hash --; the sentinel = npoints.
 * With release, the ring's hash and backend arrays are given back to the kernel behind
 * the pass, RELEASE_POINTS at a time.
 */
static void fill_points_index(struct kr_image *img, const struct kr_ring *r, int release)
{
	struct kr_image_hdr *h = img->hdr;
	struct kr_point *pt = chunk_ptr(img, h->pt_chunk);
	uint32_t *idx = chunk_ptr(img, h->idx_chunk), nb = 1u << h->bucket_bits;
	uint32_t shift = 32 - h->bucket_bits, k = 0, d = 0, e = 0, maxb = 0;
	uintptr_t done_h = 0, done_b = 0;

	for (uint32_t i = 0; i < r->npoints; i++) {
		uint32_t b = r->hash[i] >> shift;

		if (release && i % RELEASE_POINTS == 0) {
			release_below(r->hash, (size_t)i * 4, &done_h);
			release_below(r->backend, (size_t)i * 2, &done_b);
		}

		while (e <= b)
			idx[e++] = k;
		pt[k++] = (struct kr_point){ (uint16_t)r->hash[i], (uint16_t)(r->hash[i] >> 16),
					     r->backend[i] };
		for (; d < r->ndups && r->dups[d].winner == i; d++) {
			img->dup_pos[d] = k;
			pt[k++] = (struct kr_point){ (uint16_t)r->dups[d].hash,
						     (uint16_t)(r->dups[d].hash >> 16),
						     (uint16_t)r->dups[d].backend };
		}
	}
	while (e <= nb)
		idx[e++] = k;
	for (e = 0; e < nb; e++)
		if (idx[e + 1] - idx[e] > maxb)
			maxb = idx[e + 1] - idx[e];
	h->max_bucket = maxb;
}

static void fill_backends(struct kr_image *img, const struct kr_ring *r, const uint32_t *ids)
{
	uint32_t *bt = (uint32_t *)((char *)img->buf + kr_image_bt_off(img->hdr));

	for (uint32_t i = 0; i < r->nbackends; i++)
		bt[i] = ids ? ids[i] : i;
}

static int encode(struct kr_image *img, const struct kr_ring *r, const uint32_t *backend_ids,
		  int release, struct kr_err *err)
{
	uint64_t t0 = kr_cpu_ns(), n = (uint64_t)r->npoints + r->ndups;
	struct kr_image_hdr h = { 0 };
	uint32_t idx_chunks, bt_chunks, pt_chunks;

	memset(img, 0, sizeof(*img));
	if (n == 0 || n > KR_MAX_POINTS)
		return kr_errf(err, "ring image: %" PRIu64 " points (with kept duplicates): "
			       "expected 1..%u", n, KR_MAX_POINTS);
	if (r->nbackends == 0 || r->nbackends > KR_MAX_BACKENDS)
		return kr_errf(err, "ring image: %u backends: expected 1..%u", r->nbackends,
			       KR_MAX_BACKENDS);
	h.magic = KR_IMAGE_MAGIC;
	h.format = KR_IMAGE_FORMAT;
	h.npoints = (uint32_t)n;
	h.ndups = r->ndups;
	h.nbackends = r->nbackends;
	h.bucket_bits = kr_image_bucket_bits(h.npoints);
	h.ring_version = r->version;
	h.point_multiple = r->point_multiple;
	h.digest = r->digest;
	idx_chunks = chunks_for((1ull << h.bucket_bits) + 1, KR_IDX_PER_CHUNK);
	bt_chunks = kr_image_bt_chunks(r->nbackends);
	pt_chunks = chunks_for(n, KR_PTS_PER_CHUNK);
	h.idx_chunk = 1;
	h.bt_chunk = bt_chunks ? h.idx_chunk + idx_chunks : 0;	/* 0: in chunk 0 */
	h.pt_chunk = h.idx_chunk + idx_chunks + bt_chunks;
	h.nchunks = h.pt_chunk + pt_chunks;
	img->size = (size_t)h.nchunks * KR_CHUNK_BYTES;
	img->buf = calloc(h.nchunks, KR_CHUNK_BYTES);
	if (img->buf)
		kr_hint_huge(img->buf, img->size);
	img->dup_pos = malloc((r->ndups ? r->ndups : 1) * sizeof(uint32_t));
	if (!img->buf || !img->dup_pos) {
		kr_image_free(img);
		return kr_errf(err, "ring image: out of memory for %zu bytes", img->size);
	}
	img->hdr = img->buf;
	*img->hdr = h;
	img->ndup_pos = r->ndups;
	fill_points_index(img, r, release);
	/* padding of the last points chunk: hash 0xffffffff (kr_image_kern_user.h) */
	memset((struct kr_point *)chunk_ptr(img, h.pt_chunk) + n, 0xff,
	       (size_t)pt_chunks * KR_PTS_PER_CHUNK * sizeof(struct kr_point) -
	       (size_t)n * sizeof(struct kr_point));
	fill_backends(img, r, backend_ids);
	img->encode_ns = kr_cpu_ns() - t0;
	return 0;
}

int kr_image_encode(struct kr_image *img, const struct kr_ring *r, const uint32_t *backend_ids,
		    struct kr_err *err)
{
	return encode(img, r, backend_ids, 0, err);
}

int kr_image_encode_consume(struct kr_image *img, struct kr_ring *r,
			    const uint32_t *backend_ids, struct kr_err *err)
{
	int ret = encode(img, r, backend_ids, 1, err);

	if (ret == 0) {		/* the points are gone: no reader may find half of them */
		free(r->hash);
		free(r->backend);
		r->hash = NULL;
		r->backend = NULL;
	}
	return ret;
}

void kr_image_free(struct kr_image *img)
{
	free(img->buf);
	free(img->dup_pos);
	memset(img, 0, sizeof(*img));
}

int kr_image_view(struct kr_image *img, void *buf, size_t size, struct kr_err *err)
{
	uint32_t prev = 0, hash, be, n;

	memset(img, 0, sizeof(*img));
	if (kr_image_check(buf, size, err)) {
		free(buf);
		return -1;
	}
	img->buf = buf;
	img->size = size;
	img->hdr = buf;
	n = img->hdr->npoints;
	img->dup_pos = malloc((img->hdr->ndups ? img->hdr->ndups : 1) * sizeof(uint32_t));
	if (!img->dup_pos) {
		kr_image_free(img);
		return kr_errf(err, "ring image: out of memory");
	}
	/* a kept duplicate is a point whose hash equals its predecessor's */
	for (uint32_t i = 0; i < n; i++) {
		if (kr_image_point(img, i, &hash, &be)) {
			kr_image_free(img);
			return kr_errf(err, "ring image: point %u unreadable", i);
		}
		if (i && hash == prev) {
			if (img->ndup_pos == img->hdr->ndups) {
				kr_image_free(img);
				return kr_errf(err, "ring image: more kept duplicates than its "
					       "header's %u", img->hdr->ndups);
			}
			img->dup_pos[img->ndup_pos++] = i;
		}
		prev = hash;
	}
	return 0;
}

#define BATCH_DIST 8

/*
 * Prefetch the lines kr_window_find() will count first for key h: the KR_WINDOW points
 * from the window's start (computed as kr_lookup.h does: around the interpolated guess,
 * inside the bucket), 6 * KR_WINDOW bytes, on 3 or 4 cache lines (the guess's line
 * alone: 42-44 against 40 ns a key at 14.8M points).  Always inlined: as a function of
 * its own it has no effect but prefetches, which gcc does not count as one -- it found
 * the function pure and deleted its calls.  That is what happened to the guess-line
 * prefetcher this replaces: the batched path of cdc75a8 prefetched nothing but the index
 * entries (one prefetch instruction in its kr_image_lookup_batch).
 */
static __always_inline void prefetch_window(const struct kr_image *img, const uint32_t *idx,
					    uint32_t h, uint32_t sh)
{
	uint32_t k = h >> sh, lo = idx[k], hi = idx[k + 1], guess, w, a, lim, off;
	const char *c;

	if (hi <= lo)
		return;
	guess = lo + (uint32_t)(((uint64_t)(h & ((1u << sh) - 1)) * (hi - lo)) >> sh);
	w = kr_min_u32(hi - lo, KR_WINDOW);
	a = guess - kr_min_u32(guess - lo, KR_WINDOW / 2 - 1);
	a = kr_min_u32(a, hi - w);
	lim = KR_PTS_PER_CHUNK - KR_WINDOW;	/* as kr_window_at() with contiguous chunks */
	if (img->hdr->pt_chunk + (a >> KR_PTS_SHIFT) + 1 < img->hdr->nchunks)
		lim += KR_PTS_PER_CHUNK;
	off = kr_min_u32(a & (KR_PTS_PER_CHUNK - 1), lim);
	c = kr_image_chunk(img, img->hdr->pt_chunk + (a >> KR_PTS_SHIFT));
	if (!c)
		return;
	c += (size_t)off * sizeof(struct kr_point);
	for (uint32_t b = 0; b < KR_WINDOW * sizeof(struct kr_point); b += 64)
		__builtin_prefetch(c + b);
	__builtin_prefetch(c + KR_WINDOW * sizeof(struct kr_point) - 1);
}

/* Key j of a batch: search, and its backend (read on the way, or now: the line is cached). */
static int batch_one(const struct kr_image *img, uint32_t h, uint32_t *out, uint32_t *backend)
{
	uint32_t be, hh;

	if (kr_image_find((void *)img, img->hdr, h, out, &be))
		return -1;
	if (!backend)
		return 0;
	if (be == KR_BACKEND_UNKNOWN && kr_point_get((void *)img, img->hdr, *out, &hh, &be))
		return -1;
	*backend = be;
	return 0;
}

int kr_image_lookup_batch(const struct kr_image *img, const uint32_t *h, uint32_t n,
			  uint32_t *out, uint32_t *backend)
{
	const struct kr_image_hdr *hd = img->hdr;
	const uint32_t *idx = kr_image_chunk(img, hd->idx_chunk);
	uint32_t sh = 32 - hd->bucket_bits;

	if (!idx || hd->bucket_bits < KR_MIN_BUCKET_BITS || hd->bucket_bits > KR_MAX_BUCKET_BITS)
		return -1;
	for (uint64_t i = 0; i < (uint64_t)n + 2 * BATCH_DIST; i++) {
		if (i < n)
			__builtin_prefetch(&idx[h[i] >> sh]);
		if (i >= BATCH_DIST && i - BATCH_DIST < n)
			prefetch_window(img, idx, h[i - BATCH_DIST], sh);
		if (i >= 2 * BATCH_DIST) {
			uint64_t j = i - 2 * BATCH_DIST;

			if (batch_one(img, h[j], &out[j], backend ? &backend[j] : NULL))
				return -1;
		}
	}
	return 0;
}

uint32_t kr_image_ring_index(const struct kr_image *img, uint32_t image_index)
{
	uint32_t lo = 0, hi = img->ndup_pos;

	/* number of kept duplicates at image positions <= image_index */
	while (lo < hi) {
		uint32_t mid = lo + ((hi - lo) >> 1);

		if (img->dup_pos[mid] <= image_index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return image_index - lo;
}

uint32_t kr_image_next_ring_point(const struct kr_image *img, uint32_t i)
{
	uint32_t n = img->hdr->npoints, h, b, prev;

	if (kr_image_point(img, i, &prev, &b))
		return 0;
	for (uint32_t step = 0; step < n; step++) {
		i = i + 1 < n ? i + 1 : 0;
		if (kr_image_point(img, i, &h, &b))
			return 0;
		if (i == 0 || h != prev)
			return i;
	}
	return i;
}

static int check_index(const void *buf, const struct kr_image_hdr *h, struct kr_err *err)
{
	const uint32_t *idx = (const uint32_t *)((const char *)buf +
						 (size_t)h->idx_chunk * KR_CHUNK_BYTES);
	const struct kr_point *pt = (const struct kr_point *)((const char *)buf +
				(size_t)h->pt_chunk * KR_CHUNK_BYTES);
	uint32_t nb = 1u << h->bucket_bits, shift = 32 - h->bucket_bits;

	if (idx[nb] != h->npoints)
		return kr_errf(err, "ring image: sentinel %u, expected npoints %u", idx[nb],
			       h->npoints);
	for (uint32_t k = 0; k < nb; k++) {
		if (idx[k] > idx[k + 1])
			return kr_errf(err, "ring image: bucket index entry %u (%u) > entry %u "
				       "(%u)", k, idx[k], k + 1, idx[k + 1]);
		if (idx[k] < h->npoints && kr_point_hash(&pt[idx[k]]) >> shift < k)
			return kr_errf(err, "ring image: bucket index entry %u points before "
				       "its bucket", k);
	}
	for (uint32_t i = 1; i < h->npoints; i++)
		if (kr_point_hash(&pt[i]) < kr_point_hash(&pt[i - 1]))
			return kr_errf(err, "ring image: point %u out of order", i);
	for (size_t i = (size_t)h->npoints * sizeof(*pt);
	     i % KR_CHUNK_BYTES; i++)
		if (((const uint8_t *)pt)[i] != 0xff)
			return kr_errf(err, "ring image: the padding after the last point is not "
				       "0xff bytes");
	return 0;
}

int kr_image_check(const void *buf, size_t size, struct kr_err *err)
{
	const struct kr_image_hdr *h = buf;
	uint64_t need;

	if (size < KR_CHUNK_BYTES || size % KR_CHUNK_BYTES)
		return kr_errf(err, "ring image: size %zu is not a whole number of %u-byte "
			       "chunks", size, KR_CHUNK_BYTES);
	if (h->magic != KR_IMAGE_MAGIC || h->format != KR_IMAGE_FORMAT)
		return kr_errf(err, "ring image: magic %08x format %u, expected %08x format %u",
			       h->magic, h->format, KR_IMAGE_MAGIC, KR_IMAGE_FORMAT);
	if (h->bucket_bits < KR_MIN_BUCKET_BITS || h->bucket_bits > KR_MAX_BUCKET_BITS ||
	    h->npoints == 0 || h->npoints > KR_MAX_POINTS || h->nbackends == 0 ||
	    h->nbackends > KR_MAX_BACKENDS || h->ndups >= h->npoints)
		return kr_errf(err, "ring image: bad header (points %u, dups %u, backends %u, "
			       "bucket bits %u)", h->npoints, h->ndups, h->nbackends,
			       h->bucket_bits);
	need = 1 + (uint64_t)chunks_for((1ull << h->bucket_bits) + 1, KR_IDX_PER_CHUNK) +
	       kr_image_bt_chunks(h->nbackends) + chunks_for(h->npoints, KR_PTS_PER_CHUNK);
	if (h->idx_chunk != 1 ||
	    h->bt_chunk != (kr_image_bt_chunks(h->nbackends) ?
			    1 + chunks_for((1ull << h->bucket_bits) + 1, KR_IDX_PER_CHUNK) : 0) ||
	    h->pt_chunk != 1 + chunks_for((1ull << h->bucket_bits) + 1, KR_IDX_PER_CHUNK) +
			   kr_image_bt_chunks(h->nbackends) ||
	    h->nchunks != need || (size_t)need * KR_CHUNK_BYTES != size)
		return kr_errf(err, "ring image: sections (index %u, backends %u, points %u, "
			       "chunks %u) don't match the header's counts (%" PRIu64 " chunks)",
			       h->idx_chunk, h->bt_chunk, h->pt_chunk, h->nchunks, need);
	return check_index(buf, h, err);
}
