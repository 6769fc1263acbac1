/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool pfc: probes/counters*.c and probes/pfc.c (tests/t0210-unit-pfc.t,
 * tests/t2400-netns-ethtool.t).
 *
 *   pfc ethtool IFNAME [--driver]   the raw ethtool statistics through the
 *                                   ioctl, "name: value" per line (--driver:
 *                                   the driver's name only)
 *   pfc ethtool-file PATH           the same from a fixture file
 *   pfc snapshot SOURCE... [--at T] a snapshot file on stdout, after a
 *                                   "# sources: ..." line and, when known, a
 *                                   "# link G Gb/s" line; --at sets its time
 *   pfc sample SOURCE... --interval S --count N --out PREFIX
 *                                   the sampler: PREFIX.0 ... PREFIX.N-1, and
 *                                   "samples N" and "gap I SECONDS" lines
 *   pfc series [PARAMS] FILE...     the intervals between snapshot files and
 *                                   the verdict (lines below)
 *
 * SOURCE: --root DIR, --if IFNAME, --rdma DEV, --port N, --driver NAME.
 * PARAMS: --link-gbps G, --quanta Q, --storm-fraction F, --storm-intervals N.
 *
 * series prints, per interval K:
 *   iv K T0 T1
 *   iv K prio P rx_pps X tx_pps X rx_paused F tx_paused F rx_est 0|1 tx_est 0|1 discards_ps X
 *   iv K port NAME DELTA              (each port metric present)
 *   iv K reset METRIC                 (each counter that went down)
 * then
 *   verdict prio P present 0|1 rx_frames N tx_frames N storm_rx yes|no RUN FROM
 *           storm_tx yes|no RUN FROM first_pause K ecn_first yes|no|unknown
 *   verdict port intervals N ecn_present 0|1 first_ecn K first_pause K
 *           ecn_first yes|no|unknown storm yes|no resets N
 *   text ...                          pfc_prio_text of present priorities, pfc_port_text
 * Unknown values print as "-".
 * Exit codes: 0 ok, 2 usage or a malformed file, 3 environment.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../probes/counters.h"
#include "../../probes/pfc.h"
#include "test-tool.h"

#define PFC_USAGE "usage: test-tool pfc ethtool IFNAME [--driver] | ethtool-file PATH | " \
	"snapshot SOURCE... [--at T] | sample SOURCE... --interval S --count N --out PREFIX | " \
	"series [--link-gbps G] [--quanta Q] [--storm-fraction F] [--storm-intervals N] FILE..."

static int parse_dbl(const char *opt, const char *s, double lo, double hi, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || *end || !(*v >= lo && *v <= hi))
		return usage_error("%s: '%s' is not a number in [%g, %g]", opt, s, lo, hi);
	return 0;
}

static int parse_int(const char *opt, const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	if (errno || end == s || *end || *v < lo || *v > hi)
		return usage_error("%s: '%s' is not an integer in [%ld, %ld]", opt, s, lo, hi);
	return 0;
}

static void print_raw(const struct ctr_raw *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		printf("%s: %llu\n", r->name[i], (unsigned long long)r->val[i]);
}

static int cmd_ethtool(int argc, const char **argv, int from_file)
{
	struct ctr_raw r;
	int rc;

	if (!from_file && argc == 3 && !strcmp(argv[2], "--driver")) {
		char drv[64];

		rc = ctr_ethtool_driver(argv[1], drv, sizeof(drv));
		if (!rc)
			printf("%s\n", drv);
		return -rc;
	}
	if (argc != 2)
		return usage_error(PFC_USAGE);
	rc = from_file ? ctr_ethtool_fixture(argv[1], &r) : ctr_ethtool_stats(argv[1], &r);
	if (rc)
		return -rc;
	print_raw(&r);
	ctr_raw_release(&r);
	return 0;
}

struct src_args {
	struct ctr_opts o;
	double at;		/* NAN: the clock's */
	double interval;
	long count;
	const char *out;
};

/* SOURCE options and the extra ones of snapshot and sample */
static int parse_src(int argc, const char **argv, struct src_args *a)
{
	int i;

	memset(a, 0, sizeof(*a));
	a->at = NAN;
	for (i = 1; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		long l;
		int rc = 0;

		if (!val)
			return usage_error("option '%s' needs a value; " PFC_USAGE, opt);
		i++;
		if (!strcmp(opt, "--root"))
			a->o.root = val;
		else if (!strcmp(opt, "--if"))
			a->o.ifname = val;
		else if (!strcmp(opt, "--rdma"))
			a->o.rdma_dev = val;
		else if (!strcmp(opt, "--driver"))
			a->o.driver = val;
		else if (!strcmp(opt, "--port")) {
			rc = parse_int(opt, val, 1, 255, &l);
			a->o.port = rc ? 0 : (int)l;
		}
		else if (!strcmp(opt, "--at"))
			rc = parse_dbl(opt, val, 0, 1e12, &a->at);
		else if (!strcmp(opt, "--interval"))
			rc = parse_dbl(opt, val, 0.001, 60, &a->interval);
		else if (!strcmp(opt, "--count"))
			rc = parse_int(opt, val, 1, 100000, &a->count);
		else if (!strcmp(opt, "--out"))
			a->out = val;
		else
			return usage_error("unknown option '%s'; " PFC_USAGE, opt);
		if (rc)
			return rc;
	}
	return 0;
}

static void print_sources(const struct counters *c)
{
	char desc[1024];

	counters_describe(c, desc, sizeof(desc));
	printf("# sources: %s\n", desc);
	if (counters_link_gbps(c) > 0)
		printf("# link %g Gb/s\n", counters_link_gbps(c));
}

static int cmd_snapshot(int argc, const char **argv)
{
	struct src_args a;
	struct counters *c;
	struct ctr_snapshot s;
	int rc = parse_src(argc, argv, &a);

	if (rc)
		return rc;
	rc = counters_open(&c, &a.o);
	if (rc)
		return -rc;
	rc = counters_read(c, &s);
	if (!rc) {
		if (!isnan(a.at))
			s.t = a.at;
		print_sources(c);
		rc = ctr_snapshot_write(stdout, &s);
	}
	counters_free(c);
	return -rc;
}

static int cmd_sample(int argc, const char **argv)
{
	struct pfc_series ser = { 0 };
	struct src_args a;
	struct counters *c;
	char path[4096];
	int rc = parse_src(argc, argv, &a), i;

	if (rc)
		return rc;
	if (!a.interval || !a.count || !a.out)
		return usage_error("sample needs --interval, --count and --out");
	rc = counters_open(&c, &a.o);
	if (rc)
		return -rc;
	rc = pfc_sample(c, a.interval, (int)a.count, NULL, NULL, NULL, &ser);
	if (!rc)
		print_sources(c);
	counters_free(c);
	for (i = 0; !rc && i < ser.n; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s.%d", a.out, i);
		f = fopen(path, "we");
		if (!f) {
			rc = fs_err_env("unable to create '%s': %s", path, strerror(errno));
			break;
		}
		rc = ctr_snapshot_write(f, &ser.s[i]);
		if (fclose(f) && !rc)
			rc = fs_err_env("unable to write '%s'", path);
	}
	if (!rc) {
		printf("samples %d\n", ser.n);
		for (i = 1; i < ser.n; i++)
			printf("gap %d %.6f\n", i, ser.s[i].t - ser.s[i - 1].t);
	}
	pfc_series_release(&ser);
	return -rc;
}

static void pnum(const char *key, double x, int decimals)
{
	if (isnan(x))
		printf(" %s -", key);
	else
		printf(" %s %.*f", key, decimals, x);
}

static void print_interval(int k, const struct pfc_interval *iv)
{
	char name[48];
	int prio, i;

	printf("iv %d %.6f %.6f\n", k, iv->t0, iv->t1);
	for (prio = 0; prio < CTR_PRIOS; prio++) {
		const struct pfc_prio_interval *pi = &iv->prio[prio];

		if (isnan(pi->pps[PFC_RX]) && isnan(pi->pps[PFC_TX]) && isnan(pi->paused[PFC_RX]) &&
		    isnan(pi->paused[PFC_TX]) && isnan(pi->discards_ps))
			continue;
		printf("iv %d prio %d", k, prio);
		pnum("rx_pps", pi->pps[PFC_RX], 3);
		pnum("tx_pps", pi->pps[PFC_TX], 3);
		pnum("rx_paused", pi->paused[PFC_RX], 6);
		pnum("tx_paused", pi->paused[PFC_TX], 6);
		printf(" rx_est %d tx_est %d", pi->estimated[PFC_RX], pi->estimated[PFC_TX]);
		pnum("discards_ps", pi->discards_ps, 3);
		printf("\n");
	}
	for (i = ctr_port_idx(0); i < CTR_NMETRICS; i++)
		if (iv->have[i])
			printf("iv %d port %s %llu\n", k, ctr_metric_name(i, name, sizeof(name)) + 5,
			       (unsigned long long)iv->delta[i]);
	for (i = 0; i < CTR_NMETRICS; i++)
		if (iv->reset[i])
			printf("iv %d reset %s\n", k, ctr_metric_name(i, name, sizeof(name)));
}

static void print_verdict(const struct pfc_verdict *v, const struct pfc_params *p)
{
	char text[1024];
	int prio, d;

	for (prio = 0; prio < CTR_PRIOS; prio++) {
		const struct pfc_prio_verdict *pv = &v->prio[prio];

		printf("verdict prio %d present %d rx_frames %llu tx_frames %llu", prio, pv->present,
		       (unsigned long long)pv->frames[PFC_RX], (unsigned long long)pv->frames[PFC_TX]);
		for (d = 0; d < 2; d++)
			printf(" storm_%s %s %d %d", d ? "tx" : "rx", pv->storm[d] ? "yes" : "no",
			       pv->storm_run[d], pv->storm_from[d]);
		printf(" first_pause %d ecn_first %s\n", pv->first_pause, pfc_tri_name(pv->ecn_first));
	}
	printf("verdict port intervals %d ecn_present %d first_ecn %d first_pause %d ecn_first %s "
	       "storm %s resets %d\n", v->intervals, v->ecn_present, v->first_ecn, v->first_pause,
	       pfc_tri_name(v->ecn_first), v->storm ? "yes" : "no", v->resets);
	for (prio = 0; prio < CTR_PRIOS; prio++) {
		if (!v->prio[prio].present)
			continue;
		pfc_prio_text(v, p, prio, text, sizeof(text));
		printf("text %s\n", text);
	}
	pfc_port_text(v, text, sizeof(text));
	printf("text %s\n", text);
}

static int cmd_series(int argc, const char **argv)
{
	struct pfc_series ser = { 0 };
	struct pfc_interval *iv = NULL;
	struct pfc_verdict v;
	struct pfc_params p;
	struct ctr_snapshot s;
	int i, n, rc = 0;

	pfc_params_init(&p);
	for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i += 2) {
		long l;

		if (i + 1 >= argc)
			return usage_error("option '%s' needs a value", argv[i]);
		if (!strcmp(argv[i], "--link-gbps"))
			rc = parse_dbl(argv[i], argv[i + 1], 0, 1e5, &p.link_gbps);
		else if (!strcmp(argv[i], "--quanta")) {
			rc = parse_int(argv[i], argv[i + 1], 0, 65535, &l);
			p.quanta = rc ? 0 : (unsigned)l;
		}
		else if (!strcmp(argv[i], "--storm-fraction"))
			rc = parse_dbl(argv[i], argv[i + 1], 0, 1, &p.storm_fraction);
		else if (!strcmp(argv[i], "--storm-intervals")) {
			rc = parse_int(argv[i], argv[i + 1], 1, 1000000, &l);
			p.storm_intervals = rc ? 0 : (int)l;
		}
		else
			return usage_error("unknown option '%s'; " PFC_USAGE, argv[i]);
		if (rc)
			return rc;
	}
	if (argc - i < 2)
		return usage_error("series needs two snapshot files at least");
	for (; i < argc; i++) {
		rc = ctr_snapshot_read(argv[i], &s);
		if (!rc)
			rc = pfc_series_add(&ser, &s);
		if (rc)
			goto out;
	}
	rc = pfc_series_intervals(&ser, &p, &iv, &n);
	if (!rc)
		rc = pfc_judge(iv, n, &p, &v);
	if (rc)
		goto out;
	for (i = 0; i < n; i++)
		print_interval(i, &iv[i]);
	print_verdict(&v, &p);
out:
	free(iv);
	pfc_series_release(&ser);
	return -rc;
}

int tool_pfc(int argc, const char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "ethtool"))
		return cmd_ethtool(argc - 1, argv + 1, 0);
	if (argc >= 2 && !strcmp(argv[1], "ethtool-file"))
		return cmd_ethtool(argc - 1, argv + 1, 1);
	if (argc >= 2 && !strcmp(argv[1], "snapshot"))
		return cmd_snapshot(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "sample"))
		return cmd_sample(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "series"))
		return cmd_series(argc - 1, argv + 1);
	return usage_error(PFC_USAGE);
}
