// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter ring stage / migrate / commit / rollback / status: two-slot migration. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cmd.h"
#include "log.h"
#include "ops.h"
#include "apply_out.h"
#include "ops_kernel.h"
#include "ops_report.h"
#include "json_out.h"
#include "opts.h"
#include "ring_sm.h"
#include "lock_wait.h"

#define CTL_JSON_HELP \
	"  -j, --json           the outcome as one JSON object: ring, done, state,\n" \
	"                       active_slot, fraction (units of 2^-32), percent, staged {slot,\n" \
	"                       generation, digest}\n"
#define COMMON_OPTS_HELP \
	"  -i, --instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default \"default\")\n" \
	"  -p, --pin-dir DIR    maps pinned in DIR instead\n"
#define STAGE_OPTS_HELP \
	"  -i, --instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default: the config's\n" \
	"                       \"instance\", else \"default\")\n" \
	"  -p, --pin-dir DIR    maps pinned in DIR instead\n"

static const char *const usages[] = {
	[KR_SM_STAGE] =
	"Usage: keyrouter ring stage RING -c CONFIG [--json] [--instance NAME | --pin-dir DIR]\n\n"
	"Build RING as CONFIG defines it and publish it into the ring's standby slot, with\n"
	"the migration fraction 0: no key moves yet. Needs the ring idle (a third version\n"
	"only after commit or rollback). RING may be a subset ring, \"RING[tag,...]\".\n\n"
	"  -c, --config FILE    the configuration holding the new version\n"
	"  -j, --json           the outcome as one JSON object: ring, done (stage,\n"
	"                       staged_already, stage_same), digest, points, slot,\n"
	"                       active_slot, state, generation\n" STAGE_OPTS_HELP
	KR_WAIT_OPT_HELP,
	[KR_SM_MIGRATE] =
	"Usage: keyrouter ring migrate RING --percent P [--json] [--instance NAME | --pin-dir DIR]\n\n"
	"Route P percent of the keys (0..100, resolution 2^-32, e.g. 0.01 or 12.5) with the\n"
	"staged version; a key goes to the standby slot when mix32(crc32(key)) < P% * 2^32,\n"
	"so raising P only moves more keys over, never back. One write of the ring's\n"
	"control word: it takes effect at once, nothing is rebuilt or reloaded.\n\n"
	"  -P, --percent P      share of keys on the staged version\n" CTL_JSON_HELP
	COMMON_OPTS_HELP
	KR_WAIT_OPT_HELP,
	[KR_SM_COMMIT] =
	"Usage: keyrouter ring commit RING [--json] [--instance NAME | --pin-dir DIR]\n\n"
	"Make the staged version the active one for every key (one control-word write);\n"
	"the previous version stays in the standby slot until the next stage.\n\n"
	CTL_JSON_HELP COMMON_OPTS_HELP KR_WAIT_OPT_HELP,
	[KR_SM_ROLLBACK] =
	"Usage: keyrouter ring rollback RING [--json] [--instance NAME | --pin-dir DIR]\n\n"
	"Send every key back to the active version at once (fraction 0, ring idle).\n\n"
	CTL_JSON_HELP COMMON_OPTS_HELP KR_WAIT_OPT_HELP,
};

struct ring_args {
	const char *instance, *pin_dir, *config, *percent;
	const char *ring, *wait;
	bool json, recompute;
};

static const char status_usage[];

/* The options each verb takes, beyond --instance and --pin-dir (an option of
 * another verb is an unknown option: nothing is accepted and ignored). */
enum { RA_CONFIG = 1, RA_PERCENT = 2, RA_RECOMPUTE = 4, RA_JSON = 8, RA_WAIT = 16 };

static int parse(int argc, char **argv, const char *usage, bool need_ring, unsigned allowed,
		 struct ring_args *a)
{
	struct kr_opt opts[8] = {
		KR_OPT_STR("instance", 'i', &a->instance),
		KR_OPT_STR("pin-dir", 'p', &a->pin_dir),
	};
	const struct kr_opts_cmd cmd = { .help = usage };
	int first, n = 2;

	memset(a, 0, sizeof(*a));
	if (allowed & RA_JSON)
		opts[n++] = (struct kr_opt)KR_OPT_FLAG("json", 'j', &a->json);
	if (allowed & RA_CONFIG)
		opts[n++] = (struct kr_opt)KR_OPT_STR("config", 'c', &a->config);
	if (allowed & RA_PERCENT)
		opts[n++] = (struct kr_opt)KR_OPT_STR("percent", 'P', &a->percent);
	if (allowed & RA_RECOMPUTE)
		opts[n++] = (struct kr_opt)KR_OPT_FLAG("recompute", 0, &a->recompute);
	if (allowed & RA_WAIT)
		opts[n++] = (struct kr_opt)KR_OPT_STR("wait", 0, &a->wait);
	first = kr_opts_parse(argc, argv, opts, &cmd);
	if (first < 0)
		return kr_opts_status(first);
	if (first < argc)
		a->ring = argv[first++];
	if (first != argc || (need_ring && !a->ring))
		return kr_usage_error("expected %s", need_ring ? "one RING argument" :
				      "at most one RING argument");
	if (a->instance && a->pin_dir)
		return kr_usage_error("give --instance NAME or --pin-dir DIR, not both");
	if (kr_lock_wait_opt(a->wait, -1))
		return 2;
	return -1;
}

static int ring_id_of(struct kr_inst *in, const char *name)
{
	int id = kr_ops_ring_find(in, name);

	if (id < 0)
		pr_warn("keyrouter: instance '%s' has no ring '%s' (apply a config that has it; "
			"'keyrouter ring status' lists the rings)\n", in->name, name);
	return id;
}

/* --json of migrate, commit, rollback: the control word written, and the staged slot. */
static void print_ctl_json(enum kr_sm_op op, const char *ring, __u64 ctl,
			   const struct kr_ops_slot *standby)
{
	char digest[9];
	json_t *j;

	snprintf(digest, sizeof(digest), "%08x", standby->hdr.digest);
	j = json_pack("{s:s,s:s,s:s,s:i,s:I,s:f}", "ring", ring, "done", kr_sm_op_name(op),
		      "state", kr_sm_state_name(kr_ctl_state(ctl)), "active_slot",
		      kr_ctl_active(ctl), "fraction", (json_int_t)kr_ctl_frac(ctl),
		      "percent", kr_frac_percent(kr_ctl_frac(ctl)));
	if (j && standby->present)
		json_object_set_new(j, "staged", json_pack("{s:i,s:I,s:s}", "slot",
				    kr_ctl_active(ctl) ^ (op != KR_SM_COMMIT), "generation",
				    (json_int_t)standby->hdr.generation, "digest", digest));
	kr_an_json_print(j, kr_cmd_current());
}

static int ctl_op(enum kr_sm_op op, int argc, char **argv)
{
	struct kr_ops_maps m = { .backends = -1 };
	struct ring_args a;
	struct kr_ops_slot standby = {};
	struct kr_inst in;
	const char *why;
	__u64 frac = 0, ctl, next;
	int rc = parse(argc, argv, usages[op], true,
		       RA_JSON | RA_WAIT | (op == KR_SM_MIGRATE ? RA_PERCENT : 0), &a);
	int id;

	if (rc >= 0)
		return rc;
	rc = op == KR_SM_MIGRATE ? kr_percent_parse(a.percent, &frac) : 0;
	if (rc == -2)
		return kr_usage_error("bad --percent '%s': closer to 0 or 100 than the fraction's "
				      "resolution (100/2^32 = %.10f%%): give 0 (or roll back), 100 "
				      "(or commit), or a share from %.10f to %.10f", a.percent,
				      100.0 / 4294967296.0, 100.0 / 4294967296.0,
				      100.0 - 100.0 / 4294967296.0);
	if (rc)
		return kr_usage_error("bad --percent '%s': expected a number from 0 to 100",
				      a.percent ? a.percent : "");
	if (kr_ops_inst_open(&in, a.instance, a.pin_dir))
		return 1;
	rc = 1;
	if (kr_ops_maps_open(&in, &m))
		goto out;
	id = ring_id_of(&in, a.ring);
	if (id < 0 || kr_ops_ctl_read(&m, id, &ctl))
		goto out;
	if (kr_sm_next(ctl, op, frac, &next, &why)) {
		struct kr_ops_slot act = {};

		/* idle: say which version routes, so that a commit or rollback run again (its
		 * first run's answer lost) shows whether the first one took effect */
		if (kr_ctl_state(ctl) == KR_RING_IDLE &&
		    !kr_ops_slot_read(&m, id, kr_ctl_active(ctl), false, &act) && act.present)
			pr_warn("keyrouter: ring %s %s: %s (state %s; slot %u is active: generation "
				"%llu, digest %08x)\n", kr_sm_op_name(op), a.ring, why,
				kr_sm_state_name(kr_ctl_state(ctl)), kr_ctl_active(ctl),
				(unsigned long long)act.hdr.generation, act.hdr.digest);
		else
			pr_warn("keyrouter: ring %s %s: %s (state %s)\n", kr_sm_op_name(op),
				a.ring, why, kr_sm_state_name(kr_ctl_state(ctl)));
		kr_ops_slot_free(&act);
		goto out;
	}
	if (op != KR_SM_ROLLBACK &&
	    (kr_ops_slot_read(&m, id, kr_ctl_active(ctl) ^ 1, false, &standby) ||
	     !standby.present)) {
		pr_warn("keyrouter: ring %s %s: the standby slot is empty; stage again\n",
			kr_sm_op_name(op), a.ring);
		goto out;
	}
	if (kr_ops_ctl_write(&m, id, next)) {
		pr_warn("keyrouter: ring %s %s: couldn't write the control word: %s\n",
			kr_sm_op_name(op), a.ring, strerror(errno));
		goto out;
	}
	if (a.json)
		print_ctl_json(op, a.ring, next, &standby);
	else if (op == KR_SM_MIGRATE)
		printf("ring %s: %.7f%% of keys (%llu/2^32) on slot %u (generation %llu)\n",
		       a.ring, kr_frac_percent(frac), (unsigned long long)frac,
		       kr_ctl_active(ctl) ^ 1, (unsigned long long)standby.hdr.generation);
	else if (op == KR_SM_COMMIT)
		printf("ring %s: committed: slot %u (generation %llu, digest %08x) is active\n",
		       a.ring, kr_ctl_active(next), (unsigned long long)standby.hdr.generation,
		       standby.hdr.digest);
	else
		printf("ring %s: rolled back: every key on slot %u\n", a.ring, kr_ctl_active(next));
	rc = 0;
out:
	if (m.backends >= 0)
		kr_ops_maps_close(&m);
	kr_ops_inst_close(&in);
	return rc;
}

static int cmd_stage(int argc, char **argv)
{
	struct kr_config *cfg;
	struct ring_args a;
	struct kr_inst in;
	int rc = parse(argc, argv, usages[KR_SM_STAGE], true, RA_CONFIG | RA_JSON | RA_WAIT, &a);

	if (rc >= 0)
		return rc;
	if (!a.config)
		return kr_usage_error("expected -c CONFIG (the new version)");
	cfg = kr_cli_config_load(a.config);
	if (!cfg)
		return 1;
	a.instance = kr_cli_instance(a.instance, a.pin_dir, cfg->instance);
	rc = 1;
	if (!kr_ops_inst_open(&in, a.instance, a.pin_dir)) {
		rc = kr_cli_stage(&in, a.config, cfg, a.ring, a.json);
		kr_ops_inst_close(&in);
	}
	kr_config_free(cfg);
	return rc;
}

static int cmd_migrate(int argc, char **argv) { return ctl_op(KR_SM_MIGRATE, argc, argv); }
static int cmd_commit(int argc, char **argv) { return ctl_op(KR_SM_COMMIT, argc, argv); }
static int cmd_rollback(int argc, char **argv) { return ctl_op(KR_SM_ROLLBACK, argc, argv); }

static const char status_usage[] =
	"Usage: keyrouter ring status [RING] [--json] [--instance NAME | --pin-dir DIR]\n\n"
	"Per ring: state (idle, staged, migrating), active slot, migration fraction; per slot:\n"
	"digest, points, kernel memory (the kernel's own accounting), generation, when it was\n"
	"published, packets routed by it; packets routed past a down point (failover) and\n"
	"those it could not route, by reason (no ring, bad image, all down, walk limit:\n"
	"one line, printed when any is not 0; every one in --json); and the share of the\n"
	"key space the two slots route differently (what a full migration moves: an exact\n"
	"diff of the two rings, computed once by ring stage and noted in the staged image's\n"
	"header; two slots without the note, e.g. after a plain-bpftool publish, are\n"
	"diffed at each call).\n\n"
	"  -j, --json           one JSON object per ring, in a list\n"
	"      --recompute      diff the two slots' images now instead of reading the note\n"
	"                       (reads both images: seconds and GBs for rings of 10^8 points)\n"
	COMMON_OPTS_HELP;

static int cmd_ring_status(int argc, char **argv)
{
	struct kr_ops_maps m;
	struct ring_args a;
	struct kr_inst in;
	json_t *arr;
	int rc = parse(argc, argv, status_usage, false, RA_RECOMPUTE | RA_JSON, &a), n = 0;

	if (rc >= 0)
		return rc;
	if (kr_ops_inst_open_reader(&in, a.instance, a.pin_dir))
		return 1;
	if (kr_ops_maps_open(&in, &m)) {
		kr_ops_inst_close(&in);
		return 1;
	}
	rc = 0;
	arr = a.json ? json_array() : NULL;
	for (__u32 id = 0; id < KR_MAX_RINGS; id++) {
		struct kr_ops_ring_report r;
		struct kr_ops_ring meta;

		if (kr_ops_ring_get(&in, id, &meta) || !meta.name[0] ||
		    (a.ring && strcmp(a.ring, meta.name)))
			continue;
		if (kr_ops_ring_report(&in, &m, id, a.recompute ? KR_REPORT_DIFF_RECOMPUTE :
				       KR_REPORT_DIFF, &r)) {
			pr_warn("keyrouter: couldn't read ring '%s'\n", meta.name);
			rc = 1;
			continue;
		}
		if (arr)
			json_array_append_new(arr, kr_ops_ring_report_json(&r));
		else
			kr_ops_ring_report_text(stdout, &r);
		n++;
		kr_ops_ring_report_free(&r);
	}
	if (arr)
		rc |= kr_json_print_line(arr, "ring status");
	else if (!a.ring)
		kr_ops_subsets_report_text(stdout, &m);
	if (a.ring && !n) {
		pr_warn("keyrouter: instance '%s' has no ring '%s'\n", in.name, a.ring);
		rc = 1;
	}
	kr_ops_maps_close(&m);
	kr_ops_inst_close(&in);
	return rc;
}

KR_COMMAND(ring_stage, "ring stage", "put a config's new ring version in the standby slot",
	   cmd_stage);
KR_COMMAND(ring_migrate, "ring migrate", "route a percentage of keys with the staged version",
	   cmd_migrate);
KR_COMMAND(ring_commit, "ring commit", "make the staged version active", cmd_commit);
KR_COMMAND(ring_rollback, "ring rollback", "send every key back to the active version",
	   cmd_rollback);
KR_COMMAND(ring_status, "ring status", "both slots of every ring, fraction, packets, moved share",
	   cmd_ring_status);
