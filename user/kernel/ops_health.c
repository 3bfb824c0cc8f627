// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The health checker's pinned state (see ops_health.h). */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "log.h"
#include "ops_health.h"
#include "apply_plan.h"

__u64 kr_health_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

const char *kr_backend_owner_name(__u8 owner)
{
	switch (owner) {
	case KR_OWNER_OPERATOR: return "operator";
	case KR_OWNER_CHECKER: return "checker";
	default: return "config";
	}
}

void kr_health_maps_close(struct kr_health_maps *h)
{
	int *fds[] = { &h->set, &h->be, &h->ck, &h->rings, &h->damp, &h->wd };

	for (unsigned i = 0; i < 6; i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int kr_health_maps_open(const struct kr_inst *in, const struct kr_ops_maps *m, bool create,
			struct kr_health_maps *h)
{
	h->set = h->be = h->ck = h->rings = h->damp = h->wd = -1;
	h->max = m->backends_max;
	h->set = kr_ops_tool_map(in, KR_OPS_MAP_HEALTH_SET, sizeof(struct kr_health_set),
				 h->max, create);
	h->be = kr_ops_tool_map(in, KR_OPS_MAP_HEALTH, sizeof(struct kr_health_be), h->max,
				create);
	h->ck = kr_ops_tool_map(in, KR_OPS_MAP_HEALTH_CK, sizeof(struct kr_health_ck), 1, create);
	h->rings = kr_ops_tool_map(in, KR_OPS_MAP_HEALTH_RINGS, sizeof(struct kr_health_ring),
				   KR_MAX_RINGS, create);
	h->damp = kr_ops_tool_map(in, KR_OPS_MAP_HEALTH_DAMP, sizeof(struct kr_health_damp),
				  h->max, create);
	h->wd = kr_ops_tool_map(in, KR_OPS_MAP_HEALTH_WD, sizeof(struct kr_health_wd), 1, create);
	if (create && (h->set < 0 || h->be < 0 || h->ck < 0 || h->rings < 0 || h->damp < 0 ||
		       h->wd < 0)) {
		int err = h->set < 0 ? h->set : h->be < 0 ? h->be : h->ck < 0 ? h->ck :
			  h->rings < 0 ? h->rings : h->damp < 0 ? h->damp : h->wd;

		kr_health_maps_close(h);
		return err;
	}
	return 0;
}

void kr_health_note_apply(const struct kr_inst *in, const struct kr_plan_backend *b, __u32 n)
{
	int fd = n ? kr_ops_map_open(in, KR_OPS_MAP_HEALTH_SET, true) : -1;
	__u64 now = kr_health_now_ns();

	if (fd < 0)
		return;
	for (__u32 i = 0; i < n; i++) {
		struct kr_health_set cur = {}, rec = { .since_ns = now, .state = b[i].v.state,
						       .owner = KR_OWNER_CONFIG };

		if (kr_backend_owner(&b[i].v) != KR_OWNER_CONFIG ||
		    (!bpf_map_lookup_elem(fd, &b[i].id, &cur) && cur.since_ns &&
		     cur.state == rec.state && cur.owner == rec.owner))
			continue;
		bpf_map_update_elem(fd, &b[i].id, &rec, BPF_EXIST);
	}
	close(fd);
}

int kr_health_write_state(const struct kr_ops_maps *m, const struct kr_health_maps *h,
			  __u32 id, struct kr_backend *be, __u8 state, __u8 owner)
{
	struct kr_health_set rec = { .since_ns = kr_health_now_ns(), .state = state,
				     .owner = owner };

	be->state = state;
	be->flags = (be->flags & ~KR_BACKEND_F_OWNER) | (owner & KR_BACKEND_F_OWNER);
	if (bpf_map_update_elem(m->backends, &id, be, BPF_EXIST))
		return -errno;
	if (h && h->set >= 0 && id < h->max && bpf_map_update_elem(h->set, &id, &rec, BPF_ANY))
		pr_warn("keyrouter: backend id %u: state written, but not when (%s)\n", id,
			strerror(errno));
	return 0;
}
