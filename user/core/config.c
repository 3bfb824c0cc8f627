// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The configuration file: JSON (with // and # comments blanked out) -> struct kr_config,
 * validated completely.  Schema and rules: docs/config.md.
 *
 * Errors carry a JSON path (rings[1].backends[3].address) kept while descending, and a
 * line:column found by walking the comment-stripped text along that path (jansson keeps no
 * positions for values).
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

/* ---- comments --------------------------------------------------------------------- */

void kr_config_strip_comments(char *t, size_t len)
{
	bool in_str = false;
	size_t i = 0;

	while (i < len) {
		if (in_str) {
			if (t[i] == '\\' && i + 1 < len)
				i++;
			else if (t[i] == '"')
				in_str = false;
			i++;
			continue;
		}
		if (t[i] == '"') {
			in_str = true;
		} else if (t[i] == '#' || (t[i] == '/' && i + 1 < len && t[i + 1] == '/')) {
			while (i < len && t[i] != '\n' && t[i] != '\r')
				t[i++] = ' ';
			continue;
		}
		i++;
	}
}

/* ---- parse context: path and errors ----------------------------------------------- */

#define CFG_MAX_DEPTH 12

struct seg {
	const char *key;	/* object member, or NULL: array index */
	size_t idx;
};

struct cfg_msg {
	unsigned line, col, seq;	/* line 0: no position (sorted first) */
	char *text;
};

struct ctx {
	const char *file;
	const char *text;	/* comment-stripped JSON, for positions */
	size_t len;
	struct seg path[CFG_MAX_DEPTH];
	int depth;
	struct cfg_msg *msgs;	/* the errors, sorted by position at the end */
	unsigned nmsgs, nerr;
	struct kr_config *cfg;
};

static void push_key(struct ctx *c, const char *key)
{
	if (c->depth < CFG_MAX_DEPTH)
		c->path[c->depth] = (struct seg){ .key = key };
	c->depth++;
}

static void push_idx(struct ctx *c, size_t idx)
{
	if (c->depth < CFG_MAX_DEPTH)
		c->path[c->depth] = (struct seg){ .key = NULL, .idx = idx };
	c->depth++;
}

static void pop(struct ctx *c)
{
	c->depth--;
}

static void path_str(const struct ctx *c, char *buf, size_t n)
{
	size_t o = 0;
	int d = c->depth < CFG_MAX_DEPTH ? c->depth : CFG_MAX_DEPTH;

	buf[0] = 0;
	for (int i = 0; i < d && o < n; i++) {
		if (c->path[i].key)
			o += snprintf(buf + o, n - o, "%s%s", i ? "." : "", c->path[i].key);
		else
			o += snprintf(buf + o, n - o, "[%zu]", c->path[i].idx);
	}
}

/* ---- positions: walk the (valid, comment-free) JSON text along the path ----------- */

static const char *ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static const char *skip_string(const char *p, const char *e)
{
	for (p++; p < e && *p != '"'; p++)
		if (*p == '\\')
			p++;
	return p < e ? p + 1 : e;
}

static const char *skip_value(const char *p, const char *e)
{
	int depth = 0;

	p = ws(p, e);
	if (p < e && *p == '"')
		return skip_string(p, e);
	if (p < e && *p != '{' && *p != '[') {
		while (p < e && !strchr(",]} \t\r\n", *p))
			p++;
		return p;
	}
	for (; p < e; p++) {
		if (*p == '"') {
			p = skip_string(p, e) - 1;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (--depth == 0)
				return p + 1;
		}
	}
	return e;
}

/* The member KEY of the object at p: position of its value (or of its name). */
static const char *find_member(const char *p, const char *e, const char *key, bool at_name)
{
	size_t kl = strlen(key);
	const char *name;

	p = ws(p, e);
	if (p >= e || *p != '{')
		return NULL;
	for (p = ws(p + 1, e); p < e && *p == '"'; p = ws(p, e)) {
		name = p;
		p = skip_string(p, e);
		/* names with escapes are compared raw: good enough for positions */
		bool match = (size_t)(p - name) == kl + 2 && !memcmp(name + 1, key, kl);
		p = ws(p, e);
		if (p >= e || *p != ':')
			return NULL;
		p = ws(p + 1, e);
		if (match)
			return at_name ? name : p;
		p = ws(skip_value(p, e), e);
		if (p < e && *p == ',')
			p = ws(p + 1, e);
	}
	return NULL;
}

static const char *find_element(const char *p, const char *e, size_t idx)
{
	p = ws(p, e);
	if (p >= e || *p != '[')
		return NULL;
	p = ws(p + 1, e);
	for (size_t i = 0; p < e && *p != ']'; i++) {
		if (i == idx)
			return p;
		p = ws(skip_value(p, e), e);
		if (p < e && *p == ',')
			p = ws(p + 1, e);
	}
	return NULL;
}

/* line:column (1-based, bytes) of the current path, or of its closest ancestor present
 * in the text (a missing member: its object); false when nothing is found. */
static bool locate(const struct ctx *c, bool at_name, unsigned *line, unsigned *col)
{
	const char *p = c->text, *e = c->text + c->len, *ls, *q;
	int depth = c->depth < CFG_MAX_DEPTH ? c->depth : CFG_MAX_DEPTH;

	if (!p)
		return false;
	p = ws(p, e);
	for (int i = 0; i < depth; i++) {
		if (c->path[i].key)
			q = find_member(p, e, c->path[i].key, at_name && i == c->depth - 1);
		else
			q = find_element(p, e, c->path[i].idx);
		if (!q)
			break;
		p = q;
	}
	if (p >= e)
		return false;
	*line = 1;
	for (ls = c->text; ls < p; ls++)
		if (*ls == '\n')
			++*line;
	for (ls = p; ls > c->text && ls[-1] != '\n'; ls--)
		;
	*col = (unsigned)(p - ls) + 1;
	return true;
}

static void add_msg(struct ctx *c, unsigned line, unsigned col, const char *text)
{
	struct cfg_msg *m = realloc(c->msgs, (c->nmsgs + 1) * sizeof(*m));

	if (!m)
		return;
	c->msgs = m;
	m[c->nmsgs] = (struct cfg_msg){ .line = line, .col = col, .seq = c->nmsgs,
					.text = strdup(text) };
	if (m[c->nmsgs].text)
		c->nmsgs++;
}

static int msg_cmp(const void *a, const void *b)
{
	const struct cfg_msg *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* All messages in file order, one per line; frees them.  malloc'd. */
static char *msgs_join(struct ctx *c)
{
	size_t n = 1, o = 0;
	char *out;

	if (c->nmsgs)
		qsort(c->msgs, c->nmsgs, sizeof(*c->msgs), msg_cmp);
	for (unsigned i = 0; i < c->nmsgs; i++)
		n += strlen(c->msgs[i].text) + 1;
	out = malloc(n);
	for (unsigned i = 0; i < c->nmsgs; i++) {
		if (out)
			o += sprintf(out + o, "%s\n", c->msgs[i].text);
		free(c->msgs[i].text);
	}
	if (out)
		out[o] = 0;
	free(c->msgs);
	c->msgs = NULL;
	c->nmsgs = 0;
	return out;
}

static void verr(struct ctx *c, bool at_name, const char *fmt, va_list ap)
{
	char path[256], msg[768], line[1280];
	unsigned ln = 0, col = 0;
	int o;

	c->nerr++;
	if (c->nerr > KR_CFG_MAX_ERRORS) {
		if (c->nerr == KR_CFG_MAX_ERRORS + 1) {
			snprintf(line, sizeof(line), "%s: too many errors, stopping after %d",
				 c->file, KR_CFG_MAX_ERRORS);
			add_msg(c, ~0u, ~0u, line);
		}
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	path_str(c, path, sizeof(path));
	o = snprintf(line, sizeof(line), "%s:", c->file);
	if (locate(c, at_name, &ln, &col))
		o += snprintf(line + o, sizeof(line) - o, "%u:%u:", ln, col);
	snprintf(line + o, sizeof(line) - o, " %s%s%s", path, path[0] ? ": " : "", msg);
	add_msg(c, ln, col, line);
}

/* An error about the value at the current path. */
static void cerr(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cerr(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(c, false, fmt, ap);
	va_end(ap);
}

/* An error about the member name at the current path (points at the name). */
static void nerr(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void nerr(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(c, true, fmt, ap);
	va_end(ap);
}

/* An error about member KEY of the object at the current path. */
static void kerr(struct ctx *c, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void kerr(struct ctx *c, const char *key, const char *fmt, ...)
{
	va_list ap;

	push_key(c, key);
	va_start(ap, fmt);
	verr(c, false, fmt, ap);
	va_end(ap);
	pop(c);
}

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

/* Every member of obj must be in allowed (NULL-terminated). */
static void check_fields(struct ctx *c, json_t *obj, const char *const *allowed,
			 const char *what)
{
	const char *key;
	json_t *v;
	char list[512];
	size_t o = 0;
	int i;

	json_object_foreach(obj, key, v) {
		for (i = 0; allowed[i]; i++)
			if (!strcmp(key, allowed[i]))
				break;
		if (allowed[i])
			continue;
		o = 0;
		list[0] = 0;
		for (i = 0; allowed[i] && o < sizeof(list); i++)
			o += snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", allowed[i]);
		push_key(c, key);
		nerr(c, "unknown field '%s' in %s (allowed: %s)", key, what, list);
		pop(c);
	}
}

/* 1 absent, 0 ok, -1 error (reported). */
static int get_obj(struct ctx *c, json_t *obj, const char *key, json_t **out)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return 1;
	if (!json_is_object(v)) {
		kerr(c, key, "expected an object, got %s", jtype(v));
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
		kerr(c, key, "expected an array, got %s", jtype(v));
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
		kerr(c, key, "expected a string, got %s", jtype(v));
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
		kerr(c, key, "expected an integer %llu..%llu, got %s", (unsigned long long)min,
		     (unsigned long long)max, jtype(v));
		return -1;
	}
	i = json_integer_value(v);
	if (i < 0 || (uint64_t)i < min || (uint64_t)i > max) {
		kerr(c, key, "%lld is out of range: expected %llu..%llu", (long long)i,
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
	kerr(c, key, "'%s' is not valid: expected one of %s", s, list);
	return -1;
}

static int need(struct ctx *c, int r, const char *key, const char *what)
{
	if (r == 1)
		kerr(c, key, "missing: expected %s", what);
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
		kerr(c, key, "'%s' is not a valid name: expected 1..%d characters of "
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
		kerr(c, key, "%s", e.msg);
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
		kerr(c, key, "'%s' is not an IP address: expected %s", s,
		     family == 4 ? "an IPv4 address (10.0.0.1)" :
		     family == 6 ? "an IPv6 address (2001:db8::1)" :
				   "an IPv4 or IPv6 address, without port or brackets");
		return -1;
	}
	if (family && a->family != family) {
		kerr(c, key, "'%s' is an IPv%d address: expected an IPv%d address", s, a->family,
		     family);
		return -1;
	}
	return 0;
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
	push_key(c, "tags");
	json_array_foreach(arr, i, t) {
		push_idx(c, i);
		if (!json_is_string(t)) {
			cerr(c, "expected a tag string, got %s", jtype(t));
		} else if (!tag_ok(json_string_value(t))) {
			cerr(c, "'%s' is not a valid tag: expected 1..%d characters of "
			     "[A-Za-z0-9_.:-]", json_string_value(t), KR_CFG_NAME_MAX);
		} else if ((bit = ring_tag(r, json_string_value(t), true)) < 0) {
			cerr(c, "tag '%s': a ring has at most %d distinct tags",
			     json_string_value(t), KR_CFG_MAX_TAGS);
		} else if (b->tags & (1ull << bit)) {
			cerr(c, "duplicate tag '%s'", json_string_value(t));
		} else {
			b->tags |= 1ull << bit;
		}
		pop(c);
	}
	pop(c);
}

static const char *const backend_fields[] = {
	"address", "weight", "mac", "dev", "ifindex", "tags", "state", NULL,
};
static const char *const state_names[] = { "up", "down", "drain", NULL };

static void parse_backend(struct ctx *c, json_t *o, struct kr_cfg_ring *r,
			  struct kr_cfg_backend *b)
{
	static const uint8_t states[] = { KR_BACKEND_UP, KR_BACKEND_DOWN, KR_BACKEND_DRAIN };
	const char *s;
	uint64_t u;
	int e;

	if (!json_is_object(o)) {
		cerr(c, "expected a backend object {\"address\": \"ip:port\", ...}, got %s",
		     jtype(o));
		return;
	}
	check_fields(c, o, backend_fields, "a backend");
	b->weight = 1;
	b->state = KR_BACKEND_UP;
	/* Port 0 is accepted: it is hashed into the points (pingora-ketama accepts it too)
	 * and the data path keeps the packet's destination port. */
	if (!need(c, get_str(c, o, "address", &s), "address", "\"<IPv4>:<port>\" or "
		  "\"[<IPv6>]:<port>\""))
		parse_sockaddr(c, "address", s, &b->addr);
	if (!get_uint(c, o, "weight", 0, UINT32_MAX, &u))
		b->weight = (uint32_t)u;
	if (!get_str(c, o, "mac", &s)) {
		if (parse_mac(s, b->mac))
			kerr(c, "mac", "'%s' is not a MAC address: expected six hex bytes "
			     "separated by ':' (02:00:00:00:00:0a)", s);
		else
			b->has_mac = true;
	}
	if (!get_str(c, o, "dev", &s)) {
		if (!*s || strlen(s) >= KR_CFG_IFNAMSIZ || strchr(s, '/') || strchr(s, ' '))
			kerr(c, "dev", "'%s' is not a device name: expected 1..%d characters, "
			     "no '/' or spaces", s, KR_CFG_IFNAMSIZ - 1);
		else
			snprintf(b->dev, sizeof(b->dev), "%s", s);
	}
	if (!get_uint(c, o, "ifindex", 1, UINT32_MAX, &u))
		b->ifindex = (uint32_t)u;
	if (b->dev[0] && b->ifindex)
		kerr(c, "ifindex", "give either 'dev' or 'ifindex', not both");
	parse_tags(c, o, r, b);
	if (!get_enum(c, o, "state", state_names, &e))
		b->state = states[e];
}

static int sa_cmp_idx(const void *a, const void *b, void *arg)
{
	const struct kr_cfg_backend *be = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int r = kr_sockaddr_cmp(&be[i].addr, &be[j].addr);

	return r ? r : (i > j) - (i < j);
}

/* Duplicate addresses in one ring (parsed addresses only: family != 0). */
static void check_dup_backends(struct ctx *c, struct kr_cfg_ring *r)
{
	uint32_t *ix = malloc(sizeof(*ix) * (r->nbackends ? r->nbackends : 1)), n = 0;
	char a[KR_SOCKADDR_STRLEN], where[64];

	if (!ix) {
		cerr(c, "out of memory");
		return;
	}
	for (uint32_t i = 0; i < r->nbackends; i++)
		if (r->backends[i].addr.family)
			ix[n++] = i;
	qsort_r(ix, n, sizeof(*ix), sa_cmp_idx, r->backends);
	for (uint32_t k = 1; k < n; k++) {
		if (kr_sockaddr_cmp(&r->backends[ix[k - 1]].addr, &r->backends[ix[k]].addr))
			continue;
		kr_sockaddr_format(&r->backends[ix[k]].addr, a);
		snprintf(where, sizeof(where), "backends[%u]", ix[k - 1]);
		push_key(c, "backends");
		push_idx(c, ix[k]);
		kerr(c, "address", "duplicate backend %s in ring '%s' (first at %s): a ring "
		     "lists each address once", a, r->name ? r->name : "?", where);
		pop(c);
		pop(c);
	}
	free(ix);
}

/* ---- rings ------------------------------------------------------------------------ */

static const char *const ring_fields[] = {
	"name", "format", "point_multiple", "target_cv", "backends", NULL,
};
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
			kerr(c, "target_cv", "missing: \"point_multiple\": \"auto\" needs a "
			     "target_cv (the target load imbalance, e.g. 0.01)");
		else if (!json_is_number(cv) || json_number_value(cv) <= 0 ||
			 json_number_value(cv) >= 1)
			kerr(c, "target_cv", "expected a number between 0 and 1 (exclusive), "
			     "e.g. 0.01");
		else
			r->target_cv = json_number_value(cv);
		if (r->format == 1)
			kerr(c, "point_multiple", "\"auto\" needs format \"v2\" (v1 always has "
			     "%d points per weight unit)", KR_CFG_DEFAULT_PM);
		return;
	}
	if (json_object_get(o, "target_cv"))
		kerr(c, "target_cv", "only allowed with \"point_multiple\": \"auto\"");
	if (v && !json_is_integer(v)) {
		kerr(c, "point_multiple", "expected an integer 1..%u or \"auto\", got %s",
		     UINT32_MAX, jtype(v));
		return;
	}
	if (get_uint(c, o, "point_multiple", 1, UINT32_MAX, &u))
		return;
	if (r->format == 1 && u != KR_CFG_DEFAULT_PM)
		kerr(c, "point_multiple", "%llu: format \"v1\" always uses %d points per weight "
		     "unit (use format \"v2\" to choose)", (unsigned long long)u,
		     KR_CFG_DEFAULT_PM);
	r->point_multiple = (uint32_t)u;
}

static void resolve_auto(struct ctx *c, struct kr_cfg_ring *r)
{
	char msg[256] = "";
	uint32_t pm = 0;

	if (kr_config_auto_point_multiple(r, r->target_cv, &pm, msg, sizeof(msg)) < 0 ||
	    pm == 0) {
		kerr(c, "point_multiple", "\"auto\": %s", msg[0] ? msg : "the planner failed");
		return;
	}
	r->point_multiple = pm;
}

/* Points per backend and in total, without overflow. */
static void count_points(struct ctx *c, struct kr_cfg_ring *r)
{
	uint64_t total = 0, p;

	for (uint32_t i = 0; i < r->nbackends; i++) {
		p = (uint64_t)r->backends[i].weight * r->point_multiple;
		if (p > UINT32_MAX) {
			push_key(c, "backends");
			push_idx(c, i);
			kerr(c, "weight", "weight %u x point_multiple %u = %llu points: more than "
			     "%u points for one backend (overflow); lower the weight or the "
			     "point_multiple", r->backends[i].weight, r->point_multiple,
			     (unsigned long long)p, UINT32_MAX);
			pop(c);
			pop(c);
			return;
		}
		total += p;
	}
	r->npoints = total;
	if (total > KR_MAX_POINTS)
		cerr(c, "%llu points (sum of weight x point_multiple): more than %u, the largest "
		     "ring the kernel image holds; lower the weights or the point_multiple",
		     (unsigned long long)total, KR_MAX_POINTS);
	else if (total == 0 && r->nbackends)
		cerr(c, "the ring has no points: every backend has weight 0 (a drained "
		     "backend keeps its weight and uses \"state\": \"drain\")");
}

static void parse_ring(struct ctx *c, json_t *o, struct kr_cfg_ring *r)
{
	json_t *arr, *b;
	size_t i, n;
	int e, errs = c->nerr;

	if (!json_is_object(o)) {
		cerr(c, "expected a ring object {\"name\": ..., \"format\": ..., \"backends\": "
		     "[...]}, got %s", jtype(o));
		return;
	}
	check_fields(c, o, ring_fields, "a ring");
	get_name(c, o, "name", &r->name);
	if (!need(c, get_enum(c, o, "format", format_names, &e), "format", "\"v1\" or \"v2\""))
		r->format = (uint32_t)e + 1;
	parse_point_multiple(c, o, r);
	if (need(c, get_array(c, o, "backends", &arr), "backends", "an array of backends"))
		return;
	n = json_array_size(arr);
	if (n == 0) {
		kerr(c, "backends", "empty: a ring needs at least one backend");
		return;
	}
	if (n > KR_MAX_BACKENDS) {
		kerr(c, "backends", "%zu backends: at most %u per ring (the ring-local backend "
		     "index is 16 bits)", n, KR_MAX_BACKENDS);
		return;
	}
	r->backends = calloc(n, sizeof(*r->backends));
	if (!r->backends) {
		cerr(c, "out of memory for %zu backends", n);
		return;
	}
	r->nbackends = (uint32_t)n;
	push_key(c, "backends");
	json_array_foreach(arr, i, b) {
		push_idx(c, i);
		parse_backend(c, b, r, &r->backends[i]);
		pop(c);
	}
	pop(c);
	check_dup_backends(c, r);
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
		kerr(c, "rings", "%zu rings: expected 1..%u", n, KR_MAX_RINGS);
		return;
	}
	cfg->rings = calloc(n, sizeof(*cfg->rings));
	if (!cfg->rings) {
		cerr(c, "out of memory");
		return;
	}
	cfg->nrings = (uint32_t)n;
	push_key(c, "rings");
	json_array_foreach(arr, i, o) {
		push_idx(c, i);
		parse_ring(c, o, &cfg->rings[i]);
		for (size_t j = 0; j < i && cfg->rings[i].name; j++) {
			if (cfg->rings[j].name && !strcmp(cfg->rings[i].name, cfg->rings[j].name))
				kerr(c, "name", "duplicate ring name '%s' (also rings[%zu])",
				     cfg->rings[i].name, j);
		}
		pop(c);
	}
	pop(c);
}

/* ---- services --------------------------------------------------------------------- */

static const char *const service_fields[] = {
	"name", "vip", "port", "protocol", "key", "ring", "subset", "forward", "policy", NULL,
};
static const char *const key_type_names[] = {	/* index + 1 = enum kr_key_type */
	"tuple", "payload", "dns", "memcache", "quic", NULL,
};
static const char *const key_fields_none[] = { "type", NULL };
static const char *const key_fields_payload[] = {
	"type", "offset", "length", "delimiter", NULL,
};
static const char *const key_fields_quic[] = { "type", "cid_length", NULL };
static const char *const pass_drop[] = { "pass", "drop", NULL };

static void parse_delimiter(struct ctx *c, json_t *o, struct kr_keyspec *k)
{
	json_t *v = json_object_get(o, "delimiter");
	uint64_t u;

	if (!v)
		return;
	if (json_is_string(v)) {
		if (json_string_length(v) != 1)
			kerr(c, "delimiter", "'%s': expected one byte (a one-character string "
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
	push_key(c, "key");
	if (need(c, get_enum(c, o, "type", key_type_names, &t), "type",
		 "one of \"tuple\", \"payload\", \"dns\", \"memcache\", \"quic\"")) {
		pop(c);
		return;
	}
	k->type = (enum kr_key_type)(t + 1);
	switch (k->type) {
	case KR_KEY_PAYLOAD:
		check_fields(c, o, key_fields_payload, "a payload key");
		if (!get_uint(c, o, "offset", 0, KR_MAX_PAYLOAD_OFFSET, &u))
			k->offset = (uint32_t)u;
		if (!get_uint(c, o, "length", 1, KR_MAX_KEY_LEN, &u))
			k->length = (uint32_t)u;
		parse_delimiter(c, o, k);
		if (k->length && k->delimiter >= 0)
			kerr(c, "delimiter", "give either 'length' or 'delimiter', not both");
		break;
	case KR_KEY_QUIC:
		check_fields(c, o, key_fields_quic, "a quic key");
		if (!need(c, get_uint(c, o, "cid_length", 1, KR_QUIC_MAX_CID, &u), "cid_length",
			  "the connection ID length of short-header packets, 1..20"))
			k->cid_length = (uint32_t)u;
		break;
	default:
		check_fields(c, o, key_fields_none, "a tuple/dns/memcache key");
		break;
	}
	pop(c);
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
	}
}

static const char *const fwd_fields_l2[] = { "mode", NULL };
static const char *const fwd_fields_ipip[] = { "mode", "source4", "source6", NULL };
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
	push_key(c, "forward");
	if (need(c, get_enum(c, o, "mode", fwd_modes, &m), "mode", "\"l2\" or \"ipip\"")) {
		pop(c);
		return;
	}
	s->fwd.mode = m == 0 ? KR_FWD_L2 : KR_FWD_IPIP;
	check_fields(c, o, m == 0 ? fwd_fields_l2 : fwd_fields_ipip,
		     m == 0 ? "l2 forwarding" : "ipip forwarding");
	if (m == 1 && !get_str(c, o, "source4", &v) && !parse_ip(c, "source4", v, 4, &a)) {
		memcpy(s->fwd.source4, a.ip, 4);
		s->fwd.has_source4 = true;
	}
	if (m == 1 && !get_str(c, o, "source6", &v) && !parse_ip(c, "source6", v, 6, &a)) {
		memcpy(s->fwd.source6, a.ip, 16);
		s->fwd.has_source6 = true;
	}
	pop(c);
}

static const char *const policy_fields[] = { "no_key", "key_too_long", "all_down", NULL };

static void parse_policy(struct ctx *c, json_t *svc, struct kr_cfg_service *s)
{
	json_t *o;
	int v;

	if (get_obj(c, svc, "policy", &o))
		return;
	push_key(c, "policy");
	check_fields(c, o, policy_fields, "a policy");
	if (!get_enum(c, o, "no_key", pass_drop, &v))
		s->policy.no_key = (uint8_t)v;
	if (!get_enum(c, o, "key_too_long", pass_drop, &v))
		s->policy.key_too_long = (uint8_t)v;
	if (!get_enum(c, o, "all_down", pass_drop, &v))
		s->policy.all_down = (uint8_t)v;
	pop(c);
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
		kerr(c, "subset", "empty: list the tags the backends must carry, or leave "
		     "'subset' out to use the whole ring");
		return;
	}
	s->subset = calloc(json_array_size(arr), sizeof(*s->subset));
	if (!s->subset)
		return;
	push_key(c, "subset");
	json_array_foreach(arr, i, t) {
		push_idx(c, i);
		if (!json_is_string(t)) {
			cerr(c, "expected a tag string, got %s", jtype(t));
		} else if (!r) {
			;	/* the ring is missing: reported already */
		} else if ((bit = ring_tag((struct kr_cfg_ring *)r, json_string_value(t),
					   false)) < 0) {
			cerr(c, "tag '%s': no backend of ring '%s' carries it", json_string_value(t),
			     r->name);
		} else {
			s->subset_mask |= 1ull << bit;
			s->subset[s->nsubset++] = strdup(json_string_value(t));
		}
		pop(c);
	}
	pop(c);
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
		if (s->fwd.mode == KR_FWD_L2 && !b->has_mac) {
			kr_sockaddr_format(&b->addr, a);
			kerr(c, "forward", "mode \"l2\" needs the MAC of every backend: "
			     "rings[%u].backends[%u] (%s) has no \"mac\"", ri, i, a);
			return;
		}
	}
	if (!any) {
		kerr(c, s->nsubset ? "subset" : "ring", "no backend with weight > 0 %s ring '%s'",
		     s->nsubset ? "carries these tags in" : "in", r->name);
		return;
	}
	if (s->fwd.mode != KR_FWD_IPIP)
		return;
	if (v4 && !s->fwd.has_source4)
		kerr(c, "forward", "mode \"ipip\" needs \"source4\" (outer IPv4 source): ring "
		     "'%s' has IPv4 backends", r->name);
	if (v6 && !s->fwd.has_source6)
		kerr(c, "forward", "mode \"ipip\" needs \"source6\" (outer IPv6 source): ring "
		     "'%s' has IPv6 backends", r->name);
}

static void parse_service(struct ctx *c, json_t *o, struct kr_cfg_service *s)
{
	const char *v;
	uint64_t u;
	int ri = -1, errs = c->nerr;

	if (!json_is_object(o)) {
		cerr(c, "expected a service object {\"name\": ..., \"vip\": ..., ...}, got %s",
		     jtype(o));
		return;
	}
	check_fields(c, o, service_fields, "a service");
	get_name(c, o, "name", &s->name);
	parse_vip(c, o, s);
	if (!need(c, get_uint(c, o, "port", 1, 65535, &u), "port", "a port 1..65535"))
		s->port = (uint16_t)u;
	s->vip.port = s->port;
	s->protocol = IPPROTO_UDP;
	if (!get_str(c, o, "protocol", &v) && strcmp(v, "udp"))
		kerr(c, "protocol", "'%s' is not supported: expected \"udp\"", v);
	parse_key(c, o, &s->key);
	if (!need(c, get_str(c, o, "ring", &v), "ring", "the name of a ring")) {
		ri = kr_config_ring(c->cfg, v);
		if (ri < 0)
			kerr(c, "ring", "no ring named '%s' in \"rings\"", v);
		else
			s->ring = (uint32_t)ri;
	}
	parse_subset(c, o, s, ri >= 0 ? &c->cfg->rings[ri] : NULL);
	parse_forward(c, o, s);
	parse_policy(c, o, s);
	if (ri >= 0 && (int)c->nerr == errs)
		check_service_ring(c, s, (uint32_t)ri);
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
		kerr(c, "services", "%zu services: at most %u", n, KR_CFG_MAX_SERVICES);
		return;
	}
	cfg->services = calloc(n ? n : 1, sizeof(*cfg->services));
	if (!cfg->services) {
		cerr(c, "out of memory");
		return;
	}
	cfg->nservices = (uint32_t)n;
	push_key(c, "services");
	json_array_foreach(arr, i, o) {
		struct kr_cfg_service *s = &cfg->services[i];

		push_idx(c, i);
		parse_service(c, o, s);
		for (size_t j = 0; j < i; j++) {
			struct kr_cfg_service *t = &cfg->services[j];

			if (s->name && t->name && !strcmp(s->name, t->name))
				kerr(c, "name", "duplicate service name '%s' (also services[%zu])",
				     s->name, j);
			else if (s->port && vip_clash(s, t))
				kerr(c, "vip", "service '%s' uses the same address, port %u and "
				     "protocol udp as services[%zu] '%s'%s", s->name ? s->name : "?",
				     s->port, j, t->name ? t->name : "?", s->vip_any ?
				     " (\"*\", \"0.0.0.0\" and \"::\" are the same wildcard: any "
				     "address of either family)" : "");
		}
		pop(c);
	}
	pop(c);
}

/* ---- top level -------------------------------------------------------------------- */

static const char *const top_fields[] = { "instance", "hash", "rings", "services", NULL };
static const char *const hash_fields[] = { "function", "secret_file", NULL };

/* The keyed-hash secret: a regular file, not readable or writable by group/others, owned
 * by root or by us, holding 32 hex digits (blanks around them allowed).  Messages never
 * quote the content. */
static void load_secret(struct ctx *c, const char *given)
{
	char path[4096], buf[128];
	const char *slash = strrchr(c->file, '/');
	struct stat st;
	ssize_t n;
	int fd, k = 0;

	if (given[0] == '/' || !slash)
		snprintf(path, sizeof(path), "%s", given);
	else
		snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - c->file), c->file, given);
	c->cfg->hash.secret_file = strdup(path);	/* config show: the resolved path */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		kerr(c, "secret_file", "couldn't open '%s': %s", path, strerror(errno));
		return;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		kerr(c, "secret_file", "'%s' is not a regular file", path);
		goto out;
	}
	if (st.st_mode & 077) {
		kerr(c, "secret_file", "'%s' has mode %04o: a secret must not be readable or "
		     "writable by group or others (chmod 600 '%s')", path,
		     (unsigned)(st.st_mode & 07777), path);
		goto out;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		kerr(c, "secret_file", "'%s' is owned by uid %u: expected root or uid %u", path,
		     (unsigned)st.st_uid, (unsigned)geteuid());
		goto out;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		kerr(c, "secret_file", "couldn't read '%s': %s", path, strerror(errno));
		goto out;
	}
	for (ssize_t i = 0; i < n; i++) {
		int v = buf[i] >= '0' && buf[i] <= '9' ? buf[i] - '0' :
			buf[i] >= 'a' && buf[i] <= 'f' ? buf[i] - 'a' + 10 :
			buf[i] >= 'A' && buf[i] <= 'F' ? buf[i] - 'A' + 10 : -1;

		if (v < 0 && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\t' || buf[i] == '\r'))
			continue;
		if (v < 0 || k >= 32) {
			k = -1;
			break;
		}
		c->cfg->hash.secret[k / 2] = (uint8_t)(c->cfg->hash.secret[k / 2] << 4 | v);
		k++;
	}
	if (k != 32)
		kerr(c, "secret_file", "'%s': expected exactly 32 hex digits (a 128-bit secret, "
		     "e.g. from: head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n')", path);
	memset(buf, 0, sizeof(buf));
out:
	close(fd);
}

static void parse_hash(struct ctx *c, json_t *root)
{
	const char *f = "crc32", *file;
	int has_file, r;
	json_t *o;

	if (get_obj(c, root, "hash", &o))
		return;
	push_key(c, "hash");
	check_fields(c, o, hash_fields, "hash");
	has_file = !get_str(c, o, "secret_file", &file);
	r = get_str(c, o, "function", &f);
	if (r >= 0) {
		if (!strcmp(f, "siphash13")) {
			c->cfg->hash.keyed = true;
			if (!has_file)
				kerr(c, "function", "\"siphash13\" needs \"secret_file\": a file "
				     "holding the 128-bit secret in hex (mode 0600)");
		} else if (strcmp(f, "crc32")) {
			kerr(c, "function", "'%s': expected \"crc32\" (the ketama hash, the "
			     "default) or \"siphash13\" (keyed, needs secret_file)", f);
		} else if (has_file) {
			kerr(c, "secret_file", "only with \"function\": \"siphash13\"");
		}
	}
	if (c->cfg->hash.keyed && has_file)
		load_secret(c, file);
	pop(c);
}

static void parse_root(struct ctx *c, json_t *root)
{
	const char *inst;

	if (!json_is_object(root)) {
		cerr(c, "expected an object {\"rings\": [...], \"services\": [...]} at the top, "
		     "got %s", jtype(root));
		return;
	}
	check_fields(c, root, top_fields, "the configuration");
	if (!get_str(c, root, "instance", &inst)) {
		if (!name_ok(inst))
			kerr(c, "instance", "'%s' is not a valid instance name: expected 1..%d "
			     "characters of [A-Za-z0-9_.-], not '.' or '..'", inst,
			     KR_CFG_NAME_MAX);
		else
			c->cfg->instance = strdup(inst);
	}
	parse_hash(c, root);
	parse_rings(c, root);
	parse_services(c, root);
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
		add_msg(&c, 0, 0, line);
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
		add_msg(&c, 0, 0, line);
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
		kr_config_free(c.cfg);
		*errs = msgs_join(&c);
		if (!*errs)
			*errs = strdup("out of memory\n");
		return NULL;
	}
	free(msgs_join(&c));
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
	for (uint32_t i = 0; i < cfg->nrings; i++) {
		free(cfg->rings[i].name);
		free(cfg->rings[i].backends);
		for (uint32_t t = 0; t < cfg->rings[i].ntags; t++)
			free(cfg->rings[i].tags[t]);
	}
	for (uint32_t i = 0; i < cfg->nservices; i++) {
		free(cfg->services[i].name);
		for (uint32_t t = 0; t < cfg->services[i].nsubset; t++)
			free(cfg->services[i].subset[t]);
		free(cfg->services[i].subset);
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
	uint64_t bt = (r->nbackends + KR_BT_PER_CHUNK - 1) / KR_BT_PER_CHUNK;
	uint64_t pt = (n + KR_PTS_PER_CHUNK - 1) / KR_PTS_PER_CHUNK;

	return (1 + idx + bt + pt) * KR_CHUNK_BYTES;
}

/* ---- normalized JSON -------------------------------------------------------------- */

static json_t *ip_json(const struct kr_sockaddr *a)
{
	char buf[KR_IP_STRLEN];

	kr_ip_format(a, buf);
	return json_string(buf);
}

static json_t *backend_json(const struct kr_cfg_ring *r, const struct kr_cfg_backend *b)
{
	static const char *const st[] = { "up", "down", "drain", "unused" };
	char buf[KR_SOCKADDR_STRLEN];
	json_t *o = json_object(), *tags = json_array();

	kr_sockaddr_format(&b->addr, buf);
	json_object_set_new(o, "address", json_string(buf));
	json_object_set_new(o, "weight", json_integer(b->weight));
	json_object_set_new(o, "state", json_string(st[b->state & 3]));
	if (b->has_mac) {
		snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", b->mac[0], b->mac[1],
			 b->mac[2], b->mac[3], b->mac[4], b->mac[5]);
		json_object_set_new(o, "mac", json_string(buf));
	}
	if (b->dev[0])
		json_object_set_new(o, "dev", json_string(b->dev));
	if (b->ifindex)
		json_object_set_new(o, "ifindex", json_integer(b->ifindex));
	for (uint32_t t = 0; t < r->ntags; t++)
		if (b->tags & (1ull << t))
			json_array_append_new(tags, json_string(r->tags[t]));
	json_object_set_new(o, "tags", tags);
	return o;
}

static json_t *ring_json(const struct kr_cfg_ring *r)
{
	json_t *o = json_object(), *bs = json_array();

	json_object_set_new(o, "name", json_string(r->name));
	json_object_set_new(o, "format", json_string(r->format == 1 ? "v1" : "v2"));
	/* "auto": the planner's answer, pinned (target_cv is only valid next to "auto", and
	 * the normalized file must load again and give the very same ring). */
	json_object_set_new(o, "point_multiple", json_integer(r->point_multiple));
	for (uint32_t i = 0; i < r->nbackends; i++)
		json_array_append_new(bs, backend_json(r, &r->backends[i]));
	json_object_set_new(o, "backends", bs);
	return o;
}

static json_t *key_json(const struct kr_keyspec *k)
{
	json_t *o = json_object();

	json_object_set_new(o, "type", json_string(kr_key_type_name(k->type)));
	if (k->type == KR_KEY_PAYLOAD) {
		json_object_set_new(o, "offset", json_integer(k->offset));
		if (k->length)
			json_object_set_new(o, "length", json_integer(k->length));
		if (k->delimiter >= 0)
			json_object_set_new(o, "delimiter", json_integer(k->delimiter));
	}
	if (k->type == KR_KEY_QUIC)
		json_object_set_new(o, "cid_length", json_integer(k->cid_length));
	return o;
}

static json_t *service_json(const struct kr_config *cfg, const struct kr_cfg_service *s)
{
	static const char *const pol[] = { "pass", "drop" };
	json_t *o = json_object(), *f = json_object(), *p = json_object(), *sub;
	struct kr_sockaddr a = { .family = 4 };

	json_object_set_new(o, "name", json_string(s->name));
	if (s->vip_any)
		json_object_set_new(o, "vip", json_string("*"));
	else
		json_object_set_new(o, "vip", ip_json(&s->vip));
	json_object_set_new(o, "port", json_integer(s->port));
	json_object_set_new(o, "protocol", json_string("udp"));
	json_object_set_new(o, "key", key_json(&s->key));
	json_object_set_new(o, "ring", json_string(cfg->rings[s->ring].name));
	if (s->nsubset) {
		sub = json_array();
		for (uint32_t i = 0; i < s->nsubset; i++)
			json_array_append_new(sub, json_string(s->subset[i]));
		json_object_set_new(o, "subset", sub);
	}
	json_object_set_new(f, "mode", json_string(s->fwd.mode == KR_FWD_L2 ? "l2" : "ipip"));
	if (s->fwd.has_source4) {
		memcpy(a.ip, s->fwd.source4, 4);
		json_object_set_new(f, "source4", ip_json(&a));
	}
	if (s->fwd.has_source6) {
		a.family = 6;
		memcpy(a.ip, s->fwd.source6, 16);
		json_object_set_new(f, "source6", ip_json(&a));
	}
	json_object_set_new(o, "forward", f);
	json_object_set_new(p, "no_key", json_string(pol[s->policy.no_key & 1]));
	json_object_set_new(p, "key_too_long", json_string(pol[s->policy.key_too_long & 1]));
	json_object_set_new(p, "all_down", json_string(pol[s->policy.all_down & 1]));
	json_object_set_new(o, "policy", p);
	return o;
}

char *kr_config_dump_json(const struct kr_config *cfg)
{
	json_t *root = json_object(), *rings = json_array(), *svcs = json_array();
	char *out;

	if (cfg->instance)
		json_object_set_new(root, "instance", json_string(cfg->instance));
	if (cfg->hash.keyed) {	/* the secret stays in its file */
		json_t *h = json_object();

		json_object_set_new(h, "function", json_string("siphash13"));
		json_object_set_new(h, "secret_file", json_string(cfg->hash.secret_file ?
								  cfg->hash.secret_file : ""));
		json_object_set_new(root, "hash", h);
	}
	for (uint32_t i = 0; i < cfg->nrings; i++)
		json_array_append_new(rings, ring_json(&cfg->rings[i]));
	for (uint32_t i = 0; i < cfg->nservices; i++)
		json_array_append_new(svcs, service_json(cfg, &cfg->services[i]));
	json_object_set_new(root, "rings", rings);
	json_object_set_new(root, "services", svcs);
	out = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return out;
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
