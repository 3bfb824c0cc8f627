// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The data path against an independent oracle: tests/oracle/kr_oracle.py (Python, written
 * from the documented rules, sharing no code with include/kr_parse.h / include/kr_key.h;
 * a sample of its header decoding is checked against scapy's dissection) generates random
 * and mutated frames -- every extractor, VLAN tags (802.1Q, 802.1ad, a third tag, odd
 * TPIDs), IPv4 options and lying lengths, IPv6 extension headers (up to 10), first and
 * non-first fragments, other protocols, truncations, QUIC long and short headers, memcached
 * keys at the end of the payload window -- with its expectation of each: verdict, the
 * counter that counts it, the service, the key status, the key bytes and the key hash
 * (zlib CRC-32, or its own SipHash-1-3 for keyed services).  Every frame runs through the
 * XDP and the TC program (BPF_PROG_TEST_RUN, debug trace on), which must both give exactly
 * that; a routed frame must leave with the MAC of the backend the engine's ring assigns to
 * the oracle's hash, in the ring of the oracle's service (one ring per service).
 *   KR_ORACLE_N=N (default 100000), KR_ORACLE_SEED=S; `make fuzz` runs more
 *   (scripts/fuzz.sh).  A difference prints the whole frame in hex.
 * The world's rings (one per service): all up; all down with exactly 65 points (the walk
 * covers the whole ring: all_down); all down with 160 points of 4 backends (the walk stops
 * at 64 points, the backend table scan finds none up: all_down); all down with 300
 * backends (more than the 256 table entries scanned: walk_limit, documented); 1 of 100
 * backends up (routed to it when it is within 64 points of the key's point, else
 * walk_limit: decided here from the engine's ring); not published (no_ring).
 * QUIC-LB (docs/quic.md): two quic services carry the oracle's QUIC-LB configurations
 * (plaintext, single pass, four pass; several rotations, two keys) and server IDs of ring
 * backends and of backends outside the ring (up, drain, down); for each of their frames the
 * oracle (tests/lib/quic_lb_oracle.py decoding the CID) names the QUIC-LB outcome, and the
 * service's kr_qlb_stats counter of exactly that outcome must count it (and the routed
 * counter of its rotation); a CID-routed frame must leave with its server's MAC, a fallback
 * with the ring's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tap.h"
#include "kr_datapath_kern_user.h"
#include "continuum.h"
#include "image.h"
#include "publish.h"
#include "kr_siphash.h"
#include "kr_quic_lb_kern_user.h"
#include "keyrouter.skel.h"

#define XDP_DROP	1
#define XDP_PASS	2
#define XDP_TX		3
#define TC_OK		0
#define TC_SHOT		2
#define TC_REDIRECT	7
#define FRAME_MAX	4096

enum { V_PASS, V_DROP, V_FWD };
enum { R_PARSE_ERROR, R_FRAGMENT, R_NOMATCH, R_NO_KEY, R_TOO_LONG, R_BAD_SERVICE, R_NO_RING,
       R_ALL_DOWN, R_WALK_LIMIT, R_ROUTED, NREASON };
static const char *rname[NREASON] = { "parse_error", "fragment", "passed_nomatch", "no_key",
				      "key_too_long", "bad_service", "no_ring", "all_down",
				      "walk_limit", "routed" };
enum { RK_UP, RK_DOWN65, RK_DOWNBIG, RK_NONE, RK_DOWN300, RK_WALK };

struct __attribute__((packed)) svc_rec {
	uint16_t port;
	uint8_t family, addr[16], key, cid;
	uint16_t off, plen;
	uint8_t delim, flags, nokey, toolong, noroute, ring;
};

#define MAXSVC	32
#define NB	6			/* backends of an "up" ring */
static struct svc_rec svcs[MAXSVC];
static uint32_t nsvc;
static struct kr_ring *ring[MAXSVC];
static uint32_t ring_ids[MAXSVC][300];
static struct keyrouter_bpf *skel;
static int xdp_fd, tc_fd, cnt_fd, qlb_stats_fd;

/* QUIC-LB configurations, server IDs and extra backends, as the oracle sends them */
struct __attribute__((packed)) qlb_conf_rec {
	uint8_t svc, cr, sid_len, nonce_len, keyed, key[16];
};
struct __attribute__((packed)) qlb_sid_rec {
	uint8_t svc, cr, sid_len, sid[16];
	uint16_t be;
};
struct __attribute__((packed)) qlb_extra_rec {
	uint8_t svc;
	uint16_t be;
	uint8_t state;
};
#define QLB_MAXCONF	64
#define QLB_MAXSID	1024
static struct qlb_conf_rec qconf[QLB_MAXCONF];
static struct qlb_sid_rec qsid[QLB_MAXSID];
static struct qlb_extra_rec qextra[QLB_MAXCONF];
static uint32_t nqconf, nqsid, nqextra;
enum { Q_NOUT = KR_QLB_NOUTCOMES, Q_NONE = 255 };
static const char *qname[Q_NOUT] = { "routed", "unroutable", "unknown_config",
				     "unknown_server_id", "too_short", "backend_down",
				     "too_long" };

static void die(const char *what, const char *msg)
{
	printf("not ok %d - setup: %s: %s\n", ++tap_n, what, msg);
	printf("1..%d\n", tap_n);
	exit(1);
}

static uint32_t be_id(uint32_t svc, uint32_t i)
{
	return 1000 + 512 * svc + i;
}

/* One ring per service: ring id 10 + index (RK_NONE: 200 + index, never published). */
static void world(void)
{
	int svc_fd = bpf_map__fd(skel->maps.kr_services);
	int be_fd = bpf_map__fd(skel->maps.kr_backends);
	int rings_fd = bpf_map__fd(skel->maps.kr_rings);
	static const uint8_t secret[16] = { 0xef, 0xbe, 0xad, 0xde, 0xdf, 0x0a, 0xd8, 0xbb,
					    0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01 };
	struct kr_hash_secret hs;
	uint32_t zero = 0;
	struct kr_err err;

	kr_hash_secret_from_bytes(&hs, secret);	/* the oracle's SECRET */
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.kr_hash_key), &zero, &hs, BPF_ANY))
		die("kr_hash_key", strerror(errno));
	for (uint32_t s = 0; s < nsvc; s++) {
		const struct svc_rec *r = &svcs[s];
		struct kr_service_key k = { .proto = 17, .family = r->family };
		struct kr_service v = {
			.key_type = r->key, .fwd_mode = KR_FWD_L2, .policy_no_key = r->nokey,
			.policy_too_long = r->toolong, .policy_no_route = r->noroute,
			.quic_cid_len = r->cid, .payload_delim = r->delim, .flags = r->flags,
			.payload_off = r->off, .payload_len = r->plen,
		};
		static struct kr_backend_spec b[300];
		uint32_t nb = r->ring == RK_DOWN65 ? 13 : r->ring == RK_DOWNBIG ? 4 :
			      r->ring == RK_DOWN300 ? 300 : r->ring == RK_WALK ? 100 : NB;
		uint32_t pm = r->ring == RK_DOWN65 ? 5 : r->ring == RK_DOWN300 ||
			      r->ring == RK_WALK ? 1 : 40;
		struct kr_image im;
		char a[40];

		memcpy(k.addr, r->addr, 16);
		k.port = htons(r->port);
		v.ring_id = r->ring == RK_NONE ? 200 + s : 10 + s;
		/* QUIC-LB: the oracle's off / plen are the QUIC-LB id / tag (the same union) */
		if (r->flags & KR_SVC_F_QUIC_LB)
			v.qlb_id = r->off, v.qlb_tag = r->plen;
		if (bpf_map_update_elem(svc_fd, &k, &v, BPF_ANY))
			die("service", strerror(errno));
		if (r->ring == RK_NONE)
			continue;
		for (uint32_t i = 0; i < nb; i++) {
			struct kr_backend be = { .family = 4, .mac = { 0x02, 0xbe, 0, 0 } };
			uint32_t id = be_id(s, i);

			snprintf(a, sizeof(a), "10.%u.%u.%u:53", s, (i + 1) / 256, (i + 1) % 256);
			if (kr_sockaddr_parse(a, &b[i].addr, &err))
				die("address", err.msg);
			b[i].weight = 1;
			ring_ids[s][i] = id;
			be.addr[0] = 10, be.addr[1] = (uint8_t)s;
			be.addr[2] = (uint8_t)((i + 1) / 256), be.addr[3] = (uint8_t)(i + 1);
			be.mac[4] = (uint8_t)(id >> 8), be.mac[5] = (uint8_t)id;
			be.state = r->ring == RK_UP || (r->ring == RK_WALK && i == 0) ?
				   KR_BACKEND_UP : KR_BACKEND_DOWN;
			if (bpf_map_update_elem(be_fd, &id, &be, BPF_ANY))
				die("backend", strerror(errno));
		}
		if (kr_ring_build(&ring[s], b, nb, KR_RING_V2, pm, &err) ||
		    kr_image_encode(&im, ring[s], ring_ids[s], &err) ||
		    kr_publish(rings_fd, v.ring_id, 0, im.buf, im.hdr->nchunks, &err))
			die("ring", err.msg);
		kr_image_free(&im);
		if (r->ring == RK_DOWN65)
			CHECK(ring[s]->npoints == KR_MAX_WALK + 1, "service %u: a ring of exactly %u "
			      "points (walk bound + 1), all down", s, ring[s]->npoints);
		if (r->ring == RK_DOWNBIG || r->ring == RK_DOWN300)
			CHECK(ring[s]->npoints > KR_MAX_WALK + 1, "service %u: a ring of %u points of "
			      "%u backends (more than the walk covers), all down", s,
			      ring[s]->npoints, nb);
	}
	for (uint32_t i = 0; i < nqconf; i++) {
		const struct qlb_conf_rec *q = &qconf[i];
		struct kr_qlb_conf c;
		uint32_t idx;

		if (q->svc >= nsvc || !(svcs[q->svc].flags & KR_SVC_F_QUIC_LB) || q->cr > 6 ||
		    kr_qlb_conf_init(&c, q->sid_len, q->nonce_len, 0, q->keyed ? q->key : NULL))
			die("quic-lb config", "bad record from the oracle");
		c.tag = svcs[q->svc].plen;
		idx = kr_qlb_conf_index(svcs[q->svc].off, q->cr);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.kr_qlb_configs), &idx, &c, BPF_ANY))
			die("quic-lb config", strerror(errno));
	}
	for (uint32_t i = 0; i < nqsid; i++) {
		const struct qlb_sid_rec *q = &qsid[i];
		struct kr_qlb_sid_key k = { .cr = q->cr, .sid_len = q->sid_len };
		struct kr_qlb_sid_val v = { .backend_id = be_id(q->svc, q->be) };

		if (q->svc >= nsvc || q->sid_len > 15 || q->be >= 512)
			die("quic-lb server id", "bad record from the oracle");
		k.qlb_id = svcs[q->svc].off;
		v.tag = svcs[q->svc].plen;
		memcpy(k.sid, q->sid, 16);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.kr_qlb_servers), &k, &v, BPF_ANY))
			die("quic-lb server id", strerror(errno));
	}
	for (uint32_t i = 0; i < nqextra; i++) {
		const struct qlb_extra_rec *q = &qextra[i];
		struct kr_backend be = { .family = 4, .mac = { 0x02, 0xbe, 0, 0 } };
		uint32_t id = be_id(q->svc, q->be);

		if (q->svc >= nsvc || q->be >= 512 || q->state > KR_BACKEND_DRAIN)
			die("quic-lb backend", "bad record from the oracle");
		be.addr[0] = 10, be.addr[1] = q->svc, be.addr[2] = 200, be.addr[3] = (uint8_t)q->be;
		be.mac[4] = (uint8_t)(id >> 8), be.mac[5] = (uint8_t)id;
		be.state = q->state;
		if (bpf_map_update_elem(be_fd, &id, &be, BPF_ANY))
			die("quic-lb backend", strerror(errno));
	}
}

/* The QUIC-LB counters of one QUIC-LB id, summed over the CPUs. */
static void qlb_counters(uint32_t qlb_id, struct kr_qlb_counters *sum)
{
	static int ncpu;
	static struct kr_qlb_counters *v;

	if (!v) {
		ncpu = libbpf_num_possible_cpus();
		v = calloc(ncpu, sizeof(*v));
	}
	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(qlb_stats_fd, &qlb_id, v))
		die("quic-lb counters", strerror(errno));
	for (int c = 0; c < ncpu; c++)
		for (int f = 0; f < 8; f++)
			sum->n[f] += v[c].n[f], sum->routed_cr[f] += v[c].routed_cr[f];
}

static void counters(struct kr_counters *sum)
{
	static int ncpu;
	static struct kr_counters *v;
	uint32_t zero = 0;

	if (!v) {
		ncpu = libbpf_num_possible_cpus();
		v = calloc(ncpu, sizeof(*v));
	}
	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(cnt_fd, &zero, v))
		die("counters", strerror(errno));
	for (int c = 0; c < ncpu; c++)
		for (size_t f = 0; f < sizeof(*sum) / 8; f++)
			((uint64_t *)sum)[f] += ((uint64_t *)&v[c])[f];
}

/* The counter of a reason, and the verdict counter. */
static uint64_t reason_count(const struct kr_counters *c, int r)
{
	switch (r) {
	case R_PARSE_ERROR: return c->parse_error;
	case R_FRAGMENT: return c->fragment;
	case R_NOMATCH: return c->passed_nomatch;
	case R_NO_KEY: return c->no_key;
	case R_TOO_LONG: return c->key_too_long;
	case R_BAD_SERVICE: return c->bad_service;
	case R_NO_RING: return c->no_ring;
	case R_ALL_DOWN: return c->all_down;
	case R_WALK_LIMIT: return c->walk_limit;
	default: return c->routed;
	}
}

struct rec {
	uint32_t len;
	uint8_t frame[FRAME_MAX];
	uint8_t verdict, reason, svc, status;
	uint16_t klen;
	uint8_t key[KR_KEY_BUF];
	uint32_t hash;
	uint8_t flags;
	uint8_t qlb_out, qlb_cr;	/* QUIC-LB outcome (Q_NONE: not reached), rotation */
	uint16_t qlb_be;		/* backend index routed to by CID; 0xffff: the ring */
};

/* RK_WALK: only ring-local backend 0 is up.  Routed to it when one of the key's point and
 * the KR_MAX_WALK points after it is backend 0's, else the walk limit (policy). */
static void resolve_walk(struct rec *r)
{
	const struct kr_ring *rg = ring[r->svc];
	uint32_t idx = kr_ring_lower_bound(rg, r->hash);

	for (uint32_t i = 0; i <= KR_MAX_WALK; i++)
		if (rg->backend[(idx + i) % rg->npoints] == 0)
			return;
	r->reason = R_WALK_LIMIT;
	r->verdict = svcs[r->svc].noroute == KR_POLICY_DROP ? V_DROP : V_PASS;
}

static int rd(FILE *f, void *p, size_t n)
{
	return fread(p, 1, n, f) == n ? 0 : -1;
}

/* Next record: 1; 0 at the end (the trailer: frames sampled for scapy, disagreements,
 * undissected); -1 on a bad stream. */
static int next(FILE *f, struct rec *r, uint32_t *trailer)
{
	if (rd(f, &r->len, 4))
		return -1;
	if (r->len == 0xffffffffu)
		return rd(f, trailer, 3 * 4) ? -1 : 0;
	if (r->len > FRAME_MAX || rd(f, r->frame, r->len) || rd(f, &r->verdict, 1) ||
	    rd(f, &r->reason, 1) || rd(f, &r->svc, 1) || rd(f, &r->status, 1) ||
	    rd(f, &r->klen, 2) || r->klen > KR_MAX_KEY_LEN || rd(f, r->key, r->klen) ||
	    rd(f, &r->hash, 4) || rd(f, &r->flags, 1) || rd(f, &r->qlb_out, 1) ||
	    rd(f, &r->qlb_cr, 1) || rd(f, &r->qlb_be, 2) || r->reason >= NREASON ||
	    (r->svc != 255 && r->svc >= nsvc) || (r->qlb_out != Q_NONE && r->qlb_out >= Q_NOUT) ||
	    (r->qlb_out != Q_NONE && (r->svc == 255 || !(svcs[r->svc].flags & KR_SVC_F_QUIC_LB))))
		return -1;
	return 1;
}

struct stats {
	uint64_t frames, mutated, runs, tc_skipped, mism, reason[NREASON], keys, keyed;
	uint64_t walk_routed;		/* RK_WALK keys routed to the one up backend */
	uint64_t qlb[Q_NOUT], qlb_cid_routed_ring_down, qlb_drain;
};

static void hexdump(char *out, const uint8_t *p, size_t n, size_t max)
{
	size_t i;

	for (i = 0; i < n && i < max; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * i] = 0;
}

/* The QUIC-LB counters moved as the oracle says: the outcome's counter by one (and the
 * routed counter of the rotation), nothing else; nothing at all when the stage is not
 * reached. */
static int qlb_agrees(const struct rec *r, const struct kr_qlb_counters *a,
		      const struct kr_qlb_counters *b, char *why, size_t n)
{
	for (int i = 0; i < 8; i++) {
		uint64_t dn = b->n[i] - a->n[i], dc = b->routed_cr[i] - a->routed_cr[i];
		uint64_t wn = r->qlb_out == i, wc = r->qlb_out == KR_QLB_ROUTED && r->qlb_cr == i;

		if (dn != wn || dc != wc) {
			snprintf(why, n, "QUIC-LB counter %s %s by %llu (rotation %d: %llu), oracle: "
				 "%s (rotation %u)", i < Q_NOUT ? qname[i] : "?",
				 dn ? "moved" : "did not move", (unsigned long long)dn, i,
				 (unsigned long long)dc, r->qlb_out == Q_NONE ? "stage not reached" :
				 qname[r->qlb_out], r->qlb_cr);
			return 0;
		}
	}
	return 1;
}

/* One run of one program on the frame; 1 agrees, 0 differs, -1 not runnable. */
static int run_one(const struct rec *r, int tc, struct kr_counters *prev, struct stats *st,
		   uint64_t no)
{
	static uint8_t out[FRAME_MAX + 256];
	const struct kr_trace *t = &skel->bss->kr_trace_last;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = r->frame, .data_size_in = r->len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	uint64_t seq = t->seq;
	int qsvc = r->svc != 255 && (svcs[r->svc].flags & KR_SVC_F_QUIC_LB);
	struct kr_qlb_counters q0, q1;
	struct kr_counters c;
	char why[320] = "", hex[2 * FRAME_MAX + 1];
	int want, ok = 1, traced = r->reason >= R_NO_KEY;

	if (qsvc)
		qlb_counters(svcs[r->svc].off, &q0);
	if (bpf_prog_test_run_opts(tc ? tc_fd : xdp_fd, &o)) {
		/* skb test runs refuse a frame shorter than the IP header its ethertype
		 * announces: it cannot reach TC at all */
		if (errno == EINVAL && tc && r->len < 14 + 40) {
			st->tc_skipped++;
			return -1;
		}
		die("test_run", strerror(errno));
	}
	st->runs++;
	counters(&c);
	if (qsvc)
		qlb_counters(svcs[r->svc].off, &q1);
	want = r->verdict == V_PASS ? (tc ? TC_OK : XDP_PASS) :
	       r->verdict == V_DROP ? (tc ? TC_SHOT : XDP_DROP) : (tc ? TC_REDIRECT : XDP_TX);
	if ((int)o.retval != want) {
		ok = 0;
		snprintf(why, sizeof(why), "verdict %u, oracle %d (%s)", o.retval, want,
			 rname[r->reason]);
	} else if (c.seen != prev->seen + 1 ||
		   reason_count(&c, r->reason) != reason_count(prev, r->reason) + 1 ||
		   c.passed + c.dropped + c.routed != prev->passed + prev->dropped + prev->routed + 1) {
		ok = 0;
		snprintf(why, sizeof(why), "the counter %s did not count it", rname[r->reason]);
	} else if (!traced && t->seq != seq) {
		ok = 0;
		snprintf(why, sizeof(why), "the kernel extracted a key (status %u), the oracle "
			 "stops before (%s)", t->status, rname[r->reason]);
	} else if (traced && (t->seq != seq + 1 || t->status != r->status)) {
		ok = 0;
		snprintf(why, sizeof(why), "key status %u (traced %d), oracle %u",
			 t->status, t->seq == seq + 1, r->status);
	} else if (traced && r->status == KR_KEY_OK &&
		   (t->key_len != r->klen || memcmp(t->key, r->key, r->klen) || t->key_hash != r->hash)) {
		char kk[2 * 40 + 1], ko[2 * 40 + 1];

		hexdump(kk, t->key, t->key_len, 40);
		hexdump(ko, r->key, r->klen, 40);
		ok = 0;
		snprintf(why, sizeof(why), "key %s (%u bytes, hash %08x), oracle %s (%u, %08x)", kk,
			 t->key_len, t->key_hash, ko, r->klen, r->hash);
	} else if (qsvc && !qlb_agrees(r, &q0, &q1, why, sizeof(why))) {
		ok = 0;
	} else if (r->reason == R_ROUTED) {
		const struct kr_ring *rg = ring[r->svc];
		uint32_t id = r->qlb_be != 0xffff ? be_id(r->svc, r->qlb_be) :
			      ring_ids[r->svc][svcs[r->svc].ring == RK_WALK ? 0 :
					       rg->backend[kr_ring_lower_bound(rg, r->hash)]];

		if (t->route.backend_id != id || o.data_size_out < 12 || out[0] != 0x02 ||
		    out[1] != 0xbe || out[4] != (uint8_t)(id >> 8) || out[5] != (uint8_t)id) {
			ok = 0;
			snprintf(why, sizeof(why), "routed to backend %u (MAC ..%02x:%02x), the "
				 "service's ring says %u", t->route.backend_id, out[4], out[5], id);
		}
	}
	*prev = c;
	if (!ok && st->mism++ < 10) {
		hexdump(hex, r->frame, r->len, FRAME_MAX);
		DIAG("frame %llu [%s]%s, %u bytes: %s; frame %s", (unsigned long long)no,
		     tc ? "tc" : "xdp", r->flags & 1 ? " (mutated)" : "", r->len, why, hex);
	}
	return ok;
}

int main(void)
{
	static struct rec r;
	const char *n_env = getenv("KR_ORACLE_N"), *seed = getenv("KR_ORACLE_SEED");
	long n = n_env ? atol(n_env) : 100000;
	uint32_t tr[3] = { 0, 0, 0 };	/* scapy: sampled, disagree, undissected */
	struct kr_counters c0, c;
	struct stats st = { 0 };
	char cmd[512], magic[4];
	FILE *f;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	skel = keyrouter_bpf__open();
	if (!skel)
		die("open skeleton", strerror(errno));
	skel->rodata->kr_cfg_trace = 1;
	if (keyrouter_bpf__load(skel))
		die("load keyrouter.bpf.o", "the verifier refused it");
	xdp_fd = bpf_program__fd(skel->progs.kr_xdp);
	tc_fd = bpf_program__fd(skel->progs.kr_tc);
	cnt_fd = bpf_map__fd(skel->maps.kr_counters);
	qlb_stats_fd = bpf_map__fd(skel->maps.kr_qlb_stats);
	rc = system("/usr/bin/python3 tests/oracle/kr_oracle.py selftest > /dev/null");
	CHECK(rc == 0, "the oracle's own known answers (kr_oracle.py selftest: DNS, VLANs, "
	      "fragments, options, QUIC, memcache, payload rules, tuple, policies, SipHash-2-4 "
	      "vector, scapy on 300 frames)");
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 tests/oracle/kr_oracle.py gen %ld %s", n,
		 seed ? seed : "0x6f7261");
	f = popen(cmd, "r");
	if (!f || rd(f, magic, 4) || memcmp(magic, "KRO1", 4) || rd(f, &nsvc, 4) || nsvc > MAXSVC ||
	    rd(f, svcs, nsvc * sizeof(svcs[0])) ||
	    rd(f, &nqconf, 4) || nqconf > QLB_MAXCONF || rd(f, qconf, nqconf * sizeof(qconf[0])) ||
	    rd(f, &nqsid, 4) || nqsid > QLB_MAXSID || rd(f, qsid, nqsid * sizeof(qsid[0])) ||
	    rd(f, &nqextra, 4) || nqextra > QLB_MAXCONF ||
	    rd(f, qextra, nqextra * sizeof(qextra[0])))
		die("oracle", "no world from tests/oracle/kr_oracle.py (are python3-scapy and "
		    "python3-cryptography installed?)");
	world();
	DIAG("oracle: %s (%u services)", cmd, nsvc);
	counters(&c0);
	c = c0;
	while ((rc = next(f, &r, tr)) == 1) {
		if (r.reason == R_ROUTED && svcs[r.svc].ring == RK_WALK) {
			resolve_walk(&r);
			st.walk_routed += r.reason == R_ROUTED;
		}
		st.frames++;
		st.mutated += r.flags & 1;
		st.reason[r.reason]++;
		st.keys += r.status == KR_KEY_OK && r.reason >= R_NO_KEY;
		st.keyed += r.reason == R_ROUTED && (svcs[r.svc].flags & KR_SVC_F_KEYED_HASH);
		if (r.qlb_out != Q_NONE) {
			st.qlb[r.qlb_out]++;
			st.qlb_cid_routed_ring_down += r.qlb_out == KR_QLB_ROUTED &&
						       svcs[r.svc].ring != RK_UP;
			for (uint32_t i = 0; i < nqextra; i++)
				st.qlb_drain += r.qlb_out == KR_QLB_ROUTED && qextra[i].svc == r.svc &&
						qextra[i].be == r.qlb_be &&
						qextra[i].state == KR_BACKEND_DRAIN;
		}
		run_one(&r, 0, &c, &st, st.frames - 1);
		run_one(&r, 1, &c, &st, st.frames - 1);
	}
	CHECK(pclose(f) == 0 && rc == 0, "the oracle's stream is whole (%llu frames)",
	      (unsigned long long)st.frames);
	CHECK(st.frames == (uint64_t)n, "%llu frames of %ld", (unsigned long long)st.frames, n);
	DIAG("frames %llu (%llu mutated), %llu program runs (XDP + TC; %llu frames too short for "
	     "an skb test run)", (unsigned long long)st.frames, (unsigned long long)st.mutated,
	     (unsigned long long)st.runs, (unsigned long long)st.tc_skipped);
	DIAG("outcomes: parse_error %llu, fragment %llu, nomatch %llu, no_key %llu, too_long %llu, "
	     "bad_service %llu, no_ring %llu, all_down %llu, walk_limit %llu, routed %llu "
	     "(%llu keyed); keys %llu", (unsigned long long)st.reason[0],
	     (unsigned long long)st.reason[1], (unsigned long long)st.reason[2],
	     (unsigned long long)st.reason[3], (unsigned long long)st.reason[4],
	     (unsigned long long)st.reason[5], (unsigned long long)st.reason[6],
	     (unsigned long long)st.reason[7], (unsigned long long)st.reason[8],
	     (unsigned long long)st.reason[9], (unsigned long long)st.keyed,
	     (unsigned long long)st.keys);
	DIAG("QUIC-LB: routed by CID %llu (%llu to draining backends, %llu while the ring is all "
	     "down), unroutable %llu, unknown_config %llu, unknown_server_id %llu, too_short %llu, "
	     "backend_down %llu, too_long %llu", (unsigned long long)st.qlb[0],
	     (unsigned long long)st.qlb_drain, (unsigned long long)st.qlb_cid_routed_ring_down,
	     (unsigned long long)st.qlb[1], (unsigned long long)st.qlb[2],
	     (unsigned long long)st.qlb[3], (unsigned long long)st.qlb[4],
	     (unsigned long long)st.qlb[5], (unsigned long long)st.qlb[6]);
	CHECK(st.mism == 0, "%llu frames through XDP and TC: verdict, counter, key status, key "
	      "bytes, key hash, backend and QUIC-LB counter = the independent oracle (%llu "
	      "differences)",
	      (unsigned long long)st.frames, (unsigned long long)st.mism);
	CHECK(c.seen - c0.seen == st.runs, "every run counted once in seen (%llu)",
	      (unsigned long long)(c.seen - c0.seen));
	CHECK(tr[1] == 0 && tr[0] >= st.frames / 40 && tr[2] <= tr[0] / 20,
	      "scapy's dissection agrees with the oracle's headers (addresses, ports, UDP "
	      "payload) on %u sampled frames (%u disagree, %u scapy cannot dissect)", tr[0] - tr[2],
	      tr[1], tr[2]);
	{
		int all = 1;

		for (int i = 0; i < NREASON; i++)
			all &= st.reason[i] > 0;
		for (int i = 0; i < Q_NOUT; i++)
			all &= st.qlb[i] > 0;
		CHECK(st.frames < 10000 || (all && st.keyed && st.mutated && st.walk_routed &&
					    st.qlb_drain && st.qlb_cid_routed_ring_down),
		      "the mix reaches every outcome (each reason, each QUIC-LB outcome, CIDs of "
		      "draining backends, CIDs routed while the ring is all down, keyed hashes, "
		      "mutations, walks to the one up backend: %llu)",
		      (unsigned long long)st.walk_routed);
	}
	for (uint32_t s = 0; s < nsvc; s++)
		kr_ring_free(ring[s]);
	keyrouter_bpf__destroy(skel);
	return tap_done();
}
