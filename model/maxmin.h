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
 * Cost: O(E + S log E) for S flow-edge shares and E edges, with a heap of
 * the edges' fill levels (an edge's level only rises as flows freeze), so a
 * million flows of a 16,384-node fabric solve in seconds.
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

/* Jain's fairness index of n rates: (sum x)^2 / (n sum x^2), 1 when equal. */
double mm_jain(const double *x, size_t n);

#endif
