/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the report's renderings: what render.c, polar.c, pfc.c and coll*.c
 * share.  render.c walks the sections (report.h: report_md, report_html,
 * report_json, report_exposition); polar.c renders the hash polarization
 * section for each, pfc.c the PFC pauses section, coll*.c the collectives
 * section (and their checks and plot, for checks.c and cmd.c).  Markdown
 * and HTML are one model of each section (doc.h), built by the
 * report_*_section functions and written by its two back ends.
 */
#ifndef FS_REPORT_RENDER_H
#define FS_REPORT_RENDER_H

#include <jansson.h>
#include <stdio.h>

#include "doc.h"
#include "report.h"

/* render.c */

/* a growing string: { 0 } is empty; s is NULL until something is put */
struct report_buf {
	char *s;
	size_t len, cap;
	int oom;	/* something could not be put: nothing more is */
};

/* appends printf-style to b */
void report_bput(struct report_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The Prometheus families of polar.c, pfc.c and coll-export.c take the
 * runs of one Pushgateway group (prom.c): lbl[ri] is NULL for a run not in
 * it, else what its samples' labels begin with: "" (the report's only
 * run) or run="NAME", (one of several).
 */

/* tested.c: "What was tested" (a column per run) under the verdict; a run's "tested" for the JSON summary */
void report_tested_section(const struct report *rep, struct rdoc *d);
json_t *report_tested_json(const struct report *rep, const struct rrun *r);

/* worst.c: "Worst pairs and nodes" of the first run's lanes over
 * REPORT_MATRIX_NODES nodes; nothing when it has none */
void report_worst_section(const struct report *rep, struct rdoc *d);

/*
 * polar.c: the hash polarization section.  report_polar_section adds
 * nothing when neither the first run nor the second has polarization
 * records; report_polar_exposition always writes the HELP and TYPE lines
 * of its families.
 */

/* "Hash polarization": a row per set of the probe, the collisions of the polarized ones, the worst run */
void report_polar_section(const struct report *rep, struct rdoc *d);
/* run r's probe records for the JSON summary: the verdicts, without the per-flow detail */
json_t *report_polar_json(const struct rrun *r);
/* the fabscope_polarization_* families, a sample per set of the probe */
void report_polar_exposition(const struct report *rep, const char *const *lbl, struct report_buf *b);

/*
 * pfc.c: the PFC pauses section.  report_pfc_section adds nothing, and
 * report_pfc_exposition appends nothing, when no run has PFC records.
 */

/* "PFC pauses": a row per port and priority, then the lines under it */
void report_pfc_section(const struct report *rep, struct rdoc *d);
/* modes.c: "Load-balancing modes" (the runs' bw phases side by side, with what
 * TCP saw of the order and, with --topology, what the fabric carries) and
 * "Planes" (a rail's planes side by side) */
void report_modes_section(const struct report *rep, struct rdoc *d);
/* {"modes": [...], "planes": [...]} for the JSON summary */
json_t *report_modes_json(const struct report *rep);
/* the model's expectation of every run's bw groups on the design t: 0 (a
 * design without speeds gives none, with a warning), or -FS_EXIT_* said */
int report_modes_expect(struct report *rep, const struct topo *t);
/* cabling.c: "Cabling and configuration", when a run has topology records */
void report_cabling_section(const struct report *rep, struct rdoc *d);
/* run r's ports for the JSON summary: what the probe judged, per priority, without the timeline */
json_t *report_pfc_json(const struct rrun *r);
/* the fabscope_pfc_* families, the worst of a port's rounds per priority */
void report_pfc_exposition(const struct report *rep, const char *const *lbl, struct report_buf *b);

/*
 * coll*.c: the collectives section (records of allreduce and alltoall).
 * report_coll_section adds nothing, report_coll_json
 * returns NULL and report_coll_exposition appends nothing when there are
 * no such records.
 */

/*
 * "Collectives": per test, algorithm and transport a table per run,
 * phase and lane (size, count, time, algbw, busbw, #wrong); with several
 * runs their busbw side by side per size with the ratio to the first run
 * and the best at the largest size; what busbw means; every lane that
 * returned wrong data
 */
void report_coll_section(const struct report *rep, struct rdoc *d);
/* history-render.c: "Since last night and over the last N" (report --history): the first run
 * held against the history's window, its suspects, repeat offenders and night-wide shifts */
void report_history_section(const struct report *rep, struct rdoc *d);
/* run r's series (per test, algo, transport, phase and lane: the sizes) for the JSON summary */
json_t *report_coll_json(const struct rrun *r);
/* fabscope_coll_bus_bandwidth_bytes_per_second, _algorithm_bandwidth_bytes_per_second,
 * _operation_seconds (per lane and size) and _wrong_elements (per lane) */
void report_coll_exposition(const struct report *rep, const char *const *lbl, struct report_buf *b);
/*
 * report_coll_data_check adds to rep->checks, when there are collectives,
 * the data check (a FAIL names every lane and size with wrong elements;
 * data not checked is not counted).  report_coll_busbw_checks adds, for
 * [allreduce] / [alltoall] min_busbw_gbps, every lane's busbw at its
 * largest size (the sum of a multi-rail run is no lane), a row of its own
 * for each [phase NAME] with min_busbw_gbps; what they judge is marked.
 */
void report_coll_data_check(struct report *rep);
void report_coll_busbw_checks(struct report *rep, const struct thresholds *t);
/*
 * --baseline: per collective, phase and lane found in both, the mean busbw
 * over the sizes both measured (nccl-tests' footer) against the baseline's;
 * down by more than the tolerance is a regression in rep->regs, naming the
 * size that fell the most.
 */
void report_coll_baseline(struct report *rep);
/*
 * After report_plots succeeded: a plot of busbw against size per test,
 * algorithm and transport (plots/coll.gp) into dir, added to rep->svg.
 * 0, or -1 with the reason in rep->plots_note.
 */
int report_coll_plots(struct report *rep, const struct outdir *dir);

/* checks.c: a new check (passing until told otherwise) among rep's checks,
 * or its baseline figures (report_reg_new), and one more failing thing
 * named among the first few.  Out of memory: a check that is not kept,
 * said, and rep->oom. */
struct check *report_check_new(struct report *rep, const char *name);
struct check *report_reg_new(struct report *rep, const char *name);
void report_check_fail(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A check with nothing to check (total 0) fails, saying so. */
void report_check_empty(struct check *c);

#endif
