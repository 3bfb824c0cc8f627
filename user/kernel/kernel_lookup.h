/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `keyrouter lookup --via-kernel`: the answer from the kernel's own code.  Loads the data
 * path object (bpf/keyrouter.bpf.c, not attached anywhere, its trace flag on), configures
 * one `payload` service (whole UDP payload = the key) on a test VIP, the ring's backends
 * (global id = ring-local index; their states and, for a subset, the members as given)
 * and publishes the ring image; then each key runs
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
	uint32_t first_index;	/* the key's own point (before the walk) */
	uint32_t image_index;	/* point the program chose */
	uint32_t walk;		/* points the walk skipped */
	uint32_t backend_id;	/* = ring-local backend index (identity backend table); with
				 * kr_klookup_open_live(): the global id */
	uint32_t slot;		/* the ring slot that routed it */
	uint32_t verdict;	/* XDP action the program returned */
};

/* Where the private maps say the backends are: state[b] (enum kr_backend_state; NULL:
 * all up) and member[b] (1: in the service's subset; NULL: no subset). */
struct kr_klookup_backends {
	uint32_t n;
	const uint8_t *state;
	const uint8_t *member;
};

/* Loads and configures; img must be encoded with the identity backend table. */
int kr_klookup_open(struct kr_klookup **out, const struct kr_image *img,
		    const struct kr_klookup_backends *be, struct kr_err *err);
/* A running instance's ring as the program gets it (lookup --via-kernel --live): the
 * images of both slots as published (their backend tables hold global ids), the control
 * word, and the kr_backends entries of every id the tables name (and, for a shared
 * subset, which are members). */
struct kr_klookup_live {
	const void *image[2];		/* NULL: the slot is empty */
	uint64_t ctl;
	uint32_t nids;
	const uint32_t *id;		/* [nids] global ids */
	const struct kr_backend *be;	/* [nids] their entries */
	const uint8_t *member;		/* [nids], or NULL: no subset */
};
int kr_klookup_open_live(struct kr_klookup **out, const struct kr_klookup_live *lv,
			 struct kr_err *err);

/* One key through the program. 0, or -1 with err set (the run itself failed). */
int kr_klookup_key(struct kr_klookup *kl, const uint8_t *key, size_t len,
		   struct kr_kresult *res, struct kr_err *err);
void kr_klookup_close(struct kr_klookup *kl);

#endif
