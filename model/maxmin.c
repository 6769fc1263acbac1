/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Progressive filling: see maxmin.h.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "maxmin.h"

struct mm_ev {
	double level;
	uint32_t edge, version;
};

struct mm_heap {
	struct mm_ev *v;
	size_t n, alloc;
};

static int heap_push(struct mm_heap *h, struct mm_ev e)
{
	size_t i;

	if (h->n == h->alloc) {
		size_t na = h->alloc ? 2 * h->alloc : 64;
		struct mm_ev *nv = realloc(h->v, na * sizeof(*nv));

		if (!nv)
			return -1;
		h->v = nv;
		h->alloc = na;
	}
	i = h->n++;
	while (i && h->v[(i - 1) / 2].level > e.level) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = e;
	return 0;
}

static struct mm_ev heap_pop(struct mm_heap *h)
{
	struct mm_ev top = h->v[0], last = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1].level < h->v[c].level)
			c++;
		if (h->v[c].level >= last.level)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

/* an edge's weight this close to zero has no active flow left (sums of shares
 * such as 1/3 + 1/3 + 1/3 - 1 do not come out as 0 exactly) */
#define MM_EPS 1e-9
#define MM_NONE UINT32_MAX

/* an edge's state, together for one cache line a visit */
struct mm_edge {
	double load, weight;
	uint32_t version;
};

/* see maxmin.h: per problem edge its local number, MM_NONE between solves */
struct mm_ws {
	size_t nedges;
	uint32_t *local;
	uint32_t *used;		/* the problem edges of a solve, by local number */
	struct mm_edge *ed;
	size_t *eoff;
	uint32_t *eflow;	/* the flows of each edge, by edge */
	unsigned char *frozen;
	size_t used_alloc, ed_alloc, eoff_alloc, eflow_alloc, frozen_alloc;
	struct mm_heap h;
	/* the parts of a problem that share no edge, each solved alone (mm_solve_ws) */
	uint32_t *parent, *part_flow;	/* union-find over flows; the flows part by part */
	size_t *part_off;
	size_t parent_alloc, part_flow_alloc, part_off_alloc;
};

struct mm_ws *mm_ws_new(size_t nedges)
{
	struct mm_ws *w = calloc(1, sizeof(*w));
	size_t e;

	if (!w || !(w->local = malloc((nedges ? nedges : 1) * sizeof(*w->local)))) {
		free(w);
		return NULL;
	}
	w->nedges = nedges;
	for (e = 0; e < nedges; e++)
		w->local[e] = MM_NONE;
	return w;
}

void mm_ws_free(struct mm_ws *w)
{
	if (!w)
		return;
	free(w->local);
	free(w->used);
	free(w->ed);
	free(w->eoff);
	free(w->eflow);
	free(w->frozen);
	free(w->h.v);
	free(w->parent);
	free(w->part_flow);
	free(w->part_off);
	free(w);
}

/* grow *p (of elements of size bytes, *alloc of them) to n; 0 or -1 */
static int grow(void **p, size_t *alloc, size_t n, size_t size)
{
	void *np;

	if (n <= *alloc)
		return 0;
	n = n < 2 * *alloc ? 2 * *alloc : n;
	if (n > SIZE_MAX / size || !(np = realloc(*p, n * size)))
		return -1;
	*p = np;
	*alloc = n;
	return 0;
}

#define GROW(w, f, n) grow((void **)&(w)->f, &(w)->f##_alloc, (n), sizeof(*(w)->f))

/* a part of a problem: flows fl[0..nf) of it (fl NULL: all of them, in order) */
struct part {
	const uint32_t *fl;
	size_t nf;
};

#define FLOW(pt, i) ((pt)->fl ? (pt)->fl[i] : (i))

/* the edges the part's shares use, numbered locally, and each one's flows (a counting sort, by
 * the flows' places in the part) */
static int index_edges(const struct mm_problem *p, const struct part *pt, struct mm_ws *w, size_t *nused)
{
	size_t i, s, u, n = 0, ns = 0;

	for (i = 0; i < pt->nf; i++)
		ns += p->off[FLOW(pt, i) + 1] - p->off[FLOW(pt, i)];
	if (GROW(w, eflow, ns ? ns : 1) || GROW(w, frozen, pt->nf ? pt->nf : 1))
		return -1;
	for (i = 0; i < pt->nf; i++)
		for (s = p->off[FLOW(pt, i)]; s < p->off[FLOW(pt, i) + 1]; s++) {
			uint32_t e = p->edge[s];

			if (w->local[e] != MM_NONE)
				continue;
			if (GROW(w, used, n + 1))
				return -1;
			w->local[e] = (uint32_t)n;
			w->used[n++] = e;
			*nused = n;	/* (what the caller clears, even on a failure) */
		}
	if (GROW(w, ed, n ? n : 1) || GROW(w, eoff, n + 2))
		return -1;
	memset(w->ed, 0, n * sizeof(*w->ed));
	memset(w->eoff, 0, (n + 2) * sizeof(*w->eoff));
	memset(w->frozen, 0, pt->nf);
	for (i = 0; i < pt->nf; i++)
		for (s = p->off[FLOW(pt, i)]; s < p->off[FLOW(pt, i) + 1]; s++)
			w->eoff[w->local[p->edge[s]] + 2]++;
	for (u = 0; u < n; u++)
		w->eoff[u + 2] += w->eoff[u + 1];
	for (i = 0; i < pt->nf; i++)	/* eoff[u + 1]: where u's next flow goes, then u's end */
		for (s = p->off[FLOW(pt, i)]; s < p->off[FLOW(pt, i) + 1]; s++) {
			uint32_t le = w->local[p->edge[s]];

			w->eflow[w->eoff[le + 1]++] = (uint32_t)i;
			w->ed[le].weight += p->share[s];
		}
	return 0;
}

/* progressive filling of one part of a problem; rate[] of the problem's flows */
static int solve_one(const struct mm_problem *p, const struct part *pt, double *rate, struct mm_ws *w)
{
	size_t i, s, u, n = 0;
	struct mm_heap *h = &w->h;
	int rc = -1;

	h->n = 0;
	if (index_edges(p, pt, w, &n))
		goto out;
	for (i = 0; i < pt->nf; i++)
		rate[FLOW(pt, i)] = INFINITY;
	/* the heap holds one entry an edge, its level when pushed: a level only
	 * rises as flows freeze, so an entry is a lower bound of its edge's
	 * level; one popped unchanged is the lowest of all, and so is one popped
	 * after it changed whose level now is still no higher than the next
	 * entry's; else it is pushed again at its level now */
	for (u = 0; u < n; u++)
		if (w->ed[u].weight > MM_EPS &&
		    heap_push(h, (struct mm_ev){ p->cap[w->used[u]] / w->ed[u].weight, (uint32_t)u, 0 }))
			goto out;
	while (h->n) {
		struct mm_ev ev = heap_pop(h);
		struct mm_edge *x = &w->ed[ev.edge];

		if (x->weight <= MM_EPS)
			continue;	/* its flows all frozen by other edges */
		if (ev.version != x->version) {	/* its level now; still the lowest, it fills now */
			double lv = (p->cap[w->used[ev.edge]] - x->load) / x->weight;

			ev.level = lv < ev.level ? ev.level : lv;
			ev.version = x->version;
			if (h->n && h->v[0].level < ev.level) {
				if (heap_push(h, ev))
					goto out;
				continue;
			}
		}
		for (s = w->eoff[ev.edge]; s < w->eoff[ev.edge + 1]; s++) {
			size_t k = w->eflow[s], g = FLOW(pt, k), t;

			if (w->frozen[k])
				continue;
			w->frozen[k] = 1;
			rate[g] = ev.level;
			for (t = p->off[g]; t < p->off[g + 1]; t++) {
				struct mm_edge *y = &w->ed[w->local[p->edge[t]]];

				y->load += p->share[t] * ev.level;
				y->weight -= p->share[t];
				y->version++;
			}
		}
		x->weight = 0;
	}
	rc = 0;
out:
	for (u = 0; u < n; u++)	/* ready for the next problem */
		w->local[w->used[u]] = MM_NONE;
	return rc;
}

static uint32_t root(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x)
		x = parent[x] = parent[parent[x]];
	return x;
}

/* the parts: flows joined by the edges they share (union-find, the edges' first flows kept in
 * w->local meanwhile); w->part_flow holds them part by part, [part_off[k], part_off[k + 1]) */
static int parts(const struct mm_problem *p, struct mm_ws *w, size_t *nparts)
{
	size_t F = p->nflows, S = p->off[F], f, s, k;

	if (GROW(w, parent, F ? F : 1) || GROW(w, part_flow, F ? F : 1) || GROW(w, part_off, F + 2))
		return -1;
	for (f = 0; f < F; f++)
		w->parent[f] = (uint32_t)f;
	for (f = 0; f < F; f++)
		for (s = p->off[f]; s < p->off[f + 1]; s++) {
			uint32_t e = p->edge[s], a, b;

			if (w->local[e] == MM_NONE) {
				w->local[e] = (uint32_t)f;
				continue;
			}
			a = root(w->parent, (uint32_t)f);
			b = root(w->parent, w->local[e]);
			if (a != b)
				w->parent[a > b ? a : b] = a < b ? a : b;
		}
	for (s = 0; s < S; s++)
		w->local[p->edge[s]] = MM_NONE;
	/* part numbers in the order of their first flows, then the flows by part (a counting sort) */
	for (f = 0; f < F; f++)
		w->parent[f] = root(w->parent, (uint32_t)f);	/* (a root stays its own parent) */
	memset(w->part_off, 0, (F + 2) * sizeof(*w->part_off));
	for (f = 0, k = 0; f < F; f++)
		if (w->parent[f] == f)
			w->part_off[f] = ++k;	/* the root's part number + 1, for now */
	*nparts = k;
	for (f = 0; f < F; f++)
		w->part_flow[f] = (uint32_t)(w->part_off[w->parent[f]] - 1);
	for (f = 0; f < F; f++)
		w->parent[f] = w->part_flow[f];	/* now: its part */
	memset(w->part_off, 0, (F + 2) * sizeof(*w->part_off));
	for (f = 0; f < F; f++)
		w->part_off[w->parent[f] + 2]++;
	for (k = 0; k < *nparts; k++)
		w->part_off[k + 2] += w->part_off[k + 1];
	for (f = 0; f < F; f++)
		w->part_flow[w->part_off[w->parent[f] + 1]++] = (uint32_t)f;
	return 0;
}

int mm_solve_ws(const struct mm_problem *p, double *rate, struct mm_ws *w)
{
	struct part all = { NULL, p->nflows };
	size_t k, nparts = 0;

	if (p->nflows < 2)
		return solve_one(p, &all, rate, w);
	if (parts(p, w, &nparts))
		return -1;
	if (nparts == 1)
		return solve_one(p, &all, rate, w);
	for (k = 0; k < nparts; k++) {	/* each part on its own: a smaller working set */
		struct part pt = { w->part_flow + w->part_off[k], w->part_off[k + 1] - w->part_off[k] };

		if (solve_one(p, &pt, rate, w))
			return -1;
	}
	return 0;
}

int mm_solve(const struct mm_problem *p, double *rate)
{
	struct mm_ws *w = mm_ws_new(p->nedges);
	int rc = w ? mm_solve_ws(p, rate, w) : -1;

	mm_ws_free(w);
	return rc;
}

double mm_jain(const double *x, size_t n)
{
	double s = 0, q = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		s += x[i];
		q += x[i] * x[i];
	}
	return n && q > 0 ? s * s / ((double)n * q) : 1.0;
}
