/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The watchdog of an instance (the health checker runs it, docs/operations.md "Health
 * checking"): the program `keyrouter load` attached, detached behind keyrouter's back (`ip
 * link set dev X xdp off`, `tc filter del`, the interface made again under its name), is
 * attached again as `apply` would (kr_ops_reattach: the pinned program, the recorded mode),
 * under the instance's lock so that it never races an unload, a load or an upgrade.
 */
#ifndef KR_WATCHDOG_H
#define KR_WATCHDOG_H

#include <stdint.h>
#include <linux/types.h>
#include "ops.h"

enum kr_wd_result {
	KR_WD_ATTACHED = 0,	/* attached where the record says: nothing done */
	KR_WD_REATTACHED,	/* it was not: attached again (meta: the record now) */
	KR_WD_FAILED,		/* it was not, and could not be attached again (err) */
	KR_WD_IFACE_GONE,	/* its interface is gone: nothing to attach to until it is back */
	KR_WD_SKIPPED,		/* no record (--pin-dir), a load under way, another namespace,
				 * the lock not free: looked at again next time */
};

/* Look once at the instance (INSTANCE or PIN_DIR, as kr_ops_inst_open takes them); *meta
 * is its record (zero when none), *err the error of KR_WD_FAILED. */
enum kr_wd_result kr_watchdog_look(const char *instance, const char *pin_dir,
				   struct kr_ops_meta *meta, int *err);

/* Is a periodic task due (every_ms, last run at *last, now: monotonic ms)?  Then *last = now.
 * every_ms 0: never. */
static inline int kr_daemon_due(uint64_t *last, uint32_t every_ms, uint64_t now)
{
	if (!every_ms || now - *last < every_ms)
		return 0;
	*last = now;
	return 1;
}

#endif
