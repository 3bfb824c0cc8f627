/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Publishing an encoded ring image into a slot (one outer-map update, atomic for readers),
 * and emptying a slot.  The slot's counters (kr_slot_stats) belong to the image it holds:
 * they are zeroed right after the image changes, so a slot never shows packets an earlier
 * version routed (at most the few packets of the new version that raced the reset are not
 * counted).
 */
#ifndef KR_OPS_PUBLISH_H
#define KR_OPS_PUBLISH_H

#include "image.h"
#include "ops_kernel.h"

/* kr_publish(): generation = newest of the ring's slots + 1, time; create the image map,
 * fill, freeze, put it in slot `slot` of ring_id; then zero the slot's counters.  0 or
 * -errno (nothing changed).  Into the standby slot beside an active image (ring stage),
 * the image's header gets the note of the share of keys it moves (kr_image_hdr.moved). */
int kr_ops_publish(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot,
		   struct kr_image *img);
/* The share of the key space (units of 2^-32) the rings of ring_id's two slots own
 * differently (both images read and diffed).  0 or -errno. */
int kr_ops_slot_images_moved(const struct kr_ops_maps *m, __u32 ring_id, uint64_t *moved);
/* Empty slot `slot` of ring_id (and zero its counters).  0 or -errno. */
/* The deduplicated ring of an image buffer (kept duplicates dropped), owners = global
 * backend ids (< nowners): what analytics measures (top: each backend's share).  0 or
 * -errno. */
struct kr_an_ring;
int kr_ops_image_an(const void *buf, struct kr_an_ring *r, uint32_t nowners);
/* The same with owners map[ring-local backend of the image] (< nowners). */
int kr_ops_image_an_map(const void *buf, struct kr_an_ring *r, uint32_t nowners,
			const uint32_t *map);
int kr_ops_unpublish(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot);

#endif
