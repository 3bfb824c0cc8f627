// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The bounded-load controller's arithmetic (user/core/balance.c) against an independent
 * simulation: 100,000 keys of random hashes on a real 16-backend ketama ring, each routed
 * one by one with kr_bal_route() (the data path's rule: walk on from the key's point past
 * every backend that is down or whose spill is above the key's spill hash) - a per-key
 * walk, not the controller's per-arc sweep.  Checked: the model's loads equal the
 * simulated ones; the native loads are recovered from rates measured with spill in
 * effect; the loop of measure -> compute -> publish ends with every backend under
 * C x its share and without moving a key of a backend that was not overloaded; off gives
 * every key back; hysteresis, step limit, fixed and down backends, replica proposals.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "balance.h"
#include "continuum.h"

#define NB	16
#define NKEYS	100000

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint64_t rnd64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static struct kr_ring *ring;
static struct kr_an_ring an;
static uint32_t keys[NKEYS], owner0[NKEYS];
static double krate[NKEYS];
static bool up[NB];

static void build_ring(void)
{
	struct kr_backend_spec b[NB];
	struct kr_err err;
	char addr[32];

	memset(b, 0, sizeof(b));
	for (int i = 0; i < NB; i++) {
		snprintf(addr, sizeof(addr), "10.7.0.%d:11211", i + 1);
		kr_sockaddr_parse(addr, &b[i].addr, &err);
		b[i].weight = 1;
	}
	if (kr_ring_build(&ring, b, NB, KR_RING_V2, 160, &err) ||
	    kr_an_ring_borrow(&an, ring->hash, ring->npoints, NB)) {
		printf("Bail out! ring: %s\n", err.msg);
		exit(1);
	}
	for (uint32_t j = 0; j < ring->npoints; j++)
		an.owner[j] = ring->backend[j];
	for (int i = 0; i < NB; i++)
		up[i] = true;
	for (int k = 0; k < NKEYS; k++)
		keys[k] = (uint32_t)rnd64();
}

/* The traffic: every key rate 1, the keys of the backends in hot_be[] rate mult. */
static void traffic(const int *hot_be, int nhot, double mult)
{
	for (int k = 0; k < NKEYS; k++) {
		owner0[k] = kr_bal_route(&an, up, NULL, keys[k]);
		krate[k] = 1;
		for (int i = 0; i < nhot; i++)
			if ((int)owner0[k] == hot_be[i])
				krate[k] = mult;
	}
}

/* What the data path would count per backend under spill s. */
static void simulate(const uint16_t *s, double *load)
{
	memset(load, 0, NB * sizeof(*load));
	for (int k = 0; k < NKEYS; k++) {
		uint32_t o = kr_bal_route(&an, up, s, keys[k]);

		if (o < NB)
			load[o] += krate[k];
	}
}

static const struct kr_bal_params defaults = {
	.bound = 1.25, .hysteresis = 0.05, .max_step = 0.25, .spill_max = 0.99, .replicas = true,
};

static void backends(struct kr_bal_backend *b, const double *load, const uint16_t *s)
{
	for (int i = 0; i < NB; i++) {
		b[i] = (struct kr_bal_backend){ .weight = 160, .rate = load[i], .spill = s[i],
						.up = up[i] };
	}
}

static double max_ratio(const double *load, const double *fair, int *arg)
{
	double m = 0;

	for (int i = 0; i < NB; i++)
		if (fair[i] > 0 && load[i] / fair[i] > m) {
			m = load[i] / fair[i];
			if (arg)
				*arg = i;
		}
	return m;
}

/* Largest |model - simulation| over the backends, relative to the mean load. */
static double model_error(const double *model, const double *sim)
{
	double tot = 0, e = 0;

	for (int i = 0; i < NB; i++)
		tot += sim[i];
	for (int i = 0; i < NB; i++)
		if (fabs(model[i] - sim[i]) > e)
			e = fabs(model[i] - sim[i]);
	return e / (tot / NB);
}

static void test_uniform(void)
{
	struct kr_bal_backend b[NB];
	struct kr_bal_plan p;
	uint16_t s[NB] = { 0 };
	double load[NB], fair = 0;
	struct kr_err err;
	int rc;

	traffic(NULL, 0, 1);
	simulate(s, load);
	for (int i = 0; i < NB; i++)
		fair += load[i] / NB;
	for (int i = 0; i < NB; i++)
		load[i] = fair;		/* every backend exactly at its share */
	backends(b, load, s);
	kr_bal_plan_alloc(&p, NB);
	rc = kr_bal_compute(&an, b, NB, NULL, 0, &defaults, &p, &err);
	CHECK(rc == 0, "uniform: computed");
	CHECK_EQ_U(p.changed, 0, "uniform: at the fair share nothing spills");
	CHECK(p.moved == 0, "uniform: nothing moves (%g)", p.moved);
	kr_bal_plan_free(&p);
}

static void test_model_vs_simulation(void)
{
	const int hot_be[] = { 3, 11 };
	struct kr_bal_backend b[NB];
	struct kr_bal_params pr = defaults;
	struct kr_bal_plan p;
	uint16_t s[NB] = { 0 };
	double load[NB], sim[NB];
	struct kr_err err;
	int rc, arg = -1;

	traffic(hot_be, 2, 3.0);
	simulate(s, load);
	backends(b, load, s);
	pr.max_step = 1;	/* straight to the answer */
	kr_bal_plan_alloc(&p, NB);
	rc = kr_bal_compute(&an, b, NB, NULL, 0, &pr, &p, &err);
	CHECK(rc == 0, "overloaded: computed (%s)", rc ? err.msg : "");
	CHECK(max_ratio(load, p.fair, &arg) > 2 && (arg == 3 || arg == 11),
	      "overloaded: backend %d at %.2f x its share before", arg, max_ratio(load, p.fair, NULL));
	CHECK(p.spill[3] > 0 && p.spill[11] > 0, "overloaded: the two hot backends spill (%u, %u)",
	      p.spill[3], p.spill[11]);
	CHECK(model_error(p.model_now, load) < 1e-6, "model with no spill = the measured rates");
	simulate(p.spill, sim);
	CHECK(model_error(p.model_new, sim) < 0.05,
	      "model of the new spill = the key-by-key simulation within 5%% of a share (%.4f)",
	      model_error(p.model_new, sim));
	CHECK(max_ratio(p.model_new, p.fair, NULL) <= pr.bound + 1e-9,
	      "model: every backend within the bound (%.3f)", max_ratio(p.model_new, p.fair, NULL));
	CHECK(max_ratio(sim, p.fair, NULL) <= pr.bound + 0.03,
	      "simulation: every backend within the bound + 0.03 (%.3f)", max_ratio(sim, p.fair, NULL));
	{
		/* the moved share of the model against the keys that changed backend */
		uint32_t moved = 0;
		double lost_sim[NB] = { 0 }, worst = 0;

		for (int k = 0; k < NKEYS; k++) {
			uint32_t o = kr_bal_route(&an, up, p.spill, keys[k]);

			if (o != owner0[k]) {
				moved++;
				lost_sim[owner0[k]] += 1.0 / NKEYS;
			}
		}
		CHECK(fabs(p.moved - (double)moved / NKEYS) < 0.01,
		      "moved share: model %.4f, keys %.4f", p.moved, (double)moved / NKEYS);
		for (int i = 0; i < NB; i++)
			if (fabs(p.lost[i] - lost_sim[i]) > worst)
				worst = fabs(p.lost[i] - lost_sim[i]);
		CHECK(worst < 0.01, "lost per backend: model = keys within 0.01 (%.4f)", worst);
	}

	/* the estimate: rates measured with that spill in effect give back the native loads */
	{
		struct kr_bal_plan q;
		double e = 0;

		backends(b, sim, p.spill);
		kr_bal_plan_alloc(&q, NB);
		rc = kr_bal_compute(&an, b, NB, NULL, 0, &pr, &q, &err);
		CHECK(rc == 0, "estimate: computed");
		e = model_error(q.native, load);
		/* the keys are random, so a backend's traffic is not exactly even over its arcs */
		CHECK(e < 0.08, "native loads recovered from spilled rates within 8%% (%.4f)", e);
		CHECK(model_error(q.model_now, sim) < 1e-6, "model of the spill in effect = measured");
		CHECK_EQ_U(q.changed, 0, "at the answer: nothing changes (hysteresis band)");
		kr_bal_plan_free(&q);
	}
	kr_bal_plan_free(&p);
}

/* The loop: measure (simulate), compute, publish; then off. */
static void test_loop(void)
{
	const int hot_be[] = { 5 };
	struct kr_bal_backend b[NB];
	struct kr_bal_plan p;
	uint16_t s[NB] = { 0 }, zero[NB] = { 0 };
	double load[NB], fair[NB], before;
	bool over[NB];
	struct kr_err err;
	int rounds = 0, bad = 0, rc = 0;
	uint32_t max_delta = 0;

	traffic(hot_be, 1, 4.0);
	simulate(s, load);
	backends(b, load, s);
	kr_bal_plan_alloc(&p, NB);
	kr_bal_compute(&an, b, NB, NULL, 0, &defaults, &p, &err);
	memcpy(fair, p.fair, sizeof(fair));
	before = max_ratio(load, fair, NULL);
	for (int i = 0; i < NB; i++)
		over[i] = load[i] > defaults.bound * fair[i];
	kr_bal_plan_free(&p);
	for (rounds = 0; rounds < 12; rounds++) {
		simulate(s, load);
		backends(b, load, s);
		kr_bal_plan_alloc(&p, NB);
		rc |= kr_bal_compute(&an, b, NB, NULL, 0, &defaults, &p, &err);
		for (int i = 0; i < NB; i++) {
			uint32_t d = p.spill[i] > s[i] ? p.spill[i] - s[i] : s[i] - p.spill[i];

			if (d > max_delta)
				max_delta = d;
		}
		memcpy(s, p.spill, sizeof(s));
		kr_bal_plan_free(&p);
	}
	simulate(s, load);
	CHECK(rc == 0, "loop: 12 rounds computed");
	CHECK(before > 3 && max_ratio(load, fair, NULL) <= defaults.bound + 0.03,
	      "loop: busiest/fair %.3f before, %.3f after (bound 1.25)", before,
	      max_ratio(load, fair, NULL));
	CHECK(max_delta <= (uint32_t)ceil(defaults.max_step * KR_BAL_ONE),
	      "loop: no step above max_step (%u)", max_delta);
	for (int k = 0; k < NKEYS; k++)
		bad += !over[owner0[k]] && kr_bal_route(&an, up, s, keys[k]) != owner0[k];
	CHECK_EQ_U(bad, 0, "loop: no key of a backend that was not overloaded moved");
	{
		int moved = 0;

		for (int k = 0; k < NKEYS; k++)
			moved += kr_bal_route(&an, up, s, keys[k]) != owner0[k];
		CHECK(moved > 0 && moved < NKEYS / 10, "loop: %.2f%% of the keys moved",
		      100.0 * moved / NKEYS);
	}
	/* another round at the answer: the hysteresis holds it */
	backends(b, load, s);
	kr_bal_plan_alloc(&p, NB);
	kr_bal_compute(&an, b, NB, NULL, 0, &defaults, &p, &err);
	CHECK_EQ_U(p.changed, 0, "loop: converged, nothing changes");
	kr_bal_plan_free(&p);
	/* off: spill 0 everywhere gives every key its backend back */
	bad = 0;
	for (int k = 0; k < NKEYS; k++)
		bad += kr_bal_route(&an, up, zero, keys[k]) != owner0[k];
	CHECK_EQ_U(bad, 0, "off: every key back on its backend");
}

static void test_step_fixed_down(void)
{
	const int hot_be[] = { 2 };
	struct kr_bal_backend b[NB];
	struct kr_bal_params pr = defaults;
	struct kr_bal_plan p;
	uint16_t s[NB] = { 0 };
	double load[NB];
	struct kr_err err;

	traffic(hot_be, 1, 4.0);
	simulate(s, load);
	backends(b, load, s);
	pr.max_step = 0.05;
	kr_bal_plan_alloc(&p, NB);
	kr_bal_compute(&an, b, NB, NULL, 0, &pr, &p, &err);
	CHECK(p.need[2] > 3277 && p.spill[2] == 3277,
	      "step: the need %u is limited to 0.05 (3277): %u", p.need[2], p.spill[2]);
	kr_bal_plan_free(&p);

	/* fixed: the overloaded backend's spill is the operator's, kept */
	b[2].fixed = true;
	b[2].spill = 1000;
	kr_bal_plan_alloc(&p, NB);
	kr_bal_compute(&an, b, NB, NULL, 0, &defaults, &p, &err);
	CHECK(p.spill[2] == 1000 && p.need[2] == 1000, "fixed: spill kept (%u)", p.spill[2]);
	kr_bal_plan_free(&p);

	/* down: no share, spill untouched, its arcs belong to the next */
	b[2].fixed = false;
	b[2].spill = 0;
	b[7].up = false;
	b[7].spill = 500;
	kr_bal_plan_alloc(&p, NB);
	kr_bal_compute(&an, b, NB, NULL, 0, &defaults, &p, &err);
	CHECK(p.fair[7] == 0 && p.spill[7] == 500, "down: no share (%g), spill kept (%u)",
	      p.fair[7], p.spill[7]);
	kr_bal_plan_free(&p);
	b[7].up = true;

	/* bad parameters */
	pr = defaults;
	pr.bound = 1;
	kr_bal_plan_alloc(&p, NB);
	CHECK(kr_bal_compute(&an, b, NB, NULL, 0, &pr, &p, &err) == -1 &&
	      strstr(err.msg, "bound"), "bound 1 refused: %s", err.msg);
	pr = defaults;
	pr.hysteresis = 0.09;
	CHECK(kr_bal_compute(&an, b, NB, NULL, 0, &pr, &p, &err) == -1 &&
	      strstr(err.msg, "hysteresis"), "hysteresis >= (bound - 1) / 3 refused: %s", err.msg);
	kr_bal_plan_free(&p);
}

static void test_replicas(void)
{
	struct kr_bal_backend b[NB];
	struct kr_bal_hot hot[3];
	struct kr_bal_plan p;
	uint16_t s[NB] = { 0 };
	double load[NB], total = 0, fair;
	uint32_t rep[KR_BAL_MAX_REPLICAS], o;
	struct kr_err err;

	traffic(NULL, 0, 1);
	simulate(s, load);
	for (int i = 0; i < NB; i++)
		total += load[i];
	/* a key with 10 % of everything (and 1/0.9 of the rest), and a cold one */
	hot[0] = (struct kr_bal_hot){ .hash = 0x12345678u, .rate = total / 9 };
	hot[1] = (struct kr_bal_hot){ .hash = 0x9abcdef0u, .rate = total / 9 * 0.01 };
	o = kr_bal_route(&an, up, NULL, hot[0].hash);
	load[o] += hot[0].rate;
	load[kr_bal_route(&an, up, NULL, hot[1].hash)] += hot[1].rate;
	backends(b, load, s);
	kr_bal_plan_alloc(&p, NB);
	CHECK(kr_bal_compute(&an, b, NB, hot, 2, &defaults, &p, &err) == 0, "replicas: computed");
	fair = p.fair[o];
	{
		/* the least k whose replicas all stay under (C - 3H) x their share */
		uint32_t k = hot[0].replicas_new, kmin = 0, kbest = 0;
		double base[NB], best = HUGE_VAL;

		memcpy(base, load, sizeof(base));
		base[o] -= hot[0].rate;	/* the measured load without the key itself */
		for (uint32_t kk = 2; kk <= NB && !kmin; kk++) {
			double m = 0;

			kr_bal_replicas(&an, up, hot[0].hash, kk, rep);
			for (uint32_t d = 0; d < kk; d++)
				m = fmax(m, (base[rep[d]] + hot[0].rate / kk) / p.fair[rep[d]]);
			if (m <= 1.10)
				kmin = kk;
			if (m < best) {
				best = m;
				kbest = kk;
			}
		}
		if (!kmin)	/* none fits: the k that leaves the busiest replica lowest */
			kmin = kbest;
		CHECK(k >= 2 && k == kmin, "replicas: the least k under (C - 3H) x the share (else the best): %u "
		      "(brute force %u; the key is %.2f x a share)", k, kmin, hot[0].rate / fair);
	}
	CHECK_EQ_U(hot[1].replicas_new, 0, "replicas: a cold key gets none");
	kr_bal_replicas(&an, up, hot[0].hash, hot[0].replicas_new, rep);
	CHECK(rep[0] == o, "replicas: the first is the key's own backend");
	CHECK(max_ratio(p.model_new, p.fair, NULL) <= 1.25 + 1e-9 && p.moved < 0.01,
	      "replicas: the hot key spread, little spill (%.3f, moved %g)",
	      max_ratio(p.model_new, p.fair, NULL), p.moved);
	kr_bal_plan_free(&p);
	/* in the map now: kept while hot; dropped when its rate halves below the threshold */
	hot[0].replicas = hot[0].replicas_new;
	kr_bal_plan_alloc(&p, NB);
	kr_bal_compute(&an, b, NB, hot, 1, &defaults, &p, &err);
	CHECK_EQ_U(hot[0].replicas_new, hot[0].replicas, "replicas: kept");
	hot[0].rate = 0.1 * fair;
	kr_bal_compute(&an, b, NB, hot, 1, &defaults, &p, &err);
	CHECK_EQ_U(hot[0].replicas_new, 0, "replicas: removed when cold");
	kr_bal_plan_free(&p);
}

/* Warm keys the view reports but that get no replicas (--no-replicas): each spills by its
 * own hash, so the model places it exactly; the loop settles (no limit cycle) under C. */
static void test_known_keys(void)
{
	struct kr_bal_params pr = defaults;
	struct kr_bal_backend b[NB];
	struct kr_bal_hot hot[24];
	struct kr_bal_plan p;
	uint16_t s[NB] = { 0 };
	double load[NB], fair = 0, total = 0;
	struct kr_err err;
	uint32_t changed = 1;
	int rc = 0;

	traffic(NULL, 0, 1);
	for (int k = 0; k < NKEYS; k++)
		total += krate[k];
	fair = total / NB;
	for (int i = 0; i < 24; i++)	/* 24 keys of 0.2 x a share, 6 of them on backend 4 */
		krate[i * 37] = 0;
	for (int i = 0, n = 0; i < NKEYS && n < 24; i++)
		if ((n < 6) == (owner0[i] == 4) && krate[i] == 1) {
			krate[i] = 0.2 * fair;
			hot[n++] = (struct kr_bal_hot){ .hash = keys[i], .rate = 0.2 * fair };
		}
	pr.replicas = false;
	for (int r = 0; r < 12; r++) {
		simulate(s, load);
		for (int i = 0; i < NB; i++)
			b[i] = (struct kr_bal_backend){ .weight = 160, .rate = load[i], .spill = s[i],
							.up = true };
		kr_bal_plan_alloc(&p, NB);
		rc |= kr_bal_compute(&an, b, NB, hot, 24, &pr, &p, &err);
		memcpy(s, p.spill, sizeof(s));
		changed = p.changed;
		if (r == 0)
			CHECK(max_ratio(load, p.fair, NULL) > 1.5, "known keys: %.2f x a share before",
			      max_ratio(load, p.fair, NULL));
		kr_bal_plan_free(&p);
	}
	simulate(s, load);
	for (int i = 0; i < NB; i++)
		b[i].rate = load[i];
	kr_bal_plan_alloc(&p, NB);
	kr_bal_compute(&an, b, NB, hot, 24, &pr, &p, &err);
	CHECK(rc == 0 && max_ratio(load, p.fair, NULL) <= pr.bound + 0.03,
	      "known keys: %.3f x after 12 rounds (bound 1.25)", max_ratio(load, p.fair, NULL));
	CHECK(changed == 0 && p.changed == 0, "known keys: settled (changes %u, then %u)", changed,
	      p.changed);
	kr_bal_plan_free(&p);
}

int main(void)
{
	build_ring();
	test_uniform();
	test_model_vs_simulation();
	test_loop();
	test_step_fixed_down();
	test_replicas();
	test_known_keys();
	kr_ring_free(ring);
	kr_an_ring_free(&an);
	return tap_done();
}
