/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The exact price of a spill (or state) change: which keys of the 32-bit key space move,
 * from which backend to which, before anything is published (`keyrouter diff`, the
 * controller's advise mode).  The data path's rule (docs/datapath.md "Spill and hot-key
 * replicas"): a key of hash h at ring point i walks the distinct backends from i on, skips
 * those not up, and stops at the first whose spill fraction s (2^-16) is at most
 * (h * 0x9E3779B1 mod 2^32) >> 16 -- or, when all spill it, at the first up one.  On one
 * arc of the ring the destination is a step function of that value, so the keys of the arc
 * going to each backend are counted exactly, with floor sums (O(log) each), not sampled.
 *
 *   struct kr_spill_side before = { up0, spill0 }, after = { up1, spill1 };
 *   kr_spill_price(ring, &before, &after, 0, 1ull << 32, &price);
 *
 * Hot-key replicas change single hashes (one key of 2^32 each): they are priced by the
 * caller, per key (the replicas it gains or loses).  Points of equal hash that
 * deduplication removed are not walked here (the data path walks them right after their
 * winner): a ring without hash collisions (ring.ndups == 0) is priced exactly.
 */
#ifndef KR_SPILL_PRICE_H
#define KR_SPILL_PRICE_H

#include <stdint.h>
#include "continuum.h"

struct kr_spill_side {
	const uint8_t *up;		/* [nbackends] 1: up (eligible) */
	const uint16_t *spill;		/* [nbackends] spill fraction, 2^-16 (NULL: none) */
};

struct kr_spill_price {
	uint32_t nb;			/* backends; index nb = "no route" */
	uint64_t keys;			/* keys priced (hi - lo) */
	uint64_t moved;			/* keys whose backend differs */
	uint64_t *lost, *gained;	/* [nb + 1] keys that leave / reach each backend */
	uint64_t *before, *after;	/* [nb + 1] keys on each backend before / after */
};

/* Keys of hash in [lo, hi) (hi <= 2^32) of ring r: before and after.  0, or -1 (out of
 * memory).  Free with kr_spill_price_free(). */
int kr_spill_price(const struct kr_ring *r, const struct kr_spill_side *before,
		   const struct kr_spill_side *after, uint64_t lo, uint64_t hi,
		   struct kr_spill_price *out);
void kr_spill_price_free(struct kr_spill_price *p);

/* The backend key hash h goes to (the rule above; nbackends = no route): the reference. */
uint32_t kr_spill_route(const struct kr_ring *r, const struct kr_spill_side *s, uint32_t h);

/* #{h in [0, n) : (h * a mod 2^32) < t}, t <= 2^32: exact. */
uint64_t kr_mulmod_count_below(uint64_t n, uint32_t a, uint64_t t);

#endif
