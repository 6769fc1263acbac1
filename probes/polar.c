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

void polar_analyze(struct polar_flow *f, int n, int paths, double capacity, struct polar_result *r)
{
	double *v = malloc((size_t)(n ? n : 1) * sizeof(*v)), sq = 0;
	int i;

	memset(r, 0, sizeof(*r));
	r->flows = n;
	r->paths = paths;
	for (i = 0; i < n; i++) {
		v[i] = f[i].gbps;
		r->total += f[i].gbps;
		sq += f[i].gbps * f[i].gbps;
	}
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	if (n) {
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
	if (paths > 0) {
		int u = (int)lround(r->used), k;

		polar_occupancy_moments(n, paths, &r->expected, &r->sd);
		r->p_value = polar_occupancy_cdf(n, paths, u);
		r->polarized = r->p_value < POLAR_ALPHA;
		for (k = paths; k <= 4096; k++)	/* coupon collector, exactly */
			if (1 - polar_occupancy_cdf(k, paths, paths - 1) >= 0.95) {
				r->flows_for_all = k;
				break;
			}
	} else {
		r->p_value = 1;
	}
	polar_check_possible(r);
}

double polar_max_used(int paths)
{
	double slack = POLAR_SLACK * paths;

	return paths + (slack > 0.5 ? slack : 0.5);
}

void polar_check_possible(struct polar_result *r)
{
	r->inconclusive = 0;
	r->cause = POLAR_CAUSE_NONE;
	if (r->paths <= 0)
		return;
	if (r->capacity_given && r->flows && r->total < POLAR_MIN_FILL * r->capacity) {
		r->inconclusive = 1;
		r->polarized = 0;
		r->cause = POLAR_CAUSE_LINK_RATE_HIGH;
		return;
	}
	if (r->used <= polar_max_used(r->paths))
		return;
	r->inconclusive = 1;
	r->polarized = 0;
	if (!r->capacity_given)
		r->cause = POLAR_CAUSE_NO_LINK_RATE;
	else if (r->max > r->capacity * 1.1)
		r->cause = POLAR_CAUSE_LINK_RATE_LOW;
	else
		r->cause = POLAR_CAUSE_PATHS;
}

const char *polar_verdict_word(const struct polar_result *r)
{
	return r->paths <= 0 ? "unknown" : r->inconclusive ? "inconclusive" :
	       r->polarized ? "polarized" : "not polarized";
}

const char *polar_reason_name(const struct polar_result *r)
{
	return !r->inconclusive ? "" : r->cause == POLAR_CAUSE_LINK_RATE_HIGH ? "flows_below_one_path" :
	       "more_paths_than_exist";
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

double polar_sweep_p_value(const struct polar_result *r, int n)
{
	double obs = 0, mean = 0, var = 0, z;
	int i;

	for (i = 0; i < n; i++) {
		if (r[i].paths <= 0)
			return 1;
		obs += lround(r[i].used);
		mean += r[i].expected;
		var += r[i].sd * r[i].sd;
	}
	if (n == 1)
		return r[0].p_value;
	if (var <= 0)
		return obs < mean ? 0 : 1;
	z = (obs + 0.5 - mean) / sqrt(var);	/* continuity correction */
	return 0.5 * erfc(-z / sqrt(2));
}

void polar_verdict(const struct polar_result *r, char *buf, int len)
{
	if (r->paths <= 0)
		snprintf(buf, (size_t)len, "%.1f paths in use by %d flows; give the number of equal paths "
			 "(--paths) to judge polarization", r->used, r->flows);
	else if (r->inconclusive && r->cause == POLAR_CAUSE_LINK_RATE_HIGH)
		snprintf(buf, (size_t)len, "no verdict: %d flows together ran at %.0f%% of --link-rate %g, so "
			 "they did not fill even one path and their rates say nothing of how they were spread: "
			 "the bottleneck was not the paths (the hosts' links or CPUs), or --link-rate is above "
			 "the rate of one path; give that rate (Gb/s) with --link-rate", r->flows,
			 100 * r->total / r->capacity, r->capacity);
	else if (r->inconclusive && r->cause == POLAR_CAUSE_NO_LINK_RATE)
		snprintf(buf, (size_t)len, "no verdict: %d flows used %.1f paths, more than the %d that exist: "
			 "without --link-rate the fastest flow's rate stood for one path's, and the flows did "
			 "not fill the paths (the hosts' links or CPUs were the bottleneck, as on one host or "
			 "one link); give --link-rate, the rate of one path in Gb/s, and make the paths the "
			 "bottleneck, or check --paths", r->flows, r->used, r->paths);
	else if (r->inconclusive && r->cause == POLAR_CAUSE_LINK_RATE_LOW)
		snprintf(buf, (size_t)len, "no verdict: %d flows used %.1f paths, more than the %d that exist: "
			 "flows ran faster than --link-rate %g, which is below the rate of one path; give that "
			 "rate (Gb/s) with --link-rate", r->flows, r->used, r->paths, r->capacity);
	else if (r->inconclusive)
		snprintf(buf, (size_t)len, "no verdict: %d flows used %.1f paths, more than the %d that exist: "
			 "there are more than %d equal paths, or --link-rate %g is below the rate of one path; "
			 "check --paths and --link-rate", r->flows, r->used, r->paths, r->paths, r->capacity);
	else if (r->polarized)
		snprintf(buf, (size_t)len, "polarized: %d flows used %.1f of %d paths, where uniform hashing "
			 "uses %.1f +- %.1f (p = %.2g): identical hashing on consecutive tiers, or too little "
			 "entropy in the hash fields", r->flows, r->used, r->paths, r->expected, r->sd, r->p_value);
	else
		snprintf(buf, (size_t)len, "not polarized: %d flows used %.1f of %d paths, as uniform hashing "
			 "does (%.1f +- %.1f, p = %.2g); collisions are random - %d flows cover every path with "
			 "95%% probability", r->flows, r->used, r->paths, r->expected, r->sd, r->p_value,
			 r->flows_for_all);
}
