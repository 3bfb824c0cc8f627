/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The live view `keyrouter top` prints and `keyrouter balance` acts on (docs/operations.md
 * "Tracing decisions and top"): per service and its ring, per backend, the packets between
 * two rounds (kr_svc_stats, kr_backend_stats), the backend's points and hash space in the
 * active image, and the hottest keys of each backend from the sampled decision trace,
 * counted with Space-Saving (Metwally, Agrawal, El Abbadi 2005): KR_TOP_SLOTS counters per
 * backend, so memory stays bounded whatever the number of distinct keys, and every key with
 * more than 1/KR_TOP_SLOTS of a backend's sampled packets is among them, its count
 * over-estimated by at most `err`.
 */
#ifndef KR_TOP_VIEW_H
#define KR_TOP_VIEW_H
#include <signal.h>
#include <stdbool.h>
#include "analytics.h"
#include "ops.h"
#include "ops_svcstats.h"
#include "trace_out.h"

#define KR_TOP_SLOTS	64	/* Space-Saving counters per backend */

struct kr_top_counter {
	__u64 count, err;
	__u32 hash;		/* the key's hash, as the data path computed it */
	__u16 len;
	__u8 key[KR_KEY_BUF];
};

/* One backend of a service's ring. */
struct kr_top_be {
	__u32 id;
	__u64 points;			/* its points in the ring (the expected share's weight) */
	__u64 space;			/* hash space it owns */
	__u64 pk0, pk1;			/* kr_backend_stats packets at the two rounds */
	unsigned nrings;		/* rings that have it */
	struct kr_top_counter ss[KR_TOP_SLOTS];
	unsigned nss;
	__u64 sampled;
};

struct kr_top_svc {
	__u32 stats_id;
	char name[KR_SVC_NAME_MAX];
	char vip[64];
	__u32 ring_id;
	__u8 key_type;
	double ring_cv;
	struct kr_top_be *be;
	unsigned nbe;
	struct kr_svc_stats c0, c1;	/* the service's counters at the two rounds */
	bool migrating;
	struct kr_an_ring an;		/* the active image's points (with keep_ring), owner[] =
					 * global backend ids */
};

struct kr_top {
	struct kr_inst *in;
	struct kr_ops_maps *m;
	struct kr_trace_names *names;
	struct kr_ops_trace *t;
	struct kr_top_svc *svc;
	unsigned nsvc;
	int only;			/* stats id of --service, or -1 */
	int only_ring;			/* ring id whose services only, or -1 */
	bool keep_ring;			/* keep each service's ring points (svc.an) */
	__u32 sample;
	__u64 events;
	struct kr_trace_stats ts0;	/* the trace's figures at the start of the round */
};

/* The services (all, tp->only, or those of ring tp->only_ring) and their rings' active
 * images.  0 or -errno (said why). */
int kr_top_services_load(struct kr_top *tp);
/* The trace's event callback: counts each routed event's key for its backend. */
int kr_top_on_event(void *ctx, const struct kr_trace_event *e);
/* Counters now: the previous ones become c0 / pk0. */
void kr_top_counters_read(struct kr_top *tp);
/* Starts the trace (ctl: sample, filters) with kr_top_on_event and reads the counters:
 * the first round starts now.  0 or -errno. */
int kr_top_start(struct kr_top *tp, const struct kr_trace_ctl *ctl);
/* One round: the events of `interval` seconds (until *stop), then the counters; returns
 * the seconds it took, ts the trace's figures of the round. */
double kr_top_round(struct kr_top *tp, double interval, volatile sig_atomic_t *stop,
		    struct kr_trace_stats *ts);
/* Sorts a backend's counters, hottest first. */
void kr_top_sort(struct kr_top_be *b);
/* Forgets the round's hot keys (they are per round). */
void kr_top_reset(struct kr_top *tp);
/* A counter between the two rounds (0 if it went back). */
static inline __u64 kr_top_delta(__u64 was, __u64 now)
{
	return now >= was ? now - was : 0;
}
/* Counter f of service s between the two rounds. */
#define KR_TOP_DELTA(s, f) kr_top_delta((s)->c0.f, (s)->c1.f)
void kr_top_free(struct kr_top *tp);
#endif
