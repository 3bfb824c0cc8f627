// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ring lookup inside the whole data path program, as issue 3 asks: ns/packet of the
 * XDP program of bpf/keyrouter.bpf.c (parse, service lookup, payload key, CRC-32, ring
 * stage, l2 forward, counters) through BPF_PROG_TEST_RUN, for rings of 10k, 1M and 16M
 * points, beside builds of the same source measured in the same run, which differ from it
 * only in the ring stage (tests/bpf/progs/kr_dpbench.h, kr_dpbench_*.bpf.c):
 *   (a) none   no ring lookup (backend from the hash)
 *   (c) limit  (a) + one read of a random element of the ring's image map (as large as the
 *              ring): no lookup can do with less.  Nothing waits for its value, so the CPU
 *              may overlap the reads of consecutive packets (the test run repeats the
 *              program back to back): it does in bench_ring's short program, here (d) shows
 *              whether it does (it did not in this session's runs: the program is long)
 *   (d) dep    (c), but the next packet's key waits for the value: one read's latency
 *   (e) idxdep (d) after a random read of the ring's bucket index that (d)'s address waits
 *              for: the latency floor of any lookup that reads an index, then points
 *   (b) plain  a plain lower-bound binary search over the image points
 * and, to split the full lookup's cost (issue 27): (e) with the shipped 32-point window
 * counted in place of the one word; (e) with one 64-byte line of points counted (the least
 * window: what the lookup would cost if its guess always fell within a line of the
 * answer); the same after an index read from a region 2, 4 and 8 times the ring's index
 * (what a finer index, which would make the window narrower, costs to read: 8 times
 * finer puts the guess within a line); and the shipped kr_image_find() alone (the full
 * stage without the control word, backend table and state, spill and slot counters)
 * and the bare forwarder of build/bench/xdp_forward (tests/bpf/progs/kr_bare_fwd.bpf.c:
 * parse Ethernet/IPv4/UDP, rewrite the MACs, XDP_TX; same per-run key write), the least a
 * router can do with the packet, and a program of the same object that only writes the
 * key (what the test run itself costs a packet).  Printed per size: the lookup's own cost
 * against one random read, (full - (a)) / ((c) - (a)) (issue 14: <= 1.3 at 1M and 16M),
 * the same against (d) and against the floor (e), (a) / bare (issue 14: <= 1.5), and the
 * work of the bare forwarder and of (a) beyond the key-only program.
 * Keys: one Ethernet/IPv4/UDP packet to a `payload` service (the whole 16-byte payload is
 * the key), repeated REPEAT times per test run; every build starts with the same step that
 * writes a per-run counter into the payload's first 4 bytes, so all 2^18 packets of a run
 * have different keys (and CRC-32 spreads them over the ring).
 * Figures: the kernel's mean ns per repetition, best of ROUNDS runs per build (rounds
 * interleave the builds).  The builds share their maps (one published ring).
 * The cost of the run-time decision trace (bpf/kr_trace.h): the full build with the trace
 * off against the same source built without it (kr_dpbench_notrace.bpf.c, KR_NO_TRACE),
 * and the full build with the trace switched on at run time (its kr_trace_ctl written, no
 * reload) sampling 1 in 1000 and 1 in 1, a thread reading the ring buffer meanwhile as
 * `keyrouter trace` does (events it could not take are counted lost and printed).
 * The cost of spill (issue 28): the full build with spill published on 4 of the 16
 * backends (0.25) and on 8 (0.5), written into kr_backends between runs, against no spill
 * (and the median of back-to-back pairs for the second), with the share of the keys that
 * walk on.
 * No assertions: figures and ratios only.  KR_BENCH_SIZES="10000 1000000" picks sizes,
 * KR_BENCH_ROUNDS=N the rounds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kr_datapath_kern_user.h"
#include "publish.h"
#include "ops_ports.h"
#include "../bpf/pktbuild.h"
#include "../bpf/ring_fixture.h"
#include "kr_dpbench_full.skel.h"
#include "kr_dpbench_none.skel.h"
#include "kr_dpbench_limit.skel.h"
#include "kr_dpbench_plain.skel.h"
#include "kr_dpbench_dep.skel.h"
#include "kr_dpbench_idxdep.skel.h"
#include "kr_dpbench_notrace.skel.h"
#include "kr_dpbench_idxwin.skel.h"
#include "kr_dpbench_line.skel.h"
#include "kr_dpbench_line_idx2.skel.h"
#include "kr_dpbench_line_idx4.skel.h"
#include "kr_dpbench_line_idx8.skel.h"
#include "kr_dpbench_find.skel.h"
#include <pthread.h>
#include "kr_bare_fwd.skel.h"
#include "bench_args.h"
#include "bench_loadavg.h"

#define REPEAT	(1u << 18)
#define NB	16

enum { V_NONE, V_LIMIT, V_FULL, V_PLAIN, V_BARE, V_DEP, V_IDXDEP, V_EMPTY, V_NOTRACE,
       V_TRACE1000, V_TRACE1, V_SPILL4, V_SPILL8, V_IDXWIN, V_LINE, V_LINE2, V_LINE4, V_LINE8,
       V_FIND, NV };
static const char *vname[NV] = { "(a) no lookup", "(c) limit: 1 random read",
				 "full (keyrouter.bpf.c)", "(b) plain binary search",
				 "bare forwarder", "(d) 1 random read, waited for",
				 "(e) index read, then (d)", "key write only (test run)",
				 "full, built without trace", "full, trace on 1 in 1000",
				 "full, trace on 1 in 1", "full, spill 0.25 on 4 of 16",
				 "full, spill 0.5 on 8 of 16", "(e) + the 32-point window",
				 "(e) + one line (perfect guess)", "index 2x + one line",
				 "index 4x + one line", "index 8x + one line",
				 "kr_image_find() alone" };

struct variant {
	struct bpf_object *obj;
	__u32 *ctr;		/* .bss kr_bench_ctr */
	int prog_fd;
};
static struct variant var[NV];

static int map_fd(struct bpf_object *obj, const char *name)
{
	return bpf_map__fd(bpf_object__find_map_by_name(obj, name));
}

/* Maps the builds share (the full build's). */
static const char *shared_maps[] = { "kr_rings", "kr_ring_ctl", "kr_backends", "kr_services",
				     "kr_service_ports",
				     "kr_port_wild", "kr_wild_svcs",
				     "kr_devices", "kr_device_macs", "kr_counters", "kr_backend_stats",
				     "kr_slot_stats" };

static int prepare(struct bpf_object *obj)
{
	bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, "kr_backends"), 1024);
	bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, "kr_backend_stats"), 1024);
	if (!var[V_FULL].obj)
		return 0;
	for (size_t i = 0; i < sizeof(shared_maps) / sizeof(shared_maps[0]); i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, shared_maps[i]);

		if (m && bpf_map__reuse_fd(m, map_fd(var[V_FULL].obj, shared_maps[i])))
			return -1;
	}
	return 0;
}

#define LOAD(v, T) do {								\
	struct T##_bpf *s_ = T##_bpf__open();					\
	if (!s_ || prepare(s_->obj) || T##_bpf__load(s_)) {			\
		fprintf(stderr, "bench_datapath: couldn't load " #T "\n");	\
		return -1;							\
	}									\
	var[v].obj = s_->obj;							\
	var[v].ctr = &s_->bss->kr_bench_ctr;					\
	var[v].prog_fd = bpf_program__fd(s_->progs.kr_xdp);			\
} while (0)

static int load_all(void)
{
	LOAD(V_FULL, kr_dpbench_full);
	LOAD(V_NONE, kr_dpbench_none);
	LOAD(V_LIMIT, kr_dpbench_limit);
	LOAD(V_PLAIN, kr_dpbench_plain);
	LOAD(V_DEP, kr_dpbench_dep);
	LOAD(V_IDXDEP, kr_dpbench_idxdep);
	LOAD(V_NOTRACE, kr_dpbench_notrace);
	LOAD(V_IDXWIN, kr_dpbench_idxwin);
	LOAD(V_LINE, kr_dpbench_line);
	LOAD(V_LINE2, kr_dpbench_line_idx2);
	LOAD(V_LINE4, kr_dpbench_line_idx4);
	LOAD(V_LINE8, kr_dpbench_line_idx8);
	LOAD(V_FIND, kr_dpbench_find);
	var[V_TRACE1000] = var[V_TRACE1] = var[V_FULL];	/* the full build, trace switched on */
	var[V_SPILL4] = var[V_SPILL8] = var[V_FULL];	/* the full build, spill published */
	{	/* parse Eth/IPv4/UDP, MACs, XDP_TX; writes the same per-run key */
		struct kr_bare_fwd_bpf *b = kr_bare_fwd_bpf__open();

		if (!b)
			return -1;
		b->rodata->bare_write_key = 1;
		if (kr_bare_fwd_bpf__load(b))
			return -1;
		var[V_BARE].obj = b->obj;
		var[V_BARE].ctr = &b->bss->kr_bench_ctr;
		var[V_BARE].prog_fd = bpf_program__fd(b->progs.kr_bare_fwd);
		var[V_EMPTY].obj = b->obj;
		var[V_EMPTY].ctr = &b->bss->kr_bench_ctr;
		var[V_EMPTY].prog_fd = bpf_program__fd(b->progs.kr_key_only);
	}
	return 0;
}

static int configure(void)
{
	struct bpf_object *o = var[V_FULL].obj;
	struct kr_service_key k = { .proto = 17 };
	struct kr_service s = { .ring_id = 0, .key_type = KR_KEY_PAYLOAD, .fwd_mode = KR_FWD_L2 };
	uint32_t zero = 0;
	uint64_t ctl = 0;

	for (uint32_t id = 1; id <= NB; id++) {
		struct kr_backend b = { .family = 4, .state = KR_BACKEND_UP };

		b.addr[0] = 10;
		b.addr[3] = id;
		b.mac[0] = 2;
		b.mac[5] = id;
		if (bpf_map_update_elem(map_fd(o, "kr_backends"), &id, &b, BPF_ANY))
			return -1;
	}
	/* the ingress device (test_run: lo, ifindex 1) has an entry, as `keyrouter apply`
	 * writes one for the interface it is loaded on; a NIC's MAC */
	struct kr_device dev = { .mac = { 2, 0, 0, 0, 0, 0xfe }, .flags = KR_DEVICE_F_MAC };
	uint32_t lo = 1;

	if (bpf_map_update_elem(map_fd(o, "kr_devices"), &lo, &dev, BPF_ANY) ||
	    bpf_map_update_elem(map_fd(o, "kr_device_macs"), &lo, &dev, BPF_ANY))
		return -1;

	static struct kr_service_ports sp;

	/* as `keyrouter apply` marks it: no port has an exact-VIP service */
	memset(sp.no_exact, 0xff, sizeof(sp.no_exact));
	k.port = htons(9000);
	if (bpf_map_update_elem(map_fd(o, "kr_service_ports"), &zero, &sp, BPF_ANY) ||
	    bpf_map_update_elem(map_fd(o, "kr_services"), &k, &s, BPF_ANY) ||
	    bpf_map_update_elem(map_fd(o, "kr_ring_ctl"), &zero, &ctl, BPF_ANY))
		return -1;
	/* the wildcard service's copy, by port, as `keyrouter apply` writes it */
	return kr_ops_port_wild_sync(map_fd(o, "kr_port_wild"), map_fd(o, "kr_wild_svcs"),
				     map_fd(o, "kr_services")) ? -1 : 0;
}

static int publish_random(uint32_t n, uint64_t *seed)
{
	uint32_t *hash = malloc(n * sizeof(*hash)), *tmp = malloc(n * sizeof(*tmp)), bt[NB];
	uint16_t *backend = malloc(n * sizeof(*backend));
	struct kr_err err = { "" };
	struct fx_img im = { 0 };
	int ret = -1;

	if (!hash || !tmp || !backend)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		hash[i] = (uint32_t)fx_rand(seed);
		backend[i] = fx_rand(seed) % NB;
	}
	fx_radix_sort(hash, tmp, n);
	for (uint32_t i = 0; i < NB; i++)
		bt[i] = i + 1;
	if (fx_encode(&im, hash, backend, n, bt, NB))
		goto out;
	if (kr_publish(map_fd(var[V_FULL].obj, "kr_rings"), 0, 0, im.buf, im.nchunks, &err)) {
		fprintf(stderr, "bench_datapath: %s\n", err.msg);
		goto out;
	}
	ret = 0;
out:
	free(hash);
	free(tmp);
	free(backend);
	free(im.buf);
	return ret;
}

static uint8_t pkt[PKT_MAX];
static size_t pkt_len;

static void build_packet(void)
{
	struct pkt_spec s = PKT_V4("198.51.100.7", 4242, "192.0.2.1", 9000);
	static const uint8_t pl[16] = "....bench-key-16";

	s.payload = pl;
	s.plen = sizeof(pl);
	pkt_len = pkt_build(&s, pkt);
}

/* ---- the trace's cost: switched on in the full build at run time, its ring buffer read
 * by a thread as `keyrouter trace` reads it ---------------------------------------------- */
static volatile int drain_stop;
static unsigned long long drained;

static int drain_cb(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	drained++;
	return 0;
}

static void *drain(void *arg)
{
	struct ring_buffer *rb = arg;

	while (!drain_stop)
		if (ring_buffer__poll(rb, 10) == 0)
			ring_buffer__consume(rb);	/* as keyrouter trace: woken from 256 KiB on */
	return NULL;
}

/* Before each run: the trace of the full build off, or on sampling 1 in `sample`. */
static void trace_set(int v)
{
	struct kr_trace_ctl c = { 0 };
	uint32_t zero = 0;

	if (v == V_TRACE1000 || v == V_TRACE1) {
		c.on = 1;
		c.sample = v == V_TRACE1 ? 1 : 1000;
	}
	bpf_map_update_elem(map_fd(var[V_FULL].obj, "kr_trace_ctl"), &zero, &c, BPF_ANY);
}

/* Before each run: the spill of backends 1..NB (none, or that of the spill variants: the
 * keys of their arcs whose spill hash is below it walk on to the next backend). */
static void spill_set(int v)
{
	for (uint32_t id = 1; id <= NB; id++) {
		struct kr_backend b;
		__u16 sp = v == V_SPILL4 && id <= 4 ? 16384 : v == V_SPILL8 && id <= 8 ? 32768 : 0;

		if (bpf_map_lookup_elem(map_fd(var[V_FULL].obj, "kr_backends"), &id, &b))
			continue;
		b.spill = sp;
		bpf_map_update_elem(map_fd(var[V_FULL].obj, "kr_backends"), &id, &b, BPF_EXIST);
	}
}

static unsigned long long trace_lost(void)
{
	int n = libbpf_num_possible_cpus();
	struct kr_trace_stats st[n > 0 ? n : 1];
	unsigned long long lost = 0;
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(map_fd(var[V_FULL].obj, "kr_trace_stats"), &zero, st))
		return 0;
	for (int c = 0; c < n; c++)
		lost += st[c].lost;
	return lost;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Mean ns per packet of one run of REPEAT packets (counter from 0). */
static double run_ns(int v)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = pkt_len,
		    .repeat = REPEAT);

	*var[v].ctr = 0;
	trace_set(v);
	spill_set(v);
	if (bpf_prog_test_run_opts(var[v].prog_fd, &o) || o.retval != XDP_TX) {
		fprintf(stderr, "bench_datapath: %s: test run failed: %s (retval %u)\n", vname[v],
			strerror(errno), o.retval);
		exit(1);
	}
	trace_set(V_FULL);
	spill_set(V_FULL);
	return o.duration;
}

/* Backend id the build chose for the packet with counter ctr (l2: the rewritten
 * destination MAC's last byte), ~0 when not forwarded. */
static uint32_t backend_of(int v, uint32_t ctr)
{
	static uint8_t out[PKT_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = pkt_len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

	*var[v].ctr = ctr;
	if (bpf_prog_test_run_opts(var[v].prog_fd, &o) || o.retval != XDP_TX)
		return ~0u;
	return out[5];
}

int main(int argc, char **argv)
{
	bench_args(argc, argv, 0,
		   " [--help]\n"
		   "The data path XDP program (bpf/keyrouter.bpf.c) through BPF_PROG_TEST_RUN, ns/packet,\n"
		   "beside builds of the same source without the lookup (a), with one random read (c),\n"
		   "the same read waited for (d), an index read then (d) (e), a plain binary search (b),\n"
		   "and a bare forwarder; prints issue 14's ratios.  No assertions.\n"
		   "environment: KR_BENCH_SIZES=\"10000 1000000\" ring sizes (default 10000 1000000 16000000),\n"
		   "             KR_BENCH_ROUNDS=N interleaved rounds (default 7)\n");
	uint32_t sizes[8] = { 10000, 1000000, 16000000 }, nsizes = 3;
	const char *env = getenv("KR_BENCH_SIZES"), *renv = getenv("KR_BENCH_ROUNDS");
	int rounds = renv ? atoi(renv) : 7;
	uint64_t seed = 42;

	if (rounds < 1)
		rounds = 1;
	if (env) {
		char *e, *s = strdup(env);

		nsizes = 0;
		for (char *t = strtok_r(s, " ,", &e); t && nsizes < 8; t = strtok_r(NULL, " ,", &e))
			sizes[nsizes++] = strtoul(t, NULL, 0);
		free(s);
	}
	if (load_all() || configure()) {
		fprintf(stderr, "bench_datapath: couldn't set up the programs\n");
		return 1;
	}
	build_packet();
	struct ring_buffer *rb = ring_buffer__new(map_fd(var[V_FULL].obj, "kr_trace_rb"),
						  drain_cb, NULL, NULL);
	pthread_t drainer;

	if (!rb || pthread_create(&drainer, NULL, drain, rb)) {
		fprintf(stderr, "bench_datapath: couldn't read the trace ring buffer\n");
		return 1;
	}
	printf("data path XDP program (keyrouter.bpf.c), ns/packet through BPF_PROG_TEST_RUN, "
	       "%u packets per run, each with a different key (a per-run counter written into "
	       "the payload key), best of %d interleaved rounds\n", REPEAT, rounds);
	bench_loadavg_print("before");
	for (uint32_t si = 0; si < nsizes; si++) {
		double best[NV], pair[64], spair[64];
		uint32_t bad = 0;
		int npair = 0, nspair = 0;

		if (publish_random(sizes[si], &seed))
			return 1;
		/* the full and the plain build route every sampled key alike */
		for (uint32_t k = 0; k < 2000; k++) {
			uint32_t a = backend_of(V_FULL, k * 7919), b = backend_of(V_PLAIN, k * 7919);

			bad += a != b || a == ~0u;
		}
		for (int v = 0; v < NV; v++)
			best[v] = 1e30;
		for (int r = 0; r < rounds; r++) {
			for (int v = 0; v < NV; v++) {
				double ns = run_ns(v);

				if (ns < best[v])
					best[v] = ns;
			}
			/* trace off against the build without it, back to back (order alternating):
			 * the median of these differences is less at the mercy of the neighbours */
			if (npair < 64) {
				double a = r & 1 ? 0 : run_ns(V_FULL), b = run_ns(V_NOTRACE);

				if (r & 1)
					a = run_ns(V_FULL);
				pair[npair++] = a - b;
			}
			/* the same for spill on 8 of 16 against off */
			if (nspair < 64) {
				double a = r & 1 ? 0 : run_ns(V_FULL), b = run_ns(V_SPILL8);

				if (r & 1)
					a = run_ns(V_FULL);
				spair[nspair++] = b - a;
			}
		}
		qsort(pair, npair, sizeof(pair[0]), dbl_cmp);
		qsort(spair, nspair, sizeof(spair[0]), dbl_cmp);
		printf("\n%u points%s:\n", sizes[si],
		       bad ? " (WARNING: full and plain disagree)" : " (full == plain on 2000 keys)");
		for (int v = 0; v < NV; v++)
			printf("  %-30s %7.1f ns/packet\n", vname[v], best[v]);
		printf("  full / (c) limit   = %.2f   (totals: both include (a))\n",
		       best[V_FULL] / best[V_LIMIT]);
		printf("  (b) plain / full   = %.2f\n", best[V_PLAIN] / best[V_FULL]);
		printf("  lookup cost over (a): full +%.1f ns, limit +%.1f ns, plain +%.1f ns\n",
		       best[V_FULL] - best[V_NONE], best[V_LIMIT] - best[V_NONE],
		       best[V_PLAIN] - best[V_NONE]);
		printf("  lookup's own cost: (full - (a)) / ((c) - (a)) = %.2f   "
		       "(target <= 1.3 at 1M and 16M)\n",
		       (best[V_FULL] - best[V_NONE]) / (best[V_LIMIT] - best[V_NONE]));
		printf("  the same against (d), one random read the next packet waits for: "
		       "(full - (a)) / ((d) - (a)) = %.2f; overlap of (c): ((d) - (a)) / ((c) - (a)) "
		       "= %.2f\n",
		       (best[V_FULL] - best[V_NONE]) / (best[V_DEP] - best[V_NONE]),
		       (best[V_DEP] - best[V_NONE]) / (best[V_LIMIT] - best[V_NONE]));
		printf("  floor of an index-then-points lookup: ((e) - (a)) / ((c) - (a)) = %.2f; "
		       "full over that floor: %+.1f ns\n",
		       (best[V_IDXDEP] - best[V_NONE]) / (best[V_LIMIT] - best[V_NONE]),
		       best[V_FULL] - best[V_IDXDEP]);
		{	/* issue 27: what the window and the index cost, and the rest of the stage */
			double c = best[V_LIMIT] - best[V_NONE];
#define OWN(v) (best[v] - best[V_NONE]) / c
			printf("  where the lookup's cost goes, own cost against (c): (e) %.2f; (e) + one "
			       "line of points counted (a guess always within a line of the answer) "
			       "%.2f; (e) + the shipped 32-point window %.2f; kr_image_find() alone "
			       "%.2f; full %.2f\n", OWN(V_IDXDEP), OWN(V_LINE), OWN(V_IDXWIN),
			       OWN(V_FIND), OWN(V_FULL));
			printf("  a finer index (a narrower window) read from 2x / 4x / 8x the index's "
			       "region, then one line: %.2f / %.2f / %.2f (an 8x finer index puts the "
			       "guess within a line)\n", OWN(V_LINE2), OWN(V_LINE4), OWN(V_LINE8));
			printf("  window beyond one line %+.1f ns, the rest of the stage (control word, "
			       "backend table and state, counters) %+.1f ns, find beyond (e) + window "
			       "%+.1f ns\n", best[V_IDXWIN] - best[V_LINE], best[V_FULL] - best[V_FIND],
			       best[V_FIND] - best[V_IDXWIN]);
#undef OWN
		}
		printf("  (a) / bare forwarder = %.2f   (target <= 1.5)\n",
		       best[V_NONE] / best[V_BARE]);
		printf("  beyond a program that only writes the key (the test run's own cost, %.1f ns): "
		       "bare +%.1f ns, (a) +%.1f ns\n", best[V_EMPTY],
		       best[V_BARE] - best[V_EMPTY], best[V_NONE] - best[V_EMPTY]);
		printf("  trace: off %+.1f ns against the build without it (%.1f vs %.1f; median of "
		       "%d back-to-back pairs %+.1f ns), on 1 in 1000 %+.1f ns, on 1 in 1 %+.1f ns "
		       "(events read %llu, lost %llu so far)\n",
		       best[V_FULL] - best[V_NOTRACE], best[V_FULL], best[V_NOTRACE], npair,
		       npair % 2 ? pair[npair / 2] : (pair[npair / 2 - 1] + pair[npair / 2]) / 2,
		       best[V_TRACE1000] - best[V_FULL], best[V_TRACE1] - best[V_FULL], drained,
		       trace_lost());
		{
			/* the share of the keys that walked on under each spill variant */
			uint32_t moved[2] = { 0, 0 };

			for (int sv = 0; sv < 2; sv++) {
				spill_set(sv ? V_SPILL8 : V_SPILL4);
				for (uint32_t k = 0; k < 2000; k++) {
					uint32_t b = backend_of(V_FULL, k * 7919);

					spill_set(V_FULL);
					moved[sv] += b != backend_of(V_FULL, k * 7919);
					spill_set(sv ? V_SPILL8 : V_SPILL4);
				}
				spill_set(V_FULL);
			}
			printf("  spill: off %.1f ns; 0.25 on 4 of 16 backends %+.1f ns (%.1f%% of 2000 "
			       "keys walk on), 0.5 on 8 of 16 %+.1f ns (%.1f%%; median of %d "
			       "back-to-back pairs %+.1f ns)\n", best[V_FULL],
			       best[V_SPILL4] - best[V_FULL], moved[0] / 20.0,
			       best[V_SPILL8] - best[V_FULL], moved[1] / 20.0, nspair,
			       nspair % 2 ? spair[nspair / 2] :
			       (spair[nspair / 2 - 1] + spair[nspair / 2]) / 2);
		}
		fflush(stdout);
	}
	drain_stop = 1;
	pthread_join(drainer, NULL);
	ring_buffer__free(rb);
	bench_loadavg_print("after");
	return 0;
}
