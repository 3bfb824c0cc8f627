// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading the published state of an instance (see ops_kernel.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "ops_kernel.h"
#include "publish.h"

static __u32 map_max_entries(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.max_entries;
}

int kr_ops_maps_open(const struct kr_inst *in, struct kr_ops_maps *m)
{
	memset(m, -1, sizeof(*m));
	m->backends = kr_ops_map_open(in, KR_MAP_BACKENDS, false);
	m->services = kr_ops_map_open(in, KR_MAP_SERVICES, false);
	m->rings = kr_ops_map_open(in, KR_MAP_RINGS, false);
	m->ctl = kr_ops_map_open(in, KR_MAP_RING_CTL, false);
	if (m->backends < 0 || m->services < 0 || m->rings < 0 || m->ctl < 0) {
		pr_warn("keyrouter: '%s' does not hold keyrouter's maps (load the program with "
			"'keyrouter load' or 'bpftool prog loadall ... pinmaps %s')\n", in->dir,
			in->dir);
		kr_ops_maps_close(m);
		return -ENOENT;
	}
	m->slot_stats = kr_ops_map_open(in, KR_MAP_SLOT_STATS, true);
	m->counters = kr_ops_map_open(in, KR_MAP_COUNTERS, true);
	m->backend_stats = kr_ops_map_open(in, KR_MAP_BACKEND_STATS, true);
	m->devices = kr_ops_map_open(in, KR_MAP_DEVICES, true);
	m->members = kr_ops_map_open(in, KR_MAP_SUBSET_MEMBERS, true);
	m->service_ports = kr_ops_map_open(in, KR_MAP_SERVICE_PORTS, true);
	m->device_macs = kr_ops_map_open(in, KR_MAP_DEVICE_MACS, true);
	m->port_wild = kr_ops_map_open(in, KR_MAP_PORT_WILD, true);
	m->wild_svcs = kr_ops_map_open(in, KR_MAP_WILD_SVCS, true);
	m->hot_keys = kr_ops_map_open(in, KR_MAP_HOT_KEYS, true);
	m->slot_hot = kr_ops_map_open(in, KR_MAP_SLOT_HOT, true);
	m->backends_max = map_max_entries(m->backends);
	m->services_max = map_max_entries(m->services);
	m->ncpus = libbpf_num_possible_cpus();
	if (m->ncpus < 1)
		m->ncpus = 1;
	return 0;
}

void kr_ops_maps_close(struct kr_ops_maps *m)
{
	int *fds[] = { &m->backends, &m->services, &m->rings, &m->ctl, &m->slot_stats,
		       &m->counters, &m->backend_stats, &m->devices, &m->members,
		       &m->service_ports, &m->device_macs, &m->port_wild, &m->wild_svcs,
		       &m->hot_keys, &m->slot_hot };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

__u64 kr_ops_fd_memlock(int fd)
{
	uint64_t v = 0;

	return kr_map_memlock(fd, &v, NULL) ? 0 : v;
}

int kr_ops_slot_fd(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot)
{
	int fd;

	if (ring_id >= KR_MAX_RINGS || slot > 1)
		return -EINVAL;
	fd = kr_published_map_fd(m->rings, ring_id, slot);
	return fd < 0 ? -errno : fd;
}

int kr_ops_slot_read(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot, bool want_bt,
		     struct kr_ops_slot *s)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0;
	char chunk[KR_CHUNK_BYTES];
	int fd, err = 0;

	memset(s, 0, sizeof(*s));
	fd = kr_ops_slot_fd(m, ring_id, slot);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || bpf_map_lookup_elem(fd, &key, chunk)) {
		err = -errno;
		goto out;
	}
	memcpy(&s->hdr, chunk, sizeof(s->hdr));
	/* an image of another format (a data path loaded by another keyrouter version) is
	 * not read as this one */
	if (s->hdr.magic != KR_IMAGE_MAGIC || s->hdr.format != KR_IMAGE_FORMAT ||
	    info.value_size != KR_CHUNK_BYTES || s->hdr.nchunks != info.max_entries) {
		err = -EBADMSG;
		goto out;
	}
	s->present = true;
	s->map_id = info.id;
	s->memlock = kr_ops_fd_memlock(fd);
	if (want_bt && s->hdr.nbackends) {
		s->bt = calloc(s->hdr.nbackends, sizeof(*s->bt));
		if (!s->bt) {
			err = -ENOMEM;
			goto out;
		}
		if (!s->hdr.bt_chunk) {		/* the table is in chunk 0, after the header */
			if (s->hdr.nbackends > KR_BT0_MAX) {
				err = -EBADMSG;
				goto out;
			}
			memcpy(s->bt, chunk + KR_BT0_OFF, s->hdr.nbackends * sizeof(__u32));
		}
		for (__u32 c = 0; s->hdr.bt_chunk && c * KR_BT_PER_CHUNK < s->hdr.nbackends; c++) {
			__u32 k = s->hdr.bt_chunk + c, n = s->hdr.nbackends - c * KR_BT_PER_CHUNK;

			if (bpf_map_lookup_elem(fd, &k, chunk)) {
				err = -errno;
				goto out;
			}
			if (n > KR_BT_PER_CHUNK)
				n = KR_BT_PER_CHUNK;
			memcpy(s->bt + c * KR_BT_PER_CHUNK, chunk, n * sizeof(__u32));
		}
	}
out:
	close(fd);
	if (err)
		kr_ops_slot_free(s);
	return err;
}

void kr_ops_slot_free(struct kr_ops_slot *s)
{
	free(s->bt);
	s->bt = NULL;
}

int kr_ops_slot_image(const struct kr_ops_maps *m, __u32 ring_id, __u32 slot, void **buf,
		      size_t *size)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char *b = NULL;
	int fd, err = 0;

	fd = kr_ops_slot_fd(m, ring_id, slot);
	if (fd < 0)
		return fd;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		goto out;
	}
	b = malloc((size_t)info.max_entries * KR_CHUNK_BYTES);
	if (!b) {
		err = -ENOMEM;
		goto out;
	}
	for (__u32 k = 0; k < info.max_entries; k++) {
		if (bpf_map_lookup_elem(fd, &k, b + (size_t)k * KR_CHUNK_BYTES)) {
			err = -errno;
			goto out;
		}
	}
	*buf = b;
	*size = (size_t)info.max_entries * KR_CHUNK_BYTES;
	b = NULL;
out:
	free(b);
	close(fd);
	return err;
}

int kr_ops_ctl_read(const struct kr_ops_maps *m, __u32 ring_id, __u64 *ctl)
{
	uint64_t v;

	if (kr_ctl_read(m->ctl, ring_id, &v, NULL))
		return -EIO;
	*ctl = v;
	return 0;
}

int kr_ops_ctl_write(const struct kr_ops_maps *m, __u32 ring_id, __u64 ctl)
{
	return kr_ctl_write(m->ctl, ring_id, ctl, NULL) ? -EIO : 0;
}

int kr_ops_percpu_sum(const struct kr_ops_maps *m, int fd, __u32 key, void *out,
		      size_t value_size)
{
	size_t stride = (value_size + 7) & ~(size_t)7, nf = value_size / 8;
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	__u64 *vals, *o = out;

	memset(out, 0, value_size);
	if (fd < 0)
		return -ENOENT;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.value_size != value_size)	/* another layout: not read as this one */
		return -EBADMSG;
	vals = calloc(m->ncpus, stride);
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &key, vals)) {
		int err = -errno;

		free(vals);
		return err;
	}
	for (int c = 0; c < m->ncpus; c++)
		for (size_t f = 0; f < nf; f++)
			o[f] += vals[c * (stride / 8) + f];
	free(vals);
	return 0;
}
