/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ring image lookup through the bucket index -- the same code in the BPF programs and in
 * userspace (the reference the tests compare the kernel against).
 *
 * Before including this file, define
 *     KR_CHUNK_GET(ring, n)   -> const void * to chunk n of the image, or NULL
 * In BPF that is a bpf_map_lookup_elem() on the inner array map; in userspace a pointer
 * into the encoded image buffer (see user/core/image.h).
 */
#ifndef KR_LOOKUP_H
#define KR_LOOKUP_H

#include "kr_image_kern_user.h"

#ifndef KR_CHUNK_GET
#error "define KR_CHUNK_GET(ring, chunk) before including kr_lookup.h"
#endif

/*
 * KR_LOOKUP_BPF selects the code the BPF programs run where the two differ (the compares,
 * the window count, windows cut at chunk boundaries).  Defined for BPF; a userspace test
 * defines KR_LOOKUP_AS_BPF before the first include to run the BPF branch against the
 * same answers (tests/unit/test_image_bpf.c), without root.
 */
#if defined(__bpf__) || defined(KR_LOOKUP_AS_BPF)
#define KR_LOOKUP_BPF 1
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Keeps the compiler from recomputing x from a copy the verifier has not bounded. */
#define KR_BARRIER_VAR(x) asm volatile("" : "+r"(x))

/* x / 3072 without a division instruction: exact for every __u32 x
 * (x / 3072 = (x >> 10) / 3, and y / 3 = (y * 0xaaaaaaab) >> 33 for every y < 2^32). */
static __always_inline __u64 kr_div3072(__u64 x)
{
	return ((x >> 10) * 0xaaaaaaabull) >> 33;
}
_Static_assert(KR_IDX_PER_CHUNK == 3072 && KR_BT_PER_CHUNK == 3072, "kr_div3072");

/* Entry k of the bucket index. */
static __always_inline int kr_idx_entry(void *ring, const struct kr_image_hdr *hdr, __u32 k,
					__u32 *out)
{
	__u64 c = kr_div3072(k), off = k - c * KR_IDX_PER_CHUNK;
	const __u32 *e;

	if (off >= KR_IDX_PER_CHUNK)
		return -1;
	e = (const __u32 *)KR_CHUNK_GET(ring, hdr->idx_chunk + (__u32)c);
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

/* Global backend id of ring-local backend index b.  hdr must point at the whole of chunk 0
 * (a map value, or the image buffer): the table of a ring of at most KR_BT0_MAX backends
 * is there. */
static __always_inline int kr_bt_get(void *ring, const struct kr_image_hdr *hdr, __u32 b,
				     __u32 *id)
{
	const __u32 *e;
	__u64 c, off;

	if (b >= hdr->nbackends)
		return -1;
	if (hdr->bt_chunk == 0) {
		if (b >= KR_BT0_MAX)
			return -1;
		KR_BARRIER_VAR(b);
		*id = ((const __u32 *)(const void *)hdr)[KR_BT0_OFF / 4 + b];
		return 0;
	}
	c = kr_div3072(b);		/* a table of its own: chunk and entry */
	off = b - c * KR_BT_PER_CHUNK;
	if (off >= KR_BT_PER_CHUNK)
		return -1;
	e = (const __u32 *)KR_CHUNK_GET(ring, hdr->bt_chunk + (__u32)c);
	if (!e)
		return -1;
	*id = e[off];
	return 0;
}

/* Entries k and k + 1 of the bucket index: one chunk lookup unless they straddle chunks. */
static __always_inline int kr_idx_pair(void *ring, const struct kr_image_hdr *hdr, __u32 k,
				       __u32 *lo, __u32 *hi)
{
	__u64 c = kr_div3072(k), off = k - c * KR_IDX_PER_CHUNK;
	const __u32 *e;

	e = (const __u32 *)KR_CHUNK_GET(ring, hdr->idx_chunk + (__u32)c);
	if (!e)
		return -1;
	if (off < KR_IDX_PER_CHUNK - 1) {
		KR_BARRIER_VAR(off);	/* both loads from the bounds-checked register */
		e += off;
		*lo = e[0];
		*hi = e[1];
		return 0;
	}
	if (off != KR_IDX_PER_CHUNK - 1)
		return -1;
	*lo = e[KR_IDX_PER_CHUNK - 1];
	e = (const __u32 *)KR_CHUNK_GET(ring, hdr->idx_chunk + (__u32)c + 1);
	if (!e)
		return -1;
	*hi = e[0];
	return 0;
}

/* Hash of point i of a chunk (i is masked: callers keep it below KR_PTS_PER_CHUNK anyway,
 * the mask only lets the verifier see it). */
static __always_inline __u32 kr_chunk_hash(const struct kr_point *pts, __u32 i)
{
	return kr_point_hash(&pts[i & (KR_PTS_PER_CHUNK - 1)]);
}

#ifdef KR_LOOKUP_BPF
/* All ones when a < b, else 0, computed without a branch (the barrier keeps the compiler
 * from turning it back into a compare-and-jump: one verifier path, no mispredictions). */
static __always_inline __u32 kr_lt_mask(__u32 a, __u32 b)
{
	__u64 d = (__u64)a - (__u64)b;

	KR_BARRIER_VAR(d);
	return (__u32)-(d >> 63);
}

/* 1 when a < b, else 0, without a branch. */
static __always_inline __u32 kr_lt_bit(__u32 a, __u32 b)
{
	__u64 d = (__u64)a - (__u64)b;

	KR_BARRIER_VAR(d);
	return (__u32)(d >> 63);
}
#else
/* Userspace: the same without the barrier, which cost ~5 instructions a compare and kept
 * gcc and clang from their own branchless forms (sbb, setb, cmov; checked in the
 * objects: no compare-and-jump for these).  Fewer instructions behind each key's cache
 * miss let the CPU overlap more keys (build/bench/ring_lookup, docs/ring.md). */
static __always_inline __u32 kr_lt_mask(__u32 a, __u32 b)
{
	return -(__u32)(a < b);
}

static __always_inline __u32 kr_lt_bit(__u32 a, __u32 b)
{
	return a < b;
}
#endif

/*
 * Within one chunk: the first i in [0, n) with hash(pts[base + i]) >= h, or n when there is
 * none (n <= KR_PTS_PER_CHUNK, base + n <= KR_PTS_PER_CHUNK, points ascending).  A
 * branchless lower bound with a fixed number of halving steps (idempotent once n == 1):
 * invariant: the answer is in [b, b + n].
 */
static __always_inline __u32 kr_chunk_lb(const struct kr_point *pts, __u32 base, __u32 n, __u32 h)
{
	__u32 b = 0;
	int s;

	if (n == 0)
		return 0;
	for (s = 0; s < KR_PTS_SHIFT; s++) {	/* 2048 -> 1 in 11 halvings */
		__u32 half = n >> 1;

		b += half & kr_lt_mask(kr_chunk_hash(pts, base + b + half), h);
		n -= half;
	}
	return b + kr_lt_bit(kr_chunk_hash(pts, base + b), h);
}

/* min(a, b) without a branch. */
#ifdef KR_LOOKUP_BPF
static __always_inline __u32 kr_min_u32(__u32 a, __u32 b)
{
	return b ^ ((a ^ b) & kr_lt_mask(a, b));
}
#else
static __always_inline __u32 kr_min_u32(__u32 a, __u32 b)
{
	return a < b ? a : b;	/* cmov */
}
#endif

/* Points counted per window.  The guess is off by about sqrt(bucket size / 6) points on
 * average (hashes are uniform), at 128..255 points per bucket.  32 points hold the answer
 * for ~97% of keys at 14.8M points (~98% in userspace, where windows may cross chunks;
 * 16 points: ~79%; the window next to the first holds nearly all the rest).  In BPF all
 * of the window's points are compared (its 4 cache lines are read in parallel); in
 * userspace kr_ptr_count() prefetches the window's lines and binary-searches it, which
 * keeps the CPU overlapping consecutive keys' memory reads (userspace compared 16 points
 * before, to keep the code behind the miss short; the ~21% of keys that then needed the
 * second window each cost a mispredicted branch after the miss).  Same answers; measured
 * by build/bench/xdp_forward and build/bench/ring_lookup (docs/ring.md). */
#ifndef KR_WINDOW
#define KR_WINDOW		32
#endif
_Static_assert(KR_WINDOW >= 2 && (KR_WINDOW & (KR_WINDOW - 1)) == 0,
	       "KR_WINDOW: a power of two (the window's points are indexed with a mask)");

/* The hash of a point for counting, as one 32-bit load on little-endian machines
 * (hash_lo and hash_hi are the two halves of a little-endian __u32 at a 2-byte aligned
 * address).  In BPF a plain load (the verifier allows a misaligned load of a map value; on
 * the JIT's targets it is one instruction); in C a 4-byte memcpy, which compilers turn
 * into one load where misaligned loads are allowed, without undefined behaviour. */
static __always_inline __u32 kr_count_hash(const struct kr_point *p)
{
#if defined(KR_LOOKUP_BPF) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return *(const __u32 *)(const void *)p;
#elif __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	__u32 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
#else
	return kr_point_hash(p);
#endif
}

/* Fully unrolled loops (constant offsets, no loop counter). */
#if defined(__clang__)
#define KR_UNROLL _Pragma("unroll")
#else
#define KR_UNROLL _Pragma("GCC unroll 64")
#endif

#ifdef KR_LOOKUP_BPF
/*
 * The number of points p[i], i < max, whose hash is below h.  The caller has bounded p so
 * that all max points lie in the chunk; the addresses are p plus constant offsets (no
 * per-point index arithmetic), the loads are independent of each other, no branch, no loop.
 */
static __always_inline __u32 kr_ptr_count(const struct kr_point *p, __u32 h, const int max)
{
	__u32 c = 0;
	int i;

	KR_UNROLL
	for (i = 0; i < max; i++) {
		c += kr_lt_bit(kr_count_hash(&p[i]), h);
		/* one point at a time in the code (the CPU still overlaps the loads): clang
		 * would otherwise hoist all the loads and spill them to the stack */
		asm volatile("" : "+r"(c) : : "memory");
	}
	return c;
}
#else
/*
 * Userspace: the number of points p[i], i < max (a power of two), whose hash is below h,
 * for points in ascending order (as in every image: kr_image_check verifies it; the
 * window may start before the bucket and end after it, the order holds across buckets
 * and into the last chunk's 0xff padding).  The window's cache lines are prefetched
 * first, then a branchless binary search: log2(max) + 1 dependent loads, the first of
 * which waits for memory (the others' lines arrive with it).  Counting all max points
 * instead (the BPF code above) puts max loads and ~3 * max instructions behind the cache
 * miss; with those in flight the CPU overlapped fewer keys' misses (build/bench/ring_lookup,
 * docs/ring.md).
 */
static __always_inline __u32 kr_ptr_count(const struct kr_point *p, __u32 h, const int max)
{
	__u32 c = 0;
	int i;

	for (i = 0; i < max * (int)sizeof(*p); i += 64)
		__builtin_prefetch((const char *)p + i);
	__builtin_prefetch((const char *)p + max * sizeof(*p) - 1);
	KR_UNROLL
	for (i = max / 2; i >= 1; i /= 2)	/* the answer is in [c, c + 2i] */
		c += (__u32)i & kr_lt_mask(kr_count_hash(&p[c + i - 1]), h);
	return c + kr_lt_bit(kr_count_hash(&p[c]), h);
}
#endif

/* kr_window_at() results. */
#define KR_WIN_FOUND	1	/* *out set */
#define KR_WIN_BELOW	2	/* the answer is before the window */
#define KR_WIN_ABOVE	3	/* the answer is after the window */
#define KR_WIN_CROSS	4	/* the window crosses a chunk boundary: not counted */

/*
 * The common case of kr_image_find(): count the points below h in the window of w points
 * [a, a + w) (0 < w <= KR_WINDOW) inside bucket [lo, hi).
 * The answer is a + c when the window brackets h: c > 0, or the window starts the bucket
 * (points before lo are below h), or lt_before (point a - 1 is known to be below h); and
 * c < w, or the window ends the bucket (points from hi on are >= h), or ge_after (point
 * a + w is known to be >= h).  One chunk lookup; in BPF KR_WINDOW independent loads from
 * one bounded pointer at constant offsets (userspace: kr_ptr_count's binary search).  All KR_WINDOW points from s = min(a, chunk end -
 * KR_WINDOW) are counted, without a mask: the d = a - s points before the window are a
 * prefix of the sorted run (subtracted when all below h), and points past the window are
 * counted only when w < KR_WINDOW, which kr_window_find() asks for only when the window
 * ends the bucket (they are points of later buckets, or the padding of the last chunk, hash
 * 0xffffffff), or ends at a chunk boundary (none counted), or with ge_after (point a + w
 * and all after it are >= h): never a point below h.  Returns KR_WIN_FOUND with
 * *out (and *backend when *out < a + w), KR_WIN_BELOW / KR_WIN_ABOVE / KR_WIN_CROSS, or
 * -1 for a missing chunk.
 */
static __always_inline int kr_window_at(void *ring, const struct kr_image_hdr *hdr, __u32 h,
					__u32 lo, __u32 hi, __u32 a, __u32 w, int lt_before,
					int ge_after, __u32 *out, __u32 *backend)
{
	__u32 off = a & (KR_PTS_PER_CHUNK - 1), s, d, c;
	const struct kr_point *pts;

#if defined(KR_CHUNKS_CONTIGUOUS) && !defined(KR_LOOKUP_BPF)
	/* Userspace image buffer: the points chunks follow each other without a gap (2048
	 * points fill a chunk), so the window runs on into the next chunk when there is one;
	 * only the last chunk's windows are counted from 32 points before its end. */
	__u32 lim = KR_PTS_PER_CHUNK - KR_WINDOW;

	if (hdr->pt_chunk + (a >> KR_PTS_SHIFT) + 1 < hdr->nchunks)
		lim += KR_PTS_PER_CHUNK;
	s = kr_min_u32(off, lim);
	d = off - s;
	if (d + w > KR_WINDOW)
		return KR_WIN_CROSS;		/* past the last chunk: not in a valid image */
#else
	if (off + w > KR_PTS_PER_CHUNK)
		return KR_WIN_CROSS;
	s = kr_min_u32(off, KR_PTS_PER_CHUNK - KR_WINDOW);
	d = off - s;				/* d + w <= KR_WINDOW */
	if (s > KR_PTS_PER_CHUNK - KR_WINDOW || d + w > KR_WINDOW)
		return KR_WIN_CROSS;		/* never: bounds for the verifier */
#endif
	pts = (const struct kr_point *)KR_CHUNK_GET(ring, hdr->pt_chunk + (a >> KR_PTS_SHIFT));
	if (!pts)
		return -1;
	KR_BARRIER_VAR(s);
	pts += s;
	c = kr_ptr_count(pts, h, KR_WINDOW);
	c -= kr_min_u32(c, d);
	if (c == 0 && a != lo && !lt_before)
		return KR_WIN_BELOW;
	if (c == w && a + w != hi && !ge_after)
		return KR_WIN_ABOVE;
	*out = a + c;
	if (c < w)
		*backend = pts[(d + c) & (KR_WINDOW - 1)].backend;
	return KR_WIN_FOUND;
}

/*
 * Inside bucket [lo, hi) (lo < hi): the window around the interpolated guess, then, when
 * the answer lies beyond it, the window next to it on that side (what the first window
 * counted tells that point a is >= h, or that point a + w - 1 is below h).  A first window
 * that would cross a chunk boundary (about 1 key in 70) is cut at the boundary, keeping
 * the side of the guess: the second window, if needed, then starts at the boundary, in the
 * other chunk (a window across chunks is not counted: kr_range_search, a dozen dependent
 * reads, would have to find the point; in userspace's one buffer windows may cross chunks,
 * nothing is cut).  Returns KR_WIN_FOUND, another KR_WIN_* when the two windows cannot
 * tell, or -1.
 */
static __always_inline int kr_window_find(void *ring, const struct kr_image_hdr *hdr, __u32 h,
					  __u32 lo, __u32 hi, __u32 guess, __u32 *out,
					  __u32 *backend)
{
	__u32 w = kr_min_u32(hi - lo, KR_WINDOW), a, w1;
	int r;

	a = guess - kr_min_u32(guess - lo, KR_WINDOW / 2 - 1);	/* centred, at least lo */
	a = kr_min_u32(a, hi - w);
	w1 = w;
#if !defined(KR_CHUNKS_CONTIGUOUS) || defined(KR_LOOKUP_BPF)	/* (userspace's one buffer: no cut) */
	__u32 ce = (a | (KR_PTS_PER_CHUNK - 1)) + 1;	/* the end of a's chunk */

	if (a + w > ce) {		/* [a, a + w) crosses it: lo < ce < hi */
		if (guess < ce) {
			a = ce - kr_min_u32(ce - lo, w);	/* [a, ce), at least lo */
			w1 = ce - a;
		} else {
			a = ce;					/* [ce, ce + w1), at most hi */
			w1 = kr_min_u32(w, hi - ce);
		}
	}
#endif
	r = kr_window_at(ring, hdr, h, lo, hi, a, w1, 0, 0, out, backend);
	if (r == KR_WIN_BELOW) {	/* a > lo, point a >= h: the window [a2, a) before it */
		__u32 a2 = a - kr_min_u32(a - lo, w);

		return kr_window_at(ring, hdr, h, lo, hi, a2, a - a2, 0, 1, out, backend);
	}
	if (r == KR_WIN_ABOVE) {	/* a + w1 < hi, point a + w1 - 1 < h: the window after */
		a += w1;
		return kr_window_at(ring, hdr, h, lo, hi, a, kr_min_u32(w, hi - a), 1, 0, out,
				    backend);
	}
	return r;
}

/* Hash of the last point of [lo, hi) that lies in chunk c (lo < hi, c in range). */
static __always_inline int kr_chunk_last(void *ring, const struct kr_image_hdr *hdr, __u32 c,
					 __u32 hi, __u32 *hash)
{
	const struct kr_point *pts;

	pts = (const struct kr_point *)KR_CHUNK_GET(ring, hdr->pt_chunk + c);
	if (!pts)
		return -1;
	*hash = kr_chunk_hash(pts, kr_min_u32((c + 1) << KR_PTS_SHIFT, hi) - 1);
	return 0;
}

/*
 * Image points [lo, hi) spanning chunks c0 < c1 (a bucket that straddles a chunk boundary,
 * or one larger than a chunk): first the chunk, by a branchless lower bound over the
 * chunks' last points in range (first chunk whose last point is >= h), then the point in
 * that chunk.  *out = first point >= h, or hi; *backend as kr_image_find().
 */
static __always_inline int kr_range_search(void *ring, const struct kr_image_hdr *hdr, __u32 h,
					   __u32 lo, __u32 hi, __u32 *out, __u32 *backend)
{
	__u32 c0 = lo >> KR_PTS_SHIFT, cb = c0, n = ((hi - 1) >> KR_PTS_SHIFT) - c0 + 1;
	__u32 ch, first, last, i;
	const struct kr_point *pts;
	int s;

	/* the first chunk whose last point in range is >= h is in [cb, cb + n] */
	for (s = 0; s < KR_SEARCH_STEPS - KR_PTS_SHIFT; s++) {	/* up to 2^24 chunks */
		__u32 half = n >> 1;

		if (half == 0)
			break;
		if (kr_chunk_last(ring, hdr, cb + half, hi, &ch))
			return -1;
		cb += half & kr_lt_mask(ch, h);
		n -= half;
	}
	if (kr_chunk_last(ring, hdr, cb, hi, &ch))
		return -1;
	if (ch < h) {
		cb++;
		if (cb << KR_PTS_SHIFT >= hi) {	/* no point of the range is >= h */
			*out = hi;
			return 0;
		}
	}
	first = cb == c0 ? lo : cb << KR_PTS_SHIFT;
	last = kr_min_u32((cb + 1) << KR_PTS_SHIFT, hi);
	pts = (const struct kr_point *)KR_CHUNK_GET(ring, hdr->pt_chunk + cb);
	if (!pts)
		return -1;
	i = kr_chunk_lb(pts, first & (KR_PTS_PER_CHUNK - 1), last - first, h);
	*backend = pts[(first + i) & (KR_PTS_PER_CHUNK - 1)].backend;
	*out = first + i;
	return 0;
}

/* No backend read yet (kr_image_find's *backend). */
#define KR_BACKEND_UNKNOWN	0xffffffffu

/*
 * Image index of the first point with hash >= h; past the last point, 0 (wrap-around).
 * The key's top bucket_bits select a bucket [idx[k], idx[k+1]) of the index; inside it the
 * point is found by counting the window around the interpolated guess, or the one next
 * to it (kr_window_find), else by a branchless binary search over the bucket (always complete,
 * whatever the bucket's size or span).  If no point of the bucket qualifies the answer is
 * idx[k+1], the first point of the next non-empty bucket.  Map lookups in the common case:
 * one for the index (two when k and k+1 straddle chunks), one for the points; the header
 * is the caller's.
 * *backend = the ring-local backend of point *out when it was read on the way, else
 * KR_BACKEND_UNKNOWN.  Returns 0, or -1 when the image is inconsistent (a chunk is
 * missing, an entry is out of range): the caller must then not route with this image.
 */
static __always_inline int kr_image_find(void *ring, const struct kr_image_hdr *hdr, __u32 h,
					 __u32 *out, __u32 *backend)
{
	__u32 bits = hdr->bucket_bits, n = hdr->npoints;
	__u32 lo, hi, k, sh, guess;
	int r;

	if (bits < KR_MIN_BUCKET_BITS || bits > KR_MAX_BUCKET_BITS || n == 0)
		return -1;
	sh = 32 - bits;
	k = h >> sh;
	if (kr_idx_pair(ring, hdr, k, &lo, &hi))
		return -1;
	if (hi > n || lo > hi)
		return -1;
	*backend = KR_BACKEND_UNKNOWN;
	if (lo < hi) {
		/* where h lies in the bucket's hash range, scaled to its points: no division */
		guess = lo + (__u32)(((__u64)(h & ((1u << sh) - 1)) * (hi - lo)) >> sh);
		r = kr_window_find(ring, hdr, h, lo, hi, guess, &lo, backend);
		if (r < 0)
			return -1;
		if (r != KR_WIN_FOUND && kr_range_search(ring, hdr, h, lo, hi, &lo, backend))
			return -1;
	}
	*out = lo >= n ? 0 : lo;
	return 0;
}

/* kr_image_find() without the backend: the reference lookup of the image. */
static __always_inline int kr_image_lower_bound(void *ring, const struct kr_image_hdr *hdr,
						__u32 h, __u32 *out)
{
	__u32 b;

	return kr_image_find(ring, hdr, h, out, &b);
}

#endif /* KR_LOOKUP_H */
