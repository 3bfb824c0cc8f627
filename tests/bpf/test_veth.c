// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The data path attached for real: keyrouter.bpf.o on a veth, real datagrams from a client
 * namespace, a backend namespace that owns the VIP on its loopback.  For XDP (native and
 * generic) and TC (clsact ingress), forwarding l2 and ipip (IPv4 and IPv6 outer headers,
 * next hop from the fib; the backend strips them with tests/bpf/progs/decap.bpf.c, as the end-to-end
 * tests do on kernels without tunnel devices): datagrams to the service reach the
 * backend's stack (its Udp NoPorts counter: the frame carried the backend's MAC and the
 * VIP), the global and per-backend counters agree, and datagrams to another port are not
 * routed.
 *
 *   client ns: c0 10.77.0.2 --- r0 10.77.0.1 (keyrouter) | r1 10.78.0.1 --- b0 (backend ns,
 *                                                                           VIP 192.0.2.1 on lo)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tap.h"
#include "kr_datapath_kern_user.h"
#include "publish.h"
#include "ring_fixture.h"
#include "keyrouter.skel.h"

#define NPKT 20

static char ns_c[64], ns_b[64];
static struct keyrouter_bpf *skel;
static int ncpu;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc)
		DIAG("command failed (%d): %s", rc, cmd);
	return rc;
}

static void cleanup(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null",
		 ns_c, ns_b);
	if (system(cmd))
		return;
}

static int read_mac(const char *ns, const char *dev, uint8_t *mac)
{
	char cmd[256], buf[64];
	unsigned int m[6];
	FILE *f;
	int ok;

	snprintf(cmd, sizeof(cmd), "ip %s%s link show dev %s | awk '/link\\/ether/ { print $2 }'",
		 ns ? "-n " : "", ns ? ns : "", dev);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	ok = fgets(buf, sizeof(buf), f) && sscanf(buf, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2],
						  &m[3], &m[4], &m[5]) == 6;
	pclose(f);
	for (int i = 0; ok && i < 6; i++)
		mac[i] = m[i];
	return ok ? 0 : -1;
}

/* Udp NoPorts of the backend namespace: datagrams its stack accepted for a local address. */
static long backend_noports(void)
{
	char cmd[256], line[512];
	long v = -1, n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ip netns exec %s cat /proc/net/snmp", ns_b);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Udp: ", 5) && n++ == 1)
			sscanf(line, "Udp: %*s %ld", &v);
	pclose(f);
	return v;
}

static uint64_t counter(size_t off)
{
	struct kr_counters v[ncpu];
	uint32_t zero = 0;
	uint64_t s = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.kr_counters), &zero, v))
		return 0;
	for (int c = 0; c < ncpu; c++)
		s += *(uint64_t *)((char *)&v[c] + off);
	return s;
}

static uint64_t backend_packets(uint32_t id)
{
	struct kr_backend_stats v[ncpu];
	uint64_t s = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.kr_backend_stats), &id, v))
		return 0;
	for (int c = 0; c < ncpu; c++)
		s += v[c].packets;
	return s;
}

static int send_burst(uint16_t port)
{
	return sh("ip netns exec %s bash -c 'for i in $(seq %d); do echo -n key$i > "
		  "/dev/udp/192.0.2.1/%u; done'", ns_c, NPKT, port);
}

/* One service (port -> backend id) in one attach mode. */
static void run_service(const char *mode, const char *fwd, uint16_t port, uint32_t id)
{
	uint64_t routed = counter(offsetof(struct kr_counters, routed));
	uint64_t bp = backend_packets(id);
	long np = backend_noports();

	CHECK(send_burst(port) == 0, "%s %s: client sent %d datagrams to the service", mode, fwd,
	      NPKT);
	usleep(200 * 1000);
	CHECK_EQ_U(backend_noports() - np, NPKT, "%s %s: the backend's stack got all %d "
		   "(Udp NoPorts)", mode, fwd, NPKT);
	CHECK_EQ_U(counter(offsetof(struct kr_counters, routed)) - routed, NPKT,
		   "%s %s: kr_counters.routed", mode, fwd);
	CHECK_EQ_U(backend_packets(id) - bp, NPKT, "%s %s: kr_backend_stats[%u].packets", mode,
		   fwd, id);
}

static void run_mode(const char *mode)
{
	uint64_t nomatch = counter(offsetof(struct kr_counters, passed_nomatch));
	long np;

	run_service(mode, "l2", 9000, 1);
	run_service(mode, "ipip (IPv4 outer)", 9001, 2);
	run_service(mode, "ipip (IPv6 outer)", 9002, 3);
	np = backend_noports();
	CHECK(send_burst(9999) == 0, "%s: client sent %d datagrams to another port", mode, NPKT);
	usleep(200 * 1000);
	CHECK_EQ_U(backend_noports() - np, 0, "%s: none of those reached the backend", mode);
	CHECK(counter(offsetof(struct kr_counters, passed_nomatch)) - nomatch >= NPKT,
	      "%s: counted as passed_nomatch", mode);
}

static int setup(void)
{
	if (unshare(CLONE_NEWNET)) {
		perror("unshare");
		return -1;
	}
	snprintf(ns_c, sizeof(ns_c), "kr-dp-%d-c", getpid());
	snprintf(ns_b, sizeof(ns_b), "kr-dp-%d-b", getpid());
	atexit(cleanup);
	if (sh("ip netns add %s && ip netns add %s", ns_c, ns_b) ||
	    sh("ip link set lo up && ip link add r0 type veth peer name c0 netns %s && "
	       "ip link add r1 type veth peer name b0 netns %s", ns_c, ns_b) ||
	    sh("ip addr add 10.77.0.1/24 dev r0 && ip addr add 10.78.0.1/24 dev r1 && "
	       "ip -6 addr add fd78::1/64 dev r1 nodad && ip link set r0 up && ip link set r1 up && "
	       "sysctl -qw net.ipv4.conf.all.forwarding=1 net.ipv4.conf.r0.forwarding=1 "
	       "net.ipv6.conf.all.forwarding=1") ||
	    sh("ip -n %s link set lo up && ip -n %s addr add 10.77.0.2/24 dev c0 && "
	       "ip -n %s link set c0 up && ip -n %s route add 192.0.2.0/24 via 10.77.0.1 && "
	       "ip netns exec %s ethtool -K c0 tx off >/dev/null", ns_c, ns_c, ns_c, ns_c, ns_c) ||
	    sh("ip -n %s link set lo up && ip -n %s addr add 192.0.2.1/32 dev lo && "
	       "ip -n %s addr add 10.78.0.2/24 dev b0 && ip -n %s link set b0 up && "
	       "ip -n %s -6 addr add fd78::2/64 dev b0 nodad && "
	       "ip netns exec %s ethtool -K b0 gro on >/dev/null && "
	       "ip netns exec %s sysctl -qw net.ipv4.conf.all.rp_filter=0 "
	       "net.ipv4.conf.b0.rp_filter=0 net.ipv4.conf.lo.rp_filter=0 && "
	       "ip -n %s link set dev b0 xdp obj build/tests/progs/decap.bpf.o sec xdp",
	       ns_b, ns_b, ns_b, ns_b, ns_b, ns_b, ns_b, ns_b))
		return -1;
	return 0;
}

static int add_backend(uint32_t id, const char *addr, uint32_t ifindex, const uint8_t *mac)
{
	struct kr_backend be = { .state = KR_BACKEND_UP };

	be.family = strchr(addr, ':') ? 6 : 4;
	inet_pton(be.family == 6 ? AF_INET6 : AF_INET, addr, be.addr);
	be.ifindex = ifindex;
	memcpy(be.mac, mac, 6);
	return bpf_map_update_elem(bpf_map__fd(skel->maps.kr_backends), &id, &be, BPF_ANY);
}

/* Service on 192.0.2.1:port -> ring ring_id of one backend. */
static int add_service(uint16_t port, uint32_t ring_id, uint8_t fwd, uint32_t id)
{
	struct kr_service_key k = { .proto = 17, .family = 4 };
	struct kr_service svc = { .ring_id = ring_id, .key_type = KR_KEY_PAYLOAD, .fwd_mode = fwd };
	uint32_t hash = 0x80000000u;
	uint16_t bl = 0;
	struct fx_img im;
	struct kr_err err;

	k.port = htons(port);
	inet_pton(AF_INET, "192.0.2.1", k.addr);
	inet_pton(AF_INET, "10.78.0.1", svc.tun_src4);
	inet_pton(AF_INET6, "fd78::1", svc.tun_src6);
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.kr_services), &k, &svc, BPF_ANY))
		return -1;
	if (fx_encode(&im, &hash, &bl, 1, &id, 1) ||
	    kr_publish(bpf_map__fd(skel->maps.kr_rings), ring_id, 0, im.buf, im.nchunks, &err)) {
		DIAG("publish: %s", err.msg);
		return -1;
	}
	free(im.buf);
	return 0;
}

static int configure(void)
{
	uint32_t r1 = if_nametoindex("r1");
	uint8_t mac_b0[6];
	struct kr_device dev;

	memset(&dev, 0, sizeof(dev));
	if (!r1 || read_mac(ns_b, "b0", mac_b0) || read_mac(NULL, "r1", dev.mac) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.kr_devices), &r1, &dev, BPF_ANY))
		return -1;
	/* ipip: the next hop comes from the fib; its neighbour entry is permanent */
	if (sh("ip neigh add 10.78.0.2 lladdr %02x:%02x:%02x:%02x:%02x:%02x dev r1 nud permanent && "
	       "ip -6 neigh add fd78::2 lladdr %02x:%02x:%02x:%02x:%02x:%02x dev r1 nud permanent",
	       mac_b0[0], mac_b0[1], mac_b0[2], mac_b0[3], mac_b0[4], mac_b0[5],
	       mac_b0[0], mac_b0[1], mac_b0[2], mac_b0[3], mac_b0[4], mac_b0[5]))
		return -1;
	return add_backend(1, "10.78.0.2", r1, mac_b0) || add_backend(2, "10.78.0.2", 0, mac_b0) ||
	       add_backend(3, "fd78::2", 0, mac_b0) ||
	       add_service(9000, 3, KR_FWD_L2, 1) || add_service(9001, 4, KR_FWD_IPIP, 2) ||
	       add_service(9002, 5, KR_FWD_IPIP, 3);
}

int main(void)
{
	int r0, ret = 1;
	LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, tco, .handle = 1, .priority = 1);

	setvbuf(stdout, NULL, _IOLBF, 0);
	ncpu = libbpf_num_possible_cpus();
	if (setup()) {
		printf("not ok 1 - namespaces and veths (needs root, iproute2, ethtool)\n");
		return 1;
	}
	skel = keyrouter_bpf__open_and_load();
	if (!skel) {
		printf("not ok 1 - load keyrouter.bpf.o\n");
		return 1;
	}
	if (configure()) {
		printf("not ok 1 - configure service, backend, ring\n");
		goto out;
	}
	r0 = if_nametoindex("r0");
	CHECK(bpf_xdp_attach(r0, bpf_program__fd(skel->progs.kr_xdp), XDP_FLAGS_DRV_MODE, NULL) == 0,
	      "xdp native attach on r0");
	run_mode("xdp native");
	bpf_xdp_detach(r0, XDP_FLAGS_DRV_MODE, NULL);
	CHECK(bpf_xdp_attach(r0, bpf_program__fd(skel->progs.kr_xdp), XDP_FLAGS_SKB_MODE, NULL) == 0,
	      "xdp generic attach on r0");
	run_mode("xdp generic");
	bpf_xdp_detach(r0, XDP_FLAGS_SKB_MODE, NULL);
	hook.ifindex = r0;
	tco.prog_fd = bpf_program__fd(skel->progs.kr_tc);
	CHECK(bpf_tc_hook_create(&hook) == 0 && bpf_tc_attach(&hook, &tco) == 0,
	      "tc clsact ingress attach on r0");
	run_mode("tc ingress");
	ret = 0;
out:
	keyrouter_bpf__destroy(skel);
	return tap_done() || ret;
}
