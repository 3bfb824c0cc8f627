/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * QUIC-LB for the tool (docs/quic.md): what a load balancer does with one CID, decoded in
 * userspace (include/kr_quic_lb.h).  user/kernel/kernel_quic_lb.h gives the same verdicts
 * from the kernel's program, so `quic-lb decode` and `--via-kernel` print the same lines.
 */
#ifndef KR_QUIC_LB_H_USER
#define KR_QUIC_LB_H_USER

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "err.h"
#include "config.h"
#include "kr_datapath_kern_user.h"

/* The verdict on one CID for a set of configurations with the same lengths and key. */
struct kr_qlb_verdict {
	bool routable;
	uint8_t cr;			/* config rotation of the first octet */
	uint8_t sid_len;
	uint8_t sid[KR_QLB_MAX_SID_LEN];
	uint32_t outcome;		/* enum kr_qlb_outcome (KR_QLB_FB_UNKNOWN_SID = decoded) */
};

/* Decode cid (len octets) with conf for any rotation 0..6 (userspace codec). */
void kr_qlb_user_decode(const struct kr_qlb_conf *conf, const uint8_t *cid, size_t len,
			struct kr_qlb_verdict *v);
/* "config rotation 7 (unroutable)", "too short: ...": why a CID is not routable. */
const char *kr_qlb_reason(const struct kr_qlb_verdict *v, const struct kr_qlb_conf *conf,
			  size_t len, char *buf, size_t n);
/* Name of a kr_qlb_counters slot ("routed", "unroutable", ...). */
const char *kr_qlb_outcome_name(unsigned outcome);

/* What the data path does with a CID for service s of cfg (its QUIC-LB configurations,
 * the server IDs and states of its ring's backends, its subset): v->outcome is
 * KR_QLB_ROUTED with the ring-local backend index in *backend, or the fallback's reason
 * (the ring decides).  s must have QUIC-LB configurations. */
void kr_qlb_cfg_route(const struct kr_config *cfg, const struct kr_cfg_service *s,
		      const uint8_t *cid, size_t len, struct kr_qlb_verdict *v, uint32_t *backend);

/* QUIC-LB id of service si (1.. in config order among the services with "quic_lb"), or 0. */
uint16_t kr_qlb_service_id(const struct kr_config *cfg, uint32_t si);
/* The tag of a service's QUIC-LB entries: 16 bits of the CRC-32 of its name, never 0. */
uint16_t kr_qlb_service_tag(const char *name);
/* Set KR_SVC_F_QUIC_LB, qlb_id and qlb_tag in the kr_service value of service si. */
void kr_qlb_service_entry(const struct kr_config *cfg, uint32_t si, struct kr_service *v);
/* The kernel config of one configuration (lengths, AES round keys, tag). */
void kr_qlb_conf_from_cfg(const struct kr_cfg_qlb *q, uint16_t tag, struct kr_qlb_conf *out);

#endif
