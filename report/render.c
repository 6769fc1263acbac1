/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report's renderings: Markdown, one self-contained HTML file (the
 * plots inline as SVG), a JSON summary, and Prometheus text for --push.
 * Markdown and HTML walk the same sections in the same order:
 *
 *   runs (metadata) - verdict (thresholds) - regressions (baseline) -
 *   summary per phase, test and lane - comparison of runs - hash
 *   polarization - PFC pauses - suspects - plots - pairwise matrices -
 *   missing agents and failed tests
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/record.h"
#include "push.h"
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

static const char *verdict(const struct report *rep, int *failed)
{
	int i;

	*failed = 0;
	for (i = 0; i < rep->nchecks; i++)
		*failed += !rep->checks[i].pass;
	return *failed ? "FAIL" : "PASS";
}

static int nregressions(const struct report *rep)
{
	int i, n = 0;

	for (i = 0; i < rep->nregs; i++)
		n += !rep->regs[i].pass;
	return n;
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

	report_lane(g->rail, g->plane, lane, sizeof(lane));
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

/* ---- polarization ---- */

/* "13 flows filled about 1 link (1/11..1/15 each): 40000, 40001, ...", group by group */
static void polar_groups(json_t *rec, char *buf, size_t len)
{
	json_t *groups = json_object_get(rec, "collision_groups"), *g, *e;
	size_t n = 0, i, j;

	buf[0] = 0;
	json_array_foreach(groups, i, g) {
		int kmin = (int)record_num(g, "sharing_min", 1), kmax = (int)record_num(g, "sharing_max", 1);
		int cnt = (int)record_num(g, "flows", 0);

		if (kmax < 2 || n >= len)
			continue;	/* flows alone on their paths collided with nothing */
		if (kmin == kmax)
			n += (size_t)snprintf(buf + n, len - n, "%s%d flows filled about %.1f link%s (1/%d each): ",
					      n ? "; " : "", cnt, record_num(g, "links", 0),
					      record_num(g, "links", 0) < 1.5 ? "" : "s", kmin);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%d flows filled about %.1f link%s (1/%d..1/%d each): ",
					      n ? "; " : "", cnt, record_num(g, "links", 0),
					      record_num(g, "links", 0) < 1.5 ? "" : "s", kmin, kmax);
		json_array_foreach(json_object_get(g, "entropy"), j, e) {
			if (n >= len)
				break;
			if (j == 8) {
				n += (size_t)snprintf(buf + n, len - n, ", ...");
				break;
			}
			n += (size_t)snprintf(buf + n, len - n, "%s%lld", j ? ", " : "", (long long)json_integer_value(e));
		}
	}
	if (!buf[0])
		snprintf(buf, len, "every flow had a path to itself");
	n = strlen(buf);
	json_array_foreach(json_object_get(rec, "links"), i, g) {	/* --trace: the busiest links */
		if (i == 4 || n >= len)
			break;
		n += (size_t)snprintf(buf + n, len - n, "%s%s -> %s (%lld flows)", i ? ", " : ". Traced, the busiest links: ",
				      record_str(g, "from", "?"), record_str(g, "to", "?"),
				      (long long)json_integer_value(json_object_get(g, "flows")));
	}
}

/* worst run of the probes: the one with the fewest paths used on average */
static int polar_worst(const struct report *rep, double *used, int *polarized)
{
	int ri, w = -1;

	for (ri = 0; ri < rep->nruns; ri++) {
		json_t *rec;
		size_t k;
		double sum = 0;
		int n = 0, pol = 0;

		json_array_foreach(rep->runs[ri].polar, k, rec)
			if (!strcmp(record_str(rec, "scope", ""), "set")) {
				sum += record_num(rec, "metrics.paths_used", 0);
				pol += !strcmp(record_str(rec, "verdict", ""), "polarized");
				n++;
			}
		used[ri] = n ? sum / n : NAN;
		polarized[ri] = pol;
		if (n && (w < 0 || used[ri] < used[w]))
			w = ri;
	}
	return w;
}

/* ---- PFC pauses ---- */

#define PFC_COLS 12
#define PFC_CELL 288

static const char *const pfc_head[PFC_COLS] = {
	"run", "phase", "node", "role", "iface", "prio", "rx pauses/s avg / max", "tx pauses/s avg / max",
	"paused max rx / tx", "storm", "ECN before PFC", "verdict",
};

static int any_pfc(const struct report *rep)
{
	int ri;

	for (ri = 0; ri < rep->nruns; ri++)
		if (rep->runs[ri].npfc)
			return 1;
	return 0;
}

/* appends to buf (a string already) */
static void lput(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void lput(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

static void pfc_num(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.4g", v);
}

static int pfc_stormy(const struct rpfc_prio *p)
{
	return p->storm && strcmp(p->storm, "none");
}

/*
 * One row of the table: port pf and its priority pi (-1: a port that
 * names none, e.g. without pause counters).  cls: "fail", "pass" or NULL
 * per cell, for HTML.
 */
static void pfc_cells(const struct report *rep, int ri, const struct rpfc *pf, int pi,
		      char cell[PFC_COLS][PFC_CELL], const char *cls[PFC_COLS])
{
	const struct rpfc_prio *p = pi >= 0 ? &pf->p[pi] : NULL;
	char a[32], b[32];
	const char *storm, *ecn;
	int i, d;

	for (i = 0; i < PFC_COLS; i++) {
		cell[i][0] = 0;
		cls[i] = NULL;
	}
	snprintf(cell[0], PFC_CELL, "%s", rep->runs[ri].name);
	snprintf(cell[1], PFC_CELL, "%s", pf->phase);
	snprintf(cell[2], PFC_CELL, "%s", pf->node);
	snprintf(cell[3], PFC_CELL, "%s%s%s", pf->role, pf->dst ? " -> " : "", pf->dst ? pf->dst : "");
	snprintf(cell[4], PFC_CELL, "%s", pf->iface);
	if (!p) {
		snprintf(cell[5], PFC_CELL, "-");
		for (i = 6; i < 9; i++)
			snprintf(cell[i], PFC_CELL, "n/a");
	} else {
		snprintf(cell[5], PFC_CELL, "%d", p->prio);
		for (d = 0; d < 2; d++) {
			pfc_num(p->pps_avg[d], a, sizeof(a));
			pfc_num(p->pps_max[d], b, sizeof(b));
			snprintf(cell[6 + d], PFC_CELL, "%s / %s", a, b);
		}
		report_pct(p->paused_max[RPFC_RX], a, sizeof(a));
		report_pct(p->paused_max[RPFC_TX], b, sizeof(b));
		snprintf(cell[8], PFC_CELL, "%s / %s%s", a, b, p->estimated ? " est." : "");
	}
	storm = p ? (p->storm ? p->storm : "unknown") : pf->storm ? "yes" : "unknown";
	snprintf(cell[9], PFC_CELL, "%s", storm);
	cls[9] = strcmp(storm, "none") && strcmp(storm, "unknown") ? "fail" : NULL;
	ecn = p ? p->ecn_first : pf->ecn_first;
	snprintf(cell[10], PFC_CELL, "%s", ecn);
	cls[10] = !strcmp(ecn, "yes") ? "pass" : !strcmp(ecn, "no") ? "fail" : NULL;
	snprintf(cell[11], PFC_CELL, "%s", pf->verdict);
	cls[11] = !strcmp(pf->verdict, "storm") ? "fail" : !strcmp(pf->verdict, "clean") ? "pass" : NULL;
}

/* the rows of one port: one per priority, one when it names none */
static int pfc_rows(const struct rpfc *pf)
{
	return pf->np ? pf->np : 1;
}

struct pfc_line {
	char lead[300];		/* in bold before the text; "" for none */
	char text[1024];
};

struct pfc_stat {
	int ports, storms, before;
	double paused, pps;	/* the largest paused fraction; pause frames/s, summed */
};

static void pfc_stat(const struct rrun *r, struct pfc_stat *s)
{
	int i, j, d;

	memset(s, 0, sizeof(*s));
	s->paused = NAN;
	for (i = 0; i < r->npfc; i++) {
		const struct rpfc *pf = &r->pfc[i];
		int storms = 0, before = !strcmp(pf->ecn_first, "no");

		s->ports++;
		for (j = 0; j < pf->np; j++) {
			storms += pfc_stormy(&pf->p[j]);
			before |= !strcmp(pf->p[j].ecn_first, "no");
			for (d = 0; d < 2; d++) {
				if (!isnan(pf->p[j].pps_avg[d]))
					s->pps += pf->p[j].pps_avg[d];
				if (!isnan(pf->p[j].paused_max[d]) && !(pf->p[j].paused_max[d] <= s->paused))
					s->paused = pf->p[j].paused_max[d];
			}
		}
		s->storms += storms ? storms : pf->storm;
		s->before += before;
	}
}

/* > 0 when a paused worse than b: storms, then the worst paused fraction, ports paused before ECN, pause rates */
static int pfc_stat_cmp(const struct pfc_stat *a, const struct pfc_stat *b)
{
	double pa = isnan(a->paused) ? -1 : a->paused, pb = isnan(b->paused) ? -1 : b->paused;

	if (a->storms != b->storms)
		return a->storms > b->storms ? 1 : -1;
	if (pa != pb)
		return pa > pb ? 1 : -1;
	if (a->before != b->before)
		return a->before > b->before ? 1 : -1;
	return a->pps > b->pps ? 1 : a->pps < b->pps ? -1 : 0;
}

static void pfc_stat_text(const struct pfc_stat *s, char *buf, size_t len)
{
	char pct[32];

	report_pct(s->paused, pct, sizeof(pct));
	snprintf(buf, len, "%d PFC storm%s, paused up to %s of an interval, %d port%s paused before ECN/CNP, "
		 "%.4g pause frames/s over %d port%s", s->storms, s->storms == 1 ? "" : "s", pct, s->before,
		 s->before == 1 ? "" : "s", s->pps, s->ports, s->ports == 1 ? "" : "s");
}

/* " (lb=ecmp, phase pfc)": what tells a port's line apart from the others', when anything must */
static void pfc_ctx(const struct report *rep, int ri, const struct rpfc *pf, int phases, char *buf, size_t len)
{
	buf[0] = 0;
	if (rep->nruns > 1 && phases)
		snprintf(buf, len, " (%s, phase %s)", rep->runs[ri].name, pf->phase);
	else if (rep->nruns > 1)
		snprintf(buf, len, " (%s)", rep->runs[ri].name);
	else if (phases)
		snprintf(buf, len, " (phase %s)", pf->phase);
}

static struct pfc_line *pfc_line_new(struct pfc_line **v, int *n, const char *lead)
{
	struct pfc_line *l;

	*v = realloc(*v, (size_t)(*n + 1) * sizeof(**v));
	l = &(*v)[(*n)++];
	snprintf(l->lead, sizeof(l->lead), "%s", lead);
	l->text[0] = 0;
	return l;
}

static void pfc_before_line(struct pfc_line **v, int *n, const struct rpfc *pf, const struct rpfc_prio *p,
			    const char *ctx)
{
	struct pfc_line *l = pfc_line_new(v, n, "PFC before ECN/CNP");
	double pause_at = p ? p->pause_at : pf->pause_at;
	char at[32];

	lput(l->text, sizeof(l->text), "%s %s", pf->node, pf->iface);
	if (p)
		lput(l->text, sizeof(l->text), " prio %d", p->prio);
	report_secs(pause_at, at, sizeof(at));
	if (isnan(pause_at))
		lput(l->text, sizeof(l->text), ", pauses came first");
	else
		lput(l->text, sizeof(l->text), ", pauses from %s s", at);
	report_secs(pf->ecn_at, at, sizeof(at));
	if (isnan(pf->ecn_at))
		lput(l->text, sizeof(l->text), ", ECN/CNP never rose");
	else if (pf->ecn_at == pause_at)
		lput(l->text, sizeof(l->text), ", ECN/CNP in the same interval");
	else
		lput(l->text, sizeof(l->text), ", ECN/CNP from %s s", at);
	lput(l->text, sizeof(l->text), "%s", ctx);
}

/* with several runs: the one that paused worst, against the others */
static void pfc_worse_line(const struct report *rep, struct pfc_line **v, int *n)
{
	struct pfc_stat w, s;
	struct pfc_line *l;
	char buf[300];
	int ri, wi = -1, runs = 0, alike = 1;

	for (ri = 0; ri < rep->nruns; ri++) {
		if (!rep->runs[ri].npfc)
			continue;
		pfc_stat(&rep->runs[ri], &s);
		runs++;
		if (wi >= 0 && pfc_stat_cmp(&s, &w))
			alike = 0;
		if (wi < 0 || pfc_stat_cmp(&s, &w) > 0) {
			w = s;
			wi = ri;
		}
	}
	if (runs < 2)
		return;
	if (alike) {
		l = pfc_line_new(v, n, "Alike");
		pfc_stat_text(&w, buf, sizeof(buf));
		lput(l->text, sizeof(l->text), "every run: %s", buf);
	} else {
		snprintf(buf, sizeof(buf), "Worse: %s", rep->runs[wi].name);
		l = pfc_line_new(v, n, buf);
		pfc_stat_text(&w, buf, sizeof(buf));
		lput(l->text, sizeof(l->text), "%s; against ", buf);
		for (ri = 0, runs = 0; ri < rep->nruns; ri++) {
			if (ri == wi)
				continue;
			if (rep->runs[ri].npfc) {
				pfc_stat(&rep->runs[ri], &s);
				pfc_stat_text(&s, buf, sizeof(buf));
			} else {
				snprintf(buf, sizeof(buf), "no PFC records");
			}
			lput(l->text, sizeof(l->text), "%s%s: %s", runs++ ? "; " : "", rep->runs[ri].name, buf);
		}
	}
}

/*
 * The lines under the table, the same in Markdown and HTML: every storm,
 * every port that paused before ECN/CNP acted, what the probe said of
 * every port that was not clean, the clean ones, and with several runs the
 * one that paused worst.  The caller frees *out.
 */
static int pfc_lines(const struct report *rep, struct pfc_line **out)
{
	struct pfc_line *v = NULL, *l;
	int n = 0, ri, i, j, phases = 0;
	char ctx[400], at[32];

	for (ri = 0; ri < rep->nruns; ri++)
		for (i = 1; i < rep->runs[ri].npfc; i++)
			phases |= strcmp(rep->runs[ri].pfc[i].phase, rep->runs[ri].pfc[0].phase) != 0;
	for (ri = 0; ri < rep->nruns; ri++)	/* storms */
		for (i = 0; i < rep->runs[ri].npfc; i++) {
			const struct rpfc *pf = &rep->runs[ri].pfc[i];
			int named = 0;

			pfc_ctx(rep, ri, pf, phases, ctx, sizeof(ctx));
			for (j = 0; j < pf->np; j++) {
				const struct rpfc_prio *p = &pf->p[j];

				if (!pfc_stormy(p))
					continue;
				named++;
				l = pfc_line_new(&v, &n, "PFC storm");
				lput(l->text, sizeof(l->text), "%s %s prio %d %s, paused > %.3g %%", pf->node, pf->iface,
				     p->prio, p->storm, 100 * pf->storm_fraction);
				if (p->storm_run > 0)
					lput(l->text, sizeof(l->text), " for %d interval%s", p->storm_run,
					     p->storm_run == 1 ? "" : "s");
				report_secs(p->storm_at, at, sizeof(at));
				if (!isnan(p->storm_at))
					lput(l->text, sizeof(l->text), " from %s s", at);
				lput(l->text, sizeof(l->text), "%s", ctx);
			}
			if (pf->storm && !named) {
				l = pfc_line_new(&v, &n, "PFC storm");
				lput(l->text, sizeof(l->text), "%s %s, priority not recorded%s", pf->node, pf->iface, ctx);
			}
		}
	for (ri = 0; ri < rep->nruns; ri++)	/* pauses before ECN/CNP */
		for (i = 0; i < rep->runs[ri].npfc; i++) {
			const struct rpfc *pf = &rep->runs[ri].pfc[i];
			int named = 0;

			pfc_ctx(rep, ri, pf, phases, ctx, sizeof(ctx));
			for (j = 0; j < pf->np; j++)
				if (!strcmp(pf->p[j].ecn_first, "no")) {
					pfc_before_line(&v, &n, pf, &pf->p[j], ctx);
					named++;
				}
			if (!named && !strcmp(pf->ecn_first, "no"))	/* the port's word, when no priority says it */
				pfc_before_line(&v, &n, pf, NULL, ctx);
		}
	for (ri = 0; ri < rep->nruns; ri++) {	/* what the probe said of each port that was not clean */
		char clean[1024] = "";
		int nclean = 0;

		for (i = 0; i < rep->runs[ri].npfc; i++) {
			const struct rpfc *pf = &rep->runs[ri].pfc[i];

			if (!strcmp(pf->verdict, "clean")) {
				if (nclean++ < 16)
					lput(clean, sizeof(clean), "%s%s %s", nclean > 1 ? ", " : "", pf->node, pf->iface);
				else if (nclean == 17)
					lput(clean, sizeof(clean), ", ...");
				continue;
			}
			pfc_ctx(rep, ri, pf, phases, ctx, sizeof(ctx));
			l = pfc_line_new(&v, &n, "");
			lput(l->text, sizeof(l->text), "%s %s, %s%s%s%s: ", pf->node, pf->iface, pf->role,
			     pf->dst ? " -> " : "", pf->dst ? pf->dst : "", ctx);
			if (pf->verdict_text)
				lput(l->text, sizeof(l->text), "%s", pf->verdict_text);
			else
				lput(l->text, sizeof(l->text), "verdict %s; n/a: the record has no verdict text",
				     pf->verdict);
		}
		if (nclean) {
			l = pfc_line_new(&v, &n, "");
			lput(l->text, sizeof(l->text), "%s%sclean, no pauses: %s", rep->nruns > 1 ? rep->runs[ri].name : "",
			     rep->nruns > 1 ? ": " : "", clean);
		}
	}
	pfc_worse_line(rep, &v, &n);
	*out = v;
	return n;
}

/* ---- Markdown ---- */

static void md_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '\n')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

static void md_checks(FILE *f, const struct check *c, int n)
{
	int i;

	fprintf(f, "| check | limit | worst | failing | result | endpoints |\n|---|---|---|---|---|---|\n");
	for (i = 0; i < n; i++) {
		fputs("| ", f);
		md_cell(f, c[i].name);
		fprintf(f, " | %s | %s | %d of %d | **%s** | ", c[i].limit, c[i].worst, c[i].failing, c[i].total,
			c[i].pass ? "PASS" : "FAIL");
		md_cell(f, c[i].who[0] ? c[i].who : "-");
		fputs(" |\n", f);
	}
	fputc('\n', f);
}

static void md_pfc(const struct report *rep, FILE *f)
{
	char cell[PFC_COLS][PFC_CELL];
	const char *cls[PFC_COLS];
	struct pfc_line *lines;
	int ri, i, j, c, n;

	fprintf(f, "## PFC pauses\n\n|");
	for (c = 0; c < PFC_COLS; c++)
		fprintf(f, " %s |", pfc_head[c]);
	fputs("\n|", f);
	for (c = 0; c < PFC_COLS; c++)
		fputs("---|", f);
	fputc('\n', f);
	for (ri = 0; ri < rep->nruns; ri++)
		for (i = 0; i < rep->runs[ri].npfc; i++)
			for (j = 0; j < pfc_rows(&rep->runs[ri].pfc[i]); j++) {
				pfc_cells(rep, ri, &rep->runs[ri].pfc[i], rep->runs[ri].pfc[i].np ? j : -1, cell, cls);
				fputc('|', f);
				for (c = 0; c < PFC_COLS; c++) {
					fputs(c == PFC_COLS - 1 ? " **" : " ", f);
					md_cell(f, cell[c]);
					fputs(c == PFC_COLS - 1 ? "** |" : " |", f);
				}
				fputc('\n', f);
			}
	fprintf(f, "\nPause frames per second (rx: the peer paused this port; tx: it paused the peer), the "
		   "largest fraction of a sampling interval paused (est.: estimated from frame counts), "
		   "and whether ECN marks or CNPs rose before the first pause.\n\n");
	n = pfc_lines(rep, &lines);
	for (i = 0; i < n; i++) {
		fputs("- ", f);
		if (lines[i].lead[0]) {
			fputs("**", f);
			md_cell(f, lines[i].lead);
			fputs("**: ", f);
		}
		md_cell(f, lines[i].text);
		fputc('\n', f);
	}
	free(lines);
	fputc('\n', f);
}

void report_md(struct report *rep, FILE *f)
{
	const struct rgroup *gs[512];
	int ng = all_groups(rep, gs, 512), ri, gi, i, j, failed;
	char buf[512];

	fprintf(f, "# fabscope report\n\n");
	fprintf(f, "| |");
	for (ri = 0; ri < rep->nruns; ri++) {
		fputc(' ', f);
		md_cell(f, rep->runs[ri].name);
		fputs(" |", f);
	}
	fprintf(f, "\n|---|");
	for (ri = 0; ri < rep->nruns; ri++)
		fprintf(f, "---|");
	fputc('\n', f);
#define ROW(title, expr) do { fprintf(f, "| %s |", title); \
		for (ri = 0; ri < rep->nruns; ri++) { const struct rrun *r = &rep->runs[ri]; (void)r; \
			fputc(' ', f); expr; fputs(" |", f); } fputc('\n', f); } while (0)
	ROW("results", md_cell(f, r->dir));
	ROW("run", md_cell(f, rs(r, "id", "-")));
	ROW("started", md_cell(f, rs(r, "started", "-")));
	ROW("finished", md_cell(f, rs(r, "finished", "-")));
	ROW("status", md_cell(f, rs(r, "status", "-")));
	ROW("labels", (labels_str(r, buf, sizeof(buf)), md_cell(f, buf)));
	ROW("nodes", fprintf(f, "%d (%d missing)", nnodes(r), r->missing));
	ROW("records", fprintf(f, "%d (%d failed)", r->nrec, r->nerr));
	ROW("suspects", fprintf(f, "%zu", json_array_size(r->suspects)));
	fputc('\n', f);

	if (rep->thresholds_given) {
		const char *v = verdict(rep, &failed);

		fprintf(f, "## Acceptance: %s\n\n", v);
		fprintf(f, "%s: %d of %d checks failed.\n\n", v, failed, rep->nchecks);
		md_checks(f, rep->checks, rep->nchecks);
	}
	if (rep->have_base) {
		int nr = nregressions(rep);

		fprintf(f, "## Against the baseline: %s\n\n", nr ? "REGRESSED" : "no regression");
		fprintf(f, "Baseline `%s` (run %s), tolerance %.0f%%: %d of %d medians regressed.\n\n",
			rep->base.dir, rs(&rep->base, "id", "-"), 100 * rep->tolerance, nr, rep->nregs);
		fprintf(f, "| median | baseline | now | result | note |\n|---|---|---|---|---|\n");
		for (i = 0; i < rep->nregs; i++) {
			fputs("| ", f);
			md_cell(f, rep->regs[i].name);
			fprintf(f, " | %s | %s | **%s** | ", rep->regs[i].limit, rep->regs[i].worst,
				rep->regs[i].pass ? "ok" : "REGRESSION");
			md_cell(f, rep->regs[i].who[0] ? rep->regs[i].who : "-");
			fputs(" |\n", f);
		}
		fputc('\n', f);
	}

	fprintf(f, "## Summary per phase and rail\n\n");
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];

		if (rep->nruns > 1) {
			fprintf(f, "### ");
			md_cell(f, r->name);
			fprintf(f, "\n\n");
		}
		if (!r->ng) {
			fprintf(f, "No bandwidth or latency results.\n\n");
			continue;
		}
		fprintf(f, "| phase | test | lane | pairs | min | median | max | unit |\n|---|---|---|---|---|---|---|---|\n");
		for (gi = 0; gi < r->ng; gi++) {
			const struct rgroup *g = &r->g[gi];
			char lane[48];

			report_lane(g->rail, g->plane, lane, sizeof(lane));
			fputs("| ", f);
			md_cell(f, g->phase);
			fprintf(f, " | %s | %s | %d | %.4g | %.4g | %.4g | %s%s |\n", g->test, lane, g->n, g->min,
				g->median, g->max, !strcmp(g->test, "bw") ? "Gb/s" : "us p50",
				!strcmp(g->test, "lat") && !isnan(g->p99_median) ? "" : "");
		}
		fputc('\n', f);
	}

	if (rep->nruns > 1 && ng) {
		fprintf(f, "## Comparison\n\n| phase | test | lane |");
		for (ri = 0; ri < rep->nruns; ri++) {
			fputc(' ', f);
			md_cell(f, rep->runs[ri].name);
			fputs(" |", f);
		}
		fprintf(f, " best |\n|---|---|---|");
		for (ri = 0; ri <= rep->nruns; ri++)
			fputs("---|", f);
		fputc('\n', f);
		for (i = 0; i < ng; i++) {
			double best, worst, first = NAN;
			int b = best_run(rep, gs[i], &best, &worst);
			char lane[48];

			report_lane(gs[i]->rail, gs[i]->plane, lane, sizeof(lane));
			fputs("| ", f);
			md_cell(f, gs[i]->phase);
			fprintf(f, " | %s | %s |", gs[i]->test, lane);
			for (ri = 0; ri < rep->nruns; ri++) {
				const struct rgroup *g = report_group(&rep->runs[ri], gs[i]->phase, gs[i]->test,
								      gs[i]->rail, gs[i]->plane);

				if (!g) {
					fputs(" - |", f);
					continue;
				}
				if (isnan(first))
					first = g->median;
				if (ri && first > 0)
					fprintf(f, " %.4g (%+.1f%%) |", g->median, 100 * (g->median - first) / first);
				else
					fprintf(f, " %.4g |", g->median);
			}
			fputc(' ', f);
			md_cell(f, b >= 0 ? rep->runs[b].name : "-");
			fputs(" |\n", f);
		}
		fprintf(f, "\nMedians (Gb/s for bw, us p50 for lat); deltas against the first run.\n\n");
		for (i = 0; i < ng; i++) {
			comparison_line(rep, gs[i], buf, sizeof(buf));
			fputs("- ", f);
			md_cell(f, buf);
			fputc('\n', f);
		}
		fputc('\n', f);
	}

	if (rep->nruns && (json_array_size(rep->runs[0].polar) ||
			   (rep->nruns > 1 && json_array_size(rep->runs[1].polar)))) {
		double used[64];
		int pol[64], w;

		fprintf(f, "## Hash polarization\n\n");
		fprintf(f, "| run | phase | sender -> receiver | lane | set | flows | paths used | uniform hashing | p | verdict |\n"
			   "|---|---|---|---|---|---|---|---|---|---|\n");
		for (ri = 0; ri < rep->nruns; ri++) {
			json_t *rec;
			size_t k;

			json_array_foreach(rep->runs[ri].polar, k, rec) {
				char lane[48];

				if (strcmp(record_str(rec, "scope", ""), "set"))
					continue;
				report_lane((int)record_num(rec, "src.rail", 0), (int)record_num(rec, "src.plane", 0),
					    lane, sizeof(lane));
				fputs("| ", f);
				md_cell(f, rep->runs[ri].name);
				fputs(" | ", f);
				md_cell(f, record_str(rec, "phase", "-"));
				fprintf(f, " | %s -> %s | %s | %d | %d | %.1f of %d | %.1f +- %.1f | %.2g | **%s** |\n",
					record_str(rec, "src.node", record_str(rec, "src.ip", "?")),
					record_str(rec, "dst.node", record_str(rec, "dst.ip", "?")), lane,
					(int)record_num(rec, "params.set", 0) + 1, (int)record_num(rec, "flows", 0),
					record_num(rec, "metrics.paths_used", 0), (int)record_num(rec, "params.paths", 0),
					record_num(rec, "metrics.expected_paths", 0), record_num(rec, "metrics.expected_paths_sd", 0),
					record_num(rec, "metrics.p_value", 1), record_str(rec, "verdict", "?"));
			}
		}
		fputc('\n', f);
		for (ri = 0; ri < rep->nruns; ri++) {
			json_t *rec;
			size_t k;

			json_array_foreach(rep->runs[ri].polar, k, rec) {
				if (strcmp(record_str(rec, "scope", ""), "set") ||
				    strcmp(record_str(rec, "verdict", ""), "polarized"))
					continue;
				polar_groups(rec, buf, sizeof(buf));
				fputs("- ", f);
				if (rep->nruns > 1) {
					md_cell(f, rep->runs[ri].name);
					fputs(": ", f);
				}
				md_cell(f, record_str(rec, "verdict_text", ""));
				fputs(". Collisions: ", f);
				md_cell(f, buf);
				fputc('\n', f);
			}
		}
		if (rep->nruns > 1 && rep->nruns <= 64 && (w = polar_worst(rep, used, pol)) >= 0) {
			fprintf(f, "\n**Worse: %s**, %s %.1f paths used on average, against ", rep->runs[w].name,
				pol[w] ? "polarized," : "", used[w]);
			for (ri = 0, i = 0; ri < rep->nruns; ri++)
				if (ri != w && !isnan(used[ri]))
					fprintf(f, "%s%.1f with %s", i++ ? ", " : "", used[ri], rep->runs[ri].name);
			fputs(".\n", f);
		}
		fputc('\n', f);
	}

	if (any_pfc(rep))
		md_pfc(rep, f);

	fprintf(f, "## Suspects\n\n");
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];
		json_t *s;
		size_t k;

		if (!json_array_size(r->suspects)) {
			fprintf(f, "- %s%snone: no node, pair or rail stands out\n", rep->nruns > 1 ? r->name : "",
				rep->nruns > 1 ? ": " : "");
			continue;
		}
		json_array_foreach(r->suspects, k, s) {
			fprintf(f, "- **%s** ", record_str(s, "kind", "?"));
			if (rep->nruns > 1) {
				md_cell(f, r->name);
				fputs(", ", f);
			}
			fprintf(f, "[%s] ", record_str(s, "phase", "?"));
			md_cell(f, record_str(s, "evidence", ""));
			fputc('\n', f);
		}
	}
	fputc('\n', f);

	fprintf(f, "## Plots\n\n");
	if (!rep->nsvg)
		fprintf(f, "%s\n\n", rep->plots_note[0] ? rep->plots_note : "No plots.");
	else if (rep->plots_note[0])
		fprintf(f, "%s\n\n", rep->plots_note);
	for (i = 0; i < rep->nsvg; i++)
		fprintf(f, "![%s](plots/%s)\n\n", rep->svg_title[i], rep->svg[i]);

	fprintf(f, "## Pairwise matrices\n\n");
	for (gi = 0; gi < rep->runs[0].ng; gi++) {
		const struct rgroup *g = &rep->runs[0].g[gi];
		char lane[48];

		if (g->nnodes < 3 || g->nnodes > 16)
			continue;
		report_lane(g->rail, g->plane, lane, sizeof(lane));
		fprintf(f, "**%s %s, %s** (%s; row sends, column receives)\n\n| |", g->phase, g->test, lane,
			!strcmp(g->test, "bw") ? "Gb/s" : "p50 us");
		for (j = 0; j < g->nnodes; j++) {
			fputc(' ', f);
			md_cell(f, g->nodes[j]);
			fputs(" |", f);
		}
		fputs("\n|---|", f);
		for (j = 0; j < g->nnodes; j++)
			fputs("---|", f);
		fputc('\n', f);
		for (i = 0; i < g->nnodes; i++) {
			fputs("| ", f);
			md_cell(f, g->nodes[i]);
			fputs(" |", f);
			for (j = 0; j < g->nnodes; j++) {
				int k, found = 0;

				for (k = 0; k < g->n && !found; k++)
					if (!strcmp(g->p[k].src, g->nodes[i]) && !strcmp(g->p[k].dst, g->nodes[j])) {
						fprintf(f, " %.3g |", g->p[k].v);
						found = 1;
					}
				if (!found)
					fputs(" |", f);
			}
			fputc('\n', f);
		}
		fputc('\n', f);
	}

	fprintf(f, "## Missing agents and failed tests\n\n");
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];
		json_t *n, *rec;
		size_t k;
		int shown = 0;

		json_array_foreach(json_object_get(r->run, "nodes"), k, n)
			if (!strcmp(record_str(n, "status", "ok"), "missing")) {
				fprintf(f, "- agent **%s** missing: ", record_str(n, "name", "?"));
				md_cell(f, record_str(n, "why", "?"));
				fputc('\n', f);
			}
		json_array_foreach(r->records, k, rec)
			if (strcmp(record_str(rec, "status", "ok"), "ok") && shown++ < 20) {
				fputs("- `", f);
				md_cell(f, record_str(rec, "job", record_str(rec, "test", "?")));
				fputs("`: ", f);
				md_cell(f, record_str(rec, "error", "error"));
				fputc('\n', f);
			}
		if (shown > 20)
			fprintf(f, "- ... and %d more failed tests in %s/results.jsonl\n", shown - 20, r->dir);
		if (!r->missing && !r->nerr)
			fprintf(f, "- %s%snone\n", rep->nruns > 1 ? r->name : "", rep->nruns > 1 ? ": " : "");
	}
	fputc('\n', f);
#undef ROW
}

/* ---- HTML ---- */

static void h(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
}

static void html_svg(FILE *f, const char *path)
{
	FILE *s = fopen(path, "r");
	char buf[8192];
	size_t n;
	int started = 0;

	if (!s) {
		fputs("<p class=\"note\">(plot missing)</p>", f);
		return;
	}
	/* drop the XML prolog and doctype: the <svg> element goes inline */
	while (!started && fgets(buf, sizeof(buf), s)) {
		char *p = strstr(buf, "<svg");

		if (p) {
			fputs(p, f);
			started = 1;
		}
	}
	while ((n = fread(buf, 1, sizeof(buf), s)) > 0)
		fwrite(buf, 1, n, f);
	fclose(s);
}

static void html_checks(FILE *f, const struct check *c, int n, const char *ok, const char *bad)
{
	int i;

	fputs("<table><tr><th>check</th><th>limit</th><th>worst</th><th>failing</th><th>result</th><th>endpoints</th></tr>\n", f);
	for (i = 0; i < n; i++) {
		fputs("<tr><td>", f);
		h(f, c[i].name);
		fputs("</td><td>", f);
		h(f, c[i].limit);
		fputs("</td><td>", f);
		h(f, c[i].worst);
		fprintf(f, "</td><td>%d of %d</td><td class=\"%s\">%s</td><td>", c[i].failing, c[i].total,
			c[i].pass ? "pass" : "fail", c[i].pass ? ok : bad);
		h(f, c[i].who[0] ? c[i].who : "-");
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void html_pfc(const struct report *rep, FILE *f)
{
	char cell[PFC_COLS][PFC_CELL];
	const char *cls[PFC_COLS];
	struct pfc_line *lines;
	int ri, i, j, c, n;

	fputs("<h2>PFC pauses</h2>\n<table><tr>", f);
	for (c = 0; c < PFC_COLS; c++)
		fprintf(f, "<th>%s</th>", pfc_head[c]);
	fputs("</tr>\n", f);
	for (ri = 0; ri < rep->nruns; ri++)
		for (i = 0; i < rep->runs[ri].npfc; i++)
			for (j = 0; j < pfc_rows(&rep->runs[ri].pfc[i]); j++) {
				pfc_cells(rep, ri, &rep->runs[ri].pfc[i], rep->runs[ri].pfc[i].np ? j : -1, cell, cls);
				fputs("<tr>", f);
				for (c = 0; c < PFC_COLS; c++) {
					if (cls[c])
						fprintf(f, "<td class=\"%s\">", cls[c]);
					else
						fputs(c >= 5 && c <= 8 ? "<td class=\"num\">" : "<td>", f);
					h(f, cell[c]);
					fputs("</td>", f);
				}
				fputs("</tr>\n", f);
			}
	fputs("</table>\n<p class=\"note\">Pause frames per second (rx: the peer paused this port; tx: it paused "
	      "the peer), the largest fraction of a sampling interval paused (est.: estimated from frame "
	      "counts), and whether ECN marks or CNPs rose before the first pause.</p>\n<ul>\n", f);
	n = pfc_lines(rep, &lines);
	for (i = 0; i < n; i++) {
		fputs("<li>", f);
		if (lines[i].lead[0]) {
			fputs("<b>", f);
			h(f, lines[i].lead);
			fputs("</b>: ", f);
		}
		h(f, lines[i].text);
		fputs("</li>\n", f);
	}
	free(lines);
	fputs("</ul>\n", f);
}

void report_html(struct report *rep, FILE *f)
{
	const struct rgroup *gs[512];
	int ng = all_groups(rep, gs, 512), ri, gi, i, failed;
	char buf[512];

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>fabscope report</title>\n"
	      "<style>\nbody{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222;padding:0 1em}\n"
	      "table{border-collapse:collapse;margin:0.5em 0 1.5em}\n"
	      "th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:left;font-size:0.9em}\n"
	      "th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	      ".pass{background:#d9f2d9;font-weight:bold}.fail{background:#f8d0d0;font-weight:bold}\n"
	      ".verdict{font-size:1.6em;padding:0.3em 0.8em;display:inline-block;border-radius:4px}\n"
	      ".note{color:#666}figure{margin:1em 0}figcaption{font-size:0.9em;color:#444}\n"
	      "li.suspect{margin:0.3em 0}\n</style></head><body>\n<h1>fabscope report</h1>\n", f);
	fputs("<table><tr><th></th>", f);
	for (ri = 0; ri < rep->nruns; ri++) {
		fputs("<th>", f);
		h(f, rep->runs[ri].name);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
#define HROW(title, expr) do { fprintf(f, "<tr><th>%s</th>", title); \
		for (ri = 0; ri < rep->nruns; ri++) { const struct rrun *r = &rep->runs[ri]; (void)r; \
			fputs("<td>", f); expr; fputs("</td>", f); } fputs("</tr>\n", f); } while (0)
	HROW("results", h(f, r->dir));
	HROW("run", h(f, rs(r, "id", "-")));
	HROW("started", h(f, rs(r, "started", "-")));
	HROW("finished", h(f, rs(r, "finished", "-")));
	HROW("status", h(f, rs(r, "status", "-")));
	HROW("labels", (labels_str(r, buf, sizeof(buf)), h(f, buf)));
	HROW("nodes", fprintf(f, "%d (%d missing)", nnodes(r), r->missing));
	HROW("records", fprintf(f, "%d (%d failed)", r->nrec, r->nerr));
	HROW("suspects", fprintf(f, "%zu", json_array_size(r->suspects)));
	fputs("</table>\n", f);
#undef HROW

	if (rep->thresholds_given) {
		const char *v = verdict(rep, &failed);

		fprintf(f, "<h2>Acceptance</h2>\n<p><span class=\"verdict %s\">%s</span> %d of %d checks failed</p>\n",
			failed ? "fail" : "pass", v, failed, rep->nchecks);
		html_checks(f, rep->checks, rep->nchecks, "PASS", "FAIL");
	}
	if (rep->have_base) {
		int nr = nregressions(rep);

		fprintf(f, "<h2>Against the baseline</h2>\n<p><span class=\"verdict %s\">%s</span> baseline ",
			nr ? "fail" : "pass", nr ? "REGRESSED" : "no regression");
		h(f, rep->base.dir);
		fprintf(f, ", tolerance %.0f%%: %d of %d medians regressed</p>\n", 100 * rep->tolerance, nr, rep->nregs);
		html_checks(f, rep->regs, rep->nregs, "ok", "REGRESSION");
	}

	fputs("<h2>Summary per phase and rail</h2>\n", f);
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];

		if (rep->nruns > 1) {
			fputs("<h3>", f);
			h(f, r->name);
			fputs("</h3>\n", f);
		}
		fputs("<table><tr><th>phase</th><th>test</th><th>lane</th><th>pairs</th><th>min</th><th>median</th>"
		      "<th>max</th><th>unit</th></tr>\n", f);
		for (gi = 0; gi < r->ng; gi++) {
			const struct rgroup *g = &r->g[gi];
			char lane[48];

			report_lane(g->rail, g->plane, lane, sizeof(lane));
			fputs("<tr><td>", f);
			h(f, g->phase);
			fprintf(f, "</td><td>%s</td><td>%s</td><td class=\"num\">%d</td><td class=\"num\">%.4g</td>"
				"<td class=\"num\">%.4g</td><td class=\"num\">%.4g</td><td>%s</td></tr>\n", g->test,
				lane, g->n, g->min, g->median, g->max, !strcmp(g->test, "bw") ? "Gb/s" : "us p50");
		}
		fputs("</table>\n", f);
	}

	if (rep->nruns > 1 && ng) {
		fputs("<h2>Comparison</h2>\n<ul>\n", f);
		for (i = 0; i < ng; i++) {
			comparison_line(rep, gs[i], buf, sizeof(buf));
			fputs("<li>", f);
			h(f, buf);
			fputs("</li>\n", f);
		}
		fputs("</ul>\n", f);
	}

	if (rep->nruns && (json_array_size(rep->runs[0].polar) ||
			   (rep->nruns > 1 && json_array_size(rep->runs[1].polar)))) {
		double used[64];
		int pol[64], w;

		fputs("<h2>Hash polarization</h2>\n<table><tr><th>run</th><th>phase</th><th>sender &rarr; receiver</th>"
		      "<th>set</th><th>flows</th><th>paths used</th><th>uniform hashing</th><th>p</th><th>verdict</th></tr>\n", f);
		for (ri = 0; ri < rep->nruns; ri++) {
			json_t *rec;
			size_t k;

			json_array_foreach(rep->runs[ri].polar, k, rec) {
				int bad = !strcmp(record_str(rec, "verdict", ""), "polarized");

				if (strcmp(record_str(rec, "scope", ""), "set"))
					continue;
				fputs("<tr><td>", f);
				h(f, rep->runs[ri].name);
				fputs("</td><td>", f);
				h(f, record_str(rec, "phase", "-"));
				fputs("</td><td>", f);
				h(f, record_str(rec, "src.node", record_str(rec, "src.ip", "?")));
				fputs(" &rarr; ", f);
				h(f, record_str(rec, "dst.node", record_str(rec, "dst.ip", "?")));
				fprintf(f, "</td><td class=\"num\">%d</td><td class=\"num\">%d</td><td class=\"num\">%.1f of %d</td>"
					"<td class=\"num\">%.1f &plusmn; %.1f</td><td class=\"num\">%.2g</td><td class=\"%s\">%s</td></tr>\n",
					(int)record_num(rec, "params.set", 0) + 1, (int)record_num(rec, "flows", 0),
					record_num(rec, "metrics.paths_used", 0), (int)record_num(rec, "params.paths", 0),
					record_num(rec, "metrics.expected_paths", 0), record_num(rec, "metrics.expected_paths_sd", 0),
					record_num(rec, "metrics.p_value", 1), bad ? "fail" : "pass", record_str(rec, "verdict", "?"));
			}
		}
		fputs("</table>\n<ul>\n", f);
		for (ri = 0; ri < rep->nruns; ri++) {
			json_t *rec;
			size_t k;

			json_array_foreach(rep->runs[ri].polar, k, rec) {
				if (strcmp(record_str(rec, "scope", ""), "set") ||
				    strcmp(record_str(rec, "verdict", ""), "polarized"))
					continue;
				polar_groups(rec, buf, sizeof(buf));
				fputs("<li>", f);
				if (rep->nruns > 1) {
					h(f, rep->runs[ri].name);
					fputs(": ", f);
				}
				h(f, record_str(rec, "verdict_text", ""));
				fputs(". Collisions: ", f);
				h(f, buf);
				fputs("</li>\n", f);
			}
		}
		if (rep->nruns > 1 && rep->nruns <= 64 && (w = polar_worst(rep, used, pol)) >= 0) {
			fputs("<li><b>Worse: ", f);
			h(f, rep->runs[w].name);
			fprintf(f, "</b>, %s %.1f paths used on average</li>\n", pol[w] ? "polarized," : "", used[w]);
		}
		fputs("</ul>\n", f);
	}

	if (any_pfc(rep))
		html_pfc(rep, f);

	fputs("<h2>Suspects</h2>\n<ul>\n", f);
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];
		json_t *s;
		size_t k;

		if (!json_array_size(r->suspects)) {
			fputs("<li>", f);
			if (rep->nruns > 1) {
				h(f, r->name);
				fputs(": ", f);
			}
			fputs("none: no node, pair or rail stands out</li>\n", f);
		}
		json_array_foreach(r->suspects, k, s) {
			fprintf(f, "<li class=\"suspect\"><b>%s</b> ", record_str(s, "kind", "?"));
			if (rep->nruns > 1) {
				h(f, r->name);
				fputs(", ", f);
			}
			fputs("[", f);
			h(f, record_str(s, "phase", "?"));
			fputs("] ", f);
			h(f, record_str(s, "evidence", ""));
			fputs("</li>\n", f);
		}
	}
	fputs("</ul>\n<h2>Plots</h2>\n", f);
	if (rep->plots_note[0]) {
		fputs("<p class=\"note\">", f);
		h(f, rep->plots_note);
		fputs("</p>\n", f);
	}
	for (i = 0; i < rep->nsvg; i++) {
		char path[4096 + 256];

		snprintf(path, sizeof(path), "%s/%s", rep->plots_dir, rep->svg[i]);
		fputs("<figure>", f);
		html_svg(f, path);
		fputs("<figcaption>", f);
		h(f, rep->svg_title[i]);
		fputs("</figcaption></figure>\n", f);
	}

	fputs("<h2>Missing agents and failed tests</h2>\n<ul>\n", f);
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];
		json_t *n, *rec;
		size_t k;
		int shown = 0;

		json_array_foreach(json_object_get(r->run, "nodes"), k, n)
			if (!strcmp(record_str(n, "status", "ok"), "missing")) {
				fputs("<li>agent <b>", f);
				h(f, record_str(n, "name", "?"));
				fputs("</b> missing: ", f);
				h(f, record_str(n, "why", "?"));
				fputs("</li>\n", f);
			}
		json_array_foreach(r->records, k, rec)
			if (strcmp(record_str(rec, "status", "ok"), "ok") && shown++ < 20) {
				fputs("<li><code>", f);
				h(f, record_str(rec, "job", record_str(rec, "test", "?")));
				fputs("</code>: ", f);
				h(f, record_str(rec, "error", "error"));
				fputs("</li>\n", f);
			}
		if (!r->missing && !r->nerr) {
			fputs("<li>", f);
			if (rep->nruns > 1) {
				h(f, r->name);
				fputs(": ", f);
			}
			fputs("none</li>\n", f);
		}
	}
	fprintf(f, "</ul>\n<p class=\"note\">fabscope %s; every figure is computed from the records in "
		"results.jsonl.</p>\n</body></html>\n", FABSCOPE_VERSION);
}

/* ---- JSON ---- */

static json_t *checks_json(const struct check *c, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{ss,ss,ss,si,si,sb,ss}", "check", c[i].name, "limit", c[i].limit,
						   "worst", c[i].worst, "failing", c[i].failing, "total", c[i].total,
						   "pass", c[i].pass, "endpoints", c[i].who));
	return a;
}

/* a number, or null when unknown; whole numbers as integers */
static json_t *jnum(double v)
{
	if (isnan(v))
		return json_null();
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_integer((json_int_t)v);
	return json_real(v);
}

static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* the probe's ports: what it judged, per priority, without the timeline */
static json_t *pfc_json(const struct rrun *r)
{
	json_t *a = json_array();
	int i, j;

	for (i = 0; i < r->npfc; i++) {
		const struct rpfc *pf = &r->pfc[i];
		json_t *prios = json_array();

		for (j = 0; j < pf->np; j++) {
			const struct rpfc_prio *p = &pf->p[j];

			json_array_append_new(prios, json_pack("{si,so,so,so,so,so,so,so,so,sb,so,si,so,so,ss}",
				"prio", p->prio, "rx_frames", jnum(p->frames[RPFC_RX]), "tx_frames", jnum(p->frames[RPFC_TX]),
				"rx_pps_avg", jnum(p->pps_avg[RPFC_RX]), "rx_pps_max", jnum(p->pps_max[RPFC_RX]),
				"tx_pps_avg", jnum(p->pps_avg[RPFC_TX]), "tx_pps_max", jnum(p->pps_max[RPFC_TX]),
				"rx_paused_max", jnum(p->paused_max[RPFC_RX]), "tx_paused_max", jnum(p->paused_max[RPFC_TX]),
				"estimated", p->estimated, "storm", jstr(p->storm), "storm_intervals", p->storm_run,
				"storm_from_s", jnum(pfc_stormy(p) ? p->storm_at : NAN), "first_pause_s", jnum(p->pause_at),
				"ecn_first", p->ecn_first));
		}
		json_array_append_new(a, json_pack("{ss,so,ss,ss,ss,so,ss,so,sb,ss,so,so,so}", "phase", pf->phase,
			"job", jstr(record_str(pf->rec, "job", NULL)), "node", pf->node, "role", pf->role,
			"iface", pf->iface, "dst", jstr(pf->dst), "verdict", pf->verdict,
			"verdict_text", jstr(pf->verdict_text), "storm", pf->storm, "ecn_first", pf->ecn_first,
			"first_ecn_s", jnum(pf->ecn_at), "first_pause_s", jnum(pf->pause_at), "priorities", prios));
	}
	return a;
}

json_t *report_json(struct report *rep)
{
	json_t *o = json_object(), *runs = json_array(), *plots = json_array();
	int ri, gi, i, failed;

	json_object_set_new(o, "schema", json_string("fabscope.report/1"));
	json_object_set_new(o, "version", json_string(FABSCOPE_VERSION));
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
			json_array_append_new(groups, gj);
		}
		json_array_append_new(runs, json_pack("{ss,ss,sO,sO,si,si,si,si,so,sO}", "dir", r->dir, "name", r->name,
			"run", json_object_get(r->run, "id") ? json_object_get(r->run, "id") : json_null(),
			"labels", json_object_get(r->run, "labels") ? json_object_get(r->run, "labels") : json_object(),
			"nodes", nnodes(r), "missing", r->missing, "records", r->nrec, "errors", r->nerr,
			"groups", groups, "suspects", r->suspects));
		if (json_array_size(r->polar)) {	/* the probe's verdicts, without the per-flow detail */
			json_t *pa = json_array(), *rec;
			size_t k;

			json_array_foreach(r->polar, k, rec)
				json_array_append_new(pa, json_pack("{sO?,sO?,sO?,sO?,sO?,sO?,sO?,sO?}",
					"phase", json_object_get(rec, "phase"), "scope", json_object_get(rec, "scope"),
					"src", json_object_get(rec, "src"), "dst", json_object_get(rec, "dst"),
					"params", json_object_get(rec, "params"), "metrics", json_object_get(rec, "metrics"),
					"verdict", json_object_get(rec, "verdict"),
					"verdict_text", json_object_get(rec, "verdict_text")));
			json_object_set_new(json_array_get(runs, json_array_size(runs) - 1), "polarization", pa);
		}
		if (r->npfc)
			json_object_set_new(json_array_get(runs, json_array_size(runs) - 1), "pfc", pfc_json(r));
	}
	json_object_set_new(o, "runs", runs);
	if (rep->thresholds_given) {
		verdict(rep, &failed);
		json_object_set_new(o, "acceptance", json_pack("{sb,so}", "pass", !failed,
							       "checks", checks_json(rep->checks, rep->nchecks)));
	}
	if (rep->have_base)
		json_object_set_new(o, "baseline", json_pack("{ss,sf,sb,so}", "dir", rep->base.dir,
							     "tolerance", rep->tolerance, "pass", !nregressions(rep),
							     "medians", checks_json(rep->regs, rep->nregs)));
	for (i = 0; i < rep->nsvg; i++)
		json_array_append_new(plots, json_pack("{ss,ss}", "file", rep->svg[i], "title", rep->svg_title[i]));
	json_object_set_new(o, "plots", plots);
	if (rep->plots_note[0])
		json_object_set_new(o, "plots_note", json_string(rep->plots_note));
	return o;
}

/* ---- Prometheus text exposition ---- */

struct buf {
	char *s;
	size_t len, cap;
};

static void bput(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bput(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (b->s && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		b->cap = (b->cap + (size_t)n + 1) * 2;
		b->s = realloc(b->s, b->cap);
	}
}

/* ports i and j of a run are the same port of the same phase (sampled again in another round) */
static int pfc_same_port(const struct rpfc *a, const struct rpfc *b)
{
	return !strcmp(a->phase, b->phase) && !strcmp(a->node, b->node) && !strcmp(a->iface, b->iface);
}

/*
 * The worst of a port's rounds (its records are next to each other) for
 * priority prio: what 0 the average pause rate, 1 the largest paused
 * fraction, 2 a storm (1 or 0); NAN when no round knows it.
 */
static double pfc_worst(const struct rrun *r, int i, int prio, int what, int d)
{
	double w = NAN;
	int k, j;

	for (k = i; k < r->npfc && pfc_same_port(&r->pfc[i], &r->pfc[k]); k++)
		for (j = 0; j < r->pfc[k].np; j++) {
			const struct rpfc_prio *p = &r->pfc[k].p[j];
			double v = what == 0 ? p->pps_avg[d] : what == 1 ? p->paused_max[d] :
				   p->storm ? pfc_stormy(p) : NAN;

			if (p->prio == prio && !isnan(v) && !(v <= w))
				w = v;
		}
	return w;
}

static void pfc_exposition(const struct report *rep, struct buf *b)
{
	static const char *const fam[3] = { "fabscope_pfc_pause_frames_per_second", "fabscope_pfc_paused_fraction_max",
					    "fabscope_pfc_storm" };
	static const char *const help[3] = {
		"PFC pause frames per second of a port's priority, the average over the probe's sampling (dir rx: the peer paused the port, tx: the port paused the peer); the highest of a phase's rounds",
		"the largest fraction of a sampling interval a port's priority was paused, where known (estimated from frame counts on NICs without pause durations); the highest of a phase's rounds",
		"1 when the PFC probe judged a storm on a port's priority (paused over 99 % for intervals in a row), in any of a phase's rounds",
	};
	static const char *const dir[2] = { "rx", "tx" };
	int m, ri, i, prio, d;

	if (!any_pfc(rep))
		return;
	for (m = 0; m < 3; m++) {
		bput(b, "# HELP %s %s\n# TYPE %s gauge\n", fam[m], help[m], fam[m]);
		for (ri = 0; ri < rep->nruns; ri++) {
			const struct rrun *r = &rep->runs[ri];

			for (i = 0; i < r->npfc; i++) {
				char *run, *ph, *node, *ifc;

				if (i && pfc_same_port(&r->pfc[i - 1], &r->pfc[i]))
					continue;	/* counted with the first round */
				run = push_label_value(r->name);
				ph = push_label_value(r->pfc[i].phase);
				node = push_label_value(r->pfc[i].node);
				ifc = push_label_value(r->pfc[i].iface);
				for (prio = 0; prio < 8; prio++)
					for (d = 0; d < (m == 2 ? 1 : 2); d++) {
						double v = pfc_worst(r, i, prio, m, d);

						if (isnan(v))
							continue;
						bput(b, "%s{run=\"%s\",phase=\"%s\",node=\"%s\",iface=\"%s\",prio=\"%d\"", fam[m],
						     run, ph, node, ifc, prio);
						if (m < 2)
							bput(b, ",dir=\"%s\"", dir[d]);
						bput(b, "} %.6g\n", v);
					}
				free(run);
				free(ph);
				free(node);
				free(ifc);
			}
		}
	}
}

char *report_exposition(struct report *rep)
{
	struct buf b = { 0 };
	int ri, gi, i, failed;
	const char *stat[3] = { "min", "median", "max" };

	bput(&b, "# HELP fabscope_lane per phase, test and lane: bandwidth in Gb/s or latency p50 in us over the pairs\n"
		 "# TYPE fabscope_lane gauge\n");
	for (ri = 0; ri < rep->nruns; ri++)
		for (gi = 0; gi < rep->runs[ri].ng; gi++) {
			const struct rgroup *g = &rep->runs[ri].g[gi];
			char *run = push_label_value(rep->runs[ri].name), *ph = push_label_value(g->phase);
			int s;

			for (s = 0; s < 3; s++) {
				double v = s == 0 ? g->min : s == 1 ? g->median : g->max;

				if (!isnan(v))
					bput(&b, "fabscope_lane{run=\"%s\",phase=\"%s\",test=\"%s\",rail=\"%d\",plane=\"%d\",stat=\"%s\",unit=\"%s\"} %.6g\n",
					     run, ph, g->test, g->rail, g->plane, stat[s],
					     !strcmp(g->test, "bw") ? "gbps" : "us", v);
			}
			free(run);
			free(ph);
		}
	bput(&b, "# HELP fabscope_run_problems missing agents, failed tests and suspects of a run\n"
		 "# TYPE fabscope_run_problems gauge\n");
	for (ri = 0; ri < rep->nruns; ri++) {
		char *run = push_label_value(rep->runs[ri].name);

		bput(&b, "fabscope_run_problems{run=\"%s\",what=\"missing_agents\"} %d\n", run, rep->runs[ri].missing);
		bput(&b, "fabscope_run_problems{run=\"%s\",what=\"failed_tests\"} %d\n", run, rep->runs[ri].nerr);
		bput(&b, "fabscope_run_problems{run=\"%s\",what=\"suspects\"} %zu\n", run,
		     json_array_size(rep->runs[ri].suspects));
		free(run);
	}
	{	/* each family in one group, as the text format wants */
		const char *fam[2] = { "fabscope_polarization_paths_used", "fabscope_polarization_polarized" };
		const char *help[2] = { "paths the flows of a polarization probe used",
					"1 when the probe judged the hashing polarized" };
		int m;

		for (m = 0; m < 2; m++) {
			bput(&b, "# HELP %s %s\n# TYPE %s gauge\n", fam[m], help[m], fam[m]);
			for (ri = 0; ri < rep->nruns; ri++) {
				json_t *rec;
				size_t k;

				json_array_foreach(rep->runs[ri].polar, k, rec) {
					char *run, *ph, *src, *dst;

					if (strcmp(record_str(rec, "scope", ""), "set"))
						continue;
					run = push_label_value(rep->runs[ri].name);
					ph = push_label_value(record_str(rec, "phase", "-"));
					src = push_label_value(record_str(rec, "src.node", "-"));
					dst = push_label_value(record_str(rec, "dst.node", "-"));
					bput(&b, "%s{run=\"%s\",phase=\"%s\",src=\"%s\",dst=\"%s\",set=\"%d\"} %.4g\n",
					     fam[m], run, ph, src, dst, (int)record_num(rec, "params.set", 0) + 1,
					     m ? !strcmp(record_str(rec, "verdict", ""), "polarized") :
						 record_num(rec, "metrics.paths_used", 0));
					free(run);
					free(ph);
					free(src);
					free(dst);
				}
			}
		}
	}
	pfc_exposition(rep, &b);
	if (rep->thresholds_given) {
		verdict(rep, &failed);
		bput(&b, "# HELP fabscope_acceptance_pass 1 when every acceptance check passed\n"
			 "# TYPE fabscope_acceptance_pass gauge\nfabscope_acceptance_pass %d\n", !failed);
		bput(&b, "# HELP fabscope_check_pass 1 when the check passed\n# TYPE fabscope_check_pass gauge\n");
		for (i = 0; i < rep->nchecks; i++) {
			char *c = push_label_value(rep->checks[i].name);

			bput(&b, "fabscope_check_pass{check=\"%s\"} %d\n", c, rep->checks[i].pass);
			free(c);
		}
	}
	if (rep->have_base)
		bput(&b, "# HELP fabscope_baseline_regressions medians worse than the baseline beyond the tolerance\n"
			 "# TYPE fabscope_baseline_regressions gauge\nfabscope_baseline_regressions %d\n",
		     nregressions(rep));
	return b.s;
}
