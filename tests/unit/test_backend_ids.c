// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Global backend ids (user/core/backend_ids.c), against kr_backends contents written by
 * hand: the same identity keeps its id (the lowest when an older keyrouter left several),
 * a changed forwarding takes the address's id in place, a new server the lowest id no
 * entry, image or other server uses; exact_only; exhaustion; 2048 servers x 64 rings = 2048
 * ids.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "backend_ids.h"

static struct kr_backend be(uint32_t ip, uint16_t port, uint8_t mac, uint32_t ifindex)
{
	struct kr_backend b = { .family = 4, .port = htons(port), .ifindex = ifindex,
				.mac = { 2, 0, 0, 0, 0, mac } };
	uint32_t n = htonl(ip);

	memcpy(b.addr, &n, 4);
	return b;
}

static uint32_t get(struct kr_ops_ids *ids, struct kr_backend b, bool *in_place)
{
	uint32_t id = 0xdead;
	bool ip = false;

	if (kr_ops_ids_get(ids, &b, false, &id, &ip))
		return UINT32_MAX;
	if (in_place)
		*in_place = ip;
	return id;
}

int main(void)
{
	struct kr_backend cur[16] = {}, w;
	struct kr_ops_ids ids;
	bool in_place;
	uint32_t id;

	/* kr_backends: 0 = A/mac1, 1 unused, 2 = B/mac2, 3 = A/mac1 again (per-ring ids of an
	 * older keyrouter), 4 = C/mac3, 5 marked unused */
	cur[0] = be(0x0a000001, 53, 1, 0);
	cur[2] = be(0x0a000002, 53, 2, 0);
	cur[3] = be(0x0a000001, 53, 1, 0);
	cur[4] = be(0x0a000003, 53, 3, 7);
	cur[5] = be(0x0a000009, 53, 9, 0);
	cur[5].state = KR_BACKEND_UNUSED;
	CHECK(!kr_ops_ids_init(&ids, cur, 16), "init");
	kr_ops_ids_reference(&ids, 6);	/* an image of a ring apply leaves alone uses id 6 */

	CHECK_EQ_U(get(&ids, be(0x0a000001, 53, 1, 0), &in_place), 0,
		   "same identity: the lowest of its ids");
	CHECK(!in_place, "... not in place");
	CHECK_EQ_U(get(&ids, be(0x0a000001, 53, 1, 0), NULL), 0, "again (another ring): same id");
	CHECK_EQ_U(get(&ids, be(0x0a000003, 53, 3, 7), NULL), 4, "ifindex is part of the identity");
	CHECK_EQ_U(get(&ids, be(0x0a000002, 53, 8, 0), &in_place), 2,
		   "B with another MAC: B's id, in place");
	CHECK(in_place, "... in place");
	CHECK_EQ_U(get(&ids, be(0x0a000002, 53, 8, 0), &in_place), 2,
		   "B with the new MAC again: same id");
	CHECK(!in_place, "... now an exact match");
	CHECK_EQ_U(get(&ids, be(0x0a000002, 53, 2, 0), NULL), 1,
		   "B with the old MAC too (another ring): a second id, the lowest free");
	CHECK_EQ_U(get(&ids, be(0x0a000001, 54, 1, 0), NULL), 5,
		   "another port: a new server; an unused entry's id is free");
	CHECK_EQ_U(get(&ids, be(0x0a000004, 53, 4, 0), NULL), 7,
		   "next new server: skips id 3 (an entry) and 6 (referenced by an image)");
	w = be(0x0a000005, 53, 5, 0);
	CHECK(kr_ops_ids_get(&ids, &w, true, &id, &in_place) == -ENOENT,
	      "exact_only: no id for a server without an exact entry");
	CHECK_EQ_U(ids.nclaimed, 6, "6 distinct ids given");
	for (uint32_t k = 0; k < 8; k++)
		get(&ids, be(0x0b000000 + k, 53, 0, 0), NULL);
	CHECK_EQ_U(get(&ids, be(0x0c000000, 53, 0, 0), NULL), UINT32_MAX,
		   "id space exhausted: -ENOSPC");
	kr_ops_ids_free(&ids);

	/* A forwarding change must not move an id another server of the configuration keeps:
	 * callers give exact identities first (exact_only), then the rest. */
	memset(cur, 0, sizeof(cur));
	cur[0] = be(0x0a000001, 53, 1, 0);
	kr_ops_ids_init(&ids, cur, 16);
	w = be(0x0a000001, 53, 1, 0);
	CHECK(!kr_ops_ids_get(&ids, &w, true, &id, &in_place) && id == 0, "pass 1: exact A/mac1");
	CHECK_EQ_U(get(&ids, be(0x0a000001, 53, 9, 0), &in_place), 1,
		   "pass 2: A/mac9 gets a new id, A/mac1 keeps 0");
	CHECK(!in_place, "... not in place");
	kr_ops_ids_free(&ids);

	/* the seeds' scale: 2048 servers in 64 rings are 2048 ids */
	{
		uint32_t max = 65536, bad = 0, *first = calloc(2048, sizeof(*first));

		kr_ops_ids_init(&ids, NULL, max);
		for (uint32_t r = 0; r < 64; r++)
			for (uint32_t j = 0; j < 2048; j++) {
				if ((j * 2654435761u + r * 40503u) % 16 == 0)
					continue;	/* ring r lacks server j */
				id = get(&ids, be(0x0a000000 + j, 443, j & 255, 0), NULL);
				if (!first[j])
					first[j] = id + 1;
				bad += first[j] != id + 1;
			}
		CHECK(!bad && ids.nclaimed == 2048, "64 rings over 2048 servers: %u ids (%u "
		      "servers with two)", ids.nclaimed, bad);
		kr_ops_ids_free(&ids);
		free(first);
	}
	return tap_done();
}
