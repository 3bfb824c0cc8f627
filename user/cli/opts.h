/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Command options as a table instead of a getopt loop in every command:
 *
 *   const char *config = NULL, *instance = NULL;
 *   bool dry = false;
 *   const struct kr_opt opts[] = {
 *           KR_OPT_STR("config", 'c', &config),
 *           KR_OPT_STR("instance", 'i', &instance),
 *           KR_OPT_FLAG("dry-run", 'n', &dry),
 *           KR_OPT_END
 *   };
 *   int first = kr_opts_parse(argc, argv, opts, &(struct kr_opts_cmd){ .help = usage_text });
 *   if (first < 0)
 *           return kr_opts_status(first);
 *   ... argv[first..argc-1]: the positional arguments ...
 *
 * `-h`/`--help` is always there (the help on stdout, exit 0).  Every usage error names the
 * full command ("keyrouter: ring build: unknown option '--bogus'") and says how to get the
 * help; the status is then 2.  Options whose value needs checking (numbers, enums) go to
 * a callback (KR_OPT_CB), which returns -1 with a message for a bad value.
 */
#ifndef KR_CLI_OPTS_H
#define KR_CLI_OPTS_H

#include <stdbool.h>
#include <stdio.h>
#include "err.h"

enum kr_opt_arg {
	KR_ARG_NONE,		/* a flag */
	KR_ARG_REQUIRED,	/* --name VALUE, --name=VALUE, -x VALUE, -xVALUE */
	KR_ARG_OPTIONAL_NUM,	/* --name, --name=N, or --name N when N is a number */
};

struct kr_opt {
	const char *name;	/* long name; NULL ends the table */
	int letter;		/* short option, 0: none */
	enum kr_opt_arg arg;
	const char **str;	/* where the value goes (REQUIRED, OPTIONAL_NUM: NULL when
				 * the option is given without one) */
	bool *flag;		/* NONE: set to true */
	int id;			/* else: the callback gets this id */
};

#define KR_OPT_STR(n, l, p)	{ .name = (n), .letter = (l), .arg = KR_ARG_REQUIRED, .str = (p) }
#define KR_OPT_FLAG(n, l, p)	{ .name = (n), .letter = (l), .arg = KR_ARG_NONE, .flag = (p) }
#define KR_OPT_CB(n, l, a, i)	{ .name = (n), .letter = (l), .arg = (a), .id = (i) }
#define KR_OPT_END		{ 0 }

struct kr_opts_cmd {
	const char *help;				/* the --help text, or: */
	void (*usage)(FILE *f, const void *ctx);	/* writes it */
	/* Options given as KR_OPT_CB (and those with neither str nor flag): 0 ok, -1 bad
	 * value (err set: the message without the command name). */
	int (*cb)(void *ctx, int id, const char *arg, struct kr_err *err);
	void *ctx;
	const struct kr_opt *more;	/* a second table (e.g. the ring options), or NULL */
	bool no_args;			/* positional arguments are a usage error */
};

#define KR_OPTS_HELP	(-1)	/* --help printed: exit 0 */
#define KR_OPTS_USAGE	(-2)	/* usage error printed: exit 2 */

/* Parses argv (argv[0] is the last word of the command); returns the index of the first
 * positional argument (getopt moves them after the options), or KR_OPTS_HELP /
 * KR_OPTS_USAGE. */
int kr_opts_parse(int argc, char **argv, const struct kr_opt *opts, const struct kr_opts_cmd *c);

/* The exit status for a negative kr_opts_parse() result. */
static inline int kr_opts_status(int r) { return r == KR_OPTS_HELP ? 0 : 2; }

/* "keyrouter: <command>: <message>" and where the help is; returns 2. */
int kr_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The full name of the running command ("ring build"), for messages. */
const char *kr_cmd_current(void);
void kr_cmd_set_current(const char *name);

#endif
