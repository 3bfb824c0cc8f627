/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where the analytics commands (analyze, diff) get a ring from:
 *   --backends FILE --version v1|v2 [--point-multiple N]      (as `ring dump`)
 *   -c CONFIG [--ring NAME]   (NAME may be left out when the config has one ring;
 *                             --version / --point-multiple then override the config's)
 * The ring is built with the engine (user/core/continuum.h) exactly as `ring build` builds it.
 */
#ifndef KR_AN_SOURCE_H
#define KR_AN_SOURCE_H

#include <stdint.h>
#include "analytics.h"
#include "continuum.h"
#include "err.h"

struct kr_an_src {
	const char *backends;	/* --backends FILE */
	const char *config;	/* -c CONFIG */
	const char *ring;	/* --ring NAME */
	uint32_t version;	/* 0 = not given */
	uint32_t pm;		/* 0 = not given */
	int published;		/* the ring published in an instance (its active slot) */
	const char *instance;	/* with published: --instance NAME (default "default") */
	const char *pin_dir;	/* with published: --pin-dir DIR */
};

/* A built ring and what analytics needs around it. */
struct kr_an_built {
	struct kr_ring *ring;
	char desc[256];		/* "backends.txt (v2 point_multiple=16)" / "x.json ring web (..)" */
	uint32_t *rank;		/* tie rank of each backend: v1 index order, v2 by address */
	char name[64];		/* the config ring's name ("" for a backends file) */
	char instance[64];	/* the config's "instance" ("" when it has none) */
	int pm_auto;		/* the config said "point_multiple": "auto" */
	double target_cv;	/* with pm_auto */
};

/* Parses "v1"/"v2" and a point_multiple; 0 or -1 with err set (the option named). */
int kr_an_parse_version(const char *opt, const char *arg, uint32_t *version, struct kr_err *err);
int kr_an_parse_u32(const char *opt, const char *arg, uint32_t min, uint32_t *v,
		    struct kr_err *err);

/* Usage check (2): exactly one of --backends / -c, --version required with --backends,
 * --point-multiple not with v1.  `side` prefixes messages ("old", "new" or NULL). */
int kr_an_src_check(const struct kr_an_src *s, const char *side, struct kr_err *err);
/* Builds the ring (runtime errors name the file / ring).  The published ring
 * (s->published) is the kernel layer's: kr_ops_an_src_build() (an_published.h). */
int kr_an_src_build(const struct kr_an_src *s, struct kr_an_built *out, struct kr_err *err);
void kr_an_built_free(struct kr_an_built *b);


/* Shares of a ring (kr_an_shares on the engine's arrays): share[nbackends]. */
void kr_an_ring_shares(const struct kr_ring *r, uint64_t *share);

/* Ring measurement for kr_an_plan (its kr_an_measure_fn, ctx = struct kr_an_v2_measure):
 * builds the v2 ring of b[0..n) with point_multiple m and measures the shares against the
 * weights w: CV and max/mean, generated and kept points.  0 or -errno (err says why). */
struct kr_an_v2_measure {
	const struct kr_backend_spec *b;
	const uint32_t *w;
	uint32_t n;
	double last_ms;			/* build time of the last ring */
	struct kr_err err;
};
int kr_an_measure_v2(void *ctx, uint64_t m, struct kr_an_measured *out);

#endif
