// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * AES-128 in XDP, two ways, for tests/bench/bench_quic_lb.c (the choice in docs/quic.md):
 *   kr_aes_kfunc   the kernel's crypto through the BPF kfuncs: an ecb(aes) skcipher context
 *                  made once by a syscall program (bpf_crypto_ctx_create, kept as a kptr
 *                  in a map), then bpf_crypto_encrypt/decrypt on 16-byte dynptrs;
 *   kr_aes_table   include/kr_quic_lb.h: T-tables in .rodata, round keys in .bss;
 *   kr_aes_none    the same program without the cipher (the floor).
 * Each XDP program reads the first 16 octets of the packet, runs `nblocks` encryptions
 * (decryptions with `decrypt`) chained block after block, and writes the result to .bss
 * `out` (so userspace checks that the two ways agree).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "kr_quic_lb_aes.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

extern struct bpf_crypto_ctx *bpf_crypto_ctx_create(const struct bpf_crypto_params *params,
						    u32 params__sz, int *err) __ksym;
extern void bpf_crypto_ctx_release(struct bpf_crypto_ctx *ctx) __ksym;
extern int bpf_crypto_encrypt(struct bpf_crypto_ctx *ctx, const struct bpf_dynptr *src,
			      const struct bpf_dynptr *dst, const struct bpf_dynptr *siv__nullable) __ksym;
extern int bpf_crypto_decrypt(struct bpf_crypto_ctx *ctx, const struct bpf_dynptr *src,
			      const struct bpf_dynptr *dst, const struct bpf_dynptr *siv__nullable) __ksym;

struct kr_aes_ctx_val {
	struct bpf_crypto_ctx __kptr *ctx;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kr_aes_ctx_val);
} kr_aes_ctx SEC(".maps");

/* Set by userspace. */
__u8 key[16];
struct kr_aes128 rk;
__u32 nblocks = 1;
__u32 decrypt;
/* Written by the programs. */
struct kr_aes_block in, out;
int status;

SEC("syscall")
int kr_aes_ctx_init(void *args)
{
	struct bpf_crypto_params params = {
		.type = "skcipher",
		.algo = "ecb(aes)",
		.key_len = 16,
	};
	struct kr_aes_ctx_val *v;
	struct bpf_crypto_ctx *c;
	__u32 zero = 0;
	int err = 0, i;

	for (i = 0; i < 16; i++)
		params.key[i] = key[i];
	c = bpf_crypto_ctx_create(&params, sizeof(params), &err);
	if (!c)
		return err ? err : -1;
	v = bpf_map_lookup_elem(&kr_aes_ctx, &zero);
	if (!v) {
		bpf_crypto_ctx_release(c);
		return -2;
	}
	c = bpf_kptr_xchg(&v->ctx, c);
	if (c)
		bpf_crypto_ctx_release(c);
	return 0;
}

static __always_inline int load_in(struct xdp_md *x)
{
	const __u8 *d = (const void *)(long)x->data, *e = (const void *)(long)x->data_end;
	int i;

	if (d + 16 > e)
		return -1;
	for (i = 0; i < 16; i++)
		in.b[i] = d[i];
	return 0;
}

SEC("xdp")
int kr_aes_kfunc(struct xdp_md *x)
{
	struct bpf_dynptr src, dst;
	struct kr_aes_ctx_val *v;
	struct bpf_crypto_ctx *c;
	__u32 zero = 0, i;

	if (load_in(x))
		return XDP_ABORTED;
	v = bpf_map_lookup_elem(&kr_aes_ctx, &zero);
	if (!v)
		return XDP_ABORTED;
	c = v->ctx;
	if (!c)
		return XDP_ABORTED;
	bpf_dynptr_from_mem(&in, sizeof(in), 0, &src);
	bpf_dynptr_from_mem(&out, sizeof(out), 0, &dst);
	for (i = 0; i < 4; i++) {
		if (i >= nblocks)
			break;
		if (i) {	/* chain: the next block is the last output */
			in = out;
		}
		status = decrypt ? bpf_crypto_decrypt(c, &src, &dst, NULL) :
				   bpf_crypto_encrypt(c, &src, &dst, NULL);
	}
	return XDP_PASS;
}

SEC("xdp")
int kr_aes_table(struct xdp_md *x)
{
	__u32 i;

	if (load_in(x))
		return XDP_ABORTED;
	for (i = 0; i < 4; i++) {
		if (i >= nblocks)
			break;
		if (i)
			in = out;
		if (decrypt)
			kr_aes128_decrypt(&rk, in.b, out.b);
		else
			kr_aes128_encrypt_block(&rk, &in, &out);
	}
	status = 0;
	return XDP_PASS;
}

SEC("xdp")
int kr_aes_none(struct xdp_md *x)
{
	__u32 i;

	if (load_in(x))
		return XDP_ABORTED;
	for (i = 0; i < 4; i++) {
		if (i >= nblocks)
			break;
		out = in;
	}
	status = 0;
	return XDP_PASS;
}
