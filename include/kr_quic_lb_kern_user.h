/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * QUIC-LB in the data path: map keys, values and counters shared by bpf/kr_quic_lb_stage.h
 * and the tool (docs/quic.md).  The codec is include/kr_quic_lb.h.
 *
 * A `quic` service with QUIC-LB configurations has KR_SVC_F_QUIC_LB in kr_service.flags,
 * its QUIC-LB id (1..KR_QLB_MAX_SERVICES-1) in kr_service.qlb_id and a tag (16 bits of the
 * CRC-32 of its name) in kr_service.qlb_tag.  Every entry written for the service carries
 * the same tag, and the data path uses an entry only when the tags agree: while an apply
 * renumbers services, a packet never decodes with another service's keys or routes to
 * another service's server IDs (it falls back to the ring, counted as unknown config).
 *
 *   kr_qlb_configs  ARRAY  qlb_id * 8 + config rotation -> struct kr_qlb_conf
 *   kr_qlb_servers  HASH   struct kr_qlb_sid_key -> struct kr_qlb_sid_val (backend id)
 *   kr_qlb_stats    PERCPU_ARRAY  qlb_id -> struct kr_qlb_counters
 */
#ifndef KR_QUIC_LB_KERN_USER_H
#define KR_QUIC_LB_KERN_USER_H

#ifndef __bpf__
#include <linux/types.h>
#endif
#include "kr_quic_lb.h"
#include "kr_layout.h"
#include "kr_map_names.h"

#define KR_QLB_MAX_SERVICES	128	/* QUIC-LB ids 1..127 (0 unused) */
#define KR_QLB_MAX_SERVERS	65536	/* server IDs, all services and rotations */
#define KR_QLB_CONF_SLOTS	8	/* per service: rotations 0..6 (+1 unused) */

static __always_inline __u32 kr_qlb_conf_index(__u32 qlb_id, __u32 cr)
{
	return qlb_id * KR_QLB_CONF_SLOTS + cr;
}

struct kr_qlb_sid_key {
	__u16 qlb_id;
	__u8 cr;		/* config rotation 0..6 */
	__u8 sid_len;		/* 1..15 */
	__u8 sid[16];		/* the server ID, zero-padded */
};
KR_LAYOUT_SIZE(kr_qlb_sid_key, 20);
KR_LAYOUT_AT(kr_qlb_sid_key, qlb_id, 0);
KR_LAYOUT_AT(kr_qlb_sid_key, cr, 2);
KR_LAYOUT_AT(kr_qlb_sid_key, sid_len, 3);
KR_LAYOUT_AT(kr_qlb_sid_key, sid, 4);

struct kr_qlb_sid_val {
	__u32 backend_id;	/* global backend id (kr_backends) */
	__u16 tag;		/* = kr_service.qlb_tag of the service */
	__u16 pad;
};
KR_LAYOUT_SIZE(kr_qlb_sid_val, 8);
KR_LAYOUT_AT(kr_qlb_sid_val, backend_id, 0);
KR_LAYOUT_AT(kr_qlb_sid_val, tag, 4);
KR_LAYOUT_AT(kr_qlb_sid_val, pad, 6);

/* Outcome of the QUIC-LB stage for a packet whose DCID was found (one counter each). */
enum kr_qlb_outcome {
	KR_QLB_ROUTED = 0,		/* routed by the server ID in the CID (no ring) */
	KR_QLB_FB_UNROUTABLE = 1,	/* config rotation 0b111 */
	KR_QLB_FB_UNKNOWN_CONFIG = 2,	/* the rotation names no configuration of the service */
	KR_QLB_FB_UNKNOWN_SID = 3,	/* decoded server ID is no backend's of the service */
	KR_QLB_FB_TOO_SHORT = 4,	/* DCID shorter than 1 + server ID + nonce */
	KR_QLB_FB_BACKEND_DOWN = 5,	/* the server ID's backend is down */
	KR_QLB_FB_TOO_LONG = 6,		/* long header DCID > 20 octets (no QUIC v1 CID) */
	KR_QLB_NOUTCOMES
};

/* Per QUIC-LB id (per-CPU): packets by outcome (the fallbacks go on to the ring), and the
 * routed ones by config rotation (how much each configuration still carries: rotation). */
struct kr_qlb_counters {
	__u64 n[8];		/* [enum kr_qlb_outcome] */
	__u64 routed_cr[8];	/* [config rotation] of the KR_QLB_ROUTED ones */
};
KR_LAYOUT_SIZE(kr_qlb_counters, 128);
KR_LAYOUT_AT(kr_qlb_counters, n, 0);
KR_LAYOUT_AT(kr_qlb_counters, routed_cr, 64);

/* Debug trace of the last QUIC-LB decode (with the program's kr_cfg_trace): what
 * `keyrouter quic-lb decode --via-kernel` prints. */
struct kr_qlb_trace {
	__u64 seq;
	__u32 outcome;		/* enum kr_qlb_outcome */
	__u32 decode_rc;	/* enum kr_qlb_rc (when a config was found) */
	__u32 backend_id;	/* when routed */
	__u8 cr;
	__u8 sid_len;
	__u8 sid[16];
	__u8 pad[2];
};
KR_LAYOUT_SIZE(kr_qlb_trace, 40);
KR_LAYOUT_AT(kr_qlb_trace, seq, 0);
KR_LAYOUT_AT(kr_qlb_trace, outcome, 8);
KR_LAYOUT_AT(kr_qlb_trace, decode_rc, 12);
KR_LAYOUT_AT(kr_qlb_trace, backend_id, 16);
KR_LAYOUT_AT(kr_qlb_trace, cr, 20);
KR_LAYOUT_AT(kr_qlb_trace, sid_len, 21);
KR_LAYOUT_AT(kr_qlb_trace, sid, 22);
KR_LAYOUT_AT(kr_qlb_trace, pad, 38);

#endif /* KR_QUIC_LB_KERN_USER_H */
