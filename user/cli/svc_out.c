// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Per-service counters in status / stats (svc_out.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "ops_stats.h"
#include "svc_out.h"
#include "trace_out.h"

/* The outcome fields; every other counter is a reason (or bytes). */
static const struct kr_ops_field outcome[] = {
	KR_OPS_FIELD(kr_svc_stats, packets), KR_OPS_FIELD(kr_svc_stats, routed),
	KR_OPS_FIELD(kr_svc_stats, passed), KR_OPS_FIELD(kr_svc_stats, dropped),
};
#define NOUTCOME KR_OPS_NFIELDS(outcome)

/* The previous round of --watch: rates are (this - previous) / seconds between them. */
static struct {
	struct kr_ops_svc *v;
	unsigned n;
	double t;
} prev;

static const struct kr_ops_svc *prev_of(const struct kr_ops_svc *s)
{
	for (unsigned i = 0; i < prev.n; i++)
		if (prev.v[i].id == s->id && !strcmp(prev.v[i].name, s->name))
			return &prev.v[i];
	return NULL;
}

/* Rate of counter f of s since the previous round, or -1 when there is none. */
static double rate(const struct kr_ops_svc *s, const struct kr_ops_field *f, double now)
{
	const struct kr_ops_svc *p = prev_of(s);
	__u64 a, b;

	if (!p || now <= prev.t)
		return -1;
	a = kr_ops_field_get(&s->c, f);
	b = kr_ops_field_get(&p->c, f);
	return a >= b ? (double)(a - b) / (now - prev.t) : 0;
}

static bool is_outcome(const struct kr_ops_field *f)
{
	for (size_t i = 0; i < NOUTCOME; i++)
		if (f->off == outcome[i].off)
			return true;
	return false;
}

static void keep(struct kr_ops_svc *v, unsigned n, double now)
{
	free(prev.v);
	prev.v = v;
	prev.n = n;
	prev.t = now;
}

void kr_svc_out_text(FILE *f, const struct kr_inst *in, const struct kr_ops_maps *m)
{
	struct kr_ops_svc *v;
	unsigned n;
	double now = kr_trace_mono_s();

	if (kr_ops_svc_read(in, m, &v, &n))
		return;		/* an older program: no per-service counters */
	for (unsigned i = 0; i < n; i++) {
		const struct kr_ops_svc *s = &v[i];
		bool any = false;

		fprintf(f, "counters of service %s (%s, id %u):", s->name, s->vip, s->id);
		for (size_t o = 0; o < NOUTCOME; o++)
			fprintf(f, " %s %llu", outcome[o].name,
				(unsigned long long)kr_ops_field_get(&s->c, &outcome[o]));
		for (size_t k = 0; k < kr_ops_svc_nfields; k++) {
			const struct kr_ops_field *c = &kr_ops_svc_fields[k];
			__u64 x = kr_ops_field_get(&s->c, c);

			if (is_outcome(c) || !x)
				continue;
			fprintf(f, "%s %s %llu", any ? "," : ";", c->name, (unsigned long long)x);
			any = true;
		}
		fprintf(f, "\n");
		if (rate(s, &outcome[0], now) < 0)
			continue;
		fprintf(f, "  per second:");
		for (size_t o = 0; o < NOUTCOME; o++)
			fprintf(f, " %s %.1f", outcome[o].name, rate(s, &outcome[o], now));
		fprintf(f, "\n");
	}
	keep(v, n, now);
}

void kr_svc_out_json(json_t *root, const struct kr_inst *in, const struct kr_ops_maps *m)
{
	json_t *arr = json_array();
	struct kr_ops_svc *v;
	unsigned n;
	double now = kr_trace_mono_s();

	if (!arr || kr_ops_svc_read(in, m, &v, &n)) {
		json_decref(arr);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		json_t *o = json_object(), *r = NULL;

		json_object_set_new(o, "name", json_string(v[i].name));
		json_object_set_new(o, "id", json_integer(v[i].id));
		json_object_set_new(o, "vip", json_string(v[i].vip));
		for (size_t k = 0; k < kr_ops_svc_nfields; k++)
			json_object_set_new(o, kr_ops_svc_fields[k].name, json_integer((json_int_t)
					    kr_ops_field_get(&v[i].c, &kr_ops_svc_fields[k])));
		if (rate(&v[i], &outcome[0], now) >= 0) {
			r = json_object();
			for (size_t k = 0; k < NOUTCOME; k++)
				json_object_set_new(r, outcome[k].name,
						    json_real(rate(&v[i], &outcome[k], now)));
			json_object_set_new(o, "per_second", r);
		}
		json_array_append_new(arr, o);
	}
	keep(v, n, now);
	json_object_set_new(root, "service_counters", arr);
}
