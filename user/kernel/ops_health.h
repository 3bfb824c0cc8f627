/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The health checker's pinned state (docs/operations.md "Health checking"): who set each
 * backend's state and since when, the checker's figures per backend, its liveness and each
 * ring's panic.  Tool-owned ARRAY maps in the instance's pin directory, created by the first
 * writer (`backend set`, `keyrouter health`); readers (status, the exporter) find them or
 * report nothing.
 *
 *   kr_health_set    [backend id] struct kr_health_set    state, owner, since (every writer
 *                                                          of a state, under the lock)
 *   kr_health        [backend id] struct kr_health_be     the checker's figures
 *   kr_health_ck     [0]          struct kr_health_ck     the checker's heartbeat
 *   kr_health_rings  [ring id]    struct kr_health_ring   panic threshold reached?
 *   kr_health_damp   [backend id] struct kr_health_damp   flap damping: penalty, hold
 *   kr_health_wd     [0]          struct kr_health_wd     the watchdog: re-attaches counted
 *
 * The owner itself is in the backend's kr_backends entry (flags, KR_BACKEND_F_OWNER), written
 * in the same map update as the state, so no reader ever sees a state without its owner.
 */
#ifndef KR_OPS_HEALTH_H
#define KR_OPS_HEALTH_H

#include <stdbool.h>
#include "ops_kernel.h"

#define KR_OPS_MAP_HEALTH_SET	"kr_health_set"
#define KR_OPS_MAP_HEALTH	"kr_health"
#define KR_OPS_MAP_HEALTH_CK	"kr_health_ck"
#define KR_OPS_MAP_HEALTH_RINGS	"kr_health_rings"
#define KR_OPS_MAP_HEALTH_DAMP	"kr_health_damp"
#define KR_OPS_MAP_HEALTH_WD	"kr_health_wd"

struct kr_health_set {
	__u64 since_ns;		/* CLOCK_REALTIME of the write */
	__u8 state;		/* the state written then (enum kr_backend_state) */
	__u8 owner;		/* enum kr_backend_owner */
	__u8 pad[6];
};
KR_LAYOUT_SIZE(kr_health_set, 16);
KR_LAYOUT_AT(kr_health_set, since_ns, 0);
KR_LAYOUT_AT(kr_health_set, state, 8);
KR_LAYOUT_AT(kr_health_set, owner, 9);

#define KR_HEALTH_F_CHECKED	1u	/* the checker probes this backend */
#define KR_HEALTH_F_HELD	2u	/* a down is held back by the panic threshold */
#define KR_HEALTH_F_OVERRIDE	4u	/* an operator's / the config's down or drain: left alone */
#define KR_HEALTH_F_FAILING	8u	/* the last probe failed */

struct kr_health_be {
	__u64 probes;		/* sent */
	__u64 failed;		/* unanswered within the timeout, or a wrong reply */
	__u64 transitions;	/* state changes the checker wrote */
	__u64 last_ns;		/* CLOCK_REALTIME of the last result */
	__u32 rtt_us;		/* round trip of the last answered probe */
	__u32 flags;		/* KR_HEALTH_F_* */
	__u8 probe;		/* enum kr_probe_type */
	__u8 up;		/* the checker's view */
	__u8 pad[6];
};
KR_LAYOUT_SIZE(kr_health_be, 48);
KR_LAYOUT_AT(kr_health_be, probes, 0);
KR_LAYOUT_AT(kr_health_be, failed, 8);
KR_LAYOUT_AT(kr_health_be, transitions, 16);
KR_LAYOUT_AT(kr_health_be, last_ns, 24);
KR_LAYOUT_AT(kr_health_be, rtt_us, 32);
KR_LAYOUT_AT(kr_health_be, flags, 36);
KR_LAYOUT_AT(kr_health_be, probe, 40);

struct kr_health_ck {
	__u64 started_ns;	/* CLOCK_REALTIME */
	__u64 beat_ns;		/* last heartbeat (at least once per second while it runs) */
	__u64 rounds;		/* loop iterations */
	__u32 pid;
	__u32 targets;		/* backends probed */
	__u32 beat_ms;		/* heartbeat period: stale after 3 of them */
	__u32 pad;
};
KR_LAYOUT_SIZE(kr_health_ck, 40);
KR_LAYOUT_AT(kr_health_ck, started_ns, 0);
KR_LAYOUT_AT(kr_health_ck, beat_ns, 8);
KR_LAYOUT_AT(kr_health_ck, rounds, 16);
KR_LAYOUT_AT(kr_health_ck, pid, 24);
KR_LAYOUT_AT(kr_health_ck, targets, 28);
KR_LAYOUT_AT(kr_health_ck, beat_ms, 32);

struct kr_health_ring {
	__u64 since_ns;		/* panic: since when (0: not in panic) */
	__u32 panic;		/* 1: a down was held back */
	__u32 up, total;	/* backends up / checked, at the last decision */
	__u32 held;		/* backends kept up by the threshold */
	__u32 threshold_pm;	/* the ring's panic threshold, per mille */
	__u32 pad;
};
KR_LAYOUT_SIZE(kr_health_ring, 32);

/* Flap damping of a backend (the checker's, core/health.h struct kr_damp). */
struct kr_health_damp {
	__u64 held_until_ns;	/* CLOCK_REALTIME: held down until about then (0: not held) */
	__u64 last_flap_ns;	/* CLOCK_REALTIME of the last flap (0: none) */
	__u32 penalty;		/* at the last write (1000 = one flap) */
	__u32 flaps;		/* downs counted since the checker started */
	__u32 suppress, reuse;	/* its thresholds */
};
KR_LAYOUT_SIZE(kr_health_damp, 32);
KR_LAYOUT_AT(kr_health_damp, held_until_ns, 0);
KR_LAYOUT_AT(kr_health_damp, last_flap_ns, 8);
KR_LAYOUT_AT(kr_health_damp, penalty, 16);
KR_LAYOUT_AT(kr_health_damp, flaps, 20);
KR_LAYOUT_AT(kr_health_damp, suppress, 24);
KR_LAYOUT_AT(kr_health_damp, reuse, 28);

/* The checker's watchdog: the program attached again after something detached it. */
struct kr_health_wd {
	__u64 reattach_total;	/* re-attaches done */
	__u64 last_ns;		/* CLOCK_REALTIME of the last one (0: none) */
	__u32 failed_total;	/* detached, and it could not be attached again */
	__u32 interval_ms;	/* how often it looks (0: the watchdog is off) */
	__u64 checks;		/* looks */
};
KR_LAYOUT_SIZE(kr_health_wd, 32);
KR_LAYOUT_AT(kr_health_wd, reattach_total, 0);
KR_LAYOUT_AT(kr_health_wd, last_ns, 8);
KR_LAYOUT_AT(kr_health_wd, failed_total, 16);
KR_LAYOUT_AT(kr_health_wd, interval_ms, 20);
KR_LAYOUT_AT(kr_health_wd, checks, 24);

/* The six maps (fd -1 when absent and !create). */
struct kr_health_maps {
	int set, be, ck, rings, damp, wd;
	__u32 max;		/* entries of set/be: kr_backends' max_entries */
};
int kr_health_maps_open(const struct kr_inst *in, const struct kr_ops_maps *m, bool create,
			struct kr_health_maps *h);
void kr_health_maps_close(struct kr_health_maps *h);

/* The owner recorded in a kr_backends entry. */
static inline __u8 kr_backend_owner(const struct kr_backend *be)
{
	return (__u8)(be->flags & KR_BACKEND_F_OWNER);
}
const char *kr_backend_owner_name(__u8 owner);

/* Write state + owner of backend id in one update of its kr_backends entry (the rest of the
 * entry as read just before), then record since in kr_health_set (h may be NULL or have
 * set < 0: not recorded).  The caller holds the instance's lock.  0 or -errno. */
int kr_health_write_state(const struct kr_ops_maps *m, const struct kr_health_maps *h,
			  __u32 id, struct kr_backend *be, __u8 state, __u8 owner);

__u64 kr_health_now_ns(void);

struct kr_plan_backend;
/* apply wrote these kr_backends entries: record when the configuration set a state (owner
 * config) that kr_health_set does not hold yet.  Only where kr_health_set exists (a checker
 * or backend set made it): apply creates none of the health maps. */
void kr_health_note_apply(const struct kr_inst *in, const struct kr_plan_backend *b, __u32 n);

#endif
