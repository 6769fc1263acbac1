/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a large fleet's report shows in place of matrices of nodes (report.h):
 * per lane, the worst pairs and the worst nodes, and a matrix of leaves (or
 * pods) for the heatmaps.
 *
 *   worst pairs   the REPORT_WORST pairs with the lowest bandwidth (the
 *                 highest latency p50) of a lane, in lanes of more than
 *                 REPORT_MATRIX_NODES nodes (where the pairwise matrices end)
 *   worst nodes   the same of each node's median over the pairs it took
 *                 part in, as sender or receiver: a slow NIC drags all of
 *                 its pairs, a slow path only one
 *   leaf matrix   in lanes of more than REPORT_HEAT_NODES nodes (where the
 *                 node x node heatmaps end), when run.json's nodes name
 *                 their leaf (the hostfile's leaf=): cell (i, j) is the
 *                 median of the pairs sent from leaf i's nodes to leaf j's.
 *                 Over REPORT_MAX_LEAVES leaves the pods (pod=) are used,
 *                 and over that many pods there is no matrix.
 *
 * Time O(R log R) for R results, memory O(R) for one lane at a time plus
 * the matrices (at most REPORT_MAX_LEAVES^2 numbers a lane).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/names.h"
#include "../core/record.h"
#include "report.h"

struct idv {
	int id;
	double v;
};

static int idv_cmp(const void *a, const void *b)
{
	const struct idv *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->v < y->v ? -1 : x->v > y->v;
}

/* 1 when a is worse than b in g's test: lower bandwidth, higher latency */
static int worse(const struct rgroup *g, double a, double b)
{
	return g->test[0] == 'l' ? a > b : a < b;
}

/* a worse than b, ties broken by the names (the same report every time) */
static int worse_entry(const struct rgroup *g, const struct rworst *a, const struct rworst *b)
{
	int c;

	if (a->v != b->v)
		return worse(g, a->v, b->v);
	c = fs_name_cmp(a->src, b->src);
	if (!c && a->dst && b->dst)
		c = fs_name_cmp(a->dst, b->dst);
	return c < 0;
}

/* keep e among the n (at most REPORT_WORST) worst of w, in order, worst first */
static void worst_keep(const struct rgroup *g, struct rworst *w, int *n, const struct rworst *e)
{
	int i;

	if (*n == REPORT_WORST && !worse_entry(g, e, &w[*n - 1]))
		return;
	i = *n < REPORT_WORST ? (*n)++ : *n - 1;
	for (; i > 0 && worse_entry(g, e, &w[i - 1]); i--)
		w[i] = w[i - 1];
	w[i] = *e;
}

/* The leaf (or pod) of every node named in run.json, by interned id, into r. */
static int leaves_build(struct rrun *r)
{
	static const char *const keys[] = { "leaf", "pod" };
	json_t *nodes = json_object_get(r->run, "nodes"), *n;
	size_t k, nn = json_array_size(nodes);
	const char **names = NULL;
	int ki, i, nl, rc = 0;

	for (ki = 0; ki < 2 && !r->leaf_by; ki++) {
		free(names);
		if (!(names = fs_reallocarray(NULL, nn + 1, sizeof(*names))))
			return -1;
		nl = 0;
		json_array_foreach(nodes, k, n)
			if (json_is_string(json_object_get(n, keys[ki])))
				names[nl++] = json_string_value(json_object_get(n, keys[ki]));
		if (nl > 1)
			qsort(names, (size_t)nl, sizeof(*names), fs_name_pcmp);
		for (i = 0, r->nleaf = 0; i < nl; i++)
			if (!r->nleaf || strcmp(names[r->nleaf - 1], names[i]))
				names[r->nleaf++] = names[i];
		if (r->nleaf >= 2 && r->nleaf <= REPORT_MAX_LEAVES)
			r->leaf_by = keys[ki];
	}
	if (!r->leaf_by) {
		free(names);
		r->nleaf = 0;
		return 0;
	}
	r->leaf = names;	/* the names belong to r->run */
	json_array_foreach(nodes, k, n) {
		const char *name = record_str(n, "name", NULL), *lf = record_str(n, r->leaf_by, NULL);
		const char **at;
		int id;

		if (!name || !lf)
			continue;
		if ((id = rstore_intern(&r->st, name)) < 0 ||
		    FS_ALLOC_GROW(r->leaf_of, (size_t)id + 1, r->leaf_of_alloc)) {
			rc = -1;
			break;
		}
		while (r->nleaf_of <= id)
			r->leaf_of[r->nleaf_of++] = -1;
		at = bsearch(&lf, r->leaf, (size_t)r->nleaf, sizeof(*r->leaf), fs_name_pcmp);
		r->leaf_of[id] = at ? (int)(at - r->leaf) : -1;
	}
	return rc;
}

/* the leaf index of a node's interned name, -1 when unknown; -2 out of memory */
static int leaf_index(struct rrun *r, const char *node)
{
	int id = rstore_intern(&r->st, node);

	if (id < 0)
		return -2;
	return id < r->nleaf_of ? r->leaf_of[id] : -1;
}

static int worst_pairs(struct rrun *r, struct rgroup *g)
{
	int i;

	g->nworst_pair = 0;
	for (i = 0; i < g->n; i++) {
		struct rworst e = { g->p[i].src, g->p[i].dst, g->p[i].v, 1, -1, -1 };

		if (!isnan(e.v))
			worst_keep(g, g->worst_pair, &g->nworst_pair, &e);
	}
	for (i = 0; i < g->nworst_pair; i++) {
		struct rworst *w = &g->worst_pair[i];

		if ((w->leaf = leaf_index(r, w->src)) == -2 || (w->dst_leaf = leaf_index(r, w->dst)) == -2)
			return -1;
	}
	return 0;
}

/* each node's median over its pairs, the worst REPORT_WORST of them */
static int worst_nodes(struct rrun *r, struct rgroup *g)
{
	struct idv *e = fs_reallocarray(NULL, (size_t)g->n * 2 + 1, sizeof(*e));
	size_t ne = 0, a, b;
	int i;

	if (!e)
		return -1;
	for (i = 0; i < g->n; i++) {
		int s = rstore_intern(&r->st, g->p[i].src), d = rstore_intern(&r->st, g->p[i].dst);

		if (s < 0 || d < 0) {
			free(e);
			return -1;
		}
		if (isnan(g->p[i].v))
			continue;
		e[ne].id = s;
		e[ne++].v = g->p[i].v;
		e[ne].id = d;
		e[ne++].v = g->p[i].v;
	}
	qsort(e, ne, sizeof(*e), idv_cmp);
	g->nworst_node = 0;
	for (a = 0; a < ne; a = b) {
		struct rworst w = { rstore_str(&r->st, e[a].id), NULL, 0, 0, -1, -1 };
		size_t m;

		for (b = a; b < ne && e[b].id == e[a].id; b++)
			;
		m = b - a;
		w.v = m % 2 ? e[a + m / 2].v : (e[a + m / 2 - 1].v + e[a + m / 2].v) / 2;
		w.n = (int)m;
		w.leaf = e[a].id < r->nleaf_of ? r->leaf_of[e[a].id] : -1;
		worst_keep(g, g->worst_node, &g->nworst_node, &w);
	}
	free(e);
	return 0;
}

/* the median of the pairs from leaf i to leaf j, into g->leafm */
static int leaf_matrix(struct rrun *r, struct rgroup *g)
{
	size_t cells = (size_t)r->nleaf * (size_t)r->nleaf, ne = 0, a, b;
	struct idv *e = fs_reallocarray(NULL, (size_t)g->n + 1, sizeof(*e));
	int i;

	if (!e || !(g->leafm = fs_reallocarray(NULL, cells, sizeof(*g->leafm)))) {
		free(e);
		return -1;
	}
	for (a = 0; a < cells; a++)
		g->leafm[a] = NAN;
	for (i = 0; i < g->n; i++) {
		int s = leaf_index(r, g->p[i].src), d = leaf_index(r, g->p[i].dst);

		if (s == -2 || d == -2) {
			free(e);
			return -1;
		}
		if (s < 0 || d < 0 || isnan(g->p[i].v))
			continue;
		e[ne].id = s * r->nleaf + d;
		e[ne++].v = g->p[i].v;
	}
	qsort(e, ne, sizeof(*e), idv_cmp);
	for (a = 0; a < ne; a = b) {
		size_t m;

		for (b = a; b < ne && e[b].id == e[a].id; b++)
			;
		m = b - a;
		g->leafm[e[a].id] = m % 2 ? e[a + m / 2].v : (e[a + m / 2 - 1].v + e[a + m / 2].v) / 2;
		g->leafm_cells++;
	}
	free(e);
	return 0;
}

/* a pair of node ids, whichever way it was measured, and which way (fwd: lo sent) */
struct upair {
	int lo, hi, fwd;
};

static int upair_cmp(const void *a, const void *b)
{
	const struct upair *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->fwd - y->fwd;
}

/* the unordered pairs of g measured both ways (a -> b and b -> a) into g->both_ways */
static int both_ways(struct rrun *r, struct rgroup *g)
{
	struct upair *e = fs_reallocarray(NULL, (size_t)g->n + 1, sizeof(*e));
	int i, j, n = 0;

	if (!e)
		return -1;
	for (i = 0; i < g->n; i++) {
		int s = rstore_intern(&r->st, g->p[i].src), d = rstore_intern(&r->st, g->p[i].dst);

		if (s < 0 || d < 0) {
			free(e);
			return -1;
		}
		e[n].lo = s < d ? s : d;
		e[n].hi = s < d ? d : s;
		e[n++].fwd = s < d;
	}
	qsort(e, (size_t)n, sizeof(*e), upair_cmp);
	g->both_ways = 0;
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && e[j].lo == e[i].lo && e[j].hi == e[i].hi; j++)
			;
		g->both_ways += e[i].fwd != e[j - 1].fwd;	/* sorted: 0 first, 1 last */
	}
	free(e);
	return 0;
}

int report_aggregate(struct rrun *r)
{
	int gi;

	if (leaves_build(r))
		return fs_err_env("out of memory grouping the nodes of %s by leaf", r->dir);
	for (gi = 0; gi < r->ng; gi++) {
		struct rgroup *g = &r->g[gi];

		if (worst_pairs(r, g) || worst_nodes(r, g) || both_ways(r, g) ||
		    (g->nnodes > REPORT_HEAT_NODES && r->leaf_by && leaf_matrix(r, g)))
			return fs_err_env("out of memory finding the worst pairs and nodes of %s", r->dir);
		/* every lane shows its worst pair and node beside its median (a node of
		 * two has its peer's figure: none); the tables are for large lanes */
		memset(&g->worst1_pair, 0, sizeof(g->worst1_pair));
		memset(&g->worst1_node, 0, sizeof(g->worst1_node));
		if (g->nworst_pair)
			g->worst1_pair = g->worst_pair[0];
		if (g->nworst_node && g->nnodes >= 3)
			g->worst1_node = g->worst_node[0];
		if (g->nnodes <= REPORT_MATRIX_NODES)
			g->nworst_pair = g->nworst_node = 0;
	}
	return 0;
}

void report_aggregate_release(struct rrun *r)
{
	int gi;

	for (gi = 0; gi < r->ng; gi++) {
		free(r->g[gi].leafm);
		r->g[gi].leafm = NULL;
	}
	free(r->leaf);
	free(r->leaf_of);
	r->leaf = NULL;
	r->leaf_of = NULL;
	r->nleaf = r->nleaf_of = 0;
}

json_t *report_worst_json(const struct rrun *r, const struct rgroup *g, int nodes)
{
	json_t *a = json_array();
	int i, n = nodes ? g->nworst_node : g->nworst_pair;

	for (i = 0; i < n; i++) {
		const struct rworst *w = nodes ? &g->worst_node[i] : &g->worst_pair[i];
		json_t *o = nodes ? json_pack("{ss,sf,si}", "node", w->src, "median", w->v, "pairs", w->n) :
				    json_pack("{ss,ss,sf}", "src", w->src, "dst", w->dst, "value", w->v);

		if (o && nodes && w->leaf >= 0)
			json_object_set_new(o, r->leaf_by, json_string(r->leaf[w->leaf]));
		if (o && !nodes && w->leaf >= 0 && w->dst_leaf >= 0) {
			char key[16];

			snprintf(key, sizeof(key), "src_%s", r->leaf_by);
			json_object_set_new(o, key, json_string(r->leaf[w->leaf]));
			snprintf(key, sizeof(key), "dst_%s", r->leaf_by);
			json_object_set_new(o, key, json_string(r->leaf[w->dst_leaf]));
		}
		json_array_append_new(a, o);
	}
	return a;
}
