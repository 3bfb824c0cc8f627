// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include "cmd.h"
#include "opts.h"
#include "version.h"

static void help(FILE *f, const void *ctx)
{
	(void)ctx;
	fprintf(f, "Usage: keyrouter version\n\n"
		"Prints the version of the tool, as `keyrouter --version` does.\n");
}

static int cmd_version(int argc, char **argv)
{
	const struct kr_opt opts[] = { KR_OPT_END };
	const struct kr_opts_cmd cmd = { .usage = help, .no_args = true };
	int first = kr_opts_parse(argc, argv, opts, &cmd);

	if (first < 0)
		return kr_opts_status(first);
	printf("keyrouter %s\n", KR_VERSION);
	return 0;
}
KR_COMMAND(version, "version", "print the version", cmd_version);
