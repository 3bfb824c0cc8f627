// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The health checker's state in status (health_out.h). */
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include "health.h"
#include "health_out.h"
#include "json_out.h"
#include "ops_report.h"

bool kr_health_checker_alive(const struct kr_health_ck *ck, __u64 now_ns)
{
	__u64 stale = 3ull * (ck->beat_ms ? ck->beat_ms : 1000) * 1000000ull;

	return ck->pid && ck->beat_ns && now_ns >= ck->beat_ns && now_ns - ck->beat_ns <= stale;
}

/* The checker's watchdog: how often it looks, the re-attaches it did. */
static void show_watchdog(const struct kr_health_maps *h, json_t *o)
{
	struct kr_health_wd wd = {};
	__u32 zero = 0;
	char t[32];

	if (h->wd < 0 || bpf_map_lookup_elem(h->wd, &zero, &wd) || !wd.checks)
		return;
	kr_ops_fmt_time(wd.last_ns, t, sizeof(t));
	if (o)
		json_object_set_new(o, "watchdog", json_pack(
			"{s:o,s:o,s:o,s:o}",
			"interval_s", kr_json_fixed(wd.interval_ms / 1000.0, 3),
			"reattach_total", kr_json_u64(wd.reattach_total), "failed_total",
			kr_json_u64(wd.failed_total), "last_reattach",
			wd.last_ns ? json_string(t) : json_null()));
	else
		printf("health watchdog: every %.3g s, %llu re-attaches%s%s%s\n",
		       wd.interval_ms / 1000.0, (unsigned long long)wd.reattach_total,
		       wd.last_ns ? " (last " : "", wd.last_ns ? t : "", wd.last_ns ? ")" : "");
}

/* A backend's flap damping: "damping":{...} in o, or its part of the indented line. */
static void show_damp(const struct kr_health_maps *h, __u32 id, json_t *o)
{
	struct kr_health_damp d = {};
	char t[32];

	if (h->damp < 0 || id >= h->max || bpf_map_lookup_elem(h->damp, &id, &d) || !d.suppress)
		return;
	kr_ops_fmt_time(d.held_until_ns, t, sizeof(t));
	if (o) {
		json_object_set_new(o, "damping", json_pack(
			"{s:I,s:I,s:b,s:o,s:I,s:I}", "penalty", (json_int_t)d.penalty, "flaps",
			(json_int_t)d.flaps, "held", d.held_until_ns != 0, "held_until",
			d.held_until_ns ? json_string(t) : json_null(), "suppress",
			(json_int_t)d.suppress, "reuse", (json_int_t)d.reuse));
		return;
	}
	if (d.held_until_ns)
		printf(", HELD DOWN by flap damping until about %s (penalty %u, %u flaps)", t,
		       d.penalty, d.flaps);
	else if (d.flaps)
		printf(", flaps %u (damping penalty %u, held above %u)", d.flaps, d.penalty,
		       d.suppress);
}

void kr_health_show_checker(const struct kr_inst *in, const struct kr_health_maps *h, json_t *o)
{
	struct kr_health_ck ck = {};
	__u64 now = kr_health_now_ns();
	__u32 zero = 0;
	char t[32], b[32];
	json_t *rings;
	bool alive;

	if (h->ck < 0 || bpf_map_lookup_elem(h->ck, &zero, &ck) || !ck.started_ns)
		return;
	rings = o ? json_array() : NULL;
	alive = kr_health_checker_alive(&ck, now);
	kr_ops_fmt_time(ck.started_ns, t, sizeof(t));
	kr_ops_fmt_time(ck.beat_ns, b, sizeof(b));
	if (o)
		json_object_set_new(o, "health_checker", json_pack(
			"{s:b,s:I,s:s,s:s,s:o,s:I}", "running", alive, "pid", (json_int_t)ck.pid,
			"started", t, "heartbeat", b, "heartbeat_age_s",
			kr_json_fixed(now >= ck.beat_ns ? (now - ck.beat_ns) / 1e9 : 0.0, 3),
			"backends", (json_int_t)ck.targets));
	else if (alive)
		printf("health checker: running, pid %u, %u backends checked, started %s, "
		       "heartbeat %.1f s ago\n", ck.pid, ck.targets, t, (now - ck.beat_ns) / 1e9);
	else
		printf("health checker: NOT RUNNING (%s; last heartbeat %s): states stay as they "
		       "are, nothing is probed (systemctl status keyrouter-health@%s)\n",
		       ck.pid ? "no heartbeat: killed or hung" : "stopped", b, in->name);
	show_watchdog(h, o ? json_object_get(o, "health_checker") : NULL);
	for (__u32 id = 0; h->rings >= 0 && id < KR_MAX_RINGS; id++) {
		struct kr_health_ring r;
		struct kr_ops_ring meta;

		if (bpf_map_lookup_elem(h->rings, &id, &r) || !r.total ||
		    kr_ops_ring_get(in, id, &meta) || !meta.name[0])
			continue;
		kr_ops_fmt_time(r.since_ns, t, sizeof(t));
		if (o)
			json_array_append_new(rings, json_pack(
				"{s:s,s:b,s:o,s:I,s:I,s:I,s:o}", "ring", meta.name, "panic", r.panic,
				"since", r.panic ? json_string(t) : json_null(), "up", (json_int_t)r.up,
				"checked", (json_int_t)r.total, "held", (json_int_t)r.held,
				"panic_threshold", kr_json_fixed(r.threshold_pm / 1000.0, 3)));
		else if (r.panic)
			printf("health: PANIC in ring %s since %s: %u of %u checked backends up; %u "
			       "failing backend%s kept up by the panic threshold %.2f\n", meta.name, t,
			       r.up, r.total, r.held, r.held == 1 ? "" : "s", r.threshold_pm / 1000.0);
	}
	if (o)
		json_object_set_new(o, "health_rings", rings);
}

void kr_health_show_backend(const struct kr_health_maps *h, __u32 id, const struct kr_backend *be,
			    json_t *o)
{
	struct kr_health_set s = {};
	struct kr_health_be f = {};
	bool has_set, has_fig;
	char t[32];

	has_set = h->set >= 0 && id < h->max && !bpf_map_lookup_elem(h->set, &id, &s) &&
		  s.since_ns && s.state == be->state && s.owner == kr_backend_owner(be);
	has_fig = h->be >= 0 && id < h->max && !bpf_map_lookup_elem(h->be, &id, &f) &&
		  (f.flags & KR_HEALTH_F_CHECKED);
	kr_ops_fmt_time(has_set ? s.since_ns : 0, t, sizeof(t));
	if (o) {
		json_object_set_new(o, "owner",
				    json_string(kr_backend_owner_name(kr_backend_owner(be))));
		json_object_set_new(o, "since", has_set ? json_string(t) : json_null());
		if (has_set)
			json_object_set_new(o, "since_unix",
					    json_real((double)(s.since_ns / 1000000ull) / 1e3));
		if (has_fig)
			json_object_set_new(o, "health", json_pack(
				"{s:s,s:o,s:o,s:o,s:o,s:b,s:b,s:b}", "probe", kr_probe_name(f.probe),
				"probes", kr_json_u64(f.probes), "failed", kr_json_u64(f.failed),
				"rtt_ms", kr_json_fixed(f.rtt_us / 1000.0, 3), "transitions",
				kr_json_u64(f.transitions), "failing", !!(f.flags & KR_HEALTH_F_FAILING),
				"held_by_panic", !!(f.flags & KR_HEALTH_F_HELD), "left_alone",
				!!(f.flags & KR_HEALTH_F_OVERRIDE)));
		if (has_fig)
			show_damp(h, id, json_object_get(o, "health"));
		return;
	}
	if (!has_set && !has_fig && kr_backend_owner(be) == KR_OWNER_CONFIG)
		return;
	printf("  state set by %s", kr_backend_owner_name(kr_backend_owner(be)));
	if (has_set)
		printf(" since %s", t);
	if (has_fig)
		printf("; %s probes %llu, failed %llu, last rtt %.3f ms, transitions %llu%s%s%s",
		       kr_probe_name(f.probe), (unsigned long long)f.probes,
		       (unsigned long long)f.failed, f.rtt_us / 1000.0,
		       (unsigned long long)f.transitions,
		       f.flags & KR_HEALTH_F_FAILING ? ", failing" : "",
		       f.flags & KR_HEALTH_F_HELD ? ", kept up by the panic threshold" : "",
		       f.flags & KR_HEALTH_F_OVERRIDE ? ", left alone by the checker" : "");
	if (has_fig)
		show_damp(h, id, NULL);
	printf("\n");
}
