/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel ring image: what one published ring version looks like inside its BPF map.
 * Included by the BPF programs (bpf/) and by the userspace encoder (user/).
 *
 * One ring version = one BPF_MAP_TYPE_ARRAY (BPF_F_INNER_MAP, sized for that ring only)
 * whose values are fixed chunks of KR_CHUNK_BYTES.  The encoder fills it completely,
 * freezes it (BPF_MAP_FREEZE) and only then publishes it into a slot of the outer
 * ARRAY_OF_MAPS; the data plane only ever reads it.
 *
 *   chunk 0                    struct kr_image_hdr; then, at byte KR_BT0_OFF, the backend
 *                              table when it has at most KR_BT0_MAX entries (bt_chunk == 0:
 *                              the lookup reads it from the header's chunk, no second
 *                              chunk lookup); the rest zero
 *   chunks [idx_chunk, ...)    bucket index: (1 << bucket_bits) + 1 __u32 entries,
 *                              KR_IDX_PER_CHUNK per chunk.  Entry k = image index of the
 *                              first point whose hash >= k << (32 - bucket_bits); the last
 *                              entry (the sentinel) = npoints.
 *   chunks [bt_chunk, ...)     backend table (rings of more than KR_BT0_MAX backends; else
 *                              bt_chunk == 0 and the table is in chunk 0): nbackends __u32
 *                              entries, KR_BT_PER_CHUNK per chunk: ring-local backend index
 *                              -> global backend id.
 *   chunks [pt_chunk, ...)     points: npoints struct kr_point, KR_PTS_PER_CHUNK per chunk;
 *                              the rest of the last chunk is 0xff bytes (hash 0xffffffff:
 *                              never below a key, so the lookup counts windows unmasked).
 *
 * Every section starts on a chunk boundary, so a chunk never mixes two sections.
 *
 * Points and duplicates.  The points are the ring in ring order (hash ascending).  Where
 * deduplication removed points (equal hash, other backend), the image keeps them right
 * after the point that won (in tie order), so a walk that skips the winner's backend finds
 * exactly what a ring built without that backend would give.  A plain lookup (first point
 * with hash >= h) still lands on the winner, the first of each run of equal hashes.
 * Image indices therefore differ from ring indices (those of the deduplicated ring, as
 * pingora-ketama numbers them) once a duplicate has been kept: ring index = image index -
 * number of kept duplicates before it.  ndups == 0 means the two are the same.
 */
#ifndef KR_IMAGE_KERN_USER_H
#define KR_IMAGE_KERN_USER_H

#ifndef __bpf__
#include <linux/types.h>
#endif
#include "kr_layout.h"

#define KR_IMAGE_MAGIC		0x4b52494du	/* "KRIM" */
#define KR_IMAGE_FORMAT		2u	/* 2: 12 KiB chunks, 128..255 points per bucket */

#define KR_CHUNK_BYTES		12288u		/* a multiple of 8: no rounding by the array map */
#define KR_PTS_PER_CHUNK	2048u		/* 2048 * 6 = 12288 */
#define KR_PTS_SHIFT		11
#define KR_IDX_PER_CHUNK	3072u		/* 3072 * 4 = 12288 */
#define KR_BT_PER_CHUNK		3072u

#define KR_MAX_BACKENDS		65536u		/* ring-local index is 16 bits */
#define KR_MAX_POINTS		(1u << 28)	/* largest image: 1.5 GiB of points */
#define KR_MIN_BUCKET_BITS	1u
#define KR_MAX_BUCKET_BITS	24u
/* Target density: 128..255 points per bucket on average: the index is <= 1/32 byte per
 * point (128 KiB at 4M points, 512 KiB at 16M), small enough to stay in the CPU's caches
 * while the points are read at random; the key's place inside its bucket is interpolated
 * (hashes are uniform) to within a few points (kr_lookup.h). */
#define KR_BUCKET_DENSITY_LOG2	7u
/* A binary search over at most 2^32 points never needs more steps than this. */
#define KR_SEARCH_STEPS		33

/* One ring point, 6 bytes, 2-byte aligned: the hash is read as two 16-bit halves so that
 * neither compiler emits unaligned 32-bit loads. */
struct kr_point {
	__u16 hash_lo;
	__u16 hash_hi;
	__u16 backend;		/* ring-local backend index */
};
KR_LAYOUT_SIZE(kr_point, 6);
KR_LAYOUT_AT(kr_point, hash_lo, 0);
KR_LAYOUT_AT(kr_point, hash_hi, 2);
KR_LAYOUT_AT(kr_point, backend, 4);

struct kr_image_hdr {
	__u32 magic;		/* KR_IMAGE_MAGIC */
	__u32 format;		/* KR_IMAGE_FORMAT */
	__u32 npoints;		/* points in the image, kept duplicates included */
	__u32 ndups;		/* kept duplicates (npoints - ndups = points of the ring) */
	__u32 nbackends;	/* entries of the backend table */
	__u32 bucket_bits;	/* KR_MIN_BUCKET_BITS..KR_MAX_BUCKET_BITS */
	__u32 max_bucket;	/* largest bucket, in points (informational) */
	__u32 idx_chunk;	/* first chunk of the bucket index */
	__u32 bt_chunk;		/* first chunk of the backend table */
	__u32 pt_chunk;		/* first chunk of the points */
	__u32 nchunks;		/* max_entries of the map */
	__u32 ring_version;	/* 1 = ketama v1, 2 = v2 */
	__u32 point_multiple;
	__u32 digest;		/* ring digest (deduplicated ring, as in the vectors' headers) */
	__u64 generation;	/* set by the publisher, increases per publish */
	__u64 published_ns;	/* CLOCK_REALTIME of the publish, informational */
	/* The tool's note, written before the publish (ring stage): the share of the key space
	 * this image's ring owns differently from the image of generation moved_vs in the
	 * other slot, in units of 2^-32 (0 .. 2^32); moved_vs = 0: no note.  Read by `ring
	 * status` instead of diffing two images at every call; not read by the data path. */
	__u64 moved;
	__u64 moved_vs;
};
KR_LAYOUT_SIZE(kr_image_hdr, 88);
KR_LAYOUT_AT(kr_image_hdr, magic, 0);
KR_LAYOUT_AT(kr_image_hdr, format, 4);
KR_LAYOUT_AT(kr_image_hdr, npoints, 8);
KR_LAYOUT_AT(kr_image_hdr, ndups, 12);
KR_LAYOUT_AT(kr_image_hdr, nbackends, 16);
KR_LAYOUT_AT(kr_image_hdr, bucket_bits, 20);
KR_LAYOUT_AT(kr_image_hdr, max_bucket, 24);
KR_LAYOUT_AT(kr_image_hdr, idx_chunk, 28);
KR_LAYOUT_AT(kr_image_hdr, bt_chunk, 32);
KR_LAYOUT_AT(kr_image_hdr, pt_chunk, 36);
KR_LAYOUT_AT(kr_image_hdr, nchunks, 40);
KR_LAYOUT_AT(kr_image_hdr, ring_version, 44);
KR_LAYOUT_AT(kr_image_hdr, point_multiple, 48);
KR_LAYOUT_AT(kr_image_hdr, digest, 52);
KR_LAYOUT_AT(kr_image_hdr, generation, 56);
KR_LAYOUT_AT(kr_image_hdr, published_ns, 64);
KR_LAYOUT_AT(kr_image_hdr, moved, 72);
KR_LAYOUT_AT(kr_image_hdr, moved_vs, 80);
_Static_assert(sizeof(struct kr_image_hdr) <= KR_CHUNK_BYTES, "header fits chunk 0");

/* The backend table in chunk 0, after the header (bt_chunk == 0). */
#define KR_BT0_OFF		128u
#define KR_BT0_MAX		((KR_CHUNK_BYTES - KR_BT0_OFF) / 4)	/* 3040 backends */
_Static_assert(sizeof(struct kr_image_hdr) <= KR_BT0_OFF, "header before the chunk-0 table");

/* Chunks of the backend table of a ring of nb backends (0: it is in chunk 0). */
static inline __u32 kr_image_bt_chunks(__u32 nb)
{
	return nb <= KR_BT0_MAX ? 0 : (nb + KR_BT_PER_CHUNK - 1) / KR_BT_PER_CHUNK;
}

/* Byte offset of the backend table in the image (a whole image in one buffer). */
static inline __u64 kr_image_bt_off(const struct kr_image_hdr *h)
{
	return h->bt_chunk ? (__u64)h->bt_chunk * KR_CHUNK_BYTES : KR_BT0_OFF;
}

static inline __u32 kr_point_hash(const struct kr_point *p)
{
	return (__u32)p->hash_lo | ((__u32)p->hash_hi << 16);
}

/* Bucket bits for a ring of n points: 128..255 points per bucket on average. */
static inline __u32 kr_image_bucket_bits(__u32 n)
{
	__u32 b = 0;

	while (b < KR_MAX_BUCKET_BITS && ((__u64)n >> (b + 1)) >= (1u << KR_BUCKET_DENSITY_LOG2))
		b++;
	return b < KR_MIN_BUCKET_BITS ? KR_MIN_BUCKET_BITS : b;
}

/*
 * Control word of a ring id (one aligned __u64, so it changes atomically for readers):
 *   bits  0..32  fraction of keys routed by the standby slot, in units of 2^-32
 *                (0 .. 1 << 32 inclusive: 100% is representable)
 *   bit   40     active slot (0 or 1)
 *   bits 48..55  state: KR_RING_IDLE, _STAGED, _MIGRATING (informational for the kernel)
 *   bit   56     KR_CTL_HOT: the ring has hot keys (kr_hot_keys entries): only then does
 *                the data path look the key up there (every writer keeps the bit)
 * Per packet: slot = active; if (mix32(hash) < fraction) slot ^= 1.
 */
#define KR_CTL_FRAC_MASK	((1ull << 33) - 1)
#define KR_CTL_FRAC_ONE		(1ull << 32)
#define KR_CTL_ACTIVE_SHIFT	40
#define KR_CTL_STATE_SHIFT	48
#define KR_CTL_HOT		(1ull << 56)

enum kr_ring_state {
	KR_RING_IDLE = 0,
	KR_RING_STAGED = 1,
	KR_RING_MIGRATING = 2,
};

static inline __u64 kr_ctl_make(__u32 active, __u64 frac, __u32 state)
{
	return (frac & KR_CTL_FRAC_MASK) | ((__u64)(active & 1) << KR_CTL_ACTIVE_SHIFT) |
	       ((__u64)(state & 0xff) << KR_CTL_STATE_SHIFT);
}
static inline __u64 kr_ctl_frac(__u64 ctl) { return ctl & KR_CTL_FRAC_MASK; }
static inline __u32 kr_ctl_active(__u64 ctl) { return (ctl >> KR_CTL_ACTIVE_SHIFT) & 1; }
static inline __u32 kr_ctl_state(__u64 ctl) { return (ctl >> KR_CTL_STATE_SHIFT) & 0xff; }

/* murmur3 finaliser: a fixed bijection, spreads the migrated keys over the whole ring. */
static inline __u32 kr_mix32(__u32 h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static inline __u32 kr_ctl_slot(__u64 ctl, __u32 key_hash)
{
	__u32 slot = kr_ctl_active(ctl);

	if ((__u64)kr_mix32(key_hash) < kr_ctl_frac(ctl))
		slot ^= 1;
	return slot;
}

#endif /* KR_IMAGE_KERN_USER_H */
