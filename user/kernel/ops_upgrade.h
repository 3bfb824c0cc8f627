/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * In-place upgrade of a loaded instance (docs/operations.md "Upgrading the program"): a new
 * build of the BPF program takes over the instance's pinned maps and replaces the attached
 * program in one kernel operation (XDP: a replace of the attached program; TC: a replace of
 * the filter of the same handle and priority), so no packet misses the router and every
 * map -- rings, migration state, backends and their health, counters -- stays as it is.
 */
#ifndef KR_OPS_UPGRADE_H
#define KR_OPS_UPGRADE_H

#include "ops.h"

struct kr_ops_upgrade_report {
	__u32 old_prog_id, new_prog_id;
	char old_tag[17], new_tag[17];	/* the programs' tags (hex of bpf_prog_info.tag) */
	int reused;			/* pinned maps the new program uses as they are */
	int created;			/* maps new in this build (created and pinned) */
	int fresh;			/* the build's constants (.rodata): a new map, re-pinned */
	bool recovered;			/* the attached program was not the recorded one but
					 * uses the instance's maps: an upgrade interrupted
					 * before it recorded the new id (completed now) */
};

/* Upgrade the instance IN (opened with kr_ops_inst_open: locked), whose record is META, to
 * the program of OBJ_PATH (NULL: the one built into the tool).  Maps whose layout differs
 * are refused before anything changes (each difference and what to do printed, -EINVAL);
 * so is an instance not attached where it was loaded (-ESRCH) or attached through
 * libxdp's dispatcher (-EOPNOTSUPP).  On success META (and its pinned record) holds the
 * new program id. */
int kr_ops_upgrade(const struct kr_inst *in, const char *obj_path, struct kr_ops_meta *meta,
		   struct kr_ops_upgrade_report *rep);

#endif
