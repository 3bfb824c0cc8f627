/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The bounded-load controller's arithmetic (`keyrouter balance`, docs/operations.md "Hot
 * keys: spill and replicas"): from the per-backend rates measured with the spill in
 * effect, the ring, the weights and the hot keys, the spill fractions that keep every
 * backend under C x its weighted fair share, with hysteresis and a bounded step; and the
 * replica counts for the hot keys.  Pure: no kernel, no printing.
 *
 * The model.  A key of hash h has a spill value u = (kr_spill_hash(h) >> 16) / 2^16,
 * treated as uniform on [0, 1) and independent of h.  For a given u the backends that
 * spill it are {b : s_b > u} (the spill hash does not depend on b), so a key routes as in
 * a ring without them: to the first backend after its point, in ring order, that is up
 * and has s_b <= u.  Keys spilled from b therefore land on the backends that follow b's
 * points, and a key spilled again goes further on: the cascade.  Inside one backend's
 * own arcs the traffic is taken as spread evenly over the key space (hot keys are the
 * exception, and are given separately: their traffic is fixed at their replicas).
 *
 *   estimate  measured rates L (the spill s in effect) = M(s) N, N the native load of each
 *             backend (its arcs' traffic with no spill); M(s)[x][b] is the share of b's
 *             arcs that route to x.  Solved for N (M's diagonal is 1 - s_b).
 *   sweep     u from 1 down to 0: every open backend collects the traffic that reaches it
 *             at u; the first one whose total would pass its bound closes at that u
 *             (s_b = u: the keys below u leave it) and its arcs walk on.  The result is the
 *             least spill (each backend's s as small as it can be) that keeps every backend
 *             within its bound: a backend that never fills keeps s = 0, so the keys of
 *             backends that are not overloaded do not move unless spill reaching them
 *             overloads them.
 *   control   s_need = sweep((C - H) x fair), s_aim = sweep((C - 2H) x fair), s_low =
 *             sweep((C - 3H) x fair).  A managed backend whose current s lies in
 *             [s_need, s_low] keeps it (the hysteresis: spill is raised only when a
 *             backend would pass C - H, lowered only when it would stay under C - 3H,
 *             so the measurement's noise has a margin H under the bound C); outside
 *             that band its s goes to s_aim, by at most max_step per round.
 *             Fixed backends (configuration or operator) keep theirs; down backends too.
 */
#ifndef KR_BALANCE_H
#define KR_BALANCE_H

#include <stdbool.h>
#include <stdint.h>
#include "analytics.h"
#include "err.h"
#include "kr_datapath_kern_user.h"	/* kr_spill_hash: the data path's spill test */

#define KR_BAL_ONE		65536.0		/* spill units: s / 2^16 */
#define KR_BAL_MAX_REPLICAS	16
#define KR_BAL_MAX_BACKENDS	1024		/* the estimate solves an n x n system */


struct kr_bal_backend {
	double weight;		/* fair-share weight (its points in the ring) */
	double rate;		/* measured packets/s with the spill in effect */
	uint16_t spill;		/* in effect (units of 2^-16) */
	bool up;		/* eligible; a backend not up has no share and no keys */
	bool fixed;		/* spill set by the configuration or an operator: kept */
};

struct kr_bal_hot {
	uint32_t hash;		/* the key's hash (as the ring is searched with) */
	double rate;		/* packets/s of the key, all its backends together */
	uint32_t replicas;	/* in effect (0 or 1: not replicated) */
	bool fixed;		/* replicas from the configuration / an operator: kept */
	uint32_t replicas_new;	/* out: proposed (0: not replicated) */
};

struct kr_bal_params {
	double bound;		/* C > 1 */
	double hysteresis;	/* H, 0 <= 3H < C - 1 */
	double max_step;	/* largest change of s per round, 0 < max_step <= 1 */
	double spill_max;	/* largest s (0 < spill_max < 1) */
	bool replicas;		/* propose replicas for hot keys */
};

/* Defaults of `keyrouter balance`. */
#define KR_BAL_DEFAULT_BOUND		1.25
#define KR_BAL_DEFAULT_HYSTERESIS	0.05
#define KR_BAL_DEFAULT_MAX_STEP		0.25
#define KR_BAL_DEFAULT_SPILL_MAX	0.99

struct kr_bal_plan {
	uint32_t n;
	uint16_t *spill;	/* [n] the new spill */
	uint16_t *need, *aim;	/* [n] the sweeps at C - H and C - 2H */
	double *fair;		/* [n] C = 1 share of the measured total, by weight */
	double *native;		/* [n] estimated load without any spill or replica */
	double *model_now;	/* [n] the model's load with the spill in effect (check: = rate) */
	double *model_new;	/* [n] the model's load with the new spill and replicas */
	double total;		/* measured packets/s of the ring */
	double moved;		/* model: share of the key space whose backend changes (0..1) */
	double *lost, *gained;	/* [n] model: share of the key space each backend loses/gains */
	uint32_t changed;	/* backends whose spill changes */
	uint32_t replicas_changed;	/* hot keys whose replica count changes */
};

int kr_bal_plan_alloc(struct kr_bal_plan *p, uint32_t n);
void kr_bal_plan_free(struct kr_bal_plan *p);

/* Checks bound, hysteresis, max_step, spill_max; -1 with err naming the bad one. */
int kr_bal_params_check(const struct kr_bal_params *pr, struct kr_err *err);

/*
 * One round of the controller.  ring: the active image's points, owner[] = an index into
 * b[0..n) (ring->nowners == n).  hot[0..nhot): the hot keys the caller knows (may be
 * NULL); replicas_new is written.  Returns 0 with the plan (allocated by the caller with
 * kr_bal_plan_alloc(p, n)), or -1 with err.
 */
int kr_bal_compute(const struct kr_an_ring *ring, const struct kr_bal_backend *b, uint32_t n,
		   struct kr_bal_hot *hot, uint32_t nhot, const struct kr_bal_params *pr,
		   struct kr_bal_plan *p, struct kr_err *err);

/* The backend a key of hash h goes to under spill s[] (up[] eligible), walking from its
 * point: exactly what the data path decides for a key that is not a hot key (when every up
 * backend spills it: the first up one).  UINT32_MAX when every backend is down. */
uint32_t kr_bal_route(const struct kr_an_ring *ring, const bool *up, const uint16_t *s,
		      uint32_t h);

/* The first k distinct up backends from the point of hash h (a hot key's replicas), into
 * out[0..k); returns how many there are (< k when fewer backends are up). */
uint32_t kr_bal_replicas(const struct kr_an_ring *ring, const bool *up, uint32_t h, uint32_t k,
			 uint32_t *out);

#endif
