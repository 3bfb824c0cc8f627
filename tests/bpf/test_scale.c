// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The seeds' scale (issue 16): 64 rings over the 2048 servers of
 * tests/data/bench2048.backends.txt (each ring a different subset of ~1920 with its own
 * weights, v2 point_multiple 160: ~1.4M points per ring), services on 4 of them, loaded on
 * a veth in a namespace of its own and applied with the real tool.  Then, against the
 * pinned maps and the kernel:
 *   - one backend id per server: 2048 ids in kr_backends for 2048 servers, each ring's
 *     image backend table = its config order mapped to those ids (MAC included);
 *   - `backend set ADDR down` changes exactly one kr_backends entry, and in every ring that
 *     has the server its keys move where a ring built without it sends them (the kernel's
 *     ring stage on the instance's own maps, bpf/kr_ring.h through BPF_PROG_TEST_RUN:
 *     tests/bpf/progs/kr_ring_test.bpf.c with the pinned maps reused; and, for the 4
 *     rings with a service, UDP packets through the attached program itself, checked by
 *     the MAC they leave with), the other keys and the rings without it stay;
 *   - an apply that changes 8 rings publishes those 8 (new image maps) and leaves the
 *     other 56 images, every id and the runtime down state as they were.
 * Prints "# seed scale: rings 64 servers 2048 backend ids N points P kernel MiB M apply S s"
 * (P: image points of the 64 rings; M: their images plus the backend-indexed maps, as the
 * kernel accounts them; S: wall time of the apply that published the 64 rings).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tap.h"
#include "config.h"
#include "continuum.h"
#include "ops.h"
#include "ops_kernel.h"
#include "kr_ring_test_kern_user.h"
#include "kr_ring_test.skel.h"
#include "pktbuild.h"

#define NRINGS		64
#define PM		160
#define NCHANGE		8
#define KEYS_PER_SIDE	8
#define NSVC		4	/* services s0..s3 on rings r00..r03, payload key, l2 */
#define PKT_KEYS	4	/* packets per side and service */

static char ns[64], dir[128], tool[512];

static int sh(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int sh(char *out, size_t len, const char *fmt, ...)
{
	char cmd[2048];
	size_t n = 0;
	va_list ap;
	FILE *f;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (out && len) {
		size_t r;

		while (n + 1 < len && (r = fread(out + n, 1, len - 1 - n, f)) > 0)
			n += r;
		out[n] = 0;
	}
	{
		char sink[4096];

		while (fread(sink, 1, sizeof(sink), f) > 0)
			;
	}
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the instance as the kernel holds it ------------------------------------------- */

struct server_id {
	struct kr_sockaddr a;
	uint32_t id;
};

static int cmp_sid(const void *x, const void *y)
{
	const struct server_id *p = x, *q = y;
	int c = p->a.family - q->a.family;

	if (!c)
		c = memcmp(p->a.ip, q->a.ip, 16);
	if (!c)
		c = (int)p->a.port - (int)q->a.port;
	return c;
}

struct view {
	struct kr_backend *be;		/* [max] kr_backends, entry by entry */
	struct server_id *sid;		/* ids in use, sorted by address */
	uint32_t nids, max;
};

static int view_read(const struct kr_ops_maps *m, struct view *v)
{
	v->max = m->backends_max;
	v->be = calloc(v->max, sizeof(*v->be));
	v->sid = calloc(v->max, sizeof(*v->sid));
	v->nids = 0;
	for (uint32_t id = 0; id < v->max; id++) {
		if (bpf_map_lookup_elem(m->backends, &id, &v->be[id]))
			return -errno;
		if (!v->be[id].family || v->be[id].state == KR_BACKEND_UNUSED)
			continue;
		v->sid[v->nids].a.family = v->be[id].family;
		v->sid[v->nids].a.port = ntohs(v->be[id].port);
		memcpy(v->sid[v->nids].a.ip, v->be[id].addr, 16);
		v->sid[v->nids++].id = id;
	}
	qsort(v->sid, v->nids, sizeof(*v->sid), cmp_sid);
	return 0;
}

static void view_free(struct view *v)
{
	free(v->be);
	free(v->sid);
}

static int64_t id_of(const struct view *v, const struct kr_sockaddr *a)
{
	struct server_id k = { .a = *a }, *p;

	memset(k.a.ip + (a->family == 4 ? 4 : 16), 0, a->family == 4 ? 12 : 0);
	p = bsearch(&k, v->sid, v->nids, sizeof(*v->sid), cmp_sid);
	return p ? (int64_t)p->id : -1;
}

/* distinct addresses among the ids (a server with two ids would count once) */
static uint32_t distinct_addrs(const struct view *v)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < v->nids; i++)
		n += !i || cmp_sid(&v->sid[i - 1], &v->sid[i]);
	return n;
}

/* ---- the kernel's ring stage on the instance's maps -------------------------------- */

static int prog_fd;

static int route(uint32_t ring_id, uint32_t hash, uint32_t *id)
{
	struct kr_ring_test_pkt in = { .ring_id = ring_id, .key_hash = hash }, out;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &in, .data_size_in = sizeof(in),
		    .data_out = &out, .data_size_out = sizeof(out), .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &o) || o.retval != XDP_TX)
		return -1;
	*id = out.route.backend_id;
	return out.reason;
}

/* ---- real packets through the attached program ------------------------------------- */

static int xdp_fd = -1;

/* A UDP packet to service k (10.99.0.1:7000+k) whose payload is the key, through the
 * program attached to the instance's interface (BPF_PROG_TEST_RUN): its verdict and the
 * destination MAC it leaves with (l2: the backend's). */
static int send_key(int k, const char *key, uint8_t mac[6])
{
	struct pkt_spec sp = PKT_V4("10.98.0.2", 40000 + k, "10.99.0.1", 7000 + k);
	uint8_t in[PKT_MAX], out[PKT_MAX];
	size_t len;

	sp.payload = (const uint8_t *)key;
	sp.plen = strlen(key);
	len = pkt_build(&sp, in);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (uint32_t)len,
		    .data_out = out, .data_size_out = PKT_MAX, .repeat = 1);
	if (bpf_prog_test_run_opts(xdp_fd, &o) || o.retval != XDP_TX)
		return -1;
	memcpy(mac, out, 6);
	return 0;
}

struct pkeys {
	char key[2 * PKT_KEYS][32];
	bool of_s[2 * PKT_KEYS];
	uint8_t before[2 * PKT_KEYS][6];
	uint32_t n;
};

/* ---- userspace rings of the configuration ------------------------------------------ */

static struct kr_ring *build(const struct kr_cfg_ring *cr, const struct kr_sockaddr *without)
{
	struct kr_backend_spec *spec = calloc(cr->nbackends, sizeof(*spec));
	struct kr_err err = {};
	struct kr_ring *r = NULL;
	uint32_t n = 0;

	for (uint32_t i = 0; i < cr->nbackends; i++) {
		if (without && !cmp_sid(&(struct server_id){ .a = cr->backends[i].addr },
					&(struct server_id){ .a = *without }))
			continue;
		spec[n].addr = cr->backends[i].addr;
		spec[n++].weight = cr->backends[i].weight;
	}
	if (kr_ring_build(&r, spec, n, cr->format, cr->point_multiple, &err))
		fprintf(stderr, "ring %s: %s\n", cr->name, err.msg);
	free(spec);
	return r;
}

/* The config MAC of the server at address a in ring cr. */
static bool mac_of(const struct kr_cfg_ring *cr, const struct kr_sockaddr *a, const uint8_t *mac)
{
	for (uint32_t i = 0; i < cr->nbackends; i++)
		if (!cmp_sid(&(struct server_id){ .a = cr->backends[i].addr },
			     &(struct server_id){ .a = *a }))
			return !memcmp(cr->backends[i].mac, mac, 6);
	return false;
}

static uint64_t rnd_state = 0x5ca1e16;

static uint32_t rnd32(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state >> 11);
}

struct probe {
	uint32_t n, hash[2 * KEYS_PER_SIDE], before[2 * KEYS_PER_SIDE];
	bool of_s[2 * KEYS_PER_SIDE];
	int has_s;
};

int main(void)
{
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	char tmp[] = "/tmp/kr-scale.XXXXXX", buf[1 << 16], saddr[KR_SOCKADDR_STRLEN];
	struct kr_config *cfg = NULL, *cfg2 = NULL;
	struct kr_ring_test_bpf *skel = NULL;
	struct probe pr[NRINGS] = {};
	struct pkeys pk[NSVC] = {};
	int ring_id[NRINGS], rc, s_index = -1;
	__u32 map_id[NRINGS];
	struct view v = {}, v2 = {}, v3 = {};
	struct kr_ops_maps m = { .backends = -1 };
	struct kr_inst in;
	struct kr_sockaddr S = {};
	uint64_t points = 0, mem = 0;
	double t_apply = 0;
	char *errs = NULL;

	if (geteuid()) {
		printf("ok 1 # SKIP needs root\n1..1\n");
		return 0;
	}
	snprintf(tool, sizeof(tool), "%s/keyrouter", out);
	if (access(tool, X_OK) || access("/usr/bin/python3", X_OK)) {
		printf("ok 1 # SKIP needs %s and /usr/bin/python3\n1..1\n", tool);
		return 0;
	}
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(ns, sizeof(ns), "kr-scale-%d", (int)getpid());
	snprintf(dir, sizeof(dir), "/sys/fs/bpf/keyrouter/%s", ns);

	/* the configurations: 64 rings, and the same with rings 0..7 changed */
	rc = sh(buf, sizeof(buf), "/usr/bin/python3 tests/lib/scale_config.py rings %d %d "
		"%s/a.json && /usr/bin/python3 tests/lib/scale_config.py rings %d %d %s/b.json "
		"--change %d && echo '{ \"rings\": [ { \"name\": \"boot\", \"format\": \"v2\", "
		"\"point_multiple\": 1, \"backends\": [ { \"address\": \"192.0.2.1:1\", \"mac\": "
		"\"02:00:00:00:00:01\" } ] } ] }' > %s/boot.json 2>&1", NRINGS, PM, tmp, NRINGS,
		PM, tmp, NCHANGE, tmp);
	CHECK(rc == 0, "configurations written (%d rings, point_multiple %d)", NRINGS, PM);
	snprintf(buf, sizeof(buf), "%s/a.json", tmp);
	cfg = kr_config_load(buf, &errs);
	snprintf(buf, sizeof(buf), "%s/b.json", tmp);
	cfg2 = kr_config_load(buf, &errs);
	if (!cfg || !cfg2 || cfg->nrings != NRINGS) {
		fprintf(stderr, "%s", errs ? errs : "config\n");
		goto out;
	}

	/* load a one-backend ring, then time the apply of the 64 rings */
	rc = sh(buf, sizeof(buf), "ip netns add %s && ip -n %s link add v0 type veth peer name "
		"v1 && ip -n %s link set v0 up && ip -n %s link set v1 up && nsenter "
		"--net=/run/netns/%s %s load v0 -c %s/boot.json --mode generic --instance %s 2>&1",
		ns, ns, ns, ns, ns, tool, tmp, ns);
	CHECK(rc == 0, "loaded on a veth in namespace %s", ns);
	if (rc) {
		printf("# %s\n", buf);
		goto out;
	}
	t_apply = now_s();
	rc = sh(buf, sizeof(buf), "nsenter --net=/run/netns/%s %s apply -c %s/a.json --instance "
		"%s 2>&1", ns, tool, tmp, ns);
	t_apply = now_s() - t_apply;
	CHECK(rc == 0 && strstr(buf, "rings 64 published") &&
	      strstr(buf, "backends 2048 added"), "apply publishes 64 rings, 2048 backends");
	if (rc) {
		printf("# %s\n", buf + (strlen(buf) > 2000 ? strlen(buf) - 2000 : 0));
		goto out;
	}

	/* the pinned maps (no lock taken: the tool's commands take it) */
	if (kr_ops_inst_path(&in, ns, NULL) || kr_ops_maps_open(&in, &m))
		goto out;
	snprintf(buf, sizeof(buf), "%s/%s", dir, KR_OPS_MAP_RINGS);
	in.rings_fd = bpf_obj_get(buf);
	for (int r = 0; r < NRINGS; r++)
		ring_id[r] = kr_ops_ring_find(&in, cfg->rings[r].name);
	if (view_read(&m, &v))
		goto out;

	/* one backend id per server */
	CHECK_EQ_U(v.nids, 2048, "2048 backend ids in kr_backends for 2048 servers");
	CHECK_EQ_U(distinct_addrs(&v), v.nids, "no server has two ids");
	{
		uint32_t bad = 0, badmac = 0, in_rings = 0;

		for (int r = 0; r < NRINGS; r++) {
			const struct kr_cfg_ring *cr = &cfg->rings[r];
			struct kr_ops_slot s = {};
			__u64 ctl = 0;

			if (ring_id[r] < 0 || kr_ops_ctl_read(&m, ring_id[r], &ctl) ||
			    kr_ops_slot_read(&m, ring_id[r], kr_ctl_active(ctl), true, &s) ||
			    !s.present || s.hdr.nbackends != cr->nbackends) {
				bad++;
				continue;
			}
			in_rings++;
			map_id[r] = s.map_id;
			points += s.hdr.npoints;
			mem += s.memlock;
			for (uint32_t i = 0; i < cr->nbackends; i++) {
				int64_t id = id_of(&v, &cr->backends[i].addr);

				bad += id < 0 || s.bt[i] != (uint32_t)id;
				badmac += id >= 0 && memcmp(v.be[id].mac, cr->backends[i].mac, 6);
			}
			kr_ops_slot_free(&s);
		}
		CHECK(in_rings == NRINGS && !bad && !badmac, "every ring's backend table is its "
		      "config order mapped to the servers' ids (%u rings, %u wrong ids, %u wrong "
		      "MACs)", in_rings, bad, badmac);
	}
	mem += kr_ops_fd_memlock(m.backends) + kr_ops_fd_memlock(m.backend_stats) +
	       (m.members >= 0 ? kr_ops_fd_memlock(m.members) : 0);

	/* the kernel's ring stage on the instance's own maps */
	skel = kr_ring_test_bpf__open();
	if (!skel || bpf_map__reuse_fd(skel->maps.kr_rings, m.rings) ||
	    bpf_map__reuse_fd(skel->maps.kr_ring_ctl, m.ctl) ||
	    bpf_map__reuse_fd(skel->maps.kr_backends, m.backends) ||
	    (m.members >= 0 && bpf_map__reuse_fd(skel->maps.kr_subset_members, m.members)) ||
	    kr_ring_test_bpf__load(skel)) {
		CHECK(0, "ring stage program loaded on the instance's maps");
		goto out;
	}
	prog_fd = bpf_program__fd(skel->progs.kr_ring_test);
	{	/* the program `load` attached, by the id it recorded */
		struct kr_ops_meta meta = {};
		__u32 zero = 0;
		int mfd;

		snprintf(buf, sizeof(buf), "%s/%s", dir, KR_OPS_MAP_META);
		mfd = bpf_obj_get(buf);
		if (mfd >= 0 && !bpf_map_lookup_elem(mfd, &zero, &meta))
			xdp_fd = bpf_prog_get_fd_by_id(meta.prog_id);
		if (mfd >= 0)
			close(mfd);
		CHECK(xdp_fd >= 0, "the attached program (id %u)", meta.prog_id);
	}

	/* the server to mark down: in most rings but not all */
	{
		uint32_t best = 0;

		for (uint32_t k = 0; k < v.nids; k++) {
			uint32_t n = 0;

			for (int r = 0; r < NRINGS; r++)
				for (uint32_t i = 0; i < cfg->rings[r].nbackends; i++)
					n += !cmp_sid(&(struct server_id){ .a = cfg->rings[r].backends[i].addr },
						      &v.sid[k]);
			if (n < NRINGS && n > best) {
				best = n;
				S = v.sid[k].a;
				s_index = (int)k;
			}
			if (best >= NRINGS - 2)
				break;
		}
	}
	kr_sockaddr_format(&S, saddr);

	/* keys of every ring: points of S (their hash is the point's), and random ones */
	{
		uint32_t bad = 0, nprobe = 0, rings_s = 0;

		for (int r = 0; r < NRINGS; r++) {
			const struct kr_cfg_ring *cr = &cfg->rings[r];
			struct kr_ring *R = build(cr, NULL);
			int64_t sl = -1;

			if (!R) {
				bad++;
				continue;
			}
			for (uint32_t i = 0; i < cr->nbackends; i++)
				if (!cmp_sid(&(struct server_id){ .a = cr->backends[i].addr },
					     &(struct server_id){ .a = S }))
					sl = i;
			pr[r].has_s = sl >= 0;
			rings_s += pr[r].has_s;
			{	/* KEYS_PER_SIDE of its points, spread over the ring */
				uint32_t ns_ = 0, step, seen = 0;

				for (uint32_t k = 0; sl >= 0 && k < R->npoints; k++)
					ns_ += R->backend[k] == sl;
				step = ns_ / KEYS_PER_SIDE ? ns_ / KEYS_PER_SIDE : 1;
				for (uint32_t k = 0; ns_ && k < R->npoints &&
				     pr[r].n < KEYS_PER_SIDE; k++) {
					if (R->backend[k] != sl || seen++ % step)
						continue;
					pr[r].of_s[pr[r].n] = true;
					pr[r].hash[pr[r].n++] = R->hash[k];
				}
			}
			for (uint32_t got = 0; got < KEYS_PER_SIDE; ) {
				uint32_t h = rnd32();

				if (R->backend[kr_ring_lower_bound(R, h)] == sl)
					continue;
				pr[r].hash[pr[r].n++] = h;
				got++;
			}
			for (uint32_t k = 0; k < pr[r].n; k++) {
				uint32_t b = R->backend[kr_ring_lower_bound(R, pr[r].hash[k])], id;
				int64_t want = id_of(&v, &cr->backends[b].addr);

				nprobe++;
				if (route(ring_id[r], pr[r].hash[k], &id) || id != want)
					bad++;
				pr[r].before[k] = id;
			}
			/* rings with a service: payload keys of S and of others, as packets */
			for (uint32_t n = 0, got_s = sl >= 0 ? 0 : PKT_KEYS, got_o = 0;
			     r < NSVC && n < 2000000 && (got_s < PKT_KEYS || got_o < PKT_KEYS);
			     n++) {
				struct pkeys *q = &pk[r];
				char key[32];
				uint32_t b;

				snprintf(key, sizeof(key), "key-%d-%u", r, n);
				b = R->backend[kr_ring_lower_bound(R, kr_key_hash(key, strlen(key)))];
				if ((b == sl && got_s >= PKT_KEYS) || (b != sl && got_o >= PKT_KEYS))
					continue;
				got_s += b == sl;
				got_o += b != sl;
				q->of_s[q->n] = b == sl;
				memcpy(q->key[q->n], key, sizeof(key));
				if (send_key(r, key, q->before[q->n]) ||
				    memcmp(q->before[q->n], cr->backends[b].mac, 6))
					bad++;
				q->n++;
				nprobe++;
			}
			kr_ring_free(R);
		}
		uint32_t npk = pk[0].n + pk[1].n + pk[2].n + pk[3].n;

		CHECK(!bad, "kernel routes %u keys of 64 rings to the servers' ids, and %u "
		      "packets to the 4 services reach the servers' MACs (%u wrong); %s (id %u) "
		      "is in %u rings", nprobe - npk, npk, bad, saddr,
		      s_index >= 0 ? v.sid[s_index].id : 0, rings_s);
	}

	/* backend set: one kr_backends write */
	rc = sh(buf, sizeof(buf), "%s backend set %s down --instance %s 2>&1", tool, saddr, ns);
	CHECK(rc == 0, "backend set %s down: %.*s", saddr, (int)strcspn(buf, "\n"), buf);
	if (view_read(&m, &v2))
		goto out;
	{
		uint32_t changed = 0, which = 0;

		for (uint32_t id = 0; id < v.max; id++)
			if (memcmp(&v.be[id], &v2.be[id], sizeof(v.be[id]))) {
				changed++;
				which = id;
			}
		CHECK(changed == 1 && which == v.sid[s_index].id &&
		      v2.be[which].state == KR_BACKEND_DOWN,
		      "exactly one kr_backends entry changed (%u): the server's, now down",
		      changed);
	}
	{
		uint32_t bad = 0, moved = 0, stayed = 0, rings_moved = 0, rings_s = 0, pkts = 0;

		for (int r = 0; r < NRINGS; r++) {
			struct kr_ring *R = pr[r].has_s ? build(&cfg->rings[r], &S) : NULL;
			uint32_t mv = 0;

			rings_s += pr[r].has_s;
			for (uint32_t k = 0; k < pr[r].n; k++) {
				uint32_t id;

				if (route(ring_id[r], pr[r].hash[k], &id)) {
					bad++;
					continue;
				}
				if (!pr[r].of_s[k]) {
					bad += id != pr[r].before[k];
					stayed += id == pr[r].before[k];
					continue;
				}
				/* where a ring built without the server sends the key */
				if (!R || id != id_of(&v, &R->backends[R->backend[
						kr_ring_lower_bound(R, pr[r].hash[k])]].addr)) {
					bad++;
					continue;
				}
				mv += id != pr[r].before[k];
			}
			for (uint32_t k = 0; r < NSVC && k < pk[r].n; k++) {
				uint8_t mac[6];
				const char *key = pk[r].key[k];

				if (send_key(r, key, mac)) {
					bad++;
					continue;
				}
				if (!pk[r].of_s[k]) {
					bad += !!memcmp(mac, pk[r].before[k], 6);
					stayed += !memcmp(mac, pk[r].before[k], 6);
					pkts++;
					continue;
				}
				if (!R || !mac_of(&cfg->rings[r], &R->backends[R->backend[
					kr_ring_lower_bound(R, kr_key_hash(key, strlen(key)))]].addr, mac)) {
					bad++;
					continue;
				}
				moved += !!memcmp(mac, pk[r].before[k], 6);
				pkts++;
			}
			moved += mv;
			rings_moved += mv > 0;
			if (R)
				kr_ring_free(R);
		}
		uint32_t spk = 0;

		for (int r = 0; r < NSVC; r++)
			spk += pr[r].has_s ? PKT_KEYS : 0;
		CHECK(!bad && rings_moved == rings_s && pkts == NSVC * PKT_KEYS + spk &&
		      moved == rings_s * KEYS_PER_SIDE + spk,
		      "after one write: %u keys of %s moved in all %u rings that have it (%u of "
		      "them packets through the attached program), to where rings built without "
		      "it send them; %u other keys stayed (%u wrong)", moved, saddr, rings_moved,
		      spk, stayed, bad);
	}

	/* an apply changing 8 rings: only those 8 are published */
	rc = sh(buf, sizeof(buf), "nsenter --net=/run/netns/%s %s apply -c %s/b.json --instance "
		"%s 2>&1", ns, tool, tmp, ns);
	CHECK(rc == 0 && strstr(buf, "rings 8 published, 56 unchanged") &&
	      strstr(buf, "backends 0 added, 0 changed, 0 released, 2048 unchanged"),
	      "apply of 8 changed rings: \"rings 8 published, 56 unchanged\"");
	if (view_read(&m, &v3))
		goto out;
	{
		uint32_t same = 0, changed = 0, bad = 0;

		for (int r = 0; r < NRINGS; r++) {
			struct kr_ops_slot s = {};
			__u64 ctl = 0;

			if (kr_ops_ctl_read(&m, ring_id[r], &ctl) ||
			    kr_ops_slot_read(&m, ring_id[r], kr_ctl_active(ctl), false, &s) ||
			    !s.present) {
				bad++;
				continue;
			}
			if (r < NCHANGE)
				changed += s.map_id != map_id[r];
			else
				same += s.map_id == map_id[r];
			kr_ops_slot_free(&s);
		}
		CHECK(!bad && changed == NCHANGE && same == NRINGS - NCHANGE,
		      "new images for the %u changed rings, the same image maps for %u others",
		      changed, same);
		CHECK(v3.nids == v.nids && !memcmp(v3.sid, v.sid, v.nids * sizeof(*v.sid)) &&
		      v3.be[v.sid[s_index].id].state == KR_BACKEND_DOWN,
		      "every server keeps its id; %s stays down (runtime state)", saddr);
	}
	{	/* servers: distinct addresses in the configuration */
		struct view c = {};
		uint32_t total = 0;

		for (int r = 0; r < NRINGS; r++)
			total += cfg->rings[r].nbackends;
		c.sid = calloc(total, sizeof(*c.sid));
		for (int r = 0; c.sid && r < NRINGS; r++)
			for (uint32_t i = 0; i < cfg->rings[r].nbackends; i++)
				c.sid[c.nids++].a = cfg->rings[r].backends[i].addr;
		if (c.sid)
			qsort(c.sid, c.nids, sizeof(*c.sid), cmp_sid);
		printf("# seed scale: rings %d servers %u backend ids %u points %llu kernel MiB "
		       "%.0f apply %.1f s\n", NRINGS, c.sid ? distinct_addrs(&c) : 0, v.nids,
		       (unsigned long long)points, mem / 1048576.0, t_apply);
		free(c.sid);
	}
out:
	if (xdp_fd >= 0)
		close(xdp_fd);
	kr_ring_test_bpf__destroy(skel);
	view_free(&v);
	view_free(&v2);
	view_free(&v3);
	if (m.backends >= 0)
		kr_ops_maps_close(&m);
	sh(NULL, 0, "nsenter --net=/run/netns/%s %s unload v0 --instance %s >/dev/null 2>&1; "
	   "rm -rf %s; ip netns del %s 2>/dev/null; rm -rf %s", ns, tool, ns, dir, ns, tmp);
	kr_config_free(cfg);
	kr_config_free(cfg2);
	free(errs);
	return tap_done();
}
