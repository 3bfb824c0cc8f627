/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An instance followed by a long-running process (follow.h): its pins opened at one
 * generation, closed when the instance is unloaded, opened again after a new load, and never
 * written once that generation is gone.  The health checker holds one (cmd_health.c); the
 * process says what happened (this layer prints nothing).
 */
#ifndef KR_FOLLOWED_H
#define KR_FOLLOWED_H

#include <stdbool.h>
#include "follow.h"
#include "ops_health.h"

struct kr_followed {
	const char *instance, *pin_dir;	/* as kr_ops_inst_open takes them */
	char dir[4096];			/* the instance's pin directory */
	struct kr_inst in;		/* opened as a reader (no lock held) */
	struct kr_ops_maps m;
	struct kr_health_maps hm;	/* the tool's health maps (created by open) */
	struct kr_follow_id gen;	/* the generation of what is open */
	bool open;
};

/* Name the instance (nothing opened): 0 or -errno (a bad name). */
int kr_followed_init(struct kr_followed *f, const char *instance, const char *pin_dir);
/* Open its pins and take its generation; the tool's health maps are created where missing
 * (under the instance's lock, taken only for that).  -EXDEV (*netns_ino: the instance's
 * namespace): it is in another network namespace than the caller, nothing opened; other
 * -errno: not loaded (a load under way), nothing opened. */
int kr_followed_open(struct kr_followed *f, __u32 *netns_ino);
void kr_followed_close(struct kr_followed *f);
/* What changed since the generation opened (*now: the generation read).  UPGRADED: the same
 * maps, kept open (the generation taken); GONE and RELOADED: everything closed (the caller
 * opens again, for RELOADED at once).  Not open: GONE while not loaded, else RELOADED. */
enum kr_follow_change kr_followed_poll(struct kr_followed *f, struct kr_follow_id *now);
/* Are the maps open those of the instance now (an upgrade keeps them)?  Call it with the
 * instance's lock held before writing: then no unload or load can be under way. */
bool kr_followed_current(const struct kr_followed *f);

#endif
