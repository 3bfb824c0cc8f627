// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter apply: converge the pinned maps on a configuration. */
#include <errno.h>
#include <stdio.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include "cmd.h"
#include "log.h"
#include "ops.h"
#include "apply_out.h"
#include "ops_attach.h"
#include "ops_find.h"
#include "opts.h"
#include "lock_wait.h"

/*
 * Liveness first: an instance loaded by `keyrouter load` whose program is not attached any
 * more (detached behind keyrouter's back, or its interface removed and made again under
 * the same name) gets its program, pinned in the instance, attached again where the record
 * says before the configuration is applied.  Where that cannot be done (the interface is
 * gone, a load that did not finish, no pinned program), apply fails and says why: an apply
 * that "changed nothing" must mean the instance routes.
 */
static int restore_attachment(const struct kr_inst *in, const char *config, bool dry_run)
{
	struct kr_ops_meta meta = {};
	enum kr_ops_attach_state st;
	__u32 key = 0, ifindex;

	if (in->meta_fd < 0 || bpf_map_lookup_elem(in->meta_fd, &key, &meta) ||
	    !kr_ops_meta_recorded(&meta))
		return 0;	/* no record (--pin-dir, maps pinned by hand) */
	if (meta.magic == KR_OPS_META_LOADING) {
		pr_warn("keyrouter: instance '%s': the load on '%s' did not finish (interrupted): "
			"run 'keyrouter load %s -c %s --instance %s' (it undoes the unfinished one "
			"first), or 'keyrouter unload %s --instance %s'; nothing was changed\n",
			in->name, meta.ifname, meta.ifname, config, in->name, meta.ifname, in->name);
		return -EINPROGRESS;
	}
	if (meta.netns_ino && meta.netns_ino != kr_ops_netns_ino())
		return 0;	/* kr_cli_apply refuses, and says where to run it */
	st = kr_ops_attach_state(&meta, NULL);
	if (st == KR_ATTACHED)
		return 0;
	if (st == KR_IFACE_GONE) {
		ifindex = strlen(meta.ifname) < IF_NAMESIZE ? if_nametoindex(meta.ifname) : 0;
		if (!ifindex) {
			pr_warn("keyrouter: instance '%s' is not attached: its interface '%s' is "
				"gone, so its program cannot be attached again; once an interface of "
				"that name is back, apply attaches it ('keyrouter unload %s --instance "
				"%s' removes the instance); nothing was changed\n", in->name,
				meta.ifname, meta.ifname, in->name);
			return -ENODEV;
		}
		meta.ifindex = ifindex;	/* the interface, made again */
	}
	if (dry_run) {
		pr_info("keyrouter: instance '%s': its program (id %u) is not attached to '%s': "
			"apply would attach it again (%s mode)\n", in->name, meta.prog_id,
			meta.ifname, kr_ops_mode_name(meta.mode));
		return 0;
	}
	if (kr_ops_reattach(in->dir, &meta)) {
		pr_warn("keyrouter: instance '%s' is not attached and its program could not be "
			"attached again: 'keyrouter unload %s --instance %s' then 'keyrouter load' "
			"give it a new one; nothing was changed\n", in->name, meta.ifname, in->name);
		return -EIO;
	}
	if (bpf_map_update_elem(in->meta_fd, &key, &meta, BPF_ANY)) {
		pr_warn("keyrouter: couldn't record the attachment: %s\n", strerror(errno));
		return -errno;
	}
	pr_info("keyrouter: instance '%s': its program (id %u) was not attached to '%s' any "
		"more: attached it again (%s mode)\n", in->name, meta.prog_id, meta.ifname,
		kr_ops_mode_name(meta.mode));
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: keyrouter apply -c CONFIG [--instance NAME | --pin-dir DIR] [--dry-run] [--json]\n"
		"                      [--strict] [--force]\n\n"
		"Make the running data plane route as CONFIG says, changing only what differs:\n"
		"every ring is built and compared (digest, format, backend ids) with the version\n"
		"published in its active slot; only changed rings are published (one atomic map\n"
		"update each), then the rings' \"hot_keys\" are written (entries the config does\n"
		"not name removed, but those `keyrouter balance` manages; all of a removed\n"
		"ring's go with it), then services are added/changed/removed, then ring ids and\n"
		"backend ids nothing uses any more are released. Applying the same file twice\n"
		"changes nothing (and says so). Killed at any point, the data plane keeps routing\n"
		"with what was published; the next apply converges. Rings being migrated\n"
		"(staged) are left alone until committed or rolled back.\n\n"
		"An instance loaded by `keyrouter load` whose program is not attached any more\n"
		"(detached by something else; its interface removed and made again under the\n"
		"same name) gets it attached again first. Where that cannot be done (the\n"
		"interface is gone, a load that did not finish) apply fails and says why.\n\n"
		"Big moves are staged, not applied: a ring whose new version would send more\n"
		"than the config's \"max_move\" (default 25%%) of its keys to another backend at\n"
		"once is refused, with nothing written, and the message gives the commands that\n"
		"move it gradually instead (ring stage, ring migrate, ring commit). Each\n"
		"replaced ring's moved share is printed (--dry-run: before anything is done).\n\n"
		"  -c, --config FILE    the configuration (JSON)\n"
		"  -i, --instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default: the config's\n"
		"                       \"instance\", else \"default\"; never whichever happens to be\n"
		"                       loaded)\n"
		"  -p, --pin-dir DIR    maps pinned in DIR instead (e.g. by `bpftool prog loadall\n"
		"                       build/bpf/keyrouter.bpf.o DIR/progs pinmaps DIR`)\n"
		"  -n, --dry-run        print what would change, change nothing\n"
		"      --strict         a ring that differs but is staged or migrating (apply\n"
		"                       leaves it alone: exit 0 without --strict), or a warning\n"
		"                       about this router's network (a backend MAC other than\n"
		"                       the neighbour entry of its address, an l2 backend with no\n"
		"                       \"dev\" routed through another device than the ingress, a\n"
		"                       VIP that is a local address; `config check --live` shows\n"
		"                       them too) fails the apply before anything is written\n"
		"                       (exit 1)\n"
		"      --force          publish rings that move more than max_move of their keys\n"
		"  -j, --json           one JSON object on stdout instead of the summary line: ok,\n"
		"                       dry_run, changed, max_move, refused (\"max_move\" when\n"
		"                       refused), rings (ring, id, action: unchanged, publish,\n"
		"                       skip; digest, points, was_digest, slot, why, done,\n"
		"                       generation, moved: the share of its keys), counts (rings_published, ...,\n"
		"                       backends_unchanged, hot_keys_added, hot_keys_changed,\n"
		"                       hot_keys_removed), rings_removed; a dry run's plan\n"
		"                       (backends, devices, services, services_removed,\n"
		"                       rings_removed, backends_released, hot_keys, ...)\n"
		KR_WAIT_OPT_HELP);
}

static void help(FILE *f, const void *ctx)
{
	(void)ctx;
	usage(f);
}

static int cmd_apply(int argc, char **argv)
{
	const char *config = NULL, *instance = NULL, *pin_dir = NULL, *wait = NULL;
	struct kr_ops_apply_opts o = {};
	bool json = false;
	const struct kr_opt opts[] = {
		KR_OPT_STR("config", 'c', &config),
		KR_OPT_STR("instance", 'i', &instance),
		KR_OPT_STR("pin-dir", 'p', &pin_dir),
		KR_OPT_FLAG("dry-run", 'n', &o.dry_run),
		KR_OPT_FLAG("json", 'j', &json),
		KR_OPT_FLAG("strict", 0, &o.strict),
		KR_OPT_FLAG("force", 0, &o.force),
		KR_OPT_STR("wait", 0, &wait),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .usage = help };
	struct kr_config *cfg;
	struct kr_inst in;
	int err, first = kr_opts_parse(argc, argv, opts, &cmd);

	if (first < 0)
		return kr_opts_status(first);
	if (!config || first != argc || (instance && pin_dir))
		return kr_usage_error("expected -c CONFIG (and at most one of --instance, "
				      "--pin-dir)");
	if (kr_lock_wait_opt(wait, -1))
		return 2;
	cfg = kr_cli_config_load(config);
	if (!cfg)
		return 1;
	instance = kr_cli_instance(instance, pin_dir, cfg->instance);
	if (kr_ops_inst_open(&in, instance, pin_dir)) {
		kr_config_free(cfg);
		return 1;
	}
	err = restore_attachment(&in, config, o.dry_run) ? 1 : kr_cli_apply(&in, config, cfg, &o, json);
	kr_ops_inst_close(&in);
	kr_config_free(cfg);
	return err;
}
KR_COMMAND(apply, "apply", "make the data plane route as a config says (idempotent)",
	   cmd_apply);
