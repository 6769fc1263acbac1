/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report's "Load-balancing modes", "Latency under load" and "Planes":
 * the same bandwidth
 * phases compared across runs made under different load-balancing modes
 * (runs named by their differing labels, e.g. lb=ecmp, lb=spray), and the
 * planes of one run side by side.
 *
 * Per phase and lane: the aggregate (the pairs' sum a round: a round's pairs
 * run at once), the slowest pair, Jain's fairness over the pairs, and what
 * TCP saw of the order (bw.c's counters: retransmitted segments, reorderings
 * the senders detected, the share of segments the receivers took out of
 * order).  Reordering is judged by the senders' count: a receiver's
 * out-of-order count also rises behind every loss.  With --topology, each
 * phase's pairs are modelled on the intended fabric round by round, every
 * lane of a round at once as it ran (model/solve.h, as fabscope model
 * solves a round: max-min fair rates, every switch splitting every flow
 * equally, and per-flow ECMP with a uniform hash), and each lane's aggregate
 * is also said as a fraction of what the fabric carries; a run below
 * MODES_FAR_BELOW of it is a finding.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../model/fabric.h"
#include "../model/solve.h"
#include "../topology/intent.h"
#include "render.h"
#include "report.h"

#define MODES_FAR_BELOW 0.8	/* of what the fabric carries: a finding */
#define MODES_SEED 1		/* the ECMP draws', as fabscope model's default */

/* ---- the expectation of a group's pairs, from the model ---- */

/* a flow of a phase: its group (index into the run's), its pair there, round, ports */
struct xflow {
	int g, j, round;
	size_t src, dst, at;	/* at: its place among the phase's flows, for a stable order */
};

static int xflow_cmp(const void *a, const void *b)
{
	const struct xflow *x = a, *y = b;

	if (x->round != y->round)
		return x->round < y->round ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* what a round's solves add to its groups' sums, and its pairs' fair shares (fab_round's callback) */
struct xsum {
	const struct xflow *fl;
	size_t n;
	int draws;
	double *spray, *ecmp;	/* per group of the run */
	struct rrun *r;
};

static int xsum_add(void *ctx, int draw, const double *rate)
{
	struct xsum *x = ctx;
	size_t i;

	for (i = 0; i < x->n; i++) {
		if (draw) {
			x->ecmp[x->fl[i].g] += rate[i] / x->draws;
		} else {	/* spraying: the pair's rate in its round, its fair share */
			x->spray[x->fl[i].g] += rate[i];
			x->r->g[x->fl[i].g].p[x->fl[i].j].exp = rate[i];
		}
	}
	return 0;
}

/* the flows of run r's bw groups of one phase (want[g] set), every lane's: a group with a node or
 * lane the design does not have gets none (and no expectation) */
static size_t phase_flows(struct fab *f, const struct rrun *r, const char *want, struct xflow *fl)
{
	size_t n = 0;
	int gi, j;

	for (gi = 0; gi < r->ng; gi++) {
		const struct rgroup *g = &r->g[gi];
		size_t first = n;

		if (!want[gi])
			continue;
		for (j = 0; j < g->n; j++) {
			long a = fab_host_index(f, g->p[j].src), b = fab_host_index(f, g->p[j].dst);
			long pa = a < 0 ? -1 : fab_port_of(f, (size_t)a, g->rail, g->plane);
			long pb = b < 0 ? -1 : fab_port_of(f, (size_t)b, g->rail, g->plane);

			if (pa < 0 || pb < 0) {
				n = first;	/* no expectation for this group */
				break;
			}
			fl[n] = (struct xflow){ gi, j, g->p[j].round, (size_t)pa, (size_t)pb, n };
			n++;
		}
	}
	return n;
}

/* the expectation of run r's bw groups of the phase of group g0: every round solved as fabscope model
 * solves it (model/solve.h: all its lanes at once, its draws, seed MODES_SEED, the round's number),
 * each group's aggregate a round the mean over its rounds */
static void phase_expect(struct fab *f, struct rrun *r, int g0, char *done)
{
	char *want = calloc((size_t)r->ng, 1);
	double *spray = calloc((size_t)r->ng, sizeof(*spray)), *ecmp = calloc((size_t)r->ng, sizeof(*ecmp));
	int *rounds = calloc((size_t)r->ng, sizeof(*rounds)), gi;
	size_t total = 0, n = 0, a, z, i;
	struct xflow *fl = NULL;
	size_t *src = NULL, *dst = NULL;
	int ok = want && spray && ecmp && rounds;

	for (gi = g0; ok && gi < r->ng; gi++)
		if (!strcmp(r->g[gi].test, "bw") && !strcmp(r->g[gi].phase, r->g[g0].phase)) {
			want[gi] = done[gi] = 1;
			total += (size_t)r->g[gi].n;
		}
	if (ok && (!(fl = malloc((total ? total : 1) * sizeof(*fl))) || !(src = malloc((total ? total : 1) * sizeof(*src))) ||
		   !(dst = malloc((total ? total : 1) * sizeof(*dst)))))
		ok = 0;
	if (ok) {
		n = phase_flows(f, r, want, fl);
		qsort(fl, n, sizeof(*fl), xflow_cmp);
	}
	for (a = 0; ok && a < n; a = z) {	/* round by round */
		struct xsum x = { fl + a, 0, 0, spray, ecmp, r };

		for (z = a; z < n && fl[z].round == fl[a].round; z++) {
			src[z - a] = fl[z].src;
			dst[z - a] = fl[z].dst;
		}
		x.n = z - a;
		x.draws = fab_draws(x.n);
		ok = !fab_round(f, src, dst, x.n, fl[a].round > 0 ? (size_t)fl[a].round - 1 : 0, x.draws, MODES_SEED,
				xsum_add, &x);
		for (i = a; ok && i < z; i++)	/* the round counted once a group */
			if (i == a || fl[i].g != fl[i - 1].g)
				rounds[fl[i].g]++;
	}
	for (gi = g0; ok && gi < r->ng; gi++)
		if (want[gi] && rounds[gi]) {
			r->g[gi].exp_spray = spray[gi] / rounds[gi];
			r->g[gi].exp_ecmp = ecmp[gi] / rounds[gi];
		}
	for (i = 0; !ok && i < n; i++)	/* no expectation for some: for none */
		r->g[fl[i].g].p[fl[i].j].exp = NAN;
	free(want);
	free(spray);
	free(ecmp);
	free(rounds);
	free(fl);
	free(src);
	free(dst);
}

int report_modes_expect(struct report *rep, const struct topo *t)
{
	struct fab f;
	size_t k;
	int ri, gi, rc;

	for (k = 0; k < t->nln; k++)
		if (!(t->ln[k].speed_gbps > 0)) {	/* no rates to model by: a warning, not an error */
			fs_warn("%s:%d: a cable without speed=: the modes are not held against what the fabric "
				"carries (give every cable its speed)", t->path, t->ln[k].line);
			return 0;
		}
	if ((rc = fab_build(&f, t, 0)))
		return rc;
	for (ri = 0; ri < rep->nruns; ri++) {
		char *done = calloc((size_t)rep->runs[ri].ng + 1, 1);

		for (gi = 0; done && gi < rep->runs[ri].ng; gi++)	/* a phase at a time, its lanes together */
			if (!done[gi] && !strcmp(rep->runs[ri].g[gi].test, "bw"))
				phase_expect(&f, &rep->runs[ri], gi, done);
		free(done);
	}
	fab_release(&f);
	return 0;
}

/* ---- figures of a group ---- */

static double ooo_frac(const struct rgroup *g)
{
	return g->ro.n && g->ro.rx_segs > 0 ? g->ro.ooo / g->ro.rx_segs : NAN;
}

static double of_fabric(const struct rgroup *g)
{
	return g->exp_spray > 0 ? g->agg / g->exp_spray : NAN;
}

/* the bw groups of all runs, each (phase, lane) once, in the first run's order */
static int bw_groups(const struct report *rep, const struct rgroup **out, int max)
{
	int n = 0, ri, gi, k;

	for (ri = 0; ri < rep->nruns; ri++)
		for (gi = 0; gi < rep->runs[ri].ng; gi++) {
			const struct rgroup *g = &rep->runs[ri].g[gi];

			if (strcmp(g->test, "bw"))
				continue;
			for (k = 0; k < n; k++)
				if (!strcmp(out[k]->phase, g->phase) && out[k]->rail == g->rail && out[k]->plane == g->plane)
					break;
			if (k == n && n < max)
				out[n++] = g;
		}
	return n;
}

enum { M_AGG, M_SLOW, M_FAIR, M_ORDER, M_N };
static const char *const metric_name[M_N] = { "aggregate", "slowest", "fairness", "reordering" };

/* the value by which run r's group compares on metric m, higher better; NAN: none */
static double score(const struct rgroup *g, int m)
{
	switch (m) {
	case M_AGG:
		return g->agg;
	case M_SLOW:
		return g->min;
	case M_FAIR:
		return g->jain;
	default:	/* reorderings the senders detected a segment: a loss is not one */
		return g->ro.n && g->ro.rx_segs > 0 ? -g->ro.reord_seen / g->ro.rx_segs : NAN;
	}
}

/* the best run on metric m for the group like g0, or -1 (fewer than 2 runs with a value) */
static int best_on(const struct report *rep, const struct rgroup *g0, int m)
{
	int ri, b = -1, have = 0;
	double best = NAN, worst = NAN;

	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rgroup *g = report_group(&rep->runs[ri], g0->phase, "bw", g0->rail, g0->plane);
		double v = g ? score(g, m) : NAN;

		if (isnan(v))
			continue;
		have++;
		if (b < 0 || v > best) {
			best = v;
			b = ri;
		}
		if (isnan(worst) || v < worst)
			worst = v;
	}
	/* a tie (to 1 part in 10^6) has no best */
	return have >= 2 && best - worst > 1e-6 * fabs(best) ? b : -1;
}

/* a number to `digits` significant digits (0: a whole number), or "-" */
static void cell_num(struct rdoc *d, double v, int digits)
{
	if (isnan(v))
		rdoc_cellf(d, RDOC_NUM, 0, "-");
	else if (!digits)
		rdoc_cellf(d, RDOC_NUM, 0, "%.0f", v);
	else
		rdoc_cellf(d, RDOC_NUM, 0, "%.*g", digits, v);
}

static void cell_pct(struct rdoc *d, double frac)
{
	if (isnan(frac))
		rdoc_cellf(d, RDOC_NUM, 0, "-");
	else
		rdoc_cellf(d, RDOC_NUM, 0, "%.2f %%", 100 * frac);
}

/* a table and its head: the names up to a NULL, an empty one left out */
static void table_head(struct rdoc *d, const char *const *names)
{
	rdoc_table(d);
	rdoc_head(d);
	for (; *names; names++)
		if (**names)
			rdoc_cellf(d, RDOC_TEXT, 0, "%s", *names);
}

static void group_head(struct rdoc *d, const char *first, int expect)
{
	const char *names[] = { first, "aggregate Gb/s", expect ? "of the fabric" : "", expect ? "ECMP model" : "",
				"median", "slowest", "fairness", "retransmitted", "reorderings", "out of order", NULL };

	table_head(d, names);
}

static void group_row(struct rdoc *d, const char *name, const struct rgroup *g, int expect)
{
	double f = of_fabric(g);

	rdoc_row(d);
	rdoc_cell(d, RDOC_TH, 0);
	rdoc_text(d, name);
	cell_num(d, g->agg, 4);
	if (expect) {
		if (isnan(f))
			rdoc_cellf(d, RDOC_NUM, 0, "-");
		else
			rdoc_cellf(d, f < MODES_FAR_BELOW ? RDOC_WARN : RDOC_NUM, 0, "%.2f", f);
		cell_num(d, g->exp_ecmp, 4);
	}
	cell_num(d, g->median, 4);
	cell_num(d, g->min, 4);
	cell_num(d, g->jain, 3);
	cell_num(d, g->ro.n ? g->ro.retrans : NAN, 0);
	cell_num(d, g->ro.n ? g->ro.reord_seen : NAN, 0);
	cell_pct(d, ooo_frac(g));
}

static int any_expect(const struct report *rep)
{
	int ri, gi;

	for (ri = 0; ri < rep->nruns; ri++)
		for (gi = 0; gi < rep->runs[ri].ng; gi++)
			if (!isnan(rep->runs[ri].g[gi].exp_spray))
				return 1;
	return 0;
}

/* "highest aggregate: lb=spray (1.9 Gb/s; lb=ecmp 1.1, -42 %)" and kin */
static void best_lines(const struct report *rep, struct rdoc *d, const struct rgroup *g0)
{
	int m;

	for (m = 0; m < M_N; m++) {
		int b = best_on(rep, g0, m), ri;
		const struct rgroup *gb;

		if (b < 0)
			continue;
		gb = report_group(&rep->runs[b], g0->phase, "bw", g0->rail, g0->plane);
		rdoc_item(d, NULL);
		rdoc_textf(d, "%s: ", m == M_AGG ? "highest aggregate" : m == M_SLOW ? "fastest slowest pair" :
				     m == M_FAIR ? "fairest" : "least reordering");
		rdoc_bold(d, rep->runs[b].name);
		if (m == M_ORDER)
			rdoc_textf(d, " (%.0f reorderings", gb->ro.reord_seen);
		else if (m == M_FAIR)
			rdoc_textf(d, " (%.3f", score(gb, m));
		else
			rdoc_textf(d, " (%.4g", score(gb, m));
		for (ri = 0; ri < rep->nruns; ri++) {
			const struct rgroup *g = report_group(&rep->runs[ri], g0->phase, "bw", g0->rail, g0->plane);
			double v = g ? score(g, m) : NAN;

			if (ri == b || isnan(v))
				continue;
			if (m == M_ORDER)
				rdoc_textf(d, "; %s %.0f", rep->runs[ri].name, g->ro.reord_seen);
			else if (m == M_FAIR)
				rdoc_textf(d, "; %s %.3f", rep->runs[ri].name, v);
			else if (score(gb, m) > 0)
				rdoc_textf(d, "; %s %.4g, %+.0f %%", rep->runs[ri].name, v,
					   100 * (v - score(gb, m)) / score(gb, m));
		}
		rdoc_text(d, ")");
	}
}

/* a run far below what the fabric carries, with what its receivers saw of the order */
static void far_lines(const struct report *rep, struct rdoc *d, const struct rgroup *g0)
{
	int ri;

	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rgroup *g = report_group(&rep->runs[ri], g0->phase, "bw", g0->rail, g0->plane);
		double f = g ? of_fabric(g) : NAN;

		if (!(f < MODES_FAR_BELOW))
			continue;
		rdoc_item(d, "suspect");
		rdoc_bold(d, rep->runs[ri].name);
		rdoc_textf(d, ": %.2f of what the fabric carries", f);
		if (!isnan(ooo_frac(g)))
			rdoc_textf(d, "; receivers took %.1f %% of segments out of order (behind a loss or a "
				   "reordering), senders detected %.0f reorderings and retransmitted %.0f segments",
				   100 * ooo_frac(g), g->ro.reord_seen, g->ro.retrans);
	}
}

static void sec_modes(const struct report *rep, struct rdoc *d, const struct rgroup **gs, int ng, int expect)
{
	int i, ri, shown = 0;
	char lane[48];

	for (i = 0; i < ng; i++) {
		int runs = 0;

		for (ri = 0; ri < rep->nruns; ri++)
			runs += report_group(&rep->runs[ri], gs[i]->phase, "bw", gs[i]->rail, gs[i]->plane) != NULL;
		if (runs < 2)
			continue;
		if (!shown++) {
			rdoc_heading(d, 2);
			rdoc_text(d, "Load-balancing modes");
			rdoc_para(d, 0);
			rdoc_textf(d, "The same bandwidth phases in each run (%s): per phase and lane, the aggregate (the "
				   "pairs' sum a round), the median and slowest pair, Jain's fairness of the pairs, and "
				   "what TCP saw of the order: segments the senders retransmitted, reorderings they "
				   "detected (a loss is not one: the measure of reordering), segments the receivers "
				   "took out of order (behind a reordering or a loss).", rep->by ? rep->by : "named by "
				   "their labels");
			if (expect)
				rdoc_text(d, " Of the fabric: the aggregate over the max-min fair aggregate of the same pairs "
					     "on the intended topology with every switch splitting every flow equally "
					     "(fabscope-model(1)); ECMP model: the same with one uniformly hashed path a flow.");
		}
		fs_lane_name(gs[i]->rail, gs[i]->plane, lane, sizeof(lane));
		rdoc_heading(d, 3);
		rdoc_textf(d, "[%s] bw, %s", gs[i]->phase, lane);
		group_head(d, "run", expect);
		for (ri = 0; ri < rep->nruns; ri++) {
			const struct rgroup *g = report_group(&rep->runs[ri], gs[i]->phase, "bw", gs[i]->rail,
							      gs[i]->plane);

			if (g)
				group_row(d, rep->runs[ri].name, g, expect);
		}
		rdoc_list(d);
		best_lines(rep, d, gs[i]);
		far_lines(rep, d, gs[i]);
	}
}

/* the planes of each run's phases and rails, when a rail has more than one */
static void sec_planes(const struct report *rep, struct rdoc *d, int expect)
{
	int ri, gi, hi, shown = 0;

	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];

		for (gi = 0; gi < r->ng; gi++) {
			const struct rgroup *g = &r->g[gi];
			int other = 0, first = 1;

			if (strcmp(g->test, "bw"))
				continue;
			for (hi = 0; hi < r->ng; hi++) {	/* g the first plane of its phase and rail */
				const struct rgroup *h = &r->g[hi];

				if (strcmp(h->test, "bw") || strcmp(h->phase, g->phase) || h->rail != g->rail)
					continue;
				other += h != g;
				if (h->plane < g->plane)
					first = 0;
			}
			if (!other || !first)
				continue;
			if (!shown++) {
				rdoc_heading(d, 2);
				rdoc_text(d, "Planes");
				rdoc_para(d, 0);
				rdoc_text(d, "A rail's planes side by side (a dual-plane fabric: each NIC's two ports on two "
					     "independent planes); the same figures as the modes above.");
			}
			rdoc_heading(d, 3);
			rdoc_textf(d, "%s%s[%s] bw, rail %d", rep->nruns > 1 ? r->name : "", rep->nruns > 1 ? ": " : "",
				   g->phase, g->rail);
			group_head(d, "plane", expect);
			{
				int p, best = -1;
				double bv = NAN;

				for (p = 0; p < 8; p++) {
					const struct rgroup *h = report_group(r, g->phase, "bw", g->rail, p);
					char name[16];

					if (!h)
						continue;
					snprintf(name, sizeof(name), "plane %d", p);
					group_row(d, name, h, expect);
					if (best < 0 || h->agg > bv) {
						best = p;
						bv = h->agg;
					}
				}
				rdoc_list(d);
				for (p = 0; p < 8; p++) {
					const struct rgroup *h = report_group(r, g->phase, "bw", g->rail, p);

					if (!h || p == best || !(bv > 0))
						continue;
					rdoc_item(d, NULL);
					rdoc_textf(d, "plane %d: %+.0f %% aggregate against plane %d", p,
						   100 * (h->agg - bv) / bv, best);
					if (!isnan(ooo_frac(h)) && !isnan(ooo_frac(report_group(r, g->phase, "bw", g->rail, best))))
						rdoc_textf(d, "; %.2f %% out of order against %.2f %%", 100 * ooo_frac(h),
							   100 * ooo_frac(report_group(r, g->phase, "bw", g->rail, best)));
				}
			}
		}
	}
}

/* the idle latency of g's lane in run r: the first lat group of the lane not under load */
static const struct rgroup *idle_of(const struct rrun *r, const struct rgroup *g)
{
	int gi;

	for (gi = 0; gi < r->ng; gi++) {
		const struct rgroup *h = &r->g[gi];

		if (!strcmp(h->test, "lat") && !h->loaded && h->rail == g->rail && h->plane == g->plane &&
		    !isnan(h->median))
			return h;
	}
	return NULL;
}

/* "Latency under load": every loaded lat group of every run against its lane's idle p50 */
static void sec_loaded(const struct report *rep, struct rdoc *d)
{
	int ri, gi, shown = 0;

	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];

		for (gi = 0; gi < r->ng; gi++) {
			const struct rgroup *g = &r->g[gi], *idle;
			char lane[48];

			if (strcmp(g->test, "lat") || !g->loaded)
				continue;
			if (!shown++) {
				rdoc_heading(d, 2);
				rdoc_text(d, "Latency under load");
				rdoc_para(d, 0);
				rdoc_text(d, "Latency measured while a bandwidth test of the same pair loads the fabric (a "
					     "plan phase's load = bw), against the same lane's idle latency: the medians "
					     "over the pairs of their p50 and p99 (us), and how many times the idle p50 "
					     "each is.");
				{
					const char *names[] = { rep->nruns > 1 ? "run" : "", "phase", "lane", "idle p50",
								"loaded p50", "loaded p99", "p50 x idle", "p99 x idle",
								NULL };

					table_head(d, names);
				}
			}
			idle = idle_of(r, g);
			fs_lane_name(g->rail, g->plane, lane, sizeof(lane));
			rdoc_row(d);
			if (rep->nruns > 1) {
				rdoc_cell(d, RDOC_TH, 0);
				rdoc_text(d, r->name);
			}
			rdoc_cellf(d, RDOC_TEXT, 0, "%s", g->phase);
			rdoc_cell(d, RDOC_TEXT, 0);
			rdoc_text(d, lane);
			cell_num(d, idle ? idle->median : NAN, 4);
			cell_num(d, g->median, 4);
			cell_num(d, g->p99_median, 4);
			cell_num(d, idle && idle->median > 0 ? g->median / idle->median : NAN, 3);
			cell_num(d, idle && idle->median > 0 ? g->p99_median / idle->median : NAN, 3);
		}
	}
	if (shown && rep->nruns > 1) {	/* the mode with the lowest loaded p99, per phase and lane */
		const struct rrun *r0 = &rep->runs[0];

		rdoc_list(d);
		for (gi = 0; gi < r0->ng; gi++) {
			const struct rgroup *g0 = &r0->g[gi];
			int b = -1, n = 0;
			double bv = NAN;

			if (strcmp(g0->test, "lat") || !g0->loaded)
				continue;
			for (ri = 0; ri < rep->nruns; ri++) {
				const struct rgroup *g = report_group(&rep->runs[ri], g0->phase, "lat", g0->rail, g0->plane);

				if (!g || isnan(g->p99_median))
					continue;
				n++;
				if (b < 0 || g->p99_median < bv) {
					b = ri;
					bv = g->p99_median;
				}
			}
			if (n >= 2) {
				char lane[48];

				fs_lane_name(g0->rail, g0->plane, lane, sizeof(lane));
				rdoc_item(d, NULL);
				rdoc_textf(d, "[%s] %s: the lowest loaded p99 is ", g0->phase, lane);
				rdoc_bold(d, rep->runs[b].name);
				rdoc_textf(d, " (%.4g us)", bv);
			}
		}
	}
}

void report_modes_section(const struct report *rep, struct rdoc *d)
{
	const struct rgroup *gs[512];
	int ng = bw_groups(rep, gs, 512), expect = any_expect(rep);

	if (rep->nruns > 1)
		sec_modes(rep, d, gs, ng, expect);
	sec_loaded(rep, d);
	sec_planes(rep, d, expect);
}

/* a figure to 6 significant digits (no 0.6300000000000001 in a summary), or null */
static json_t *num_or_null(double v)
{
	char buf[32];

	if (isnan(v) || isinf(v))
		return json_null();
	snprintf(buf, sizeof(buf), "%.6g", v);
	return json_real(strtod(buf, NULL));
}

static json_t *group_json(const char *name, const struct rgroup *g)
{
	return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i}", "name", name,
			 "aggregate_gbps", num_or_null(g->agg), "expected_gbps", num_or_null(g->exp_spray),
			 "expected_ecmp_gbps", num_or_null(g->exp_ecmp), "of_expected", num_or_null(of_fabric(g)),
			 "median_gbps", num_or_null(g->median), "slowest_gbps", num_or_null(g->min),
			 "jain", num_or_null(g->jain), "retrans", num_or_null(g->ro.n ? g->ro.retrans : NAN),
			 "reord_seen", num_or_null(g->ro.n ? g->ro.reord_seen : NAN),
			 "ooo_pct", num_or_null(100 * ooo_frac(g)), "rounds", g->rounds);
}

json_t *report_modes_json(const struct report *rep)
{
	const struct rgroup *gs[512];
	int ng = bw_groups(rep, gs, 512), i, ri, m, gi, p;
	json_t *modes = json_array(), *planes = json_array();

	for (i = 0; rep->nruns > 1 && i < ng; i++) {
		json_t *runs = json_array(), *best = json_object();

		for (ri = 0; ri < rep->nruns; ri++) {
			const struct rgroup *g = report_group(&rep->runs[ri], gs[i]->phase, "bw", gs[i]->rail,
							      gs[i]->plane);

			if (g)
				json_array_append_new(runs, group_json(rep->runs[ri].name, g));
		}
		if (json_array_size(runs) < 2) {
			json_decref(runs);
			json_decref(best);
			continue;
		}
		for (m = 0; m < M_N; m++) {
			int b = best_on(rep, gs[i], m);

			json_object_set_new(best, metric_name[m], b < 0 ? json_null() : json_string(rep->runs[b].name));
		}
		json_array_append_new(modes, json_pack("{s:s, s:i, s:i, s:o, s:o}", "phase", gs[i]->phase, "rail",
						       gs[i]->rail, "plane", gs[i]->plane, "runs", runs, "best", best));
	}
	for (ri = 0; ri < rep->nruns; ri++)
		for (gi = 0; gi < rep->runs[ri].ng; gi++) {
			const struct rgroup *g = &rep->runs[ri].g[gi];
			json_t *pl;

			if (strcmp(g->test, "bw") || g->plane)
				continue;
			pl = json_array();
			for (p = 0; p < 8; p++) {
				const struct rgroup *h = report_group(&rep->runs[ri], g->phase, "bw", g->rail, p);
				char name[16];

				if (!h)
					continue;
				snprintf(name, sizeof(name), "plane %d", p);
				json_array_append_new(pl, group_json(name, h));
				json_object_set_new(json_array_get(pl, json_array_size(pl) - 1), "plane", json_integer(p));
			}
			if (json_array_size(pl) < 2) {
				json_decref(pl);
				continue;
			}
			json_array_append_new(planes, json_pack("{s:s, s:s, s:i, s:o}", "run", rep->runs[ri].name, "phase",
								g->phase, "rail", g->rail, "planes", pl));
		}
	{
		json_t *ll = json_array();

		for (ri = 0; ri < rep->nruns; ri++)
			for (gi = 0; gi < rep->runs[ri].ng; gi++) {
				const struct rgroup *g = &rep->runs[ri].g[gi], *idle;

				if (strcmp(g->test, "lat") || !g->loaded)
					continue;
				idle = idle_of(&rep->runs[ri], g);
				json_array_append_new(ll, json_pack("{s:s, s:s, s:i, s:i, s:o, s:o, s:o, s:o}", "run",
					rep->runs[ri].name, "phase", g->phase, "rail", g->rail, "plane", g->plane,
					"idle_phase", idle ? json_string(idle->phase) : json_null(),
					"idle_p50_us", num_or_null(idle ? idle->median : NAN),
					"p50_us", num_or_null(g->median), "p99_us", num_or_null(g->p99_median)));
			}
		return json_pack("{s:o, s:o, s:o}", "modes", modes, "planes", planes, "loaded_latency", ll);
	}
}
