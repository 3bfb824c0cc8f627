// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark/test harness of the key hashes alone (tests/bench/hash_keyed.c): an XDP program
 * that copies the first kr_hb_len bytes of the packet into a per-CPU 256-byte key buffer
 * (as the data path does with a key) and hashes them with CRC-32 (include/kr_crc32.h, the
 * ketama hash) or keyed SipHash-1-3 (include/kr_siphash.h), or not at all (baseline).
 * Run through BPF_PROG_TEST_RUN only; never attached.  Also proves that kr_siphash.h
 * passes the verifier for every key length up to 255.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "kr_crc32.h"
#include "kr_siphash.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

enum { KR_HB_NONE = 0, KR_HB_CRC32 = 1, KR_HB_SIPHASH13 = 2 };

/* Set by userspace between runs (mmapped .bss). */
__u32 kr_hb_mode = 0;
__u32 kr_hb_len = 0;
struct kr_hash_secret kr_hb_secret = {};
__u64 kr_hb_result = 0;

struct kr_hb_buf {
	__u8 b[256];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kr_hb_buf);
} kr_hb_scratch SEC(".maps");

SEC("xdp")
int kr_hash_bench(struct xdp_md *ctx)
{
	__u32 zero = 0, len = kr_hb_len;
	struct kr_hb_buf *k = bpf_map_lookup_elem(&kr_hb_scratch, &zero);

	if (!k)
		return XDP_ABORTED;
	if (len > 255)
		len = 255;
	/* len + 1 (1..256) bytes: never a zero-sized read for the verifier; the byte after
	 * the key does not change any hash */
	if (bpf_xdp_load_bytes(ctx, 0, k->b, (len & 0xff) + 1))
		return XDP_ABORTED;
	if (kr_hb_mode == KR_HB_CRC32)
		kr_hb_result = kr_crc32_key(k->b, len);
	else if (kr_hb_mode == KR_HB_SIPHASH13)
		kr_hb_result = kr_siphash13(k->b, len, &kr_hb_secret);
	else
		kr_hb_result = k->b[0];
	return XDP_DROP;
}
