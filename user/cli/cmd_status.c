// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter status / stats: text, --json, --watch (--prometheus: cmd_exporter.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "addr.h"
#include "cli_prom.h"
#include "cmd.h"
#include "log.h"
#include "ops.h"
#include "ops_kernel.h"
#include "ops_report.h"
#include "ring_sm.h"
#include "ops_stats.h"

enum fmt { FMT_TEXT, FMT_JSON, FMT_PROM };

struct view {
	struct kr_inst *in;
	struct kr_ops_maps *m;
	enum fmt fmt;
	bool full;		/* status (everything) or stats (counters) */
};

static const char *state_name(__u8 s)
{
	switch (s) {
	case KR_BACKEND_UP: return "up";
	case KR_BACKEND_DOWN: return "down";
	case KR_BACKEND_DRAIN: return "drain";
	default: return "unused";
	}
}

static void show_instance(struct view *v)
{
	struct kr_ops_meta meta = {};
	__u32 key = 0;
	char t[32];

	bpf_map_lookup_elem(v->in->meta_fd, &key, &meta);
	kr_ops_fmt_time(meta.magic == KR_OPS_META_MAGIC ? meta.loaded_ns : 0, t, sizeof(t));
	if (v->fmt == FMT_JSON) {
		printf("\"instance\":{\"name\":\"%s\",\"pin_dir\":\"%s\",\"loaded\":%s", v->in->name,
		       v->in->dir, meta.magic == KR_OPS_META_MAGIC ? "true" : "false");
		if (meta.magic == KR_OPS_META_MAGIC)
			printf(",\"interface\":\"%s\",\"ifindex\":%u,\"mode\":\"%s\",\"prog_id\":%u,"
			       "\"loaded_ns\":%llu", meta.ifname, meta.ifindex,
			       kr_ops_mode_name(meta.mode), meta.prog_id,
			       (unsigned long long)meta.loaded_ns);
		printf("},");
	} else {
		if (meta.magic == KR_OPS_META_MAGIC)
			printf("instance %s: %s, %s mode, program id %u, loaded %s, pins %s\n",
			       v->in->name, meta.ifname, kr_ops_mode_name(meta.mode), meta.prog_id,
			       t, v->in->dir);
		else
			printf("instance %s: maps in %s (attached outside keyrouter load)\n",
			       v->in->name, v->in->dir);
	}
}

static void show_counters(struct view *v)
{
	struct kr_ops_named n;

	if (kr_ops_named_read(v->m->counters, 0, v->m->ncpus, &n))
		n.n = 0;
	if (v->fmt == FMT_JSON) {
		printf("\"counters\":{");
		for (int i = 0; i < n.n; i++)
			printf("%s\"%s\":%llu", i ? "," : "", n.name[i], (unsigned long long)n.v[i]);
		printf("}");
	} else {
		printf("counters:");
		for (int i = 0; i < n.n; i++)
			printf("%s %s %llu", i % 6 ? "," : "\n ", n.name[i],
			       (unsigned long long)n.v[i]);
		printf("\n");
	}
}

static void show_rings(struct view *v)
{
	int n = 0;

	if (v->fmt == FMT_JSON)
		printf(",\"rings\":[");
	for (__u32 id = 0; id < KR_MAX_RINGS; id++) {
		struct kr_ops_ring_report r;
		struct kr_ops_ring meta;

		if (kr_ops_ring_get(v->in, id, &meta) || !meta.name[0] ||
		    kr_ops_ring_report(v->in, v->m, id, false, &r))
			continue;
		if (v->fmt == FMT_JSON) {
			printf("%s", n ? "," : "");
			kr_ops_ring_report_json(stdout, &r);
		} else {
			kr_ops_ring_report_text(stdout, &r);
		}
		n++;
		kr_ops_ring_report_free(&r);
	}
	if (v->fmt == FMT_JSON)
		printf("]");
}

static void ring_name(struct view *v, __u32 id, char *buf, size_t len)
{
	struct kr_ops_ring r;

	if (kr_ops_ring_get(v->in, id, &r) || !r.name[0])
		snprintf(buf, len, "#%u", id);
	else
		snprintf(buf, len, "%s", r.name);
}

static void show_services(struct view *v)
{
	unsigned char key[64], next[64], val[256];
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	void *pk = NULL;
	int n = 0;

	if (bpf_obj_get_info_by_fd(v->m->services, &info, &len) ||
	    info.key_size > sizeof(key) || info.value_size > sizeof(val) || info.key_size < 20)
		return;
	if (v->fmt == FMT_JSON)
		printf(",\"services\":[");
	while (!bpf_map_get_next_key(v->m->services, pk, next)) {
		/* key: addr[16], port (be16), proto, family; value starts with the ring id */
		struct kr_sockaddr sa = { .family = next[19] };
		char addr[KR_SOCKADDR_STRLEN], rn[KR_OPS_NAME_MAX];
		__u16 port;
		__u32 ring;

		memcpy(key, next, info.key_size);
		pk = key;
		if (bpf_map_lookup_elem(v->m->services, key, val))
			continue;
		memcpy(&port, key + 16, 2);
		memcpy(&ring, val, 4);
		sa.port = ntohs(port);
		memcpy(sa.ip, key, 16);
		if (sa.family)
			kr_sockaddr_format(&sa, addr);
		else
			snprintf(addr, sizeof(addr), "*:%u", sa.port);
		ring_name(v, ring, rn, sizeof(rn));
		if (v->fmt == FMT_JSON)
			printf("%s{\"vip\":\"%s\",\"proto\":%u,\"ring\":\"%s\",\"ring_id\":%u,"
			       "\"key_type\":%u}", n ? "," : "", addr, key[18], rn, ring, val[4]);
		else
			printf("%sservice %s/%s -> ring %s (key type %u)\n", n ? "" : "",
			       addr, key[18] == 17 ? "udp" : "?", rn, val[4]);
		n++;
	}
	if (v->fmt == FMT_JSON)
		printf("]");
}

static void show_backend(struct view *v, __u32 id, const char *rn, int *n)
{
	struct kr_ops_named st = {};
	struct kr_backend be;
	struct kr_sockaddr sa = {};
	char addr[KR_SOCKADDR_STRLEN];
	__u64 pk, by;

	if (bpf_map_lookup_elem(v->m->backends, &id, &be) || !be.family)
		return;
	sa.family = be.family;
	sa.port = ntohs(be.port);
	memcpy(sa.ip, be.addr, 16);
	kr_sockaddr_format(&sa, addr);
	kr_ops_named_read(v->m->backend_stats, id, v->m->ncpus, &st);
	pk = kr_ops_named_get(&st, "packets");
	by = kr_ops_named_get(&st, "bytes");
	if (v->fmt == FMT_JSON)
		printf("%s{\"id\":%u,\"ring\":\"%s\",\"address\":\"%s\",\"state\":\"%s\","
		       "\"packets\":%llu,\"bytes\":%llu}", (*n)++ ? "," : "", id, rn, addr,
		       state_name(be.state), (unsigned long long)pk, (unsigned long long)by);
	else
		printf("backend %-24s id %-6u ring %-16s %-6s packets %llu bytes %llu\n", addr, id,
		       rn, state_name(be.state), (unsigned long long)pk, (unsigned long long)by);}

/* Backends of every ring's active slot (the standby's too while migrating). */
static void show_backends(struct view *v)
{
	int n = 0;

	if (v->fmt == FMT_JSON)
		printf(",\"backends\":[");
	for (__u32 id = 0; id < KR_MAX_RINGS; id++) {
		struct kr_ops_ring meta;
		struct kr_ops_slot s[2] = {};
		__u64 ctl = 0;

		if (kr_ops_ring_get(v->in, id, &meta) || !meta.name[0])
			continue;
		kr_ops_ctl_read(v->m, id, &ctl);
		for (__u32 k = 0; k < 2; k++) {
			bool want = k == kr_ctl_active(ctl) || kr_ctl_state(ctl) != KR_RING_IDLE;

			if (!want || kr_ops_slot_read(v->m, id, k, true, &s[k]) || !s[k].present)
				continue;
			for (__u32 b = 0; b < s[k].hdr.nbackends; b++) {
				bool dup = false;

				for (__u32 j = 0; k == 1 && s[0].present && j < s[0].hdr.nbackends; j++)
					dup = dup || s[0].bt[j] == s[k].bt[b];
				if (!dup)
					show_backend(v, s[k].bt[b], meta.name, &n);
			}
		}
		kr_ops_slot_free(&s[0]);
		kr_ops_slot_free(&s[1]);
	}
	if (v->fmt == FMT_JSON)
		printf("]");
}

static void show(struct view *v)
{
	if (v->fmt == FMT_JSON)
		printf("{");
	show_instance(v);
	show_counters(v);
	show_rings(v);
	if (v->full)
		show_services(v);
	show_backends(v);
	if (v->fmt == FMT_JSON)
		printf("}\n");
	fflush(stdout);
}

static void usage(FILE *f, bool full)
{
	fprintf(f,
		"Usage: keyrouter %s [--json | --prometheus [--output FILE]] [--watch [SECONDS]]\n"
		"                 [--instance NAME | --pin-dir DIR]\n\n%s\n\n"
		"  -j, --json           one JSON object\n"
		"  -P, --prometheus     Prometheus text exposition format (version 0.0.4), the\n"
		"                       same as `keyrouter exporter` serves: every instance\n"
		"                       unless --instance/--pin-dir; nothing loaded is\n"
		"                       `keyrouter_up 0` (exit 0), not an error\n"
		"  -o, --output FILE    with --prometheus: write FILE atomically (temporary file\n"
		"                       + rename) instead of standard output, e.g. for\n"
		"                       node_exporter's textfile collector (*.prom)\n"
		"  -w, --watch [SECONDS] print again every SECONDS (default 1) until interrupted\n"
		"  -i, --instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default \"default\")\n"
		"  -p, --pin-dir DIR    maps pinned in DIR instead\n", full ? "status" : "stats",
		full ? "Everything the instance runs: attachment, global counters, rings and both\n"
		       "slots, services, backends with state and packet/byte counters."
		     : "The counters: global (by outcome and reason, as the program names them),\n"
		       "packets per ring slot, packets and bytes per backend.");
}

static int run(int argc, char **argv, bool full)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'P' },
		{ "output", required_argument, NULL, 'o' },
		{ "watch", optional_argument, NULL, 'w' },
		{ "instance", required_argument, NULL, 'i' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *instance = NULL, *pin_dir = NULL, *output = NULL;
	struct view v = { .full = full };
	double watch = 0;
	struct kr_ops_maps m;
	struct kr_inst in;
	int c;

	while ((c = getopt_long(argc, argv, "jPo:w::i:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': v.fmt = FMT_JSON; break;
		case 'P': v.fmt = FMT_PROM; break;
		case 'o': output = optarg; break;
		case 'w':
			watch = optarg ? atof(optarg) : 1.0;
			if (watch <= 0) {
				pr_warn("keyrouter: %s: bad --watch '%s': expected seconds > 0\n",
					argv[0], optarg);
				return 2;
			}
			break;
		case 'i': instance = optarg; break;
		case 'p': pin_dir = optarg; break;
		case 'h': usage(stdout, full); return 0;
		default: usage(stderr, full); return 2;
		}
	}
	if (optind != argc || (instance && pin_dir)) {
		pr_warn("keyrouter: %s: unexpected argument\n", argv[0]);
		usage(stderr, full);
		return 2;
	}
	if (output && v.fmt != FMT_PROM) {
		pr_warn("keyrouter: %s: --output goes with --prometheus\n", argv[0]);
		return 2;
	}
	if (v.fmt == FMT_PROM)
		return kr_cli_prom_status(instance, pin_dir, output, watch);
	if (kr_ops_inst_open(&in, instance, pin_dir))
		return 1;
	if (kr_ops_maps_open(&in, &m)) {
		kr_ops_inst_close(&in);
		return 1;
	}
	/* Readers need no lock: let applies run while we watch. */
	close(in.dir_fd);
	in.dir_fd = -1;
	v.in = &in;
	v.m = &m;
	for (;;) {
		if (watch > 0 && v.fmt == FMT_TEXT)
			printf("\033[H\033[2J");
		show(&v);
		if (watch <= 0)
			break;
		usleep((useconds_t)(watch * 1e6));
	}
	kr_ops_maps_close(&m);
	kr_ops_inst_close(&in);
	return 0;
}

static int cmd_status(int argc, char **argv) { return run(argc, argv, true); }
static int cmd_stats(int argc, char **argv) { return run(argc, argv, false); }
KR_COMMAND(status, "status", "attachment, rings, slots, services, backends, counters",
	   cmd_status);
KR_COMMAND(stats, "stats", "counters: global by reason, per ring slot, per backend", cmd_stats);
