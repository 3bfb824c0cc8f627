// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Continuum rules beyond the vectors: tie rules (v2: smallest address, v1: listed first)
 * on the f_* colliding backends and with the order reversed; the removed duplicates; the
 * limits (65536 backends ok, 65537 not, weight x point_multiple and total overflow, v1/v2
 * parameters, weight 0 = drained, no points, duplicate backend); the walk's wrap-around;
 * and "skipping is exact": routing with a backend skipped = the ring built without it,
 * by the ring (kr_ring_route) and by a kernel-style walk over the image.
 */
#include <string.h>
#include "tap.h"
#include "vec.h"
#include "image.h"
#include "crc32.h"

static const uint32_t f_collisions[6] = { 0x892560bf, 0x4fd14303, 0x87299cbd,
					  0x1a85a69f, 0x12811be9, 0x014da5d1 };

static struct kr_ring *build(const struct kr_backend_spec *b, uint32_t n, uint32_t ver,
			     uint32_t pm)
{
	struct kr_ring *r = NULL;
	struct kr_err err = { "" };

	if (kr_ring_build(&r, b, n, ver, pm, &err))
		DIAG("build: %s", err.msg);
	return r;
}

static int expect_error(const struct kr_backend_spec *b, uint32_t n, uint32_t ver, uint32_t pm,
			const char *want, const char *what)
{
	struct kr_ring *r = NULL;
	struct kr_err err = { "" };
	int rc = kr_ring_build(&r, b, n, ver, pm, &err);

	CHECK(rc == -1 && !r && strstr(err.msg, want), "%s: error '...%s...'", what, want);
	if (rc != -1 || !strstr(err.msg, want))
		DIAG("got %d: '%s'", rc, err.msg);
	kr_ring_free(r);
	return rc;
}

/* Winner of collision hash h in ring r (or -1). */
static int winner(const struct kr_ring *r, uint32_t h)
{
	uint32_t i = kr_ring_lower_bound(r, h);

	return r->hash[i] == h ? r->backend[i] : -1;
}

static void ties(void)
{
	struct kr_backend_spec rev[12];
	struct kr_ring *v2, *v1, *v2r, *v1r;
	int ok2 = 1, ok1 = 1, ok2r = 1, ok1r = 1, okd = 1;
	struct vec v;

	if (vec_load(&v, "f_v2pm16_collide")) {
		CHECK(0, "f_v2pm16_collide loads");
		return;
	}
	for (int i = 0; i < 12; i++)
		rev[i] = v.b[11 - i];
	v2 = build(v.b, 12, KR_RING_V2, 16);
	v1 = build(v.b, 12, KR_RING_V1, 0);
	v2r = build(rev, 12, KR_RING_V2, 16);
	v1r = build(rev, 12, KR_RING_V1, 0);
	if (!v2 || !v1 || !v2r || !v1r) {
		CHECK(0, "tie rings build");
		goto out;
	}
	CHECK_EQ_U(v2->ndups, 6, "v2 pm16: 6 points removed (one per colliding pair)");
	CHECK_EQ_U(v1->ndups, 6, "v1: the same 6 collisions (v1 chains extend v2 pm16's)");
	for (int p = 0; p < 6; p++) {
		uint32_t a = 2 * p, b = 2 * p + 1, h = f_collisions[p];
		uint32_t small = kr_sockaddr_cmp(&v.b[a].addr, &v.b[b].addr) < 0 ? a : b;

		ok2 &= winner(v2, h) == (int)small;
		ok1 &= winner(v1, h) == (int)a;
		/* reversed list: index i -> 11 - i */
		ok2r &= winner(v2r, h) == (int)(11 - small);
		ok1r &= winner(v1r, h) == (int)(11 - b);
	}
	CHECK(ok2, "v2: on each of the 6 collisions the smallest socket address wins");
	CHECK(ok1, "v1: on each collision the backend listed first wins");
	CHECK(ok2r, "v2, list reversed: still the smallest socket address");
	CHECK(ok1r, "v1, list reversed: now the other backend (listed first) wins");
	for (uint32_t d = 0; d < v2->ndups; d++) {
		const struct kr_dup *x = &v2->dups[d];

		okd &= v2->hash[x->winner] == x->hash && v2->backend[x->winner] != x->backend &&
		       (d == 0 || v2->dups[d - 1].winner < x->winner) &&
		       kr_sockaddr_cmp(&v.b[v2->backend[x->winner]].addr, &v.b[x->backend].addr) < 0;
	}
	CHECK(okd, "removed points: hash = winner's hash, other (larger) backend, by winner");
out:
	kr_ring_free(v2);
	kr_ring_free(v1);
	kr_ring_free(v2r);
	kr_ring_free(v1r);
	vec_free(&v);
}

static struct kr_backend_spec *many(uint32_t n, uint32_t weight)
{
	struct kr_backend_spec *b = calloc(n, sizeof(*b));

	for (uint32_t i = 0; i < n; i++) {
		b[i].addr.family = 4;
		b[i].addr.ip[0] = 10;
		b[i].addr.ip[1] = (uint8_t)(i >> 16);
		b[i].addr.ip[2] = (uint8_t)(i >> 8);
		b[i].addr.ip[3] = (uint8_t)i;
		b[i].addr.port = 80;
		b[i].weight = weight;
	}
	return b;
}

static void limits(void)
{
	struct kr_backend_spec *b = many(65537, 1);
	struct kr_ring *r;
	int seen_last = 0;

	r = build(b, 65536, KR_RING_V2, 1);
	CHECK(r && r->nbackends == 65536, "65536 backends build");
	if (r) {
		for (uint32_t i = 0; i < r->npoints; i++)
			seen_last |= r->backend[i] == 65535;
		CHECK(seen_last, "backend index 65535 is on the ring (no 16-bit wrap)");
		CHECK_EQ_U(r->npoints + r->ndups, 65536, "65536 points generated");
	}
	kr_ring_free(r);
	expect_error(b, 65537, KR_RING_V2, 1, "too many backends: 65537", "65537 backends");
	expect_error(b, 0, KR_RING_V2, 1, "no backends", "0 backends");
	b[1].weight = 4294967295u;
	expect_error(b, 3, KR_RING_V2, 4294967295u,
		     "backend 0 (10.0.0.0:80): weight 1 x point_multiple 4294967295",
		     "pm 2^32-1 overflows the point limit");
	expect_error(b, 3, KR_RING_V2, 16,
		     "backend 1 (10.0.0.1:80): weight 4294967295 x point_multiple 16 = "
		     "68719476720 points", "weight x pm computed in 64 bits");
	b[1].weight = 1677722;	/* x 160 = 268435520 > 2^28 */
	expect_error(b, 3, KR_RING_V1, 0, "backend 1 (10.0.0.1:80): weight 1677722 x "
		     "point_multiple 160 = 268435520 points", "v1 weight x 160 over the limit");
	b[0].weight = b[1].weight = b[2].weight = 1u << 27;
	expect_error(b, 3, KR_RING_V2, 1, "ring too large: 3 backends give 402653184 points",
		     "total over KR_MAX_POINTS");
	b[0].weight = b[1].weight = b[2].weight = 0;
	expect_error(b, 3, KR_RING_V2, 1, "no points: every backend has weight 0",
		     "all weights 0");
	b[0].weight = b[1].weight = b[2].weight = 1;
	expect_error(b, 3, KR_RING_V1, 16, "v1 rings always use 160", "v1 with pm 16");
	expect_error(b, 3, 3, 16, "expected 1 (v1) or 2 (v2)", "version 3");
	b[2].addr = b[0].addr;
	expect_error(b, 3, KR_RING_V2, 1, "duplicate backend 10.0.0.0:80 (backends 0 and 2)",
		     "duplicate backend");
	r = build(b, 2, KR_RING_V2, 0);
	CHECK(r && r->point_multiple == 160 && r->npoints + r->ndups == 320,
	      "v2 pm 0 = default 160");
	kr_ring_free(r);
	free(b);
}

static void drained_and_walk(void)
{
	struct kr_ring *full, *dr;
	struct vec v;
	int ok = 1;
	uint32_t w[3], of3 = 0, in_full = 0;

	if (vec_load(&v, "b_v1_10mixed")) {
		CHECK(0, "b vector loads");
		return;
	}
	full = build(v.b, v.nb, KR_RING_V1, 0);
	v.b[3].weight = 0;
	dr = build(v.b, v.nb, KR_RING_V1, 0);
	if (!full || !dr) {
		CHECK(0, "drained rings build");
		goto out;
	}
	for (uint32_t i = 0; i < full->npoints; i++)
		of3 += full->backend[i] == 3;
	for (uint32_t i = 0; i < dr->npoints; i++) {
		uint32_t j = kr_ring_lower_bound(full, dr->hash[i]);

		ok &= dr->backend[i] != 3;
		in_full += full->hash[j] == dr->hash[i] && full->backend[j] == dr->backend[i];
	}
	CHECK(ok, "weight 0: the drained backend has no point");
	CHECK_EQ_U(dr->nbackends, 10, "weight 0: the backend keeps its index (10 backends)");
	CHECK(in_full == dr->npoints && dr->npoints == full->npoints - of3,
	      "weight 0: the other backends' points are unchanged (%u = %u - %u)", dr->npoints,
	      full->npoints, of3);
	kr_ring_walk(full, full->npoints - 1, w, 3);
	CHECK(w[0] == full->backend[0] && w[1] == full->backend[1] && w[2] == full->backend[2],
	      "walk from the last point wraps to points 0, 1, 2");
	CHECK_EQ_U(kr_ring_lower_bound(full, full->hash[full->npoints - 1] + 1), 0,
		   "lookup past the last point wraps to 0");
	CHECK_EQ_U(kr_ring_lower_bound(full, 0), 0, "lookup of 0 = point 0");
out:
	kr_ring_free(full);
	kr_ring_free(dr);
	vec_free(&v);
}

/* Kernel-style walk over the image: from the lookup, skip points of skipped backends. */
static int image_route(const struct kr_image *img, uint32_t h, const uint8_t *skip)
{
	uint32_t ii, hh, be;

	if (kr_image_lookup(img, h, &ii))
		return -2;
	for (uint32_t s = 0; s < img->hdr->npoints; s++) {
		if (kr_image_point(img, ii, &hh, &be))
			return -2;
		if (!skip[be])
			return (int)be;
		ii = ii + 1 < img->hdr->npoints ? ii + 1 : 0;
	}
	return -1;
}

static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)*s;
}

/* Skipping the backends in skip[] = the ring built with their weight 0. */
static void skip_case(const struct vec *v, uint32_t ver, uint32_t pm, const uint8_t *skip,
		      const char *what)
{
	struct kr_backend_spec *b = malloc(v->nb * sizeof(*b));
	struct kr_ring *full = build(v->b, v->nb, ver, pm), *wo;
	uint32_t bad_ring = 0, bad_img = 0, n = 0;
	struct kr_image img;
	uint64_t s = 0x1234567;

	memcpy(b, v->b, v->nb * sizeof(*b));
	for (uint32_t i = 0; i < v->nb; i++)
		if (skip[i])
			b[i].weight = 0;
	wo = build(b, v->nb, ver, pm);
	if (!full || !wo || kr_image_encode(&img, full, NULL, NULL)) {
		CHECK(0, "%s: rings build", what);
		goto out;
	}
	for (uint32_t i = 0; i < full->npoints * 3 + 20000; i++, n++) {
		uint32_t h = i < full->npoints * 3 ? full->hash[i / 3] + (i % 3) - 1 : rnd(&s);
		uint32_t want = wo->backend[kr_ring_lower_bound(wo, h)], ri, be;

		bad_ring += kr_ring_route(full, h, skip, &ri, &be) || be != want;
		bad_img += image_route(&img, h, skip) != (int)want;
	}
	CHECK(bad_ring == 0, "%s: kr_ring_route skipping = ring without (%u hashes)", what, n);
	CHECK(bad_img == 0, "%s: image walk skipping = ring without (%u hashes)", what, n);
	kr_image_free(&img);
out:
	kr_ring_free(full);
	kr_ring_free(wo);
	free(b);
}

static void skipping(void)
{
	static const struct { const char *name; uint32_t ver, pm; } cases[] = {
		{ "f_v2pm16_collide", KR_RING_V2, 16 },
		{ "f_v2pm16_collide", KR_RING_V1, 0 },
		{ "c_v2pm16_10mixed", KR_RING_V2, 16 },
	};
	char what[128];

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct vec v;
		uint8_t skip[16] = { 0 };

		if (vec_load(&v, cases[c].name)) {
			CHECK(0, "%s loads", cases[c].name);
			continue;
		}
		for (uint32_t x = 0; x < v.nb; x++) {
			memset(skip, 0, sizeof(skip));
			skip[x] = 1;
			snprintf(what, sizeof(what), "%s %s skip %u", cases[c].name,
				 cases[c].ver == 1 ? "v1" : "v2", x);
			skip_case(&v, cases[c].ver, cases[c].pm, skip, what);
		}
		memset(skip, 0, sizeof(skip));
		skip[0] = skip[1] = skip[4] = 1;
		snprintf(what, sizeof(what), "%s skip {0,1,4}", cases[c].name);
		skip_case(&v, cases[c].ver, cases[c].pm, skip, what);
		vec_free(&v);
	}
}

/* ---- the radix sort against a straightforward reference builder ------------------- */

struct refpt {
	uint32_t hash, tie, backend;
};

static int refcmp(const void *x, const void *y)
{
	const struct refpt *a = x, *b = y;

	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	return (a->tie > b->tie) - (a->tie < b->tie);
}

static const struct kr_backend_spec *ref_b;

static int refaddr(const void *x, const void *y)
{
	return kr_sockaddr_cmp(&ref_b[*(const uint32_t *)x].addr, &ref_b[*(const uint32_t *)y].addr);
}

/* Per-point CRC over the whole base string, qsort by (hash, tie order), dedup. */
static void reference_case(const struct kr_backend_spec *b, uint32_t n, uint32_t ver,
			   uint32_t pm, const char *what)
{
	uint32_t *order = malloc(n * sizeof(*order)), npm = ver == 1 ? 160 : pm, out = 0;
	uint32_t bad = 0, nd = 0, bad_dups = 0;
	uint64_t total = 0, k = 0;
	struct kr_ring *r = build(b, n, ver, pm);
	struct refpt *p;

	for (uint32_t i = 0; i < n; i++) {
		order[i] = i;
		total += (uint64_t)b[i].weight * npm;
	}
	if (ver == KR_RING_V2) {
		ref_b = b;
		qsort(order, n, sizeof(*order), refaddr);
	}
	p = malloc(total * sizeof(*p));
	for (uint32_t oi = 0; oi < n; oi++) {
		char buf[KR_SOCKADDR_STRLEN + 4];
		size_t len = kr_ring_base_string(&b[order[oi]].addr, buf);
		uint32_t prev = 0;

		for (uint32_t j = 0; j < b[order[oi]].weight * npm; j++, k++) {
			memcpy(buf + len, &prev, 4);
			prev = kr_crc32(buf, len + 4);
			p[k] = (struct refpt){ prev, oi, order[oi] };
		}
	}
	qsort(p, total, sizeof(*p), refcmp);
	for (uint64_t i = 0; i < total; i++) {
		if (out && p[i].hash == p[out - 1].hash) {
			/* removed: the engine's dups list must hold it, in this order */
			bad_dups += nd >= (r ? r->ndups : 0) || r->dups[nd].hash != p[i].hash ||
				    r->dups[nd].backend != p[i].backend || r->dups[nd].winner != out - 1;
			nd++;
			continue;
		}
		p[out++] = p[i];
	}
	if (!r) {
		CHECK(0, "%s: builds", what);
		goto out;
	}
	for (uint32_t i = 0; i < out && i < r->npoints; i++)
		bad += r->hash[i] != p[i].hash || r->backend[i] != p[i].backend;
	CHECK(r->digest == kr_ring_digest_points_table(r->hash, r->backend, r->npoints),
	      "%s: digest = the table digest of its points", what);
	CHECK(r->npoints == out && bad == 0, "%s: %u points = reference (CRC of the whole string, "
	      "qsort by hash then tie order, dedup)", what, out);
	CHECK(r->ndups == nd && bad_dups == 0, "%s: the %u removed points = reference's, in order",
	      what, nd);
out:
	kr_ring_free(r);
	free(p);
	free(order);
}

/* The digest (carry-less multiplication where the CPU has it, else 8 table chains joined
 * by crc32_combine) = one CRC over the 8-byte records; the table version too, whatever
 * the CPU. */
static void digest(void)
{
	enum { N = 300 };
	uint32_t h[N];
	uint16_t b[N];
	uint8_t bytes[N * 8];
	int ok = 1, ok_table = 1;

	for (uint32_t i = 0; i < N; i++) {
		h[i] = kr_mix32(i + 1);
		b[i] = (uint16_t)(kr_mix32(i + 1000) >> 7);
		memcpy(bytes + 8 * i, &h[i], 4);	/* little-endian host */
		memset(bytes + 8 * i + 4, 0, 4);
		memcpy(bytes + 8 * i + 4, &b[i], 2);
	}
	for (uint32_t n = 0; n <= N; n++) {
		uint32_t want = kr_crc32(bytes, 8 * n);

		ok &= kr_ring_digest_points(h, b, n) == want;
		ok_table &= kr_ring_digest_points_table(h, b, n) == want;
	}
	CHECK(ok, "digest of 0..%u points = CRC-32 of their (hash le32, backend le32) bytes", N);
	CHECK(ok_table, "table digest of 0..%u points = the same CRC-32", N);
	/* unaligned starts (the large path digests each bucket from where it ends up) */
	ok = 1;
	for (uint32_t o = 1; o < 8; o++)
		ok &= kr_ring_digest_points(h + o, b + o, N - o) == kr_crc32(bytes + 8 * o,
									     8 * (N - o));
	CHECK(ok, "digest from odd offsets = CRC-32 of those bytes");
}

static void reference(void)
{
	struct kr_backend_spec *b;
	uint32_t n;

	if (kr_backends_load("tests/data/bench2048.backends.txt", &b, &n, NULL)) {
		CHECK(0, "bench2048 loads");
		return;
	}
	reference_case(b, n, KR_RING_V2, 16, "bench2048 v2 pm16 (small path, LSD sort)");
	reference_case(b, n, KR_RING_V2, 160, "bench2048 v2 pm160 (large path, 4 lanes)");
	/* 3.7M points, ~1500 equal hashes, many of them between backends whose points reach
	 * their bucket out of tie order (the lanes work in blocks): the removed points and
	 * the winners must still follow tie order */
	reference_case(b, n, KR_RING_V2, 400, "bench2048 v2 pm400 (large path, equal hashes "
		       "of backends generated out of tie order)");
	/* reversed list: v1 tie order changes, v2 does not */
	for (uint32_t i = 0; i < n / 2; i++) {
		struct kr_backend_spec t = b[i];

		b[i] = b[n - 1 - i];
		b[n - 1 - i] = t;
	}
	reference_case(b, n, KR_RING_V1, 0, "bench2048 reversed v1 (large path)");
	reference_case(b, n, KR_RING_V2, 160, "bench2048 reversed v2 pm160");
	free(b);
	/* > 4096 backends: the large-ring path without interleaved chains */
	b = many(5000, 1);
	for (uint32_t i = 0; i < 5000; i++)
		b[i].weight = 1 + i % 3;
	reference_case(b, 5000, KR_RING_V2, 106, "5000 backends v2 pm106 (large path)");
	free(b);
}

int main(void)
{
	ties();
	limits();
	drained_and_walk();
	skipping();
	digest();
	reference();
	return tap_done();
}
