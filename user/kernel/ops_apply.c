// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* apply: read the live state once, plan (user/core/apply_plan.c), execute (see ops_apply.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "analytics.h"
#include "config.h"
#include "image.h"
#include "log.h"
#include "ops_apply.h"
#include "ring_sm.h"
#include "ops_backends.h"
#include "ops_health.h"
#include "ops_lint.h"
#include "ops_ports.h"
#include "ops_publish.h"
#include "ops_quic_lb.h"
#include "publish.h"
#include "ops_hot.h"
#include "util.h"

static int fail(struct kr_err *err, int rc, const char *what)
{
	kr_errf(err, "couldn't %s: %s", what, strerror(-rc));
	return rc;
}

/* ---- the live state, read once ------------------------------------------------------------ */

static int read_rings(const struct kr_inst *in, const struct kr_ops_maps *m, struct kr_live *lv,
		      struct kr_err *err)
{
	for (__u32 id = 0; id < KR_MAX_RINGS; id++) {
		struct kr_live_ring *lr = &lv->ring[id];
		struct kr_ops_ring r;
		int rc = kr_ops_ring_get(in, id, &r);

		if (!rc) {
			snprintf(lr->name, sizeof(lr->name), "%s", r.name);
			lr->flags = r.flags;
			rc = kr_ops_ctl_read(m, id, &lr->ctl);
		}
		for (__u32 s = 0; s < 2 && !rc; s++) {
			struct kr_ops_slot sl;

			rc = kr_ops_slot_read(m, id, s, true, &sl);
			if (rc)
				break;
			lr->slot[s].present = sl.present;
			lr->slot[s].hdr = sl.hdr;
			lr->slot[s].bt = sl.bt;		/* the live state owns it now */
		}
		if (rc) {
			kr_errf(err, "couldn't read ring id %u: %s", id, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* Every entry of kr_backends in use (one batch read; sorted by id): the id allocator starts
 * from all of them (backend_ids.h), not only from those an image references. */
static int read_backends(const struct kr_ops_maps *m, struct kr_live *lv, struct kr_err *err)
{
	struct kr_backend *all = NULL;
	__u32 n = 0;
	int rc = kr_ops_backends_read(m, &all);

	if (rc)
		return fail(err, rc, "read kr_backends");
	for (__u32 id = 0; id < m->backends_max; id++)
		n += all[id].family != 0;
	lv->backends = calloc(n + 1, sizeof(*lv->backends));
	if (!lv->backends) {
		free(all);
		return fail(err, -ENOMEM, "allocate the live state");
	}
	for (__u32 id = 0; id < m->backends_max; id++) {
		if (!all[id].family)
			continue;
		lv->backends[lv->nbackends].id = id;
		lv->backends[lv->nbackends++].v = all[id];
	}
	free(all);
	return 0;
}

/* Every key of a map (HASH): *keys, *n.  The scan never deletes, so it ends. */
static int read_keys(int fd, size_t ksize, void **keys, __u32 *n)
{
	__u32 cap = 0;
	char *buf = NULL, *next = malloc(ksize);
	void *pk = NULL;

	*n = 0;
	if (!next)
		return -ENOMEM;
	while (!bpf_map_get_next_key(fd, pk, next)) {
		if (*n == cap) {
			char *b = realloc(buf, (cap = cap ? cap * 2 : 64) * ksize);

			if (!b) {
				free(buf);
				free(next);
				return -ENOMEM;
			}
			buf = b;
		}
		memcpy(buf + (size_t)*n * ksize, next, ksize);
		pk = buf + (size_t)(*n)++ * ksize;
	}
	free(next);
	*keys = buf;
	return 0;
}

static int read_services(const struct kr_ops_maps *m, struct kr_live *lv, struct kr_err *err)
{
	struct kr_service_key *keys = NULL;
	__u32 n = 0;
	int rc = read_keys(m->services, sizeof(*keys), (void **)&keys, &n);

	if (!rc)
		lv->services = calloc(n + 1, sizeof(*lv->services));
	if (rc || !lv->services) {
		free(keys);
		return fail(err, -ENOMEM, "allocate the live state");
	}
	for (__u32 i = 0; i < n; i++) {
		struct kr_live_service *s = &lv->services[lv->nservices];

		s->k = keys[i];
		if (!bpf_map_lookup_elem(m->services, &s->k, &s->v))
			lv->nservices++;
	}
	free(keys);
	return 0;
}

static int read_members(const struct kr_ops_maps *m, struct kr_live *lv, struct kr_err *err)
{
	lv->has_members = m->members >= 0;
	if (lv->has_members &&
	    read_keys(m->members, sizeof(*lv->members), (void **)&lv->members, &lv->nmembers))
		return fail(err, -ENOMEM, "allocate the live state");
	return 0;
}

/* kr_hot_keys, when the program has it: every entry (ops_hot.h). */
static int read_hot(const struct kr_ops_maps *m, struct kr_live *lv, struct kr_err *err)
{
	int rc = kr_ops_hot_list(m, -1, &lv->hot, &lv->nhot);

	lv->has_hot = rc != -EOPNOTSUPP;
	return rc && lv->has_hot ? fail(err, rc, "read " KR_MAP_HOT_KEYS) : 0;
}

static struct kr_live_device *add_device(struct kr_live *lv, __u32 *cap)
{
	if (lv->ndevices == *cap) {
		struct kr_live_device *d = realloc(lv->devices, (*cap = *cap ? *cap * 2 : 16) *
						   sizeof(*d));

		if (!d)
			return NULL;
		lv->devices = d;
	}
	memset(&lv->devices[lv->ndevices], 0, sizeof(lv->devices[0]));
	return &lv->devices[lv->ndevices++];
}

/* An egress device by ifindex: its MAC (SIOCGIFHWADDR) and its kr_devices entry. */
static int read_device_ifindex(const struct kr_ops_maps *m, struct kr_live *lv, __u32 *cap,
			       int sock, __u32 ifindex)
{
	struct kr_live_device *d;
	struct ifreq ifr = {};

	if (!ifindex || kr_live_device(lv, NULL, ifindex))
		return 0;
	d = add_device(lv, cap);
	if (!d)
		return -ENOMEM;
	d->ifindex = ifindex;
	if (sock >= 0 && if_indextoname(ifindex, ifr.ifr_name) &&
	    !ioctl(sock, SIOCGIFHWADDR, &ifr)) {
		memcpy(d->mac, ifr.ifr_hwaddr.sa_data, 6);
		d->has_mac = true;
	}
	d->has_entry = m && m->devices >= 0 &&
		       !bpf_map_lookup_elem(m->devices, &ifindex, &d->entry);
	/* kr_device_macs holds the same entry (ops_apply.h): one that differs there is
	 * rewritten in both */
	if (d->has_entry && m->device_macs >= 0 && ifindex < KR_DEVICE_SLOTS) {
		struct kr_device fast;

		d->has_entry = !bpf_map_lookup_elem(m->device_macs, &ifindex, &fast) &&
			       !memcmp(&fast, &d->entry, sizeof(fast));
	}
	return 0;
}

/* The devices the backends name ("dev" resolved here: 0 when there is no such device) and
 * the loaded interface.  in and m may be NULL (no instance yet: names resolved only). */
static int read_devices(const struct kr_inst *in, const struct kr_ops_maps *m,
			const struct kr_config *cfg, struct kr_live *lv, struct kr_err *err)
{
	struct kr_ops_meta meta = {};
	__u32 key = 0, cap = 0;
	int sock, rc = 0;

	lv->has_devices = m && m->devices >= 0;
	if (in && in->meta_fd >= 0 && !bpf_map_lookup_elem(in->meta_fd, &key, &meta) &&
	    kr_ops_meta_recorded(&meta))
		lv->loaded_ifindex = meta.ifindex;
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (__u32 r = 0; r < cfg->nrings && !rc; r++) {
		for (__u32 b = 0; b < cfg->rings[r].nbackends && !rc; b++) {
			const struct kr_cfg_backend *cb = &cfg->rings[r].backends[b];
			__u32 ifindex = cb->ifindex;
			struct kr_live_device *d;

			if (!ifindex && cb->dev[0]) {
				const struct kr_live_device *seen = kr_live_device(lv, cb->dev, 0);

				if (seen) {
					ifindex = seen->ifindex;
				} else if ((d = add_device(lv, &cap))) {
					snprintf(d->name, sizeof(d->name), "%s", cb->dev);
					d->ifindex = ifindex = if_nametoindex(cb->dev);
				} else {
					rc = -ENOMEM;
					break;
				}
			}
			rc = read_device_ifindex(m, lv, &cap, sock, ifindex);
		}
	}
	if (!rc)
		rc = read_device_ifindex(m, lv, &cap, sock, lv->loaded_ifindex);
	if (sock >= 0)
		close(sock);
	if (rc)
		kr_errf(err, "out of memory");
	return rc;
}

static int read_hash_key(const struct kr_inst *in, const struct kr_config *cfg,
			 struct kr_live *lv)
{
	__u32 zero = 0;
	int fd;

	if (!cfg->hash.keyed)
		return 0;
	fd = kr_ops_map_open(in, KR_MAP_HASH_KEY, true);
	if (fd < 0)
		return 0;
	lv->has_hash_key = !bpf_map_lookup_elem(fd, &zero, &lv->hash_key);
	close(fd);
	return 0;
}

/* kr_svc_names, when the program has it (stats id -> service name). */
static int read_svc_names(const struct kr_inst *in, struct kr_live *lv, struct kr_err *err)
{
	int fd = kr_ops_map_open(in, KR_MAP_SVC_NAMES, true);

	if (fd < 0)
		return 0;
	lv->svc_names = calloc(KR_MAX_SVC_STATS, sizeof(*lv->svc_names));
	if (!lv->svc_names) {
		close(fd);
		return fail(err, -ENOMEM, "allocate the live state");
	}
	for (__u32 id = 0; id < KR_MAX_SVC_STATS; id++) {
		if (bpf_map_lookup_elem(fd, &id, &lv->svc_names[id])) {
			int rc = -errno;

			close(fd);
			return fail(err, rc, "read " KR_MAP_SVC_NAMES);
		}
		lv->svc_names[id].name[KR_SVC_NAME_MAX - 1] = 0;
	}
	close(fd);
	lv->has_svc_names = true;
	return 0;
}

int kr_ops_live_read(const struct kr_inst *in, const struct kr_ops_maps *m,
		     const struct kr_config *cfg, struct kr_live *lv, struct kr_err *err)
{
	int rc;

	memset(lv, 0, sizeof(*lv));
	lv->backends_max = m->backends_max;
	rc = read_rings(in, m, lv, err);
	if (!rc)
		rc = read_backends(m, lv, err);
	if (!rc)
		rc = read_services(m, lv, err);
	if (!rc)
		rc = read_members(m, lv, err);
	if (!rc)
		rc = read_hot(m, lv, err);
	if (!rc)
		rc = read_devices(in, m, cfg, lv, err);
	if (!rc)
		rc = read_hash_key(in, cfg, lv);
	if (!rc)
		rc = read_svc_names(in, lv, err);
	return rc;
}

/* ---- the executor ------------------------------------------------------------------------- */

static int exec_hash_key(const struct kr_inst *in, const struct kr_apply_plan *p,
			 struct kr_err *err)
{
	__u32 zero = 0;
	int fd, rc = 0;

	if (!p->write_hash_key)
		return 0;
	fd = kr_ops_map_open(in, KR_MAP_HASH_KEY, true);
	if (fd < 0)
		return fail(err, fd, "open kr_hash_key");
	if (bpf_map_update_elem(fd, &zero, &p->hash_key, BPF_ANY))
		rc = fail(err, -errno, "write the keyed-hash secret");
	close(fd);
	return rc;
}

/* Encode and publish one ring (ring stage: into the standby slot, control word staged). */
static int exec_ring(const struct kr_ops_maps *m, struct kr_plan_ring *pr, struct kr_err *err)
{
	struct kr_image img = {};
	struct kr_ops_slot st = {};
	__u64 t0 = kr_wall_ns(), t1;
	int rc;

	if (kr_image_encode(&img, pr->ring, pr->unit->gid, err)) {
		kr_err_prefix(err, "ring '%s': couldn't encode the image", pr->unit->name);
		return -EINVAL;
	}
	t1 = kr_wall_ns();
	pr->encode_ns = t1 - t0;
	rc = kr_ops_publish(m, pr->ring_id, pr->slot, &img);
	pr->publish_ns = kr_wall_ns() - t1;
	kr_image_free(&img);
	if (rc)
		return fail(err, rc, "publish the ring");
	if (pr->act == KR_PLAN_STAGE) {
		uint64_t old = 0;

		kr_ctl_read(m->ctl, pr->ring_id, &old, NULL);	/* keeps its KR_CTL_HOT */
		rc = kr_ops_ctl_write(m, pr->ring_id, kr_ctl_make(pr->active, 0, KR_RING_STAGED) |
				      (old & KR_CTL_HOT));
		if (rc)
			return fail(err, rc, "write the control word");
	}
	if (!kr_ops_slot_read(m, pr->ring_id, pr->slot, false, &st) && st.present)
		pr->generation = st.hdr.generation;
	pr->done = true;
	return 0;
}

static int exec_rings(const struct kr_inst *in, const struct kr_ops_maps *m,
		      struct kr_apply_plan *p, struct kr_err *err)
{
	int rc;

	for (__u32 i = 0; i < p->nrings; i++) {	/* 1. ring ids */
		struct kr_plan_ring *pr = &p->rings[i];

		if (pr->new_id && (rc = kr_ops_ring_set(in, pr->ring_id, pr->unit->name,
							   pr->flags)))
			return fail(err, rc, "record a ring id");
	}
	for (__u32 i = 0; i < p->nbackends; i++) {	/* 2. backends */
		if (bpf_map_update_elem(m->backends, &p->backends[i].id, &p->backends[i].v,
					BPF_ANY)) {
			rc = -errno;
			kr_errf(err, "couldn't write backend id %u: %s", p->backends[i].id,
				strerror(-rc));
			return rc;
		}
	}
	kr_health_note_apply(in, p->backends, p->nbackends);	/* since when (status) */
	for (__u32 i = 0; i < p->nrings; i++) {	/* 3. rings */
		struct kr_plan_ring *pr = &p->rings[i];

		if (pr->act == KR_PLAN_PUBLISH || pr->act == KR_PLAN_STAGE) {
			rc = exec_ring(m, pr, err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Members of shared subsets: before the services that use them (apply), with the version
 * that needs them (ring stage: a migration must find the staged ids members). */
static int exec_members_add(const struct kr_ops_maps *m, const struct kr_apply_plan *p,
			    struct kr_err *err)
{
	__u32 one = 1;

	for (__u32 i = 0; i < p->nmembers_add; i++) {
		if (bpf_map_update_elem(m->members, &p->members_add[i].k, &one, BPF_ANY)) {
			int rc = -errno;

			kr_errf(err, "subset '%s': couldn't write member %u into %s: %s",
				p->members_add[i].subset, p->members_add[i].k.backend_id,
				KR_MAP_SUBSET_MEMBERS, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static int exec_members_services(const struct kr_ops_maps *m, const struct kr_apply_plan *p,
				 struct kr_err *err)
{
	int rc;

	for (__u32 i = 0; i < p->ndevices; i++) {	/* 4. devices, members */
		__u32 ifindex = p->devices[i].ifindex;

		if (bpf_map_update_elem(m->devices, &ifindex, &p->devices[i].v, BPF_ANY))
			return fail(err, -errno, "write kr_devices");
		if (m->device_macs >= 0 && ifindex < KR_DEVICE_SLOTS &&
		    bpf_map_update_elem(m->device_macs, &ifindex, &p->devices[i].v, BPF_ANY))
			return fail(err, -errno, "write " KR_MAP_DEVICE_MACS);
	}
	rc = exec_members_add(m, p, err);
	if (rc)
		return rc;
	/* 5. services, between the two writes of kr_service_ports (ops_ports.h) */
	rc = kr_ops_service_ports_clear(m->service_ports, p->services ? &p->services[0].k : NULL,
					p->nservices, sizeof(p->services[0]));
	if (rc)
		return fail(err, rc, "write " KR_MAP_SERVICE_PORTS);
	rc = kr_ops_port_wild_clear(m->port_wild, p->services ? &p->services[0].k : NULL,
				    p->nservices, sizeof(p->services[0]));
	if (!rc)
		rc = kr_ops_port_wild_clear(m->port_wild, p->services_del, p->nservices_del,
					    sizeof(p->services_del[0]));
	if (rc)
		return fail(err, rc, "write " KR_MAP_PORT_WILD);
	for (__u32 i = 0; i < p->nservices; i++) {
		if (bpf_map_update_elem(m->services, &p->services[i].k, &p->services[i].v,
					BPF_ANY)) {
			int rc = -errno;

			kr_errf(err, "couldn't write service '%s': %s", p->services[i].name,
				strerror(-rc));
			return rc;
		}
	}
	for (__u32 i = 0; i < p->nservices_del; i++)
		if (bpf_map_delete_elem(m->services, &p->services_del[i]) && errno != ENOENT)
			return fail(err, -errno, "remove a service");
	rc = kr_ops_service_ports_sync(m->service_ports, m->services);
	if (rc)
		return fail(err, rc, "write " KR_MAP_SERVICE_PORTS);
	rc = kr_ops_port_wild_sync(m->port_wild, m->wild_svcs, m->services);
	if (rc)
		return fail(err, rc, "write " KR_MAP_PORT_WILD);
	return 0;
}

/* Stats ids: names before the services that carry them (a fresh id's counters zeroed
 * first), or, del, the names of removed services after them. */
static int exec_svc_names(const struct kr_inst *in, const struct kr_apply_plan *p, bool del,
			  struct kr_err *err)
{
	struct kr_svc_name none = { 0 };
	struct kr_svc_stats *zero = NULL;
	int fd, ncpu, rc = 0;

	if (!(del ? p->nsvc_names_del : p->nsvc_names))
		return 0;
	fd = kr_ops_map_open(in, KR_MAP_SVC_NAMES, true);
	if (fd < 0)
		return fail(err, fd, "open " KR_MAP_SVC_NAMES);
	for (__u32 i = 0; del && i < p->nsvc_names_del && !rc; i++)
		if (bpf_map_update_elem(fd, &p->svc_names_del[i], &none, BPF_ANY))
			rc = fail(err, -errno, "release a service's counter id");
	for (__u32 i = 0; !del && i < p->nsvc_names && !rc; i++) {
		const struct kr_plan_svc_name *e = &p->svc_names[i];

		if (e->fresh) {
			int sfd = kr_ops_map_open(in, KR_MAP_SVC_STATS, true);

			ncpu = libbpf_num_possible_cpus();
			if (!zero && ncpu > 0)
				zero = calloc(ncpu, sizeof(*zero));
			if (sfd < 0 || !zero || bpf_map_update_elem(sfd, &e->id, zero, BPF_ANY))
				rc = fail(err, sfd < 0 ? sfd : zero ? -errno : -ENOMEM,
					  "reset a service's counters");
			if (sfd >= 0)
				close(sfd);
		}
		if (!rc && bpf_map_update_elem(fd, &e->id, &e->v, BPF_ANY))
			rc = fail(err, -errno, "write " KR_MAP_SVC_NAMES);
	}
	free(zero);
	close(fd);
	return rc;
}

static int exec_garbage(const struct kr_inst *in, const struct kr_ops_maps *m,
			const struct kr_apply_plan *p, struct kr_err *err)
{
	struct kr_backend unused = { .state = KR_BACKEND_UNUSED };

	for (__u32 i = 0; i < p->nmembers_del; i++)	/* 6. garbage */
		if (bpf_map_delete_elem(m->members, &p->members_del[i].k) && errno != ENOENT)
			return fail(err, -errno, "remove a subset member");
	for (__u32 i = 0; i < p->nrings_del; i++) {
		__u32 id = p->rings_del[i].id;

		for (__u32 slot = 0; slot < 2; slot++)
			kr_ops_unpublish(m, id, slot);
		kr_ops_ctl_write(m, id, 0);
		kr_ops_ring_release(in, id);
	}
	for (__u32 i = 0; i < p->nbackends_release; i++)
		if (bpf_map_update_elem(m->backends, &p->backends_release[i], &unused, BPF_ANY))
			return fail(err, -errno, "release a backend id");
	return 0;
}

/* The plan's kr_hot_keys writes (ops_hot.h): after the rings, so that a new ring id's
 * control word exists. */
static int exec_hot_keys(const struct kr_ops_maps *m, const struct kr_apply_plan *p,
			 struct kr_err *err)
{
	for (uint32_t i = 0; i < p->nhot; i++) {
		const struct kr_plan_hot *h = &p->hot[i];
		int rc = h->act == KR_PLAN_HOT_DEL ?
			 kr_ops_hot_del(m, h->e.k.ring_id, h->e.k.key_hash) :
			 kr_ops_hot_put(m, &h->e);

		if (rc && !(rc == -ENOENT && h->act == KR_PLAN_HOT_DEL))	/* gone meanwhile */
			return fail(err, rc, "write the hot keys");
	}
	return 0;
}

int kr_ops_apply_exec(const struct kr_inst *in, const struct kr_ops_maps *m,
		      struct kr_apply_plan *p, struct kr_err *err)
{
	int rc = p->stage ? 0 : exec_hash_key(in, p, err);

	if (!rc)
		rc = exec_rings(in, m, p, err);
	if (!rc && !p->stage)
		rc = exec_hot_keys(m, p, err);
	if (!rc && p->stage)
		rc = exec_members_add(m, p, err);
	/* (also when the version was staged already: a stage killed half-way converges) */
	if (!rc && p->stage && p->nrings && (p->rings[0].act == KR_PLAN_STAGE ||
					     p->rings[0].act == KR_PLAN_STAGED_ALREADY))
		rc = kr_ops_stage_quic_lb(in, p->cfg, &p->units,
					  (uint32_t)(p->rings[0].unit - p->units.u), err);
	/* QUIC-LB configurations and server IDs before the services point at them, the
	 * entries nothing refers to any more after (ops_quic_lb.h) */
	if (!rc && !p->stage)
		rc = kr_ops_apply_quic_lb(in, p->cfg, &p->units, err);
	if (!rc && !p->stage)
		rc = exec_svc_names(in, p, false, err);
	if (!rc && !p->stage)
		rc = exec_members_services(m, p, err);
	if (!rc && !p->stage)
		rc = exec_svc_names(in, p, true, err);
	if (!rc && !p->stage)
		rc = kr_ops_apply_quic_lb_gc(in, p->cfg, &p->units, err);
	if (!rc && !p->stage)
		rc = exec_garbage(in, m, p, err);
	return rc;
}

int kr_ops_apply_precheck(const struct kr_config *cfg, struct kr_err *err)
{
	struct kr_apply_plan p = {};
	struct kr_live *lv = calloc(1, sizeof(*lv));
	int rc;

	if (!lv)
		return fail(err, -ENOMEM, "allocate the live state");
	lv->backends_max = KR_DEFAULT_BACKEND_IDS;	/* kr_backends as load creates it */
	lv->has_members = true;		/* the object load attaches has every map */
	lv->has_hash_key = true;
	lv->has_hot = true;
	rc = read_devices(NULL, NULL, cfg, lv, err);
	if (!rc)
		rc = kr_apply_plan(cfg, lv, NULL, &p, err);
	kr_apply_plan_free(&p);
	kr_live_free(lv);
	free(lv);
	return rc;
}

/* Is the live kr_backends entry of global id `id` the server a (address and port)? */
static bool live_is(const struct kr_live *lv, uint32_t id, const struct kr_sockaddr *a)
{
	uint32_t lo = 0, hi = lv->nbackends;

	while (lo < hi) {	/* lv->backends is sorted by id */
		uint32_t mid = lo + (hi - lo) / 2;

		if (lv->backends[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == lv->nbackends || lv->backends[lo].id != id)
		return false;
	return lv->backends[lo].v.family == a->family &&
	       ntohs(lv->backends[lo].v.port) == a->port &&
	       !memcmp(lv->backends[lo].v.addr, a->ip, a->family == 4 ? 4 : 16);
}

/*
 * The share of the key space (units of 2^-32) whose server changes between the image in
 * the active slot of pr's ring and pr's built ring.  Servers, not backend ids: a server
 * whose id changes (an "id" pinned anew) or whose forwarding changes keeps its keys.  The
 * new ring's backend i is owner i (a ring lists each server once); the old
 * image's backend j is the new owner of its server, else owner n + j.  0 or -errno.
 */
static int ring_moved(const struct kr_ops_maps *m, const struct kr_live *lv,
		      const struct kr_plan_ring *pr, uint64_t *moved)
{
	const struct kr_ring *r = pr->ring;
	const struct kr_image_hdr *h;
	struct kr_an_ring a = {}, b = {};
	uint32_t *map = NULL, n = r->nbackends, no;
	const __u32 *bt;
	void *buf = NULL;
	size_t size;
	int err;

	err = kr_ops_slot_image(m, pr->ring_id, pr->active, &buf, &size);
	if (!err && !buf)
		err = -ENOENT;
	if (!err && kr_image_check(buf, size, NULL))
		err = -EBADMSG;	/* the header, sections and sizes are not what a reader trusts */
	if (err) {
		free(buf);
		return err;
	}
	h = buf;
	bt = (const __u32 *)((const char *)buf + kr_image_bt_off(h));
	no = n + h->nbackends;
	err = -ENOMEM;
	map = calloc(h->nbackends ? h->nbackends : 1, sizeof(*map));
	if (!map || kr_an_ring_borrow(&b, r->hash, r->npoints, no))
		goto out;
	for (uint32_t j = 0; j < h->nbackends; j++) {
		map[j] = n + j;
		for (uint32_t i = 0; i < n && map[j] == n + j; i++)
			if (live_is(lv, bt[j], &r->backends[i].addr))
				map[j] = i;
	}
	for (uint32_t k = 0; k < r->npoints; k++)
		b.owner[k] = r->backend[k];
	if (!kr_ops_image_an_map(buf, &a, no, map))
		err = kr_an_diff(&a, &b, moved, NULL, NULL) ? -ENOMEM : 0;
out:
	kr_an_ring_free(&a);
	kr_an_ring_free(&b);
	free(map);
	free(buf);
	return err;
}

/*
 * The guard against big moves: each ring that would replace its active version says what
 * share of its keys changes server (read back from the active slot and diffed against the
 * built ring); more than the configuration's max_move of one ring's keys at once, and the
 * whole apply is refused before anything is written (-ERANGE, err says how to stage it),
 * unless forced.  A share that cannot be read (no CAP_SYS_ADMIN to read the image back) is
 * left unknown and refuses nothing: the check is a guard rail, not a gate.
 */
static int guard_moves(const struct kr_ops_maps *m, const struct kr_live *lv,
		       const struct kr_config *cfg, const struct kr_ops_apply_opts *o,
		       struct kr_apply_plan *p, struct kr_err *err)
{
	uint64_t limit = (uint64_t)(cfg->max_move * 4294967296.0);
	int rc = 0;

	for (uint32_t i = 0; i < p->nrings; i++) {
		struct kr_plan_ring *pr = &p->rings[i];

		if (pr->act != KR_PLAN_PUBLISH || pr->why == KR_PLAN_WHY_NEW || !pr->ring)
			continue;
		if (ring_moved(m, lv, pr, &pr->moved))
			continue;
		pr->has_moved = true;
		if (pr->moved <= limit || o->force || rc)
			continue;
		kr_errf(err, "ring '%s' would move %.1f%% of its keys at once, more than "
			"max_move %g%%: nothing was changed. Move it gradually through the "
			"standby slot: 'keyrouter ring stage %s -c %s', then 'keyrouter ring "
			"migrate %s --percent P' for growing P, then 'keyrouter ring commit %s' "
			"(or apply --force to move them all now)", pr->unit->name,
			100.0 * (double)pr->moved / 4294967296.0, 100.0 * cfg->max_move,
			pr->unit->name, cfg->file, pr->unit->name, pr->unit->name);
		rc = -ERANGE;
	}
	return rc;
}

int kr_ops_apply(const struct kr_inst *in, const struct kr_config *cfg,
		 const struct kr_ops_apply_opts *o, struct kr_apply_plan *p, struct kr_err *err)
{
	struct kr_ops_maps m;
	struct kr_live *lv;
	int rc;

	memset(p, 0, sizeof(*p));
	lv = calloc(1, sizeof(*lv));
	if (!lv)
		return fail(err, -ENOMEM, "allocate the live state");
	rc = kr_ops_maps_open(in, &m);
	if (rc) {
		free(lv);
		return rc;	/* said by kr_ops_maps_open */
	}
	rc = kr_ops_live_read(in, &m, cfg, lv, err);
	if (!rc)
		rc = kr_apply_plan(cfg, lv, o->stage, p, err);
	if (!rc && !o->stage && !o->plan_only) {
		int n = kr_ops_lint(cfg, lv->loaded_ifindex, &p->live_warnings);

		p->nlive_warnings = n > 0 ? (unsigned)n : 0;
	}
	if (!rc && o->strict && p->nlive_warnings) {
		kr_errf(err, "%u warning%s about this router's network (above, --strict): nothing "
			"was changed", p->nlive_warnings, p->nlive_warnings == 1 ? "" : "s");
		rc = -EBUSY;
	}
	if (!rc && o->strict && p->n.rings_skipped) {
		for (uint32_t i = 0; i < p->nrings; i++)
			if (p->rings[i].act == KR_PLAN_SKIP) {
				kr_errf(err, "ring '%s' differs but is %s (--strict): nothing was "
					"changed; commit or roll it back, then apply",
					p->rings[i].unit->name, kr_sm_state_name(p->rings[i].state));
				break;
			}
		rc = -EBUSY;
	}
	if (!rc && !o->stage && !o->plan_only)
		rc = guard_moves(&m, lv, cfg, o, p, err);
	if (!rc && !o->dry_run)
		rc = kr_ops_apply_exec(in, &m, p, err);
	kr_live_free(lv);
	free(lv);
	kr_ops_maps_close(&m);
	return rc;
}
