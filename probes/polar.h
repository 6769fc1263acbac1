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
 *
 * U can come out above P, more paths in use than exist: then C is not the
 * rate of one path (no flow ran alone, --link-rate below a path's rate), or
 * the paths were not the bottleneck (the hosts' links or CPUs were: every
 * flow got much the same rate), or there are more than P paths.  Up to
 * POLAR_SLACK x P (at least half a path) above P is the unevenness of TCP's
 * shares on a full link (one link's flows add up to 0.7..1.4 links); beyond
 * that no verdict is given, only the likely cause.  Nor is one given when
 * the flows together ran at under half of a given C (POLAR_MIN_FILL): they
 * did not fill even one path, so their rates say nothing of how they were
 * spread (every k would be clamped to K, the "paths used" down to 1).
 */
#ifndef FS_POLAR_H
#define FS_POLAR_H

#define POLAR_ALPHA 0.01
#define POLAR_SLACK 0.25
#define POLAR_MIN_FILL 0.5

/* Why no verdict was given (polar_result.cause) */
enum polar_cause {
	POLAR_CAUSE_NONE = 0,
	POLAR_CAUSE_NO_LINK_RATE,	/* C was the fastest flow's rate: the flows did not fill the paths */
	POLAR_CAUSE_LINK_RATE_LOW,	/* flows ran faster than --link-rate */
	POLAR_CAUSE_PATHS,		/* --link-rate fits the flows: more paths than --paths */
	POLAR_CAUSE_LINK_RATE_HIGH,	/* all flows together under half of --link-rate */
};

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
	int inconclusive;	/* used > paths plus the slack, or total under half of C: no verdict (cause says why) */
	enum polar_cause cause;
	int capacity_given;	/* capacity came from the caller (--link-rate), not the fastest flow */
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

/* The most paths U may read for P paths before the inference is impossible. */
double polar_max_used(int paths);
/* Sets inconclusive and cause of r from used, paths, capacity and max;
 * polar_analyze calls it, a sweep's sum after changing used. */
void polar_check_possible(struct polar_result *r);
/* "polarized", "not polarized", "inconclusive" (more paths than exist) or
 * "unknown" (no number of paths); and the cause's name for JSON ("" for none). */
const char *polar_verdict_word(const struct polar_result *r);
const char *polar_cause_name(enum polar_cause c);
/* "more_paths_than_exist" or "flows_below_one_path" for an inconclusive r, else "" */
const char *polar_reason_name(const struct polar_result *r);

/* One line for a human: "polarized: ...", "not polarized: ...", or why
 * there is no verdict and what to pass. */
void polar_verdict(const struct polar_result *r, char *buf, int len);

#endif
