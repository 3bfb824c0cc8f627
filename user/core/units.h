/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ring units: what apply publishes, one ring id each.  Every ring of the config is a unit
 * (all its backends).  A service that selects a subset of a ring's backends by tags either
 * shares its ring's unit (a struct kr_subset: subset id + members in kr_subset_members,
 * the kernel walk skips the others) when the expected walk is short, or gets a unit of its
 * own, named "RING[tag,tag]" (tags sorted): a dedicated ring built from the subset alone.
 * Either is bit-identical to the subset's ring (docs/operations.md "Subsets").
 */
#ifndef KR_UNITS_H
#define KR_UNITS_H

#include <stdbool.h>
#include <stdint.h>
#include "config.h"

/* Names of rings, units and instances (the tool's pinned maps hold them too). */
#define KR_NAME_MAX		64
/* kr_ops_rings flags of a ring id */
#define KR_RING_DEDICATED	1u	/* made automatically for a small subset */

struct kr_unit {
	char name[KR_NAME_MAX];
	const struct kr_cfg_ring *ring;
	uint32_t cfg_ring;		/* index into cfg->rings */
	uint64_t subset_mask;		/* 0: the whole ring */
	uint32_t *idx;			/* backends of the unit: indices into ring->backends */
	uint32_t n;
	int ring_id;			/* set by apply */
	uint32_t *gid;			/* [n] global backend ids (set by apply) */
};

/* A subset sharing its ring's points: the kernel walks the ring's unit skipping the
 * backends that are not members (kr_subset_members). */
struct kr_subset {
	char name[KR_NAME_MAX];	/* "RING[tag,tag]" */
	uint32_t unit;			/* the whole ring's unit */
	uint64_t mask;
	__u32 id;			/* kr_service.subset_id: CRC-32 of the name, never 0 */
};

struct kr_units {
	struct kr_unit *u;
	uint32_t n;
	uint32_t *svc_unit;		/* [cfg->nservices] unit of each service */
	uint32_t *svc_ring;		/* [cfg->nservices] ring id (after kr_units_resolve) */
	__u32 *svc_subset;		/* [cfg->nservices] kr_service.subset_id (0: none) */
	struct kr_subset *sub;	/* shared subsets */
	uint32_t nsub;
};

/* Plan the units.  share: the data path has kr_subset_members, so a subset whose expected
 * walk (ring weight / subset weight) is at most KR_SUBSET_SHARE_MAX_WALK shares its ring;
 * smaller subsets (or all, without share) get a dedicated ring. */
int kr_units_plan(const struct kr_config *cfg, struct kr_units *us, bool share);
/* Fill svc_ring from the units' ring ids. */
int kr_units_resolve(struct kr_units *us, const struct kr_config *cfg);
int kr_units_find(const struct kr_units *us, const char *name);
void kr_units_free(struct kr_units *us);
/* The unit name of ring + subset mask ("web" or "web[eu,ssd]"). */
void kr_unit_name(const struct kr_cfg_ring *ring, uint64_t mask, char *buf, size_t len);

#endif
