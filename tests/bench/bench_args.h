/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every benchmark's command line.  `--help` (or -h) prints what the benchmark measures and
 * what it takes, and exits 0; an option it does not know, or more arguments than it takes,
 * is an error (status 2) before anything is loaded or created: a benchmark never starts a
 * run of minutes, or builds namespaces, because it was asked for its help.
 */
#ifndef KR_BENCH_ARGS_H
#define KR_BENCH_ARGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* usage: the text after "usage: NAME"; max_args: the positional arguments it takes. */
static inline void bench_args(int argc, char **argv, int max_args, const char *usage)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	int positional = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: %s%s", name, usage);
			exit(0);
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", name, argv[i],
				name);
			exit(2);
		}
		if (++positional > max_args) {
			fprintf(stderr, "%s: unexpected argument '%s' (see %s --help)\n", name,
				argv[i], name);
			exit(2);
		}
	}
}

#endif
