// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The TCP flow tables' figures (see ops_flows.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ops_flows.h"

/* Entries of a hash map (a walk of its keys) and its max_entries. */
static int map_occupancy(int fd, __u32 *n, __u32 *max)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct kr_flow_key k, next;
	void *pk = NULL;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*max = info.max_entries;
	*n = 0;
	while (!bpf_map_get_next_key(fd, pk, &next)) {
		k = next;
		pk = &k;
		(*n)++;
	}
	return errno == ENOENT ? 0 : -errno;
}

static __u64 estimate(__u64 inserts, __u64 deletes, __u32 occupancy)
{
	return inserts > deletes + occupancy ? inserts - deletes - occupancy : 0;
}

static int stats_sum(int fd, struct kr_flow_stats *out)
{
	int ncpu = libbpf_num_possible_cpus();
	struct kr_flow_stats *v;
	__u32 zero = 0;

	if (ncpu <= 0)
		return -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_elem(fd, &zero, v)) {
		free(v);
		return -errno;
	}
	for (int c = 0; c < ncpu; c++) {
		out->syn_inserts += v[c].syn_inserts;
		out->syn_hits += v[c].syn_hits;
		out->promoted += v[c].promoted;
		out->syn_deletes += v[c].syn_deletes;
		out->hits += v[c].hits;
		out->deletes += v[c].deletes;
		out->ring += v[c].ring;
		out->down += v[c].down;
	}
	free(v);
	return 0;
}

int kr_ops_flows_read(const struct kr_inst *in, struct kr_ops_flows *out)
{
	int st = kr_ops_map_open(in, KR_MAP_FLOW_STATS, true);
	int fl = kr_ops_map_open(in, KR_MAP_FLOWS, true);
	int sy = kr_ops_map_open(in, KR_MAP_FLOWS_SYN, true);
	int err = st < 0 || fl < 0 || sy < 0 ? -ENOENT : 0;

	memset(out, 0, sizeof(*out));
	if (!err)
		err = stats_sum(st, &out->st);
	if (!err)
		err = map_occupancy(fl, &out->flows, &out->flows_max);
	if (!err)
		err = map_occupancy(sy, &out->syn, &out->syn_max);
	if (!err) {
		out->evicted = estimate(out->st.promoted, out->st.deletes, out->flows);
		out->syn_evicted = estimate(out->st.syn_inserts, out->st.syn_deletes, out->syn);
	}
	if (st >= 0)
		close(st);
	if (fl >= 0)
		close(fl);
	if (sy >= 0)
		close(sy);
	return err;
}
