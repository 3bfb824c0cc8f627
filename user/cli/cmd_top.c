// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * keyrouter top: per service, its ring and each backend, the real traffic beside the ring
 * (docs/operations.md "Tracing decisions and top").  The view itself (rates, the ring's
 * shares and CV, the hot keys by Space-Saving) is top_view.c, which `keyrouter balance`
 * acts on; this file prints it.
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
#include "top_view.h"
#include "trace_out.h"
#include "util.h"


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
	"several rings share is marked '*' (its counter holds the packets of all of them).\n"
	"An `upgrade` keeps its maps: it goes on. After an `unload` or a new `load` it stops\n"
	"at the end of the round and exits 1 with a message: run it again.\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The traffic's CV over the ring's backends: r_i = traffic share / expected share. */
static double traffic_cv(const struct kr_top_svc *s, __u64 sum, __u64 total_points)
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

struct top {
	struct kr_top v;
	unsigned keys;		/* shown per backend */
	bool json;
};

static void show(struct top *tc, double dt, const struct kr_trace_stats *ts)
{
	struct kr_top *tp = &tc->v;
	json_t *root = tc->json ? json_object() : NULL, *jsvcs = tc->json ? json_array() : NULL;
	char tm[32], be[64], kp[KR_KEY_PRINT_MAX];
	time_t now = time(NULL);
	struct tm g;

	gmtime_r(&now, &g);
	strftime(tm, sizeof(tm), "%H:%M:%SZ", &g);
	if (!tc->json)
		printf("keyrouter top: instance %s, %s, interval %.1f s, trace 1 in %u (%llu "
		       "events, %llu lost)\n", tp->in->name, tm, dt, tp->sample,
		       (unsigned long long)tp->events, (unsigned long long)ts->lost);
	for (unsigned i = 0; i < tp->nsvc; i++) {
		struct kr_top_svc *s = &tp->svc[i];
		__u64 sum = 0, points = 0;
		json_t *js = NULL, *jbes = NULL;
		double tcv;

		for (unsigned j = 0; j < s->nbe; j++) {
			sum += s->be[j].pk1 - s->be[j].pk0;
			points += s->be[j].points;
		}
		tcv = traffic_cv(s, sum, points);
		if (tc->json) {
			js = json_pack("{s:s,s:s,s:s,s:f,s:f,s:f,s:f,s:f,s:f,s:b,s:s}", "service",
				       s->name, "vip", s->vip, "ring",
				       kr_trace_ring(tp->names, s->ring_id), "packets_per_s",
				       KR_TOP_DELTA(s, packets) / dt, "routed_per_s",
				       KR_TOP_DELTA(s, routed) / dt, "passed_per_s",
				       KR_TOP_DELTA(s, passed) / dt, "dropped_per_s",
				       KR_TOP_DELTA(s, dropped) / dt, "traffic_cv", tcv,
				       "ring_cv", s->ring_cv, "migrating", s->migrating, "verdict",
				       verdict_of(tcv, s->ring_cv, sum));
			jbes = json_array();
		} else {
			printf("service %s (%s) ring %s%s: %.1f packets/s (routed %.1f, passed %.1f, "
			       "dropped %.1f)\n", s->name, s->vip, kr_trace_ring(tp->names, s->ring_id),
			       s->migrating ? " (migrating: ring shares of the active slot)" : "",
			       KR_TOP_DELTA(s, packets) / dt,
			       KR_TOP_DELTA(s, routed) / dt,
			       KR_TOP_DELTA(s, passed) / dt,
			       KR_TOP_DELTA(s, dropped) / dt);
			printf("  traffic CV %.3f, ring CV %.3f: %s\n", tcv, s->ring_cv,
			       verdict_of(tcv, s->ring_cv, sum));
			printf("  %-24s %7s %11s %8s %8s  %s\n", "backend", "id", "packets/s", "traffic",
			       "ring", "hot keys (estimated packets/s)");
		}
		for (unsigned j = 0; j < s->nbe; j++) {
			struct kr_top_be *b = &s->be[j];
			__u64 d = b->pk1 - b->pk0;
			double tshare = sum ? (double)d / (double)sum : 0;
			double rshare = (double)b->space / (double)KR_AN_SPACE;
			unsigned nk = b->nss < tc->keys ? b->nss : tc->keys;
			json_t *jb = NULL, *jk = NULL;

			kr_top_sort(b);
			kr_trace_backend(tp->names, b->id, be, sizeof(be));
			if (tc->json) {
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
				const struct kr_top_counter *c = &b->ss[k];
				/* sampled counts -> packets/s of the interval */
				double est = (double)c->count * tp->sample / dt;

				kr_key_print((enum kr_key_type)s->key_type, c->key, c->len, kp,
					     sizeof(kp));
				if (tc->json)
					json_array_append_new(jk, json_pack("{s:s,s:f,s:I,s:I}", "key",
						kp, "packets_per_s", est, "sampled",
						(json_int_t)c->count, "error", (json_int_t)c->err));
				else
					printf("%s%s %.1f", k ? ", " : " ", kp, est);
			}
			if (tc->json) {
				json_object_set_new(jb, "hot_keys", jk);
				json_array_append_new(jbes, jb);
			} else {
				printf("\n");
			}
		}
		if (tc->json) {
			json_object_set_new(js, "backends", jbes);
			json_array_append_new(jsvcs, js);
		}
	}
	if (tc->json) {
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
	kr_top_reset(tp);	/* hot keys are per round */
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
	struct top tc = { .v = { .only = -1, .only_ring = -1, .sample = 100 }, .keys = 3 };
	struct kr_top *tp = &tc.v;
	struct kr_trace_stats ts1;
	struct kr_trace_ctl ctl = { 0 };
	struct kr_trace_session ses;
	struct kr_ops_trace *t = &ses.t;
	double ival = 2;
	uint32_t nrounds = 0, v;
	int first = kr_opts_parse(argc, argv, opts, &(struct kr_opts_cmd){ .help = usage_text,
									   .no_args = true });
	int rc = 1;

	if (first < 0)
		return kr_opts_status(first);
	tc.json = json;
	if (instance && pin_dir)
		return kr_usage_error("give --instance NAME or --pin-dir DIR, not both");
	if (sample && kr_parse_u32(sample, 1, &tp->sample))
		return kr_usage_error("bad --sample '%s': expected N >= 1 (1 in N packets)", sample);
	if (rounds && kr_parse_u32(rounds, 1, &nrounds))
		return kr_usage_error("bad --rounds '%s': expected N >= 1", rounds);
	if (keys) {
		if (kr_parse_u32(keys, 0, &v) || v > 16)
			return kr_usage_error("bad --keys '%s': expected 0..16", keys);
		tc.keys = v;
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
	tp->in = &ses.in;
	tp->m = &ses.m;
	tp->t = t;
	if (kr_trace_session_names(&ses))
		goto out;
	tp->names = ses.names;
	if (service) {
		tp->only = kr_ops_svc_find(&ses.in, service);
		if (tp->only < 0) {
			rc = kr_usage_error("no service '%s' in the instance ('keyrouter status' "
					    "lists them)", service);
			goto out;
		}
		ctl.flags |= KR_TRACE_F_SERVICE;
		ctl.stats_id = (__u32)tp->only;
	}
	if (kr_top_services_load(tp))
		goto out;
	ctl.sample = tp->sample;
	ctl.verdicts = 1u << KR_TV_ROUTED;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, on_signal);
	if (kr_top_start(tp, &ctl))
		goto out;
	for (uint32_t round = 0; !stop && (!nrounds || round < nrounds); round++) {
		double dt = kr_top_round(tp, ival, &stop, &ts1);

		if (kr_trace_session_lost(&ses, "top")) {
			rc = KR_EXIT_LOST;	/* nothing written to maps not the instance's */
			goto out;
		}
		show(&tc, dt, &ts1);
	}
	kr_ops_trace_stop(t);
	rc = 0;
out:
	kr_top_free(tp);
	kr_trace_session_close(&ses);
	return rc;
}

KR_COMMAND(top, "top", "live per service, ring and backend: traffic vs ring, hot keys", cmd_top);
