// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ns per packet of the ring stage through BPF_PROG_TEST_RUN
 * (tests/bpf/progs/kr_ring_bench.bpf.c), for rings of 10k, 1M and 16M points, beside five
 * programs measured in the same run:
 *   (a) none   the same program without the ring lookup
 *   (b) plain  the ring stage with a plain lower-bound binary search over the points
 *   (c) limit  (a) + one read of a random element of the ring's own map (as large as the
 *              ring): no lookup can do with less.  Nothing waits for its value, so the CPU
 *              overlaps the reads of consecutive packets (the test run repeats the program
 *              back to back); the ring stage's reads depend on each other and on a few
 *              hundred instructions, more than the CPU runs ahead, so theirs do not overlap
 *   (d) dep    (c), but the next packet's key waits for the value: one read's latency
 *   (e) idx    (d) after a random read of the bucket index that (d)'s address waits for:
 *              the latency floor of any lookup that reads an index, then the points
 * Issue 14's ratio is the lookup's own cost against (c); the one against (d) is printed
 * beside it, and how much (c) gains from the overlap.
 * Keys: every variant starts with the same stage that writes key = mix32(counter++ ^ seed)
 * into the packet and reads it back (a bijection of a per-run counter: each of the
 * `repeat` packets of a run has a different key: 2^18 = 262144 per run).
 * Figures: the best of ROUNDS runs per variant (rounds interleave the variants).
 * No assertions: figures and ratios only.  KR_BENCH_SIZES="10000 1000000" overrides sizes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../bpf/ring_fixture.h"
#include "kr_ring_test_kern_user.h"
#include "publish.h"
#include "kr_ring_bench.skel.h"
#include "bench_args.h"
#include "bench_loadavg.h"

#define REPEAT	(1u << 18)
#define ROUNDS	7
#define NB	16

enum { V_NONE, V_LIMIT, V_FULL, V_PLAIN, V_DEP, V_IDX_DEP, NV };
static const char *vname[NV] = { "(a) no lookup", "(c) limit: 1 random read", "full ring stage",
				 "(b) plain binary search", "(d) 1 random read, waited for",
				 "(e) index read, then (d)" };

static struct kr_ring_bench_bpf *skel;

static double run_ns(int prog_fd, uint32_t repeat)
{
	struct kr_ring_test_pkt pkt = { .ring_id = 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &pkt, .data_size_in = sizeof(pkt),
		    .repeat = repeat);

	skel->bss->kr_bench_ctr = 0;
	if (bpf_prog_test_run_opts(prog_fd, &o) || o.retval != XDP_TX) {
		fprintf(stderr, "bench_ring: test run failed: %s (retval %u)\n", strerror(errno),
			o.retval);
		exit(1);
	}
	return o.duration;	/* average ns per run */
}

/* Route of the packet whose counter is ctr, by one program. */
static uint32_t route_of(int prog_fd, uint32_t ctr)
{
	struct kr_ring_test_pkt pkt = { 0 }, out;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &pkt, .data_size_in = sizeof(pkt),
		    .data_out = &out, .data_size_out = sizeof(out), .repeat = 1);

	skel->bss->kr_bench_ctr = ctr;
	if (bpf_prog_test_run_opts(prog_fd, &o) || out.reason)
		return ~0u;
	return out.route.backend_id;
}

static int build_publish(uint32_t n, uint64_t *seed)
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
	if (kr_publish(bpf_map__fd(skel->maps.kr_rings), 0, 0, im.buf, im.nchunks, &err)) {
		fprintf(stderr, "bench_ring: %s\n", err.msg);
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

int main(int argc, char **argv)
{
	bench_args(argc, argv, 0,
		   " [--help]\n"
		   "The ring stage alone (tests/bpf/progs/kr_ring_bench.bpf.c) through BPF_PROG_TEST_RUN,\n"
		   "ns/packet, beside (a) no lookup, (b) plain binary search, (c) one random read,\n"
		   "(d) the same read waited for, (e) an index read then (d).  No assertions.\n"
		   "environment: KR_BENCH_SIZES=\"10000 1000000\" ring sizes (default 10000 1000000 16000000)\n");
	uint32_t sizes[8] = { 10000, 1000000, 16000000 }, nsizes = 3, zero = 0;
	const char *env = getenv("KR_BENCH_SIZES");
	uint64_t seed = 42, ctl = 0;
	int fds[NV];

	if (env) {
		char *e, *s = strdup(env);

		nsizes = 0;
		for (char *t = strtok_r(s, " ,", &e); t && nsizes < 8; t = strtok_r(NULL, " ,", &e))
			sizes[nsizes++] = strtoul(t, NULL, 0);
		free(s);
	}
	skel = kr_ring_bench_bpf__open();
	if (!skel)
		return 1;
	bpf_map__set_max_entries(skel->maps.kr_backends, 1024);
	skel->rodata->kr_bench_seed = 0x9e3779b9;
	if (kr_ring_bench_bpf__load(skel)) {
		fprintf(stderr, "bench_ring: couldn't load the benchmark programs\n");
		return 1;
	}
	for (uint32_t id = 1; id <= NB; id++) {
		struct kr_backend b = { .family = 4, .state = KR_BACKEND_UP };

		bpf_map_update_elem(bpf_map__fd(skel->maps.kr_backends), &id, &b, BPF_ANY);
	}
	bpf_map_update_elem(bpf_map__fd(skel->maps.kr_ring_ctl), &zero, &ctl, BPF_ANY);
	fds[V_NONE] = bpf_program__fd(skel->progs.bench_none);
	fds[V_LIMIT] = bpf_program__fd(skel->progs.bench_limit);
	fds[V_FULL] = bpf_program__fd(skel->progs.bench_full);
	fds[V_PLAIN] = bpf_program__fd(skel->progs.bench_plain);
	fds[V_DEP] = bpf_program__fd(skel->progs.bench_dep);
	fds[V_IDX_DEP] = bpf_program__fd(skel->progs.bench_idx_dep);

	printf("ring stage alone (micro-program kr_ring_bench.bpf.c; issue 3's figures: bench_datapath), "
	       "ns/packet through BPF_PROG_TEST_RUN, %u packets per run, each with a "
	       "different key (mix32 of a per-run counter), best of %d interleaved rounds\n",
	       REPEAT, ROUNDS);
	bench_loadavg_print("before");
	for (uint32_t si = 0; si < nsizes; si++) {
		double best[NV];
		uint32_t bad = 0;

		if (build_publish(sizes[si], &seed))
			return 1;
		/* the full and the plain program agree */
		for (uint32_t k = 0; k < 2000; k++)
			bad += route_of(fds[V_FULL], k * 7919) != route_of(fds[V_PLAIN], k * 7919);
		for (int v = 0; v < NV; v++)
			best[v] = 1e30;
		for (int r = 0; r < ROUNDS; r++)
			for (int v = 0; v < NV; v++) {
				double ns = run_ns(fds[v], REPEAT);

				if (ns < best[v])
					best[v] = ns;
			}
		printf("\n%u points%s:\n", sizes[si], bad ? " (WARNING: full and plain disagree)" : "");
		for (int v = 0; v < NV; v++)
			printf("  %-30s %7.1f ns/packet\n", vname[v], best[v]);
		printf("  full / (c) limit   = %.2f\n", best[V_FULL] / best[V_LIMIT]);
		printf("  (b) plain / full   = %.2f\n", best[V_PLAIN] / best[V_FULL]);
		printf("  lookup cost over (a): full +%.1f ns, limit +%.1f ns, plain +%.1f ns\n",
		       best[V_FULL] - best[V_NONE], best[V_LIMIT] - best[V_NONE],
		       best[V_PLAIN] - best[V_NONE]);
		printf("  lookup's own cost: (full - (a)) / ((c) - (a)) = %.2f   "
		       "(issue 14's target: <= 2 at 16M points)\n",
		       (best[V_FULL] - best[V_NONE]) / (best[V_LIMIT] - best[V_NONE]));
		printf("  the same against (d), one random read the next packet waits for: "
		       "(full - (a)) / ((d) - (a)) = %.2f\n",
		       (best[V_FULL] - best[V_NONE]) / (best[V_DEP] - best[V_NONE]));
		printf("  overlap of (c)'s reads across packets: ((d) - (a)) / ((c) - (a)) = %.2f; "
		       "index read, waited for: (e) - (d) = %+.1f ns\n",
		       (best[V_DEP] - best[V_NONE]) / (best[V_LIMIT] - best[V_NONE]),
		       best[V_IDX_DEP] - best[V_DEP]);
		fflush(stdout);
	}
	bench_loadavg_print("after");
	kr_ring_bench_bpf__destroy(skel);
	return 0;
}
