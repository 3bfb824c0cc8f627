/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Active health checking (`keyrouter health`, docs/operations.md "Health checking"): the
 * configuration's "health" objects, their defaults per key type, the probes' payloads and
 * how a reply is judged, and the rise/fall state machine.  Pure: no sockets, no kernel
 * (the checker's loop is user/cli/cmd_health.c, its maps user/kernel/ops_health.c).
 */
#ifndef KR_HEALTH_H
#define KR_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kr_probe_type {
	KR_PROBE_AUTO = 0,	/* the default of the service's key type */
	KR_PROBE_NONE,		/* not checked */
	KR_PROBE_DNS,		/* a query for `name`: a response with its ID (and an rcode of
				 * `rcodes`, when given) */
	KR_PROBE_MEMCACHED,	/* memcached UDP frame + "version\r\n": a "VERSION" reply */
	KR_PROBE_QUIC,		/* a long header with a reserved version: Version Negotiation */
	KR_PROBE_UDP,		/* `request`; a reply starting with `expect` (any, without) */
};

/* Fields of struct kr_cfg_health given in the file (the rest inherit). */
#define KR_HC_PROBE	(1u << 0)
#define KR_HC_NAME	(1u << 1)
#define KR_HC_RCODES	(1u << 2)
#define KR_HC_REQUEST	(1u << 3)
#define KR_HC_EXPECT	(1u << 4)
#define KR_HC_INTERVAL	(1u << 5)
#define KR_HC_TIMEOUT	(1u << 6)
#define KR_HC_RISE	(1u << 7)
#define KR_HC_FALL	(1u << 8)
#define KR_HC_JITTER	(1u << 9)
#define KR_HC_PANIC	(1u << 10)
#define KR_HC_DAMP_SUPPRESS	(1u << 11)
#define KR_HC_DAMP_REUSE	(1u << 12)
#define KR_HC_DAMP_HALF_LIFE	(1u << 13)
#define KR_HC_DAMP_MAX_HOLD	(1u << 14)
#define KR_HC_WATCHDOG		(1u << 15)

/* Defaults (docs/config.md "Health checks"). */
#define KR_HC_DEF_INTERVAL_MS	2000
#define KR_HC_DEF_TIMEOUT_MS	1000
#define KR_HC_DEF_RISE		2
#define KR_HC_DEF_FALL		3
#define KR_HC_DEF_JITTER_PCT	10	/* of the interval */
#define KR_HC_DEF_PANIC		0.5
#define KR_HC_DEF_DNS_NAME	"id.server"	/* CH TXT: the server answers itself */
#define KR_HC_MAX_BYTES		512	/* request / expect */
/* Flap damping (RFC 2439's idea): each flap (a down the checker decides) adds
 * KR_DAMP_PENALTY; above the suppress threshold the backend is held down until the penalty,
 * halving every half-life, is below the reuse threshold.  With these a backend that goes down
 * three times within about a minute is held (a 2 s down / 2 s up flapper: at its third
 * down), two outages in a row are not (2 x 1000 < 2000), and the hold lasts at most max_hold
 * after the last flap. */
#define KR_DAMP_PENALTY			1000
/* A short failure: an up backend (or a held one that answered again) fails fewer probes in
 * a row than `fall`, then answers.  It adds half a flap: a backend that flaps faster than
 * fall x interval (2 s down / 2 s up at the default interval of 2 s never fails 3 probes in
 * a row, yet loses half its queries) is held down at its fifth short failure within about
 * a minute; one lost probe now and then (1 a minute decays to ~1000) never is. */
#define KR_DAMP_BLIP			500
/* ... when its failed probes span at least this long (failed x interval): at a fast interval
 * a probe or two lost now and then is noise, not a backend out of service. */
#define KR_DAMP_BLIP_MIN_MS		1000
#define KR_HC_DEF_DAMP_SUPPRESS		2000	/* 0: no damping */
#define KR_HC_DEF_DAMP_REUSE		750
#define KR_HC_DEF_DAMP_HALF_LIFE_MS	30000
#define KR_HC_DEF_DAMP_MAX_HOLD_MS	300000
#define KR_HC_DEF_WATCHDOG_MS		1000	/* the checker's re-attach check; 0: off */

/* A "health" object of a ring or of a backend (only the fields in `set` were given). */
struct kr_cfg_health {
	uint32_t set;			/* KR_HC_* */
	uint8_t probe;			/* enum kr_probe_type */
	char *name;			/* dns: query name (text form) */
	uint32_t rcodes;		/* dns: bit r = rcode r counts (0: any) */
	uint8_t *request, *expect;
	uint16_t request_len, expect_len;
	uint32_t interval_ms, timeout_ms, jitter_ms;
	uint32_t rise, fall;
	double panic;			/* ring only: the share of backends kept up */
	uint32_t damp_suppress, damp_reuse, damp_half_life_ms, damp_max_hold_ms;
	uint32_t watchdog_ms;		/* ring only: the instance's re-attach check */
};

/* What one backend is checked with: defaults <- ring <- backend, the probe resolved. */
struct kr_health_eff {
	uint8_t probe;			/* never AUTO */
	char name[256];
	uint32_t rcodes;
	uint8_t request[KR_HC_MAX_BYTES], expect[KR_HC_MAX_BYTES];
	uint16_t request_len, expect_len;
	uint32_t interval_ms, timeout_ms, jitter_ms, rise, fall;
	double panic;
	struct kr_damp_params {
		uint32_t suppress, reuse;	/* penalties (KR_DAMP_PENALTY = one flap) */
		uint32_t half_life_ms, max_hold_ms;
	} damp;
};

struct kr_config;
/* The health of backend bi of ring ri, probed through service si (its key type picks the
 * default probe: dns -> dns, memcache -> memcached, quic -> quic, others: none). */
void kr_health_resolve(const struct kr_config *cfg, uint32_t ri, uint32_t bi, uint32_t si,
		       struct kr_health_eff *out);
const char *kr_probe_name(uint8_t probe);
void kr_cfg_health_free(struct kr_cfg_health *h);

/* ---- probes ---------------------------------------------------------------------------- */
/* The probe's UDP payload into buf (at least 600 bytes); seq makes it unique (DNS ID,
 * memcached request id, QUIC connection IDs).  Returns its length, or -1 (bad DNS name). */
int kr_probe_build(const struct kr_health_eff *h, uint32_t seq, uint8_t *buf, size_t cap);
/* Does reply answer the probe built with seq?  (For the DNS probe, the rcode must be one
 * of h->rcodes when given.) */
bool kr_probe_match(const struct kr_health_eff *h, uint32_t seq, const uint8_t *reply,
		    size_t len);

/* ---- the state machine of one backend ---------------------------------------------------- */
struct kr_hsm {
	bool up;			/* the checker's view */
	uint32_t ok_run, fail_run;	/* consecutive successes / failures */
};
enum kr_hsm_event { KR_HSM_NONE = 0, KR_HSM_WANT_DOWN, KR_HSM_WANT_UP };
/* One probe result: WANT_DOWN after `fall` consecutive failures of an up backend,
 * WANT_UP after `rise` consecutive successes of a down one (the caller writes the state,
 * then calls kr_hsm_set). */
enum kr_hsm_event kr_hsm_result(struct kr_hsm *s, bool ok, uint32_t rise, uint32_t fall);
void kr_hsm_set(struct kr_hsm *s, bool up);
/* Would marking one more backend down leave fewer than panic * total of them up? */
bool kr_health_panic(uint32_t up, uint32_t total, double panic);
/* A state the checker leaves alone: down or drain set by an operator (backend set) or the
 * configuration (state, enum kr_backend_state; owner, enum kr_backend_owner). */
bool kr_health_overridden(uint8_t state, uint8_t owner);
/* The re-attach check interval of an instance: the smallest "watchdog" of the rings (0 in
 * one: off), KR_HC_DEF_WATCHDOG_MS when none gives it. */
uint32_t kr_health_watchdog_ms(const struct kr_config *cfg);

/* ---- flap damping of one backend ---------------------------------------------------------- */
struct kr_damp {
	double penalty;			/* at at_ms */
	uint64_t at_ms;			/* monotonic */
	uint32_t flaps;			/* downs counted */
	bool held;			/* held down */
	bool seen_up;			/* held: the probes say it is up again */
};
/* The penalty at now_ms (decayed). */
double kr_damp_penalty(const struct kr_damp *d, const struct kr_damp_params *p, uint64_t now_ms);
/* A flap (the checker marks the backend down, or a held one fails again after it answered):
 * the penalty decays to now, KR_DAMP_PENALTY is added (up to the ceiling reuse x
 * 2^(max_hold / half_life), so a hold ends at most max_hold after the last flap); above
 * suppress the backend is held.  Returns held. */
bool kr_damp_flap(struct kr_damp *d, const struct kr_damp_params *p, uint64_t now_ms);
/* A short failure ended (KR_DAMP_BLIP, counted in flaps as a flap is): the penalty decays to
 * now, KR_DAMP_BLIP is added (same ceiling); above suppress the backend is held -- the caller
 * marks it down.  Returns held. */
bool kr_damp_blip(struct kr_damp *d, const struct kr_damp_params *p, uint64_t now_ms);
/* May a backend that answers again be marked up?  Not while held; a held one is released
 * (true) once its penalty decayed below reuse. */
bool kr_damp_may_up(struct kr_damp *d, const struct kr_damp_params *p, uint64_t now_ms);
/* Milliseconds until a held backend is released (its penalty reaches reuse; 0: not held). */
uint64_t kr_damp_release_ms(const struct kr_damp *d, const struct kr_damp_params *p,
			    uint64_t now_ms);

/* Internet checksum helpers for the checker's frames. */
uint32_t kr_csum_add(uint32_t sum, const void *p, size_t len);
uint16_t kr_csum_fold(uint32_t sum);

#endif
