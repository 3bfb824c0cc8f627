// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* QUIC-LB in apply (see ops_quic_lb.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "ops_quic_lb.h"

struct qlb_want {
	struct kr_qlb_sid_key *k;
	struct kr_qlb_sid_val *v;
	uint32_t n, cap;
};

static int want_add(struct qlb_want *w, const struct kr_qlb_sid_key *k,
		    const struct kr_qlb_sid_val *v)
{
	if (w->n == w->cap) {
		uint32_t cap = w->cap ? 2 * w->cap : 64;
		struct kr_qlb_sid_key *nk = realloc(w->k, cap * sizeof(*nk));
		struct kr_qlb_sid_val *nv;

		if (!nk)
			return -ENOMEM;
		w->k = nk;
		nv = realloc(w->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		w->v = nv;
		w->cap = cap;
	}
	w->k[w->n] = *k;
	w->v[w->n] = *v;
	w->n++;
	return 0;
}

/* Every server-ID entry the configuration wants (backend ids from the applied units);
 * only_unit >= 0: only those of the services on that unit (a ring stage). */
static int want_build(const struct kr_config *cfg, const struct kr_units *us,
		      int only_unit, struct qlb_want *w, struct kr_err *err)
{
	uint32_t nid = 0;

	for (uint32_t si = 0; si < cfg->nservices; si++) {
		const struct kr_cfg_service *s = &cfg->services[si];
		const struct kr_unit *u;
		uint16_t id, tag;

		if (!s->nqlb)
			continue;
		if (++nid >= KR_QLB_MAX_SERVICES) {
			kr_errf(err, "%u services with \"quic_lb\": the data path has room for %u",
				nid, KR_QLB_MAX_SERVICES - 1);
			return -E2BIG;
		}
		if (only_unit >= 0 && us->svc_unit[si] != (uint32_t)only_unit)
			continue;
		id = kr_qlb_service_id(cfg, si);
		tag = kr_qlb_service_tag(s->name);
		u = &us->u[us->svc_unit[si]];
		for (uint32_t k = 0; k < u->n; k++) {
			const struct kr_cfg_backend *b = &u->ring->backends[u->idx[k]];

			if (!kr_cfg_in_subset(s, b) || !u->gid)
				continue;
			for (uint32_t j = 0; j < b->nqlb_sids; j++) {
				struct kr_qlb_sid_key key = { .qlb_id = id, .cr = b->qlb_sids[j].cr,
							      .sid_len = b->qlb_sids[j].len };
				struct kr_qlb_sid_val val = { .backend_id = u->gid[k], .tag = tag };

				if (!kr_cfg_qlb_find(s, key.cr))
					continue;
				memcpy(key.sid, b->qlb_sids[j].id, key.sid_len);
				if (want_add(w, &key, &val)) {
					kr_errf(err, "out of memory");
					return -ENOMEM;
				}
			}
		}
	}
	return 0;
}

static void want_free(struct qlb_want *w)
{
	free(w->k);
	free(w->v);
}

/* Maps of the loaded data path; -ENOENT (reported) when it has none and cfg needs them. */
static int open_maps(const struct kr_inst *in, const struct kr_config *cfg, int *conf_fd,
		     int *srv_fd, struct kr_err *err)
{
	bool needed = false;

	for (uint32_t i = 0; i < cfg->nservices; i++)
		needed = needed || cfg->services[i].nqlb;
	*conf_fd = kr_ops_map_open(in, KR_MAP_QLB_CONFIGS, true);
	*srv_fd = kr_ops_map_open(in, KR_MAP_QLB_SERVERS, true);
	if (*conf_fd >= 0 && *srv_fd >= 0)
		return 0;
	if (*conf_fd >= 0)
		close(*conf_fd);
	if (*srv_fd >= 0)
		close(*srv_fd);
	*conf_fd = *srv_fd = -1;
	if (!needed)
		return 1;	/* nothing to do */
	kr_errf(err, "the configuration has \"quic_lb\", but the loaded data path has no QUIC-LB "
		"maps in '%s' (loaded by an older keyrouter?): unload and load again", in->dir);
	return -ENOENT;
}

int kr_ops_apply_quic_lb(const struct kr_inst *in, const struct kr_config *cfg,
			 const struct kr_units *us, struct kr_err *err_out)
{
	struct qlb_want w = {};
	int conf_fd, srv_fd, err;

	err = open_maps(in, cfg, &conf_fd, &srv_fd, err_out);
	if (err)
		return err > 0 ? 0 : err;
	err = want_build(cfg, us, -1, &w, err_out);
	/* configurations first: a server ID entry is only reached through its config */
	for (uint32_t si = 0; !err && si < cfg->nservices; si++) {
		const struct kr_cfg_service *s = &cfg->services[si];
		uint16_t id = kr_qlb_service_id(cfg, si), tag;

		if (!id)
			continue;
		tag = kr_qlb_service_tag(s->name);
		for (unsigned cr = 0; cr < KR_QLB_CONF_SLOTS; cr++) {
			const struct kr_cfg_qlb *q = kr_cfg_qlb_find(s, cr);
			struct kr_qlb_conf v = {}, cur;
			__u32 key = kr_qlb_conf_index(id, cr);

			if (q)
				kr_qlb_conf_from_cfg(q, tag, &v);
			if (!bpf_map_lookup_elem(conf_fd, &key, &cur) && !memcmp(&cur, &v, sizeof(v)))
				continue;
			if (bpf_map_update_elem(conf_fd, &key, &v, BPF_ANY)) {
				err = -errno;
				kr_errf(err_out, "couldn't write QUIC-LB configuration %u of service "
					"'%s': %s", cr, s->name, strerror(-err));
			}
			memset(&v, 0, sizeof(v));
			memset(&cur, 0, sizeof(cur));
		}
	}
	for (uint32_t i = 0; !err && i < w.n; i++) {
		struct kr_qlb_sid_val cur;

		if (!bpf_map_lookup_elem(srv_fd, &w.k[i], &cur) && !memcmp(&cur, &w.v[i], sizeof(cur)))
			continue;
		if (bpf_map_update_elem(srv_fd, &w.k[i], &w.v[i], BPF_ANY)) {
			err = -errno;
			kr_errf(err_out, "couldn't write a QUIC-LB server ID: %s%s", strerror(-err),
				err == -E2BIG ? " (kr_qlb_servers is full)" : "");
		}
	}
	want_free(&w);
	close(conf_fd);
	close(srv_fd);
	return err;
}

int kr_ops_apply_quic_lb_gc(const struct kr_inst *in, const struct kr_config *cfg,
			    const struct kr_units *us, struct kr_err *err_out)
{
	struct kr_qlb_sid_key k, next;
	struct qlb_want w = {};
	int conf_fd, srv_fd, err;
	void *pk = NULL;

	err = open_maps(in, cfg, &conf_fd, &srv_fd, err_out);
	if (err)
		return err > 0 ? 0 : err;
	err = want_build(cfg, us, -1, &w, err_out);
	while (!err && !bpf_map_get_next_key(srv_fd, pk, &next)) {
		bool keep = false;

		for (uint32_t i = 0; i < w.n && !keep; i++)
			keep = !memcmp(&w.k[i], &next, sizeof(next));
		k = next;
		pk = &k;
		if (keep)
			continue;
		if (bpf_map_delete_elem(srv_fd, &k) && errno != ENOENT) {
			err = -errno;
			kr_errf(err_out, "couldn't remove a QUIC-LB server ID: %s", strerror(-err));
		}
		pk = NULL;	/* restart: the deleted key cannot lead us further */
	}
	/* configurations of QUIC-LB ids no service has any more */
	for (uint32_t id = 1; !err && id < KR_QLB_MAX_SERVICES; id++) {
		bool used = false;

		for (uint32_t si = 0; si < cfg->nservices && !used; si++)
			used = kr_qlb_service_id(cfg, si) == id;
		if (used)
			continue;
		for (unsigned cr = 0; cr < KR_QLB_CONF_SLOTS; cr++) {
			struct kr_qlb_conf v = {}, cur;
			__u32 key = kr_qlb_conf_index(id, cr);

			if (bpf_map_lookup_elem(conf_fd, &key, &cur) || !cur.valid)
				continue;
			if (bpf_map_update_elem(conf_fd, &key, &v, BPF_ANY)) {
				err = -errno;
				kr_errf(err_out, "couldn't clear a QUIC-LB configuration: %s",
					strerror(-err));
			}
		}
	}
	want_free(&w);
	close(conf_fd);
	close(srv_fd);
	return err;
}

int kr_ops_stage_quic_lb(const struct kr_inst *in, const struct kr_config *cfg,
			 const struct kr_units *us, uint32_t unit, struct kr_err *err_out)
{
	struct qlb_want w = {};
	int conf_fd, srv_fd, err;

	err = open_maps(in, cfg, &conf_fd, &srv_fd, err_out);
	if (err)
		return err > 0 ? 0 : err;
	err = want_build(cfg, us, (int)unit, &w, err_out);
	/* adds only: an entry that exists stays as the active configuration wrote it */
	for (uint32_t i = 0; !err && i < w.n; i++) {
		struct kr_qlb_sid_val cur;

		if (!bpf_map_lookup_elem(srv_fd, &w.k[i], &cur))
			continue;
		if (bpf_map_update_elem(srv_fd, &w.k[i], &w.v[i], BPF_NOEXIST) && errno != EEXIST) {
			err = -errno;
			kr_errf(err_out, "couldn't write a QUIC-LB server ID: %s%s", strerror(-err),
				err == -E2BIG ? " (kr_qlb_servers is full)" : "");
		}
	}
	want_free(&w);
	close(conf_fd);
	close(srv_fd);
	return err;
}
