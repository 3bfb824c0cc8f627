// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* JSON output through jansson (json_out.h). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "json_out.h"
#include "log.h"

static int print(json_t *o, const char *cmd, size_t flags)
{
	char *s;

	if (!o) {
		pr_warn("keyrouter: %s: couldn't build the JSON output\n", cmd);
		return 1;
	}
	s = json_dumps(o, flags);
	json_decref(o);
	if (!s)
		return 1;
	puts(s);
	free(s);
	return 0;
}

int kr_an_json_print(json_t *o, const char *cmd)
{
	return print(o, cmd, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
}

int kr_json_print_line(json_t *o, const char *cmd)
{
	int rc = print(o, cmd, JSON_COMPACT | JSON_REAL_PRECISION(15));

	fflush(stdout);
	return rc;
}

json_t *kr_json_str(const char *s)
{
	json_t *j = json_string(s ? s : "");
	char *c;

	if (j || !s)
		return j;
	c = strdup(s);			/* not UTF-8: the bytes above 0x7f as '?' */
	for (char *p = c; p && *p; p++)
		if ((unsigned char)*p > 0x7f)
			*p = '?';
	j = c ? json_string(c) : NULL;
	free(c);
	return j;
}

json_t *kr_json_fixed(double x, int decimals)
{
	double p = pow(10, decimals);

	return json_real(round(x * p) / p);
}

json_t *kr_json_u64(__u64 v)
{
	return json_integer(v > (__u64)LLONG_MAX ? LLONG_MAX : (json_int_t)v);
}

void kr_json_set_time(json_t *o, const char *name, __u64 ns)
{
	char k[64], v[24];

	snprintf(v, sizeof(v), "%llu", (unsigned long long)ns);
	snprintf(k, sizeof(k), "%s_ns", name);
	json_object_set_new(o, k, json_string(v));
	snprintf(k, sizeof(k), "%s_s", name);
	json_object_set_new(o, k, json_real((double)(ns / 1000000ull) / 1e3));
}
