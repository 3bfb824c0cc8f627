// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Live backend states by address (ops_live.h). */
#include <arpa/inet.h>
#include <string.h>
#include <bpf/bpf.h>
#include "ops_kernel.h"
#include "ops_live.h"

static bool same_backend(const struct kr_backend *be, const struct kr_sockaddr *a)
{
	return be->family == a->family && ntohs(be->port) == a->port &&
	       !memcmp(be->addr, a->ip, a->family == 4 ? 4 : 16);
}

int kr_ops_live_states(const struct kr_inst *in, const struct kr_cfg_ring *cr, uint8_t *state)
{
	struct kr_ops_maps m;
	int found = 0, err;

	memset(state, KR_BACKEND_UNUSED, cr->nbackends);
	err = kr_ops_maps_open(in, &m);
	if (err)
		return err;
	for (__u32 id = 0; id < KR_MAX_RINGS; id++) {
		struct kr_ops_ring meta;

		if (kr_ops_ring_get(in, id, &meta) || !meta.name[0])
			continue;
		for (__u32 slot = 0; slot < 2; slot++) {
			struct kr_ops_slot s = {};

			if (kr_ops_slot_read(&m, id, slot, true, &s) || !s.present)
				continue;
			for (__u32 b = 0; b < s.hdr.nbackends; b++) {
				struct kr_backend be;

				if (bpf_map_lookup_elem(m.backends, &s.bt[b], &be))
					continue;
				for (uint32_t c = 0; c < cr->nbackends; c++)
					if (state[c] == KR_BACKEND_UNUSED &&
					    same_backend(&be, &cr->backends[c].addr)) {
						state[c] = be.state;
						found++;
					}
			}
			kr_ops_slot_free(&s);
		}
	}
	kr_ops_maps_close(&m);
	return found;
}
