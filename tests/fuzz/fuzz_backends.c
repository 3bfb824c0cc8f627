// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Backends-file parser (user/core/backends_file.c) fuzzer.
 *  - any bytes (embedded NULs, CRs, no final newline, huge lines) -> kr_backends_read:
 *    never crashes, success or an error message naming the file;
 *  - on success: 1..KR_MAX_BACKENDS backends, no duplicate addresses; and when the ring is
 *    small, it is built (v1 and v2), encoded into the kernel image, and the bucket-index
 *    lookup (include/kr_lookup.h, the BPF program's code) must give the same ring index as
 *    the plain binary search for hashes around every point and some fixed ones.
 */
#include "fuzz.h"
#include "backends_file.h"
#include "continuum.h"
#include "image.h"

#define BUILD_MAX_POINTS 20000u

static void check_lookup(const struct kr_ring *r, const struct kr_image *img, uint32_t h)
{
	uint32_t ii, want = kr_ring_lower_bound(r, h);

	FUZZ_ASSERT(kr_image_lookup(img, h, &ii) == 0, "image lookup of %08x failed", h);
	FUZZ_ASSERT(kr_image_ring_index(img, ii) == want, "hash %08x: image -> ring index %u, "
		    "binary search %u", h, kr_image_ring_index(img, ii), want);
}

static void build_and_check(const struct kr_backend_spec *b, uint32_t n, uint32_t version,
			    uint32_t pm)
{
	static const uint32_t fixed[] = { 0, 1, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff };
	struct kr_image img = { 0 };
	struct kr_ring *r = NULL;
	struct kr_err err;

	if (kr_ring_build(&r, b, n, version, pm, &err)) {
		/* every backend drained: the only legitimate failure here */
		FUZZ_ASSERT(strstr(err.msg, "no point") || strstr(err.msg, "weight"), "%s", err.msg);
		return;
	}
	FUZZ_ASSERT(kr_image_encode(&img, r, NULL, &err) == 0, "encode: %s", err.msg);
	FUZZ_ASSERT(kr_image_check(img.buf, img.size, &err) == 0, "check: %s", err.msg);
	for (uint32_t i = 0; i < r->npoints; i++) {
		FUZZ_ASSERT(i == 0 || r->hash[i - 1] < r->hash[i], "ring not strictly ascending at %u", i);
		check_lookup(r, &img, r->hash[i]);
		check_lookup(r, &img, r->hash[i] + 1);
		check_lookup(r, &img, r->hash[i] - 1);
	}
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		check_lookup(r, &img, fixed[i]);
	kr_image_free(&img);
	kr_ring_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kr_backend_spec *b = NULL;
	struct kr_err err;
	uint64_t weights = 0;
	uint32_t n = 0;
	FILE *f;

	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;	/* size 0 */
	err.msg[0] = 0;
	if (kr_backends_read(f, "fuzz.txt", &b, &n, &err)) {
		FUZZ_ASSERT(!strncmp(err.msg, "fuzz.txt", 8), "error does not name the file: '%s'", err.msg);
		fclose(f);
		return 0;
	}
	fclose(f);
	FUZZ_ASSERT(n >= 1 && n <= KR_MAX_BACKENDS, "n = %u", n);
	for (uint32_t i = 0; i < n; i++) {
		FUZZ_ASSERT(b[i].addr.family == 4 || b[i].addr.family == 6, "family");
		for (uint32_t j = i + 1; j < n && j < i + 64; j++)
			FUZZ_ASSERT(kr_sockaddr_cmp(&b[i].addr, &b[j].addr), "duplicate %u %u", i, j);
		weights += b[i].weight;
	}
	if (weights * KR_V1_POINT_MULTIPLE <= BUILD_MAX_POINTS)
		build_and_check(b, n, KR_RING_V1, 0);
	if (weights * (1 + size % 7) <= BUILD_MAX_POINTS)
		build_and_check(b, n, KR_RING_V2, 1 + size % 7);
	free(b);
	return 0;
}
