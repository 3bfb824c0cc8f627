// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Global backend ids, one per server (see backend_ids.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "backend_ids.h"

static uint32_t fnv(uint32_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

static uint32_t hash_ap(const struct kr_backend *b)
{
	uint32_t h = fnv(2166136261u, &b->family, 1);

	h = fnv(h, b->addr, b->family == 4 ? 4 : 16);
	return fnv(h, &b->port, 2);
}

static uint32_t hash_full(const struct kr_backend *b)
{
	uint32_t h = hash_ap(b);

	h = fnv(h, b->mac, 6);
	return fnv(h, &b->ifindex, 4);
}

/* 64-bit FNV-1a, then MurmurHash3's fmix64 finalizer (all bits of the FNV state reach the
 * low ones a modulo keeps). */
static uint64_t fnv64(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

uint32_t kr_ids_home(const struct kr_backend *b, uint32_t max)
{
	uint64_t h = fnv64(0xcbf29ce484222325ull, &b->family, 1);

	h = fnv64(h, b->addr, b->family == 4 ? 4 : 16);
	h = fnv64(h, &b->port, 2);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return max ? (uint32_t)(h % max) : 0;
}

int kr_ids_cmp(const struct kr_backend *a, const struct kr_backend *b)
{
	int c = (int)a->family - (int)b->family;

	if (!c)
		c = memcmp(a->addr, b->addr, 16);
	if (!c)
		c = memcmp(&a->port, &b->port, 2);	/* network order: numeric order */
	if (!c)
		c = memcmp(a->mac, b->mac, 6);
	if (!c)
		c = a->ifindex < b->ifindex ? -1 : a->ifindex > b->ifindex;
	return c;
}

static bool same_ap(const struct kr_backend *a, const struct kr_backend *b)
{
	return a->family == b->family && a->port == b->port &&
	       !memcmp(a->addr, b->addr, a->family == 4 ? 4 : 16);
}

bool kr_ids_same(const struct kr_backend *a, const struct kr_backend *b)
{
	return same_ap(a, b) && !memcmp(a->mac, b->mac, 6) && a->ifindex == b->ifindex;
}

static void ht_put(uint32_t *ht, uint32_t mask, uint32_t h, uint32_t id)
{
	while (ht[h & mask])
		h++;
	ht[h & mask] = id + 1;
}

int kr_ids_init(struct kr_ids *ids, const struct kr_backend *cur, uint32_t max)
{
	uint32_t hsize = 1024;

	memset(ids, 0, sizeof(*ids));
	while (hsize < 4 * (uint64_t)max)
		hsize *= 2;	/* each id at most twice (start, in-place move or new): load <= 1/2 */
	ids->max = max;
	ids->hmask = hsize - 1;
	ids->ent = calloc(max ? max : 1, sizeof(*ids->ent));
	ids->flag = calloc(max ? max : 1, 1);
	ids->ht_full = calloc(hsize, sizeof(uint32_t));
	ids->ht_ap = calloc(hsize, sizeof(uint32_t));
	if (!ids->ent || !ids->flag || !ids->ht_full || !ids->ht_ap) {
		kr_ids_free(ids);
		return -ENOMEM;
	}
	for (uint32_t id = 0; cur && id < max; id++)
		kr_ids_existing(ids, id, &cur[id]);
	return 0;
}

void kr_ids_existing(struct kr_ids *ids, uint32_t id, const struct kr_backend *v)
{
	if (id >= ids->max || !v->family || v->state == KR_BACKEND_UNUSED ||
	    (ids->flag[id] & KR_IDS_EXISTING))
		return;
	ids->ent[id] = *v;
	ids->flag[id] |= KR_IDS_EXISTING;
	ht_put(ids->ht_full, ids->hmask, hash_full(v), id);
	ht_put(ids->ht_ap, ids->hmask, hash_ap(v), id);
}

void kr_ids_free(struct kr_ids *ids)
{
	free(ids->ent);
	free(ids->flag);
	free(ids->ht_full);
	free(ids->ht_ap);
	memset(ids, 0, sizeof(*ids));
}

void kr_ids_reference(struct kr_ids *ids, uint32_t id)
{
	if (id < ids->max)
		ids->flag[id] |= KR_IDS_REFERENCED;
}

static void claim(struct kr_ids *ids, uint32_t id)
{
	if (!(ids->flag[id] & KR_IDS_CLAIMED))
		ids->nclaimed++;
	ids->flag[id] |= KR_IDS_CLAIMED;
}

/* id comes before best (UINT32_MAX: none yet) on the probe sequence from home (wrapping). */
static bool nearer(const struct kr_ids *ids, uint32_t home, uint32_t id, uint32_t best)
{
	return best == UINT32_MAX ||
	       (id >= home ? id - home : ids->max - home + id) <
	       (best >= home ? best - home : ids->max - home + best);
}

int kr_ids_get(struct kr_ids *ids, const struct kr_backend *want, bool exact_only,
		   uint32_t *id, bool *in_place)
{
	uint32_t h, v, best = UINT32_MAX, home = kr_ids_home(want, ids->max);

	*in_place = false;
	/* 1. the same identity (when several ids have it -- the per-ring ids of an older
	 *    keyrouter -- the nearest after its home: they converge on the canonical one) */
	for (h = hash_full(want); (v = ids->ht_full[h & ids->hmask]); h++)
		if (kr_ids_same(&ids->ent[v - 1], want) && nearer(ids, home, v - 1, best))
			best = v - 1;
	if (best != UINT32_MAX) {
		*id = best;
		claim(ids, best);
		return 0;
	}
	if (exact_only)
		return -ENOENT;
	/* 2. the same address:port under another forwarding, not taken by this config */
	for (h = hash_ap(want); (v = ids->ht_ap[h & ids->hmask]); h++)
		if ((ids->flag[v - 1] & (KR_IDS_EXISTING | KR_IDS_CLAIMED)) == KR_IDS_EXISTING &&
		    same_ap(&ids->ent[v - 1], want) && nearer(ids, home, v - 1, best))
			best = v - 1;
	if (best != UINT32_MAX) {
		*in_place = true;
		ids->nin_place++;
		goto take;
	}
	/* 3. the canonical id: the server's home, else the next free id after it (mod max) */
	best = home;
	for (v = 0; v < ids->max && ids->flag[best]; v++)
		best = best + 1 == ids->max ? 0 : best + 1;
	if (v >= ids->max)
		return -ENOSPC;
	ht_put(ids->ht_ap, ids->hmask, hash_ap(want), best);
take:
	ids->ent[best] = *want;
	ht_put(ids->ht_full, ids->hmask, hash_full(want), best);
	*id = best;
	claim(ids, best);
	return 0;
}

int kr_ids_pin(struct kr_ids *ids, const struct kr_backend *want, uint32_t id,
		   bool *in_place)
{
	uint8_t f;

	*in_place = false;
	if (id >= ids->max)
		return -ERANGE;
	f = ids->flag[id];
	if (f & KR_IDS_CLAIMED)
		return kr_ids_same(&ids->ent[id], want) ? 0 : -EBUSY;
	if ((f & KR_IDS_EXISTING) && !same_ap(&ids->ent[id], want))
		return -EBUSY;
	if (!(f & KR_IDS_EXISTING) && (f & KR_IDS_REFERENCED))
		return -EBUSY;
	if (!(f & KR_IDS_EXISTING))
		ht_put(ids->ht_ap, ids->hmask, hash_ap(want), id);
	else if (!kr_ids_same(&ids->ent[id], want)) {
		*in_place = true;
		ids->nin_place++;
	}
	ids->ent[id] = *want;
	ht_put(ids->ht_full, ids->hmask, hash_full(want), id);
	claim(ids, id);
	return 0;
}
