// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter load / unload: attach the program, pin its maps, apply; detach, remove pins. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include "announce.h"
#include "cmd.h"
#include "log.h"
#include "ops.h"
#include "apply_out.h"
#include "ops_attach.h"
#include "ops_find.h"
#include "ops_report.h"
#include "util.h"
#include "opts.h"
#include "lock_wait.h"
#include "output.h"

/* How long unload waits for a running announcer to withdraw (its drain timeout is 30 s). */
#define ANNOUNCE_WAIT_MS	40000

static void load_usage(FILE *f)
{
	fprintf(f,
		"Usage: keyrouter load IFACE -c CONFIG [--mode native|generic|tc] [--instance NAME]\n"
		"                      [--object FILE]\n\n"
		"Attach keyrouter to IFACE, pin its maps under /sys/fs/bpf/keyrouter/NAME/ (the\n"
		"bpf filesystem is mounted when needed) and apply CONFIG.\n\n"
		"  -c, --config FILE    the configuration (JSON) to apply once attached\n"
		"  -m, --mode MODE      native (XDP in the driver, default), generic (XDP in the\n"
		"                       stack) or tc (a clsact ingress filter)\n"
		"  -i, --instance NAME  instance name (default: the config's \"instance\", else\n"
		"                       \"default\"): one instance per interface\n"
		"  -o, --object FILE    load this BPF object file instead of the one built into\n"
		"                       the tool (e.g. the installed keyrouter.bpf.o)\n"
		KR_WAIT_OPT_HELP "\n"
		"XDP goes through libxdp's dispatcher, so other XDP programs loaded with libxdp\n"
		"(xdp-loader) keep running on the same interface; `xdp-loader status` lists both.\n"
		"If the configuration cannot be applied, or the load is interrupted (Ctrl-C,\n"
		"SIGTERM, SIGHUP), the program is detached again and the pins removed: nothing\n"
		"is left half-loaded. A load killed outright (kill -9, a crash) leaves its record\n"
		"(written before the attach, marked finished last): the next load or unload of\n"
		"the instance undoes it first, and so does the next load of an instance whose\n"
		"program is not attached any more.\n");
}

static void unload_usage(FILE *f)
{
	fprintf(f,
		"Usage: keyrouter unload IFACE [--instance NAME]\n\n"
		"Detach keyrouter from IFACE and remove every pin of its instance (the maps are\n"
		"freed by the kernel once nothing uses them). Other XDP programs on IFACE stay.\n"
		"Run it in the network namespace of IFACE (`nsenter --net=/run/netns/NAME`; not\n"
		"`ip netns exec`, whose private /sys hides the pins): from another namespace it\n"
		"refuses and says how to get there. When nothing could be detached (the program\n"
		"is not on IFACE) the pins are kept if something else still holds the program\n"
		"(bpftool prog show id N), else they are removed. What an interrupted load or\n"
		"unload left (a record of a load that did not finish, pins without a record) is\n"
		"undone: keyrouter's program detached, the pins removed.\n\n"
		"When `keyrouter announce` runs for the instance, unload first asks it to\n"
		"withdraw the VIPs from BGP (a graceful drain: GRACEFUL_SHUTDOWN, then the\n"
		"withdrawal once the traffic has gone) and waits until it did, at most 40 s;\n"
		"without a running announcer it goes on at once.\n\n"
		"  -i, --instance NAME  the instance (default: the one loaded on IFACE in this\n"
		"                       network namespace)\n"
		KR_WAIT_OPT_HELP);
}

/* Instance loaded on IFINDEX in this network namespace (name into out), or -ENOENT.
 * ifindex 0: the instance loaded on an interface then named IFNAME instead. */
static int find_instance(__u32 ifindex, const char *ifname, char *out, size_t outlen)
{
	return kr_ops_instance_on(ifindex, ifname, out, outlen);
}

/* The instance's record: 0 (finished, or a load under way or interrupted: meta->magic
 * KR_OPS_META_LOADING), -ENOENT (none). */
static int read_meta(const struct kr_inst *in, struct kr_ops_meta *meta)
{
	__u32 key = 0;

	memset(meta, 0, sizeof(*meta));
	if (bpf_map_lookup_elem(in->meta_fd, &key, meta))
		return -errno;
	return kr_ops_meta_recorded(meta) ? 0 : -ENOENT;
}

static int write_meta(const struct kr_inst *in, const struct kr_ops_meta *meta)
{
	__u32 key = 0;

	if (!bpf_map_update_elem(in->meta_fd, &key, meta, BPF_ANY))
		return 0;
	pr_warn("keyrouter: couldn't record the attachment in %s/%s: %s\n", in->dir,
		KR_OPS_MAP_META, strerror(errno));
	return -errno;
}

/* Is keyrouter's XDP program id recorded by an instance (other than in) under the root? */
static bool recorded_elsewhere(const struct kr_inst *in, __u32 ifindex, __u32 prog_id)
{
	char root[256];
	struct kr_ops_meta meta;
	struct dirent *e;
	bool found = false;
	DIR *d;

	snprintf(root, sizeof(root), "%s/%s", KR_OPS_BPFFS, KR_OPS_ROOT);
	d = opendir(root);
	while (d && !found && (e = readdir(d)))
		found = e->d_name[0] != '.' && strcmp(e->d_name, in->name) &&
			!kr_ops_meta_read(e->d_name, &meta) &&
			(meta.prog_id == prog_id || (meta.ifindex == ifindex &&
						     meta.netns_ino == kr_ops_netns_ino()));
	if (d)
		closedir(d);
	return found;
}

/*
 * What an interrupted command left in instance in (locked), undone: the program detached
 * where the record says (a record of a load killed before it knew the program's id: the
 * keyrouter program on its interface), or, without a record (pins of a load that died
 * before it wrote one, by a keyrouter that wrote it last), keyrouter's XDP program on
 * ifindex that no other instance records; then every pin removed.  rec: the record or
 * NULL.  0, or -errno when the program could not be detached (the pins then stay).
 */
static int undo_leftovers(struct kr_inst *in, const struct kr_ops_meta *rec, __u32 ifindex,
			  const char *ifname)
{
	struct kr_ops_meta m = {};
	int err = 0;

	if (rec) {
		m = *rec;
	} else if (ifindex && !kr_ops_bpffs_mounted_here()) {
		m.ifindex = ifindex;
		m.mode = KR_OPS_MODE_GENERIC;	/* (libxdp detaches in whatever mode) */
		m.prog_id = kr_ops_xdp_find(ifindex);
		snprintf(m.ifname, sizeof(m.ifname), "%s", ifname);
		if (m.prog_id && recorded_elsewhere(in, ifindex, m.prog_id))
			m.prog_id = 0;
	}
	if (rec || m.prog_id)
		err = kr_ops_detach_leftover(&m);
	if (err < 0) {
		pr_warn("keyrouter: instance '%s': the program left attached to '%s' could not be "
			"detached; the pins stay in %s\n", in->name, m.ifname, in->dir);
		return err;
	}
	if (err > 0)
		pr_info("keyrouter: detached keyrouter's program%s left on '%s' by a command that "
			"did not finish\n", m.prog_id ? "" : " (kr_xdp)", m.ifname);
	return kr_ops_inst_remove(in);
}

/* The instance exists (in, locked) on load: a finished load whose program is attached is
 * an error; anything else is what an interrupted load or unload left, undone here. */
static int take_over(struct kr_inst *in, __u32 ifindex, const char *ifname)
{
	struct kr_ops_meta meta;
	enum kr_ops_attach_state st;
	char hint[320], t[32];

	if (read_meta(in, &meta)) {
		pr_info("keyrouter: removing the leftovers of an unfinished load in '%s'\n",
			in->dir);
		return undo_leftovers(in, NULL, ifindex, ifname);
	}
	if (meta.netns_ino && meta.netns_ino != kr_ops_netns_ino()) {
		kr_ops_netns_hint(meta.netns_ino, hint, sizeof(hint));
		pr_warn("keyrouter: instance '%s' is recorded on '%s' in another network namespace "
			"(net:[%u]): unload it there first: '%s keyrouter unload %s --instance %s'\n",
			in->name, meta.ifname, meta.netns_ino,
			hint[0] ? hint : "nsenter --net=<its namespace>", meta.ifname, in->name);
		return -EXDEV;
	}
	kr_ops_fmt_time(meta.loaded_ns, t, sizeof(t));
	if (meta.magic == KR_OPS_META_LOADING) {
		pr_info("keyrouter: instance '%s': the load on '%s' started %s did not finish: "
			"undoing it\n", in->name, meta.ifname, t);
		return undo_leftovers(in, &meta, ifindex, ifname);
	}
	st = kr_ops_attach_state(&meta, NULL);
	if (st == KR_ATTACHED) {
		pr_warn("keyrouter: instance '%s' is already loaded on '%s' (%s mode); "
			"'keyrouter unload %s' first, or use --instance for another "
			"interface\n", in->name, meta.ifname, kr_ops_mode_name(meta.mode),
			meta.ifname);
		return -EEXIST;
	}
	pr_info("keyrouter: instance '%s' was loaded on '%s' but its program is not attached "
		"(%s): removing what is left of it\n", in->name, meta.ifname,
		kr_ops_attach_state_name(st));
	return undo_leftovers(in, &meta, ifindex, ifname);
}

static int check_iface(const char *ifname, __u32 *ifindex)
{
	if (strlen(ifname) >= IF_NAMESIZE || !(*ifindex = if_nametoindex(ifname))) {
		pr_warn("keyrouter: no such interface '%s' (in this network namespace)\n", ifname);
		return -ENODEV;
	}
	return 0;
}

/* The instance's directory, made for this load: what an interrupted command left there is
 * undone first (take_over). */
static int prepare_dir(struct kr_inst *in, const char *instance, __u32 ifindex,
		       const char *ifname)
{
	struct stat st;
	int err;

	err = kr_ops_inst_path(in, instance, NULL);
	if (err)
		return err;
	if (stat(in->dir, &st) == 0) {
		err = kr_ops_inst_open(in, instance, NULL);
		if (err)
			return err;
		err = take_over(in, ifindex, ifname);
		kr_ops_inst_close(in);
		if (err)
			return err;
	}
	if (mkdir(KR_OPS_BPFFS "/" KR_OPS_ROOT, 0700) && errno != EEXIST)
		goto fail;
	if (mkdir(in->dir, 0700))
		goto fail;
	return kr_ops_inst_open(in, instance, NULL);
fail:
	err = -errno;
	pr_warn("keyrouter: couldn't create '%s': %s%s\n", in->dir, strerror(-err),
		kr_ops_perm_hint(-err));
	return err;
}

/* Ctrl-C (or SIGTERM, SIGHUP) while loading: the steps under way finish, then the load is
 * undone as if it had failed, so that nothing is left attached, pinned or half-applied. */
static volatile sig_atomic_t load_signal;

static void on_load_signal(int sig)
{
	load_signal = sig;
}

static const int load_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void load_signals_catch(struct sigaction *old)
{
	struct sigaction sa = { .sa_handler = on_load_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(load_signals) / sizeof(load_signals[0]); i++)
		sigaction(load_signals[i], &sa, &old[i]);
}

static void load_signals_restore(const struct sigaction *old)
{
	for (size_t i = 0; i < sizeof(load_signals) / sizeof(load_signals[0]); i++)
		sigaction(load_signals[i], &old[i], NULL);
}

static bool load_interrupted(const char *ifname)
{
	if (!load_signal)
		return false;
	pr_warn("keyrouter: load on '%s' interrupted (%s): undoing it\n", ifname,
		strsignal(load_signal));
	return true;
}

static int do_load(const char *ifname, const char *config, enum kr_ops_mode mode,
		   const char *instance, const char *obj)
{
	struct kr_ops_meta meta = {};
	struct kr_ops_attach att = {};
	struct kr_inst in = { .dir_fd = -1, .meta_fd = -1, .rings_fd = -1 };
	struct kr_ops_apply_opts apply_opts = {};
	struct kr_err perr = {};
	char other[KR_NAME_MAX];
	struct sigaction old_sa[sizeof(load_signals) / sizeof(load_signals[0])];
	struct kr_config *cfg;
	int err, attached = 0;

	if (!kr_ops_is_root()) {
		pr_warn("keyrouter: load needs root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)\n");
		return 1;
	}
	if (check_iface(ifname, &meta.ifindex) || kr_ops_bpffs_ensure(KR_OPS_BPFFS))
		return 1;
	if (access(config, R_OK)) {
		pr_warn("keyrouter: couldn't read config '%s': %s\n", config, strerror(errno));
		return 1;
	}
	cfg = kr_cli_config_load(config);
	if (!cfg)
		return 1;
	if (kr_ops_apply_precheck(cfg, &perr)) {
		pr_warn("keyrouter: %s\n", perr.msg);
		pr_warn("keyrouter: load on '%s' failed; nothing was left attached or pinned\n",
			ifname);
		kr_config_free(cfg);
		return 1;
	}
	if (!instance)
		instance = cfg->instance ? cfg->instance : KR_OPS_DEFAULT_INSTANCE;
	if (!find_instance(meta.ifindex, NULL, other, sizeof(other)) && strcmp(other, instance)) {
		struct kr_ops_meta o = {};

		kr_ops_meta_read(other, &o);
		if (o.magic == KR_OPS_META_LOADING)
			pr_warn("keyrouter: '%s' has the record of a load of instance '%s' that did "
				"not finish: 'keyrouter unload %s' undoes it\n", ifname, other,
				ifname);
		else
			pr_warn("keyrouter: '%s' already has keyrouter loaded (instance '%s'); "
				"'keyrouter unload %s' first\n", ifname, other, ifname);
		kr_config_free(cfg);
		return 1;
	}
	load_signal = 0;
	load_signals_catch(old_sa);
	err = prepare_dir(&in, instance, meta.ifindex, ifname);
	if (err || load_interrupted(ifname)) {
		if (!err) {
			kr_ops_inst_remove(&in);
			kr_ops_inst_close(&in);
			pr_warn("keyrouter: load on '%s' failed; nothing was left attached or "
				"pinned\n", ifname);
		}
		load_signals_restore(old_sa);
		kr_config_free(cfg);
		return 1;
	}
	/* The record comes first, marked as a load under way (and again with the program's id
	 * once attached): a load killed at any point leaves a record that the next load or
	 * unload of the instance, or unload of the interface, finds and undoes.  It is marked
	 * finished last. */
	meta.magic = KR_OPS_META_LOADING;
	meta.mode = mode;
	meta.netns_ino = kr_ops_netns_ino();
	meta.loaded_ns = kr_wall_ns();
	snprintf(meta.ifname, sizeof(meta.ifname), "%s", ifname);
	snprintf(meta.instance, sizeof(meta.instance), "%s", in.name);
	err = write_meta(&in, &meta);
	if (err)
		goto fail;
	err = kr_ops_attach(&att, obj, &meta);
	if (err)
		goto fail;
	attached = 1;
	kr_output_forget_held();	/* libxdp's probes: harmless once attached */
	err = write_meta(&in, &meta);
	if (err || load_interrupted(ifname))
		goto fail;
	err = kr_ops_pin_prog(&att, in.dir);
	if (!err)
		err = kr_ops_pin_maps(&att, in.dir);
	if (err || load_interrupted(ifname))
		goto fail;
	err = kr_cli_apply(&in, config, cfg, &apply_opts, false);
	if (err || load_interrupted(ifname))
		goto fail;
	meta.magic = KR_OPS_META_MAGIC;
	err = write_meta(&in, &meta);
	if (err)
		goto fail;
	load_signals_restore(old_sa);
	pr_info("keyrouter: loaded on %s (%s mode, program id %u), instance '%s', pins in %s\n",
		ifname, kr_ops_mode_name(mode), meta.prog_id, in.name, in.dir);
	kr_ops_attach_close(&att);
	kr_ops_inst_close(&in);
	kr_config_free(cfg);
	return 0;
fail:
	err = attached ? kr_ops_attach_undo(&att, &meta) : 0;
	if (err && err != -ENOENT && err != -ENODEV) {
		/* the program stays: keep the pins, so that `keyrouter unload` can reach it */
		kr_ops_attach_close(&att);
		kr_ops_inst_close(&in);
		kr_config_free(cfg);
		pr_warn("keyrouter: load on '%s' failed, and its program (id %u) could not be "
			"detached: it is still attached; the pins and the record of the unfinished "
			"load stay in %s for 'keyrouter unload %s --instance %s'\n", ifname,
			meta.prog_id, in.dir, ifname, in.name);
		load_signals_restore(old_sa);
		return 1;
	}
	kr_ops_attach_close(&att);
	kr_ops_inst_remove(&in);
	kr_ops_inst_close(&in);
	kr_config_free(cfg);
	pr_warn("keyrouter: load on '%s' failed; nothing was left attached or pinned\n", ifname);
	load_signals_restore(old_sa);
	return 1;
}

static int load_cb(void *ctx, int id, const char *arg, struct kr_err *err)
{
	(void)id;
	if (kr_ops_mode_parse(arg, ctx))
		return kr_errf(err, "bad --mode '%s': expected native, generic or tc", arg);
	return 0;
}

static void load_help(FILE *f, const void *ctx)
{
	(void)ctx;
	load_usage(f);
}

static int cmd_load(int argc, char **argv)
{
	const char *config = NULL, *instance = NULL, *obj = NULL, *wait = NULL;
	enum kr_ops_mode mode = KR_OPS_MODE_NATIVE;
	const struct kr_opt opts[] = {
		KR_OPT_STR("config", 'c', &config),
		KR_OPT_CB("mode", 'm', KR_ARG_REQUIRED, 0),
		KR_OPT_STR("instance", 'i', &instance),
		KR_OPT_STR("object", 'o', &obj),
		KR_OPT_STR("wait", 0, &wait),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .usage = load_help, .cb = load_cb, .ctx = &mode };
	int first = kr_opts_parse(argc, argv, opts, &cmd);

	if (first < 0)
		return kr_opts_status(first);
	if (first != argc - 1 || !config)
		return kr_usage_error("expected one interface and -c CONFIG");
	if (kr_lock_wait_opt(wait, -1))
		return 2;
	return do_load(argv[first], config, mode, instance, obj);
}
KR_COMMAND(load, "load", "attach to an interface, pin the maps, apply a config", cmd_load);

/* No instance here on IFNAME: say where instances with that interface name are. */
static void unload_not_here(const char *ifname)
{
	char root[256], hint[320];
	struct kr_ops_meta meta;
	struct dirent *e;
	__u32 ifindex = strlen(ifname) < IF_NAMESIZE ? if_nametoindex(ifname) : 0;
	__u32 orphan = ifindex && !kr_ops_bpffs_mounted_here() ? kr_ops_xdp_find(ifindex) : 0;
	int n = 0;
	DIR *d;

	snprintf(root, sizeof(root), "%s/%s", KR_OPS_BPFFS, KR_OPS_ROOT);
	d = opendir(root);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] != '.' && orphan && kr_ops_meta_read(e->d_name, &meta)) {
			/* keyrouter's program on IFACE, recorded nowhere, and pins without a
			 * record: what an older keyrouter's killed load left */
			pr_warn("keyrouter: keyrouter's XDP program %u is attached to '%s' and "
				"instance '%s' has pins without a record: 'keyrouter unload %s "
				"--instance %s' detaches it and removes them\n", orphan, ifname,
				e->d_name, ifname, e->d_name);
			n++;
			continue;
		}
		if (e->d_name[0] == '.' || kr_ops_meta_read(e->d_name, &meta) ||
		    strcmp(meta.ifname, ifname) || meta.netns_ino == kr_ops_netns_ino())
			continue;
		kr_ops_netns_hint(meta.netns_ino, hint, sizeof(hint));
		pr_warn("keyrouter: instance '%s' is loaded on '%s' in another network namespace: "
			"run '%s keyrouter unload %s --instance %s'\n", e->d_name, ifname,
			hint[0] ? hint : "nsenter --net=<its namespace>", ifname, e->d_name);
		n++;
	}
	if (d)
		closedir(d);
	if (!n && kr_ops_bpffs_mounted_here())
		pr_warn("keyrouter: note: no bpf filesystem was mounted at %s here (keyrouter "
			"mounted an empty one), so no pins are visible: under `ip netns exec`, "
			"which gives the command a /sys of its own, run keyrouter with `nsenter "
			"--net=/run/netns/NAME` instead\n", KR_OPS_BPFFS);
}

/* The instance's program runs in another network namespace: refuse, say how to get there. */
static int unload_other_netns(const struct kr_inst *in, const struct kr_ops_meta *meta)
{
	char hint[320];

	kr_ops_netns_hint(meta->netns_ino, hint, sizeof(hint));
	pr_warn("keyrouter: instance '%s' is attached to '%s' in another network namespace "
		"(net:[%u]; this command runs in net:[%u]): nothing detached, pins kept. Run "
		"it there: '%s keyrouter unload %s --instance %s'\n", in->name, meta->ifname,
		meta->netns_ino, kr_ops_netns_ino(), hint[0] ? hint : "nsenter --net=<its namespace>",
		meta->ifname, in->name);
	return 1;
}

/* Nothing was detached (the program is not on the interface): keep the pins if the program
 * still exists through something else than the instance's own pin (then something still
 * holds it: attached elsewhere, pinned elsewhere), else they only hold maps nothing uses.
 * The instance's pin is removed first; the kernel frees a program whose pin is removed
 * after an RCU grace period, hence the few looks. */
static bool program_held_elsewhere(const struct kr_inst *in, __u32 prog_id)
{
	char path[4096 + 64];

	snprintf(path, sizeof(path), "%s/%s", in->dir, KR_OPS_PIN_PROG);
	unlink(path);
	for (int i = 0; i < 50; i++) {
		int fd = bpf_prog_get_fd_by_id(prog_id);

		if (fd < 0)
			return errno != ENOENT;
		close(fd);
		usleep(20000);
	}
	return true;
}

/* Pins without a record of the attachment: a load that died before it wrote one (older
 * keyrouters wrote it last), or maps pinned by hand.  Undo it: keyrouter's program on
 * IFACE that no instance records is detached, the pins removed. */
static int unload_no_record(struct kr_inst *in, const char *ifname)
{
	__u32 ifindex = strlen(ifname) < IF_NAMESIZE ? if_nametoindex(ifname) : 0;

	pr_info("keyrouter: instance '%s' has pins in %s but no record of an attachment (the "
		"leftovers of a load that did not finish): removing them\n", in->name, in->dir);
	if (undo_leftovers(in, NULL, ifindex, ifname))
		return 1;
	pr_info("keyrouter: leftovers of instance '%s' removed\n", in->name);
	return 0;
}

/* A running `keyrouter announce` withdraws the VIPs (gracefully: the upstream moves the
 * traffic first) before the program goes; without one, unload goes on. */
static void withdraw_first(const struct kr_inst *in)
{
	int err = kr_announce_unload_wait(in, ANNOUNCE_WAIT_MS);

	if (!err)
		pr_info("keyrouter: the announcer withdrew every VIP of '%s'\n", in->name);
	else if (err != -ENOENT)
		pr_warn("keyrouter: the announcer did not withdraw the VIPs of '%s' (%s): "
			"unloading anyway\n", in->name, strerror(-err));
}

static int do_unload(const char *ifname, const char *instance)
{
	struct kr_inst in = { .dir_fd = -1, .meta_fd = -1, .rings_fd = -1 };
	char found[KR_NAME_MAX];
	struct kr_ops_meta meta;
	int err;

	if (!kr_ops_is_root()) {
		pr_warn("keyrouter: unload needs root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)\n");
		return 1;
	}
	if (kr_ops_bpffs_ensure(KR_OPS_BPFFS))
		return 1;
	if (!instance) {
		__u32 ifindex = strlen(ifname) < IF_NAMESIZE ? if_nametoindex(ifname) : 0;

		/* the interface's index; an interface renamed since: its name then */
		if ((!ifindex || find_instance(ifindex, NULL, found, sizeof(found))) &&
		    find_instance(0, ifname, found, sizeof(found))) {
			pr_warn("keyrouter: keyrouter is not loaded on '%s' in this network "
				"namespace (no instance under %s/%s records it)\n", ifname,
				KR_OPS_BPFFS, KR_OPS_ROOT);
			unload_not_here(ifname);
			return 1;
		}
		instance = found;
	}
	if (kr_ops_inst_open(&in, instance, NULL))
		return 1;
	if (read_meta(&in, &meta)) {
		err = unload_no_record(&in, ifname);
		kr_ops_inst_close(&in);
		return err;
	}
	if (strcmp(meta.ifname, ifname)) {
		/* the same interface under its new name (same index, this namespace)? */
		if (meta.netns_ino != kr_ops_netns_ino() || strlen(ifname) >= IF_NAMESIZE ||
		    if_nametoindex(ifname) != meta.ifindex) {
			pr_warn("keyrouter: instance '%s' is loaded on '%s', not on '%s'\n",
				in.name, meta.ifname, ifname);
			kr_ops_inst_close(&in);
			return 1;
		}
		pr_info("keyrouter: instance '%s' was loaded on '%s', now named '%s'\n", in.name,
			meta.ifname, ifname);
	}
	if (meta.netns_ino && meta.netns_ino != kr_ops_netns_ino()) {
		kr_ops_inst_close(&in);
		return unload_other_netns(&in, &meta);
	}
	if (meta.magic == KR_OPS_META_LOADING) {
		/* a load that did not finish (killed): undo what it did */
		pr_info("keyrouter: instance '%s': the load on '%s' did not finish: undoing it\n",
			in.name, meta.ifname);
		err = undo_leftovers(&in, &meta, meta.ifindex, meta.ifname);
		kr_ops_inst_close(&in);
		if (err)
			return 1;
		pr_info("keyrouter: unloaded from %s, pins in %s removed\n", ifname, in.dir);
		return 0;
	}
	withdraw_first(&in);
	err = kr_ops_detach(&meta);
	if (err == -ENOENT && program_held_elsewhere(&in, meta.prog_id)) {
		pr_warn("keyrouter: nothing was detached and program %u still exists: the pins in "
			"%s are kept (find it with 'bpftool prog show id %u')\n", meta.prog_id,
			in.dir, meta.prog_id);
		kr_ops_inst_close(&in);
		return 1;
	}
	if (err && err != -ENOENT && err != -ENODEV) {
		kr_ops_inst_close(&in);
		return 1;
	}
	err = kr_ops_inst_remove(&in);
	kr_ops_inst_close(&in);
	if (err)
		return 1;
	pr_info("keyrouter: unloaded from %s, pins in %s removed\n", ifname, in.dir);
	return 0;
}

static void unload_help(FILE *f, const void *ctx)
{
	(void)ctx;
	unload_usage(f);
}

static int cmd_unload(int argc, char **argv)
{
	const char *instance = NULL, *wait = NULL;
	const struct kr_opt opts[] = { KR_OPT_STR("instance", 'i', &instance),
				       KR_OPT_STR("wait", 0, &wait), KR_OPT_END };
	const struct kr_opts_cmd cmd = { .usage = unload_help };
	int first = kr_opts_parse(argc, argv, opts, &cmd);

	if (first < 0)
		return kr_opts_status(first);
	if (first != argc - 1)
		return kr_usage_error("expected one interface");
	if (kr_lock_wait_opt(wait, -1))
		return 2;
	return do_unload(argv[first], instance);
}
KR_COMMAND(unload, "unload", "detach from an interface and remove the pins", cmd_unload);
