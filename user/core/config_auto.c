// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `"point_multiple": "auto"`: the configuration asks the analytics planner (analytics.c).
 * A file of its own below config.c and above analytics.c, so that the loader does not
 * call into an_source.c (which loads configurations itself): config.c -> config_auto.c
 * -> analytics.c -> continuum.c, and an_source.c -> config.c, without a loop.
 */
#include <errno.h>
#include <stdlib.h>
#include "analytics.h"
#include "config.h"
#include "continuum.h"

/* `"point_multiple": "auto"` in the configuration (called by config.c): the plan's
 * theory answer for the ring's weights and tie order -- deterministic, no ring built. */
int kr_config_auto_point_multiple(const struct kr_cfg_ring *ring, double target_cv,
				  uint32_t *pm, struct kr_err *err)
{
	struct kr_backend_spec *b;
	uint32_t *w, *rank = NULL, m = 0;
	int ret = -1, e;

	w = calloc(ring->nbackends ? ring->nbackends : 1, sizeof(*w));
	b = calloc(ring->nbackends ? ring->nbackends : 1, sizeof(*b));
	if (!w || !b) {
		kr_errf(err, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < ring->nbackends; i++) {
		w[i] = ring->backends[i].weight;
		b[i].addr = ring->backends[i].addr;
		b[i].weight = w[i];
	}
	rank = kr_an_tie_rank(b, ring->nbackends, KR_RING_V2);
	if (!rank) {
		kr_errf(err, "out of memory");
		goto out;
	}
	e = kr_an_auto_point_multiple(w, rank, ring->nbackends, target_cv, &m);
	if (e == -EDOM) {
		struct kr_an_plan_req req = { .weight = w, .rank = rank, .n = ring->nbackends,
					      .target = KR_AN_TARGET_CV, .value = target_cv };
		struct kr_an_plan plan;

		kr_an_plan(&req, &plan);
		kr_errf(err, "target_cv %g cannot be reached by this ring: the best is "
			 "%.6g at point_multiple %llu (within the %u-point limit; 32-bit collisions "
			 "grow with more points; see `keyrouter plan`)", target_cv, plan.best_value,
			 (unsigned long long)plan.m_best, KR_MAX_POINTS);
		goto out;
	}
	if (e) {
		kr_errf(err, "no point_multiple for target_cv %g (all weights 0?)",
			 target_cv);
		goto out;
	}
	*pm = m;
	ret = 0;
out:
	free(w);
	free(b);
	free(rank);
	return ret;
}
