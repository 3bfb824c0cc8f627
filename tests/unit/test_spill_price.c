// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The exact price of spill changes (user/core/spill_price.c) against brute force: every key
 * of windows of the 32-bit key space (2^22 keys each, some across the wrap and over many
 * arcs) routed one by one by the rule, counted, compared exactly; the whole space's figures
 * against a random sample; the floor-sum count against a loop; and the independence of the
 * spill hash from the migration's slot choice (kr_mix32) over real-looking keys.
 */
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "addr.h"
#include "continuum.h"
#include "kr_datapath_kern_user.h"
#include "spill_price.h"

#define NB 6

static struct kr_ring *ring(uint32_t pm)
{
	struct kr_backend_spec b[NB];
	struct kr_ring *r = NULL;
	char a[32];

	for (int i = 0; i < NB; i++) {
		snprintf(a, sizeof(a), "10.1.0.%d:11211", i + 1);
		kr_sockaddr_parse(a, &b[i].addr, NULL);
		b[i].weight = 1 + i % 3;
	}
	if (kr_ring_build(&r, b, NB, KR_RING_V2, pm, NULL))
		return NULL;
	return r;
}

static uint64_t rnd_state = 88172645463325252ull;
static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)rnd_state;
}

/* brute force over [lo, hi): the price by routing every key */
static int brute(const struct kr_ring *r, const struct kr_spill_side *a,
		 const struct kr_spill_side *b, uint64_t lo, uint64_t hi,
		 const struct kr_spill_price *p)
{
	uint64_t moved = 0, bef[NB + 1] = {}, aft[NB + 1] = {}, lost[NB + 1] = {},
		 gained[NB + 1] = {};

	for (uint64_t h = lo; h < hi; h++) {
		uint32_t x = kr_spill_route(r, a, (uint32_t)h), y = kr_spill_route(r, b, (uint32_t)h);

		bef[x]++;
		aft[y]++;
		if (x != y) {
			moved++;
			lost[x]++;
			gained[y]++;
		}
	}
	if (moved != p->moved)
		return printf("#   moved: brute %llu, price %llu\n", (unsigned long long)moved,
			      (unsigned long long)p->moved), 0;
	for (int i = 0; i <= NB; i++)
		if (bef[i] != p->before[i] || aft[i] != p->after[i] || lost[i] != p->lost[i] ||
		    gained[i] != p->gained[i])
			return printf("#   backend %d differs\n", i), 0;
	return 1;
}

static void floor_counts(void)
{
	int ok = 1;

	for (int t = 0; t < 50 && ok; t++) {
		uint64_t n = rnd() % 100000, th = (uint64_t)rnd() + (t == 0 ? (1ull << 32) : 0), c = 0;
		uint32_t a = rnd() | 1;

		if (th > (1ull << 32))
			th = 1ull << 32;
		for (uint64_t h = 0; h < n; h++)
			c += (uint32_t)(h * a) < th;
		ok = c == kr_mulmod_count_below(n, a, th);
	}
	CHECK(ok, "floor sum: #{h < n : h * a mod 2^32 < t} equals the loop's count (50 draws)");
}

static void windows(void)
{
	struct kr_ring *r = ring(4);
	uint8_t up0[NB], up1[NB];
	uint16_t s0[NB], s1[NB];
	struct kr_spill_side a = { up0, s0 }, b = { up1, s1 };
	int ok = 1, w;

	if (!r) {
		CHECK(0, "ring built");
		return;
	}
	DIAG("ring of %u points", r->npoints);
	for (w = 0; w < 12 && ok; w++) {
		struct kr_spill_price p;
		uint64_t len = 1u << 22, lo;

		for (int i = 0; i < NB; i++) {
			up0[i] = rnd() % 5 != 0;
			up1[i] = w % 3 ? up0[i] : rnd() % 5 != 0;
			s0[i] = rnd() % 3 ? 0 : (uint16_t)(rnd() % 65000);
			s1[i] = rnd() % 2 ? s0[i] : (uint16_t)(rnd() % 65536);
		}
		if (w == 0)	/* every spill 0 before: priced as from no spill */
			memset(s0, 0, sizeof(s0));
		lo = w == 1 ? (1ull << 32) - len / 2 : (uint64_t)rnd() << 8;
		if (lo + len > (1ull << 32))
			lo = (1ull << 32) - len;
		if (kr_spill_price(r, &a, &b, lo, lo + len, &p))
			ok = 0;
		else
			ok = brute(r, &a, &b, lo, lo + len, &p);
		kr_spill_price_free(&p);
	}
	CHECK(ok, "exact price = brute force over every key of 12 windows of 2^22 keys (random "
	      "up/down, spill before/after)");
	kr_ring_free(r);
}

static void whole(void)
{
	struct kr_ring *r = ring(40);
	uint8_t up[NB] = { 1, 1, 1, 0, 1, 1 };
	uint16_t s0[NB] = {}, s1[NB] = { 16384, 0, 32768, 0, 0, 60000 };
	struct kr_spill_side a = { up, s0 }, b = { up, s1 };
	struct kr_spill_price p;
	uint64_t sum = 0, moved = 0, n = 200000;

	if (!r || kr_spill_price(r, &a, &b, 0, 1ull << 32, &p)) {
		CHECK(0, "priced");
		return;
	}
	for (int i = 0; i <= NB; i++)
		sum += p.after[i];
	CHECK(sum == (1ull << 32) && p.keys == (1ull << 32), "the whole key space is priced");
	CHECK(p.after[3] == 0 && p.before[3] == 0 && p.after[NB] == 0,
	      "a down backend gets no key, every key a route");
	for (uint64_t k = 0; k < n; k++) {
		uint32_t h = rnd();

		moved += kr_spill_route(r, &a, h) != kr_spill_route(r, &b, h);
	}
	double ex = (double)p.moved / 4294967296.0, got = (double)moved / n;
	double sd = __builtin_sqrt(ex * (1 - ex) / n);

	DIAG("moved: exact %.6f, sample %.6f (sd %.6f)", ex, got, sd);
	CHECK(got > ex - 6 * sd && got < ex + 6 * sd, "a random sample of 200,000 keys agrees "
	      "with the exact share (within 6 standard deviations)");
	/* backends without spill and not after a spilled one on the ring can only gain */
	CHECK(p.lost[1] == 0 && p.lost[4] == 0, "backends whose spill stays 0 lose no key");
	kr_spill_price_free(&p);
	kr_ring_free(r);
}

/* The slot choice (mix32(h) < frac) and the spill choice (spill value < s) of one key are
 * independent: the joint share is the product of the shares. */
static void independent(void)
{
	uint32_t n = 400000, both = 0, mig = 0, sp = 0;
	char k[32];

	for (uint32_t i = 0; i < n; i++) {
		int len = snprintf(k, sizeof(k), "user:%u:session", i * 7919u);
		uint32_t h = kr_key_hash(k, (size_t)len);
		int m = kr_mix32(h) < 0x40000000u, s = kr_spill_hit(h, 0x6000);

		mig += m;
		sp += s;
		both += m && s;
	}
	double pm = (double)mig / n, ps = (double)sp / n, pj = (double)both / n;
	double sd = __builtin_sqrt(pm * ps * (1 - pm * ps) / n);

	DIAG("slot %.4f spill %.4f joint %.5f product %.5f", pm, ps, pj, pm * ps);
	CHECK(pj > pm * ps - 6 * sd && pj < pm * ps + 6 * sd,
	      "slot choice and spill choice independent over 400,000 real-looking keys");
	CHECK(ps > 0.375 - 0.01 && ps < 0.375 + 0.01, "spill 0x6000 takes its share 0.375");
}

int main(void)
{
	floor_counts();
	windows();
	whole();
	independent();
	return tap_done();
}
