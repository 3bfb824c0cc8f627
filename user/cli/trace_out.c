// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What `trace` and `top` share (trace_out.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include "addr.h"
#include "keyform.h"
#include "log.h"
#include "ops_backends.h"
#include "ops_svcstats.h"
#include "trace_out.h"
#include "util.h"

double kr_trace_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int kr_trace_session_open(struct kr_trace_session *s, const char *instance, const char *pin_dir)
{
	memset(s, 0, sizeof(*s));
	if (kr_ops_inst_open_reader(&s->in, instance, pin_dir))
		return 1;
	s->stage = 1;
	if (kr_ops_maps_open(&s->in, &s->m)) {
		kr_trace_session_close(s);
		return 1;
	}
	s->stage = 2;
	if (kr_ops_trace_open(&s->in, &s->t)) {
		kr_trace_session_close(s);
		return 1;
	}
	s->stage = 3;
	kr_follow_init(&s->follow, s->in.dir);
	return 0;
}

int kr_trace_session_lost(struct kr_trace_session *s, const char *who)
{
	enum kr_follow_change c;

	if (s->lost)
		return 1;
	c = kr_follow_round(&s->follow);
	if (c == KR_FOLLOW_SAME || c == KR_FOLLOW_UPGRADED)
		return 0;
	s->lost = true;
	pr_warn("keyrouter: %s: instance '%s' %s: the maps it read are not the instance's any "
		"more; stopping (run it again%s)\n", who, s->in.name, c == KR_FOLLOW_GONE ?
		"was unloaded" : "was loaded again", c == KR_FOLLOW_GONE ? " once it is loaded" :
		"; a unit restarts it");
	return 1;
}

int kr_trace_session_names(struct kr_trace_session *s)
{
	s->names = calloc(1, sizeof(*s->names));
	if (!s->names)
		return 1;
	return kr_trace_names_load(s->names, &s->in, &s->m) ? 1 : 0;
}

void kr_trace_session_close(struct kr_trace_session *s)
{
	if (s->names)
		kr_trace_names_free(s->names);
	free(s->names);
	s->names = NULL;
	if (s->stage >= 3)
		kr_ops_trace_close(&s->t);
	if (s->stage >= 2)
		kr_ops_maps_close(&s->m);
	if (s->stage >= 1)
		kr_ops_inst_close(&s->in);
	s->stage = 0;
}

static void names_read(struct kr_trace_names *n)
{
	int fd = kr_ops_map_open(n->in, KR_MAP_SVC_NAMES, true);
	struct kr_backend *be = NULL;

	for (__u32 id = 0; fd >= 0 && id < KR_MAX_SVC_STATS; id++) {
		struct kr_svc_name e = { 0 };
		struct kr_service s;

		if (bpf_map_lookup_elem(fd, &id, &e) || !e.name[0])
			continue;
		snprintf(n->svc[id], sizeof(n->svc[id]), "%.*s", KR_SVC_NAME_MAX - 1, e.name);
		if (!bpf_map_lookup_elem(n->m->services, &e.key, &s))
			n->svc_key_type[id] = s.key_type;
	}
	if (fd >= 0)
		close(fd);
	for (__u32 id = 0; id < KR_MAX_RINGS; id++) {
		struct kr_ops_ring r;

		if (!kr_ops_ring_get(n->in, id, &r))
			snprintf(n->ring[id], sizeof(n->ring[id]), "%s", r.name);
	}
	if (!kr_ops_backends_read(n->m, &be)) {
		free(n->be);
		n->be = be;
	}
	n->loaded_at = kr_trace_mono_s();
}

int kr_trace_names_load(struct kr_trace_names *n, const struct kr_inst *in,
			const struct kr_ops_maps *m)
{
	memset(n, 0, sizeof(*n));
	n->in = in;
	n->m = m;
	names_read(n);
	return 0;
}

void kr_trace_names_free(struct kr_trace_names *n)
{
	free(n->be);
	n->be = NULL;
}

/* An id without a name: read the names again (at most once a second). */
static void names_refresh(struct kr_trace_names *n)
{
	if (kr_trace_mono_s() - n->loaded_at >= 1.0)
		names_read(n);
}

const char *kr_trace_service(struct kr_trace_names *n, __u32 id)
{
	if (id >= KR_MAX_SVC_STATS)
		return "?";
	if (!n->svc[id][0] && id)
		names_refresh(n);
	if (!n->svc[id][0])
		snprintf(n->svc[id], sizeof(n->svc[id]), id ? "#%u" : "(unnamed)", id);
	return n->svc[id];
}

const char *kr_trace_ring(struct kr_trace_names *n, __u32 id)
{
	if (id >= KR_MAX_RINGS)
		return "?";
	if (!n->ring[id][0])
		names_refresh(n);
	if (!n->ring[id][0])
		snprintf(n->ring[id], sizeof(n->ring[id]), "#%u", id);
	return n->ring[id];
}

const char *kr_trace_backend(struct kr_trace_names *n, __u32 id, char *buf, size_t len)
{
	struct kr_sockaddr sa = { 0 };
	char a[KR_SOCKADDR_STRLEN];

	if (n->be && id < n->m->backends_max && !n->be[id].family)
		names_refresh(n);
	if (!n->be || id >= n->m->backends_max || !n->be[id].family) {
		snprintf(buf, len, "#%u", id);
		return buf;
	}
	sa.family = n->be[id].family;
	sa.port = ntohs(n->be[id].port);
	memcpy(sa.ip, n->be[id].addr, 16);
	kr_sockaddr_format(&sa, a);
	snprintf(buf, len, "%s", a);
	return buf;
}

const char *kr_trace_verdict_name(unsigned v)
{
	return v == KR_TV_ROUTED ? "routed" : v == KR_TV_PASSED ? "passed" :
	       v == KR_TV_DROPPED ? "dropped" : "?";
}

const char *kr_trace_why_name(unsigned why, unsigned ring_rc)
{
	static const char *const rc[] = { "routed", "no_ring", "bad_image", "all_down",
					  "walk_limit" };

	switch (why) {
	case KR_TW_ROUTED:
		return "ring";
	case KR_TW_QUIC_LB:
		return "quic_lb";
	case KR_TW_NO_KEY:
		return "no_key";
	case KR_TW_KEY_TOO_LONG:
		return "key_too_long";
	case KR_TW_NO_ROUTE:
		return ring_rc < sizeof(rc) / sizeof(rc[0]) ? rc[ring_rc] : "no_route";
	case KR_TW_FWD_ERROR:
		return "fwd_error";
	case KR_TW_BAD_SERVICE:
		return "bad_service";
	case KR_TW_FWD_DROP:
		return "fwd_drop";
	default:
		return "?";
	}
}

static int verdicts_parse(const char *s, __u32 *mask, struct kr_err *err)
{
	char *dup = strdup(s), *save = NULL, *w;

	if (!dup)
		return kr_errf(err, "out of memory");
	*mask = 0;
	for (w = strtok_r(dup, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		unsigned v = !strcmp(w, "routed") ? KR_TV_ROUTED : !strcmp(w, "passed") ?
			     KR_TV_PASSED : !strcmp(w, "dropped") ? KR_TV_DROPPED : 0;

		if (!v) {
			kr_errf(err, "bad --verdict '%s': expected routed, passed, dropped "
				"(comma-separated)", w);
			free(dup);
			return -1;
		}
		*mask |= 1u << v;
	}
	free(dup);
	return *mask ? 0 : kr_errf(err, "bad --verdict '%s': expected routed, passed, dropped", s);
}

static int backend_parse(struct kr_trace_names *n, const char *s, __u32 *id,
			 struct kr_err *err)
{
	struct kr_sockaddr sa;
	struct kr_err e2 = { 0 };

	if (!kr_parse_u32(s, 0, id))
		return 0;
	if (kr_sockaddr_parse(s, &sa, &e2))
		return kr_errf(err, "bad --backend '%s': expected ADDR:PORT or a backend id (%s)",
			       s, e2.msg);
	for (__u32 i = 0; n->be && i < n->m->backends_max; i++) {
		const struct kr_backend *b = &n->be[i];

		if (b->family == sa.family && ntohs(b->port) == sa.port &&
		    !memcmp(b->addr, sa.ip, 16) && b->state != KR_BACKEND_UNUSED) {
			*id = i;
			return 0;
		}
	}
	return kr_errf(err, "no backend %s in the instance ('keyrouter status' lists them)", s);
}

static int prefix_parse(const struct kr_trace_opts *o, struct kr_trace_names *n, __u32 sid,
			struct kr_trace_ctl *ctl, struct kr_err *err)
{
	struct kr_key k = { 0 };
	struct kr_err e = { "" };

	if (o->key_prefix_hex) {
		long len = kr_hex_decode(o->key_prefix_hex, k.b, sizeof(k.b), &e);

		if (len < 0)
			return kr_errf(err, "bad --key-prefix-hex: %.256s", e.msg);
		k.len = (uint32_t)len;
	} else if (o->service && n->svc_key_type[sid]) {
		enum kr_key_type kt = (enum kr_key_type)n->svc_key_type[sid];

		if (kr_keyform(kt, NULL, o->key_prefix, &k, &e))
			return kr_errf(err, "bad --key-prefix for a %s key: %.256s",
				       kr_key_type_name(kt), e.msg);
		if (kt == KR_KEY_DNS && k.len > 1)	/* leading labels: not the end */
			k.len--;
	} else {
		k.len = (uint32_t)strlen(o->key_prefix);
		if (k.len > sizeof(k.b))
			k.len = sizeof(k.b);
		memcpy(k.b, o->key_prefix, k.len);
	}
	if (!k.len || k.len > KR_TRACE_PREFIX_MAX)
		return kr_errf(err, "bad key prefix: %u bytes, expected 1..%d", k.len,
			       KR_TRACE_PREFIX_MAX);
	ctl->prefix_len = k.len;
	memcpy(ctl->prefix, k.b, k.len);
	return 0;
}

int kr_trace_ctl_build(const struct kr_trace_opts *o, struct kr_trace_names *n,
		       struct kr_trace_ctl *ctl, struct kr_err *err)
{
	__u32 sid = 0;

	memset(ctl, 0, sizeof(*ctl));
	ctl->sample = 1;
	if (o->sample && kr_parse_u32(o->sample, 1, &ctl->sample))
		return kr_errf(err, "bad --sample '%s': expected N >= 1 (1 in N packets)",
			       o->sample);
	if (o->service) {
		int id = kr_ops_svc_find(n->in, o->service);

		if (id < 0)
			return kr_errf(err, "no service '%s' in the instance (its names come from "
				       "'keyrouter apply'; 'keyrouter status' lists them)",
				       o->service);
		sid = (__u32)id;
		ctl->flags |= KR_TRACE_F_SERVICE;
		ctl->stats_id = sid;
	}
	if (o->backend) {
		if (backend_parse(n, o->backend, &ctl->backend_id, err))
			return -1;
		ctl->flags |= KR_TRACE_F_BACKEND;
	}
	if (o->verdict && verdicts_parse(o->verdict, &ctl->verdicts, err))
		return -1;
	if (o->key_prefix && o->key_prefix_hex)
		return kr_errf(err, "give --key-prefix or --key-prefix-hex, not both");
	if ((o->key_prefix || o->key_prefix_hex) && prefix_parse(o, n, sid, ctl, err))
		return -1;
	return 0;
}

static const char *fwd_name(unsigned m)
{
	return m == KR_FWD_L2 ? "l2" : m == KR_FWD_IPIP ? "ipip" : "?";
}

static void key_texts(const struct kr_trace_event *e, char *print, char *hex)
{
	struct kr_key k = { .len = e->key_len };

	memcpy(k.b, e->key, k.len);
	kr_key_print((enum kr_key_type)e->key_type, e->key, e->key_len, print, KR_KEY_PRINT_MAX);
	kr_key_hex(&k, hex, 2 * KR_MAX_KEY_LEN + 1);
}

static void time_text(const struct kr_ops_trace *t, __u64 ts, char *buf, size_t len)
{
	__u64 w = kr_ops_trace_wall_ns(t, ts);
	time_t sec = (time_t)(w / 1000000000ull);
	struct tm tm;
	char hms[16];

	gmtime_r(&sec, &tm);
	strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06lluZ", hms, (unsigned long long)(w % 1000000000ull / 1000));
}

void kr_trace_event_text(FILE *f, struct kr_trace_names *n, const struct kr_ops_trace *t,
			 const struct kr_trace_event *e)
{
	char print[KR_KEY_PRINT_MAX], hex[2 * KR_MAX_KEY_LEN + 1], tm[32], be[64];
	bool routed = e->verdict == KR_TV_ROUTED;

	key_texts(e, print, hex);
	time_text(t, e->ts_ns, tm, sizeof(tm));
	fprintf(f, "%s cpu%u %s key %s (%s) hash %08x", tm, e->cpu,
		kr_trace_service(n, e->stats_id), print, hex, e->key_hash);
	if (e->why == KR_TW_QUIC_LB)
		fprintf(f, " quic-lb");
	else if (e->key_len || e->why == KR_TW_ROUTED || e->why == KR_TW_NO_ROUTE)
		fprintf(f, " ring %s slot %u gen %llu point %u", kr_trace_ring(n, e->ring_id),
			e->slot, (unsigned long long)e->generation, e->point);
	if (routed || e->why == KR_TW_FWD_ERROR || e->why == KR_TW_FWD_DROP) {
		fprintf(f, " -> %s (id %u) walk %u", kr_trace_backend(n, e->backend_id, be,
								       sizeof(be)),
			e->backend_id, e->walk);
		/* a key that spilled, a hot key's replica (the walk's failover shows in walk) */
		if (e->route_flags & KR_TRACE_RF_SPILLED)
			fprintf(f, " spilled");
		if (e->route_flags & KR_TRACE_RF_REPLICA)
			fprintf(f, " replica %u", (e->route_flags >> KR_TRACE_RF_REPLICA_SHIFT) & 15);
		fprintf(f, " %s", fwd_name(e->fwd_mode));
	}
	fprintf(f, " %s %s\n", kr_trace_verdict_name(e->verdict),
		kr_trace_why_name(e->why, e->ring_rc));
}

json_t *kr_trace_event_json(struct kr_trace_names *n, const struct kr_ops_trace *t,
			    const struct kr_trace_event *e)
{
	char print[KR_KEY_PRINT_MAX], hex[2 * KR_MAX_KEY_LEN + 1], tm[32], be[64], h[16];
	__u64 w = kr_ops_trace_wall_ns(t, e->ts_ns);
	json_t *o = json_object();

	if (!o)
		return NULL;
	key_texts(e, print, hex);
	time_text(t, e->ts_ns, tm, sizeof(tm));
	snprintf(h, sizeof(h), "%08x", e->key_hash);
	json_object_set_new(o, "time", json_string(tm));
	json_object_set_new(o, "time_s", json_real((double)w / 1e9));
	json_object_set_new(o, "cpu", json_integer(e->cpu));
	json_object_set_new(o, "service", json_string(kr_trace_service(n, e->stats_id)));
	json_object_set_new(o, "service_id", json_integer(e->stats_id));
	json_object_set_new(o, "key", json_string(print));
	json_object_set_new(o, "key_hex", json_string(e->key_len ? hex : ""));
	json_object_set_new(o, "key_len", json_integer(e->key_len));
	json_object_set_new(o, "hash", json_string(h));
	json_object_set_new(o, "ring", json_string(kr_trace_ring(n, e->ring_id)));
	json_object_set_new(o, "ring_id", json_integer(e->ring_id));
	json_object_set_new(o, "slot", json_integer(e->slot));
	json_object_set_new(o, "generation", json_integer((json_int_t)e->generation));
	json_object_set_new(o, "point", json_integer(e->point));
	json_object_set_new(o, "first_point", json_integer(e->first_point));
	json_object_set_new(o, "walk", json_integer(e->walk));
	json_object_set_new(o, "failover", json_boolean(e->route_flags & KR_TRACE_RF_FAILOVER));
	json_object_set_new(o, "spilled", json_boolean(e->route_flags & KR_TRACE_RF_SPILLED));
	json_object_set_new(o, "replica", e->route_flags & KR_TRACE_RF_REPLICA ?
			    json_integer((e->route_flags >> KR_TRACE_RF_REPLICA_SHIFT) & 15) :
			    json_null());
	json_object_set_new(o, "backend_id", json_integer(e->backend_id));
	json_object_set_new(o, "backend", e->verdict == KR_TV_ROUTED ?
			    json_string(kr_trace_backend(n, e->backend_id, be, sizeof(be))) :
			    json_null());
	json_object_set_new(o, "forward", json_string(fwd_name(e->fwd_mode)));
	json_object_set_new(o, "verdict", json_string(kr_trace_verdict_name(e->verdict)));
	json_object_set_new(o, "reason", json_string(kr_trace_why_name(e->why, e->ring_rc)));
	json_object_set_new(o, "frame_len", json_integer(e->frame_len));
	return o;
}
