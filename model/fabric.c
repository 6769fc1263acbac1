/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The model's fabric graph and routing: see fabric.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/names.h"
#include "fabric.h"

/* the next hops kept for all classes together, in words: this many
 * fabrics' worth (a fabric's classes are its pods and planes, or its rails
 * when rail-only: far fewer); past it they are made again when used */
#define FAB_DAG_FABRICS 16

/* a class's next hops toward its leaves' neighbours (T) */
struct fab_dag {
	int *dist;		/* per switch: hops to the nearest switch of T, -1: none */
	uint32_t *off;		/* per switch: its next hops nh[off[u] .. off[u + 1]) */
	uint32_t *nh;		/* each an index into adj[] */
	size_t words;
};

uint64_t fab_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int port_cmp(const void *x, const void *y)
{
	const struct fab_port *a = x, *b = y;
	int c = fs_name_cmp(a->node, b->node);

	if (c)
		return c;
	if (a->rail != b->rail)
		return a->rail < b->rail ? -1 : 1;
	if (a->plane != b->plane)
		return a->plane < b->plane ? -1 : 1;
	return a->link < b->link ? -1 : a->link > b->link;
}

static int adj_cmp(const void *x, const void *y)
{
	const struct fab_adj *a = x, *b = y;

	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return a->e < b->e ? -1 : a->e > b->e;
}

static void dag_free(struct fab_dag *d)
{
	if (!d)
		return;
	free(d->dist);
	free(d->off);
	free(d->nh);
	free(d);
}

static void dags_drop(struct fab *f)
{
	size_t c;

	for (c = 0; f->dag && c < f->ncls; c++) {
		dag_free(f->dag[c]);
		f->dag[c] = NULL;
	}
	f->dag_words = 0;
}

void fab_release(struct fab *f)
{
	dags_drop(f);
	free(f->dag);
	free(f->cls);
	free(f->ports);
	free(f->hosts);
	free(f->host_port);
	free(f->adj_off);
	free(f->adj);
	free(f->cap);
	free(f->last_lo);
	free(f->last_hi);
	free(f->cls_rep);
	free(f->rep);
	free(f->said);
	free(f->last_even);
	free(f->cls_even);
	free(f->from_even);
	free(f->mass);
	free(f->layer);
	free(f->next);
	memset(f, 0, sizeof(*f));
}

/* 1 when cable l joins two switches and carries what the fabric routes (a
 * loopback, from a port to another of the same switch, does not, nor does
 * the out-of-band network) */
static int routed(const struct topo *t, const struct topo_link *l)
{
	return l->a.sw >= 0 && l->b.sw >= 0 && l->a.sw != l->b.sw && !topo_link_oob(t, l);
}

/* the switches' neighbours, each switch's by neighbour (parallel cables next to each other) */
static int adj_build(struct fab *f)
{
	const struct topo *t = f->t;
	size_t i, nsw = f->nsw, *fill;

	for (i = 0; i < t->nln; i++)
		if (routed(t, &t->ln[i])) {
			f->adj_off[t->ln[i].a.sw + 1]++;
			f->adj_off[t->ln[i].b.sw + 1]++;
		}
	for (i = 0; i < nsw; i++)
		f->adj_off[i + 1] += f->adj_off[i];
	f->adj = malloc((f->adj_off[nsw] ? f->adj_off[nsw] : 1) * sizeof(*f->adj));
	fill = malloc((nsw ? nsw : 1) * sizeof(*fill));
	if (!f->adj || !fill) {
		free(fill);
		return -1;
	}
	memcpy(fill, f->adj_off, nsw * sizeof(*fill));
	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];

		if (!routed(t, l))
			continue;
		f->adj[fill[l->a.sw]++] = (struct fab_adj){ (uint32_t)l->b.sw, (uint32_t)(2 * i) };
		f->adj[fill[l->b.sw]++] = (struct fab_adj){ (uint32_t)l->a.sw, (uint32_t)(2 * i + 1) };
	}
	free(fill);
	for (i = 0; i < nsw; i++)
		if (f->adj_off[i + 1] - f->adj_off[i] > 1)
			qsort(f->adj + f->adj_off[i], f->adj_off[i + 1] - f->adj_off[i], sizeof(*f->adj), adj_cmp);
	return 0;
}

/* switches a and b by their distinct neighbours (0: the same ones) */
static int key_order(const struct fab *f, int a, int b)
{
	size_t i = f->adj_off[a], j = f->adj_off[b];

	for (;;) {
		int ea = i == f->adj_off[a + 1], eb = j == f->adj_off[b + 1];

		if (ea || eb)
			return ea && eb ? 0 : ea ? -1 : 1;
		if (f->adj[i].v != f->adj[j].v)
			return f->adj[i].v < f->adj[j].v ? -1 : 1;
		for (i++; i < f->adj_off[a + 1] && f->adj[i].v == f->adj[i - 1].v; i++)
			;
		for (j++; j < f->adj_off[b + 1] && f->adj[j].v == f->adj[j - 1].v; j++)
			;
	}
}

/* qsort_r's order of switch indices by their neighbours, then index; ctx: the fabric */
static int key_cmp(const void *x, const void *y, void *ctx)
{
	int a = *(const int *)x, b = *(const int *)y, c = key_order(ctx, a, b);

	return c ? c : (a > b) - (a < b);
}

/* the classes of the switches host ports are on: one sort of them by their neighbours */
static int classes_build(struct fab *f)
{
	int *leaves = malloc((f->nsw ? f->nsw : 1) * sizeof(*leaves));
	size_t i, n = 0;

	f->cls = malloc((f->nsw ? f->nsw : 1) * sizeof(*f->cls));
	if (!leaves || !f->cls) {
		free(leaves);
		return -1;
	}
	for (i = 0; i < f->nsw; i++)
		f->cls[i] = -1;
	for (i = 0; i < f->nports; i++)
		if (f->cls[f->ports[i].leaf] < 0) {
			f->cls[f->ports[i].leaf] = 0;
			leaves[n++] = f->ports[i].leaf;
		}
	qsort_r(leaves, n, sizeof(*leaves), key_cmp, f);
	for (i = 0; i < n; i++) {
		if (i && key_order(f, leaves[i - 1], leaves[i]))
			f->ncls++;
		f->cls[leaves[i]] = (int)f->ncls;
	}
	f->ncls += n > 0;
	f->cls_rep = malloc((f->ncls ? f->ncls : 1) * sizeof(*f->cls_rep));
	f->dag = calloc(f->ncls ? f->ncls : 1, sizeof(*f->dag));
	for (i = n; f->cls_rep && i-- > 0;)	/* each class's first leaf */
		f->cls_rep[f->cls[leaves[i]]] = leaves[i];
	free(leaves);
	return f->dag && f->cls_rep ? 0 : -1;
}

/* host ports (the node's end is a), sorted, and the distinct hosts */
static int ports_build(struct fab *f)
{
	const struct topo *t = f->t;
	size_t i, n = 0;

	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		struct fab_port *p;

		if (l->a.sw >= 0 || l->b.sw < 0 || topo_link_oob(t, l))
			continue;	/* between switches, two nodes, out-of-band: no host port of the fabric */
		p = &f->ports[n++];
		p->node = l->a.dev;
		p->rail = l->rail < 0 ? 0 : l->rail;
		p->plane = l->plane < 0 ? 0 : l->plane;
		p->link = (uint32_t)i;
		p->leaf = l->b.sw;
	}
	f->nports = n;
	qsort(f->ports, n, sizeof(*f->ports), port_cmp);
	f->hosts = malloc((n ? n : 1) * sizeof(*f->hosts));
	f->host_port = malloc((n + 1) * sizeof(*f->host_port));
	if (!f->hosts || !f->host_port)
		return -1;
	for (i = 0; i < n; i++) {
		if (!i || fs_name_cmp(f->ports[i].node, f->ports[i - 1].node))
			f->host_port[f->nhosts++] = i;
		f->hosts[f->nhosts - 1] = f->ports[i].node;
		f->ports[i].host = (int)f->nhosts - 1;
	}
	f->host_port[f->nhosts] = n;
	return 0;
}

int fab_build(struct fab *f, const struct topo *t, double default_gbps)
{
	size_t i, nsw = t->nsw, one = nsw ? nsw : 1;

	memset(f, 0, sizeof(*f));
	f->t = t;
	f->nsw = nsw;
	f->last_for = -1;
	f->nedges = 2 * t->nln;
	f->cap = calloc(f->nedges ? f->nedges : 1, sizeof(*f->cap));
	f->adj_off = calloc(nsw + 1, sizeof(*f->adj_off));
	f->ports = calloc(t->nln ? t->nln : 1, sizeof(*f->ports));
	f->last_lo = malloc(one * sizeof(*f->last_lo));
	f->last_hi = malloc(one * sizeof(*f->last_hi));
	f->mass = calloc(one, sizeof(*f->mass));
	f->layer = malloc(one * sizeof(*f->layer));
	f->next = malloc(one * sizeof(*f->next));
	if (!f->cap || !f->adj_off || !f->ports || !f->last_lo || !f->last_hi || !f->mass ||
	    !f->layer || !f->next)
		goto oom;
	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		double g = l->speed_gbps > 0 ? l->speed_gbps : default_gbps;

		if (g <= 0) {
			fab_release(f);
			return fs_err_usage("%s:%d: the cable %s:%s - %s:%s has no speed=: give it one, or --speed GBPS "
					    "for every cable without", t->path ? t->path : "topology", l->line,
					    l->a.dev, l->a.port, l->b.dev, l->b.port);
		}
		f->cap[2 * i] = f->cap[2 * i + 1] = g;
	}
	if (adj_build(f) || ports_build(f) || classes_build(f))
		goto oom;
	return 0;
oom:
	fab_release(f);
	return fs_err_env("out of memory for the fabric's graph");
}

long fab_port_of(const struct fab *f, size_t h, int rail, int plane)
{
	size_t i;

	for (i = f->host_port[h]; i < f->host_port[h + 1]; i++)
		if (f->ports[i].rail == rail && f->ports[i].plane == plane)
			return (long)i;
	return -1;
}

void fab_shares_release(struct fab_shares *s)
{
	free(s->off);
	free(s->edge);
	free(s->share);
	memset(s, 0, sizeof(*s));
}

static int share_add(struct fab_shares *s, uint32_t edge, double share)
{
	if (FS_ALLOC_GROW(s->edge, s->nshares + 1, s->edge_alloc) ||
	    FS_ALLOC_GROW(s->share, s->nshares + 1, s->share_alloc))
		return -1;
	s->edge[s->nshares] = edge;
	s->share[s->nshares++] = share;
	return 0;
}

static int flow_open(struct fab_shares *s)
{
	if (FS_ALLOC_GROW(s->off, s->nflows + 2, s->off_alloc))
		return -1;
	s->off[s->nflows] = s->nshares;
	return 0;
}

static void flow_close(struct fab_shares *s)
{
	s->off[++s->nflows] = s->nshares;
}

/* class c's next hops: a breadth-first search from its leaves' neighbours
 * (the leaf rep's), then every switch's neighbours one hop nearer them */
static struct fab_dag *dag_make(const struct fab *f, int rep)
{
	struct fab_dag *d = calloc(1, sizeof(*d));
	size_t head = 0, tail = 0, i, n = 0;
	uint32_t u;

	if (!d || !(d->dist = malloc((f->nsw ? f->nsw : 1) * sizeof(*d->dist))) ||
	    !(d->off = malloc((f->nsw + 1) * sizeof(*d->off)))) {
		dag_free(d);
		return NULL;
	}
	for (i = 0; i < f->nsw; i++)
		d->dist[i] = -1;
	for (i = f->adj_off[rep]; i < f->adj_off[rep + 1]; i++)
		if (d->dist[f->adj[i].v] < 0) {
			d->dist[f->adj[i].v] = 0;
			f->layer[tail++] = f->adj[i].v;
		}
	while (head < tail) {
		u = f->layer[head++];
		for (i = f->adj_off[u]; i < f->adj_off[u + 1]; i++)
			if (d->dist[f->adj[i].v] < 0) {
				d->dist[f->adj[i].v] = d->dist[u] + 1;
				f->layer[tail++] = f->adj[i].v;
			}
	}
	for (u = 0; u < f->nsw; u++)	/* count, then fill */
		for (i = f->adj_off[u]; d->dist[u] > 0 && i < f->adj_off[u + 1]; i++)
			n += d->dist[f->adj[i].v] == d->dist[u] - 1;
	if (!(d->nh = malloc((n ? n : 1) * sizeof(*d->nh)))) {
		dag_free(d);
		return NULL;
	}
	for (n = 0, u = 0; u < f->nsw; u++) {
		d->off[u] = (uint32_t)n;
		for (i = f->adj_off[u]; d->dist[u] > 0 && i < f->adj_off[u + 1]; i++)
			if (d->dist[f->adj[i].v] == d->dist[u] - 1)
				d->nh[n++] = (uint32_t)i;
	}
	d->off[f->nsw] = (uint32_t)n;
	d->words = 2 * f->nsw + 1 + n;
	return d;
}

/* the next hops toward leaf to's class: kept, or made now */
static const struct fab_dag *dag_of(struct fab *f, int to)
{
	int c = f->cls[to];
	size_t bound = FAB_DAG_FABRICS * (2 * f->nsw + 1 + f->adj_off[f->nsw]);

	if (!f->dag[c]) {
		struct fab_dag *d = dag_make(f, to);

		if (!d)
			return NULL;
		if (f->dag_words + d->words > bound)
			dags_drop(f);	/* an unusual fabric: its classes are made again when used */
		f->dag[c] = d;
		f->dag_words += d->words;
	}
	return f->dag[c];
}

/* the bundle order of switch u's neighbours (qsort_r over adj[] indices; ctx: struct by_key):
 * capacity, the destination leaf at the end (-1: none), whether a next hop of each class */
struct by_key {
	struct fab *f;
	uint32_t u;
};

static int bundle_cmp(const void *x, const void *y, void *ctx)
{
	const struct by_key *k = ctx;
	const struct fab *f = k->f;
	const struct fab_adj *a = &f->adj[*(const size_t *)x], *b = &f->adj[*(const size_t *)y];
	int da = f->cls[a->v] >= 0 ? (int)a->v : -1, db = f->cls[b->v] >= 0 ? (int)b->v : -1;
	size_t c;

	if (f->cap[a->e] != f->cap[b->e])
		return f->cap[a->e] < f->cap[b->e] ? -1 : 1;
	if (da != db)
		return da < db ? -1 : 1;
	for (c = 0; c < f->ncls; c++) {
		const int *dist = f->dag[c]->dist;
		int na = dist[k->u] > 0 && dist[a->v] == dist[k->u] - 1, nb = dist[k->u] > 0 && dist[b->v] == dist[k->u] - 1;

		if (na != nb)
			return na - nb;
	}
	return 0;
}

/* which destination leaves' last hops may be one constraint: a leaf nobody's transit (no class has it
 * as a next hop), with as many cables of one speed from each of its neighbours */
static int lasts_make(struct fab *f)
{
	unsigned char *transit = calloc(f->nsw + 1, 1);
	size_t c, i, j, k;
	uint32_t d;

	f->last_even = calloc(f->nsw + 1, 1);
	f->cls_even = calloc(f->ncls + 1, 1);
	f->from_even = calloc(f->nsw * f->ncls + 1, 1);
	if (!transit || !f->last_even || !f->cls_even || !f->from_even) {
		free(transit);
		return -1;
	}
	for (c = 0; c < f->ncls; c++)
		for (i = 0; i < f->dag[c]->off[f->nsw]; i++)
			transit[f->adj[f->dag[c]->nh[i]].v] = 1;
	for (d = 0; d < f->nsw; d++) {
		size_t lo = f->adj_off[d], hi = f->adj_off[d + 1], first = hi > lo ? 0 : 1;
		int even = f->cls[d] >= 0 && !transit[d] && hi > lo;

		for (i = lo; even && i < hi; i = j) {	/* runs of one neighbour */
			for (j = i; j < hi && f->adj[j].v == f->adj[i].v; j++)
				even &= f->cap[f->adj[j].e] == f->cap[f->adj[lo].e];
			k = j - i;
			if (!first)
				first = k;
			even &= k == first;
		}
		f->last_even[d] = (unsigned char)even;
	}
	free(transit);
	return 0;
}

/* the bundles (fabric.h): every class's next hops made, then each switch's neighbours sorted by what
 * tells their use apart; -1 when the classes' next hops would pass the bound (no bundles then) */
static int bundles_make(struct fab *f)
{
	size_t c, i, n, *ix = NULL;
	uint32_t u;

	if (f->ncls > FAB_DAG_FABRICS)	/* (every class's next hops within the bound, dag_of) */
		return f->bundled = -1;
	for (c = 0; c < f->ncls; c++)
		if (!dag_of(f, f->cls_rep[c]))
			return -2;
	if (!(f->rep = malloc((f->nedges ? f->nedges : 1) * sizeof(*f->rep))) ||
	    !(f->said = calloc(f->nedges ? f->nedges : 1, sizeof(*f->said))))
		return -2;
	for (i = 0; i < f->nedges; i++)
		f->rep[i] = (uint32_t)i;
	for (u = 0; u < f->nsw; u++) {
		struct by_key k = { f, u };
		size_t *nix;

		n = f->adj_off[u + 1] - f->adj_off[u];
		if (n < 2)
			continue;
		if (!(nix = realloc(ix, n * sizeof(*ix)))) {
			free(ix);
			return -2;
		}
		ix = nix;
		for (i = 0; i < n; i++)
			ix[i] = f->adj_off[u] + i;
		qsort_r(ix, n, sizeof(*ix), bundle_cmp, &k);
		for (i = 1; i < n; i++)
			if (!bundle_cmp(&ix[i - 1], &ix[i], &k))
				f->rep[f->adj[ix[i]].e] = f->rep[f->adj[ix[i - 1]].e];
	}
	free(ix);
	f->stamp = 0;
	return lasts_make(f) ? -2 : (f->bundled = 1);
}

/* a share of a sprayed flow on edge e, at the switch visit f->stamp: once a bundle */
static int spray_share(struct fab *f, struct fab_shares *s, uint32_t e, double part)
{
	if (f->bundled > 0) {
		e = f->rep[e];
		if (f->said[e] == f->stamp)
			return 0;
		f->said[e] = f->stamp;
	}
	return share_add(s, e, part);
}

/* a new switch visit */
static void visit(struct fab *f)
{
	if (f->bundled > 0 && !++f->stamp) {	/* wrapped: forget every edge's last one */
		memset(f->said, 0, f->nedges * sizeof(*f->said));
		f->stamp = 1;
	}
}

/* the last hop to leaf to: each switch's cables to it, found in the leaf's own (by neighbour) */
static void last_hop(struct fab *f, int to)
{
	size_t i, j;

	if (f->last_for == to)
		return;
	for (i = f->adj_off[to]; i < f->adj_off[to + 1]; i = j) {
		uint32_t v = f->adj[i].v;

		for (j = i + 1; j < f->adj_off[to + 1] && f->adj[j].v == v; j++)
			;
		f->last_lo[v] = (uint32_t)i;
		f->last_hi[v] = (uint32_t)j;
	}
	f->last_for = to;
}

/* the sprayed mass from switch `from` over class d's next hops, to its last layer (the neighbours of
 * the class's leaves): f->layer[0..return), their masses in f->mass; shares said when s */
static size_t spread(struct fab *f, const struct fab_dag *d, struct fab_shares *s, int from, int *oom)
{
	size_t nl = 1, nn, j, i;

	f->layer[0] = (uint32_t)from;
	f->mass[from] = 1.0;
	while (d->dist[f->layer[0]] > 0) {
		for (j = nn = 0; j < nl; j++) {
			uint32_t u = f->layer[j];
			double part = f->mass[u] / (double)(d->off[u + 1] - d->off[u]);

			f->mass[u] = 0;
			visit(f);
			for (i = d->off[u]; i < d->off[u + 1]; i++) {
				const struct fab_adj *a = &f->adj[d->nh[i]];

				if (s && spray_share(f, s, a->e, part)) {
					*oom = 1;
					return nl;
				}
				if (f->mass[a->v] == 0)
					f->next[nn++] = a->v;
				f->mass[a->v] += part;
			}
		}
		memcpy(f->layer, f->next, nn * sizeof(*f->layer));
		nl = nn;
	}
	return nl;
}

/* 1 when spraying from switch a reaches every neighbour of class c's leaves with the same mass */
static int arrives_even(struct fab *f, const struct fab_dag *d, int a, int c)
{
	size_t nl, j, nt = f->adj_off[f->cls_rep[c] + 1] - f->adj_off[f->cls_rep[c]], i;
	int oom = 0, even;

	for (i = f->adj_off[f->cls_rep[c]] + 1; i < f->adj_off[f->cls_rep[c] + 1]; i++)
		nt -= f->adj[i].v == f->adj[i - 1].v;	/* (distinct neighbours) */
	if (d->dist[a] < 0)
		return 0;
	nl = spread(f, d, NULL, a, &oom);
	even = nl == nt;
	for (j = 0; j < nl; j++) {
		double x = f->mass[f->layer[j]], y = f->mass[f->layer[0]];

		even &= x - y < 1e-12 * y && y - x < 1e-12 * y;
	}
	for (j = 0; j < nl; j++)
		f->mass[f->layer[j]] = 0;
	return even;
}

int fab_spray_prepare(struct fab *f, const struct fab_flow *fl, size_t n)
{
	size_t i, c;

	if (!f->bundled && bundles_make(f) == -2)
		return fs_err_env("out of memory for the model's flows");
	if (f->bundled < 0)
		return 0;
	memset(f->from_even, 0, f->nsw * f->ncls);	/* 0 not known, 1 even, 2 not */
	for (c = 0; c < f->ncls; c++)
		f->cls_even[c] = 1;
	for (i = 0; i < n; i++) {
		int a = fl[i].from, to = fl[i].to, k = f->cls[to];
		unsigned char *e = &f->from_even[(size_t)a * f->ncls + (size_t)k];

		if (a == to || !f->cls_even[k])
			continue;
		if (!*e)
			*e = arrives_even(f, f->dag[k], a, k) ? 1 : 2;
		if (*e == 2)
			f->cls_even[k] = 0;
	}
	f->even_on = 1;
	return 0;
}

void fab_spray_end(struct fab *f)
{
	f->even_on = 0;
}

/* spraying: layer by layer toward the destination, the mass split equally; the last layer to the leaf
 * (one constraint for all of it when the solve's flows arrive evenly, fab_spray_prepare) */
static int spray(struct fab *f, const struct fab_dag *d, struct fab_shares *s, int from, int to)
{
	size_t nl, j, i;
	int oom = 0;

	nl = spread(f, d, s, from, &oom);
	if (oom)
		return -1;
	if (f->even_on && f->cls_even[f->cls[to]] && f->last_even[to]) {
		/* every flow to `to` alike over all its last hops: the first of the leaf's cables says them
		 * all, for every flow (the same one) */
		uint32_t u = f->layer[0];
		double part = f->mass[u] / (double)(f->last_hi[u] - f->last_lo[u]);

		for (j = 0; j < nl; j++)
			f->mass[f->layer[j]] = 0;
		return share_add(s, f->adj[f->adj_off[to]].e ^ 1, part);
	}

	for (j = 0; j < nl; j++) {
		uint32_t u = f->layer[j];
		double part = f->mass[u] / (double)(f->last_hi[u] - f->last_lo[u]);

		f->mass[u] = 0;
		visit(f);
		for (i = f->last_lo[u]; i < f->last_hi[u]; i++)
			if (spray_share(f, s, f->adj[i].e ^ 1, part))	/* the leaf's cable, toward it */
				return -1;
	}
	return 0;
}

/* per-flow ECMP: one next hop drawn at every switch, the last hop among the switch's cables to the leaf */
static int ecmp(struct fab *f, const struct fab_dag *d, struct fab_shares *s, int from, uint64_t *rng)
{
	uint32_t u = (uint32_t)from;

	while (d->dist[u] > 0) {
		const struct fab_adj *a = &f->adj[d->nh[d->off[u] + fab_rand(rng) % (d->off[u + 1] - d->off[u])]];

		if (share_add(s, a->e, 1.0))
			return -1;
		u = a->v;
	}
	return share_add(s, f->adj[f->last_lo[u] + fab_rand(rng) % (f->last_hi[u] - f->last_lo[u])].e ^ 1, 1.0);
}

void fab_flow_of(const struct fab *f, size_t src, size_t dst, struct fab_flow *x)
{
	const struct fab_port *a = &f->ports[src], *b = &f->ports[dst];

	*x = (struct fab_flow){ (uint32_t)src, (uint32_t)dst, 2 * a->link, 2 * b->link + 1, a->leaf, b->leaf };
}

int fab_add(struct fab *f, struct fab_shares *s, const struct fab_flow *x, enum fab_route how, uint64_t *rng)
{
	int from = x->from, to = x->to;

	if (flow_open(s) || share_add(s, x->in, 1.0))
		goto oom;
	if (from != to) {
		const struct fab_dag *d;

		if (how == FAB_SPRAY && !f->bundled && bundles_make(f) == -2)
			goto oom;
		if (!(d = dag_of(f, to)))
			goto oom;
		if (d->dist[from] < 0)
			return fs_err_usage("no path between %s (%s's leaf) and %s (%s's leaf): the fabric is split",
					    f->t->sw[from].name, f->ports[x->src].node, f->t->sw[to].name,
					    f->ports[x->dst].node);
		last_hop(f, to);
		if (how == FAB_ECMP ? ecmp(f, d, s, from, rng) : spray(f, d, s, from, to))
			goto oom;
	}
	if (share_add(s, x->out, 1.0))
		goto oom;
	flow_close(s);
	return 0;
oom:
	return fs_err_env("out of memory for the model's flows");
}

int fab_add_flow(struct fab *f, struct fab_shares *s, size_t src, size_t dst, enum fab_route how,
		 uint64_t *rng)
{
	struct fab_flow x;

	fab_flow_of(f, src, dst, &x);
	return fab_add(f, s, &x, how, rng);
}

long fab_host_index(const struct fab *f, const char *name)
{
	size_t lo = 0, hi = f->nhosts;

	while (lo < hi) {	/* f->hosts are in core/names.h's order */
		size_t mid = (lo + hi) / 2;
		int c = fs_name_cmp(f->hosts[mid], name);

		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* the cable from device x to device y: its directed edge x -> y, or -1;
 * a host's end picks its port on that switch (*port), among the host's own */
static long edge_between(const struct fab *f, const char *x, const char *y, long *port)
{
	int sx = topo_switch_index(f->t, x), sy = topo_switch_index(f->t, y);
	long h = sx < 0 ? fab_host_index(f, x) : sy < 0 ? fab_host_index(f, y) : -1;
	size_t i;

	if (sx >= 0 && sy >= 0) {
		for (i = f->adj_off[sx]; i < f->adj_off[sx + 1]; i++)
			if ((int)f->adj[i].v == sy)
				return f->adj[i].e;
		return -1;
	}
	if (h < 0 || (sx < 0 && sy < 0))
		return -1;
	for (i = f->host_port[h]; i < f->host_port[h + 1]; i++) {
		if (f->ports[i].leaf != (sx < 0 ? sy : sx))
			continue;
		*port = (long)i;
		return 2 * (long)f->ports[i].link + (sx >= 0);
	}
	return -1;
}

int fab_add_path(struct fab *f, struct fab_shares *s, const char *const *hops, int nhops, const char *where,
		 size_t *src, size_t *dst)
{
	long port = -1, first = -1;
	int i;

	if (nhops < 3 || topo_switch_index(f->t, hops[0]) >= 0 || topo_switch_index(f->t, hops[nhops - 1]) >= 0)
		return fs_err_usage("%s: a path is a host, one or more switches and a host (as ci/netns-fabric "
				    "path prints it)", where);
	if (flow_open(s))
		goto oom;
	for (i = 0; i + 1 < nhops; i++) {
		long e = edge_between(f, hops[i], hops[i + 1], &port);

		if (e < 0)
			return fs_err_usage("%s: no cable between %s and %s in the topology", where, hops[i], hops[i + 1]);
		if (!i)
			first = port;
		if (share_add(s, (uint32_t)e, 1.0))
			goto oom;
	}
	flow_close(s);
	*src = (size_t)first;
	*dst = (size_t)port;
	return 0;
oom:
	return fs_err_env("out of memory for the model's flows");
}
