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
 *
 * The parts: coll.c the model (series of points per run, collective, phase
 * and lane, built from the records) and the words that name them;
 * coll-render.c the Markdown and HTML; coll-export.c the JSON summary and
 * the Prometheus text; coll-checks.c the checks and --baseline;
 * coll-plot.c the plots.  coll-int.h holds what they share.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/record.h"
#include "../core/units.h"
#include "coll-int.h"
#include "report.h"

/* ---- the model: series of points, per run, collective, phase and lane (coll-int.h) ---- */

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
		fs_lane_name(s->rail, s->plane, s->lane, sizeof(s->lane));
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

/* 0, or -1 out of memory */
static int pt_add(struct coll_series *s, json_t *rec, double size)
{
	double w = record_num(rec, "metrics.wrong", -1), v;
	long long wrong = w >= 0 && w < 1e18 ? (long long)w : -1;
	struct coll_pt *p = NULL;
	int i;

	for (i = 0; i < s->npt && !p; i++)
		if (s->pt[i].size == size)
			p = &s->pt[i];
	if (!p) {
		if (FS_ALLOC_GROW(s->pt, s->npt + 1, s->pt_alloc))
			return -1;
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
	return 0;
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

/* 0, or -1 out of memory */
static int coll_add(struct coll_set *cs, int ri, json_t *rec)
{
	struct coll_key k = { record_str(rec, "test", ""), record_str(rec, "algo", "-"),
			      record_str(rec, "transport", "-") };
	const char *phase = record_str(rec, "phase", "(standalone)");
	double size = record_num(rec, "msg_size_bytes", NAN);
	struct coll_series t = { .run = ri }, *s = NULL;
	int i;

	if (!(size >= 0 && size < 1e18))
		return 0;
	for (t.coll = 0; t.coll < cs->nkey; t.coll++)
		if (!strcmp(cs->key[t.coll].test, k.test) && !strcmp(cs->key[t.coll].algo, k.algo) &&
		    !strcmp(cs->key[t.coll].transport, k.transport))
			break;
	if (t.coll == cs->nkey) {
		if (FS_ALLOC_GROW(cs->key, cs->nkey + 1, cs->key_alloc))
			return -1;
		cs->key[cs->nkey++] = k;
	}
	for (t.phase = 0; t.phase < cs->nphase && strcmp(cs->phase[t.phase], phase); t.phase++)
		;
	if (t.phase == cs->nphase) {
		if (FS_ALLOC_GROW(cs->phase, cs->nphase + 1, cs->phase_alloc))
			return -1;
		cs->phase[cs->nphase++] = phase;
	}
	rec_lane(rec, &t);
	for (i = 0; i < cs->n && !s; i++)
		if (cs->s[i].run == ri && cs->s[i].coll == t.coll && cs->s[i].phase == t.phase &&
		    !strcmp(cs->s[i].lane, t.lane))
			s = &cs->s[i];
	if (!s) {
		if (FS_ALLOC_GROW(cs->s, cs->n + 1, cs->s_alloc))
			return -1;
		s = &cs->s[cs->n++];
		*s = t;
		s->first = rec;
		s->ranks = small_int(rec, "ranks", INT_MAX);
		if (s->ranks < 0)
			s->ranks = (int)json_array_size(json_object_get(rec, "endpoints"));
	}
	return pt_add(s, rec, size);
}

/* the collectives of runs[0..nruns), sorted: by collective, run, phase, lane */
int report_coll_build(const struct rrun *runs, int nruns, struct coll_set *cs)
{
	json_t *rec;
	size_t k;
	int ri;

	memset(cs, 0, sizeof(*cs));
	for (ri = 0; ri < nruns; ri++)
		json_array_foreach(runs[ri].st.kept, k, rec)
			if (is_coll(record_str(rec, "test", "")) && !strcmp(record_str(rec, "status", "ok"), "ok") &&
			    coll_add(cs, ri, rec)) {
				report_coll_release(cs);
				return fs_err_env("out of memory reading the collectives of %s", runs[ri].dir);
			}
	if (cs->n > 1)
		qsort(cs->s, (size_t)cs->n, sizeof(*cs->s), series_cmp);
	return 0;
}

void report_coll_release(struct coll_set *cs)
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
int rcoll_rails_there(const struct coll_set *cs, const struct coll_series *s)
{
	int i;

	for (i = 0; s->sum && i < cs->n; i++)
		if (!cs->s[i].sum && cs->s[i].run == s->run && cs->s[i].coll == s->coll && cs->s[i].phase == s->phase)
			return 1;
	return 0;
}

const struct coll_pt *rcoll_pt_at(const struct coll_series *s, double size)
{
	int i;

	for (i = 0; i < s->npt; i++)
		if (s->pt[i].size == size)
			return &s->pt[i];
	return NULL;
}

/* series of run ri, collective c, phase ph, lane; NULL when none */
const struct coll_series *rcoll_series_of(const struct coll_set *cs, int ri, int c, int ph, const char *lane)
{
	int i;

	for (i = 0; i < cs->n; i++)
		if (cs->s[i].run == ri && cs->s[i].coll == c && cs->s[i].phase == ph && !strcmp(cs->s[i].lane, lane))
			return &cs->s[i];
	return NULL;
}

/* ---- words and numbers ---- */

/* "phase coll, rail 1", or "rail 1" for records not from a plan's phase */
void rcoll_lane_name(const struct coll_set *cs, int phase, const char *lane, char *buf, size_t len)
{
	const char *ph = cs->phase[phase];

	if (!strcmp(ph, "(standalone)"))
		snprintf(buf, len, "%s", lane);
	else
		snprintf(buf, len, "phase %.60s, %s", ph, lane);
}

/* "lb=ecmp: allreduce ring, phase coll, rail 1": what a check names */
void rcoll_series_name(const struct report *rep, const struct coll_set *cs, const struct coll_series *s,
			char *buf, size_t len)
{
	char ln[128];

	rcoll_lane_name(cs, s->phase, s->lane, ln, sizeof(ln));
	snprintf(buf, len, "%.100s%s%s %.32s, %s", rep->nruns > 1 ? rep->runs[s->run].name : "",
		 rep->nruns > 1 ? ": " : "", cs->key[s->coll].test, cs->key[s->coll].algo, ln);
}

void rcoll_size_str(double size, char *buf, size_t len)
{
	units_format_size((uint64_t)size, buf, len);
}

/* Gb/s: 4 significant digits, whole above 10000 */
void rcoll_gbps(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else if (fabs(v) >= 1e4)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.4g", v);
}
