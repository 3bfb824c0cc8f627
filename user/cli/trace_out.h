/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What `keyrouter trace` and `keyrouter top` share: the filter options (--service,
 * --backend, --verdict, --key-prefix, --sample) turned into a kr_trace_ctl, the names of
 * services, rings and backends for the events, and one event as a text line or JSON.
 */
#ifndef KR_TRACE_OUT_H
#define KR_TRACE_OUT_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>
#include "err.h"
#include "ops_kernel.h"
#include "ops_trace.h"
#include "follow.h"

/* The filter options as given. */
struct kr_trace_opts {
	const char *service, *backend, *verdict, *key_prefix, *key_prefix_hex, *sample;
};

/* Names of what the events number, read from the pins (again when an event names an id
 * not seen yet, at most once a second). */
struct kr_trace_names {
	const struct kr_inst *in;
	const struct kr_ops_maps *m;
	char svc[KR_MAX_SVC_STATS][KR_SVC_NAME_MAX];
	__u8 svc_key_type[KR_MAX_SVC_STATS];
	char ring[KR_MAX_RINGS][KR_NAME_MAX];
	struct kr_backend *be;		/* [m->backends_max] */
	double loaded_at;
};

int kr_trace_names_load(struct kr_trace_names *n, const struct kr_inst *in,
			const struct kr_ops_maps *m);
void kr_trace_names_free(struct kr_trace_names *n);
/* Backend id -> "10.0.0.2:53" ("#ID" when unknown). */
const char *kr_trace_backend(struct kr_trace_names *n, __u32 id, char *buf, size_t len);
const char *kr_trace_service(struct kr_trace_names *n, __u32 id);
const char *kr_trace_ring(struct kr_trace_names *n, __u32 id);

/* What trace and top open: the instance (no lock), its maps, the trace maps, the names. */
struct kr_trace_session {
	struct kr_inst in;
	struct kr_ops_maps m;
	struct kr_ops_trace t;
	struct kr_trace_names *names;	/* NULL until kr_trace_session_names() */
	int stage;			/* what is open, for the close */
	struct kr_follow follow;	/* the instance's generation when it was opened */
	bool lost;			/* the maps are not the instance's any more */
};
/* 0, or 1 with the message printed (nothing left open). */
int kr_trace_session_open(struct kr_trace_session *s, const char *instance, const char *pin_dir);
int kr_trace_session_names(struct kr_trace_session *s);
void kr_trace_session_close(struct kr_trace_session *s);
/* trace, top and balance hold the instance's maps while they run and do not reopen them
 * (their services, names and trace would all be another instance's): between rounds (two
 * pins opened and closed again), 0 while the maps are the instance's (an upgrade keeps them), else 1
 * with a message -- unloaded, or loaded again -- and the caller stops without writing them
 * and exits KR_EXIT_LOST (for its unit to restart it). */
int kr_trace_session_lost(struct kr_trace_session *s, const char *who);
#define KR_EXIT_LOST 1
/* CLOCK_MONOTONIC in seconds (the events' clock is the same). */
double kr_trace_mono_s(void);

/* The options -> ctl (sample, filters).  -1 with err set for a bad value. */
int kr_trace_ctl_build(const struct kr_trace_opts *o, struct kr_trace_names *n,
		       struct kr_trace_ctl *ctl, struct kr_err *err);

/* One event: a text line (tcpdump-like) / a JSON object. */
void kr_trace_event_text(FILE *f, struct kr_trace_names *n, const struct kr_ops_trace *t,
			 const struct kr_trace_event *e);
json_t *kr_trace_event_json(struct kr_trace_names *n, const struct kr_ops_trace *t,
			    const struct kr_trace_event *e);

const char *kr_trace_verdict_name(unsigned v);
const char *kr_trace_why_name(unsigned why, unsigned ring_rc);

/* The help of the filter options (both commands). */
#define KR_TRACE_FILTER_HELP                                                              \
	"  -s, --service NAME   only packets of the service NAME (the config's name)\n"   \
	"  -b, --backend B      only packets routed to backend B: ADDR:PORT, or its id\n"  \
	"  -V, --verdict LIST   only these verdicts: routed, passed, dropped (comma-\n"    \
	"                       separated)\n"                                             \
	"  -k, --key-prefix KEY only keys that start with KEY, in the key form of the\n"   \
	"                       --service's key type (dns: leading labels, \"www.example\";\n" \
	"                       without --service: the bytes of KEY); at most 32 bytes\n"  \
	"      --key-prefix-hex HEX   the same as hex bytes\n"                            \
	"  -i, --instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default \"default\")\n" \
	"  -p, --pin-dir DIR    maps pinned in DIR instead\n"

#endif
