// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The C side of tests/lib/ngtcp2-quic-lb.patch: ngtcp2's example server (C++) issues its
 * connection IDs through these three functions, which use include/quic_lb_server.h (a C
 * header) for the configuration and the encoder.
 *
 * Configuration: the environment variable QUIC_LB, the string quic_lb_server_parse()
 * reads (cr=R,sid=HEX,nonce=N[,key=HEX32|,key_file=PATH][,su=N]).  Unset: the server
 * issues random CIDs as before.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/types.h>

#include "quic_lb_server.h"

int kr_ngtcp2_qlb_init(void);
size_t kr_ngtcp2_qlb_cid_len(void);
int kr_ngtcp2_qlb_new_cid(uint8_t *cid, size_t cidlen);

static struct quic_lb_server lb;

/* 1: QUIC_LB configured, 0: not set, -1: invalid (the message is on stderr). */
int kr_ngtcp2_qlb_init(void)
{
	const char *spec = getenv("QUIC_LB");
	static const char *const mode[] = { "plaintext", "single-pass AES-128", "four-pass AES-128" };
	char err[256], sid[2 * KR_QLB_MAX_SID_LEN + 1];
	unsigned i;

	if (!spec)
		return 0;
	if (quic_lb_server_parse(&lb, spec, err, sizeof(err))) {
		fprintf(stderr, "QUIC_LB: %s\n", err);
		return -1;
	}
	for (i = 0; i < lb.conf.sid_len; i++)
		snprintf(sid + 2 * i, 3, "%02x", lb.sid[i]);
	sid[2 * i] = 0;
	fprintf(stderr, "QUIC-LB: config rotation %u, server ID %s, nonce %u octets, %s, "
		"connection IDs of %zu octets\n", lb.config_rotation, sid, lb.conf.nonce_len,
		mode[lb.conf.mode <= KR_QLB_FOUR_PASS ? lb.conf.mode : 0], quic_lb_server_cid_len(&lb));
	return 1;
}

size_t kr_ngtcp2_qlb_cid_len(void)
{
	return quic_lb_server_cid_len(&lb);
}

/* A new routable CID of exactly cidlen octets (the configured length): 0, or -1. */
int kr_ngtcp2_qlb_new_cid(uint8_t *cid, size_t cidlen)
{
	uint8_t rnd[QUIC_LB_MAX_RANDOM];
	size_t n = quic_lb_server_random_len(&lb);

	if (cidlen != quic_lb_server_cid_len(&lb) || n > sizeof(rnd))
		return -1;
	if (getrandom(rnd, n, 0) != (ssize_t)n)
		return -1;
	return quic_lb_server_encode(&lb, rnd, cid, cidlen) == cidlen ? 0 : -1;
}
