/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hash polarization: what the rates of K concurrent flows, each with its
 * own entropy value (TCP source port; RoCE UDP source port), say about how
 * ECMP spread them over P equal paths of capacity C.
 *
 * A flow that shares its bottleneck with k-1 others gets C/k, so its k is
 * round(C / rate) (at least 1), and the paths in use are U = sum of 1/k
 * over the flows (a path with k flows adds k times 1/k).  Under uniform
 * random hashing (balls into bins) the number of occupied paths has a known
 * distribution: E[U] = P (1 - (1 - 1/P)^K), and P(U <= u) comes from the
 * occupancy recursion (ball by ball: a new path with probability
 * (P - u)/P).  The verdict is "polarized" when the observed U is so low
 * that uniform hashing would give it with probability under alpha (0.01):
 * far fewer path classes than random collisions explain.  Otherwise the
 * collisions are what random hashing gives, and the remedy is more entropy
 * (more flows or QPs), not different hash functions.
 *
 * C is the link rate when given, else the fastest flow's rate (which
 * underestimates C when no flow ran alone, and so errs towards "not
 * polarized").  Several entropy sets (a sweep) combine as a sum of
 * independent occupancies, judged with the normal approximation.
 */
#ifndef FS_POLAR_H
#define FS_POLAR_H

#define POLAR_ALPHA 0.01

struct polar_flow {
	int entropy;		/* source port (or flow label) */
	double gbps;
	int k;			/* flows on its bottleneck, inferred */
};

struct polar_result {
	int flows, paths;	/* K, P (0: unknown) */
	double capacity;	/* C used, Gb/s */
	double total, min, median, max, jain;
	double used;		/* U: paths in use, sum of 1/k */
	double expected, sd;	/* E[U] and its standard deviation under uniform hashing */
	double p_value;		/* P(U <= observed) under uniform hashing; 1 when P is unknown */
	int polarized;		/* p_value < POLAR_ALPHA */
	int by_k[65];		/* flows that shared their bottleneck with k-1 others (k <= 64) */
	int flows_for_all;	/* flows that would cover all P paths with probability 0.95 */
};

/* P(U <= u) for K flows hashed uniformly onto P paths. */
double polar_occupancy_cdf(int K, int P, int u);
void polar_occupancy_moments(int K, int P, double *mean, double *sd);
/* Fill k of every flow and the result; paths 0 if unknown, capacity 0 to
 * take the fastest flow's rate. */
void polar_analyze(struct polar_flow *f, int n, int paths, double capacity, struct polar_result *r);
/* Several entropy sets at once: the sum of their U against the sum of
 * independent occupancies (normal approximation); r[i] analyzed already. */
double polar_sweep_p_value(const struct polar_result *r, int n);
/*
 * Collision groups: flows sorted by rate, slowest first, taken in turn
 * into a group until the group's rates add up to a link (the next flow
 * would take the sum further from C): flows that share a bottleneck fill
 * it together.  Membership is a guess when
 * two links carry the same number of flows; the number of groups and
 * their sizes are not.  Writes group numbers into grp[] (in f's order);
 * returns the count.
 */
int polar_groups(const struct polar_flow *f, int n, double capacity, int *grp);

/* One line for a human: "polarized: ..." or "consistent with ..." */
void polar_verdict(const struct polar_result *r, char *buf, int len);

#endif
