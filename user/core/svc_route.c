// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The data path's route of a service's key, in userspace (svc_route.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "svc_route.h"

int kr_unit_ring_build(const struct kr_unit *u, struct kr_ring **out, struct kr_err *err)
{
	struct kr_backend_spec *spec = calloc(u->n ? u->n : 1, sizeof(*spec));
	int rc;

	if (!spec)
		return kr_errf(err, "out of memory");
	for (uint32_t i = 0; i < u->n; i++) {
		spec[i].addr = u->ring->backends[u->idx[i]].addr;
		spec[i].weight = u->ring->backends[u->idx[i]].weight;
	}
	rc = kr_ring_build(out, spec, u->n, u->ring->format == 1 ? KR_RING_V1 : KR_RING_V2,
			   u->ring->format == 1 ? 0 : u->ring->point_multiple, err);
	free(spec);
	if (rc)
		kr_err_prefix(err, "ring '%s'", u->name);
	return rc;
}

/* cfg_index and eligible for sr->nb backends, the per-index arrays for nindex indices
 * (the configuration's backends first: address, subset membership by tags).  0 or -1. */
static int alloc_indices(struct kr_svc_route *sr, uint32_t nindex, struct kr_err *err)
{
	uint32_t nb = sr->nb;

	sr->nindex = nindex;
	sr->cfg_index = calloc(nb ? nb : 1, sizeof(*sr->cfg_index));
	sr->eligible = calloc(nb ? nb : 1, 1);
	sr->state = calloc(nindex ? nindex : 1, 1);
	sr->in_subset = calloc(nindex ? nindex : 1, 1);
	sr->addr = calloc(nindex ? nindex : 1, sizeof(*sr->addr));
	sr->spill = calloc(nindex ? nindex : 1, sizeof(*sr->spill));
	if (!sr->cfg_index || !sr->eligible || !sr->state || !sr->in_subset || !sr->addr ||
	    !sr->spill)
		return kr_errf(err, "out of memory");
	sr->nospill = sr->svc->key.type == KR_KEY_QUIC;
	sr->hot = sr->cring->hot_keys;
	sr->nhot = sr->cring->nhot_keys;
	for (uint32_t b = 0; b < sr->cring->nbackends && b < nindex; b++) {
		sr->addr[b] = sr->cring->backends[b].addr;
		sr->spill[b] = sr->cring->backends[b].has_spill ? sr->cring->backends[b].spill : 0;
		sr->in_subset[b] = kr_cfg_in_subset(sr->svc, &sr->cring->backends[b]);
	}
	return 0;
}

static bool same_addr(const struct kr_sockaddr *a, const struct kr_sockaddr *b)
{
	return a->family == b->family && a->port == b->port &&
	       !memcmp(a->ip, b->ip, a->family == 4 ? 4 : 16);
}

int kr_svc_route_init_live(struct kr_svc_route *sr, const struct kr_config *cfg, uint32_t svc,
			   struct kr_svc_live_slot *ls, struct kr_err *err)
{
	uint32_t ncfg, extra = 0;

	memset(sr, 0, sizeof(*sr));
	sr->cfg = cfg;
	sr->svc = &cfg->services[svc];
	sr->cring = &cfg->rings[sr->svc->ring];
	ncfg = sr->cring->nbackends;
	if (kr_image_view(&sr->img, ls->buf, ls->size, err))
		return ls->buf = NULL, -1;
	ls->buf = NULL;
	if (sr->img.hdr->nbackends != ls->nb) {
		kr_svc_route_free(sr);
		return kr_errf(err, "published image: %u backends, %u addresses",
			       sr->img.hdr->nbackends, ls->nb);
	}
	sr->nb = ls->nb;
	if (alloc_indices(sr, ncfg + ls->nb, err)) {
		kr_svc_route_free(sr);
		return -1;
	}
	for (uint32_t i = 0; i < ls->nb; i++) {
		uint32_t ci = UINT32_MAX;

		for (uint32_t b = 0; b < ncfg && ci == UINT32_MAX; b++)
			if (same_addr(&sr->addr[b], &ls->addr[i]))
				ci = b;
		if (ci == UINT32_MAX) {
			ci = ncfg + extra++;
			sr->addr[ci] = ls->addr[i];
		}
		sr->cfg_index[i] = ci;
		sr->state[ci] = ls->state[i];
		sr->spill[ci] = ls->spill ? ls->spill[i] : 0;
		/* the data path's membership: the instance's, not the configuration's tags */
		sr->in_subset[ci] = ls->member ? ls->member[i] : 1;
		sr->eligible[i] = ls->state[i] == KR_BACKEND_UP && sr->in_subset[ci];
	}
	sr->nindex = ncfg + extra;
	return 0;
}

int kr_svc_route_init(struct kr_svc_route *sr, const struct kr_config *cfg, uint32_t svc,
		      const uint8_t *states, struct kr_err *err)
{
	struct kr_units us;
	const struct kr_unit *u;
	uint32_t nb;
	int rc = -1;

	memset(sr, 0, sizeof(*sr));
	sr->cfg = cfg;
	sr->svc = &cfg->services[svc];
	sr->cring = &cfg->rings[sr->svc->ring];
	if (kr_units_plan(cfg, &us, true)) {
		kr_units_free(&us);
		return kr_errf(err, "%s: service '%s': couldn't plan its ring", cfg->file,
			       sr->svc->name);
	}
	u = &us.u[us.svc_unit[svc]];
	snprintf(sr->unit, sizeof(sr->unit), "%s", u->name);
	sr->shared_subset = us.svc_subset[svc] != 0;
	sr->dedicated = !sr->shared_subset && u->subset_mask;
	if (kr_unit_ring_build(u, &sr->ring, err) ||
	    kr_image_encode(&sr->img, sr->ring, NULL, err))
		goto out;
	nb = sr->nb = sr->ring->nbackends;
	if (alloc_indices(sr, sr->cring->nbackends, err))
		goto out;
	for (uint32_t b = 0; b < sr->cring->nbackends; b++)
		sr->state[b] = states ? states[b] : sr->cring->backends[b].state;
	for (uint32_t i = 0; i < nb; i++) {
		uint32_t ci = u->idx[i];

		sr->cfg_index[i] = ci;
		sr->eligible[i] = sr->state[ci] == KR_BACKEND_UP && sr->in_subset[ci];
	}
	rc = 0;
out:
	kr_units_free(&us);
	if (rc)
		kr_svc_route_free(sr);
	return rc;
}

/* bpf/kr_ring.h kr_ring_any_up(): an eligible backend among the table's first entries. */
static bool any_up(const struct kr_svc_route *sr)
{
	for (uint32_t b = 0; b < KR_ANY_UP_SCAN; b++) {
		if (b >= sr->nb)
			return false;
		if (sr->eligible[b])
			return true;
	}
	return true;
}

/* Point's backend b for key hash h: 0 not eligible, 1 eligible, 2 eligible but h spills. */
static int backend_ok(const struct kr_svc_route *sr, uint32_t b, uint32_t h)
{
	uint16_t sp = sr->spill[sr->cfg_index[b]];

	if (!sr->eligible[b])
		return 0;
	return sp && !sr->nospill && kr_spill_hit(h, sp) ? 2 : 1;
}

static void skipped(const struct kr_svc_route *sr, uint32_t b, int ok, struct kr_svc_result *res)
{
	if (ok == 2)
		res->skipped_spill++;
	else if (sr->state[sr->cfg_index[b]] != KR_BACKEND_UP)
		res->skipped_down++;
	else
		res->skipped_subset++;
}

/* A hot key: the replica-th distinct eligible backend from its point, no spill (bpf/kr_ring.h
 * kr_ring_replica_walk); fewer within KR_MAX_WALK points: the first.  res->point set. */
static int route_replica(const struct kr_svc_route *sr, uint32_t h, uint32_t k,
			 struct kr_svc_result *res)
{
	uint32_t n = sr->img.hdr->npoints, idx = res->point, ph, b, last = UINT32_MAX;
	uint32_t limit = n - 1 < KR_MAX_WALK ? n - 1 : KR_MAX_WALK, seen[KR_MAX_REPLICAS], ns = 0;
	uint32_t want = sr->has_client ? sr->client_pick % k : 0;

	(void)h;
	res->replicas = k;
	for (uint32_t i = 0; i <= limit; i++, idx = idx + 1 < n ? idx + 1 : 0) {
		bool dup = false;

		if (kr_image_point(&sr->img, idx, &ph, &b))
			return -1;
		if (b == last)
			continue;
		last = b;
		for (uint32_t j = 0; j < ns; j++)
			dup = dup || seen[j] == b;
		if (dup || !sr->eligible[b])
			continue;
		if (ns == want || !ns) {
			res->image_index = idx;
			res->backend = sr->cfg_index[b];
			res->walk = i;
			res->replica = ns;
			if (ns == want)
				return 0;
		}
		if (ns >= KR_MAX_REPLICAS - 1)
			break;
		seen[ns++] = b;
	}
	if (!ns)
		res->reason = limit == n - 1 || !any_up(sr) ? KR_ROUTE_ALL_DOWN : KR_ROUTE_WALK_LIMIT;
	return 0;
}

int kr_svc_route_hash(const struct kr_svc_route *sr, uint32_t h, struct kr_svc_result *res)
{
	uint32_t n = sr->img.hdr->npoints, idx, ph, b, last, limit, fb_idx = 0, fb_b = 0, fb_walk = 0;
	bool fb = false;
	int ok;

	memset(res, 0, sizeof(*res));
	if (kr_image_lookup(&sr->img, h, &idx) || kr_image_point(&sr->img, idx, &ph, &b))
		return -1;
	res->point = res->image_index = idx;
	res->ring_index = kr_image_ring_index(&sr->img, idx);
	res->point_backend = res->backend = sr->cfg_index[b];
	for (uint32_t i = 0; !sr->nospill && i < sr->nhot; i++)
		if (sr->hot[i].hash == h)
			return route_replica(sr, h, sr->hot[i].replicas, res);
	ok = backend_ok(sr, b, h);
	if (ok == 1)
		return 0;	/* KR_ROUTE_OK, no walk */
	skipped(sr, b, ok, res);
	if (ok == 2)
		fb = true, fb_idx = idx, fb_b = b, fb_walk = 0;
	last = b;
	limit = n - 1 < KR_MAX_WALK ? n - 1 : KR_MAX_WALK;
	for (uint32_t i = 1; i <= limit; i++) {
		idx = idx + 1 < n ? idx + 1 : 0;
		if (kr_image_point(&sr->img, idx, &ph, &b))
			return -1;
		if (b == last)
			continue;
		last = b;
		ok = backend_ok(sr, b, h);
		if (ok == 1) {
			res->image_index = idx;
			res->backend = sr->cfg_index[b];
			res->walk = i;
			res->spilled = fb;
			return 0;
		}
		skipped(sr, b, ok, res);
		if (ok == 2 && !fb)
			fb = true, fb_idx = idx, fb_b = b, fb_walk = i;
	}
	if (fb) {		/* every eligible backend reached spills the key: the first */
		res->image_index = fb_idx;
		res->backend = sr->cfg_index[fb_b];
		res->walk = fb_walk;
		return 0;
	}
	res->walk = limit;
	res->reason = limit == n - 1 || !any_up(sr) ? KR_ROUTE_ALL_DOWN : KR_ROUTE_WALK_LIMIT;
	return 0;
}

int kr_svc_route_walk3(const struct kr_svc_route *sr, uint32_t ii, uint32_t out[3])
{
	uint32_t hh, b;

	for (int k = 0; k < 3; k++) {
		ii = kr_image_next_ring_point(&sr->img, ii);
		if (kr_image_point(&sr->img, ii, &hh, &b))
			return -1;
		out[k] = sr->cfg_index[b];
	}
	return 0;
}

void kr_svc_route_free(struct kr_svc_route *sr)
{
	kr_image_free(&sr->img);
	kr_ring_free(sr->ring);
	free(sr->cfg_index);
	free(sr->eligible);
	free(sr->state);
	free(sr->in_subset);
	free(sr->addr);
	free(sr->spill);
	memset(sr, 0, sizeof(*sr));
}
