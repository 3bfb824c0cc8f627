/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * QUIC-LB for QUIC servers behind keyrouter: one header (plus include/kr_quic_lb.h and
 * include/kr_aes_tables.h, which it includes) that a server compiles in to issue routable
 * connection IDs.  No other dependency than libc.
 *
 *     #include "quic_lb_server.h"
 *
 *     struct quic_lb_server lb;
 *     char err[256];
 *     if (quic_lb_server_parse(&lb, getenv("QUIC_LB"), err, sizeof(err)))
 *             die("QUIC_LB: %s", err);
 *     ...
 *     // for every connection ID the server issues (its own SCID, NEW_CONNECTION_ID):
 *     uint8_t rnd[QUIC_LB_MAX_RANDOM];
 *     getrandom(rnd, quic_lb_server_random_len(&lb), 0);
 *     size_t n = quic_lb_server_encode(&lb, rnd, cid, sizeof(cid));  // 0: error
 *
 * The configuration string is what keyrouter's config holds for the service and backend:
 *
 *     cr=R,sid=HEX,nonce=N[,key=HEX32 | ,key_file=PATH][,su=N]
 *
 *   cr        config rotation 0..6 (the "config_rotation" of the service's quic_lb entry)
 *   sid       this server's ID, hex, 1..15 octets (its backend's "quic_lb_server_ids")
 *   nonce     nonce length 4..18 (sid + nonce + su <= 19)
 *   key       the AES-128 key, 32 hex digits (or key_file: a file holding them, the same
 *             file keyrouter reads); absent = plaintext CIDs
 *   su        server-use octets after the nonce (default 0): quic_lb_server_encode()
 *             copies them from the end of `random`; they are never encrypted
 *
 * Every CID the server issues must have the configured length (1 + sid + nonce + su):
 * keyrouter routes short-header packets by decoding exactly that many octets.  The nonce
 * must not repeat for one key (random octets from getrandom() are what the draft asks).
 */
#ifndef QUIC_LB_SERVER_H
#define QUIC_LB_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "kr_quic_lb.h"

#define QUIC_LB_MAX_RANDOM	KR_QLB_MAX_PLAIN_LEN	/* nonce + server-use octets, at most */

struct quic_lb_server {
	struct kr_qlb_conf conf;	/* lengths, mode, AES round keys */
	unsigned config_rotation;	/* 0..6 */
	uint8_t sid[KR_QLB_MAX_SID_LEN];
};

static inline int quic_lb_hexval(int ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 :
	       ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* Hex digits s[0..n) (blanks skipped when `blanks`) into out (at most max octets): the
 * octet count, or -1 (odd count, bad digit, too long). */
static inline int quic_lb_unhex(const char *s, size_t n, int blanks, uint8_t *out, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		int v = quic_lb_hexval((unsigned char)s[i]);

		if (v < 0 && blanks && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'))
			continue;
		if (v < 0 || k / 2 >= max)
			return -1;
		out[k / 2] = (uint8_t)(k % 2 ? (out[k / 2] << 4) | v : v);
		k++;
	}
	return k % 2 ? -1 : (int)(k / 2);
}

static inline int quic_lb_read_key_file(const char *path, uint8_t key[16], char *err, size_t errlen)
{
	char buf[128];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f) {
		snprintf(err, errlen, "key_file '%.200s': cannot open", path);
		return -1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n == sizeof(buf) || quic_lb_unhex(buf, n, 1, key, 16) != 16) {
		memset(buf, 0, sizeof(buf));
		snprintf(err, errlen, "key_file '%.200s': expected exactly 32 hex digits", path);
		return -1;
	}
	memset(buf, 0, sizeof(buf));
	return 0;
}

/* Parse a configuration string (above) into s.  0, or -1 with a message in err. */
static inline int quic_lb_server_parse(struct quic_lb_server *s, const char *spec, char *err,
				       size_t errlen)
{
	long cr = -1, nonce = -1, su = 0;
	int sid_len = -1, have_key = 0;
	uint8_t key[16];
	const char *p = spec;

	memset(s, 0, sizeof(*s));
	if (errlen)
		err[0] = 0;
	if (!spec || !*spec) {
		snprintf(err, errlen, "empty QUIC-LB configuration (expected "
			 "cr=R,sid=HEX,nonce=N[,key=HEX32|,key_file=PATH][,su=N])");
		return -1;
	}
	while (*p) {
		const char *eq = strchr(p, '='), *end = strchr(p, ',');
		size_t klen, vlen;
		char *e;

		if (!end)
			end = p + strlen(p);
		if (!eq || eq > end) {
			snprintf(err, errlen, "'%.*s': expected name=value", (int)(end - p), p);
			return -1;
		}
		klen = (size_t)(eq - p);
		vlen = (size_t)(end - eq - 1);
#define QLB_IS(name) (klen == strlen(name) && !strncmp(p, name, klen))
		if (QLB_IS("cr") || QLB_IS("nonce") || QLB_IS("su")) {
			long v = strtol(eq + 1, &e, 10);

			if (vlen == 0 || e != end) {
				snprintf(err, errlen, "%.*s: '%.*s' is not a number", (int)klen, p,
					 (int)vlen, eq + 1);
				return -1;
			}
			*(QLB_IS("cr") ? &cr : QLB_IS("nonce") ? &nonce : &su) = v;
		} else if (QLB_IS("sid")) {
			sid_len = quic_lb_unhex(eq + 1, vlen, 0, s->sid, KR_QLB_MAX_SID_LEN);
			if (sid_len < KR_QLB_MIN_SID_LEN) {
				snprintf(err, errlen, "sid: expected 1..15 octets in hex, got '%.*s'",
					 (int)vlen, eq + 1);
				return -1;
			}
		} else if (QLB_IS("key")) {
			if (quic_lb_unhex(eq + 1, vlen, 0, key, 16) != 16) {
				snprintf(err, errlen, "key: expected 32 hex digits (AES-128)");
				return -1;
			}
			have_key = 1;
		} else if (QLB_IS("key_file")) {
			char path[4096];

			snprintf(path, sizeof(path), "%.*s", (int)vlen, eq + 1);
			if (quic_lb_read_key_file(path, key, err, errlen))
				return -1;
			have_key = 1;
		} else {
			snprintf(err, errlen, "unknown field '%.*s' (expected cr, sid, nonce, key, "
				 "key_file, su)", (int)klen, p);
			return -1;
		}
#undef QLB_IS
		p = *end ? end + 1 : end;
	}
	if (cr < 0 || cr >= KR_QLB_CR_UNROUTABLE) {
		snprintf(err, errlen, "cr: config rotation 0..6 required (7 means unroutable)");
		return -1;
	}
	if (sid_len < 0) {
		snprintf(err, errlen, "sid: this server's ID (hex) is required");
		return -1;
	}
	if (nonce < KR_QLB_MIN_NONCE_LEN || nonce > KR_QLB_MAX_NONCE_LEN) {
		snprintf(err, errlen, "nonce: length 4..18 required");
		return -1;
	}
	if (su < 0 || sid_len + nonce + su > KR_QLB_MAX_PLAIN_LEN) {
		snprintf(err, errlen, "sid (%d) + nonce (%ld) + su (%ld) octets exceed 19: the "
			 "CID would be longer than 20", sid_len, nonce, su);
		return -1;
	}
	kr_qlb_conf_init(&s->conf, (__u32)sid_len, (__u32)nonce, (__u32)su, have_key ? key : NULL);
	memset(key, 0, sizeof(key));
	s->config_rotation = (unsigned)cr;
	return 0;
}

/* Octets of `random` quic_lb_server_encode() reads: nonce + server use. */
static inline size_t quic_lb_server_random_len(const struct quic_lb_server *s)
{
	return (size_t)s->conf.nonce_len + s->conf.su_len;
}

/* The CID length every CID of this configuration has. */
static inline size_t quic_lb_server_cid_len(const struct quic_lb_server *s)
{
	return 1 + (size_t)s->conf.sid_len + s->conf.nonce_len + s->conf.su_len;
}

/* Write a routable CID to out (outlen octets of room): its length, or 0 when it does not
 * fit.  random: quic_lb_server_random_len() octets, the nonce then the server-use octets. */
static inline size_t quic_lb_server_encode(const struct quic_lb_server *s, const uint8_t *random,
					   uint8_t *out, size_t outlen)
{
	struct kr_qlb_work w;
	size_t n = quic_lb_server_cid_len(s);
	__u32 len;

	if (!s->conf.valid || outlen < n)
		return 0;
	memset(&w, 0, sizeof(w));
	memcpy(w.pt, s->sid, s->conf.sid_len);
	memcpy(w.pt + s->conf.sid_len, random, quic_lb_server_random_len(s));
	len = kr_qlb_encode(&s->conf, &w, s->config_rotation);
	if (len != n)
		return 0;
	memcpy(out, w.cid, n);
	memset(&w, 0, sizeof(w));
	return n;
}

/* An unroutable CID (config rotation 0b111, the rest random) of len octets (1..20), for a
 * server that has no valid configuration: keyrouter routes it by the ring. */
static inline size_t quic_lb_server_unroutable(const uint8_t *random, uint8_t *out, size_t len)
{
	if (len < 1 || len > KR_QLB_MAX_CID_LEN)
		return 0;
	memcpy(out, random, len);
	out[0] = (uint8_t)((KR_QLB_CR_UNROUTABLE << 5) | (random[0] & 0x1f));
	return len;
}

#endif /* QUIC_LB_SERVER_H */
