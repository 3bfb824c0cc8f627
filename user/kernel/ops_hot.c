// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Hot-key entries and the rings' KR_CTL_HOT bit (ops_hot.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "ops_hot.h"

int kr_ops_hot_list(const struct kr_ops_maps *m, int ring_id, struct kr_hot_ent **out,
		    uint32_t *n)
{
	struct kr_hot_key k, next;
	struct kr_hot_ent *all;
	void *prev = NULL;

	*out = NULL;
	*n = 0;
	if (m->hot_keys < 0)
		return -EOPNOTSUPP;
	all = calloc(KR_MAX_HOT_KEYS, sizeof(*all));
	if (!all)
		return -ENOMEM;
	while (*n < KR_MAX_HOT_KEYS && !bpf_map_get_next_key(m->hot_keys, prev, &next)) {
		k = next;
		prev = &k;
		if (ring_id >= 0 && k.ring_id != (__u32)ring_id)
			continue;
		if (bpf_map_lookup_elem(m->hot_keys, &k, &all[*n].v))
			continue;	/* removed meanwhile */
		all[(*n)++].k = k;
	}
	*out = all;
	return 0;
}

/* The ring's bit: set when it has an entry. */
static int hot_bit(const struct kr_ops_maps *m, __u32 ring_id, bool on)
{
	__u64 ctl;
	int err = kr_ops_ctl_read(m, ring_id, &ctl);

	if (err)
		return err;
	if (!!(ctl & KR_CTL_HOT) == on)
		return 0;
	return kr_ops_ctl_write(m, ring_id, on ? ctl | KR_CTL_HOT : ctl & ~KR_CTL_HOT);
}

int kr_ops_hot_put(const struct kr_ops_maps *m, const struct kr_hot_ent *e)
{
	if (m->hot_keys < 0)
		return -EOPNOTSUPP;
	if (bpf_map_update_elem(m->hot_keys, &e->k, &e->v, BPF_ANY))
		return -errno;
	return hot_bit(m, e->k.ring_id, true);
}

int kr_ops_hot_del(const struct kr_ops_maps *m, __u32 ring_id, __u32 hash)
{
	struct kr_hot_key k = { .ring_id = ring_id, .key_hash = hash };
	struct kr_hot_ent *all;
	struct kr_hot_val v;
	uint32_t n;
	int err;

	if (m->hot_keys < 0)
		return -EOPNOTSUPP;
	if (bpf_map_lookup_elem(m->hot_keys, &k, &v))
		return -ENOENT;
	err = kr_ops_hot_list(m, (int)ring_id, &all, &n);
	free(all);
	if (!err && n == 1)
		err = hot_bit(m, ring_id, false);
	if (!err && bpf_map_delete_elem(m->hot_keys, &k))
		err = -errno;
	return err;
}
