/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The flow stage of the data path: TCP segments keep the backend their flow started on
 * (docs/datapath.md "TCP").
 *
 *   kr_flows        LRU_HASH kr_flow_key -> kr_flow: established flows
 *   kr_flows_syn    LRU_HASH kr_flow_key -> kr_flow: embryonic flows (a SYN routed, no
 *                   later segment yet)
 *   kr_flow_stats   PERCPU_ARRAY[1] struct kr_flow_stats
 *   kr_svc_tcp      PERCPU_ARRAY[KR_MAX_SVC_STATS] struct kr_svc_tcp, by stats id
 *   kr_flow_scratch PERCPU_ARRAY[1]: the lookup key (the program's stack is full)
 *
 * The rules, which keep floods from evicting established flows:
 *   - a segment whose flow is in kr_flows goes to its backend while that backend is up or
 *     draining (drain: no new flows, established ones stay); a RST frees the entry;
 *   - else, one in kr_flows_syn: a SYN (a retransmission) goes to its backend; any other
 *     segment (the handshake's ACK) goes there too and moves the entry to kr_flows;
 *   - an entry whose backend is down or gone is removed: the ring decides (its connection
 *     moves, as it must);
 *   - else the ring decides (the service's tuple key, never spilled); only a SYN writes,
 *     into kr_flows_syn.  A non-SYN segment without an entry writes nothing.
 * So spoofed SYNs churn only the embryonic table, spoofed ACKs write nothing, and only a
 * flow that answered its SYN-ACK (a real client) takes an established entry.
 *
 * kr_flow_find() and kr_flow_syn() are global functions: verified once, apart from the
 * UDP path (which never calls them), their keys in the per-CPU scratch.
 */
#ifndef KR_FLOW_H
#define KR_FLOW_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "kr_datapath_kern_user.h"
#include "kr_parse.h"
#include "kr_backend_map.h"

/* Established flows.  Sized by `keyrouter load` ("tcp": "flows"). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, KR_FLOWS_DEFAULT);
	__type(key, struct kr_flow_key);
	__type(value, struct kr_flow);
} KR_MAP_NAME_FLOWS SEC(".maps");

/* Embryonic flows.  Sized by `keyrouter load` ("tcp": "embryonic"). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, KR_FLOWS_SYN_DEFAULT);
	__type(key, struct kr_flow_key);
	__type(value, struct kr_flow);
} KR_MAP_NAME_FLOWS_SYN SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kr_flow_stats);
} KR_MAP_NAME_FLOW_STATS SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KR_MAX_SVC_STATS);
	__type(key, __u32);
	__type(value, struct kr_svc_tcp);
} KR_MAP_NAME_SVC_TCP SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kr_flow_scratch);
} KR_MAP_NAME_FLOW_SCRATCH SEC(".maps");

/* Can the entry's backend still take its flow's segments: up, or draining? */
static __always_inline int kr_flow_backend_ok(const struct kr_flow *f)
{
	const struct kr_backend *be = bpf_map_lookup_elem(&kr_backends, &f->backend_id);

	return be && be->family && (be->state == KR_BACKEND_UP || be->state == KR_BACKEND_DRAIN);
}

static __always_inline int kr_tcp_is_syn(__u32 flags)
{
	return (flags & (KR_TCP_SYN | KR_TCP_ACK | KR_TCP_RST)) == KR_TCP_SYN;
}

/* The flow key of the packet into fs->k. */
static __always_inline void kr_flow_key_of(const struct kr_pkt *pkt, struct kr_flow_key *k)
{
	kr_copy16(k->src, pkt->src);
	kr_copy16(k->dst, pkt->dst);
	kr_copy2(k->sport, pkt->sport);
	kr_copy2(k->dport, pkt->dport);
	k->family = pkt->family;
	k->pad[0] = k->pad[1] = k->pad[2] = 0;
}

static __always_inline void kr_flow_route(struct kr_route *r, const struct kr_flow *f)
{
	r->backend_id = f->backend_id;
	r->slot = f->slot;
	r->flags = KR_RT_F_TCP | KR_RT_F_FLOW | KR_RT_F_NOSPILL;
	r->walk = 0;
}

/*
 * The segment's flow entry: 1 = routed by it (r->backend_id, slot, flags), 0 = the ring
 * decides (the key of the flow is left in the scratch for kr_flow_syn()).  stats_id:
 * the service's counters (below KR_MAX_SVC_STATS).
 */
__noinline int kr_flow_find(const struct kr_pkt *pkt, struct kr_route *r, __u32 stats_id)
{
	struct kr_flow_scratch *fs;
	struct kr_flow_stats *st;
	struct kr_svc_tcp *t;
	struct kr_flow *f;
	__u32 zero = 0, fl;

	if (!pkt || !r)
		return 0;
	fs = bpf_map_lookup_elem(&kr_flow_scratch, &zero);
	st = bpf_map_lookup_elem(&kr_flow_stats, &zero);
	t = bpf_map_lookup_elem(&kr_svc_tcp, &stats_id);
	if (!fs || !st || !t)
		return 0;
	kr_flow_key_of(pkt, &fs->k);
	fl = pkt->tcp_flags;
	t->segments++;
	if (kr_tcp_is_syn(fl))
		t->syn++;
	if (fl & KR_TCP_RST)
		t->rst++;
	f = bpf_map_lookup_elem(&kr_flows, &fs->k);
	if (f) {
		if (!kr_flow_backend_ok(f)) {
			bpf_map_delete_elem(&kr_flows, &fs->k);
			st->deletes++;
			goto moved;
		}
		kr_flow_route(r, f);
		st->hits++;
		t->flow++;
		if ((fl & KR_TCP_RST) && !bpf_map_delete_elem(&kr_flows, &fs->k))
			st->deletes++;
		return 1;
	}
	f = bpf_map_lookup_elem(&kr_flows_syn, &fs->k);
	if (!f) {
		st->ring++;
		t->ring++;
		return 0;
	}
	if (!kr_flow_backend_ok(f)) {
		if (!bpf_map_delete_elem(&kr_flows_syn, &fs->k))
			st->syn_deletes++;
		goto moved;
	}
	kr_flow_route(r, f);
	t->flow++;
	if (kr_tcp_is_syn(fl)) {
		st->syn_hits++;
		return 1;
	}
	fs->v = *f;
	if (!(fl & KR_TCP_RST) && !bpf_map_update_elem(&kr_flows, &fs->k, &fs->v, BPF_NOEXIST))
		st->promoted++;
	if (!bpf_map_delete_elem(&kr_flows_syn, &fs->k))
		st->syn_deletes++;
	return 1;
moved:
	st->down++;
	t->moved++;
	t->ring++;
	return 0;
}

/* After the ring routed a SYN (kr_flow_find() left its key in the scratch): its embryonic
 * entry (KR_RT_F_SYN stays set when it was written). */
__noinline int kr_flow_syn(struct kr_route *r)
{
	struct kr_flow_scratch *fs;
	struct kr_flow_stats *st;
	__u32 zero = 0;

	if (!r)
		return 0;
	fs = bpf_map_lookup_elem(&kr_flow_scratch, &zero);
	st = bpf_map_lookup_elem(&kr_flow_stats, &zero);
	if (!fs || !st)
		return 0;
	fs->v.backend_id = r->backend_id;
	fs->v.slot = r->slot;
	fs->v.pad[0] = fs->v.pad[1] = fs->v.pad[2] = 0;
	if (bpf_map_update_elem(&kr_flows_syn, &fs->k, &fs->v, BPF_ANY)) {
		r->flags &= ~KR_RT_F_SYN;
		return 0;
	}
	st->syn_inserts++;
	return 1;
}

#endif /* KR_FLOW_H */
