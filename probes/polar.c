/* SPDX-License-Identifier: BSD-2-Clause */
/* The arithmetic of hash polarization: see polar.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "polar.h"

double polar_occupancy_cdf(int K, int P, int u)
{
	double *d, cdf = 0;
	int k, j;

	if (P <= 0 || K < 0)
		return 1;
	if (u >= P || u >= K)
		return 1;
	if (u < 1)
		return K == 0 ? 1 : 0;
	/* d[j]: probability that j paths are occupied after k flows */
	d = calloc((size_t)P + 2, sizeof(*d));
	d[0] = 1;
	for (k = 0; k < K; k++) {
		int top = k + 1 < P ? k + 1 : P;

		for (j = top; j >= 0; j--) {
			double stay = d[j] * j / (double)P;
			double grow = j ? d[j - 1] * (P - (j - 1)) / (double)P : 0;

			d[j] = stay + grow;
		}
	}
	for (j = 0; j <= u; j++)
		cdf += d[j];
	free(d);
	return cdf > 1 ? 1 : cdf;
}

void polar_occupancy_moments(int K, int P, double *mean, double *sd)
{
	double q1, q2, var;

	if (P <= 0) {
		*mean = *sd = 0;
		return;
	}
	q1 = pow(1 - 1.0 / P, K);
	q2 = pow(1 - 2.0 / P, K);
	*mean = P * (1 - q1);
	/* Var of the number of empty paths, which is that of the occupied ones */
	var = P * q1 + P * (P - 1.0) * q2 - (double)P * P * q1 * q1;
	*sd = var > 0 ? sqrt(var) : 0;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* flows that cover all P paths with probability 0.95 (the coupon collector, exactly); 0: over 4096 */
static int flows_to_cover(int P)
{
	int k;

	for (k = P; P > 0 && k <= 4096; k++)
		if (1 - polar_occupancy_cdf(k, P, P - 1) >= 0.95)
			return k;
	return 0;
}

/* The rates' verdict of r (its counts filled), or its cause */
static void judge_rates(struct polar_result *r)
{
	int K = r->flows, P = r->paths, u = (int)lround(r->used);

	r->rates = POLAR_INCONCLUSIVE;
	r->cause = POLAR_CAUSE_NONE;
	if (P <= 0) {
		r->rates = POLAR_UNKNOWN;
		return;
	}
	/* what was not given first, then the host's link: causes that do not
	 * hang on the rates' noise (on a 1:1 fabric the flows' rates add up
	 * to anything near the host's link, over --paths or under a path) */
	if (!r->capacity_given)
		r->cause = POLAR_CAUSE_NO_LINK_RATE;
	else if (!(r->host_rate > 0))
		r->cause = POLAR_CAUSE_NO_HOST_RATE;
	else if (!r->by_design && r->total > POLAR_HOST_FREE * r->host_rate)
		r->cause = POLAR_CAUSE_HOST_LINK;
	else if (r->starved)
		r->cause = POLAR_CAUSE_STARVED;
	else if (K && r->total < POLAR_MIN_FILL * r->capacity)
		r->cause = POLAR_CAUSE_LINK_RATE_HIGH;
	else if (r->used > polar_max_used(P))
		r->cause = r->max > r->capacity * 1.1 ? POLAR_CAUSE_LINK_RATE_LOW : POLAR_CAUSE_PATHS;
	else if (r->total < POLAR_FULL * (u > 1 ? u : 1) * r->capacity)
		r->cause = POLAR_CAUSE_NOT_FULL;
	else if (polar_occupancy_cdf(K, P, (int)lround(r->used + POLAR_MARGIN)) < POLAR_ALPHA)
		r->rates = POLAR_POLARIZED;
	else if (polar_occupancy_cdf(K, P, (int)lround(r->used - POLAR_MARGIN)) >= POLAR_ALPHA)
		r->rates = POLAR_NOT;
	else
		r->cause = POLAR_CAUSE_NOISE;
}

void polar_analyze(struct polar_flow *f, int n, int paths, double capacity, double host_rate,
		   struct polar_result *r)
{
	double *v = malloc((size_t)(n ? n : 1) * sizeof(*v)), sq = 0;
	int i;

	memset(r, 0, sizeof(*r));
	r->flows = n;
	r->paths = paths;
	r->host_rate = host_rate > 0 ? host_rate : 0;
	for (i = 0; i < n; i++) {
		if (v)
			v[i] = f[i].gbps;
		r->starved += !(f[i].gbps > 0);
		r->total += f[i].gbps;
		sq += f[i].gbps * f[i].gbps;
	}
	if (n && v) {
		qsort(v, (size_t)n, sizeof(*v), dcmp);
		r->min = v[0];
		r->max = v[n - 1];
		r->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		r->jain = sq > 0 ? r->total * r->total / (n * sq) : 1;
	}
	free(v);
	r->capacity_given = capacity > 0;
	r->capacity = capacity > 0 ? capacity : r->max;
	for (i = 0; i < n; i++) {
		int k = r->capacity > 0 && f[i].gbps > 0 ? (int)lround(r->capacity / f[i].gbps) : 1;

		if (k < 1)
			k = 1;
		if (k > n)	/* more sharers than flows: a slower bottleneck, not more flows */
			k = n;
		f[i].k = k;
		r->used += 1.0 / k;
		r->by_k[k <= 64 ? k : 64]++;
	}
	r->p_value = 1;
	if (paths > 0) {
		polar_occupancy_moments(n, paths, &r->expected, &r->sd);
		r->p_value = polar_occupancy_cdf(n, paths, (int)lround(r->used));
		r->flows_for_all = flows_to_cover(paths);
		r->by_design = r->capacity_given && r->host_rate >= paths * r->capacity * (1 - 1e-9);
	}
	judge_rates(r);
	r->verdict = r->rates;
	r->evidence = r->rates == POLAR_POLARIZED || r->rates == POLAR_NOT ? POLAR_EV_RATES : POLAR_EV_NONE;
}

void polar_judge_traces(struct polar_traces *t, int K)
{
	t->verdict = POLAR_INCONCLUSIVE;
	t->p_value = 1;
	t->expected = t->sd = 0;
	if (!t->given || t->why[0])	/* not traced, or the caller said why there is no count */
		return;
	if (t->complete < t->flows || !t->flows) {
		snprintf(t->why, sizeof(t->why), "%d of %d flows traced to the destination with every hop "
			 "answering: routers limit their ICMP answers (Linux: net.ipv4.icmp_ratelimit and "
			 "icmp_msgs_per_sec); lift the limit on the routers, or trace fewer flows", t->complete,
			 t->flows);
		return;
	}
	if (t->possible <= 0) {
		snprintf(t->why, sizeof(t->why), "%d paths traced, and no number of paths to judge them "
			 "against: give --paths, or --topology", t->paths);
		return;
	}
	polar_occupancy_moments(K, t->possible, &t->expected, &t->sd);
	t->p_value = polar_occupancy_cdf(K, t->possible, t->paths);
	if (t->paths > t->possible) {
		if (t->exact)
			snprintf(t->why, sizeof(t->why), "%d paths traced, more than the design's %d equal-cost "
				 "paths: the flows are not routed as the design says", t->paths, t->possible);
		else
			snprintf(t->why, sizeof(t->why), "%d distinct paths by address traced, more than the %d "
				 "that exist: routers answer from several addresses (often the interface each "
				 "answer leaves by), so one path reads as several; give the design with its "
				 "switches' addresses (--topology, addr=) to name them", t->paths, t->possible);
		return;
	}
	if (t->p_value < POLAR_ALPHA)
		t->verdict = POLAR_POLARIZED;
	else if (t->exact)
		t->verdict = POLAR_NOT;
	else
		snprintf(t->why, sizeof(t->why), "at most %d of %d paths traced (hops by address: a router "
			 "answering from two addresses splits a path in two), which uniform hashing gives "
			 "(p = %.2g): an upper bound cannot show \"not polarized\"; give the design with its "
			 "switches' addresses (--topology, addr=)", t->paths, t->possible, t->p_value);
}

void polar_decide(struct polar_result *r, const struct polar_traces *t)
{
	if (t && t->given && (t->verdict == POLAR_POLARIZED || t->verdict == POLAR_NOT)) {
		r->verdict = t->verdict;
		r->evidence = POLAR_EV_TRACES;
	} else if (r->rates == POLAR_POLARIZED || r->rates == POLAR_NOT) {
		r->verdict = r->rates;
		r->evidence = POLAR_EV_RATES;
	} else {
		r->verdict = r->paths > 0 || (t && t->given && t->possible > 0) ? POLAR_INCONCLUSIVE : POLAR_UNKNOWN;
		r->evidence = POLAR_EV_NONE;
	}
}

double polar_max_used(int paths)
{
	double slack = POLAR_SLACK * paths;

	return paths + (slack > 0.5 ? slack : 0.5);
}

const char *polar_word(enum polar_verdict v)
{
	return v == POLAR_POLARIZED ? "polarized" : v == POLAR_NOT ? "not polarized" :
	       v == POLAR_INCONCLUSIVE ? "inconclusive" : "unknown";
}

const char *polar_evidence_name(enum polar_evidence e)
{
	return e == POLAR_EV_RATES ? "rates" : e == POLAR_EV_TRACES ? "traces" : NULL;
}

const char *polar_cause_name(enum polar_cause c)
{
	switch (c) {
	case POLAR_CAUSE_NO_LINK_RATE:
		return "no_link_rate";
	case POLAR_CAUSE_LINK_RATE_LOW:
		return "link_rate_below_flows";
	case POLAR_CAUSE_PATHS:
		return "more_paths_than_given";
	case POLAR_CAUSE_LINK_RATE_HIGH:
		return "link_rate_above_flows";
	case POLAR_CAUSE_NO_HOST_RATE:
		return "no_host_rate";
	case POLAR_CAUSE_HOST_LINK:
		return "host_link_bottleneck";
	case POLAR_CAUSE_NOT_FULL:
		return "paths_not_full";
	case POLAR_CAUSE_NOISE:
		return "within_noise";
	case POLAR_CAUSE_STARVED:
		return "flows_starved";
	case POLAR_CAUSE_NONE:
		break;
	}
	return "";
}

const char *polar_reason_name(enum polar_cause c)
{
	switch (c) {
	case POLAR_CAUSE_LINK_RATE_LOW: case POLAR_CAUSE_PATHS:
		return "more_paths_than_exist";
	case POLAR_CAUSE_LINK_RATE_HIGH:
		return "flows_below_one_path";
	case POLAR_CAUSE_NO_LINK_RATE: case POLAR_CAUSE_NO_HOST_RATE: case POLAR_CAUSE_HOST_LINK:
	case POLAR_CAUSE_NOT_FULL:
		return "paths_not_shown_bottleneck";
	case POLAR_CAUSE_NOISE:
		return "within_noise";
	case POLAR_CAUSE_STARVED:
		return "flows_without_rate";
	case POLAR_CAUSE_NONE:
		break;
	}
	return "";
}

/* indices into the flows (arg) by rate, then index */
static int kcmp(const void *a, const void *b, void *arg)
{
	const struct polar_flow *f = arg;
	int x = *(const int *)a, y = *(const int *)b;

	return f[x].gbps != f[y].gbps ? (f[x].gbps < f[y].gbps ? -1 : 1) : x - y;
}

int polar_groups(const struct polar_flow *f, int n, double capacity, int *grp)
{
	int *idx = malloc((size_t)(n ? n : 1) * sizeof(*idx)), i, g = 0;
	double sum = 0;

	if (!idx) {
		for (i = 0; i < n; i++)
			grp[i] = 0;
		return n ? 1 : 0;
	}
	for (i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, (size_t)n, sizeof(*idx), kcmp, (void *)f);
	for (i = 0; i < n; i++) {
		grp[idx[i]] = g;
		sum += f[idx[i]].gbps;
		/* a group is full when its flows add up to a link: when the next
		 * flow would take the sum further from the link's rate than it is */
		if (capacity > 0 && i + 1 < n &&
		    fabs(sum - capacity) <= fabs(sum + f[idx[i + 1]].gbps - capacity)) {
			g++;
			sum = 0;
		}
	}
	free(idx);
	return n ? (sum > 0 || !capacity ? g + 1 : g) : 0;
}

double polar_sweep_p_value(const int *obs, const int *K, const int *P, int n)
{
	double o = 0, mean = 0, var = 0, m, sd, z;
	int i;

	for (i = 0; i < n; i++) {
		if (P[i] <= 0)
			return 1;
		polar_occupancy_moments(K[i], P[i], &m, &sd);
		o += obs[i];
		mean += m;
		var += sd * sd;
	}
	if (n == 1)
		return polar_occupancy_cdf(K[0], P[0], obs[0]);
	if (var <= 0)
		return o < mean ? 0 : 1;
	z = (o + 0.5 - mean) / sqrt(var);	/* continuity correction */
	return 0.5 * erfc(-z / sqrt(2));
}

/* why the paths were the bottleneck, after "...(p = X)" */
static void basis(const struct polar_result *r, char *buf, size_t len)
{
	if (r->by_design)
		snprintf(buf, len, "; the paths were their bottleneck by design (the host's link, %g Gb/s, carries "
			 "%d paths of %g Gb/s)", r->host_rate, r->paths, r->capacity);
	else
		snprintf(buf, len, "; the paths were their bottleneck (together %.0f%% of the host's link, %g Gb/s, "
			 "and the paths they used full)", 100 * r->total / r->host_rate, r->host_rate);
}

void polar_rates_text(const struct polar_result *r, char *buf, int len)
{
	size_t n = (size_t)len;
	char b[200];

	if (r->paths <= 0) {
		snprintf(buf, n, "%.1f paths in use by %d flows; give the number of equal paths (--paths) to judge "
			 "polarization", r->used, r->flows);
		return;
	}
	switch (r->rates == POLAR_INCONCLUSIVE ? r->cause : POLAR_CAUSE_NONE) {
	case POLAR_CAUSE_NONE:
		basis(r, b, sizeof(b));
		if (r->rates == POLAR_POLARIZED)
			snprintf(buf, n, "%d flows used %.1f of %d paths by their rates, where uniform hashing uses "
				 "%.1f +- %.1f (p = %.2g)%s", r->flows, r->used, r->paths, r->expected, r->sd,
				 r->p_value, b);
		else
			snprintf(buf, n, "%d flows used %.1f of %d paths by their rates, as uniform hashing does "
				 "(%.1f +- %.1f, p = %.2g)%s", r->flows, r->used, r->paths, r->expected, r->sd,
				 r->p_value, b);
		break;
	case POLAR_CAUSE_LINK_RATE_HIGH:
		snprintf(buf, n, "%d flows together ran at %.0f%% of --link-rate %g, so they did not fill even one "
			 "path and their rates say nothing of how they were spread: the bottleneck was not the "
			 "paths (the hosts' links or CPUs), or --link-rate is above the rate of one path; give that "
			 "rate (Gb/s) with --link-rate", r->flows, 100 * r->total / r->capacity, r->capacity);
		break;
	case POLAR_CAUSE_NO_LINK_RATE:
		snprintf(buf, n, "%d flows used %.1f paths if the fastest flow's rate is a path's%s; without the "
			 "rate of one path that says nothing: give --link-rate (Gb/s) and --host-rate, or "
			 "--topology, or --trace", r->flows, r->used,
			 r->used > polar_max_used(r->paths) ? ", more than exist (the flows did not fill the paths: "
			 "the hosts' links or CPUs were their bottleneck)" : "");
		break;
	case POLAR_CAUSE_LINK_RATE_LOW:
		snprintf(buf, n, "%d flows used %.1f paths, more than the %d that exist: flows ran faster than "
			 "--link-rate %g, which is below the rate of one path; give that rate (Gb/s) with "
			 "--link-rate", r->flows, r->used, r->paths, r->capacity);
		break;
	case POLAR_CAUSE_PATHS:
		snprintf(buf, n, "%d flows used %.1f paths, more than the %d that exist: there are more than %d "
			 "equal paths, or --link-rate %g is below the rate of one path; check --paths and "
			 "--link-rate", r->flows, r->used, r->paths, r->paths, r->capacity);
		break;
	case POLAR_CAUSE_NO_HOST_RATE:
		snprintf(buf, n, "%d flows used %.1f of %d paths by their rates, but without the rate of the "
			 "host's link nothing shows that the paths were their bottleneck (where the host's link "
			 "is no faster than the paths, every flow gets its share of it wherever it went): give "
			 "--host-rate (Gb/s), or --topology, or --trace", r->flows, r->used, r->paths);
		break;
	case POLAR_CAUSE_HOST_LINK:
		snprintf(buf, n, "the host's link was the flows' bottleneck: together %.0f%% of it (%g Gb/s, "
			 "less than %d paths of %g Gb/s), so each flow got its share of it wherever it went and "
			 "the rates say nothing of the paths; give --trace, or probe between hosts whose links "
			 "are faster than the paths", 100 * r->total / r->host_rate, r->host_rate, r->paths,
			 r->capacity);
		break;
	case POLAR_CAUSE_NOT_FULL:
		snprintf(buf, n, "%d flows used %.1f of %d paths by their rates, but together filled only "
			 "%.0f%% of that many paths: their bottleneck was not the paths (a CPU, the receiver, "
			 "other traffic); give --trace, or probe on an idle fabric", r->flows, r->used, r->paths,
			 100 * r->total / (fmax(1, lround(r->used)) * r->capacity));
		break;
	case POLAR_CAUSE_STARVED:
		snprintf(buf, n, "%d of %d flows completed no message in their window, so their rates are unknown "
			 "and the rates say nothing of the paths (a starved flow, or a window too short at this "
			 "rate); give a longer -D or a smaller -s, or --trace", r->starved, r->flows);
		break;
	case POLAR_CAUSE_NOISE:
		snprintf(buf, n, "%d flows used %.1f of %d paths by their rates, within their noise (%.2g of a "
			 "path) of the verdict's boundary (uniform hashing uses %.1f +- %.1f); give --trace, or "
			 "probe with more flows", r->flows, r->used, r->paths, POLAR_MARGIN, r->expected, r->sd);
		break;
	}
}

/* the traces' verdict: "polarized: 16 flows took at most 2 of 4 paths, traced (...)..." */
static size_t traces_text(const struct polar_result *r, const struct polar_traces *t, char *buf, size_t n)
{
	if (t->verdict == POLAR_POLARIZED)
		return (size_t)snprintf(buf, n, "polarized: %d flows took %s%d of %d paths, traced (%s), where "
					"uniform hashing takes %.1f +- %.1f (p = %.2g): identical hashing on "
					"consecutive tiers, or too little entropy in the hash fields", r->flows,
					t->exact ? "" : "at most ", t->paths, t->possible, t->how, t->expected, t->sd,
					t->p_value);
	return (size_t)snprintf(buf, n, "not polarized: %d flows took %d of %d paths, traced (%s), as uniform "
				"hashing does (%.1f +- %.1f, p = %.2g); collisions are random - %d flows cover every "
				"path with 95%% probability", r->flows, t->paths, t->possible, t->how, t->expected,
				t->sd, t->p_value, flows_to_cover(t->possible));
}

void polar_verdict(const struct polar_result *r, const struct polar_traces *t, char *buf, int len)
{
	size_t n = (size_t)len, off;
	char rt[700];

	polar_rates_text(r, rt, sizeof(rt));
	if (r->evidence == POLAR_EV_TRACES) {
		off = traces_text(r, t, buf, n);
		if (off >= n)
			return;
		if (r->rates == r->verdict)
			snprintf(buf + off, n - off, "; the rates agree (%.1f paths used)", r->used);
		else if (r->rates == POLAR_POLARIZED || r->rates == POLAR_NOT)
			snprintf(buf + off, n - off, "; the rates said %s (%.1f paths used): the paths were not "
				 "their only bottleneck", polar_word(r->rates), r->used);
		else if (r->paths > 0)
			snprintf(buf + off, n - off, "; the rates gave none (%s)", polar_cause_name(r->cause));
		return;
	}
	if (r->evidence == POLAR_EV_RATES)
		off = (size_t)snprintf(buf, n, "%s: %s", polar_word(r->verdict), rt);
	else if (r->verdict == POLAR_UNKNOWN)
		off = (size_t)snprintf(buf, n, "%s", rt);
	else
		off = (size_t)snprintf(buf, n, "no verdict: %s", rt);
	if (r->verdict == POLAR_NOT && off < n)
		off += (size_t)snprintf(buf + off, n - off, "; collisions are random - %d flows cover every path "
					"with 95%% probability", r->flows_for_all);
	if (t && t->given && off < n)
		snprintf(buf + off, n - off, r->evidence == POLAR_EV_RATES ? "; not confirmed by the traces: %s" :
			 "; the traces give none: %s", t->why);
}
