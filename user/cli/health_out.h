/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The health checker's state in status and status --json (ops_health.h holds the maps). */
#ifndef KR_CLI_HEALTH_OUT_H
#define KR_CLI_HEALTH_OUT_H

#include <stdbool.h>
#include "ops_health.h"

/* Is the checker running: its pid set and a heartbeat younger than 3 periods. */
bool kr_health_checker_alive(const struct kr_health_ck *ck, __u64 now_ns);

/* "health checker: ..." and the rings in panic (text), or ,"health_checker":{...},
 * "health_rings":[...] (json).  Nothing when no checker ever ran on the instance. */
void kr_health_show_checker(const struct kr_inst *in, const struct kr_health_maps *h, bool json);

/* After a backend's line (text: an indented line, when there is something to say) or
 * inside its JSON object (,"owner":...,"health":{...}). */
void kr_health_show_backend(const struct kr_health_maps *h, __u32 id, const struct kr_backend *be,
			    bool json);

#endif
