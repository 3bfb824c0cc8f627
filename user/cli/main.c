// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter: the command-line tool.  Commands live in user/cmd_*.c (see cmd.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "log.h"
#include "output.h"

extern const struct kr_cmd __start_kr_cmds[], __stop_kr_cmds[];

static int cmd_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kr_cmd *)a)->name, ((const struct kr_cmd *)b)->name);
}

static void usage(FILE *f)
{
	size_t n = __stop_kr_cmds - __start_kr_cmds;
	struct kr_cmd *v = malloc(n * sizeof(*v));

	fprintf(f, "Usage: keyrouter [-v|-q] COMMAND [ARGS]\n\n"
		   "keyrouter builds ketama consistent-hash rings (bit-compatible with pingora-ketama\n"
		   "and nginx `hash ... consistent`) and routes UDP/QUIC packets by key in XDP/TC.\n\n"
		   "Commands:\n");
	if (v) {
		memcpy(v, __start_kr_cmds, n * sizeof(*v));
		qsort(v, n, sizeof(*v), cmd_cmp);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "  %-16s %s\n", v[i].name, v[i].summary);
		free(v);
	}
	fprintf(f, "\nOptions:\n  -v  verbose (also libbpf's messages)\n  -q  quiet\n"
		   "\n`keyrouter COMMAND --help` explains each command.\n");
}

/* "ring dump" matches argv = {"ring", "dump", ...}; returns words matched or 0. */
static int cmd_match(const struct kr_cmd *c, int argc, char **argv)
{
	const char *sp = strchr(c->name, ' ');

	if (!sp)
		return strcmp(c->name, argv[0]) == 0;
	if ((size_t)(sp - c->name) != strlen(argv[0]) || strncmp(c->name, argv[0], sp - c->name))
		return 0;
	return argc > 1 && strcmp(sp + 1, argv[1]) == 0 ? 2 : 0;
}

int main(int argc, char **argv)
{
	int words = 0;

	kr_output_init();
	argc--, argv++;
	while (argc > 0 && argv[0][0] == '-') {
		if (!strcmp(argv[0], "-v") || !strcmp(argv[0], "--verbose"))
			kr_log_set_level(KR_LOG_DEBUG);
		else if (!strcmp(argv[0], "-q") || !strcmp(argv[0], "--quiet"))
			kr_log_set_level(KR_LOG_WARN);
		else if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "keyrouter: unknown option '%s'\n", argv[0]);
			usage(stderr);
			return 2;
		}
		argc--, argv++;
	}
	if (argc == 0) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[0], "help")) {
		usage(stdout);
		return 0;
	}
	for (const struct kr_cmd *c = __start_kr_cmds; c < __stop_kr_cmds; c++) {
		words = cmd_match(c, argc, argv);
		if (words)
			return c->fn(argc - words + 1, argv + words - 1);
	}
	fprintf(stderr, "keyrouter: unknown command '%s%s%s'\n", argv[0], argc > 1 ? " " : "",
		argc > 1 && argv[1][0] != '-' ? argv[1] : "");
	fprintf(stderr, "Run 'keyrouter --help' for the list of commands.\n");
	return 2;
}
