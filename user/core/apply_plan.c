// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* apply's plan: configuration + live state -> the list of changes (see apply_plan.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apply_plan.h"
#include "quic_lb.h"
#include "ring_sm.h"
#include "util.h"

#define GROW(arr, n, cap)                                                                   \
	((n) < (cap) ? 0 : grow((void **)&(arr), &(cap), sizeof(*(arr))))

static int grow(void **arr, uint32_t *cap, size_t size)
{
	uint32_t c = *cap ? *cap * 2 : 16;
	void *p = realloc(*arr, (size_t)c * size);

	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

/* ---- the live state --------------------------------------------------------------------- */

void kr_live_free(struct kr_live *lv)
{
	for (uint32_t r = 0; r < KR_MAX_RINGS; r++)
		for (int s = 0; s < 2; s++)
			free(lv->ring[r].slot[s].bt);
	free(lv->backends);
	free(lv->services);
	free(lv->members);
	free(lv->devices);
	free(lv->svc_names);
	free(lv->hot);
	memset(lv, 0, sizeof(*lv));
}

const struct kr_live_device *kr_live_device(const struct kr_live *lv, const char *name,
					    uint32_t ifindex)
{
	for (uint32_t i = 0; i < lv->ndevices; i++) {
		const struct kr_live_device *d = &lv->devices[i];

		if (name ? !strcmp(d->name, name) : (!d->name[0] && d->ifindex == ifindex))
			return d;
	}
	return NULL;
}

static const struct kr_backend *live_backend(const struct kr_live *lv, uint32_t id)
{
	uint32_t lo = 0, hi = lv->nbackends;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (lv->backends[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < lv->nbackends && lv->backends[lo].id == id ? &lv->backends[lo].v : NULL;
}

/* ---- the plan's own state --------------------------------------------------------------- */

struct planner {
	const struct kr_config *cfg;
	const struct kr_live *lv;
	struct kr_apply_plan *p;
	struct kr_err *err;
	struct kr_ids ids;		/* global backend ids (backend_ids.h) */
	uint8_t *cfg_state;		/* [backends_max] merged config state of each id, +1 */
	uint32_t *cfg_spill;		/* [backends_max] the config's "spill" (largest), +1 */
	uint8_t *mark;			/* [backends_max] MARK_* */
	uint32_t cap_backends, cap_devices, cap_madd, cap_mdel, cap_svc, cap_sdel, cap_rdel;
	uint32_t cap_hot;
	bool id_taken[KR_MAX_RINGS];	/* ring ids named in kr_ops_rings or assigned now */
};

/* The egress ifindex of a config backend: its "ifindex", or its "dev" resolved in the live
 * state; 0 = none given.  -ENODEV (err set) when the named device does not exist. */
static int backend_ifindex(const struct planner *pl, const struct kr_cfg_ring *ring,
			   const struct kr_cfg_backend *cb, uint32_t *ifindex)
{
	const struct kr_live_device *d;
	char a[KR_SOCKADDR_STRLEN];

	*ifindex = cb->ifindex;
	if (cb->ifindex || !cb->dev[0])
		return 0;
	d = kr_live_device(pl->lv, cb->dev, 0);
	if (d && d->ifindex) {
		*ifindex = d->ifindex;
		return 0;
	}
	kr_sockaddr_format(&cb->addr, a);
	kr_errf(pl->err, "ring '%s': backend %s: device '%s' does not exist in this network "
		"namespace (\"dev\" names the egress interface of l2 forwarding)", ring->name, a,
		cb->dev);
	return -ENODEV;
}

/* A "dev" the network namespace does not have (backend_ifindex would fail). */
static bool dev_missing(const struct planner *pl, const struct kr_cfg_backend *cb)
{
	const struct kr_live_device *d;

	if (cb->ifindex || !cb->dev[0])
		return false;
	d = kr_live_device(pl->lv, cb->dev, 0);
	return !d || !d->ifindex;
}

/* ---- ring ids ----------------------------------------------------------------------------- */

static int ring_id_of(const struct kr_live *lv, const char *name)
{
	for (uint32_t id = 0; id < KR_MAX_RINGS; id++)
		if (lv->ring[id].name[0] && !strcmp(lv->ring[id].name, name))
			return (int)id;
	return -1;
}

/* The ring id of unit u: its name's id in kr_ops_rings, else the lowest free one (new_id). */
static int plan_ring_id(struct planner *pl, struct kr_plan_ring *pr)
{
	const struct kr_unit *u = pr->unit;
	int id = ring_id_of(pl->lv, u->name);

	if (id >= 0) {
		pr->ring_id = id;
		return 0;
	}
	if (pl->p->stage) {
		kr_errf(pl->err, "ring stage %s: nothing is published for it yet; run "
			"'keyrouter apply' first", u->name);
		return -ENOENT;
	}
	for (id = 0; id < (int)KR_MAX_RINGS && pl->id_taken[id]; id++)
		;
	if (id == (int)KR_MAX_RINGS) {
		kr_errf(pl->err, "no free ring id for ring '%s' (at most %u rings)", u->name,
			       KR_MAX_RINGS);
		return -ENOSPC;
	}
	pl->id_taken[id] = true;
	pr->ring_id = id;
	pr->new_id = true;
	pr->flags = u->subset_mask ? KR_RING_DEDICATED : 0;
	return 0;
}

/* ---- backend ids and entries ------------------------------------------------------------ */

/* planner.mark[id] */
#define MARK_IN_PLACE	1u	/* the id's server changes its forwarding in place */
#define MARK_AFTER	2u	/* a published image references the id after the plan */
#define MARK_PLANNED	4u	/* its kr_backends entry is planned (each id once) */

/* kr_backends as the live state has it, and the ids published images reference: the
 * allocator's start (backend_ids.h). */
static int ids_init(struct planner *pl)
{
	const struct kr_live *lv = pl->lv;
	uint32_t max = lv->backends_max;
	int err = kr_ids_init(&pl->ids, NULL, max);

	if (err)
		return err;
	pl->cfg_state = calloc(max ? max : 1, 1);
	pl->cfg_spill = calloc(max ? max : 1, sizeof(*pl->cfg_spill));
	pl->mark = calloc(max ? max : 1, 1);
	if (!pl->cfg_state || !pl->cfg_spill || !pl->mark)
		return -ENOMEM;
	for (uint32_t i = 0; i < lv->nbackends; i++)
		kr_ids_existing(&pl->ids, lv->backends[i].id, &lv->backends[i].v);
	for (uint32_t id = 0; id < KR_MAX_RINGS; id++)
		for (int s = 0; s < 2; s++)
			for (uint32_t i = 0; lv->ring[id].slot[s].present &&
			     i < lv->ring[id].slot[s].hdr.nbackends; i++)
				kr_ids_reference(&pl->ids, lv->ring[id].slot[s].bt[i]);
	return 0;
}

/* What identifies a server (backend_ids.h): family, address, port, MAC, egress ifindex. */
static int backend_identity(const struct planner *pl, const struct kr_cfg_ring *ring,
			    const struct kr_cfg_backend *cb, struct kr_backend *v)
{
	uint32_t ifindex;
	int err = backend_ifindex(pl, ring, cb, &ifindex);

	if (err)
		return err;
	memset(v, 0, sizeof(*v));
	memcpy(v->addr, cb->addr.ip, 16);
	v->port = htons(cb->addr.port);
	v->family = cb->addr.family;
	if (cb->has_mac)
		memcpy(v->mac, cb->mac, 6);
	v->ifindex = ifindex;
	return 0;
}

/* down > drain > up: a server one ring's configuration says is down is down. */
static uint8_t state_merge(uint8_t a, uint8_t b)
{
	static const uint8_t rank[] = { [KR_BACKEND_UP] = 0, [KR_BACKEND_DOWN] = 2,
					[KR_BACKEND_DRAIN] = 1 };

	if (a > KR_BACKEND_DRAIN)
		return b;
	if (b > KR_BACKEND_DRAIN)
		return a;
	return rank[b] > rank[a] ? b : a;
}

/* A server of a planned ring without its exact id after pass 0 of assign_ids. */
struct pending {
	struct kr_unit *u;
	uint32_t i;
	const struct kr_cfg_backend *cb;
	struct kr_backend want;
};

/* The canonical order (backend_ids.h) with the device as the configuration names it
 * before the ifindex it resolves to here: the same on every router. */
static int pending_cmp(const void *pa, const void *pb)
{
	const struct pending *x = pa, *y = pb;
	struct kr_backend u = x->want, v = y->want;
	int c;

	u.ifindex = v.ifindex = 0;
	c = kr_ids_cmp(&u, &v);
	if (!c)
		c = strcmp(x->cb->dev, y->cb->dev);
	if (!c)
		c = x->cb->ifindex < y->cb->ifindex ? -1 : x->cb->ifindex > y->cb->ifindex;
	return c ? c : kr_ids_cmp(&x->want, &y->want);
}

enum take {
	TAKE_EXACT,		/* rule 1 only (-ENOENT otherwise) */
	TAKE_ANY,		/* rules 1..3 */
	TAKE_PIN,		/* the configuration's "id" (kr_ids_pin) */
	TAKE_PIN_QUIET,		/* the same for a ring not staged: no error of its */
};

/* Why pinned id cb->id cannot be had (-ERANGE, -EBUSY): err set. */
static int pin_error(struct planner *pl, const struct kr_unit *u,
		     const struct kr_cfg_backend *cb, int rc)
{
	const struct kr_backend *o = &pl->ids.ent[cb->id < pl->ids.max ? cb->id : 0];
	char a[KR_SOCKADDR_STRLEN], b[KR_SOCKADDR_STRLEN] = "";
	struct kr_sockaddr sa = { .family = o->family, .port = ntohs(o->port) };

	kr_sockaddr_format(&cb->addr, a);
	if (rc == -ERANGE) {
		kr_errf(pl->err, "ring '%s': backend %s: \"id\" %u is beyond this instance's "
			"kr_backends (%u ids); nothing was changed", u->name, a, cb->id, pl->ids.max);
		return rc;
	}
	if (!o->family) {
		kr_errf(pl->err, "ring '%s': backend %s: \"id\" %u is still referenced by a "
			"published image (a ring staged or migrating): commit or roll back that "
			"ring first; nothing was changed", u->name, a, cb->id);
		return rc;
	}
	memcpy(sa.ip, o->addr, 16);
	kr_sockaddr_format(&sa, b);
	kr_errf(pl->err, "ring '%s': backend %s: \"id\" %u is %s %s; give another id, or apply "
		"a configuration without %s first (which frees its id), or unload and load; "
		"nothing was changed", u->name, a, cb->id,
		(pl->ids.flag[cb->id] & KR_IDS_CLAIMED) ? "taken by another server of this "
		"configuration:" : "in use by the live backend", b, b);
	return rc;
}

/* u->gid[i] for the server want, as `how` says; cfg_state merged. */
static int take_id(struct planner *pl, struct kr_unit *u, uint32_t i,
		   const struct kr_backend *want, enum take how)
{
	const struct kr_cfg_backend *cb = &u->ring->backends[u->idx[i]];
	bool pin = how == TAKE_PIN || how == TAKE_PIN_QUIET, in_place;
	/* a ring not staged has its pinned server's id only where it is live already (as
	 * rule 1 would give it); the pin is claimed all the same, so nothing else takes it */
	bool live = cb->id < pl->ids.max && (pl->ids.flag[cb->id] & KR_IDS_EXISTING) &&
		    kr_ids_same(&pl->ids.ent[cb->id], want);
	uint8_t *st;
	int rc = pin ? kr_ids_pin(&pl->ids, want, cb->id, &in_place) :
		 kr_ids_get(&pl->ids, want, how == TAKE_EXACT, &u->gid[i], &in_place);

	if (pin && !rc)
		u->gid[i] = cb->id;
	if ((rc == -ENOENT && how == TAKE_EXACT) || (how == TAKE_PIN_QUIET && (rc || !live))) {
		u->gid[i] = UINT32_MAX;		/* for pass 1 / not staged */
		return how == TAKE_EXACT ? rc : 0;
	}
	if (pin && rc)
		return pin_error(pl, u, cb, rc);
	if (rc) {
		kr_errf(pl->err, "ring '%s': no free backend ids left: the configuration and the "
			"published rings need more than %u servers (kr_backends entries); nothing "
			"was changed", u->name, pl->ids.max);
		return -ENOSPC;
	}
	if (in_place)
		pl->mark[u->gid[i]] |= MARK_IN_PLACE;
	st = &pl->cfg_state[u->gid[i]];
	*st = *st ? state_merge(*st - 1, cb->state) + 1 : cb->state + 1;
	if (cb->has_spill && pl->cfg_spill[u->gid[i]] < (uint32_t)cb->spill + 1)
		pl->cfg_spill[u->gid[i]] = (uint32_t)cb->spill + 1;
	return 0;
}

/*
 * unit->gid of every planned ring (all units, or the one staged), before anything else is
 * planned, so that running out of ids refuses the apply with nothing changed.  Pass 0 gives
 * every server whose identity is in kr_backends that id, over all rings of the
 * configuration (also when one ring is staged: a staged server never takes over, in place,
 * the id a ring not staged keeps); pass 1 those of the planned rings that have none, in
 * canonical order (backend_ids.h), whatever the order of the rings and backends: the id
 * of the same address:port under another forwarding (changed in place), else the server's
 * home or the next free id after it.  So an in-place change never takes an id another
 * server of the configuration keeps, and empty maps get the canonical ids.
 * cfg_state[id]: the configuration's state of the server merged over every ring that has
 * it (+1; 0: none).  A pinned server (the configuration's "id") takes its pin in pass 0,
 * before any other server needs an id: the pin wins over the id it had.
 */
static int assign_ids(struct planner *pl)
{
	struct kr_apply_plan *p = pl->p;
	struct pending *pend = NULL;
	uint32_t npend = 0, cap = 0;
	int rc = 0;

	for (uint32_t r = 0; r < p->units.n && !rc; r++) {
		struct kr_unit *u = &p->units.u[r];
		bool planned = !p->stage || !strcmp(u->name, p->stage);

		free(u->gid);
		u->gid = calloc(u->n ? u->n : 1, sizeof(*u->gid));
		if (!u->gid) {
			rc = -ENOMEM;
			break;
		}
		for (uint32_t i = 0; i < u->n && !rc; i++) {
			const struct kr_cfg_backend *cb = &u->ring->backends[u->idx[i]];
			struct kr_backend want;

			u->gid[i] = UINT32_MAX;
			if (!planned && dev_missing(pl, cb))
				continue;		/* not staged: no error of its */
			rc = backend_identity(pl, u->ring, cb, &want);
			if (!rc)
				rc = take_id(pl, u, i, &want, !cb->has_id ? TAKE_EXACT :
					     planned ? TAKE_PIN : TAKE_PIN_QUIET);
			if (rc != -ENOENT)
				continue;
			rc = 0;
			if (!planned)
				continue;
			if (GROW(pend, npend, cap))
				rc = -ENOMEM;
			else
				pend[npend++] = (struct pending){ u, i, cb, want };
		}
	}
	if (!rc && npend)
		qsort(pend, npend, sizeof(*pend), pending_cmp);
	for (uint32_t k = 0; k < npend && !rc; k++)
		rc = take_id(pl, pend[k].u, pend[k].i, &pend[k].want, TAKE_ANY);
	free(pend);
	return rc;
}

/* The plan's removal of ring id `id`, or NULL. */
static const struct kr_plan_ring_rm *ring_removed(const struct kr_apply_plan *p, uint32_t id)
{
	for (uint32_t i = 0; i < p->nrings_del; i++)
		if (p->rings_del[i].id == id)
			return &p->rings_del[i];
	return NULL;
}

/* MARK_AFTER: the ids both slots of every ring that stays reference after the plan (the
 * version a ring publishes in place of the one it replaces). */
static void mark_after(struct planner *pl)
{
	const struct kr_apply_plan *p = pl->p;

	for (uint32_t id = 0; id < KR_MAX_RINGS; id++) {
		const struct kr_live_ring *lr = &pl->lv->ring[id];

		if (ring_removed(p, id))
			continue;
		for (uint32_t s = 0; s < 2; s++) {
			const uint32_t *bt = lr->slot[s].bt;
			uint32_t n = lr->slot[s].present ? lr->slot[s].hdr.nbackends : 0;

			for (uint32_t r = 0; r < p->nrings; r++) {
				const struct kr_plan_ring *pr = &p->rings[r];

				if (pr->ring_id == id && pr->slot == s &&
				    (pr->act == KR_PLAN_PUBLISH || pr->act == KR_PLAN_STAGE)) {
					bt = pr->unit->gid;
					n = pr->unit->n;
				}
			}
			for (uint32_t i = 0; i < n; i++)
				if (bt[i] < pl->lv->backends_max)
					pl->mark[bt[i]] |= MARK_AFTER;
		}
	}
}

/*
 * The kr_backends entry of every server of the planned rings, where it differs: each id
 * once, however many rings have it; health state is runtime state (`backend set`), so the
 * configuration decides it for a new entry, and whenever its merged state says down or
 * drain.  Only ids an image references after the plan: a ring left alone while it
 * migrates publishes nothing, so its new servers get no entry.
 */
static int plan_backends(struct planner *pl)
{
	struct kr_apply_plan *p = pl->p;

	for (uint32_t r = 0; r < p->nrings; r++) {
		const struct kr_unit *u = p->rings[r].unit;

		for (uint32_t i = 0; i < u->n; i++) {
			const struct kr_cfg_backend *cb = &u->ring->backends[u->idx[i]];
			uint32_t id = u->gid[i];
			const struct kr_backend *cur = live_backend(pl->lv, id);
			struct kr_backend none = {}, v;
			uint8_t cfg = pl->cfg_state[id] - 1;
			bool is_new;
			int err;

			if (!(pl->mark[id] & MARK_AFTER) || (pl->mark[id] & MARK_PLANNED))
				continue;
			pl->mark[id] |= MARK_PLANNED;
			if (!cur)
				cur = &none;
			is_new = !cur->family || cur->state > KR_BACKEND_DRAIN;
			err = backend_identity(pl, u->ring, cb, &v);
			if (err)
				return err;
			v.state = is_new || cfg != KR_BACKEND_UP ? cfg : cur->state;
			/* who set the state (KR_BACKEND_F_OWNER) goes with it: the config's
			 * own, or the runtime state's writer (backend set, the checker) */
			if (!is_new && cfg == KR_BACKEND_UP)
				v.flags = cur->flags & KR_BACKEND_F_OWNER;
			if (v.state > KR_BACKEND_DRAIN)
				v.state = KR_BACKEND_UP;
			/* spill: the configuration's, fixed; else the running one (set by
			 * the controller or `backend set --spill`) stays */
			if (pl->cfg_spill[id]) {
				v.spill = (uint16_t)(pl->cfg_spill[id] - 1);
				v.flags |= KR_BACKEND_F_SPILL_FIXED;
			} else if (!is_new) {
				v.spill = cur->spill;
				v.flags |= cur->flags & KR_BACKEND_F_SPILL_FIXED;
			}
			if (!memcmp(cur, &v, sizeof(v))) {
				p->n.backends_same++;
				continue;
			}
			if (GROW(p->backends, p->nbackends, pl->cap_backends))
				return -ENOMEM;
			p->backends[p->nbackends++] = (struct kr_plan_backend){
				.id = id, .v = v, .added = is_new,
				.in_place = !is_new && (pl->mark[id] & MARK_IN_PLACE),
				.unit = (uint32_t)(u - p->units.u) };
			if (is_new)
				p->n.backends_added++;
			else
				p->n.backends_changed++;
		}
	}
	return 0;
}

/* Entries of kr_backends no published image references after the plan: released (also
 * those a killed apply wrote that nothing came to use, and the extra per-ring ids of an
 * older keyrouter once its rings are republished). */
static int plan_release(struct planner *pl)
{
	struct kr_apply_plan *p = pl->p;
	uint32_t cap = 0;

	for (uint32_t i = 0; i < pl->lv->nbackends; i++) {
		uint32_t id = pl->lv->backends[i].id;

		if (!pl->lv->backends[i].v.family || id >= pl->lv->backends_max ||
		    (pl->mark[id] & MARK_AFTER))
			continue;
		if (GROW(p->backends_release, p->nbackends_release, cap))
			return -ENOMEM;
		p->backends_release[p->nbackends_release++] = id;
		p->n.backends_removed++;
	}
	return 0;
}

/* ---- rings -------------------------------------------------------------------------------- */

static bool same_version(const struct kr_live_slot *s, const struct kr_ring *r,
			 const uint32_t *ids)
{
	if (!s->present || s->hdr.digest != r->digest || s->hdr.ring_version != r->version ||
	    s->hdr.point_multiple != r->point_multiple || s->hdr.nbackends != r->nbackends ||
	    s->hdr.npoints != r->npoints + r->ndups)
		return false;
	return !memcmp(s->bt, ids, r->nbackends * sizeof(uint32_t));
}

static int build_ring(struct planner *pl, struct kr_plan_ring *pr)
{
	const struct kr_unit *u = pr->unit;
	struct kr_backend_spec *spec;
	uint64_t t0 = kr_wall_ns();
	int rc;

	spec = calloc(u->n ? u->n : 1, sizeof(*spec));
	if (!spec)
		return -ENOMEM;
	for (uint32_t i = 0; i < u->n; i++) {
		spec[i].addr = u->ring->backends[u->idx[i]].addr;
		spec[i].weight = u->ring->backends[u->idx[i]].weight;
	}
	rc = kr_ring_build(&pr->ring, spec, u->n, u->ring->format, u->ring->point_multiple,
			   pl->err);
	free(spec);
	pr->build_ns = kr_wall_ns() - t0;
	if (rc) {
		kr_err_prefix(pl->err, "ring '%s'", u->name);
		return -EINVAL;
	}
	return 0;
}

/* apply: publish a ring whose active version differs, unless it is being migrated. */
static void decide_publish(struct planner *pl, struct kr_plan_ring *pr)
{
	const struct kr_live_ring *lr = &pl->lv->ring[pr->ring_id];
	const struct kr_live_slot *act = &lr->slot[pr->active];

	if (same_version(act, pr->ring, pr->unit->gid)) {
		pr->act = KR_PLAN_SAME;
		pl->p->n.rings_same++;
	} else if (pr->state != KR_RING_IDLE) {
		pr->act = KR_PLAN_SKIP;
		pl->p->n.rings_skipped++;
	} else {
		pr->act = KR_PLAN_PUBLISH;
		pr->why = act->present ? KR_PLAN_WHY_CHANGED : KR_PLAN_WHY_NEW;
		pr->slot = pr->active;
		pl->p->n.rings_published++;
	}
}

/* ring stage: from idle only, onto a published ring, with a different version; staging
 * the version already staged changes nothing (a repeated stage converges). */
static int decide_stage(struct planner *pl, struct kr_plan_ring *pr)
{
	const struct kr_live_ring *lr = &pl->lv->ring[pr->ring_id];
	const uint32_t *ids = pr->unit->gid;
	const char *why;
	__u64 next;

	if (kr_sm_next(lr->ctl, KR_SM_STAGE, 0, &next, &why)) {
		if (same_version(&lr->slot[pr->active ^ 1], pr->ring, ids)) {
			pr->act = KR_PLAN_STAGED_ALREADY;
			pl->p->n.rings_same++;
			return 0;
		}
		kr_errf(pl->err, "ring stage %s: %s (state %s)", pr->unit->name, why,
			       kr_sm_state_name(pr->state));
		return -EBUSY;
	}
	if (!lr->slot[pr->active].present) {
		kr_errf(pl->err, "ring stage %s: nothing is published for it yet; run "
			"'keyrouter apply' first", pr->unit->name);
		return -ENOENT;
	}
	if (same_version(&lr->slot[pr->active], pr->ring, ids)) {
		pr->act = KR_PLAN_STAGE_SAME;
		pl->p->n.rings_same++;
		return 0;
	}
	pr->act = KR_PLAN_STAGE;
	pr->slot = pr->active ^ 1;
	pl->p->n.rings_published++;
	return 0;
}

/* A planned ring of unit ui: its ring id and what the live state says of it. */
static int plan_ring_head(struct planner *pl, uint32_t ui)
{
	struct kr_plan_ring *pr = &pl->p->rings[pl->p->nrings++];
	const struct kr_live_ring *lr;
	int err;

	memset(pr, 0, sizeof(*pr));
	pr->unit = &pl->p->units.u[ui];
	err = plan_ring_id(pl, pr);
	if (err)
		return err;
	pr->unit->ring_id = (int)pr->ring_id;
	lr = &pl->lv->ring[pr->ring_id];
	pr->active = kr_ctl_active(lr->ctl);
	pr->state = kr_ctl_state(lr->ctl);
	pr->was_present = lr->slot[pr->active].present;
	pr->was_digest = pr->was_present ? lr->slot[pr->active].hdr.digest : 0;
	return 0;
}

/* Its version (after assign_ids): built, and what to do with it. */
static int plan_ring_version(struct planner *pl, struct kr_plan_ring *pr)
{
	int err = build_ring(pl, pr);

	if (err)
		return err;
	if (pl->p->stage)
		return decide_stage(pl, pr);
	decide_publish(pl, pr);
	return 0;
}

/* ---- hash key, devices, subset members, services ------------------------------------------ */

static int plan_hash_key(struct planner *pl)
{
	struct kr_apply_plan *p = pl->p;

	if (!pl->cfg->hash.keyed)
		return 0;
	if (!pl->lv->has_hash_key) {
		kr_errf(pl->err, "the configuration asks for the keyed hash, but the loaded "
			       "data path has no map kr_hash_key (loaded by an older keyrouter?): "
			       "unload and load again");
		return -ENOENT;
	}
	kr_hash_secret_from_bytes(&p->hash_key, pl->cfg->hash.secret);
	p->write_hash_key = memcmp(&p->hash_key, &pl->lv->hash_key, sizeof(p->hash_key)) != 0;
	return 0;
}

static int add_device(struct planner *pl, uint32_t ifindex, const struct kr_live_device *d)
{
	struct kr_apply_plan *p = pl->p;
	struct kr_device v = {};

	if (!ifindex || !d || !d->has_mac)
		return 0;
	for (uint32_t i = 0; i < p->ndevices; i++)
		if (p->devices[i].ifindex == ifindex)
			return 0;
	memcpy(v.mac, d->mac, 6);
	v.flags = KR_DEVICE_F_MAC;
	if (d->has_entry && !memcmp(&d->entry, &v, sizeof(v)))
		return 0;
	if (GROW(p->devices, p->ndevices, pl->cap_devices))
		return -ENOMEM;
	p->devices[p->ndevices++] = (struct kr_plan_device){ .ifindex = ifindex, .v = v };
	p->n.devices_changed++;
	return 0;
}

/* kr_devices[ifindex] = the MAC of every egress device the backends name and of the loaded
 * interface (the source MAC of l2 forwarding). */
static int plan_devices(struct planner *pl)
{
	const struct kr_config *cfg = pl->cfg;
	int err = 0;

	if (!pl->lv->has_devices)
		return 0;
	for (uint32_t r = 0; r < cfg->nrings && !err; r++) {
		for (uint32_t b = 0; b < cfg->rings[r].nbackends && !err; b++) {
			const struct kr_cfg_backend *cb = &cfg->rings[r].backends[b];
			uint32_t ifindex;

			err = backend_ifindex(pl, &cfg->rings[r], cb, &ifindex);
			if (!err && ifindex)
				err = add_device(pl, ifindex, kr_live_device(pl->lv, NULL, ifindex));
		}
	}
	if (!err && pl->lv->loaded_ifindex)
		err = add_device(pl, pl->lv->loaded_ifindex,
				 kr_live_device(pl->lv, NULL, pl->lv->loaded_ifindex));
	return err;
}

static bool member_live(const struct kr_live *lv, const struct kr_subset_key *k)
{
	for (uint32_t i = 0; i < lv->nmembers; i++)
		if (lv->members[i].subset_id == k->subset_id &&
		    lv->members[i].backend_id == k->backend_id)
			return true;
	return false;
}

/* The subset a wanted member {subset_id, backend_id} belongs to, or NULL. */
static const struct kr_subset *member_wanted(const struct kr_units *us,
						 const struct kr_subset_key *k)
{
	for (uint32_t s = 0; s < us->nsub; s++) {
		const struct kr_subset *sub = &us->sub[s];
		const struct kr_unit *u = &us->u[sub->unit];

		if (sub->id != k->subset_id || !u->gid)
			continue;
		for (uint32_t i = 0; i < u->n; i++)
			if (u->gid[i] == k->backend_id &&
			    (u->ring->backends[u->idx[i]].tags & sub->mask) == sub->mask)
				return sub;
	}
	return NULL;
}

/* Members of every shared subset (written before the services that name the subsets);
 * members nothing wants any more (removed after the services stopped naming them). */
/* Members of the shared subsets of every unit that has its ids (ring stage: the staged
 * one only) that kr_subset_members lacks. */
static int plan_members_add(struct planner *pl)
{
	const struct kr_units *us = &pl->p->units;
	struct kr_apply_plan *p = pl->p;

	for (uint32_t s = 0; s < us->nsub; s++) {
		const struct kr_subset *sub = &us->sub[s];
		const struct kr_unit *u = &us->u[sub->unit];

		for (uint32_t i = 0; u->gid && i < u->n; i++) {
			struct kr_subset_key k = { .subset_id = sub->id, .backend_id = u->gid[i] };

			if ((u->ring->backends[u->idx[i]].tags & sub->mask) != sub->mask ||
			    member_live(pl->lv, &k))
				continue;
			if (GROW(p->members_add, p->nmembers_add, pl->cap_madd))
				return -ENOMEM;
			p->members_add[p->nmembers_add++] = (struct kr_plan_member){ k, sub->name };
		}
	}
	return 0;
}

static int plan_members(struct planner *pl)
{
	const struct kr_units *us = &pl->p->units;
	struct kr_apply_plan *p = pl->p;
	int err = plan_members_add(pl);

	if (err)
		return err;
	for (uint32_t i = 0; i < pl->lv->nmembers; i++) {
		if (member_wanted(us, &pl->lv->members[i]))
			continue;
		if (GROW(p->members_del, p->nmembers_del, pl->cap_mdel))
			return -ENOMEM;
		p->members_del[p->nmembers_del++] = (struct kr_plan_member){ pl->lv->members[i],
									      NULL };
	}
	return 0;
}

void kr_service_entry(const struct kr_cfg_service *s, uint32_t ring_id, struct kr_service_key *k,
		      struct kr_service *v)
{
	memset(k, 0, sizeof(*k));
	memset(v, 0, sizeof(*v));
	if (!s->vip_any) {
		memcpy(k->addr, s->vip.ip, 16);
		k->family = s->vip.family;
	}
	k->port = htons(s->port);
	k->proto = s->protocol;
	v->ring_id = ring_id;
	v->key_type = s->key.type;
	v->fwd_mode = s->fwd.mode;
	v->policy_no_key = s->policy.no_key;
	v->policy_too_long = s->policy.key_too_long;
	v->policy_no_route = s->policy.all_down;
	v->quic_cid_len = s->key.cid_length;
	if (s->key.delimiter >= 0) {
		v->flags |= KR_SVC_F_PAYLOAD_DELIM;
		v->payload_delim = s->key.delimiter;
	}
	v->payload_off = s->key.offset;
	v->payload_len = s->key.length;
	if (s->fwd.has_source4)
		memcpy(v->tun_src4, s->fwd.source4, 4);
	if (s->fwd.has_source6)
		memcpy(v->tun_src6, s->fwd.source6, 16);
}

/*
 * Per-service counters: the stats id of each config service (kr_service.stats_id), kept by
 * name in kr_svc_names: a service keeps its id (and its counters) while its name stays in
 * the configuration, a new one takes the lowest id no name holds (ids of services removed
 * now are released after the services, so not reused by this apply).  Without the map (an
 * older program) every id is 0.
 */
static int plan_svc_ids(struct planner *pl, uint32_t *ids)
{
	const struct kr_config *cfg = pl->cfg;
	const struct kr_live *lv = pl->lv;
	struct kr_apply_plan *p = pl->p;
	bool taken[KR_MAX_SVC_STATS] = { true };	/* id 0: unnamed */
	uint32_t cap = 0, cap_del = 0;

	if (!lv->has_svc_names)
		return 0;
	for (uint32_t id = 1; id < KR_MAX_SVC_STATS; id++)
		taken[id] = lv->svc_names[id].name[0] != 0;
	for (uint32_t i = 0; i < cfg->nservices; i++) {
		const char *name = cfg->services[i].name;
		struct kr_plan_svc_name e = { 0 };
		uint32_t id;

		for (id = 1; id < KR_MAX_SVC_STATS; id++)
			if (!strcmp(lv->svc_names[id].name, name))
				break;
		if (id == KR_MAX_SVC_STATS) {
			for (id = 1; id < KR_MAX_SVC_STATS && taken[id]; id++)
				;
			if (id == KR_MAX_SVC_STATS) {
				kr_errf(pl->err, "no free per-service counter id for service '%s'",
					name);
				return -ENOSPC;
			}
			taken[id] = true;
			e.fresh = true;
		}
		ids[i] = id;
		e.id = id;
		snprintf(e.v.name, sizeof(e.v.name), "%s", name);
		kr_service_entry(&cfg->services[i], 0, &e.v.key, &(struct kr_service){ 0 });
		if (!e.fresh && !memcmp(&lv->svc_names[id], &e.v, sizeof(e.v)))
			continue;
		if (GROW(p->svc_names, p->nsvc_names, cap))
			return -ENOMEM;
		p->svc_names[p->nsvc_names++] = e;
	}
	for (uint32_t id = 1; id < KR_MAX_SVC_STATS; id++) {
		bool keep = !lv->svc_names[id].name[0];

		for (uint32_t i = 0; i < cfg->nservices && !keep; i++)
			keep = ids[i] == id;
		if (keep)
			continue;
		if (GROW(p->svc_names_del, p->nsvc_names_del, cap_del))
			return -ENOMEM;
		p->svc_names_del[p->nsvc_names_del++] = id;
	}
	return 0;
}

static const struct kr_service *service_live(const struct kr_live *lv,
					     const struct kr_service_key *k)
{
	for (uint32_t i = 0; i < lv->nservices; i++)
		if (!memcmp(&lv->services[i].k, k, sizeof(*k)))
			return &lv->services[i].v;
	return NULL;
}

static int plan_services(struct planner *pl)
{
	const struct kr_config *cfg = pl->cfg;
	struct kr_apply_plan *p = pl->p;
	struct kr_service_key *keys;
	uint32_t *ids;
	int err = kr_units_resolve(&p->units, cfg);

	if (err)
		return err;
	keys = calloc(cfg->nservices + 1, sizeof(*keys));
	ids = calloc(cfg->nservices + 1, sizeof(*ids));
	err = keys && ids ? plan_svc_ids(pl, ids) : -ENOMEM;
	if (err)
		goto out;
	for (uint32_t i = 0; i < cfg->nservices; i++) {
		const struct kr_service *cur;
		struct kr_service v;

		kr_service_entry(&cfg->services[i], p->units.svc_ring[i], &keys[i], &v);
		v.subset_id = p->units.svc_subset[i];
		v.stats_id = ids[i];
		if (cfg->hash.keyed)	/* the secret is in kr_hash_key */
			v.flags |= KR_SVC_F_KEYED_HASH;
		kr_qlb_service_entry(cfg, i, &v);	/* QUIC-LB id and tag (quic_lb.h) */
		cur = service_live(pl->lv, &keys[i]);
		if (cur && !memcmp(cur, &v, sizeof(v))) {
			p->n.services_same++;
			continue;
		}
		if (GROW(p->services, p->nservices, pl->cap_svc)) {
			err = -ENOMEM;
			goto out;
		}
		p->services[p->nservices++] = (struct kr_plan_service){
			.k = keys[i], .v = v, .added = !cur, .name = cfg->services[i].name };
		if (cur)
			p->n.services_changed++;
		else
			p->n.services_added++;
	}
	for (uint32_t j = 0; j < pl->lv->nservices; j++) {
		bool keep = false;

		for (uint32_t i = 0; i < cfg->nservices && !keep; i++)
			keep = !memcmp(&keys[i], &pl->lv->services[j].k, sizeof(keys[i]));
		if (keep)
			continue;
		if (GROW(p->services_del, p->nservices_del, pl->cap_sdel)) {
			err = -ENOMEM;
			goto out;
		}
		p->services_del[p->nservices_del++] = pl->lv->services[j].k;
		p->n.services_removed++;
	}
out:
	free(keys);
	free(ids);
	return err;
}

/* ---- hot keys ----------------------------------------------------------------------------- */

static const struct kr_hot_ent *hot_live(const struct kr_live *lv, const struct kr_hot_key *k)
{
	for (uint32_t i = 0; i < lv->nhot; i++)
		if (lv->hot[i].k.ring_id == k->ring_id && lv->hot[i].k.key_hash == k->key_hash)
			return &lv->hot[i];
	return NULL;
}

static int hot_push(struct planner *pl, const char *ring, const struct kr_hot_ent *e,
		    enum kr_plan_hot_act act, const struct kr_hot_val *was)
{
	struct kr_apply_plan *p = pl->p;

	if (GROW(p->hot, p->nhot, pl->cap_hot))
		return -ENOMEM;
	p->hot[p->nhot++] = (struct kr_plan_hot){ .e = *e, .act = act, .was = was ? *was :
						   (struct kr_hot_val){ 0 }, .ring = ring };
	if (act == KR_PLAN_HOT_ADD)
		p->n.hot_keys_added++;
	else if (act == KR_PLAN_HOT_CHANGE)
		p->n.hot_keys_changed++;
	else
		p->n.hot_keys_removed++;
	return 0;
}

/* The "hot_keys" of one planned ring (whatever its version's action: a ring left alone
 * while staged or migrating gets them too) against its live entries: the configuration's
 * written (flags 0), the others removed but the controller's (KR_HOT_F_CONTROLLER). */
static int plan_hot_ring(struct planner *pl, const struct kr_plan_ring *pr)
{
	const struct kr_cfg_ring *cr = pr->unit->ring;
	const struct kr_live *lv = pl->lv;
	int err = 0;

	if (cr->nhot_keys && !lv->has_hot) {
		kr_errf(pl->err, "ring '%s': the running program has no hot keys (map "
			"kr_hot_keys): 'keyrouter upgrade' it first; nothing was changed",
			pr->unit->name);
		return -EOPNOTSUPP;
	}
	for (uint32_t i = 0; i < cr->nhot_keys && !err; i++) {
		struct kr_hot_ent e = { .k = { .ring_id = pr->ring_id,
					       .key_hash = cr->hot_keys[i].hash },
					.v = { .replicas = cr->hot_keys[i].replicas } };
		const struct kr_hot_ent *cur = hot_live(lv, &e.k);

		if (!cur)
			err = hot_push(pl, pr->unit->name, &e, KR_PLAN_HOT_ADD, NULL);
		else if (memcmp(&cur->v, &e.v, sizeof(e.v)))
			err = hot_push(pl, pr->unit->name, &e, KR_PLAN_HOT_CHANGE, &cur->v);
	}
	for (uint32_t j = 0; j < lv->nhot && !err; j++) {
		const struct kr_hot_ent *cur = &lv->hot[j];
		/* the controller's entries stay -- of the ring it balanced: a ring new to the
		 * id does not take over what was left there */
		bool keep = cur->k.ring_id != pr->ring_id ||
			    ((cur->v.flags & KR_HOT_F_CONTROLLER) && !pr->new_id);

		for (uint32_t i = 0; i < cr->nhot_keys && !keep; i++)
			keep = cr->hot_keys[i].hash == cur->k.key_hash;
		if (!keep)
			err = hot_push(pl, pr->unit->name, cur, KR_PLAN_HOT_DEL, NULL);
	}
	return err;
}

/* Is ring id `id` one this plan writes (a ring of the configuration)? */
static bool hot_ring_planned(const struct kr_apply_plan *p, uint32_t id)
{
	for (uint32_t r = 0; r < p->nrings; r++)
		if (p->rings[r].ring_id == id)
			return true;
	return false;
}

/*
 * Every ring of the plan's hot keys, then the entries no ring of the configuration owns:
 * those of the rings this plan removes and of ids no ring holds (left by an older
 * keyrouter, or by `hotkey add` / `balance` racing a removal), the controller's too -- a
 * ring that later gets the id must not inherit another ring's replicas.  Entries of ids
 * past KR_MAX_RINGS (no ring can have them: bpftool's) are left alone.
 */
static int plan_hot(struct planner *pl)
{
	const struct kr_apply_plan *p = pl->p;
	const struct kr_live *lv = pl->lv;
	int err = 0;

	for (uint32_t r = 0; r < p->nrings && !err; r++)
		err = plan_hot_ring(pl, &p->rings[r]);
	for (uint32_t j = 0; j < lv->nhot && !err; j++) {
		const struct kr_hot_ent *cur = &lv->hot[j];
		uint32_t id = cur->k.ring_id;
		const struct kr_plan_ring_rm *rm;

		if (id >= KR_MAX_RINGS || hot_ring_planned(p, id))
			continue;
		rm = ring_removed(p, id);
		if (!rm && lv->ring[id].name[0])
			continue;	/* a live ring the plan neither writes nor removes */
		err = hot_push(pl, rm ? rm->name : NULL, cur, KR_PLAN_HOT_DEL, NULL);
	}
	return err;
}

/* ---- garbage ------------------------------------------------------------------------------ */

/* Ring ids whose name the configuration no longer has (subset rings included). */
static int plan_gc_rings(struct planner *pl)
{
	struct kr_apply_plan *p = pl->p;

	for (uint32_t id = 0; id < KR_MAX_RINGS; id++) {
		const struct kr_live_ring *lr = &pl->lv->ring[id];

		if (!lr->name[0] || kr_units_find(&p->units, lr->name) >= 0)
			continue;
		if (GROW(p->rings_del, p->nrings_del, pl->cap_rdel))
			return -ENOMEM;
		p->rings_del[p->nrings_del].id = id;
		snprintf(p->rings_del[p->nrings_del++].name, KR_NAME_MAX, "%s", lr->name);
		p->n.rings_removed++;
	}
	return 0;
}

/* ---- the plan ----------------------------------------------------------------------------- */

static int plan_stage(struct planner *pl)
{
	int i = kr_units_find(&pl->p->units, pl->p->stage);
	int err;

	if (i < 0) {
		kr_errf(pl->err, "ring stage: the config has no ring '%s'", pl->p->stage);
		return -ENOENT;
	}
	err = plan_ring_head(pl, (uint32_t)i);
	if (!err)
		err = assign_ids(pl);
	if (!err)
		err = plan_ring_version(pl, &pl->p->rings[0]);
	if (err)
		return err;
	mark_after(pl);
	err = plan_backends(pl);
	/* the staged version's ids join the shared subsets now (not at the next apply):
	 * a migration must find them members */
	return err ? err : plan_members_add(pl);
}

static int plan_apply(struct planner *pl)
{
	struct kr_apply_plan *p = pl->p;
	int err = plan_hash_key(pl);

	for (uint32_t i = 0; i < p->units.n && !err; i++)
		err = plan_ring_head(pl, i);
	if (!err)
		err = assign_ids(pl);
	for (uint32_t r = 0; r < p->nrings && !err; r++)
		err = plan_ring_version(pl, &p->rings[r]);
	if (!err)
		err = plan_gc_rings(pl);
	if (err)
		return err;
	mark_after(pl);
	err = plan_backends(pl);
	if (!err)
		err = plan_devices(pl);
	if (!err)
		err = plan_members(pl);
	if (!err)
		err = plan_services(pl);
	if (!err)
		err = plan_hot(pl);
	if (!err)
		err = plan_release(pl);
	return err;
}

int kr_apply_plan(const struct kr_config *cfg, const struct kr_live *lv, const char *stage,
		  struct kr_apply_plan *p, struct kr_err *err)
{
	struct planner pl = { .cfg = cfg, .lv = lv, .p = p, .err = err };
	int rc;

	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	p->stage = stage;
	rc = kr_units_plan(cfg, &p->units, lv->has_members);
	if (rc) {
		if (err && !err->msg[0])
			kr_errf(err, "couldn't plan the rings of the configuration: %s",
				strerror(-rc));
		return rc;
	}
	p->rings = calloc(p->units.n + 1, sizeof(*p->rings));
	rc = p->rings ? ids_init(&pl) : -ENOMEM;
	if (rc)
		goto out;
	for (uint32_t id = 0; id < KR_MAX_RINGS; id++)
		pl.id_taken[id] = lv->ring[id].name[0] != 0;
	rc = stage ? plan_stage(&pl) : plan_apply(&pl);
out:
	if (rc == -ENOMEM && err && !err->msg[0])
		kr_errf(err, "out of memory");
	kr_ids_free(&pl.ids);
	free(pl.cfg_state);
	free(pl.cfg_spill);
	free(pl.mark);
	return rc;
}

void kr_apply_plan_free(struct kr_apply_plan *p)
{
	free(p->live_warnings);
	p->live_warnings = NULL;
	for (uint32_t i = 0; p->rings && i < p->nrings; i++)
		if (p->rings[i].ring)
			kr_ring_free(p->rings[i].ring);
	free(p->rings);
	kr_units_free(&p->units);
	free(p->backends);
	free(p->devices);
	free(p->members_add);
	free(p->services);
	free(p->members_del);
	free(p->services_del);
	free(p->svc_names);
	free(p->svc_names_del);
	free(p->rings_del);
	free(p->backends_release);
	free(p->hot);
	memset(&p->hash_key, 0, sizeof(p->hash_key));
	memset(p, 0, sizeof(*p));
}

bool kr_apply_plan_changes(const struct kr_apply_plan *p)
{
	const struct kr_apply_counts *n = &p->n;

	return n->rings_published + n->rings_removed + n->services_added + n->services_changed +
	       n->services_removed + n->backends_added + n->backends_changed +
	       n->backends_removed + n->hot_keys_added + n->hot_keys_changed +
	       n->hot_keys_removed;
}
