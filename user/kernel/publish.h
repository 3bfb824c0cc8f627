/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Publishing ring images into the kernel (the maps of bpf/kr_ring.h).
 *
 * A ring version lives in its own BPF array map (BPF_F_INNER_MAP | BPF_F_RDONLY_PROG,
 * max_entries = the image's chunks), created here, filled completely, frozen
 * (BPF_MAP_FREEZE) and only then published with ONE update of the outer map kr_rings at
 * key ring_id * 2 + slot: readers see the old image or the new one, never a mix.  The
 * outer map holds the only reference afterwards; replacing or deleting the slot frees it.
 * Nothing published changes when any step before that update fails.
 *
 * Control words (kr_ring_ctl, one __u64 per ring id) are written with one map update, so
 * they change atomically for the data path (see kr_image_kern_user.h for the layout).
 */
#ifndef KR_PUBLISH_H
#define KR_PUBLISH_H

#include <stdint.h>
#include "err.h"

/* Creates, fills and freezes the map of an image; returns its fd or -1 (err set). */
int kr_image_map_create(const void *buf, uint32_t nchunks, const char *name, struct kr_err *err);

/*
 * Publishes image buf (nchunks chunks of KR_CHUNK_BYTES, header in chunk 0) into slot
 * `slot` of ring ring_id.  The header's generation and published_ns are set here
 * (generation = 1 + the largest generation published for this ring id).  Returns 0, or
 * -1 with err set and the slot untouched.
 */
int kr_publish(int rings_fd, uint32_t ring_id, uint32_t slot, const void *buf, uint32_t nchunks,
	       struct kr_err *err);

/* Empties a slot (deletes the outer entry). 0, or -1 with err set. ENOENT is not an error. */
int kr_unpublish(int rings_fd, uint32_t ring_id, uint32_t slot, struct kr_err *err);

/* Control word of a ring id: read / write (one map update). 0 or -1 with err set. */
int kr_ctl_read(int ctl_fd, uint32_t ring_id, uint64_t *ctl, struct kr_err *err);
int kr_ctl_write(int ctl_fd, uint32_t ring_id, uint64_t ctl, struct kr_err *err);

/* Kernel memory of a map as the kernel reports it (the "memlock" of bpftool map show,
 * from /proc/self/fdinfo).  0 or -1 with err set. */
int kr_map_memlock(int map_fd, uint64_t *bytes, struct kr_err *err);

/* fd of the image map published in a slot (close it), or -1: errno ENOENT if empty. */
int kr_published_map_fd(int rings_fd, uint32_t ring_id, uint32_t slot);

#endif
