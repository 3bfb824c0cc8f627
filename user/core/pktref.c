// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Userspace build of the data path's parser and extractors (see pktref.h). */
#include <string.h>
#include "pktref.h"
#include "kr_key.h"
#include "crc32.h"

int kr_ref_packet(const void *frame, size_t len, const struct kr_service *svc,
		  struct kr_ref_out *out)
{
	static struct kr_scratch s;
	const uint8_t *data = frame;
	struct kr_pkt pkt = { 0 };
	uint32_t wlen, klen = 0;

	memset(out, 0, sizeof(*out));
	out->parse_rc = kr_parse(data, data + len, &pkt);
	out->family = pkt.family;
	out->proto = pkt.proto;
	memcpy(out->dst, pkt.dst, sizeof(out->dst));
	out->dport = (uint16_t)(pkt.dport[0] << 8 | pkt.dport[1]);
	out->l3_off = pkt.l3_off;
	out->l3_len = pkt.l3_len;
	out->pl_off = pkt.pl_off;
	out->pl_len = pkt.pl_len;
	if (out->parse_rc != KR_PARSE_OK || !svc || pkt.proto != KR_IPPROTO_UDP)
		return out->parse_rc;
	/* the window, as bpf_xdp_load_bytes() copies it */
	memset(&s, 0, sizeof(s));
	wlen = kr_key_window(svc, &pkt);
	memcpy(s.win, data + pkt.pl_off, wlen);
	out->key_status = kr_key_extract(svc, &pkt, &s, wlen, &klen);
	if (out->key_status == KR_KEY_OK && klen > KR_MAX_KEY_LEN)
		out->key_status = KR_KEY_TOO_LONG;
	if (out->key_status == KR_KEY_OK) {
		out->key_len = klen;
		memcpy(out->key, s.key, klen);
		out->key_hash = kr_crc32(out->key, klen);
	}
	return out->parse_rc;
}
