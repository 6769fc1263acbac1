/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope report`: everything it renders comes from one model built
 * from the records of one or more results directories.
 *
 *   run      one results directory: run.json, its records, a name (its
 *            labels that differ between the runs compared, else the
 *            directory's name)
 *   group    the results of one phase, test and lane (rail/plane) of a
 *            run: per-pair values (bw_gbps, or lat_us p50 with p99 beside)
 *            and their min/median/max; a matrix of nodes for the heatmap
 *   sweep    median bandwidth per message size per lane, when a phase swept
 *            sizes (all = 1)
 *
 * Renderers (Markdown, HTML with inline SVG plots, JSON summary) read the
 * model, never the records themselves; checks (thresholds, baseline) add
 * rows that the renderers print and that decide the exit code.
 */
#ifndef FS_REPORT_H
#define FS_REPORT_H

#include <jansson.h>
#include <stdio.h>

struct rpair {
	const char *src, *dst;
	double v, v99;		/* bw_gbps, or lat p50 and p99 (us) */
};

struct rgroup {
	char phase[64], test[8];
	int rail, plane;
	struct rpair *p;
	int n, cap;
	int order;		/* the phase's place in the run */
	double size;		/* message size (the largest, when a phase swept) */
	double min, median, max, p99_median;
	const char **nodes;	/* sorted names, for the matrix */
	int nnodes;
};

struct rsweep {
	char phase[64];
	int rail, plane;
	double size[32], bw[32];
	int n;
};

struct rrun {
	char *dir;
	char name[256];		/* how tables and plots call this run */
	json_t *run;		/* run.json (or an empty object) */
	json_t *records;
	json_t *suspects;
	json_t *polar;		/* polarization records */
	struct rgroup *g;
	int ng;
	struct rsweep *sw;
	int nsw;
	int nrec, nerr, missing;
};

struct check {
	char name[256];		/* "bw >= 0.9 x line rate", ... */
	char limit[64], worst[64];
	int failing, total, pass;
	char who[512];		/* the failing endpoints, the first few */
};

struct report {
	struct rrun *runs;
	int nruns;
	const char *by;		/* label key that names runs (--by), or NULL */
	struct check *checks;	/* thresholds */
	int nchecks;
	int thresholds_given;
	struct rrun base;	/* --baseline */
	int have_base;
	double tolerance;
	struct check *regs;	/* baseline comparisons */
	int nregs;
	char plots_dir[4096];	/* where the SVGs are, or "" */
	char plots_note[256];	/* why there are no plots */
	char **svg;		/* file names of plots made, in order */
	char **svg_title;
	int nsvg;
};

/* model.c */
int report_load_run(struct rrun *r, const char *dir);
void report_free_run(struct rrun *r);
/* Name the runs by the labels that differ between them (or by --by). */
void report_name_runs(struct report *rep);
/* The group of run r for (phase, test, rail, plane), or NULL. */
const struct rgroup *report_group(const struct rrun *r, const char *phase, const char *test,
				  int rail, int plane);
/* "rail 1" or "rail 1 plane 1" */
void report_lane(int rail, int plane, char *buf, size_t len);
const char *report_unit(const char *test);

/* checks.c */
int report_thresholds(struct report *rep, const char *path);
void report_baseline(struct report *rep);

/* plots.c: SVG files into dir (gnuplot); 0, or the reason in rep->plots_note */
int report_plots(struct report *rep, const char *dir);

/* render.c */
void report_md(struct report *rep, FILE *f);
void report_html(struct report *rep, FILE *f);
json_t *report_json(struct report *rep);
/* Prometheus text exposition of the summary (for --push) */
char *report_exposition(struct report *rep);

int cmd_report(int argc, const char **argv);

#endif
