/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * "What was tested", on the report's first screen under the verdict, and
 * each run's "tested" in the JSON summary: the plan and its jobs, the nodes,
 * the rails and planes, the link speeds (the design's, or the thresholds'
 * line rate), the versions, and per phase what its tests covered (bw and
 * lat: the pairs measured of those the lane's nodes make, and whether both
 * directions of a pair were; other tests: their records).  A column per
 * run.  Everything is a count or a short list: a fleet of 16,384 nodes
 * reads as one of 4.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/record.h"
#include "render.h"
#include "report.h"

enum { T_PLAN, T_JOBS, T_NODES, T_LANES, T_SPEEDS, T_VERSIONS, T_N };
static const char *const row_name[T_N] = { "plan", "jobs", "nodes", "rails and planes", "link speeds",
					    "versions" };

#define TESTED_NAMES 8	/* nodes named up to this many */

/* the nodes of r with an endpoint on rail and plane (run.json); -1 when run.json says none */
static int lane_nodes(const struct rrun *r, int rail, int plane)
{
	json_t *n, *e;
	size_t k, j;
	int count = 0, any = 0;

	json_array_foreach(json_object_get(r->run, "nodes"), k, n)
		json_array_foreach(json_object_get(n, "endpoints"), j, e) {
			any = 1;
			if (record_num(e, "rail", -1) == rail && record_num(e, "plane", 0) == plane) {
				count++;
				break;
			}
		}
	return any ? count : -1;
}

/* "rails 0, 1; planes 0, 1 (4 lanes)" of run.json's endpoints, or of the groups */
static void lanes_text(const struct rrun *r, struct report_buf *b)
{
	int rails[64], planes[8], nr = 0, np = 0, lanes = 0, from_ep, i, k;
	int seen[64][8] = { { 0 } };
	json_t *n, *e;
	size_t a, c;

	json_array_foreach(json_object_get(r->run, "nodes"), a, n)
		json_array_foreach(json_object_get(n, "endpoints"), c, e) {
			double rv = record_num(e, "rail", -1), pv = record_num(e, "plane", 0);

			if (!(rv >= 0 && rv < 64 && pv >= 0 && pv < 8) || rv != floor(rv) || pv != floor(pv))
				continue;
			lanes += !seen[(int)rv][(int)pv]++;
		}
	for (i = 0, from_ep = lanes > 0; !from_ep && i < r->ng; i++)	/* (a run.json without endpoints) */
		if (r->g[i].rail >= 0 && r->g[i].rail < 64 && r->g[i].plane >= 0 && r->g[i].plane < 8)
			lanes += !seen[r->g[i].rail][r->g[i].plane]++;
	if (!lanes) {
		report_bput(b, "-");
		return;
	}
	for (i = 0; i < 64; i++)
		for (k = 0; k < 8; k++)
			if (seen[i][k]) {
				int x;

				for (x = 0; x < nr && rails[x] != i; x++)
					;
				if (x == nr)
					rails[nr++] = i;
				for (x = 0; x < np && planes[x] != k; x++)
					;
				if (x == np)
					planes[np++] = k;
			}
	report_bput(b, "rail%s", nr > 1 ? "s " : " ");
	for (i = 0; i < nr; i++)
		report_bput(b, "%s%d", i ? ", " : "", rails[i]);
	if (np > 1 || planes[0]) {
		report_bput(b, "; plane%s", np > 1 ? "s " : " ");
		for (i = 0; i < np; i++)
			report_bput(b, "%s%d", i ? ", " : "", planes[i]);
	}
	report_bput(b, " (%d lane%s)", lanes, lanes == 1 ? "" : "s");
}

static void nodes_text(const struct rrun *r, struct report_buf *b)
{
	json_t *nodes = json_object_get(r->run, "nodes"), *n;
	size_t k, nn = json_array_size(nodes);

	if (!nn) {
		report_bput(b, "-");
		return;
	}
	report_bput(b, "%zu", nn);
	if (nn <= TESTED_NAMES) {
		report_bput(b, " (");
		json_array_foreach(nodes, k, n)
			report_bput(b, "%s%.40s", k ? ", " : "", record_str(n, "name", "?"));
		report_bput(b, ")");
	}
	if (r->missing)
		report_bput(b, "; %d missing", r->missing);
}

static void plan_text(const struct rrun *r, struct report_buf *b)
{
	json_t *ph = json_object_get(r->run, "planned"), *p;
	size_t k;

	report_bput(b, "%.200s", record_str(r->run, "plan.path", "-"));
	if (!json_array_size(ph))
		ph = json_object_get(r->run, "phases");	/* (an older fabscope: those that ran) */
	json_array_foreach(ph, k, p) {
		report_bput(b, "%s%.60s (%.20s)", k ? ", " : ": ", record_str(p, "name", "?"), record_str(p, "kind", "?"));
		if (k == 15 && json_array_size(ph) > 16) {
			report_bput(b, ", and %zu more", json_array_size(ph) - 16);
			break;
		}
	}
}

static void jobs_text(const struct rrun *r, struct report_buf *b)
{
	long jobs = 0, done = 0;
	int i, skipped = 0;

	if (!r->planned) {
		report_bput(b, "%d records, %d failed (no planned jobs in run.json: an older fabscope)", r->nrec, r->nerr);
		return;
	}
	for (i = 0; i < r->nplanned; i++) {
		jobs += r->planned[i].jobs;
		done += r->planned[i].skipped ? 0 : r->planned[i].done < r->planned[i].jobs ? r->planned[i].done :
			r->planned[i].jobs;
		skipped += r->planned[i].skipped;
	}
	if (r->jobs_done_read)
		report_bput(b, "%ld planned, %ld ran, %d failed", jobs, done, r->nerr);
	else
		report_bput(b, "%ld planned; no jobs.done: how many ran is not known", jobs);
	if (skipped)
		report_bput(b, "; %d phase%s skipped", skipped, skipped == 1 ? "" : "s");
}

static void speeds_text(const struct report *rep, struct report_buf *b)
{
	if (rep->speeds[0])
		report_bput(b, "%s", rep->speeds);
	else if (!isnan(rep->line_rate))
		report_bput(b, "%.4g Gb/s ([bw] line_rate_gbps of %s)", rep->line_rate, rep->thresholds);
	else
		report_bput(b, "not known: give --topology FILE (its cables' speed=)");
}

static void versions_text(const struct rrun *r, struct report_buf *b)
{
	const char *seen[4];
	int ns = 0, i, more = 0;
	json_t *a;
	size_t k;

	report_bput(b, "run %.40s", record_str(r->run, "version", "?"));
	json_array_foreach(json_object_get(r->run, "agents"), k, a) {
		const char *v = record_str(a, "version", "?");

		for (i = 0; i < ns && strcmp(seen[i], v); i++)
			;
		if (i < ns)
			continue;
		if (ns < 4)
			seen[ns++] = v;
		else
			more++;
	}
	for (i = 0; i < ns; i++)
		report_bput(b, "%s%.40s", i ? ", " : "; agents ", seen[i]);
	if (more)
		report_bput(b, " and %d more", more);
	report_bput(b, "; report %s", FABSCOPE_VERSION);
}

/* what phase's tests covered in r: "bw 6 of 6 pairs a lane, 2 lanes, one way; lat ..." */
static void phase_text(const struct rrun *r, const char *phase, struct report_buf *b)
{
	int i, j, n = 0;

	for (i = 0; i < r->nms; i++) {
		const struct rmeasured *m = &r->ms[i];
		int seen = 0;

		if (strcmp(m->phase, phase))
			continue;
		for (j = 0; j < i && !seen; j++)
			seen = !strcmp(r->ms[j].phase, phase) && !strcmp(r->ms[j].test, m->test);
		if (seen)
			continue;
		report_bput(b, "%s%s", n++ ? "; " : "", m->test);
		if (m->rail < 0) {
			report_bput(b, ": %d record%s", m->n, m->n == 1 ? "" : "s");
			continue;
		}
		{
			long pairs = 0, possible = 0, both = 0;
			int lanes = 0;

			for (j = 0; j < r->ng; j++) {
				const struct rgroup *g = &r->g[j];
				int ln;

				if (strcmp(g->phase, phase) || strcmp(g->test, m->test))
					continue;
				ln = lane_nodes(r, g->rail, g->plane);
				ln = ln > 0 ? ln : g->nnodes;
				lanes++;
				pairs += g->n - g->both_ways;
				both += g->both_ways;
				possible += (long)ln * (ln - 1) / 2;
			}
			report_bput(b, ": %ld of %ld pairs on %d lane%s", pairs, possible, lanes, lanes == 1 ? "" : "s");
			if (both == pairs)
				report_bput(b, ", both ways");
			else if (both)
				report_bput(b, ", %ld both ways", both);
			else
				report_bput(b, ", one way");
		}
	}
}

static int add_phase(const char **out, int n, int max, const char *phase)
{
	int k;

	for (k = 0; k < n && strcmp(out[k], phase); k++)
		;
	if (k == n && n < max)
		out[n++] = phase;
	return n;
}

/* the phases of every run, each once: in the plan's order, then as the records came */
static int all_phases(const struct report *rep, const char **out, int max)
{
	int n = 0, ri, i;

	for (ri = 0; ri < rep->nruns; ri++)
		for (i = 0; i < rep->runs[ri].nplanned; i++)
			n = add_phase(out, n, max, rep->runs[ri].planned[i].name);
	for (ri = 0; ri < rep->nruns; ri++)
		for (i = 0; i < rep->runs[ri].nms; i++)
			n = add_phase(out, n, max, rep->runs[ri].ms[i].phase);
	return n;
}

static void row_text(const struct report *rep, const struct rrun *r, int row, struct report_buf *b)
{
	switch (row) {
	case T_PLAN: plan_text(r, b); break;
	case T_JOBS: jobs_text(r, b); break;
	case T_NODES: nodes_text(r, b); break;
	case T_LANES: lanes_text(r, b); break;
	case T_SPEEDS: speeds_text(rep, b); break;
	default: versions_text(r, b); break;
	}
}

#define TESTED_PHASES 32	/* phases shown; the JSON summary has them all */

void report_tested_section(const struct report *rep, struct rdoc *d)
{
	const char *phases[TESTED_PHASES];
	int np = all_phases(rep, phases, TESTED_PHASES), row, ri;

	rdoc_heading(d, 2);
	rdoc_text(d, "What was tested");
	rdoc_table(d);
	rdoc_head(d);
	rdoc_cell(d, RDOC_EMPTY, 0);
	for (ri = 0; ri < rep->nruns; ri++)
		rdoc_cellf(d, RDOC_TH, 0, "%s", rep->runs[ri].name);
	for (row = 0; row < T_N + np; row++) {
		rdoc_row(d);
		if (row < T_N)
			rdoc_cellf(d, RDOC_TH, 0, "%s", row_name[row]);
		else
			rdoc_cellf(d, RDOC_TH, 0, "phase %s", phases[row - T_N]);
		for (ri = 0; ri < rep->nruns; ri++) {
			struct report_buf b = { 0 };

			if (row < T_N)
				row_text(rep, &rep->runs[ri], row, &b);
			else
				phase_text(&rep->runs[ri], phases[row - T_N], &b);
			rdoc_cellf(d, RDOC_TEXT, 0, "%s", b.s && !b.oom && b.len ? b.s : "-");
			free(b.s);
		}
	}
}

json_t *report_tested_json(const struct report *rep, const struct rrun *r)
{
	json_t *o = json_object(), *cov = json_array();
	struct report_buf b = { 0 };
	int i;

	speeds_text(rep, &b);
	json_object_set_new(o, "plan", json_string(record_str(r->run, "plan.path", "-")));
	json_object_set_new(o, "nodes", json_integer((json_int_t)json_array_size(json_object_get(r->run, "nodes"))));
	json_object_set_new(o, "missing", json_integer(r->missing));
	json_object_set_new(o, "link_speeds", json_string(b.s && !b.oom ? b.s : ""));
	json_object_set_new(o, "version", json_string(record_str(r->run, "version", "?")));
	if (r->planned) {
		json_t *ph = json_array();

		for (i = 0; i < r->nplanned; i++)
			json_array_append_new(ph, json_pack("{ss,ss,sI,sI,sI,sb}", "name", r->planned[i].name, "kind",
							    r->planned[i].kind, "jobs", (json_int_t)r->planned[i].jobs,
							    "done", (json_int_t)r->planned[i].done,
							    "failed", (json_int_t)r->planned[i].failed,
							    "skipped", r->planned[i].skipped));
		json_object_set_new(o, "planned", ph);
		json_object_set_new(o, "jobs_done_read", json_boolean(r->jobs_done_read));
	}
	for (i = 0; i < r->ng; i++) {
		const struct rgroup *g = &r->g[i];
		int ln = lane_nodes(r, g->rail, g->plane);

		ln = ln > 0 ? ln : g->nnodes;
		json_array_append_new(cov, json_pack("{ss,ss,si,si,si,sI,si}", "phase", g->phase, "test", g->test,
						     "rail", g->rail, "plane", g->plane, "pairs", g->n - g->both_ways,
						     "possible", (json_int_t)ln * (ln - 1) / 2, "both_ways", g->both_ways));
	}
	for (i = 0; i < r->nms; i++)	/* the tests of no lane: what they are, no pairs */
		if (r->ms[i].rail < 0)
			json_array_append_new(cov, json_pack("{ss,ss,si}", "phase", r->ms[i].phase, "test", r->ms[i].test,
							     "records", r->ms[i].n));
	json_object_set_new(o, "coverage", cov);
	free(b.s);
	return o;
}
