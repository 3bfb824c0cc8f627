// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* kr_backends as a whole (see ops_backends.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "ops_backends.h"

int kr_ops_backends_read(const struct kr_ops_maps *m, struct kr_backend **out)
{
	__u32 max = m->backends_max, n = 0, *keys;
	struct kr_backend *v;
	__u32 batch = 0;
	bool first = true;
	int err = 0;

	*out = NULL;
	v = calloc(max ? max : 1, sizeof(*v));
	keys = calloc(max ? max : 1, sizeof(*keys));
	if (!v || !keys) {
		free(v);
		free(keys);
		return -ENOMEM;
	}
	/* one batch call for the whole array (arrays support it); entry by entry when the
	 * kernel refuses */
	while (n < max) {
		LIBBPF_OPTS(bpf_map_batch_opts, o);
		__u32 cnt = max - n;

		if (bpf_map_lookup_batch(m->backends, first ? NULL : &batch, &batch, keys + n,
					 v + n, &cnt, &o)) {
			err = -errno;
			if (err == -ENOENT) {
				n += cnt;
				err = 0;
				break;
			}
			break;
		}
		first = false;
		n += cnt;
	}
	if (err) {
		memset(v, 0, (size_t)max * sizeof(*v));
		for (__u32 i = 0; i < max; i++)
			if (bpf_map_lookup_elem(m->backends, &i, &v[i])) {
				err = -errno;
				goto out;
			}
		err = 0;
	} else {
		/* the batch returns entries in key order; keys[] says where each goes */
		struct kr_backend *o = calloc(max ? max : 1, sizeof(*o));

		if (!o) {
			err = -ENOMEM;
			goto out;
		}
		for (__u32 i = 0; i < n; i++)
			if (keys[i] < max)
				o[keys[i]] = v[i];
		free(v);
		v = o;
	}
out:
	free(keys);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	return 0;
}

int kr_ops_backends_rings(const struct kr_ops_maps *m, uint16_t **nrings)
{
	uint16_t *n = calloc(m->backends_max ? m->backends_max : 1, sizeof(*n));
	uint8_t *seen = calloc(m->backends_max ? m->backends_max : 1, 1);
	int err = 0;

	if (!n || !seen) {
		free(n);
		free(seen);
		return -ENOMEM;
	}
	for (__u32 r = 0; r < KR_MAX_RINGS && !err; r++) {
		struct kr_ops_slot s[2] = {};

		for (__u32 k = 0; k < 2 && !err; k++)
			err = kr_ops_slot_read(m, r, k, true, &s[k]);
		for (__u32 k = 0; k < 2 && !err; k++)
			for (__u32 b = 0; s[k].present && b < s[k].hdr.nbackends; b++)
				if (s[k].bt[b] < m->backends_max && !seen[s[k].bt[b]]) {
					seen[s[k].bt[b]] = 1;
					n[s[k].bt[b]]++;
				}
		for (__u32 k = 0; k < 2; k++) {
			for (__u32 b = 0; s[k].present && b < s[k].hdr.nbackends; b++)
				if (s[k].bt[b] < m->backends_max)
					seen[s[k].bt[b]] = 0;
			kr_ops_slot_free(&s[k]);
		}
	}
	free(seen);
	if (err) {
		free(n);
		return err;
	}
	*nrings = n;
	return 0;
}

int kr_ops_ring_has_backend(const struct kr_ops_maps *m, __u32 ring_id, __u32 id)
{
	int found = 0;

	for (__u32 k = 0; k < 2 && !found; k++) {
		struct kr_ops_slot s = {};
		int err = kr_ops_slot_read(m, ring_id, k, true, &s);

		if (err)
			return err;
		for (__u32 b = 0; s.present && b < s.hdr.nbackends && !found; b++)
			found = s.bt[b] == id;
		kr_ops_slot_free(&s);
	}
	return found;
}
