// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Publishing a ring image (see ops_publish.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "log.h"
#include "ops_publish.h"

static __u64 next_generation(const struct kr_ops_maps *m, __u32 ring_id)
{
	struct kr_ops_slot s;
	__u64 g = 0;

	for (__u32 slot = 0; slot < 2; slot++) {
		if (kr_ops_slot_read(m, ring_id, slot, false, &s) || !s.present)
			continue;
		if (s.hdr.generation > g)
			g = s.hdr.generation;
	}
	return g + 1;
}

int kr_ops_publish(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot,
		   struct kr_image *img)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP | BPF_F_RDONLY_PROG);
	__u32 n = img->hdr->nchunks, key = ring_id * 2 + slot;
	int fd, err = 0;

	img->hdr->generation = next_generation(m, ring_id);
	img->hdr->published_ns = kr_ops_now_ns();
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "kr_image", sizeof(__u32), KR_CHUNK_BYTES, n,
			    &opts);
	if (fd < 0) {
		err = -errno;
		pr_warn("keyrouter: couldn't create a ring image map of %u chunks: %s\n", n,
			strerror(-err));
		return err;
	}
	for (__u32 k = 0; k < n && !err; k++)
		if (bpf_map_update_elem(fd, &k, (char *)img->buf + (size_t)k * KR_CHUNK_BYTES,
					BPF_ANY))
			err = -errno;
	if (!err && bpf_map_freeze(fd))
		err = -errno;
	if (!err && bpf_map_update_elem(m->rings, &key, &fd, BPF_ANY))
		err = -errno;
	if (err)
		pr_warn("keyrouter: couldn't publish ring id %u slot %u: %s\n", ring_id, slot,
			strerror(-err));
	close(fd);
	return err;
}
