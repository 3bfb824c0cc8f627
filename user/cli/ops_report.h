/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What `ring status`, `status` and `stats` print: a ring with its two slots. */
#ifndef KR_OPS_REPORT_H
#define KR_OPS_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>
#include "ops.h"
#include "ops_kernel.h"

struct kr_ops_ring_report {
	__u32 id;
	struct kr_ops_ring meta;
	__u64 ctl;
	struct kr_ops_slot slot[2];
	struct kr_slot_stats st[2];	/* kr_slot_stats per slot, summed over CPUs */
	__u64 spilled[2], replica[2];	/* kr_slot_hot, summed over CPUs */
	__u32 hot_keys;			/* kr_hot_keys entries of the ring */
	bool have_moved;
	double moved;			/* share of the key space owned differently by the slots */
	__u32 nsub;			/* shared subsets walking this ring (services' subset_id) */
	struct {
		__u32 id;		/* kr_service.subset_id */
		__u32 members;		/* entries in kr_subset_members */
		__u32 services;		/* services routing by it */
	} sub[16];
};

/* How kr_ops_ring_report() gets the moved share of two present slots. */
enum { KR_REPORT_NO_DIFF = 0, KR_REPORT_DIFF = 1 /* ring stage's note, else a diff */,
       KR_REPORT_DIFF_RECOMPUTE = 2 /* a diff of both images, whatever the note says */ };
/* Fill r for ring id (with_diff: KR_REPORT_*). */
int kr_ops_ring_report(struct kr_inst *in, const struct kr_ops_maps *m, __u32 id,
		       int with_diff, struct kr_ops_ring_report *r);
void kr_ops_ring_report_free(struct kr_ops_ring_report *r);
void kr_ops_ring_report_text(FILE *f, const struct kr_ops_ring_report *r);
/* The report as a JSON object (new reference). */
json_t *kr_ops_ring_report_json(const struct kr_ops_ring_report *r);

/* Moved share between the images in the two slots of a ring (0..1), or -1. */
double kr_ops_slots_moved(const struct kr_ops_maps *m, __u32 id, const struct kr_ops_slot s[2],
			  bool recompute);

/* `ring status` (text): shared subsets, and the memory they save against one dedicated
 * ring per subset (nothing when no service uses a shared subset). */
void kr_ops_subsets_report_text(FILE *f, const struct kr_ops_maps *m);

void kr_ops_fmt_time(__u64 ns, char *buf, size_t len);
void kr_ops_fmt_bytes(__u64 b, char *buf, size_t len);

#endif
