// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ring build time: kr_ring_build() (per-backend CRC state + 4 bytes per point, LSD radix
 * sort, one-pass dedup) against a straightforward builder measured in the same run
 * (per-point CRC over the whole base string + 4 bytes, qsort, dedup).  One thread.
 * Prints best-of-N times, the speedup, the peak memory per point of both, and whether the
 * two rings' digests agree.  No assertions.
 *
 * Beside the build step, the whole `keyrouter ring build` command is timed two ways:
 *  - in process: what the command runs (read the backends file, kr_ring_build,
 *    kr_image_encode, free both), the thread's CPU time;
 *  - the command itself: build/keyrouter (next to this program's directory) run as a child
 *    process, its user + system CPU time from wait4() (process start, dynamic linking,
 *    argument parsing and printing included).
 * Each against the same straightforward builder's time; the last line is the whole command
 * at the largest ring.
 *
 * Before each timed run the bench touches and frees as much memory as the straightforward
 * builder holds (24 bytes a point with qsort's buffer), so that every variant gets pages
 * the kernel handed out moments ago: on a VM, a page not touched for a while can cost
 * ten times more to fault in (host-side), which made consecutive figures differ by 2x.
 * KR_BENCH_COLD=1 leaves this out.
 *
 *   build/bench/ring_build [BACKENDS_FILE]   (default tests/data/bench2048.backends.txt)
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "backends_file.h"
#include "continuum.h"
#include "crc32.h"
#include "image.h"
#include "bench_args.h"
#include "bench_loadavg.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);	/* CPU time: the machine is shared */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Wall-clock time, what a user waits for (it includes page faults, and the time the
 * machine's other work keeps this process off the CPU). */
static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
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

/* ---- the whole command -------------------------------------------------------------- */

static int warm = 1;

/* Touches and frees `bytes` of fresh memory (see the head comment). */
static void warm_pages(size_t bytes)
{
	char *p;

	if (!warm)
		return;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	kr_hint_huge(p, bytes);
	for (size_t i = 0; i < bytes; i += 4096)
		p[i] = 1;
	munmap(p, bytes);
}


static const char *backends_path;
static char tool[4096];	/* build/keyrouter, or "" when not found */

/* What `keyrouter ring build --backends FILE` runs, in this thread: CPU ns, or 0. */
static uint64_t whole_in_process(uint32_t version, uint32_t pm, uint32_t *digest)
{
	struct kr_backend_spec *b;
	struct kr_image img;
	struct kr_ring *r;
	struct kr_err err;
	uint64_t t0 = now_ns(), t;
	uint32_t n;

	if (kr_backends_load(backends_path, &b, &n, &err))
		return 0;
	if (kr_ring_build(&r, b, n, version, pm, &err)) {
		free(b);
		return 0;
	}
	free(b);
	if (kr_image_encode(&img, r, NULL, &err)) {
		kr_ring_free(r);
		return 0;
	}
	*digest = r->digest;
	kr_image_free(&img);
	kr_ring_free(r);
	t = now_ns() - t0;
	return t;
}

/* The command as a child process (stdout to /dev/null): its user + system CPU ns, or 0;
 * *wall = its wall-clock ns from fork to exit, *sys = its system CPU ns, *faults = its page
 * faults (minor + major). */
static uint64_t whole_command(uint32_t version, uint32_t pm, uint64_t *wall, uint64_t *sys,
			      uint64_t *faults)
{
	uint64_t w0;
	char pms[16];
	struct rusage ru;
	int st;
	pid_t pid;

	if (!tool[0])
		return 0;
	snprintf(pms, sizeof(pms), "%u", pm);
	fflush(stdout);
	w0 = wall_ns();
	pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0)
			dup2(fd, 1);
		if (version == KR_RING_V1)
			execl(tool, tool, "ring", "build", "--backends", backends_path, "--version",
			      "v1", (char *)NULL);
		else
			execl(tool, tool, "ring", "build", "--backends", backends_path, "--version",
			      "v2", "--point-multiple", pms, (char *)NULL);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 0;
	*wall = wall_ns() - w0;
	*sys = (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + ru.ru_stime.tv_usec * 1000ull;
	*faults = (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
	return (uint64_t)ru.ru_utime.tv_sec * 1000000000ull + ru.ru_utime.tv_usec * 1000ull +
	       (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + ru.ru_stime.tv_usec * 1000ull;
}

/* build/bench/ring_build -> build/keyrouter */
static void find_tool(const char *argv0)
{
	const char *slash = strrchr(argv0, '/');
	int n = slash ? (int)(slash - argv0) : 1;

	snprintf(tool, sizeof(tool), "%.*s/../keyrouter", n, slash ? argv0 : ".");
	if (access(tool, X_OK))
		tool[0] = 0;
}

/* ---- one configuration --------------------------------------------------------------- */

static void run(const struct kr_backend_spec *b, uint32_t n, uint32_t version, uint32_t pm,
		int reps)
{
	uint64_t best_fast = UINT64_MAX, best_naive = UINT64_MAX, gen = 0, sort = 0, dd = 0;
	uint64_t best_whole = UINT64_MAX, best_cmd = UINT64_MAX, best_naive_wall = UINT64_MAX;
	uint64_t best_cmd_wall = UINT64_MAX, cmd_sys = 0, cmd_faults = 0, worst_cmd_wall = 0;
	char runs[512] = "";
	size_t rl = 0;
	uint32_t fast_digest = 0, naive_digest = 0, fast_np = 0, naive_np = 0, gen_pts = 0;
	uint32_t whole_digest = 0;
	size_t fast_peak = 0, naive_peak = 0;
	enum kr_gen gen_path = KR_GEN_AUTO;
	struct kr_err err;
	char d[64];

	uint64_t points = 0;

	for (uint32_t i = 0; i < n; i++)
		points += (uint64_t)b[i].weight * (version == KR_RING_V1 ? 160 : pm);
	for (int r = 0; r < reps; r++) {
		struct kr_ring *ring;
		uint64_t t0, t, w, sy = 0, fl = 0;

		warm_pages(points * 24);
		t0 = now_ns();
		if (kr_ring_build(&ring, b, n, version, pm, &err)) {
			printf("build failed: %s\n", err.msg);
			return;
		}
		t = now_ns() - t0;
		if (t < best_fast) {
			best_fast = t;
			gen = ring->stats.gen_ns;
			gen_path = (enum kr_gen)ring->stats.gen;
			sort = ring->stats.sort_ns;
			dd = ring->stats.dedup_ns;
		}
		fast_digest = ring->digest;
		fast_np = ring->npoints;
		fast_peak = ring->stats.peak_bytes;
		gen_pts = (uint32_t)ring->stats.generated;
		kr_ring_describe(ring, d, sizeof(d));
		kr_ring_free(ring);

		warm_pages(points * 24);
		t0 = now_ns();
		w = wall_ns();
		naive_digest = naive_build(b, n, version, version == KR_RING_V1 ? 160 : pm,
					   &naive_np, &naive_peak);
		w = wall_ns() - w;
		t = now_ns() - t0;
		if (t < best_naive)
			best_naive = t;
		if (w < best_naive_wall)
			best_naive_wall = w;

		warm_pages(points * 24);
		t = whole_in_process(version, pm, &whole_digest);
		if (t && t < best_whole)
			best_whole = t;
		warm_pages(points * 24);
		t = whole_command(version, pm, &w, &sy, &fl);
		if (t && t < best_cmd)
			best_cmd = t;
		if (t && w < best_cmd_wall) {
			best_cmd_wall = w;
			cmd_sys = sy;
			cmd_faults = fl;
		}
		if (t && w > worst_cmd_wall)
			worst_cmd_wall = w;
		if (t && rl < sizeof(runs) - 64)
			rl += (size_t)snprintf(runs + rl, sizeof(runs) - rl, "%s%.0f/%.0f/%.0f",
					       rl ? ", " : "", w / 1e6, t / 1e6, sy / 1e6);
	}
	printf("%-22s points %9u  keyrouter %9.2f ms (generate %.1f [%s], sort %.1f, dedup+digest "
	       "%.1f)  straightforward %9.2f ms  speedup %5.2fx  peak %.2f B/point (vs %.2f)  "
	       "digests %s (%08x)\n",
	       d, fast_np, best_fast / 1e6, gen / 1e6, kr_gen_name(gen_path), sort / 1e6, dd / 1e6,
	       best_naive / 1e6,
	       (double)best_naive / (double)best_fast, (double)fast_peak / gen_pts,
	       (double)naive_peak / gen_pts,
	       fast_digest == naive_digest && fast_np == naive_np ? "agree" : "DIFFER",
	       fast_digest);
	if (best_whole != UINT64_MAX)
		printf("%-22s whole command in process (file, build, image, free) %9.2f ms  "
		       "speedup %5.2fx  digest %s\n", d, best_whole / 1e6,
		       (double)best_naive / (double)best_whole,
		       whole_digest == naive_digest ? "agrees" : "DIFFERS");
	else
		printf("%-22s whole command in process: failed\n", d);
	if (best_cmd != UINT64_MAX) {
		printf("%-22s `keyrouter ring build` process, user+sys CPU %9.2f ms  "
		       "speedup %5.2fx\n", d, best_cmd / 1e6, (double)best_naive / (double)best_cmd);
		printf("%-22s `keyrouter ring build` process, wall clock %9.2f ms (worst %.2f; "
		       "system CPU %.2f ms, %" PRIu64 " page faults) vs straightforward %.2f ms wall "
		       "(in process): speedup %5.2fx (worst %.2fx)\n", d, best_cmd_wall / 1e6,
		       worst_cmd_wall / 1e6, cmd_sys / 1e6, cmd_faults, best_naive_wall / 1e6,
		       (double)best_naive_wall / (double)best_cmd_wall,
		       (double)best_naive_wall / (double)worst_cmd_wall);
		printf("%-22s   each run, wall/CPU/system ms: %s\n", d, runs);
	} else
		printf("%-22s `keyrouter ring build` process: %s\n", d,
		       tool[0] ? "failed" : "build/keyrouter not found");
	if (fast_np > 10000000 && best_cmd != UINT64_MAX)
		printf("ring_build: whole command at %u points: %.1f ms CPU (process; %.1f in "
		       "process) vs straightforward %.1f ms, ratio %.2fx (%.2fx); wall clock %.1f "
		       "ms (worst %.1f) vs %.1f ms, ratio %.2fx (worst %.2fx)\n", fast_np,
		       best_cmd / 1e6, best_whole / 1e6, best_naive / 1e6,
		       (double)best_naive / (double)best_cmd,
		       (double)best_naive / (double)best_whole, best_cmd_wall / 1e6,
		       worst_cmd_wall / 1e6, best_naive_wall / 1e6,
		       (double)best_naive_wall / (double)best_cmd_wall,
		       (double)best_naive_wall / (double)worst_cmd_wall);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	bench_args(argc, argv, 1,
		   " [--help] [BACKENDS_FILE]\n"
		   "Ring build time (kr_ring_build, and the whole `keyrouter ring build` command) against\n"
		   "a straightforward CRC-per-point + qsort builder, at several point multiples.\n"
		   "BACKENDS_FILE defaults to tests/data/bench2048.backends.txt.\n"
		   "environment: KR_BENCH_COLD=1 skips pre-faulting memory before each timed run\n");
	bench_loadavg_begin();
	const char *path = argc > 1 ? argv[1] : "tests/data/bench2048.backends.txt";
	struct kr_backend_spec *b;
	struct kr_err err;
	uint32_t n;

	backends_path = path;
	warm = !getenv("KR_BENCH_COLD");
	printf("pages warmed before each run: %s\n", warm ? "yes" : "no (KR_BENCH_COLD)");
	find_tool(argv[0]);
	if (kr_backends_load(path, &b, &n, &err)) {
		fprintf(stderr, "ring_build: %s\n", err.msg);
		return 1;
	}
	printf("ring build, %u backends from %s, one thread, best of N runs each\n", n, path);
	run(b, n, KR_RING_V2, 16, 5);
	run(b, n, KR_RING_V2, 160, 3);
	run(b, n, KR_RING_V1, 0, 3);
	run(b, n, KR_RING_V2, 1600, 3);
	free(b);
	return 0;
}
