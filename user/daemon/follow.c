// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Following an instance across unload, load and upgrade (follow.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "follow.h"
#include "kr_map_names.h"
#include "ops.h"

/* The kernel id of map FD: 0 and *id, or -errno. */
static int map_id(int fd, __u32 *id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*id = info.id;
	return 0;
}

/* fd of the object pinned at DIR/NAME, or -errno. */
static int pin_open(const char *dir, const char *name)
{
	char path[4096 + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

int kr_follow_read(const char *dir, struct kr_follow_id *id)
{
	struct kr_ops_meta meta = {};
	__u32 key = 0;
	int fd, err;

	memset(id, 0, sizeof(*id));
	fd = pin_open(dir, KR_MAP_BACKENDS);
	if (fd < 0)
		return fd;
	err = map_id(fd, &id->backends_map_id);
	close(fd);
	if (err)
		return err;
	fd = pin_open(dir, KR_OPS_MAP_META);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;	/* no record: maps only (bpftool) */
	err = map_id(fd, &id->meta_map_id);
	if (!err && bpf_map_lookup_elem(fd, &key, &meta))
		err = -errno;
	close(fd);
	if (err)
		return err;
	id->prog_id = meta.prog_id;
	id->magic = meta.magic;
	id->loaded_ns = meta.loaded_ns;
	/* a load under way (or killed): not an instance to follow until it finished */
	return meta.magic == KR_OPS_META_LOADING ? -ENOENT : 0;
}

enum kr_follow_change kr_follow_compare(const struct kr_follow_id *was, int now_err,
					const struct kr_follow_id *now)
{
	if (now_err)
		return KR_FOLLOW_GONE;
	if (now->backends_map_id != was->backends_map_id ||
	    now->meta_map_id != was->meta_map_id || now->loaded_ns != was->loaded_ns)
		return KR_FOLLOW_RELOADED;
	if (now->prog_id != was->prog_id)
		return KR_FOLLOW_UPGRADED;
	return KR_FOLLOW_SAME;
}

const char *kr_follow_change_name(enum kr_follow_change c)
{
	switch (c) {
	case KR_FOLLOW_SAME:
		return "same";
	case KR_FOLLOW_UPGRADED:
		return "upgraded";
	case KR_FOLLOW_RELOADED:
		return "loaded again";
	case KR_FOLLOW_GONE:
		return "not loaded";
	}
	return "?";
}
