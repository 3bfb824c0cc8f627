// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel vs userspace key parity: for every extractor, PARITY_N (>= 100k) random packets
 * (random keys inside random framing: VLAN tags, IPv4 options, IPv6 extension headers)
 * run through the XDP program (every 8th also through TC) with the debug trace on.  The
 * extractor status, the key bytes and the key hash the kernel computed must equal those of
 * the userspace build of the same extractors (user/core/pktref.c, hashed with the engine's
 * independent user/core/crc32.c), and, for the DNS and memcache keys built from a human form,
 * the bytes of config's key form (user/core/keyform.c).  Keys are mostly valid, some too long,
 * some malformed; a summary prints the counts.
 *   PARITY_N=1000000 build/tests/test_parity     runs more
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tap.h"
#include "kr_datapath_kern_user.h"
#include "kr_parse.h"
#include "pktbuild.h"
#include "pktref.h"
#include "crc32.h"
#include "keyform.h"
#include "keyrouter.skel.h"

static struct keyrouter_bpf *skel;
static int xdp_fd, tc_fd, svc_fd;
static uint64_t rng = 0x9a2b17;

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

enum { P_TUPLE, P_PAY, P_PAYOFF, P_PAYDELIM, P_DNS, P_MC, P_QUIC, NP };
static const char *pname[NP] = { "tuple", "payload (whole)", "payload (offset+length)",
				 "payload (offset+delimiter)", "dns", "memcache", "quic" };
static const uint16_t pport[NP] = { 9003, 9000, 9001, 9002, 53, 11211, 443 };
static struct kr_service psvc[NP];

static void services(void)
{
	for (int p = 0; p < NP; p++) {
		struct kr_service_key k = { .proto = 17 };
		struct kr_service *s = &psvc[p];

		memset(s, 0, sizeof(*s));
		s->ring_id = 7;			/* never published: the trace is all we need */
		s->fwd_mode = KR_FWD_L2;
		s->key_type = p == P_TUPLE ? KR_KEY_TUPLE : p == P_DNS ? KR_KEY_DNS :
			      p == P_MC ? KR_KEY_MEMCACHE : p == P_QUIC ? KR_KEY_QUIC :
			      KR_KEY_PAYLOAD;
		if (p == P_PAYOFF) {
			s->payload_off = 3;
			s->payload_len = 16;
		} else if (p == P_PAYDELIM) {
			s->payload_off = 5;
			s->payload_delim = '\n';
			s->flags = KR_SVC_F_PAYLOAD_DELIM;
		} else if (p == P_QUIC) {
			s->quic_cid_len = 8;
		}
		k.port = htons(pport[p]);
		if (bpf_map_update_elem(svc_fd, &k, s, BPF_ANY)) {
			perror("service");
			exit(1);
		}
	}
}

static char *rand_addr(int family, char *buf)
{
	uint8_t a[16];

	for (int i = 0; i < 16; i++)
		a[i] = (uint8_t)rnd();
	if (family == 4)
		a[0] = 1 + rn(223);
	else
		a[0] = 0x20;
	inet_ntop(family == 6 ? AF_INET6 : AF_INET, a, buf, 64);
	return buf;
}

/* Random framing around the payload. */
static void rand_frame(struct pkt_spec *s, int p, char *sb, char *db)
{
	int fam = rn(2) ? 6 : 4;

	memset(s, 0, sizeof(*s));
	s->family = fam;
	s->src = rand_addr(fam, sb);
	s->dst = rand_addr(fam, db);
	s->sport = (uint16_t)rnd();
	s->dport = pport[p];
	s->nvlan = rn(3);
	if (fam == 4) {
		s->ip_opts = 4 * rn(11);
	} else {
		static const uint8_t ext[] = { 0, 43, 60, 44 };

		s->next = rn(4);
		for (int i = 0; i < s->next; i++)
			s->ext[i] = ext[rn(4)];
	}
}

static const char lab_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";

/* A random DNS query; *name = its presentation form (for the key form), "" if malformed. */
static size_t rand_dns(uint8_t *p, char *name)
{
	size_t o = 12, no = 0;
	int kind = rn(20), labels = kind == 4 ? 6 : 1 + rn(6);	/* 1 in 20 too long */

	memset(p, 0, 12);
	p[1] = (uint8_t)rnd();
	p[2] = kind == 0 ? 0x81 : 0x01;		/* 1 in 20 a response */
	p[5] = kind == 1 ? 0 : 1;		/* 1 in 20 no question */
	for (int l = 0; l < labels; l++) {
		int len = kind == 4 ? 50 + rn(14) : rn(8) == 0 ? 40 + rn(24) : 1 + rn(12);

		if (o + len + 1 > 590)
			break;
		p[o++] = (uint8_t)len;
		for (int i = 0; i < len; i++) {
			char c = lab_chars[rn(sizeof(lab_chars) - 1)];

			p[o++] = (uint8_t)c;
			name[no++] = c;
		}
		name[no++] = '.';
	}
	p[o++] = 0;
	name[no] = 0;
	if (kind == 2)
		p[12] = 0xc0;				/* a compression pointer */
	if (kind <= 2)
		name[0] = 0;
	pkt_put16(p + o, 1);
	pkt_put16(p + o + 2, 1);
	return kind == 3 ? o - 3 : o + 4;		/* 1 in 20 truncated */
}

static size_t rand_mc(uint8_t *p, char *form)
{
	static const char *cmds[] = { "get", "gets", "set", "add", "replace", "append",
				      "prepend", "cas", "delete", "incr", "decr", "touch", "gat",
				      "gats", "bogus" };
	const char *cmd = cmds[rn(15)];
	int klen = rn(10) == 0 ? 200 + rn(80) : 1 + rn(40), o = 8;
	char key[300];

	memcpy(p, "\0\x07\0\0\0\x01\0\0", 8);
	for (int i = 0; i < klen; i++)
		key[i] = (char)('!' + rn(94));		/* printable, no space */
	key[klen] = 0;
	o += sprintf((char *)p + o, "%s%s", cmd, rn(8) ? " " : "  ");
	if (!strncmp(cmd, "gat", 3))
		o += sprintf((char *)p + o, "%u ", rn(1000));
	memcpy(form, p + 8, o - 8);
	memcpy(form + o - 8, key, klen + 1);	/* the command line up to the key */
	memcpy(p + o, key, klen);
	o += klen;
	if (rn(4))
		o += sprintf((char *)p + o, rn(2) ? " 0 0 5\r\n" : "\r\n");
	if (!strcmp(cmd, "bogus") || klen > KR_MAX_KEY_LEN)
		form[0] = 0;
	return o;
}

static size_t rand_quic(uint8_t *p)
{
	size_t n;

	if (rn(2)) {				/* long header */
		uint8_t cl = rn(10) == 0 ? 0 : 1 + rn(20);

		p[0] = 0xc0 | rn(16);
		p[1] = 0; p[2] = 0; p[3] = 0; p[4] = 1;
		p[5] = cl;
		for (int i = 0; i < cl + 20; i++)
			p[6 + i] = (uint8_t)rnd();
		n = rn(10) == 0 ? rn(6 + cl) : 6 + cl + rn(20);
	} else {
		p[0] = 0x40 | rn(64);
		for (int i = 1; i < 40; i++)
			p[i] = (uint8_t)rnd();
		n = rn(10) == 0 ? rn(9) : 9 + rn(30);
	}
	return n;
}

static size_t rand_payload(uint8_t *p, int kind)
{
	size_t n = rn(8) == 0 ? 250 + rn(60) : rn(64);

	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
	if (kind == P_PAYDELIM && n > 6 && rn(4))
		p[5 + rn(n - 5)] = '\n';
	return n;
}

int main(void)
{
	static uint8_t in[PKT_MAX], out[PKT_MAX], pl[PKT_MAX];
	long n = getenv("PARITY_N") ? atol(getenv("PARITY_N")) : 100000;
	char sb[64], db[64], form[700];

	setvbuf(stdout, NULL, _IOLBF, 0);
	skel = keyrouter_bpf__open();
	if (!skel) {
		perror("open skeleton");
		return 1;
	}
	skel->rodata->kr_cfg_trace = 1;
	if (keyrouter_bpf__load(skel)) {
		printf("not ok 1 - load keyrouter.bpf.o\n");
		return 1;
	}
	xdp_fd = bpf_program__fd(skel->progs.kr_xdp);
	tc_fd = bpf_program__fd(skel->progs.kr_tc);
	svc_fd = bpf_map__fd(skel->maps.kr_services);
	services();

	for (int p = 0; p < NP; p++) {
		long found = 0, notfound = 0, toolong = 0, mism = 0, formchk = 0, formbad = 0, tc = 0;

		for (long i = 0; i < n; i++) {
			struct pkt_spec s;
			struct kr_ref_out ref;
			const struct kr_trace *t = &skel->bss->kr_trace_last;
			size_t plen = 0, len;
			int ntimes = i % 8 == 0 ? 2 : 1;

			rand_frame(&s, p, sb, db);
			form[0] = 0;
			switch (p) {
			case P_DNS: plen = rand_dns(pl, form); break;
			case P_MC: plen = rand_mc(pl, form); break;
			case P_QUIC: plen = rand_quic(pl); break;
			case P_TUPLE: plen = rn(20); break;
			default: plen = rand_payload(pl, p); break;
			}
			s.payload = pl;
			s.plen = plen;
			len = pkt_build(&s, in);
			kr_ref_packet(in, len, &psvc[p], &ref);
			for (int x = 0; x < ntimes; x++) {
				LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = len,
					    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
				uint64_t seq = t->seq;
				int ok;

				if (bpf_prog_test_run_opts(x ? tc_fd : xdp_fd, &o)) {
					printf("not ok %d - %s: test_run: %s\n", ++tap_n, pname[p],
					       strerror(errno));
					return 1;
				}
				tc += x;
				ok = ref.parse_rc == KR_PARSE_OK && t->seq == seq + 1 &&
				     t->status == (uint32_t)ref.key_status;
				if (ok && ref.key_status == KR_KEY_OK)
					ok = t->key_len == ref.key_len && t->key_hash == ref.key_hash &&
					     !memcmp(t->key, ref.key, ref.key_len);
				if (!ok && mism++ < 5) {
					DIAG("%s packet %ld [%s]: kernel status %u len %u hash %08x, "
					     "userspace parse %d status %d len %u hash %08x", pname[p], i,
					     x ? "tc" : "xdp", t->status, t->key_len, t->key_hash,
					     ref.parse_rc, ref.key_status, ref.key_len, ref.key_hash);
				}
			}
			found += ref.key_status == KR_KEY_OK;
			notfound += ref.key_status == KR_KEY_NOT_FOUND;
			toolong += ref.key_status == KR_KEY_TOO_LONG;
			if (form[0] && ref.key_status == KR_KEY_OK) {
				struct kr_key k;
				struct kr_err err;

				formchk++;
				if (kr_keyform(p == P_DNS ? KR_KEY_DNS : KR_KEY_MEMCACHE, NULL, form, &k,
					       &err) || k.len != t->key_len ||
				    memcmp(k.b, t->key, k.len)) {
					if (formbad++ < 5)
						DIAG("%s packet %ld: key form '%s' differs from the "
						     "kernel's key", pname[p], i, form);
				}
			}
		}
		CHECK(mism == 0, "%s: %ld packets (%ld also through TC): kernel = userspace in "
		      "status, key bytes and hash (%ld keys, %ld no key, %ld too long; %ld "
		      "mismatches)", pname[p], n, tc, found, notfound, toolong, mism);
		CHECK(found >= n / 2 && (p == P_TUPLE || notfound + toolong > 0),
		      "%s: the mix has keys (%ld) and, except for tuple, misses (%ld)", pname[p],
		      found, notfound + toolong);
		if (p == P_DNS || p == P_MC)
			CHECK(formbad == 0 && formchk > n / 4, "%s: %ld kernel keys = config's key "
			      "form of the same name/command (%ld differ)", pname[p], formchk,
			      formbad);
	}
	keyrouter_bpf__destroy(skel);
	return tap_done();
}
