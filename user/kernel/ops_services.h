/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Services of a configuration -> the kr_services map (VIP, port, protocol -> ring id,
 * key extractor, forwarding, policies); only the entries that differ are written, and
 * entries the configuration no longer has are removed. */
#ifndef KR_OPS_SERVICES_H
#define KR_OPS_SERVICES_H

#include <linux/types.h>
#include "ops_apply.h"

/* With a keyed hash in the configuration: write its secret into the pinned kr_hash_key (an
 * error when the loaded data path has none).  Before the services that use it. */
int kr_ops_apply_hash_key(const struct kr_inst *in, const struct kr_config *cfg,
			  const struct kr_ops_apply_opts *o);
/* svc_subset: kr_service.subset_id of each service (0: the whole ring). */
int kr_ops_apply_services(int map_fd, const struct kr_config *cfg, const __u32 *svc_ring,
			  const __u32 *svc_subset, const struct kr_ops_apply_opts *o,
			  struct kr_ops_apply_result *res);

/* kr_devices[ifindex] = MAC of every egress device the backends name (and the loaded
 * interface): the source MAC of l2 forwarding. */
void kr_ops_apply_devices(struct kr_inst *in, int map_fd, const struct kr_config *cfg,
			  const struct kr_ops_apply_opts *o, struct kr_ops_apply_result *res);
struct kr_cfg_backend;
__u32 kr_ops_backend_ifindex(const struct kr_cfg_backend *cb);

#endif
