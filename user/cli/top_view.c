// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The live view of `keyrouter top` and `keyrouter balance` (top_view.h): the rates, the
 * rings' shares and the hot keys, without the printing.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "analytics.h"
#include "log.h"
#include "ops_publish.h"
#include "ops_backends.h"
#include "top_view.h"

/* Space-Saving: count key in the backend's counters. */
static void ss_add(struct kr_top_be *b, const __u8 *key, __u16 len, __u32 hash)
{
	struct kr_top_counter *min = NULL;

	b->sampled++;
	for (unsigned i = 0; i < b->nss; i++) {
		struct kr_top_counter *c = &b->ss[i];

		if (c->len == len && !memcmp(c->key, key, len)) {
			c->count++;
			return;
		}
		if (!min || c->count < min->count)
			min = c;
	}
	if (b->nss < KR_TOP_SLOTS) {
		min = &b->ss[b->nss++];
		min->count = 0;
		min->err = 0;
	} else {
		min->err = min->count;	/* the evicted key's count is the newcomer's bound */
	}
	min->count++;
	min->len = len;
	min->hash = hash;
	memcpy(min->key, key, len);
}

static struct kr_top_be *be_of(struct kr_top_svc *s, __u32 id)
{
	for (unsigned i = 0; i < s->nbe; i++)
		if (s->be[i].id == id)
			return &s->be[i];
	return NULL;
}

int kr_top_on_event(void *ctx, const struct kr_trace_event *e)
{
	struct kr_top *tp = ctx;
	struct kr_top_be *b;

	tp->events++;
	if (e->verdict != KR_TV_ROUTED)
		return 0;
	for (unsigned i = 0; i < tp->nsvc; i++) {
		if (tp->svc[i].stats_id != e->stats_id)
			continue;
		b = be_of(&tp->svc[i], e->backend_id);
		if (b)
			ss_add(b, e->key, e->key_len, e->key_hash);
		break;
	}
	return 0;
}

/* The ring of service s: each backend's points and hash space, from the active slot. */
static int ring_load(struct kr_top *tp, struct kr_top_svc *s, const uint16_t *nrings)
{
	struct kr_an_ring r = { 0 };
	void *buf = NULL;
	size_t size;
	__u64 ctl = 0, total = 0;
	uint64_t *share = NULL;
	uint32_t no = tp->m->backends_max;
	double sum2 = 0;
	int err;

	if (kr_ops_ctl_read(tp->m, s->ring_id, &ctl))
		return -ENOENT;
	s->migrating = kr_ctl_state(ctl) == KR_RING_MIGRATING;
	err = kr_ops_slot_image(tp->m, s->ring_id, kr_ctl_active(ctl), &buf, &size);
	if (!err)
		err = kr_ops_image_an(buf, &r, no);
	share = err ? NULL : calloc(no, sizeof(*share));
	if (err || !share)
		goto out;
	kr_an_shares(&r, share);
	for (uint32_t j = 0; j < r.npoints; j++) {
		struct kr_top_be *b = be_of(s, r.owner[j]);

		if (!b) {
			struct kr_top_be *nb = realloc(s->be, (s->nbe + 1) * sizeof(*nb));

			if (!nb) {
				err = -ENOMEM;
				goto out;
			}
			s->be = nb;
			b = &s->be[s->nbe++];
			memset(b, 0, sizeof(*b));
			b->id = r.owner[j];
			b->space = share[b->id];
			b->nrings = nrings && b->id < no ? nrings[b->id] : 1;
		}
		b->points++;
		total++;
	}
	for (unsigned i = 0; i < s->nbe; i++) {
		double exp = (double)s->be[i].points / (double)total;
		double ri = (double)s->be[i].space / (double)KR_AN_SPACE / exp;

		sum2 += (ri - 1) * (ri - 1);
	}
	s->ring_cv = s->nbe ? sqrt(sum2 / s->nbe) : 0;
	if (tp->keep_ring) {
		s->an = r;
		memset(&r, 0, sizeof(r));
	}
out:
	free(share);
	free(buf);
	kr_an_ring_free(&r);
	return err;
}

int kr_top_services_load(struct kr_top *tp)
{
	struct kr_ops_svc *v;
	uint16_t *nrings = NULL;
	unsigned n;
	int err = kr_ops_svc_read(tp->in, tp->m, &v, &n);

	if (err) {
		pr_warn("keyrouter: the program of instance '%s' has no per-service counters "
			"(an older build: 'keyrouter upgrade')\n", tp->in->name);
		return err;
	}
	kr_ops_backends_rings(tp->m, &nrings);
	tp->svc = calloc(n + 1, sizeof(*tp->svc));
	for (unsigned i = 0; tp->svc && i < n; i++) {
		struct kr_top_svc *s = &tp->svc[tp->nsvc];
		struct kr_service sv;

		if (!v[i].id || (tp->only >= 0 && v[i].id != (__u32)tp->only) ||
		    bpf_map_lookup_elem(tp->m->services, &v[i].key, &sv) ||
		    (tp->only_ring >= 0 && sv.ring_id != (__u32)tp->only_ring))
			continue;
		s->stats_id = v[i].id;
		snprintf(s->name, sizeof(s->name), "%s", v[i].name);
		snprintf(s->vip, sizeof(s->vip), "%s", v[i].vip);
		s->ring_id = sv.ring_id;
		s->key_type = sv.key_type;
		s->c1 = v[i].c;
		if (ring_load(tp, s, nrings))
			continue;
		tp->nsvc++;
	}
	free(nrings);
	free(v);
	return tp->svc ? 0 : -ENOMEM;
}

/* Counters now: the previous ones become c0 / pk0. */
void kr_top_counters_read(struct kr_top *tp)
{
	struct kr_ops_svc *v;
	unsigned n;

	if (kr_ops_svc_read(tp->in, tp->m, &v, &n))
		return;
	for (unsigned i = 0; i < tp->nsvc; i++) {
		struct kr_top_svc *s = &tp->svc[i];

		s->c0 = s->c1;
		for (unsigned j = 0; j < n; j++)
			if (v[j].id == s->stats_id)
				s->c1 = v[j].c;
		for (unsigned j = 0; j < s->nbe; j++) {
			struct kr_backend_stats bs;

			s->be[j].pk0 = s->be[j].pk1;
			if (!kr_ops_percpu_sum(tp->m, tp->m->backend_stats, s->be[j].id, &bs,
					       sizeof(bs)))
				s->be[j].pk1 = bs.packets;
		}
	}
	free(v);
}

int kr_top_start(struct kr_top *tp, const struct kr_trace_ctl *ctl)
{
	int err = kr_ops_trace_start(tp->t, ctl, kr_top_on_event, tp);

	if (err)
		return err;
	kr_top_counters_read(tp);
	kr_ops_trace_stats(tp->t, &tp->ts0);
	return 0;
}

double kr_top_round(struct kr_top *tp, double interval, volatile sig_atomic_t *stop,
		    struct kr_trace_stats *ts)
{
	double t0 = kr_trace_mono_s();

	while (!*stop && kr_trace_mono_s() - t0 < interval) {
		int n = kr_ops_trace_poll(tp->t, 50);

		if (n < 0 && n != -EINTR)
			break;
	}
	kr_ops_trace_drain(tp->t);
	kr_top_counters_read(tp);
	kr_ops_trace_stats(tp->t, ts);
	ts->lost -= tp->ts0.lost;
	kr_ops_trace_stats(tp->t, &tp->ts0);
	return kr_trace_mono_s() - t0;
}

static int ss_cmp(const void *a, const void *b)
{
	const struct kr_top_counter *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

void kr_top_sort(struct kr_top_be *b)
{
	qsort(b->ss, b->nss, sizeof(b->ss[0]), ss_cmp);
}

void kr_top_reset(struct kr_top *tp)
{
	for (unsigned i = 0; i < tp->nsvc; i++)
		for (unsigned j = 0; j < tp->svc[i].nbe; j++) {
			tp->svc[i].be[j].nss = 0;
			tp->svc[i].be[j].sampled = 0;
		}
	tp->events = 0;
}

void kr_top_free(struct kr_top *tp)
{
	for (unsigned i = 0; tp->svc && i < tp->nsvc; i++) {
		free(tp->svc[i].be);
		kr_an_ring_free(&tp->svc[i].an);
	}
	free(tp->svc);
	tp->svc = NULL;
	tp->nsvc = 0;
}
