/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report's renderings: Markdown, one self-contained HTML file (the
 * plots inline as SVG), a JSON summary, and Prometheus text for --push.
 * Markdown and HTML are one model of the sections (doc.h), built once by
 * report_doc in this order and written by its two back ends:
 *
 *   verdict (PASS, FAIL, INCOMPLETE: the failing checks and their endpoints,
 *   what nothing judged and what to give; verdict.c) - what was tested
 *   (tested.c) - runs (metadata) - acceptance checks (integrity, thresholds,
 *   the model) - regressions (baseline) - summary per phase, test and lane
 *   (with its worst pair and node) - comparison of runs - load-balancing
 *   modes and planes (modes.c) - cabling - collectives -
 *   hash polarization - PFC pauses - suspects - worst pairs and nodes (large
 *   lanes) - plots - pairwise matrices -
 *   missing agents and failed tests
 *
 * Where the two say different things (Markdown has the comparison table
 * and the pairwise matrices, HTML lists the suspects not confirmed among
 * the others), the model says which back end a part is for (rdoc_only).
 *
 * The collectives section, in every rendering, is in coll*.c, the hash
 * polarization section in polar.c, and the PFC pauses section in pfc.c
 * (render.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/record.h"
#include "doc.h"
#include "push.h"
#include "render.h"
#include "report.h"

/* ---- shared helpers ---- */

static const char *rs(const struct rrun *r, const char *key, const char *dflt)
{
	const char *v = json_string_value(json_object_get(r->run, key));

	return v ? v : dflt;
}

static void labels_str(const struct rrun *r, char *buf, size_t len)
{
	json_t *labels = json_object_get(r->run, "labels"), *v;
	const char *k;
	size_t n = 0;

	buf[0] = 0;
	json_object_foreach(labels, k, v)
		if (json_is_string(v) && n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", n ? ", " : "", k, json_string_value(v));
	if (!n)
		snprintf(buf, len, "-");
}

static int nnodes(const struct rrun *r)
{
	return (int)json_array_size(json_object_get(r->run, "nodes"));
}

static int nregressions(const struct report *rep)
{
	return report_regressions(rep, NULL);
}

/* " (2 not comparable: measured with other message sizes or test parameters)", or "" */
static void nc_note(const struct report *rep, char *buf, size_t len)
{
	int nc;

	report_regressions(rep, &nc);
	if (nc)
		snprintf(buf, len, "; %d not comparable (measured with other message sizes or test parameters "
			 "than the baseline's: no verdict on %s)", nc, nc == 1 ? "it" : "them");
	else
		buf[0] = 0;
}

/* the best run of a group (highest bw or lowest latency median) */
static int best_run(const struct report *rep, const struct rgroup *g0, double *best, double *worst)
{
	int ri, b = -1;

	*best = NAN;
	*worst = NAN;
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rgroup *g = report_group(&rep->runs[ri], g0->phase, g0->test, g0->rail, g0->plane);
		int better;

		if (!g || isnan(g->median))
			continue;
		better = isnan(*best) || (!strcmp(g0->test, "bw") ? g->median > *best : g->median < *best);
		if (better) {
			*best = g->median;
			b = ri;
		}
		if (isnan(*worst) || (!strcmp(g0->test, "bw") ? g->median < *worst : g->median > *worst))
			*worst = g->median;
	}
	return b;
}

/* groups of all runs, each (phase, test, lane) once, in the first run's order */
static int all_groups(const struct report *rep, const struct rgroup **out, int max)
{
	int n = 0, ri, gi, k;

	for (ri = 0; ri < rep->nruns; ri++)
		for (gi = 0; gi < rep->runs[ri].ng; gi++) {
			const struct rgroup *g = &rep->runs[ri].g[gi];

			for (k = 0; k < n; k++)
				if (!strcmp(out[k]->phase, g->phase) && !strcmp(out[k]->test, g->test) &&
				    out[k]->rail == g->rail && out[k]->plane == g->plane)
					break;
			if (k == n && n < max)
				out[n++] = g;
		}
	return n;
}

static void comparison_line(const struct report *rep, const struct rgroup *g, char *buf, size_t len)
{
	double best, worst;
	int b = best_run(rep, g, &best, &worst);
	char lane[48];

	fs_lane_name(g->rail, g->plane, lane, sizeof(lane));
	if (b < 0 || !(worst > 0)) {
		snprintf(buf, len, "%s %s %s: no common results", g->phase, g->test, lane);
		return;
	}
	if (best == worst) {
		snprintf(buf, len, "%s %s %s: the same median in every run (%.4g %s)", g->phase, g->test, lane,
			 best, !strcmp(g->test, "bw") ? "Gb/s" : "us p50");
		return;
	}
	if (!strcmp(g->test, "bw"))
		snprintf(buf, len, "%s %s %s: %s wins with a median of %.4g Gb/s, %.0f%% above the slowest run",
			 g->phase, g->test, lane, rep->runs[b].name, best, 100 * (best - worst) / worst);
	else
		snprintf(buf, len, "%s %s %s: %s wins with a median p50 of %.4g us, %.0f%% below the slowest run",
			 g->phase, g->test, lane, rep->runs[b].name, best, 100 * (worst - best) / worst);
}

/* ---- the sections, once, for Markdown and HTML (doc.h) ---- */

/* ---- the first screen: the verdict ---- */

#define VERDICT_SHOWN 5	/* failing checks on the first screen; the table has them all */

struct unjudged_ctx {
	const struct report *rep;
	struct rdoc *d;
};

static void unjudged_item(void *ctx, int ri, const char *phase, const char *line)
{
	struct unjudged_ctx *u = ctx;

	rdoc_item(u->d, "unjudged");
	if (ri >= 0 && u->rep->nruns > 1)
		rdoc_textf(u->d, "%s: ", u->rep->runs[ri].name);
	if (phase) {
		rdoc_bold(u->d, phase);
		rdoc_text(u->d, " has no criterion: ");
	}
	rdoc_text(u->d, line);
}

/* the failing checks, the first few with their endpoints */
static void verdict_failing(const struct report *rep, struct rdoc *d)
{
	int i, shown = 0, failing = 0;

	for (i = 0; i < rep->nchecks; i++)
		failing += !rep->checks[i].pass;
	rdoc_list(d);
	for (i = 0; i < rep->nchecks; i++) {
		const struct check *c = &rep->checks[i];

		if (c->pass || shown++ >= VERDICT_SHOWN)
			continue;
		rdoc_item(d, "failing");
		rdoc_bold(d, c->name);
		rdoc_lit(d, ": ");
		rdoc_text(d, c->who[0] ? c->who : c->worst);
	}
	if (failing > VERDICT_SHOWN) {
		rdoc_item(d, NULL);
		rdoc_textf(d, "and %d more failing checks: see Acceptance checks", failing - VERDICT_SHOWN);
	}
	if (rep->have_base && report_baseline_failed(rep)) {
		rdoc_item(d, "failing");
		rdoc_bold(d, "baseline");
		rdoc_textf(d, ": %s against %s (see Against the baseline)", report_baseline_verdict(rep), rep->base.dir);
	}
}

/* what the verdict stands on: "the run's integrity, thresholds t.ini, the model of f.topo" */
static void verdict_basis(const struct report *rep, struct rdoc *d)
{
	rdoc_para(d, 1);
	rdoc_text(d, "Judged by: the run's integrity (every planned job ran, no test failed, no agent missing, "
		  "no suspect confirmed by a re-test, collectives' data, polarization, cabling)");
	if (rep->thresholds) {
		rdoc_text(d, ", the thresholds ");
		rdoc_code(d, rep->thresholds);
	}
	if (rep->model_checked) {
		rdoc_text(d, ", the model of ");
		rdoc_code(d, rep->topology);
		rdoc_text(d, " (every bw pair against its fair share, every lane against per-flow ECMP)");
	}
	rdoc_text(d, ". PASS only when every measured phase was judged and every check passed.");
}

static void sec_verdict(const struct report *rep, struct rdoc *d)
{
	const char *w = report_result_word(rep->result);
	struct unjudged_ctx u = { rep, d };
	char why[1024];
	int i, failing = 0;

	for (i = 0; i < rep->nchecks; i++)
		failing += !rep->checks[i].pass;
	report_incomplete_line(rep, why, sizeof(why));
	rdoc_heading(d, 1);
	rdoc_text(d, "fabscope report");
	rdoc_only(d, RDOC_MD);
	rdoc_heading(d, 2);
	rdoc_textf(d, "Verdict: %s", w);
	rdoc_only(d, RDOC_HTML);
	rdoc_heading(d, 2);
	rdoc_text(d, "Verdict");
	rdoc_only(d, RDOC_BOTH);
	rdoc_para(d, 0);
	rdoc_only(d, RDOC_HTML);
	rdoc_verdict(d, rep->result == REPORT_PASS ? 1 : rep->result == REPORT_FAIL ? 0 : -1, w);
	rdoc_lit(d, " ");
	rdoc_only(d, RDOC_BOTH);
	if (rep->result == REPORT_FAIL)
		rdoc_textf(d, "%d of %d checks failed%s:", failing, rep->nchecks,
			   rep->have_base && report_baseline_failed(rep) ? ", and the baseline" : "");
	else if (rep->result == REPORT_INCOMPLETE)
		rdoc_textf(d, "%s (%d of %d checks failed)", why, failing, rep->nchecks);
	else
		rdoc_textf(d, "every measured phase judged; %d checks, none failed", rep->nchecks);
	if (rep->failed)
		verdict_failing(rep, d);
	if (rep->not_judged) {
		if (rep->result == REPORT_FAIL) {
			rdoc_para(d, 0);
			rdoc_text(d, "Not judged:");
		}
		rdoc_list(d);
		report_unjudged(rep, unjudged_item, &u);
		for (i = 0; i < rep->nchecks; i++)
			if (rep->checks[i].not_judged) {
				rdoc_item(d, "unjudged");
				rdoc_bold(d, rep->checks[i].name);
				rdoc_text(d, ": could not judge: ");
				rdoc_text(d, rep->checks[i].who);
			}
	}
	verdict_basis(rep, d);
}

static void sec_runs(const struct report *rep, struct rdoc *d)
{
	static const char *const title[] = { "results", "run", "started", "finished", "status", "labels",
					     "nodes", "records", "suspects" };
	char buf[512];
	size_t t;
	int ri;

	rdoc_heading(d, 2);
	rdoc_text(d, "Runs");
	rdoc_table(d);
	rdoc_head(d);
	rdoc_cell(d, RDOC_EMPTY, 0);
	for (ri = 0; ri < rep->nruns; ri++)
		rdoc_cellf(d, RDOC_TH, 0, "%s", rep->runs[ri].name);
	for (t = 0; t < sizeof(title) / sizeof(title[0]); t++) {
		rdoc_row(d);
		rdoc_cellf(d, RDOC_TH, 0, "%s", title[t]);
		for (ri = 0; ri < rep->nruns; ri++) {
			const struct rrun *r = &rep->runs[ri];

			rdoc_cell(d, RDOC_TEXT, 0);
			switch (t) {
			case 0: rdoc_text(d, r->dir); break;
			case 1: rdoc_text(d, rs(r, "id", "-")); break;
			case 2: rdoc_text(d, rs(r, "started", "-")); break;
			case 3: rdoc_text(d, rs(r, "finished", "-")); break;
			case 4: rdoc_text(d, rs(r, "status", "-")); break;
			case 5: labels_str(r, buf, sizeof(buf)); rdoc_text(d, buf); break;
			case 6: rdoc_textf(d, "%d (%d missing)", nnodes(r), r->missing); break;
			case 7: rdoc_textf(d, "%d (%d failed)", r->nrec, r->nerr); break;
			default: rdoc_textf(d, "%zu", json_array_size(r->suspects)); break;
			}
		}
	}
}

/*
 * The table of checks, or (regs) of baseline figures; ok and bad: what a
 * result says.  Markdown names a figure's columns as such, without the
 * failing count.
 */
static void checks_table(struct rdoc *d, const struct check *c, int n, const char *ok, const char *bad, int regs)
{
	static const char *const head[] = { "check", "limit", "worst", "failing", "result", "endpoints" };
	static const char *const reg_head[] = { "figure", "baseline", "now", "result", "note" };
	size_t h;
	int i;

	rdoc_table(d);
	rdoc_head(d);
	rdoc_only(d, regs ? RDOC_HTML : RDOC_BOTH);
	for (h = 0; h < sizeof(head) / sizeof(head[0]); h++)
		rdoc_cellf(d, RDOC_TEXT, 0, "%s", head[h]);
	rdoc_only(d, regs ? RDOC_MD : 0);
	for (h = 0; h < sizeof(reg_head) / sizeof(reg_head[0]); h++)
		rdoc_cellf(d, RDOC_TEXT, 0, "%s", reg_head[h]);
	rdoc_only(d, RDOC_BOTH);
	for (i = 0; i < n; i++) {
		rdoc_row(d);
		rdoc_cellf(d, RDOC_TEXT, 0, "%s", c[i].name);
		rdoc_cell(d, RDOC_TEXT, 0);
		rdoc_text(d, c[i].limit);
		rdoc_cell(d, RDOC_TEXT, 0);
		rdoc_text(d, c[i].worst);
		rdoc_only(d, regs ? RDOC_HTML : RDOC_BOTH);
		rdoc_cellf(d, RDOC_TEXT, 0, "%d of %d", c[i].failing, c[i].total);
		rdoc_only(d, RDOC_BOTH);
		rdoc_cellf(d, c[i].not_comparable || c[i].not_judged ? RDOC_WARN : c[i].pass ? RDOC_PASS : RDOC_FAIL, 1,
			   "%s", c[i].not_comparable ? "not comparable" : c[i].not_judged ? "NOT JUDGED" :
			   c[i].pass ? ok : bad);
		rdoc_cellf(d, RDOC_TEXT, 0, "%s", c[i].who[0] ? c[i].who : "-");
	}
}

static void sec_acceptance(const struct report *rep, struct rdoc *d)
{
	int i, failed = 0, unjudged = 0;

	for (i = 0; i < rep->nchecks; i++) {
		failed += !rep->checks[i].pass;
		unjudged += rep->checks[i].not_judged;
	}
	rdoc_heading(d, 2);
	rdoc_text(d, "Acceptance checks");
	rdoc_para(d, 0);
	rdoc_textf(d, "%s: %d of %d checks failed", report_result_word(rep->result), failed, rep->nchecks);
	if (unjudged)
		rdoc_textf(d, ", %d could not judge", unjudged);
	rdoc_text(d, ".");
	checks_table(d, rep->checks, rep->nchecks, "PASS", "FAIL", 0);
}

static void sec_baseline(const struct report *rep, struct rdoc *d)
{
	int nr = nregressions(rep);
	char note[160];

	nc_note(rep, note, sizeof(note));
	rdoc_only(d, RDOC_MD);
	rdoc_heading(d, 2);
	rdoc_textf(d, "Against the baseline: %s", report_baseline_verdict(rep));
	rdoc_para(d, 0);
	rdoc_lit(d, "Baseline ");
	rdoc_code(d, rep->base.dir);
	rdoc_lit(d, " (run ");
	rdoc_text(d, rs(&rep->base, "id", "-"));
	rdoc_litf(d, "), tolerance %.0f%%: %d of %d figures regressed", 100 * rep->tolerance, nr, rep->nregs);
	rdoc_text(d, note);
	rdoc_lit(d, ".");
	rdoc_only(d, RDOC_HTML);
	rdoc_heading(d, 2);
	rdoc_text(d, "Against the baseline");
	rdoc_para(d, 0);
	rdoc_verdict(d, !report_baseline_failed(rep), report_baseline_verdict(rep));
	rdoc_text(d, " baseline ");
	rdoc_text(d, rep->base.dir);
	rdoc_textf(d, ", tolerance %.0f%%: %d of %d figures regressed", 100 * rep->tolerance, nr, rep->nregs);
	rdoc_text(d, note);
	rdoc_only(d, RDOC_BOTH);
	checks_table(d, rep->regs, rep->nregs, "ok", "REGRESSION", 1);
}

/* a lane's worst pair or node beside its median: "0.02 (h1 -> h4)", "0.02 (h4, 3 pairs)", "-" */
static void worst_cell(struct rdoc *d, const struct rworst *w, int node)
{
	rdoc_cell(d, RDOC_TEXT, 0);
	if (!w->src) {
		rdoc_lit(d, "-");
		return;
	}
	rdoc_textf(d, "%.4g (", w->v);
	rdoc_text(d, w->src);
	if (node) {
		rdoc_textf(d, ", %d pairs)", w->n);
		return;
	}
	rdoc_sym(d, " -> ", " &rarr; ");
	rdoc_text(d, w->dst);
	rdoc_lit(d, ")");
}

static void sec_summary(const struct report *rep, struct rdoc *d)
{
	static const char *const head[] = { "phase", "test", "lane", "pairs", "median", "worst pair",
					    "worst node (median of its pairs)", "best", "unit" };
	size_t h;
	int ri, gi;

	rdoc_heading(d, 2);
	rdoc_text(d, "Summary per phase and rail");
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];

		if (rep->nruns > 1) {
			rdoc_heading(d, 3);
			rdoc_text(d, r->name);
		}
		if (!r->ng) {	/* Markdown says so; HTML has a table without rows */
			rdoc_only(d, RDOC_MD);
			rdoc_para(d, 0);
			rdoc_text(d, "No bandwidth or latency results.");
			rdoc_only(d, RDOC_HTML);
		}
		rdoc_table(d);
		rdoc_only(d, RDOC_BOTH);
		rdoc_head(d);
		for (h = 0; h < sizeof(head) / sizeof(head[0]); h++)
			rdoc_cellf(d, RDOC_TEXT, 0, "%s", head[h]);
		for (gi = 0; gi < r->ng; gi++) {
			const struct rgroup *g = &r->g[gi];
			char lane[48];

			fs_lane_name(g->rail, g->plane, lane, sizeof(lane));
			rdoc_row(d);
			rdoc_cellf(d, RDOC_TEXT, 0, "%s", g->phase);
			rdoc_cell(d, RDOC_TEXT, 0);
			rdoc_text(d, g->test);
			rdoc_cell(d, RDOC_TEXT, 0);
			rdoc_text(d, lane);
			rdoc_cellf(d, RDOC_NUM, 0, "%d", g->n);
			rdoc_cellf(d, RDOC_NUM, 0, "%.4g", g->median);
			worst_cell(d, &g->worst1_pair, 0);
			worst_cell(d, &g->worst1_node, 1);
			rdoc_cellf(d, RDOC_NUM, 0, "%.4g", !strcmp(g->test, "bw") ? g->max : g->min);
			rdoc_cellf(d, RDOC_TEXT, 0, "%s", !strcmp(g->test, "bw") ? "Gb/s" : "us p50");
		}
	}
}

/* Markdown's table of the medians side by side */
static void comparison_table(const struct report *rep, struct rdoc *d, const struct rgroup **gs, int ng)
{
	int ri, i;

	rdoc_table(d);
	rdoc_head(d);
	rdoc_cellf(d, RDOC_TEXT, 0, "phase");
	rdoc_cellf(d, RDOC_TEXT, 0, "test");
	rdoc_cellf(d, RDOC_TEXT, 0, "lane");
	for (ri = 0; ri < rep->nruns; ri++)
		rdoc_cellf(d, RDOC_TEXT, 0, "%s", rep->runs[ri].name);
	rdoc_cellf(d, RDOC_TEXT, 0, "best");
	for (i = 0; i < ng; i++) {
		double best, worst, first = NAN;
		int b = best_run(rep, gs[i], &best, &worst);
		char lane[48];

		fs_lane_name(gs[i]->rail, gs[i]->plane, lane, sizeof(lane));
		rdoc_row(d);
		rdoc_cellf(d, RDOC_TEXT, 0, "%s", gs[i]->phase);
		rdoc_cell(d, RDOC_TEXT, 0);
		rdoc_text(d, gs[i]->test);
		rdoc_cell(d, RDOC_TEXT, 0);
		rdoc_text(d, lane);
		for (ri = 0; ri < rep->nruns; ri++) {
			const struct rgroup *g = report_group(&rep->runs[ri], gs[i]->phase, gs[i]->test,
							      gs[i]->rail, gs[i]->plane);

			if (!g) {
				rdoc_cellf(d, RDOC_NUM, 0, "-");
				continue;
			}
			if (isnan(first))
				first = g->median;
			if (ri && first > 0)
				rdoc_cellf(d, RDOC_NUM, 0, "%.4g (%+.1f%%)", g->median, 100 * (g->median - first) / first);
			else
				rdoc_cellf(d, RDOC_NUM, 0, "%.4g", g->median);
		}
		rdoc_cellf(d, RDOC_TEXT, 0, "%s", b >= 0 ? rep->runs[b].name : "-");
	}
}

static void sec_comparison(const struct report *rep, struct rdoc *d)
{
	const struct rgroup *gs[512];
	int ng = all_groups(rep, gs, 512), i;
	char buf[512];

	if (rep->nruns <= 1 || !ng)
		return;
	rdoc_heading(d, 2);
	rdoc_text(d, "Comparison");
	rdoc_only(d, RDOC_MD);
	comparison_table(rep, d, gs, ng);
	rdoc_para(d, 0);
	rdoc_text(d, "Medians (Gb/s for bw, us p50 for lat); deltas against the first run.");
	rdoc_only(d, RDOC_BOTH);
	rdoc_list(d);
	for (i = 0; i < ng; i++) {
		comparison_line(rep, gs[i], buf, sizeof(buf));
		rdoc_item(d, NULL);
		rdoc_text(d, buf);
	}
}

/* "[phase] evidence", after the run's name when there are several */
static void suspect_text(const struct report *rep, const struct rrun *r, json_t *s, struct rdoc *d)
{
	if (rep->nruns > 1) {
		rdoc_text(d, r->name);
		rdoc_lit(d, ", ");
	}
	rdoc_lit(d, "[");
	rdoc_text(d, record_str(s, "phase", "?"));
	rdoc_lit(d, "] ");
	rdoc_text(d, record_str(s, "evidence", ""));
}

/* an item for the back ends d is building for now; HTML says it is not confirmed */
static void not_confirmed_item(const struct report *rep, const struct rrun *r, json_t *s, struct rdoc *d)
{
	unsigned only = d->only;

	rdoc_item(d, "not-confirmed");
	rdoc_only(d, only & RDOC_HTML);
	rdoc_bold(d, "not confirmed");
	rdoc_lit(d, " ");
	rdoc_only(d, only);
	suspect_text(rep, r, s, d);
	rdoc_lit(d, ": ");
	rdoc_text(d, record_str(s, "confirmation", ""));
}

static void sec_suspects(const struct report *rep, struct rdoc *d)
{
	json_t *s;
	size_t k;
	int ri, n = 0;

	rdoc_heading(d, 2);
	rdoc_text(d, "Suspects");
	rdoc_list(d);
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];

		if (!json_array_size(r->suspects)) {
			rdoc_item(d, NULL);
			rdoc_text(d, rep->nruns > 1 ? r->name : "");
			rdoc_textf(d, "%snone: no node, pair or rail stands out", rep->nruns > 1 ? ": " : "");
		}
		json_array_foreach(r->suspects, k, s) {
			rdoc_item(d, "suspect");
			rdoc_bold(d, record_str(s, "kind", "?"));
			rdoc_lit(d, " ");
			suspect_text(rep, r, s, d);
			if (record_str(s, "design", NULL)) {
				rdoc_lit(d, "; design: ");
				rdoc_text(d, record_str(s, "design", ""));
			}
			if (record_str(s, "confirmation", NULL)) {
				rdoc_lit(d, " (");
				rdoc_text(d, record_str(s, "confirmation", ""));
				rdoc_lit(d, ")");
			}
		}
		rdoc_only(d, RDOC_HTML);	/* HTML: in the list, after the run's suspects */
		json_array_foreach(r->not_confirmed, k, s)
			not_confirmed_item(rep, r, s, d);
		rdoc_only(d, RDOC_BOTH);
		n += (int)json_array_size(r->not_confirmed);
	}
	if (!n)
		return;
	rdoc_only(d, RDOC_MD);	/* Markdown: fast on their re-test, said apart, but not suspects */
	rdoc_para(d, 0);
	rdoc_text(d, "Not confirmed (high in the run, not on the re-test):");
	rdoc_list(d);
	for (ri = 0; ri < rep->nruns; ri++)
		json_array_foreach(rep->runs[ri].not_confirmed, k, s)
			not_confirmed_item(rep, &rep->runs[ri], s, d);
	rdoc_only(d, RDOC_BOTH);
}

static void sec_plots(const struct report *rep, struct rdoc *d)
{
	int i;

	rdoc_heading(d, 2);
	rdoc_text(d, "Plots");
	if (rep->plots_note[0]) {
		rdoc_para(d, 1);
		rdoc_text(d, rep->plots_note);
	} else if (!rep->nsvg) {
		rdoc_only(d, RDOC_MD);
		rdoc_para(d, 0);
		rdoc_lit(d, "No plots.");
		rdoc_only(d, RDOC_BOTH);
	}
	for (i = 0; i < rep->nsvg; i++) {
		char path[4096 + 256];

		snprintf(path, sizeof(path), "%s/%s", rep->plots_dir, rep->svg[i]);
		rdoc_plot(d, rep->svg[i], rep->svg_title[i], path);
	}
}

/* Markdown: the first run's groups of 3 to 16 nodes, a table of every pair's figure */
static void sec_matrices(const struct report *rep, struct rdoc *d)
{
	int gi, i, j, k;

	rdoc_only(d, RDOC_MD);
	rdoc_heading(d, 2);
	rdoc_text(d, "Pairwise matrices");
	for (gi = 0; gi < rep->runs[0].ng; gi++) {
		const struct rgroup *g = &rep->runs[0].g[gi];
		char lane[48];

		if (g->nnodes < 3 || g->nnodes > 16)
			continue;
		fs_lane_name(g->rail, g->plane, lane, sizeof(lane));
		rdoc_para(d, 0);
		rdoc_lit(d, "**");
		rdoc_text(d, g->phase);
		rdoc_textf(d, " %s, %s", g->test, lane);
		rdoc_lit(d, "**");
		rdoc_textf(d, " (%s; row sends, column receives)", !strcmp(g->test, "bw") ? "Gb/s" : "p50 us");
		rdoc_table(d);
		rdoc_head(d);
		rdoc_cell(d, RDOC_EMPTY, 0);
		for (j = 0; j < g->nnodes; j++)
			rdoc_cellf(d, RDOC_TEXT, 0, "%s", g->nodes[j]);
		for (i = 0; i < g->nnodes; i++) {
			rdoc_row(d);
			rdoc_cellf(d, RDOC_TH, 0, "%s", g->nodes[i]);
			for (j = 0; j < g->nnodes; j++) {
				for (k = 0; k < g->n; k++)
					if (!strcmp(g->p[k].src, g->nodes[i]) && !strcmp(g->p[k].dst, g->nodes[j]))
						break;
				if (k < g->n)
					rdoc_cellf(d, RDOC_NUM, 0, "%.3g", g->p[k].v);
				else
					rdoc_cell(d, RDOC_EMPTY, 0);
			}
		}
	}
	rdoc_only(d, RDOC_BOTH);
}

static void sec_missing(const struct report *rep, struct rdoc *d)
{
	int ri;

	rdoc_heading(d, 2);
	rdoc_text(d, "Missing agents and failed tests");
	rdoc_list(d);
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];
		json_t *n, *rec;
		size_t k;
		int shown = 0;

		json_array_foreach(json_object_get(r->run, "nodes"), k, n)
			if (!strcmp(record_str(n, "status", "ok"), "missing")) {
				rdoc_item(d, NULL);
				rdoc_lit(d, "agent ");
				rdoc_bold(d, record_str(n, "name", "?"));
				rdoc_lit(d, " missing: ");
				rdoc_text(d, record_str(n, "why", "?"));
			}
		json_array_foreach(r->st.failed, k, rec) {	/* the first RSTORE_FAILED_KEPT */
			shown++;
			rdoc_item(d, NULL);
			rdoc_code(d, record_str(rec, "job", record_str(rec, "test", "?")));
			rdoc_lit(d, ": ");
			rdoc_text(d, record_str(rec, "error", "error"));
		}
		if (r->nerr > shown) {
			rdoc_only(d, RDOC_MD);
			rdoc_item(d, NULL);
			rdoc_textf(d, "... and %d more failed tests in %s/results.jsonl", r->nerr - shown, r->dir);
			rdoc_only(d, RDOC_BOTH);
		}
		if (!r->missing && !r->nerr) {
			rdoc_item(d, NULL);
			rdoc_textf(d, "%s%snone", rep->nruns > 1 ? r->name : "", rep->nruns > 1 ? ": " : "");
		}
	}
	rdoc_only(d, RDOC_HTML);
	rdoc_para(d, 1);
	rdoc_textf(d, "fabscope %s; every figure is computed from the records in results.jsonl.", FABSCOPE_VERSION);
	rdoc_only(d, RDOC_BOTH);
}

/* every section of the report, in order */
static void report_doc(struct report *rep, struct rdoc *d)
{
	sec_verdict(rep, d);
	report_tested_section(rep, d);
	sec_runs(rep, d);
	sec_acceptance(rep, d);
	if (rep->have_base)
		sec_baseline(rep, d);
	if (rep->history)
		report_history_section(rep, d);
	sec_summary(rep, d);
	sec_comparison(rep, d);
	report_modes_section(rep, d);
	report_cabling_section(rep, d);
	report_coll_section(rep, d);
	report_polar_section(rep, d);
	report_pfc_section(rep, d);
	sec_suspects(rep, d);
	report_worst_section(rep, d);
	sec_plots(rep, d);
	sec_matrices(rep, d);
	sec_missing(rep, d);
}

/* the model of the report into d; out of memory: said, d empty, -FS_EXIT_ENV */
static int build_doc(struct report *rep, struct rdoc *d)
{
	rdoc_init(d);
	report_doc(rep, d);
	if (!d->oom)
		return 0;
	rdoc_release(d);
	return fs_err_env("out of memory writing the report");
}

int report_md(struct report *rep, FILE *f)
{
	struct rdoc d;
	int rc = build_doc(rep, &d);

	if (rc)
		return rc;
	rdoc_md(&d, f);
	rdoc_release(&d);
	return 0;
}

int report_html(struct report *rep, FILE *f)
{
	struct rdoc d;
	int rc = build_doc(rep, &d);

	if (rc)
		return rc;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>fabscope report</title>\n"
	      "<style>\nbody{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222;padding:0 1em}\n"
	      "table{border-collapse:collapse;margin:0.5em 0 1.5em}\n"
	      "th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:left;font-size:0.9em}\n"
	      "th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	      ".pass{background:#d9f2d9;font-weight:bold}.fail{background:#f8d0d0;font-weight:bold}\n"
	      ".warn{background:#fbeec1;font-weight:bold}\n"
	      ".verdict{font-size:1.6em;padding:0.3em 0.8em;display:inline-block;border-radius:4px}\n"
	      ".note{color:#666}figure{margin:1em 0}figcaption{font-size:0.9em;color:#444}\n"
	      "li.suspect{margin:0.3em 0}\n</style></head><body>\n", f);
	rdoc_html(&d, f);
	fputs("</body></html>\n", f);
	rdoc_release(&d);
	return 0;
}

/* ---- JSON ---- */

static json_t *checks_json(const struct check *c, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, c[i].not_comparable ?	/* no verdict, and why */
			json_pack("{ss,ss,ss,si,si,sn,sb,ss,ss}", "check", c[i].name, "limit", c[i].limit,
				  "worst", c[i].worst, "failing", c[i].failing, "total", c[i].total, "pass",
				  "comparable", 0, "result", "not comparable", "endpoints", c[i].who) :
			c[i].not_judged ?
			json_pack("{ss,ss,ss,si,si,sn,ss,ss}", "check", c[i].name, "limit", c[i].limit,
				  "worst", c[i].worst, "failing", c[i].failing, "total", c[i].total, "pass",
				  "result", "not judged", "why", c[i].who) :
			json_pack("{ss,ss,ss,si,si,sb,ss}", "check", c[i].name, "limit", c[i].limit,
				  "worst", c[i].worst, "failing", c[i].failing, "total", c[i].total,
				  "pass", c[i].pass, "endpoints", c[i].who));
	return a;
}

static void unjudged_json(void *ctx, int ri, const char *phase, const char *line)
{
	json_t *o = json_pack("{ss}", "what", line);

	if (ri >= 0)
		json_object_set_new(o, "run", json_integer(ri));
	if (phase)
		json_object_set_new(o, "phase", json_string(phase));
	json_array_append_new(ctx, o);
}

/* "verdict": the result, its exit status, the failing checks and what was not judged */
static json_t *verdict_json(const struct report *rep)
{
	json_t *failing = json_array(), *unjudged = json_array(), *basis = json_array();
	char why[1024];
	int i;

	for (i = 0; i < rep->nchecks; i++)
		if (!rep->checks[i].pass)
			json_array_append_new(failing, json_pack("{ss,ss}", "check", rep->checks[i].name, "endpoints",
								 rep->checks[i].who));
	if (rep->have_base && report_baseline_failed(rep))
		json_array_append_new(failing, json_pack("{ss,ss}", "check", "baseline", "endpoints",
							 report_baseline_verdict(rep)));
	report_unjudged(rep, unjudged_json, unjudged);
	for (i = 0; i < rep->nchecks; i++)
		if (rep->checks[i].not_judged)
			json_array_append_new(unjudged, json_pack("{ss,ss}", "check", rep->checks[i].name, "what",
								  rep->checks[i].who));
	json_array_append_new(basis, json_string("integrity"));
	if (rep->thresholds)
		json_array_append_new(basis, json_string(rep->thresholds));
	if (rep->model_checked)
		json_array_append_new(basis, json_string(rep->topology));
	report_incomplete_line(rep, why, sizeof(why));
	return json_pack("{ss,si,ss,so,so,so}", "result", report_result_word(rep->result), "exit_code",
			 rep->result == REPORT_FAIL ? FS_EXIT_CHECK : rep->result == REPORT_INCOMPLETE ?
			 FS_EXIT_INCOMPLETE : FS_EXIT_OK, "incomplete", why, "failing", failing, "not_judged", unjudged,
			 "judged_by", basis);
}

json_t *report_json(struct report *rep)
{
	json_t *o = json_object(), *runs = json_array(), *plots = json_array(), *cj, *labels;
	int ri, gi, i;

	json_object_set_new(o, "schema", json_string("fabscope.report/1"));
	json_object_set_new(o, "version", json_string(FABSCOPE_VERSION));
	json_object_set_new(o, "verdict", verdict_json(rep));
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];
		json_t *groups = json_array();

		for (gi = 0; gi < r->ng; gi++) {
			const struct rgroup *g = &r->g[gi];
			json_t *gj = json_pack("{ss,ss,si,si,si,sf,sf,sf,ss}", "phase", g->phase, "test", g->test,
					       "rail", g->rail, "plane", g->plane, "pairs", g->n, "min", g->min,
					       "median", g->median, "max", g->max,
					       "unit", !strcmp(g->test, "bw") ? "gbps" : "us_p50");

			if (!strcmp(g->test, "lat") && !isnan(g->p99_median))
				json_object_set_new(gj, "p99_median", json_real(g->p99_median));
			if (g->worst1_pair.src)
				json_object_set_new(gj, "worst_pair", json_pack("{ss,ss,sf}", "src", g->worst1_pair.src,
										"dst", g->worst1_pair.dst, "value",
										g->worst1_pair.v));
			if (g->worst1_node.src)
				json_object_set_new(gj, "worst_node", json_pack("{ss,sf,si}", "node", g->worst1_node.src,
										"median", g->worst1_node.v, "pairs",
										g->worst1_node.n));
			if (g->nworst_pair) {
				json_object_set_new(gj, "nodes", json_integer(g->nnodes));
				json_object_set_new(gj, "worst_pairs", report_worst_json(r, g, 0));
				json_object_set_new(gj, "worst_nodes", report_worst_json(r, g, 1));
			}
			json_array_append_new(groups, gj);
		}
		labels = json_object_get(r->run, "labels");
		labels = labels ? json_incref(labels) : json_object();
		json_array_append_new(runs, json_pack("{ss,ss,sO,so,si,si,si,si,so,sO}", "dir", r->dir, "name", r->name,
			"run", json_object_get(r->run, "id") ? json_object_get(r->run, "id") : json_null(),
			"labels", labels,
			"nodes", nnodes(r), "missing", r->missing, "records", r->nrec, "errors", r->nerr,
			"groups", groups, "suspects", r->suspects));
		if (json_array_size(r->not_confirmed))
			json_object_set(json_array_get(runs, json_array_size(runs) - 1), "not_confirmed",
					r->not_confirmed);
		if (r->leaf_by)	/* the groups of the worst tables and leaf heatmaps */
			json_object_set_new(json_array_get(runs, json_array_size(runs) - 1), "aggregated_by",
					    json_pack("{ss,si}", "key", r->leaf_by, "groups", r->nleaf));
		if (json_array_size(r->polar))	/* the probe's verdicts, without the per-flow detail */
			json_object_set_new(json_array_get(runs, json_array_size(runs) - 1), "polarization",
					    report_polar_json(r));
		if (r->npfc)
			json_object_set_new(json_array_get(runs, json_array_size(runs) - 1), "pfc", report_pfc_json(r));
		if ((cj = report_coll_json(r)))
			json_object_set_new(json_array_get(runs, json_array_size(runs) - 1), "collectives", cj);
		if (r->cabling)
			json_object_set(json_array_get(runs, json_array_size(runs) - 1), "cabling", r->cabling);
		json_object_set_new(json_array_get(runs, json_array_size(runs) - 1), "tested", report_tested_json(rep, r));
	}
	json_object_set_new(o, "runs", runs);
	{
		json_t *mj = report_modes_json(rep);

		json_object_set(o, "modes", json_object_get(mj, "modes"));
		json_object_set(o, "planes", json_object_get(mj, "planes"));
		json_object_set(o, "loaded_latency", json_object_get(mj, "loaded_latency"));
		json_decref(mj);
	}
	json_object_set_new(o, "acceptance", json_pack("{sb,ss,so}", "pass", rep->result == REPORT_PASS, "result",
						       report_result_word(rep->result),
						       "checks", checks_json(rep->checks, rep->nchecks)));
	if (rep->have_base)
	{
		int nc, nr = report_regressions(rep, &nc);

		json_object_set_new(o, "baseline", json_pack("{ss,sf,sb,ss,si,si,so}", "dir", rep->base.dir,
							     "tolerance", rep->tolerance, "pass", !report_baseline_failed(rep),
							     "verdict", report_baseline_verdict(rep), "regressed", nr,
							     "not_comparable", nc,
							     "medians", checks_json(rep->regs, rep->nregs)));
	}
	if (rep->history)
		json_object_set(o, "history", rep->history);
	for (i = 0; i < rep->nsvg; i++)
		json_array_append_new(plots, json_pack("{ss,ss}", "file", rep->svg[i], "title", rep->svg_title[i]));
	json_object_set_new(o, "plots", plots);
	if (rep->plots_note[0])
		json_object_set_new(o, "plots_note", json_string(rep->plots_note));
	return o;
}

/* ---- Prometheus text exposition ---- */

void report_bput(struct report_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	while (!b->oom) {
		char *grown;

		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (b->s && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		if (n < 0 || !(grown = fs_reallocarray(b->s, (b->cap + (size_t)n + 1), 2))) {
			b->oom = 1;
			return;
		}
		b->s = grown;
		b->cap = (b->cap + (size_t)n + 1) * 2;
	}
}
