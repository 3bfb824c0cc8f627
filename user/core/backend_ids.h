/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Global backend ids, stable across applies.  A backend's id is keyed by (ring, address,
 * port): the ring's published images (both slots) say which ids it uses, kr_backends says
 * their addresses.  A backend that stays in a ring keeps its id; a new one takes the lowest
 * id no published image references; ids nothing references any more are cleared at the
 * end of an apply.  Nothing but the maps is needed, so a killed apply loses nothing.
 */
#ifndef KR_OPS_IDS_H
#define KR_OPS_IDS_H

#include <stdint.h>
#include "addr.h"

struct kr_ops_idmap {
	struct kr_sockaddr addr;
	uint32_t id;
};

/* Bitmap of ids in use (1 bit per id). */
struct kr_ops_idset {
	uint64_t *bits;
	uint32_t max;		/* ids 0..max-1 */
	uint32_t next;		/* lowest id that may be free */
};

int kr_ops_idset_init(struct kr_ops_idset *s, uint32_t max);
void kr_ops_idset_free(struct kr_ops_idset *s);
static inline int kr_ops_idset_has(const struct kr_ops_idset *s, uint32_t id)
{
	return id < s->max && (s->bits[id / 64] >> (id % 64)) & 1;
}
static inline void kr_ops_idset_add(struct kr_ops_idset *s, uint32_t id)
{
	if (id < s->max)
		s->bits[id / 64] |= 1ull << (id % 64);
}

/*
 * ids for want[0..n) of one ring: the id of the same address:port in prev[0..nprev) (what
 * the ring's published images use), else the lowest id not in used (which is updated).
 * Returns 0, or -1 when the id space is exhausted.
 */
int kr_ops_ids_assign(const struct kr_ops_idmap *prev, uint32_t nprev,
		      const struct kr_sockaddr *want, uint32_t n, struct kr_ops_idset *used,
		      uint32_t *out);

#endif
