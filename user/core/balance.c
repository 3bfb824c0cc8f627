// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The bounded-load controller's arithmetic: see balance.h for the model.  Everything is
 * computed per arc of the ring (point j owns the key hashes (hash[j-1], hash[j]]), and
 * the spill value u is swept from 1 down to 0: between two consecutive spill values the
 * set of backends that spill a key is constant, so each arc routes to one backend.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "balance.h"

#define NONE UINT32_MAX

int kr_bal_plan_alloc(struct kr_bal_plan *p, uint32_t n)
{
	memset(p, 0, sizeof(*p));
	p->n = n;
	p->spill = calloc(n ? n : 1, sizeof(*p->spill));
	p->need = calloc(n ? n : 1, sizeof(*p->need));
	p->aim = calloc(n ? n : 1, sizeof(*p->aim));
	p->fair = calloc(n ? n : 1, sizeof(double));
	p->native = calloc(n ? n : 1, sizeof(double));
	p->model_now = calloc(n ? n : 1, sizeof(double));
	p->model_new = calloc(n ? n : 1, sizeof(double));
	p->lost = calloc(n ? n : 1, sizeof(double));
	p->gained = calloc(n ? n : 1, sizeof(double));
	if (!p->spill || !p->need || !p->aim || !p->fair || !p->native || !p->model_now ||
	    !p->model_new || !p->lost || !p->gained) {
		kr_bal_plan_free(p);
		return -1;
	}
	return 0;
}

void kr_bal_plan_free(struct kr_bal_plan *p)
{
	free(p->spill);
	free(p->need);
	free(p->aim);
	free(p->fair);
	free(p->native);
	free(p->model_now);
	free(p->model_new);
	free(p->lost);
	free(p->gained);
	memset(p, 0, sizeof(*p));
}

int kr_bal_params_check(const struct kr_bal_params *pr, struct kr_err *err)
{
	if (!(pr->bound > 1.0) || pr->bound > 100)
		return kr_errf(err, "bound %g: expected a number above 1 (e.g. 1.25)", pr->bound);
	if (!(pr->hysteresis >= 0) || 3 * pr->hysteresis >= pr->bound - 1)
		return kr_errf(err, "hysteresis %g: expected 0 <= H < (bound - 1) / 3 (%g)",
			       pr->hysteresis, (pr->bound - 1) / 3);
	if (!(pr->max_step > 0) || pr->max_step > 1)
		return kr_errf(err, "max step %g: expected 0 < F <= 1", pr->max_step);
	if (!(pr->spill_max > 0) || pr->spill_max > 0.99)
		return kr_errf(err, "largest spill %g: expected 0 < F <= 0.99", pr->spill_max);
	return 0;
}

/* Key hashes owned by point j. */
static double arc_len(const struct kr_an_ring *r, uint32_t j)
{
	if (j)
		return (double)(r->hash[j] - r->hash[j - 1]);
	return (double)((1ull << 32) - r->hash[r->npoints - 1] + r->hash[0]);
}

static uint32_t lower_bound(const struct kr_an_ring *r, uint32_t h)
{
	uint32_t lo = 0, hi = r->npoints;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (r->hash[mid] < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->npoints ? lo : 0;
}

/* From point *pos on, the first point whose owner is not closed: its owner (and *pos), or
 * NONE after a whole turn. */
static uint32_t walk_on(const struct kr_an_ring *r, const uint8_t *closed, uint32_t *pos)
{
	uint32_t i = *pos;

	for (uint32_t step = 0; step < r->npoints; step++) {
		if (!closed[r->owner[i]]) {
			*pos = i;
			return r->owner[i];
		}
		i = i + 1 < r->npoints ? i + 1 : 0;
	}
	return NONE;
}

uint32_t kr_bal_route(const struct kr_an_ring *r, const bool *up, const uint16_t *s, uint32_t h)
{
	uint32_t u = kr_spill_hash(h) >> 16, i = lower_bound(r, h), first = NONE;

	for (uint32_t step = 0; r->npoints && step < r->npoints; step++) {
		uint32_t o = r->owner[i];

		if (up[o] && !(s && u < s[o]))
			return o;
		if (up[o] && first == NONE)
			first = o;
		i = i + 1 < r->npoints ? i + 1 : 0;
	}
	return first;
}

uint32_t kr_bal_replicas(const struct kr_an_ring *r, const bool *up, uint32_t h, uint32_t k,
			 uint32_t *out)
{
	uint32_t i = lower_bound(r, h), got = 0;

	for (uint32_t step = 0; r->npoints && step < r->npoints && got < k; step++) {
		uint32_t o = r->owner[i], d;

		for (d = 0; d < got && out[d] != o; d++)
			;
		if (up[o] && d == got)
			out[got++] = o;
		i = i + 1 < r->npoints ? i + 1 : 0;
	}
	return got;
}

/* The arcs' routes for one set of closed backends, updated as backends close. */
struct walk {
	const struct kr_an_ring *r;
	uint32_t n;
	uint8_t *closed;	/* [n] */
	uint32_t *pos;		/* [npoints] the point an arc's keys are at */
	uint32_t *dest;		/* [npoints] its owner (NONE: nowhere) */
	const double *a;	/* [npoints] the arc's traffic (NULL: none) */
	double *q;		/* [n] traffic reaching each backend per unit of u */
	double lost;		/* traffic with nowhere to go, per unit of u */
};

static int walk_init(struct walk *w, const struct kr_an_ring *r, uint32_t n, const bool *up,
		     const double *a)
{
	memset(w, 0, sizeof(*w));
	w->r = r;
	w->n = n;
	w->a = a;
	w->closed = calloc(n, 1);
	w->pos = calloc(r->npoints, sizeof(*w->pos));
	w->dest = calloc(r->npoints, sizeof(*w->dest));
	w->q = calloc(n, sizeof(*w->q));
	if (!w->closed || !w->pos || !w->dest || !w->q)
		return -1;
	for (uint32_t x = 0; x < n; x++)
		w->closed[x] = !up[x];
	for (uint32_t j = 0; j < r->npoints; j++) {
		w->pos[j] = j;
		w->dest[j] = walk_on(r, w->closed, &w->pos[j]);
		if (!a)
			continue;
		if (w->dest[j] == NONE)
			w->lost += a[j];
		else
			w->q[w->dest[j]] += a[j];
	}
	return 0;
}

static void walk_free(struct walk *w)
{
	free(w->closed);
	free(w->pos);
	free(w->dest);
	free(w->q);
}

static void walk_close(struct walk *w, uint32_t x)
{
	if (w->closed[x])
		return;
	w->closed[x] = 1;
	for (uint32_t j = 0; j < w->r->npoints; j++) {
		if (w->dest[j] != x)
			continue;
		w->dest[j] = walk_on(w->r, w->closed, &w->pos[j]);
		if (!w->a)
			continue;
		if (w->dest[j] == NONE)
			w->lost += w->a[j];
		else
			w->q[w->dest[j]] += w->a[j];
	}
	w->q[x] = 0;
}

/* A key the caller knows by itself (a hot key without replicas): its traffic is not spread
 * over its arc but sits at its own spill value u, on its arc j. */
struct imp {
	double u, rate;
	uint32_t j;
};

static int imp_desc(const void *a, const void *b)
{
	const struct imp *x = a, *y = b;

	return x->u < y->u ? 1 : x->u > y->u ? -1 : 0;
}

/*
 * The sweep: u from 1 down to 0, each open backend collecting q[x] per unit of u on top of
 * fixed[x], and the known keys im[0..nim) (by descending u) where they route at their u.
 * forced[x] >= 0: x closes at that u whatever its load (a fixed spill; 0 never); else x
 * closes at the u where its load reaches bound[x] (bound NULL: never), at most smax; a
 * known key that would take it over closes it just above the key's u (the key spills).
 * load[x] receives the total, s[x] the u where x closed (0: never).
 */
static int sweep(const struct kr_an_ring *r, uint32_t n, const bool *up, const double *a,
		 const struct imp *im, uint32_t nim, const double *fixed, const double *bound,
		 const double *forced, double smax, double *load, double *s)
{
	struct walk w;
	double u = 1;
	uint32_t ki = 0;

	if (walk_init(&w, r, n, up, a)) {
		walk_free(&w);
		return -1;
	}
	for (uint32_t x = 0; x < n; x++) {
		load[x] = fixed ? fixed[x] : 0;
		s[x] = 0;
	}
	for (;;) {
		uint32_t best = NONE;
		double ub = 0;

		for (uint32_t x = 0; x < n; x++) {
			double ux, room;

			if (w.closed[x])
				continue;
			if (forced && forced[x] >= 0) {
				ux = forced[x];
			} else if (bound) {
				room = bound[x] - load[x];
				if (room <= 0)
					ux = u;
				else if (w.q[x] * u > room)
					ux = u - room / w.q[x];
				else
					continue;
				if (ux > smax)
					ux = smax;
			} else {
				continue;
			}
			if (ux > ub) {
				ub = ux;
				best = x;
			}
		}
		if (ki < nim && im[ki].u >= ub) {
			/* the next known key comes first (at a tie it stays: u < s spills) */
			const struct imp *k = &im[ki++];
			uint32_t x;

			for (uint32_t y = 0; y < n; y++)
				if (!w.closed[y])
					load[y] += w.q[y] * (u - k->u);
			u = k->u;
			while ((x = w.dest[k->j]) != NONE) {
				/* stays: it fits, x's spill is fixed, or the key alone is above
				 * x's bound (spilling it would only move the overload on) */
				if (!bound || (forced && forced[x] >= 0) ||
				    load[x] + k->rate <= bound[x] || k->rate > bound[x] ||
				    u + 1 / KR_BAL_ONE > smax) {
					load[x] += k->rate;
					break;
				}
				s[x] = u + 1 / KR_BAL_ONE;
				walk_close(&w, x);
			}
			continue;
		}
		if (best == NONE)
			break;
		for (uint32_t x = 0; x < n; x++)
			if (!w.closed[x])
				load[x] += w.q[x] * (u - ub);
		u = ub;
		s[best] = ub;
		walk_close(&w, best);
	}
	for (uint32_t x = 0; x < n; x++)
		if (!w.closed[x])
			load[x] += w.q[x] * u;
	walk_free(&w);
	return 0;
}

static int u16_desc(const void *a, const void *b)
{
	uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The distinct spill values in effect (of s0, and of s1 when not NULL), descending, then 0:
 * the edges of the u slices in which the set of spilling backends is constant. */
static uint32_t levels(const bool *up, const uint16_t *s0, const uint16_t *s1, uint32_t n,
		       uint16_t *v)
{
	uint32_t nv = 0;

	for (uint32_t x = 0; x < n; x++) {
		if (up[x] && s0[x])
			v[nv++] = s0[x];
		if (s1 && up[x] && s1[x])
			v[nv++] = s1[x];
	}
	qsort(v, nv, sizeof(*v), u16_desc);
	v[nv++] = 0;
	return nv;
}

/*
 * The share of each backend's own arcs that lands on each backend under spill s (the
 * model's M(s), n x n, m[x * n + b]), and the backend that owns each arc with no spill
 * (eff[], past the down backends).
 */
static int spread_matrix(const struct kr_an_ring *r, uint32_t n, const bool *up, const uint16_t *s,
			 const double *space, double *m, uint32_t *eff)
{
	uint16_t *v = malloc((n + 1) * sizeof(*v));
	struct walk w;
	uint32_t nv = 0;
	double u = 1;
	int rc = -1;

	memset(&w, 0, sizeof(w));
	if (!v || walk_init(&w, r, n, up, NULL))
		goto out;
	for (uint32_t j = 0; j < r->npoints; j++)
		eff[j] = w.dest[j];
	nv = levels(up, s, NULL, n, v);
	for (uint32_t k = 0; k < nv; k++) {
		double lo = v[k] / KR_BAL_ONE;

		if (lo < u) {
			for (uint32_t j = 0; j < r->npoints; j++) {
				uint32_t b = eff[j], x = w.dest[j];

				if (b != NONE && x != NONE && space[b] > 0)
					m[(size_t)x * n + b] += arc_len(r, j) / space[b] * (u - lo);
			}
			u = lo;
		}
		for (uint32_t x = 0; x < n; x++)
			if (up[x] && s[x] && s[x] == v[k])
				walk_close(&w, x);
	}
	rc = 0;
out:
	walk_free(&w);
	free(v);
	return rc;
}

/* Solves m x = y (n x n, row-major; m and y are destroyed) by Gaussian elimination with
 * partial pivoting.  -1 when singular. */
static int solve(double *m, double *y, double *x, uint32_t n)
{
	for (uint32_t c = 0; c < n; c++) {
		uint32_t p = c;

		for (uint32_t i = c + 1; i < n; i++)
			if (fabs(m[(size_t)i * n + c]) > fabs(m[(size_t)p * n + c]))
				p = i;
		if (fabs(m[(size_t)p * n + c]) < 1e-12)
			return -1;
		if (p != c) {
			for (uint32_t k = 0; k < n; k++) {
				double t = m[(size_t)c * n + k];

				m[(size_t)c * n + k] = m[(size_t)p * n + k];
				m[(size_t)p * n + k] = t;
			}
			double t = y[c];

			y[c] = y[p];
			y[p] = t;
		}
		for (uint32_t i = c + 1; i < n; i++) {
			double f = m[(size_t)i * n + c] / m[(size_t)c * n + c];

			if (f == 0)
				continue;
			for (uint32_t k = c; k < n; k++)
				m[(size_t)i * n + k] -= f * m[(size_t)c * n + k];
			y[i] -= f * y[c];
		}
	}
	for (uint32_t c = n; c-- > 0;) {
		double t = y[c];

		for (uint32_t k = c + 1; k < n; k++)
			t -= m[(size_t)c * n + k] * x[k];
		x[c] = t / m[(size_t)c * n + c];
	}
	return 0;
}

/* The model's load of each backend under spill s (forced), with fixed[] on top. */
static int model_load(const struct kr_an_ring *r, uint32_t n, const bool *up, const double *a,
		      const struct imp *im, uint32_t nim, const double *fixed, const uint16_t *s,
		      double *load)
{
	double *forced = malloc(n * sizeof(*forced)), *su = malloc(n * sizeof(*su));
	int rc = -1;

	if (forced && su) {
		for (uint32_t x = 0; x < n; x++)
			forced[x] = s[x] / KR_BAL_ONE;
		rc = sweep(r, n, up, a, im, nim, fixed, NULL, forced, 1, load, su);
	}
	free(forced);
	free(su);
	return rc;
}

/* Share of the key space (of 1) that changes backend from spill s0 to s1; per backend
 * lost / gained. */
static int moved_share(const struct kr_an_ring *r, uint32_t n, const bool *up, const uint16_t *s0,
		       const uint16_t *s1, double *lost, double *gained, double *moved)
{
	uint16_t *v = malloc((2 * n + 1) * sizeof(*v));
	struct walk w0, w1;
	uint32_t nv = 0;
	double u = 1;
	int rc = -1;

	*moved = 0;
	memset(&w0, 0, sizeof(w0));
	memset(&w1, 0, sizeof(w1));
	memset(lost, 0, n * sizeof(*lost));
	memset(gained, 0, n * sizeof(*gained));
	if (!v || walk_init(&w0, r, n, up, NULL) || walk_init(&w1, r, n, up, NULL))
		goto out;
	nv = levels(up, s0, s1, n, v);
	for (uint32_t k = 0; k < nv; k++) {
		double lo = v[k] / KR_BAL_ONE;

		if (lo < u) {
			for (uint32_t j = 0; j < r->npoints; j++) {
				uint32_t a = w0.dest[j], b = w1.dest[j];
				double d = arc_len(r, j) / KR_AN_SPACE * (u - lo);

				if (a == b)
					continue;
				*moved += d;
				if (a != NONE)
					lost[a] += d;
				if (b != NONE)
					gained[b] += d;
			}
			u = lo;
		}
		for (uint32_t x = 0; x < n; x++) {
			if (up[x] && s0[x] && s0[x] == v[k])
				walk_close(&w0, x);
			if (up[x] && s1[x] && s1[x] == v[k])
				walk_close(&w1, x);
		}
	}
	rc = 0;
out:
	walk_free(&w0);
	walk_free(&w1);
	free(v);
	return rc;
}

static uint16_t to_u16(double u)
{
	double v = ceil(u * KR_BAL_ONE - 1e-9);

	return v <= 0 ? 0 : v >= 65535 ? 65535 : (uint16_t)v;
}

/* Adds (sign +1) or takes away (-1) the traffic of hot key h at its k replicas. */
static void hot_spread(const struct kr_an_ring *r, const bool *up, const struct kr_bal_hot *h,
		       uint32_t k, double sign, double *load)
{
	uint32_t rep[KR_BAL_MAX_REPLICAS];
	uint32_t got = kr_bal_replicas(r, up, h->hash, k, rep);

	for (uint32_t d = 0; d < got; d++)
		load[rep[d]] += sign * h->rate / got;
}

/* The least k whose k replicas of h all stay under aim x their share with h's rate / k on
 * top of load (which does not hold h); when none does, the k that leaves the most loaded of
 * them lowest.  0 when that is below 2. */
/* The most loaded of h's first k replicas / its share, with h's rate / k on top of load
 * (which does not hold h); *got: how many replicas there are. */
static double rep_max(const struct kr_an_ring *r, const bool *up, const struct kr_bal_hot *h,
		      uint32_t k, const double *fair, const double *load, uint32_t *got)
{
	uint32_t rep[KR_BAL_MAX_REPLICAS];
	double m = 0;

	*got = kr_bal_replicas(r, up, h->hash, k, rep);
	for (uint32_t d = 0; d < *got; d++) {
		double q = fair[rep[d]] > 0 ? (load[rep[d]] + h->rate / *got) / fair[rep[d]]
					    : HUGE_VAL;

		m = q > m ? q : m;
	}
	return m;
}

/* The least k whose k replicas of h all stay under aim x their share with h's rate / k on
 * top of load (which does not hold h); when none does, the k that leaves the most loaded of
 * them lowest.  0 when that is below 2. */
static uint32_t place_one(const struct kr_an_ring *r, const bool *up, uint32_t nup,
			  const struct kr_bal_hot *h, const double *fair, const double *load,
			  double aim)
{
	uint32_t kmax = nup < KR_BAL_MAX_REPLICAS ? nup : KR_BAL_MAX_REPLICAS, bk = 0, got;
	double bm = HUGE_VAL;

	for (uint32_t k = 2; k <= kmax; k++) {
		double m = rep_max(r, up, h, k, fair, load, &got);

		if (m < bm) {
			bm = m;
			bk = got;
		}
		if (m <= aim || got < k)
			break;
	}
	return bk >= 2 ? bk : 0;
}

/*
 * Replica counts for the hot keys.  A key is hot above (C - 1) x its backend's fair share.
 * Kept as they are: fixed entries; the controller's own while the key stays above half that
 * (then removed) and none of its replicas passes C (else placed again, as a new one).  A
 * new hot key, hottest first, gets the least k (2..16, at most the
 * backends up) whose k replicas all stay under (C - 3H) x their share with its rate / k on
 * top of the measured load (base: without the replicas in effect, which are placed again
 * here) without the new hot keys, and of the keys placed before it; when no k does, the k
 * that leaves the most loaded of them lowest; then each is placed again twice with the
 * others' replicas in place.
 */
static void propose_replicas(const struct kr_an_ring *r, const bool *up, uint32_t nup,
			     const uint16_t *cur, struct kr_bal_hot *hot, uint32_t nhot,
			     const struct kr_bal_params *pr, const double *fair, const double *base,
			     uint32_t n)
{
	double *load = malloc((n ? n : 1) * sizeof(*load)), aim = pr->bound - 3 * pr->hysteresis;
	uint8_t *done = calloc(nhot ? nhot : 1, 1), *mine = calloc(nhot ? nhot : 1, 1);
	uint32_t *order = calloc(nhot ? nhot : 1, sizeof(*order)), nord = 0;

	for (uint32_t i = 0; i < nhot; i++)
		hot[i].replicas_new = hot[i].replicas >= 2 ? hot[i].replicas : 0;
	if (!load || !done || !mine || !order)
		goto out;
	memcpy(load, base, n * sizeof(*load));
	for (uint32_t i = 0; i < nhot; i++) {
		struct kr_bal_hot *h = &hot[i];
		uint32_t o = kr_bal_route(r, up, NULL, h->hash);
		double thr = o == NONE ? 0 : (pr->bound - 1) * fair[o];

		if (h->fixed || !pr->replicas || (h->replicas_new && h->rate < thr / 2)) {
			if (!h->fixed && pr->replicas)
				h->replicas_new = 0;
			done[i] = 1;
		} else if (h->replicas_new) {
			mine[i] = 1;	/* the controller's own, still hot: placed again below */
		} else if (!(thr > 0) || h->rate < thr || nup < 2) {
			done[i] = 1;
		}
		if ((done[i] || mine[i]) && h->replicas_new)
			hot_spread(r, up, h, h->replicas_new, +1, load);
	}
	/* the new hot keys, hottest first; placed once, then twice more each with the others in
	 * place (a key placed early sees the replicas of the keys after it) */
	for (uint32_t i = 0; i < nhot; i++)
		if (!done[i])
			order[nord++] = i;
	for (uint32_t a = 1; a < nord; a++)
		for (uint32_t b = a; b > 0 && hot[order[b]].rate > hot[order[b - 1]].rate; b--) {
			uint32_t t = order[b];

			order[b] = order[b - 1];
			order[b - 1] = t;
		}
	for (uint32_t i = 0; i < nord; i++) {	/* every new one leaves where it is now */
		uint32_t now = kr_bal_route(r, up, cur, hot[order[i]].hash);

		if (!mine[order[i]] && now != NONE)
			load[now] -= hot[order[i]].rate;
	}
	for (int pass = 0; pass < 3; pass++)
		for (uint32_t i = 0; i < nord; i++) {
			struct kr_bal_hot *h = &hot[order[i]];
			uint32_t now = kr_bal_route(r, up, cur, h->hash), got;

			if (h->replicas_new)			/* taken back out */
				hot_spread(r, up, h, h->replicas_new, -1, load);
			else if (pass && now != NONE)
				load[now] -= h->rate;
			/* the controller's own keep their k while no replica passes C */
			if (!mine[order[i]] || rep_max(r, up, h, h->replicas_new, fair, load, &got) >
					       pr->bound)
				h->replicas_new = place_one(r, up, nup, h, fair, load, aim);
			if (h->replicas_new)
				hot_spread(r, up, h, h->replicas_new, +1, load);
			else if (now != NONE)
				load[now] += h->rate;
		}
out:
	free(load);
	free(done);
	free(mine);
	free(order);
}

int kr_bal_compute(const struct kr_an_ring *r, const struct kr_bal_backend *b, uint32_t n,
		   struct kr_bal_hot *hot, uint32_t nhot, const struct kr_bal_params *pr,
		   struct kr_bal_plan *p, struct kr_err *err)
{
	bool *up = calloc(n ? n : 1, sizeof(*up));
	uint16_t *cur = calloc(n ? n : 1, sizeof(*cur));
	uint16_t *top = calloc(n ? n : 1, sizeof(*top));
	uint32_t *eff = calloc(r->npoints ? r->npoints : 1, sizeof(*eff));
	double *space = calloc(n ? n : 1, sizeof(double));
	double *fix_now = calloc(n ? n : 1, sizeof(double));
	double *fix_new = calloc(n ? n : 1, sizeof(double));
	double *y = calloc(n ? n : 1, sizeof(double));
	double *a = calloc(r->npoints ? r->npoints : 1, sizeof(double));
	double *bound = calloc(n ? n : 1, sizeof(double));
	double *forced = calloc(n ? n : 1, sizeof(double));
	double *su = calloc(n ? n : 1, sizeof(double));
	double *m = NULL, wsum = 0;
	struct imp *im = calloc(nhot ? nhot : 1, sizeof(*im));
	uint32_t nup = 0, nim = 0;
	bool any_spill = false;
	int rc = -1;

	if (kr_bal_params_check(pr, err))
		goto out;
	if (n > KR_BAL_MAX_BACKENDS) {
		kr_errf(err, "%u backends: the controller handles rings of at most %u", n,
			KR_BAL_MAX_BACKENDS);
		goto out;
	}
	if (r->nowners != n || !r->npoints) {
		kr_errf(err, "the ring has no points, or owners that are not its backends");
		goto out;
	}
	if (!up || !cur || !top || !im || !eff || !space || !fix_now || !fix_new || !y || !a || !bound ||
	    !forced || !su) {
		kr_errf(err, "out of memory");
		goto out;
	}
	p->total = 0;
	for (uint32_t x = 0; x < n; x++) {
		up[x] = b[x].up;
		cur[x] = b[x].spill;
		if (!up[x])
			continue;
		nup++;
		wsum += b[x].weight;
		p->total += b[x].rate > 0 ? b[x].rate : 0;
		any_spill |= b[x].spill != 0;
	}
	for (uint32_t x = 0; x < n; x++)
		p->fair[x] = up[x] && wsum > 0 ? p->total * b[x].weight / wsum : 0;

	/* the hot keys: taken out of the measured rates where they are now */
	for (uint32_t x = 0; x < n; x++)
		y[x] = up[x] && b[x].rate > 0 ? b[x].rate : 0;
	for (uint32_t i = 0; i < nhot; i++) {
		const struct kr_bal_hot *h = &hot[i];
		uint32_t o;

		if (h->replicas >= 2) {
			hot_spread(r, up, h, h->replicas, +1, fix_now);
			hot_spread(r, up, h, h->replicas, -1, y);
		} else if ((o = kr_bal_route(r, up, cur, h->hash)) != NONE) {
			y[o] -= h->rate;
		}
	}
	for (uint32_t x = 0; x < n; x++)
		if (y[x] < 0)
			y[x] = 0;
	{
		/* the measured load without the replicas in effect: the greedy's base */
		double *base = fix_new;	/* (fix_new is filled only below) */

		memcpy(base, y, n * sizeof(*base));
		for (uint32_t i = 0; i < nhot; i++) {
			uint32_t o;

			if (hot[i].replicas < 2 &&
			    (o = kr_bal_route(r, up, cur, hot[i].hash)) != NONE)
				base[o] += hot[i].rate;
		}
		propose_replicas(r, up, nup, cur, hot, nhot, pr, p->fair, base, n);
		memset(fix_new, 0, n * sizeof(*fix_new));
	}
	for (uint32_t i = 0; i < nhot; i++) {
		const struct kr_bal_hot *h = &hot[i];

		if (h->replicas_new >= 2) {
			hot_spread(r, up, h, h->replicas_new, +1, fix_new);
		} else if (im) {
			/* not replicated: a key of its own, that spills by its own hash */
			im[nim].u = (kr_spill_hash(h->hash) >> 16) / KR_BAL_ONE;
			im[nim].rate = h->rate;
			im[nim++].j = lower_bound(r, h->hash);
		}
	}
	if (im)
		qsort(im, nim, sizeof(*im), imp_desc);

	/* the native loads: y = M(cur) N */
	{
		struct walk w;

		if (walk_init(&w, r, n, up, NULL)) {
			walk_free(&w);
			kr_errf(err, "out of memory");
			goto out;
		}
		for (uint32_t j = 0; j < r->npoints; j++) {
			eff[j] = w.dest[j];
			if (eff[j] != NONE)
				space[eff[j]] += arc_len(r, j);
		}
		walk_free(&w);
	}
	if (any_spill) {
		m = calloc((size_t)n * n, sizeof(*m));
		if (!m || spread_matrix(r, n, up, cur, space, m, eff)) {
			kr_errf(err, "out of memory");
			goto out;
		}
		for (uint32_t x = 0; x < n; x++)
			if (!up[x] || space[x] <= 0)
				m[(size_t)x * n + x] += 1;	/* no arcs: N = 0 (y = 0) or
								 * whatever reaches it */
		if (solve(m, y, p->native, n)) {
			kr_errf(err, "the spill in effect cannot be inverted (a singular model)");
			goto out;
		}
	} else {
		memcpy(p->native, y, n * sizeof(*y));
	}
	for (uint32_t x = 0; x < n; x++)
		if (!up[x] || space[x] <= 0 || p->native[x] < 0)
			p->native[x] = 0;
	for (uint32_t j = 0; j < r->npoints; j++)
		a[j] = eff[j] == NONE || space[eff[j]] <= 0 ? 0
			: p->native[eff[j]] * arc_len(r, j) / space[eff[j]];
	if (model_load(r, n, up, a, im, nim, fix_now, cur, p->model_now))
		goto oom;

	/* the least spill that holds C - H (need), C - 2H (aim) and C - 3H (the band's floor):
	 * a margin of H under the bound for the measurement's noise */
	for (uint32_t x = 0; x < n; x++)
		forced[x] = b[x].fixed ? b[x].spill / KR_BAL_ONE : -1;
	for (int pass = 0; pass < 3; pass++) {
		double c = pr->bound - (pass + 1) * pr->hysteresis;
		uint16_t *out = pass == 0 ? p->need : pass == 1 ? p->aim : top;

		for (uint32_t x = 0; x < n; x++)
			bound[x] = c * p->fair[x];
		if (sweep(r, n, up, a, im, nim, fix_new, bound, forced, pr->spill_max, p->model_new,
			  su))
			goto oom;
		for (uint32_t x = 0; x < n; x++)
			out[x] = b[x].fixed ? b[x].spill : to_u16(su[x]);
	}

	/* hysteresis and step */
	p->changed = 0;
	for (uint32_t x = 0; x < n; x++) {
		double lo = p->need[x], hi = top[x] > p->aim[x] ? top[x] : p->aim[x];
		double t = cur[x], step = pr->max_step * KR_BAL_ONE;
		double smax = floor(pr->spill_max * KR_BAL_ONE);

		if (!up[x] || b[x].fixed || p->total <= 0) {
			p->spill[x] = cur[x];
			continue;
		}
		if (t < lo || t > hi)	/* outside the band: to the aim (C - 2H) */
			t = p->aim[x];
		if (t - cur[x] > step)
			t = cur[x] + step;
		if (cur[x] - t > step)
			t = cur[x] - step;
		if (t > smax)
			t = smax;
		p->spill[x] = t <= 0 ? 0 : (uint16_t)ceil(t);
		p->changed += p->spill[x] != cur[x];
	}
	p->replicas_changed = 0;
	for (uint32_t i = 0; i < nhot; i++)
		p->replicas_changed += (hot[i].replicas >= 2 ? hot[i].replicas : 0) !=
				       hot[i].replicas_new;
	if (model_load(r, n, up, a, im, nim, fix_new, p->spill, p->model_new) ||
	    moved_share(r, n, up, cur, p->spill, p->lost, p->gained, &p->moved))
		goto oom;
	rc = 0;
	goto out;
oom:
	kr_errf(err, "out of memory");
out:
	free(up);
	free(cur);
	free(top);
	free(eff);
	free(space);
	free(fix_now);
	free(fix_new);
	free(y);
	free(a);
	free(bound);
	free(forced);
	free(su);
	free(m);
	free(im);
	return rc;
}
