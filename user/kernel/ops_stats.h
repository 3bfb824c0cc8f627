/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The counters of the data path's per-CPU maps, read as the shared structs whose layout
 * include/kr_datapath_kern_user.h asserts (kr_counters, kr_svc_stats, kr_slot_stats,
 * kr_backend_stats), and the tables that name their fields for status / stats.
 *
 * A counter is reached by its member (offsetof), never by a string looked up at run time:
 * renaming a field breaks the build of every reader instead of making it print 0
 * (tests/bats/layout.bats renames each one).  The tables hold every u64 field but pad
 * (static asserts in ops_stats.c), so status / stats show all of them, by the member's name.
 *
 * No BTF walk: the maps a keyrouter reads have its own layout.  `keyrouter upgrade` refuses
 * a program whose maps or BTF differ from the pinned ones, and kr_ops_percpu_sum() refuses
 * a map whose value size is not the struct's (a program loaded by another version) with
 * -EBADMSG, as kr_ops_slot_read() refuses an image of another format.
 */
#ifndef KR_OPS_STATS_H
#define KR_OPS_STATS_H

#include <stddef.h>
#include <string.h>
#include <linux/types.h>
#include "ops.h"

/* One u64 counter of a map value: a name (the member's, or an exported label) and where. */
struct kr_ops_field {
	const char *name;
	size_t off;
};
#define KR_OPS_FIELD(type, member)	{ #member, offsetof(struct type, member) }
#define KR_OPS_LABEL(label, type, member)	{ label, offsetof(struct type, member) }
#define KR_OPS_NFIELDS(t)		(sizeof(t) / sizeof((t)[0]))

static inline __u64 kr_ops_field_get(const void *value, const struct kr_ops_field *f)
{
	__u64 v;

	memcpy(&v, (const char *)value + f->off, sizeof(v));
	return v;
}

/* Every counter of each struct, in the struct's order (pad left out). */
extern const struct kr_ops_field kr_ops_counters_fields[];
extern const size_t kr_ops_counters_nfields;
extern const struct kr_ops_field kr_ops_svc_fields[];
extern const size_t kr_ops_svc_nfields;

#endif
