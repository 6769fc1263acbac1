/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Schedules: the lanes of a phase, the rounds of a kind and the pairs of
 * each round (the round-robin tournament, ring, permutation, bisection,
 * incast, polarization), and the time a collective phase takes.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../core/units.h"
#include "plan-int.h"

/* The sizes of a collective phase, as `fabscope allreduce` makes them:
 * from minbytes by stepfactor (default 2) up to maxbytes; one of them alone
 * is one size, neither is 32M; at most 64 of them. */
static int coll_sizes(const struct plan_phase *ph, uint64_t *sizes, int max)
{
	uint64_t lo = 0, hi = 0;
	double f = 2, s;
	const char *v;
	int n = 0;

	if ((v = plan_opt(ph, "minbytes", NULL)))
		units_parse_size(v, &lo);
	if ((v = plan_opt(ph, "maxbytes", NULL)))
		units_parse_size(v, &hi);
	if ((v = plan_opt(ph, "stepfactor", NULL)))
		f = strtod(v, NULL);
	if (!lo && !hi)
		lo = hi = 32u << 20;
	else if (!hi)
		hi = lo;
	else if (!lo)
		lo = hi;
	if (hi < lo)
		hi = lo;
	for (s = (double)lo; s <= (double)hi && n < max; s *= f) {
		if (!n || (uint64_t)s != sizes[n - 1])
			sizes[n++] = (uint64_t)s;
		if (!(f > 1.0))
			break;
	}
	return n;
}

double plan_coll_seconds(const struct plan_phase *ph, uint64_t size, int nranks, double gbps, double step_s)
{
	uint64_t sizes[64], it, w = 5, n_it = 20;
	int n = size ? 1 : coll_sizes(ph, sizes, 64), i, steps;
	double t = 1 + 0.01 * nranks;	/* connecting: each rank to the root, blobs */
	const char *v;

	if (size)
		sizes[0] = size;
	if ((v = plan_opt(ph, "warmup", NULL)))
		units_parse_count(v, &w);
	if ((v = plan_opt(ph, "iters", NULL)))
		units_parse_count(v, &n_it);
	it = w + n_it;
	/* what leaves a rank per operation: 2(n-1)/n of the size for the
	 * all-reduce (ring or halving-doubling), (n-1)/n for the all-to-all
	 * (n unknown: all of it); message steps per operation: 2(n-1) and n-1 */
	steps = nranks > 1 ? (ph->kind == PLAN_ALLREDUCE ? 2 : 1) * (nranks - 1) : 0;
	for (i = 0; i < n; i++) {
		double bytes = (ph->kind == PLAN_ALLREDUCE ? 2.0 : 1.0) * (double)sizes[i] *
			       (nranks > 1 ? (double)(nranks - 1) / nranks : 1);

		/* and the data check of each size: a few passes over the
		 * buffers, at the speed of memory (2 GB/s, a slow one) */
		t += (double)it * (bytes * 8 / (gbps * 1e9) + steps * step_s) + 3.0 * (double)sizes[i] / 2e9;
	}
	return t;
}

int plan_lanes(const struct plan *p, const struct plan_phase *ph, struct plan_lane *out, int max)
{
	uint8_t seen[FS_MAX_RAILS][FS_MAX_PLANES] = { { 0 } };
	int i, j, n = 0, r, pl;

	for (i = 0; i < p->nnodes; i++)
		for (j = 0; j < p->nodes[i].nep; j++)
			seen[p->nodes[i].ep[j].rail][p->nodes[i].ep[j].plane] = 1;
	for (r = 0; r < FS_MAX_RAILS; r++) {
		int want = !ph || !ph->nrails;

		for (j = 0; ph && j < ph->nrails; j++)
			want |= ph->rails[j] == r;
		for (pl = 0; pl < FS_MAX_PLANES && want; pl++)
			if (seen[r][pl] && n < max) {
				out[n].rail = r;
				out[n].plane = pl;
				n++;
			}
	}
	return n;
}

int plan_rounds(const struct plan_phase *ph, int n)
{
	switch (ph->kind) {
	case PLAN_PAIRWISE:
		return n < 2 ? 0 : n % 2 ? n : n - 1;
	case PLAN_PERMUTATION:
		return n < 2 ? 0 : ph->count;
	case PLAN_PING:
	case PLAN_TOPOLOGY:
		return 1;
	case PLAN_POLARIZATION:
		return n < 2 ? 0 : 1;
	default:
		return n < 2 ? 0 : 1;
	}
}

/* splitmix64: a small, well-mixed generator for reproducible permutations */
static uint64_t mix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int plan_round_pairs(const struct plan_phase *ph, int n, int r, int target,
		     struct plan_pair *out)
{
	int i, k = 0;

	switch (ph->kind) {
	case PLAN_PAIRWISE: {
		/* the circle method: node m-1 stays, the others rotate; with
		 * an odd count a phantom node m-1 gives one node a bye */
		int m = n % 2 ? n + 1 : n, c = m - 1;

		for (i = 0; i < m / 2; i++) {
			int a = i ? (r + i) % c : m - 1, b = (r - i + c) % c;

			if (!i)
				b = r;
			if (a >= n || b >= n)
				continue;
			/* who sends: the smaller index when the sum is odd, the
			 * larger when even; every node sends to about half its peers */
			{
				int lo = a < b ? a : b, hi = a < b ? b : a;

				out[k].client = (lo + hi) % 2 ? lo : hi;
				out[k].server = (lo + hi) % 2 ? hi : lo;
			}
			k++;
		}
		return k;
	}
	case PLAN_RING:
		for (i = 0; i < n; i++) {
			out[k].client = i;
			out[k++].server = (i + 1) % n;
		}
		return n == 2 ? 1 : k;
	case PLAN_PERMUTATION: {
		/* Sattolo's shuffle: a uniformly random single cycle, which
		 * is a derangement; round r has its own stream of the seed */
		int *perm = malloc((size_t)n * sizeof(*perm));
		uint64_t s = ph->seed * 0x100000001b3ull + (uint64_t)r;

		if (!perm)
			return 0;
		for (i = 0; i < n; i++)
			perm[i] = i;
		for (i = n - 1; i > 0; i--) {
			int j = (int)(mix64(&s) % (uint64_t)i), t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
		for (i = 0; i < n; i++) {
			out[k].client = i;
			out[k++].server = perm[i];
		}
		free(perm);
		return k;
	}
	case PLAN_BISECTION: {
		int h = n / 2;

		for (i = 0; i < h; i++) {
			out[k].client = i;
			out[k++].server = i + h;
			out[k].client = i + h;
			out[k++].server = i;
		}
		return k;
	}
	case PLAN_INCAST:
	case PLAN_PFC:
		for (i = 0; i < n; i++)
			if (i != target) {
				out[k].client = i;
				out[k++].server = target;
			}
		return k;
	case PLAN_POLARIZATION:	/* across the middle of the node list, one way */
		for (i = 0; i < n / 2; i++) {
			out[k].client = i;
			out[k++].server = i + n / 2;
		}
		return k;
	case PLAN_PING:
	case PLAN_TOPOLOGY:	/* a job per node, no pairs */
	case PLAN_ALLREDUCE:	/* a group per lane, no pairs */
	case PLAN_ALLTOALL:
		return 0;
	}
	return 0;
}
