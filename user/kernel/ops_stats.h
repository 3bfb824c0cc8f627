/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef KR_OPS_STATS_H
#define KR_OPS_STATS_H

#include <linux/types.h>

#define KR_OPS_NAMED_MAX 48

/* The u64 fields of one map value, by their BTF names (padding fields skipped). */
struct kr_ops_named {
	int n;
	char name[KR_OPS_NAMED_MAX][32];
	__u64 v[KR_OPS_NAMED_MAX];
};

int kr_ops_named_read(int fd, __u32 key, int ncpus, struct kr_ops_named *out);
__u64 kr_ops_named_get(const struct kr_ops_named *n, const char *name);

#endif
