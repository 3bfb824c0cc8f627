// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Subsets: bit-identity over random subsets, including colliding point hashes.
 *
 * For a ring of N backends and a subset S of them, the ring built from S alone (what
 * keyrouter publishes for a subset today, user/core/units.c) must route every key exactly
 * as the full ring's kernel image does when its walk skips the backends outside S (what a
 * shared ring does: the image keeps the points deduplication removed right after their
 * winner).  Checked on random keys and on every colliding hash (h - 1, h, h + 1), for v1
 * and v2 tie rules, walking the encoded image exactly as the data path reads it
 * (kr_lookup.h), without the kernel's walk bound; the longest walk is reported.
 */
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "continuum.h"
#include "image.h"

#define NB	600

static uint32_t rnd(void)
{
	static uint64_t s = 0x9e3779b97f4a7c15ull;

	s ^= s << 13, s ^= s >> 7, s ^= s << 17;
	return (uint32_t)s;
}

/* The image walk: first image point >= h, then onward (wrapping) to an eligible backend. */
static int image_route(const struct kr_image *img, uint32_t h, const uint8_t *in,
		       uint32_t *backend, uint32_t *steps)
{
	uint32_t i, ph, b, n = img->hdr->npoints;

	if (kr_image_lookup(img, h, &i))
		return -1;
	for (*steps = 0; *steps < n; (*steps)++, i = i + 1 < n ? i + 1 : 0) {
		if (kr_image_point(img, i, &ph, &b))
			return -1;
		if (in[b]) {
			*backend = b;
			return 0;
		}
	}
	return -1;
}

static void run(uint32_t version, uint32_t pm, int nsubsets)
{
	struct kr_backend_spec all[NB], sub[NB];
	uint32_t map[NB], bad = 0, checked = 0, maxsteps = 0, ncoll = 0;
	struct kr_ring *full = NULL;
	struct kr_image img = {};
	struct kr_err err = {};

	for (int i = 0; i < NB; i++) {
		memset(&all[i], 0, sizeof(all[i]));
		all[i].addr.family = 4;
		all[i].addr.port = 1000 + rnd() % 4;
		all[i].addr.ip[0] = 10, all[i].addr.ip[1] = i >> 8, all[i].addr.ip[2] = i & 255;
		all[i].addr.ip[3] = 1 + rnd() % 2;
		all[i].weight = 1 + rnd() % 3;
	}
	if (kr_ring_build(&full, all, NB, version, pm, &err) || kr_image_encode(&img, full, NULL, &err)) {
		CHECK(0, "build/encode: %s", err.msg);
		return;
	}
	ncoll = full->ndups;
	for (int t = 0; t < nsubsets; t++) {
		uint8_t in[NB] = {};
		uint32_t n = 0, want_pct = 1 + rnd() % 99;
		struct kr_ring *sr = NULL;

		for (int i = 0; i < NB; i++)
			if (rnd() % 100 < want_pct || (i == NB - 1 && !n))
				in[i] = 1;
		for (int i = 0; i < NB; i++)
			if (in[i])
				map[n] = i, sub[n++] = all[i];
		if (kr_ring_build(&sr, sub, n, version, pm, &err)) {
			CHECK(0, "subset build: %s", err.msg);
			continue;
		}
		/* random keys, then every collision of the full ring (h - 1, h, h + 1) */
		for (uint32_t k = 0; k < 20000 + 3 * full->ndups; k++) {
			uint32_t h, got = UINT32_MAX, steps = 0, want;

			if (k < 20000)
				h = rnd();
			else
				h = full->dups[(k - 20000) / 3].hash + (k - 20000) % 3 - 1;
			want = map[sr->backend[kr_ring_lower_bound(sr, h)]];
			if (image_route(&img, h, in, &got, &steps) || got != want) {
				if (bad++ < 5)
					DIAG("v%u subset %d (%u backends) hash %08x: image walk %u, subset "
					     "ring %u", version, t, n, h, got, want);
			}
			maxsteps = steps > maxsteps ? steps : maxsteps;
			checked++;
		}
		kr_ring_free(sr);
	}
	CHECK(ncoll > 0, "v%u pm %u: %u points, %u colliding hashes kept after their winner",
	      version, pm, full->npoints, ncoll);
	CHECK_EQ_U(bad, 0, "v%u: %d random subsets x (20000 keys + every collision +-1): "
		   "image walk skipping non-members == ring of the subset (%u lookups, longest "
		   "walk %u points)", version, nsubsets, checked, maxsteps);
	kr_image_free(&img);
	kr_ring_free(full);
}

int main(void)
{
	run(KR_RING_V2, 1200, 25);	/* ~1.4M points: ~115 collisions expected */
	run(KR_RING_V1, 0, 10);
	return tap_done();
}
