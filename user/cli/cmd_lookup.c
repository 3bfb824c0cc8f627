// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `keyrouter lookup`: where does a key go on a ring (no traffic, no kernel). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "continuum.h"
#include "image.h"
#include "kernel_lookup.h"
#include "keyform.h"
#include "log.h"
#include "ops.h"
#include "ops_live.h"
#include "ops_hot.h"
#include "ops_kernel.h"
#include "apply_out.h"
#include <jansson.h>
#include "opts.h"
#include "ring_opts.h"
#include "svc_route.h"
#include "quic_lb.h"

static const char lookup_help[] =
	"Usage: keyrouter lookup --backends FILE --version v1|v2 [--point-multiple N]\n"
	"                        [--keys-file KEYS] [--addr] [--image | --via-kernel] [HEXKEY...]\n"
	"       keyrouter lookup -c CONFIG --ring NAME [--key-type TYPE] [--keys-file KEYS]\n"
	"                        [--addr] [--image | --via-kernel] [KEY...]\n"
	"       keyrouter lookup -c CONFIG --service NAME [--live | --instance NAME | --pin-dir DIR]\n"
	"                        [--keys-file KEYS] [--addr] [--via-kernel | --tcp] [KEY...]\n"
	"\n"
	"Builds the ring and prints, for each key (KEYS first, then the arguments), one line:\n"
	"  <key hex or -> <crc32(key), 8 hex> <ring_index> <backend_index> <b1> <b2> <b3>\n"
	"ring_index = the first point with hash >= crc32(key) (past the last point: 0);\n"
	"b1..b3 = the backends of the next three ring points (the failover walk, repeats\n"
	"included, wrapping).  This is exactly the format of the ketama vectors' keys.txt.\n"
	"\n"
	"With --service, the line says what the data path does with the key for that\n"
	"service: the columns above are the key's own point on the ring the service uses\n"
	"(the service's ring, or the dedicated ring of its subset), then\n"
	"  route <backend_index> [walk <n> (<why the key's own backend is skipped>)]\n"
	"the backend the failover walk reaches: it skips backends outside the service's\n"
	"subset (\"subset\": tags) and backends whose state is down or drain (from the\n"
	"configuration, or with --live the running instance's); a key with no reachable\n"
	"backend shows \"route none\" and the service's no-route policy.  Backend indices\n"
	"are positions in the ring's \"backends\" list of the configuration.\n"
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
	"  quic      0a0b0c0d...          connection ID in hex, 1..20 bytes; for a --service\n"
	"            with QUIC-LB (docs/quic.md) a CID carrying the server ID of a backend\n"
	"            that is not down prints '<cid> quic-lb config-rotation R server-id HEX\n"
	"            route B [addr]' (no ring lookup); any other CID the ring line followed\n"
	"            by 'quic-lb ring fallback: <why>'\n"
	"\n" KR_RING_OPTS_HELP
	"Other:\n"
	"  --keys-file KEYS       keys, one per line ('-' for KEYS = standard input)\n"
	"  --key-type TYPE        keys in human form: tuple, payload, dns, memcache, quic\n"
	"  --addr                 add a column: the backend's address (--service: after the\n"
	"                         route's backend index)\n"	"  --header               first a comment line ('# key hash ...') naming the columns\n"
	"                         of the lines that follow\n"
	"  -j, --json             one JSON object per key and line instead (JSON Lines):\n"
	"                         key, hash (hex strings), ring_index, backend and next\n"
	"                         (three) as {index, address} (index null: a backend the\n"
	"                         file lacks), route {index, address, walk, skipped {backend,\n"
	"                         because}} or null with no_route {why, policy}; quic_lb\n"
	"                         {config_rotation, server_id} or quic_lb_fallback {outcome,\n"
	"                         why}; --live: slot, generation, migrated; --via-kernel's\n"
	"                         packets the program did not route: verdict, no_key\n"
	"  --live                 --service: what the running instance does: the ring it has\n"
	"                         published for the service (its kr_services entry), each\n"
	"                         key on the slot the ring's control word gives it (during a\n"
	"                         migration: the new slot for the fraction's share of keys),\n"
	"                         that slot's image and the live backend states and subset;\n"
	"                         the configuration gives only the key type and the\n"
	"                         backends' numbering (a published backend the file lacks:\n"
	"                         '-', --addr names it).  Each line ends with\n"
	"                         'slot S generation G', and '(active)' or '(migrated)'\n"
	"                         while a migration runs\n"
	"  -i, --instance NAME    --live with instance NAME (default: the file's \"instance\",\n"
	"                         else \"default\")\n"
	"  -p, --pin-dir DIR      --live with the maps pinned in DIR\n"
	"  --tcp                  --service: the keys are TCP flows, ADDR:PORT of the client:\n"
	"                         where a new flow of the service goes (the ring on its\n"
	"                         tuple, never spilled; docs/datapath.md \"TCP\"); later\n"
	"                         segments follow the router's flow table\n"
	"  --client ADDR:PORT     --service: a hot key's replica is the one of this client\n"
	"                         (its source address and port); without it, the owner.\n"
	"                         A hot key's line says 'replica R of K' (--json: route\n"
	"                         {replica, replicas}); QUIC services have none\n"
	"  --image                look up through the kernel ring image (bucket index, the\n"
	"                         BPF program's code) instead of the plain binary search;\n"
	"                         the output is the same\n"
	"  --via-kernel           ask the kernel: load the data path program (not attached),\n"
	"                         publish the ring, send each key as the UDP payload of a\n"
	"                         packet to a `payload` service through BPF_PROG_TEST_RUN;\n"
	"                         crc, ring index and backend are the program's (b1..b3: the\n"
	"                         points after its point).  Keys over 255 bytes are outside the\n"
	"                         kernel's range: printed as '<key> <crc> policy pass (...)'.\n"
	"                         With --service, the program gets the service's subset\n"
	"                         and the backends' states too; with --live (or --instance,\n"
	"                         --pin-dir) it gets the instance's: both published slots,\n"
	"                         the control word (the program picks each key's slot),\n"
	"                         the backends' entries and the subset.  Needs root.\n"
	"  -h, --help             this text\n";


enum { OPT_KEY_TYPE = 1 };

struct lookup_ctx {
	struct kr_ring_opts o;
	const char *keys, *instance, *pin_dir;
	bool use_image, show_addr, via_kernel, live, json, header;
	bool tcp;				/* --tcp: the keys are TCP flows */
	struct kr_keyspec tcp_spec;		/* ... keyed by their tuple */
	struct kr_ring *ring;
	struct kr_image img;
	uint8_t *key;
	size_t cap;
	enum kr_key_type key_type;		/* KR_KEY_NONE: keys in hex */
	const struct kr_keyspec *spec;		/* --service: its extractor */
	const struct kr_hash_secret *secret;	/* keyed hash (config "hash"), else crc32 */
	struct kr_svc_route sr;			/* --service: the data path's route */
	bool service;
	/* --live: the instance's own ring for the service, each slot's published image
	 * routed like sr; a key's slot is the one its control word chooses */
	struct kr_ops_live_ring lr;
	struct kr_svc_route slot_sr[2];
	bool live_ring;
	const struct kr_svc_route *cur;		/* the route of the line being printed */
	struct kr_klookup *kl;			/* --via-kernel */
	const char *client;			/* --client ADDR:PORT (hot keys' replica) */
	struct kr_cfg_hot_key *live_hot;	/* --live: the instance's hot keys of the ring */
	uint32_t nlive_hot;
};

/* ---- keys ------------------------------------------------------------------------ */

static int grow(struct lookup_ctx *c, size_t n, struct kr_err *err)
{
	uint8_t *p;

	if (n <= c->cap)
		return 0;
	p = realloc(c->key, n);
	if (!p)
		return kr_errf(err, "out of memory");
	c->key = p;
	c->cap = n;
	return 0;
}

/* A human key form (keyform.h) -> ctx->key; returns the length, or -1 with err. */
static long parse_human(struct lookup_ctx *c, const char *s, struct kr_err *err)
{
	struct kr_key k;
	struct kr_err e = { "" };

	if (kr_keyform(c->key_type, c->spec, s, &k, &e))
		return kr_errf(err, "bad %s key: %.*s", kr_key_type_name(c->key_type),
			       KR_ERR_MAX - 32, e.msg);
	if (grow(c, k.len, err))
		return -1;
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
	if (grow(c, n / 2, err))
		return -1;
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

/* ---- one output line ----------------------------------------------------------- */

/* What lookup says about one key, printed as a text line or (--json) a JSON object. */
struct out_line {
	long len;			/* the key: c->key[0..len) */
	uint32_t hash;
	bool policy;			/* --via-kernel: no key in the packet, or too long */
	uint32_t verdict, status;	/* with policy: XDP action, enum kr_key_status */
	bool point;			/* the columns of the key's point (else "- - - - -") */
	uint32_t ri, be, w[3];		/* ring index, its backend, the next three */
	bool route;			/* --service: the route */
	int reason;			/* enum kr_route_reason */
	uint32_t route_be, walk, point_be;
	bool spilled;			/* --service: routed past a backend the key spills from */
	uint32_t replicas, replica;	/* --service: a hot key's replicas, the client's */
	bool qlb;			/* QUIC-LB: routed by the CID's server ID */
	uint8_t cr, sid_len, sid[KR_QLB_MAX_SID_LEN];
	uint32_t fallback;		/* QUIC-LB fallback to the ring (KR_QLB_NOUTCOMES: none) */
	bool slot;			/* --live: the slot, its generation, migrating */
	uint32_t slot_no;
};

static void out_init(struct out_line *o, long len, uint32_t hash)
{
	memset(o, 0, sizeof(*o));
	o->len = len;
	o->hash = hash;
	o->fallback = KR_QLB_NOUTCOMES;
}

static void put_key(const struct lookup_ctx *c, long len)
{
	fputs(len ? "" : "-", stdout);
	for (long i = 0; i < len; i++)
		printf("%02x", c->key[i]);
}

/* The address of backend b of the ring the columns refer to. */
static void fmt_addr(const struct lookup_ctx *c, uint32_t b, char a[KR_SOCKADDR_STRLEN])
{
	if (c->service)
		kr_sockaddr_format(&c->cur->addr[b], a);
	else
		kr_sockaddr_format(&c->ring->backends[b].addr, a);
}

/* " <address>" of backend b (with --addr). */
static void put_addr(const struct lookup_ctx *c, uint32_t b)
{
	char a[KR_SOCKADDR_STRLEN];

	if (!c->show_addr)
		return;
	fmt_addr(c, b, a);
	printf(" %s", a);
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

static uint32_t key_hash(const struct lookup_ctx *c, long len)
{
	return c->secret ? kr_siphash13_32(c->key, (uint32_t)len, c->secret) :
			   kr_key_hash(c->key, (size_t)len);
}

/* A backend index of a published ring (--live) that the configuration does not have. */
static bool not_in_config(const struct lookup_ctx *c, uint32_t b)
{
	return c->service && b >= c->sr.cring->nbackends;
}

/* " <backend index>": "-" for a backend the configuration does not have (--addr names
 * it). */
static void put_index(const struct lookup_ctx *c, uint32_t b)
{
	if (not_in_config(c, b))
		fputs(" -", stdout);
	else
		printf(" %u", b);
}

/* Why the key's own backend p is not the route (--service). */
static const char *skip_reason(const struct lookup_ctx *c, uint32_t p)
{
	uint8_t st = c->cur->state[p];

	if (!c->cur->in_subset[p])
		return "not in the service's subset";
	return st == KR_BACKEND_DOWN ? "down" : st == KR_BACKEND_DRAIN ? "drain" :
	       st == KR_BACKEND_UNUSED ? "not in the running instance" :
	       c->cur->spill[p] && !c->cur->nospill ? "spill: the key spills from it" : "up";
}

static const char *no_route_why(int reason)
{
	return reason == KR_ROUTE_NO_RING ? "nothing published in the slot" :
	       reason == KR_ROUTE_WALK_LIMIT ? "walk limit" : "no backend up";
}

/* The no-route policy's verdict for reason (no ring: the data path passes the packet). */
static const char *no_route_policy(const struct lookup_ctx *c, int reason)
{
	if (reason == KR_ROUTE_NO_RING)
		return "pass";
	return c->sr.svc->policy.all_down == KR_POLICY_DROP ? "drop" : "pass";
}

/* What the program did with a packet it did not route, and why. */
static const char *kernel_status_name(uint32_t st)
{
	switch (st) {
	case KR_KEY_TOO_LONG:
		return "key longer than 255 bytes: outside the kernel's range";
	case KR_KEY_NOT_FOUND:
		return "no key in the packet";
	default:
		return "bad service";
	}
}

static const char *kernel_verdict_name(uint32_t v)
{
	return v == 1 ? "drop" : v == 2 ? "pass" : v == 3 ? "tx" : v == 4 ? "redirect" : "aborted";
}

/* "(<why>)" of a QUIC-LB fallback, or "" */
static const char *fallback_why(const struct lookup_ctx *c, const struct out_line *o,
				char *why, size_t n)
{
	struct kr_qlb_verdict v = { .outcome = o->fallback, .cr = o->len ? c->key[0] >> 5 : 0 };
	const struct kr_cfg_qlb *q = kr_cfg_qlb_find(c->sr.svc, v.cr);
	struct kr_qlb_conf qc = { .sid_len = q ? q->sid_len : 0, .nonce_len = q ? q->nonce_len : 0 };

	if (o->fallback == KR_QLB_FB_UNROUTABLE)
		return "config rotation 7";
	if (o->fallback == KR_QLB_FB_UNKNOWN_SID || o->fallback == KR_QLB_FB_BACKEND_DOWN)
		return "";
	return kr_qlb_reason(&v, &qc, (size_t)o->len, why, n);
}

/* The text line: the columns of keys.txt, then the route, QUIC-LB and slot parts. */
static void emit_text(const struct lookup_ctx *c, const struct out_line *o)
{
	char why[128];

	put_key(c, o->len);
	if (o->policy) {
		printf(" %08x policy %s (%s)\n", o->hash, kernel_verdict_name(o->verdict),
		       kernel_status_name(o->status));
		return;
	}
	if (o->qlb) {
		printf(" quic-lb config-rotation %u server-id ", o->cr);
		for (unsigned i = 0; i < o->sid_len; i++)
			printf("%02x", o->sid[i]);
		printf(" route %u", o->route_be);
		put_addr(c, o->route_be);
		putchar('\n');
		return;
	}
	if (o->point) {
		printf(" %08x %u", o->hash, o->ri);
		put_index(c, o->be);
		for (int k = 0; k < 3; k++)
			put_index(c, o->w[k]);
	} else {
		printf(" %08x - - - - -", o->hash);
	}
	if (!o->route) {
		put_addr(c, o->be);
	} else if (o->reason == KR_ROUTE_OK) {
		fputs(" route", stdout);
		put_index(c, o->route_be);
		put_addr(c, o->route_be);
	} else if (o->reason == KR_ROUTE_NO_RING) {
		printf(" route none (nothing published in the slot: the data path passes it)");
	} else {
		printf(" route none (%s: the service's no-route policy, %s)", no_route_why(o->reason),
		       no_route_policy(c, o->reason));
	}
	if (o->route && o->walk) {
		printf(" walk %u (backend", o->walk);
		put_index(c, o->point_be);
		printf(": %s)", skip_reason(c, o->point_be));
	}
	if (o->route && o->spilled)
		fputs(" spilled", stdout);
	if (o->route && o->replicas)
		printf(" replica %u of %u", o->replica, o->replicas);
	if (o->fallback < KR_QLB_NOUTCOMES) {
		const char *w = fallback_why(c, o, why, sizeof(why));

		printf(" quic-lb ring fallback: %s", kr_qlb_outcome_name(o->fallback));
		if (w[0])
			printf(" (%s)", w);
	}
	if (o->slot) {
		printf(" slot %u", o->slot_no);
		if (c->lr.present[o->slot_no])
			printf(" generation %llu",
			       (unsigned long long)c->lr.generation[o->slot_no]);
		if (kr_ctl_frac(c->lr.ctl))
			fputs(o->slot_no == kr_ctl_active(c->lr.ctl) ? " (active)" : " (migrated)",
			      stdout);
	}
	putchar('\n');
}

/* {"index": i or null, "address": "..."} of backend b */
static json_t *j_backend(const struct lookup_ctx *c, uint32_t b)
{
	char a[KR_SOCKADDR_STRLEN];

	fmt_addr(c, b, a);
	return json_pack("{s:o,s:s}", "index", not_in_config(c, b) ? json_null() :
			 json_integer(b), "address", a);
}

static char *hex(const uint8_t *p, size_t n)
{
	char *s = malloc(2 * n + 1);

	for (size_t i = 0; s && i < n; i++)
		sprintf(s + 2 * i, "%02x", p[i]);
	if (s)
		s[2 * n] = 0;
	return s;
}

/* --json: the same facts as one object per line (docs: keyrouter(8) "lookup --json"). */
static int emit_json(const struct lookup_ctx *c, const struct out_line *o)
{
	char hash[9], why[128], *k = hex(c->key, (size_t)o->len);
	json_t *j = json_object(), *r;
	int rc;

	snprintf(hash, sizeof(hash), "%08x", o->hash);
	json_object_set_new(j, "key", json_string(k ? k : ""));
	free(k);
	json_object_set_new(j, "hash", json_string(hash));
	if (o->policy) {
		json_object_set_new(j, "verdict", json_string(kernel_verdict_name(o->verdict)));
		json_object_set_new(j, "no_key", json_string(kernel_status_name(o->status)));
		goto out;
	}
	if (o->qlb) {
		char *sid = hex(o->sid, o->sid_len);

		json_object_set_new(j, "quic_lb", json_pack("{s:i,s:s}", "config_rotation", o->cr,
							    "server_id", sid ? sid : ""));
		free(sid);
		json_object_set_new(j, "route", j_backend(c, o->route_be));
		goto out;
	}
	if (o->point) {
		json_t *next = json_array();

		for (int i = 0; i < 3; i++)
			json_array_append_new(next, j_backend(c, o->w[i]));
		json_object_set_new(j, "ring_index", json_integer(o->ri));
		json_object_set_new(j, "backend", j_backend(c, o->be));
		json_object_set_new(j, "next", next);
	}
	if (o->route && o->reason == KR_ROUTE_OK) {
		r = j_backend(c, o->route_be);
		json_object_set_new(r, "walk", json_integer(o->walk));
		json_object_set_new(r, "spilled", json_boolean(o->spilled));
		if (o->replicas) {
			json_object_set_new(r, "replica", json_integer(o->replica));
			json_object_set_new(r, "replicas", json_integer(o->replicas));
		}
		if (o->walk)
			json_object_set_new(r, "skipped", json_pack("{s:o,s:s}", "backend",
				j_backend(c, o->point_be), "because", skip_reason(c, o->point_be)));
		json_object_set_new(j, "route", r);
	} else if (o->route) {
		json_object_set_new(j, "route", json_null());
		json_object_set_new(j, "no_route", json_pack("{s:s,s:s}", "why",
				    no_route_why(o->reason), "policy", no_route_policy(c, o->reason)));
	}
	if (o->fallback < KR_QLB_NOUTCOMES)
		json_object_set_new(j, "quic_lb_fallback", json_pack("{s:s,s:s}", "outcome",
				    kr_qlb_outcome_name(o->fallback), "why",
				    fallback_why(c, o, why, sizeof(why))));
	if (o->slot) {
		json_object_set_new(j, "slot", json_integer(o->slot_no));
		json_object_set_new(j, "generation", c->lr.present[o->slot_no] ?
				    json_integer((json_int_t)c->lr.generation[o->slot_no]) :
				    json_null());
		json_object_set_new(j, "migrated", json_boolean(kr_ctl_frac(c->lr.ctl) &&
				    o->slot_no != kr_ctl_active(c->lr.ctl)));
	}
out:
	rc = json_dumpf(j, stdout, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(j);
	putchar('\n');
	return rc ? -1 : 0;
}

static int emit(const struct lookup_ctx *c, const struct out_line *o)
{
	if (c->json)
		return emit_json(c, o);
	emit_text(c, o);
	return 0;
}

static int line_ring(struct lookup_ctx *c, long len)
{
	struct out_line o;

	out_init(&o, len, key_hash(c, len));
	if (locate(c, o.hash, &o.ri, &o.be, o.w)) {
		pr_warn("keyrouter: lookup: the ring image is inconsistent\n");
		return -1;
	}
	o.point = true;
	return emit(c, &o);
}

/* A CID of a service with QUIC-LB that carries the server ID of a backend not down: "<cid>
 * quic-lb config-rotation R server-id HEX route B [addr]" (no ring lookup), 1.  Else 0
 * and o->fallback = why the ring decides (enum kr_qlb_outcome); -1: output failed. */
static int line_quic_lb(struct lookup_ctx *c, struct out_line *o)
{
	struct kr_qlb_verdict v;
	uint32_t be;

	c->cur = &c->sr;
	kr_qlb_cfg_route(c->o.cfg, c->sr.svc, c->key, (size_t)o->len, &v, &be);
	if (v.outcome == KR_QLB_ROUTED || v.outcome == KR_QLB_FB_BACKEND_DOWN)	/* the states
		 * the walk uses (config or --live): down and released backends lose their CIDs */
		v.outcome = c->sr.state[be] == KR_BACKEND_DOWN || c->sr.state[be] == KR_BACKEND_UNUSED ?
			    KR_QLB_FB_BACKEND_DOWN : KR_QLB_ROUTED;
	if (v.outcome != KR_QLB_ROUTED) {
		o->fallback = v.outcome;
		return 0;
	}
	o->qlb = true;
	o->cr = v.cr;
	o->sid_len = v.sid_len;
	memcpy(o->sid, v.sid, v.sid_len);
	o->route_be = be;
	return emit(c, o) ? -1 : 1;
}

static int line_service(struct lookup_ctx *c, long len)
{
	struct kr_svc_result r;
	struct out_line o;
	int q;

	out_init(&o, len, key_hash(c, len));
	c->cur = &c->sr;
	o.route = true;
	if (c->sr.svc->nqlb && (q = line_quic_lb(c, &o)) != 0)
		return q < 0 ? -1 : 0;
	if (c->live_ring) {
		o.slot = true;
		o.slot_no = kr_ctl_slot(c->lr.ctl, o.hash);
		if (!c->lr.present[o.slot_no]) {
			o.reason = KR_ROUTE_NO_RING;
			return emit(c, &o);
		}
		c->cur = &c->slot_sr[o.slot_no];
	}
	if (kr_svc_route_hash(c->cur, o.hash, &r) || kr_svc_route_walk3(c->cur, r.point, o.w)) {
		pr_warn("keyrouter: lookup: the ring image is inconsistent\n");
		return -1;
	}
	o.point = true;
	o.ri = r.ring_index;
	o.be = o.point_be = r.point_backend;
	o.reason = r.reason;
	o.route_be = r.backend;
	o.walk = r.walk;
	o.spilled = r.spilled;
	o.replicas = r.replicas;
	o.replica = r.replica;
	return emit(c, &o);
}

/* The ring-local index of global backend id gid in image img's backend table, or 0. */
static uint32_t local_of(const struct kr_image *img, uint32_t gid)
{
	const uint32_t *bt = (const uint32_t *)((const char *)img->buf +
						kr_image_bt_off(img->hdr));

	for (uint32_t b = 0; b < img->hdr->nbackends; b++)
		if (bt[b] == gid)
			return b;
	return 0;
}

/* --via-kernel: the columns from the program's trace record. */
static int line_kernel(struct lookup_ctx *c, long len)
{
	const struct kr_image *img = c->service ? &c->sr.img : &c->img;
	uint32_t ii, hh, b, be;
	struct kr_kresult r;
	struct out_line o;
	struct kr_err err;

	if (kr_klookup_key(c->kl, c->key, (size_t)len, &r, &err)) {
		pr_warn("keyrouter: lookup --via-kernel: %s\n", err.msg);
		return -1;
	}
	out_init(&o, len, r.key_hash);
	c->cur = &c->sr;
	if (r.status != KR_KEY_OK) {
		o.hash = kr_key_hash(c->key, (size_t)len);
		o.policy = true;
		o.verdict = r.verdict;
		o.status = r.status;
		return emit(c, &o);
	}
	if (r.reason != KR_ROUTE_OK && !c->service) {
		pr_warn("keyrouter: lookup --via-kernel: the kernel did not route key hash %08x "
			"(reason %u)\n", r.key_hash, r.reason);
		return -1;
	}
	o.route = c->service;
	if (c->live_ring) {
		o.slot = true;
		o.slot_no = r.slot & 1;
		if (r.reason == KR_ROUTE_NO_RING) {
			o.reason = KR_ROUTE_NO_RING;
			return emit(c, &o);
		}
		c->cur = &c->slot_sr[o.slot_no];
		img = &c->cur->img;
	}
	o.ri = kr_image_ring_index(img, r.first_index);
	if (kr_image_point(img, r.first_index, &hh, &o.be))
		goto bad;
	ii = r.first_index;
	for (int k = 0; k < 3; k++) {
		ii = kr_image_next_ring_point(img, ii);
		if (kr_image_point(img, ii, &hh, &b))
			goto bad;
		o.w[k] = c->service ? c->cur->cfg_index[b] : b;
	}
	o.point = true;
	if (!c->service) {
		o.be = r.backend_id;
		return emit(c, &o);
	}
	/* the program's backend id: ring-local with the private ring, global live */
	be = c->live_ring ? local_of(img, r.backend_id) : r.backend_id;
	o.be = o.point_be = c->cur->cfg_index[o.be];
	o.reason = (int)r.reason;
	o.route_be = r.reason == KR_ROUTE_OK ? c->cur->cfg_index[be] : 0;
	o.walk = r.reason == KR_ROUTE_OK ? r.walk : KR_MAX_WALK;
	return emit(c, &o);
bad:
	pr_warn("keyrouter: lookup --via-kernel: image point %u out of range\n", r.first_index);
	return -1;
}

/* --header: one comment line naming the columns of the lines that follow (a keys file
 * skips it).  The fields after the route come only when they apply; a QUIC-LB line routed
 * by its CID has its own form (lookup --help). */
static void put_header(const struct lookup_ctx *c)
{
	printf("# key hash ring_index backend b1 b2 b3");
	if (!c->service) {
		printf("%s\n", c->show_addr ? " address" : "");
		return;
	}
	printf(" route route_backend%s [walk N (backend B: why)]", c->show_addr ? " address" : "");
	if (c->sr.svc->nqlb)
		printf(" [quic-lb ring fallback: outcome (why)]");
	if (c->live_ring)
		printf(" slot S generation G [(active)|(migrated)]");
	putchar('\n');
}

static int print_key(struct lookup_ctx *c, long len)
{
	if (c->kl)
		return line_kernel(c, len);
	return c->service ? line_service(c, len) : line_ring(c, len);
}

/* ---- keys from a file and from the arguments -------------------------------------- */

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

/* Checks (check_only) or looks up the argument keys; 0, 1 (runtime) or 2 (usage). */
static int lookup_args(struct lookup_ctx *c, int first, int argc, char **argv, bool check_only)
{
	struct kr_err err;
	long len;

	for (int i = first; i < argc; i++) {
		len = parse_key(c, argv[i], &err);
		if (len < 0)
			return kr_usage_error("%s", err.msg);
		if (!check_only && print_key(c, len))
			return 1;
	}
	return 0;
}

/* ---- setting up ------------------------------------------------------------------ */

static int lookup_cb(void *ctx, int id, const char *arg, struct kr_err *err)
{
	struct lookup_ctx *c = ctx;
	int r = kr_ring_opt(&c->o, id, arg, err);

	if (r)
		return r < 0 ? -1 : 0;
	if (id == OPT_KEY_TYPE && kr_key_type_parse(arg, &c->key_type))
		return kr_errf(err, "bad --key-type '%s': expected one of %s", arg,
			       kr_key_type_list());
	return 0;
}

static int check_usage(const struct lookup_ctx *c, int first, int argc)
{
	struct kr_err err;

	if (kr_ring_opts_check(&c->o, &err))
		return kr_usage_error("%s", err.msg);
	if (!c->keys && first >= argc)
		return kr_usage_error("no keys: give --keys-file KEYS and/or keys as hex "
				      "arguments");
	if (c->keys && !strcmp(c->keys, "-") && c->o.config && !strcmp(c->o.config, "-"))
		return kr_usage_error("-c - and --keys-file - both read standard input: give "
				      "one of them as a file");
	if ((c->live || c->instance || c->pin_dir) && !c->o.service)
		return kr_usage_error("--live, --instance and --pin-dir need --service NAME "
				      "(the states of its backends)");
	if (c->instance && c->pin_dir)
		return kr_usage_error("give --instance NAME or --pin-dir DIR, not both");
	return 0;
}

/* --live: the service's ring as the instance routes it (ops_live.h): each published slot
 * becomes a route of its own, and every key takes the slot its control word chooses. */
/* --live: the instance's hot keys of the service's ring, for both slots' routes. */
static void live_hot_keys(struct lookup_ctx *c, const struct kr_inst *in)
{
	struct kr_hot_ent *all = NULL;
	struct kr_ops_maps m;
	uint32_t n = 0;

	if (kr_ops_maps_open(in, &m))
		return;
	if (!kr_ops_hot_list(&m, (int)c->lr.ring_id, &all, &n) && n) {
		c->live_hot = calloc(n, sizeof(*c->live_hot));
		for (uint32_t i = 0; c->live_hot && i < n; i++) {
			c->live_hot[i].hash = all[i].k.key_hash;
			c->live_hot[i].replicas = all[i].v.replicas;
		}
		c->nlive_hot = c->live_hot ? n : 0;
	}
	free(all);
	kr_ops_maps_close(&m);
	for (uint32_t k = 0; k < 2; k++) {
		c->slot_sr[k].hot = c->live_hot;
		c->slot_sr[k].nhot = c->nlive_hot;
	}
}

static int setup_live(struct lookup_ctx *c, const struct kr_inst *in)
{
	const struct kr_cfg_service *svc = &c->o.cfg->services[c->o.svc];
	struct kr_err err;
	int rc = kr_ops_live_ring(in, c->o.cfg, (uint32_t)c->o.svc, &c->lr);

	if (rc == -ENOENT) {
		pr_warn("keyrouter: lookup --live: instance '%s' has no service %s (%s port %u): "
			"apply the configuration first\n", in->name, svc->name,
			svc->vip_any ? "any address," : "its VIP and", svc->port);
		return -1;
	}
	if (rc) {
		pr_warn("keyrouter: lookup --live: couldn't read the ring of service %s in "
			"instance '%s': %s\n", svc->name, in->name, strerror(-rc));
		return -1;
	}
	for (uint32_t k = 0; k < 2; k++)
		if (c->lr.present[k] &&
		    kr_svc_route_init_live(&c->slot_sr[k], c->o.cfg, (uint32_t)c->o.svc,
					   &c->lr.slot[k], &err)) {
			pr_warn("keyrouter: lookup --live: slot %u of ring id %u: %s\n", k,
				c->lr.ring_id, err.msg);
			return -1;
		}
	live_hot_keys(c, in);
	c->live_ring = true;
	if (kr_ctl_frac(c->lr.ctl))
		pr_info("keyrouter: lookup --live: ring id %u is migrating: %.7f%% of keys on "
			"slot %u (each line names its key's slot)\n", c->lr.ring_id,
			100.0 * (double)kr_ctl_frac(c->lr.ctl) / (double)KR_CTL_FRAC_ONE,
			kr_ctl_active(c->lr.ctl) ^ 1);
	return 0;
}

/* --service: its key type and the data path's route (states: config or live). */
static int setup_service(struct lookup_ctx *c)
{
	const struct kr_cfg_ring *cr = &c->o.cfg->rings[c->o.cfg->services[c->o.svc].ring];
	uint8_t *states = NULL;
	struct kr_err err;
	int rc = 1;

	if (c->tcp) {	/* a TCP flow: its tuple on the service's ring, never spilled */
		const struct kr_cfg_service *s = &c->o.cfg->services[c->o.svc];

		if (!(s->protocol & KR_CFG_PROTO_TCP))
			return kr_usage_error("--tcp: service '%s' takes no TCP (\"protocol\": "
					      "\"%s\")", s->name, kr_cfg_proto_name(s->protocol));
		if (c->via_kernel)
			return kr_usage_error("--tcp: not with --via-kernel (its packets are UDP)");
		if (c->key_type != KR_KEY_NONE && c->key_type != KR_KEY_TUPLE)
			return kr_usage_error("--tcp: the key is the tuple (ADDR:PORT), not %s",
					      kr_key_type_name(c->key_type));
		c->tcp_spec.type = KR_KEY_TUPLE;
		c->tcp_spec.delimiter = -1;
		c->key_type = KR_KEY_TUPLE;
		c->spec = &c->tcp_spec;
	} else if (c->key_type != KR_KEY_NONE && c->key_type != c->o.key.type) {
		return kr_usage_error("--key-type %s differs from service '%s' (key type %s)",
				      kr_key_type_name(c->key_type), c->o.service,
				      kr_key_type_name(c->o.key.type));
	} else {
		c->key_type = c->o.key.type;
		c->spec = &c->o.key;
	}
	if (c->via_kernel && c->o.cfg->services[c->o.svc].nqlb)
		return kr_usage_error("--via-kernel: not for a service with QUIC-LB (the kernel's "
				      "decode: 'keyrouter quic-lb decode --via-kernel')");
	if (c->live || c->instance || c->pin_dir) {
		const char *instance = kr_cli_instance(c->instance, c->pin_dir, c->o.cfg->instance);
		struct kr_inst in;
		int n;

		states = calloc(cr->nbackends ? cr->nbackends : 1, 1);
		if (!states || kr_ops_inst_open_reader(&in, instance, c->pin_dir))
			goto out;
		n = kr_ops_live_states(&in, cr, states);
		if (n < 0)
			pr_warn("keyrouter: lookup --live: couldn't read instance '%s': %s\n",
				in.name, strerror(-n));
		else if ((uint32_t)n < cr->nbackends)
			pr_warn("keyrouter: lookup --live: %u of the %u backends of ring '%s' are "
				"not in instance '%s' (the walk skips them)\n",
				cr->nbackends - n, cr->nbackends, cr->name, in.name);
		if (n >= 0 && setup_live(c, &in))
			n = -1;
		kr_ops_inst_close(&in);
		if (n < 0)
			goto out;
	}
	if (kr_svc_route_init(&c->sr, c->o.cfg, (uint32_t)c->o.svc, states, &err)) {
		pr_warn("keyrouter: %s\n", err.msg);
		goto out;
	}
	if (c->tcp)	/* a flow never spills, nor goes to a hot key's replica */
		c->sr.nospill = c->slot_sr[0].nospill = c->slot_sr[1].nospill = true;
	if (c->client) {
		struct kr_sockaddr sa;

		if (kr_sockaddr_parse(c->client, &sa, NULL)) {
			rc = kr_usage_error("bad --client '%s': expected ip:port or [v6]:port",
					    c->client);
			goto out;
		}
		c->sr.has_client = c->slot_sr[0].has_client = c->slot_sr[1].has_client = true;
		c->sr.client_pick = c->slot_sr[0].client_pick = c->slot_sr[1].client_pick =
			kr_replica_pick(sa.ip, sa.family, sa.port);
	}
	c->service = true;
	rc = 0;
out:
	free(states);
	return rc;
}

/* --via-kernel --live: the program gets the instance's two slots, control word and the
 * kr_backends entries (and memberships) of every id their tables name. */
static int setup_kernel_live(struct lookup_ctx *c)
{
	struct kr_klookup_live lv = { .ctl = c->lr.ctl };
	uint32_t n = 0, cap = 0;
	uint32_t *id = NULL;
	struct kr_backend *be = NULL;
	uint8_t *member = NULL;
	struct kr_err err;
	int rc = -1;

	for (uint32_t k = 0; k < 2; k++)
		if (c->lr.present[k])
			cap += c->slot_sr[k].img.hdr->nbackends;
	id = calloc(cap ? cap : 1, sizeof(*id));
	be = calloc(cap ? cap : 1, sizeof(*be));
	member = calloc(cap ? cap : 1, 1);
	if (!id || !be || !member) {
		kr_errf(&err, "out of memory");
		goto out;
	}
	for (uint32_t k = 0; k < 2; k++) {
		const struct kr_svc_live_slot *ls = &c->lr.slot[k];
		const struct kr_image *img = &c->slot_sr[k].img;
		const uint32_t *bt;

		if (!c->lr.present[k])
			continue;
		lv.image[k] = img->buf;
		bt = (const uint32_t *)((const char *)img->buf + kr_image_bt_off(img->hdr));
		for (uint32_t b = 0; b < img->hdr->nbackends; b++) {
			uint32_t i = 0;

			while (i < n && id[i] != bt[b])
				i++;
			if (i < n)
				continue;
			id[n] = bt[b];
			be[n].family = ls->addr[b].family;
			be[n].port = htons(ls->addr[b].port);
			memcpy(be[n].addr, ls->addr[b].ip, 16);
			be[n].state = ls->state[b];
			member[n] = ls->member ? ls->member[b] : 1;
			n++;
		}
	}
	lv.nids = n;
	lv.id = id;
	lv.be = be;
	lv.member = c->lr.subset_id ? member : NULL;
	rc = kr_klookup_open_live(&c->kl, &lv, &err);
out:
	if (rc)
		pr_warn("keyrouter: lookup --via-kernel: %s\n", err.msg);
	free(id);
	free(be);
	free(member);
	return rc ? 1 : 0;
}

static int setup_kernel(struct lookup_ctx *c)
{
	struct kr_klookup_backends be = { .n = c->ring->nbackends };
	uint8_t *state = NULL, *member = NULL;
	struct kr_err err;
	int rc = 0;

	if (c->live_ring)
		return setup_kernel_live(c);
	if (c->service) {
		const struct kr_svc_route *sr = &c->sr;

		be.n = sr->ring->nbackends;
		state = calloc(be.n ? be.n : 1, 1);
		member = calloc(be.n ? be.n : 1, 1);
		if (!state || !member) {
			rc = kr_errf(&err, "out of memory");
			goto out;
		}
		for (uint32_t b = 0; b < be.n; b++) {
			state[b] = sr->state[sr->cfg_index[b]];
			member[b] = kr_cfg_in_subset(sr->svc, &sr->cring->backends[sr->cfg_index[b]]);
		}
		be.state = state;
		be.member = sr->shared_subset ? member : NULL;
	}
	rc = kr_klookup_open(&c->kl, c->service ? &c->sr.img : &c->img, &be, &err);
out:
	if (rc)
		pr_warn("keyrouter: lookup --via-kernel: %s\n", err.msg);
	free(state);
	free(member);
	return rc ? 1 : 0;
}

/* Builds what the keys are looked up on; 0, 1 or 2. */
static int setup(struct lookup_ctx *c)
{
	struct kr_err err;

	c->o.keep_config = 1;
	if (kr_ring_opts_build(&c->o, &c->ring, &err)) {
		pr_warn("keyrouter: %s\n", err.msg);
		return 1;
	}
	if (c->o.keyed) {
		if (c->via_kernel)
			return kr_usage_error("--via-kernel: not supported with a keyed hash (the "
					      "configuration's \"hash\" is siphash13)");
		c->secret = &c->o.secret;
	}
	if (c->o.service) {
		int rc = setup_service(c);

		if (rc)
			return rc;
	}
	if (c->use_image && !c->service && kr_image_encode(&c->img, c->ring, NULL, &err)) {
		pr_warn("keyrouter: %s: %s\n", c->o.label, err.msg);
		return 1;
	}
	return c->via_kernel ? setup_kernel(c) : 0;
}

static int cmd_lookup(int argc, char **argv)
{
	struct lookup_ctx c = { 0 };
	const struct kr_opt opts[] = {
		KR_OPT_STR("keys-file", 0, &c.keys),
		KR_OPT_FLAG("addr", 0, &c.show_addr),
		KR_OPT_FLAG("image", 0, &c.use_image),
		KR_OPT_CB("key-type", 0, KR_ARG_REQUIRED, OPT_KEY_TYPE),
		KR_OPT_FLAG("via-kernel", 0, &c.via_kernel),
		KR_OPT_FLAG("tcp", 0, &c.tcp),
		KR_OPT_FLAG("live", 0, &c.live),
		KR_OPT_FLAG("json", 'j', &c.json),
		KR_OPT_FLAG("header", 0, &c.header),
		KR_OPT_STR("instance", 'i', &c.instance),
		KR_OPT_STR("pin-dir", 'p', &c.pin_dir),
		KR_OPT_STR("client", 0, &c.client),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .help = lookup_help, .cb = lookup_cb, .ctx = &c,
					 .more = kr_ring_optdefs };
	int first = kr_opts_parse(argc, argv, opts, &cmd), ret;

	if (first < 0)
		return kr_opts_status(first);
	c.use_image |= c.via_kernel;
	ret = check_usage(&c, first, argc);
	/* the argument keys before any work (a --service's key type: after loading) */
	if (!ret && !c.o.service)
		ret = lookup_args(&c, first, argc, argv, true);
	if (!ret)
		ret = setup(&c);
	if (!ret && c.service)
		ret = lookup_args(&c, first, argc, argv, true);
	if (!ret && c.header && !c.json)
		put_header(&c);
	if (!ret && c.keys)
		ret = lookup_file(&c, c.keys);
	if (!ret)
		ret = lookup_args(&c, first, argc, argv, false);
	if (!ret && fflush(stdout))
		ret = 1;
	kr_klookup_close(c.kl);
	kr_svc_route_free(&c.sr);
	kr_svc_route_free(&c.slot_sr[0]);
	kr_svc_route_free(&c.slot_sr[1]);
	free(c.live_hot);
	kr_ops_live_ring_free(&c.lr);
	kr_image_free(&c.img);
	kr_ring_free(c.ring);
	kr_ring_opts_free(&c.o);
	free(c.key);
	return ret;
}
KR_COMMAND(lookup, "lookup", "where keys go: ring point, backend, failover walk; for a "
	   "service, the backend the data path picks", cmd_lookup);
