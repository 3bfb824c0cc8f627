// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Attaching the keyrouter program: XDP through libxdp (a multi-program dispatcher, so
 * other XDP programs keep running beside it), TC through a clsact qdisc (ingress).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "log.h"
#include "ops.h"
#include "ops_attach.h"
#include "ops_xdp.h"
#include "util.h"
#include "keyrouter.skel.h"

#define KR_OPS_TC_HANDLE	0x4b52u
#define KR_OPS_TC_PRIO		0x4b52u

int kr_ops_mode_parse(const char *s, enum kr_ops_mode *mode)
{
	if (!strcmp(s, "native"))
		*mode = KR_OPS_MODE_NATIVE;
	else if (!strcmp(s, "generic") || !strcmp(s, "skb"))
		*mode = KR_OPS_MODE_GENERIC;
	else if (!strcmp(s, "tc"))
		*mode = KR_OPS_MODE_TC;
	else
		return -EINVAL;
	return 0;
}

const char *kr_ops_mode_name(__u32 mode)
{
	switch (mode) {
	case KR_OPS_MODE_NATIVE: return "native";
	case KR_OPS_MODE_GENERIC: return "generic";
	case KR_OPS_MODE_TC: return "tc";
	default: return "?";
	}
}

static struct bpf_program *find_prog(struct bpf_object *obj, enum bpf_prog_type type)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj)
		if (bpf_program__type(p) == type)
			return p;
	return NULL;
}

/* Only the program of the chosen mode is loaded. */
struct bpf_program *kr_ops_select_prog(struct bpf_object *obj, enum kr_ops_mode mode)
{
	enum bpf_prog_type want = mode == KR_OPS_MODE_TC ? BPF_PROG_TYPE_SCHED_CLS :
							    BPF_PROG_TYPE_XDP;
	struct bpf_program *sel = find_prog(obj, want), *p;

	if (!sel)
		return NULL;
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == sel);
	return sel;
}

/* The attach failed with EBUSY: a program attached without libxdp's dispatcher (ip link,
 * bpftool) is on the interface, and libxdp does not replace it.  Name it, say the ways out. */
static void busy_hint(const struct kr_ops_meta *meta)
{
	struct xdp_multiprog *mp = kr_ops_xdp_multiprog(meta->ifindex);
	struct xdp_program *p;

	if (libxdp_get_error(mp))
		return;
	p = xdp_multiprog__is_legacy(mp) ? xdp_multiprog__main_prog(mp) : NULL;
	if (p && !strcmp(xdp_program__name(p), "kr_xdp"))
		/* keyrouter itself (libxdp attaches it directly when the dispatcher cannot be
		 * loaded), with pins this command cannot see, e.g. under `ip netns exec` */
		pr_warn("keyrouter: '%s' already runs keyrouter's XDP program %u (kr_xdp): one "
			"instance per interface. 'keyrouter status' lists the instances (under `ip "
			"netns exec`, whose /sys hides the pins, run keyrouter with `nsenter "
			"--net=/run/netns/NAME`)\n", meta->ifname, xdp_program__id(p));
	else if (p)
		pr_warn("keyrouter: '%s' already runs XDP program %u ('%s'), attached without "
			"libxdp's dispatcher (ip link, bpftool), which libxdp does not replace: "
			"detach it ('ip link set dev %s %s off'), load it with xdp-loader so that "
			"both run, or load keyrouter with --mode tc\n", meta->ifname,
			xdp_program__id(p), xdp_program__name(p), meta->ifname,
			xdp_multiprog__attach_mode(mp) == XDP_MODE_SKB ? "xdpgeneric" : "xdp");
	xdp_multiprog__close(mp);
}

static int attach_xdp(struct kr_ops_attach *a, struct bpf_program *prog,
		      struct kr_ops_meta *meta)
{
	enum xdp_attach_mode xm = meta->mode == KR_OPS_MODE_NATIVE ? XDP_MODE_NATIVE :
								       XDP_MODE_SKB;
	char msg[256];
	int err;

	a->xdp = xdp_program__from_bpf_obj(a->obj, bpf_program__section_name(prog));
	err = libxdp_get_error(a->xdp);
	if (err) {
		a->xdp = NULL;
		libxdp_strerror(err, msg, sizeof(msg));
		pr_warn("keyrouter: couldn't prepare the XDP program: %s\n", msg);
		return err;
	}
	err = xdp_program__attach(a->xdp, meta->ifindex, xm, 0);
	if (err) {
		libxdp_strerror(err, msg, sizeof(msg));
		pr_warn("keyrouter: couldn't attach XDP (%s mode) to '%s': %s%s\n",
			kr_ops_mode_name(meta->mode), meta->ifname, msg, kr_ops_perm_hint(-err));
		if (err == -EBUSY)
			busy_hint(meta);
		if (err == -EOPNOTSUPP && meta->mode == KR_OPS_MODE_NATIVE)
			pr_warn("keyrouter: the driver of '%s' has no native XDP: load with "
				"--mode generic (XDP in the stack, any driver) or --mode tc (a TC "
				"ingress filter)\n", meta->ifname);
		return err;
	}
	meta->prog_id = xdp_program__id(a->xdp);
	a->prog_fd = xdp_program__fd(a->xdp);
	return 0;
}

static int attach_tc(struct kr_ops_attach *a, struct bpf_program *prog,
		     struct kr_ops_meta *meta)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = meta->ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = KR_OPS_TC_HANDLE, .priority = KR_OPS_TC_PRIO);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int err;

	err = bpf_object__load(a->obj);
	if (err) {
		pr_warn("keyrouter: couldn't load the BPF object: %s%s\n", strerror(-err),
			kr_ops_perm_hint(-err));
		return err;
	}
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		pr_warn("keyrouter: couldn't create the clsact qdisc on '%s': %s%s\n",
			meta->ifname, strerror(-err), kr_ops_perm_hint(-err));
		return err;
	}
	meta->tc_made_qdisc = err == 0;
	opts.prog_fd = bpf_program__fd(prog);
	err = bpf_tc_attach(&hook, &opts);
	if (err) {
		pr_warn("keyrouter: couldn't attach the TC program to '%s' ingress: %s%s\n",
			meta->ifname, strerror(-err),
			err == -EEXIST ? " (a keyrouter filter is already there)" : "");
		if (meta->tc_made_qdisc) {
			hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			bpf_tc_hook_destroy(&hook);
		}
		return err;
	}
	meta->tc_handle = opts.handle;
	meta->tc_priority = opts.priority;
	a->prog_fd = bpf_program__fd(prog);
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		meta->prog_id = info.id;
	return 0;
}

/* The object embedded in the tool (the skeleton's bytes), or the file the user names.  Both
 * under the skeleton's object name: the names of the internal maps (.bss, .rodata: pinned
 * as keyroute_bss, keyroute_rodata) do not depend on the file's name, so that `upgrade`
 * finds the pins of a program loaded from another file. */
struct bpf_object *kr_ops_object_open(const char *obj_path)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "keyrouter_bpf");
	const void *bytes;
	size_t size;

	if (obj_path)
		return bpf_object__open_file(obj_path, &opts);
	bytes = keyrouter_bpf__elf_bytes(&size);
	return bpf_object__open_mem(bytes, size, &opts);
}

int kr_ops_attach(struct kr_ops_attach *a, const char *obj_path, struct kr_ops_meta *meta)
{
	struct bpf_program *prog;
	int err;

	memset(a, 0, sizeof(*a));
	a->prog_fd = -1;
	a->obj = kr_ops_object_open(obj_path);
	if (!a->obj) {
		err = -errno;
		a->obj = NULL;
		pr_warn("keyrouter: couldn't open the BPF object '%s': %s\n",
			obj_path ? obj_path : "(built in)", strerror(-err));
		return err;
	}
	prog = kr_ops_select_prog(a->obj, meta->mode);
	if (!prog) {
		pr_warn("keyrouter: the BPF object '%s' has no %s program\n",
			obj_path ? obj_path : "(built in)",
			meta->mode == KR_OPS_MODE_TC ? "TC (SEC(\"tc\"))" : "XDP (SEC(\"xdp\"))");
		return -ENOENT;
	}
	err = meta->mode == KR_OPS_MODE_TC ? attach_tc(a, prog, meta) : attach_xdp(a, prog, meta);
	if (err)
		return err;
	meta->loaded_ns = kr_wall_ns();
	return 0;
}

static int pin_path(char *buf, size_t len, const char *dir)
{
	int n = snprintf(buf, len, "%s/%s", dir, KR_OPS_PIN_PROG);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int kr_ops_pin_prog_fd(const char *dir, int fd, bool replace)
{
	char path[4096 + 64];
	int err = pin_path(path, sizeof(path), dir);

	if (!err && fd < 0)
		err = -EBADF;
	if (!err && replace && unlink(path) && errno != ENOENT)
		err = -errno;
	if (!err && bpf_obj_pin(fd, path))
		err = -errno;
	if (err)
		pr_warn("keyrouter: couldn't pin the program as '%s': %s\n", path, strerror(-err));
	return err;
}

int kr_ops_pin_prog(struct kr_ops_attach *a, const char *dir)
{
	return kr_ops_pin_prog_fd(dir, a->prog_fd, false);
}

int kr_ops_pin_maps(struct kr_ops_attach *a, const char *dir)
{
	int err = bpf_object__pin_maps(a->obj, dir);

	if (err)
		pr_warn("keyrouter: couldn't pin the maps in '%s': %s\n", dir, strerror(-err));
	return err;
}

void kr_ops_attach_close(struct kr_ops_attach *a)
{
	if (a->xdp)
		xdp_program__close(a->xdp);	/* does not close an object it was given */
	if (a->obj)
		bpf_object__close(a->obj);
	memset(a, 0, sizeof(*a));
}

/* meta's program, or (prog_id 0: a load killed before it recorded the id) keyrouter's */
static bool is_ours(struct xdp_program *p, const struct kr_ops_meta *meta)
{
	return meta->prog_id ? xdp_program__id(p) == meta->prog_id :
			       !strcmp(xdp_program__name(p), "kr_xdp");
}

/* quiet: nothing there is no error to report (-ENOENT, no message) */
static int detach_xdp(const struct kr_ops_meta *meta, bool quiet)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p;
	int err = -ENOENT;

	mp = kr_ops_xdp_multiprog(meta->ifindex);
	if (libxdp_get_error(mp)) {
		if (!quiet)
			pr_warn("keyrouter: no XDP program on '%s' (already detached?)\n",
				meta->ifname);
		return -ENOENT;
	}
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		if (p && is_ours(p, meta))
			err = xdp_multiprog__detach(mp);
		goto out;
	}
	for (p = xdp_multiprog__next_prog(NULL, mp); p; p = xdp_multiprog__next_prog(p, mp)) {
		if (!is_ours(p, meta))
			continue;
		err = xdp_program__detach(p, meta->ifindex, xdp_multiprog__attach_mode(mp), 0);
		break;
	}
out:
	if (err == -ENOENT && !quiet)
		pr_warn("keyrouter: keyrouter's XDP program (id %u) is not attached to '%s' "
			"any more\n", meta->prog_id, meta->ifname);
	else if (err && err != -ENOENT)
		pr_warn("keyrouter: couldn't detach XDP from '%s': %s\n", meta->ifname,
			strerror(-err));
	xdp_multiprog__close(mp);
	return err;
}

static int detach_tc(const struct kr_ops_meta *meta, bool quiet)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = meta->ifindex, .attach_point = BPF_TC_INGRESS);
	/* (no handle on record: a load killed before it recorded it; keyrouter's is fixed) */
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = meta->tc_handle ? meta->tc_handle : KR_OPS_TC_HANDLE,
		    .priority = meta->tc_priority ? meta->tc_priority : KR_OPS_TC_PRIO);
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = opts.handle, .priority = opts.priority);
	int err;

	err = quiet && bpf_tc_query(&hook, &q) ? -ENOENT : bpf_tc_detach(&hook, &opts);
	if (err && !(quiet && err == -ENOENT))
		pr_warn("keyrouter: couldn't detach the TC program from '%s': %s\n",
			meta->ifname, strerror(-err));
	if (meta->tc_made_qdisc) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
	return err;
}

int kr_ops_detach(const struct kr_ops_meta *meta)
{
	char name[IF_NAMESIZE];

	if (!if_indextoname(meta->ifindex, name)) {
		pr_warn("keyrouter: interface '%s' (index %u) is gone; only the pins are removed\n",
			meta->ifname, meta->ifindex);
		return -ENODEV;
	}
	return meta->mode == KR_OPS_MODE_TC ? detach_tc(meta, false) : detach_xdp(meta, false);
}

int kr_ops_detach_leftover(const struct kr_ops_meta *meta)
{
	char name[IF_NAMESIZE];
	int err;

	if (!if_indextoname(meta->ifindex, name))
		return 0;
	err = meta->mode == KR_OPS_MODE_TC ? detach_tc(meta, true) : detach_xdp(meta, true);
	return err == -ENOENT ? 0 : err ? err : 1;
}

int kr_ops_attach_undo(struct kr_ops_attach *a, const struct kr_ops_meta *meta)
{
	enum xdp_attach_mode xm = meta->mode == KR_OPS_MODE_NATIVE ? XDP_MODE_NATIVE :
								       XDP_MODE_SKB;

	/* The handle load still holds detaches without looking the program up by id (which
	 * needs more privilege than attaching did). */
	if (meta->mode != KR_OPS_MODE_TC && a->xdp &&
	    !xdp_program__detach(a->xdp, meta->ifindex, xm, 0))
		return 0;
	return kr_ops_detach(meta);
}

static int reattach_xdp(int fd, struct kr_ops_meta *meta)
{
	enum xdp_attach_mode xm = meta->mode == KR_OPS_MODE_NATIVE ? XDP_MODE_NATIVE :
								       XDP_MODE_SKB;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct xdp_program *p;
	char msg[256];
	int err;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	/* from our fd, not by id: libxdp before 1.4.1 leaks the fd it gets by id (ops_xdp.h) */
	p = xdp_program__from_fd(fd);
	err = libxdp_get_error(p);
	if (!err)
		err = xdp_program__attach(p, meta->ifindex, xm, 0);
	if (err) {
		libxdp_strerror(err, msg, sizeof(msg));
		pr_warn("keyrouter: couldn't attach program %u (XDP, %s mode) to '%s' again: %s\n",
			info.id, kr_ops_mode_name(meta->mode), meta->ifname, msg);
	} else {
		meta->prog_id = info.id;
	}
	if (!libxdp_get_error(p))
		xdp_program__close(p);
	return err;
}

static int reattach_tc(int fd, struct kr_ops_meta *meta)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = meta->ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = KR_OPS_TC_HANDLE, .priority = KR_OPS_TC_PRIO,
		    .prog_fd = fd);
	int err = bpf_tc_hook_create(&hook);

	if (err && err != -EEXIST) {
		pr_warn("keyrouter: couldn't create the clsact qdisc on '%s': %s\n", meta->ifname,
			strerror(-err));
		return err;
	}
	meta->tc_made_qdisc |= err == 0;
	err = bpf_tc_attach(&hook, &opts);
	if (err) {
		pr_warn("keyrouter: couldn't attach the TC program to '%s' ingress again: %s\n",
			meta->ifname, strerror(-err));
		return err;
	}
	meta->tc_handle = opts.handle;
	meta->tc_priority = opts.priority;
	return 0;
}

int kr_ops_reattach(const char *dir, struct kr_ops_meta *meta)
{
	char path[4096 + 64];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd, err = pin_path(path, sizeof(path), dir);

	if (err)
		return err;
	fd = bpf_obj_get(path);
	if (fd < 0) {
		err = -errno;
		pr_warn("keyrouter: the instance's program is not pinned ('%s': %s): it was loaded "
			"by a keyrouter that did not pin it, or the pin was removed%s\n", path,
			strerror(-err), kr_ops_perm_hint(-err));
		return err;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    info.type != (meta->mode == KR_OPS_MODE_TC ? BPF_PROG_TYPE_SCHED_CLS :
							BPF_PROG_TYPE_XDP)) {
		pr_warn("keyrouter: '%s' is not the instance's %s program\n", path,
			meta->mode == KR_OPS_MODE_TC ? "TC" : "XDP");
		close(fd);
		return -EINVAL;
	}
	err = meta->mode == KR_OPS_MODE_TC ? reattach_tc(fd, meta) : reattach_xdp(fd, meta);
	if (!err)
		meta->prog_id = info.id;
	close(fd);
	return err;
}
