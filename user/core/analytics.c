// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Ring analytics: theory, measurement, exact diff, plan search.  See analytics.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kr_image_kern_user.h"
#include "analytics.h"
#include "an_source.h"
#include "continuum.h"

int kr_an_ring_alloc(struct kr_an_ring *r, uint32_t npoints, uint32_t nowners)
{
	memset(r, 0, sizeof(*r));
	r->hash = malloc((size_t)(npoints ? npoints : 1) * sizeof(*r->hash));
	r->owner = malloc((size_t)(npoints ? npoints : 1) * sizeof(*r->owner));
	if (!r->hash || !r->owner) {
		kr_an_ring_free(r);
		return -ENOMEM;
	}
	r->npoints = npoints;
	r->nowners = nowners;
	return 0;
}

int kr_an_ring_borrow(struct kr_an_ring *r, uint32_t *hash, uint32_t npoints, uint32_t nowners)
{
	memset(r, 0, sizeof(*r));
	r->owner = malloc((size_t)(npoints ? npoints : 1) * sizeof(*r->owner));
	if (!r->owner)
		return -ENOMEM;
	r->hash = hash;
	r->borrowed_hash = 1;
	r->npoints = npoints;
	r->nowners = nowners;
	return 0;
}

void kr_an_ring_free(struct kr_an_ring *r)
{
	if (!r->borrowed_hash)
		free(r->hash);
	free(r->owner);
	r->hash = r->owner = NULL;
	r->npoints = 0;
}

/* ---- theory ------------------------------------------------------------------------ */

double kr_an_cv_backend(uint64_t total, uint64_t k)
{
	if (k == 0 || total == 0 || k >= total)
		return 0.0;
	return sqrt((double)(total - k) / ((double)k * ((double)total + 1.0)));
}

double kr_an_cv_equal(uint64_t nbackends, uint64_t k)
{
	if (nbackends == 0 || k == 0)
		return 0.0;
	return sqrt((double)(nbackends - 1) / ((double)nbackends * (double)k + 1.0));
}

double kr_an_cv_ring(const uint64_t *k, uint32_t n)
{
	uint64_t total = 0;
	uint32_t active = 0;
	double sum = 0.0;

	for (uint32_t i = 0; i < n; i++)
		total += k[i];
	for (uint32_t i = 0; i < n; i++) {
		double c;

		if (!k[i])
			continue;
		c = kr_an_cv_backend(total, k[i]);
		sum += c * c;
		active++;
	}
	return active ? sqrt(sum / active) : 0.0;
}

double kr_an_collision_pairs(uint64_t p)
{
	return p < 2 ? 0.0 : (double)p * (double)(p - 1) / 8589934592.0;
}

double kr_an_collision_removed(uint64_t p)
{
	/* distinct = 2^32 (1 - exp(P log1p(-2^-32))) */
	double space = (double)KR_AN_SPACE;
	double distinct = -space * expm1((double)p * log1p(-1.0 / space));

	return p < 2 ? 0.0 : fmax(0.0, (double)p - distinct);
}

struct rank_ent {
	uint32_t rank, idx;
};

static int rank_cmp(const void *a, const void *b)
{
	const struct rank_ent *x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

double kr_an_collision_bias(const uint64_t *k, const uint32_t *rank, uint32_t n, double *bias)
{
	struct rank_ent *ord = NULL;
	double *surv = NULL, before = 0.0, d = 0.0, p = 0.0, sum = 0.0;
	uint32_t active = 0;

	if (!n)
		return 0.0;
	ord = malloc(n * sizeof(*ord));
	surv = malloc(n * sizeof(*surv));
	if (!ord || !surv)
		goto out;
	for (uint32_t i = 0; i < n; i++)
		ord[i] = (struct rank_ent){ rank ? rank[i] : i, i };
	qsort(ord, n, sizeof(*ord), rank_cmp);
	for (uint32_t j = 0; j < n; j++) {
		uint32_t i = ord[j].idx;

		surv[i] = exp(-before / (double)KR_AN_SPACE);
		before += (double)k[i];
		d += (double)k[i] * surv[i];
	}
	p = before;
	for (uint32_t i = 0; i < n; i++) {
		double b = (k[i] && d > 0) ? p * surv[i] / d - 1.0 : 0.0;

		if (bias)
			bias[i] = b;
		if (k[i]) {
			sum += b * b;
			active++;
		}
	}
out:
	free(ord);
	free(surv);
	return active ? sqrt(sum / active) : 0.0;
}

/* Regularised lower incomplete gamma P(a, x). */
static double gamma_p(double a, double x)
{
	double lg = lgamma(a), t, sum;
	int i;

	if (x <= 0)
		return 0.0;
	if (a > 2e4) {	/* Wilson-Hilferty: |error| ~ 1e-6 here, far below our needs */
		double z = (cbrt(x / a) - (1.0 - 1.0 / (9.0 * a))) / sqrt(1.0 / (9.0 * a));

		return 0.5 * erfc(-z / M_SQRT2);
	}
	if (x < a + 1.0) {	/* series */
		t = sum = 1.0 / a;
		for (i = 1; i < 100000; i++) {
			t *= x / (a + i);
			sum += t;
			if (t < sum * 1e-15)
				break;
		}
		return fmin(1.0, sum * exp(-x + a * log(x) - lg));
	}
	{	/* continued fraction for Q (modified Lentz) */
		double b = x + 1.0 - a, c = 1.0 / 1e-300, dd = 1.0 / b, h = dd, an, del;

		for (i = 1; i < 100000; i++) {
			an = -i * (i - a);
			b += 2.0;
			dd = an * dd + b;
			if (fabs(dd) < 1e-300)
				dd = 1e-300;
			c = b + an / c;
			if (fabs(c) < 1e-300)
				c = 1e-300;
			dd = 1.0 / dd;
			del = dd * c;
			h *= del;
			if (fabs(del - 1.0) < 1e-15)
				break;
		}
		return fmax(0.0, 1.0 - exp(-x + a * log(x) - lg) * h);
	}
}

struct kgroup {
	uint64_t k;
	uint32_t count;
};

/* log P(max r <= x) = sum_g count_g log F_g(x), r_g ~ Gamma(k_g)/k_g. */
static double log_cdf_max(const struct kgroup *g, uint32_t ng, double x)
{
	double s = 0.0;

	for (uint32_t i = 0; i < ng; i++) {
		double f = gamma_p((double)g[i].k, (double)g[i].k * x);

		if (f <= 0.0)
			return -INFINITY;
		s += g[i].count * log(f);
	}
	return s;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t group_ks(const uint64_t *k, uint32_t n, struct kgroup *g)
{
	uint64_t *s = malloc(n * sizeof(*s));
	uint32_t ng = 0, m = 0;

	if (!s)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (k[i])
			s[m++] = k[i];
	qsort(s, m, sizeof(*s), u64_cmp);
	for (uint32_t i = 0; i < m; i++) {
		if (ng && g[ng - 1].k == s[i])
			g[ng - 1].count++;
		else
			g[ng++] = (struct kgroup){ s[i], 1 };
	}
	free(s);
	return ng;
}

/* Smallest x in [lo, hi] with log P(max <= x) >= target (bisection, monotone). */
static double max_quantile(const struct kgroup *g, uint32_t ng, double lo, double hi,
			   double target)
{
	for (int i = 0; i < 80; i++) {
		double mid = 0.5 * (lo + hi);

		if (log_cdf_max(g, ng, mid) >= target)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

double kr_an_expected_max(const uint64_t *k, uint32_t n)
{
	struct kgroup *g;
	uint32_t ng, steps = 400;
	double lo, hi, h, sum, e = 0.0;

	g = malloc((n ? n : 1) * sizeof(*g));
	if (!g)
		return NAN;
	ng = group_ks(k, n, g);
	if (ng == 0)
		goto out;
	if (ng == 1 && g[0].count == 1) {
		e = 1.0;
		goto out;
	}
	/* E[max] = x_lo + integral_{x_lo}^{x_hi} (1 - P(max <= x)) dx, where the integrand
	 * is 1 below x_lo (to 1e-14) and 0 above x_hi (to 1e-14).  Simpson's rule. */
	hi = 2.0;
	while (log_cdf_max(g, ng, hi) < log1p(-1e-14) && hi < 1e6)
		hi *= 2.0;
	lo = max_quantile(g, ng, 0.0, hi, log(1e-14));
	hi = max_quantile(g, ng, lo, hi, log1p(-1e-14));
	h = (hi - lo) / steps;
	sum = 0.0;
	for (uint32_t i = 0; i <= steps; i++) {
		double f = 1.0 - exp(log_cdf_max(g, ng, lo + i * h));
		double w = (i == 0 || i == steps) ? 1.0 : (i & 1) ? 4.0 : 2.0;

		sum += w * f;
	}
	e = lo + sum * h / 3.0;
out:
	free(g);
	return e;
}

int kr_an_memory(uint64_t ring_points, uint64_t image_points, uint32_t nbackends,
		 struct kr_an_mem *out)
{
	uint32_t bits;

	memset(out, 0, sizeof(*out));
	out->v1_bytes = ring_points * 8;
	out->v2_bytes = ring_points * 6;
	bits = kr_image_bucket_bits(image_points > UINT32_MAX ? UINT32_MAX :
							      (uint32_t)image_points);
	out->bucket_bits = bits;
	out->hdr_chunks = 1;
	out->idx_chunks = (uint32_t)((((1ull << bits) + 1) + KR_IDX_PER_CHUNK - 1) /
				     KR_IDX_PER_CHUNK);
	out->bt_chunks = kr_image_bt_chunks(nbackends);	/* 0: in the header's chunk */
	if ((image_points + KR_PTS_PER_CHUNK - 1) / KR_PTS_PER_CHUNK > UINT32_MAX / 2)
		return -ERANGE;
	out->pt_chunks = (uint32_t)((image_points + KR_PTS_PER_CHUNK - 1) / KR_PTS_PER_CHUNK);
	out->nchunks = out->hdr_chunks + out->idx_chunks + out->bt_chunks + out->pt_chunks;
	out->image_bytes = (uint64_t)out->nchunks * KR_CHUNK_BYTES;
	return 0;
}


int kr_an_theory(const uint32_t *weight, const uint32_t *rank, uint32_t n, uint64_t m,
		 int want_max, struct kr_an_theory *out)
{
	uint64_t *k, total = 0;
	uint32_t active = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!n || !m)
		return -EINVAL;
	k = malloc(n * sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (weight[i] && m > KR_AN_THEORY_MAX_POINTS / weight[i]) {
			err = -ERANGE;
			goto out;
		}
		k[i] = (uint64_t)weight[i] * m;
		total += k[i];
		active += !!weight[i];
		if (total > KR_AN_THEORY_MAX_POINTS) {
			err = -ERANGE;
			goto out;
		}
	}
	out->points = total;
	out->cv = kr_an_cv_ring(k, n);
	out->cv_bias = kr_an_collision_bias(k, rank, n, NULL);
	out->cv_total = sqrt(out->cv * out->cv + out->cv_bias * out->cv_bias);
	out->max_over_mean = want_max ? kr_an_expected_max(k, n) : NAN;
	out->collisions = kr_an_collision_removed(total);
	out->collision_pairs = kr_an_collision_pairs(total);
	err = kr_an_memory(total, total, n, &out->mem);
	(void)active;
out:
	free(k);
	return err;
}

/* ---- measurement ------------------------------------------------------------------- */

/* The one share computation: point j (owner o32[j], or o16[j] for the engine's rings) owns
 * (hash[j-1], hash[j]]; point 0 owns [0, hash[0]] and the wrap-around (hash[n-1], 2^32). */
static void shares(const uint32_t *hash, uint32_t n, const uint32_t *o32, const uint16_t *o16,
		   uint32_t nowners, uint64_t *share)
{
	memset(share, 0, nowners * sizeof(*share));
	if (!n)
		return;
	share[o32 ? o32[0] : o16[0]] += (uint64_t)hash[0] + 1 + (KR_AN_SPACE - 1 - hash[n - 1]);
	for (uint32_t j = 1; j < n; j++)
		share[o32 ? o32[j] : o16[j]] += (uint64_t)(hash[j] - hash[j - 1]);
}

void kr_an_shares(const struct kr_an_ring *r, uint64_t *share)
{
	shares(r->hash, r->npoints, r->owner, NULL, r->nowners, share);
}

void kr_an_ring_shares(const struct kr_ring *r, uint64_t *share)
{
	shares(r->hash, r->npoints, NULL, r->backend, r->nbackends, share);
}

int kr_an_share_stats(const uint64_t *share, const uint32_t *weight, uint32_t n,
		      struct kr_an_stats *out)
{
	uint64_t wsum = 0, ssum = 0;
	double sq = 0.0, sum = 0.0, mx = -1.0, mn = INFINITY;

	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < n; i++) {
		wsum += weight[i];
		ssum += share[i];
	}
	if (!wsum || !ssum)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		double r;

		if (!weight[i])
			continue;
		r = ((double)share[i] / (double)ssum) / ((double)weight[i] / (double)wsum);
		sq += (r - 1.0) * (r - 1.0);
		sum += r;
		if (r > mx) {
			mx = r;
			out->argmax = i;
		}
		if (r < mn) {
			mn = r;
			out->argmin = i;
		}
		out->active++;
	}
	out->cv = sqrt(sq / out->active);
	out->mean_ratio = sum / out->active;
	out->max_over_mean = mx / out->mean_ratio;
	out->min_over_mean = mn / out->mean_ratio;
	return 0;
}

/* ---- diff -------------------------------------------------------------------------- */

static inline void diff_arc(uint32_t oa, uint32_t ob, uint64_t len, uint64_t *moved,
			    uint64_t *lost, uint64_t *gained)
{
	if (oa == ob || !len)
		return;
	*moved += len;
	if (lost && oa != KR_AN_NONE)
		lost[oa] += len;
	if (gained && ob != KR_AN_NONE)
		gained[ob] += len;
}

int kr_an_diff(const struct kr_an_ring *a, const struct kr_an_ring *b, uint64_t *moved,
	       uint64_t *lost, uint64_t *gained)
{
	uint32_t ia = 0, ib = 0, na = a->npoints, nb = b->npoints, n = a->nowners;
	uint32_t wa = na ? a->owner[0] : KR_AN_NONE, wb = nb ? b->owner[0] : KR_AN_NONE;
	int64_t prev = -1;	/* the interval is (prev, cur] */

	if (a->nowners != b->nowners)
		return -EINVAL;
	*moved = 0;
	if (lost)
		memset(lost, 0, n * sizeof(*lost));
	if (gained)
		memset(gained, 0, n * sizeof(*gained));
	while (ia < na || ib < nb) {
		uint32_t ha = ia < na ? a->hash[ia] : UINT32_MAX;
		uint32_t hb = ib < nb ? b->hash[ib] : UINT32_MAX;
		uint32_t cur = ha < hb ? ha : hb;
		/* keys in (prev, cur] go to the next point of each ring, or wrap to point 0 */
		uint32_t oa = ia < na ? a->owner[ia] : wa;
		uint32_t ob = ib < nb ? b->owner[ib] : wb;

		diff_arc(oa, ob, (uint64_t)((int64_t)cur - prev), moved, lost, gained);
		prev = cur;
		if (ia < na && a->hash[ia] == cur)
			ia++;
		if (ib < nb && b->hash[ib] == cur)
			ib++;
	}
	/* past the last point of both rings: wrap-around */
	diff_arc(wa, wb, (uint64_t)((int64_t)UINT32_MAX - prev), moved, lost, gained);
	return 0;
}

double kr_an_min_moved(const double *s, const double *t, uint32_t n)
{
	double ss = 0.0, ts = 0.0, m = 0.0;

	for (uint32_t i = 0; i < n; i++) {
		ss += s[i];
		ts += t[i];
	}
	if (ss <= 0.0 || ts <= 0.0)
		return ss > 0.0 || ts > 0.0 ? 1.0 : 0.0;
	for (uint32_t i = 0; i < n; i++)
		m += fmax(0.0, s[i] / ss - t[i] / ts);
	return m;
}

/* ---- plan -------------------------------------------------------------------------- */

/* Largest point_multiple the engine can build for these weights. */
static uint64_t plan_max_m(const uint32_t *w, uint32_t n)
{
	uint64_t wsum = 0;

	for (uint32_t i = 0; i < n; i++)
		wsum += w[i];
	return wsum ? KR_MAX_POINTS / wsum : 0;
}

static double target_of(const struct kr_an_plan_req *req, const struct kr_an_theory *t,
			int total)
{
	if (req->target == KR_AN_TARGET_CV)
		return total ? t->cv_total : t->cv;
	return t->max_over_mean;
}

static int plan_theory_at(const struct kr_an_plan_req *req, uint64_t m, struct kr_an_theory *t)
{
	return kr_an_theory(req->weight, req->rank, req->n, m,
			    req->target == KR_AN_TARGET_MAX_OVER_MEAN, t);
}

/* Smallest m in [1, mmax] whose random-placement theory meets the target; the theory
 * decreases in m, so a bisection finds it.  0 if even mmax does not. */
static int plan_bisect(const struct kr_an_plan_req *req, uint64_t mmax, uint64_t *m_out)
{
	struct kr_an_theory t;
	uint64_t lo = 1, hi = mmax;
	int err;

	err = plan_theory_at(req, hi, &t);
	if (err)
		return err;
	if (target_of(req, &t, 0) > req->value) {
		*m_out = 0;
		return 0;
	}
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		err = plan_theory_at(req, mid, &t);
		if (err)
			return err;
		if (target_of(req, &t, 0) <= req->value)
			hi = mid;
		else
			lo = mid + 1;
	}
	*m_out = lo;
	return 0;
}

/* The m in [1, mmax] with the lowest theoretical value, collisions included: a log-spaced
 * scan, then a ternary search around the best grid point (the curve is unimodal: random
 * error falls as 1/sqrt(m), the collision bias grows as m). */
static int plan_best(const struct kr_an_plan_req *req, uint64_t mmax, struct kr_an_plan *plan)
{
	struct kr_an_theory t;
	uint64_t lo, hi, best_m = 1;
	double best = INFINITY;
	int err;

	for (double x = 1.0; x < (double)mmax * 1.1; x *= 1.25) {
		uint64_t m = x > (double)mmax ? mmax : (uint64_t)x;

		err = plan_theory_at(req, m, &t);
		if (err)
			return err;
		if (target_of(req, &t, 1) < best) {
			best = target_of(req, &t, 1);
			best_m = m;
		}
	}
	lo = best_m / 1.25 < 1 ? 1 : (uint64_t)(best_m / 1.25);
	hi = (uint64_t)(best_m * 1.25) > mmax ? mmax : (uint64_t)(best_m * 1.25);
	while (hi - lo > 2) {
		uint64_t a = lo + (hi - lo) / 3, b = hi - (hi - lo) / 3;
		struct kr_an_theory ta, tb;

		if ((err = plan_theory_at(req, a, &ta)) || (err = plan_theory_at(req, b, &tb)))
			return err;
		if (target_of(req, &ta, 1) < target_of(req, &tb, 1))
			hi = b;
		else
			lo = a;
	}
	for (uint64_t m = lo; m <= hi; m++) {
		err = plan_theory_at(req, m, &t);
		if (err)
			return err;
		if (target_of(req, &t, 1) <= best) {
			best = target_of(req, &t, 1);
			best_m = m;
		}
	}
	plan->m_best = best_m;
	plan->best_value = best;
	return 0;
}

/* Collisions only add error: walk up from m until the collision-inclusive theory meets
 * the target (a few steps at most in practice), or stop where more points make it worse. */
static int plan_collisions(const struct kr_an_plan_req *req, uint64_t m, uint64_t mmax,
			   struct kr_an_plan *plan)
{
	struct kr_an_theory t;
	double prev = INFINITY, v;
	int err;

	for (;;) {
		err = plan_theory_at(req, m, &t);
		if (err)
			return err;
		v = target_of(req, &t, 1);
		if (v <= req->value) {
			plan->m_theory = m;
			plan->th = t;
			return 0;
		}
		if (v >= prev || m >= mmax)
			break;	/* past the optimum: collisions dominate */
		prev = v;
		m = m + (m / 64 ? m / 64 : 1);
		if (m > mmax)
			m = mmax;
	}
	err = plan_best(req, mmax, plan);
	return err ? err : -EDOM;
}

static int plan_confirm(const struct kr_an_plan_req *req, uint64_t wsum, struct kr_an_plan *plan)
{
	uint64_t m = plan->m_theory, mmax = plan_max_m(req->weight, req->n);
	int err;

	plan->confirmed = 0;
	/* steps of 2% (at least 1): the measured CV of one ring scatters around the theory
	 * by about 1/sqrt(2N) relative, so unit steps on a large m would crawl */
	for (uint32_t i = 0; i <= req->max_confirm_steps && m <= mmax;
	     i++, m += m / 50 ? m / 50 : 1) {
		double v;

		if (m * wsum > req->point_budget)
			return 0;
		err = req->measure(req->ctx, m, &plan->meas);
		if (err)
			return err;
		plan->m_confirmed = m;
		v = req->target == KR_AN_TARGET_CV ? plan->meas.cv : plan->meas.max_over_mean;
		if (v <= req->value) {
			plan->confirmed = 1;
			return 0;
		}
	}
	plan->confirmed = -1;
	return 0;
}

int kr_an_plan(const struct kr_an_plan_req *req, struct kr_an_plan *plan)
{
	uint64_t wsum = 0, mmax, m;
	int err;

	memset(plan, 0, sizeof(*plan));
	if (!req->n || !(req->value > 0.0) ||
	    (req->target == KR_AN_TARGET_MAX_OVER_MEAN && !(req->value > 1.0)))
		return -EINVAL;
	for (uint32_t i = 0; i < req->n; i++)
		wsum += req->weight[i];
	mmax = plan_max_m(req->weight, req->n);
	if (!wsum || !mmax)
		return -EINVAL;
	err = plan_bisect(req, mmax, &m);
	if (err)
		return err;
	if (!m) {
		err = plan_best(req, mmax, plan);
		return err ? err : -EDOM;
	}
	err = plan_collisions(req, m, mmax, plan);
	if (err)
		return err;
	if (!req->measure)
		return 0;
	return plan_confirm(req, wsum, plan);
}

int kr_an_optimum(const uint32_t *weight, const uint32_t *rank, uint32_t n, uint64_t mmax,
		  uint64_t *m, double *cv)
{
	struct kr_an_plan_req req = {
		.weight = weight, .rank = rank, .n = n, .target = KR_AN_TARGET_CV, .value = 1,
	};
	struct kr_an_plan plan;
	int err;

	memset(&plan, 0, sizeof(plan));
	if (!n || !mmax)
		return -EINVAL;
	err = plan_best(&req, mmax, &plan);
	if (err)
		return err;
	*m = plan.m_best;
	*cv = plan.best_value;
	return 0;
}

uint32_t kr_an_plan_ks(uint64_t *ks, uint32_t max, uint64_t kmax)
{
	static const uint32_t mant[] = { 1, 2, 5 };
	uint32_t n = 0;

	for (uint64_t dec = 1; dec <= kmax && n < max; dec *= 10) {
		for (uint32_t i = 0; i < 3 && n < max; i++) {
			if (mant[i] * dec > kmax)
				break;
			ks[n++] = mant[i] * dec;
			/* the classic 160 per weight unit, and its x10 / x0.1 neighbours */
			if (mant[i] == 1 && dec >= 10 && 16 * dec / 10 <= kmax && n < max)
				ks[n++] = 16 * dec / 10;
		}
	}
	return n;
}

int kr_an_auto_point_multiple(const uint32_t *weight, const uint32_t *rank, uint32_t n,
			      double target_cv, uint32_t *m)
{
	struct kr_an_plan_req req = {
		.weight = weight, .rank = rank, .n = n,
		.target = KR_AN_TARGET_CV, .value = target_cv,
	};
	struct kr_an_plan plan;
	int err;

	err = kr_an_plan(&req, &plan);
	if (err)
		return err;
	if (plan.m_theory > UINT32_MAX)
		return -ERANGE;
	*m = (uint32_t)plan.m_theory;
	return 0;
}

const char *kr_an_bytes(uint64_t b, char *buf, size_t len)
{
	if (b < 1024)
		snprintf(buf, len, "%llu B", (unsigned long long)b);
	else if (b < 1048576)
		snprintf(buf, len, "%.1f KiB", (double)b / 1024.0);
	else if (b < 1073741824ull)
		snprintf(buf, len, "%.2f MiB", (double)b / 1048576.0);
	else
		snprintf(buf, len, "%.2f GiB", (double)b / 1073741824.0);
	return buf;
}

uint32_t *kr_an_tie_rank(const struct kr_backend_spec *b, uint32_t n, uint32_t version)
{
	uint32_t *rank = malloc((n ? n : 1) * sizeof(*rank));
	uint32_t *order;

	if (!rank)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		rank[i] = i;
	if (version == KR_RING_V1)
		return rank;
	order = malloc((n ? n : 1) * sizeof(*order));
	if (!order) {
		free(rank);
		return NULL;
	}
	kr_ring_tie_order(b, n, order);	/* the engine's own v2 tie order */
	for (uint32_t i = 0; i < n; i++)
		rank[order[i]] = i;
	free(order);
	return rank;
}
