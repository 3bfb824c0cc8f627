// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter hotkey add|del|list: hot-key replicas in the running instance (ops_hot.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include "apply_out.h"
#include "cmd.h"
#include "config.h"
#include "json_out.h"
#include "lock_wait.h"
#include "log.h"
#include "ops.h"
#include "ops_hot.h"
#include "ops_kernel.h"
#include "opts.h"

#define HOT_USAGE \
	"Usage: keyrouter hotkey add RING KEY --replicas K [-c CONFIG | --hash] [options]\n" \
	"       keyrouter hotkey del RING KEY [-c CONFIG | --hash] [options]\n" \
	"       keyrouter hotkey list [RING] [--json] [options]\n\n" \
	"Hot-key replicas: packets of the key KEY of ring RING go to one of the first K\n" \
	"distinct up backends from the key's point on the ring, chosen by the packet's source\n" \
	"address and port (one client stays on one replica); every other key is untouched.\n" \
	"Spill does not apply to a hot key. Another key with the same 32-bit hash is\n" \
	"replicated too. QUIC rings take no hot keys (a connection ID must not move).\n" \
	"A change is priced before it is made by 'keyrouter diff'; the configuration's\n" \
	"per-ring \"hot_keys\" are applied by 'keyrouter apply' (docs/config.md).\n\n" \
	"  -c, --config FILE    the configuration: KEY is hashed as the ring's services hash\n" \
	"                       their keys (key type, spec, keyed hash)\n" \
	"      --hash           KEY is the 32-bit hash itself (0x1234abcd)\n" \
	"  -k, --replicas K     add: %d..%d distinct backends\n" \
	"  -j, --json           list: one JSON object {hot_keys: [{ring, hash, replicas,\n" \
	"                       controller}]}\n" \
	"  -i, --instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default \"default\")\n" \
	"  -p, --pin-dir DIR    maps pinned in DIR instead\n" KR_WAIT_OPT_HELP

static void help(FILE *f, const void *ctx)
{
	(void)ctx;
	fprintf(f, HOT_USAGE, KR_MIN_REPLICAS, KR_MAX_REPLICAS);
}

/* Does a QUIC service of the instance use ring id ring_id? */
static bool ring_is_quic(const struct kr_ops_maps *m, __u32 ring_id)
{
	struct kr_service_key k, next;
	struct kr_service v;
	void *prev = NULL;

	while (!bpf_map_get_next_key(m->services, prev, &next)) {
		k = next;
		prev = &k;
		if (!bpf_map_lookup_elem(m->services, &k, &v) && v.ring_id == ring_id &&
		    v.key_type == KR_KEY_QUIC)
			return true;
	}
	return false;
}

struct hot_args {
	const char *instance, *pin_dir, *config, *wait, *replicas;
	bool hash, json;
};

/* KEY -> its hash: --hash, or the configuration's ring RING. 0, or 2 (usage) / 1. */
static int key_hash(const struct hot_args *a, const char *ring, const char *key, __u32 *h)
{
	struct kr_config *cfg;
	struct kr_err e = { "" };
	char *end;
	int ri, rc = 0;

	if (a->hash) {
		unsigned long long u = strtoull(key, &end, 16);

		if (strncmp(key, "0x", 2) || !key[2] || *end || u > UINT32_MAX)
			return kr_usage_error("bad hash '%s': expected 0x and 1..8 hex digits", key);
		*h = (__u32)u;
		return 0;
	}
	if (!a->config)
		return kr_usage_error("KEY '%s': give the configuration (-c CONFIG) to hash it "
				      "as the ring's services do, or --hash with its hash", key);
	cfg = kr_cli_config_load(a->config);
	if (!cfg)
		return 1;
	ri = kr_config_ring(cfg, ring);
	if (ri < 0) {
		pr_warn("keyrouter: hotkey: no ring '%s' in %s\n", ring, a->config);
		rc = 1;
	} else if (kr_cfg_hot_hash(cfg, (uint32_t)ri, key, h, &e)) {
		pr_warn("keyrouter: hotkey: %s\n", e.msg);
		rc = 1;
	}
	kr_config_free(cfg);
	return rc;
}

static int open_maps(const struct hot_args *a, struct kr_inst *in, struct kr_ops_maps *m,
		     bool write)
{
	if (write ? kr_ops_inst_open(in, a->instance, a->pin_dir) :
		    kr_ops_inst_open_reader(in, a->instance, a->pin_dir))
		return 1;
	if (kr_ops_maps_open(in, m)) {
		kr_ops_inst_close(in);
		return 1;
	}
	if (m->hot_keys < 0) {
		pr_warn("keyrouter: hotkey: instance '%s' runs a program without hot keys (map "
			"kr_hot_keys): 'keyrouter upgrade' it first\n", in->name);
		kr_ops_maps_close(m);
		kr_ops_inst_close(in);
		return 1;
	}
	return 0;
}

static int hot_cmd(int argc, char **argv, int verb)
{
	struct hot_args a = {};
	const struct kr_opt opts[] = {
		KR_OPT_STR("config", 'c', &a.config),
		KR_OPT_FLAG("hash", 0, &a.hash),
		KR_OPT_STR("replicas", 'k', &a.replicas),
		KR_OPT_FLAG("json", 'j', &a.json),
		KR_OPT_STR("wait", 0, &a.wait),
		KR_OPT_STR("instance", 'i', &a.instance),
		KR_OPT_STR("pin-dir", 'p', &a.pin_dir),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .usage = help };
	int optind = kr_opts_parse(argc, argv, opts, &cmd), ring_id, rc = 1, k = 0;
	const char *ring, *key;
	struct kr_ops_maps m;
	struct kr_inst in;
	__u32 h = 0;

	if (optind < 0)
		return kr_opts_status(optind);
	if (a.instance && a.pin_dir)
		return kr_usage_error("at most one of --instance, --pin-dir");
	if (verb < 2 && optind + 2 != argc)
		return kr_usage_error("expected RING and KEY");
	if (verb == 2 && optind + 1 < argc)
		return kr_usage_error("expected at most RING");
	if (verb == 0) {
		char *end;

		k = a.replicas ? (int)strtol(a.replicas, &end, 10) : 0;
		if (!a.replicas || *end || k < KR_MIN_REPLICAS || k > KR_MAX_REPLICAS)
			return kr_usage_error("--replicas: expected %d..%d distinct backends, got "
					      "'%s'", KR_MIN_REPLICAS, KR_MAX_REPLICAS,
					      a.replicas ? a.replicas : "nothing");
	} else if (a.replicas) {
		return kr_usage_error("--replicas only with 'hotkey add'");
	}
	ring = optind < argc ? argv[optind] : NULL;
	key = verb < 2 ? argv[optind + 1] : NULL;
	if (key && (rc = key_hash(&a, ring, key, &h)))
		return rc;
	if (kr_lock_wait_opt(a.wait, -1))
		return 2;
	if (open_maps(&a, &in, &m, verb < 2))
		return 1;
	rc = 1;
	ring_id = ring ? kr_ops_ring_find(&in, ring) : -1;
	if (ring && ring_id < 0) {
		pr_warn("keyrouter: hotkey: no ring '%s' in instance '%s' ('keyrouter status' "
			"lists them)\n", ring, in.name);
		goto out;
	}
	if (verb == 0) {
		struct kr_hot_ent e = { .k = { (__u32)ring_id, h }, .v = { (__u32)k, 0 } };
		int err;

		if (ring_is_quic(&m, (__u32)ring_id)) {
			pr_warn("keyrouter: hotkey: ring '%s' carries a QUIC service: a connection "
				"ID must stay on its backend, QUIC rings take no hot keys\n", ring);
			goto out;
		}
		err = kr_ops_hot_put(&m, &e);
		if (err == -E2BIG || err == -ENOSPC) {
			pr_warn("keyrouter: hotkey: kr_hot_keys is full (%d entries): remove some "
				"with 'keyrouter hotkey del'\n", KR_MAX_HOT_KEYS);
			goto out;
		}
		if (err) {
			pr_warn("keyrouter: hotkey: couldn't write the entry: %s\n", strerror(-err));
			goto out;
		}
		printf("hot key 0x%08x of ring '%s': %d replicas\n", h, ring, k);
		rc = 0;
	} else if (verb == 1) {
		int err = kr_ops_hot_del(&m, (__u32)ring_id, h);

		if (err == -ENOENT) {
			pr_warn("keyrouter: hotkey: ring '%s' has no hot key 0x%08x ('keyrouter "
				"hotkey list %s')\n", ring, h, ring);
			goto out;
		}
		if (err) {
			pr_warn("keyrouter: hotkey: couldn't remove the entry: %s\n", strerror(-err));
			goto out;
		}
		printf("hot key 0x%08x of ring '%s': removed\n", h, ring);
		rc = 0;
	} else {
		struct kr_hot_ent *all = NULL;
		json_t *arr = json_array();
		uint32_t n = 0;

		if (kr_ops_hot_list(&m, ring_id, &all, &n)) {
			json_decref(arr);
			goto out;
		}
		for (uint32_t i = 0; i < n; i++) {
			struct kr_ops_ring r = {};
			const char *name;
			char hs[16];

			name = !kr_ops_ring_get(&in, all[i].k.ring_id, &r) && r.name[0] ? r.name : "?";
			snprintf(hs, sizeof(hs), "0x%08x", all[i].k.key_hash);
			if (a.json)
				json_array_append_new(arr, json_pack("{s:s,s:s,s:i,s:b}", "ring", name,
						      "hash", hs, "replicas",
						      (int)all[i].v.replicas, "controller",
						      !!(all[i].v.flags & KR_HOT_F_CONTROLLER)));
			else
				printf("%s %s replicas %u%s\n", name, hs, all[i].v.replicas,
				       all[i].v.flags & KR_HOT_F_CONTROLLER ? " (controller)" : "");
		}
		free(all);
		if (a.json) {
			rc = kr_an_json_print(json_pack("{s:o}", "hot_keys", arr), "hotkey list");
			goto out;
		}
		json_decref(arr);
		if (!n)
			printf("no hot keys%s%s\n", ring ? " in ring " : "", ring ? ring : "");
		rc = 0;
	}
out:
	kr_ops_maps_close(&m);
	kr_ops_inst_close(&in);
	return rc;
}

static int cmd_hotkey_add(int argc, char **argv) { return hot_cmd(argc, argv, 0); }
static int cmd_hotkey_del(int argc, char **argv) { return hot_cmd(argc, argv, 1); }
static int cmd_hotkey_list(int argc, char **argv) { return hot_cmd(argc, argv, 2); }

KR_COMMAND(hotkey_add, "hotkey add", "spread a hot key over K replicas", cmd_hotkey_add);
KR_COMMAND(hotkey_del, "hotkey del", "remove a hot key's replicas", cmd_hotkey_del);
KR_COMMAND(hotkey_list, "hotkey list", "list the hot keys of the instance", cmd_hotkey_list);
