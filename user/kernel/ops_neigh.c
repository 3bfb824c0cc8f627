// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Neighbours, routes and local addresses of the caller's network namespace (ops_neigh.h). */
#include <errno.h>
#include <ifaddrs.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "ops_neigh.h"

static int addr_len(int family)
{
	return family == 4 ? 4 : 16;
}

static int af(int family)
{
	return family == 4 ? AF_INET : AF_INET6;
}

/* Send the request REQ (len bytes) on a new rtnetlink socket and hand each reply message to
 * fn until the dump ends (NLMSG_DONE) or a single reply came; fn returns non-zero to stop
 * with that value.  0, fn's value, or -errno (an NLMSG_ERROR's too). */
static int rtnl_talk(void *req, size_t len, bool dump,
		     int (*fn)(const struct nlmsghdr *h, void *arg), void *arg)
{
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd, rc = 0;
	bool done = false;

	struct timeval tv = { .tv_sec = 1 };

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	/* a kernel that never answers is an error, not a hung apply */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, req, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		goto out;
	}
	while (!done && !rc) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n <= 0) {
			rc = n == 0 ? -EIO : errno == EINTR ? 0 : -errno;
			continue;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				rc = e->error;
				done = true;
				break;
			}
			rc = fn(h, arg);
			if (rc || !dump) {
				done = true;
				break;
			}
		}
	}
out:
	close(fd);
	return rc;
}

struct neigh_q {
	int family;
	const uint8_t *addr;
	uint32_t ifindex;
	uint8_t *mac;
	uint32_t *dev;
};

static int neigh_one(const struct nlmsghdr *h, void *arg)
{
	const struct neigh_q *q = arg;
	const struct ndmsg *nd = NLMSG_DATA(h);
	const uint8_t *dst = NULL, *ll = NULL;
	int len = (int)RTM_PAYLOAD(h), lllen = 0;
	const struct rtattr *a;

	if (h->nlmsg_type != RTM_NEWNEIGH || nd->ndm_family != af(q->family) ||
	    (q->ifindex && (uint32_t)nd->ndm_ifindex != q->ifindex) ||
	    !(nd->ndm_state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE |
			       NUD_PERMANENT | NUD_NOARP)))
		return 0;
	for (a = (const struct rtattr *)((const char *)nd + NLMSG_ALIGN(sizeof(*nd)));
	     RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == NDA_DST && RTA_PAYLOAD(a) == (unsigned)addr_len(q->family))
			dst = RTA_DATA(a);
		else if (a->rta_type == NDA_LLADDR) {
			ll = RTA_DATA(a);
			lllen = (int)RTA_PAYLOAD(a);
		}
	}
	if (!dst || !ll || lllen != 6 || memcmp(dst, q->addr, addr_len(q->family)))
		return 0;
	memcpy(q->mac, ll, 6);
	*q->dev = (uint32_t)nd->ndm_ifindex;
	return 1;
}

int kr_ops_neigh_mac(int family, const uint8_t *addr, uint32_t ifindex, uint8_t mac[6],
		     uint32_t *dev)
{
	struct {
		struct nlmsghdr h;
		struct ndmsg nd;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETNEIGH,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
		.nd = { .ndm_family = (uint8_t)af(family) },
	};
	struct neigh_q q = { family, addr, ifindex, mac, dev };

	return rtnl_talk(&req, sizeof(req), true, neigh_one, &q);
}

static int route_one(const struct nlmsghdr *h, void *arg)
{
	const struct rtmsg *rt = NLMSG_DATA(h);
	int len = (int)RTM_PAYLOAD(h);
	const struct rtattr *a;

	if (h->nlmsg_type != RTM_NEWROUTE)
		return 0;
	for (a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) == sizeof(uint32_t)) {
			memcpy(arg, RTA_DATA(a), sizeof(uint32_t));
			return 1;
		}
	return -ENETUNREACH;
}

int kr_ops_route_dev(int family, const uint8_t *addr, uint32_t *ifindex)
{
	struct {
		struct nlmsghdr h;
		struct rtmsg rt;
		struct rtattr a;
		uint8_t dst[16];
	} req = {
		.h = { .nlmsg_type = RTM_GETROUTE, .nlmsg_flags = NLM_F_REQUEST, .nlmsg_seq = 1 },
		.rt = { .rtm_family = (uint8_t)af(family),
			.rtm_dst_len = (uint8_t)(addr_len(family) * 8) },
		.a = { .rta_type = RTA_DST,
		       .rta_len = (unsigned short)RTA_LENGTH(addr_len(family)) },
	};
	int rc;

	memcpy(req.dst, addr, addr_len(family));
	req.h.nlmsg_len = NLMSG_LENGTH(sizeof(req.rt)) + RTA_LENGTH(addr_len(family));
	*ifindex = 0;
	rc = rtnl_talk(&req, req.h.nlmsg_len, false, route_one, ifindex);
	return rc == 1 ? 0 : rc ? rc : -ENETUNREACH;
}

int kr_ops_addr_local(int family, const uint8_t *addr)
{
	struct ifaddrs *ifs, *i;
	int found = 0;

	if (getifaddrs(&ifs))
		return -errno;
	for (i = ifs; i && !found; i = i->ifa_next) {
		const struct sockaddr *s = i->ifa_addr;

		if (!s || s->sa_family != af(family))
			continue;
		if (family == 4)
			found = !memcmp(&((const struct sockaddr_in *)s)->sin_addr, addr, 4);
		else
			found = !memcmp(&((const struct sockaddr_in6 *)s)->sin6_addr, addr, 16);
	}
	freeifaddrs(ifs);
	return found;
}
