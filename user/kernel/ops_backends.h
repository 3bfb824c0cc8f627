/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kr_backends as a whole: read it in one go, and the published rings that use each id
 * (backend set, status, apply).  Backend ids are global, one per server (backend_ids.h).
 */
#ifndef KR_OPS_BACKENDS_H
#define KR_OPS_BACKENDS_H

#include <stdint.h>
#include "ops_kernel.h"

/* Every entry of kr_backends (m->backends_max of them; malloc'd into *out). 0 or -errno. */
int kr_ops_backends_read(const struct kr_ops_maps *m, struct kr_backend **out);

/* Rings whose published images (both slots) reference each id: *nrings[id] (malloc'd,
 * [m->backends_max]).  0 or -errno. */
int kr_ops_backends_rings(const struct kr_ops_maps *m, uint16_t **nrings);

/* Does ring ring_id (either slot) reference id?  0 no, 1 yes, -errno. */
int kr_ops_ring_has_backend(const struct kr_ops_maps *m, __u32 ring_id, __u32 id);

#endif
