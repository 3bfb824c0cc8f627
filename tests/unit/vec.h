/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Reading the ketama vectors (tests/vectors) in C tests. */
#ifndef KR_TEST_VEC_H
#define KR_TEST_VEC_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backends_file.h"
#include "continuum.h"

#define VEC_DIR "tests/vectors/"

static const char *const vec_names[] = {
	"a_v1_3x1", "b_v1_10mixed", "c_v2pm16_10mixed", "e_v1_ipv6", "e_v2pm160_ipv6",
	"f_v2pm160_collide", "f_v2pm16_collide",
};
#define VEC_COUNT (sizeof(vec_names) / sizeof(vec_names[0]))

struct vec_point {
	uint32_t hash, backend;
};

struct vec_key {
	uint8_t *key;
	size_t len;
	uint32_t crc, ring_index, backend, walk[3];
};

struct vec {
	const char *name;
	uint32_t version, pm;
	uint32_t digest;		/* from the continuum header */
	uint32_t header_points;		/* "points after dedup" */
	struct kr_backend_spec *b;
	uint32_t nb;
	struct vec_point *pts;
	uint32_t npts;
	struct vec_key *keys;
	uint32_t nkeys;
};

static FILE *vec_open(const char *name, const char *suffix)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), VEC_DIR "%s.%s", name, suffix);
	f = fopen(path, "r");
	if (!f)
		printf("# couldn't open %s\n", path);
	return f;
}

static int vec_hex(const char *s, uint8_t **out, size_t *len)
{
	size_t n = strlen(s);

	*len = 0;
	*out = NULL;
	if (!strcmp(s, "-"))
		return 0;
	*out = malloc(n / 2 + 1);
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		(*out)[i] = (uint8_t)v;
	}
	*len = n / 2;
	return 0;
}

/* Loads NAME.{backends,continuum,keys}.txt; 0 or -1. */
static int vec_load(struct vec *v, const char *name)
{
	char line[2048], hex[1100];
	struct kr_err err;
	FILE *f;

	memset(v, 0, sizeof(*v));
	v->name = name;
	snprintf(line, sizeof(line), VEC_DIR "%s.backends.txt", name);
	if (kr_backends_load(line, &v->b, &v->nb, &err)) {
		printf("# %s\n", err.msg);
		return -1;
	}
	f = vec_open(name, "continuum.txt");
	if (!f)
		return -1;
	v->pts = malloc(200000 * sizeof(*v->pts));
	while (fgets(line, sizeof(line), f)) {
		const char *p;
		unsigned a, b, c;

		if (line[0] == '#') {
			if ((p = strstr(line, "version: v")))
				v->version = (uint32_t)(p[10] - '0');
			if ((p = strstr(line, "point_multiple=")))
				v->pm = (uint32_t)atoi(p + 15);
			if ((p = strstr(line, "points after dedup: ")))
				v->header_points = (uint32_t)atoi(p + 20);
			if ((p = strstr(line, "in order = ")))
				v->digest = (uint32_t)strtoul(p + 11, NULL, 16);
			continue;
		}
		if (sscanf(line, "%u %x %u", &a, &b, &c) != 3 || a != v->npts || v->npts >= 200000)
			return -1;
		v->pts[v->npts++] = (struct vec_point){ b, c };
	}
	fclose(f);
	f = vec_open(name, "keys.txt");
	if (!f)
		return -1;
	v->keys = malloc(4000 * sizeof(*v->keys));
	while (fgets(line, sizeof(line), f)) {
		struct vec_key *k = &v->keys[v->nkeys];

		if (line[0] == '#')
			continue;
		if (v->nkeys >= 4000 ||
		    sscanf(line, "%1099s %x %u %u %u %u %u", hex, &k->crc, &k->ring_index,
			   &k->backend, &k->walk[0], &k->walk[1], &k->walk[2]) != 7 ||
		    vec_hex(hex, &k->key, &k->len))
			return -1;
		v->nkeys++;
	}
	fclose(f);
	return 0;
}

static void vec_free(struct vec *v)
{
	for (uint32_t i = 0; i < v->nkeys; i++)
		free(v->keys[i].key);
	free(v->keys);
	free(v->pts);
	free(v->b);
}

#endif
