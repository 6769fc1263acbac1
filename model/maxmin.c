/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Progressive filling: see maxmin.h.
 */
#include <math.h>
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

int mm_solve(const struct mm_problem *p, double *rate)
{
	size_t E = p->nedges, F = p->nflows, S = p->off[F], f, s, e;
	double *load = calloc(E ? E : 1, sizeof(*load));
	double *weight = calloc(E ? E : 1, sizeof(*weight));
	uint32_t *version = calloc(E ? E : 1, sizeof(*version));
	size_t *eoff = calloc(E + 1, sizeof(*eoff));
	uint32_t *eflow = malloc((S ? S : 1) * sizeof(*eflow));
	unsigned char *frozen = calloc(F ? F : 1, 1);
	struct mm_heap h = { 0 };
	int rc = -1;

	if (!load || !weight || !version || !eoff || !eflow || !frozen)
		goto out;
	/* the flows of each edge (counting sort by edge) */
	for (s = 0; s < S; s++)
		eoff[p->edge[s] + 1]++;
	for (e = 0; e < E; e++)
		eoff[e + 1] += eoff[e];
	{
		size_t *fill = malloc((E ? E : 1) * sizeof(*fill));

		if (!fill)
			goto out;
		memcpy(fill, eoff, E * sizeof(*fill));
		for (f = 0; f < F; f++)
			for (s = p->off[f]; s < p->off[f + 1]; s++) {
				eflow[fill[p->edge[s]]++] = (uint32_t)f;
				weight[p->edge[s]] += p->share[s];
			}
		free(fill);
	}
	for (f = 0; f < F; f++)
		rate[f] = INFINITY;
	for (e = 0; e < E; e++)
		if (weight[e] > MM_EPS && heap_push(&h, (struct mm_ev){ p->cap[e] / weight[e], (uint32_t)e, 0 }))
			goto out;
	while (h.n) {
		struct mm_ev ev = heap_pop(&h);

		if (ev.version != version[ev.edge] || weight[ev.edge] <= MM_EPS)
			continue;	/* stale: the edge changed since */
		for (s = eoff[ev.edge]; s < eoff[ev.edge + 1]; s++) {
			size_t g = eflow[s], t;

			if (frozen[g])
				continue;
			frozen[g] = 1;
			rate[g] = ev.level;
			for (t = p->off[g]; t < p->off[g + 1]; t++) {
				uint32_t x = p->edge[t];

				load[x] += p->share[t] * ev.level;
				weight[x] -= p->share[t];
				version[x]++;
				if (x != ev.edge && weight[x] > MM_EPS) {
					double lv = (p->cap[x] - load[x]) / weight[x];

					if (heap_push(&h, (struct mm_ev){ lv < ev.level ? ev.level : lv, x, version[x] }))
						goto out;
				}
			}
		}
		weight[ev.edge] = 0;
	}
	rc = 0;
out:
	free(h.v);
	free(load);
	free(weight);
	free(version);
	free(eoff);
	free(eflow);
	free(frozen);
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
