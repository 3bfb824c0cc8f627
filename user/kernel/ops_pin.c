// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The pin directory of an instance: bpffs, locking, the tool's own maps. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include "log.h"
#include "ops.h"
#include "ops_find.h"

static bool bpffs_mounted_here;
static int lock_wait_ms = -1;	/* --wait: -1 for ever */

void kr_ops_set_lock_wait(int ms)
{
	lock_wait_ms = ms;
}

bool kr_ops_bpffs_mounted_here(void)
{
	return bpffs_mounted_here;
}

__u32 kr_ops_netns_ino(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (__u32)st.st_ino;
}

bool kr_ops_is_root(void)
{
	return geteuid() == 0;
}

const char *kr_ops_perm_hint(int err)
{
	if (err == EPERM || err == EACCES)
		return kr_ops_is_root() ? " (missing CAP_BPF/CAP_NET_ADMIN/CAP_SYS_ADMIN?)"
					: " (keyrouter needs root: CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN)";
	return "";
}

static bool is_bpffs(const char *path)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == BPF_FS_MAGIC;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

int kr_ops_bpffs_ensure(const char *bpffs)
{
	int err;

	if (is_bpffs(bpffs))
		return 0;
	if (!kr_ops_is_root()) {
		pr_warn("keyrouter: no bpf filesystem at '%s' and no privileges to mount one%s\n",
			bpffs, kr_ops_perm_hint(EPERM));
		return -EPERM;
	}
	err = mkdir_p(bpffs, 0700);
	if (!err && mount("bpf", bpffs, "bpf", 0, "mode=0700"))
		err = -errno;
	if (err) {
		pr_warn("keyrouter: couldn't mount the bpf filesystem at '%s': %s%s\n", bpffs,
			strerror(-err), kr_ops_perm_hint(-err));
		return err;
	}
	pr_debug("keyrouter: mounted bpffs at %s\n", bpffs);
	bpffs_mounted_here = true;
	return 0;
}

static int valid_instance(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n >= KR_NAME_MAX || strspn(name, "abcdefghijklmnopqrstuvwxyz"
			"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != n || name[0] == '.') {
		pr_warn("keyrouter: bad instance name '%s': expected 1..%d of [A-Za-z0-9_.-], "
			"not starting with '.'\n", name, KR_NAME_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

int kr_ops_inst_path(struct kr_inst *in, const char *instance, const char *pin_dir)
{
	int n;

	memset(in, 0, sizeof(*in));
	in->dir_fd = in->meta_fd = in->rings_fd = -1;
	if (pin_dir) {
		n = snprintf(in->dir, sizeof(in->dir), "%s", pin_dir);
		snprintf(in->name, sizeof(in->name), "%s", instance ? instance : "(pin-dir)");
	} else {
		/* the rule (docs/operations.md "Which instance"): --instance, else the
		 * caller's (a configuration's "instance"), else "default" -- never
		 * whichever instance happens to be loaded */
		instance = instance ? instance : KR_OPS_DEFAULT_INSTANCE;
		if (valid_instance(instance))
			return -EINVAL;
		n = snprintf(in->dir, sizeof(in->dir), "%s/%s/%s", KR_OPS_BPFFS, KR_OPS_ROOT,
			     instance);
		snprintf(in->name, sizeof(in->name), "%s", instance);
	}
	if (n < 0 || (size_t)n >= sizeof(in->dir)) {
		pr_warn("keyrouter: pin directory path too long\n");
		return -ENAMETOOLONG;
	}
	while (n > 1 && in->dir[n - 1] == '/')
		in->dir[--n] = 0;
	return 0;
}

int kr_ops_map_open(const struct kr_inst *in, const char *name, bool quiet)
{
	char path[4096 + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", in->dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		fd = -errno;
		if (!quiet)
			pr_warn("keyrouter: couldn't open pinned map '%s': %s%s\n", path,
				strerror(-fd), kr_ops_perm_hint(-fd));
	}
	return fd;
}

static int ops_map_get(const struct kr_inst *in, const char *name, __u32 value_size,
		       __u32 max_entries, bool create);

int kr_ops_tool_map(const struct kr_inst *in, const char *name, __u32 value_size,
		    __u32 max_entries, bool create)
{
	return ops_map_get(in, name, value_size, max_entries, create);
}

/* Open the tool's map NAME, creating and pinning it when it does not exist yet (only with
 * create; without, a missing map is -ENOENT and no message). */
static int ops_map_get(const struct kr_inst *in, const char *name, __u32 value_size,
		       __u32 max_entries, bool create)
{
	char path[4096 + 64];
	int fd, err;

	fd = kr_ops_map_open(in, name, true);
	if (fd == -ENOENT && !create)
		return fd;
	if (fd >= 0 || fd != -ENOENT)
		goto check;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, name, sizeof(__u32), value_size, max_entries,
			    NULL);
	if (fd < 0) {
		err = -errno;
		pr_warn("keyrouter: couldn't create map '%s': %s%s\n", name, strerror(-err),
			kr_ops_perm_hint(-err));
		return err;
	}
	snprintf(path, sizeof(path), "%s/%s", in->dir, name);
	if (bpf_obj_pin(fd, path)) {
		err = -errno;
		pr_warn("keyrouter: couldn't pin map '%s': %s\n", path, strerror(-err));
		close(fd);
		return err;
	}
	return fd;
check:
	if (fd < 0) {
		pr_warn("keyrouter: couldn't open pinned map '%s/%s': %s%s\n", in->dir, name,
			strerror(-fd), kr_ops_perm_hint(-fd));
		return fd;
	}
	{
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.value_size != value_size ||
		    info.max_entries != max_entries) {
			pr_warn("keyrouter: pinned map '%s/%s' has an unexpected layout (value "
				"size %u, entries %u; expected %u, %u)\n", in->dir, name,
				info.value_size, info.max_entries, value_size, max_entries);
			close(fd);
			return -EINVAL;
		}
	}
	return fd;
}

/* Why instance in->name cannot be opened, what is loaded instead, what runs here. */
static void not_loaded(const struct kr_inst *in, const char *instance)
{
	char list[1024];
	struct kr_ops_found f[4];
	int n = kr_ops_instances_describe(list, sizeof(list)), nf;

	if (n)
		pr_warn("keyrouter: instance '%s' is not loaded (no pin directory '%s'); loaded: "
			"%s -- choose one with --instance NAME\n", in->name, in->dir, list);
	else
		pr_warn("keyrouter: instance '%s' is not loaded (no pin directory '%s'), nor is "
			"any other: run 'keyrouter load IFACE -c CONFIG%s%s' first\n", in->name,
			in->dir, instance ? " --instance " : "", instance ? instance : "");
	if (!kr_ops_bpffs_mounted_here())
		return;
	pr_warn("keyrouter: note: no bpf filesystem was mounted at %s here (keyrouter mounted "
		"an empty one): pins made in another mount namespace are not visible. "
		"`ip netns exec` gives a command a /sys of its own: run keyrouter with "
		"`nsenter --net=/run/netns/NAME` instead\n", KR_OPS_BPFFS);
	nf = kr_ops_find_attached(f, 4);
	for (int i = 0; i < nf && i < 4; i++)
		pr_warn("keyrouter: note: a keyrouter XDP program (kr_xdp, program id %u) is "
			"attached to '%s' in this network namespace, its pins out of reach\n",
			f[i].prog_id, f[i].ifname);
}

/* Take the instance's lock; when another command holds it, say so before waiting. */
static int inst_lock(const struct kr_inst *in)
{
	if (!flock(in->dir_fd, LOCK_EX | LOCK_NB))
		return 0;
	if (errno != EWOULDBLOCK)
		return -1;
	pr_info("keyrouter: waiting for another keyrouter command on instance '%s' (it holds "
		"the lock of %s; 'fuser -v %s' shows which process)\n", in->name, in->dir,
		in->dir);
	if (lock_wait_ms < 0)
		return flock(in->dir_fd, LOCK_EX);
	for (int waited = 0;; waited += 10) {
		if (!flock(in->dir_fd, LOCK_EX | LOCK_NB))
			return 0;
		if (errno != EWOULDBLOCK)
			return -1;
		if (waited >= lock_wait_ms)
			break;
		usleep(10000);
	}
	pr_warn("keyrouter: gave up after waiting %.3g s for the lock of instance '%s' (--wait): "
		"another keyrouter command still holds it ('fuser -v %s' shows which); nothing "
		"was changed: retry, or give a longer --wait\n", lock_wait_ms / 1000.0, in->name,
		in->dir);
	errno = ETIMEDOUT;
	return -2;
}

static int inst_open(struct kr_inst *in, const char *instance, const char *pin_dir,
		     bool reader)
{
	struct stat st;
	int err;

	err = kr_ops_inst_path(in, instance, pin_dir);
	if (err)
		return err;
	if (!pin_dir && (err = kr_ops_bpffs_ensure(KR_OPS_BPFFS)))
		return err;
	errno = 0;
	if (stat(in->dir, &st) || !S_ISDIR(st.st_mode)) {
		err = errno ? -errno : -ENOTDIR;
		if (err == -EACCES || err == -EPERM) {
			/* not "not loaded": the pins cannot be seen by this user */
			pr_warn("keyrouter: couldn't look at '%s': %s%s\n", in->dir,
				strerror(-err), kr_ops_perm_hint(-err));
			return err;
		}
		if (pin_dir)
			pr_warn("keyrouter: pin directory '%s': %s\n", in->dir, strerror(-err));
		else
			not_loaded(in, instance);
		return -ENOENT;
	}
	if (!is_bpffs(in->dir)) {
		pr_warn("keyrouter: '%s' is not on a bpf filesystem (mount -t bpf bpf DIR)\n",
			in->dir);
		return -EINVAL;
	}
	in->dir_fd = open(in->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (in->dir_fd < 0) {
		err = -errno;
		pr_warn("keyrouter: couldn't open '%s': %s\n", in->dir, strerror(-err));
		goto fail;
	}
	if (reader) {
		/* no lock: the tool's maps exist (a loaded instance has them), read them while
		 * a writer runs; else take the writers' path, which creates them */
		in->meta_fd = ops_map_get(in, KR_OPS_MAP_META, sizeof(struct kr_ops_meta), 1,
					  false);
		in->rings_fd = in->meta_fd < 0 ? in->meta_fd :
			       ops_map_get(in, KR_OPS_MAP_RINGS, sizeof(struct kr_ops_ring),
					   KR_MAX_RINGS, false);
		if (in->meta_fd >= 0 && in->rings_fd >= 0)
			return 0;
		err = in->meta_fd < 0 ? in->meta_fd : in->rings_fd;
		if (err != -ENOENT)
			goto fail;
		if (in->meta_fd >= 0)
			close(in->meta_fd);
		in->meta_fd = in->rings_fd = -1;
	}
	err = inst_lock(in);
	if (err) {
		if (err == -2) {
			err = -ETIMEDOUT;
			goto fail;
		}
		err = -errno;
		pr_warn("keyrouter: couldn't lock '%s': %s\n", in->dir, strerror(-err));
		goto fail;
	}
	in->meta_fd = ops_map_get(in, KR_OPS_MAP_META, sizeof(struct kr_ops_meta), 1, true);
	if (in->meta_fd < 0) {
		err = in->meta_fd;
		goto fail;
	}
	in->rings_fd = ops_map_get(in, KR_OPS_MAP_RINGS, sizeof(struct kr_ops_ring),
				   KR_MAX_RINGS, true);
	if (in->rings_fd < 0) {
		err = in->rings_fd;
		goto fail;
	}
	return 0;
fail:
	kr_ops_inst_close(in);
	return err;
}

int kr_ops_inst_open(struct kr_inst *in, const char *instance, const char *pin_dir)
{
	return inst_open(in, instance, pin_dir, false);
}

int kr_ops_inst_open_reader(struct kr_inst *in, const char *instance, const char *pin_dir)
{
	return inst_open(in, instance, pin_dir, true);
}

void kr_ops_inst_close(struct kr_inst *in)
{
	if (in->meta_fd >= 0)
		close(in->meta_fd);
	if (in->rings_fd >= 0)
		close(in->rings_fd);
	if (in->dir_fd >= 0)
		close(in->dir_fd);	/* drops the flock */
	in->meta_fd = in->rings_fd = in->dir_fd = -1;
}

/* keep: a top-level entry removed last (before the directory itself), or NULL */
static int remove_tree(const char *dir, const char *keep)
{
	char path[4096 + 256];
	struct dirent *e;
	int err = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    (keep && !strcmp(e->d_name, keep)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR) {
			int r = remove_tree(path, NULL);

			err = err ? err : r;
		} else if (unlink(path)) {
			err = err ? err : -errno;
		}
	}
	closedir(d);
	snprintf(path, sizeof(path), "%s/%s", dir, keep ? keep : "");
	if (keep && unlink(path) && errno != ENOENT)
		err = err ? err : -errno;
	if (rmdir(dir))
		err = err ? err : -errno;
	return err;
}

/* The record (kr_ops_meta) goes last: an unload killed half-way leaves it, with whatever
 * pins were not removed yet, for the next unload or load to find. */
int kr_ops_inst_remove(struct kr_inst *in)
{
	int err = remove_tree(in->dir, KR_OPS_MAP_META);

	if (err)
		pr_warn("keyrouter: couldn't remove the pins in '%s': %s\n", in->dir,
			strerror(-err));
	return err;
}

int kr_ops_pins_count(const char *dir)
{
	struct dirent *e;
	int n = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}
