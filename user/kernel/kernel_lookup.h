/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `keyrouter lookup --via-kernel`: the answer from the kernel's own code.  Loads the data
 * path object (bpf/keyrouter.bpf.c, not attached anywhere, its trace flag on), configures
 * one `payload` service (whole UDP payload = the key) on a test VIP, the ring's backends
 * (global id = ring-local index, all up) and publishes the ring image; then each key runs
 * as the UDP payload of an Ethernet/IPv4/UDP packet through BPF_PROG_TEST_RUN and the
 * program's trace record says which key hash, image point and backend it chose.
 */
#ifndef KR_KERNEL_LOOKUP_H
#define KR_KERNEL_LOOKUP_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"
#include "image.h"

struct kr_klookup;

struct kr_kresult {
	uint32_t status;	/* enum kr_key_status: KR_KEY_OK, or why no key (policy) */
	uint32_t reason;	/* enum kr_route_reason (when status is KR_KEY_OK) */
	uint32_t key_hash;	/* crc32 computed by the program */
	uint32_t image_index;	/* point the program chose */
	uint32_t backend_id;	/* = ring-local backend index (identity backend table) */
	uint32_t verdict;	/* XDP action the program returned */
};

/* Loads and configures; img must be encoded with the identity backend table. */
int kr_klookup_open(struct kr_klookup **out, const struct kr_image *img, uint32_t nbackends,
		    struct kr_err *err);
/* One key through the program. 0, or -1 with err set (the run itself failed). */
int kr_klookup_key(struct kr_klookup *kl, const uint8_t *key, size_t len,
		   struct kr_kresult *res, struct kr_err *err);
/* What `lookup --via-kernel` shows for one key: the program's result, and the backends of
 * the image's next three ring points after the program's point (the format of `lookup`:
 * key crc ring_index backend b1 b2 b3). */
struct kr_kanswer {
	struct kr_kresult r;
	uint32_t key_hash;	/* crc32 of the key computed here (for a key not routed) */
	uint32_t ring_index;	/* ring index of the program's image point */
	uint32_t next[3];	/* backends of the next three ring points */
};

/* One key: 0, or -1 (err): the run failed, or the kernel routed nothing for a key it
 * extracted.  A key the program does not route by policy (longer than 255 bytes) is an
 * answer: a->r.status != KR_KEY_OK and a->r.verdict says what the program did. */
int kr_klookup_answer(struct kr_klookup *kl, const struct kr_image *img, const uint8_t *key,
		      size_t len, struct kr_kanswer *a, struct kr_err *err);
void kr_klookup_close(struct kr_klookup *kl);

#endif
