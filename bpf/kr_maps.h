/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Maps of the packet side of keyrouter.bpf.c (the ring maps are in kr_ring.h).
 * max_entries are defaults that plain
 * `bpftool prog loadall` accepts; the tool may resize kr_backends / kr_backend_stats before
 * loading (bpf_map__set_max_entries) up to KR_MAX_BACKEND_IDS.
 */
#ifndef KR_MAPS_H
#define KR_MAPS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "kr_datapath_kern_user.h"
#include "kr_key.h"
#include "kr_siphash.h"

#include "kr_backend_map.h"

/* Services: (VIP, port, proto, family) -> ring id, key extractor, forwarding, policies.
 * Family 0 + zero address = the wildcard entry of a port.  Written by the tool (apply). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KR_MAX_SERVICES);
	__type(key, struct kr_service_key);
	__type(value, struct kr_service);
} KR_MAP_NAME_SERVICES SEC(".maps");

/* Ports whose services are all wildcards (struct kr_service_ports).  Written by the tool
 * (apply); all clear = every packet tries the exact (VIP, port) entry first. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kr_service_ports);
} KR_MAP_NAME_SERVICE_PORTS SEC(".maps");

/* The wildcard service of each UDP port without a hash lookup (include/
 * kr_datapath_kern_user.h): port -> 0 (look in kr_services) or i + 1, and the copies i.
 * Written by the tool (apply). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KR_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} KR_MAP_NAME_PORT_WILD SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * KR_WILD_HALF);
	__type(key, __u32);
	__type(value, struct kr_service);
} KR_MAP_NAME_WILD_SVCS SEC(".maps");

/* Egress devices: ifindex -> the source MAC l2 forwarding writes.  Written by the tool
 * when it attaches; without an entry, a packet leaving by its ingress device gets the
 * MAC it was addressed to. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KR_MAX_DEVICES);
	__type(key, __u32);
	__type(value, struct kr_device);
} KR_MAP_NAME_DEVICES SEC(".maps");

/* The same entries for ifindexes below KR_DEVICE_SLOTS, by ifindex (an inlined array
 * lookup instead of a hash lookup per l2 packet).  Written by the tool with kr_devices;
 * an entry without KR_DEVICE_F_MAC sends the data path to kr_devices. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KR_DEVICE_SLOTS);
	__type(key, __u32);
	__type(value, struct kr_device);
} KR_MAP_NAME_DEVICE_MACS SEC(".maps");

/* Global counters by reason (one entry).  Written by the programs; read by the tool. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kr_counters);
} KR_MAP_NAME_COUNTERS SEC(".maps");

/* Per backend id: packets and bytes routed to it.  Written by the programs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KR_DEFAULT_BACKEND_IDS);
	__type(key, __u32);
	__type(value, struct kr_backend_stats);
} KR_MAP_NAME_BACKEND_STATS SEC(".maps");

/* The keyed-hash secret (services with KR_SVC_F_KEYED_HASH; include/kr_siphash.h).  Written
 * by the tool (apply, from the configuration's "hash" secret_file); readable by whoever can
 * open the pins (root: the instance directory is 0700). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kr_hash_secret);
} KR_MAP_NAME_HASH_KEY SEC(".maps");

/* Per-CPU scratch: the payload window the extractors read and the key they write.
 * Programs only. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kr_scratch);
} KR_MAP_NAME_SCRATCH_BUF SEC(".maps");

#endif /* KR_MAPS_H */
