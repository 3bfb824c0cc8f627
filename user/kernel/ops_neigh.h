/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the router's own network stack knows about a configuration's addresses, asked in the
 * caller's network namespace (rtnetlink, getifaddrs): the neighbour entry of a backend's
 * address, the device the kernel routes it through, whether an address is the router's
 * own.  The checks of apply and `config check --live` (ops_lint.h) compare them with what
 * the configuration says.
 */
#ifndef KR_OPS_NEIGH_H
#define KR_OPS_NEIGH_H

#include <stdbool.h>
#include <stdint.h>

/* The link-layer address of the neighbour entry of ADDR (family 4 or 6) on device ifindex
 * (0: any device), in a state that carries one (reachable, stale, delay, probe, permanent,
 * noarp).  1 found (mac set, *dev its device), 0 none, -errno. */
int kr_ops_neigh_mac(int family, const uint8_t *addr, uint32_t ifindex, uint8_t mac[6],
		     uint32_t *dev);
/* The output device of the kernel's route to ADDR.  0 (*ifindex set), -errno (-ENETUNREACH:
 * no route). */
int kr_ops_route_dev(int family, const uint8_t *addr, uint32_t *ifindex);
/* Is ADDR one of this namespace's own addresses (any device)?  1 yes, 0 no, -errno. */
int kr_ops_addr_local(int family, const uint8_t *addr);

#endif
