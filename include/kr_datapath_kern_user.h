/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Map keys/values and constants shared by the BPF programs and the keyrouter tool
 * (the ring image itself is in kr_image_kern_user.h).
 */
#ifndef KR_DATAPATH_KERN_USER_H
#define KR_DATAPATH_KERN_USER_H

#ifndef __bpf__
#include <linux/types.h>
#endif
#include "kr_image_kern_user.h"
#include "kr_map_names.h"

/* ---- limits ---------------------------------------------------------------------- */
#define KR_MAX_KEY_LEN		255	/* longer keys follow the service's policy */
#define KR_MAX_RINGS		256	/* ring ids 0..KR_MAX_RINGS-1; two slots each */
#define KR_MAX_BACKEND_IDS	(1u << 20)	/* global backend ids (all rings) */
#define KR_MAX_WALK		64	/* failover walk bound, in ring points */
#define KR_ANY_UP_SCAN		256	/* the walk decides "all down" (rather than "walk
					 * limit") by scanning at most this many backend table
					 * entries */
#define KR_MAX_SUBSET_MEMBERS	(1u << 18)	/* entries of kr_subset_members (no prealloc;
						 * its bucket array costs 16 bytes each) */
/* A subset whose expected walk (ring points / subset points) exceeds this gets a dedicated
 * ring instead of sharing its ring's points (docs/operations.md "Subsets"). */
#define KR_SUBSET_SHARE_MAX_WALK	(KR_MAX_WALK / 8)

/* ---- backends (global map: backend id -> struct kr_backend) ----------------------- */
enum kr_backend_state {
	KR_BACKEND_UP = 0,
	KR_BACKEND_DOWN = 1,	/* skipped by the walk: its keys move to the next point */
	KR_BACKEND_DRAIN = 2,	/* skipped like DOWN (no new keys); kept for reporting */
	KR_BACKEND_UNUSED = 3,	/* id not allocated: the walk skips it, and counts it */
};

struct kr_backend {
	__u8 addr[16];		/* IPv4 in the first 4 bytes, network order */
	__be16 port;		/* network order (informational: packets keep their port) */
	__u8 family;		/* 4 or 6 */
	__u8 state;		/* enum kr_backend_state */
	__u8 mac[6];		/* l2: destination MAC of the backend */
	__u16 spill;		/* spill fraction in units of 2^-16 (0 = none): a key whose
				 * kr_spill_hash() >> 16 is below it walks on past this
				 * backend, as past a drained one (kr_spill_hit) */
	__u32 ifindex;		/* l2: egress device (0: the ingress device) */
	__u32 flags;		/* KR_BACKEND_F_* (the data path ignores them) */
};
KR_LAYOUT_SIZE(kr_backend, 36);
KR_LAYOUT_AT(kr_backend, addr, 0);
KR_LAYOUT_AT(kr_backend, port, 16);
KR_LAYOUT_AT(kr_backend, family, 18);
KR_LAYOUT_AT(kr_backend, state, 19);
KR_LAYOUT_AT(kr_backend, mac, 20);
KR_LAYOUT_AT(kr_backend, spill, 26);
KR_LAYOUT_AT(kr_backend, ifindex, 28);
KR_LAYOUT_AT(kr_backend, flags, 32);

/* kr_backend.flags: who set .state, written in the same map update as the state
 * (docs/operations.md "Health checking"): the health checker never brings back a backend
 * that an operator or the configuration set down or drained. */
enum kr_backend_owner {
	KR_OWNER_CONFIG = 0,	/* apply (the configuration's state, or nobody yet) */
	KR_OWNER_OPERATOR = 1,	/* keyrouter backend set */
	KR_OWNER_CHECKER = 2,	/* keyrouter health */
};
#define KR_BACKEND_F_OWNER	3u	/* enum kr_backend_owner */
#define KR_BACKEND_F_SPILL_FIXED (1u << 2)	/* .spill set by the configuration or an
						 * operator: the controller leaves it alone */

/* ---- spill and hot keys (docs/datapath.md "Spill and hot-key replicas") ------------ */
/* Does a key of hash key_hash spill from a backend of spill fraction spill (2^-16)?  The
 * spill hash is a multiplicative (Weyl) hash: a bijection of the key hash, independent of
 * the migration's kr_mix32, and the same for every backend (a key that spills from b
 * reaches the next backend and spills again iff its value is below that one's fraction). */
static inline __u32 kr_spill_hash(__u32 key_hash)
{
	return (__u32)(key_hash * 0x9E3779B1u);
}

static inline int kr_spill_hit(__u32 key_hash, __u32 spill)
{
	return (kr_spill_hash(key_hash) >> 16) < spill;
}

/* Hot-key replicas (map kr_hot_keys, HASH without prealloc): a key of ring ring_id whose
 * hash is key_hash goes to one of the first `replicas` distinct eligible backends from its
 * point, chosen by the packet's source (kr_replica_pick): one client stays on one replica.
 * Every key of the same 32-bit hash is replicated too.  The data path looks the map up
 * only for rings whose control word has KR_CTL_HOT set. */
#define KR_MAX_HOT_KEYS		1024
#define KR_MIN_REPLICAS		2
#define KR_MAX_REPLICAS		16
struct kr_hot_key {
	__u32 ring_id;
	__u32 key_hash;
};
KR_LAYOUT_SIZE(kr_hot_key, 8);
KR_LAYOUT_AT(kr_hot_key, ring_id, 0);
KR_LAYOUT_AT(kr_hot_key, key_hash, 4);

#define KR_HOT_F_CONTROLLER	1u	/* added by `keyrouter balance` (off removes it) */
struct kr_hot_val {
	__u32 replicas;		/* KR_MIN_REPLICAS..KR_MAX_REPLICAS */
	__u32 flags;		/* KR_HOT_F_* */
};
KR_LAYOUT_SIZE(kr_hot_val, 8);
KR_LAYOUT_AT(kr_hot_val, replicas, 0);
KR_LAYOUT_AT(kr_hot_val, flags, 4);

/* The replica of a packet: a fixed hash of its source address (family 4: the first 4
 * bytes of src, else 16) and source port (host order), modulo the key's replicas. */
static inline __u32 kr_replica_pick(const __u8 *src, __u32 family, __u32 sport)
{
	__u32 h = 0x2545f491u, n = family == 4 ? 1 : 4, i;

	for (i = 0; i < 4; i++) {
		if (i >= n)
			break;
		h = kr_mix32(h ^ ((__u32)src[4 * i] << 24 | (__u32)src[4 * i + 1] << 16 |
				  (__u32)src[4 * i + 2] << 8 | src[4 * i + 3]));
	}
	return kr_mix32(h ^ sport);
}

/* Per-CPU counters of one ring slot for spill and replicas (map kr_slot_hot, key
 * ring_id * 2 + slot; apart from kr_slot_stats so that its layout, and upgrades, stay). */
struct kr_slot_hot {
	__u64 spilled;		/* routed past at least one backend the key spilled from */
	__u64 replica;		/* hot keys routed to a replica other than their owner */
};
KR_LAYOUT_SIZE(kr_slot_hot, 16);
KR_LAYOUT_AT(kr_slot_hot, spilled, 0);
KR_LAYOUT_AT(kr_slot_hot, replica, 8);

/* ---- what the ring stage decided for one packet ----------------------------------- */
/* Subset membership (map kr_subset_members, HASH without prealloc): an entry
 * {subset_id, backend_id} exists when that global backend id belongs to the subset.  A
 * service with subset_id != 0 walks its (shared) ring skipping backends without an entry. */
struct kr_subset_key {
	__u32 subset_id;	/* 1.. (0 = no subset: every backend of the ring) */
	__u32 backend_id;	/* global backend id */
};
KR_LAYOUT_SIZE(kr_subset_key, 8);
KR_LAYOUT_AT(kr_subset_key, subset_id, 0);
KR_LAYOUT_AT(kr_subset_key, backend_id, 4);

struct kr_route {
	__u32 backend_id;	/* global backend id */
	__u32 image_index;	/* image point chosen (after the walk) */
	__u32 first_index;	/* image point of the plain lookup (before the walk) */
	__u32 walk;		/* points skipped by the walk */
	__u8 slot;		/* 0/1: the slot whose ring routed the packet */
	__u8 flags;		/* KR_RT_F_*: NOSPILL is the caller's input, the rest output */
	__u8 replica;		/* hot key: the replica chosen (0 = the owner) */
	__u8 nrep;		/* hot key: its replicas (0: not a hot key) */
	__u32 key_hash;		/* crc32 of the key */
	/* subset.subset_id: the subset routed for (0: the whole ring), an input of the walk;
	 * subset.backend_id: the walk's scratch (the backend id it checks).  Kept here, in
	 * the caller's memory, as the membership lookup key: the data path's stack is full. */
	struct kr_subset_key subset;
};
KR_LAYOUT_SIZE(kr_route, 32);
KR_LAYOUT_AT(kr_route, backend_id, 0);
KR_LAYOUT_AT(kr_route, image_index, 4);
KR_LAYOUT_AT(kr_route, first_index, 8);
KR_LAYOUT_AT(kr_route, walk, 12);
KR_LAYOUT_AT(kr_route, slot, 16);
KR_LAYOUT_AT(kr_route, flags, 17);
KR_LAYOUT_AT(kr_route, replica, 18);
KR_LAYOUT_AT(kr_route, nrep, 19);
#define KR_RT_F_NOSPILL		(1u << 0)	/* in: ignore spill and replicas (QUIC keys) */
#define KR_RT_F_FAILOVER	(1u << 1)	/* the walk passed a down / non-member backend */
#define KR_RT_F_SPILLED		(1u << 2)	/* the walk passed a backend the key spills from */
#define KR_RT_F_REPLICA		(1u << 3)	/* routed as a hot key (replica, nrep) */
#define KR_RT_F_TCP		(1u << 4)	/* a TCP segment (never spills, no replicas) */
#define KR_RT_F_FLOW		(1u << 5)	/* TCP: routed by its flow entry, not the ring */
#define KR_RT_F_SYN		(1u << 6)	/* TCP: a SYN, its embryonic entry written */
KR_LAYOUT_AT(kr_route, key_hash, 20);
KR_LAYOUT_AT(kr_route, subset, 24);


/* ---- ring stage (bpf/kr_ring.h) ---------------------- */
/* kr_ring_route() returns KR_ROUTE_OK (0) or one of these reasons (the packet is not routed). */
enum kr_route_reason {
	KR_ROUTE_OK = 0,
	KR_ROUTE_NO_RING = 1,		/* ring id out of range, or no image in the chosen slot */
	KR_ROUTE_BAD_IMAGE = 2,		/* image header/index/table inconsistent: not used */
	KR_ROUTE_ALL_DOWN = 3,		/* no backend of the ring is up */
	KR_ROUTE_WALK_LIMIT = 4,	/* KR_MAX_WALK points after the key's point all down */
	KR_ROUTE_NREASONS
};

/* Per-CPU counters of one ring slot (map kr_slot_stats, key ring_id * 2 + slot): the
 * "ring version counters".  A packet counts in the slot kr_ctl_slot() chose for it. */
struct kr_slot_stats {
	__u64 packets;		/* routed by this slot's ring */
	__u64 bytes;		/* bytes of those packets (when the caller passes them) */
	__u64 failover;		/* routed after skipping at least one down point */
	__u64 no_ring;		/* KR_ROUTE_NO_RING: nothing published in the slot */
	__u64 bad_image;	/* KR_ROUTE_BAD_IMAGE */
	__u64 all_down;		/* KR_ROUTE_ALL_DOWN */
	__u64 walk_limit;	/* KR_ROUTE_WALK_LIMIT */
};
KR_LAYOUT_SIZE(kr_slot_stats, 56);
KR_LAYOUT_AT(kr_slot_stats, packets, 0);
KR_LAYOUT_AT(kr_slot_stats, bytes, 8);
KR_LAYOUT_AT(kr_slot_stats, failover, 16);
KR_LAYOUT_AT(kr_slot_stats, no_ring, 24);
KR_LAYOUT_AT(kr_slot_stats, bad_image, 32);
KR_LAYOUT_AT(kr_slot_stats, all_down, 40);
KR_LAYOUT_AT(kr_slot_stats, walk_limit, 48);

/* Debug trace of the last kr_ring_route() call (map kr_ring_trace, one entry), written only
 * when the program's .rodata flag kr_ring_trace_on is set at load time (the verifier
 * removes the code otherwise).  `keyrouter lookup --via-kernel` reads it. */
struct kr_ring_trace {
	__u64 seq;		/* incremented by every traced call */
	struct kr_route route;
	__u32 reason;		/* enum kr_route_reason */
	__u32 ring_id;
};
KR_LAYOUT_SIZE(kr_ring_trace, 48);
KR_LAYOUT_AT(kr_ring_trace, seq, 0);
KR_LAYOUT_AT(kr_ring_trace, route, 8);
KR_LAYOUT_AT(kr_ring_trace, reason, 40);
KR_LAYOUT_AT(kr_ring_trace, ring_id, 44);

/* ==== packet side (services, extractors, forwarding, counters) ====================== */

#define KR_MAX_SERVICES		1024	/* default max_entries of kr_services */
#define KR_DEFAULT_BACKEND_IDS	65536	/* default max_entries of kr_backends / kr_backend_stats
					 * (userspace may raise it up to KR_MAX_BACKEND_IDS) */
#define KR_MAX_DEVICES		256	/* default max_entries of kr_devices */
#define KR_DEVICE_SLOTS		4096	/* kr_device_macs: devices with ifindex below this */
#define KR_PAYLOAD_WINDOW	512	/* UDP payload bytes the extractors can see */
#define KR_MAX_PAYLOAD_OFFSET	256	/* payload extractor: largest offset */
#define KR_KEY_BUF		256	/* key buffer: KR_MAX_KEY_LEN + 1 */
#define KR_MAX_VLANS		2
#define KR_MAX_IPV6_EXT		8	/* IPv6 extension headers walked before giving up */

enum kr_key_type {
	KR_KEY_TUPLE = 1,	/* src address + src port, network order (6 or 18 bytes) */
	KR_KEY_PAYLOAD = 2,	/* payload bytes: [off, off+len), [off, delimiter), or all */
	KR_KEY_DNS = 3,		/* query name, wire format, ASCII-lowercased, final 0 label */
	KR_KEY_MEMCACHE = 4,	/* memcached UDP: first key token of the ASCII command */
	KR_KEY_QUIC = 5,	/* QUIC destination connection ID */
};

enum kr_fwd_mode {
	KR_FWD_L2 = 1,		/* rewrite MACs, XDP_TX / redirect (DSR on one L2 segment) */
	KR_FWD_IPIP = 2,	/* encapsulate to the backend address (v4/v6 by its family) */
};

enum kr_policy {
	KR_POLICY_PASS = 0,	/* hand the packet to the local stack, untouched (default) */
	KR_POLICY_DROP = 1,
};

/* kr_service.flags */
#define KR_SVC_F_PAYLOAD_DELIM	(1u << 0)	/* payload key ends before payload_delim */
#define KR_SVC_F_KEYED_HASH	(1u << 1)	/* key hash = SipHash-1-3 with the secret of
						 * map kr_hash_key (kr_siphash.h), not crc32:
						 * NOT pingora/nginx-compatible placement */
#define KR_SVC_F_QUIC_LB	(1u << 2)	/* quic: route CIDs carrying a server ID by it
						 * (QUIC-LB, kr_quic_lb_kern_user.h) before the ring */

/* Services map key.  A wildcard entry for a port has family 0 and an all-zero address;
 * it matches any destination address (v4 and v6) the exact entries do not. */
struct kr_service_key {
	__u8 addr[16];		/* destination (VIP) address; IPv4 in the first 4 bytes */
	__be16 port;		/* destination port, network order */
	__u8 proto;		/* IPPROTO_UDP (17) or IPPROTO_TCP (6) */
	__u8 family;		/* 4, 6, or 0 for the wildcard entry */
};
KR_LAYOUT_SIZE(kr_service_key, 20);

/* A kr_service_key's protocol as the tool prints it. */
static inline const char *kr_proto_name(__u8 proto)
{
	return proto == 17 ? "udp" : proto == 6 ? "tcp" : "?";
}
KR_LAYOUT_AT(kr_service_key, addr, 0);
KR_LAYOUT_AT(kr_service_key, port, 16);
KR_LAYOUT_AT(kr_service_key, proto, 18);
KR_LAYOUT_AT(kr_service_key, family, 19);

/*
 * kr_service_ports (ARRAY, one entry): bit p (host-order port) of no_exact set = no service
 * on UDP port p has an exact VIP, so the data path skips the exact lookup and goes straight
 * to the port's wildcard entry (one hash lookup per packet instead of two).  A clear bit
 * (the default: a fresh map, or a writer that does not know this map) means "look up both",
 * so it is always safe; `keyrouter apply` clears a port's bit before it writes an exact
 * service there and sets the bits of ports without one after its services are written.
 */
#define KR_PORT_WORDS		(65536 / 64)
struct kr_service_ports {
	__u64 no_exact[KR_PORT_WORDS];
};

/*
 * kr_port_wild (ARRAY, one __u32 per UDP port, host order) and kr_wild_svcs (ARRAY of
 * struct kr_service, two halves of KR_WILD_HALF): the wildcard service of a port without
 * a hash lookup.  kr_port_wild[p] = 0: none here, the data path looks in kr_services as
 * before (so a writer that knows only kr_services, and a port whose entry apply cleared,
 * stay correct); else i + 1: the port's wildcard service is kr_wild_svcs[i], a copy of its
 * kr_services value.  `keyrouter apply` clears the entries of the wildcard services it is
 * about to write or remove, and after them copies every wildcard service of kr_services
 * into the half no port uses, then points the ports at the copies (one 4-byte write
 * each): an entry in use is never written, and a set entry always equals kr_services.
 */
#define KR_WILD_HALF		KR_MAX_SERVICES
#define KR_PORTS		65536

struct kr_service {
	__u32 ring_id;		/* 0..KR_MAX_RINGS-1 */
	__u8 key_type;		/* enum kr_key_type */
	__u8 fwd_mode;		/* enum kr_fwd_mode */
	__u8 policy_no_key;	/* enum kr_policy: the key is not in the packet */
	__u8 policy_too_long;	/* enum kr_policy: the key is longer than KR_MAX_KEY_LEN */
	__u8 policy_no_route;	/* enum kr_policy: no ring, bad image, all backends down */
	__u8 quic_cid_len;	/* quic: DCID length of short-header packets (1..20) */
	__u8 payload_delim;	/* payload: delimiter byte (with KR_SVC_F_PAYLOAD_DELIM) */
	__u8 flags;		/* KR_SVC_F_* */
	union {
		__u16 payload_off;	/* payload: first key byte (0..KR_MAX_PAYLOAD_OFFSET) */
		__u16 qlb_id;		/* quic + KR_SVC_F_QUIC_LB: QUIC-LB id (kr_quic_lb_kern_user.h) */
	};
	union {
		__u16 payload_len;	/* payload: key length; 0 = up to the delimiter / the end */
		__u16 qlb_tag;		/* quic + KR_SVC_F_QUIC_LB: tag of its QUIC-LB entries */
	};
	__u8 tun_src4[4];	/* ipip: outer IPv4 source */
	__u8 tun_src6[16];	/* ipip: outer IPv6 source */
	__u32 subset_id;	/* 0: the whole ring; else only the backends of kr_subset_members */
	__u32 stats_id;		/* its entry of kr_svc_stats and kr_svc_names (1..
				 * KR_MAX_SVC_STATS-1; 0: a writer without names, counted in
				 * entry 0) */
	__u32 pad;
};
KR_LAYOUT_SIZE(kr_service, 48);
KR_LAYOUT_AT(kr_service, ring_id, 0);
KR_LAYOUT_AT(kr_service, key_type, 4);
KR_LAYOUT_AT(kr_service, fwd_mode, 5);
KR_LAYOUT_AT(kr_service, policy_no_key, 6);
KR_LAYOUT_AT(kr_service, policy_too_long, 7);
KR_LAYOUT_AT(kr_service, policy_no_route, 8);
KR_LAYOUT_AT(kr_service, quic_cid_len, 9);
KR_LAYOUT_AT(kr_service, payload_delim, 10);
KR_LAYOUT_AT(kr_service, flags, 11);
KR_LAYOUT_AT(kr_service, payload_off, 12);
KR_LAYOUT_AT(kr_service, payload_len, 14);
KR_LAYOUT_AT(kr_service, qlb_id, 12);
KR_LAYOUT_AT(kr_service, qlb_tag, 14);
KR_LAYOUT_AT(kr_service, tun_src4, 16);
KR_LAYOUT_AT(kr_service, tun_src6, 20);
KR_LAYOUT_AT(kr_service, subset_id, 36);
KR_LAYOUT_AT(kr_service, stats_id, 40);
KR_LAYOUT_AT(kr_service, pad, 44);

/* ---- TCP: the flow tables (bpf/kr_flow.h; docs/datapath.md "TCP") ------------------ */
/* A TCP segment of a service is routed by its flow: an entry of kr_flows (established) or
 * kr_flows_syn (embryonic: a SYN seen, no later segment yet), else the ring (the service's
 * tuple key: source address and port).  Both are LRU hashes sized at load ("tcp" in the
 * configuration); the defaults: */
#define KR_FLOWS_DEFAULT	131072	/* kr_flows: established flows */
#define KR_FLOWS_SYN_DEFAULT	32768	/* kr_flows_syn: embryonic flows */
#define KR_FLOWS_MIN		1024
#define KR_FLOWS_MAX		(1u << 24)

struct kr_flow_key {
	__u8 src[16];		/* client address (IPv4: first 4 bytes, the rest 0) */
	__u8 dst[16];		/* VIP */
	__u8 sport[2];		/* network order */
	__u8 dport[2];
	__u8 family;		/* 4 or 6 */
	__u8 pad[3];
};
KR_LAYOUT_SIZE(kr_flow_key, 40);
KR_LAYOUT_AT(kr_flow_key, src, 0);
KR_LAYOUT_AT(kr_flow_key, dst, 16);
KR_LAYOUT_AT(kr_flow_key, sport, 32);
KR_LAYOUT_AT(kr_flow_key, dport, 34);
KR_LAYOUT_AT(kr_flow_key, family, 36);

struct kr_flow {
	__u32 backend_id;	/* global backend id the flow's first segments went to */
	__u8 slot;		/* the ring slot that chose it */
	__u8 pad[3];
};
KR_LAYOUT_SIZE(kr_flow, 8);
KR_LAYOUT_AT(kr_flow, backend_id, 0);
KR_LAYOUT_AT(kr_flow, slot, 4);

/* Per-CPU figures of the flow tables (map kr_flow_stats, one entry).  An LRU hash does not
 * say when it evicts: evictions are estimated as inserts - deletes - occupancy (the tool
 * counts the entries), exact while no insert replaced an entry of the same flow (the data
 * path inserts only flows it just did not find). */
struct kr_flow_stats {
	__u64 syn_inserts;	/* SYNs routed by the ring: an embryonic entry written */
	__u64 syn_hits;		/* SYN retransmissions that found their embryonic entry */
	__u64 promoted;		/* later segments that moved their entry to kr_flows */
	__u64 syn_deletes;	/* embryonic entries removed (promoted, RST, backend down) */
	__u64 hits;		/* segments that followed their kr_flows entry */
	__u64 deletes;		/* kr_flows entries removed (RST, backend down) */
	__u64 ring;		/* segments without an entry: routed by the ring, nothing written */
	__u64 down;		/* entries whose backend was down or gone: the ring decided */
};
KR_LAYOUT_SIZE(kr_flow_stats, 64);
KR_LAYOUT_AT(kr_flow_stats, syn_inserts, 0);
KR_LAYOUT_AT(kr_flow_stats, syn_hits, 8);
KR_LAYOUT_AT(kr_flow_stats, promoted, 16);
KR_LAYOUT_AT(kr_flow_stats, syn_deletes, 24);
KR_LAYOUT_AT(kr_flow_stats, hits, 32);
KR_LAYOUT_AT(kr_flow_stats, deletes, 40);
KR_LAYOUT_AT(kr_flow_stats, ring, 48);
KR_LAYOUT_AT(kr_flow_stats, down, 56);

/* Per-service TCP counters (map kr_svc_tcp, per-CPU, by kr_service.stats_id): the TCP
 * segments of the service (its kr_svc_stats count them too, with its UDP packets). */
struct kr_svc_tcp {
	__u64 segments;		/* TCP segments that matched the service */
	__u64 syn;		/* of those, SYNs (without ACK) */
	__u64 flow;		/* routed by their flow entry (established or embryonic) */
	__u64 ring;		/* routed by the ring (a new flow, or no entry) */
	__u64 moved;		/* their entry's backend was down or gone: the ring decided */
	__u64 rst;		/* RSTs (their entry freed) */
};
KR_LAYOUT_SIZE(kr_svc_tcp, 48);
KR_LAYOUT_AT(kr_svc_tcp, segments, 0);
KR_LAYOUT_AT(kr_svc_tcp, syn, 8);
KR_LAYOUT_AT(kr_svc_tcp, flow, 16);
KR_LAYOUT_AT(kr_svc_tcp, ring, 24);
KR_LAYOUT_AT(kr_svc_tcp, moved, 32);
KR_LAYOUT_AT(kr_svc_tcp, rst, 40);

/* The data path's per-CPU scratch of the TCP path: its lookup keys, off the stack. */
struct kr_flow_scratch {
	struct kr_flow_key k;
	struct kr_flow v;
	struct kr_service_key svc;	/* the kr_services key of a TCP segment */
	__u32 pad;
};

/* ---- per-service counters (map kr_svc_stats, per-CPU, by kr_service.stats_id) ------- */
#define KR_MAX_SVC_STATS	(KR_MAX_SERVICES + 1)	/* ids 1..KR_MAX_SERVICES; 0: unnamed */

/* Every packet of the service (its kr_services / kr_wild_svcs entry matched) counts in
 * `packets` and in exactly one of routed / passed / dropped; the rest say why.  The same
 * names as kr_counters where the meaning is the same. */
struct kr_svc_stats {
	__u64 packets;		/* packets that matched the service */
	__u64 routed;		/* forwarded to a backend */
	__u64 passed;		/* handed to the stack (any reason) */
	__u64 dropped;		/* dropped (policy, or the forwarding dropped it) */
	__u64 bytes;		/* frame bytes of the routed packets */
	__u64 no_key;		/* key not found in the packet (policy) */
	__u64 key_too_long;	/* key longer than KR_MAX_KEY_LEN (policy) */
	__u64 no_route;		/* ring stage: no ring, bad image, all down, walk limit (policy) */
	__u64 fwd_error;	/* forwarding failed: passed */
	__u64 bad_service;	/* unknown extractor / mode: passed */
	__u64 failover_walks;	/* routed after the failover walk skipped a point */
	__u64 quic_lb_routed;	/* routed by a QUIC-LB server ID (no ring lookup) */
	__u64 dropped_no_key;
	__u64 dropped_key_too_long;
	__u64 dropped_no_route;
	__u64 pad;
};
KR_LAYOUT_SIZE(kr_svc_stats, 128);
KR_LAYOUT_AT(kr_svc_stats, packets, 0);
KR_LAYOUT_AT(kr_svc_stats, routed, 8);
KR_LAYOUT_AT(kr_svc_stats, passed, 16);
KR_LAYOUT_AT(kr_svc_stats, dropped, 24);
KR_LAYOUT_AT(kr_svc_stats, bytes, 32);
KR_LAYOUT_AT(kr_svc_stats, no_key, 40);
KR_LAYOUT_AT(kr_svc_stats, key_too_long, 48);
KR_LAYOUT_AT(kr_svc_stats, no_route, 56);
KR_LAYOUT_AT(kr_svc_stats, fwd_error, 64);
KR_LAYOUT_AT(kr_svc_stats, bad_service, 72);
KR_LAYOUT_AT(kr_svc_stats, failover_walks, 80);
KR_LAYOUT_AT(kr_svc_stats, quic_lb_routed, 88);
KR_LAYOUT_AT(kr_svc_stats, dropped_no_key, 96);
KR_LAYOUT_AT(kr_svc_stats, dropped_key_too_long, 104);
KR_LAYOUT_AT(kr_svc_stats, dropped_no_route, 112);
KR_LAYOUT_AT(kr_svc_stats, pad, 120);

/* kr_svc_names[stats_id]: the service's config name and its kr_services key, written by
 * apply before the service entry that carries the id (the programs never read it). */
#define KR_SVC_NAME_MAX		64
struct kr_svc_name {
	char name[KR_SVC_NAME_MAX];	/* "" = id free */
	struct kr_service_key key;
	__u32 pad;
};
KR_LAYOUT_SIZE(kr_svc_name, 88);
KR_LAYOUT_AT(kr_svc_name, name, 0);
KR_LAYOUT_AT(kr_svc_name, key, 64);
KR_LAYOUT_AT(kr_svc_name, pad, 84);

/* ---- decision trace (bpf/kr_trace.h; `keyrouter trace`, `keyrouter top`) ------------ */
/* kr_trace_ctl (ARRAY, one entry), written by the tool at run time: the data path reads
 * `on` for every packet of a service (one inlined array lookup, one load, one branch when
 * off), and when on samples 1 in `sample` packets, applies the filters to those, and
 * writes one struct kr_trace_event per match into the ring buffer kr_trace_rb. */
#define KR_TRACE_F_SERVICE	(1u << 0)	/* only stats_id */
#define KR_TRACE_F_BACKEND	(1u << 1)	/* only packets routed to backend_id */
#define KR_TRACE_PREFIX_MAX	32
struct kr_trace_ctl {
	__u32 on;		/* 0: off */
	__u32 sample;		/* 1 in this many matching packets (random; 0 or 1: all) */
	__u32 stats_id;		/* with KR_TRACE_F_SERVICE */
	__u32 backend_id;	/* with KR_TRACE_F_BACKEND */
	__u32 flags;		/* KR_TRACE_F_* */
	__u32 verdicts;		/* bit 1 << enum kr_trace_verdict; 0: every verdict */
	__u64 expires_ns;	/* bpf_ktime_get_ns() after which the data path switches the
				 * trace off by itself (a tracer that died); 0: never */
	__u32 prefix_len;	/* 0..KR_TRACE_PREFIX_MAX: the key starts with prefix */
	__u32 owner;		/* process id of the tracer (the tool's; not read here) */
	__u8 prefix[KR_TRACE_PREFIX_MAX];
};
KR_LAYOUT_SIZE(kr_trace_ctl, 72);
KR_LAYOUT_AT(kr_trace_ctl, on, 0);
KR_LAYOUT_AT(kr_trace_ctl, sample, 4);
KR_LAYOUT_AT(kr_trace_ctl, stats_id, 8);
KR_LAYOUT_AT(kr_trace_ctl, backend_id, 12);
KR_LAYOUT_AT(kr_trace_ctl, flags, 16);
KR_LAYOUT_AT(kr_trace_ctl, verdicts, 20);
KR_LAYOUT_AT(kr_trace_ctl, expires_ns, 24);
KR_LAYOUT_AT(kr_trace_ctl, prefix_len, 32);
KR_LAYOUT_AT(kr_trace_ctl, owner, 36);
KR_LAYOUT_AT(kr_trace_ctl, prefix, 40);

enum kr_trace_verdict {
	KR_TV_ROUTED = 1,
	KR_TV_PASSED = 2,
	KR_TV_DROPPED = 3,
};

/* Why (kr_trace_event.why): the kr_svc_stats field the packet counted in. */
enum kr_trace_why {
	KR_TW_ROUTED = 0,	/* by the ring (walk > 0: after a failover walk) */
	KR_TW_QUIC_LB = 1,	/* routed by a QUIC-LB server ID */
	KR_TW_NO_KEY = 2,
	KR_TW_KEY_TOO_LONG = 3,
	KR_TW_NO_ROUTE = 4,	/* ring_rc says which (enum kr_route_reason) */
	KR_TW_FWD_ERROR = 5,
	KR_TW_BAD_SERVICE = 6,
	KR_TW_FWD_DROP = 7,	/* the forwarding dropped it */
};

struct kr_trace_event {
	__u64 ts_ns;		/* bpf_ktime_get_ns() (CLOCK_MONOTONIC) */
	__u32 cpu;
	__u32 stats_id;		/* the service (kr_svc_names) */
	__u32 ring_id;
	__u32 key_hash;
	__u32 backend_id;	/* global backend id (routed) */
	__u32 slot;		/* ring slot that answered */
	__u32 point;		/* image point chosen (after the walk) */
	__u32 first_point;	/* image point of the plain lookup */
	__u32 walk;		/* failover steps */
	__u32 frame_len;
	__u8 verdict;		/* enum kr_trace_verdict */
	__u8 why;		/* enum kr_trace_why */
	__u8 fwd_mode;		/* enum kr_fwd_mode */
	__u8 key_type;		/* enum kr_key_type */
	__u16 key_len;
	__u8 ring_rc;		/* enum kr_route_reason */
	__u8 route_flags;	/* KR_TRACE_RF_*, and a hot key's replica << KR_TRACE_RF_REPLICA_SHIFT */
	__u64 generation;	/* of the slot's image (routed by the ring; else 0) */
	__u8 key[KR_KEY_BUF];	/* key_len bytes (bytes past key_len undefined) */
};
KR_LAYOUT_SIZE(kr_trace_event, 320);
KR_LAYOUT_AT(kr_trace_event, ts_ns, 0);
KR_LAYOUT_AT(kr_trace_event, cpu, 8);
KR_LAYOUT_AT(kr_trace_event, stats_id, 12);
KR_LAYOUT_AT(kr_trace_event, ring_id, 16);
KR_LAYOUT_AT(kr_trace_event, key_hash, 20);
KR_LAYOUT_AT(kr_trace_event, backend_id, 24);
KR_LAYOUT_AT(kr_trace_event, slot, 28);
KR_LAYOUT_AT(kr_trace_event, point, 32);
KR_LAYOUT_AT(kr_trace_event, first_point, 36);
KR_LAYOUT_AT(kr_trace_event, walk, 40);
KR_LAYOUT_AT(kr_trace_event, frame_len, 44);
KR_LAYOUT_AT(kr_trace_event, verdict, 48);
KR_LAYOUT_AT(kr_trace_event, why, 49);
KR_LAYOUT_AT(kr_trace_event, fwd_mode, 50);
KR_LAYOUT_AT(kr_trace_event, key_type, 51);
KR_LAYOUT_AT(kr_trace_event, key_len, 52);
KR_LAYOUT_AT(kr_trace_event, ring_rc, 54);
KR_LAYOUT_AT(kr_trace_event, route_flags, 55);
/* kr_trace_event.route_flags (0 from a build before them: a trace reader shows none) */
#define KR_TRACE_RF_FAILOVER	(1u << 0)	/* the walk moved past a down / non-member backend */
#define KR_TRACE_RF_SPILLED	(1u << 1)	/* ... a backend the key spills from */
#define KR_TRACE_RF_REPLICA	(1u << 2)	/* a hot key: routed to a replica */
#define KR_TRACE_RF_REPLICA_SHIFT	3	/* bits 3..6: the replica (0 = the owner) */
/* A TCP segment (never a hot key's replica): bit 7, and bits 3..4 say how it was routed */
#define KR_TRACE_RF_TCP		(1u << 7)
#define KR_TRACE_RF_FLOW	(1u << 3)	/* with RF_TCP: followed its flow entry */
#define KR_TRACE_RF_SYN		(1u << 4)	/* with RF_TCP: a SYN, routed by the ring */
_Static_assert(KR_MAX_REPLICAS <= 16, "the trace's replica field has 4 bits");
KR_LAYOUT_AT(kr_trace_event, generation, 56);
KR_LAYOUT_AT(kr_trace_event, key, 64);

/* Per-CPU figures of the trace (map kr_trace_stats, one entry), written only while on. */
struct kr_trace_stats {
	__u64 matched;		/* packets chosen by the sampling that passed the filters */
	__u64 sampled;		/* of those, written into the ring buffer */
	__u64 lost;		/* chosen, but the ring buffer was full (the reader is behind) */
	__u64 expired;		/* times the data path switched an expired trace off */
};
KR_LAYOUT_SIZE(kr_trace_stats, 32);
KR_LAYOUT_AT(kr_trace_stats, matched, 0);
KR_LAYOUT_AT(kr_trace_stats, sampled, 8);
KR_LAYOUT_AT(kr_trace_stats, lost, 16);
KR_LAYOUT_AT(kr_trace_stats, expired, 24);
#define KR_TRACE_RB_BYTES	(4u << 20)	/* kr_trace_rb: ~13,000 events */
#define KR_TRACE_WAKE_BYTES	(256u << 10)	/* wake the reader from this much data on */

/* kr_devices / kr_device_macs value: the MAC the router uses as source on an egress device
 * (l2 mode).  kr_device_macs (ARRAY indexed by ifindex, below KR_DEVICE_SLOTS) holds the
 * same entries as kr_devices (HASH), so that l2 forwarding finds them without a hash
 * lookup; its entries without KR_DEVICE_F_MAC are empty slots (the data path then looks in
 * kr_devices, which alone holds devices with larger ifindexes). */
#define KR_DEVICE_F_MAC		1u	/* flags: the entry holds a MAC */
struct kr_device {
	__u8 mac[6];
	__u8 flags;		/* KR_DEVICE_F_* */
	__u8 pad;
};
KR_LAYOUT_SIZE(kr_device, 8);
KR_LAYOUT_AT(kr_device, mac, 0);
KR_LAYOUT_AT(kr_device, flags, 6);
KR_LAYOUT_AT(kr_device, pad, 7);

/* Global counters (per-CPU array, one entry).  Every packet is counted in `seen` and in
 * exactly one of passed / routed / dropped; the other fields say why. */
struct kr_counters {
	__u64 seen;		/* packets the program ran on */
	__u64 passed;		/* returned to the stack untouched (any reason) */
	__u64 routed;		/* forwarded to a backend */
	__u64 dropped;		/* dropped by a service policy */
	__u64 passed_nomatch;	/* not IP/UDP, or no service for (VIP, port) */
	__u64 parse_error;	/* malformed or truncated L2/L3/L4 header */
	__u64 fragment;		/* non-first fragment (no UDP header): passed */
	__u64 no_key;		/* key not found in the packet (policy) */
	__u64 key_too_long;	/* key longer than KR_MAX_KEY_LEN (policy) */
	__u64 no_ring;		/* ring stage: nothing published for the ring id (policy) */
	__u64 bad_image;	/* ring stage: inconsistent image (policy) */
	__u64 all_down;		/* ring stage: every backend down (policy) */
	__u64 walk_limit;	/* ring stage: failover walk bound reached (policy) */
	__u64 failover_walks;	/* routed packets whose walk skipped at least one point */
	__u64 fwd_error;	/* routed, but forwarding failed (fib, room, MAC): passed */
	__u64 bad_service;	/* service entry with an unknown extractor / mode: passed */
	__u64 dropped_no_key;
	__u64 dropped_key_too_long;
	__u64 dropped_no_route;
	__u64 pad[3];
};
KR_LAYOUT_SIZE(kr_counters, 176);
KR_LAYOUT_AT(kr_counters, seen, 0);
KR_LAYOUT_AT(kr_counters, passed, 8);
KR_LAYOUT_AT(kr_counters, routed, 16);
KR_LAYOUT_AT(kr_counters, dropped, 24);
KR_LAYOUT_AT(kr_counters, passed_nomatch, 32);
KR_LAYOUT_AT(kr_counters, parse_error, 40);
KR_LAYOUT_AT(kr_counters, fragment, 48);
KR_LAYOUT_AT(kr_counters, no_key, 56);
KR_LAYOUT_AT(kr_counters, key_too_long, 64);
KR_LAYOUT_AT(kr_counters, no_ring, 72);
KR_LAYOUT_AT(kr_counters, bad_image, 80);
KR_LAYOUT_AT(kr_counters, all_down, 88);
KR_LAYOUT_AT(kr_counters, walk_limit, 96);
KR_LAYOUT_AT(kr_counters, failover_walks, 104);
KR_LAYOUT_AT(kr_counters, fwd_error, 112);
KR_LAYOUT_AT(kr_counters, bad_service, 120);
KR_LAYOUT_AT(kr_counters, dropped_no_key, 128);
KR_LAYOUT_AT(kr_counters, dropped_key_too_long, 136);
KR_LAYOUT_AT(kr_counters, dropped_no_route, 144);
KR_LAYOUT_AT(kr_counters, pad, 152);

/* Per backend (per-CPU array indexed by backend id). */
struct kr_backend_stats {
	__u64 packets;
	__u64 bytes;
};
KR_LAYOUT_SIZE(kr_backend_stats, 16);
KR_LAYOUT_AT(kr_backend_stats, packets, 0);
KR_LAYOUT_AT(kr_backend_stats, bytes, 8);

/* Debug trace of the last packet that reached key extraction (key found or not), written
 * only when the program's .rodata flag `kr_cfg_trace` is set (tests, parity checks). */
struct kr_trace {
	__u64 seq;		/* increments per traced packet */
	__u32 status;		/* 0 key found; else enum kr_key_status */
	__u32 key_len;
	__u32 key_hash;
	__u32 ring_rc;		/* kr_ring_route() return (0 = routed) */
	struct kr_route route;
	__u8 key[KR_KEY_BUF];
};
KR_LAYOUT_SIZE(kr_trace, 312);
KR_LAYOUT_AT(kr_trace, seq, 0);
KR_LAYOUT_AT(kr_trace, status, 8);
KR_LAYOUT_AT(kr_trace, key_len, 12);
KR_LAYOUT_AT(kr_trace, key_hash, 16);
KR_LAYOUT_AT(kr_trace, ring_rc, 20);
KR_LAYOUT_AT(kr_trace, route, 24);
KR_LAYOUT_AT(kr_trace, key, 56);

enum kr_key_status {
	KR_KEY_OK = 0,
	KR_KEY_NOT_FOUND = 1,
	KR_KEY_TOO_LONG = 2,
	KR_KEY_BAD_SERVICE = 3,
};

/* QUIC-LB maps, counters and trace (part of the data path's maps and .bss). */
#include "kr_quic_lb_kern_user.h"

#endif /* KR_DATAPATH_KERN_USER_H */
