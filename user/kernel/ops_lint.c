// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The configuration against the router's network stack (ops_lint.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include "addr.h"
#include "ops_lint.h"
#include "ops_neigh.h"

struct lint {
	const struct kr_config *cfg;
	char *text;
	size_t len;
	int n;
	bool oom;
};

static void warn(struct lint *l, const char *path, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	size_t need;
	char *t;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	need = strlen(l->cfg->file) + strlen(path) + strlen(msg) + 16;
	t = realloc(l->text, l->len + need);
	if (!t) {
		l->oom = true;
		return;
	}
	l->text = t;
	l->len += (size_t)snprintf(t + l->len, need, "%s: %s: warning: %s\n", l->cfg->file,
				   path, msg);
	l->n++;
}

static const char *ifname(uint32_t ifindex, char buf[32])
{
	if (!ifindex || !if_indextoname(ifindex, buf))
		snprintf(buf, 32, "ifindex %u", ifindex);
	return buf;
}

/* The device l2 forwarding sends backend b's frames out of: its "dev" / "ifindex", else
 * the ingress device (0: unknown). */
static uint32_t egress_of(const struct kr_cfg_backend *b, uint32_t ingress)
{
	if (b->ifindex)
		return b->ifindex;
	if (b->dev[0])
		return if_nametoindex(b->dev);
	return ingress;
}

/* Has an earlier backend of the rings the same address (so it was checked already)? */
static bool seen_before(const struct kr_config *cfg, uint32_t r, uint32_t i)
{
	const struct kr_cfg_backend *x = &cfg->rings[r].backends[i];

	for (uint32_t r2 = 0; r2 <= r; r2++)
		for (uint32_t j = 0; j < (r2 == r ? i : cfg->rings[r2].nbackends); j++)
			if (!kr_sockaddr_cmp(&cfg->rings[r2].backends[j].addr, &x->addr))
				return true;
	return false;
}

static void lint_macs(struct lint *l, uint32_t ingress)
{
	const struct kr_config *cfg = l->cfg;
	char a[KR_IP_STRLEN], path[96], dn[32];
	uint8_t mac[6];
	uint32_t dev;

	for (uint32_t r = 0; r < cfg->nrings; r++)
		for (uint32_t i = 0; i < cfg->rings[r].nbackends; i++) {
			const struct kr_cfg_backend *b = &cfg->rings[r].backends[i];

			if (!b->has_mac || seen_before(cfg, r, i) ||
			    kr_ops_neigh_mac(b->addr.family, b->addr.ip, egress_of(b, ingress),
					     mac, &dev) != 1 || !memcmp(mac, b->mac, 6))
				continue;
			kr_ip_format(&b->addr, a);
			snprintf(path, sizeof(path), "rings[%u].backends[%u].mac", r, i);
			warn(l, path, "backend %s has MAC %02x:%02x:%02x:%02x:%02x:%02x here, but the "
			     "router's neighbour entry for %s on %s says "
			     "%02x:%02x:%02x:%02x:%02x:%02x: l2 forwarding would send its keys to "
			     "another host (or to none)", a, b->mac[0], b->mac[1], b->mac[2],
			     b->mac[3], b->mac[4], b->mac[5], a, ifname(dev, dn), mac[0], mac[1],
			     mac[2], mac[3], mac[4], mac[5]);
		}
}

/* l2 services whose backends name no device: their frames leave by the ingress device;
 * warned when the router's own route to the backend goes out of another device. */
static void lint_egress(struct lint *l, uint32_t ingress)
{
	const struct kr_config *cfg = l->cfg;
	char a[KR_IP_STRLEN], path[96], in[32], out[32];
	uint32_t oif;

	if (!ingress)
		return;
	for (uint32_t s = 0; s < cfg->nservices; s++) {
		const struct kr_cfg_service *sv = &cfg->services[s];
		const struct kr_cfg_ring *r = &cfg->rings[sv->ring];

		if (sv->fwd.mode != KR_FWD_L2)
			continue;
		for (uint32_t i = 0; i < r->nbackends; i++) {
			const struct kr_cfg_backend *b = &r->backends[i];

			if (b->dev[0] || b->ifindex || !kr_cfg_in_subset(sv, b) ||
			    kr_ops_route_dev(b->addr.family, b->addr.ip, &oif) || oif == ingress)
				continue;
			kr_ip_format(&b->addr, a);
			snprintf(path, sizeof(path), "rings[%u].backends[%u].dev", sv->ring, i);
			warn(l, path, "service '%s' forwards l2 and backend %s names no \"dev\": its "
			     "frames go back out of the ingress device %s, but the router reaches "
			     "%s through %s (give it \"dev\": \"%s\")", sv->name, a,
			     ifname(ingress, in), a, ifname(oif, out), out);
		}
	}
}

static void lint_vips(struct lint *l)
{
	const struct kr_config *cfg = l->cfg;
	char a[KR_IP_STRLEN], path[64];

	for (uint32_t s = 0; s < cfg->nservices; s++) {
		const struct kr_cfg_service *sv = &cfg->services[s];

		if (sv->vip_any || kr_ops_addr_local(sv->vip.family, sv->vip.ip) != 1)
			continue;
		kr_ip_format(&sv->vip, a);
		snprintf(path, sizeof(path), "services[%u].vip", s);
		warn(l, path, "service '%s': %s is an address of this router: keyrouter sends its "
		     "packets on to the backends, so a local daemon listening on %s port %u no "
		     "longer receives them", sv->name, a, a, sv->port);
	}
}

int kr_ops_lint(const struct kr_config *cfg, uint32_t ingress_ifindex, char **text)
{
	struct lint l = { .cfg = cfg };

	lint_macs(&l, ingress_ifindex);
	lint_egress(&l, ingress_ifindex);
	lint_vips(&l);
	if (l.oom) {
		free(l.text);
		*text = NULL;
		return -ENOMEM;
	}
	*text = l.text;
	return l.n;
}
