// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Ring units of a configuration (see units.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "continuum.h"
#include "log.h"
#include "units.h"

static int tag_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void kr_unit_name(const struct kr_cfg_ring *ring, uint64_t mask, char *buf, size_t len)
{
	const char *tags[KR_CFG_MAX_TAGS];
	char list[1024] = "";
	size_t n = 0, off = 0;

	if (!mask) {
		snprintf(buf, len, "%s", ring->name);
		return;
	}
	for (uint32_t t = 0; t < ring->ntags; t++)
		if (mask >> t & 1)
			tags[n++] = ring->tags[t];
	qsort(tags, n, sizeof(tags[0]), tag_cmp);
	for (size_t i = 0; i < n && off < sizeof(list); i++)
		off += snprintf(list + off, sizeof(list) - off, "%s%s", i ? "," : "", tags[i]);
	if (strlen(ring->name) + strlen(list) + 3 <= len)
		snprintf(buf, len, "%s[%s]", ring->name, list);
	else	/* too long for a ring name: the tags' CRC-32 stands for them */
		snprintf(buf, len, "%.*s[%08x]", (int)(len - 12), ring->name,
			 kr_key_hash(list, strlen(list)));
}

int kr_units_find(const struct kr_units *us, const char *name)
{
	for (uint32_t i = 0; i < us->n; i++)
		if (!strcmp(us->u[i].name, name))
			return i;
	return -1;
}

static int add_unit(struct kr_units *us, const struct kr_config *cfg, uint32_t r,
		    uint64_t mask)
{
	const struct kr_cfg_ring *ring = &cfg->rings[r];
	struct kr_unit *u = &us->u[us->n];
	char name[KR_NAME_MAX];
	int i;

	kr_unit_name(ring, mask, name, sizeof(name));
	i = kr_units_find(us, name);
	if (i >= 0)
		return i;
	memset(u, 0, sizeof(*u));
	snprintf(u->name, sizeof(u->name), "%s", name);
	u->ring = ring;
	u->cfg_ring = r;
	u->subset_mask = mask;
	u->ring_id = -1;
	u->idx = calloc(ring->nbackends ? ring->nbackends : 1, sizeof(*u->idx));
	if (!u->idx)
		return -ENOMEM;
	for (uint32_t b = 0; b < ring->nbackends; b++)
		if ((ring->backends[b].tags & mask) == mask)
			u->idx[u->n++] = b;
	if (!u->n) {
		pr_warn("keyrouter: ring '%s': no backend carries every tag of subset '%s'\n",
			ring->name, name);
		free(u->idx);
		return -EINVAL;
	}
	return us->n++;
}

/* Can subset `mask` of ring r share the ring's points (expected walk short enough)? */
static bool subset_shares(const struct kr_cfg_ring *ring, uint64_t mask)
{
	uint64_t all = 0, in = 0;

	for (uint32_t b = 0; b < ring->nbackends; b++) {
		all += ring->backends[b].weight;
		if ((ring->backends[b].tags & mask) == mask)
			in += ring->backends[b].weight;
	}
	return in && all <= in * (uint64_t)KR_SUBSET_SHARE_MAX_WALK;
}

/* The shared subset of ring unit r + mask (added if new): its id, or 0 when its id would
 * collide with another subset's (it then gets a dedicated ring). */
static __u32 add_subset(struct kr_units *us, const struct kr_cfg_ring *ring, uint32_t r,
			uint64_t mask)
{
	struct kr_subset *s = &us->sub[us->nsub];
	char name[KR_NAME_MAX];
	__u32 id;

	kr_unit_name(ring, mask, name, sizeof(name));
	id = kr_key_hash(name, strlen(name));
	id = id ? id : 1;
	for (uint32_t i = 0; i < us->nsub; i++)
		if (us->sub[i].id == id)
			return strcmp(us->sub[i].name, name) ? 0 : id;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->unit = r;
	s->mask = mask;
	s->id = id;
	us->nsub++;
	return id;
}

int kr_units_plan(const struct kr_config *cfg, struct kr_units *us, bool share)
{
	int err = 0;

	memset(us, 0, sizeof(*us));
	us->u = calloc(cfg->nrings + cfg->nservices + 1, sizeof(*us->u));
	us->svc_unit = calloc(cfg->nservices + 1, sizeof(*us->svc_unit));
	us->svc_ring = calloc(cfg->nservices + 1, sizeof(*us->svc_ring));
	us->svc_subset = calloc(cfg->nservices + 1, sizeof(*us->svc_subset));
	us->sub = calloc(cfg->nservices + 1, sizeof(*us->sub));
	if (!us->u || !us->svc_unit || !us->svc_ring || !us->svc_subset || !us->sub)
		return -ENOMEM;
	for (uint32_t r = 0; r < cfg->nrings && err >= 0; r++)
		err = add_unit(us, cfg, r, 0);	/* unit r = ring r */
	for (uint32_t s = 0; s < cfg->nservices && err >= 0; s++) {
		const struct kr_cfg_service *sv = &cfg->services[s];

		if (share && sv->subset_mask && subset_shares(&cfg->rings[sv->ring], sv->subset_mask))
			us->svc_subset[s] = add_subset(us, &cfg->rings[sv->ring], sv->ring,
						       sv->subset_mask);
		if (us->svc_subset[s]) {
			us->svc_unit[s] = sv->ring;
			continue;
		}
		err = add_unit(us, cfg, cfg->services[s].ring, cfg->services[s].subset_mask);
		if (err >= 0)
			us->svc_unit[s] = err;
	}
	if (us->n > KR_MAX_RINGS) {
		pr_warn("keyrouter: the config needs %u rings (subsets included): at most %u\n",
			us->n, KR_MAX_RINGS);
		return -ENOSPC;
	}
	return err < 0 ? err : 0;
}

int kr_units_resolve(struct kr_units *us, const struct kr_config *cfg)
{
	for (uint32_t s = 0; s < cfg->nservices; s++) {
		int id = us->u[us->svc_unit[s]].ring_id;

		if (id < 0)
			return -EINVAL;
		us->svc_ring[s] = id;
	}
	return 0;
}

void kr_units_free(struct kr_units *us)
{
	for (uint32_t i = 0; us->u && i < us->n; i++) {
		free(us->u[i].idx);
		free(us->u[i].gid);
	}
	free(us->u);
	free(us->svc_subset);
	free(us->sub);
	free(us->svc_unit);
	free(us->svc_ring);
	memset(us, 0, sizeof(*us));
}
