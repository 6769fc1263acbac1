/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Acceptance thresholds and baseline comparisons.
 *
 * A thresholds file is INI: sections name what is checked, keys the limits.
 *
 *   [bw]
 *   line_rate_gbps = 400      ; the port speed; rail3 = 200 overrides one rail
 *   min_fraction = 0.9        ; every pair's bandwidth >= 0.9 x line rate
 *   [lat]
 *   p50_us_max = 5            ; every pair's p50 <= 5 us
 *   p99_us_max = 12
 *   [run]
 *   max_missing = 0           ; agents missing
 *   max_failed = 0            ; records with status error
 *   max_suspects = 0          ; suspects found by the analysis
 *   [pfc]
 *   storm = fail              ; a PFC storm on any port and priority fails (default off)
 *   max_paused = 0.5          ; no priority paused, either way, for more than half an interval
 *   [allreduce]
 *   min_busbw_gbps = 350      ; every lane's busbw at its largest size (coll*.c)
 *   [alltoall]
 *   min_busbw_gbps = 300
 *
 * The PFC checks read the PFC probe's ports: a paused fraction the probe
 * did not know (no pause durations, no link speed to estimate them) is
 * not counted, and the check says how many were not.  Collectives' data is
 * checked whenever there are any (coll*.c), with or without this file.
 * Each check is applied to every run of the report; a check fails when any
 * pair (or run) is outside its limit, and names the first few of them, or
 * when no record at all is there for it to check.
 * A baseline (--baseline DIR) compares the median of every phase, test and
 * lane with the same one in DIR: bandwidth down, or latency up, by more
 * than the tolerance is a regression; collectives compare their mean busbw
 * per lane (coll*.c).
 */
#include <ctype.h>
#include <errno.h>
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

struct tkv {
	char sec[32], key[64];
	double v;
	int line;
};

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static const char *const known[] = {
	"bw.line_rate_gbps", "bw.min_fraction", "bw.min_gbps", "lat.p50_us_max", "lat.p99_us_max",
	"run.max_missing", "run.max_failed", "run.max_suspects", "pfc.storm", "pfc.max_paused",
	"allreduce.min_busbw_gbps", "alltoall.min_busbw_gbps", NULL,
};

static int read_thresholds(const char *path, struct tkv **out, int *n)
{
	FILE *f = fopen(path, "r");
	char line[512], sec[32] = "";
	int lineno = 0, rc = 0;
	size_t alloc = 0;

	*out = NULL;
	*n = 0;
	if (!f)
		return fs_err_read("thresholds", path, errno);
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, *end, *c;
		char full[128];
		int i, ok = 0;

		lineno++;
		if ((c = strpbrk(line, "#;")))
			*c = 0;
		s = trim(line);
		if (!*s)
			continue;
		if (*s == '[') {
			char *e = strchr(s, ']');

			if (!e || e[1]) {
				rc = fs_err_usage("%s:%d: malformed section header", path, lineno);
				break;
			}
			*e = 0;
			snprintf(sec, sizeof(sec), "%s", trim(s + 1));
			continue;
		}
		eq = strchr(s, '=');
		if (!eq || !*sec) {
			rc = fs_err_usage("%s:%d: expected key = value inside a [section]", path, lineno);
			break;
		}
		*eq = 0;
		s = trim(s);
		snprintf(full, sizeof(full), "%s.%s", sec, s);
		for (i = 0; known[i]; i++)
			ok |= !strcmp(known[i], full);
		if (!strcmp(sec, "bw") && !strncmp(s, "rail", 4) && isdigit((unsigned char)s[4]))
			ok = 1;	/* rail3 = 200: one rail's line rate */
		if (!ok) {
			rc = fs_err_usage("%s:%d: unknown threshold '%s'; see 'fabscope report --help'", path, lineno, full);
			break;
		}
		for (i = 0; i < *n; i++)	/* one value a key: which would win is a guess */
			if (!strcmp((*out)[i].sec, sec) && !strcmp((*out)[i].key, s))
				break;
		if (i < *n) {
			rc = fs_err_usage("%s:%d: '%s' is given already, at line %d", path, lineno, full,
					  (*out)[i].line);
			break;
		}
		if (FS_ALLOC_GROW(*out, *n + 1, alloc)) {
			rc = fs_err_env("out of memory reading %s", path);
			break;
		}
		snprintf((*out)[*n].sec, sizeof((*out)[*n].sec), "%s", sec);
		snprintf((*out)[*n].key, sizeof((*out)[*n].key), "%s", s);
		(*out)[*n].line = lineno;
		if (!strcmp(full, "pfc.storm")) {	/* a word, not a number: 1 fail, 0 off */
			const char *w = trim(eq + 1);

			if (strcmp(w, "fail") && strcmp(w, "off")) {
				rc = fs_err_usage("%s:%d: storm = '%s': give 'fail' or 'off'", path, lineno, w);
				break;
			}
			(*out)[(*n)++].v = !strcmp(w, "fail");
			continue;
		}
		(*out)[*n].v = strtod(trim(eq + 1), &end);
		if (end == trim(eq + 1) || *end || !isfinite((*out)[*n].v) || (*out)[*n].v < 0) {
			rc = fs_err_usage("%s:%d: '%s' is not a non-negative number", path, lineno, trim(eq + 1));
			break;
		}
		if (!strcmp(full, "pfc.max_paused") && (*out)[*n].v > 1) {
			rc = fs_err_usage("%s:%d: max_paused = %s: give a fraction of an interval, 0 to 1",
					    path, lineno, trim(eq + 1));
			break;
		}
		if (!strcmp(full, "bw.min_fraction") && (*out)[*n].v > 1) {	/* no pair beats the line */
			rc = fs_err_usage("%s:%d: min_fraction = %s: give a fraction of the line rate, 0 to 1",
					    path, lineno, trim(eq + 1));
			break;
		}
		if (!strcmp(sec, "run") && (*out)[*n].v != floor((*out)[*n].v)) {
			rc = fs_err_usage("%s:%d: %s = %s: give a whole number (a count)", path, lineno, s,
					  trim(eq + 1));
			break;
		}
		(*n)++;
	}
	if (!rc && ferror(f))	/* (a directory: EISDIR) */
		rc = fs_err_read("thresholds", path, errno);
	fclose(f);
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

static double tget(const struct tkv *t, int n, const char *sec, const char *key, double dflt)
{
	int i;

	for (i = n - 1; i >= 0; i--)
		if (!strcmp(t[i].sec, sec) && !strcmp(t[i].key, key))
			return t[i].v;
	return dflt;
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

/* [pfc]: storm = fail, max_paused = FRACTION */
static void pfc_checks(struct report *rep, int storm, double max_paused)
{
	static const char *const dir[2] = { "rx", "tx" };
	char buf[32], pre[300];
	struct check *c;
	int ri, i, j, d, storms = 0, unknown = 0;
	double worst = NAN;

	if (storm) {
		c = report_check_new(rep, "no PFC storm, every port and priority");
		snprintf(c->limit, sizeof(c->limit), "none");
		for (ri = 0; ri < rep->nruns; ri++)
			for (i = 0; i < rep->runs[ri].npfc; i++) {
				const struct rpfc *pf = &rep->runs[ri].pfc[i];
				int named = 0;

				for (j = 0; j < pf->np; j++) {
					const struct rpfc_prio *p = &pf->p[j];

					if (!p->storm) {
						unknown++;
						continue;
					}
					c->total++;
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
					storms++;
					report_check_fail(c, "%s%s %s", run_prefix(rep, ri, pre, sizeof(pre)), pf->node, pf->iface);
				}
			}
		if (storms)
			snprintf(c->worst, sizeof(c->worst), "%d storm%s", storms, storms == 1 ? "" : "s");
		else if (unknown)
			snprintf(c->worst, sizeof(c->worst), "none (%d unknown)", unknown);
		else
			snprintf(c->worst, sizeof(c->worst), "none");
	}
	if (isnan(max_paused))
		return;
	unknown = 0;
	report_pct(max_paused, buf, sizeof(buf));
	snprintf(pre, sizeof(pre), "PFC paused <= %s of an interval, every port, priority and direction", buf);
	c = report_check_new(rep, pre);
	snprintf(c->limit, sizeof(c->limit), "%s", buf);
	for (ri = 0; ri < rep->nruns; ri++)
		for (i = 0; i < rep->runs[ri].npfc; i++) {
			const struct rpfc *pf = &rep->runs[ri].pfc[i];

			for (j = 0; j < pf->np; j++)
				for (d = 0; d < 2; d++) {
					double v = pf->p[j].paused_max[d];

					if (isnan(v)) {
						unknown++;
						continue;
					}
					c->total++;
					if (!(v <= worst))
						worst = v;
					if (v > max_paused) {
						report_pct(v, buf, sizeof(buf));
						report_check_fail(c, "%s%s %s prio %d %s (%s%s)", run_prefix(rep, ri, pre, sizeof(pre)),
							 pf->node, pf->iface, pf->p[j].prio, dir[d], buf,
							 pf->p[j].estimated ? " est." : "");
					}
				}
		}
	report_pct(worst, buf, sizeof(buf));
	if (unknown)
		snprintf(c->worst, sizeof(c->worst), "%s (%d unknown)", buf, unknown);
	else
		snprintf(c->worst, sizeof(c->worst), "%s", buf);
}

int report_thresholds(struct report *rep, const char *path)
{
	struct tkv *t;
	int n, rc = read_thresholds(path, &t, &n), ri, gi, i, first = rep->nchecks;
	double line = NAN, frac, min_gbps, p50, p99, ar_min, a2a_min;
	char buf[160];

	if (rc)
		return rc;
	rep->thresholds_given = 1;
	line = tget(t, n, "bw", "line_rate_gbps", NAN);
	frac = tget(t, n, "bw", "min_fraction", NAN);
	min_gbps = tget(t, n, "bw", "min_gbps", NAN);
	p50 = tget(t, n, "lat", "p50_us_max", NAN);
	p99 = tget(t, n, "lat", "p99_us_max", NAN);
	if (!isnan(frac) && isnan(line)) {
		int has_rail = 0;

		for (i = 0; i < n; i++)
			has_rail |= !strcmp(t[i].sec, "bw") && !strncmp(t[i].key, "rail", 4);
		if (!has_rail) {
			free(t);
			return fs_err_usage("%s: min_fraction needs line_rate_gbps (or railN = GBPS) in [bw]", path);
		}
	}
	if (!isnan(frac) || !isnan(min_gbps)) {
		struct check *c;

		if (!isnan(frac))
			snprintf(buf, sizeof(buf), "bw >= %.3g x line rate, every pair", frac);
		else
			snprintf(buf, sizeof(buf), "bw >= %.3g Gb/s, every pair", min_gbps);
		c = report_check_new(rep, buf);
		if (!isnan(frac) && !isnan(line))
			snprintf(c->limit, sizeof(c->limit), "%.4g Gb/s", frac * line);
		else if (!isnan(frac))
			snprintf(c->limit, sizeof(c->limit), "%.3g x rail rate", frac);
		else
			snprintf(c->limit, sizeof(c->limit), "%.4g Gb/s", min_gbps);
		c->worst[0] = 0;
		{
			double worst = INFINITY;

			for (ri = 0; ri < rep->nruns; ri++)
				for (gi = 0; gi < rep->runs[ri].ng; gi++) {
					const struct rgroup *g = &rep->runs[ri].g[gi];
					double lim;
					char rk[16];

					if (strcmp(g->test, "bw"))
						continue;
					snprintf(rk, sizeof(rk), "rail%d", g->rail);
					lim = !isnan(frac) ? frac * tget(t, n, "bw", rk, line) : min_gbps;
					for (i = 0; i < g->n; i++) {
						c->total++;
						if (g->p[i].v < worst)
							worst = g->p[i].v;
						if (!(g->p[i].v >= lim))
							report_check_fail(c, "%s%s%s-%s rail %d (%.3g)", rep->nruns > 1 ? rep->runs[ri].name : "",
								 rep->nruns > 1 ? ": " : "", g->p[i].src, g->p[i].dst, g->rail, g->p[i].v);
					}
				}
			if (isfinite(worst))
				snprintf(c->worst, sizeof(c->worst), "%.4g Gb/s", worst);
		}
	}
	{
		const char *name[2] = { "p50", "p99" };
		double lim[2] = { p50, p99 };
		int w;

		for (w = 0; w < 2; w++) {
			struct check *c;
			double worst = -INFINITY;

			if (isnan(lim[w]))
				continue;
			snprintf(buf, sizeof(buf), "latency %s <= %.4g us, every pair", name[w], lim[w]);
			c = report_check_new(rep, buf);
			snprintf(c->limit, sizeof(c->limit), "%.4g us", lim[w]);
			for (ri = 0; ri < rep->nruns; ri++)
				for (gi = 0; gi < rep->runs[ri].ng; gi++) {
					const struct rgroup *g = &rep->runs[ri].g[gi];

					if (strcmp(g->test, "lat"))
						continue;
					for (i = 0; i < g->n; i++) {
						double v = w ? g->p[i].v99 : g->p[i].v;

						if (isnan(v))
							continue;
						c->total++;
						if (v > worst)
							worst = v;
						if (v > lim[w])
							report_check_fail(c, "%s-%s rail %d (%.3g)", g->p[i].src, g->p[i].dst, g->rail, v);
					}
				}
			if (isfinite(worst))
				snprintf(c->worst, sizeof(c->worst), "%.4g us", worst);
		}
	}
	{
		const char *keys[3] = { "max_missing", "max_failed", "max_suspects" };
		const char *what[3] = { "agents missing", "failed tests (records with status error)",
					"suspects" };
		int w;

		for (w = 0; w < 3; w++) {
			double lim = tget(t, n, "run", keys[w], NAN);
			struct check *c;
			int worst = 0;

			if (isnan(lim))
				continue;
			snprintf(buf, sizeof(buf), "%s <= %.0f", what[w], lim);
			c = report_check_new(rep, buf);
			snprintf(c->limit, sizeof(c->limit), "%.0f", lim);
			for (ri = 0; ri < rep->nruns; ri++) {
				const struct rrun *r = &rep->runs[ri];
				int v = w == 0 ? r->missing : w == 1 ? r->nerr : (int)json_array_size(r->suspects);

				c->total++;
				if (v > worst)
					worst = v;
				if (v > lim)
					report_check_fail(c, "%s (%d)", r->name, v);
			}
			snprintf(c->worst, sizeof(c->worst), "%d", worst);
		}
	}
	pfc_checks(rep, tget(t, n, "pfc", "storm", 0) > 0, tget(t, n, "pfc", "max_paused", NAN));
	ar_min = tget(t, n, "allreduce", "min_busbw_gbps", NAN);
	a2a_min = tget(t, n, "alltoall", "min_busbw_gbps", NAN);
	free(t);
	if (!rep->nchecks && isnan(ar_min) && isnan(a2a_min))
		return fs_err_usage(!isnan(line) || n ? "%s: no check in it: line rates (line_rate_gbps, railN) "
				    "need min_fraction to judge by (see 'fabscope report --help')" :
				    "%s: no thresholds in it (see 'fabscope report --help')", path);
	for (i = first; i < rep->nchecks; i++)
		report_check_empty(&rep->checks[i]);
	report_coll_checks(rep, ar_min, a2a_min);
	return 0;
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
