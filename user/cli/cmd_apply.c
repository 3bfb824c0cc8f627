// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter apply: converge the pinned maps on a configuration. */
#include <getopt.h>
#include <stdio.h>
#include "cmd.h"
#include "log.h"
#include "ops.h"
#include "apply_out.h"

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
		"                       \"instance\", else \"default\", else the only one loaded)\n"
		"  -p, --pin-dir DIR    maps pinned in DIR instead (e.g. by `bpftool prog loadall\n"
		"                       build/bpf/keyrouter.bpf.o DIR/progs pinmaps DIR`)\n"
		"  -n, --dry-run        print what would change, change nothing\n");
}

static int cmd_apply(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "instance", required_argument, NULL, 'i' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *config = NULL, *instance = NULL, *pin_dir = NULL;
	struct kr_ops_apply_opts o = {};
	struct kr_config *cfg;
	struct kr_inst in;
	int c, err;

	while ((c = getopt_long(argc, argv, "c:i:p:nh", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'i': instance = optarg; break;
		case 'p': pin_dir = optarg; break;
		case 'n': o.dry_run = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!config || optind != argc || (instance && pin_dir)) {
		pr_warn("keyrouter: apply: expected -c CONFIG (and at most one of --instance, "
			"--pin-dir)\n");
		usage(stderr);
		return 2;
	}
	cfg = kr_cli_config_load(config);
	if (!cfg)
		return 1;
	if (!instance && !pin_dir && cfg->instance)
		instance = cfg->instance;
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
