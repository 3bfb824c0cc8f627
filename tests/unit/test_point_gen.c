// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Every point generator of user/core/continuum.c on every CPU: each is forced in turn
 * (kr_gen_force) -- scalar (generate(), the two-buffer sort), lanes4 (chains_pass) and
 * gfni (gf_pass) -- for the ketama vectors (all points and the digest = the vector) and for
 * rings of 1.2M-3.7M points with equal hashes, v1 and v2 (all points, removed points and
 * digest = the scalar ring), and stats.gen names the one that ran.  Where the CPU (or the
 * build) has no GFNI the gfni points are SKIPs with the reason, and forcing it is refused
 * with that reason.  test_point_gen_portable runs this on the KR_PORTABLE build.
 */
#include <string.h>
#include "tap.h"
#include "vec.h"

static const enum kr_gen gens[] = { KR_GEN_SCALAR, KR_GEN_LANES4, KR_GEN_GFNI };
#define NGENS (sizeof(gens) / sizeof(gens[0]))

/* Builds with generator g forced; checks stats.gen.  NULL on failure (reported). */
static struct kr_ring *build(enum kr_gen g, const struct kr_backend_spec *b, uint32_t n,
			     uint32_t version, uint32_t pm, const char *name)
{
	struct kr_err err = { "" };
	struct kr_ring *r;

	if (kr_gen_force(g, &err) || kr_ring_build(&r, b, n, version, pm, &err)) {
		CHECK(0, "%s: %s: build (%s)", kr_gen_name(g), name, err.msg);
		return NULL;
	}
	CHECK(r->stats.gen == (uint32_t)g, "%s: %s: stats.gen says %s ran", kr_gen_name(g),
	      name, kr_gen_name((enum kr_gen)r->stats.gen));
	return r;
}

static void vectors(enum kr_gen g)
{
	for (size_t i = 0; i < VEC_COUNT; i++) {
		struct vec v;
		struct kr_ring *r;
		uint32_t bad = 0;

		if (vec_load(&v, vec_names[i])) {
			CHECK(0, "%s: load vector %s", kr_gen_name(g), vec_names[i]);
			continue;
		}
		r = build(g, v.b, v.nb, v.version, v.pm, v.name);
		if (r) {
			for (uint32_t k = 0; k < v.npts && k < r->npoints; k++)
				bad += r->hash[k] != v.pts[k].hash || r->backend[k] != v.pts[k].backend;
			CHECK(r->npoints == v.npts && bad == 0 && r->digest == v.digest,
			      "%s: %s: %u points (%u differ), digest %08x = the vector's %08x",
			      kr_gen_name(g), v.name, r->npoints, bad, r->digest, v.digest);
		}
		kr_ring_free(r);
		vec_free(&v);
	}
}

/* n backends 10.0.x.y:11211, weights 1..7 (and one drained). */
static struct kr_backend_spec *backends(uint32_t n)
{
	struct kr_backend_spec *b = calloc(n, sizeof(*b));
	struct kr_err err;
	char s[64];

	for (uint32_t i = 0; i < n && b; i++) {
		snprintf(s, sizeof(s), "10.%u.%u.%u:11211", i >> 16, (i >> 8) & 255, i & 255);
		if (kr_sockaddr_parse(s, &b[i].addr, &err)) {
			free(b);
			return NULL;
		}
		b[i].weight = i == 3 ? 0 : 1 + i % 7;
	}
	return b;
}

static int same(const struct kr_ring *a, const struct kr_ring *r)
{
	return a->npoints == r->npoints && a->ndups == r->ndups && a->digest == r->digest &&
	       !memcmp(a->hash, r->hash, a->npoints * sizeof(*a->hash)) &&
	       !memcmp(a->backend, r->backend, a->npoints * sizeof(*a->backend)) &&
	       !memcmp(a->dups, r->dups, a->ndups * sizeof(*a->dups));
}

/* A large ring on every generator = the scalar one; the automatic choice. */
static void large(uint32_t n, uint32_t version, uint32_t pm, const char *name)
{
	struct kr_backend_spec *b = backends(n);
	struct kr_ring *ref, *r;
	struct kr_err err = { "" };
	enum kr_gen want;

	if (!b || !(ref = build(KR_GEN_SCALAR, b, n, version, pm, name))) {
		CHECK(0, "%s: backends and the scalar ring", name);
		free(b);
		return;
	}
	CHECK(ref->ndups > 0 && ref->stats.generated >= (1u << 20), "%s: %u points, %u equal "
	      "hashes removed (the large-ring build, ties across lanes)", name, ref->npoints,
	      ref->ndups);
	for (size_t i = 1; i < NGENS; i++) {
		const char *why;

		if (!kr_gen_available(gens[i], &why)) {
			SKIP(why, "%s: %s = scalar", kr_gen_name(gens[i]), name);
			continue;
		}
		r = build(gens[i], b, n, version, pm, name);
		CHECK(r && same(ref, r), "%s: %s: points, removed points, digest = scalar's",
		      kr_gen_name(gens[i]), name);
		kr_ring_free(r);
	}
	want = kr_gen_available(KR_GEN_GFNI, NULL) ? KR_GEN_GFNI : KR_GEN_LANES4;
	r = NULL;
	CHECK(!kr_gen_force(KR_GEN_AUTO, &err) && !kr_ring_build(&r, b, n, version, pm, &err) &&
	      r->stats.gen == (uint32_t)want && same(ref, r),
	      "auto: %s: %s ran (%s), the same ring", name, kr_gen_name(want),
	      r ? kr_gen_name((enum kr_gen)r->stats.gen) : err.msg);
	kr_ring_free(r);
	kr_ring_free(ref);
	free(b);
}

int main(void)
{
	struct kr_err err = { "" };
	struct kr_ring *r = NULL;
	struct kr_backend_spec *b;

	for (size_t i = 0; i < NGENS; i++) {
		const char *why = NULL;

		if (kr_gen_available(gens[i], &why)) {
			DIAG("generator %s: available", kr_gen_name(gens[i]));
			vectors(gens[i]);
			continue;
		}
		CHECK(kr_gen_force(gens[i], &err) == -1 && strstr(err.msg, why),
		      "%s: forcing it is refused: %s", kr_gen_name(gens[i]), err.msg);
		SKIP(why, "%s: the %zu vectors", kr_gen_name(gens[i]), VEC_COUNT);
	}
	CHECK(kr_gen_parse("lanes4") == KR_GEN_LANES4 && kr_gen_parse("gfni") == KR_GEN_GFNI &&
	      kr_gen_parse("scalar") == KR_GEN_SCALAR && kr_gen_parse("auto") == KR_GEN_AUTO &&
	      kr_gen_parse("lanes8") == -1, "generator names parse back");
	large(60000, KR_RING_V2, 6, "v2 pm6 60000 backends");
	large(4000, KR_RING_V1, 160, "v1 4000 backends");
	/* the automatic choice for a small ring */
	b = backends(10);
	CHECK(b && !kr_gen_force(KR_GEN_AUTO, &err) &&
	      !kr_ring_build(&r, b, 10, KR_RING_V2, 160, &err) &&
	      r->stats.gen == KR_GEN_SCALAR, "auto: a ring of %u points: scalar ran",
	      r ? r->npoints : 0);
	kr_ring_free(r);
	free(b);
	return tap_done();
}
