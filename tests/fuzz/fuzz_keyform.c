// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Human key forms (user/core/keyform.c, used by `lookup --key-type/--service`) fuzzer.
 * Input: [flags: 0x40 = use the spec, low 3 bits = type][unused][offset][length]
 * [delimiter? >= 0x80: the next byte is the delimiter][cid_length] then the argument text.
 *  - kr_keyform never crashes, and on failure leaves a message (a struct kr_err, bounded);
 *  - on success the key is <= KR_MAX_KEY_LEN bytes and has its form's shape: tuple 6 or 18
 *    bytes; dns valid wire format (labels 1..63, final zero label, <= 255, no uppercase);
 *    quic 1..20 bytes; memcache no control characters or spaces; payload = the bytes the
 *    service rule selects;
 *  - kr_key_from_payload on the raw input (what the data path does to a UDP payload):
 *    the key is exactly payload[offset, ...) per the rule;
 *  - kr_hex_decode never writes more than max bytes;
 *  - kr_key_print (trace, top) of any bytes as any key type never writes past its buffer
 *    and ends the text; of a key kr_keyform made, its text parses back to the same key
 *    (dns, tuple, memcache: the forms are their own inverse there).
 */
#include "fuzz.h"
#include "keyform.h"

static void check_dns(const struct kr_key *k)
{
	uint32_t i = 0;

	FUZZ_ASSERT(k->len >= 1 && k->len <= KR_DNS_MAX_NAME, "dns length %u", k->len);
	while (i < k->len && k->b[i]) {
		FUZZ_ASSERT(k->b[i] <= KR_DNS_MAX_LABEL, "label of %u bytes", k->b[i]);
		for (uint32_t j = i + 1; j <= i + k->b[i] && j < k->len; j++)
			FUZZ_ASSERT(!(k->b[j] >= 'A' && k->b[j] <= 'Z'), "uppercase in key");
		i += 1 + k->b[i];
	}
	FUZZ_ASSERT(i == k->len - 1 && k->b[i] == 0, "not wire format: end at %u of %u", i, k->len);
}

static void check_payload_rule(const uint8_t *p, size_t n, const struct kr_keyspec *sp)
{
	struct kr_key k;
	struct kr_err err = { "" };
	size_t want_off = sp->offset, want_len;

	if (kr_key_from_payload(p, n, sp, &k, &err)) {
		FUZZ_ASSERT(err.msg[0], "no message");
		return;
	}
	FUZZ_ASSERT(want_off <= n, "key from past the payload end");
	if (sp->length)
		want_len = sp->length;
	else if (sp->delimiter >= 0 && memchr(p + want_off, sp->delimiter, n - want_off))
		want_len = (size_t)((const uint8_t *)memchr(p + want_off, sp->delimiter, n - want_off) -
				    (p + want_off));
	else
		want_len = n - want_off;
	FUZZ_ASSERT(k.len == want_len && k.len <= KR_MAX_KEY_LEN, "payload key of %u bytes, "
		    "expected %zu", k.len, want_len);
	FUZZ_ASSERT(!memcmp(k.b, p + want_off, k.len), "payload key bytes differ");
}

static void check_print(enum kr_key_type type, const struct kr_key *made, const uint8_t *p,
			size_t n)
{
	char buf[KR_KEY_PRINT_MAX + 1];
	struct kr_key back;

	memset(buf, 0x5a, sizeof(buf));
	kr_key_print(type, p, n > KR_MAX_KEY_LEN ? KR_MAX_KEY_LEN : n, buf, KR_KEY_PRINT_MAX);
	FUZZ_ASSERT(buf[KR_KEY_PRINT_MAX] == 0x5a, "kr_key_print wrote past its buffer");
	FUZZ_ASSERT(memchr(buf, 0, KR_KEY_PRINT_MAX), "kr_key_print left no end");
	if (!made || !made->len ||
	    (type != KR_KEY_DNS && type != KR_KEY_TUPLE && type != KR_KEY_MEMCACHE))
		return;
	kr_key_print(type, made->b, made->len, buf, KR_KEY_PRINT_MAX);
	if (strchr(buf, '\\'))
		return;		/* escaped bytes (\DDD, \xHH) are not the forms' syntax */
	FUZZ_ASSERT(!kr_keyform(type, NULL, buf, &back, NULL) &&
		    back.len == made->len && !memcmp(back.b, made->b, back.len),
		    "kr_key_print '%s' does not parse back to the key", buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct kr_keyspec sp = { 0 };
	enum kr_key_type type;
	struct kr_key key;
	struct kr_err err;
	char *arg;
	uint8_t hex[32];
	long n;
	int r;

	type = (enum kr_key_type)((fuzz_u8(&in) & 7) % 6);
	(void)fuzz_u8(&in);	/* was the message buffer's length: the corpus keeps its layout */
	sp.type = type;
	sp.offset = fuzz_u8(&in) % 64;
	sp.length = fuzz_u8(&in) % 64;
	sp.delimiter = (int)fuzz_u8(&in) - 128 > -1 ? (int)fuzz_u8(&in) : -1;
	sp.cid_length = fuzz_u8(&in) % 21;
	arg = fuzz_cstr(in.p, in.n);

	memset(&err, 0x5a, sizeof(err));
	r = kr_keyform(type, (data[0] & 0x40) ? &sp : NULL, arg, &key, &err);
	if (r) {
		FUZZ_ASSERT(fuzz_err_bounded(err.msg, sizeof(err.msg)) && err.msg[0], "no message");
	} else {
		FUZZ_ASSERT(key.len <= KR_MAX_KEY_LEN, "key of %u bytes", key.len);
		FUZZ_ASSERT(type != KR_KEY_NONE, "type none accepted");
		switch (type) {
		case KR_KEY_TUPLE:
			FUZZ_ASSERT(key.len == 6 || key.len == 18, "tuple key %u bytes", key.len);
			break;
		case KR_KEY_DNS:
			check_dns(&key);
			break;
		case KR_KEY_QUIC:
			FUZZ_ASSERT(key.len >= 1 && key.len <= KR_QUIC_MAX_CID, "cid %u", key.len);
			break;
		case KR_KEY_MEMCACHE:
			FUZZ_ASSERT(key.len >= 1, "empty memcache key");
			for (uint32_t i = 0; i < key.len; i++)
				FUZZ_ASSERT(key.b[i] > ' ' && key.b[i] != 0x7f, "control char in key");
			break;
		default:
			break;
		}
	}
	free(arg);
	check_print(type, r ? NULL : &key, in.p, in.n);

	check_payload_rule(in.p, in.n, &sp);
	sp.length = 0;
	check_payload_rule(in.p, in.n, &sp);

	arg = fuzz_cstr(in.p, in.n);
	memset(hex, 0xa5, sizeof(hex));
	n = kr_hex_decode(arg, hex, data[0] % 17, &err);
	FUZZ_ASSERT(n <= (long)(data[0] % 17), "decoded %ld > max", n);
	for (size_t i = data[0] % 17; i < sizeof(hex); i++)
		FUZZ_ASSERT(hex[i] == 0xa5, "hex decode wrote past max at %zu", i);
	free(arg);
	return 0;
}
