/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-service counters and the run-time decision trace of keyrouter.bpf.c
 * (`keyrouter trace`, `keyrouter top`; docs/operations.md "Tracing decisions").
 *
 *   kr_svc_stats   PERCPU_ARRAY[KR_MAX_SVC_STATS], by kr_service.stats_id: per-service
 *                  packets, routed / passed / dropped and why
 *   kr_svc_names   ARRAY[KR_MAX_SVC_STATS]: stats id -> service name (the tool's; the
 *                  programs never read it)
 *   kr_trace_ctl   ARRAY[1] struct kr_trace_ctl: written by the tool at run time
 *   kr_trace_rb    RINGBUF: struct kr_trace_event, one per sampled decision
 *   kr_trace_stats PERCPU_ARRAY[1]: matched, sampled, lost, expired
 *
 * The cost when the trace is off is one inlined array lookup, one load and one branch per
 * packet of a service (kr_trace_decision); a build with KR_NO_TRACE has none of it (the
 * benchmark's comparison, tests/bench/bench_datapath.c).  On, a packet the 1-in-N sampling
 * skips costs a decrement of a per-CPU count (kr_scratch.trace_gap); a sampled one the
 * call of kr_trace_emit (filters, then the event).  Sampling before filtering keeps 1 in N
 * of the matching packets on average, as the gaps do not depend on the packets.
 */
#ifndef KR_TRACE_H
#define KR_TRACE_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "kr_datapath_kern_user.h"
#include "kr_key.h"	/* struct kr_scratch */
#include "kr_ring.h"	/* kr_rings: the image generation of an event */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KR_MAX_SVC_STATS);
	__type(key, __u32);
	__type(value, struct kr_svc_stats);
} KR_MAP_NAME_SVC_STATS SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KR_MAX_SVC_STATS);
	__type(key, __u32);
	__type(value, struct kr_svc_name);
} KR_MAP_NAME_SVC_NAMES SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kr_trace_ctl);
} KR_MAP_NAME_TRACE_CTL SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, KR_TRACE_RB_BYTES);
} KR_MAP_NAME_TRACE_RB SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kr_trace_stats);
} KR_MAP_NAME_TRACE_STATS SEC(".maps");

/* The service's counters (entry 0 for an id out of range: never NULL for the verifier's
 * sake, the caller checks). */
static __always_inline struct kr_svc_stats *kr_svc_stats_of(const struct kr_service *svc)
{
	__u32 id = svc->stats_id < KR_MAX_SVC_STATS ? svc->stats_id : 0;

	return bpf_map_lookup_elem(&kr_svc_stats, &id);
}

/* Does the key (s->key, klen bytes) start with the filter's prefix? */
static __always_inline bool kr_trace_prefix_ok(const struct kr_trace_ctl *c, const __u8 *key,
					       __u32 klen)
{
	__u32 n = c->prefix_len, i;

	if (!n)
		return true;
	if (n > KR_TRACE_PREFIX_MAX || n > klen)
		return false;
	for (i = 0; i < KR_TRACE_PREFIX_MAX; i++) {
		if (i >= n)
			break;
		if (key[i] != c->prefix[i])
			return false;
	}
	return true;
}

/* The generation of the image that answered (ring_id, slot), or 0. */
static __always_inline __u64 kr_trace_generation(__u32 ring_id, __u32 slot)
{
	__u32 key = ring_id * 2 + (slot & 1), zero = 0;
	const struct kr_image_hdr *hdr;
	void *ring = bpf_map_lookup_elem(&kr_rings, &key);

	if (!ring)
		return 0;
	hdr = bpf_map_lookup_elem(ring, &zero);
	return hdr ? hdr->generation : 0;
}

#ifndef KR_NO_TRACE
/* Filters, then one event.  Only called when c->on, for a packet the sampling chose. */
static __noinline int kr_trace_emit(const struct kr_trace_ctl *c, const struct kr_scratch *s,
				    const struct kr_route *r, __u32 frame_len, __u32 word)
{
	/* word: verdict | why << 8 | route reason << 16 | key length << 24 (at most 255) */
	__u32 verdict = word & 0xff, why = (word >> 8) & 0xff;
	__u32 ring_rc = (word >> 16) & 0xff, klen = word >> 24, zero = 0, i, n;
	const struct kr_service *svc;
	struct kr_trace_stats *ts;
	struct kr_trace_event *e;
	__u64 now;

	if (!c || !s || !r)
		return 0;
	svc = &s->svc;
	if ((c->flags & KR_TRACE_F_SERVICE) && svc->stats_id != c->stats_id)
		return 0;
	if ((c->flags & KR_TRACE_F_BACKEND) &&
	    (verdict != KR_TV_ROUTED || r->backend_id != c->backend_id))
		return 0;
	if (c->verdicts && !(c->verdicts & (1u << verdict)))
		return 0;
	if (!kr_trace_prefix_ok(c, s->key, klen))
		return 0;
	ts = bpf_map_lookup_elem(&kr_trace_stats, &zero);
	if (!ts)
		return 0;
	ts->matched++;
	now = bpf_ktime_get_ns();
	if (c->expires_ns && now > c->expires_ns) {
		/* the tracer stopped renewing: off, until a tracer writes the control again */
		((struct kr_trace_ctl *)c)->on = 0;
		ts->expired++;
		return 0;
	}
	e = bpf_ringbuf_reserve(&kr_trace_rb, sizeof(*e), 0);
	if (!e) {
		ts->lost++;
		return 0;
	}
	ts->sampled++;
	e->ts_ns = now;
	e->cpu = bpf_get_smp_processor_id();
	e->stats_id = svc->stats_id;
	e->ring_id = svc->ring_id;
	e->key_hash = r->key_hash;
	e->backend_id = r->backend_id;
	e->slot = r->slot;
	e->point = r->image_index;
	e->first_point = r->first_index;
	e->walk = r->walk;
	e->frame_len = frame_len;
	e->verdict = verdict;
	e->why = why;
	e->fwd_mode = svc->fwd_mode;
	e->key_type = svc->key_type;
	e->key_len = klen;
	e->ring_rc = ring_rc;
	/* failover as the slot counter has it: the walk moved, past a down backend */
	e->route_flags = (r->walk && (r->flags & KR_RT_F_FAILOVER) ? KR_TRACE_RF_FAILOVER : 0) |
			 (r->flags & KR_RT_F_SPILLED ? KR_TRACE_RF_SPILLED : 0) |
			 (r->flags & KR_RT_F_REPLICA ?
			  KR_TRACE_RF_REPLICA | (r->replica & 15) << KR_TRACE_RF_REPLICA_SHIFT : 0) |
			 (r->flags & KR_RT_F_TCP ? KR_TRACE_RF_TCP |
			  (r->flags & KR_RT_F_FLOW ? KR_TRACE_RF_FLOW : 0) |
			  (r->flags & KR_RT_F_SYN ? KR_TRACE_RF_SYN : 0) : 0);
	e->generation = why == KR_TW_QUIC_LB ? 0 : kr_trace_generation(svc->ring_id, r->slot);
	n = (e->key_len + 7) / 8;
	for (i = 0; i < KR_KEY_BUF / 8; i++) {
		if (i >= n)
			break;
		((__u64 *)e->key)[i] = ((const __u64 *)s->key)[i];
	}
	/* wake the reader only once some data is waiting (a wake-up per event costs more
	 * than the event); the reader also looks every 50 ms */
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&kr_trace_rb, BPF_RB_AVAIL_DATA) >=
			   KR_TRACE_WAKE_BYTES ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 1;
}
#endif /* KR_NO_TRACE */

#endif /* KR_TRACE_H */
