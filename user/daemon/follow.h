/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Following an instance: what every long-running process of keyrouter (the health checker,
 * balance, the exporter, trace/top, status --watch, announce) does between rounds so that it
 * never writes the maps of an instance that was unloaded, nor holds a program or map of an
 * instance that was replaced (docs/operations.md "Long-running processes").
 *
 * An instance's generation is told by what its pins are, not by their names: the kernel ids
 * of the pinned record (kr_ops_meta) and backend table (kr_backends) -- new maps after an
 * unload and a load -- and the program the record names -- a new one after an upgrade.
 * Reading it opens two pins and closes them again: nothing is held between rounds.
 */
#ifndef KR_FOLLOW_H
#define KR_FOLLOW_H

#include <stdbool.h>
#include <linux/types.h>

struct kr_follow_id {
	__u32 meta_map_id;	/* kr_ops_meta's map id (0: no record: a bpftool-loaded pin dir) */
	__u32 backends_map_id;	/* kr_backends' map id */
	__u32 prog_id;		/* the program the record names (0: none recorded) */
	__u32 magic;		/* the record's magic (KR_OPS_META_MAGIC: the load finished) */
	__u64 loaded_ns;	/* when the load wrote its record */
};

enum kr_follow_change {
	KR_FOLLOW_SAME = 0,	/* the same maps, the same program */
	KR_FOLLOW_UPGRADED,	/* the same maps, another program (keyrouter upgrade) */
	KR_FOLLOW_RELOADED,	/* other maps: unloaded and loaded again (or another load) */
	KR_FOLLOW_GONE,		/* not loaded now (unloaded, or a load under way) */
};

/* The generation of the instance whose pins are in DIR: 0, or -ENOENT when it is not loaded
 * (no kr_backends pin), -errno when a pin cannot be read. */
int kr_follow_read(const char *dir, struct kr_follow_id *id);
/* What changed from WAS to NOW (NOW read by kr_follow_read; now_err its return). */
enum kr_follow_change kr_follow_compare(const struct kr_follow_id *was, int now_err,
					const struct kr_follow_id *now);
const char *kr_follow_change_name(enum kr_follow_change c);

/* What a loop keeps to follow one instance: its pin directory and the generation it saw
 * last.  kr_follow_init() reads the first one; kr_follow_round(), once a round, reads it
 * again and says what changed since the last round (GONE: every round it is not loaded;
 * RELOADED: the round it is loaded again).  Nothing stays open between rounds. */
struct kr_follow {
	char dir[4096];
	struct kr_follow_id id;
	int err;		/* the last read's (kr_follow_read) */
};

void kr_follow_init(struct kr_follow *f, const char *dir);
enum kr_follow_change kr_follow_round(struct kr_follow *f);

/* Is the instance whose record is open in IN loaded in this network namespace?  0 (or no
 * record: --pin-dir, maps pinned by hand), or -EXDEV with *ino its namespace's inode: a
 * process of the instance (balance, the checker) refuses to run from another one, as apply
 * does (docs/operations.md "Which instance"). */
struct kr_inst;
int kr_follow_netns(const struct kr_inst *in, __u32 *ino);

/* The instances a long-running process has seen loaded since it started (the exporter
 * keeps exporting one that was unloaded as keyrouter_up 0, not as series that vanish).
 * It grows with instance names, never with rounds. */
struct kr_follow_names {
	char **name;
	size_t n, cap;
};

/* Add NAME (once): 0, or -ENOMEM. */
int kr_follow_names_add(struct kr_follow_names *s, const char *name);
bool kr_follow_names_has(const struct kr_follow_names *s, const char *name);
void kr_follow_names_free(struct kr_follow_names *s);

#endif
