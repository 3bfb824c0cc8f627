// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Differential packet fuzzer: random and mutated packets through the XDP and the TC
 * program (BPF_PROG_TEST_RUN) and through an independent userspace model of the whole
 * pipeline, which must agree on every packet:
 *   verdict      pass / drop / forwarded (XDP_TX, TC redirect), and the rewritten MACs
 *   key          extractor status, key bytes, CRC-32 (trace of the program)
 *   slot, ring index, backend   for every routed key
 *   counters     kr_counters deltas = the model's tally of every reason
 * The model: user/core/pktref.c (the same parser/extractor source, compiled with gcc), the
 * service table (exact VIP then the port's wildcard), the engine's ring (user/core/continuum.c
 * kr_ring_route with the down backends skipped: "a ring built without them"), and
 * kr_ctl_slot() for the migration split.
 *
 * Packets are seeded from valid packets of every extractor (DNS, memcached, QUIC long and
 * short, payload rules, tuple) with random framing (0..3 VLAN tags and odd TPIDs, IPv4
 * options, IPv6 extension headers incl. too many, first and non-first fragments, other
 * protocols, lying IPv4/IPv6/UDP lengths, bad ihl), then mutated (byte overwrites,
 * truncations, appended junk, length-field bumps).  Two services use the opt-in keyed
 * hash (SipHash-1-3, kr_hash_key), the model computes it with the userspace build.  Rings: one migrating between two
 * slots (v2 ring and a v1 ring with one more backend) with two backends down, one whose
 * backends are all down, and one id that is not published.
 *   KR_FUZZ_PACKETS=N (default 100000) or KR_FUZZ_SECONDS=S (scripts/fuzz.sh),
 *   KR_FUZZ_SEED=X.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tap.h"
#include "kr_datapath_kern_user.h"
#include "kr_parse.h"
#include "pktbuild.h"
#include "pktref.h"
#include "continuum.h"
#include "kr_siphash.h"
#include "image.h"
#include "publish.h"
#include "ops_ports.h"
#include "keyrouter.skel.h"

#define XDP_DROP	1
#define XDP_PASS	2
#define XDP_TX		3
#define TC_OK		0
#define TC_SHOT		2
#define TC_REDIRECT	7

static struct keyrouter_bpf *skel;
static int xdp_fd, tc_fd, svc_fd, be_fd, rings_fd, ctl_fd, cnt_fd;
static uint64_t rng;

static uint64_t rnd(void)		/* splitmix64 */
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rn(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static void die(const char *what, const char *msg)
{
	printf("not ok %d - setup: %s: %s\n", ++tap_n, what, msg);
	printf("1..%d\n", tap_n);
	exit(1);
}

/* ---- the world: rings, backends, services ------------------------------------------ */

#define RING_MIG	3	/* migrating: slot 0 = v2 ring, slot 1 = v1 ring + 1 backend */
#define RING_DOWN	4	/* every backend down */
#define RING_NONE	9	/* never published */
#define NB		10
#define ID_BASE		100	/* global backend id = ID_BASE + 16 * ring + local index */

static struct kr_ring *ring[2];		/* RING_MIG slots */
static struct kr_image img[2];
static uint32_t ids[2][NB + 1];
static uint8_t down[2][NB + 1];		/* per slot, by local index */
static uint64_t ctl_mig;
static const uint8_t be_mac[6] = { 0x02, 0xbe, 0, 0, 0, 0 };	/* + id in the last bytes */

static void backend_put(uint32_t id, uint8_t state)
{
	struct kr_backend b = { .family = 4, .state = state };

	memcpy(b.mac, be_mac, 6);
	b.mac[4] = (uint8_t)(id >> 8);
	b.mac[5] = (uint8_t)id;
	b.addr[0] = 10;
	b.addr[3] = (uint8_t)id;
	if (bpf_map_update_elem(be_fd, &id, &b, BPF_ANY))
		die("backend update", strerror(errno));
}

static void ring_make(int slot, uint32_t nb, uint32_t version, uint32_t pm, uint32_t ring_id,
		      uint32_t *id, struct kr_ring **out, struct kr_image *im)
{
	struct kr_backend_spec b[NB + 1];
	struct kr_err err;
	char a[32];

	for (uint32_t i = 0; i < nb; i++) {
		snprintf(a, sizeof(a), "10.1.%u.%u:53", ring_id, i + 1);
		if (kr_sockaddr_parse(a, &b[i].addr, &err))
			die("address", err.msg);
		b[i].weight = 1 + i % 3;
		id[i] = ID_BASE + 16 * ring_id + i;
	}
	if (kr_ring_build(out, b, nb, version, pm, &err) || kr_image_encode(im, *out, id, &err) ||
	    kr_publish(rings_fd, ring_id, slot, im->buf, im->hdr->nchunks, &err))
		die("ring", err.msg);
}

static void world(void)
{
	struct kr_ring *rd;
	struct kr_image imd;
	uint32_t idd[NB];
	struct kr_err err;

	/* RING_MIG: slot 0 = 10 backends v2 pm 40; slot 1 = the same + 1, v1 (more points). */
	ring_make(0, NB, KR_RING_V2, 40, RING_MIG, ids[0], &ring[0], &img[0]);
	ring_make(1, NB + 1, KR_RING_V1, 0, RING_MIG, ids[1], &ring[1], &img[1]);
	for (uint32_t i = 0; i <= NB; i++)
		backend_put(ID_BASE + 16 * RING_MIG + i, i == 2 || i == 7 ? KR_BACKEND_DOWN :
			    KR_BACKEND_UP);
	for (int s = 0; s < 2; s++)
		for (uint32_t i = 0; i <= NB; i++)
			down[s][i] = i == 2 || i == 7;
	ctl_mig = kr_ctl_make(0, (uint64_t)(0.3 * KR_CTL_FRAC_ONE), 2);
	if (kr_ctl_write(ctl_fd, RING_MIG, ctl_mig, &err))
		die("ctl", err.msg);
	/* RING_DOWN: 4 backends, all down. */
	ring_make(0, 4, KR_RING_V2, 160, RING_DOWN, idd, &rd, &imd);
	for (uint32_t i = 0; i < 4; i++)
		backend_put(idd[i], i == 3 ? KR_BACKEND_DRAIN : KR_BACKEND_DOWN);
	kr_image_free(&imd);
	kr_ring_free(rd);
}

/* Services: wildcard per port, plus one exact VIP that overrides port 53. */
struct svc_def {
	uint16_t port;
	int exact;			/* 192.0.2.53 only */
	struct kr_service s;
};

static struct svc_def svcs[] = {
	{ 53, 0, { .ring_id = RING_MIG, .key_type = KR_KEY_DNS, .fwd_mode = KR_FWD_L2,
		   .policy_too_long = KR_POLICY_DROP } },
	{ 53, 1, { .ring_id = RING_DOWN, .key_type = KR_KEY_DNS, .fwd_mode = KR_FWD_L2,
		   .policy_no_route = KR_POLICY_PASS, .policy_no_key = KR_POLICY_DROP } },
	{ 11211, 0, { .ring_id = RING_MIG, .key_type = KR_KEY_MEMCACHE, .fwd_mode = KR_FWD_L2,
		      .policy_no_key = KR_POLICY_DROP } },
	{ 443, 0, { .ring_id = RING_MIG, .key_type = KR_KEY_QUIC, .fwd_mode = KR_FWD_L2,
		    .quic_cid_len = 8, .policy_no_key = KR_POLICY_DROP } },
	{ 9000, 0, { .ring_id = RING_DOWN, .key_type = KR_KEY_PAYLOAD, .fwd_mode = KR_FWD_L2,
		     .policy_no_route = KR_POLICY_DROP, .policy_too_long = KR_POLICY_DROP } },
	{ 9001, 0, { .ring_id = RING_MIG, .key_type = KR_KEY_PAYLOAD, .fwd_mode = KR_FWD_L2,
		     .payload_off = 3, .payload_len = 16 } },
	{ 9002, 0, { .ring_id = RING_MIG, .key_type = KR_KEY_PAYLOAD, .fwd_mode = KR_FWD_L2,
		     .payload_off = 5, .payload_delim = '\n', .flags = KR_SVC_F_PAYLOAD_DELIM,
		     .policy_no_key = KR_POLICY_DROP } },
	{ 9003, 0, { .ring_id = RING_MIG, .key_type = KR_KEY_TUPLE, .fwd_mode = KR_FWD_L2 } },
	{ 9004, 0, { .ring_id = RING_NONE, .key_type = KR_KEY_TUPLE, .fwd_mode = KR_FWD_L2,
		     .policy_no_route = KR_POLICY_DROP } },
	{ 9005, 0, { .ring_id = RING_MIG, .key_type = KR_KEY_PAYLOAD, .fwd_mode = KR_FWD_L2,
		     .payload_off = 256 } },
	/* the opt-in keyed hash (SipHash-1-3 with the secret of kr_hash_key) */
	{ 9006, 0, { .ring_id = RING_MIG, .key_type = KR_KEY_PAYLOAD, .fwd_mode = KR_FWD_L2,
		     .flags = KR_SVC_F_KEYED_HASH, .policy_too_long = KR_POLICY_DROP } },
	{ 9007, 0, { .ring_id = RING_MIG, .key_type = KR_KEY_DNS, .fwd_mode = KR_FWD_L2,
		     .flags = KR_SVC_F_KEYED_HASH } },
};
static const struct kr_hash_secret secret = { 0x8badf00ddeadbeefull, 0x0123456789abcdefull };
#define NSVC (sizeof(svcs) / sizeof(svcs[0]))
static const uint8_t vip_exact[4] = { 192, 0, 2, 53 };

static void services(void)
{
	uint32_t zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.kr_hash_key), &zero, &secret, BPF_ANY))
		die("kr_hash_key", strerror(errno));
	for (size_t i = 0; i < NSVC; i++) {
		struct kr_service_key k = { .proto = 17 };

		k.port = htons(svcs[i].port);
		if (svcs[i].exact) {
			k.family = 4;
			memcpy(k.addr, vip_exact, 4);
		}
		if (bpf_map_update_elem(svc_fd, &k, &svcs[i].s, BPF_ANY))
			die("service", strerror(errno));
	}
	/* as `keyrouter apply` writes it: every port without an exact service skips the exact
	 * lookup (so the model also checks that the data path's shortcut keeps "exact, else
	 * wildcard" on port 53 and on the others) */
	{
		static struct kr_service_ports sp;

		memset(sp.no_exact, 0xff, sizeof(sp.no_exact));
		for (size_t i = 0; i < NSVC; i++)
			if (svcs[i].exact)
				sp.no_exact[svcs[i].port >> 6] &= ~(1ull << (svcs[i].port & 63));
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.kr_service_ports), &zero, &sp,
					BPF_ANY))
			die("kr_service_ports", strerror(errno));
	}
	/* and the wildcard services by port (kr_port_wild / kr_wild_svcs), as apply writes
	 * them: the data path finds the wildcards there, not in kr_services */
	if (kr_ops_port_wild_sync(bpf_map__fd(skel->maps.kr_port_wild),
				  bpf_map__fd(skel->maps.kr_wild_svcs), svc_fd))
		die("kr_port_wild", strerror(errno));
}

/* Every wildcard port of svcs has its copy in kr_wild_svcs; the others no entry. */
static void check_port_wild(void)
{
	int wfd = bpf_map__fd(skel->maps.kr_port_wild), sfd = bpf_map__fd(skel->maps.kr_wild_svcs);
	unsigned bad = 0, nwild = 0;

	for (size_t i = 0; i < NSVC; i++) {
		uint32_t p = svcs[i].port, w = 0, j;
		struct kr_service v;

		if (bpf_map_lookup_elem(wfd, &p, &w))
			bad++;
		if (svcs[i].exact)
			continue;
		nwild++;
		j = w - 1;
		if (!w || bpf_map_lookup_elem(sfd, &j, &v) || memcmp(&v, &svcs[i].s, sizeof(v)))
			bad++;
	}
	for (uint32_t p = 0; p < 65536; p += 997) {	/* a sample of ports without one */
		uint32_t w = 1;
		bool has = false;

		for (size_t i = 0; i < NSVC; i++)
			has |= svcs[i].port == p && !svcs[i].exact;
		if (!has && (bpf_map_lookup_elem(wfd, &p, &w) || w))
			bad++;
	}
	CHECK(bad == 0 && nwild > 0, "kr_port_wild: the %u wildcard services by port, copies "
	      "equal to kr_services (%u wrong)", nwild, bad);
}

/* The model's service lookup: exact (family, VIP, port), else the port's wildcard. */
static const struct kr_service *svc_find(const struct kr_ref_out *r)
{
	const struct kr_service *wild = NULL;

	if (r->proto != KR_IPPROTO_UDP)		/* the services are UDP's */
		return NULL;
	for (size_t i = 0; i < NSVC; i++) {
		if (svcs[i].port != r->dport)
			continue;
		if (svcs[i].exact && r->family == 4 && !memcmp(r->dst, vip_exact, 4))
			return &svcs[i].s;
		if (!svcs[i].exact)
			wild = &svcs[i].s;
	}
	return wild;
}

/* ---- the model ---------------------------------------------------------------------- */

enum verdict { V_PASS, V_DROP, V_FWD };

/* Counters the model predicts (same fields as struct kr_counters). */
struct tally {
	uint64_t passed, routed, dropped, passed_nomatch, parse_error, fragment, no_key,
		 key_too_long, no_ring, all_down, failover_walks, dropped_no_key,
		 dropped_key_too_long, dropped_no_route;
};

struct expect {
	enum verdict v;
	int traced;		/* the packet reached key extraction */
	struct kr_ref_out ref;
	int routed;
	uint32_t slot, ring_index, backend_id;
};

static enum verdict policy(uint8_t p, struct tally *t, uint64_t *dropped_reason)
{
	if (p == KR_POLICY_DROP) {
		t->dropped++;
		(*dropped_reason)++;
		return V_DROP;
	}
	t->passed++;
	return V_PASS;
}

static void model(const uint8_t *pkt, size_t len, struct expect *e, struct tally *t)
{
	const struct kr_service *s;
	int rc;

	memset(e, 0, sizeof(*e));
	rc = kr_ref_packet(pkt, len, NULL, &e->ref);
	if (rc != KR_PARSE_OK) {
		if (rc == KR_PARSE_FRAGMENT)
			t->fragment++;
		else if (rc == KR_PARSE_NOT_OURS)
			t->passed_nomatch++;
		else
			t->parse_error++;
		t->passed++;
		e->v = V_PASS;
		return;
	}
	s = svc_find(&e->ref);
	if (!s) {
		t->passed_nomatch++;
		t->passed++;
		e->v = V_PASS;
		return;
	}
	kr_ref_packet(pkt, len, s, &e->ref);
	e->traced = 1;
	if (e->ref.key_status == KR_KEY_OK && (s->flags & KR_SVC_F_KEYED_HASH))
		e->ref.key_hash = kr_siphash13_32(e->ref.key, e->ref.key_len, &secret);
	if (e->ref.key_status == KR_KEY_NOT_FOUND) {
		t->no_key++;
		e->v = policy(s->policy_no_key, t, &t->dropped_no_key);
		return;
	}
	if (e->ref.key_status == KR_KEY_TOO_LONG) {
		t->key_too_long++;
		e->v = policy(s->policy_too_long, t, &t->dropped_key_too_long);
		return;
	}
	if (s->ring_id == RING_NONE) {
		t->no_ring++;
		e->v = policy(s->policy_no_route, t, &t->dropped_no_route);
		return;
	}
	if (s->ring_id == RING_DOWN) {
		t->all_down++;
		e->v = policy(s->policy_no_route, t, &t->dropped_no_route);
		return;
	}
	e->slot = kr_ctl_slot(ctl_mig, e->ref.key_hash);
	{
		uint32_t ri, b, plain = kr_ring_lower_bound(ring[e->slot], e->ref.key_hash);

		if (kr_ring_route(ring[e->slot], e->ref.key_hash, down[e->slot], &ri, &b)) {
			t->all_down++;	/* not in this world: some backends are up */
			e->v = policy(s->policy_no_route, t, &t->dropped_no_route);
			return;
		}
		e->routed = 1;
		e->ring_index = ri;
		e->backend_id = ids[e->slot][b];
		if (down[e->slot][ring[e->slot]->backend[plain]])
			t->failover_walks++;	/* the key's own point is down: walked */
	}
	t->routed++;
	e->v = V_FWD;
}

static void tally_add(struct tally *t, const struct tally *one)
{
	for (size_t f = 0; f < sizeof(*t) / 8; f++)
		((uint64_t *)t)[f] += ((const uint64_t *)one)[f];
}

/* ---- packets ------------------------------------------------------------------------ */

static const char lab[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";

static size_t gen_dns(uint8_t *p)
{
	size_t o = 12;
	int labels = 1 + rn(6), kind = rn(16);

	memset(p, 0, 12);
	p[2] = kind == 0 ? 0x81 : 0x01;		/* a response now and then */
	p[5] = kind == 1 ? 0 : 1;
	for (int l = 0; l < labels; l++) {
		int n = kind == 2 ? 50 + rn(14) : rn(10) == 0 ? 60 + rn(8) : 1 + rn(12);

		p[o++] = (uint8_t)n;
		for (int i = 0; i < n; i++)
			p[o++] = (uint8_t)lab[rn(sizeof(lab) - 1)];
	}
	p[o++] = 0;
	if (kind == 3)
		p[12 + rn((unsigned)(o - 12))] = 0xc0;	/* a compression pointer somewhere */
	pkt_put16(p + o, 1);
	pkt_put16(p + o + 2, 1);
	return o + 4;
}

static size_t gen_mc(uint8_t *p)
{
	static const char *cmds[] = { "get", "gets", "set", "add", "delete", "incr", "touch",
				      "gat", "gats", "mg", "ms", "GET", "bogus", "" };
	const char *c = cmds[rn(sizeof(cmds) / sizeof(cmds[0]))];
	int klen = rn(12) == 0 ? 240 + rn(30) : 1 + rn(40), o = 8;

	memcpy(p, "\0\x01\0\0\0\x01\0\0", 8);
	o += sprintf((char *)p + o, "%s%s", c, rn(6) ? " " : rn(2) ? "\t " : "   ");
	if (!strncmp(c, "gat", 3))
		o += sprintf((char *)p + o, "%u ", rn(999));
	for (int i = 0; i < klen; i++)
		p[o++] = (uint8_t)('!' + rn(94));
	if (rn(3))
		o += sprintf((char *)p + o, rn(2) ? " 0 0 1\r\nx\r\n" : "\r\n");
	return (size_t)o;
}

static size_t gen_quic(uint8_t *p)
{
	size_t n;

	if (rn(2)) {
		uint8_t cl = rn(12) == 0 ? 0 : rn(12) == 0 ? 200 + rn(56) : 1 + rn(20);

		p[0] = 0xc0 | rn(64);
		p[1] = 0, p[2] = 0, p[3] = 0, p[4] = 1;
		p[5] = cl;
		n = 6 + cl + rn(40);
	} else {
		p[0] = 0x40 | rn(64);
		n = 1 + rn(40);
	}
	for (size_t i = p[0] & 0x80 ? 6 : 1; i < n; i++)
		p[i] = (uint8_t)rnd();
	return n;
}

static size_t gen_payload(uint8_t *p)
{
	size_t n = rn(10) == 0 ? 250 + rn(300) : rn(64);

	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
	if (n > 6 && rn(2))
		p[5 + rn((unsigned)(n - 5))] = '\n';
	return n;
}

static const uint16_t ports[] = { 53, 53, 11211, 443, 9000, 9001, 9002, 9003, 9004, 9005, 9006,
				  9007, 80 };

static char *rand_addr(int fam, char *buf, int vip)
{
	uint8_t a[16];

	for (int i = 0; i < 16; i++)
		a[i] = (uint8_t)rnd();
	if (fam == 4 && vip)
		memcpy(a, vip_exact, 4);
	inet_ntop(fam == 6 ? AF_INET6 : AF_INET, a, buf, 64);
	return buf;
}

/* A valid packet of a random extractor in random (mostly valid) framing. */
static size_t gen_packet(uint8_t *out)
{
	static const uint8_t ext[] = { 0, 43, 60, 44 };
	static uint8_t pl[1200];
	char sb[64], db[64];
	struct pkt_spec s = { 0 };
	uint16_t port = ports[rn(sizeof(ports) / sizeof(ports[0]))];

	s.family = rn(2) ? 6 : 4;
	s.src = rand_addr(s.family, sb, 0);
	s.dst = rand_addr(s.family, db, rn(4) == 0);
	s.sport = (uint16_t)rnd();
	s.dport = port;
	s.nvlan = rn(8) == 0 ? 3 : rn(3);
	for (int i = 0; i < s.nvlan; i++)
		s.tpid[i] = rn(6) == 0 ? (rn(2) ? 0x9100 : 0x88a8) : 0;
	if (s.family == 4) {
		s.ip_opts = rn(3) == 0 ? 4 * rn(11) : 0;
	} else {
		s.next = rn(3) == 0 ? rn(10) : 0;
		for (int i = 0; i < s.next; i++)
			s.ext[i] = ext[rn(4)];
	}
	switch (rn(40)) {
	case 0: s.frag = 1; break;
	case 1: s.frag = 2; if (s.family == 6 && !s.next) { s.next = 1; s.ext[0] = 44; } break;
	case 2: s.proto = rn(2) ? 6 : (uint8_t)rnd(); break;
	case 3: s.lie_tot = (int)rn(64) - 32; break;
	case 4: s.lie_udp = (int)rn(64) - 32; break;
	case 5: if (s.family == 4) s.ihl_override = rn(16); break;
	case 6: s.ethertype = (uint16_t)rnd(); break;
	case 7: s.pad_to = 60 + rn(40); break;
	}
	switch (port) {
	case 53: case 9007: s.plen = gen_dns(pl); break;
	case 11211: s.plen = gen_mc(pl); break;
	case 443: s.plen = gen_quic(pl); break;
	case 9003: case 9004: s.plen = rn(30); memset(pl, 0x55, s.plen); break;
	default: s.plen = gen_payload(pl); break;
	}
	s.payload = pl;
	return pkt_build(&s, out);
}

/* Mutations: overwrite bytes, truncate, append junk, bump a 16-bit field. */
static size_t mutate(uint8_t *p, size_t len)
{
	int n = 1 + rn(4);

	for (int i = 0; i < n; i++) {
		switch (rn(5)) {
		case 0:
		case 1:
			p[rn((uint32_t)len)] = (uint8_t)rnd();
			break;
		case 2:
			len = KR_ETH_HLEN + rn((uint32_t)(len - KR_ETH_HLEN + 1));
			break;
		case 3: {
			size_t add = 1 + rn(64);

			if (len + add <= 1514) {
				for (size_t k = 0; k < add; k++)
					p[len + k] = (uint8_t)rnd();
				len += add;
			}
			break;
		}
		default: {
			size_t o = rn((uint32_t)(len - 1));
			uint16_t v = (uint16_t)(p[o] << 8 | p[o + 1]);

			v += (uint16_t)((int)rn(17) - 8);
			pkt_put16(p + o, v);
			break;
		}
		}
	}
	return len < KR_ETH_HLEN ? KR_ETH_HLEN : len;
}

/* ---- running ------------------------------------------------------------------------ */

static void counters(struct kr_counters *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct kr_counters v[ncpu];
	uint32_t zero = 0;
	uint64_t *d = (uint64_t *)sum;

	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(cnt_fd, &zero, v))
		die("counters", strerror(errno));
	for (int c = 0; c < ncpu; c++)
		for (size_t f = 0; f < sizeof(*sum) / 8; f++)
			d[f] += ((uint64_t *)&v[c])[f];
}

struct stats {
	uint64_t packets, mutated, runs, tc_skipped, mism, fwd, drop, pass, keys, slot[2], walks;
	uint64_t parse[4];
};

static int check_one(const uint8_t *in, size_t len, int tc, const struct expect *e,
		     struct stats *st, long pkt_no)
{
	static uint8_t out[PKT_MAX];
	const struct kr_trace *t = &skel->bss->kr_trace_last;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (uint32_t)len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	uint64_t seq = t->seq;
	int want, ok, bad_key = 0;
	char why[160] = "";

	if (bpf_prog_test_run_opts(tc ? tc_fd : xdp_fd, &o)) {
		/* BPF_PROG_TEST_RUN for skb programs refuses frames shorter than the IPv4/IPv6
		 * header their ethertype announces: such a frame cannot be tested through TC */
		if (errno == EINVAL && tc && len < KR_ETH_HLEN + KR_IPV6_HLEN) {
			st->tc_skipped++;
			return -1;
		}
		printf("not ok %d - test_run (%s, %zu bytes): %s\n", ++tap_n, tc ? "tc" : "xdp",
		       len, strerror(errno));
		exit(1);
	}
	st->runs++;
	want = e->v == V_PASS ? (tc ? TC_OK : XDP_PASS) : e->v == V_DROP ? (tc ? TC_SHOT : XDP_DROP)
				 : (tc ? TC_REDIRECT : XDP_TX);
	ok = (int)o.retval == want;
	if (!ok)
		snprintf(why, sizeof(why), "verdict %u, model %d", o.retval, want);
	if (ok && e->traced) {
		ok = t->seq == seq + 1 && t->status == (uint32_t)e->ref.key_status;
		if (ok && e->ref.key_status == KR_KEY_OK)
			ok = t->key_len == e->ref.key_len && t->key_hash == e->ref.key_hash &&
			     !memcmp(t->key, e->ref.key, e->ref.key_len);
		bad_key = !ok;
		if (!ok)
			snprintf(why, sizeof(why), "key: kernel status %u len %u hash %08x, model "
				 "status %d len %u hash %08x", t->status, t->key_len, t->key_hash,
				 e->ref.key_status, e->ref.key_len, e->ref.key_hash);
	} else if (ok && t->seq != seq) {
		ok = 0;
		snprintf(why, sizeof(why), "the kernel extracted a key, the model stops earlier");
	}
	if (ok && e->routed) {
		uint32_t ri = kr_image_ring_index(&img[t->route.slot & 1], t->route.image_index);

		ok = t->ring_rc == KR_ROUTE_OK && t->route.slot == e->slot &&
		     t->route.backend_id == e->backend_id && ri == e->ring_index;
		if (!ok)
			snprintf(why, sizeof(why), "route: kernel rc %u slot %u ring index %u "
				 "backend %u, model slot %u ring index %u backend %u", t->ring_rc,
				 t->route.slot, ri, t->route.backend_id, e->slot, e->ring_index,
				 e->backend_id);
		/* l2: destination MAC = the backend's (the source = what the client sent to) */
		if (ok && (o.data_size_out < 12 || memcmp(out, be_mac, 4) ||
			   out[5] != (uint8_t)e->backend_id || memcmp(out + 6, in, 6))) {
			ok = 0;
			snprintf(why, sizeof(why), "forwarded frame has the wrong MACs");
		}
	}
	if (!ok && st->mism++ < 8) {
		char hex[2 * 96 + 1];

		for (size_t i = 0; i < len && i < 96; i++)
			sprintf(hex + 2 * i, "%02x", in[i]);
		DIAG("packet %ld [%s], %zu bytes, parse %d: %s%s; frame %s", pkt_no,
		     tc ? "tc" : "xdp", len, e->ref.parse_rc, why, bad_key ? "" : "", hex);
	}
	return ok;
}

int main(void)
{
	static uint8_t in[PKT_MAX];
	long n = getenv("KR_FUZZ_PACKETS") ? atol(getenv("KR_FUZZ_PACKETS")) : 100000;
	double secs = getenv("KR_FUZZ_SECONDS") ? atof(getenv("KR_FUZZ_SECONDS")) : 0;
	struct kr_counters c0, c1;
	struct stats st = { 0 };
	struct tally t = { 0 };
	struct timespec ts0, ts;
	long i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rng = getenv("KR_FUZZ_SEED") ? strtoull(getenv("KR_FUZZ_SEED"), NULL, 0) : 0x6b72667a;
	skel = keyrouter_bpf__open();
	if (!skel)
		die("open skeleton", strerror(errno));
	skel->rodata->kr_cfg_trace = 1;
	if (keyrouter_bpf__load(skel))
		die("load keyrouter.bpf.o", "the verifier refused it (run with -v for the log)");
	xdp_fd = bpf_program__fd(skel->progs.kr_xdp);
	tc_fd = bpf_program__fd(skel->progs.kr_tc);
	svc_fd = bpf_map__fd(skel->maps.kr_services);
	be_fd = bpf_map__fd(skel->maps.kr_backends);
	rings_fd = bpf_map__fd(skel->maps.kr_rings);
	ctl_fd = bpf_map__fd(skel->maps.kr_ring_ctl);
	cnt_fd = bpf_map__fd(skel->maps.kr_counters);
	world();
	services();
	check_port_wild();
	DIAG("seed %#llx, %s", (unsigned long long)(rng), secs > 0 ? "timed run" : "fixed count");

	counters(&c0);
	clock_gettime(CLOCK_MONOTONIC, &ts0);
	for (i = 0; secs > 0 || i < n; i++) {
		struct expect e;
		size_t len = gen_packet(in);

		if (secs > 0 && (i & 1023) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			if (ts.tv_sec - ts0.tv_sec + (ts.tv_nsec - ts0.tv_nsec) / 1e9 > secs)
				break;
		}
		if (rn(2)) {
			len = mutate(in, len);
			st.mutated++;
		}
		st.packets++;
		/* each packet through XDP and TC: the model's tally counts both runs */
		for (int tc = 0; tc < 2; tc++) {
			struct tally one = { 0 };

			model(in, len, &e, &one);
			if (check_one(in, len, tc, &e, &st, i) >= 0)
				tally_add(&t, &one);
		}
		st.parse[e.ref.parse_rc & 3]++;
		st.fwd += e.v == V_FWD;
		st.drop += e.v == V_DROP;
		st.pass += e.v == V_PASS;
		st.keys += e.traced && e.ref.key_status == KR_KEY_OK;
		if (e.routed)
			st.slot[e.slot]++;
	}
	counters(&c1);

	DIAG("packets %llu (%llu mutated), %llu program runs (XDP + TC; %llu frames too short "
	     "for an skb test run)", (unsigned long long)st.packets,
	     (unsigned long long)st.mutated, (unsigned long long)st.runs,
	     (unsigned long long)st.tc_skipped);
	DIAG("summary: parse ok %llu, not ours %llu, fragment %llu, error %llu; keys %llu; "
	     "forwarded %llu (slot 0 %llu, slot 1 %llu, walks %llu), dropped %llu, passed %llu; "
	     "mismatches %llu",
	     (unsigned long long)st.parse[0], (unsigned long long)st.parse[1],
	     (unsigned long long)st.parse[2], (unsigned long long)st.parse[3],
	     (unsigned long long)st.keys, (unsigned long long)st.fwd,
	     (unsigned long long)st.slot[0], (unsigned long long)st.slot[1],
	     (unsigned long long)t.failover_walks / 2, (unsigned long long)st.drop,
	     (unsigned long long)st.pass, (unsigned long long)st.mism);
	CHECK(st.mism == 0, "%llu packets through XDP and TC: verdict, key, slot, ring index, "
	      "backend and MACs = the userspace model (%llu mismatches)",
	      (unsigned long long)st.packets, (unsigned long long)st.mism);
#define CNT(f) CHECK_EQ_U(c1.f - c0.f, t.f, "counter " #f " = the model's count")
	CHECK_EQ_U(c1.seen - c0.seen, st.runs, "counter seen = program runs");
	CNT(passed);
	CNT(routed);
	CNT(dropped);
	CNT(passed_nomatch);
	CNT(parse_error);
	CNT(fragment);
	CNT(no_key);
	CNT(key_too_long);
	CNT(no_ring);
	CNT(all_down);
	CNT(failover_walks);
	CNT(dropped_no_key);
	CNT(dropped_key_too_long);
	CNT(dropped_no_route);
	CHECK(c1.bad_image == c0.bad_image && c1.fwd_error == c0.fwd_error &&
	      c1.walk_limit == c0.walk_limit && c1.bad_service == c0.bad_service,
	      "no bad_image, fwd_error, walk_limit or bad_service");
	CHECK(st.packets < 1000 || (st.parse[1] && st.parse[2] && st.parse[3] && st.slot[0] &&
				    st.slot[1] && st.drop && t.failover_walks && t.key_too_long &&
				    t.no_ring && t.all_down && t.dropped_no_key),
	      "the mix reaches every outcome (parse errors, fragments, not ours, both slots, "
	      "walks, too long, no ring, all down, drops)");
	kr_image_free(&img[0]);
	kr_image_free(&img[1]);
	kr_ring_free(ring[0]);
	kr_ring_free(ring[1]);
	keyrouter_bpf__destroy(skel);
	return tap_done();
}
