/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fabric as the localization reads it, and its path sets: see localize.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "localize.h"

static int str_pcmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int port_cmp(const void *a, const void *b)
{
	const struct loc_port *x = a, *y = b;

	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	if (x->rail != y->rail)
		return x->rail < y->rail ? -1 : 1;
	if (x->plane != y->plane)
		return x->plane < y->plane ? -1 : 1;
	return x->cable < y->cable ? -1 : x->cable > y->cable;
}

static int adj_cmp(const void *a, const void *b)
{
	const struct loc_adj *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->edge < y->edge ? -1 : x->edge > y->edge;
}

static int routed(const struct topo *t, const struct topo_link *l)
{
	return !topo_link_oob(t, l) && !(l->a.sw >= 0 && l->a.sw == l->b.sw);
}

/* the hosts: every node end of a routed cable to a switch, sorted, once each */
static int net_hosts(struct loc_net *n)
{
	const struct topo *t = n->t;
	size_t i, j, alloc = 0;

	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];

		if (l->a.sw >= 0 || l->b.sw < 0 || !routed(t, l))
			continue;
		if (FS_ALLOC_GROW(n->hosts, n->nhosts + 1, alloc))
			return fs_err_env("out of memory indexing the design's nodes");
		n->hosts[n->nhosts++] = l->a.dev;
	}
	if (!n->nhosts)
		return fs_err_usage("%s: no node is cabled to a switch: nothing to localize", t->path ? t->path : "the design");
	qsort(n->hosts, n->nhosts, sizeof(*n->hosts), str_pcmp);
	for (i = j = 1; i < n->nhosts; i++)
		if (strcmp(n->hosts[i], n->hosts[j - 1]))
			n->hosts[j++] = n->hosts[i];
	n->nhosts = j;
	return 0;
}

static int net_ports(struct loc_net *n)
{
	const struct topo *t = n->t;
	size_t i, j, alloc = 0;

	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		const struct topo_switch *s;
		struct loc_port *p;

		if (l->a.sw >= 0 || l->b.sw < 0 || !routed(t, l))
			continue;
		if (FS_ALLOC_GROW(n->ports, n->nports + 1, alloc))
			return fs_err_env("out of memory indexing the design's NIC ports");
		s = &t->sw[l->b.sw];
		p = &n->ports[n->nports++];
		p->host = (uint32_t)loc_host(n, l->a.dev);
		p->rail = l->rail >= 0 ? l->rail : s->rail >= 0 ? s->rail : 0;
		p->plane = l->plane >= 0 ? l->plane : s->plane >= 0 ? s->plane : 0;
		p->leaf = l->b.sw;
		p->cable = (uint32_t)i;
	}
	qsort(n->ports, n->nports, sizeof(*n->ports), port_cmp);
	/* one port a lane: a second cable of the same lane (a bond's) is left out */
	for (i = j = n->nports ? 1 : 0; i < n->nports; i++)
		if (port_cmp(&n->ports[i], &n->ports[j - 1]) && (n->ports[i].host != n->ports[j - 1].host ||
								 n->ports[i].rail != n->ports[j - 1].rail ||
								 n->ports[i].plane != n->ports[j - 1].plane))
			n->ports[j++] = n->ports[i];
	n->nports = j;
	if (!(n->host_port = calloc(n->nhosts + 1, sizeof(*n->host_port))))
		return fs_err_env("out of memory indexing the design's NIC ports");
	for (i = 0; i < n->nports; i++)
		n->host_port[n->ports[i].host + 1]++;
	for (i = 0; i < n->nhosts; i++)
		n->host_port[i + 1] += n->host_port[i];
	return 0;
}

static int net_adj(struct loc_net *n)
{
	const struct topo *t = n->t;
	size_t i, m = 0;

	if (!(n->adj_off = calloc(n->nsw + 1, sizeof(*n->adj_off))))
		return fs_err_env("out of memory indexing the design's cables");
	for (i = 0; i < t->nln; i++)
		if (t->ln[i].a.sw >= 0 && t->ln[i].b.sw >= 0 && routed(t, &t->ln[i])) {
			n->adj_off[t->ln[i].a.sw + 1]++;
			n->adj_off[t->ln[i].b.sw + 1]++;
			m += 2;
		}
	for (i = 0; i < n->nsw; i++)
		n->adj_off[i + 1] += n->adj_off[i];
	if (!(n->adj = calloc(m ? m : 1, sizeof(*n->adj))))
		return fs_err_env("out of memory indexing the design's cables");
	{
		size_t *fill = calloc(n->nsw + 1, sizeof(*fill));

		if (!fill)
			return fs_err_env("out of memory indexing the design's cables");
		for (i = 0; i < t->nln; i++) {
			const struct topo_link *l = &t->ln[i];
			size_t a, b;

			if (l->a.sw < 0 || l->b.sw < 0 || !routed(t, l))
				continue;
			a = (size_t)l->a.sw;
			b = (size_t)l->b.sw;
			n->adj[n->adj_off[a] + fill[a]++] = (struct loc_adj){ (uint32_t)b, (uint32_t)(2 * i) };
			n->adj[n->adj_off[b] + fill[b]++] = (struct loc_adj){ (uint32_t)a, (uint32_t)(2 * i + 1) };
		}
		free(fill);
	}
	for (i = 0; i < n->nsw; i++)
		qsort(n->adj + n->adj_off[i], n->adj_off[i + 1] - n->adj_off[i], sizeof(*n->adj), adj_cmp);
	return 0;
}

int loc_net_build(struct loc_net *n, const struct topo *t)
{
	int rc;

	memset(n, 0, sizeof(*n));
	n->t = t;
	n->nsw = t->nsw;
	n->ncables = t->nln;
	if ((rc = net_hosts(n)) || (rc = net_ports(n)) || (rc = net_adj(n)))
		return rc;
	if (2 * n->ncables + n->nports + n->nhosts > UINT32_MAX - 1)
		return fs_err_usage("%s: too many cables and ports to localize", t->path ? t->path : "the design");
	n->nic0 = (uint32_t)(2 * n->ncables);
	n->host0 = n->nic0 + (uint32_t)n->nports;
	n->nelems = n->host0 + (uint32_t)n->nhosts;
	n->dist = malloc((n->nsw + 1) * sizeof(*n->dist));
	n->mass = calloc(n->nsw + 1, sizeof(*n->mass));
	n->queue = malloc((n->nsw + 1) * sizeof(*n->queue));
	if (!n->dist || !n->mass || !n->queue)
		return fs_err_env("out of memory indexing the design");
	return 0;
}

void loc_net_release(struct loc_net *n)
{
	free(n->adj_off);
	free(n->adj);
	free(n->hosts);
	free(n->ports);
	free(n->host_port);
	free(n->dist);
	free(n->mass);
	free(n->queue);
	memset(n, 0, sizeof(*n));
}

long loc_host(const struct loc_net *n, const char *name)
{
	const char **p = bsearch(&name, n->hosts, n->nhosts, sizeof(*n->hosts), str_pcmp);

	return p ? (long)(p - n->hosts) : -1;
}

long loc_port_of(const struct loc_net *n, size_t h, int rail, int plane)
{
	size_t i;

	if (h >= n->nhosts)
		return -1;
	for (i = n->host_port[h]; i < n->host_port[h + 1]; i++)
		if (n->ports[i].rail == rail && n->ports[i].plane == plane)
			return (long)i;
	return -1;
}

long loc_edge(const struct loc_net *n, uint32_t u, uint32_t v)
{
	size_t lo, hi;

	if (u >= n->nsw || v >= n->nsw)
		return -1;
	lo = n->adj_off[u];
	hi = n->adj_off[u + 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (n->adj[mid].v < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n->adj_off[u + 1] && n->adj[lo].v == v ? (long)n->adj[lo].edge : -1;
}

void loc_elem_name(const struct loc_net *n, uint32_t e, char *buf, size_t len)
{
	const struct topo *t = n->t;

	if (e < n->nic0) {
		const struct topo_link *l = &t->ln[e / 2];
		const struct topo_end *from = e & 1 ? &l->b : &l->a, *to = e & 1 ? &l->a : &l->b;

		snprintf(buf, len, "link %s -> %s", from->dev, to->dev);
	} else if (e < n->host0) {
		const struct loc_port *p = &n->ports[e - n->nic0];

		snprintf(buf, len, "nic %s rail %d plane %d", n->hosts[p->host], p->rail, p->plane);
	} else if (e < n->nelems) {
		snprintf(buf, len, "host %s", n->hosts[e - n->host0]);
	} else {
		snprintf(buf, len, "element %u", e);
	}
}

/* ---- path sets ---- */

void loc_paths_init(struct loc_paths *p)
{
	memset(p, 0, sizeof(*p));
}

void loc_paths_release(struct loc_paths *p)
{
	free(p->off);
	free(p->share);
	free(p->traced);
	loc_map_release(&p->cand);
	memset(p, 0, sizeof(*p));
}

static int share_cmp(const void *a, const void *b)
{
	const struct loc_share *x = a, *y = b;

	return x->elem < y->elem ? -1 : x->elem > y->elem;
}

/* close the set begun at share[off[nsets]]: sort, merge the same elements */
static long paths_close(struct loc_paths *p, int traced)
{
	size_t b, i, j;

	if (FS_ALLOC_GROW(p->off, p->nsets + 2, p->off_alloc) || FS_ALLOC_GROW(p->traced, p->nsets + 1, p->traced_alloc))
		return -1;
	if (!p->nsets)
		p->off[0] = 0;
	b = p->off[p->nsets];
	if (p->nshares - b > 1)
		qsort(p->share + b, p->nshares - b, sizeof(*p->share), share_cmp);
	for (i = j = b; i < p->nshares; i++) {
		if (j > b && p->share[j - 1].elem == p->share[i].elem)
			p->share[j - 1].w += p->share[i].w;
		else
			p->share[j++] = p->share[i];
	}
	p->nshares = j;
	p->traced[p->nsets] = (unsigned char)traced;
	p->off[++p->nsets] = p->nshares;
	return (long)(p->nsets - 1);
}

static int paths_add(struct loc_paths *p, uint32_t elem, double w)
{
	if (!p->nsets && !p->off_alloc && FS_ALLOC_GROW(p->off, 1, p->off_alloc))
		return -1;
	if (!p->nsets)
		p->off[0] = 0;
	if (FS_ALLOC_GROW(p->share, p->nshares + 1, p->share_alloc))
		return -1;
	p->share[p->nshares++] = (struct loc_share){ elem, (float)w };
	return 0;
}

/* distances to switch dst over switches (n->dist; -1 unreached) */
static void bfs_from(struct loc_net *n, int dst)
{
	size_t qh = 0, qt = 0, i;

	for (i = 0; i < n->nsw; i++)
		n->dist[i] = -1;
	n->dist[dst] = 0;
	n->queue[qt++] = (uint32_t)dst;
	while (qh < qt) {
		uint32_t u = n->queue[qh++];

		for (i = n->adj_off[u]; i < n->adj_off[u + 1]; i++)
			if (n->dist[n->adj[i].v] < 0) {
				n->dist[n->adj[i].v] = n->dist[u] + 1;
				n->queue[qt++] = n->adj[i].v;
			}
	}
}

/* the shares of every shortest path from leaf a to leaf b (equal split at every switch) */
static int spread(struct loc_paths *p, struct loc_net *n, int a, int b)
{
	size_t qh = 0, qt = 0, i;

	bfs_from(n, b);
	if (n->dist[a] < 0)
		return 1;
	n->mass[a] = 1;
	n->queue[qt++] = (uint32_t)a;
	/* breadth-first from a along edges that get closer to b: each switch once, after every
	 * switch one hop farther from b (they come before it in the queue) */
	while (qh < qt) {
		uint32_t u = n->queue[qh++];
		int next = 0;
		double m = n->mass[u];

		n->mass[u] = 0;
		if ((int)u == b)
			continue;
		for (i = n->adj_off[u]; i < n->adj_off[u + 1]; i++)
			next += n->dist[n->adj[i].v] == n->dist[u] - 1;
		for (i = n->adj_off[u]; i < n->adj_off[u + 1]; i++) {
			uint32_t v = n->adj[i].v;

			if (n->dist[v] != n->dist[u] - 1)
				continue;
			if (paths_add(p, n->adj[i].edge, m / next))
				return -1;
			if (n->mass[v] == 0)
				n->queue[qt++] = v;
			n->mass[v] += m / next;
		}
	}
	for (i = 0; i < qt; i++)
		n->mass[n->queue[i]] = 0;
	return 0;
}

static size_t map_slot(const struct loc_map *m, uint64_t key)
{
	size_t mask = m->alloc - 1, i;

	for (i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & mask; m->key[i] && m->key[i] != key; i = (i + 1) & mask)
		;
	return i;
}

long loc_map_get(const struct loc_map *m, uint64_t key)
{
	size_t i;

	if (!m->alloc)
		return -1;
	i = map_slot(m, key + 1);
	return m->key[i] ? (long)m->val[i] : -1;
}

int loc_map_put(struct loc_map *m, uint64_t key, uint32_t val)
{
	size_t i;

	key++;
	if (2 * (m->n + 1) > m->alloc) {
		struct loc_map o = *m;
		size_t na = m->alloc ? 2 * m->alloc : 1024;

		m->key = calloc(na, sizeof(*m->key));
		m->val = calloc(na, sizeof(*m->val));
		if (!m->key || !m->val) {
			free(m->key);
			free(m->val);
			*m = o;
			return -1;
		}
		m->alloc = na;
		for (i = 0; i < o.alloc; i++)
			if (o.key[i]) {
				size_t j = map_slot(m, o.key[i]);

				m->key[j] = o.key[i];
				m->val[j] = o.val[i];
			}
		free(o.key);
		free(o.val);
	}
	i = map_slot(m, key);
	m->n += !m->key[i];
	m->key[i] = key;
	m->val[i] = val;
	return 0;
}

void loc_map_release(struct loc_map *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof(*m));
}

long loc_paths_candidates(struct loc_paths *p, struct loc_net *n, int a, int b)
{
	uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
	long id = loc_map_get(&p->cand, key);
	int rc;

	if (id >= 0)
		return id;
	if (a != b) {
		rc = spread(p, n, a, b);
		if (!rc)
			rc = spread(p, n, b, a);
		if (rc > 0) {
			p->nshares = p->nsets ? p->off[p->nsets] : 0;
			fs_err_usage("no path between %s and %s in the design", n->t->sw[a].name, n->t->sw[b].name);
			return -1;
		}
		if (rc < 0) {
			fs_err_env("out of memory making path sets");
			return -1;
		}
	}
	id = paths_close(p, 0);
	if (id < 0 || loc_map_put(&p->cand, key, (uint32_t)id)) {
		fs_err_env("out of memory making path sets");
		return -1;
	}
	return id;
}

static int add_hops(struct loc_paths *p, const struct loc_net *n, const uint32_t *hop, int nhop, double w)
{
	int i;

	for (i = 0; i + 1 < nhop; i++) {
		long e = loc_edge(n, hop[i], hop[i + 1]);

		if (e < 0) {
			const char *u = hop[i] < n->nsw ? n->t->sw[hop[i]].name : "?";
			const char *v = hop[i + 1] < n->nsw ? n->t->sw[hop[i + 1]].name : "?";

			fs_err_usage("a traced path goes from %s to %s: no cable of the design joins them "
				     "(check the design against the fabric: fabscope topo --verify)", u, v);
			return 1;
		}
		if (paths_add(p, (uint32_t)e, w))
			return -1;
	}
	return 0;
}

long loc_paths_traced(struct loc_paths *p, const struct loc_net *n, int nports, const uint32_t *const *fwd,
		      const int *nfwd, const uint32_t *const *rev, const int *nrev)
{
	size_t mark = p->nshares;
	int i, rc = 0;
	long id;

	for (i = 0; i < nports && !rc; i++) {
		rc = add_hops(p, n, fwd[i], nfwd[i], 1.0 / nports);
		if (!rc)
			rc = add_hops(p, n, rev[i], nrev[i], 1.0 / nports);
	}
	if (rc) {
		p->nshares = mark;
		if (rc < 0)
			fs_err_env("out of memory making path sets");
		return -1;
	}
	if ((id = paths_close(p, 1)) < 0)
		fs_err_env("out of memory making path sets");
	return id;
}
