/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * QUIC-LB in apply's executor (docs/quic.md): the services' configurations ->
 * kr_qlb_configs, the backends' server IDs -> kr_qlb_servers (server ID -> global backend
 * id); the plan puts the QUIC-LB id and tag into each service's kr_service entry
 * (kr_qlb_service_entry, user/core/quic_lb.h).  Order: the configurations and server IDs
 * are written after the backends have their ids and before the services point at them
 * (kr_ops_apply_quic_lb); entries nothing refers to any more are removed after the
 * services (kr_ops_apply_quic_lb_gc).
 */
#ifndef KR_OPS_QUIC_LB_H
#define KR_OPS_QUIC_LB_H

#include <stdint.h>
#include "config.h"
#include "err.h"
#include "ops.h"
#include "quic_lb.h"
#include "units.h"

/* Write the configurations and server IDs (adds and changes only); us: the plan's units
 * (global backend ids).  0 or -errno with err set. */
int kr_ops_apply_quic_lb(const struct kr_inst *in, const struct kr_config *cfg,
			 const struct kr_units *us, struct kr_err *err);
/* ring stage of unit UNIT: add the server IDs of the staged version's backends that are
 * missing (a backend new in the staged version), so that connections it accepts once the
 * migration sends it Initials are routed to it by CID; nothing else changes (the
 * configurations are the applied configuration's).  0 or -errno with err set. */
int kr_ops_stage_quic_lb(const struct kr_inst *in, const struct kr_config *cfg,
			 const struct kr_units *us, uint32_t unit, struct kr_err *err);
/* Remove configurations and server IDs the configuration no longer has.  0 or -errno. */
int kr_ops_apply_quic_lb_gc(const struct kr_inst *in, const struct kr_config *cfg,
			    const struct kr_units *us, struct kr_err *err);

#endif
