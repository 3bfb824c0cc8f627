/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A decision-trace session (`keyrouter trace`, `keyrouter top`; bpf/kr_trace.h): write the
 * control word kr_trace_ctl (filters, 1-in-N sampling, a lease the data path checks so that
 * a tracer that dies switches the trace off by itself), read the events from the ring
 * buffer kr_trace_rb, switch the trace off at the end.  One session per instance at a time
 * (the ring buffer has one reader): a second one is refused while the first renews its
 * lease.
 */
#ifndef KR_OPS_TRACE_H
#define KR_OPS_TRACE_H

#include <stdbool.h>
#include "ops_kernel.h"

#define KR_TRACE_LEASE_NS	(5ull * 1000000000ull)	/* renewed every second */

struct ring_buffer;

struct kr_ops_trace {
	int ctl_fd, rb_fd, stats_fd;
	struct ring_buffer *rb;
	struct kr_trace_ctl ctl;	/* as written (on, lease) */
	__u64 renewed_ns;		/* CLOCK_MONOTONIC of the last write */
	__s64 mono_to_wall;		/* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
	int (*cb)(void *ctx, const struct kr_trace_event *e);	/* nonzero: stop */
	void *ctx;
	int ncpus;
};

/* Open the instance's trace maps.  -ENOENT (message printed) when the loaded program has
 * no run-time trace (an older build: `keyrouter upgrade` brings it). */
int kr_ops_trace_open(const struct kr_inst *in, struct kr_ops_trace *t);
/* Switch the trace on with CTL's filters and sampling (on, owner, lease set here); events
 * go to cb(ctx, e).  -EBUSY (message) when another live session holds it. */
int kr_ops_trace_start(struct kr_ops_trace *t, const struct kr_trace_ctl *ctl,
		       int (*cb)(void *ctx, const struct kr_trace_event *e), void *ctx);
/* Deliver the events that arrive within timeout_ms (renewing the lease): the number
 * delivered, or -errno (-EINTR when a signal interrupted the wait). */
int kr_ops_trace_poll(struct kr_ops_trace *t, int timeout_ms);
/* Deliver what is in the ring buffer now, without waiting. */
int kr_ops_trace_drain(struct kr_ops_trace *t);
/* Switch it off (when this session still owns it) and deliver what is left. */
void kr_ops_trace_stop(struct kr_ops_trace *t);
/* The data path's figures (summed over CPUs). */
int kr_ops_trace_stats(const struct kr_ops_trace *t, struct kr_trace_stats *out);
/* The control word as it is now (on: a session is running, or one died less than a lease
 * ago). */
int kr_ops_trace_ctl_read(const struct kr_ops_trace *t, struct kr_trace_ctl *out);
/* Switch off whatever session holds it (trace --off). */
int kr_ops_trace_off(struct kr_ops_trace *t);
void kr_ops_trace_close(struct kr_ops_trace *t);
/* Wall-clock ns of an event's ts_ns. */
__u64 kr_ops_trace_wall_ns(const struct kr_ops_trace *t, __u64 ts_ns);

#endif
