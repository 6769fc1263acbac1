/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report's collectives section (records with "test": "allreduce" or
 * "alltoall"), in every rendering: per collective (test, algorithm,
 * transport) a table like nccl-tests' (size, count, time, algbw, busbw,
 * #wrong) per run, phase and lane, and with several runs their busbw side
 * by side per size with the ratio to the first run, in Markdown and HTML;
 * a plot of busbw against size per collective (plots/coll.gp); the series
 * in the JSON summary; their families in the Prometheus text for --push;
 * and the checks: wrong data (always) and [allreduce] / [alltoall]
 * min_busbw_gbps.  render.c, checks.c and cmd.c call it.
 *
 * A lane is "rail K" (or "rail K plane P") when the record names its rail
 * (--multi-rail, a plan's phase) or every rank of its group is on rail K,
 * "sum" for the rails of a multi-rail run added up, else the record's group
 * ("all": one ring across rails).  Records of one run, phase, lane and size (a phase run in
 * rounds) make one row: times and rates averaged, wrong elements added.
 * Records are untrusted: a missing or mistyped number is n/a, never a guess.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/record.h"
#include "../core/units.h"
#include "push.h"
#include "render.h"
#include "report.h"

#define COLL_CELL 320
#define COLL_PLOT_LINES 16	/* a plot's legend stays readable */

/* ---- the model: series of points, per run, collective, phase and lane ---- */

struct coll_pt {
	double size, count, time, tmin, tmax, algbw, busbw;
	long long wrong;	/* wrong elements; -1: not checked */
	int n;			/* records in it */
};

struct coll_series {
	int run, coll, phase;	/* indexes: rep->runs, set->key, set->phase */
	char lane[48];
	int lane_order;		/* "all" first, rails in order, other groups, "sum" last */
	int rail, plane;	/* rail -1: not one rail */
	int sum;		/* the rails of a multi-rail run added up */
	int ranks;
	json_t *first;		/* its first record, for the endpoints */
	struct coll_pt *pt;	/* by size */
	int npt;
};

struct coll_key {
	const char *test, *algo, *transport;
};

struct coll_set {
	struct coll_key *key;
	int nkey;
	const char **phase;
	int nphase;
	struct coll_series *s;
	int n;
};

static int is_coll(const char *test)
{
	return !strcmp(test, "allreduce") || !strcmp(test, "alltoall");
}

/* a whole number 0..max at path, else -1 */
static int small_int(json_t *o, const char *path, int max)
{
	double v = record_num(o, path, NAN);

	return v >= 0 && v <= max && v == floor(v) ? (int)v : -1;
}

static void rec_lane(json_t *rec, struct coll_series *s)
{
	const char *g = record_str(rec, "group", "all");
	json_t *e;
	size_t i;
	int one = -1, r;

	s->sum = !strcmp(g, "sum");
	s->rail = -1;
	s->plane = 0;
	if (s->sum) {
		snprintf(s->lane, sizeof(s->lane), "sum");
		s->lane_order = INT_MAX;
		return;
	}
	s->rail = small_int(rec, "rail", 1 << 20);
	json_array_foreach(json_object_get(rec, "endpoints"), i, e) {
		if (s->rail >= 0)
			break;
		r = small_int(e, "rail", 1 << 20);
		if (r < 0 || (one >= 0 && r != one)) {
			one = -1;
			break;
		}
		one = r;
	}
	if (s->rail < 0)
		s->rail = one;
	if (s->rail >= 0) {
		s->plane = small_int(rec, "plane", 1023);
		if (s->plane < 0)	/* the first rank's, as the bw records' src */
			s->plane = small_int(json_array_get(json_object_get(rec, "endpoints"), 0), "plane", 1023);
		if (s->plane < 0)
			s->plane = 0;
		report_lane(s->rail, s->plane, s->lane, sizeof(s->lane));
		s->lane_order = s->rail * 1024 + s->plane;
	} else {
		snprintf(s->lane, sizeof(s->lane), "%s", g);
		s->lane_order = !strcmp(g, "all") ? -1 : INT_MAX - 1;
	}
}

/* into a running mean of n values; NAN is no value */
static void mean_in(double *m, double v, int n)
{
	if (isnan(*m) || !n)
		*m = v;
	else if (!isnan(v))
		*m = (*m * n + v) / (n + 1);
}

static void pt_add(struct coll_series *s, json_t *rec, double size)
{
	double w = record_num(rec, "metrics.wrong", -1), v;
	long long wrong = w >= 0 && w < 1e18 ? (long long)w : -1;
	struct coll_pt *p = NULL;
	int i;

	for (i = 0; i < s->npt && !p; i++)
		if (s->pt[i].size == size)
			p = &s->pt[i];
	if (!p) {
		s->pt = realloc(s->pt, (size_t)(s->npt + 1) * sizeof(*s->pt));
		for (i = s->npt++; i > 0 && s->pt[i - 1].size > size; i--)
			s->pt[i] = s->pt[i - 1];
		p = &s->pt[i];
		*p = (struct coll_pt){ .size = size, .count = NAN, .time = NAN, .tmin = NAN, .tmax = NAN,
				       .algbw = NAN, .busbw = NAN, .wrong = -1 };
	}
	mean_in(&p->count, record_num(rec, "count", NAN), p->n);
	mean_in(&p->time, record_num(rec, "metrics.time_us", NAN), p->n);
	mean_in(&p->algbw, record_num(rec, "metrics.algbw_gbps", NAN), p->n);
	mean_in(&p->busbw, record_num(rec, "metrics.busbw_gbps", NAN), p->n);
	v = record_num(rec, "metrics.time_us_min", NAN);
	if (!(v >= p->tmin))
		p->tmin = isnan(v) ? p->tmin : v;
	v = record_num(rec, "metrics.time_us_max", NAN);
	if (!(v <= p->tmax))
		p->tmax = isnan(v) ? p->tmax : v;
	if (wrong >= 0)
		p->wrong = (p->wrong < 0 ? 0 : p->wrong) + wrong;
	p->n++;
}

static int series_cmp(const void *a, const void *b)
{
	const struct coll_series *x = a, *y = b;

	if (x->coll != y->coll)
		return x->coll - y->coll;
	if (x->run != y->run)
		return x->run - y->run;
	if (x->phase != y->phase)
		return x->phase - y->phase;
	if (x->lane_order != y->lane_order)
		return x->lane_order < y->lane_order ? -1 : 1;
	return strcmp(x->lane, y->lane);
}

static void coll_add(struct coll_set *cs, int ri, json_t *rec)
{
	struct coll_key k = { record_str(rec, "test", ""), record_str(rec, "algo", "-"),
			      record_str(rec, "transport", "-") };
	const char *phase = record_str(rec, "phase", "(standalone)");
	double size = record_num(rec, "msg_size_bytes", NAN);
	struct coll_series t = { .run = ri }, *s = NULL;
	int i;

	if (!(size >= 0 && size < 1e18))
		return;
	for (t.coll = 0; t.coll < cs->nkey; t.coll++)
		if (!strcmp(cs->key[t.coll].test, k.test) && !strcmp(cs->key[t.coll].algo, k.algo) &&
		    !strcmp(cs->key[t.coll].transport, k.transport))
			break;
	if (t.coll == cs->nkey) {
		cs->key = realloc(cs->key, (size_t)(cs->nkey + 1) * sizeof(*cs->key));
		cs->key[cs->nkey++] = k;
	}
	for (t.phase = 0; t.phase < cs->nphase && strcmp(cs->phase[t.phase], phase); t.phase++)
		;
	if (t.phase == cs->nphase) {
		cs->phase = realloc(cs->phase, (size_t)(cs->nphase + 1) * sizeof(*cs->phase));
		cs->phase[cs->nphase++] = phase;
	}
	rec_lane(rec, &t);
	for (i = 0; i < cs->n && !s; i++)
		if (cs->s[i].run == ri && cs->s[i].coll == t.coll && cs->s[i].phase == t.phase &&
		    !strcmp(cs->s[i].lane, t.lane))
			s = &cs->s[i];
	if (!s) {
		cs->s = realloc(cs->s, (size_t)(cs->n + 1) * sizeof(*cs->s));
		s = &cs->s[cs->n++];
		*s = t;
		s->first = rec;
		s->ranks = small_int(rec, "ranks", INT_MAX);
		if (s->ranks < 0)
			s->ranks = (int)json_array_size(json_object_get(rec, "endpoints"));
	}
	pt_add(s, rec, size);
}

/* the collectives of runs[0..nruns), sorted: by collective, run, phase, lane */
static void coll_build(const struct rrun *runs, int nruns, struct coll_set *cs)
{
	json_t *rec;
	size_t k;
	int ri;

	memset(cs, 0, sizeof(*cs));
	for (ri = 0; ri < nruns; ri++)
		json_array_foreach(runs[ri].records, k, rec)
			if (is_coll(record_str(rec, "test", "")) && !strcmp(record_str(rec, "status", "ok"), "ok"))
				coll_add(cs, ri, rec);
	if (cs->n > 1)
		qsort(cs->s, (size_t)cs->n, sizeof(*cs->s), series_cmp);
}

static void coll_free(struct coll_set *cs)
{
	int i;

	for (i = 0; i < cs->n; i++)
		free(cs->s[i].pt);
	free(cs->s);
	free(cs->key);
	free(cs->phase);
	memset(cs, 0, sizeof(*cs));
}

/* a multi-rail sum whose rails are there too: they, not it, say what was wrong */
static int rails_there(const struct coll_set *cs, const struct coll_series *s)
{
	int i;

	for (i = 0; s->sum && i < cs->n; i++)
		if (!cs->s[i].sum && cs->s[i].run == s->run && cs->s[i].coll == s->coll && cs->s[i].phase == s->phase)
			return 1;
	return 0;
}

static const struct coll_pt *pt_at(const struct coll_series *s, double size)
{
	int i;

	for (i = 0; i < s->npt; i++)
		if (s->pt[i].size == size)
			return &s->pt[i];
	return NULL;
}

/* series of run ri, collective c, phase ph, lane; NULL when none */
static const struct coll_series *series_of(const struct coll_set *cs, int ri, int c, int ph, const char *lane)
{
	int i;

	for (i = 0; i < cs->n; i++)
		if (cs->s[i].run == ri && cs->s[i].coll == c && cs->s[i].phase == ph && !strcmp(cs->s[i].lane, lane))
			return &cs->s[i];
	return NULL;
}

/* ---- words and numbers ---- */

/* "phase coll, rail 1", or "rail 1" for records not from a plan's phase */
static void lane_name(const struct coll_set *cs, int phase, const char *lane, char *buf, size_t len)
{
	const char *ph = cs->phase[phase];

	if (!strcmp(ph, "(standalone)"))
		snprintf(buf, len, "%s", lane);
	else
		snprintf(buf, len, "phase %.60s, %s", ph, lane);
}

/* "lb=ecmp: allreduce ring, phase coll, rail 1": what a check names */
static void series_name(const struct report *rep, const struct coll_set *cs, const struct coll_series *s,
			char *buf, size_t len)
{
	char ln[128];

	lane_name(cs, s->phase, s->lane, ln, sizeof(ln));
	snprintf(buf, len, "%.100s%s%s %.32s, %s", rep->nruns > 1 ? rep->runs[s->run].name : "",
		 rep->nruns > 1 ? ": " : "", cs->key[s->coll].test, cs->key[s->coll].algo, ln);
}

/* the distinct node names of a record's endpoints, comma-separated */
static void nodes_of(json_t *rec, char *buf, size_t len)
{
	json_t *e, *f;
	size_t i, j, n = 0, shown = 0;

	buf[0] = 0;
	json_array_foreach(json_object_get(rec, "endpoints"), i, e) {
		const char *node = record_str(e, "node", NULL);
		int seen = 0;

		if (!node)
			continue;
		json_array_foreach(json_object_get(rec, "endpoints"), j, f) {
			if (j >= i)
				break;
			seen |= !strcmp(record_str(f, "node", ""), node);
		}
		if (seen || n >= len)
			continue;
		if (shown++ == 8) {
			n += (size_t)snprintf(buf + n, len - n, ", ...");
			break;
		}
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", node);
	}
	if (!buf[0])
		snprintf(buf, len, "?");
}

static void size_str(double size, char *buf, size_t len)
{
	units_format_size((uint64_t)size, buf, len);
}

/* Gb/s: 4 significant digits, whole above 10000 */
static void gbps(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else if (fabs(v) >= 1e4)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.4g", v);
}

/* v with prec decimals, or n/a */
static void num(double v, int prec, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.*f", prec, v);
}

/* ---- Markdown and HTML: one walk, two spellings ---- */

struct cout {
	FILE *f;
	int html;
};

static void out_text(const struct cout *o, const char *s)
{
	if (o->html)
		report_html_escape(o->f, s);
	else
		report_md_cell(o->f, s);
}

static void out_heading(const struct cout *o, int level, const char *text)
{
	if (o->html) {
		fprintf(o->f, "<h%d>", level);
		out_text(o, text);
		fprintf(o->f, "</h%d>\n", level);
	} else {
		fprintf(o->f, "%.*s ", level, "######");
		out_text(o, text);
		fputs("\n\n", o->f);
	}
}

/* a paragraph: lead in bold (none when ""), then text */
static void out_para(const struct cout *o, const char *lead, const char *text, int note)
{
	fputs(o->html ? (note ? "<p class=\"note\">" : "<p>") : "", o->f);
	if (lead[0]) {
		fputs(o->html ? "<b>" : "**", o->f);
		out_text(o, lead);
		fputs(o->html ? "</b>" : "**", o->f);
	}
	out_text(o, text);
	fputs(o->html ? "</p>\n" : "\n\n", o->f);
}

static void out_item(const struct cout *o, const char *lead, const char *text)
{
	fputs(o->html ? "<li>" : "- ", o->f);
	if (lead[0]) {
		fputs(o->html ? "<b>" : "**", o->f);
		out_text(o, lead);
		fputs(o->html ? "</b>: " : "**: ", o->f);
	}
	out_text(o, text);
	fputs(o->html ? "</li>\n" : "\n", o->f);
}

static void out_list(const struct cout *o, int end)
{
	if (o->html)
		fputs(end ? "</ul>\n" : "<ul>\n", o->f);
	else if (end)
		fputc('\n', o->f);
}

static void out_head(const struct cout *o, char (*head)[COLL_CELL], int ncol)
{
	int c;

	fputs(o->html ? "<table><tr>" : "|", o->f);
	for (c = 0; c < ncol; c++) {
		fputs(o->html ? "<th>" : " ", o->f);
		out_text(o, head[c]);
		fputs(o->html ? "</th>" : " |", o->f);
	}
	if (o->html) {
		fputs("</tr>\n", o->f);
		return;
	}
	fputs("\n|", o->f);
	for (c = 0; c < ncol; c++)
		fputs("---|", o->f);
	fputc('\n', o->f);
}

/* a row; fail[c]: the cell shows a failure (bold in Markdown); cells from column num on are numbers */
static void out_row(const struct cout *o, char (*cell)[COLL_CELL], const int *fail, int ncol, int num)
{
	int c;

	fputs(o->html ? "<tr>" : "|", o->f);
	for (c = 0; c < ncol; c++) {
		if (o->html)
			fputs(fail[c] ? "<td class=\"fail\">" : c >= num ? "<td class=\"num\">" : "<td>", o->f);
		else
			fputs(fail[c] ? " **" : " ", o->f);
		out_text(o, cell[c]);
		if (o->html)
			fputs("</td>", o->f);
		else
			fputs(fail[c] ? "** |" : " |", o->f);
	}
	fputs(o->html ? "</tr>\n" : "\n", o->f);
}

static void out_table_end(const struct cout *o)
{
	fputs(o->html ? "</table>\n" : "\n", o->f);
}

/* one lane's table, nccl-tests' columns */
static void lane_table(const struct report *rep, const struct coll_set *cs, const struct coll_series *s,
		       const struct cout *o)
{
	static const char *const head[6] = { "size (B)", "count", "time (us)", "algbw (Gb/s)", "busbw (Gb/s)", "#wrong" };
	char cell[6][COLL_CELL], ln[128], lead[300], text[600], nodes[400];
	int fail[6], i, c;

	lane_name(cs, s->phase, s->lane, ln, sizeof(ln));
	snprintf(lead, sizeof(lead), "%.100s%s%s", rep->nruns > 1 ? rep->runs[s->run].name : "",
		 rep->nruns > 1 ? ", " : "", ln);
	nodes_of(s->first, nodes, sizeof(nodes));
	if (s->ranks > 0)
		snprintf(text, sizeof(text), ": %s%d rank%s on %s%s", s->sum ? "the rails added up, " : "", s->ranks,
			 s->ranks == 1 ? "" : "s", nodes, s->sum ? "; time: the slowest rail's" : "");
	else
		snprintf(text, sizeof(text), ": %sranks unknown", s->sum ? "the rails added up, " : "");
	out_para(o, lead, text, 0);
	for (c = 0; c < 6; c++)
		snprintf(cell[c], COLL_CELL, "%s", head[c]);
	out_head(o, cell, 6);
	for (i = 0; i < s->npt; i++) {
		const struct coll_pt *p = &s->pt[i];

		snprintf(cell[0], COLL_CELL, "%.0f", p->size);
		num(p->count, 0, cell[1], COLL_CELL);
		num(p->time, 1, cell[2], COLL_CELL);
		gbps(p->algbw, cell[3], COLL_CELL);
		gbps(p->busbw, cell[4], COLL_CELL);
		if (p->wrong < 0)
			snprintf(cell[5], COLL_CELL, "n/a");
		else
			snprintf(cell[5], COLL_CELL, "%lld", p->wrong);
		memset(fail, 0, sizeof(fail));
		fail[5] = p->wrong > 0;
		out_row(o, cell, fail, 6, 0);
	}
	out_table_end(o);
}

struct lane_key {
	int phase;
	const char *lane;
	int order, runs;
};

/* the (phase, lane)s of collective c that two runs or more have, in order */
static int compared_lanes(const struct report *rep, const struct coll_set *cs, int c, struct lane_key **out)
{
	struct lane_key *v = NULL;
	int n = 0, i, j, a, b;

	for (i = 0; i < cs->n; i++) {
		const struct coll_series *s = &cs->s[i];

		if (s->coll != c)
			continue;
		for (j = 0; j < n; j++)
			if (v[j].phase == s->phase && !strcmp(v[j].lane, s->lane))
				break;
		if (j < n)
			continue;
		v = realloc(v, (size_t)(n + 1) * sizeof(*v));
		v[n] = (struct lane_key){ .phase = s->phase, .lane = s->lane, .order = s->lane_order };
		for (a = 0; a < rep->nruns; a++)
			v[n].runs += series_of(cs, a, c, s->phase, s->lane) != NULL;
		if (v[n].runs >= 2)
			n++;
	}
	for (a = 1; a < n; a++)	/* by phase, then lane */
		for (b = a; b > 0 && (v[b - 1].phase > v[b].phase ||
				      (v[b - 1].phase == v[b].phase && v[b - 1].order > v[b].order)); b--) {
			struct lane_key t = v[b];

			v[b] = v[b - 1];
			v[b - 1] = t;
		}
	*out = v;
	return n;
}

/* the sizes any run measured on a lane, in order; the caller frees */
static int lane_sizes(const struct report *rep, const struct coll_set *cs, int c, const struct lane_key *k,
		      double **out)
{
	double *v = NULL;
	int n = 0, ri, i, j;

	for (ri = 0; ri < rep->nruns; ri++) {
		const struct coll_series *s = series_of(cs, ri, c, k->phase, k->lane);

		for (i = 0; s && i < s->npt; i++) {
			for (j = 0; j < n && v[j] != s->pt[i].size; j++)
				;
			if (j < n)
				continue;
			v = realloc(v, (size_t)(n + 1) * sizeof(*v));
			for (j = n++; j > 0 && v[j - 1] > s->pt[i].size; j--)
				v[j] = v[j - 1];
			v[j] = s->pt[i].size;
		}
	}
	*out = v;
	return n;
}

static double busbw_at(const struct coll_set *cs, int ri, int c, const struct lane_key *k, double size)
{
	const struct coll_series *s = series_of(cs, ri, c, k->phase, k->lane);
	const struct coll_pt *p = s ? pt_at(s, size) : NULL;

	return p ? p->busbw : NAN;
}

/* with several runs: busbw side by side per size, the ratio to the first run, and the best at the largest size */
static void compare_runs(const struct report *rep, const struct coll_set *cs, int c, const struct cout *o)
{
	struct lane_key *keys;
	int nk = compared_lanes(rep, cs, c, &keys), ncol = 3 + 2 * rep->nruns - 1, k, i, ri;
	char (*cell)[COLL_CELL], text[1024], lead[200], b1[32], b2[32];
	int *fail;

	if (!nk) {
		free(keys);
		return;
	}
	cell = calloc((size_t)ncol, sizeof(*cell));
	fail = calloc((size_t)ncol, sizeof(*fail));
	snprintf(text, sizeof(text), " (Gb/s), and the ratio to %.200s", rep->runs[0].name);
	out_para(o, "busbw by run", text, 0);
	snprintf(cell[0], COLL_CELL, "phase");
	snprintf(cell[1], COLL_CELL, "lane");
	snprintf(cell[2], COLL_CELL, "size (B)");
	for (ri = 0; ri < rep->nruns; ri++)
		snprintf(cell[3 + ri], COLL_CELL, "%.250s", rep->runs[ri].name);
	for (ri = 1; ri < rep->nruns; ri++)
		snprintf(cell[2 + rep->nruns + ri], COLL_CELL, "%.150s / %.150s", rep->runs[ri].name, rep->runs[0].name);
	out_head(o, cell, ncol);
	for (k = 0; k < nk; k++) {
		double *sizes;
		int ns = lane_sizes(rep, cs, c, &keys[k], &sizes);

		for (i = 0; i < ns; i++) {
			double first = busbw_at(cs, 0, c, &keys[k], sizes[i]);

			snprintf(cell[0], COLL_CELL, "%s", cs->phase[keys[k].phase]);
			snprintf(cell[1], COLL_CELL, "%s", keys[k].lane);
			snprintf(cell[2], COLL_CELL, "%.0f", sizes[i]);
			for (ri = 0; ri < rep->nruns; ri++) {
				double v = busbw_at(cs, ri, c, &keys[k], sizes[i]);

				if (isnan(v))
					snprintf(cell[3 + ri], COLL_CELL, "-");
				else
					gbps(v, cell[3 + ri], COLL_CELL);
				if (ri && !isnan(v) && first > 0)
					snprintf(cell[2 + rep->nruns + ri], COLL_CELL, "%.2f", v / first);
				else if (ri)
					snprintf(cell[2 + rep->nruns + ri], COLL_CELL, "-");
			}
			out_row(o, cell, fail, ncol, 2);
		}
		free(sizes);
	}
	out_table_end(o);
	out_list(o, 0);
	for (k = 0; k < nk; k++) {	/* the best run at the largest size two runs or more measured */
		double *sizes, size = NAN, best = NAN, v;
		int ns = lane_sizes(rep, cs, c, &keys[k], &sizes), b = -1, have, alike = 1;
		size_t len;

		for (i = ns - 1; i >= 0 && isnan(size); i--) {
			for (ri = 0, have = 0; ri < rep->nruns; ri++)
				have += !isnan(busbw_at(cs, ri, c, &keys[k], sizes[i]));
			if (have >= 2)
				size = sizes[i];
		}
		free(sizes);
		if (isnan(size))
			continue;
		for (ri = 0; ri < rep->nruns; ri++) {
			v = busbw_at(cs, ri, c, &keys[k], size);
			if (isnan(v))
				continue;
			if (b >= 0 && v != best)
				alike = 0;
			if (b < 0 || v > best) {
				best = v;
				b = ri;
			}
		}
		lane_name(cs, keys[k].phase, keys[k].lane, lead, sizeof(lead));
		size_str(size, b1, sizeof(b1));
		gbps(best, b2, sizeof(b2));
		if (alike) {
			snprintf(text, sizeof(text), "at %s, the same busbw in every run (%s Gb/s)", b1, b2);
		} else {
			len = (size_t)snprintf(text, sizeof(text), "at %s, %.200s is best with %s Gb/s busbw", b1,
					       rep->runs[b].name, b2);
			for (ri = 0; ri < rep->nruns && len < sizeof(text); ri++) {
				v = busbw_at(cs, ri, c, &keys[k], size);
				if (ri == b || isnan(v))
					continue;
				gbps(v, b2, sizeof(b2));
				len += (size_t)snprintf(text + len, sizeof(text) - len, "; %.200s %s (%.2f x)",
							rep->runs[ri].name, b2, best > 0 ? v / best : NAN);
			}
		}
		out_item(o, lead, text);
	}
	out_list(o, 1);
	free(cell);
	free(fail);
	free(keys);
}

static void coll_render(const struct report *rep, const struct cout *o)
{
	struct coll_set cs;
	char buf[300], text[1400];
	int c, i, ar = 0, a2a = 0, wrong = 0;
	size_t len;

	coll_build(rep->runs, rep->nruns, &cs);
	if (!cs.n) {
		coll_free(&cs);
		return;
	}
	out_heading(o, 2, "Collectives");
	for (c = 0; c < cs.nkey; c++) {
		ar |= !strcmp(cs.key[c].test, "allreduce");
		a2a |= !strcmp(cs.key[c].test, "alltoall");
		snprintf(buf, sizeof(buf), "%.40s, %.60s, %.60s", cs.key[c].test, cs.key[c].algo, cs.key[c].transport);
		out_heading(o, 3, buf);
		for (i = 0; i < cs.n; i++)
			if (cs.s[i].coll == c)
				lane_table(rep, &cs, &cs.s[i], o);
		if (rep->nruns > 1)
			compare_runs(rep, &cs, c, o);
	}
	len = (size_t)snprintf(text, sizeof(text), "Time: per operation, the mean over the ranks. algbw = size / time. busbw = algbw x ");
	if (ar)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "2(n-1)/n for allreduce%s", a2a ? ", x " : "");
	if (a2a)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "(n-1)/n for alltoall");
	snprintf(text + len, sizeof(text) - len, " (n ranks in the lane): the rate each rank's link carries, "
		 "comparable with the link rate whatever n. On hierarchical fabrics (several ranks per node, rails, "
		 "oversubscribed spines) it misleads: the ring crosses the slowest tier, and busbw says what a flat "
		 "ring would carry, not what that tier limits a job to; compare it per rail and with the pairwise bw "
		 "of the same links. Gb/s are 10^9 bit/s (nccl-tests prints GB/s: 8 times less). #wrong: elements "
		 "unlike the expected result (n/a: not checked).");
	out_para(o, "", text, 1);
	for (i = 0; i < cs.n; i++) {	/* every lane that returned wrong data */
		const struct coll_series *s = &cs.s[i];
		char sizes[400] = "", sz[32];
		long long n = 0;
		int j, k = 0;

		if (rails_there(&cs, s))
			continue;
		for (j = 0; j < s->npt; j++)
			if (s->pt[j].wrong > 0) {
				n += s->pt[j].wrong;
				size_str(s->pt[j].size, sz, sizeof(sz));
				if (k++ < 12)
					snprintf(sizes + strlen(sizes), sizeof(sizes) - strlen(sizes), "%s%s", k > 1 ? ", " : "", sz);
				else if (k == 13)
					snprintf(sizes + strlen(sizes), sizeof(sizes) - strlen(sizes), ", ...");
			}
		if (!n)
			continue;
		if (!wrong++)
			out_list(o, 0);
		series_name(rep, &cs, s, buf, sizeof(buf));
		snprintf(text, sizeof(text), "%s: %lld wrong element%s at %s (a rank, its NIC or the fabric corrupted data)",
			 buf, n, n == 1 ? "" : "s", sizes);
		out_item(o, "Wrong data", text);
	}
	if (wrong)
		out_list(o, 1);
	coll_free(&cs);
}

void report_md_coll(const struct report *rep, FILE *f)
{
	struct cout o = { f, 0 };

	coll_render(rep, &o);
}

void report_html_coll(const struct report *rep, FILE *f)
{
	struct cout o = { f, 1 };

	coll_render(rep, &o);
}

/* ---- JSON ---- */

static json_t *jnum(double v)
{
	if (isnan(v))
		return json_null();
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_integer((json_int_t)v);
	return json_real(v);
}

json_t *report_coll_json(const struct rrun *r)
{
	struct coll_set cs;
	json_t *a;
	int i, j;

	coll_build(r, 1, &cs);
	if (!cs.n) {
		coll_free(&cs);
		return NULL;
	}
	a = json_array();
	for (i = 0; i < cs.n; i++) {
		const struct coll_series *s = &cs.s[i];
		json_t *sizes = json_array(), *nodes = json_array(), *e;
		size_t k;

		json_array_foreach(json_object_get(s->first, "endpoints"), k, e) {
			const char *node = record_str(e, "node", NULL);
			json_t *n;
			size_t m;
			int seen = 0;

			json_array_foreach(nodes, m, n)
				seen |= node && !strcmp(json_string_value(n), node);
			if (node && !seen)
				json_array_append_new(nodes, json_string(node));
		}
		for (j = 0; j < s->npt; j++) {
			const struct coll_pt *p = &s->pt[j];

			json_array_append_new(sizes, json_pack("{so,so,so,so,so,so,so,sI}", "size_bytes", jnum(p->size),
				"count", jnum(p->count), "time_us", jnum(p->time), "time_us_min", jnum(p->tmin),
				"time_us_max", jnum(p->tmax), "algbw_gbps", jnum(p->algbw), "busbw_gbps", jnum(p->busbw),
				"wrong", (json_int_t)p->wrong));
		}
		json_array_append_new(a, json_pack("{ss,ss,ss,ss,ss,so,so,si,so,so}", "test", cs.key[s->coll].test,
			"algo", cs.key[s->coll].algo, "transport", cs.key[s->coll].transport, "phase", cs.phase[s->phase],
			"lane", s->lane, "rail", s->rail >= 0 ? json_integer(s->rail) : json_null(),
			"plane", s->rail >= 0 ? json_integer(s->plane) : json_null(), "ranks", s->ranks,
			"nodes", nodes, "sizes", sizes));
	}
	coll_free(&cs);
	return a;
}

/* ---- Prometheus text exposition ---- */

void report_coll_exposition(const struct report *rep, struct report_buf *b)
{
	static const char *const fam[4] = { "fabscope_coll_busbw_gbps", "fabscope_coll_algbw_gbps",
					    "fabscope_coll_time_us", "fabscope_coll_wrong" };
	static const char *const help[4] = {
		"bus bandwidth of a collective per lane and size, 10^9 bit/s (algbw x 2(n-1)/n for allreduce, x (n-1)/n for alltoall)",
		"algorithm bandwidth of a collective per lane and size (size / time), 10^9 bit/s",
		"time per operation of a collective per lane and size, the mean over the ranks, microseconds",
		"wrong elements a collective returned on a lane, over its sizes (lanes whose data was checked)",
	};
	struct coll_set cs;
	int m, i, j;

	coll_build(rep->runs, rep->nruns, &cs);
	if (!cs.n) {
		coll_free(&cs);
		return;
	}
	for (m = 0; m < 4; m++) {
		report_bput(b, "# HELP %s %s\n# TYPE %s gauge\n", fam[m], help[m], fam[m]);
		for (i = 0; i < cs.n; i++) {
			const struct coll_series *s = &cs.s[i];
			char *run = push_label_value(rep->runs[s->run].name), *ph = push_label_value(cs.phase[s->phase]);
			char *test = push_label_value(cs.key[s->coll].test), *algo = push_label_value(cs.key[s->coll].algo);
			char *tr = push_label_value(cs.key[s->coll].transport), *lane = push_label_value(s->lane);
			char lbl[1024], rail[48] = "";
			long long wrong = -1;

			if (s->rail >= 0)
				snprintf(rail, sizeof(rail), ",rail=\"%d\",plane=\"%d\"", s->rail, s->plane);
			snprintf(lbl, sizeof(lbl), "run=\"%s\",phase=\"%s\",test=\"%s\",algo=\"%s\",transport=\"%s\",lane=\"%s\"%s",
				 run, ph, test, algo, tr, lane, rail);
			for (j = 0; j < s->npt; j++) {
				const struct coll_pt *p = &s->pt[j];
				double v = m == 0 ? p->busbw : m == 1 ? p->algbw : p->time;

				if (p->wrong >= 0)
					wrong = (wrong < 0 ? 0 : wrong) + p->wrong;
				if (m < 3 && !isnan(v))
					report_bput(b, "%s{%s,size=\"%.0f\"} %.6g\n", fam[m], lbl, p->size, v);
			}
			if (m == 3 && wrong >= 0)
				report_bput(b, "%s{%s} %lld\n", fam[m], lbl, wrong);
			free(run);
			free(ph);
			free(test);
			free(algo);
			free(tr);
			free(lane);
		}
	}
	coll_free(&cs);
}

/* ---- checks ---- */

static struct check *check_new(struct report *rep, const char *name)
{
	return report_check_new(&rep->checks, &rep->nchecks, name);
}

static void busbw_check(struct report *rep, const struct coll_set *cs, const char *test, double lim)
{
	char buf[300], sz[32];
	struct check *c;
	double worst = NAN;
	int i, unknown = 0;

	snprintf(buf, sizeof(buf), "%s busbw >= %.4g Gb/s, every lane at its largest size", test, lim);
	c = check_new(rep, buf);
	snprintf(c->limit, sizeof(c->limit), "%.4g Gb/s", lim);
	for (i = 0; i < cs->n; i++) {
		const struct coll_series *s = &cs->s[i];
		const struct coll_pt *p = &s->pt[s->npt - 1];

		if (s->sum || strcmp(cs->key[s->coll].test, test))
			continue;	/* the sum of rails is no lane's rate */
		if (isnan(p->busbw)) {
			unknown++;
			continue;
		}
		c->total++;
		if (!(p->busbw >= worst))
			worst = p->busbw;
		if (p->busbw < lim) {
			series_name(rep, cs, s, buf, sizeof(buf));
			size_str(p->size, sz, sizeof(sz));
			report_check_fail(c, "%s at %s (%.3g)", buf, sz, p->busbw);
		}
	}
	gbps(worst, sz, sizeof(sz));
	snprintf(c->worst, sizeof(c->worst), "%s%s", sz, isnan(worst) ? "" : " Gb/s");
	if (unknown)
		snprintf(c->worst + strlen(c->worst), sizeof(c->worst) - strlen(c->worst), " (%d unknown)", unknown);
	report_check_empty(c);
}

int report_coll_checks(struct report *rep, double allreduce_min, double alltoall_min)
{
	struct coll_set cs;
	struct check *c;
	char buf[300], sz[32];
	long long wrong = 0;
	int i, j, added = 0;

	coll_build(rep->runs, rep->nruns, &cs);
	if (cs.n) {
		c = check_new(rep, "collectives return the right data, every lane and size");
		snprintf(c->limit, sizeof(c->limit), "0 wrong");
		added++;
		for (i = 0; i < cs.n; i++) {
			const struct coll_series *s = &cs.s[i];

			if (rails_there(&cs, s))
				continue;
			for (j = 0; j < s->npt; j++) {
				const struct coll_pt *p = &s->pt[j];

				if (p->wrong < 0)
					continue;
				c->total++;
				wrong += p->wrong;
				if (p->wrong > 0) {
					series_name(rep, &cs, s, buf, sizeof(buf));
					size_str(p->size, sz, sizeof(sz));
					report_check_fail(c, "%s at %s (%lld wrong)", buf, sz, p->wrong);
				}
			}
		}
		if (c->total)
			snprintf(c->worst, sizeof(c->worst), "%lld wrong", wrong);
		else
			snprintf(c->worst, sizeof(c->worst), "not checked");
	}
	if (!isnan(allreduce_min)) {
		busbw_check(rep, &cs, "allreduce", allreduce_min);
		added++;
	}
	if (!isnan(alltoall_min)) {
		busbw_check(rep, &cs, "alltoall", alltoall_min);
		added++;
	}
	coll_free(&cs);
	return added;
}

/* the series of base with s's collective, phase and lane (by name: the sets differ), or NULL */
static const struct coll_series *base_series(const struct coll_set *cs, const struct coll_series *s,
					     const struct coll_set *base)
{
	const struct coll_key *k = &cs->key[s->coll];
	int i;

	for (i = 0; i < base->n; i++) {
		const struct coll_series *b = &base->s[i];
		const struct coll_key *bk = &base->key[b->coll];

		if (!strcmp(bk->test, k->test) && !strcmp(bk->algo, k->algo) &&
		    !strcmp(bk->transport, k->transport) && !strcmp(base->phase[b->phase], cs->phase[s->phase]) &&
		    !strcmp(b->lane, s->lane))
			return b;
	}
	return NULL;
}

void report_coll_baseline(struct report *rep)
{
	struct coll_set cs, base;
	int i, j;

	coll_build(rep->runs, rep->nruns, &cs);
	coll_build(&rep->base, 1, &base);
	for (i = 0; i < cs.n; i++) {
		const struct coll_series *s = &cs.s[i], *b;
		double now = 0, was = 0, worst = INFINITY, worst_size = 0, delta;
		char name[300], sz[32];
		struct check *c;
		int n = 0;

		if (rails_there(&cs, s) || !(b = base_series(&cs, s, &base)))
			continue;	/* the sum of rails: its rails say it */
		/* nccl-tests' footer, the mean busbw, over the sizes both runs measured */
		for (j = 0; j < s->npt; j++) {
			const struct coll_pt *p = &s->pt[j], *q = pt_at(b, p->size);

			if (!q || !(p->busbw >= 0) || !(q->busbw > 0))
				continue;
			now += p->busbw;
			was += q->busbw;
			n++;
			if (p->busbw / q->busbw < worst) {
				worst = p->busbw / q->busbw;
				worst_size = p->size;
			}
		}
		if (!n)
			continue;
		now /= n;
		was /= n;
		series_name(rep, &cs, s, name, sizeof(name));
		snprintf(name + strlen(name), sizeof(name) - strlen(name), " mean busbw over %d size%s", n,
			 n > 1 ? "s" : "");
		c = report_check_new(&rep->regs, &rep->nregs, name);
		delta = (now - was) / was;
		snprintf(c->limit, sizeof(c->limit), "%.4g Gb/s", was);
		snprintf(c->worst, sizeof(c->worst), "%.4g Gb/s (%+.1f%%)", now, 100 * delta);
		c->total = 1;
		if (delta < -rep->tolerance) {
			size_str(worst_size, sz, sizeof(sz));
			report_check_fail(c, "down by %.1f%% (tolerance %.0f%%), most at %s (%+.1f%%)", 100 * -delta,
					  100 * rep->tolerance, sz, 100 * (worst - 1));
		}
	}
	coll_free(&base);
	coll_free(&cs);
}

/* ---- plots ---- */

static void file_safe(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < len; i++)
		out[i] = (strchr("-_.", in[i]) || (in[i] >= 'a' && in[i] <= 'z') || (in[i] >= 'A' && in[i] <= 'Z') ||
			  (in[i] >= '0' && in[i] <= '9')) ? in[i] : '_';
	out[i] = 0;
}

/* the plot of collective c: pairs of columns "SIZE BUSBW" per lane and run, a header row of names */
static int coll_plot(struct report *rep, const struct coll_set *cs, int c, const char *dir, const char *tdir)
{
	const struct coll_series *line[COLL_PLOT_LINES];
	char stem[200], a[64], b[64], t[64], path[PATH_MAX], svg[PATH_MAX], vars[3 * PATH_MAX], title[300], tq[300];
	char dts[4 * COLL_PLOT_LINES + 1] = "", lcs[4 * COLL_PLOT_LINES + 1] = "";
	int n = 0, more = 0, rows = 0, i, j, k, phases = 0, colour[COLL_PLOT_LINES], ncolour = 0;
	FILE *f;

	for (i = 0; i < cs->n; i++) {
		for (j = 0; j < cs->s[i].npt && isnan(cs->s[i].pt[j].busbw); j++)
			;
		if (cs->s[i].coll != c || cs->s[i].sum || j == cs->s[i].npt)
			continue;	/* the sum of rails is no lane; a line needs a point */
		if (n == COLL_PLOT_LINES) {
			more++;
			continue;
		}
		line[n++] = &cs->s[i];
		if (cs->s[i].npt > rows)
			rows = cs->s[i].npt;
		phases |= cs->s[i].phase != line[0]->phase;
	}
	if (!n)
		return 0;
	file_safe(cs->key[c].test, t, sizeof(t));
	file_safe(cs->key[c].algo, a, sizeof(a));
	file_safe(cs->key[c].transport, b, sizeof(b));
	snprintf(stem, sizeof(stem), "coll-%s-%s-%s", t, a, b);
	snprintf(path, sizeof(path), "%s/%s.dat", dir, stem);
	f = fopen(path, "w");
	if (!f) {
		snprintf(rep->plots_note, sizeof(rep->plots_note), "some plots are missing: cannot write %.200s: %s",
			 path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		char name[400], *q;

		snprintf(name, sizeof(name), "%.100s%s%.60s%s%s", rep->nruns > 1 ? rep->runs[line[i]->run].name : "",
			 rep->nruns > 1 ? ", " : "", phases ? cs->phase[line[i]->phase] : "", phases ? " " : "",
			 line[i]->lane);
		report_gnuplot_quote(name, name, sizeof(name));
		for (q = name; *q; q++)
			if (*q == '"' || (unsigned char)*q < ' ')
				*q = '_';
		fprintf(f, "%s\"%s\" \"s%d\"", i ? " " : "", name, i);
		for (j = 0; j < i; j++)	/* a colour per lane, a dash per run */
			if (line[j]->phase == line[i]->phase && !strcmp(line[j]->lane, line[i]->lane))
				break;
		colour[i] = j < i ? colour[j] : ++ncolour;
		snprintf(dts + strlen(dts), sizeof(dts) - strlen(dts), "%s%d", i ? " " : "", line[i]->run % 5 + 1);
		snprintf(lcs + strlen(lcs), sizeof(lcs) - strlen(lcs), "%s%d", i ? " " : "", colour[i]);
	}
	fputc('\n', f);
	for (k = 0; k < rows; k++) {
		for (i = 0; i < n; i++)
			if (k < line[i]->npt && !isnan(line[i]->pt[k].busbw))
				fprintf(f, "%s%.0f %g", i ? " " : "", line[i]->pt[k].size, line[i]->pt[k].busbw);
			else
				fprintf(f, "%sNaN NaN", i ? " " : "");
		fputc('\n', f);
	}
	if (fclose(f)) {
		snprintf(rep->plots_note, sizeof(rep->plots_note), "some plots are missing: cannot write %.200s", path);
		return -1;
	}
	snprintf(title, sizeof(title), "%.40s (%.40s, %.40s): busbw against message size, per lane%s%s",
		 cs->key[c].test, cs->key[c].algo, cs->key[c].transport, rep->nruns > 1 ? " and run" : "",
		 more ? " (the first 16)" : "");
	report_gnuplot_quote(title, tq, sizeof(tq));
	snprintf(svg, sizeof(svg), "%s/%02d-%s.svg", dir, rep->nsvg + 1, stem);
	snprintf(vars, sizeof(vars), "datafile='%s'; outfile='%s'; title='%s'; nlines=%d; dts='%s'; lcs='%s'", path, svg,
		 tq, n, dts, lcs);
	{
		char why[300];

		if (report_gnuplot(tdir, "coll.gp", vars, svg, why, sizeof(why))) {
			snprintf(rep->plots_note, sizeof(rep->plots_note), "%s%.200s",
				 rep->nsvg ? "some plots are missing: " : "no plots: ", why);
			return -1;
		}
	}
	rep->svg = realloc(rep->svg, (size_t)(rep->nsvg + 1) * sizeof(*rep->svg));
	rep->svg_title = realloc(rep->svg_title, (size_t)(rep->nsvg + 1) * sizeof(*rep->svg_title));
	snprintf(path, sizeof(path), "%02d-%s.svg", rep->nsvg + 1, stem);
	rep->svg[rep->nsvg] = strdup(path);
	rep->svg_title[rep->nsvg] = strdup(title);
	rep->nsvg++;
	return 0;
}

int report_coll_plots(struct report *rep, const char *dir)
{
	struct coll_set cs;
	char tdir[PATH_MAX];
	int c, rc = 0;

	coll_build(rep->runs, rep->nruns, &cs);
	if (cs.n && report_find_templates(tdir, sizeof(tdir))) {
		snprintf(rep->plots_note, sizeof(rep->plots_note),
			 "some plots are missing: the gnuplot templates (plots/*.gp) were not found; set FABSCOPE_PLOTS");
		rc = -1;
	}
	for (c = 0; c < cs.nkey && !rc; c++)
		rc = coll_plot(rep, &cs, c, dir, tdir);
	coll_free(&cs);
	return rc;
}
