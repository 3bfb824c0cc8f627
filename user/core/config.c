// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The configuration file: JSON (with // and # comments blanked out) -> struct kr_config,
 * validated completely.  Schema and rules: docs/config.md.
 *
 * This file is the schema walk (rings, backends, services, the top level), loading and
 * lookups.  Errors carry a JSON path (rings[1].backends[3].address) kept while descending,
 * and a line:column: config_pos.c.  The secret file: config_secret.c; the normalized dump:
 * config_dump.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <jansson.h>
#include "config.h"
#include "config_int.h"

/* ---- typed getters ---------------------------------------------------------------- */

static const char *jtype(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number with a fraction";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* Is field f one of variant v's (v 0: of any)? */
static bool field_in(const struct kr_cfg_field *f, unsigned v)
{
	return !v || !f->only || (f->only & v);
}

/* Every member of obj must be a field of table t (variant v). */
void cfg_check_fields(struct ctx *c, json_t *obj, enum kr_cfg_obj t, unsigned v, const char *what)
{
	const struct kr_cfg_field *fs = kr_cfg_objects[t].fields, *f;
	const char *key;
	json_t *val;
	char list[512];
	size_t o;

	json_object_foreach(obj, key, val) {
		for (f = fs; f->name; f++)
			if (field_in(f, v) && !strcmp(key, f->name))
				break;
		if (f->name)
			continue;
		o = 0;
		list[0] = 0;
		for (f = fs; f->name && o < sizeof(list); f++)
			if (field_in(f, v))
				o += snprintf(list + o, sizeof(list) - o, "%s%s", o ? ", " : "", f->name);
		cfg_push_key(c, key);
		cfg_nerr(c, "unknown field '%s' in %s (allowed: %s)", key, what, list);
		cfg_pop(c);
	}
}

void cfg_fields_parse(struct ctx *c, enum kr_cfg_obj t, unsigned v, json_t *o, void *obj,
		      void *up)
{
	for (const struct kr_cfg_field *f = kr_cfg_objects[t].fields; f->name; f++)
		if (f->parse && field_in(f, v) && json_object_get(o, f->name))
			f->parse(c, o, f, obj, up);
}

const char *cfg_jtype(const json_t *v)
{
	return jtype(v);
}

/* 1 absent, 0 ok, -1 error (reported). */
static int get_obj(struct ctx *c, json_t *obj, const char *key, json_t **out)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return 1;
	if (!json_is_object(v)) {
		cfg_kerr(c, key, "expected an object, got %s", jtype(v));
		return -1;
	}
	*out = v;
	return 0;
}

static int get_array(struct ctx *c, json_t *obj, const char *key, json_t **out)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return 1;
	if (!json_is_array(v)) {
		cfg_kerr(c, key, "expected an array, got %s", jtype(v));
		return -1;
	}
	*out = v;
	return 0;
}

static int get_str(struct ctx *c, json_t *obj, const char *key, const char **out)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return 1;
	if (!json_is_string(v)) {
		cfg_kerr(c, key, "expected a string, got %s", jtype(v));
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

static int get_uint(struct ctx *c, json_t *obj, const char *key, uint64_t min, uint64_t max,
		    uint64_t *out)
{
	json_t *v = json_object_get(obj, key);
	json_int_t i;

	if (!v)
		return 1;
	if (!json_is_integer(v)) {
		cfg_kerr(c, key, "expected an integer %llu..%llu, got %s", (unsigned long long)min,
		     (unsigned long long)max, jtype(v));
		return -1;
	}
	i = json_integer_value(v);
	if (i < 0 || (uint64_t)i < min || (uint64_t)i > max) {
		cfg_kerr(c, key, "%lld is out of range: expected %llu..%llu", (long long)i,
		     (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = (uint64_t)i;
	return 0;
}

/* A string among names[] (NULL-terminated): its index in *out. */
static int get_enum(struct ctx *c, json_t *obj, const char *key, const char *const *names,
		    int *out)
{
	const char *s;
	char list[256];
	size_t o = 0;
	int r = get_str(c, obj, key, &s);

	if (r)
		return r;
	for (int i = 0; names[i]; i++) {
		if (!strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	}
	list[0] = 0;
	for (int i = 0; names[i] && o < sizeof(list); i++)
		o += snprintf(list + o, sizeof(list) - o, "%s\"%s\"", i ? ", " : "", names[i]);
	cfg_kerr(c, key, "'%s' is not valid: expected one of %s", s, list);
	return -1;
}

int cfg_get_str(struct ctx *c, json_t *obj, const char *key, const char **out)
{
	return get_str(c, obj, key, out);
}

int cfg_get_uint(struct ctx *c, json_t *obj, const char *key, uint64_t min, uint64_t max,
		 uint64_t *out)
{
	return get_uint(c, obj, key, min, max, out);
}

int cfg_get_enum(struct ctx *c, json_t *obj, const char *key, const char *const *names, int *out)
{
	return get_enum(c, obj, key, names, out);
}

static int need(struct ctx *c, int r, const char *key, const char *what)
{
	if (r == 1)
		cfg_kerr(c, key, "missing: expected %s", what);
	return r;
}

/* Names of rings, services, the instance: [A-Za-z0-9_.-]{1,63}, not "." or "..". */
static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > KR_CFG_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr("_.-", s[i])))
			return false;
	return true;
}

static int get_name(struct ctx *c, json_t *obj, const char *key, char **out)
{
	const char *s;
	int r = need(c, get_str(c, obj, key, &s), key, "a name ([A-Za-z0-9_.-], 1..63 characters)");

	if (r)
		return r;
	if (!name_ok(s)) {
		cfg_kerr(c, key, "'%s' is not a valid name: expected 1..%d characters of "
		     "[A-Za-z0-9_.-], not '.' or '..'", s, KR_CFG_NAME_MAX);
		return -1;
	}
	*out = strdup(s);
	return *out ? 0 : -1;
}

/* ---- addresses (the engine's parser, user/core/addr.h) --------------------------------- */

/* "ip:port" / "[v6]:port" */
static int parse_sockaddr(struct ctx *c, const char *key, const char *s,
			  struct kr_sockaddr *a)
{
	struct kr_err e;

	if (kr_sockaddr_parse(s, a, &e) < 0) {
		cfg_kerr(c, key, "%s", e.msg);
		return -1;
	}
	return 0;
}

/* A bare IP (no port) of family 4/6 (0: either), through the same parser. */
static int parse_ip(struct ctx *c, const char *key, const char *s, int family,
		    struct kr_sockaddr *a)
{
	char buf[80];
	struct kr_err e;
	bool v6 = strchr(s, ':') != NULL;

	if (strlen(s) > 60 || strchr(s, '[') || strchr(s, ']') ||
	    snprintf(buf, sizeof(buf), v6 ? "[%s]:0" : "%s:0", s) < 0 ||
	    kr_sockaddr_parse(buf, a, &e) < 0) {
		cfg_kerr(c, key, "'%s' is not an IP address: expected %s", s,
		     family == 4 ? "an IPv4 address (10.0.0.1)" :
		     family == 6 ? "an IPv6 address (2001:db8::1)" :
				   "an IPv4 or IPv6 address, without port or brackets");
		return -1;
	}
	if (family && a->family != family) {
		cfg_kerr(c, key, "'%s' is an IPv%d address: expected an IPv%d address", s, a->family,
		     family);
		return -1;
	}
	return 0;
}

/* An IP that cannot be a unicast host (kr_ip_not_unicast()): an error naming what it is. */
static int check_unicast(struct ctx *c, const char *key, const struct kr_sockaddr *a,
			 const char *what)
{
	const char *why = kr_ip_not_unicast(a);
	struct kr_sockaddr v4;
	char ip[KR_IP_STRLEN], ip4[KR_IP_STRLEN];

	if (!why)
		return 0;
	kr_ip_format(a, ip);
	if (kr_ip_unmap(a, &v4)) {
		kr_ip_format(&v4, ip4);
		cfg_kerr(c, key, "%s is %s: %s; write %s", ip, why,
		     !strcmp(what, "a VIP") ? "as a VIP it can never match an IPv4 packet (the "
		     "data path matches IPv4 packets by their IPv4 address)" :
		     "it names an IPv4 host, reached over IPv4", ip4);
	} else {
		cfg_kerr(c, key, "%s is %s: %s must be a unicast address", ip, why, what);
	}
	return -1;
}

/* A backend's address: no unicast host is an error; an IPv4-mapped IPv6 address only a
 * warning -- the ring hashes it as written, as pingora-ketama does, so a ring that must
 * match one listing it may need it (an ipip service cannot reach it: check_service_ring). */
static void check_backend_addr(struct ctx *c, const struct kr_sockaddr *a)
{
	struct kr_sockaddr v4;
	char ip[KR_IP_STRLEN], ip4[KR_SOCKADDR_STRLEN];

	if (!kr_ip_unmap(a, &v4)) {
		check_unicast(c, "address", a, "a backend");
		return;
	}
	kr_ip_format(a, ip);
	kr_sockaddr_format(&v4, ip4);
	cfg_kwarn(c, "address", "%s is an IPv4-mapped IPv6 address: the IPv4 host %s, hashed "
		  "into the ring as written; write %s unless the ring must match one that lists "
		  "it so", ip, ip4, ip4);
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char end;

	if (strlen(s) != 17 ||
	    sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &end) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (!strchr("0123456789abcdefABCDEF", s[3 * i]) || !s[3 * i] ||
		    !strchr("0123456789abcdefABCDEF", s[3 * i + 1]) || !s[3 * i + 1])
			return -1;
		mac[i] = (uint8_t)v[i];
	}
	return 0;
}

/* ---- backends --------------------------------------------------------------------- */

static bool tag_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > KR_CFG_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr("_.:-", s[i])))
			return false;
	return true;
}

static int ring_tag(struct kr_cfg_ring *r, const char *tag, bool add)
{
	for (uint32_t i = 0; i < r->ntags; i++)
		if (!strcmp(r->tags[i], tag))
			return (int)i;
	if (!add || r->ntags == KR_CFG_MAX_TAGS)
		return -1;
	r->tags[r->ntags] = strdup(tag);
	return r->tags[r->ntags] ? (int)r->ntags++ : -1;
}

static void parse_tags(struct ctx *c, json_t *o, struct kr_cfg_ring *r,
		       struct kr_cfg_backend *b)
{
	json_t *arr, *t;
	size_t i;
	int bit;

	if (get_array(c, o, "tags", &arr))
		return;
	cfg_push_key(c, "tags");
	json_array_foreach(arr, i, t) {
		cfg_push_idx(c, i);
		if (!json_is_string(t)) {
			cfg_err(c, "expected a tag string, got %s", jtype(t));
		} else if (!tag_ok(json_string_value(t))) {
			cfg_err(c, "'%s' is not a valid tag: expected 1..%d characters of "
			     "[A-Za-z0-9_.:-]", json_string_value(t), KR_CFG_NAME_MAX);
		} else if ((bit = ring_tag(r, json_string_value(t), true)) < 0) {
			cfg_err(c, "tag '%s': a ring has at most %d distinct tags",
			     json_string_value(t), KR_CFG_MAX_TAGS);
		} else if (b->tags & (1ull << bit)) {
			cfg_err(c, "duplicate tag '%s'", json_string_value(t));
		} else {
			b->tags |= 1ull << bit;
		}
		cfg_pop(c);
	}
	cfg_pop(c);
}

/* "quic_lb_server_ids": {"<rotation 0..6>": "hex" or ["hex", ...]}: the backend's
 * QUIC-LB server IDs; checked against the services' configurations in
 * check_service_quic_lb(). */
static int qlb_sid_add(struct ctx *c, struct kr_cfg_backend *b, unsigned cr, json_t *v)
{
	struct kr_cfg_qlb_sid *n, *e;
	const char *h;
	size_t len;

	if (!json_is_string(v)) {
		cfg_err(c, "expected a server ID in hex (1..15 octets), got %s", jtype(v));
		return -1;
	}
	h = json_string_value(v);
	len = strlen(h);
	n = realloc(b->qlb_sids, (b->nqlb_sids + 1) * sizeof(*n));
	if (!n) {
		cfg_err(c, "out of memory");
		return -1;
	}
	b->qlb_sids = n;
	e = &n[b->nqlb_sids];
	memset(e, 0, sizeof(*e));
	if (len == 0 || len % 2 || len / 2 > KR_QLB_MAX_SID_LEN) {
		cfg_err(c, "'%s': a server ID is 1..15 octets in hex (2..30 hex digits)", h);
		return -1;
	}
	for (size_t i = 0; i < len; i += 2) {
		int hi = kr_hexval(h[i]), lo = kr_hexval(h[i + 1]);

		if (hi < 0 || lo < 0) {
			cfg_err(c, "'%s': not hex (a server ID is 1..15 octets in hex, e.g. \"0a01\")", h);
			return -1;
		}
		e->id[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	e->cr = (uint8_t)cr;
	e->len = (uint8_t)(len / 2);
	for (uint32_t i = 0; i < b->nqlb_sids; i++)
		if (b->qlb_sids[i].cr == cr && b->qlb_sids[i].len == e->len &&
		    !memcmp(b->qlb_sids[i].id, e->id, e->len)) {
			cfg_err(c, "'%s': listed twice for config rotation %u", h, cr);
			return -1;
		}
	b->nqlb_sids++;
	return 0;
}

static void parse_qlb_sids(struct ctx *c, json_t *o, struct kr_cfg_backend *b)
{
	const char *k;
	json_t *m, *v, *x;
	size_t i;

	if (get_obj(c, o, "quic_lb_server_ids", &m))
		return;
	cfg_push_key(c, "quic_lb_server_ids");
	json_object_foreach(m, k, v) {
		cfg_push_key(c, k);
		if (!(k[0] >= '0' && k[0] <= '6' && k[1] == 0)) {
			cfg_nerr(c, "'%s' is not a config rotation: expected \"0\"..\"6\" (the "
			     "\"config_rotation\" of a quic_lb configuration of the service)", k);
		} else if (json_is_array(v)) {
			if (json_array_size(v) == 0)
				cfg_err(c, "expected at least one server ID");
			json_array_foreach(v, i, x) {
				cfg_push_idx(c, i);
				qlb_sid_add(c, b, (unsigned)(k[0] - '0'), x);
				cfg_pop(c);
			}
		} else {
			qlb_sid_add(c, b, (unsigned)(k[0] - '0'), v);
		}
		cfg_pop(c);
	}
	cfg_pop(c);
}

static const char *const state_names[] = { "up", "down", "drain", NULL };

static void parse_backend(struct ctx *c, json_t *o, struct kr_cfg_ring *r,
			  struct kr_cfg_backend *b)
{
	static const uint8_t states[] = { KR_BACKEND_UP, KR_BACKEND_DOWN, KR_BACKEND_DRAIN };
	const char *s;
	json_t *v;
	uint64_t u;
	int e;

	if (!json_is_object(o)) {
		cfg_err(c, "expected a backend object {\"address\": \"ip:port\", ...}, got %s",
		     jtype(o));
		return;
	}
	cfg_check_fields(c, o, KR_CFG_OBJ_BACKEND, 0, "a backend");
	b->weight = 1;
	b->state = KR_BACKEND_UP;
	/* Port 0 is accepted: it is hashed into the points (pingora-ketama accepts it too)
	 * and the data path keeps the packet's destination port. */
	if (!need(c, get_str(c, o, "address", &s), "address", "\"<IPv4>:<port>\" or "
		  "\"[<IPv6>]:<port>\"") && !parse_sockaddr(c, "address", s, &b->addr))
		check_backend_addr(c, &b->addr);
	if (!get_uint(c, o, "weight", 0, UINT32_MAX, &u))
		b->weight = (uint32_t)u;
	if (!get_str(c, o, "mac", &s)) {
		if (parse_mac(s, b->mac))
			cfg_kerr(c, "mac", "'%s' is not a MAC address: expected six hex bytes "
			     "separated by ':' (02:00:00:00:00:0a)", s);
		else if (b->mac[0] & 1)
			cfg_kerr(c, "mac", "%s is a %s MAC address: a backend's MAC must be unicast "
			     "(first byte even)", s, memcmp(b->mac, "\xff\xff\xff\xff\xff\xff", 6) ?
			     "multicast" : "broadcast");
		else if (!memcmp(b->mac, "\0\0\0\0\0\0", 6))
			cfg_kerr(c, "mac", "%s is not a MAC address any host has", s);
		else
			b->has_mac = true;
	}
	if (!get_str(c, o, "dev", &s)) {
		if (!*s || strlen(s) >= KR_CFG_IFNAMSIZ || strchr(s, '/') || strchr(s, ' '))
			cfg_kerr(c, "dev", "'%s' is not a device name: expected 1..%d characters, "
			     "no '/' or spaces", s, KR_CFG_IFNAMSIZ - 1);
		else
			snprintf(b->dev, sizeof(b->dev), "%s", s);
	}
	if (!get_uint(c, o, "ifindex", 1, UINT32_MAX, &u))
		b->ifindex = (uint32_t)u;
	if (b->dev[0] && b->ifindex)
		cfg_kerr(c, "ifindex", "give either 'dev' or 'ifindex', not both");
	if (!get_uint(c, o, "id", 0, KR_DEFAULT_BACKEND_IDS - 1, &u)) {
		b->has_id = true;	/* a pinned backend id (config_ids.c) */
		b->id = (uint32_t)u;
	}
	parse_tags(c, o, r, b);
	if (!get_enum(c, o, "state", state_names, &e))
		b->state = states[e];
	parse_qlb_sids(c, o, b);
	if ((v = json_object_get(o, "spill"))) {
		if (!json_is_number(v) || json_number_value(v) < 0 ||
		    json_number_value(v) > KR_SPILL_MAX)
			cfg_kerr(c, "spill", "expected a fraction 0..%.2f (the share of the backend's "
				 "keys that walk on to the next backends), got %s", KR_SPILL_MAX,
				 json_is_number(v) ? "a number out of range" : jtype(v));
		else
			b->has_spill = true, b->spill = kr_spill_units(json_number_value(v));
	}
	if (json_object_get(o, "health")) {
		b->health = calloc(1, sizeof(*b->health));
		if (!b->health)
			cfg_err(c, "out of memory");
		else
			cfg_parse_health(c, o, false, b->health);
	}
	cfg_fields_parse(c, KR_CFG_OBJ_BACKEND, 0, o, b, r);
}

/* Backends compare as the hosts they are: an IPv4-mapped IPv6 address as its IPv4. */
static int host_cmp(const struct kr_sockaddr *a, const struct kr_sockaddr *b)
{
	struct kr_sockaddr x, y;

	kr_ip_unmap(a, &x);
	kr_ip_unmap(b, &y);
	return kr_sockaddr_cmp(&x, &y);
}

static int sa_cmp_idx(const void *a, const void *b, void *arg)
{
	const struct kr_cfg_backend *be = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int r = host_cmp(&be[i].addr, &be[j].addr);

	return r ? r : (i > j) - (i < j);
}

/* Duplicate addresses in one ring (parsed addresses only: family != 0). */
static void check_dup_backends(struct ctx *c, struct kr_cfg_ring *r)
{
	uint32_t *ix = malloc(sizeof(*ix) * (r->nbackends ? r->nbackends : 1)), n = 0;
	char a[KR_SOCKADDR_STRLEN], where[64];

	if (!ix) {
		cfg_err(c, "out of memory");
		return;
	}
	for (uint32_t i = 0; i < r->nbackends; i++)
		if (r->backends[i].addr.family)
			ix[n++] = i;
	qsort_r(ix, n, sizeof(*ix), sa_cmp_idx, r->backends);
	for (uint32_t k = 1; k < n; k++) {
		if (host_cmp(&r->backends[ix[k - 1]].addr, &r->backends[ix[k]].addr))
			continue;
		kr_sockaddr_format(&r->backends[ix[k]].addr, a);
		snprintf(where, sizeof(where), "backends[%u]", ix[k - 1]);
		cfg_push_key(c, "backends");
		cfg_push_idx(c, ix[k]);
		if (kr_sockaddr_cmp(&r->backends[ix[k - 1]].addr, &r->backends[ix[k]].addr))
			cfg_kwarn(c, "address", "%s is the same host as %s in ring '%s' (an "
				  "IPv4-mapped IPv6 address is its IPv4 address): two sets of points "
				  "for one host", a, where, r->name ? r->name : "?");
		else
			cfg_kerr(c, "address", "duplicate backend %s in ring '%s' (first at %s): a "
				 "ring lists each address once", a, r->name ? r->name : "?", where);
		cfg_pop(c);
		cfg_pop(c);
	}
	free(ix);
}

/*
 * One MAC for two hosts of one family on one egress device is, far more often than a
 * server with a secondary address, a copy-paste slip: l2 forwarding then sends the second
 * backend's keys to the first's host, which answers them (so its health checks pass too).
 * A warning at the second backend's "mac", naming the first.  (IPv4 and IPv6 addresses of
 * one MAC are a dual-stack host: not warned.)
 */
static void cfg_check_shared_macs(struct ctx *c)
{
	const struct kr_config *cfg = c->cfg;
	char a[KR_IP_STRLEN], b[KR_IP_STRLEN];

	for (uint32_t r = 0; r < cfg->nrings; r++)
		for (uint32_t i = 0; i < cfg->rings[r].nbackends; i++) {
			const struct kr_cfg_backend *x = &cfg->rings[r].backends[i];
			bool done = false;

			if (!x->has_mac)
				continue;
			for (uint32_t r2 = 0; r2 <= r && !done; r2++)
				for (uint32_t j = 0; j < (r2 == r ? i : cfg->rings[r2].nbackends) &&
				     !done; j++) {
					const struct kr_cfg_backend *y = &cfg->rings[r2].backends[j];

					if (!y->has_mac || memcmp(x->mac, y->mac, 6) ||
					    x->addr.family != y->addr.family ||
					    !memcmp(x->addr.ip, y->addr.ip,
						    x->addr.family == 4 ? 4 : 16) ||
					    strcmp(x->dev, y->dev) || x->ifindex != y->ifindex)
						continue;
					kr_ip_format(&x->addr, a);
					kr_ip_format(&y->addr, b);
					cfg_push_key(c, "rings");
					cfg_push_idx(c, r);
					cfg_push_key(c, "backends");
					cfg_push_idx(c, i);
					cfg_kwarn(c, "mac", "backend %s has the MAC of backend %s "
						  "(rings[%u].backends[%u]) on the same device: l2 "
						  "forwarding would send its keys to that host. A "
						  "copy-paste slip?", a, b, r2, j);
					cfg_pop(c);
					cfg_pop(c);
					cfg_pop(c);
					cfg_pop(c);
					done = true;
				}
		}
}

/* ---- rings ------------------------------------------------------------------------ */

static const char *const format_names[] = { "v1", "v2", NULL };

static void parse_point_multiple(struct ctx *c, json_t *o, struct kr_cfg_ring *r)
{
	json_t *v = json_object_get(o, "point_multiple"), *cv;
	uint64_t u;

	r->point_multiple = KR_CFG_DEFAULT_PM;
	if (v && json_is_string(v) && !strcmp(json_string_value(v), "auto")) {
		r->pm_auto = true;
		cv = json_object_get(o, "target_cv");
		if (!cv)
			cfg_kerr(c, "target_cv", "missing: \"point_multiple\": \"auto\" needs a "
			     "target_cv (the target load imbalance, e.g. 0.01)");
		else if (!json_is_number(cv) || json_number_value(cv) <= 0 ||
			 json_number_value(cv) >= 1)
			cfg_kerr(c, "target_cv", "expected a number between 0 and 1 (exclusive), "
			     "e.g. 0.01");
		else
			r->target_cv = json_number_value(cv);
		if (r->format == 1)
			cfg_kerr(c, "point_multiple", "\"auto\" needs format \"v2\" (v1 always has "
			     "%d points per weight unit)", KR_CFG_DEFAULT_PM);
		return;
	}
	if (json_object_get(o, "target_cv"))
		cfg_kerr(c, "target_cv", "only allowed with \"point_multiple\": \"auto\"");
	if (v && !json_is_integer(v)) {
		cfg_kerr(c, "point_multiple", "expected an integer 1..%u or \"auto\", got %s",
		     UINT32_MAX, jtype(v));
		return;
	}
	if (get_uint(c, o, "point_multiple", 1, UINT32_MAX, &u))
		return;
	if (r->format == 1 && u != KR_CFG_DEFAULT_PM)
		cfg_kerr(c, "point_multiple", "%llu: format \"v1\" always uses %d points per weight "
		     "unit (use format \"v2\" to choose)", (unsigned long long)u,
		     KR_CFG_DEFAULT_PM);
	r->point_multiple = (uint32_t)u;
}

static void resolve_auto(struct ctx *c, struct kr_cfg_ring *r)
{
	struct kr_err e = { "" };
	uint32_t pm = 0;

	if (kr_config_auto_point_multiple(r, r->target_cv, &pm, &e) < 0 || pm == 0) {
		cfg_kerr(c, "point_multiple", "\"auto\": %s",
			 e.msg[0] ? e.msg : "the planner failed");
		return;
	}
	r->point_multiple = pm;
}

#define KR_CFG_WARN_RING_BYTES	(256ull << 20)	/* a ring image this large gets a warning */

/* A ring whose image takes more than KR_CFG_WARN_RING_BYTES of kernel memory: legitimate
 * for a large pool, a typo (one weight of 1000000, a point_multiple of 4000000) otherwise.
 * Names the largest backend when it holds half the points or more, else point_multiple. */
static void warn_big_ring(struct ctx *c, struct kr_cfg_ring *r)
{
	uint64_t bytes = kr_cfg_ring_image_bytes(r), share;
	uint32_t big = 0;

	if (bytes <= KR_CFG_WARN_RING_BYTES)
		return;
	for (uint32_t i = 1; i < r->nbackends; i++)
		if (r->backends[i].weight > r->backends[big].weight)
			big = i;
	share = (uint64_t)r->backends[big].weight * r->point_multiple * 100 / r->npoints;
	if (r->format == 2 && r->point_multiple && (r->nbackends == 1 || share < 50)) {
		/* no backend stands out: the points come from point_multiple */
		cfg_kwarn(c, "point_multiple", "ring '%s' has %llu points, ~%llu MiB of kernel "
			  "memory: point_multiple %u x a total weight of %llu, no backend holding "
			  "more than %llu%% of them. Is the point_multiple meant? ('keyrouter plan' "
			  "says how many points an imbalance target needs)", r->name ? r->name : "?",
			  (unsigned long long)r->npoints, (unsigned long long)(bytes >> 20),
			  r->point_multiple, (unsigned long long)(r->npoints / r->point_multiple),
			  (unsigned long long)share);
		return;
	}
	cfg_push_key(c, "backends");
	cfg_push_idx(c, big);
	cfg_kwarn(c, "weight", "ring '%s' has %llu points, ~%llu MiB of kernel memory; its largest "
	      "backend, weight %u x point_multiple %u, holds %llu%% of them. Is the weight "
	      "meant? ('keyrouter plan' says how many points an imbalance target needs)",
	      r->name ? r->name : "?", (unsigned long long)r->npoints,
	      (unsigned long long)(bytes >> 20), r->backends[big].weight, r->point_multiple,
	      (unsigned long long)share);
	cfg_pop(c);
	cfg_pop(c);
}

/* Points per backend and in total, without overflow. */
static void count_points(struct ctx *c, struct kr_cfg_ring *r)
{
	uint64_t total = 0, p;

	for (uint32_t i = 0; i < r->nbackends; i++) {
		p = (uint64_t)r->backends[i].weight * r->point_multiple;
		if (p > UINT32_MAX) {
			cfg_push_key(c, "backends");
			cfg_push_idx(c, i);
			cfg_kerr(c, "weight", "weight %u x point_multiple %u = %llu points: more than "
			     "%u points for one backend (overflow); lower the weight or the "
			     "point_multiple", r->backends[i].weight, r->point_multiple,
			     (unsigned long long)p, UINT32_MAX);
			cfg_pop(c);
			cfg_pop(c);
			return;
		}
		total += p;
	}
	r->npoints = total;
	if (total > KR_MAX_POINTS)
		cfg_err(c, "%llu points (sum of weight x point_multiple): more than %u, the largest "
		     "ring the kernel image holds; lower the weights or the point_multiple",
		     (unsigned long long)total, KR_MAX_POINTS);
	else if (total == 0 && r->nbackends)
		cfg_err(c, "the ring has no points: every backend has weight 0 (a drained "
		     "backend keeps its weight and uses \"state\": \"drain\")");
	else
		warn_big_ring(c, r);
}

static void parse_ring(struct ctx *c, json_t *o, struct kr_cfg_ring *r)
{
	json_t *arr, *b;
	size_t i, n;
	int e, errs = c->nerr;

	if (!json_is_object(o)) {
		cfg_err(c, "expected a ring object {\"name\": ..., \"format\": ..., \"backends\": "
		     "[...]}, got %s", jtype(o));
		return;
	}
	cfg_check_fields(c, o, KR_CFG_OBJ_RING, 0, "a ring");
	get_name(c, o, "name", &r->name);
	if (!need(c, get_enum(c, o, "format", format_names, &e), "format", "\"v1\" or \"v2\""))
		r->format = (uint32_t)e + 1;
	parse_point_multiple(c, o, r);
	cfg_parse_health(c, o, true, &r->health);
	if (need(c, get_array(c, o, "backends", &arr), "backends", "an array of backends"))
		return;
	n = json_array_size(arr);
	if (n == 0) {
		cfg_kerr(c, "backends", "empty: a ring needs at least one backend");
		return;
	}
	if (n > KR_MAX_BACKENDS) {
		cfg_kerr(c, "backends", "%zu backends: at most %u per ring (the ring-local backend "
		     "index is 16 bits)", n, KR_MAX_BACKENDS);
		return;
	}
	r->backends = calloc(n, sizeof(*r->backends));
	if (!r->backends) {
		cfg_err(c, "out of memory for %zu backends", n);
		return;
	}
	r->nbackends = (uint32_t)n;
	cfg_push_key(c, "backends");
	json_array_foreach(arr, i, b) {
		cfg_push_idx(c, i);
		parse_backend(c, b, r, &r->backends[i]);
		cfg_pop(c);
	}
	cfg_pop(c);
	check_dup_backends(c, r);
	cfg_fields_parse(c, KR_CFG_OBJ_RING, 0, o, r, c->cfg);
	if ((int)c->nerr != errs)
		return;
	if (r->pm_auto)
		resolve_auto(c, r);
	if ((int)c->nerr == errs)
		count_points(c, r);
}

static void parse_rings(struct ctx *c, json_t *root)
{
	struct kr_config *cfg = c->cfg;
	json_t *arr, *o;
	size_t i, n;

	if (need(c, get_array(c, root, "rings", &arr), "rings", "an array of rings"))
		return;
	n = json_array_size(arr);
	if (n == 0 || n > KR_MAX_RINGS) {
		cfg_kerr(c, "rings", "%zu rings: expected 1..%u", n, KR_MAX_RINGS);
		return;
	}
	cfg->rings = calloc(n, sizeof(*cfg->rings));
	if (!cfg->rings) {
		cfg_err(c, "out of memory");
		return;
	}
	cfg->nrings = (uint32_t)n;
	cfg_push_key(c, "rings");
	json_array_foreach(arr, i, o) {
		cfg_push_idx(c, i);
		parse_ring(c, o, &cfg->rings[i]);
		for (size_t j = 0; j < i && cfg->rings[i].name; j++) {
			if (cfg->rings[j].name && !strcmp(cfg->rings[i].name, cfg->rings[j].name))
				cfg_kerr(c, "name", "duplicate ring name '%s' (also rings[%zu])",
				     cfg->rings[i].name, j);
		}
		cfg_pop(c);
	}
	cfg_pop(c);
}

/* ---- services --------------------------------------------------------------------- */

static const char *const key_type_names[] = {	/* index + 1 = enum kr_key_type */
	"tuple", "payload", "dns", "memcache", "quic", NULL,
};

static void parse_delimiter(struct ctx *c, json_t *o, struct kr_keyspec *k)
{
	json_t *v = json_object_get(o, "delimiter");
	uint64_t u;

	if (!v)
		return;
	if (json_is_string(v)) {
		if (json_string_length(v) != 1)
			cfg_kerr(c, "delimiter", "'%s': expected one byte (a one-character string "
			     "such as \"\\n\", or an integer 0..255)", json_string_value(v));
		else
			k->delimiter = (uint8_t)json_string_value(v)[0];
	} else if (!get_uint(c, o, "delimiter", 0, 255, &u)) {
		k->delimiter = (int)u;
	}
}

static void parse_key(struct ctx *c, json_t *svc, struct kr_keyspec *k)
{
	json_t *o;
	uint64_t u;
	int t;

	k->delimiter = -1;
	if (need(c, get_obj(c, svc, "key", &o), "key", "an object {\"type\": ...}"))
		return;
	cfg_push_key(c, "key");
	if (need(c, get_enum(c, o, "type", key_type_names, &t), "type",
		 "one of \"tuple\", \"payload\", \"dns\", \"memcache\", \"quic\"")) {
		cfg_pop(c);
		return;
	}
	k->type = (enum kr_key_type)(t + 1);
	switch (k->type) {
	case KR_KEY_PAYLOAD:
		cfg_check_fields(c, o, KR_CFG_OBJ_KEY, KR_CFG_V_KEY(k->type), "a payload key");
		if (!get_uint(c, o, "offset", 0, KR_MAX_PAYLOAD_OFFSET, &u))
			k->offset = (uint32_t)u;
		if (!get_uint(c, o, "length", 1, KR_MAX_KEY_LEN, &u))
			k->length = (uint32_t)u;
		parse_delimiter(c, o, k);
		if (k->length && k->delimiter >= 0)
			cfg_kerr(c, "delimiter", "give either 'length' or 'delimiter', not both");
		break;
	case KR_KEY_QUIC:
		cfg_check_fields(c, o, KR_CFG_OBJ_KEY, KR_CFG_V_KEY(k->type), "a quic key");
		if (!need(c, get_uint(c, o, "cid_length", 1, KR_QUIC_MAX_CID, &u), "cid_length",
			  "the connection ID length of short-header packets, 1..20"))
			k->cid_length = (uint32_t)u;
		break;
	default:
		cfg_check_fields(c, o, KR_CFG_OBJ_KEY, KR_CFG_V_KEY(k->type),
				 "a tuple/dns/memcache key");
		break;
	}
	cfg_fields_parse(c, KR_CFG_OBJ_KEY, KR_CFG_V_KEY(k->type), o, k, svc);
	cfg_pop(c);
}

/* vip: "*" (any, both families), "0.0.0.0", "::", or an address. */
static void parse_vip(struct ctx *c, json_t *o, struct kr_cfg_service *s)
{
	const char *v;

	if (need(c, get_str(c, o, "vip", &v), "vip", "an IP address, or \"*\", \"0.0.0.0\", "
		 "\"::\" for any address"))
		return;
	if (!strcmp(v, "*")) {
		s->vip_any = true;
		return;
	}
	if (parse_ip(c, "vip", v, 0, &s->vip))
		return;
	if (!memcmp(s->vip.ip, (uint8_t[16]){ 0 }, 16)) {
		/* "0.0.0.0" / "::": the data path has one wildcard (both families) */
		s->vip_any = true;
		s->vip.family = 0;
		return;
	}
	check_unicast(c, "vip", &s->vip, "a VIP");
}

static const char *const fwd_modes[] = { "l2", "ipip", NULL };

static void parse_forward(struct ctx *c, json_t *svc, struct kr_cfg_service *s)
{
	struct kr_sockaddr a;
	const char *v;
	json_t *o;
	int m;

	if (need(c, get_obj(c, svc, "forward", &o), "forward", "an object {\"mode\": \"l2\" "
		 "or \"ipip\"}"))
		return;
	cfg_push_key(c, "forward");
	if (need(c, get_enum(c, o, "mode", fwd_modes, &m), "mode", "\"l2\" or \"ipip\"")) {
		cfg_pop(c);
		return;
	}
	s->fwd.mode = m == 0 ? KR_FWD_L2 : KR_FWD_IPIP;
	cfg_check_fields(c, o, KR_CFG_OBJ_FORWARD, m == 0 ? KR_CFG_V_L2 : KR_CFG_V_IPIP,
			 m == 0 ? "l2 forwarding" : "ipip forwarding");
	if (m == 1 && !get_str(c, o, "source4", &v) && !parse_ip(c, "source4", v, 4, &a) &&
	    !check_unicast(c, "source4", &a, "the outer source of ipip packets")) {
		memcpy(s->fwd.source4, a.ip, 4);
		s->fwd.has_source4 = true;
	}
	if (m == 1 && !get_str(c, o, "source6", &v) && !parse_ip(c, "source6", v, 6, &a) &&
	    !check_unicast(c, "source6", &a, "the outer source of ipip packets")) {
		memcpy(s->fwd.source6, a.ip, 16);
		s->fwd.has_source6 = true;
	}
	cfg_fields_parse(c, KR_CFG_OBJ_FORWARD, m == 0 ? KR_CFG_V_L2 : KR_CFG_V_IPIP, o, s, NULL);
	cfg_pop(c);
}


/* Every field of "policy" is parsed by its table (config_dump.c). */
static void parse_policy(struct ctx *c, json_t *svc, struct kr_cfg_service *s)
{
	json_t *o;

	if (get_obj(c, svc, "policy", &o))
		return;
	cfg_push_key(c, "policy");
	cfg_check_fields(c, o, KR_CFG_OBJ_POLICY, 0, "a policy");
	cfg_fields_parse(c, KR_CFG_OBJ_POLICY, 0, o, s, NULL);
	cfg_pop(c);
}

static void parse_subset(struct ctx *c, json_t *svc, struct kr_cfg_service *s,
			 const struct kr_cfg_ring *r)
{
	json_t *arr, *t;
	size_t i;
	int bit;

	if (get_array(c, svc, "subset", &arr))
		return;
	if (json_array_size(arr) == 0) {
		cfg_kerr(c, "subset", "empty: list the tags the backends must carry, or leave "
		     "'subset' out to use the whole ring");
		return;
	}
	s->subset = calloc(json_array_size(arr), sizeof(*s->subset));
	if (!s->subset)
		return;
	cfg_push_key(c, "subset");
	json_array_foreach(arr, i, t) {
		cfg_push_idx(c, i);
		if (!json_is_string(t)) {
			cfg_err(c, "expected a tag string, got %s", jtype(t));
		} else if (!r) {
			;	/* the ring is missing: reported already */
		} else if ((bit = ring_tag((struct kr_cfg_ring *)r, json_string_value(t),
					   false)) < 0) {
			cfg_err(c, "tag '%s': no backend of ring '%s' carries it", json_string_value(t),
			     r->name);
		} else {
			s->subset_mask |= 1ull << bit;
			s->subset[s->nsubset++] = strdup(json_string_value(t));
		}
		cfg_pop(c);
	}
	cfg_pop(c);
}

/* What the ring's backends must provide for this service (MACs, outer sources). */
static void check_service_ring(struct ctx *c, struct kr_cfg_service *s, uint32_t ri)
{
	const struct kr_cfg_ring *r = &c->cfg->rings[ri];
	bool v4 = false, v6 = false, any = false;
	char a[KR_SOCKADDR_STRLEN];

	for (uint32_t i = 0; i < r->nbackends; i++) {
		const struct kr_cfg_backend *b = &r->backends[i];

		if (!kr_cfg_in_subset(s, b))
			continue;
		any = any || b->weight > 0;
		v4 = v4 || b->addr.family == 4;
		v6 = v6 || b->addr.family == 6;
		if (s->fwd.mode == KR_FWD_IPIP && b->addr.family == 6 &&
		    kr_ip_not_unicast(&b->addr)) {
			kr_sockaddr_format(&b->addr, a);
			cfg_kerr(c, "forward", "mode \"ipip\" cannot reach rings[%u].backends[%u] "
				 "(%s, an IPv4-mapped IPv6 address): give it as an IPv4 address",
				 ri, i, a);
			return;
		}
		if (s->fwd.mode == KR_FWD_L2 && !b->has_mac) {
			kr_sockaddr_format(&b->addr, a);
			cfg_kerr(c, "forward", "mode \"l2\" needs the MAC of every backend: "
			     "rings[%u].backends[%u] (%s) has no \"mac\"", ri, i, a);
			return;
		}
	}
	if (!any) {
		cfg_kerr(c, s->nsubset ? "subset" : "ring", "no backend with weight > 0 %s ring '%s'",
		     s->nsubset ? "carries these tags in" : "in", r->name);
		return;
	}
	if (s->fwd.mode != KR_FWD_IPIP)
		return;
	if (v4 && !s->fwd.has_source4)
		cfg_kerr(c, "forward", "mode \"ipip\" needs \"source4\" (outer IPv4 source): ring "
		     "'%s' has IPv4 backends", r->name);
	if (v6 && !s->fwd.has_source6)
		cfg_kerr(c, "forward", "mode \"ipip\" needs \"source6\" (outer IPv6 source): ring "
		     "'%s' has IPv6 backends", r->name);
}

/* ---- QUIC-LB (docs/quic.md) -------------------------------------------------------- */


/* "quic_lb": [{"config_rotation": 0..6, "server_id_length": 1..15, "nonce_length": 4..18,
 * "server_use_length": 0.., "key_file": "..."}, ...]: at most 7, one per rotation. */
static void parse_quic_lb(struct ctx *c, json_t *svc, struct kr_cfg_service *s)
{
	json_t *arr, *o;
	size_t i, n;

	if (get_array(c, svc, "quic_lb", &arr))
		return;
	if (s->key.type && s->key.type != KR_KEY_QUIC) {
		cfg_kerr(c, "quic_lb", "QUIC-LB needs \"key\": {\"type\": \"quic\", ...}: this "
		     "service's key is %s", kr_key_type_name(s->key.type));
		return;
	}
	n = json_array_size(arr);
	if (n == 0 || n > KR_QLB_MAX_CONFIGS) {
		cfg_kerr(c, "quic_lb", "%zu configurations: expected 1..%d (config rotations 0..6)", n,
		     KR_QLB_MAX_CONFIGS);
		return;
	}
	s->qlb = calloc(n, sizeof(*s->qlb));
	if (!s->qlb) {
		cfg_err(c, "out of memory");
		return;
	}
	cfg_push_key(c, "quic_lb");
	json_array_foreach(arr, i, o) {
		struct kr_cfg_qlb *q = &s->qlb[s->nqlb];
		uint64_t cr = 0, sl = 0, nl = 0, su = 0;
		const char *kf;
		int bad = 0;

		cfg_push_idx(c, i);
		if (!json_is_object(o)) {
			cfg_err(c, "expected a QUIC-LB configuration {\"config_rotation\": 0..6, "
			     "\"server_id_length\": 1..15, \"nonce_length\": 4..18, ...}, got %s",
			     jtype(o));
			cfg_pop(c);
			continue;
		}
		cfg_check_fields(c, o, KR_CFG_OBJ_QUIC_LB, 0, "a QUIC-LB configuration");
		bad |= need(c, get_uint(c, o, "config_rotation", 0, KR_QLB_MAX_CONFIGS - 1, &cr),
			    "config_rotation", "0..6 (the top 3 bits of the CID's first octet; 7 "
			    "marks unroutable CIDs)") != 0;
		bad |= need(c, get_uint(c, o, "server_id_length", KR_QLB_MIN_SID_LEN,
					KR_QLB_MAX_SID_LEN, &sl), "server_id_length",
			    "the server ID length in octets, 1..15") != 0;
		bad |= need(c, get_uint(c, o, "nonce_length", KR_QLB_MIN_NONCE_LEN,
					KR_QLB_MAX_NONCE_LEN, &nl), "nonce_length",
			    "the nonce length in octets, 4..18") != 0;
		bad |= get_uint(c, o, "server_use_length", 0, KR_QLB_MAX_PLAIN_LEN -
				KR_QLB_MIN_SID_LEN - KR_QLB_MIN_NONCE_LEN, &su) < 0;
		if (!bad && sl + nl + su > KR_QLB_MAX_PLAIN_LEN) {
			char sus[40] = "";

			if (su)
				snprintf(sus, sizeof(sus), " + server_use_length %u", (unsigned)su);
			cfg_err(c, "server_id_length %u + nonce_length %u%s = %u octets after the "
			     "first: the connection ID would be %u octets, QUIC allows 20 (at most "
			     "19 after the first octet)", (unsigned)sl, (unsigned)nl, sus,
			     (unsigned)(sl + nl + su), (unsigned)(1 + sl + nl + su));
			bad = 1;
		}
		for (uint32_t j = 0; !bad && j < s->nqlb; j++)
			if (s->qlb[j].cr == cr) {
				cfg_kerr(c, "config_rotation", "config rotation %u is configured twice "
				     "in this service", (unsigned)cr);
				bad = 1;
			}
		if (!get_str(c, o, "key_file", &kf)) {
			if (cfg_load_key_file(c, "key_file", kf, q->key, &q->key_file) == 0)
				q->has_key = true;
			else
				bad = 1;
		}
		cfg_fields_parse(c, KR_CFG_OBJ_QUIC_LB, 0, o, q, s);
		if (!bad) {
			q->cr = (uint8_t)cr;
			q->sid_len = (uint8_t)sl;
			q->nonce_len = (uint8_t)nl;
			q->su_len = (uint8_t)su;
			s->nqlb++;
		} else {
			free(q->key_file);
			memset(q, 0, sizeof(*q));
		}
		cfg_pop(c);
	}
	cfg_pop(c);
}

/* An error at rings[ri].backends[bi].quic_lb_server_ids.<cr>, from anywhere. */
static void qlb_sid_err(struct ctx *c, uint32_t ri, uint32_t bi, unsigned cr, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void qlb_sid_err(struct ctx *c, uint32_t ri, uint32_t bi, unsigned cr, const char *fmt, ...)
{
	struct seg saved[CFG_MAX_DEPTH];
	int depth = c->depth;
	char k[2] = { (char)('0' + cr), 0 }, msg[768];
	va_list ap;

	memcpy(saved, c->path, sizeof(saved));
	c->depth = 0;
	cfg_push_key(c, "rings");
	cfg_push_idx(c, ri);
	cfg_push_key(c, "backends");
	cfg_push_idx(c, bi);
	cfg_push_key(c, "quic_lb_server_ids");
	cfg_push_key(c, k);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cfg_err(c, "%s", msg);
	memcpy(c->path, saved, sizeof(saved));
	c->depth = depth;
}

void cfg_qlb_hex(const uint8_t *p, unsigned n, char *out)
{
	for (unsigned i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = 0;
}

/* The server IDs of the service's backends fit its configurations and are unique. */
static void check_service_quic_lb(struct ctx *c, struct kr_cfg_service *s, uint32_t ri)
{
	const struct kr_cfg_ring *r = &c->cfg->rings[ri];
	char h[32];

	if (!s->nqlb)
		return;
	for (uint32_t i = 0; i < r->nbackends; i++) {
		const struct kr_cfg_backend *b = &r->backends[i];

		if (!kr_cfg_in_subset(s, b))
			continue;
		for (uint32_t k = 0; k < b->nqlb_sids; k++) {
			const struct kr_cfg_qlb_sid *e = &b->qlb_sids[k];
			const struct kr_cfg_qlb *q = kr_cfg_qlb_find(s, e->cr);

			cfg_qlb_hex(e->id, e->len, h);
			if (!q) {
				qlb_sid_err(c, ri, i, e->cr, "server ID '%s' for config rotation %u: "
					    "service '%s' (on this ring) has no quic_lb configuration "
					    "with \"config_rotation\": %u", h, e->cr, s->name, e->cr);
				continue;
			}
			if (e->len != q->sid_len) {
				qlb_sid_err(c, ri, i, e->cr, "server ID '%s' is %u octets: config "
					    "rotation %u of service '%s' has \"server_id_length\": %u",
					    h, e->len, e->cr, s->name, q->sid_len);
				continue;
			}
			for (uint32_t j = 0; j < i; j++) {
				const struct kr_cfg_backend *o = &r->backends[j];

				if (!kr_cfg_in_subset(s, o))
					continue;
				for (uint32_t m = 0; m < o->nqlb_sids; m++)
					if (o->qlb_sids[m].cr == e->cr && o->qlb_sids[m].len == e->len &&
					    !memcmp(o->qlb_sids[m].id, e->id, e->len))
						qlb_sid_err(c, ri, i, e->cr, "duplicate server ID '%s' "
							    "for config rotation %u (also rings[%u]."
							    "backends[%u]): a server ID names one backend",
							    h, e->cr, ri, j);
			}
		}
	}
}

static void parse_service(struct ctx *c, json_t *o, struct kr_cfg_service *s)
{
	const char *v;
	uint64_t u;
	int ri = -1, errs = c->nerr;

	if (!json_is_object(o)) {
		cfg_err(c, "expected a service object {\"name\": ..., \"vip\": ..., ...}, got %s",
		     jtype(o));
		return;
	}
	cfg_check_fields(c, o, KR_CFG_OBJ_SERVICE, 0, "a service");
	get_name(c, o, "name", &s->name);
	parse_vip(c, o, s);
	if (!need(c, get_uint(c, o, "port", 1, 65535, &u), "port", "a port 1..65535"))
		s->port = (uint16_t)u;
	s->vip.port = s->port;
	s->protocol = IPPROTO_UDP;
	if (!get_str(c, o, "protocol", &v) && strcmp(v, "udp"))
		cfg_kerr(c, "protocol", "'%s' is not supported: expected \"udp\"", v);
	parse_key(c, o, &s->key);
	if (!need(c, get_str(c, o, "ring", &v), "ring", "the name of a ring")) {
		ri = kr_config_ring(c->cfg, v);
		if (ri < 0)
			cfg_kerr(c, "ring", "no ring named '%s' in \"rings\"", v);
		else
			s->ring = (uint32_t)ri;
	}
	parse_subset(c, o, s, ri >= 0 ? &c->cfg->rings[ri] : NULL);
	parse_forward(c, o, s);
	parse_policy(c, o, s);
	parse_quic_lb(c, o, s);
	cfg_fields_parse(c, KR_CFG_OBJ_SERVICE, 0, o, s, c->cfg);
	if (ri >= 0 && (int)c->nerr == errs)
		check_service_ring(c, s, (uint32_t)ri);
	if (ri >= 0 && (int)c->nerr == errs)
		check_service_quic_lb(c, s, (uint32_t)ri);
}

/* Two services on the same (address, port, protocol); "*" overlaps both wildcards. */
static bool vip_clash(const struct kr_cfg_service *a, const struct kr_cfg_service *b)
{
	if (a->port != b->port || a->protocol != b->protocol)
		return false;
	if (a->vip_any != b->vip_any)
		return false;
	return a->vip.family == b->vip.family && !memcmp(a->vip.ip, b->vip.ip, 16);
}

static void parse_services(struct ctx *c, json_t *root)
{
	struct kr_config *cfg = c->cfg;
	json_t *arr, *o;
	size_t i, n;

	if (get_array(c, root, "services", &arr))
		return;
	n = json_array_size(arr);
	if (n > KR_CFG_MAX_SERVICES) {
		cfg_kerr(c, "services", "%zu services: at most %u", n, KR_CFG_MAX_SERVICES);
		return;
	}
	cfg->services = calloc(n ? n : 1, sizeof(*cfg->services));
	if (!cfg->services) {
		cfg_err(c, "out of memory");
		return;
	}
	cfg->nservices = (uint32_t)n;
	cfg_push_key(c, "services");
	json_array_foreach(arr, i, o) {
		struct kr_cfg_service *s = &cfg->services[i];

		cfg_push_idx(c, i);
		parse_service(c, o, s);
		for (size_t j = 0; j < i; j++) {
			struct kr_cfg_service *t = &cfg->services[j];

			if (s->name && t->name && !strcmp(s->name, t->name))
				cfg_kerr(c, "name", "duplicate service name '%s' (also services[%zu])",
				     s->name, j);
			else if (s->port && vip_clash(s, t))
				cfg_kerr(c, "vip", "service '%s' uses the same address, port %u and "
				     "protocol udp as services[%zu] '%s'%s", s->name ? s->name : "?",
				     s->port, j, t->name ? t->name : "?", s->vip_any ?
				     " (\"*\", \"0.0.0.0\" and \"::\" are the same wildcard: any "
				     "address of either family)" : "");
		}
		cfg_pop(c);
	}
	cfg_pop(c);
}

/* ---- top level -------------------------------------------------------------------- */


static void parse_hash(struct ctx *c, json_t *root)
{
	const char *f = "crc32", *file;
	int has_file, r;
	json_t *o;

	if (get_obj(c, root, "hash", &o))
		return;
	cfg_push_key(c, "hash");
	cfg_check_fields(c, o, KR_CFG_OBJ_HASH, 0, "hash");
	has_file = !get_str(c, o, "secret_file", &file);
	r = get_str(c, o, "function", &f);
	if (r >= 0) {
		if (!strcmp(f, "siphash13")) {
			c->cfg->hash.keyed = true;
			if (!has_file)
				cfg_kerr(c, "function", "\"siphash13\" needs \"secret_file\": a file "
				     "holding the 128-bit secret in hex (mode 0600)");
		} else if (strcmp(f, "crc32")) {
			cfg_kerr(c, "function", "'%s': expected \"crc32\" (the ketama hash, the "
			     "default) or \"siphash13\" (keyed, needs secret_file)", f);
		} else if (has_file) {
			cfg_kerr(c, "secret_file", "only with \"function\": \"siphash13\"");
		}
	}
	if (c->cfg->hash.keyed && has_file)
		cfg_load_secret(c, file);
	cfg_fields_parse(c, KR_CFG_OBJ_HASH, 0, o, &c->cfg->hash, c->cfg);
	cfg_pop(c);
}

static void parse_root(struct ctx *c, json_t *root)
{
	const char *inst;

	if (!json_is_object(root)) {
		cfg_err(c, "expected an object {\"rings\": [...], \"services\": [...]} at the top, "
		     "got %s", jtype(root));
		return;
	}
	cfg_check_fields(c, root, KR_CFG_OBJ_TOP, 0, "the configuration");
	if (!get_str(c, root, "instance", &inst)) {
		if (!name_ok(inst))
			cfg_kerr(c, "instance", "'%s' is not a valid instance name: expected 1..%d "
			     "characters of [A-Za-z0-9_.-], not '.' or '..'", inst,
			     KR_CFG_NAME_MAX);
		else
			c->cfg->instance = strdup(inst);
	}
	c->cfg->max_move = KR_CFG_DEFAULT_MAX_MOVE;
	if (json_object_get(root, "max_move")) {
		json_t *m = json_object_get(root, "max_move");
		double d = json_is_number(m) ? json_number_value(m) : -1;

		if (!(d > 0 && d <= 1))
			cfg_kerr(c, "max_move", "expected a share 0..1 (above 0) of a ring's keys "
				 "that one apply may move at once (default %g; 1: no limit)",
				 KR_CFG_DEFAULT_MAX_MOVE);
		else
			c->cfg->max_move = d;
		c->cfg->has_max_move = true;
	}
	parse_hash(c, root);
	parse_rings(c, root);
	if (!c->nerr)
		cfg_check_backend_ids(c);
	if (!c->nerr)
		cfg_check_shared_macs(c);
	parse_services(c, root);
	cfg_fields_parse(c, KR_CFG_OBJ_TOP, 0, root, c->cfg, NULL);
	if (!c->nerr)
		cfg_parse_hot_keys(c, root);
}

struct kr_config *kr_config_parse(const char *file, const char *text, size_t len,
				  char **errs)
{
	struct ctx c = { .file = file };
	json_error_t je;
	json_t *root = NULL;
	char *t = malloc(len + 1);
	char line[512];

	*errs = NULL;
	c.cfg = calloc(1, sizeof(*c.cfg));
	if (!t || !c.cfg) {
		snprintf(line, sizeof(line), "%s: out of memory", file);
		cfg_add_msg(&c, 0, 0, line);
		c.nerr++;
		goto out;
	}
	memcpy(t, text, len);
	t[len] = 0;
	kr_config_strip_comments(t, len);
	c.cfg->file = strdup(file);
	root = json_loadb(t, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snprintf(line, sizeof(line), "%s:%d:%d: invalid JSON: %s", file, je.line,
			 je.column, je.text);
		cfg_add_msg(&c, 0, 0, line);
		c.nerr++;
		goto out;
	}
	c.text = t;
	c.len = len;
	parse_root(&c, root);
out:
	json_decref(root);
	free(t);
	if (c.nerr) {
		/* the warnings go with the errors, in file order */
		for (unsigned i = 0; i < c.nwmsgs; i++)
			cfg_add_msg(&c, c.wmsgs[i].line, c.wmsgs[i].col, c.wmsgs[i].text);
		for (unsigned i = 0; i < c.nwmsgs; i++)
			free(c.wmsgs[i].text);
		free(c.wmsgs);
		kr_config_free(c.cfg);
		*errs = cfg_msgs_join(&c);
		if (!*errs)
			*errs = strdup("out of memory\n");
		return NULL;
	}
	free(cfg_msgs_join(&c));
	c.msgs = c.wmsgs;
	c.nmsgs = c.nwmsgs;
	c.cfg->warnings = c.nmsgs ? cfg_msgs_join(&c) : NULL;
	return c.cfg;
}

#define KR_CFG_MAX_FILE (256u << 20)	/* 65536 backends x 16 rings is ~60 MiB of JSON */

/* The whole stream into a malloc'd buffer; -1 with errno on failure. */
static int read_all(FILE *f, char **out, size_t *outlen)
{
	size_t len = 0, cap = 0, n;
	char *buf = NULL, *nb;

	for (;;) {
		if (len + 65536 + 1 > cap) {
			cap = cap * 2 + 65536 + 1;
			nb = cap > KR_CFG_MAX_FILE + 65536 + 1 ? NULL : realloc(buf, cap);
			if (!nb) {
				free(buf);
				errno = cap > KR_CFG_MAX_FILE ? EFBIG : ENOMEM;
				return -1;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		return -1;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

struct kr_config *kr_config_load(const char *file, char **errs)
{
	bool std_in = !strcmp(file, "-");
	const char *name = std_in ? "<stdin>" : file;
	struct kr_config *cfg = NULL;
	FILE *f = std_in ? stdin : fopen(file, "r");
	char *buf = NULL, line[512];
	size_t len = 0;

	*errs = NULL;
	if (!f) {
		snprintf(line, sizeof(line), "keyrouter: couldn't open configuration file '%s': "
			 "%s\n", file, strerror(errno));
		*errs = strdup(line);
		return NULL;
	}
	errno = 0;
	if (read_all(f, &buf, &len)) {
		snprintf(line, sizeof(line), "keyrouter: couldn't read configuration file '%s': "
			 "%s\n", name, errno == EFBIG ? "larger than 256 MiB" :
			 strerror(errno ? errno : EIO));
		*errs = strdup(line);
	} else {
		cfg = kr_config_parse(name, buf, len, errs);
	}
	if (!std_in)
		fclose(f);
	free(buf);
	return cfg;
}

void kr_config_free(struct kr_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->warnings);
	for (uint32_t i = 0; i < cfg->nrings; i++) {
		free(cfg->rings[i].name);
		for (uint32_t b = 0; b < cfg->rings[i].nbackends; b++) {
			free(cfg->rings[i].backends[b].qlb_sids);
			kr_cfg_health_free(cfg->rings[i].backends[b].health);
			free(cfg->rings[i].backends[b].health);
		}
		kr_cfg_health_free(&cfg->rings[i].health);
		for (uint32_t k = 0; k < cfg->rings[i].nhot_keys; k++)
			free(cfg->rings[i].hot_keys[k].key);
		free(cfg->rings[i].hot_keys);
		free(cfg->rings[i].backends);
		for (uint32_t t = 0; t < cfg->rings[i].ntags; t++)
			free(cfg->rings[i].tags[t]);
	}
	for (uint32_t i = 0; i < cfg->nservices; i++) {
		free(cfg->services[i].name);
		for (uint32_t t = 0; t < cfg->services[i].nsubset; t++)
			free(cfg->services[i].subset[t]);
		free(cfg->services[i].subset);
		for (uint32_t q = 0; q < cfg->services[i].nqlb; q++) {
			free(cfg->services[i].qlb[q].key_file);
			memset(cfg->services[i].qlb[q].key, 0, 16);
		}
		free(cfg->services[i].qlb);
	}
	free(cfg->rings);
	free(cfg->services);
	free(cfg->instance);
	free(cfg->hash.secret_file);
	memset(cfg->hash.secret, 0, sizeof(cfg->hash.secret));
	free(cfg->file);
	free(cfg);
}

int kr_config_ring(const struct kr_config *cfg, const char *name)
{
	for (uint32_t i = 0; i < cfg->nrings; i++)
		if (cfg->rings[i].name && !strcmp(cfg->rings[i].name, name))
			return (int)i;
	return -1;
}

int kr_config_service(const struct kr_config *cfg, const char *name)
{
	for (uint32_t i = 0; i < cfg->nservices; i++)
		if (cfg->services[i].name && !strcmp(cfg->services[i].name, name))
			return (int)i;
	return -1;
}

uint64_t kr_cfg_ring_image_bytes(const struct kr_cfg_ring *r)
{
	uint64_t n = r->npoints > KR_MAX_POINTS ? KR_MAX_POINTS : r->npoints;
	uint32_t b = kr_image_bucket_bits((uint32_t)n);
	uint64_t idx = ((1ull << b) + 1 + KR_IDX_PER_CHUNK - 1) / KR_IDX_PER_CHUNK;
	uint64_t bt = kr_image_bt_chunks(r->nbackends);
	uint64_t pt = (n + KR_PTS_PER_CHUNK - 1) / KR_PTS_PER_CHUNK;

	return (1 + idx + bt + pt) * KR_CHUNK_BYTES;
}

int kr_config_ring_build(const struct kr_config *cfg, uint32_t ri, struct kr_ring **out,
			 struct kr_err *err)
{
	const struct kr_cfg_ring *r;
	struct kr_backend_spec *b;
	int ret;

	if (ri >= cfg->nrings)
		return kr_errf(err, "%s: no ring %u", cfg->file, ri);
	r = &cfg->rings[ri];
	b = calloc(r->nbackends, sizeof(*b));
	if (!b)
		return kr_errf(err, "%s: ring '%s': out of memory", cfg->file, r->name);
	for (uint32_t i = 0; i < r->nbackends; i++) {
		b[i].addr = r->backends[i].addr;
		b[i].weight = r->backends[i].weight;
	}
	ret = kr_ring_build(out, b, r->nbackends, r->format == 1 ? KR_RING_V1 : KR_RING_V2,
			    r->format == 1 ? 0 : r->point_multiple, err);
	if (ret)
		kr_err_prefix(err, "%s: ring '%s'", cfg->file, r->name);
	free(b);
	return ret;
}
