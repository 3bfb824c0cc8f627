// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The exact price of a spill change (spill_price.h). */
#include <stdlib.h>
#include <string.h>
#include "kr_datapath_kern_user.h"
#include "spill_price.h"

#define SPILL_MUL	0x9E3779B1u	/* kr_spill_hash() */
typedef unsigned __int128 u128;

/* sum_{i=0}^{n-1} floor((a i + b) / m), the classic recursion (a, b reduced mod m). */
static u128 floor_sum(u128 n, u128 m, u128 a, u128 b)
{
	u128 ans = 0;

	for (;;) {
		if (a >= m) {
			ans += n * (n - 1) / 2 * (a / m);
			a %= m;
		}
		if (b >= m) {
			ans += n * (b / m);
			b %= m;
		}
		u128 y = a * n + b;

		if (y < m)
			return ans;
		n = y / m;
		b = y % m;
		u128 t = m;

		m = a;
		a = t;
	}
}

uint64_t kr_mulmod_count_below(uint64_t n, uint32_t a, uint64_t t)
{
	const u128 m = (u128)1 << 32;

	if (t >= ((uint64_t)1 << 32))
		return n;
	/* [x >= t] = floor((a h + m - t) / m) - floor(a h / m), x = a h mod m */
	return n - (uint64_t)(floor_sum(n, m, a, m - t) - floor_sum(n, m, a, 0));
}

/* keys h in [lo, hi) whose spill value is in [vlo, vhi) (units of 2^-16) */
static uint64_t count(uint64_t lo, uint64_t hi, uint32_t vlo, uint32_t vhi)
{
	uint64_t tl = (uint64_t)vlo << 16, th = (uint64_t)vhi << 16;

	if (lo >= hi || vlo >= vhi)
		return 0;
	return kr_mulmod_count_below(hi, SPILL_MUL, th) - kr_mulmod_count_below(lo, SPILL_MUL, th) -
	       (kr_mulmod_count_below(hi, SPILL_MUL, tl) - kr_mulmod_count_below(lo, SPILL_MUL, tl));
}

/* The destinations of point i as steps of the spill value: dest[k] for v in
 * [thr[k], thr[k+1]) (thr[0] = 0, thr[n] = 65536).  Returns n. */
#define MAX_STEPS (KR_MAX_WALK + 2)
static int steps(const struct kr_ring *r, const struct kr_spill_side *s, uint32_t i,
		 uint32_t *thr, uint32_t *dest)
{
	uint32_t np = r->npoints, nb = r->nbackends, last = UINT32_MAX, first = nb;
	uint32_t lim = np - 1 < KR_MAX_WALK ? np - 1 : KR_MAX_WALK, cap = 65536;
	/* walking on, a value v below every fraction so far reaches the next backend: the
	 * backend b met at fraction s_b takes v in [s_b, cap), cap = min of those before */
	uint32_t tv[MAX_STEPS], tb[MAX_STEPS];
	int n = 0;

	for (uint32_t k = 0; k <= lim && cap > 0; k++) {
		uint32_t b = r->backend[(i + k) % np], sp;

		if (b == last)
			continue;
		last = b;
		if (!s->up[b])
			continue;
		if (first == nb)
			first = b;
		sp = s->spill ? s->spill[b] : 0;
		if (sp < cap) {
			tv[n] = sp;
			tb[n++] = b;
			cap = sp;
		}
	}
	/* v in [0, cap): every backend met spills it -> the first up one (or none) */
	thr[0] = 0;
	dest[0] = first;
	int m = cap > 0 ? 1 : 0;

	if (!m)
		dest[0] = tb[n - 1];
	for (int k = n - 1; k >= 0; k--) {	/* ascending thresholds */
		uint32_t hi = k ? tv[k - 1] : 65536;

		if (tv[k] >= hi)
			continue;
		if (m == 0 && tv[k] == 0) {
			dest[0] = tb[k];
			thr[m++] = 0;
			continue;
		}
		thr[m] = tv[k];
		dest[m++] = tb[k];
	}
	thr[m] = 65536;
	return m;
}

uint32_t kr_spill_route(const struct kr_ring *r, const struct kr_spill_side *s, uint32_t h)
{
	uint32_t np = r->npoints, nb = r->nbackends, lo = 0, hi = np, last = UINT32_MAX;
	uint32_t v = (uint32_t)(h * SPILL_MUL) >> 16, first = nb;
	uint32_t lim = np - 1 < KR_MAX_WALK ? np - 1 : KR_MAX_WALK;

	while (lo < hi) {		/* first point >= h */
		uint32_t mid = lo + (hi - lo) / 2;

		if (r->hash[mid] < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == np)
		lo = 0;
	for (uint32_t k = 0; k <= lim; k++) {
		uint32_t b = r->backend[(lo + k) % np];

		if (b == last)
			continue;
		last = b;
		if (!s->up[b])
			continue;
		if (first == nb)
			first = b;
		if (v >= (s->spill ? s->spill[b] : 0))
			return b;
	}
	return first;
}

/* Keys [lo, hi) of one arc (all at point i): before and after, step by step. */
static void price_arc(const struct kr_ring *r, const struct kr_spill_side *a,
		      const struct kr_spill_side *b, uint32_t i, uint64_t lo, uint64_t hi,
		      struct kr_spill_price *p)
{
	uint32_t ta[MAX_STEPS + 1], da[MAX_STEPS], tb[MAX_STEPS + 1], db[MAX_STEPS];
	int na = steps(r, a, i, ta, da), nb = steps(r, b, i, tb, db), x = 0, y = 0;
	uint32_t v = 0;

	while (x < na && y < nb) {
		uint32_t end = ta[x + 1] < tb[y + 1] ? ta[x + 1] : tb[y + 1];
		uint64_t c = count(lo, hi, v, end);

		p->before[da[x]] += c;
		p->after[db[y]] += c;
		if (da[x] != db[y]) {
			p->moved += c;
			p->lost[da[x]] += c;
			p->gained[db[y]] += c;
		}
		v = end;
		x += ta[x + 1] == end;
		y += tb[y + 1] == end;
	}
}

int kr_spill_price(const struct kr_ring *r, const struct kr_spill_side *before,
		   const struct kr_spill_side *after, uint64_t lo, uint64_t hi,
		   struct kr_spill_price *p)
{
	uint32_t nb = r->nbackends, np = r->npoints;

	memset(p, 0, sizeof(*p));
	p->nb = nb;
	p->lost = calloc(nb + 1, sizeof(uint64_t));
	p->gained = calloc(nb + 1, sizeof(uint64_t));
	p->before = calloc(nb + 1, sizeof(uint64_t));
	p->after = calloc(nb + 1, sizeof(uint64_t));
	if (!p->lost || !p->gained || !p->before || !p->after) {
		kr_spill_price_free(p);
		return -1;
	}
	p->keys = hi > lo ? hi - lo : 0;
	if (!np)
		return 0;
	for (uint32_t i = 0; i <= np; i++) {
		/* arc of point i: (hash[i-1], hash[i]]; i == np: past the last point -> 0 */
		uint64_t a = i ? (uint64_t)r->hash[i - 1] + 1 : 0;
		uint64_t e = i < np ? (uint64_t)r->hash[i] + 1 : (1ull << 32);

		a = a < lo ? lo : a;
		e = e > hi ? hi : e;
		if (a < e)
			price_arc(r, before, after, i < np ? i : 0, a, e, p);
	}
	return 0;
}

void kr_spill_price_free(struct kr_spill_price *p)
{
	free(p->lost);
	free(p->gained);
	free(p->before);
	free(p->after);
	memset(p, 0, sizeof(*p));
}
