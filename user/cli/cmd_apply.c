// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter apply: converge the pinned maps on a configuration. */
#include <stdio.h>
#include "cmd.h"
#include "log.h"
#include "ops.h"
#include "apply_out.h"
#include "opts.h"
#include "lock_wait.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: keyrouter apply -c CONFIG [--instance NAME | --pin-dir DIR] [--dry-run]\n\n"
		"Make the running data plane route as CONFIG says, changing only what differs:\n"
		"every ring is built and compared (digest, format, backend ids) with the version\n"
		"published in its active slot; only changed rings are published (one atomic map\n"
		"update each), then services are added/changed/removed, then ring ids and backend\n"
		"ids nothing uses any more are released. Applying the same file twice changes\n"
		"nothing (and says so). Killed at any point, the data plane keeps routing with\n"
		"what was published; the next apply converges. Rings being migrated (staged) are\n"
		"left alone until committed or rolled back.\n\n"
		"  -c, --config FILE    the configuration (JSON)\n"
		"  -i, --instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default: the config's\n"
		"                       \"instance\", else \"default\"; never whichever happens to be\n"
		"                       loaded)\n"
		"  -p, --pin-dir DIR    maps pinned in DIR instead (e.g. by `bpftool prog loadall\n"
		"                       build/bpf/keyrouter.bpf.o DIR/progs pinmaps DIR`)\n"
		"  -n, --dry-run        print what would change, change nothing\n"
		KR_WAIT_OPT_HELP);
}

static void help(FILE *f, const void *ctx)
{
	(void)ctx;
	usage(f);
}

static int cmd_apply(int argc, char **argv)
{
	const char *config = NULL, *instance = NULL, *pin_dir = NULL, *wait = NULL;
	struct kr_ops_apply_opts o = {};
	const struct kr_opt opts[] = {
		KR_OPT_STR("config", 'c', &config),
		KR_OPT_STR("instance", 'i', &instance),
		KR_OPT_STR("pin-dir", 'p', &pin_dir),
		KR_OPT_FLAG("dry-run", 'n', &o.dry_run),
		KR_OPT_STR("wait", 0, &wait),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .usage = help };
	struct kr_config *cfg;
	struct kr_inst in;
	int err, first = kr_opts_parse(argc, argv, opts, &cmd);

	if (first < 0)
		return kr_opts_status(first);
	if (!config || first != argc || (instance && pin_dir))
		return kr_usage_error("expected -c CONFIG (and at most one of --instance, "
				      "--pin-dir)");
	if (kr_lock_wait_opt(wait, -1))
		return 2;
	cfg = kr_cli_config_load(config);
	if (!cfg)
		return 1;
	instance = kr_cli_instance(instance, pin_dir, cfg->instance);
	if (kr_ops_inst_open(&in, instance, pin_dir)) {
		kr_config_free(cfg);
		return 1;
	}
	err = kr_cli_apply(&in, config, cfg, &o);
	kr_ops_inst_close(&in);
	kr_config_free(cfg);
	return err;
}
KR_COMMAND(apply, "apply", "make the data plane route as a config says (idempotent)",
	   cmd_apply);
