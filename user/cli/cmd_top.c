// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * keyrouter top: per service, its ring and each backend, the real traffic beside the ring
 * (docs/operations.md "Tracing decisions and top").  Rates and shares come from the
 * counters (kr_svc_stats, kr_backend_stats) between two rounds; each backend's share of
 * its ring and the ring's CV from the active slot's image (as `analyze` measures it); the
 * hottest keys per backend from the sampled trace, counted with Space-Saving (Metwally,
 * Agrawal, El Abbadi 2005): KR_TOP_SLOTS counters per backend, so memory stays bounded
 * whatever the number of distinct keys, and every key with more than 1/KR_TOP_SLOTS of a
 * backend's sampled packets is among them, its count over-estimated by at most `err`.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "analytics.h"
#include "cmd.h"
#include "keyform.h"
#include "log.h"
#include "ops.h"
#include "ops_publish.h"
#include "ops_backends.h"
#include <bpf/bpf.h>
#include "ops_svcstats.h"
#include "opts.h"
#include "trace_out.h"
#include "util.h"

#define KR_TOP_SLOTS	64	/* Space-Saving counters per backend */

static const char usage_text[] =
	"Usage: keyrouter top [--service NAME] [--sample N] [--interval SECONDS] [--rounds N]\n"
	"                     [--keys N] [--json] [--instance NAME | --pin-dir DIR]\n\n"
	"A live view of the instance, per service and its ring, per backend: packets/s, the\n"
	"backend's share of the service's real traffic beside its share of the ring, the\n"
	"traffic's imbalance (CV over the ring's backends) beside the ring's own CV, and the\n"
	"hottest keys of each backend, estimated from the sampled decision trace (`keyrouter\n"
	"trace`; one trace or top per instance at a time) with a bounded-memory heavy-hitter\n"
	"count (Space-Saving, 64 counters per backend). When the traffic's CV is much above\n"
	"the ring's, hot keys dominate (more points would not help); when they are close, the\n"
	"ring's own imbalance does (more points would).\n\n"
	"  -s, --service NAME   only this service (the config's name)\n"
	"  -n, --sample N       trace 1 in N packets for the hot keys (default 100)\n"
	"  -I, --interval S     seconds between rounds (default 2)\n"
	"  -r, --rounds N       stop after N rounds (default: until interrupted)\n"
	"  -K, --keys N         hot keys shown per backend (default 3, at most 16)\n"
	"  -j, --json           one JSON object per round\n"
	"  -i, --instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default \"default\")\n"
	"  -p, --pin-dir DIR    maps pinned in DIR instead\n\n"
	"Shares and rates are of the interval (the counters' differences); a backend that\n"
	"several rings share is marked '*' (its counter holds the packets of all of them).\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct ss_counter {
	__u64 count, err;
	__u16 len;
	__u8 key[KR_KEY_BUF];
};

/* One backend of a service's ring. */
struct top_be {
	__u32 id;
	__u64 points;			/* its points in the ring (the expected share's weight) */
	__u64 space;			/* hash space it owns */
	__u64 pk0, pk1;			/* kr_backend_stats packets at the two rounds */
	unsigned nrings;		/* rings that have it */
	struct ss_counter ss[KR_TOP_SLOTS];
	unsigned nss;
	__u64 sampled;
};

struct top_svc {
	__u32 stats_id;
	char name[KR_SVC_NAME_MAX];
	char vip[64];
	__u32 ring_id;
	__u8 key_type;
	double ring_cv;
	struct top_be *be;
	unsigned nbe;
	struct kr_svc_stats c0, c1;	/* the service's counters at the two rounds */
	bool migrating;
};

struct top {
	struct kr_inst *in;
	struct kr_ops_maps *m;
	struct kr_trace_names *names;
	struct kr_ops_trace *t;
	struct top_svc *svc;
	unsigned nsvc;
	int only;			/* stats id of --service, or -1 */
	__u32 sample;
	unsigned keys;
	bool json;
	__u64 events;
};

/* Space-Saving: count key in the backend's counters. */
static void ss_add(struct top_be *b, const __u8 *key, __u16 len)
{
	struct ss_counter *min = NULL;

	b->sampled++;
	for (unsigned i = 0; i < b->nss; i++) {
		struct ss_counter *c = &b->ss[i];

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
	memcpy(min->key, key, len);
}

static int ss_cmp(const void *a, const void *b)
{
	const struct ss_counter *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static struct top_be *be_of(struct top_svc *s, __u32 id)
{
	for (unsigned i = 0; i < s->nbe; i++)
		if (s->be[i].id == id)
			return &s->be[i];
	return NULL;
}

static int on_event(void *ctx, const struct kr_trace_event *e)
{
	struct top *tp = ctx;
	struct top_be *b;

	tp->events++;
	if (e->verdict != KR_TV_ROUTED)
		return 0;
	for (unsigned i = 0; i < tp->nsvc; i++) {
		if (tp->svc[i].stats_id != e->stats_id)
			continue;
		b = be_of(&tp->svc[i], e->backend_id);
		if (b)
			ss_add(b, e->key, e->key_len);
		break;
	}
	return 0;
}

/* The ring of service s: each backend's points and hash space, from the active slot. */
static int ring_load(struct top *tp, struct top_svc *s, const uint16_t *nrings)
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
		struct top_be *b = be_of(s, r.owner[j]);

		if (!b) {
			struct top_be *nb = realloc(s->be, (s->nbe + 1) * sizeof(*nb));

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
out:
	free(share);
	free(buf);
	kr_an_ring_free(&r);
	return err;
}

static int services_load(struct top *tp)
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
		struct top_svc *s = &tp->svc[tp->nsvc];
		struct kr_service sv;

		if (!v[i].id || (tp->only >= 0 && v[i].id != (__u32)tp->only) ||
		    bpf_map_lookup_elem(tp->m->services, &v[i].key, &sv))
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
static void counters_read(struct top *tp)
{
	struct kr_ops_svc *v;
	unsigned n;

	if (kr_ops_svc_read(tp->in, tp->m, &v, &n))
		return;
	for (unsigned i = 0; i < tp->nsvc; i++) {
		struct top_svc *s = &tp->svc[i];

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

static __u64 delta(__u64 was, __u64 now)
{
	return now >= was ? now - was : 0;
}
/* Counter f of service s between the two rounds. */
#define DELTA(s, f) delta((s)->c0.f, (s)->c1.f)

/* The traffic's CV over the ring's backends: r_i = traffic share / expected share. */
static double traffic_cv(const struct top_svc *s, __u64 sum, __u64 total_points)
{
	double sum2 = 0;

	if (!sum || !s->nbe)
		return 0;
	for (unsigned i = 0; i < s->nbe; i++) {
		double exp = (double)s->be[i].points / (double)total_points;
		double ri = (double)(s->be[i].pk1 - s->be[i].pk0) / (double)sum / exp;

		sum2 += (ri - 1) * (ri - 1);
	}
	return sqrt(sum2 / s->nbe);
}

static const char *verdict_of(double tcv, double rcv, __u64 sum)
{
	if (sum < 100)
		return "too few packets to tell";
	if (tcv <= 1.5 * rcv + 0.02)
		return "the ring's own imbalance dominates: more points would help";
	return "hot keys dominate: more points would not help";
}

static void show(struct top *tp, double dt, const struct kr_trace_stats *ts)
{
	json_t *root = tp->json ? json_object() : NULL, *jsvcs = tp->json ? json_array() : NULL;
	char tm[32], be[64], kp[KR_KEY_PRINT_MAX];
	time_t now = time(NULL);
	struct tm g;

	gmtime_r(&now, &g);
	strftime(tm, sizeof(tm), "%H:%M:%SZ", &g);
	if (!tp->json)
		printf("keyrouter top: instance %s, %s, interval %.1f s, trace 1 in %u (%llu "
		       "events, %llu lost)\n", tp->in->name, tm, dt, tp->sample,
		       (unsigned long long)tp->events, (unsigned long long)ts->lost);
	for (unsigned i = 0; i < tp->nsvc; i++) {
		struct top_svc *s = &tp->svc[i];
		__u64 sum = 0, points = 0;
		json_t *js = NULL, *jbes = NULL;
		double tcv;

		for (unsigned j = 0; j < s->nbe; j++) {
			sum += s->be[j].pk1 - s->be[j].pk0;
			points += s->be[j].points;
		}
		tcv = traffic_cv(s, sum, points);
		if (tp->json) {
			js = json_pack("{s:s,s:s,s:s,s:f,s:f,s:f,s:f,s:f,s:f,s:b,s:s}", "service",
				       s->name, "vip", s->vip, "ring",
				       kr_trace_ring(tp->names, s->ring_id), "packets_per_s",
				       DELTA(s, packets) / dt, "routed_per_s",
				       DELTA(s, routed) / dt, "passed_per_s",
				       DELTA(s, passed) / dt, "dropped_per_s",
				       DELTA(s, dropped) / dt, "traffic_cv", tcv,
				       "ring_cv", s->ring_cv, "migrating", s->migrating, "verdict",
				       verdict_of(tcv, s->ring_cv, sum));
			jbes = json_array();
		} else {
			printf("service %s (%s) ring %s%s: %.1f packets/s (routed %.1f, passed %.1f, "
			       "dropped %.1f)\n", s->name, s->vip, kr_trace_ring(tp->names, s->ring_id),
			       s->migrating ? " (migrating: ring shares of the active slot)" : "",
			       DELTA(s, packets) / dt,
			       DELTA(s, routed) / dt,
			       DELTA(s, passed) / dt,
			       DELTA(s, dropped) / dt);
			printf("  traffic CV %.3f, ring CV %.3f: %s\n", tcv, s->ring_cv,
			       verdict_of(tcv, s->ring_cv, sum));
			printf("  %-24s %7s %11s %8s %8s  %s\n", "backend", "id", "packets/s", "traffic",
			       "ring", "hot keys (estimated packets/s)");
		}
		for (unsigned j = 0; j < s->nbe; j++) {
			struct top_be *b = &s->be[j];
			__u64 d = b->pk1 - b->pk0;
			double tshare = sum ? (double)d / (double)sum : 0;
			double rshare = (double)b->space / (double)KR_AN_SPACE;
			unsigned nk = b->nss < tp->keys ? b->nss : tp->keys;
			json_t *jb = NULL, *jk = NULL;

			qsort(b->ss, b->nss, sizeof(b->ss[0]), ss_cmp);
			kr_trace_backend(tp->names, b->id, be, sizeof(be));
			if (tp->json) {
				jb = json_pack("{s:s,s:i,s:f,s:f,s:f,s:b,s:I}", "backend", be, "id",
					       (int)b->id, "packets_per_s", d / dt, "traffic_share",
					       tshare, "ring_share", rshare, "shared", b->nrings > 1,
					       "sampled", (json_int_t)b->sampled);
				jk = json_array();
			} else {
				printf("  %-24s %7u %11.1f %7.2f%% %7.2f%% ", be, b->id, d / dt,
				       100 * tshare, 100 * rshare);
				if (b->nrings > 1)
					printf("*");
			}
			for (unsigned k = 0; k < nk; k++) {
				const struct ss_counter *c = &b->ss[k];
				/* sampled counts -> packets/s of the interval */
				double est = (double)c->count * tp->sample / dt;

				kr_key_print((enum kr_key_type)s->key_type, c->key, c->len, kp,
					     sizeof(kp));
				if (tp->json)
					json_array_append_new(jk, json_pack("{s:s,s:f,s:I,s:I}", "key",
						kp, "packets_per_s", est, "sampled",
						(json_int_t)c->count, "error", (json_int_t)c->err));
				else
					printf("%s%s %.1f", k ? ", " : " ", kp, est);
			}
			if (tp->json) {
				json_object_set_new(jb, "hot_keys", jk);
				json_array_append_new(jbes, jb);
			} else {
				printf("\n");
			}
			b->nss = 0;	/* hot keys are per round */
			b->sampled = 0;
		}
		if (tp->json) {
			json_object_set_new(js, "backends", jbes);
			json_array_append_new(jsvcs, js);
		}
	}
	if (tp->json) {
		char *txt;

		json_object_set_new(root, "time", json_string(tm));
		json_object_set_new(root, "instance", json_string(tp->in->name));
		json_object_set_new(root, "interval_s", json_real(dt));
		json_object_set_new(root, "sample", json_integer(tp->sample));
		json_object_set_new(root, "events", json_integer((json_int_t)tp->events));
		json_object_set_new(root, "lost", json_integer((json_int_t)ts->lost));
		json_object_set_new(root, "services", jsvcs);
		txt = json_dumps(root, JSON_COMPACT);
		if (txt)
			puts(txt);
		free(txt);
		json_decref(root);
	} else {
		printf("\n");
	}
	fflush(stdout);
	tp->events = 0;
}

static int cmd_top(int argc, char **argv)
{
	const char *instance = NULL, *pin_dir = NULL, *service = NULL, *sample = NULL;
	const char *interval = NULL, *rounds = NULL, *keys = NULL;
	bool json = false;
	const struct kr_opt opts[] = {
		KR_OPT_STR("service", 's', &service),
		KR_OPT_STR("sample", 'n', &sample),
		KR_OPT_STR("interval", 'I', &interval),
		KR_OPT_STR("rounds", 'r', &rounds),
		KR_OPT_STR("keys", 'K', &keys),
		KR_OPT_FLAG("json", 'j', &json),
		KR_OPT_STR("instance", 'i', &instance),
		KR_OPT_STR("pin-dir", 'p', &pin_dir),
		KR_OPT_END
	};
	struct top tp = { .only = -1, .sample = 100, .keys = 3, .json = json };
	struct kr_trace_stats ts0, ts1;
	struct kr_trace_ctl ctl = { 0 };
	struct kr_trace_session ses;
	struct kr_ops_trace *t = &ses.t;
	double ival = 2, t0;
	uint32_t nrounds = 0, v;
	int first = kr_opts_parse(argc, argv, opts, &(struct kr_opts_cmd){ .help = usage_text,
									   .no_args = true });
	int rc = 1;

	if (first < 0)
		return kr_opts_status(first);
	tp.json = json;
	if (instance && pin_dir)
		return kr_usage_error("give --instance NAME or --pin-dir DIR, not both");
	if (sample && kr_parse_u32(sample, 1, &tp.sample))
		return kr_usage_error("bad --sample '%s': expected N >= 1 (1 in N packets)", sample);
	if (rounds && kr_parse_u32(rounds, 1, &nrounds))
		return kr_usage_error("bad --rounds '%s': expected N >= 1", rounds);
	if (keys) {
		if (kr_parse_u32(keys, 0, &v) || v > 16)
			return kr_usage_error("bad --keys '%s': expected 0..16", keys);
		tp.keys = v;
	}
	if (interval) {
		char *end;

		ival = strtod(interval, &end);
		if (*end || !(ival >= 0.1) || ival > 3600)
			return kr_usage_error("bad --interval '%s': expected 0.1..3600 seconds",
					      interval);
	}
	if (kr_trace_session_open(&ses, instance, pin_dir))
		return 1;
	tp.in = &ses.in;
	tp.m = &ses.m;
	tp.t = t;
	if (kr_trace_session_names(&ses))
		goto out;
	tp.names = ses.names;
	if (service) {
		tp.only = kr_ops_svc_find(&ses.in, service);
		if (tp.only < 0) {
			rc = kr_usage_error("no service '%s' in the instance ('keyrouter status' "
					    "lists them)", service);
			goto out;
		}
		ctl.flags |= KR_TRACE_F_SERVICE;
		ctl.stats_id = (__u32)tp.only;
	}
	if (services_load(&tp))
		goto out;
	ctl.sample = tp.sample;
	ctl.verdicts = 1u << KR_TV_ROUTED;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, on_signal);
	if (kr_ops_trace_start(t, &ctl, on_event, &tp))
		goto out;
	counters_read(&tp);
	kr_ops_trace_stats(t, &ts0);
	for (uint32_t round = 0; !stop && (!nrounds || round < nrounds); round++) {
		t0 = kr_trace_mono_s();
		while (!stop && kr_trace_mono_s() - t0 < ival) {
			int n = kr_ops_trace_poll(t, 50);

			if (n < 0 && n != -EINTR)
				break;
		}
		kr_ops_trace_drain(t);
		counters_read(&tp);
		kr_ops_trace_stats(t, &ts1);
		ts1.lost -= ts0.lost;
		show(&tp, kr_trace_mono_s() - t0, &ts1);
		kr_ops_trace_stats(t, &ts0);
	}
	kr_ops_trace_stop(t);
	rc = 0;
out:
	for (unsigned i = 0; tp.svc && i < tp.nsvc; i++)
		free(tp.svc[i].be);
	free(tp.svc);
	kr_trace_session_close(&ses);
	return rc;
}

KR_COMMAND(top, "top", "live per service, ring and backend: traffic vs ring, hot keys", cmd_top);
