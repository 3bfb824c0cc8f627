// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter: the command-line tool.  Commands live in user/cmd_*.c (see cmd.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "log.h"
#include "opts.h"
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
	fprintf(f, "\nOptions:\n  -v, --verbose  also libbpf's and libxdp's messages as they come (without\n"
		   "                 it they are shown only when a command fails)\n"
		   "  -q, --quiet    only warnings and errors\n"
		   "  --version      the version\n"
		   "\n`keyrouter COMMAND --help` explains each command.\n");
}

static int cmd_match(const struct kr_cmd *c, int argc, char **argv);

/* Is word the first word of two-word commands ("ring" of "ring dump")? */
static bool is_group(const char *word)
{
	size_t n = strlen(word);

	for (const struct kr_cmd *c = __start_kr_cmds; c < __stop_kr_cmds; c++)
		if (!strncmp(c->name, word, n) && c->name[n] == ' ')
			return true;
	return false;
}

/* `keyrouter ring`, `keyrouter ring --help`: the commands of the group. */
static void group_usage(FILE *f, const char *group)
{
	size_t n = __stop_kr_cmds - __start_kr_cmds, len = strlen(group);
	struct kr_cmd *v = malloc(n * sizeof(*v));

	fprintf(f, "Usage: keyrouter %s COMMAND [ARGS]\n\nCommands:\n", group);
	if (v) {
		memcpy(v, __start_kr_cmds, n * sizeof(*v));
		qsort(v, n, sizeof(*v), cmd_cmp);
		for (size_t i = 0; i < n; i++)
			if (!strncmp(v[i].name, group, len) && v[i].name[len] == ' ')
				fprintf(f, "  %-16s %s\n", v[i].name, v[i].summary);
		free(v);
	}
	fprintf(f, "\n`keyrouter %s COMMAND --help` explains each command.\n", group);
}

static int run_group(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
			 !strcmp(argv[1], "help"))) {
		group_usage(stdout, argv[0]);
		return 0;
	}
	if (argc > 1)
		fprintf(stderr, "keyrouter: unknown command '%s %s'\n\n", argv[0], argv[1]);
	group_usage(stderr, argv[0]);
	return 2;
}

static int run(int argc, char **argv)
{
	int words;

	for (const struct kr_cmd *c = __start_kr_cmds; c < __stop_kr_cmds; c++) {
		words = cmd_match(c, argc, argv);
		if (words) {
			kr_cmd_set_current(c->name);
			return c->fn(argc - words + 1, argv + words - 1);
		}
	}
	if (is_group(argv[0]))
		return run_group(argc, argv);
	fprintf(stderr, "keyrouter: unknown command '%s'\n", argv[0]);
	fprintf(stderr, "Run 'keyrouter --help' for the list of commands.\n");
	return 2;
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
	int rc;

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
		} else if (!strcmp(argv[0], "--version") || !strcmp(argv[0], "-V")) {
			char *v[] = { "version", NULL };

			return run(1, v);
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
	rc = run(argc, argv);
	kr_output_finish(rc);
	return rc;
}
