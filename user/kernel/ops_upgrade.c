// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * In-place upgrade (ops_upgrade.h).  The order makes every step before the swap harmless to
 * the running program, and the swap one kernel operation:
 *   1. what runs now: the program on the hook must be the recorded one, or one that uses
 *      this instance's maps (an upgrade interrupted after its swap: completed now)
 *   2. open the new object; every map of it with a pin of the same name is compared with
 *      the pinned map (type, key, value, max_entries, flags, and the BTF shape of the value
 *      when both have BTF) and reused as it is (bpf_map__reuse_fd); a difference refuses
 *      the upgrade; the build's constants (.rodata, .kconfig) are never reused (they are
 *      the new build's); maps without a pin are new in this build
 *   3. load (the verifier sees the reused maps), pin the maps new in this build
 *   4. swap: XDP_FLAGS_REPLACE with the running program as old_prog_fd (the kernel refuses
 *      when something else replaced it meanwhile), or a TC filter replace of the same
 *      handle and priority
 *   5. record the new program id in kr_ops_meta, re-pin the new constants map
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "log.h"
#include "ops.h"
#include "ops_attach.h"
#include "ops_find.h"
#include "ops_xdp.h"
#include "ops_upgrade.h"

#define MAX_MAPS	64

/* The differences found, one line each, for the refusal. */
struct diffs {
	char buf[4096];
	size_t len;
	int n;
};

static void __attribute__((format(printf, 2, 3))) diff_add(struct diffs *d, const char *fmt, ...)
{
	va_list ap;
	int r;

	d->n++;
	if (d->len >= sizeof(d->buf) - 1)
		return;
	va_start(ap, fmt);
	r = vsnprintf(d->buf + d->len, sizeof(d->buf) - d->len, fmt, ap);
	va_end(ap);
	if (r > 0)
		d->len = d->len + r < sizeof(d->buf) ? d->len + r : sizeof(d->buf) - 1;
}

/* The pin name libbpf gives a map (bpf_object__pin_maps: '.' becomes '_'). */
static void pin_name(const struct bpf_map *m, char *out, size_t len)
{
	snprintf(out, len, "%s", bpf_map__name(m));
	for (char *p = out; *p; p++)
		if (*p == '.')
			*p = '_';
}

/* The build's constants: frozen at load with the new build's values, never taken over. */
static bool is_constants(const struct bpf_map *m)
{
	const char *n = bpf_map__name(m);

	return bpf_map__is_internal(m) && (strstr(n, ".rodata") || strstr(n, ".kconfig"));
}

static const char *kind_name(const struct btf_type *t)
{
	static const char *const names[] = { "?", "int", "pointer", "array", "struct", "union",
		"enum", "fwd", "typedef", "volatile", "const", "restrict", "func", "func_proto",
		"var", "datasec", "float", "decl_tag", "type_tag", "enum64" };
	unsigned k = btf_kind(t);

	return k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

/* Same shape: kind and size, and for a struct/union the members' names (a pinned `pad*`
 * member may carry a name now), offsets and sizes,
 * for a data section (.bss) the variables' names, offsets and sizes.  A difference goes to
 * why ("" when the same). */
static void btf_shape_cmp(const struct btf *a, __u32 ia, const struct btf *b, __u32 ib,
			  char *why, size_t len)
{
	const struct btf_type *ta, *tb;
	__s64 sa, sb;

	why[0] = 0;
	ia = btf__resolve_type(a, ia) < 0 ? ia : (__u32)btf__resolve_type(a, ia);
	ib = btf__resolve_type(b, ib) < 0 ? ib : (__u32)btf__resolve_type(b, ib);
	ta = btf__type_by_id(a, ia);
	tb = btf__type_by_id(b, ib);
	if (!ta || !tb)
		return;
	sa = btf__resolve_size(a, ia);
	sb = btf__resolve_size(b, ib);
	if (btf_kind(ta) != btf_kind(tb) || sa != sb) {
		snprintf(why, len, "value type %s %s (%lld bytes), pinned %s %s (%lld bytes)",
			 kind_name(tb), btf__name_by_offset(b, tb->name_off), (long long)sb,
			 kind_name(ta), btf__name_by_offset(a, ta->name_off), (long long)sa);
		return;
	}
	if (btf_vlen(ta) != btf_vlen(tb) && (btf_is_composite(ta) || btf_is_datasec(ta))) {
		snprintf(why, len, "value type %s: %u members, pinned %u",
			 btf__name_by_offset(b, tb->name_off), btf_vlen(tb), btf_vlen(ta));
		return;
	}
	for (__u16 i = 0; btf_is_composite(ta) && i < btf_vlen(ta); i++) {
		const struct btf_member *ma = btf_members(ta) + i, *mb = btf_members(tb) + i;
		const char *na = btf__name_by_offset(a, ma->name_off);
		const char *nb = btf__name_by_offset(b, mb->name_off);

		/* a pinned padding member may have become a field of the same place and size
		 * (kr_backend.pad -> spill): its pinned content is zero, the field's "none" */
		bool pad_named = !strncmp(na, "pad", 3) && strcmp(nb, na);

		if ((strcmp(na, nb) && !pad_named) || ma->offset != mb->offset ||
		    btf__resolve_size(a, ma->type) != btf__resolve_size(b, mb->type)) {
			snprintf(why, len, "value type %s: member %u is '%s' (bit %u, %lld bytes), "
				 "pinned '%s' (bit %u, %lld bytes)",
				 btf__name_by_offset(b, tb->name_off), i, nb, mb->offset,
				 (long long)btf__resolve_size(b, mb->type), na, ma->offset,
				 (long long)btf__resolve_size(a, ma->type));
			return;
		}
	}
	for (__u16 i = 0; btf_is_datasec(ta) && i < btf_vlen(ta); i++) {
		const struct btf_var_secinfo *va = btf_var_secinfos(ta) + i;
		const struct btf_var_secinfo *vb = btf_var_secinfos(tb) + i;
		const struct btf_type *xa = btf__type_by_id(a, va->type);
		const struct btf_type *xb = btf__type_by_id(b, vb->type);
		const char *na = xa ? btf__name_by_offset(a, xa->name_off) : "?";
		const char *nb = xb ? btf__name_by_offset(b, xb->name_off) : "?";

		if (strcmp(na, nb) || va->offset != vb->offset || va->size != vb->size) {
			snprintf(why, len, "variable %u is '%s' (offset %u, %u bytes), pinned '%s' "
				 "(offset %u, %u bytes)", i, nb, vb->offset, vb->size, na,
				 va->offset, va->size);
			return;
		}
	}
}

/* Compare the new object's map M with the pinned map FD (INFO); differences into D. */
static void map_cmp(struct bpf_object *obj, const struct bpf_map *m,
		    const struct bpf_map_info *info, struct diffs *d)
{
	const char *name = bpf_map__name(m);
	char why[512];
	struct btf *old;

	if (bpf_map__type(m) != info->type)
		diff_add(d, "  %s: type %s, pinned %s\n", name,
			 libbpf_bpf_map_type_str(bpf_map__type(m)),
			 libbpf_bpf_map_type_str(info->type));
	if (bpf_map__key_size(m) != info->key_size)
		diff_add(d, "  %s: key size %u, pinned %u\n", name, bpf_map__key_size(m),
			 info->key_size);
	if (bpf_map__value_size(m) != info->value_size)
		diff_add(d, "  %s: value size %u, pinned %u\n", name, bpf_map__value_size(m),
			 info->value_size);
	if (bpf_map__max_entries(m) != info->max_entries)
		diff_add(d, "  %s: max_entries %u, pinned %u\n", name, bpf_map__max_entries(m),
			 info->max_entries);
	if (bpf_map__map_flags(m) != info->map_flags)
		diff_add(d, "  %s: flags 0x%x, pinned 0x%x\n", name, bpf_map__map_flags(m),
			 info->map_flags);
	if (!info->btf_id || !info->btf_value_type_id || !bpf_map__btf_value_type_id(m) ||
	    !bpf_object__btf(obj))
		return;
	old = btf__load_from_kernel_by_id(info->btf_id);
	if (!old)
		return;		/* no BTF to compare: the sizes above decide */
	btf_shape_cmp(old, info->btf_value_type_id, bpf_object__btf(obj),
		      bpf_map__btf_value_type_id(m), why, sizeof(why));
	if (why[0])
		diff_add(d, "  %s: %s\n", name, why);
	btf__free(old);
}

/* Reuse every compatible pinned map; new[i] = map i has no pin (or is a constants map). */
static int take_maps(const struct kr_inst *in, struct bpf_object *obj, bool *isnew,
		     struct kr_ops_upgrade_report *rep, struct diffs *d)
{
	struct bpf_map *m;
	char pn[64];
	int i = 0, err = 0;

	bpf_object__for_each_map(m, obj) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int fd;

		if (i >= MAX_MAPS) {
			pr_warn("keyrouter: the new object has more than %d maps\n", MAX_MAPS);
			return -E2BIG;
		}
		isnew[i] = true;
		pin_name(m, pn, sizeof(pn));
		if (is_constants(m)) {
			rep->fresh++;
			i++;
			continue;
		}
		fd = kr_ops_map_open(in, pn, true);
		if (fd == -ENOENT) {
			rep->created++;
			i++;
			continue;
		}
		if (fd < 0)
			return kr_ops_map_open(in, pn, false);	/* says why */
		if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
			err = -errno;
			pr_warn("keyrouter: couldn't read pinned map '%s/%s': %s\n", in->dir, pn,
				strerror(-err));
			close(fd);
			return err;
		}
		map_cmp(obj, m, &info, d);
		if (!d->n && (err = bpf_map__reuse_fd(m, fd))) {
			pr_warn("keyrouter: couldn't reuse pinned map '%s/%s': %s\n", in->dir, pn,
				strerror(-err));
			close(fd);
			return err;
		}
		close(fd);
		isnew[i++] = false;
		rep->reused++;
	}
	return 0;
}

static bool prog_uses_map(__u32 prog_id, __u32 map_id)
{
	__u32 ids[MAX_MAPS], len;
	struct bpf_prog_info info;
	bool found = false;
	int fd = bpf_prog_get_fd_by_id(prog_id);

	if (fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = MAX_MAPS;
	info.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(info);
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		for (__u32 i = 0; i < info.nr_map_ids && i < MAX_MAPS; i++)
			found |= ids[i] == map_id;
	close(fd);
	return found;
}

/* The program on the instance's hook now (*id), and for XDP the attach mode (*xmode). */
static int running_prog(const struct kr_ops_meta *meta, __u32 *id, enum xdp_attach_mode *xmode)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p;
	int err = 0;

	*id = 0;
	if (meta->mode == KR_OPS_MODE_TC) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = meta->ifindex,
			    .attach_point = BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = meta->tc_handle,
			    .priority = meta->tc_priority);

		if (bpf_tc_query(&hook, &opts))
			return -ENOENT;
		*id = opts.prog_id;
		return 0;
	}
	mp = kr_ops_xdp_multiprog(meta->ifindex);
	if (libxdp_get_error(mp) || !mp)
		return -ENOENT;
	*xmode = xdp_multiprog__attach_mode(mp);
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		*id = p ? xdp_program__id(p) : 0;
		err = *id ? 0 : -ENOENT;
	} else {
		err = -ENOENT;
		for (p = xdp_multiprog__next_prog(NULL, mp); p; p = xdp_multiprog__next_prog(p, mp))
			if (xdp_program__id(p) == meta->prog_id)
				err = -EOPNOTSUPP;
	}
	xdp_multiprog__close(mp);
	return err;
}

/* The program on the hook is this instance's (0), or why not. */
static int check_running(const struct kr_inst *in, const struct kr_ops_meta *meta, __u32 cur,
			 int err, struct kr_ops_upgrade_report *rep)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd;

	if (err == -EOPNOTSUPP) {
		pr_warn("keyrouter: instance '%s' runs as a component of libxdp's dispatcher on "
			"'%s', which cannot replace one component atomically: no in-place upgrade "
			"(nothing changed). Unload and load it again to take the new program (its "
			"maps and counters start afresh)\n", in->name, meta->ifname);
		return err;
	}
	if (!err && cur == meta->prog_id)
		return 0;
	fd = kr_ops_map_open(in, KR_MAP_COUNTERS, true);
	if (!err && fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) &&
	    prog_uses_map(cur, info.id)) {
		close(fd);
		pr_info("keyrouter: the program on '%s' (id %u) is not the recorded one (%u) but "
			"uses this instance's maps: an upgrade that did not finish; completing it\n",
			meta->ifname, cur, meta->prog_id);
		rep->recovered = true;
		return 0;
	}
	if (fd >= 0)
		close(fd);
	pr_warn("keyrouter: instance '%s': its program (id %u) is not attached to '%s' %s: "
		"nothing to upgrade in place (nothing changed). 'keyrouter status --instance %s' "
		"shows the state; 'keyrouter apply' attaches the pinned program again (then "
		"upgrade it), 'keyrouter load' a new one\n",
		in->name, meta->prog_id, meta->ifname,
		err ? "(no keyrouter program there)" : "(another program is)", in->name);
	return -ESRCH;
}

static int swap_prog(const struct kr_ops_meta *meta, __u32 cur, int new_fd,
		     enum xdp_attach_mode xmode)
{
	int old_fd, err;

	if (meta->mode == KR_OPS_MODE_TC) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = meta->ifindex,
			    .attach_point = BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = meta->tc_handle,
			    .priority = meta->tc_priority, .prog_fd = new_fd,
			    .flags = BPF_TC_F_REPLACE);

		err = bpf_tc_attach(&hook, &opts);
		if (err)
			pr_warn("keyrouter: couldn't replace the TC filter on '%s' (handle 0x%x, "
				"priority %u): %s; the old program stays\n", meta->ifname,
				meta->tc_handle, meta->tc_priority, strerror(-err));
		return err;
	}
	old_fd = bpf_prog_get_fd_by_id(cur);
	if (old_fd < 0) {
		err = -errno;
		pr_warn("keyrouter: couldn't open the running program %u: %s%s\n", cur,
			strerror(-err), kr_ops_perm_hint(-err));
		return err;
	}
	{
		LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = old_fd);
		__u32 flags = XDP_FLAGS_REPLACE | (xmode == XDP_MODE_SKB ? XDP_FLAGS_SKB_MODE :
						   xmode == XDP_MODE_HW ? XDP_FLAGS_HW_MODE :
									  XDP_FLAGS_DRV_MODE);

		err = bpf_xdp_attach(meta->ifindex, new_fd, flags, &opts);
	}
	close(old_fd);
	if (err)
		pr_warn("keyrouter: couldn't replace the XDP program on '%s': %s%s; the old "
			"program stays\n", meta->ifname, strerror(-err),
			err == -EEXIST ? " (another program replaced it meanwhile)" : "");
	return err;
}

/* Pin the new object's map M as NAME (replace: over the old pin, which bpffs does not let a
 * rename replace: unlinked first; nothing reads the constants' pin while it is missing). */
static int pin_as(const struct kr_inst *in, const struct bpf_map *m, const char *name,
		  bool replace)
{
	char path[4096 + 80];
	int err = 0;

	snprintf(path, sizeof(path), "%s/%s", in->dir, name);
	if (replace && unlink(path) && errno != ENOENT)
		err = -errno;
	else if (bpf_obj_pin(bpf_map__fd(m), path))
		err = -errno;
	if (err)
		pr_warn("keyrouter: couldn't pin map '%s': %s\n", path, strerror(-err));
	return err;
}

static void prog_tag(int fd, __u32 id, char *out)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int own = fd < 0 ? bpf_prog_get_fd_by_id(id) : -1;

	out[0] = 0;
	if (!bpf_obj_get_info_by_fd(fd < 0 ? own : fd, &info, &len))
		for (int i = 0; i < 8; i++)
			sprintf(out + 2 * i, "%02x", info.tag[i]);
	if (own >= 0)
		close(own);
}

static int record(const struct kr_inst *in, const struct kr_ops_meta *meta)
{
	__u32 key = 0;
	int err = 0;

	if (bpf_map_update_elem(in->meta_fd, &key, meta, BPF_EXIST)) {
		err = -errno;
		pr_warn("keyrouter: the new program runs, but its id couldn't be recorded in "
			"'%s/%s': %s; run the upgrade again to record it\n", in->dir,
			KR_OPS_MAP_META, strerror(-err));
	}
	return err;
}

int kr_ops_upgrade(const struct kr_inst *in, const char *obj_path, struct kr_ops_meta *meta,
		   struct kr_ops_upgrade_report *rep)
{
	const char *what = obj_path ? obj_path : "(built in)";
	enum xdp_attach_mode xmode = XDP_MODE_UNSPEC;
	bool isnew[MAX_MAPS] = {};
	struct diffs d = { .len = 0 };
	struct bpf_object *obj = NULL;
	struct bpf_program *prog;
	struct bpf_prog_info pinfo = {};
	__u32 cur, plen = sizeof(pinfo);
	struct bpf_map *m;
	char pn[64];
	int err, i;

	memset(rep, 0, sizeof(*rep));
	rep->old_prog_id = meta->prog_id;
	err = running_prog(meta, &cur, &xmode);
	err = check_running(in, meta, cur, err, rep);
	if (err)
		return err;
	prog_tag(-1, cur, rep->old_tag);
	rep->old_prog_id = cur;
	obj = kr_ops_object_open(obj_path);
	if (!obj) {
		err = -errno;
		pr_warn("keyrouter: couldn't open the BPF object '%s': %s\n", what, strerror(-err));
		return err;
	}
	prog = kr_ops_select_prog(obj, meta->mode);
	if (!prog) {
		pr_warn("keyrouter: the BPF object '%s' has no %s program\n", what,
			meta->mode == KR_OPS_MODE_TC ? "TC (SEC(\"tc\"))" : "XDP (SEC(\"xdp\"))");
		err = -ENOENT;
		goto out;
	}
	err = take_maps(in, obj, isnew, rep, &d);
	if (err)
		goto out;
	if (d.n) {
		pr_warn("keyrouter: upgrade of instance '%s' to '%s' refused: %d of its maps differ "
			"from the pinned ones the running program uses:\n%s"
			"keyrouter: nothing was changed: the running program (id %u) keeps routing "
			"with its maps. The new build cannot take over these maps: keep the build "
			"that matches them, or give up the state (counters, health states, "
			"migrations, backend ids) and load afresh: 'keyrouter unload %s --instance "
			"%s', then 'keyrouter load %s -c CONFIG --instance %s'\n", in->name, what,
			d.n, d.buf, cur, meta->ifname, in->name, meta->ifname, in->name);
		err = -EINVAL;
		goto out;
	}
	err = bpf_object__load(obj);
	if (err) {
		pr_warn("keyrouter: couldn't load the new program of '%s': %s%s; nothing was "
			"changed\n", what, strerror(-err), kr_ops_perm_hint(-err));
		goto out;
	}
	i = 0;
	bpf_object__for_each_map(m, obj) {
		pin_name(m, pn, sizeof(pn));
		if (isnew[i++] && !is_constants(m) && (err = pin_as(in, m, pn, false)))
			goto out;
	}
	err = swap_prog(meta, cur, bpf_program__fd(prog), xmode);
	if (err)
		goto out;
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &pinfo, &plen))
		meta->prog_id = pinfo.id;
	rep->new_prog_id = meta->prog_id;
	prog_tag(bpf_program__fd(prog), 0, rep->new_tag);
	err = record(in, meta);
	/* the instance's pin of its program (apply attaches it again when it was detached):
	 * the new one from now on, and the old one freed */
	err = kr_ops_pin_prog_fd(in->dir, bpf_program__fd(prog), true) ? : err;
	i = 0;
	bpf_object__for_each_map(m, obj) {
		pin_name(m, pn, sizeof(pn));
		if (is_constants(m) && isnew[i])
			err = pin_as(in, m, pn, true) ? : err;
		i++;
	}
out:
	bpf_object__close(obj);
	return err;
}
