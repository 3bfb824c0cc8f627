// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ring build time: kr_ring_build() (per-backend CRC state + 4 bytes per point, LSD radix
 * sort, one-pass dedup) against a straightforward builder measured in the same run
 * (per-point CRC over the whole base string + 4 bytes, qsort, dedup).  One thread.
 * Prints best-of-N times, the speedup, the peak memory per point of both, and whether the
 * two rings' digests agree.  No assertions.
 *
 *   build/bench/ring_build [BACKENDS_FILE]   (default tests/data/bench2048.backends.txt)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backends_file.h"
#include "continuum.h"
#include "crc32.h"
#include "bench_loadavg.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);	/* CPU time: the machine is shared */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the straightforward builder --------------------------------------------------- */

struct npoint {
	uint32_t hash;
	uint32_t tie;	/* position in tie order (v1: input order, v2: address order) */
	uint32_t backend;
};

static int ncmp(const void *x, const void *y)
{
	const struct npoint *a = x, *b = y;

	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	return (a->tie > b->tie) - (a->tie < b->tie);
}

static const struct kr_backend_spec *nb_base;

static int addr_cmp(const void *x, const void *y)
{
	return kr_sockaddr_cmp(&nb_base[*(const uint32_t *)x].addr,
			       &nb_base[*(const uint32_t *)y].addr);
}

/* Returns the digest; *np = points after dedup, *peak = bytes held at most. */
static uint32_t naive_build(const struct kr_backend_spec *b, uint32_t n, uint32_t version,
			    uint32_t pm, uint32_t *np, size_t *peak)
{
	uint64_t total = 0, k = 0;
	uint32_t *order = malloc(n * sizeof(*order)), out = 0, dg = 0;
	struct npoint *p;

	for (uint32_t i = 0; i < n; i++) {
		total += (uint64_t)b[i].weight * pm;
		order[i] = i;
	}
	if (version == KR_RING_V2) {
		nb_base = b;
		qsort(order, n, sizeof(*order), addr_cmp);
	}
	p = malloc(total * sizeof(*p));
	*peak = total * sizeof(*p) + n * sizeof(*order);
	for (uint32_t oi = 0; oi < n; oi++) {
		uint32_t i = order[oi], prev = 0;
		char buf[KR_SOCKADDR_STRLEN + 4];
		size_t len = kr_ring_base_string(&b[i].addr, buf);

		for (uint32_t j = 0; j < b[i].weight * pm; j++, k++) {
			memcpy(buf + len, &prev, 4);	/* little-endian host */
			prev = kr_crc32(buf, len + 4);
			p[k] = (struct npoint){ prev, oi, i };
		}
	}
	qsort(p, total, sizeof(*p), ncmp);
	for (uint64_t i = 0; i < total; i++) {
		if (out && p[i].hash == p[out - 1].hash)
			continue;
		p[out++] = p[i];
	}
	for (uint32_t i = 0; i < out; i++)
		dg = kr_crc32_le32x2(dg, p[i].hash, p[i].backend);
	*np = out;
	free(p);
	free(order);
	return dg;
}

/* ---- one configuration --------------------------------------------------------------- */

static void run(const struct kr_backend_spec *b, uint32_t n, uint32_t version, uint32_t pm,
		int reps)
{
	uint64_t best_fast = UINT64_MAX, best_naive = UINT64_MAX, gen = 0, sort = 0, dd = 0;
	uint32_t fast_digest = 0, naive_digest = 0, fast_np = 0, naive_np = 0, gen_pts = 0;
	size_t fast_peak = 0, naive_peak = 0;
	struct kr_err err;
	char d[64];

	for (int r = 0; r < reps; r++) {
		struct kr_ring *ring;
		uint64_t t0 = now_ns(), t;

		if (kr_ring_build(&ring, b, n, version, pm, &err)) {
			printf("build failed: %s\n", err.msg);
			return;
		}
		t = now_ns() - t0;
		if (t < best_fast) {
			best_fast = t;
			gen = ring->stats.gen_ns;
			sort = ring->stats.sort_ns;
			dd = ring->stats.dedup_ns;
		}
		fast_digest = ring->digest;
		fast_np = ring->npoints;
		fast_peak = ring->stats.peak_bytes;
		gen_pts = (uint32_t)ring->stats.generated;
		kr_ring_describe(ring, d, sizeof(d));
		kr_ring_free(ring);

		t0 = now_ns();
		naive_digest = naive_build(b, n, version, version == KR_RING_V1 ? 160 : pm,
					   &naive_np, &naive_peak);
		t = now_ns() - t0;
		if (t < best_naive)
			best_naive = t;
	}
	printf("%-22s points %9u  keyrouter %9.2f ms (generate %.1f, sort %.1f, dedup+digest "
	       "%.1f)  straightforward %9.2f ms  speedup %5.2fx  peak %.2f B/point (vs %.2f)  "
	       "digests %s (%08x)\n",
	       d, fast_np, best_fast / 1e6, gen / 1e6, sort / 1e6, dd / 1e6, best_naive / 1e6,
	       (double)best_naive / (double)best_fast, (double)fast_peak / gen_pts,
	       (double)naive_peak / gen_pts,
	       fast_digest == naive_digest && fast_np == naive_np ? "agree" : "DIFFER",
	       fast_digest);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	bench_loadavg_begin();
	const char *path = argc > 1 ? argv[1] : "tests/data/bench2048.backends.txt";
	struct kr_backend_spec *b;
	struct kr_err err;
	uint32_t n;

	if (kr_backends_load(path, &b, &n, &err)) {
		fprintf(stderr, "ring_build: %s\n", err.msg);
		return 1;
	}
	printf("ring build, %u backends from %s, one thread, best of N runs each\n", n, path);
	run(b, n, KR_RING_V2, 16, 5);
	run(b, n, KR_RING_V2, 160, 3);
	run(b, n, KR_RING_V1, 0, 3);
	run(b, n, KR_RING_V2, 1600, 2);
	free(b);
	return 0;
}
