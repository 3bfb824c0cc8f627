// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Which VIPs to announce over BGP, and why (vip_state.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <string.h>
#include "vip_state.h"

static const char *const why_names[KR_VIP_WHY_N] = {
	[KR_VIP_OK] = "ok",
	[KR_VIP_NOT_LOADED] = "not loaded",
	[KR_VIP_DETACHED] = "not attached",
	[KR_VIP_STALE] = "not converged",
	[KR_VIP_BACKENDS] = "backends down",
	[KR_VIP_UNLOADING] = "unloading",
	[KR_VIP_DRAINED] = "drained",
};

const char *kr_vip_why_name(enum kr_vip_why w)
{
	return (unsigned)w < KR_VIP_WHY_N ? why_names[w] : "?";
}

const char *kr_vip_route_name(enum kr_vip_route r)
{
	switch (r) {
	case KR_VIP_WITHDRAWN:
		return "withdrawn";
	case KR_VIP_ANNOUNCED:
		return "announced";
	case KR_VIP_GSHUT:
		return "draining";
	}
	return "?";
}

static bool same_ip(const struct kr_sockaddr *a, const struct kr_sockaddr *b)
{
	return a->family == b->family && !memcmp(a->ip, b->ip, sizeof(a->ip));
}

int kr_vip_collect(const struct kr_config *cfg, struct kr_vip *out, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t si = 0; si < cfg->nservices; si++) {
		const struct kr_cfg_service *s = &cfg->services[si];
		uint32_t v;

		if (s->vip_any)
			continue;	/* no address to announce */
		for (v = 0; v < n && !same_ip(&out[v].addr, &s->vip); v++)
			;
		if (v == n) {
			if (n == max)
				return -ENOSPC;
			memset(&out[n], 0, sizeof(out[n]));
			out[n].addr.family = s->vip.family;
			memcpy(out[n].addr.ip, s->vip.ip, sizeof(s->vip.ip));
			n++;
		}
		if (out[v].nsvc == KR_VIP_MAX_SVCS)
			return -ENOSPC;
		out[v].svc[out[v].nsvc++] = si;
	}
	return (int)n;
}

uint32_t kr_vip_min_up(int given, double panic, uint32_t total)
{
	double need;

	if (given >= 0)
		return given ? (uint32_t)given : 1;
	need = ceil(panic * (double)total - 1e-9);	/* 0.5 of 4: 2, of 3: 2 */
	return need < 1 ? 1 : (uint32_t)need;
}

enum kr_vip_why kr_vip_decide(const struct kr_vip_facts *f, uint32_t up, uint32_t min_up)
{
	if (!f->loaded)
		return KR_VIP_NOT_LOADED;
	if (!f->attached)
		return KR_VIP_DETACHED;
	if (!f->converged)
		return KR_VIP_STALE;
	if (up < min_up)
		return KR_VIP_BACKENDS;
	if (f->unloading)
		return KR_VIP_UNLOADING;
	if (f->drained)
		return KR_VIP_DRAINED;
	return KR_VIP_OK;
}

/* A drain: announced -> announced with GRACEFUL_SHUTDOWN -> withdrawn once the router's
 * counter stood still for the quiet time (the upstream moved the traffic away), or at the
 * timeout (traffic that never goes: a single upstream, a peer ignoring the community). */
static uint8_t drain_step(struct kr_vip_track *t, uint64_t pkts, uint64_t now,
			  const struct kr_vip_timing *tm)
{
	switch (t->route) {
	case KR_VIP_ANNOUNCED:
		t->gshut_ns = now;
		t->quiet_ns = 0;
		return KR_VIP_GSHUT;
	case KR_VIP_GSHUT:
		if (pkts != t->pkts)
			t->quiet_ns = 0;
		else if (!t->quiet_ns)
			t->quiet_ns = now;
		if ((t->quiet_ns && now - t->quiet_ns >= tm->quiet_ns) ||
		    now - t->gshut_ns >= tm->timeout_ns)
			return KR_VIP_WITHDRAWN;
		return KR_VIP_GSHUT;
	default:
		return KR_VIP_WITHDRAWN;	/* never announced again by a drain */
	}
}

bool kr_vip_step(struct kr_vip_track *t, enum kr_vip_why why, uint64_t pkts, uint64_t now_ns,
		 const struct kr_vip_timing *tm)
{
	uint8_t route;

	if (why == KR_VIP_OK)
		route = KR_VIP_ANNOUNCED;
	else if (why == KR_VIP_DRAINED || why == KR_VIP_UNLOADING)
		route = drain_step(t, pkts, now_ns, tm);
	else
		route = KR_VIP_WITHDRAWN;	/* it cannot serve: at once */
	t->why = (uint8_t)why;
	t->pkts = pkts;
	if (route == t->route)
		return false;
	t->route = route;
	t->since_ns = now_ns;
	return true;
}

char *kr_vip_bird_file(const char *proto, const char *instance, const char *config,
		       const struct kr_vip *v, const struct kr_vip_track *t, uint32_t n)
{
	size_t len = 1024 + strlen(instance) + strlen(config) + (size_t)n * 160, o = 0;
	char *out = malloc(len);

	if (!out)
		return NULL;
	o += (size_t)snprintf(out + o, len - o,
		"# Written by `keyrouter announce` for instance '%s' (%s): do not edit.\n"
		"# Included at the top level of the router's BIRD configuration (the template\n"
		"# keyrouter-router.conf declares the attribute keyrouter_vip and exports the routes\n"
		"# that carry it); `birdc configure` after each change.\n", instance, config);
	for (int fam = 4; fam <= 6; fam += 2) {
		o += (size_t)snprintf(out + o, len - o, "protocol static %s_%d {\n\tipv%d;\n",
				      proto, fam, fam);
		for (uint32_t i = 0; i < n; i++) {
			char ip[INET6_ADDRSTRLEN];

			if (v[i].addr.family != fam || t[i].route == KR_VIP_WITHDRAWN)
				continue;
			inet_ntop(fam == 4 ? AF_INET : AF_INET6, v[i].addr.ip, ip, sizeof(ip));
			o += (size_t)snprintf(out + o, len - o,
					      "\troute %s/%d blackhole { keyrouter_vip = 1;%s };\n",
					      ip, fam == 4 ? 32 : 128, t[i].route == KR_VIP_GSHUT ?
					      " bgp_community.add((65535, 0));" : "");
		}
		o += (size_t)snprintf(out + o, len - o, "}\n");
	}
	return out;
}

/* "name proto table state since info...": the header ("Name Proto ...") is no row. */
int kr_bird_protocols_parse(char *text, struct kr_bird_proto *out, int max)
{
	char *save = NULL;
	int n = 0;

	for (char *l = strtok_r(text, "\n", &save); l && n < max; l = strtok_r(NULL, "\n", &save)) {
		char name[64], proto[32], table[64], state[32], since[32];
		struct kr_bird_proto *b = &out[n];
		int off = 0;
		size_t k;

		if (sscanf(l, "%63s %31s %63s %31s %31s %n", name, proto, table, state, since,
			   &off) < 5 || !strcmp(name, "Name"))
			continue;
		memset(b, 0, sizeof(*b));
		snprintf(b->name, sizeof(b->name), "%.31s", name);
		snprintf(b->proto, sizeof(b->proto), "%.15s", proto);
		snprintf(b->state, sizeof(b->state), "%.15s", state);
		snprintf(b->info, sizeof(b->info), "%.79s", off ? l + off : "");
		for (k = strlen(b->info); k && b->info[k - 1] == ' '; k--)
			b->info[k - 1] = 0;
		n++;
	}
	return n;
}
