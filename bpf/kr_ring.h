/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ring stage of the data path: ring maps, control words, slot choice, bucket-index
 * lookup and the failover walk.
 *
 *   int kr_ring_route(ring_id, key_hash, &route)         0 = routed, else enum kr_route_reason
 *   int kr_ring_route_bytes(ring_id, key_hash, bytes, &route)   same, counting bytes too
 *   int kr_ring_route_subset(ring_id, subset_id, key_hash, bytes, &route)   same, using only
 *                  the backends of subset subset_id (0 = all): the walk skips the others
 *
 * A ring whose control word has KR_CTL_HOT looks the key up in kr_hot_keys first: a hot
 * key makes kr_ring_route*() return KR_ROUTE_HOT after the key's point is found
 * (out->slot, out->first_index, out->nrep set; nothing counted yet); the caller picks the
 * replica from the packet's source in kr_ring_replica().
 *
 * It reads the global backends map `kr_backends` (kr_backend_map.h: its state field decides
 * whether the walk skips a backend), which belongs to the packet side.  A build may define
 * KR_RING_BACKEND_ID(ring, hdr, b, &id) first: the step from the point's ring-local backend
 * b to its global id (default kr_bt_get(), the image's backend table; 0 or -1 = bad image).
 *
 * Maps defined here (all written by userspace only, except the counters and the trace):
 *   kr_rings       ARRAY_OF_MAPS, key ring_id * 2 + slot -> one ring image (an ARRAY of
 *                  KR_CHUNK_BYTES chunks, sized per ring, frozen, read-only for programs)
 *   kr_ring_ctl    ARRAY, key ring_id -> __u64 control word (active slot, fraction; see
 *                  kr_image_kern_user.h), written in one update by the tool
 *   kr_slot_stats  PERCPU_ARRAY, key ring_id * 2 + slot -> struct kr_slot_stats
 *   kr_ring_trace  ARRAY, one struct kr_ring_trace: the last route, when kr_ring_trace_on
 *   kr_subset_members  HASH (no prealloc), struct kr_subset_key -> __u32 (1): membership
 *
 * Subsets: a backend is eligible when it is up and, for subset_id != 0, a member.  A key
 * whose point's backend is not eligible walks on, exactly as for a down backend; since the
 * image keeps deduplicated points after their winner, the answer is the one of a ring
 * built from the eligible backends alone.
 */
#ifndef KR_RING_H
#define KR_RING_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "kr_datapath_kern_user.h"
#include "kr_parse.h"	/* struct kr_pkt: a hot key's replica is the packet source's */
#include "kr_backend_map.h"

#ifndef KR_RING_BACKEND_ID
#define KR_RING_BACKEND_ID(ring, hdr, b, id) kr_bt_get(ring, hdr, b, id)
#endif

/* Template of the per-ring image maps (userspace creates each one with the ring's own
 * max_entries; BPF_F_INNER_MAP lets the sizes differ, BPF_F_RDONLY_PROG keeps programs from
 * writing a published image). */
struct kr_ring_image_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_RDONLY_PROG);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, KR_CHUNK_BYTES);	/* raw chunks: the image carries no BTF */
};

/* Published ring images: key ring_id * 2 + slot.  Written by `keyrouter` (publish.c). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, KR_MAX_RINGS * 2);
	__type(key, __u32);
	__array(values, struct kr_ring_image_map);
} KR_MAP_NAME_RINGS SEC(".maps");

/* Control word per ring id (active slot, migration fraction). Written by `keyrouter`. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KR_MAX_RINGS);
	__type(key, __u32);
	__type(value, __u64);
} KR_MAP_NAME_RING_CTL SEC(".maps");

/* Ring version counters: key ring_id * 2 + slot.  Written by the programs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KR_MAX_RINGS * 2);
	__type(key, __u32);
	__type(value, struct kr_slot_stats);
} KR_MAP_NAME_SLOT_STATS SEC(".maps");

/* Last route decision, for `lookup --via-kernel` and tests (only with kr_ring_trace_on). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kr_ring_trace);
} KR_MAP_NAME_RING_TRACE SEC(".maps");

/* Hot keys of the rings (kr_hot_key -> kr_hot_val).  Written by `keyrouter`. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, KR_MAX_HOT_KEYS);
	__type(key, struct kr_hot_key);
	__type(value, struct kr_hot_val);
} KR_MAP_NAME_HOT_KEYS SEC(".maps");

/* kr_ring_replica()'s distinct backends (one per CPU). */
struct kr_replica_seen {
	__u32 n;
	__u32 b[KR_MAX_REPLICAS];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kr_replica_seen);
} KR_MAP_NAME_REP_SEEN SEC(".maps");

/* Spill and replica counters: key ring_id * 2 + slot.  Written by the programs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KR_MAX_RINGS * 2);
	__type(key, __u32);
	__type(value, struct kr_slot_hot);
} KR_MAP_NAME_SLOT_HOT SEC(".maps");

/* Subset membership: {subset_id, global backend id} present = member.  Written by
 * `keyrouter apply` (members before the services that use the subset). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, KR_MAX_SUBSET_MEMBERS);
	__type(key, struct kr_subset_key);
	__type(value, __u32);
} KR_MAP_NAME_SUBSET_MEMBERS SEC(".maps");

/* Set before load (skeleton rodata) to record every route in kr_ring_trace; when 0 the
 * verifier prunes the tracing code, so it costs nothing. */
const volatile __u32 kr_ring_trace_on = 0;

static __always_inline const void *kr_chunk_get(void *ring, __u32 n)
{
	return bpf_map_lookup_elem(ring, &n);
}
#define KR_CHUNK_GET(ring, n) kr_chunk_get(ring, n)
#include "kr_lookup.h"

/* kr_ring_route*(): the key is a hot key of the ring (internal: the caller goes on with
 * kr_ring_replica(); never a verdict). */
#define KR_ROUTE_HOT		0x40

/* Is global backend id sk->backend_id up (and in subset sk->subset_id, unless 0)?  Unknown
 * ids and ids beyond the map count as not up.  (One key on the stack serves as the id
 * and the membership key: the data path's stack is tight.) */
static __always_inline int kr_backend_id_up(const __u32 *id)
{
	const struct kr_backend *be = bpf_map_lookup_elem(&kr_backends, id);

	return be && be->state == KR_BACKEND_UP;
}

/* Ring-local backend b -> global id (sk->backend_id), up and (subset sk->subset_id != 0) a
 * member: 1 yes, 0 no, -1 bad image.  Without spill: the benchmark variants' test. */
static __always_inline int kr_ring_backend_up(void *ring, const struct kr_image_hdr *hdr,
					      __u32 b, struct kr_subset_key *sk)
{
	if (kr_bt_get(ring, hdr, b, &sk->backend_id))
		return -1;
	if (!kr_backend_id_up(&sk->backend_id))
		return 0;
	return !sk->subset_id || bpf_map_lookup_elem(&kr_subset_members, sk);
}

/* Does key key_hash spill from backend be (its spill fraction; never with
 * KR_RT_F_NOSPILL in flags)?  The one spill test of the fast path and the walk. */
static __always_inline int kr_backend_spills(const struct kr_backend *be, __u32 key_hash,
					     __u32 flags)
{
	return be->spill && !(flags & KR_RT_F_NOSPILL) && kr_spill_hit(key_hash, be->spill);
}

/* The walk's test of backend r->subset.backend_id for the key r->key_hash: 0 not eligible
 * (down, draining, unknown, not a member of the subset), 1 eligible, 2 eligible but the
 * key spills from it (its spill fraction, unless r->flags has KR_RT_F_NOSPILL). */
static __always_inline int kr_backend_ok(const struct kr_route *r)
{
	const struct kr_subset_key *sk = &r->subset;
	const struct kr_backend *be = bpf_map_lookup_elem(&kr_backends, &sk->backend_id);

	if (!be || be->state != KR_BACKEND_UP)
		return 0;
	if (sk->subset_id && !bpf_map_lookup_elem(&kr_subset_members, sk))
		return 0;
	if (kr_backend_spills(be, r->key_hash, r->flags))
		return 2;
	return 1;
}

/* Ring-local backend b of the image -> global id (in out->subset.backend_id), and
 * kr_backend_ok() of it, or -1 for a bad image. */
static __always_inline int kr_ring_backend_ok(void *ring, const struct kr_image_hdr *hdr,
					      __u32 b, struct kr_route *out)
{
	if (kr_bt_get(ring, hdr, b, &out->subset.backend_id))
		return -1;
	return kr_backend_ok(out);
}

/* Does any backend of the table (its first KR_ANY_UP_SCAN entries) answer eligible? */
static __always_inline int kr_ring_any_up(void *ring, const struct kr_image_hdr *hdr,
					  struct kr_route *out)
{
	__u32 b;

	for (b = 0; b < KR_ANY_UP_SCAN; b++) {
		if (b >= hdr->nbackends)
			return 0;
		if (kr_ring_backend_ok(ring, hdr, b, out) > 0)
			return 1;
	}
	return 1;	/* too many to tell: assume some are up (reported as the walk limit) */
}

static __always_inline void kr_route_set(struct kr_route *out, __u32 id, __u32 idx, __u32 walk)
{
	out->backend_id = id;
	out->image_index = idx;
	out->walk = walk;
}

/* After a walk that found nothing: all down, or the walk limit. */
static __always_inline int kr_ring_walk_end(void *ring, const struct kr_image_hdr *hdr,
					    __u32 limit, struct kr_route *out)
{
	if (limit == hdr->npoints - 1 || !kr_ring_any_up(ring, hdr, out))
		return KR_ROUTE_ALL_DOWN;
	return KR_ROUTE_WALK_LIMIT;
}

/*
 * Failover walk from image point idx (whose backend is not up, or spills the key, or,
 * with a subset, maybe not a member: checked first): the following points in image order,
 * wrapping, at most KR_MAX_WALK of them, until one whose backend is eligible and does not
 * spill the key.  The image keeps, right after each winning point, the duplicates dedup
 * removed, so skipping a backend gives exactly the ring built without it.  Consecutive
 * points of one backend are checked once.  Spill never makes a key unroutable: when every
 * eligible backend the walk reaches spills it, it goes to the first of them (the backend
 * it has without spill).
 */
static __always_inline int kr_ring_walk(void *ring, const struct kr_image_hdr *hdr, __u32 idx,
					__u32 down_b, struct kr_route *out)
{
	__u32 n = hdr->npoints, limit, last = down_b, ph, b;
	int i, ok;

	/* The first backend that spills the key is kept in *out, with KR_RT_F_SPILLED (in
	 * memory, not in registers: the verifier's states of the loop stay few). */
	ok = kr_ring_backend_ok(ring, hdr, down_b, out);	/* the key's own point */
	if (ok < 0)
		return KR_ROUTE_BAD_IMAGE;
	kr_route_set(out, out->subset.backend_id, idx, 0);
	if (ok == 1)
		return KR_ROUTE_OK;
	out->flags |= ok == 2 ? KR_RT_F_SPILLED : KR_RT_F_FAILOVER;
	limit = n - 1 < KR_MAX_WALK ? n - 1 : KR_MAX_WALK;
	for (i = 1; i <= KR_MAX_WALK; i++) {
		if ((__u32)i > limit)
			break;
		idx = (idx + 1) & kr_lt_mask(idx + 1, n);	/* wrap, branchless */
		if (kr_point_get(ring, hdr, idx, &ph, &b))
			return KR_ROUTE_BAD_IMAGE;
		if (b == last)
			continue;
		last = b;
		ok = kr_ring_backend_ok(ring, hdr, b, out);
		if (ok < 0)
			return KR_ROUTE_BAD_IMAGE;
		if (ok == 1) {
			kr_route_set(out, out->subset.backend_id, idx, i);
			return KR_ROUTE_OK;
		}
		if (ok == 0) {
			out->flags |= KR_RT_F_FAILOVER;
		} else if (!(out->flags & KR_RT_F_SPILLED)) {
			out->flags |= KR_RT_F_SPILLED;
			kr_route_set(out, out->subset.backend_id, idx, i);
		}
	}
	if (out->flags & KR_RT_F_SPILLED) {	/* every backend reached spills the key: */
		out->flags &= ~KR_RT_F_SPILLED;	/* the first of them (its route without spill) */
		if (!out->walk)
			out->flags &= ~KR_RT_F_FAILOVER;
		return KR_ROUTE_OK;
	}
	out->backend_id = out->image_index = out->walk = 0;
	return kr_ring_walk_end(ring, hdr, limit, out);
}

/*
 * The walk as a global subprogram: the verifier checks it once, apart from the fast path
 * (it runs only when the key's own backend is down or spills the key).  It finds the ring
 * again by its key; if a publish replaced the image in between, idx is checked against the
 * new image (a missing chunk is BAD_IMAGE, else the packet goes to an up backend of the new
 * ring).
 */
__noinline int kr_ring_walk_slow(__u32 ring_key, __u32 idx, __u32 down_b, struct kr_route *out)
{
	const struct kr_image_hdr *hdr;
	__u32 zero = 0;
	void *ring;

	if (!out)
		return KR_ROUTE_BAD_IMAGE;
	ring = bpf_map_lookup_elem(&kr_rings, &ring_key);
	if (!ring)
		return KR_ROUTE_NO_RING;
	hdr = bpf_map_lookup_elem(ring, &zero);
	if (!hdr)
		return KR_ROUTE_BAD_IMAGE;
	return kr_ring_walk(ring, hdr, idx, down_b, out);
}

/* Route key_hash with one ring image (ring_key: its key in kr_rings). */
static __always_inline int kr_ring_pick(void *ring, __u32 ring_key, __u32 key_hash,
					struct kr_route *out)
{
	const struct kr_image_hdr *hdr;
	const struct kr_backend *be;
	__u32 zero = 0, idx, b, ph, id;

	hdr = bpf_map_lookup_elem(ring, &zero);
	if (!hdr || hdr->magic != KR_IMAGE_MAGIC)
		return KR_ROUTE_BAD_IMAGE;
	if (kr_image_find(ring, hdr, key_hash, &idx, &b))
		return KR_ROUTE_BAD_IMAGE;
	out->first_index = idx;
	if (out->nrep)
		return KR_ROUTE_HOT;	/* a hot key: kr_ring_replica() goes on */
	if (b == KR_BACKEND_UNKNOWN && kr_point_get(ring, hdr, idx, &ph, &b))
		return KR_ROUTE_BAD_IMAGE;
	if (KR_RING_BACKEND_ID(ring, hdr, b, &id))
		return KR_ROUTE_BAD_IMAGE;
	/* a subset's membership is checked in the walk (kept off this stack frame); the
	 * backend entry is read anyway for its state: spill costs no other read */
	if (!out->subset.subset_id) {
		be = bpf_map_lookup_elem(&kr_backends, &id);
		if (be && be->state == KR_BACKEND_UP &&
		    !kr_backend_spills(be, key_hash, out->flags)) {
			kr_route_set(out, id, idx, 0);
			return KR_ROUTE_OK;
		}
	}
	return kr_ring_walk_slow(ring_key, idx, b, out);
}

/* Did the walk pass a backend that was down (or not a member), not only spilled ones? */
#define kr_route_failover(r) ((r)->walk && ((r)->flags & KR_RT_F_FAILOVER))

/* Only for the packets that spilled or went to a replica: one more lookup. */
static __always_inline void kr_ring_count_hot(__u32 key, const struct kr_route *r)
{
	struct kr_slot_hot *sh = bpf_map_lookup_elem(&kr_slot_hot, &key);

	if (!sh)
		return;
	if (r->flags & KR_RT_F_SPILLED)
		sh->spilled++;
	if ((r->flags & KR_RT_F_REPLICA) && r->replica)
		sh->replica++;
}

static __always_inline void kr_ring_count(__u32 key, int reason, __u64 bytes,
					  const struct kr_route *r)
{
	struct kr_slot_stats *st = bpf_map_lookup_elem(&kr_slot_stats, &key);

	if (!st)
		return;
	switch (reason) {
	case KR_ROUTE_OK:
		st->packets++;
		st->bytes += bytes;
		if (kr_route_failover(r))
			st->failover++;
		if (r->flags & (KR_RT_F_SPILLED | KR_RT_F_REPLICA))
			kr_ring_count_hot(key, r);
		break;
	case KR_ROUTE_NO_RING:
		st->no_ring++;
		break;
	case KR_ROUTE_BAD_IMAGE:
		st->bad_image++;
		break;
	case KR_ROUTE_ALL_DOWN:
		st->all_down++;
		break;
	default:
		st->walk_limit++;
		break;
	}
}

static __always_inline void kr_ring_trace_put(__u32 ring_id, int reason, const struct kr_route *r)
{
	__u32 zero = 0;
	struct kr_ring_trace *t = bpf_map_lookup_elem(&kr_ring_trace, &zero);

	if (!t)
		return;
	t->seq++;
	t->route = *r;
	t->reason = reason;
	t->ring_id = ring_id;
}

/* Is out->key_hash a hot key of ring ring_id?  Then out->nrep = its replicas.  A global
 * function (only rings with hot keys call it): its lookup key stays off the caller's stack
 * frame, which the three-frame limit counts. */
__noinline int kr_ring_hot(__u32 ring_id, struct kr_route *out)
{
	struct kr_hot_key hk;
	const struct kr_hot_val *hv;

	if (!out)
		return 0;
	hk.ring_id = ring_id;
	hk.key_hash = out->key_hash;
	hv = bpf_map_lookup_elem(&kr_hot_keys, &hk);
	if (!hv || hv->replicas < KR_MIN_REPLICAS)
		return 0;
	out->nrep = hv->replicas < KR_MAX_REPLICAS ? hv->replicas : KR_MAX_REPLICAS;
	return 1;
}

/*
 * The walk of a hot key: the out->replica + 1-th distinct eligible backend from
 * the key's point, in image order (replica 0: the key's owner without spill; spill does
 * not apply).  Fewer distinct eligible backends within KR_MAX_WALK points: replica 0.
 * Counts and traces as kr_ring_route().
 */
static __always_inline int kr_ring_replica_walk(void *ring, const struct kr_image_hdr *hdr,
						struct kr_route *out)
{
	__u32 zero = 0, b, ph, n, limit, last = KR_BACKEND_UNKNOWN, idx = out->first_index;
	struct kr_replica_seen *sc;
	int i, j, ok, dup, found = 0;

	/* the distinct backends found so far, in a per-CPU scratch (map memory: the
	 * verifier does not tell the loop's iterations apart by them) */
	sc = bpf_map_lookup_elem(&kr_rep_seen, &zero);
	if (!sc)
		return KR_ROUTE_BAD_IMAGE;
	sc->n = 0;
	n = hdr->npoints;
	limit = n - 1 < KR_MAX_WALK ? n - 1 : KR_MAX_WALK;
	for (i = 0; i <= KR_MAX_WALK; i++) {
		if ((__u32)i > limit)
			break;
		if (i)
			idx = (idx + 1) & kr_lt_mask(idx + 1, n);
		if (kr_point_get(ring, hdr, idx, &ph, &b))
			return KR_ROUTE_BAD_IMAGE;
		if (b == last)
			continue;
		last = b;
		dup = 0;
		for (j = 0; j < KR_MAX_REPLICAS; j++)
			dup |= (__u32)j < sc->n && sc->b[j] == b;
		if (dup)
			continue;
		ok = kr_ring_backend_ok(ring, hdr, b, out);
		if (ok < 0)
			return KR_ROUTE_BAD_IMAGE;
		if (!ok) {
			out->flags |= KR_RT_F_FAILOVER;
			continue;
		}
		if (sc->n == out->replica || !sc->n) {	/* the one, or replica 0 in case */
			kr_route_set(out, out->subset.backend_id, idx, i);
			found = 1;
			if (sc->n == out->replica)
				return KR_ROUTE_OK;
		}
		if (sc->n >= KR_MAX_REPLICAS - 1)
			break;
		sc->b[sc->n & (KR_MAX_REPLICAS - 1)] = b;
		sc->n++;
	}
	if (found) {		/* fewer distinct eligible backends: replica 0 */
		out->replica = 0;
		return KR_ROUTE_OK;
	}
	return kr_ring_walk_end(ring, hdr, limit, out);
}

/*
 * A hot key (kr_ring_route*() returned KR_ROUTE_HOT: out->slot, out->first_index and
 * out->nrep set, the ring id in out->image_index): the replica of the packet's source,
 * out->replica = kr_replica_pick() % out->nrep; counts and traces as kr_ring_route()
 * does.  A global function: verified once, and off the callers' stack frames.
 */
__noinline int kr_ring_replica(const struct kr_pkt *pkt, __u32 bytes, struct kr_route *out)
{
	const struct kr_image_hdr *hdr;
	__u32 zero = 0, key, ring_id;
	int reason = KR_ROUTE_BAD_IMAGE;
	void *ring;

	if (!out || !pkt)
		return KR_ROUTE_BAD_IMAGE;
	ring_id = out->image_index;	/* kr_ring_route*() left it there */
	out->image_index = 0;
	out->replica = out->nrep ? kr_replica_pick(pkt->src, pkt->family,
						   (__u32)pkt->sport[0] << 8 | pkt->sport[1]) %
				   out->nrep : 0;
	out->flags |= KR_RT_F_REPLICA | KR_RT_F_NOSPILL;
	key = ring_id * 2 + (out->slot & 1);
	ring = bpf_map_lookup_elem(&kr_rings, &key);
	if (!ring) {
		reason = KR_ROUTE_NO_RING;
		goto out;
	}
	hdr = bpf_map_lookup_elem(ring, &zero);
	if (hdr && out->first_index < hdr->npoints)
		reason = kr_ring_replica_walk(ring, hdr, out);
	kr_ring_count(key, reason, bytes, out);
out:
	if (kr_ring_trace_on)
		kr_ring_trace_put(ring_id, reason, out);
	return reason;
}

/*
 * The ring stage: choose the slot of ring ring_id for key_hash (control word), find the
 * key's point in that slot's image, walk past down backends.  Fills *out (slot and
 * key_hash always; the rest when routed) and counts the packet in its slot.
 */
static __always_inline int kr_ring_route_subset(__u32 ring_id, __u32 subset, __u32 key_hash,
						__u64 bytes, struct kr_route *out)
{
	const __u64 *ctl;
	__u32 key;
	void *ring;
	int reason;

	out->key_hash = key_hash;
	out->subset.subset_id = subset;
	out->subset.backend_id = 0;
	out->slot = 0;
	out->flags &= KR_RT_F_NOSPILL | KR_RT_F_TCP | KR_RT_F_SYN;
	out->replica = out->nrep = 0;
	out->backend_id = out->image_index = out->first_index = out->walk = 0;
	ctl = bpf_map_lookup_elem(&kr_ring_ctl, &ring_id);
	if (!ctl) {
		reason = KR_ROUTE_NO_RING;
		goto out;
	}
	out->slot = kr_ctl_slot(*ctl, key_hash);
	/* hot keys: looked up only in rings that have some (a bit of the word just read) */
	if ((*ctl & KR_CTL_HOT) && !(out->flags & KR_RT_F_NOSPILL))
		kr_ring_hot(ring_id, out);
	key = ring_id * 2 + out->slot;
	ring = bpf_map_lookup_elem(&kr_rings, &key);
	reason = ring ? kr_ring_pick(ring, key, key_hash, out) : KR_ROUTE_NO_RING;
	if (reason == KR_ROUTE_HOT) {
		out->image_index = ring_id;	/* for kr_ring_replica() */
		return reason;
	}
	kr_ring_count(key, reason, bytes, out);
out:
	if (kr_ring_trace_on)
		kr_ring_trace_put(ring_id, reason, out);
	return reason;
}

static __always_inline int kr_ring_route_bytes(__u32 ring_id, __u32 key_hash, __u64 bytes,
					       struct kr_route *out)
{
	return kr_ring_route_subset(ring_id, 0, key_hash, bytes, out);
}

static __always_inline int kr_ring_route(__u32 ring_id, __u32 key_hash, struct kr_route *out)
{
	return kr_ring_route_bytes(ring_id, key_hash, 0, out);
}

#endif /* KR_RING_H */
