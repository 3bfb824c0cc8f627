// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Which VIPs `keyrouter announce` announces and why (user/core/vip_state.c): the VIPs of a
 * configuration, min_up from the panic threshold, the order of the reasons, and the drain:
 * announced -> GRACEFUL_SHUTDOWN -> withdrawn after the quiet time or the timeout. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "vip_state.h"
#include "tap.h"

#define MS 1000000ull

static const char cfg_text[] =
	"{\"rings\": [{\"name\": \"r\", \"format\": \"v2\", \"backends\": ["
	"{\"address\": \"10.0.0.1:53\", \"mac\": \"02:00:00:00:00:01\"},"
	"{\"address\": \"10.0.0.2:53\", \"mac\": \"02:00:00:00:00:02\"}]}],"
	"\"services\": ["
	"{\"name\": \"a\", \"vip\": \"192.0.2.1\", \"port\": 53, \"key\": {\"type\": \"dns\"},"
	" \"ring\": \"r\", \"forward\": {\"mode\": \"l2\"}},"
	"{\"name\": \"b\", \"vip\": \"2001:db8::1\", \"port\": 53, \"key\": {\"type\": \"dns\"},"
	" \"ring\": \"r\", \"forward\": {\"mode\": \"l2\"}},"
	"{\"name\": \"c\", \"vip\": \"192.0.2.1\", \"port\": 5353, \"key\": {\"type\": \"dns\"},"
	" \"ring\": \"r\", \"forward\": {\"mode\": \"l2\"}},"
	"{\"name\": \"d\", \"vip\": \"*\", \"port\": 54, \"key\": {\"type\": \"dns\"},"
	" \"ring\": \"r\", \"forward\": {\"mode\": \"l2\"}}]}";

static void test_collect(void)
{
	struct kr_vip v[4];
	char *errs = NULL;
	struct kr_config *cfg = kr_config_parse("t.json", cfg_text, strlen(cfg_text), &errs);
	int n;

	CHECK(cfg, "the configuration parses (%s)", errs ? errs : "");
	if (!cfg)
		return;
	n = kr_vip_collect(cfg, v, 4);
	CHECK_EQ_U(n, 2, "two VIP addresses (a and c share one, the wildcard has none)");
	CHECK(n == 2 && v[0].addr.family == 4 && v[0].addr.ip[3] == 1 && v[0].nsvc == 2 &&
	      v[0].svc[0] == 0 && v[0].svc[1] == 2, "192.0.2.1 carries services a and c");
	CHECK(n == 2 && v[1].addr.family == 6 && v[1].nsvc == 1 && v[1].svc[0] == 1,
	      "2001:db8::1 carries service b");
	CHECK_EQ_U(kr_vip_collect(cfg, v, 1), (uint64_t)-ENOSPC, "more VIPs than room: -ENOSPC");
	kr_config_free(cfg);
}

static void test_min_up(void)
{
	CHECK_EQ_U(kr_vip_min_up(-1, 0.5, 4), 2, "0.5 of 4: 2");
	CHECK_EQ_U(kr_vip_min_up(-1, 0.5, 3), 2, "0.5 of 3: 2 (rounded up)");
	CHECK_EQ_U(kr_vip_min_up(-1, 0.0, 4), 1, "threshold 0: still 1");
	CHECK_EQ_U(kr_vip_min_up(3, 0.5, 4), 3, "given: 3");
	CHECK_EQ_U(kr_vip_min_up(0, 0.5, 4), 1, "given 0: 1 (a ring with none up cannot serve)");
}

static void test_decide(void)
{
	struct kr_vip_facts f = { .loaded = true, .attached = true, .converged = true };

	CHECK_EQ_U(kr_vip_decide(&f, 2, 2), KR_VIP_OK, "all facts hold: announce");
	CHECK_EQ_U(kr_vip_decide(&f, 1, 2), KR_VIP_BACKENDS, "1 up of min 2: backends down");
	f.drained = true;
	CHECK_EQ_U(kr_vip_decide(&f, 2, 2), KR_VIP_DRAINED, "drained");
	CHECK_EQ_U(kr_vip_decide(&f, 1, 2), KR_VIP_BACKENDS,
		   "drained and backends down: the failure wins (a warning, not a drain)");
	f.unloading = true;
	CHECK_EQ_U(kr_vip_decide(&f, 2, 2), KR_VIP_UNLOADING, "unloading before drained");
	f.converged = false;
	CHECK_EQ_U(kr_vip_decide(&f, 2, 2), KR_VIP_STALE, "not converged");
	f.attached = false;
	CHECK_EQ_U(kr_vip_decide(&f, 2, 2), KR_VIP_DETACHED, "not attached");
	f.loaded = false;
	CHECK_EQ_U(kr_vip_decide(&f, 2, 2), KR_VIP_NOT_LOADED, "not loaded first");
}

static void test_step(void)
{
	const struct kr_vip_timing tm = { .quiet_ns = 1000 * MS, .timeout_ns = 10000 * MS };
	struct kr_vip_track t = {};
	uint64_t now = 1000 * MS;

	CHECK(kr_vip_step(&t, KR_VIP_OK, 0, now, &tm) && t.route == KR_VIP_ANNOUNCED &&
	      t.since_ns == now, "ok: announced, since now");
	CHECK(!kr_vip_step(&t, KR_VIP_OK, 5, now + 100 * MS, &tm), "ok again: no change");
	CHECK(kr_vip_step(&t, KR_VIP_DETACHED, 9, now + 200 * MS, &tm) &&
	      t.route == KR_VIP_WITHDRAWN && t.why == KR_VIP_DETACHED,
	      "detached: withdrawn at once");
	CHECK(kr_vip_step(&t, KR_VIP_OK, 9, now + 300 * MS, &tm) && t.route == KR_VIP_ANNOUNCED,
	      "back: announced");
	/* a drain under traffic */
	now += 1000 * MS;
	CHECK(kr_vip_step(&t, KR_VIP_DRAINED, 100, now, &tm) && t.route == KR_VIP_GSHUT,
	      "drain: GRACEFUL_SHUTDOWN first");
	CHECK(!kr_vip_step(&t, KR_VIP_DRAINED, 200, now + 2000 * MS, &tm) && t.route == KR_VIP_GSHUT,
	      "traffic still comes: stays announced (2 s, past the quiet time)");
	CHECK(!kr_vip_step(&t, KR_VIP_DRAINED, 200, now + 2500 * MS, &tm) && t.quiet_ns,
	      "the counter stood still: quiet from now");
	CHECK(!kr_vip_step(&t, KR_VIP_DRAINED, 200, now + 3400 * MS, &tm),
	      "quiet 0.9 s of 1 s: not yet");
	CHECK(kr_vip_step(&t, KR_VIP_DRAINED, 200, now + 3500 * MS, &tm) &&
	      t.route == KR_VIP_WITHDRAWN, "quiet 1 s: withdrawn");
	CHECK(!kr_vip_step(&t, KR_VIP_DRAINED, 200, now + 9000 * MS, &tm) &&
	      t.route == KR_VIP_WITHDRAWN, "a drained VIP stays withdrawn");
	CHECK(kr_vip_step(&t, KR_VIP_OK, 200, now + 9100 * MS, &tm) && t.route == KR_VIP_ANNOUNCED,
	      "undrained: announced");
	/* traffic that never goes: the timeout */
	now += 20000 * MS;
	kr_vip_step(&t, KR_VIP_UNLOADING, 1, now, &tm);
	for (uint64_t i = 1; i < 10; i++)
		kr_vip_step(&t, KR_VIP_UNLOADING, 1 + i, now + i * 1000 * MS, &tm);
	CHECK(t.route == KR_VIP_GSHUT, "unloading under steady traffic: still draining at 9 s");
	CHECK(kr_vip_step(&t, KR_VIP_UNLOADING, 20, now + 10000 * MS, &tm) &&
	      t.route == KR_VIP_WITHDRAWN, "at the 10 s timeout: withdrawn");
	/* a failure during a drain withdraws at once */
	kr_vip_step(&t, KR_VIP_OK, 20, now + 11000 * MS, &tm);
	kr_vip_step(&t, KR_VIP_DRAINED, 20, now + 11100 * MS, &tm);
	CHECK(kr_vip_step(&t, KR_VIP_BACKENDS, 20, now + 11200 * MS, &tm) &&
	      t.route == KR_VIP_WITHDRAWN, "backends down while draining: withdrawn at once");
	CHECK(!strcmp(kr_vip_why_name(KR_VIP_BACKENDS), "backends down") &&
	      !strcmp(kr_vip_route_name(KR_VIP_GSHUT), "draining"), "names");
}

/* The include file, against the text BIRD is to read (written out here by hand). */
static void test_bird_file(void)
{
	struct kr_vip v[3] = {};
	struct kr_vip_track t[3] = {};
	char *f;

	v[0].addr.family = 4;
	memcpy(v[0].addr.ip, (uint8_t[]){ 10, 200, 0, 1 }, 4);
	v[1].addr.family = 6;
	memcpy(v[1].addr.ip, (uint8_t[]){ 0xfd, 0, 2, 0, [15] = 1 }, 16);
	v[2].addr.family = 4;
	memcpy(v[2].addr.ip, (uint8_t[]){ 192, 0, 2, 7 }, 4);
	t[0].route = KR_VIP_ANNOUNCED;
	t[1].route = KR_VIP_GSHUT;
	t[2].route = KR_VIP_WITHDRAWN;
	f = kr_vip_bird_file("keyrouter_eth1", "eth1", "/etc/keyrouter/eth1.json", v, t, 3);
	CHECK(f && strstr(f, "protocol static keyrouter_eth1_4 {\n\tipv4;\n"
			  "\troute 10.200.0.1/32 blackhole { keyrouter_vip = 1; };\n}\n"),
	      "the IPv4 protocol: the announced VIP, no community");
	CHECK(f && strstr(f, "protocol static keyrouter_eth1_6 {\n\tipv6;\n"
			  "\troute fd00:200::1/128 blackhole { keyrouter_vip = 1; "
			  "bgp_community.add((65535, 0)); };\n}\n"),
	      "the IPv6 protocol: the draining VIP with GRACEFUL_SHUTDOWN");
	CHECK(f && !strstr(f, "192.0.2.7"), "a withdrawn VIP is not in the file");
	CHECK(f && strstr(f, "instance 'eth1' (/etc/keyrouter/eth1.json)"), "the comment names both");
	free(f);
}

/* `show protocols` as BIRD 2.0.12 answers on its socket (codes removed by the reader). */
static void test_bird_protocols(void)
{
	char text[] =
		"Name       Proto      Table      State  Since         Info\n"
		"device1    Device     ---        up     06:16:22.593  \n"
		"keyrouter_x_4 Static     master4    up     06:16:22.593  \n"
		"upstream1  BGP        ---        up     06:27:51.798  Established   \n"
		"upstream2  BGP        ---        start  06:28:43.546  Idle          Error: BFD session down\n"
		"\n";
	struct kr_bird_proto p[8];
	int n = kr_bird_protocols_parse(text, p, 8);

	CHECK_EQ_U(n, 4, "four rows, the header left out");
	CHECK(n == 4 && !strcmp(p[2].name, "upstream1") && !strcmp(p[2].proto, "BGP") &&
	      !strcmp(p[2].state, "up") && !strcmp(p[2].info, "Established"),
	      "an established session (trailing blanks cut)");
	CHECK(n == 4 && !strcmp(p[3].state, "start") &&
	      !strcmp(p[3].info, "Idle          Error: BFD session down"),
	      "a session down: its info as BIRD gives it");
	CHECK(n == 4 && !strcmp(p[0].info, ""), "no info: empty");
	CHECK_EQ_U(kr_bird_protocols_parse((char[]){ "" }, p, 8), 0, "an empty reply: none");
}

int main(void)
{
	test_collect();
	test_min_up();
	test_decide();
	test_step();
	test_bird_file();
	test_bird_protocols();
	return tap_done();
}
