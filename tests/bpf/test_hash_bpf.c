// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The key hashes in the kernel = in userspace: tests/bpf/progs/kr_hash_bench.bpf.c
 * (include/kr_crc32.h and include/kr_siphash.h compiled for BPF, accepted by the verifier)
 * hashes random keys of every length 0..255 through BPF_PROG_TEST_RUN; CRC-32 must equal
 * the engine's user/core/crc32.c and SipHash-1-3 the userspace build of kr_siphash.h, for
 * several secrets.  The userspace build of kr_crc32.h (slicing-by-8) must equal
 * user/core/crc32.c too, at every buffer alignment, and clamp lengths above 255.
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tap.h"
#include "kr_siphash.h"
#include "kr_crc32.h"
#include "crc32.h"
#include "kr_hash_bench.skel.h"

static uint64_t rng = 0xabcdef;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int main(void)
{
	struct kr_hash_bench_bpf *skel = kr_hash_bench_bpf__open_and_load();
	uint8_t pkt[320];
	int fd, bad_crc = 0, bad_sip = 0, runs = 0;

	if (!skel) {
		printf("not ok 1 - load kr_hash_bench.bpf.o (CRC-32 and SipHash-1-3 for BPF): %s\n",
		       strerror(errno));
		printf("1..1\n");
		return 1;
	}
	CHECK(1, "kr_crc32.h and kr_siphash.h pass the verifier (keys up to 255 bytes)");
	fd = bpf_program__fd(skel->progs.kr_hash_bench);
	for (int round = 0; round < 4; round++) {
		struct kr_hash_secret k = { rnd(), rnd() };

		skel->bss->kr_hb_secret = k;
		for (uint32_t len = 0; len <= 255; len++) {
			for (size_t i = 0; i < sizeof(pkt); i++)
				pkt[i] = (uint8_t)rnd();
			skel->bss->kr_hb_len = len;
			for (uint32_t mode = 1; mode <= 2; mode++) {
				LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt,
					    .data_size_in = sizeof(pkt), .repeat = 1);

				skel->bss->kr_hb_mode = mode;
				if (bpf_prog_test_run_opts(fd, &o) || o.retval != 1 /* XDP_DROP */) {
					CHECK(0, "test_run len %u: %s retval %u", len, strerror(errno),
					      o.retval);
					goto out;
				}
				runs++;
				if (mode == 1)
					bad_crc += skel->bss->kr_hb_result != kr_crc32(pkt, len);
				else
					bad_sip += skel->bss->kr_hb_result != kr_siphash13(pkt, len, &k);
			}
		}
	}
	CHECK(bad_crc == 0, "CRC-32 in BPF = user/core/crc32.c for every length 0..255 (%d differ)",
	      bad_crc);
	bad_crc = 0;
	for (uint32_t off = 0; off < 8; off++)
		for (uint32_t len = 0; len <= 255; len++)
			bad_crc += kr_crc32_key(pkt + off, len) != kr_crc32(pkt + off, len);
	CHECK(bad_crc == 0, "kr_crc32.h in userspace = user/core/crc32.c, lengths 0..255, offsets 0..7 "
	      "(%d differ)", bad_crc);
	CHECK(kr_crc32_key(pkt, 300) == kr_crc32(pkt, 255) &&
	      kr_crc32_key(pkt, 0xffffffffu) == kr_crc32(pkt, 255),
	      "kr_crc32_key clamps lengths above 255 to 255 bytes");
	CHECK(kr_crc32_key((const uint8_t *)"123456789", 9) == 0xcbf43926u,
	      "kr_crc32_key(\"123456789\") = 0xcbf43926 (the CRC-32 check value)");
	CHECK(bad_sip == 0, "SipHash-1-3 in BPF = userspace for every length 0..255, 4 secrets "
	      "(%d differ of %d runs)", bad_sip, runs / 2);
out:
	kr_hash_bench_bpf__destroy(skel);
	return tap_done();
}
