/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Userspace reference of the data path's packet side: the SAME parser and key extractors
 * as the BPF programs (include/kr_parse.h, include/kr_key.h, compiled here with gcc), run
 * on a frame in memory.  The packet tests, the parity test and the packet fuzz test compare
 * the kernel's keys with these: proof that two compilers agree, not that an extractor is
 * right (the independent oracle, tests/oracle/, is written separately).
 */
#ifndef KR_PKTREF_H
#define KR_PKTREF_H

#include <stddef.h>
#include <stdint.h>
#include "kr_datapath_kern_user.h"

struct kr_ref_out {
	int parse_rc;		/* enum kr_parse_rc (kr_parse.h) */
	int key_status;		/* enum kr_key_status, when parse_rc == KR_PARSE_OK */
	uint32_t key_len;
	uint32_t key_hash;	/* crc32 of the key (user/core/crc32.c, an independent CRC) */
	uint8_t key[KR_KEY_BUF];
	uint8_t family;		/* parsed headers */
	uint8_t proto;		/* IPPROTO_UDP or IPPROTO_TCP */
	uint8_t dst[16];
	uint16_t dport;		/* host order */
	uint32_t l3_off, l3_len, pl_off, pl_len;
};

/* Parse frame[0..len) and, when svc is given and the packet is UDP, extract its key.
 * Returns parse_rc. */
int kr_ref_packet(const void *frame, size_t len, const struct kr_service *svc,
		  struct kr_ref_out *out);

#endif
