// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* QUIC-LB decode through the kernel's program (see kernel_quic_lb.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kernel_quic_lb.h"
#include "keyrouter.skel.h"
#include "test_frame.h"

/* ---- through the kernel ------------------------------------------------------------- */

#define KQ_VIP		0xc0000201u	/* 192.0.2.1 (TEST-NET-1) */
#define KQ_PORT		443
#define KQ_ID		1
#define KQ_TAG		1
#define KQ_PAD		24		/* payload after the header (a real Initial is longer) */

struct kr_kqlb {
	struct keyrouter_bpf *skel;
	int prog_fd;
	uint8_t pkt[ETH_HLEN + sizeof(struct iphdr) + sizeof(struct udphdr) + 512];
};

void kr_kqlb_close(struct kr_kqlb *kq)
{
	if (!kq)
		return;
	keyrouter_bpf__destroy(kq->skel);
	free(kq);
}

int kr_kqlb_open(struct kr_kqlb **out, const struct kr_qlb_conf *conf, struct kr_err *err)
{
	struct kr_service_key sk = { .proto = IPPROTO_UDP, .family = 4 };
	struct kr_service sv = { .key_type = KR_KEY_QUIC, .fwd_mode = KR_FWD_L2,
				 .flags = KR_SVC_F_QUIC_LB };
	struct kr_kqlb *kq = calloc(1, sizeof(*kq));
	uint32_t vip = htonl(KQ_VIP);
	int ret;

	if (!kq)
		return kr_errf(err, "out of memory");
	kq->skel = keyrouter_bpf__open();
	if (!kq->skel) {
		kr_errf(err, "couldn't open the BPF object: %s", strerror(errno));
		goto fail;
	}
	kq->skel->rodata->kr_cfg_trace = 1;
	ret = keyrouter_bpf__load(kq->skel);
	if (ret) {
		kr_errf(err, "couldn't load the BPF object (root needed; run with -v for the "
			"verifier's log): %s", strerror(-ret));
		goto fail;
	}
	kq->prog_fd = bpf_program__fd(kq->skel->progs.kr_xdp);
	memcpy(sk.addr, &vip, 4);
	sk.port = htons(KQ_PORT);
	sv.quic_cid_len = (uint8_t)kr_qlb_min_cid(conf);
	sv.qlb_id = KQ_ID;
	sv.qlb_tag = KQ_TAG;
	if (bpf_map__update_elem(kq->skel->maps.kr_services, &sk, sizeof(sk), &sv, sizeof(sv), 0)) {
		kr_errf(err, "couldn't configure the quic service: %s", strerror(errno));
		goto fail;
	}
	for (uint32_t cr = 0; cr < KR_QLB_CR_UNROUTABLE; cr++) {
		struct kr_qlb_conf c = *conf;
		uint32_t key = kr_qlb_conf_index(KQ_ID, cr);

		c.tag = KQ_TAG;
		if (bpf_map__update_elem(kq->skel->maps.kr_qlb_configs, &key, sizeof(key), &c,
					 sizeof(c), 0)) {
			kr_errf(err, "couldn't write QUIC-LB configuration %u: %s", cr, strerror(errno));
			goto fail;
		}
	}
	*out = kq;
	return 0;
fail:
	kr_kqlb_close(kq);
	return -1;
}

/* Ethernet / IPv4 / UDP to the service; payload: a QUIC v1 long header (Initial) with
 * DCID = cid, no SCID, then KQ_PAD zero octets.  The frame length. */
static size_t kq_packet(struct kr_kqlb *kq, const uint8_t *cid, size_t len)
{
	uint8_t q[7 + 255 + KQ_PAD] = { 0 };

	q[0] = 0xc0;			/* long header, fixed bit, Initial */
	q[4] = 1;			/* version 1 */
	q[5] = (uint8_t)len;
	memcpy(q + 6, cid, len);
	q[6 + len] = 0;			/* SCID length */
	return kr_test_frame_udp4(kq->pkt, KQ_VIP, KQ_PORT, q, 7 + len + KQ_PAD);
}

int kr_kqlb_decode(struct kr_kqlb *kq, const uint8_t *cid, size_t len, struct kr_qlb_verdict *v,
		   struct kr_err *err)
{
	struct kr_qlb_trace *t = &kq->skel->bss->kr_qlb_trace_last;
	uint64_t seq = t->seq;
	LIBBPF_OPTS(bpf_test_run_opts, o, .repeat = 1);

	memset(v, 0, sizeof(*v));
	if (len == 0 || len > 255)
		return kr_errf(err, "a CID of %zu octets does not fit a QUIC long header", len);
	o.data_in = kq->pkt;
	o.data_size_in = (uint32_t)kq_packet(kq, cid, len);
	if (bpf_prog_test_run_opts(kq->prog_fd, &o))
		return kr_errf(err, "BPF_PROG_TEST_RUN failed: %s", strerror(errno));
	if (t->seq != seq + 1)
		return kr_errf(err, "the program did not reach the QUIC-LB stage (verdict %u)",
			       o.retval);
	v->outcome = t->outcome;
	v->cr = t->cr;
	if (t->outcome == KR_QLB_FB_UNKNOWN_SID || t->outcome == KR_QLB_ROUTED) {
		v->routable = true;
		v->sid_len = t->sid_len > KR_QLB_MAX_SID_LEN ? KR_QLB_MAX_SID_LEN : t->sid_len;
		memcpy(v->sid, t->sid, v->sid_len);
	}
	return 0;
}
