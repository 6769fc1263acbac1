/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A round of flows on a fabric, solved one way for every caller: `fabscope
 * model` (fleet/model-cmd.c) and the report's expectation of a group's
 * pairs (report/modes.c) give the same pairs the same rates.
 *
 * A round is its flows at once (port src[i] to port dst[i], fabric.h),
 * solved under spraying, then under `draws` draws of per-flow ECMP.  The
 * flows are routed in one order, by the class of their destination leaf,
 * then the leaf, then their index (so that every class's next hops are made
 * at most once, fabric.h), and draw k of round r under seed s draws from
 * fab_draw_seed(s, r, k); the rates come back in the flows' own order.
 * When no number of draws is asked, fab_draws: many for a few flows, fewer
 * for many (the mean of a round of thousands of flows varies little from
 * draw to draw).
 */
#ifndef FS_MODEL_SOLVE_H
#define FS_MODEL_SOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "fabric.h"

#define FAB_DRAWS_WORK 200000	/* flows times draws a round, when not asked */
#define FAB_DRAWS_MAX 200
#define FAB_DRAWS_MIN 5

/* the draws of a round of n flows when none are asked */
int fab_draws(size_t nflows);

/* the state draw k of round r starts from, under seed s */
uint64_t fab_draw_seed(uint64_t seed, size_t round, int draw);

/*
 * The max-min fair rates of the n flows routed how (ECMP: drawing from
 * *rng), into rate[i]: 0, or -FS_EXIT_USAGE (two leaves no path joins) or
 * -FS_EXIT_ENV (out of memory), said.
 */
int fab_solve(struct fab *f, const size_t *src, const size_t *dst, size_t n, enum fab_route how, uint64_t *rng,
	      double *rate);

/* each solve of a round: draw 0 is spraying, 1..draws the ECMP draws; 0,
 * or -FS_EXIT_* (said) to stop */
typedef int (*fab_round_fn)(void *ctx, int draw, const double *rate);

/*
 * Round `round` of the n flows: spraying, then `draws` ECMP draws under
 * seed, each solve's rates to each(ctx, draw, rates).  0, or what fab_solve
 * or each returned.
 */
int fab_round(struct fab *f, const size_t *src, const size_t *dst, size_t n, size_t round, int draws,
	      uint64_t seed, fab_round_fn each, void *ctx);

#endif
