// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The data path (bpf/keyrouter.bpf.c) in the real kernel through BPF_PROG_TEST_RUN, XDP and
 * TC programs alike, with table-driven packets built by tests/bpf/pktbuild.h:
 *   - parsing: VLANs, IPv4 options, IPv6 extension headers, fragments, lying lengths,
 *     non-matching traffic (passed byte-identical);
 *   - every extractor, valid and malformed: the key the kernel hashed (its debug trace)
 *     equals the key of config's human form (user/core/keyform.c) and of the userspace build of
 *     the same extractors (user/core/pktref.c); its hash equals user/core/crc32.c;
 *   - policies (pass/drop) for no key, key too long, no ring, all backends down;
 *   - every truncation length of several packets: no crash, pass, untouched, counted;
 *   - forwarding: exact output bytes of l2 and of ipip (IPv4, IPv6 and mixed outer/inner),
 *     outer checksum verified, next hop from bpf_fib_lookup in a private netns;
 *   - failover with one backend and with all backends down;
 *   - the global counters after every packet (delta over the XDP and the TC run);
 *   - TCP (TC program): SYN -> ring, embryonic entry; its ACK -> promoted, same backend;
 *     drain keeps the flow, down moves it to the ring; no entry -> ring, nothing written;
 *     RST frees; options, VLANs, IPv4 options, IPv6 extension headers; bad data offsets
 *     and fragments counted; XDP passes TCP untouched (passed_nomatch).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tap.h"
#include "kr_datapath_kern_user.h"
#include "kr_parse.h"
#include "pktbuild.h"
#include "pktref.h"
#include "crc32.h"
#include "keyform.h"
#include "publish.h"
#include "ring_fixture.h"
#include "keyrouter.skel.h"


enum verdict { V_PASS, V_DROP, V_TX, V_REDIRECT };
#define NONE ((size_t)-1)
#define CNT(f) offsetof(struct kr_counters, f)
#define NCNT (sizeof(struct kr_counters) / 8)

static struct keyrouter_bpf *skel;
static int xdp_fd, tc_fd, svc_fd, be_fd, dev_fd, devm_fd, cnt_fd, bstat_fd, rings_fd, ctl_fd;
static int ncpu, ifx_a;			/* ifindex of the veth with the backends */
static uint8_t mac_a[6];
static const uint8_t nb_mac4[6] = { 0x02, 0, 0, 0, 0x09, 0x02 };	/* 10.9.0.2 */
static const uint8_t nb_mac6[6] = { 0x02, 0, 0, 0, 0x09, 0x06 };	/* fd09::2 */

/* ---- kernel access ------------------------------------------------------------------ */

static int run(bool xdp, const uint8_t *in, size_t len, uint8_t *out, uint32_t *olen,
	       uint32_t *ret, int ingress)
{
	struct xdp_md ctx = { .data_end = (uint32_t)len, .ingress_ifindex = (uint32_t)ingress };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (uint32_t)len,
		    .data_out = out, .data_size_out = PKT_MAX, .repeat = 1);
	int rc;

	if (xdp && ingress) {
		o.ctx_in = &ctx;
		o.ctx_size_in = sizeof(ctx);
	}
	rc = bpf_prog_test_run_opts(xdp ? xdp_fd : tc_fd, &o);
	*olen = o.data_size_out;
	*ret = o.retval;
	return rc ? -errno : 0;
}

static int verdict_of(bool xdp, uint32_t ret)
{
	if (xdp)
		return ret == XDP_PASS_ ? V_PASS : ret == XDP_DROP_ ? V_DROP :
		       ret == XDP_TX_ ? V_TX : ret == XDP_REDIRECT_ ? V_REDIRECT : -1;
	return ret == TC_OK_ ? V_PASS : ret == TC_SHOT_ ? V_DROP :
	       ret == TC_REDIRECT_ ? V_REDIRECT : -1;
}

static const char *vname(int v)
{
	static const char *n[] = { "pass", "drop", "tx", "redirect" };

	return v >= 0 && v < 4 ? n[v] : "?";
}

static void counters(uint64_t *sum)
{
	struct kr_counters v[ncpu];
	uint32_t zero = 0;

	memset(sum, 0, NCNT * 8);
	if (bpf_map_lookup_elem(cnt_fd, &zero, v)) {
		perror("counters");
		exit(1);
	}
	for (int c = 0; c < ncpu; c++)
		for (size_t f = 0; f < NCNT; f++)
			sum[f] += ((uint64_t *)&v[c])[f];
}

static const char *cnt_name(size_t off)
{
	static const struct { size_t off; const char *name; } n[] = {
		{ CNT(seen), "seen" }, { CNT(passed), "passed" }, { CNT(routed), "routed" },
		{ CNT(dropped), "dropped" }, { CNT(passed_nomatch), "passed_nomatch" },
		{ CNT(parse_error), "parse_error" }, { CNT(fragment), "fragment" },
		{ CNT(no_key), "no_key" }, { CNT(key_too_long), "key_too_long" },
		{ CNT(no_ring), "no_ring" }, { CNT(bad_image), "bad_image" },
		{ CNT(all_down), "all_down" }, { CNT(walk_limit), "walk_limit" },
		{ CNT(failover_walks), "failover_walks" }, { CNT(fwd_error), "fwd_error" },
		{ CNT(bad_service), "bad_service" }, { CNT(dropped_no_key), "dropped_no_key" },
		{ CNT(dropped_key_too_long), "dropped_key_too_long" },
		{ CNT(dropped_no_route), "dropped_no_route" },
	};

	for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++)
		if (n[i].off == off)
			return n[i].name;
	return "pad";
}

/* Compares the counter deltas since `before` with the expected ones. */
static void check_counters(const char *what, const uint64_t *before, const uint64_t *expect)
{
	uint64_t now[NCNT];
	int bad = 0;

	counters(now);
	for (size_t f = 0; f < NCNT; f++) {
		if (now[f] - before[f] != expect[f]) {
			if (!bad)
				printf("not ok %d - counters after %s\n", ++tap_n, what);
			printf("#   %s: delta %" PRIu64 ", expected %" PRIu64 "\n", cnt_name(f * 8),
			       now[f] - before[f], expect[f]);
			bad = 1;
		}
	}
	if (bad)
		tap_failed++;
	else
		CHECK(1, "counters after %s", what);
}

static void svc_add(const char *vip, uint16_t port, struct kr_service s)
{
	struct kr_service_key k = { .proto = 17 };

	k.port = htons(port);
	if (vip) {
		k.family = strchr(vip, ':') ? 6 : 4;
		inet_pton(k.family == 6 ? AF_INET6 : AF_INET, vip, k.addr);
	}
	if (bpf_map_update_elem(svc_fd, &k, &s, BPF_ANY)) {
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
	if (bpf_map_update_elem(be_fd, &id, &b, BPF_ANY)) {
		perror("backend update");
		exit(1);
	}
}

static void backend_state(uint32_t id, uint8_t state)
{
	struct kr_backend b;

	if (bpf_map_lookup_elem(be_fd, &id, &b)) {
		perror("backend lookup");
		exit(1);
	}
	b.state = state;
	bpf_map_update_elem(be_fd, &id, &b, BPF_ANY);
}

/* A ring of n points, point i at hash (i + 1) * 2^32 / (n + 1), backend i, global id ids[i]. */
static void ring_publish(uint32_t ring_id, const uint32_t *ids, uint32_t n)
{
	uint32_t hash[16];
	uint16_t be[16];
	struct fx_img im;
	struct kr_err err;

	for (uint32_t i = 0; i < n; i++) {
		hash[i] = (uint32_t)(((uint64_t)(i + 1) << 32) / (n + 1));
		be[i] = i;
	}
	if (fx_encode(&im, hash, be, n, ids, n) || kr_publish(rings_fd, ring_id, 0, im.buf,
							      im.nchunks, &err)) {
		fprintf(stderr, "publish ring %u: %s\n", ring_id, err.msg);
		exit(1);
	}
	free(im.buf);
}

/* The point the ring of ring_publish() gives a hash: index of the first point >= h. */
static uint32_t ring_point(uint32_t h, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if ((uint32_t)(((uint64_t)(i + 1) << 32) / (n + 1)) >= h)
			return i;
	return 0;
}

/* ---- packets --------------------------------------------------------------------------- */

/* DNS query for a presentation name (case kept), qtype A. */
static size_t dns_query(const char *name, uint8_t *p, uint16_t flags)
{
	size_t o = 12;
	const char *s = name;

	memset(p, 0, 12);
	p[0] = 0x12;
	p[1] = 0x34;
	pkt_put16(p + 2, flags);
	p[5] = 1;				/* QDCOUNT */
	while (*s) {
		const char *dot = strchr(s, '.');
		size_t n = dot ? (size_t)(dot - s) : strlen(s);

		p[o++] = (uint8_t)n;
		memcpy(p + o, s, n);
		o += n;
		s += n + (dot ? 1 : 0);
	}
	p[o++] = 0;
	pkt_put16(p + o, 1);
	pkt_put16(p + o + 2, 1);
	return o + 4;
}

struct row {
	const char *name;
	struct pkt_spec spec;
	int verdict;
	size_t reason, reason2;		/* counters this packet moves (NONE) */
	int key_form;			/* expected key: 0 none, else kr_key_type of key_arg */
	const char *key_arg;
};

static uint64_t trace_seq(void)
{
	return skel->bss->kr_trace_last.seq;
}

/* Runs one packet through both programs; checks verdict, bytes, key, counters. */
static void run_row(const struct row *r, const uint8_t *expect_out, size_t expect_len)
{
	static uint8_t in[PKT_MAX], out[PKT_MAX];
	uint64_t before[NCNT], exp[NCNT] = { 0 };
	size_t len = pkt_build(&r->spec, in);
	struct kr_key key = { 0 };
	struct kr_err err;

	if (r->key_form && kr_keyform(r->key_form, NULL, r->key_arg, &key, &err)) {
		CHECK(0, "%s: key form '%s': %s", r->name, r->key_arg, err.msg);
		return;
	}
	counters(before);
	for (int x = 0; x < 2; x++) {
		bool xdp = x == 0;
		uint32_t olen, ret;
		uint64_t seq = trace_seq();
		int rc = run(xdp, in, len, out, &olen, &ret, 0);
		int v = r->verdict == V_TX && !xdp ? V_REDIRECT : r->verdict;
		const struct kr_trace *t = &skel->bss->kr_trace_last;

		if (rc) {
			CHECK(0, "%s [%s]: test_run: %s", r->name, xdp ? "xdp" : "tc", strerror(-rc));
			continue;
		}
		CHECK(verdict_of(xdp, ret) == v, "%s [%s]: verdict %s (got %s, %u)", r->name,
		      xdp ? "xdp" : "tc", vname(v), vname(verdict_of(xdp, ret)), ret);
		if (expect_out)
			CHECK(olen == expect_len && !memcmp(out, expect_out, expect_len),
			      "%s [%s]: output bytes (%u bytes, expected %zu)", r->name,
			      xdp ? "xdp" : "tc", olen, expect_len);
		else if (r->verdict == V_PASS || r->verdict == V_DROP)
			CHECK(olen == len && !memcmp(out, in, len), "%s [%s]: packet untouched",
			      r->name, xdp ? "xdp" : "tc");
		if (r->key_form) {
			CHECK(t->seq == seq + 1 && t->key_len == key.len &&
			      !memcmp(t->key, key.b, key.len) &&
			      t->key_hash == kr_crc32(key.b, key.len),
			      "%s [%s]: key (%u bytes, hash %08x) = key form '%s' (%u bytes, %08x)",
			      r->name, xdp ? "xdp" : "tc", t->key_len, t->key_hash, r->key_arg,
			      key.len, kr_crc32(key.b, key.len));
		} else if (r->reason == CNT(no_key) || r->reason == CNT(key_too_long)) {
			uint32_t want = r->reason == CNT(no_key) ? KR_KEY_NOT_FOUND : KR_KEY_TOO_LONG;

			CHECK(t->seq == seq + 1 && t->status == want && t->key_len == 0,
			      "%s [%s]: no key hashed, extractor status %u (expected %u)", r->name,
			      xdp ? "xdp" : "tc", t->status, want);
		} else {
			CHECK(t->seq == seq, "%s [%s]: never reached the extractor", r->name,
			      xdp ? "xdp" : "tc");
		}
	}
	exp[CNT(seen) / 8] = 2;
	exp[(r->verdict == V_PASS ? CNT(passed) : r->verdict == V_DROP ? CNT(dropped) :
	     CNT(routed)) / 8] = 2;
	if (r->reason != NONE)
		exp[r->reason / 8] += 2;
	if (r->reason2 != NONE)
		exp[r->reason2 / 8] += 2;
	check_counters(r->name, before, exp);
}

/* The userspace build of the same extractors agrees with the kernel's trace. */
static void check_ref(const struct row *r, const struct kr_service *svc)
{
	static uint8_t in[PKT_MAX];
	size_t len = pkt_build(&r->spec, in);
	const struct kr_trace *t = &skel->bss->kr_trace_last;
	struct kr_ref_out o;

	kr_ref_packet(in, len, svc, &o);
	if (r->key_form)
		CHECK(o.parse_rc == KR_PARSE_OK && o.key_status == KR_KEY_OK &&
		      o.key_len == t->key_len && !memcmp(o.key, t->key, o.key_len) &&
		      o.key_hash == t->key_hash, "%s: userspace reference = kernel key", r->name);
	else
		CHECK(o.parse_rc != KR_PARSE_OK || o.key_status != KR_KEY_OK,
		      "%s: userspace reference finds no key either (parse %d, key %d)", r->name,
		      o.parse_rc, o.key_status);
}

/* ---- tables ---------------------------------------------------------------------------- */

#define V4C "198.51.100.7"
#define V6C "2001:db8:1::7"
#define VIP4 "192.0.2.1"
#define VIP6 "2001:db8::1"

static char x255[256];
static uint8_t q_www[300], q_resp[300], q_ptr[300], q_long[600], q_label[300], q_root[300];
static uint8_t q_edge[300];
static size_t q_www_n, q_resp_n, q_ptr_n, q_long_n, q_label_n, q_root_n, q_edge_n;

static void table_parse(void)
{
	static const uint8_t hello[] = "hello";
	struct pkt_spec base4 = PKT_V4(V4C, 1111, VIP4, 9999), base6 = PKT_V6(V6C, 1111, VIP6, 9999);
	struct row rows[32];
	int n = 0;

	/* no service on port 9999: everything passes untouched */
	rows[n++] = (struct row){ "v4 udp, no service", base4, V_PASS, CNT(passed_nomatch), NONE, 0, NULL };
	rows[n] = (struct row){ "v4 tcp", base4, V_PASS, CNT(passed_nomatch), NONE, 0, NULL };
	rows[n++].spec.proto = 6;
	rows[n] = (struct row){ "arp ethertype", base4, V_PASS, CNT(passed_nomatch), NONE, 0, NULL };
	rows[n++].spec.ethertype = 0x0806;
	rows[n] = (struct row){ "three vlan tags", base4, V_PASS, CNT(passed_nomatch), NONE, 0, NULL };
	rows[n++].spec.nvlan = 3;
	rows[n] = (struct row){ "v6 udp, 2 vlans, no service", base6, V_PASS, CNT(passed_nomatch), NONE, 0, NULL };
	rows[n++].spec.nvlan = 2;
	rows[n] = (struct row){ "v4 ihl 4", base4, V_PASS, CNT(parse_error), NONE, 0, NULL };
	rows[n++].spec.ihl_override = 4;
	rows[n] = (struct row){ "v4 total length beyond the frame", base4, V_PASS, CNT(parse_error), NONE, 0, NULL };
	rows[n++].spec.lie_tot = 1;
	rows[n] = (struct row){ "v4 total length below ihl", base4, V_PASS, CNT(parse_error), NONE, 0, NULL };
	rows[n++].spec.lie_tot = -20;
	rows[n] = (struct row){ "v4 udp length beyond ip", base4, V_PASS, CNT(parse_error), NONE, 0, NULL };
	rows[n++].spec.lie_udp = 1;
	rows[n] = (struct row){ "v4 udp length 7", base4, V_PASS, CNT(parse_error), NONE, 0, NULL };
	rows[n++].spec.lie_udp = -6;		/* 8 + 5 - 6 = 7 */
	rows[n] = (struct row){ "v6 payload length beyond the frame", base6, V_PASS, CNT(parse_error), NONE, 0, NULL };
	rows[n++].spec.lie_tot = 3;
	rows[n] = (struct row){ "v4 non-first fragment", base4, V_PASS, CNT(fragment), NONE, 0, NULL };
	rows[n].spec.frag = 2;
	rows[n++].spec.dport = 53;			/* even to a service port */
	rows[n] = (struct row){ "v6 non-first fragment (after hop-by-hop)", base6, V_PASS, CNT(fragment), NONE, 0, NULL };
	rows[n].spec.frag = 2;
	rows[n].spec.ext[0] = 0;
	rows[n].spec.ext[1] = 44;
	rows[n].spec.next = 2;
	rows[n++].spec.dport = 53;
	rows[n] = (struct row){ "v6 9 extension headers", base6, V_PASS, CNT(parse_error), NONE, 0, NULL };
	for (int i = 0; i < 9; i++)
		rows[n].spec.ext[i] = 60;
	rows[n++].spec.next = 9;
	rows[n] = (struct row){ "v6 8 extension headers, no service", base6, V_PASS, CNT(passed_nomatch), NONE, 0, NULL };
	for (int i = 0; i < 8; i++)
		rows[n].spec.ext[i] = i == 0 ? 0 : i % 2 ? 60 : 43;
	rows[n++].spec.next = 8;
	for (int i = 0; i < n; i++) {
		rows[i].spec.payload = hello;
		rows[i].spec.plen = 5;
		run_row(&rows[i], NULL, 0);
	}
}

/* "memcache 'get foo\\r\\n'" for a test name (kept until exit). */
static const char *esc(const char *cmd)
{
	char *o = malloc(strlen(cmd) * 2 + 16), *p = o;

	if (!o)
		exit(1);
	p += sprintf(p, "memcache '");
	for (; *cmd; cmd++) {
		if (*cmd == '\r' || *cmd == '\n' || *cmd == '\t') {
			*p++ = '\\';
			*p++ = *cmd == '\r' ? 'r' : *cmd == '\n' ? 'n' : 't';
		} else {
			*p++ = *cmd;
		}
	}
	strcpy(p, "'");
	return o;
}

static void table_extractors(void)
{
	static uint8_t mc[64][300], quic[8][64], pay[8][400];
	struct pkt_spec d4 = PKT_V4(V4C, 3333, VIP4, 53), d6 = PKT_V6(V6C, 3333, VIP6, 53);
	struct pkt_spec w4 = PKT_V4(V4C, 3333, "203.0.113.9", 0);
	struct row rows[64];
	struct kr_service svc[64];
	int n = 0, nmc = 0;

#define ROW(nm, sp, v, r1, r2, kf, ka, svcv) do {                                        \
		rows[n] = (struct row){ nm, sp, v, r1, r2, kf, ka };                      \
		svc[n] = svcv;                                                            \
		n++;                                                                      \
	} while (0)
#define PAYLOAD(sp, buf, len) ((sp).payload = (buf), (sp).plen = (len))

	struct kr_service s_dns = { .ring_id = 7, .key_type = KR_KEY_DNS, .fwd_mode = KR_FWD_L2 };
	struct kr_service s_mc = { .ring_id = 7, .key_type = KR_KEY_MEMCACHE, .fwd_mode = KR_FWD_L2 };
	struct kr_service s_quic = { .ring_id = 7, .key_type = KR_KEY_QUIC, .fwd_mode = KR_FWD_L2,
				     .quic_cid_len = 8 };
	struct kr_service s_pay = { .ring_id = 7, .key_type = KR_KEY_PAYLOAD, .fwd_mode = KR_FWD_L2 };
	struct kr_service s_off = s_pay, s_delim = s_pay, s_tuple = s_pay, s_drop = s_dns;

	s_off.payload_off = 4;
	s_off.payload_len = 6;
	s_delim.payload_off = 2;
	s_delim.payload_delim = ';';
	s_delim.flags = KR_SVC_F_PAYLOAD_DELIM;
	s_tuple.key_type = KR_KEY_TUPLE;
	s_drop.policy_no_key = s_drop.policy_too_long = s_drop.policy_no_route = KR_POLICY_DROP;
	svc_add(VIP4, 53, s_dns);
	svc_add(VIP6, 53, s_dns);
	svc_add(NULL, 11211, s_mc);
	svc_add(NULL, 443, s_quic);
	svc_add(NULL, 9000, s_pay);
	svc_add(NULL, 9001, s_off);
	svc_add(NULL, 9002, s_delim);
	svc_add(NULL, 9003, s_tuple);
	svc_add(NULL, 9004, s_drop);

	/* dns */
	{
		struct pkt_spec s = d4;

		PAYLOAD(s, q_www, q_www_n);
		ROW("dns v4", s, V_PASS, CNT(no_ring), NONE, KR_KEY_DNS, "www.example.com", s_dns);
		PAYLOAD(s, q_edge, q_edge_n);
		ROW("dns v4 A, Z and their neighbours @ [ ` {", s, V_PASS, CNT(no_ring), NONE,
		    KR_KEY_DNS, "zaz.a@[`{z.example", s_dns);
		PAYLOAD(s, q_www, q_www_n);
		s.nvlan = 1;
		ROW("dns v4 1 vlan", s, V_PASS, CNT(no_ring), NONE, KR_KEY_DNS, "WWW.EXAMPLE.COM.", s_dns);
		s.nvlan = 2;
		ROW("dns v4 802.1ad+802.1q", s, V_PASS, CNT(no_ring), NONE, KR_KEY_DNS, "www.example.com", s_dns);
		s.nvlan = 0;
		s.ip_opts = 12;
		ROW("dns v4 12 bytes of ip options", s, V_PASS, CNT(no_ring), NONE, KR_KEY_DNS, "www.example.com", s_dns);
		s.ip_opts = 40;
		ROW("dns v4 ihl 15", s, V_PASS, CNT(no_ring), NONE, KR_KEY_DNS, "www.example.com", s_dns);
		s.ip_opts = 0;
		s.frag = 1;
		ROW("dns v4 first fragment", s, V_PASS, CNT(no_ring), NONE, KR_KEY_DNS, "www.example.com", s_dns);
		s.frag = 0;
		s.pad_to = 200;
		ROW("dns v4 ethernet padding", s, V_PASS, CNT(no_ring), NONE, KR_KEY_DNS, "www.example.com", s_dns);
		s = d6;
		PAYLOAD(s, q_www, q_www_n);
		ROW("dns v6", s, V_PASS, CNT(no_ring), NONE, KR_KEY_DNS, "www.example.com", s_dns);
		s.ext[0] = 0; s.ext[1] = 43; s.ext[2] = 60; s.ext[3] = 44;
		s.next = 4;
		s.nvlan = 2;
		ROW("dns v6 hbh+rt+dst+frag(first), 2 vlans", s, V_PASS, CNT(no_ring), NONE, KR_KEY_DNS, "www.example.com", s_dns);
		s = d4;
		PAYLOAD(s, q_root, q_root_n);
		ROW("dns root name", s, V_PASS, CNT(no_ring), NONE, KR_KEY_DNS, ".", s_dns);
		PAYLOAD(s, q_resp, q_resp_n);
		ROW("dns response (QR=1)", s, V_PASS, CNT(no_key), NONE, 0, NULL, s_dns);
		PAYLOAD(s, q_ptr, q_ptr_n);
		ROW("dns compression pointer", s, V_PASS, CNT(no_key), NONE, 0, NULL, s_dns);
		PAYLOAD(s, q_label, q_label_n);
		ROW("dns label of 64", s, V_PASS, CNT(no_key), NONE, 0, NULL, s_dns);
		PAYLOAD(s, q_www, 20);
		ROW("dns name truncated by the udp length", s, V_PASS, CNT(no_key), NONE, 0, NULL, s_dns);
		PAYLOAD(s, q_long, q_long_n);
		ROW("dns name of 256+ bytes", s, V_PASS, CNT(key_too_long), NONE, 0, NULL, s_dns);
		s.dport = 9004;
		ROW("dns too long, drop policy", s, V_DROP, CNT(key_too_long), CNT(dropped_key_too_long), 0, NULL, s_drop);
		PAYLOAD(s, q_resp, q_resp_n);
		ROW("dns no key, drop policy", s, V_DROP, CNT(no_key), CNT(dropped_no_key), 0, NULL, s_drop);
		PAYLOAD(s, q_www, q_www_n);
		ROW("dns no ring, drop policy", s, V_DROP, CNT(no_ring), CNT(dropped_no_route), KR_KEY_DNS, "www.example.com", s_drop);
		s = d4;
		s.dst = "192.0.2.99";		/* exact-VIP service only: no match */
		PAYLOAD(s, q_www, q_www_n);
		ROW("dns to another VIP", s, V_PASS, CNT(passed_nomatch), NONE, 0, NULL, s_dns);
	}
	/* memcache */
	{
		static const char *cmds[][2] = {
			{ "get foo\r\n", "foo" }, { "gets foo bar\r\n", "foo" },
			{ "set k:1 0 0 5\r\nhello\r\n", "k:1" }, { "delete  spaced\r\n", "spaced" },
			{ "gat 100 tkey\r\n", "tkey" }, { "gats\t100\tx\r\n", "x" },
			{ "incr ctr 1\r\n", "ctr" }, { "touch t 10\r\n", "t" },
			{ "get endofpayload", "endofpayload" }, { "mg meta v\r\n", "meta" },
		};
		static const char *bad[] = { "GET foo\r\n", "get \r\n", "stats\r\n", "get",
					     "verylongcmd foo\r\n", "gat 100\r\n" };
		struct pkt_spec s = w4;

		s.dport = 11211;
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
			memcpy(mc[nmc], "\0\x01\0\0\0\x01\0\0", 8);
			memcpy(mc[nmc] + 8, cmds[i][0], strlen(cmds[i][0]));
			PAYLOAD(s, mc[nmc], 8 + strlen(cmds[i][0]));
			s.nvlan = i & 1;
			ROW(esc(cmds[i][0]), s, V_PASS, CNT(no_ring), NONE, KR_KEY_MEMCACHE, cmds[i][1], s_mc);
			nmc++;
		}
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			memcpy(mc[nmc], "\0\x01\0\0\0\x01\0\0", 8);
			memcpy(mc[nmc] + 8, bad[i], strlen(bad[i]));
			PAYLOAD(s, mc[nmc], 8 + strlen(bad[i]));
			ROW(esc(bad[i]), s, V_PASS, CNT(no_key), NONE, 0, NULL, s_mc);
			nmc++;
		}
		memcpy(mc[nmc], "\0\x01\0\0\0\x01\0\0get ", 12);
		memset(mc[nmc] + 12, 'k', 256);
		memcpy(mc[nmc] + 268, "\r\n", 2);
		PAYLOAD(s, mc[nmc], 270);
		ROW("memcache key of 256", s, V_PASS, CNT(key_too_long), NONE, 0, NULL, s_mc);
		nmc++;
		PAYLOAD(s, mc[0], 7);
		ROW("memcache frame header only", s, V_PASS, CNT(no_key), NONE, 0, NULL, s_mc);
	}
	/* quic */
	{
		struct pkt_spec s = w4;

		s.dport = 443;
		memcpy(quic[0], "\xc3\x00\x00\x00\x01\x08\x01\x02\x03\x04\x05\x06\x07\x08\x00", 15);
		PAYLOAD(s, quic[0], 15);
		ROW("quic long header dcid 8", s, V_PASS, CNT(no_ring), NONE, KR_KEY_QUIC, "0102030405060708", s_quic);
		memcpy(quic[1], "\xc0\x00\x00\x00\x01\x14" "abcdefghijklmnopqrst\x00", 27);
		PAYLOAD(s, quic[1], 27);
		s.family = 6; s.src = V6C; s.dst = VIP6;
		ROW("quic v6 long header dcid 20", s, V_PASS, CNT(no_ring), NONE, KR_KEY_QUIC, "6162636465666768696a6b6c6d6e6f7071727374", s_quic);
		s = w4;
		s.dport = 443;
		memcpy(quic[2], "\x41\xaa\xbb\xcc\xdd\xee\xff\x11\x22\x99\x98", 11);
		PAYLOAD(s, quic[2], 11);
		ROW("quic short header cid 8", s, V_PASS, CNT(no_ring), NONE, KR_KEY_QUIC, "aabbccddeeff1122", s_quic);
		PAYLOAD(s, quic[2], 8);
		ROW("quic short header truncated cid", s, V_PASS, CNT(no_key), NONE, 0, NULL, s_quic);
		memcpy(quic[3], "\xc3\x00\x00\x00\x01\x00\x00", 7);
		PAYLOAD(s, quic[3], 7);
		ROW("quic long header dcid 0", s, V_PASS, CNT(no_key), NONE, 0, NULL, s_quic);
		memcpy(quic[4], "\xc3\x00\x00\x00\x01\x10\x01\x02", 8);
		PAYLOAD(s, quic[4], 8);
		ROW("quic long header dcid beyond payload", s, V_PASS, CNT(no_key), NONE, 0, NULL, s_quic);
		PAYLOAD(s, quic[4], 0);
		ROW("quic empty payload", s, V_PASS, CNT(no_key), NONE, 0, NULL, s_quic);
	}
	/* payload and tuple */
	{
		struct pkt_spec s = w4;

		memcpy(pay[0], "user=alice;rest", 15);
		s.dport = 9000;
		PAYLOAD(s, pay[0], 15);
		ROW("payload whole", s, V_PASS, CNT(no_ring), NONE, KR_KEY_PAYLOAD, "user=alice;rest", s_pay);
		PAYLOAD(s, pay[0], 0);
		ROW("payload empty = empty key", s, V_PASS, CNT(no_ring), NONE, KR_KEY_PAYLOAD, "", s_pay);
		memset(pay[1], 'x', 255);
		PAYLOAD(s, pay[1], 255);
		ROW("payload of 255", s, V_PASS, CNT(no_ring), NONE, KR_KEY_PAYLOAD, x255, s_pay);
		memset(pay[2], 'x', 256);
		PAYLOAD(s, pay[2], 256);
		ROW("payload of 256", s, V_PASS, CNT(key_too_long), NONE, 0, NULL, s_pay);
		s.dport = 9001;
		PAYLOAD(s, pay[0], 15);
		ROW("payload offset 4 length 6", s, V_PASS, CNT(no_ring), NONE, KR_KEY_PAYLOAD, "=alice", s_off);
		PAYLOAD(s, pay[0], 9);
		ROW("payload offset 4 length 6, short", s, V_PASS, CNT(no_key), NONE, 0, NULL, s_off);
		s.dport = 9002;
		PAYLOAD(s, pay[0], 15);
		ROW("payload offset 2 to ';'", s, V_PASS, CNT(no_ring), NONE, KR_KEY_PAYLOAD, "er=alice", s_delim);
		PAYLOAD(s, pay[0], 10);
		ROW("payload no delimiter", s, V_PASS, CNT(no_key), NONE, 0, NULL, s_delim);
		memset(pay[3], 'y', 300);
		pay[3][290] = ';';
		PAYLOAD(s, pay[3], 300);
		ROW("payload delimiter after 288 bytes", s, V_PASS, CNT(key_too_long), NONE, 0, NULL, s_delim);
		s.dport = 9003;
		PAYLOAD(s, pay[0], 15);
		ROW("tuple v4", s, V_PASS, CNT(no_ring), NONE, KR_KEY_TUPLE, V4C ":3333", s_tuple);
		s.family = 6; s.src = V6C; s.dst = VIP6; s.nvlan = 1;
		ROW("tuple v6", s, V_PASS, CNT(no_ring), NONE, KR_KEY_TUPLE, "[" V6C "]:3333", s_tuple);
	}
	for (int i = 0; i < n; i++) {
		run_row(&rows[i], NULL, 0);
		if (rows[i].reason != CNT(passed_nomatch))
			check_ref(&rows[i], &svc[i]);
	}
#undef ROW
#undef PAYLOAD
}

/* Every prefix of a packet: the kernel refuses frames shorter than Ethernet; every other
 * length runs, passes untouched and counts as a parse error. */
static void table_truncation(void)
{
	static uint8_t in[PKT_MAX], out[PKT_MAX], qc[64];
	struct pkt_spec specs[5];
	const char *names[5] = { "dns v4 2 vlans + options", "dns v6 ext headers", "quic v4",
				 "memcache v6", "tuple v4" };
	size_t mclen = 8 + 9;
	static uint8_t mcp[32];

	memcpy(mcp, "\0\x01\0\0\0\x01\0\0get foo\r\n", mclen);
	memcpy(qc, "\xc3\x00\x00\x00\x01\x08\x01\x02\x03\x04\x05\x06\x07\x08\x00", 15);
	specs[0] = PKT_V4(V4C, 1, VIP4, 53);
	specs[0].nvlan = 2;
	specs[0].ip_opts = 8;
	specs[0].payload = q_www;
	specs[0].plen = q_www_n;
	specs[1] = PKT_V6(V6C, 1, VIP6, 53);
	specs[1].ext[0] = 0;
	specs[1].ext[1] = 60;
	specs[1].next = 2;
	specs[1].payload = q_www;
	specs[1].plen = q_www_n;
	specs[2] = PKT_V4(V4C, 1, VIP4, 443);
	specs[2].payload = qc;
	specs[2].plen = 15;
	specs[3] = PKT_V6(V6C, 1, VIP6, 11211);
	specs[3].payload = mcp;
	specs[3].plen = mclen;
	specs[4] = PKT_V4(V4C, 1, VIP4, 9003);
	for (int p = 0; p < 5; p++) {
		size_t full = pkt_build(&specs[p], in);
		uint64_t before[NCNT], exp[NCNT] = { 0 };
		int bad = 0, ran = 0, refused = 0;

		counters(before);
		for (size_t len = 0; len < full; len++) {
			for (int x = 0; x < 2; x++) {
				uint32_t olen, ret;
				int rc = run(x == 0, in, len, out, &olen, &ret, 0);

				if (rc) {
					/* XDP runs from 14 bytes on; an skb also needs
					 * its IP header (the kernel's check, not ours) */
					if (rc != -EINVAL || (len >= 14 && (x == 0 ||
					    len >= pkt_l3_off(&specs[p]) +
					    (specs[p].family == 6 ? 40 : 20)))) {
						DIAG("%s: %zu bytes [%s]: test_run %s", names[p],
						     len, x ? "tc" : "xdp", strerror(-rc));
						bad++;
					}
					refused++;
					continue;
				}
				ran++;
				if (verdict_of(x == 0, ret) != V_PASS || olen != len ||
				    memcmp(in, out, len)) {
					DIAG("%s: %zu bytes [%s]: verdict %u, %u bytes out", names[p],
					     len, x ? "tc" : "xdp", ret, olen);
					bad++;
				}
			}
		}
		CHECK(!bad, "truncation %s: %zu lengths x 2 programs: %d runs passed untouched, "
		      "%d refused by the kernel (shorter than Ethernet; for TC, than the IP "
		      "header)", names[p], full, ran, refused);
		exp[CNT(seen) / 8] = ran;
		exp[CNT(passed) / 8] = ran;
		exp[CNT(parse_error) / 8] = ran;
		check_counters(names[p], before, exp);
	}
}

/* ---- forwarding -------------------------------------------------------------------------- */

static int sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		DIAG("command failed (%d): %s", rc, cmd);
	return rc;
}

/* A private netns: veth kra (10.9.0.1/24, fd09::1/64) with permanent neighbours for the
 * backends 10.9.0.2 and fd09::2, forwarding on (bpf_fib_lookup needs it). */
static int netns_setup(void)
{
	struct ifreq ifr;
	int fd;

	if (unshare(CLONE_NEWNET)) {
		perror("unshare");
		return -1;
	}
	if (sh("ip link set lo up && ip link add kra type veth peer name krb && "
	       "ip link set kra up && ip link set krb up && "
	       "ip addr add 10.9.0.1/24 dev kra && ip -6 addr add fd09::1/64 dev kra nodad && "
	       "ip neigh add 10.9.0.2 lladdr 02:00:00:00:09:02 dev kra nud permanent && "
	       "ip -6 neigh add fd09::2 lladdr 02:00:00:00:09:06 dev kra nud permanent && "
	       "sysctl -qw net.ipv4.conf.all.forwarding=1 net.ipv4.conf.lo.forwarding=1 "
	       "net.ipv4.conf.kra.forwarding=1 net.ipv6.conf.all.forwarding=1"))
		return -1;
	ifx_a = if_nametoindex("kra");
	/* (sysfs shows the netns that mounted it: ask the kernel directly) */
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "kra");
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		perror("SIOCGIFHWADDR kra");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	memcpy(mac_a, ifr.ifr_hwaddr.sa_data, 6);
	return ifx_a ? 0 : -1;
}

/* Expected ipip frame: Ethernet to the neighbour, outer header, the inner IP packet. */
static size_t ipip_expect(const uint8_t *in, size_t len, size_t l3, int outer, const char *src,
			  const char *dst, uint32_t flow, uint8_t *out)
{
	int inner6 = (in[l3] >> 4) == 6;
	size_t inner_len = inner6 ? 40 + (in[l3 + 4] << 8 | in[l3 + 5]) : (in[l3 + 2] << 8 | in[l3 + 3]);
	size_t o = 14 + (outer == 6 ? 40 : 20);

	memset(out, 0, PKT_MAX);
	memcpy(out, outer == 6 ? nb_mac6 : nb_mac4, 6);
	memcpy(out + 6, mac_a, 6);
	pkt_put16(out + 12, outer == 6 ? 0x86dd : 0x0800);
	if (outer == 4) {
		out[14] = 0x45;
		pkt_put16(out + 16, (uint16_t)(20 + inner_len));
		out[22] = 64;
		out[23] = inner6 ? 41 : 4;
		inet_pton(AF_INET, src, out + 26);
		inet_pton(AF_INET, dst, out + 30);
		pkt_put16(out + 24, pkt_fold(pkt_sum(out + 14, 20, 0)));
	} else {
		out[14] = 0x60;
		out[15] = (flow >> 16) & 0x0f;
		out[16] = (flow >> 8) & 0xff;
		out[17] = flow & 0xff;
		pkt_put16(out + 18, (uint16_t)inner_len);
		out[20] = inner6 ? 41 : 4;
		out[21] = 64;
		inet_pton(AF_INET6, src, out + 22);
		inet_pton(AF_INET6, dst, out + 38);
	}
	memcpy(out + o, in + l3, len - l3);
	return o + len - l3;
}

static void table_forward(void)
{
	static uint8_t in[PKT_MAX], exp[PKT_MAX], out[PKT_MAX];
	static const uint8_t be_mac[3][6] = { { 2, 0, 0, 0, 0, 0x10 }, { 2, 0, 0, 0, 0, 0x11 },
					      { 2, 0, 0, 0, 0, 0x12 } };
	static const uint8_t dev_mac[6] = { 2, 0, 0, 0, 0, 0xee };
	static const uint8_t dev_mac2[6] = { 2, 0, 0, 0, 0, 0xdd };
	static const char *keys[] = { "alpha", "bravo", "charlie", "delta", "echo", "foxtrot" };
	const uint32_t ids0[3] = { 10, 11, 12 }, ids1[1] = { 20 }, ids2[1] = { 21 };
	struct kr_service l2 = { .ring_id = 0, .key_type = KR_KEY_PAYLOAD, .fwd_mode = KR_FWD_L2 };
	struct kr_service l2drop = l2, ip4 = l2, ip6 = l2;
	struct kr_err err;

	l2drop.policy_no_route = KR_POLICY_DROP;
	ip4.ring_id = 1;
	ip4.fwd_mode = KR_FWD_IPIP;
	inet_pton(AF_INET, "10.9.0.1", ip4.tun_src4);
	ip6 = ip4;
	ip6.ring_id = 2;
	inet_pton(AF_INET6, "fd09::1", ip6.tun_src6);
	svc_add("192.0.2.10", 7000, l2);
	svc_add("192.0.2.10", 7003, l2drop);
	svc_add(NULL, 7001, ip4);
	svc_add(NULL, 7002, ip6);
	for (int i = 0; i < 3; i++)
		backend_set(ids0[i], "10.9.0.50", be_mac[i], KR_BACKEND_UP);
	backend_set(20, "10.9.0.2", NULL, KR_BACKEND_UP);
	backend_set(21, "fd09::2", NULL, KR_BACKEND_UP);
	ring_publish(0, ids0, 3);
	ring_publish(1, ids1, 1);
	ring_publish(2, ids2, 1);
	(void)err;

	/* l2: dst MAC = the backend's, src MAC = the frame's own dst (egress = ingress), then
	 * the configured MAC of the device: dev 1 in kr_devices only; dev 2 also in
	 * kr_device_macs, with another MAC (that entry wins); dev 3 in kr_devices and an
	 * empty kr_device_macs slot (no KR_DEVICE_F_MAC: kr_devices decides) */
	for (int dev = 0; dev < 4; dev++) {
		static const char *what[] = { "", ", device MAC", ", device MAC (array)",
					      ", device MAC (empty array slot)" };
		const uint8_t *smac = dev == 0 ? pkt_dmac : dev == 2 ? dev_mac2 : dev_mac;
		uint32_t lo = 1;
		struct kr_device d, dm;

		memset(&d, 0, sizeof(d));
		memset(&dm, 0, sizeof(dm));
		memcpy(d.mac, dev_mac, 6);
		memcpy(dm.mac, dev_mac2, 6);
		dm.flags = dev == 2 ? KR_DEVICE_F_MAC : 0;
		if (dev && bpf_map_update_elem(dev_fd, &lo, &d, BPF_ANY))
			perror("device");
		if (dev >= 2 && bpf_map_update_elem(devm_fd, &lo, &dm, BPF_ANY))
			perror("device array");
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			struct pkt_spec s = PKT_V4(V4C, 5000, "192.0.2.10", 7000);
			uint32_t h = kr_crc32(keys[k], strlen(keys[k])), p = ring_point(h, 3);
			char name[128];
			struct row r;
			size_t len;
			uint64_t bst[ncpu * 2], pk = 0;

			s.payload = (const uint8_t *)keys[k];
			s.plen = strlen(keys[k]);
			s.nvlan = k % 3;
			len = pkt_build(&s, in);
			memcpy(exp, in, len);
			memcpy(exp, be_mac[p], 6);
			memcpy(exp + 6, smac, 6);
			snprintf(name, sizeof(name), "l2 key '%s' -> point %u (backend %u)%s", keys[k],
				 p, ids0[p], what[dev]);
			r = (struct row){ name, s, V_TX, NONE, NONE, KR_KEY_PAYLOAD, keys[k] };
			memset(bst, 0, sizeof(bst));
			bpf_map_lookup_elem(bstat_fd, &ids0[p], bst);
			for (int c = 0; c < ncpu; c++)
				pk -= bst[c * 2];
			run_row(&r, exp, len);
			CHECK(skel->bss->kr_trace_last.route.backend_id == ids0[p] &&
			      skel->bss->kr_trace_last.route.walk == 0,
			      "%s: route backend %u walk 0", name, skel->bss->kr_trace_last.route.backend_id);
			bpf_map_lookup_elem(bstat_fd, &ids0[p], bst);
			for (int c = 0; c < ncpu; c++)
				pk += bst[c * 2];
			CHECK_EQ_U(pk, 2, "%s: backend %u packets +2", name, ids0[p]);
		}
		if (dev)
			bpf_map_delete_elem(dev_fd, &lo);
		memset(&dm, 0, sizeof(dm));
		bpf_map_update_elem(devm_fd, &lo, &dm, BPF_ANY);
	}

	/* l2 to another device: redirect with that device's configured MAC; without one the
	 * source MAC is unknown: fwd_error, passed untouched */
	{
		struct pkt_spec s = PKT_V4(V4C, 5000, "192.0.2.10", 7000);
		uint32_t h = kr_crc32("golf", 4), p = ring_point(h, 3), ifx = (uint32_t)ifx_a;
		struct kr_backend b;
		struct kr_device d;
		struct row r;
		size_t len;

		memset(&d, 0, sizeof(d));
		memcpy(d.mac, dev_mac, 6);
		s.payload = (const uint8_t *)"golf";
		s.plen = 4;
		len = pkt_build(&s, in);
		bpf_map_lookup_elem(be_fd, &ids0[p], &b);
		b.ifindex = ifx;
		bpf_map_update_elem(be_fd, &ids0[p], &b, BPF_ANY);
		r = (struct row){ "l2 to another device without a configured MAC", s, V_PASS,
				  CNT(fwd_error), NONE, KR_KEY_PAYLOAD, "golf" };
		run_row(&r, NULL, 0);
		bpf_map_update_elem(dev_fd, &ifx, &d, BPF_ANY);
		memcpy(exp, in, len);
		memcpy(exp, be_mac[p], 6);
		memcpy(exp + 6, dev_mac, 6);
		r = (struct row){ "l2 to another device: redirect, its configured MAC", s,
				  V_REDIRECT, NONE, NONE, KR_KEY_PAYLOAD, "golf" };
		run_row(&r, exp, len);
		bpf_map_delete_elem(dev_fd, &ifx);
		b.ifindex = 0;
		bpf_map_update_elem(be_fd, &ids0[p], &b, BPF_ANY);
	}

	/* failover: the key's backend down -> the next point's backend */
	for (size_t k = 0; k < 3; k++) {
		struct pkt_spec s = PKT_V4(V4C, 5000, "192.0.2.10", 7000);
		uint32_t h = kr_crc32(keys[k], strlen(keys[k])), p = ring_point(h, 3), q = (p + 1) % 3;
		char name[128];
		struct row r;
		size_t len;

		s.payload = (const uint8_t *)keys[k];
		s.plen = strlen(keys[k]);
		len = pkt_build(&s, in);
		memcpy(exp, in, len);
		memcpy(exp, be_mac[q], 6);
		memcpy(exp + 6, pkt_dmac, 6);
		backend_state(ids0[p], KR_BACKEND_DOWN);
		snprintf(name, sizeof(name), "failover key '%s': backend %u down -> %u", keys[k],
			 ids0[p], ids0[q]);
		r = (struct row){ name, s, V_TX, CNT(failover_walks), NONE, KR_KEY_PAYLOAD, keys[k] };
		run_row(&r, exp, len);
		CHECK(skel->bss->kr_trace_last.route.backend_id == ids0[q] &&
		      skel->bss->kr_trace_last.route.walk == 1, "%s: route backend %u walk %u", name,
		      skel->bss->kr_trace_last.route.backend_id, skel->bss->kr_trace_last.route.walk);
		backend_state(ids0[p], KR_BACKEND_UP);
	}
	/* all down: policy pass (7000) and drop (7003) */
	for (int i = 0; i < 3; i++)
		backend_state(ids0[i], KR_BACKEND_DOWN);
	{
		struct pkt_spec s = PKT_V4(V4C, 5000, "192.0.2.10", 7000);
		struct row r;

		s.payload = (const uint8_t *)"alpha";
		s.plen = 5;
		r = (struct row){ "all backends down, pass", s, V_PASS, CNT(all_down), NONE, KR_KEY_PAYLOAD, "alpha" };
		run_row(&r, NULL, 0);
		s.dport = 7003;
		r = (struct row){ "all backends down, drop", s, V_DROP, CNT(all_down), CNT(dropped_no_route), KR_KEY_PAYLOAD, "alpha" };
		run_row(&r, NULL, 0);
	}
	for (int i = 0; i < 3; i++)
		backend_state(ids0[i], KR_BACKEND_UP);

	/* ipip: exact bytes, outer checksum, next hop from the fib */
	{
		static const struct { int inner, outer, nvlan; uint16_t port; const char *key; } c[] = {
			{ 4, 4, 0, 7001, "v4-in-v4" }, { 4, 4, 2, 7001, "v4-in-v4 vlans" },
			{ 6, 6, 0, 7002, "v6-in-v6" }, { 4, 6, 1, 7002, "v4-in-v6" },
			{ 6, 4, 0, 7001, "v6-in-v4" },
		};

		for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
			struct pkt_spec s = c[i].inner == 6 ? PKT_V6(V6C, 5000, "2001:db8::10", c[i].port) :
					    PKT_V4(V4C, 5000, "192.0.2.10", c[i].port);
			uint32_t h = kr_crc32(c[i].key, strlen(c[i].key));
			char name[128];
			struct row r;
			size_t len, elen;

			s.payload = (const uint8_t *)c[i].key;
			s.plen = strlen(c[i].key);
			s.nvlan = c[i].nvlan;
			len = pkt_build(&s, in);
			elen = ipip_expect(in, len, pkt_l3_off(&s), c[i].outer,
					   c[i].outer == 6 ? "fd09::1" : "10.9.0.1",
					   c[i].outer == 6 ? "fd09::2" : "10.9.0.2", h & 0xfffff, exp);
			snprintf(name, sizeof(name), "ipip %s%s", c[i].key,
				 c[i].nvlan ? " (vlan tags dropped)" : "");
			r = (struct row){ name, s, V_REDIRECT, NONE, NONE, KR_KEY_PAYLOAD, c[i].key };
			run_row(&r, exp, elen);
			if (c[i].outer == 4)
				CHECK(pkt_fold(pkt_sum(exp + 14, 20, 0)) == 0,
				      "%s: outer IPv4 checksum verifies", name);
			/* arriving on the egress device: XDP_TX */
			{
				uint32_t olen, ret;
				int rc = run(true, in, len, out, &olen, &ret, ifx_a);

				CHECK(rc == 0 && ret == XDP_TX_ && olen == elen && !memcmp(out, exp, elen),
				      "%s: ingress = egress device -> XDP_TX, same bytes (rc %d ret %u)",
				      name, rc, ret);
			}
		}
	}
	/* no route to the backend: fwd_error, passed untouched */
	{
		struct pkt_spec s = PKT_V4(V4C, 5000, "192.0.2.10", 7001);
		struct row r;

		backend_set(20, "10.77.0.2", NULL, KR_BACKEND_UP);
		s.payload = (const uint8_t *)"x";
		s.plen = 1;
		r = (struct row){ "ipip backend without a route", s, V_PASS, CNT(fwd_error), NONE, KR_KEY_PAYLOAD, "x" };
		run_row(&r, NULL, 0);
		backend_set(20, "10.9.0.2", NULL, KR_BACKEND_UP);
	}
}


/* ---- TCP --------------------------------------------------------------------------------- */

static int flows_fd, flows_syn_fd;

static uint32_t map_count(int fd)
{
	struct kr_flow_key k, n;
	uint32_t c = 0;
	void *pk = NULL;

	while (!bpf_map_get_next_key(fd, pk, &n)) {
		k = n;
		pk = &k;
		c++;
	}
	return c;
}

/* The flow's entry in fd (the backend id), or -1. */
static int64_t flow_of(int fd, const struct pkt_spec *sp)
{
	struct kr_flow_key k = { .family = (uint8_t)sp->family };
	struct kr_flow v;
	int af = sp->family == 6 ? AF_INET6 : AF_INET;

	inet_pton(af, sp->src, k.src);
	inet_pton(af, sp->dst, k.dst);
	pkt_put16(k.sport, sp->sport);
	pkt_put16(k.dport, sp->dport);
	if (bpf_map_lookup_elem(fd, &k, &v))
		return -1;
	return v.backend_id;
}

/* The ring's backend (index into ids) for the flow: crc32 of address + port, the point. */
static uint32_t tcp_point(const struct pkt_spec *sp, uint32_t n)
{
	uint8_t key[18];
	int alen = sp->family == 6 ? 16 : 4;

	inet_pton(sp->family == 6 ? AF_INET6 : AF_INET, sp->src, key);
	pkt_put16(key + alen, sp->sport);
	return ring_point(kr_crc32(key, (size_t)alen + 2), n);
}

/* One segment through TC (and XDP: passed untouched); returns the TC output's backend
 * index by destination MAC (-1: not forwarded). */
static int tcp_run(const char *name, const struct pkt_spec *sp, const uint8_t (*macs)[6], int n,
		   size_t reason)
{
	static uint8_t in[PKT_MAX], out[PKT_MAX];
	size_t len = pkt_build(sp, in);
	uint64_t before[NCNT], after[NCNT];
	uint32_t olen, ret;
	int got = -1;

	counters(before);
	CHECK(!run(true, in, len, out, &olen, &ret, 0) && ret == XDP_PASS_ && olen == len &&
	      !memcmp(out, in, len), "%s [xdp]: passed untouched (TCP is routed by the TC "
	      "program)", name);
	if (run(false, in, len, out, &olen, &ret, 0)) {
		CHECK(0, "%s [tc]: test_run", name);
		return -1;
	}
	counters(after);
	if (ret == TC_REDIRECT_)
		for (int i = 0; i < n; i++)
			if (!memcmp(out, macs[i], 6))
				got = i;
	/* XDP checks the TCP header too (a fragment or a malformed header counts in both) */
	if (reason != NONE)
		CHECK(after[reason / 8] - before[reason / 8] ==
		      (reason == CNT(fragment) || reason == CNT(parse_error) ? 2u : 1u),
		      "%s: counted in %s", name, cnt_name(reason));
	return got;
}

static void table_tcp(void)
{
	static const uint8_t be_mac[4][6] = { { 2, 0, 0, 0, 6, 0x10 }, { 2, 0, 0, 0, 6, 0x11 },
					      { 2, 0, 0, 0, 6, 0x12 }, { 2, 0, 0, 0, 6, 0x13 } };
	const uint32_t ids[4] = { 60, 61, 62, 63 };
	struct kr_service t = { .ring_id = 6, .key_type = KR_KEY_TUPLE, .fwd_mode = KR_FWD_L2 };
	struct kr_service_key k = { .proto = 6, .family = 4 };
	struct pkt_spec s4 = PKT_V4(V4C, 40000, "192.0.2.60", 53), s6 = PKT_V6(V6C, 40001, VIP6, 53);
	uint32_t syn0, est0, p;
	int b;

	flows_fd = bpf_map__fd(skel->maps.kr_flows);
	flows_syn_fd = bpf_map__fd(skel->maps.kr_flows_syn);
	for (int i = 0; i < 4; i++)
		backend_set(ids[i], "10.9.0.60", be_mac[i], KR_BACKEND_UP);
	ring_publish(6, ids, 4);
	k.port = htons(53);
	inet_pton(AF_INET, "192.0.2.60", k.addr);
	if (bpf_map_update_elem(svc_fd, &k, &t, BPF_ANY))
		perror("tcp service");
	k = (struct kr_service_key){ .proto = 6, .port = htons(53) };	/* wildcard: v6 */
	if (bpf_map_update_elem(svc_fd, &k, &t, BPF_ANY))
		perror("tcp service");

	/* a SYN: the ring on the tuple, an embryonic entry, nothing established */
	s4.proto = 6;
	s4.tcp_flags = 0x02;
	p = tcp_point(&s4, 4);
	syn0 = map_count(flows_syn_fd);
	est0 = map_count(flows_fd);
	b = tcp_run("v4 SYN", &s4, be_mac, 4, CNT(routed));
	CHECK(b == (int)p, "v4 SYN: routed to the ring's backend %u of its tuple (got %d)", p, b);
	CHECK(flow_of(flows_syn_fd, &s4) == ids[p] && flow_of(flows_fd, &s4) < 0,
	      "v4 SYN: an embryonic entry only (backend %u)", ids[p]);
	/* the handshake's ACK: promoted, same backend */
	s4.tcp_flags = 0x10;
	b = tcp_run("v4 ACK after the SYN", &s4, be_mac, 4, CNT(routed));
	CHECK(b == (int)p && flow_of(flows_fd, &s4) == ids[p] && flow_of(flows_syn_fd, &s4) < 0,
	      "v4 ACK: same backend, moved to the established table");
	/* the flow's backend drained: the flow stays; new flows avoid it */
	backend_state(ids[p], KR_BACKEND_DRAIN);
	b = tcp_run("v4 ACK, its backend draining", &s4, be_mac, 4, CNT(routed));
	CHECK(b == (int)p, "drain: the established flow stays on backend %u (got %d)", p, b);
	{
		struct pkt_spec n = s4;
		int seen_other = 1;

		n.tcp_flags = 0x02;
		for (uint16_t port = 41000; port < 41064; port++) {
			n.sport = port;
			if (tcp_point(&n, 4) != p)
				continue;
			b = tcp_run("new SYN, its ring backend draining", &n, be_mac, 4, NONE);
			seen_other &= b >= 0 && b != (int)p;
		}
		CHECK(seen_other, "drain: new flows of the drained backend's points go elsewhere");
	}
	/* down: the entry is dropped, the ring (its walk) decides */
	backend_state(ids[p], KR_BACKEND_DOWN);
	b = tcp_run("v4 ACK, its backend down", &s4, be_mac, 4, CNT(failover_walks));
	CHECK(b >= 0 && b != (int)p && flow_of(flows_fd, &s4) < 0,
	      "down: the flow moves by the ring (to %d), its entry removed", b);
	backend_state(ids[p], KR_BACKEND_UP);
	/* no entry, not a SYN: the ring decides, nothing is written */
	syn0 = map_count(flows_syn_fd);
	est0 = map_count(flows_fd);
	for (uint16_t port = 42000; port < 42032; port++) {
		struct pkt_spec a = s4;

		a.sport = port;
		a.tcp_flags = 0x10;
		b = tcp_run("ACK without an entry", &a, be_mac, 4, NONE);
		if (b != (int)tcp_point(&a, 4))
			CHECK(0, "ACK without an entry from port %u: the ring's backend", port);
	}
	CHECK(map_count(flows_syn_fd) == syn0 && map_count(flows_fd) == est0,
	      "32 ACKs without entries: routed by the ring, no entry written (%u, %u)",
	      map_count(flows_syn_fd), map_count(flows_fd));
	/* RST frees the entry */
	s4.sport = 40002;
	s4.tcp_flags = 0x02;
	tcp_run("v4 SYN 2", &s4, be_mac, 4, NONE);
	s4.tcp_flags = 0x10;
	tcp_run("v4 ACK 2", &s4, be_mac, 4, NONE);
	CHECK(flow_of(flows_fd, &s4) >= 0, "flow 2 established");
	s4.tcp_flags = 0x14;
	b = tcp_run("v4 RST", &s4, be_mac, 4, CNT(routed));
	CHECK(b == (int)tcp_point(&s4, 4) && flow_of(flows_fd, &s4) < 0,
	      "RST: routed to its backend, its entry freed");

	/* headers: VLANs, IPv4 options, TCP options; IPv6 extension headers */
	{
		struct pkt_spec v = s4;

		v.sport = 40003;
		v.tcp_flags = 0x02;
		v.nvlan = 2;
		v.ip_opts = 8;
		v.tcp_opts = 20;
		b = tcp_run("v4 SYN, 2 VLANs, IPv4 and TCP options", &v, be_mac, 4, CNT(routed));
		CHECK(b == (int)tcp_point(&v, 4) && flow_of(flows_syn_fd, &v) == ids[b < 0 ? 0 : b],
		      "v4 SYN with VLANs and options: its ring backend, its entry");
	}
	s6.proto = 6;
	s6.tcp_flags = 0x02;
	s6.ext[0] = 0;
	s6.ext[1] = 60;
	s6.ext[2] = 43;
	s6.next = 3;
	s6.tcp_opts = 12;
	p = tcp_point(&s6, 4);
	b = tcp_run("v6 SYN, hop-by-hop, destination, routing headers, TCP options", &s6, be_mac, 4,
		    CNT(routed));
	CHECK(b == (int)p && flow_of(flows_syn_fd, &s6) == ids[p], "v6 SYN: backend %u", p);
	s6.tcp_flags = 0x18;
	b = tcp_run("v6 ACK+PSH", &s6, be_mac, 4, CNT(routed));
	CHECK(b == (int)p && flow_of(flows_fd, &s6) == ids[p], "v6: promoted, same backend");

	/* malformed: data offset below 5 words, beyond the packet; fragments */
	{
		struct pkt_spec m = s4;

		m.doff_override = 4;
		tcp_run("v4 TCP data offset 4", &m, be_mac, 4, CNT(parse_error));
		m.doff_override = 15;
		tcp_run("v4 TCP data offset 15 beyond the packet", &m, be_mac, 4, CNT(parse_error));
		m = s6;
		m.doff_override = 2;
		tcp_run("v6 TCP data offset 2", &m, be_mac, 4, CNT(parse_error));
		m = s4;
		m.frag = 2;
		tcp_run("v4 TCP non-first fragment", &m, be_mac, 4, CNT(fragment));
		m = s4;
		m.lie_tot = -10;	/* the TCP header runs past the IP packet */
		tcp_run("v4 TCP header beyond the IP length", &m, be_mac, 4, CNT(parse_error));
	}
	{
		struct kr_flow_stats fs[ncpu];
		uint32_t zero = 0;
		uint64_t syn = 0, prom = 0, hits = 0, ring = 0;

		if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.kr_flow_stats), &zero, fs))
			for (int c = 0; c < ncpu; c++) {
				syn += fs[c].syn_inserts;
				prom += fs[c].promoted;
				hits += fs[c].hits;
				ring += fs[c].ring;
			}
		/* promoted: the three handshakes; hits: the drained flow's ACK and the RST */
		CHECK(syn >= 4 && prom == 3 && hits == 2 && ring >= 32,
		      "flow counters: %llu embryonic inserts, %llu promoted, %llu hits, %llu by the "
		      "ring", (unsigned long long)syn, (unsigned long long)prom,
		      (unsigned long long)hits, (unsigned long long)ring);
	}
}

int main(void)
{
	struct kr_err err;
	int ret = 1;

	(void)err;
	setvbuf(stdout, NULL, _IOLBF, 0);
	ncpu = libbpf_num_possible_cpus();
	if (netns_setup()) {
		printf("not ok 1 - netns setup (needs root, iproute2)\n");
		return 1;
	}
	skel = keyrouter_bpf__open();
	if (!skel) {
		perror("open skeleton");
		return 1;
	}
	skel->rodata->kr_cfg_trace = 1;
	if (keyrouter_bpf__load(skel)) {
		printf("not ok 1 - load build/bpf/keyrouter.bpf.o\n");
		goto out;
	}
	CHECK(1, "keyrouter.bpf.o loads (xdp + tc)");
	xdp_fd = bpf_program__fd(skel->progs.kr_xdp);
	tc_fd = bpf_program__fd(skel->progs.kr_tc);
	svc_fd = bpf_map__fd(skel->maps.kr_services);
	be_fd = bpf_map__fd(skel->maps.kr_backends);
	dev_fd = bpf_map__fd(skel->maps.kr_devices);
	devm_fd = bpf_map__fd(skel->maps.kr_device_macs);
	cnt_fd = bpf_map__fd(skel->maps.kr_counters);
	bstat_fd = bpf_map__fd(skel->maps.kr_backend_stats);
	rings_fd = bpf_map__fd(skel->maps.kr_rings);
	ctl_fd = bpf_map__fd(skel->maps.kr_ring_ctl);

	memset(x255, 'x', 255);
	q_www_n = dns_query("wWw.ExAmple.COM", q_www, 0x0100);
	/* the ends of the lowercased range, A and Z, and the bytes next to it (@ [ ` {) */
	q_edge_n = dns_query("ZaZ.A@[`{Z.example", q_edge, 0x0100);
	q_resp_n = dns_query("www.example.com", q_resp, 0x8180);
	q_root_n = dns_query("", q_root, 0x0100);
	q_ptr_n = dns_query("www", q_ptr, 0x0100);
	q_ptr[12 + 4] = 0xc0;			/* "www" then a pointer */
	q_ptr[12 + 5] = 0x0c;
	q_label_n = dns_query("a", q_label, 0x0100);
	q_label[12] = 64;
	{
		char name[400];
		size_t o = 0;

		for (int i = 0; i < 5; i++) {		/* 5 x (1 + 60) + 1 = 306 > 255 */
			memset(name + o, 'a' + i, 60);
			o += 60;
			name[o++] = '.';
		}
		name[o - 1] = 0;
		q_long_n = dns_query(name, q_long, 0x0100);
	}

	table_parse();
	table_extractors();
	table_truncation();
	table_forward();
	table_tcp();
	ret = 0;
out:
	keyrouter_bpf__destroy(skel);
	return tap_done() || ret;
}
