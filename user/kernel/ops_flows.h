/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The TCP flow tables of an instance (bpf/kr_flow.h): their counters summed over the CPUs,
 * their occupancy (entries counted) and size, and the evictions estimated from them (an LRU
 * hash does not say when it evicts: inserts - deletes - occupancy, docs/datapath.md "TCP").
 */
#ifndef KR_OPS_FLOWS_H
#define KR_OPS_FLOWS_H

#include <linux/types.h>
#include "kr_datapath_kern_user.h"
#include "ops.h"

struct kr_ops_flows {
	struct kr_flow_stats st;	/* summed over the CPUs */
	__u32 flows, flows_max;		/* kr_flows: entries, max_entries */
	__u32 syn, syn_max;		/* kr_flows_syn */
	__u64 evicted, syn_evicted;	/* estimated (never below 0) */
};

/* 0, -ENOENT (a data path without the flow tables), or -errno. */
int kr_ops_flows_read(const struct kr_inst *in, struct kr_ops_flows *out);

#endif
