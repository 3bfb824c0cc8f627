// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Programs of tests/bench/mem_latency.c: the latency of one random read from a BPF program,
 * by the size of the region read and by how the kernel maps it, run through
 * BPF_PROG_TEST_RUN.  Every program reads one word and makes the next run's address wait
 * for it (it adds a zero computed from the value to the counter the address comes from),
 * so a run costs one read's whole latency, like bench_ring's and bench_datapath's (d).
 *   lat_vmap   a random word of an ARRAY map of 12 KiB values, the ring image's map type and
 *              chunk size: one vmalloc area, mapped in 4 KiB pages
 *   lat_dmap   a random word of a HASH map created with BPF_F_NO_PREALLOC, whose elements
 *              (64 KiB each) the kernel allocates one by one with kmalloc: pages of the
 *              kernel's direct map, which this kernel maps with 2 MiB and 1 GiB pages
 *   lat_vmap_hot, lat_dmap_hot   the same lookups, of one word that stays in L1: the
 *              baseline to subtract (test run, map lookup, the arithmetic)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "kr_image_kern_user.h"	/* KR_CHUNK_BYTES, kr_mix32() */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define LAT_VCHUNK	KR_CHUNK_BYTES
#define LAT_DCHUNK	(65536u - 128u)		/* element + header within one 64 KiB kmalloc */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, 4);
	__uint(value_size, LAT_VCHUNK);
	__uint(max_entries, 1);			/* set by userspace */
} lat_vmap_chunks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, 4);
	__uint(value_size, LAT_DCHUNK);
	__uint(max_entries, 1);			/* set by userspace */
	__uint(map_flags, BPF_F_NO_PREALLOC);
} lat_dmap_chunks SEC(".maps");

const volatile __u32 lat_vchunks = 1, lat_dchunks = 1;
__u32 lat_ctr;
__u32 lat_sink;

/* A value that is always 0 but that the compiler and the CPU must wait for x to compute. */
static __always_inline __u32 lat_zero_of(__u32 x)
{
	asm volatile("%[x] &= 0" : [x] "+r"(x));
	return x;
}

/* One word of chunk (hot ? 0 : random) of map, at a random word (hot: one of 16). */
static __always_inline int lat_read(void *map, __u32 nchunks, __u32 words, int hot)
{
	__u32 h = kr_mix32(lat_ctr), c, w;
	const __u32 *v;

	c = hot ? 0 : (__u32)(((__u64)h * nchunks) >> 32);
	v = bpf_map_lookup_elem(map, &c);
	if (!v)
		return XDP_ABORTED;
	w = hot ? (h & 15) : (((h & 0xffff) * words) >> 16);
	asm volatile("" : "+r"(w));	/* the verifier's bound is the shift's, not a mask */
	if (w >= words)
		return XDP_ABORTED;
	w = v[w];
	lat_sink = w;
	lat_ctr += 1 + lat_zero_of(w);
	return XDP_TX;
}

SEC("xdp")
int lat_vmap(struct xdp_md *ctx)
{
	return lat_read(&lat_vmap_chunks, lat_vchunks, LAT_VCHUNK / 4, 0);
}

SEC("xdp")
int lat_vmap_hot(struct xdp_md *ctx)
{
	return lat_read(&lat_vmap_chunks, lat_vchunks, LAT_VCHUNK / 4, 1);
}

SEC("xdp")
int lat_dmap(struct xdp_md *ctx)
{
	return lat_read(&lat_dmap_chunks, lat_dchunks, LAT_DCHUNK / 4, 0);
}

SEC("xdp")
int lat_dmap_hot(struct xdp_md *ctx)
{
	return lat_read(&lat_dmap_chunks, lat_dchunks, LAT_DCHUNK / 4, 1);
}
