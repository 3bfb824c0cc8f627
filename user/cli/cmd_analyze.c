// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `keyrouter analyze`: points, collisions, shares against weights, CV, memory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "an_published.h"
#include "analytics.h"
#include "cmd.h"
#include "opts.h"
#include "json_out.h"
#include "log.h"

static const char analyze_help[] =
	"Usage: keyrouter analyze --backends FILE --version v1|v2 [--point-multiple N]\n"
	"       keyrouter analyze -c CONFIG [--ring NAME]\n"
	"\n"
	"Builds the ring and reports what it costs and how well it balances:\n"
	"  points       generated, in the ring, removed by 32-bit hash collisions (and the\n"
	"               expected number: P - 2^32 (1 - (1 - 2^-32)^P), about P^2/2^33)\n"
	"  balance      each backend's share of the 2^32 key hashes against its weight share;\n"
	"               r = share / weight share; CV = sqrt(mean (r - 1)^2); max/mean of r;\n"
	"               the theoretical CV: per backend sqrt((H - k)/(k (H + 1))) for k of H\n"
	"               points (N equal backends: sqrt((N-1)/(N k + 1))), and with the bias\n"
	"               that collisions add (the tie order favours some backends)\n"
	"  memory       as v1 (8 B/point), v2 (6 B/point) and the kernel ring image (header,\n"
	"               bucket index, backend table, 6-byte points in 12288-byte chunks)\n"
	"\n"
	"Ring selection:\n"
	"  --backends FILE        '<SocketAddr> <weight>' per line (as `ring dump`)\n"
	"  --version v1|v2        ring format (with --backends; overrides the config's)\n"
	"  --point-multiple N     v2: points per weight unit (default 160)\n"
	"  -c, --config FILE      a keyrouter configuration ...\n"
	"  --ring NAME            ... and one of its rings (optional if it has only one)\n"
	"Output:\n"
	"  --json                 one JSON object (every backend included)\n"
	"  --all                  list every backend (default: all up to 20 backends, else\n"
	"                         the 5 most over- and under-loaded)\n"
	"  -h, --help             this text\n"
	"\n"
	"docs/analytics.md explains the figures.\n";

enum { OPT_BACKENDS = 0x100, OPT_VERSION, OPT_PM, OPT_RING, OPT_JSON, OPT_ALL };

struct analyze_opts {
	struct kr_an_src src;
	bool json, all;
};

static int analyze_cb(void *ctx, int id, const char *arg, struct kr_err *err)
{
	struct analyze_opts *o = ctx;

	switch (id) {
	case OPT_VERSION:
		return kr_an_parse_version("--version", arg, &o->src.version, err);
	case OPT_PM:
		return kr_an_parse_u32("--point-multiple", arg, 1, &o->src.pm, err);
	}
	return 0;
}

static int analyze_parse(int argc, char **argv, struct analyze_opts *o)
{
	const struct kr_opt opts[] = {
		KR_OPT_STR("backends", 0, &o->src.backends),
		KR_OPT_CB("version", 0, KR_ARG_REQUIRED, OPT_VERSION),
		KR_OPT_CB("point-multiple", 0, KR_ARG_REQUIRED, OPT_PM),
		KR_OPT_STR("config", 'c', &o->src.config),
		KR_OPT_STR("ring", 0, &o->src.ring),
		KR_OPT_FLAG("json", 0, &o->json),
		KR_OPT_FLAG("all", 0, &o->all),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .help = analyze_help, .cb = analyze_cb, .ctx = o,
					 .no_args = true };
	struct kr_err err;
	int first = kr_opts_parse(argc, argv, opts, &cmd);

	if (first < 0)
		return kr_opts_status(first);
	if (kr_an_src_check(&o->src, NULL, &err))
		return kr_usage_error("%s", err.msg);
	return -1;
}

/* Everything analyze reports, computed once for both output forms. */
struct analysis {
	const struct kr_ring *r;
	uint64_t *share, wsum;
	uint32_t *w, *points;		/* weight and ring points per backend */
	uint64_t *k;			/* generated points per backend */
	double *bias;
	struct kr_an_stats st;
	struct kr_an_theory th;
	struct kr_an_mem mem;		/* of the image as the encoder builds it */
};

static void analysis_free(struct analysis *a)
{
	free(a->share);
	free(a->w);
	free(a->points);
	free(a->k);
	free(a->bias);
}

static int analysis_run(const struct kr_an_built *b, struct analysis *a, struct kr_err *err)
{
	const struct kr_ring *r = b->ring;
	uint32_t n = r->nbackends;

	memset(a, 0, sizeof(*a));
	a->r = r;
	a->share = calloc(n, sizeof(*a->share));
	a->w = calloc(n, sizeof(*a->w));
	a->points = calloc(n, sizeof(*a->points));
	a->k = calloc(n, sizeof(*a->k));
	a->bias = calloc(n, sizeof(*a->bias));
	if (!a->share || !a->w || !a->points || !a->k || !a->bias)
		return kr_errf(err, "out of memory");
	for (uint32_t i = 0; i < n; i++) {
		a->w[i] = r->backends[i].weight;
		a->k[i] = (uint64_t)a->w[i] * r->point_multiple;
		a->wsum += a->w[i];
	}
	for (uint32_t j = 0; j < r->npoints; j++)
		a->points[r->backend[j]]++;
	kr_an_ring_shares(r, a->share);
	if (kr_an_share_stats(a->share, a->w, n, &a->st))
		return kr_errf(err, "%s: no backend has a weight > 0", b->desc);
	if (kr_an_theory(a->w, b->rank, n, r->point_multiple, 1, &a->th))
		return kr_errf(err, "%s: ring too large for the theory", b->desc);
	kr_an_collision_bias(a->k, b->rank, n, a->bias);
	if (kr_an_memory(r->npoints, (uint64_t)r->npoints + r->ndups, n, &a->mem))
		return kr_errf(err, "%s: ring too large", b->desc);
	return 0;
}

static const char *addr_str(const struct kr_ring *r, uint32_t i, char *buf)
{
	kr_sockaddr_format(&r->backends[i].addr, buf);
	return buf;
}

static double ratio_of(const struct analysis *a, uint32_t i)
{
	if (!a->w[i])
		return 0.0;
	return ((double)a->share[i] / (double)KR_AN_SPACE) / ((double)a->w[i] / (double)a->wsum);
}

static json_t *backend_json(const struct analysis *a, uint32_t i)
{
	char buf[KR_SOCKADDR_STRLEN];
	uint64_t total = a->th.points;

	return json_pack("{s:i, s:s, s:i, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f}",
			 "index", (json_int_t)i, "address", addr_str(a->r, i, buf),
			 "weight", (json_int_t)a->w[i], "points_generated", (json_int_t)a->k[i],
			 "points", (json_int_t)a->points[i], "share_keys", (json_int_t)a->share[i],
			 "share", (double)a->share[i] / (double)KR_AN_SPACE,
			 "weight_share", a->wsum ? (double)a->w[i] / (double)a->wsum : 0.0,
			 "ratio", ratio_of(a, i),
			 "cv_theory", kr_an_cv_backend(total, a->k[i]),
			 "collision_bias", a->bias[i]);
}

static int print_json(const struct kr_an_built *b, const struct analysis *a)
{
	const struct kr_ring *r = a->r;
	json_t *o, *arr = json_array();

	for (uint32_t i = 0; i < r->nbackends; i++)
		json_array_append_new(arr, backend_json(a, i));
	o = json_pack("{s:s, s:i, s:i, s:i, s:I, s:o, s:o,"
		      " s:{s:I, s:i, s:i, s:f, s:f, s:s},"
		      " s:{s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:i},"
		      " s:{s:I, s:I, s:I, s:i, s:i, s:f}, s:o}",
		      "ring", b->desc, "version", (json_int_t)r->version,
		      "point_multiple", (json_int_t)r->point_multiple,
		      "backends", (json_int_t)r->nbackends, "total_weight", (json_int_t)a->wsum,
		      "point_multiple_auto", json_boolean(b->pm_auto),
		      "target_cv", b->pm_auto ? json_real(b->target_cv) : json_null(),
		      "points",
		      "generated", (json_int_t)r->stats.generated,
		      "ring", (json_int_t)r->npoints, "collisions", (json_int_t)r->ndups,
		      "collisions_expected", a->th.collisions,
		      "collision_pairs_expected", a->th.collision_pairs,
		      "generator", kr_gen_name((enum kr_gen)r->stats.gen),
		      "balance",
		      "cv", a->st.cv, "cv_theory", a->th.cv, "cv_theory_collisions", a->th.cv_total,
		      "max_over_mean", a->st.max_over_mean,
		      "max_over_mean_theory", a->th.max_over_mean,
		      "min_over_mean", a->st.min_over_mean,
		      "max_backend", (json_int_t)a->st.argmax, "min_backend", (json_int_t)a->st.argmin,
		      "memory",
		      "v1_bytes", (json_int_t)a->mem.v1_bytes, "v2_bytes", (json_int_t)a->mem.v2_bytes,
		      "image_bytes", (json_int_t)a->mem.image_bytes,
		      "image_chunks", (json_int_t)a->mem.nchunks,
		      "bucket_bits", (json_int_t)a->mem.bucket_bits,
		      "image_bytes_per_point",
		      (double)a->mem.image_bytes / (double)(r->npoints ? r->npoints : 1),
		      "per_backend", arr);
	return kr_an_json_print(o, "analyze");
}

static void print_backend_row(const struct analysis *a, uint32_t i)
{
	char buf[KR_SOCKADDR_STRLEN];

	char r[16] = "-", d[16] = "(drained)";

	if (a->w[i]) {
		snprintf(r, sizeof(r), "%.4f", ratio_of(a, i));
		snprintf(d, sizeof(d), "%+.4f", ratio_of(a, i) - 1.0);
	}
	printf("  %6u %-24s %7u %9u %9.4f%% %9.4f%% %8s %9s\n", i, addr_str(a->r, i, buf),
	       a->w[i], a->points[i], 100.0 * (double)a->share[i] / (double)KR_AN_SPACE,
	       a->wsum ? 100.0 * a->w[i] / (double)a->wsum : 0.0, r, d);
}

static const struct analysis *sort_ctx;

static int by_ratio(const void *x, const void *y)
{
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	double a = ratio_of(sort_ctx, i), b = ratio_of(sort_ctx, j);

	return a > b ? -1 : a < b ? 1 : (i > j) - (i < j);
}

static void print_backends(const struct analysis *a, int all)
{
	uint32_t n = a->r->nbackends, *ord, m = 0;

	printf("\nbackends (r = share / weight share):\n");
	printf("  %6s %-24s %7s %9s %10s %10s %8s %9s\n", "index", "address", "weight", "points",
	       "share", "weight%", "r", "r-1");
	if (all || n <= 20) {
		for (uint32_t i = 0; i < n; i++)
			print_backend_row(a, i);
		return;
	}
	ord = malloc(n * sizeof(*ord));
	if (!ord)
		return;
	for (uint32_t i = 0; i < n; i++)
		if (a->w[i])
			ord[m++] = i;
	sort_ctx = a;
	qsort(ord, m, sizeof(*ord), by_ratio);
	for (uint32_t i = 0; i < m && i < 5; i++)
		print_backend_row(a, ord[i]);
	printf("  %6s ... %u more (--all lists every backend)\n", "", m > 10 ? m - 10 : 0);
	for (uint32_t i = m > 5 ? (m > 10 ? m - 5 : 5) : m; i < m; i++)
		print_backend_row(a, ord[i]);
	free(ord);
}

static void print_text(const struct kr_an_built *b, const struct analysis *a, int all)
{
	const struct kr_ring *r = a->r;
	char x[KR_SOCKADDR_STRLEN], y[KR_SOCKADDR_STRLEN];

	printf("ring        %s\n", b->desc);
	if (b->pm_auto)
		printf("            point_multiple \"auto\" for target_cv %g: %u\n", b->target_cv,
		       r->point_multiple);
	printf("backends    %u (%u with weight > 0), total weight %llu\n", r->nbackends,
	       a->st.active, (unsigned long long)a->wsum);
	printf("points      %llu generated, %u in the ring, %u removed by 32-bit hash "
	       "collisions (expected %.1f; P^2/2^33 = %.1f pairs)\n",
	       (unsigned long long)r->stats.generated, r->npoints, r->ndups, a->th.collisions,
	       a->th.collision_pairs);
	printf("balance     r = each backend's share of the 2^32 key hashes / its weight share\n");
	printf("  CV        measured %.4f%%   theory %.4f%% (random placement), %.4f%% with "
	       "the collision tie bias\n", 100 * a->st.cv, 100 * a->th.cv, 100 * a->th.cv_total);
	printf("  max/mean  measured %.4f (backend %u %s)   theory E[max r] %.4f\n",
	       a->st.max_over_mean, a->st.argmax, addr_str(r, a->st.argmax, x),
	       a->th.max_over_mean);
	printf("  min/mean  measured %.4f (backend %u %s)\n", a->st.min_over_mean, a->st.argmin,
	       addr_str(r, a->st.argmin, y));
	char m1[32], m2[32], m3[32];

	printf("memory      v1 (8 B/point) %s, v2 (6 B/point) %s, kernel image %s = %.3f "
	       "B/point\n", kr_an_bytes(a->mem.v1_bytes, m1, sizeof(m1)),
	       kr_an_bytes(a->mem.v2_bytes, m2, sizeof(m2)),
	       kr_an_bytes(a->mem.image_bytes, m3, sizeof(m3)),
	       (double)a->mem.image_bytes / (double)(r->npoints ? r->npoints : 1));
	printf("            image: %u chunks of %u B = header 1 + bucket index %u (%u bucket "
	       "bits) + backend table %u%s + points %u (%u kept duplicates included)\n",
	       a->mem.nchunks, KR_CHUNK_BYTES, a->mem.idx_chunks, a->mem.bucket_bits,
	       a->mem.bt_chunks, a->mem.bt_chunks ? "" : " (in the header's chunk)",
	       a->mem.pt_chunks, r->ndups);
	print_backends(a, all);
}

static int cmd_analyze(int argc, char **argv)
{
	struct analyze_opts o = { 0 };
	struct kr_an_built b = { 0 };
	struct analysis a = { 0 };
	struct kr_err err;
	int ret;

	ret = analyze_parse(argc, argv, &o);
	if (ret >= 0)
		return ret;
	if (kr_ops_an_src_build(&o.src, &b, &err)) {
		pr_warn("keyrouter: analyze: %s\n", err.msg);
		return 1;
	}
	ret = 1;
	if (analysis_run(&b, &a, &err)) {
		pr_warn("keyrouter: analyze: %s\n", err.msg);
		goto out;
	}
	if (o.json) {
		ret = print_json(&b, &a);
	} else {
		print_text(&b, &a, o.all);
		ret = 0;
	}
out:
	analysis_free(&a);
	kr_an_built_free(&b);
	return ret;
}
KR_COMMAND(analyze, "analyze",
	   "a ring's points, collisions, balance (measured and theoretical CV) and memory",
	   cmd_analyze);
