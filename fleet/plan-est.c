/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a plan costs in time: the model of plan.h (struct plan_cost), for
 * --dry-run, the live ETA, run.json's estimate_s and the re-tests' budget.
 * Every figure is the engines' own arithmetic on the phase's options (their
 * defaults as the engines take them); the constants a host adds are in
 * plan.h and measured by bench/estimate-bench.sh.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/units.h"
#include "../topology/intent.h"
#include "plan-int.h"

/* bw's and lat's sweep (-a): 2 B to 8 MiB, doubling (bench/ptp.h) */
#define EST_SWEEP_MIN 2
#define EST_SWEEP_MAX (8u << 20)
/* bw keeps at most this much in flight a flow (bench/bw.c) */
#define EST_MAX_INFLIGHT (8u << 20)
/* a probe's child process (fork) and its bw's connection, a set */
#define EST_CHILD_S 0.1
/* a round's end beyond its jobs: its records synced to disk (fdatasync of
 * results.jsonl and jobs.done, 0.06 to 0.11 ms each on this machine's
 * disk, now and then a journal commit of a few ms) and the coordinator's
 * bookkeeping of the round */
#define EST_ROUND_S 0.0004
/* a ping round beyond that: the coordinator's round trip to every agent,
 * all sent at once, each answer read in turn.  Fitted to the netns bed's 4
 * agents, 27 ping phases in 3 runs of the estimate bench: median 0.58 ms,
 * the middle half 0.51 to 0.82 ms, 0.37 to 2.9 ms in all (a run's first
 * phase pays for the agents' first job, and a phase after a heavy one for
 * what that one left the kernel to do); 4 agents on loopback 0.19 to 0.41
 * ms, 64 on this 2-core host 2.3 to 3 ms.  The milliseconds a process not
 * scheduled at once adds are beyond any constant (docs/benchmarks.md) */
#define EST_PING_NODE_S 50e-6
/* a topology job beyond its listening: topo show (and lldpcli's query) */
#define EST_TOPO_S 0.05
/* a collective's data check: a few passes over its buffers at memory speed */
#define EST_MEM_BPS 2e9

void plan_cost_init(struct plan_cost *pc)
{
	memset(pc, 0, sizeof(*pc));
	pc->setup_s = PLAN_COST_SETUP_S;
	pc->rtt_s = PLAN_COST_RTT_S;
	pc->gbps = PLAN_COST_GBPS;
}

double plan_cost_gbps(const struct plan_cost *pc, struct plan_lane l)
{
	double g = fs_lane_ok(l.rail, l.plane) ? pc->lane_gbps[l.rail][l.plane] : 0;

	return g > 0 ? g : pc->gbps > 0 ? pc->gbps : PLAN_COST_GBPS;
}

int plan_cost_design(struct plan_cost *pc, const struct topo *t)
{
	int n = 0;
	size_t i;

	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		int rail = l->rail, plane = l->plane >= 0 ? l->plane : 0;
		double *g;

		/* a host's port: a node's end (first), a rail, a speed */
		if (l->a.sw >= 0 || !fs_lane_ok(rail, plane) || !(l->speed_gbps > 0))
			continue;
		g = &pc->lane_gbps[rail][plane];
		if (!*g)
			n++;
		if (!*g || l->speed_gbps < *g)
			*g = l->speed_gbps;
		pc->lane_from[rail][plane] = 'd';
	}
	return n;
}

static double opt_secs(const struct plan_phase *ph, const char *key, double dflt)
{
	const char *v = plan_opt(ph, key, NULL);
	double d = dflt;

	if (v && strcmp(v, "0") && units_parse_seconds(v, &d))
		d = dflt;
	return v && !strcmp(v, "0") ? 0 : d;
}

static uint64_t opt_u64(const struct plan_phase *ph, const char *key, uint64_t dflt, int size)
{
	const char *v = plan_opt(ph, key, NULL);
	uint64_t n;

	if (!v || (size ? units_parse_size(v, &n) : units_parse_count(v, &n)))
		return dflt;
	return n;
}

/* bw's and lat's warm-up (their --warmup): "Ns" seconds into *ws, a count
 * of messages into *wi, by default a tenth of the run. */
static void ptp_warmup(const struct plan_phase *ph, double d, uint64_t iters, double *ws, uint64_t *wi)
{
	const char *v = plan_opt(ph, "warmup", NULL);
	size_t n = v ? strlen(v) : 0;

	*ws = 0;
	*wi = 0;
	if (n && v[n - 1] == 's') {
		units_parse_seconds(v, ws);
		return;
	}
	if (n) {
		units_parse_count(v, wi);
		return;
	}
	if (iters)
		*wi = iters / 10 ? iters / 10 : 1;
	else
		*ws = d / 10;
}

/* bw or lat (a load: bw for the load's duration, after a settling warm-up)
 * on a lane of bps, share jobs into one link (an incast's). */
static double ptp_engine_s(const struct plan_phase *ph, const char *test, uint64_t one, double bps, int share,
			   const struct plan_cost *pc)
{
	int is_load = !strcmp(test, "load"), is_bw = is_load || !strcmp(test, "bw");
	int all = !is_load && !one && plan_bool(plan_opt(ph, "all", NULL)) == 1;
	uint64_t size = is_load ? 65536 : one ? one : opt_u64(ph, "size", is_bw ? 65536 : 2, 1);
	uint64_t iters = is_load ? 0 : opt_u64(ph, "iters", 0, 0), flows = opt_u64(ph, "flows", 1, 0);
	uint64_t depth = opt_u64(ph, "tx-depth", 128, 0), s, wi;
	double d = is_load ? ph->load_s : opt_secs(ph, "duration", 0), ws, t = 0;

	if (!iters && !(d > 0)) {
		if (is_bw)
			d = all ? 1 : 2;
		else
			iters = 10000;
	}
	if (is_load) {
		ws = PLAN_LOAD_SETTLE_S;
		wi = 0;
	} else {
		ptp_warmup(ph, d, iters, &ws, &wi);
	}
	for (s = all ? EST_SWEEP_MIN : size; s <= (all ? EST_SWEEP_MAX : size); s *= 2) {
		double bytes = (double)s * 8 / bps;

		if (is_bw) {
			double inflight = (double)(depth * s < EST_MAX_INFLIGHT ? depth * s : EST_MAX_INFLIGHT);

			if (iters)	/* the messages of every flow through the link */
				t += (double)(iters + wi) * (double)flows * share * bytes;
			else	/* then what is in flight drains */
				t += ws + (double)wi * (double)flows * share * bytes + d +
				     (double)flows * share * inflight * 8 / bps;
		} else {
			double rt = pc->rtt_s + 2 * bytes;

			t += iters ? (double)(iters + wi) * rt : ws + (double)wi * rt + d;
		}
		if (!all)
			break;
	}
	return t;
}

/* The polarization probe: its sets one after another, each its flows
 * (16 MiB-deep at most: the probe's tx-depth 16) for its duration. */
static double polar_engine_s(const struct plan_phase *ph, double bps)
{
	uint64_t sets = opt_u64(ph, "sweep", 1, 0), flows = opt_u64(ph, "flows", 16, 0);
	uint64_t size = opt_u64(ph, "size", 65536, 1), inflight = 16 * size;
	double d = opt_secs(ph, "duration", 3);

	if (inflight > EST_MAX_INFLIGHT)
		inflight = EST_MAX_INFLIGHT;
	return (double)(sets ? sets : 1) * (EST_CHILD_S + d / 10 + d + (double)flows * (double)inflight * 8 / bps);
}

/* The PFC probe: samples before, during and after its load; a sender's
 * load (after its warm-up) drains into the target with the others' */
static double pfc_engine_s(const struct plan_phase *ph, double bps, int senders)
{
	double b = opt_secs(ph, "before", 2), d = opt_secs(ph, "duration", 10), a = opt_secs(ph, "after", 2);
	uint64_t flows = opt_u64(ph, "flows", 4, 0), size = opt_u64(ph, "size", 65536, 1), inflight = 128 * size;
	double load;

	if (inflight > EST_MAX_INFLIGHT)
		inflight = EST_MAX_INFLIGHT;
	load = b + EST_CHILD_S + d / 10 + d + (double)senders * (double)flows * (double)inflight * 8 / bps;
	return load > b + d + a ? load : b + d + a;
}

double plan_job_engine_s(const struct plan_phase *ph, const char *test, uint64_t size, struct plan_lane l,
			 int nodes, const struct plan_cost *pc)
{
	double bps = plan_cost_gbps(pc, l) * 1e9;
	/* a collective's rank gets some of a pair's rate: of a rate the run
	 * measured (a pair's), or of what a pair gets of a link's */
	int measured = fs_lane_ok(l.rail, l.plane) && pc->lane_from[l.rail][l.plane] == 'm';
	double coll_eff = PLAN_COST_COLL_EFF * (measured ? 1 : PLAN_COST_LINK_EFF);
	const char *src;

	switch (ph->kind) {
	case PLAN_PING:
		return EST_PING_NODE_S * nodes;
	case PLAN_TOPOLOGY:
		src = plan_opt(ph, "source", "auto");
		return EST_TOPO_S + (strcmp(src, "lldpd") && strcmp(src, "none") ? opt_secs(ph, "lldp-listen", 35) : 0);
	case PLAN_POLARIZATION:
		return polar_engine_s(ph, bps);
	case PLAN_PFC:
		return pfc_engine_s(ph, bps, nodes > 1 ? nodes - 1 : 1);
	case PLAN_ALLREDUCE:
	case PLAN_ALLTOALL:
		return plan_coll_seconds(ph, size, nodes, bps * coll_eff / 1e9, pc->rtt_s);
	case PLAN_INCAST:
		return ptp_engine_s(ph, test, size, bps, nodes > 1 ? nodes - 1 : 1, pc);
	default:
		return ptp_engine_s(ph, test, size, bps, 1, pc);
	}
}

int plan_round_jobs(const struct plan_phase *ph, int n)
{
	if (PLAN_PER_NODE(ph->kind))
		return n;
	if (n < 2)
		return 0;
	switch (ph->kind) {
	case PLAN_ALLREDUCE:
	case PLAN_ALLTOALL:
		return 1;
	case PLAN_RING:
		return n == 2 ? 1 : n;
	case PLAN_PERMUTATION:
		return n;
	case PLAN_BISECTION:
		return 2 * (n / 2);
	case PLAN_INCAST:
	case PLAN_PFC:
		return n - 1;
	default:	/* pairwise, polarization: half the nodes send */
		return n / 2;
	}
}

/* A job of round r of test on lane li: its seconds (0: the lane has no
 * such round), its count into *jobs. */
static double lane_round(const struct plan_phase *ph, const char *test, int r, struct plan_lane l, int n,
			 const struct plan_cost *pc, int *jobs)
{
	double s;

	*jobs = 0;
	if (!PLAN_PER_NODE(ph->kind) && r >= plan_rounds(ph, n))
		return 0;
	*jobs = plan_round_jobs(ph, n);
	if (!*jobs)
		return 0;
	if (ph->kind == PLAN_PING)	/* the coordinator's own round trips: no job to set up */
		return plan_job_engine_s(ph, test, 0, l, n, pc);
	if (ph->load)	/* the round lasts as long as its loads */
		s = plan_job_engine_s(ph, "load", 0, l, n, pc);
	else
		s = plan_job_engine_s(ph, test, 0, l, n, pc);
	/* a node's own job starts at once; a pair's client once its server listens */
	return s + (PLAN_PER_NODE(ph->kind) ? pc->setup_s / 2 : pc->setup_s);
}

double plan_round_cost_s(const struct plan_phase *ph, const char *test, int r, const struct plan_lane *lanes,
			 const int *nodes, int nl, const struct plan_cost *pc)
{
	double longest = 0, sum = 0;
	int li, jobs = 0;

	for (li = 0; li < nl; li++) {
		int k;
		double s = lane_round(ph, test, r, lanes[li], nodes[li], pc, &k);

		jobs += k;
		sum += s * k;
		if (s > longest)
			longest = s;
	}
	if (!jobs)
		return 0;
	if (ph->kind == PLAN_PING || !ph->parallel || jobs <= ph->parallel)
		return EST_ROUND_S + longest;
	/* in waves of parallel: at least the longest, about the jobs' sum shared */
	return EST_ROUND_S + (sum / ph->parallel > longest ? sum / ph->parallel : longest);
}

double plan_phase_cost_s(const struct plan_phase *ph, const struct plan_lane *lanes, const int *nodes, int nl,
			 const struct plan_cost *pc, int t0, int r0)
{
	int t, r, li, maxr = 0;
	double s = 0;

	for (li = 0; li < nl; li++) {
		int rr = PLAN_PER_NODE(ph->kind) ? 1 : plan_rounds(ph, nodes[li]);

		if (rr > maxr)
			maxr = rr;
	}
	for (t = t0; t < ph->ntests; t++)
		for (r = t == t0 ? r0 : 0; r < maxr; r++) {
			double rs = plan_round_cost_s(ph, ph->tests[t], r, lanes, nodes, nl, pc);

			s += rs;
			/* the rounds of a pairwise phase past the lanes' fewest cost alike
			 * until one lane runs out: no need to add them one by one */
			if (ph->kind == PLAN_PAIRWISE || ph->kind == PLAN_PERMUTATION) {
				int next = maxr;

				for (li = 0; li < nl; li++) {
					int rr = plan_rounds(ph, nodes[li]);

					if (rr > r && rr < next)
						next = rr;
				}
				s += rs * (next - r - 1);
				r = next - 1;
			}
		}
	return s;
}
