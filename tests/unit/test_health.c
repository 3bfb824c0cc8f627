// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The health checker's pure parts (user/core/health.c, config_health.c): the "health"
 * objects and their errors, defaults per key type, probes and their replies, rise/fall and
 * the panic threshold. */
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include <math.h>
#include "health.h"
#include "tap.h"

static struct kr_config *parse(const char *text, char **errs)
{
	return kr_config_parse("t.json", text, strlen(text), errs);
}

/* One ring of two backends (health RH of the ring, BH of the second backend: JSON members
 * with their separators) and one service of key type KT (+ EXTRA key members). */
static struct kr_config *cfg_of(const char *rh, const char *bh, const char *kt,
				const char *extra, char **errs)
{
	char buf[2048];

	snprintf(buf, sizeof(buf), "{\"rings\": [{\"name\": \"r\", \"format\": \"v2\", %s"
		 "\"backends\": [{\"address\": \"10.0.0.1:53\", \"mac\": \"02:00:00:00:00:01\"},"
		 "{\"address\": \"10.0.0.2:53\", \"mac\": \"02:00:00:00:00:02\"%s}]}], "
		 "\"services\": [{\"name\": \"s\", \"vip\": \"192.0.2.1\", \"port\": 53, "
		 "\"key\": {\"type\": \"%s\"%s}, \"ring\": \"r\", \"forward\": {\"mode\": "
		 "\"l2\"}}]}", rh, bh, kt, extra);
	return parse(buf, errs);
}

static void test_defaults(void)
{
	static const struct { const char *kt, *extra; uint8_t probe; } c[] = {
		{ "dns", "", KR_PROBE_DNS }, { "memcache", "", KR_PROBE_MEMCACHED },
		{ "quic", ", \"cid_length\": 8", KR_PROBE_QUIC }, { "tuple", "", KR_PROBE_NONE },
		{ "payload", "", KR_PROBE_NONE },
	};
	struct kr_health_eff h;
	char *errs = NULL;

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct kr_config *cfg = cfg_of("", "", c[i].kt, c[i].extra, &errs);

		CHECK(cfg != NULL, "key %s: parses", c[i].kt);
		if (!cfg) {
			DIAG("%s", errs);
			free(errs);
			continue;
		}
		kr_health_resolve(cfg, 0, 1, 0, &h);
		CHECK_EQ_U(h.probe, c[i].probe, "key %s: default probe %s", c[i].kt,
			   kr_probe_name(c[i].probe));
		CHECK(h.interval_ms == KR_HC_DEF_INTERVAL_MS && h.timeout_ms == KR_HC_DEF_TIMEOUT_MS &&
		      h.rise == KR_HC_DEF_RISE && h.fall == KR_HC_DEF_FALL &&
		      h.jitter_ms == KR_HC_DEF_INTERVAL_MS / 10 && h.panic == KR_HC_DEF_PANIC,
		      "key %s: default timings", c[i].kt);
		kr_config_free(cfg);
	}
}

static void test_override(void)
{
	char *errs = NULL;
	struct kr_health_eff h0, h1;
	struct kr_config *cfg = cfg_of("\"health\": {\"interval\": 0.2, \"timeout\": 0.1, "
		"\"rise\": 4, \"fall\": 5, \"panic_threshold\": 0.25, \"name\": \"kr.test\", "
		"\"rcodes\": [\"NOERROR\", 3]}, ",
		", \"health\": {\"probe\": \"udp\", \"request\": \"hex:0a0b\", \"expect\": \"ok\", "
		"\"fall\": 1}", "dns", "", &errs);

	CHECK(cfg != NULL, "ring and backend health parse");
	if (!cfg) {
		DIAG("%s", errs);
		free(errs);
		return;
	}
	kr_health_resolve(cfg, 0, 0, 0, &h0);
	kr_health_resolve(cfg, 0, 1, 0, &h1);
	CHECK(h0.probe == KR_PROBE_DNS && h0.interval_ms == 200 && h0.timeout_ms == 100 &&
	      h0.rise == 4 && h0.fall == 5 && h0.jitter_ms == 20 && h0.panic == 0.25 &&
	      !strcmp(h0.name, "kr.test") && h0.rcodes == ((1u << 0) | (1u << 3)),
	      "the ring's health, jitter 10%% of its interval");
	CHECK(h1.probe == KR_PROBE_UDP && h1.request_len == 2 && h1.request[0] == 0x0a &&
	      h1.expect_len == 2 && !memcmp(h1.expect, "ok", 2) && h1.fall == 1 && h1.rise == 4 &&
	      h1.interval_ms == 200, "a backend's health overrides only what it gives");
	{
		char *js = kr_config_dump_json(cfg);

		CHECK(js && strstr(js, "\"panic_threshold\": 0.25") && strstr(js, "\"request\": \"hex:0a0b\""),
		      "config show prints the health objects");
		free(js);
	}
	kr_config_free(cfg);
}

/* The damping fields: defaults, a ring's, a backend's override; the watchdog of the rings. */
static void test_damp_config(void)
{
	struct kr_health_eff h0, h1;
	char *errs = NULL;
	struct kr_config *cfg = cfg_of("\"health\": {\"damp_suppress\": 3000, "
				       "\"damp_half_life\": 10, \"watchdog\": 0.5}, ",
				       ", \"health\": {\"damp_reuse\": 500}", "dns", "", &errs);

	CHECK(cfg != NULL, "damping fields parse");
	if (!cfg)
		DIAG("got: %s", errs);
	free(errs);
	errs = NULL;
	if (!cfg)
		return;
	kr_health_resolve(cfg, 0, 0, 0, &h0);
	kr_health_resolve(cfg, 0, 1, 0, &h1);
	CHECK(h0.damp.suppress == 3000 && h0.damp.reuse == KR_HC_DEF_DAMP_REUSE &&
	      h0.damp.half_life_ms == 10000 && h0.damp.max_hold_ms == KR_HC_DEF_DAMP_MAX_HOLD_MS,
	      "the ring's damping over the defaults");
	CHECK(h1.damp.suppress == 3000 && h1.damp.reuse == 500,
	      "a backend overrides damp_reuse only");
	CHECK_EQ_U(kr_health_watchdog_ms(cfg), 500, "the instance's watchdog: the ring's 0.5 s");
	kr_config_free(cfg);
	cfg = cfg_of("", "", "dns", "", &errs);
	CHECK(cfg && kr_health_watchdog_ms(cfg) == KR_HC_DEF_WATCHDOG_MS, "default watchdog 1 s");
	kr_config_free(cfg);
	free(errs);
}

static void test_errors(void)
{
	static const struct { const char *ring, *be, *msg; } c[] = {
		{ "\"health\": {\"probe\": \"ping\"}, ", "", "'ping' is not valid: expected one of \"auto\", \"none\", \"dns\", \"memcached\", \"quic\", \"udp\"" },
		{ "\"health\": {\"interval\": 0.001}, ", "", "0.001 s is out of range" },
		{ "\"health\": {\"interval\": 1, \"timeout\": 2}, ", "", "timeout: 2.000 s is longer than the interval (1.000 s)" },
		{ "\"health\": {\"probe\": \"udp\"}, ", "", "request: missing" },
		{ "\"health\": {\"probe\": \"quic\", \"name\": \"x\"}, ", "", "name: only with \"probe\": \"dns\"" },
		{ "\"health\": {\"panic_threshold\": 2}, ", "", "panic_threshold: expected a share 0..1" },
		{ "\"health\": {\"rcodes\": [\"NOPE\"]}, ", "", "rcodes[0]: not an rcode" },
		{ "\"health\": {\"fall\": 0}, ", "", "fall: 0 is out of range: expected 1..100" },
		{ "\"health\": {\"intervall\": 1}, ", "", "unknown field 'intervall' in a ring's health" },
		{ "", ", \"health\": {\"panic_threshold\": 0.5}", "unknown field 'panic_threshold' in a backend's health" },
		{ "\"health\": {\"name\": \"a..b\"}, ", "", "health.name: " },
		{ "\"health\": {\"damp_suppress\": 500}, ", "", "damp_reuse: 750 is not below damp_suppress (500)" },
		{ "\"health\": {\"damp_half_life\": 0}, ", "", "damp_half_life: 0 s is out of range" },
		{ "\"health\": {\"watchdog\": -1}, ", "", "watchdog: -1 s is out of range" },
		{ "", ", \"health\": {\"watchdog\": 1}", "unknown field 'watchdog' in a backend's health" },
	};

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *errs = NULL;
		struct kr_config *cfg = cfg_of(c[i].ring, c[i].be, "dns", "", &errs);

		CHECK(!cfg && errs && strstr(errs, c[i].msg), "error: %s", c[i].msg);
		if (!(errs && strstr(errs, c[i].msg)))
			DIAG("got: %s", errs ? errs : "(valid)");
		kr_config_free(cfg);
		free(errs);
	}
}

static void test_probes(void)
{
	struct kr_health_eff h = { .probe = KR_PROBE_DNS, .name = KR_HC_DEF_DNS_NAME };
	uint8_t b[1500], r[64];
	int n;

	n = kr_probe_build(&h, 0x12345678, b, sizeof(b));
	CHECK(n == 12 + 11 + 4 && b[0] == 0x56 && b[1] == 0x78 && b[2] == 0 && b[5] == 1 &&
	      !memcmp(b + 12, "\x02id\x06server\x00", 11) && b[24] == 16 && b[26] == 3,
	      "dns: id.server CH TXT, no recursion, the ID from seq");
	memcpy(r, b, 12);
	r[2] = 0x84;
	r[3] = 0x05;		/* REFUSED */
	CHECK(kr_probe_match(&h, 0x12345678, r, 12), "dns: a response with the ID counts (any rcode)");
	CHECK(!kr_probe_match(&h, 0x12345679, r, 12), "dns: another ID does not");
	r[2] = 0x04;
	CHECK(!kr_probe_match(&h, 0x12345678, r, 12), "dns: a query (QR 0) does not");
	r[2] = 0x84;
	h.rcodes = 1u << 0;
	CHECK(!kr_probe_match(&h, 0x12345678, r, 12), "dns rcodes [NOERROR]: REFUSED does not count");
	r[3] = 0;
	CHECK(kr_probe_match(&h, 0x12345678, r, 12), "dns rcodes [NOERROR]: NOERROR counts");
	snprintf(h.name, sizeof(h.name), "kr.test");
	n = kr_probe_build(&h, 1, b, sizeof(b));
	CHECK(n == 12 + 9 + 4 && b[2] == 1 && b[22] == 1 && b[24] == 1, "dns name: IN A, recursion desired");

	h.probe = KR_PROBE_MEMCACHED;
	n = kr_probe_build(&h, 0xbeef, b, sizeof(b));
	CHECK(n == 17 && b[0] == 0xbe && b[1] == 0xef && b[5] == 1 && !memcmp(b + 8, "version\r\n", 9),
	      "memcached: frame header (request id, 1 datagram) + version");
	memcpy(r, "\xbe\xef\0\0\0\x01\0\0VERSION 1.6.21\r\n", 24);
	CHECK(kr_probe_match(&h, 0xbeef, r, 24), "memcached: VERSION with the request id counts");
	CHECK(!kr_probe_match(&h, 0xbeee, r, 24), "memcached: another request id does not");

	h.probe = KR_PROBE_QUIC;
	n = kr_probe_build(&h, 7, b, sizeof(b));
	CHECK(n == 1200 && (b[0] & 0xc0) == 0xc0 && (b[1] & 0x0f) == 0x0a && (b[2] & 0x0f) == 0x0a &&
	      (b[3] & 0x0f) == 0x0a && (b[4] & 0x0f) == 0x0a && b[5] == 8 && b[14] == 8,
	      "quic: 1200 bytes, long header, reserved version 0x?a?a?a?a, 8-byte CIDs");
	/* Version Negotiation: version 0, DCID = our SCID, SCID = our DCID, versions */
	memset(r, 0, sizeof(r));
	r[0] = 0x80;
	r[5] = 8;
	memcpy(r + 6, b + 15, 8);
	r[14] = 8;
	memcpy(r + 15, b + 6, 8);
	memcpy(r + 23, "\0\0\0\x01", 4);
	CHECK(kr_probe_match(&h, 7, r, 27), "quic: Version Negotiation echoing the CIDs counts");
	CHECK(!kr_probe_match(&h, 8, r, 27), "quic: one for other CIDs does not");
	r[4] = 1;
	CHECK(!kr_probe_match(&h, 7, r, 27), "quic: a packet of version 1 is not Version Negotiation");

	h.probe = KR_PROBE_UDP;
	memcpy(h.request, "ping", 4);
	h.request_len = 4;
	memcpy(h.expect, "pong", 4);
	h.expect_len = 4;
	CHECK(kr_probe_build(&h, 0, b, sizeof(b)) == 4 && !memcmp(b, "ping", 4), "udp: the request");
	CHECK(kr_probe_match(&h, 0, (const uint8_t *)"pong!", 5), "udp: a reply starting with expect");
	CHECK(!kr_probe_match(&h, 0, (const uint8_t *)"pon", 3), "udp: a shorter one does not");
}

static void test_hsm(void)
{
	struct kr_hsm s = { .up = true };
	int ev[8];
	/* fall 3, rise 2: f f s f f f | s s */
	const bool res[] = { false, false, true, false, false, false, true, true };

	for (unsigned i = 0; i < 8; i++) {
		ev[i] = kr_hsm_result(&s, res[i], 2, 3);
		if (ev[i] == KR_HSM_WANT_DOWN)
			kr_hsm_set(&s, false);
		if (ev[i] == KR_HSM_WANT_UP)
			kr_hsm_set(&s, true);
	}
	CHECK(!ev[0] && !ev[1] && !ev[2] && !ev[3] && !ev[4] && ev[5] == KR_HSM_WANT_DOWN &&
	      !ev[6] && ev[7] == KR_HSM_WANT_UP, "rise 2 / fall 3: down at the 3rd failure in a row, "
	      "up at the 2nd success");
	s = (struct kr_hsm){ .up = true };
	int n = 0;

	for (unsigned i = 0; i < 100; i++)
		n += kr_hsm_result(&s, i & 1, 2, 3) != KR_HSM_NONE;
	CHECK_EQ_U(n, 0, "alternating results: no transition");
	CHECK(!kr_health_panic(4, 4, 0.5) && !kr_health_panic(3, 4, 0.5) && kr_health_panic(2, 4, 0.5),
	      "panic 0.5 of 4: the 1st and 2nd down are written, the 3rd is not");
	CHECK(!kr_health_panic(1, 4, 0) && kr_health_panic(1, 4, 0.01) && kr_health_panic(0, 4, 0),
	      "panic 0: the last one may go; never below zero");
}

/* Flap damping against values computed by hand (half-life 30 s: 2^(-4/30) = 0.911722):
 * downs at 0, 4 and 8 s -> penalties 1000, 1911.72, 2742.96 (held: above 2000); released
 * once below 750: 30 s x log2(2742.96 / 750) = 56.123 s after the third down. */
static void test_damping(void)
{
	const struct kr_damp_params p = { KR_HC_DEF_DAMP_SUPPRESS, KR_HC_DEF_DAMP_REUSE,
					  KR_HC_DEF_DAMP_HALF_LIFE_MS, KR_HC_DEF_DAMP_MAX_HOLD_MS };
	const struct kr_damp_params off = { 0, 750, 30000, 300000 };
	struct kr_damp d = {}, o = {}, two = {};
	uint64_t rel;

	CHECK(!kr_damp_flap(&d, &p, 0) && fabs(d.penalty - 1000) < 1e-9,
	      "one outage: penalty 1000, not held");
	CHECK(kr_damp_may_up(&d, &p, 1000), "one outage: it comes back up at once");
	CHECK(!kr_damp_flap(&d, &p, 4000) && fabs(d.penalty - 1911.7225) < 1e-3,
	      "a second down 4 s later: 1911.72, not held (below 2000)");
	CHECK(kr_damp_flap(&d, &p, 8000) && fabs(d.penalty - 2742.9604) < 1e-3,
	      "the third down 4 s later: 2742.96, held");
	CHECK(fabs(kr_damp_penalty(&d, &p, 38000) - 1371.4802) < 1e-3, "halved after 30 s");
	CHECK(!kr_damp_may_up(&d, &p, 38000), "held while above the reuse threshold (1371 > 750)");
	rel = kr_damp_release_ms(&d, &p, 8000);
	CHECK(rel >= 56123 && rel <= 56124, "released 56.123 s after the third down (got %llu ms)",
	      (unsigned long long)rel);
	CHECK(!kr_damp_may_up(&d, &p, 8000 + 56000) && kr_damp_may_up(&d, &p, 8000 + 56200) &&
	      !d.held, "held at 56.0 s, released at 56.2 s");
	CHECK_EQ_U(d.flaps, 3, "three flaps counted");
	/* two outages back to back are never damped: 1000 + less than 1000 */
	CHECK(!kr_damp_flap(&two, &p, 0) && !kr_damp_flap(&two, &p, 1), "two outages: not held");
	/* the ceiling: reuse x 2^(max_hold / half_life) = 750 x 2^10 = 768000, so a hold ends
	 * at most max_hold (300 s) after the last flap however long it flapped */
	for (uint64_t t = 0; t < 100 * 1000; t += 10)	/* a flap every 10 ms for 100 s */
		kr_damp_flap(&o, &p, t);
	CHECK(fabs(o.penalty - 768000) < 1e-6, "the penalty stops at the ceiling 768000");
	rel = kr_damp_release_ms(&o, &p, 100 * 1000 - 10);
	CHECK(rel >= 299999 && rel <= 300000, "released max_hold (300 s) after the last flap");
	o = (struct kr_damp){};
	for (uint64_t t = 0; t < 10; t++)
		CHECK(!kr_damp_flap(&o, &off, t * 100), "damp_suppress 0: never held");
	/* short failures (fewer failed probes in a row than fall, then an answer): half a flap
	 * each.  One every 4 s (a 2 s / 2 s flapper at the default 2 s interval): 500, 955.86,
	 * 1371.48, 1750.41, 2095.89 -> held at the fifth, 16 s after the first; one a minute
	 * converges to 500 / (1 - 2^-2) = 666.67, never held. */
	o = (struct kr_damp){};
	for (int i = 0; i < 4; i++)
		CHECK(!kr_damp_blip(&o, &p, (uint64_t)i * 4000), "short failure %d: not held", i + 1);
	CHECK(fabs(o.penalty - 1750.4093) < 1e-3, "four short failures 4 s apart: 1750.41 (got %.4f)",
	      o.penalty);
	CHECK(kr_damp_blip(&o, &p, 16000) && fabs(o.penalty - 2095.8876) < 1e-3,
	      "the fifth, 16 s after the first: 2095.89, held");
	CHECK_EQ_U(o.flaps, 5, "short failures counted as flaps");
	o = (struct kr_damp){};
	for (uint64_t t = 0; t < 3600 * 1000; t += 60 * 1000)
		CHECK(!kr_damp_blip(&o, &p, t), "a lost probe a minute for an hour: never held");
	CHECK(fabs(o.penalty - 666.6667) < 1e-3, "a lost probe a minute: 666.67 (got %.4f)",
	      o.penalty);
	CHECK(kr_health_overridden(KR_BACKEND_DOWN, KR_OWNER_OPERATOR) &&
	      kr_health_overridden(KR_BACKEND_DRAIN, KR_OWNER_CONFIG) &&
	      !kr_health_overridden(KR_BACKEND_DOWN, KR_OWNER_CHECKER) &&
	      !kr_health_overridden(KR_BACKEND_UP, KR_OWNER_OPERATOR),
	      "an operator's or the config's down/drain is left alone, the checker's is not");
}

int main(void)
{
	test_defaults();
	test_override();
	test_errors();
	test_probes();
	test_hsm();
	test_damping();
	test_damp_config();
	return tap_done();
}
