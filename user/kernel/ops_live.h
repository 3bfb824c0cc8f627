/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The live state of a configuration's backends in a running instance (`lookup --live`). */
#ifndef KR_OPS_LIVE_H
#define KR_OPS_LIVE_H

#include <stdint.h>
#include "config.h"
#include "ops.h"

/* For every backend b of ring cr: state[b] = its state in kr_backends (enum
 * kr_backend_state), found by address among the backends of the instance's published ring
 * slots; a backend no ring has gets KR_BACKEND_UNUSED (the data path skips it).  Returns how
 * many backends were found, or -errno. */
int kr_ops_live_states(const struct kr_inst *in, const struct kr_cfg_ring *cr, uint8_t *state);

#endif
