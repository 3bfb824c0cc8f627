/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The names of the data path's maps, once for both sides (xdp-filter's MAP_NAME_*
 * pattern): bpf/ declares each map as `struct { ... } KR_MAP_NAME_X SEC(".maps");` (its
 * code then uses the name, which the compiler checks against the declaration), and the
 * tool opens its pin by the string KR_MAP_X made from the same macro.  A map added to
 * bpf/ gets a pair of lines here: tests/bats/layout.bats checks that the maps of the built
 * object are exactly these, and that user/ spells no map name as a string of its own.
 * (The maps the tool makes itself, kr_ops_* and kr_health*, are in user/kernel/ops.h and
 * ops_health.h: one side only.)
 */
#ifndef KR_MAP_NAMES_H
#define KR_MAP_NAMES_H

#define KR_MAP_STR_(n)	#n
#define KR_MAP_STR(n)	KR_MAP_STR_(n)

/* bpf/kr_backend_map.h, bpf/kr_maps.h */
#define KR_MAP_NAME_BACKENDS		kr_backends
#define KR_MAP_NAME_SERVICES		kr_services
#define KR_MAP_NAME_SERVICE_PORTS	kr_service_ports
#define KR_MAP_NAME_PORT_WILD		kr_port_wild
#define KR_MAP_NAME_WILD_SVCS		kr_wild_svcs
#define KR_MAP_NAME_DEVICES		kr_devices
#define KR_MAP_NAME_DEVICE_MACS		kr_device_macs
#define KR_MAP_NAME_COUNTERS		kr_counters
#define KR_MAP_NAME_BACKEND_STATS	kr_backend_stats
#define KR_MAP_NAME_HASH_KEY		kr_hash_key
#define KR_MAP_NAME_SCRATCH_BUF		kr_scratch_buf
/* bpf/kr_ring.h */
#define KR_MAP_NAME_RINGS		kr_rings
#define KR_MAP_NAME_RING_CTL		kr_ring_ctl
#define KR_MAP_NAME_SLOT_STATS		kr_slot_stats
#define KR_MAP_NAME_RING_TRACE		kr_ring_trace
#define KR_MAP_NAME_SUBSET_MEMBERS	kr_subset_members
#define KR_MAP_NAME_HOT_KEYS		kr_hot_keys
#define KR_MAP_NAME_SLOT_HOT		kr_slot_hot
#define KR_MAP_NAME_REP_SEEN		kr_rep_seen
/* bpf/kr_quic_lb_stage.h */
#define KR_MAP_NAME_QLB_CONFIGS		kr_qlb_configs
#define KR_MAP_NAME_QLB_SERVERS		kr_qlb_servers
#define KR_MAP_NAME_QLB_STATS		kr_qlb_stats
#define KR_MAP_NAME_QLB_SCRATCH_BUF	kr_qlb_scratch_buf
/* bpf/kr_trace.h: per-service counters and the decision trace */
#define KR_MAP_NAME_SVC_STATS		kr_svc_stats
#define KR_MAP_NAME_SVC_NAMES		kr_svc_names
#define KR_MAP_NAME_TRACE_CTL		kr_trace_ctl
#define KR_MAP_NAME_TRACE_RB		kr_trace_rb
#define KR_MAP_NAME_TRACE_STATS		kr_trace_stats
/* bpf/kr_flow.h: TCP flows */
#define KR_MAP_NAME_FLOWS		kr_flows
#define KR_MAP_NAME_FLOWS_SYN		kr_flows_syn
#define KR_MAP_NAME_FLOW_STATS		kr_flow_stats
#define KR_MAP_NAME_SVC_TCP		kr_svc_tcp
#define KR_MAP_NAME_FLOW_SCRATCH	kr_flow_scratch

/* The same as strings (the tool's side: pin names, bpf_object__find_map_by_name). */
#define KR_MAP_BACKENDS		KR_MAP_STR(KR_MAP_NAME_BACKENDS)
#define KR_MAP_SERVICES		KR_MAP_STR(KR_MAP_NAME_SERVICES)
#define KR_MAP_SERVICE_PORTS	KR_MAP_STR(KR_MAP_NAME_SERVICE_PORTS)
#define KR_MAP_PORT_WILD	KR_MAP_STR(KR_MAP_NAME_PORT_WILD)
#define KR_MAP_WILD_SVCS	KR_MAP_STR(KR_MAP_NAME_WILD_SVCS)
#define KR_MAP_DEVICES		KR_MAP_STR(KR_MAP_NAME_DEVICES)
#define KR_MAP_DEVICE_MACS	KR_MAP_STR(KR_MAP_NAME_DEVICE_MACS)
#define KR_MAP_COUNTERS		KR_MAP_STR(KR_MAP_NAME_COUNTERS)
#define KR_MAP_BACKEND_STATS	KR_MAP_STR(KR_MAP_NAME_BACKEND_STATS)
#define KR_MAP_HASH_KEY		KR_MAP_STR(KR_MAP_NAME_HASH_KEY)
#define KR_MAP_SCRATCH_BUF	KR_MAP_STR(KR_MAP_NAME_SCRATCH_BUF)
#define KR_MAP_RINGS		KR_MAP_STR(KR_MAP_NAME_RINGS)
#define KR_MAP_RING_CTL		KR_MAP_STR(KR_MAP_NAME_RING_CTL)
#define KR_MAP_SLOT_STATS	KR_MAP_STR(KR_MAP_NAME_SLOT_STATS)
#define KR_MAP_RING_TRACE	KR_MAP_STR(KR_MAP_NAME_RING_TRACE)
#define KR_MAP_SUBSET_MEMBERS	KR_MAP_STR(KR_MAP_NAME_SUBSET_MEMBERS)
#define KR_MAP_HOT_KEYS		KR_MAP_STR(KR_MAP_NAME_HOT_KEYS)
#define KR_MAP_SLOT_HOT		KR_MAP_STR(KR_MAP_NAME_SLOT_HOT)
#define KR_MAP_REP_SEEN		KR_MAP_STR(KR_MAP_NAME_REP_SEEN)
#define KR_MAP_QLB_CONFIGS	KR_MAP_STR(KR_MAP_NAME_QLB_CONFIGS)
#define KR_MAP_QLB_SERVERS	KR_MAP_STR(KR_MAP_NAME_QLB_SERVERS)
#define KR_MAP_QLB_STATS	KR_MAP_STR(KR_MAP_NAME_QLB_STATS)
#define KR_MAP_QLB_SCRATCH_BUF	KR_MAP_STR(KR_MAP_NAME_QLB_SCRATCH_BUF)
#define KR_MAP_SVC_STATS	KR_MAP_STR(KR_MAP_NAME_SVC_STATS)
#define KR_MAP_SVC_NAMES	KR_MAP_STR(KR_MAP_NAME_SVC_NAMES)
#define KR_MAP_TRACE_CTL	KR_MAP_STR(KR_MAP_NAME_TRACE_CTL)
#define KR_MAP_TRACE_RB		KR_MAP_STR(KR_MAP_NAME_TRACE_RB)
#define KR_MAP_TRACE_STATS	KR_MAP_STR(KR_MAP_NAME_TRACE_STATS)
#define KR_MAP_FLOWS		KR_MAP_STR(KR_MAP_NAME_FLOWS)
#define KR_MAP_FLOWS_SYN	KR_MAP_STR(KR_MAP_NAME_FLOWS_SYN)
#define KR_MAP_FLOW_STATS	KR_MAP_STR(KR_MAP_NAME_FLOW_STATS)
#define KR_MAP_SVC_TCP		KR_MAP_STR(KR_MAP_NAME_SVC_TCP)
#define KR_MAP_FLOW_SCRATCH	KR_MAP_STR(KR_MAP_NAME_FLOW_SCRATCH)

#endif
