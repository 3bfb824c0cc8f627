// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Ring names -> ring ids, kept in the pinned kr_ops_rings map (stable across applies). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include "log.h"
#include "ops.h"
#include "util.h"

int kr_ops_ring_get(const struct kr_inst *in, __u32 id, struct kr_ops_ring *out)
{
	if (id >= KR_MAX_RINGS)
		return -EINVAL;
	if (bpf_map_lookup_elem(in->rings_fd, &id, out))
		return -errno;
	out->name[KR_NAME_MAX - 1] = 0;
	return 0;
}

int kr_ops_ring_find(const struct kr_inst *in, const char *name)
{
	struct kr_ops_ring r;

	for (__u32 id = 0; id < KR_MAX_RINGS; id++)
		if (!kr_ops_ring_get(in, id, &r) && r.name[0] && !strcmp(r.name, name))
			return id;
	return -ENOENT;
}

int kr_ops_ring_set(const struct kr_inst *in, __u32 id, const char *name, __u32 flags)
{
	struct kr_ops_ring r = {};

	if (id >= KR_MAX_RINGS || !name[0] || strlen(name) >= KR_NAME_MAX) {
		pr_warn("keyrouter: ring name '%s' (id %u): expected 1..%d characters\n", name, id,
			KR_NAME_MAX - 1);
		return -EINVAL;
	}
	snprintf(r.name, sizeof(r.name), "%s", name);
	r.flags = flags;
	r.assigned_ns = kr_wall_ns();
	if (bpf_map_update_elem(in->rings_fd, &id, &r, BPF_ANY)) {
		int err = -errno;

		pr_warn("keyrouter: couldn't record ring '%s': %s\n", name, strerror(-err));
		return err;
	}
	return 0;
}

int kr_ops_ring_release(const struct kr_inst *in, __u32 id)
{
	struct kr_ops_ring r = {};

	if (bpf_map_update_elem(in->rings_fd, &id, &r, BPF_ANY))
		return -errno;
	return 0;
}
