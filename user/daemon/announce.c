// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `keyrouter announce`: the VIPs over BGP through BIRD (announce.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "announce.h"
#include "apply_plan.h"
#include "follow.h"
#include "log.h"
#include "ops_apply.h"
#include "ops_find.h"
#include "ops_kernel.h"
#include "ops_live.h"

#define STALE_BEATS	3	/* a heartbeat older than 3 intervals (+ 1 s): not running */
#define DRAIN_POLL_MS	100	/* rounds while a VIP drains: the quiet time is measured finer */

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* ---- the maps ------------------------------------------------------------------------ */

struct amaps {
	int ck, ctl, vips, bgp;
};

static void amaps_close(struct amaps *m)
{
	int *fds[] = { &m->ck, &m->ctl, &m->vips, &m->bgp };

	for (unsigned i = 0; i < 4; i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

static int amaps_open(const struct kr_inst *in, bool create, struct amaps *m)
{
	m->ck = kr_ops_tool_map(in, KR_OPS_MAP_ANNOUNCE, sizeof(struct kr_announce_ck), 1, create);
	m->ctl = kr_ops_tool_map(in, KR_OPS_MAP_ANNOUNCE_CTL, sizeof(struct kr_announce_ctl), 1,
				 create);
	m->vips = kr_ops_tool_map(in, KR_OPS_MAP_ANNOUNCE_VIPS, sizeof(struct kr_announce_vip),
				  KR_VIP_MAX, create);
	m->bgp = kr_ops_tool_map(in, KR_OPS_MAP_ANNOUNCE_BGP, sizeof(struct kr_announce_bgp),
				 KR_ANNOUNCE_MAX_BGP, create);
	if (m->ck < 0 || m->ctl < 0 || m->vips < 0 || m->bgp < 0) {
		int err = m->ck < 0 ? m->ck : m->ctl < 0 ? m->ctl : m->vips < 0 ? m->vips : m->bgp;

		amaps_close(m);
		return err;
	}
	return 0;
}

/* The maps, made where missing under the instance's lock (never while unload removes the
 * pins: it holds the lock to the end).  -EBUSY: a command holds the lock now. */
static int amaps_make(const struct kr_inst *in, struct amaps *m)
{
	int fd = open(in->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		close(fd);
		return err;
	}
	err = amaps_open(in, true, m);
	close(fd);
	return err;
}

static bool ck_running(const struct kr_announce_ck *ck)
{
	__u64 stale = (__u64)ck->beat_ms * STALE_BEATS * 1000000ull + 1000000000ull;

	return ck->pid && now_ns() - ck->beat_ns < stale;
}

int kr_announce_view_read(const struct kr_inst *in, struct kr_announce_view *v)
{
	struct amaps m;
	__u32 k = 0;
	int err;

	memset(v, 0, sizeof(*v));
	err = amaps_open(in, false, &m);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	if (bpf_map_lookup_elem(m.ck, &k, &v->ck) || bpf_map_lookup_elem(m.ctl, &k, &v->ctl))
		err = -errno;
	for (__u32 i = 0; !err && i < v->ck.nvips && i < KR_VIP_MAX; i++)
		if (bpf_map_lookup_elem(m.vips, &i, &v->vip[i]))
			err = -errno;
	for (__u32 i = 0; !err && i < v->ck.nsessions && i < KR_ANNOUNCE_MAX_BGP; i++)
		if (bpf_map_lookup_elem(m.bgp, &i, &v->bgp[i]))
			err = -errno;
	amaps_close(&m);
	if (err)
		return err;
	v->present = v->ck.started_ns != 0;
	v->running = ck_running(&v->ck);
	return 0;
}

/* kr_announce_ctl, made where missing (the caller holds the lock). */
static int ctl_open(const struct kr_inst *in, struct kr_announce_ctl *ctl)
{
	__u32 k = 0;
	int fd = kr_ops_tool_map(in, KR_OPS_MAP_ANNOUNCE_CTL, sizeof(*ctl), 1, true);

	if (fd < 0)
		return fd;
	if (bpf_map_lookup_elem(fd, &k, ctl)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static int ctl_write(int fd, const struct kr_announce_ctl *ctl)
{
	__u32 k = 0;
	int err = bpf_map_update_elem(fd, &k, ctl, BPF_ANY) ? -errno : 0;

	close(fd);
	return err;
}

int kr_announce_set_drain(const struct kr_inst *in, bool drain)
{
	struct kr_announce_ctl ctl;
	int fd = ctl_open(in, &ctl);

	if (fd < 0)
		return fd;
	ctl.drain = drain;
	ctl.drain_ns = now_ns();
	if (!drain)
		ctl.unload_seq = 0;	/* an unload that failed after the withdrawal */
	return ctl_write(fd, &ctl);
}

int kr_announce_unload_wait(const struct kr_inst *in, int timeout_ms)
{
	struct kr_announce_view v;
	struct kr_announce_ctl ctl;
	__u64 t0 = now_ns();
	int fd, err;

	err = kr_announce_view_read(in, &v);
	if (err || !v.running)
		return err ? err : -ENOENT;
	fd = ctl_open(in, &ctl);
	if (fd < 0)
		return fd;
	ctl.unload_seq = v.ck.done_seq + 1;
	err = ctl_write(fd, &ctl);
	if (err)
		return err;
	pr_info("keyrouter: announce (pid %u) withdraws the VIPs of instance '%s' (drain "
		"first): waiting\n", v.ck.pid, in->name);
	for (;;) {
		usleep(50000);
		err = kr_announce_view_read(in, &v);
		if (err)
			return err;
		if ((__s32)(v.ck.done_seq - ctl.unload_seq) >= 0)
			return 0;
		if (!v.running)
			return -ENOENT;	/* it died meanwhile */
		if (now_ns() - t0 > (__u64)timeout_ms * 1000000ull)
			return -ETIMEDOUT;
	}
}

/* ---- BIRD ---------------------------------------------------------------------------- */

/* Reads BIRD's reply until its last line ("DDDD text": four digits and a space); the text
 * of every line (codes and the continuation's leading space removed) goes into out. */
static int bird_reply(int fd, char *out, size_t len)
{
	char buf[8192];
	size_t have = 0, o = 0;

	if (len)
		out[0] = 0;
	for (;;) {
		char *line = buf, *nl;
		ssize_t r = recv(fd, buf + have, sizeof(buf) - 1 - have, 0);

		if (r <= 0)
			return r < 0 ? -errno : -ECONNRESET;
		have += (size_t)r;
		buf[have] = 0;
		while ((nl = strchr(line, '\n'))) {
			bool code = nl - line >= 4 && line[0] >= '0' && line[0] <= '9' &&
				    line[1] >= '0' && line[2] >= '0' && line[3] >= '0';
			const char *text = code ? line + 5 : line + 1;

			*nl = 0;
			if (text > nl)
				text = nl;
			if (o + 1 < len)
				o += (size_t)snprintf(out + o, len - o, "%s\n", text);
			if (o >= len)
				o = len - 1;
			if (code && line[4] == ' ')
				return (int)strtol(line, NULL, 10);
			line = nl + 1;
		}
		have = strlen(line);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			have = 0;	/* a line longer than the buffer: dropped */
	}
}

int kr_bird_cmd(const char *sock, const char *cmd, char *out, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 3 };
	char hello[256], line[512];
	int fd, rc;

	if (strlen(sock) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = bird_reply(fd, hello, sizeof(hello));	/* "0001 BIRD 2.0.12 ready." */
	if (rc >= 0) {
		int n = snprintf(line, sizeof(line), "%s\n", cmd);

		rc = send(fd, line, (size_t)n, MSG_NOSIGNAL) == n ? bird_reply(fd, out, len) :
		     -errno;
	}
	close(fd);
	return rc;
}

/* BIRD's BGP protocols from `show protocols`: name, state, info. */
static void bird_sessions(struct kr_announcer *a)
{
	struct kr_bird_proto p[64];
	char out[16384];
	int rc = kr_bird_cmd(a->bird_socket, "show protocols", out, sizeof(out)), n;

	a->nbgp = 0;
	if (rc < 0 || rc >= 8000)
		return;
	n = kr_bird_protocols_parse(out, p, 64);
	for (int i = 0; i < n && a->nbgp < KR_ANNOUNCE_MAX_BGP; i++) {
		struct kr_announce_bgp *b = &a->bgp[a->nbgp];

		if (strcmp(p[i].proto, "BGP"))
			continue;
		memset(b, 0, sizeof(*b));
		memcpy(b->name, p[i].name, sizeof(b->name));
		memcpy(b->state, p[i].state, sizeof(b->state));
		memcpy(b->info, p[i].info, sizeof(b->info));
		a->nbgp++;
	}
}

/* The include file: one `protocol static` per family, a route per VIP not withdrawn. */
static char *bird_text(const struct kr_announcer *a)
{
	return kr_vip_bird_file(a->proto, a->instance ? a->instance : a->pin_dir, a->config,
				a->vips, a->track, a->nvips);
}

static int write_all(int fd, const char *t, size_t n)
{
	while (n) {
		ssize_t w = write(fd, t, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		t += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Written next to it, then renamed over it: BIRD never reads half a file. */
static int bird_file_write(const struct kr_announcer *a, const char *text)
{
	char tmp[4200];
	int fd, err;

	snprintf(tmp, sizeof(tmp), "%s.tmp", a->bird_file);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	fchmod(fd, 0644);	/* BIRD runs as its own user; the unit's umask is 077 */
	err = write_all(fd, text, strlen(text));
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, a->bird_file))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* The file, then `configure`; a failure is kept in ck.bird_error and tried again at the
 * next round. */
static void bird_push(struct kr_announcer *a)
{
	char *text = bird_text(a), out[2048];
	int rc;

	if (!text)
		return;
	rc = bird_file_write(a, text);
	if (rc) {
		snprintf(a->ck.bird_error, sizeof(a->ck.bird_error), "write %s: %s",
			 a->bird_file, strerror(-rc));
		goto fail;
	}
	rc = kr_bird_cmd(a->bird_socket, "configure", out, sizeof(out));
	if (rc < 0) {
		snprintf(a->ck.bird_error, sizeof(a->ck.bird_error), "%s: %s", a->bird_socket,
			 strerror(-rc));
		goto fail;
	}
	if (rc >= 8000) {
		out[strcspn(out, "\n")] = 0;
		snprintf(a->ck.bird_error, sizeof(a->ck.bird_error), "configure: %.110s", out);
		goto fail;
	}
	if (!a->ck.bird_ok)
		pr_info("announce: BIRD (%s) took the routes of %s\n", a->bird_socket,
			a->bird_file);
	a->ck.bird_ok = 1;
	a->ck.bird_error[0] = 0;
	a->last_error[0] = 0;
	a->file_dirty = false;
	free(a->file_text);
	a->file_text = text;
	return;
fail:
	if (strcmp(a->ck.bird_error, a->last_error))	/* said once per error */
		pr_warn("announce: BIRD did not take the routes: %s (tried again every round)\n",
			a->ck.bird_error);
	memcpy(a->last_error, a->ck.bird_error, sizeof(a->last_error));
	a->ck.bird_ok = 0;
	a->file_dirty = true;
	free(text);
}

/* ---- the facts ----------------------------------------------------------------------- */

static __u64 file_sig(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return 0;
	return ((__u64)st.st_mtim.tv_sec * 1000000000ull + (__u64)st.st_mtim.tv_nsec) ^
	       ((__u64)st.st_ino << 20) ^ (__u64)st.st_size;
}

/* The VIPs of the configuration; a VIP no longer in it is simply not written any more. */
static int config_read(struct kr_announcer *a, bool first)
{
	struct kr_vip_track track[KR_VIP_MAX] = {};
	struct kr_vip vips[KR_VIP_MAX];
	__u64 sig = file_sig(a->config);
	struct kr_config *cfg;
	char *errs = NULL;
	int n;

	if (!first && sig == a->cfg_sig)
		return 0;
	a->cfg_sig = sig;
	cfg = kr_config_load(a->config, &errs);
	if (!cfg) {
		pr_warn("%s", errs ? errs : "announce: the configuration cannot be read\n");
		free(errs);
		if (!first)
			pr_warn("announce: %s is not valid: going on with the configuration read "
				"before\n", a->config);
		return -1;
	}
	n = kr_vip_collect(cfg, vips, KR_VIP_MAX);
	if (n < 0) {
		pr_warn("announce: %s has more than %d VIP addresses (or %d services on one)\n",
			a->config, KR_VIP_MAX, KR_VIP_MAX_SVCS);
		kr_config_free(cfg);
		return -1;
	}
	for (int i = 0; i < n; i++)	/* a VIP kept keeps its state */
		for (uint32_t j = 0; j < a->nvips; j++)
			if (vips[i].addr.family == a->vips[j].addr.family &&
			    !memcmp(vips[i].addr.ip, a->vips[j].addr.ip, 16))
				track[i] = a->track[j];
	if (!first)
		pr_info("announce: %s changed: %d VIPs\n", a->config, n);
	kr_config_free(a->cfg);
	a->cfg = cfg;
	memcpy(a->vips, vips, sizeof(vips));
	memcpy(a->track, track, sizeof(track));
	a->nvips = (uint32_t)n;
	a->file_dirty = true;
	return 0;
}

static bool attached(const struct kr_inst *in)
{
	struct kr_ops_meta meta = {};
	__u32 key = 0;

	if (in->meta_fd < 0 || bpf_map_lookup_elem(in->meta_fd, &key, &meta) ||
	    meta.magic != KR_OPS_META_MAGIC)
		return false;
	return kr_ops_attach_state(&meta, NULL) == KR_ATTACHED;
}

/* apply's own plan, not executed: nothing to change is converged. */
static bool converged(const struct kr_inst *in, const struct kr_config *cfg)
{
	struct kr_ops_apply_opts o = { .dry_run = true };
	struct kr_apply_plan p;
	struct kr_err err = {};
	bool same;
	int rc = kr_ops_apply(in, cfg, &o, &p, &err);

	same = !rc && !kr_apply_plan_changes(&p);
	kr_apply_plan_free(&p);
	return same;
}

/* Backends up and in all of the service's ring (subset) */
static void svc_up(const struct kr_inst *in, const struct kr_config *cfg, uint32_t si,
		   int given, uint32_t *up, uint32_t *total, uint32_t *min_up)
{
	const struct kr_cfg_service *s = &cfg->services[si];
	const struct kr_cfg_ring *r = &cfg->rings[s->ring];
	uint8_t st[r->nbackends ? r->nbackends : 1];

	*up = *total = 0;
	if (kr_ops_live_states(in, r, st) < 0)
		memset(st, KR_BACKEND_UNUSED, sizeof(st));
	for (uint32_t b = 0; b < r->nbackends; b++) {
		if ((r->backends[b].tags & s->subset_mask) != s->subset_mask)
			continue;
		(*total)++;
		*up += st[b] == KR_BACKEND_UP;
	}
	*min_up = kr_vip_min_up(given, r->health.set & KR_HC_PANIC ? r->health.panic :
				KR_HC_DEF_PANIC, *total);
}

/* The VIP's worst service: the fewest backends up over its min_up. */
static void vip_up(struct kr_announcer *a, const struct kr_inst *in, uint32_t vi)
{
	struct kr_vip_track *t = &a->track[vi];
	long worst = 0;

	for (uint32_t k = 0; k < a->vips[vi].nsvc; k++) {
		uint32_t up, total, min_up;

		svc_up(in, a->cfg, a->vips[vi].svc[k], a->min_up, &up, &total, &min_up);
		if (!k || (long)up - (long)min_up < worst) {
			worst = (long)up - (long)min_up;
			t->up = up;
			t->total = total;
			t->min_up = min_up;
		}
	}
}

static __u64 router_pkts(const struct kr_inst *in, __u64 last)
{
	struct kr_ops_maps m;
	struct kr_counters c;
	__u64 n = last;

	if (kr_ops_maps_open(in, &m))
		return last;
	if (!kr_ops_percpu_sum(&m, m.counters, 0, &c, sizeof(c)))
		n = c.routed + c.dropped;	/* VIP traffic (BGP, BFD are passed) */
	kr_ops_maps_close(&m);
	return n;
}

/* The instance's facts of this round.  A command holding the lock (apply, upgrade, backend
 * set) may be half-way: the facts of the last round stand, but an unload's request. */
static void gather(struct kr_announcer *a, struct kr_inst *in, struct amaps *m, bool have)
{
	struct kr_vip_track track[KR_VIP_MAX];
	struct kr_announce_ctl ctl = {};
	struct kr_vip_facts was;
	__u32 k = 0;
	bool unloading;

	if (!have) {
		a->facts = (struct kr_vip_facts){ 0 };
		return;
	}
	if (m->ctl >= 0)
		bpf_map_lookup_elem(m->ctl, &k, &ctl);
	/* sticky for this instance: once an unload asked, never announced again (were unload
	 * to fail after the withdrawal: until --undrain, or the next load) */
	unloading = ctl.unload_seq != 0;
	a->pkts = router_pkts(in, a->pkts);	/* a drain's measure, also under a lock */
	if (kr_ops_inst_busy(in) && a->facts.loaded) {
		a->facts.unloading = unloading;
		return;
	}
	was = a->facts;
	memcpy(track, a->track, sizeof(track));
	a->facts.loaded = true;
	a->facts.attached = attached(in);
	a->facts.converged = a->facts.attached && converged(in, a->cfg);
	a->facts.unloading = unloading;
	a->facts.drained = ctl.drain;
	for (uint32_t i = 0; i < a->nvips; i++)
		vip_up(a, in, i);
	/* a command that took the lock meanwhile (an upgrade between its swap and its record)
	 * may have shown a half-way state: the last round's facts stand */
	if (was.loaded && kr_ops_inst_busy(in)) {
		a->facts = was;
		a->facts.unloading = unloading;
		memcpy(a->track, track, sizeof(track));
	}
}

/* ---- the rounds ---------------------------------------------------------------------- */

static void log_change(const struct kr_announcer *a, uint32_t i)
{
	const struct kr_vip_track *t = &a->track[i];
	char ip[INET6_ADDRSTRLEN];

	inet_ntop(a->vips[i].addr.family == 4 ? AF_INET : AF_INET6, a->vips[i].addr.ip, ip,
		  sizeof(ip));
	pr_info("announce: VIP %s: %s (%s; backends up %u of %u, min %u)\n", ip,
		kr_vip_route_name(t->route), kr_vip_why_name(t->why), t->up, t->total, t->min_up);
}

static void publish(struct kr_announcer *a, struct amaps *m)
{
	for (__u32 i = 0; i < a->nvips; i++) {
		struct kr_announce_vip v = { .family = a->vips[i].addr.family,
					     .route = a->track[i].route, .why = a->track[i].why,
					     .up = a->track[i].up, .total = a->track[i].total,
					     .min_up = a->track[i].min_up,
					     .since_ns = a->track[i].since_ns };

		memcpy(v.ip, a->vips[i].addr.ip, 16);
		bpf_map_update_elem(m->vips, &i, &v, BPF_ANY);
	}
	for (__u32 i = 0; i < a->nbgp; i++)
		bpf_map_update_elem(m->bgp, &i, &a->bgp[i], BPF_ANY);
	a->ck.nvips = a->nvips;
	a->ck.nsessions = a->nbgp;
	a->ck.beat_ns = now_ns();
	bpf_map_update_elem(m->ck, &(__u32){ 0 }, &a->ck, BPF_ANY);
}

static bool any_draining(const struct kr_announcer *a)
{
	for (uint32_t i = 0; i < a->nvips; i++)
		if (a->track[i].route == KR_VIP_GSHUT)
			return true;
	return false;
}

static bool all_withdrawn(const struct kr_announcer *a)
{
	for (uint32_t i = 0; i < a->nvips; i++)
		if (a->track[i].route != KR_VIP_WITHDRAWN)
			return false;
	return true;
}

static void round_(struct kr_announcer *a)
{
	struct amaps m = { -1, -1, -1, -1 };
	struct kr_follow_id id;
	struct kr_inst in;
	bool have = false, changed = false;
	__u64 now;

	config_read(a, false);
	if (!kr_ops_inst_path(&in, a->instance, a->pin_dir) &&
	    !kr_follow_read(in.dir, &id) && id.magic == KR_OPS_META_MAGIC &&
	    !kr_ops_inst_open_reader(&in, a->instance, a->pin_dir)) {
		have = true;
		if (amaps_open(&in, false, &m) == -ENOENT && amaps_make(&in, &m))
			m = (struct amaps){ -1, -1, -1, -1 };
		if (id.backends_map_id != a->gen.backends_map_id ||
		    id.meta_map_id != a->gen.meta_map_id)
			a->done_seq = 0;	/* a new instance (unload, load): its own requests */
		a->gen = id;
	}
	gather(a, &in, &m, have);
	now = now_ns();
	for (uint32_t i = 0; i < a->nvips; i++) {
		enum kr_vip_why why = kr_vip_decide(&a->facts, a->track[i].up, a->track[i].min_up);

		if (kr_vip_step(&a->track[i], why, a->pkts, now, &a->timing)) {
			changed = true;
			log_change(a, i);
		}
	}
	if (changed)
		a->ck.change_ns = now;
	if (changed || a->file_dirty)
		bird_push(a);
	if (a->facts.unloading && all_withdrawn(a) && !a->file_dirty && m.ctl >= 0) {
		struct kr_announce_ctl ctl = {};

		bpf_map_lookup_elem(m.ctl, &(__u32){ 0 }, &ctl);
		if (ctl.unload_seq != a->done_seq)
			pr_info("announce: every VIP withdrawn for unload\n");
		a->done_seq = ctl.unload_seq;
	}
	a->ck.done_seq = a->done_seq;
	bird_sessions(a);
	a->ck.rounds++;
	if (m.ck >= 0)
		publish(a, &m);
	amaps_close(&m);
	if (have)
		kr_ops_inst_close(&in);
}

int kr_announce_init(struct kr_announcer *a)
{
	const char *n = a->instance ? a->instance : "default";
	size_t o;

	o = (size_t)snprintf(a->proto, sizeof(a->proto), "keyrouter_");
	for (; *n && o + 3 < sizeof(a->proto); n++)	/* BIRD symbols: letters, digits, _ */
		a->proto[o++] = (char)((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') ||
				       (*n >= '0' && *n <= '9') ? *n : '_');
	a->proto[o] = 0;
	a->ck.started_ns = now_ns();
	a->ck.pid = (__u32)getpid();
	a->ck.beat_ms = a->interval_ms;
	a->file_dirty = true;	/* BIRD gets the file once at the start, whatever it holds */
	return config_read(a, true);
}

int kr_announce_run(struct kr_announcer *a, volatile sig_atomic_t *stop)
{
	struct kr_inst in;

	while (!*stop) {
		unsigned ms = any_draining(a) || (a->facts.unloading && !all_withdrawn(a)) ?
			      DRAIN_POLL_MS : a->interval_ms;

		round_(a);
		poll(NULL, 0, (int)ms);
	}
	/* stopped: routes left as they are (the data path keeps routing); status says so */
	a->ck.pid = 0;
	if (!kr_ops_inst_path(&in, a->instance, a->pin_dir) &&
	    !kr_ops_inst_open_reader(&in, a->instance, a->pin_dir)) {
		struct amaps m;

		if (!amaps_open(&in, false, &m)) {
			a->ck.beat_ns = now_ns();
			bpf_map_update_elem(m.ck, &(__u32){ 0 }, &a->ck, BPF_ANY);
			amaps_close(&m);
		}
		kr_ops_inst_close(&in);
	}
	pr_info("announce: stopped; the routes stay as they are in BIRD\n");
	return 0;
}

void kr_announce_free(struct kr_announcer *a)
{
	kr_config_free(a->cfg);
	a->cfg = NULL;
	free(a->file_text);
	a->file_text = NULL;
}
