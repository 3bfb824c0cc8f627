/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Map keys/values and constants shared by the BPF programs and the keyrouter tool
 * (the ring image itself is in kr_image_kern_user.h).
 *
 * Ownership while the data path is built: the ring stage (ring maps, control words, the
 * lookup and the failover walk) and the packet stages (parsing, services, extractors,
 * forwarding, counters) are written by different people; each section says whose it is.
 */
#ifndef KEYROUTER_KERN_USER_H
#define KEYROUTER_KERN_USER_H

#ifndef __bpf__
#include <linux/types.h>
#endif
#include "kr_image_kern_user.h"

/* ---- limits ---------------------------------------------------------------------- */
#define KR_MAX_KEY_LEN		255	/* longer keys follow the service's policy */
#define KR_MAX_RINGS		256	/* ring ids 0..KR_MAX_RINGS-1; two slots each */
#define KR_MAX_BACKEND_IDS	(1u << 20)	/* global backend ids (all rings) */
#define KR_MAX_WALK		64	/* failover walk bound, in ring points */

/* ---- backends (global map: backend id -> struct kr_backend) ----------------------- */
enum kr_backend_state {
	KR_BACKEND_UP = 0,
	KR_BACKEND_DOWN = 1,	/* skipped by the walk: its keys move to the next point */
	KR_BACKEND_DRAIN = 2,	/* skipped like DOWN (no new keys); kept for reporting */
	KR_BACKEND_UNUSED = 3,	/* id not allocated: the walk skips it, and counts it */
};

struct kr_backend {
	__u8 addr[16];		/* IPv4 in the first 4 bytes, network order */
	__u16 port;		/* network order (informational: packets keep their port) */
	__u8 family;		/* 4 or 6 */
	__u8 state;		/* enum kr_backend_state */
	__u8 mac[6];		/* l2: destination MAC of the backend */
	__u8 pad[2];
	__u32 ifindex;		/* l2: egress device (0: the ingress device) */
	__u32 flags;
};
_Static_assert(sizeof(struct kr_backend) == 36, "kr_backend layout");

/* ---- what the ring stage decided for one packet ----------------------------------- */
struct kr_route {
	__u32 backend_id;	/* global backend id */
	__u32 image_index;	/* image point chosen (after the walk) */
	__u32 first_index;	/* image point of the plain lookup (before the walk) */
	__u32 walk;		/* points skipped by the walk */
	__u32 slot;		/* 0/1: the slot whose ring routed the packet */
	__u32 key_hash;		/* crc32 of the key */
};
_Static_assert(sizeof(struct kr_route) == 24, "kr_route layout");

/* ---- ring stage (bpf/kr_ring.h; written by the "ring" part) ---------------------- */
/* kr_ring_route() returns KR_ROUTE_OK (0) or one of these reasons (the packet is not routed). */
enum kr_route_reason {
	KR_ROUTE_OK = 0,
	KR_ROUTE_NO_RING = 1,		/* ring id out of range, or no image in the chosen slot */
	KR_ROUTE_BAD_IMAGE = 2,		/* image header/index/table inconsistent: not used */
	KR_ROUTE_ALL_DOWN = 3,		/* no backend of the ring is up */
	KR_ROUTE_WALK_LIMIT = 4,	/* KR_MAX_WALK points after the key's point all down */
	KR_ROUTE_NREASONS
};

/* Per-CPU counters of one ring slot (map kr_slot_stats, key ring_id * 2 + slot): the
 * "ring version counters".  A packet counts in the slot kr_ctl_slot() chose for it. */
struct kr_slot_stats {
	__u64 packets;		/* routed by this slot's ring */
	__u64 bytes;		/* bytes of those packets (when the caller passes them) */
	__u64 failover;		/* routed after skipping at least one down point */
	__u64 no_ring;		/* KR_ROUTE_NO_RING: nothing published in the slot */
	__u64 bad_image;	/* KR_ROUTE_BAD_IMAGE */
	__u64 all_down;		/* KR_ROUTE_ALL_DOWN */
	__u64 walk_limit;	/* KR_ROUTE_WALK_LIMIT */
};
_Static_assert(sizeof(struct kr_slot_stats) == 56, "kr_slot_stats layout");

/* Debug trace of the last kr_ring_route() call (map kr_ring_trace, one entry), written only
 * when the program's .rodata flag kr_ring_trace_on is set at load time (the verifier
 * removes the code otherwise).  `keyrouter lookup --via-kernel` reads it. */
struct kr_ring_trace {
	__u64 seq;		/* incremented by every traced call */
	struct kr_route route;
	__u32 reason;		/* enum kr_route_reason */
	__u32 ring_id;
};
_Static_assert(sizeof(struct kr_ring_trace) == 40, "kr_ring_trace layout");

#endif /* KEYROUTER_KERN_USER_H */
