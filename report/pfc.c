/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report's PFC pauses section, in every rendering: a row per port and
 * priority (pause rates, the worst paused fraction, storms, whether ECN/CNP
 * acted before PFC) with the lines under it in Markdown and HTML (one
 * model, doc.h), the probe's ports in the JSON summary, and their families
 * in the Prometheus text for --push.  render.c places it among the other sections.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/record.h"
#include "doc.h"
#include "push.h"
#include "render.h"
#include "report.h"

/* ---- the table's cells and the lines under it ---- */

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

/* the lines under the table */
struct pfc_lines {
	struct pfc_line *v;
	int n;
	size_t alloc;
	int oom;		/* a line could not be kept: it went to spare */
	struct pfc_line spare;
};

static struct pfc_line *pfc_line_new(struct pfc_lines *ls, const char *lead)
{
	struct pfc_line *l;

	if (FS_ALLOC_GROW(ls->v, ls->n + 1, ls->alloc)) {
		ls->oom = 1;
		l = &ls->spare;
	} else {
		l = &ls->v[ls->n++];
	}
	snprintf(l->lead, sizeof(l->lead), "%s", lead);
	l->text[0] = 0;
	return l;
}

static void pfc_before_line(struct pfc_lines *ls, const struct rpfc *pf, const struct rpfc_prio *p,
			    const char *ctx)
{
	struct pfc_line *l = pfc_line_new(ls, "PFC before ECN/CNP");
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
static void pfc_worse_line(const struct report *rep, struct pfc_lines *ls)
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
		l = pfc_line_new(ls, "Alike");
		pfc_stat_text(&w, buf, sizeof(buf));
		lput(l->text, sizeof(l->text), "every run: %s", buf);
	} else {
		snprintf(buf, sizeof(buf), "Worse: %s", rep->runs[wi].name);
		l = pfc_line_new(ls, buf);
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
 * one that paused worst, into ls (empty); the caller frees ls->v.
 */
static void pfc_lines(const struct report *rep, struct pfc_lines *ls)
{
	struct pfc_line *l;
	int ri, i, j, phases = 0;
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
				l = pfc_line_new(ls, "PFC storm");
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
				l = pfc_line_new(ls, "PFC storm");
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
					pfc_before_line(ls, pf, &pf->p[j], ctx);
					named++;
				}
			if (!named && !strcmp(pf->ecn_first, "no"))	/* the port's word, when no priority says it */
				pfc_before_line(ls, pf, NULL, ctx);
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
			l = pfc_line_new(ls, "");
			lput(l->text, sizeof(l->text), "%s %s, %s%s%s%s: ", pf->node, pf->iface, pf->role,
			     pf->dst ? " -> " : "", pf->dst ? pf->dst : "", ctx);
			if (pf->verdict_text)
				lput(l->text, sizeof(l->text), "%s", pf->verdict_text);
			else
				lput(l->text, sizeof(l->text), "verdict %s; n/a: the record has no verdict text",
				     pf->verdict);
		}
		if (nclean) {
			l = pfc_line_new(ls, "");
			lput(l->text, sizeof(l->text), "%s%sclean, no pauses: %s", rep->nruns > 1 ? rep->runs[ri].name : "",
			     rep->nruns > 1 ? ": " : "", clean);
		}
	}
	pfc_worse_line(rep, ls);
}

/* ---- Markdown and HTML ---- */

/* a cell's kind: what pfc_cells said for HTML, else a number from prio to the paused fraction */
static enum rdoc_kind pfc_kind(const char *cls, int c)
{
	if (cls)
		return !strcmp(cls, "fail") ? RDOC_FAIL : RDOC_PASS;
	return c >= 5 && c <= 8 ? RDOC_NUM : RDOC_TEXT;
}

void report_pfc_section(const struct report *rep, struct rdoc *d)
{
	char cell[PFC_COLS][PFC_CELL];
	const char *cls[PFC_COLS];
	struct pfc_lines ls = { 0 };
	int ri, i, j, c;

	if (!any_pfc(rep))
		return;
	rdoc_heading(d, 2);
	rdoc_text(d, "PFC pauses");
	rdoc_table(d);
	rdoc_head(d);
	for (c = 0; c < PFC_COLS; c++) {
		rdoc_cell(d, RDOC_TEXT, 0);
		rdoc_text(d, pfc_head[c]);
	}
	for (ri = 0; ri < rep->nruns; ri++)
		for (i = 0; i < rep->runs[ri].npfc; i++)
			for (j = 0; j < pfc_rows(&rep->runs[ri].pfc[i]); j++) {
				pfc_cells(rep, ri, &rep->runs[ri].pfc[i], rep->runs[ri].pfc[i].np ? j : -1, cell, cls);
				rdoc_row(d);
				for (c = 0; c < PFC_COLS; c++)	/* the verdict in bold in Markdown */
					rdoc_cellf(d, pfc_kind(cls[c], c), c == PFC_COLS - 1, "%s", cell[c]);
			}
	rdoc_para(d, 1);
	rdoc_lit(d, "Pause frames per second (rx: the peer paused this port; tx: it paused the peer), the "
		    "largest fraction of a sampling interval paused (est.: estimated from frame counts), "
		    "and whether ECN marks or CNPs rose before the first pause.");
	rdoc_list(d);
	pfc_lines(rep, &ls);
	d->oom |= ls.oom;
	for (i = 0; i < ls.n; i++) {
		rdoc_item(d, NULL);
		if (ls.v[i].lead[0]) {
			rdoc_bold(d, ls.v[i].lead);
			rdoc_lit(d, ": ");
		}
		rdoc_text(d, ls.v[i].text);
	}
	free(ls.v);
}

/* ---- JSON ---- */

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
json_t *report_pfc_json(const struct rrun *r)
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

/* ---- Prometheus text exposition ---- */

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

void report_pfc_exposition(const struct report *rep, const char *const *lbl, struct report_buf *b)
{
	static const char *const fam[3] = { "fabscope_pfc_pause_frames_per_second", "fabscope_pfc_max_paused_ratio",
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
		report_bput(b, "# HELP %s %s\n# TYPE %s gauge\n", fam[m], help[m], fam[m]);
		for (ri = 0; ri < rep->nruns; ri++) {
			const struct rrun *r = &rep->runs[ri];

			for (i = 0; lbl[ri] && i < r->npfc; i++) {
				char *ph, *node, *ifc;

				if (i && pfc_same_port(&r->pfc[i - 1], &r->pfc[i]))
					continue;	/* counted with the first round */
				ph = push_label_value(r->pfc[i].phase);
				node = push_label_value(r->pfc[i].node);
				ifc = push_label_value(r->pfc[i].iface);
				for (prio = 0; prio < 8; prio++)
					for (d = 0; d < (m == 2 ? 1 : 2); d++) {
						double v = pfc_worst(r, i, prio, m, d);

						if (isnan(v))
							continue;
						report_bput(b, "%s{%sphase=\"%s\",node=\"%s\",iface=\"%s\",prio=\"%d\"", fam[m],
							    lbl[ri], ph, node, ifc, prio);
						if (m < 2)
							report_bput(b, ",dir=\"%s\"", dir[d]);
						report_bput(b, "} %.6g\n", v);
					}
				free(ph);
				free(node);
				free(ifc);
			}
		}
	}
}
