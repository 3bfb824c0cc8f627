// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Bounded load on a Zipf key stream (issue 28 item 5): 16 backends (a v2 ring, 160 points
 * each), 100,000 keys of random hashes whose packet rates follow Zipf(s) (rank r gets
 * r^-s of the traffic).  Each round routes every key as the data path does (walk on past
 * the backends whose spill is above the key's spill hash; a hot key's packets spread over
 * its replicas), counts each backend's packets, hands the counts and the keys `top` would
 * report (Space-Saving with 64 counters: every key above 1/64 of its backend's packets) to
 * the controller (user/core/balance.c), and applies what it decides; 12 rounds.  Printed
 * per exponent, against the same stream without any balancing (the baseline of the run):
 * the busiest backend's load / its fair share before and after, with spill alone and with
 * spill and replicas, the share of the keys (and of the traffic) that moved, the replicas,
 * and the controller's time per round.  The data path's cost per packet with spill off and
 * on is build/bench/bench_datapath's ("spill:" line).  No assertions.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "balance.h"
#include "continuum.h"
#include "bench_args.h"
#include "bench_loadavg.h"

#define NB	16
#define NKEYS	100000
#define ROUNDS	12

static struct kr_an_ring an;
static uint32_t keys[NKEYS], owner0[NKEYS];
static double krate[NKEYS];
static bool up[NB];

static uint64_t rng = 0x6a09e667f3bcc908ull;

static uint64_t rnd64(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

struct state {
	uint16_t spill[NB];
	struct kr_bal_hot hot[256];
	uint32_t nhot;
};

/* Every key routed; the loads per backend; route[k] where key k's packets go (replicated
 * keys: UINT32_MAX). */
static void route_all(const struct state *st, double *load, uint32_t *route)
{
	memset(load, 0, NB * sizeof(*load));
	for (int k = 0; k < NKEYS; k++) {
		uint32_t i, rep[KR_BAL_MAX_REPLICAS], got;

		for (i = 0; i < st->nhot && st->hot[i].hash != keys[k]; i++)
			;
		if (i < st->nhot && st->hot[i].replicas >= 2) {
			got = kr_bal_replicas(&an, up, keys[k], st->hot[i].replicas, rep);
			for (uint32_t d = 0; d < got; d++)
				load[rep[d]] += krate[k] / got;
			route[k] = UINT32_MAX;
			continue;
		}
		route[k] = kr_bal_route(&an, up, st->spill, keys[k]);
		if (route[k] < NB)
			load[route[k]] += krate[k];
	}
}

/* The keys top would report: above 1/64 of their backend's packets. */
static void hot_view(struct state *st, const double *load, const uint32_t *route)
{
	struct kr_bal_hot keep[256];
	uint32_t n = 0;

	for (int k = 0; k < NKEYS && n < 256; k++) {
		uint32_t i;

		for (i = 0; i < st->nhot && st->hot[i].hash != keys[k]; i++)
			;
		if (i < st->nhot && st->hot[i].replicas >= 2) {
			keep[n] = st->hot[i];	/* in the map: top sees it on its replicas */
			keep[n++].rate = krate[k];
		} else if (route[k] < NB && krate[k] > load[route[k]] / 64) {
			keep[n++] = (struct kr_bal_hot){ .hash = keys[k], .rate = krate[k] };
		}
	}
	memcpy(st->hot, keep, n * sizeof(keep[0]));
	st->nhot = n;
}

static double busiest(const double *load, double *total)
{
	double m = 0, t = 0;

	for (int i = 0; i < NB; i++) {
		t += load[i];
		m = load[i] > m ? load[i] : m;
	}
	*total = t;
	return t > 0 ? m * NB / t : 0;
}

struct result {
	double ratio, keys_moved, traffic_moved, ms;
	uint32_t replicated, replicas;
};

static void run(bool replicas, struct result *res)
{
	struct kr_bal_params pr = { .bound = KR_BAL_DEFAULT_BOUND,
				    .hysteresis = KR_BAL_DEFAULT_HYSTERESIS,
				    .max_step = KR_BAL_DEFAULT_MAX_STEP,
				    .spill_max = KR_BAL_DEFAULT_SPILL_MAX, .replicas = replicas };
	static uint32_t route[NKEYS];
	struct state st = { 0 };
	struct kr_bal_backend b[NB];
	struct kr_bal_plan p;
	struct kr_err err;
	double load[NB], total, t = 0, moved = 0;
	uint32_t km = 0;

	for (int r = 0; r < ROUNDS; r++) {
		double t0;

		route_all(&st, load, route);
		hot_view(&st, load, route);
		for (int i = 0; i < NB; i++)
			b[i] = (struct kr_bal_backend){ .weight = 160, .rate = load[i],
							.spill = st.spill[i], .up = true };
		kr_bal_plan_alloc(&p, NB);
		t0 = now_s();
		if (kr_bal_compute(&an, b, NB, st.hot, st.nhot, &pr, &p, &err)) {
			printf("bench_balance: %s\n", err.msg);
			exit(1);
		}
		t += now_s() - t0;
		memcpy(st.spill, p.spill, sizeof(st.spill));
		for (uint32_t i = 0; i < st.nhot; i++)
			st.hot[i].replicas = st.hot[i].replicas_new;
		kr_bal_plan_free(&p);
	}
	route_all(&st, load, route);
	res->ratio = busiest(load, &total);
	for (int k = 0; k < NKEYS; k++)
		if (route[k] < NB && route[k] != owner0[k]) {
			km++;
			moved += krate[k];
		}
	res->keys_moved = (double)km / NKEYS;
	res->traffic_moved = moved / total;
	res->ms = 1000 * t / ROUNDS;
	res->replicated = res->replicas = 0;
	for (uint32_t i = 0; i < st.nhot; i++)
		if (st.hot[i].replicas >= 2) {
			res->replicated++;
			res->replicas += st.hot[i].replicas;
		}
}

int main(int argc, char **argv)
{
	bench_args(argc, argv, 0,
		   " [--help]\n"
		   "Bounded load on a Zipf key stream over 16 backends: the busiest backend / its fair\n"
		   "share without balancing, with spill, with spill and replicas; keys moved.  No\n"
		   "assertions.\n");
	const double expo[] = { 0.6, 0.8, 1.0 };
	struct kr_backend_spec bs[NB];
	struct kr_ring *ring;
	struct kr_err err;
	char addr[32];

	memset(bs, 0, sizeof(bs));
	for (int i = 0; i < NB; i++) {
		snprintf(addr, sizeof(addr), "10.9.0.%d:11211", i + 1);
		kr_sockaddr_parse(addr, &bs[i].addr, &err);
		bs[i].weight = 1;
		up[i] = true;
	}
	if (kr_ring_build(&ring, bs, NB, KR_RING_V2, 160, &err) ||
	    kr_an_ring_borrow(&an, ring->hash, ring->npoints, NB)) {
		printf("bench_balance: %s\n", err.msg);
		return 1;
	}
	for (uint32_t j = 0; j < ring->npoints; j++)
		an.owner[j] = ring->backend[j];
	for (int k = 0; k < NKEYS; k++) {
		keys[k] = (uint32_t)rnd64();
		owner0[k] = kr_bal_route(&an, up, NULL, keys[k]);
	}
	bench_loadavg_begin();
	printf("bounded load (C = %.2f, H = %.2f, max step %.2f, %d rounds): %d keys, Zipf(s) "
	       "rates, %d backends (v2, 160 points each)\n", KR_BAL_DEFAULT_BOUND,
	       KR_BAL_DEFAULT_HYSTERESIS, KR_BAL_DEFAULT_MAX_STEP, ROUNDS, NKEYS, NB);
	for (size_t e = 0; e < sizeof(expo) / sizeof(expo[0]); e++) {
		struct result sp, both;
		double load[NB], total, base, sum = 0;
		struct state none = { 0 };
		static uint32_t route[NKEYS];

		for (int k = 0; k < NKEYS; k++)
			sum += krate[k] = pow(k + 1, -expo[e]);
		route_all(&none, load, route);
		base = busiest(load, &total);
		run(false, &sp);
		run(true, &both);
		printf("  s = %.1f (hottest key %.2f%% of the packets, %.2f x a fair share%s):\n",
		       expo[e], 100 * krate[0] / sum, krate[0] / sum * NB,
		       krate[0] / sum * NB > KR_BAL_DEFAULT_BOUND ?
		       ": above C alone, no spill can place it; replicas can" : "");
		printf("    busiest/fair: none %.2f, spill %.2f (%.2f x the baseline), spill + replicas "
		       "%.2f (%.2f x)\n", base, sp.ratio, sp.ratio / base, both.ratio,
		       both.ratio / base);
		printf("    keys moved: spill %.2f%% (%.2f%% of the traffic), spill + replicas %.2f%% "
		       "(%.2f%%); %u keys replicated (%u replicas)\n", 100 * sp.keys_moved,
		       100 * sp.traffic_moved, 100 * both.keys_moved, 100 * both.traffic_moved,
		       both.replicated, both.replicas);
		printf("    controller: %.2f ms per round (spill), %.2f ms (spill + replicas)\n", sp.ms,
		       both.ms);
	}
	kr_an_ring_free(&an);
	kr_ring_free(ring);
	return 0;
}
