// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Backend "id" pins (docs/operations.md "Backend identity"): a server's "id", given in any
 * ring that lists it, is its id in every ring; one server, one id; one id, one server.  A
 * server is its address, port and forwarding as the configuration writes them (MAC, dev,
 * ifindex).  The range (0..KR_DEFAULT_BACKEND_IDS-1) is checked when parsing the backend.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_int.h"

struct occ {
	uint32_t ri, bi;
	struct kr_cfg_backend *b;
};

static int server_cmp(const struct kr_cfg_backend *a, const struct kr_cfg_backend *b)
{
	int c = kr_sockaddr_cmp(&a->addr, &b->addr);

	if (!c)
		c = (int)a->has_mac - (int)b->has_mac;
	if (!c && a->has_mac)
		c = memcmp(a->mac, b->mac, 6);
	if (!c)
		c = strcmp(a->dev, b->dev);
	if (!c)
		c = a->ifindex < b->ifindex ? -1 : a->ifindex > b->ifindex;
	return c;
}

/* by server, the pinned occurrences first, then by position */
static int occ_server_cmp(const void *pa, const void *pb)
{
	const struct occ *x = pa, *y = pb;
	int c = server_cmp(x->b, y->b);

	if (!c)
		c = (int)y->b->has_id - (int)x->b->has_id;
	if (!c)
		c = x->ri != y->ri ? (x->ri < y->ri ? -1 : 1) : (x->bi > y->bi) - (x->bi < y->bi);
	return c;
}

static int occ_id_cmp(const void *pa, const void *pb)
{
	const struct occ *x = pa, *y = pb;

	if (x->b->id != y->b->id)
		return x->b->id < y->b->id ? -1 : 1;
	return x->ri != y->ri ? (x->ri < y->ri ? -1 : 1) : (x->bi > y->bi) - (x->bi < y->bi);
}

/* An error at rings[o->ri].backends[o->bi].id, from anywhere. */
static void pin_err(struct ctx *c, const struct occ *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void pin_err(struct ctx *c, const struct occ *o, const char *fmt, ...)
{
	struct seg saved[CFG_MAX_DEPTH];
	int depth = c->depth;
	char msg[768];
	va_list ap;

	memcpy(saved, c->path, sizeof(saved));
	c->depth = 0;
	cfg_push_key(c, "rings");
	cfg_push_idx(c, o->ri);
	cfg_push_key(c, "backends");
	cfg_push_idx(c, o->bi);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cfg_kerr(c, "id", "%s", msg);
	memcpy(c->path, saved, sizeof(saved));
	c->depth = depth;
}

void cfg_check_backend_ids(struct ctx *c)
{
	struct kr_config *cfg = c->cfg;
	struct occ *all, *pins;
	uint32_t n = 0, np = 0;
	char a[KR_SOCKADDR_STRLEN], b[KR_SOCKADDR_STRLEN];

	for (uint32_t r = 0; r < cfg->nrings; r++)
		n += cfg->rings[r].nbackends;
	all = calloc(n + 1, sizeof(*all));
	pins = calloc(n + 1, sizeof(*pins));
	if (!all || !pins) {
		cfg_err(c, "out of memory");
		goto out;
	}
	n = 0;
	for (uint32_t r = 0; r < cfg->nrings; r++)
		for (uint32_t i = 0; i < cfg->rings[r].nbackends; i++)
			if (cfg->rings[r].backends[i].addr.family)
				all[n++] = (struct occ){ r, i, &cfg->rings[r].backends[i] };
	qsort(all, n, sizeof(*all), occ_server_cmp);
	/* each server: the first pinned occurrence is its id; another pin must agree */
	for (uint32_t k = 0, g = 0; k < n; k++) {
		if (server_cmp(all[g].b, all[k].b))
			g = k;
		if (!all[g].b->has_id)
			continue;
		if (g == k) {
			pins[np++] = all[k];
			continue;
		}
		if (all[k].b->has_id && all[k].b->id != all[g].b->id) {
			kr_sockaddr_format(&all[k].b->addr, a);
			pin_err(c, &all[k], "backend %s has id %u here and id %u in ring '%s' "
				"(rings[%u].backends[%u]): a server has one id in every ring; give "
				"the same id, or give it in one ring only", a, all[k].b->id,
				all[g].b->id, cfg->rings[all[g].ri].name, all[g].ri, all[g].bi);
			continue;
		}
		all[k].b->has_id = true;	/* the server's id in every ring */
		all[k].b->id = all[g].b->id;
	}
	qsort(pins, np, sizeof(*pins), occ_id_cmp);
	for (uint32_t k = 1; k < np; k++) {
		if (pins[k].b->id != pins[k - 1].b->id)
			continue;
		kr_sockaddr_format(&pins[k].b->addr, a);
		kr_sockaddr_format(&pins[k - 1].b->addr, b);
		pin_err(c, &pins[k], "id %u of backend %s is also the id of %s%s in ring '%s' "
			"(rings[%u].backends[%u]): each server needs an id of its own", pins[k].b->id,
			a, b, strcmp(a, b) ? "" : " (another forwarding: another server)",
			cfg->rings[pins[k - 1].ri].name, pins[k - 1].ri, pins[k - 1].bi);
	}
out:
	free(all);
	free(pins);
}
