/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `keyrouter announce`: the instance's VIPs announced over BGP through the router's BIRD 2
 * (docs/deploy.md "Joining the fleet: BGP").  Every round (default 1 s) the announcer
 * gathers the facts (the instance loaded and attached where it was loaded, its published
 * state what the configuration asks -- apply's own dry-run plan --, each service's backends
 * up, a drain or an unload asked for), lets user/core/vip_state.c decide per VIP, and when
 * anything changed writes BIRD's include file and tells BIRD `configure` over its control
 * socket.  The file holds one `protocol static` per family (keyrouter_<instance>_4/_6) whose
 * routes carry the attribute keyrouter_vip (the router's template exports exactly those) and,
 * while draining, the GRACEFUL_SHUTDOWN community (65535:0).
 *
 * Its pinned tool maps (in the instance's directory; made again after an unload and load):
 *   kr_announce      [0]   struct kr_announce_ck    the announcer's heartbeat and figures
 *   kr_announce_ctl  [0]   struct kr_announce_ctl   written by commands: drain, unload
 *   kr_announce_vips [i]   struct kr_announce_vip   each VIP: route, reason, since
 *   kr_announce_bgp  [i]   struct kr_announce_bgp   BIRD's BGP sessions at the last round
 * Each map has one writer (the announcer, or the commands under the instance's lock).
 */
#ifndef KR_ANNOUNCE_H
#define KR_ANNOUNCE_H

#include <signal.h>
#include <stdbool.h>
#include <linux/types.h>
#include "config.h"
#include "follow.h"
#include "ops.h"
#include "vip_state.h"

#define KR_OPS_MAP_ANNOUNCE		"kr_announce"
#define KR_OPS_MAP_ANNOUNCE_CTL		"kr_announce_ctl"
#define KR_OPS_MAP_ANNOUNCE_VIPS	"kr_announce_vips"
#define KR_OPS_MAP_ANNOUNCE_BGP		"kr_announce_bgp"
#define KR_ANNOUNCE_MAX_BGP		16
#define KR_ANNOUNCE_BIRD_SOCKET		"/run/bird/bird.ctl"
#define KR_ANNOUNCE_BIRD_DIR		"/run/keyrouter/bird"

struct kr_announce_ck {
	__u64 started_ns;	/* CLOCK_REALTIME */
	__u64 beat_ns;		/* last round */
	__u64 rounds;
	__u64 change_ns;	/* the last change of a VIP's route */
	__u32 pid;		/* 0: stopped */
	__u32 beat_ms;		/* the poll interval: stale after 3 of them (+ 1 s) */
	__u32 done_seq;		/* unload's request kr_announce_ctl.unload_seq done */
	__u32 nvips;
	__u32 nsessions;
	__u32 bird_ok;		/* BIRD took the last configuration */
	char bird_error[128];	/* else why */
};
_Static_assert(sizeof(struct kr_announce_ck) == 184, "kr_announce_ck layout");

struct kr_announce_ctl {
	__u32 drain;		/* 1: `announce --drain` */
	__u32 unload_seq;	/* `unload`: withdraw everything (the announcer answers done_seq) */
	__u64 drain_ns;		/* when drain was last set or cleared */
};
_Static_assert(sizeof(struct kr_announce_ctl) == 16, "kr_announce_ctl layout");

struct kr_announce_vip {
	__u8 ip[16];
	__u8 family;		/* 4 or 6 */
	__u8 route;		/* enum kr_vip_route */
	__u8 why;		/* enum kr_vip_why */
	__u8 pad;
	__u32 up, total, min_up;	/* the worst service on it */
	__u64 since_ns;		/* the last change of route (0: none since the start) */
};
_Static_assert(sizeof(struct kr_announce_vip) == 40, "kr_announce_vip layout");

struct kr_announce_bgp {
	char name[32];
	char state[16];		/* BIRD's protocol state: up, start, down ... */
	char info[80];		/* BIRD's info column: Established, Idle, Connect ... */
};
_Static_assert(sizeof(struct kr_announce_bgp) == 128, "kr_announce_bgp layout");

/* What a reader (status, check, the exporter, unload) finds: the maps opened read-only. */
struct kr_announce_view {
	bool present;		/* an announcer ever ran on this instance (kr_announce exists) */
	bool running;		/* pid set and heartbeat fresh */
	struct kr_announce_ck ck;
	struct kr_announce_ctl ctl;
	struct kr_announce_vip vip[KR_VIP_MAX];
	struct kr_announce_bgp bgp[KR_ANNOUNCE_MAX_BGP];
};
/* 0 (view->present false when no announcer ever ran), or -errno. */
int kr_announce_view_read(const struct kr_inst *in, struct kr_announce_view *v);

/* `announce --drain` / `--undrain`: write kr_announce_ctl (the caller holds the lock).
 * --undrain also forgets an unload's request (an unload that failed after the withdrawal). */
int kr_announce_set_drain(const struct kr_inst *in, bool drain);

/* unload, before it detaches: ask a running announcer to withdraw every VIP (drain first)
 * and wait until it says done, at most timeout_ms.  0 done; -ENOENT no announcer runs;
 * -ETIMEDOUT; -errno. */
int kr_announce_unload_wait(const struct kr_inst *in, int timeout_ms);

/* The announcer. */
struct kr_announcer {
	const char *config;		/* the configuration file (read again when it changes) */
	const char *instance, *pin_dir;
	const char *bird_socket;	/* BIRD's control socket */
	const char *bird_file;		/* the include file written */
	int min_up;			/* -1: each ring's panic threshold */
	unsigned interval_ms;
	struct kr_vip_timing timing;
	/* state */
	char proto[64];			/* keyrouter_<instance> */
	struct kr_config *cfg;
	__u64 cfg_sig;
	struct kr_vip vips[KR_VIP_MAX];
	struct kr_vip_track track[KR_VIP_MAX];
	uint32_t nvips;
	struct kr_vip_facts facts;
	__u64 pkts;
	bool file_dirty;
	char *file_text;		/* what was written last */
	__u32 done_seq;
	struct kr_follow_id gen;		/* the instance followed */
	struct kr_announce_ck ck;
	char last_error[128];		/* the BIRD error logged last */
	struct kr_announce_bgp bgp[KR_ANNOUNCE_MAX_BGP];
	__u32 nbgp;
};

/* Reads the configuration, first round.  0 or -1 (said). */
int kr_announce_init(struct kr_announcer *a);
/* Rounds until *stop; the routes are left as they are when it returns. */
int kr_announce_run(struct kr_announcer *a, volatile sig_atomic_t *stop);
void kr_announce_free(struct kr_announcer *a);

/* One command on BIRD's control socket: its reply's text (without the codes) into out;
 * returns the reply's final code (0..9999: < 1000 success), or -errno. */
int kr_bird_cmd(const char *sock, const char *cmd, char *out, size_t len);

#endif
