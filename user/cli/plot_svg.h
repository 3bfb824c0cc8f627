/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* `plan --plot FILE.svg`: load imbalance (CV) against points per weight unit, log-log: the
 * theory curves (random placement, and with 32-bit collisions), measured rings as dots,
 * the target and the plan's answer as dotted lines. */
#ifndef KR_PLOT_SVG_H
#define KR_PLOT_SVG_H

#include <stdint.h>

struct kr_plot_point {
	uint64_t k;			/* points per weight unit */
	double cv, cv_total;		/* theory: random placement, with collisions */
	int measured;			/* 1: cv_measured is a built ring's */
	double cv_measured;
};

struct kr_plot {
	const char *desc;		/* the servers ("12 servers 10.0.0.1:443.., weights 1") */
	uint64_t wsum;			/* total weight */
	const uint32_t *w, *rank;	/* weights and tie ranks (the theory curves) */
	uint32_t n;
	uint32_t kmax;			/* the x axis: 1 .. kmax */
	const struct kr_plot_point *pts;
	uint32_t npts;
	double target_cv;		/* > 0: a horizontal line */
	uint64_t plan_k;		/* > 0: a vertical line "plan: k" */
};

/* Writes FILE; 0, or -1 (errno set; nothing to draw: EDOM). */
int kr_plot_svg(const char *file, const struct kr_plot *p);

#endif
