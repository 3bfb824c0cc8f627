// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Per-service counters by name (ops_svcstats.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "addr.h"
#include "ops_svcstats.h"

static void vip_of(const struct kr_service_key *k, char *buf, size_t len)
{
	struct kr_sockaddr sa = { .family = k->family, .port = ntohs(k->port) };
	char a[KR_SOCKADDR_STRLEN];

	memcpy(sa.ip, k->addr, 16);
	if (sa.family)
		kr_sockaddr_format(&sa, a);
	else
		snprintf(a, sizeof(a), "*:%u", sa.port);
	snprintf(buf, len, "%s", a);
}

void kr_ops_svc_name(int names_fd, __u32 id, char *buf, size_t len)
{
	struct kr_svc_name e = { 0 };

	if (names_fd < 0 || bpf_map_lookup_elem(names_fd, &id, &e) || !e.name[0])
		snprintf(buf, len, id ? "#%u" : "(unnamed)", id);
	else
		snprintf(buf, len, "%.*s", KR_SVC_NAME_MAX - 1, e.name);
}

int kr_ops_svc_find(const struct kr_inst *in, const char *name)
{
	int fd = kr_ops_map_open(in, KR_MAP_SVC_NAMES, true), found = -ENOENT;

	if (fd < 0)
		return fd;
	for (__u32 id = 1; id < KR_MAX_SVC_STATS && found < 0; id++) {
		struct kr_svc_name e;

		if (!bpf_map_lookup_elem(fd, &id, &e) && e.name[0] &&
		    !strncmp(e.name, name, KR_SVC_NAME_MAX))
			found = (int)id;
	}
	close(fd);
	return found;
}

int kr_ops_svc_read(const struct kr_inst *in, const struct kr_ops_maps *m,
		    struct kr_ops_svc **out, unsigned *n)
{
	int nfd = kr_ops_map_open(in, KR_MAP_SVC_NAMES, true);
	int sfd = kr_ops_map_open(in, KR_MAP_SVC_STATS, true);
	struct kr_ops_svc *v = NULL;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (nfd < 0 || sfd < 0) {
		err = -ENOENT;
		goto out;
	}
	for (__u32 id = 0; id < KR_MAX_SVC_STATS; id++) {
		struct kr_svc_name e = { 0 };
		struct kr_ops_svc s = { .id = id };

		if (bpf_map_lookup_elem(nfd, &id, &e)) {
			err = -errno;
			break;
		}
		if (id && !e.name[0])
			continue;
		err = kr_ops_percpu_sum(m, sfd, id, &s.c, sizeof(s.c));
		if (err)
			break;
		if (!id && !s.c.packets)
			continue;
		snprintf(s.name, sizeof(s.name), "%.*s", KR_SVC_NAME_MAX - 1,
			 id ? e.name : "(unnamed)");
		s.key = e.key;
		if (id)
			vip_of(&e.key, s.vip, sizeof(s.vip));
		else
			snprintf(s.vip, sizeof(s.vip), "-");
		if (!(*n % 16)) {
			struct kr_ops_svc *nv = realloc(v, (*n + 16) * sizeof(*v));

			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[(*n)++] = s;
	}
out:
	if (nfd >= 0)
		close(nfd);
	if (sfd >= 0)
		close(sfd);
	if (err) {
		free(v);
		*n = 0;
		return err;
	}
	*out = v;
	return 0;
}
