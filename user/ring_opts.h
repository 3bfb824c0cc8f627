/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ring-selecting options shared by `ring dump`, `ring build`, `lookup` (and any command
 * that needs a ring):
 *   --backends FILE  --version v1|v2  [--point-multiple N]
 * Add KR_RING_LONGOPTS to a command's getopt_long table, pass every option to
 * kr_ring_opt(), then kr_ring_opts_check() (usage errors, exit 2) and kr_ring_opts_build()
 * (runtime errors, exit 1).
 */
#ifndef KR_RING_OPTS_H
#define KR_RING_OPTS_H

#include <getopt.h>
#include <stdint.h>
#include "continuum.h"
#include "err.h"

enum {
	KR_OPT_BACKENDS = 0x1000,
	KR_OPT_VERSION,
	KR_OPT_POINT_MULTIPLE,
};

#define KR_RING_LONGOPTS                                                          \
	{ "backends", required_argument, NULL, KR_OPT_BACKENDS },                 \
	{ "version", required_argument, NULL, KR_OPT_VERSION },                   \
	{ "point-multiple", required_argument, NULL, KR_OPT_POINT_MULTIPLE }

#define KR_RING_OPTS_HELP                                                                  \
	"Ring selection:\n"                                                                \
	"  --backends FILE        backends, one per line: '<SocketAddr> <weight>'\n"         \
	"                         ('10.0.0.1:443 5', '[2001:db8::1]:443 2'; '#' comments);\n" \
	"                         line order = backend index; weight 0 = drained\n"          \
	"  --version v1|v2        ring format: v1 = 160 points per weight unit, ties to the\n" \
	"                         backend listed first; v2 = --point-multiple points per\n"   \
	"                         weight unit, ties to the smallest socket address\n"         \
	"  --point-multiple N     v2 only: points per weight unit (default 160)\n"

struct kr_ring_opts {
	const char *backends;	/* --backends FILE */
	uint32_t version;	/* KR_RING_V1/V2; 0 = not given */
	uint32_t pm;		/* 0 = not given */
	int pm_given;
};

/* 1 = the option was a ring option (consumed), 0 = not a ring option, -1 = bad value. */
int kr_ring_opt(struct kr_ring_opts *o, int opt, const char *arg, struct kr_err *err);
/* Usage errors: missing --backends/--version, --point-multiple with v1. */
int kr_ring_opts_check(const struct kr_ring_opts *o, struct kr_err *err);
/* Reads the backends file and builds the ring (errors name the file). */
int kr_ring_opts_build(const struct kr_ring_opts *o, struct kr_ring **r, struct kr_err *err);

#endif
