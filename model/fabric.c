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

void fab_release(struct fab *f)
{
	free(f->ports);
	free(f->hosts);
	free(f->host_port);
	free(f->adj_off);
	free(f->adj_v);
	free(f->adj_e);
	free(f->cap);
	free(f->dist);
	free(f->mass);
	free(f->layer);
	free(f->next);
	memset(f, 0, sizeof(*f));
}

int fab_build(struct fab *f, const struct topo *t, double default_gbps)
{
	size_t i, n = 0, nsw = t->nsw;

	memset(f, 0, sizeof(*f));
	f->t = t;
	f->nsw = nsw;
	f->dist_of = -1;
	f->nedges = 2 * t->nln;
	f->cap = calloc(f->nedges ? f->nedges : 1, sizeof(*f->cap));
	f->adj_off = calloc(nsw + 1, sizeof(*f->adj_off));
	f->ports = calloc(t->nln ? t->nln : 1, sizeof(*f->ports));
	f->dist = malloc((nsw ? nsw : 1) * sizeof(*f->dist));
	f->mass = calloc(nsw ? nsw : 1, sizeof(*f->mass));
	f->layer = malloc((nsw ? nsw : 1) * sizeof(*f->layer));
	f->next = malloc((nsw ? nsw : 1) * sizeof(*f->next));
	if (!f->cap || !f->adj_off || !f->ports || !f->dist || !f->mass || !f->layer || !f->next)
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
		if (l->a.sw >= 0 && l->b.sw >= 0) {
			f->adj_off[l->a.sw + 1]++;
			f->adj_off[l->b.sw + 1]++;
		} else if (l->a.sw < 0 && l->b.sw >= 0) {	/* a host port (the node's end is a) */
			struct fab_port *p = &f->ports[n++];

			p->node = l->a.dev;
			p->rail = l->rail < 0 ? 0 : l->rail;
			p->plane = l->plane < 0 ? 0 : l->plane;
			p->link = (uint32_t)i;
			p->leaf = l->b.sw;
		}
		/* a cable between two nodes carries nothing the fabric routes */
	}
	f->nports = n;
	for (i = 0; i < nsw; i++)
		f->adj_off[i + 1] += f->adj_off[i];
	f->adj_v = malloc((f->adj_off[nsw] ? f->adj_off[nsw] : 1) * sizeof(*f->adj_v));
	f->adj_e = malloc((f->adj_off[nsw] ? f->adj_off[nsw] : 1) * sizeof(*f->adj_e));
	if (!f->adj_v || !f->adj_e)
		goto oom;
	{
		size_t *fill = malloc((nsw ? nsw : 1) * sizeof(*fill));

		if (!fill)
			goto oom;
		memcpy(fill, f->adj_off, nsw * sizeof(*fill));
		for (i = 0; i < t->nln; i++) {
			const struct topo_link *l = &t->ln[i];

			if (l->a.sw < 0 || l->b.sw < 0)
				continue;
			f->adj_v[fill[l->a.sw]] = (uint32_t)l->b.sw;
			f->adj_e[fill[l->a.sw]++] = (uint32_t)(2 * i);
			f->adj_v[fill[l->b.sw]] = (uint32_t)l->a.sw;
			f->adj_e[fill[l->b.sw]++] = (uint32_t)(2 * i + 1);
		}
		free(fill);
	}
	qsort(f->ports, n, sizeof(*f->ports), port_cmp);
	f->hosts = malloc((n ? n : 1) * sizeof(*f->hosts));
	f->host_port = malloc((n + 1) * sizeof(*f->host_port));
	if (!f->hosts || !f->host_port)
		goto oom;
	for (i = 0; i < n; i++) {
		if (!i || fs_name_cmp(f->ports[i].node, f->ports[i - 1].node)) {
			f->host_port[f->nhosts] = i;
			f->hosts[f->nhosts++] = f->ports[i].node;
		}
		f->ports[i].host = (int)f->nhosts - 1;
	}
	f->host_port[f->nhosts] = n;
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

/* dist[] from switch d over switches (breadth first) */
static void bfs(struct fab *f, int d)
{
	size_t head = 0, tail = 0, i;

	if (f->dist_of == d)
		return;
	for (i = 0; i < f->nsw; i++)
		f->dist[i] = -1;
	f->dist[d] = 0;
	f->layer[tail++] = (uint32_t)d;
	while (head < tail) {
		uint32_t u = f->layer[head++];

		for (i = f->adj_off[u]; i < f->adj_off[u + 1]; i++)
			if (f->dist[f->adj_v[i]] < 0) {
				f->dist[f->adj_v[i]] = f->dist[u] + 1;
				f->layer[tail++] = f->adj_v[i];
			}
	}
	f->dist_of = d;
}

int fab_add_flow(struct fab *f, struct fab_shares *s, size_t src, size_t dst, enum fab_route how,
		 uint64_t *rng)
{
	const struct fab_port *a = &f->ports[src], *b = &f->ports[dst];
	int from = a->leaf, to = b->leaf;

	if (flow_open(s) || share_add(s, 2 * a->link, 1.0))
		goto oom;
	if (from != to) {
		bfs(f, to);
		if (f->dist[from] < 0) {
			return fs_err_usage("no path between %s (%s's leaf) and %s (%s's leaf): the fabric is split",
					    f->t->sw[from].name, a->node, f->t->sw[to].name, b->node);
		}
		if (how == FAB_ECMP) {
			int u = from;

			while (u != to) {
				size_t i, k = 0, pick;

				for (i = f->adj_off[u]; i < f->adj_off[u + 1]; i++)
					k += f->dist[f->adj_v[i]] == f->dist[u] - 1;
				pick = (size_t)(fab_rand(rng) % k);
				for (i = f->adj_off[u];; i++)
					if (f->dist[f->adj_v[i]] == f->dist[u] - 1 && !pick--)
						break;
				if (share_add(s, f->adj_e[i], 1.0))
					goto oom;
				u = (int)f->adj_v[i];
			}
		} else {
			/* layer by layer toward the destination, the mass split equally */
			size_t nl = 1, nn, j, i;

			f->layer[0] = (uint32_t)from;
			f->mass[from] = 1.0;
			while (nl && f->dist[f->layer[0]] > 0) {
				nn = 0;
				for (j = 0; j < nl; j++) {
					uint32_t u = f->layer[j];
					size_t k = 0;
					double part;

					for (i = f->adj_off[u]; i < f->adj_off[u + 1]; i++)
						k += f->dist[f->adj_v[i]] == f->dist[u] - 1;
					part = f->mass[u] / (double)k;
					f->mass[u] = 0;
					for (i = f->adj_off[u]; i < f->adj_off[u + 1]; i++) {
						uint32_t v = f->adj_v[i];

						if (f->dist[v] != f->dist[u] - 1)
							continue;
						if (share_add(s, f->adj_e[i], part))
							goto oom;
						if (f->mass[v] == 0)
							f->next[nn++] = v;
						f->mass[v] += part;
					}
				}
				memcpy(f->layer, f->next, nn * sizeof(*f->layer));
				nl = nn;
			}
			for (j = 0; j < nl; j++)
				f->mass[f->layer[j]] = 0;
		}
	}
	if (share_add(s, 2 * b->link + 1, 1.0))
		goto oom;
	flow_close(s);
	return 0;
oom:
	return fs_err_env("out of memory for the model's flows");
}

long fab_host_index(const struct fab *f, const char *name)
{
	size_t lo = 0, hi = f->nhosts;

	while (lo < hi) {	/* f->hosts are in natural order */
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
			if ((int)f->adj_v[i] == sy)
				return f->adj_e[i];
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
