/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * QUIC-LB in apply (docs/quic.md): the services' configurations -> kr_qlb_configs, the
 * backends' server IDs -> kr_qlb_servers (server ID -> global backend id), and the
 * QUIC-LB id and tag of each service's kr_service entry.  Order within apply: the
 * configurations and server IDs are written after the backends have their ids and before
 * the services point at them (kr_ops_apply_quic_lb); entries nothing refers to any more
 * are removed after the services (kr_ops_apply_quic_lb_gc).
 */
#ifndef KR_OPS_QUIC_LB_H
#define KR_OPS_QUIC_LB_H

#include <stdint.h>
#include "config.h"
#include "ops.h"
#include "ops_apply.h"
#include "units.h"

#define KR_MAP_QLB_CONFIGS	"kr_qlb_configs"
#define KR_MAP_QLB_SERVERS	"kr_qlb_servers"
#define KR_MAP_QLB_STATS	"kr_qlb_stats"

/* QUIC-LB id of service si (1.. in config order among the services with "quic_lb"), or 0. */
uint16_t kr_qlb_service_id(const struct kr_config *cfg, uint32_t si);
/* The tag of a service's QUIC-LB entries: 16 bits of the CRC-32 of its name, never 0. */
uint16_t kr_qlb_service_tag(const char *name);
/* Set KR_SVC_F_QUIC_LB, qlb_id and qlb_tag in the service's kr_service value. */
void kr_qlb_service_entry(const struct kr_config *cfg, uint32_t si, struct kr_service *v);

/* The kernel config of one configuration (lengths, AES round keys, tag). */
void kr_qlb_conf_from_cfg(const struct kr_cfg_qlb *q, uint16_t tag, struct kr_qlb_conf *out);

/* Write the configurations and server IDs (adds and changes only).  0 or -errno. */
int kr_ops_apply_quic_lb(const struct kr_inst *in, const struct kr_config *cfg,
			 const struct kr_ops_units *us, const struct kr_ops_apply_opts *o);
/* Remove configurations and server IDs the configuration no longer has.  0 or -errno. */
int kr_ops_apply_quic_lb_gc(const struct kr_inst *in, const struct kr_config *cfg,
			    const struct kr_ops_units *us, const struct kr_ops_apply_opts *o);

#endif
