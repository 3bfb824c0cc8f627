// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ring stage in the real kernel (tests/bpf/progs/kr_ring_test.bpf.c through BPF_PROG_TEST_RUN)
 * against userspace: the shared kr_image_find() on the same encoded image and a plain lower
 * bound over the points; the failover walk, all-down and the walk limit; the slot choice
 * under migration fractions; publishing (atomic replace, unpublish, a ring too big for the
 * kernel leaves the published one untouched); and the kernel memory of published images
 * as the kernel itself reports it (fdinfo memlock, = bpftool map show).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tap.h"
#include "ring_fixture.h"
#include "kr_ring_test_kern_user.h"
#include "publish.h"
#include "kr_ring_test.skel.h"

#define NB_IDS 8192	/* kr_backends entries in this test (the map is resized before load) */

static struct kr_ring_test_bpf *skel;
static int prog_fd, rings_fd, ctl_fd, stats_fd, backends_fd, trace_fd;
static uint64_t seed = 0x5eed;

struct ring {
	uint32_t n, nb;
	uint32_t *hash;
	uint16_t *backend;
	uint32_t bt[NB_IDS];
	struct fx_img im;
};

static int run_sub(uint32_t ring_id, uint32_t subset, uint32_t hash, struct kr_route *r)
{
	struct kr_ring_test_pkt in = { .ring_id = ring_id, .key_hash = hash,
				       .subset_id = subset }, out;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &in, .data_size_in = sizeof(in),
		    .data_out = &out, .data_size_out = sizeof(out), .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &o) || o.retval != XDP_TX) {
		fprintf(stderr, "test_run failed: %s retval %u\n", strerror(errno), o.retval);
		exit(1);
	}
	*r = out.route;
	return out.reason;
}

static int run(uint32_t ring_id, uint32_t hash, struct kr_route *r)
{
	return run_sub(ring_id, 0, hash, r);
}

static void set_state(uint32_t id, uint8_t state)
{
	struct kr_backend b = { .family = 4, .state = state };

	b.addr[0] = 10;
	b.addr[3] = id & 0xff;
	if (bpf_map_update_elem(backends_fd, &id, &b, BPF_ANY)) {
		perror("backend update");
		exit(1);
	}
}

static void ring_free(struct ring *r)
{
	free(r->hash);
	free(r->backend);
	free(r->im.buf);
	memset(r, 0, sizeof(*r));
}

/*
 * A ring of n points over nb backends (global ids id0 + i): random hashes (or all in
 * [0, span) for dense rings with oversized buckets), with `ndup` crafted collisions kept as
 * duplicates right after their winner (other backend, same hash).
 */
static void ring_make(struct ring *r, uint32_t n, uint32_t nb, uint32_t id0, uint32_t ndup,
		      uint64_t span)
{
	uint32_t *tmp = malloc(n * sizeof(*tmp)), i, j;

	memset(r, 0, sizeof(*r));
	r->n = n;
	r->nb = nb;
	r->hash = malloc(n * sizeof(*r->hash));
	r->backend = malloc(n * sizeof(*r->backend));
	for (i = 0; i < n; i++)
		r->hash[i] = span ? fx_rand(&seed) % span : (uint32_t)fx_rand(&seed);
	fx_radix_sort(r->hash, tmp, n);
	for (i = 0; i < n; i++)
		r->backend[i] = fx_rand(&seed) % nb;
	/* crafted collisions: point j+1 takes point j's hash, another backend */
	for (i = 0; i < ndup && n > 2; i++) {
		j = fx_rand(&seed) % (n - 1);
		r->hash[j + 1] = r->hash[j];
		if (r->backend[j + 1] == r->backend[j])
			r->backend[j + 1] = (r->backend[j] + 1) % nb;
	}
	/* keep the order strictly "ascending with runs": fix any later point below */
	for (i = 1; i < n; i++)
		if (r->hash[i] < r->hash[i - 1])
			r->hash[i] = r->hash[i - 1];
	for (i = 0; i < nb; i++)
		r->bt[i] = id0 + i;
	free(tmp);
	if (fx_encode(&r->im, r->hash, r->backend, n, r->bt, nb)) {
		fprintf(stderr, "encode failed\n");
		exit(1);
	}
}

static void publish(const struct ring *r, uint32_t ring_id, uint32_t slot)
{
	struct kr_err err = { "" };

	if (kr_publish(rings_fd, ring_id, slot, r->im.buf, r->im.nchunks, &err)) {
		fprintf(stderr, "publish: %s\n", err.msg);
		exit(1);
	}
}

static void set_ctl(uint32_t ring_id, uint64_t ctl)
{
	struct kr_err err = { "" };

	if (kr_ctl_write(ctl_fd, ring_id, ctl, &err)) {
		fprintf(stderr, "ctl: %s\n", err.msg);
		exit(1);
	}
}

static void all_states(const struct ring *r, uint8_t st)
{
	for (uint32_t i = 0; i < r->nb; i++)
		set_state(r->bt[i], st);
}

static struct kr_slot_stats slot_stats(uint32_t ring_id, uint32_t slot)
{
	int ncpu = libbpf_num_possible_cpus();
	struct kr_slot_stats *v = calloc(ncpu, sizeof(*v)), sum = { 0 };
	uint32_t key = ring_id * 2 + slot;

	if (!bpf_map_lookup_elem(stats_fd, &key, v))
		for (int c = 0; c < ncpu; c++) {
			sum.packets += v[c].packets;
			sum.failover += v[c].failover;
			sum.no_ring += v[c].no_ring;
			sum.bad_image += v[c].bad_image;
			sum.all_down += v[c].all_down;
			sum.walk_limit += v[c].walk_limit;
		}
	free(v);
	return sum;
}

/* Keys for a ring: random ones, then crafted boundary keys. */
static uint32_t key_at(const struct ring *r, uint32_t k, uint32_t nrand)
{
	const struct kr_image_hdr *h = (const void *)r->im.buf;
	uint32_t j, sh = 32 - h->bucket_bits;

	if (k < nrand)
		return (uint32_t)fx_rand(&seed);
	k -= nrand;
	switch (k % 8) {
	case 0: return 0;
	case 1: return 0xffffffffu;
	case 2: return r->hash[r->n - 1] + 1;	/* past the last point: wraps */
	case 3: j = fx_rand(&seed) % r->n; return r->hash[j];
	case 4: j = fx_rand(&seed) % r->n; return r->hash[j] - 1;
	case 5: j = fx_rand(&seed) % r->n; return r->hash[j] + 1;
	case 6: j = fx_rand(&seed) % (1u << h->bucket_bits); return j << sh;	/* bucket start */
	default: j = fx_rand(&seed) % (1u << h->bucket_bits); return (j << sh) - 1;
	}
}

/* Kernel == kr_image_find() == plain lower bound, all backends up. */
static void test_parity(const char *name, uint32_t n, uint32_t nb, uint32_t ndup, uint64_t span,
			uint32_t nrand, uint32_t ncraft)
{
	uint32_t bad_k = 0, bad_u = 0, bad_b = 0, k;
	struct ring r;

	ring_make(&r, n, nb, 1, ndup, span);
	all_states(&r, KR_BACKEND_UP);
	publish(&r, 1, 0);
	set_ctl(1, kr_ctl_make(0, 0, KR_RING_IDLE));
	for (k = 0; k < nrand + ncraft; k++) {
		uint32_t key = key_at(&r, k, nrand), exp = fx_plain_lb(r.hash, n, key), u, ub;
		struct kr_route rt;
		int reason = run(1, key, &rt);

		if (kr_image_find(&r.im, (void *)r.im.buf, key, &u, &ub) || u != exp)
			bad_u++;
		if (reason || rt.first_index != exp || rt.image_index != exp || rt.walk) {
			if (bad_k++ < 3)
				DIAG("%s: key %08x: kernel reason %d index %u (walk %u), expected %u",
				     name, key, reason, rt.first_index, rt.walk, exp);
		} else if (rt.backend_id != r.bt[r.backend[exp]] || rt.slot != 0 || rt.key_hash != key) {
			bad_b++;
		}
	}
	const struct kr_image_hdr *h = (const void *)r.im.buf;
	DIAG("%s: %u points (%u kept duplicates), %u buckets, largest bucket %u, %u keys",
	     name, n, h->ndups, 1u << h->bucket_bits, h->max_bucket, nrand + ncraft);
	CHECK_EQ_U(bad_u, 0, "%s: userspace kr_image_find == plain lower bound", name);
	CHECK_EQ_U(bad_k, 0, "%s: kernel point == plain lower bound (%u random + %u boundary keys)",
		   name, nrand, ncraft);
	CHECK_EQ_U(bad_b, 0, "%s: kernel backend id, slot and hash as expected", name);
	ring_free(&r);
}

/* Expected point after skipping backend `down` (all others up): first image point at or
 * after the lower bound, wrapping, whose backend is not `down` (= ring built without it). */
static uint32_t skip_expect(const struct ring *r, uint32_t first, uint16_t down)
{
	uint32_t i = first;

	while (r->backend[i] == down)
		i = (i + 1) % r->n;
	return i;
}

static void test_failover(void)
{
	uint32_t nkeys = 20000, moved = 0, wrong = 0, wrong_stay = 0, down_keys = 0, k;
	struct kr_slot_stats before, after;
	const uint16_t down = 3;
	struct ring r;

	ring_make(&r, 8 * 160, 8, 100, 40, 0);
	all_states(&r, KR_BACKEND_UP);
	publish(&r, 2, 0);
	set_ctl(2, kr_ctl_make(0, 0, KR_RING_IDLE));
	set_state(r.bt[down], KR_BACKEND_DOWN);
	before = slot_stats(2, 0);
	for (k = 0; k < nkeys; k++) {
		uint32_t key = key_at(&r, k, nkeys / 2), first = fx_plain_lb(r.hash, r.n, key);
		uint32_t exp = skip_expect(&r, first, down);
		struct kr_route rt;
		int reason = run(2, key, &rt);

		if (r.backend[first] == down) {
			down_keys++;
			if (!reason && rt.image_index == exp && rt.first_index == first &&
			    rt.backend_id == r.bt[r.backend[exp]] && rt.walk == exp - first + (exp < first ? r.n : 0))
				moved++;
			else if (wrong++ < 3)
				DIAG("failover: key %08x reason %d point %u (walk %u), expected %u",
				     key, reason, rt.image_index, rt.walk, exp);
		} else if (reason || rt.image_index != first || rt.walk ||
			   rt.backend_id != r.bt[r.backend[first]]) {
			wrong_stay++;
		}
	}
	after = slot_stats(2, 0);
	DIAG("failover: backend %u down: %u of %u keys were its, all moved to the next point",
	     down, down_keys, nkeys);
	CHECK(down_keys > 0 && moved == down_keys,
	      "failover: exactly the down backend's keys move, each to the next up point (%u/%u)",
	      moved, down_keys);
	CHECK_EQ_U(wrong_stay, 0, "failover: keys of up backends do not move");
	CHECK_EQ_U(after.failover - before.failover, down_keys, "failover: slot counter failover");
	CHECK_EQ_U(after.packets - before.packets, nkeys, "failover: slot counter packets");

	/* all down: a reason and a counter, never a backend */
	all_states(&r, KR_BACKEND_DOWN);
	before = slot_stats(2, 0);
	uint32_t alldown = 0;
	for (k = 0; k < 1000; k++) {
		struct kr_route rt;

		alldown += run(2, (uint32_t)fx_rand(&seed), &rt) == KR_ROUTE_ALL_DOWN;
	}
	after = slot_stats(2, 0);
	CHECK_EQ_U(alldown, 1000, "all down (%u points): reason KR_ROUTE_ALL_DOWN", r.n);
	CHECK_EQ_U(after.all_down - before.all_down, 1000, "all down: slot counter all_down");
	CHECK_EQ_U(after.packets - before.packets, 0, "all down: nothing counted as routed");
	/* drained backends are skipped like down ones */
	all_states(&r, KR_BACKEND_DRAIN);
	set_state(r.bt[5], KR_BACKEND_UP);
	uint32_t to5 = 0;
	for (k = 0; k < 1000; k++) {
		struct kr_route rt;

		to5 += run(2, (uint32_t)fx_rand(&seed), &rt) == 0 && rt.backend_id == r.bt[5];
	}
	CHECK_EQ_U(to5, 1000, "7 of 8 drained: every key goes to the one up backend");
	ring_free(&r);

	/* a small ring (<= KR_MAX_WALK points) all down: the walk covers it */
	ring_make(&r, 20, 2, 300, 0, 0);
	all_states(&r, KR_BACKEND_DOWN);
	publish(&r, 2, 0);
	struct kr_route rt;
	CHECK_EQ_U(run(2, 12345, &rt), KR_ROUTE_ALL_DOWN, "all down, 20-point ring: KR_ROUTE_ALL_DOWN");
	ring_free(&r);

	/* walk limit: 100 backends, one point each; 80 consecutive points down, others up */
	ring_make(&r, 100, 100, 400, 0, 0);
	for (k = 0; k < 100; k++) {
		r.backend[k] = k;
	}
	free(r.im.buf);
	fx_encode(&r.im, r.hash, r.backend, r.n, r.bt, r.nb);
	all_states(&r, KR_BACKEND_UP);
	for (k = 10; k < 90; k++)
		set_state(r.bt[k], KR_BACKEND_DOWN);
	publish(&r, 2, 0);
	before = slot_stats(2, 0);
	int reason = run(2, r.hash[10], &rt);
	after = slot_stats(2, 0);
	CHECK_EQ_U(reason, KR_ROUTE_WALK_LIMIT, "80 consecutive points down: KR_ROUTE_WALK_LIMIT");
	CHECK_EQ_U(after.walk_limit - before.walk_limit, 1, "walk limit: slot counter walk_limit");
	reason = run(2, r.hash[30], &rt);
	CHECK(reason == 0 && rt.image_index == 90 && rt.walk == 60,
	      "60 points down ahead: routed to point 90 after walking 60 (reason %d point %u walk %u)",
	      reason, rt.image_index, rt.walk);
	ring_free(&r);
}

/* Reference for a subset: the ring built from the member points alone (each run of equal
 * hashes keeps its first member: the tie order of the full ring), looked up plainly. */
static uint32_t subset_ring_answer(const struct ring *r, const uint8_t *in, uint32_t key)
{
	uint32_t first = UINT32_MAX, lo = UINT32_MAX, i;

	for (i = 0; i < r->n; i++) {
		if (!in[r->backend[i]] || (i && lo != UINT32_MAX && r->hash[i] == r->hash[lo]))
			continue;
		if (first == UINT32_MAX)
			first = i;
		lo = i;
		if (r->hash[i] >= key)
			return r->bt[r->backend[i]];
	}
	return r->bt[r->backend[first]];	/* wrapped (at least one member) */
}

/* Image points from the key's point to the first member point (0: the key's own). */
static uint32_t subset_walk_len(const struct ring *r, const uint8_t *in, uint32_t first)
{
	uint32_t d = 0;

	while (!in[r->backend[(first + d) % r->n]])
		d++;
	return d;
}

static void subset_members(const struct ring *r, uint32_t subset, const uint8_t *in, bool add)
{
	int fd = bpf_map__fd(skel->maps.kr_subset_members);
	uint32_t one = 1;

	for (uint32_t b = 0; b < r->nb; b++) {
		struct kr_subset_key k = { .subset_id = subset, .backend_id = r->bt[b] };

		if (!in[b])
			continue;
		if (add ? bpf_map_update_elem(fd, &k, &one, BPF_ANY) : bpf_map_delete_elem(fd, &k)) {
			perror("kr_subset_members");
			exit(1);
		}
	}
}

/*
 * Subsets on one shared ring: for many random subsets (1 backend .. all of them) and keys
 * (random, and at/around point hashes, many of them collisions), the kernel answers exactly
 * what the ring built from the subset alone answers -- or, when that answer lies more
 * than KR_MAX_WALK image points away, says WALK_LIMIT (counted), never another backend.
 * A subset without members is ALL_DOWN; a down member is skipped like any down backend.
 */
static void test_subsets(void)
{
	uint32_t nsub = 48, nkeys = 4000, k, t, wrong = 0, limit_bad = 0, nlimit = 0, nok = 0;
	uint32_t ncoll = 0, down_bad = 0, nlimit_down = 0;
	struct kr_slot_stats before, after;
	uint8_t in[100];
	struct kr_route rt;
	struct ring r;
	int reason;

	ring_make(&r, 16000, 100, 3000, 4000, 0);
	all_states(&r, KR_BACKEND_UP);
	publish(&r, 6, 0);
	set_ctl(6, kr_ctl_make(0, 0, KR_RING_IDLE));
	for (k = 1; k < r.n; k++)
		ncoll += r.hash[k] == r.hash[k - 1];
	before = slot_stats(6, 0);
	for (t = 0; t < nsub; t++) {
		/* sizes spread over 1..100 backends: small ones hit the walk bound */
		uint32_t p = t < 8 ? 1 + t : (uint32_t)(fx_rand(&seed) % 100) + 1, cnt = 0;

		for (uint32_t b = 0; b < r.nb; b++)
			cnt += in[b] = fx_rand(&seed) % 100 < p;
		if (!cnt)
			in[fx_rand(&seed) % r.nb] = 1;
		subset_members(&r, t + 1, in, true);
		for (k = 0; k < nkeys; k++) {
			uint32_t key = key_at(&r, k, nkeys / 2), first = fx_plain_lb(r.hash, r.n, key);
			uint32_t d = subset_walk_len(&r, in, first);

			reason = run_sub(6, t + 1, key, &rt);
			if (d > KR_MAX_WALK) {
				nlimit++;
				limit_bad += reason != KR_ROUTE_WALK_LIMIT;
			} else if (reason != KR_ROUTE_OK ||
				   rt.backend_id != subset_ring_answer(&r, in, key) ||
				   rt.image_index != (first + d) % r.n) {
				if (wrong++ < 3)
					DIAG("subset %u key %08x: reason %d backend %u, expected %u",
					     t + 1, key, reason, rt.backend_id,
					     subset_ring_answer(&r, in, key));
			} else {
				nok++;
			}
		}
		/* a member down: the answer of the subset ring without it */
		for (uint32_t b = 0; b < r.nb && t % 6 == 5; b++) {
			if (!in[b])
				continue;
			set_state(r.bt[b], KR_BACKEND_DOWN);
			in[b] = 0;
			for (k = 0; k < nkeys / 4 && cnt > 1; k++) {
				uint32_t key = key_at(&r, k, nkeys / 8);
				uint32_t d = subset_walk_len(&r, in, fx_plain_lb(r.hash, r.n, key));

				reason = run_sub(6, t + 1, key, &rt);
				nlimit_down += d > KR_MAX_WALK;
				if (d <= KR_MAX_WALK ? reason != KR_ROUTE_OK ||
				    rt.backend_id != subset_ring_answer(&r, in, key) :
				    reason != KR_ROUTE_WALK_LIMIT)
					down_bad++;
			}
			in[b] = 1;
			set_state(r.bt[b], KR_BACKEND_UP);
			break;
		}
		subset_members(&r, t + 1, in, false);
	}
	after = slot_stats(6, 0);
	DIAG("subsets: %u subsets x %u keys on a ring of %u points (%u colliding), %u routed, "
	     "%u past the walk bound", nsub, nkeys, r.n, ncoll, nok, nlimit);
	CHECK(ncoll > 1000 && nok > nsub * nkeys / 2 && nlimit > 0,
	      "subsets: the keys cover collisions, routed keys and walks past the bound");
	CHECK_EQ_U(wrong, 0, "subsets: kernel == ring built from the subset alone (backend, point)");
	CHECK_EQ_U(limit_bad, 0, "subsets: answer beyond KR_MAX_WALK points -> WALK_LIMIT, no misroute");
	CHECK_EQ_U(after.walk_limit - before.walk_limit, nlimit + nlimit_down,
		   "subsets: walk bound counted per packet");
	CHECK_EQ_U(down_bad, 0, "subsets: a down member is skipped (subset ring without it)");
	reason = run_sub(6, nsub + 1, r.hash[0], &rt);
	CHECK_EQ_U(reason, KR_ROUTE_ALL_DOWN, "subsets: a subset without members is all-down");
	ring_free(&r);
}

static void test_slots(void)
{
	const uint64_t fracs[] = { 0, KR_CTL_FRAC_ONE / 2, KR_CTL_FRAC_ONE, KR_CTL_FRAC_ONE / 10 };
	struct ring a, b;

	ring_make(&a, 4000, 10, 1000, 5, 0);
	ring_make(&b, 4000, 10, 2000, 5, 0);
	all_states(&a, KR_BACKEND_UP);
	all_states(&b, KR_BACKEND_UP);
	publish(&a, 3, 0);
	publish(&b, 3, 1);
	for (uint32_t act = 0; act < 2; act++) {
		for (size_t f = 0; f < sizeof(fracs) / sizeof(fracs[0]); f++) {
			uint64_t ctl = kr_ctl_make(act, fracs[f], KR_RING_MIGRATING);
			struct kr_slot_stats b0 = slot_stats(3, 0), b1 = slot_stats(3, 1), a0, a1;
			uint32_t bad = 0, in1 = 0, nkeys = 20000;

			set_ctl(3, ctl);
			for (uint32_t k = 0; k < nkeys; k++) {
				uint32_t key = (uint32_t)fx_rand(&seed), slot = kr_ctl_slot(ctl, key);
				const struct ring *r = slot ? &b : &a;
				uint32_t exp = fx_plain_lb(r->hash, r->n, key);
				struct kr_route rt;

				if (run(3, key, &rt) || rt.slot != slot || rt.image_index != exp ||
				    rt.backend_id != r->bt[r->backend[exp]])
					bad++;
				in1 += slot;
			}
			a0 = slot_stats(3, 0);
			a1 = slot_stats(3, 1);
			CHECK(bad == 0 && a1.packets - b1.packets == in1 &&
			      a0.packets - b0.packets == nkeys - in1,
			      "active %u fraction %.0f%%: slot and point as kr_ctl_slot(), %u/%u keys by slot 1, counters agree (%u bad)",
			      act, fracs[f] * 100.0 / KR_CTL_FRAC_ONE, in1, nkeys, bad);
		}
	}
	/* an empty standby slot: migrated keys are not routed, and counted */
	struct kr_err err = { "" };
	struct kr_slot_stats b1 = slot_stats(3, 1), a1;
	uint32_t noring = 0, in1 = 0;
	uint64_t ctl = kr_ctl_make(0, KR_CTL_FRAC_ONE / 2, KR_RING_MIGRATING);

	kr_unpublish(rings_fd, 3, 1, &err);
	set_ctl(3, ctl);
	for (uint32_t k = 0; k < 2000; k++) {
		uint32_t key = (uint32_t)fx_rand(&seed);
		struct kr_route rt;

		in1 += kr_ctl_slot(ctl, key);
		noring += run(3, key, &rt) == KR_ROUTE_NO_RING;
	}
	a1 = slot_stats(3, 1);
	CHECK(noring == in1 && a1.no_ring - b1.no_ring == in1,
	      "empty standby slot: its %u keys get KR_ROUTE_NO_RING and count no_ring", in1);
	struct kr_route rt;
	CHECK_EQ_U(run(KR_MAX_RINGS, 1, &rt), KR_ROUTE_NO_RING, "ring id out of range: NO_RING");
	ring_free(&a);
	ring_free(&b);
}

static void test_publish(void)
{
	struct kr_image_hdr *h;
	struct kr_err err = { "" };
	struct ring a, b;
	struct kr_route rt;
	uint32_t zero = 0, key = 0x12345678;
	uint64_t gen1 = 0, gen2 = 0;
	int fd;

	ring_make(&a, 1000, 4, 10, 0, 0);
	ring_make(&b, 1000, 4, 20, 0, 0);
	all_states(&a, KR_BACKEND_UP);
	all_states(&b, KR_BACKEND_UP);
	set_ctl(4, kr_ctl_make(0, 0, KR_RING_IDLE));
	publish(&a, 4, 0);
	h = calloc(1, KR_CHUNK_BYTES);
	fd = kr_published_map_fd(rings_fd, 4, 0);
	if (fd >= 0 && !bpf_map_lookup_elem(fd, &zero, h))
		gen1 = h->generation;
	CHECK(fd >= 0 && run(4, key, &rt) == 0 && rt.backend_id >= 10 && rt.backend_id < 14,
	      "published ring routes");
	/* frozen and read-only for programs */
	int upd = fd >= 0 ? bpf_map_update_elem(fd, &zero, a.im.buf, BPF_ANY) : 0, uerr = errno;
	CHECK(fd >= 0 && upd && uerr == EPERM, "published image map is frozen (update: %s)",
	      strerror(uerr));
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	int ok = fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len);
	CHECK(ok && info.max_entries == a.im.nchunks && (info.map_flags & BPF_F_RDONLY_PROG) &&
	      (info.map_flags & BPF_F_INNER_MAP),
	      "image map sized for the ring (%u chunks), BPF_F_INNER_MAP|BPF_F_RDONLY_PROG",
	      info.max_entries);
	if (fd >= 0)
		close(fd);
	publish(&b, 4, 0);
	fd = kr_published_map_fd(rings_fd, 4, 0);
	if (fd >= 0 && !bpf_map_lookup_elem(fd, &zero, h))
		gen2 = h->generation;
	if (fd >= 0)
		close(fd);
	CHECK(run(4, key, &rt) == 0 && rt.backend_id >= 20 && rt.backend_id < 24 && gen2 == gen1 + 1,
	      "republish replaces the ring in one update, generation %llu -> %llu",
	      (unsigned long long)gen1, (unsigned long long)gen2);

	/* a ring too big for the kernel: clear error, the published ring keeps routing */
	struct kr_image_hdr *big = calloc(1, KR_CHUNK_BYTES);
	memcpy(big, b.im.buf, sizeof(*big));
	big->nchunks = 1u << 27;	/* 384 GiB */
	int ret = kr_publish(rings_fd, 4, 0, big, big->nchunks, &err);
	DIAG("too big: %s", err.msg);
	CHECK(ret < 0 && strstr(err.msg, "too big"), "a ring too big for kernel memory: error says so");
	CHECK(run(4, key, &rt) == 0 && rt.backend_id >= 20 && rt.backend_id < 24,
	      "after the failed publish the published ring still routes");
	err.msg[0] = 0;
	ret = kr_publish(rings_fd, 4, 0, a.im.buf, a.im.nchunks - 1, &err);
	CHECK(ret < 0 && strstr(err.msg, "chunks"), "inconsistent chunk count rejected: %s", err.msg);
	ret = kr_publish(rings_fd, KR_MAX_RINGS, 0, a.im.buf, a.im.nchunks, &err);
	CHECK(ret < 0 && strstr(err.msg, "ring id"), "ring id out of range rejected: %s", err.msg);
	CHECK(kr_ctl_write(ctl_fd, 4, KR_CTL_FRAC_ONE + 1, &err) < 0,
	      "control word with a fraction above 1 rejected: %s", err.msg);
	{	/* a data path of another image format: its outer map's template takes 3072-byte
		 * chunks (format 1) */
		LIBBPF_OPTS(bpf_map_create_opts, io, .map_flags = BPF_F_INNER_MAP | BPF_F_RDONLY_PROG);
		int inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "old_inner", 4, 3072, 1, &io);
		LIBBPF_OPTS(bpf_map_create_opts, oo, .inner_map_fd = inner);
		int outer = inner < 0 ? -1 : bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "old_rings", 4,
							    4, 8, &oo);

		err.msg[0] = 0;
		ret = outer < 0 ? 0 : kr_publish(outer, 1, 0, a.im.buf, a.im.nchunks, &err);
		CHECK(outer >= 0 && ret < 0 && strstr(err.msg, "another keyrouter version"),
		      "a data path of another image format: the error says to reload: %s", err.msg);
		if (outer >= 0)
			close(outer);
		if (inner >= 0)
			close(inner);
	}

	kr_unpublish(rings_fd, 4, 0, &err);
	CHECK_EQ_U(run(4, key, &rt), KR_ROUTE_NO_RING, "unpublished slot: KR_ROUTE_NO_RING");

	/* trace record (kr_ring_trace_on was set before load) */
	struct kr_ring_trace t0 = { 0 }, t1 = { 0 };
	publish(&a, 4, 0);
	bpf_map_lookup_elem(trace_fd, &zero, &t0);
	int r2 = run(4, key, &rt);
	bpf_map_lookup_elem(trace_fd, &zero, &t1);
	CHECK(t1.seq == t0.seq + 1 && t1.reason == (uint32_t)r2 && t1.ring_id == 4 &&
	      !memcmp(&t1.route, &rt, sizeof(rt)), "trace record = the route of the last packet");
	free(big);
	free(h);
	ring_free(&a);
	ring_free(&b);
}

/* Kernel memory of published images, from the kernel's own accounting. */
static void test_memory(void)
{
	const uint32_t sizes[] = { 480, 100000, 1000000, 4000000 };
	struct kr_err err = { "" };
	uint64_t mem;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct ring r;
		int fd;

		ring_make(&r, sizes[i], 16, 1, sizes[i] / 100000, 0);
		publish(&r, 5, 0);
		fd = kr_published_map_fd(rings_fd, 5, 0);
		if (fd < 0 || kr_map_memlock(fd, &mem, &err)) {
			CHECK(0, "memlock of the published image: %s", err.msg);
			ring_free(&r);
			continue;
		}
		close(fd);
		DIAG("ring of %u points: kernel memory %llu bytes = %.3f bytes/point (%u chunks)",
		     r.n, (unsigned long long)mem, (double)mem / r.n, r.im.nchunks);
		if (r.n >= 100000)
			CHECK((double)mem / r.n <= 6.5,
			      "%u points: %.3f bytes/point of kernel memory <= 6.5", r.n, (double)mem / r.n);
		else
			CHECK(mem - (uint64_t)r.n * sizeof(struct kr_point) < 64 * 1024,
			      "small ring (%u points): fixed overhead %llu bytes < 64 KiB", r.n,
			      (unsigned long long)(mem - (uint64_t)r.n * sizeof(struct kr_point)));
		ring_free(&r);
	}
	kr_unpublish(rings_fd, 5, 0, &err);
	uint64_t shared = 0, m;
	int fds[] = { rings_fd, ctl_fd, stats_fd };
	for (int i = 0; i < 3; i++)
		if (!kr_map_memlock(fds[i], &m, NULL))
			shared += m;
	DIAG("shared per instance (kr_rings + kr_ring_ctl + kr_slot_stats, all %u ring ids): %llu bytes",
	     KR_MAX_RINGS, (unsigned long long)shared);
}

int main(void)
{
	skel = kr_ring_test_bpf__open();
	if (!skel) {
		perror("open");
		return 1;
	}
	bpf_map__set_max_entries(skel->maps.kr_backends, NB_IDS);
	skel->rodata->kr_ring_trace_on = 1;
	if (kr_ring_test_bpf__load(skel)) {
		fprintf(stderr, "load failed\n");
		return 1;
	}
	prog_fd = bpf_program__fd(skel->progs.kr_ring_test);
	rings_fd = bpf_map__fd(skel->maps.kr_rings);
	ctl_fd = bpf_map__fd(skel->maps.kr_ring_ctl);
	stats_fd = bpf_map__fd(skel->maps.kr_slot_stats);
	backends_fd = bpf_map__fd(skel->maps.kr_backends);
	trace_fd = bpf_map__fd(skel->maps.kr_ring_trace);

	test_parity("1 point", 1, 1, 0, 0, 2000, 400);
	test_parity("3x160", 480, 3, 2, 0, 20000, 4000);
	test_parity("10k, collisions", 10007, 50, 300, 0, 50000, 10000);
	test_parity("100k, collisions", 100000, 1000, 1000, 0, 100000, 20000);
	test_parity("1M, 7000 backends (table in 3 chunks of its own)", 1000000, 7000, 100, 0, 100000, 20000);
	test_parity("dense 100k in 2^16 hashes (oversized buckets)", 100000, 7, 0, 1u << 16, 30000, 10000);
	test_parity("dense 5000 in 2^20 (buckets straddling chunks)", 5000, 7, 50, 1u << 20, 30000, 10000);
	test_failover();
	test_subsets();
	test_slots();
	test_publish();
	test_memory();
	kr_ring_test_bpf__destroy(skel);
	return tap_done();
}
