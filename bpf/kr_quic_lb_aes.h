/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The block cipher of the QUIC-LB codec as one global BPF function (include/kr_quic_lb.h
 * declares it for KR_QLB_ENC): verified once, its code once instead of four inlined copies
 * in the four-pass rounds.  Included by the programs that decode (kr_quic_lb_stage.h,
 * tests/bpf/progs/kr_aes_bench.bpf.c); a program that calls the codec without it does not
 * link (kr_aes128_encrypt_block undefined).
 */
#ifndef KR_QUIC_LB_AES_H
#define KR_QUIC_LB_AES_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "kr_quic_lb.h"

__noinline int kr_aes128_encrypt_block(const struct kr_aes128 *k, const struct kr_aes_block *in,
				       struct kr_aes_block *out)
{
	if (!k || !in || !out)
		return -1;
	kr_aes128_encrypt(k, in->b, out->b);
	return 0;
}

#endif /* KR_QUIC_LB_AES_H */
