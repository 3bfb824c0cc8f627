// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The configuration's text: comments blanked out, the JSON path of the value being
 * checked, its line:column (jansson keeps no positions for values: the comment-stripped
 * text is walked along the path), and the messages that carry both (config_int.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_int.h"

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

void cfg_push_key(struct ctx *c, const char *key)
{
	if (c->depth < CFG_MAX_DEPTH)
		c->path[c->depth] = (struct seg){ .key = key };
	c->depth++;
}

void cfg_push_idx(struct ctx *c, size_t idx)
{
	if (c->depth < CFG_MAX_DEPTH)
		c->path[c->depth] = (struct seg){ .key = NULL, .idx = idx };
	c->depth++;
}

void cfg_pop(struct ctx *c)
{
	c->depth--;
}

void cfg_path_str(const struct ctx *c, char *buf, size_t n)
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
bool cfg_locate(const struct ctx *c, bool at_name, unsigned *line, unsigned *col)
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

void cfg_add_msg(struct ctx *c, unsigned line, unsigned col, const char *text)
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
char *cfg_msgs_join(struct ctx *c)
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

static void cfg_verr(struct ctx *c, bool at_name, const char *fmt, va_list ap)
{
	char path[256], msg[768], line[1280];
	unsigned ln = 0, col = 0;
	int o;

	c->nerr++;
	if (c->nerr > KR_CFG_MAX_ERRORS) {
		if (c->nerr == KR_CFG_MAX_ERRORS + 1) {
			snprintf(line, sizeof(line), "%s: too many errors, stopping after %d",
				 c->file, KR_CFG_MAX_ERRORS);
			cfg_add_msg(c, ~0u, ~0u, line);
		}
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	cfg_path_str(c, path, sizeof(path));
	o = snprintf(line, sizeof(line), "%s:", c->file);
	if (cfg_locate(c, at_name, &ln, &col))
		o += snprintf(line + o, sizeof(line) - o, "%u:%u:", ln, col);
	snprintf(line + o, sizeof(line) - o, " %s%s%s", path, path[0] ? ": " : "", msg);
	cfg_add_msg(c, ln, col, line);
}

/* An error about the value at the current path. */
void cfg_err(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_verr(c, false, fmt, ap);
	va_end(ap);
}

/* An error about the member name at the current path (points at the name). */
void cfg_nerr(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_verr(c, true, fmt, ap);
	va_end(ap);
}

/* An error about member KEY of the object at the current path. */
void cfg_kerr(struct ctx *c, const char *key, const char *fmt, ...)
{
	va_list ap;

	cfg_push_key(c, key);
	va_start(ap, fmt);
	cfg_verr(c, false, fmt, ap);
	va_end(ap);
	cfg_pop(c);
}

/* A warning about member KEY (something that can be meant, but rarely is): the position
 * and path of an error, "warning: " before the message; it does not fail the load. */
void cfg_kwarn(struct ctx *c, const char *key, const char *fmt, ...)
{
	struct cfg_msg *msgs = c->msgs;
	unsigned nmsgs = c->nmsgs, nerr = c->nerr;
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->msgs = c->wmsgs;
	c->nmsgs = c->nwmsgs;
	c->nerr = 0;
	cfg_kerr(c, key, "warning: %s", msg);
	c->wmsgs = c->msgs;
	c->nwmsgs = c->nmsgs;
	c->msgs = msgs;
	c->nmsgs = nmsgs;
	c->nerr = nerr;
}

