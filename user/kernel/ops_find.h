/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What is really there, whatever the pins say: is an instance's program still attached,
 * which keyrouter XDP programs run in this network namespace, and how to reach another
 * network namespace (for the messages of unload and status).
 */
#ifndef KR_OPS_FIND_H
#define KR_OPS_FIND_H

#include <stddef.h>
#include "ops.h"

enum kr_ops_attach_state {
	KR_ATTACHED = 0,	/* the recorded program is attached to the recorded interface */
	KR_NOT_ATTACHED,	/* the interface is there, the program is not on it */
	KR_IFACE_GONE,		/* no interface with that index and name any more */
	KR_OTHER_NETNS,		/* recorded in another network namespace: cannot tell here */
};

/* KR_ATTACHED also when the interface was renamed since the load (same index, the
 * program on it): then its current name goes into now (IF_NAMESIZE bytes; "" otherwise;
 * now may be NULL).  An instance recorded in another network namespace is checked there
 * (this thread enters it for the check); KR_OTHER_NETNS only when that is not possible. */
enum kr_ops_attach_state kr_ops_attach_state(const struct kr_ops_meta *meta, char *now);
const char *kr_ops_attach_state_name(enum kr_ops_attach_state s);

/* A keyrouter XDP program (named kr_xdp) attached in this network namespace. */
struct kr_ops_found {
	char ifname[16];
	__u32 ifindex;
	__u32 prog_id;
};

/* Up to max of them into f; returns how many there are (may exceed max). */
int kr_ops_find_attached(struct kr_ops_found *f, int max);

/* Id of the keyrouter XDP program (kr_xdp) on ifindex in this network namespace, or 0. */
__u32 kr_ops_xdp_find(__u32 ifindex);

/* A path that opens network namespace inode ino (/run/netns/NAME, /proc/PID/ns/net), or
 * "" (not found). */
void kr_ops_netns_path(__u32 ino, char *buf, size_t len);

/* How to enter network namespace inode ino: "nsenter --net=/run/netns/NAME" (a named
 * namespace), "nsenter --net=/proc/PID/ns/net" (a process in it), or "" (not found). */
void kr_ops_netns_hint(__u32 ino, char *buf, size_t len);

/* Did this process mount the bpf filesystem (it was not mounted: e.g. `ip netns exec`,
 * which gives the command a /sys of its own, or bpffs unmounted)? */
bool kr_ops_bpffs_mounted_here(void);

/* kr_ops_meta of the instance directory NAME under the bpffs root: 0 (recorded by
 * `keyrouter load`: finished, or under way / interrupted when meta->magic is
 * KR_OPS_META_LOADING), or -errno (-ENOENT: no such instance, or not loaded by `load`). */
int kr_ops_meta_read(const char *name, struct kr_ops_meta *meta);

/* "'a' (r0), 'b' (r1, another network namespace)" of every instance under the bpffs
 * root, or "" when there is none.  Returns how many. */
int kr_ops_instances_describe(char *buf, size_t len);

/* The instance recorded as loaded on IFINDEX in this network namespace (its name into out),
 * or -ENOENT.  ifindex 0: the instance loaded on an interface then named IFNAME instead. */
int kr_ops_instance_on(__u32 ifindex, const char *ifname, char *out, size_t len);
/* Does a command hold the instance's lock (a writer under way)? */
bool kr_ops_inst_busy(const struct kr_inst *in);

#endif
