// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Counters by name: the u64 fields of a map value, named by the map's own BTF, summed
 * over CPUs for per-CPU maps.  So `stats` prints whatever counters the loaded program
 * has, with the names the program gave them, and never goes stale when a field is added.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "ops_stats.h"

static const struct btf_type *skip_mods(const struct btf *btf, __u32 *id)
{
	const struct btf_type *t = btf__type_by_id(btf, *id);

	while (t && (btf_is_typedef(t) || btf_is_mod(t))) {
		*id = t->type;
		t = btf__type_by_id(btf, *id);
	}
	return t;
}

/* The BTF of the last map asked about: status reads one entry per backend of one map. */
static struct btf *btf_get(__u32 id)
{
	static struct btf *cached;
	static __u32 cached_id;

	if (cached && cached_id == id)
		return cached;
	btf__free(cached);
	cached = btf__load_from_kernel_by_id(id);
	cached_id = cached ? id : 0;
	return cached;
}

int kr_ops_named_read(int fd, __u32 key, int ncpus, struct kr_ops_named *out)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), tid;
	const struct btf_type *t;
	const struct btf *btf;
	__u64 *vals = NULL;
	size_t stride;
	int err = 0, percpu;

	memset(out, 0, sizeof(*out));
	if (fd < 0)
		return -ENOENT;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	percpu = info.type == BPF_MAP_TYPE_PERCPU_ARRAY || info.type == BPF_MAP_TYPE_PERCPU_HASH;
	stride = (info.value_size + 7) & ~7u;
	vals = calloc(percpu ? ncpus : 1, stride);
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &key, vals)) {
		err = -errno;
		goto out;
	}
	if (!info.btf_id || !info.btf_value_type_id)
		goto fallback;
	btf = btf_get(info.btf_id);
	if (!btf)
		goto fallback;
	tid = info.btf_value_type_id;
	t = skip_mods(btf, &tid);
	if (!t || !btf_is_struct(t))
		goto fallback;
	for (__u16 i = 0; i < btf_vlen(t) && out->n < KR_OPS_NAMED_MAX; i++) {
		const struct btf_member *mb = btf_members(t) + i;
		__u32 mid = mb->type, off = btf_member_bit_offset(t, i) / 8;
		const struct btf_type *mt = skip_mods(btf, &mid);
		const char *name = btf__name_by_offset(btf, mb->name_off);

		if (!mt || !btf_is_int(mt) || mt->size != 8 || !name || !*name || off % 8)
			continue;
		snprintf(out->name[out->n], sizeof(out->name[0]), "%s", name);
		for (int c = 0; c < (percpu ? ncpus : 1); c++)
			out->v[out->n] += vals[(c * stride + off) / 8];
		out->n++;
	}
	goto out;
fallback:	/* no BTF: numbered fields */
	for (__u32 f = 0; f < info.value_size / 8 && out->n < KR_OPS_NAMED_MAX; f++) {
		snprintf(out->name[out->n], sizeof(out->name[0]), "field%u", f);
		for (int c = 0; c < (percpu ? ncpus : 1); c++)
			out->v[out->n] += vals[(c * stride) / 8 + f];
		out->n++;
	}
out:
	free(vals);
	return err;
}

__u64 kr_ops_named_get(const struct kr_ops_named *n, const char *name)
{
	for (int i = 0; i < n->n; i++)
		if (!strcmp(n->name[i], name))
			return n->v[i];
	return 0;
}
