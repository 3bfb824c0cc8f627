// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter backend set ADDR up|down|drain: one map write per server, no rebuild. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include "addr.h"
#include "json_out.h"
#include "cmd.h"
#include "log.h"
#include "ops.h"
#include "ops_kernel.h"
#include "ops_backends.h"
#include "ops_health.h"
#include "lock_wait.h"
#include "opts.h"
#include "config.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: keyrouter backend set ADDR up|down|drain [--ring RING] [--wait SECONDS]\n"
		"                             [--json] [--instance NAME | --pin-dir DIR]\n"
		"       keyrouter backend set ADDR [up|down|drain] --spill FRACTION|auto ...\n\n"
		"Change a backend's health. ADDR is ip:port ([v6]:port) or a bare IP (every port).\n"
		"A down or draining backend is skipped by the failover walk: only its keys move, to\n"
		"the backend of the next ring point, and they come back when it is up again. A\n"
		"server has one backend id however many rings have it (docs/operations.md\n"
		"\"Backend identity\"): the change is one write of its kr_backends entry and takes\n"
		"effect in every ring that has it at once; no ring is rebuilt.\n\n"
		"The state is recorded as the operator's (status: \"set by operator since ...\"):\n"
		"the health checker (keyrouter health) never brings back a backend an operator\n"
		"set down or drain; 'up' hands it back to the checker.\n\n"
		"  -s, --spill F|auto   spill fraction 0..0.99: that share of the backend's keys\n"
		"                       (a fixed subset, the same on every router) walks on to the\n"
		"                       backends after it on the ring (docs/datapath.md \"Spill and\n"
		"                       hot-key replicas\"); fixed: the controller (keyrouter\n"
		"                       balance) leaves it alone. 'auto': 0, and the controller's\n"
		"                       again. QUIC services ignore spill. Without a state, the\n"
		"                       state stays as it is.\n"
		"  -r, --ring RING      only backends this ring has (still one state per server:\n"
		"                       the other rings that have it see the change too)\n"
		"  -j, --json           one JSON object: state, backends [{address, id, rings,\n"
		"                       state, changed, was}]\n"
		"  -i, --instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default \"default\")\n"
		"  -p, --pin-dir DIR    maps pinned in DIR instead\n"
		KR_WAIT_OPT_HELP);
}

struct target {
	struct kr_sockaddr addr;
	bool any_port;
};

static int parse_target(const char *s, struct target *t)
{
	char buf[128];

	memset(t, 0, sizeof(*t));
	if (!kr_sockaddr_parse(s, &t->addr, NULL))
		return 0;
	t->any_port = true;
	snprintf(buf, sizeof(buf), strchr(s, ':') ? "[%s]:0" : "%s:0", s);
	return kr_sockaddr_parse(buf, &t->addr, NULL) ? -1 : 0;
}

static bool matches(const struct target *t, const struct kr_backend *b)
{
	return b->family == t->addr.family &&
	       !memcmp(b->addr, t->addr.ip, t->addr.family == 4 ? 4 : 16) &&
	       (t->any_port || ntohs(b->port) == t->addr.port);
}

static int parse_state(const char *s, __u8 *state)
{
	if (!strcmp(s, "up"))
		*state = KR_BACKEND_UP;
	else if (!strcmp(s, "down"))
		*state = KR_BACKEND_DOWN;
	else if (!strcmp(s, "drain"))
		*state = KR_BACKEND_DRAIN;
	else
		return -1;
	return 0;
}

static const char *state_word(__u8 state)
{
	return state == KR_BACKEND_UP ? "up" : state == KR_BACKEND_DOWN ? "down" : "drain";
}

/* Set every backend id matching t (and in ring ring_id, unless it is -1): one write each. */
/* --spill: the entry's spill and its KR_BACKEND_F_SPILL_FIXED (spill < 0: auto), one
 * write (the rest of the entry as read). */
static int write_spill(const struct kr_ops_maps *m, __u32 id, struct kr_backend *be, int spill)
{
	be->spill = spill < 0 ? 0 : (__u16)spill;
	be->flags = spill < 0 ? be->flags & ~KR_BACKEND_F_SPILL_FIXED :
		    be->flags | KR_BACKEND_F_SPILL_FIXED;
	return bpf_map_update_elem(m->backends, &id, be, BPF_EXIST) ? -errno : 0;
}

static int set_ids(const struct kr_ops_maps *m, const struct kr_health_maps *hm, int ring_id,
		   const struct target *t, int state, int spill, int *matched, json_t *out)
{
	struct kr_backend *all = NULL;
	uint16_t *nrings = NULL;
	int err;

	err = kr_ops_backends_read(m, &all);
	if (!err)
		err = kr_ops_backends_rings(m, &nrings);
	for (__u32 id = 0; !err && id < m->backends_max; id++) {
		struct kr_backend *be = &all[id];
		char addr[KR_SOCKADDR_STRLEN];
		struct kr_sockaddr sa = {};
		__u8 was;

		if (!be->family || be->state > KR_BACKEND_DRAIN || !nrings[id] || !matches(t, be))
			continue;
		if (ring_id >= 0) {
			int has = kr_ops_ring_has_backend(m, ring_id, id);

			if (has < 0) {
				err = has;
				break;
			}
			if (!has)
				continue;
		}
		(*matched)++;
		sa.family = be->family;
		sa.port = ntohs(be->port);
		memcpy(sa.ip, be->addr, 16);
		kr_sockaddr_format(&sa, addr);
		if (spill != INT32_MIN) {	/* --spill (with a state or not) */
			if (state >= 0 && (be->state != state ||
					   kr_backend_owner(be) != KR_OWNER_OPERATOR))
				err = kr_health_write_state(m, hm, id, be, (__u8)state,
							    KR_OWNER_OPERATOR);
			if (!err && !bpf_map_lookup_elem(m->backends, &id, be))
				err = write_spill(m, id, be, spill);
			if (err) {
				pr_warn("keyrouter: couldn't write backend id %u: %s\n", id,
					strerror(-err));
				break;
			}
			if (out)
				json_array_append_new(out, json_pack("{s:s,s:i,s:i,s:s,s:f,s:b}",
						      "address", addr, "id", id, "rings",
						      nrings[id], "state", state_word(be->state),
						      "spill", be->spill / 65536.0, "spill_fixed",
						      spill >= 0));
			else
				printf("backend %s (id %u, %u ring%s): %s, spill %.4f%s\n", addr, id,
				       nrings[id], nrings[id] == 1 ? "" : "s", state_word(be->state),
				       be->spill / 65536.0, spill < 0 ? " (auto: the controller's)" :
				       " (fixed)");
			continue;
		}
		if (be->state == state && kr_backend_owner(be) == KR_OWNER_OPERATOR) {
			if (out)
				json_array_append_new(out, json_pack("{s:s,s:i,s:i,s:s,s:b}", "address",
						      addr, "id", id, "rings", nrings[id], "state",
						      state_word(state), "changed", 0));
			else
				printf("backend %s (id %u, %u ring%s): already %s\n", addr, id,
				       nrings[id], nrings[id] == 1 ? "" : "s", state_word(state));
			continue;
		}
		was = be->state;
		err = kr_health_write_state(m, hm, id, be, (__u8)state, KR_OWNER_OPERATOR);
		if (err) {
			pr_warn("keyrouter: couldn't write backend id %u: %s\n", id, strerror(-err));
			break;
		}
		if (out)
			json_array_append_new(out, json_pack("{s:s,s:i,s:i,s:s,s:b,s:s}", "address",
					      addr, "id", id, "rings", nrings[id], "state",
					      state_word((__u8)state), "changed", 1, "was",
					      state_word(was)));
		else
			printf("backend %s (id %u, %u ring%s): %s\n", addr, id, nrings[id],
			       nrings[id] == 1 ? "" : "s", state_word((__u8)state));
	}
	if (err && err != -EPERM)
		pr_warn("keyrouter: backend set: %s\n", strerror(-err));
	free(all);
	free(nrings);
	return err;
}

static void help(FILE *f, const void *ctx)
{
	(void)ctx;
	usage(f);
}

static int cmd_backend_set(int argc, char **argv)
{
	const char *ring = NULL, *instance = NULL, *pin_dir = NULL, *wait = NULL, *spill_s = NULL;
	bool json = false;
	json_t *out = NULL;
	const struct kr_opt opts[] = {
		KR_OPT_STR("ring", 'r', &ring),
		KR_OPT_STR("spill", 's', &spill_s),
		KR_OPT_FLAG("json", 'j', &json),
		KR_OPT_STR("wait", 0, &wait),
		KR_OPT_STR("instance", 'i', &instance),
		KR_OPT_STR("pin-dir", 'p', &pin_dir),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .usage = help };
	struct kr_ops_maps m;
	struct kr_health_maps hm = { -1, -1, -1, -1, -1, -1, 0 };
	struct target t;
	struct kr_inst in;
	int rc = 1, matched = 0, ring_id = -1, optind, st = -1, spill = INT32_MIN;
	__u8 state = 0;

	optind = kr_opts_parse(argc, argv, opts, &cmd);
	if (optind < 0)
		return kr_opts_status(optind);
	if (optind + 2 - !!spill_s > argc || optind + 2 < argc || (instance && pin_dir))
		return kr_usage_error("expected ADDR and up|down|drain (the state may go with "
				      "--spill; at most one of --instance, --pin-dir)");
	if (parse_target(argv[optind], &t))
		return kr_usage_error("bad address '%s': expected ip:port, [v6]:port or an IP",
				      argv[optind]);
	if (optind + 1 < argc && parse_state(argv[optind + 1], &state))
		return kr_usage_error("bad state '%s': expected up, down or drain",
				      argv[optind + 1]);
	if (optind + 1 < argc)
		st = state;
	if (spill_s) {
		char *end;
		double f = strtod(spill_s, &end);

		if (!strcmp(spill_s, "auto"))
			spill = -1;
		else if (end == spill_s || *end || !(f >= 0 && f <= KR_SPILL_MAX))
			return kr_usage_error("bad spill '%s': expected a fraction 0..%.2f (e.g. "
					      "0.25) or auto", spill_s, KR_SPILL_MAX);
		else
			spill = kr_spill_units(f);
	}
	if (kr_lock_wait_opt(wait, -1))
		return 2;
	if (kr_ops_inst_open(&in, instance, pin_dir))
		return 1;
	if (kr_ops_maps_open(&in, &m))
		goto out_inst;
	if (kr_health_maps_open(&in, &m, true, &hm))
		pr_warn("keyrouter: backend set: the state is set, but not when or by whom\n");
	if (ring) {
		ring_id = kr_ops_ring_find(&in, ring);
		if (ring_id < 0) {
			pr_warn("keyrouter: backend set: no ring '%s' in instance '%s'\n", ring,
				in.name);
			goto out;
		}
	}
	if (json)
		out = json_array();
	if (set_ids(&m, &hm, ring_id, &t, st, spill, &matched, out))
		goto out;
	if (!matched) {
		pr_warn("keyrouter: backend set: no backend '%s'%s%s in instance '%s'\n",
			argv[optind], ring ? " in ring " : "", ring ? ring : "", in.name);
		goto out;
	}
	if (json) {
		rc = kr_an_json_print(json_pack("{s:s,s:o}", "state", st < 0 ? "unchanged" :
						state_word(state), "backends", out), "backend set");
		out = NULL;
		goto out;
	}
	if (st >= 0 && state != KR_BACKEND_UP)
		printf("(%s: the failover walk skips it; its keys go to the backend of the next "
		       "ring point until it is up again)\n", state == KR_BACKEND_DOWN ? "down" :
		       "drain");
	rc = 0;
out:
	json_decref(out);
	kr_health_maps_close(&hm);
	kr_ops_maps_close(&m);
out_inst:
	kr_ops_inst_close(&in);
	return rc;
}
KR_COMMAND(backend_set, "backend set", "mark a backend up, down or drain, or set its spill",
	   cmd_backend_set);
