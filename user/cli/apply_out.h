/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What `apply`, `load` and `ring stage` print: configuration errors, the plan (--dry-run),
 * what was done, the summary line. */
#ifndef KR_APPLY_OUT_H
#define KR_APPLY_OUT_H

#include "apply_plan.h"
#include "config.h"
#include "ops.h"
#include "ops_apply.h"

/* Load CONFIG; on error print every configuration error (stderr) and return NULL; a valid
 * configuration's warnings are printed too. */
struct kr_config *kr_cli_config_load(const char *path);

/* The one rule of every command that takes -c FILE and works on a running instance
 * (apply, ring stage, lookup --live, diff --old-published): --instance NAME, else
 * --pin-dir DIR (NULL returned), else the file's "instance" (file_instance: NULL or ""
 * when it has none), else NULL (the tool's default, "default"). */
const char *kr_cli_instance(const char *instance, const char *pin_dir,
			    const char *file_instance);

/*
 * apply (and load) of CONFIG on instance IN: read, plan, execute unless o->dry_run, and
 * print: the plan (dry run), or what was done (rings published/removed on stderr, at the
 * info level) and the summary line (stdout); with json, one JSON object on stdout instead
 * (rings, counts; a dry run's plan).  Returns the exit status (0 or 1).
 */
int kr_cli_apply(const struct kr_inst *in, const char *config, const struct kr_config *cfg,
		 const struct kr_ops_apply_opts *o, bool json);

/* ring stage RING of CONFIG (the file cfg was read from) on IN: prints the outcome.  Exit
 * status.  Both refuse to run outside the network namespace the instance was loaded in. */
int kr_cli_stage(const struct kr_inst *in, const char *config, const struct kr_config *cfg,
		 const char *ring, bool json);

#endif
