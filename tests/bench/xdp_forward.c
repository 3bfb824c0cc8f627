// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Real forwarding throughput of the data path, against a bare forwarder in the same run and
 * the same topology (issue 14).  In a private network namespace of this process:
 *
 *   kr_gen (live frames) -> xfk_gen ===veth=== xfk_rtr [keyrouter.bpf.c kr_xdp, native]
 *                                                  \ redirect
 *                                                   xf_out ===veth=== xf_sink [kr_sink, native:
 *                                                  / redirect                  count, drop]
 *   kr_gen (live frames) -> xfb_gen ===veth=== xfb_rtr [kr_bare_fwd, native]
 *
 * The generator is BPF_PROG_TEST_RUN of tests/bpf/progs/kr_xdp_traffic.bpf.c's kr_gen with
 * BPF_F_TEST_XDP_LIVE_FRAMES: every frame gets a new 4-byte key in its UDP payload (a
 * counter: all frames of a run have distinct keys, far more than 64k) and leaves by XDP_TX
 * out of the generator veth, so it arrives at the router's veth as a real XDP frame.  The
 * router is the shipped program (the embedded object of `keyrouter`, through its
 * skeleton) with a `payload` service (whole 16-byte payload = key), l2 forwarding, 2048
 * backends of tests/data/bench2048.backends.txt all behind xf_out; two rings are published
 * at once: ring 0 = v2 point_multiple 160 (~1.49M points, UDP port 9000) and ring 1 = v2
 * point_multiple 1600 (~14.8M points, port 9001).  The bare forwarder
 * (tests/bpf/progs/kr_bare_fwd.bpf.c) parses Ethernet/IPv4/UDP, rewrites the MACs and
 * redirects to xf_out.
 *
 * Mpps = frames counted by the sink / the kernel's own time of the generator's test run
 * (the whole chain runs in the softirqs the generator's batches raise, on the generator's
 * CPU; the kernel's timer leaves out the time the generator is rescheduled between
 * batches, which on a shared machine is much of the wall time).  The wall-clock figures
 * are printed beside.
 * Beside the shipped program, two benchmark builds of the same source
 * (tests/bpf/progs/kr_dpbench.h), each on its own router veth with its own generator
 * veth and sharing the shipped program's maps, split keyrouter's cost in real forwarding
 * as bench_datapath does through test_run:
 *   (a) no ring lookup (backend id from the hash): the common path alone;
 *   (c) (a) + one read of a random word of the ring's image map: the least any lookup adds.
 *   (e) an index read (a random word of the bucket index) that the points read waits for,
 *       then (c): the least a lookup through an index adds (kr_dpbench_idxdep).
 * (c) and (e) again with the answer's backend at random among the rings' 2048 (the variants
 * route to 16 by default: their backend entries stay in the L1), and the shipped program
 * with a 16-point window (tests/bpf/progs/kr_win16.bpf.c), and (e) with the 32-point window
 * counted in place of the one word (kr_dpbench_idxwin), and the shipped program routing to 16
 * backends without the backend table (kr_hotbe, bpf/kr_ring.h KR_RING_BACKEND_ID); and to
 * split the rest (issue 27): (e) with one 64-byte line of points counted (a guess always
 * within a line of the answer: the least window; kr_dpbench_line), the same after an
 * index read from 8 times the index's region (an index fine enough for that guess;
 * kr_dpbench_line_idx8), and the shipped kr_image_find() alone (kr_dpbench_find).
 * Printed per ring: ns per frame of each path, and the lookup's own cost in real
 * forwarding, (full - (a)) / ((c) - (a)) in ns per frame, and (a) - bare: what the
 * common path adds to a frame.  (The variants also write a counter into the key, one
 * store the shipped program does not do.)
 * Every core (issue 27): the bare forwarder and keyrouter (pm 160 ring) also run on router
 * veths of 2 queues (xfb2_rtr, xfk2_rtr; xf_out/xf_sink have 2 as well), fed by a generator
 * thread pinned on each of 2 CPUs at once.  veth has no RSS for XDP frames: veth_xdp_xmit()
 * queues a frame on the peer's receive queue smp_processor_id() % queues, and the NAPI poll
 * of that queue (router, redirect, sink) runs on the CPU that scheduled it, so each CPU
 * carries its own flows end to end, as a NIC's RSS with one queue per CPU would place
 * them.  The 2-queue figure is the sum over the CPUs of frames the sink counted on that CPU
 * / that generator's kernel time; printed against the 1-queue path of the same run.  (On
 * this 2-core machine the generators take the CPUs the routers run on: the ratio measures
 * the whole chain on two CPUs, not a router beside an external generator.)
 * Rounds interleave the paths; each path's figure is its best round.  Every run checks
 * that all frames reached the sink, and prints what the routers decided (kr_counters).
 * No assertions on the figures.
 *
 *   build/bench/xdp_forward      KR_XDPFWD_FRAMES=N (default 1000000), KR_XDPFWD_ROUNDS=N (5),
 *                                KR_XDPFWD_BACKENDS=FILE
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kr_datapath_kern_user.h"
#include "backends_file.h"
#include "continuum.h"
#include "image.h"
#include "publish.h"
#include "ops_ports.h"
#include "../bpf/pktbuild.h"
#include "keyrouter.skel.h"
#include "kr_bare_fwd.skel.h"
#include "kr_dpbench_none.skel.h"
#include "kr_dpbench_limit.skel.h"
#include "kr_dpbench_idxdep.skel.h"
#include "kr_win16.skel.h"
#include "kr_dpbench_idxwin.skel.h"
#include "kr_hotbe.skel.h"
#include "kr_dpbench_line.skel.h"
#include "kr_dpbench_line_idx8.skel.h"
#include "kr_dpbench_find.skel.h"
#include "kr_xdp_traffic.skel.h"
#include "bench_args.h"
#include "bench_loadavg.h"

#define BATCH	64

enum { P_BARE, P_KR15, P_KR150, P_NONE, P_LIM15, P_LIM150, P_BARE2, P_KR2, P_IDX15, P_IDX150,
       P_W16_15, P_W16_150, P_LIMB150, P_IDXB150, P_IDXW15, P_IDXW150, P_HOT15, P_HOT150,
       P_LINE15, P_LINE150, P_LINE8_150, P_FIND150, NP };
static const char *pname[NP] = { "bare forwarder", "keyrouter, pm 160 ring",
				 "keyrouter, pm 1600 ring", "(a) no ring lookup",
				 "(c) 1 random read, pm 160", "(c) 1 random read, pm 1600",
				 "bare, 2 queues, 2 CPUs", "keyrouter pm 160, 2 queues",
				 "(e) index + 1 read, pm 160", "(e) index + 1 read, pm 1600",
				 "keyrouter window 16, pm 160", "keyrouter window 16, pm 1600",
				 "(c) 2048 backends, pm 1600", "(e) 2048 backends, pm 1600",
				 "(e) + window, pm 160", "(e) + window, pm 1600",
				 "keyrouter, 16 hot backends, 160", "keyrouter, 16 hot backends, 1600",
				 "(e) + one line, pm 160", "(e) + one line, pm 1600",
				 "index 8x + one line, pm 1600", "kr_image_find() alone, pm 1600" };
/* The paths on the 2-queue veths: a generator thread on each of NQ CPUs. */
#define NQ	2
static int two_queues(int p) { return p == P_BARE2 || p == P_KR2; }

static struct keyrouter_bpf *kr;
static struct kr_bare_fwd_bpf *bare;
static struct kr_dpbench_none_bpf *vnone;
static struct kr_dpbench_limit_bpf *vlim;
static struct kr_dpbench_idxdep_bpf *vidx, *vidxb;
static struct kr_dpbench_limit_bpf *vlimb;
static struct kr_win16_bpf *vw16;
static struct kr_dpbench_idxwin_bpf *vidxw;
static struct kr_hotbe_bpf *vhot;
static struct kr_dpbench_line_bpf *vline;
static struct kr_dpbench_line_idx8_bpf *vline8;
static struct kr_dpbench_find_bpf *vfind;
static struct kr_xdp_traffic_bpf *trf;
static int if_kgen, if_bgen, if_krtr, if_brtr, if_out, if_sink;
static int if_ngen, if_nrtr, if_lgen, if_lrtr, if_kgen2, if_krtr2, if_bgen2, if_brtr2;
static int if_egen, if_ertr, if_wgen, if_wrtr, if_cbgen, if_cbrtr, if_ebgen, if_ebrtr;
static int if_ewgen, if_ewrtr, if_hgen, if_hrtr, if_lngen, if_lnrtr, if_l8gen, if_l8rtr;
static int if_fdgen, if_fdrtr;
static int ncpus_online;
static uint8_t pkt[2][PKT_MAX];
static size_t pkt_len[2];
static uint32_t npoints[2];

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xdp_forward: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		die("command failed (%d): %s", rc, cmd);
}

static int ifindex(const char *name)
{
	int i = if_nametoindex(name);

	if (!i)
		die("no device %s", name);
	return i;
}

static void ifmac(const char *name, uint8_t mac[6])
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr))
		die("MAC of %s: %s", name, strerror(errno));
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void topology(void)
{
	if (unshare(CLONE_NEWNET))
		die("unshare(CLONE_NEWNET): %s", strerror(errno));
	/* no IPv6 autoconfiguration traffic reaching the sink */
	sh("sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1 && "
	   "ip link set lo up && "
	   "ip link add xfk_gen type veth peer name xfk_rtr && "
	   "ip link add xfb_gen type veth peer name xfb_rtr && "
	   "ip link add xf_out numtxqueues 2 numrxqueues 2 type veth peer name xf_sink "
	   "numtxqueues 2 numrxqueues 2 && "
	   "ip link add xfn_gen type veth peer name xfn_rtr && "
	   "ip link add xfl_gen type veth peer name xfl_rtr && "
	   "ip link add xfe_gen type veth peer name xfe_rtr && "
	   "ip link add xfw_gen type veth peer name xfw_rtr && "
	   "ip link add xfcb_gen type veth peer name xfcb_rtr && "
	   "ip link add xfeb_gen type veth peer name xfeb_rtr && "
	   "ip link add xfew_gen type veth peer name xfew_rtr && "
	   "ip link add xfh_gen type veth peer name xfh_rtr && "
	   "ip link add xfln_gen type veth peer name xfln_rtr && "
	   "ip link add xfl8_gen type veth peer name xfl8_rtr && "
	   "ip link add xffd_gen type veth peer name xffd_rtr && "
	   "ip link add xfk2_gen numtxqueues 2 numrxqueues 2 type veth peer name xfk2_rtr "
	   "numtxqueues 2 numrxqueues 2 && "
	   "ip link add xfb2_gen numtxqueues 2 numrxqueues 2 type veth peer name xfb2_rtr "
	   "numtxqueues 2 numrxqueues 2 && "
	   "for d in xfk_gen xfk_rtr xfb_gen xfb_rtr xf_out xf_sink xfn_gen xfn_rtr xfl_gen "
	   "xfl_rtr xfk2_gen xfk2_rtr xfb2_gen xfb2_rtr xfe_gen xfe_rtr xfw_gen xfw_rtr xfcb_gen xfcb_rtr "
	   "xfeb_gen xfeb_rtr xfew_gen xfew_rtr xfh_gen xfh_rtr xfln_gen xfln_rtr xfl8_gen "
	   "xfl8_rtr xffd_gen xffd_rtr; do ip link set $d up; done");
	if_kgen = ifindex("xfk_gen");
	if_bgen = ifindex("xfb_gen");
	if_krtr = ifindex("xfk_rtr");
	if_brtr = ifindex("xfb_rtr");
	if_out = ifindex("xf_out");
	if_sink = ifindex("xf_sink");
	if_ngen = ifindex("xfn_gen");
	if_nrtr = ifindex("xfn_rtr");
	if_lgen = ifindex("xfl_gen");
	if_lrtr = ifindex("xfl_rtr");
	if_kgen2 = ifindex("xfk2_gen");
	if_krtr2 = ifindex("xfk2_rtr");
	if_bgen2 = ifindex("xfb2_gen");
	if_brtr2 = ifindex("xfb2_rtr");
	if_egen = ifindex("xfe_gen");
	if_ertr = ifindex("xfe_rtr");
	if_wgen = ifindex("xfw_gen");
	if_wrtr = ifindex("xfw_rtr");
	if_cbgen = ifindex("xfcb_gen");
	if_cbrtr = ifindex("xfcb_rtr");
	if_ebgen = ifindex("xfeb_gen");
	if_ebrtr = ifindex("xfeb_rtr");
	if_ewgen = ifindex("xfew_gen");
	if_ewrtr = ifindex("xfew_rtr");
	if_hgen = ifindex("xfh_gen");
	if_hrtr = ifindex("xfh_rtr");
	if_lngen = ifindex("xfln_gen");
	if_lnrtr = ifindex("xfln_rtr");
	if_l8gen = ifindex("xfl8_gen");
	if_l8rtr = ifindex("xfl8_rtr");
	if_fdgen = ifindex("xffd_gen");
	if_fdrtr = ifindex("xffd_rtr");
}

/* Maps the variant builds share with the shipped program. */
static const char *shared_maps[] = { "kr_rings", "kr_ring_ctl", "kr_backends", "kr_services",
				     "kr_service_ports", "kr_port_wild", "kr_wild_svcs",
				     "kr_devices", "kr_device_macs", "kr_counters",
				     "kr_backend_stats", "kr_slot_stats" };

static void share_maps(struct bpf_object *obj, const char *what)
{
	for (size_t i = 0; i < sizeof(shared_maps) / sizeof(shared_maps[0]); i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, shared_maps[i]);
		struct bpf_map *src = bpf_object__find_map_by_name(kr->obj, shared_maps[i]);

		if (!m || !src || bpf_map__reuse_fd(m, bpf_map__fd(src)))
			die("%s: couldn't share map %s", what, shared_maps[i]);
	}
}

static void attach(int ifi, int prog_fd, const char *what)
{
	int err = bpf_xdp_attach(ifi, prog_fd, XDP_FLAGS_DRV_MODE, NULL);

	if (err)
		die("attach %s (native XDP): %s", what, strerror(-err));
}

static void load_programs(void)
{
	uint8_t out_mac[6], sink_mac[6];

	trf = kr_xdp_traffic_bpf__open_and_load();
	if (!trf)
		die("couldn't load kr_xdp_traffic");
	attach(if_sink, bpf_program__fd(trf->progs.kr_sink), "the sink");

	ifmac("xf_out", out_mac);
	ifmac("xf_sink", sink_mac);
	bare = kr_bare_fwd_bpf__open();
	if (!bare)
		die("couldn't open kr_bare_fwd");
	bare->rodata->bare_ifindex = if_out;
	memcpy((void *)bare->rodata->bare_dmac, sink_mac, 6);
	memcpy((void *)bare->rodata->bare_smac, out_mac, 6);
	if (kr_bare_fwd_bpf__load(bare))
		die("couldn't load kr_bare_fwd");
	attach(if_brtr, bpf_program__fd(bare->progs.kr_bare_fwd), "the bare forwarder");
	attach(if_brtr2, bpf_program__fd(bare->progs.kr_bare_fwd), "the bare forwarder (2q)");

	kr = keyrouter_bpf__open();
	if (!kr)
		die("couldn't open keyrouter.bpf.o");
	bpf_map__set_max_entries(kr->maps.kr_backends, 4096);
	bpf_map__set_max_entries(kr->maps.kr_backend_stats, 4096);
	if (keyrouter_bpf__load(kr))
		die("couldn't load keyrouter.bpf.o");
	attach(if_krtr, bpf_program__fd(kr->progs.kr_xdp), "keyrouter");
	attach(if_krtr2, bpf_program__fd(kr->progs.kr_xdp), "keyrouter (2q)");

	vnone = kr_dpbench_none_bpf__open();
	vlim = kr_dpbench_limit_bpf__open();
	vidx = kr_dpbench_idxdep_bpf__open();
	vlimb = kr_dpbench_limit_bpf__open();
	vidxb = kr_dpbench_idxdep_bpf__open();
	vw16 = kr_win16_bpf__open();
	vidxw = kr_dpbench_idxwin_bpf__open();
	vhot = kr_hotbe_bpf__open();
	vline = kr_dpbench_line_bpf__open();
	vline8 = kr_dpbench_line_idx8_bpf__open();
	vfind = kr_dpbench_find_bpf__open();
	if (!vnone || !vlim || !vidx || !vlimb || !vidxb || !vw16 || !vidxw || !vhot || !vline ||
	    !vline8 || !vfind)
		die("couldn't open the benchmark builds");
	share_maps(vnone->obj, "(a)");
	share_maps(vlim->obj, "(c)");
	share_maps(vidx->obj, "(e)");
	share_maps(vlimb->obj, "(c), 2048 backends");
	share_maps(vidxb->obj, "(e), 2048 backends");
	share_maps(vw16->obj, "window 16");
	share_maps(vidxw->obj, "(e) + window");
	share_maps(vhot->obj, "16 hot backends");
	share_maps(vline->obj, "(e) + one line");
	share_maps(vline8->obj, "index 8x + one line");
	share_maps(vfind->obj, "kr_image_find() alone");
	vlimb->data->kr_bench_backend_mask = 2047;	/* the 2048 backends (ids 1..2048) */
	vidxb->data->kr_bench_backend_mask = 2047;
	if (kr_dpbench_none_bpf__load(vnone) || kr_dpbench_limit_bpf__load(vlim) ||
	    kr_dpbench_idxdep_bpf__load(vidx) || kr_dpbench_limit_bpf__load(vlimb) ||
	    kr_dpbench_idxdep_bpf__load(vidxb) || kr_win16_bpf__load(vw16) ||
	    kr_dpbench_idxwin_bpf__load(vidxw) || kr_hotbe_bpf__load(vhot) ||
	    kr_dpbench_line_bpf__load(vline) || kr_dpbench_line_idx8_bpf__load(vline8) ||
	    kr_dpbench_find_bpf__load(vfind))
		die("couldn't load the benchmark builds");
	attach(if_cbrtr, bpf_program__fd(vlimb->progs.kr_xdp), "(c), 2048 backends");
	attach(if_ebrtr, bpf_program__fd(vidxb->progs.kr_xdp), "(e), 2048 backends");
	attach(if_wrtr, bpf_program__fd(vw16->progs.kr_xdp), "window 16");
	attach(if_ewrtr, bpf_program__fd(vidxw->progs.kr_xdp), "(e) + window");
	attach(if_hrtr, bpf_program__fd(vhot->progs.kr_xdp), "16 hot backends");
	attach(if_lnrtr, bpf_program__fd(vline->progs.kr_xdp), "(e) + one line");
	attach(if_l8rtr, bpf_program__fd(vline8->progs.kr_xdp), "index 8x + one line");
	attach(if_fdrtr, bpf_program__fd(vfind->progs.kr_xdp), "kr_image_find() alone");
	attach(if_nrtr, bpf_program__fd(vnone->progs.kr_xdp), "(a)");
	attach(if_lrtr, bpf_program__fd(vlim->progs.kr_xdp), "(c)");
	attach(if_ertr, bpf_program__fd(vidx->progs.kr_xdp), "(e)");
}

/* 2048 backends (ids 1..n), all behind xf_out; services: port 9000 -> ring 0 (pm 160),
 * port 9001 -> ring 1 (pm 1600); both rings published in slot 0. */
static void configure(const char *path)
{
	static const uint32_t pm[2] = { 160, 1600 };
	struct kr_backend_spec *spec = NULL;
	struct kr_err err = { "" };
	uint32_t n = 0, *ids;
	struct kr_device dev = { 0 };
	uint8_t sink_mac[6];

	if (kr_backends_load(path, &spec, &n, &err))
		die("%s", err.msg);
	if (n + 1 > 4096)
		die("%s: %u backends, this benchmark sizes its maps for 4095", path, n);
	ifmac("xf_sink", sink_mac);
	ifmac("xf_out", dev.mac);
	dev.flags = KR_DEVICE_F_MAC;
	/* as `keyrouter apply` writes a device: in both maps (ifindex < KR_DEVICE_SLOTS) */
	if (bpf_map_update_elem(bpf_map__fd(kr->maps.kr_devices), &if_out, &dev, BPF_ANY) ||
	    (if_out < KR_DEVICE_SLOTS &&
	     bpf_map_update_elem(bpf_map__fd(kr->maps.kr_device_macs), &if_out, &dev, BPF_ANY)))
		die("kr_devices: %s", strerror(errno));
	ids = calloc(n, sizeof(*ids));
	if (!ids)
		die("out of memory");
	for (uint32_t i = 0; i < n; i++) {
		struct kr_backend b = { .family = 4, .state = KR_BACKEND_UP, .ifindex = if_out };
		uint32_t id = i + 1;

		memcpy(b.addr, spec[i].addr.ip, 16);
		b.family = spec[i].addr.family;
		b.port = htons(spec[i].addr.port);
		memcpy(b.mac, sink_mac, 6);
		ids[i] = id;
		if (bpf_map_update_elem(bpf_map__fd(kr->maps.kr_backends), &id, &b, BPF_ANY))
			die("kr_backends: %s", strerror(errno));
	}
	{	/* as `keyrouter apply` marks it: no port has an exact-VIP service */
		static struct kr_service_ports sp;
		uint32_t zero = 0;

		memset(sp.no_exact, 0xff, sizeof(sp.no_exact));
		if (bpf_map_update_elem(bpf_map__fd(kr->maps.kr_service_ports), &zero, &sp, BPF_ANY))
			die("kr_service_ports: %s", strerror(errno));
	}
	for (uint32_t r = 0; r < 2; r++) {
		struct kr_service_key k = { .proto = 17, .port = htons(9000 + r) };
		struct kr_service s = { .ring_id = r, .key_type = KR_KEY_PAYLOAD,
					.fwd_mode = KR_FWD_L2 };
		struct kr_image img = { 0 };
		struct kr_ring *ring = NULL;
		uint64_t ctl = 0;

		if (kr_ring_build(&ring, spec, n, KR_RING_V2, pm[r], &err) ||
		    kr_image_encode(&img, ring, ids, &err) ||
		    kr_publish(bpf_map__fd(kr->maps.kr_rings), r, 0, img.buf, img.hdr->nchunks,
			       &err))
			die("ring pm %u: %s", pm[r], err.msg);
		npoints[r] = ring->npoints;
		kr_image_free(&img);
		kr_ring_free(ring);
		if (bpf_map_update_elem(bpf_map__fd(kr->maps.kr_ring_ctl), &r, &ctl, BPF_ANY) ||
		    bpf_map_update_elem(bpf_map__fd(kr->maps.kr_services), &k, &s, BPF_ANY))
			die("service %u: %s", r, strerror(errno));
	}
	/* the wildcard services' copies by port, as `keyrouter apply` writes them */
	if (kr_ops_port_wild_sync(bpf_map__fd(kr->maps.kr_port_wild),
				  bpf_map__fd(kr->maps.kr_wild_svcs),
				  bpf_map__fd(kr->maps.kr_services)))
		die("kr_port_wild: %s", strerror(errno));
	free(ids);
	free(spec);
}

static void build_packets(void)
{
	static const uint8_t pl[16] = "....xdp-forward.";

	for (int r = 0; r < 2; r++) {
		struct pkt_spec s = PKT_V4("198.51.100.7", 4242, "192.0.2.1", 9000 + r);

		s.payload = pl;
		s.plen = sizeof(pl);
		pkt_len[r] = pkt_build(&s, pkt[r]);
	}
}

/* Frames the sink counted on CPU cpu (-1: on all CPUs). */
static uint64_t sink_frames_on(int cpu)
{
	int ncpu = libbpf_num_possible_cpus();
	struct { uint64_t frames, bytes; } v[ncpu];
	uint32_t zero = 0;
	uint64_t sum = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(trf->maps.sink_stats), &zero, v))
		die("sink_stats: %s", strerror(errno));
	for (int i = 0; i < ncpu; i++)
		if (cpu < 0 || cpu == i)
			sum += v[i].frames;
	return sum;
}

static uint64_t sink_frames(void)
{
	return sink_frames_on(-1);
}

/* What the routers (the shipped program and the variants share kr_counters) decided: a
 * frame that was routed and still did not reach the sink was lost in a veth ring. */
static void print_counters(void)
{
	int ncpu = libbpf_num_possible_cpus();
	struct kr_counters v[ncpu], t = { 0 };
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(kr->maps.kr_counters), &zero, v))
		die("kr_counters: %s", strerror(errno));
	for (int i = 0; i < ncpu; i++) {
		t.seen += v[i].seen;
		t.routed += v[i].routed;
		t.bad_image += v[i].bad_image;
		t.fwd_error += v[i].fwd_error;
		t.walk_limit += v[i].walk_limit + v[i].all_down + v[i].no_ring;
	}
	printf("  routers: %llu frames seen, %llu routed, %llu bad image, %llu no route, %llu "
	       "forwarding errors\n", (unsigned long long)t.seen, (unsigned long long)t.routed,
	       (unsigned long long)t.bad_image, (unsigned long long)t.walk_limit,
	       (unsigned long long)t.fwd_error);
}

/* One generator thread of a 2-queue run: pinned to its CPU, so its frames go to that
 * CPU's receive queue of the router's veth (veth_xdp_xmit: smp_processor_id() % queues),
 * and the router's and the sink's NAPI polls run there too. */
struct gen_thread {
	pthread_t t;
	pthread_barrier_t *start;
	int cpu, ifindex, r, err;
	uint32_t frames, duration;	/* duration: the kernel's ns per frame */
};

static void *gen_run(void *arg)
{
	struct gen_thread *g = arg;
	struct xdp_md ctx = { .data_end = pkt_len[g->r], .ingress_ifindex = g->ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt[g->r], .data_size_in = pkt_len[g->r],
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = g->frames,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = BATCH);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(g->cpu, &set);
	g->err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(g->start);
	if (!g->err && bpf_prog_test_run_opts(bpf_program__fd(trf->progs.kr_gen), &o))
		g->err = errno;
	g->duration = o.duration;
	return NULL;
}

/* A 2-queue run: NQ generators at once, one per CPU, `frames` each; Mpps = the sum over
 * the CPUs of frames the sink counted on that CPU / that generator's kernel time. */
static double run_queues(int p, uint32_t frames, int64_t *lost, double *wall)
{
	struct gen_thread g[NQ];
	pthread_barrier_t start;
	uint64_t before[NQ], total_before = sink_frames(), got = 0;
	double t0, t1, mpps = 0;

	pthread_barrier_init(&start, NULL, NQ + 1);
	for (int i = 0; i < NQ; i++) {
		g[i] = (struct gen_thread){ .start = &start, .cpu = i, .r = 0, .frames = frames,
					    .ifindex = p == P_BARE2 ? if_bgen2 : if_kgen2 };
		before[i] = sink_frames_on(i);
		if (pthread_create(&g[i].t, NULL, gen_run, &g[i]))
			die("pthread_create: %s", strerror(errno));
	}
	pthread_barrier_wait(&start);
	t0 = now_s();
	for (int i = 0; i < NQ; i++)
		pthread_join(g[i].t, NULL);
	t1 = now_s();
	pthread_barrier_destroy(&start);
	for (int i = 0; i < NQ; i++) {
		uint64_t n = sink_frames_on(i) - before[i];

		if (g[i].err)
			die("live-frames test run on CPU %d: %s", i, strerror(g[i].err));
		if (g[i].duration == 0)
			die("the kernel reported no duration");
		got += n;
		mpps += n / ((double)g[i].duration * frames) * 1e3;
	}
	usleep(20000);
	*lost = (int64_t)frames * NQ - (int64_t)(sink_frames() - total_before);
	*wall = got / (t1 - t0) / 1e6;
	return mpps;
}

/* One run of `frames` live frames on path p; returns Mpps delivered to the sink: frames
 * counted by the sink / the kernel's time of the test run (bpf_test_timer: it leaves out
 * the time the generator is off the CPU between batches, which on a shared machine is
 * most of the wall time; the router and the sink run inside it, in the softirqs the
 * batches raise).  *wall = the same over wall time. */
static double run(int p, uint32_t frames, int64_t *lost, double *wall)
{
	int r = p == P_KR150 || p == P_LIM150 || p == P_IDX150 || p == P_W16_150 ||
		p == P_LIMB150 || p == P_IDXB150 || p == P_IDXW150 || p == P_HOT150 ||
		p == P_LINE150 || p == P_LINE8_150 || p == P_FIND150 ? 1 : 0;
	int gen = p == P_BARE ? if_bgen : p == P_NONE ? if_ngen :
		  p == P_LIM15 || p == P_LIM150 ? if_lgen :
		  p == P_IDX15 || p == P_IDX150 ? if_egen :
		  p == P_W16_15 || p == P_W16_150 ? if_wgen : p == P_LIMB150 ? if_cbgen :
		  p == P_IDXB150 ? if_ebgen : p == P_IDXW15 || p == P_IDXW150 ? if_ewgen :
		  p == P_HOT15 || p == P_HOT150 ? if_hgen :
		  p == P_LINE15 || p == P_LINE150 ? if_lngen : p == P_LINE8_150 ? if_l8gen :
		  p == P_FIND150 ? if_fdgen : if_kgen;
	struct xdp_md ctx = { .data_end = pkt_len[r], .ingress_ifindex = gen };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt[r], .data_size_in = pkt_len[r],
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = frames,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = BATCH);
	uint64_t before = sink_frames(), got;
	double t0, t1;

	if (two_queues(p))
		return run_queues(p, frames, lost, wall);
	t0 = now_s();
	if (bpf_prog_test_run_opts(bpf_program__fd(trf->progs.kr_gen), &o))
		die("live-frames test run: %s", strerror(errno));
	t1 = now_s();
	got = sink_frames() - before;
	usleep(20000);	/* frames still in a veth ring: counted for the loss check only */
	*lost = (int64_t)frames - (int64_t)(sink_frames() - before);
	*wall = got / (t1 - t0) / 1e6;
	if (o.duration == 0)
		die("the kernel reported no duration");
	return got / ((double)o.duration * frames) * 1e3;
}

int main(int argc, char **argv)
{
	bench_args(argc, argv, 0,
		   " [--help]\n"
		   "Real forwarding throughput: live frames through a veth into the router's native XDP,\n"
		   "redirected to a counting sink, against a bare forwarder in the same run and topology;\n"
		   "at ~1.5M and ~15M points.  Creates a private network namespace; needs root.\n"
		   "environment: KR_XDPFWD_FRAMES=N frames per run (default 1000000),\n"
		   "             KR_XDPFWD_ROUNDS=N rounds (default 5),\n"
		   "             KR_XDPFWD_BACKENDS=FILE (default tests/data/bench2048.backends.txt)\n");
	const char *fenv = getenv("KR_XDPFWD_FRAMES"), *renv = getenv("KR_XDPFWD_ROUNDS");
	const char *path = getenv("KR_XDPFWD_BACKENDS");
	uint32_t frames = fenv ? strtoul(fenv, NULL, 0) : 1000000;
	int rounds = renv ? atoi(renv) : 5;
	double best[NP] = { 0 }, all[NP][16], wall[NP][16];
	int64_t lost_total[NP] = { 0 };

	if (!path)
		path = "tests/data/bench2048.backends.txt";
	if (rounds < 1)
		rounds = 1;
	if (rounds > 16)
		rounds = 16;
	if (frames < 1000)
		frames = 1000;
	setvbuf(stdout, NULL, _IOLBF, 0);
	topology();
	load_programs();
	configure(path);
	build_packets();
	printf("real forwarding: live frames (BPF_PROG_TEST_RUN + BPF_F_TEST_XDP_LIVE_FRAMES, "
	       "XDP_TX) -> veth -> router, native XDP -> redirect -> veth -> sink (counts, "
	       "drops); %u frames per run, each with a new key; best of %d interleaved rounds\n",
	       frames, rounds);
	printf("rings: %u points (2048 backends, v2 pm 160), %u points (pm 1600)\n", npoints[0],
	       npoints[1]);
	bench_loadavg_print("before");
	ncpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus_online < NQ)
		printf("only %d CPU online: no 2-queue runs\n", ncpus_online);
	for (int i = 0; i < rounds; i++)
		for (int p = 0; p < NP; p++) {
			int64_t lost;

			if (two_queues(p) && ncpus_online < NQ)
				continue;
			all[p][i] = run(p, frames, &lost, &wall[p][i]);
			lost_total[p] += lost;
			if (all[p][i] > best[p])
				best[p] = all[p][i];
		}
	for (int p = 0; p < NP; p++) {
		if (two_queues(p) && ncpus_online < NQ)
			continue;
		printf("  %-26s %6.2f Mpps   (rounds:", pname[p], best[p]);
		for (int i = 0; i < rounds; i++)
			printf(" %.2f", all[p][i]);
		printf("; wall clock:");
		for (int i = 0; i < rounds; i++)
			printf(" %.2f", wall[p][i]);
		printf(")%s\n", lost_total[p] ? "" : "  all frames delivered");
		if (lost_total[p])
			printf("  WARNING: %s: %lld frames more sent than counted by the sink\n",
			       pname[p], (long long)lost_total[p]);
	}
	printf("  keyrouter / bare: %.2f at %u points (target >= 0.8), %.2f at %u points "
	       "(target >= 0.7)\n", best[P_KR15] / best[P_BARE], npoints[0],
	       best[P_KR150] / best[P_BARE], npoints[1]);
	{	/* ns per frame of the whole chain (generator, veths, router, sink) */
		double ns[NP];

		for (int p = 0; p < NP; p++)
			ns[p] = 1e3 / best[p];
		printf("  ns per frame: bare %.0f, (a) %.0f: the common path adds %.0f ns "
		       "((a) - bare)\n", ns[P_BARE], ns[P_NONE], ns[P_NONE] - ns[P_BARE]);
		for (int r = 0; r < 2; r++) {
			int pf = r ? P_KR150 : P_KR15, pl = r ? P_LIM150 : P_LIM15;

			int pe = r ? P_IDX150 : P_IDX15;

			printf("  %u points: full %.0f, (c) %.0f ns; lookup's own cost in real "
			       "forwarding: (full - (a)) / ((c) - (a)) = %+.0f / %+.0f ns = %.2f\n",
			       npoints[r], ns[pf], ns[pl], ns[pf] - ns[P_NONE],
			       ns[pl] - ns[P_NONE], (ns[pf] - ns[P_NONE]) / (ns[pl] - ns[P_NONE]));
			printf("  %u points: (e), an index read then the points read, %.0f ns: "
			       "((e) - (a)) / ((c) - (a)) = %.2f, the floor of an index-then-points "
			       "lookup; full - (e) = %+.0f ns\n", npoints[r], ns[pe],
			       (ns[pe] - ns[P_NONE]) / (ns[pl] - ns[P_NONE]), ns[pf] - ns[pe]);
		}
		printf("  %u points, the answer's backend read at random among 2048 (its state, "
		       "MAC, counters: what any lookup's answer costs): (c) %.0f, (e) %.0f ns; "
		       "full - (c) = %+.0f, full - (e) = %+.0f ns\n", npoints[1], ns[P_LIMB150],
		       ns[P_IDXB150], ns[P_KR150] - ns[P_LIMB150], ns[P_KR150] - ns[P_IDXB150]);
		printf("  (e) with the 32-point window counted in place of one word: %.0f / %.0f "
		       "ns: full - that = %+.0f / %+.0f ns at %u / %u points\n", ns[P_IDXW15],
		       ns[P_IDXW150], ns[P_KR15] - ns[P_IDXW15], ns[P_KR150] - ns[P_IDXW150],
		       npoints[0], npoints[1]);
		printf("  the full lookup routing to 16 hot backends (no backend table): %.0f / %.0f "
		       "ns: full - that = %+.0f / %+.0f ns\n", ns[P_HOT15], ns[P_HOT150],
		       ns[P_KR15] - ns[P_HOT15], ns[P_KR150] - ns[P_HOT150]);
		printf("  window of 16 points instead of 32: %.0f / %.0f ns against %.0f / %.0f "
		       "at %u / %u points\n", ns[P_W16_15], ns[P_W16_150], ns[P_KR15], ns[P_KR150],
		       npoints[0], npoints[1]);
		/* issue 27: the window against one line, a finer index, the rest of the stage */
		printf("  (e) with one line of points counted (a guess always within a line of "
		       "the answer): %.0f / %.0f ns, own cost %.2f / %.2f at %u / %u points; the "
		       "32-point window beyond one line %+.0f / %+.0f ns\n", ns[P_LINE15],
		       ns[P_LINE150], (ns[P_LINE15] - ns[P_NONE]) / (ns[P_LIM15] - ns[P_NONE]),
		       (ns[P_LINE150] - ns[P_NONE]) / (ns[P_LIM150] - ns[P_NONE]), npoints[0],
		       npoints[1], ns[P_IDXW15] - ns[P_LINE15], ns[P_IDXW150] - ns[P_LINE150]);
		printf("  %u points: an index 8x finer (its guess within a line) read, then one "
		       "line: %.0f ns, own cost %.2f; kr_image_find() alone %.0f ns, own cost %.2f; "
		       "the rest of the stage (full - find) %+.0f ns\n", npoints[1], ns[P_LINE8_150],
		       (ns[P_LINE8_150] - ns[P_NONE]) / (ns[P_LIM150] - ns[P_NONE]), ns[P_FIND150],
		       (ns[P_FIND150] - ns[P_NONE]) / (ns[P_LIM150] - ns[P_NONE]),
		       ns[P_KR150] - ns[P_FIND150]);
		printf("  lookup's own cost targets: <= 1.15 at %u points, <= 1.3 at %u\n",
		       npoints[0], npoints[1]);
	}
	printf("  keyrouter / (c), one random read of the ring: %.2f at %u points (target >= "
	       "0.95), %.2f at %u points (target >= 0.9)\n", best[P_KR15] / best[P_LIM15],
	       npoints[0], best[P_KR150] / best[P_LIM150], npoints[1]);
	if (ncpus_online >= NQ)
		printf("  2 queues (a generator and the chain on each of 2 CPUs) / 1 queue: bare "
		       "%.2f, keyrouter %.2f at %u points (target >= 1.8)\n",
		       best[P_BARE2] / best[P_BARE], best[P_KR2] / best[P_KR15], npoints[0]);
	print_counters();
	bench_loadavg_print("after");
	printf("xdp_forward: keyrouter %.2f Mpps, bare %.2f Mpps, ratio %.2f at 1.5M points; "
	       "vs one read %.2f at 1.5M, %.2f at 15M; 2 queues %.2f\n",
	       best[P_KR15], best[P_BARE], best[P_KR15] / best[P_BARE],
	       best[P_KR15] / best[P_LIM15], best[P_KR150] / best[P_LIM150],
	       ncpus_online >= NQ ? best[P_KR2] / best[P_KR15] : 0.0);
	return 0;
}
