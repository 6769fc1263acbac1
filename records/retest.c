/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a suspect's re-tests say of it (see analyze.c; fleet/coord-retest.c
 * runs them at the end of the run, and names the suspect in each record's
 * retest_for, the role of the measurement in retest_role).  Each is judged
 * against the reference the suspect itself was judged against:
 *
 *   pair   confirmed when the pair is low on both of its re-tests (again,
 *          then again-2, the control measured between them); then each end
 *          measured with two fresh peers (nodes of the lane under no
 *          suspicion) splits the blame: an end low with both of them too
 *          is the end at fault (its NIC, cable or leaf port), neither
 *          (each fine with one) is the path between them, both is both
 *          ends.  Not confirmed when the pair is fine on both;
 *          inconclusive when one re-test is low and the other is not (a
 *          burst on the hosts spoils one measurement, never two with the
 *          control between them unseen).
 *   node   confirmed when low with every fresh peer measured, two at least;
 *          not confirmed when fine with one of them.
 *   lane   confirmed when other pairs of the lane (or its collective, again)
 *          are low again as a whole (their median); not confirmed if not.
 *
 * Each is judged against what the fabric gave at the same moment too: a
 * control (a pair of fresh nodes, another lane's pair or collective)
 * measured with the re-test.  A measurement is low when it is under both
 * the reference and the control (by low_frac; over them for latency), so
 * a suspect that stands out against what the fabric gives now is confirmed
 * even when the whole machine is slower than at first; one low against the
 * reference but not against a control that is as far off is inconclusive
 * (the hosts or the fabric were busy while it was re-tested).
 *
 * A suspect whose re-test failed, or that was not re-tested (why: the
 * coordinator's run.json retest object, or the kind's own reason), stays a
 * suspect, saying so; one not confirmed goes to a list of its own, with
 * both measurements.  Older directories' latency re-tests (retest_of, the
 * job they repeat) are judged as a pair's "again", and a pair re-tested by
 * an older fabscope (no again-2) on its one re-test.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/record.h"
#include "analyze-int.h"

/* The re-tests by (for_id, of, src, dst, place). */
struct rtix {
	const struct rstore *st;
	struct rstore_rt *r;
	size_t n;
};

static int rt_cmp(const void *a, const void *b)
{
	const struct rstore_rt *x = a, *y = b;

	if (x->for_id != y->for_id)
		return x->for_id < y->for_id ? -1 : 1;
	if (x->of != y->of)
		return x->of < y->of ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* O(R log R); 0 or -1 (out of memory, said) */
static int rt_index(const struct rstore *st, struct rtix *ix)
{
	ix->st = st;
	ix->n = 0;
	if (!(ix->r = fs_reallocarray(NULL, st->nrt ? st->nrt : 1, sizeof(*ix->r))))
		return fs_err_env("out of memory indexing the re-tests: none judged"), -1;
	if (st->nrt)	/* (st->rt is NULL without re-tests: memcpy takes no NULL, even for 0 bytes) */
		memcpy(ix->r, st->rt, st->nrt * sizeof(*ix->r));
	ix->n = st->nrt;
	if (ix->n > 1)
		qsort(ix->r, ix->n, sizeof(*ix->r), rt_cmp);
	return 0;
}

/* The first re-test not below key in the index. */
static size_t rt_lower(const struct rtix *ix, const struct rstore_rt *key)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rt_cmp(&ix->r[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The re-tests for the suspect of id (interned), in *first, *n: O(log R) */
static void rt_for(const struct rtix *ix, int id, size_t *first, size_t *n)
{
	struct rstore_rt key = { .for_id = id, .of = -1, .src = -1, .dst = -1, .k = 0 };
	size_t i = rt_lower(ix, &key), j;

	for (j = i; id >= 0 && j < ix->n && ix->r[j].for_id == id; j++)
		;
	*first = i;
	*n = id >= 0 ? j - i : 0;
}

/* An older directory's re-test of job's pair src -> dst, or NULL. */
static const struct rstore_rt *rt_old(const struct rtix *ix, int job, int src, int dst)
{
	struct rstore_rt key = { .for_id = -1, .of = job, .src = src, .dst = dst, .k = 0 };
	size_t i = rt_lower(ix, &key);
	const struct rstore_rt *best = NULL;

	if (job < 0 || src < 0 || dst < 0)
		return NULL;
	for (; i < ix->n && ix->r[i].for_id == -1 && ix->r[i].of == job && ix->r[i].src == src &&
	     ix->r[i].dst == dst; i++)
		best = &ix->r[i];
	return best;
}

#define lookup rstore_find

static int role_is(const struct rtix *ix, const struct rstore_rt *r, const char *role)
{
	const char *s = rstore_str(ix->st, r->role);

	return s ? !strcmp(s, role) : !strcmp(role, "again");
}

static const char *unit_of(const char *test)
{
	return !strcmp(test, "lat") ? "us p50" : !strcmp(test, "bw") ? "Gb/s" : "Gb/s busbw";
}

/* The suspect's retest {status, why} and confirmation "not re-tested (why)". */
static void not_retested(json_t *s, const char *status, const char *why)
{
	char txt[600];

	if (why)
		snprintf(txt, sizeof(txt), "%s: %s", !strcmp(status, "failed") ? "re-test failed" : "not re-tested", why);
	else
		snprintf(txt, sizeof(txt), "not re-tested");
	json_object_set_new(s, "retest", json_pack("{ss}", "status", status));
	if (why)
		json_object_set_new(json_object_get(s, "retest"), "why", json_string(why));
	json_object_set_new(s, "confirmation", json_string(txt));
}

/* Why the suspect s had no re-test: run.json's retest object says, else the
 * kind's own reason, else nothing is known (an older directory). */
static const char *why_not(json_t *s, json_t *info)
{
	const char *kind = record_str(s, "kind", ""), *why;
	json_t *skipped = json_object_get(info, "skipped");

	if (!strncmp(kind, "pfc", 3))
		return "the PFC probe's own finding, from the counters it sampled";
	if ((why = json_string_value(json_object_get(info, "off"))))
		return why;
	if ((why = json_string_value(json_object_get(skipped, record_str(s, "id", "")))))
		return why;
	if ((why = json_string_value(json_object_get(skipped, record_str(s, "job", "")))))
		return why;	/* (an older directory: skipped by job) */
	return NULL;
}

/* What a re-test is judged by: the suspect's reference, and the control's
 * value measured with it (NAN: no control). */
struct judge {
	const char *test;
	double ref, ctl, low_frac;
	const char *csrc, *cdst;	/* the control's pair */
};

/* Low against the reference, and against the control when there is one. */
static int is_low(const struct judge *jg, double v)
{
	return analyze_is_low(jg->test, v, jg->ref, jg->low_frac) &&
	       (isnan(jg->ctl) || analyze_is_low(jg->test, v, jg->ctl, jg->low_frac));
}

/* The suspect's control (the last re-test of role control among
 * ix->r[first..first+n)) into jg (its value in jg->ctl, NAN: none). */
static void control(const struct rtix *ix, size_t first, size_t n, struct judge *jg)
{
	size_t i;

	jg->ctl = NAN;
	jg->csrc = jg->cdst = NULL;
	for (i = first; i < first + n; i++)
		if (role_is(ix, &ix->r[i], "control") && ix->r[i].error < 0) {
			jg->ctl = ix->r[i].v;
			jg->csrc = rstore_str(ix->st, ix->r[i].src);
			jg->cdst = rstore_str(ix->st, ix->r[i].dst);
		}
}

/* Low against the reference, not against the control, and the control
 * itself low against the reference: what the fabric gave during the
 * re-test was as far off as the suspect; inconclusive (said in s). */
static int busy(json_t *s, double retest, const struct judge *jg, const char **status)
{
	char txt[600];

	if (isnan(jg->ctl) || !analyze_is_low(jg->test, retest, jg->ref, jg->low_frac) ||
	    !analyze_is_low(jg->test, jg->ctl, jg->ref, jg->low_frac))
		return 0;
	*status = "inconclusive";
	json_object_set_new(s, "retest", json_pack("{ss,sf,sf,sf,s{ss?,ss?,sf}}", "status", *status,
		"first", record_num(s, "value", NAN), "retest", retest, "reference", jg->ref, "control",
		"src", jg->csrc, "dst", jg->cdst, "value", jg->ctl));
	snprintf(txt, sizeof(txt), "inconclusive: re-test %.4g %s against %.4g, but the control %s -> %s measured "
		 "%.4g too: the hosts or the fabric were busy during the re-test; run again", retest,
		 unit_of(jg->test), jg->ref, jg->csrc ? jg->csrc : "?", jg->cdst ? jg->cdst : "?", jg->ctl);
	json_object_set_new(s, "confirmation", json_string(txt));
	return 1;
}

/* Low again, but nothing measured at the same moment says the fabric was
 * as it should be: inconclusive. */
static void no_control(json_t *s, double first, double retest, const struct judge *jg, const char **status)
{
	char txt[400];

	*status = "inconclusive";
	json_object_set_new(s, "retest", json_pack("{ss,sf,sf,sf}", "status", *status, "first", first,
						   "retest", retest, "reference", jg->ref));
	snprintf(txt, sizeof(txt), "inconclusive: %s again (%.4g %s against %.4g), but no control was measured "
		 "with it (fewer than 2 nodes of its lane under no suspicion)", !strcmp(jg->test, "lat") ? "high" : "low",
		 retest, unit_of(jg->test), jg->ref);
	json_object_set_new(s, "confirmation", json_string(txt));
}

/* "10, a control of 9.5" (or "10") into buf */
static const char *against(const struct judge *jg, char *buf, size_t len)
{
	if (isnan(jg->ctl))
		snprintf(buf, len, "%.4g", jg->ref);
	else
		snprintf(buf, len, "%.4g and a control of %.4g", jg->ref, jg->ctl);
	return buf;
}

/* the control's part of a retest object */
static void control_json(json_t *rt, const struct judge *jg)
{
	if (!isnan(jg->ctl))
		json_object_set_new(rt, "control", json_real(jg->ctl));
}

/* One measurement of a re-test, for the record and the line. */
static json_t *measured(const struct rtix *ix, const struct rstore_rt *r, const struct judge *jg, int *low)
{
	json_t *m = json_pack("{ss?,ss?}", "src", rstore_str(ix->st, r->src), "dst", rstore_str(ix->st, r->dst));

	*low = -1;
	if (r->error >= 0) {
		json_object_set_new(m, "error", json_string(rstore_str(ix->st, r->error)));
		return m;
	}
	*low = is_low(jg, r->v);
	json_object_set_new(m, "value", json_real(r->v));
	json_object_set_new(m, "low", json_boolean(*low));
	return m;
}

/* "h3 with a fresh peer h5: 0.19" (or its error) into buf */
static void fresh_text(char *buf, size_t len, const char *end, json_t *m)
{
	const char *src = record_str(m, "src", "?"), *dst = record_str(m, "dst", "?");
	const char *peer = !strcmp(src, end) ? dst : src;

	if (json_object_get(m, "error"))
		snprintf(buf, len, "%s with a fresh peer %s: failed (%s)", end, peer, record_str(m, "error", ""));
	else
		snprintf(buf, len, "%s with a fresh peer %s: %.4g%s", end, peer, record_num(m, "value", NAN),
			 json_is_true(json_object_get(m, "low")) ? " (low too)" : "");
}

/* One re-test low, the other not: a burst spoilt one of them, or the
 * fault comes and goes; inconclusive either way (said in s). */
static void split(json_t *s, double r1, double r2, const struct judge *jg, const char **status)
{
	char txt[600], ag[80];
	int l1 = is_low(jg, r1);

	*status = "inconclusive";
	json_object_set_new(s, "retest", json_pack("{ss,sf,sf,sf,sf}", "status", *status, "first",
						   record_num(s, "value", NAN), "retest", r1, "retest2", r2,
						   "reference", jg->ref));
	control_json(json_object_get(s, "retest"), jg);
	snprintf(txt, sizeof(txt), "inconclusive: %s on one re-test (%.4g %s), not on the other (%.4g) against %s: "
		 "the hosts were busy during one, or the fault comes and goes; run again",
		 !strcmp(jg->test, "lat") ? "high" : "low", l1 ? r1 : r2, unit_of(jg->test), l1 ? r2 : r1,
		 against(jg, ag, sizeof(ag)));
	json_object_set_new(s, "confirmation", json_string(txt));
}

/* "re-tests 12 and 13" (or "re-test 12": an older fabscope's one) into buf */
static void retest_values(char *buf, size_t len, const struct rstore_rt *a, const struct rstore_rt *a2)
{
	if (a2)
		snprintf(buf, len, "re-tests %.4g and %.4g", a->v, a2->v);
	else
		snprintf(buf, len, "re-test %.4g", a->v);
}

/* One end of a pair with its fresh peers (r[0..k)): each measurement into
 * fresh and its text into buf.  1: low with every one, two at least (the
 * end at fault, as a node must be); 0: fine with one (a fault of the end
 * would slow every peer); -2: low with its one fresh peer (not enough to
 * blame it); -1: none measured. */
static int end_judged(const struct rtix *ix, const struct rstore_rt **r, int k, const struct judge *jg,
		      const char *end, json_t *fresh, char *buf, size_t len)
{
	int i, low, nok = 0, nlow = 0;
	char t[300];

	*buf = 0;
	for (i = 0; i < k; i++) {
		json_t *m = measured(ix, r[i], jg, &low);
		size_t at = strlen(buf);

		fresh_text(t, sizeof(t), end, m);
		snprintf(buf + at, len - at, "%s%s", at ? "; " : "", t);
		json_array_append_new(fresh, m);
		nok += low >= 0;
		nlow += low == 1;
	}
	return !nok ? -1 : nlow < nok ? 0 : nok >= 2 ? 1 : -2;
}

/* Who a confirmed pair's fresh measurements blame (end_judged's of each end) */
static const char *blame_of(int sl, int dl, const char *node, const char *peer)
{
	if (sl == 1 && dl == 1)
		return "both ends";
	if (sl == 1)
		return node;
	if (dl == 1)
		return peer;
	if (!sl && !dl)
		return "the path between them";
	if (sl == -2 || dl == -2)
		return "not split (an end slow with its one fresh peer measured: two are needed to blame it)";
	return "not split (no fresh peer measured with each end)";
}

/* A pair: again, the control, again-2, then each end with its fresh peers. */
static void judge_pair(const struct rtix *ix, json_t *s, size_t first, size_t n, double low_frac,
		       const char **status)
{
	const char *test = record_str(s, "test", ""), *node = record_str(s, "node", "?"),
		   *peer = record_str(s, "peer", "?");
	double ref = record_num(s, "reference", NAN), v = record_num(s, "value", NAN);
	struct judge jg = { test, ref, NAN, low_frac, NULL, NULL };
	const struct rstore_rt *again = NULL, *again2 = NULL, *fs[2], *fd[2];
	json_t *rt, *fresh = json_array();
	char txt[1600], a[500] = "", b[500] = "", ag[80], rv[80];
	const char *blame;
	int low, sl, dl, ns = 0, nd = 0;
	size_t i;

	for (i = first; i < first + n; i++) {
		const struct rstore_rt *r = &ix->r[i];

		if (role_is(ix, r, "again"))
			again = r;
		else if (role_is(ix, r, "again-2"))
			again2 = r;
		else if (role_is(ix, r, "src-fresh") && ns < 2)
			fs[ns++] = r;
		else if (role_is(ix, r, "dst-fresh") && nd < 2)
			fd[nd++] = r;
	}
	if (!again) {
		*status = "not-retested";
		not_retested(s, *status, "its re-test left no record");
		json_decref(fresh);
		return;
	}
	if (again->error >= 0 || (again2 && again2->error >= 0)) {
		*status = "failed";
		not_retested(s, *status, rstore_str(ix->st, again->error >= 0 ? again->error : again2->error));
		json_decref(fresh);
		return;
	}
	control(ix, first, n, &jg);
	low = is_low(&jg, again->v);
	if (again2 && is_low(&jg, again2->v) != low) {
		split(s, again->v, again2->v, &jg, status);
		json_decref(fresh);
		return;
	}
	if (!low && (busy(s, again->v, &jg, status) || (again2 && busy(s, again2->v, &jg, status)))) {
		json_decref(fresh);
		return;
	}
	if (low && isnan(jg.ctl) && again->for_id >= 0) {	/* (an older directory's had none) */
		no_control(s, v, again->v, &jg, status);
		json_decref(fresh);
		return;
	}
	*status = low ? "confirmed" : "not-confirmed";
	rt = json_pack("{ss,sf,sf,sf}", "status", *status, "first", v, "retest", again->v, "reference", ref);
	if (again2)
		json_object_set_new(rt, "retest2", json_real(again2->v));
	control_json(rt, &jg);
	retest_values(rv, sizeof(rv), again, again2);
	sl = end_judged(ix, fs, ns, &jg, node, fresh, a, sizeof(a));
	dl = end_judged(ix, fd, nd, &jg, peer, fresh, b, sizeof(b));
	json_object_set_new(rt, "fresh", fresh);
	if (!low) {
		snprintf(txt, sizeof(txt), "not confirmed: %s %s against %s (first %.4g)", rv,
			 unit_of(test), against(&jg, ag, sizeof(ag)), v);
	} else if (!ns && !nd) {	/* (an older directory's, or a lane without a fresh node) */
		snprintf(txt, sizeof(txt), "confirmed: %s %s against %s (first %.4g)", rv,
			 unit_of(test), against(&jg, ag, sizeof(ag)), v);
	} else {
		blame = blame_of(sl, dl, node, peer);
		json_object_set_new(rt, "blame", json_string(blame == node ? "src" : blame == peer ? "dst" :
							     !strcmp(blame, "both ends") ? "both" :
							     !strncmp(blame, "the path", 8) ? "path" : "unknown"));
		snprintf(txt, sizeof(txt), "confirmed: %s %s against %s (first %.4g)%s%s%s%s; %s%s", rv,
			 unit_of(test), against(&jg, ag, sizeof(ag)), v, *a ? "; " : "", a, *b ? "; " : "", b,
			 blame == node || blame == peer ? blame : "", blame == node || blame == peer ?
			 "'s NIC, cable or leaf port" : blame);
	}
	json_object_set_new(s, "retest", rt);
	json_object_set_new(s, "confirmation", json_string(txt));
}

/* A node with fresh peers, or a lane's other pairs (or collective): the
 * measurements of role (fresh, lane) judged each (node) or by their median
 * (lane). */
static void judge_many(const struct rtix *ix, json_t *s, size_t first, size_t n, double low_frac,
		       const char *role, const char **status)
{
	const char *test = record_str(s, "test", ""), *kind = record_str(s, "kind", "");
	double ref = record_num(s, "reference", NAN), *v = malloc((n ? n : 1) * sizeof(*v)), med;
	struct judge jg = { test, ref, NAN, low_frac, NULL, NULL };
	json_t *list = json_array(), *rt;
	int nok = 0, nlow = 0, low, is_node = !strcmp(kind, "node");
	char txt[1200], err[400] = "", ag[80];
	size_t i;

	control(ix, first, n, &jg);
	for (i = first; v && i < first + n; i++) {
		const struct rstore_rt *r = &ix->r[i];

		if (!role_is(ix, r, role))
			continue;
		json_array_append_new(list, measured(ix, r, &jg, &low));
		if (low < 0) {
			snprintf(err, sizeof(err), "%s", rstore_str(ix->st, r->error));
			continue;
		}
		v[nok++] = r->v;
		nlow += low;
	}
	if (nok < (is_node ? 2 : 1)) {
		*status = json_array_size(list) ? "failed" : "not-retested";
		if (*err)
			not_retested(s, *status, err);
		else
			not_retested(s, *status, json_array_size(list) ? "fewer than 2 fresh peers measured" :
				     "its re-test left no record");
		json_decref(list);
		free(v);
		return;
	}
	med = analyze_median(v, nok);
	free(v);
	if ((is_node ? nlow == nok : is_low(&jg, med)) && isnan(jg.ctl)) {
		no_control(s, record_num(s, "value", NAN), med, &jg, status);
		json_decref(list);
		return;
	}
	if (!(is_node ? nlow == nok : is_low(&jg, med)) && busy(s, med, &jg, status)) {
		json_decref(list);
		return;
	}
	if (is_node) {
		*status = nlow == nok ? "confirmed" : "not-confirmed";
		snprintf(txt, sizeof(txt), "%s: %s with %d of %d fresh peers (median %.4g %s against %s)",
			 nlow == nok ? "confirmed" : "not confirmed", !strcmp(test, "lat") ? "high" : "low", nlow,
			 nok, med, unit_of(test), against(&jg, ag, sizeof(ag)));
	} else {
		*status = is_low(&jg, med) ? "confirmed" : "not-confirmed";
		snprintf(txt, sizeof(txt), "%s: %s again (%d measurement%s: median %.4g %s against %s)",
			 !strcmp(*status, "confirmed") ? "confirmed" : "not confirmed",
			 !strcmp(*status, "confirmed") ? (!strcmp(test, "lat") ? "high" : "low") : "not low",
			 nok, nok == 1 ? "" : "s", med, unit_of(test), against(&jg, ag, sizeof(ag)));
	}
	rt = json_pack("{ss,sf,sf,sf,so}", "status", *status, "first", record_num(s, "value", NAN), "retest", med,
		       "reference", ref, is_node ? "fresh" : "measurements", list);
	control_json(rt, &jg);
	json_object_set_new(s, "retest", rt);
	json_object_set_new(s, "confirmation", json_string(txt));
}

/* An older directory's latency pair re-test (retest_of: the job). */
static int judge_old(const struct rtix *ix, json_t *s, double low_frac, const char **status)
{
	const struct rstore *st = ix->st;
	const struct rstore_rt *t = rt_old(ix, lookup(st, record_str(s, "job", NULL)),
					   lookup(st, record_str(s, "node", NULL)), lookup(st, record_str(s, "peer", NULL)));
	size_t first;

	if (!t)
		return 0;
	first = (size_t)(t - ix->r);
	judge_pair(ix, s, first, 1, low_frac, status);
	return 1;
}

json_t *analyze_judge_retests(const struct rstore *st, json_t *sus, double low_frac, json_t *info,
			      json_t **not_confirmed)
{
	json_t *out = json_array(), *s;
	struct rtix ix;
	size_t k;

	*not_confirmed = json_array();
	if (rt_index(st, &ix))
		ix.n = 0;
	json_array_foreach(sus, k, s) {
		const char *kind = record_str(s, "kind", ""), *status = "not-retested";
		size_t first, n;

		if (!strcmp(kind, "wrong-data")) {	/* a failure: the data check is the evidence */
			json_array_append(out, s);
			continue;
		}
		rt_for(&ix, lookup(st, record_str(s, "id", NULL)), &first, &n);
		if (!n && !strcmp(kind, "pair") && judge_old(&ix, s, low_frac, &status))
			;
		else if (!n)
			not_retested(s, status, why_not(s, info));
		else if (!strcmp(kind, "pair"))
			judge_pair(&ix, s, first, n, low_frac, &status);
		else if (!strcmp(kind, "node"))
			judge_many(&ix, s, first, n, low_frac, "fresh", &status);
		else
			judge_many(&ix, s, first, n, low_frac, "lane", &status);
		json_array_append(!strcmp(status, "not-confirmed") ? *not_confirmed : out, s);
	}
	free(ix.r);
	json_decref(sus);
	return out;
}
