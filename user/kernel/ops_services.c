// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Services: config services -> the kr_services map (see ops_services.h). */
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
#include "config.h"
#include "log.h"
#include "ops_services.h"
#include "kr_siphash.h"

__u32 kr_ops_backend_ifindex(const struct kr_cfg_backend *cb)
{
	if (cb->ifindex)
		return cb->ifindex;
	return cb->dev[0] ? if_nametoindex(cb->dev) : 0;
}

static void service_entry(const struct kr_cfg_service *s, __u32 ring_id,
			  struct kr_service_key *k, struct kr_service *v)
{
	memset(k, 0, sizeof(*k));
	memset(v, 0, sizeof(*v));
	if (!s->vip_any) {
		memcpy(k->addr, s->vip.ip, 16);
		k->family = s->vip.family;
	}
	k->port = htons(s->port);
	k->proto = s->protocol;
	v->ring_id = ring_id;
	v->key_type = s->key.type;
	v->fwd_mode = s->fwd.mode;
	v->policy_no_key = s->policy.no_key;
	v->policy_too_long = s->policy.key_too_long;
	v->policy_no_route = s->policy.all_down;
	v->quic_cid_len = s->key.cid_length;
	if (s->key.delimiter >= 0) {
		v->flags |= KR_SVC_F_PAYLOAD_DELIM;
		v->payload_delim = s->key.delimiter;
	}
	v->payload_off = s->key.offset;
	v->payload_len = s->key.length;
	if (s->fwd.has_source4)
		memcpy(v->tun_src4, s->fwd.source4, 4);
	if (s->fwd.has_source6)
		memcpy(v->tun_src6, s->fwd.source6, 16);
}

int kr_ops_apply_hash_key(const struct kr_inst *in, const struct kr_config *cfg,
			  const struct kr_ops_apply_opts *o)
{
	struct kr_hash_secret k, cur;
	__u32 zero = 0;
	int fd, err = 0;

	if (!cfg->hash.keyed)
		return 0;
	fd = kr_ops_map_open(in, "kr_hash_key", true);
	if (fd < 0) {
		pr_warn("keyrouter: the configuration asks for the keyed hash, but the loaded data "
			"path has no map kr_hash_key in '%s' (loaded by an older keyrouter?): "
			"unload and load again\n", in->dir);
		return fd;
	}
	kr_hash_secret_from_bytes(&k, cfg->hash.secret);
	if (!o->dry_run && (bpf_map_lookup_elem(fd, &zero, &cur) || memcmp(&cur, &k, sizeof(k))) &&
	    bpf_map_update_elem(fd, &zero, &k, BPF_ANY)) {
		err = -errno;
		pr_warn("keyrouter: couldn't write the keyed-hash secret: %s\n", strerror(-err));
	}
	memset(&k, 0, sizeof(k));
	memset(&cur, 0, sizeof(cur));
	close(fd);
	return err;
}

int kr_ops_apply_services(int map_fd, const struct kr_config *cfg, const __u32 *svc_ring,
			  const __u32 *svc_subset, const struct kr_ops_apply_opts *o,
			  struct kr_ops_apply_result *res)
{
	struct kr_service_key *keys;
	struct kr_service_key k, next;
	struct kr_service v, cur;
	__u32 n = cfg->nservices;
	int err = 0;
	void *pk = NULL;

	keys = calloc(n ? n : 1, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (__u32 i = 0; i < n; i++) {
		const struct kr_cfg_service *s = &cfg->services[i];

		service_entry(s, svc_ring[i], &keys[i], &v);
		v.subset_id = svc_subset[i];
		if (cfg->hash.keyed)	/* the secret is in kr_hash_key (kr_ops_apply_hash_key) */
			v.flags |= KR_SVC_F_KEYED_HASH;
		if (!bpf_map_lookup_elem(map_fd, &keys[i], &cur)) {
			if (!memcmp(&cur, &v, sizeof(v))) {
				res->services_same++;
				continue;
			}
			res->services_changed++;
		} else {
			res->services_added++;
		}
		if (!o->dry_run && bpf_map_update_elem(map_fd, &keys[i], &v, BPF_ANY)) {
			err = -errno;
			pr_warn("keyrouter: couldn't write service '%s': %s\n", s->name,
				strerror(-err));
			goto out;
		}
	}
	/* Remove what the config no longer has (next key first: deleting while iterating). */
	while (!bpf_map_get_next_key(map_fd, pk, &next)) {
		bool keep = false;

		for (__u32 i = 0; i < n && !keep; i++)
			keep = !memcmp(&keys[i], &next, sizeof(next));
		k = next;
		pk = &k;
		if (keep)
			continue;
		res->services_removed++;
		if (!o->dry_run && bpf_map_delete_elem(map_fd, &k) && errno != ENOENT) {
			err = -errno;
			pr_warn("keyrouter: couldn't remove a service: %s\n", strerror(-err));
			goto out;
		}
		pk = NULL;	/* restart: the deleted key cannot lead us further */
	}
out:
	free(keys);
	return err;
}

/* kr_devices[ifindex] = the device's MAC (source MAC of l2 forwarding). */
void kr_ops_apply_devices(struct kr_inst *in, int map_fd, const struct kr_config *cfg,
			  const struct kr_ops_apply_opts *o, struct kr_ops_apply_result *res)
{
	struct kr_ops_meta meta = {};
	__u32 key = 0;
	int sock;

	if (map_fd < 0 || o->dry_run)
		return;
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return;
	bpf_map_lookup_elem(in->meta_fd, &key, &meta);
	for (__u32 r = 0; r <= cfg->nrings; r++) {
		__u32 nb = r < cfg->nrings ? cfg->rings[r].nbackends : 1;

		for (__u32 b = 0; b < nb; b++) {
			__u32 ifindex = r < cfg->nrings ? kr_ops_backend_ifindex(&cfg->rings[r].backends[b])
							   : meta.ifindex;
			struct kr_device dev = {}, cur = {};
			struct ifreq ifr = {};

			if (!ifindex || !if_indextoname(ifindex, ifr.ifr_name) ||
			    ioctl(sock, SIOCGIFHWADDR, &ifr))
				continue;
			memcpy(dev.mac, ifr.ifr_hwaddr.sa_data, 6);
			if (!bpf_map_lookup_elem(map_fd, &ifindex, &cur) &&
			    !memcmp(&cur, &dev, sizeof(dev)))
				continue;
			if (!bpf_map_update_elem(map_fd, &ifindex, &dev, BPF_ANY))
				res->devices_changed++;
		}
	}
	close(sock);
}
