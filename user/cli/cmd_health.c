// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * keyrouter health: the active health checker of one instance (docs/operations.md "Health
 * checking").  Every checked backend gets a probe of its service's protocol, sent the way
 * the data path forwards (bpf/kr_fwd.h): to the service's VIP and port, l2 = a frame with the
 * backend's MAC on its egress device (AF_PACKET), ipip = the inner IP packet in a raw socket
 * of protocol IPIP / IPV6, which the kernel encapsulates and routes to the backend.  The
 * inner source is the router's own address and the UDP port of an ordinary socket of the
 * checker, so the backend's direct-server-return reply (VIP -> router) lands on it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_packet.h>
#include <linux/if_ether.h>
#include <linux/errqueue.h>
#include <bpf/bpf.h>
#include "addr.h"
#include "apply_out.h"
#include "cmd.h"
#include "config.h"
#include "health.h"
#include "lock_wait.h"
#include "log.h"
#include "ops.h"
#include "ops_backends.h"
#include "ops_health.h"
#include "ops_kernel.h"
#include "ops_find.h"
#include "opts.h"
#include "followed.h"
#include "single.h"
#include "watchdog.h"

#define DEFAULT_WAIT_MS	5000
#define BEAT_MS		500
#define SCAN_MS		2000	/* how often the live instance is compared (apply) */
#define PKT_MAX		2048

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: keyrouter health -c CONFIG [--instance NAME | --pin-dir DIR] [--wait SECONDS]\n\n"
		"Run the active health checker of one instance, in the foreground, until SIGTERM\n"
		"(the unit keyrouter-health@INSTANCE.service runs it). CONFIG is the instance's\n"
		"configuration: each ring's \"health\" object (overridable per backend) sets the\n"
		"probe, interval, timeout, rise, fall, jitter and panic threshold; defaults follow\n"
		"the key type of the ring's service: dns -> a DNS query, memcache -> the\n"
		"memcached version command, quic -> a QUIC packet of a reserved version (Version\n"
		"Negotiation); tuple and payload services are not checked without \"probe\":\n"
		"\"udp\".\n\n"
		"Probes go the way traffic goes: to the service's VIP and port, forwarded to one\n"
		"backend as the data path forwards (l2: that backend's MAC on its device; ipip:\n"
		"encapsulated to it), from the router's own address, so 'up' means 'answers for\n"
		"this service'. 'fall' consecutive failures mark a backend down, 'rise' successes\n"
		"up, each one write of its kr_backends entry (owner: checker). A backend an\n"
		"operator (backend set) or the configuration set down or drain is left alone. When\n"
		"a down would leave fewer than the ring's panic_threshold (default 0.5) of its\n"
		"backends up, it is not written: the log, status and the metric\n"
		"keyrouter_health_panic say so. Figures, owner and the checker's heartbeat are in\n"
		"status, status --json and the Prometheus exposition. SIGHUP reads CONFIG again.\n\n"
		"Flap damping: each flap (a down) adds a penalty of 1000 that halves every\n"
		"damp_half_life (30 s); above damp_suppress (2000) the backend is held down even\n"
		"when it answers, until the penalty is below damp_reuse (750), at most\n"
		"damp_max_hold (300 s) after its last flap.\n\n"
		"It runs for months: one checker per instance (a second one refuses and names\n"
		"the pid of the first); it refuses to run in another network namespace than the\n"
		"instance's; it follows the instance: after `unload` it closes the maps and waits\n"
		"(nothing probed or written), after a new `load` it opens the new pins, and it\n"
		"never writes the maps of an instance that is gone. Its watchdog looks every\n"
		"\"watchdog\" seconds (default 1; 0 off) whether the program is still attached,\n"
		"and attaches it again (as apply does) when something detached it: logged and\n"
		"counted (keyrouter_reattach_total, status, check).\n\n"
		"  -c, --config FILE    the configuration (JSON)\n"
		"  -i, --instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default: the config's\n"
		"                       \"instance\", else \"default\")\n"
		"  -p, --pin-dir DIR    maps pinned in DIR instead\n"
		"  --wait SECONDS       wait at most this long for the instance's lock before a\n"
		"                       state change (default 5; the change is tried again at the\n"
		"                       next probe)\n");
}

static void help(FILE *f, const void *ctx)
{
	(void)ctx;
	usage(f);
}

/* ---- targets --------------------------------------------------------------------------- */

struct target {
	__u32 id;			/* global backend id */
	uint32_t ri, bi, si;		/* config ring, backend, the service probed through */
	int ring_id;			/* kernel ring id of ri */
	struct kr_health_eff h;
	struct kr_backend be;		/* forwarding, as kr_backends has it */
	char label[KR_SOCKADDR_STRLEN];
	int udp;			/* the reply socket */
	uint8_t src[16];		/* inner source: the router's address */
	uint16_t sport;
	int tx;				/* AF_PACKET (l2) or raw ip (ipip) socket; shared */
	bool l2;
	uint8_t smac[6];
	uint32_t ifindex;
	/* probing */
	uint64_t next_ms, sent_ms, deadline_ms;
	bool in_flight;
	uint32_t seq;
	struct kr_hsm sm;
	struct kr_health_be fig;
	struct kr_damp damp;
	bool override_logged, held_logged, damp_logged;
};

struct checker {
	struct kr_config *cfg;
	const char *config;
	const char *instance, *pin_dir;
	/* the instance, followed across unload, load and upgrade (followed.h) */
	struct kr_followed f;
	struct target *t;
	uint32_t n;
	int rings_id[KR_MAX_RINGS];	/* config ring -> kernel ring id, -1 none */
	int pkt_fd;			/* AF_PACKET, for every l2 target */
	bool stale;			/* a write found another generation: look again now */
	int single_fd;			/* one checker per instance (single.h) */
	uint32_t wd_ms;			/* the watchdog's interval (0: off) */
	bool wd_failed_logged;
};

static volatile sig_atomic_t stop, reload;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload = 1;
	else
		stop = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* The router's address of family fam on device ifname (not link-local). */
static int dev_addr(const char *ifname, int fam, uint8_t out[16])
{
	struct ifaddrs *ifa, *i;
	int rc = -1;

	if (getifaddrs(&ifa))
		return -1;
	for (i = ifa; i && rc; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		if (fam == 4 && i->ifa_addr->sa_family == AF_INET) {
			memset(out, 0, 16);
			memcpy(out, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
			rc = 0;
		} else if (fam == 6 && i->ifa_addr->sa_family == AF_INET6) {
			const struct in6_addr *a = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;

			if (IN6_IS_ADDR_LINKLOCAL(a))
				continue;
			memcpy(out, a, 16);
			rc = 0;
		}
	}
	freeifaddrs(ifa);
	return rc;
}

static int dev_mac(int fd, const char *ifname, uint8_t mac[6])
{
	struct ifreq r = {};

	snprintf(r.ifr_name, sizeof(r.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &r))
		return -1;
	memcpy(mac, r.ifr_hwaddr.sa_data, 6);
	return 0;
}

static int sa_fill(struct sockaddr_storage *ss, int fam, const uint8_t *ip, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (fam == 4) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		memcpy(&s->sin_addr, ip, 4);
		return sizeof(*s);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	memcpy(&s6->sin6_addr, ip, 16);
	return sizeof(*s6);
}

/* The reply socket: UDP on the router's address, an ephemeral port. */
static int open_udp(struct target *t, int fam)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = socket(fam == 4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			0);

	if (fd < 0)
		return -1;
	len = (socklen_t)sa_fill(&ss, fam, t->src, 0);
	if (bind(fd, (struct sockaddr *)&ss, len) || getsockname(fd, (struct sockaddr *)&ss, &len)) {
		close(fd);
		return -1;
	}
	/* the ICMP errors of the probes on the error queue: "port unreachable" from a backend
	 * whose host is up but whose service is not fails the probe at once (drain_errors) */
	{
		int one = 1;

		setsockopt(fd, fam == 4 ? IPPROTO_IP : IPPROTO_IPV6,
			   fam == 4 ? IP_RECVERR : IPV6_RECVERR, &one, sizeof(one));
	}
	t->sport = ntohs(fam == 4 ? ((struct sockaddr_in *)&ss)->sin_port :
			 ((struct sockaddr_in6 *)&ss)->sin6_port);
	t->udp = fd;
	return 0;
}

/* The AF_PACKET socket of the l2 probes, shared (protocol 0: it receives nothing). */
static int packet_socket(struct checker *c)
{
	if (c->pkt_fd < 0)
		c->pkt_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	return c->pkt_fd;
}

/* Raw sockets of ipip probes only send: what they would receive is not read. */
static void small_rcvbuf(int fd)
{
	int sz = 1024;

	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
}

/* The service's VIP of the backend's family; wildcard services: the backend's own address. */
static void vip_of(const struct kr_cfg_service *s, const struct kr_backend *be, int fam,
		   uint8_t out[16])
{
	memset(out, 0, 16);
	if (s->vip_any)
		memcpy(out, be->addr, 16);
	else
		memcpy(out, s->vip.ip, fam == 4 ? 4 : 16);
}

static int vip_family(const struct kr_cfg_service *s, const struct kr_backend *be)
{
	return s->vip_any ? be->family : s->vip.family;
}

/* Sockets and addresses of target t. */
static int target_net(struct checker *c, struct target *t, const char *meta_ifname,
		      uint32_t meta_ifindex)
{
	const struct kr_cfg_service *s = &c->cfg->services[t->si];
	int fam = vip_family(s, &t->be);
	char ifname[IF_NAMESIZE + 1] = "";

	t->l2 = s->fwd.mode == KR_FWD_L2;
	if (t->l2) {
		t->ifindex = t->be.ifindex ? t->be.ifindex : meta_ifindex;
		if (!if_indextoname(t->ifindex, ifname))
			snprintf(ifname, sizeof(ifname), "%s", meta_ifname);
		t->tx = packet_socket(c);
		if (t->tx < 0 || dev_mac(t->tx, ifname, t->smac)) {
			pr_warn("keyrouter: health: %s: no raw socket on device '%s' (%s): needs "
				"CAP_NET_RAW\n", t->label, ifname, strerror(errno));
			return -1;
		}
		if (dev_addr(ifname, fam, t->src)) {
			pr_warn("keyrouter: health: %s: device '%s' has no IPv%d address to probe "
				"from (the reply comes back to it)\n", t->label, ifname, fam);
			return -1;
		}
	} else {
		const uint8_t *src = fam == 4 ? s->fwd.source4 : s->fwd.source6;
		bool has = fam == 4 ? s->fwd.has_source4 : s->fwd.has_source6;
		const uint8_t *osrc = t->be.family == 4 ? s->fwd.source4 : s->fwd.source6;
		bool ohas = t->be.family == 4 ? s->fwd.has_source4 : s->fwd.has_source6;

		if (!has) {
			pr_warn("keyrouter: health: %s: service '%s' has no forward.source%d: the "
				"router's address the replies come back to\n", t->label, s->name, fam);
			return -1;
		}
		memset(t->src, 0, 16);
		memcpy(t->src, src, fam == 4 ? 4 : 16);
		/* its own socket: bound to the service's outer source */
		t->tx = socket(t->be.family == 4 ? AF_INET : AF_INET6, SOCK_RAW | SOCK_CLOEXEC,
			       fam == 4 ? IPPROTO_IPIP : IPPROTO_IPV6);
		if (t->tx < 0) {
			pr_warn("keyrouter: health: %s: no raw socket (%s): needs CAP_NET_RAW\n",
				t->label, strerror(errno));
			return -1;
		}
		if (ohas) {
			struct sockaddr_storage ss;
			int len = sa_fill(&ss, t->be.family, osrc, 0);

			if (bind(t->tx, (struct sockaddr *)&ss, (socklen_t)len))
				pr_warn("keyrouter: health: %s: outer source not bound (%s)\n",
					t->label, strerror(errno));
		}
		small_rcvbuf(t->tx);
	}
	if (open_udp(t, fam)) {
		pr_warn("keyrouter: health: %s: no UDP socket on the router's address (%s)\n",
			t->label, strerror(errno));
		return -1;
	}
	return 0;
}

static void targets_free(struct checker *c)
{
	for (uint32_t i = 0; i < c->n; i++) {
		if (c->t[i].udp >= 0)
			close(c->t[i].udp);
		if (!c->t[i].l2 && c->t[i].tx >= 0)
			close(c->t[i].tx);
	}
	free(c->t);
	c->t = NULL;
	c->n = 0;
}

static bool same_ap(const struct kr_backend *be, const struct kr_sockaddr *a)
{
	return be->family == a->family && ntohs(be->port) == a->port &&
	       !memcmp(be->addr, a->ip, a->family == 4 ? 4 : 16);
}

/* The targets: every backend of a ring a service uses (in its subset) whose probe is not
 * "none", by the ids the ring's published slots reference for its address; each id once
 * (probed through the first such service). */
static int build_targets(struct checker *c)
{
	struct kr_backend *all = NULL;
	struct kr_ops_meta meta = {};
	__u32 zero = 0;
	uint32_t cap = 0;
	int err;

	err = kr_ops_backends_read(&c->f.m, &all);
	if (err) {
		pr_warn("keyrouter: health: couldn't read kr_backends: %s\n", strerror(-err));
		return err;
	}
	bpf_map_lookup_elem(c->f.in.meta_fd, &zero, &meta);
	for (uint32_t ri = 0; ri < c->cfg->nrings; ri++)
		c->rings_id[ri] = kr_ops_ring_find(&c->f.in, c->cfg->rings[ri].name);
	for (uint32_t si = 0; si < c->cfg->nservices; si++) {
		const struct kr_cfg_service *s = &c->cfg->services[si];
		uint32_t ri = s->ring;
		struct kr_ops_slot sl[2] = {};

		if (c->rings_id[ri] < 0)
			continue;
		for (int k = 0; k < 2; k++)
			kr_ops_slot_read(&c->f.m, (__u32)c->rings_id[ri], (__u32)k, true, &sl[k]);
		for (uint32_t bi = 0; bi < c->cfg->rings[ri].nbackends; bi++) {
			const struct kr_cfg_backend *cb = &c->cfg->rings[ri].backends[bi];
			struct kr_health_eff h;

			if (!kr_cfg_in_subset(s, cb))
				continue;
			kr_health_resolve(c->cfg, ri, bi, si, &h);
			if (h.probe == KR_PROBE_NONE)
				continue;
			for (int k = 0; k < 2; k++)
				for (uint32_t x = 0; sl[k].present && x < sl[k].hdr.nbackends; x++) {
					__u32 id = sl[k].bt[x];
					struct target *t;
					bool dup = false;

					if (id >= c->f.m.backends_max || all[id].state > KR_BACKEND_DRAIN ||
					    !same_ap(&all[id], &cb->addr))
						continue;
					for (uint32_t j = 0; j < c->n && !dup; j++)
						dup = c->t[j].id == id;
					if (dup)
						continue;
					if (c->n == cap) {
						cap = cap ? 2 * cap : 16;
						t = realloc(c->t, cap * sizeof(*t));
						if (!t) {
							err = -ENOMEM;
							goto out;
						}
						c->t = t;
					}
					t = &c->t[c->n];
					memset(t, 0, sizeof(*t));
					t->udp = t->tx = -1;
					t->id = id;
					t->ri = ri;
					t->bi = bi;
					t->si = si;
					t->ring_id = c->rings_id[ri];
					t->h = h;
					t->be = all[id];
					kr_sockaddr_format(&cb->addr, t->label);
					c->n++;
					/* not probed (said why): a backend the checker cannot
					 * reach is not taken for a dead one */
					if (target_net(c, t, meta.ifname, meta.ifindex)) {
						if (t->udp >= 0)
							close(t->udp);
						if (!t->l2 && t->tx >= 0)
							close(t->tx);
						c->n--;
						pr_warn("keyrouter: health: %s (id %u) is not checked\n",
							t->label, id);
					}
				}
		}
		for (int k = 0; k < 2; k++)
			kr_ops_slot_free(&sl[k]);
	}
out:
	free(all);
	return err;
}

/* ---- probes ------------------------------------------------------------------------------ */

/* [IP][UDP][payload] of a probe from t->src:t->sport to the VIP, into p.  Its length. */
static size_t ip_udp(const struct checker *c, const struct target *t, uint8_t *p,
		     const uint8_t *pl, size_t n)
{
	const struct kr_cfg_service *s = &c->cfg->services[t->si];
	int fam = vip_family(s, &t->be);
	uint8_t vip[16], *u;
	size_t ih = fam == 4 ? 20 : 40, ulen = 8 + n;
	uint32_t sum;

	vip_of(s, &t->be, fam, vip);
	memset(p, 0, ih + 8);
	if (fam == 4) {
		p[0] = 0x45;
		p[2] = (uint8_t)((ih + ulen) >> 8);
		p[3] = (uint8_t)(ih + ulen);
		p[6] = 0x40;			/* DF */
		p[8] = 64;
		p[9] = IPPROTO_UDP;
		memcpy(p + 12, t->src, 4);
		memcpy(p + 16, vip, 4);
		sum = kr_csum_fold(kr_csum_add(0, p, 20));
		p[10] = (uint8_t)(sum >> 8);
		p[11] = (uint8_t)sum;
	} else {
		p[0] = 0x60;
		p[4] = (uint8_t)(ulen >> 8);
		p[5] = (uint8_t)ulen;
		p[6] = IPPROTO_UDP;
		p[7] = 64;
		memcpy(p + 8, t->src, 16);
		memcpy(p + 24, vip, 16);
	}
	u = p + ih;
	u[0] = (uint8_t)(t->sport >> 8);
	u[1] = (uint8_t)t->sport;
	u[2] = (uint8_t)(s->port >> 8);
	u[3] = (uint8_t)s->port;
	u[4] = (uint8_t)(ulen >> 8);
	u[5] = (uint8_t)ulen;
	memcpy(u + 8, pl, n);
	/* pseudo-header: addresses, protocol, length */
	sum = kr_csum_add(0, fam == 4 ? p + 12 : p + 8, fam == 4 ? 8 : 32);
	sum += IPPROTO_UDP + (uint32_t)ulen;
	sum = kr_csum_add(sum, u, ulen);
	sum = kr_csum_fold(sum);
	if (!sum)
		sum = 0xffff;
	u[6] = (uint8_t)(sum >> 8);
	u[7] = (uint8_t)sum;
	return ih + ulen;
}

static int send_probe(struct checker *c, struct target *t)
{
	uint8_t frame[PKT_MAX], pl[1500];
	int n = kr_probe_build(&t->h, t->seq, pl, sizeof(pl));
	size_t len;
	ssize_t w;

	if (n < 0)
		return -1;
	if (t->l2) {
		struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_ifindex = (int)t->ifindex,
					  .sll_halen = 6 };
		int fam = vip_family(&c->cfg->services[t->si], &t->be);

		memcpy(frame, t->be.mac, 6);
		memcpy(frame + 6, t->smac, 6);
		frame[12] = fam == 4 ? 0x08 : 0x86;
		frame[13] = fam == 4 ? 0x00 : 0xdd;
		ll.sll_protocol = htons(fam == 4 ? ETH_P_IP : ETH_P_IPV6);
		memcpy(ll.sll_addr, t->be.mac, 6);
		len = 14 + ip_udp(c, t, frame + 14, pl, (size_t)n);
		w = sendto(t->tx, frame, len, 0, (struct sockaddr *)&ll, sizeof(ll));
	} else {
		struct sockaddr_storage ss;
		int sl = sa_fill(&ss, t->be.family, t->be.addr, 0);

		len = ip_udp(c, t, frame, pl, (size_t)n);
		w = sendto(t->tx, frame, len, 0, (struct sockaddr *)&ss, (socklen_t)sl);
	}
	return w == (ssize_t)len ? 0 : -1;
}

/* ---- states ---------------------------------------------------------------------------- */

static void damp_write(struct checker *c, struct target *t)
{
	uint64_t now = now_ms(), rel = kr_damp_release_ms(&t->damp, &t->h.damp, now);
	struct kr_health_damp d = {
		.held_until_ns = t->damp.held ? kr_health_now_ns() + rel * 1000000ull : 0,
		.penalty = (__u32)kr_damp_penalty(&t->damp, &t->h.damp, now),
		.flaps = t->damp.flaps, .suppress = t->h.damp.suppress, .reuse = t->h.damp.reuse,
	};

	if (t->damp.flaps)
		d.last_flap_ns = kr_health_now_ns() - (now - t->damp.at_ms) * 1000000ull;
	if (c->f.hm.damp >= 0)
		bpf_map_update_elem(c->f.hm.damp, &t->id, &d, BPF_ANY);
}

static void fig_write(struct checker *c, struct target *t)
{
	t->fig.up = t->sm.up;
	t->fig.probe = t->h.probe;
	if (c->f.hm.be >= 0)
		bpf_map_update_elem(c->f.hm.be, &t->id, &t->fig, BPF_ANY);
	damp_write(c, t);
}

/* Backends of config ring ri the checker probes, and how many are up in kr_backends now. */
static void ring_count(struct checker *c, uint32_t ri, uint32_t *up, uint32_t *total)
{
	*up = *total = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		struct kr_backend be;

		if (c->t[i].ri != ri)
			continue;
		(*total)++;
		if (!bpf_map_lookup_elem(c->f.m.backends, &c->t[i].id, &be) && be.state == KR_BACKEND_UP)
			(*up)++;
	}
}

static double ring_panic(const struct checker *c, uint32_t ri)
{
	const struct kr_cfg_health *h = &c->cfg->rings[ri].health;

	return h->set & KR_HC_PANIC ? h->panic : KR_HC_DEF_PANIC;
}

static void ring_record(struct checker *c, uint32_t ri, bool panic, uint32_t up, uint32_t total)
{
	struct kr_health_ring r = {};
	uint32_t held = 0;
	__u32 key;

	if (c->rings_id[ri] < 0 || c->f.hm.rings < 0)
		return;
	key = (__u32)c->rings_id[ri];
	bpf_map_lookup_elem(c->f.hm.rings, &key, &r);
	for (uint32_t i = 0; i < c->n; i++)
		held += c->t[i].ri == ri && (c->t[i].fig.flags & KR_HEALTH_F_HELD);
	if (panic && !r.panic)
		r.since_ns = kr_health_now_ns();
	if (!panic && !held)
		r.since_ns = 0;
	r.panic = panic || held;
	r.up = up;
	r.total = total;
	r.held = held;
	r.threshold_pm = (uint32_t)(ring_panic(c, ri) * 1000 + 0.5);
	bpf_map_update_elem(c->f.hm.rings, &key, &r, BPF_ANY);
}

/* An operator's or the configuration's down/drain: the checker leaves it alone. */
static bool overridden(const struct kr_backend *be)
{
	return kr_health_overridden(be->state, kr_backend_owner(be));
}

/* Write state for t under the lock (bounded wait); the entry re-read under it. */
static int locked_write(struct checker *c, struct target *t, __u8 state)
{
	struct kr_inst in;
	struct kr_backend be;
	int err;

	if (kr_ops_inst_open(&in, c->instance, c->pin_dir))
		return -EAGAIN;
	/* under the lock no unload or load can be under way: the maps open are the instance's
	 * now, or they belong to a generation that is gone and are never written */
	if (!kr_followed_current(&c->f)) {
		kr_ops_inst_close(&in);
		c->stale = true;
		return -ESTALE;
	}
	err = bpf_map_lookup_elem(c->f.m.backends, &t->id, &be) ? -errno : 0;
	if (!err && overridden(&be))
		err = -EPERM;
	else if (!err && be.state != state)
		err = kr_health_write_state(&c->f.m, &c->f.hm, t->id, &be, state, KR_OWNER_CHECKER);
	kr_ops_inst_close(&in);
	return err;
}

/* Write state (the lock taken, bounded); on success the checker's view follows, the
 * transition is counted and the ring's record updated.  false: not written (said why, or an
 * operator's state it leaves alone). */
static bool transition(struct checker *c, struct target *t, __u8 state)
{
	uint32_t up, total;
	int err = locked_write(c, t, state);

	if (err == -EPERM) {
		t->fig.flags |= KR_HEALTH_F_OVERRIDE;
		return false;
	}
	if (err) {
		logf_("health: %s: could not mark it %s (%s): trying again at the next probe\n",
		      t->label, state == KR_BACKEND_UP ? "up" : "down",
		      err == -EAGAIN ? "the instance's lock" :
		      err == -ESTALE ? "the instance was unloaded or loaded again: not written to "
				       "its old maps" : strerror(-err));
		return false;
	}
	kr_hsm_set(&t->sm, state == KR_BACKEND_UP);
	t->fig.transitions++;
	ring_count(c, t->ri, &up, &total);
	ring_record(c, t->ri, false, up, total);
	return true;
}

static void want_down(struct checker *c, struct target *t, const char *why)
{
	uint32_t up, total;

	ring_count(c, t->ri, &up, &total);
	if (kr_health_panic(up, total, ring_panic(c, t->ri))) {
		t->fig.flags |= KR_HEALTH_F_HELD;
		if (!t->held_logged)
			logf_("health: PANIC: ring %s: marking %s down would leave %u of %u backends "
			      "up, below the panic threshold %.2f: it stays up (%u probes failed: "
			      "%s)\n", c->cfg->rings[t->ri].name, t->label, up ? up - 1 : 0, total,
			      ring_panic(c, t->ri), t->sm.fail_run, why);
		t->held_logged = true;
		ring_record(c, t->ri, true, up, total);
		return;
	}
	t->fig.flags &= ~KR_HEALTH_F_HELD;
	t->held_logged = false;
	if (!transition(c, t, KR_BACKEND_DOWN))
		return;
	logf_("health: %s (id %u, ring %s): down after %u failed probes (%s)\n", t->label,
	      t->id, c->cfg->rings[t->ri].name, t->sm.fail_run, why);
	if (!t->damp.held && kr_damp_flap(&t->damp, &t->h.damp, now_ms()))
		logf_("health: %s (id %u, ring %s): flapping: held down by damping (penalty %.0f "
		      "above %u after %u flaps; released when it stays up until below %u, in "
		      "about %.1f s, at most %.0f s)\n", t->label, t->id,
		      c->cfg->rings[t->ri].name, t->damp.penalty, t->h.damp.suppress,
		      t->damp.flaps, t->h.damp.reuse,
		      kr_damp_release_ms(&t->damp, &t->h.damp, now_ms()) / 1000.0,
		      t->h.damp.max_hold_ms / 1000.0);
}

static void want_up(struct checker *c, struct target *t)
{
	bool held = t->damp.held;

	if (!kr_damp_may_up(&t->damp, &t->h.damp, now_ms())) {
		/* answering again while held: the next failure is a flap of its own */
		t->damp.seen_up = true;
		if (!t->damp_logged)
			logf_("health: %s (id %u, ring %s): answers again, held down by damping "
			      "for about %.1f s more (penalty %.0f, released below %u)\n", t->label,
			      t->id, c->cfg->rings[t->ri].name,
			      kr_damp_release_ms(&t->damp, &t->h.damp, now_ms()) / 1000.0,
			      kr_damp_penalty(&t->damp, &t->h.damp, now_ms()), t->h.damp.reuse);
		t->damp_logged = true;
		return;
	}
	if (held)
		logf_("health: %s (id %u, ring %s): released by damping (penalty below %u)\n",
		      t->label, t->id, c->cfg->rings[t->ri].name, t->h.damp.reuse);
	t->damp_logged = false;
	if (transition(c, t, KR_BACKEND_UP))
		logf_("health: %s (id %u, ring %s): up after %u answered probes\n", t->label,
		      t->id, c->cfg->rings[t->ri].name, t->sm.ok_run);
}

/* A held backend that answered again and now fails as many probes as mark one down: a flap
 * the data path does not see (it stays down), counted all the same, as RFC 2439 counts the
 * flaps of a suppressed route. */
static void held_flap(struct checker *c, struct target *t)
{
	(void)c;
	if (t->damp.held && t->damp.seen_up && !t->sm.up && t->sm.fail_run >= t->h.fall)
		kr_damp_flap(&t->damp, &t->h.damp, now_ms());
}

/* The live entry: an operator's down/drain is left alone; someone else's up or down is
 * the checker's view from now on. */
static bool sync_live(struct checker *c, struct target *t)
{
	struct kr_backend be;

	if (bpf_map_lookup_elem(c->f.m.backends, &t->id, &be))
		return false;
	if (overridden(&be)) {
		if (!t->override_logged)
			logf_("health: %s (id %u): %s by the %s: left alone\n", t->label, t->id,
			      be.state == KR_BACKEND_DOWN ? "down" : "drain",
			      kr_backend_owner_name(kr_backend_owner(&be)));
		t->override_logged = true;
		t->fig.flags |= KR_HEALTH_F_OVERRIDE;
		return true;
	}
	if (t->override_logged)
		logf_("health: %s (id %u): %s again (owner %s): checked\n", t->label, t->id,
		      be.state == KR_BACKEND_UP ? "up" : "down",
		      kr_backend_owner_name(kr_backend_owner(&be)));
	t->override_logged = false;
	t->fig.flags &= ~KR_HEALTH_F_OVERRIDE;
	if ((be.state == KR_BACKEND_UP) != t->sm.up)
		kr_hsm_set(&t->sm, be.state == KR_BACKEND_UP);
	/* up although damping holds it: someone (backend set ... up) took it out of the hold */
	if (be.state == KR_BACKEND_UP && t->damp.held) {
		t->damp.held = t->damp.seen_up = false;
		t->damp_logged = false;
	}
	return false;
}

/* A short failure ended: fewer failed probes in a row than `fall`, then an answer, from an
 * up backend or a held one that answered again.  Half a flap (kr_damp_blip); the one that
 * crosses the suppress threshold marks the backend down, held (panic rules apply). */
static void short_failure(struct checker *c, struct target *t, uint32_t failed)
{
	if (!t->sm.up) {
		if (t->damp.held)	/* held down and flapping on: the hold grows */
			kr_damp_blip(&t->damp, &t->h.damp, now_ms());
		return;
	}
	if (!kr_damp_blip(&t->damp, &t->h.damp, now_ms()))
		return;
	logf_("health: %s (id %u, ring %s): flapping faster than fall x interval (%u short "
	      "failures and flaps, the last of %u probes): held down by damping (penalty %.0f "
	      "above %u)\n", t->label, t->id, c->cfg->rings[t->ri].name, t->damp.flaps, failed,
	      t->damp.penalty, t->h.damp.suppress);
	want_down(c, t, "flapping");
}

static void result(struct checker *c, struct target *t, bool ok, uint32_t rtt_us, const char *why)
{
	enum kr_hsm_event ev;
	uint32_t failed = t->sm.fail_run;
	bool ov;

	t->in_flight = false;
	t->fig.last_ns = kr_health_now_ns();
	if (ok) {
		t->fig.rtt_us = rtt_us;
		t->fig.flags &= ~KR_HEALTH_F_FAILING;
	} else {
		t->fig.failed++;
		t->fig.flags |= KR_HEALTH_F_FAILING;
	}
	ov = sync_live(c, t);
	ev = kr_hsm_result(&t->sm, ok, t->h.rise, t->h.fall);
	if (ok && (t->fig.flags & KR_HEALTH_F_HELD)) {
		t->fig.flags &= ~KR_HEALTH_F_HELD;
		t->held_logged = false;
		ring_record(c, t->ri, false, 0, 0);
	}
	if (!ov && ev == KR_HSM_WANT_DOWN)
		want_down(c, t, why);
	else if (!ov && ev == KR_HSM_WANT_UP)
		want_up(c, t);
	else if (!ov && !ok)
		held_flap(c, t);
	/* a short failure that lasted a second or more: one or two probes lost at a fast
	 * interval (0.2 s) are noise, not a backend out of service */
	if (!ov && ok && failed && failed < t->h.fall &&
	    (uint64_t)failed * t->h.interval_ms >= KR_DAMP_BLIP_MIN_MS)
		short_failure(c, t, failed);
	fig_write(c, t);
}

/* The next probe: one interval after the one just due (not after the moment it was sent,
 * so a late loop does not stretch the intervals), minus the jitter (it only shortens them:
 * fall x interval + timeout stays the bound), and never in the past. */
static void schedule(struct target *t, uint64_t now)
{
	uint32_t j = t->h.jitter_ms ? (uint32_t)(random() % (t->h.jitter_ms + 1)) : 0;

	t->next_ms = t->next_ms + t->h.interval_ms - j;
	if (t->next_ms < now)
		t->next_ms = now;
}

static void drain_socket(struct checker *c, struct target *t)
{
	uint8_t buf[PKT_MAX];
	struct sockaddr_storage ss;
	const struct kr_cfg_service *s = &c->cfg->services[t->si];
	int fam = vip_family(s, &t->be);
	uint8_t vip[16];

	vip_of(s, &t->be, fam, vip);
	for (;;) {
		socklen_t sl = sizeof(ss);
		ssize_t n = recvfrom(t->udp, buf, sizeof(buf), 0, (struct sockaddr *)&ss, &sl);
		bool from_vip;

		if (n < 0)
			return;
		/* the reply comes from the VIP and the service's port (DSR) */
		if (fam == 4)
			from_vip = ss.ss_family == AF_INET &&
				   !memcmp(&((struct sockaddr_in *)&ss)->sin_addr, vip, 4) &&
				   ntohs(((struct sockaddr_in *)&ss)->sin_port) == s->port;
		else
			from_vip = ss.ss_family == AF_INET6 &&
				   !memcmp(&((struct sockaddr_in6 *)&ss)->sin6_addr, vip, 16) &&
				   ntohs(((struct sockaddr_in6 *)&ss)->sin6_port) == s->port;
		if (t->in_flight && from_vip && kr_probe_match(&t->h, t->seq, buf, (size_t)n))
			result(c, t, true, (uint32_t)(now_us() - t->sent_ms), NULL);
	}
}

/* The probe socket's error queue: an ICMP "port unreachable" (v4 type 3 code 3, v6 type 1
 * code 4) for a probe of this target's (the offending packet went to its VIP and the
 * service's port) fails the probe in flight now rather than at its timeout.  Anything
 * else on the queue is dropped. */
static void drain_errors(struct checker *c, struct target *t)
{
	const struct kr_cfg_service *s = &c->cfg->services[t->si];
	int fam = vip_family(s, &t->be);
	uint8_t vip[16];

	vip_of(s, &t->be, fam, vip);
	for (;;) {
		char data[64], ctl[512];
		struct sockaddr_storage dst;
		struct iovec iov = { data, sizeof(data) };
		struct msghdr m = { .msg_name = &dst, .msg_namelen = sizeof(dst), .msg_iov = &iov,
				    .msg_iovlen = 1, .msg_control = ctl,
				    .msg_controllen = sizeof(ctl) };
		bool unreach = false, to_vip;

		if (recvmsg(t->udp, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
			const struct sock_extended_err *ee = (const void *)CMSG_DATA(cm);

			if ((cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_RECVERR &&
			     ee->ee_origin == SO_EE_ORIGIN_ICMP && ee->ee_type == 3 &&
			     ee->ee_code == 3) ||
			    (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_RECVERR &&
			     ee->ee_origin == SO_EE_ORIGIN_ICMP6 && ee->ee_type == 1 &&
			     ee->ee_code == 4))
				unreach = true;
		}
		if (fam == 4)
			to_vip = dst.ss_family == AF_INET &&
				 !memcmp(&((struct sockaddr_in *)&dst)->sin_addr, vip, 4) &&
				 ntohs(((struct sockaddr_in *)&dst)->sin_port) == s->port;
		else
			to_vip = dst.ss_family == AF_INET6 &&
				 !memcmp(&((struct sockaddr_in6 *)&dst)->sin6_addr, vip, 16) &&
				 ntohs(((struct sockaddr_in6 *)&dst)->sin6_port) == s->port;
		if (unreach && to_vip && t->in_flight)
			result(c, t, false, 0, "port unreachable (ICMP): the host answers, the "
			       "service does not");
	}
}

static void beat(struct checker *c, uint64_t started, uint64_t rounds)
{
	struct kr_health_ck ck = { .started_ns = started, .beat_ns = kr_health_now_ns(),
				   .rounds = rounds, .pid = (__u32)getpid(), .targets = c->n,
				   .beat_ms = BEAT_MS };
	__u32 zero = 0;

	if (c->f.hm.ck >= 0)
		bpf_map_update_elem(c->f.hm.ck, &zero, &ck, BPF_ANY);
}

/* The damping left by a checker that ran before (killed, restarted): its penalty, decayed
 * since it was written (at the backend's last result), and its hold while the backend is
 * still down by the checker. */
static void damp_resume(struct checker *c, struct target *t, const struct kr_backend *be)
{
	struct kr_health_damp d;
	uint64_t real = kr_health_now_ns(), age_ms, now = now_ms();

	if (c->f.hm.damp < 0 || bpf_map_lookup_elem(c->f.hm.damp, &t->id, &d) || !d.penalty ||
	    !t->fig.last_ns || real < t->fig.last_ns)
		return;
	age_ms = (real - t->fig.last_ns) / 1000000;
	t->damp.penalty = d.penalty;
	t->damp.at_ms = now > age_ms ? now - age_ms : 0;
	t->damp.flaps = d.flaps;
	t->damp.held = d.held_until_ns && be->state == KR_BACKEND_DOWN &&
		       kr_backend_owner(be) == KR_OWNER_CHECKER;
}

/* Targets of the configuration, their figures and views resumed from the maps. */
static int start(struct checker *c)
{
	uint64_t t0 = now_ms();

	if (build_targets(c))
		return -1;
	for (uint32_t i = 0; i < c->n; i++) {
		struct target *t = &c->t[i];
		struct kr_backend be;
		bool have;

		if (c->f.hm.be >= 0)
			bpf_map_lookup_elem(c->f.hm.be, &t->id, &t->fig);
		t->fig.flags = KR_HEALTH_F_CHECKED;
		have = !bpf_map_lookup_elem(c->f.m.backends, &t->id, &be);
		t->sm.up = have && be.state == KR_BACKEND_UP;
		if (have)
			damp_resume(c, t, &be);
		t->seq = (uint32_t)random();
		/* spread the first probes over the first interval */
		t->next_ms = t0 + (t->h.interval_ms ? (uint64_t)random() % t->h.interval_ms : 0);
		fig_write(c, t);
		logf_("health: %s (id %u, ring %s, service %s): %s probe every %.3f s, timeout "
		      "%.3f s, rise %u, fall %u (%s, now %s)\n", t->label, t->id,
		      c->cfg->rings[t->ri].name, c->cfg->services[t->si].name,
		      kr_probe_name(t->h.probe), t->h.interval_ms / 1000.0, t->h.timeout_ms / 1000.0,
		      t->h.rise, t->h.fall, t->l2 ? "l2" : "ipip", t->sm.up ? "up" : "down");
	}
	for (uint32_t ri = 0; ri < c->cfg->nrings; ri++) {
		uint32_t up, total;

		ring_count(c, ri, &up, &total);
		if (total)
			ring_record(c, ri, false, up, total);
	}
	return 0;
}

/* What the targets depend on in the live instance: the ring ids of the configuration's
 * rings, the generation of each of their slots (apply publishes a new one when the ring's
 * backends change) and the forwarding of every checked id. */
static uint64_t live_signature(struct checker *c)
{
	uint64_t h = 1469598103934665603ull;

#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
	for (uint32_t ri = 0; ri < c->cfg->nrings; ri++) {
		int id = kr_ops_ring_find(&c->f.in, c->cfg->rings[ri].name);

		MIX(id);
		for (__u32 k = 0; id >= 0 && k < 2; k++) {
			struct kr_ops_slot s = {};

			kr_ops_slot_read(&c->f.m, (__u32)id, k, false, &s);
			MIX(s.present ? s.hdr.generation : 0);
			kr_ops_slot_free(&s);
		}
	}
	for (uint32_t i = 0; i < c->n; i++) {
		struct kr_backend be = {};

		bpf_map_lookup_elem(c->f.m.backends, &c->t[i].id, &be);
		be.state = 0;
		be.flags = 0;
		for (size_t b = 0; b < sizeof(be); b++)
			MIX(((const uint8_t *)&be)[b]);
	}
#undef MIX
	return h;
}

/* The targets again (the configuration or the instance changed); a backend probed before
 * keeps its runs of answers and failures and its schedule. */
static int rebuild(struct checker *c)
{
	struct target *old = c->t;
	uint32_t nold = c->n;

	c->t = NULL;
	c->n = 0;
	if (start(c))
		return -1;
	for (uint32_t i = 0; i < c->n; i++)
		for (uint32_t j = 0; j < nold; j++)
			if (old[j].id == c->t[i].id) {
				c->t[i].sm.ok_run = old[j].sm.ok_run;
				c->t[i].sm.fail_run = old[j].sm.fail_run;
				c->t[i].seq = old[j].seq;
				c->t[i].next_ms = old[j].next_ms;
				c->t[i].damp = old[j].damp;
				break;
			}
	{
		struct target *now = c->t;
		uint32_t n = c->n;

		c->t = old;
		c->n = nold;
		targets_free(c);
		c->t = now;
		c->n = n;
	}
	logf_("health: checking %u backends of instance '%s'\n", c->n, c->f.in.name);
	return 0;
}

static int load_config(struct checker *c)
{
	struct kr_config *cfg = kr_cli_config_load(c->config);

	if (!cfg)
		return -1;
	kr_config_free(c->cfg);
	c->cfg = cfg;
	return 0;
}

/* ---- following the instance (follow.h), the watchdog (watchdog.h) ------------------------ */

/* The instance's maps closed: nothing of a generation that may be gone is held. */
static void inst_close(struct checker *c)
{
	targets_free(c);
	kr_followed_close(&c->f);
}

/* Open the instance's pins (followed.h).  In another network namespace than the instance's
 * the checker would resolve its devices' indexes to this namespace's (another device, or
 * none) and probe nothing: refused, as apply does, saying where to run it (-EXDEV). */
static int inst_open(struct checker *c)
{
	char hint[320];
	__u32 ino;
	int err = kr_followed_open(&c->f, &ino);

	if (err != -EXDEV)
		return err;
	kr_ops_netns_hint(ino, hint, sizeof(hint));
	pr_warn("keyrouter: health: instance '%s' is in another network namespace (net:[%u]; "
		"the checker runs in net:[%u]): it probes through the instance's devices, so it "
		"must run there: '%s keyrouter health -c %s --instance %s'\n", c->f.in.name, ino,
		kr_ops_netns_ino(), hint[0] ? hint : "nsenter --net=<its namespace>", c->config,
		c->f.in.name);
	return err;
}

/* The instance's generation again: the same, an upgrade (same maps: nothing to reopen), or
 * unloaded / loaded again: the maps are closed, and opened again once it is loaded.  1: they
 * were opened again (new targets); -EXDEV: loaded again in another network namespace (said:
 * the checker stops). */
static int follow(struct checker *c)
{
	bool was_open = c->f.open;
	struct kr_follow_id was = c->f.gen, now;
	enum kr_follow_change ch = kr_followed_poll(&c->f, &now);
	int err;

	c->stale = false;
	if (ch == KR_FOLLOW_SAME)
		return 0;
	if (ch == KR_FOLLOW_UPGRADED) {
		logf_("health: instance '%s' was upgraded (program %u -> %u): the same maps, "
		      "checking on\n", c->f.in.name, was.prog_id, now.prog_id);
		return 0;
	}
	targets_free(c);
	if (ch == KR_FOLLOW_GONE) {
		if (was_open)
			logf_("health: instance '%s' is not loaded any more: its maps closed, "
			      "nothing probed or written until it is loaded again\n", c->f.in.name);
		return 0;
	}
	if (was_open)
		logf_("health: instance '%s' was loaded again (new maps): reopening its pins\n",
		      c->f.in.name);
	err = inst_open(c);
	if (err == -EXDEV)
		return err;
	if (err || start(c)) {
		inst_close(c);	/* a load under way, or gone again: next time */
		return 0;
	}
	logf_("health: checking %u backends of instance '%s' again (pid %d)\n", c->n,
	      c->f.in.name, (int)getpid());
	return 1;
}

static void watchdog(struct checker *c)
{
	struct kr_health_wd wd = {};
	enum kr_log_level lvl = kr_log_get_level();
	enum kr_wd_result r;
	struct kr_ops_meta meta;
	__u32 zero = 0;
	int err;

	/* a failure is said once (below), not at every look */
	if (c->wd_failed_logged)
		kr_log_set_level(KR_LOG_QUIET);
	r = kr_watchdog_look(c->instance, c->pin_dir, &meta, &err);
	kr_log_set_level(lvl);
	if (c->f.hm.wd < 0)
		return;
	bpf_map_lookup_elem(c->f.hm.wd, &zero, &wd);
	wd.checks++;
	wd.interval_ms = c->wd_ms;
	if (r == KR_WD_REATTACHED) {
		wd.reattach_total++;
		wd.last_ns = kr_health_now_ns();
		logf_("health: watchdog: instance '%s': its program (id %u) was not attached to "
		      "'%s' any more (detached behind keyrouter's back): attached it again (%s "
		      "mode; %llu re-attaches)\n", c->f.in.name, meta.prog_id, meta.ifname,
		      kr_ops_mode_name(meta.mode), (unsigned long long)wd.reattach_total);
		c->wd_failed_logged = false;
	} else if (r == KR_WD_FAILED || r == KR_WD_IFACE_GONE) {
		wd.failed_total++;
		if (!c->wd_failed_logged)
			logf_("health: watchdog: instance '%s' is not attached to '%s' and %s: "
			      "trying again every %.3g s\n", c->f.in.name, meta.ifname,
			      r == KR_WD_IFACE_GONE ? "its interface is gone" :
			      "its program could not be attached again", c->wd_ms / 1000.0);
		c->wd_failed_logged = true;
	} else if (r == KR_WD_ATTACHED) {
		c->wd_failed_logged = false;
	}
	bpf_map_update_elem(c->f.hm.wd, &zero, &wd, BPF_ANY);
}

static int run(struct checker *c)
{
	uint64_t started = kr_health_now_ns(), rounds = 0, last_beat = 0, last_scan, sig = 0;
	uint64_t last_wd = 0, last_follow = 0;
	struct pollfd *pf = NULL;

	if (start(c))
		return 1;
	sig = live_signature(c);
	last_scan = now_ms();
	logf_("health: checking %u backends of instance '%s' (pid %d)\n", c->n, c->f.in.name,
	      (int)getpid());
	if (c->wd_ms)
		logf_("health: watchdog: the program of instance '%s' is attached again within "
		      "%.3g s when something detaches it\n", c->f.in.name, c->wd_ms / 1000.0);
	while (!stop) {
		uint64_t now = now_ms(), next = now + BEAT_MS;
		int r;

		if (kr_daemon_due(&last_follow, BEAT_MS, now) || c->stale) {
			r = follow(c);
			if (r == -EXDEV)
				return 1;
			if (r == 1) {
				sig = live_signature(c);
				free(pf);
				pf = NULL;
			}
		}
		kr_single_serve(c->single_fd);
		if (!c->f.open) {
			/* not loaded: nothing to probe, nothing written; the follow looks again */
			poll(NULL, 0, BEAT_MS);
			continue;
		}
		if (kr_daemon_due(&last_wd, c->wd_ms, now))
			watchdog(c);
		if (now - last_scan >= SCAN_MS) {
			last_scan = now;
			if (live_signature(c) != sig) {
				logf_("health: the instance changed (apply): finding its backends "
				      "again\n");
				reload = 2;
			}
		}
		if (reload) {
			int why = reload;

			reload = 0;
			if (why == 1)
				logf_("health: SIGHUP: reading %s again\n", c->config);
			if (why == 1 && load_config(c))
				logf_("health: %s is not valid (above): checking on with the "
				      "configuration read before\n", c->config);
			c->wd_ms = kr_health_watchdog_ms(c->cfg);
			if (rebuild(c))
				return 1;
			sig = live_signature(c);
			free(pf);
			pf = NULL;
		}
		if (!pf && !(pf = calloc(c->n ? c->n : 1, sizeof(*pf))))
			return 1;
		for (uint32_t i = 0; i < c->n; i++) {
			struct target *t = &c->t[i];

			if (t->in_flight && now >= t->deadline_ms) {
				/* a reply already waiting counts (the checker itself may have
				 * been late to look) */
				drain_socket(c, t);
				if (t->in_flight)
					result(c, t, false, 0, "no answer within the timeout");
			}
			if (!t->in_flight && now >= t->next_ms) {
				t->seq++;
				t->fig.probes++;
				/* drop a late reply to an earlier probe */
				drain_socket(c, t);
				t->sent_ms = now_us();
				t->deadline_ms = now + t->h.timeout_ms;
				schedule(t, now);
				if (send_probe(c, t))
					result(c, t, false, 0, "could not send");
				else
					t->in_flight = true;
			}
			if (t->in_flight && t->deadline_ms < next)
				next = t->deadline_ms;
			if (!t->in_flight && t->next_ms < next)
				next = t->next_ms;
			pf[i] = (struct pollfd){ .fd = t->udp, .events = POLLIN };
		}
		if (c->wd_ms && last_wd + c->wd_ms < next)
			next = last_wd + c->wd_ms;
		if (now - last_beat >= BEAT_MS) {
			beat(c, started, rounds);
			last_beat = now;
		}
		r = poll(pf, c->n, next > now ? (int)(next - now) : 0);
		rounds++;
		for (uint32_t i = 0; r > 0 && i < c->n && !c->stale; i++) {
			if (pf[i].revents & POLLIN)
				drain_socket(c, &c->t[i]);
			if (pf[i].revents & POLLERR)
				drain_errors(c, &c->t[i]);
		}
	}
	free(pf);
	{
		struct kr_health_ck ck = {};
		__u32 zero = 0;

		/* stopped: status says "not running" at once, not after the heartbeat ages */
		if (c->f.open && c->f.hm.ck >= 0 && !bpf_map_lookup_elem(c->f.hm.ck, &zero, &ck)) {
			ck.pid = 0;
			bpf_map_update_elem(c->f.hm.ck, &zero, &ck, BPF_ANY);
		}
	}
	logf_("health: stopped\n");
	return 0;
}

/* One checker per instance: a second one says which process runs already. */
static int take_single(struct checker *c)
{
	pid_t pid;

	c->single_fd = kr_single_take("health", c->f.dir, &pid);
	if (c->single_fd >= 0)
		return 0;
	if (c->single_fd == -EEXIST)
		pr_warn("keyrouter: health: another health checker runs on instance '%s' (pid "
			"%d): one checker per instance (two would fight over the same backends); "
			"stop that one first\n", c->f.in.name, (int)pid);
	else
		pr_warn("keyrouter: health: couldn't take the checker's token of instance '%s': "
			"%s\n", c->f.in.name, strerror(-c->single_fd));
	return -1;
}

static int cmd_health(int argc, char **argv)
{
	const char *wait = NULL;
	struct checker c = { .pkt_fd = -1, .single_fd = -1 };
	const struct kr_opt opts[] = {
		KR_OPT_STR("config", 'c', &c.config),
		KR_OPT_STR("instance", 'i', &c.instance),
		KR_OPT_STR("pin-dir", 'p', &c.pin_dir),
		KR_OPT_STR("wait", 0, &wait),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .usage = help, .no_args = true };
	struct sigaction sa = { .sa_handler = on_signal };
	int rc = 1, first = kr_opts_parse(argc, argv, opts, &cmd);

	if (first < 0)
		return kr_opts_status(first);
	if (!c.config || (c.instance && c.pin_dir))
		return kr_usage_error("expected -c CONFIG (and at most one of --instance, "
				      "--pin-dir)");
	if (kr_lock_wait_opt(wait, DEFAULT_WAIT_MS))
		return 2;
	if (load_config(&c))
		return 1;
	if (!c.instance && !c.pin_dir && c.cfg->instance)
		c.instance = c.cfg->instance;
	c.wd_ms = kr_health_watchdog_ms(c.cfg);
	srandom((unsigned)(getpid() ^ time(NULL)));
	if (kr_followed_init(&c.f, c.instance, c.pin_dir))
		goto out_cfg;
	if (take_single(&c) || inst_open(&c))
		goto out;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = run(&c);
out:
	inst_close(&c);
	if (c.pkt_fd >= 0)
		close(c.pkt_fd);
	if (c.single_fd >= 0)
		close(c.single_fd);
out_cfg:
	kr_config_free(c.cfg);
	return rc;
}
KR_COMMAND(health, "health", "run the active health checker of an instance (probes through "
	   "the data path's forwarding)", cmd_health);
