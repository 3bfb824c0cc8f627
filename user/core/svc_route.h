/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where the data path sends a key of a service (what `lookup --service` answers): the
 * ring it walks -- the service's ring, or the dedicated ring of its subset (units.h) --
 * and the failover walk of bpf/kr_ring.h, step for step: from the key's point, past
 * backends that are down, draining or (for a subset sharing its ring) not members, over
 * at most KR_MAX_WALK image points; with no eligible backend, the service's no-route
 * policy.  Backend states come from the configuration or from the caller (the live ones).
 *
 *   struct kr_svc_route sr;
 *   kr_svc_route_init(&sr, cfg, svc, NULL, &err);
 *   kr_svc_route_hash(&sr, hash, &res);
 *   kr_svc_route_free(&sr);
 *
 * Spill (docs/datapath.md "Spill and hot-key replicas"): a backend whose spill fraction s
 * is above the key's kr_spill_hash() >> 16 is walked past like a drained one; when every
 * eligible backend the walk reaches spills the key, the first of them.  QUIC services:
 * none.  Hot-key replicas are the caller's (they depend on the packet's source).
 */
#ifndef KR_SVC_ROUTE_H
#define KR_SVC_ROUTE_H

#include <stdbool.h>
#include <stdint.h>
#include "config.h"
#include "continuum.h"
#include "err.h"
#include "image.h"
#include "units.h"

struct kr_svc_route {
	const struct kr_config *cfg;
	const struct kr_cfg_service *svc;
	const struct kr_cfg_ring *cring;	/* the configuration's ring of the service */
	char unit[KR_NAME_MAX];		/* the ring the data path walks: "web" or
						 * "web[tag,...]" (a dedicated subset ring) */
	bool dedicated;				/* the subset has a ring of its own */
	bool shared_subset;			/* the subset shares the ring (membership) */
	struct kr_ring *ring;			/* the walked ring (its own local indices);
						 * NULL for a published image (_init_live) */
	struct kr_image img;			/* its image (the walk runs over image points) */
	uint32_t nb;				/* backends of the walked ring */
	uint32_t *cfg_index;			/* [nb] -> backend index (below) */
	/* Backend indices: 0 .. cring->nbackends - 1 are the configuration's ring's backends;
	 * a published image (_init_live) may have backends the configuration no longer has:
	 * they get the indices after them, up to nindex - 1. */
	uint32_t nindex;
	uint8_t *state;				/* [nindex] enum kr_backend_state */
	uint8_t *in_subset;			/* [nindex] 1: in the service's subset */
	struct kr_sockaddr *addr;		/* [nindex] */
	uint8_t *eligible;			/* [nb] up and in the subset */
	uint16_t *spill;			/* [nindex] spill fraction (2^-16) */
	bool nospill;				/* a QUIC service: spill does not apply */
	/* hot keys (the configuration's, or the caller's: the live ones) and the client
	 * whose replica is asked for (client_pick = kr_replica_pick() of its source) */
	const struct kr_cfg_hot_key *hot;
	uint32_t nhot;
	bool has_client;
	uint32_t client_pick;
};

/* One published slot of the ring a service walks, as the running instance has it. */
struct kr_svc_live_slot {
	void *buf;			/* the image copied out of the kernel (taken over) */
	size_t size;
	uint32_t nb;			/* entries of its backend table */
	struct kr_sockaddr *addr;	/* [nb] each entry's address (kr_backends) */
	uint8_t *state;			/* [nb] its state */
	uint8_t *member;		/* [nb] 1: in the service's subset (kr_subset_members);
					 * NULL: the service has no shared subset */
	uint16_t *spill;		/* [nb] its spill fraction (NULL: none) */
};

struct kr_svc_result {
	int reason;		/* enum kr_route_reason: KR_ROUTE_OK, _ALL_DOWN, _WALK_LIMIT */
	uint32_t point;		/* image index of the key's point */
	uint32_t ring_index;	/* its ring index */
	uint32_t point_backend;	/* its backend (index in cring) */
	uint32_t image_index;	/* the chosen point (KR_ROUTE_OK) */
	uint32_t backend;	/* the chosen backend (index in cring) (KR_ROUTE_OK) */
	uint32_t walk;		/* image points walked past the key's point */
	uint32_t skipped_down, skipped_subset;	/* distinct backends the walk passed over */
	uint32_t skipped_spill;	/* ... that the key spills from (spill fraction) */
	bool spilled;		/* routed past a backend the key spills from */
	uint32_t replicas;	/* a hot key: its replicas (0: not a hot key) */
	uint32_t replica;	/* ... the client's (0 without a client: the owner) */
};

/* states: [cring->nbackends] states to use (e.g. the live ones), NULL = the config's.
 * 0, or -1 with err set. */
int kr_svc_route_init(struct kr_svc_route *sr, const struct kr_config *cfg, uint32_t svc,
		      const uint8_t *states, struct kr_err *err);
/* The same over a published image instead of the configuration's ring: the route the
 * running instance gives keys that its slot routes (lookup --live).  Backends are matched
 * to the configuration's by address.  ls->buf is taken over.  0, or -1 with err set. */
int kr_svc_route_init_live(struct kr_svc_route *sr, const struct kr_config *cfg, uint32_t svc,
			   struct kr_svc_live_slot *ls, struct kr_err *err);
/* The route of key hash h.  0, or -1 for an inconsistent image. */
int kr_svc_route_hash(const struct kr_svc_route *sr, uint32_t h, struct kr_svc_result *res);
/* The ring-local backends b1..b3 after image point ii (as `lookup` prints them), mapped to
 * indices in cring. */
int kr_svc_route_walk3(const struct kr_svc_route *sr, uint32_t ii, uint32_t out[3]);
void kr_svc_route_free(struct kr_svc_route *sr);

/* Builds the ring of a unit (its backends in the unit's order).  0, or -1 with err. */
int kr_unit_ring_build(const struct kr_unit *u, struct kr_ring **out, struct kr_err *err);

#endif
