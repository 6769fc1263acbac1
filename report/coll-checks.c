/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The collectives' checks: wrong data, [allreduce] / [alltoall]
 * min_busbw_gbps (report_coll_checks) and --baseline
 * (report_coll_baseline): see render.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "coll-int.h"
#include "render.h"

/* ---- checks ---- */

/* a lane's busbw at its largest size >= lim, every lane of test (of phase, or of every phase
 * without a [phase NAME] min_busbw_gbps of its own: phase NULL) */
static void busbw_check(struct report *rep, const struct coll_set *cs, const char *test, double lim,
			const char *phase, const struct thresholds *t)
{
	char buf[300], sz[32];
	struct check *c;
	double worst = NAN;
	int i, unknown = 0, own = 0;

	snprintf(buf, sizeof(buf), "%s%s%s busbw >= %.4g Gb/s, every lane at its largest size", phase ? phase : "",
		 phase ? ": " : "", test, lim);
	c = report_check_new(rep, buf);
	snprintf(c->limit, sizeof(c->limit), "%.4g Gb/s", lim);
	for (i = 0; i < cs->n; i++) {
		const struct coll_series *s = &cs->s[i];
		const struct coll_pt *p = &s->pt[s->npt - 1];
		const char *ph = cs->phase[s->phase];

		if (s->sum || strcmp(cs->key[s->coll].test, test))
			continue;	/* the sum of rails is no lane's rate */
		if (phase ? strcmp(ph, phase) : !isnan(thresholds_phase(t, ph, "min_busbw_gbps"))) {
			own += !phase;
			continue;
		}
		if (isnan(p->busbw)) {
			unknown++;
			continue;
		}
		c->total++;
		report_judged(&rep->runs[s->run], ph, test, -1, -1);
		if (!(p->busbw >= worst))
			worst = p->busbw;
		if (p->busbw < lim) {
			rcoll_series_name(rep, cs, s, buf, sizeof(buf));
			rcoll_size_str(p->size, sz, sizeof(sz));
			report_check_fail(c, "%s at %s (%.3g)", buf, sz, p->busbw);
		}
	}
	rcoll_gbps(worst, sz, sizeof(sz));
	snprintf(c->worst, sizeof(c->worst), "%s%s", sz, isnan(worst) ? "" : " Gb/s");
	if (unknown)
		snprintf(c->worst + strlen(c->worst), sizeof(c->worst) - strlen(c->worst), " (%d unknown)", unknown);
	if (!c->total && own)	/* every lane it would judge has a [phase NAME] row */
		snprintf(c->who, sizeof(c->who), "every phase has a [phase NAME] limit of its own");
	else
		report_check_empty(c);
}

void report_coll_data_check(struct report *rep)
{
	struct coll_set cs;
	struct check *c;
	char buf[300], sz[32];
	long long wrong = 0;
	int i, j;

	if (report_coll_build(rep->runs, rep->nruns, &cs))
		rep->oom = 1;	/* said; the command fails */
	if (!cs.n) {
		report_coll_release(&cs);
		return;
	}
	c = report_check_new(rep, "collectives return the right data, every lane and size");
	snprintf(c->limit, sizeof(c->limit), "0 wrong");
	for (i = 0; i < cs.n; i++) {
		const struct coll_series *s = &cs.s[i];

		if (rcoll_rails_there(&cs, s))
			continue;
		for (j = 0; j < s->npt; j++) {
			const struct coll_pt *p = &s->pt[j];

			if (p->wrong < 0)
				continue;
			c->total++;
			wrong += p->wrong;
			if (p->wrong > 0) {
				rcoll_series_name(rep, &cs, s, buf, sizeof(buf));
				rcoll_size_str(p->size, sz, sizeof(sz));
				report_check_fail(c, "%s at %s (%lld wrong)", buf, sz, p->wrong);
			}
		}
	}
	if (c->total)
		snprintf(c->worst, sizeof(c->worst), "%lld wrong", wrong);
	else
		snprintf(c->worst, sizeof(c->worst), "not checked");
	report_coll_release(&cs);
}

void report_coll_busbw_checks(struct report *rep, const struct thresholds *t)
{
	static const char *const tests[] = { "allreduce", "alltoall" };
	struct coll_set cs;
	int k, i, j, p;

	if (report_coll_build(rep->runs, rep->nruns, &cs))
		rep->oom = 1;	/* said; the command fails */
	for (k = 0; k < 2; k++) {
		double lim = thresholds_get(t, tests[k], "min_busbw_gbps", NAN);

		if (!isnan(lim))
			busbw_check(rep, &cs, tests[k], lim, NULL, t);
	}
	for (i = 0; t && i < t->n; i++) {	/* each [phase NAME] min_busbw_gbps: its collectives */
		const char *ph = t->kv[i].phase;
		int seen = 0;

		if (!ph[0] || strcmp(t->kv[i].key, "min_busbw_gbps"))
			continue;
		for (j = 0; j < i; j++)
			seen |= !strcmp(t->kv[j].phase, ph) && !strcmp(t->kv[j].key, "min_busbw_gbps");
		for (k = 0; k < 2 && !seen; k++) {
			int has = 0;

			for (p = 0; p < cs.n && !has; p++)
				has = !strcmp(cs.phase[cs.s[p].phase], ph) && !strcmp(cs.key[cs.s[p].coll].test, tests[k]);
			if (has)
				busbw_check(rep, &cs, tests[k], t->kv[i].v, ph, t);
		}
	}
	report_coll_release(&cs);
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

	if (report_coll_build(rep->runs, rep->nruns, &cs) | report_coll_build(&rep->base, 1, &base))
		rep->oom = 1;	/* said; the command fails */
	for (i = 0; i < cs.n; i++) {
		const struct coll_series *s = &cs.s[i], *b;
		double now = 0, was = 0, worst = INFINITY, worst_size = 0, delta;
		char name[300], sz[32];
		struct check *c;
		int n = 0;

		if (rcoll_rails_there(&cs, s) || !(b = base_series(&cs, s, &base)))
			continue;	/* the sum of rails: its rails say it */
		/* nccl-tests' footer, the mean busbw, over the sizes both runs measured */
		for (j = 0; j < s->npt; j++) {
			const struct coll_pt *p = &s->pt[j], *q = rcoll_pt_at(b, p->size);

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
		rcoll_series_name(rep, &cs, s, name, sizeof(name));
		snprintf(name + strlen(name), sizeof(name) - strlen(name), " mean busbw over %d size%s", n,
			 n > 1 ? "s" : "");
		c = report_reg_new(rep, name);
		delta = (now - was) / was;
		snprintf(c->limit, sizeof(c->limit), "%.4g Gb/s", was);
		snprintf(c->worst, sizeof(c->worst), "%.4g Gb/s (%+.1f%%)", now, 100 * delta);
		c->total = 1;
		if (delta < -rep->tolerance) {
			rcoll_size_str(worst_size, sz, sizeof(sz));
			report_check_fail(c, "down by %.1f%% (tolerance %.0f%%), most at %s (%+.1f%%)", 100 * -delta,
					  100 * rep->tolerance, sz, 100 * (worst - 1));
		}
	}
	report_coll_release(&base);
	report_coll_release(&cs);
}
