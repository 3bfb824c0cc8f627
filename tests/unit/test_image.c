// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel ring image: header fields, section offsets, the bucket index (every entry and
 * its sentinel), packed points across chunk boundaries, the backend table, and the
 * bucket-index lookup of include/kr_lookup.h against the plain lower bound on millions of
 * random keys and on crafted keys (every point hash and +-1, 0, 0xffffffff, past the last
 * point, every bucket boundary +-1, empty buckets, an oversized bucket), for rings of
 * 1 point up to 1.5M points, with and without collisions, and of exactly 2047..8190 points
 * (a last points chunk full or nearly); inconsistent images are refused.
 */
#include <string.h>
#include "tap.h"
#include "vec.h"
#include "image.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static uint32_t div_up(uint64_t a, uint32_t b)
{
	return (uint32_t)((a + b - 1) / b);
}

static const uint32_t *idx_entries(const struct kr_image *img)
{
	return kr_image_chunk(img, img->hdr->idx_chunk);
}

/* Header fields and section offsets. */
static void check_header(const struct kr_ring *r, const struct kr_image *img, const char *name)
{
	const struct kr_image_hdr *h = img->hdr;
	uint32_t n = r->npoints + r->ndups, b = kr_image_bucket_bits(n);
	uint32_t ic = div_up((1ull << b) + 1, KR_IDX_PER_CHUNK);
	int ok = h->magic == KR_IMAGE_MAGIC && h->format == KR_IMAGE_FORMAT && h->npoints == n &&
		 h->ndups == r->ndups && h->nbackends == r->nbackends && h->bucket_bits == b &&
		 h->idx_chunk == 1 &&
		 h->bt_chunk == (r->nbackends <= KR_BT0_MAX ? 0 : 1 + ic) &&
		 h->pt_chunk == 1 + ic + (r->nbackends <= KR_BT0_MAX ? 0 :
					  div_up(r->nbackends, KR_BT_PER_CHUNK)) &&
		 h->nchunks == h->pt_chunk + div_up(n, KR_PTS_PER_CHUNK) &&
		 img->size == (size_t)h->nchunks * KR_CHUNK_BYTES && h->digest == r->digest &&
		 h->ring_version == r->version && h->point_multiple == r->point_multiple &&
		 h->generation == 0;

	CHECK(ok, "%s: header (points %u, dups %u, bucket bits %u, chunks %u)", name, n, r->ndups,
	      b, h->nchunks);
	CHECK(kr_image_check(img->buf, img->size, NULL) == 0, "%s: kr_image_check accepts it", name);
	CHECK(b == KR_MIN_BUCKET_BITS || (n >> b) >= 16, "%s: >= 16 points per bucket on average "
	      "or minimum bits", name);
	CHECK((size_t)((1ull << b) + 1) * 4 <= (size_t)n / 4 + 64,
	      "%s: index <= 0.25 byte per point (+ small rings' minimum)", name);
}

/* Every index entry = first image point with hash >= k << shift; sentinel = npoints. */
static void check_index(const struct kr_image *img, const char *name)
{
	const struct kr_image_hdr *h = img->hdr;
	const uint32_t *idx = idx_entries(img);
	uint32_t nb = 1u << h->bucket_bits, shift = 32 - h->bucket_bits, bad = 0, maxb = 0;
	uint32_t hh = 0, be = 0;
	uint32_t sc = h->idx_chunk + nb / KR_IDX_PER_CHUNK, so = nb % KR_IDX_PER_CHUNK;
	const uint32_t *sent = kr_image_chunk(img, sc);

	for (uint32_t k = 0, i = 0; k < nb; k++) {
		while (i < h->npoints && (kr_image_point(img, i, &hh, &be), hh >> shift) < k)
			i++;
		bad += idx[k] != i;
		if (idx[k + 1] - idx[k] > maxb)
			maxb = idx[k + 1] - idx[k];
	}
	CHECK(bad == 0, "%s: all %u bucket index entries exact", name, nb);
	CHECK(sent && sent[so] == h->npoints, "%s: sentinel (chunk %u, entry %u) = npoints %u",
	      name, sc, so, h->npoints);
	CHECK_EQ_U(h->max_bucket, maxb, "%s: max_bucket", name);
}

/* Image points = ring points, each followed by its removed duplicates; raw chunk bytes. */
static void check_points(const struct kr_ring *r, const struct kr_image *img, const char *name)
{
	uint32_t k = 0, d = 0, bad = 0, badraw = 0;

	for (uint32_t i = 0; i < r->npoints; i++) {
		uint32_t hh = 0, be = 0;

		kr_image_point(img, k, &hh, &be);
		bad += hh != r->hash[i] || be != r->backend[i] || kr_image_ring_index(img, k) != i;
		k++;
		for (; d < r->ndups && r->dups[d].winner == i; d++, k++) {
			kr_image_point(img, k, &hh, &be);
			bad += hh != r->dups[d].hash || be != r->dups[d].backend ||
			       kr_image_ring_index(img, k) != i;
		}
	}
	CHECK(bad == 0 && k == img->hdr->npoints, "%s: image points = ring points + kept "
	      "duplicates after their winner; image -> ring index", name);
	/* Raw layout: point k at chunk pt_chunk + k / 2048, byte (k % 2048) * 6, little-endian. */
	for (uint32_t k2 = 0; k2 < img->hdr->npoints; k2 += (k2 % 2048 == 2047) ? 1 : 511) {
		const uint8_t *c = kr_image_chunk(img, img->hdr->pt_chunk + k2 / 2048);
		uint32_t hh = 0, be = 0;

		kr_image_point(img, k2, &hh, &be);
		if (!c) {
			badraw++;
			continue;
		}
		c += (k2 % 2048) * 6;
		badraw += (uint32_t)(c[0] | c[1] << 8 | c[2] << 16 | (uint32_t)c[3] << 24) != hh ||
			  (uint32_t)(c[4] | c[5] << 8) != be;
	}
	CHECK(badraw == 0, "%s: packed 6-byte points, 2048 per chunk, across chunk boundaries",
	      name);
}

/* Bucket-index lookup = plain lower bound for hash h. */
static int agree(const struct kr_ring *r, const struct kr_image *img, uint32_t h)
{
	uint32_t ii, hh, be, ri = kr_ring_lower_bound(r, h);

	if (kr_image_lookup(img, h, &ii) || kr_image_point(img, ii, &hh, &be))
		return 0;
	return kr_image_ring_index(img, ii) == ri && hh == r->hash[ri] && be == r->backend[ri];
}

/* kr_image_lookup_batch() (the archive's: kr_lookup.h's userspace branch) = this
 * program's kr_image_lookup() (test_image_bpf: the BPF branch) for random keys. */
static void check_batch(const struct kr_image *img, const char *name)
{
	enum { NB = 4096 };
	static uint32_t h[NB], out[NB], be[NB];
	uint32_t bad = 0, ii = 0, hh = 0, b = 0;

	for (uint32_t i = 0; i < NB; i++)
		h[i] = rnd();
	if (kr_image_lookup_batch(img, h, NB, out, be)) {
		CHECK(0, "%s: batched lookup of %u keys", name, NB);
		return;
	}
	for (uint32_t i = 0; i < NB; i++)
		bad += kr_image_lookup(img, h[i], &ii) || kr_image_point(img, ii, &hh, &b) ||
		       ii != out[i] || b != be[i];
	CHECK(bad == 0, "%s: %u random keys: batched lookup = single lookup (point, backend)",
	      name, NB);
}

static void check_lookups(const struct kr_ring *r, const struct kr_image *img, uint32_t nrand,
			  const char *name)
{
	uint32_t shift = 32 - img->hdr->bucket_bits, nb = 1u << img->hdr->bucket_bits;
	uint32_t bad = 0, n = 0, crafted[] = { 0, 1, 0xffffffff, 0xfffffffe,
					     r->hash[r->npoints - 1] + 1, r->hash[0] - 1 };

	for (uint32_t i = 0; i < nrand; i++, n++)
		bad += !agree(r, img, rnd());
	CHECK(bad == 0, "%s: %u random keys: bucket index = plain lower bound", name, n);
	check_batch(img, name);
	bad = n = 0;
	for (uint32_t i = 0; i < r->npoints; i++, n += 3)
		bad += !agree(r, img, r->hash[i]) + !agree(r, img, r->hash[i] - 1) +
		       !agree(r, img, r->hash[i] + 1);
	for (uint32_t k = 0; k < nb; k++, n += 3)
		bad += !agree(r, img, k << shift) + !agree(r, img, (k << shift) - 1) +
		       !agree(r, img, (k << shift) + 1);
	for (size_t i = 0; i < sizeof(crafted) / sizeof(crafted[0]); i++, n++)
		bad += !agree(r, img, crafted[i]);
	CHECK(bad == 0, "%s: %u crafted keys (each point hash +-1, every bucket boundary +-1, 0, "
	      "0xffffffff, past the last point)", name, n);
	if (r->hash[r->npoints - 1] != 0xffffffff) {
		uint32_t ii = 1;

		kr_image_lookup(img, r->hash[r->npoints - 1] + 1, &ii);
		CHECK_EQ_U(ii, 0, "%s: past the last point wraps to image index 0", name);
	}
}

static void check_ring(const struct kr_ring *r, uint32_t nrand, const char *name)
{
	struct kr_image img;
	struct kr_err err = { "" };

	if (kr_image_encode(&img, r, NULL, &err)) {
		CHECK(0, "%s: encodes (%s)", name, err.msg);
		return;
	}
	check_header(r, &img, name);
	check_index(&img, name);
	check_points(r, &img, name);
	check_lookups(r, &img, nrand, name);
	kr_image_free(&img);
}

static struct kr_backend_spec *many(uint32_t n, uint32_t weight)
{
	struct kr_backend_spec *b = calloc(n, sizeof(*b));

	for (uint32_t i = 0; i < n; i++) {
		b[i].addr.family = 4;
		b[i].addr.ip[0] = 192;
		b[i].addr.ip[1] = 168;
		b[i].addr.ip[2] = (uint8_t)(i >> 8);
		b[i].addr.ip[3] = (uint8_t)i;
		b[i].addr.port = 443;
		b[i].weight = weight;
	}
	return b;
}

static void real_rings(void)
{
	static const struct { uint32_t nb, pm, nrand; } sz[] = {
		{ 1, 1, 100000 }, { 2, 1, 100000 }, { 3, 1, 100000 }, { 10, 16, 200000 },
		{ 7, 73, 200000 }, { 100, 100, 300000 },
	};
	struct kr_backend_spec *b = many(256, 1);
	char name[64];

	for (size_t i = 0; i < sizeof(sz) / sizeof(sz[0]); i++) {
		struct kr_ring *r = NULL;

		if (kr_ring_build(&r, b, sz[i].nb, KR_RING_V2, sz[i].pm, NULL)) {
			CHECK(0, "ring %u x %u builds", sz[i].nb, sz[i].pm);
			continue;
		}
		snprintf(name, sizeof(name), "%u points", r->npoints);
		check_ring(r, sz[i].nrand, name);
		kr_ring_free(r);
	}
	free(b);
}

static void bench_rings(void)
{
	struct kr_backend_spec *b;
	struct kr_ring *r;
	uint32_t n;

	if (kr_backends_load("tests/data/bench2048.backends.txt", &b, &n, NULL)) {
		CHECK(0, "tests/data/bench2048.backends.txt loads");
		return;
	}
	if (!kr_ring_build(&r, b, n, KR_RING_V2, 16, NULL)) {
		check_ring(r, 1000000, "bench2048 v2 pm16");
		kr_ring_free(r);
	}
	if (!kr_ring_build(&r, b, n, KR_RING_V2, 160, NULL)) {
		CHECK(r->ndups > 0, "bench2048 pm160 has collisions (%u)", r->ndups);
		check_ring(r, 2000000, "bench2048 v2 pm160");
		kr_ring_free(r);
	}
	free(b);
}

/* kr_image_encode_consume: the same image, byte for byte, from a ring whose points it
 * gives back to the kernel as it goes (a ring with kept duplicates, over 2^19 points: the
 * release runs several times). */
static void consume_ring(void)
{
	struct kr_backend_spec *b;
	struct kr_image ia, ib;
	struct kr_ring *r1, *r2;
	uint32_t n;

	if (kr_backends_load("tests/data/bench2048.backends.txt", &b, &n, NULL)) {
		CHECK(0, "tests/data/bench2048.backends.txt loads");
		return;
	}
	if (kr_ring_build(&r1, b, n, KR_RING_V2, 160, NULL) ||
	    kr_ring_build(&r2, b, n, KR_RING_V2, 160, NULL)) {
		CHECK(0, "bench2048 pm160 builds twice");
		free(b);
		return;
	}
	CHECK(!kr_image_encode(&ia, r1, NULL, NULL) && !kr_image_encode_consume(&ib, r2, NULL, NULL),
	      "encode and encode_consume succeed");
	CHECK(r2->hash == NULL && r2->backend == NULL && r2->npoints == r1->npoints &&
	      r2->digest == r1->digest, "consume: points freed, counts and digest kept");
	CHECK(ia.size == ib.size && memcmp(ia.buf, ib.buf, ia.size) == 0,
	      "consume: the image is byte-identical (%zu bytes, %u points)", ia.size, r1->npoints);
	CHECK(ia.ndup_pos == ib.ndup_pos && ia.ndup_pos > 0 &&
	      memcmp(ia.dup_pos, ib.dup_pos, ia.ndup_pos * sizeof(uint32_t)) == 0,
	      "consume: the same kept duplicates (%u)", ia.ndup_pos);
	kr_image_free(&ia);
	kr_image_free(&ib);
	kr_ring_free(r1);
	kr_ring_free(r2);
	free(b);
}

static void collide_rings(void)
{
	const char *names[] = { "f_v2pm16_collide", "f_v2pm160_collide" };

	for (int i = 0; i < 2; i++) {
		struct kr_ring *r = NULL;
		struct vec v;

		if (vec_load(&v, names[i]) || kr_ring_build(&r, v.b, v.nb, KR_RING_V2, v.pm, NULL)) {
			CHECK(0, "%s builds", names[i]);
			continue;
		}
		CHECK_EQ_U(r->ndups, 6, "%s: 6 collisions", names[i]);
		check_ring(r, 200000, names[i]);
		kr_ring_free(r);
		vec_free(&v);
	}
}

/* Synthetic ring: hand-placed points (an oversized bucket, empty buckets, dups). */
static struct kr_ring *synthetic(uint32_t n, uint32_t cluster, uint32_t ndups)
{
	struct kr_ring *r = calloc(1, sizeof(*r));
	uint32_t i = 0, h = 7;

	r->version = KR_RING_V2;
	r->point_multiple = 1;
	r->nbackends = 700;
	r->hash = malloc(n * sizeof(uint32_t));
	r->backend = malloc(n * sizeof(uint16_t));
	r->dups = calloc(ndups + 1, sizeof(*r->dups));
	/* a few points low, a dense cluster at 0x30000000, a sparse tail, one at 0xffffffff */
	for (; i < 5; i++, h += 1000)
		r->hash[i] = h;
	for (h = 0x30000000; i < 5 + cluster; i++, h += 3)
		r->hash[i] = h;
	for (h = 0xa0000000; i < n - 1; i++, h += 0x100000)
		r->hash[i] = h;
	r->hash[n - 1] = 0xffffffff;
	for (i = 0; i < n; i++)
		r->backend[i] = (uint16_t)(i % 700);
	for (i = 0; i < ndups; i++)
		r->dups[i] = (struct kr_dup){ r->hash[2 + i * 3], 699 - (i % 700), 2 + i * 3 };
	r->npoints = n;
	r->ndups = ndups;
	r->digest = kr_ring_digest_points(r->hash, r->backend, n);
	return r;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Ring of exactly n distinct points (16 backends), uniform; with ntop > 0, the last ntop
 * points alone at the top of the hash space (a last bucket smaller than a window). */
static struct kr_ring *uniform(uint32_t n, uint32_t ntop)
{
	struct kr_ring *r = calloc(1, sizeof(*r));

	r->version = KR_RING_V2;
	r->point_multiple = 1;
	r->nbackends = 16;
	r->hash = malloc(n * sizeof(uint32_t));
	r->backend = malloc(n * sizeof(uint16_t));
	r->dups = calloc(1, sizeof(*r->dups));
	for (uint32_t i = 0; i < n - ntop; i++)
		r->hash[i] = ntop ? rnd() % 0xf0000000u : rnd();
	qsort(r->hash, n - ntop, sizeof(uint32_t), cmp_u32);
	for (uint32_t i = n - ntop; i < n; i++)
		r->hash[i] = 0xffffff00u + (i - (n - ntop)) * 8;
	for (uint32_t i = 1; i < n; i++)	/* distinct (a collision moves up by one) */
		if (r->hash[i] <= r->hash[i - 1])
			r->hash[i] = r->hash[i - 1] + 1;
	for (uint32_t i = 0; i < n; i++)
		r->backend[i] = (uint16_t)(i % 16);
	r->npoints = n;
	r->digest = kr_ring_digest_points(r->hash, r->backend, n);
	return r;
}

/* The last points chunk full (no padding) or nearly, a ring of one chunk and one point
 * more or less, a last bucket of a few points at the end of the last chunk: the windows at
 * the end of the image (userspace lets windows run across the chunks of its one buffer,
 * but not past the last: tests/bats/sanitizers.bats runs this under ASan). */
static void chunk_edge_rings(void)
{
	static const struct { uint32_t n, ntop; } sz[] = {
		{ 2047, 0 }, { 2048, 0 }, { 2049, 0 }, { 4078, 0 }, { 4096, 0 }, { 6144, 0 },
		{ 8190, 0 }, { 4096, 5 }, { 6144, 1 }, { 4078, 3 }, { 2048, 31 },
	};
	char name[64];

	for (size_t i = 0; i < sizeof(sz) / sizeof(sz[0]); i++) {
		struct kr_ring *r = uniform(sz[i].n, sz[i].ntop);

		snprintf(name, sizeof(name), "uniform %u points, %u at the top", sz[i].n,
			 sz[i].ntop);
		CHECK(r->hash[sz[i].n - 1] > r->hash[sz[i].n - 2], "%s: distinct hashes", name);
		check_ring(r, 20000, name);
		kr_ring_free(r);
	}
}

static void synthetic_rings(void)
{
	struct kr_ring *r = synthetic(3000, 2000, 40);
	struct kr_image img;

	check_ring(r, 300000, "synthetic clustered");
	if (!kr_image_encode(&img, r, NULL, NULL)) {
		CHECK(img.hdr->max_bucket >= 2000, "synthetic: an oversized bucket (%u points) is "
		      "searched completely", img.hdr->max_bucket);
		kr_image_free(&img);
	}
	kr_ring_free(r);
	r = synthetic(600, 590, 0);
	check_ring(r, 100000, "synthetic one big bucket");
	kr_ring_free(r);
}

/* Backend table with global ids, and images a reader must refuse. */
static void table_and_corruption(void)
{
	struct kr_backend_spec *b = many(800, 1);
	struct kr_ring *r = NULL;
	struct kr_image img;
	uint32_t *ids = malloc(800 * sizeof(*ids)), id, ok = 1, ii;

	for (uint32_t i = 0; i < 800; i++)
		ids[i] = 100000 + 3 * i;
	if (kr_ring_build(&r, b, 800, KR_RING_V2, 4, NULL) || kr_image_encode(&img, r, ids, NULL)) {
		CHECK(0, "800-backend ring encodes");
		goto out;
	}
	for (uint32_t i = 0; i < 800; i++)
		ok &= !kr_bt_get(&img, img.hdr, i, &id) && id == ids[i];
	CHECK(ok, "backend table: 800 ring-local -> global ids across 2 chunks");
	CHECK(kr_bt_get(&img, img.hdr, 800, &id) == -1, "backend table: index 800 refused");
	{
		uint32_t *idx = (uint32_t *)idx_entries(&img), nb = 1u << img.hdr->bucket_bits;
		struct kr_err err;

		idx[nb] = img.hdr->npoints + 1;
		CHECK(kr_image_check(img.buf, img.size, &err) == -1 && strstr(err.msg, "sentinel"),
		      "bad sentinel: refused (%s)", err.msg);
		CHECK(kr_image_lookup(&img, 0xffffffff, &ii) == -1,
		      "bad sentinel: lookup in the last bucket returns -1");
		idx[nb] = img.hdr->npoints;
		img.hdr->magic ^= 1;
		CHECK(kr_image_check(img.buf, img.size, &err) == -1 && strstr(err.msg, "magic"),
		      "bad magic: refused");
		img.hdr->magic ^= 1;
		img.hdr->nchunks = img.hdr->pt_chunk;	/* points missing */
		CHECK(kr_image_lookup(&img, 0x80000000, &ii) == -1,
		      "missing point chunks: lookup returns -1, not garbage");
		CHECK(kr_image_check(img.buf, img.size, &err) == -1, "missing chunks: refused");
	}
	kr_image_free(&img);
out:
	kr_ring_free(r);
	free(ids);
	free(b);
}

int main(void)
{
	real_rings();
	collide_rings();
	synthetic_rings();
	chunk_edge_rings();
	bench_rings();
	consume_ring();
	table_and_corruption();
	return tap_done();
}
