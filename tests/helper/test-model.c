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
 *                             every combination of the flows' shortest paths enumerated with
 *                             its probability under a uniform per-hop hash: the exact expected
 *                             aggregate and each flow's expected rate; and the same from
 *                             fab_add_flow's SAMPLES draws; prints "exact A sampled B" and a
 *                             line "flow I exact X sampled Y" each
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../model/fabric.h"
#include "../../model/maxmin.h"
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

/* ---- ECMP by enumeration */

struct path {
	uint32_t e[16];
	int n;
	double prob;
};

struct fpaths {
	size_t src, dst;
	struct path *p;
	int np;
};

static int *g_dist;

static void bfs(const struct fab *f, int d)
{
	int *q = malloc(f->nsw * sizeof(*q)), head = 0, tail = 0;
	size_t i;

	for (i = 0; i < f->nsw; i++)
		g_dist[i] = -1;
	g_dist[d] = 0;
	q[tail++] = d;
	while (head < tail) {
		int u = q[head++];

		for (i = f->adj_off[u]; i < f->adj_off[u + 1]; i++)
			if (g_dist[f->adj[i].v] < 0) {
				g_dist[f->adj[i].v] = g_dist[u] + 1;
				q[tail++] = (int)f->adj[i].v;
			}
	}
	free(q);
}

static void dfs(const struct fab *f, int u, int to, struct path *cur, struct fpaths *out)
{
	size_t i;
	int k = 0;

	if (u == to) {
		struct path *np = realloc(out->p, (size_t)(out->np + 1) * sizeof(*out->p));

		if (!np)
			abort();	/* a test helper: out of memory ends it */
		out->p = np;
		out->p[out->np++] = *cur;
		return;
	}
	for (i = f->adj_off[u]; i < f->adj_off[u + 1]; i++)
		k += g_dist[f->adj[i].v] == g_dist[u] - 1;
	for (i = f->adj_off[u]; i < f->adj_off[u + 1]; i++) {
		struct path next = *cur;

		if (g_dist[f->adj[i].v] != g_dist[u] - 1)
			continue;
		next.e[next.n++] = f->adj[i].e;
		next.prob /= k;
		dfs(f, (int)f->adj[i].v, to, &next, out);
	}
}

static int ecmp_brute(int argc, const char **argv)
{
	struct topo t;
	struct fab f;
	struct fpaths fl[16];
	int nf = argc - 5, i, samples = atoi(argv[3]);
	uint64_t seed = strtoull(argv[4], NULL, 10), rng = seed;
	double exact_sum = 0, exact[16] = { 0 }, sampled[16] = { 0 }, sampled_sum = 0, rate[16];
	long combos = 1, c;

	topo_init(&t);
	if (nf < 1 || nf > 16 || topo_read(&t, argv[2], NULL) || fab_build(&f, &t, 100))
		return 2;
	g_dist = malloc(f.nsw * sizeof(*g_dist));
	for (i = 0; i < nf; i++) {
		char src[128], dst[128];
		int rail;
		size_t h, hs = (size_t)-1, hd = (size_t)-1;
		struct path cur = { .n = 0, .prob = 1 };

		if (sscanf(argv[5 + i], "%127[^:]:%d:%127s", src, &rail, dst) != 3)
			return 2;
		for (h = 0; h < f.nhosts; h++) {
			if (!strcmp(f.hosts[h], src))
				hs = h;
			if (!strcmp(f.hosts[h], dst))
				hd = h;
		}
		if (hs == (size_t)-1 || hd == (size_t)-1)
			return 2;
		fl[i].src = (size_t)fab_port_of(&f, hs, rail, 0);
		fl[i].dst = (size_t)fab_port_of(&f, hd, rail, 0);
		fl[i].p = NULL;
		fl[i].np = 0;
		cur.e[cur.n++] = 2 * f.ports[fl[i].src].link;
		bfs(&f, f.ports[fl[i].dst].leaf);
		dfs(&f, f.ports[fl[i].src].leaf, f.ports[fl[i].dst].leaf, &cur, &fl[i]);
		for (int j = 0; j < fl[i].np; j++)
			fl[i].p[j].e[fl[i].p[j].n++] = 2 * f.ports[fl[i].dst].link + 1;
		combos *= fl[i].np;
	}
	if (combos > 1000000)
		return 2;
	for (c = 0; c < combos; c++) {
		size_t off[17], ns = 0;
		uint32_t edge[256];
		double share[256], prob = 1;
		long k = c;
		struct mm_problem p;

		off[0] = 0;
		for (i = 0; i < nf; i++) {
			const struct path *pa = &fl[i].p[k % fl[i].np];

			k /= fl[i].np;
			prob *= pa->prob;
			for (int j = 0; j < pa->n; j++) {
				edge[ns] = pa->e[j];
				share[ns++] = 1;
			}
			off[i + 1] = ns;
		}
		p = (struct mm_problem){ f.nedges, f.cap, (size_t)nf, off, edge, share };
		mm_solve(&p, rate);
		for (i = 0; i < nf; i++) {
			exact[i] += prob * rate[i];
			exact_sum += prob * rate[i];
		}
	}
	for (int s = 0; s < samples; s++) {
		struct fab_shares sh = { 0 };
		struct mm_problem p;

		for (i = 0; i < nf; i++)
			fab_add_flow(&f, &sh, fl[i].src, fl[i].dst, FAB_ECMP, &rng);
		p = (struct mm_problem){ f.nedges, f.cap, sh.nflows, sh.off, sh.edge, sh.share };
		mm_solve(&p, rate);
		for (i = 0; i < nf; i++) {
			sampled[i] += rate[i] / samples;
			sampled_sum += rate[i] / samples;
		}
		fab_shares_release(&sh);
	}
	printf("combinations %ld exact %.6f sampled %.6f\n", combos, exact_sum, sampled_sum);
	for (i = 0; i < nf; i++) {
		printf("flow %d exact %.6f sampled %.6f\n", i, exact[i], sampled[i]);
		free(fl[i].p);
	}
	free(g_dist);
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
