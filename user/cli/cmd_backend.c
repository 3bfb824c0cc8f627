// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter backend set ADDR up|down|drain: one map write per backend id, no rebuild. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "addr.h"
#include "cmd.h"
#include "log.h"
#include "ops.h"
#include "ops_kernel.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: keyrouter backend set ADDR up|down|drain [--ring RING]\n"
		"                             [--instance NAME | --pin-dir DIR]\n\n"
		"Change a backend's health. ADDR is ip:port ([v6]:port) or a bare IP (every port).\n"
		"A down or draining backend is skipped by the failover walk: only its keys move, to\n"
		"the backend of the next ring point, and they come back when it is up again. One\n"
		"write of the backend's entry in kr_backends per ring that has it; no ring is\n"
		"rebuilt. Without --ring, the backend is changed in every ring that has it.\n\n"
		"  -r, --ring RING      only in this ring\n"
		"  -i, --instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default \"default\")\n"
		"  -p, --pin-dir DIR    maps pinned in DIR instead\n");
}

struct target {
	struct kr_sockaddr addr;
	bool any_port;
};

static int parse_target(const char *s, struct target *t)
{
	char buf[128];

	memset(t, 0, sizeof(*t));
	if (!kr_sockaddr_parse(s, &t->addr, NULL))
		return 0;
	t->any_port = true;
	snprintf(buf, sizeof(buf), strchr(s, ':') ? "[%s]:0" : "%s:0", s);
	return kr_sockaddr_parse(buf, &t->addr, NULL) ? -1 : 0;
}

static bool matches(const struct target *t, const struct kr_backend *b)
{
	return b->family == t->addr.family &&
	       !memcmp(b->addr, t->addr.ip, t->addr.family == 4 ? 4 : 16) &&
	       (t->any_port || ntohs(b->port) == t->addr.port);
}

static int parse_state(const char *s, __u8 *state)
{
	if (!strcmp(s, "up"))
		*state = KR_BACKEND_UP;
	else if (!strcmp(s, "down"))
		*state = KR_BACKEND_DOWN;
	else if (!strcmp(s, "drain"))
		*state = KR_BACKEND_DRAIN;
	else
		return -1;
	return 0;
}

/* Set every id of ring `id` (both slots) matching t; returns how many changed/matched. */
static int set_in_ring(const struct kr_ops_maps *m, __u32 id, const struct target *t,
		       __u8 state, const char *rname, int *matched)
{
	struct kr_ops_slot s;
	__u32 done[64];
	int ndone = 0;

	for (__u32 slot = 0; slot < 2; slot++) {
		if (kr_ops_slot_read(m, id, slot, true, &s) || !s.present)
			continue;
		for (__u32 b = 0; b < s.hdr.nbackends; b++) {
			struct kr_backend be;
			char addr[KR_SOCKADDR_STRLEN];
			struct kr_sockaddr sa = {};
			bool seen = false;

			for (int i = 0; i < ndone; i++)
				seen = seen || done[i] == s.bt[b];
			if (seen || bpf_map_lookup_elem(m->backends, &s.bt[b], &be) ||
			    !matches(t, &be))
				continue;
			if (ndone < 64)
				done[ndone++] = s.bt[b];
			(*matched)++;
			sa.family = be.family;
			sa.port = ntohs(be.port);
			memcpy(sa.ip, be.addr, 16);
			kr_sockaddr_format(&sa, addr);
			if (be.state == state) {
				printf("backend %s (id %u, ring %s): already %s\n", addr, s.bt[b],
				       rname, state == KR_BACKEND_UP ? "up" :
				       state == KR_BACKEND_DOWN ? "down" : "drain");
				continue;
			}
			be.state = state;
			if (bpf_map_update_elem(m->backends, &s.bt[b], &be, BPF_EXIST)) {
				pr_warn("keyrouter: couldn't write backend id %u: %s\n", s.bt[b],
					strerror(errno));
				kr_ops_slot_free(&s);
				return -errno;
			}
			printf("backend %s (id %u, ring %s): %s\n", addr, s.bt[b], rname,
			       state == KR_BACKEND_UP ? "up" : state == KR_BACKEND_DOWN ? "down" :
			       "drain");
		}
		kr_ops_slot_free(&s);
	}
	return 0;
}

static int cmd_backend_set(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ring", required_argument, NULL, 'r' },
		{ "instance", required_argument, NULL, 'i' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *ring = NULL, *instance = NULL, *pin_dir = NULL;
	struct kr_ops_maps m;
	struct target t;
	struct kr_inst in;
	int c, rc = 1, matched = 0;
	__u8 state;

	while ((c = getopt_long(argc, argv, "r:i:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r': ring = optarg; break;
		case 'i': instance = optarg; break;
		case 'p': pin_dir = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 2 != argc || (instance && pin_dir)) {
		pr_warn("keyrouter: backend set: expected ADDR and up|down|drain\n");
		usage(stderr);
		return 2;
	}
	if (parse_target(argv[optind], &t)) {
		pr_warn("keyrouter: backend set: bad address '%s': expected ip:port, [v6]:port "
			"or an IP\n", argv[optind]);
		return 2;
	}
	if (parse_state(argv[optind + 1], &state)) {
		pr_warn("keyrouter: backend set: bad state '%s': expected up, down or drain\n",
			argv[optind + 1]);
		return 2;
	}
	if (kr_ops_inst_open(&in, instance, pin_dir))
		return 1;
	if (kr_ops_maps_open(&in, &m))
		goto out_inst;
	for (__u32 id = 0; id < KR_MAX_RINGS; id++) {
		struct kr_ops_ring r;

		if (kr_ops_ring_get(&in, id, &r) || !r.name[0] || (ring && strcmp(ring, r.name)))
			continue;
		if (set_in_ring(&m, id, &t, state, r.name, &matched))
			goto out;
	}
	if (!matched) {
		pr_warn("keyrouter: backend set: no backend '%s'%s%s in instance '%s'\n",
			argv[optind], ring ? " in ring " : "", ring ? ring : "", in.name);
		goto out;
	}
	rc = 0;
out:
	kr_ops_maps_close(&m);
out_inst:
	kr_ops_inst_close(&in);
	return rc;
}
KR_COMMAND(backend_set, "backend set", "mark a backend up, down or drain (no rebuild)",
	   cmd_backend_set);
