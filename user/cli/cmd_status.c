// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter status / stats: text, --json, --watch (--prometheus: cmd_exporter.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "announce_out.h"
#include "addr.h"
#include "cli_prom.h"
#include "keyform.h"
#include "cmd.h"
#include "log.h"
#include "ops.h"
#include "ops_find.h"
#include "ops_flows.h"
#include "ops_kernel.h"
#include "ops_backends.h"
#include "ops_report.h"
#include "opts.h"
#include "ring_sm.h"
#include "ops_stats.h"
#include "quic_lb.h"
#include "health_out.h"
#include "svc_out.h"
#include "ops_svcstats.h"
#include "json_out.h"
#include "follow.h"
#include <jansson.h>

enum fmt { FMT_TEXT, FMT_JSON };

/* status's exit status when the instance is loaded but its program is not attached */
#define KR_STATUS_NOT_ATTACHED	3

struct view {
	struct kr_inst *in;
	struct kr_ops_maps *m;
	enum fmt fmt;
	bool full;		/* status (everything) or stats (counters) */
	bool not_up;		/* a backend shown is down or draining */
	struct kr_health_maps hm;	/* the health checker's maps (fds -1: none) */
	enum kr_ops_attach_state attach;	/* of a recorded instance (show_instance) */
	struct kr_ops_meta meta;
	json_t *j;		/* --json: the object the show_* fill (NULL: text) */
};

static const char *state_name(__u8 s)
{
	switch (s) {
	case KR_BACKEND_UP: return "up";
	case KR_BACKEND_DOWN: return "down";
	case KR_BACKEND_DRAIN: return "drain";
	default: return "unused";
	}
}

/* The attachment state in one word (JSON). */
static const char *attach_word(enum kr_ops_attach_state s)
{
	return s == KR_ATTACHED ? "yes" : s == KR_NOT_ATTACHED ? "no" :
	       s == KR_IFACE_GONE ? "interface-gone" : "other-netns";
}

static void show_instance(struct view *v)
{
	struct kr_ops_meta meta = {};
	__u32 key = 0;
	char t[32];

	bpf_map_lookup_elem(v->in->meta_fd, &key, &meta);
	kr_ops_fmt_time(meta.magic == KR_OPS_META_MAGIC ? meta.loaded_ns : 0, t, sizeof(t));
	enum kr_ops_attach_state st = KR_OTHER_NETNS;
	char now[IF_NAMESIZE] = "", renamed[IF_NAMESIZE + 40] = "";

	if (meta.magic == KR_OPS_META_MAGIC) {
		st = kr_ops_attach_state(&meta, now);
		if (now[0])
			snprintf(renamed, sizeof(renamed), "; the interface is now named '%s'", now);
	}
	v->attach = st;
	v->meta = meta;
	if (v->j) {
		char ifname[sizeof(meta.ifname) + 1] = "";
		/* strings through jansson: an interface may be named q"\z, a pin dir anything */
		json_t *o = json_pack("{s:o,s:o,s:b}", "name", kr_json_str(v->in->name), "pin_dir",
				      kr_json_str(v->in->dir), "loaded", meta.magic == KR_OPS_META_MAGIC);

		memcpy(ifname, meta.ifname, sizeof(meta.ifname));
		if (meta.magic == KR_OPS_META_MAGIC) {
			json_object_update_new(o, json_pack("{s:o,s:I,s:s,s:I}", "interface",
				kr_json_str(ifname), "ifindex", (json_int_t)meta.ifindex, "mode",
				kr_ops_mode_name(meta.mode), "prog_id", (json_int_t)meta.prog_id));
			kr_json_set_time(o, "loaded", meta.loaded_ns);
			json_object_set_new(o, "attached", json_string(attach_word(st)));
		}
		if (now[0])
			json_object_set_new(o, "interface_now", kr_json_str(now));
		json_object_set_new(v->j, "instance", o);
	} else {
		if (meta.magic == KR_OPS_META_MAGIC)
			printf("instance %s: %s (%s%s), %s mode, program id %u, loaded %s, pins %s\n",
			       v->in->name, meta.ifname, kr_ops_attach_state_name(st), renamed,
			       kr_ops_mode_name(meta.mode), meta.prog_id, t, v->in->dir);
		else
			printf("instance %s: maps in %s (attached outside keyrouter load)\n",
			       v->in->name, v->in->dir);
	}
}

static void show_counters(struct view *v)
{
	struct kr_counters c;
	size_t n = kr_ops_percpu_sum(v->m, v->m->counters, 0, &c, sizeof(c)) ? 0 :
		   kr_ops_counters_nfields;

	if (v->j) {
		json_t *o = json_object();

		for (size_t i = 0; i < n; i++)
			json_object_set_new(o, kr_ops_counters_fields[i].name,
					    kr_json_u64(kr_ops_field_get(&c, &kr_ops_counters_fields[i])));
		json_object_set_new(v->j, "counters", o);
	} else {
		printf("counters:");
		for (size_t i = 0; i < n; i++)
			printf("%s %s %llu", i % 6 ? "," : "\n ", kr_ops_counters_fields[i].name,
			       (unsigned long long)kr_ops_field_get(&c, &kr_ops_counters_fields[i]));
		printf("\n");
	}
}

static void show_rings(struct view *v)
{
	json_t *arr = v->j ? json_array() : NULL;

	for (__u32 id = 0; id < KR_MAX_RINGS; id++) {
		struct kr_ops_ring_report r;
		struct kr_ops_ring meta;

		if (kr_ops_ring_get(v->in, id, &meta) || !meta.name[0] ||
		    kr_ops_ring_report(v->in, v->m, id, KR_REPORT_NO_DIFF, &r))
			continue;
		if (arr)
			json_array_append_new(arr, kr_ops_ring_report_json(&r));
		else
			kr_ops_ring_report_text(stdout, &r);
		kr_ops_ring_report_free(&r);
	}
	if (arr)
		json_object_set_new(v->j, "rings", arr);
}

static void ring_name(struct view *v, __u32 id, char *buf, size_t len)
{
	struct kr_ops_ring r;

	if (kr_ops_ring_get(v->in, id, &r) || !r.name[0])
		snprintf(buf, len, "#%u", id);
	else
		snprintf(buf, len, "%s", r.name);
}

static const char *policy_name(__u8 p)
{
	return p == KR_POLICY_DROP ? "drop" : "pass";
}

/* Members of subset sid (kr_subset_members), or -1 when the map is not there. */
static int subset_members(const struct view *v, __u32 sid)
{
	struct kr_subset_key k, *pk = NULL;
	int n = 0;

	if (v->m->members < 0)
		return -1;
	while (!bpf_map_get_next_key(v->m->members, pk, &k)) {
		pk = &k;
		n += k.subset_id == sid;
	}
	return n;
}

/* One service: what it matches, how it finds the key, the ring (and subset), how it
 * forwards, and its policies. */
static void show_service(struct view *v, const struct kr_service_key *k,
			 const struct kr_service *s, json_t *arr, int names_fd)
{
	struct kr_sockaddr sa = { .family = k->family, .port = ntohs(k->port) };
	char addr[KR_SOCKADDR_STRLEN], rn[KR_NAME_MAX], sub[64] = "", name[KR_SVC_NAME_MAX + 2];
	const char *kt = s->key_type >= KR_KEY_TUPLE && s->key_type <= KR_KEY_QUIC ?
			 kr_key_type_name((enum kr_key_type)s->key_type) : "unknown";
	const char *fwd = s->fwd_mode == KR_FWD_L2 ? "l2" : s->fwd_mode == KR_FWD_IPIP ?
			  "ipip" : "unknown";
	int members = s->subset_id ? subset_members(v, s->subset_id) : 0;

	memcpy(sa.ip, k->addr, 16);
	if (sa.family)
		kr_sockaddr_format(&sa, addr);
	else
		snprintf(addr, sizeof(addr), "*:%u", sa.port);
	ring_name(v, s->ring_id, rn, sizeof(rn));
	kr_ops_svc_name(names_fd, s->stats_id, name, sizeof(name));	/* apply's name */
	if (arr) {
		json_array_append_new(arr, json_pack(
			"{s:s,s:I,s:s,s:s,s:s,s:I,s:s,s:I,s:i,s:s,s:{s:s,s:s,s:s}}", "name", name,
			"stats_id", (json_int_t)s->stats_id, "vip", addr, "proto",
			kr_proto_name(k->proto), "ring", rn, "ring_id", (json_int_t)s->ring_id,
			"key_type", kt, "subset_id", (json_int_t)s->subset_id, "subset_members",
			members, "forward", fwd, "policy", "no_key", policy_name(s->policy_no_key),
			"key_too_long", policy_name(s->policy_too_long), "all_down",
			policy_name(s->policy_no_route)));
		return;
	}
	if (s->subset_id)
		snprintf(sub, sizeof(sub), " subset %08x (%d members)", s->subset_id, members);
	if (s->stats_id)
		strcat(name, " ");
	else
		name[0] = 0;
	printf("service %s%s/%s: key %s, ring %s%s, forward %s, policy no_key %s, key_too_long %s, "
	       "all_down %s\n", name, addr, kr_proto_name(k->proto), kt, rn, sub, fwd,
	       policy_name(s->policy_no_key), policy_name(s->policy_too_long),
	       policy_name(s->policy_no_route));
}

/* Services in one order whatever the hash map's (its hash is seeded per map): by family,
 * VIP, port, then UDP before TCP. */
static int svc_key_cmp(const void *a, const void *b)
{
	const struct kr_service_key *x = a, *y = b;
	int c = (int)x->family - (int)y->family;

	if (!c)
		c = memcmp(x->addr, y->addr, sizeof(x->addr));
	if (!c)
		c = (int)ntohs(x->port) - (int)ntohs(y->port);
	return c ? c : (int)y->proto - (int)x->proto;
}

static void show_services(struct view *v)
{
	struct kr_service_key k, *pk = NULL, *keys = NULL;
	struct kr_service s;
	int names_fd = kr_ops_map_open(v->in, KR_MAP_SVC_NAMES, true);
	json_t *arr = v->j ? json_array() : NULL;
	size_t n = 0, cap = 0;

	while (!bpf_map_get_next_key(v->m->services, pk, &k)) {
		if (n == cap) {
			struct kr_service_key *nk = realloc(keys, (cap = cap ? 2 * cap : 64) *
							    sizeof(*keys));

			if (!nk)
				break;
			keys = nk;
		}
		keys[n++] = k;
		pk = &keys[n - 1];
	}
	if (n)
		qsort(keys, n, sizeof(*keys), svc_key_cmp);
	for (size_t i = 0; i < n; i++)
		if (!bpf_map_lookup_elem(v->m->services, &keys[i], &s))
			show_service(v, &keys[i], &s, arr, names_fd);
	free(keys);
	if (arr)
		json_object_set_new(v->j, "services", arr);
	if (names_fd >= 0)
		close(names_fd);
}

/* One line per server: a backend id is one server however many rings have it, with one
 * state and one pair of counters (docs/operations.md "Backend identity").  rn: the rings
 * that reference it, comma-separated; nr: how many. */
static void show_backend(struct view *v, __u32 id, const struct kr_backend *be, const char *rn,
			 unsigned nr, json_t *arr)
{
	struct kr_backend_stats st;
	struct kr_sockaddr sa = {};
	char addr[KR_SOCKADDR_STRLEN];
	__u64 pk, by;

	sa.family = be->family;
	sa.port = ntohs(be->port);
	memcpy(sa.ip, be->addr, 16);
	kr_sockaddr_format(&sa, addr);
	kr_ops_percpu_sum(v->m, v->m->backend_stats, id, &st, sizeof(st));	/* 0s: absent */
	v->not_up |= be->state == KR_BACKEND_DOWN || be->state == KR_BACKEND_DRAIN;
	pk = st.packets;
	by = st.bytes;
	if (arr) {
		json_t *rings = json_array(), *o;

		for (const char *p = rn; *p; ) {
			size_t l = strcspn(p, ",");

			json_array_append_new(rings, json_stringn(p, l));
			p += l + (p[l] == ',');
		}
		o = json_pack("{s:I,s:s,s:s,s:o,s:o,s:o}", "id", (json_int_t)id, "address", addr,
			      "state", state_name(be->state), "packets", kr_json_u64(pk), "bytes",
			      kr_json_u64(by), "rings", rings);
		json_object_set_new(o, "spill", json_real(be->spill / 65536.0));
		json_object_set_new(o, "spill_fixed",
				    json_boolean(be->flags & KR_BACKEND_F_SPILL_FIXED));
		kr_health_show_backend(&v->hm, id, be, o);
		json_array_append_new(arr, o);
	} else {
		/* the first rings by name; --json lists them all */
		const char *cut = rn;

		for (int k = 0; k < 6 && cut && *cut; k++) {
			cut = strchr(cut, ',');
			cut = cut ? cut + 1 : NULL;
		}
		printf("backend %-24s id %-6u %-6s packets %llu bytes %llu rings %u (%.*s%s)\n",
		       addr, id, state_name(be->state), (unsigned long long)pk,
		       (unsigned long long)by, nr, cut ? (int)(cut - rn - 1) : (int)strlen(rn), rn,
		       cut ? ",..." : "");
		if (be->spill) {
			printf("        spill %.4f (%s): that share of its keys walks on to the "
			       "next backends (not QUIC keys)\n", be->spill / 65536.0,
			       be->flags & KR_BACKEND_F_SPILL_FIXED ? "fixed" : "the controller's");
		}
		if (v->full)
			kr_health_show_backend(&v->hm, id, be, NULL);
	}
}

/* Backends of every ring's active slot (the standby's too while migrating), each once. */
static void show_backends(struct view *v)
{
	__u32 max = v->m->backends_max;
	struct kr_backend *all = NULL;
	char **rn = calloc(max ? max : 1, sizeof(*rn));
	unsigned *nr = calloc(max ? max : 1, sizeof(*nr));
	json_t *arr = v->j ? json_array() : NULL;

	if (!rn || !nr || kr_ops_backends_read(v->m, &all))
		goto out;
	for (__u32 id = 0; id < KR_MAX_RINGS; id++) {
		struct kr_ops_ring meta;
		struct kr_ops_slot s[2] = {};
		__u64 ctl = 0;

		if (kr_ops_ring_get(v->in, id, &meta) || !meta.name[0])
			continue;
		kr_ops_ctl_read(v->m, id, &ctl);
		for (__u32 k = 0; k < 2; k++) {
			bool want = k == kr_ctl_active(ctl) || kr_ctl_state(ctl) != KR_RING_IDLE;

			if (!want || kr_ops_slot_read(v->m, id, k, true, &s[k]) || !s[k].present)
				continue;
			for (__u32 b = 0; b < s[k].hdr.nbackends; b++) {
				__u32 g = s[k].bt[b];
				bool dup = false;
				char *p;

				for (__u32 j = 0; k == 1 && s[0].present && j < s[0].hdr.nbackends; j++)
					dup = dup || s[0].bt[j] == g;
				if (dup || g >= max)
					continue;
				p = malloc((rn[g] ? strlen(rn[g]) + 1 : 0) + strlen(meta.name) + 1);
				if (!p)
					continue;
				sprintf(p, "%s%s%s", rn[g] ? rn[g] : "", rn[g] ? "," : "", meta.name);
				free(rn[g]);
				rn[g] = p;
				nr[g]++;
			}
		}
		kr_ops_slot_free(&s[0]);
		kr_ops_slot_free(&s[1]);
	}
	for (__u32 id = 0; id < max; id++)
		if (nr[id] && all[id].family)
			show_backend(v, id, &all[id], rn[id], nr[id], arr);
out:
	for (__u32 id = 0; rn && id < max; id++)
		free(rn[id]);
	free(rn);
	free(nr);
	free(all);
	if (arr)
		json_object_set_new(v->j, "backends", arr);
	if (!v->j && v->not_up)
		printf("(down, drain: the failover walk skips the backend -- its keys go to the "
		       "backend of the next ring point,\n and come back when it is up again; "
		       "drain is the operator taking it out, down a failure; see 'keyrouter "
		       "backend set --help')\n");
	v->not_up = false;
}

/* QUIC-LB outcomes per QUIC-LB id (kr_qlb_stats), named by a VIP of its services
 * (--prometheus: prom.c). */
static void show_quic_lb(struct view *v)
{
	int fd = kr_ops_map_open(v->in, KR_MAP_QLB_STATS, true);
	struct kr_service_key key, next;
	bool seen[KR_QLB_MAX_SERVICES] = { false };
	void *pk = NULL;
	json_t *arr;

	if (fd < 0)
		return;
	arr = v->j ? json_array() : NULL;
	while (!bpf_map_get_next_key(v->m->services, pk, &next)) {
		struct kr_service sv;
		struct kr_qlb_counters c;
		struct kr_sockaddr sa = { .family = next.family };
		char addr[KR_SOCKADDR_STRLEN];
		__u32 id;

		key = next;
		pk = &key;
		if (bpf_map_lookup_elem(v->m->services, &key, &sv) || !(sv.flags & KR_SVC_F_QUIC_LB) ||
		    sv.qlb_id >= KR_QLB_MAX_SERVICES || seen[sv.qlb_id])
			continue;
		seen[sv.qlb_id] = true;
		id = sv.qlb_id;
		if (kr_ops_percpu_sum(v->m, fd, id, &c, sizeof(c)))
			continue;
		sa.port = ntohs(key.port);
		memcpy(sa.ip, key.addr, 16);
		if (sa.family)
			kr_sockaddr_format(&sa, addr);
		else
			snprintf(addr, sizeof(addr), "*:%u", sa.port);
		if (arr) {
			json_t *o = json_pack("{s:I,s:s}", "id", (json_int_t)id, "vip", addr);
			json_t *rot = json_array();

			for (unsigned k = 0; k < KR_QLB_NOUTCOMES; k++)
				json_object_set_new(o, kr_qlb_outcome_name(k), kr_json_u64(c.n[k]));
			for (unsigned r = 0; r < KR_QLB_MAX_CONFIGS; r++)
				json_array_append_new(rot, kr_json_u64(c.routed_cr[r]));
			json_object_set_new(o, "routed_by_rotation", rot);
			json_array_append_new(arr, o);
			continue;
		}
		printf("quic-lb %s (id %u):", addr, id);
		for (unsigned o = 0; o < KR_QLB_NOUTCOMES; o++)
			printf("%s %s %llu", o ? "," : "", o ? kr_qlb_outcome_name(o) : "routed by CID",
			       (unsigned long long)c.n[o]);
		printf("\n  routed by config rotation:");
		for (unsigned r = 0; r < KR_QLB_MAX_CONFIGS; r++)
			printf("%s %u: %llu", r ? "," : "", r, (unsigned long long)c.routed_cr[r]);
		printf("\n");
	}
	if (arr)
		json_object_set_new(v->j, "quic_lb", arr);
	close(fd);
}

/* The TCP flow tables (docs/datapath.md "TCP"): occupancy, inserts, hits, evictions (an
 * estimate: inserts - deletes - occupancy).  Nothing from a data path without them. */
static void show_flows(struct view *v)
{
	struct kr_ops_flows f;
	json_t *o;

	if (kr_ops_flows_read(v->in, &f))
		return;
	if (!v->j) {
		printf("tcp flows: established %u of %u (inserts %llu, hits %llu, deletes %llu, "
		       "evicted ~%llu), embryonic %u of %u (inserts %llu, hits %llu, evicted ~%llu), "
		       "by the ring %llu, moved off a down backend %llu\n", f.flows, f.flows_max,
		       (unsigned long long)f.st.promoted, (unsigned long long)f.st.hits,
		       (unsigned long long)f.st.deletes, (unsigned long long)f.evicted, f.syn,
		       f.syn_max, (unsigned long long)f.st.syn_inserts,
		       (unsigned long long)f.st.syn_hits, (unsigned long long)f.syn_evicted,
		       (unsigned long long)f.st.ring, (unsigned long long)f.st.down);
		return;
	}
	o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		      "established", (json_int_t)f.flows, "established_max",
		      (json_int_t)f.flows_max, "inserts", (json_int_t)f.st.promoted, "hits",
		      (json_int_t)f.st.hits, "deletes", (json_int_t)f.st.deletes, "evicted",
		      (json_int_t)f.evicted, "embryonic", (json_int_t)f.syn, "embryonic_max",
		      (json_int_t)f.syn_max, "embryonic_inserts", (json_int_t)f.st.syn_inserts,
		      "embryonic_hits", (json_int_t)f.st.syn_hits, "embryonic_deletes",
		      (json_int_t)f.st.syn_deletes, "embryonic_evicted",
		      (json_int_t)f.syn_evicted, "ring", (json_int_t)f.st.ring, "moved",
		      (json_int_t)f.st.down);
	if (o)
		json_object_set_new(v->j, "tcp_flows", o);
}

/* One round: text, or (--json) one object on one line. */
static int show(struct view *v)
{
	v->j = v->fmt == FMT_JSON ? json_object() : NULL;
	if (v->fmt == FMT_JSON && !v->j)
		return kr_json_print_line(NULL, v->full ? "status" : "stats");
	show_instance(v);
	show_counters(v);
	show_rings(v);
	if (v->full) {
		kr_health_show_checker(v->in, &v->hm, v->j);
		kr_announce_show(v->in, v->j);
	}
	show_quic_lb(v);
	show_flows(v);
	if (v->full)
		show_services(v);
	if (v->j)	/* per-service counters (svc_out.c) */
		kr_svc_out_json(v->j, v->in, v->m);
	else
		kr_svc_out_text(stdout, v->in, v->m);
	show_backends(v);
	if (v->j) {
		json_t *j = v->j;

		v->j = NULL;
		return kr_json_print_line(j, v->full ? "status" : "stats");
	}
	fflush(stdout);
	return 0;
}

/* A recorded instance whose program is not attached: say so, and what to run (status then
 * exits KR_STATUS_NOT_ATTACHED). */
static int not_attached(const struct view *v)
{
	const struct kr_ops_meta *m = &v->meta;

	if (m->magic != KR_OPS_META_MAGIC ||
	    (v->attach != KR_NOT_ATTACHED && v->attach != KR_IFACE_GONE))
		return 0;
	if (v->attach == KR_NOT_ATTACHED)
		pr_warn("keyrouter: instance '%s' is not attached: its program (id %u) is not on "
			"'%s' any more, so traffic reaches the stack without keyrouter. 'keyrouter "
			"apply -c CONFIG --instance %s' attaches it again (systemctl reload "
			"keyrouter@%s)\n", v->in->name, m->prog_id, m->ifname, v->in->name,
			v->in->name);
	else
		pr_warn("keyrouter: instance '%s' is not attached: its interface '%s' (index %u) "
			"is gone. Once an interface of that name is back, 'keyrouter apply -c "
			"CONFIG --instance %s' attaches the program to it; 'keyrouter unload %s "
			"--instance %s' removes the instance\n", v->in->name, m->ifname, m->ifindex,
			v->in->name, m->ifname, v->in->name);
	return KR_STATUS_NOT_ATTACHED;
}

/* The record of a load that did not finish (or is under way): no maps to show yet. */
static int load_unfinished(const struct kr_inst *in)
{
	struct kr_ops_meta m = {};
	__u32 key = 0;
	char t[32];

	if (in->meta_fd < 0 || bpf_map_lookup_elem(in->meta_fd, &key, &m) ||
	    m.magic != KR_OPS_META_LOADING)
		return 0;
	kr_ops_fmt_time(m.loaded_ns, t, sizeof(t));
	if (kr_ops_inst_busy(in))
		pr_warn("keyrouter: instance '%s': a load on '%s' is under way (started %s)\n",
			in->name, m.ifname, t);
	else
		pr_warn("keyrouter: instance '%s': the load on '%s' started %s did not finish "
			"(interrupted): 'keyrouter load %s -c CONFIG --instance %s' undoes it and "
			"loads again, 'keyrouter unload %s --instance %s' undoes it\n", in->name,
			m.ifname, t, m.ifname, in->name, m.ifname, in->name);
	return 1;
}

static void usage(FILE *f, bool full)
{
	fprintf(f,
		"Usage: keyrouter %s [--json | --prometheus [--output FILE]] [--watch [SECONDS]]\n"
		"                 [--instance NAME | --pin-dir DIR]\n\n%s\n\n"
		"  -j, --json           one JSON object\n"
		"  -P, --prometheus     Prometheus text exposition format (version 0.0.4), the\n"
		"                       same as `keyrouter exporter` serves: every instance\n"
		"                       unless --instance/--pin-dir; nothing loaded is\n"
		"                       `keyrouter_up 0` (exit 0), not an error\n"
		"  -o, --output FILE    with --prometheus: write FILE atomically (temporary file\n"
		"                       + rename) instead of standard output, e.g. for\n"
		"                       node_exporter's textfile collector (*.prom)\n"
		"  -w, --watch [SECONDS] print again every SECONDS (default 1) until interrupted\n"
		"                       (`--watch 5` or `--watch=5`; text on a terminal redraws\n"
		"                       the screen, into a file or pipe each round is appended).\n"
		"                       It follows the instance: after an `unload` it holds\n"
		"                       nothing and waits (a message says so), after a new\n"
		"                       `load` it shows the new maps, after an `upgrade` the new\n"
		"                       program (docs/operations.md \"Long-running processes\")\n"
		"  -i, --instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default \"default\")\n"
		"  -p, --pin-dir DIR    maps pinned in DIR instead\n\n"
		"Exit status: 0 the instance's program is attached where it was loaded (or the\n"
		"instance has no record of an attachment: --pin-dir); 3 loaded, but its program\n"
		"is not attached any more or its interface is gone (a message says what to run:\n"
		"apply attaches it again); 1 not loaded, a load that did not finish, or the maps\n"
		"cannot be read.  For monitoring: keyrouter check.\n", full ? "status" : "stats",
		full ? "Everything the instance runs: attachment, global counters, rings and both\n"
		       "slots, the health checker, `keyrouter announce` (each VIP announced,\n"
		       "draining or withdrawn over BGP, why, since when; BIRD's BGP sessions),\n"
		       "QUIC-LB outcomes, services (by their config names) and their\n"
		       "counters (routed, passed, dropped and why; per second from the second\n"
		       "--watch round), backends with state and packet/byte counters."
		     : "The counters: global (by outcome and reason, as the program names them),\n"
		       "packets per ring slot, QUIC-LB outcomes per service (routed by CID, or the\n"
		       "ring fallback's reason), per service by name (rates per second from the\n"
		       "second --watch round), packets and bytes per backend.");
}

enum { OPT_WATCH = 1 };

struct status_args {
	bool json, prom, full;
	double watch;
	const char *instance, *pin_dir, *output;
};

static void status_usage(FILE *f, const void *ctx)
{
	usage(f, ((const struct status_args *)ctx)->full);
}

static int status_cb(void *ctx, int id, const char *arg, struct kr_err *err)
{
	struct status_args *a = ctx;

	if (id != OPT_WATCH)
		return 0;
	a->watch = arg ? atof(arg) : 1.0;
	if (a->watch <= 0 || a->watch > 86400)
		return kr_errf(err, "bad --watch '%s': expected seconds > 0 (at most 86400)", arg);
	return 0;
}

/* Open the instance's pins and maps for the view: 0, or 1 (the message printed). */
static int view_open(struct view *v, struct kr_inst *in, struct kr_ops_maps *m,
		     const struct status_args *a)
{
	/* Readers need no lock: let applies run while we watch. */
	if (kr_ops_inst_open_reader(in, a->instance, a->pin_dir))
		return 1;
	if (load_unfinished(in) || kr_ops_maps_open(in, m)) {
		kr_ops_inst_close(in);
		return 1;
	}
	close(in->dir_fd);	/* (the lock, if it had to create the tool's maps) */
	in->dir_fd = -1;
	v->in = in;
	v->m = m;
	kr_health_maps_open(in, m, false, &v->hm);
	return 0;
}

static void view_close(struct view *v)
{
	if (!v->in)
		return;
	kr_health_maps_close(&v->hm);
	kr_ops_maps_close(v->m);
	kr_ops_inst_close(v->in);
	v->in = NULL;
}

/* Between two --watch rounds: follow the instance (follow.h).  Unloaded: close everything
 * and wait for it; loaded again: open the new pins; upgraded: nothing held to change (each
 * round reads the record and the attachment again). */
static void watch_follow(struct view *v, struct kr_follow *f, struct kr_inst *in,
			 struct kr_ops_maps *m, const struct status_args *a)
{
	enum kr_follow_change c = kr_follow_round(f);

	if (c == KR_FOLLOW_SAME)
		return;
	if (c == KR_FOLLOW_UPGRADED) {
		pr_info("keyrouter: status: '%s' upgraded (program id %u)\n", f->dir,
			f->id.prog_id);
		return;
	}
	if (c == KR_FOLLOW_GONE && v->in)
		pr_warn("keyrouter: status: '%s' is not loaded any more (unloaded): waiting for "
			"it to be loaded again\n", f->dir);
	else if (c == KR_FOLLOW_RELOADED)
		pr_warn("keyrouter: status: '%s' was loaded again (new maps, program id %u): "
			"showing the new instance\n", f->dir, f->id.prog_id);
	view_close(v);
	if (c == KR_FOLLOW_RELOADED && view_open(v, in, m, a))
		f->err = -ENOENT;	/* not open: try again next round */
}

static int run(int argc, char **argv, bool full)
{
	struct status_args a = { .full = full };
	const struct kr_opt opts[] = {
		KR_OPT_FLAG("json", 'j', &a.json),
		KR_OPT_FLAG("prometheus", 'P', &a.prom),
		KR_OPT_STR("output", 'o', &a.output),
		KR_OPT_CB("watch", 'w', KR_ARG_OPTIONAL_NUM, OPT_WATCH),
		KR_OPT_STR("instance", 'i', &a.instance),
		KR_OPT_STR("pin-dir", 'p', &a.pin_dir),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .usage = status_usage, .cb = status_cb, .ctx = &a };
	struct view v = { .full = full };
	struct kr_follow follow;
	struct kr_ops_maps m;
	struct kr_inst in;
	bool clear;
	int rc;
	int first = kr_opts_parse(argc, argv, opts, &cmd);

	if (first < 0)
		return kr_opts_status(first);
	if (first != argc)
		return kr_usage_error("unexpected argument '%s'", argv[first]);
	if (a.instance && a.pin_dir)
		return kr_usage_error("give --instance NAME or --pin-dir DIR, not both");
	if (a.json && a.prom)
		return kr_usage_error("give --json or --prometheus, not both");
	if (a.output && !a.prom)
		return kr_usage_error("--output goes with --prometheus");
	if (a.prom)
		return kr_cli_prom_status(a.instance, a.pin_dir, a.output, a.watch);
	v.fmt = a.json ? FMT_JSON : FMT_TEXT;
	if (view_open(&v, &in, &m, &a))
		return 1;
	kr_follow_init(&follow, in.dir);
	/* text --watch redraws the screen of a terminal; into a file or a pipe each round
	 * is appended, separated by a blank line */
	clear = a.watch > 0 && v.fmt == FMT_TEXT && isatty(STDOUT_FILENO);
	for (int round = 0;; round++) {
		if (v.in) {	/* (not while the instance is unloaded) */
			if (clear)
				printf("\033[H\033[2J");
			else if (round && v.fmt == FMT_TEXT)
				printf("\n");
			show(&v);
		}
		if (a.watch <= 0)
			break;
		usleep((useconds_t)(a.watch * 1e6));
		watch_follow(&v, &follow, &in, &m, &a);
	}
	rc = not_attached(&v);
	view_close(&v);
	return rc;
}

static int cmd_status(int argc, char **argv) { return run(argc, argv, true); }
static int cmd_stats(int argc, char **argv) { return run(argc, argv, false); }
KR_COMMAND(status, "status", "attachment, rings, slots, services, backends, counters",
	   cmd_status);
KR_COMMAND(stats, "stats", "counters: global by reason, per ring slot, per backend", cmd_stats);
