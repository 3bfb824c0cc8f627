// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* apply: converge the pinned maps of an instance on a configuration (see ops_apply.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include "config.h"
#include "continuum.h"
#include "image.h"
#include "log.h"
#include "ops_apply.h"
#include "backend_ids.h"
#include "ops_kernel.h"
#include "ops_publish.h"
#include "publish.h"
#include "units.h"
#include "ops_services.h"
#include "ring_sm.h"

int kr_ops_apply_check(const char *config, char *instance, size_t len)
{
	struct kr_config *cfg;
	char *errs = NULL;

	cfg = kr_config_load(config, &errs);
	if (!cfg) {
		fprintf(stderr, "%s", errs ? errs : "keyrouter: invalid configuration\n");
		free(errs);
		return -EINVAL;
	}
	if (instance && len)
		snprintf(instance, len, "%s", cfg->instance ? cfg->instance : "");
	kr_config_free(cfg);
	return 0;
}

/* ---- backends ------------------------------------------------------------------- */

static void sockaddr_from_backend(const struct kr_backend *b, struct kr_sockaddr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = b->family;
	a->port = ntohs(b->port);
	memcpy(a->ip, b->addr, 16);
}

/* The kr_backends entry a config backend asks for; state from the current entry. */
static void backend_value(const struct kr_cfg_backend *cb, const struct kr_backend *cur,
			  bool is_new, struct kr_backend *v)
{
	memset(v, 0, sizeof(*v));
	memcpy(v->addr, cb->addr.ip, 16);
	v->port = htons(cb->addr.port);
	v->family = cb->addr.family;
	if (cb->has_mac)
		memcpy(v->mac, cb->mac, 6);
	v->ifindex = kr_ops_backend_ifindex(cb);
	/* Health is runtime state (`backend set`); the config decides it for a new backend,
	 * and whenever it says down or drain. */
	v->state = is_new || cb->state != KR_BACKEND_UP ? cb->state : cur->state;
	if (v->state > KR_BACKEND_DRAIN)
		v->state = KR_BACKEND_UP;
}

struct apply_ctx {
	struct kr_inst *in;
	struct kr_ops_maps m;
	const struct kr_config *cfg;
	const struct kr_ops_apply_opts *o;
	struct kr_ops_apply_result *res;
	struct kr_ops_idset used;	/* ids referenced at the start + assigned now */
	struct kr_ops_units units;
	const char *stage;		/* ring stage: the unit to stage, nothing else */
};

/* Every id referenced by any published image (both slots of every ring). */
static int collect_used(struct apply_ctx *c)
{
	struct kr_ops_slot s;

	for (__u32 r = 0; r < KR_MAX_RINGS; r++) {
		for (__u32 slot = 0; slot < 2; slot++) {
			int err = kr_ops_slot_read(&c->m, r, slot, true, &s);

			if (err)
				return err;
			for (__u32 i = 0; s.present && i < s.hdr.nbackends; i++)
				kr_ops_idset_add(&c->used, s.bt[i]);
			kr_ops_slot_free(&s);
		}
	}
	return 0;
}

/* ids and addresses the ring's published images use now. */
static int prev_ids(struct apply_ctx *c, __u32 ring_id, struct kr_ops_idmap **out, __u32 *n)
{
	struct kr_ops_idmap *v = NULL;
	struct kr_ops_slot s[2];
	__u32 cnt = 0;
	int err = 0;

	memset(s, 0, sizeof(s));
	for (int i = 0; i < 2 && !err; i++)
		err = kr_ops_slot_read(&c->m, ring_id, i, true, &s[i]);
	if (err)
		goto out;
	v = calloc((size_t)s[0].hdr.nbackends + s[1].hdr.nbackends + 1, sizeof(*v));
	if (!v) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		for (__u32 b = 0; s[i].present && b < s[i].hdr.nbackends; b++) {
			struct kr_backend be;

			if (bpf_map_lookup_elem(c->m.backends, &s[i].bt[b], &be) || !be.family)
				continue;
			sockaddr_from_backend(&be, &v[cnt].addr);
			v[cnt++].id = s[i].bt[b];
		}
	}
out:
	kr_ops_slot_free(&s[0]);
	kr_ops_slot_free(&s[1]);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* Write the kr_backends entries of a unit's backends (only those that differ). */
static int write_backends(struct apply_ctx *c, const struct kr_ops_unit *u, const __u32 *ids,
			  const struct kr_ops_idmap *prev, __u32 nprev)
{
	for (__u32 i = 0; i < u->n; i++) {
		const struct kr_cfg_backend *cb = &u->ring->backends[u->idx[i]];
		struct kr_backend cur = {}, want;
		bool is_new = true;

		for (__u32 j = 0; j < nprev; j++)
			is_new = is_new && prev[j].id != ids[i];
		if (ids[i] >= c->m.backends_max) {
			pr_warn("keyrouter: backend id %u is beyond kr_backends (%u entries)\n",
				ids[i], c->m.backends_max);
			return -ENOSPC;
		}
		bpf_map_lookup_elem(c->m.backends, &ids[i], &cur);
		if (!cur.family)
			is_new = true;
		backend_value(cb, &cur, is_new, &want);
		if (!memcmp(&cur, &want, sizeof(want))) {
			c->res->backends_same++;
			continue;
		}
		if (is_new)
			c->res->backends_added++;
		else
			c->res->backends_changed++;
		if (c->o->dry_run)
			continue;
		if (bpf_map_update_elem(c->m.backends, &ids[i], &want, BPF_ANY)) {
			int err = -errno;

			pr_warn("keyrouter: couldn't write backend id %u: %s\n", ids[i],
				strerror(-err));
			return err;
		}
	}
	return 0;
}

/* ---- rings ---------------------------------------------------------------------- */

static bool same_version(const struct kr_ops_slot *s, const struct kr_ring *r, const __u32 *ids)
{
	if (!s->present || s->hdr.digest != r->digest || s->hdr.ring_version != r->version ||
	    s->hdr.point_multiple != r->point_multiple || s->hdr.nbackends != r->nbackends ||
	    s->hdr.npoints != r->npoints + r->ndups)
		return false;
	return !memcmp(s->bt, ids, r->nbackends * sizeof(__u32));
}

static int build_ring(const struct kr_ops_unit *u, struct kr_ring **out)
{
	struct kr_backend_spec *spec;
	struct kr_err err = {};
	int rc;

	spec = calloc(u->n ? u->n : 1, sizeof(*spec));
	if (!spec)
		return -ENOMEM;
	for (__u32 i = 0; i < u->n; i++) {
		spec[i].addr = u->ring->backends[u->idx[i]].addr;
		spec[i].weight = u->ring->backends[u->idx[i]].weight;
	}
	rc = kr_ring_build(out, spec, u->n, u->ring->format, u->ring->point_multiple, &err);
	free(spec);
	if (rc) {
		pr_warn("keyrouter: ring '%s': %s\n", u->name, err.msg);
		return -EINVAL;
	}
	return 0;
}

/* The standby slot already holds this version (a stage that completed, e.g. before the
 * tool was killed): staging it again is a no-op, so a repeated stage converges. */
static bool already_staged(struct apply_ctx *c, const struct kr_ops_unit *u, __u64 ctl,
			   const struct kr_ring *ring, const __u32 *ids)
{
	struct kr_ops_slot st = {};
	bool same;

	if (kr_ops_slot_read(&c->m, u->ring_id, kr_ctl_active(ctl) ^ 1, true, &st))
		return false;
	same = same_version(&st, ring, ids);
	kr_ops_slot_free(&st);
	return same;
}

/* ring stage: allowed from idle only, onto a published ring, with a different version;
 * staging the version that is already staged changes nothing and succeeds. */
static int stage_check(struct apply_ctx *c, const struct kr_ops_unit *u, __u64 ctl,
		       const struct kr_ops_slot *act, const struct kr_ring *ring, const __u32 *ids)
{
	const char *why;
	__u64 next;

	if (kr_ops_sm_next(ctl, KR_OPS_STAGE, 0, &next, &why)) {
		if (already_staged(c, u, ctl, ring, ids)) {
			printf("ring %s: already staged: digest %08x in slot %u (state %s); "
			       "nothing changed\n", u->name, ring->digest, kr_ctl_active(ctl) ^ 1,
			       kr_ops_state_name(kr_ctl_state(ctl)));
			c->res->rings_same++;
			return 0;
		}
		pr_warn("keyrouter: ring stage %s: %s (state %s)\n", u->name, why,
			kr_ops_state_name(kr_ctl_state(ctl)));
		return -EBUSY;
	}
	if (!act->present) {
		pr_warn("keyrouter: ring stage %s: nothing is published for it yet; run "
			"'keyrouter apply' first\n", u->name);
		return -ENOENT;
	}
	if (same_version(act, ring, ids)) {
		printf("ring %s: nothing to stage: the config's version equals the active one "
		       "(digest %08x)\n", u->name, ring->digest);
		c->res->rings_same++;
		return 0;
	}
	c->res->rings_published++;
	return 0;
}

static int apply_unit(struct apply_ctx *c, struct kr_ops_unit *u)
{
	struct kr_ops_idmap *prev = NULL;
	struct kr_ops_slot act = {};
	struct kr_ring *ring = NULL;
	struct kr_image img = {};
	struct kr_err kerr = {};
	__u32 nprev = 0, *ids = NULL, active, slot;
	__u64 t_build, t_enc, t_pub;
	__u64 ctl = 0;
	int err;

	err = u->ring_id = kr_ops_ring_assign(c->in, u->name,
					      u->subset_mask ? KR_OPS_RING_DEDICATED : 0);
	if (err < 0)
		return err;
	err = kr_ops_ctl_read(&c->m, u->ring_id, &ctl);
	if (err)
		goto out;
	active = slot = kr_ctl_active(ctl);
	err = prev_ids(c, u->ring_id, &prev, &nprev);
	if (err)
		goto out;
	free(u->gid);
	u->gid = ids = calloc(u->n ? u->n : 1, sizeof(*ids));	/* the unit owns them */
	if (!ids) {
		err = -ENOMEM;
		goto out;
	}
	{
		struct kr_sockaddr *want = calloc(u->n ? u->n : 1, sizeof(*want));

		if (!want) {
			err = -ENOMEM;
			goto out;
		}
		for (__u32 i = 0; i < u->n; i++)
			want[i] = u->ring->backends[u->idx[i]].addr;
		err = kr_ops_ids_assign(prev, nprev, want, u->n, &c->used, ids) ? -ENOSPC : 0;
		free(want);
		if (err) {
			pr_warn("keyrouter: ring '%s': no free backend ids left (%u)\n", u->name,
				c->used.max);
			goto out;
		}
	}
	err = write_backends(c, u, ids, prev, nprev);
	if (err)
		goto out;
	t_build = kr_ops_now_ns();
	err = build_ring(u, &ring);
	if (err)
		goto out;
	err = kr_ops_slot_read(&c->m, u->ring_id, active, true, &act);
	if (err)
		goto out;
	if (c->stage) {
		err = stage_check(c, u, ctl, &act, ring, ids);
		if (err || !c->res->rings_published)
			goto out;
		slot = active ^ 1;
	} else if (same_version(&act, ring, ids)) {
		c->res->rings_same++;
		pr_debug("keyrouter: ring '%s' (id %d): unchanged, digest %08x\n", u->name,
			 u->ring_id, ring->digest);
		goto out;
	} else if (kr_ctl_state(ctl) != KR_RING_IDLE) {
		c->res->rings_skipped++;
		pr_warn("keyrouter: ring '%s' is %s: apply leaves it alone (commit or roll back "
			"first)\n", u->name, kr_ctl_state(ctl) == KR_RING_STAGED ? "staged" :
			"migrating");
		goto out;
	} else {
		c->res->rings_published++;
	}
	if (!c->o->quiet && !c->stage)
		pr_info("keyrouter: ring '%s' (id %d): publishing digest %08x, %u points "
			"(was %s%08x)\n", u->name, u->ring_id, ring->digest, ring->npoints,
			act.present ? "" : "nothing, ", act.present ? act.hdr.digest : 0);
	if (c->o->dry_run)
		goto out;
	t_enc = kr_ops_now_ns();
	if (kr_image_encode(&img, ring, ids, &kerr)) {
		pr_warn("keyrouter: ring '%s': couldn't encode the image: %s\n", u->name, kerr.msg);
		err = -EINVAL;
		goto out;
	}
	t_pub = kr_ops_now_ns();
	err = kr_ops_publish(&c->m, u->ring_id, slot, &img);
	pr_debug("keyrouter: ring '%s': %u points; build %.3f ms, encode %.3f ms, publish "
		 "(map create + fill + freeze + slot update) %.3f ms\n", u->name, ring->npoints,
		 (t_enc - t_build) / 1e6, (t_pub - t_enc) / 1e6, (kr_ops_now_ns() - t_pub) / 1e6);
	if (!err && c->stage) {
		struct kr_ops_slot st = {};

		err = kr_ops_ctl_write(&c->m, u->ring_id, kr_ctl_make(active, 0, KR_RING_STAGED));
		if (!err && !kr_ops_slot_read(&c->m, u->ring_id, slot, false, &st))
			printf("ring %s: staged digest %08x (%u points, generation %llu) in slot %u; "
			       "fraction 0%%, slot %u stays active\n", u->name, ring->digest,
			       ring->npoints, (unsigned long long)st.hdr.generation, slot,
			       active);
	}
out:
	kr_image_free(&img);
	kr_ops_slot_free(&act);
	if (ring)
		kr_ring_free(ring);
	free(prev);
	return err;
}

/* ---- shared subsets (kr_subset_members) ----------------------------------------- */

static bool member_wanted(const struct apply_ctx *c, const struct kr_subset_key *k)
{
	for (uint32_t s = 0; s < c->units.nsub; s++) {
		const struct kr_ops_subset *sub = &c->units.sub[s];
		const struct kr_ops_unit *u = &c->units.u[sub->unit];

		if (sub->id != k->subset_id || !u->gid)
			continue;
		for (uint32_t i = 0; i < u->n; i++)
			if (u->gid[i] == k->backend_id &&
			    (u->ring->backends[u->idx[i]].tags & sub->mask) == sub->mask)
				return true;
	}
	return false;
}

/* Members of every shared subset: written before the services that name the subsets. */
static int write_members(struct apply_ctx *c)
{
	__u32 one = 1, cur;

	for (uint32_t s = 0; s < c->units.nsub && !c->o->dry_run; s++) {
		const struct kr_ops_subset *sub = &c->units.sub[s];
		const struct kr_ops_unit *u = &c->units.u[sub->unit];

		for (uint32_t i = 0; u->gid && i < u->n; i++) {
			struct kr_subset_key k = { .subset_id = sub->id, .backend_id = u->gid[i] };

			if ((u->ring->backends[u->idx[i]].tags & sub->mask) != sub->mask ||
			    !bpf_map_lookup_elem(c->m.members, &k, &cur))
				continue;
			if (bpf_map_update_elem(c->m.members, &k, &one, BPF_ANY)) {
				int err = -errno;

				pr_warn("keyrouter: subset '%s': couldn't write member %u into %s: "
					"%s\n", sub->name, k.backend_id, KR_MAP_SUBSET_MEMBERS,
					strerror(-err));
				return err;
			}
		}
	}
	return 0;
}

/* Remove members of subsets (or backends) the configuration no longer has: after the
 * services stopped naming them. */
static int gc_members(struct apply_ctx *c)
{
	struct kr_subset_key k, next;
	void *pk = NULL;

	if (c->m.members < 0 || c->o->dry_run)
		return 0;
	while (!bpf_map_get_next_key(c->m.members, pk, &next)) {
		k = next;
		pk = &k;
		if (member_wanted(c, &k))
			continue;
		if (bpf_map_delete_elem(c->m.members, &k) && errno != ENOENT)
			return -errno;
		pk = NULL;	/* deleted: restart (the map is small) */
	}
	return 0;
}

/* ---- garbage -------------------------------------------------------------------- */

static int gc_rings(struct apply_ctx *c)
{
	struct kr_ops_ring r;

	for (__u32 id = 0; id < KR_MAX_RINGS; id++) {
		if (kr_ops_ring_get(c->in, id, &r) || !r.name[0] ||
		    kr_ops_units_find(&c->units, r.name) >= 0)
			continue;
		c->res->rings_removed++;
		if (!c->o->quiet)
			pr_info("keyrouter: ring '%s' (id %u): no longer in the config, removed\n",
				r.name, id);
		if (c->o->dry_run)
			continue;
		for (__u32 slot = 0; slot < 2; slot++)
			kr_unpublish(c->m.rings, id, slot, NULL);
		kr_ops_ctl_write(&c->m, id, 0);
		kr_ops_ring_release(c->in, id);
	}
	return 0;
}

/* Clear kr_backends entries that no published image references any more. */
static int gc_backends(struct apply_ctx *c, const struct kr_ops_idset *before)
{
	struct kr_ops_idset now = {};
	struct kr_backend unused = { .state = KR_BACKEND_UNUSED };
	struct kr_ops_apply_opts o = *c->o;
	int err;

	if (c->o->dry_run)
		return 0;
	if (kr_ops_idset_init(&now, c->used.max))
		return -ENOMEM;
	{
		struct kr_ops_idset keep = c->used;

		c->used = now;
		err = collect_used(c);
		now = c->used;
		c->used = keep;
	}
	(void)o;
	for (__u32 id = 0; !err && id < before->max; id++) {
		if (!kr_ops_idset_has(before, id) || kr_ops_idset_has(&now, id))
			continue;
		c->res->backends_removed++;
		if (bpf_map_update_elem(c->m.backends, &id, &unused, BPF_ANY))
			err = -errno;
	}
	kr_ops_idset_free(&now);
	return err;
}

/* ---- apply ---------------------------------------------------------------------- */

static void print_result(const struct kr_ops_apply_result *r, bool dry)
{
	unsigned changes = r->rings_published + r->rings_removed + r->services_added +
			   r->services_changed + r->services_removed + r->backends_added +
			   r->backends_changed + r->backends_removed;

	if (!changes && !r->rings_skipped) {
		printf("apply: nothing changed (%u rings, %u services, %u backends up to date)\n",
		       r->rings_same, r->services_same, r->backends_same);
		return;
	}
	printf("apply%s: rings %u published, %u unchanged, %u skipped (migrating), %u removed; "
	       "services %u added, %u changed, %u removed, %u unchanged; backends %u added, "
	       "%u changed, %u released, %u unchanged\n", dry ? " (dry run)" : "",
	       r->rings_published, r->rings_same, r->rings_skipped, r->rings_removed,
	       r->services_added, r->services_changed, r->services_removed, r->services_same,
	       r->backends_added, r->backends_changed, r->backends_removed, r->backends_same);
}

static int apply_cfg(struct kr_inst *in, const struct kr_config *cfg,
		     const struct kr_ops_apply_opts *o, struct kr_ops_apply_result *res,
		     const char *stage)
{
	static const struct kr_ops_apply_opts defaults = {};
	struct apply_ctx c = { .in = in, .cfg = cfg, .o = o ? o : &defaults, .res = res,
			       .stage = stage };
	struct kr_ops_idset before = {};
	int err;

	memset(res, 0, sizeof(*res));
	err = kr_ops_maps_open(in, &c.m);
	if (err)
		return err;
	/* the keyed-hash secret first: a data path without kr_hash_key is refused before
	 * anything is published */
	if (!c.stage) {
		err = kr_ops_apply_hash_key(in, cfg, c.o);
		if (err)
			goto out;
	}
	err = kr_ops_units_plan(cfg, &c.units, c.m.members >= 0);
	if (err)
		goto out;
	if (kr_ops_idset_init(&c.used, c.m.backends_max) ||
	    kr_ops_idset_init(&before, c.m.backends_max)) {
		err = -ENOMEM;
		goto out;
	}
	err = collect_used(&c);
	if (err)
		goto out;
	memcpy(before.bits, c.used.bits, ((c.used.max + 63) / 64) * sizeof(uint64_t));
	if (c.stage) {
		int i = kr_ops_units_find(&c.units, c.stage);

		if (i < 0) {
			pr_warn("keyrouter: ring stage: the config has no ring '%s'\n", c.stage);
			err = -ENOENT;
		} else {
			err = apply_unit(&c, &c.units.u[i]);
		}
		goto out;
	}
	for (__u32 i = 0; i < c.units.n && !err; i++)
		err = apply_unit(&c, &c.units.u[i]);
	if (err)
		goto out;
	kr_ops_apply_devices(c.in, c.m.devices, cfg, c.o, c.res);
	err = kr_ops_units_resolve(&c.units, cfg);
	if (!err)
		err = write_members(&c);
	if (!err)
		err = kr_ops_apply_services(c.m.services, cfg, c.units.svc_ring,
					    c.units.svc_subset, c.o, c.res);
	if (!err)
		err = gc_members(&c);
	if (!err)
		err = gc_rings(&c);
	if (!err)
		err = gc_backends(&c, &before);
out:
	kr_ops_idset_free(&before);
	kr_ops_idset_free(&c.used);
	kr_ops_units_free(&c.units);
	kr_ops_maps_close(&c.m);
	return err;
}

int kr_ops_apply_cfg(struct kr_inst *in, const struct kr_config *cfg,
		     const struct kr_ops_apply_opts *o, struct kr_ops_apply_result *res)
{
	return apply_cfg(in, cfg, o, res, NULL);
}

int kr_ops_stage(struct kr_inst *in, const char *config, const char *ring)
{
	struct kr_ops_apply_opts o = { .quiet = true };
	struct kr_ops_apply_result res;
	struct kr_config *cfg;
	char *errs = NULL;
	int err;

	cfg = kr_config_load(config, &errs);
	if (!cfg) {
		fprintf(stderr, "%s", errs ? errs : "keyrouter: invalid configuration\n");
		free(errs);
		return -EINVAL;
	}
	err = apply_cfg(in, cfg, &o, &res, ring);
	kr_config_free(cfg);
	return err;
}

int kr_ops_apply(struct kr_inst *in, const char *config, const struct kr_ops_apply_opts *o)
{
	struct kr_ops_apply_result res;
	struct kr_config *cfg;
	char *errs = NULL;
	int err;

	cfg = kr_config_load(config, &errs);
	if (!cfg) {
		fprintf(stderr, "%s", errs ? errs : "keyrouter: invalid configuration\n");
		free(errs);
		return -EINVAL;
	}
	err = kr_ops_apply_cfg(in, cfg, o, &res);
	if (!err && !(o && o->quiet))
		print_result(&res, o && o->dry_run);
	if (err)
		pr_warn("keyrouter: apply of '%s' stopped: %s; what was published before still "
			"routes, the next apply converges\n", config, strerror(-err));
	kr_config_free(cfg);
	return err;
}
