// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `keyrouter quic-lb decode|encode`: the QUIC-LB codec for operators and tests. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apply_out.h"
#include "cmd.h"
#include "config.h"
#include "keyform.h"
#include "log.h"
#include "kernel_quic_lb.h"
#include "quic_lb.h"

static const char decode_help[] =
	"Usage: keyrouter quic-lb decode --server-id-len L --nonce-len N\n"
	"                                [--key-file FILE | --key HEX] [--via-kernel] CID...\n"
	"       keyrouter quic-lb decode -c FILE --service NAME [--via-kernel] CID...\n"
	"\n"
	"Decodes QUIC-LB connection IDs (draft-ietf-quic-load-balancers) as the load balancer\n"
	"does, for a configuration of server ID length L (1..15) and nonce length N (4..18,\n"
	"L + N <= 19), encrypted with the AES-128 key HEX (32 hex digits; single pass when\n"
	"L + N = 16, else four pass) or plaintext without --key.  Any config rotation 0..6 in\n"
	"the CID's first octet is accepted.  One line per CID:\n"
	"  <cid hex> <server id hex>\n"
	"  <cid hex> unroutable <reason>     (config rotation 7, too short, longer than 20)\n"
	"\n"
	"With --service the lengths and key are those of the QUIC-LB configuration of the\n"
	"CID's config rotation in the quic service NAME of the configuration FILE (a rotation\n"
	"it has none for is unroutable), and a server ID that a backend of the service has\n"
	"for that rotation is followed by the backend:\n"
	"  <cid hex> <server id hex> backend <address>\n"
	"\n"
	"  -c, --config FILE     the configuration (with --service)\n"
	"  -s, --service NAME    its quic service whose \"quic_lb\" configurations decode\n"
	"  --key-file FILE       the AES-128 key from FILE (32 hex digits; the checks of the\n"
	"                        configuration's key_file: a regular file, mode 600 or\n"
	"                        stricter): keeps the key out of ps and shell history\n"
	"  --key HEX             the key on the command line (prefer --key-file)\n"
	"  --via-kernel          decode in the kernel: load the data path program (not\n"
	"                        attached) with a quic service having this configuration,\n"
	"                        send each CID as the DCID of a QUIC long-header packet\n"
	"                        through BPF_PROG_TEST_RUN and print the server ID the\n"
	"                        program decoded (its trace).  Needs root.\n"
	"  -h, --help            this text\n";

static const char encode_help[] =
	"Usage: keyrouter quic-lb encode --config-rotation R --server-id HEX --nonce HEX\n"
	"                                [--key-file FILE | --key HEX]\n"
	"       keyrouter quic-lb encode -c FILE --service NAME --config-rotation R\n"
	"                                --server-id HEX --nonce HEX\n"
	"\n"
	"Prints the QUIC-LB connection ID (hex) a server with server ID HEX (1..15 octets)\n"
	"issues with nonce HEX (4..18 octets; server ID + nonce <= 19 octets) under config\n"
	"rotation R (0..6), encrypted with the AES-128 key HEX (32 hex digits; single pass when\n"
	"server ID + nonce = 16 octets, else four pass), or plaintext without --key.  The first\n"
	"octet is (R << 5) | (server ID length + nonce length).\n"
	"With --service the key, and the lengths the server ID and nonce must have, are those\n"
	"of config rotation R of the quic service NAME of the configuration FILE (its server\n"
	"use octets, if any, are zero).\n"
	"  -c, --config FILE     the configuration (with --service)\n"
	"  -s, --service NAME    its quic service\n"
	"  --key-file FILE       the AES-128 key from FILE (32 hex digits, mode 600)\n"
	"  --key HEX             the key on the command line (prefer --key-file)\n"
	"  -h, --help            this text\n";

enum { OPT_SID_LEN = 1, OPT_NONCE_LEN, OPT_KEY, OPT_VIA_KERNEL, OPT_CR, OPT_SID, OPT_NONCE,
       OPT_KEY_FILE };


static int usage_error(const char *cmd, const char *msg)
{
	pr_warn("keyrouter: quic-lb %s: %s\n", cmd, msg);
	fprintf(stderr, "Run 'keyrouter quic-lb %s --help' for the options.\n", cmd);
	return 2;
}

/* Hex into out (at most max octets): the octet count, or -1. */
static int unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n % 2 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		int hi = kr_hexval(s[i]), lo = kr_hexval(s[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}

static int parse_len(const char *s, long min, long max, long *out)
{
	char *e;
	long v;

	errno = 0;
	v = strtol(s, &e, 10);
	if (errno || e == s || *e || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static void print_hex(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
}

/* Where the codec's parameters come from: the options, or a service of a configuration. */
struct qlb_src {
	const char *config, *service, *key_file;
	bool have_key;
	uint8_t key[16];
	struct kr_config *cfg;
	const struct kr_cfg_service *svc;
};

/* The options decode and encode share (the key, -c, --service): 0 taken, 2 a usage error
 * (printed), -1 not one of them. */
static int src_opt(struct qlb_src *q, int ch, const char *arg, const char *cmd)
{
	switch (ch) {
	case OPT_KEY:
		if (unhex(arg, q->key, 16) != 16)
			return usage_error(cmd, "--key: expected 32 hex digits (AES-128)");
		q->have_key = true;
		return 0;
	case OPT_KEY_FILE:
		q->key_file = arg;
		return 0;
	case 'c':
		q->config = arg;
		return 0;
	case 's':
		q->service = arg;
		return 0;
	}
	return -1;
}

/* --key-file, and -c/--service: 0, or an exit status (the message printed). */
static int src_open(const char *cmd, struct qlb_src *q, bool lengths_given)
{
	struct kr_err err;
	int si;

	if (q->key_file) {
		if (q->have_key)
			return usage_error(cmd, "--key and --key-file exclude each other");
		if (kr_key_file_read(q->key_file, q->key, &err)) {
			pr_warn("keyrouter: quic-lb %s: --key-file: %s\n", cmd, err.msg);
			return 1;
		}
		q->have_key = true;
	}
	if (!q->config && !q->service)
		return 0;
	if (!q->config || !q->service)
		return usage_error(cmd, "-c FILE and --service NAME go together");
	if (q->have_key || lengths_given)
		return usage_error(cmd, "with --service the lengths and the key come from the "
				   "service's QUIC-LB configurations: drop --server-id-len, "
				   "--nonce-len, --key and --key-file");
	q->cfg = kr_cli_config_load(q->config);
	if (!q->cfg)
		return 1;
	si = kr_config_service(q->cfg, q->service);
	if (si < 0) {
		pr_warn("keyrouter: quic-lb %s: no service '%s' in %s\n", cmd, q->service,
			q->config);
		return 1;
	}
	q->svc = &q->cfg->services[si];
	if (!q->svc->nqlb) {
		pr_warn("keyrouter: quic-lb %s: service '%s' of %s has no \"quic_lb\" "
			"configuration\n", cmd, q->service, q->config);
		return 1;
	}
	return 0;
}

static void src_close(struct qlb_src *q)
{
	kr_config_free(q->cfg);
	memset(q->key, 0, sizeof(q->key));
}

/* The kernel-side conf of the service's configuration for rotation cr, or -1. */
static int src_conf(const struct qlb_src *q, unsigned cr, struct kr_qlb_conf *conf)
{
	const struct kr_cfg_qlb *c = kr_cfg_qlb_find(q->svc, cr);

	if (!c)
		return -1;
	return kr_qlb_conf_init(conf, c->sid_len, c->nonce_len, c->su_len,
				c->has_key ? c->key : NULL);
}

/* The backend of the service's ring with server ID v->sid for v->cr, or NULL. */
static const struct kr_cfg_backend *src_backend(const struct qlb_src *q,
						const struct kr_qlb_verdict *v)
{
	const struct kr_cfg_ring *r = &q->cfg->rings[q->svc->ring];

	for (uint32_t i = 0; i < r->nbackends; i++)
		for (uint32_t k = 0; k < r->backends[i].nqlb_sids; k++) {
			const struct kr_cfg_qlb_sid *id = &r->backends[i].qlb_sids[k];

			if (id->cr == v->cr && id->len == v->sid_len &&
			    !memcmp(id->id, v->sid, v->sid_len) &&
			    kr_cfg_in_subset(q->svc, &r->backends[i]))
				return &r->backends[i];
		}
	return NULL;
}

/* decode -c FILE --service NAME: each CID by the configuration of its own rotation. */
static int decode_service(const struct qlb_src *q, int n, char **cids, bool via_kernel,
			  struct kr_kqlb **kqs)
{
	uint8_t cid[256];
	char msg[160];
	int ret = 0;

	for (int i = 0; i < n; i++) {
		int len = unhex(cids[i], cid, sizeof(cid));
		unsigned cr = kr_qlb_config_rotation(cid[0]);
		const struct kr_cfg_backend *b;
		struct kr_qlb_verdict v;
		struct kr_qlb_conf conf;
		struct kr_err err;

		print_hex(cid, (size_t)len);
		if (cr < KR_QLB_CR_UNROUTABLE && src_conf(q, cr, &conf)) {
			printf(" unroutable config rotation %u: service %s has no configuration for "
			       "it\n", cr, q->service);
			continue;
		}
		if (cr >= KR_QLB_CR_UNROUTABLE)	/* any rotation's lengths give the verdict */
			src_conf(q, q->svc->qlb[0].cr, &conf);
		if (via_kernel) {
			if (!kqs[cr % KR_QLB_CR_UNROUTABLE] &&
			    kr_kqlb_open(&kqs[cr % KR_QLB_CR_UNROUTABLE], &conf, &err)) {
				pr_warn("\nkeyrouter: quic-lb decode --via-kernel: %s\n", err.msg);
				ret = 1;
				break;
			}
			if (kr_kqlb_decode(kqs[cr % KR_QLB_CR_UNROUTABLE], cid, (size_t)len, &v,
					   &err)) {
				pr_warn("\nkeyrouter: quic-lb decode --via-kernel: %s: %s\n", cids[i],
					err.msg);
				ret = 1;
				break;
			}
		} else {
			kr_qlb_user_decode(&conf, cid, (size_t)len, &v);
		}
		if (!v.routable) {
			printf(" unroutable %s\n", kr_qlb_reason(&v, &conf, (size_t)len, msg,
								 sizeof(msg)));
			memset(&conf, 0, sizeof(conf));
			continue;
		}
		memset(&conf, 0, sizeof(conf));
		putchar(' ');
		print_hex(v.sid, v.sid_len);
		b = src_backend(q, &v);
		if (b) {
			char addr[KR_SOCKADDR_STRLEN];

			kr_sockaddr_format(&b->addr, addr);
			printf(" backend %s", addr);
		}
		putchar('\n');
	}
	return fflush(stdout) ? 1 : ret;
}

static int cmd_quic_lb_decode(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "server-id-len", required_argument, NULL, OPT_SID_LEN },
		{ "nonce-len", required_argument, NULL, OPT_NONCE_LEN },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "key-file", required_argument, NULL, OPT_KEY_FILE },
		{ "config", required_argument, NULL, 'c' },
		{ "service", required_argument, NULL, 's' },
		{ "via-kernel", no_argument, NULL, OPT_VIA_KERNEL },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	long sl = -1, nl = -1;
	uint8_t cid[256];
	int via_kernel = 0, ch, ret = 0;
	struct kr_qlb_conf conf;
	struct kr_kqlb *kq = NULL, *kqs[KR_QLB_CR_UNROUTABLE] = {};
	struct qlb_src q = {};
	struct kr_err err;
	char msg[160];

	optind = 0;
	while ((ch = getopt_long(argc, argv, "hc:s:", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_SID_LEN:
			if (parse_len(optarg, KR_QLB_MIN_SID_LEN, KR_QLB_MAX_SID_LEN, &sl))
				return usage_error("decode", "--server-id-len: expected 1..15");
			break;
		case OPT_NONCE_LEN:
			if (parse_len(optarg, KR_QLB_MIN_NONCE_LEN, KR_QLB_MAX_NONCE_LEN, &nl))
				return usage_error("decode", "--nonce-len: expected 4..18");
			break;
		case OPT_VIA_KERNEL:
			via_kernel = 1;
			break;
		case 'h':
			fputs(decode_help, stdout);
			return 0;
		default: {
			int r = src_opt(&q, ch, optarg, "decode");

			if (r >= 0) {
				if (r)
					return r;
				break;
			}
			fprintf(stderr, "Run 'keyrouter quic-lb decode --help' for the options.\n");
			return 2;
		}
		}
	}
	if (!q.service && (sl < 0 || nl < 0))
		return usage_error("decode", "--server-id-len and --nonce-len (or -c FILE "
				   "--service NAME) are required");
	if (sl + nl > KR_QLB_MAX_PLAIN_LEN)
		return usage_error("decode", "server ID + nonce length exceed 19 octets: the CID "
				   "would be longer than 20");
	if (optind >= argc)
		return usage_error("decode", "no CIDs: give connection IDs in hex");
	for (int i = optind; i < argc; i++)
		if (unhex(argv[i], cid, sizeof(cid)) < 0) {
			snprintf(msg, sizeof(msg), "bad CID '%.60s': expected hex octets", argv[i]);
			return usage_error("decode", msg);
		}
	ret = src_open("decode", &q, sl >= 0 || nl >= 0);
	if (ret)
		goto out;
	if (q.svc) {
		ret = decode_service(&q, argc - optind, argv + optind, via_kernel, kqs);
		goto out;
	}
	kr_qlb_conf_init(&conf, (__u32)sl, (__u32)nl, 0, q.have_key ? q.key : NULL);
	if (via_kernel && kr_kqlb_open(&kq, &conf, &err)) {
		pr_warn("keyrouter: quic-lb decode --via-kernel: %s\n", err.msg);
		ret = 1;
		goto out;
	}
	for (int i = optind; i < argc; i++) {
		int n = unhex(argv[i], cid, sizeof(cid));
		struct kr_qlb_verdict v;

		if (kq) {
			if (kr_kqlb_decode(kq, cid, (size_t)n, &v, &err)) {
				pr_warn("keyrouter: quic-lb decode --via-kernel: %s: %s\n", argv[i],
					err.msg);
				ret = 1;
				break;
			}
		} else {
			kr_qlb_user_decode(&conf, cid, (size_t)n, &v);
		}
		print_hex(cid, (size_t)n);
		if (v.routable) {
			putchar(' ');
			print_hex(v.sid, v.sid_len);
			putchar('\n');
		} else {
			printf(" unroutable %s\n", kr_qlb_reason(&v, &conf, (size_t)n, msg, sizeof(msg)));
		}
	}
	if (fflush(stdout))
		ret = 1;
out:
	kr_kqlb_close(kq);
	for (unsigned i = 0; i < KR_QLB_CR_UNROUTABLE; i++)
		kr_kqlb_close(kqs[i]);
	src_close(&q);
	memset(&conf, 0, sizeof(conf));
	return ret;
}
KR_COMMAND(quic_lb_decode, "quic-lb decode",
	   "decode QUIC-LB connection IDs to their server IDs (userspace or the kernel)",
	   cmd_quic_lb_decode);

static int cmd_quic_lb_encode(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config-rotation", required_argument, NULL, OPT_CR },
		{ "server-id", required_argument, NULL, OPT_SID },
		{ "nonce", required_argument, NULL, OPT_NONCE },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "key-file", required_argument, NULL, OPT_KEY_FILE },
		{ "config", required_argument, NULL, 'c' },
		{ "service", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	long cr = -1;
	int sl = -1, nl = -1, ch, ret;
	uint8_t sid[KR_QLB_MAX_SID_LEN], nonce[KR_QLB_MAX_NONCE_LEN];
	struct kr_qlb_conf conf;
	struct kr_qlb_work w;
	struct qlb_src q = {};
	__u32 len;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "hc:s:", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_CR:
			if (parse_len(optarg, 0, KR_QLB_CR_UNROUTABLE - 1, &cr))
				return usage_error("encode", "--config-rotation: expected 0..6 (7 "
						   "marks unroutable CIDs)");
			break;
		case OPT_SID:
			sl = unhex(optarg, sid, sizeof(sid));
			if (sl < KR_QLB_MIN_SID_LEN)
				return usage_error("encode", "--server-id: expected 1..15 octets in hex");
			break;
		case OPT_NONCE:
			nl = unhex(optarg, nonce, sizeof(nonce));
			if (nl < KR_QLB_MIN_NONCE_LEN)
				return usage_error("encode", "--nonce: expected 4..18 octets in hex");
			break;
		case 'h':
			fputs(encode_help, stdout);
			return 0;
		default: {
			int r = src_opt(&q, ch, optarg, "encode");

			if (r >= 0) {
				if (r)
					return r;
				break;
			}
			fprintf(stderr, "Run 'keyrouter quic-lb encode --help' for the options.\n");
			return 2;
		}
		}
	}
	if (cr < 0 || sl < 0 || nl < 0)
		return usage_error("encode", "--config-rotation, --server-id and --nonce are required");
	if (optind < argc)
		return usage_error("encode", "unexpected arguments");
	if (sl + nl > KR_QLB_MAX_PLAIN_LEN)
		return usage_error("encode", "server ID + nonce exceed 19 octets: the CID would be "
				   "longer than 20");
	ret = src_open("encode", &q, false);
	if (ret) {
		src_close(&q);
		return ret;
	}
	if (q.svc) {
		const struct kr_cfg_qlb *c = kr_cfg_qlb_find(q.svc, (unsigned)cr);

		if (!c || c->sid_len != sl || c->nonce_len != nl) {
			if (c)
				pr_warn("keyrouter: quic-lb encode: config rotation %ld of service %s "
					"takes a %u-octet server ID and a %u-octet nonce (given: %d "
					"and %d)\n", cr, q.service, c->sid_len, c->nonce_len, sl, nl);
			else
				pr_warn("keyrouter: quic-lb encode: service %s has no QUIC-LB "
					"configuration for config rotation %ld\n", q.service, cr);
			src_close(&q);
			return 1;
		}
		src_conf(&q, (unsigned)cr, &conf);
	} else {
		kr_qlb_conf_init(&conf, (__u32)sl, (__u32)nl, 0, q.have_key ? q.key : NULL);
	}
	src_close(&q);
	memset(&w, 0, sizeof(w));
	memcpy(w.pt, sid, (size_t)sl);
	memcpy(w.pt + sl, nonce, (size_t)nl);
	len = kr_qlb_encode(&conf, &w, (__u32)cr);
	print_hex(w.cid, len);
	putchar('\n');
	memset(&conf, 0, sizeof(conf));
	memset(&w, 0, sizeof(w));
	return fflush(stdout) ? 1 : 0;
}
KR_COMMAND(quic_lb_encode, "quic-lb encode",
	   "the QUIC-LB connection ID of a server ID and nonce", cmd_quic_lb_encode);
