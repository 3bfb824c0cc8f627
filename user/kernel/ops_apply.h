/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * apply: make the pinned maps of an instance say what a configuration says, changing only
 * what differs (docs/operations.md "apply").  Two steps: the live state is read once
 * (kr_ops_live_read), the plan is computed from it without touching the kernel
 * (kr_apply_plan, user/core/apply_plan.h), then the executor applies the plan in this
 * order, so that a kill -9 at any point leaves a consistent data plane and the next apply
 * converges:
 *   0. the keyed-hash secret (before anything that uses it)
 *   1. ring ids: names of new ring ids recorded in kr_ops_rings
 *   2. backends: new global ids and changed kr_backends entries (nothing is removed yet)
 *   3. rings: each ring whose version differs from its active slot is encoded and
 *      published (one outer-map update); `ring stage`: into the standby slot, then the
 *      control word says staged
 *   4. QUIC-LB configurations and server IDs (kr_qlb_configs, kr_qlb_servers:
 *      ops_quic_lb.h); devices (kr_devices, and kr_device_macs for ifindexes below
 *      KR_DEVICE_SLOTS: the same entry in both), then the members of shared subsets
 *   5. services: added / changed, then removed (between two writes of kr_service_ports
 *      and of kr_port_wild / kr_wild_svcs: ops_ports.h); then QUIC-LB entries no
 *      service uses
 *   6. garbage: members, ring ids and backend ids nothing refers to any more
 * Nothing here prints: the plan (with what was done) is returned for the command to show.
 */
#ifndef KR_OPS_APPLY_H
#define KR_OPS_APPLY_H

#include <stdbool.h>
#include <stddef.h>
#include "apply_plan.h"
#include "err.h"
#include "ops.h"
#include "ops_kernel.h"

struct kr_ops_apply_opts {
	bool dry_run;		/* plan only: nothing is written */
	bool strict;		/* a ring the plan must leave alone (staged or migrating)
				 * fails the apply before anything is written (-EBUSY) */
	const char *stage;	/* ring stage of this ring (unit) name; NULL: a whole apply */
	bool force;		/* publish a ring even when it moves more than the config's
				 * max_move of its keys at once (else -ERANGE, nothing written) */
};

/* The live state the plan of CFG needs, read once from the instance's maps and from the
 * network namespace (the backends' devices).  0 or -errno (err set).  kr_live_free(). */
int kr_ops_live_read(const struct kr_inst *in, const struct kr_ops_maps *m,
		     const struct kr_config *cfg, struct kr_live *lv, struct kr_err *err);

/* Execute plan P in the order above; each step marks what it did (rings[i].done).
 * 0, or -errno with err set (what was done before stays; the next apply converges). */
int kr_ops_apply_exec(const struct kr_inst *in, const struct kr_ops_maps *m,
		      struct kr_apply_plan *p, struct kr_err *err);

/* The plan of CFG on an empty instance (what `load` applies), before anything is loaded:
 * fails as the plan would on what the configuration asks of this machine (a backend's
 * device that does not exist, too many rings).  0 or -errno with err set. */
int kr_ops_apply_precheck(const struct kr_config *cfg, struct kr_err *err);

/* Read, plan, and (unless o->dry_run) execute.  *p holds the plan afterwards, also after
 * an error (free it with kr_apply_plan_free).  0 or -errno with err set. */
int kr_ops_apply(const struct kr_inst *in, const struct kr_config *cfg,
		 const struct kr_ops_apply_opts *o, struct kr_apply_plan *p, struct kr_err *err);

#endif
