// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter upgrade: a new build of the program replaces the running one in place. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include "cmd.h"
#include "log.h"
#include "ops.h"
#include "ops_find.h"
#include "ops_upgrade.h"
#include "opts.h"
#include "output.h"

static void usage(FILE *f, const void *ctx)
{
	(void)ctx;
	fprintf(f,
		"Usage: keyrouter upgrade [IFACE] [--instance NAME] [--object FILE] [--if-attached]\n\n"
		"Replace the running program of a loaded instance by a new build, in place: the new\n"
		"program takes over the instance's pinned maps (rings, migration state, services,\n"
		"backends and their health states, backend ids, counters) and replaces the\n"
		"attached one in one kernel operation (XDP: a replace of the attached program; TC:\n"
		"a replace of the filter), so no packet misses the router and nothing is reset.\n"
		"Each pinned map is compared with the new build's (type, key and value size,\n"
		"max_entries, flags, the BTF layout of the value): when one differs the upgrade is\n"
		"refused, says which and what to do, and changes nothing. The new program id is\n"
		"recorded for status and unload. `systemctl restart keyrouter@IFACE` and the\n"
		"package's upgrade run this (docs/deploy.md).\n\n"
		"  IFACE                the interface the instance is loaded on (optional: with\n"
		"                       --instance it is checked; alone it finds the instance)\n"
		"  -i, --instance NAME  the instance (default: the one loaded on IFACE, else\n"
		"                       \"default\")\n"
		"  -o, --object FILE    the BPF object to take (default: the one built into this\n"
		"                       keyrouter, e.g. the newly installed build)\n"
		"      --if-attached    do nothing (exit 0) when the instance is not loaded or its\n"
		"                       program is not attached (for the unit's start: `load` or\n"
		"                       `apply` then attach the new program themselves)\n\n"
		"Not possible (refused, nothing changed): an instance attached through libxdp's\n"
		"dispatcher beside other XDP programs (unload + load instead), one loaded in\n"
		"another network namespace (run it there: `nsenter --net=/run/netns/NAME`).\n");
}

static int do_upgrade(const char *ifname, const char *instance, const char *obj,
		      bool if_attached)
{
	struct kr_inst in = { .dir_fd = -1, .meta_fd = -1, .rings_fd = -1 };
	struct kr_ops_upgrade_report rep;
	char found[KR_NAME_MAX];
	enum kr_ops_attach_state state;
	struct kr_ops_meta meta;
	__u32 key = 0;
	int err;

	if (!kr_ops_is_root()) {
		pr_warn("keyrouter: upgrade needs root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)\n");
		return 1;
	}
	if (kr_ops_bpffs_ensure(KR_OPS_BPFFS))
		return 1;
	if (ifname && !instance) {
		__u32 ifindex = strlen(ifname) < IF_NAMESIZE ? if_nametoindex(ifname) : 0;

		if (ifindex && !kr_ops_instance_on(ifindex, NULL, found, sizeof(found))) {
			instance = found;
		} else if (if_attached) {
			pr_info("keyrouter: keyrouter is not loaded on '%s' here: nothing to "
				"upgrade\n", ifname);
			return 0;
		} else {
			pr_warn("keyrouter: keyrouter is not loaded on '%s' in this network "
				"namespace: 'keyrouter status' lists the instances; name one with "
				"--instance\n", ifname);
			return 1;
		}
	}
	/* --if-attached (the unit, the package): without a record of a load here, nothing
	 * is opened or locked (a load under way, leftovers, another network namespace) */
	if (if_attached && (kr_ops_inst_path(&in, instance, NULL) ||
			    kr_ops_meta_read(in.name, &meta) || meta.magic != KR_OPS_META_MAGIC)) {
		pr_info("keyrouter: instance '%s' is not loaded: nothing to upgrade\n",
			instance ? instance : KR_OPS_DEFAULT_INSTANCE);
		return 0;
	}
	if (if_attached && meta.netns_ino && meta.netns_ino != kr_ops_netns_ino()) {
		pr_info("keyrouter: instance '%s' is loaded in another network namespace "
			"(net:[%u]): not upgraded from here\n", in.name, meta.netns_ino);
		return 0;
	}
	if (kr_ops_inst_open(&in, instance, NULL))
		return 1;
	if (bpf_map_lookup_elem(in.meta_fd, &key, &meta) || meta.magic != KR_OPS_META_MAGIC) {
		kr_ops_inst_close(&in);
		if (if_attached) {
			pr_info("keyrouter: instance '%s' has no record of a load: nothing to "
				"upgrade\n", in.name);
			return 0;
		}
		pr_warn("keyrouter: instance '%s' has pins in %s but no record of a load: nothing "
			"to upgrade ('keyrouter load' loads it)\n", in.name, in.dir);
		return 1;
	}
	if (ifname && strncmp(meta.ifname, ifname, sizeof(meta.ifname)) &&
	    (strlen(ifname) >= IF_NAMESIZE || if_nametoindex(ifname) != meta.ifindex)) {
		pr_warn("keyrouter: instance '%s' is loaded on '%s', not on '%s'\n", in.name,
			meta.ifname, ifname);
		kr_ops_inst_close(&in);
		return 1;
	}
	state = kr_ops_attach_state(&meta, NULL);
	if (state == KR_OTHER_NETNS || (if_attached && state == KR_IFACE_GONE)) {
		enum kr_ops_attach_state s = state;
		char hint[320];

		kr_ops_inst_close(&in);
		if (s == KR_OTHER_NETNS) {
			kr_ops_netns_hint(meta.netns_ino, hint, sizeof(hint));
			pr_warn("keyrouter: instance '%s' is loaded in another network namespace "
				"(net:[%u]): run the upgrade there: '%s keyrouter upgrade --instance "
				"%s'\n", in.name, meta.netns_ino,
				hint[0] ? hint : "nsenter --net=<its namespace>", in.name);
			return if_attached ? 0 : 1;
		}
		pr_info("keyrouter: instance '%s' on '%s': %s; not upgraded\n", in.name,
			meta.ifname, kr_ops_attach_state_name(s));
		return 0;
	}
	/* not attached (the recorded program is not on the hook): kr_ops_upgrade() tells one of
	 * ours that an interrupted upgrade attached (completed now) from a foreign one or none */
	err = kr_ops_upgrade(&in, obj, &meta, &rep);
	kr_ops_inst_close(&in);
	if (err == -ESRCH && if_attached && !rep.new_prog_id)
		return 0;	/* not attached: apply attaches it again (the unit then upgrades
				 * it), load a new one */
	if (err && !rep.new_prog_id)
		return 1;
	pr_info("keyrouter: upgraded instance '%s' on %s in place: program %u (tag %s) -> %u "
		"(tag %s); %d maps taken over, %d new, %d constants map%s of the new build\n",
		in.name, meta.ifname, rep.old_prog_id, rep.old_tag, rep.new_prog_id, rep.new_tag,
		rep.reused, rep.created, rep.fresh, rep.fresh == 1 ? "" : "s");
	return err ? 1 : 0;
}

static int cmd_upgrade(int argc, char **argv)
{
	const char *instance = NULL, *obj = NULL;
	bool if_attached = false;
	const struct kr_opt opts[] = {
		KR_OPT_STR("instance", 'i', &instance),
		KR_OPT_STR("object", 'o', &obj),
		KR_OPT_FLAG("if-attached", 0, &if_attached),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .usage = usage };
	int first = kr_opts_parse(argc, argv, opts, &cmd);

	if (first < 0)
		return kr_opts_status(first);
	if (first < argc - 1)
		return kr_usage_error("expected at most one interface");
	return do_upgrade(first == argc - 1 ? argv[first] : NULL, instance, obj, if_attached);
}
KR_COMMAND(upgrade, "upgrade", "replace the running program by a new build, keeping its maps",
	   cmd_upgrade);
