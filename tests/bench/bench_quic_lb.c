// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * QUIC-LB benchmarks (docs/quic.md), the method of bench_datapath.c: BPF_PROG_TEST_RUN,
 * the kernel's mean ns per repetition, best of ROUNDS interleaved runs, no assertions.
 *
 * 1. AES-128 in XDP (tests/bpf/progs/kr_aes_bench.bpf.c): one block (and 4 chained blocks,
 *    a four-pass encode) through the kernel crypto kfuncs (bpf_crypto_encrypt/decrypt on
 *    an ecb(aes) context made by a syscall program) against the T-table AES of
 *    include/kr_quic_lb.h, beside the same program without a cipher.  Both must give the
 *    same blocks (and the userspace codec's).
 * 2. The data path (tests/bpf/progs/kr_dpbench_full.bpf.c = the pipeline of bpf/kr_datapath.h with the
 *    per-run key counter): ns/packet of QUIC short-header packets to a QUIC-LB service
 *    routed by their CID in each mode (plaintext, single pass, four pass with 3 and 4
 *    decode passes) beside the ring: a quic service without QUIC-LB, and the ring
 *    fallback of an unroutable CID (config rotation 7) on the QUIC-LB service.  Ring
 *    packets get a different key each repetition (the counter in CID octets 1..4), so
 *    they spread over a ring of KR_BENCH_QLB_POINTS (default 1M) points; CID-routed
 *    packets carry one server ID (the counter is written behind the CID: a server's
 *    connections share its server ID, and the decode does the same work for any CID).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "kr_datapath_kern_user.h"
#include "publish.h"
#include "../bpf/pktbuild.h"
#include "../bpf/ring_fixture.h"
#include "kr_aes_bench.skel.h"
#include "kr_dpbench_full.skel.h"
#include "bench_args.h"
#include "bench_loadavg.h"

#define REPEAT	(1u << 18)
#define NB	16

static int rounds = 7;

static double test_run(int fd, const uint8_t *pkt, size_t len, uint32_t repeat, uint32_t *ret)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = (uint32_t)len,
		    .repeat = repeat);

	if (bpf_prog_test_run_opts(fd, &o)) {
		fprintf(stderr, "bench_quic_lb: test run failed: %s\n", strerror(errno));
		exit(1);
	}
	*ret = o.retval;
	return o.duration;
}

/* ---- 1. AES-128: kfuncs vs T-tables ---------------------------------------------------- */

/* clang 14 does not emit BTF type tags: give kr_aes_ctx_val.ctx its "kptr" tag in the
 * object's BTF before loading (PTR -> TYPE_TAG "kptr" -> struct bpf_crypto_ctx), as a newer
 * clang would from the source's __kptr. */
static int add_kptr_tag(struct bpf_object *obj)
{
	struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *t, *p;
	__s32 sid, target, tag, ptr;

	if (!btf)
		return -1;
	sid = btf__find_by_name_kind(btf, "kr_aes_ctx_val", BTF_KIND_STRUCT);
	if (sid < 0)
		return -1;
	t = btf__type_by_id(btf, (__u32)sid);
	p = btf__type_by_id(btf, btf_members(t)[0].type);
	if (!btf_is_ptr(p))
		return -1;
	target = (__s32)p->type;
	if (btf_is_type_tag(btf__type_by_id(btf, (__u32)target)))
		return 0;		/* the compiler did it */
	tag = btf__add_type_tag(btf, "kptr", target);
	ptr = tag < 0 ? tag : btf__add_ptr(btf, tag);
	if (ptr < 0)
		return -1;
	t = btf__type_by_id(btf, (__u32)sid);	/* (adding may have moved the types) */
	((struct btf_member *)btf_members(t))[0].type = (__u32)ptr;
	return 0;
}

static void bench_aes(void)
{
	static const uint8_t key[16] = { 0x8f, 0x95, 0xf0, 0x92, 0x45, 0x76, 0x5f, 0x80,
					 0x25, 0x69, 0x34, 0xe5, 0x0c, 0x66, 0x20, 0x7f };
	struct kr_aes_bench_bpf *s = kr_aes_bench_bpf__open();
	LIBBPF_OPTS(bpf_test_run_opts, so);
	uint8_t pkt[64], ref[16], kf[16], tb[16];
	struct kr_aes128 k;
	int fds[3];
	static const char *names[3] = { "kernel crypto kfunc (ecb(aes))", "T-table AES in BPF",
					"no cipher (floor)" };
	uint32_t ret;

	printf("AES-128 in XDP, ns per packet (one program run), %u runs, best of %d\n",
	       1u << 20, rounds);
	if (!s || add_kptr_tag(s->obj) || kr_aes_bench_bpf__load(s)) {
		printf("  the AES benchmark program does not load here (kernel crypto kfuncs "
		       "missing?): skipped\n");
		kr_aes_bench_bpf__destroy(s);
		return;
	}
	memcpy(s->bss->key, key, 16);
	kr_aes128_setkey(&k, key);
	s->bss->rk = k;
	if (bpf_prog_test_run_opts(bpf_program__fd(s->progs.kr_aes_ctx_init), &so) || so.retval) {
		printf("  bpf_crypto_ctx_create(ecb(aes)) failed (%d): kfunc path skipped\n",
		       (int)so.retval);
		kr_aes_bench_bpf__destroy(s);
		return;
	}
	fds[0] = bpf_program__fd(s->progs.kr_aes_kfunc);
	fds[1] = bpf_program__fd(s->progs.kr_aes_table);
	fds[2] = bpf_program__fd(s->progs.kr_aes_none);
	for (int i = 0; i < 64; i++)
		pkt[i] = (uint8_t)(i * 29 + 7);
	for (int dec = 0; dec < 2; dec++)
		for (uint32_t nb = 1; nb <= 4; nb += 3) {
			double best[3] = { 1e30, 1e30, 1e30 };
			int agree;

			s->data->nblocks = nb;
			s->bss->decrypt = (uint32_t)dec;
			memcpy(ref, pkt, 16);
			for (uint32_t b = 0; b < nb; b++)
				if (dec)
					kr_aes128_decrypt(&k, ref, ref);
				else
					kr_aes128_encrypt(&k, ref, ref);
			test_run(fds[0], pkt, sizeof(pkt), 1, &ret);
			memcpy(kf, s->bss->out.b, 16);
			test_run(fds[1], pkt, sizeof(pkt), 1, &ret);
			memcpy(tb, s->bss->out.b, 16);
			agree = !memcmp(kf, ref, 16) && !memcmp(tb, ref, 16) && s->bss->status == 0;
			for (int r = 0; r < rounds; r++)
				for (int p = 0; p < 3; p++) {
					double ns = test_run(fds[p], pkt, sizeof(pkt), 1u << 20, &ret);

					if (ns < best[p])
						best[p] = ns;
				}
			printf("\n  %u block%s, %s%s:\n", nb, nb > 1 ? "s chained" : "",
			       dec ? "decrypt" : "encrypt",
			       agree ? " (kfunc == T-table == userspace codec)" :
				       " (WARNING: the two ways disagree)");
			for (int p = 0; p < 3; p++)
				printf("    %-32s %7.1f ns/packet\n", names[p], best[p]);
			printf("    per block over the floor: kfunc %.1f ns, T-table %.1f ns; "
			       "kfunc / T-table = %.2f\n", (best[0] - best[2]) / nb,
			       (best[1] - best[2]) / nb, (best[0] - best[2]) / (best[1] - best[2]));
		}
	kr_aes_bench_bpf__destroy(s);
}

/* ---- 2. the data path ------------------------------------------------------------------ */

static struct kr_dpbench_full_bpf *dp;

static int mfd(struct bpf_map *m)
{
	return bpf_map__fd(m);
}

static const uint8_t qkey[16] = { 0x4b, 0x83, 0xf5, 0x10, 0x1c, 0xfc, 0xeb, 0xc9,
				  0x3a, 0xf8, 0xe0, 0x1a, 0x15, 0x43, 0x45, 0x0a };

struct kind {
	const char *name;
	uint16_t port;
	unsigned cr;		/* 7: unroutable */
	unsigned sid, nonce;	/* lengths; sid 0: a random CID */
	bool keyed;
	struct kr_qlb_conf conf;
	uint8_t pkt[PKT_MAX];
	size_t len, cid_len;
	double best;
};

static struct kind kinds[] = {
	{ .name = "ring: quic service without QUIC-LB", .port = 8443, .cr = 7 },
	{ .name = "ring fallback: unroutable CID (rotation 7)", .port = 443, .cr = 7 },
	{ .name = "CID-routed, plaintext (2 + 6)", .port = 443, .cr = 0, .sid = 2, .nonce = 6 },
	{ .name = "CID-routed, single pass (4 + 12)", .port = 443, .cr = 1, .sid = 4, .nonce = 12,
	  .keyed = true },
	{ .name = "CID-routed, four pass, 3 passes (3 + 8)", .port = 443, .cr = 2, .sid = 3,
	  .nonce = 8, .keyed = true },
	{ .name = "CID-routed, four pass, 4 passes (8 + 4)", .port = 443, .cr = 3, .sid = 8,
	  .nonce = 4, .keyed = true },
};
#define NK (sizeof(kinds) / sizeof(kinds[0]))

static int publish_random(uint32_t n)
{
	uint32_t *hash = malloc(n * sizeof(*hash)), *tmp = malloc(n * sizeof(*tmp)), bt[NB];
	uint16_t *backend = malloc(n * sizeof(*backend));
	struct kr_err err = { "" };
	struct fx_img im = { 0 };
	uint64_t seed = 42;
	int ret = -1;

	if (!hash || !tmp || !backend)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		hash[i] = (uint32_t)fx_rand(&seed);
		backend[i] = fx_rand(&seed) % NB;
	}
	fx_radix_sort(hash, tmp, n);
	for (uint32_t i = 0; i < NB; i++)
		bt[i] = i + 1;
	if (fx_encode(&im, hash, backend, n, bt, NB) ||
	    kr_publish(mfd(dp->maps.kr_rings), 0, 0, im.buf, im.nchunks, &err))
		goto out;
	ret = 0;
out:
	free(hash);
	free(tmp);
	free(backend);
	free(im.buf);
	return ret;
}

static int configure(uint32_t points)
{
	struct kr_service q = { .ring_id = 0, .key_type = KR_KEY_QUIC, .fwd_mode = KR_FWD_L2,
				.quic_cid_len = 9 };
	struct kr_service_key k = { .proto = 17, .family = 4 };
	uint32_t zero = 0;
	uint64_t ctl = 0;

	for (uint32_t id = 1; id <= NB; id++) {
		struct kr_backend b = { .family = 4, .state = KR_BACKEND_UP };

		b.addr[0] = 10;
		b.addr[3] = (uint8_t)id;
		b.mac[0] = 2;
		b.mac[5] = (uint8_t)id;
		if (bpf_map_update_elem(mfd(dp->maps.kr_backends), &id, &b, BPF_ANY))
			return -1;
	}
	inet_pton(AF_INET, "192.0.2.1", k.addr);
	k.port = htons(8443);
	if (bpf_map_update_elem(mfd(dp->maps.kr_services), &k, &q, BPF_ANY))
		return -1;
	q.flags = KR_SVC_F_QUIC_LB;
	q.qlb_id = 1;
	q.qlb_tag = 1;
	k.port = htons(443);
	if (bpf_map_update_elem(mfd(dp->maps.kr_services), &k, &q, BPF_ANY) ||
	    bpf_map_update_elem(mfd(dp->maps.kr_ring_ctl), &zero, &ctl, BPF_ANY))
		return -1;
	for (size_t i = 0; i < NK; i++) {
		struct kind *t = &kinds[i];
		struct kr_qlb_sid_key sk = { .qlb_id = 1, .cr = (uint8_t)t->cr, .sid_len = (uint8_t)t->sid };
		struct kr_qlb_sid_val sv = { .backend_id = 5, .tag = 1 };
		struct kr_qlb_conf c;
		uint32_t ci = kr_qlb_conf_index(1, t->cr);

		if (!t->sid)
			continue;
		kr_qlb_conf_init(&t->conf, t->sid, t->nonce, 0, t->keyed ? qkey : NULL);
		c = t->conf;
		c.tag = 1;
		memset(sk.sid, 0x5a, t->sid);
		if (bpf_map_update_elem(mfd(dp->maps.kr_qlb_configs), &ci, &c, BPF_ANY) ||
		    bpf_map_update_elem(mfd(dp->maps.kr_qlb_servers), &sk, &sv, BPF_ANY))
			return -1;
	}
	return publish_random(points);
}

static void build(struct kind *t)
{
	struct pkt_spec s = PKT_V4("198.51.100.7", 4242, "192.0.2.1", t->port);
	uint8_t pl[64];
	size_t n;

	memset(pl, 0x33, sizeof(pl));
	pl[0] = 0x41;
	if (t->sid) {
		struct kr_qlb_work w = { 0 };

		memset(w.pt, 0x5a, t->sid);
		for (unsigned i = 0; i < t->nonce; i++)
			w.pt[t->sid + i] = (uint8_t)(i * 13 + 1);
		n = kr_qlb_encode(&t->conf, &w, t->cr);
		memcpy(pl + 1, w.cid, n);
	} else {
		n = 9;
		for (unsigned i = 0; i < n; i++)
			pl[1 + i] = (uint8_t)(0xe7 + i * 41);
		pl[1] |= 0xe0;		/* config rotation 7 */
	}
	t->cid_len = n;
	s.payload = pl;
	s.plen = 1 + n + 32;
	t->len = pkt_build(&s, t->pkt);
}

/* Where the per-run counter goes: CID octets 1..4 (ring keys), or behind the CID. */
static void set_key_off(const struct kind *t)
{
	dp->bss->kr_bench_key_off = t->sid ? (uint32_t)(1 + t->cid_len) : 2;
	dp->bss->kr_bench_ctr = 0;
}

static void bench_datapath(void)
{
	const char *env = getenv("KR_BENCH_QLB_POINTS");
	uint32_t points = env ? (uint32_t)strtoul(env, NULL, 0) : 1000000, ret;
	int fd;

	dp = kr_dpbench_full_bpf__open();
	if (!dp) {
		fprintf(stderr, "bench_quic_lb: couldn't open the data path program\n");
		exit(1);
	}
	bpf_map__set_max_entries(dp->maps.kr_backends, 1024);
	bpf_map__set_max_entries(dp->maps.kr_backend_stats, 1024);
	if (kr_dpbench_full_bpf__load(dp) || configure(points)) {
		fprintf(stderr, "bench_quic_lb: couldn't set up the data path program\n");
		exit(1);
	}
	fd = bpf_program__fd(dp->progs.kr_xdp);
	for (size_t i = 0; i < NK; i++)
		build(&kinds[i]);
	printf("\ndata path XDP program (keyrouter.bpf.c), QUIC short-header packets, ns/packet "
	       "through BPF_PROG_TEST_RUN, %u packets per run, best of %d interleaved rounds; "
	       "ring of %u points, 16 backends\n", REPEAT, rounds, points);
	/* each kind is forwarded (XDP_TX), CID-routed ones to the server ID's backend 5 */
	for (size_t i = 0; i < NK; i++) {
		static uint8_t out[PKT_MAX];
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = kinds[i].pkt,
			    .data_size_in = (uint32_t)kinds[i].len, .data_out = out,
			    .data_size_out = sizeof(out), .repeat = 1);
		int ok;

		set_key_off(&kinds[i]);
		ok = !bpf_prog_test_run_opts(fd, &o) && o.retval == XDP_TX &&
		     (!kinds[i].sid || out[5] == 5);
		if (!ok) {
			fprintf(stderr, "bench_quic_lb: '%s' not forwarded as expected (retval %u, "
				"backend %u)\n", kinds[i].name, o.retval, out[5]);
			exit(1);
		}
		kinds[i].best = 1e30;
	}
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < NK; i++) {
			double ns;

			set_key_off(&kinds[i]);
			ns = test_run(fd, kinds[i].pkt, kinds[i].len, REPEAT, &ret);
			if (ns < kinds[i].best)
				kinds[i].best = ns;
		}
	for (size_t i = 0; i < NK; i++)
		printf("  %-44s %7.1f ns/packet   %.2f x the ring fallback\n", kinds[i].name,
		       kinds[i].best, kinds[i].best / kinds[1].best);
	kr_dpbench_full_bpf__destroy(dp);
}

int main(int argc, char **argv)
{
	bench_args(argc, argv, 0,
		   " [--help]\n"
		   "QUIC-LB: AES-128 in XDP (crypto kfuncs against the T-table code), and the data path's\n"
		   "ns/packet for CID-routed QUIC packets in each QUIC-LB mode beside the ring.\n"
		   "environment: KR_BENCH_QLB_POINTS=N ring points (default 1000000),\n"
		   "             KR_BENCH_ROUNDS=N interleaved rounds (default 7)\n");
	const char *renv = getenv("KR_BENCH_ROUNDS");

	setvbuf(stdout, NULL, _IOLBF, 0);
	rounds = renv && atoi(renv) > 0 ? atoi(renv) : 7;
	bench_loadavg_print("before");
	bench_aes();
	bench_datapath();
	bench_loadavg_print("after");
	return 0;
}
