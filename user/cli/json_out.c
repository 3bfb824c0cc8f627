// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The --json output of the analytics commands. */
#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>
#include "json_out.h"
#include "log.h"

int kr_an_json_print(json_t *o, const char *cmd)
{
	char *s;

	if (!o) {
		pr_warn("keyrouter: %s: couldn't build the JSON output\n", cmd);
		return 1;
	}
	s = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
	json_decref(o);
	if (!s)
		return 1;
	puts(s);
	free(s);
	return 0;
}
