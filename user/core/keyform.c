// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Human key forms -> the exact key bytes of the data path's extractors (see keyform.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "keyform.h"
#include "addr.h"

static const struct {
	const char *name;
	enum kr_key_type type;
} key_types[] = {
	{ "tuple", KR_KEY_TUPLE },	 { "payload", KR_KEY_PAYLOAD }, { "dns", KR_KEY_DNS },
	{ "memcache", KR_KEY_MEMCACHE }, { "quic", KR_KEY_QUIC },
};

int kr_key_type_parse(const char *s, enum kr_key_type *type)
{
	for (size_t i = 0; i < sizeof(key_types) / sizeof(key_types[0]); i++) {
		if (!strcmp(s, key_types[i].name)) {
			*type = key_types[i].type;
			return 0;
		}
	}
	return -1;
}

const char *kr_key_type_name(enum kr_key_type type)
{
	for (size_t i = 0; i < sizeof(key_types) / sizeof(key_types[0]); i++)
		if (key_types[i].type == type)
			return key_types[i].name;
	return "none";
}

const char *kr_key_type_list(void)
{
	return "tuple, payload, dns, memcache, quic";
}

static int key_set(struct kr_key *key, const uint8_t *p, size_t n, const char *what,
		   struct kr_err *err)
{
	if (n > KR_MAX_KEY_LEN)
		return kr_errf(err, "%s key is %zu bytes long: keys are at most %u bytes",
			       what, n, KR_MAX_KEY_LEN);
	memcpy(key->b, p, n);
	key->len = n;
	return 0;
}

/* ---- hex -------------------------------------------------------------------------- */

int kr_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long kr_hex_decode(const char *hex, uint8_t *out, size_t max, struct kr_err *err)
{
	const char *s = hex;
	size_t n = 0;
	int hi, lo;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	while (*s) {
		if (n && (*s == ':' || *s == '-' || *s == ' ') && s[1] && s[1] != *s)
			s++;
		hi = kr_hexval(s[0]);
		lo = hi < 0 ? -1 : kr_hexval(s[1]);
		if (hi >= 0 && !s[1])
			return kr_errf(err, "'%s': odd number of hex digits (two per byte)",
				       hex);
		if (hi < 0 || lo < 0)
			return kr_errf(err, "'%s': expected hex bytes (two hex digits each), "
				       "bad character at position %zu", hex,
				       (size_t)(s - hex) + (hi < 0 ? 0 : 1) + 1);
		if (n == max)
			return kr_errf(err, "'%s': more than %zu bytes", hex, max);
		out[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	return (long)n;
}

char *kr_key_hex(const struct kr_key *key, char *buf, size_t buflen)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (!buflen)
		return buf;
	if (key->len == 0) {
		snprintf(buf, buflen, "-");
		return buf;
	}
	for (i = 0; i < key->len && 2 * i + 2 < buflen; i++) {
		buf[2 * i] = digits[key->b[i] >> 4];
		buf[2 * i + 1] = digits[key->b[i] & 15];
	}
	buf[2 * i] = 0;
	return buf;
}

static char *key_print_hex(const uint8_t *b, size_t len, char *buf, size_t buflen)
{
	struct kr_key k = { .len = len > KR_MAX_KEY_LEN ? KR_MAX_KEY_LEN : (uint32_t)len };

	memcpy(k.b, b, k.len);
	return kr_key_hex(&k, buf, buflen);
}

/* DNS wire labels -> "a.b.c." (the final zero label is the last dot; "." the root). */
static int key_print_dns(const uint8_t *b, size_t len, char *buf, size_t buflen)
{
	size_t i = 0, o = 0;

	if (len == 1 && !b[0])
		return snprintf(buf, buflen, ".") < 0 ? -1 : 0;
	while (i < len && b[i]) {
		size_t l = b[i++];

		if (l > KR_DNS_MAX_LABEL || i + l > len)
			return -1;
		for (; l; l--, i++) {
			uint8_t c = b[i];
			bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				     (c >= '0' && c <= '9') || c == '-' || c == '_';
			int n = plain ? snprintf(buf + o, buflen - o, "%c", c) :
					snprintf(buf + o, buflen - o, "\\%03u", c);

			if (n < 0 || (size_t)n >= buflen - o)
				return -1;
			o += (size_t)n;
		}
		if (o + 2 > buflen)
			return -1;
		buf[o++] = '.';
		buf[o] = 0;
	}
	return i + 1 == len ? 0 : -1;	/* exactly one final zero label */
}

static int key_print_text(const uint8_t *b, size_t len, char *buf, size_t buflen)
{
	size_t o = 0;

	buf[0] = 0;
	for (size_t i = 0; i < len; i++) {
		int n = b[i] == '\\' ? snprintf(buf + o, buflen - o, "\\\\") :
			b[i] >= 0x20 && b[i] < 0x7f ? snprintf(buf + o, buflen - o, "%c", b[i]) :
			snprintf(buf + o, buflen - o, "\\x%02x", b[i]);

		if (n < 0 || (size_t)n >= buflen - o)
			return -1;
		o += (size_t)n;
	}
	return 0;
}

char *kr_key_print(enum kr_key_type type, const uint8_t *b, size_t len, char *buf,
		   size_t buflen)
{
	struct kr_sockaddr sa = { 0 };
	int rc = -1;

	if (!buflen)
		return buf;
	if (!len) {
		snprintf(buf, buflen, "-");
		return buf;
	}
	switch (type) {
	case KR_KEY_DNS:
		rc = key_print_dns(b, len, buf, buflen);
		break;
	case KR_KEY_TUPLE:
		if ((len == 6 || len == 18) && buflen >= KR_SOCKADDR_STRLEN) {
			sa.family = len == 6 ? 4 : 6;
			memcpy(sa.ip, b, len - 2);
			sa.port = (uint16_t)(b[len - 2] << 8 | b[len - 1]);
			kr_sockaddr_format(&sa, buf);
			rc = 0;
		}
		break;
	case KR_KEY_PAYLOAD:
	case KR_KEY_MEMCACHE:
		rc = key_print_text(b, len, buf, buflen);
		break;
	default:
		break;
	}
	return rc ? key_print_hex(b, len, buf, buflen) : buf;
}

/* ---- tuple ------------------------------------------------------------------------ */

int kr_keyform_tuple(const char *arg, struct kr_key *key, struct kr_err *err)
{
	struct kr_sockaddr sa;
	struct kr_err aerr;

	if (kr_sockaddr_parse(arg, &sa, &aerr) < 0)
		return kr_errf(err, "tuple: %s", aerr.msg);
	if (sa.family == 4) {
		memcpy(key->b, sa.ip, 4);
		key->b[4] = sa.port >> 8;
		key->b[5] = sa.port & 0xff;
		key->len = 6;
	} else {
		memcpy(key->b, sa.ip, 16);
		key->b[16] = sa.port >> 8;
		key->b[17] = sa.port & 0xff;
		key->len = 18;
	}
	return 0;
}

/* ---- dns -------------------------------------------------------------------------- */

/* One character of a presentation-form name, with RFC 1035 escapes (\. \\ \DDD).
 * Returns the characters consumed, or -1. */
static int dns_char(const char *s, uint8_t *c, int *escaped)
{
	int v;

	*escaped = 0;
	if (s[0] != '\\') {
		*c = (uint8_t)s[0];
		return 1;
	}
	*escaped = 1;
	if (s[1] >= '0' && s[1] <= '9') {
		if (!(s[2] >= '0' && s[2] <= '9' && s[3] >= '0' && s[3] <= '9'))
			return -1;
		v = (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
		if (v > 255)
			return -1;
		*c = (uint8_t)v;
		return 4;
	}
	if (!s[1])
		return -1;
	*c = (uint8_t)s[1];
	return 2;
}

static uint8_t ascii_lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

int kr_keyform_dns(const char *name, struct kr_key *key, struct kr_err *err)
{
	uint8_t wire[KR_DNS_MAX_NAME + 64];
	size_t n = 0, lablen_at = 0, lab = 0;
	const char *s = name, *lab_start = name;
	uint8_t c;
	int k, escaped;

	if (!*name)
		return kr_errf(err, "DNS name '': empty (the root is '.')");
	if (!strcmp(name, ".")) {
		key->b[0] = 0;
		key->len = 1;
		return 0;
	}
	wire[n++] = 0;		/* length of the first label, patched below */
	while (*s) {
		k = dns_char(s, &c, &escaped);
		if (k < 0)
			return kr_errf(err, "DNS name '%s': bad escape at character %zu "
				       "(expected \\. \\\\ or \\DDD with DDD <= 255)", name,
				       (size_t)(s - name) + 1);
		if (c == '.' && !escaped) {
			if (lab == 0)
				return kr_errf(err, "DNS name '%s': empty label at character "
					       "%zu (only the root name '.' may be empty)", name,
					       (size_t)(s - name) + 1);
			wire[lablen_at] = (uint8_t)lab;
			s += k;
			if (!*s)
				break;	/* trailing dot: fully qualified, same name */
			lablen_at = n;
			wire[n++] = 0;
			lab = 0;
			lab_start = s;
			continue;
		}
		if (++lab > KR_DNS_MAX_LABEL)
			return kr_errf(err, "DNS name '%s': label at character %zu is longer "
				       "than %u bytes", name, (size_t)(lab_start - name) + 1,
				       KR_DNS_MAX_LABEL);
		if (n + 2 > KR_DNS_MAX_NAME)
			return kr_errf(err, "DNS name '%s': longer than %u bytes in wire "
				       "format", name, KR_DNS_MAX_NAME);
		wire[n++] = ascii_lower(c);
		wire[lablen_at] = (uint8_t)lab;
		s += k;
	}
	wire[n++] = 0;		/* the root label */
	return key_set(key, wire, n, "DNS", err);
}

/* ---- memcache --------------------------------------------------------------------- */

/* Commands whose first key is the next token (gat/gats: after the exptime). */
static const char *const mc_cmds[] = {
	"get", "gets", "set", "add", "replace", "append", "prepend", "cas",
	"delete", "incr", "decr", "touch", "mg", "ms", "md", "ma", "gat", "gats", NULL,
};

static int mc_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int mc_token_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] == 0x7f)
			return 0;
	return 1;
}

int kr_keyform_memcache(const char *arg, struct kr_key *key, struct kr_err *err)
{
	const char *s = arg, *tok;
	size_t n;
	int skip = 0, i;

	while (mc_space(*s))
		s++;
	tok = s;
	while (*s && !mc_space(*s))
		s++;
	n = s - tok;
	if (!n)
		return kr_errf(err, "memcache key '%s': empty", arg);
	if (*s) {		/* a command line: "get KEY ...", "gat EXPTIME KEY ..." */
		for (i = 0; mc_cmds[i]; i++)
			if (strlen(mc_cmds[i]) == n && !memcmp(mc_cmds[i], tok, n))
				break;
		if (!mc_cmds[i])
			return kr_errf(err, "memcache '%s': a key has no spaces; with spaces "
				       "expected a command line (get, gets, set, add, replace, "
				       "append, prepend, cas, delete, incr, decr, touch, mg, ms, md, "
				       "ma followed by the key, or gat/gats EXPTIME KEY)", arg);
		skip = tok[0] == 'g' && tok[1] == 'a' ? 1 : 0;
		do {
			while (mc_space(*s))
				s++;
			tok = s;
			while (*s && !mc_space(*s))
				s++;
			n = s - tok;
		} while (n && skip--);
		if (!n)
			return kr_errf(err, "memcache '%s': no key after the command", arg);
	}
	if (!mc_token_ok(tok, n))
		return kr_errf(err, "memcache key '%s': control characters are not allowed "
			       "in a key", arg);
	return key_set(key, (const uint8_t *)tok, n, "memcache", err);
}

/* ---- quic ------------------------------------------------------------------------- */

int kr_keyform_quic(const char *hex, const struct kr_keyspec *spec, struct kr_key *key,
		    struct kr_err *err)
{
	uint8_t cid[KR_QUIC_MAX_CID];
	struct kr_err herr = { "" };
	long n;

	n = kr_hex_decode(hex, cid, sizeof(cid), &herr);
	if (n < 0)
		return kr_errf(err, "QUIC connection ID %s (1..%u bytes)", herr.msg,
			       KR_QUIC_MAX_CID);
	if (n == 0)
		return kr_errf(err, "QUIC connection ID '%s': empty (a zero-length "
			       "destination connection ID gives no key: the service's no_key "
			       "policy applies)", hex);
	(void)spec;	/* long headers carry any length: a spec does not restrict the form */
	return key_set(key, cid, (size_t)n, "QUIC", err);
}

/* ---- payload ---------------------------------------------------------------------- */

int kr_key_from_payload(const uint8_t *p, size_t n, const struct kr_keyspec *spec,
			struct kr_key *key, struct kr_err *err)
{
	const uint8_t *d;
	size_t len;

	if (!spec || (spec->offset == 0 && spec->length == 0 && spec->delimiter < 0))
		return key_set(key, p, n, "payload", err);
	if (spec->offset > n)
		return kr_errf(err, "payload of %zu bytes ends before the key offset %u "
			       "(no key: the service's no_key policy applies)", n, spec->offset);
	p += spec->offset;
	n -= spec->offset;
	if (spec->length) {
		if (spec->length > n)
			return kr_errf(err, "payload has %zu bytes after offset %u, the key "
				       "needs %u (no key: the service's no_key policy applies)", n,
				       spec->offset, spec->length);
		len = spec->length;
	} else if (spec->delimiter >= 0) {
		d = memchr(p, spec->delimiter, n);
		if (!d && n > KR_MAX_KEY_LEN)	/* no delimiter in the 255 bytes: too long */
			return kr_errf(err, "payload has no delimiter byte 0x%02x in the %u "
				       "bytes after offset %u: the key would be longer than %u bytes: "
				       "keys are at most %u bytes", spec->delimiter, KR_MAX_KEY_LEN,
				       spec->offset, KR_MAX_KEY_LEN, KR_MAX_KEY_LEN);
		if (!d)
			return kr_errf(err, "payload has no delimiter byte 0x%02x after offset "
				       "%u (no key: the service's no_key policy applies)",
				       spec->delimiter, spec->offset);
		len = d - p;
	} else {
		len = n;
	}
	return key_set(key, p, len, "payload", err);
}

int kr_keyform_payload(const char *arg, const struct kr_keyspec *spec, struct kr_key *key,
		       struct kr_err *err)
{
	static uint8_t buf[KR_PAYLOAD_MAX];
	struct kr_err herr = { "" };
	long n;

	if (!strncmp(arg, "hex:", 4)) {
		n = kr_hex_decode(arg + 4, buf, sizeof(buf), &herr);
		if (n < 0)
			return kr_errf(err, "payload hex:%s", herr.msg);
		return kr_key_from_payload(buf, (size_t)n, spec, key, err);
	}
	n = (long)strlen(arg);
	if (n > KR_PAYLOAD_MAX)
		return kr_errf(err, "payload of %ld bytes: a UDP payload has at most %u",
			       n, KR_PAYLOAD_MAX);
	return kr_key_from_payload((const uint8_t *)arg, (size_t)n, spec, key, err);
}

int kr_keyform(enum kr_key_type type, const struct kr_keyspec *spec, const char *arg,
	       struct kr_key *key, struct kr_err *err)
{
	switch (type) {
	case KR_KEY_TUPLE:
		return kr_keyform_tuple(arg, key, err);
	case KR_KEY_PAYLOAD:
		return kr_keyform_payload(arg, spec, key, err);
	case KR_KEY_DNS:
		return kr_keyform_dns(arg, key, err);
	case KR_KEY_MEMCACHE:
		return kr_keyform_memcache(arg, key, err);
	case KR_KEY_QUIC:
		return kr_keyform_quic(arg, spec, key, err);
	default:
		return kr_errf(err, "unknown key type (expected one of %s)",
			       kr_key_type_list());
	}
}
