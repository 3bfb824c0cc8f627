/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Encoding a ring into the kernel ring image (include/kr_image_kern_user.h), and the
 * userspace view of an image: KR_CHUNK_GET is defined here so that include/kr_lookup.h --
 * the code the BPF program runs, but for three userspace-only helpers (the window count,
 * the compares, windows across the chunks of this one buffer) -- works on the encoded
 * buffer.
 *
 * Image points = ring points in ring order, each followed by the points deduplication
 * removed at its hash (tie order).  Image index -> ring index: minus the kept duplicates
 * at or before it (a kept duplicate maps to its winner's ring index).
 */
#ifndef KR_IMAGE_H
#define KR_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include "continuum.h"
#include "err.h"
#include "kr_image_kern_user.h"

struct kr_image {
	void *buf;			/* nchunks * KR_CHUNK_BYTES, chunk n at n * KR_CHUNK_BYTES */
	size_t size;
	struct kr_image_hdr *hdr;	/* = buf (chunk 0) */
	uint32_t *dup_pos;		/* image indices of the kept duplicates, ascending */
	uint32_t ndup_pos;
	uint64_t encode_ns;
};

/* Chunk n of the image, or NULL past the end (as bpf_map_lookup_elem would). */
static inline const void *kr_image_chunk(const struct kr_image *img, uint32_t n)
{
	return n < img->hdr->nchunks ? (const char *)img->buf + (size_t)n * KR_CHUNK_BYTES
				     : NULL;
}

#ifndef KR_CHUNK_GET
#define KR_CHUNK_GET(ring, n) kr_image_chunk((const struct kr_image *)(ring), (n))
/* chunk n + 1 follows chunk n in the one buffer: kr_lookup.h's windows may cross chunks */
#define KR_CHUNKS_CONTIGUOUS 1
#endif
#include "kr_lookup.h"

/*
 * Encodes ring r.  backend_ids[ring-local index] = global backend id for the backend table
 * (NULL: the identity).  Returns 0, or -1 with err set.  Free with kr_image_free().
 */
int kr_image_encode(struct kr_image *img, const struct kr_ring *r, const uint32_t *backend_ids,
		    struct kr_err *err);
/*
 * The same, for a caller that needs only the image afterwards (`keyrouter ring build`):
 * the ring's points are given back to the kernel as they are encoded, so the image's
 * pages are ones the process just used (half the memory the two copies would touch).  On
 * success r->hash and r->backend are freed and NULL (the counts, digest, duplicates and
 * stats stay); on failure the ring is whole.
 */
int kr_image_encode_consume(struct kr_image *img, struct kr_ring *r,
			    const uint32_t *backend_ids, struct kr_err *err);
void kr_image_free(struct kr_image *img);

/* An image read back from the kernel (buf: malloc'd, size bytes) as a struct kr_image:
 * checked (kr_image_check), its kept duplicates found.  Takes buf over (freed with the
 * image, or on failure).  0, or -1 with err set. */
int kr_image_view(struct kr_image *img, void *buf, size_t size, struct kr_err *err);

/* Checks an image buffer the way a reader must before trusting it (magic, format, section
 * offsets, sizes, sentinel, index monotonic).  0 or -1 with err set. */
int kr_image_check(const void *buf, size_t size, struct kr_err *err);

/* Bucket-index lookup through kr_lookup.h: image index of the first point with hash >= h
 * (wrapping to 0).  0, or -1 for an inconsistent image. */
static inline int kr_image_lookup(const struct kr_image *img, uint32_t h, uint32_t *image_index)
{
	return kr_image_lower_bound((void *)img, img->hdr, h, image_index);
}

/*
 * kr_image_lookup() of n independent hashes, software-pipelined: the index entry of key
 * i + 2D and the likely point line of key i + D are prefetched while key i is searched, so
 * the memory accesses of different keys overlap.  (A plain binary search cannot do this:
 * each of its steps depends on the previous one; the bucket index knows both addresses
 * from the key.)  out[i] = image index; backend[i] (when backend is not NULL) = its
 * ring-local backend.  0, or -1 if the image is inconsistent.
 */
int kr_image_lookup_batch(const struct kr_image *img, const uint32_t *h, uint32_t n,
			  uint32_t *out, uint32_t *backend);

/* Image index -> ring index (a kept duplicate gives its winner's ring index). */
uint32_t kr_image_ring_index(const struct kr_image *img, uint32_t image_index);

/* Point i of the image; 0 or -1 out of range. */
static inline int kr_image_point(const struct kr_image *img, uint32_t i, uint32_t *hash,
				 uint32_t *backend)
{
	if (i >= img->hdr->npoints)
		return -1;
	return kr_point_get((void *)img, img->hdr, i, hash, backend);
}

/* Image index of the next ring point after image index i (skipping kept duplicates: a
 * point whose hash equals its predecessor's), wrapping. */
uint32_t kr_image_next_ring_point(const struct kr_image *img, uint32_t i);

#endif
