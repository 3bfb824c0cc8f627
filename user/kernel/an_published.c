// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The ring an instance has published, as an analytics source (`diff --old-published`). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include "an_published.h"
#include "image.h"
#include "ops.h"
#include "ops_kernel.h"

/* ---- the published ring ------------------------------------------------------------ */

/* The engine's view of a published image: the deduplicated points (kept duplicates
 * dropped), backends from kr_backends by the image's global ids, weights from the points
 * each backend has in the image (weight * point_multiple, duplicates included). */
static int image_to_ring(const void *buf, int backends_fd, struct kr_ring **out,
			 struct kr_err *err)
{
	const struct kr_image_hdr *h = buf;
	const char *base = buf;
	const uint32_t *bt = (const uint32_t *)(base + kr_image_bt_off(h));
	struct kr_ring *r = calloc(1, sizeof(*r));
	uint64_t *count = NULL;
	uint32_t n = 0, prev = 0;

	if (!r)
		return kr_errf(err, "out of memory");
	r->hash = malloc((h->npoints ? h->npoints : 1) * sizeof(*r->hash));
	r->backend = malloc((h->npoints ? h->npoints : 1) * sizeof(*r->backend));
	r->backends = calloc(h->nbackends ? h->nbackends : 1, sizeof(*r->backends));
	count = calloc(h->nbackends ? h->nbackends : 1, sizeof(*count));
	if (!r->hash || !r->backend || !r->backends || !count) {
		kr_errf(err, "out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < h->npoints; i++) {
		const struct kr_point *p = (const struct kr_point *)(base +
			(size_t)(h->pt_chunk + (i >> KR_PTS_SHIFT)) * KR_CHUNK_BYTES) +
			(i & (KR_PTS_PER_CHUNK - 1));
		uint32_t hash = kr_point_hash(p);

		if (p->backend >= h->nbackends) {
			kr_errf(err, "published image: point %u names backend %u of %u", i,
				p->backend, h->nbackends);
			goto fail;
		}
		count[p->backend]++;
		if (i && hash == prev)
			continue;	/* a duplicate kept after its winner */
		prev = hash;
		r->hash[n] = hash;
		r->backend[n++] = p->backend;
	}
	for (uint32_t b = 0; b < h->nbackends; b++) {
		struct kr_backend v;
		struct kr_sockaddr *a = &r->backends[b].addr;

		if (bpf_map_lookup_elem(backends_fd, &bt[b], &v)) {
			kr_errf(err, "published image: backend id %u not in kr_backends: %s", bt[b],
				strerror(errno));
			goto fail;
		}
		a->family = v.family;
		a->port = ntohs(v.port);
		memcpy(a->ip, v.addr, v.family == 4 ? 4 : 16);
		r->backends[b].weight = h->point_multiple ?
			(uint32_t)(count[b] / h->point_multiple) : 0;
	}
	r->version = h->ring_version;
	r->point_multiple = h->point_multiple;
	r->nbackends = h->nbackends;
	r->npoints = n;
	r->ndups = h->ndups;
	r->digest = h->digest;
	r->stats.generated = h->npoints;
	free(count);
	*out = r;
	return 0;
fail:
	free(count);
	kr_ring_free(r);
	return -1;
}

static int published(const struct kr_an_src *s, struct kr_an_built *out, struct kr_err *err)
{
	struct kr_inst in;
	struct kr_ops_maps m;
	__u64 ctl = 0;
	void *buf = NULL;
	size_t size = 0;
	int id, ret = -1;
	uint32_t slot;

	if (!s->ring)
		return kr_errf(err, "the published ring needs a name: --ring NAME");
	if (kr_ops_inst_open_reader(&in, s->instance, s->pin_dir))
		return kr_errf(err, "couldn't open the instance '%s' (see above)",
			       s->instance ? s->instance : KR_OPS_DEFAULT_INSTANCE);
	if (kr_ops_maps_open(&in, &m)) {
		kr_errf(err, "couldn't open the maps of instance '%s' (see above)", in.name);
		goto out_inst;
	}
	id = kr_ops_ring_find(&in, s->ring);
	if (id < 0) {
		kr_errf(err, "instance '%s' has no ring named '%s'", in.name, s->ring);
		goto out;
	}
	if (kr_ops_ctl_read(&m, (uint32_t)id, &ctl)) {
		kr_errf(err, "couldn't read the control word of ring '%s'", s->ring);
		goto out;
	}
	slot = kr_ctl_active(ctl);
	if (kr_ops_slot_image(&m, (uint32_t)id, slot, &buf, &size) || !buf ||
	    kr_image_check(buf, size, err)) {
		if (!buf)
			kr_errf(err, "ring '%s' of instance '%s' has nothing published in its active "
				"slot %u", s->ring, in.name, slot);
		else
			kr_err_prefix(err, "ring '%s' of instance '%s', slot %u", s->ring, in.name,
				      slot);
		goto out;
	}
	if (image_to_ring(buf, m.backends, &out->ring, err))
		goto out;
	out->rank = kr_an_tie_rank(out->ring->backends, out->ring->nbackends,
				   out->ring->version);
	if (!out->rank) {
		kr_errf(err, "out of memory");
		goto out;
	}
	{
		char d[64];
		const struct kr_image_hdr *h = buf;

		snprintf(out->name, sizeof(out->name), "%s", s->ring);
		snprintf(out->desc, sizeof(out->desc), "published ring %.40s of instance %.40s "
			 "(slot %u, generation %llu, %s)", s->ring, in.name, slot,
			 (unsigned long long)h->generation,
			 kr_ring_describe(out->ring, d, sizeof(d)));
	}
	ret = 0;
out:
	if (ret)
		kr_an_built_free(out);
	free(buf);
	kr_ops_maps_close(&m);
out_inst:
	kr_ops_inst_close(&in);
	return ret;
}

int kr_ops_an_src_build(const struct kr_an_src *s, struct kr_an_built *out, struct kr_err *err)
{
	if (!s->published)
		return kr_an_src_build(s, out, err);
	memset(out, 0, sizeof(*out));
	return published(s, out, err);
}
