// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Attachment checks, programs in this network namespace, other namespaces (ops_find.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "log.h"
#include "ops_find.h"
#include "ops_xdp.h"

/* Is program id on the XDP hook of ifindex (alone or as a dispatcher component)?  Also
 * reports (when name) whether a program named name is there, into *found_id. */
static bool xdp_has(__u32 ifindex, __u32 id, const char *name, __u32 *found_id)
{
	struct xdp_multiprog *mp = kr_ops_xdp_multiprog(ifindex);
	struct xdp_program *p;
	bool has = false;

	if (libxdp_get_error(mp))
		return false;
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		if (p && id && xdp_program__id(p) == id)
			has = true;
		if (p && name && !strcmp(xdp_program__name(p), name)) {
			*found_id = xdp_program__id(p);
			has = true;
		}
	} else {
		for (p = xdp_multiprog__next_prog(NULL, mp); p; p = xdp_multiprog__next_prog(p, mp)) {
			if (id && xdp_program__id(p) == id)
				has = true;
			if (name && !strcmp(xdp_program__name(p), name)) {
				*found_id = xdp_program__id(p);
				has = true;
			}
		}
	}
	xdp_multiprog__close(mp);
	return has;
}

static bool tc_has(const struct kr_ops_meta *meta)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = meta->ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = meta->tc_handle, .priority = meta->tc_priority);

	return !bpf_tc_query(&hook, &opts) && opts.prog_id == meta->prog_id;
}

static enum kr_ops_attach_state attach_state_here(const struct kr_ops_meta *meta, char *now)
{
	char name[IF_NAMESIZE];
	bool has;

	if (!if_indextoname(meta->ifindex, name))
		return KR_IFACE_GONE;
	has = meta->mode == KR_OPS_MODE_TC ? tc_has(meta) :
	      xdp_has(meta->ifindex, meta->prog_id, NULL, NULL);
	if (!strncmp(name, meta->ifname, sizeof(meta->ifname)))
		return has ? KR_ATTACHED : KR_NOT_ATTACHED;
	/* another name on the index: renamed (the program is still on it), or gone and the
	 * index reused (it is not) */
	if (!has)
		return KR_IFACE_GONE;
	if (now)
		memcpy(now, name, IF_NAMESIZE);
	return KR_ATTACHED;
}

/* Enter network namespace ino (this thread only); returns an fd of the one left, to go
 * back with netns_leave(), or -1 (no path to it, or no privilege: e.g. a unit with
 * RestrictNamespaces=). */
static int netns_enter(__u32 ino)
{
	char path[300];
	int self, fd;

	kr_ops_netns_path(ino, path, sizeof(path));
	if (!path[0])
		return -1;
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (self < 0 || fd < 0 || setns(fd, CLONE_NEWNET)) {
		if (self >= 0)
			close(self);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return self;
}

static void netns_leave(int self)
{
	if (setns(self, CLONE_NEWNET))
		pr_warn("keyrouter: couldn't return to the network namespace: %s\n",
			strerror(errno));
	close(self);
}

enum kr_ops_attach_state kr_ops_attach_state(const struct kr_ops_meta *meta, char *now)
{
	enum kr_ops_attach_state st;
	int self;

	if (now)
		now[0] = 0;
	if (!meta->netns_ino || meta->netns_ino == kr_ops_netns_ino())
		return attach_state_here(meta, now);
	/* recorded in another network namespace: look there (root can enter it) */
	self = netns_enter(meta->netns_ino);
	if (self < 0)
		return KR_OTHER_NETNS;
	st = attach_state_here(meta, now);
	netns_leave(self);
	return st;
}

const char *kr_ops_attach_state_name(enum kr_ops_attach_state s)
{
	switch (s) {
	case KR_ATTACHED: return "attached";
	case KR_NOT_ATTACHED: return "not attached any more (detached by something else)";
	case KR_IFACE_GONE: return "interface gone (removed)";
	default: return "in another network namespace (not checked from here)";
	}
}

int kr_ops_find_attached(struct kr_ops_found *f, int max)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	int n = 0;

	if (!ifs)
		return 0;
	for (i = ifs; i->if_index; i++) {
		__u32 id = 0;

		if (!xdp_has(i->if_index, 0, "kr_xdp", &id))
			continue;
		if (n < max) {
			snprintf(f[n].ifname, sizeof(f[n].ifname), "%s", i->if_name);
			f[n].ifindex = i->if_index;
			f[n].prog_id = id;
		}
		n++;
	}
	if_freenameindex(ifs);
	return n;
}

static __u32 ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (__u32)st.st_ino;
}

void kr_ops_netns_path(__u32 ino, char *buf, size_t len)
{
	char path[300];
	struct dirent *e;
	DIR *d;

	buf[0] = 0;
	if (!ino)
		return;
	d = opendir("/run/netns");
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", e->d_name);
		if (ino_of(path) == ino) {
			snprintf(buf, len, "%s", path);
			closedir(d);
			return;
		}
	}
	if (d)
		closedir(d);
	d = opendir("/proc");
	while (d && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/net", e->d_name);
		if (ino_of(path) == ino) {
			snprintf(buf, len, "%s", path);
			break;
		}
	}
	if (d)
		closedir(d);
}

void kr_ops_netns_hint(__u32 ino, char *buf, size_t len)
{
	char path[300];

	kr_ops_netns_path(ino, path, sizeof(path));
	if (path[0])
		snprintf(buf, len, "nsenter --net=%s", path);
	else if (len)
		buf[0] = 0;
}

__u32 kr_ops_xdp_find(__u32 ifindex)
{
	__u32 id = 0;

	return xdp_has(ifindex, 0, "kr_xdp", &id) ? id : 0;
}

int kr_ops_meta_read(const char *name, struct kr_ops_meta *meta)
{
	char path[1024];
	__u32 key = 0;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s/%s/%s", KR_OPS_BPFFS, KR_OPS_ROOT, name,
		 KR_OPS_MAP_META);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_map_lookup_elem(fd, &key, meta))
		err = -errno;
	else if (!kr_ops_meta_recorded(meta))
		err = -ENOENT;
	close(fd);
	return err;
}

int kr_ops_instances_describe(char *buf, size_t len)
{
	char root[256];
	size_t used = 0;
	struct dirent *e;
	int n = 0;
	DIR *d;

	buf[0] = 0;
	snprintf(root, sizeof(root), "%s/%s", KR_OPS_BPFFS, KR_OPS_ROOT);
	d = opendir(root);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct kr_ops_meta meta = {};
		int w;

		if (e->d_name[0] == '.')
			continue;
		kr_ops_meta_read(e->d_name, &meta);
		if (!kr_ops_meta_recorded(&meta))
			w = snprintf(buf + used, len - used, "%s'%s' (maps only)", n ? ", " : "",
				     e->d_name);
		else if (meta.magic == KR_OPS_META_LOADING)
			w = snprintf(buf + used, len - used, "%s'%s' (%s: a load that did not "
				     "finish)", n ? ", " : "", e->d_name, meta.ifname);
		else
			w = snprintf(buf + used, len - used, "%s'%s' (%s%s)", n ? ", " : "",
				     e->d_name, meta.ifname,
				     meta.netns_ino && meta.netns_ino != kr_ops_netns_ino() ?
				     ", another network namespace" : "");
		if (w > 0 && used + (size_t)w < len)
			used += (size_t)w;
		n++;
	}
	closedir(d);
	return n;
}

int kr_ops_instance_on(__u32 ifindex, const char *ifname, char *out, size_t len)
{
	char root[256];
	struct kr_ops_meta meta;
	struct dirent *e;
	int found = -ENOENT;
	DIR *d;

	snprintf(root, sizeof(root), "%s/%s", KR_OPS_BPFFS, KR_OPS_ROOT);
	d = opendir(root);
	while (d && found && (e = readdir(d)))
		if (e->d_name[0] != '.' && !kr_ops_meta_read(e->d_name, &meta) &&
		    (ifindex ? meta.ifindex == ifindex :
		     !strncmp(meta.ifname, ifname, sizeof(meta.ifname))) &&
		    meta.netns_ino == kr_ops_netns_ino() && strlen(e->d_name) < len) {
			memcpy(out, e->d_name, strlen(e->d_name) + 1);
			found = 0;
		}
	if (d)
		closedir(d);
	return found;
}

bool kr_ops_inst_busy(const struct kr_inst *in)
{
	int fd = open(in->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool busy;

	if (fd < 0)
		return false;
	busy = flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);	/* (drops the lock, if taken) */
	return busy;
}
