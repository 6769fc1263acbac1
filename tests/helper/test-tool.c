/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool: unit tests of core/ through small commands, in the style of
 * git's t/helper/test-tool.  Each command takes its input from argv or
 * stdin and prints what the code under test made of it, so that a test
 * reads `test-tool stats <input >actual && test_cmp expect actual`.
 *
 *   stats [PCT...]           samples on stdin -> n, min, max, avg, stdev, pPCT
 *   stats-check [PCT...]     checks percentiles against exact sorted ones
 *   stats-merge [SPLIT]      checks stats_merge() against one stats of all
 *   stats-bucket V...|--all  bucket index and range of values; --all checks
 *                            that the buckets tile [0, 2^64) as documented
 *   size|count|seconds S...  units_parse_*: the value or "error"
 *   fmt-size N...            units_format_size
 *   options ARGS...          a table with every option type, parsed and printed
 *   record TEST [PATH=JSON]  record_new() with fields set
 *   get JSON PATH...         record_get/record_num/record_str
 *   labels K=V...            record_labels
 *   lat-us                   samples on stdin -> record_lat_us
 *   derive JSON SCOPE        record_derive, the copy changed, then the template
 *   render text|json FILE [--gbits] [--comment=TEXT]
 *                            the JSON array of records in FILE through output.h
 *   wire-recv [--timeout=MS] [--count=N] [MAX]
 *                            wire messages on stdin -> compact JSON lines
 *   wire-send JSON...        framed messages to stdout
 *   wire-fuzz N SEED         N random and mutated frames through wire_recv
 *   tcp-fuzz N SEED          N hostile peers against the TCP transport (fuzz-tcp.c)
 *   fleet-fuzz agent|coord N SEED ...  hostile peers of the fleet protocol (fuzz-fleet.c)
 *   plan-pairs, plan-parse, analyze   fleet schedules, plans, suspects (plan-tool.c)
 *   polar cdf|moments|analyze          hash-polarization arithmetic (polar-tool.c)
 *   push gateway|webhook|name|label|value ...  report/push.c (push-tool.c)
 *   trace SRC SPORT DST DPORT [...]   probes/trace.c, hop per line (trace-tool.c)
 *   pfc ethtool|ethtool-file|snapshot|sample|series ...  PFC counters and verdicts (pfc-tool.c)
 *   macctl HEX, macctl-fuzz N SEED    MAC control frames (PFC, PAUSE) dissected (macctl-tool.c)
 *   pfc-inject IF ..., pfcap IF S G   PFC frames sent, and captured live (pfcap-tool.c)
 *   dissect HEX, dissect-pcap FILE, pcapgen OUT SPEC..., dissect-fuzz N SEED
 *                                    RoCEv2 packets dissected, pcap files made and read
 *                                    (dissect-tool.c, dissect-fuzz.c, pktgen.c)
 *
 * Exit codes: 0 ok, 1 a check failed, 2 usage or bad input.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/error.h"
#include "../../core/net.h"
#include "../../core/options.h"
#include "../../core/output.h"
#include "../../core/record.h"
#include "../../core/stats.h"
#include "../../core/shquote.h"
#include "../../core/units.h"
#include "../../core/wire.h"
#include "test-tool.h"

#define usage_error(...) (-fs_err_usage(__VA_ARGS__))
#define check_failed(...) (-fs_err(FS_EXIT_CHECK, __VA_ARGS__))

/* ---- samples and percentiles ---- */

struct samples {
	uint64_t *v;
	size_t n, alloc;
};

static void samples_release(struct samples *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->alloc = 0;
}

static int samples_push(struct samples *s, uint64_t v)
{
	if (s->n == s->alloc) {
		size_t na = s->alloc ? 2 * s->alloc : 1024;
		uint64_t *nv = realloc(s->v, na * sizeof(*nv));

		if (!nv)
			return -fs_err_env("out of memory");
		s->v = nv;
		s->alloc = na;
	}
	s->v[s->n++] = v;
	return 0;
}

/* One non-negative integer per line; empty lines are skipped. */
static int read_samples(FILE *f, struct samples *s)
{
	char line[64];
	unsigned long lineno = 0;

	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		unsigned long long v;
		char *end;

		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		else if (!feof(f))
			return usage_error("line %lu: too long", lineno);
		if (!len)
			continue;
		errno = 0;
		v = strtoull(line, &end, 10);
		if (!isdigit((unsigned char)line[0]) || errno || *end)
			return usage_error("line %lu: '%s' is not a non-negative integer",
					   lineno, line);
		if (samples_push(s, v))
			return FS_EXIT_ENV;
	}
	return 0;
}

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

static int cmd_stats(int argc, const char **argv)
{
	struct samples smp = { 0 };
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
	rc = read_samples(stdin, &smp);
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
	samples_release(&smp);
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

static int cmd_stats_check(int argc, const char **argv)
{
	struct samples smp = { 0 };
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
	rc = read_samples(stdin, &smp);
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
	samples_release(&smp);
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

static int cmd_stats_merge(int argc, const char **argv)
{
	struct samples smp = { 0 };
	struct stats all, a, b, e;
	size_t k, split;
	char what[96];
	int rc, bad = 0;

	if (argc > 2)
		return usage_error("usage: test-tool stats-merge [SPLIT] <samples");
	if (stats_init(&all) || stats_init(&a) || stats_init(&b) || stats_init(&e))
		return -fs_err_env("out of memory");	/* the process ends */
	rc = read_samples(stdin, &smp);
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
	samples_release(&smp);
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

static int cmd_stats_bucket(int argc, const char **argv)
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

/* ---- units ---- */

static int cmd_size(int argc, const char **argv)
{
	uint64_t v;
	int i;

	for (i = 1; i < argc; i++)
		if (units_parse_size(argv[i], &v))
			printf("error\n");
		else
			printf("%" PRIu64 "\n", v);
	return 0;
}

static int cmd_count(int argc, const char **argv)
{
	uint64_t v;
	int i;

	for (i = 1; i < argc; i++)
		if (units_parse_count(argv[i], &v))
			printf("error\n");
		else
			printf("%" PRIu64 "\n", v);
	return 0;
}

static int cmd_seconds(int argc, const char **argv)
{
	double v;
	int i;

	for (i = 1; i < argc; i++)
		if (units_parse_seconds(argv[i], &v))
			printf("error\n");
		else
			printf("%.15g\n", v);
	return 0;
}

static int cmd_fmt_size(int argc, const char **argv)
{
	char buf[64];
	int i;

	for (i = 1; i < argc; i++) {
		unsigned long long v;
		char *end;

		errno = 0;
		v = strtoull(argv[i], &end, 10);
		if (!isdigit((unsigned char)*argv[i]) || errno || *end)
			return usage_error("'%s' is not a non-negative integer", argv[i]);
		units_format_size(v, buf, sizeof(buf));
		printf("%s\n", buf);
	}
	return 0;
}

/* ---- shquote [--len N] WORD...: the words quoted for sh, one line ---- */

static int cmd_shquote(int argc, const char **argv)
{
	char buf[65536] = "";
	size_t len = sizeof(buf);
	int i = 1;

	if (argc > 2 && !strcmp(argv[1], "--len")) {
		len = (size_t)atoi(argv[2]);
		if (len < 1 || len > sizeof(buf))
			return usage_error("--len takes 1 to %zu", sizeof(buf));
		i = 3;
	}
	for (; i < argc; i++)
		if (sh_quote_append(buf, len, argv[i])) {
			printf("%s\n", buf);
			fprintf(stderr, "test-tool shquote: word %d does not fit in %zu bytes\n", i, len);
			return 1;
		}
	printf("%s\n", buf);
	return 0;
}

/* ---- options ---- */

static int cmd_options(int argc, const char **argv)
{
	int flag = 0, quiet = 0, verbose = 0, num = 7, unbounded = 0;
	uint64_t count = 0, size = 0;
	double secs = 0;
	const char *str = NULL, *out = NULL;
	struct opt_list list = { NULL, 0 };
	const struct opt opts[] = {
		OPT_GROUP("Switches"),
		OPT_BOOL('b', "bool", &flag, "a boolean"),
		OPT_BOOL(0, "quiet", &quiet, "a boolean with a long name only"),
		OPT_VERBOSE(&verbose),
		OPT_GROUP("Values"),
		OPT_INT('i', "int", &num, "N", "an integer from -5 to 100 (default 7)", -5, 100),
		OPT_INT(0, "unbounded", &unbounded, "N", "an integer from 0, without an upper bound", 0, 0),
		OPT_COUNT('n', "count", &count, "N", "a count, e.g. 5000, 10K, 1M", 1, 0),
		OPT_SIZE('s', "size", &size, "SIZE", "a size up to 1G, e.g. 4096, 64K, 1M", 1, 1ll << 30),
		OPT_SECONDS('D', "seconds", &secs, "SECONDS", "a duration, e.g. 2, 0.5, 250ms"),
		OPT_STRING('t', "string", &str, "TEXT", "a string"),
		OPT_LIST('l', "list", &list, "ITEM", "a string that may be given again and again, each kept in order; this help text is long enough to be wrapped"),
		OPT_FILE('o', NULL, &out, "FILE", "an option with a short name only"),
		OPT_END(),
	};
	static const char *const usage[] = {
		"test-tool options [options] [--] [args...]",
		"test-tool options --help",
		NULL
	};
	int rc, nargs = 0, i;

	rc = opts_parse(argc, argv, opts, usage,
			"Parse the arguments with a table that holds every option type,\n"
			"then print each value and each positional argument.", &nargs);
	if (rc == OPTS_HELP) {
		rc = 0;
		goto out;
	}
	if (rc < 0) {
		rc = -rc;
		goto out;
	}
	printf("bool %d\nquiet %d\nverbose %d\nint %d\nunbounded %d\n",
	       flag, quiet, verbose, num, unbounded);
	printf("count %" PRIu64 "\nsize %" PRIu64 "\nseconds %.15g\n", count, size, secs);
	printf("string %s\no %s\n", str ? str : "(unset)", out ? out : "(unset)");
	for (i = 0; i < list.n; i++)
		printf("list %s\n", list.v[i]);
	for (i = 0; i < nargs; i++)
		printf("arg %s\n", argv[i]);
out:
	opt_list_release(&list);
	return rc;
}

/* ---- records and output ---- */

static void print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);

	printf("%s\n", s ? s : "(null)");
	free(s);
}

/* Set a dotted path ("metrics.lat_us.p50") to v, making objects on the way. */
static int set_path(json_t *rec, const char *path, json_t *v)
{
	const char *dot;

	while ((dot = strchr(path, '.'))) {
		char key[64];
		json_t *next;

		if ((size_t)(dot - path) >= sizeof(key))
			goto bad;
		memcpy(key, path, (size_t)(dot - path));
		key[dot - path] = 0;
		next = json_object_get(rec, key);
		if (!next) {
			next = json_object();
			json_object_set_new(rec, key, next);
		}
		if (!json_is_object(next))
			goto bad;
		rec = next;
		path = dot + 1;
	}
	if (!json_object_set_new(rec, path, v))
		return 0;
	v = NULL;
bad:
	json_decref(v);
	return -1;
}

static int cmd_record(int argc, const char **argv)
{
	json_t *rec;
	int i;

	if (argc < 2)
		return usage_error("usage: test-tool record TEST [PATH=JSON...]");
	rec = record_new(argv[1]);
	if (!rec)
		return check_failed("record_new('%s') returned NULL", argv[1]);
	for (i = 2; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		char path[128];
		json_t *v;

		if (!eq || (size_t)(eq - argv[i]) >= sizeof(path)) {
			json_decref(rec);
			return usage_error("'%s' is not PATH=JSON", argv[i]);
		}
		memcpy(path, argv[i], (size_t)(eq - argv[i]));
		path[eq - argv[i]] = 0;
		v = json_loads(eq + 1, JSON_DECODE_ANY, NULL);
		if (!v || set_path(rec, path, v)) {
			json_decref(rec);
			return usage_error("cannot set '%s'", argv[i]);
		}
	}
	print_json(rec);
	json_decref(rec);
	return 0;
}

static json_t *load_arg(const char *text)
{
	json_error_t err;
	json_t *j = json_loads(text, 0, &err);

	if (!j)
		fs_err_usage("invalid JSON '%s': %s", text, err.text);
	return j;
}

static int cmd_get(int argc, const char **argv)
{
	json_t *rec;
	int i;

	if (argc < 2)
		return usage_error("usage: test-tool get JSON PATH...");
	rec = load_arg(argv[1]);
	if (!rec)
		return FS_EXIT_USAGE;
	for (i = 2; i < argc; i++) {
		json_t *v = record_get(rec, argv[i]);
		char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

		printf("%s %s num=%.15g str=%s\n", argv[i], s ? s : "(absent)",
		       record_num(rec, argv[i], -1), record_str(rec, argv[i], "(none)"));
		free(s);
	}
	json_decref(rec);
	return 0;
}

static int cmd_labels(int argc, const char **argv)
{
	struct opt_list l = { argv + 1, argc - 1 };
	const char *bad = NULL;
	json_t *o = NULL;

	if (record_labels(&l, &o, &bad))
		return check_failed("bad label '%s'", bad ? bad : "(null)");
	print_json(o);
	json_decref(o);
	return 0;
}

static int cmd_lat_us(int argc, const char **argv)
{
	struct samples smp = { 0 };
	struct stats s;
	json_t *j;
	size_t k;
	int rc;

	if (argc > 1)
		return usage_error("usage: test-tool lat-us <samples");
	if (stats_init(&s))
		return -fs_err_env("out of memory");
	rc = read_samples(stdin, &smp);
	if (!rc) {
		for (k = 0; k < smp.n; k++)
			stats_add(&s, smp.v[k]);
		j = record_lat_us(&s);
		print_json(j);
		json_decref(j);
	}
	stats_release(&s);
	samples_release(&smp);
	return rc;
}

static int cmd_derive(int argc, const char **argv)
{
	json_t *tmpl, *r;

	if (argc != 3)
		return usage_error("usage: test-tool derive JSON SCOPE");
	tmpl = load_arg(argv[1]);
	if (!tmpl)
		return FS_EXIT_USAGE;
	r = record_derive(tmpl, argv[2]);
	/* what bw.c does to each per-flow record */
	if (json_is_object(json_object_get(r, "src")))
		json_object_set_new(json_object_get(r, "src"), "port", json_integer(1));
	print_json(r);
	print_json(tmpl);
	json_decref(r);
	json_decref(tmpl);
	return 0;
}

static int cmd_render(int argc, const char **argv)
{
	const char *fmt = NULL, *file = NULL, *comment = NULL;
	json_error_t err;
	json_t *recs, *rec;
	struct out o;
	size_t idx;
	int i, gbits = 0, extra = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--gbits"))
			gbits = 1;
		else if (!strncmp(argv[i], "--comment=", 10))
			comment = argv[i] + 10;
		else if (!fmt)
			fmt = argv[i];
		else if (!file)
			file = argv[i];
		else
			extra = 1;
	}
	if (extra || !fmt || !file || (strcmp(fmt, "text") && strcmp(fmt, "json")))
		return usage_error("usage: test-tool render text|json FILE [--gbits] [--comment=TEXT]");
	recs = json_load_file(file, 0, &err);
	if (!recs)
		return usage_error("unable to read '%s': %s", file, err.text);
	if (!json_is_array(recs)) {
		json_decref(recs);
		return usage_error("'%s' does not hold a JSON array", file);
	}
	out_init(&o, strcmp(fmt, "json") ? OUT_TEXT : OUT_JSON, stdout);
	o.gbits = gbits;
	if (comment)
		out_comment(&o, "%s", comment);
	json_array_foreach(recs, idx, rec)
		out_record(&o, rec);
	out_finish(&o);
	json_decref(recs);
	return 0;
}

/* ---- wire ---- */

static int parse_uint(const char *s, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return !isdigit((unsigned char)*s) || errno || *end ? -1 : 0;
}

static int cmd_wire_recv(int argc, const char **argv)
{
	unsigned long long max = WIRE_MAX_MSG, count = 1, timeout = 2000, v;
	int i, rc;

	for (i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--timeout=", 10) && !parse_uint(argv[i] + 10, &v) &&
		    v <= 600000)
			timeout = v;
		else if (!strncmp(argv[i], "--count=", 8) && !parse_uint(argv[i] + 8, &v))
			count = v;
		else if (!parse_uint(argv[i], &v) && i == argc - 1)
			max = v;
		else
			return usage_error("usage: test-tool wire-recv [--timeout=MS] [--count=N] [MAX] <frames");
	}
	/* as the sockets of fabscope are, so that the timeout applies */
	rc = net_set_nonblock(0, 1);
	if (rc)
		return -fs_err_env("stdin: %s", strerror(-rc));
	for (; count && !rc; count--) {
		json_t *msg = (json_t *)&msg;	/* must be overwritten */
		int err = wire_recv(0, &msg, (size_t)max, (int)timeout);

		if (err && msg)
			rc = check_failed("wire_recv failed (%d) but left a message", err);
		else if (err)
			rc = check_failed("%s", wire_strerror(err));
		else if (!json_is_object(msg))
			rc = check_failed("wire_recv returned 0 without an object");
		else
			print_json(msg);
		if (!err)
			json_decref(msg);
	}
	net_set_nonblock(0, 0);
	return rc;
}

static int copy_fd(int from, int to)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(from, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (char *p = buf; n > 0;) {
			ssize_t w = write(to, p, (size_t)n);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -1;
			p += w;
			n -= w;
		}
	}
	return 0;
}

/*
 * wire_send writes to sockets only (send(2) with MSG_NOSIGNAL): send into a
 * socketpair, and a child copies what comes out of it to stdout.
 */
static int cmd_wire_send(int argc, const char **argv)
{
	int sv[2], i, rc = 0, status;
	json_t **msgs;
	pid_t pid;

	if (argc < 2)
		return usage_error("usage: test-tool wire-send JSON...");
	msgs = calloc((size_t)argc, sizeof(*msgs));
	if (!msgs)
		return -fs_err_env("out of memory");
	for (i = 1; i < argc; i++) {
		json_error_t err;

		msgs[i] = json_loads(argv[i], JSON_DECODE_ANY, &err);
		if (!msgs[i]) {
			rc = usage_error("invalid JSON '%s': %s", argv[i], err.text);
			goto out;
		}
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		rc = -fs_err_env("socketpair: %s", strerror(errno));
		goto out;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		rc = -fs_err_env("fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		goto out;
	}
	if (!pid) {
		close(sv[0]);
		_exit(copy_fd(sv[1], 1) ? 1 : 0);
	}
	close(sv[1]);
	for (i = 1; i < argc && !rc; i++) {
		int err = wire_send(sv[0], msgs[i], 10000);

		if (err)
			rc = check_failed("wire_send: %s", wire_strerror(err));
	}
	close(sv[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		rc = check_failed("copying the frames to stdout failed");
out:
	for (i = 1; i < argc; i++)
		json_decref(msgs[i]);
	free(msgs);
	return rc;
}

/* splitmix64: small, fast, and the same sequence everywhere */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t *s, uint64_t n)
{
	return n ? rng_next(s) % n : 0;
}

static json_t *rand_string(uint64_t *s)
{
	static const char *const pieces[] = {
		"a", "b", "z", "0", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\x1f",
		"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "type", "version",
	};
	char buf[128] = "";
	size_t n = rng_below(s, 8), i;

	for (i = 0; i < n; i++)
		strcat(buf, pieces[rng_below(s, sizeof(pieces) / sizeof(pieces[0]))]);
	return json_string(buf);
}

static json_t *rand_object(uint64_t *s, int depth);

static json_t *rand_value(uint64_t *s, int depth)
{
	json_t *j;
	uint64_t i, n;

	switch (rng_below(s, depth >= 4 ? 5 : 7)) {
	case 0:
		return json_integer((json_int_t)rng_next(s));
	case 1:
		return json_real(ldexp((double)(int64_t)rng_next(s),
				       (int)rng_below(s, 200) - 100));
	case 2:
		return rand_string(s);
	case 3:
		return rng_below(s, 3) ? json_boolean(rng_below(s, 2)) : json_null();
	case 4:
		return json_integer((json_int_t)rng_below(s, 100));
	case 5:
		j = json_array();
		n = rng_below(s, 5);
		for (i = 0; i < n; i++)
			json_array_append_new(j, rand_value(s, depth + 1));
		return j;
	default:
		return rand_object(s, depth + 1);
	}
}

static json_t *rand_object(uint64_t *s, int depth)
{
	json_t *o = json_object();
	uint64_t i, n = rng_below(s, 6);

	for (i = 0; i < n; i++) {
		json_t *k = rand_string(s);

		json_object_set_new(o, json_string_value(k), rand_value(s, depth + 1));
		json_decref(k);
	}
	return o;
}

struct fuzz_buf {
	uint8_t *p;
	size_t len, alloc;
};

static void fb_put(struct fuzz_buf *b, const void *data, size_t n)
{
	if (b->len + n > b->alloc) {
		b->alloc = (b->len + n) * 2;
		b->p = realloc(b->p, b->alloc);
		if (!b->p) {
			fs_err_env("out of memory");
			exit(FS_EXIT_ENV);
		}
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void fb_header(struct fuzz_buf *b, uint32_t len)
{
	uint8_t h[4] = {
		(uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len
	};

	fb_put(b, h, 4);
}

static void fb_frame(struct fuzz_buf *b, const char *body, size_t len)
{
	fb_header(b, (uint32_t)len);
	fb_put(b, body, len);
}

enum fuzz_kind {
	FZ_SEND,	/* wire_send a random object: must come back equal */
	FZ_MUTATE,	/* a valid frame with body bytes changed */
	FZ_TRUNCATE,	/* a valid frame cut short: connection closed */
	FZ_TRAILER,	/* a valid frame and more bytes: left unread */
	FZ_HEADER,	/* a random length and some random bytes */
	FZ_RANDOM,	/* random bytes */
	FZ_SPECIAL,	/* nesting, duplicates, scalars, bad UTF-8, NUL */
	FZ_NKINDS
};

#define FUZZ_MAX_INPUT 60000	/* below a pipe's capacity: written before reading */

/* A hand-made body for FZ_SPECIAL; *want is the result it must give. */
static void special_body(uint64_t *s, struct fuzz_buf *body, int *want)
{
	static const char *const fixed[] = {
		"{\"a\":1,\"a\":2}", "{\"type\":\"x\",\"type\":\"x\"}", "[]", "[{}]",
		"1", "\"str\"", "null", "true", "{}x", "{} {}", "{\"a\":\"\xff\"}",
		"{\"a\":\"\xc3\"}", "{\"a\":1", "{\"a\":1}}", "{'a':1}", "{\"a\":NaN}",
		"{\"a\":1e99999}", "{\"a\":-}", "\xef\xbb\xbf{}",
	};
	uint64_t pick = rng_below(s, 4), n, i;

	if (pick == 0) {	/* deep arrays: never an object */
		n = 1 + rng_below(s, FUZZ_MAX_INPUT / 2 - 8);
		for (i = 0; i < n; i++)
			fb_put(body, "[", 1);
		for (i = 0; i < n; i++)
			fb_put(body, "]", 1);
		*want = -EPROTO;
	} else if (pick == 1) {	/* deep objects: an object unless too deep for the parser */
		n = 1 + rng_below(s, 5000);
		for (i = 0; i < n; i++)
			fb_put(body, "{\"a\":", 5);
		fb_put(body, "1", 1);
		for (i = 0; i < n; i++)
			fb_put(body, "}", 1);
		*want = 1;	/* either */
	} else if (pick == 2) {	/* an object with a NUL byte somewhere */
		char t[] = "{\"key\":\"value\"}";
		size_t at = (size_t)rng_below(s, sizeof(t) - 1);

		t[at] = 0;
		fb_put(body, t, sizeof(t) - 1);
		*want = -EPROTO;
	} else {
		const char *t = fixed[rng_below(s, sizeof(fixed) / sizeof(fixed[0]))];

		fb_put(body, t, strlen(t));
		*want = -EPROTO;
	}
}

struct fuzz_stats {
	unsigned long ok, too_large, closed, malformed;
};

/*
 * Feed one input through wire_recv on a pipe and check the result against
 * what the frame says: too short for a header or a body -> closed, length
 * 0 or above max -> too large, else an object or malformed, as jansson
 * would parse the body; never more than the frame read.
 */
static int fuzz_one(unsigned long iter, const struct fuzz_buf *in, size_t max,
		    int want, json_t *sent, struct fuzz_stats *st)
{
	json_t *msg = (json_t *)&msg, *ref = NULL;
	size_t len = 0, left = 0, expect_left;
	int fds[2], rc, expect;
	char buf[4096];
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -fs_err_env("pipe: %s", strerror(errno));
	if (in->len && write(fds[1], in->p, in->len) != (ssize_t)in->len) {
		close(fds[0]);
		close(fds[1]);
		return -fs_err_env("write to pipe: %s", strerror(errno));
	}
	close(fds[1]);
	rc = wire_recv(fds[0], &msg, max, 1000);
	while ((n = read(fds[0], buf, sizeof(buf))) > 0)
		left += (size_t)n;
	close(fds[0]);

	if (in->len >= 4)
		len = (size_t)in->p[0] << 24 | (size_t)in->p[1] << 16 |
		      (size_t)in->p[2] << 8 | in->p[3];
	expect_left = 0;
	if (in->len < 4) {
		expect = -ECONNRESET;
	} else if (!len || len > max) {
		expect = -EMSGSIZE;
		expect_left = in->len - 4;
	} else if (in->len - 4 < len) {
		expect = -ECONNRESET;
	} else {
		ref = json_loadb((const char *)in->p + 4, len, JSON_REJECT_DUPLICATES, NULL);
		expect = json_is_object(ref) ? 0 : -EPROTO;
		expect_left = in->len - 4 - len;
	}
	if (rc && msg) {
		rc = check_failed("input %lu: wire_recv returned %d with a message", iter, rc);
		goto out;
	}
	if (!rc && !json_is_object(msg)) {
		rc = check_failed("input %lu: wire_recv returned 0 without an object", iter);
		goto out;
	}
	if (rc != expect || (want <= 0 && rc != want)) {
		rc = check_failed("input %lu (%zu bytes, length %zu, max %zu): got %d (%s), expected %d",
				  iter, in->len, len, max, rc, rc ? wire_strerror(rc) : "ok",
				  want <= 0 ? want : expect);
		goto out;
	}
	/* wire_recv reads the header, then (when the length is acceptable) the body */
	if (expect != -ECONNRESET && left != expect_left) {
		rc = check_failed("input %lu: %zu bytes left unread, expected %zu",
				  iter, left, expect_left);
		goto out;
	}
	if (!rc && (!json_equal(msg, ref) || (sent && !json_equal(msg, sent)))) {
		rc = check_failed("input %lu: the message read is not the one sent", iter);
		goto out;
	}
	switch (rc) {
	case 0: st->ok++; break;
	case -EMSGSIZE: st->too_large++; break;
	case -ECONNRESET: st->closed++; break;
	default: st->malformed++; break;
	}
	rc = 0;
out:
	if (msg != (json_t *)&msg)
		json_decref(msg);
	json_decref(ref);
	return rc;
}

/* wire_send over a socketpair, wire_recv on the other end */
static int fuzz_send(unsigned long iter, json_t *obj, struct fuzz_stats *st)
{
	json_t *msg = NULL;
	int sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -fs_err_env("socketpair: %s", strerror(errno));
	rc = wire_send(sv[0], obj, 1000);
	if (!rc)
		rc = wire_recv(sv[1], &msg, WIRE_MAX_MSG, 1000);
	close(sv[0]);
	close(sv[1]);
	if (rc) {
		rc = check_failed("input %lu: send/recv: %s", iter, wire_strerror(rc));
	} else if (!json_equal(msg, obj)) {
		rc = check_failed("input %lu: the message read is not the one sent", iter);
	} else {
		st->ok++;
		rc = 0;
	}
	json_decref(msg);
	return rc;
}

static int cmd_wire_fuzz(int argc, const char **argv)
{
	static const size_t maxes[] = { 1, 16, 100, 4096, WIRE_MAX_MSG };
	unsigned long long iters, seed;
	struct fuzz_stats st = { 0 };
	struct fuzz_buf in = { 0 }, body = { 0 };
	uint64_t s;
	unsigned long it;
	int rc = 0;

	if (argc != 3 || parse_uint(argv[1], &iters) || parse_uint(argv[2], &seed))
		return usage_error("usage: test-tool wire-fuzz N SEED");
	s = seed;
	for (it = 0; it < iters && !rc; it++) {
		enum fuzz_kind kind = (enum fuzz_kind)rng_below(&s, FZ_NKINDS);
		size_t max = maxes[rng_below(&s, sizeof(maxes) / sizeof(maxes[0]))];
		json_t *obj = rand_object(&s, 0), *sent = NULL;
		char *text = json_dumps(obj, JSON_COMPACT);
		size_t tlen = text ? strlen(text) : 0, i, n;
		int want = 1;	/* 1: whatever the frame says */

		in.len = body.len = 0;
		if (!text) {
			rc = check_failed("input %lu: json_dumps failed", it);
			json_decref(obj);
			break;
		}
		switch (kind) {
		case FZ_SEND:
			rc = fuzz_send(it, obj, &st);
			goto next;
		case FZ_MUTATE:
			fb_frame(&in, text, tlen);
			n = 1 + rng_below(&s, 4);
			for (i = 0; i < n && tlen; i++) {
				static const char bytes[] = "{}[]\":,\\ 0e-\x80\xff";
				size_t at = 4 + (size_t)rng_below(&s, tlen);

				if (rng_below(&s, 2))
					in.p[at] ^= (uint8_t)(1u << rng_below(&s, 8));
				else
					in.p[at] = (uint8_t)bytes[rng_below(&s, sizeof(bytes) - 1)];
			}
			max = WIRE_MAX_MSG;
			break;
		case FZ_TRUNCATE:
			fb_frame(&in, text, tlen);
			in.len = (size_t)rng_below(&s, in.len);
			max = WIRE_MAX_MSG;
			want = -ECONNRESET;
			break;
		case FZ_TRAILER:
			fb_frame(&in, text, tlen);
			n = 1 + rng_below(&s, 64);
			for (i = 0; i < n; i++) {
				uint8_t c = (uint8_t)rng_next(&s);

				fb_put(&in, &c, 1);
			}
			max = WIRE_MAX_MSG;
			want = 0;
			sent = obj;
			break;
		case FZ_HEADER: {
			static const uint32_t lens[] = {
				0, 1, 2, 15, 16, 17, 99, 100, 101, WIRE_MAX_MSG,
				WIRE_MAX_MSG + 1, 0x7fffffff, 0x80000000, 0xffffffff
			};
			uint32_t len = rng_below(&s, 2) ? lens[rng_below(&s, 14)] :
							 (uint32_t)rng_next(&s);

			fb_header(&in, len);
			n = rng_below(&s, 128);
			for (i = 0; i < n; i++) {
				uint8_t c = (uint8_t)rng_next(&s);

				fb_put(&in, &c, 1);
			}
			break;
		}
		case FZ_RANDOM:
			n = rng_below(&s, 64);
			for (i = 0; i < n; i++) {
				uint8_t c = (uint8_t)rng_next(&s);

				/* small lengths now and then, so that some bodies are read */
				if (i < 2 && rng_below(&s, 2))
					c = 0;
				fb_put(&in, &c, 1);
			}
			break;
		case FZ_SPECIAL:
			special_body(&s, &body, &want);
			fb_frame(&in, (const char *)body.p, body.len);
			max = WIRE_MAX_MSG;
			break;
		default:
			break;
		}
		if (in.len > FUZZ_MAX_INPUT)
			in.len = FUZZ_MAX_INPUT;
		rc = fuzz_one(it, &in, max, want, sent, &st);
next:
		free(text);
		json_decref(obj);
	}
	free(in.p);
	free(body.p);
	if (rc)
		return rc < 0 ? -rc : rc;
	printf("inputs %llu\nok %lu\ntoo large %lu\nclosed %lu\nmalformed %lu\n",
	       iters, st.ok, st.too_large, st.closed, st.malformed);
	return 0;
}

/* ---- dispatch ---- */

struct tool_cmd {
	const char *name;
	int (*fn)(int argc, const char **argv);
};

static const struct tool_cmd cmds[] = {
	{ "stats", cmd_stats },
	{ "stats-check", cmd_stats_check },
	{ "stats-merge", cmd_stats_merge },
	{ "stats-bucket", cmd_stats_bucket },
	{ "size", cmd_size },
	{ "count", cmd_count },
	{ "seconds", cmd_seconds },
	{ "fmt-size", cmd_fmt_size },
	{ "options", cmd_options },
	{ "shquote", cmd_shquote },
	{ "record", cmd_record },
	{ "get", cmd_get },
	{ "labels", cmd_labels },
	{ "lat-us", cmd_lat_us },
	{ "derive", cmd_derive },
	{ "render", cmd_render },
	{ "wire-recv", cmd_wire_recv },
	{ "wire-send", cmd_wire_send },
	{ "wire-fuzz", cmd_wire_fuzz },
	{ "tcp-fuzz", tool_tcp_fuzz },
	{ "xport-alloc", tool_xport_alloc },
	{ "fleet-fuzz", tool_fleet_fuzz },
	{ "polar", tool_polar },
	{ "plan-pairs", tool_plan },
	{ "plan-parse", tool_plan },
	{ "analyze", tool_plan },
	{ "hmac", tool_hmac },
	{ "push", tool_push },
	{ "trace", tool_trace },
	{ "pfc", tool_pfc },
	{ "macctl", tool_macctl },
	{ "macctl-fuzz", tool_macctl },
	{ "pfc-inject", tool_pfcap },
	{ "pfcap", tool_pfcap },
	{ "dissect", tool_dissect },
	{ "dissect-pcap", tool_dissect },
	{ "pcapgen", tool_dissect },
	{ "dissect-fuzz", tool_dissect },
	{ "nightly", tool_nightly },
};

static int tool_usage(void)
{
	size_t i;

	fprintf(stderr, "usage: test-tool <command> [args]\ncommands:");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(stderr, " %s", cmds[i].name);
	fprintf(stderr, "\n");
	return FS_EXIT_USAGE;
}

int main(int argc, const char **argv)
{
	static char prog[64];
	size_t i;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		return tool_usage();
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmds[i].name, argv[1]))
			break;
	if (i == sizeof(cmds) / sizeof(cmds[0])) {
		fs_set_progname("test-tool");
		fs_err_usage("unknown command '%s'", argv[1]);
		return tool_usage();
	}
	snprintf(prog, sizeof(prog), "test-tool %s", cmds[i].name);
	fs_set_progname(prog);
	rc = cmds[i].fn(argc - 1, argv + 1);
	if (fflush(stdout) || ferror(stdout))
		return -fs_err_env("unable to write to stdout");
	return rc;
}
