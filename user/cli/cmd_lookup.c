// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `keyrouter lookup`: where does a key go on a ring (no traffic, no kernel). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "continuum.h"
#include "image.h"
#include "lookup_out.h"
#include "keyform.h"
#include "log.h"
#include "ring_opts.h"

static const char lookup_help[] =
	"Usage: keyrouter lookup --backends FILE --version v1|v2 [--point-multiple N]\n"
	"                        [--keys-file KEYS] [HEXKEY...]\n"
	"       keyrouter lookup -c CONFIG --ring NAME [--key-type TYPE] [KEY...]\n"
	"       keyrouter lookup -c CONFIG --service NAME [KEY...]\n"
	"\n"
	"Builds the ring and prints, for each key (KEYS first, then the arguments), one line:\n"
	"  <key hex or -> <crc32(key), 8 hex> <ring_index> <backend_index> <b1> <b2> <b3>\n"
	"ring_index = the first point with hash >= crc32(key) (past the last point: 0);\n"
	"b1..b3 = the backends of the next three ring points (the failover walk, repeats\n"
	"included, wrapping).  This is exactly the format of the ketama vectors' keys.txt.\n"
	"\n"
	"Keys: hex bytes (6b6579 = \"key\"), '-' = the empty key.  KEYS holds one key per line;\n"
	"lines starting with '#' and blank lines are skipped, anything after the first field\n"
	"is ignored (so a vectors' keys.txt can be fed back as is).\n"
	"\n"
	"Human key forms (--key-type TYPE, or the key type of --service): each argument and\n"
	"each line of KEYS is turned into exactly the key bytes the data path extracts from a\n"
	"packet, and the first column shows those bytes in hex:\n"
	"  tuple     10.0.0.1:5353 / [2001:db8::1]:443  source address + port (4+2 / 16+2)\n"
	"  payload   text, or hex:0a0b..  (with --service: its offset/length/delimiter are\n"
	"            applied to this payload)\n"
	"  dns       www.Example.COM.     wire format, ASCII-lowercased, final zero label\n"
	"  memcache  user:42, or a command line 'get user:42'\n"
	"  quic      0a0b0c0d...          connection ID in hex, 1..20 bytes\n"
	"\n" KR_RING_OPTS_HELP
	"Other:\n"
	"  --keys-file KEYS       keys, one per line ('-' for KEYS = standard input)\n"
	"  --key-type TYPE        keys in human form: tuple, payload, dns, memcache, quic\n"
	"  --addr                 add a column: the backend's address\n"
	"  --image                look up through the kernel ring image (bucket index, the\n"
	"                         BPF program's code) instead of the plain binary search;\n"
	"                         the output is the same\n"
	"  --via-kernel           ask the kernel: load the data path program (not attached),\n"
	"                         publish the ring, send each key as the UDP payload of a\n"
	"                         packet to a `payload` service through BPF_PROG_TEST_RUN;\n"
	"                         crc, ring index and backend are the program's (b1..b3: the\n"
	"                         points after its point).  Keys over 255 bytes are outside the\n"
	"                         kernel's range: printed as '<key> <crc> policy pass (...)'.\n"
	"                         Needs root.\n"
	"  -h, --help             this text\n";

enum { OPT_KEYS = 1, OPT_ADDR, OPT_IMAGE, OPT_KEY_TYPE, OPT_VIA_KERNEL };

struct lookup_ctx {
	struct kr_ring *ring;
	struct kr_image img;
	int use_image;
	int show_addr;
	uint8_t *key;
	size_t cap;
	enum kr_key_type key_type;		/* KR_KEY_NONE: keys in hex */
	const struct kr_keyspec *spec;		/* --service: its extractor */
	const struct kr_hash_secret *secret;	/* keyed hash (config "hash"), else crc32 */
	int via_kernel;
	struct kr_klookup *kl;			/* --via-kernel */
};

/* A human key form (keyform.h) -> ctx->key; returns the length, or -1 with err. */
static long parse_human(struct lookup_ctx *c, const char *s, struct kr_err *err)
{
	struct kr_key k;
	char msg[KR_ERR_MAX - 32];

	if (kr_keyform(c->key_type, c->spec, s, &k, msg, sizeof(msg)))
		return kr_errf(err, "bad %s key: %s", kr_key_type_name(c->key_type), msg);
	if (k.len > c->cap) {
		uint8_t *p = realloc(c->key, k.len);

		if (!p)
			return kr_errf(err, "out of memory");
		c->key = p;
		c->cap = k.len;
	}
	memcpy(c->key, k.b, k.len);
	return (long)k.len;
}

/* "-" or hex -> ctx->key; returns the length, or -1 with err. */
static long parse_key(struct lookup_ctx *c, const char *s, struct kr_err *err)
{
	size_t n = strlen(s);

	if (c->key_type != KR_KEY_NONE)
		return parse_human(c, s, err);
	if (!strcmp(s, "-"))
		return 0;
	if (n == 0 || n % 2)
		return kr_errf(err, "bad key '%s': expected hex bytes (an even number of hex "
			       "digits, e.g. 6b6579) or '-' for the empty key", s);
	if (n / 2 > c->cap) {
		uint8_t *k = realloc(c->key, n / 2);

		if (!k)
			return kr_errf(err, "out of memory");
		c->key = k;
		c->cap = n / 2;
	}
	for (size_t i = 0; i < n; i += 2) {
		int hi = kr_hexval(s[i]), lo = kr_hexval(s[i + 1]);

		if (hi < 0 || lo < 0)
			return kr_errf(err, "bad key '%s': '%c' at character %zu is not a hex "
				       "digit (expected hex bytes, e.g. 6b6579, or '-' for the "
				       "empty key)", s, hi < 0 ? s[i] : s[i + 1], hi < 0 ? i + 1 : i + 2);
		c->key[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return (long)(n / 2);
}

/* Ring index and backend of hash h, and the walk, by the ring or by the image. */
static int locate(const struct lookup_ctx *c, uint32_t h, uint32_t *ri, uint32_t *be,
		  uint32_t walk[3])
{
	uint32_t ii, hh;

	if (!c->use_image) {
		*ri = kr_ring_lower_bound(c->ring, h);
		*be = c->ring->backend[*ri];
		kr_ring_walk(c->ring, *ri, walk, 3);
		return 0;
	}
	if (kr_image_lookup(&c->img, h, &ii) || kr_image_point(&c->img, ii, &hh, be))
		return -1;
	*ri = kr_image_ring_index(&c->img, ii);
	for (int k = 0; k < 3; k++) {
		ii = kr_image_next_ring_point(&c->img, ii);
		if (kr_image_point(&c->img, ii, &hh, &walk[k]))
			return -1;
	}
	return 0;
}

static int print_key(struct lookup_ctx *c, long len)
{
	uint32_t h = c->secret ? kr_siphash13_32(c->key, (uint32_t)len, c->secret) :
				 kr_key_hash(c->key, (size_t)len), ri, be, w[3];
	char a[KR_SOCKADDR_STRLEN];
	struct kr_err err;

	if (c->kl) {
		if (!kr_klookup_print(c->kl, &c->img, c->key, (size_t)len, &err))
			return 0;
		pr_warn("keyrouter: lookup --via-kernel: %s\n", err.msg);
		return -1;
	}
	if (locate(c, h, &ri, &be, w)) {
		pr_warn("keyrouter: lookup: the ring image is inconsistent\n");
		return -1;
	}
	fputs(len ? "" : "-", stdout);
	for (long i = 0; i < len; i++)
		printf("%02x", c->key[i]);
	printf(" %08x %u %u %u %u %u", h, ri, be, w[0], w[1], w[2]);
	if (c->show_addr) {
		kr_sockaddr_format(&c->ring->backends[be].addr, a);
		printf(" %s", a);
	}
	putchar('\n');
	return 0;
}

static int lookup_file(struct lookup_ctx *c, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *ln = NULL, *tok, *save;
	struct kr_err err;
	size_t cap = 0;
	unsigned lineno = 0;
	int ret = 0;
	long len;

	if (!f) {
		pr_warn("keyrouter: couldn't open keys file '%s': %s\n", path, strerror(errno));
		return 1;
	}
	while (getline(&ln, &cap, f) >= 0) {
		lineno++;
		if (c->key_type != KR_KEY_NONE) {	/* human forms: the whole line */
			ln[strcspn(ln, "\r\n")] = 0;
			tok = ln;
			if (!ln[0] || ln[0] == '#')
				continue;
		} else {
			tok = strtok_r(ln, " \t\r\n", &save);
			if (!tok || tok[0] == '#')
				continue;
		}
		len = parse_key(c, tok, &err);
		if (len < 0) {
			pr_warn("keyrouter: %s:%u: %s\n", path, lineno, err.msg);
			ret = 1;
			break;
		}
		if (print_key(c, len)) {
			ret = 1;
			break;
		}
	}
	free(ln);
	if (f != stdin)
		fclose(f);
	return ret;
}

static int usage_error(const char *msg)
{
	pr_warn("keyrouter: lookup: %s\n", msg);
	fprintf(stderr, "Run 'keyrouter lookup --help' for the options.\n");
	return 2;
}

static int cmd_lookup(int argc, char **argv)
{
	static const struct option opts[] = {
		KR_RING_LONGOPTS,
		{ "keys-file", required_argument, NULL, OPT_KEYS },
		{ "addr", no_argument, NULL, OPT_ADDR },
		{ "image", no_argument, NULL, OPT_IMAGE },
		{ "key-type", required_argument, NULL, OPT_KEY_TYPE },
		{ "via-kernel", no_argument, NULL, OPT_VIA_KERNEL },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct lookup_ctx c = { 0 };
	struct kr_ring_opts o = { 0 };
	const char *keys = NULL;
	struct kr_err err;
	int ch, r, ret = 1;
	long len;

	optind = 0;	/* glibc: a full getopt reset (also of its place in a "-abc" cluster) */
	while ((ch = getopt_long(argc, argv, "h" KR_RING_SHORTOPTS, opts, NULL)) != -1) {
		r = kr_ring_opt(&o, ch, optarg, &err);
		if (r < 0)
			return usage_error(err.msg);
		if (r > 0)
			continue;
		switch (ch) {
		case OPT_KEYS:
			keys = optarg;
			break;
		case OPT_ADDR:
			c.show_addr = 1;
			break;
		case OPT_IMAGE:
			c.use_image = 1;
			break;
		case OPT_VIA_KERNEL:
			c.use_image = c.via_kernel = 1;
			break;
		case OPT_KEY_TYPE:
			if (kr_key_type_parse(optarg, &c.key_type)) {
				kr_errf(&err, "bad --key-type '%s': expected one of %s", optarg,
					kr_key_type_list());
				return usage_error(err.msg);
			}
			break;
		case 'h':
			fputs(lookup_help, stdout);
			return 0;
		default:
			fprintf(stderr, "Run 'keyrouter lookup --help' for the options.\n");
			return 2;
		}
	}
	if (kr_ring_opts_check(&o, &err))
		return usage_error(err.msg);
	if (!keys && optind >= argc)
		return usage_error("no keys: give --keys-file KEYS and/or keys as hex arguments");
	/* Check the argument keys before any work (a --service's key type: after loading). */
	for (int i = optind; i < argc && !o.service; i++)
		if (parse_key(&c, argv[i], &err) < 0) {
			free(c.key);
			return usage_error(err.msg);
		}
	if (kr_ring_opts_build(&o, &c.ring, &err)) {
		pr_warn("keyrouter: %s\n", err.msg);
		goto cleanup;
	}
	if (o.has_key) {
		if (c.key_type != KR_KEY_NONE && c.key_type != o.key.type) {
			kr_errf(&err, "--key-type %s differs from service '%s' (key type %s)",
				kr_key_type_name(c.key_type), o.service,
				kr_key_type_name(o.key.type));
			ret = usage_error(err.msg);
			goto cleanup;
		}
		c.key_type = o.key.type;
		c.spec = &o.key;
		for (int i = optind; i < argc; i++)
			if (parse_key(&c, argv[i], &err) < 0) {
				ret = usage_error(err.msg);
				goto cleanup;
			}
	}
	if (o.keyed) {
		if (c.via_kernel) {
			ret = usage_error("--via-kernel: not supported with a keyed hash (the "
					  "configuration's \"hash\" is siphash13)");
			goto cleanup;
		}
		c.secret = &o.secret;
	}
	if (c.use_image && kr_image_encode(&c.img, c.ring, NULL, &err)) {
		pr_warn("keyrouter: %s: %s\n", o.label, err.msg);
		goto cleanup;
	}
	if (c.via_kernel && kr_klookup_open(&c.kl, &c.img, c.ring->nbackends, &err)) {
		pr_warn("keyrouter: lookup --via-kernel: %s\n", err.msg);
		goto cleanup;
	}
	if (keys && lookup_file(&c, keys))
		goto cleanup;
	for (int i = optind; i < argc; i++) {
		len = parse_key(&c, argv[i], &err);
		if (len < 0 || print_key(&c, len))
			goto cleanup;
	}
	ret = fflush(stdout) ? 1 : 0;
cleanup:
	kr_klookup_close(c.kl);
	kr_image_free(&c.img);
	kr_ring_free(c.ring);
	free(c.key);
	return ret;
}
KR_COMMAND(lookup, "lookup", "where keys go on a ring: ring index, backend, failover walk",
	   cmd_lookup);
