/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report's metrics for a Pushgateway (--push), in groups that a
 * nightly job replaces night after night (report.h: report_push_groups).
 *
 * A group's grouping key is the job (and --instance) with the plan's name,
 * and a lane's rail and plane for the lane groups; never the run's id or
 * date, so that tonight's push replaces last night's.  The run's id and
 * start are in every group as fabscope_run_info and
 * fabscope_run_timestamp_seconds.  A sample names its run (run="NAME")
 * only when the report has several runs: one run's name is its
 * directory's, which changes every night.  Units are Prometheus' base
 * units (bytes per second, seconds); every family is a gauge: a night's
 * figure, nothing that accumulates.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/names.h"
#include "../core/record.h"
#include "../core/version.h"
#include "push.h"
#include "render.h"
#include "report.h"

#define GBPS_TO_BYTES 1.25e8	/* 10^9 bit/s in bytes per second */
#define US_TO_S 1e-6

void report_plan_name(const struct rrun *r, char *buf, size_t len)
{
	const char *path = record_str(r->run, "plan.path", NULL), *base, *dot;
	size_t n;

	if (!path || !*path) {
		snprintf(buf, len, "unnamed");
		return;
	}
	base = strrchr(path, '/');
	base = base && base[1] ? base + 1 : path;
	dot = strrchr(base, '.');
	n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	snprintf(buf, len, "%.*s", (int)n, base);
}

/* run.json's started as seconds since the epoch; NAN when it has none */
static double run_started(const struct rrun *r)
{
	const char *s = record_str(r->run, "started", NULL);
	struct tm tm = { 0 };
	double sec;
	int n = 0;

	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%lf%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
			 &tm.tm_min, &sec, &n) != 6 || strcmp(s + n, "Z") || !(sec >= 0 && sec < 61))
		return NAN;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (double)timegm(&tm) + sec;
}

/* a sample of fam labelled by its run alone: fam{run="X"} VALUE, or fam VALUE (one run) */
static void run_sample(struct report_buf *b, const char *fam, const char *lbl, double v)
{
	size_t n = strlen(lbl);

	if (n)
		report_bput(b, "%s{%.*s} %.15g\n", fam, (int)(n - 1), lbl, v);
	else
		report_bput(b, "%s %.15g\n", fam, v);
}

/* the families every group holds: the run's time and id, per run of the group */
static void run_identity(const struct report *rep, const char *const *lbl, struct report_buf *b)
{
	int ri;

	report_bput(b, "# HELP fabscope_run_timestamp_seconds when the run started (run.json's started), "
		       "seconds since the epoch\n# TYPE fabscope_run_timestamp_seconds gauge\n");
	for (ri = 0; ri < rep->nruns; ri++) {
		double t = run_started(&rep->runs[ri]);

		if (lbl[ri] && !isnan(t))
			run_sample(b, "fabscope_run_timestamp_seconds", lbl[ri], t);
	}
	report_bput(b, "# HELP fabscope_run_info the run's id and the version of fabscope that reported it\n"
		       "# TYPE fabscope_run_info gauge\n");
	for (ri = 0; ri < rep->nruns; ri++) {
		char *id;

		if (!lbl[ri])
			continue;
		id = push_label_value(record_str(rep->runs[ri].run, "id", ""));
		report_bput(b, "fabscope_run_info{%srun_id=\"%s\",version=\"%s\"} 1\n", lbl[ri], id ? id : "",
			    FABSCOPE_VERSION);
		free(id);
	}
}

/* the plan's group: the runs, the verdict and its checks, the probes, the collectives */
static void plan_group(struct report *rep, const char *const *lbl, struct report_buf *b)
{
	int ri, i;

	run_identity(rep, lbl, b);
	report_bput(b, "# HELP fabscope_run_missing_agents agents of the run that never joined or were lost\n"
		       "# TYPE fabscope_run_missing_agents gauge\n");
	for (ri = 0; ri < rep->nruns; ri++)
		if (lbl[ri])
			run_sample(b, "fabscope_run_missing_agents", lbl[ri], rep->runs[ri].missing);
	report_bput(b, "# HELP fabscope_run_failed_tests tests of the run that ended in an error\n"
		       "# TYPE fabscope_run_failed_tests gauge\n");
	for (ri = 0; ri < rep->nruns; ri++)
		if (lbl[ri])
			run_sample(b, "fabscope_run_failed_tests", lbl[ri], rep->runs[ri].nerr);
	report_bput(b, "# HELP fabscope_run_suspects suspects of the run (confirmed, inconclusive or not re-tested)\n"
		       "# TYPE fabscope_run_suspects gauge\n");
	for (ri = 0; ri < rep->nruns; ri++)
		if (lbl[ri])
			run_sample(b, "fabscope_run_suspects", lbl[ri], (double)json_array_size(rep->runs[ri].suspects));
	report_polar_exposition(rep, lbl, b);
	report_pfc_exposition(rep, lbl, b);
	report_coll_exposition(rep, lbl, b);
	report_bput(b, "# HELP fabscope_acceptance_pass 1 when the verdict is PASS: every measured phase judged, "
		       "every check passed\n# TYPE fabscope_acceptance_pass gauge\nfabscope_acceptance_pass %d\n",
		    rep->result == REPORT_PASS);
	report_bput(b, "# HELP fabscope_acceptance_complete 1 when every measured phase was judged (the verdict "
		       "is not INCOMPLETE for want of a criterion)\n# TYPE fabscope_acceptance_complete gauge\n"
		       "fabscope_acceptance_complete %d\n", !rep->not_judged);
	report_bput(b, "# HELP fabscope_check_pass 1 when the check passed\n# TYPE fabscope_check_pass gauge\n");
	for (i = 0; i < rep->nchecks; i++) {
		char *c = push_label_value(rep->checks[i].name);

		report_bput(b, "fabscope_check_pass{check=\"%s\"} %d\n", c ? c : "", rep->checks[i].pass);
		free(c);
	}
	if (rep->have_base)
		report_bput(b, "# HELP fabscope_baseline_regressions figures worse than the baseline beyond the "
			       "tolerance\n# TYPE fabscope_baseline_regressions gauge\nfabscope_baseline_regressions %d\n",
			    report_regressions(rep, NULL));
}

/* ---- a lane's group ---- */

struct nodev {
	const char *node;
	double v;
};

static int nodev_by_name(const void *a, const void *b)
{
	const struct nodev *x = a, *y = b;
	int c = strcmp(x->node, y->node);

	return c ? c : x->v < y->v ? -1 : x->v > y->v;
}

/* worst first (ctx: 1 latency, higher is worse; 0 bandwidth), ties by the names */
static int nodev_worst(const void *a, const void *b, void *ctx)
{
	const struct nodev *x = a, *y = b;
	int lat = *(const int *)ctx;

	if (x->v != y->v)
		return (lat ? x->v > y->v : x->v < y->v) ? -1 : 1;
	return fs_name_cmp(x->node, y->node);
}

/* g's nodes, each the median of its pairs, worst first, into *out (*n of them); -1 out of memory */
static int node_medians(const struct rgroup *g, struct nodev **out, size_t *n)
{
	struct nodev *e = fs_reallocarray(NULL, (size_t)g->n * 2 + 1, sizeof(*e));
	size_t ne = 0, a, b, k = 0;
	int lat = g->test[0] == 'l', i;

	if (!e)
		return -1;
	for (i = 0; i < g->n; i++) {
		if (isnan(g->p[i].v))
			continue;
		e[ne++] = (struct nodev){ g->p[i].src, g->p[i].v };
		e[ne++] = (struct nodev){ g->p[i].dst, g->p[i].v };
	}
	qsort(e, ne, sizeof(*e), nodev_by_name);
	for (a = 0; a < ne; a = b) {
		size_t m;

		for (b = a; b < ne && !strcmp(e[b].node, e[a].node); b++)
			;
		m = b - a;
		e[k].node = e[a].node;
		e[k++].v = m % 2 ? e[a + m / 2].v : (e[a + m / 2 - 1].v + e[a + m / 2].v) / 2;
	}
	qsort_r(e, k, sizeof(*e), nodev_worst, &lat);
	*out = e;
	*n = k;
	return 0;
}

/* "phase=\"P\"" of g, escaped; NULL out of memory (b->oom set) */
static char *phase_label(const struct rgroup *g, struct report_buf *b)
{
	char *ph = push_label_value(g->phase), *l = NULL;

	if (!ph || asprintf(&l, "phase=\"%s\"", ph) < 0)
		l = NULL, b->oom = 1;
	free(ph);
	return l;
}

/* per node of a lane: the node_max worst nodes' medians */
static void lane_nodes(const struct report *rep, const char *const *lbl, int rail, int plane, int node_max,
		       struct report_buf *b)
{
	static const char *const fam[2] = { "fabscope_node_bandwidth_bytes_per_second", "fabscope_node_latency_p50_seconds" };
	int m, ri, gi;

	for (m = 0; m < 2; m++) {
		report_bput(b, "# HELP %s %s\n# TYPE %s gauge\n", fam[m], m ? "a node's median over its pairs of a "
			    "lat phase of each pair's p50 latency, the --push-nodes worst nodes of the lane" :
			    "a node's median bandwidth over its pairs of a bw phase, the --push-nodes worst nodes of "
			    "the lane", fam[m]);
		for (ri = 0; ri < rep->nruns; ri++)
			for (gi = 0; lbl[ri] && gi < rep->runs[ri].ng; gi++) {
				const struct rgroup *g = &rep->runs[ri].g[gi];
				struct nodev *nv;
				char *ph;
				size_t n, k;

				if (g->rail != rail || g->plane != plane || strcmp(g->test, m ? "lat" : "bw"))
					continue;
				if (node_medians(g, &nv, &n)) {
					b->oom = 1;
					continue;
				}
				ph = phase_label(g, b);
				for (k = 0; ph && k < n && k < (size_t)node_max; k++) {
					char *node = push_label_value(nv[k].node);

					report_bput(b, "%s{%s%s,node=\"%s\"} %.9g\n", fam[m], lbl[ri], ph, node ? node : "",
						    nv[k].v * (m ? US_TO_S : GBPS_TO_BYTES));
					free(node);
				}
				free(ph);
				free(nv);
			}
	}
}

/* the lane's suspects: a count per phase, test, kind and re-test, and with node_max the node_max first named */
static void lane_suspects(const struct report *rep, const char *const *lbl, int rail, int plane, int node_max,
			  struct report_buf *b)
{
	int ri, pass;

	for (pass = 0; pass < 2; pass++) {
		if (pass && !node_max)
			break;
		report_bput(b, pass ? "# HELP fabscope_suspect 1 for a suspect of the lane (the --push-nodes first of "
				      "the run's list): its node, its peer (a pair's), how its re-test judged it\n"
				      "# TYPE fabscope_suspect gauge\n" :
				      "# HELP fabscope_lane_suspects the lane's suspects per phase, test, kind and re-test "
				      "status\n# TYPE fabscope_lane_suspects gauge\n");
		for (ri = 0; ri < rep->nruns; ri++) {
			json_t *s, *counted = json_object();
			const char *key;
			size_t k;
			int named = 0;

			json_array_foreach(lbl[ri] ? rep->runs[ri].suspects : NULL, k, s) {
				char *ph, *test, *kind, *st, *node, *peer, *lab;
				json_t *c;

				if (record_int(s, "rail", -1, -1, FS_MAX_RAILS) != rail ||
				    record_int(s, "plane", 0, -1, FS_MAX_PLANES) != plane)
					continue;
				ph = push_label_value(record_str(s, "phase", ""));
				test = push_label_value(record_str(s, "test", ""));
				kind = push_label_value(record_str(s, "kind", ""));
				st = push_label_value(record_str(s, "retest.status", "not-retested"));
				node = push_label_value(record_str(s, "node", ""));
				peer = push_label_value(record_str(s, "peer", ""));
				if (!ph || !test || !kind || !st || !node || !peer)
					b->oom = 1;
				else if (pass && named++ < node_max)
					report_bput(b, "fabscope_suspect{%sphase=\"%s\",test=\"%s\",kind=\"%s\",node=\"%s\","
						    "peer=\"%s\",status=\"%s\"} 1\n", lbl[ri], ph, test, kind, node, peer, st);
				else if (!pass) {
					if (asprintf(&lab, "%sphase=\"%s\",test=\"%s\",kind=\"%s\",status=\"%s\"",
						     lbl[ri], ph, test, kind, st) < 0) {
						b->oom = 1;
					} else {
						c = json_object_get(counted, lab);
						if (json_object_set_new(counted, lab, json_integer(c ? json_integer_value(c) + 1 : 1)))
							b->oom = 1;
						free(lab);
					}
				}
				free(ph);
				free(test);
				free(kind);
				free(st);
				free(node);
				free(peer);
			}
			json_object_foreach(counted, key, s)
				report_bput(b, "fabscope_lane_suspects{%s} %lld\n", key, (long long)json_integer_value(s));
			json_decref(counted);
		}
	}
}

/* the lane families: what each takes of a phase's group */
enum lane_fig { FIG_MEDIAN, FIG_MIN, FIG_MAX, FIG_P99, FIG_PAIRS };

static const struct lane_family {
	const char *name, *test, *help;	/* test: the phase's, NULL any */
	enum lane_fig fig;
	double scale;
} lane_fams[] = {
	{ "fabscope_lane_bandwidth_bytes_per_second", "bw", "a bw phase's median bandwidth over the lane's pairs "
	  "(at the largest message size of a sweep)", FIG_MEDIAN, GBPS_TO_BYTES },
	{ "fabscope_lane_worst_pair_bandwidth_bytes_per_second", "bw", "a bw phase's lowest bandwidth of a pair "
	  "of the lane", FIG_MIN, GBPS_TO_BYTES },
	{ "fabscope_lane_best_pair_bandwidth_bytes_per_second", "bw", "a bw phase's highest bandwidth of a pair "
	  "of the lane", FIG_MAX, GBPS_TO_BYTES },
	{ "fabscope_lane_latency_p50_seconds", "lat", "a lat phase's median over the lane's pairs of each pair's "
	  "p50 latency", FIG_MEDIAN, US_TO_S },
	{ "fabscope_lane_worst_pair_latency_p50_seconds", "lat", "a lat phase's highest p50 latency of a pair of "
	  "the lane", FIG_MAX, US_TO_S },
	{ "fabscope_lane_best_pair_latency_p50_seconds", "lat", "a lat phase's lowest p50 latency of a pair of "
	  "the lane", FIG_MIN, US_TO_S },
	{ "fabscope_lane_latency_p99_seconds", "lat", "a lat phase's median over the lane's pairs of each pair's "
	  "p99 latency", FIG_P99, US_TO_S },
	{ "fabscope_lane_pairs", NULL, "pairs measured on the lane in a phase, per test", FIG_PAIRS, 1 },
};

/* a lane's group: its phases' figures, pairs and suspects; the nodes with node_max */
static void lane_group(struct report *rep, const char *const *lbl, int rail, int plane, int node_max,
		       struct report_buf *b)
{
	size_t m;
	int ri, gi;

	run_identity(rep, lbl, b);
	for (m = 0; m < sizeof(lane_fams) / sizeof(lane_fams[0]); m++) {
		const struct lane_family *f = &lane_fams[m];

		report_bput(b, "# HELP %s %s\n# TYPE %s gauge\n", f->name, f->help, f->name);
		for (ri = 0; ri < rep->nruns; ri++)
			for (gi = 0; lbl[ri] && gi < rep->runs[ri].ng; gi++) {
				const struct rgroup *g = &rep->runs[ri].g[gi];
				double v = f->fig == FIG_MEDIAN ? g->median : f->fig == FIG_MIN ? g->min :
					   f->fig == FIG_MAX ? g->max : f->fig == FIG_P99 ? g->p99_median : g->n;
				char *ph;

				if (g->rail != rail || g->plane != plane || (f->test && strcmp(g->test, f->test)) ||
				    isnan(v) || !(ph = phase_label(g, b)))
					continue;
				if (f->fig == FIG_PAIRS)
					report_bput(b, "%s{%s%s,test=\"%s\"} %d\n", f->name, lbl[ri], ph, g->test, g->n);
				else
					report_bput(b, "%s{%s%s} %.9g\n", f->name, lbl[ri], ph, v * f->scale);
				free(ph);
			}
	}
	lane_suspects(rep, lbl, rail, plane, node_max, b);
	if (node_max)
		lane_nodes(rep, lbl, rail, plane, node_max, b);
}

/* ---- the groups ---- */

/* adds the group (plan, rail, plane) to *gs unless it is there */
static int group_add(struct report_pgroup **gs, int *n, size_t *alloc, const char *plan, int rail, int plane)
{
	int i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*gs)[i].plan, plan) && (*gs)[i].rail == rail && (*gs)[i].plane == plane)
			return 0;
	if (FS_ALLOC_GROW(*gs, *n + 1, *alloc))
		return -1;
	memset(&(*gs)[*n], 0, sizeof(**gs));
	if (!((*gs)[*n].plan = strdup(plan)))
		return -1;
	(*gs)[*n].rail = rail;
	(*gs)[(*n)++].plane = plane;
	return 0;
}

static int group_cmp(const void *a, const void *b)
{
	const struct report_pgroup *x = a, *y = b;
	int c = strcmp(x->plan, y->plan);

	if (c)
		return c;
	if (x->rail != y->rail)
		return x->rail < y->rail ? -1 : 1;
	return x->plane < y->plane ? -1 : x->plane > y->plane;
}

/* the groups' keys: every plan, and every plan's lanes that bw or lat measured; sorted */
static int group_keys(const struct report *rep, char (*plan)[256], struct report_pgroup **gs, int *n)
{
	size_t alloc = 0;
	int ri, gi;

	for (ri = 0; ri < rep->nruns; ri++) {
		report_plan_name(&rep->runs[ri], plan[ri], sizeof(plan[ri]));
		if (group_add(gs, n, &alloc, plan[ri], -1, -1))
			return -1;
		for (gi = 0; gi < rep->runs[ri].ng; gi++)
			if (group_add(gs, n, &alloc, plan[ri], rep->runs[ri].g[gi].rail, rep->runs[ri].g[gi].plane))
				return -1;
	}
	qsort(*gs, (size_t)*n, sizeof(**gs), group_cmp);
	return 0;
}

int report_push_groups(struct report *rep, int node_max, struct report_pgroup **out, int *nout)
{
	char (*plan)[256] = fs_reallocarray(NULL, (size_t)rep->nruns, sizeof(*plan));
	char **lbl = fs_reallocarray(NULL, (size_t)rep->nruns, sizeof(*lbl));
	struct report_pgroup *gs = NULL;
	int n = 0, ri, i, oom = !plan || !lbl;

	for (ri = 0; !oom && ri < rep->nruns; ri++) {
		char *name = push_label_value(rep->runs[ri].name);

		lbl[ri] = NULL;
		if (!name || asprintf(&lbl[ri], "%s%s%s", rep->nruns > 1 ? "run=\"" : "", rep->nruns > 1 ? name : "",
				      rep->nruns > 1 ? "\"," : "") < 0)
			lbl[ri] = NULL, oom = 1;
		free(name);
	}
	if (!oom && group_keys(rep, plan, &gs, &n))
		oom = 1;
	for (i = 0; !oom && i < n; i++) {
		const char **in = fs_reallocarray(NULL, (size_t)rep->nruns, sizeof(*in));
		struct report_buf b = { 0 };

		if (!in) {
			oom = 1;
			break;
		}
		for (ri = 0; ri < rep->nruns; ri++)
			in[ri] = strcmp(plan[ri], gs[i].plan) ? NULL : lbl[ri];
		if (gs[i].rail < 0)
			plan_group(rep, in, &b);
		else
			lane_group(rep, in, gs[i].rail, gs[i].plane, node_max, &b);
		free(in);
		gs[i].body = b.s;
		oom = b.oom;
	}
	for (ri = 0; lbl && ri < rep->nruns; ri++)
		free(lbl[ri]);
	free(lbl);
	free(plan);
	if (oom) {
		report_push_groups_free(gs, n);
		return fs_err_env("out of memory writing the metrics");
	}
	*out = gs;
	*nout = n;
	return 0;
}

void report_push_groups_free(struct report_pgroup *gs, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		free(gs[i].plan);
		free(gs[i].body);
	}
	free(gs);
}
