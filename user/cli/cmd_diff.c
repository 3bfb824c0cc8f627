// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `keyrouter diff`: the exact fraction of the key space that changes owner between two
 * rings, per backend, against the theoretical minimum for that change. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "an_published.h"
#include "apply_out.h"
#include "analytics.h"
#include "cmd.h"
#include "opts.h"
#include "json_out.h"
#include "log.h"
#include "config.h"
#include "ops.h"
#include "ops_backends.h"
#include "ops_hot.h"
#include "spill_price.h"
#include <arpa/inet.h>

static const char diff_help[] =
	"Usage: keyrouter diff OLD-RING NEW-RING [--json] [--top N]\n"
	"\n"
	"Computes exactly (no sampling: the two sorted rings are merged over the 32-bit key\n"
	"space) which fraction of the key hashes gets another owner when OLD is replaced by\n"
	"NEW -- the cache-miss bill of the change -- in total and per backend (keys lost and\n"
	"gained), and the theoretical minimum for the same membership/weight change:\n"
	"sum over backends of max(0, s - s') with s, s' the old and new weight shares, so the\n"
	"overhead of the ring itself is visible.  Backends are matched by socket address.\n"
	"\n"
	"Each side is a ring as for `analyze`; an option without old-/new- applies to both:\n"
	"  --backends FILE, --old-backends FILE, --new-backends FILE\n"
	"  --version v1|v2, --old-version, --new-version\n"
	"  --point-multiple N, --old-point-multiple N, --new-point-multiple N\n"
	"  -c/--config FILE, --old-config FILE, --new-config FILE\n"
	"  --ring NAME, --old-ring NAME, --new-ring NAME\n"
	"  --old-published        the ring published by `keyrouter apply` in an instance (its\n"
	"                         active slot): the bill of applying NEW.  With\n"
	"  --instance NAME        (default: the new configuration's \"instance\", else\n"
	"                         \"default\") or --pin-dir DIR; the ring's name is\n"
	"                         --ring/--old-ring, or the new config ring's name\n"
	"Examples:\n"
	"  diff --version v2 --old-backends a.txt --new-backends b.txt      (membership)\n"
	"  diff --backends a.txt --old-version v1 --new-version v2 --new-point-multiple 16\n"
	"  diff -c keyrouter.json --old-ring web --new-ring web-next\n"
	"  diff --old-config old.json --new-config new.json --ring web\n"
	"  diff --old-published -c new.json --ring web                      (before apply)\n"
	"Output:\n"
	"  --json                 one JSON object (every backend that lost or gained keys)\n"
	"  --top N                list the N backends with most keys lost + gained (default\n"
	"                         20, 0 = all)\n"
	"  -h, --help             this text\n";

enum {
	OPT_BACKENDS = 0x100, OPT_OLD_BACKENDS, OPT_NEW_BACKENDS,
	OPT_VERSION, OPT_OLD_VERSION, OPT_NEW_VERSION,
	OPT_PM, OPT_OLD_PM, OPT_NEW_PM,
	OPT_OLD_CONFIG, OPT_NEW_CONFIG,
	OPT_RING, OPT_OLD_RING, OPT_NEW_RING,
	OPT_OLD_PUBLISHED, OPT_JSON, OPT_TOP, OPT_INSTANCE, OPT_PIN_DIR,
};

struct diff_opts {
	struct kr_an_src side[2], both;
	int json;
	uint32_t top;
};

/* Side-specific options win over the shared ones. */
static void diff_merge(struct kr_an_src *s, const struct kr_an_src *both)
{
	if (!s->backends && !s->config && !s->published) {
		s->backends = both->backends;
		s->config = both->config;
	}
	if (!s->version && !s->published)
		s->version = both->version;
	if (!s->pm && !s->published)
		s->pm = both->pm;
	if (!s->ring && (s->config || s->published))
		s->ring = both->ring;
}

/* One option of the table (opts.h callback): 0, or -1 with err for a bad value. */
static int diff_opt(void *ctx, int c, const char *arg, struct kr_err *err)
{
	struct diff_opts *o = ctx;
	struct kr_an_src *s = &o->both;
	static const char *const vname[] = { "--version", "--old-version", "--new-version" };
	static const char *const pname[] = { "--point-multiple", "--old-point-multiple",
					     "--new-point-multiple" };
	int which = 0;

	switch (c) {
	case OPT_OLD_BACKENDS: case OPT_OLD_VERSION: case OPT_OLD_PM: case OPT_OLD_CONFIG:
	case OPT_OLD_RING: case OPT_OLD_PUBLISHED:
		s = &o->side[0];
		which = 1;
		break;
	case OPT_NEW_BACKENDS: case OPT_NEW_VERSION: case OPT_NEW_PM: case OPT_NEW_CONFIG:
	case OPT_NEW_RING:
		s = &o->side[1];
		which = 2;
		break;
	}
	switch (c) {
	case OPT_BACKENDS: case OPT_OLD_BACKENDS: case OPT_NEW_BACKENDS:
		s->backends = arg;
		return 0;
	case 'c': case OPT_OLD_CONFIG: case OPT_NEW_CONFIG:
		s->config = arg;
		return 0;
	case OPT_RING: case OPT_OLD_RING: case OPT_NEW_RING:
		s->ring = arg;
		return 0;
	case OPT_OLD_PUBLISHED:
		s->published = 1;
		return 0;
	case OPT_INSTANCE:
		o->side[0].instance = arg;
		return 0;
	case OPT_PIN_DIR:
		o->side[0].pin_dir = arg;
		return 0;
	case OPT_VERSION: case OPT_OLD_VERSION: case OPT_NEW_VERSION:
		return kr_an_parse_version(vname[which], arg, &s->version, err);
	case OPT_PM: case OPT_OLD_PM: case OPT_NEW_PM:
		return kr_an_parse_u32(pname[which], arg, 1, &s->pm, err);
	case OPT_JSON:
		o->json = 1;
		return 0;
	case OPT_TOP:
		return kr_an_parse_u32("--top", arg, 0, &o->top, err);
	}
	return 0;
}

static int diff_parse(int argc, char **argv, struct diff_opts *o)
{
	const struct kr_opt opts[] = {
		KR_OPT_CB("backends", 0, KR_ARG_REQUIRED, OPT_BACKENDS),
		KR_OPT_CB("old-backends", 0, KR_ARG_REQUIRED, OPT_OLD_BACKENDS),
		KR_OPT_CB("new-backends", 0, KR_ARG_REQUIRED, OPT_NEW_BACKENDS),
		KR_OPT_CB("version", 0, KR_ARG_REQUIRED, OPT_VERSION),
		KR_OPT_CB("old-version", 0, KR_ARG_REQUIRED, OPT_OLD_VERSION),
		KR_OPT_CB("new-version", 0, KR_ARG_REQUIRED, OPT_NEW_VERSION),
		KR_OPT_CB("point-multiple", 0, KR_ARG_REQUIRED, OPT_PM),
		KR_OPT_CB("old-point-multiple", 0, KR_ARG_REQUIRED, OPT_OLD_PM),
		KR_OPT_CB("new-point-multiple", 0, KR_ARG_REQUIRED, OPT_NEW_PM),
		KR_OPT_CB("config", 'c', KR_ARG_REQUIRED, 'c'),
		KR_OPT_CB("old-config", 0, KR_ARG_REQUIRED, OPT_OLD_CONFIG),
		KR_OPT_CB("new-config", 0, KR_ARG_REQUIRED, OPT_NEW_CONFIG),
		KR_OPT_CB("ring", 0, KR_ARG_REQUIRED, OPT_RING),
		KR_OPT_CB("old-ring", 0, KR_ARG_REQUIRED, OPT_OLD_RING),
		KR_OPT_CB("new-ring", 0, KR_ARG_REQUIRED, OPT_NEW_RING),
		KR_OPT_CB("old-published", 0, KR_ARG_NONE, OPT_OLD_PUBLISHED),
		KR_OPT_CB("instance", 0, KR_ARG_REQUIRED, OPT_INSTANCE),
		KR_OPT_CB("pin-dir", 0, KR_ARG_REQUIRED, OPT_PIN_DIR),
		KR_OPT_CB("json", 0, KR_ARG_NONE, OPT_JSON),
		KR_OPT_CB("top", 0, KR_ARG_REQUIRED, OPT_TOP),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .help = diff_help, .cb = diff_opt, .ctx = o,
					 .no_args = true };
	struct kr_err err;
	int first;

	o->top = 20;
	first = kr_opts_parse(argc, argv, opts, &cmd);
	if (first < 0)
		return kr_opts_status(first);
	diff_merge(&o->side[0], &o->both);
	diff_merge(&o->side[1], &o->both);
	if (kr_an_src_check(&o->side[0], "old", &err) || kr_an_src_check(&o->side[1], "new", &err))
		return kr_usage_error("%s", err.msg);
	if ((o->side[0].instance || o->side[0].pin_dir) && !o->side[0].published)
		return kr_usage_error("--instance and --pin-dir apply to --old-published only");
	return -1;
}

/* The union of both rings' backends, matched by socket address. */
struct members {
	uint32_t n;			/* union size */
	uint32_t *new_id;		/* new ring-local index -> union id (old ids = old index) */
	int32_t *old_idx, *new_idx;	/* union id -> ring-local index or -1 */
	double *w_old, *w_new;
	const struct kr_sockaddr **addr;
};

static void members_free(struct members *m)
{
	free(m->new_id);
	free(m->old_idx);
	free(m->new_idx);
	free(m->w_old);
	free(m->w_new);
	free(m->addr);
}

static const struct kr_ring *cmp_ring;

static int by_addr(const void *x, const void *y)
{
	return kr_sockaddr_cmp(&cmp_ring->backends[*(const uint32_t *)x].addr,
			       &cmp_ring->backends[*(const uint32_t *)y].addr);
}

static int members_build(const struct kr_ring *a, const struct kr_ring *b, struct members *m)
{
	uint32_t na = a->nbackends, nb = b->nbackends, cap = na + nb, *ord;

	memset(m, 0, sizeof(*m));
	ord = malloc(na * sizeof(*ord));
	m->new_id = malloc(nb * sizeof(*m->new_id));
	m->old_idx = malloc(cap * sizeof(*m->old_idx));
	m->new_idx = malloc(cap * sizeof(*m->new_idx));
	m->w_old = calloc(cap, sizeof(*m->w_old));
	m->w_new = calloc(cap, sizeof(*m->w_new));
	m->addr = calloc(cap, sizeof(*m->addr));
	if (!ord || !m->new_id || !m->old_idx || !m->new_idx || !m->w_old || !m->w_new ||
	    !m->addr) {
		free(ord);
		return -1;
	}
	for (uint32_t i = 0; i < na; i++) {
		ord[i] = i;
		m->old_idx[i] = (int32_t)i;
		m->new_idx[i] = -1;
		m->w_old[i] = a->backends[i].weight;
		m->addr[i] = &a->backends[i].addr;
	}
	m->n = na;
	cmp_ring = a;
	qsort(ord, na, sizeof(*ord), by_addr);
	for (uint32_t j = 0; j < nb; j++) {
		uint32_t lo = 0, hi = na, id;

		while (lo < hi) {	/* lower bound of b's address among a's */
			uint32_t mid = lo + (hi - lo) / 2;

			if (kr_sockaddr_cmp(&a->backends[ord[mid]].addr, &b->backends[j].addr) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < na && !kr_sockaddr_cmp(&a->backends[ord[lo]].addr, &b->backends[j].addr)) {
			id = ord[lo];
		} else {
			id = m->n++;
			m->old_idx[id] = -1;
			m->addr[id] = &b->backends[j].addr;
		}
		m->new_id[j] = id;
		m->new_idx[id] = (int32_t)j;
		m->w_new[id] = b->backends[j].weight;
	}
	free(ord);
	return 0;
}

struct diff_result {
	struct members m;
	uint64_t moved, *lost, *gained, *share_old, *share_new;
	double min_weights, min_shares;
};

static void diff_result_free(struct diff_result *d)
{
	members_free(&d->m);
	free(d->lost);
	free(d->gained);
	free(d->share_old);
	free(d->share_new);
}

static int diff_run(const struct kr_ring *a, const struct kr_ring *b, struct diff_result *d)
{
	struct kr_an_ring ra = { 0 }, rb = { 0 };
	double *so = NULL, *sn = NULL;
	uint32_t n;
	int ret = -1;

	memset(d, 0, sizeof(*d));
	if (members_build(a, b, &d->m))
		return -1;
	n = d->m.n;
	d->lost = calloc(n, sizeof(*d->lost));
	d->gained = calloc(n, sizeof(*d->gained));
	d->share_old = calloc(n, sizeof(*d->share_old));
	d->share_new = calloc(n, sizeof(*d->share_new));
	so = calloc(n, sizeof(*so));
	sn = calloc(n, sizeof(*sn));
	if (!d->lost || !d->gained || !d->share_old || !d->share_new || !so || !sn ||
	    kr_an_ring_borrow(&ra, a->hash, a->npoints, n) ||
	    kr_an_ring_borrow(&rb, b->hash, b->npoints, n))
		goto out;
	for (uint32_t j = 0; j < a->npoints; j++)
		ra.owner[j] = a->backend[j];
	for (uint32_t j = 0; j < b->npoints; j++)
		rb.owner[j] = d->m.new_id[b->backend[j]];
	if (kr_an_diff(&ra, &rb, &d->moved, d->lost, d->gained))
		goto out;
	kr_an_shares(&ra, d->share_old);
	kr_an_shares(&rb, d->share_new);
	for (uint32_t i = 0; i < n; i++) {
		so[i] = (double)d->share_old[i];
		sn[i] = (double)d->share_new[i];
	}
	d->min_weights = kr_an_min_moved(d->m.w_old, d->m.w_new, n);
	d->min_shares = kr_an_min_moved(so, sn, n);
	ret = 0;
out:
	kr_an_ring_free(&ra);
	kr_an_ring_free(&rb);
	free(so);
	free(sn);
	return ret;
}

static double frac(uint64_t keys) { return (double)keys / (double)KR_AN_SPACE; }

static const struct diff_result *sort_d;

static int by_change(const void *x, const void *y)
{
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	uint64_t a = sort_d->lost[i] + sort_d->gained[i], b = sort_d->lost[j] + sort_d->gained[j];

	return a > b ? -1 : a < b ? 1 : (i > j) - (i < j);
}

/* Union ids with keys lost or gained, most first. */
static uint32_t changed_ids(const struct diff_result *d, uint32_t *ord)
{
	uint32_t m = 0;

	for (uint32_t i = 0; i < d->m.n; i++)
		if (d->lost[i] || d->gained[i] || d->m.w_old[i] != d->m.w_new[i])
			ord[m++] = i;
	sort_d = d;
	qsort(ord, m, sizeof(*ord), by_change);
	return m;
}

static double overhead(const struct diff_result *d)
{
	return d->min_weights > 0 ? frac(d->moved) / d->min_weights : (d->moved ? INFINITY : 1.0);
}

static void print_text(const struct kr_an_built *b, const struct diff_result *d, uint32_t top)
{
	uint32_t *ord = malloc((d->m.n ? d->m.n : 1) * sizeof(*ord)), m;
	char buf[KR_SOCKADDR_STRLEN];

	printf("old       %s: %u backends, %u points\n", b[0].desc, b[0].ring->nbackends,
	       b[0].ring->npoints);
	printf("new       %s: %u backends, %u points\n", b[1].desc, b[1].ring->nbackends,
	       b[1].ring->npoints);
	printf("moved     %.6f%% of the key space (%llu of 2^32 key hashes change owner)\n",
	       100 * frac(d->moved), (unsigned long long)d->moved);
	printf("minimum   %.6f%% for this membership/weight change (sum of max(0, s - s') over "
	       "the weight shares)\n", 100 * d->min_weights);
	printf("          %.6f%% between the two rings' actual shares\n", 100 * d->min_shares);
	if (d->min_weights > 0) {
		printf("overhead  %.4fx the minimum of the weight change (%+.6f percentage points "
		       "of the key space)", overhead(d), 100 * (frac(d->moved) - d->min_weights));
		if (overhead(d) < 1)
			printf(": below 1 because the rings' actual shares moved less than the "
			       "weights (their minimum: %.6f%%)", 100 * d->min_shares);
		printf("\n");
	}
	else
		printf("overhead  the weights did not change: every moved key is the ring's own "
		       "overhead\n");
	if (!ord)
		return;
	m = changed_ids(d, ord);
	printf("\nbackends that lose or gain keys: %u (%% of the key space)\n", m);
	if (m)
		printf("  %-24s %5s %5s %11s %11s %11s %11s\n", "address", "old w", "new w",
		       "old share", "new share", "lost", "gained");
	for (uint32_t k = 0; k < m && (top == 0 || k < top); k++) {
		uint32_t i = ord[k];

		char wo[16] = "-", wn[16] = "-";

		kr_sockaddr_format(d->m.addr[i], buf);
		if (d->m.old_idx[i] >= 0)
			snprintf(wo, sizeof(wo), "%.0f", d->m.w_old[i]);
		if (d->m.new_idx[i] >= 0)
			snprintf(wn, sizeof(wn), "%.0f", d->m.w_new[i]);
		printf("  %-24s %5s %5s %10.5f%% %10.5f%% %10.5f%% %10.5f%%\n", buf, wo, wn,
		       100 * frac(d->share_old[i]), 100 * frac(d->share_new[i]),
		       100 * frac(d->lost[i]), 100 * frac(d->gained[i]));
	}
	if (top && m > top)
		printf("  ... %u more (--top 0 lists all)\n", m - top);
	free(ord);
}

static int spill_diff(const struct diff_opts *o, const struct kr_an_built *b, json_t *jo);

static int print_json(const struct diff_opts *op, const struct kr_an_built *b,
		      const struct diff_result *d)
{
	uint32_t *ord = malloc((d->m.n ? d->m.n : 1) * sizeof(*ord)), m;
	json_t *arr = json_array(), *o;
	char buf[KR_SOCKADDR_STRLEN];

	if (!ord || !arr)
		return 1;
	m = changed_ids(d, ord);
	for (uint32_t k = 0; k < m; k++) {
		uint32_t i = ord[k];

		kr_sockaddr_format(d->m.addr[i], buf);
		json_array_append_new(arr, json_pack(
			"{s:s, s:o, s:o, s:f, s:f, s:I, s:I, s:I, s:I}", "address", buf,
			"old_weight", d->m.old_idx[i] < 0 ? json_null() : json_integer((json_int_t)d->m.w_old[i]),
			"new_weight", d->m.new_idx[i] < 0 ? json_null() : json_integer((json_int_t)d->m.w_new[i]),
			"old_share", frac(d->share_old[i]), "new_share", frac(d->share_new[i]),
			"lost_keys", (json_int_t)d->lost[i], "gained_keys", (json_int_t)d->gained[i],
			"old_index", (json_int_t)d->m.old_idx[i], "new_index", (json_int_t)d->m.new_idx[i]));
	}
	free(ord);
	o = json_pack("{s:{s:s, s:i, s:i}, s:{s:s, s:i, s:i}, s:I, s:f, s:f, s:f, s:o, s:o}",
		      "old", "ring", b[0].desc, "backends", (json_int_t)b[0].ring->nbackends,
		      "points", (json_int_t)b[0].ring->npoints,
		      "new", "ring", b[1].desc, "backends", (json_int_t)b[1].ring->nbackends,
		      "points", (json_int_t)b[1].ring->npoints,
		      "moved_keys", (json_int_t)d->moved, "moved", frac(d->moved),
		      "min_moved_weights", d->min_weights, "min_moved_shares", d->min_shares,
		      "overhead", d->min_weights > 0 ? json_real(overhead(d)) : json_null(),
		      "backends", arr);
	if (o && spill_diff(op, b, o))
		pr_warn("keyrouter: diff: out of memory\n");
	return kr_an_json_print(o, "diff");
}

/* ---- spill, state and hot keys (spill_price.h) ---------------------------------------- */

/* One side's backend states and spill fractions on ring r (matched by address), and its
 * hot keys: from a configuration, or the published instance's kr_backends / kr_hot_keys. */
struct spill_side {
	uint8_t *up;
	uint16_t *spill;
	uint8_t *found;		/* the backend is on this side (else: a membership change) */
	struct kr_hot_ent *hot;
	uint32_t nhot;
	bool known;
};

#define SPILL_NOT_GIVEN 0xffff	/* above KR_SPILL_MAX: no configuration gives it */

static int side_from_config(const char *file, const char *ring, const struct kr_ring *r,
			    struct spill_side *sd)
{
	struct kr_config *cfg = kr_cli_config_load(file);
	int ri = cfg ? kr_config_ring(cfg, ring) : -1;

	if (ri < 0) {
		kr_config_free(cfg);
		return -1;
	}
	const struct kr_cfg_ring *cr = &cfg->rings[ri];

	for (uint32_t b = 0; b < r->nbackends; b++)
		for (uint32_t i = 0; i < cr->nbackends; i++)
			if (!kr_sockaddr_cmp(&cr->backends[i].addr, &r->backends[b].addr)) {
				sd->found[b] = 1;
				sd->up[b] = cr->backends[i].state == KR_BACKEND_UP;
				/* not given: apply keeps the running value (NOT_GIVEN) */
				sd->spill[b] = cr->backends[i].has_spill ? cr->backends[i].spill :
					       SPILL_NOT_GIVEN;
			}
	sd->hot = calloc(cr->nhot_keys + 1, sizeof(*sd->hot));
	for (uint32_t i = 0; sd->hot && i < cr->nhot_keys; i++)
		sd->hot[sd->nhot++] = (struct kr_hot_ent){ .k = { 0, cr->hot_keys[i].hash },
							   .v = { cr->hot_keys[i].replicas, 0 } };
	sd->known = true;
	kr_config_free(cfg);
	return 0;
}

static int side_from_instance(const struct kr_an_src *src, const char *ring,
			      const struct kr_ring *r, struct spill_side *sd)
{
	struct kr_backend *all = NULL;
	struct kr_ops_maps m;
	struct kr_inst in;
	int rc = -1, id;

	if (kr_ops_inst_open_reader(&in, src->instance, src->pin_dir))
		return -1;
	if (kr_ops_maps_open(&in, &m))
		goto out_inst;
	id = kr_ops_ring_find(&in, ring);
	if (id < 0 || kr_ops_backends_read(&m, &all))
		goto out;
	for (uint32_t b = 0; b < r->nbackends; b++) {
		const struct kr_sockaddr *a = &r->backends[b].addr;

		for (__u32 i = 0; i < m.backends_max; i++)
			if (all[i].family == a->family && ntohs(all[i].port) == a->port &&
			    !memcmp(all[i].addr, a->ip, a->family == 4 ? 4 : 16) &&
			    all[i].state <= KR_BACKEND_DRAIN) {
				sd->found[b] = 1;
				sd->up[b] = all[i].state == KR_BACKEND_UP;
				sd->spill[b] = all[i].spill;
				break;
			}
	}
	if (kr_ops_hot_list(&m, id, &sd->hot, &sd->nhot) == -EOPNOTSUPP)
		sd->nhot = 0;
	for (uint32_t i = 0; i < sd->nhot; i++)
		sd->hot[i].k.ring_id = 0;
	sd->known = true;
	rc = 0;
out:
	free(all);
	kr_ops_maps_close(&m);
out_inst:
	kr_ops_inst_close(&in);
	return rc;
}

static const struct kr_hot_ent *hot_find(const struct spill_side *s, uint32_t h)
{
	for (uint32_t i = 0; i < s->nhot; i++)
		if (s->hot[i].k.key_hash == h)
			return &s->hot[i];
	return NULL;
}

/* The bill of the spill/state/hot-key change on the new ring, when the two sides differ
 * there (printed after the ring's own figures). */
static int spill_diff(const struct diff_opts *o, const struct kr_an_built *b, json_t *jo)
{
	const struct kr_ring *r = b[1].ring;
	uint32_t nb = r->nbackends;
	struct spill_side sd[2] = {};
	struct kr_spill_price p = {};
	json_t *arr = NULL, *hot = NULL;
	bool same;
	int rc = 0;

	for (int s = 0; s < 2; s++) {
		sd[s].up = calloc(nb + 1, 1);
		sd[s].spill = calloc(nb + 1, sizeof(uint16_t));
		sd[s].found = calloc(nb + 1, 1);
		if (!sd[s].up || !sd[s].spill || !sd[s].found)
			goto out;
		if (o->side[s].published)
			side_from_instance(&o->side[s], b[0].name[0] ? b[0].name : b[1].name, r,
					   &sd[s]);
		else if (o->side[s].config && b[s].name[0])
			side_from_config(o->side[s].config, b[s].name, r, &sd[s]);
	}
	if (!sd[0].known || !sd[1].known)
		goto out;
	for (uint32_t i = 0; i < nb; i++) {	/* a config without "spill": kept, or none */
		if (sd[0].spill[i] == SPILL_NOT_GIVEN)
			sd[0].spill[i] = 0;
		if (sd[1].spill[i] == SPILL_NOT_GIVEN)
			sd[1].spill[i] = o->side[0].published ? sd[0].spill[i] : 0;
		/* a backend the old side does not have is a membership change, which the ring's
		 * own figures above price: not a state or spill change here */
		if (!sd[0].found[i]) {
			sd[0].up[i] = sd[1].up[i];
			sd[0].spill[i] = sd[1].spill[i];
		}
	}
	same = !memcmp(sd[0].up, sd[1].up, nb) && !memcmp(sd[0].spill, sd[1].spill, nb * 2) &&
	       sd[0].nhot == sd[1].nhot;
	for (uint32_t i = 0; same && i < sd[1].nhot; i++) {
		const struct kr_hot_ent *e = hot_find(&sd[0], sd[1].hot[i].k.key_hash);

		same = e && e->v.replicas == sd[1].hot[i].v.replicas;
	}
	if (same)
		goto out;
	struct kr_spill_side sa = { sd[0].up, sd[0].spill }, sb = { sd[1].up, sd[1].spill };

	if (kr_spill_price(r, &sa, &sb, 0, 1ull << 32, &p)) {
		rc = -1;
		goto out;
	}
	if (jo) {
		arr = json_array();
		hot = json_array();
	} else {
		printf("\nspill and state on the new ring (exact: floor sums over each arc)\n");
		printf("moved     %.6f%% of the key space (%llu of 2^32 key hashes)\n",
		       100.0 * (double)p.moved / 4294967296.0, (unsigned long long)p.moved);
		printf("  %-24s %7s %7s %11s %11s\n", "address", "spill", "-> spill", "lost",
		       "gained");
	}
	for (uint32_t i = 0; i < nb; i++) {
		char a[KR_SOCKADDR_STRLEN];

		if (!p.lost[i] && !p.gained[i] && sd[0].spill[i] == sd[1].spill[i])
			continue;
		kr_sockaddr_format(&r->backends[i].addr, a);
		if (arr)
			json_array_append_new(arr, json_pack("{s:s,s:f,s:f,s:I,s:I,s:f,s:f}",
					      "address", a, "old_spill", sd[0].spill[i] / 65536.0,
					      "new_spill", sd[1].spill[i] / 65536.0, "lost_keys",
					      (json_int_t)p.lost[i], "gained_keys", (json_int_t)p.gained[i],
					      "lost", p.lost[i] / 4294967296.0,
					      "gained", p.gained[i] / 4294967296.0));
		else
			printf("  %-24s %7.4f %7.4f %10.5f%% %10.5f%%\n", a, sd[0].spill[i] / 65536.0,
			       sd[1].spill[i] / 65536.0, 100.0 * p.lost[i] / 4294967296.0,
			       100.0 * p.gained[i] / 4294967296.0);
	}
	for (int s = 0; s < 2; s++)
		for (uint32_t i = 0; i < sd[s].nhot; i++) {
			const struct kr_hot_ent *e = &sd[s].hot[i], *x = hot_find(&sd[!s], e->k.key_hash);
			char h[16];

			if ((x && (s == 0 || x->v.replicas == e->v.replicas)))
				continue;
			snprintf(h, sizeof(h), "0x%08x", e->k.key_hash);
			if (hot)
				json_array_append_new(hot, json_pack("{s:s,s:i,s:i}", "hash", h,
						      "old_replicas", s ? (x ? (int)x->v.replicas : 1) :
						      (int)e->v.replicas, "new_replicas",
						      s ? (int)e->v.replicas : 1));
			else
				printf("hot key   %s: %u -> %u replicas (that key's clients spread over "
				       "them; no other key moves)\n", h,
				       s ? (x ? x->v.replicas : 1) : e->v.replicas,
				       s ? e->v.replicas : 1);
		}
	if (jo)
		json_object_set_new(jo, "spill", json_pack("{s:I,s:f,s:o,s:o}", "moved_keys",
					(json_int_t)p.moved, "moved", p.moved / 4294967296.0,
					"backends", arr, "hot_keys", hot));
out:
	kr_spill_price_free(&p);
	for (int s = 0; s < 2; s++) {
		free(sd[s].up);
		free(sd[s].spill);
		free(sd[s].found);
		free(sd[s].hot);
	}
	return rc;
}

static int cmd_diff(int argc, char **argv)
{
	struct diff_opts o = { 0 };
	struct kr_an_built b[2] = { 0 };
	struct diff_result d = { 0 };
	struct kr_err err;
	int ret;

	ret = diff_parse(argc, argv, &o);
	if (ret >= 0)
		return ret;
	ret = 1;
	for (int s = 1; s >= 0; s--) {	/* new first: a published old ring may take its name */
		if (s == 0 && o.side[0].published && !o.side[0].ring && b[1].name[0])
			o.side[0].ring = b[1].name;
		/* the rule of every command with -c FILE on a live instance (kr_cli_instance):
		 * the new configuration's "instance" */
		if (s == 0 && o.side[0].published)
			o.side[0].instance = kr_cli_instance(o.side[0].instance, o.side[0].pin_dir,
							     b[1].instance);
		if (kr_ops_an_src_build(&o.side[s], &b[s], &err)) {
			pr_warn("keyrouter: diff: %s ring: %s\n", s ? "new" : "old", err.msg);
			goto out;
		}
	}
	if (diff_run(b[0].ring, b[1].ring, &d)) {
		pr_warn("keyrouter: diff: out of memory\n");
		goto out;
	}
	if (o.json) {
		ret = print_json(&o, b, &d);
	} else {
		print_text(b, &d, o.top);
		ret = spill_diff(&o, b, NULL) ? 1 : 0;
	}
out:
	diff_result_free(&d);
	kr_an_built_free(&b[0]);
	kr_an_built_free(&b[1]);
	return ret;
}
KR_COMMAND(diff, "diff",
	   "the exact fraction of keys that change backend between two rings, vs the minimum",
	   cmd_diff);
