/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hash polarization: what K concurrent flows, each with its own entropy
 * value (TCP source port; RoCE UDP source port), say about how ECMP spread
 * them over P equal paths: from their rates, and from their traced paths.
 * A verdict ("polarized", "not polarized") only where that evidence can
 * support it, saying which evidence it stands on; else "inconclusive", why,
 * and what to give.
 *
 * Uniform hashing.  K flows hashed uniformly onto P paths occupy U of them
 * (balls into bins): E[U] = P (1 - (1 - 1/P)^K), and P(U <= u) comes from
 * the occupancy recursion (ball by ball: a new path with probability
 * (P - u)/P).  "Polarized" is the hypothesis test of uniform hashing at
 * level POLAR_ALPHA (0.01): the paths the flows used are so few that
 * uniform hashing gives so few with probability under 1%.  On a fabric that
 * hashes uniformly, that is the rate of false "polarized" verdicts (at most
 * 1%; the test is exact, U being whole).  Otherwise the collisions are the
 * random ones, and the remedy is more entropy (more flows or QPs), not
 * other hash functions.
 *
 * Traces (the stronger evidence).  Each flow's 5-tuple traced hop by hop
 * (trace.h) names the routers its path crosses, and the paths used are the
 * distinct router sequences: a count, not an inference, and the same count
 * every time the same 5-tuples cross the same fabric (the hash is a
 * function of them): the verdict is the test above on that count.  It
 * needs every flow traced to its destination with every hop answering.
 * Routers answer from an address of their own, often the interface the
 * answer leaves by, so one router may be seen under several addresses;
 * with the design's addresses (topology/intent.h, addr=) every hop is named
 * by its switch, every link between two hops checked against the design's
 * cables, and the count is exact, judged against the design's number of
 * equal-cost paths.  Without them a path is its sequence of addresses, the
 * count an upper bound on the paths used (an alias only splits a path in
 * two), and it can show "polarized" (at most u paths, and even u is
 * improbable) but never "not polarized".
 *
 * Rates (when there are no traces to judge by).  A flow that shares its
 * bottleneck with k-1 others gets C/k, so its k is round(C / rate), and
 * the paths in use are U = sum of 1/k over the flows.  That is only so
 * where the paths are the flows' bottleneck, which needs the rate of one
 * path C (--link-rate) and the host's link H (--host-rate, the slower end;
 * or both from the design): by design when H >= P C (the host's link
 * carries every path full), or by measurement when the flows together ran
 * under POLAR_HOST_FREE of H and filled the paths they used (together at
 * least POLAR_FULL of round(U) paths).  Where the host's link was the
 * bottleneck (a 1:1 fabric: H = C) every flow gets about H/K wherever it
 * went, and the rates say nothing of the paths.  Rates are noisy (TCP
 * shares a link unevenly), so a rate verdict must hold for U +- POLAR_MARGIN
 * (a quarter path): "polarized" when even round(U + margin) paths are
 * improbable, "not polarized" when even round(U - margin) are plausible,
 * else no verdict ("within the noise").  A verdict then flips only on an
 * error of the rates over half a path.  What rates cannot tell apart: a
 * bottleneck other than the paths and the host's link (a CPU, the
 * receiver, other traffic) that happens to cap the flows at whole paths
 * (say so with --trace).
 *
 * U can come out above P: then C is below a path's rate, or there are more
 * than P paths.  Up to POLAR_SLACK x P (at least half a path) above P is
 * the unevenness of TCP's shares on a full link; beyond that, no verdict.
 * Nor when the flows together ran at under POLAR_MIN_FILL of C (they did
 * not fill even one path), nor when a flow has no rate (it completed no
 * message in its window: starved, or the window too short).
 *
 * Several entropy sets (a sweep) combine as a sum of independent
 * occupancies, judged with the normal approximation.
 */
#ifndef FS_POLAR_H
#define FS_POLAR_H

#define POLAR_ALPHA 0.01
#define POLAR_SLACK 0.25
#define POLAR_MIN_FILL 0.5
#define POLAR_HOST_FREE 0.8
#define POLAR_FULL 0.85
#define POLAR_MARGIN 0.25

enum polar_verdict {
	POLAR_UNKNOWN = 0,	/* no number of paths: only the count */
	POLAR_INCONCLUSIVE,
	POLAR_NOT,
	POLAR_POLARIZED,
};

/* What a verdict stands on */
enum polar_evidence { POLAR_EV_NONE = 0, POLAR_EV_RATES, POLAR_EV_TRACES };

/* Why the rates give no verdict (polar_result.cause) */
enum polar_cause {
	POLAR_CAUSE_NONE = 0,
	POLAR_CAUSE_NO_LINK_RATE,	/* no C: the fastest flow's rate stood for it */
	POLAR_CAUSE_LINK_RATE_LOW,	/* flows ran faster than C */
	POLAR_CAUSE_PATHS,		/* C fits the flows: more paths than P */
	POLAR_CAUSE_LINK_RATE_HIGH,	/* all flows together under half of C */
	POLAR_CAUSE_NO_HOST_RATE,	/* no H: nothing shows the paths were the bottleneck */
	POLAR_CAUSE_HOST_LINK,		/* H < P C and the flows filled the host's link */
	POLAR_CAUSE_NOT_FULL,		/* the paths used were not full: another bottleneck */
	POLAR_CAUSE_NOISE,		/* U within POLAR_MARGIN of the verdict's boundary */
	POLAR_CAUSE_STARVED,		/* a flow completed nothing in its window: its rate is unknown */
};

struct polar_flow {
	int entropy;		/* source port (or flow label) */
	double gbps;
	int k;			/* flows on its bottleneck, inferred */
};

/* The rates' evidence, and (polar_decide) the verdict on all of it */
struct polar_result {
	int flows, paths;	/* K, P (0: unknown) */
	double capacity;	/* C used, Gb/s */
	double host_rate;	/* H, Gb/s (0: unknown) */
	double total, min, median, max, jain;
	double used;		/* U: paths in use, sum of 1/k */
	double expected, sd;	/* E[U] and its standard deviation under uniform hashing */
	double p_value;		/* P(U <= round(used)) under uniform hashing; 1 when P is unknown */
	int starved;		/* flows without a rate (none of their messages completed) */
	int capacity_given;	/* capacity came from the caller, not the fastest flow */
	int by_design;		/* H >= P C: the paths are the bottleneck by design */
	enum polar_verdict rates;	/* the rates' own verdict (POLAR_INCONCLUSIVE: cause says why) */
	enum polar_cause cause;
	int by_k[65];		/* flows that shared their bottleneck with k-1 others (k <= 64) */
	int flows_for_all;	/* flows that would cover all P paths with probability 0.95 */
	/* polar_decide: the verdict on rates and traces */
	enum polar_verdict verdict;
	enum polar_evidence evidence;
};

/* The traces' evidence */
struct polar_traces {
	int given;		/* the flows were traced */
	int flows;		/* flows traced */
	int complete;		/* of them, to the destination with every hop answering */
	int paths;		/* distinct paths of the complete traces */
	int exact;		/* hops named by the design, links its cables: paths is the count
				 * (else an upper bound: hops by address) */
	int possible;		/* the equal-cost paths the count is judged against */
	int contradicts;	/* a hop or link the design does not have: no verdict */
	double expected, sd, p_value;
	enum polar_verdict verdict;	/* POLAR_INCONCLUSIVE: why says why */
	char how[160];		/* how the hops were named ("by the design's addresses, ...") */
	char why[400];		/* no verdict: why, and what to give */
};

/* P(U <= u) for K flows hashed uniformly onto P paths. */
double polar_occupancy_cdf(int K, int P, int u);
void polar_occupancy_moments(int K, int P, double *mean, double *sd);
/* Fill k of every flow and the rates' evidence; paths 0 if unknown,
 * capacity 0 to take the fastest flow's rate, host_rate 0 if unknown. */
void polar_analyze(struct polar_flow *f, int n, int paths, double capacity, double host_rate,
		   struct polar_result *r);
/* The traces' verdict from t's counts (given, flows, complete, paths,
 * exact, possible, contradicts; why when it is set already): p_value and
 * verdict for K flows. */
void polar_judge_traces(struct polar_traces *t, int K);
/* The verdict on both: the traces' when they give one, else the rates'. */
void polar_decide(struct polar_result *r, const struct polar_traces *t);

/* Several entropy sets at once: the sum of their observed paths obs[i]
 * against the sum of independent occupancies of K[i] flows on P[i] paths
 * (normal approximation). */
double polar_sweep_p_value(const int *obs, const int *K, const int *P, int n);
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
/* "polarized", "not polarized", "inconclusive", "unknown" */
const char *polar_word(enum polar_verdict v);
/* "rates", "traces" or NULL */
const char *polar_evidence_name(enum polar_evidence e);
/* The rates' cause for JSON ("" for none): likely_cause */
const char *polar_cause_name(enum polar_cause c);
/* Its family for JSON ("" for none): verdict_reason, one of
 * more_paths_than_exist, flows_below_one_path, paths_not_shown_bottleneck,
 * within_noise, flows_without_rate */
const char *polar_reason_name(enum polar_cause c);

/* The rates' line: "U of P paths ...", or why they give no verdict and
 * what to pass. */
void polar_rates_text(const struct polar_result *r, char *buf, int len);
/* The verdict's line for a person: "polarized: ...", "not polarized:
 * ...", or "no verdict: ..." with why and what to pass; what it stands on
 * and what the other evidence said.  t may be NULL (no traces). */
void polar_verdict(const struct polar_result *r, const struct polar_traces *t, char *buf, int len);

#endif
