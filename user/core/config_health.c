// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* "health" objects of rings and backends (docs/config.md "Health checks"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "config_int.h"
#include "keyform.h"

static const char *const health_fields_ring[] = {
	"probe", "name", "rcodes", "request", "expect", "interval", "timeout", "rise", "fall",
	"jitter", "panic_threshold", NULL,
};
static const char *const health_fields_backend[] = {
	"probe", "name", "rcodes", "request", "expect", "interval", "timeout", "rise", "fall",
	"jitter", NULL,
};
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
	cfg_check_fields(c, v, ring ? health_fields_ring : health_fields_backend,
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

json_t *cfg_health_json(const struct kr_cfg_health *h, bool ring)
{
	json_t *o = json_object();

	/* a ring's: every default filled in (the probe "auto": the service's key type);
	 * a backend's: what it overrides */
	if (ring || (h->set & KR_HC_PROBE))
		json_object_set_new(o, "probe", json_string(kr_probe_name(h->probe)));
	if (h->set & KR_HC_NAME)
		json_object_set_new(o, "name", json_string(h->name));
	if (h->set & KR_HC_RCODES) {
		json_t *a = json_array();

		for (int r = 0; r < 16; r++)
			if (h->rcodes & (1u << r))
				json_array_append_new(a, r < 11 ? json_string(rcode_names[r]) :
							  json_integer(r));
		json_object_set_new(o, "rcodes", a);
	}
	if (h->set & KR_HC_REQUEST)
		json_object_set_new(o, "request", bytes_json(h->request, h->request_len));
	if (h->set & KR_HC_EXPECT)
		json_object_set_new(o, "expect", bytes_json(h->expect, h->expect_len));
	if (ring || (h->set & KR_HC_INTERVAL))
		json_object_set_new(o, "interval", json_real((h->set & KR_HC_INTERVAL ?
			h->interval_ms : KR_HC_DEF_INTERVAL_MS) / 1000.0));
	if (h->set & KR_HC_TIMEOUT)
		json_object_set_new(o, "timeout", json_real(h->timeout_ms / 1000.0));
	if (h->set & KR_HC_JITTER)
		json_object_set_new(o, "jitter", json_real(h->jitter_ms / 1000.0));
	if (ring || (h->set & KR_HC_RISE))
		json_object_set_new(o, "rise", json_integer(h->set & KR_HC_RISE ? h->rise :
							    KR_HC_DEF_RISE));
	if (ring || (h->set & KR_HC_FALL))
		json_object_set_new(o, "fall", json_integer(h->set & KR_HC_FALL ? h->fall :
							    KR_HC_DEF_FALL));
	if (ring)
		json_object_set_new(o, "panic_threshold", json_real(h->set & KR_HC_PANIC ?
							h->panic : KR_HC_DEF_PANIC));
	return o;
}
