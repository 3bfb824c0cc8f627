// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Cost of the opt-in keyed hash (SipHash-1-3, include/kr_siphash.h) against CRC-32, per
 * key, in the kernel (BPF_PROG_TEST_RUN of tests/bpf/progs/kr_hash_bench.bpf.c: copy the
 * key into the per-CPU buffer + hash, against the same program without hashing) and in
 * userspace.
 * Prints ns/packet and the ratios to the same-run baselines; no assertions.
 *   KR_BENCH_REPEAT=N (default 200000 runs per figure)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kr_siphash.h"
#include "kr_crc32.h"
#include "crc32.h"
#include "kr_hash_bench.skel.h"
#include "bench_args.h"
#include "bench_loadavg.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double kernel_ns(struct kr_hash_bench_bpf *s, int fd, uint32_t mode, uint32_t len,
			const uint8_t *pkt, uint32_t repeat)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = 320, .repeat = repeat);

	s->bss->kr_hb_mode = mode;
	s->bss->kr_hb_len = len;
	if (bpf_prog_test_run_opts(fd, &o))
		return -1;
	return o.duration;	/* average ns per run */
}

int main(int argc, char **argv)
{
	bench_args(argc, argv, 0,
		   " [--help]\n"
		   "The opt-in keyed hash (SipHash-1-3) against CRC-32 per key length, in the kernel\n"
		   "(BPF_PROG_TEST_RUN) and in userspace.  No assertions.\n"
		   "environment: KR_BENCH_REPEAT=N runs per figure (default 200000)\n");
	bench_loadavg_begin();
	static const uint32_t lens[] = { 8, 16, 32, 64, 128, 255 };
	uint32_t repeat = getenv("KR_BENCH_REPEAT") ? atoi(getenv("KR_BENCH_REPEAT")) : 200000;
	struct kr_hash_secret k = { 0x0123456789abcdefull, 0xfedcba9876543210ull };
	struct kr_hash_bench_bpf *s = kr_hash_bench_bpf__open_and_load();
	uint8_t pkt[320];
	volatile uint64_t sink = 0;
	int fd;

	for (size_t i = 0; i < sizeof(pkt); i++)
		pkt[i] = (uint8_t)(i * 131 + 7);
	if (!s) {
		fprintf(stderr, "hash_keyed: couldn't load kr_hash_bench.bpf.o (root needed)\n");
		return 1;
	}
	fd = bpf_program__fd(s->progs.kr_hash_bench);
	s->bss->kr_hb_secret = k;
	printf("keyed hash cost: kernel (BPF_PROG_TEST_RUN, %u runs each, ns/packet)\n", repeat);
	printf("  %5s %9s %9s %9s %11s %11s %9s\n", "key", "no hash", "crc32", "siphash13",
	       "crc32 cost", "sip cost", "sip/crc");
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		double b = kernel_ns(s, fd, 0, lens[i], pkt, repeat);
		double c = kernel_ns(s, fd, 1, lens[i], pkt, repeat);
		double h = kernel_ns(s, fd, 2, lens[i], pkt, repeat);

		printf("  %4uB %9.1f %9.1f %9.1f %11.1f %11.1f %8.2fx\n", lens[i], b, c, h, c - b,
		       h - b, c - b > 0.5 ? (h - b) / (c - b) : 0.0);
	}
	printf("keyed hash cost: userspace (ns/key; crc32 table = the BPF code, slice-by-8 = "
	       "the engine's)\n");
	printf("  %5s %11s %11s %11s %9s\n", "key", "crc32 table", "crc32 sb8", "siphash13",
	       "sip/table");
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t n = 2000000, len = lens[i];
		double t0, t1, t2, t3;

		t0 = now_ns();
		for (uint32_t r = 0; r < n; r++) {
			pkt[0] = (uint8_t)r;
			sink += kr_crc32_key(pkt, len);
		}
		t1 = now_ns();
		for (uint32_t r = 0; r < n; r++) {
			pkt[0] = (uint8_t)r;
			sink += kr_crc32(pkt, len);
		}
		t2 = now_ns();
		for (uint32_t r = 0; r < n; r++) {
			pkt[0] = (uint8_t)r;
			sink += kr_siphash13(pkt, len, &k);
		}
		t3 = now_ns();
		printf("  %4uB %11.1f %11.1f %11.1f %8.2fx\n", len, (t1 - t0) / n, (t2 - t1) / n,
		       (t3 - t2) / n, (t3 - t2) / (t1 - t0));
	}
	kr_hash_bench_bpf__destroy(s);
	return sink == 42;	/* keeps the loops */
}
