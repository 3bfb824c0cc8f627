/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* `keyrouter announce` in status, status --json and check (announce.h holds the maps). */
#ifndef KR_ANNOUNCE_OUT_H
#define KR_ANNOUNCE_OUT_H

#include <jansson.h>
#include <stddef.h>
#include "ops.h"

/* "announce: ..." (text, o == NULL) or "announce":{...} set in o: the announcer, each
 * VIP's route, reason and last change, BIRD's BGP sessions.  Nothing when no announcer
 * ever ran on the instance. */
void kr_announce_show(const struct kr_inst *in, json_t *o);

/* For check: 0 nothing to say (no announcer ever ran, or every VIP announced or drained),
 * 1 a warning (a VIP withdrawn for another reason than a drain, the announcer not
 * running, BIRD refusing the routes); its text into msg. */
int kr_announce_check(const struct kr_inst *in, char *msg, size_t len);

#endif
