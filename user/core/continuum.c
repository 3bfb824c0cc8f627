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
	/* dedup: points kept so far, and the removed ones (dcap entries allocated) */
	uint32_t out, ndups, dcap;
	struct kr_dup *dups;
	uint32_t digest;
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

static int dup_add(struct work *w, uint32_t h, uint16_t b, struct acct *a, struct kr_err *err)
{
	if (w->ndups == w->dcap) {
		uint32_t nc = w->dcap ? w->dcap * 2 : 64;
		struct kr_dup *q = acct_realloc(a, w->dups, w->dcap * sizeof(*q), nc * sizeof(*q));

		if (!q)
			return kr_errf(err, "out of memory for duplicates");
		w->dups = q;
		w->dcap = nc;
	}
	w->dups[w->ndups++] = (struct kr_dup){ h, b, w->out - 1 };
	return 0;
}

/* bk[0, n) (one hash) in tie order: rank[backend] = position in tie order.  Insertion
 * sort: stable, and such runs are short and rare. */
static void tie_sort(uint16_t *bk, uint64_t n, const uint32_t *rank)
{
	for (uint64_t k = 1; k < n; k++) {
		uint16_t v = bk[k];
		uint64_t j = k;

		for (; j > 0 && rank[bk[j - 1]] > rank[v]; j--)
			bk[j] = bk[j - 1];
		bk[j] = v;
	}
}

/*
 * Dedup of points [lo, hi) of buffer s (sorted by hash), moved down to w->out: of a run of
 * equal hashes the first (in tie order) is kept, the others go to w->dups in tie order.
 * rank == NULL: the runs are in tie order already; else they are put in it first.
 */
static int dedup_range(struct work *w, int s, uint64_t lo, uint64_t hi, const uint32_t *rank,
		       struct acct *a, struct kr_err *err)
{
	uint32_t *h = w->h[s];
	uint16_t *bk = w->b[s];
	uint64_t i = lo;

	while (i < hi) {
		uint64_t j = i, e;

		while (j + 1 < hi && h[j + 1] != h[j])	/* [i, j): no equal successor */
			j++;
		if (j + 1 >= hi)
			j = hi;
		if (w->out != i) {	/* out <= i: moved down past earlier duplicates */
			memmove(h + w->out, h + i, (j - i) * sizeof(*h));
			memmove(bk + w->out, bk + i, (j - i) * sizeof(*bk));
		}
		w->out += (uint32_t)(j - i);
		if (j == hi)
			break;
		for (e = j + 1; e + 1 < hi && h[e + 1] == h[j]; e++)
			;
		if (rank)	/* a run [j, e] of one hash */
			tie_sort(bk + j, e - j + 1, rank);
		h[w->out] = h[j];
		bk[w->out] = bk[j];
		w->out++;
		for (uint64_t k = j + 1; k <= e; k++)
			if (dup_add(w, h[j], bk[k], a, err))
				return -1;
		i = e + 1;
	}
	return 0;
}

/* One point of the digest on the inverted CRC register s (s = ~crc): the 8 bytes
 * (hash le32, backend le32) in one slice-by-8 step; the backend's two high bytes are 0,
 * and the tables are linear, so their lookups (0) are left out. */
static inline uint32_t digest_step(uint32_t s, uint32_t h, uint16_t b)
{
	uint32_t y = s ^ h;

	return kr_crc32_tab[7][y & 0xff] ^ kr_crc32_tab[6][(y >> 8) & 0xff] ^
	       kr_crc32_tab[5][(y >> 16) & 0xff] ^ kr_crc32_tab[4][y >> 24] ^
	       kr_crc32_tab[3][b & 0xff] ^ kr_crc32_tab[2][b >> 8];
}

/* The digest is one CRC over 8 bytes per point: 8 independent chains over 8 equal parts
 * (they overlap in the CPU; plain variables, not an array the compiler would vectorize
 * into shuffles), joined with zlib's crc32_combine(). */
uint32_t kr_ring_digest_points_table(const uint32_t *hash, const uint16_t *backend, uint32_t n)
{
	uint32_t q = n / 8, s0 = ~0u, s1 = ~0u, s2 = ~0u, s3 = ~0u, s4 = ~0u, s5 = ~0u;
	uint32_t s6 = ~0u, s7 = ~0u, c[8], dg;

	for (uint32_t i = 0; i < q; i++) {
		s0 = digest_step(s0, hash[i], backend[i]);
		s1 = digest_step(s1, hash[q + i], backend[q + i]);
		s2 = digest_step(s2, hash[2 * q + i], backend[2 * q + i]);
		s3 = digest_step(s3, hash[3 * q + i], backend[3 * q + i]);
		s4 = digest_step(s4, hash[4 * q + i], backend[4 * q + i]);
		s5 = digest_step(s5, hash[5 * q + i], backend[5 * q + i]);
		s6 = digest_step(s6, hash[6 * q + i], backend[6 * q + i]);
		s7 = digest_step(s7, hash[7 * q + i], backend[7 * q + i]);
	}
	for (uint32_t i = 8 * q; i < n; i++)	/* the last n % 8 points: part 7 */
		s7 = digest_step(s7, hash[i], backend[i]);
	c[0] = ~s0, c[1] = ~s1, c[2] = ~s2, c[3] = ~s3;
	c[4] = ~s4, c[5] = ~s5, c[6] = ~s6, c[7] = ~s7;
	dg = c[0];
	for (uint32_t l = 1; l < 8; l++)
		dg = (uint32_t)crc32_combine(dg, c[l], (z_off_t)(l == 7 ? n - 7 * q : q) * 8);
	return dg;
}

/* KR_PORTABLE: the table digest only, as on other architectures (to build and test that
 * path on x86-64 too; it also leaves out the GFNI chains above). */
#if defined(__x86_64__) && !defined(KR_PORTABLE)
#include <immintrin.h>

/*
 * The digest by folding (carry-less multiplication), 16 bytes = 2 points per 128-bit
 * block, 4 blocks folded in parallel.  Reflected CRC-32: a 128-bit block D bits before
 * the end of the data contributes lo * x^(D+32) + hi * x^(D-32) (mod P) -- the constants
 * below are x^e mod P, bit-reflected and shifted left by one (33 bits): e = 544 and 480
 * fold 4 blocks ahead (D = 512), e = 160 and 96 one block (D = 128).  What is left, one
 * block, is run through the tables from register 0, then any last odd point.
 */
#define CLMUL_X544	0x154442bd4ull
#define CLMUL_X480	0x1c6e41596ull
#define CLMUL_X160	0x1751997d0ull
#define CLMUL_X96	0x0ccaa009eull

__attribute__((target("pclmul,sse4.1")))
static inline __m128i clmul_block(const uint32_t *h, const uint16_t *b)
{
	uint32_t b2;
	__m128i hh = _mm_loadl_epi64((const __m128i *)h);	/* h0 h1 */

	memcpy(&b2, b, sizeof(b2));
	return _mm_unpacklo_epi32(hh, _mm_cvtepu16_epi32(_mm_cvtsi32_si128((int)b2)));
}

__attribute__((target("pclmul,sse4.1")))
static inline __m128i clmul_fold(__m128i x, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

/* n >= 8. */
__attribute__((target("pclmul,sse4.1")))
static uint32_t digest_clmul(const uint32_t *h, const uint16_t *b, uint32_t n)
{
	const __m128i k4 = _mm_set_epi64x((long long)CLMUL_X480, (long long)CLMUL_X544);
	const __m128i k1 = _mm_set_epi64x((long long)CLMUL_X96, (long long)CLMUL_X160);
	__m128i x0, x1, x2, x3;
	uint32_t i, w[4], c;

	x0 = _mm_xor_si128(clmul_block(h, b), _mm_cvtsi32_si128(-1));	/* initial ~0 */
	x1 = clmul_block(h + 2, b + 2);
	x2 = clmul_block(h + 4, b + 4);
	x3 = clmul_block(h + 6, b + 6);
	for (i = 8; i + 8 <= n; i += 8) {
		x0 = _mm_xor_si128(clmul_fold(x0, k4), clmul_block(h + i, b + i));
		x1 = _mm_xor_si128(clmul_fold(x1, k4), clmul_block(h + i + 2, b + i + 2));
		x2 = _mm_xor_si128(clmul_fold(x2, k4), clmul_block(h + i + 4, b + i + 4));
		x3 = _mm_xor_si128(clmul_fold(x3, k4), clmul_block(h + i + 6, b + i + 6));
	}
	x0 = _mm_xor_si128(clmul_fold(x0, k1), x1);
	x0 = _mm_xor_si128(clmul_fold(x0, k1), x2);
	x0 = _mm_xor_si128(clmul_fold(x0, k1), x3);
	for (; i + 2 <= n; i += 2)
		x0 = _mm_xor_si128(clmul_fold(x0, k1), clmul_block(h + i, b + i));
	_mm_storeu_si128((__m128i *)w, x0);
	c = kr_crc32_le32x2(~0u, w[0], w[1]);	/* crc ~0 = register 0 */
	c = kr_crc32_le32x2(c, w[2], w[3]);
	if (i < n)
		c = kr_crc32_le32x2(c, h[i], b[i]);
	return c;
}

static int have_clmul(void)
{
	__builtin_cpu_init();	/* idempotent; the checks below only read what it found */
	return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

uint32_t kr_ring_digest_points(const uint32_t *hash, const uint16_t *backend, uint32_t n)
{
	if (n >= 8 && have_clmul())
		return digest_clmul(hash, backend, n);
	return kr_ring_digest_points_table(hash, backend, n);
}
#else
uint32_t kr_ring_digest_points(const uint32_t *hash, const uint16_t *backend, uint32_t n)
{
	return kr_ring_digest_points_table(hash, backend, n);
}
#endif

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
	acct_free(a, w->dups, w->dcap * sizeof(*w->dups));
	w->dups = NULL;
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
	t1 = kr_cpu_ns();
	free_buf(w, 1 - s, a);
	if (dedup_range(w, s, 0, w->total, NULL, a, err))
		return -1;
	w->digest = kr_ring_digest_points(w->h[s], w->b[s], w->out);
	r->stats.dedup_ns = kr_cpu_ns() - t1;
	return s;
}

/* ---- large rings: one point buffer ------------------------------------------------------ */

#define TOP_BITS	8	/* buckets: the top byte of the hash */
#define TOP_SIZE	(1u << TOP_BITS)
#define BIG_BITS	((32 - TOP_BITS) / 2)	/* in-bucket digits: 2 x 12 bits below */
#define BIG_SIZE	(1u << BIG_BITS)
_Static_assert(TOP_BITS + 2 * BIG_BITS == 32, "digits cover 32 bits");

/*
 * The chains, LANES backends at a time (independent chains overlap in the CPU).  A chain
 * step is affine over GF(2): kr_crc32_le32(c, x) = ~T(~c ^ x) = T(x) ^ a, where T is the
 * (linear) 4-byte table map and a = ~T(~c) is fixed per backend -- 4 table lookups and 4
 * XORs a point, the chain values in registers.
 *
 * Pass 1 counts the points per top byte.  Pass 2 computes BLOCK points of every lane into
 * a small stage, then writes them lane after lane to their top-byte buckets: the 256
 * write positions only move forward, so the stores go to 256 sequential streams.  Within
 * a bucket the points of one backend keep their chain order, but points of different
 * backends come in block order, not tie order: that only matters for equal hashes, which
 * dedup_range() puts back in tie order (by rank) after the bucket is sorted.
 */
#define LANES	4
#define BLOCK	256

static inline uint32_t crc_T(uint32_t x)
{
	return kr_crc32_tab[3][x & 0xff] ^ kr_crc32_tab[2][(x >> 8) & 0xff] ^
	       kr_crc32_tab[1][(x >> 16) & 0xff] ^ kr_crc32_tab[0][x >> 24];
}

struct lanes {
	uint32_t x[LANES];	/* last hash */
	uint32_t a[LANES];	/* chain constant: next hash = crc_T(x) ^ a */
	uint32_t left[LANES];	/* points left */
	uint16_t bk[LANES];	/* backend index */
	uint32_t next;		/* next backend, in tie order */
};

/* Starts the next backend (tie order) with points on lane l; 0 when none is left. */
static int lane_next(struct lanes *L, int l, const struct kr_backend_spec *b,
		     const uint32_t *order, uint32_t n, uint32_t pm)
{
	char base[KR_SOCKADDR_STRLEN];

	while (L->next < n) {
		uint32_t i = order[L->next++], m = b[i].weight * pm;

		if (!m)
			continue;
		/* kr_crc32_le32(c, x) = ~crc_T(~c ^ x) = crc_T(x) ^ ~crc_T(~c) */
		L->a[l] = ~crc_T(~kr_crc32(base, kr_ring_base_string(&b[i].addr, base)));
		L->x[l] = 0;
		L->left[l] = m;
		L->bk[l] = (uint16_t)i;
		return 1;
	}
	L->left[l] = 0;
	return 0;
}

/* Point v of backend b to the next position of its top-byte bucket (pass 2). */
static inline void put(uint32_t *h, uint16_t *bk, uint32_t *pos, uint32_t v, uint16_t b)
{
	uint32_t p = pos[v >> (32 - TOP_BITS)]++;

	h[p] = v;
	bk[p] = b;
}

/* The next `steps` points of every lane into stage[lane][0, steps).  The lanes in plain
 * variables: an array here gets vectorized into lane shuffles that serialize the chains. */
static inline void chains_block(struct lanes *L, uint32_t steps, uint32_t (*stage)[BLOCK])
{
	uint32_t x0 = L->x[0], x1 = L->x[1], x2 = L->x[2], x3 = L->x[3];
	const uint32_t a0 = L->a[0], a1 = L->a[1], a2 = L->a[2], a3 = L->a[3];

	_Static_assert(LANES == 4, "chains_block() writes out 4 lanes");
	for (uint32_t j = 0; j < steps; j++) {
		x0 = crc_T(x0) ^ a0;
		x1 = crc_T(x1) ^ a1;
		x2 = crc_T(x2) ^ a2;
		x3 = crc_T(x3) ^ a3;
		stage[0][j] = x0;
		stage[1][j] = x1;
		stage[2][j] = x2;
		stage[3][j] = x3;
	}
	L->x[0] = x0;
	L->x[1] = x1;
	L->x[2] = x2;
	L->x[3] = x3;
}

/* The same, counting the points per lane and top byte instead. */
static inline void chains_count(struct lanes *L, uint32_t steps, uint32_t (*cnt)[TOP_SIZE])
{
	uint32_t x0 = L->x[0], x1 = L->x[1], x2 = L->x[2], x3 = L->x[3];
	const uint32_t a0 = L->a[0], a1 = L->a[1], a2 = L->a[2], a3 = L->a[3];

	for (uint32_t j = 0; j < steps; j++) {
		x0 = crc_T(x0) ^ a0;
		x1 = crc_T(x1) ^ a1;
		x2 = crc_T(x2) ^ a2;
		x3 = crc_T(x3) ^ a3;
		cnt[0][x0 >> (32 - TOP_BITS)]++;
		cnt[1][x1 >> (32 - TOP_BITS)]++;
		cnt[2][x2 >> (32 - TOP_BITS)]++;
		cnt[3][x3 >> (32 - TOP_BITS)]++;
	}
	L->x[0] = x0;
	L->x[1] = x1;
	L->x[2] = x2;
	L->x[3] = x3;
}

/* Pass 1 (scatter == 0): cnt[lane][top]++ (the caller sums the lanes).  Pass 2: every
 * point to h/bk at pos[top]++. */
static inline __attribute__((always_inline))
void chains_pass(struct work *w, const struct kr_backend_spec *b, const uint32_t *order,
		 uint32_t n, uint32_t pm, uint32_t (*cnt)[TOP_SIZE], uint32_t *pos, int scatter)
{
	uint32_t *h = w->h[0], stage[LANES][BLOCK];
	uint16_t *bk = w->b[0];
	struct lanes L = { .next = 0 };
	int active = 0;

	for (int l = 0; l < LANES; l++)
		active += lane_next(&L, l, b, order, n, pm);
	while (active == LANES) {
		uint32_t steps = BLOCK;

		for (int l = 0; l < LANES; l++)
			if (L.left[l] < steps)
				steps = L.left[l];
		if (scatter)
			chains_block(&L, steps, stage);
		else
			chains_count(&L, steps, cnt);
		for (int l = 0; l < LANES; l++) {
			if (scatter)
				for (uint32_t j = 0; j < steps; j++)
					put(h, bk, pos, stage[l][j], L.bk[l]);
			L.left[l] -= steps;
			if (!L.left[l] && !lane_next(&L, l, b, order, n, pm))
				active--;
		}
	}
	/* the last few backends: one chain at a time */
	for (int l = 0; l < LANES; l++) {
		uint32_t x = L.x[l], a = L.a[l];

		for (; L.left[l]; L.left[l]--) {
			x = crc_T(x) ^ a;
			if (scatter)
				put(h, bk, pos, x, L.bk[l]);
			else
				cnt[0][x >> (32 - TOP_BITS)]++;
		}
	}
}

#if defined(__x86_64__) && !defined(KR_PORTABLE)
/*
 * The same passes, 64 chains at a time with GFNI on AVX-512 (checked at run time).  The
 * 64 chain values are kept byte-sliced: zmm register P_k holds byte k of every chain.
 * T is linear, so byte o of T(x) is the XOR over k of an 8x8 bit matrix M[o][k] applied to
 * byte k of x -- one GF2P8AFFINEQB per (o, k) for all 64 chains: 16 of them, 12 + 4 XORs
 * (the chain constants) a step.  Each step's values go to a stage (pass 1: the top bytes;
 * pass 2: the values, transposed back to 32 bits), from which every chain's points are
 * counted or scattered chain after chain as above.  Lanes without a backend left compute
 * values nobody reads.
 */
#define GLANES	64
#define GBLOCK	64	/* steps between two scatters: a 16 KiB stage */
_Static_assert(TOP_BITS == 8, "pass 1 counts the top byte plane");

struct glanes {
	uint8_t x[4][GLANES];	/* byte k of each chain's last hash */
	uint8_t a[4][GLANES];	/* byte k of each chain's constant */
	uint32_t left[GLANES];
	uint16_t bk[GLANES];
	uint32_t next;
};

static int have_gfni(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("gfni") && __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512bw");
}

/* m[o][k]: byte k of x -> its part of byte o of T(x), as GF2P8AFFINEQB wants it (row i,
 * the input bits of output bit i, in byte 7 - i). */
static void gf_matrices(uint64_t m[4][4])
{
	for (int o = 0; o < 4; o++) {
		for (int k = 0; k < 4; k++) {
			uint64_t q = 0;

			for (int i = 0; i < 8; i++) {
				uint64_t row = 0;

				for (int j = 0; j < 8; j++)
					row |= (uint64_t)((kr_crc32_tab[3 - k][1u << j] >>
							   (8 * o + i)) & 1) << j;
				q |= row << (8 * (7 - i));
			}
			m[o][k] = q;
		}
	}
}

static int glane_next(struct glanes *L, int l, const struct kr_backend_spec *b,
		      const uint32_t *order, uint32_t n, uint32_t pm)
{
	char base[KR_SOCKADDR_STRLEN];

	while (L->next < n) {
		uint32_t i = order[L->next++], m = b[i].weight * pm, a;

		if (!m)
			continue;
		a = ~crc_T(~kr_crc32(base, kr_ring_base_string(&b[i].addr, base)));
		for (int k = 0; k < 4; k++) {
			L->x[k][l] = 0;
			L->a[k][l] = (uint8_t)(a >> (8 * k));
		}
		L->left[l] = m;
		L->bk[l] = (uint16_t)i;
		return 1;
	}
	L->left[l] = 0;
	return 0;
}

/* Chain c of the stage row: the transpose below leaves it at this position. */
static inline uint32_t gf_slot(uint32_t c)
{
	return 16 * ((c >> 2) & 3) + 4 * (c >> 4) + (c & 3);
}

/* `steps` steps of all 64 chains: top[j] = the top bytes (pass 1), or stage[j] = the
 * values at gf_slot() positions (pass 2). */
__attribute__((target("gfni,avx512f,avx512bw")))
static void gf_block(struct glanes *L, uint32_t steps, const uint64_t m[4][4],
		     uint8_t (*top)[GLANES], uint32_t (*stage)[GLANES])
{
	__m512i p0 = _mm512_loadu_si512(L->x[0]), p1 = _mm512_loadu_si512(L->x[1]);
	__m512i p2 = _mm512_loadu_si512(L->x[2]), p3 = _mm512_loadu_si512(L->x[3]);
	const __m512i a0 = _mm512_loadu_si512(L->a[0]), a1 = _mm512_loadu_si512(L->a[1]);
	const __m512i a2 = _mm512_loadu_si512(L->a[2]), a3 = _mm512_loadu_si512(L->a[3]);
	__m512i M[4][4];

	for (int o = 0; o < 4; o++)
		for (int k = 0; k < 4; k++)
			M[o][k] = _mm512_set1_epi64((long long)m[o][k]);
#define AFF(x, o, k) _mm512_gf2p8affine_epi64_epi8((x), M[o][k], 0)
#define BYTE_O(o, a) _mm512_xor_si512(_mm512_xor_si512(AFF(p0, o, 0), AFF(p1, o, 1)), \
			_mm512_xor_si512(_mm512_xor_si512(AFF(p2, o, 2), AFF(p3, o, 3)), (a)))
	for (uint32_t j = 0; j < steps; j++) {
		__m512i q0 = BYTE_O(0, a0), q1 = BYTE_O(1, a1), q2 = BYTE_O(2, a2);
		__m512i q3 = BYTE_O(3, a3);

		p0 = q0;
		p1 = q1;
		p2 = q2;
		p3 = q3;
		if (top) {
			_mm512_storeu_si512(top[j], p3);
		} else {
			__m512i lo01 = _mm512_unpacklo_epi8(p0, p1), hi01 = _mm512_unpackhi_epi8(p0, p1);
			__m512i lo23 = _mm512_unpacklo_epi8(p2, p3), hi23 = _mm512_unpackhi_epi8(p2, p3);

			_mm512_storeu_si512(stage[j], _mm512_unpacklo_epi16(lo01, lo23));
			_mm512_storeu_si512(stage[j] + 16, _mm512_unpackhi_epi16(lo01, lo23));
			_mm512_storeu_si512(stage[j] + 32, _mm512_unpacklo_epi16(hi01, hi23));
			_mm512_storeu_si512(stage[j] + 48, _mm512_unpackhi_epi16(hi01, hi23));
		}
	}
#undef BYTE_O
#undef AFF
	_mm512_storeu_si512(L->x[0], p0);
	_mm512_storeu_si512(L->x[1], p1);
	_mm512_storeu_si512(L->x[2], p2);
	_mm512_storeu_si512(L->x[3], p3);
}

/* chains_pass() on 64 lanes. */
static void gf_pass(struct work *w, const struct kr_backend_spec *b, const uint32_t *order,
		    uint32_t n, uint32_t pm, uint32_t (*cnt)[TOP_SIZE], uint32_t *pos)
{
	uint32_t *h = w->h[0], stage[GBLOCK][GLANES] __attribute__((aligned(64)));
	uint8_t top[GBLOCK][GLANES] __attribute__((aligned(64)));
	uint16_t *bk = w->b[0];
	uint64_t m[4][4];
	struct glanes L;
	int active = 0;

	memset(&L, 0, sizeof(L));
	gf_matrices(m);
	for (int l = 0; l < GLANES; l++)
		active += glane_next(&L, l, b, order, n, pm);
	while (active) {
		uint32_t steps = GBLOCK;

		for (int l = 0; l < GLANES; l++)
			if (L.left[l] && L.left[l] < steps)
				steps = L.left[l];
		gf_block(&L, steps, m, pos ? NULL : top, pos ? stage : NULL);
		for (int l = 0; l < GLANES; l++) {
			if (!L.left[l])
				continue;
			if (pos) {
				uint32_t s = gf_slot((uint32_t)l);

				for (uint32_t j = 0; j < steps; j++)
					put(h, bk, pos, stage[j][s], L.bk[l]);
			} else {
				uint32_t *c = cnt[l & (LANES - 1)];

				for (uint32_t j = 0; j < steps; j++)
					c[top[j][l]]++;
			}
			L.left[l] -= steps;
			if (!L.left[l] && !glane_next(&L, l, b, order, n, pm))
				active--;
		}
	}
}
#endif

/* ---- choosing the generator ---------------------------------------------------------- */

static const char *const gen_names[] = {
	[KR_GEN_AUTO] = "auto", [KR_GEN_SCALAR] = "scalar", [KR_GEN_LANES4] = "lanes4",
	[KR_GEN_GFNI] = "gfni",
};

const char *kr_gen_name(enum kr_gen g)
{
	return (unsigned)g < sizeof(gen_names) / sizeof(gen_names[0]) ? gen_names[g] : "?";
}

int kr_gen_parse(const char *s)
{
	for (unsigned i = 0; i < sizeof(gen_names) / sizeof(gen_names[0]); i++)
		if (!strcmp(s, gen_names[i]))
			return (int)i;
	return -1;
}

int kr_gen_available(enum kr_gen g, const char **why)
{
	const char *no = NULL;

	if (g == KR_GEN_GFNI) {
#if defined(__x86_64__) && !defined(KR_PORTABLE)
		if (!have_gfni())
			no = "this CPU lacks GFNI, AVX-512F or AVX-512BW";
#elif defined(KR_PORTABLE)
		no = "built with KR_PORTABLE (no GFNI code)";
#else
		no = "not an x86-64 build (no GFNI code)";
#endif
	} else if ((unsigned)g > KR_GEN_GFNI)
		no = "no such generator";
	if (no && why)
		*why = no;
	return !no;
}

static int gen_forced = -1;	/* enum kr_gen; -1: not yet read from the environment */

int kr_gen_force(enum kr_gen g, struct kr_err *err)
{
	const char *why;

	if (!kr_gen_available(g, &why))
		return kr_errf(err, "point generator %s: %s", kr_gen_name(g), why);
	gen_forced = (int)g;
	return 0;
}

/* The generator for a ring of total points: forced, or by size and CPU.  -1 with err for
 * a bad KEYROUTER_POINT_GEN. */
static int gen_pick(uint64_t total, struct kr_err *err)
{
	const char *why;

	if (gen_forced < 0) {
		const char *e = getenv(KR_GEN_ENV);
		int g = e && *e ? kr_gen_parse(e) : KR_GEN_AUTO;

		if (g < 0)
			return kr_errf(err, "%s=%s: expected auto, scalar, lanes4 or gfni",
				       KR_GEN_ENV, e);
		if (!kr_gen_available((enum kr_gen)g, &why))
			return kr_errf(err, "%s=%s: %s (unset it, or choose another)",
				       KR_GEN_ENV, e, why);
		gen_forced = g;
	}
	if (gen_forced != KR_GEN_AUTO)
		return gen_forced;
	if (total < MSD_MIN_POINTS)
		return KR_GEN_SCALAR;
	return kr_gen_available(KR_GEN_GFNI, NULL) ? KR_GEN_GFNI : KR_GEN_LANES4;
}

/* Pass 1 (cnt) or 2 (pos) of the large-ring build, on generator g (lanes4 or gfni). */
static void gen_pass(struct work *w, const struct kr_backend_spec *b, const uint32_t *order,
		     uint32_t n, uint32_t pm, uint32_t (*cnt)[TOP_SIZE], uint32_t *pos,
		     enum kr_gen g)
{
#if defined(__x86_64__) && !defined(KR_PORTABLE)
	if (g == KR_GEN_GFNI) {
		gf_pass(w, b, order, n, pm, cnt, pos);
		return;
	}
#else
	(void)g;
#endif
	if (cnt)
		chains_pass(w, b, order, n, pm, cnt, NULL, 0);
	else
		chains_pass(w, b, order, n, pm, NULL, pos, 1);
}

/*
 * Sorts one top-byte bucket [lo, hi) of buffer 0 (cache-sized) by its low 24 bits: two
 * stable passes of 12 bits, through tmp (hash and backend in one 8-byte record: half the
 * write streams) and back.
 */
static void sort_bucket(struct work *w, uint32_t lo, uint32_t hi, uint32_t (*c)[BIG_SIZE],
			uint64_t *tmp)
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
	for (uint32_t i = 0; i < n; i++) {
		uint32_t v = h[i];

		tmp[c[0][v & (BIG_SIZE - 1)]++] = v | (uint64_t)bk[i] << 32;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t rec = tmp[i];
		uint32_t v = (uint32_t)rec, p = c[1][(v >> BIG_BITS) & (BIG_SIZE - 1)]++;

		h[p] = v;
		bk[p] = (uint16_t)(rec >> 32);
	}
}

/*
 * Large rings: the chains are computed twice -- once to count the points per top byte,
 * once to write each point straight into its top-byte bucket -- so the only full-size
 * buffer is the ring itself (6 bytes per point).  Each of the 256 buckets is then, in
 * cache, sorted through a bucket-sized buffer, deduplicated (moved down to its final
 * place) and digested (the buckets' CRCs joined with crc32_combine()).  Returns 0 (the
 * buffer holding the points), or -1.
 */
static int build_large(struct kr_ring *r, struct work *w, const struct kr_backend_spec *b,
		       const uint32_t *order, uint32_t n, uint32_t pm, enum kr_gen g,
		       struct acct *a, struct kr_err *err)
{
	uint32_t *start, *pos, maxb = 0, sum = 0, (*c)[BIG_SIZE], (*cnt)[TOP_SIZE], *rank;
	size_t cnt_bytes = LANES * sizeof(*cnt) + 2 * (TOP_SIZE + 1) * sizeof(uint32_t);
	uint64_t t1 = kr_cpu_ns(), *tmp = NULL, dd_ns = 0;
	int ret = -1;

	c = acct_alloc(a, 2 * sizeof(*c));
	rank = acct_alloc(a, n * sizeof(*rank));
	cnt = acct_alloc(a, cnt_bytes);
	if (!c || !rank || !cnt) {
		kr_errf(err, "out of memory");
		goto out;
	}
	start = (uint32_t *)(cnt + LANES);
	pos = start + TOP_SIZE + 1;
	for (uint32_t oi = 0; oi < n; oi++)
		rank[order[oi]] = oi;
	memset(cnt, 0, LANES * sizeof(*cnt));
	gen_pass(w, b, order, n, pm, cnt, NULL, g);
	for (uint32_t k = 0; k < TOP_SIZE; k++) {
		uint32_t x = 0;

		for (int l = 0; l < LANES; l++)
			x += cnt[l][k];
		start[k] = pos[k] = sum;
		sum += x;
		if (x > maxb)
			maxb = x;
	}
	start[TOP_SIZE] = (uint32_t)w->total;
	tmp = acct_alloc(a, (size_t)maxb * sizeof(*tmp));
	if (!tmp) {
		kr_errf(err, "out of memory");
		goto out;
	}
	if (alloc_buf(w, 0, w->total, a, err))
		goto out;
	gen_pass(w, b, order, n, pm, NULL, pos, g);
	r->stats.gen_ns = kr_cpu_ns() - t1;
	t1 = kr_cpu_ns();
	for (uint32_t k = 0; k < TOP_SIZE; k++) {
		uint32_t o = w->out;
		uint64_t t2;

		sort_bucket(w, start[k], start[k + 1], c, tmp);
		t2 = kr_cpu_ns();
		if (dedup_range(w, 0, start[k], start[k + 1], rank, a, err))
			goto out;
		w->digest = (uint32_t)crc32_combine(w->digest,
			kr_ring_digest_points(w->h[0] + o, w->b[0] + o, w->out - o),
			(z_off_t)(w->out - o) * 8);
		dd_ns += kr_cpu_ns() - t2;
	}
	r->stats.dedup_ns = dd_ns;
	r->stats.sort_ns = kr_cpu_ns() - t1 - dd_ns;
	ret = 0;
out:
	acct_free(a, tmp, (size_t)maxb * sizeof(*tmp));
	acct_free(a, cnt, cnt_bytes);
	acct_free(a, rank, n * sizeof(*rank));
	acct_free(a, c, 2 * sizeof(*c));
	return ret;
}

/* Hands buffer s over to the ring (shrunk), with the duplicates and the digest. */
static void keep(struct kr_ring *r, struct work *w, int s, struct acct *a)
{
	free_buf(w, 1 - s, a);
	r->npoints = w->out;
	r->ndups = w->ndups;
	r->dups = w->dups;
	r->digest = w->digest;
	w->dups = NULL;
	r->hash = acct_realloc(a, w->h[s], w->cap[s] * sizeof(uint32_t),
			       (size_t)r->npoints * sizeof(uint32_t));
	w->h[s] = NULL;
	r->backend = acct_realloc(a, w->b[s], w->cap[s] * sizeof(uint16_t),
				  (size_t)r->npoints * sizeof(uint16_t));
	w->b[s] = NULL;
}

int kr_ring_build(struct kr_ring **out, const struct kr_backend_spec *b, uint32_t n,
		  uint32_t version, uint32_t pm, struct kr_err *err)
{
	struct work w = { 0 };
	struct acct a = { 0 };
	struct kr_ring *r = NULL;
	uint32_t *order = NULL;
	uint64_t t0 = kr_cpu_ns();
	int ret = -1, s, g;

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
	g = gen_pick(w.total, err);
	if (g < 0)
		goto cleanup;
	r->stats.gen = (uint32_t)g;
	s = g == KR_GEN_SCALAR ? build_small(r, &w, b, order, n, pm, &a, err)
			       : build_large(r, &w, b, order, n, pm, g, &a, err);
	if (s < 0)
		goto cleanup;
	keep(r, &w, s, &a);
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
