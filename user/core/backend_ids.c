// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Stable global backend ids (see backend_ids.h). */
#include <stdlib.h>
#include <string.h>
#include "backend_ids.h"

int kr_ops_idset_init(struct kr_ops_idset *s, uint32_t max)
{
	s->max = max;
	s->next = 0;
	s->bits = calloc((max + 63) / 64 + 1, sizeof(uint64_t));
	return s->bits ? 0 : -1;
}

void kr_ops_idset_free(struct kr_ops_idset *s)
{
	free(s->bits);
	s->bits = NULL;
}

static int same_addr(const struct kr_sockaddr *a, const struct kr_sockaddr *b)
{
	return a->family == b->family && a->port == b->port &&
	       !memcmp(a->ip, b->ip, a->family == 4 ? 4 : 16);
}

static int lowest_free(struct kr_ops_idset *s, uint32_t *id)
{
	for (uint32_t i = s->next; i < s->max; i++) {
		if (!kr_ops_idset_has(s, i)) {
			kr_ops_idset_add(s, i);
			s->next = i + 1;
			*id = i;
			return 0;
		}
	}
	return -1;
}

int kr_ops_ids_assign(const struct kr_ops_idmap *prev, uint32_t nprev,
		      const struct kr_sockaddr *want, uint32_t n, struct kr_ops_idset *used,
		      uint32_t *out)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j;

		for (j = 0; j < nprev; j++)
			if (same_addr(&prev[j].addr, &want[i]))
				break;
		if (j < nprev) {
			out[i] = prev[j].id;
			kr_ops_idset_add(used, out[i]);
			continue;
		}
		if (lowest_free(used, &out[i]))
			return -1;
	}
	return 0;
}
