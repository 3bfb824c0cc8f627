// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The Prometheus exposition of keyrouter instances (prom.h). */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "addr.h"
#include "ops.h"
#include "ops_kernel.h"
#include "ops_backends.h"
#include "ops_find.h"
#include "ops_report.h"
#include "ring_sm.h"
#include "ops_stats.h"
#include "ops_svcstats.h"
#include "prom.h"
#include "ops_hot.h"
#include "quic_lb.h"
#include "version.h"
#include "health_out.h"
#include "follow.h"
#include "announce.h"

/* The label naming the router's instance.  Not "instance": Prometheus gives that label to
 * every scraped series (the scrape target), so ours would be renamed exported_instance and
 * queries grouping by instance would group by target (docs/deploy.md "Metrics"). */
#define L_INST "keyrouter_instance"

/*
 * Families, in the order they are written.  A family's samples are collected in its own
 * memory stream while the instances are walked, then each family is written whole (HELP,
 * TYPE, samples): the exposition format wants one group per metric name.
 */
enum fam {
	F_UP, F_ATTACHED, F_ERRORS, F_INFO, F_CONFIG_INFO, F_LOADED, F_SERVICES,
	F_PACKETS, F_UNROUTED, F_DROPPED, F_FAILOVER,
	F_RING_STATE, F_RING_RATIO, F_RING_ACTIVE,
	F_SLOT_PACKETS, F_SLOT_BYTES, F_SLOT_FAILOVER, F_SLOT_UNROUTED, F_SLOT_SPILLED, F_SLOT_REPLICA, F_RING_HOT_KEYS,
	F_BE_SPILL, F_SLOT_POINTS, F_SLOT_BACKENDS,
	F_SLOT_MEMORY, F_SLOT_GENERATION, F_SLOT_PUBLISHED, F_SLOT_INFO,
	F_BE_UP, F_BE_STATE, F_BE_RINGS, F_BE_PACKETS, F_BE_BYTES,
	F_QLB_PACKETS, F_QLB_ROUTED,
	F_BE_OWNER, F_BE_SINCE, F_HC_PROBES, F_HC_FAILED, F_HC_RTT, F_HC_TRANSITIONS, F_HC_HELD,
	F_HC_UP, F_HC_BEAT, F_HC_PANIC,
	F_HC_REATTACH, F_HC_DAMP_PENALTY, F_HC_DAMP_HELD, F_HC_FLAPS,
	F_SVC_PACKETS, F_SVC_UNROUTED, F_SVC_DROPPED, F_SVC_BYTES,
	F_AN_UP, F_AN_DRAINED, F_VIP_ANNOUNCED, F_VIP_REASON, F_VIP_CHANGE, F_BGP_UP,
	F_N
};

static const struct {
	const char *name, *type, *help;
} fams[F_N] = {
	[F_UP] = { "keyrouter_up", "gauge",
		"1 when the instance's maps are pinned and readable, 0 when it is not loaded." },
	[F_ATTACHED] = { "keyrouter_attached", "gauge",
		"1 when the program of the instance (loaded by keyrouter load) is attached to "
		"its interface, 0 when it is not (detached, interface gone, a load that did not "
		"finish): traffic then bypasses keyrouter although keyrouter_up may be 1." },
	[F_ERRORS] = { "keyrouter_read_errors", "gauge",
		"Reads of the instance's maps that failed during this scrape (e.g. EPERM: "
		"reading ring images needs CAP_SYS_ADMIN); when > 0 some ring and backend "
		"series are missing." },
	[F_INFO] = { "keyrouter_info", "gauge",
		"Always 1: how the instance is attached (interface, mode), the tool's version "
		"and the tag of the program attached (program_tag, empty when it cannot be "
		"read) as labels." },
	[F_CONFIG_INFO] = { "keyrouter_config_info", "gauge",
		"Always 1: the digest of the configuration the instance routes with, as a label: "
		"services (VIP, port, key, forwarding, policies, ring name), each ring's name and "
		"active slot digest, each backend's id, address and MAC; runtime state "
		"(backend states, counters, migrations) left out.  Routers given the same "
		"configuration have the same digest: count by (digest) finds the odd one." },
	[F_LOADED] = { "keyrouter_loaded_timestamp_seconds", "gauge",
		"Unix time at which keyrouter load attached the instance." },
	[F_SERVICES] = { "keyrouter_services", "gauge",
		"Services (VIP, port, protocol) configured in the instance." },
	[F_PACKETS] = { "keyrouter_packets_total", "counter",
		"Packets the program ran on, by outcome (routed, passed to the stack, dropped "
		"by a service policy); sum() is every packet." },
	[F_UNROUTED] = { "keyrouter_unrouted_packets_total", "counter",
		"Packets not routed, by the reason, named as in status and stats "
		"(passed_nomatch: no service for the packet, parse_error, fragment, "
		"bad_service, no_key, key_too_long, no_ring, bad_image, all_down, walk_limit, "
		"fwd_error); sum() is the passed and dropped packets." },
	[F_DROPPED] = { "keyrouter_dropped_packets_total", "counter",
		"Packets dropped by a service policy, by the reason (no_key, key_too_long, "
		"no_route); sum() is the dropped packets." },
	[F_FAILOVER] = { "keyrouter_failover_packets_total", "counter",
		"Routed packets whose ring walk skipped at least one down or draining point." },
	[F_RING_STATE] = { "keyrouter_ring_state", "gauge",
		"Migration state of the ring: 0 idle, 1 staged, 2 migrating." },
	[F_RING_RATIO] = { "keyrouter_ring_migration_ratio", "gauge",
		"Share of the key space (0..1) routed by the standby slot (the staged version)." },
	[F_RING_ACTIVE] = { "keyrouter_ring_active_slot", "gauge",
		"The ring's active slot (0 or 1)." },
	[F_SLOT_PACKETS] = { "keyrouter_ring_slot_packets_total", "counter",
		"Packets routed by the ring slot (reset when a new version is published)." },
	[F_SLOT_BYTES] = { "keyrouter_ring_slot_bytes_total", "counter",
		"Bytes of the packets routed by the ring slot." },
	[F_SLOT_FAILOVER] = { "keyrouter_ring_slot_failover_packets_total", "counter",
		"Packets the ring slot routed after skipping at least one down point." },
	[F_SLOT_UNROUTED] = { "keyrouter_ring_slot_unrouted_packets_total", "counter",
		"Packets the ring slot did not route, by reason: no_ring (nothing published), "
		"bad_image, all_down (no backend up), walk_limit (none up within the walk); the "
		"service's no-route policy applied to them." },
	[F_SLOT_SPILLED] = { "keyrouter_ring_slot_spilled_packets_total", "counter",
		"Packets the ring slot routed past a backend their key spills from (spill)." },
	[F_SLOT_REPLICA] = { "keyrouter_ring_slot_replica_packets_total", "counter",
		"Packets of hot keys the ring slot routed to a replica other than the owner." },
	[F_RING_HOT_KEYS] = { "keyrouter_ring_hot_keys", "gauge",
		"Hot keys of the ring (kr_hot_keys entries: keys spread over replicas)." },
	[F_BE_SPILL] = { "keyrouter_backend_spill", "gauge",
		"The backend's spill fraction (0..0.99): that share of its keys walks on." },
	[F_SLOT_POINTS] = { "keyrouter_ring_slot_points", "gauge",
		"Points on the ring published in the slot (after duplicates are removed)." },
	[F_SLOT_BACKENDS] = { "keyrouter_ring_slot_backends", "gauge",
		"Backends of the ring published in the slot." },
	[F_SLOT_MEMORY] = { "keyrouter_ring_slot_memory_bytes", "gauge",
		"Kernel memory of the ring image in the slot, as the kernel accounts it." },
	[F_SLOT_GENERATION] = { "keyrouter_ring_slot_generation", "gauge",
		"Generation of the ring image in the slot (incremented by every publish)." },
	[F_SLOT_PUBLISHED] = { "keyrouter_ring_slot_published_timestamp_seconds", "gauge",
		"Unix time at which the ring image in the slot was published." },
	[F_SLOT_INFO] = { "keyrouter_ring_slot_info", "gauge",
		"Always 1: the digest and generation of the ring image in the slot, as labels." },
	[F_BE_UP] = { "keyrouter_backend_up", "gauge",
		"1 when the backend takes new keys (state up), else 0." },
	[F_BE_STATE] = { "keyrouter_backend_state", "gauge",
		"State of the backend: 0 up, 1 down (skipped, keys move to the next point), "
		"2 drain (skipped like down, for maintenance)." },
	[F_BE_RINGS] = { "keyrouter_backend_rings", "gauge",
		"Rings that have the backend (active slot; the standby too while migrating): "
		"a server is one backend, one state and one set of counters in all of them." },
	[F_BE_PACKETS] = { "keyrouter_backend_packets_total", "counter",
		"Packets forwarded to the backend, by every ring that has it." },
	[F_BE_BYTES] = { "keyrouter_backend_bytes_total", "counter",
		"Bytes of the packets forwarded to the backend." },
	[F_QLB_PACKETS] = { "keyrouter_quic_lb_packets_total", "counter",
		"QUIC packets (with a DCID) of a QUIC-LB service, by outcome: routed by the "
		"server ID in the CID, or the reason they went to the ring (unroutable, "
		"unknown_config, unknown_server_id, too_short, backend_down, too_long)." },
	[F_QLB_ROUTED] = { "keyrouter_quic_lb_routed_total", "counter",
		"QUIC packets routed by the server ID in the CID, by the CID's config rotation." },
	[F_BE_OWNER] = { "keyrouter_backend_state_owner", "gauge",
		"Who set the backend's state: 0 the configuration (apply), 1 an operator "
		"(backend set), 2 the health checker." },
	[F_BE_SINCE] = { "keyrouter_backend_state_since_timestamp_seconds", "gauge",
		"Unix time at which the backend's current state was set (by backend set or the "
		"health checker; 0 when apply set it, the time is not recorded)." },
	[F_HC_PROBES] = { "keyrouter_health_probes_total", "counter",
		"Health probes the checker sent to the backend." },
	[F_HC_FAILED] = { "keyrouter_health_probes_failed_total", "counter",
		"Health probes of the backend that got no right answer within the timeout." },
	[F_HC_RTT] = { "keyrouter_health_rtt_seconds", "gauge",
		"Round trip of the backend's last answered health probe." },
	[F_HC_TRANSITIONS] = { "keyrouter_health_transitions_total", "counter",
		"State changes (up to down, down to up) the health checker wrote for the backend." },
	[F_HC_HELD] = { "keyrouter_health_held", "gauge",
		"1 when the checker would mark the backend down but the ring's panic threshold "
		"keeps it up." },
	[F_HC_UP] = { "keyrouter_health_checker_up", "gauge",
		"1 when the instance's health checker runs (a heartbeat within 3 periods), 0 when "
		"it ran once and is gone or hung (absent: never ran)." },
	[F_HC_BEAT] = { "keyrouter_health_checker_heartbeat_timestamp_seconds", "gauge",
		"Unix time of the health checker's last heartbeat." },
	[F_HC_PANIC] = { "keyrouter_health_panic", "gauge",
		"1 when the ring's panic threshold holds back a down (fewer than the threshold's "
		"share of its backends would be left up), else 0." },
	[F_HC_REATTACH] = { "keyrouter_reattach_total", "counter",
		"Times the health checker's watchdog attached the instance's program again after "
		"something detached it." },
	[F_HC_DAMP_PENALTY] = { "keyrouter_health_damp_penalty", "gauge",
		"The backend's flap damping penalty (1000 per flap, halving every half-life)." },
	[F_HC_DAMP_HELD] = { "keyrouter_health_damped", "gauge",
		"1 when flap damping holds the backend down (its penalty went above the "
		"suppress threshold and is not yet below the reuse threshold)." },
	[F_HC_FLAPS] = { "keyrouter_health_flaps_total", "counter",
		"Flaps (downs) the health checker counted for the backend since it started." },
	[F_SVC_PACKETS] = { "keyrouter_service_packets_total", "counter",
		"Packets of a service (by its config name), by outcome (routed, passed, "
		"dropped); sum() is every packet that matched the service." },
	[F_SVC_UNROUTED] = { "keyrouter_service_unrouted_packets_total", "counter",
		"Packets of a service not routed, by the reason (no_key, key_too_long, "
		"no_route, fwd_error, bad_service)." },
	[F_SVC_DROPPED] = { "keyrouter_service_dropped_packets_total", "counter",
		"Packets of a service dropped by its policy, by the reason." },
	[F_SVC_BYTES] = { "keyrouter_service_routed_bytes_total", "counter",
		"Frame bytes of the packets of a service that were routed." },
	[F_AN_UP] = { "keyrouter_announce_up", "gauge",
		"1 when the instance's BGP announcer (keyrouter announce) runs, 0 when it ran "
		"once and is gone or hung (absent: never ran)." },
	[F_AN_DRAINED] = { "keyrouter_announce_drained", "gauge",
		"1 when the router is drained (announce --drain), else 0." },
	[F_VIP_ANNOUNCED] = { "keyrouter_vip_announced", "gauge",
		"The VIP's route in BGP: 1 announced, 0.5 announced with GRACEFUL_SHUTDOWN "
		"(draining), 0 withdrawn." },
	[F_VIP_REASON] = { "keyrouter_vip_reason", "gauge",
		"1 for the reason of the VIP's route (ok, not_loaded, not_attached, "
		"not_converged, backends_down, unloading, drained), 0 for the others." },
	[F_VIP_CHANGE] = { "keyrouter_vip_change_timestamp_seconds", "gauge",
		"Unix time of the last change of the VIP's route (0: none since the announcer "
		"started)." },
	[F_BGP_UP] = { "keyrouter_bgp_session_up", "gauge",
		"1 when BIRD's BGP session is Established, by session, as the announcer last "
		"read it (birdc show protocols)." },
};

struct prom {
	FILE *f[F_N];
	char *buf[F_N];
	size_t len[F_N];
	int errors;		/* failed reads in the current instance */
	struct kr_health_maps hm;	/* the current instance's health maps (-1: none) */
};

void kr_prom_escape(const char *in, char *buf, size_t size)
{
	size_t o = 0;

	if (!size)
		return;
	for (; *in && o + 3 <= size; in++) {
		if (*in == '\\' || *in == '"') {
			buf[o++] = '\\';
			buf[o++] = *in;
		} else if (*in == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = *in;
		}
	}
	buf[o] = 0;
}

/* One sample: LABELS is "k1", "v1", "k2", "v2", ..., NULL (values escaped here). */
static void sample(struct prom *p, enum fam fam, const char *value, ...)
{
	FILE *f = p->f[fam];
	const char *k, *v;
	char esc[512];
	va_list ap;
	int n = 0;

	fputs(fams[fam].name, f);
	va_start(ap, value);
	while ((k = va_arg(ap, const char *))) {
		v = va_arg(ap, const char *);
		kr_prom_escape(v ? v : "", esc, sizeof(esc));
		fprintf(f, "%s%s=\"%s\"", n++ ? "," : "{", k, esc);
	}
	va_end(ap);
	fprintf(f, "%s %s\n", n ? "}" : "", value);
}

static const char *u64s(char *buf, unsigned long long v)
{
	snprintf(buf, 24, "%llu", v);
	return buf;
}

static const char *dbls(char *buf, double v)
{
	snprintf(buf, 32, "%.9g", v);
	return buf;
}

/* Unix time in seconds with milliseconds (a double's %g would round to 10 s). */
static const char *times(char *buf, __u64 ns)
{
	snprintf(buf, 32, "%llu.%03llu", (unsigned long long)(ns / 1000000000ull),
		 (unsigned long long)(ns % 1000000000ull / 1000000ull));
	return buf;
}

/* An instance's maps, opened read-only: no lock, nothing created. */
static int open_inst(struct kr_inst *in, const char *instance, const char *pin_dir)
{
	struct stat st;
	int err = kr_ops_inst_path(in, instance, pin_dir);

	if (err)
		return err;
	errno = 0;
	if (stat(in->dir, &st) || !S_ISDIR(st.st_mode))
		return errno == EACCES || errno == EPERM ? -EACCES : -ENOENT;
	in->meta_fd = kr_ops_map_open(in, KR_OPS_MAP_META, true);
	in->rings_fd = kr_ops_map_open(in, KR_OPS_MAP_RINGS, true);
	return 0;
}

static void close_inst(struct kr_inst *in)
{
	if (in->meta_fd >= 0)
		close(in->meta_fd);
	if (in->rings_fd >= 0)
		close(in->rings_fd);
	in->meta_fd = in->rings_fd = -1;
}

/* Are the data-plane maps there?  (kr_ops_maps_open warns when they are not.) */
static bool has_maps(const struct kr_inst *in)
{
	static const char *const need[] = { KR_MAP_BACKENDS, KR_MAP_SERVICES, KR_MAP_RINGS,
					    KR_MAP_RING_CTL };

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		int fd = kr_ops_map_open(in, need[i], true);

		if (fd < 0)
			return false;
		close(fd);
	}
	return true;
}

/* The tag of program id (16 hex digits), or "" when it cannot be read. */
static void prog_tag(__u32 id, char tag[17])
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = id ? bpf_prog_get_fd_by_id(id) : -1;

	tag[0] = 0;
	if (fd < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		for (int i = 0; i < 8; i++)
			snprintf(tag + 2 * i, 3, "%02x", info.tag[i]);
	close(fd);
}

static uint64_t fnv64(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

struct svc_entry {
	struct kr_service_key k;
	struct kr_service v;
};

static int svc_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct svc_entry *)a)->k, &((const struct svc_entry *)b)->k,
		      sizeof(struct kr_service_key));
}

/* keyrouter_config_info's digest (its HELP says what goes in): FNV-1a 64 over the services
 * in key order, with their ring's name instead of its id (ring ids, like the services'
 * counter ids, depend on the instance's history), the rings by id with their names and
 * active digests, and the backends in use by id.  0, or -1 (a map unreadable). */
static int config_digest(struct kr_inst *in, const struct kr_ops_maps *m, char out[17])
{
	uint64_t h = 0xcbf29ce484222325ull;
	struct svc_entry *sv = calloc(m->services_max ? m->services_max : 1, sizeof(*sv));
	struct kr_service_key k, next, *prev = NULL;
	struct kr_backend *all = NULL;
	uint16_t *nrings = NULL;
	unsigned n = 0;
	int rc = -1;

	if (!sv)
		return -1;
	while (n < m->services_max && !bpf_map_get_next_key(m->services, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(m->services, &k, &sv[n].v))
			continue;
		sv[n++].k = k;
	}
	qsort(sv, n, sizeof(*sv), svc_cmp);
	for (unsigned i = 0; i < n; i++) {
		struct kr_service v = sv[i].v;
		struct kr_ops_ring r = {};

		kr_ops_ring_get(in, v.ring_id, &r);
		v.ring_id = v.stats_id = 0;
		h = fnv64(h, &sv[i].k, sizeof(sv[i].k));
		h = fnv64(h, &v, sizeof(v));
		h = fnv64(h, r.name, strnlen(r.name, sizeof(r.name)) + 1);
	}
	for (__u32 id = 0; id < KR_MAX_RINGS; id++) {
		struct kr_ops_ring r;
		struct kr_ops_slot s = {};
		__u64 ctl = 0;

		if (kr_ops_ring_get(in, id, &r) || !r.name[0])
			continue;
		h = fnv64(h, r.name, strnlen(r.name, sizeof(r.name)) + 1);
		if (!kr_ops_ctl_read(m, id, &ctl) &&
		    !kr_ops_slot_read(m, id, kr_ctl_active(ctl), false, &s) && s.present)
			h = fnv64(h, &s.hdr.digest, sizeof(s.hdr.digest));
		kr_ops_slot_free(&s);
	}
	if (kr_ops_backends_read(m, &all) || kr_ops_backends_rings(m, &nrings))
		goto out;
	for (__u32 id = 0; id < m->backends_max; id++) {
		struct kr_backend be = all[id];

		if (!nrings[id] || !be.family)
			continue;
		be.state = 0;	/* runtime: the health checker's, an operator's */
		be.flags = 0;	/* the state's owner */
		be.ifindex = 0;	/* the router's own numbering of its devices */
		h = fnv64(h, &id, sizeof(id));
		h = fnv64(h, &be, sizeof(be));
	}
	snprintf(out, 17, "%016llx", (unsigned long long)h);
	rc = 0;
out:
	free(all);
	free(nrings);
	free(sv);
	return rc;
}

/* The label values of the global counters' families, each at its kr_counters member. */
#define C_(label, member) KR_OPS_LABEL(label, kr_counters, member)
static const struct kr_ops_field c_outcome[] = {
	C_("routed", routed), C_("passed", passed), C_("dropped", dropped),
};
static const struct kr_ops_field c_unrouted[] = {
	C_("passed_nomatch", passed_nomatch), C_("parse_error", parse_error),
	C_("fragment", fragment), C_("bad_service", bad_service), C_("no_key", no_key),
	C_("key_too_long", key_too_long), C_("no_ring", no_ring), C_("bad_image", bad_image),
	C_("all_down", all_down), C_("walk_limit", walk_limit), C_("fwd_error", fwd_error),
};
static const struct kr_ops_field c_dropped[] = {
	C_("no_key", dropped_no_key), C_("key_too_long", dropped_key_too_long),
	C_("no_route", dropped_no_route),
};
#undef C_

/* One sample per field of t (a table above) from the struct at v, labelled LABEL=name. */
#define SAMPLE_FIELDS(p, fam, t, v, label, ...)						\
	for (size_t i_ = 0; i_ < KR_OPS_NFIELDS(t); i_++)				\
		sample(p, fam, u64s(b, kr_ops_field_get(v, &(t)[i_])), __VA_ARGS__, label,	\
		       (t)[i_].name, NULL)

static void counters(struct prom *p, const char *inst, const struct kr_ops_maps *m)
{
	struct kr_counters n;
	char b[32];

	if (kr_ops_percpu_sum(m, m->counters, 0, &n, sizeof(n))) {
		p->errors++;
		return;
	}
	SAMPLE_FIELDS(p, F_PACKETS, c_outcome, &n, "outcome", L_INST, inst);
	SAMPLE_FIELDS(p, F_UNROUTED, c_unrouted, &n, "reason", L_INST, inst);
	SAMPLE_FIELDS(p, F_DROPPED, c_dropped, &n, "reason", L_INST, inst);
	sample(p, F_FAILOVER, u64s(b, n.failover_walks), L_INST, inst, NULL);
}

/* The health checker's flap damping of a backend and its watchdog (issue 35). */
static void health_damp(struct prom *p, __u32 id, const char *k1, const char *v1,
			const char *k2, const char *v2, const char *k3, const char *v3)
{
	struct kr_health_damp d;
	char b[32];

	if (p->hm.damp < 0 || id >= p->hm.max || bpf_map_lookup_elem(p->hm.damp, &id, &d) ||
	    !d.suppress)
		return;
	sample(p, F_HC_DAMP_PENALTY, u64s(b, d.penalty), k1, v1, k2, v2, k3, v3, NULL);
	sample(p, F_HC_DAMP_HELD, d.held_until_ns ? "1" : "0", k1, v1, k2, v2, k3, v3, NULL);
	sample(p, F_HC_FLAPS, u64s(b, d.flaps), k1, v1, k2, v2, k3, v3, NULL);
}

static void health_watchdog(struct prom *p, const struct kr_inst *in)
{
	struct kr_health_wd wd;
	__u32 zero = 0;
	char b[32];

	if (p->hm.wd >= 0 && !bpf_map_lookup_elem(p->hm.wd, &zero, &wd) && wd.checks)
		sample(p, F_HC_REATTACH, u64s(b, wd.reattach_total), L_INST, in->name, NULL);
}

/* Owner, since and the checker's figures of one backend (LABELS as sample()'s). */
static void health_backend(struct prom *p, __u32 id, const struct kr_backend *be,
			   const char *k1, const char *v1, const char *k2, const char *v2,
			   const char *k3, const char *v3, const void *end)
{
	struct kr_health_set s;
	struct kr_health_be f;
	char b[32];

	(void)end;
	sample(p, F_BE_OWNER, u64s(b, kr_backend_owner(be)), k1, v1, k2, v2, k3, v3, NULL);
	/* always the series (a state change changes values, not the set of series); 0: the
	 * time is not known (apply set it) */
	if (!(p->hm.set >= 0 && id < p->hm.max && !bpf_map_lookup_elem(p->hm.set, &id, &s) &&
	      s.state == be->state && s.owner == kr_backend_owner(be)))
		s.since_ns = 0;
	sample(p, F_BE_SINCE, times(b, s.since_ns), k1, v1, k2, v2, k3, v3, NULL);
	if (p->hm.be < 0 || id >= p->hm.max || bpf_map_lookup_elem(p->hm.be, &id, &f) ||
	    !(f.flags & KR_HEALTH_F_CHECKED))
		return;
	sample(p, F_HC_PROBES, u64s(b, f.probes), k1, v1, k2, v2, k3, v3, NULL);
	sample(p, F_HC_FAILED, u64s(b, f.failed), k1, v1, k2, v2, k3, v3, NULL);
	sample(p, F_HC_RTT, dbls(b, f.rtt_us / 1e6), k1, v1, k2, v2, k3, v3, NULL);
	sample(p, F_HC_TRANSITIONS, u64s(b, f.transitions), k1, v1, k2, v2, k3, v3, NULL);
	sample(p, F_HC_HELD, f.flags & KR_HEALTH_F_HELD ? "1" : "0", k1, v1, k2, v2, k3, v3, NULL);
	health_damp(p, id, k1, v1, k2, v2, k3, v3);
}

/* The checker's liveness and each checked ring's panic. */
static void health_instance(struct prom *p, struct kr_inst *in)
{
	struct kr_health_ck ck = {};
	__u32 zero = 0;
	char b[32];

	if (p->hm.ck < 0 || bpf_map_lookup_elem(p->hm.ck, &zero, &ck) || !ck.started_ns)
		return;
	sample(p, F_HC_UP, kr_health_checker_alive(&ck, kr_health_now_ns()) ? "1" : "0",
	       L_INST, in->name, NULL);
	sample(p, F_HC_BEAT, times(b, ck.beat_ns), L_INST, in->name, NULL);
	health_watchdog(p, in);
	for (__u32 id = 0; p->hm.rings >= 0 && id < KR_MAX_RINGS; id++) {
		struct kr_health_ring r;
		struct kr_ops_ring meta;

		if (!bpf_map_lookup_elem(p->hm.rings, &id, &r) && r.total &&
		    !kr_ops_ring_get(in, id, &meta) && meta.name[0])
			sample(p, F_HC_PANIC, r.panic ? "1" : "0", L_INST, in->name, "ring",
			       meta.name, NULL);
	}
}

/* The BGP announcer: its liveness, each VIP's route and reason, BIRD's sessions. */
static void announce(struct prom *p, const struct kr_inst *in)
{
	struct kr_announce_view v;
	char b[32], ip[INET6_ADDRSTRLEN], why[32];

	if (kr_announce_view_read(in, &v)) {
		p->errors++;
		return;
	}
	if (!v.present)
		return;
	sample(p, F_AN_UP, v.running ? "1" : "0", L_INST, in->name, NULL);
	sample(p, F_AN_DRAINED, v.ctl.drain ? "1" : "0", L_INST, in->name, NULL);
	for (__u32 i = 0; i < v.ck.nvips && i < KR_VIP_MAX; i++) {
		const struct kr_announce_vip *a = &v.vip[i];

		inet_ntop(a->family == 4 ? AF_INET : AF_INET6, a->ip, ip, sizeof(ip));
		sample(p, F_VIP_ANNOUNCED, a->route == KR_VIP_ANNOUNCED ? "1" :
		       a->route == KR_VIP_GSHUT ? "0.5" : "0", L_INST, in->name, "vip", ip, NULL);
		for (int w = 0; w < KR_VIP_WHY_N; w++) {
			size_t n;

			snprintf(why, sizeof(why), "%s", kr_vip_why_name(w));
			for (n = 0; why[n]; n++)
				why[n] = why[n] == ' ' ? '_' : why[n];
			sample(p, F_VIP_REASON, w == a->why ? "1" : "0", L_INST, in->name, "vip",
			       ip, "reason", why, NULL);
		}
		sample(p, F_VIP_CHANGE, times(b, a->since_ns), L_INST, in->name, "vip", ip, NULL);
	}
	for (__u32 i = 0; i < v.ck.nsessions && i < KR_ANNOUNCE_MAX_BGP; i++)
		sample(p, F_BGP_UP, !strncmp(v.bgp[i].info, "Established", 11) ? "1" : "0",
		       L_INST, in->name, "session", v.bgp[i].name, NULL);
}

/* Per-service counters (ops_svcstats.h), by the service's config name. */
static void services(struct prom *p, const char *inst, const struct kr_inst *in,
		     const struct kr_ops_maps *m)
{
#define S_(label, member) KR_OPS_LABEL(label, kr_svc_stats, member)
	static const struct kr_ops_field outcome[] = {
		S_("routed", routed), S_("passed", passed), S_("dropped", dropped),
	};
	static const struct kr_ops_field unrouted[] = {
		S_("no_key", no_key), S_("key_too_long", key_too_long), S_("no_route", no_route),
		S_("fwd_error", fwd_error), S_("bad_service", bad_service),
	};
	static const struct kr_ops_field dropped[] = {
		S_("no_key", dropped_no_key), S_("key_too_long", dropped_key_too_long),
		S_("no_route", dropped_no_route),
	};
#undef S_
	struct kr_ops_svc *v;
	unsigned n;
	char b[32];

	if (kr_ops_svc_read(in, m, &v, &n))
		return;		/* an older program: no per-service counters */
	for (unsigned i = 0; i < n; i++) {
		const struct kr_svc_stats *c = &v[i].c;
		const char *sv = v[i].name;

		SAMPLE_FIELDS(p, F_SVC_PACKETS, outcome, c, "outcome", L_INST, inst, "service", sv);
		SAMPLE_FIELDS(p, F_SVC_UNROUTED, unrouted, c, "reason", L_INST, inst, "service", sv);
		SAMPLE_FIELDS(p, F_SVC_DROPPED, dropped, c, "reason", L_INST, inst, "service", sv);
		sample(p, F_SVC_BYTES, u64s(b, c->bytes), L_INST, inst, "service", sv, NULL);
	}
	free(v);
}

/* One series per backend id = per server, whatever the number of rings that have it
 * (docs/operations.md "Backend identity"): no ring label, or sum() would count a server
 * once per ring. */
static void backend(struct prom *p, const char *inst, const struct kr_ops_maps *m, __u32 id,
		    const struct kr_backend *be, unsigned nrings)
{
	struct kr_sockaddr sa = {};
	char addr[KR_SOCKADDR_STRLEN], ids[16], b[32];
	struct kr_backend_stats st;

	sa.family = be->family;
	sa.port = ntohs(be->port);
	memcpy(sa.ip, be->addr, 16);
	kr_sockaddr_format(&sa, addr);
	snprintf(ids, sizeof(ids), "%u", id);
	kr_ops_percpu_sum(m, m->backend_stats, id, &st, sizeof(st));	/* 0s when absent */
#define BE_LABELS L_INST, inst, "backend", addr, "id", ids, NULL
	sample(p, F_BE_UP, be->state == KR_BACKEND_UP ? "1" : "0", BE_LABELS);
	sample(p, F_BE_STATE, u64s(b, be->state), BE_LABELS);
	sample(p, F_BE_RINGS, u64s(b, nrings), BE_LABELS);
	sample(p, F_BE_SPILL, dbls(b, be->spill / 65536.0), BE_LABELS);
	sample(p, F_BE_PACKETS, u64s(b, st.packets), BE_LABELS);
	sample(p, F_BE_BYTES, u64s(b, st.bytes), BE_LABELS);
	health_backend(p, id, be, BE_LABELS);
#undef BE_LABELS
}

static void ring(struct prom *p, struct kr_inst *in, const struct kr_ops_maps *m, __u32 id,
		 uint16_t *nrings)
{
	struct kr_ops_ring_report r;
	const char *inst = in->name, *name;
	char b[32];

	if (kr_ops_ring_report(in, m, id, KR_REPORT_NO_DIFF, &r)) {
		p->errors++;
		return;
	}
	name = r.meta.name;
	sample(p, F_RING_STATE, u64s(b, kr_ctl_state(r.ctl)), L_INST, inst, "ring", name,
	       NULL);
	sample(p, F_RING_RATIO, dbls(b, kr_frac_percent(kr_ctl_frac(r.ctl)) / 100.0),
	       L_INST, inst, "ring", name, NULL);
	sample(p, F_RING_ACTIVE, u64s(b, kr_ctl_active(r.ctl)), L_INST, inst, "ring", name,
	       NULL);
	if (m->hot_keys >= 0) {
		struct kr_hot_ent *hk = NULL;
		uint32_t nh = 0;

		kr_ops_hot_list(m, (int)id, &hk, &nh);
		free(hk);
		sample(p, F_RING_HOT_KEYS, u64s(b, nh), L_INST, inst, "ring", name, NULL);
	}
	for (__u32 s = 0; s < 2; s++) {
		const struct kr_ops_slot *sl = &r.slot[s];
		struct kr_slot_stats st;
		char slot[4] = { (char)('0' + s) };

#define SLOT_LABELS L_INST, inst, "ring", name, "slot", slot, NULL
		kr_ops_percpu_sum(m, m->slot_stats, id * 2 + s, &st, sizeof(st));	/* 0s: absent */
		sample(p, F_SLOT_PACKETS, u64s(b, st.packets), SLOT_LABELS);
		sample(p, F_SLOT_BYTES, u64s(b, st.bytes), SLOT_LABELS);
		sample(p, F_SLOT_FAILOVER, u64s(b, st.failover), SLOT_LABELS);
		{
			const struct { const char *reason; __u64 v; } un[] = {
				{ "no_ring", st.no_ring }, { "bad_image", st.bad_image },
				{ "all_down", st.all_down }, { "walk_limit", st.walk_limit } };

			for (size_t u = 0; u < sizeof(un) / sizeof(un[0]); u++)
				sample(p, F_SLOT_UNROUTED, u64s(b, un[u].v), L_INST, inst, "ring",
				       name, "slot", slot, "reason", un[u].reason, NULL);
		}
		if (m->slot_hot >= 0) {
			struct kr_slot_hot sh;

			kr_ops_percpu_sum(m, m->slot_hot, id * 2 + s, &sh, sizeof(sh));
			sample(p, F_SLOT_SPILLED, u64s(b, sh.spilled), SLOT_LABELS);
			sample(p, F_SLOT_REPLICA, u64s(b, sh.replica), SLOT_LABELS);
		}
		if (!sl->present)
			continue;
		sample(p, F_SLOT_POINTS, u64s(b, sl->hdr.npoints - sl->hdr.ndups), SLOT_LABELS);
		sample(p, F_SLOT_BACKENDS, u64s(b, sl->hdr.nbackends), SLOT_LABELS);
		sample(p, F_SLOT_MEMORY, u64s(b, sl->memlock), SLOT_LABELS);
		sample(p, F_SLOT_GENERATION, u64s(b, sl->hdr.generation), SLOT_LABELS);
		sample(p, F_SLOT_PUBLISHED, times(b, sl->hdr.published_ns), SLOT_LABELS);
		{
			char dg[9], gen[24];

			snprintf(dg, sizeof(dg), "%08x", sl->hdr.digest);
			snprintf(gen, sizeof(gen), "%llu", (unsigned long long)sl->hdr.generation);
			sample(p, F_SLOT_INFO, "1", L_INST, inst, "ring", name, "slot", slot,
			       "digest", dg, "generation", gen, NULL);
		}
#undef SLOT_LABELS
	}
	kr_ops_ring_report_free(&r);

	/* Backends of the active slot, and of the standby while it is staged or migrating:
	 * counted here, written once per backend id by the caller. */
	struct kr_ops_slot s[2] = {};
	__u64 ctl = 0;

	kr_ops_ctl_read(m, id, &ctl);
	for (__u32 k = 0; k < 2; k++) {
		bool want = k == kr_ctl_active(ctl) || kr_ctl_state(ctl) != KR_RING_IDLE;

		if (!want)
			continue;
		if (kr_ops_slot_read(m, id, k, true, &s[k])) {
			p->errors++;
			continue;
		}
		if (!s[k].present)
			continue;
		for (__u32 i = 0; i < s[k].hdr.nbackends; i++) {
			bool dup = false;

			for (__u32 j = 0; k == 1 && s[0].present && j < s[0].hdr.nbackends; j++)
				dup = dup || s[0].bt[j] == s[k].bt[i];
			if (!dup && nrings && s[k].bt[i] < m->backends_max)
				nrings[s[k].bt[i]]++;
		}
	}
	kr_ops_slot_free(&s[0]);
	kr_ops_slot_free(&s[1]);
}

static int services_count(const struct kr_ops_maps *m)
{
	unsigned char key[64], next[64];
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	void *pk = NULL;
	int n = 0;

	if (bpf_obj_get_info_by_fd(m->services, &info, &len) || info.key_size > sizeof(key))
		return 0;
	while (!bpf_map_get_next_key(m->services, pk, next)) {
		memcpy(key, next, info.key_size);
		pk = key;
		n++;
	}
	return n;
}

/* QUIC-LB outcomes of each QUIC-LB service (kr_qlb_stats), labelled by a VIP of it. */
static void quic_lb(struct prom *p, const char *inst, const struct kr_inst *in,
		    const struct kr_ops_maps *m)
{
	int fd = kr_ops_map_open(in, KR_MAP_QLB_STATS, true);
	struct kr_service_key key, next;
	bool seen[KR_QLB_MAX_SERVICES] = { false };
	void *pk = NULL;
	char b[32], r[4];

	if (fd < 0)
		return;
	while (!bpf_map_get_next_key(m->services, pk, &next)) {
		struct kr_sockaddr sa = { .family = next.family };
		char addr[KR_SOCKADDR_STRLEN];
		struct kr_qlb_counters c;
		struct kr_service sv;

		key = next;
		pk = &key;
		if (bpf_map_lookup_elem(m->services, &key, &sv) || !(sv.flags & KR_SVC_F_QUIC_LB) ||
		    sv.qlb_id >= KR_QLB_MAX_SERVICES || seen[sv.qlb_id])
			continue;
		seen[sv.qlb_id] = true;
		if (kr_ops_percpu_sum(m, fd, sv.qlb_id, &c, sizeof(c))) {
			p->errors++;
			continue;
		}
		sa.port = ntohs(key.port);
		memcpy(sa.ip, key.addr, 16);
		if (sa.family)
			kr_sockaddr_format(&sa, addr);
		else
			snprintf(addr, sizeof(addr), "*:%u", sa.port);
		for (unsigned o = 0; o < KR_QLB_NOUTCOMES; o++)
			sample(p, F_QLB_PACKETS, u64s(b, c.n[o]), L_INST, inst, "vip", addr,
			       "outcome", kr_qlb_outcome_name(o), NULL);
		for (unsigned cr = 0; cr < KR_QLB_MAX_CONFIGS; cr++) {
			snprintf(r, sizeof(r), "%u", cr);
			sample(p, F_QLB_ROUTED, u64s(b, c.routed_cr[cr]), L_INST, inst, "vip",
			       addr, "config_rotation", r, NULL);
		}
	}
	close(fd);
}

/* One instance; returns 1 when it is loaded. */
static int instance(struct prom *p, const char *name, const char *pin_dir)
{
	struct kr_ops_meta meta = {};
	struct kr_ops_maps m;
	struct kr_inst in;
	__u32 zero = 0;
	char b[32];
	int err;

	err = open_inst(&in, name, pin_dir);
	if (err == -EINVAL || err == -ENAMETOOLONG)
		return err;
	if (!err && in.meta_fd >= 0 && !bpf_map_lookup_elem(in.meta_fd, &zero, &meta) &&
	    kr_ops_meta_recorded(&meta)) {
		/* the record of keyrouter load: is its program where it says?  (Not known in
		 * a network namespace this process cannot enter: no sample.) */
		enum kr_ops_attach_state st = meta.magic == KR_OPS_META_MAGIC ?
					      kr_ops_attach_state(&meta, NULL) : KR_NOT_ATTACHED;

		if (st != KR_OTHER_NETNS)
			sample(p, F_ATTACHED, st == KR_ATTACHED ? "1" : "0", L_INST, in.name,
			       NULL);
	}
	if (err || !has_maps(&in) || kr_ops_maps_open(&in, &m)) {
		sample(p, F_UP, "0", L_INST, in.name, NULL);
		if (err == -EACCES)	/* not "not loaded": this user cannot see the pins */
			sample(p, F_ERRORS, "1", L_INST, in.name, NULL);
		if (!err)
			close_inst(&in);
		return 0;
	}
	sample(p, F_UP, "1", L_INST, in.name, NULL);
	if (in.meta_fd >= 0 && !bpf_map_lookup_elem(in.meta_fd, &zero, &meta) &&
	    meta.magic == KR_OPS_META_MAGIC) {
		char ifname[sizeof(meta.ifname) + 1] = {};

		memcpy(ifname, meta.ifname, sizeof(meta.ifname));
		char tag[17];

		prog_tag(meta.prog_id, tag);
		sample(p, F_INFO, "1", L_INST, in.name, "interface", ifname, "mode",
		       kr_ops_mode_name(meta.mode), "version", KR_VERSION, "program_tag", tag,
		       NULL);
		sample(p, F_LOADED, times(b, meta.loaded_ns), L_INST, in.name, NULL);
	}
	sample(p, F_SERVICES, u64s(b, services_count(&m)), L_INST, in.name, NULL);
	{
		char dg[17];

		if (config_digest(&in, &m, dg))
			p->errors++;
		else
			sample(p, F_CONFIG_INFO, "1", L_INST, in.name, "digest", dg, NULL);
	}
	p->errors = 0;
	kr_health_maps_open(&in, &m, false, &p->hm);
	health_instance(p, &in);
	announce(p, &in);
	counters(p, in.name, &m);
	if (in.rings_fd >= 0) {
		uint16_t *nrings = calloc(m.backends_max ? m.backends_max : 1, sizeof(*nrings));
		struct kr_backend *all = NULL;

		for (__u32 id = 0; id < KR_MAX_RINGS; id++) {
			struct kr_ops_ring r;

			if (!kr_ops_ring_get(&in, id, &r) && r.name[0])
				ring(p, &in, &m, id, nrings);
		}
		if (!nrings || kr_ops_backends_read(&m, &all))
			p->errors++;
		for (__u32 id = 0; nrings && all && id < m.backends_max; id++)
			if (nrings[id] && all[id].family)
				backend(p, in.name, &m, id, &all[id], nrings[id]);
		free(all);
		free(nrings);
	}
	quic_lb(p, in.name, &in, &m);
	services(p, in.name, &in, &m);
	sample(p, F_ERRORS, u64s(b, p->errors), L_INST, in.name, NULL);
	kr_health_maps_close(&p->hm);
	kr_ops_maps_close(&m);
	close_inst(&in);
	return 1;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every instance directory under bpffs/keyrouter, sorted; then the instances of SEEN (those
 * exported before) whose directory is gone, as keyrouter_up 0.  Loaded ones go into SEEN. */
static int all_instances(struct prom *p, struct kr_follow_names *seen)
{
	char root[256], **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	int loaded = 0;
	DIR *d;

	snprintf(root, sizeof(root), "%s/%s", KR_OPS_BPFFS, KR_OPS_ROOT);
	d = opendir(root);
	if (!d && (errno == EACCES || errno == EPERM)) {
		/* the instances cannot be listed by this user: say so, not "none loaded" */
		sample(p, F_UP, "0", NULL);
		sample(p, F_ERRORS, "1", NULL);
		return 0;
	}
	while (d && (e = readdir(d))) {
		char path[512];
		struct stat st;

		if (e->d_name[0] == '.' || strlen(e->d_name) >= KR_NAME_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, e->d_name);
		if (stat(path, &st) || !S_ISDIR(st.st_mode))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 8) * sizeof(*names));

			if (!nn)
				break;
			names = nn;
		}
		if (!(names[n] = strdup(e->d_name)))
			break;
		n++;
	}
	if (d)
		closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		int r = instance(p, names[i], NULL);

		loaded += r > 0;
		if (r > 0 && seen)
			kr_follow_names_add(seen, names[i]);	/* (no memory: not kept, no more) */
	}
	for (size_t i = 0; seen && i < seen->n; i++)
		if (!bsearch(&seen->name[i], names, n, sizeof(*names), name_cmp))
			sample(p, F_UP, "0", L_INST, seen->name[i], NULL);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (!n && !(seen && seen->n))
		sample(p, F_UP, "0", NULL);
	return loaded;
}

int kr_prom_render(const char *inst, const char *pin_dir, struct kr_follow_names *seen,
		   char **out, size_t *len, int *loaded)
{
	struct prom p = {};
	FILE *o = NULL;
	int err = 0, r;

	*out = NULL;
	*len = 0;
	*loaded = 0;
	for (int i = 0; i < F_N; i++) {
		p.f[i] = open_memstream(&p.buf[i], &p.len[i]);
		if (!p.f[i]) {
			err = -ENOMEM;
			goto out;
		}
	}
	if (inst || pin_dir) {
		r = instance(&p, inst, pin_dir);
		if (r < 0) {
			err = r;
			goto out;
		}
		*loaded = r;
	} else {
		*loaded = all_instances(&p, seen);
	}
	o = open_memstream(out, len);
	if (!o) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < F_N; i++) {
		fflush(p.f[i]);
		if (!p.len[i])
			continue;
		fprintf(o, "# HELP %s %s\n# TYPE %s %s\n", fams[i].name, fams[i].help,
			fams[i].name, fams[i].type);
		fwrite(p.buf[i], 1, p.len[i], o);
	}
	if (fclose(o))
		err = -ENOMEM;
out:
	for (int i = 0; i < F_N; i++) {
		if (p.f[i])
			fclose(p.f[i]);
		free(p.buf[i]);
	}
	if (err) {
		free(*out);
		*out = NULL;
		*len = 0;
	}
	return err;
}
