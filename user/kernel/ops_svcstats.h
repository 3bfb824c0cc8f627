/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-service counters (bpf/kr_trace.h kr_svc_stats, by stats id) with the names apply
 * recorded in kr_svc_names: what status, stats, the Prometheus exposition and top show.
 */
#ifndef KR_OPS_SVCSTATS_H
#define KR_OPS_SVCSTATS_H

#include <stdbool.h>
#include "ops_kernel.h"

struct kr_ops_svc {
	__u32 id;			/* stats id (0: services written without one) */
	char name[KR_SVC_NAME_MAX];	/* "(unnamed)" for id 0 */
	struct kr_service_key key;
	char vip[64];			/* "10.0.0.1:53" or "*:53" */
	struct kr_svc_stats c;		/* the counters, summed over CPUs */
};

/* Every named stats id, and id 0 when it counted anything: *out (malloc'd), *n.  -ENOENT
 * when the program has no per-service counters (an older build). */
int kr_ops_svc_read(const struct kr_inst *in, const struct kr_ops_maps *m,
		    struct kr_ops_svc **out, unsigned *n);
/* Stats id of service NAME, or -ENOENT. */
int kr_ops_svc_find(const struct kr_inst *in, const char *name);
/* The name of stats id ID into buf ("#ID" when it has none). */
void kr_ops_svc_name(int names_fd, __u32 id, char *buf, size_t len);

#endif
