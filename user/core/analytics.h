/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ring analytics: the theory of a ketama ring (load imbalance, collisions, memory), the
 * measurement of a built ring (each backend's share of the 32-bit key space), the exact
 * diff of two rings, and the search for the smallest point_multiple meeting a target.
 *
 * Everything here works on a plain view of a ring (sorted, deduplicated point hashes and
 * the owner of each point), so it does not depend on how the engine stores its points;
 * user/cli/cmd_analyze.c converts the engine's rings into this view.
 *
 * Definitions (docs/analytics.md explains them at length):
 *   share_i     number of 32-bit key hashes whose owner is backend i (sum = 2^32).  A key
 *               hash h is owned by the first point with hash >= h (wrapping to point 0),
 *               so point j owns the arc (hash[j-1], hash[j]], point 0 the wrap-around arc.
 *   r_i         share_i / expected_i, expected_i = 2^32 * w_i / sum(w)   (w_i > 0 only)
 *   CV          sqrt(mean_i (r_i - 1)^2) over the backends with w_i > 0: the RMS relative
 *               error of the shares.  For equal weights the r_i average exactly 1, so this
 *               is the ordinary coefficient of variation of the shares.
 *   max/mean    max_i r_i / mean_i r_i.
 */
#ifndef KR_ANALYTICS_H
#define KR_ANALYTICS_H

#include <stdint.h>
#include <stddef.h>

#define KR_AN_SPACE	(1ull << 32)	/* size of the key-hash space */
#define KR_AN_NONE	UINT32_MAX	/* "no owner": the key space of an empty ring */
/* The theory describes rings up to this size (far beyond what the engine builds). */
#define KR_AN_THEORY_MAX_POINTS	(1ull << 40)

/* A ring as analytics sees it.  hash[] strictly ascending; owner[j] < nowners. */
struct kr_an_ring {
	uint32_t npoints;
	uint32_t nowners;
	uint32_t *hash;
	uint32_t *owner;
	int borrowed_hash;	/* hash[] belongs to someone else (not freed here) */
};

int kr_an_ring_alloc(struct kr_an_ring *r, uint32_t npoints, uint32_t nowners);
/* Only owner[] allocated; hash points to the caller's array (e.g. the engine's ring). */
int kr_an_ring_borrow(struct kr_an_ring *r, uint32_t *hash, uint32_t npoints, uint32_t nowners);
void kr_an_ring_free(struct kr_an_ring *r);

/* ---- theory ------------------------------------------------------------------------ */

/* CV of one backend's share for k_i of H points placed uniformly at random:
 * share ~ Beta(k_i, H - k_i), so CV_i = sqrt((H - k_i) / (k_i (H + 1))). */
double kr_an_cv_backend(uint64_t total, uint64_t k);
/* N equal backends with k points each: sqrt((N-1)/(N k + 1)). */
double kr_an_cv_equal(uint64_t nbackends, uint64_t k);
/* The ring's expected CV (as defined above): sqrt(mean_i CV_i^2), backends with k_i = 0
 * skipped.  This is exact in expectation: E[(r_i - 1)^2] = CV_i^2 since E[r_i] = 1. */
double kr_an_cv_ring(const uint64_t *k, uint32_t n);
/* Colliding pairs among P uniform 32-bit hashes: P(P-1)/2^33 (about P^2/2^33). */
double kr_an_collision_pairs(uint64_t npoints);
/* Points removed by deduplication, expected: P - 2^32 (1 - (1 - 2^-32)^P). */
double kr_an_collision_removed(uint64_t npoints);

/*
 * The systematic bias collisions add.  At a collision only the first point in tie order
 * survives (v1: the backend listed first; v2: the smallest socket address), so a backend
 * ranked after others loses a fraction of its points.  With L_i = points of backends
 * ranked before i, point survival is exp(-L_i / 2^32) and the expected ratio is
 *   E[r_i] = P exp(-L_i/2^32) / sum_j k_j exp(-L_j/2^32).
 * rank[i] is the tie rank of backend i (0 wins every tie; equal ranks are not allowed).
 * bias[i] receives E[r_i] - 1.  Returns the RMS of the biases (0 if n == 0).
 */
double kr_an_collision_bias(const uint64_t *k, const uint32_t *rank, uint32_t n, double *bias);

/* Expected max_i r_i, shares approximated as Gamma(k_i, 1/k_i) (independent). */
double kr_an_expected_max(const uint64_t *k, uint32_t n);

/* Memory. */
struct kr_an_mem {
	uint64_t v1_bytes;		/* 8 B per point (u32 hash + u32 index) */
	uint64_t v2_bytes;		/* 6 B per point (u32 hash + u16 index) */
	uint32_t bucket_bits;		/* kernel image: as the encoder chooses it */
	uint32_t hdr_chunks, idx_chunks, bt_chunks, pt_chunks, nchunks;
	uint64_t image_bytes;		/* nchunks * KR_CHUNK_BYTES: the map's value memory */
};
/* image_points: points the kernel image stores (the ring's points plus the kept
 * duplicates, i.e. every generated point); ring_points: points of the deduplicated ring. */
int kr_an_memory(uint64_t ring_points, uint64_t image_points, uint32_t nbackends,
		 struct kr_an_mem *out);

/* Everything the theory says about one ring shape: weights w_i, point_multiple m. */
struct kr_an_theory {
	uint64_t points;		/* sum w_i * m (before deduplication) */
	double cv;			/* random placement (kr_an_cv_ring) */
	double cv_bias;			/* RMS collision bias (kr_an_collision_bias) */
	double cv_total;		/* sqrt(cv^2 + cv_bias^2) */
	double max_over_mean;		/* kr_an_expected_max */
	double collisions;		/* expected removed points */
	double collision_pairs;		/* P(P-1)/2^33 */
	struct kr_an_mem mem;		/* with image_points = points */
};
/* rank may be NULL (tie rank = index).  Fails (-ERANGE) if the ring would be too big. */
int kr_an_theory(const uint32_t *weight, const uint32_t *rank, uint32_t n, uint64_t m,
		 int want_max, struct kr_an_theory *out);

/* ---- measurement ------------------------------------------------------------------- */

/* share[o] = keys owned by owner o (array of r->nowners, zeroed here).  Sum = 2^32 unless
 * the ring is empty. */
void kr_an_shares(const struct kr_an_ring *r, uint64_t *share);

struct kr_an_stats {
	uint32_t active;		/* backends with weight > 0 */
	double cv;			/* sqrt(mean (r_i - 1)^2) */
	double max_over_mean;		/* max r_i / mean r_i */
	double min_over_mean;
	uint32_t argmax, argmin;
	double mean_ratio;
};
/* weight[o] of each owner (0 = drained, skipped). share[] from kr_an_shares. */
int kr_an_share_stats(const uint64_t *share, const uint32_t *weight, uint32_t n,
		      struct kr_an_stats *out);

/* ---- diff -------------------------------------------------------------------------- */

/*
 * Exact diff of two rings whose owners live in one id space (both nowners equal).  The
 * union of both rings' points cuts the key space into intervals on which both owners are
 * constant; merging the two sorted point arrays walks those intervals in order.  moved =
 * keys whose owner differs (out of 2^32).  lost[o]/gained[o] (arrays of nowners, may be
 * NULL): keys that leave / arrive at owner o.  An empty ring owns nothing (KR_AN_NONE).
 */
int kr_an_diff(const struct kr_an_ring *a, const struct kr_an_ring *b, uint64_t *moved,
	       uint64_t *lost, uint64_t *gained);

/* The least fraction of keys any assignment must move when the normalised shares go from
 * s to t: sum_i max(0, s_i - t_i).  Inputs need not be normalised (sums may differ). */
double kr_an_min_moved(const double *s, const double *t, uint32_t n);

/* ---- plan -------------------------------------------------------------------------- */

struct kr_an_measured {
	uint64_t points;		/* generated points */
	uint64_t ring_points;		/* after deduplication */
	double cv, max_over_mean;
};
/* Builds a real ring with point_multiple m and measures it; returns 0 or -errno. */
typedef int (*kr_an_measure_fn)(void *ctx, uint64_t m, struct kr_an_measured *out);

enum kr_an_target { KR_AN_TARGET_CV, KR_AN_TARGET_MAX_OVER_MEAN };

struct kr_an_plan_req {
	const uint32_t *weight;
	const uint32_t *rank;		/* tie order, NULL = index order */
	uint32_t n;
	enum kr_an_target target;
	double value;			/* the CV or max/mean to reach */
	kr_an_measure_fn measure;	/* NULL: theory only */
	void *ctx;
	uint64_t point_budget;		/* measure only rings up to this many points */
	uint32_t max_confirm_steps;	/* steps of +2% (at least +1) tried above the theory answer */
};

struct kr_an_plan {
	uint64_t m_theory;		/* smallest m whose theory meets the target */
	struct kr_an_theory th;		/* theory at m_theory */
	int confirmed;			/* 1: m_confirmed measured OK; 0: not measured (budget);
					 * -1: nothing within max_confirm_steps met the target */
	uint64_t m_confirmed;
	struct kr_an_measured meas;	/* at m_confirmed (or the last tried) */
	uint64_t m_best;		/* if the target is unreachable: the m with the lowest
					 * theoretical total (collisions included) */
	double best_value;
};
/* 0, -EDOM when the target cannot be reached (plan->m_best/best_value say how close),
 * -EINVAL on bad input, or the measure callback's error. */
int kr_an_plan(const struct kr_an_plan_req *req, struct kr_an_plan *plan);

/* The point_multiple in [1, mmax] with the lowest theoretical CV, collisions included
 * (where more points stop helping), and that CV. */
int kr_an_optimum(const uint32_t *weight, const uint32_t *rank, uint32_t n, uint64_t mmax,
		  uint64_t *m, double *cv);

/* The plan table's k values per weight unit: 1 .. 100000, ~4 per decade (1, 2, 5, 10, 16,
 * 20, 50, ... with 160 and 1600 included); returns how many were written (<= max). */
uint32_t kr_an_plan_ks(uint64_t *ks, uint32_t max, uint64_t kmax);

/* Deterministic point_multiple for a target CV (config "point_multiple": "auto"): the plan
 * computation in theory only.  0 or -EDOM / -EINVAL as kr_an_plan. */
int kr_an_auto_point_multiple(const uint32_t *weight, const uint32_t *rank, uint32_t n,
			      double target_cv, uint32_t *m);

/* "512 B", "3.0 KiB", "8.77 MiB", "4.57 GiB" */
const char *kr_an_bytes(uint64_t bytes, char *buf, size_t len);

struct kr_backend_spec;
/* Tie rank of each backend (0 wins every tie): v1 = index, v2 = socket address order
 * (kr_ring_tie_order).  malloc'd [n], or NULL (out of memory). */
uint32_t *kr_an_tie_rank(const struct kr_backend_spec *b, uint32_t n, uint32_t version);

#endif
