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

#endif /* KEYROUTER_KERN_USER_H */
