/* SPDX-License-Identifier: BSD-2-Clause */
/* A round of flows on a fabric, solved one way (solve.h). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "maxmin.h"
#include "solve.h"

int fab_draws(size_t nflows)
{
	size_t d = nflows ? FAB_DRAWS_WORK / nflows : FAB_DRAWS_MAX;

	return d > FAB_DRAWS_MAX ? FAB_DRAWS_MAX : d < FAB_DRAWS_MIN ? FAB_DRAWS_MIN : (int)d;
}

uint64_t fab_draw_seed(uint64_t seed, size_t round, int draw)
{
	return seed * 0x9e3779b97f4a7c15ull + round * 1000003ull + (uint64_t)draw;
}

/* the routing order: flow indices by destination class, then leaf, then index; two stable counting
 * sorts (the leaves by class, the flows by their leaf's place), O(flows + switches) */
static size_t *route_order(const struct fab *f, const size_t *dst, size_t n)
{
	size_t *order = malloc((n ? n : 1) * sizeof(*order)), *at = calloc(f->nsw + f->ncls + 2, sizeof(*at));
	size_t *cnt = calloc(f->nsw + 1, sizeof(*cnt)), i, u, c, k;

	if (!order || !at || !cnt) {
		free(order);
		free(at);
		free(cnt);
		return NULL;
	}
	for (u = 0; u < f->nsw; u++)	/* the leaves' places: by class, then index */
		if (f->cls[u] >= 0)
			at[f->cls[u] + 1]++;
	for (c = 0; c < f->ncls; c++)
		at[c + 1] += at[c];
	for (u = 0; u < f->nsw; u++)
		if (f->cls[u] >= 0)
			at[f->ncls + 1 + u] = at[f->cls[u]]++;	/* (at[ncls + 1 + u]: leaf u's place) */
	for (i = 0; i < n; i++)	/* the flows by their leaf's place, index order kept */
		cnt[at[f->ncls + 1 + f->ports[dst[i]].leaf] + 1]++;
	for (k = 0; k < f->nsw; k++)
		cnt[k + 1] += cnt[k];
	for (i = 0; i < n; i++)
		order[cnt[at[f->ncls + 1 + f->ports[dst[i]].leaf]]++] = i;
	free(at);
	free(cnt);
	return order;
}

/* the scratch of a round's solves, reused: its flows in routing order, made once */
struct scratch {
	struct fab_shares s;
	struct fab_flow *fl;
	size_t *order;
	double *tmp;
	struct mm_ws *ws;
};

/* one solve of the round's flows */
static int solve_ordered(struct fab *f, size_t n, enum fab_route how, uint64_t *rng, double *rate,
			 struct scratch *sc)
{
	struct fab_shares *s = &sc->s;
	struct mm_problem p;
	size_t i;
	int rc = 0;

	s->nflows = s->nshares = 0;
	if (how == FAB_SPRAY && (rc = fab_spray_prepare(f, sc->fl, n)))
		return rc;
	for (i = 0; i < n && !rc; i++)
		rc = fab_add(f, s, &sc->fl[i], how, rng);
	fab_spray_end(f);
	if (rc)
		return rc;
	p = (struct mm_problem){ f->nedges, f->cap, s->nflows, s->off, s->edge, s->share };
	if (!s->nflows)
		p.off = (size_t[]){ 0 };
	if (mm_solve_ws(&p, sc->tmp, sc->ws))
		return fs_err_env("out of memory for the model's solution");
	for (i = 0; i < n; i++)
		rate[sc->order[i]] = sc->tmp[i];
	return 0;
}

/* 0, or -FS_EXIT_ENV said */
static int scratch_init(struct scratch *sc, const struct fab *f, const size_t *src, const size_t *dst, size_t n)
{
	size_t i;

	memset(sc, 0, sizeof(*sc));
	sc->tmp = malloc((n ? n : 1) * sizeof(*sc->tmp));
	sc->fl = malloc((n ? n : 1) * sizeof(*sc->fl));
	sc->ws = mm_ws_new(f->nedges);
	if (!sc->tmp || !sc->fl || !sc->ws || !(sc->order = route_order(f, dst, n)))
		return fs_err_env("out of memory for the model's flows");
	for (i = 0; i < n; i++)
		fab_flow_of(f, src[sc->order[i]], dst[sc->order[i]], &sc->fl[i]);
	return 0;
}

static void scratch_release(struct scratch *sc)
{
	fab_shares_release(&sc->s);
	free(sc->fl);
	free(sc->order);
	free(sc->tmp);
	mm_ws_free(sc->ws);
}

int fab_solve(struct fab *f, const size_t *src, const size_t *dst, size_t n, enum fab_route how, uint64_t *rng,
	      double *rate)
{
	struct scratch sc;
	int rc = scratch_init(&sc, f, src, dst, n);

	if (!rc)
		rc = solve_ordered(f, n, how, rng, rate, &sc);
	scratch_release(&sc);
	return rc;
}

int fab_round(struct fab *f, const size_t *src, const size_t *dst, size_t n, size_t round, int draws,
	      uint64_t seed, fab_round_fn each, void *ctx)
{
	struct scratch sc;
	double *rate = malloc((n ? n : 1) * sizeof(*rate));
	int rc = scratch_init(&sc, f, src, dst, n), k;

	if (!rc && !rate)
		rc = fs_err_env("out of memory for the model's flows");
	for (k = 0; k <= draws && !rc; k++) {
		uint64_t rng = fab_draw_seed(seed, round, k);

		rc = solve_ordered(f, n, k ? FAB_ECMP : FAB_SPRAY, &rng, rate, &sc);
		if (!rc)
			rc = each(ctx, k, rate);
	}
	scratch_release(&sc);
	free(rate);
	return rc;
}
