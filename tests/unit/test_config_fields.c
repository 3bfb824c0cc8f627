// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * docs/config.md against the configuration's field tables (user/core/config_int.h, the
 * tables the parser's field check and config show read): the first table under each
 * object's heading names every field of the object, and no other.  Also: the comparison
 * finds a field missing from a table and a field that does not exist (a crafted page), and
 * every field of a table is one the parser accepts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_int.h"
#include "tap.h"

#define MAX_DOC_FIELDS 64

/* The first-column `names` of the first table after the line `heading` of text: n names
 * into out (each a malloc'd copy), or -1 when the heading or its table is missing. */
static int doc_fields(const char *text, const char *heading, char **out, int max)
{
	size_t hl = strlen(heading);
	const char *p = text, *e;
	int n = 0, row = 0;

	for (;;) {
		if (!strncmp(p, heading, hl) && (p[hl] == '\n' || !p[hl]))
			break;
		p = strchr(p, '\n');
		if (!p)
			return -1;
		p++;
	}
	/* to the table: the first line starting with '|', not past the next heading */
	while ((p = strchr(p, '\n')) && *++p != '|')
		if (*p == '#')
			return -1;
	if (!p)
		return -1;
	for (; *p == '|'; p = e + 1, row++) {
		const char *a, *b;

		e = strchr(p, '\n');
		if (!e)
			e = p + strlen(p);
		/* row 0 is the header, row 1 the |---| line */
		a = row >= 2 ? memchr(p + 1, '`', (size_t)(e - p - 1)) : NULL;
		b = a ? memchr(a + 1, '`', (size_t)(e - a - 1)) : NULL;
		if (b && (const char *)memchr(p + 1, '|', (size_t)(e - p - 1)) > b && n < max)
			out[n++] = strndup(a + 1, (size_t)(b - a - 1));
		if (!*e)
			break;
	}
	return n;
}

/* Mismatches of table t and the names of the page: each printed; their count. */
static int compare(const struct kr_cfg_object *t, char **doc, int n, const char *where)
{
	int bad = 0;

	for (const struct kr_cfg_field *f = t->fields; f->name; f++) {
		int i;

		for (i = 0; i < n && strcmp(doc[i], f->name); i++)
			;
		if (i == n) {
			printf("# %s: \"%s\" misses field `%s`\n", where, t->doc, f->name);
			bad++;
		}
	}
	for (int i = 0; i < n; i++) {
		const struct kr_cfg_field *f;

		for (f = t->fields; f->name && strcmp(doc[i], f->name); f++)
			;
		if (!f->name) {
			printf("# %s: \"%s\" names `%s`, which is not a field\n", where, t->doc, doc[i]);
			bad++;
		}
	}
	return bad;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = 0;
	fclose(f);
	return buf;
}

static void free_names(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
}

/* The comparison itself: a page that lists the policy fields but one, plus one more. */
static void check_compare_finds(void)
{
	const struct kr_cfg_object *pol = &kr_cfg_objects[KR_CFG_OBJ_POLICY];
	char page[1024], *names[MAX_DOC_FIELDS];
	int n;

	snprintf(page, sizeof(page), "# x\n\n%s\n\ntext\n\n| field | meaning |\n|---|---|\n"
		 "| `no_key` | a |\n| `all_down` | b |\n| `no_route` | c |\n\n## next\n", pol->doc);
	n = doc_fields(page, pol->doc, names, MAX_DOC_FIELDS);
	CHECK_EQ_U((unsigned)n, 3u, "a crafted page: three names read from its table");
	CHECK_EQ_U((unsigned)compare(pol, names, n, "crafted page"), 2u,
		   "a crafted page: one field missing (key_too_long), one that does not exist "
		   "(no_route): two mismatches");
	free_names(names, n);
	snprintf(page, sizeof(page), "%s\n\nno table here\n\n## next\n\n| `a` |\n", pol->doc);
	CHECK(doc_fields(page, pol->doc, names, MAX_DOC_FIELDS) < 0,
	      "a heading without a table of its own is reported, not read from the next section");
}

/* Every field of every table passes the parser's field check (a table the parser does not
 * use would pass the docs check and mean nothing). */
static void check_parser_uses_tables(void)
{
	const char *cfg = "{\"rings\": [{\"name\": \"r\", \"format\": \"v2\", \"backends\": "
			  "[{\"address\": \"10.0.0.1:53\", \"bogus\": 1}]}]}";
	char *errs = NULL;
	struct kr_config *c = kr_config_parse("t.json", cfg, strlen(cfg), &errs);
	char want[512] = "allowed: ";

	for (const struct kr_cfg_field *f = kr_cfg_objects[KR_CFG_OBJ_BACKEND].fields; f->name; f++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s",
			 f == kr_cfg_objects[KR_CFG_OBJ_BACKEND].fields ? "" : ", ", f->name);
	CHECK(!c && errs && strstr(errs, want), "the parser's unknown-field error lists the "
	      "backend table's fields: %s", errs ? errs : "(none)");
	kr_config_free(c);
	free(errs);
}

int main(void)
{
	char *text = slurp("docs/config.md"), *names[MAX_DOC_FIELDS];

	if (!text) {
		CHECK(0, "docs/config.md readable (run from the repository's top directory)");
		return tap_done();
	}
	for (int t = 0; t < KR_CFG_NOBJ; t++) {
		const struct kr_cfg_object *o = &kr_cfg_objects[t];
		int n = doc_fields(text, o->doc, names, MAX_DOC_FIELDS);

		CHECK(n > 0, "docs/config.md has \"%s\" with a field table", o->doc);
		if (n > 0)
			CHECK(!compare(o, names, n, "docs/config.md"),
			      "docs/config.md \"%s\": the %d fields of its table are the object's", o->doc,
			      n);
		free_names(names, n > 0 ? n : 0);
	}
	check_compare_finds();
	check_parser_uses_tables();
	free(text);
	return tap_done();
}
