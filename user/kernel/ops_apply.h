/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * apply: make the pinned maps of an instance say what a configuration says, changing only
 * what differs (docs/operations.md "apply").  Order, so that a kill -9 at any point
 * leaves a consistent data plane and the next apply converges:
 *   1. backends: new global ids and changed entries (nothing is removed yet)
 *   2. rings: every ring is built; where its digest/backend table differs from the
 *      published active version, a new image is published (one outer-map update)
 *   3. services: added / changed / removed entries
 *   4. garbage: ring ids and backend ids nothing refers to any more are released
 */
#ifndef KR_OPS_APPLY_H
#define KR_OPS_APPLY_H

#include <stdbool.h>
#include <stddef.h>
#include "ops.h"

struct kr_config;

struct kr_ops_apply_opts {
	bool dry_run;		/* only print the plan */
	bool quiet;
};

/* What an apply did (or would do). */
struct kr_ops_apply_result {
	unsigned rings_published, rings_same, rings_skipped, rings_removed;
	unsigned services_added, services_changed, services_removed, services_same;
	unsigned backends_added, backends_changed, backends_removed, backends_same;
	unsigned devices_changed;
};

/* Validate CONFIG without touching the kernel (errors printed).  0 or -EINVAL.
 * instance (may be NULL): the config's "instance", or "" when it names none. */
int kr_ops_apply_check(const char *config, char *instance, size_t len);
int kr_ops_apply(struct kr_inst *in, const char *config, const struct kr_ops_apply_opts *o);
int kr_ops_apply_cfg(struct kr_inst *in, const struct kr_config *cfg,
		     const struct kr_ops_apply_opts *o, struct kr_ops_apply_result *res);

/* ring stage: build ring RING of CONFIG into the standby slot, control word -> staged. */
int kr_ops_stage(struct kr_inst *in, const char *config, const char *ring);

#endif
