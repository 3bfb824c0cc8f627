// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Following an instance across unload, load and upgrade (follow.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

int kr_follow_netns(const struct kr_inst *in, __u32 *ino)
{
	struct kr_ops_meta meta = {};
	__u32 key = 0;

	*ino = 0;
	if (in->meta_fd < 0 || bpf_map_lookup_elem(in->meta_fd, &key, &meta) ||
	    !kr_ops_meta_recorded(&meta) || !meta.netns_ino ||
	    meta.netns_ino == kr_ops_netns_ino())
		return 0;
	*ino = meta.netns_ino;
	return -EXDEV;
}

void kr_follow_init(struct kr_follow *f, const char *dir)
{
	snprintf(f->dir, sizeof(f->dir), "%s", dir);
	f->err = kr_follow_read(f->dir, &f->id);
}

enum kr_follow_change kr_follow_round(struct kr_follow *f)
{
	struct kr_follow_id now;
	int err = kr_follow_read(f->dir, &now);
	/* gone before: compare with the zero generation, so that a load is RELOADED */
	struct kr_follow_id was = f->err ? (struct kr_follow_id){ 0 } : f->id;
	enum kr_follow_change c = kr_follow_compare(&was, err, &now);

	f->id = now;
	f->err = err;
	return c;
}

int kr_follow_names_add(struct kr_follow_names *s, const char *name)
{
	char *dup;

	if (kr_follow_names_has(s, name))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		char **nn = realloc(s->name, cap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		s->name = nn;
		s->cap = cap;
	}
	dup = strdup(name);
	if (!dup)
		return -ENOMEM;
	s->name[s->n++] = dup;
	return 0;
}

bool kr_follow_names_has(const struct kr_follow_names *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return true;
	return false;
}

void kr_follow_names_free(struct kr_follow_names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->name[i]);
	free(s->name);
	*s = (struct kr_follow_names){ 0 };
}
