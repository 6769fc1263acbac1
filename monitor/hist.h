/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The monitor's round-trip-time histogram: fixed log-linear boundaries, so
 * that two histograms (two intervals, two source-port buckets, two agents,
 * what Prometheus sums) merge by adding their counts.
 *
 * Boundaries ("le", seconds): 1, 2 and 5 times each power of ten from 1 us
 * to 10 s: 1e-6 2e-6 5e-6 1e-5 ... 1 2 5 10 (MON_HIST_FINITE = 22 of them),
 * then +Inf.  Each decade is split linearly at 1, 2 and 5: a value's bucket
 * is known to a factor of 2.5 at worst, which tells a microsecond fabric
 * from a congested one (tens to hundreds of microseconds) and from a lost
 * and retransmitted packet (milliseconds and more).  The same boundaries in
 * every agent and version: fabscope-monitor(1) lists them, and a change of
 * them is a new metric name.
 *
 * Counts are per bucket (not cumulative) here; the exposition makes them
 * cumulative.  Memory: MON_HIST_BUCKETS + 2 words, nothing allocated.
 */
#ifndef FS_MON_HIST_H
#define FS_MON_HIST_H

#include <stdint.h>

#define MON_HIST_FINITE 22
#define MON_HIST_BUCKETS (MON_HIST_FINITE + 1)	/* the last is +Inf */

struct mon_hist {
	uint64_t b[MON_HIST_BUCKETS];
	uint64_t count;
	double sum;		/* seconds */
};

/* The finite upper bounds, seconds, ascending. */
extern const double mon_hist_le[MON_HIST_FINITE];

/* The bucket of a value in seconds: the first whose bound is >= it;
 * MON_HIST_FINITE for larger values; -1 for a negative value or NaN. */
int mon_hist_bucket(double seconds);
/* Count one value; -1 (nothing counted) when mon_hist_bucket refuses it. */
int mon_hist_add(struct mon_hist *h, double seconds);
/* into += from */
void mon_hist_merge(struct mon_hist *into, const struct mon_hist *from);
/* d = a - b, bucket by bucket (a later reading minus an earlier one). */
void mon_hist_sub(struct mon_hist *d, const struct mon_hist *a, const struct mon_hist *b);
/* The label value of bound i ("1e-06", "0.002", "+Inf" for i = MON_HIST_FINITE),
 * written as Prometheus' Go client writes it: the shortest decimal that reads back, with an
 * exponent below 1e-4 only. */
const char *mon_hist_le_str(int i, char *buf, int len);

#endif
