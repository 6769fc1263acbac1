/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report's verdict: PASS only when every measured thing was judged and
 * every check passed.
 *
 * The run's integrity is judged with or without a thresholds file
 * (report_integrity), each a row of the acceptance table:
 *
 *   every planned job ran   run.json's "planned" (each phase's jobs, from
 *                           the coordinator) against the lines of jobs.done;
 *                           a run of an older fabscope, without "planned",
 *                           by its status and its phases'; no run.json: not
 *                           judged
 *   no test failed          records whose status is not ok ([run] max_failed)
 *   no agent missing        run.json's nodes ([run] max_missing)
 *   no suspect confirmed    a suspect whose re-test confirmed it (retest.status
 *                           "confirmed", of any kind: a node, pair, lane, or a
 *                           probe's "polarized"; [suspects] max_confirmed); one
 *                           named from a single measurement is not confirmed:
 *                           said, not judged ([suspects] max_unconfirmed does)
 *   collectives' data       wrong elements (coll-checks.c)
 *   polarization            no probe polarized, each by its deciding record (a
 *                           sweep's, else its set's: records/polar.h, as the
 *                           run's summary says it); one without a verdict
 *                           leaves its phase not judged, unless [polarization]
 *                           inconclusive = fail fails it
 *   cabling                 the topology phases' ports against the design
 *
 * Every measured thing (struct rmeasured: a phase's bw or lat on a lane, a
 * phase's collective, probe, topology or other test) is marked by each
 * check that judged it (report_judged); what no check judged, or a check
 * that could not judge, makes the verdict INCOMPLETE, and the report says
 * what to give.  A failure anywhere (a check, the cabling, the baseline)
 * makes it FAIL.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/record.h"
#include "../records/polar.h"
#include "../records/result.h"
#include "render.h"
#include "report.h"

void report_judged(struct rrun *r, const char *phase, const char *test, int rail, int plane)
{
	int i;

	for (i = 0; i < r->nms; i++) {
		struct rmeasured *m = &r->ms[i];

		if ((!phase || !strcmp(m->phase, phase)) && (!test || !strcmp(m->test, test)) &&
		    (rail < 0 || (m->rail == rail && m->plane == plane)))
			m->judged++;
	}
}

/* a count or index of an untrusted record as an int: 0 when it is none */
static int as_int(double v)
{
	return v >= 0 && v <= 1e9 ? (int)v : 0;
}

/* "lb=ecmp: " when there are several runs */
static const char *prefix(const struct report *rep, const struct rrun *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", rep->nruns > 1 ? r->name : "", rep->nruns > 1 ? ": " : "");
	return buf;
}

/* ---- every planned job ran ---- */

/* a run of an older fabscope (no "planned"): its status and its phases'; 1 when it could tell */
static int jobs_by_status(const struct report *rep, const struct rrun *r, struct check *c)
{
	const char *st = record_str(r->run, "status", NULL);
	json_t *ph;
	size_t k;
	char pre[300];

	if (!st)
		return 0;
	c->total++;
	if (strcmp(st, "finished")) {
		report_check_fail(c, "%srun status '%s'", prefix(rep, r, pre, sizeof(pre)), st);
		return 1;
	}
	json_array_foreach(json_object_get(r->run, "phases"), k, ph)
		if (strcmp(record_str(ph, "status", "done"), "done"))
			report_check_fail(c, "%sphase %s %s", prefix(rep, r, pre, sizeof(pre)),
					  record_str(ph, "name", "?"), record_str(ph, "status", "?"));
	return 1;
}

static void jobs_check(struct report *rep)
{
	struct check *c = report_check_new(rep, "every planned job ran");
	long jobs = 0, ran = 0;
	int ri, i, old = 0, unknown = 0;
	char pre[300];

	snprintf(c->limit, sizeof(c->limit), "all");
	for (ri = 0; ri < rep->nruns; ri++) {
		struct rrun *r = &rep->runs[ri];
		const char *st = record_str(r->run, "status", "?");

		if (!r->planned && jobs_by_status(rep, r, c)) {
			old++;
		} else if (!r->planned || !r->jobs_done_read) {
			unknown++;	/* what was planned, or what of it ran, is not known */
			continue;
		}
		for (i = 0; i < r->nplanned; i++) {
			const struct rplanned *p = &r->planned[i];
			long done = p->skipped ? 0 : p->done < p->jobs ? p->done : p->jobs;

			jobs += p->jobs;
			ran += done;
			c->total += p->jobs > 0;
			if (done == p->jobs)
				continue;
			if (p->skipped)
				report_check_fail(c, "%s%s skipped (%ld jobs)", prefix(rep, r, pre, sizeof(pre)), p->name,
						  p->jobs);
			else
				report_check_fail(c, "%s%s: %ld of %ld jobs did not run (run %s)",
						  prefix(rep, r, pre, sizeof(pre)), p->name, p->jobs - done, p->jobs, st);
		}
		report_judged(r, NULL, "ping", -1, -1);	/* a ping is judged by its job: it answered */
	}
	if (jobs)
		snprintf(c->worst, sizeof(c->worst), "%ld of %ld ran", ran, jobs);
	else
		snprintf(c->worst, sizeof(c->worst), "%s", old ? "by the run's status" : "n/a");
	if (old && jobs)
		snprintf(c->worst + strlen(c->worst), sizeof(c->worst) - strlen(c->worst), "; %d by status", old);
	if (unknown && !c->failing) {
		/* nothing says what was planned: a run that stopped early would look whole */
		c->not_judged = 1;
		snprintf(c->who, sizeof(c->who), "%d run%s without run.json's planned jobs and jobs.done, or "
			 "its status: what was planned is not known", unknown, unknown == 1 ? "" : "s");
	}
}

/* A check of a count against its limit lim: "WHAT <= lim", or NONE where
 * lim is 0 and NONE is given; its limit as the table prints it */
static struct check *count_check(struct report *rep, double lim, const char *what, const char *none)
{
	char buf[128];
	struct check *c;

	if (lim > 0 || !none)
		snprintf(buf, sizeof(buf), "%s <= %.0f", what, lim);
	else
		snprintf(buf, sizeof(buf), "%s", none);
	c = report_check_new(rep, buf);
	snprintf(c->limit, sizeof(c->limit), "%.0f", lim);
	return c;
}

/* ---- failed tests, missing agents ---- */

static void failed_check(struct report *rep, double lim)
{
	char pre[300];
	struct check *c = count_check(rep, lim, "failed tests (records with status error)",
				      "no test failed (no record with status error)");
	int ri, worst = 0, failing = 0;
	json_t *rec;
	size_t k;

	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];

		c->total += r->nrec > r->nerr ? r->nrec : r->nerr;	/* "N of M": records */
		if (r->nerr > worst)
			worst = r->nerr;
		if (r->nerr <= lim)
			continue;
		json_array_foreach(r->st.failed, k, rec)	/* the first ones, named */
			report_check_fail(c, "%s%.80s: %.100s", prefix(rep, r, pre, sizeof(pre)),
					  record_str(rec, "job", record_str(rec, "test", "?")),
					  record_str(rec, "error", "error"));
		if (!json_array_size(r->st.failed))
			report_check_fail(c, "%s%d failed", prefix(rep, r, pre, sizeof(pre)), r->nerr);
		failing += r->nerr;
	}
	c->failing = failing;	/* every failed record, not only the ones named */
	snprintf(c->worst, sizeof(c->worst), "%d", worst);
}

static void missing_check(struct report *rep, double lim)
{
	char pre[300];
	struct check *c = count_check(rep, lim, "agents missing", "no agent missing");
	int ri, worst = 0, failing = 0;
	json_t *n;
	size_t k;

	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];

		size_t nn = json_array_size(json_object_get(r->run, "nodes"));

		/* (run.json is bounded: its nodes are far under INT_MAX) */
		c->total += nn > (size_t)r->missing ? (int)nn : r->missing;
		if (r->missing > worst)
			worst = r->missing;
		if (r->missing <= lim)
			continue;
		json_array_foreach(json_object_get(r->run, "nodes"), k, n)
			if (!strcmp(record_str(n, "status", "ok"), "missing"))
				report_check_fail(c, "%s%.60s (%.100s)", prefix(rep, r, pre, sizeof(pre)),
						  record_str(n, "name", "?"), record_str(n, "why", "?"));
		failing += r->missing;
	}
	c->failing = failing;	/* "N of M": nodes */
	snprintf(c->worst, sizeof(c->worst), "%d", worst);
}

/* ---- suspects ---- */

/* "node h4 rail 1 (pairwise-bw)", "pair h1-h3 rail 0 plane 1 (lat)" */
static void suspect_who(const struct report *rep, const struct rrun *r, json_t *s, struct check *c)
{
	char pre[300], lane[48];
	const char *peer = record_str(s, "peer", NULL);

	fs_lane_name(as_int(record_num(s, "rail", 0)), as_int(record_num(s, "plane", 0)), lane, sizeof(lane));
	report_check_fail(c, "%s%.20s %.60s%s%.60s %s (%.60s %.8s)", prefix(rep, r, pre, sizeof(pre)),
			  record_str(s, "kind", "?"), record_str(s, "node", "?"), peer ? "-" : "", peer ? peer : "",
			  lane, record_str(s, "phase", "?"), record_str(s, "test", ""));
}

static int confirmed(json_t *s)
{
	return !strcmp(record_str(s, "retest.status", ""), "confirmed");
}

static void suspects_check(struct report *rep, double lim, double lim_un)
{
	struct check *c = count_check(rep, lim, "suspects confirmed by a re-test", "no suspect confirmed by a re-test");
	struct check *u = isnan(lim_un) ? NULL : count_check(rep, lim_un, "suspects not confirmed by a re-test", NULL);
	int ri, conf = 0, unconf = 0;
	json_t *s;
	size_t k;

	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];
		int rc = 0, ru = 0;

		json_array_foreach(r->suspects, k, s)
			*(confirmed(s) ? &rc : &ru) += 1;
		c->total++;
		conf += rc;
		unconf += ru;
		if (rc > lim)
			json_array_foreach(r->suspects, k, s)
				if (confirmed(s))
					suspect_who(rep, r, s, c);
		if (u) {
			u->total++;
			if (ru > lim_un)
				json_array_foreach(r->suspects, k, s)
					if (!confirmed(s))
						suspect_who(rep, r, s, u);
		}
	}
	snprintf(c->worst, sizeof(c->worst), "%d confirmed, %d not", conf, unconf);
	if (u)
		snprintf(u->worst, sizeof(u->worst), "%d", unconf);
	if (unconf && c->pass)	/* named from one measurement: said, not judged */
		snprintf(c->who, sizeof(c->who), "%d suspect%s not confirmed (named from one measurement, or fast on "
			 "the re-test): not judged here, see Suspects", unconf, unconf == 1 ? "" : "s");
}

/* ---- polarization, cabling ---- */

/*
 * A probe's verdict is its deciding record's (records/polar.h: a sweep's
 * on its sets together, else its set's), as the run's summary says it.
 */
enum pv { PV_NOT, PV_POLARIZED, PV_INCONCLUSIVE, PV_UNKNOWN };

static enum pv polar_verdict(json_t *rec)
{
	const char *v = record_str(rec, "verdict", "");

	return !strcmp(v, "polarized") ? PV_POLARIZED : !strcmp(v, "not polarized") ? PV_NOT :
	       !strcmp(v, "inconclusive") ? PV_INCONCLUSIVE : PV_UNKNOWN;
}

/* "lb=same: spread h1 -> h3 rail 0" */
static const char *polar_name(const struct report *rep, const struct rrun *r, json_t *rec, char *buf, size_t len)
{
	char pre[300], who[300];
	const char *ph = record_str(rec, "phase", NULL);

	rpolar_who(rec, who, sizeof(who));
	snprintf(buf, len, "%s%.60s%s%s", prefix(rep, r, pre, sizeof(pre)), ph ? ph : "", ph ? " " : "", who);
	return buf;
}

#define POLAR_PHASES 64

/* the phases of r's probes, each once: bad when one of its probes is not judged */
struct polar_phases {
	const char *name[POLAR_PHASES];
	int bad[POLAR_PHASES], n;
};

static void polar_phase(struct polar_phases *p, json_t *rec, int bad)
{
	const char *ph = record_str(rec, "phase", RRES_STANDALONE);
	int i;

	for (i = 0; i < p->n && strcmp(p->name[i], ph); i++)
		;
	if (i == p->n && p->n == POLAR_PHASES)
		return;	/* (past 64 phases: not judged, said by the verdict) */
	if (i == p->n) {
		p->name[p->n] = ph;
		p->bad[p->n++] = 0;
	}
	p->bad[i] |= bad;
}

/* one probe of r: c judges its verdict, u (inconclusive = fail, or NULL) its lack of one */
static void polar_probe(const struct report *rep, const struct rrun *r, json_t *rec, struct check *c,
			struct check *u, struct polar_phases *ph, int *nov)
{
	enum pv v = polar_verdict(rec);
	char who[700];

	if (v == PV_POLARIZED || v == PV_NOT) {
		c->total++;
		if (u)
			u->total++;
		if (v == PV_POLARIZED && record_str(rec, "evidence", NULL))	/* what it stands on */
			report_check_fail(c, "%s (%.20s)", polar_name(rep, r, rec, who, sizeof(who)),
					  record_str(rec, "evidence", ""));
		else if (v == PV_POLARIZED)	/* (a record of an older probe: by its rates) */
			report_check_fail(c, "%s (%.3g of %.3g paths)", polar_name(rep, r, rec, who, sizeof(who)),
					  record_num(rec, "metrics.paths_used", NAN), record_num(rec, "params.paths", NAN));
		polar_phase(ph, rec, 0);
		return;
	}
	(*nov)++;
	if (v == PV_INCONCLUSIVE && u) {	/* judged: a failure */
		u->total++;
		report_check_fail(u, "%s: %.60s", polar_name(rep, r, rec, who, sizeof(who)),
				  record_str(rec, "likely_cause", record_str(rec, "verdict_reason", "?")));
		polar_phase(ph, rec, 0);
		return;
	}
	polar_phase(ph, rec, 1);	/* no verdict (or no number of paths): its phase not judged */
}

/*
 * "no polarized probe", always: a probe called polarized fails the run;
 * one without a verdict leaves its phase not judged, unless [polarization]
 * inconclusive = fail, "every polarization probe judged", fails it.  A probe
 * given no number of paths (verdict "unknown") is judged by neither.
 */
static void polar_check(struct report *rep, int inconclusive_fails)
{
	struct check *c = NULL, *u = NULL;
	int ri, i, nov = 0;

	for (ri = 0; ri < rep->nruns; ri++) {
		struct rrun *r = &rep->runs[ri];
		struct polar_phases ph;
		json_t *dec = rpolar_deciding(r->polar), *rec;
		size_t k;

		ph.n = 0;
		json_array_foreach(dec, k, rec) {
			if (!c) {
				int ci = rep->nchecks;

				c = report_check_new(rep, "no polarized probe");
				snprintf(c->limit, sizeof(c->limit), "none");
				if (inconclusive_fails) {
					u = report_check_new(rep, "every polarization probe judged");
					snprintf(u->limit, sizeof(u->limit), "none");
					if (rep->nchecks > ci)	/* (u's growth may have moved c) */
						c = &rep->checks[ci];
				}
			}
			polar_probe(rep, r, rec, c, u, &ph, &nov);
		}
		json_decref(dec);
		for (i = 0; i < ph.n; i++)
			if (!ph.bad[i])
				report_judged(r, ph.name[i], "polarization", -1, -1);
	}
	if (!c)
		return;
	snprintf(c->worst, sizeof(c->worst), "%d of %d polarized", c->failing, c->total);
	if (nov)
		snprintf(c->worst + strlen(c->worst), sizeof(c->worst) - strlen(c->worst), " (%d without a verdict)",
			 nov);
	if (u)
		snprintf(u->worst, sizeof(u->worst), "%d of %d without a verdict", u->failing, u->total);
	if (!c->total && c->pass && !u) {
		c->not_judged = 1;
		snprintf(c->who, sizeof(c->who), "no probe had a verdict: see Hash polarization");
	}
}

static void cabling_check(struct report *rep)
{
	struct check *c = NULL;
	char pre[300];
	int ri, unjudged = 0, errors = 0;
	json_t *f;
	size_t k;

	for (ri = 0; ri < rep->nruns; ri++) {
		struct rrun *r = &rep->runs[ri];
		const char *intent = record_str(r->cabling, "intent", NULL);

		if (!r->cabling)
			continue;
		if (!c) {
			c = report_check_new(rep, "cabling and settings as designed, every port");
			snprintf(c->limit, sizeof(c->limit), "0 errors");
		}
		if (!intent) {
			unjudged++;
			continue;
		}
		c->total += as_int(record_num(r->cabling, "ports", 0));
		errors += as_int(record_num(r->cabling, "errors", 0));
		json_array_foreach(json_object_get(r->cabling, "findings"), k, f)
			if (!strcmp(record_str(f, "level", "error"), "error"))
				report_check_fail(c, "%s%.60s:%d: %.120s", prefix(rep, r, pre, sizeof(pre)), intent,
						  as_int(record_num(f, "line", 0)), record_str(f, "text", ""));
		if (record_num(r->cabling, "errors", 0) > 0 && !json_array_size(json_object_get(r->cabling, "findings")))
			report_check_fail(c, "%s%d errors against %.60s", prefix(rep, r, pre, sizeof(pre)),
					  as_int(record_num(r->cabling, "errors", 0)), intent);
		report_judged(r, NULL, "topology", -1, -1);
	}
	if (!c)
		return;
	snprintf(c->worst, sizeof(c->worst), "%d error%s", errors, errors == 1 ? "" : "s");
	if (unjudged && c->pass) {
		c->not_judged = 1;
		snprintf(c->who, sizeof(c->who), "no intended topology to judge the ports by: give --topology FILE, "
			 "or [global] topology in the plan");
	}
}

void report_integrity(struct report *rep, const struct thresholds *t)
{
	jobs_check(rep);
	failed_check(rep, thresholds_get(t, "run", "max_failed", 0));
	missing_check(rep, thresholds_get(t, "run", "max_missing", 0));
	suspects_check(rep, thresholds_get(t, "suspects", "max_confirmed", 0),
		       thresholds_get(t, "suspects", "max_unconfirmed", NAN));
	report_coll_data_check(rep);
	polar_check(rep, thresholds_get(t, "polarization", "inconclusive", 0) > 0);
	cabling_check(rep);
}

/* ---- the verdict ---- */

const char *report_result_word(enum report_result r)
{
	return r == REPORT_PASS ? "PASS" : r == REPORT_FAIL ? "FAIL" : "INCOMPLETE";
}

/* what to give so that a test of a phase is judged */
static const char *hint(const struct report *rep, const char *test, char *buf, size_t len)
{
	if (!strcmp(test, "bw"))
		snprintf(buf, len, rep->topology ? "the model has no expectation for its pairs (nodes or lanes not "
			 "in the design, or cables without speed=): give [bw] min_fraction or min_gbps" :
			 "give [bw] min_fraction or min_gbps in a thresholds file, or --topology with the cables' speeds");
	else if (!strcmp(test, "lat"))
		snprintf(buf, len, "give [lat] p50_us_max or p99_us_max in a thresholds file");
	else if (!strcmp(test, "allreduce") || !strcmp(test, "alltoall"))
		snprintf(buf, len, "give [%s] min_busbw_gbps in a thresholds file", test);
	else if (!strcmp(test, "pfc"))
		snprintf(buf, len, "give [pfc] storm = fail, max_paused or max_pps in a thresholds file");
	else if (!strcmp(test, "polarization"))
		snprintf(buf, len, "a probe gave no verdict (inconclusive, or no number of paths): see Hash "
			 "polarization for why and what to give; [polarization] inconclusive = fail fails it");
	else if (!strcmp(test, "topology"))
		snprintf(buf, len, "no intended topology to judge its ports by: give --topology FILE");
	else if (!strcmp(test, "ping"))
		snprintf(buf, len, "judged by its jobs answering, which run.json and jobs.done do not tell");
	else
		snprintf(buf, len, "fabscope has no criterion for a '%.24s' test", test);
	return buf;
}

#define UNJUDGED_MAX 64	/* lines said; the rest counted */

int report_unjudged(const struct report *rep, void (*fn)(void *ctx, int ri, const char *phase, const char *line),
		    void *ctx)
{
	char line[1024], h[256], lane[48];
	int ri, i, j, k, n = 0;

	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];

		if (!r->nms) {
			if (n++ < UNJUDGED_MAX)
				fn(ctx, ri, NULL, "nothing measured: no result to judge");
			continue;
		}
		for (i = 0; i < r->nms; i++) {
			const struct rmeasured *m = &r->ms[i];
			int seen = 0, lanes = 0, bad = 0;
			size_t len;

			if (m->judged)
				continue;
			for (j = 0; j < i && !seen; j++)	/* each phase and test once */
				seen = !r->ms[j].judged && !strcmp(r->ms[j].phase, m->phase) && !strcmp(r->ms[j].test, m->test);
			if (seen)
				continue;
			if (++n > UNJUDGED_MAX)
				continue;
			len = (size_t)snprintf(line, sizeof(line), "%s", m->test);
			for (j = 0; j < r->nms; j++)
				if (!strcmp(r->ms[j].phase, m->phase) && !strcmp(r->ms[j].test, m->test)) {
					lanes++;
					bad += !r->ms[j].judged;
				}
			if (m->rail >= 0 && bad == lanes && len < sizeof(line))
				len += (size_t)snprintf(line + len, sizeof(line) - len, " on every lane");
			else if (m->rail >= 0)	/* some lanes judged: name the others */
				for (j = i, k = 0; j < r->nms && len < sizeof(line); j++)
					if (!r->ms[j].judged && !strcmp(r->ms[j].phase, m->phase) &&
					    !strcmp(r->ms[j].test, m->test)) {
						fs_lane_name(r->ms[j].rail, r->ms[j].plane, lane, sizeof(lane));
						len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s",
									k++ ? ", " : " on ", lane);
					}
			if (len < sizeof(line))
				snprintf(line + len, sizeof(line) - len, ": %s", hint(rep, m->test, h, sizeof(h)));
			fn(ctx, ri, m->phase, line);
		}
	}
	if (n > UNJUDGED_MAX) {
		snprintf(line, sizeof(line), "and %d more not judged", n - UNJUDGED_MAX);
		fn(ctx, -1, NULL, line);
	}
	return n;
}

static void count_one(void *ctx, int ri, const char *phase, const char *line)
{
	(void)ri;
	(void)phase;
	(void)line;
	(void)ctx;
}

void report_verdict(struct report *rep)
{
	int i;

	rep->failed = rep->not_judged = 0;
	for (i = 0; i < rep->nchecks; i++) {
		rep->failed += !rep->checks[i].pass;
		rep->not_judged += rep->checks[i].not_judged;
	}
	if (rep->have_base && report_baseline_failed(rep))
		rep->failed++;
	rep->not_judged += report_unjudged(rep, count_one, NULL);
	rep->result = rep->failed ? REPORT_FAIL : rep->not_judged ? REPORT_INCOMPLETE : REPORT_PASS;
}

struct incomplete {
	const char *phase[UNJUDGED_MAX];	/* the phases, each once; the first 3 named */
	int nphase, nothing;
};

static void note_phase(void *ctx, int ri, const char *phase, const char *line)
{
	struct incomplete *in = ctx;
	int i;

	(void)line;
	if (ri < 0)	/* "and N more": counted below */
		return;
	if (!phase) {
		in->nothing++;
		return;
	}
	for (i = 0; i < in->nphase; i++)
		if (!strcmp(in->phase[i], phase))
			return;
	if (in->nphase < UNJUDGED_MAX)
		in->phase[in->nphase++] = phase;
}

void report_incomplete_line(const struct report *rep, char *buf, size_t len)
{
	struct incomplete in = { { NULL }, 0, 0 };
	size_t n = 0;
	int i, named, more;

	buf[0] = 0;
	more = report_unjudged(rep, note_phase, &in) > UNJUDGED_MAX;	/* (past the bound: "more") */
	named = in.nphase < 3 ? in.nphase : 3;
	for (i = 0; i < named && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s",
				      i ? (i == named - 1 && in.nphase == named && !more ? " and " : ", ") : "", in.phase[i]);
	if (n < len && in.nphase > named)
		n += (size_t)snprintf(buf + n, len - n, " and %d %smore", in.nphase - named, more ? "or " : "");
	else if (n < len && more)
		n += (size_t)snprintf(buf + n, len - n, " and more");
	if (in.nphase && n < len)
		n += (size_t)snprintf(buf + n, len - n, " %s no criterion", in.nphase > 1 ? "have" : "has");
	if (in.nothing && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s%s measured nothing", n ? "; " : "",
				      in.nothing > 1 ? "runs" : rep->nruns > 1 ? "a run" : "the run");
	for (i = 0; i < rep->nchecks && n < len; i++)
		if (rep->checks[i].not_judged)
			n += (size_t)snprintf(buf + n, len - n, "%sthe check '%s' could not judge", n ? "; " : "",
					      rep->checks[i].name);
}
