/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kr_service_ports (struct kr_service_ports, include/kr_datapath_kern_user.h): per UDP port,
 * whether it has no exact-VIP service, so that the data path can skip the exact lookup.  A
 * set bit must never cover an exact service, so apply writes it in two steps around the
 * services it writes: before them kr_ops_service_ports_clear() only clears the bits of the
 * ports of the exact entries about to be written; after them (and after the removals)
 * kr_ops_service_ports_sync() sets the bits of every port without an exact entry in
 * kr_services as it now is.  ports_fd < 0 (a data path loaded by an older keyrouter,
 * without the map): nothing to do.  0 or -errno.
 */
#ifndef KR_OPS_PORTS_H
#define KR_OPS_PORTS_H

#include <stddef.h>
#include "kr_datapath_kern_user.h"

/* keys: n service keys, `stride` bytes apart (the key of an array of larger entries). */
int kr_ops_service_ports_clear(int ports_fd, const struct kr_service_key *keys, __u32 n,
			       size_t stride);
int kr_ops_service_ports_sync(int ports_fd, int services_fd);

/*
 * kr_port_wild / kr_wild_svcs (include/kr_datapath_kern_user.h): the wildcard service of a
 * port without a hash lookup.  kr_ops_port_wild_clear(), before services are written or
 * removed: the ports of the wildcard keys among `keys` lose their entry (the data path
 * reads kr_services there meanwhile).  kr_ops_port_wild_sync(), after: every wildcard
 * service of kr_services (at most KR_WILD_HALF; the others stay with kr_services) is copied
 * into the half of kr_wild_svcs that no port uses (ports left pointing into it first lose
 * their entry), then each port's entry is pointed at its copy, or cleared.  wild_fd or
 * svcs_fd < 0 (a data path without the maps): nothing to do.  0 or -errno.
 */
int kr_ops_port_wild_clear(int wild_fd, const struct kr_service_key *keys, __u32 n,
			   size_t stride);
int kr_ops_port_wild_sync(int wild_fd, int svcs_fd, int services_fd);

#endif
