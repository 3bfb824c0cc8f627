// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>
#include <string.h>
#include "backends_file.h"
#include "ring_opts.h"

static int parse_u32(const char *s, uint32_t *v)
{
	uint64_t x = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
		if (x > UINT32_MAX)
			return -1;
	}
	*v = (uint32_t)x;
	return 0;
}

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
		if (parse_u32(arg, &o->pm) || o->pm == 0)
			return kr_errf(err, "bad --point-multiple '%s': expected an integer "
				       "1..4294967295", arg);
		o->pm_given = 1;
		return 1;
	}
	return 0;
}

int kr_ring_opts_check(const struct kr_ring_opts *o, struct kr_err *err)
{
	if (!o->backends)
		return kr_errf(err, "missing --backends FILE");
	if (!o->version)
		return kr_errf(err, "missing --version v1|v2");
	if (o->version == KR_RING_V1 && o->pm_given)
		return kr_errf(err, "--point-multiple applies to v2 only (v1 always uses %u "
			       "points per weight unit)", KR_V1_POINT_MULTIPLE);
	return 0;
}

int kr_ring_opts_build(const struct kr_ring_opts *o, struct kr_ring **r, struct kr_err *err)
{
	struct kr_backend_spec *b = NULL;
	uint32_t n = 0;
	int ret;

	if (kr_backends_load(o->backends, &b, &n, err))
		return -1;
	ret = kr_ring_build(r, b, n, o->version, o->version == KR_RING_V1 ? 0 : o->pm, err);
	if (ret)
		kr_err_prefix(err, "%s", o->backends);
	free(b);
	return ret;
}
