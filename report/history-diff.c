/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What changed tonight, and what keeps coming back (history.h's hist_diff).
 *
 * The window is the target run and the runs before it, at most --last,
 * ordered by start time and run id (never by the order they were added).
 * Every lane, node and pair of every night is held against its peers of
 * that night first: d = log(value / the median of its peers) (latency:
 * log(median / value)), so that a night when the whole machine was slower
 * (a busy host, a cooler cluster) moves every d together by nothing.  Peers
 * are the nodes (pairs) of one phase, test, lane and message size; a lane's
 * are the other lanes of its phase, test and size (judged with 3 lanes or
 * more).
 *
 * The tolerance is learned: sigma, a robust spread (1.4826 x the median
 * absolute deviation) of the d of a class (phase, test, size and kind:
 * lane, node or pair) over the window, and of the night itself, whichever
 * is larger, never under HIST_SPREAD_FLOOR.  An entity is a suspect on a
 * night when d <= -z sigma and its value is worse than its peers' by
 * min_change at least, z the one-sided normal quantile of fpr / M (M: the
 * entities judged that night; Bonferroni): a night whose values are only
 * noise names something with probability fpr at most.  A node or a pair is
 * judged on two results or more (the median of its results: slow with most
 * of its peers; a pair measured once is one sample, no evidence to name it
 * by); a pair whose end is a suspect node is that node's evidence, not a
 * suspect of its own.
 *
 * Confirmed: one night's statistics never page alone.  A suspect is
 * confirmed on a night when the run's own re-test confirmed it
 * (entity.confirmed, from run.json) or when it was a suspect on its judged
 * night before too; one night's alone is named "not confirmed" and watched.
 * The exit status counts a suspect confirmed tonight and not on its night
 * before (new, or back), and a confirmed regression.
 *
 * Since last night: a suspect of tonight that was one before is a
 * regression when its d tonight is worse than on its last night before
 * beyond the same z (sigma sqrt 2: the difference of two) and by min_change:
 * it came back, or got worse.  The change point of a suspect is the split of its nights
 * into two spans whose means differ most in z (a Student-style statistic
 * with the class's sigma, deterministic, as Hunter's E-divisive with a
 * t-test), named when beyond the quantile of fpr / (2 M (n - 1)).  A
 * suspect in at least `repeat` runs of the window, in two separate spans
 * or more, is a repeat offender: it keeps coming back.
 */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/record.h"
#include "history.h"

#define F_JUDGED 1
#define F_SUSPECT 2
#define F_RUNCONF 4	/* the run's own re-test confirmed it (entity.confirmed) */

struct obs {
	double size, v, d;
	int32_t phase, a, b, n;
	int16_t night;
	int8_t test, kind, rail, plane;
	uint8_t flags;
};

struct names {
	long long *id;
	char **s;
	size_t n, alloc;
};

struct dctx {
	struct hist *h;
	const struct hdiff_opts *o;
	struct hrun *runs;	/* every run held */
	int nruns, first, W;	/* the window: runs[first .. first + W) */
	struct obs *ob;
	size_t n, alloc;
	struct names nm;
	int *judged;		/* per night: entities judged */
	double *zs;		/* per night: the suspect quantile */
	struct obs *cls;	/* per class (phase, test, size, kind): one of it, d its pooled sigma */
	size_t ncls, cls_alloc;
	sqlite3_stmt *cable_sel;	/* a node's cable on a lane, a night */
};

/* ---- statistics ---- */

/* the z whose upper normal tail is q (0 < q < 0.5), by bisection: the same bits everywhere */
static double z_upper(double q)
{
	double lo = 0, hi = 40;
	int i;

	if (!(q > 0))
		return hi;
	if (q >= 0.5)
		return 0;
	for (i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;

		if (0.5 * erfc(mid / M_SQRT2) > q)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

static int dcmp(const void *x, const void *y)
{
	double p = *(const double *)x, q = *(const double *)y;

	return p < q ? -1 : p > q;
}

/* median of v[0..n) (sorted here) */
static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* 1.4826 x the median absolute deviation of v[0..n) (v changed) */
static double robust_sd(double *v, size_t n)
{
	double m = median(v, n);
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = fabs(v[i] - m);
	return 1.4826 * median(v, n);
}

/* ---- orders ---- */

#define CMP(x, y) do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)

/* class, then the peers of a night: phase, test, size, kind, night, lane */
static int cmp_peers(const void *x, const void *y)
{
	const struct obs *p = x, *q = y;

	CMP(p->phase, q->phase);
	CMP(p->test, q->test);
	CMP(p->size, q->size);
	CMP(p->kind, q->kind);
	CMP(p->night, q->night);
	CMP(p->rail, q->rail);
	CMP(p->plane, q->plane);
	CMP(p->a, q->a);
	CMP(p->b, q->b);
	return 0;
}

/* an entity's nights together: phase, test, size, lane, kind, a, b, night */
static int cmp_entity(const void *x, const void *y)
{
	const struct obs *p = x, *q = y;

	CMP(p->phase, q->phase);
	CMP(p->test, q->test);
	CMP(p->size, q->size);
	CMP(p->rail, q->rail);
	CMP(p->plane, q->plane);
	CMP(p->kind, q->kind);
	CMP(p->a, q->a);
	CMP(p->b, q->b);
	CMP(p->night, q->night);
	return 0;
}

static int same_class(const struct obs *p, const struct obs *q)
{
	return p->phase == q->phase && p->test == q->test && p->size == q->size && p->kind == q->kind;
}

static int same_peers(const struct obs *p, const struct obs *q)
{
	return same_class(p, q) && p->night == q->night &&
	       (p->kind == 0 || (p->rail == q->rail && p->plane == q->plane));
}

static int same_entity(const struct obs *p, const struct obs *q)
{
	return same_class(p, q) && p->rail == q->rail && p->plane == q->plane && p->a == q->a && p->b == q->b;
}

/* ---- loading ---- */

static const char *name_of(const struct dctx *c, long long id)
{
	size_t lo = 0, hi = c->nm.n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->nm.id[mid] == id)
			return c->nm.s[mid];
		if (c->nm.id[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return "?";
}

static int load_names(struct dctx *c)
{
	sqlite3_stmt *st;
	int s;

	if (sqlite3_prepare_v2(c->h->db, "SELECT id, s FROM name ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return fs_err_env("history '%s': %s", c->h->path, sqlite3_errmsg(c->h->db));
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 1);

		if (FS_ALLOC_GROW(c->nm.id, c->nm.n + 1, c->nm.alloc) ||
		    !(c->nm.s = fs_reallocarray(c->nm.s, c->nm.alloc, sizeof(*c->nm.s))) ||
		    !(c->nm.s[c->nm.n] = strdup(t ? t : ""))) {
			sqlite3_finalize(st);
			return fs_err_env("out of memory reading the history '%s'", c->h->path);
		}
		c->nm.id[c->nm.n++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (s != SQLITE_DONE)
		return fs_err_env("history '%s': %s", c->h->path, sqlite3_errmsg(c->h->db));
	return 0;
}

/* the entities of the window's nights */
static int load_obs(struct dctx *c)
{
	sqlite3_stmt *st;
	int night, s = SQLITE_DONE;

	if (sqlite3_prepare_v2(c->h->db, "SELECT g.phase, g.test, g.rail, g.plane, g.size, e.kind, e.a, e.b, e.v, e.n, e.confirmed"
			       " FROM grp g JOIN entity e ON e.grp = g.id WHERE g.run = ?1", -1, &st, NULL) != SQLITE_OK)
		return fs_err_env("history '%s': %s", c->h->path, sqlite3_errmsg(c->h->db));
	for (night = 0; night < c->W; night++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, c->runs[c->first + night].id);
		while ((s = sqlite3_step(st)) == SQLITE_ROW) {
			struct obs *b;
			int test = sqlite3_column_int(st, 1), rail = sqlite3_column_int(st, 2);
			int plane = sqlite3_column_int(st, 3), kind = sqlite3_column_int(st, 5);

			if (test < 0 || test > 1 || rail < 0 || rail > 127 || plane < 0 || plane > 127 || kind < 0 ||
			    kind > 2)
				continue;	/* not what this fabscope writes */
			if (FS_ALLOC_GROW(c->ob, c->n + 1, c->alloc)) {
				sqlite3_finalize(st);
				return fs_err_env("out of memory reading the history '%s'", c->h->path);
			}
			b = &c->ob[c->n++];
			memset(b, 0, sizeof(*b));
			b->phase = (int32_t)sqlite3_column_int64(st, 0);
			b->test = (int8_t)test;
			b->rail = (int8_t)rail;
			b->plane = (int8_t)plane;
			b->size = sqlite3_column_double(st, 4);
			b->kind = (int8_t)kind;
			b->a = (int32_t)sqlite3_column_int64(st, 6);
			b->b = (int32_t)sqlite3_column_int64(st, 7);
			b->v = sqlite3_column_double(st, 8);
			b->n = sqlite3_column_int(st, 9);
			b->flags = sqlite3_column_int(st, 10) == 1 ? F_RUNCONF : 0;
			b->night = (int16_t)night;
			b->d = NAN;
		}
		if (s != SQLITE_DONE)
			break;
	}
	sqlite3_finalize(st);
	if (s != SQLITE_DONE)
		return fs_err_env("history '%s': %s", c->h->path, sqlite3_errmsg(c->h->db));
	return 0;
}

/* ---- judging ---- */

/* d of every entity against its peers of the night */
static void peer_ratios(struct dctx *c, double *tmp)
{
	size_t i, j, k;

	qsort(c->ob, c->n, sizeof(*c->ob), cmp_peers);
	for (i = 0; i < c->n; i = j) {
		double m;

		for (j = i; j < c->n && same_peers(&c->ob[i], &c->ob[j]); j++)
			tmp[j - i] = c->ob[j].v;
		if (c->ob[i].kind == 0 && j - i < 3)
			continue;	/* a lane needs two other lanes to be held against */
		m = median(tmp, j - i);
		for (k = i; k < j; k++) {
			struct obs *o = &c->ob[k];
			double v = o->v > m * 1e-3 ? o->v : m * 1e-3;	/* (a dead link: 1000 x worse) */

			if (!(m > 0) || (o->kind >= 1 && o->n < 2))
				continue;
			o->d = o->test == 0 ? log(v / m) : log(m / v);
			o->flags |= F_JUDGED;
			c->judged[o->night]++;
		}
	}
}

/* the suspects of every night: beyond z sigma and min_change worse than the peers */
static void suspects(struct dctx *c, double *tmp)
{
	double dmax = log(1 - c->o->min_change);
	size_t i, j, k, nt;
	int t;

	for (t = 0; t < c->W; t++)
		c->zs[t] = z_upper(c->o->fpr / (c->judged[t] > 0 ? c->judged[t] : 1));
	for (i = 0; i < c->n; i = j) {	/* a class: its pooled spread, then each night's */
		double pool;
		size_t m = 0;

		for (j = i; j < c->n && same_class(&c->ob[i], &c->ob[j]); j++)
			if (c->ob[j].flags & F_JUDGED)
				tmp[m++] = c->ob[j].d;
		pool = m ? robust_sd(tmp, m) : 0;
		if (!FS_ALLOC_GROW(c->cls, c->ncls + 1, c->cls_alloc)) {	/* (else: counted again) */
			c->cls[c->ncls] = c->ob[i];
			c->cls[c->ncls++].d = fmax(pool, HIST_SPREAD_FLOOR);
		}
		for (k = i; k < j; k = nt) {
			double night_sd, sigma;

			for (nt = k, m = 0; nt < j && c->ob[nt].night == c->ob[k].night; nt++)
				if (c->ob[nt].flags & F_JUDGED)
					tmp[m++] = c->ob[nt].d;
			night_sd = m ? robust_sd(tmp, m) : 0;
			sigma = fmax(fmax(pool, night_sd), HIST_SPREAD_FLOOR);
			for (m = k; m < nt; m++) {
				struct obs *o = &c->ob[m];

				if ((o->flags & F_JUDGED) && o->d <= -c->zs[o->night] * sigma && o->d <= dmax)
					o->flags |= F_SUSPECT;
			}
		}
	}
}

/* a suspect pair whose end is a suspect node of its lane that night: the node's evidence */
static int explain_pairs(struct dctx *c)
{
	struct obs *node = NULL;
	size_t nn = 0, alloc = 0, i;

	for (i = 0; i < c->n; i++)
		if (c->ob[i].kind == 1 && (c->ob[i].flags & F_SUSPECT)) {
			if (FS_ALLOC_GROW(node, nn + 1, alloc))
				return fs_err_env("out of memory judging the history");
			node[nn++] = c->ob[i];
		}
	for (i = 0; i < c->n; i++) {
		struct obs *o = &c->ob[i];
		size_t k;

		if (o->kind != 2 || !(o->flags & F_SUSPECT))
			continue;
		for (k = 0; k < nn; k++)
			if (node[k].phase == o->phase && node[k].test == o->test && node[k].size == o->size &&
			    node[k].rail == o->rail && node[k].plane == o->plane && node[k].night == o->night &&
			    (node[k].a == o->a || node[k].a == o->b))
				o->flags &= (uint8_t)~F_SUSPECT;
	}
	free(node);
	return 0;
}

/* the class's pooled sigma, as suspects() learned it (again, for the entity at e) */
static double class_sigma(struct dctx *c, const struct obs *e, double *tmp)
{
	size_t i, m = 0;

	for (i = 0; i < c->ncls; i++)	/* (few: phases x tests x sizes x 3) */
		if (same_class(&c->cls[i], e))
			return c->cls[i].d;
	for (i = 0; i < c->n; i++)
		if (same_class(&c->ob[i], e) && (c->ob[i].flags & F_JUDGED))
			tmp[m++] = c->ob[i].d;
	return fmax(m ? robust_sd(tmp, m) : 0, HIST_SPREAD_FLOOR);
}

/* ---- rendering one entity into the model ---- */

static json_t *run_ref(struct dctx *c, int night)
{
	return json_pack("{ss,ss}", "run", c->runs[c->first + night].run_id, "started",
			 c->runs[c->first + night].started);
}

/* the best single change point of e[0..n) (one entity's nights), or NULL */
static json_t *change_point(struct dctx *c, const struct obs *e, size_t n, double sigma)
{
	double best = 0, zc;
	size_t k, i, at = 0, nj = 0;
	double bm = 0, am = 0;

	for (i = 0; i < n; i++)
		nj += (e[i].flags & F_JUDGED) != 0;
	if (nj < 3)
		return NULL;
	for (k = 1; k < nj; k++) {	/* the first k judged nights before, the rest after */
		double s1 = 0, s2 = 0, z;
		size_t m = 0;

		for (i = 0; i < n; i++)
			if (e[i].flags & F_JUDGED) {
				if (m < k)
					s1 += e[i].d;
				else
					s2 += e[i].d;
				m++;
			}
		s1 /= (double)k;
		s2 /= (double)(nj - k);
		z = fabs(s1 - s2) / (sigma * sqrt(1.0 / (double)k + 1.0 / (double)(nj - k)));
		if (z > best) {
			best = z;
			at = k;
			bm = s1;
			am = s2;
		}
	}
	zc = z_upper(c->o->fpr / (2.0 * (c->judged[c->W - 1] > 0 ? c->judged[c->W - 1] : 1) * (double)(nj - 1)));
	if (best < zc)
		return NULL;
	for (i = 0, k = 0; i < n; i++)
		if ((e[i].flags & F_JUDGED) && k++ == at)
			break;
	return json_pack("{s:o,s:f,s:f,s:f}", "at", run_ref(c, e[i].night),
			 "before", e->test == 0 ? exp(bm) - 1 : exp(-bm) - 1,
			 "after", e->test == 0 ? exp(am) - 1 : exp(-am) - 1, "z", round(best * 100) / 100);
}

/* how many separate spans of suspect nights e[0..n) has */
static int spans(const struct obs *e, size_t n)
{
	int s = 0, in = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!(e[i].flags & F_JUDGED))
			continue;
		if ((e[i].flags & F_SUSPECT) && !in)
			s++;
		in = (e[i].flags & F_SUSPECT) != 0;
	}
	return s;
}

/* the entity's value relative to its peers: bw below (negative), lat above (positive) */
static double rel(const struct obs *o)
{
	return o->test == 0 ? exp(o->d) - 1 : exp(-o->d) - 1;
}

static json_t *entity_json(struct dctx *c, const struct obs *e, size_t n, double sigma)
{
	static const char *const kinds[] = { "lane", "node", "pair" };
	const struct obs *last = &e[n - 1];
	json_t *j, *hist = json_array(), *runs = json_array();
	int first = -1, nsusp = 0, njudged = 0, night;
	size_t i = 0;

	for (night = 0; night < c->W; night++) {
		if (i < n && e[i].night == night) {
			json_array_append_new(hist, json_real(e[i].v));
			if (e[i].flags & F_JUDGED)
				njudged++;
			if (e[i].flags & F_SUSPECT) {
				nsusp++;
				json_array_append_new(runs, json_string(c->runs[c->first + night].run_id));
				if (first < 0)
					first = night;
			}
			i++;
		} else {
			json_array_append_new(hist, json_null());
		}
	}
	j = json_pack("{ss,ss,ss,si,si,sf}", "kind", kinds[e->kind], "phase", name_of(c, e->phase), "test",
		      e->test == 0 ? "bw" : "lat", "rail", e->rail, "plane", e->plane, "size", e->size);
	if (e->kind >= 1)
		json_object_set_new(j, "node", json_string(name_of(c, e->a)));
	if (e->kind == 2)
		json_object_set_new(j, "peer", json_string(name_of(c, e->b)));
	json_object_set_new(j, "in_runs", json_integer(nsusp));
	json_object_set_new(j, "runs", json_integer(njudged));
	json_object_set_new(j, "suspect_runs", runs);
	if (first >= 0)
		json_object_set_new(j, "since", run_ref(c, first));
	if (last->night == c->W - 1 && (last->flags & F_JUDGED)) {
		json_object_set_new(j, "value", json_real(last->v));
		json_object_set_new(j, "change", json_real(round(rel(last) * 1e4) / 1e4));
		json_object_set_new(j, "z", json_real(round(fabs(last->d) / sigma * 100) / 100));
	}
	json_object_set_new(j, "history", hist);
	if (spans(e, n) == 1) {	/* one span: where it began (a repeat offender's has none) */
		json_t *cp = change_point(c, e, n, sigma);

		if (cp)
			json_object_set_new(j, "change_point", cp);
	}
	return j;
}

/* ---- the cables of a node named ---- */

/* a node's cable on a lane, on a night whose run had a design: names (the switch NULL: the
 * design has no port of it there) */
struct hcable {
	const char *sw, *port, *host;
};

static int cable_of(struct dctx *c, int night, long long node, int rail, int plane, struct hcable *k)
{
	int s;

	memset(k, 0, sizeof(*k));
	sqlite3_reset(c->cable_sel);
	sqlite3_bind_int64(c->cable_sel, 1, c->runs[c->first + night].id);
	sqlite3_bind_int64(c->cable_sel, 2, node);
	sqlite3_bind_int(c->cable_sel, 3, rail);
	sqlite3_bind_int(c->cable_sel, 4, plane);
	if ((s = sqlite3_step(c->cable_sel)) == SQLITE_ROW) {
		k->sw = name_of(c, sqlite3_column_int64(c->cable_sel, 0));
		k->port = name_of(c, sqlite3_column_int64(c->cable_sel, 1));
		k->host = name_of(c, sqlite3_column_int64(c->cable_sel, 2));
	} else if (s != SQLITE_DONE) {
		return fs_err_env("history '%s': reading a cable: %s", c->h->path, sqlite3_errmsg(c->h->db));
	}
	return 0;
}

static int same_cable(const struct hcable *p, const struct hcable *q)
{
	if (!p->sw || !q->sw)
		return !p->sw && !q->sw;
	return !strcmp(p->sw, q->sw) && !strcmp(p->port, q->port) && !strcmp(p->host, q->host);
}

/* {switch, port, host_port}, all null when not in the design */
static json_t *cable_json(const struct hcable *k)
{
	return json_pack("{s:s?,s:s?,s:s?}", "switch", k->sw, "port", k->port, "host_port", k->host);
}

/*
 * Node x of the entity e[0..n) (its nights): key (cable, peer_cable) the cable of the night it
 * is named for (its last night a suspect: tonight for tonight's suspects), and into recabled
 * every change of it between two of its nights whose runs had a design.  A night without a
 * design says nothing of its cables: neither a cable nor a change.
 */
static int node_cables(struct dctx *c, const struct obs *e, size_t n, long long x, const char *key, json_t *j,
		       json_t *recabled)
{
	struct hcable prev = { 0 }, cur;
	int named = e[n - 1].night, have = 0, rc;
	size_t i;

	for (i = 0; i < n; i++)
		if (e[i].flags & F_SUSPECT)
			named = e[i].night;
	for (i = 0; i < n; i++) {
		const struct hrun *r = &c->runs[c->first + e[i].night];

		if (!r->design)
			continue;
		if ((rc = cable_of(c, e[i].night, x, e->rail, e->plane, &cur)))
			return rc;
		if (have && !same_cable(&prev, &cur) &&
		    json_array_append_new(recabled, json_pack("{ss,so,so,so}", "node", name_of(c, x), "at",
							      run_ref(c, e[i].night), "from", cable_json(&prev),
							      "to", cable_json(&cur))))
			return fs_err_env("out of memory judging the history");
		prev = cur;
		have = 1;
		if (e[i].night == named) {
			json_t *k = cable_json(&cur);

			if (!k || json_object_set_new(k, "run", json_string(r->run_id)) ||
			    json_object_set_new(k, "design", json_string(r->design)) || json_object_set_new(j, key, k))
				return fs_err_env("out of memory judging the history");
		}
	}
	return 0;
}

/* a node's or a pair's cables (its two ends'), and its recablings, into its model j */
static int entity_cables(struct dctx *c, const struct obs *e, size_t n, json_t *j)
{
	json_t *recabled;
	int rc;

	if (e->kind == 0)
		return 0;	/* a lane: no cable of its own */
	if (!(recabled = json_array()))
		return fs_err_env("out of memory judging the history");
	if (!(rc = node_cables(c, e, n, e->a, "cable", j, recabled)) && e->kind == 2)
		rc = node_cables(c, e, n, e->b, "peer_cable", j, recabled);
	if (!rc && json_array_size(recabled))
		return json_object_set_new(j, "recabled", recabled) ?
		       fs_err_env("out of memory judging the history") : 0;
	json_decref(recabled);
	return rc;
}

/* since last night: tonight's d against the entity's last night before (the latest it was
 * judged on), 1 when worse beyond z (the difference of two: sigma sqrt 2) */
static int regression(struct dctx *c, const struct obs *e, size_t n, double sigma)
{
	size_t i;

	for (i = n - 1; i-- > 0;)
		if (e[i].flags & F_JUDGED)
			return (e[n - 1].d - e[i].d) / (sigma * M_SQRT2) <= -c->zs[c->W - 1] &&
			       e[n - 1].d - e[i].d <= log(1 - c->o->min_change);
	return 0;
}

/* the entity's judged night before e[k] (its index), or -1 */
static long prev_judged(const struct obs *e, size_t k)
{
	while (k-- > 0)
		if (e[k].flags & F_JUDGED)
			return (long)k;
	return -1;
}

/*
 * A suspect on night e[k] is confirmed when the run's own re-test confirmed it, or when it was
 * a suspect on its judged night before too: one night's statistics name it, never alone.  What
 * confirmed it (a string) or NULL.
 */
static const char *confirmed_at(const struct obs *e, size_t k)
{
	long p;

	if (!(e[k].flags & F_SUSPECT))
		return NULL;
	if (e[k].flags & F_RUNCONF)
		return "the run's re-test";
	p = prev_judged(e, k);
	return p >= 0 && (e[p].flags & F_SUSPECT) ? "the night before (a suspect then too)" : NULL;
}

/*
 * Tonight's verdict of the suspect e[0..n) into x; 1 when it counts for the exit status: newly
 * confirmed tonight (not confirmed on its night before: new, or back), 2 a confirmed one worse
 * than on its night before (a regression), 0 neither (among them: one night, not confirmed).
 */
static int tonight_verdict(struct dctx *c, const struct obs *e, size_t n, double sigma, json_t *x)
{
	const char *how = confirmed_at(e, n - 1);
	long p = prev_judged(e, n - 1);
	int before = p >= 0 && confirmed_at(e, (size_t)p), reg = how && regression(c, e, n, sigma);

	json_object_set_new(x, "regression", json_boolean(reg));
	json_object_set_new(x, "confirmed", json_boolean(how != NULL));
	if (how)
		json_object_set_new(x, "confirmed_by", json_string(how));
	json_object_set_new(x, "alarm", json_boolean(how && (!before || reg)));
	return !how ? 0 : !before ? 1 : reg ? 2 : 0;
}

/* every entity: the suspects of tonight, the repeat offenders; *nnew, *nreg counted (what
 * tonight_verdict says), *nwatch the suspects of one night, not confirmed */
static int judge_entities(struct dctx *c, json_t *sus, json_t *rep, double *tmp, int *nnew, int *nreg,
			  int *nwatch)
{
	size_t i, j;

	qsort(c->ob, c->n, sizeof(*c->ob), cmp_entity);
	for (i = 0; i < c->n; i = j) {
		const struct obs *e = &c->ob[i], *last;
		int tonight, many, s, rc;
		double sigma = 0;
		json_t *x;

		for (j = i; j < c->n && same_entity(e, &c->ob[j]); j++)
			;
		last = &c->ob[j - 1];
		tonight = last->night == c->W - 1 && (last->flags & F_SUSPECT);
		s = spans(e, j - i);
		many = 0;
		if (s >= 2) {
			int k = 0;
			size_t m;

			for (m = i; m < j; m++)
				k += (c->ob[m].flags & F_SUSPECT) != 0;
			many = k >= c->o->repeat;
		}
		if (!tonight && !many)
			continue;
		sigma = class_sigma(c, e, tmp);
		if (!(x = entity_json(c, e, j - i, sigma)))
			return fs_err_env("out of memory judging the history");
		if ((rc = entity_cables(c, e, j - i, x))) {
			json_decref(x);
			return rc;
		}
		json_object_set_new(x, "repeat", json_boolean(many));
		if (tonight) {
			int first_tonight = json_integer_value(json_object_get(x, "in_runs")) == 1;
			int v = tonight_verdict(c, e, j - i, sigma, x);

			json_object_set_new(x, "status", json_string(first_tonight ? "new tonight" : "known since"));
			*nnew += v == 1;
			*nreg += v == 2;
			*nwatch += !json_is_true(json_object_get(x, "confirmed"));
			json_array_append(sus, x);
		}
		if (many)
			json_array_append(rep, x);
		json_decref(x);
	}
	return 0;
}

/* per phase, test and size: tonight's lanes together against the nights before (the machine) */
static void shifts(struct dctx *c, json_t *out, double *tmp, double *lv)
{
	size_t i, j, k, nt;

	qsort(c->ob, c->n, sizeof(*c->ob), cmp_peers);
	for (i = 0; i < c->n; i = j) {
		double now = NAN, base, sd, sh;
		int nl = 0;

		for (j = i; j < c->n && same_class(&c->ob[i], &c->ob[j]); j++)
			;
		if (c->ob[i].kind != 0)
			continue;
		for (k = i; k < j; k = nt) {	/* each night's median lane */
			size_t m = 0;
			double med;

			for (nt = k; nt < j && c->ob[nt].night == c->ob[k].night; nt++)
				tmp[m++] = c->ob[nt].v;
			med = median(tmp, m);
			if (!(med > 0))
				continue;
			if (c->ob[k].night == c->W - 1)
				now = log(med);
			else
				lv[nl++] = log(med);
		}
		if (isnan(now) || nl < 2)
			continue;
		memcpy(tmp, lv, (size_t)nl * sizeof(*tmp));
		base = median(tmp, (size_t)nl);
		memcpy(tmp, lv, (size_t)nl * sizeof(*tmp));
		sd = fmax(robust_sd(tmp, (size_t)nl), HIST_SPREAD_FLOOR);
		sh = now - base;
		if (fabs(exp(sh) - 1) < c->o->min_change || fabs(sh) / sd < c->zs[c->W - 1])
			continue;
		json_array_append_new(out, json_pack("{ss,ss,sf,sf,sf}", "phase", name_of(c, c->ob[i].phase),
			"test", c->ob[i].test == 0 ? "bw" : "lat", "size", c->ob[i].size,
			"change", round((exp(sh) - 1) * 1e4) / 1e4, "z", round(fabs(sh) / sd * 100) / 100));
	}
}

/* every lane's median, night by night (the trends) */
static int lanes(struct dctx *c, json_t *out)
{
	size_t i, j;

	qsort(c->ob, c->n, sizeof(*c->ob), cmp_entity);
	for (i = 0; i < c->n; i = j) {
		const struct obs *e = &c->ob[i];
		json_t *h;
		int night;
		size_t k = i;

		for (j = i; j < c->n && same_entity(e, &c->ob[j]); j++)
			;
		if (e->kind != 0)
			continue;
		h = json_array();
		for (night = 0; night < c->W; night++)
			if (k < j && c->ob[k].night == night)
				json_array_append_new(h, json_real(c->ob[k++].v));
			else
				json_array_append_new(h, json_null());
		if (json_array_append_new(out, json_pack("{ss,ss,si,si,sf,so}", "phase", name_of(c, e->phase), "test",
			e->test == 0 ? "bw" : "lat", "rail", e->rail, "plane", e->plane, "size", e->size, "history", h)))
			return fs_err_env("out of memory judging the history");
	}
	return 0;
}

/* the renderings' order: by names and numbers, never by ids */
static int cmp_json(const void *x, const void *y)
{
	static const char *const skey[] = { "phase", "test", "kind", "node", "peer" };
	static const char *const nkey[] = { "size", "rail", "plane" };
	json_t *p = *(json_t *const *)x, *q = *(json_t *const *)y;
	size_t i;
	int r;

	for (i = 0; i < 2; i++)
		if ((r = strcmp(record_str(p, skey[i], ""), record_str(q, skey[i], ""))))
			return r;
	for (i = 0; i < 3; i++) {
		double a = json_number_value(json_object_get(p, nkey[i])), b = json_number_value(json_object_get(q, nkey[i]));

		if (a != b)
			return a < b ? -1 : 1;
	}
	for (i = 2; i < 5; i++)
		if ((r = strcmp(record_str(p, skey[i], ""), record_str(q, skey[i], ""))))
			return r;
	return 0;
}

static void sort_array(json_t *a)
{
	size_t n = json_array_size(a), i;
	json_t **v = calloc(n + 1, sizeof(*v));

	if (!v)
		return;	/* (left in the order made: deterministic too) */
	for (i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(a, i));
	qsort(v, n, sizeof(*v), cmp_json);
	json_array_clear(a);
	for (i = 0; i < n; i++)
		json_array_append_new(a, v[i]);
	free(v);
}

/* the window: the target and up to last - 1 runs before it */
static int window(struct dctx *c)
{
	int t = c->nruns - 1, rc;

	if ((rc = hist_runs(c->h, &c->runs, &c->nruns)))
		return rc;
	if (!c->nruns)
		return fs_err_usage("the history '%s' holds no run: add results directories with 'fabscope history "
				    "add'", c->h->path);
	t = c->nruns - 1;
	if (c->o->run) {
		for (t = 0; t < c->nruns && strcmp(c->runs[t].run_id, c->o->run); t++)
			;
		if (t == c->nruns)
			return fs_err_usage("the history '%s' holds no run '%s': 'fabscope history list' shows them",
					    c->h->path, c->o->run);
	}
	c->W = t + 1 < c->o->last ? t + 1 : c->o->last;
	c->first = t + 1 - c->W;
	return 0;
}

static json_t *model(struct dctx *c, double *tmp, int *rc)
{
	json_t *d = json_object(), *w = json_array(), *sus = json_array(), *rep = json_array();
	json_t *sh = json_array(), *ln = json_array();
	int night, nnew = 0, nreg = 0, nwatch = 0, total = 0;
	char why[400], watch[160] = "";

	for (night = 0; night < c->W; night++) {
		json_array_append_new(w, run_ref(c, night));
		total += c->judged[night];
	}
	if ((*rc = judge_entities(c, sus, rep, tmp, &nnew, &nreg, &nwatch)) || (*rc = lanes(c, ln))) {
		json_decref(d);
		return NULL;
	}
	shifts(c, sh, tmp, tmp + c->n + 1);
	sort_array(sus);
	sort_array(rep);
	sort_array(sh);
	sort_array(ln);
	if (nwatch)
		snprintf(watch, sizeof(watch), "; %d suspect%s of one night, not confirmed (neither by the run's re-test "
			 "nor by the night before): watched, not counted", nwatch,
			 nwatch == 1 ? "" : "s");
	if (nnew || nreg)
		snprintf(why, sizeof(why), "%d suspect%s confirmed tonight (new, or back), %d regression%s of a "
			 "confirmed one%s", nnew, nnew == 1 ? "" : "s", nreg, nreg == 1 ? "" : "s", watch);
	else
		snprintf(why, sizeof(why), "no suspect confirmed tonight, no confirmed one worse than last night%s",
			 watch);
	json_object_set_new(d, "window", w);
	json_object_set_new(d, "target", run_ref(c, c->W - 1));
	json_object_set_new(d, "fpr", json_real(c->o->fpr));
	json_object_set_new(d, "min_change", json_real(c->o->min_change));
	json_object_set_new(d, "repeat_min", json_integer(c->o->repeat));
	json_object_set_new(d, "judged", json_integer(c->judged[c->W - 1]));
	json_object_set_new(d, "judged_window", json_integer(total));
	json_object_set_new(d, "z_suspect", json_real(round(c->zs[c->W - 1] * 100) / 100));
	json_object_set_new(d, "suspects", sus);
	json_object_set_new(d, "repeat", rep);
	json_object_set_new(d, "shifts", sh);
	json_object_set_new(d, "lanes", ln);
	json_object_set_new(d, "exit", json_integer(nnew || nreg));
	json_object_set_new(d, "why", json_string(why));
	return d;
}

json_t *hist_diff(struct hist *h, const struct hdiff_opts *o, int *rc)
{
	struct dctx c = { .h = h, .o = o };
	double *tmp = NULL;
	json_t *d = NULL;
	size_t i;

	if ((*rc = window(&c)) || (*rc = load_names(&c)) || (*rc = load_obs(&c)))
		goto out;
	if (sqlite3_prepare_v2(h->db, "SELECT switch, port, host_port FROM cable WHERE run = ?1 AND node = ?2 AND"
			       " rail = ?3 AND plane IN (?4, -1) ORDER BY plane DESC LIMIT 1", -1, &c.cable_sel,
			       NULL) != SQLITE_OK) {
		*rc = fs_err_env("history '%s': %s", h->path, sqlite3_errmsg(h->db));
		goto out;
	}
	c.judged = calloc((size_t)c.W, sizeof(*c.judged));
	c.zs = calloc((size_t)c.W, sizeof(*c.zs));
	tmp = calloc(c.n + 1 + (size_t)c.W, sizeof(*tmp));
	if (!c.judged || !c.zs || !tmp) {
		*rc = fs_err_env("out of memory judging the history '%s'", h->path);
		goto out;
	}
	peer_ratios(&c, tmp);
	suspects(&c, tmp);
	if ((*rc = explain_pairs(&c)))
		goto out;
	d = model(&c, tmp, rc);
out:
	sqlite3_finalize(c.cable_sel);
	free(tmp);
	free(c.judged);
	free(c.zs);
	free(c.ob);
	free(c.cls);
	for (i = 0; i < c.nm.n; i++)
		free(c.nm.s[i]);
	free(c.nm.s);
	free(c.nm.id);
	hist_runs_free(c.runs, c.nruns);
	return d;
}
