// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What one random read costs a BPF program on this machine, by the size of the region it
 * reads from and by the pages that map it (tests/bpf/progs/kr_mem_latency.bpf.c):
 *   4 KiB pages  an ARRAY map of 12 KiB values, the ring image's map type and chunk size
 *                (the kernel vmallocs a large array map: 4 KiB pages)
 *   direct map   a BPF_F_NO_PREALLOC HASH map of 64 KiB values (kmalloc'ed one by one: the
 *                kernel's direct map, mapped here with 2 MiB and 1 GiB pages, /proc/meminfo)
 * Each program makes the next read's address wait for the value read, so a run costs one
 * read's whole latency; the figure printed is ns per read beyond the same program reading
 * one hot word (measured in the same round: test run, lookup and arithmetic cancel out).
 * The ring images are ~8.5 MiB (1.5M points) and ~85 MiB (15M points): this is the floor
 * under the ring stage's reads, and whether larger pages would lower it.
 * No assertions: figures and ratios only.  KR_BENCH_ROUNDS=N the rounds (default 5).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kr_image_kern_user.h"
#include "kr_mem_latency.skel.h"
#include "bench_args.h"
#include "bench_loadavg.h"

#define REPEAT		(1u << 18)
#define VCHUNK		KR_CHUNK_BYTES
#define DCHUNK		(65536u - 128u)

enum { P_VMAP, P_VMAP_HOT, P_DMAP, P_DMAP_HOT, NP };

static double run_ns(int prog_fd)
{
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = REPEAT);

	if (bpf_prog_test_run_opts(prog_fd, &o) || o.retval != XDP_TX) {
		fprintf(stderr, "mem_latency: test run failed: %s (retval %u)\n", strerror(errno),
			o.retval);
		exit(1);
	}
	return o.duration;
}

static void print_direct_map(void)
{
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	printf("the kernel's direct map (/proc/meminfo):");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "DirectMap", 9)) {
			line[strcspn(line, "\n")] = 0;
			printf(" %s;", line);
		}
	printf("\n");
	if (f)
		fclose(f);
}

/* ns per read beyond the hot read, best of rounds, for a region of kib KiB; 0 on success. */
static int measure(unsigned kib, int rounds, double out[2])
{
	unsigned nv = (unsigned)(((unsigned long long)kib * 1024 + VCHUNK - 1) / VCHUNK);
	unsigned nd = (unsigned)(((unsigned long long)kib * 1024 + DCHUNK - 1) / DCHUNK);
	struct kr_mem_latency_bpf *s = kr_mem_latency_bpf__open();
	double best[NP];
	void *zero;
	int fd[NP];

	if (!s)
		return -1;
	bpf_map__set_max_entries(s->maps.lat_vmap_chunks, nv);
	bpf_map__set_max_entries(s->maps.lat_dmap_chunks, nd);
	s->rodata->lat_vchunks = nv;
	s->rodata->lat_dchunks = nd;
	zero = calloc(1, DCHUNK);
	if (!zero || kr_mem_latency_bpf__load(s)) {
		fprintf(stderr, "mem_latency: couldn't load the programs (%u KiB)\n", kib);
		free(zero);
		kr_mem_latency_bpf__destroy(s);
		return -1;
	}
	for (unsigned k = 0; k < nd; k++)
		if (bpf_map_update_elem(bpf_map__fd(s->maps.lat_dmap_chunks), &k, zero, BPF_NOEXIST)) {
			fprintf(stderr, "mem_latency: hash element %u: %s\n", k, strerror(errno));
			free(zero);
			kr_mem_latency_bpf__destroy(s);
			return -1;
		}
	free(zero);
	fd[P_VMAP] = bpf_program__fd(s->progs.lat_vmap);
	fd[P_VMAP_HOT] = bpf_program__fd(s->progs.lat_vmap_hot);
	fd[P_DMAP] = bpf_program__fd(s->progs.lat_dmap);
	fd[P_DMAP_HOT] = bpf_program__fd(s->progs.lat_dmap_hot);
	for (int p = 0; p < NP; p++)
		best[p] = 1e30;
	for (int r = 0; r < rounds; r++)
		for (int p = 0; p < NP; p++) {
			double ns = run_ns(fd[p]);	/* the counter runs on: new addresses */

			if (ns < best[p])
				best[p] = ns;
		}
	out[0] = best[P_VMAP] - best[P_VMAP_HOT];
	out[1] = best[P_DMAP] - best[P_DMAP_HOT];
	kr_mem_latency_bpf__destroy(s);
	return 0;
}

int main(int argc, char **argv)
{
	bench_args(argc, argv, 0,
		   " [--help]\n"
		   "One waited-for random read from a BPF program, by region size (256 KiB..128 MiB),\n"
		   "in an ARRAY map (4 KiB pages, as the ring image) and in the kernel's direct map\n"
		   "(BPF_F_NO_PREALLOC hash values): ns beyond a hot read.  No assertions.\n"
		   "environment: KR_BENCH_ROUNDS=N interleaved rounds (default 5)\n");
	static const unsigned kib[] = { 256, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
					131072 };
	const char *r = getenv("KR_BENCH_ROUNDS");
	int rounds = r ? atoi(r) : 5;

	if (rounds < 1)
		rounds = 1;
	libbpf_set_print(NULL);
	printf("one random read from a BPF program, waited for: ns beyond a hot read, through "
	       "BPF_PROG_TEST_RUN, %u reads per run, best of %d interleaved rounds\n", REPEAT,
	       rounds);
	print_direct_map();
	bench_loadavg_begin();
	printf("  %10s %14s %14s %10s\n", "region", "4 KiB pages", "direct map", "direct/4K");
	for (size_t i = 0; i < sizeof(kib) / sizeof(kib[0]); i++) {
		double ns[2];

		if (measure(kib[i], rounds, ns))
			return 1;
		printf("  %7u KiB %11.1f ns %11.1f ns %10.2f\n", kib[i], ns[0], ns[1],
		       ns[0] > 0 ? ns[1] / ns[0] : 0);
		fflush(stdout);
	}
	return 0;
}
