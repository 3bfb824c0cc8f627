// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `lookup --via-kernel`: keys through the data path program (see kernel_lookup.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kr_datapath_kern_user.h"
#include "kernel_lookup.h"
#include "publish.h"
#include "keyrouter.skel.h"
#include "test_frame.h"

#define KL_VIP		0xc0000201u	/* 192.0.2.1 (TEST-NET-1) */
#define KL_PORT		9999
#define KL_RING		0
#define KL_MAX_PAYLOAD	1400

struct kr_klookup {
	struct keyrouter_bpf *skel;
	int prog_fd;
	uint8_t pkt[ETH_HLEN + sizeof(struct iphdr) + sizeof(struct udphdr) + KL_MAX_PAYLOAD];
};

#define KL_SUBSET	1

static int kl_configure(struct kr_klookup *kl, const struct kr_image *img,
			const struct kr_klookup_backends *be, struct kr_err *err)
{
	uint32_t nb = be->n, one = 1;
	struct kr_service_key sk = { .proto = IPPROTO_UDP, .family = 4 };
	struct kr_service sv = { .ring_id = KL_RING, .key_type = KR_KEY_PAYLOAD,
				 .fwd_mode = KR_FWD_L2,
				 .subset_id = be->member ? KL_SUBSET : 0 };
	uint32_t vip = htonl(KL_VIP);
	uint64_t ctl = kr_ctl_make(0, 0, KR_RING_IDLE);

	memcpy(sk.addr, &vip, 4);
	sk.port = htons(KL_PORT);
	if (bpf_map__update_elem(kl->skel->maps.kr_services, &sk, sizeof(sk), &sv, sizeof(sv), 0))
		return kr_errf(err, "couldn't configure the payload service: %s", strerror(errno));
	for (uint32_t id = 0; id < nb; id++) {
		struct kr_backend b = { .family = 4,
					.state = be->state ? be->state[id] : KR_BACKEND_UP,
					.mac = { 2, 0, 0, 0, id >> 8, id & 0xff } };
		struct kr_subset_key mk = { .subset_id = KL_SUBSET, .backend_id = id };

		b.addr[0] = 10;
		b.addr[2] = id >> 8;
		b.addr[3] = id & 0xff;
		if (bpf_map__update_elem(kl->skel->maps.kr_backends, &id, sizeof(id), &b, sizeof(b), 0))
			return kr_errf(err, "couldn't write backend %u: %s", id, strerror(errno));
		if (be->member && be->member[id] &&
		    bpf_map__update_elem(kl->skel->maps.kr_subset_members, &mk, sizeof(mk), &one,
					 sizeof(one), 0))
			return kr_errf(err, "couldn't write subset member %u: %s", id,
				       strerror(errno));
	}
	if (kr_publish(bpf_map__fd(kl->skel->maps.kr_rings), KL_RING, 0, img->buf,
		       img->hdr->nchunks, err))
		return -1;
	return kr_ctl_write(bpf_map__fd(kl->skel->maps.kr_ring_ctl), KL_RING, ctl, err);
}

/* The object, loaded with its trace on and kr_backends sized for nbackends ids. */
static struct kr_klookup *kl_load(uint32_t nbackends, struct kr_err *err)
{
	struct kr_klookup *kl = calloc(1, sizeof(*kl));
	int ret;

	if (!kl) {
		kr_errf(err, "out of memory");
		return NULL;
	}
	kl->skel = keyrouter_bpf__open();
	if (!kl->skel) {
		kr_errf(err, "couldn't open the BPF object: %s", strerror(errno));
		goto fail;
	}
	kl->skel->rodata->kr_cfg_trace = 1;
	if (nbackends > bpf_map__max_entries(kl->skel->maps.kr_backends) &&
	    (bpf_map__set_max_entries(kl->skel->maps.kr_backends, nbackends) ||
	     bpf_map__set_max_entries(kl->skel->maps.kr_backend_stats, nbackends))) {
		kr_errf(err, "couldn't size the backends map for %u backends", nbackends);
		goto fail;
	}
	ret = keyrouter_bpf__load(kl->skel);
	if (ret) {
		kr_errf(err, "couldn't load the BPF object (root needed; run with -v for the "
			"verifier's log): %s", strerror(-ret));
		goto fail;
	}
	kl->prog_fd = bpf_program__fd(kl->skel->progs.kr_xdp);
	return kl;
fail:
	kr_klookup_close(kl);
	return NULL;
}

int kr_klookup_open(struct kr_klookup **out, const struct kr_image *img,
		    const struct kr_klookup_backends *be, struct kr_err *err)
{
	struct kr_klookup *kl = kl_load(be->n, err);

	if (!kl)
		return -1;
	if (kl_configure(kl, img, be, err)) {
		kr_klookup_close(kl);
		return -1;
	}
	*out = kl;
	return 0;
}

/* The payload service, the backends at their global ids, both slots, the control word. */
static int kl_configure_live(struct kr_klookup *kl, const struct kr_klookup_live *lv,
			     struct kr_err *err)
{
	struct kr_service_key sk = { .proto = IPPROTO_UDP, .family = 4 };
	struct kr_service sv = { .ring_id = KL_RING, .key_type = KR_KEY_PAYLOAD,
				 .fwd_mode = KR_FWD_L2, .subset_id = lv->member ? KL_SUBSET : 0 };
	uint32_t vip = htonl(KL_VIP), one = 1;

	memcpy(sk.addr, &vip, 4);
	sk.port = htons(KL_PORT);
	if (bpf_map__update_elem(kl->skel->maps.kr_services, &sk, sizeof(sk), &sv, sizeof(sv), 0))
		return kr_errf(err, "couldn't configure the payload service: %s", strerror(errno));
	for (uint32_t i = 0; i < lv->nids; i++) {
		struct kr_subset_key mk = { .subset_id = KL_SUBSET, .backend_id = lv->id[i] };

		if (bpf_map__update_elem(kl->skel->maps.kr_backends, &lv->id[i], sizeof(lv->id[i]),
					 &lv->be[i], sizeof(lv->be[i]), 0))
			return kr_errf(err, "couldn't write backend id %u: %s", lv->id[i],
				       strerror(errno));
		if (lv->member && lv->member[i] &&
		    bpf_map__update_elem(kl->skel->maps.kr_subset_members, &mk, sizeof(mk), &one,
					 sizeof(one), 0))
			return kr_errf(err, "couldn't write subset member %u: %s", lv->id[i],
				       strerror(errno));
	}
	for (uint32_t k = 0; k < 2; k++) {
		const struct kr_image_hdr *h = lv->image[k];

		if (h && kr_publish(bpf_map__fd(kl->skel->maps.kr_rings), KL_RING, k, h,
				    h->nchunks, err))
			return -1;
	}
	return kr_ctl_write(bpf_map__fd(kl->skel->maps.kr_ring_ctl), KL_RING, lv->ctl, err);
}

int kr_klookup_open_live(struct kr_klookup **out, const struct kr_klookup_live *lv,
			 struct kr_err *err)
{
	uint32_t max = 0;
	struct kr_klookup *kl;

	for (uint32_t i = 0; i < lv->nids; i++)
		if (lv->id[i] + 1 > max)
			max = lv->id[i] + 1;
	kl = kl_load(max, err);
	if (!kl)
		return -1;
	if (kl_configure_live(kl, lv, err)) {
		kr_klookup_close(kl);
		return -1;
	}
	*out = kl;
	return 0;
}

/* Ethernet / IPv4 / UDP to the service, payload = key; returns the frame length. */
static size_t kl_packet(struct kr_klookup *kl, const uint8_t *key, size_t len)
{
	return kr_test_frame_udp4(kl->pkt, KL_VIP, KL_PORT, key, len);
}

int kr_klookup_key(struct kr_klookup *kl, const uint8_t *key, size_t len,
		   struct kr_kresult *res, struct kr_err *err)
{
	struct kr_trace *t = &kl->skel->bss->kr_trace_last;
	uint64_t seq = t->seq;
	LIBBPF_OPTS(bpf_test_run_opts, o, .repeat = 1);

	if (len > KL_MAX_PAYLOAD)
		return kr_errf(err, "key of %zu bytes: a UDP payload here is at most %u bytes",
			       len, KL_MAX_PAYLOAD);
	o.data_in = kl->pkt;
	o.data_size_in = kl_packet(kl, key, len);
	if (bpf_prog_test_run_opts(kl->prog_fd, &o))
		return kr_errf(err, "BPF_PROG_TEST_RUN failed: %s", strerror(errno));
	if (t->seq != seq + 1)
		return kr_errf(err, "the program left no trace for the packet (verdict %u)",
			       o.retval);
	memset(res, 0, sizeof(*res));
	res->verdict = o.retval;
	res->status = t->status;
	if (t->status != KR_KEY_OK)
		return 0;
	res->reason = t->ring_rc;
	res->key_hash = t->key_hash;
	res->first_index = t->route.first_index;
	res->image_index = t->route.image_index;
	res->walk = t->route.walk;
	res->backend_id = t->route.backend_id;
	res->slot = t->route.slot;
	return 0;
}

void kr_klookup_close(struct kr_klookup *kl)
{
	if (!kl)
		return;
	keyrouter_bpf__destroy(kl->skel);
	free(kl);
}
