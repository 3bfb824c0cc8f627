// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * QUIC-LB in the data path (bpf/kr_quic_lb_stage.h) through BPF_PROG_TEST_RUN, the XDP and
 * the TC program alike, IPv4 and IPv6, l2 and ipip (docs/quic.md "Counters").  Every row
 * is a QUIC packet for a `quic` service with three QUIC-LB configurations (plaintext,
 * four-pass, single-pass); CIDs are made by the userspace codec with server IDs that map
 * to backends 10 and 11 (up), 12 (down) or none.  Each row checks the verdict, the
 * backend the frame was sent to (its destination MAC; the outer destination for ipip),
 * the QUIC-LB outcome counter of the service and the global counters:
 *   routed by CID: short headers, long headers of v1, version negotiation (version 0) and
 *     an unknown version; a draining backend keeps its connections;
 *   fallback to the ring on the DCID (backend = the ring's point for crc32(DCID), never
 *     the decoded one): config rotation 0b111, unknown rotation, unknown server ID, server
 *     ID of a down backend, DCID shorter than the configuration, DCID > 20 octets, entries
 *     of another service (tag mismatch);
 *   no key at all (service policy, QUIC-LB untouched): zero-length DCID, truncated long
 *     header, short header shorter than the service's cid_length.
 * Then a differential run: 4000 random long-header DCIDs (random rotation bits, lengths 1..22,
 * every configuration, valid server IDs and random octets) through XDP and TC; the
 * program's QUIC-LB trace (outcome, decoded server ID, backend) must equal what the
 * userspace codec and the server-ID table say for every one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tap.h"
#include "kr_datapath_kern_user.h"
#include "pktbuild.h"
#include "crc32.h"
#include "publish.h"
#include "ring_fixture.h"
#include "keyrouter.skel.h"

#define CNT(f)		(offsetof(struct kr_counters, f) / 8)
#define NCNT		(sizeof(struct kr_counters) / 8)
#define V4C		"198.51.100.7"
#define V6C		"2001:db8:c::7"

static struct keyrouter_bpf *skel;
static int xdp_fd, tc_fd, ncpu, ifx_a;
static uint8_t mac_a[6];
static const uint8_t be_mac[3][6] = { { 2, 0, 0, 0, 0, 0x10 }, { 2, 0, 0, 0, 0, 0x11 },
				      { 2, 0, 0, 0, 0, 0x12 } };
static const uint8_t key1[16] = { 0x8f, 0x95, 0xf0, 0x92, 0x45, 0x76, 0x5f, 0x80,
				  0x25, 0x69, 0x34, 0xe5, 0x0c, 0x66, 0x20, 0x7f };
static const uint8_t key2[16] = { 0x4b, 0x83, 0xf5, 0x10, 0x1c, 0xfc, 0xeb, 0xc9,
				  0x3a, 0xf8, 0xe0, 0x1a, 0x15, 0x43, 0x45, 0x0a };
#define TAG1	0x1111
#define TAG2	0x2222

/* the configurations of service 1 (qlb id 1): rotation -> lengths, key */
static struct kr_qlb_conf conf[3];

/* ---- kernel access ------------------------------------------------------------------ */

static int run(bool xdp, const uint8_t *in, size_t len, uint8_t *out, uint32_t *olen,
	       uint32_t *ret)
{
	struct xdp_md ctx = { .data_end = (uint32_t)len, .ingress_ifindex = (uint32_t)ifx_a };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (uint32_t)len,
		    .data_out = out, .data_size_out = PKT_MAX, .repeat = 1);
	int rc;

	if (xdp) {
		o.ctx_in = &ctx;
		o.ctx_size_in = sizeof(ctx);
	}
	rc = bpf_prog_test_run_opts(xdp ? xdp_fd : tc_fd, &o);
	*olen = o.data_size_out;
	*ret = o.retval;
	return rc ? -errno : 0;
}

static void counters(uint64_t *g, uint64_t *q)
{
	struct kr_counters v[ncpu];
	struct kr_qlb_counters w[ncpu];
	uint32_t zero = 0, id = 1;

	memset(g, 0, NCNT * 8);
	memset(q, 0, 8 * 8);
	if (bpf_map__lookup_elem(skel->maps.kr_counters, &zero, 4, v, sizeof(v), 0) ||
	    bpf_map__lookup_elem(skel->maps.kr_qlb_stats, &id, 4, w, sizeof(w), 0)) {
		perror("counters");
		exit(1);
	}
	for (int c = 0; c < ncpu; c++) {
		for (size_t f = 0; f < NCNT; f++)
			g[f] += ((uint64_t *)&v[c])[f];
		for (size_t f = 0; f < 8; f++)
			q[f] += w[c].n[f];
	}
}

static void svc_add(const char *vip, uint16_t port, struct kr_service s)
{
	struct kr_service_key k = { .proto = 17 };

	k.port = htons(port);
	k.family = strchr(vip, ':') ? 6 : 4;
	inet_pton(k.family == 6 ? AF_INET6 : AF_INET, vip, k.addr);
	if (bpf_map__update_elem(skel->maps.kr_services, &k, sizeof(k), &s, sizeof(s), 0)) {
		perror("service update");
		exit(1);
	}
}

static void backend_set(uint32_t id, const char *addr, const uint8_t *mac, uint8_t state)
{
	struct kr_backend b = { .state = state };

	b.family = strchr(addr, ':') ? 6 : 4;
	inet_pton(b.family == 6 ? AF_INET6 : AF_INET, addr, b.addr);
	if (mac)
		memcpy(b.mac, mac, 6);
	if (bpf_map__update_elem(skel->maps.kr_backends, &id, 4, &b, sizeof(b), 0)) {
		perror("backend update");
		exit(1);
	}
}

static void backend_state(uint32_t id, uint8_t state)
{
	struct kr_backend b;

	bpf_map__lookup_elem(skel->maps.kr_backends, &id, 4, &b, sizeof(b), 0);
	b.state = state;
	bpf_map__update_elem(skel->maps.kr_backends, &id, 4, &b, sizeof(b), 0);
}

static void conf_set(uint16_t qlb_id, unsigned cr, const struct kr_qlb_conf *c, uint16_t tag)
{
	struct kr_qlb_conf v = *c;
	uint32_t k = kr_qlb_conf_index(qlb_id, cr);

	v.tag = tag;
	if (bpf_map__update_elem(skel->maps.kr_qlb_configs, &k, 4, &v, sizeof(v), 0)) {
		perror("config update");
		exit(1);
	}
}

static void sid_set(uint16_t qlb_id, unsigned cr, const uint8_t *sid, unsigned len,
		    uint32_t backend, uint16_t tag)
{
	struct kr_qlb_sid_key k = { .qlb_id = qlb_id, .cr = (uint8_t)cr, .sid_len = (uint8_t)len };
	struct kr_qlb_sid_val v = { .backend_id = backend, .tag = tag };

	memcpy(k.sid, sid, len);
	if (bpf_map__update_elem(skel->maps.kr_qlb_servers, &k, sizeof(k), &v, sizeof(v), 0)) {
		perror("server id update");
		exit(1);
	}
}

/* A ring of n points, point i at hash (i + 1) * 2^32 / (n + 1), global id ids[i]. */
static void ring_publish(uint32_t ring_id, const uint32_t *ids, uint32_t n)
{
	uint32_t hash[16];
	uint16_t be[16];
	struct fx_img im;
	struct kr_err err;

	for (uint32_t i = 0; i < n; i++) {
		hash[i] = (uint32_t)(((uint64_t)(i + 1) << 32) / (n + 1));
		be[i] = (uint16_t)i;
	}
	if (fx_encode(&im, hash, be, n, ids, n) ||
	    kr_publish(bpf_map__fd(skel->maps.kr_rings), ring_id, 0, im.buf, im.nchunks, &err)) {
		fprintf(stderr, "publish ring %u\n", ring_id);
		exit(1);
	}
	free(im.buf);
}

static uint32_t ring_point(uint32_t h, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if ((uint32_t)(((uint64_t)(i + 1) << 32) / (n + 1)) >= h)
			return i;
	return 0;
}

/* ---- QUIC packets --------------------------------------------------------------------- */

/* A CID of configuration cr (0..2) of service 1 for server ID sid; nonce from a counter. */
static size_t cid_make(unsigned cr, const uint8_t *sid, uint8_t *cid)
{
	static uint8_t ctr;
	struct kr_qlb_work w = { 0 };
	__u32 n;

	memcpy(w.pt, sid, conf[cr].sid_len);
	for (unsigned i = 0; i < conf[cr].nonce_len; i++)
		w.pt[conf[cr].sid_len + i] = (uint8_t)(++ctr * 37 + i);
	n = kr_qlb_encode(&conf[cr], &w, cr);
	memcpy(cid, w.cid, n);
	return n;
}

/* Short header: 0x40 | DCID | 24 octets of "packet number and payload". */
static size_t quic_short(const uint8_t *dcid, size_t n, uint8_t *p)
{
	p[0] = 0x41;
	memcpy(p + 1, dcid, n);
	memset(p + 1 + n, 0x5a, 24);
	return 1 + n + 24;
}

/* Long header of `version`: type bits 00, DCID, SCID of 8, 20 octets of payload. */
static size_t quic_long(uint32_t version, const uint8_t *dcid, size_t n, uint8_t *p)
{
	p[0] = 0xc3;
	p[1] = version >> 24;
	p[2] = version >> 16;
	p[3] = version >> 8;
	p[4] = version;
	p[5] = (uint8_t)n;
	memcpy(p + 6, dcid, n);
	p[6 + n] = 8;
	memset(p + 7 + n, 0x33, 8 + 20);
	return 7 + n + 8 + 20;
}

enum where { W_BACKEND, W_RING, W_PASS };

struct row {
	const char *name;
	const uint8_t *pl;		/* UDP payload */
	size_t plen;
	const uint8_t *key;		/* the DCID the ring hashes (W_RING) */
	size_t klen;
	enum where where;
	uint32_t backend;		/* W_BACKEND: 10/11 */
	int outcome;			/* enum kr_qlb_outcome, -1: stage not reached */
	size_t gcnt;			/* global counter besides seen (+ routed/passed) */
	const char *vip;
	uint16_t port;
};

/* Both programs, the row's verdict, frame and counters. */
static void run_row(const struct row *r)
{
	static uint8_t in[PKT_MAX], out[PKT_MAX];

	for (int xdp = 1; xdp >= 0; xdp--) {
		struct pkt_spec s = strchr(r->vip, ':') ? PKT_V6(V6C, 40000, r->vip, r->port) :
				    PKT_V4(V4C, 40000, r->vip, r->port);
		uint64_t g0[NCNT], q0[8], g1[NCNT], q1[8];
		uint32_t olen = 0, ret = 0, want_be = r->backend;
		const char *prog = xdp ? "xdp" : "tc";
		size_t len;
		int rc, ok_verdict, ok_frame = 1, ok_cnt = 1;

		s.payload = r->pl;
		s.plen = r->plen;
		len = pkt_build(&s, in);
		if (r->where == W_RING)
			want_be = 10 + ring_point(kr_crc32(r->key, r->klen), 2);
		counters(g0, q0);
		rc = run(xdp, in, len, out, &olen, &ret);
		counters(g1, q1);
		if (r->where == W_PASS)
			ok_verdict = rc == 0 && ret == (xdp ? XDP_PASS_ : TC_OK_);
		else
			ok_verdict = rc == 0 && ret == (xdp ? XDP_TX_ : TC_REDIRECT_);
		if (r->where != W_PASS)
			ok_frame = olen == len && !memcmp(out, be_mac[want_be - 10], 6) &&
				   !memcmp(out + 12, in + 12, len - 12);
		else
			ok_frame = olen == len && !memcmp(out, in, len);
		for (size_t f = 0; f < NCNT; f++) {
			uint64_t want = f == CNT(seen) || f == r->gcnt;

			if (f == CNT(routed))
				want = r->where != W_PASS;
			if (f == CNT(passed))
				want = r->where == W_PASS;
			if (g1[f] - g0[f] != want) {
				DIAG("%s %s: counter %zu delta %lu, expected %lu", r->name, prog, f,
				     (unsigned long)(g1[f] - g0[f]), (unsigned long)want);
				ok_cnt = 0;
			}
		}
		for (int f = 0; f < 8; f++)
			if (q1[f] - q0[f] != (uint64_t)(f == r->outcome)) {
				DIAG("%s %s: QUIC-LB counter %d delta %lu", r->name, prog, f,
				     (unsigned long)(q1[f] - q0[f]));
				ok_cnt = 0;
			}
		char what[64];

		if (r->where == W_PASS)
			snprintf(what, sizeof(what), "passed untouched, no key");
		else
			snprintf(what, sizeof(what), "%s -> backend %u", r->where == W_RING ?
				 "ring on the DCID" : "by CID", want_be);
		CHECK(ok_verdict && ok_frame && ok_cnt, "%s (%s, %s): %s; counters", r->name, prog,
		      strchr(r->vip, ':') ? "IPv6" : "IPv4", what);
		if (!ok_verdict || !ok_frame)
			DIAG("rc %d ret %u olen %u (in %zu), dst mac ..%02x", rc, ret, olen, len, out[5]);
	}
}

static int sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		DIAG("command failed (%d): %s", rc, cmd);
	return rc;
}

/* A private netns with a veth whose neighbours are the ipip backends (bpf_fib_lookup). */
static int netns_setup(void)
{
	struct ifreq ifr;
	int fd;

	if (unshare(CLONE_NEWNET)) {
		perror("unshare");
		return -1;
	}
	if (sh("ip link set lo up && ip link add kqa type veth peer name kqb && "
	       "ip link set kqa up && ip link set kqb up && "
	       "ip addr add 10.9.0.1/24 dev kqa && ip -6 addr add fd09::1/64 dev kqa nodad && "
	       "ip neigh add 10.9.0.2 lladdr 02:00:00:00:09:02 dev kqa nud permanent && "
	       "ip -6 neigh add fd09::2 lladdr 02:00:00:00:09:06 dev kqa nud permanent && "
	       "sysctl -qw net.ipv4.conf.all.forwarding=1 net.ipv4.conf.lo.forwarding=1 net.ipv4.conf.kqa.forwarding=1 "
	       "net.ipv6.conf.all.forwarding=1"))
		return -1;
	ifx_a = (int)if_nametoindex("kqa");
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "kqa");
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	memcpy(mac_a, ifr.ifr_hwaddr.sa_data, 6);
	return ifx_a ? 0 : -1;
}

static void setup(void)
{
	struct kr_service q = { .ring_id = 0, .key_type = KR_KEY_QUIC, .fwd_mode = KR_FWD_L2,
				.quic_cid_len = 8, .flags = KR_SVC_F_QUIC_LB };
	struct kr_service other = q, tun = q;
	const uint32_t ids0[2] = { 10, 11 }, ids1[1] = { 20 };

	kr_qlb_conf_init(&conf[0], 1, 6, 0, NULL);	/* plaintext, CID 8 */
	kr_qlb_conf_init(&conf[1], 2, 6, 0, key1);	/* four pass (3 passes to decode), CID 9 */
	kr_qlb_conf_init(&conf[2], 3, 13, 0, key2);	/* single pass, CID 17 */
	q.qlb_id = 1;
	q.qlb_tag = TAG1;
	svc_add("192.0.2.10", 443, q);
	svc_add("2001:db8::10", 443, q);
	other.qlb_id = 1;				/* id 1, but another service's tag */
	other.qlb_tag = 0x7777;
	svc_add("192.0.2.10", 8443, other);
	tun.ring_id = 1;
	tun.fwd_mode = KR_FWD_IPIP;
	tun.qlb_id = 2;
	tun.qlb_tag = TAG2;
	inet_pton(AF_INET, "10.9.0.1", tun.tun_src4);
	inet_pton(AF_INET6, "fd09::1", tun.tun_src6);
	svc_add("192.0.2.20", 443, tun);
	svc_add("2001:db8::20", 443, tun);
	for (unsigned cr = 0; cr < 3; cr++)
		conf_set(1, cr, &conf[cr], TAG1);
	conf_set(2, 0, &conf[0], TAG2);
	sid_set(1, 0, (const uint8_t[]){ 0x01 }, 1, 10, TAG1);
	sid_set(1, 0, (const uint8_t[]){ 0x02 }, 1, 11, TAG1);
	sid_set(1, 0, (const uint8_t[]){ 0x03 }, 1, 12, TAG1);
	sid_set(1, 1, (const uint8_t[]){ 0x01, 0x01 }, 2, 11, TAG1);
	sid_set(1, 1, (const uint8_t[]){ 0x01, 0x02 }, 2, 10, TAG1);
	sid_set(1, 2, (const uint8_t[]){ 0xab, 0xcd, 0xef }, 3, 11, TAG1);
	sid_set(2, 0, (const uint8_t[]){ 0x04 }, 1, 20, TAG2);
	sid_set(2, 0, (const uint8_t[]){ 0x06 }, 1, 21, TAG2);
	for (int i = 0; i < 3; i++)
		backend_set(10 + (uint32_t)i, "10.9.0.50", be_mac[i], i == 2 ? KR_BACKEND_DOWN : KR_BACKEND_UP);
	backend_set(20, "10.9.0.2", NULL, KR_BACKEND_UP);
	backend_set(21, "fd09::2", NULL, KR_BACKEND_UP);
	ring_publish(0, ids0, 2);
	ring_publish(1, ids1, 1);
}

static void table(void)
{
	static uint8_t pl[64][128], cid[64][32];
	size_t pn[64], cn[64];
	int n = 0;
	static const char *vips[] = { "192.0.2.10", "2001:db8::10" };

#define ROW(...) run_row(&(struct row){ __VA_ARGS__ })
	for (int v = 0; v < 2; v++) {
		const char *vip = vips[v];

		/* routed by the CID */
		cn[n] = cid_make(0, (const uint8_t[]){ 0x01 }, cid[n]);
		pn[n] = quic_short(cid[n], cn[n], pl[n]);
		ROW("short header, plaintext, server ID 01", pl[n], pn[n], NULL, 0, W_BACKEND, 10,
		    KR_QLB_ROUTED, 0, vip, 443);
		n++;
		cn[n] = cid_make(0, (const uint8_t[]){ 0x02 }, cid[n]);
		pn[n] = quic_long(1, cid[n], cn[n], pl[n]);
		ROW("long header v1, plaintext, server ID 02", pl[n], pn[n], NULL, 0, W_BACKEND, 11,
		    KR_QLB_ROUTED, 0, vip, 443);
		n++;
		cn[n] = cid_make(1, (const uint8_t[]){ 0x01, 0x02 }, cid[n]);
		pn[n] = quic_short(cid[n], cn[n], pl[n]);
		ROW("short header, four pass, server ID 0102 (CID 9 > cid_length 8)", pl[n], pn[n],
		    NULL, 0, W_BACKEND, 10, KR_QLB_ROUTED, 0, vip, 443);
		n++;
		cn[n] = cid_make(1, (const uint8_t[]){ 0x01, 0x01 }, cid[n]);
		pn[n] = quic_long(0, cid[n], cn[n], pl[n]);
		ROW("version negotiation (version 0), four pass, server ID 0101", pl[n], pn[n],
		    NULL, 0, W_BACKEND, 11, KR_QLB_ROUTED, 0, vip, 443);
		n++;
		cn[n] = cid_make(2, (const uint8_t[]){ 0xab, 0xcd, 0xef }, cid[n]);
		pn[n] = quic_long(0xfaceb00c, cid[n], cn[n], pl[n]);
		ROW("unknown version 0xfaceb00c, single pass, server ID abcdef", pl[n], pn[n],
		    NULL, 0, W_BACKEND, 11, KR_QLB_ROUTED, 0, vip, 443);
		n++;
		cn[n] = cid_make(2, (const uint8_t[]){ 0xab, 0xcd, 0xef }, cid[n]);
		pn[n] = quic_short(cid[n], cn[n], pl[n]);
		backend_state(11, KR_BACKEND_DRAIN);
		ROW("short header, single pass, backend 11 draining: keeps its connection", pl[n],
		    pn[n], NULL, 0, W_BACKEND, 11, KR_QLB_ROUTED, 0, vip, 443);
		backend_state(11, KR_BACKEND_UP);
		n++;

		/* fallback: the ring on the DCID */
		cn[n] = cid_make(0, (const uint8_t[]){ 0x01 }, cid[n]);
		cid[n][0] |= 0xe0;
		pn[n] = quic_long(1, cid[n], cn[n], pl[n]);
		ROW("client's Initial, config rotation 0b111", pl[n], pn[n], cid[n], cn[n], W_RING, 0,
		    KR_QLB_FB_UNROUTABLE, 0, vip, 443);
		n++;
		cn[n] = cid_make(0, (const uint8_t[]){ 0x01 }, cid[n]);
		cid[n][0] = (uint8_t)((3 << 5) | (cid[n][0] & 0x1f));
		pn[n] = quic_short(cid[n], cn[n], pl[n]);
		ROW("config rotation 3 (not configured)", pl[n], pn[n], cid[n], 8, W_RING, 0,
		    KR_QLB_FB_UNKNOWN_CONFIG, 0, vip, 443);
		n++;
		cn[n] = cid_make(0, (const uint8_t[]){ 0x09 }, cid[n]);
		pn[n] = quic_short(cid[n], cn[n], pl[n]);
		ROW("unknown server ID 09", pl[n], pn[n], cid[n], 8, W_RING, 0,
		    KR_QLB_FB_UNKNOWN_SID, 0, vip, 443);
		n++;
		cn[n] = cid_make(0, (const uint8_t[]){ 0x03 }, cid[n]);
		pn[n] = quic_short(cid[n], cn[n], pl[n]);
		ROW("server ID 03 of down backend 12", pl[n], pn[n], cid[n], 8, W_RING, 0,
		    KR_QLB_FB_BACKEND_DOWN, 0, vip, 443);
		n++;
		cn[n] = cid_make(2, (const uint8_t[]){ 0xab, 0xcd, 0xef }, cid[n]);
		pn[n] = quic_long(1, cid[n], 12, pl[n]);
		ROW("long header DCID of 12 octets for a 17-octet configuration", pl[n], pn[n],
		    cid[n], 12, W_RING, 0, KR_QLB_FB_TOO_SHORT, 0, vip, 443);
		n++;
		cn[n] = cid_make(2, (const uint8_t[]){ 0xab, 0xcd, 0xef }, cid[n]);
		pn[n] = quic_short(cid[n], 12, pl[n]);
		pn[n] = 1 + 12;				/* the datagram ends inside the CID */
		ROW("short header ending after 12 CID octets (17 needed)", pl[n], pn[n], cid[n], 8,
		    W_RING, 0, KR_QLB_FB_TOO_SHORT, 0, vip, 443);
		n++;
		cn[n] = 21;
		memset(cid[n], 0x11, 21);
		cid[n][0] = 0x08;			/* rotation 0 */
		pn[n] = quic_long(1, cid[n], 21, pl[n]);
		ROW("long header DCID of 21 octets", pl[n], pn[n], cid[n], 21, W_RING, 0,
		    KR_QLB_FB_TOO_LONG, 0, vip, 443);
		n++;

		/* no key: the service's policy (pass), QUIC-LB not reached */
		pn[n] = quic_long(1, NULL, 0, pl[n]);
		ROW("zero-length DCID", pl[n], pn[n], NULL, 0, W_PASS, 0, -1, CNT(no_key), vip, 443);
		n++;
		memcpy(pl[n], (const uint8_t[]){ 0xc3, 0, 0, 0, 1 }, 5);
		ROW("long header truncated before the DCID length", pl[n], 5, NULL, 0, W_PASS, 0, -1,
		    CNT(no_key), vip, 443);
		n++;
		memcpy(pl[n], (const uint8_t[]){ 0xc3, 0, 0, 0, 1, 20, 1, 2, 3 }, 9);
		ROW("long header DCID length 20, 3 octets present", pl[n], 9, NULL, 0, W_PASS, 0, -1,
		    CNT(no_key), vip, 443);
		n++;
		memcpy(pl[n], (const uint8_t[]){ 0x41, 0x01, 2, 3, 4 }, 5);
		ROW("short header shorter than cid_length 8", pl[n], 5, NULL, 0, W_PASS, 0, -1,
		    CNT(no_key), vip, 443);
		n++;
	}
	/* another service's entries: the tags differ */
	cn[n] = cid_make(0, (const uint8_t[]){ 0x01 }, cid[n]);
	pn[n] = quic_short(cid[n], cn[n], pl[n]);
	ROW("service with QUIC-LB id 1 and another tag", pl[n], pn[n], cid[n], 8, W_RING, 0,
	    KR_QLB_FB_UNKNOWN_CONFIG, 0, "192.0.2.10", 8443);
	n++;
#undef ROW
}

/* ipip: the CID chooses backend 21 (IPv6 outer) where the ring has only 20 (IPv4). */
static void ipip_rows(void)
{
	static uint8_t pl[128], cid[32], in[PKT_MAX], out[PKT_MAX];
	static const char *vips[] = { "192.0.2.20", "2001:db8::20" };

	for (int v = 0; v < 2; v++)
		for (int xdp = 1; xdp >= 0; xdp--) {
			struct pkt_spec s = v ? PKT_V6(V6C, 40000, vips[v], 443) :
					    PKT_V4(V4C, 40000, vips[v], 443);
			uint32_t olen, ret;
			size_t len, cl, pln;
			uint8_t dst[16];
			int rc;

			cl = cid_make(0, (const uint8_t[]){ 0x06 }, cid);
			pln = quic_short(cid, cl, pl);
			s.payload = pl;
			s.plen = pln;
			len = pkt_build(&s, in);
			rc = run(xdp, in, len, out, &olen, &ret);
			inet_pton(AF_INET6, "fd09::2", dst);
			CHECK(rc == 0 && ret == (xdp ? XDP_TX_ : TC_REDIRECT_) && out[12] == 0x86 &&
			      out[13] == 0xdd && !memcmp(out + 14 + 24, dst, 16) &&
			      !memcmp(out + 14 + 40, in + 14, len - 14),
			      "ipip (%s, inner IPv%d): server ID 06 -> backend 21, IPv6 outer to fd09::2, "
			      "inner packet intact (ret %u)", xdp ? "xdp" : "tc", v ? 6 : 4, ret);
			cl = cid_make(0, (const uint8_t[]){ 0x04 }, cid);
			pln = quic_short(cid, cl, pl);
			len = pkt_build(&s, in);
			rc = run(xdp, in, len, out, &olen, &ret);
			inet_pton(AF_INET, "10.9.0.2", dst);
			CHECK(rc == 0 && ret == (xdp ? XDP_TX_ : TC_REDIRECT_) && out[12] == 0x08 &&
			      out[13] == 0x00 && !memcmp(out + 14 + 16, dst, 4),
			      "ipip (%s, inner IPv%d): server ID 04 -> backend 20, IPv4 outer to 10.9.0.2",
			      xdp ? "xdp" : "tc", v ? 6 : 4);
		}
}

/* What the data path must decide for DCID cid (userspace codec + the server table). */
static int expect(const uint8_t *cid, size_t len, uint8_t *sid, unsigned *sid_len,
		  uint32_t *backend)
{
	static const struct { unsigned cr, len; uint8_t sid[3]; uint32_t be; } tab[] = {
		{ 0, 1, { 0x01 }, 10 }, { 0, 1, { 0x02 }, 11 }, { 0, 1, { 0x03 }, 12 },
		{ 1, 2, { 0x01, 0x01 }, 11 }, { 1, 2, { 0x01, 0x02 }, 10 },
		{ 2, 3, { 0xab, 0xcd, 0xef }, 11 },
	};
	unsigned cr = cid[0] >> 5;
	struct kr_qlb_work w = { 0 };

	*sid_len = 0;
	if (cr == 7)
		return KR_QLB_FB_UNROUTABLE;
	if (cr > 2)
		return KR_QLB_FB_UNKNOWN_CONFIG;
	if (len > 20)
		return KR_QLB_FB_TOO_LONG;
	memcpy(w.cid, cid, len);
	if (kr_qlb_decode(&conf[cr], &w, (__u32)len) != KR_QLB_OK)
		return KR_QLB_FB_TOO_SHORT;
	*sid_len = conf[cr].sid_len;
	memcpy(sid, w.pt, *sid_len);
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (tab[i].cr == cr && !memcmp(tab[i].sid, sid, tab[i].len)) {
			*backend = tab[i].be;
			return tab[i].be == 12 ? KR_QLB_FB_BACKEND_DOWN : KR_QLB_ROUTED;
		}
	return KR_QLB_FB_UNKNOWN_SID;
}

static void differential(void)
{
	static uint8_t in[PKT_MAX], out[PKT_MAX], pl[128];
	static const uint8_t sids[][3] = { { 0x01 }, { 0x02 }, { 0x03 }, { 0x01, 0x01 },
					   { 0x01, 0x02 }, { 0xab, 0xcd, 0xef } };
	uint64_t seed = 0x9e11;
	int bad = 0, n = 0, outcomes[8] = { 0 };

	for (int i = 0; i < 4000; i++) {
		bool xdp = i % 4 != 3;
		struct pkt_spec s = i % 2 ? PKT_V6(V6C, 40000, "2001:db8::10", 443) :
				    PKT_V4(V4C, 40000, "192.0.2.10", 443);
		struct kr_qlb_trace *t = &skel->bss->kr_qlb_trace_last;
		uint64_t seq = t->seq;
		uint8_t cid[32], sid[16];
		unsigned sid_len, cr = (unsigned)(fx_rand(&seed) % 8);
		uint32_t be = 0, olen, ret;
		size_t len, plen;
		int want;

		if (fx_rand(&seed) % 2 && cr < 3) {	/* a real CID of a configuration */
			len = cid_make(cr, sids[fx_rand(&seed) % 6], cid);
			if (fx_rand(&seed) % 4 == 0)	/* cut or extended */
				len = 1 + fx_rand(&seed) % 22;
		} else {
			len = 1 + fx_rand(&seed) % 22;
			for (size_t k = 0; k < sizeof(cid); k++)
				cid[k] = (uint8_t)fx_rand(&seed);
			cid[0] = (uint8_t)((cr << 5) | (cid[0] & 0x1f));
		}
		want = expect(cid, len, sid, &sid_len, &be);
		plen = quic_long((uint32_t)fx_rand(&seed), cid, len, pl);
		s.payload = pl;
		s.plen = plen;
		run(xdp, in, pkt_build(&s, in), out, &olen, &ret);
		n++;
		outcomes[want & 7]++;
		if (t->seq != seq + 1 || (int)t->outcome != want ||
		    (sid_len && (t->sid_len != sid_len || memcmp(t->sid, sid, sid_len))) ||
		    (want == KR_QLB_ROUTED && t->backend_id != be)) {
			if (bad++ < 5)
				DIAG("differential %d (%s, cr %u, len %zu): kernel outcome %u sid_len %u, "
				     "want %d sid_len %u", i, xdp ? "xdp" : "tc", cr, len, t->outcome,
				     t->sid_len, want, sid_len);
		}
	}
	CHECK(bad == 0 && outcomes[KR_QLB_ROUTED] > 100 && outcomes[KR_QLB_FB_UNKNOWN_SID] > 100,
	      "differential: %d random DCIDs through XDP and TC, the kernel's outcome, server ID "
	      "and backend = userspace for all (routed %d, unroutable %d, unknown config %d, "
	      "unknown server ID %d, too short %d, backend down %d, too long %d); %d differ", n,
	      outcomes[0], outcomes[1], outcomes[2], outcomes[3], outcomes[4], outcomes[5],
	      outcomes[6], bad);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	ncpu = libbpf_num_possible_cpus();
	if (netns_setup()) {
		printf("not ok 1 - netns setup (needs root, iproute2)\n");
		return 1;
	}
	skel = keyrouter_bpf__open();
	if (skel)
		skel->rodata->kr_cfg_trace = 1;
	if (!skel || keyrouter_bpf__load(skel)) {
		printf("not ok 1 - load the data path program\n");
		return 1;
	}
	xdp_fd = bpf_program__fd(skel->progs.kr_xdp);
	tc_fd = bpf_program__fd(skel->progs.kr_tc);
	setup();
	table();
	ipip_rows();
	differential();
	keyrouter_bpf__destroy(skel);
	return tap_done();
}
