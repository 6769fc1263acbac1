/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report's "Worst pairs and nodes" section (render.h): for each lane of
 * the first run with more nodes than a pairwise matrix shows, the worst
 * pairs and the worst nodes that aggregate.c found, with their leaves and
 * how far each is from the lane's median.  Nothing for a run whose lanes
 * are all small.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "doc.h"
#include "render.h"
#include "report.h"

static void ratio_cell(struct rdoc *d, double v, double median)
{
	if (isnan(v) || isnan(median) || median <= 0)
		rdoc_cell(d, RDOC_EMPTY, 0);
	else
		rdoc_cellf(d, RDOC_NUM, 0, "%.2fx", v / median);
}

static const char *leaf_name(const struct rrun *r, int i)
{
	return i >= 0 && i < r->nleaf ? r->leaf[i] : "?";
}

static void pairs_table(const struct rrun *r, const struct rgroup *g, struct rdoc *d)
{
	int i;

	rdoc_table(d);
	rdoc_head(d);
	rdoc_cellf(d, RDOC_TEXT, 0, "#");
	rdoc_cell(d, RDOC_TEXT, 0);
	rdoc_sym(d, "worst pairs (sender -> receiver)", "worst pairs (sender &rarr; receiver)");
	if (r->leaf_by)
		rdoc_cellf(d, RDOC_TEXT, 0, "%s", !strcmp(r->leaf_by, "leaf") ? "leaves" : "pods");
	rdoc_cellf(d, RDOC_TEXT, 0, "%s", !strcmp(g->test, "bw") ? "Gb/s" : "p50 us");
	rdoc_cellf(d, RDOC_TEXT, 0, "of median");
	for (i = 0; i < g->nworst_pair; i++) {
		const struct rworst *w = &g->worst_pair[i];

		rdoc_row(d);
		rdoc_cellf(d, RDOC_NUM, 0, "%d", i + 1);
		rdoc_cell(d, RDOC_TEXT, 0);
		rdoc_text(d, w->src);
		rdoc_sym(d, " -> ", " &rarr; ");
		rdoc_text(d, w->dst);
		if (r->leaf_by) {
			rdoc_cell(d, RDOC_TEXT, 0);
			rdoc_text(d, leaf_name(r, w->leaf));
			rdoc_sym(d, " -> ", " &rarr; ");
			rdoc_text(d, leaf_name(r, w->dst_leaf));
		}
		rdoc_cellf(d, RDOC_NUM, 0, "%.4g", w->v);
		ratio_cell(d, w->v, g->median);
	}
}

static void nodes_table(const struct rrun *r, const struct rgroup *g, struct rdoc *d)
{
	int i;

	rdoc_table(d);
	rdoc_head(d);
	rdoc_cellf(d, RDOC_TEXT, 0, "#");
	rdoc_cellf(d, RDOC_TEXT, 0, "worst nodes");
	if (r->leaf_by)
		rdoc_cellf(d, RDOC_TEXT, 0, "%s", r->leaf_by);
	rdoc_cellf(d, RDOC_TEXT, 0, "median of its pairs (%s)", !strcmp(g->test, "bw") ? "Gb/s" : "p50 us");
	rdoc_cellf(d, RDOC_TEXT, 0, "pairs");
	rdoc_cellf(d, RDOC_TEXT, 0, "of median");
	for (i = 0; i < g->nworst_node; i++) {
		const struct rworst *w = &g->worst_node[i];

		rdoc_row(d);
		rdoc_cellf(d, RDOC_NUM, 0, "%d", i + 1);
		rdoc_cellf(d, RDOC_TEXT, 0, "%s", w->src);
		if (r->leaf_by)
			rdoc_cellf(d, RDOC_TEXT, 0, "%s", leaf_name(r, w->leaf));
		rdoc_cellf(d, RDOC_NUM, 0, "%.4g", w->v);
		rdoc_cellf(d, RDOC_NUM, 0, "%d", w->n);
		ratio_cell(d, w->v, g->median);
	}
}

void report_worst_section(const struct report *rep, struct rdoc *d)
{
	const struct rrun *r = &rep->runs[0];
	int gi, shown = 0;

	for (gi = 0; gi < r->ng; gi++) {
		const struct rgroup *g = &r->g[gi];
		char lane[48];

		if (!g->nworst_pair)
			continue;
		if (!shown++) {
			rdoc_heading(d, 2);
			rdoc_text(d, "Worst pairs and nodes");
			rdoc_para(d, 1);
			rdoc_textf(d, "Lanes of more than %d nodes, %s: the %d pairs and nodes furthest from the lane's "
				   "median on the bad side (a node's figure is the median of the pairs it sent or "
				   "received; one bad pair moves it little, a bad NIC or cable much).",
				   REPORT_MATRIX_NODES, rep->nruns > 1 ? r->name : "in place of pairwise matrices",
				   REPORT_WORST);
		}
		fs_lane_name(g->rail, g->plane, lane, sizeof(lane));
		rdoc_para(d, 0);
		rdoc_bold(d, g->phase);
		rdoc_textf(d, " %s, %s: %d nodes, %d pairs, lane median %.4g %s", g->test, lane, g->nnodes, g->n,
			   g->median, !strcmp(g->test, "bw") ? "Gb/s" : "us (p50)");
		pairs_table(r, g, d);
		nodes_table(r, g, d);
	}
}
