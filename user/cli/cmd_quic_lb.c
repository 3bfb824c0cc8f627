// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `keyrouter quic-lb decode|encode`: the QUIC-LB codec for operators and tests. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "keyform.h"
#include "log.h"
#include "kernel_quic_lb.h"

static const char decode_help[] =
	"Usage: keyrouter quic-lb decode --server-id-len L --nonce-len N [--key HEX]\n"
	"                                [--via-kernel] CID...\n"
	"\n"
	"Decodes QUIC-LB connection IDs (draft-ietf-quic-load-balancers) as the load balancer\n"
	"does, for a configuration of server ID length L (1..15) and nonce length N (4..18,\n"
	"L + N <= 19), encrypted with the AES-128 key HEX (32 hex digits; single pass when\n"
	"L + N = 16, else four pass) or plaintext without --key.  Any config rotation 0..6 in\n"
	"the CID's first octet is accepted.  One line per CID:\n"
	"  <cid hex> <server id hex>\n"
	"  <cid hex> unroutable <reason>     (config rotation 7, too short, longer than 20)\n"
	"\n"
	"  --via-kernel   decode in the kernel: load the data path program (not attached) with\n"
	"                 a quic service having this configuration, send each CID as the DCID\n"
	"                 of a QUIC long-header packet through BPF_PROG_TEST_RUN and print the\n"
	"                 server ID the program decoded (its trace).  Needs root.\n"
	"  -h, --help     this text\n";

static const char encode_help[] =
	"Usage: keyrouter quic-lb encode --config-rotation R --server-id HEX --nonce HEX\n"
	"                                [--key HEX]\n"
	"\n"
	"Prints the QUIC-LB connection ID (hex) a server with server ID HEX (1..15 octets)\n"
	"issues with nonce HEX (4..18 octets; server ID + nonce <= 19 octets) under config\n"
	"rotation R (0..6), encrypted with the AES-128 key HEX (32 hex digits; single pass when\n"
	"server ID + nonce = 16 octets, else four pass), or plaintext without --key.  The first\n"
	"octet is (R << 5) | (server ID length + nonce length).\n"
	"  -h, --help     this text\n";

enum { OPT_SID_LEN = 1, OPT_NONCE_LEN, OPT_KEY, OPT_VIA_KERNEL, OPT_CR, OPT_SID, OPT_NONCE };

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

static int cmd_quic_lb_decode(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "server-id-len", required_argument, NULL, OPT_SID_LEN },
		{ "nonce-len", required_argument, NULL, OPT_NONCE_LEN },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "via-kernel", no_argument, NULL, OPT_VIA_KERNEL },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	long sl = -1, nl = -1;
	uint8_t key[16], cid[256];
	int have_key = 0, via_kernel = 0, ch, ret = 0;
	struct kr_qlb_conf conf;
	struct kr_kqlb *kq = NULL;
	struct kr_err err;
	char msg[160];

	optind = 0;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_SID_LEN:
			if (parse_len(optarg, KR_QLB_MIN_SID_LEN, KR_QLB_MAX_SID_LEN, &sl))
				return usage_error("decode", "--server-id-len: expected 1..15");
			break;
		case OPT_NONCE_LEN:
			if (parse_len(optarg, KR_QLB_MIN_NONCE_LEN, KR_QLB_MAX_NONCE_LEN, &nl))
				return usage_error("decode", "--nonce-len: expected 4..18");
			break;
		case OPT_KEY:
			if (unhex(optarg, key, 16) != 16)
				return usage_error("decode", "--key: expected 32 hex digits (AES-128)");
			have_key = 1;
			break;
		case OPT_VIA_KERNEL:
			via_kernel = 1;
			break;
		case 'h':
			fputs(decode_help, stdout);
			return 0;
		default:
			fprintf(stderr, "Run 'keyrouter quic-lb decode --help' for the options.\n");
			return 2;
		}
	}
	if (sl < 0 || nl < 0)
		return usage_error("decode", "--server-id-len and --nonce-len are required");
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
	kr_qlb_conf_init(&conf, (__u32)sl, (__u32)nl, 0, have_key ? key : NULL);
	memset(key, 0, sizeof(key));
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
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	long cr = -1;
	int sl = -1, nl = -1, have_key = 0, ch;
	uint8_t key[16], sid[KR_QLB_MAX_SID_LEN], nonce[KR_QLB_MAX_NONCE_LEN];
	struct kr_qlb_conf conf;
	struct kr_qlb_work w;
	__u32 len;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
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
		case OPT_KEY:
			if (unhex(optarg, key, 16) != 16)
				return usage_error("encode", "--key: expected 32 hex digits (AES-128)");
			have_key = 1;
			break;
		case 'h':
			fputs(encode_help, stdout);
			return 0;
		default:
			fprintf(stderr, "Run 'keyrouter quic-lb encode --help' for the options.\n");
			return 2;
		}
	}
	if (cr < 0 || sl < 0 || nl < 0)
		return usage_error("encode", "--config-rotation, --server-id and --nonce are required");
	if (optind < argc)
		return usage_error("encode", "unexpected arguments");
	if (sl + nl > KR_QLB_MAX_PLAIN_LEN)
		return usage_error("encode", "server ID + nonce exceed 19 octets: the CID would be "
				   "longer than 20");
	kr_qlb_conf_init(&conf, (__u32)sl, (__u32)nl, 0, have_key ? key : NULL);
	memset(key, 0, sizeof(key));
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
