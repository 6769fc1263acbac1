/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Statistics of non-negative integer samples (latencies in nanoseconds).
 *
 * min, max, mean and standard deviation are exact (Welford's algorithm).
 * Percentiles come from a log-linear histogram of fixed size (about 115 KiB)
 * so that runs of any length use bounded memory:
 *
 *   - values below 2^STATS_SUB_BITS (256) have a bucket each: exact;
 *   - a larger value v with highest set bit e falls in a bucket of width
 *     2^(e - STATS_SUB_BITS); the bucket's midpoint is reported.
 *
 * Error bound: a reported percentile q differs from the exact nearest-rank
 * percentile x by at most x / 2^(STATS_SUB_BITS + 1), i.e. 0.2 % (1/512),
 * and q is also clamped to [min, max].  tests/t0100-unit-stats.t checks
 * this bound against exact sorted percentiles.
 *
 * Percentile definition: nearest rank, the smallest sample x such that at
 * least p % of the samples are <= x (rank = ceil(p/100 * n)).
 */
#ifndef FS_STATS_H
#define FS_STATS_H

#include <stdint.h>

#define STATS_SUB_BITS 8
#define STATS_SUB (1u << STATS_SUB_BITS)
#define STATS_BUCKETS (STATS_SUB + (64 - STATS_SUB_BITS) * STATS_SUB)

struct stats {
	uint64_t n;
	uint64_t min, max;
	double mean, m2;
	uint64_t *hist;		/* STATS_BUCKETS counters */
};

int stats_init(struct stats *s);	/* 0, or -ENOMEM */
void stats_release(struct stats *s);
void stats_reset(struct stats *s);
void stats_add(struct stats *s, uint64_t v);
/* Add all of src's samples to dst. */
void stats_merge(struct stats *dst, const struct stats *src);
double stats_mean(const struct stats *s);
double stats_stdev(const struct stats *s);	/* population stdev */
/* p in [0, 100]; 0 when there are no samples. */
double stats_percentile(const struct stats *s, double p);

/* Bucket index of a value and the [lo, hi] range of a bucket (exported for tests). */
unsigned stats_bucket(uint64_t v);
void stats_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi);

#endif
