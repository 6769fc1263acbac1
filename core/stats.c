/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

int stats_init(struct stats *s)
{
	memset(s, 0, sizeof(*s));
	s->hist = calloc(STATS_BUCKETS, sizeof(*s->hist));
	if (!s->hist)
		return -ENOMEM;
	s->min = UINT64_MAX;
	return 0;
}

void stats_release(struct stats *s)
{
	free(s->hist);
	s->hist = NULL;
}

void stats_reset(struct stats *s)
{
	uint64_t *h = s->hist;

	memset(s, 0, sizeof(*s));
	s->hist = h;
	s->min = UINT64_MAX;
	memset(h, 0, STATS_BUCKETS * sizeof(*h));
}

unsigned stats_bucket(uint64_t v)
{
	unsigned e, shift;

	if (v < STATS_SUB)
		return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v);	/* >= STATS_SUB_BITS */
	shift = e - STATS_SUB_BITS;
	return STATS_SUB + shift * STATS_SUB +
	       (unsigned)((v >> shift) & (STATS_SUB - 1));
}

void stats_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi)
{
	unsigned shift, m;

	if (b < STATS_SUB) {
		*lo = *hi = b;
		return;
	}
	shift = (b - STATS_SUB) / STATS_SUB;
	m = (b - STATS_SUB) % STATS_SUB;
	*lo = ((uint64_t)(STATS_SUB + m)) << shift;
	*hi = *lo + ((1ull << shift) - 1);
}

void stats_add(struct stats *s, uint64_t v)
{
	double d;

	s->n++;
	if (v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	d = (double)v - s->mean;
	s->mean += d / (double)s->n;
	s->m2 += d * ((double)v - s->mean);
	s->hist[stats_bucket(v)]++;
}

void stats_merge(struct stats *dst, const struct stats *src)
{
	double n, d;
	unsigned i;

	if (!src->n)
		return;
	if (!dst->n) {
		uint64_t *h = dst->hist;

		memcpy(h, src->hist, STATS_BUCKETS * sizeof(*h));
		*dst = *src;
		dst->hist = h;
		return;
	}
	/* Chan et al. parallel variance */
	n = (double)dst->n + (double)src->n;
	d = src->mean - dst->mean;
	dst->m2 += src->m2 + d * d * (double)dst->n * (double)src->n / n;
	dst->mean += d * (double)src->n / n;
	dst->n += src->n;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	for (i = 0; i < STATS_BUCKETS; i++)
		dst->hist[i] += src->hist[i];
}

double stats_mean(const struct stats *s)
{
	return s->n ? s->mean : 0;
}

double stats_stdev(const struct stats *s)
{
	return s->n ? sqrt(s->m2 / (double)s->n) : 0;
}

double stats_percentile(const struct stats *s, double p)
{
	uint64_t rank, seen = 0, lo, hi;
	double mid;
	unsigned b;

	if (!s->n)
		return 0;
	if (p <= 0)
		return (double)s->min;
	if (p >= 100)
		return (double)s->max;
	/* ceil(p/100 * n) without the floating-point noise that turns
	 * 99.9/100 * 1000 into 999.0000000000001 and so rank 999 into 1000 */
	{
		double r = p / 100.0 * (double)s->n, rr = nearbyint(r);

		rank = fabs(r - rr) <= 1e-9 * (rr > 1 ? rr : 1) ? (uint64_t)rr
								  : (uint64_t)ceil(r);
	}
	if (rank < 1)
		rank = 1;
	for (b = 0; b < STATS_BUCKETS; b++) {
		seen += s->hist[b];
		if (seen >= rank)
			break;
	}
	if (b == STATS_BUCKETS)
		return (double)s->max;
	stats_bucket_range(b, &lo, &hi);
	mid = ((double)lo + (double)hi) / 2.0;
	if (mid < (double)s->min)
		mid = (double)s->min;
	if (mid > (double)s->max)
		mid = (double)s->max;
	return mid;
}
