/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The Prometheus text exposition (format 0.0.4) of keyrouter instances, as `status
 * --prometheus` prints it and `exporter` serves it on /metrics.  Read-only: it opens the
 * pinned maps without locking or creating anything, so it never disturbs an apply and
 * may be killed at any time.  Every family has HELP and TYPE and its samples together;
 * counters end in _total, units are base units (bytes, seconds, ratio); states are
 * values, not labels.  The families are listed in docs/deploy.md.
 */
#ifndef KR_PROM_H
#define KR_PROM_H

#include <stddef.h>

/*
 * Render the exposition of one instance (instance NAME, or the maps pinned in pin_dir),
 * or of every instance under /sys/fs/bpf/keyrouter when both are NULL.  An instance that
 * is not loaded is exported as keyrouter_up 0 (no instance at all: `keyrouter_up 0`
 * without labels), never as an empty document.  SEEN (NULL: none), kept by a long-running
 * caller from render to render: the instances exported loaded before; one that is gone
 * since (unloaded: no directory) stays in the exposition as keyrouter_up 0.
 * *out: malloc'd, NUL-terminated text (*len bytes); *loaded: instances found loaded.
 * Returns 0 or -errno (-EINVAL: bad instance name; -ENOMEM).
 */
struct kr_follow_names;
int kr_prom_render(const char *instance, const char *pin_dir, struct kr_follow_names *seen,
		   char **out, size_t *len, int *loaded);

/* A label value escaped as the exposition format wants (\\, \", \n), into buf. */
void kr_prom_escape(const char *in, char *buf, size_t size);

#endif
