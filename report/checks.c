/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The performance checks of the acceptance, and baseline comparisons.
 *
 * From a thresholds file (thresh.c reads it; fabscope-thresholds(5)):
 *
 *   [bw]        line_rate_gbps (railN one rail's), min_fraction or min_gbps: every pair
 *   [lat]       p50_us_max, p99_us_max: every pair
 *   [run]       max_suspects: every suspect, confirmed or not
 *   [pfc]       storm = fail, max_paused, max_pps: every port, priority and direction
 *   [allreduce], [alltoall]  min_busbw_gbps: every lane at its largest size (coll-checks.c)
 *   [phase NAME]  min_gbps, min_fraction, p50_us_max, p99_us_max, min_busbw_gbps,
 *               pair_fraction, aggregate_fraction: that phase's own limits; the global
 *               row of the same check leaves the phase out, and it gets a row of its own
 *
 * With --topology, from the model (modes.c puts its expectations in the
 * groups): every bw pair against its fair share of the design (an equal
 * split at every switch) times [model] pair_fraction, and every lane's
 * aggregate a round against the mean of per-flow ECMP times [model]
 * aggregate_fraction (defaults in report.h).
 *
 * Each check is applied to every run of the report; it fails when any pair
 * (or port, lane, run) is outside its limit, and names the first few, or
 * when no record at all is there for it to check.  What a check judged is
 * marked (report_judged): what no check judged makes the report
 * INCOMPLETE (verdict.c).  The PFC checks read the PFC probe's ports: a
 * paused fraction the probe did not know (no pause durations, no link
 * speed to estimate them) is not counted, and the check says how many were
 * not.
 * A baseline (--baseline DIR) compares the median of every phase, test and
 * lane with the same one in DIR: bandwidth down, or latency up, by more
 * than the tolerance is a regression; collectives compare their mean busbw
 * per lane (coll*.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "render.h"
#include "report.h"

/* a new check among *v; out of memory: said once, rep->oom, and the spare filled in vain */
static struct check *check_add(struct report *rep, struct check **v, int *n, size_t *alloc, const char *name)
{
	struct check *c;

	if (FS_ALLOC_GROW(*v, *n + 1, *alloc)) {
		if (!rep->oom)
			fs_err_env("out of memory adding the check '%s'", name);
		rep->oom = 1;
		c = &rep->spare;
	} else {
		c = &(*v)[(*n)++];
	}
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->pass = 1;
	return c;
}

struct check *report_check_new(struct report *rep, const char *name)
{
	return check_add(rep, &rep->checks, &rep->nchecks, &rep->checks_alloc, name);
}

struct check *report_reg_new(struct report *rep, const char *name)
{
	return check_add(rep, &rep->regs, &rep->nregs, &rep->regs_alloc, name);
}

void report_check_fail(struct check *c, const char *fmt, ...)
{
	size_t len = strlen(c->who);
	va_list ap;

	c->failing++;
	c->pass = 0;
	if (c->failing > 6) {
		if (c->failing == 7 && len + 6 < sizeof(c->who))
			strcat(c->who, ", ...");
		return;
	}
	if (len && len + 2 < sizeof(c->who)) {
		strcat(c->who, ", ");
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(c->who + len, sizeof(c->who) - len, fmt, ap);
	va_end(ap);
}

void report_check_empty(struct check *c)
{
	/* a gate with nothing behind it is not passed: no record for a check
	 * (the tests never ran, or every one failed) fails it */
	if (c->total)
		return;
	c->pass = 0;
	if (!c->worst[0])
		snprintf(c->worst, sizeof(c->worst), "n/a");
	snprintf(c->who, sizeof(c->who), "nothing measured: no record gives this check a value");
}

/* "lb=ecmp: " when several runs are checked */
static const char *run_prefix(const struct report *rep, int ri, char *buf, size_t len)
{
	if (rep->nruns > 1)
		snprintf(buf, len, "%s: ", rep->runs[ri].name);
	else
		buf[0] = 0;
	return buf;
}

/* " plane 1" of a lane of a plane, "" of plane 0 */
static const char *plane_str(int plane, char *buf, size_t len)
{
	if (plane)
		snprintf(buf, len, " plane %d", plane);
	else
		buf[0] = 0;
	return buf;
}

/* A row with nothing to judge fails ("nothing measured"), unless what it would have
 * judged (own lanes) each has a row of its own: a global row of phases with their own limits. */
static void row_empty(struct check *c, int own)
{
	if (c->total || !own) {
		report_check_empty(c);
		return;
	}
	snprintf(c->worst, sizeof(c->worst), "n/a");
	snprintf(c->who, sizeof(c->who), "every phase has a [phase NAME] limit of its own");
}

/* ---- which phases a row judges ---- */

/*
 * A row of a check judges either one phase (phase: its [phase NAME]
 * limits) or every phase without a [phase NAME] key of its own among keys
 * (the global row).
 */
struct scope {
	const struct thresholds *t;
	const char *phase;		/* NULL: the global row */
	const char *const *keys;	/* NULL-terminated */
};

static int in_scope(const struct scope *sc, const char *phase)
{
	int k;

	if (sc->phase)
		return !strcmp(sc->phase, phase);
	for (k = 0; sc->keys[k]; k++)
		if (!isnan(thresholds_phase(sc->t, phase, sc->keys[k])))
			return 0;
	return 1;
}

/* "pw: " for a phase's row */
static void scope_name(const struct scope *sc, const char *what, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", sc->phase ? sc->phase : "", sc->phase ? ": " : "", what);
}

/* did a run measure a phase of that name? */
static int phase_measured(const struct report *rep, const char *phase)
{
	int ri, j;

	for (ri = 0; ri < rep->nruns; ri++)
		for (j = 0; j < rep->runs[ri].nms; j++)
			if (!strcmp(rep->runs[ri].ms[j].phase, phase))
				return 1;
	return 0;
}

/* calls fn(t, phase) once for every measured phase that has a [phase NAME] section with one of
 * keys (one no run measured is said by phases_unknown) */
static void each_phase(struct report *rep, const struct thresholds *t, const char *const *keys,
		       void (*fn)(struct report *, const struct scope *, void *), void *ctx)
{
	int i, j, k;

	for (i = 0; t && i < t->n; i++) {
		int has = 0, seen = 0;

		if (!t->kv[i].phase[0])
			continue;
		for (j = 0; j < i; j++)	/* each phase once */
			seen |= !strcmp(t->kv[j].phase, t->kv[i].phase);
		for (k = 0; keys[k]; k++)
			has |= !isnan(thresholds_phase(t, t->kv[i].phase, keys[k]));
		if (!seen && has && phase_measured(rep, t->kv[i].phase)) {
			struct scope sc = { t, t->kv[i].phase, keys };

			fn(rep, &sc, ctx);
		}
	}
}

/* ---- bandwidth and latency of every pair ---- */

static const char *const bw_keys[] = { "min_fraction", "min_gbps", NULL };

/* bw >= min_fraction x line rate (of the rail), or >= min_gbps, every pair of the row's phases */
static void bw_row(struct report *rep, const struct scope *sc, void *ctx)
{
	const struct thresholds *t = sc->t;
	double line = thresholds_get(t, "bw", "line_rate_gbps", NAN), worst = INFINITY;
	double frac = sc->phase ? thresholds_phase(t, sc->phase, "min_fraction") : thresholds_get(t, "bw", "min_fraction", NAN);
	double min_gbps = sc->phase ? thresholds_phase(t, sc->phase, "min_gbps") : thresholds_get(t, "bw", "min_gbps", NAN);
	char buf[200], what[160], pre[300], pl[24];
	struct check *c;
	int ri, gi, i, own = 0;

	(void)ctx;
	if (!isnan(frac))
		snprintf(what, sizeof(what), "bw >= %.3g x line rate, every pair", frac);
	else
		snprintf(what, sizeof(what), "bw >= %.3g Gb/s, every pair", min_gbps);
	scope_name(sc, what, buf, sizeof(buf));
	c = report_check_new(rep, buf);
	if (!isnan(frac) && !isnan(line))
		snprintf(c->limit, sizeof(c->limit), "%.4g Gb/s", frac * line);
	else if (!isnan(frac))
		snprintf(c->limit, sizeof(c->limit), "%.3g x rail rate", frac);
	else
		snprintf(c->limit, sizeof(c->limit), "%.4g Gb/s", min_gbps);
	for (ri = 0; ri < rep->nruns; ri++)
		for (gi = 0; gi < rep->runs[ri].ng; gi++) {
			const struct rgroup *g = &rep->runs[ri].g[gi];
			double lim;
			char rk[24];

			if (strcmp(g->test, "bw"))
				continue;
			if (!in_scope(sc, g->phase)) {
				own++;
				continue;
			}
			snprintf(rk, sizeof(rk), "rail%d", g->rail);
			lim = !isnan(frac) ? frac * thresholds_get(t, "bw", rk, line) : min_gbps;
			for (i = 0; i < g->n; i++) {
				c->total++;
				if (g->p[i].v < worst)
					worst = g->p[i].v;
				if (!(g->p[i].v >= lim))
					report_check_fail(c, "%s%s-%s rail %d%s (%.3g)", run_prefix(rep, ri, pre, sizeof(pre)),
							  g->p[i].src, g->p[i].dst, g->rail, plane_str(g->plane, pl, sizeof(pl)),
							  g->p[i].v);
			}
			if (g->n)
				report_judged(&rep->runs[ri], g->phase, "bw", g->rail, g->plane);
		}
	if (isfinite(worst))
		snprintf(c->worst, sizeof(c->worst), "%.4g Gb/s", worst);
	row_empty(c, own);
}

static const char *const p50_keys[] = { "p50_us_max", NULL };
static const char *const p99_keys[] = { "p99_us_max", NULL };

/* latency p50 (ctx NULL) or p99 <= the limit, every pair of the row's phases */
static void lat_row(struct report *rep, const struct scope *sc, void *ctx)
{
	int p99 = ctx != NULL, ri, gi, i, own = 0;
	const char *key = p99 ? "p99_us_max" : "p50_us_max";
	double lim = sc->phase ? thresholds_phase(sc->t, sc->phase, key) : thresholds_get(sc->t, "lat", key, NAN);
	double worst = -INFINITY;
	char buf[200], what[160], pre[300], pl[24];
	struct check *c;

	snprintf(what, sizeof(what), "latency %s <= %.4g us, every pair", p99 ? "p99" : "p50", lim);
	scope_name(sc, what, buf, sizeof(buf));
	c = report_check_new(rep, buf);
	snprintf(c->limit, sizeof(c->limit), "%.4g us", lim);
	for (ri = 0; ri < rep->nruns; ri++)
		for (gi = 0; gi < rep->runs[ri].ng; gi++) {
			const struct rgroup *g = &rep->runs[ri].g[gi];
			int counted = 0;

			if (strcmp(g->test, "lat"))
				continue;
			if (!in_scope(sc, g->phase)) {
				own++;
				continue;
			}
			for (i = 0; i < g->n; i++) {
				double v = p99 ? g->p[i].v99 : g->p[i].v;

				if (isnan(v))
					continue;
				c->total++;
				counted++;
				if (v > worst)
					worst = v;
				if (v > lim)
					report_check_fail(c, "%s%s-%s rail %d%s (%.3g)", run_prefix(rep, ri, pre, sizeof(pre)),
							  g->p[i].src, g->p[i].dst, g->rail, plane_str(g->plane, pl, sizeof(pl)), v);
			}
			if (counted)
				report_judged(&rep->runs[ri], g->phase, "lat", g->rail, g->plane);
		}
	if (isfinite(worst))
		snprintf(c->worst, sizeof(c->worst), "%.4g us", worst);
	row_empty(c, own);
}

/* the global row of a check (when its limit is given) and the row of every phase with its own */
static void rows(struct report *rep, const struct thresholds *t, const char *const *keys, int global,
		 void (*fn)(struct report *, const struct scope *, void *), void *ctx)
{
	struct scope sc = { t, NULL, keys };

	if (global)
		fn(rep, &sc, ctx);
	each_phase(rep, t, keys, fn, ctx);
}

/* ---- PFC ---- */

/* [pfc] storm = fail: no storm, every port and priority */
static void pfc_storm(struct report *rep)
{
	char buf[32], pre[300];
	struct check *c = report_check_new(rep, "no PFC storm, every port and priority");
	int ri, i, j, storms = 0, unknown = 0;

	snprintf(c->limit, sizeof(c->limit), "none");
	for (ri = 0; ri < rep->nruns; ri++)
		for (i = 0; i < rep->runs[ri].npfc; i++) {
			const struct rpfc *pf = &rep->runs[ri].pfc[i];
			int named = 0, known = 0;

			for (j = 0; j < pf->np; j++) {
				const struct rpfc_prio *p = &pf->p[j];

				if (!p->storm) {
					unknown++;
					continue;
				}
				c->total++;
				known++;
				if (!strcmp(p->storm, "none"))
					continue;
				named++;
				storms++;
				report_secs(p->storm_at, buf, sizeof(buf));
				if (isnan(p->storm_at))
					report_check_fail(c, "%s%s %s prio %d %s", run_prefix(rep, ri, pre, sizeof(pre)),
							  pf->node, pf->iface, p->prio, p->storm);
				else
					report_check_fail(c, "%s%s %s prio %d %s (from %s s)", run_prefix(rep, ri, pre, sizeof(pre)),
							  pf->node, pf->iface, p->prio, p->storm, buf);
			}
			if (pf->storm && !named) {	/* the port's word, no priority named */
				c->total++;
				known++;
				storms++;
				report_check_fail(c, "%s%s %s", run_prefix(rep, ri, pre, sizeof(pre)), pf->node, pf->iface);
			}
			if (known)
				report_judged(&rep->runs[ri], pf->phase, "pfc", -1, -1);
		}
	if (storms)
		snprintf(c->worst, sizeof(c->worst), "%d storm%s", storms, storms == 1 ? "" : "s");
	else if (unknown)
		snprintf(c->worst, sizeof(c->worst), "none (%d unknown)", unknown);
	else
		snprintf(c->worst, sizeof(c->worst), "none");
	report_check_empty(c);
}

/* [pfc] max_paused (pps 0) or max_pps (pps 1): every port, priority and direction */
static void pfc_limit(struct report *rep, double lim, int pps)
{
	static const char *const dir[2] = { "rx", "tx" };
	char buf[32], pre[300];
	struct check *c;
	int ri, i, j, d, unknown = 0;
	double worst = NAN;

	if (pps) {
		snprintf(buf, sizeof(buf), "%.4g", lim);
		snprintf(pre, sizeof(pre), "PFC pause frames <= %s/s, every port, priority and direction", buf);
	} else {
		report_pct(lim, buf, sizeof(buf));
		snprintf(pre, sizeof(pre), "PFC paused <= %s of an interval, every port, priority and direction", buf);
	}
	c = report_check_new(rep, pre);
	snprintf(c->limit, sizeof(c->limit), "%s%s", buf, pps ? "/s" : "");
	for (ri = 0; ri < rep->nruns; ri++)
		for (i = 0; i < rep->runs[ri].npfc; i++) {
			const struct rpfc *pf = &rep->runs[ri].pfc[i];
			int known = 0;

			for (j = 0; j < pf->np; j++)
				for (d = 0; d < 2; d++) {
					double v = pps ? pf->p[j].pps_max[d] : pf->p[j].paused_max[d];

					if (isnan(v)) {
						unknown++;
						continue;
					}
					c->total++;
					known++;
					if (!(v <= worst))
						worst = v;
					if (v <= lim)
						continue;
					if (pps)
						snprintf(buf, sizeof(buf), "%.4g/s", v);
					else
						report_pct(v, buf, sizeof(buf));
					report_check_fail(c, "%s%s %s prio %d %s (%s%s)", run_prefix(rep, ri, pre, sizeof(pre)),
							  pf->node, pf->iface, pf->p[j].prio, dir[d], buf,
							  !pps && pf->p[j].estimated ? " est." : "");
				}
			if (known)
				report_judged(&rep->runs[ri], pf->phase, "pfc", -1, -1);
		}
	if (pps && !isnan(worst))
		snprintf(buf, sizeof(buf), "%.4g/s", worst);
	else if (pps)
		snprintf(buf, sizeof(buf), "n/a");
	else
		report_pct(worst, buf, sizeof(buf));
	if (unknown)
		snprintf(c->worst, sizeof(c->worst), "%s (%d unknown)", buf, unknown);
	else
		snprintf(c->worst, sizeof(c->worst), "%s", buf);
	report_check_empty(c);
}

/* [run] max_suspects: every suspect of a run, confirmed or not */
static void suspects_row(struct report *rep, double lim)
{
	char buf[64];
	struct check *c;
	int ri, worst = 0;

	snprintf(buf, sizeof(buf), "suspects <= %.0f", lim);
	c = report_check_new(rep, buf);
	snprintf(c->limit, sizeof(c->limit), "%.0f", lim);
	for (ri = 0; ri < rep->nruns; ri++) {
		int v = (int)json_array_size(rep->runs[ri].suspects);

		c->total++;
		if (v > worst)
			worst = v;
		if (v > lim)
			report_check_fail(c, "%s (%d)", rep->runs[ri].name, v);
	}
	snprintf(c->worst, sizeof(c->worst), "%d", worst);
}

/* a [phase NAME] section of a phase no run measured: said, it judges nothing */
static void phases_unknown(const struct report *rep, const struct thresholds *t)
{
	int i, j;

	for (i = 0; i < t->n; i++) {
		int seen = 0;

		if (!t->kv[i].phase[0])
			continue;
		for (j = 0; j < i; j++)
			seen |= !strcmp(t->kv[j].phase, t->kv[i].phase);
		if (!seen && !phase_measured(rep, t->kv[i].phase))
			fs_warn("%s:%d: [phase %s]: no run measured a phase of that name: its limits judge nothing",
				t->path, t->kv[i].line, t->kv[i].phase);
	}
}

void report_thresholds(struct report *rep, const struct thresholds *t)
{
	double v;

	rows(rep, t, bw_keys, !isnan(thresholds_get(t, "bw", "min_fraction", NAN)) ||
	     !isnan(thresholds_get(t, "bw", "min_gbps", NAN)), bw_row, NULL);
	rows(rep, t, p50_keys, !isnan(thresholds_get(t, "lat", "p50_us_max", NAN)), lat_row, NULL);
	rows(rep, t, p99_keys, !isnan(thresholds_get(t, "lat", "p99_us_max", NAN)), lat_row, (void *)1);
	if (!isnan(v = thresholds_get(t, "run", "max_suspects", NAN)))
		suspects_row(rep, v);
	if (thresholds_get(t, "pfc", "storm", 0) > 0)
		pfc_storm(rep);
	if (!isnan(v = thresholds_get(t, "pfc", "max_paused", NAN)))
		pfc_limit(rep, v, 0);
	if (!isnan(v = thresholds_get(t, "pfc", "max_pps", NAN)))
		pfc_limit(rep, v, 1);
	report_coll_busbw_checks(rep, t);
	phases_unknown(rep, t);
}

/* ---- the model (--topology) ---- */

static const char *const pair_keys[] = { "pair_fraction", NULL };
static const char *const agg_keys[] = { "aggregate_fraction", NULL };

/* the design's file name, without its directories: what a check's name says */
static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* the fraction of the row: its phase's, the file's [model], or the default */
static double model_frac(const struct scope *sc, const char *key, double dflt)
{
	double v = sc->phase ? thresholds_phase(sc->t, sc->phase, key) : NAN;

	return isnan(v) ? thresholds_get(sc->t, "model", key, dflt) : v;
}

/* every bw pair >= pair_fraction x its fair share of the design */
static void model_pairs(struct report *rep, const struct scope *sc, void *ctx)
{
	double f = model_frac(sc, "pair_fraction", REPORT_PAIR_FRACTION), worst = INFINITY;
	char buf[300], what[200], pre[300], pl[24];
	struct check *c;
	int ri, gi, i, unknown = 0, own = 0;

	(void)ctx;
	snprintf(what, sizeof(what), "bw >= %.3g x the pair's fair share of %s (the model), every pair", f,
		 base_name(rep->topology));
	scope_name(sc, what, buf, sizeof(buf));
	c = report_check_new(rep, buf);
	snprintf(c->limit, sizeof(c->limit), "%.3g x fair share", f);
	for (ri = 0; ri < rep->nruns; ri++)
		for (gi = 0; gi < rep->runs[ri].ng; gi++) {
			const struct rgroup *g = &rep->runs[ri].g[gi];
			int un = 0;

			if (strcmp(g->test, "bw"))
				continue;
			if (!in_scope(sc, g->phase)) {
				own++;
				continue;
			}
			for (i = 0; i < g->n; i++) {
				const struct rpair *p = &g->p[i];

				if (!(p->exp > 0)) {
					un++;
					continue;
				}
				c->total++;
				if (p->v / p->exp < worst)
					worst = p->v / p->exp;
				if (!(p->v >= f * p->exp))
					report_check_fail(c, "%s%s %s-%s rail %d%s (%.3g of %.3g)",
							  run_prefix(rep, ri, pre, sizeof(pre)), g->phase, p->src, p->dst,
							  g->rail, plane_str(g->plane, pl, sizeof(pl)), p->v, p->exp);
			}
			unknown += un;
			if (g->n && !un)	/* every pair held against the model */
				report_judged(&rep->runs[ri], g->phase, "bw", g->rail, g->plane);
		}
	if (isfinite(worst))
		snprintf(c->worst, sizeof(c->worst), "%.3g x", worst);
	else
		snprintf(c->worst, sizeof(c->worst), "n/a");
	if (unknown)
		snprintf(c->worst + strlen(c->worst), sizeof(c->worst) - strlen(c->worst),
			 " (%d not in the design)", unknown);
	row_empty(c, own);
}

/* every bw lane's aggregate a round >= aggregate_fraction x the mean of per-flow ECMP */
static void model_lanes(struct report *rep, const struct scope *sc, void *ctx)
{
	double f = model_frac(sc, "aggregate_fraction", REPORT_AGGREGATE_FRACTION), worst = INFINITY;
	char buf[300], what[200], pre[300], lane[48];
	struct check *c;
	int ri, gi, own = 0;

	(void)ctx;
	snprintf(what, sizeof(what), "lane aggregate >= %.3g x what %s carries (the model, per-flow ECMP), "
		 "every lane", f, base_name(rep->topology));
	scope_name(sc, what, buf, sizeof(buf));
	c = report_check_new(rep, buf);
	snprintf(c->limit, sizeof(c->limit), "%.3g x ECMP", f);
	for (ri = 0; ri < rep->nruns; ri++)
		for (gi = 0; gi < rep->runs[ri].ng; gi++) {
			const struct rgroup *g = &rep->runs[ri].g[gi];

			if (strcmp(g->test, "bw") || !(g->exp_ecmp > 0) || isnan(g->agg))
				continue;
			if (!in_scope(sc, g->phase)) {
				own++;
				continue;
			}
			c->total++;
			if (g->agg / g->exp_ecmp < worst)
				worst = g->agg / g->exp_ecmp;
			fs_lane_name(g->rail, g->plane, lane, sizeof(lane));
			if (!(g->agg >= f * g->exp_ecmp))
				report_check_fail(c, "%s%s %s (%.3g of %.3g Gb/s)", run_prefix(rep, ri, pre, sizeof(pre)),
						  g->phase, lane, g->agg, g->exp_ecmp);
			report_judged(&rep->runs[ri], g->phase, "bw", g->rail, g->plane);
		}
	if (isfinite(worst))
		snprintf(c->worst, sizeof(c->worst), "%.3g x", worst);
	else
		snprintf(c->worst, sizeof(c->worst), "n/a");
	row_empty(c, own);
}

void report_model_checks(struct report *rep, const struct thresholds *t)
{
	int ri, gi, any = 0;

	for (ri = 0; ri < rep->nruns && !any; ri++)
		for (gi = 0; gi < rep->runs[ri].ng && !any; gi++)
			any = rep->runs[ri].g[gi].exp_ecmp > 0;
	if (!any)	/* no speeds in the design, or none of its nodes: nothing to hold them to */
		return;
	rep->model_checked = 1;
	rows(rep, t, pair_keys, 1, model_pairs, NULL);
	rows(rep, t, agg_keys, 1, model_lanes, NULL);
}

void report_baseline(struct report *rep)
{
	int ri, gi;

	for (ri = 0; ri < rep->nruns; ri++)
		for (gi = 0; gi < rep->runs[ri].ng; gi++) {
			const struct rgroup *g = &rep->runs[ri].g[gi];
			const struct rgroup *b = report_group(&rep->base, g->phase, g->test, g->rail, g->plane);
			struct check *c;
			char lane[48], name[256];
			double delta;
			int is_bw = !strcmp(g->test, "bw");

			if (!b || !(b->median > 0))
				continue;
			fs_lane_name(g->rail, g->plane, lane, sizeof(lane));
			snprintf(name, sizeof(name), "%.80s%s%.60s %s %s median", rep->nruns > 1 ? rep->runs[ri].name : "",
				 rep->nruns > 1 ? ": " : "", g->phase, g->test, lane);
			c = report_reg_new(rep, name);
			delta = (g->median - b->median) / b->median;
			snprintf(c->limit, sizeof(c->limit), "%.4g %s", b->median, report_unit(g->test));
			c->total = 1;
			if (strcmp(g->params, b->params)) {	/* like with like only: no verdict across parameters */
				snprintf(c->worst, sizeof(c->worst), "%.4g %s", g->median, report_unit(g->test));
				c->not_comparable = 1;
				snprintf(c->who, sizeof(c->who), "not comparable: measured with %s; the baseline with %s",
					 g->params, b->params);
				continue;
			}
			snprintf(c->worst, sizeof(c->worst), "%.4g %s (%+.1f%%)", g->median, report_unit(g->test),
				 100 * delta);
			if (is_bw ? delta < -rep->tolerance : delta > rep->tolerance)
				report_check_fail(c, "%s %s by %.1f%% (tolerance %.0f%%)", is_bw ? "down" : "up", lane,
					 100 * fabs(delta), 100 * rep->tolerance);
		}
	report_coll_baseline(rep);
}

int report_regressions(const struct report *rep, int *not_comparable)
{
	int i, n = 0, nc = 0;

	for (i = 0; i < rep->nregs; i++) {
		n += !rep->regs[i].pass;
		nc += rep->regs[i].not_comparable;
	}
	if (not_comparable)
		*not_comparable = nc;
	return n;
}

const char *report_baseline_verdict(const struct report *rep)
{
	int nc, nr = report_regressions(rep, &nc);

	return nr ? "REGRESSED" : rep->nregs && nc == rep->nregs ? "not comparable" : "no regression";
}

int report_baseline_failed(const struct report *rep)
{
	int nc, nr = report_regressions(rep, &nc);

	return nr || (rep->nregs && nc == rep->nregs);
}
