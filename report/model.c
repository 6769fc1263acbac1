/* SPDX-License-Identifier: BSD-2-Clause */
/* The report's model: results directories into groups, matrices, sweeps and PFC ports. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/names.h"
#include "../core/record.h"
#include "../core/units.h"
#include "../records/analyze.h"
#include "../records/result.h"
#include "../records/read.h"
#include "report.h"

/*
 * The storm threshold of a PFC record without params.storm_fraction (from
 * a probe that did not write it): what the probe used then, its default
 * (PFC_STORM_FRACTION of probes/pfc.h, which the report does not include:
 * it reads records, not the probe).  A record that has the field says its
 * own.
 */
#define REPORT_PFC_STORM_FRACTION 0.99

const char *report_unit(const char *test)
{
	return !strcmp(test, "bw") ? "Gb/s" : "us";
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	if (!n)
		return NAN;
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* groups in the order phases first appear, then test, rail, plane */
static int group_cmp(const void *a, const void *b)
{
	const struct rgroup *x = a, *y = b;
	int c;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	if ((c = strcmp(x->test, y->test)))
		return c;
	return x->rail != y->rail ? x->rail - y->rail : x->plane - y->plane;
}

/* What a group's figure depends on, besides the fabric: "64K messages tcp write, 4 flows,
 * c2s" (bw), "64 messages tcp send" (lat); from its first record at its (largest) size */
static void group_params(struct rgroup *g, json_t *rec)
{
	char size[32];
	double flows = record_num(rec, "flows", 1), sz = record_num(rec, "msg_size_bytes", 0);

	const char *tr = record_str(rec, "transport", NULL), *op = record_str(rec, "op", NULL);

	units_format_size(sz >= 0 && sz < 1e18 ? (uint64_t)sz : 0, size, sizeof(size));	/* untrusted */
	snprintf(g->params, sizeof(g->params), "%s messages%s%.20s%s%.20s", size, tr ? " " : "", tr ? tr : "",
		 op ? " " : "", op ? op : "");
	if (!strcmp(g->test, "bw")) {
		size_t n = strlen(g->params);

		snprintf(g->params + n, sizeof(g->params) - n, ", %.0f flow%s, %.8s", flows, flows == 1 ? "" : "s",
			 record_str(rec, "dir", "c2s"));
	}
}

/* the group of (phase, test, lane); phase names are the store's (whole, however long) */
static struct rgroup *group_get(struct rrun *r, const char *phase, const char *test, int rail, int plane)
{
	int i, id;

	for (i = 0; i < r->ng; i++)
		if (!strcmp(r->g[i].phase, phase) && !strcmp(r->g[i].test, test) &&
		    r->g[i].rail == rail && r->g[i].plane == plane)
			return &r->g[i];
	if ((id = rstore_intern(&r->st, phase)) < 0 || FS_ALLOC_GROW(r->g, r->ng + 1, r->g_alloc))
		return NULL;
	memset(&r->g[r->ng], 0, sizeof(*r->g));
	r->g[r->ng].phase = rstore_str(&r->st, id);
	r->g[r->ng].order = r->ng;
	for (i = 0; i < r->ng; i++)	/* a phase's rank: its first group */
		if (!strcmp(r->g[i].phase, phase)) {
			r->g[r->ng].order = r->g[i].order;
			break;
		}
	snprintf(r->g[r->ng].test, sizeof(r->g[r->ng].test), "%s", test);
	r->g[r->ng].rail = rail;
	r->g[r->ng].plane = plane;
	return &r->g[r->ng++];
}

const struct rgroup *report_group(const struct rrun *r, const char *phase, const char *test,
				  int rail, int plane)
{
	int i;

	for (i = 0; i < r->ng; i++)
		if (!strcmp(r->g[i].phase, phase) && !strcmp(r->g[i].test, test) &&
		    r->g[i].rail == rail && r->g[i].plane == plane)
			return &r->g[i];
	return NULL;
}

/* 0, or -1 out of memory */
static int sweep_add(struct rrun *r, const char *phase, int rail, int plane, double size, double bw)
{
	struct rsweep *s = NULL;
	int i;

	for (i = 0; i < r->nsw; i++)
		if (!strcmp(r->sw[i].phase, phase) && r->sw[i].rail == rail && r->sw[i].plane == plane)
			s = &r->sw[i];
	if (!s) {
		int id = rstore_intern(&r->st, phase);

		if (id < 0 || FS_ALLOC_GROW(r->sw, r->nsw + 1, r->sw_alloc))
			return -1;
		s = &r->sw[r->nsw++];
		memset(s, 0, sizeof(*s));
		s->phase = rstore_str(&r->st, id);
		s->rail = rail;
		s->plane = plane;
	}
	for (i = 0; i < s->n; i++)
		if (s->size[i] == size) {
			/* the median of a few is overkill here: keep the running mean */
			s->bw[i] = (s->bw[i] + bw) / 2;
			return 0;
		}
	if (s->n < 32) {
		s->size[s->n] = size;
		s->bw[s->n++] = bw;
	}
	return 0;
}

/* a bw record's reordering counters (bw.c, over TCP) into the group's sums */
static void reorder_add(struct rreorder *ro, json_t *rec)
{
	double rt = record_num(rec, "metrics.retrans_segs", NAN), rs = record_num(rec, "metrics.reord_seen", NAN);
	double oo = record_num(rec, "metrics.ooo_pkts", NAN), rx = record_num(rec, "metrics.rx_segs", NAN);

	if (!(rt >= 0) || !(rs >= 0) || !(oo >= 0) || !(rx >= 0))
		return;	/* not TCP, or not all four: left out, never half-counted */
	ro->retrans += rt;
	ro->reord_seen += rs;
	ro->ooo += oo;
	ro->rx_segs += rx;
	ro->n++;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* its medians, nodes, fairness and rounds: 0, or -1 out of memory (not said) */
static int finish_group(struct rgroup *g)
{
	double *v = malloc((size_t)(g->n ? g->n : 1) * sizeof(*v));
	const char **names = malloc((size_t)(2 * g->n + 1) * sizeof(*names));
	int i, n = 0;

	if (!v || !names) {
		free(v);
		free(names);
		return -1;
	}
	for (i = 0; i < g->n; i++)
		v[i] = g->p[i].v;
	g->median = median(v, g->n);
	g->min = g->n ? v[0] : NAN;
	g->max = g->n ? v[g->n - 1] : NAN;
	for (i = 0; i < g->n; i++)
		v[i] = g->p[i].v99;
	g->p99_median = median(v, g->n);
	for (i = 0; i < g->n; i++) {
		names[n++] = g->p[i].src;
		names[n++] = g->p[i].dst;
	}
	qsort(names, (size_t)n, sizeof(*names), fs_name_pcmp);
	g->nnodes = 0;
	for (i = 0; i < n; i++)
		if (!g->nnodes || strcmp(names[g->nnodes - 1], names[i]))
			names[g->nnodes++] = names[i];
	g->nodes = names;
	free(v);
	g->exp_spray = g->exp_ecmp = NAN;
	g->agg = g->jain = NAN;
	g->rounds = 0;
	if (!strcmp(g->test, "bw") && g->n) {
		int *rs = malloc((size_t)g->n * sizeof(*rs));
		double sum = 0, sq = 0;

		for (i = 0; i < g->n; i++) {
			sum += g->p[i].v;
			sq += g->p[i].v * g->p[i].v;
		}
		g->jain = sq > 0 ? sum * sum / ((double)g->n * sq) : NAN;
		if (g->jain > 1)
			g->jain = 1;	/* 1.0000000000000002 of equal rates */
		if (!rs)
			return -1;
		for (i = 0; i < g->n; i++)
			rs[i] = g->p[i].round;
		qsort(rs, (size_t)g->n, sizeof(*rs), int_cmp);
		for (i = 0; i < g->n; i++)
			g->rounds += !i || rs[i] != rs[i - 1];
		free(rs);
		g->agg = g->rounds ? sum / g->rounds : NAN;
	}
	return 0;
}

/* ---- the PFC probe's records ---- */

void report_pct(double frac, char *buf, size_t len)
{
	if (isnan(frac))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.3g %%", 100 * frac);
}

void report_secs(double secs, char *buf, size_t len)
{
	char *e;

	if (isnan(secs)) {
		snprintf(buf, len, "n/a");
		return;
	}
	snprintf(buf, len, "%.2f", secs);
	if (strchr(buf, '.')) {	/* 2.50 -> 2.5, 1.00 -> 1 */
		for (e = buf + strlen(buf) - 1; *e == '0'; e--)
			*e = 0;
		if (*e == '.')
			*e = 0;
	}
}

static double arr_num(json_t *a, size_t i)
{
	json_t *v = json_array_get(a, i);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

double report_pfc_at(json_t *rec, int k)
{
	json_t *t = record_get(rec, "timeline.t");

	if (k < 0 || (size_t)k >= json_array_size(t))
		return NAN;
	return k ? arr_num(t, (size_t)k - 1) : 0;
}

int report_pfc_series(json_t *rec, int prio, const char *key, double *v, int max)
{
	char path[96];
	json_t *a;
	int i, n;

	snprintf(path, sizeof(path), "timeline.prio.%d.%s", prio, key);
	a = record_get(rec, path);
	n = (int)json_array_size(a);
	if (n > max)
		n = max;
	for (i = 0; i < n; i++)
		v[i] = arr_num(a, (size_t)i);
	return n;
}

static const char *word_of(json_t *rec, const char *path, const char *const *words)
{
	const char *s = record_str(rec, path, NULL);
	int i;

	for (i = 0; s && words[i]; i++)
		if (!strcmp(s, words[i]))
			return words[i];
	return NULL;
}

static const char *const tri_words[] = { "yes", "no", "unknown", NULL };
static const char *const storm_words[] = { "none", "rx", "tx", "rx+tx", NULL };

static void pfc_prio_parse(json_t *rec, json_t *e, int prio, struct rpfc_prio *pp)
{
	static const char *const dir[2] = { "rx", "tx" };
	char key[32];
	int d, from;

	memset(pp, 0, sizeof(*pp));
	pp->prio = prio;
	for (d = 0; d < 2; d++) {
		snprintf(key, sizeof(key), "%s_frames", dir[d]);
		pp->frames[d] = record_num(e, key, NAN);
		snprintf(key, sizeof(key), "%s_pps_avg", dir[d]);
		pp->pps_avg[d] = record_num(e, key, NAN);
		snprintf(key, sizeof(key), "%s_pps_max", dir[d]);
		pp->pps_max[d] = record_num(e, key, NAN);
		snprintf(key, sizeof(key), "%s_paused_max", dir[d]);
		pp->paused_max[d] = record_num(e, key, NAN);
	}
	pp->estimated = json_is_true(json_object_get(e, "estimated"));
	pp->storm = word_of(e, "storm", storm_words);
	pp->storm_run = record_int(e, "storm_run", 0, 0, INT_MAX);
	from = record_int(e, "storm_from", -1, 0, INT_MAX);
	pp->storm_at = from >= 0 ? report_pfc_at(rec, from) : NAN;
	from = record_int(e, "first_pause", -1, 0, INT_MAX);
	pp->pause_at = from >= 0 ? report_pfc_at(rec, from) : NAN;
	pp->ecn_first = word_of(e, "ecn_first", tri_words);
	if (!pp->ecn_first)
		pp->ecn_first = "unknown";
}

/* 0, or -1 out of memory (r as it was) */
static int pfc_add(struct rrun *r, json_t *rec)
{
	struct rpfc *pf;
	json_t *e;
	size_t k;
	int i, first;

	if (FS_ALLOC_GROW(r->pfc, r->npfc + 1, r->pfc_alloc))
		return -1;
	pf = &r->pfc[r->npfc];
	memset(pf, 0, sizeof(*pf));
	pf->rec = rec;
	pf->phase = record_str(rec, "phase", "(standalone)");
	pf->order = pf->seq = r->npfc;
	for (i = 0; i < r->npfc; i++)	/* a phase's rank: its first record */
		if (!strcmp(r->pfc[i].phase, pf->phase)) {
			pf->order = r->pfc[i].order;
			break;
		}
	pf->node = record_str(rec, "src.node", record_str(rec, "src.ip", "?"));
	pf->role = record_str(rec, "role", "-");
	pf->iface = record_str(rec, "iface", record_str(rec, "rdma_dev", "-"));
	if (!strcmp(pf->role, "sender"))
		pf->dst = record_str(rec, "dst.node", record_str(rec, "dst.ip", NULL));
	pf->verdict = record_str(rec, "verdict", "unknown");
	pf->verdict_text = record_str(rec, "verdict_text", NULL);
	pf->ecn_first = word_of(rec, "ecn_first", tri_words);
	if (!pf->ecn_first)
		pf->ecn_first = "unknown";
	first = record_int(rec, "first_ecn", -1, 0, INT_MAX);
	pf->ecn_at = first >= 0 ? report_pfc_at(rec, first) : NAN;
	first = record_int(rec, "first_pause", -1, 0, INT_MAX);
	pf->pause_at = first >= 0 ? report_pfc_at(rec, first) : NAN;
	pf->storm_fraction = record_num(rec, "params.storm_fraction", REPORT_PFC_STORM_FRACTION);
	if (!(pf->storm_fraction > 0 && pf->storm_fraction <= 1))
		pf->storm_fraction = REPORT_PFC_STORM_FRACTION;
	pf->storm = json_is_true(json_object_get(rec, "storm"));
	json_array_foreach(json_object_get(rec, "priorities"), k, e) {
		int prio = record_int(e, "prio", -1, 0, 7), dup = 0, a, b;

		for (a = 0; a < pf->np; a++)
			dup |= pf->p[a].prio == prio;
		if (prio < 0 || dup)
			continue;	/* not a priority, or one said twice: the first counts */
		if (FS_ALLOC_GROW(pf->p, pf->np + 1, pf->p_alloc)) {
			free(pf->p);
			return -1;
		}
		pfc_prio_parse(rec, e, prio, &pf->p[pf->np]);
		pf->storm |= pf->p[pf->np].storm && strcmp(pf->p[pf->np].storm, "none");
		for (b = pf->np++; b > 0 && pf->p[b - 1].prio > pf->p[b].prio; b--) {
			struct rpfc_prio t = pf->p[b];

			pf->p[b] = pf->p[b - 1];
			pf->p[b - 1] = t;
		}
	}
	r->npfc++;
	return 0;
}

/* ports in the order phases first appear, then node and interface, then as recorded */
static int pfc_cmp(const void *a, const void *b)
{
	const struct rpfc *x = a, *y = b;
	int c;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	if ((c = fs_name_cmp(x->node, y->node)) || (c = fs_name_cmp(x->iface, y->iface)))
		return c;
	return x->seq - y->seq;
}

/* ---- what a run measured, what it planned ---- */

/* the thing r measured of phase and test on rail and plane (-1: as a whole), added when new;
 * 0, or -1 out of memory */
static int measured(struct rrun *r, const char *phase, const char *test, int rail, int plane)
{
	struct rmeasured *m;
	int i;

	for (i = r->nms - 1; i >= 0; i--) {	/* (the last one first: records come in runs) */
		m = &r->ms[i];
		if (m->rail == rail && m->plane == plane && !strcmp(m->test, test) && !strcmp(m->phase, phase)) {
			m->n++;
			return 0;
		}
	}
	if ((i = rstore_intern(&r->st, phase)) < 0 || FS_ALLOC_GROW(r->ms, r->nms + 1, r->ms_alloc))
		return -1;
	m = &r->ms[r->nms++];
	memset(m, 0, sizeof(*m));
	m->phase = rstore_str(&r->st, i);
	snprintf(m->test, sizeof(m->test), "%s", test);
	m->rail = rail;
	m->plane = plane;
	m->n = 1;
	return 0;
}

/* the planned phase of that name, or NULL */
static struct rplanned *planned_of(struct rrun *r, const char *name, size_t len)
{
	int i;

	for (i = 0; i < r->nplanned; i++)
		if (strlen(r->planned[i].name) == len && !strncmp(r->planned[i].name, name, len))
			return &r->planned[i];
	return NULL;
}

/*
 * run.json's "planned" (every phase of the plan, its jobs) into r->planned,
 * and jobs.done's lines counted against it: a line is the key of a job that
 * finished, "PHASE/TEST/rROUND/LANE/NODES" (a re-test's ends in "/retest":
 * no planned job).  A run without "planned" (an older fabscope) has none.
 * 0, or -FS_EXIT_ENV said (a jobs.done that is there but not a regular
 * file, or cannot be read).
 */
static int load_planned(struct rrun *r)
{
	json_t *pl = json_object_get(r->run, "planned"), *p;
	char path[4096], line[1024];
	size_t k;
	FILE *f;
	int fd;

	if (!json_is_array(pl))
		return 0;
	r->planned = calloc(json_array_size(pl) + 1, sizeof(*r->planned));
	if (!r->planned)
		return fs_err_env("out of memory reading the planned jobs of %s", r->dir);
	json_array_foreach(pl, k, p) {
		struct rplanned *q = &r->planned[r->nplanned];
		double jobs = record_num(p, "jobs", -1);

		if (!record_str(p, "name", NULL) || !(jobs >= 0 && jobs < 1e15))
			continue;	/* untrusted: what is not a phase is none */
		q->name = record_str(p, "name", NULL);
		q->kind = record_str(p, "kind", "?");
		q->jobs = (long)jobs;
		q->skipped = json_is_true(json_object_get(p, "skipped"));
		r->nplanned++;
	}
	snprintf(path, sizeof(path), "%s/jobs.done", r->dir);
	/* untrusted as the records are: a regular file only (a FIFO would hang
	 * the report, /dev/zero feed it for ever), its lines bounded below */
	if ((fd = records_open(path)) == -ENOENT)
		return 0;	/* not there: what ran is not known */
	if (fd < 0)
		return fd == RECORDS_ENOTREG ? fs_err_env("cannot read '%s': %s", path, records_strerror(fd)) :
		       fs_err_read(NULL, path, -fd);
	if (!(f = fdopen(fd, "r"))) {
		close(fd);
		return fs_err_env("cannot read '%s': %s", path, strerror(errno));
	}
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		char *slash = strchr(line, '/');
		struct rplanned *q;

		if (!n || line[n - 1] != '\n') {	/* cut by a crash, or too long to be a key */
			int ch;

			while (n && line[n - 1] != '\n' && (ch = fgetc(f)) != EOF && ch != '\n')
				;
			continue;
		}
		line[--n] = 0;
		/* a suspect's re-test (KEY/retest, PHASE/TEST/retest-ROLE/...): no job of the plan */
		if (!slash || (n >= 7 && !strcmp(line + n - 7, "/retest")) || strstr(line, "/retest-"))
			continue;
		if ((q = planned_of(r, line, (size_t)(slash - line))))
			q->done++;
		else
			r->jobs_done_other++;
	}
	r->jobs_done_read = !ferror(f);
	fclose(f);
	return 0;
}

/*
 * One record of r into its groups, sweeps, PFC ports and polarization
 * records, as rstore_load streams them: the record is borrowed, and only
 * what the store keeps whole (PFC records) or r->polar holds may be
 * pointed into; node names are the store's.
 */
static int add_record(json_t *rec, void *ctx)
{
	struct rrun *r = ctx;
	const char *dir = r->dir;

	{
		const char *test = record_str(rec, "test", ""), *phase = record_str(rec, "phase", RRES_STANDALONE);
		struct rresult res;
		struct rgroup *g;
		int s, d;

		r->nrec++;
		if (strcmp(record_str(rec, "status", "ok"), "ok")) {
			struct rplanned *q = planned_of(r, phase, strlen(phase));

			r->nerr++;
			if (q)
				q->failed++;
			return 0;
		}
		if (*test && !json_is_string(json_object_get(rec, "retest_of")) &&
		    !json_is_string(json_object_get(rec, "retest_for")) &&
		    strcmp(record_str(rec, "kind", ""), "load") && strcmp(test, "bw") && strcmp(test, "lat") &&
		    measured(r, phase, test, -1, -1))	/* (bw and lat: their lanes, once grouped) */
			return fs_err_env("out of memory reading the records of %s", dir);
		if (!strcmp(test, "topology")) {	/* a port of a node: judged by cabling.c */
			char what[300];

			snprintf(what, sizeof(what), "%s: a topology record", dir);
			if (topo_obs_add_port(&r->topo_obs, record_str(rec, "src.node", NULL), json_object_get(rec, "port"),
					      what) == -FS_EXIT_ENV)
				return -FS_EXIT_ENV;
			return 0;
		}
		if (!strcmp(test, "polarization")) {
			if (json_array_append(r->polar, rec))
				return fs_err_env("out of memory reading the polarization records of %s", dir);
			return 0;
		}
		if (!strcmp(test, "pfc")) {
			if (pfc_add(r, rec))
				return fs_err_env("out of memory reading the PFC records of %s", dir);
			return 0;
		}
		if (rresult_of(rec, &res) <= 0)	/* the one filter of the run's analysis too (records/result.h); */
			return 0;		/* one on no rail or plane: left out (the store counts it) */
		if (res.test == RRES_BW && sweep_add(r, res.phase, res.rail, res.plane, res.size, res.v))
			return fs_err_env("out of memory reading the records of %s", dir);
		if (measured(r, res.phase, test, res.rail, res.plane))
			return fs_err_env("out of memory reading the records of %s", dir);
		if (!(g = group_get(r, res.phase, test, res.rail, res.plane)))
			return fs_err_env("out of memory reading the records of %s", dir);
		/* a phase that swept sizes: the table has the pairs at the largest size (the suspects
		 * are judged at every size) */
		if (res.size < g->size)
			return 0;
		if (res.size > g->size || !g->n) {
			g->size = res.size;
			g->n = 0;
			memset(&g->ro, 0, sizeof(g->ro));
			group_params(g, rec);
		}
		if (FS_ALLOC_GROW(g->p, g->n + 1, g->p_alloc) ||
		    (s = rstore_intern(&r->st, res.src)) < 0 || (d = rstore_intern(&r->st, res.dst)) < 0)
			return fs_err_env("out of memory reading the records of %s", dir);
		g->p[g->n].src = rstore_str(&r->st, s);
		g->p[g->n].dst = rstore_str(&r->st, d);
		g->p[g->n].v = res.v;
		g->p[g->n].v99 = res.v99;
		g->p[g->n].exp = NAN;
		g->p[g->n].round = res.round;
		if (res.test == RRES_LAT && json_is_string(json_object_get(json_object_get(rec, "params"), "load")))
			g->loaded = 1;	/* measured under a bw load (a plan's load = bw) */
		g->n++;
		if (res.test == RRES_BW)
			reorder_add(&g->ro, rec);
	}
	return 0;
}

int report_load_run(struct rrun *r, const char *dir)
{
	int rc;
	char path[4096];
	struct stat st;
	size_t k;
	int i;

	memset(r, 0, sizeof(*r));
	rstore_init(&r->st);
	r->dir = strdup(dir);
	r->polar = json_array();
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	/* a path that is not there is a wrong argument (2); one that is there
	 * but cannot be read, the environment's doing (3) */
	if (stat(dir, &st) && errno != ENOENT && errno != ENOTDIR)
		return fs_err_env("cannot read '%s': %s", dir, strerror(errno));
	if (stat(dir, &st))
		return fs_err_usage("'%s' does not exist: give a results directory (what 'fabscope run -o' wrote)",
				    dir);
	if (!S_ISDIR(st.st_mode))
		return fs_err_usage("'%s' is not a directory: give a results directory (what 'fabscope run -o' wrote)",
				    dir);
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	if (stat(path, &st))
		return errno == ENOENT ?
		       fs_err_usage("'%s' has no results.jsonl: is it a results directory of 'fabscope run'?", dir) :
		       fs_err_env("cannot read '%s': %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))	/* a FIFO would hang the report, /dev/zero feed it for ever */
		return fs_err_env("cannot read '%s': %s", path, records_strerror(RECORDS_ENOTREG));
	snprintf(path, sizeof(path), "%s/run.json", dir);
	{	/* not there: the records alone; not JSON: said; there but not readable, or not a file: exit 3 */
		int err;

		r->run = records_load_json(AT_FDCWD, path, RECORDS_RUN_MAX, 0, &err, NULL);
		if (err && err != -ENOENT && err != -EPROTO)
			return err == RECORDS_ENOTREG || err == -EFBIG ?
			       fs_err_env("cannot read '%s': %s", path, records_strerror(err)) :
			       fs_err_read(NULL, path, -err);
	}
	if (!json_is_object(r->run)) {
		json_decref(r->run);
		r->run = json_object();
		fs_warn("%s: missing or unreadable; the report has the records only", path);
	}
	{
		const char *slash = strrchr(dir, '/');

		snprintf(r->name, sizeof(r->name), "%s", slash && slash[1] ? slash + 1 : dir);
	}
	if ((rc = load_planned(r)))
		return rc;
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	rc = rstore_load(&r->st, dir, add_record, r);
	if (rc == -ENOMEM)
		return fs_err_env("out of memory reading the records of %s", dir);
	if (rc < 0)
		return fs_err_env("cannot read %s: %s", path, records_strerror(rc));
	if (rc)
		return rc;
	if (r->st.skipped)
		fs_warn("%s: %ld line(s) that are not records were skipped, the first at line %ld",
			path, r->st.skipped, r->st.first_skipped);
	/* another schema (a newer fabscope's "fabscope.record/2") may mean other
	 * things by the same fields; records without one (by hand) are read */
	if (r->st.nbadlane)
		fs_warn("%s: %ld result(s) whose src.rail or src.plane is no rail or plane (not a whole number "
			"from 0 to %d, 0 to %d) left out", path, r->st.nbadlane, FS_MAX_RAILS - 1, FS_MAX_PLANES - 1);
	if (r->st.nforeign)
		fs_warn("%s: %ld record(s) of schema '%.60s' left out: this fabscope reads %s (a newer "
			"fabscope wrote them?)", path, r->st.nforeign,
			r->st.first_foreign ? r->st.first_foreign : "?", RECORD_SCHEMA);
	for (i = 0; i < r->ng; i++)
		if (finish_group(&r->g[i]))
			return fs_err_env("out of memory summing up the records of %s", dir);
	if (r->npfc > 1)
		qsort(r->pfc, (size_t)r->npfc, sizeof(*r->pfc), pfc_cmp);
	if (r->ng > 1)
		qsort(r->g, (size_t)r->ng, sizeof(*r->g), group_cmp);

	for (i = 0; i < r->nsw; i++) {	/* a sweep needs sizes, in order */
		struct rsweep *s = &r->sw[i];
		int a, b;

		for (a = 1; a < s->n; a++)
			for (b = a; b > 0 && s->size[b - 1] > s->size[b]; b--) {
				double t = s->size[b];

				s->size[b] = s->size[b - 1];
				s->size[b - 1] = t;
				t = s->bw[b];
				s->bw[b] = s->bw[b - 1];
				s->bw[b - 1] = t;
			}
		if (s->n < 3) {	/* one size: not a sweep */
			r->sw[i] = r->sw[--r->nsw];
			i--;
		}
	}
	if ((rc = report_aggregate(r)))
		return rc;
	r->suspects = analyze_suspects_retest(&r->st, ANALYZE_LOW_FRAC, json_object_get(r->run, "retest"),
					      &r->not_confirmed);
	{
		json_t *nodes = json_object_get(r->run, "nodes"), *n;

		json_array_foreach(nodes, k, n)
			r->missing += !strcmp(record_str(n, "status", "ok"), "missing");
	}
	return 0;
}

void report_free_run(struct rrun *r)
{
	int i;

	report_aggregate_release(r);
	for (i = 0; i < r->ng; i++) {
		free(r->g[i].p);
		free(r->g[i].nodes);
	}
	free(r->g);
	free(r->sw);
	for (i = 0; i < r->npfc; i++)
		free(r->pfc[i].p);
	free(r->pfc);
	rstore_release(&r->st);
	json_decref(r->run);
	json_decref(r->suspects);
	json_decref(r->not_confirmed);
	json_decref(r->polar);
	topo_obs_release(&r->topo_obs);
	json_decref(r->cabling);
	free(r->ms);
	free(r->planned);
	free(r->dir);
	memset(r, 0, sizeof(*r));
}

void report_name_runs(struct report *rep)
{
	int i;

	if (rep->nruns < 2 && !rep->by)
		return;
	for (i = 0; i < rep->nruns; i++) {
		struct rrun *r = &rep->runs[i];
		json_t *labels = json_object_get(r->run, "labels"), *v;
		const char *key;
		char buf[256] = "";
		size_t len = 0;

		json_object_foreach(labels, key, v) {
			int j, differs = 0;

			if (!json_is_string(v))
				continue;
			if (rep->by && strcmp(rep->by, key))
				continue;
			for (j = 0; j < rep->nruns && !rep->by; j++) {
				json_t *o = json_object_get(json_object_get(rep->runs[j].run, "labels"), key);

				differs |= !json_equal(o, v);
			}
			if (!differs && !rep->by)
				continue;
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s=%s", len ? "," : "", key,
						json_string_value(v));
			if (len >= sizeof(buf))
				break;
		}
		if (*buf)
			snprintf(r->name, sizeof(r->name), "%s", buf);
		else if (rep->by)	/* named as without --by: say why */
			fs_warn("--by %s: run %s has no label '%s': it keeps the name '%s'", rep->by,
				r->dir, rep->by, r->name);
	}
}
