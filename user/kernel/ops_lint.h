/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The slips a valid configuration can hold that only the router's network stack shows
 * (docs/operations.md "apply"): a backend MAC other than the router's neighbour entry for
 * its address, l2 frames sent out of the ingress device to a backend the router reaches
 * through another one, a VIP that is one of the router's own addresses.  Asked in the
 * caller's network namespace; apply and `config check --live` print them as warnings and
 * refuse with --strict.
 */
#ifndef KR_OPS_LINT_H
#define KR_OPS_LINT_H

#include <stdint.h>
#include "config.h"

/* The warnings of CFG here, ingress_ifindex the device the program is attached to (0:
 * unknown: the egress check is left out).  Returns their number (>= 0; *text: one
 * "FILE: PATH: warning: message" line each, malloc'd, NULL when none) or -ENOMEM. */
int kr_ops_lint(const struct kr_config *cfg, uint32_t ingress_ifindex, char **text);

#endif
