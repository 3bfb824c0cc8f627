// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ring analytics (user/core/analytics.c): theory against Monte-Carlo, measured shares and CV
 * against a direct computation, the exact diff against hand-built rings and brute-force
 * ownership, the plan's answer against a built ring.
 *
 * Statistical bound: every Monte-Carlo comparison estimates a mean over M independent
 * rings and asserts |estimate - theory| <= 4 standard errors of that estimate (the SE is
 * estimated from the same samples).  For a normal estimator a false failure has
 * probability 6e-5 per check; the PRNG seeds are fixed, so the test is deterministic.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "analytics.h"
#include "an_source.h"
#include "continuum.h"
#include "image.h"
#include "kr_image_kern_user.h"

#define SIGMAS 4.0

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd64(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct pt {
	uint32_t hash, owner;
};

static int pt_cmp(const void *a, const void *b)
{
	const struct pt *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->owner < y->owner ? -1 : x->owner > y->owner;	/* lower owner wins ties */
}

/* Sorts pts, dedups (first of each run wins), fills r (allocated here). */
static int ring_from_points(struct pt *pts, uint32_t n, uint32_t nowners, struct kr_an_ring *r)
{
	uint32_t m = 0;

	qsort(pts, n, sizeof(*pts), pt_cmp);
	if (kr_an_ring_alloc(r, n, nowners))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		if (m && r->hash[m - 1] == pts[i].hash)
			continue;
		r->hash[m] = pts[i].hash;
		r->owner[m++] = pts[i].owner;
	}
	r->npoints = m;
	return 0;
}

/* A random ring: backend i gets w[i] * mult uniform random points. */
static int random_ring(const uint32_t *w, uint32_t n, uint32_t mult, struct kr_an_ring *r)
{
	uint32_t total = 0, j = 0;
	struct pt *pts;
	int err;

	for (uint32_t i = 0; i < n; i++)
		total += w[i] * mult;
	pts = malloc((total ? total : 1) * sizeof(*pts));
	if (!pts)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t p = 0; p < w[i] * mult; p++)
			pts[j++] = (struct pt){ (uint32_t)rnd64(), i };
	err = ring_from_points(pts, total, n, r);
	free(pts);
	return err;
}

static struct kr_an_ring hand_ring(const uint32_t *h, const uint32_t *o, uint32_t n,
				   uint32_t nowners)
{
	struct kr_an_ring r;

	if (kr_an_ring_alloc(&r, n, nowners))
		abort();
	memcpy(r.hash, h, n * sizeof(*h));
	memcpy(r.owner, o, n * sizeof(*o));
	return r;
}

/* Owner of key hash h: the first point >= h, wrapping (plain lower bound). */
static uint32_t owner_of(const struct kr_an_ring *r, uint32_t h)
{
	uint32_t lo = 0, hi = r->npoints;

	if (!r->npoints)
		return KR_AN_NONE;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (r->hash[mid] < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return r->owner[lo == r->npoints ? 0 : lo];
}

struct acc {
	double n, sum, sq;
};

static void acc_add(struct acc *a, double x)
{
	a->n++;
	a->sum += x;
	a->sq += x * x;
}
static double acc_mean(const struct acc *a) { return a->sum / a->n; }
static double acc_se(const struct acc *a)
{
	double m = acc_mean(a), var = (a->sq - a->n * m * m) / (a->n - 1);

	return sqrt(fmax(var, 0.0) / a->n);
}

static void check_within(const char *what, double est, double se, double theory, double slack)
{
	double bound = SIGMAS * se + slack;

	CHECK(fabs(est - theory) <= bound, "%s: estimate %.6g vs theory %.6g (|d| %.3g <= %.3g)",
	      what, est, theory, fabs(est - theory), bound);
}

static void test_formulas(void)
{
	uint64_t k[4] = { 100, 100, 100, 100 };

	CHECK(fabs(kr_an_cv_equal(4, 100) - sqrt(3.0 / 401.0)) < 1e-15, "cv_equal(4,100)");
	CHECK(fabs(kr_an_cv_ring(k, 4) - kr_an_cv_equal(4, 100)) < 1e-12,
	      "unequal formula reduces to the equal one for equal k");
	CHECK(fabs(kr_an_cv_backend(400, 100) - sqrt(300.0 / (100.0 * 401.0))) < 1e-15,
	      "cv_backend(H=400, k=100)");
	CHECK(kr_an_cv_equal(1, 1000) == 0.0, "one backend: CV 0");
	CHECK(fabs(kr_an_collision_pairs(1u << 16) - 65536.0 * 65535.0 / 8589934592.0) < 1e-12,
	      "collision pairs P(P-1)/2^33");
	/* for small P removed points ~ pairs */
	CHECK(fabs(kr_an_collision_removed(1000000) / kr_an_collision_pairs(1000000) - 1.0) < 1e-3,
	      "removed ~ pairs for small P (%.3f vs %.3f)", kr_an_collision_removed(1000000),
	      kr_an_collision_pairs(1000000));
	/* equal ranks of everything: no bias when nothing collides */
	{
		uint64_t kk[3] = { 10, 10, 10 };
		double b[3];

		CHECK(kr_an_collision_bias(kk, NULL, 3, b) < 1e-7, "tiny ring: no collision bias");
		CHECK(b[0] > 0 && b[2] < 0, "first in tie order gains, last loses");
	}
}

static void test_memory(void)
{
	struct kr_an_mem m;

	CHECK(kr_an_memory(3000, 3000, 10, &m) == 0, "memory(3000 points)");
	CHECK_EQ_U(m.v1_bytes, 24000, "v1 8 B/point");
	CHECK_EQ_U(m.v2_bytes, 18000, "v2 6 B/point");
	CHECK_EQ_U(m.bucket_bits, kr_image_bucket_bits(3000), "bucket bits as the encoder");
	CHECK_EQ_U(m.pt_chunks, 2, "3000 points = 2 chunks of 2048");
	CHECK_EQ_U(m.bt_chunks, 0, "10 backends: the table is in the header's chunk");
	CHECK_EQ_U(m.nchunks, 1 + m.idx_chunks + 0 + 2, "chunk total");
	CHECK_EQ_U(m.image_bytes, (uint64_t)m.nchunks * KR_CHUNK_BYTES, "image bytes");
	CHECK(kr_an_memory(14745600, 14745600, 2048, &m) == 0, "memory(14.7M points)");
	/* the image costs 6 B/point plus at most a few percent */
	CHECK(m.image_bytes >= 6ull * 14745600 && m.image_bytes < 6.5 * 14745600,
	      "image %llu B for 14.7M points: 6..6.5 B/point", (unsigned long long)m.image_bytes);
}

/* Measured shares and CV against a direct computation: a ring whose hashes are multiples
 * of 2^12 has an owner that is constant on every block (c*2^12 - 2^12, c*2^12], so
 * looking up one key per block (plus key 0) counts every one of the 2^32 keys. */
static void test_shares_direct(void)
{
	enum { N = 7, BLK = 1 << 12 };
	uint32_t w[N] = { 1, 2, 3, 1, 5, 2, 4 };
	struct kr_an_ring r;
	uint64_t share[N], direct[N] = { 0 };
	struct kr_an_stats st;
	double wsum = 18, sq = 0, mx = 0, mean = 0, ratio[N];

	CHECK(random_ring(w, N, 20, &r) == 0, "random ring");
	for (uint32_t j = 0; j < r.npoints; j++)
		r.hash[j] &= ~(uint32_t)(BLK - 1);
	/* re-dedup after rounding */
	{
		uint32_t m = 0;

		for (uint32_t j = 0; j < r.npoints; j++) {
			if (m && r.hash[m - 1] == r.hash[j])
				continue;
			r.hash[m] = r.hash[j];
			r.owner[m++] = r.owner[j];
		}
		r.npoints = m;
	}
	kr_an_shares(&r, share);
	direct[owner_of(&r, 0)] += 1;
	for (uint64_t c = 1; c <= (1ull << 32) / BLK; c++) {
		uint64_t last = c * BLK;	/* block (last - BLK, last] */

		if (last > UINT32_MAX) {	/* last block: (2^32 - BLK, 2^32 - 1] */
			direct[owner_of(&r, UINT32_MAX)] += BLK - 1;
			break;
		}
		direct[owner_of(&r, (uint32_t)last)] += BLK;
	}
	{
		int same = 1;
		uint64_t total = 0;

		for (int i = 0; i < N; i++) {
			same &= share[i] == direct[i];
			total += share[i];
		}
		CHECK(same, "shares equal a key-by-key count (all 2^32 keys)");
		CHECK_EQ_U(total, 1ull << 32, "shares sum to 2^32");
	}
	CHECK(kr_an_share_stats(share, w, N, &st) == 0, "share stats");
	for (int i = 0; i < N; i++) {
		ratio[i] = ((double)direct[i] / 4294967296.0) / (w[i] / wsum);
		mean += ratio[i] / N;
	}
	for (int i = 0; i < N; i++) {
		sq += (ratio[i] - 1) * (ratio[i] - 1);
		mx = fmax(mx, ratio[i]);
	}
	CHECK(fabs(st.cv - sqrt(sq / N)) < 1e-12, "CV %.9f = direct %.9f", st.cv, sqrt(sq / N));
	CHECK(fabs(st.max_over_mean - mx / mean) < 1e-12, "max/mean %.9f = direct %.9f",
	      st.max_over_mean, mx / mean);
	kr_an_ring_free(&r);
}

static void test_shares_edges(void)
{
	uint32_t h1[] = { 0 }, o1[] = { 0 };
	uint32_t h2[] = { 0, UINT32_MAX }, o2[] = { 0, 1 };
	uint32_t h3[] = { 5, 10 }, o3[] = { 1, 0 };
	struct kr_an_ring r;
	uint64_t s[2];
	uint32_t w[2] = { 1, 1 };
	struct kr_an_stats st;

	r = hand_ring(h1, o1, 1, 2);
	kr_an_shares(&r, s);
	CHECK(s[0] == 1ull << 32 && s[1] == 0, "one point owns everything");
	kr_an_ring_free(&r);
	r = hand_ring(h2, o2, 2, 2);
	kr_an_shares(&r, s);
	CHECK(s[0] == 1 && s[1] == UINT32_MAX, "points at 0 and 2^32-1: 1 and 2^32-1 keys");
	kr_an_ring_free(&r);
	r = hand_ring(h3, o3, 2, 2);
	kr_an_shares(&r, s);
	CHECK(s[1] == 6 + (1ull << 32) - 11 && s[0] == 5, "wrap-around arc goes to point 0");
	CHECK(kr_an_share_stats(s, w, 2, &st) == 0 && st.argmax == 1, "argmax");
	kr_an_ring_free(&r);
}

/* Theoretical CV against Monte-Carlo over many random rings. */
static void test_montecarlo_cv(void)
{
	enum { N = 24, M = 3000, MULT = 25 };
	uint32_t w[N];
	uint64_t k[N], share[N], H = 0;
	struct acc cv2 = { 0 }, r_small = { 0 }, r_big = { 0 }, mom = { 0 };
	uint32_t small = 0, big = 0;
	struct kr_an_stats st;

	for (int i = 0; i < N; i++) {
		w[i] = 1 + i % 4;	/* weights 1..4 */
		k[i] = (uint64_t)w[i] * MULT;
		H += k[i];
		if (w[i] == 4)
			big = i;
	}
	for (int t = 0; t < M; t++) {
		struct kr_an_ring r;
		double ws = 0;

		if (random_ring(w, N, MULT, &r))
			abort();
		kr_an_shares(&r, share);
		kr_an_share_stats(share, w, N, &st);
		acc_add(&cv2, st.cv * st.cv);
		acc_add(&mom, st.max_over_mean);
		for (int i = 0; i < N; i++)
			ws += w[i];
		acc_add(&r_small, (share[small] / 4294967296.0) / (w[small] / ws));
		acc_add(&r_big, (share[big] / 4294967296.0) / (w[big] / ws));
		kr_an_ring_free(&r);
	}
	{
		double th = kr_an_cv_ring(k, N);
		double c0 = kr_an_cv_backend(H, k[small]), c3 = kr_an_cv_backend(H, k[big]);
		/* per-backend variance of r_i: estimate the SE of a variance from the samples
		 * through the squared deviations, accumulated in a second pass below */
		DIAG("MC: %d rings of %d backends (weights 1..4, %d points per unit, H=%llu)",
		     M, N, MULT, (unsigned long long)H);
		check_within("mean CV^2 (unequal weights)", acc_mean(&cv2), acc_se(&cv2), th * th, 0);
		check_within("mean r of weight-1 backend", acc_mean(&r_small), acc_se(&r_small), 1.0, 0);
		/* Var(r_i) = CV_i^2: SE of the sample variance ~ var * sqrt(2/(M-1)) * (1 + skew
		 * margin); use the plain normal-theory SE times 1.5 for the Beta's excess kurtosis */
		{
			double m0 = acc_mean(&r_small), v0 = (r_small.sq - M * m0 * m0) / (M - 1);
			double m3 = acc_mean(&r_big), v3 = (r_big.sq - M * m3 * m3) / (M - 1);

			check_within("Var r (weight 1)", v0, 1.5 * v0 * sqrt(2.0 / (M - 1)), c0 * c0, 0);
			check_within("Var r (weight 4)", v3, 1.5 * v3 * sqrt(2.0 / (M - 1)), c3 * c3, 0);
		}
		/* the expected max uses independent Gamma shares: an approximation of the
		 * (weakly negatively correlated) Beta shares; allow 2% model error on top */
		check_within("mean max/mean (Gamma approximation)", acc_mean(&mom), acc_se(&mom),
			     kr_an_expected_max(k, N), 0.02 * kr_an_expected_max(k, N));
	}
}

static void test_montecarlo_equal(void)
{
	enum { N = 10, K = 100, M = 3000 };
	uint32_t w[N];
	uint64_t share[N];
	struct acc cv2 = { 0 };
	struct kr_an_stats st;

	for (int i = 0; i < N; i++)
		w[i] = 1;
	for (int t = 0; t < M; t++) {
		struct kr_an_ring r;

		if (random_ring(w, N, K, &r))
			abort();
		kr_an_shares(&r, share);
		kr_an_share_stats(share, w, N, &st);
		acc_add(&cv2, st.cv * st.cv);
		kr_an_ring_free(&r);
	}
	check_within("mean CV^2, 10 equal backends x 100 points: (N-1)/(Nk+1)", acc_mean(&cv2),
		     acc_se(&cv2), kr_an_cv_equal(N, K) * kr_an_cv_equal(N, K), 0);
}

static void test_diff_hand(void)
{
	/* A: [0,100]->0 (100,200]->1 (200,2^32)->0;  B: [0,150]->1 (150,200]->0 rest->1 */
	uint32_t ha[] = { 100, 200 }, oa[] = { 0, 1 }, hb[] = { 150, 200 }, ob[] = { 1, 0 };
	struct kr_an_ring a = hand_ring(ha, oa, 2, 2), b = hand_ring(hb, ob, 2, 2);
	uint64_t moved, lost[2], gained[2];

	CHECK(kr_an_diff(&a, &b, &moved, lost, gained) == 0, "diff hand rings");
	CHECK_EQ_U(moved, (1ull << 32) - 50, "moved = all but (100,150]");
	CHECK_EQ_U(lost[0], 101 + (1ull << 32) - 201, "lost by 0");
	CHECK_EQ_U(lost[1], 50, "lost by 1");
	CHECK_EQ_U(gained[1], lost[0], "gained by 1");
	CHECK_EQ_U(gained[0], 50, "gained by 0");
	kr_an_diff(&b, &a, &moved, lost, gained);
	CHECK_EQ_U(moved, (1ull << 32) - 50, "diff is symmetric");
	kr_an_diff(&a, &a, &moved, lost, gained);
	CHECK_EQ_U(moved, 0, "A vs A = 0");
	kr_an_ring_free(&a);
	kr_an_ring_free(&b);
	{
		/* adding one point at the top edge: it takes (200, 2^32-1] from the wrap */
		uint32_t h1[] = { 100, 200 }, o1[] = { 0, 1 };
		uint32_t h2[] = { 100, 200, UINT32_MAX }, o2[] = { 0, 1, 2 };
		struct kr_an_ring x = hand_ring(h1, o1, 2, 3), y = hand_ring(h2, o2, 3, 3);
		uint64_t l3[3], g3[3];

		kr_an_diff(&x, &y, &moved, l3, g3);
		CHECK_EQ_U(moved, UINT32_MAX - 200, "point at 2^32-1 takes the wrap arc");
		CHECK(l3[0] == UINT32_MAX - 200 && g3[2] == UINT32_MAX - 200 && l3[1] == 0,
		      "lost by 0, gained by 2");
		kr_an_ring_free(&x);
		kr_an_ring_free(&y);
	}
	{
		/* point at hash 0: key 0 only; empty ring vs one point */
		uint32_t h1[] = { 0, 1000 }, o1[] = { 1, 0 }, h2[] = { 1000 }, o2[] = { 0 };
		struct kr_an_ring x = hand_ring(h1, o1, 2, 2), y = hand_ring(h2, o2, 1, 2), e;
		uint64_t l2[2], g2[2];

		/* x: key 0 -> 1, (0,1000] -> 0, wrap -> point 0 = 1;  y: everything -> 0 */
		kr_an_diff(&x, &y, &moved, l2, g2);
		CHECK_EQ_U(moved, (1ull << 32) - 1000, "point at hash 0 owns key 0 and the wrap arc");
		CHECK(kr_an_ring_alloc(&e, 0, 2) == 0, "empty ring");
		kr_an_diff(&e, &y, &moved, l2, g2);
		CHECK(moved == 1ull << 32 && g2[0] == 1ull << 32 && l2[0] == 0,
		      "empty ring -> ring: every key moves");
		kr_an_diff(&e, &e, &moved, l2, g2);
		CHECK_EQ_U(moved, 0, "empty vs empty");
		kr_an_ring_free(&x);
		kr_an_ring_free(&y);
		kr_an_ring_free(&e);
	}
}

/* Exact diff on grid rings against an exhaustive block-by-block count, and random rings
 * against a few million sampled keys. */
static void test_diff_bruteforce(void)
{
	enum { N = 9, BLK = 1 << 12, SAMPLES = 4000000 };
	uint32_t w[N] = { 3, 1, 2, 2, 5, 1, 1, 4, 2 }, w2[N];
	struct kr_an_ring a, b;
	uint64_t moved, lost[N], gained[N], direct = 0, dlost[N] = { 0 };
	uint64_t hits = 0, hlost[N] = { 0 };

	memcpy(w2, w, sizeof(w));
	w2[4] = 0;	/* backend 4 removed */
	w2[7] = 6;	/* backend 7 heavier */
	/* same points for the backends that did not change: regenerate with one seed */
	rng_state = 42;
	random_ring(w, N, 16, &a);
	rng_state = 42;
	random_ring(w2, N, 16, &b);	/* differs (different random streams after the change) */
	for (struct kr_an_ring *r = &a; r; r = r == &a ? &b : NULL) {
		uint32_t m = 0;

		for (uint32_t j = 0; j < r->npoints; j++) {
			uint32_t h = r->hash[j] & ~(uint32_t)(BLK - 1);

			if (m && r->hash[m - 1] == h)
				continue;
			r->hash[m] = h;
			r->owner[m++] = r->owner[j];
		}
		r->npoints = m;
	}
	kr_an_diff(&a, &b, &moved, lost, gained);
	{
		uint32_t oa = owner_of(&a, 0), ob = owner_of(&b, 0);

		if (oa != ob) {
			direct += 1;
			dlost[oa] += 1;
		}
	}
	for (uint64_t c = 1; c <= (1ull << 32) / BLK; c++) {
		uint64_t last = c * BLK, len = BLK;
		uint32_t key = (uint32_t)last, oa, ob;

		if (last > UINT32_MAX) {
			key = UINT32_MAX;
			len = BLK - 1;
		}
		oa = owner_of(&a, key);
		ob = owner_of(&b, key);
		if (oa != ob) {
			direct += len;
			dlost[oa] += len;
		}
	}
	CHECK_EQ_U(moved, direct, "diff = exhaustive count over all 2^32 keys (grid rings)");
	CHECK(memcmp(lost, dlost, sizeof(lost)) == 0, "per-backend lost = exhaustive count");
	kr_an_ring_free(&a);
	kr_an_ring_free(&b);

	/* unrestricted random rings against sampled keys */
	rng_state = 7;
	random_ring(w, N, 40, &a);
	random_ring(w2, N, 40, &b);
	kr_an_diff(&a, &b, &moved, lost, gained);
	for (uint32_t s = 0; s < SAMPLES; s++) {
		uint32_t key = (uint32_t)rnd64(), oa = owner_of(&a, key), ob = owner_of(&b, key);

		if (oa != ob) {
			hits++;
			hlost[oa]++;
		}
	}
	{
		double p = (double)moved / 4294967296.0, est = (double)hits / SAMPLES;
		double se = sqrt(p * (1 - p) / SAMPLES);
		int ok = 1;

		check_within("sampled moved fraction (4M keys, binomial SE)", est, se, p, 0);
		for (int i = 0; i < N; i++) {
			double pi = (double)lost[i] / 4294967296.0, ei = (double)hlost[i] / SAMPLES;

			ok &= fabs(ei - pi) <= SIGMAS * sqrt(pi * (1 - pi) / SAMPLES) + 1e-12;
		}
		CHECK(ok, "per-backend lost within 4 SE of the sampled counts");
	}
	kr_an_diff(&b, &b, &moved, lost, gained);
	CHECK_EQ_U(moved, 0, "random ring vs itself = 0");
	kr_an_ring_free(&a);
	kr_an_ring_free(&b);
}

static void test_min_moved(void)
{
	double s[5] = { 1, 1, 1, 1, 0 }, t[5] = { 1, 1, 1, 1, 1 };
	double u[2] = { 1, 1 }, v[2] = { 1, 3 };

	CHECK(fabs(kr_an_min_moved(s, t, 5) - 0.2) < 1e-12, "adding a 5th equal backend: 1/5");
	CHECK(fabs(kr_an_min_moved(t, s, 5) - 0.2) < 1e-12, "removing one of 5: 1/5");
	CHECK(fabs(kr_an_min_moved(u, v, 2) - 0.25) < 1e-12, "1:1 -> 1:3 moves 1/4");
	CHECK(kr_an_min_moved(s, s, 5) == 0.0, "no change: 0");
}

/* A measure callback on random rings (same seed for every m, like a real ring whose
 * points only grow with m). */
struct rand_ctx {
	const uint32_t *w;
	uint32_t n;
	int calls;
};

static int rand_measure(void *ctx_, uint64_t m, struct kr_an_measured *out)
{
	struct rand_ctx *ctx = ctx_;
	struct kr_an_ring r;
	uint64_t *share = calloc(ctx->n, sizeof(*share));
	struct kr_an_stats st;

	rng_state = 1234;
	if (!share || random_ring(ctx->w, ctx->n, (uint32_t)m, &r)) {
		free(share);
		return -ENOMEM;
	}
	kr_an_shares(&r, share);
	kr_an_share_stats(share, ctx->w, ctx->n, &st);
	out->ring_points = r.npoints;
	out->cv = st.cv;
	out->max_over_mean = st.max_over_mean;
	ctx->calls++;
	kr_an_ring_free(&r);
	free(share);
	return 0;
}

static void test_plan(void)
{
	enum { N = 50 };
	uint32_t w[N];
	struct rand_ctx ctx = { w, N, 0 };
	struct kr_an_plan_req req = { .weight = w, .n = N, .target = KR_AN_TARGET_CV,
				      .value = 0.05, .measure = rand_measure, .ctx = &ctx,
				      .point_budget = 10000000, .max_confirm_steps = 40 };
	struct kr_an_plan plan;
	struct kr_an_theory t;
	uint32_t am;
	int err;

	for (int i = 0; i < N; i++)
		w[i] = 1 + i % 8;
	CHECK(kr_an_plan(&req, &plan) == 0, "plan for CV 5%%");
	CHECK(plan.th.cv_total <= 0.05, "theory at m=%llu meets 5%% (%.4f)",
	      (unsigned long long)plan.m_theory, plan.th.cv_total);
	kr_an_theory(w, NULL, N, plan.m_theory - 1, 0, &t);
	CHECK(t.cv_total > 0.05, "m-1 does not (%.4f): smallest", t.cv_total);
	CHECK(plan.confirmed == 1 && plan.meas.cv <= 0.05,
	      "measured CV on a built ring at m=%llu meets the target (%.4f)",
	      (unsigned long long)plan.m_confirmed, plan.meas.cv);
	am = 0;
	err = kr_an_auto_point_multiple(w, NULL, N, 0.05, &am);
	CHECK(err == 0 && am == plan.m_theory, "auto point_multiple = the plan's theory answer (%u)",
	      am);

	req.target = KR_AN_TARGET_MAX_OVER_MEAN;
	req.value = 1.10;
	CHECK(kr_an_plan(&req, &plan) == 0, "plan for max/mean 1.10");
	CHECK(plan.confirmed == 1 && plan.meas.max_over_mean <= 1.10,
	      "measured max/mean at m=%llu meets it (%.4f; theory m=%llu)",
	      (unsigned long long)plan.m_confirmed, plan.meas.max_over_mean,
	      (unsigned long long)plan.m_theory);
	req.target = KR_AN_TARGET_CV;
	req.value = 1e-6;
	err = kr_an_plan(&req, &plan);
	CHECK(err == -EDOM && plan.best_value > 1e-6,
	      "unreachable CV 1e-6: -EDOM, best %.2g at m=%llu", plan.best_value,
	      (unsigned long long)plan.m_best);
	req.value = 0;
	CHECK(kr_an_plan(&req, &plan) == -EINVAL, "target 0: -EINVAL");
}

/* Collisions: the bias model against a large random ring whose tie order is the owner
 * index (lower wins).  16.7M points over 64 backends: the bias (~0.2%) dominates the
 * random error (~0.1%), and each backend's deviation follows it. */
static void test_collision_bias(void)
{
	enum { N = 64, MULT = 1 << 18 };
	uint32_t w[N];
	uint64_t k[N], share[N];
	double bias[N], sxy = 0, sxx = 0;
	struct kr_an_ring r;
	struct kr_an_stats st;

	for (int i = 0; i < N; i++) {
		w[i] = 1;
		k[i] = MULT;
	}
	rng_state = 99;
	if (random_ring(w, N, MULT, &r)) {
		CHECK(0, "random ring of 16.7M points");
		return;
	}
	/* removed points: ~Poisson, 4 sigma = 4 sqrt(expected) */
	CHECK(fabs((double)(N * (uint64_t)MULT - r.npoints) - kr_an_collision_removed(N * (uint64_t)MULT)) <
		      SIGMAS * sqrt(kr_an_collision_removed(N * (uint64_t)MULT)),
	      "removed points %llu vs expected %.0f (4 sigma)",
	      (unsigned long long)(N * (uint64_t)MULT - r.npoints),
	      kr_an_collision_removed(N * (uint64_t)MULT));
	kr_an_shares(&r, share);
	kr_an_share_stats(share, w, N, &st);
	kr_an_collision_bias(k, NULL, N, bias);
	for (int i = 0; i < N; i++) {
		double x = bias[i], y = (double)share[i] / 4294967296.0 * N - 1;

		sxy += x * y;
		sxx += x * x;
	}
	/* regression slope of the measured deviation on the predicted bias: 1 +- noise */
	CHECK(fabs(sxy / sxx - 1) < 0.4, "deviation follows the collision bias (slope %.3f)",
	      sxy / sxx);
	{
		double th = sqrt(kr_an_cv_ring(k, N) * kr_an_cv_ring(k, N) +
				 kr_an_collision_bias(k, NULL, N, NULL) * kr_an_collision_bias(k, NULL, N, NULL));

		CHECK(fabs(st.cv / th - 1) < 0.35, "CV %.5f vs theory with collisions %.5f",
		      st.cv, th);
	}
	kr_an_ring_free(&r);
}


/* ---- with the real engine ---------------------------------------------------------- */

static struct kr_backend_spec *random_backends(uint32_t n, const uint32_t *w)
{
	struct kr_backend_spec *b = calloc(n, sizeof(*b));

	for (uint32_t i = 0; b && i < n; i++) {
		uint32_t ip = (uint32_t)rnd64();

		b[i].addr.family = 4;
		b[i].addr.port = (uint16_t)(1 + rnd64() % 65535);
		memcpy(b[i].addr.ip, &ip, 4);
		b[i].weight = w[i];
	}
	return b;
}

static int engine_stats(const struct kr_ring *r, const uint32_t *w, struct kr_an_stats *st)
{
	uint64_t *share = calloc(r->nbackends, sizeof(*share));
	int err;

	if (!share)
		return -1;
	kr_an_ring_shares(r, share);
	err = kr_an_share_stats(share, w, r->nbackends, st);
	free(share);
	return err;
}

/* kr_an_memory must describe exactly the image the encoder produces (duplicates kept). */
static void test_engine_memory(void)
{
	enum { N = 2048 };
	uint32_t w[N];
	struct kr_backend_spec *b;
	struct kr_ring *r = NULL;
	struct kr_image img = { 0 };
	struct kr_an_mem m;
	struct kr_err err;

	for (int i = 0; i < N; i++)
		w[i] = 1 + i % 8;
	rng_state = 2048;
	b = random_backends(N, w);
	if (!b || kr_ring_build(&r, b, N, KR_RING_V2, 160, &err) ||
	    kr_image_encode(&img, r, NULL, &err)) {
		CHECK(0, "engine ring + image: %s", err.msg);
		free(b);
		return;
	}
	CHECK(r->ndups > 0, "the 1.47M-point ring has collisions (%u removed)", r->ndups);
	kr_an_memory(r->npoints, (uint64_t)r->npoints + r->ndups, N, &m);
	CHECK_EQ_U(m.nchunks, img.hdr->nchunks, "image chunks = the encoder's");
	CHECK_EQ_U(m.image_bytes, img.size, "image bytes = the encoder's");
	CHECK_EQ_U(m.bucket_bits, img.hdr->bucket_bits, "bucket bits = the encoder's");
	kr_image_free(&img);
	kr_ring_free(r);
	free(b);
}

/* The theory against real ketama rings (CRC-chained points) of random backends. */
static void test_engine_montecarlo(void)
{
	enum { N = 16, M = 400, PM = 40 };
	uint32_t w[N];
	uint64_t k[N];
	struct acc cv2 = { 0 };
	struct kr_err err;
	int fails = 0;

	for (int i = 0; i < N; i++) {
		w[i] = 1 + i % 2;
		k[i] = (uint64_t)w[i] * PM;
	}
	rng_state = 16;
	for (int t = 0; t < M; t++) {
		struct kr_backend_spec *b = random_backends(N, w);
		struct kr_ring *r = NULL;
		struct kr_an_stats st;

		if (!b || kr_ring_build(&r, b, N, KR_RING_V2, PM, &err) || engine_stats(r, w, &st)) {
			fails++;
		} else {
			acc_add(&cv2, st.cv * st.cv);
		}
		kr_ring_free(r);
		free(b);
	}
	CHECK(fails == 0, "built %d real rings", M);
	check_within("real ketama rings: mean CV^2 (16 backends, weights 1..2, pm 40)",
		     acc_mean(&cv2), acc_se(&cv2), kr_an_cv_ring(k, N) * kr_an_cv_ring(k, N), 0);
}

/* Removing a backend moves exactly its share and nothing else; a weight change against
 * brute-force ownership of sampled keys (kr_ring_lower_bound). */
static void test_engine_diff(void)
{
	enum { N = 50, GONE = 7, SAMPLES = 2000000 };
	uint32_t w[N], w2[N];
	struct kr_backend_spec *b, b2[N];
	struct kr_ring *ra = NULL, *rb = NULL, *rc = NULL;
	struct kr_an_ring xa, xb, xc;
	uint64_t share[N], moved, lost[N], gained[N], hits = 0;
	struct kr_err err;
	int only = 1;

	for (int i = 0; i < N; i++)
		w[i] = 1 + i % 5;
	rng_state = 50;
	b = random_backends(N, w);
	memcpy(b2, b, GONE * sizeof(*b2));
	memcpy(b2 + GONE, b + GONE + 1, (N - GONE - 1) * sizeof(*b2));
	if (!b || kr_ring_build(&ra, b, N, KR_RING_V2, 100, &err) ||
	    kr_ring_build(&rb, b2, N - 1, KR_RING_V2, 100, &err)) {
		CHECK(0, "engine rings: %s", err.msg);
		return;
	}
	kr_an_ring_borrow(&xa, ra->hash, ra->npoints, N);
	kr_an_ring_borrow(&xb, rb->hash, rb->npoints, N);
	for (uint32_t j = 0; j < ra->npoints; j++)
		xa.owner[j] = ra->backend[j];
	for (uint32_t j = 0; j < rb->npoints; j++)	/* new index -> old index */
		xb.owner[j] = rb->backend[j] < GONE ? rb->backend[j] : rb->backend[j] + 1u;
	kr_an_ring_shares(ra, share);
	kr_an_diff(&xa, &xb, &moved, lost, gained);
	CHECK_EQ_U(moved, share[GONE], "removing backend %d moves exactly its share", GONE);
	for (int i = 0; i < N; i++)
		only &= i == GONE ? lost[i] == share[i] : lost[i] == 0;
	CHECK(only, "only the removed backend loses keys");

	/* weight change: backend 3 x3, backend 20 -> 0 */
	memcpy(w2, w, sizeof(w2));
	w2[3] *= 3;
	w2[20] = 0;
	for (int i = 0; i < N; i++)
		b[i].weight = w2[i];
	if (kr_ring_build(&rc, b, N, KR_RING_V2, 100, &err)) {
		CHECK(0, "engine ring: %s", err.msg);
		goto out;
	}
	kr_an_ring_borrow(&xc, rc->hash, rc->npoints, N);
	for (uint32_t j = 0; j < rc->npoints; j++)
		xc.owner[j] = rc->backend[j];
	kr_an_diff(&xa, &xc, &moved, lost, gained);
	for (uint32_t s = 0; s < SAMPLES; s++) {
		uint32_t h = (uint32_t)rnd64();
		uint32_t oa = ra->backend[kr_ring_lower_bound(ra, h)];
		uint32_t oc = rc->backend[kr_ring_lower_bound(rc, h)];

		hits += oa != oc;
	}
	{
		double p = (double)moved / 4294967296.0, est = (double)hits / SAMPLES;

		check_within("weight change: exact diff vs 2M sampled keys (binomial SE)", est,
			     sqrt(p * (1 - p) / SAMPLES), p, 0);
	}
	{
		double s[N], t[N];

		for (int i = 0; i < N; i++) {
			s[i] = w[i];
			t[i] = w2[i];
		}
		CHECK((double)moved / 4294967296.0 >= kr_an_min_moved(s, t, N) - 0.05,
		      "moved %.4f vs minimum %.4f (ring overhead visible, not below by more than "
		      "the shares' noise)", (double)moved / 4294967296.0, kr_an_min_moved(s, t, N));
	}
	kr_an_ring_free(&xc);
out:
	kr_an_ring_free(&xa);
	kr_an_ring_free(&xb);
	kr_ring_free(ra);
	kr_ring_free(rb);
	kr_ring_free(rc);
	free(b);
}

int main(void)
{
	test_formulas();
	test_memory();
	test_shares_edges();
	test_shares_direct();
	test_montecarlo_equal();
	test_montecarlo_cv();
	test_diff_hand();
	test_diff_bruteforce();
	test_min_moved();
	test_plan();
	test_collision_bias();
	test_engine_memory();
	test_engine_montecarlo();
	test_engine_diff();
	return tap_done();
}
