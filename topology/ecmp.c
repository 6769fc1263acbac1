/* SPDX-License-Identifier: BSD-2-Clause */
/* Equal-cost paths between two hosts of the design: see ecmp.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecmp.h"

/* node's cable on lane (rail, plane): its leaf, and the cable's speed */
int topo_host_port(const struct topo *t, const char *node, int rail, int plane, double *gbps)
{
	size_t i;

	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		const struct topo_switch *s;

		if (l->a.sw >= 0 || l->b.sw < 0 || strcmp(l->a.dev, node))
			continue;
		s = &t->sw[l->b.sw];
		if ((l->rail >= 0 ? l->rail : s->rail >= 0 ? s->rail : 0) != rail ||
		    (l->plane >= 0 ? l->plane : s->plane >= 0 ? s->plane : 0) != plane)
			continue;
		*gbps = l->speed_gbps;
		return l->b.sw;
	}
	return -1;
}

int topo_is_node(const struct topo *t, const char *node)
{
	size_t i;

	for (i = 0; i < t->nln; i++)
		if ((t->ln[i].a.sw < 0 && !strcmp(t->ln[i].a.dev, node)) ||
		    (t->ln[i].b.sw < 0 && !strcmp(t->ln[i].b.dev, node)))
			return 1;
	return 0;
}

struct graph {
	size_t *off;		/* switch u's cables: [off[u], off[u + 1]) */
	int *to;		/* the switch at the other end */
	double *gbps;
	int *queue;
};

static void graph_free(struct graph *g)
{
	free(g->off);
	free(g->to);
	free(g->gbps);
	free(g->queue);
}

/* the switch-to-switch cables, both ways */
static int graph_build(const struct topo *t, struct graph *g)
{
	size_t i, *fill;

	memset(g, 0, sizeof(*g));
	g->off = calloc(t->nsw + 1, sizeof(*g->off));
	g->to = malloc((2 * t->nln + 1) * sizeof(*g->to));
	g->gbps = malloc((2 * t->nln + 1) * sizeof(*g->gbps));
	g->queue = malloc((t->nsw + 1) * sizeof(*g->queue));
	if (!g->off || !g->to || !g->gbps || !g->queue)
		return -1;
	for (i = 0; i < t->nln; i++)
		if (t->ln[i].a.sw >= 0 && t->ln[i].b.sw >= 0) {
			g->off[t->ln[i].a.sw + 1]++;
			g->off[t->ln[i].b.sw + 1]++;
		}
	for (i = 0; i < t->nsw; i++)
		g->off[i + 1] += g->off[i];
	if (!(fill = malloc((t->nsw + 1) * sizeof(*fill))))
		return -1;
	memcpy(fill, g->off, (t->nsw + 1) * sizeof(*fill));
	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];

		if (l->a.sw < 0 || l->b.sw < 0)
			continue;
		g->to[fill[l->a.sw]] = l->b.sw;
		g->gbps[fill[l->a.sw]++] = l->speed_gbps;
		g->to[fill[l->b.sw]] = l->a.sw;
		g->gbps[fill[l->b.sw]++] = l->speed_gbps;
	}
	free(fill);
	return 0;
}

/* hops from switch s to every switch (-1: unreachable) */
static void bfs(const struct topo *t, struct graph *g, int s, int *dist)
{
	size_t head = 0, tail = 0, i, k;

	for (i = 0; i < t->nsw; i++)
		dist[i] = -1;
	dist[s] = 0;
	g->queue[tail++] = s;
	while (head < tail) {
		int u = g->queue[head++];

		for (k = g->off[u]; k < g->off[u + 1]; k++)
			if (dist[g->to[k]] < 0) {
				dist[g->to[k]] = dist[u] + 1;
				g->queue[tail++] = g->to[k];
			}
	}
}

/* paths and tiers of the shortest paths src -> dst (ds, dd: hops from each) */
static int tiers(const struct topo *t, struct graph *g, const int *ds, const int *dd, struct topo_ecmp *e)
{
	int D = ds[e->dst_leaf], d, unknown = 0;
	double *cnt = calloc(t->nsw + 1, sizeof(*cnt)), *sum = calloc((size_t)D + 1, sizeof(*sum));
	double *slow = calloc((size_t)D + 1, sizeof(*slow));
	int *nl = calloc((size_t)D + 1, sizeof(*nl));
	size_t head = 0, k;

	if (!cnt || !sum || !slow || !nl) {
		free(cnt);
		free(sum);
		free(slow);
		free(nl);
		return -1;
	}
	/* the queue of the BFS from the source holds the switches by distance */
	cnt[e->src_leaf] = 1;
	for (head = 0; head < t->nsw && g->queue[head] >= 0; head++) {
		int u = g->queue[head];

		if (ds[u] < 0 || ds[u] >= D || dd[u] < 0 || ds[u] + dd[u] != D)
			continue;
		for (k = g->off[u]; k < g->off[u + 1]; k++) {
			int v = g->to[k];

			if (ds[v] != ds[u] + 1 || dd[v] != D - ds[v])
				continue;
			cnt[v] += cnt[u];
			nl[ds[u]]++;
			sum[ds[u]] += g->gbps[k];
			if (!(g->gbps[k] > 0))
				unknown = 1;
			if (!slow[ds[u]] || g->gbps[k] < slow[ds[u]])
				slow[ds[u]] = g->gbps[k];
		}
	}
	e->paths = cnt[e->dst_leaf];
	e->hops = D;
	for (d = 0; d < D; d++)
		if (e->tier < 0 || sum[d] < sum[e->tier])
			e->tier = d;
	if (e->tier >= 0) {
		e->links = nl[e->tier];
		e->link_gbps = unknown ? 0 : slow[e->tier];
	}
	free(cnt);
	free(sum);
	free(slow);
	free(nl);
	return 0;
}

int topo_ecmp_switches(const struct topo *t, int src_sw, int dst_sw, struct topo_ecmp *e, char *err, size_t len)
{
	struct graph g;
	int *ds = NULL, *dd = NULL, rc = -1;
	double host = e->host_gbps;

	memset(e, 0, sizeof(*e));
	e->tier = -1;
	e->host_gbps = host;
	e->src_leaf = src_sw;
	e->dst_leaf = dst_sw;
	if (graph_build(t, &g) || !(ds = malloc((t->nsw + 1) * sizeof(*ds))) ||
	    !(dd = malloc((t->nsw + 1) * sizeof(*dd)))) {
		snprintf(err, len, "out of memory for the paths of %s", t->path ? t->path : "the design");
		goto out;
	}
	bfs(t, &g, dst_sw, dd);
	memset(g.queue, 0xff, (t->nsw + 1) * sizeof(*g.queue));	/* -1: the end of the order */
	bfs(t, &g, src_sw, ds);
	if (ds[dst_sw] < 0) {
		snprintf(err, len, "no path between %s and %s in %s", t->sw[src_sw].name, t->sw[dst_sw].name,
			 t->path ? t->path : "the design");
		goto out;
	}
	if (tiers(t, &g, ds, dd, e)) {
		snprintf(err, len, "out of memory for the paths of %s", t->path ? t->path : "the design");
		goto out;
	}
	rc = 0;
out:
	graph_free(&g);
	free(ds);
	free(dd);
	return rc;
}

int topo_ecmp(const struct topo *t, const char *src, const char *dst, int rail, int plane, struct topo_ecmp *e,
	      char *err, size_t len)
{
	double sg = 0, dg = 0;
	int s, d;

	memset(e, 0, sizeof(*e));
	e->tier = -1;
	if (!topo_is_node(t, src) || !topo_is_node(t, dst)) {
		snprintf(err, len, "%s is no node of %s", topo_is_node(t, src) ? dst : src,
			 t->path ? t->path : "the design");
		return -1;
	}
	s = topo_host_port(t, src, rail, plane, &sg);
	d = topo_host_port(t, dst, rail, plane, &dg);
	if (s < 0 || d < 0) {
		snprintf(err, len, "%s has no port on rail %d plane %d in %s", s < 0 ? src : dst, rail, plane,
			 t->path ? t->path : "the design");
		return -1;
	}
	e->host_gbps = sg > 0 && dg > 0 ? (sg < dg ? sg : dg) : 0;
	return topo_ecmp_switches(t, s, d, e, err, len);
}
