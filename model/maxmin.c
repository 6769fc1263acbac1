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

/* the edges the shares use, numbered locally, and each one's flows (a counting sort) */
static int index_edges(const struct mm_problem *p, struct mm_ws *w, size_t *nused)
{
	size_t F = p->nflows, S = p->off[F], f, s, u, n = 0;

	if (GROW(w, eflow, S ? S : 1) || GROW(w, frozen, F ? F : 1))
		return -1;
	for (s = 0; s < S; s++) {
		uint32_t e = p->edge[s];

		if (w->local[e] == MM_NONE) {
			if (GROW(w, used, n + 1))
				return -1;
			w->local[e] = (uint32_t)n;
			w->used[n++] = e;
			*nused = n;	/* (what the caller clears, even on a failure) */
		}
	}
	if (GROW(w, ed, n ? n : 1) || GROW(w, eoff, n + 2))
		return -1;
	memset(w->ed, 0, n * sizeof(*w->ed));
	memset(w->eoff, 0, (n + 2) * sizeof(*w->eoff));
	memset(w->frozen, 0, F);
	for (s = 0; s < S; s++)
		w->eoff[w->local[p->edge[s]] + 2]++;
	for (u = 0; u < n; u++)
		w->eoff[u + 2] += w->eoff[u + 1];
	for (f = 0; f < F; f++)	/* eoff[u + 1]: where u's next flow goes, then u's end */
		for (s = p->off[f]; s < p->off[f + 1]; s++) {
			uint32_t le = w->local[p->edge[s]];

			w->eflow[w->eoff[le + 1]++] = (uint32_t)f;
			w->ed[le].weight += p->share[s];
		}
	return 0;
}

int mm_solve_ws(const struct mm_problem *p, double *rate, struct mm_ws *w)
{
	size_t F = p->nflows, f, s, u, n = 0;
	struct mm_heap *h = &w->h;
	int rc = -1;

	h->n = 0;
	if (index_edges(p, w, &n))
		goto out;
	for (f = 0; f < F; f++)
		rate[f] = INFINITY;
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
			size_t g = w->eflow[s], t;

			if (w->frozen[g])
				continue;
			w->frozen[g] = 1;
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
