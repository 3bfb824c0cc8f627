// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* "health" objects of rings and backends (docs/config.md "Health checks"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "config_int.h"
#include "keyform.h"

static const char *const probe_names[] = { "auto", "none", "dns", "memcached", "quic", "udp", NULL };
static const char *const rcode_names[] = {
	"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN", "YXRRSET",
	"NXRRSET", "NOTAUTH", "NOTZONE", NULL,
};

/* A number of seconds in [min, max] -> milliseconds.  1 absent, 0 ok, -1 error. */
static int get_seconds(struct ctx *c, json_t *o, const char *key, double min, double max,
		       uint32_t *ms)
{
	json_t *v = json_object_get(o, key);
	double d;

	if (!v)
		return 1;
	if (!json_is_number(v)) {
		cfg_kerr(c, key, "expected a number of seconds %g..%g, got %s", min, max,
			 cfg_jtype(v));
		return -1;
	}
	d = json_number_value(v);
	if (!(d >= min && d <= max)) {
		cfg_kerr(c, key, "%g s is out of range: expected %g..%g seconds", d, min, max);
		return -1;
	}
	*ms = (uint32_t)lround(d * 1000.0);
	return 0;
}

/* "text" or "hex:0a0b..": the bytes of a udp request or expected reply. */
static int get_bytes(struct ctx *c, json_t *o, const char *key, uint8_t **out, uint16_t *len)
{
	const char *s;
	struct kr_err err;
	int r = cfg_get_str(c, o, key, &s);
	long n;

	if (r)
		return r;
	*out = malloc(KR_HC_MAX_BYTES);
	if (!*out) {
		cfg_kerr(c, key, "out of memory");
		return -1;
	}
	if (!strncmp(s, "hex:", 4)) {
		n = kr_hex_decode(s + 4, *out, KR_HC_MAX_BYTES, &err);
		if (n < 0) {
			cfg_kerr(c, key, "%s", err.msg);
			return -1;
		}
	} else {
		n = (long)strlen(s);
		if (n > KR_HC_MAX_BYTES) {
			cfg_kerr(c, key, "%ld bytes: at most %d", n, KR_HC_MAX_BYTES);
			return -1;
		}
		memcpy(*out, s, (size_t)n);
	}
	*len = (uint16_t)n;
	return 0;
}

static void parse_rcodes(struct ctx *c, json_t *o, struct kr_cfg_health *h)
{
	json_t *a = json_object_get(o, "rcodes"), *v;
	size_t i;

	if (!a)
		return;
	if (!json_is_array(a) || !json_array_size(a)) {
		cfg_kerr(c, "rcodes", "expected a non-empty array of rcodes (\"NOERROR\", "
			 "\"NXDOMAIN\", ... or 0..15)");
		return;
	}
	h->set |= KR_HC_RCODES;
	cfg_push_key(c, "rcodes");
	json_array_foreach(a, i, v) {
		int r = -1;

		cfg_push_idx(c, i);
		if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 15)
			r = (int)json_integer_value(v);
		for (int k = 0; json_is_string(v) && rcode_names[k]; k++)
			if (!strcmp(json_string_value(v), rcode_names[k]))
				r = k;
		if (r < 0)
			cfg_err(c, "not an rcode: expected a name (NOERROR, FORMERR, SERVFAIL, "
				"NXDOMAIN, NOTIMP, REFUSED, ...) or an integer 0..15");
		else
			h->rcodes |= 1u << r;
		cfg_pop(c);
	}
	cfg_pop(c);
}

/* Flap damping (damp_*) and, for a ring, the watchdog interval. */
static void parse_damping(struct ctx *c, json_t *v, bool ring, struct kr_cfg_health *h)
{
	uint32_t suppress = KR_HC_DEF_DAMP_SUPPRESS, reuse = KR_HC_DEF_DAMP_REUSE;
	uint64_t u;

	if (!cfg_get_uint(c, v, "damp_suppress", 0, 1000000, &u)) {
		h->damp_suppress = suppress = (uint32_t)u;
		h->set |= KR_HC_DAMP_SUPPRESS;
	}
	if (!cfg_get_uint(c, v, "damp_reuse", 1, 1000000, &u)) {
		h->damp_reuse = reuse = (uint32_t)u;
		h->set |= KR_HC_DAMP_REUSE;
	}
	if (!get_seconds(c, v, "damp_half_life", 0.1, 86400, &h->damp_half_life_ms))
		h->set |= KR_HC_DAMP_HALF_LIFE;
	if (!get_seconds(c, v, "damp_max_hold", 0.1, 86400, &h->damp_max_hold_ms))
		h->set |= KR_HC_DAMP_MAX_HOLD;
	/* a ring's against the defaults; a backend's only when it gives both (the ring's
	 * values are not known here) */
	if (suppress && reuse >= suppress &&
	    (ring ? !!(h->set & (KR_HC_DAMP_SUPPRESS | KR_HC_DAMP_REUSE)) :
	     (h->set & KR_HC_DAMP_SUPPRESS) && (h->set & KR_HC_DAMP_REUSE)))
		cfg_kerr(c, "damp_reuse", "%u is not below damp_suppress (%u): a held backend "
			 "would never be released", reuse, suppress);
	if (ring && !get_seconds(c, v, "watchdog", 0, 3600, &h->watchdog_ms))
		h->set |= KR_HC_WATCHDOG;
}

int cfg_parse_health(struct ctx *c, json_t *o, bool ring, struct kr_cfg_health *h)
{
	json_t *v = json_object_get(o, "health");
	const char *s;
	uint64_t u;
	double d;
	int e;

	memset(h, 0, sizeof(*h));
	if (!v)
		return 1;
	cfg_push_key(c, "health");
	if (!json_is_object(v)) {
		cfg_err(c, "expected an object {\"probe\": ..., \"interval\": ...}, got %s",
			cfg_jtype(v));
		cfg_pop(c);
		return 0;
	}
	cfg_check_fields(c, v, KR_CFG_OBJ_HEALTH, ring ? KR_CFG_V_RING : KR_CFG_V_BACKEND,
			 ring ? "a ring's health" : "a backend's health");
	if (!cfg_get_enum(c, v, "probe", probe_names, &e)) {
		h->probe = (uint8_t)e;
		h->set |= KR_HC_PROBE;
	}
	if (!cfg_get_str(c, v, "name", &s)) {
		struct kr_key k;
		struct kr_err err;

		if (kr_keyform_dns(s, &k, &err))
			cfg_kerr(c, "name", "%s", err.msg);
		h->name = strdup(s);
		h->set |= KR_HC_NAME;
	}
	parse_rcodes(c, v, h);
	if (!get_bytes(c, v, "request", &h->request, &h->request_len))
		h->set |= KR_HC_REQUEST;
	if (!get_bytes(c, v, "expect", &h->expect, &h->expect_len))
		h->set |= KR_HC_EXPECT;
	if (!get_seconds(c, v, "interval", 0.01, 3600, &h->interval_ms))
		h->set |= KR_HC_INTERVAL;
	if (!get_seconds(c, v, "timeout", 0.001, 3600, &h->timeout_ms))
		h->set |= KR_HC_TIMEOUT;
	if (!get_seconds(c, v, "jitter", 0, 1800, &h->jitter_ms))
		h->set |= KR_HC_JITTER;
	if (!cfg_get_uint(c, v, "rise", 1, 100, &u)) {
		h->rise = (uint32_t)u;
		h->set |= KR_HC_RISE;
	}
	if (!cfg_get_uint(c, v, "fall", 1, 100, &u)) {
		h->fall = (uint32_t)u;
		h->set |= KR_HC_FALL;
	}
	if (ring && json_object_get(v, "panic_threshold")) {
		json_t *p = json_object_get(v, "panic_threshold");

		d = json_is_number(p) ? json_number_value(p) : -1;
		if (!(d >= 0 && d <= 1))
			cfg_kerr(c, "panic_threshold", "expected a share 0..1 of the ring's "
				 "backends to keep up (default 0.5)");
		h->panic = d;
		h->set |= KR_HC_PANIC;
	}
	parse_damping(c, v, ring, h);
	cfg_fields_parse(c, KR_CFG_OBJ_HEALTH, ring ? KR_CFG_V_RING : KR_CFG_V_BACKEND, v, h, NULL);
	/* fields of another probe type */
	if ((h->set & KR_HC_PROBE) && h->probe != KR_PROBE_DNS && h->probe != KR_PROBE_AUTO) {
		if (h->set & KR_HC_NAME)
			cfg_kerr(c, "name", "only with \"probe\": \"dns\" (or \"auto\")");
		if (h->set & KR_HC_RCODES)
			cfg_kerr(c, "rcodes", "only with \"probe\": \"dns\" (or \"auto\")");
	}
	if ((h->set & KR_HC_PROBE) && h->probe != KR_PROBE_UDP && h->probe != KR_PROBE_AUTO) {
		if (h->set & KR_HC_REQUEST)
			cfg_kerr(c, "request", "only with \"probe\": \"udp\"");
		if (h->set & KR_HC_EXPECT)
			cfg_kerr(c, "expect", "only with \"probe\": \"udp\"");
	}
	if ((h->set & KR_HC_PROBE) && h->probe == KR_PROBE_UDP && !(h->set & KR_HC_REQUEST))
		cfg_kerr(c, "request", "missing: \"probe\": \"udp\" sends this request (text, or "
			 "\"hex:...\")");
	if ((h->set & KR_HC_TIMEOUT) && (h->set & KR_HC_INTERVAL) &&
	    h->timeout_ms > h->interval_ms)
		cfg_kerr(c, "timeout", "%.3f s is longer than the interval (%.3f s): one probe at "
			 "a time", h->timeout_ms / 1000.0, h->interval_ms / 1000.0);
	if ((h->set & KR_HC_JITTER) && (h->set & KR_HC_INTERVAL) &&
	    h->jitter_ms * 2 > h->interval_ms)
		cfg_kerr(c, "jitter", "%.3f s is more than half the interval (%.3f s)",
			 h->jitter_ms / 1000.0, h->interval_ms / 1000.0);
	cfg_pop(c);
	return 0;
}

static json_t *bytes_json(const uint8_t *b, uint16_t n)
{
	char *s = malloc(4 + 2 * (size_t)n + 1);
	bool text = true;
	json_t *j;

	for (uint16_t i = 0; i < n; i++)
		text = text && b[i] >= 0x20 && b[i] < 0x7f;
	if (!s)
		return json_null();
	if (text && !(n >= 4 && !memcmp(b, "hex:", 4))) {
		memcpy(s, b, n);
		s[n] = 0;
	} else {
		memcpy(s, "hex:", 4);
		for (uint16_t i = 0; i < n; i++)
			snprintf(s + 4 + 2 * i, 3, "%02x", b[i]);
		s[4 + 2 * n] = 0;
	}
	j = json_string(s);
	free(s);
	return j;
}

/* A ring's health: every default filled in (the probe "auto": the service's key type); a
 * backend's: what it overrides. */
#define HC(o, v, bit)	(((v) & KR_CFG_V_RING) || ((o)->set & (bit)))

static json_t *hc_probe(const struct kr_cfg_field *f, const void *obj, const void *up,
			unsigned v)
{
	const struct kr_cfg_health *h = obj;

	(void)f; (void)up;
	return HC(h, v, KR_HC_PROBE) ? json_string(kr_probe_name(h->probe)) : NULL;
}

static json_t *hc_name(const struct kr_cfg_field *f, const void *obj, const void *up,
		       unsigned v)
{
	const struct kr_cfg_health *h = obj;

	(void)f; (void)up; (void)v;
	return h->set & KR_HC_NAME ? json_string(h->name) : NULL;
}

static json_t *hc_rcodes(const struct kr_cfg_field *f, const void *obj, const void *up,
			 unsigned v)
{
	const struct kr_cfg_health *h = obj;
	json_t *a;

	(void)f; (void)up; (void)v;
	if (!(h->set & KR_HC_RCODES))
		return NULL;
	a = json_array();
	for (int r = 0; r < 16; r++)
		if (h->rcodes & (1u << r))
			json_array_append_new(a, r < 11 ? json_string(rcode_names[r]) : json_integer(r));
	return a;
}

static json_t *hc_request(const struct kr_cfg_field *f, const void *obj, const void *up,
			  unsigned v)
{
	const struct kr_cfg_health *h = obj;

	(void)f; (void)up; (void)v;
	return h->set & KR_HC_REQUEST ? bytes_json(h->request, h->request_len) : NULL;
}

static json_t *hc_expect(const struct kr_cfg_field *f, const void *obj, const void *up,
			 unsigned v)
{
	const struct kr_cfg_health *h = obj;

	(void)f; (void)up; (void)v;
	return h->set & KR_HC_EXPECT ? bytes_json(h->expect, h->expect_len) : NULL;
}

/* A number of seconds: given (bit set), else the default def_ms (0: none) for a ring's. */
static json_t *hc_seconds(const struct kr_cfg_health *h, unsigned v, unsigned bit, uint32_t ms,
			  uint32_t def_ms)
{
	if (h->set & bit)
		return json_real(ms / 1000.0);
	return (v & KR_CFG_V_RING) && def_ms ? json_real(def_ms / 1000.0) : NULL;
}

/* An integer: given, else the default for a ring's. */
static json_t *hc_count(const struct kr_cfg_health *h, unsigned v, unsigned bit, uint32_t n,
			uint32_t def)
{
	return HC(h, v, bit) ? json_integer(h->set & bit ? n : def) : NULL;
}

/* The dumps of the timing fields: seconds (a default for a ring's: def_ms, 0 none) or
 * counts. */
#define HC_DUMP(fn, helper, bit, member, def)                                               \
	static json_t *fn(const struct kr_cfg_field *f, const void *obj, const void *up,    \
			  unsigned v)                                                       \
	{                                                                                   \
		const struct kr_cfg_health *h = obj;                                        \
		(void)f; (void)up;                                                          \
		return helper(h, v, bit, h->member, def);                                   \
	}

HC_DUMP(hc_interval, hc_seconds, KR_HC_INTERVAL, interval_ms, KR_HC_DEF_INTERVAL_MS)
HC_DUMP(hc_timeout, hc_seconds, KR_HC_TIMEOUT, timeout_ms, 0)
HC_DUMP(hc_jitter, hc_seconds, KR_HC_JITTER, jitter_ms, 0)
HC_DUMP(hc_rise, hc_count, KR_HC_RISE, rise, KR_HC_DEF_RISE)
HC_DUMP(hc_fall, hc_count, KR_HC_FALL, fall, KR_HC_DEF_FALL)

static json_t *hc_panic(const struct kr_cfg_field *f, const void *obj, const void *up,
			unsigned v)
{
	const struct kr_cfg_health *h = obj;

	(void)f; (void)up; (void)v;
	return json_real(h->set & KR_HC_PANIC ? h->panic : KR_HC_DEF_PANIC);
}

HC_DUMP(hc_damp_suppress, hc_count, KR_HC_DAMP_SUPPRESS, damp_suppress, KR_HC_DEF_DAMP_SUPPRESS)
HC_DUMP(hc_damp_reuse, hc_count, KR_HC_DAMP_REUSE, damp_reuse, KR_HC_DEF_DAMP_REUSE)
HC_DUMP(hc_damp_half_life, hc_seconds, KR_HC_DAMP_HALF_LIFE, damp_half_life_ms,
	KR_HC_DEF_DAMP_HALF_LIFE_MS)
HC_DUMP(hc_damp_max_hold, hc_seconds, KR_HC_DAMP_MAX_HOLD, damp_max_hold_ms,
	KR_HC_DEF_DAMP_MAX_HOLD_MS)

static json_t *hc_watchdog(const struct kr_cfg_field *f, const void *obj, const void *up,
			   unsigned v)
{
	const struct kr_cfg_health *h = obj;

	(void)f; (void)up; (void)v;
	return json_real((h->set & KR_HC_WATCHDOG ? h->watchdog_ms : KR_HC_DEF_WATCHDOG_MS) /
			 1000.0);
}

/* The fields of "health", in config show's order (config_int.h). */
const struct kr_cfg_field cfg_health_fields[] = {
	KR_CFG_FIELD("probe", 0, hc_probe),
	KR_CFG_FIELD("name", 0, hc_name),
	KR_CFG_FIELD("rcodes", 0, hc_rcodes),
	KR_CFG_FIELD("request", 0, hc_request),
	KR_CFG_FIELD("expect", 0, hc_expect),
	KR_CFG_FIELD("interval", 0, hc_interval),
	KR_CFG_FIELD("timeout", 0, hc_timeout),
	KR_CFG_FIELD("jitter", 0, hc_jitter),
	KR_CFG_FIELD("rise", 0, hc_rise),
	KR_CFG_FIELD("fall", 0, hc_fall),
	KR_CFG_FIELD("panic_threshold", KR_CFG_V_RING, hc_panic),
	KR_CFG_FIELD("damp_suppress", 0, hc_damp_suppress),
	KR_CFG_FIELD("damp_reuse", 0, hc_damp_reuse),
	KR_CFG_FIELD("damp_half_life", 0, hc_damp_half_life),
	KR_CFG_FIELD("damp_max_hold", 0, hc_damp_max_hold),
	KR_CFG_FIELD("watchdog", KR_CFG_V_RING, hc_watchdog),
	{ .name = NULL },
};
