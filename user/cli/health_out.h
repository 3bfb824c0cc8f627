/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The health checker's state in status and status --json (ops_health.h holds the maps). */
#ifndef KR_CLI_HEALTH_OUT_H
#define KR_CLI_HEALTH_OUT_H

#include <stdbool.h>
#include <jansson.h>
#include "ops_health.h"

/* Is the checker running: its pid set and a heartbeat younger than 3 periods. */
bool kr_health_checker_alive(const struct kr_health_ck *ck, __u64 now_ns);

/* "health checker: ..." and the rings in panic (text, o == NULL), or "health_checker":{...}
 * and "health_rings":[...] set in o.  Nothing when no checker ever ran on the instance. */
void kr_health_show_checker(const struct kr_inst *in, const struct kr_health_maps *h, json_t *o);

/* After a backend's line (text, o == NULL: an indented line, when there is something to
 * say), or "owner", "since", "health":{...} set in its JSON object o. */
void kr_health_show_backend(const struct kr_health_maps *h, __u32 id, const struct kr_backend *be,
			    json_t *o);

#endif
