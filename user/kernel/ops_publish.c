// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Publishing a ring image into a slot: the ring part's kr_publish() (user/kernel/publish.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "analytics.h"
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

/* The deduplicated ring of an image (kept duplicates dropped), owners = global ids. */
int kr_ops_image_an(const void *buf, struct kr_an_ring *r, uint32_t nowners)
{
	return kr_ops_image_an_map(buf, r, nowners, NULL);
}

int kr_ops_image_an_map(const void *buf, struct kr_an_ring *r, uint32_t nowners,
			const uint32_t *map)
{
	const struct kr_image_hdr *h = buf;
	const char *base = buf;
	const __u32 *bt = (const __u32 *)(base + kr_image_bt_off(h));
	uint32_t n = 0, prev = 0;

	if (kr_an_ring_alloc(r, h->npoints, nowners))
		return -ENOMEM;
	for (uint32_t i = 0; i < h->npoints; i++) {
		const struct kr_point *p = (const struct kr_point *)(base +
			(size_t)(h->pt_chunk + (i >> KR_PTS_SHIFT)) * KR_CHUNK_BYTES) +
			(i & (KR_PTS_PER_CHUNK - 1));
		uint32_t hash = kr_point_hash(p);

		if (i && hash == prev)
			continue;	/* a duplicate kept after its winner */
		prev = hash;
		if (p->backend >= h->nbackends)
			return -EBADMSG;
		r->hash[n] = hash;
		r->owner[n++] = map ? map[p->backend] : bt[p->backend];
	}
	r->npoints = n;
	return 0;
}

static uint32_t max_owner(const void *buf)
{
	const struct kr_image_hdr *h = buf;
	const __u32 *bt = (const __u32 *)((const char *)buf + kr_image_bt_off(h));
	uint32_t m = 0;

	for (uint32_t i = 0; i < h->nbackends; i++)
		m = bt[i] > m ? bt[i] : m;
	return m;
}

/* The share of the key space (units of 2^-32) two images' rings own differently. */
static int images_moved(const void *ia, const void *ib, uint64_t *moved)
{
	struct kr_an_ring a = {}, b = {};
	uint32_t no = max_owner(ia) > max_owner(ib) ? max_owner(ia) : max_owner(ib);
	int err = -ENOMEM;

	*moved = 0;
	if (!kr_ops_image_an(ia, &a, no + 1) && !kr_ops_image_an(ib, &b, no + 1))
		err = kr_an_diff(&a, &b, moved, NULL, NULL) ? -ENOMEM : 0;
	kr_an_ring_free(&a);
	kr_an_ring_free(&b);
	return err;
}

int kr_ops_slot_images_moved(const struct kr_ops_maps *m, __u32 ring_id, uint64_t *moved)
{
	void *ia = NULL, *ib = NULL;
	size_t sa, sb;
	int err;

	err = kr_ops_slot_image(m, ring_id, 0, &ia, &sa);
	if (!err)
		err = kr_ops_slot_image(m, ring_id, 1, &ib, &sb);
	if (!err)
		err = images_moved(ia, ib, moved);
	free(ia);
	free(ib);
	return err;
}

/* Publishing into the standby slot (ring stage) next to an active image: note in the new
 * image's header what share of the key space it moves, against which generation. */
static void note_moved(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot,
		       struct kr_image *img)
{
	struct kr_ops_slot other = {};
	void *buf = NULL;
	uint64_t moved;
	size_t size;
	__u64 ctl;

	img->hdr->moved = img->hdr->moved_vs = 0;
	if (kr_ops_ctl_read(m, ring_id, &ctl) || kr_ctl_active(ctl) == slot ||
	    kr_ops_slot_read(m, ring_id, !slot, false, &other) || !other.present ||
	    kr_ops_slot_image(m, ring_id, !slot, &buf, &size))
		return;
	if (!images_moved(buf, img->buf, &moved)) {
		img->hdr->moved = moved;
		img->hdr->moved_vs = other.hdr.generation;
	}
	kr_ops_slot_free(&other);
	free(buf);
}

int kr_ops_publish(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot,
		   struct kr_image *img)
{
	struct kr_err err = {};

	note_moved(m, ring_id, slot, img);

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
