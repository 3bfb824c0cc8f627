/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The migration state machine of one ring, on its control word (kr_image_kern_user.h):
 *
 *   idle --stage--> staged (f = 0) --migrate P--> migrating (0 < f <= 1) --commit--> idle
 *                    |    ^------migrate 0-------'      |                   (active flips)
 *                    '--rollback--> idle <--rollback----'                   (f = 0)
 *
 * stage needs idle (a third version only after commit or rollback) and puts the new
 * version in the standby slot (active ^ 1).  Every transition is one write of the
 * 64-bit control word, so it takes effect at once for the data plane.
 */
#ifndef KR_RING_SM_H
#define KR_RING_SM_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

enum kr_sm_op { KR_SM_STAGE, KR_SM_MIGRATE, KR_SM_COMMIT, KR_SM_ROLLBACK };

/* The control word after OP (frac only for MIGRATE, in units of 2^-32), or -1 with a
 * message in why (the transition is not allowed from the word's state). */
int kr_sm_next(__u64 ctl, enum kr_sm_op op, __u64 frac, __u64 *next, const char **why);
const char *kr_sm_state_name(__u32 state);
const char *kr_sm_op_name(enum kr_sm_op op);

/* "12.5" -> fraction of 2^32 (0..1<<32). -1 when not a number in [0, 100]; -2 when a
 * share above 0 (below 100) would round to 0 (to 100): finer than 2^-32. */
int kr_percent_parse(const char *s, __u64 *frac);
/* fraction -> percent */
double kr_frac_percent(__u64 frac);

#endif
