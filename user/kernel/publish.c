// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Publishing ring images and control words into the ring maps (see publish.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "kr_datapath_kern_user.h"
#include "publish.h"
#include "util.h"

#define PUB_BATCH	256	/* chunks per batch update: 768 KiB per syscall */

static int pub_fill(int fd, const uint8_t *buf, uint32_t nchunks, const struct kr_image_hdr *hdr0,
		    struct kr_err *err)
{
	uint32_t keys[PUB_BATCH], c, i, n;
	int ret;

	for (c = 0; c < nchunks; c += n) {
		const void *vals = buf + (size_t)c * KR_CHUNK_BYTES;
		uint32_t count;

		n = nchunks - c < PUB_BATCH ? nchunks - c : PUB_BATCH;
		for (i = 0; i < n; i++)
			keys[i] = c + i;
		if (c == 0) {	/* chunk 0 = the header with generation/published_ns set */
			ret = bpf_map_update_elem(fd, &keys[0], hdr0, BPF_ANY);
			if (ret)
				return kr_errf(err, "couldn't write the image header: %s", strerror(-ret));
			n = 1;
			continue;
		}
		count = n;
		ret = bpf_map_update_batch(fd, keys, vals, &count, NULL);
		if (ret)
			return kr_errf(err, "couldn't write image chunks %u..%u: %s", c, c + n - 1,
				       strerror(-ret));
	}
	return 0;
}

/* Map of an image whose chunk 0 is hdr0 (the others from buf): created, filled, frozen. */
static int pub_map_create(const void *buf, uint32_t nchunks, const void *hdr0, const char *name,
			  struct kr_err *err)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP | BPF_F_RDONLY_PROG);
	int fd, ret;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, name, sizeof(uint32_t), KR_CHUNK_BYTES, nchunks,
			    &opts);
	if (fd < 0) {
		ret = -errno;
		if (ret == -ENOMEM || ret == -EPERM)
			kr_errf(err, "couldn't create the map of a ring image of %u chunks (%.1f MiB): %s: "
				"the ring is too big for the kernel memory this process may lock "
				"(memory cgroup limit, or RLIMIT_MEMLOCK on older kernels)",
				nchunks, nchunks * (double)KR_CHUNK_BYTES / (1 << 20), strerror(-ret));
		else
			kr_errf(err, "couldn't create the map of a ring image of %u chunks: %s",
				nchunks, strerror(-ret));
		return -1;
	}
	if (pub_fill(fd, buf, nchunks, hdr0, err))
		goto fail;
	if (bpf_map_freeze(fd)) {
		kr_errf(err, "couldn't freeze the ring image map: %s", strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

int kr_image_map_create(const void *buf, uint32_t nchunks, const char *name, struct kr_err *err)
{
	return pub_map_create(buf, nchunks, buf, name, err);
}

int kr_published_map_fd(int rings_fd, uint32_t ring_id, uint32_t slot)
{
	uint32_t key = ring_id * 2 + slot, id;

	if (bpf_map_lookup_elem(rings_fd, &key, &id))
		return -1;
	return bpf_map_get_fd_by_id(id);
}

/* Largest generation published in either slot of ring_id (0 if none). */
static uint64_t pub_last_generation(int rings_fd, uint32_t ring_id)
{
	uint64_t gen = 0;
	uint32_t zero = 0;

	for (uint32_t s = 0; s < 2; s++) {
		struct kr_image_hdr *h = calloc(1, KR_CHUNK_BYTES);
		int fd = kr_published_map_fd(rings_fd, ring_id, s);

		if (fd >= 0 && h && !bpf_map_lookup_elem(fd, &zero, h) && h->generation > gen)
			gen = h->generation;
		if (fd >= 0)
			close(fd);
		free(h);
	}
	return gen;
}

static int pub_check(const void *buf, uint32_t nchunks, uint32_t ring_id, uint32_t slot,
		     struct kr_err *err)
{
	const struct kr_image_hdr *h = buf;

	if (ring_id >= KR_MAX_RINGS)
		return kr_errf(err, "ring id %u out of range (0..%u)", ring_id, KR_MAX_RINGS - 1);
	if (slot > 1)
		return kr_errf(err, "slot %u out of range (0 or 1)", slot);
	if (nchunks == 0 || h->magic != KR_IMAGE_MAGIC || h->format != KR_IMAGE_FORMAT)
		return kr_errf(err, "not a ring image (magic 0x%08x format %u, expected 0x%08x %u)",
			       nchunks ? h->magic : 0, nchunks ? h->format : 0, KR_IMAGE_MAGIC,
			       KR_IMAGE_FORMAT);
	if (h->npoints == 0)
		return kr_errf(err, "ring image of ring %u has no points: nothing to publish", ring_id);
	if (h->nchunks != nchunks)
		return kr_errf(err, "ring image header says %u chunks, the buffer holds %u",
			       h->nchunks, nchunks);
	return 0;
}

int kr_publish(int rings_fd, uint32_t ring_id, uint32_t slot, const void *buf, uint32_t nchunks,
	       struct kr_err *err)
{
	uint32_t key = ring_id * 2 + slot;
	struct kr_image_hdr *hdr = NULL;
	char name[16];
	int fd = -1, ret = -1;

	if (pub_check(buf, nchunks, ring_id, slot, err))
		return -1;
	hdr = malloc(KR_CHUNK_BYTES);
	if (!hdr)
		return kr_errf(err, "out of memory");
	memcpy(hdr, buf, KR_CHUNK_BYTES);
	hdr->generation = pub_last_generation(rings_fd, ring_id) + 1;
	hdr->published_ns = kr_wall_ns();
	snprintf(name, sizeof(name), "kr_ring%u_s%u", ring_id, slot);

	fd = pub_map_create(buf, nchunks, hdr, name, err);
	if (fd < 0)
		goto out;
	if (bpf_map_update_elem(rings_fd, &key, &fd, BPF_ANY)) {
		if (errno == EINVAL)	/* the outer map's template: another chunk size */
			kr_errf(err, "couldn't publish the image of ring %u into slot %u: the "
				"loaded data path does not take %u-byte image chunks (format %u): "
				"loaded by another keyrouter version? unload and load again",
				ring_id, slot, KR_CHUNK_BYTES, KR_IMAGE_FORMAT);
		else
			kr_errf(err, "couldn't publish the image of ring %u into slot %u: %s",
				ring_id, slot, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);	/* the outer map holds the image now (or nobody: freed) */
	free(hdr);
	return ret;
}

int kr_unpublish(int rings_fd, uint32_t ring_id, uint32_t slot, struct kr_err *err)
{
	uint32_t key = ring_id * 2 + slot;

	if (bpf_map_delete_elem(rings_fd, &key) && errno != ENOENT)
		return kr_errf(err, "couldn't empty slot %u of ring %u: %s", slot, ring_id,
			       strerror(errno));
	return 0;
}

int kr_ctl_read(int ctl_fd, uint32_t ring_id, uint64_t *ctl, struct kr_err *err)
{
	if (bpf_map_lookup_elem(ctl_fd, &ring_id, ctl))
		return kr_errf(err, "couldn't read the control word of ring %u: %s", ring_id,
			       strerror(errno));
	return 0;
}

int kr_ctl_write(int ctl_fd, uint32_t ring_id, uint64_t ctl, struct kr_err *err)
{
	if (kr_ctl_frac(ctl) > KR_CTL_FRAC_ONE)
		return kr_errf(err, "control word of ring %u: fraction 0x%llx above 1 (0x%llx)",
			       ring_id, (unsigned long long)kr_ctl_frac(ctl),
			       (unsigned long long)KR_CTL_FRAC_ONE);
	if (bpf_map_update_elem(ctl_fd, &ring_id, &ctl, BPF_ANY))
		return kr_errf(err, "couldn't write the control word of ring %u: %s", ring_id,
			       strerror(errno));
	return 0;
}

int kr_map_memlock(int map_fd, uint64_t *bytes, struct kr_err *err)
{
	char path[64], line[256];
	unsigned long long v = 0;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", map_fd);
	f = fopen(path, "r");
	if (!f)
		return kr_errf(err, "couldn't open '%s': %s", path, strerror(errno));
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "memlock: %llu", &v) == 1;
	fclose(f);
	if (!found)
		return kr_errf(err, "'%s' has no memlock line", path);
	*bytes = v;
	return 0;
}
