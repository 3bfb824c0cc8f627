// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Backends file reader ("<SocketAddr> <weight>" per line). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "backends_file.h"
#include "util.h"

struct bf {
	struct kr_backend_spec *b;
	uint32_t *line;		/* line number of each backend */
	uint32_t n, cap;
};

static int bf_push(struct bf *bf, const struct kr_backend_spec *s, uint32_t line)
{
	if (bf->n == bf->cap) {
		uint32_t nc = bf->cap ? bf->cap * 2 : 64;
		struct kr_backend_spec *b = realloc(bf->b, nc * sizeof(*b));
		uint32_t *l;

		if (!b)
			return -1;
		bf->b = b;
		l = realloc(bf->line, nc * sizeof(*l));
		if (!l)
			return -1;
		bf->line = l;
		bf->cap = nc;
	}
	bf->line[bf->n] = line;
	bf->b[bf->n++] = *s;
	return 0;
}

/* One line: 0 = backend parsed into *s, 1 = nothing on it, -1 = error. */
static int parse_line(char *ln, struct kr_backend_spec *s, struct kr_err *err)
{
	char *f[3], *save = NULL, *hash = strchr(ln, '#');
	int nf = 0;

	if (hash)
		*hash = 0;
	for (char *t = strtok_r(ln, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save))
		f[nf < 3 ? nf++ : 2] = t;
	if (nf == 0)
		return 1;
	if (nf != 2)
		return kr_errf(err, "expected '<SocketAddr> <weight>' (e.g. '10.0.0.1:443 1'), "
			       "got %d field%s", nf, nf == 1 ? "" : "s or more");
	if (kr_sockaddr_parse(f[0], &s->addr, err))
		return -1;
	if (kr_parse_u32(f[1], 0, &s->weight))
		return kr_errf(err, "bad weight '%s' for %s: expected an integer 0..4294967295",
			       f[1], f[0]);
	return 0;
}

static const struct kr_backend_spec *dup_base;

static int cmp_idx(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	int c = kr_sockaddr_cmp(&dup_base[a].addr, &dup_base[b].addr);

	return c ? c : (a > b) - (a < b);
}

/* The duplicate whose second occurrence comes first in the file. */
static int check_dups(const struct bf *bf, const char *name, struct kr_err *err)
{
	uint32_t *o = malloc(bf->n * sizeof(*o) + 1), best = UINT32_MAX, first = 0;
	char s[KR_SOCKADDR_STRLEN];

	if (!o)
		return kr_errf(err, "out of memory");
	for (uint32_t i = 0; i < bf->n; i++)
		o[i] = i;
	dup_base = bf->b;
	qsort(o, bf->n, sizeof(*o), cmp_idx);
	for (uint32_t i = 1; i < bf->n; i++) {
		if (kr_sockaddr_cmp(&bf->b[o[i - 1]].addr, &bf->b[o[i]].addr) == 0 &&
		    o[i] < best) {
			best = o[i];
			/* the first occurrence: the smallest index of this address */
			first = o[i - 1];
			for (uint32_t k = i - 1; k > 0 && !kr_sockaddr_cmp(&bf->b[o[k - 1]].addr,
									   &bf->b[o[i]].addr); k--)
				first = o[k - 1];
		}
	}
	free(o);
	if (best == UINT32_MAX)
		return 0;
	kr_sockaddr_format(&bf->b[best].addr, s);
	return kr_errf(err, "%s:%u: duplicate backend %s (already on line %u)", name,
		       bf->line[best], s, bf->line[first]);
}

int kr_backends_read(FILE *f, const char *name, struct kr_backend_spec **out, uint32_t *n,
		     struct kr_err *err)
{
	struct bf bf = { 0 };
	struct kr_backend_spec s;
	size_t cap = 0;
	char *ln = NULL;
	uint32_t lineno = 0;
	int ret = -1, r;

	while (getline(&ln, &cap, f) >= 0) {
		lineno++;
		r = parse_line(ln, &s, err);
		if (r < 0) {
			kr_err_prefix(err, "%s:%u", name, lineno);
			goto cleanup;
		}
		if (r > 0)
			continue;
		if (bf.n == KR_MAX_BACKENDS) {
			kr_errf(err, "%s:%u: too many backends: a ring holds at most %u (the "
				"backend index is 16 bits)", name, lineno, KR_MAX_BACKENDS);
			goto cleanup;
		}
		if (bf_push(&bf, &s, lineno)) {
			kr_errf(err, "%s: out of memory", name);
			goto cleanup;
		}
	}
	if (ferror(f)) {
		kr_errf(err, "couldn't read backends file '%s': %s", name, strerror(errno));
		goto cleanup;
	}
	if (bf.n == 0) {
		kr_errf(err, "%s: no backends (expected lines '<SocketAddr> <weight>')", name);
		goto cleanup;
	}
	if (check_dups(&bf, name, err))
		goto cleanup;
	*out = bf.b;
	*n = bf.n;
	bf.b = NULL;
	ret = 0;
cleanup:
	free(ln);
	free(bf.b);
	free(bf.line);
	return ret;
}

int kr_backends_load(const char *path, struct kr_backend_spec **out, uint32_t *n,
		     struct kr_err *err)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	int ret;

	if (!f)
		return kr_errf(err, "couldn't open backends file '%s': %s", path, strerror(errno));
	ret = kr_backends_read(f, strcmp(path, "-") ? path : "<stdin>", out, n, err);
	if (f != stdin)
		fclose(f);
	return ret;
}
