/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Hot-key replicas in the running instance (map kr_hot_keys, the rings' KR_CTL_HOT bit):
 * `keyrouter hotkey`, apply (the configuration's "hot_keys", planned in apply_plan.c),
 * the controller.  An entry is written before its ring's bit is set, and the bit cleared
 * before the ring's last entry goes: the data path never misses an entry it should see (a
 * set bit over no entry only costs a lookup).
 */
#ifndef KR_OPS_HOT_H
#define KR_OPS_HOT_H

#include <stdint.h>
#include "hot_ent.h"
#include "ops_kernel.h"

/* Every entry (ring_id -1) or those of ring_id: malloc'd *out, *n.  0 or -errno
 * (-EOPNOTSUPP: the instance's program has no kr_hot_keys). */
int kr_ops_hot_list(const struct kr_ops_maps *m, int ring_id, struct kr_hot_ent **out,
		    uint32_t *n);
/* Write one entry and set the ring's bit.  0 or -errno. */
int kr_ops_hot_put(const struct kr_ops_maps *m, const struct kr_hot_ent *e);
/* Remove one entry (clearing the ring's bit first when it is the last).  0, -ENOENT. */
int kr_ops_hot_del(const struct kr_ops_maps *m, __u32 ring_id, __u32 hash);

#endif
