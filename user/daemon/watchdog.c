// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The watchdog: the instance's program attached again after a detach (watchdog.h). */
#include <errno.h>
#include <string.h>
#include <net/if.h>
#include <bpf/bpf.h>

#include "log.h"
#include "ops_attach.h"
#include "ops_find.h"
#include "follow.h"
#include "watchdog.h"

/* The state of the record in in->meta_fd (KR_WD_SKIPPED: nothing to look after). */
static enum kr_wd_result look(const struct kr_inst *in, struct kr_ops_meta *meta)
{
	__u32 key = 0, ino;

	memset(meta, 0, sizeof(*meta));
	if (in->meta_fd < 0 || bpf_map_lookup_elem(in->meta_fd, &key, meta) ||
	    meta->magic != KR_OPS_META_MAGIC || kr_follow_netns(in, &ino))
		return KR_WD_SKIPPED;
	switch (kr_ops_attach_state(meta, NULL)) {
	case KR_ATTACHED:
		return KR_WD_ATTACHED;
	case KR_IFACE_GONE:
		/* the interface made again under its name: attach there (as apply does) */
		meta->ifindex = strlen(meta->ifname) < IF_NAMESIZE ?
				if_nametoindex(meta->ifname) : 0;
		return meta->ifindex ? KR_WD_FAILED : KR_WD_IFACE_GONE;
	case KR_NOT_ATTACHED:
		return KR_WD_FAILED;
	default:
		return KR_WD_SKIPPED;
	}
}

enum kr_wd_result kr_watchdog_look(const char *instance, const char *pin_dir,
				   struct kr_ops_meta *meta, int *err)
{
	struct kr_inst in;
	enum kr_wd_result r;
	__u32 key = 0;

	*err = 0;
	/* without the lock first: the common case (attached) takes nobody's lock */
	if (kr_ops_inst_open_reader(&in, instance, pin_dir))
		return KR_WD_SKIPPED;
	r = look(&in, meta);
	kr_ops_inst_close(&in);
	if (r != KR_WD_FAILED)
		return r;
	/* detached: again under the lock, where no unload, load or upgrade can be under way */
	if (kr_ops_inst_open(&in, instance, pin_dir))
		return KR_WD_SKIPPED;
	r = look(&in, meta);
	if (r == KR_WD_FAILED) {
		*err = kr_ops_reattach(in.dir, meta);
		if (!*err && bpf_map_update_elem(in.meta_fd, &key, meta, BPF_ANY))
			*err = -errno;
		r = *err ? KR_WD_FAILED : KR_WD_REATTACHED;
	}
	kr_ops_inst_close(&in);
	return r;
}
