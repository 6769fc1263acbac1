/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Max-min fair rates of flows over links of known capacity (progressive
 * filling, "water-filling").
 *
 * Every flow has a fixed share of itself on each edge it uses (1 for a
 * single path; 1/k on each of k equal branches of a split flow).  All flows
 * not yet frozen grow at one rate; an edge fills when its frozen load plus
 * its active shares times that rate reach its capacity, and freezes every
 * flow crossing it.  The result is the max-min fair allocation for those
 * fixed splits (Bertsekas and Gallager, Data Networks, 6.5.2).
 *
 * Cost: O(S + (E + R) log E) for S flow-edge shares and the E edges they
 * use, with a heap of one entry an edge: an edge's fill level only rises as
 * flows freeze, so an entry is a lower bound, and one found stale when it
 * comes up is pushed again (R times: at most once a flow frozen, far fewer
 * in practice).  Memory O(S + E + F).  mm_solve also sets up scratch for
 * all of the problem's edges, once a call; mm_solve_ws keeps it.  Flows
 * that share no edge, even through others (the rails of a leaf-spine), are
 * parts whose rates do not depend on each other: each is filled on its own
 * (a union-find over the shares finds them), so that the working set is a
 * part's, not the whole problem's.
 */
#ifndef FS_MODEL_MAXMIN_H
#define FS_MODEL_MAXMIN_H

#include <stddef.h>
#include <stdint.h>

struct mm_problem {
	size_t nedges;
	const double *cap;	/* per edge, > 0 (Gb/s, or any one unit) */
	size_t nflows;
	const size_t *off;	/* flow f's shares are [off[f], off[f + 1]) */
	const uint32_t *edge;	/* the edge of each share */
	const double *share;	/* its fraction of the flow, 0 < share <= 1 */
};

/*
 * rate[f] for every flow: 0, or -1 when out of memory.  A flow crossing no
 * edge gets INFINITY.  An edge listed twice for one flow counts twice.
 */
int mm_solve(const struct mm_problem *p, double *rate);

/*
 * The same with scratch kept between solves: a workspace for problems of
 * nedges edges (the same edges, e.g. one fabric's), made once; a solve then
 * costs the edges its flows use, not all of them.  mm_ws_new: NULL when out
 * of memory; mm_ws_free(NULL) is fine.
 */
struct mm_ws;
struct mm_ws *mm_ws_new(size_t nedges);
void mm_ws_free(struct mm_ws *w);
int mm_solve_ws(const struct mm_problem *p, double *rate, struct mm_ws *w);

/* Jain's fairness index of n rates: (sum x)^2 / (n sum x^2), 1 when equal. */
double mm_jain(const double *x, size_t n);

#endif
