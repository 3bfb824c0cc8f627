// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `plan --plot`: the SVG plot (see plot_svg.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include "analytics.h"
#include "plot_svg.h"

struct plot_axes {
	double x0, x1, y0, y1;		/* log10 ranges */
	double left, top, w, h;
};

/* s as XML character data or attribute value: the description holds a file path. */
static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			/* control characters are not XML 1.0 characters at all */
			fputc((unsigned char)*s < 0x20 && *s != '\t' ? '?' : *s, f);
		}
	}
}

static double px(const struct plot_axes *a, double k)
{
	return a->left + (log10(k) - a->x0) / (a->x1 - a->x0) * a->w;
}

static double py(const struct plot_axes *a, double cv)
{
	return a->top + (a->y1 - log10(cv)) / (a->y1 - a->y0) * a->h;
}

static void plot_grid(FILE *f, const struct plot_axes *a)
{
	for (int e = (int)floor(a->x0); e <= (int)ceil(a->x1); e++) {
		double x = px(a, pow(10, e));

		if (e < a->x0 - 1e-9 || e > a->x1 + 1e-9)
			continue;
		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n", x,
			a->top, x, a->top + a->h);
		fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle'>%g</text>\n", x,
			a->top + a->h + 18, pow(10, e));
	}
	for (int e = (int)floor(a->y0); e <= (int)ceil(a->y1); e++) {
		double y;

		if (e < a->y0 - 1e-9 || e > a->y1 + 1e-9)
			continue;
		y = py(a, pow(10, e));
		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n",
			a->left, y, a->left + a->w, y);
		fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='end'>%g%%</text>\n", a->left - 6,
			y + 4, 100 * pow(10, e));
	}
	fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='none' "
		"stroke='#333'/>\n", a->left, a->top, a->w, a->h);
}

static void plot_curve(FILE *f, const struct plot_axes *a, const struct kr_plot *p, int total,
		       const char *color, const char *dash)
{
	int first = 1;

	fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2' %s points='", color, dash);
	for (double l = 0; l <= log10(p->kmax) + 1e-9; l += 0.02) {
		struct kr_an_theory t;
		uint64_t k = (uint64_t)llround(pow(10, l));
		double v;

		if (kr_an_theory(p->w, p->rank, p->n, k, 0, &t))
			break;
		v = total ? t.cv_total : t.cv;
		if (v <= 0 || log10(v) < a->y0 || log10(v) > a->y1)
			continue;
		fprintf(f, "%s%.1f,%.1f", first ? "" : " ", px(a, (double)k), py(a, v));
		first = 0;
	}
	fprintf(f, "'/>\n");
}

int kr_plot_svg(const char *file, const struct kr_plot *p)
{
	struct plot_axes a = { 0, log10(p->kmax), 0, 0, 80, 56, 640, 400 };
	double lo = INFINITY, hi = 0;
	FILE *f;

	for (uint32_t i = 0; i < p->npts; i++) {
		lo = fmin(lo, fmin(p->pts[i].cv_total, p->pts[i].cv));
		hi = fmax(hi, p->pts[i].cv_total);
		if (p->pts[i].measured && p->pts[i].cv_measured > 0) {
			lo = fmin(lo, p->pts[i].cv_measured);
			hi = fmax(hi, p->pts[i].cv_measured);
		}
	}
	if (p->target_cv > 0)
		lo = fmin(lo, p->target_cv);
	if (!(lo > 0) || !(hi > 0)) {
		errno = EDOM;
		return -1;
	}
	a.y0 = floor(log10(lo));
	a.y1 = ceil(log10(hi));
	if (a.y1 <= a.y0)
		a.y1 = a.y0 + 1;
	f = fopen(file, "w");
	if (!f)
		return -1;
	fprintf(f, "<?xml version='1.0' encoding='UTF-8'?>\n"
		"<svg xmlns='http://www.w3.org/2000/svg' width='800' height='540' "
		"font-family='sans-serif' font-size='12'>\n"
		"<rect width='800' height='540' fill='white'/>\n"
		"<text x='400' y='22' text-anchor='middle' font-size='15'>Load imbalance (CV of "
		"share / weight share) against points per weight unit</text>\n"
		"<text x='400' y='40' text-anchor='middle' fill='#555'>");
	xml_text(f, p->desc);
	fprintf(f, ", total weight %llu</text>\n"
		"<text transform='translate(22,%.1f) rotate(-90)' text-anchor='middle'>CV</text>\n",
		(unsigned long long)p->wsum, a.top + a.h / 2);
	plot_grid(f, &a);
	plot_curve(f, &a, p, 0, "#1f77b4", "");
	plot_curve(f, &a, p, 1, "#d62728", "stroke-dasharray='6,4'");
	for (uint32_t i = 0; i < p->npts; i++)
		if (p->pts[i].measured && p->pts[i].cv_measured > 0)
			fprintf(f, "<circle cx='%.1f' cy='%.1f' r='4' fill='#2ca02c'/>\n",
				px(&a, (double)p->pts[i].k), py(&a, p->pts[i].cv_measured));
	if (p->target_cv > 0 && log10(p->target_cv) >= a.y0)
		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#999' "
			"stroke-dasharray='2,3'/>\n", a.left, py(&a, p->target_cv), a.left + a.w,
			py(&a, p->target_cv));
	if (p->plan_k && p->plan_k <= p->kmax)
		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#999' "
			"stroke-dasharray='2,3'/>\n<text x='%.1f' y='%.1f'>plan: %llu</text>\n",
			px(&a, (double)p->plan_k), a.top, px(&a, (double)p->plan_k),
			a.top + a.h, px(&a, (double)p->plan_k) + 4, a.top + 14,
			(unsigned long long)p->plan_k);
	fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle'>k = points per weight unit "
		"(point_multiple)</text>\n", a.left + a.w / 2, a.top + a.h + 40);
	fprintf(f, "<g transform='translate(%.1f,%.1f)'>\n"
		"<line x1='0' y1='0' x2='24' y2='0' stroke='#1f77b4' stroke-width='2'/>"
		"<text x='30' y='4'>theory: random placement</text>\n"
		"<line x1='0' y1='18' x2='24' y2='18' stroke='#d62728' stroke-width='2' "
		"stroke-dasharray='6,4'/><text x='30' y='22'>theory with 32-bit collisions</text>\n"
		"<circle cx='12' cy='36' r='4' fill='#2ca02c'/><text x='30' y='40'>measured on a "
		"built ring</text>\n</g>\n</svg>\n", a.left + a.w - 250, a.top + 16);
	return fclose(f);
}

