// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The network-facing code: the userspace build of the data path's parser
 * (include/kr_parse.h) and of every key extractor (include/kr_key.h) on arbitrary bytes
 * as a frame.  Input: [flags][quic_cid_len][payload_off lo][payload_off hi][payload_len]
 * [delimiter] then the frame.  Every input runs through the parser and, when it parses,
 * through each extractor (tuple, dns, memcache, quic, payload whole / offset+length /
 * offset+delimiter with the given parameters).  Besides ASan/UBSan on the frame (exactly
 * its size on the heap), the part of the payload window past the bytes copied into it is
 * poisoned (from 7 bytes on: the 8-byte key copy may read that far past a key's end): an
 * extractor that reads beyond what the data path loads is a finding.
 * Properties:
 *  - parse: offsets inside the frame (UDP payload inside the IP packet inside the frame),
 *    family 4 or 6, VLAN tags <= 2;
 *  - keys: <= KR_MAX_KEY_LEN bytes; tuple 6 or 18 bytes = source address + port; payload =
 *    the payload bytes the rule selects; quic = DCID bytes of the payload; dns = wire-form
 *    name (labels 1..63, final 0, no uppercase); memcache = a token of the payload without
 *    separators;
 *  - the same input gives the same result twice.
 */
#define _GNU_SOURCE		/* memmem */
#include <sanitizer/asan_interface.h>
#include "fuzz.h"
#include "kr_datapath_kern_user.h"
#include "kr_parse.h"
#include "kr_key.h"

static struct kr_scratch *scratch;

static int extract(const uint8_t *frame, const struct kr_pkt *pkt, const struct kr_service *svc,
		   uint32_t *wlen, uint32_t *klen)
{
	int st;

	*wlen = kr_key_window(svc, pkt);
	FUZZ_ASSERT(*wlen <= KR_PAYLOAD_WINDOW && *wlen <= pkt->pl_len, "window %u", *wlen);
	ASAN_UNPOISON_MEMORY_REGION(scratch->win, KR_PAYLOAD_WINDOW);
	memset(scratch, 0xa5, sizeof(*scratch));
	memcpy(scratch->win, frame + pkt->pl_off, *wlen);
	/* kr_key_copy() copies 8 bytes a step: its last step may read up to 7 bytes past the
	 * key's end (into key bytes past its length), so the poison starts 7 bytes later */
	if (*wlen + 7 < KR_PAYLOAD_WINDOW)
		ASAN_POISON_MEMORY_REGION(scratch->win + *wlen + 7, KR_PAYLOAD_WINDOW - *wlen - 7);
	st = kr_key_extract(svc, pkt, scratch, *wlen, klen);
	ASAN_UNPOISON_MEMORY_REGION(scratch->win, KR_PAYLOAD_WINDOW);
	return st;
}

static void check_key(const uint8_t *frame, const struct kr_pkt *pkt,
		      const struct kr_service *svc, int st, uint32_t klen)
{
	const uint8_t *pl = frame + pkt->pl_off, *k = scratch->key;
	uint32_t n = pkt->family == 6 ? 16 : 4, i;

	if (st != KR_KEY_OK)
		return;
	FUZZ_ASSERT(klen <= KR_MAX_KEY_LEN, "key of %u bytes", klen);
	switch (svc->key_type) {
	case KR_KEY_TUPLE:
		FUZZ_ASSERT(klen == n + 2 && !memcmp(k, pkt->src, n) && !memcmp(k + n, pkt->sport, 2),
			    "tuple key");
		break;
	case KR_KEY_PAYLOAD:
		FUZZ_ASSERT(svc->payload_off + klen <= pkt->pl_len &&
			    !memcmp(k, pl + svc->payload_off, klen), "payload key of %u", klen);
		if (svc->payload_len)
			FUZZ_ASSERT(klen == svc->payload_len, "length %u", klen);
		else if (svc->flags & KR_SVC_F_PAYLOAD_DELIM)
			FUZZ_ASSERT(svc->payload_off + klen < pkt->pl_len &&
				    pl[svc->payload_off + klen] == svc->payload_delim &&
				    !memchr(k, svc->payload_delim, klen), "delimiter");
		else
			FUZZ_ASSERT(svc->payload_off + klen == pkt->pl_len, "to the end");
		break;
	case KR_KEY_QUIC:
		if (pl[0] & 0x80)
			FUZZ_ASSERT(klen == pl[5] && 6 + klen <= pkt->pl_len && !memcmp(k, pl + 6, klen),
				    "long header DCID");
		else
			FUZZ_ASSERT(klen == svc->quic_cid_len && 1 + klen <= pkt->pl_len &&
				    !memcmp(k, pl + 1, klen), "short header DCID");
		break;
	case KR_KEY_DNS:
		for (i = 0; i < klen && k[i]; i += 1 + k[i]) {
			FUZZ_ASSERT(k[i] <= 63, "label of %u", k[i]);
			for (uint32_t j = i + 1; j <= i + k[i] && j < klen; j++)
				FUZZ_ASSERT(!(k[j] >= 'A' && k[j] <= 'Z'), "uppercase");
		}
		FUZZ_ASSERT(klen >= 1 && i == klen - 1 && k[i] == 0, "wire form");
		FUZZ_ASSERT(12 + klen <= pkt->pl_len, "name inside the payload");
		break;
	case KR_KEY_MEMCACHE:
		FUZZ_ASSERT(klen >= 1 && klen <= pkt->pl_len - 8, "memcache key of %u", klen);
		for (i = 0; i < klen; i++)
			FUZZ_ASSERT(k[i] != ' ' && k[i] != '\t' && k[i] != '\r' && k[i] != '\n',
				    "separator in the key");
		FUZZ_ASSERT(memmem(pl + 8, pkt->pl_len - 8, k, klen) != NULL, "key not in payload");
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct kr_service svc[7];
	uint32_t flags = fuzz_u8(&in), cid = fuzz_u8(&in), off = fuzz_u16(&in) % 300;
	uint32_t plen = fuzz_u8(&in), delim = fuzz_u8(&in);
	uint8_t *frame;
	struct kr_pkt pkt, pkt2;
	int rc;

	if (!scratch)
		scratch = malloc(sizeof(*scratch));
	/* the frame alone on the heap: a read past its end is an ASan report */
	frame = malloc(in.n ? in.n : 1);
	memcpy(frame, in.p, in.n);
	memset(&pkt, 0, sizeof(pkt));
	memset(&pkt2, 0, sizeof(pkt2));
	rc = kr_parse(frame, frame + in.n, &pkt);
	FUZZ_ASSERT(rc == kr_parse(frame, frame + in.n, &pkt2) && !memcmp(&pkt, &pkt2, sizeof(pkt)),
		    "parse not deterministic");
	FUZZ_ASSERT(rc >= KR_PARSE_OK && rc <= KR_PARSE_ERROR, "parse rc %d", rc);
	FUZZ_ASSERT(pkt.nvlan <= KR_MAX_VLANS, "%u tags", pkt.nvlan);
	if (rc != KR_PARSE_OK)
		goto out;
	FUZZ_ASSERT(pkt.family == 4 || pkt.family == 6, "family %u", pkt.family);
	FUZZ_ASSERT(pkt.proto == KR_IPPROTO_UDP || pkt.proto == KR_IPPROTO_TCP, "protocol %u", pkt.proto);
	/* TCP: the payload after the data offset's words (5..15), to the end of the IP packet */
	if (pkt.proto == KR_IPPROTO_TCP)
		FUZZ_ASSERT(pkt.l4_off + 20 <= in.n && frame[pkt.l4_off + 12] >> 4 >= 5 &&
			    pkt.pl_off == pkt.l4_off + 4u * (frame[pkt.l4_off + 12] >> 4) &&
			    pkt.pl_off + pkt.pl_len == pkt.l3_off + pkt.l3_len,
			    "TCP: l4 %u payload %u+%u, data offset %u", pkt.l4_off, pkt.pl_off,
			    pkt.pl_len, pkt.l4_off + 20 <= in.n ? frame[pkt.l4_off + 12] >> 4 : 0);
	FUZZ_ASSERT(pkt.l3_off + pkt.l3_len <= in.n && pkt.l4_off >= pkt.l3_off + 20 &&
		    (pkt.proto == KR_IPPROTO_TCP || pkt.pl_off == pkt.l4_off + 8) &&
		    pkt.pl_off + pkt.pl_len <= pkt.l3_off + pkt.l3_len,
		    "offsets: l3 %u+%u l4 %u payload %u+%u of %zu", pkt.l3_off, pkt.l3_len, pkt.l4_off,
		    pkt.pl_off, pkt.pl_len, in.n);
	memset(svc, 0, sizeof(svc));
	svc[0].key_type = KR_KEY_TUPLE;
	svc[1].key_type = KR_KEY_DNS;
	svc[2].key_type = KR_KEY_MEMCACHE;
	svc[3].key_type = KR_KEY_QUIC;
	svc[3].quic_cid_len = (uint8_t)(flags & 1 ? cid : 1 + cid % 20);
	svc[4].key_type = KR_KEY_PAYLOAD;			/* whole, from offset */
	svc[4].payload_off = (uint16_t)(off % (KR_MAX_PAYLOAD_OFFSET + 1));
	svc[5].key_type = KR_KEY_PAYLOAD;			/* offset + length */
	svc[5].payload_off = (uint16_t)off;			/* may be out of range */
	svc[5].payload_len = (uint16_t)plen;
	svc[6].key_type = KR_KEY_PAYLOAD;			/* offset + delimiter */
	svc[6].payload_off = svc[4].payload_off;
	svc[6].payload_delim = (uint8_t)delim;
	svc[6].flags = KR_SVC_F_PAYLOAD_DELIM;
	for (int i = 0; i < 7; i++) {
		uint32_t wlen, klen = 0, klen2 = 0;
		uint8_t key1[KR_KEY_BUF];
		int st = extract(frame, &pkt, &svc[i], &wlen, &klen), st2;

		FUZZ_ASSERT(st >= KR_KEY_OK && st <= KR_KEY_BAD_SERVICE, "status %d", st);
		check_key(frame, &pkt, &svc[i], st, klen);
		memcpy(key1, scratch->key, sizeof(key1));
		st2 = extract(frame, &pkt, &svc[i], &wlen, &klen2);
		FUZZ_ASSERT(st == st2 && (st != KR_KEY_OK || (klen == klen2 &&
			    !memcmp(key1, scratch->key, klen))), "extractor %d not deterministic", i);
		if (st == KR_KEY_BAD_SERVICE)
			FUZZ_ASSERT((i == 5 && off > KR_MAX_PAYLOAD_OFFSET) ||
				    (i == 3 && svc[3].quic_cid_len == 0), "bad service for %d", i);
	}
out:
	free(frame);
	return 0;
}
