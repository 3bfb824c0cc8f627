// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Global backend ids (user/core/backend_ids.c), against kr_backends contents written by
 * hand: canonical homes (known answers from tests/bats/backend_ids_ref.py, an independent
 * implementation of the documented rule), the same identity keeps its id (the nearest
 * after its home when an older keyrouter left several), a changed forwarding takes the
 * address's id in place, a new server its home or the next id no entry, image or other
 * server uses (wrapping); exact_only; exhaustion; 2048 servers x 64 rings = 2048 ids; and
 * what adding one server to 2048 moves (only servers after it in canonical order whose id
 * it or a moved server took).
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

static uint32_t get(struct kr_ids *ids, struct kr_backend b, bool *in_place)
{
	uint32_t id = 0xdead;
	bool ip = false;

	if (kr_ids_get(ids, &b, false, &id, &ip))
		return UINT32_MAX;
	if (in_place)
		*in_place = ip;
	return id;
}

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (b) << 16 | (c) << 8 | (d))

static void test_home(void)
{
	struct kr_backend v6 = { .family = 6, .port = htons(443) }, a = be(IP(10, 0, 0, 1), 53, 1, 0),
			  b = be(IP(10, 0, 0, 2), 53, 1, 0);

	/* backend_ids_ref.py home ADDR [MAX] */
	CHECK_EQ_U(kr_ids_home(&a, 65536), 53816, "home 10.0.0.1:53 in 65536 ids");
	CHECK_EQ_U(kr_ids_home(&b, 65536), 18703, "home 10.0.0.2:53 in 65536 ids");
	CHECK_EQ_U(kr_ids_home(&a, 1024), 568, "home 10.0.0.1:53 in 1024 ids");
	CHECK_EQ_U(kr_ids_home(&a, 16), 8, "home 10.0.0.1:53 in 16 ids");
	v6.addr[0] = 0x20, v6.addr[1] = 0x01, v6.addr[2] = 0x0d, v6.addr[3] = 0xb8, v6.addr[15] = 1;
	CHECK_EQ_U(kr_ids_home(&v6, 65536), 33325, "home [2001:db8::1]:443 in 65536 ids");
	a.mac[5] = 9;
	a.ifindex = 7;
	a.state = KR_BACKEND_DOWN;
	CHECK_EQ_U(kr_ids_home(&a, 65536), 53816, "MAC, device and state are not hashed");
	CHECK(kr_ids_cmp(&a, &b) < 0 && kr_ids_cmp(&b, &a) > 0 &&
	      kr_ids_cmp(&v6, &a) > 0, "canonical order: family, then address");
	b = a;
	b.ifindex = 8;
	CHECK(kr_ids_cmp(&a, &b) < 0 && !kr_ids_cmp(&a, &a), "... then the device");
}

/* The canonical assignment of servers s[0..n) (sorted here): what apply's plan does on
 * empty maps. */
static int cmp(const void *a, const void *b)
{
	return kr_ids_cmp(a, b);
}

static void canonical(struct kr_backend *s, uint32_t n, uint32_t max, uint32_t *id)
{
	struct kr_ids ids;

	qsort(s, n, sizeof(*s), cmp);
	kr_ids_init(&ids, NULL, max);
	for (uint32_t i = 0; i < n; i++)
		id[i] = get(&ids, s[i], NULL);
	kr_ids_free(&ids);
}

/* Three servers with one home (backend_ids_ref.py collide 3): the lowest address takes it,
 * the others the next ids, in address order. */
static void test_collision(void)
{
	struct kr_backend s[3] = { be(IP(10, 66, 10, 147), 53, 0, 0), be(IP(10, 66, 5, 14), 53, 0, 0),
				   be(IP(10, 66, 9, 211), 53, 0, 0) };
	uint32_t id[3];

	CHECK(kr_ids_home(&s[0], 65536) == 29112 && kr_ids_home(&s[1], 65536) == 29112 &&
	      kr_ids_home(&s[2], 65536) == 29112, "collision: three homes 29112");
	canonical(s, 3, 65536, id);
	CHECK(s[0].addr[2] == 5 && id[0] == 29112 && s[1].addr[2] == 9 && id[1] == 29113 &&
	      s[2].addr[2] == 10 && id[2] == 29114,
	      "collision: 10.66.5.14 29112, 10.66.9.211 29113, 10.66.10.147 29114 (%u %u %u)",
	      id[0], id[1], id[2]);
}

/* 2048 servers (the seeds' scale) in 65536 ids; one more server, 1000 times over: who moves.
 * Only servers after the new one in canonical order, each because the new one or another
 * moved server took its id. */
static void test_add_moves(void)
{
	enum { N = 2048, TRIES = 1000 };
	struct kr_backend *s = calloc(N + 1, sizeof(*s)), *t = calloc(N + 1, sizeof(*s));
	uint32_t *id = calloc(N + 1, sizeof(*id)), *nid = calloc(N + 1, sizeof(*nid));
	uint32_t rnd = 12345, any = 0, most = 0, bad = 0, ncoll = 0;

	for (uint32_t i = 0; i < N; i++) {
		rnd = rnd * 1103515245u + 12345u;
		s[i] = be(IP(10, 1 + (rnd >> 24) % 8, i >> 8, i & 255), 53, 0, 0);
	}
	canonical(s, N, 65536, id);
	for (uint32_t i = 0; i < N; i++)
		ncoll += id[i] != kr_ids_home(&s[i], 65536);
	for (uint32_t k = 0; k < TRIES; k++) {
		uint32_t moved = 0, x = 0;

		memcpy(t, s, N * sizeof(*s));
		rnd = rnd * 1103515245u + 12345u;	/* anywhere in the order, no duplicate */
		t[N] = be(IP(10, 1 + (rnd >> 24) % 9, 8 + (rnd >> 8) % 248, rnd & 255), 53, 0, 0);
		canonical(t, N + 1, 65536, nid);
		/* t is s with the new server inserted, both sorted: walk them together */
		for (uint32_t i = 0, j = 0; j <= N; j++) {
			if (i < N && !kr_ids_cmp(&s[i], &t[j])) {
				if (id[i] != nid[j]) {
					bool taken = false;

					for (uint32_t q = 0; q <= N && !taken; q++)
						taken = nid[q] == id[i];
					moved++;
					bad += !x || !taken;
				}
				i++;
			} else {
				x = j + 1;	/* the new server's place: movers come after it */
			}
		}
		any += moved > 0;
		most = moved > most ? moved : most;
	}
	DIAG("2048 servers in 65536 ids: %u off their home; %u of %u single additions moved "
	     "another server, at most %u", ncoll, any, TRIES, most);
	CHECK(!bad, "adding a server moves only servers after it whose id got taken (%u bad)",
	      bad);
	CHECK(any > 0, "... and some did (else the check above tested nothing)");
	CHECK(any < TRIES / 10, "adding a server: most additions move nobody (%u of %u did)", any,
	      TRIES);
	free(s);
	free(t);
	free(id);
	free(nid);
}

int main(void)
{
	struct kr_backend cur[16] = {}, w;
	struct kr_ids ids;
	bool in_place;
	uint32_t id;

	test_home();
	test_collision();
	test_add_moves();
	/* 16 ids; homes (backend_ids_ref.py home ADDR 16): 10.0.0.1:53 8, 10.0.0.2:53 15,
	 * 10.0.0.1:54 14, 10.0.0.4:53 14, 10.0.1.9:53 5, 10.0.1.21:53 6, 10.0.1.36:53 3.
	 * kr_backends: 0 = A/mac1, 1 unused, 2 = B/mac2, 3 = A/mac1 again (per-ring ids of an
	 * older keyrouter), 4 = C/mac3, 5 marked unused */
	cur[0] = be(0x0a000001, 53, 1, 0);
	cur[2] = be(0x0a000002, 53, 2, 0);
	cur[3] = be(0x0a000001, 53, 1, 0);
	cur[4] = be(0x0a000003, 53, 3, 7);
	cur[5] = be(0x0a000009, 53, 9, 0);
	cur[5].state = KR_BACKEND_UNUSED;
	CHECK(!kr_ids_init(&ids, cur, 16), "init");
	kr_ids_reference(&ids, 6);	/* an image of a ring apply leaves alone uses id 6 */

	CHECK_EQ_U(get(&ids, be(0x0a000001, 53, 1, 0), &in_place), 0,
		   "same identity: of its ids 0 and 3, the nearest after its home 8 (0)");
	CHECK(!in_place, "... not in place");
	CHECK_EQ_U(get(&ids, be(0x0a000001, 53, 1, 0), NULL), 0, "again (another ring): same id");
	CHECK_EQ_U(get(&ids, be(0x0a000003, 53, 3, 7), NULL), 4, "ifindex is part of the identity");
	CHECK_EQ_U(get(&ids, be(0x0a000002, 53, 8, 0), &in_place), 2,
		   "B with another MAC: B's id, in place");
	CHECK(in_place, "... in place");
	CHECK_EQ_U(get(&ids, be(0x0a000002, 53, 8, 0), &in_place), 2,
		   "B with the new MAC again: same id");
	CHECK(!in_place, "... now an exact match");
	CHECK_EQ_U(get(&ids, be(0x0a000002, 53, 2, 0), NULL), 15,
		   "B with the old MAC too (another ring): a second id, its home 15");
	CHECK_EQ_U(get(&ids, be(0x0a000001, 54, 1, 0), NULL), 14,
		   "another port: a new server, its home 14");
	CHECK_EQ_U(get(&ids, be(0x0a000004, 53, 4, 0), NULL), 1,
		   "home 14 taken: 15 taken, wraps to 0 (an entry), takes 1");
	CHECK_EQ_U(get(&ids, be(0x0a000109, 53, 0, 0), NULL), 5,
		   "home 5: an unused entry's id is free");
	CHECK_EQ_U(get(&ids, be(0x0a000115, 53, 0, 0), NULL), 7,
		   "home 6, referenced by an image: the next, 7");
	CHECK_EQ_U(get(&ids, be(0x0a000124, 53, 0, 0), NULL), 8,
		   "home 3, an entry: 4 (entry), 5, 6, 7 taken: 8");
	w = be(0x0a000005, 53, 5, 0);
	CHECK(kr_ids_get(&ids, &w, true, &id, &in_place) == -ENOENT,
	      "exact_only: no id for a server without an exact entry");
	CHECK_EQ_U(ids.nclaimed, 9, "9 distinct ids given");
	for (uint32_t k = 0; k < 5; k++)
		CHECK(get(&ids, be(0x0b000000 + k, 53, 0, 0), NULL) < 16, "fills the rest (%u)", k);
	CHECK_EQ_U(get(&ids, be(0x0c000000, 53, 0, 0), NULL), UINT32_MAX,
		   "id space exhausted: -ENOSPC");
	kr_ids_free(&ids);
	/* A forwarding change must not move an id another server of the configuration keeps:
	 * callers give exact identities first (exact_only), then the rest. */
	memset(cur, 0, sizeof(cur));
	cur[0] = be(0x0a000001, 53, 1, 0);
	kr_ids_init(&ids, cur, 16);
	w = be(0x0a000001, 53, 1, 0);
	CHECK(!kr_ids_get(&ids, &w, true, &id, &in_place) && id == 0, "pass 1: exact A/mac1");
	CHECK_EQ_U(get(&ids, be(0x0a000001, 53, 9, 0), &in_place), 8,
		   "pass 2: A/mac9 gets a new id (its home 8), A/mac1 keeps 0");
	CHECK(!in_place, "... not in place");
	kr_ids_free(&ids);

	/* pins: a live entry of the same address changes in place; a taken, referenced or
	 * out-of-range id is refused; a free one is a new entry the server then has */
	memset(cur, 0, sizeof(cur));
	cur[3] = be(0x0a000001, 53, 1, 0);
	kr_ids_init(&ids, cur, 16);
	kr_ids_reference(&ids, 5);
	w = be(0x0a000001, 53, 9, 0);
	CHECK(!kr_ids_pin(&ids, &w, 3, &in_place) && in_place,
	      "pin: A/mac9 onto A/mac1's entry 3: in place");
	w = be(0x0a000002, 53, 2, 0);
	CHECK(kr_ids_pin(&ids, &w, 3, &in_place) == -EBUSY, "pin: B onto A's id: -EBUSY");
	CHECK(kr_ids_pin(&ids, &w, 5, &in_place) == -EBUSY,
	      "pin: B onto an id an image references: -EBUSY");
	CHECK(kr_ids_pin(&ids, &w, 16, &in_place) == -ERANGE, "pin: beyond max: -ERANGE");
	CHECK(!kr_ids_pin(&ids, &w, 6, &in_place) && !in_place, "pin: B onto free 6");
	CHECK_EQ_U(get(&ids, w, NULL), 6, "... B (another ring) has 6");
	CHECK_EQ_U(get(&ids, be(0x0a000001, 53, 9, 0), NULL), 3, "... A/mac9 has 3");
	kr_ids_free(&ids);

	/* the seeds' scale: 2048 servers in 64 rings are 2048 ids */
	{
		uint32_t max = 65536, bad = 0, *first = calloc(2048, sizeof(*first));

		kr_ids_init(&ids, NULL, max);
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
		kr_ids_free(&ids);
		free(first);
	}
	return tap_done();
}
