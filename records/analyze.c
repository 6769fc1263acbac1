/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What `fabscope run` concludes from its records: a summary per phase and
 * lane, and the suspects.
 *
 * Within one phase, test, lane (rail/plane) and message size (a sweep's
 * sizes are judged apart: a 4 KiB result is no reference for a 1 MiB one),
 * a bandwidth result is "low" when it is under low_frac (default 0.5) of a
 * reference median.  Then:
 *   - a node whose results are low with at least 3/4 of its peers (and at
 *     least 2 of them), the reference being the median of the results that
 *     do not involve it, is the suspect: its NIC, cable or leaf port on that
 *     rail, since every path through it is slow;
 *   - a low result between two nodes that are not suspects, against the
 *     median of the results without suspect nodes, names that pair: the
 *     path between them (a spine link, an ECMP collision);
 *   - a lane whose median is under low_frac of the median of the phase's
 *     lanes (at the same size) names the rail (its leaves).
 * Latency is judged the other way round (high is bad, over 1/low_frac of
 * the median p50).  With two nodes only a pair can be named.  A suspect
 * found at several sizes is named once, at the largest (its "sizes" lists
 * them all).
 *
 * Every suspect stands on one measurement, which a busy host can spoil:
 * at the end of the run the coordinator measures it again (coord-retest.c)
 * and retest.c judges what it found (confirmed, not confirmed, not
 * re-tested and why); a suspect not confirmed goes to a list of its own.
 * Each suspect has an id (kind, phase, test, lane, size, node, peer) that
 * its re-tests' records name (retest_for), and the reference it was judged
 * against, so the re-test is judged against the same one.
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
#include "analyze-int.h"
#include "analyze.h"
#include "store.h"

/* One phase, test, lane and size of the store, as judged. */
struct group {
	const struct rstore *st;
	const char *phase, *test;
	int phase_id;
	int rail, plane;
	double size;
	int sweep;		/* its phase, test and lane measured other sizes too */
	const struct rstore_res *r;
	int n;
	size_t first;		/* where its phase first appears */
	double median;
};

int analyze_dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}
#define dbl_cmp analyze_dbl_cmp

double analyze_median(const double *v, int n)
{
	double *c = malloc((size_t)(n ? n : 1) * sizeof(*c)), m;

	if (!c)
		return NAN;
	if (n > 0)	/* (v may be NULL when there is nothing) */
		memcpy(c, v, (size_t)n * sizeof(*c));
	qsort(c, (size_t)n, sizeof(*c), dbl_cmp);
	m = !n ? 0 : n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}
#define median_of analyze_median

static double group_median(struct group *g)
{
	double *v = malloc((size_t)(g->n ? g->n : 1) * sizeof(*v)), m;
	int i;

	if (!v)
		return NAN;	/* (as median_of) */
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
	if (x->rail != y->rail)
		return x->rail - y->rail;
	if (x->plane != y->plane)
		return x->plane - y->plane;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* The store's groups, with their medians, phases in order of appearance,
 * then test, rail, plane, size. */
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
		g[i].size = sg->size;
		g[i].sweep = 0;
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
	for (i = 0; i + 1 < st->ng; i++)	/* neighbours now: a sweep's sizes */
		if (g[i].phase_id == g[i + 1].phase_id && !strcmp(g[i].test, g[i + 1].test) &&
		    g[i].rail == g[i + 1].rail && g[i].plane == g[i + 1].plane)
			g[i].sweep = g[i + 1].sweep = 1;
	*ngroups = (int)st->ng;
	return g;
}

static int is_low_ref(const struct group *g, double v, double ref, double low_frac)
{
	return analyze_is_low(g->test, v, ref, low_frac);
}

/* Is r evidence at all?  A latency of too few round trips is not. */
static int judged(const struct group *g, const struct rstore_res *r)
{
	return strcmp(g->test, "lat") || r->msgs < 0 || r->msgs >= RRES_MIN_MSGS;
}

/* Is the result r low, by what it rests on: a bandwidth of m messages is low
 * only when m + 1 would still be (one message is the rate's grain). */
static int is_low_res(const struct group *g, const struct rstore_res *r, double ref, double low_frac)
{
	double v = r->v;

	if (!judged(g, r))
		return 0;
	if (!strcmp(g->test, "bw") && r->msgs > 0)
		v = v * (r->msgs + 1) / r->msgs;
	return is_low_ref(g, v, ref, low_frac);
}

int analyze_is_low(const char *test, double v, double ref, double low_frac)
{
	return !strcmp(test, "lat") ? v > ref / low_frac : v < low_frac * ref;
}

static const char *unit_of(const struct group *g)
{
	return !strcmp(g->test, "bw") ? "Gb/s" : "us p50";
}

/* " at 64K" for a group of a phase that measured several sizes, else "" */
static const char *at_size(const struct group *g, char *buf, size_t len)
{
	char sz[32];

	if (!g->sweep || !(g->size > 0))
		return "";
	if (g->size < 1024)
		snprintf(sz, sizeof(sz), "%.0f B", g->size);
	else
		units_format_size((uint64_t)g->size, sz, sizeof(sz));
	snprintf(buf, len, " at %s", sz);
	return buf;
}

/* A suspect (its object is appended to out, and returned, borrowed): its
 * id (what its re-tests name), what it is, its value and the reference it
 * was judged against. */
static json_t *add(json_t *out, const char *kind, const struct group *g, const char *node,
		   const char *peer, double value, double ref, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));
static json_t *add(json_t *out, const char *kind, const struct group *g, const char *node,
		   const char *peer, double value, double ref, const char *fmt, ...)
{
	char ev[600], id[1200];
	va_list ap;
	json_t *s;

	va_start(ap, fmt);
	vsnprintf(ev, sizeof(ev), fmt, ap);
	va_end(ap);
	analyze_suspect_id(id, sizeof(id), kind, g->phase, g->test, g->rail, g->plane, g->size, node, peer);
	s = json_pack("{ss,ss,ss,ss,si,si,ss?,ss?,sf,sf,sf,ss}", "id", id,
		"kind", kind, "phase", g->phase, "test", g->test, "rail", g->rail, "plane", g->plane,
		"node", node, "peer", peer, "value", value, "lane_median", g->median, "reference", ref,
		"evidence", ev);
	if (g->size > 0)
		json_object_set_new(s, "msg_size_bytes", json_real(g->size));
	json_array_append_new(out, s);
	return s;
}

void analyze_suspect_id(char *buf, size_t len, const char *kind, const char *phase, const char *test,
			int rail, int plane, double size, const char *node, const char *peer)
{
	snprintf(buf, len, "%s:%s:%s:rail%d.%d:%.0f:%s>%s", kind, phase, test, rail, plane, size,
		 node ? node : "", peer ? peer : "");
}

/* A pair suspect's first measurement: its job, round and direction, for
 * its re-test to repeat. */
static void pair_first(const struct group *g, const struct rstore_res *r, json_t *s)
{
	const char *job = rstore_str(g->st, r->job), *dir = rstore_str(g->st, r->dir);

	if (job)
		json_object_set_new(s, "job", json_string(job));
	if (r->round)
		json_object_set_new(s, "round", json_integer(r->round));
	if (dir)
		json_object_set_new(s, "dir", json_string(dir));
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
		      const char *onlane, json_t *out)
{
	size_t a = ln->start[j], b = ln->start[j + 1], k;
	int npairs = (int)(b - a), nlow = 0, nj;
	double ref = node_ref(g, ln, j), m;
	char unjudged[64] = "";
	const char *name = rstore_str(g->st, ln->gid[j]);

	for (k = a; k < b; k++) {	/* (a result of too few round trips is no evidence) */
		npairs -= !judged(g, &g->r[ln->idx[k]]);
		nlow += is_low_res(g, &g->r[ln->idx[k]], ref, low_frac);
	}
	if (nlow < 2 || 4 * nlow < 3 * npairs)
		return 0;
	if (npairs < (int)(b - a))
		snprintf(unjudged, sizeof(unjudged), ", %d more too short to judge", (int)(b - a) - npairs);
	nj = npairs;
	npairs = (int)(b - a);
	for (k = a; k < b; k++)
		ln->vals[k - a] = g->r[ln->idx[k]].v;
	m = median_of(ln->vals, npairs);
	add(out, "node", g, name, NULL, m, ref,
	    "%s %s: %s with %d of %d peers%s (median %.3g %s against %.3g between the others): "
	    "its NIC, cable or leaf port on %s",
	    name, onlane, !strcmp(g->test, "bw") ? "slow" : "high latency", nlow, nj,
	    unjudged, m, unit_of(g), ref, lane);
	return 1;
}

/* local: see lane_nodes_init */
static void judge_group(const struct group *g, int *local, double low_frac, json_t *out)
{
	struct lane_nodes ln;
	int *suspect = NULL, i, j;
	double ref;
	char lane[64], onlane[112], sz[48];

	fs_lane_name(g->rail, g->plane, lane, sizeof(lane));
	snprintf(onlane, sizeof(onlane), "%s%s", lane, at_size(g, sz, sizeof(sz)));
	if (lane_nodes_init(&ln, g, local) ||
	    !(suspect = calloc((size_t)(ln.nn ? ln.nn : 1), sizeof(*suspect)))) {
		fs_err_env("out of memory judging %s %s %s", g->phase, g->test, lane);
		lane_nodes_release(&ln, local);
		return;
	}
	for (j = 0; j < ln.nn && ln.nn > 2; j++)
		suspect[j] = judge_node(g, &ln, j, low_frac, lane, onlane, out);
	/* a pair against the results without the suspect nodes */
	ref = pair_ref(g, &ln, suspect);
	for (i = 0; i < g->n; i++) {
		if (!is_low_res(g, &g->r[i], ref, low_frac))
			continue;
		if (suspect[ln.src[i]] || suspect[ln.dst[i]])
			continue;	/* explained by a suspect node */
		pair_first(g, &g->r[i],
			   add(out, "pair", g, src_of(g, &g->r[i]), dst_of(g, &g->r[i]), g->r[i].v, ref,
			       "%s -> %s on %s: %.3g %s against a median of %.3g: the path between them "
			       "(a spine link, or flows colliding on one)",
			       src_of(g, &g->r[i]), dst_of(g, &g->r[i]), onlane, g->r[i].v, unit_of(g), ref));
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
			int p = record_int(pr, "prio", -1, 0, 7);
			char id[600], port[300];

			if (p < 0)
				continue;	/* no priority: nothing to name */
			if (strcmp(st, "none")) {
				snprintf(ev, sizeof(ev), "%s %s: PFC storm on priority %d (%s), paused over the "
					 "storm threshold for %d intervals in a row: a stuck receiver or a pause loop",
					 node, ifn, p, st, record_int(pr, "storm_run", 0, 0, INT_MAX));
				storm = 1;
			} else if (!strcmp(record_str(pr, "ecn_first", ""), "no") &&
				   record_num(pr, "rx_frames", 0) + record_num(pr, "tx_frames", 0) > 0) {
				snprintf(ev, sizeof(ev), "%s %s: PFC paused priority %d before ECN/CNP rose: "
					 "ECN marking (switch thresholds) or DCQCN is not acting first", node, ifn, p);
			} else {
				continue;
			}
			snprintf(port, sizeof(port), "%s prio %d", ifn, p);
			analyze_suspect_id(id, sizeof(id), storm ? "pfc-storm" : "pfc-before-ecn",
					   record_str(rec, "phase", "-"), "pfc", record_int(rec, "src.rail", 0, 0, FS_MAX_RAILS - 1),
					   record_int(rec, "src.plane", 0, 0, FS_MAX_PLANES - 1), 0, node, port);
			json_array_append_new(out, json_pack("{ss,ss,ss,ss,si,si,ss,sf,ss}", "id", id, "kind",
				storm ? "pfc-storm" : "pfc-before-ecn", "phase", record_str(rec, "phase", "-"),
				"test", "pfc", "rail", record_int(rec, "src.rail", 0, 0, FS_MAX_RAILS - 1),
				"plane", record_int(rec, "src.plane", 0, 0, FS_MAX_PLANES - 1), "node", node, "value", (double)p,
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

	struct rretest rt;

	return (!strcmp(t, "allreduce") || !strcmp(t, "alltoall")) && record_str(rec, "phase", NULL) &&
	       !strcmp(record_str(rec, "status", ""), "ok") && !strcmp(record_str(rec, "scope", ""), "aggregate") &&
	       !isnan(record_num(rec, "metrics.busbw_gbps", NAN)) && !rretest_of(rec, &rt);
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
		x.rail = record_int(rec, "rail", record_int(rec, "endpoints.0.rail", 0, 0, FS_MAX_RAILS - 1), 0, FS_MAX_RAILS - 1);
		x.plane = record_int(rec, "plane", 0, 0, FS_MAX_PLANES - 1);
		x.ranks = record_int(rec, "ranks", 0, 0, INT_MAX);
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
		if (!(v = malloc((size_t)(j - i) * sizeof(*v)))) {
			fs_err_env("out of memory judging the collectives' records: not judged");
			continue;
		}
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
			g.size = best;
			g.median = med;
			fs_lane_name(r[k].rail, r[k].plane, lane, sizeof(lane));
			units_format_size((uint64_t)best, sz, sizeof(sz));
			add(out, "lane", &g, NULL, NULL, r[k].busbw, med,
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

/* A suspect of the raw list: where it was found. */
struct sref {
	json_t *s;
	size_t at;		/* its place in the list */
	size_t first;		/* merge_sizes: the first place of its key */
};

/* suspects by kind, phase, test, lane, node and peer, then size, then place */
static int suspect_key_cmp(const void *a, const void *b)
{
	const struct sref *p = a, *q = b;
	json_t *x = p->s, *y = q->s;
	static const char *const keys[] = { "kind", "phase", "test", "node", "peer" };
	size_t k;
	int c;

	for (k = 0; k < sizeof(keys) / sizeof(*keys); k++)
		if ((c = strcmp(record_str(x, keys[k], ""), record_str(y, keys[k], ""))))
			return c;
	if ((c = record_int(x, "rail", 0, 0, 1 << 20) - record_int(y, "rail", 0, 0, 1 << 20)))
		return c;
	return record_int(x, "plane", 0, 0, 1 << 20) - record_int(y, "plane", 0, 0, 1 << 20);
}

static int suspect_size_cmp(const void *a, const void *b)
{
	const struct sref *p = a, *q = b;
	double x = record_num(p->s, "msg_size_bytes", 0), y = record_num(q->s, "msg_size_bytes", 0);
	int c = suspect_key_cmp(a, b);

	if (c)
		return c;
	if (x != y)
		return x < y ? -1 : 1;
	return p->at < q->at ? -1 : p->at > q->at;
}

static int sref_first_cmp(const void *a, const void *b)
{
	const struct sref *p = a, *q = b;

	return p->first < q->first ? -1 : p->first > q->first;
}

/* Suspects found at several sizes are named once, at the largest: out's
 * suspects of the same kind, phase, test, lane, node and peer become the
 * one of the largest size, with "sizes" (every size, ascending) and its
 * evidence saying how many others, at the place the first of them had;
 * O(S log S). */
static json_t *merge_sizes(json_t *out)
{
	size_t n = json_array_size(out), i, j, m = 0;
	struct sref *v = malloc((n ? n : 1) * sizeof(*v));
	json_t *merged = json_array();

	if (!v || !merged) {
		free(v);
		json_decref(merged);
		return out;
	}
	for (i = 0; i < n; i++)
		v[i] = (struct sref){ json_array_get(out, i), i, i };
	qsort(v, n, sizeof(*v), suspect_size_cmp);
	for (i = 0; i < n; i = j) {
		json_t *sizes = json_array(), *keep;
		size_t first = v[i].at;

		for (j = i; j < n && !suspect_key_cmp(&v[i], &v[j]); j++) {
			if (json_object_get(v[j].s, "msg_size_bytes"))
				json_array_append(sizes, json_object_get(v[j].s, "msg_size_bytes"));
			if (v[j].at < first)
				first = v[j].at;
		}
		keep = v[j - 1].s;	/* the largest size */
		if (json_array_size(sizes) > 1) {
			char ev[800];

			snprintf(ev, sizeof(ev), "%s (and at %zu smaller size%s)", record_str(keep, "evidence", ""),
				 json_array_size(sizes) - 1, json_array_size(sizes) == 2 ? "" : "s");
			json_object_set_new(keep, "evidence", json_string(ev));
			json_object_set_new(keep, "sizes", sizes);
		} else {
			json_decref(sizes);
		}
		v[m++] = (struct sref){ keep, 0, first };
	}
	qsort(v, m, sizeof(*v), sref_first_cmp);	/* in the order the analysis found them */
	for (i = 0; i < m; i++)
		json_array_append(merged, v[i].s);
	free(v);
	json_decref(out);
	return merged;
}

json_t *analyze_suspects_retest(const struct rstore *st, double low_frac, json_t *retest_info,
				json_t **not_confirmed)
{
	int ng, i, j, *local;
	size_t nnames = st->str.n;
	struct group *g;
	json_t *out = json_array();

	g = collect(st, &ng);
	if (!(local = fs_reallocarray(NULL, nnames ? nnames : 1, sizeof(*local))))
		fs_err_env("out of memory judging the records");
	for (i = 0; local && i < (int)nnames; i++)
		local[i] = -1;
	for (i = 0; local && i < ng; i++)
		judge_group(&g[i], local, low_frac, out);
	/* whole lanes against the other lanes of the same phase, test and size */
	for (i = 0; i < ng; i++) {
		double *m = malloc((size_t)ng * sizeof(*m)), phase_median;
		int n = 0;

		if (!m) {
			fs_err_env("out of memory judging the lanes as a whole: not judged");
			break;
		}
		for (j = 0; j < ng; j++)
			if (g[j].phase_id == g[i].phase_id && !strcmp(g[j].test, g[i].test) && g[j].size == g[i].size)
				m[n++] = g[j].median;
		phase_median = median_of(m, n);
		free(m);
		if (n >= 2 && is_low_ref(&g[i], g[i].median, phase_median, low_frac)) {
			char lane[64], sz[48];

			fs_lane_name(g[i].rail, g[i].plane, lane, sizeof(lane));
			add(out, "lane", &g[i], NULL, NULL, g[i].median, phase_median,
			    "%s as a whole%s: median %.3g %s against %.3g on the other lanes: "
			    "the leaves or the spine uplinks of %s", lane, at_size(&g[i], sz, sizeof(sz)),
			    g[i].median, unit_of(&g[i]), phase_median, lane);
		}
	}
	free(g);
	free(local);
	out = merge_sizes(out);
	pfc_suspects(st->kept, out);
	coll_suspects(st->kept, low_frac, out);
	return analyze_judge_retests(st, out, low_frac, retest_info, not_confirmed);
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
		char lane[64], sz[32], at[96] = "";
		int k, nsizes = 1;

		/* a lane of a sweep: its largest size (the suspects are judged at every size) */
		for (k = i - 1; k >= 0 && g[k].phase_id == g[i].phase_id && !strcmp(g[k].test, g[i].test) &&
		     g[k].rail == g[i].rail && g[k].plane == g[i].plane; k--)
			nsizes++;
		if (i + 1 < ng && g[i + 1].phase_id == g[i].phase_id && !strcmp(g[i + 1].test, g[i].test) &&
		    g[i + 1].rail == g[i].rail && g[i + 1].plane == g[i].plane)
			continue;
		if (g[i].size > 0) {
			units_format_size((uint64_t)g[i].size, sz, sizeof(sz));
			if (nsizes > 1)
				snprintf(at, sizeof(at), " at %s (largest of %d sizes)", sz, nsizes);
			else
				snprintf(at, sizeof(at), " at %s", sz);
		}
		for (j = 0; j < g[i].n; j++) {
			if (g[i].r[j].v < lo)
				lo = g[i].r[j].v;
			if (g[i].r[j].v > hi)
				hi = g[i].r[j].v;
		}
		fs_lane_name(g[i].rail, g[i].plane, lane, sizeof(lane));
		fprintf(f, "%-20s %-4s %-14s %6d %12.4g %12.4g %12.4g  %s%s\n", g[i].phase, g[i].test,
			lane, g[i].n, lo, g[i].median, hi, unit_of(&g[i]), at);
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
