/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool model: model/maxmin.c and model/fabric.c
 *
 *   model maxmin <spec        one "cap C0 C1 ..." line, then a line per flow of "EDGE:SHARE" words;
 *                             prints each flow's max-min rate, a line each (%.6g)
 *   model random N SEED       N random problems (single paths and split flows): each solution
 *                             feasible, every flow with a bottleneck edge (saturated, no flow
 *                             on it faster), and equal to a plain O(F E) progressive filling;
 *                             prints "ok N" or the first problem that fails
 *   model ecmp-brute TOPO SAMPLES SEED SRC:RAIL:DST ...
 *                             an oracle of its own (a breadth-first search and a depth-first
 *                             enumeration of every shortest path over the graph's cables, not
 *                             fabric.c's next hops): every combination of the flows' paths
 *                             with its probability, drawn uniformly at every switch (per-hop,
 *                             as ECMP hashes) and uniformly among a flow's paths (per-path):
 *                             the exact expected aggregate under each; spraying from the paths'
 *                             hop-by-hop probabilities as shares; and the model's spraying
 *                             (fab_solve, as fabscope model and the report solve a round) and
 *                             fab_add_flow's ECMP drawn SAMPLES times.  Prints "combinations N",
 *                             "spray paths A model B", "ecmp per-hop H per-path P sampled S" and
 *                             a line "flow I paths N per-hop H per-path P sampled S" each
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../model/fabric.h"
#include "../../model/maxmin.h"
#include "../../model/solve.h"
#include "../../topology/intent.h"
#include "test-tool.h"

static int maxmin_stdin(void)
{
	static char line[1 << 16];
	double cap[256];
	size_t ne = 0, off[257], ns = 0, nf = 0;
	uint32_t edge[4096];
	double share[4096], rate[256];
	struct mm_problem p;
	size_t i;

	off[0] = 0;
	while (fgets(line, sizeof(line), stdin)) {
		char *tok, *sv = NULL;

		if (!strncmp(line, "cap", 3)) {
			for (tok = strtok_r(line + 3, " \t\n", &sv); tok && ne < 256; tok = strtok_r(NULL, " \t\n", &sv))
				cap[ne++] = strtod(tok, NULL);
			continue;
		}
		if (nf == 256)
			break;
		for (tok = strtok_r(line, " \t\n", &sv); tok && ns < 4096; tok = strtok_r(NULL, " \t\n", &sv)) {
			char *colon = strchr(tok, ':');

			edge[ns] = (uint32_t)strtoul(tok, NULL, 10);
			share[ns] = colon ? strtod(colon + 1, NULL) : 1.0;
			if (edge[ns] >= ne) {
				fprintf(stderr, "test-tool model: edge %u past the %zu caps\n", edge[ns], ne);
				return 2;
			}
			ns++;
		}
		off[++nf] = ns;
	}
	p = (struct mm_problem){ ne, cap, nf, off, edge, share };
	if (mm_solve(&p, rate))
		return 3;
	for (i = 0; i < nf; i++)
		printf("%.6g\n", rate[i]);
	return 0;
}

/* progressive filling the plain way: every step, the lowest fill level of all edges */
static void naive(const struct mm_problem *p, double *rate)
{
	unsigned char fr[64] = { 0 };
	size_t f, s, e, left = p->nflows;

	while (left) {
		double best = INFINITY, load[64] = { 0 }, w[64] = { 0 };
		size_t be = 0;

		for (f = 0; f < p->nflows; f++)
			for (s = p->off[f]; s < p->off[f + 1]; s++) {
				if (fr[f])
					load[p->edge[s]] += p->share[s] * rate[f];
				else
					w[p->edge[s]] += p->share[s];
			}
		for (e = 0; e < p->nedges; e++)
			if (w[e] > 1e-9 && (p->cap[e] - load[e]) / w[e] < best) {
				best = (p->cap[e] - load[e]) / w[e];
				be = e;
			}
		for (f = 0; f < p->nflows; f++) {
			if (fr[f])
				continue;
			for (s = p->off[f]; s < p->off[f + 1]; s++)
				if (p->edge[s] == be) {
					fr[f] = 1;
					rate[f] = best;
					left--;
					break;
				}
		}
	}
}

static int random_check(int n, uint64_t seed)
{
	int k;

	for (k = 0; k < n; k++) {
		double cap[64], share[1024], rate[64], want[64], load[64];
		uint32_t edge[1024];
		size_t off[65], ne = 2 + fab_rand(&seed) % 12, nf = 1 + fab_rand(&seed) % 20, ns = 0, f, s, e;
		struct mm_problem p;

		for (e = 0; e < ne; e++)
			cap[e] = 1 + (double)(fab_rand(&seed) % 100);
		off[0] = 0;
		for (f = 0; f < nf; f++) {
			size_t len = 1 + fab_rand(&seed) % 4, j;
			int split = fab_rand(&seed) % 3 == 0;

			for (j = 0; j < len; j++) {
				edge[ns] = (uint32_t)(fab_rand(&seed) % ne);
				share[ns++] = split ? 0.5 : 1.0;
			}
			off[f + 1] = ns;
		}
		p = (struct mm_problem){ ne, cap, nf, off, edge, share };
		if (mm_solve(&p, rate))
			return 3;
		naive(&p, want);
		memset(load, 0, sizeof(load));
		for (f = 0; f < nf; f++)
			for (s = off[f]; s < off[f + 1]; s++)
				load[edge[s]] += share[s] * rate[f];
		for (e = 0; e < ne; e++)
			if (load[e] > cap[e] * (1 + 1e-9)) {
				printf("problem %d: edge %zu carries %g over its %g\n", k, e, load[e], cap[e]);
				return 1;
			}
		for (f = 0; f < nf; f++) {
			int bottleneck = 0;

			if (fabs(rate[f] - want[f]) > 1e-9 * (1 + want[f])) {
				printf("problem %d: flow %zu at %.12g, plain filling %.12g\n", k, f, rate[f], want[f]);
				return 1;
			}
			for (s = off[f]; s < off[f + 1] && !bottleneck; s++) {
				size_t g, t;
				int top = 1;

				if (load[edge[s]] < cap[edge[s]] * (1 - 1e-9))
					continue;
				for (g = 0; g < nf; g++)
					for (t = off[g]; t < off[g + 1]; t++)
						if (edge[t] == edge[s] && rate[g] > rate[f] * (1 + 1e-9))
							top = 0;
				bottleneck = top;
			}
			if (!bottleneck) {
				printf("problem %d: flow %zu (%g) has no bottleneck edge\n", k, f, rate[f]);
				return 1;
			}
		}
	}
	printf("ok %d\n", n);
	return 0;
}

/* ---- ECMP by enumeration: an oracle of its own (its own breadth-first search over the graph's
 * cables), not fabric.c's routing */

#define BRUTE_FLOWS 16
#define BRUTE_HOPS 16

struct path {
	uint32_t e[BRUTE_HOPS];
	int n;
	double prob;		/* drawn uniformly at every switch */
};

struct fpaths {
	size_t src, dst;
	struct path *p;
	int np;
};

struct brute {
	const struct fab *f;
	int *dist;		/* hops to the destination leaf of the flow enumerated */
	struct fpaths fl[BRUTE_FLOWS];
	int nf;
};

static void bfs(struct brute *b, int d)
{
	const struct fab *f = b->f;
	int *q = malloc(f->nsw * sizeof(*q)), head = 0, tail = 0;
	size_t i;

	if (!q)
		abort();	/* a test helper: out of memory ends it */
	for (i = 0; i < f->nsw; i++)
		b->dist[i] = -1;
	b->dist[d] = 0;
	q[tail++] = d;
	while (head < tail) {
		int u = q[head++];

		for (i = f->adj_off[u]; i < f->adj_off[u + 1]; i++)
			if (b->dist[f->adj[i].v] < 0) {
				b->dist[f->adj[i].v] = b->dist[u] + 1;
				q[tail++] = (int)f->adj[i].v;
			}
	}
	free(q);
}

/* every shortest path from u to `to`, each with its probability hop by hop */
static void dfs(struct brute *b, int u, int to, struct path *cur, struct fpaths *out)
{
	const struct fab *f = b->f;
	size_t i;
	int k = 0;

	if (u == to) {
		struct path *np = realloc(out->p, (size_t)(out->np + 1) * sizeof(*out->p));

		if (!np || cur->n >= BRUTE_HOPS)
			abort();
		out->p = np;
		out->p[out->np++] = *cur;
		return;
	}
	for (i = f->adj_off[u]; i < f->adj_off[u + 1]; i++)
		k += b->dist[f->adj[i].v] == b->dist[u] - 1;
	for (i = f->adj_off[u]; i < f->adj_off[u + 1]; i++) {
		struct path next = *cur;

		if (b->dist[f->adj[i].v] != b->dist[u] - 1 || next.n >= BRUTE_HOPS - 1)
			continue;
		next.e[next.n++] = f->adj[i].e;
		next.prob /= k;
		dfs(b, (int)f->adj[i].v, to, &next, out);
	}
}

/* flow i's paths, host link to host link */
static int brute_flow(struct brute *b, int i, const char *arg)
{
	const struct fab *f = b->f;
	char src[128], dst[128];
	int rail;
	long hs, hd, ps, pd;
	struct path cur = { .n = 0, .prob = 1 };

	if (sscanf(arg, "%127[^:]:%d:%127s", src, &rail, dst) != 3 || (hs = fab_host_index(f, src)) < 0 ||
	    (hd = fab_host_index(f, dst)) < 0 || (ps = fab_port_of(f, (size_t)hs, rail, 0)) < 0 ||
	    (pd = fab_port_of(f, (size_t)hd, rail, 0)) < 0) {
		fprintf(stderr, "test-tool model ecmp-brute: '%s': not SRC:RAIL:DST of the topology's hosts\n", arg);
		return -1;
	}
	b->fl[i] = (struct fpaths){ (size_t)ps, (size_t)pd, NULL, 0 };
	cur.e[cur.n++] = 2 * f->ports[ps].link;
	bfs(b, f->ports[pd].leaf);
	dfs(b, f->ports[ps].leaf, f->ports[pd].leaf, &cur, &b->fl[i]);
	for (int j = 0; j < b->fl[i].np; j++)
		b->fl[i].p[j].e[b->fl[i].p[j].n++] = 2 * f->ports[pd].link + 1;
	return 0;
}

/* the expected rates over every combination of the flows' paths, each combination's probability
 * either the product of its paths' hop-by-hop ones (per_path 0) or of 1/np each (per_path 1) */
static void enumerate(const struct brute *b, int per_path, long combos, double *rate_sum, double *agg)
{
	const struct fab *f = b->f;
	double rate[BRUTE_FLOWS];
	long c;
	int i;

	*agg = 0;
	memset(rate_sum, 0, BRUTE_FLOWS * sizeof(*rate_sum));
	for (c = 0; c < combos; c++) {
		size_t off[BRUTE_FLOWS + 1], ns = 0;
		uint32_t edge[BRUTE_FLOWS * BRUTE_HOPS];
		double share[BRUTE_FLOWS * BRUTE_HOPS], prob = 1;
		long k = c;
		struct mm_problem p;

		off[0] = 0;
		for (i = 0; i < b->nf; i++) {
			const struct path *pa = &b->fl[i].p[k % b->fl[i].np];

			k /= b->fl[i].np;
			prob *= per_path ? 1.0 / b->fl[i].np : pa->prob;
			for (int j = 0; j < pa->n; j++) {
				edge[ns] = pa->e[j];
				share[ns++] = 1;
			}
			off[i + 1] = ns;
		}
		p = (struct mm_problem){ f->nedges, f->cap, (size_t)b->nf, off, edge, share };
		if (mm_solve(&p, rate))
			abort();
		for (i = 0; i < b->nf; i++) {
			rate_sum[i] += prob * rate[i];
			*agg += prob * rate[i];
		}
	}
}

/* spraying from the enumerated paths: a flow's share of a cable is the probability (hop by hop) of
 * its paths through it; the aggregate of the max-min rates */
static double spray_of_paths(const struct brute *b)
{
	const struct fab *f = b->f;
	size_t off[BRUTE_FLOWS + 1], ns = 0, cap = 1;
	uint32_t *edge = NULL;
	double *share = NULL, rate[BRUTE_FLOWS], agg = 0;
	struct mm_problem p;
	int i;

	for (i = 0; i < b->nf; i++)
		cap += (size_t)b->fl[i].np * BRUTE_HOPS;
	if (!(edge = malloc(cap * sizeof(*edge))) || !(share = malloc(cap * sizeof(*share))))
		abort();
	off[0] = 0;
	for (i = 0; i < b->nf; i++) {
		size_t first = ns;

		for (int j = 0; j < b->fl[i].np; j++)
			for (int h = 0; h < b->fl[i].p[j].n; h++) {
				size_t s;

				for (s = first; s < ns && edge[s] != b->fl[i].p[j].e[h]; s++)
					;
				if (s == ns) {
					edge[ns] = b->fl[i].p[j].e[h];
					share[ns++] = 0;
				}
				share[s] += b->fl[i].p[j].prob;
			}
		off[i + 1] = ns;
	}
	p = (struct mm_problem){ f->nedges, f->cap, (size_t)b->nf, off, edge, share };
	if (mm_solve(&p, rate))
		abort();
	for (i = 0; i < b->nf; i++)
		agg += rate[i];
	free(edge);
	free(share);
	return agg;
}

/* the model's spraying as fabscope model and the report solve it (fab_solve: a destination leaf's last
 * hops one constraint where every flow arrives evenly), each flow's rate in rate[]: the aggregate */
static double spray_of_model(struct fab *f, const struct brute *b, double *rate)
{
	size_t src[BRUTE_FLOWS], dst[BRUTE_FLOWS];
	uint64_t rng = 1;
	double agg = 0;
	int i;

	for (i = 0; i < b->nf; i++) {
		src[i] = b->fl[i].src;
		dst[i] = b->fl[i].dst;
	}
	if (fab_solve(f, src, dst, (size_t)b->nf, FAB_SPRAY, &rng, rate))
		abort();
	for (i = 0; i < b->nf; i++)
		agg += rate[i];
	return agg;
}

/* fab_add_flow's ECMP drawn SAMPLES times: the aggregate and each flow's mean */
static double model_of(struct fab *f, const struct brute *b, enum fab_route how, int samples, uint64_t *rng,
		       double *mean)
{
	double rate[BRUTE_FLOWS], agg = 0;
	int i, s;

	memset(mean, 0, BRUTE_FLOWS * sizeof(*mean));
	for (s = 0; s < samples; s++) {
		struct fab_shares sh = { 0 };
		struct mm_problem p;

		for (i = 0; i < b->nf; i++)
			if (fab_add_flow(f, &sh, b->fl[i].src, b->fl[i].dst, how, rng))
				abort();
		p = (struct mm_problem){ f->nedges, f->cap, sh.nflows, sh.off, sh.edge, sh.share };
		if (mm_solve(&p, rate))
			abort();
		for (i = 0; i < b->nf; i++) {
			mean[i] += rate[i] / samples;
			agg += rate[i] / samples;
		}
		fab_shares_release(&sh);
	}
	return agg;
}

static int ecmp_brute(int argc, const char **argv)
{
	struct topo t;
	struct fab f;
	struct brute b = { .nf = argc - 5 };
	int i, samples = atoi(argv[3]);
	uint64_t rng = strtoull(argv[4], NULL, 10);
	double hop[BRUTE_FLOWS], path[BRUTE_FLOWS], sampled[BRUTE_FLOWS], sprayed[BRUTE_FLOWS];
	double hop_agg, path_agg, sampled_agg, spray_model, spray_paths;
	long combos = 1;

	topo_init(&t);
	if (b.nf < 1 || b.nf > BRUTE_FLOWS || samples < 1 || topo_read(&t, argv[2], NULL) || fab_build(&f, &t, 100))
		return 2;
	b.f = &f;
	if (!(b.dist = malloc((f.nsw ? f.nsw : 1) * sizeof(*b.dist))))
		return 3;
	for (i = 0; i < b.nf; i++) {
		if (brute_flow(&b, i, argv[5 + i]))
			return 2;
		combos *= b.fl[i].np;
		if (combos > 1000000)
			return 2;
	}
	enumerate(&b, 0, combos, hop, &hop_agg);
	enumerate(&b, 1, combos, path, &path_agg);
	spray_paths = spray_of_paths(&b);
	sampled_agg = model_of(&f, &b, FAB_ECMP, samples, &rng, sampled);
	spray_model = spray_of_model(&f, &b, sprayed);
	printf("combinations %ld\n", combos);
	printf("spray paths %.6f model %.6f\n", spray_paths, spray_model);
	printf("ecmp per-hop %.6f per-path %.6f sampled %.6f\n", hop_agg, path_agg, sampled_agg);
	for (i = 0; i < b.nf; i++) {
		printf("flow %d paths %d per-hop %.6f per-path %.6f sampled %.6f\n", i, b.fl[i].np, hop[i], path[i],
		       sampled[i]);
		free(b.fl[i].p);
	}
	free(b.dist);
	fab_release(&f);
	topo_release(&t);
	return 0;
}

int tool_model(int argc, const char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "maxmin"))
		return maxmin_stdin();
	if (argc == 4 && !strcmp(argv[1], "random"))
		return random_check(atoi(argv[2]), strtoull(argv[3], NULL, 10));
	if (argc >= 6 && !strcmp(argv[1], "ecmp-brute"))
		return ecmp_brute(argc, argv);
	fprintf(stderr, "usage: test-tool model maxmin <spec | random N SEED | ecmp-brute TOPO SAMPLES SEED SRC:RAIL:DST...\n");
	return 2;
}
