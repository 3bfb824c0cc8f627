/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Operations: the pinned-state model of one keyrouter instance (docs/operations.md).
 *
 * Everything live is in BPF maps pinned in one directory,
 *     /sys/fs/bpf/keyrouter/<instance>/      (or --pin-dir DIR)
 * The tool keeps nothing between runs: every command opens the pins, reads what it needs,
 * writes single map entries (each write atomic for the data plane) and exits.
 *
 * Maps of the BPF object (pinned under their own names by `load`, or by
 * `bpftool prog loadall ... pinmaps DIR`) plus the maps only the tool uses, created by
 * the tool on first use in the same directory:
 *   kr_ops_meta    ARRAY[1]            how the instance is attached (load/unload)
 *   kr_ops_rings   ARRAY[KR_MAX_RINGS] ring id -> ring name (the config names rings)
 * and the program `load` attached, pinned as kr_prog (so that a program detached behind
 * keyrouter's back still exists, and apply can attach it again).
 */
#ifndef KR_OPS_H
#define KR_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "kr_datapath_kern_user.h"
#include "units.h"

#define KR_OPS_BPFFS		"/sys/fs/bpf"
#define KR_OPS_ROOT		"keyrouter"
#define KR_OPS_DEFAULT_INSTANCE	"default"

/* Names of the tool's own maps (BPF map names are at most 15 characters). */
#define KR_OPS_MAP_META		"kr_ops_meta"
#define KR_OPS_MAP_RINGS	"kr_ops_rings"
/* The attached program's pin in the instance directory. */
#define KR_OPS_PIN_PROG		"kr_prog"

enum kr_ops_mode { KR_OPS_MODE_NATIVE = 1, KR_OPS_MODE_GENERIC = 2, KR_OPS_MODE_TC = 3 };

/* kr_ops_meta[0]: written by `load`, read by `unload` and `status`. */
struct kr_ops_meta {
	__u32 magic;		/* KR_OPS_META_MAGIC once loaded by `keyrouter load` */
	__u32 ifindex;
	__u32 mode;		/* enum kr_ops_mode */
	__u32 prog_id;		/* the keyrouter program (XDP component or TC filter) */
	__u32 tc_handle;	/* TC: filter handle and priority */
	__u32 tc_priority;
	__u32 tc_made_qdisc;	/* TC: 1 when `load` created the clsact qdisc */
	__u32 netns_ino;	/* network namespace of the interface (ifindex is per netns) */
	__u64 loaded_ns;	/* CLOCK_REALTIME */
	char ifname[16];
	char instance[KR_NAME_MAX];
};
KR_LAYOUT_SIZE(kr_ops_meta, 120);
KR_LAYOUT_AT(kr_ops_meta, magic, 0);
KR_LAYOUT_AT(kr_ops_meta, ifindex, 4);
KR_LAYOUT_AT(kr_ops_meta, mode, 8);
KR_LAYOUT_AT(kr_ops_meta, prog_id, 12);
KR_LAYOUT_AT(kr_ops_meta, tc_handle, 16);
KR_LAYOUT_AT(kr_ops_meta, tc_priority, 20);
KR_LAYOUT_AT(kr_ops_meta, tc_made_qdisc, 24);
KR_LAYOUT_AT(kr_ops_meta, netns_ino, 28);
KR_LAYOUT_AT(kr_ops_meta, loaded_ns, 32);
KR_LAYOUT_AT(kr_ops_meta, ifname, 40);
KR_LAYOUT_AT(kr_ops_meta, instance, 56);
#define KR_OPS_META_MAGIC	0x4b524f50u	/* "KROP" */
/* The record of a load under way: written before the attach (prog_id 0 until the attach
 * returned), turned into KR_OPS_META_MAGIC as the load's last step.  Found by the next load
 * or unload of the instance or interface after a load that was killed: they undo it. */
#define KR_OPS_META_LOADING	0x4b524f4cu	/* "KROL" */

/* A record of `keyrouter load`, finished or under way. */
static inline bool kr_ops_meta_recorded(const struct kr_ops_meta *m)
{
	return m->magic == KR_OPS_META_MAGIC || m->magic == KR_OPS_META_LOADING;
}

/* kr_ops_rings[id]: the ring's config name; name[0] == 0: id free. */
struct kr_ops_ring {
	char name[KR_NAME_MAX];
	__u32 flags;		/* KR_OPS_RING_* */
	__u32 pad;
	__u64 assigned_ns;
};
KR_LAYOUT_SIZE(kr_ops_ring, 80);
KR_LAYOUT_AT(kr_ops_ring, name, 0);
KR_LAYOUT_AT(kr_ops_ring, flags, 64);
KR_LAYOUT_AT(kr_ops_ring, pad, 68);
KR_LAYOUT_AT(kr_ops_ring, assigned_ns, 72);

/* An opened instance: the pin directory and the fds of the maps found there. */
struct kr_inst {
	char dir[4096];
	char name[KR_NAME_MAX];
	int dir_fd;		/* held with flock(LOCK_EX) while the command runs (readers:
				 * not locked) */
	int meta_fd;
	int rings_fd;
};

/* ---- pins (ops_pin.c) ------------------------------------------------------------- */
/* Make sure DIR's bpffs is mounted (mounts KR_OPS_BPFFS when it is not). */
int kr_ops_bpffs_ensure(const char *bpffs);
/* Resolve the instance directory: pin_dir if given, else bpffs/keyrouter/<instance>. */
int kr_ops_inst_path(struct kr_inst *in, const char *instance, const char *pin_dir);
/* Open an existing instance (lock it; open or create the tool's maps).  When another
 * command holds the lock, a message says so before waiting for it. */
int kr_ops_inst_open(struct kr_inst *in, const char *instance, const char *pin_dir);
/* The same for commands that only read (status, stats, ring status, lookup --live, diff
 * --old-published): no lock, so an apply or a hung command never blocks them (unless the
 * tool's maps are missing, which the locked path creates). */
int kr_ops_inst_open_reader(struct kr_inst *in, const char *instance, const char *pin_dir);
void kr_ops_inst_close(struct kr_inst *in);
/* How long kr_ops_inst_open waits for the lock (--wait), in ms; -1 (the default): for ever.
 * When the bound passes, the open fails with -ETIMEDOUT and a message. */
void kr_ops_set_lock_wait(int ms);
/* The tool's own ARRAY map NAME in the instance (created and pinned when create and
 * missing; -ENOENT without create), checked for its layout.  fd or -errno. */
int kr_ops_tool_map(const struct kr_inst *in, const char *name, __u32 value_size,
		    __u32 max_entries, bool create);
/* fd of the pinned map NAME in the instance, or -errno (message printed when !quiet). */
int kr_ops_map_open(const struct kr_inst *in, const char *name, bool quiet);
/* Remove every pin in the instance directory and the directory itself. */
int kr_ops_inst_remove(struct kr_inst *in);
/* Count the maps pinned in the directory (for status). */
int kr_ops_pins_count(const char *dir);
bool kr_ops_is_root(void);
/* Inode of the caller's network namespace (0 if unknown). */
__u32 kr_ops_netns_ino(void);
/* "Couldn't ... : needs root" style hint for EPERM/EACCES. */
const char *kr_ops_perm_hint(int err);

/* ---- attach (ops_attach.c) -------------------------------------------------------- */
int kr_ops_mode_parse(const char *s, enum kr_ops_mode *mode);
const char *kr_ops_mode_name(__u32 mode);

/* ---- ring names (ops_rings.c) ----------------------------------------------------- */
/* Ring id of NAME, or -ENOENT. */
int kr_ops_ring_find(const struct kr_inst *in, const char *name);
/* Record NAME (flags KR_OPS_RING_*) as the name of ring id ID (apply's plan chose the id). */
int kr_ops_ring_set(const struct kr_inst *in, __u32 id, const char *name, __u32 flags);
int kr_ops_ring_release(const struct kr_inst *in, __u32 id);
int kr_ops_ring_get(const struct kr_inst *in, __u32 id, struct kr_ops_ring *out);

#endif
