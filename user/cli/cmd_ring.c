// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `keyrouter ring dump` and `keyrouter ring build`. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "continuum.h"
#include "image.h"
#include "log.h"
#include "ring_opts.h"

static const char dump_help[] =
	"Usage: keyrouter ring dump --backends FILE --version v1|v2 [--point-multiple N]\n"
	"       keyrouter ring dump -c CONFIG --ring NAME\n"
	"\n"
	"Builds the ketama ring (bit-compatible with pingora-ketama v1/v2) and prints every\n"
	"point in ring order, one per line:\n"
	"  <ring_index> <hash, 8 lowercase hex digits> <backend_index>\n"
	"after '#' header lines giving the point count and the ring digest (CRC-32 over each\n"
	"point's hash and backend index as u32 little-endian).\n"
	"\n" KR_RING_OPTS_HELP
	"Other:\n"
	"  --no-header            only the point lines\n"
	"  -h, --help             this text\n";

static const char build_help[] =
	"Usage: keyrouter ring build --backends FILE --version v1|v2 [--point-multiple N]\n"
	"       keyrouter ring build -c CONFIG --ring NAME\n"
	"\n"
	"Builds the ketama ring and its kernel image (without touching the kernel) and prints\n"
	"one line: the ring format, backends, points, removed duplicates, the ring digest,\n"
	"the build time (CPU time: the build runs on one thread), its peak memory, and the\n"
	"kernel image (chunks, size, bucket index).  With -v (keyrouter -v ring build ...)\n"
	"also the build's phases and the point generator that ran (scalar, lanes4, gfni).\n"
	"\n" KR_RING_OPTS_HELP
	"Other:\n"
	"  -h, --help             this text\n"
	"Environment:\n"
	"  KEYROUTER_POINT_GEN=scalar|lanes4|gfni   force the point generator (tests,\n"
	"                         benchmarks: every one gives the same ring; gfni needs\n"
	"                         GFNI and AVX-512, else the build fails and says so)\n";

/* Options of ring dump/build: the ring options, and dump's --no-header. */
static int ring_cb(void *ctx, int id, const char *arg, struct kr_err *err)
{
	return kr_ring_opt(ctx, id, arg, err) < 0 ? -1 : 0;
}

/* Parses argv; returns -1 to go on, else the exit status. */
static int parse(int argc, char **argv, const char *help, struct kr_ring_opts *o, bool *no_header)
{
	const struct kr_opt opts[] = {
		KR_OPT_FLAG(no_header ? "no-header" : NULL, 0, no_header),
		KR_OPT_END
	};
	const struct kr_opts_cmd c = { .help = help, .cb = ring_cb, .ctx = o,
				       .more = kr_ring_optdefs };
	struct kr_err err;
	int first = kr_opts_parse(argc, argv, no_header ? opts : opts + 1, &c);

	if (first < 0)
		return kr_opts_status(first);
	if (first < argc)
		return kr_usage_error("unexpected argument '%s'", argv[first]);
	if (kr_ring_opts_check(o, &err))
		return kr_usage_error("%s", err.msg);
	return -1;
}

static uint64_t total_weight(const struct kr_ring *r)
{
	uint64_t w = 0;

	for (uint32_t i = 0; i < r->nbackends; i++)
		w += r->backends[i].weight;
	return w;
}

static void put_hex8(char *p, uint32_t v)
{
	static const char hx[] = "0123456789abcdef";

	for (int i = 7; i >= 0; i--, v >>= 4)
		p[i] = hx[v & 15];
}

static char *put_u32(char *p, uint32_t v)
{
	char t[10];
	int n = 0;

	do
		t[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*p++ = t[--n];
	return p;
}

static int dump_points(const struct kr_ring *r)
{
	char buf[1 << 16];
	size_t n = 0;

	for (uint32_t i = 0; i < r->npoints; i++) {
		char *p = buf + n;

		p = put_u32(p, i);
		*p++ = ' ';
		put_hex8(p, r->hash[i]);
		p += 8;
		*p++ = ' ';
		p = put_u32(p, r->backend[i]);
		*p++ = '\n';
		n = (size_t)(p - buf);
		if (n > sizeof(buf) - 64) {
			if (fwrite(buf, 1, n, stdout) != n)
				return -1;
			n = 0;
		}
	}
	if (n && fwrite(buf, 1, n, stdout) != n)
		return -1;
	return fflush(stdout);
}

static int cmd_ring_dump(int argc, char **argv)
{
	struct kr_ring_opts o = { 0 };
	struct kr_ring *r = NULL;
	struct kr_err err;
	bool no_header = false;
	int ret;
	char d[64];

	ret = parse(argc, argv, dump_help, &o, &no_header);
	if (ret >= 0)
		return ret;
	if (kr_ring_opts_build(&o, &r, &err)) {
		pr_warn("keyrouter: %s\n", err.msg);
		return 1;
	}
	if (!no_header) {
		printf("# keyrouter ring dump, version: %s\n", kr_ring_describe(r, d, sizeof(d)));
		printf("# backends: %u (file %s), total weight %llu\n", r->nbackends, o.label,
		       (unsigned long long)total_weight(r));
		printf("# points after dedup: %u\n", r->npoints);
		printf("# ring digest: crc32 over (hash u32 LE, backend_index u32 LE) of every "
		       "point in order = %08x\n", r->digest);
	}
	ret = 0;
	if (dump_points(r)) {
		pr_warn("keyrouter: ring dump: couldn't write the points: %m\n");
		ret = 1;
	}
	kr_ring_free(r);
	return ret;
}
KR_COMMAND(ring_dump, "ring dump", "print every point of a ring (index, hash, backend)",
	   cmd_ring_dump);

static int cmd_ring_build(int argc, char **argv)
{
	struct kr_ring_opts o = { 0 };
	struct kr_image img = { 0 };
	struct kr_ring *r = NULL;
	struct kr_err err;
	char d[64];
	int ret;

	ret = parse(argc, argv, build_help, &o, NULL);
	if (ret >= 0)
		return ret;
	if (kr_ring_opts_build(&o, &r, &err)) {
		pr_warn("keyrouter: %s\n", err.msg);
		return 1;
	}
	/* the ring's points are not needed after the image: its pages become the image's */
	if (kr_image_encode_consume(&img, r, NULL, &err)) {
		pr_warn("keyrouter: %s: %s\n", o.label, err.msg);
		kr_ring_free(r);
		return 1;
	}
	printf("ring %s: backends %u, points %u, duplicates %u, digest %08x, build %.3f ms CPU, "
	       "peak memory %.1f bytes/point (%.1f MiB), image %u chunks (%.1f MiB, "
	       "%u bucket bits, largest bucket %u points, encoded in %.3f ms)\n",
	       kr_ring_describe(r, d, sizeof(d)), r->nbackends, r->npoints, r->ndups, r->digest,
	       r->stats.build_ns / 1e6,
	       (double)r->stats.peak_bytes / (double)(r->stats.generated ? r->stats.generated : 1),
	       r->stats.peak_bytes / 1048576.0, img.hdr->nchunks, img.size / 1048576.0,
	       img.hdr->bucket_bits, img.hdr->max_bucket, img.encode_ns / 1e6);
	pr_debug("phases: generate %.3f ms (point generator %s), sort %.3f ms, dedup+digest "
		 "%.3f ms\n", r->stats.gen_ns / 1e6, kr_gen_name((enum kr_gen)r->stats.gen),
		 r->stats.sort_ns / 1e6, r->stats.dedup_ns / 1e6);
	kr_image_free(&img);
	kr_ring_free(r);
	return 0;
}
KR_COMMAND(ring_build, "ring build", "build a ring and its kernel image, print a summary",
	   cmd_ring_build);
