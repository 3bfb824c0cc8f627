// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* kr_service_ports: the UDP ports whose services are all wildcards (see ops_ports.h). */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include "ops_ports.h"

static void port_clear(struct kr_service_ports *sp, const struct kr_service_key *k)
{
	__u32 p = ntohs(k->port);

	if (k->family)	/* an exact (VIP, port) entry */
		sp->no_exact[p >> 6] &= ~(1ull << (p & 63));
}

static int ports_put(int ports_fd, const struct kr_service_ports *want,
		     const struct kr_service_ports *cur)
{
	__u32 zero = 0;

	if (!memcmp(cur, want, sizeof(*cur)))
		return 0;
	return bpf_map_update_elem(ports_fd, &zero, want, BPF_ANY) ? -errno : 0;
}

int kr_ops_service_ports_clear(int ports_fd, const struct kr_service_key *keys, __u32 n,
			       size_t stride)
{
	static struct kr_service_ports cur, want;	/* 8 KiB each: not on the stack */
	__u32 zero = 0;

	if (ports_fd < 0)
		return 0;
	if (bpf_map_lookup_elem(ports_fd, &zero, &cur))
		return -errno;
	want = cur;
	for (__u32 i = 0; i < n; i++)
		port_clear(&want, (const void *)((const char *)keys + i * stride));
	return ports_put(ports_fd, &want, &cur);
}

int kr_ops_service_ports_sync(int ports_fd, int services_fd)
{
	static struct kr_service_ports cur, want;
	struct kr_service_key k, next;
	void *pk = NULL;
	__u32 zero = 0;

	if (ports_fd < 0)
		return 0;
	if (bpf_map_lookup_elem(ports_fd, &zero, &cur))
		return -errno;
	memset(want.no_exact, 0xff, sizeof(want.no_exact));
	while (!bpf_map_get_next_key(services_fd, pk, &next)) {
		port_clear(&want, &next);
		k = next;
		pk = &k;
	}
	if (errno != ENOENT)
		return -errno;
	return ports_put(ports_fd, &want, &cur);
}
