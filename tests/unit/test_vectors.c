// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Every ketama vector (tests/vectors, from the real pingora-ketama crate): the ring equals
 * continuum.txt point for point with the same digest, and every key line of keys.txt is
 * reproduced in all 7 columns -- by the ring (plain binary search + walk) and by the kernel
 * image (kr_lookup.h's kr_image_lower_bound, image -> ring index, image walk).
 */
#include "tap.h"
#include "vec.h"
#include "crc32.h"
#include "image.h"

static void check_points(const struct vec *v, const struct kr_ring *r)
{
	uint32_t bad = 0, first = 0;

	CHECK_EQ_U(r->npoints, v->npts, "%s: point count = continuum.txt lines", v->name);
	CHECK_EQ_U(r->npoints, v->header_points, "%s: point count = header", v->name);
	for (uint32_t i = 0; i < v->npts && i < r->npoints; i++) {
		if (r->hash[i] != v->pts[i].hash || r->backend[i] != v->pts[i].backend) {
			if (!bad++)
				first = i;
		}
	}
	CHECK(bad == 0, "%s: all %u points equal (hash, backend)", v->name, v->npts);
	if (bad)
		DIAG("%u differ, first at ring index %u: got %08x %u, want %08x %u", bad, first,
		     r->hash[first], r->backend[first], v->pts[first].hash, v->pts[first].backend);
	CHECK_EQ_U(r->digest, v->digest, "%s: ring digest", v->name);
	CHECK_EQ_U(r->ndups + r->npoints, r->stats.generated, "%s: points + removed = generated",
		   v->name);
}

static int key_ok_ring(const struct kr_ring *r, const struct vec_key *k)
{
	uint32_t h = kr_key_hash(k->key, k->len), ri, w[3], be;

	if (h != k->crc)
		return 0;
	ri = kr_ring_lower_bound(r, h);
	kr_ring_walk(r, ri, w, 3);
	if (kr_ring_route(r, h, NULL, &ri, &be) || be != r->backend[ri])
		return 0;
	return ri == k->ring_index && r->backend[ri] == k->backend && w[0] == k->walk[0] &&
	       w[1] == k->walk[1] && w[2] == k->walk[2];
}

static int key_ok_image(const struct kr_image *img, const struct vec_key *k)
{
	uint32_t h = kr_crc32(k->key, k->len), ii, hh, be, w;

	if (kr_image_lookup(img, h, &ii) || kr_image_point(img, ii, &hh, &be))
		return 0;
	if (kr_image_ring_index(img, ii) != k->ring_index || be != k->backend)
		return 0;
	for (int j = 0; j < 3; j++) {
		ii = kr_image_next_ring_point(img, ii);
		if (kr_image_point(img, ii, &hh, &w) || w != k->walk[j])
			return 0;
	}
	return 1;
}

static void check_keys(const struct vec *v, const struct kr_ring *r, const struct kr_image *img)
{
	uint32_t bad_ring = 0, bad_img = 0;

	CHECK(v->nkeys > 1000, "%s: %u key lines read", v->name, v->nkeys);
	for (uint32_t i = 0; i < v->nkeys; i++) {
		const struct vec_key *k = &v->keys[i];

		if (!key_ok_ring(r, k) && !bad_ring++)
			DIAG("%s: key line %u (crc %08x) differs by the ring", v->name, i, k->crc);
		if (!key_ok_image(img, k) && !bad_img++)
			DIAG("%s: key line %u (crc %08x) differs by the image", v->name, i, k->crc);
	}
	CHECK(bad_ring == 0, "%s: all %u keys: crc, ring index, backend, walk (ring)", v->name,
	      v->nkeys);
	CHECK(bad_img == 0, "%s: all %u keys: crc, ring index, backend, walk (kernel image)",
	      v->name, v->nkeys);
}

int main(void)
{
	for (size_t i = 0; i < VEC_COUNT; i++) {
		struct kr_image img;
		struct kr_ring *r = NULL;
		struct kr_err err;
		struct vec v;

		if (vec_load(&v, vec_names[i])) {
			CHECK(0, "%s: vector files readable", vec_names[i]);
			continue;
		}
		CHECK(kr_ring_build(&r, v.b, v.nb, v.version, v.version == 1 ? 0 : v.pm, &err) == 0,
		      "%s: build (%s, pm %u, %u backends)", v.name, v.version == 1 ? "v1" : "v2",
		      v.pm, v.nb);
		if (!r) {
			DIAG("%s", err.msg);
			vec_free(&v);
			continue;
		}
		check_points(&v, r);
		CHECK(kr_image_encode(&img, r, NULL, &err) == 0, "%s: image encodes", v.name);
		CHECK_EQ_U(img.hdr->ndups, r->ndups, "%s: image keeps the %u removed points",
			   v.name, r->ndups);
		check_keys(&v, r, &img);
		kr_image_free(&img);
		kr_ring_free(r);
		vec_free(&v);
	}
	return tap_done();
}
