/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What `fabscope run` concludes from its records: a summary per phase and
 * lane, and the suspects.
 *
 * Within one phase, test and lane (rail/plane), a bandwidth result is "low"
 * when it is under low_frac (default 0.5) of a reference median.  Then:
 *   - a node whose results are low with at least 3/4 of its peers (and at
 *     least 2 of them), the reference being the median of the results that
 *     do not involve it, is the suspect: its NIC, cable or leaf port on that
 *     rail, since every path through it is slow;
 *   - a low result between two nodes that are not suspects, against the
 *     median of the results without suspect nodes, names that pair: the
 *     path between them (a spine link, an ECMP collision);
 *   - a lane whose median is under low_frac of the median of the phase's
 *     lanes names the rail (its leaves).
 * Latency is judged the other way round (high is bad, over 1/low_frac of
 * the median p50).  With two nodes only a pair can be named.
 *
 * A latency pair stands on one measurement, which a busy host can spoil:
 * at the end of the run the coordinator measures it again (coord-retest.c;
 * a record with retest_of, the key of the job it repeats).  Re-test records
 * are no part of the groups above; a pair whose re-test is still high
 * against the same reference stays a suspect ("re-tested: first p50 X,
 * re-test p50 Y"), one whose re-test is not goes to the not-confirmed list.
 * Every other suspect of the results says "not re-tested" (and why, when
 * run.json's retest object tells: --no-retest, over --retest-max, ...).
 *
 * The collectives (allreduce, alltoall: one record per lane and size, from
 * rank 0, with every rank's endpoint) are judged per phase and test at the
 * largest size that two lanes or more measured: a lane whose busbw is under
 * low_frac of the lanes' median names the rail.  Any wrong element is a
 * failure (kind "wrong-data"), not a suspect: data was corrupted.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/lanes.h"
#include "../core/record.h"
#include "../core/units.h"
#include "analyze.h"
#include "store.h"

/* A re-test index: the store's re-tests sorted by (job, src, dst, place). */
struct rtix {
	struct rstore_rt *r;
	size_t n;
};

static int rt_cmp(const void *a, const void *b)
{
	const struct rstore_rt *x = a, *y = b;

	if (x->of != y->of)
		return x->of < y->of ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* O(R log R) */
static void rt_index(const struct rstore *st, struct rtix *ix)
{
	ix->n = 0;
	if (!(ix->r = fs_reallocarray(NULL, st->nrt ? st->nrt : 1, sizeof(*ix->r)))) {
		fs_err_env("out of memory indexing the re-tests: none judged");
		return;
	}
	if (st->nrt)	/* (st->rt is NULL without re-tests: memcpy takes no NULL, even for 0 bytes) */
		memcpy(ix->r, st->rt, st->nrt * sizeof(*ix->r));
	ix->n = st->nrt;
	if (ix->n > 1)
		qsort(ix->r, ix->n, sizeof(*ix->r), rt_cmp);
}

/* The last re-test of job's pair src -> dst (interned ids), or NULL: O(log R). */
static const struct rstore_rt *rt_find(const struct rtix *ix, int job, int src, int dst)
{
	struct rstore_rt key = { .of = job, .src = src, .dst = dst, .k = 0 };
	size_t lo = 0, hi = ix->n;
	const struct rstore_rt *best = NULL;

	if (job < 0)
		return NULL;
	while (lo < hi) {	/* the first not below (job, src, dst) */
		size_t mid = lo + (hi - lo) / 2;

		if (rt_cmp(&ix->r[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < ix->n && ix->r[lo].of == job && ix->r[lo].src == src && ix->r[lo].dst == dst; lo++)
		best = &ix->r[lo];
	return best;
}

/* One phase, test and lane of the store, as judged. */
struct group {
	const struct rstore *st;
	const char *phase, *test;
	int phase_id;
	int rail, plane;
	const struct rstore_res *r;
	int n;
	size_t first;		/* where its phase first appears */
	double median;
};

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_of(const double *v, int n)
{
	double *c = malloc((size_t)(n ? n : 1) * sizeof(*c)), m;

	if (n > 0)	/* (v may be NULL when there is nothing) */
		memcpy(c, v, (size_t)n * sizeof(*c));
	qsort(c, (size_t)n, sizeof(*c), dbl_cmp);
	m = !n ? 0 : n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

static double group_median(struct group *g)
{
	double *v = malloc((size_t)(g->n ? g->n : 1) * sizeof(*v)), m;
	int i;

	for (i = 0; i < g->n; i++)
		v[i] = g->r[i].v;
	m = median_of(v, g->n);
	free(v);
	return m;
}

static const char *src_of(const struct group *g, const struct rstore_res *r)
{
	return rstore_str(g->st, r->s);
}

static const char *dst_of(const struct group *g, const struct rstore_res *r)
{
	return rstore_str(g->st, r->d);
}

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	int c;

	if (x->first != y->first)	/* first: where the phase first appears */
		return x->first < y->first ? -1 : 1;
	if ((c = strcmp(x->test, y->test)))
		return c;
	return x->rail != y->rail ? x->rail - y->rail : x->plane - y->plane;
}

/* The store's groups, with their medians, phases in order of appearance,
 * then test, rail, plane. */
static struct group *collect(const struct rstore *st, int *ngroups)
{
	struct group *g = fs_reallocarray(NULL, st->ng ? st->ng : 1, sizeof(*g));
	size_t i, j;

	*ngroups = 0;
	if (!g) {
		fs_err_env("out of memory judging the records");
		return NULL;
	}
	for (i = 0; i < st->ng; i++) {
		const struct rstore_group *sg = &st->g[i];

		g[i].st = st;
		g[i].phase_id = sg->phase;
		g[i].phase = rstore_str(st, sg->phase);
		g[i].test = sg->test == RSTORE_BW ? "bw" : "lat";
		g[i].rail = sg->rail;
		g[i].plane = sg->plane;
		g[i].r = sg->r;
		g[i].n = (int)sg->n;
		g[i].first = sg->first;
		g[i].median = group_median(&g[i]);
	}
	for (i = 0; i < st->ng; i++)	/* a phase's rank: its earliest record */
		for (j = 0; j < st->ng; j++)
			if (g[j].phase_id == g[i].phase_id && g[j].first < g[i].first)
				g[i].first = g[j].first;
	if (st->ng > 1)
		qsort(g, st->ng, sizeof(*g), group_cmp);
	*ngroups = (int)st->ng;
	return g;
}

static int is_low_ref(const struct group *g, double v, double ref, double low_frac)
{
	return !strcmp(g->test, "bw") ? v < low_frac * ref : v > ref / low_frac;
}

static const char *unit_of(const struct group *g)
{
	return !strcmp(g->test, "bw") ? "Gb/s" : "us p50";
}

/* A suspect (its object is appended to out, and returned, borrowed). */
static json_t *add(json_t *out, const char *kind, const struct group *g, const char *node,
		   const char *peer, double value, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
static json_t *add(json_t *out, const char *kind, const struct group *g, const char *node,
		   const char *peer, double value, const char *fmt, ...)
{
	char ev[600];
	va_list ap;
	json_t *s;

	va_start(ap, fmt);
	vsnprintf(ev, sizeof(ev), fmt, ap);
	va_end(ap);
	s = json_pack("{ss,ss,ss,si,si,ss?,ss?,sf,sf,ss}",
		"kind", kind, "phase", g->phase, "test", g->test, "rail", g->rail, "plane", g->plane,
		"node", node, "peer", peer, "value", value, "lane_median", g->median, "evidence", ev);
	json_array_append_new(out, s);
	return s;
}

/* How the analysis knows of re-tests: the records, and run.json's retest
 * object ({"off": WHY} or {"max": K, "skipped": {JOB: WHY}}; may be NULL). */
struct rtctx {
	struct rtix ix;
	json_t *info;
	json_t *not_confirmed;	/* where a pair that was fast on its re-test goes */
};

/* A suspect's "retest" and "confirmation": not re-tested (why, when said). */
static void not_retested(json_t *s, const char *why)
{
	char txt[400];

	if (why)
		snprintf(txt, sizeof(txt), "not re-tested (%s)", why);
	else
		snprintf(txt, sizeof(txt), "not re-tested");
	json_object_set_new(s, "retest", json_pack("{ss}", "status", "not-retested"));
	if (why)
		json_object_set_new(json_object_get(s, "retest"), "why", json_string(why));
	json_object_set_new(s, "confirmation", json_string(txt));
}

/* A latency pair suspect s (the last of out), first measured by r against
 * ref: its re-test confirms it, or moves it to the not-confirmed list. */
static void pair_retest(const struct group *g, const struct rstore_res *r, double ref, double low_frac,
			json_t *out, json_t *s, struct rtctx *rc)
{
	const char *job = rstore_str(g->st, r->job), *dir = rstore_str(g->st, r->dir);
	const struct rstore_rt *t;
	char txt[700];

	if (job)
		json_object_set_new(s, "job", json_string(job));
	if (r->round)
		json_object_set_new(s, "round", json_integer(r->round));
	if (dir)
		json_object_set_new(s, "dir", json_string(dir));
	if (strcmp(g->test, "lat")) {
		not_retested(s, NULL);
		return;
	}
	t = rt_find(&rc->ix, r->job, r->s, r->d);
	if (!t) {
		json_t *skipped = json_object_get(rc->info, "skipped");
		const char *why = json_string_value(json_object_get(rc->info, "off"));

		if (!why && job)
			why = json_string_value(json_object_get(skipped, job));
		not_retested(s, why);
		return;
	}
	if (t->error >= 0) {
		snprintf(txt, sizeof(txt), "the re-test failed: %s", rstore_str(g->st, t->error));
		not_retested(s, txt);
		json_object_set_new(json_object_get(s, "retest"), "status", json_string("failed"));
		return;
	}
	json_object_set_new(s, "retest", json_pack("{ss,sf,sf,sf}", "status", "confirmed", "first", r->v,
						   "retest", t->v, "reference", ref));
	if (is_low_ref(g, t->v, ref, low_frac)) {
		snprintf(txt, sizeof(txt), "re-tested: first p50 %.4g us, re-test p50 %.4g us", r->v, t->v);
		json_object_set_new(s, "confirmation", json_string(txt));
		return;
	}
	json_object_set_new(json_object_get(s, "retest"), "status", json_string("not-confirmed"));
	snprintf(txt, sizeof(txt), "not confirmed (re-test p50 %.4g us, first p50 %.4g us)", t->v, r->v);
	json_object_set_new(s, "confirmation", json_string(txt));
	json_array_append(rc->not_confirmed, s);
	json_array_remove(out, json_array_size(out) - 1);
}


/* The median of the sorted s[0..n) without the elements at the ascending
 * positions pos[0..np) (np < n): the k-th of the rest is s[k + the removed
 * positions at or before it], found by one walk; O(np). */
static double kth_without(const double *s, const size_t *pos, size_t np, size_t k)
{
	size_t i = k, j;

	for (j = 0; j < np && pos[j] <= i; j++)
		i++;
	return s[i];
}

static double median_without(const double *s, size_t n, const size_t *pos, size_t np)
{
	size_t m = n - np;

	return m % 2 ? kth_without(s, pos, np, m / 2) :
	       (kth_without(s, pos, np, m / 2 - 1) + kth_without(s, pos, np, m / 2)) / 2;
}

/* The first position in the sorted s[0..n) of a value not below v. */
static size_t lower_bound(const double *s, size_t n, double v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* One lane's nodes (local ids in order of first appearance) and, per node,
 * the results through it (a result of a node with itself twice, as it
 * counts both ends), in CSR form: node j's are idx[start[j]..start[j+1]). */
struct lane_nodes {
	int *gid;		/* local id -> interned id */
	int *src, *dst;		/* per result: the local ids of its ends */
	size_t *start, *idx;
	int nn;
	double *sorted;		/* the lane's values, sorted once */
	size_t *pos;		/* scratch: positions of a node's results in sorted */
	double *vals;		/* scratch: a node's values */
};

static void lane_nodes_release(struct lane_nodes *ln, int *local)
{
	int j;

	for (j = 0; local && j < ln->nn; j++)
		local[ln->gid[j]] = -1;
	free(ln->gid);
	free(ln->src);
	free(ln->dst);
	free(ln->start);
	free(ln->idx);
	free(ln->sorted);
	free(ln->pos);
	free(ln->vals);
	memset(ln, 0, sizeof(*ln));
}

/* local[] (one slot per interned name, -1 when not in this lane) maps the
 * interned ids to local ones while the lane is judged; 0 or -ENOMEM. */
static int lane_nodes_init(struct lane_nodes *ln, const struct group *g, int *local)
{
	size_t n = (size_t)g->n, i, *fill;
	int e;

	memset(ln, 0, sizeof(*ln));
	ln->gid = malloc((n ? 2 * n : 1) * sizeof(*ln->gid));
	ln->src = malloc((n ? n : 1) * sizeof(*ln->src));
	ln->dst = malloc((n ? n : 1) * sizeof(*ln->dst));
	ln->idx = malloc((n ? 2 * n : 1) * sizeof(*ln->idx));
	ln->sorted = malloc((n ? n : 1) * sizeof(*ln->sorted));
	ln->pos = malloc((n ? 2 * n : 1) * sizeof(*ln->pos));
	ln->vals = malloc((n ? 2 * n : 1) * sizeof(*ln->vals));
	if (!ln->gid || !ln->src || !ln->dst || !ln->idx || !ln->sorted || !ln->pos || !ln->vals)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		int ends[2] = { g->r[i].s, g->r[i].d }, *to[2] = { &ln->src[i], &ln->dst[i] };

		for (e = 0; e < 2; e++) {
			if (local[ends[e]] < 0) {
				local[ends[e]] = ln->nn;
				ln->gid[ln->nn++] = ends[e];
			}
			*to[e] = local[ends[e]];
		}
		ln->sorted[i] = g->r[i].v;
	}
	if (!(ln->start = calloc((size_t)ln->nn + 1, sizeof(*ln->start))) ||
	    !(fill = calloc((size_t)ln->nn + 1, sizeof(*fill))))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ln->start[ln->src[i] + 1]++;
		ln->start[ln->dst[i] + 1]++;
	}
	for (e = 0; e < ln->nn; e++)
		ln->start[e + 1] += ln->start[e];
	for (i = 0; i < n; i++) {
		ln->idx[ln->start[ln->src[i]] + fill[ln->src[i]]++] = i;
		ln->idx[ln->start[ln->dst[i]] + fill[ln->dst[i]]++] = i;
	}
	free(fill);
	qsort(ln->sorted, n, sizeof(*ln->sorted), dbl_cmp);
	return 0;
}

/* The median of the lane's results that do not involve node j (the lane
 * median when every one does): from the one sorted array, without j's
 * results, whose positions are found by value; O(d log n) for d results. */
static double node_ref(const struct group *g, struct lane_nodes *ln, int j)
{
	size_t a = ln->start[j], b = ln->start[j + 1], k, nr = 0, run = 0;

	for (k = a; k < b; k++)	/* a result with itself is there twice: once is enough */
		if (k == a || ln->idx[k] != ln->idx[k - 1])
			ln->vals[nr++] = g->r[ln->idx[k]].v;
	if (nr == (size_t)g->n)
		return g->median;
	qsort(ln->vals, nr, sizeof(*ln->vals), dbl_cmp);
	for (k = 0; k < nr; k++) {	/* equal values take the next equal places */
		run = k && !dbl_cmp(&ln->vals[k], &ln->vals[k - 1]) ? run + 1 : 0;
		ln->pos[k] = lower_bound(ln->sorted, (size_t)g->n, ln->vals[k]) + run;
	}
	return median_without(ln->sorted, (size_t)g->n, ln->pos, nr);
}

/* The median of the results without any suspect node (the lane median when
 * none is left). */
static double pair_ref(const struct group *g, const struct lane_nodes *ln, const int *suspect)
{
	double *v = malloc((size_t)(g->n ? g->n : 1) * sizeof(*v)), m;
	int i, n = 0;

	if (!v)
		return g->median;
	for (i = 0; i < g->n; i++)
		if (!suspect[ln->src[i]] && !suspect[ln->dst[i]])
			v[n++] = g->r[i].v;
	m = n ? median_of(v, n) : g->median;
	free(v);
	return m;
}

/* Node j against the results that do not involve it: a suspect (added to
 * out) when low with at least 3/4 of its peers and 2 of them. */
static int judge_node(const struct group *g, struct lane_nodes *ln, int j, double low_frac, const char *lane,
		      json_t *out)
{
	size_t a = ln->start[j], b = ln->start[j + 1], k;
	int npairs = (int)(b - a), nlow = 0;
	double ref = node_ref(g, ln, j), m;
	const char *name = rstore_str(g->st, ln->gid[j]);

	for (k = a; k < b; k++)
		nlow += is_low_ref(g, g->r[ln->idx[k]].v, ref, low_frac);
	if (nlow < 2 || 4 * nlow < 3 * npairs)
		return 0;
	for (k = a; k < b; k++)
		ln->vals[k - a] = g->r[ln->idx[k]].v;
	m = median_of(ln->vals, npairs);
	not_retested(add(out, "node", g, name, NULL, m,
	    "%s %s: %s with %d of %d peers (median %.3g %s against %.3g between the others): "
	    "its NIC, cable or leaf port on %s",
	    name, lane, !strcmp(g->test, "bw") ? "slow" : "high latency", nlow, npairs,
	    m, unit_of(g), ref, lane), NULL);
	return 1;
}

/* local: see lane_nodes_init */
static void judge_group(const struct group *g, int *local, double low_frac, json_t *out, struct rtctx *rc)
{
	struct lane_nodes ln;
	int *suspect = NULL, i, j;
	double ref;
	char lane[64];

	fs_lane_name(g->rail, g->plane, lane, sizeof(lane));
	if (lane_nodes_init(&ln, g, local) ||
	    !(suspect = calloc((size_t)(ln.nn ? ln.nn : 1), sizeof(*suspect)))) {
		fs_err_env("out of memory judging %s %s %s", g->phase, g->test, lane);
		lane_nodes_release(&ln, local);
		return;
	}
	for (j = 0; j < ln.nn && ln.nn > 2; j++)
		suspect[j] = judge_node(g, &ln, j, low_frac, lane, out);
	/* a pair against the results without the suspect nodes */
	ref = pair_ref(g, &ln, suspect);
	for (i = 0; i < g->n; i++) {
		if (!is_low_ref(g, g->r[i].v, ref, low_frac))
			continue;
		if (suspect[ln.src[i]] || suspect[ln.dst[i]])
			continue;	/* explained by a suspect node */
		pair_retest(g, &g->r[i], ref, low_frac, out,
			    add(out, "pair", g, src_of(g, &g->r[i]), dst_of(g, &g->r[i]), g->r[i].v,
				"%s -> %s on %s: %.3g %s against a median of %.3g: the path between them "
				"(a spine link, or flows colliding on one)",
				src_of(g, &g->r[i]), dst_of(g, &g->r[i]), lane, g->r[i].v, unit_of(g), ref), rc);
	}
	lane_nodes_release(&ln, local);
	free(suspect);
}

/* The PFC probe's ports: a storm, or pauses before ECN/CNP, name the node. */
static void pfc_suspects(json_t *recs, json_t *out)
{
	size_t k, i;
	json_t *rec, *pr;

	json_array_foreach(recs, k, rec) {
		const char *node = record_str(rec, "src.node", "?"), *ifn = record_str(rec, "iface", "?");
		char ev[600];
		int storm = 0;

		if (strcmp(record_str(rec, "test", ""), "pfc") || strcmp(record_str(rec, "status", ""), "ok"))
			continue;
		json_array_foreach(json_object_get(rec, "priorities"), i, pr) {
			const char *st = record_str(pr, "storm", "none");
			int p = (int)record_num(pr, "prio", -1);

			if (strcmp(st, "none")) {
				snprintf(ev, sizeof(ev), "%s %s: PFC storm on priority %d (%s), paused over the "
					 "storm threshold for %d intervals in a row: a stuck receiver or a pause loop",
					 node, ifn, p, st, (int)record_num(pr, "storm_run", 0));
				storm = 1;
			} else if (!strcmp(record_str(pr, "ecn_first", ""), "no") &&
				   record_num(pr, "rx_frames", 0) + record_num(pr, "tx_frames", 0) > 0) {
				snprintf(ev, sizeof(ev), "%s %s: PFC paused priority %d before ECN/CNP rose: "
					 "ECN marking (switch thresholds) or DCQCN is not acting first", node, ifn, p);
			} else {
				continue;
			}
			json_array_append_new(out, json_pack("{ss,ss,ss,si,si,ss,sf,ss}", "kind",
				storm ? "pfc-storm" : "pfc-before-ecn", "phase", record_str(rec, "phase", "-"),
				"test", "pfc", "rail", (int)record_num(rec, "src.rail", 0),
				"plane", (int)record_num(rec, "src.plane", 0), "node", node, "value", (double)p,
				"evidence", ev));
		}
	}
}

/* ---- the collectives ---- */

struct crow {
	const char *phase, *test;
	int rail, plane, ranks;
	double size, busbw, algbw, time_us, wrong;
	size_t first;		/* where its phase first appears */
};

static int is_coll(json_t *rec)
{
	const char *t = record_str(rec, "test", "");

	return (!strcmp(t, "allreduce") || !strcmp(t, "alltoall")) && record_str(rec, "phase", NULL) &&
	       !strcmp(record_str(rec, "status", ""), "ok") && !strcmp(record_str(rec, "scope", ""), "aggregate") &&
	       !isnan(record_num(rec, "metrics.busbw_gbps", NAN));
}

static int crow_cmp(const void *a, const void *b)
{
	const struct crow *x = a, *y = b;
	int c;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	if ((c = strcmp(x->test, y->test)))
		return c;
	if (x->rail != y->rail)
		return x->rail - y->rail;
	if (x->plane != y->plane)
		return x->plane - y->plane;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* One row per phase, test, lane and size (the last record of each), in
 * order of phase, test, lane, size. */
static struct crow *coll_rows(json_t *recs, int *nrows)
{
	struct crow *r = NULL;
	int n = 0, i;
	size_t k, alloc = 0;
	json_t *rec;

	json_array_foreach(recs, k, rec) {
		struct crow x;

		if (!is_coll(rec))
			continue;
		x.phase = record_str(rec, "phase", "");
		x.test = record_str(rec, "test", "");
		x.rail = (int)record_num(rec, "rail", record_num(rec, "endpoints.0.rail", 0));
		x.plane = (int)record_num(rec, "plane", 0);
		x.ranks = (int)record_num(rec, "ranks", 0);
		x.size = record_num(rec, "msg_size_bytes", 0);
		x.busbw = record_num(rec, "metrics.busbw_gbps", 0);
		x.algbw = record_num(rec, "metrics.algbw_gbps", 0);
		x.time_us = record_num(rec, "metrics.time_us", 0);
		x.wrong = record_num(rec, "metrics.wrong", -1);
		x.first = k;
		for (i = 0; i < n; i++) {
			if (!strcmp(r[i].phase, x.phase) && x.first > r[i].first)
				x.first = r[i].first;
			if (!strcmp(r[i].phase, x.phase) && !strcmp(r[i].test, x.test) && r[i].rail == x.rail &&
			    r[i].plane == x.plane && r[i].size == x.size)
				break;
		}
		if (i < n) {	/* measured again (--resume): the last one counts */
			x.first = r[i].first;
			r[i] = x;
			continue;
		}
		if (FS_ALLOC_GROW(r, (size_t)n + 1, alloc)) {
			fs_err_env("out of memory reading the collectives' records: %d rows judged", n);
			break;
		}
		r[n++] = x;
	}
	if (n > 1)
		qsort(r, (size_t)n, sizeof(*r), crow_cmp);
	*nrows = n;
	return r;
}

static void coll_suspects(json_t *recs, double low_frac, json_t *out)
{
	int n, i, j;
	struct crow *r = coll_rows(recs, &n);

	for (i = 0; i < n; i++) {	/* wrong data: a failure */
		char lane[64], sz[32], ev[400];

		if (!(r[i].wrong > 0))
			continue;
		fs_lane_name(r[i].rail, r[i].plane, lane, sizeof(lane));
		units_format_size((uint64_t)r[i].size, sz, sizeof(sz));
		snprintf(ev, sizeof(ev), "%s %s: %.0f wrong element%s at %s (%d ranks): the data check failed; "
			 "a rank, its NIC or the fabric on %s corrupted data", r[i].test, lane, r[i].wrong,
			 r[i].wrong == 1 ? "" : "s", sz, r[i].ranks, lane);
		json_array_append_new(out, json_pack("{ss,ss,ss,si,si,sf,ss}", "kind", "wrong-data",
			"phase", r[i].phase, "test", r[i].test, "rail", r[i].rail, "plane", r[i].plane,
			"value", r[i].wrong, "evidence", ev));
	}
	/* slow lanes: per phase and test, at the largest size two lanes measured */
	for (i = 0; i < n; i = j) {
		double best = -1, *v, med;
		int k, nv = 0, lanes;

		for (j = i; j < n && !strcmp(r[j].phase, r[i].phase) && !strcmp(r[j].test, r[i].test); j++)
			;
		for (k = i; k < j; k++) {	/* the largest size on two lanes or more */
			int m, on = 0;

			for (m = i; m < j; m++)
				on += r[m].size == r[k].size;
			if (on >= 2 && r[k].size > best)
				best = r[k].size;
		}
		if (best < 0)
			continue;
		v = malloc((size_t)(j - i) * sizeof(*v));
		for (k = i; k < j; k++)
			if (r[k].size == best)
				v[nv++] = r[k].busbw;
		med = median_of(v, nv);
		free(v);
		lanes = nv;
		for (k = i; k < j; k++) {
			struct group g;
			char lane[64], sz[32];

			if (r[k].size != best || !(r[k].busbw < low_frac * med))
				continue;
			memset(&g, 0, sizeof(g));
			g.phase = r[k].phase;
			g.test = r[k].test;
			g.rail = r[k].rail;
			g.plane = r[k].plane;
			g.median = med;
			fs_lane_name(r[k].rail, r[k].plane, lane, sizeof(lane));
			units_format_size((uint64_t)best, sz, sizeof(sz));
			add(out, "lane", &g, NULL, NULL, r[k].busbw,
			    "%s as a whole: %s busbw %.3g Gb/s at %s against a median of %.3g over the %d lanes "
			    "of the phase: the leaves or the spine uplinks of %s, or a slow NIC on it",
			    lane, r[k].test, r[k].busbw, sz, med, lanes, lane);
		}
	}
	free(r);
}

long analyze_wrong(const struct rstore *st, double *elements)
{
	json_t *recs = st->kept;
	long n = 0;
	size_t k;
	json_t *rec;

	*elements = 0;
	json_array_foreach(recs, k, rec) {
		double w;

		if (!is_coll(rec) || !((w = record_num(rec, "metrics.wrong", 0)) > 0))
			continue;
		n++;
		*elements += w;
	}
	return n;
}

json_t *analyze_suspects_retest(const struct rstore *st, double low_frac, json_t *retest_info,
				json_t **not_confirmed)
{
	int ng, i, j, *local;
	size_t nnames = st->str.n;
	struct group *g;
	json_t *out = json_array();
	struct rtctx rc = { .info = retest_info, .not_confirmed = json_array() };

	g = collect(st, &ng);
	rt_index(st, &rc.ix);
	if (!(local = fs_reallocarray(NULL, nnames ? nnames : 1, sizeof(*local))))
		fs_err_env("out of memory judging the records");
	for (i = 0; local && i < (int)nnames; i++)
		local[i] = -1;
	for (i = 0; local && i < ng; i++)
		judge_group(&g[i], local, low_frac, out, &rc);
	/* whole lanes against the other lanes of the same phase and test */
	for (i = 0; i < ng; i++) {
		double *m = malloc((size_t)ng * sizeof(*m)), phase_median;
		int n = 0;

		for (j = 0; j < ng; j++)
			if (!strcmp(g[j].phase, g[i].phase) && !strcmp(g[j].test, g[i].test))
				m[n++] = g[j].median;
		phase_median = median_of(m, n);
		free(m);
		if (n >= 2 && (!strcmp(g[i].test, "bw") ? g[i].median < low_frac * phase_median :
			       g[i].median > phase_median / low_frac)) {
			char lane[64];

			fs_lane_name(g[i].rail, g[i].plane, lane, sizeof(lane));
			not_retested(add(out, "lane", &g[i], NULL, NULL, g[i].median,
			    "%s as a whole: median %.3g %s against %.3g on the other lanes: "
			    "the leaves or the spine uplinks of %s", lane, g[i].median, unit_of(&g[i]),
			    phase_median, lane), NULL);
		}
	}
	free(g);
	free(local);
	free(rc.ix.r);
	pfc_suspects(st->kept, out);
	coll_suspects(st->kept, low_frac, out);
	*not_confirmed = rc.not_confirmed;
	return out;
}

void analyze_summary(FILE *f, const struct rstore *st)
{
	int ng, i, j;
	struct group *g = collect(st, &ng);
	json_t *recs = st->kept;

	if (ng)
		fprintf(f, "%-20s %-4s %-14s %6s %12s %12s %12s\n", "phase", "test", "lane", "pairs",
			"min", "median", "max");
	for (i = 0; i < ng; i++) {
		double lo = INFINITY, hi = -INFINITY;
		char lane[64];

		for (j = 0; j < g[i].n; j++) {
			if (g[i].r[j].v < lo)
				lo = g[i].r[j].v;
			if (g[i].r[j].v > hi)
				hi = g[i].r[j].v;
		}
		fs_lane_name(g[i].rail, g[i].plane, lane, sizeof(lane));
		fprintf(f, "%-20s %-4s %-14s %6d %12.4g %12.4g %12.4g  %s\n", g[i].phase, g[i].test,
			lane, g[i].n, lo, g[i].median, hi, unit_of(&g[i]));
	}
	free(g);
	{	/* the collectives: busbw per lane and size */
		struct crow *r = coll_rows(recs, &ng);

		if (ng)
			fprintf(f, "%-20s %-9s %-14s %8s %5s %12s %12s %12s %7s\n", "phase", "test", "lane", "size",
				"ranks", "busbw_gbps", "algbw_gbps", "time_us", "wrong");
		for (i = 0; i < ng; i++) {
			char lane[64], sz[32], wr[32];

			fs_lane_name(r[i].rail, r[i].plane, lane, sizeof(lane));
			units_format_size((uint64_t)r[i].size, sz, sizeof(sz));
			if (r[i].wrong < 0)
				snprintf(wr, sizeof(wr), "-");
			else
				snprintf(wr, sizeof(wr), "%.0f", r[i].wrong);
			fprintf(f, "%-20s %-9s %-14s %8s %5d %12.4g %12.4g %12.4g %7s\n", r[i].phase, r[i].test,
				lane, sz, r[i].ranks, r[i].busbw, r[i].algbw, r[i].time_us, wr);
		}
		free(r);
	}
}

void analyze_print(FILE *f, json_t *suspects, json_t *not_confirmed)
{
	size_t i;
	json_t *s;
	int n = 0;

	json_array_foreach(suspects, i, s) {
		int failed = !strcmp(record_str(s, "kind", ""), "wrong-data");
		const char *how = record_str(s, "confirmation", NULL);

		fprintf(f, "%s: [%s] %s%s%s\n", failed ? "failed" : "suspect",
			json_string_value(json_object_get(s, "phase")),
			json_string_value(json_object_get(s, "evidence")), how ? "; " : "", how ? how : "");
		n += !failed;
	}
	json_array_foreach(not_confirmed, i, s)
		fprintf(f, "not confirmed: [%s] %s; %s\n", json_string_value(json_object_get(s, "phase")),
			json_string_value(json_object_get(s, "evidence")), record_str(s, "confirmation", ""));
	if (!n)
		fprintf(f, "suspects: none\n");
}
