// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Live backend states by address (ops_live.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "apply_plan.h"
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

/* Slot k of ring r->ring_id: the image, the addresses, states and memberships of its
 * backend table's entries.  0 (present or not), or -errno. */
static int live_slot(const struct kr_ops_maps *m, struct kr_ops_live_ring *r, __u32 k)
{
	struct kr_svc_live_slot *ls = &r->slot[k];
	const struct kr_image_hdr *h;
	const __u32 *bt;
	int err;

	err = kr_ops_slot_image(m, r->ring_id, k, &ls->buf, &ls->size);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	h = ls->buf;
	if (ls->size < KR_CHUNK_BYTES || h->magic != KR_IMAGE_MAGIC ||
	    kr_image_bt_off(h) + (size_t)h->nbackends * sizeof(*bt) > ls->size)
		return -EINVAL;	/* kr_image_view() says more; here only what is read */
	/* the table's chunks follow each other in the copied buffer */
	bt = (const __u32 *)((const char *)ls->buf + kr_image_bt_off(h));
	r->present[k] = true;
	r->generation[k] = h->generation;
	r->digest[k] = h->digest;
	ls->nb = h->nbackends;
	ls->addr = calloc(ls->nb ? ls->nb : 1, sizeof(*ls->addr));
	ls->state = calloc(ls->nb ? ls->nb : 1, 1);
	ls->spill = calloc(ls->nb ? ls->nb : 1, sizeof(*ls->spill));
	if (!ls->spill)
		return -ENOMEM;
	if (r->subset_id)
		ls->member = calloc(ls->nb ? ls->nb : 1, 1);
	if (!ls->addr || !ls->state || (r->subset_id && !ls->member))
		return -ENOMEM;
	for (__u32 b = 0; b < ls->nb; b++) {
		struct kr_subset_key mk = { .subset_id = r->subset_id, .backend_id = bt[b] };
		struct kr_backend be;
		__u32 one;

		if (bpf_map_lookup_elem(m->backends, &bt[b], &be) || !be.family) {
			ls->state[b] = KR_BACKEND_UNUSED;
			continue;
		}
		ls->addr[b].family = be.family;
		ls->addr[b].port = ntohs(be.port);
		memcpy(ls->addr[b].ip, be.addr, 16);
		ls->state[b] = be.state;
		ls->spill[b] = be.spill;
		if (ls->member)
			ls->member[b] = m->members >= 0 &&
					!bpf_map_lookup_elem(m->members, &mk, &one);
	}
	return 0;
}

int kr_ops_live_ring(const struct kr_inst *in, const struct kr_config *cfg, uint32_t si,
		     struct kr_ops_live_ring *out)
{
	struct kr_service_key sk;
	struct kr_service sv;
	struct kr_ops_maps m;
	int err;

	memset(out, 0, sizeof(*out));
	err = kr_ops_maps_open(in, &m);
	if (err)
		return err;
	kr_service_entry(&cfg->services[si], 0, &sk, &sv);
	if (bpf_map_lookup_elem(m.services, &sk, &sv)) {
		err = errno == ENOENT ? -ENOENT : -errno;
		goto out;
	}
	out->ring_id = sv.ring_id;
	out->subset_id = sv.subset_id;
	err = kr_ops_ctl_read(&m, out->ring_id, &out->ctl);
	for (__u32 k = 0; k < 2 && !err; k++)
		err = live_slot(&m, out, k);
out:
	kr_ops_maps_close(&m);
	if (err)
		kr_ops_live_ring_free(out);
	return err;
}

void kr_ops_live_ring_free(struct kr_ops_live_ring *r)
{
	for (__u32 k = 0; k < 2; k++) {
		free(r->slot[k].buf);
		free(r->slot[k].addr);
		free(r->slot[k].state);
		free(r->slot[k].spill);
		free(r->slot[k].member);
	}
	memset(r, 0, sizeof(*r));
}
