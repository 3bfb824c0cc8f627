/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Human key forms: turn what an operator types ("www.Example.com.", "10.0.0.1:5353",
 * "hex:0a0b", a QUIC connection ID in hex) into EXACTLY the key bytes the data path's
 * extractors take from a packet (include/kr_key.h "Key bytes"), so `keyrouter lookup
 * --key-type TYPE ARG` answers "where does this go" without traffic.
 *
 *   tuple     "ip:port" / "[v6]:port"  -> source address + source port, network order
 *                                         (IPv4: 4 + 2 bytes, IPv6: 16 + 2 bytes)
 *   payload   "text" or "hex:0a0b..."  -> those bytes; with a service's key spec, the
 *                                         offset/length/delimiter is applied to them as
 *                                         to a UDP payload
 *   dns       "www.Example.COM."       -> wire-format labels, ASCII-lowercased, with the
 *                                         final zero label; "." is the root (one 0 byte)
 *   memcache  "key" or "get key ..."   -> the first key token
 *   quic      "0a0b0c0d..."            -> the connection ID bytes (1..20; a zero-length
 *                                         DCID gives no key in the data path)
 *
 * Every key is at most KR_MAX_KEY_LEN (255) bytes; a longer one is an error here (in the
 * kernel, the service's key_too_long policy).
 */
#ifndef KR_KEYFORM_H
#define KR_KEYFORM_H

#include <stddef.h>
#include <stdint.h>
#include "kr_datapath_kern_user.h"
#include "err.h"

#define KR_QUIC_MAX_CID		20	/* RFC 9000: connection IDs are 0..20 bytes (0: no key) */
#define KR_DNS_MAX_LABEL	63
#define KR_DNS_MAX_NAME		255	/* wire bytes, final zero label included */
#define KR_PAYLOAD_MAX		65507	/* largest UDP payload over IPv4 */

/* enum kr_key_type (KR_KEY_TUPLE .. KR_KEY_QUIC) and KR_MAX_PAYLOAD_OFFSET are the data
 * path's, in kr_datapath_kern_user.h (the kr_service map value). */
#define KR_KEY_NONE ((enum kr_key_type)0)	/* no extractor (hex keys) */

/* A key extractor and its parameters (one per service). */
struct kr_keyspec {
	enum kr_key_type type;
	/* payload: key = payload[offset, offset + length) when length > 0 (it must lie
	 * inside the payload); else, when delimiter >= 0, payload[offset, first delimiter
	 * byte at or after offset) (no delimiter: no key; none in the 255 bytes after
	 * offset: too long); else payload[offset, end) (offset 0: the whole payload; empty
	 * payload: empty key).  offset <= KR_MAX_PAYLOAD_OFFSET.  As include/kr_key.h. */
	uint32_t offset;
	uint32_t length;
	int delimiter;		/* -1: none; else 0..255 */
	/* quic: DCID length of short-header packets (long headers carry their own length) */
	uint32_t cid_length;
};

struct kr_key {
	uint32_t len;
	uint8_t b[KR_MAX_KEY_LEN];
};

/* "tuple" -> KR_KEY_TUPLE ...; 0 if known, -1 if not. */
int kr_key_type_parse(const char *s, enum kr_key_type *type);
const char *kr_key_type_name(enum kr_key_type type);
/* "tuple, payload, dns, memcache, quic" */
const char *kr_key_type_list(void);

/*
 * ARG in the human form of TYPE -> key bytes.  spec may be NULL (payload: the whole
 * argument is the key; quic: any CID length).  Returns 0, or -1 with err set
 * ("DNS name 'a..b': empty label at character 3" ...; err may be NULL).
 */
int kr_keyform(enum kr_key_type type, const struct kr_keyspec *spec, const char *arg,
	       struct kr_key *key, struct kr_err *err);

/* The forms one by one (same contract as kr_keyform). */
int kr_keyform_tuple(const char *arg, struct kr_key *key, struct kr_err *err);
int kr_keyform_dns(const char *name, struct kr_key *key, struct kr_err *err);
int kr_keyform_memcache(const char *arg, struct kr_key *key, struct kr_err *err);
int kr_keyform_quic(const char *hex, const struct kr_keyspec *spec, struct kr_key *key,
		    struct kr_err *err);
/* payload: arg is text, or "hex:..." for arbitrary bytes. */
int kr_keyform_payload(const char *arg, const struct kr_keyspec *spec, struct kr_key *key,
		       struct kr_err *err);
/* The payload rule of a service applied to raw payload bytes (what the data path does). */
int kr_key_from_payload(const uint8_t *p, size_t n, const struct kr_keyspec *spec,
			struct kr_key *key, struct kr_err *err);

/* Value of one hex digit, or -1. */
int kr_hexval(int c);

/* Hex digits (even count; optional "0x" prefix; ':' '-' ' ' separators between bytes
 * allowed) -> bytes.  Returns the byte count, or -1 with a message. */
long kr_hex_decode(const char *hex, uint8_t *out, size_t max, struct kr_err *err);
/* Key bytes as a human reads them for the key type (the reverse of kr_keyform): dns
 * "www.example.com." (other bytes than letters, digits, '-' and '_' as \DDD), tuple
 * "10.0.0.1:5353" / "[2001:db8::1]:5353", payload and memcache the text (other bytes than
 * printable ASCII as \xHH, '\' as \\), quic (and anything malformed) hex.  "-" for the
 * empty key.  buf needs KR_KEY_PRINT_MAX. */
#define KR_KEY_PRINT_MAX	(4 * KR_MAX_KEY_LEN + 8)
char *kr_key_print(enum kr_key_type type, const uint8_t *b, size_t len, char *buf,
		   size_t buflen);

/* key -> lowercase hex, or "-" for the empty key; buf needs 2 * KR_MAX_KEY_LEN + 1. */
char *kr_key_hex(const struct kr_key *key, char *buf, size_t buflen);

#endif /* KR_KEYFORM_H */
