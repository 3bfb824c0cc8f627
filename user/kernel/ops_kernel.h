/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The data-plane maps of an instance as the tool sees them: opening them from the pins,
 * reading what is published in a ring slot (header, backend table, kernel memory).
 */
#ifndef KR_OPS_KERNEL_H
#define KR_OPS_KERNEL_H

#include <stdbool.h>
#include <stdint.h>
#include "ops.h"

/* The names of the BPF object's maps (KR_MAP_*): include/kr_map_names.h, through ops.h. */

struct kr_ops_maps {
	int backends, services, rings, ctl;	/* required */
	int slot_stats, counters, backend_stats, devices;	/* optional: -1 when absent */
	int members;				/* kr_subset_members, optional */
	int service_ports;			/* kr_service_ports, optional */
	int device_macs;			/* kr_device_macs, optional */
	int port_wild, wild_svcs;		/* kr_port_wild, kr_wild_svcs, optional */
	int hot_keys, slot_hot;			/* kr_hot_keys, kr_slot_hot, optional */
	__u32 backends_max;			/* max_entries of kr_backends */
	__u32 services_max;
	int ncpus;
};

int kr_ops_maps_open(const struct kr_inst *in, struct kr_ops_maps *m);
void kr_ops_maps_close(struct kr_ops_maps *m);

/* What one slot of a ring holds. */
struct kr_ops_slot {
	bool present;
	__u32 map_id;
	__u64 memlock;		/* kernel memory of the image map, as the kernel accounts it */
	struct kr_image_hdr hdr;
	__u32 *bt;		/* [hdr.nbackends] global backend ids (when asked for) */
};

/* Reads slot (0/1) of ring_id; want_bt: also the backend table.  0 (present or not) or
 * -errno.  Free with kr_ops_slot_free(). */
int kr_ops_slot_read(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot, bool want_bt,
		     struct kr_ops_slot *s);
void kr_ops_slot_free(struct kr_ops_slot *s);
/* fd of the image map in the slot (caller closes), or -errno (-ENOENT: empty). */
int kr_ops_slot_fd(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot);
/* A whole image copied out of the kernel (malloc'd nchunks * KR_CHUNK_BYTES). */
int kr_ops_slot_image(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot, void **buf,
		      size_t *size);

int kr_ops_ctl_read(const struct kr_ops_maps *m, __u32 ring_id, __u64 *ctl);
int kr_ops_ctl_write(const struct kr_ops_maps *m, __u32 ring_id, __u64 ctl);

/* memlock of a BPF map fd, from /proc/self/fdinfo (0 when unknown). */
__u64 kr_ops_fd_memlock(int fd);

/* Per-CPU map values summed: value_size bytes of u64 fields (a struct of
 * kr_datapath_kern_user.h).  -EBADMSG when the map's values are of another size (a program
 * of another keyrouter version), -ENOENT when fd < 0; out is zeroed on any error. */
int kr_ops_percpu_sum(const struct kr_ops_maps *m, int fd, __u32 key, void *out,
		      size_t value_size);

#endif
