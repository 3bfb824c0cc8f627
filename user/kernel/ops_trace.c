// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A decision-trace session (ops_trace.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "ops_trace.h"

static __u64 clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

int kr_ops_trace_open(const struct kr_inst *in, struct kr_ops_trace *t)
{
	memset(t, 0, sizeof(*t));
	t->ctl_fd = kr_ops_map_open(in, KR_MAP_TRACE_CTL, true);
	t->rb_fd = kr_ops_map_open(in, KR_MAP_TRACE_RB, true);
	t->stats_fd = kr_ops_map_open(in, KR_MAP_TRACE_STATS, true);
	t->ncpus = libbpf_num_possible_cpus();
	if (t->ncpus < 1)
		t->ncpus = 1;
	if (t->ctl_fd < 0 || t->rb_fd < 0 || t->stats_fd < 0) {
		int err = t->ctl_fd < 0 ? t->ctl_fd : t->rb_fd < 0 ? t->rb_fd : t->stats_fd;

		if (err == -ENOENT)
			pr_warn("keyrouter: the program of instance '%s' has no run-time trace (%s): "
				"it is an older build; 'keyrouter upgrade' (or unload + load) brings "
				"the one of this keyrouter\n", in->name, KR_MAP_TRACE_CTL);
		else
			pr_warn("keyrouter: couldn't open the trace maps of instance '%s': %s%s\n",
				in->name, strerror(-err), kr_ops_perm_hint(err));
		kr_ops_trace_close(t);
		return err;
	}
	t->mono_to_wall = (__s64)(clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC));
	return 0;
}

int kr_ops_trace_ctl_read(const struct kr_ops_trace *t, struct kr_trace_ctl *out)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(t->ctl_fd, &zero, out) ? -errno : 0;
}

static int ctl_write(struct kr_ops_trace *t)
{
	__u32 zero = 0;

	t->renewed_ns = clock_ns(CLOCK_MONOTONIC);
	if (t->ctl.on)
		t->ctl.expires_ns = t->renewed_ns + KR_TRACE_LEASE_NS;
	return bpf_map_update_elem(t->ctl_fd, &zero, &t->ctl, BPF_ANY) ? -errno : 0;
}

static int rb_event(void *ctx, void *data, size_t size)
{
	struct kr_ops_trace *t = ctx;

	if (size < sizeof(struct kr_trace_event) || !t->cb)
		return 0;
	return t->cb(t->ctx, data) ? 1 : 0;	/* > 0 stops ring_buffer__poll */
}

int kr_ops_trace_start(struct kr_ops_trace *t, const struct kr_trace_ctl *ctl,
		       int (*cb)(void *ctx, const struct kr_trace_event *e), void *ctx)
{
	struct kr_trace_ctl cur;
	int err = kr_ops_trace_ctl_read(t, &cur);

	if (err)
		return err;
	if (cur.on && cur.expires_ns > clock_ns(CLOCK_MONOTONIC) && cur.owner &&
	    cur.owner != (__u32)getpid() && !kill((pid_t)cur.owner, 0)) {
		pr_warn("keyrouter: a trace (or top) of this instance is running already (process "
			"%u): one at a time, the ring buffer has one reader; stop it, or 'keyrouter "
			"trace --off' when it is gone\n", cur.owner);
		return -EBUSY;
	}
	t->cb = cb;
	t->ctx = ctx;
	t->rb = ring_buffer__new(t->rb_fd, rb_event, t, NULL);
	if (!t->rb) {
		err = -errno;
		pr_warn("keyrouter: couldn't map the trace ring buffer: %s\n", strerror(-err));
		return err;
	}
	/* what an earlier session left in the buffer is not this session's */
	ring_buffer__consume(t->rb);
	t->ctl = *ctl;
	t->ctl.on = 1;
	t->ctl.owner = (__u32)getpid();
	err = ctl_write(t);
	if (err)
		pr_warn("keyrouter: couldn't switch the trace on: %s\n", strerror(-err));
	return err;
}

int kr_ops_trace_poll(struct kr_ops_trace *t, int timeout_ms)
{
	int n;

	if (t->ctl.on && clock_ns(CLOCK_MONOTONIC) - t->renewed_ns > 1000000000ull) {
		int err = ctl_write(t);

		if (err)
			return err;
	}
	/* the data path wakes the reader only once KR_TRACE_WAKE_BYTES wait: what came in
	 * meanwhile is taken when the wait times out */
	n = ring_buffer__poll(t->rb, timeout_ms);
	if (n == 0)
		n = ring_buffer__consume(t->rb);
	return n;
}

int kr_ops_trace_drain(struct kr_ops_trace *t)
{
	return ring_buffer__consume(t->rb);
}

void kr_ops_trace_stop(struct kr_ops_trace *t)
{
	struct kr_trace_ctl cur;

	if (!t->ctl.on)
		return;
	t->ctl.on = 0;
	if (!kr_ops_trace_ctl_read(t, &cur) && cur.owner == (__u32)getpid())
		ctl_write(t);
	ring_buffer__consume(t->rb);	/* the events written before it went off */
}

int kr_ops_trace_off(struct kr_ops_trace *t)
{
	memset(&t->ctl, 0, sizeof(t->ctl));
	return ctl_write(t);
}

int kr_ops_trace_stats(const struct kr_ops_trace *t, struct kr_trace_stats *out)
{
	struct kr_trace_stats *v = calloc(t->ncpus, sizeof(*v));
	__u32 zero = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(t->stats_fd, &zero, v)) {
		err = -errno;
	} else {
		for (int c = 0; c < t->ncpus; c++) {
			out->matched += v[c].matched;
			out->sampled += v[c].sampled;
			out->lost += v[c].lost;
			out->expired += v[c].expired;
		}
	}
	free(v);
	return err;
}

void kr_ops_trace_close(struct kr_ops_trace *t)
{
	if (t->rb)
		ring_buffer__free(t->rb);
	t->rb = NULL;
	if (t->ctl_fd > 0)
		close(t->ctl_fd);
	if (t->rb_fd > 0)
		close(t->rb_fd);
	if (t->stats_fd > 0)
		close(t->stats_fd);
	t->ctl_fd = t->rb_fd = t->stats_fd = -1;
}

__u64 kr_ops_trace_wall_ns(const struct kr_ops_trace *t, __u64 ts_ns)
{
	return (__u64)((__s64)ts_ns + t->mono_to_wall);
}
