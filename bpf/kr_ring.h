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

/* Is global backend id sk->backend_id up (and in subset sk->subset_id, unless 0)?  Unknown
 * ids and ids beyond the map count as not up.  (One key on the stack serves as the id
 * and the membership key: the data path's stack is tight.) */
static __always_inline int kr_backend_id_up(const __u32 *id)
{
	const struct kr_backend *be = bpf_map_lookup_elem(&kr_backends, id);

	return be && be->state == KR_BACKEND_UP;
}

static __always_inline int kr_backend_up(const struct kr_subset_key *sk)
{
	if (!kr_backend_id_up(&sk->backend_id))
		return 0;
	return !sk->subset_id || bpf_map_lookup_elem(&kr_subset_members, sk);
}

/* Ring-local backend b of the image -> global id (in sk->backend_id), and whether that
 * backend is eligible for subset sk->subset_id: 1 yes, 0 no, -1 bad image. */
static __always_inline int kr_ring_backend_up(void *ring, const struct kr_image_hdr *hdr,
					      __u32 b, struct kr_subset_key *sk)
{
	if (kr_bt_get(ring, hdr, b, &sk->backend_id))
		return -1;
	return kr_backend_up(sk);
}

/* Does any backend of the table (its first KR_ANY_UP_SCAN entries) answer eligible? */
static __always_inline int kr_ring_any_up(void *ring, const struct kr_image_hdr *hdr,
					  struct kr_subset_key *sk)
{
	__u32 b;

	for (b = 0; b < KR_ANY_UP_SCAN; b++) {
		if (b >= hdr->nbackends)
			return 0;
		if (kr_ring_backend_up(ring, hdr, b, sk) > 0)
			return 1;
	}
	return 1;	/* too many to tell: assume some are up (reported as the walk limit) */
}

/*
 * Failover walk from image point idx (whose backend is not up, or, with a subset, maybe
 * not a member: checked first): the following points in
 * image order, wrapping, at most KR_MAX_WALK of them, until one whose backend is up.  The
 * image keeps, right after each winning point, the duplicates dedup removed, so skipping
 * a backend gives exactly the ring built without it.  Consecutive points of one backend
 * are checked once.
 */
static __always_inline int kr_ring_walk(void *ring, const struct kr_image_hdr *hdr, __u32 idx,
					__u32 down_b, struct kr_route *out)
{
	struct kr_subset_key *sk = &out->subset;
	__u32 n = hdr->npoints, limit, last = down_b, ph, b;
	int i, up;

	if (sk->subset_id) {	/* the key's own point: up, but is it a member? */
		up = kr_ring_backend_up(ring, hdr, down_b, sk);
		if (up < 0)
			return KR_ROUTE_BAD_IMAGE;
		if (up) {
			out->backend_id = sk->backend_id;
			out->image_index = idx;
			out->walk = 0;
			return KR_ROUTE_OK;
		}
	}
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
		up = kr_ring_backend_up(ring, hdr, b, sk);
		if (up < 0)
			return KR_ROUTE_BAD_IMAGE;
		if (up) {
			out->backend_id = sk->backend_id;
			out->image_index = idx;
			out->walk = i;
			return KR_ROUTE_OK;
		}
	}
	if (limit == n - 1 || !kr_ring_any_up(ring, hdr, sk))
		return KR_ROUTE_ALL_DOWN;
	return KR_ROUTE_WALK_LIMIT;
}

/*
 * The walk as a global subprogram: the verifier checks it once, apart from the fast path
 * (it runs only when the key's own backend is down).  It finds the ring again by its key;
 * if a publish replaced the image in between, idx is checked against the new image (a
 * missing chunk is BAD_IMAGE, else the packet goes to an up backend of the new ring).
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
	__u32 zero = 0, idx, b, ph, id;

	hdr = bpf_map_lookup_elem(ring, &zero);
	if (!hdr || hdr->magic != KR_IMAGE_MAGIC)
		return KR_ROUTE_BAD_IMAGE;
	if (kr_image_find(ring, hdr, key_hash, &idx, &b))
		return KR_ROUTE_BAD_IMAGE;
	out->first_index = idx;
	if (b == KR_BACKEND_UNKNOWN && kr_point_get(ring, hdr, idx, &ph, &b))
		return KR_ROUTE_BAD_IMAGE;
	if (KR_RING_BACKEND_ID(ring, hdr, b, &id))
		return KR_ROUTE_BAD_IMAGE;
	/* a subset's membership is checked in the walk (kept off this stack frame) */
	if (!out->subset.subset_id && kr_backend_id_up(&id)) {
		out->backend_id = id;
		out->image_index = idx;
		out->walk = 0;
		return KR_ROUTE_OK;
	}
	return kr_ring_walk_slow(ring_key, idx, b, out);
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
		if (r->walk)
			st->failover++;
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
	out->backend_id = out->image_index = out->first_index = out->walk = 0;
	ctl = bpf_map_lookup_elem(&kr_ring_ctl, &ring_id);
	if (!ctl) {
		reason = KR_ROUTE_NO_RING;
		goto out;
	}
	out->slot = kr_ctl_slot(*ctl, key_hash);
	key = ring_id * 2 + out->slot;
	ring = bpf_map_lookup_elem(&kr_rings, &key);
	reason = ring ? kr_ring_pick(ring, key, key_hash, out) : KR_ROUTE_NO_RING;
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
