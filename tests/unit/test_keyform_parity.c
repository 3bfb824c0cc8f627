// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The human key forms (user/core/keyform.c) against the data path's own extractors
 * (include/kr_key.h, the same source the BPF program runs, compiled here for userspace):
 * for random inputs of every key type, build the packet payload the data path would see,
 * extract its key, and check that the human form of the same input gives the same bytes
 * (and that both fail together: no key / too long).  Deterministic (fixed seed).
 */
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "keyform.h"
#include "addr.h"
#include "kr_key.h"

#define ROUNDS 20000

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (uint32_t)(rng % n) : 0;
}

struct result {
	int ok;			/* key found */
	int too_long;
	struct kr_key key;
};

static struct kr_scratch scratch;

/* The data path: payload (and source) -> key. */
static void dp_extract(const struct kr_service *svc, const uint8_t *pl, uint32_t n,
		       const struct kr_sockaddr *src, struct result *r)
{
	struct kr_pkt pkt = { 0 };
	uint32_t wlen, klen = 0;
	int rc;

	pkt.pl_len = n;
	pkt.family = src ? src->family : 4;
	if (src) {
		memcpy(pkt.src, src->ip, 16);
		pkt.sport[0] = src->port >> 8;
		pkt.sport[1] = src->port & 0xff;
	}
	wlen = kr_key_window(svc, &pkt);
	memset(&scratch, 0xa5, sizeof(scratch));
	memcpy(scratch.win, pl, wlen);
	rc = kr_key_extract(svc, &pkt, &scratch, wlen, &klen);
	r->ok = rc == KR_KEY_OK;
	r->too_long = rc == KR_KEY_TOO_LONG;
	r->key.len = r->ok ? klen : 0;
	memcpy(r->key.b, scratch.key, r->key.len);
}

/* The human form. */
static void human(enum kr_key_type t, const struct kr_keyspec *spec, const char *arg,
		  struct result *r, struct kr_err *err)
{
	r->ok = kr_keyform(t, spec, arg, &r->key, err) == 0;
	r->too_long = !r->ok && (strstr(err->msg, "keys are at most 255 bytes") ||
				 strstr(err->msg, "longer than 255 bytes in wire format"));
	if (!r->ok)
		r->key.len = 0;
}

static int same(const struct result *a, const struct result *b)
{
	if (a->ok != b->ok)
		return 0;
	if (!a->ok)
		return a->too_long == b->too_long;
	return a->key.len == b->key.len && !memcmp(a->key.b, b->key.b, a->key.len);
}

static int report(const char *what, int i, const char *arg, const struct result *dp,
		  const struct result *hu, const char *err)
{
	char h1[2 * KR_MAX_KEY_LEN + 1], h2[2 * KR_MAX_KEY_LEN + 1];

	DIAG("%s #%d '%.80s': data path %s %s, human form %s %s (%s)", what, i, arg,
	     dp->ok ? "key" : dp->too_long ? "too long" : "no key", kr_key_hex(&dp->key, h1, sizeof(h1)),
	     hu->ok ? "key" : hu->too_long ? "too long" : "error", kr_key_hex(&hu->key, h2, sizeof(h2)),
	     hu->ok ? "" : err);
	return 1;
}

/* ---- dns ---- */

static const char dns_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";

static void test_dns(void)
{
	struct kr_service svc = { .key_type = KR_KEY_DNS };
	uint8_t pl[600];
	char name[1200];
	struct kr_err err;
	struct result dp, hu;
	int bad = 0, found = 0, long_ = 0;

	for (int i = 0; i < ROUNDS && bad < 5; i++) {
		uint32_t n = 12, o = 0, labels = 1 + rnd(i % 8 ? 5 : 8);

		memset(pl, 0, 12);
		pl[0] = rnd(256), pl[1] = rnd(256);
		pl[2] = 0x01;			/* RD, QR = 0: a query */
		pl[5] = 1;			/* QDCOUNT = 1 */
		for (uint32_t l = 0; l < labels; l++) {
			uint32_t len = 1 + rnd(i % 5 ? 20 : 63);

			pl[n++] = (uint8_t)len;
			for (uint32_t k = 0; k < len; k++) {
				uint32_t pick = rnd(40);
				uint8_t c;

				if (pick == 0)
					c = '.';
				else if (pick == 1)
					c = '\\';
				else if (pick == 2)
					c = (uint8_t)(0x80 + rnd(128));
				else if (pick == 3)
					c = (uint8_t)rnd(32);
				else
					c = (uint8_t)dns_chars[rnd(sizeof(dns_chars) - 1)];
				pl[n++] = c;
				if (c == '.' || c == '\\')
					o += sprintf(name + o, "\\%c", c);
				else if (c < 0x20)
					o += sprintf(name + o, "\\%03u", c);
				else
					name[o++] = (char)c;
			}
			name[o++] = '.';
		}
		if (rnd(2))
			o--;			/* without the trailing dot: the same name */
		name[o] = 0;
		pl[n++] = 0;
		pl[n++] = 0, pl[n++] = 1, pl[n++] = 0, pl[n++] = 1;	/* QTYPE A, QCLASS IN */
		dp_extract(&svc, pl, n, NULL, &dp);
		human(KR_KEY_DNS, NULL, name, &hu, &err);
		found += dp.ok;
		long_ += dp.too_long;
		if (!same(&dp, &hu))
			bad += report("dns", i, name, &dp, &hu, err.msg);
	}
	CHECK(bad == 0, "dns: %d names, human form = data path key (%d keys, %d too long)",
	      ROUNDS, found, long_);
	CHECK(found > ROUNDS / 2 && long_ > 10, "dns: both outcomes covered");
}

/* ---- memcache ---- */

static const char *const mc_cmds[] = {
	"get", "gets", "set", "add", "replace", "append", "prepend", "cas", "delete",
	"incr", "decr", "touch", "mg", "ms", "md", "ma", "gat", "gats",
};

static void test_memcache(void)
{
	struct kr_service svc = { .key_type = KR_KEY_MEMCACHE };
	uint8_t pl[600];
	char line[600];
	struct kr_err err;
	struct result dp, hu;
	int bad = 0, found = 0, long_ = 0;

	for (int i = 0; i < ROUNDS && bad < 5; i++) {
		const char *cmd = mc_cmds[rnd(sizeof(mc_cmds) / sizeof(mc_cmds[0]))];
		uint32_t o = 0, klen = 1 + rnd(i % 10 ? 40 : 300);

		o += sprintf(line, "%s", cmd);
		line[o++] = ' ';
		while (rnd(4) == 0)
			line[o++] = ' ';	/* runs of spaces */
		if (cmd[0] == 'g' && cmd[1] == 'a')
			o += sprintf(line + o, "%u ", rnd(100000));
		for (uint32_t k = 0; k < klen && o < 400; k++)
			line[o++] = (char)(0x21 + rnd(0x7f - 0x21));
		if (rnd(2))
			o += sprintf(line + o, " %s", rnd(2) ? "0 0 5" : "other");
		line[o] = 0;
		memset(pl, 0, 8);
		pl[1] = (uint8_t)rnd(256), pl[5] = 1;	/* request id, 1 datagram */
		memcpy(pl + 8, line, o);
		memcpy(pl + 8 + o, "\r\n", 2);
		dp_extract(&svc, pl, 8 + o + 2, NULL, &dp);
		human(KR_KEY_MEMCACHE, NULL, line, &hu, &err);
		found += dp.ok;
		long_ += dp.too_long;
		if (!same(&dp, &hu))
			bad += report("memcache", i, line, &dp, &hu, err.msg);
	}
	CHECK(bad == 0, "memcache: %d command lines, human form = data path key (%d keys, "
	      "%d too long)", ROUNDS, found, long_);
	CHECK(found > ROUNDS / 2 && long_ > 10, "memcache: both outcomes covered");
}

/* ---- quic ---- */

static void test_quic(void)
{
	struct kr_service svc = { .key_type = KR_KEY_QUIC };
	uint8_t pl[128];
	char hex[64];
	struct kr_err err;
	struct result dp, hu;
	int bad = 0, found = 0;

	for (int i = 0; i < ROUNDS && bad < 5; i++) {
		uint32_t n, cid = 1 + rnd(KR_QUIC_MAX_CID), start;
		int lng = rnd(2);

		svc.quic_cid_len = (uint8_t)(1 + rnd(KR_QUIC_MAX_CID));
		for (uint32_t k = 0; k < sizeof(pl); k++)
			pl[k] = (uint8_t)rnd(256);
		if (lng) {
			pl[0] |= 0x80;		/* long header: version, DCID length, DCID */
			pl[5] = (uint8_t)cid;
			start = 6;
		} else {
			pl[0] = (pl[0] & 0x3f) | 0x40;	/* short header: DCID of quic_cid_len */
			cid = svc.quic_cid_len;
			start = 1;
		}
		n = start + cid + rnd(60);
		for (uint32_t k = 0; k < cid; k++)
			sprintf(hex + 2 * k, "%02x", pl[start + k]);
		dp_extract(&svc, pl, n, NULL, &dp);
		human(KR_KEY_QUIC, NULL, hex, &hu, &err);
		found += dp.ok;
		if (!same(&dp, &hu))
			bad += report("quic", i, hex, &dp, &hu, err.msg);
	}
	CHECK(bad == 0 && found == ROUNDS, "quic: %d long/short headers, human form (hex "
	      "DCID) = data path key", ROUNDS);
}

/* ---- payload ---- */

static void test_payload(void)
{
	struct kr_service svc = { .key_type = KR_KEY_PAYLOAD };
	struct kr_keyspec spec = { .type = KR_KEY_PAYLOAD };
	uint8_t pl[500];
	char arg[1100];
	struct kr_err err;
	struct result dp, hu;
	int bad = 0, found = 0, nokey = 0, long_ = 0;

	for (int i = 0; i < ROUNDS && bad < 5; i++) {
		uint32_t n = rnd(i % 4 ? 80 : 480), mode = rnd(3);

		for (uint32_t k = 0; k < n; k++)
			pl[k] = (uint8_t)(rnd(8) ? 'a' + rnd(4) : '|');
		spec.offset = rnd(i % 3 ? 12 : KR_MAX_PAYLOAD_OFFSET + 1);
		spec.length = mode == 0 ? 1 + rnd(i % 3 ? 20 : KR_MAX_KEY_LEN) : 0;
		spec.delimiter = mode == 1 ? '|' : -1;
		svc.payload_off = (__u16)spec.offset;
		svc.payload_len = (__u16)spec.length;
		svc.flags = mode == 1 ? KR_SVC_F_PAYLOAD_DELIM : 0;
		svc.payload_delim = '|';
		{
			uint32_t o = (uint32_t)sprintf(arg, "hex:");

			for (uint32_t k = 0; k < n; k++)
				o += (uint32_t)sprintf(arg + o, "%02x", pl[k]);
		}
		dp_extract(&svc, pl, n, NULL, &dp);
		human(KR_KEY_PAYLOAD, &spec, arg, &hu, &err);
		found += dp.ok;
		long_ += dp.too_long;
		nokey += !dp.ok && !dp.too_long;
		if (!same(&dp, &hu)) {
			bad += report("payload", i, arg, &dp, &hu, err.msg);
			DIAG("  offset %u length %u delimiter %d", spec.offset, spec.length,
			     spec.delimiter);
		}
	}
	CHECK(bad == 0, "payload: %d payloads x offset/length/delimiter, human form = data path "
	      "(%d keys, %d no key, %d too long)", ROUNDS, found, nokey, long_);
	CHECK(found > 100 && nokey > 100 && long_ > 10, "payload: every outcome covered");
}

/* ---- tuple ---- */

static void test_tuple(void)
{
	struct kr_service svc = { .key_type = KR_KEY_TUPLE };
	struct kr_sockaddr a;
	char arg[KR_SOCKADDR_STRLEN];
	struct kr_err err;
	struct result dp, hu;
	int bad = 0;

	for (int i = 0; i < ROUNDS && bad < 5; i++) {
		memset(&a, 0, sizeof(a));
		a.family = rnd(2) ? 4 : 6;
		for (int k = 0; k < (a.family == 4 ? 4 : 16); k++)
			a.ip[k] = (uint8_t)(rnd(3) ? rnd(256) : 0);
		a.port = (uint16_t)rnd(65536);
		kr_sockaddr_format(&a, arg);
		dp_extract(&svc, (const uint8_t *)"", 0, &a, &dp);
		human(KR_KEY_TUPLE, NULL, arg, &hu, &err);
		if (!same(&dp, &hu))
			bad += report("tuple", i, arg, &dp, &hu, err.msg);
	}
	CHECK(bad == 0, "tuple: %d IPv4/IPv6 sources, human form = data path key", ROUNDS);
}

int main(void)
{
	test_dns();
	test_memcache();
	test_quic();
	test_payload();
	test_tuple();
	return tap_done();
}
