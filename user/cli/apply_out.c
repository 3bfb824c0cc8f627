// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What apply, load and ring stage print (see apply_out.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include "addr.h"
#include "apply_out.h"
#include "json_out.h"
#include "log.h"
#include "ops_find.h"
#include "ring_sm.h"

struct kr_config *kr_cli_config_load(const char *path)
{
	struct kr_config *cfg;
	char *errs = NULL;

	cfg = kr_config_load(path, &errs);
	if (!cfg) {
		fputs(errs ? errs : "", stderr);
		/* the line of `config check`, and what it means here: nothing was touched */
		fprintf(stderr, "keyrouter: configuration '%s' is invalid: nothing was changed\n",
			path);
	} else if (cfg->warnings)
		fputs(cfg->warnings, stderr);	/* e.g. a ring of gigabytes: valid, but meant? */
	free(errs);
	return cfg;
}

/* ---- what was done ------------------------------------------------------------------------ */

/* The share of a ring's keys its publish moves (has_moved), 0..1. */
static double moved_share(const struct kr_plan_ring *pr)
{
	return (double)pr->moved / 4294967296.0;
}

static const char *skip_state(const struct kr_plan_ring *pr)
{
	return pr->state == KR_RING_STAGED ? "staged" : "migrating";
}

/* The rings, as apply has always reported them: publishes (info), left-alone rings
 * (warning), unchanged rings and timings (debug). */
static void print_rings_done(const struct kr_apply_plan *p)
{
	for (uint32_t i = 0; i < p->nrings; i++) {
		const struct kr_plan_ring *pr = &p->rings[i];
		const char *name = pr->unit->name;

		if (!pr->ring)	/* the plan stopped before it was built */
			continue;
		switch (pr->act) {
		case KR_PLAN_SAME:
			pr_debug("keyrouter: ring '%s' (id %u): unchanged, digest %08x\n", name,
				 pr->ring_id, pr->ring->digest);
			break;
		case KR_PLAN_SKIP:
			pr_warn("keyrouter: ring '%s' is %s: apply leaves it alone (commit or roll "
				"back first)\n", name, skip_state(pr));
			break;
		case KR_PLAN_PUBLISH:
			if (!pr->done)
				break;
			pr_info("keyrouter: ring '%s' (id %u): publishing digest %08x, %u points "
				"(was %s%08x)\n", name, pr->ring_id, pr->ring->digest,
				pr->ring->npoints, pr->was_present ? "" : "nothing, ", pr->was_digest);
			if (pr->has_moved)
				pr_info("keyrouter: ring '%s': %.2f%% of its keys moved to another "
					"backend\n", name, 100 * moved_share(pr));
			pr_debug("keyrouter: ring '%s': %u points; build %.3f ms, encode %.3f ms, "
				 "publish (map create + fill + freeze + slot update) %.3f ms\n", name,
				 pr->ring->npoints, pr->build_ns / 1e6, pr->encode_ns / 1e6,
				 pr->publish_ns / 1e6);
			break;
		default:
			break;
		}
	}
}

static void print_summary(const struct kr_apply_plan *p)
{
	const struct kr_apply_counts *r = &p->n;

	if (!kr_apply_plan_changes(p) && !r->rings_skipped) {
		printf("apply: nothing changed (%u rings, %u services, %u backends up to date)\n",
		       r->rings_same, r->services_same, r->backends_same);
		return;
	}
	printf("apply: rings %u published, %u unchanged, %u skipped (migrating), %u removed; "
	       "services %u added, %u changed, %u removed, %u unchanged; backends %u added, "
	       "%u changed, %u released, %u unchanged; hot keys %u added, %u changed, %u "
	       "removed\n",
	       r->rings_published, r->rings_same, r->rings_skipped, r->rings_removed,
	       r->services_added, r->services_changed, r->services_removed, r->services_same,
	       r->backends_added, r->backends_changed, r->backends_removed, r->backends_same,
	       r->hot_keys_added, r->hot_keys_changed, r->hot_keys_removed);
}

/* ---- the plan (--dry-run) ------------------------------------------------------------------- */

static void service_str(const struct kr_service_key *k, char *buf, size_t len)
{
	struct kr_sockaddr a = { .family = k->family, .port = ntohs(k->port) };
	char s[KR_SOCKADDR_STRLEN];

	if (!k->family) {
		snprintf(buf, len, "*:%u/%s", ntohs(k->port), k->proto == 17 ? "udp" : "?");
		return;
	}
	memcpy(a.ip, k->addr, 16);
	kr_sockaddr_format(&a, s);
	snprintf(buf, len, "%s/%s", s, k->proto == 17 ? "udp" : "?");
}

static const char *state_name(uint8_t s)
{
	return s == KR_BACKEND_DOWN ? "down" : s == KR_BACKEND_DRAIN ? "drain" : "up";
}

static void print_plan_rings(const struct kr_apply_plan *p, double max_move)
{
	for (uint32_t i = 0; i < p->nrings; i++) {
		const struct kr_plan_ring *pr = &p->rings[i];

		printf("ring '%s' (id %u%s): ", pr->unit->name, pr->ring_id,
		       pr->new_id ? ", a new id" : "");
		if (pr->act == KR_PLAN_SAME)
			printf("unchanged (digest %08x)\n", pr->ring->digest);
		else if (pr->act == KR_PLAN_SKIP)
			printf("differs, but it is %s: left alone (commit or roll back first)\n",
			       skip_state(pr));
		else if (pr->why == KR_PLAN_WHY_NEW)
			printf("would publish digest %08x, %u points into slot %u (nothing is "
			       "published for it yet)\n", pr->ring->digest, pr->ring->npoints,
			       pr->slot);
		else
			printf("would publish digest %08x, %u points into slot %u (replacing "
			       "digest %08x: the config's version differs)\n", pr->ring->digest,
			       pr->ring->npoints, pr->slot, pr->was_digest);
		if (pr->act == KR_PLAN_PUBLISH && pr->has_moved)
			printf("  it moves %.2f%% of the ring's keys to another backend at once "
			       "(max_move %g%%%s)\n", 100 * moved_share(pr), 100 * max_move,
			       moved_share(pr) > max_move ? ": refused without --force" : "");
	}
}

static const char *const hot_act_names[] = {
	[KR_PLAN_HOT_ADD] = "add", [KR_PLAN_HOT_CHANGE] = "change", [KR_PLAN_HOT_DEL] = "remove",
};

static void print_plan_hot(const struct kr_apply_plan *p)
{
	for (uint32_t i = 0; i < p->nhot; i++) {
		const struct kr_plan_hot *h = &p->hot[i];

		printf("ring '%s': would %s hot key 0x%08x ", h->ring ? h->ring : "(none)",
		       hot_act_names[h->act],
		       h->e.k.key_hash);
		if (h->act == KR_PLAN_HOT_ADD)
			printf("(replicas %u)\n", h->e.v.replicas);
		else if (h->act == KR_PLAN_HOT_DEL)
			printf("(replicas %u; not in the config)\n", h->e.v.replicas);
		else
			printf("(replicas %u -> %u%s)\n", h->was.replicas, h->e.v.replicas,
			       (h->was.flags & KR_HOT_F_CONTROLLER) ? "; the controller's entry "
			       "becomes the config's" : "");
	}
}

static void print_plan_entries(const struct kr_apply_plan *p)
{
	char s[KR_SOCKADDR_STRLEN + 16];

	if (p->write_hash_key)
		printf("keyed-hash secret: would write it into kr_hash_key\n");
	for (uint32_t i = 0; i < p->nbackends; i++) {
		const struct kr_plan_backend *b = &p->backends[i];
		struct kr_sockaddr a = { .family = b->v.family, .port = ntohs(b->v.port) };

		memcpy(a.ip, b->v.addr, 16);
		kr_sockaddr_format(&a, s);
		printf("backend id %u (%s of ring '%s', %s): would %s\n", b->id, s,
		       p->units.u[b->unit].name, state_name(b->v.state),
		       b->added ? "add" : b->in_place ? "change its forwarding in place" :
		       "change");
	}
	for (uint32_t i = 0; i < p->ndevices; i++) {
		const uint8_t *m = p->devices[i].v.mac;

		printf("device ifindex %u: would set source MAC %02x:%02x:%02x:%02x:%02x:%02x\n",
		       p->devices[i].ifindex, m[0], m[1], m[2], m[3], m[4], m[5]);
	}
	for (uint32_t i = 0; i < p->nmembers_add; i++)
		printf("subset '%s': would add member backend id %u\n", p->members_add[i].subset,
		       p->members_add[i].k.backend_id);
	for (uint32_t i = 0; i < p->nservices; i++) {
		service_str(&p->services[i].k, s, sizeof(s));
		printf("service '%s' (%s): would %s (ring id %u)\n", p->services[i].name, s,
		       p->services[i].added ? "add" : "change", p->services[i].v.ring_id);
	}
	for (uint32_t i = 0; i < p->nservices_del; i++) {
		service_str(&p->services_del[i], s, sizeof(s));
		printf("service %s: would remove (not in the config)\n", s);
	}
	for (uint32_t i = 0; i < p->nmembers_del; i++)
		printf("subset id %08x: would remove member backend id %u\n",
		       p->members_del[i].k.subset_id, p->members_del[i].k.backend_id);
	print_plan_hot(p);
	for (uint32_t i = 0; i < p->nrings_del; i++)
		printf("ring '%s' (id %u): would remove (not in the config)\n", p->rings_del[i].name,
		       p->rings_del[i].id);
	for (uint32_t i = 0; i < p->nbackends_release; i++)
		printf("backend id %u: would release (no image references it any more)\n",
		       p->backends_release[i]);
}

static void print_plan(const struct kr_apply_plan *p, double max_move)
{
	const struct kr_apply_counts *r = &p->n;

	print_plan_rings(p, max_move);
	print_plan_entries(p);
	if (!kr_apply_plan_changes(p) && !r->rings_skipped) {
		printf("apply (dry run): nothing would change (%u rings, %u services, %u backends "
		       "up to date)\n", r->rings_same, r->services_same, r->backends_same);
		return;
	}
	printf("apply (dry run): would publish %u rings, would remove %u rings (%u unchanged, %u "
	       "skipped: staged or migrating); would add %u services, would change %u services, "
	       "would remove %u services (%u unchanged); would add %u backends, would change %u "
	       "backends, would release %u backends (%u unchanged); would add %u hot keys, would "
	       "change %u hot keys, would remove %u hot keys; nothing was written\n",
	       r->rings_published, r->rings_removed, r->rings_same, r->rings_skipped,
	       r->services_added, r->services_changed, r->services_removed, r->services_same,
	       r->backends_added, r->backends_changed, r->backends_removed, r->backends_same,
	       r->hot_keys_added, r->hot_keys_changed, r->hot_keys_removed);
}

/* ---- --json ---------------------------------------------------------------------------------- */

static const char *const act_names[] = {
	[KR_PLAN_SAME] = "unchanged", [KR_PLAN_PUBLISH] = "publish", [KR_PLAN_SKIP] = "skip",
	[KR_PLAN_STAGE] = "stage", [KR_PLAN_STAGED_ALREADY] = "staged_already",
	[KR_PLAN_STAGE_SAME] = "stage_same",
};

static json_t *j_hex32(uint32_t v)
{
	char b[9];

	snprintf(b, sizeof(b), "%08x", v);
	return json_string(b);
}

static json_t *j_rings(const struct kr_apply_plan *p)
{
	json_t *a = json_array();

	for (uint32_t i = 0; i < p->nrings; i++) {
		const struct kr_plan_ring *pr = &p->rings[i];
		json_t *r;

		if (!pr->ring)	/* the plan stopped before it was built */
			continue;
		r = json_pack("{s:s,s:i,s:b,s:s,s:o,s:i,s:o,s:b}", "ring", pr->unit->name, "id",
			      pr->ring_id, "new_id", pr->new_id, "action",
			      act_names[pr->act], "digest", j_hex32(pr->ring->digest), "points",
			      pr->ring->npoints, "was_digest", pr->was_present ?
			      j_hex32(pr->was_digest) : json_null(), "done", pr->done);
		if (pr->act == KR_PLAN_PUBLISH || pr->act == KR_PLAN_STAGE)
			json_object_set_new(r, "slot", json_integer(pr->slot));
		if (pr->act == KR_PLAN_PUBLISH)
			json_object_set_new(r, "why", json_string(pr->why == KR_PLAN_WHY_NEW ?
							"new" : "changed"));
		if (pr->act == KR_PLAN_SKIP || pr->act == KR_PLAN_STAGED_ALREADY)
			json_object_set_new(r, "state", json_string(kr_sm_state_name(pr->state)));
		if (pr->generation)
			json_object_set_new(r, "generation", json_integer((json_int_t)pr->generation));
		if (pr->has_moved)
			json_object_set_new(r, "moved", json_real(moved_share(pr)));
		json_array_append_new(a, r);
	}
	return a;
}

static json_t *j_counts(const struct kr_apply_counts *r)
{
	return json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}",
			 "rings_published", r->rings_published, "rings_unchanged", r->rings_same,
			 "rings_skipped", r->rings_skipped, "rings_removed", r->rings_removed,
			 "services_added", r->services_added, "services_changed",
			 r->services_changed, "services_removed", r->services_removed,
			 "services_unchanged", r->services_same, "backends_added",
			 r->backends_added, "backends_changed", r->backends_changed,
			 "backends_released", r->backends_removed, "backends_unchanged",
			 r->backends_same, "hot_keys_added", r->hot_keys_added,
			 "hot_keys_changed", r->hot_keys_changed, "hot_keys_removed",
			 r->hot_keys_removed);
}

/* The writes a dry run would make (print_plan_entries' lines as objects). */
static json_t *j_plan(const struct kr_apply_plan *p)
{
	json_t *be = json_array(), *sv = json_array(), *svd = json_array(), *dev = json_array();
	json_t *rel = json_array(), *rd = json_array(), *hot = json_array();
	char s[KR_SOCKADDR_STRLEN + 16];

	for (uint32_t i = 0; i < p->nbackends; i++) {
		const struct kr_plan_backend *b = &p->backends[i];
		struct kr_sockaddr a = { .family = b->v.family, .port = ntohs(b->v.port) };

		memcpy(a.ip, b->v.addr, 16);
		kr_sockaddr_format(&a, s);
		json_array_append_new(be, json_pack("{s:i,s:s,s:s,s:s,s:s}", "id", b->id, "address",
				      s, "ring", p->units.u[b->unit].name, "state",
				      state_name(b->v.state), "change", b->added ? "add" :
				      b->in_place ? "forwarding" : "change"));
	}
	for (uint32_t i = 0; i < p->ndevices; i++) {
		const uint8_t *m = p->devices[i].v.mac;

		snprintf(s, sizeof(s), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3],
			 m[4], m[5]);
		json_array_append_new(dev, json_pack("{s:i,s:s}", "ifindex", p->devices[i].ifindex,
						     "mac", s));
	}
	for (uint32_t i = 0; i < p->nservices; i++) {
		service_str(&p->services[i].k, s, sizeof(s));
		json_array_append_new(sv, json_pack("{s:s,s:s,s:s,s:i}", "name",
				      p->services[i].name, "service", s, "change",
				      p->services[i].added ? "add" : "change", "ring_id",
				      p->services[i].v.ring_id));
	}
	for (uint32_t i = 0; i < p->nservices_del; i++) {
		service_str(&p->services_del[i], s, sizeof(s));
		json_array_append_new(svd, json_string(s));
	}
	for (uint32_t i = 0; i < p->nrings_del; i++)
		json_array_append_new(rd, json_pack("{s:s,s:i}", "ring", p->rings_del[i].name,
						    "id", p->rings_del[i].id));
	for (uint32_t i = 0; i < p->nbackends_release; i++)
		json_array_append_new(rel, json_integer(p->backends_release[i]));
	for (uint32_t i = 0; i < p->nhot; i++) {
		const struct kr_plan_hot *h = &p->hot[i];

		snprintf(s, sizeof(s), "0x%08x", h->e.k.key_hash);
		json_array_append_new(hot, json_pack("{s:o,s:s,s:s,s:i,s:o}", "ring", h->ring ?
				      json_string(h->ring) : json_null(),
				      "hash", s, "change", hot_act_names[h->act], "replicas",
				      h->e.v.replicas, "was_replicas", h->act == KR_PLAN_HOT_CHANGE ?
				      json_integer(h->was.replicas) : json_null()));
	}
	return json_pack("{s:b,s:o,s:o,s:o,s:o,s:i,s:i,s:o,s:o,s:o}", "hash_key",
			 p->write_hash_key, "backends", be, "devices", dev, "services", sv,
			 "services_removed", svd, "members_added", p->nmembers_add,
			 "members_removed", p->nmembers_del, "rings_removed", rd,
			 "backends_released", rel, "hot_keys", hot);
}

/* apply --json (and --dry-run --json): one object; on failure "ok": false, the reason on
 * standard error as without --json. */
static int print_apply_json(const struct kr_apply_plan *p, bool dry_run, int rc,
			    double max_move)
{
	json_t *j = json_pack("{s:b,s:b,s:b,s:f}", "ok", !rc, "dry_run", dry_run, "changed",
			      !rc && kr_apply_plan_changes(p), "max_move", max_move);

	if (!j)
		return kr_an_json_print(NULL, "apply");
	if (rc == -ERANGE)	/* a ring moves more than max_move: nothing was written */
		json_object_set_new(j, "refused", json_string("max_move"));
	json_object_set_new(j, "rings", j_rings(p));
	if (!rc)
		json_object_set_new(j, "counts", j_counts(&p->n));
	if (dry_run && !rc)
		json_object_set_new(j, "plan", j_plan(p));
	else if (!rc) {
		json_t *rd = json_array();

		for (uint32_t i = 0; i < p->nrings_del; i++)
			json_array_append_new(rd, json_pack("{s:s,s:i}", "ring", p->rings_del[i].name,
							    "id", p->rings_del[i].id));
		json_object_set_new(j, "rings_removed", rd);
	}
	return kr_an_json_print(j, "apply");
}

/* ---- apply, ring stage ---------------------------------------------------------------------- */

/* apply and ring stage read devices (a backend's "dev", the MAC of each egress device l2
 * forwarding writes) in the network namespace they run in: from another one than the
 * instance's they would write that namespace's indexes and MACs.  Refuse, say where to run
 * it.  (An instance not made by `keyrouter load`, --pin-dir, has no namespace on record.) */
static int in_instance_netns(const struct kr_inst *in, const char *cmd, const char *config)
{
	struct kr_ops_meta meta = {};
	char hint[320];
	__u32 key = 0;

	if (in->meta_fd < 0 || bpf_map_lookup_elem(in->meta_fd, &key, &meta) ||
	    !kr_ops_meta_recorded(&meta) || !meta.netns_ino ||
	    meta.netns_ino == kr_ops_netns_ino())
		return 0;
	kr_ops_netns_hint(meta.netns_ino, hint, sizeof(hint));
	pr_warn("keyrouter: instance '%s' is attached to '%s' in another network namespace "
		"(net:[%u]; this command runs in net:[%u]): %s reads the devices of the "
		"configuration (\"dev\", the MACs of l2 forwarding) where it runs, so it must run "
		"there: '%s keyrouter %s -c %s --instance %s'; nothing was changed\n", in->name,
		meta.ifname, meta.netns_ino, kr_ops_netns_ino(), cmd,
		hint[0] ? hint : "nsenter --net=<its namespace>", cmd, config, in->name);
	return -EXDEV;
}

int kr_cli_apply(const struct kr_inst *in, const char *config, const struct kr_config *cfg,
		 const struct kr_ops_apply_opts *o, bool json)
{
	struct kr_apply_plan p;
	struct kr_err err = {};
	int rc;

	if (in_instance_netns(in, "apply", config))
		return 1;
	rc = kr_ops_apply(in, cfg, o, &p, &err);
	if (p.live_warnings)
		pr_warn("%s", p.live_warnings);
	if (err.msg[0])
		pr_warn("keyrouter: %s\n", err.msg);
	if (json) {
		if (!o->dry_run)
			print_rings_done(&p);	/* what was done, on standard error */
		if (print_apply_json(&p, o->dry_run, rc, cfg->max_move) && !rc)
			rc = -EIO;
	} else if (o->dry_run && (!rc || rc == -ERANGE)) {
		print_plan(&p, cfg->max_move);	/* with what the refusal would be */
	} else {
		print_rings_done(&p);
		for (uint32_t i = 0; !rc && i < p.nrings_del; i++)
			pr_info("keyrouter: ring '%s' (id %u): no longer in the config, removed\n",
				p.rings_del[i].name, p.rings_del[i].id);
		if (!rc)
			print_summary(&p);
	}
	/* --strict's refusal and max_move's said that nothing was changed */
	if (rc && !(rc == -EBUSY && o->strict) && rc != -ERANGE)
		pr_warn("keyrouter: apply of '%s' stopped: %s; what was published before still "
			"routes, the next apply converges\n", config, strerror(-rc));
	kr_apply_plan_free(&p);
	return rc ? 1 : 0;
}

int kr_cli_stage(const struct kr_inst *in, const char *config, const struct kr_config *cfg,
		 const char *ring, bool json)
{
	struct kr_ops_apply_opts o = { .stage = ring };
	struct kr_apply_plan p;
	struct kr_err err = {};
	const struct kr_plan_ring *pr;
	char cmd[128];
	int rc;

	snprintf(cmd, sizeof(cmd), "ring stage %s", ring);
	if (in_instance_netns(in, cmd, config))
		return 1;
	rc = kr_ops_apply(in, cfg, &o, &p, &err);
	pr = p.nrings ? &p.rings[0] : NULL;
	if (err.msg[0])
		pr_warn("keyrouter: %s\n", err.msg);
	if (json && !rc && pr) {
		json_t *j = json_pack("{s:s,s:s,s:o,s:i,s:i,s:i,s:s}", "ring", pr->unit->name,
				      "done", act_names[pr->act], "digest",
				      j_hex32(pr->ring->digest), "points", pr->ring->npoints,
				      "slot", pr->act == KR_PLAN_STAGE_SAME ? pr->active :
				      pr->active ^ 1, "active_slot", pr->active, "state",
				      kr_sm_state_name(pr->act == KR_PLAN_STAGE ? KR_RING_STAGED :
							pr->state));

		if (j && pr->generation)
			json_object_set_new(j, "generation", json_integer((json_int_t)pr->generation));
		if (kr_an_json_print(j, cmd))
			rc = -EIO;
	} else if (!rc && pr && pr->act == KR_PLAN_STAGED_ALREADY)
		printf("ring %s: already staged: digest %08x in slot %u (state %s); nothing "
		       "changed\n", pr->unit->name, pr->ring->digest, pr->active ^ 1,
		       kr_sm_state_name(pr->state));
	else if (!rc && pr && pr->act == KR_PLAN_STAGE_SAME)
		printf("ring %s: nothing to stage: the config's version equals the active one "
		       "(digest %08x)\n", pr->unit->name, pr->ring->digest);
	else if (!rc && pr && pr->act == KR_PLAN_STAGE && pr->generation)
		printf("ring %s: staged digest %08x (%u points, generation %llu) in slot %u; "
		       "fraction 0%%, slot %u stays active\n", pr->unit->name, pr->ring->digest,
		       pr->ring->npoints, (unsigned long long)pr->generation, pr->slot,
		       pr->active);
	kr_apply_plan_free(&p);
	return rc ? 1 : 0;
}

const char *kr_cli_instance(const char *instance, const char *pin_dir,
			    const char *file_instance)
{
	if (instance || pin_dir)
		return instance;
	return file_instance && file_instance[0] ? file_instance : NULL;
}
