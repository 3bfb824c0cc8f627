/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which VIPs a router announces over BGP, and why (`keyrouter announce`, docs/deploy.md
 * "Joining the fleet: BGP").  Pure: the announcer (user/daemon/announce.c) gathers the facts
 * from the kernel and BIRD, these functions decide.
 *
 * A VIP (one address: every service of the configuration on it, whatever its port) is
 * announced only while all of these hold:
 *   the instance is loaded and its program is attached where it was loaded,
 *   its published state is what the configuration asks (`apply --dry-run` would change
 *   nothing),
 *   every service on the VIP has at least min_up backends up in its ring (subset),
 *   no `unload` is withdrawing it and the operator has not drained the router.
 * A failure of the first three withdraws at once; a drain or an unload first marks the route
 * with the GRACEFUL_SHUTDOWN community (RFC 8326: the upstream moves the traffic to the other
 * routers while this one stays a backup path), then withdraws once this router's counters
 * show no traffic for the quiet time (or after the drain timeout).
 */
#ifndef KR_VIP_STATE_H
#define KR_VIP_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include "config.h"

#define KR_VIP_MAX		64	/* distinct VIP addresses announced per instance */
#define KR_VIP_MAX_SVCS		32	/* services on one VIP */

/* Why a VIP is not announced (KR_VIP_OK: it is); the first that applies, in this order. */
enum kr_vip_why {
	KR_VIP_OK = 0,
	KR_VIP_NOT_LOADED,	/* no instance (not loaded, being loaded, or unloaded) */
	KR_VIP_DETACHED,	/* the program is not attached where it was loaded */
	KR_VIP_STALE,		/* the published state is not what the configuration asks */
	KR_VIP_BACKENDS,	/* a service on it has fewer than min_up backends up */
	KR_VIP_UNLOADING,	/* `unload` is withdrawing it */
	KR_VIP_DRAINED,		/* `announce --drain` */
	KR_VIP_WHY_N
};

/* What BIRD is asked to do with the VIP's route. */
enum kr_vip_route {
	KR_VIP_WITHDRAWN = 0,
	KR_VIP_ANNOUNCED,
	KR_VIP_GSHUT,		/* announced with GRACEFUL_SHUTDOWN (65535:0): draining */
};

/* The facts of one round that hold for the whole instance. */
struct kr_vip_facts {
	bool loaded, attached, converged, unloading, drained;
};

/* One VIP of the configuration. */
struct kr_vip {
	struct kr_sockaddr addr;		/* port 0 */
	uint32_t svc[KR_VIP_MAX_SVCS];		/* indexes into cfg->services */
	uint32_t nsvc;
};

/* The VIP's decision state, kept by the announcer between rounds. */
struct kr_vip_track {
	uint8_t route;		/* enum kr_vip_route */
	uint8_t why;		/* enum kr_vip_why of the last decision */
	uint32_t up, total, min_up;	/* of the worst service on it (fewest up over min_up) */
	uint64_t since_ns;	/* the last change of route (0: never changed) */
	uint64_t gshut_ns;	/* when the drain started (GSHUT) */
	uint64_t pkts;		/* the router's packet counter at the last round */
	uint64_t quiet_ns;	/* since when it has not moved (0: it moved at the last round) */
};

struct kr_vip_timing {
	uint64_t quiet_ns;	/* a drain withdraws after this long without traffic ... */
	uint64_t timeout_ns;	/* ... or after this long in any case */
};

/* The distinct VIP addresses of cfg's services (wildcard services have none), in the
 * configuration's order.  Returns how many, or -ENOSPC (more than max). */
int kr_vip_collect(const struct kr_config *cfg, struct kr_vip *out, uint32_t max);

/* Backends a ring must have up: given (>= 0, from --min-up), else the ring's panic threshold
 * share of total rounded up; at least 1. */
uint32_t kr_vip_min_up(int given, double panic, uint32_t total);

/* The reason (KR_VIP_OK: announce) from the instance's facts and the VIP's worst service. */
enum kr_vip_why kr_vip_decide(const struct kr_vip_facts *f, uint32_t up, uint32_t min_up);

/* One round for the VIP: why (kr_vip_decide), the router's packet counter now and the
 * time.  Updates t; returns true when t->route changed. */
bool kr_vip_step(struct kr_vip_track *t, enum kr_vip_why why, uint64_t pkts, uint64_t now_ns,
		 const struct kr_vip_timing *tm);

/* BIRD's include file for these VIPs (malloc'd text, NULL: no memory): one `protocol static
 * PROTO_4` and one `PROTO_6`, a blackhole route per VIP not withdrawn, each with the
 * attribute keyrouter_vip = 1 (what the router template exports) and, while draining, the
 * GRACEFUL_SHUTDOWN community (65535:0).  instance and config only go into its comment. */
char *kr_vip_bird_file(const char *proto, const char *instance, const char *config,
		       const struct kr_vip *v, const struct kr_vip_track *t, uint32_t n);

/* One row of BIRD's `show protocols` (the reply's text, codes removed). */
struct kr_bird_proto {
	char name[32], proto[16], state[16], info[80];
};
/* The rows of TEXT (modified) into out; returns how many (at most max). */
int kr_bird_protocols_parse(char *text, struct kr_bird_proto *out, int max);

const char *kr_vip_why_name(enum kr_vip_why w);
const char *kr_vip_route_name(enum kr_vip_route r);

#endif
