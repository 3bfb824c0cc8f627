// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The continuum builder: per-backend CRC state, points generated in tie order, LSD radix
 * sort by hash (stable, O(P)), one-pass dedup that keeps the removed points aside.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <zlib.h>
#include "continuum.h"
#include "crc32.h"
#include "util.h"

/* Radix digits: RADIX_PASSES passes of RADIX_BITS over the 32-bit hash.  Byte digits:
 * small histograms, fewest write streams; measured faster here than 3 x 11 or 2 x 16. */
#define RADIX_BITS	8
#define RADIX_PASSES	4
#define RADIX_SIZE	(1u << RADIX_BITS)
#define RADIX_MASK	(RADIX_SIZE - 1)

/* Heap accounting of one build: what it holds now and at most. */
struct acct {
	size_t cur, peak;
};

/* Large buffers: ask for transparent huge pages (THP "madvise" mode), which turns tens of
 * thousands of page faults into a few dozen -- most of the build's system time. */
void kr_hint_huge(void *p, size_t n)
{
	uintptr_t s = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, e = ((uintptr_t)p + n) & ~(uintptr_t)4095;

	if (n >= (4u << 20) && e > s)
		madvise((void *)s, e - s, MADV_HUGEPAGE);
}

static void *acct_alloc(struct acct *a, size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p) {
		kr_hint_huge(p, n);
		a->cur += n;
		if (a->cur > a->peak)
			a->peak = a->cur;
	}
	return p;
}

static void acct_free(struct acct *a, void *p, size_t n)
{
	if (!p)
		return;
	free(p);
	a->cur -= n;
}

/* Shrinks (or grows) p from old to n bytes; on failure p stays valid and is returned. */
static void *acct_realloc(struct acct *a, void *p, size_t old, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		return n <= old ? p : NULL;
	a->cur = a->cur - old + n;
	if (a->cur > a->peak)
		a->peak = a->cur;
	return q;
}


uint32_t kr_key_hash(const void *key, size_t len)
{
	return kr_crc32(key, len);
}

size_t kr_ring_base_string(const struct kr_sockaddr *a, char *buf)
{
	size_t n = kr_ip_format(a, buf);

	buf[n++] = 0;
	return n + (size_t)sprintf(buf + n, "%u", a->port);
}

const char *kr_ring_describe(const struct kr_ring *r, char *buf, size_t len)
{
	if (r->version == KR_RING_V1)
		snprintf(buf, len, "v1");
	else
		snprintf(buf, len, "v2 point_multiple=%u", r->point_multiple);
	return buf;
}

/* ---- checks before anything is allocated ---------------------------------------- */

static int check_params(uint32_t n, uint32_t version, uint32_t *pm, struct kr_err *err)
{
	if (n == 0)
		return kr_errf(err, "ring has no backends");
	if (n > KR_MAX_BACKENDS)
		return kr_errf(err, "too many backends: %u (a ring holds at most %u: the "
			       "backend index is 16 bits)", n, KR_MAX_BACKENDS);
	if (version == KR_RING_V1) {
		if (*pm != 0 && *pm != KR_V1_POINT_MULTIPLE)
			return kr_errf(err, "point_multiple %u: v1 rings always use %u points "
				       "per weight unit (use v2 for another multiple)", *pm,
				       KR_V1_POINT_MULTIPLE);
		*pm = KR_V1_POINT_MULTIPLE;
		return 0;
	}
	if (version != KR_RING_V2)
		return kr_errf(err, "ring version %u: expected 1 (v1) or 2 (v2)", version);
	if (*pm == 0)
		*pm = KR_V2_DEFAULT_POINT_MULTIPLE;
	return 0;
}

/* Point count per backend and in total, in 64 bits, each checked against KR_MAX_POINTS. */
static int count_points(const struct kr_backend_spec *b, uint32_t n, uint32_t pm,
			uint64_t *total, struct kr_err *err)
{
	char s[KR_SOCKADDR_STRLEN];
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t k = (uint64_t)b[i].weight * pm;

		if (k > KR_MAX_POINTS) {
			kr_sockaddr_format(&b[i].addr, s);
			return kr_errf(err, "backend %u (%s): weight %u x point_multiple %u = %" PRIu64
				       " points, more than a ring may hold (%u)", i, s, b[i].weight,
				       pm, k, KR_MAX_POINTS);
		}
		sum += k;
	}
	if (sum > KR_MAX_POINTS)
		return kr_errf(err, "ring too large: %u backends give %" PRIu64 " points in "
			       "total (sum of weight x point_multiple %u), more than a ring may "
			       "hold (%u)", n, sum, pm, KR_MAX_POINTS);
	if (sum == 0)
		return kr_errf(err, "ring has no points: every backend has weight 0");
	*total = sum;
	return 0;
}

/* ---- tie order ---------------------------------------------------------------------- */

static const struct kr_backend_spec *sort_base;

static int by_addr_then_index(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	int c = kr_sockaddr_cmp(&sort_base[a].addr, &sort_base[b].addr);

	return c ? c : (a > b) - (a < b);
}

void kr_ring_tie_order(const struct kr_backend_spec *b, uint32_t n, uint32_t *order)
{
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	sort_base = b;
	qsort(order, n, sizeof(*order), by_addr_then_index);	/* n backends, not points */
}

/* order[] = backend indices sorted by address (v2 tie order); duplicates are an error. */
static int address_order(const struct kr_backend_spec *b, uint32_t n, uint32_t *order,
			 struct kr_err *err)
{
	char s[KR_SOCKADDR_STRLEN];

	kr_ring_tie_order(b, n, order);
	for (uint32_t i = 1; i < n; i++) {
		if (kr_sockaddr_cmp(&b[order[i - 1]].addr, &b[order[i]].addr) == 0) {
			kr_sockaddr_format(&b[order[i]].addr, s);
			return kr_errf(err, "duplicate backend %s (backends %u and %u)", s,
				       order[i - 1], order[i]);
		}
	}
	return 0;
}

/* ---- generation, sort, dedup -------------------------------------------------------- */

struct work {
	uint32_t *h[2];
	uint16_t *b[2];
	uint64_t cap[2];	/* entries of buffers 0 and 1 */
	uint64_t total;
	uint32_t (*cnt)[RADIX_SIZE];	/* [RADIX_PASSES][RADIX_SIZE] */
};

static void generate(struct work *w, const struct kr_backend_spec *b, const uint32_t *order,
		     uint32_t n, uint32_t pm)
{
	uint32_t *h = w->h[0];
	uint16_t *bk = w->b[0];
	char base[KR_SOCKADDR_STRLEN];
	uint64_t k = 0;

	for (uint32_t oi = 0; oi < n; oi++) {
		uint32_t i = order[oi], m = b[i].weight * pm, prev = 0, c;

		if (!m)
			continue;
		c = kr_crc32(base, kr_ring_base_string(&b[i].addr, base));
		for (uint32_t j = 0; j < m; j++, k++) {
			prev = kr_crc32_le32(c, prev);
			h[k] = prev;
			bk[k] = (uint16_t)i;
			for (int d = 0; d < RADIX_PASSES; d++)
				w->cnt[d][(prev >> (d * RADIX_BITS)) & RADIX_MASK]++;
		}
	}
}

/* Counts -> starting positions (base + exclusive prefix sums), in place. */
static void prefix(uint32_t *cnt, uint32_t base)
{
	for (uint32_t i = 0; i < RADIX_SIZE; i++) {
		uint32_t c = cnt[i];

		cnt[i] = base;
		base += c;
	}
}

/* One stable counting pass over [from, to) by the digit at `shift`: pos[] = destinations. */
static void scatter(const uint32_t *hs, const uint16_t *bs, uint32_t *hd, uint16_t *bd,
		    uint64_t from, uint64_t to, int shift, uint32_t *pos)
{
	for (uint64_t i = from; i < to; i++) {
		uint32_t v = hs[i], p = pos[(v >> shift) & RADIX_MASK]++;

		hd[p] = v;
		bd[p] = bs[i];
	}
}

/* LSD radix sort, all passes over the whole array; returns the buffer holding the result. */
static int sort_lsd(struct work *w)
{
	int s = 0;

	for (int d = 0; d < RADIX_PASSES; d++, s = 1 - s) {
		prefix(w->cnt[d], 0);
		scatter(w->h[s], w->b[s], w->h[1 - s], w->b[1 - s], 0, w->total, d * RADIX_BITS,
			w->cnt[d]);
	}
	return s;
}

#define MSD_MIN_POINTS	(1u << 20)	/* below: the two-buffer LSD sort (simpler, as fast) */

_Static_assert(RADIX_BITS * RADIX_PASSES >= 32, "radix passes cover 32 bits");

/* Dedup of buffer s in place; removed points go to r->dups.  Sets npoints, digest. */
static int dedup(struct kr_ring *r, struct work *w, int s, struct acct *a, struct kr_err *err)
{
	uint32_t *h = w->h[s], out = 0, cap = 0, nd = 0;
	uint16_t *bk = w->b[s];
	struct kr_dup *d = NULL;

	for (uint64_t i = 0; i < w->total; i++) {
		if (out && h[i] == h[out - 1]) {
			if (nd == cap) {
				uint32_t nc = cap ? cap * 2 : 64;
				struct kr_dup *q = acct_realloc(a, d, cap * sizeof(*d),
								nc * sizeof(*d));

				if (!q) {
					acct_free(a, d, cap * sizeof(*d));
					return kr_errf(err, "out of memory for duplicates");
				}
				d = q;
				cap = nc;
			}
			d[nd++] = (struct kr_dup){ h[i], bk[i], out - 1 };
			continue;
		}
		h[out] = h[i];
		bk[out] = bk[i];
		out++;
	}
	r->npoints = out;
	r->ndups = nd;
	r->digest = kr_ring_digest_points(h, bk, out);
	r->dups = d;
	return 0;
}

/* The digest is one CRC over 8 bytes per point: 4 independent chains over the 4 quarters
 * (they overlap in the CPU), joined with zlib's crc32_combine(). */
uint32_t kr_ring_digest_points(const uint32_t *hash, const uint16_t *backend, uint32_t n)
{
	uint32_t q = n / 4, c[4] = { 0 }, dg;

	for (uint32_t i = 0; i < q; i++)
		for (uint32_t l = 0; l < 4; l++)
			c[l] = kr_crc32_le32x2(c[l], hash[l * q + i], backend[l * q + i]);
	for (uint32_t i = 4 * q; i < n; i++)	/* the last n % 4 points: quarter 3 */
		c[3] = kr_crc32_le32x2(c[3], hash[i], backend[i]);
	dg = c[0];
	for (uint32_t l = 1; l < 4; l++)
		dg = (uint32_t)crc32_combine(dg, c[l], (z_off_t)(l == 3 ? n - 3 * q : q) * 8);
	return dg;
}

void kr_ring_free(struct kr_ring *r)
{
	if (!r)
		return;
	free(r->hash);
	free(r->backend);
	free(r->dups);
	free(r->backends);
	free(r);
}

static int alloc_buf(struct work *w, int s, uint64_t n, struct acct *a, struct kr_err *err)
{
	w->cap[s] = n;
	w->h[s] = acct_alloc(a, n * sizeof(uint32_t));
	w->b[s] = acct_alloc(a, n * sizeof(uint16_t));
	if (!w->h[s] || !w->b[s])
		return kr_errf(err, "out of memory for %" PRIu64 " points (%" PRIu64 " MiB)", n,
			       n * 6 >> 20);
	return 0;
}

static void free_buf(struct work *w, int s, struct acct *a)
{
	acct_free(a, w->h[s], w->cap[s] * sizeof(uint32_t));
	acct_free(a, w->b[s], w->cap[s] * sizeof(uint16_t));
	w->h[s] = NULL;
	w->b[s] = NULL;
}

static int alloc_cnt(struct work *w, struct acct *a, struct kr_err *err)
{
	w->cnt = acct_alloc(a, sizeof(uint32_t) * RADIX_PASSES * RADIX_SIZE);
	if (!w->cnt)
		return kr_errf(err, "out of memory");
	memset(w->cnt, 0, sizeof(uint32_t) * RADIX_PASSES * RADIX_SIZE);
	return 0;
}

static void free_work(struct work *w, struct acct *a)
{
	free_buf(w, 0, a);
	free_buf(w, 1, a);
	acct_free(a, w->cnt, sizeof(uint32_t) * RADIX_PASSES * RADIX_SIZE);
	w->cnt = NULL;
}

/* Small rings: generate into buffer 0, LSD-sort through buffer 1.  Returns the buffer
 * holding the sorted points, or -1. */
static int build_small(struct kr_ring *r, struct work *w, const struct kr_backend_spec *b,
		       const uint32_t *order, uint32_t n, uint32_t pm, struct acct *a,
		       struct kr_err *err)
{
	uint64_t t1;
	int s;

	if (alloc_buf(w, 0, w->total, a, err) || alloc_buf(w, 1, w->total, a, err) ||
	    alloc_cnt(w, a, err))
		return -1;
	t1 = kr_cpu_ns();
	generate(w, b, order, n, pm);
	r->stats.gen_ns = kr_cpu_ns() - t1;
	t1 = kr_cpu_ns();
	s = sort_lsd(w);
	r->stats.sort_ns = kr_cpu_ns() - t1;
	return s;
}

/* ---- large rings: one point buffer ------------------------------------------------------ */

#define BIG_BITS	12	/* in-bucket digits: 2 x 12 bits below the top byte */
#define BIG_SIZE	(1u << BIG_BITS)

/* Points per top-byte bucket: the chains computed once without storing anything. */
static void count_top(const struct kr_backend_spec *b, const uint32_t *order, uint32_t n,
		      uint32_t pm, uint32_t *cnt)
{
	char base[KR_SOCKADDR_STRLEN];

	for (uint32_t oi = 0; oi < n; oi++) {
		uint32_t i = order[oi], m = b[i].weight * pm, prev = 0, c;

		if (!m)
			continue;
		c = kr_crc32(base, kr_ring_base_string(&b[i].addr, base));
		for (uint32_t j = 0; j < m; j++) {
			prev = kr_crc32_le32(c, prev);
			cnt[prev >> 24]++;
		}
	}
}

/* The chains again, each point written straight to its top-byte bucket (in tie order:
 * stable). */
static void generate_scattered(struct work *w, const struct kr_backend_spec *b,
			       const uint32_t *order, uint32_t n, uint32_t pm, uint32_t *pos)
{
	uint32_t *h = w->h[0];
	uint16_t *bk = w->b[0];
	char base[KR_SOCKADDR_STRLEN];

	for (uint32_t oi = 0; oi < n; oi++) {
		uint32_t i = order[oi], m = b[i].weight * pm, prev = 0, c;

		if (!m)
			continue;
		c = kr_crc32(base, kr_ring_base_string(&b[i].addr, base));
		for (uint32_t j = 0; j < m; j++) {
			uint32_t p;

			prev = kr_crc32_le32(c, prev);
			p = pos[prev >> 24]++;
			h[p] = prev;
			bk[p] = (uint16_t)i;
		}
	}
}

/*
 * The same two passes with LANES chains interleaved (independent CRC chains overlap in the
 * CPU).  Stability does not depend on the interleaving: pass 1 counts points per backend
 * and top byte, so every backend gets its own write position in every bucket, after the
 * backends before it in tie order.  Used up to LANE_MAX_BACKENDS (rows: 1 KiB each).
 */
#define LANES			4
#define LANE_MAX_BACKENDS	4096u

struct lane {
	uint32_t c, prev, left;	/* base CRC state, last hash, points left */
	uint32_t bk;		/* backend index */
	uint32_t *row;		/* its per-top-byte counters / write positions */
};

/* Starts the next backend (tie order) with points on lane ln; 0 when none is left. */
static int lane_next(struct lane *ln, const struct kr_backend_spec *b, const uint32_t *order,
		     uint32_t n, uint32_t pm, uint32_t *next, uint32_t (*rows)[RADIX_SIZE])
{
	char base[KR_SOCKADDR_STRLEN];

	while (*next < n) {
		uint32_t oi = (*next)++, i = order[oi], m = b[i].weight * pm;

		if (!m)
			continue;
		ln->c = kr_crc32(base, kr_ring_base_string(&b[i].addr, base));
		ln->prev = 0;
		ln->left = m;
		ln->bk = i;
		ln->row = rows[oi];
		return 1;
	}
	ln->left = 0;
	return 0;
}

/* Pass 1 (scatter == 0): rows[backend][top]++.  Pass 2: each point to h/bk at
 * rows[backend][top]++ (rows then hold write positions). */
static void lanes_run(struct work *w, const struct kr_backend_spec *b, const uint32_t *order,
		      uint32_t n, uint32_t pm, uint32_t (*rows)[RADIX_SIZE], int scatter)
{
	struct lane L[LANES];
	uint32_t next = 0, *h = w->h[0];
	uint16_t *bk = w->b[0];
	int active = 0;

	for (int l = 0; l < LANES; l++)
		active += lane_next(&L[l], b, order, n, pm, &next, rows);
	while (active == LANES) {
		uint32_t steps = L[0].left;

		for (int l = 1; l < LANES; l++)
			if (L[l].left < steps)
				steps = L[l].left;
		for (uint32_t j = 0; j < steps; j++) {
			for (int l = 0; l < LANES; l++) {	/* unrolled by the compiler */
				uint32_t v = kr_crc32_le32(L[l].c, L[l].prev);

				L[l].prev = v;
				if (scatter) {
					uint32_t p = L[l].row[v >> 24]++;

					h[p] = v;
					bk[p] = (uint16_t)L[l].bk;
				} else {
					L[l].row[v >> 24]++;
				}
			}
		}
		for (int l = 0; l < LANES; l++) {
			L[l].left -= steps;
			if (!L[l].left && !lane_next(&L[l], b, order, n, pm, &next, rows))
				active--;
		}
	}
	/* the last few backends: one chain at a time */
	for (int l = 0; l < LANES; l++) {
		for (; L[l].left; L[l].left--) {
			uint32_t v = kr_crc32_le32(L[l].c, L[l].prev);

			L[l].prev = v;
			if (scatter) {
				uint32_t p = L[l].row[v >> 24]++;

				h[p] = v;
				bk[p] = (uint16_t)L[l].bk;
			} else {
				L[l].row[v >> 24]++;
			}
		}
	}
}

/* Per-backend counts -> per-backend write positions; start[] = bucket starts. */
static void lanes_positions(uint32_t (*rows)[RADIX_SIZE], uint32_t n, uint32_t *start,
			    uint32_t *maxb)
{
	uint32_t sum = 0;

	*maxb = 0;
	for (uint32_t t = 0; t < RADIX_SIZE; t++) {
		uint32_t first = sum;

		start[t] = sum;
		for (uint32_t oi = 0; oi < n; oi++) {
			uint32_t c = rows[oi][t];

			rows[oi][t] = sum;
			sum += c;
		}
		if (sum - first > *maxb)
			*maxb = sum - first;
	}
}

/* One stable pass over [0, n) by a 12-bit digit; pos[] = destinations. */
static void scatter12(const uint32_t *hs, const uint16_t *bs, uint32_t *hd, uint16_t *bd,
		      uint32_t n, int shift, uint32_t *pos)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t v = hs[i], p = pos[(v >> shift) & (BIG_SIZE - 1)]++;

		hd[p] = v;
		bd[p] = bs[i];
	}
}

/* Sorts one top-byte bucket (cache-sized) by its low 24 bits: through the small buffer 1
 * and back, two stable passes. */
static void sort_bucket(struct work *w, uint32_t lo, uint32_t hi, uint32_t (*c)[BIG_SIZE])
{
	uint32_t *h = w->h[0] + lo, n = hi - lo, sum0 = 0, sum1 = 0;
	uint16_t *bk = w->b[0] + lo;

	memset(c, 0, 2 * sizeof(c[0]));
	for (uint32_t i = 0; i < n; i++) {
		c[0][h[i] & (BIG_SIZE - 1)]++;
		c[1][(h[i] >> BIG_BITS) & (BIG_SIZE - 1)]++;
	}
	for (uint32_t i = 0; i < BIG_SIZE; i++) {
		uint32_t x = c[0][i], y = c[1][i];

		c[0][i] = sum0;
		c[1][i] = sum1;
		sum0 += x;
		sum1 += y;
	}
	scatter12(h, bk, w->h[1], w->b[1], n, 0, c[0]);
	scatter12(w->h[1], w->b[1], h, bk, n, BIG_BITS, c[1]);
}

/*
 * Large rings: the chains are computed twice -- once to count the points per top byte,
 * once to write each point straight into its top-byte bucket -- so the only full-size
 * buffer is the ring itself (6 bytes per point); each of the 256 buckets is then sorted in
 * cache through a bucket-sized buffer.  Half the memory and one pass over main memory,
 * for one extra computation of the chains (4 bytes of CRC per point).  Returns 0 (the
 * buffer holding the points), or -1.
 */
static int build_large(struct kr_ring *r, struct work *w, const struct kr_backend_spec *b,
		       const uint32_t *order, uint32_t n, uint32_t pm, struct acct *a,
		       struct kr_err *err)
{
	uint32_t start[RADIX_SIZE + 1], pos[RADIX_SIZE] = { 0 }, maxb = 0, (*c)[BIG_SIZE];
	uint32_t (*rows)[RADIX_SIZE] = NULL;
	size_t rows_bytes = (size_t)n * sizeof(*rows);
	uint64_t t1 = kr_cpu_ns();
	int ret = -1;

	c = acct_alloc(a, 2 * sizeof(*c));
	if (n <= LANE_MAX_BACKENDS)
		rows = acct_alloc(a, rows_bytes);
	if (!c || (n <= LANE_MAX_BACKENDS && !rows)) {
		kr_errf(err, "out of memory");
		goto out;
	}
	if (rows) {
		memset(rows, 0, rows_bytes);
		lanes_run(w, b, order, n, pm, rows, 0);
		lanes_positions(rows, n, start, &maxb);
	} else {
		count_top(b, order, n, pm, pos);
		for (uint32_t k = 0, sum = 0; k < RADIX_SIZE; k++) {
			uint32_t x = pos[k];

			start[k] = pos[k] = sum;
			sum += x;
			if (x > maxb)
				maxb = x;
		}
	}
	start[RADIX_SIZE] = (uint32_t)w->total;
	if (alloc_buf(w, 0, w->total, a, err) || alloc_buf(w, 1, maxb, a, err))
		goto out;
	if (rows)
		lanes_run(w, b, order, n, pm, rows, 1);
	else
		generate_scattered(w, b, order, n, pm, pos);
	r->stats.gen_ns = kr_cpu_ns() - t1;
	t1 = kr_cpu_ns();
	for (uint32_t k = 0; k < RADIX_SIZE; k++)
		sort_bucket(w, start[k], start[k + 1], c);
	r->stats.sort_ns = kr_cpu_ns() - t1;
	ret = 0;
out:
	acct_free(a, rows, rows_bytes);
	acct_free(a, c, 2 * sizeof(*c));
	return ret;
}

/* Frees the other buffer, dedups buffer s and hands it over to the ring (shrunk). */
static int keep(struct kr_ring *r, struct work *w, int s, struct acct *a, struct kr_err *err)
{
	uint64_t t1 = kr_cpu_ns();

	free_buf(w, 1 - s, a);
	if (dedup(r, w, s, a, err))
		return -1;
	r->stats.dedup_ns = kr_cpu_ns() - t1;
	r->hash = acct_realloc(a, w->h[s], w->cap[s] * sizeof(uint32_t),
			       (size_t)r->npoints * sizeof(uint32_t));
	w->h[s] = NULL;
	r->backend = acct_realloc(a, w->b[s], w->cap[s] * sizeof(uint16_t),
				  (size_t)r->npoints * sizeof(uint16_t));
	w->b[s] = NULL;
	return 0;
}

int kr_ring_build(struct kr_ring **out, const struct kr_backend_spec *b, uint32_t n,
		  uint32_t version, uint32_t pm, struct kr_err *err)
{
	struct work w = { 0 };
	struct acct a = { 0 };
	struct kr_ring *r = NULL;
	uint32_t *order = NULL;
	uint64_t t0 = kr_cpu_ns();
	int ret = -1, s;

	*out = NULL;
	if (check_params(n, version, &pm, err) || count_points(b, n, pm, &w.total, err))
		return -1;
	r = calloc(1, sizeof(*r));
	order = acct_alloc(&a, n * sizeof(*order));
	if (r)
		r->backends = malloc(n * sizeof(*b));
	if (!r || !order || !r->backends) {
		kr_errf(err, "out of memory");
		goto cleanup;
	}
	memcpy(r->backends, b, n * sizeof(*b));
	r->version = version;
	r->point_multiple = pm;
	r->nbackends = n;
	r->stats.generated = w.total;
	if (address_order(b, n, order, err))
		goto cleanup;
	if (version == KR_RING_V1)
		for (uint32_t i = 0; i < n; i++)
			order[i] = i;
	s = w.total >= MSD_MIN_POINTS ? build_large(r, &w, b, order, n, pm, &a, err)
				       : build_small(r, &w, b, order, n, pm, &a, err);
	if (s < 0 || keep(r, &w, s, &a, err))
		goto cleanup;
	r->stats.peak_bytes = a.peak;
	r->stats.build_ns = kr_cpu_ns() - t0;
	*out = r;
	r = NULL;
	ret = 0;
cleanup:
	free_work(&w, &a);
	acct_free(&a, order, n * sizeof(*order));
	kr_ring_free(r);
	return ret;
}

/* ---- lookups -------------------------------------------------------------------------- */

uint32_t kr_ring_lower_bound(const struct kr_ring *r, uint32_t h)
{
	uint32_t lo = 0, hi = r->npoints;

	while (lo < hi) {
		uint32_t mid = lo + ((hi - lo) >> 1);

		if (r->hash[mid] < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo >= r->npoints ? 0 : lo;
}

void kr_ring_walk(const struct kr_ring *r, uint32_t i, uint32_t *out, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		i = kr_ring_next(r, i);
		out[k] = r->backend[i];
	}
}

/* First dup whose winner is >= i. */
static uint32_t first_dup(const struct kr_ring *r, uint32_t i)
{
	uint32_t lo = 0, hi = r->ndups;

	while (lo < hi) {
		uint32_t mid = lo + ((hi - lo) >> 1);

		if (r->dups[mid].winner < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int kr_ring_route(const struct kr_ring *r, uint32_t h, const uint8_t *skip,
		  uint32_t *ring_index, uint32_t *backend)
{
	uint32_t i = kr_ring_lower_bound(r, h);

	for (uint32_t step = 0; step < r->npoints; step++, i = kr_ring_next(r, i)) {
		if (!skip || !skip[r->backend[i]]) {
			*ring_index = i;
			*backend = r->backend[i];
			return 0;
		}
		for (uint32_t d = first_dup(r, i); d < r->ndups && r->dups[d].winner == i; d++) {
			if (!skip[r->dups[d].backend]) {
				*ring_index = i;
				*backend = r->dups[d].backend;
				return 0;
			}
		}
	}
	return -1;
}
