// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>
#include <string.h>
#include "backends_file.h"
#include "config.h"
#include "ring_opts.h"
#include "util.h"

const struct kr_opt kr_ring_optdefs[] = {
	KR_OPT_CB("backends", 0, KR_ARG_REQUIRED, KR_OPT_BACKENDS),
	KR_OPT_CB("version", 0, KR_ARG_REQUIRED, KR_OPT_VERSION),
	KR_OPT_CB("point-multiple", 0, KR_ARG_REQUIRED, KR_OPT_POINT_MULTIPLE),
	KR_OPT_CB("config", 'c', KR_ARG_REQUIRED, KR_OPT_CONFIG),
	KR_OPT_CB("ring", 0, KR_ARG_REQUIRED, KR_OPT_RING),
	KR_OPT_CB("service", 0, KR_ARG_REQUIRED, KR_OPT_SERVICE),
	KR_OPT_END
};


int kr_ring_opt(struct kr_ring_opts *o, int opt, const char *arg, struct kr_err *err)
{
	switch (opt) {
	case KR_OPT_BACKENDS:
		o->backends = arg;
		return 1;
	case KR_OPT_VERSION:
		if (!strcmp(arg, "v1") || !strcmp(arg, "1"))
			o->version = KR_RING_V1;
		else if (!strcmp(arg, "v2") || !strcmp(arg, "2"))
			o->version = KR_RING_V2;
		else
			return kr_errf(err, "bad --version '%s': expected v1 or v2", arg);
		return 1;
	case KR_OPT_POINT_MULTIPLE:
		if (kr_parse_u32(arg, 1, &o->pm))
			return kr_errf(err, "bad --point-multiple '%s': expected an integer "
				       "1..4294967295", arg);
		o->pm_given = 1;
		return 1;
	case KR_OPT_CONFIG:
		o->config = arg;
		return 1;
	case KR_OPT_RING:
		o->ring = arg;
		return 1;
	case KR_OPT_SERVICE:
		o->service = arg;
		return 1;
	}
	return 0;
}

static int config_opts_check(const struct kr_ring_opts *o, struct kr_err *err)
{
	if (o->backends || o->version || o->pm_given)
		return kr_errf(err, "-c CONFIG takes the ring from the configuration: no "
			       "--backends, --version or --point-multiple with it");
	if (!o->ring && !o->service)
		return kr_errf(err, "-c CONFIG needs --ring NAME or --service NAME");
	if (o->ring && o->service)
		return kr_errf(err, "give --ring NAME or --service NAME, not both");
	return 0;
}

int kr_ring_opts_check(const struct kr_ring_opts *o, struct kr_err *err)
{
	if (o->config)
		return config_opts_check(o, err);
	if (o->ring || o->service)
		return kr_errf(err, "--ring and --service need -c CONFIG");
	if (!o->backends)
		return kr_errf(err, "missing --backends FILE");
	if (!o->version)
		return kr_errf(err, "missing --version v1|v2");
	if (o->version == KR_RING_V1 && o->pm_given)
		return kr_errf(err, "--point-multiple applies to v2 only (v1 always uses %u "
			       "points per weight unit)", KR_V1_POINT_MULTIPLE);
	return 0;
}

/* The first error of an invalid configuration, and how to see them all. */
static int config_error(const char *errs, struct kr_err *err)
{
	const char *nl = strchr(errs, '\n');
	int more = 0;

	for (const char *p = nl; p && p[1]; p = strchr(p + 1, '\n'))
		more++;
	return kr_errf(err, "%.*s%s", (int)(nl ? nl - errs : (long)strlen(errs)), errs,
		       more ? " (and more errors: run 'keyrouter config check -c CONFIG')" : "");
}

static int build_from_config(struct kr_ring_opts *o, struct kr_ring **r, struct kr_err *err)
{
	struct kr_config *cfg;
	char *errs = NULL;
	int ri, si = -1, ret = -1;

	cfg = kr_config_load(o->config, &errs);
	if (!cfg) {
		config_error(errs ? errs : "out of memory", err);
		free(errs);
		return -1;
	}
	if (o->service) {
		si = kr_config_service(cfg, o->service);
		if (si < 0) {
			kr_errf(err, "%s: no service named '%s'", o->config, o->service);
			goto out;
		}
		ri = (int)cfg->services[si].ring;
		o->svc = si;
		o->key = cfg->services[si].key;
		o->has_key = 1;
	} else {
		ri = kr_config_ring(cfg, o->ring);
		if (ri < 0) {
			kr_errf(err, "%s: no ring named '%s'", o->config, o->ring);
			goto out;
		}
	}
	if (cfg->hash.keyed) {
		o->keyed = 1;
		kr_hash_secret_from_bytes(&o->secret, cfg->hash.secret);
	}
	snprintf(o->label, sizeof(o->label), "%s ring %s", o->config, cfg->rings[ri].name);
	ret = kr_config_ring_build(cfg, (uint32_t)ri, r, err);
out:
	if (!ret && o->keep_config)
		o->cfg = cfg;
	else
		kr_config_free(cfg);
	return ret;
}

void kr_ring_opts_free(struct kr_ring_opts *o)
{
	kr_config_free(o->cfg);
	o->cfg = NULL;
}

int kr_ring_opts_build(struct kr_ring_opts *o, struct kr_ring **r, struct kr_err *err)
{
	struct kr_backend_spec *b = NULL;
	uint32_t n = 0;
	int ret;

	if (o->config)
		return build_from_config(o, r, err);
	snprintf(o->label, sizeof(o->label), "%s", o->backends);

	if (kr_backends_load(o->backends, &b, &n, err))
		return -1;
	ret = kr_ring_build(r, b, n, o->version, o->version == KR_RING_V1 ? 0 : o->pm, err);
	if (ret)
		kr_err_prefix(err, "%s", o->backends);
	free(b);
	return ret;
}
