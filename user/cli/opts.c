// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The option table of a command through getopt_long (opts.h). */
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"

#define MAX_OPTS 48
#define VAL_BASE 0x100		/* getopt value of an option without a letter: VAL_BASE + index */

static const char *current = "";

const char *kr_cmd_current(void) { return current; }
void kr_cmd_set_current(const char *name) { current = name; }

int kr_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "keyrouter: %s: ", current);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nRun 'keyrouter %s --help' for the options.\n", current);
	return 2;
}

static void help(const struct kr_opts_cmd *c, FILE *f)
{
	if (c->usage)
		c->usage(f, c->ctx);
	else if (c->help)
		fputs(c->help, f);
}

/* "--name" or "-x" of definition d, for messages. */
static const char *opt_label(const struct kr_opt *d, char *buf, size_t len)
{
	if (d->name)
		snprintf(buf, len, "--%s", d->name);
	else
		snprintf(buf, len, "-%c", d->letter);
	return buf;
}

static bool is_number(const char *s)
{
	char *end;

	if (!s || !*s)
		return false;
	strtod(s, &end);
	return *end == 0;
}

static int set_value(const struct kr_opt *d, const char *arg, const struct kr_opts_cmd *c)
{
	struct kr_err err;

	if (d->flag) {
		*d->flag = true;
		return 0;
	}
	if (d->str) {
		*d->str = arg;
		return 0;
	}
	if (!c->cb || c->cb(c->ctx, d->id, arg, &err) == 0)
		return 0;
	kr_usage_error("%s", err.msg);
	return KR_OPTS_USAGE;
}

int kr_opts_parse(int argc, char **argv, const struct kr_opt *opts, const struct kr_opts_cmd *c)
{
	const struct kr_opt *defs[MAX_OPTS];
	struct option lo[MAX_OPTS + 2];
	char so[3 * MAX_OPTS + 4] = ":h", lbl[64];
	int n = 0, ns = 2, ch, r;

	for (int t = 0; t < 2; t++)
		for (const struct kr_opt *d = t ? c->more : opts; d && d->name; d++) {
			if (n == MAX_OPTS)
				abort();	/* a table longer than the parser: a build error */
			defs[n] = d;
			lo[n] = (struct option){ d->name, d->arg == KR_ARG_NONE ? no_argument :
						 d->arg == KR_ARG_REQUIRED ? required_argument :
						 optional_argument, NULL,
						 d->letter ? d->letter : VAL_BASE + n };
			if (d->letter) {
				so[ns++] = (char)d->letter;
				if (d->arg != KR_ARG_NONE)
					so[ns++] = ':';
				if (d->arg == KR_ARG_OPTIONAL_NUM)
					so[ns++] = ':';
			}
			n++;
		}
	so[ns] = 0;
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n] = (struct option){ 0 };
	optind = 0;	/* glibc: a full reset (also of its place inside a "-abc" cluster) */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		const struct kr_opt *d = NULL;
		const char *arg = optarg;

		if (ch == 'h') {
			help(c, stdout);
			return KR_OPTS_HELP;
		}
		if (ch == '?' || ch == ':') {
			const char *bad = argv[optind - 1];

			if (optopt && optopt < VAL_BASE && !(bad[0] == '-' && bad[1] == '-'))
				return kr_usage_error(ch == ':' ? "option '-%c' needs a value" :
						      "unrecognized option '-%c'", optopt), KR_OPTS_USAGE;
			return kr_usage_error(ch == ':' ? "option '%s' needs a value" :
					      "unrecognized option '%s'", bad), KR_OPTS_USAGE;
		}
		for (int i = 0; i < n - 1 && !d; i++)
			if (ch >= VAL_BASE ? ch == VAL_BASE + i : defs[i]->letter == ch)
				d = defs[i];
		if (!d)
			continue;
		if (d->arg == KR_ARG_OPTIONAL_NUM && !arg && optind < argc && is_number(argv[optind]))
			arg = argv[optind++];	/* "--watch 2": the separate value */
		if (d->arg == KR_ARG_OPTIONAL_NUM && arg && !is_number(arg))
			return kr_usage_error("bad %s '%s': expected a number",
					      opt_label(d, lbl, sizeof(lbl)), arg), KR_OPTS_USAGE;
		r = set_value(d, arg, c);
		if (r)
			return r;
	}
	if (c->no_args && optind < argc)
		return kr_usage_error("unexpected argument '%s'", argv[optind]), KR_OPTS_USAGE;
	return optind;
}
