/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-service counters in status / stats (text, JSON) with rates per second between two
 * rounds of --watch (ops_svcstats.h reads them).
 */
#ifndef KR_SVC_OUT_H
#define KR_SVC_OUT_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>
#include "ops_svcstats.h"

/* Text: one line per service (and a line of rates from the second --watch round on). */
void kr_svc_out_text(FILE *f, const struct kr_inst *in, const struct kr_ops_maps *m);
/* JSON: "service_counters":[...] set in root, rates inside each from the second round. */
void kr_svc_out_json(json_t *root, const struct kr_inst *in, const struct kr_ops_maps *m);

#endif
