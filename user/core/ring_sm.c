// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The per-ring migration state machine (see ring_sm.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "kr_image_kern_user.h"
#include "ring_sm.h"

const char *kr_sm_state_name(__u32 state)
{
	switch (state) {
	case KR_RING_IDLE: return "idle";
	case KR_RING_STAGED: return "staged";
	case KR_RING_MIGRATING: return "migrating";
	default: return "unknown";
	}
}

const char *kr_sm_op_name(enum kr_sm_op op)
{
	switch (op) {
	case KR_SM_STAGE: return "stage";
	case KR_SM_MIGRATE: return "migrate";
	case KR_SM_COMMIT: return "commit";
	case KR_SM_ROLLBACK: return "rollback";
	}
	return "?";
}

static int sm_next(__u64 ctl, enum kr_sm_op op, __u64 frac, __u64 *next, const char **why)
{
	__u32 state = kr_ctl_state(ctl), active = kr_ctl_active(ctl);
	bool idle = state == KR_RING_IDLE;

	*why = NULL;
	if (state > KR_RING_MIGRATING) {
		*why = "the control word has an unknown state";
		return -1;
	}
	switch (op) {
	case KR_SM_STAGE:
		if (!idle) {
			*why = "a version is already staged: commit or roll it back first";
			return -1;
		}
		*next = kr_ctl_make(active, 0, KR_RING_STAGED);
		return 0;
	case KR_SM_MIGRATE:
		if (idle) {
			*why = "nothing is staged: run 'ring stage' first";
			return -1;
		}
		if (frac > KR_CTL_FRAC_ONE) {
			*why = "fraction above 100%";
			return -1;
		}
		*next = kr_ctl_make(active, frac, frac ? KR_RING_MIGRATING : KR_RING_STAGED);
		return 0;
	case KR_SM_COMMIT:
		if (idle) {
			*why = "nothing is staged: nothing to commit";
			return -1;
		}
		*next = kr_ctl_make(active ^ 1, 0, KR_RING_IDLE);
		return 0;
	case KR_SM_ROLLBACK:
		if (idle) {
			*why = "nothing is staged: nothing to roll back";
			return -1;
		}
		*next = kr_ctl_make(active, 0, KR_RING_IDLE);
		return 0;
	}
	*why = "unknown operation";
	return -1;
}

/* The ring's hot-key bit (KR_CTL_HOT) is not the state machine's: every step keeps it. */
int kr_sm_next(__u64 ctl, enum kr_sm_op op, __u64 frac, __u64 *next, const char **why)
{
	if (sm_next(ctl, op, frac, next, why))
		return -1;
	*next |= ctl & KR_CTL_HOT;
	return 0;
}

int kr_percent_parse(const char *s, __u64 *frac)
{
	char *end;
	double p;

	if (!s || !*s)
		return -1;
	errno = 0;
	p = strtod(s, &end);
	if (errno || *end || !(p >= 0.0 && p <= 100.0))
		return -1;
	*frac = (__u64)llround(p / 100.0 * (double)KR_CTL_FRAC_ONE);
	if (*frac > KR_CTL_FRAC_ONE)
		*frac = KR_CTL_FRAC_ONE;
	/* a share the control word cannot hold: it would silently become 0 % or 100 % */
	if ((p > 0.0 && *frac == 0) || (p < 100.0 && *frac == KR_CTL_FRAC_ONE))
		return -2;
	return 0;
}

double kr_frac_percent(__u64 frac)
{
	return (double)frac * 100.0 / (double)KR_CTL_FRAC_ONE;
}
