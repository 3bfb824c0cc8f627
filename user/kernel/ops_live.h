/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The live state of a configuration's backends in a running instance (`lookup --live`). */
#ifndef KR_OPS_LIVE_H
#define KR_OPS_LIVE_H

#include <stdint.h>
#include "config.h"
#include "ops.h"
#include "svc_route.h"

/* For every backend b of ring cr: state[b] = its state in kr_backends (enum
 * kr_backend_state), found by address among the backends of the instance's published ring
 * slots; a backend no ring has gets KR_BACKEND_UNUSED (the data path skips it).  Returns how
 * many backends were found, or -errno. */
int kr_ops_live_states(const struct kr_inst *in, const struct kr_cfg_ring *cr, uint8_t *state);

/* Service si of cfg as the running instance routes it (`lookup --live`): its entry in
 * kr_services (the ring id and subset the data path uses, whatever the configuration
 * says), that ring's control word, and each slot that has an image: the image, and for
 * each entry of its backend table the backend's address and state in kr_backends and its
 * subset membership in kr_subset_members. */
struct kr_ops_live_ring {
	__u32 ring_id;
	__u32 subset_id;
	__u64 ctl;
	bool present[2];
	__u64 generation[2];
	__u32 digest[2];
	struct kr_svc_live_slot slot[2];	/* present only */
};
/* 0; -ENOENT: the instance has no entry for the service (it is not applied); -errno. */
int kr_ops_live_ring(const struct kr_inst *in, const struct kr_config *cfg, uint32_t si,
		     struct kr_ops_live_ring *out);
void kr_ops_live_ring_free(struct kr_ops_live_ring *r);

#endif
