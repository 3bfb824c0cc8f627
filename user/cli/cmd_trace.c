// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter trace: sampled routing decisions from the data path (docs/operations.md
 * "Tracing decisions and top"). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "cmd.h"
#include "log.h"
#include "ops.h"
#include "opts.h"
#include "trace_out.h"
#include "util.h"

static const char usage_text[] =
	"Usage: keyrouter trace [--sample N] [--service NAME] [--backend B] [--verdict LIST]\n"
	"                       [--key-prefix KEY | --key-prefix-hex HEX] [--count N]\n"
	"                       [--duration SECONDS] [--json] [--instance NAME | --pin-dir DIR]\n"
	"       keyrouter trace --off | --status [--instance NAME | --pin-dir DIR]\n\n"
	"Routing decisions of the running data path, one line per packet (time, CPU, service,\n"
	"key as read and in hex, hash, ring, slot, generation and point, backend, failover\n"
	"steps, forwarding, verdict and why), from a BPF ring buffer. The trace is switched on\n"
	"at run time with the filters and the sampling given here (no reload), and off when\n"
	"this command ends; off, it costs the data path one load and a branch a packet. A\n"
	"trace whose command died switches itself off within 5 seconds. One trace (or top)\n"
	"per instance at a time.\n\n"
	"  -n, --sample N       1 in N of the matching packets, at random (default 1: all)\n"
	KR_TRACE_FILTER_HELP
	"  -C, --count N        stop after N events\n"
	"  -d, --duration S     stop after S seconds (default: until interrupted)\n"
	"  -j, --json           one JSON object per line (per event); a summary object last\n"
	"      --off            switch off a trace whose command is gone\n"
	"      --status         whether a trace is on, and the data path's trace figures\n\n"
	"At the end the figures go to standard error: events printed, packets that matched\n"
	"the filters, sampled, lost (the ring buffer was full: the reader is behind).\n"
	"An `upgrade` keeps the trace's maps: it goes on. After an `unload` or a new `load`\n"
	"it stops (within a poll, 50 ms) and exits 1 with a message: run it again.\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct trace_run {
	struct kr_trace_names *names;
	struct kr_ops_trace *t;
	bool json;
	unsigned long long count, printed;
};

static int on_event(void *ctx, const struct kr_trace_event *e)
{
	struct trace_run *r = ctx;

	if (r->count && r->printed >= r->count)
		return 1;
	if (r->json) {
		json_t *o = kr_trace_event_json(r->names, r->t, e);
		char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

		if (s)
			puts(s);
		free(s);
		json_decref(o);
	} else {
		kr_trace_event_text(stdout, r->names, r->t, e);
	}
	r->printed++;
	return r->count && r->printed >= r->count;
}

static void summary(const struct trace_run *r, const struct kr_trace_stats *s, bool json)
{
	if (json) {
		json_t *o = json_pack("{s:{s:I,s:I,s:I,s:I,s:I}}", "summary", "events",
				      (json_int_t)r->printed, "matched", (json_int_t)s->matched,
				      "sampled", (json_int_t)s->sampled, "lost",
				      (json_int_t)s->lost, "expired", (json_int_t)s->expired);
		char *txt = o ? json_dumps(o, JSON_COMPACT) : NULL;

		if (txt)
			puts(txt);
		free(txt);
		json_decref(o);
		return;
	}
	fflush(stdout);
	fprintf(stderr, "trace: %llu events; this session: matched %llu, sampled %llu, lost %llu\n",
		r->printed, (unsigned long long)s->matched, (unsigned long long)s->sampled,
		(unsigned long long)s->lost);
}

static int trace_status(struct kr_ops_trace *t)
{
	struct kr_trace_ctl c;
	struct kr_trace_stats s;

	if (kr_ops_trace_ctl_read(t, &c) || kr_ops_trace_stats(t, &s))
		return 1;
	printf("trace %s", c.on ? "on" : "off");
	if (c.on)
		printf(" (process %u, 1 in %u, filters:%s%s%s%s)", c.owner, c.sample ? c.sample : 1,
		       c.flags & KR_TRACE_F_SERVICE ? " service" : "",
		       c.flags & KR_TRACE_F_BACKEND ? " backend" : "", c.verdicts ? " verdict" : "",
		       c.prefix_len ? " key-prefix" : "");
	printf("; since load: matched %llu, sampled %llu, lost %llu, expired %llu\n",
	       (unsigned long long)s.matched, (unsigned long long)s.sampled,
	       (unsigned long long)s.lost, (unsigned long long)s.expired);
	return 0;
}

static int cmd_trace(int argc, char **argv)
{
	struct kr_trace_opts fo = { 0 };
	const char *instance = NULL, *pin_dir = NULL, *count = NULL, *duration = NULL;
	bool json = false, off = false, status = false;
	const struct kr_opt opts[] = {
		KR_OPT_STR("sample", 'n', &fo.sample),
		KR_OPT_STR("service", 's', &fo.service),
		KR_OPT_STR("backend", 'b', &fo.backend),
		KR_OPT_STR("verdict", 'V', &fo.verdict),
		KR_OPT_STR("key-prefix", 'k', &fo.key_prefix),
		KR_OPT_STR("key-prefix-hex", 0, &fo.key_prefix_hex),
		KR_OPT_STR("count", 'C', &count),
		KR_OPT_STR("duration", 'd', &duration),
		KR_OPT_FLAG("json", 'j', &json),
		KR_OPT_FLAG("off", 0, &off),
		KR_OPT_FLAG("status", 0, &status),
		KR_OPT_STR("instance", 'i', &instance),
		KR_OPT_STR("pin-dir", 'p', &pin_dir),
		KR_OPT_END
	};
	struct trace_run r = { 0 };
	struct kr_trace_ctl ctl;
	struct kr_trace_stats s0, s1;
	struct kr_trace_session ses;
	struct kr_ops_trace *t = &ses.t;
	struct kr_err err = { 0 };
	double until = 0;
	uint32_t n32;
	int first = kr_opts_parse(argc, argv, opts, &(struct kr_opts_cmd){ .help = usage_text,
									   .no_args = true });
	int rc = 1;

	if (first < 0)
		return kr_opts_status(first);
	if (instance && pin_dir)
		return kr_usage_error("give --instance NAME or --pin-dir DIR, not both");
	if (count) {
		if (kr_parse_u32(count, 1, &n32))
			return kr_usage_error("bad --count '%s': expected N >= 1", count);
		r.count = n32;
	}
	if (duration) {
		char *end;
		double d = strtod(duration, &end);

		if (*end || !(d > 0) || d > 86400 * 365)
			return kr_usage_error("bad --duration '%s': expected seconds > 0", duration);
		until = kr_trace_mono_s() + d;
	}
	if (off && status)
		return kr_usage_error("give --off or --status, not both");
	if (kr_trace_session_open(&ses, instance, pin_dir))
		return 1;
	if (off || status) {
		rc = status ? trace_status(t) : kr_ops_trace_off(t) ? 1 : 0;
		if (off && !rc)
			printf("trace of instance %s: off\n", ses.in.name);
		goto out;
	}
	if (kr_trace_session_names(&ses))
		goto out;
	if (kr_trace_ctl_build(&fo, ses.names, &ctl, &err)) {
		rc = kr_usage_error("%s", err.msg);
		goto out;
	}
	r.names = ses.names;
	r.t = t;
	r.json = json;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, on_signal);
	kr_ops_trace_stats(t, &s0);
	if (kr_ops_trace_start(t, &ctl, on_event, &r))
		goto out;
	while (!stop && !(r.count && r.printed >= r.count) &&
	       !(until && kr_trace_mono_s() >= until)) {
		int n = kr_ops_trace_poll(t, 50);

		if (n < 0 && n != -EINTR) {
			pr_warn("keyrouter: reading the trace: %s\n", strerror(-n));
			break;
		}
		if (!json)
			fflush(stdout);
		if (kr_trace_session_lost(&ses, "trace"))
			break;
	}
	if (ses.lost) {		/* nothing written to maps that are not the instance's */
		rc = KR_EXIT_LOST;
		goto out;
	}
	kr_ops_trace_stop(t);
	kr_ops_trace_stats(t, &s1);
	s1.matched -= s0.matched;
	s1.sampled -= s0.sampled;
	s1.lost -= s0.lost;
	s1.expired -= s0.expired;
	summary(&r, &s1, json);
	rc = 0;
out:
	kr_trace_session_close(&ses);
	return rc;
}

KR_COMMAND(trace, "trace", "sampled routing decisions of the running data path", cmd_trace);
