/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Plots: data files and gnuplot templates (the .gp files of plots/) into SVG files:
 * lanes, heatmaps (node x node; leaf x leaf over REPORT_HEAT_NODES nodes), size
 * sweeps, CDFs (latency; bandwidth of lanes too large for a heatmap), modes (a
 * phase and lane under each run's load-balancing mode: aggregates against the
 * fabric, CDFs of the pairs' rates), entropy
 * bars (polarization probe), pause timelines per run and phase (PFC probe).
 *
 * plots/plot.h finds the templates and runs gnuplot; a missing gnuplot or
 * template leaves the report without plots, and the report says why.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/record.h"
#include "../plots/plot.h"
#include "history.h"
#include "report.h"

int report_add_svg(struct report *rep, const char *file, const char *title)
{
	char *f = NULL, *t = NULL;

	if (FS_ALLOC_GROW(rep->svg, rep->nsvg + 1, rep->svg_alloc) ||
	    FS_ALLOC_GROW(rep->svg_title, rep->nsvg + 1, rep->svg_title_alloc) ||
	    !(f = strdup(file)) || !(t = strdup(title))) {
		free(f);
		if (!rep->oom)
			fs_err_env("out of memory adding the plot '%s'", file);
		rep->oom = 1;
		return -1;
	}
	rep->svg[rep->nsvg] = f;
	rep->svg_title[rep->nsvg] = t;
	rep->nsvg++;
	return 0;
}

/* A name safe in a file name and in a gnuplot string: [A-Za-z0-9._-] */
static void safe(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < len; i++)
		out[i] = (strchr("-_.", in[i]) || (in[i] >= 'a' && in[i] <= 'z') ||
			  (in[i] >= 'A' && in[i] <= 'Z') || (in[i] >= '0' && in[i] <= '9')) ? in[i] : '_';
	out[i] = 0;
}

struct pctx {
	struct report *rep;
	const struct outdir *dir;	/* plots/: gnuplot runs in it, every name is a bare name */
	const char *tdir;
	int n;
	char why[300];
};

/* stem.dat (written) into NN-stem.svg by tmpl; extra: more variables (plot_var_*) */
static int run_plot(struct pctx *p, const char *stem, const char *tmpl, const char *extra, const char *title)
{
	char svg[200], dat[200], vars[4096] = "";

	snprintf(svg, sizeof(svg), "%02d-%s.svg", ++p->n, stem);
	snprintf(dat, sizeof(dat), "%s.dat", stem);
	plot_var_str(vars, sizeof(vars), "datafile", dat);
	plot_var_str(vars, sizeof(vars), "title", title);
	snprintf(vars + strlen(vars), sizeof(vars) - strlen(vars), "%s", extra);
	if (plot_gnuplot(p->tdir, tmpl, vars, p->dir, svg, p->why, sizeof(p->why)))
		return -1;
	if (report_add_svg(p->rep, svg, title)) {
		snprintf(p->why, sizeof(p->why), "out of memory");
		return -1;
	}
	return 0;
}

/* a data file of plots/ (name: STEM.dat, or the name given with ext NULL), made by outfile.h */
static FILE *dat_open(struct pctx *p, struct outfile *of, const char *stem, const char *ext)
{
	char name[200];
	FILE *f;

	snprintf(name, sizeof(name), "%s%s", stem, ext ? ext : "");
	if (outfile_create_in(of, p->dir, name, 0644)) {
		snprintf(p->why, sizeof(p->why), "cannot write %.150s/%.100s", p->dir->path, name);
		return NULL;
	}
	if (!(f = outfile_stream(of))) {
		snprintf(p->why, sizeof(p->why), "cannot write %.150s/%.100s: %s", p->dir->path, name, strerror(errno));
		outfile_abort(of);
	}
	return f;
}

/* the data file written and in place: 0, or -1 (p->why says so) */
static int dat_close(struct pctx *p, struct outfile *of)
{
	char path[300];

	snprintf(path, sizeof(path), "%.298s", of->path ? of->path : "?");
	if (outfile_commit(of, 0)) {
		snprintf(p->why, sizeof(p->why), "cannot write %.250s", path);
		return -1;
	}
	return 0;
}

/* Phases and tests in the first run's order, each once. */
static int phase_tests(const struct report *rep, char (*out)[2][64], int max)
{
	int n = 0, ri, gi, k;

	for (ri = 0; ri < rep->nruns; ri++)
		for (gi = 0; gi < rep->runs[ri].ng; gi++) {
			const struct rgroup *g = &rep->runs[ri].g[gi];

			for (k = 0; k < n; k++)
				if (!strcmp(out[k][0], g->phase) && !strcmp(out[k][1], g->test))
					break;
			if (k == n && n < max) {
				snprintf(out[n][0], 64, "%s", g->phase);
				snprintf(out[n][1], 64, "%s", g->test);
				n++;
			}
		}
	return n;
}

static int plot_lanes(struct pctx *p)
{
	struct report *rep = p->rep;
	char pt[64][2][64], stem[160], sp[64], tt[64], extra[256], title[200];
	int npt = phase_tests(rep, pt, 64), k, ri, gi;

	for (k = 0; k < npt; k++) {
		struct outfile of;
		FILE *f;
		int rows = 0;

		safe(pt[k][0], sp, sizeof(sp));
		safe(pt[k][1], tt, sizeof(tt));
		snprintf(stem, sizeof(stem), "lanes-%s-%s", sp, tt);
		f = dat_open(p, &of, stem, ".dat");
		if (!f)
			return -1;
		if (rep->nruns > 1) {
			fprintf(f, "lane");
			for (ri = 0; ri < rep->nruns; ri++)
				fprintf(f, " \"%s\"", rep->runs[ri].name);
			fprintf(f, "\n");
		}
		{	/* the lanes of this phase and test, in any run, sorted */
			int lanes[128][2], nl = 0, a, b;

			for (ri = 0; ri < rep->nruns; ri++)
				for (gi = 0; gi < rep->runs[ri].ng; gi++) {
					const struct rgroup *g = &rep->runs[ri].g[gi];

					if (strcmp(g->phase, pt[k][0]) || strcmp(g->test, pt[k][1]))
						continue;
					for (a = 0; a < nl; a++)
						if (lanes[a][0] == g->rail && lanes[a][1] == g->plane)
							break;
					if (a == nl && nl < 128) {
						lanes[nl][0] = g->rail;
						lanes[nl++][1] = g->plane;
					}
				}
			for (a = 1; a < nl; a++)
				for (b = a; b > 0 && (lanes[b - 1][0] > lanes[b][0] ||
					(lanes[b - 1][0] == lanes[b][0] && lanes[b - 1][1] > lanes[b][1])); b--) {
					int t0 = lanes[b][0], t1 = lanes[b][1];

					lanes[b][0] = lanes[b - 1][0];
					lanes[b][1] = lanes[b - 1][1];
					lanes[b - 1][0] = t0;
					lanes[b - 1][1] = t1;
				}
			for (a = 0; a < nl; a++) {
				char lane[48];

				fs_lane_name(lanes[a][0], lanes[a][1], lane, sizeof(lane));
				fprintf(f, "\"%s\"", lane);
				for (ri = 0; ri < rep->nruns; ri++) {
					const struct rgroup *g = report_group(&rep->runs[ri], pt[k][0], pt[k][1],
									      lanes[a][0], lanes[a][1]);

					if (rep->nruns == 1)	/* the worst node beside the median: one at a tenth shows */
						fprintf(f, " %g %g %g %g", g->median, g->min, g->max,
							g->worst1_node.src ? g->worst1_node.v : NAN);
					else
						fprintf(f, " %g", g ? g->median : NAN);
				}
				fprintf(f, "\n");
				rows++;
			}
		}
		if (dat_close(p, &of))
			return -1;
		if (!rows)
			continue;
		extra[0] = 0;
		plot_var_str(extra, sizeof(extra), "ylabel", !strcmp(pt[k][1], "bw") ? "median Gb/s" :
			     "median p50 latency (us)");
		plot_var_num(extra, sizeof(extra), "nruns", rep->nruns);
		snprintf(title, sizeof(title), "%.60s: %.8s per lane%s", pt[k][0], pt[k][1],
			 rep->nruns > 1 ? ", by run" : " (median, min..max)");
		if (run_plot(p, stem, "lanes.gp", extra, title))
			return -1;
	}
	return 0;
}

/* a heatmap's data file and the gnuplot lines of its tics (hdr, a bare name), named KIND-PHASE-TEST-rR-pP */
static int heat_open(struct pctx *p, const char *kind, const struct rgroup *g, char *stem, size_t slen,
		     char *hdr, size_t hlen, struct outfile *fo, struct outfile *ho, FILE **f, FILE **h)
{
	char sp[64], tt[64];

	safe(g->phase, sp, sizeof(sp));
	safe(g->test, tt, sizeof(tt));
	snprintf(stem, slen, "%s-%s-%s-r%d-p%d", kind, sp, tt, g->rail, g->plane);
	snprintf(hdr, hlen, "%s.tics.gp", stem);
	if (!(*f = dat_open(p, fo, stem, ".dat")))
		return -1;
	if (!(*h = dat_open(p, ho, hdr, NULL))) {
		outfile_abort(fo);
		return -1;
	}
	return 0;
}

/* "set xtics ('NAME' 0, ...) noenhanced" (ytics with y), every stride-th name, quoted for gnuplot */
static void tics_line(FILE *h, int y, const char *const *names, int n, int stride, const char *more)
{
	int i;

	fprintf(h, "set %s (", y ? "ytics" : "xtics");
	for (i = 0; i < n; i += stride) {
		char nm[200];

		plot_gnuplot_quote(names[i], nm, sizeof(nm));
		fprintf(h, "%s%s %d", i ? ", " : "", nm, i);
	}
	fprintf(h, ") noenhanced%s\n", more);
}

#define HEAT_LABELS_NODES 24	/* a heatmap's cells carry their figures up to this many nodes */

/* the top of a latency heatmap's colours: twice the median (a lane of equal pairs is pale, the
 * middle of the scale; red is twice the median and worse), or the highest figure above that;
 * 0 for bandwidth (the highest figure: blue) */
static double lat_top(const struct rgroup *g)
{
	if (strcmp(g->test, "lat") || !(g->median > 0))
		return 0;
	return g->max > 2 * g->median ? g->max : 2 * g->median;
}

static int plot_heatmaps(struct pctx *p)
{
	const struct rrun *r = &p->rep->runs[0];
	int gi, i, j, k;

	for (gi = 0; gi < r->ng; gi++) {
		const struct rgroup *g = &r->g[gi];
		char stem[160], hdr[200], extra[512], title[200], lane[48];
		struct outfile fo, ho;
		FILE *f, *h;

		if (g->nnodes < 3 || g->nnodes > REPORT_HEAT_NODES)
			continue;	/* a matrix of 2 says nothing; of 64+ is unreadable */
		if (heat_open(p, "heat", g, stem, sizeof(stem), hdr, sizeof(hdr), &fo, &ho, &f, &h))
			return -1;
		/* a pair measured one way only (a tournament measures each
		 * pair once) fills both of its cells */
		for (i = 0; i < g->nnodes; i++)
			for (j = 0; j < g->nnodes; j++) {
				double v = NAN, mirror = NAN;

				for (k = 0; k < g->n; k++) {
					if (!strcmp(g->p[k].src, g->nodes[i]) && !strcmp(g->p[k].dst, g->nodes[j]))
						v = g->p[k].v;
					if (!strcmp(g->p[k].src, g->nodes[j]) && !strcmp(g->p[k].dst, g->nodes[i]))
						mirror = g->p[k].v;
				}
				if (isnan(v))
					v = mirror;
				if (!isnan(v))
					fprintf(f, "%d %d %g\n", j, i, v);
			}
		if (dat_close(p, &fo)) {
			outfile_abort(&ho);
			return -1;
		}
		for (k = 0; k < 2; k++)
			tics_line(h, k, (const char *const *)g->nodes, g->nnodes, 1, "");
		/* the first node on top, as in a table */
		fprintf(h, "set xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\n", g->nnodes - 1, g->nnodes - 1);
		if (dat_close(p, &ho))
			return -1;
		fs_lane_name(g->rail, g->plane, lane, sizeof(lane));
		extra[0] = 0;
		plot_var_str(extra, sizeof(extra), "hdrfile", hdr);
		plot_var_str(extra, sizeof(extra), "cblabel", !strcmp(g->test, "bw") ? "Gb/s" : "p50 us");
		plot_var_num(extra, sizeof(extra), "labels", g->nnodes <= HEAT_LABELS_NODES);
		plot_var_num(extra, sizeof(extra), "high_bad", !strcmp(g->test, "lat"));
		plot_var_num(extra, sizeof(extra), "cbmax", lat_top(g));
		snprintf(title, sizeof(title), "%s: %s, %s, sender x receiver (a pair tested one way fills both cells)",
			 g->phase, g->test, lane);
		if (run_plot(p, stem, "heatmap.gp", extra, title))
			return -1;
	}
	return 0;
}

static int plot_sweeps(struct pctx *p)
{
	const struct rrun *r = &p->rep->runs[0];
	char done[32][64];
	int nd = 0, i, j, k, s;

	for (i = 0; i < r->nsw; i++) {
		char stem[160], sp[64], extra[64], title[200];
		double sizes[64];
		int ns = 0, ncols = 0;
		struct outfile of;
		FILE *f;

		for (k = 0; k < nd; k++)
			if (!strcmp(done[k], r->sw[i].phase))
				break;
		if (k < nd || nd >= 32)
			continue;
		snprintf(done[nd++], 64, "%s", r->sw[i].phase);
		for (j = 0; j < r->nsw; j++)	/* every size of every lane of the phase */
			if (!strcmp(r->sw[j].phase, r->sw[i].phase))
				for (s = 0; s < r->sw[j].n; s++) {
					for (k = 0; k < ns; k++)
						if (sizes[k] == r->sw[j].size[s])
							break;
					if (k == ns && ns < 64)
						sizes[ns++] = r->sw[j].size[s];
				}
		for (j = 1; j < ns; j++)
			for (k = j; k > 0 && sizes[k - 1] > sizes[k]; k--) {
				double t = sizes[k];

				sizes[k] = sizes[k - 1];
				sizes[k - 1] = t;
			}
		safe(r->sw[i].phase, sp, sizeof(sp));
		snprintf(stem, sizeof(stem), "size-%s", sp);
		f = dat_open(p, &of, stem, ".dat");
		if (!f)
			return -1;
		fprintf(f, "size");
		for (j = 0; j < r->nsw; j++)
			if (!strcmp(r->sw[j].phase, r->sw[i].phase)) {
				char lane[48];

				fs_lane_name(r->sw[j].rail, r->sw[j].plane, lane, sizeof(lane));
				fprintf(f, " \"%s\"", lane);
				ncols++;
			}
		fprintf(f, "\n");
		for (k = 0; k < ns; k++) {
			fprintf(f, "%g", sizes[k]);
			for (j = 0; j < r->nsw; j++) {
				double v = NAN;

				if (strcmp(r->sw[j].phase, r->sw[i].phase))
					continue;
				for (s = 0; s < r->sw[j].n; s++)
					if (r->sw[j].size[s] == sizes[k])
						v = r->sw[j].bw[s];
				fprintf(f, " %g", v);
			}
			fprintf(f, "\n");
		}
		if (dat_close(p, &of))
			return -1;
		extra[0] = 0;
		plot_var_num(extra, sizeof(extra), "ncols", ncols);
		snprintf(title, sizeof(title), "%s: bandwidth against message size, per lane", r->sw[i].phase);
		if (run_plot(p, stem, "bw-size.gp", extra, title))
			return -1;
	}
	return 0;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define CDF_POINTS 400	/* a lane's CDF: at most this many steps (quantiles of a large lane) */

/* the rows of a CDF data file: for each series i (n[i] sorted values v[i]), a column pair
 * "VALUE FRACTION", at most CDF_POINTS steps (quantiles of a large series), NaN padding */
static void cdf_rows(FILE *f, double *const *v, const int *n, int ns)
{
	int maxn = 0, k, i;

	for (i = 0; i < ns; i++)
		maxn = n[i] > maxn ? n[i] : maxn;
	maxn = maxn < CDF_POINTS ? maxn : CDF_POINTS;
	for (k = 0; k < maxn; k++) {
		for (i = 0; i < ns; i++) {
			int m = n[i] < CDF_POINTS ? n[i] : CDF_POINTS;
			/* step k of m: the value at that quantile (every value when m is n) */
			int at = m == n[i] ? k : (int)((double)k * (n[i] - 1) / (m - 1) + 0.5);

			if (k < m)
				fprintf(f, "%s%g %g", i ? " " : "", v[i][at], (at + 1.0) / n[i]);
			else
				fprintf(f, "%sNaN NaN", i ? " " : "");
		}
		fprintf(f, "\n");
	}
}

/* g's pairs' values (w 1: their p99), sorted, in a new array; NULL when out of memory
 * (p->why says so) */
static double *sorted_values(struct pctx *p, const struct rgroup *g, int w)
{
	double *v = fs_reallocarray(NULL, (size_t)(g->n ? g->n : 1), sizeof(double));
	int k;

	if (!v) {
		snprintf(p->why, sizeof(p->why), "out of memory");
		return NULL;
	}
	for (k = 0; k < g->n; k++)
		v[k] = w ? g->p[k].v99 : g->p[k].v;
	qsort(v, (size_t)g->n, sizeof(double), dbl_cmp);
	return v;
}

/* A CDF's data file f (of), closed: a column header a group ("NAME" "fI",
 * names[i] as given), then the rows of the groups' sorted values (w 1:
 * their p99).  0, or -1 with the file dropped (p->why says why). */
static int cdf_dat(struct pctx *p, struct outfile *of, FILE *f, const struct rgroup *const *gs,
		   const char *const *names, int ng, int w)
{
	double *v[64];
	int ns[64], i;

	for (i = 0; i < ng; i++) {
		fprintf(f, "%s\"%s\" \"f%d\"", i ? " " : "", names[i], i);
		if (!(v[i] = sorted_values(p, gs[i], w))) {
			while (i--)
				free(v[i]);
			outfile_abort(of);
			return -1;
		}
		ns[i] = gs[i]->n;
	}
	fprintf(f, "\n");
	cdf_rows(f, v, ns, ng);
	for (i = 0; i < ng; i++)
		free(v[i]);
	return dat_close(p, of) ? -1 : 0;
}

/* the CDFs of one phase and test: lat p50 (w 0) or p99 (w 1), bw (w 0) */
static int plot_cdf(struct pctx *p, const char *phase, const char *test, int w)
{
	const struct rrun *r = &p->rep->runs[0];
	const struct rgroup *gs[64];
	const char *names[64];
	int ng = 0, gi, i, bw = !strcmp(test, "bw");
	char stem[160], sp[64], extra[128], title[200], lanes[64][48];
	struct outfile of;
	FILE *f;

	for (gi = 0; gi < r->ng && ng < 64; gi++)
		if (!strcmp(r->g[gi].phase, phase) && !strcmp(r->g[gi].test, test) && r->g[gi].n)
			gs[ng++] = &r->g[gi];
	if (!ng)
		return 0;
	safe(phase, sp, sizeof(sp));
	snprintf(stem, sizeof(stem), "cdf-%s-%s", sp, bw ? "bw" : w ? "p99" : "p50");
	f = dat_open(p, &of, stem, ".dat");
	if (!f)
		return -1;
	for (i = 0; i < ng; i++) {
		fs_lane_name(gs[i]->rail, gs[i]->plane, lanes[i], sizeof(lanes[i]));
		names[i] = lanes[i];
	}
	if (cdf_dat(p, &of, f, gs, names, ng, w))
		return -1;
	extra[0] = 0;
	plot_var_num(extra, sizeof(extra), "nlanes", ng);
	plot_var_str(extra, sizeof(extra), "xlabel", bw ? "bandwidth (Gb/s)" : w ? "one-way latency p99 (us)" :
		     "one-way latency p50 (us)");
	snprintf(title, sizeof(title), "%.60s: %s over the pairs, per lane (CDF)", phase,
		 bw ? "bandwidth" : w ? "latency p99" : "latency p50");
	return run_plot(p, stem, "cdf.gp", extra, title);
}

/* latency CDFs of every phase; bandwidth ones where a lane is too large for a heatmap */
static int plot_cdfs(struct pctx *p)
{
	const struct rrun *r = &p->rep->runs[0];
	char pt[64][2][64];
	int npt = phase_tests(p->rep, pt, 64), k, gi, large;

	for (k = 0; k < npt; k++) {
		if (!strcmp(pt[k][1], "lat")) {
			if (plot_cdf(p, pt[k][0], "lat", 0) || plot_cdf(p, pt[k][0], "lat", 1))
				return -1;
			continue;
		}
		for (gi = 0, large = 0; gi < r->ng; gi++)
			large |= !strcmp(r->g[gi].phase, pt[k][0]) && !strcmp(r->g[gi].test, "bw") &&
				 r->g[gi].nnodes > REPORT_HEAT_NODES;
		if (large && !strcmp(pt[k][1], "bw") && plot_cdf(p, pt[k][0], "bw", 0))
			return -1;
	}
	return 0;
}

/* modes: a bandwidth phase and lane of several runs (load-balancing modes,
 * modes.c): bars of the aggregates against the fabric, and the CDF of the
 * pairs' rates a run */
/* a run's name as a quoted data-file column: no quote, backslash or control character */
static void dat_name(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < len; i++)
		out[i] = strchr("\"'\\", in[i]) || (unsigned char)in[i] < 0x20 ? '_' : in[i];
	out[i] = 0;
}

static int plot_mode_group(struct pctx *p, const struct rgroup *g0)
{
	const struct rgroup *gs[64];
	const char *names[64];
	int ng = 0, ri, i;
	char stem[200], sp[64], lane[48], title[240], extra[128], quoted[64][256];
	struct outfile of;
	FILE *f;

	for (ri = 0; ri < p->rep->nruns && ng < 64; ri++) {
		const struct rgroup *g = report_group(&p->rep->runs[ri], g0->phase, "bw", g0->rail, g0->plane);

		if (g && g->n) {
			names[ng] = p->rep->runs[ri].name;
			gs[ng++] = g;
		}
	}
	if (ng < 2)
		return 0;
	safe(g0->phase, sp, sizeof(sp));
	fs_lane_name(g0->rail, g0->plane, lane, sizeof(lane));
	snprintf(stem, sizeof(stem), "modes-%s-r%dp%d", sp, g0->rail, g0->plane);
	if (!(f = dat_open(p, &of, stem, ".dat")))
		return -1;
	for (i = 0; i < ng; i++) {
		char q[256];

		dat_name(names[i], q, sizeof(q));
		fprintf(f, "\"%s\" %g %g\n", q, gs[i]->agg, gs[i]->exp_spray);
	}
	if (dat_close(p, &of))
		return -1;
	snprintf(title, sizeof(title), "%.60s, %s: aggregate under each mode", g0->phase, lane);
	if (run_plot(p, stem, "modes.gp", "", title))
		return -1;
	/* the pairs' rates, a CDF a run */
	snprintf(stem, sizeof(stem), "modes-cdf-%s-r%dp%d", sp, g0->rail, g0->plane);
	if (!(f = dat_open(p, &of, stem, ".dat")))
		return -1;
	for (i = 0; i < ng; i++) {
		dat_name(names[i], quoted[i], sizeof(quoted[i]));
		names[i] = quoted[i];
	}
	if (cdf_dat(p, &of, f, gs, names, ng, 0))
		return -1;
	extra[0] = 0;
	plot_var_num(extra, sizeof(extra), "nlanes", ng);
	plot_var_str(extra, sizeof(extra), "xlabel", "bandwidth of a pair (Gb/s)");
	snprintf(title, sizeof(title), "%.60s, %s: the pairs' rates under each mode (CDF)", g0->phase, lane);
	return run_plot(p, stem, "cdf.gp", extra, title);
}

static int plot_modes(struct pctx *p)
{
	const struct rrun *r;
	int ri, gi, k, done;

	if (p->rep->nruns < 2)
		return 0;
	for (ri = 0; ri < p->rep->nruns; ri++) {
		r = &p->rep->runs[ri];
		for (gi = 0; gi < r->ng; gi++) {
			const struct rgroup *g = &r->g[gi];

			if (strcmp(g->test, "bw"))
				continue;
			for (k = done = 0; k < ri && !done; k++)	/* an earlier run drew it */
				done = report_group(&p->rep->runs[k], g->phase, "bw", g->rail, g->plane) != NULL;
			if (!done && plot_mode_group(p, g))
				return -1;
		}
	}
	return 0;
}

/* over REPORT_HEAT_NODES nodes: a lane's leaf x leaf matrix (aggregate.c) */
static int plot_leafheat(struct pctx *p)
{
	const struct rrun *r = &p->rep->runs[0];
	size_t c, cells = (size_t)r->nleaf * (size_t)r->nleaf;
	int gi, i, j, k, stride = r->nleaf <= 32 ? 1 : (r->nleaf + 15) / 16;

	for (gi = 0; gi < r->ng; gi++) {
		const struct rgroup *g = &r->g[gi];
		char stem[160], hdr[200], extra[512], title[300], lane[48];
		double top = 0;	/* one colour scale for the lanes of a phase and test: a slow lane shows */
		struct outfile fo, ho;
		FILE *f, *h;

		if (!g->leafm || !g->leafm_cells)
			continue;
		for (k = 0; k < r->ng; k++)
			if (r->g[k].leafm && !strcmp(r->g[k].phase, g->phase) && !strcmp(r->g[k].test, g->test)) {
				for (c = 0; c < cells; c++)
					if (r->g[k].leafm[c] > top)
						top = r->g[k].leafm[c];
				if (lat_top(&r->g[k]) > top)	/* latency: twice the median at least */
					top = lat_top(&r->g[k]);
			}
		if (heat_open(p, "leafheat", g, stem, sizeof(stem), hdr, sizeof(hdr), &fo, &ho, &f, &h))
			return -1;
		for (i = 0; i < r->nleaf; i++)	/* every cell: an image is a full grid */
			for (j = 0; j < r->nleaf; j++)
				fprintf(f, "%d %d %g\n", j, i, g->leafm[(size_t)i * r->nleaf + j]);
		if (dat_close(p, &fo)) {
			outfile_abort(&ho);
			return -1;
		}
		for (k = 0; k < 2; k++)
			tics_line(h, k, (const char *const *)r->leaf, r->nleaf, stride, k ? "" : " rotate by 90 right");
		fprintf(h, "set xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\n", r->nleaf - 1, r->nleaf - 1);
		if (dat_close(p, &ho))
			return -1;
		fs_lane_name(g->rail, g->plane, lane, sizeof(lane));
		extra[0] = 0;
		plot_var_str(extra, sizeof(extra), "hdrfile", hdr);
		plot_var_str(extra, sizeof(extra), "cblabel", !strcmp(g->test, "bw") ? "Gb/s (median)" : "p50 us (median)");
		plot_var_str(extra, sizeof(extra), "what", r->leaf_by);
		plot_var_num(extra, sizeof(extra), "cbmax", top > 0 ? top : 1);
		plot_var_num(extra, sizeof(extra), "high_bad", !strcmp(g->test, "lat"));
		snprintf(title, sizeof(title), "%.60s: %s, %s, %s x %s: the median of the pairs between "
			 "their nodes (%d nodes, %d %s)", g->phase, g->test, lane, r->leaf_by, r->leaf_by,
			 g->nnodes, r->nleaf, !strcmp(r->leaf_by, "leaf") ? "leaves" : "pods");
		if (run_plot(p, stem, "leafheat.gp", extra, title))
			return -1;
	}
	return 0;
}

static int plot_polar(struct pctx *p)
{
	const struct rrun *r = &p->rep->runs[0];
	json_t *rec;
	size_t k;
	int n = 0;

	json_array_foreach(r->polar, k, rec) {
		json_t *ent = json_object_get(rec, "entropy"), *e;
		char stem[160], sp[64], title[300], extra[128] = "";
		struct outfile of;
		size_t i;
		FILE *f;

		if (!json_array_size(ent) || n >= 12)
			continue;
		safe(record_str(rec, "phase", "probe"), sp, sizeof(sp));
		snprintf(stem, sizeof(stem), "polar-%s-%d", sp, n++);
		f = dat_open(p, &of, stem, ".dat");
		if (!f)
			return -1;
		json_array_foreach(ent, i, e)
			fprintf(f, "%lld %g %lld\n", (long long)json_integer_value(json_object_get(e, "value")),
				json_number_value(json_object_get(e, "gbps")),
				(long long)json_integer_value(json_object_get(e, "sharing")));
		if (dat_close(p, &of))
			return -1;
		snprintf(title, sizeof(title), "%.60s: %.40s -> %.40s, set %d: %.60s (%.1f of %d paths)",
			 record_str(rec, "phase", "probe"), record_str(rec, "src.node", record_str(rec, "src.ip", "?")),
			 record_str(rec, "dst.node", record_str(rec, "dst.ip", "?")),
			 record_int(rec, "params.set", 0, 0, INT_MAX - 1) + 1, record_str(rec, "verdict", "?"),
			 record_num(rec, "metrics.paths_used", 0), record_int(rec, "params.paths", 0, 0, INT_MAX));
		plot_var_str(extra, sizeof(extra), "xlabel", !strcmp(record_str(rec, "params.entropy", "sport"), "sport") ?
			     "TCP source port" : "flow label (the UDP source port on mlx5)");
		if (run_plot(p, stem, "entropy.gp", extra, title))
			return -1;
	}
	return 0;
}

/* ---- PFC pause timelines ---- */

#define PFC_SERIES 16		/* a plot's legend stays readable */
#define PFC_POINTS 4096		/* intervals of one series */

struct tl_series {		/* one line of a timeline: a port's priority, one direction */
	json_t *rec;
	int prio, d;
	char name[128];
};

/* the values of a series and the end of each interval, n = the shortest of t and them */
static int pfc_values(json_t *rec, int prio, const char *key, double *v, double *t)
{
	json_t *ta = record_get(rec, "timeline.t");
	int n = report_pfc_series(rec, prio, key, v, PFC_POINTS), k;

	if ((size_t)n > json_array_size(ta))
		n = (int)json_array_size(ta);
	for (k = 0; k < n; k++) {
		json_t *x = json_array_get(ta, (size_t)k);

		t[k] = json_is_number(x) ? json_number_value(x) : NAN;
	}
	return n;
}

/* 1: a point gnuplot can draw (both numbers); 2: and one that is not 0 */
static int drawable(const double *t, const double *v, int n)
{
	int k, w = 0;

	for (k = 0; k < n; k++)
		if (!isnan(t[k]) && !isnan(v[k]))
			w = v[k] != 0 ? 2 : w ? w : 1;
	return w;
}

/* a number for gnuplot: NaN is missing (set datafile missing "NaN") */
static void gnum(FILE *f, const char *sep, double x, double y)
{
	if (isnan(x) || isnan(y))
		fprintf(f, "%sNaN NaN", sep);
	else
		fprintf(f, "%s%g %g", sep, x, y);
}

/*
 * Pairs of columns "SECONDS VALUE" per series, a header row of names: a
 * value holds over its interval, so each series starts at the start of its
 * first interval (drawn as steps) and the ends follow.
 */
static int pfc_dat(struct pctx *p, const char *file, const struct tl_series *s, int ns, const char *what)
{
	static double v[PFC_SERIES][PFC_POINTS], t[PFC_SERIES][PFC_POINTS];
	int n[PFC_SERIES], i, k, rows = 0;
	struct outfile of;
	FILE *f;

	f = dat_open(p, &of, file, NULL);
	if (!f)
		return -1;
	for (i = 0; i < ns; i++) {
		char key[16];

		snprintf(key, sizeof(key), "%s_%s", s[i].d ? "tx" : "rx", what);
		n[i] = pfc_values(s[i].rec, s[i].prio, key, v[i], t[i]);
		if (n[i] + 1 > rows)
			rows = n[i] + 1;
		fprintf(f, "%s\"%s\" \"s%d\"", i ? " " : "", s[i].name, i);
	}
	fputc('\n', f);
	for (k = 0; k < rows; k++) {
		for (i = 0; i < ns; i++) {
			if (k > n[i] || !n[i])
				gnum(f, i ? " " : "", NAN, NAN);
			else if (!k)	/* the first interval starts at 0 */
				gnum(f, i ? " " : "", report_pfc_at(s[i].rec, 0), v[i][0]);
			else
				gnum(f, i ? " " : "", t[i][k - 1], v[i][k - 1]);
		}
		fputc('\n', f);
	}
	return dat_close(p, &of);
}

/* a series' name, safe in a quoted column header and for gnuplot */
static void pfc_name(const struct rpfc *pf, int prio, int d, int est, char *out, size_t len)
{
	char node[48], ifc[24];

	dat_name(pf->node, node, sizeof(node));
	dat_name(pf->iface, ifc, sizeof(ifc));
	snprintf(out, len, "%s %s prio %d %s%s", node, ifc, prio, d ? "tx" : "rx", est ? " (est.)" : "");
	for (; *out; out++)
		if (*out == '"' || (unsigned char)*out < ' ')
			*out = '_';
}

/* a candidate line of a timeline, and how hard it paused (its largest rate) */
struct tl_cand {
	const struct rpfc *pf;
	int prio, d, frac, order;
	double score;
};

static int cand_by_score(const void *a, const void *b)
{
	const struct tl_cand *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->order - y->order;
}

static int cand_by_order(const void *a, const void *b)
{
	return ((const struct tl_cand *)a)->order - ((const struct tl_cand *)b)->order;
}

/* one plot of a run's phase: pause frames/s per node, priority and direction; the paused fraction below */
static int plot_pfc_phase(struct pctx *p, int ri, const char *phase, int seq)
{
	static double v[PFC_POINTS], t[PFC_POINTS];
	const struct rrun *r = &p->rep->runs[ri];
	struct tl_series pps[PFC_SERIES], frac[PFC_SERIES];
	struct tl_cand *c = NULL;
	size_t c_alloc = 0;
	int npps = 0, nfrac = 0, nc = 0, i, j, prio, d, k;
	double dfrom = NAN, dto = NAN;
	char stem[160], sp[64], extra[512] = "", title[300], fpath[200];
	char fcols[4 * PFC_SERIES + 1] = "", cut[48];

	for (i = 0; i < r->npfc; i++) {
		const struct rpfc *pf = &r->pfc[i];
		json_t *ph = record_get(pf->rec, "timeline.phase"), *ta = record_get(pf->rec, "timeline.t");

		if (strcmp(pf->phase, phase))
			continue;
		/* the load's window: its intervals ("during"), over the ports */
		for (k = 0; k < (int)json_array_size(ph) && k < (int)json_array_size(ta); k++) {
			const char *word = json_string_value(json_array_get(ph, (size_t)k));
			double from = report_pfc_at(pf->rec, k), to = json_number_value(json_array_get(ta, (size_t)k));

			if (!json_is_number(json_array_get(ta, (size_t)k)) || isnan(from) || !word ||
			    strcmp(word, "during"))
				continue;
			if (!(from >= dfrom))
				dfrom = from;
			if (!(to <= dto))
				dto = to;
		}
		for (prio = 0; prio < 8; prio++)
			for (d = 0; d < 2; d++) {
				int has_pps, has_frac, n;
				double score = 0;

				/* a series with something to draw, and something not 0 in it or in its fraction */
				n = pfc_values(pf->rec, prio, d ? "tx_pps" : "rx_pps", v, t);
				has_pps = drawable(t, v, n);
				for (k = 0; k < n; k++)
					if (v[k] > score)
						score = v[k];
				n = pfc_values(pf->rec, prio, d ? "tx_paused" : "rx_paused", v, t);
				has_frac = drawable(t, v, n);
				if (!has_pps || (has_pps < 2 && has_frac < 2))
					continue;
				if (FS_ALLOC_GROW(c, nc + 1, c_alloc)) {
					free(c);
					snprintf(p->why, sizeof(p->why), "out of memory");
					return -1;
				}
				c[nc] = (struct tl_cand){ .pf = pf, .prio = prio, .d = d, .frac = has_frac == 2,
							  .order = nc, .score = score };
				nc++;
			}
	}
	if (!nc)
		return 0;	/* no pauses: the table says so */
	if (nc > PFC_SERIES) {	/* the ports that paused most, in the table's order */
		qsort(c, (size_t)nc, sizeof(*c), cand_by_score);
		qsort(c, PFC_SERIES, sizeof(*c), cand_by_order);
	}
	for (i = 0; i < nc && npps < PFC_SERIES; i++) {
		int est = 0;

		for (j = 0; j < c[i].pf->np; j++)
			est |= c[i].pf->p[j].prio == c[i].prio && c[i].pf->p[j].estimated;
		pps[npps] = (struct tl_series){ .rec = c[i].pf->rec, .prio = c[i].prio, .d = c[i].d };
		pfc_name(c[i].pf, c[i].prio, c[i].d, 0, pps[npps].name, sizeof(pps[npps].name));
		npps++;
		if (c[i].frac) {
			snprintf(fcols + strlen(fcols), sizeof(fcols) - strlen(fcols), "%s%d", nfrac ? " " : "", npps);
			frac[nfrac] = pps[npps - 1];
			pfc_name(c[i].pf, c[i].prio, c[i].d, est, frac[nfrac].name, sizeof(frac[nfrac].name));
			nfrac++;
		}
	}
	free(c);
	safe(phase, sp, sizeof(sp));
	snprintf(stem, sizeof(stem), "pfc-%s-%d", sp, seq);
	snprintf(fpath, sizeof(fpath), "%s.dat", stem);
	if (pfc_dat(p, fpath, pps, npps, "pps"))
		return -1;
	snprintf(fpath, sizeof(fpath), "%s-paused.dat", stem);
	if (nfrac && pfc_dat(p, fpath, frac, nfrac, "paused"))
		return -1;
	plot_var_str(extra, sizeof(extra), "fracfile", fpath);
	plot_var_str(extra, sizeof(extra), "fcols", fcols);
	plot_var_num(extra, sizeof(extra), "npps", npps);
	plot_var_num(extra, sizeof(extra), "nfrac", nfrac);
	plot_var_num(extra, sizeof(extra), "dfrom", isnan(dfrom) ? 0 : dfrom);
	plot_var_num(extra, sizeof(extra), "dto", isnan(dto) ? 0 : dto);
	snprintf(cut, sizeof(cut), " (the %d of %d that paused most)", PFC_SERIES, nc);
	snprintf(title, sizeof(title), "%.100s%s%.60s: PFC pause frames/s%s per port, priority and direction%s",
		 p->rep->nruns > 1 ? r->name : "", p->rep->nruns > 1 ? ", " : "", phase,
		 nfrac ? " and paused fraction" : "", nc > PFC_SERIES ? cut : "");
	return run_plot(p, stem, "pfc.gp", extra, title);
}

static int plot_pfc(struct pctx *p)
{
	int ri, i, j, seq = 0;

	for (ri = 0; ri < p->rep->nruns; ri++)
		for (i = 0; i < p->rep->runs[ri].npfc; i++) {
			const struct rrun *r = &p->rep->runs[ri];

			for (j = 0; j < i && strcmp(r->pfc[j].phase, r->pfc[i].phase); j++)
				;
			if (j < i)
				continue;	/* the phase is plotted */
			if (seq >= 16)
				return 0;
			if (plot_pfc_phase(p, ri, r->pfc[i].phase, seq++))
				return -1;
		}
	return 0;
}

/* --history: series run by run (a history array each) into one plot; names: the series' */
static int plot_series(struct pctx *p, const char *stem, json_t **e, const char **names, int n, const char *ylabel,
		       const char *title)
{
	char extra[600] = "";
	struct outfile of;
	size_t k, len = 0;
	FILE *f;
	int i;

	if (!(f = dat_open(p, &of, stem, ".dat")))
		return -1;
	fprintf(f, "run");
	for (i = 0; i < n; i++) {
		char sn[120];

		safe(names[i], sn, sizeof(sn));
		fprintf(f, " %s", sn);
		if (json_array_size(json_object_get(e[i], "history")) > len)
			len = json_array_size(json_object_get(e[i], "history"));
	}
	fprintf(f, "\n");
	for (k = 0; k < len; k++) {
		fprintf(f, "%zu", k + 1);
		for (i = 0; i < n; i++) {
			json_t *v = json_array_get(json_object_get(e[i], "history"), k);

			if (json_is_number(v))
				fprintf(f, " %.6g", json_number_value(v));
			else
				fprintf(f, " NaN");
		}
		fprintf(f, "\n");
	}
	if (dat_close(p, &of))
		return -1;
	plot_var_str(extra, sizeof(extra), "ylabel", ylabel);
	plot_var_num(extra, sizeof(extra), "nseries", n);
	return run_plot(p, stem, "trend.gp", extra, title);
}

#define TREND_PLOTS 8

/* --history: every lane's median run by run (a plot a phase, test and size), and each suspect's
 * and repeat offender's value (a plot each, the first TREND_PLOTS) */
static int plot_history(struct pctx *p)
{
	json_t *lanes = json_object_get(p->rep->history, "lanes"), *e[64];
	const char *names[64];
	char nbuf[64][40], title[300], stem[64];
	size_t i = 0, j, k;
	int nplots = 0, seq = 0;

	while (i < json_array_size(lanes) && nplots < TREND_PLOTS) {
		json_t *a = json_array_get(lanes, i);
		int n = 0;

		for (j = i; j < json_array_size(lanes) && n < 64; j++) {
			json_t *b = json_array_get(lanes, j);

			if (strcmp(record_str(a, "phase", ""), record_str(b, "phase", "")) ||
			    strcmp(record_str(a, "test", ""), record_str(b, "test", "")) ||
			    record_num(a, "size", 0) != record_num(b, "size", 0))
				break;
			snprintf(nbuf[n], sizeof(nbuf[n]), "rail%d.%d", record_int(b, "rail", 0, 0, 127),
				 record_int(b, "plane", 0, 0, 127));
			names[n] = nbuf[n];
			e[n++] = b;
		}
		snprintf(title, sizeof(title), "%.100s %s: every lane's median, run by run", record_str(a, "phase", "?"),
			 record_str(a, "test", "?"));
		snprintf(stem, sizeof(stem), "trend-lanes-%d", seq++);
		if (plot_series(p, stem, e, names, n, strcmp(record_str(a, "test", ""), "lat") ? "Gb/s" : "us", title))
			return -1;
		nplots++;
		i = j;
	}
	for (k = 0; k < 2; k++) {
		json_t *list = json_object_get(p->rep->history, k ? "repeat" : "suspects"), *x;

		json_array_foreach(list, j, x) {
			char name[2048];

			if (nplots >= 2 * TREND_PLOTS)
				return 0;
			if (k && json_is_true(json_object_get(x, "repeat")) && json_object_get(x, "status"))
				continue;	/* a suspect of tonight too: plotted */
			hist_entity_name(name, sizeof(name), x, record_str(p->rep->history, "target.run", NULL));
			snprintf(title, sizeof(title), "%.200s: %s, run by run", name, k ? "a repeat offender" : "a suspect");
			snprintf(stem, sizeof(stem), "trend-%s-%zu", k ? "repeat" : "suspect", j);
			names[0] = record_str(x, "node", "lane");
			e[0] = x;
			if (plot_series(p, stem, e, names, 1, strcmp(record_str(x, "test", ""), "lat") ? "Gb/s" : "us", title))
				return -1;
			nplots++;
		}
	}
	return 0;
}

int report_plots(struct report *rep, const struct outdir *dir)
{
	struct pctx p = { .rep = rep, .dir = dir };
	char tdir[PATH_MAX];

	if (plot_find_templates(tdir, sizeof(tdir))) {
		snprintf(rep->plots_note, sizeof(rep->plots_note),
			 "no plots: the gnuplot templates (plots/*.gp) are not in %.150s; set FABSCOPE_PLOTS",
			 plot_templates_default());
		return -1;
	}
	p.tdir = tdir;
	if (plot_lanes(&p) || plot_heatmaps(&p) || plot_leafheat(&p) || plot_sweeps(&p) || plot_cdfs(&p) || plot_modes(&p) ||
	    plot_polar(&p) || plot_pfc(&p) || (rep->history && plot_history(&p))) {
		snprintf(rep->plots_note, sizeof(rep->plots_note), "%s%.200s",
			 rep->nsvg ? "some plots are missing: " : "no plots: ", p.why[0] ? p.why : strerror(errno));
		return -1;
	}
	snprintf(rep->plots_dir, sizeof(rep->plots_dir), "%s", dir->path);
	return 0;
}
