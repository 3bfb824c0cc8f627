// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* kr_service_ports: the UDP ports whose services are all wildcards; kr_port_wild /
 * kr_wild_svcs: their wildcard services by port (see ops_ports.h). */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include "ops_ports.h"

static void port_clear(struct kr_service_ports *sp, const struct kr_service_key *k)
{
	__u32 p = ntohs(k->port);

	if (k->family && k->proto == 17)	/* an exact (VIP, port) UDP entry (the tables
						 * are UDP's: TCP looks in kr_services) */
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

/* A wildcard entry as the data path looks it up: family 0, zero address, UDP. */
static int is_wildcard(const struct kr_service_key *k)
{
	static const __u8 zero[16];

	return !k->family && k->proto == 17 && !memcmp(k->addr, zero, sizeof(zero));
}

int kr_ops_port_wild_clear(int wild_fd, const struct kr_service_key *keys, __u32 n,
			   size_t stride)
{
	__u32 none = 0;

	if (wild_fd < 0)
		return 0;
	for (__u32 i = 0; i < n; i++) {
		const struct kr_service_key *k = (const void *)((const char *)keys + i * stride);
		__u32 p = ntohs(k->port);

		if (is_wildcard(k) && bpf_map_update_elem(wild_fd, &p, &none, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* All of kr_port_wild: one batch read (one lookup per port where batches are refused). */
static int wild_read(int wild_fd, __u32 *cur)
{
	static __u32 keys[KR_PORTS];
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	__u32 count = KR_PORTS, out = 0;

	if (!bpf_map_lookup_batch(wild_fd, NULL, &out, keys, cur, &count, &o) ||
	    (errno == ENOENT && count == KR_PORTS)) {
		for (__u32 i = 0; i < count; i++)	/* an ARRAY answers in key order */
			if (keys[i] != i)
				return -EIO;
		return 0;
	}
	for (__u32 p = 0; p < KR_PORTS; p++)
		if (bpf_map_lookup_elem(wild_fd, &p, &cur[p]))
			return -errno;
	return 0;
}

int kr_ops_port_wild_sync(int wild_fd, int svcs_fd, int services_fd)
{
	static __u32 cur[KR_PORTS], want[KR_PORTS];
	struct kr_service_key k, next;
	struct kr_service v;
	__u32 used[2] = { 0, 0 }, h, n = 0, none = 0;
	void *pk = NULL;
	int rc;

	if (wild_fd < 0 || svcs_fd < 0)
		return 0;
	rc = wild_read(wild_fd, cur);
	if (rc)
		return rc;
	for (__u32 p = 0; p < KR_PORTS; p++)
		if (cur[p])
			used[(cur[p] - 1) >= KR_WILD_HALF]++;
	h = used[0] <= used[1] ? 0 : 1;	/* normally all use one half: write the other */
	for (__u32 p = 0; p < KR_PORTS; p++) {
		if (cur[p] && ((cur[p] - 1) >= KR_WILD_HALF) == h) {
			if (bpf_map_update_elem(wild_fd, &p, &none, BPF_ANY))
				return -errno;
			cur[p] = 0;
		}
	}
	memset(want, 0, sizeof(want));
	while (!bpf_map_get_next_key(services_fd, pk, &next)) {
		k = next;
		pk = &k;
		if (!is_wildcard(&k) || n == KR_WILD_HALF)
			continue;
		if (bpf_map_lookup_elem(services_fd, &k, &v)) {
			if (errno == ENOENT)
				continue;
			return -errno;
		}
		want[ntohs(k.port)] = h * KR_WILD_HALF + n + 1;
		if (bpf_map_update_elem(svcs_fd, &(__u32){ h * KR_WILD_HALF + n }, &v, BPF_ANY))
			return -errno;
		n++;
	}
	if (errno != ENOENT)
		return -errno;
	for (__u32 p = 0; p < KR_PORTS; p++)
		if (want[p] != cur[p] && bpf_map_update_elem(wild_fd, &p, &want[p], BPF_ANY))
			return -errno;
	return 0;
}
