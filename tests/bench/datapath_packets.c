// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-packet cost of the whole XDP program (bpf/keyrouter.bpf.c) by key extractor, through
 * BPF_PROG_TEST_RUN: 65536 different packets per variant (a different key each: the
 * packet number is written into the key), each run once; the figure is the mean of the
 * kernel's own per-run duration (test_run's `duration`, ns, so the syscall is not in it),
 * best of 3 rounds.  Every routed variant goes through a 10k-point ring of 16 backends and
 * l2 forwarding (XDP_TX).  Baseline, measured in the same run: the same program on UDP
 * packets to a port without a service (parse + service miss + pass); "tuple, ring not
 * published" stops after the key and the ring's control word (the difference to "tuple"
 * is the ring lookup + forwarding).  No assertions; on a busy machine the figures move.
 *
 *   build/bench/datapath_packets
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kr_datapath_kern_user.h"
#include "publish.h"
#include "../bpf/pktbuild.h"
#include "../bpf/ring_fixture.h"
#include "keyrouter.skel.h"
#include "bench_args.h"
#include "bench_loadavg.h"

#define NPKT	65536
#define NPTS	10000
#define NBE	16

static struct keyrouter_bpf *skel;

enum { V_BASE, V_NORING, V_TUPLE, V_PAYLOAD, V_DNS, V_MC, V_MCFAR, V_QUIC, NV };
static const char *vname[NV] = { "no service (baseline)", "tuple, ring not published",
				 "tuple", "payload (16 bytes)", "dns (www-NNNNN.example.com)",
				 "memcache (get key-NNNNN)", "memcache (480 separators, key)",
				 "quic (long header, DCID 8)" };
static const uint16_t vport[NV] = { 9999, 9004, 9003, 9000, 53, 11211, 11212, 443 };
static const uint8_t vtype[NV] = { 0, KR_KEY_TUPLE, KR_KEY_TUPLE, KR_KEY_PAYLOAD, KR_KEY_DNS,
				   KR_KEY_MEMCACHE, KR_KEY_MEMCACHE, KR_KEY_QUIC };
#define SLOT	640	/* bytes per stored packet */

static int setup(void)
{
	uint32_t *hash = calloc(NPTS, sizeof(*hash)), bt[NBE];
	uint16_t *be = calloc(NPTS, sizeof(*be));
	struct fx_img im;
	struct kr_err err;
	int rc = -1;

	if (!hash || !be)
		goto out;
	for (uint32_t i = 0; i < NBE; i++) {
		struct kr_backend b = { .family = 4, .state = KR_BACKEND_UP };

		bt[i] = i + 1;
		b.addr[0] = 10;
		b.addr[3] = i + 1;
		b.mac[0] = 2;
		b.mac[5] = i + 1;
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.kr_backends), &bt[i], &b, BPF_ANY))
			goto out;
	}
	for (uint32_t i = 0; i < NPTS; i++) {
		hash[i] = (uint32_t)(((uint64_t)(i + 1) << 32) / (NPTS + 1));
		be[i] = i % NBE;
	}
	if (fx_encode(&im, hash, be, NPTS, bt, NBE) ||
	    kr_publish(bpf_map__fd(skel->maps.kr_rings), 0, 0, im.buf, im.nchunks, &err))
		goto out;
	free(im.buf);
	for (int v = 1; v < NV; v++) {
		struct kr_service_key k = { .proto = 17 };
		struct kr_service s = { .ring_id = v == V_NORING ? 9 : 0, .key_type = vtype[v], .fwd_mode = KR_FWD_L2,
					.quic_cid_len = 8 };

		k.port = htons(vport[v]);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.kr_services), &k, &s, BPF_ANY))
			goto out;
	}
	rc = 0;
out:
	free(hash);
	free(be);
	return rc;
}

/* Packet i of variant v (a different key for every i). */
static size_t build(int v, uint32_t i, uint8_t *out)
{
	struct pkt_spec s = PKT_V4("198.51.100.7", 1024 + (i & 0x7fff), "192.0.2.1", vport[v]);
	uint8_t pl[SLOT];
	size_t n = 0;

	s.src = (i & 0x8000) ? "198.51.100.8" : "198.51.100.7";
	switch (v) {
	case V_DNS:
		memset(pl, 0, 12);
		pl[2] = 1;
		pl[5] = 1;
		n = 12;
		n += sprintf((char *)pl + n, "%cwww-%05u%cexample%ccom", 9, i, 7, 3);
		pl[n++] = 0;
		memcpy(pl + n, "\0\1\0\1", 4);
		n += 4;
		break;
	case V_MC:
		memcpy(pl, "\0\1\0\0\0\1\0\0", 8);
		n = 8 + sprintf((char *)pl + 8, "get key-%05u\r\n", i);
		break;
	case V_MCFAR:	/* the longest scan before the key the window allows */
		memcpy(pl, "\0\1\0\0\0\1\0\0get", 11);
		memset(pl + 11, ' ', 480);
		n = 491 + sprintf((char *)pl + 491, "key-%05u\r\n", i);
		break;
	case V_QUIC:
		memcpy(pl, "\xc3\0\0\0\1\x08", 6);
		memcpy(pl + 6, &i, 4);
		memcpy(pl + 10, "DCID", 4);
		memset(pl + 14, 0, 40);
		n = 54;
		break;
	default:
		n = sprintf((char *)pl, "key-%011u", i);
		break;
	}
	s.payload = pl;
	s.plen = n;
	return pkt_build(&s, out);
}

int main(int argc, char **argv)
{
	bench_args(argc, argv, 0,
		   " [--help]\n"
		   "Per-packet cost of the whole XDP program by key extractor (65536 different packets\n"
		   "each), against a packet to a port without a service.  No assertions.\n");
	bench_loadavg_begin();
	static uint8_t out[PKT_MAX];
	uint8_t *pkts = malloc((size_t)NPKT * SLOT);
	uint16_t *lens = malloc(NPKT * sizeof(*lens));
	double best[NV];
	int fd;

	skel = keyrouter_bpf__open_and_load();
	if (!skel || !pkts || !lens || setup()) {
		fprintf(stderr, "datapath_packets: couldn't load/configure keyrouter.bpf.o\n");
		return 1;
	}
	fd = bpf_program__fd(skel->progs.kr_xdp);
	printf("XDP program, %u different packets per variant, mean kernel duration per run "
	       "(best of 3)\n", NPKT);
	for (int v = 0; v < NV; v++) {
		static uint8_t tmp[PKT_MAX];
		uint32_t want = v == V_BASE || v == V_NORING ? 2 : 3;	/* XDP_PASS / XDP_TX */

		for (uint32_t i = 0; i < NPKT; i++) {
			lens[i] = (uint16_t)build(v, i, tmp);
			memcpy(pkts + (size_t)i * SLOT, tmp, lens[i]);
		}
		best[v] = 1e18;
		for (int round = 0; round < 3; round++) {
			uint64_t sum = 0, bad = 0;

			for (uint32_t i = 0; i < NPKT; i++) {
				LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkts + (size_t)i * SLOT,
					    .data_size_in = lens[i], .data_out = out,
					    .data_size_out = sizeof(out), .repeat = 1);

				if (bpf_prog_test_run_opts(fd, &o)) {
					perror("test_run");
					return 1;
				}
				sum += o.duration;
				bad += o.retval != want;
			}
			if (bad)
				printf("  (%s: %lu packets with an unexpected verdict)\n", vname[v],
				       (unsigned long)bad);
			if ((double)sum / NPKT < best[v])
				best[v] = (double)sum / NPKT;
		}
		printf("  %-30s %7.1f ns/packet   %5.2fx baseline  (+%.1f ns)\n", vname[v], best[v],
		       best[v] / best[V_BASE], best[v] - best[V_BASE]);
	}
	keyrouter_bpf__destroy(skel);
	free(pkts);
	free(lens);
	return 0;
}
