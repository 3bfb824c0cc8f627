/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One kr_hot_keys entry, key and value (docs/datapath.md "Spill and hot-key replicas"):
 * what the kernel layer reads and writes (user/kernel/ops_hot.h) and apply plans. */
#ifndef KR_HOT_ENT_H
#define KR_HOT_ENT_H

#include "kr_datapath_kern_user.h"

struct kr_hot_ent {
	struct kr_hot_key k;
	struct kr_hot_val v;
};

#endif
