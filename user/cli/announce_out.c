// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `keyrouter announce` in status and check (announce_out.h). */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "announce.h"
#include "announce_out.h"
#include "json_out.h"
#include "ops_report.h"

static void vip_ip(const struct kr_announce_vip *v, char *ip)
{
	inet_ntop(v->family == 4 ? AF_INET : AF_INET6, v->ip, ip, INET6_ADDRSTRLEN);
}

static json_t *time_or_null(__u64 ns)
{
	char t[32];

	if (!ns)
		return json_null();
	kr_ops_fmt_time(ns, t, sizeof(t));
	return json_string(t);
}

static void show_json(const struct kr_announce_view *v, json_t *o)
{
	json_t *vips = json_array(), *bgp = json_array();

	for (__u32 i = 0; i < v->ck.nvips && i < KR_VIP_MAX; i++) {
		const struct kr_announce_vip *a = &v->vip[i];
		char ip[INET6_ADDRSTRLEN];

		vip_ip(a, ip);
		json_array_append_new(vips, json_pack(
			"{s:s,s:s,s:s,s:I,s:I,s:I,s:o}", "vip", ip, "route",
			kr_vip_route_name(a->route), "reason", kr_vip_why_name(a->why),
			"backends_up", (json_int_t)a->up, "backends", (json_int_t)a->total,
			"min_up", (json_int_t)a->min_up, "since", time_or_null(a->since_ns)));
	}
	for (__u32 i = 0; i < v->ck.nsessions && i < KR_ANNOUNCE_MAX_BGP; i++)
		json_array_append_new(bgp, json_pack("{s:s,s:s,s:s}", "name", v->bgp[i].name,
						     "state", v->bgp[i].state, "info",
						     v->bgp[i].info));
	json_object_set_new(o, "announce", json_pack(
		"{s:b,s:I,s:o,s:b,s:b,s:o,s:s,s:o,s:o}", "running", v->running, "pid",
		(json_int_t)v->ck.pid, "heartbeat", time_or_null(v->ck.beat_ns), "drained",
		(int)v->ctl.drain, "bird_ok", (int)v->ck.bird_ok, "bird_error",
		v->ck.bird_error[0] ? json_string(v->ck.bird_error) : json_null(), "last_change",
		time_or_null(v->ck.change_ns), "vips", vips, "bgp_sessions", bgp));
}

static void show_text(const struct kr_inst *in, const struct kr_announce_view *v)
{
	char t[32];

	kr_ops_fmt_time(v->ck.beat_ns, t, sizeof(t));
	if (v->running)
		printf("announce: running, pid %u, %u VIPs%s%s%s\n", v->ck.pid, v->ck.nvips,
		       v->ctl.drain ? ", DRAINED" : "", v->ck.bird_ok ? "" : "; BIRD: ",
		       v->ck.bird_ok ? "" : v->ck.bird_error);
	else
		printf("announce: NOT RUNNING (%s; last round %s): the routes stay as BIRD has "
		       "them (systemctl status keyrouter-announce@%s)\n",
		       v->ck.pid ? "no heartbeat: killed or hung" : "stopped", t, in->name);
	for (__u32 i = 0; i < v->ck.nvips && i < KR_VIP_MAX; i++) {
		const struct kr_announce_vip *a = &v->vip[i];
		char ip[INET6_ADDRSTRLEN];

		vip_ip(a, ip);
		kr_ops_fmt_time(a->since_ns, t, sizeof(t));
		printf("  vip %-39s %-9s (%s) backends up %u of %u (min %u), since %s\n", ip,
		       kr_vip_route_name(a->route), kr_vip_why_name(a->why), a->up, a->total,
		       a->min_up, a->since_ns ? t : "the announcer's start");
	}
	for (__u32 i = 0; i < v->ck.nsessions && i < KR_ANNOUNCE_MAX_BGP; i++)
		printf("  bgp %-20s %-6s %s\n", v->bgp[i].name, v->bgp[i].state, v->bgp[i].info);
}

void kr_announce_show(const struct kr_inst *in, json_t *o)
{
	struct kr_announce_view v;

	if (kr_announce_view_read(in, &v) || !v.present)
		return;
	if (o)
		show_json(&v, o);
	else
		show_text(in, &v);
}

int kr_announce_check(const struct kr_inst *in, char *msg, size_t len)
{
	struct kr_announce_view v;
	size_t o = 0;

	msg[0] = 0;
	if (kr_announce_view_read(in, &v) || !v.present)
		return 0;
	if (!v.running)
		o += (size_t)snprintf(msg + o, len - o, "announcer not running");
	if (!v.ck.bird_ok && o < len)
		o += (size_t)snprintf(msg + o, len - o, "%sBIRD refuses the routes (%s)",
				      o ? "; " : "", v.ck.bird_error);
	for (__u32 i = 0; i < v.ck.nvips && i < KR_VIP_MAX && o < len; i++) {
		const struct kr_announce_vip *a = &v.vip[i];
		char ip[INET6_ADDRSTRLEN];

		if (a->route == KR_VIP_ANNOUNCED || a->why == KR_VIP_DRAINED ||
		    a->why == KR_VIP_UNLOADING)
			continue;
		vip_ip(a, ip);
		o += (size_t)snprintf(msg + o, len - o, "%sVIP %s %s (%s)", o ? "; " : "", ip,
				      kr_vip_route_name(a->route), kr_vip_why_name(a->why));
	}
	return msg[0] ? 1 : 0;
}
