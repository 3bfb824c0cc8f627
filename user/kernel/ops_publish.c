// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Publishing a ring image into a slot: the ring part's kr_publish() (user/kernel/publish.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "log.h"
#include "ops_publish.h"
#include "publish.h"

/* kr_slot_stats[ring_id * 2 + slot] = 0 on every CPU. */
static int reset_slot_stats(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot)
{
	struct bpf_map_info info = {};
	__u32 key = ring_id * 2 + slot, len = sizeof(info);
	void *zero;
	int err = 0;

	if (m->slot_stats < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(m->slot_stats, &info, &len))
		return -errno;
	zero = calloc(m->ncpus, (info.value_size + 7) & ~(size_t)7);
	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(m->slot_stats, &key, zero, BPF_ANY)) {
		err = -errno;
		pr_warn("keyrouter: couldn't reset the counters of ring id %u slot %u: %s\n",
			ring_id, slot, strerror(-err));
	}
	free(zero);
	return err;
}

int kr_ops_publish(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot,
		   struct kr_image *img)
{
	struct kr_err err = {};

	if (kr_publish(m->rings, ring_id, slot, img->buf, img->hdr->nchunks, &err)) {
		pr_warn("keyrouter: couldn't publish ring id %u slot %u: %s\n", ring_id, slot,
			err.msg);
		return -EIO;
	}
	return reset_slot_stats(m, ring_id, slot);
}

int kr_ops_unpublish(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot)
{
	struct kr_err err = {};

	if (kr_unpublish(m->rings, ring_id, slot, &err)) {
		pr_warn("keyrouter: couldn't empty ring id %u slot %u: %s\n", ring_id, slot,
			err.msg);
		return -EIO;
	}
	return reset_slot_stats(m, ring_id, slot);
}
