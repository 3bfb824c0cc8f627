// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Publishing a ring image into a slot: the ring part's kr_publish() (user/kernel/publish.h). */
#include <errno.h>
#include "log.h"
#include "ops_publish.h"
#include "publish.h"

int kr_ops_publish(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot,
		   struct kr_image *img)
{
	struct kr_err err = {};

	if (kr_publish(m->rings, ring_id, slot, img->buf, img->hdr->nchunks, &err)) {
		pr_warn("keyrouter: couldn't publish ring id %u slot %u: %s\n", ring_id, slot,
			err.msg);
		return -EIO;
	}
	return 0;
}
