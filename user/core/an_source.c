// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Ring sources for the analytics commands: a backends file or a config ring. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "an_source.h"
#include "analytics.h"
#include "backends_file.h"
#include "config.h"
#include "image.h"
#include "util.h"

int kr_an_parse_version(const char *opt, const char *arg, uint32_t *version, struct kr_err *err)
{
	if (!strcmp(arg, "v1") || !strcmp(arg, "1"))
		*version = KR_RING_V1;
	else if (!strcmp(arg, "v2") || !strcmp(arg, "2"))
		*version = KR_RING_V2;
	else
		return kr_errf(err, "bad %s '%s': expected v1 or v2", opt, arg);
	return 0;
}

int kr_an_parse_u32(const char *opt, const char *arg, uint32_t min, uint32_t *v,
		    struct kr_err *err)
{
	if (!kr_parse_u32(arg, min, v))
		return 0;
	return kr_errf(err, "bad %s '%s': expected an integer %u..%u", opt, arg, min, UINT32_MAX);
}

int kr_an_src_check(const struct kr_an_src *s, const char *side, struct kr_err *err)
{
	const char *p = side ? side : "", *sp = side ? " " : "";

	if (s->published && (s->backends || s->config))
		return kr_errf(err, "%s%sring: the published ring excludes --backends and -c",
			       p, sp);
	if (s->published && (s->version || s->pm))
		return kr_errf(err, "%s%sring: the published ring has its own version and "
			       "point_multiple", p, sp);
	if (s->published)
		return 0;
	if (s->backends && s->config)
		return kr_errf(err, "%s%sring: give either --backends FILE or -c CONFIG, not both",
			       p, sp);
	if (!s->backends && !s->config)
		return kr_errf(err, "%s%sring: missing --backends FILE (with --version) or -c CONFIG",
			       p, sp);
	if (s->backends && !s->version)
		return kr_errf(err, "%s%sring: --backends needs --version v1|v2", p, sp);
	if (s->ring && !s->config)
		return kr_errf(err, "%s%sring: --ring NAME applies to -c CONFIG only", p, sp);
	if (s->version == KR_RING_V1 && s->pm)
		return kr_errf(err, "%s%sring: --point-multiple applies to v2 only (v1 always uses "
			       "%u points per weight unit)", p, sp, KR_V1_POINT_MULTIPLE);
	return 0;
}

int kr_an_measure_v2(void *ctx_, uint64_t m, struct kr_an_measured *out)
{
	struct kr_an_v2_measure *ctx = ctx_;
	struct kr_ring *r = NULL;
	struct kr_an_stats st;
	uint64_t *share;

	if (m > UINT32_MAX)
		return -ERANGE;
	share = calloc(ctx->n ? ctx->n : 1, sizeof(*share));
	if (!share)
		return -ENOMEM;
	if (kr_ring_build(&r, ctx->b, ctx->n, KR_RING_V2, (uint32_t)m, &ctx->err)) {
		kr_err_prefix(&ctx->err, "point_multiple %llu", (unsigned long long)m);
		free(share);
		return -EINVAL;
	}
	kr_an_ring_shares(r, share);
	kr_an_share_stats(share, ctx->w, ctx->n, &st);
	out->points = r->stats.generated;
	out->ring_points = r->npoints;
	out->cv = st.cv;
	out->max_over_mean = st.max_over_mean;
	ctx->last_ms = r->stats.build_ns / 1e6;
	kr_ring_free(r);
	free(share);
	return 0;
}

/* Ring `name` of a config (or its only ring), as backend specs. */
static int config_ring(const struct kr_an_src *s, struct kr_backend_spec **out, uint32_t *n,
		       uint32_t *version, uint32_t *pm, struct kr_an_built *b, struct kr_err *err)
{
	struct kr_config *cfg;
	const struct kr_cfg_ring *r;
	char *errs = NULL;
	int idx, ret = -1;

	cfg = kr_config_load(s->config, &errs);
	if (!cfg) {
		size_t l = errs ? strlen(errs) : 0;

		while (l && errs[l - 1] == '\n')
			errs[--l] = 0;
		kr_errf(err, "%s", errs ? errs : "couldn't load the configuration");
		free(errs);
		return -1;
	}
	if (s->ring) {
		idx = kr_config_ring(cfg, s->ring);
		if (idx < 0) {
			kr_errf(err, "%s: no ring named '%s' (%u ring%s in the file)", s->config,
				s->ring, cfg->nrings, cfg->nrings == 1 ? "" : "s");
			goto out;
		}
	} else if (cfg->nrings == 1) {
		idx = 0;
	} else {
		kr_errf(err, "%s: %u rings: name one with --ring NAME", s->config, cfg->nrings);
		goto out;
	}
	r = &cfg->rings[idx];
	*out = calloc(r->nbackends ? r->nbackends : 1, sizeof(**out));
	if (!*out) {
		kr_errf(err, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < r->nbackends; i++) {
		(*out)[i].addr = r->backends[i].addr;
		(*out)[i].weight = r->backends[i].weight;
	}
	*n = r->nbackends;
	*version = r->format;
	*pm = r->point_multiple;
	b->pm_auto = r->pm_auto;
	b->target_cv = r->target_cv;
	snprintf(b->desc, sizeof(b->desc), "%.60s ring %.40s", s->config, r->name);
	snprintf(b->name, sizeof(b->name), "%s", r->name);
	snprintf(b->instance, sizeof(b->instance), "%s", cfg->instance ? cfg->instance : "");
	ret = 0;
out:
	kr_config_free(cfg);
	return ret;
}

int kr_an_src_build(const struct kr_an_src *s, struct kr_an_built *out, struct kr_err *err)
{
	struct kr_backend_spec *b = NULL;
	uint32_t n = 0, version = s->version, pm = s->pm;
	char d[64];

	memset(out, 0, sizeof(*out));
	if (s->published)
		return kr_errf(err, "the published ring is read by kr_ops_an_src_build()");
	if (s->config) {
		uint32_t cv, cpm;

		if (config_ring(s, &b, &n, &cv, &cpm, out, err))
			return -1;
		if (!version)
			version = cv;
		if (!pm && version == cv)
			pm = cpm;
	} else {
		if (kr_backends_load(s->backends, &b, &n, err))
			return -1;
		snprintf(out->desc, sizeof(out->desc), "%.100s", s->backends);
	}
	if (version == KR_RING_V1)
		pm = 0;
	if (kr_ring_build(&out->ring, b, n, version, pm, err)) {
		kr_err_prefix(err, "%s", out->desc);
		free(b);
		return -1;
	}
	out->rank = kr_an_tie_rank(b, n, version);
	free(b);
	if (!out->rank) {
		kr_an_built_free(out);
		return kr_errf(err, "out of memory");
	}
	{
		size_t l = strlen(out->desc);

		snprintf(out->desc + l, sizeof(out->desc) - l, " (%s)",
			 kr_ring_describe(out->ring, d, sizeof(d)));
	}
	return 0;
}

void kr_an_built_free(struct kr_an_built *b)
{
	kr_ring_free(b->ring);
	free(b->rank);
	b->ring = NULL;
	b->rank = NULL;
}
