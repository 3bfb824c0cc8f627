// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Userspace lookup cost per key: the bucket index of the kernel image (include/kr_lookup.h
 * kr_image_find(), the BPF program's code but for its userspace-only window count, compares
 * and windows across chunks; through userspace KR_CHUNK_GET) against a plain binary search
 * over the whole ring, both returning (point, backend), on the bench2048 rings at
 * v2 point_multiple 16 (~150k points) and 1600 (~14.8M points).  Keys: 2M distinct
 * pre-generated 32-bit hashes (a bijective mix of 0..N-1), the same for both; best of 3.
 * Also counts disagreements (must be 0).  No assertions.  Times are the thread's CPU time
 * (the machine is shared).
 *
 * Two figures for the bucket index: one key at a time (a loop of independent lookups, one
 * call per key as the BPF program makes per packet: the CPU overlaps consecutive keys' memory
 * reads as far as the work queued behind each miss lets it), and batched with prefetching
 * (kr_image_lookup_batch: the index entry and the expected window's lines are known from
 * the key alone, so many keys' accesses overlap -- a binary search cannot do that).
 * Both the image buffer and the ring's hash array (the plain lower bound's) are allocated
 * with MADV_HUGEPAGE (kr_hint_huge); the bench prints how much of each transparent huge
 * pages cover, from /proc/self/smaps.
 *
 *   build/bench/ring_lookup [BACKENDS_FILE]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "backends_file.h"
#include "continuum.h"
#include "image.h"
#include "bench_args.h"
#include "bench_loadavg.h"

#define NKEYS (2u << 20)

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);	/* CPU time: the machine is shared */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Size and AnonHugePages (KiB) of the mappings that overlap [p, p + len), from
 * /proc/self/smaps (madvise splits a malloc'd mapping at page boundaries; adjacent
 * mappings of the same kind may be merged into one, so they may hold more than p). */
static int huge_kb(const void *p, size_t len, unsigned long *size_kb, unsigned long *huge_kb)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	uintptr_t b = (uintptr_t)p, e = b + len;
	char line[512];
	int in = 0, found = 0;

	*size_kb = *huge_kb = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long vs, ve;
		unsigned long v;
		char c;

		if (sscanf(line, "%llx-%llx %c", &vs, &ve, &c) == 3) {
			in = vs < e && ve > b;
			found |= in;
		} else if (in && sscanf(line, "Size: %lu kB", &v) == 1) {
			*size_kb += v;
		} else if (in && sscanf(line, "AnonHugePages: %lu kB", &v) == 1) {
			*huge_kb += v;
		}
	}
	fclose(f);
	return found ? 0 : -1;
}

static uint64_t run_image(const struct kr_image *img, const uint32_t *keys)
{
	uint64_t sum = 0, t0 = now_ns();

	for (uint32_t i = 0; i < NKEYS; i++) {
		uint32_t ii = 0, h = 0, be = 0;

		/* as the BPF program: the backend comes with the search when it was read */
		kr_image_find((void *)img, img->hdr, keys[i], &ii, &be);
		if (be == KR_BACKEND_UNKNOWN)
			kr_point_get((void *)img, img->hdr, ii, &h, &be);
		sum += ii + be;
	}
	sink += sum;
	return now_ns() - t0;
}

static uint64_t run_batch(const struct kr_image *img, const uint32_t *keys, uint32_t *out,
			  uint32_t *be)
{
	uint64_t sum = 0, t0 = now_ns();

	kr_image_lookup_batch(img, keys, NKEYS, out, be);
	for (uint32_t i = 0; i < NKEYS; i++)
		sum += out[i] + be[i];
	sink += sum;
	return now_ns() - t0;
}

static uint64_t run_plain(const struct kr_ring *r, const uint32_t *keys)
{
	uint64_t sum = 0, t0 = now_ns();

	for (uint32_t i = 0; i < NKEYS; i++) {
		uint32_t ri = kr_ring_lower_bound(r, keys[i]);

		sum += ri + r->backend[ri];
	}
	sink += sum;
	return now_ns() - t0;
}

static void bench(const struct kr_backend_spec *b, uint32_t n, uint32_t pm, const uint32_t *keys)
{
	uint64_t best_img = UINT64_MAX, best_plain = UINT64_MAX, best_batch = UINT64_MAX, t;
	uint32_t *out = malloc(NKEYS * sizeof(*out)), *obe = malloc(NKEYS * sizeof(*obe));
	struct kr_ring *r;
	struct kr_image img;
	struct kr_err err;
	uint32_t bad = 0;

	if (kr_ring_build(&r, b, n, KR_RING_V2, pm, &err) || kr_image_encode(&img, r, NULL, &err)) {
		printf("build failed: %s\n", err.msg);
		return;
	}
	for (uint32_t i = 0; i < NKEYS; i += 7) {
		uint32_t ii = 0, h = 0, be = 0, ri = kr_ring_lower_bound(r, keys[i]);

		kr_image_lookup(&img, keys[i], &ii);
		kr_point_get(&img, img.hdr, ii, &h, &be);
		bad += be != r->backend[ri] || kr_image_ring_index(&img, ii) != ri;
	}
	for (int rep = 0; rep < 3; rep++) {
		t = run_image(&img, keys);
		if (t < best_img)
			best_img = t;
		t = run_plain(r, keys);
		if (t < best_plain)
			best_plain = t;
		t = run_batch(&img, keys, out, obe);
		if (t < best_batch)
			best_batch = t;
	}
	for (uint32_t i = 0; i < NKEYS; i += 7) {
		uint32_t ii = 0;

		kr_image_lookup(&img, keys[i], &ii);
		bad += ii != out[i] || obe[i] != r->backend[kr_image_ring_index(&img, ii)];
	}
	printf("v2 pm %-5u points %9u (image %u, %u bucket bits, largest bucket %u), %u keys, "
	       "%u disagreements:\n"
	       "    one key at a time (as the BPF program): bucket index %7.1f ns/key, plain "
	       "lower bound %7.1f ns/key, ratio %.2fx\n"
	       "    batched, prefetching (kr_image_lookup_batch): bucket index %7.1f ns/key, "
	       "ratio to the plain lower bound %.2fx\n",
	       pm, r->npoints, img.hdr->npoints, img.hdr->bucket_bits, img.hdr->max_bucket,
	       NKEYS, bad, (double)best_img / NKEYS, (double)best_plain / NKEYS,
	       (double)best_plain / (double)best_img, (double)best_batch / NKEYS,
	       (double)best_plain / (double)best_batch);
	{
		size_t ilen = img.size, rlen = (size_t)r->npoints * sizeof(*r->hash);
		unsigned long isz, ihu, rsz, rhu;

		if (!huge_kb(img.buf, ilen, &isz, &ihu) && !huge_kb(r->hash, rlen, &rsz, &rhu))
			printf("    transparent huge pages (both arrays MADV_HUGEPAGE from 4 MiB on): "
			       "image buffer %.1f MiB, its mappings %.1f MiB, %.1f MiB of them "
			       "huge; ring hash array (the plain lower bound's) %.1f MiB, its "
			       "mappings %.1f MiB, "
			       "%.1f MiB of them huge\n", ilen / 1048576.0, isz / 1024.0,
			       ihu / 1024.0, rlen / 1048576.0, rsz / 1024.0, rhu / 1024.0);
	}
	fflush(stdout);
	free(out);
	free(obe);
	kr_image_free(&img);
	kr_ring_free(r);
}

int main(int argc, char **argv)
{
	bench_args(argc, argv, 1,
		   " [--help] [BACKENDS_FILE]\n"
		   "Userspace lookup per key: the image's bucket index (one key at a time, and batched\n"
		   "with prefetching) against a plain binary search, at ~150k and ~14.8M points.\n"
		   "BACKENDS_FILE defaults to tests/data/bench2048.backends.txt.\n");
	bench_loadavg_begin();
	const char *path = argc > 1 ? argv[1] : "tests/data/bench2048.backends.txt";
	struct kr_backend_spec *b;
	struct kr_err err;
	uint32_t n, *keys = malloc(NKEYS * sizeof(*keys));

	if (!keys || kr_backends_load(path, &b, &n, &err)) {
		fprintf(stderr, "ring_lookup: %s\n", keys ? err.msg : "out of memory");
		return 1;
	}
	for (uint32_t i = 0; i < NKEYS; i++)
		keys[i] = kr_mix32(i * 2654435761u + 12345);	/* bijective: all distinct */
	printf("userspace lookup, %u distinct random keys, best of 3\n", NKEYS);
	bench(b, n, 16, keys);
	bench(b, n, 1600, keys);
	free(keys);
	free(b);
	return 0;
}
