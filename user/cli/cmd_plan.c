// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `keyrouter plan`: the smallest point_multiple for a target imbalance, its memory, and
 * the trade-off table (theory and real rings) over k = 1 .. 100000 points per weight. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "an_source.h"
#include "analytics.h"
#include "apply_out.h"
#include "backends_file.h"
#include "config.h"
#include "cmd.h"
#include "opts.h"
#include "json_out.h"
#include "log.h"
#include "plot_svg.h"

static const char plan_help[] =
	"Usage: keyrouter plan --servers N [--weights LIST | --backends FILE |\n"
	"                      -c CONFIG --ring NAME]\n"
	"                      (--target-cv X | --target-max-over-mean Y) [options]\n"
	"\n"
	"Finds the smallest v2 point_multiple (points per weight unit) whose ring meets the\n"
	"target load imbalance: first by theory (per backend CV sqrt((H-k)/(k(H+1))), plus\n"
	"the bias 32-bit hash collisions add; for max/mean the expected largest share ratio),\n"
	"then confirmed on a real ring built with the engine (stepping up by 2% until the\n"
	"measured value meets the target).  Prints its kernel memory per ring and for --rings\n"
	"R rings, the expected collisions, and a table over k = 1 .. --kmax per weight unit:\n"
	"theoretical CV, CV measured on a real ring, collisions, memory -- where more points\n"
	"stop helping, and where collisions make it worse.\n"
	"\n"
	"Backends:\n"
	"  --servers N            number of backends (synthetic 10.0.0.1:443, 10.0.0.2:443,\n"
	"                         ...; with --backends: must match the file, may be left out)\n"
	"  --weights LIST         weights, e.g. '1', '1,2,4' or '1..8', repeated over the N\n"
	"                         servers (default 1)\n"
	"  --backends FILE        real backends ('<SocketAddr> <weight>' per line)\n"
	"  -c, --config CONFIG    with --ring NAME: the backends and weights of that ring of\n"
	"  --ring NAME            the configuration (what its point_multiple should be)\n"
	"Target (one of):\n"
	"  --target-cv X          CV of share/weight-share, e.g. 0.01 or 1%\n"
	"  --target-max-over-mean Y   most loaded backend / mean, e.g. 1.05\n"
	"Options:\n"
	"  --rings R              memory for R rings of this shape (default 1)\n"
	"  --kmax K               the table's largest k per weight unit (default 100000)\n"
	"  --point-budget P       build (measure) only rings of at most P points (default\n"
	"                         20000000); larger rows show theory only\n"
	"  --no-measure           theory only (no ring is built)\n"
	"  --no-table             only the answer\n"
	"  --plot FILE.svg        draw theoretical and measured CV against k (log-log)\n"
	"  --json                 one JSON object\n"
	"  -h, --help             this text\n";

enum {
	OPT_SERVERS = 0x100, OPT_WEIGHTS, OPT_BACKENDS, OPT_TCV, OPT_TMOM, OPT_RINGS, OPT_KMAX,
	OPT_BUDGET, OPT_NO_MEASURE, OPT_NO_TABLE, OPT_PLOT, OPT_JSON, OPT_CONFIG, OPT_RING,
};

struct plan_opts {
	uint32_t servers, rings, kmax;
	uint64_t budget;
	const char *weights, *backends, *plot, *config, *ring;
	enum kr_an_target target;
	double value;
	int has_target, json, no_measure, no_table;
};

/* "0.01" or "1%" -> 0.01 */
static int parse_fraction(const char *opt, const char *arg, double *v, struct kr_err *err)
{
	char *end;
	double x = strtod(arg, &end);

	if (end != arg && !strcmp(end, "%"))
		x /= 100.0, end++;
	if (end == arg || *end || !(x > 0) || !(x < 1))
		return kr_errf(err, "bad %s '%s': expected a fraction between 0 and 1, e.g. 0.01 "
			       "or 1%%", opt, arg);
	*v = x;
	return 0;
}

/* "1,2..4,8" -> 1 2 3 4 8, repeated over n entries (w may be NULL: syntax check only). */
static int parse_weights(const char *list, uint32_t n, uint32_t *w, struct kr_err *err)
{
	uint32_t vals[1024], nv = 0;
	const char *p = list;

	while (*p) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b;

		if (end == p || *p == '-' || a > 1000000)
			goto bad;
		b = a;
		if (!strncmp(end, "..", 2)) {
			p = end + 2;
			b = strtoul(p, &end, 10);
			if (end == p || *p == '-' || b < a || b > 1000000)
				goto bad;
		}
		for (unsigned long x = a; x <= b; x++) {
			if (nv == 1024)
				return kr_errf(err, "bad --weights '%s': at most 1024 values", list);
			vals[nv++] = (uint32_t)x;
		}
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	if (!nv)
		goto bad;
	if (!w)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		w[i] = vals[i % nv];
	for (uint32_t i = 0; i < n; i++)
		if (w[i])
			return 0;
	return kr_errf(err, "bad --weights '%s': every weight is 0", list);
bad:
	return kr_errf(err, "bad --weights '%s': expected weights 0..1000000 as a list like "
		       "'1', '1,2,4' or '1..8'", list);
}

/* One option of the table (opts.h callback): 0, or -1 with err for a bad value. */
static int plan_opt(void *ctx, int c, const char *arg, struct kr_err *err)
{
	struct plan_opts *o = ctx;
	char *end;
	uint32_t u;

	switch (c) {
	case OPT_SERVERS:
		return kr_an_parse_u32("--servers", arg, 1, &o->servers, err) ? -1 :
		       o->servers > KR_MAX_BACKENDS ?
		       kr_errf(err, "bad --servers '%s': at most %u backends per ring", arg,
			       KR_MAX_BACKENDS) : 0;
	case OPT_WEIGHTS: o->weights = arg; return 0;
	case OPT_BACKENDS: o->backends = arg; return 0;
	case OPT_CONFIG: o->config = arg; return 0;
	case OPT_RING: o->ring = arg; return 0;
	case OPT_PLOT: o->plot = arg; return 0;
	case OPT_JSON: o->json = 1; return 0;
	case OPT_NO_MEASURE: o->no_measure = 1; return 0;
	case OPT_NO_TABLE: o->no_table = 1; return 0;
	case OPT_RINGS: return kr_an_parse_u32("--rings", arg, 1, &o->rings, err);
	case OPT_KMAX: return kr_an_parse_u32("--kmax", arg, 1, &o->kmax, err);
	case OPT_BUDGET:
		if (kr_an_parse_u32("--point-budget", arg, 0, &u, err))
			return -1;
		o->budget = u;
		return 0;
	case OPT_TCV:
	case OPT_TMOM:
		if (o->has_target)
			return kr_errf(err, "give one target: --target-cv or --target-max-over-mean");
		o->has_target = 1;
		if (c == OPT_TCV) {
			o->target = KR_AN_TARGET_CV;
			return parse_fraction("--target-cv", arg, &o->value, err);
		}
		o->target = KR_AN_TARGET_MAX_OVER_MEAN;
		o->value = strtod(arg, &end);
		if (end == arg || *end || !(o->value > 1.0) || !(o->value < 100.0))
			return kr_errf(err, "bad --target-max-over-mean '%s': expected a number "
				       "above 1, e.g. 1.05", arg);
		return 0;
	}
	return 0;
}

static int plan_parse(int argc, char **argv, struct plan_opts *o)
{
	const struct kr_opt opts[] = {
		KR_OPT_CB("servers", 0, KR_ARG_REQUIRED, OPT_SERVERS),
		KR_OPT_CB("weights", 0, KR_ARG_REQUIRED, OPT_WEIGHTS),
		KR_OPT_CB("backends", 0, KR_ARG_REQUIRED, OPT_BACKENDS),
		KR_OPT_CB("config", 'c', KR_ARG_REQUIRED, OPT_CONFIG),
		KR_OPT_CB("ring", 0, KR_ARG_REQUIRED, OPT_RING),
		KR_OPT_CB("target-cv", 0, KR_ARG_REQUIRED, OPT_TCV),
		KR_OPT_CB("target-max-over-mean", 0, KR_ARG_REQUIRED, OPT_TMOM),
		KR_OPT_CB("rings", 0, KR_ARG_REQUIRED, OPT_RINGS),
		KR_OPT_CB("kmax", 0, KR_ARG_REQUIRED, OPT_KMAX),
		KR_OPT_CB("point-budget", 0, KR_ARG_REQUIRED, OPT_BUDGET),
		KR_OPT_CB("no-measure", 0, KR_ARG_NONE, OPT_NO_MEASURE),
		KR_OPT_CB("no-table", 0, KR_ARG_NONE, OPT_NO_TABLE),
		KR_OPT_CB("plot", 0, KR_ARG_REQUIRED, OPT_PLOT),
		KR_OPT_CB("json", 0, KR_ARG_NONE, OPT_JSON),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .help = plan_help, .cb = plan_opt, .ctx = o,
					 .no_args = true };
	struct kr_err err;
	int first;

	o->rings = 1;
	o->kmax = 100000;
	o->budget = 20000000;
	first = kr_opts_parse(argc, argv, opts, &cmd);
	if (first < 0)
		return kr_opts_status(first);
	if (!o->config != !o->ring)
		return kr_usage_error("-c CONFIG and --ring NAME go together");
	if (o->config && o->backends)
		return kr_usage_error("--backends and -c CONFIG exclude each other");
	if (!o->servers && !o->backends && !o->config)
		return kr_usage_error("missing --servers N (or --backends FILE, or -c CONFIG --ring "
				      "NAME)");
	if (o->weights && (o->backends || o->config))
		return kr_usage_error("--weights and %s exclude each other (it has weights)",
				      o->config ? "-c CONFIG" : "--backends");
	if (o->weights && o->backends)
		return kr_usage_error("--weights and --backends exclude each other (the file has "
				      "weights)");
	if (!o->has_target)
		return kr_usage_error("missing target: --target-cv X or --target-max-over-mean Y");
	if (o->weights && parse_weights(o->weights, 0, NULL, &err))
		return kr_usage_error("%s", err.msg);
	return -1;
}

struct shape {
	struct kr_backend_spec *b;
	uint32_t n, *w, *rank;
	uint64_t wsum;
	char desc[160];
};

static void shape_free(struct shape *s)
{
	free(s->b);
	free(s->w);
	free(s->rank);
}

static int shape_build(const struct plan_opts *o, struct shape *s, struct kr_err *err)
{
	memset(s, 0, sizeof(*s));
	if (o->config) {
		struct kr_config *cfg = kr_cli_config_load(o->config);
		int ri = cfg ? kr_config_ring(cfg, o->ring) : -1;

		if (ri < 0) {
			if (cfg)
				kr_errf(err, "%s has no ring '%s'", o->config, o->ring);
			else
				kr_errf(err, "couldn't read %s (see above)", o->config);
			kr_config_free(cfg);
			return -1;
		}
		s->n = cfg->rings[ri].nbackends;
		s->b = calloc(s->n ? s->n : 1, sizeof(*s->b));
		for (uint32_t i = 0; s->b && i < s->n; i++) {
			s->b[i].addr = cfg->rings[ri].backends[i].addr;
			s->b[i].weight = cfg->rings[ri].backends[i].weight;
		}
		kr_config_free(cfg);
		if (!s->b)
			return kr_errf(err, "out of memory");
		if (o->servers && o->servers != s->n)
			return kr_errf(err, "--servers %u but ring '%s' has %u backends", o->servers,
				       o->ring, s->n);
		snprintf(s->desc, sizeof(s->desc), "%u servers of ring %.40s in %.80s", s->n,
			 o->ring, o->config);
	} else if (o->backends) {
		if (kr_backends_load(o->backends, &s->b, &s->n, err))
			return -1;
		if (o->servers && o->servers != s->n)
			return kr_errf(err, "--servers %u but %s has %u backends", o->servers,
				       o->backends, s->n);
		snprintf(s->desc, sizeof(s->desc), "%u servers from %.120s", s->n, o->backends);
	} else {
		s->n = o->servers;
		s->b = calloc(s->n, sizeof(*s->b));
		if (!s->b)
			return kr_errf(err, "out of memory");
		for (uint32_t i = 0; i < s->n; i++) {
			uint32_t ip = 0x0a000001u + i;	/* 10.0.0.1 + i */

			s->b[i].addr.family = 4;
			s->b[i].addr.port = 443;
			s->b[i].addr.ip[0] = ip >> 24;
			s->b[i].addr.ip[1] = (ip >> 16) & 255;
			s->b[i].addr.ip[2] = (ip >> 8) & 255;
			s->b[i].addr.ip[3] = ip & 255;
			s->b[i].weight = 1;
		}
		snprintf(s->desc, sizeof(s->desc), "%u servers 10.0.0.1:443.., weights %.100s",
			 s->n, o->weights ? o->weights : "1");
	}
	s->w = calloc(s->n, sizeof(*s->w));
	if (!s->w)
		return kr_errf(err, "out of memory");
	if (o->weights && parse_weights(o->weights, s->n, s->w, err))
		return -1;
	for (uint32_t i = 0; i < s->n; i++) {
		if (o->weights)
			s->b[i].weight = s->w[i];
		s->w[i] = s->b[i].weight;
		s->wsum += s->w[i];
	}
	if (!s->wsum)
		return kr_errf(err, "%s: every weight is 0", s->desc);
	s->rank = kr_an_tie_rank(s->b, s->n, KR_RING_V2);
	if (!s->rank)
		return kr_errf(err, "out of memory");
	return 0;
}

/* One row of the table. */
struct row {
	uint64_t k;
	struct kr_an_theory th;
	int measured;			/* 1 measured, 0 over budget, -1 too big to build */
	struct kr_an_measured meas;
	const char *mark;
};

static int u64cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int rows_build(const struct plan_opts *o, const struct shape *s,
		      const struct kr_an_plan *plan, uint64_t opt_m, struct row **rows_out,
		      uint32_t *nrows_out)
{
	uint64_t ks[64];
	uint32_t nk = kr_an_plan_ks(ks, 60, o->kmax), nr = 0;
	struct kr_an_v2_measure ctx = { .b = s->b, .w = s->w, .n = s->n };
	struct row *rows;

	if (plan->m_theory)
		ks[nk++] = plan->m_theory;
	if (plan->confirmed == 1 && plan->m_confirmed != plan->m_theory)
		ks[nk++] = plan->m_confirmed;
	if (opt_m)
		ks[nk++] = opt_m;
	qsort(ks, nk, sizeof(*ks), u64cmp);
	rows = calloc(nk, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (uint32_t i = 0; i < nk; i++) {
		struct row *r = &rows[nr];
		uint64_t pts = ks[i] * s->wsum;

		if (nr && rows[nr - 1].k == ks[i])
			continue;
		r->k = ks[i];
		if (kr_an_theory(s->w, s->rank, s->n, r->k, o->target == KR_AN_TARGET_MAX_OVER_MEAN,
				 &r->th))
			break;	/* beyond what the theory describes: stop the table */
		if (pts > KR_MAX_POINTS)
			r->measured = -1;
		else if (o->no_measure || pts > o->budget)
			r->measured = 0;
		else if (kr_an_measure_v2(&ctx, r->k, &r->meas))
			r->measured = -1;	/* ctx.err says why */
		else
			r->measured = 1;
		r->mark = r->k == plan->m_theory ? "<- plan (theory)" :
			  (plan->confirmed == 1 && r->k == plan->m_confirmed) ? "<- plan (confirmed)" :
			  r->k == opt_m ? "<- lowest theoretical CV (collisions beyond)" : "";
		nr++;
	}
	if (ctx.err.msg[0])
		pr_warn("keyrouter: plan: %s\n", ctx.err.msg);
	*rows_out = rows;
	*nrows_out = nr;
	return 0;
}

static double mib(uint64_t b) { return (double)b / 1048576.0; }

static void print_rows(const struct plan_opts *o, const struct row *rows, uint32_t nr)
{
	int mom = o->target == KR_AN_TARGET_MAX_OVER_MEAN;

	printf("\n%8s %12s %10s %10s %10s %s%9s %13s %9s %10s  %s\n", "k/unit", "points",
	       "CV theory", "+collis.", "CV meas.", mom ? "E[max/mean] " : "",
	       "max/mean", "collis. exp.", "collis.", "image MiB", "");
	for (uint32_t i = 0; i < nr; i++) {
		const struct row *r = &rows[i];
		char cvm[32], mm[32] = "-", col[32] = "-", emax[32] = "";

		if (r->measured == 1) {
			snprintf(cvm, sizeof(cvm), "%.4f%%", 100 * r->meas.cv);
			snprintf(mm, sizeof(mm), "%.4f", r->meas.max_over_mean);
			snprintf(col, sizeof(col), "%llu",
				 (unsigned long long)(r->meas.points - r->meas.ring_points));
		} else {
			snprintf(cvm, sizeof(cvm), "%s", r->measured ? "too big" : "(budget)");
		}
		if (mom)
			snprintf(emax, sizeof(emax), "%11.4f ", r->th.max_over_mean);
		printf("%8llu %12llu %9.4f%% %9.4f%% %10s %s%9s %13.1f %9s %10.2f  %s\n",
		       (unsigned long long)r->k, (unsigned long long)r->th.points, 100 * r->th.cv,
		       100 * r->th.cv_total, cvm, emax, mm, r->th.collisions, col,
		       mib(r->th.mem.image_bytes), r->mark);
	}
	printf("\nCV theory: random placement; +collis.: with the tie bias of 32-bit collisions "
	       "(expected removed points: collis. exp.).\n"
	       "CV meas. and collis.: a real v2 ring built with that k; rings above %llu points "
	       "(--point-budget) show \"(budget)\",\nabove the engine's limit of %u points "
	       "\"too big\".  image MiB: the kernel ring image (6 B/point + index + table).\n",
	       (unsigned long long)o->budget, KR_MAX_POINTS);
}

/* The plot's view of the table (plot_svg.c draws it). */
static int plot(const char *file, const struct plan_opts *o, const struct shape *s,
		const struct row *rows, uint32_t nr, const struct kr_an_plan *plan)
{
	struct kr_plot_point *pts = calloc(nr ? nr : 1, sizeof(*pts));
	struct kr_plot p = { .desc = s->desc, .wsum = s->wsum, .w = s->w, .rank = s->rank,
			     .n = s->n, .kmax = o->kmax, .pts = pts, .npts = nr,
			     .target_cv = o->target == KR_AN_TARGET_CV ? o->value : 0,
			     .plan_k = plan->m_theory };
	int rc;

	if (!pts)
		return -1;
	for (uint32_t i = 0; i < nr; i++)
		pts[i] = (struct kr_plot_point){ .k = rows[i].k, .cv = rows[i].th.cv,
						 .cv_total = rows[i].th.cv_total,
						 .measured = rows[i].measured == 1,
						 .cv_measured = rows[i].meas.cv };
	rc = kr_plot_svg(file, &p);
	free(pts);
	return rc;
}

/* ---- output ------------------------------------------------------------------------ */

static const char *target_name(const struct plan_opts *o)
{
	return o->target == KR_AN_TARGET_CV ? "CV" : "max/mean";
}

static double plan_val(const struct plan_opts *o, double cv, double mom)
{
	return o->target == KR_AN_TARGET_CV ? cv : mom;
}

static void print_target(const struct plan_opts *o, double v)
{
	if (o->target == KR_AN_TARGET_CV)
		printf("%.4f%%", 100 * v);
	else
		printf("%.4f", v);
}

static char bytes_buf[4][32];
#define B(v, i) kr_an_bytes((v), bytes_buf[i], sizeof(bytes_buf[i]))

static void print_text(const struct plan_opts *o, const struct shape *s,
		       const struct kr_an_plan *plan, int err, uint64_t opt_m, double opt_cv)
{
	const struct kr_an_theory *t = &plan->th;
	struct kr_an_theory classic;

	printf("plan        %s, total weight %llu, v2 ties by address\n", s->desc,
	       (unsigned long long)s->wsum);
	printf("target      %s <= ", target_name(o));
	print_target(o, o->value);
	printf("\n");
	if (err == -EDOM) {
		printf("answer      unreachable: the best this ring can do is %s ", target_name(o));
		print_target(o, plan->best_value);
		printf(" at point_multiple %llu (32-bit collisions make more points worse)\n",
		       (unsigned long long)plan->m_best);
		return;
	}
	printf("answer      point_multiple %llu (theory: CV %.4f%% random placement, %.4f%% "
	       "with collisions", (unsigned long long)plan->m_theory, 100 * t->cv,
	       100 * t->cv_total);
	if (o->target == KR_AN_TARGET_MAX_OVER_MEAN)
		printf(", E[max/mean] %.4f", t->max_over_mean);
	printf(")\n");
	if (plan->confirmed == 1)
		printf("confirmed   on a built ring: point_multiple %llu gives %s ",
		       (unsigned long long)plan->m_confirmed, target_name(o));
	else if (plan->confirmed == -1)
		printf("NOT confirmed: up to point_multiple %llu the built ring gives %s ",
		       (unsigned long long)plan->m_confirmed, target_name(o));
	if (plan->confirmed) {
		print_target(o, plan_val(o, plan->meas.cv, plan->meas.max_over_mean));
		printf(" (%llu points, %llu removed by collisions)\n",
		       (unsigned long long)plan->meas.points,
		       (unsigned long long)(plan->meas.points - plan->meas.ring_points));
	} else if (o->no_measure) {
		printf("confirmed   not measured (--no-measure)\n");
	} else {
		printf("confirmed   not measured: %llu points exceed --point-budget %llu\n",
		       (unsigned long long)t->points, (unsigned long long)o->budget);
	}
	if (plan->confirmed == 1 && plan->m_confirmed != plan->m_theory)
		printf("use         point_multiple %llu: the confirmed one (the theory's %llu is an "
		       "estimate; the built ring needed more)\n",
		       (unsigned long long)plan->m_confirmed, (unsigned long long)plan->m_theory);
	else if (plan->confirmed == 1)
		printf("use         point_multiple %llu: theory and the built ring agree\n",
		       (unsigned long long)plan->m_theory);
	else if (plan->confirmed == -1)
		printf("use         no point_multiple up to %llu reached the target on a built ring: "
		       "choose a looser target\n", (unsigned long long)plan->m_confirmed);
	else
		printf("use         point_multiple %llu: the theory's (not confirmed on a built "
		       "ring)\n", (unsigned long long)plan->m_theory);
	printf("points      %llu per ring; expected collisions %.1f removed points (P^2/2^33 "
	       "= %.1f pairs)\n", (unsigned long long)t->points, t->collisions,
	       t->collision_pairs);
	printf("memory      kernel image %s per ring, %s for %u ring%s (v2 points alone %s, "
	       "v1 8 B/point %s)\n", B(t->mem.image_bytes, 0), B(t->mem.image_bytes * o->rings, 1),
	       o->rings, o->rings == 1 ? "" : "s", B(t->mem.v2_bytes, 2), B(t->mem.v1_bytes, 3));
	if (plan->confirmed == 1 && plan->m_confirmed != plan->m_theory &&
	    !kr_an_theory(s->w, s->rank, s->n, plan->m_confirmed, 0, &classic))
		printf("            at the confirmed point_multiple %llu: %llu points, %s per "
		       "ring, %s for %u ring%s\n", (unsigned long long)plan->m_confirmed,
		       (unsigned long long)classic.points, B(classic.mem.image_bytes, 0),
		       B(classic.mem.image_bytes * o->rings, 1), o->rings, o->rings == 1 ? "" : "s");
	if (!kr_an_theory(s->w, s->rank, s->n, 160, 0, &classic))
		printf("vs classic  160 per weight unit: CV %.4f%%, %s per ring as an image, %s as v1 "
		       "(8 B/point), x%u rings = %s\n", 100 * classic.cv_total,
		       B(classic.mem.image_bytes, 0), B(classic.mem.v1_bytes, 1), o->rings,
		       B(classic.mem.v1_bytes * o->rings, 2));
	if (opt_m && opt_cv > 0)
		printf("optimum     the lowest theoretical CV is %.4f%% at point_multiple %llu; "
		       "beyond it 32-bit collisions make the ring worse\n", 100 * opt_cv,
		       (unsigned long long)opt_m);
}

static json_t *row_json(const struct row *r)
{
	return json_pack("{s:I, s:I, s:f, s:f, s:o, s:o, s:f, s:o, s:I, s:s}",
			 "k", (json_int_t)r->k, "points", (json_int_t)r->th.points,
			 "cv_theory", r->th.cv, "cv_theory_collisions", r->th.cv_total,
			 "cv_measured", r->measured == 1 ? json_real(r->meas.cv) : json_null(),
			 "max_over_mean_measured",
			 r->measured == 1 ? json_real(r->meas.max_over_mean) : json_null(),
			 "collisions_expected", r->th.collisions,
			 "collisions_measured", r->measured == 1 ?
			 json_integer((json_int_t)(r->meas.points - r->meas.ring_points)) : json_null(),
			 "image_bytes", (json_int_t)r->th.mem.image_bytes,
			 "measured", r->measured == 1 ? "yes" : r->measured ? "too big" : "budget");
}

static int print_json(const struct plan_opts *o, const struct shape *s,
		      const struct kr_an_plan *plan, int err, const struct row *rows, uint32_t nr,
		      uint64_t opt_m, double opt_cv)
{
	json_t *arr = json_array(), *obj;

	for (uint32_t i = 0; i < nr; i++)
		json_array_append_new(arr, row_json(&rows[i]));
	obj = json_pack("{s:s, s:i, s:I, s:{s:s, s:f}, s:b, s:I, s:I, s:f, s:f, s:f, s:f, s:f,"
			" s:i, s:o, s:o, s:I, s:I, s:i, s:I, s:I, s:f, s:o}",
			"servers_desc", s->desc, "servers", (json_int_t)s->n,
			"total_weight", (json_int_t)s->wsum,
			"target", "type", o->target == KR_AN_TARGET_CV ? "cv" : "max_over_mean",
			"value", o->value,
			"reachable", err != -EDOM,
			"point_multiple", (json_int_t)(err == -EDOM ? 0 : plan->m_theory),
			"points", (json_int_t)plan->th.points,
			"cv_theory", plan->th.cv, "cv_theory_collisions", plan->th.cv_total,
			"max_over_mean_theory", isnan(plan->th.max_over_mean) ? 0.0 : plan->th.max_over_mean,
			"collisions_expected", plan->th.collisions,
			"collision_pairs_expected", plan->th.collision_pairs,
			"confirmed", plan->confirmed,
			"confirmed_point_multiple", plan->confirmed ?
			json_integer((json_int_t)plan->m_confirmed) : json_null(),
			"measured_cv", plan->confirmed ? json_real(plan->meas.cv) : json_null(),
			"image_bytes_per_ring", (json_int_t)plan->th.mem.image_bytes,
			"image_bytes_total", (json_int_t)(plan->th.mem.image_bytes * o->rings),
			"rings", (json_int_t)o->rings,
			"best_point_multiple", (json_int_t)(err == -EDOM ? plan->m_best : opt_m),
			"point_budget", (json_int_t)o->budget,
			"best_cv_theory", err == -EDOM ? plan->best_value : opt_cv,
			"table", arr);
	return kr_an_json_print(obj, "plan");
}

static int cmd_plan(int argc, char **argv)
{
	struct plan_opts o = { 0 };
	struct shape s = { 0 };
	struct kr_an_v2_measure ctx = { 0 };
	struct kr_an_plan plan;
	struct kr_an_plan_req req;
	struct row *rows = NULL;
	uint32_t nr = 0;
	uint64_t opt_m = 0;
	double opt_cv = 0;
	struct kr_err err;
	int ret, e;

	ret = plan_parse(argc, argv, &o);
	if (ret >= 0)
		return ret;
	ret = 1;
	if (shape_build(&o, &s, &err)) {
		pr_warn("keyrouter: plan: %s\n", err.msg);
		goto out;
	}
	ctx = (struct kr_an_v2_measure){ .b = s.b, .w = s.w, .n = s.n };
	req = (struct kr_an_plan_req){
		.weight = s.w, .rank = s.rank, .n = s.n, .target = o.target, .value = o.value,
		.measure = o.no_measure ? NULL : kr_an_measure_v2, .ctx = &ctx,
		.point_budget = o.budget, .max_confirm_steps = 30,
	};
	e = kr_an_plan(&req, &plan);
	if (e && e != -EDOM) {
		if (ctx.err.msg[0])
			pr_warn("keyrouter: plan: %s\n", ctx.err.msg);
		pr_warn("keyrouter: plan: %s\n", e == -EINVAL ? "bad input (no weight > 0?)" :
			"building a ring to confirm the plan failed");
		goto out;
	}
	kr_an_optimum(s.w, s.rank, s.n, KR_AN_THEORY_MAX_POINTS / s.wsum, &opt_m, &opt_cv);
	if (opt_m > o.kmax)
		opt_m = 0;	/* off the table */
	if (!o.no_table || o.plot) {
		if (rows_build(&o, &s, &plan, opt_m, &rows, &nr)) {
			pr_warn("keyrouter: plan: out of memory\n");
			goto out;
		}
	}
	if (o.json) {
		ret = print_json(&o, &s, &plan, e, rows, nr, opt_m, opt_cv);
	} else {
		print_text(&o, &s, &plan, e, opt_m, opt_cv);
		if (!o.no_table)
			print_rows(&o, rows, nr);
		ret = 0;
	}
	if (o.plot) {
		if (plot(o.plot, &o, &s, rows, nr, &plan)) {
			pr_warn("keyrouter: plan: couldn't write the plot '%s': %m\n", o.plot);
			ret = 1;
		} else if (!o.json) {
			printf("plot        %s\n", o.plot);
		}
	}
	if (e == -EDOM && ret == 0)
		ret = 1;
out:
	free(rows);
	shape_free(&s);
	return ret;
}
KR_COMMAND(plan, "plan",
	   "the smallest point_multiple for a target imbalance, its memory, and the trade-off",
	   cmd_plan);
