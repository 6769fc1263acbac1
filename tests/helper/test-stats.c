/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool stats, stats-check, stats-merge, stats-bucket: core/stats.c, its
 * percentiles against exact sorted ones, stats_merge() against one stats of
 * all, and the buckets.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/stats.h"
#include "test-tool.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A percentile given in decimal ("99.9") as an exact integer in units of
 * 1/10000 %, so that exact ranks need no floating point.
 */
#define PCT_SCALE 10000ull

struct pct {
	const char *name;
	uint64_t scaled;	/* p * PCT_SCALE */
	double p;
};

static int parse_pct(const char *s, struct pct *out)
{
	uint64_t v = 0, frac = PCT_SCALE;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		goto bad;
	while (isdigit((unsigned char)*p) && v <= 100 * PCT_SCALE)
		v = v * 10 + (uint64_t)(*p++ - '0') * PCT_SCALE;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			goto bad;
		while (isdigit((unsigned char)*p) && frac > 1) {
			frac /= 10;
			v += (uint64_t)(*p++ - '0') * frac;
		}
	}
	if (*p || v > 100 * PCT_SCALE)
		goto bad;
	out->name = s;
	out->scaled = v;
	out->p = (double)v / (double)PCT_SCALE;
	return 0;
bad:
	return usage_error("'%s' is not a percentile (0 to 100, at most 4 decimals)", s);
}

/* Percentiles from argv, or the default list. */
static int parse_pcts(int argc, const char **argv, const char *const *dflt,
		      struct pct **out, int *n)
{
	const char *const *list = argc ? argv : dflt;
	int i, cnt = 0;

	if (!argc)
		while (dflt[cnt])
			cnt++;
	else
		cnt = argc;
	*out = calloc((size_t)cnt, sizeof(**out));
	if (!*out)
		return -fs_err_env("out of memory");
	for (i = 0; i < cnt; i++)
		if (parse_pct(list[i], &(*out)[i])) {
			free(*out);
			*out = NULL;
			return FS_EXIT_USAGE;
		}
	*n = cnt;
	return 0;
}

/* Nearest rank on sorted samples: rank = ceil(p/100 * n), at least 1. */
static uint64_t exact_percentile(const uint64_t *sorted, size_t n, uint64_t scaled)
{
	uint64_t rank;

	if (!n)
		return 0;
	rank = (scaled * n + 100 * PCT_SCALE - 1) / (100 * PCT_SCALE);
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

/* Integers as integers (exactly, also above 2^53), bucket midpoints with their .5 */
static const char *fmt_num(double v, char *buf, size_t len)
{
	if (v == floor(v))
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.17g", v);
	return buf;
}

/* |a - b| within rel of scale (scale: the size of the quantity compared) */
static int close_to(double a, double b, double rel, double scale)
{
	return fabs(a - b) <= rel * fabs(scale);
}

static const char *const default_pcts[] = { "50", "90", "99", "99.9", NULL };
static const char *const check_pcts[] = {
	"1", "10", "25", "50", "75", "90", "99", "99.9", "99.99", "100", NULL
};

int tool_stats(int argc, const char **argv)
{
	struct tool_samples smp = { 0 };
	struct stats s;
	struct pct *pcts = NULL;
	char buf[64];
	int rc, npct = 0, i;
	size_t k;

	rc = parse_pcts(argc - 1, argv + 1, default_pcts, &pcts, &npct);
	if (rc)
		return rc;
	if (stats_init(&s)) {
		free(pcts);
		return -fs_err_env("out of memory");
	}
	rc = tool_read_samples(stdin, &smp);
	if (rc)
		goto out;
	for (k = 0; k < smp.n; k++)
		stats_add(&s, smp.v[k]);
	printf("n %" PRIu64 "\n", s.n);
	printf("min %" PRIu64 "\n", s.n ? s.min : 0);
	printf("max %" PRIu64 "\n", s.max);
	printf("avg %.10g\n", stats_mean(&s));
	printf("stdev %.10g\n", stats_stdev(&s));
	for (i = 0; i < npct; i++)
		printf("p%s %s\n", pcts[i].name,
		       fmt_num(stats_percentile(&s, pcts[i].p), buf, sizeof(buf)));
out:
	stats_release(&s);
	tool_samples_release(&smp);
	free(pcts);
	return rc;
}

/*
 * The reported percentile q of an exact x: |q - x| <= x / 2^(SUB_BITS + 1)
 * and min <= q <= max (core/stats.h).
 */
static int check_percentile(const struct stats *s, const uint64_t *sorted,
			    const struct pct *p)
{
	uint64_t x = exact_percentile(sorted, s->n, p->scaled);
	double q = stats_percentile(s, p->p);
	double bound = (double)x / (double)(2u * STATS_SUB);
	char bq[64];

	printf("p%s exact %" PRIu64 " reported %s\n", p->name, x,
	       fmt_num(q, bq, sizeof(bq)));
	if (!s->n)
		return q == 0 ? 0 : check_failed("p%s: %s without samples, expected 0",
						 p->name, bq);
	if (fabs(q - (double)x) > bound)
		return check_failed("p%s: reported %s is off the exact %" PRIu64
				    " by more than %g", p->name, bq, x, bound);
	if (q < (double)s->min || q > (double)s->max)
		return check_failed("p%s: reported %s is outside [%" PRIu64 ", %" PRIu64 "]",
				    p->name, bq, s->min, s->max);
	return 0;
}

int tool_stats_check(int argc, const char **argv)
{
	struct tool_samples smp = { 0 };
	struct stats s;
	struct pct *pcts = NULL;
	long double sum = 0, m2 = 0, mean, sd;
	int rc, npct = 0, i, bad = 0;
	size_t k;

	rc = parse_pcts(argc - 1, argv + 1, check_pcts, &pcts, &npct);
	if (rc)
		return rc;
	if (stats_init(&s)) {
		free(pcts);
		return -fs_err_env("out of memory");
	}
	rc = tool_read_samples(stdin, &smp);
	if (rc)
		goto out;
	for (k = 0; k < smp.n; k++)
		stats_add(&s, smp.v[k]);
	if (smp.n)
		qsort(smp.v, smp.n, sizeof(*smp.v), cmp_u64);

	/* two passes, in long double */
	for (k = 0; k < smp.n; k++)
		sum += (long double)smp.v[k];
	mean = smp.n ? sum / (long double)smp.n : 0;
	for (k = 0; k < smp.n; k++) {
		long double d = (long double)smp.v[k] - mean;

		m2 += d * d;
	}
	sd = smp.n ? sqrtl(m2 / (long double)smp.n) : 0;

	printf("n %" PRIu64 "\n", s.n);
	if (s.n != smp.n)
		bad |= check_failed("n is %" PRIu64 ", expected %zu", s.n, smp.n);
	if (smp.n) {
		printf("min %" PRIu64 "\nmax %" PRIu64 "\n", s.min, s.max);
		if (s.min != smp.v[0] || s.max != smp.v[smp.n - 1])
			bad |= check_failed("min/max are %" PRIu64 "/%" PRIu64
					    ", expected %" PRIu64 "/%" PRIu64,
					    s.min, s.max, smp.v[0], smp.v[smp.n - 1]);
	}
	printf("avg %.10g\nstdev %.10g\n", stats_mean(&s), stats_stdev(&s));
	/*
	 * Relative 1e-9; the stdev relative to the larger of itself and the
	 * mean, as the samples themselves are rounded to double.
	 */
	if (!close_to(stats_mean(&s), (double)mean, 1e-9, (double)mean))
		bad |= check_failed("mean is %.17g, expected %.17Lg", stats_mean(&s), mean);
	if (!close_to(stats_stdev(&s), (double)sd, 1e-9, fmax((double)sd, (double)mean)))
		bad |= check_failed("stdev is %.17g, expected %.17Lg", stats_stdev(&s), sd);
	for (i = 0; i < npct; i++)
		bad |= check_percentile(&s, smp.v, &pcts[i]);
	rc = bad ? FS_EXIT_CHECK : 0;
out:
	stats_release(&s);
	tool_samples_release(&smp);
	free(pcts);
	return rc;
}

/* a (a merge) against b (one stats of the same samples) */
static int stats_same(const char *what, const struct stats *a, const struct stats *b)
{
	static const double ps[] = { 0, 1, 10, 50, 90, 99, 99.9, 99.99, 100 };
	size_t i;

	if (a->n != b->n)
		return check_failed("%s: n %" PRIu64 " != %" PRIu64, what, a->n, b->n);
	if (a->n && (a->min != b->min || a->max != b->max))
		return check_failed("%s: min/max %" PRIu64 "/%" PRIu64 " != %" PRIu64 "/%" PRIu64,
				    what, a->min, a->max, b->min, b->max);
	if (memcmp(a->hist, b->hist, STATS_BUCKETS * sizeof(*a->hist)))
		return check_failed("%s: histograms differ", what);
	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
		if (stats_percentile(a, ps[i]) != stats_percentile(b, ps[i]))
			return check_failed("%s: p%g %.17g != %.17g", what, ps[i],
					    stats_percentile(a, ps[i]),
					    stats_percentile(b, ps[i]));
	if (!close_to(stats_mean(a), stats_mean(b), 1e-9, stats_mean(b)))
		return check_failed("%s: mean %.17g != %.17g", what,
				    stats_mean(a), stats_mean(b));
	if (!close_to(stats_stdev(a), stats_stdev(b), 1e-9,
		      fmax(stats_stdev(b), stats_mean(b))))
		return check_failed("%s: stdev %.17g != %.17g", what,
				    stats_stdev(a), stats_stdev(b));
	printf("%s: ok\n", what);
	return 0;
}

int tool_stats_merge(int argc, const char **argv)
{
	struct tool_samples smp = { 0 };
	struct stats all, a, b, e;
	size_t k, split;
	char what[96];
	int rc, bad = 0;

	if (argc > 2)
		return usage_error("usage: test-tool stats-merge [SPLIT] <samples");
	if (stats_init(&all) || stats_init(&a) || stats_init(&b) || stats_init(&e))
		return -fs_err_env("out of memory");	/* the process ends */
	rc = tool_read_samples(stdin, &smp);
	if (rc)
		goto out;
	split = smp.n / 2;
	if (argc == 2) {
		char *end;

		errno = 0;
		split = strtoul(argv[1], &end, 10);
		if (errno || *end || !isdigit((unsigned char)*argv[1]) || split > smp.n) {
			rc = usage_error("invalid split '%s' for %zu samples", argv[1], smp.n);
			goto out;
		}
	}
	for (k = 0; k < smp.n; k++) {
		stats_add(&all, smp.v[k]);
		stats_add(k < split ? &a : &b, smp.v[k]);
	}
	snprintf(what, sizeof(what), "merge %zu + %zu", split, smp.n - split);
	stats_merge(&a, &b);
	bad |= stats_same(what, &a, &all);
	stats_merge(&e, &all);
	bad |= stats_same("merge into empty", &e, &all);
	stats_reset(&b);
	stats_merge(&e, &b);
	bad |= stats_same("merge of empty", &e, &all);
	rc = bad ? FS_EXIT_CHECK : 0;
out:
	stats_release(&all);
	stats_release(&a);
	stats_release(&b);
	stats_release(&e);
	tool_samples_release(&smp);
	return rc;
}

static int check_all_buckets(void)
{
	uint64_t lo, hi, prev_hi = 0;
	unsigned b;

	for (b = 0; b < STATS_BUCKETS; b++) {
		stats_bucket_range(b, &lo, &hi);
		if (b ? lo != prev_hi + 1 : lo != 0)
			return check_failed("bucket %u starts at %" PRIu64 ", after %" PRIu64,
					    b, lo, prev_hi);
		if (hi < lo || stats_bucket(lo) != b || stats_bucket(hi) != b)
			return check_failed("bucket %u [%" PRIu64 ", %" PRIu64 "] maps to %u, %u",
					    b, lo, hi, stats_bucket(lo), stats_bucket(hi));
		/* width 1 below 256, else at most lo / 256 */
		if (b < STATS_SUB ? hi != lo : hi - lo + 1 > lo / STATS_SUB)
			return check_failed("bucket %u [%" PRIu64 ", %" PRIu64 "] is too wide",
					    b, lo, hi);
		prev_hi = hi;
	}
	if (prev_hi != UINT64_MAX)
		return check_failed("the last bucket ends at %" PRIu64, prev_hi);
	printf("%u buckets tile [0, 2^64)\n", (unsigned)STATS_BUCKETS);
	return 0;
}

int tool_stats_bucket(int argc, const char **argv)
{
	int i;

	if (argc == 2 && !strcmp(argv[1], "--all"))
		return check_all_buckets();
	for (i = 1; i < argc; i++) {
		unsigned long long v;
		uint64_t lo, hi;
		unsigned b;
		char *end;

		errno = 0;
		v = strtoull(argv[i], &end, 10);
		if (!isdigit((unsigned char)*argv[i]) || errno || *end)
			return usage_error("'%s' is not a non-negative integer", argv[i]);
		b = stats_bucket(v);
		if (b >= STATS_BUCKETS)
			return check_failed("%llu: bucket %u out of range", v, b);
		stats_bucket_range(b, &lo, &hi);
		printf("%llu %u %" PRIu64 " %" PRIu64 "\n", v, b, lo, hi);
		if (v < lo || v > hi)
			return check_failed("%llu is outside its bucket", v);
	}
	return 0;
}
