/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ketama continuum, bit-compatible with pingora-ketama v1/v2 (and nginx
 * `hash ... consistent` for v1).  See docs/engine.md.
 *
 *   base(b)  = "<ip as Rust Display>" NUL "<port decimal>"
 *   h_j      = crc32(base || le32(h_{j-1})), h_{-1} = 0; weight * point_multiple points
 *   v1       point_multiple 160; equal hashes: the backend listed first wins
 *   v2       point_multiple N;   equal hashes: the smallest socket address wins
 *            (all IPv4 before all IPv6, then (octets, port))
 *   ring     points sorted by hash, duplicates removed (first of each run kept)
 *   lookup   first point with hash >= crc32(key), past the last point: point 0
 *   walk     the following ring points, in order, wrapping
 *
 * Building: the CRC state of each base string is computed once (4 bytes per point), the
 * points are generated in tie order and stable-sorted by radix (O(P); rings >= 1M points:
 * scattered by top byte while generated, then each bucket sorted in cache), then
 * deduplicated in one pass.  The removed duplicates are kept in r->dups (the kernel image
 * stores them after their winner so that skipping a backend is exact).  Peak memory
 * ~6 bytes per point for rings >= 1M points, ~12 below.
 *
 * Limits: 1..65536 backends (the ring-local backend index is 16 bits); weight 0 = drained
 * (no points, but the backend keeps its index); at most KR_MAX_POINTS points, counted in
 * 64 bits; a ring with no point at all is an error.
 */
#ifndef KR_CONTINUUM_H
#define KR_CONTINUUM_H

#include <stddef.h>
#include <stdint.h>
#include "addr.h"
#include "err.h"
#include "kr_image_kern_user.h"	/* KR_MAX_BACKENDS, KR_MAX_POINTS */

enum kr_ring_format {
	KR_RING_V1 = 1,
	KR_RING_V2 = 2,
};

#define KR_V1_POINT_MULTIPLE		160u	/* fixed for v1 */
#define KR_V2_DEFAULT_POINT_MULTIPLE	160u	/* pingora-ketama's default for v2 */

struct kr_backend_spec {
	struct kr_sockaddr addr;
	uint32_t weight;	/* 0 = drained: no points */
};

/* A point removed by deduplication (equal hash to an earlier point in tie order). */
struct kr_dup {
	uint32_t hash;
	uint32_t backend;	/* ring-local backend index of the removed point */
	uint32_t winner;	/* ring index of the point that kept this hash */
};

/*
 * The point generators.  kr_ring_build() takes the scalar one below 2^20 points, else
 * GFNI where the CPU has it, else the 4 lanes; stats.gen says which ran.  Each can be
 * forced for every ring (tests, benchmarks): kr_gen_force(), or the environment variable
 * KEYROUTER_POINT_GEN=scalar|lanes4|gfni (read by the first build that is not forced).
 * All give the same rings (tests/unit/test_point_gen.c).
 */
enum kr_gen {
	KR_GEN_AUTO = 0,	/* by ring size and CPU */
	KR_GEN_SCALAR,		/* one chain at a time, then the two-buffer LSD sort */
	KR_GEN_LANES4,		/* 4 chains at a time, counted then scattered by top byte */
	KR_GEN_GFNI,		/* 64 chains at a time with GFNI on AVX-512, as lanes4 */
};
#define KR_GEN_ENV "KEYROUTER_POINT_GEN"

/* "auto", "scalar", "lanes4", "gfni". */
const char *kr_gen_name(enum kr_gen g);
/* The generator named s (a kr_gen_name()), or -1. */
int kr_gen_parse(const char *s);
/* 1 if generator g can run on this CPU and build, else 0 and *why (when why is not NULL). */
int kr_gen_available(enum kr_gen g, const char **why);
/* Every later kr_ring_build() uses generator g (KR_GEN_AUTO: chosen again per ring).
 * 0, or -1 with err when g cannot run here. */
int kr_gen_force(enum kr_gen g, struct kr_err *err);

struct kr_ring_stats {
	uint64_t generated;	/* points generated (before deduplication) */
	uint32_t gen;		/* enum kr_gen: the generator that ran */
	uint64_t build_ns;	/* wall time of kr_ring_build() */
	uint64_t gen_ns, sort_ns, dedup_ns;	/* its phases: points, radix sort, dedup+digest */
	size_t peak_bytes;	/* peak heap held by the build (its own allocations) */
};

struct kr_ring {
	uint32_t version;		/* KR_RING_V1 / KR_RING_V2 */
	uint32_t point_multiple;	/* points per weight unit (160 for v1) */
	uint32_t nbackends;
	uint32_t npoints;		/* ring points after deduplication */
	uint32_t ndups;			/* points removed by deduplication */
	uint32_t digest;		/* CRC-32 over (hash le32, backend le32) of every point */
	uint32_t *hash;			/* [npoints], strictly ascending */
	uint16_t *backend;		/* [npoints], ring-local backend index (= input order) */
	struct kr_dup *dups;		/* [ndups], by winner, then tie order */
	struct kr_backend_spec *backends;	/* [nbackends], a copy of the input */
	struct kr_ring_stats stats;
};

/*
 * Builds a ring of `n` backends (index = position in `b`).  version KR_RING_V1 (pm must be
 * 0 or 160) or KR_RING_V2 (pm >= 1; 0 means KR_V2_DEFAULT_POINT_MULTIPLE).
 * Returns 0 and *out, or -1 with err naming the cause.  Free with kr_ring_free().
 */
int kr_ring_build(struct kr_ring **out, const struct kr_backend_spec *b, uint32_t n,
		  uint32_t version, uint32_t pm, struct kr_err *err);
void kr_ring_free(struct kr_ring *r);

/* The v2 tie order: order[0..n) = backend indices sorted by socket address, equal addresses
 * by index (a point of an earlier backend in this order wins an equal hash).  v1 breaks
 * ties by index; the analytics' tie ranks come from here too (kr_an_tie_rank). */
void kr_ring_tie_order(const struct kr_backend_spec *b, uint32_t n, uint32_t *order);

/* "v1" / "v2 point_multiple=16" */
const char *kr_ring_describe(const struct kr_ring *r, char *buf, size_t len);

/* CRC-32 of a key: the hash the ring is searched with. */
uint32_t kr_key_hash(const void *key, size_t len);

/* Ring index of the first point with hash >= h; past the last point 0.  Plain binary
 * search over the whole ring (the reference the bucket index is compared against). */
uint32_t kr_ring_lower_bound(const struct kr_ring *r, uint32_t h);

static inline uint32_t kr_ring_next(const struct kr_ring *r, uint32_t i)
{
	return i + 1 < r->npoints ? i + 1 : 0;
}

/* Failover walk: backends of the n ring points following ring index i (repeats included,
 * wrapping) into out[0..n). */
void kr_ring_walk(const struct kr_ring *r, uint32_t i, uint32_t *out, uint32_t n);

/*
 * Route hash h skipping ineligible backends (skip[b] != 0), exactly as a ring built
 * without them would: at each ring point from the lookup on, the winner and then the
 * points deduplication removed at that hash (tie order) are candidates.  Returns 0 with
 * the ring index of the point (of the winner, for a removed point) and the backend, or
 * -1 when no backend is eligible.  skip == NULL: plain lookup.
 */
int kr_ring_route(const struct kr_ring *r, uint32_t h, const uint8_t *skip,
		  uint32_t *ring_index, uint32_t *backend);

/* Digest of a point sequence (CRC-32 over hash le32, backend le32 for each).  On x86-64
 * with PCLMULQDQ and SSE4.1 (checked at run time) by carry-less multiplication; else, and
 * always in kr_ring_digest_points_table(), by table lookups: the same values. */
uint32_t kr_ring_digest_points(const uint32_t *hash, const uint16_t *backend, uint32_t n);
uint32_t kr_ring_digest_points_table(const uint32_t *hash, const uint16_t *backend,
				     uint32_t n);

/* madvise(MADV_HUGEPAGE) on the page-aligned inside of a large buffer (>= 4 MiB). */
void kr_hint_huge(void *p, size_t n);

/* Base string of a backend ("<ip>\0<port>"); returns its length (NUL included).
 * buf >= KR_SOCKADDR_STRLEN. */
size_t kr_ring_base_string(const struct kr_sockaddr *a, char *buf);

#endif
