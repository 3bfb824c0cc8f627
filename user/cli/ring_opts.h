/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ring-selecting options shared by `ring dump`, `ring build`, `lookup` (and any command
 * that needs a ring):
 *   --backends FILE  --version v1|v2  [--point-multiple N]
 * or a ring of a configuration file (config.h):
 *   -c CONFIG  --ring NAME | --service NAME
 * A command passes kr_ring_optdefs as the second option table (opts.h: .more), gives
 * every option its callback gets to kr_ring_opt(), then calls kr_ring_opts_check() (usage
 * errors, exit 2) and kr_ring_opts_build() (runtime errors, exit 1).
 */
#ifndef KR_RING_OPTS_H
#define KR_RING_OPTS_H

#include <stdint.h>
#include "continuum.h"
#include "keyform.h"
#include "kr_siphash.h"
#include "err.h"
#include "opts.h"

struct kr_config;

enum {
	KR_OPT_BACKENDS = 0x1000,
	KR_OPT_VERSION,
	KR_OPT_POINT_MULTIPLE,
	KR_OPT_RING,
	KR_OPT_SERVICE,
	KR_OPT_CONFIG = 'c',
};

/* The ring options as an option table (opts.h); their values go to the callback. */
extern const struct kr_opt kr_ring_optdefs[];

#define KR_RING_OPTS_HELP                                                                  \
	"Ring selection:\n"                                                                \
	"  --backends FILE        backends, one per line: '<SocketAddr> <weight>'\n"         \
	"                         ('10.0.0.1:443 5', '[2001:db8::1]:443 2'; '#' comments);\n" \
	"                         line order = backend index; weight 0 = drained\n"          \
	"  --version v1|v2        ring format: v1 = 160 points per weight unit, ties to the\n" \
	"                         backend listed first; v2 = --point-multiple points per\n"   \
	"                         weight unit, ties to the smallest socket address\n"         \
	"  --point-multiple N     v2 only: points per weight unit (default 160)\n"        \
	"or a ring of a configuration file (docs/config.md):\n"                           \
	"  -c, --config FILE      the configuration (JSON)\n"                              \
	"  --ring NAME            its ring NAME (format, point_multiple, backends)\n"      \
	"  --service NAME         the ring of service NAME (lookup: also its key type)\n"

struct kr_ring_opts {
	const char *backends;	/* --backends FILE */
	uint32_t version;	/* KR_RING_V1/V2; 0 = not given */
	uint32_t pm;		/* 0 = not given */
	int pm_given;
	const char *config;	/* -c CONFIG: ring from the configuration */
	const char *ring;	/* --ring NAME */
	const char *service;	/* --service NAME */
	/* set by kr_ring_opts_build(): */
	char label[192];	/* "FILE" or "CONFIG ring NAME", for messages */
	int has_key;		/* --service: its key extractor in key */
	struct kr_keyspec key;
	int keyed;		/* the config's "hash" is siphash13: keys hash with secret */
	struct kr_hash_secret secret;
	int keep_config;	/* set before kr_ring_opts_build(): keep the configuration */
	struct kr_config *cfg;	/* with keep_config: the configuration (kr_ring_opts_free) */
	int svc;		/* --service: its index in cfg->services */
};

/* 1 = the option was a ring option (consumed), 0 = not a ring option, -1 = bad value. */
int kr_ring_opt(struct kr_ring_opts *o, int opt, const char *arg, struct kr_err *err);
/* Usage errors: missing --backends/--version, --point-multiple with v1; -c with
 * --backends/--version/--point-multiple, -c without --ring/--service. */
int kr_ring_opts_check(const struct kr_ring_opts *o, struct kr_err *err);
/* Reads the backends file (or the configuration) and builds the ring (errors name the
 * file). */
int kr_ring_opts_build(struct kr_ring_opts *o, struct kr_ring **r, struct kr_err *err);
void kr_ring_opts_free(struct kr_ring_opts *o);

#endif
