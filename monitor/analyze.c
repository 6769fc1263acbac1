/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fabscope monitor analyze: the agents' probe counters, interval after
 * interval, into link and NIC verdicts (fabscope-monitor-analyze(1)).
 */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/builtin.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/options.h"
#include "../core/outfile.h"
#include "../core/slurp.h"
#include "../report/push.h"
#include "analyze.h"
#include "promql.h"
#include "scrape.h"

struct an_opts {
	const char *topology, *paths, *json, *verdicts, *webhook, *prometheus;
	double at;
	struct opt_list metrics, replay;	/* replay: the positional arguments */
	int replaying;
	double interval_s, slow_s, base_loss, min_rate, min_score;
	int count, k, sport_base, sport_width, timeout_ms, max_traces, verbose;
	uint64_t max_body, max_groups;
};

/* the traced paths of --paths: (port_a, port_b, sport) -> hops forward and back */
struct an_paths {
	struct loc_map map;
	uint32_t *hop;			/* every path's switches, one after another */
	size_t nhop, hop_alloc;
	struct an_path {
		size_t fwd, rev;	/* offsets into hop */
		int nfwd, nrev;
	} *p;
	size_t np, p_alloc;
};

struct an {
	struct an_opts o;
	struct topo t;
	struct mon_analyzer a;
	struct scrape s;
	struct an_paths paths;
	FILE *json;
	struct outfile json_of;
	int json_open;
	long intervals;
};

static uint64_t path_key(uint32_t pa, uint32_t pb, int sport)
{
	return (uint64_t)pa << 40 | (uint64_t)pb << 16 | (uint64_t)(sport & 0xffff);
}

/* a JSON array of switch names into hop[]: its count, or -1 (said into why) */
static int path_hops(struct an *an, json_t *arr, char *why, size_t len)
{
	size_t i;
	json_t *v;

	if (!json_is_array(arr) || json_array_size(arr) < 1 || json_array_size(arr) > MON_MAX_HOPS) {
		snprintf(why, len, "fwd and rev are arrays of 1 to %d switch names", MON_MAX_HOPS);
		return -1;
	}
	json_array_foreach(arr, i, v) {
		int sw = json_is_string(v) ? topo_switch_index(&an->t, json_string_value(v)) : -1;

		if (sw < 0) {
			snprintf(why, len, "'%s' is no switch of the design", json_is_string(v) ? json_string_value(v) : "?");
			return -1;
		}
		if (FS_ALLOC_GROW(an->paths.hop, an->paths.nhop + 1, an->paths.hop_alloc)) {
			snprintf(why, len, "out of memory");
			return -1;
		}
		an->paths.hop[an->paths.nhop++] = (uint32_t)sw;
	}
	return (int)json_array_size(arr);
}

static int paths_line(struct an *an, const char *line, size_t len, char *why, size_t wlen)
{
	json_error_t je;
	json_t *o = json_loadb(line, len, 0, &je);
	const char *node = NULL, *peer = NULL;
	json_int_t rail = -1, plane = -1, sport = -1;
	long ha, hb, pa, pb;
	struct an_path p;
	json_t *fwd, *rev;
	int rc = -1;

	if (!o || json_unpack_ex(o, &je, 0, "{s:s, s:s, s:I, s:I, s:I, s:o, s:o}", "node", &node, "peer", &peer, "rail",
				 &rail, "plane", &plane, "sport", &sport, "fwd", &fwd, "rev", &rev)) {
		snprintf(why, wlen, "%s", je.text);
		goto out;
	}
	if (rail < 0 || rail > 65535 || plane < 0 || plane > 65535 || sport < 1 || sport > 65535) {
		snprintf(why, wlen, "rail, plane are 0 to 65535 and sport 1 to 65535");
		goto out;
	}
	if ((ha = loc_host(&an->a.net, node)) < 0 || (hb = loc_host(&an->a.net, peer)) < 0 ||
	    (pa = loc_port_of(&an->a.net, (size_t)ha, (int)rail, (int)plane)) < 0 ||
	    (pb = loc_port_of(&an->a.net, (size_t)hb, (int)rail, (int)plane)) < 0) {
		snprintf(why, wlen, "%s -> %s rail %d plane %d is no pair of NIC ports of the design", node, peer,
			 (int)rail, (int)plane);
		goto out;
	}
	p.fwd = an->paths.nhop;
	if ((p.nfwd = path_hops(an, fwd, why, wlen)) < 0)
		goto out;
	p.rev = an->paths.nhop;
	if ((p.nrev = path_hops(an, rev, why, wlen)) < 0)
		goto out;
	if (FS_ALLOC_GROW(an->paths.p, an->paths.np + 1, an->paths.p_alloc) ||
	    loc_map_put(&an->paths.map, path_key((uint32_t)pa, (uint32_t)pb, (int)sport), (uint32_t)an->paths.np)) {
		snprintf(why, wlen, "out of memory");
		goto out;
	}
	an->paths.p[an->paths.np++] = p;
	rc = 0;
out:
	json_decref(o);
	return rc;
}

/* --paths FILE: JSON lines of traced 5-tuples */
static int paths_read(struct an *an, const char *file)
{
	char *text = fs_slurp(file, (size_t)an->o.max_body), *p, *nl, why[256];
	long line = 0;

	if (!text)
		return fs_err_read("the traced paths", file, errno);
	for (p = text; *p; p = nl ? nl + 1 : p + strlen(p)) {
		nl = strchr(p, '\n');
		line++;
		if (p[strspn(p, " \t\r")] == '\n' || !p[strspn(p, " \t\r")])
			continue;
		if (paths_line(an, p, nl ? (size_t)(nl - p) : strlen(p), why, sizeof(why))) {
			free(text);
			return fs_err_usage("%s:%ld: %s (a line is {\"node\", \"peer\", \"rail\", \"plane\", \"sport\", "
					    "\"fwd\": [switches], \"rev\": [switches]})", file, line, why);
		}
	}
	free(text);
	return 0;
}

static int paths_trace(void *ctx, const struct loc_net *n, const struct mon_group *g, uint32_t pa, uint32_t pb,
		       int sport0, int nports, uint32_t (*fwd)[MON_MAX_HOPS], int *nfwd, uint32_t (*rev)[MON_MAX_HOPS],
		       int *nrev)
{
	struct an *an = ctx;
	int i;

	for (i = 0; i < nports; i++) {
		long k = loc_map_get(&an->paths.map, path_key(pa, pb, sport0 + i));
		const struct an_path *p;

		if (k < 0) {
			fs_log(1, "%s -> %s rail %d plane %d source port %d: no traced path in --paths; the design's "
			       "candidates stand", g->node, g->peer, g->rail, g->plane, sport0 + i);
			return 1;
		}
		p = &an->paths.p[k];
		memcpy(fwd[i], an->paths.hop + p->fwd, (size_t)p->nfwd * sizeof(uint32_t));
		memcpy(rev[i], an->paths.hop + p->rev, (size_t)p->nrev * sizeof(uint32_t));
		nfwd[i] = p->nfwd;
		nrev[i] = p->nrev;
	}
	return 0;
}

/* --verdicts FILE: the named links and NICs as Prometheus text, replaced whole */
static int write_verdicts(struct an *an)
{
	struct outfile of;
	FILE *f;
	int rc;

	if (!an->o.verdicts)
		return 0;
	if ((rc = outfile_create(&of, an->o.verdicts, 0644)))
		return rc;
	if (!(f = outfile_stream(&of)) || loc_write_prom(f, &an->a.net, &an->a.track)) {
		outfile_abort(&of);
		return fs_err_env("unable to write the verdicts to %s", an->o.verdicts);
	}
	return outfile_commit(&of, 0);
}

/* --webhook URL: each change, POSTed; a failure is said and the analysis goes on */
static void post_changes(struct an *an, const char *when)
{
	struct push_opts po = { .timeout_ms = an->o.timeout_ms, .retries = 1 };
	char *text = NULL;
	size_t len = 0;
	FILE *m;
	struct loc_track one;

	if (!an->o.webhook || !an->a.track.nch)
		return;
	/* the change lines alone: the interval's track, its changes, written to memory */
	if (!(m = open_memstream(&text, &len)))
		return;
	one = an->a.track;
	loc_write_json(m, &an->a.net, &an->a.vote, &one, when, an->o.k);
	fclose(m);
	if (text) {
		char *p = strchr(text, '\n');	/* skip the interval's line */

		for (p = p ? p + 1 : text; *p;) {
			char *nl = strchr(p, '\n');

			if (nl)
				*nl = 0;
			push_webhook(an->o.webhook, p, &po);
			p = nl ? nl + 1 : p + strlen(p);
		}
	}
	free(text);
}

/* the interval's time in the JSON lines: none for --replay (the same scrapes, the same lines), the
 * query's time with --at, else now */
static void interval_time(const struct an *an, double at, char *when, size_t len)
{
	time_t t = (time_t)at;
	struct tm tm;

	if (an->o.replay.n)
		when[0] = 0;
	else if (at > 0 && gmtime_r(&t, &tm))
		strftime(when, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	else
		clock_iso8601(when, (int)len);
}

static int one_interval(struct an *an, double at)
{
	char when[40];
	int rc;

	if ((rc = scrape_interval(&an->s)))
		return rc;
	if ((rc = mon_analyze_interval(&an->a, an->s.out, an->s.nout)))
		return rc;
	an->intervals++;
	if (an->s.skipped || an->a.untraceable)
		fs_log(1, "interval %ld: %ld samples not in the design, %ld groups without traced paths", an->intervals,
		       an->s.skipped, an->a.untraceable);
	interval_time(an, at, when, sizeof(when));
	if (loc_write_json(an->json, &an->a.net, &an->a.vote, &an->a.track, *when ? when : NULL, an->o.k) ||
	    fflush(an->json))
		return fs_err_env("unable to write the verdicts' JSON lines%s%s", an->o.json ? " to " : "",
				  an->o.json ? an->o.json : "");
	post_changes(an, *when ? when : NULL);
	return write_verdicts(an);
}

/* one scrape: every --metrics URL, or the replay file i */
static int scrape_once(struct an *an, int i)
{
	int rc = 0, j;

	scrape_begin(&an->s);
	if (an->o.replay.n) {
		char *text = fs_slurp(an->o.replay.v[i], (size_t)an->o.max_body);

		if (!text)
			return fs_err_read("a scrape to replay", an->o.replay.v[i], errno);
		rc = scrape_body(&an->s, an->o.replay.v[i], text, strlen(text));
		free(text);
		return rc == -FS_EXIT_PEER ? 0 : rc;	/* said; what it held before the fault is kept */
	}
	for (j = 0; j < an->o.metrics.n && !net_stop; j++) {
		char *body;
		size_t len;

		rc = push_fetch(an->o.metrics.v[j], (size_t)an->o.max_body, an->o.timeout_ms, &body, &len);
		if (rc == -FS_EXIT_INTERRUPTED)
			return rc;
		if (rc)
			continue;	/* said: that agent is missing from this scrape */
		rc = scrape_body(&an->s, an->o.metrics.v[j], body, len);
		free(body);
		if (rc && rc != -FS_EXIT_PEER)
			return rc;
	}
	return net_stop ? -FS_EXIT_INTERRUPTED : 0;
}

static int sleep_interval(double s)
{
	uint64_t end;

	if (!(s > 0))
		return net_stop ? -FS_EXIT_INTERRUPTED : 0;	/* the interval's work took it all */
	end = clock_ns() + (uint64_t)(s * 1e9);

	while (!net_stop && clock_ms_left(end) > 0)
		poll(NULL, 0, clock_ms_left(end) > 200 ? 200 : clock_ms_left(end));
	return net_stop ? -FS_EXIT_INTERRUPTED : 0;
}

/* --prometheus: an interval a query, at --at and after (no waiting), or now */
static int run_promql(struct an *an)
{
	struct promql_opts po = { an->o.interval_s, (size_t)an->o.max_body, an->o.timeout_ms };
	long i;
	int rc;

	for (i = 0; !an->o.count || i < an->o.count; i++) {
		uint64_t t0 = clock_ns();
		double at = an->o.at > 0 ? an->o.at + (double)i * an->o.interval_s : 0;

		if ((rc = promql_interval(&an->s, an->o.prometheus, at, &po)) || (rc = one_interval(an, at)))
			return rc;
		if (!an->o.at && (!an->o.count || i + 1 < an->o.count) &&
		    (rc = sleep_interval(an->o.interval_s - (clock_ns() - t0) / 1e9)))
			return rc;
	}
	return an->a.track.nnamed ? -FS_EXIT_CHECK : 0;
}

static int run(struct an *an)
{
	int i, rc;
	long scrapes = an->o.replay.n ? an->o.replay.n : an->o.count ? an->o.count + 1 : -1;

	if (an->o.prometheus)
		return run_promql(an);
	for (i = 0; scrapes < 0 || i < scrapes; i++) {
		uint64_t t0 = clock_ns();

		if ((rc = scrape_once(an, i)))
			return rc;
		if (i > 0 && (rc = one_interval(an, 0)))
			return rc;
		if (!an->o.replay.n && (scrapes < 0 || i + 1 < scrapes) &&
		    (rc = sleep_interval(an->o.interval_s - (clock_ns() - t0) / 1e9)))
			return rc;
	}
	return an->a.track.nnamed ? -FS_EXIT_CHECK : 0;
}

static const char *const an_usage[] = {
	"fabscope monitor analyze --topology FILE (--metrics URL... | --prometheus URL | --replay SCRAPE...) [options]",
	NULL,
};

static const char an_about[] =
	"Read the monitor agents' probe counters per interval (their /metrics, a Prometheus server's "
	"increase(), or scrapes saved in files), "
	"trace or take the design's paths of the probe groups whose probes went bad, and vote: the link or NIC "
	"on the paths of the failing groups and off the healthy ones is named, once a suspect in K intervals in "
	"a row, and cleared after K without.  Verdicts as JSON lines (one per interval, one per change), as "
	"Prometheus text (fabscope_link_suspect, fabscope_nic_suspect) and to a webhook.  Exit 1 when a link "
	"or NIC is named at the end.  See fabscope-monitor-analyze(1).";

static int an_check(struct an *an)
{
	if (!an->o.topology)
		return fs_err_usage("monitor analyze needs the design: --topology FILE (fabscope-topology(5))");
	if ((an->o.metrics.n > 0) + (an->o.replay.n > 0) + !!an->o.prometheus != 1)
		return fs_err_usage("monitor analyze reads the agents' --metrics URL, a Prometheus server "
				    "(--prometheus URL) or saved scrapes (--replay): give one of them");
	if (an->o.at > 0 && !an->o.prometheus)
		return fs_err_usage("--at is a time of a Prometheus server's data: with --prometheus");
	if (an->o.prometheus && (an->o.interval_s < 1 || (push_check_urls(NULL, an->o.prometheus))))
		return an->o.interval_s < 1 ? fs_err_usage("--prometheus: the --interval is whole seconds, 1 or more")
					    : -FS_EXIT_USAGE;
	if (an->o.replay.n == 1)
		return fs_err_usage("--replay needs two scrapes or more: an interval is from one to the next");
	if (an->o.sport_width > MON_MAX_TRACE_PORTS && an->o.paths)
		fs_warn("--sport-width %d: buckets wider than %d ports are not traced; --paths is not used",
			an->o.sport_width, MON_MAX_TRACE_PORTS);
	return an->o.webhook ? push_check_urls(NULL, an->o.webhook) : 0;
}

static int an_setup(struct an *an)
{
	struct loc_opts lo = LOC_OPTS_INIT;
	int rc;

	lo.k = an->o.k;
	if (an->o.base_loss > 0)
		lo.base_loss = an->o.base_loss;
	if (an->o.min_rate > 0)
		lo.min_rate = an->o.min_rate;
	if (an->o.min_score > 0)
		lo.min_score = an->o.min_score;
	topo_init(&an->t);
	if ((rc = topo_read(&an->t, an->o.topology, NULL)) ||
	    (rc = mon_analyzer_init(&an->a, &an->t, &lo, an->o.sport_base, an->o.sport_width)))
		return rc;
	an->a.max_traces = an->o.max_traces;
	scrape_init(&an->s, &an->a.net, an->o.slow_s, (size_t)an->o.max_groups);
	if (an->o.paths) {
		if ((rc = paths_read(an, an->o.paths)))
			return rc;
		an->a.tracer = (struct mon_tracer){ paths_trace, an };
	}
	an->json = stdout;
	if (an->o.json && strcmp(an->o.json, "-")) {
		if ((rc = outfile_create(&an->json_of, an->o.json, 0644)) || (rc = outfile_publish(&an->json_of, 1)))
			return rc;
		an->json_open = 1;
		if (!(an->json = outfile_stream(&an->json_of)))
			return fs_err_env("unable to write to %s", an->o.json);
	}
	return 0;
}

static void an_release(struct an *an)
{
	if (an->json_open)
		outfile_commit(&an->json_of, 0);
	scrape_release(&an->s);
	mon_analyzer_release(&an->a);
	topo_release(&an->t);
	loc_map_release(&an->paths.map);
	free(an->paths.hop);
	free(an->paths.p);
}

int cmd_monitor_analyze(int argc, const char **argv)
{
	struct an an = { .o = { .interval_s = 10, .k = 3, .sport_base = 49152, .sport_width = 1, .timeout_ms = 5000,
				.max_traces = 256, .max_body = 64u << 20, .max_groups = 4u << 20 } };
	const struct opt tab[] = {
		OPT_GROUP("input"),
		OPT_FILE(0, "topology", &an.o.topology, "FILE", "the intended topology (fabscope-topology(5)): the switches, "
			 "cables and NIC ports the paths and verdicts name"),
		OPT_LIST(0, "metrics", &an.o.metrics, "URL", "an agent's /metrics (repeatable): scraped every interval"),
		OPT_BOOL(0, "replay", &an.o.replaying, "the arguments are saved scrapes of every agent, in order: an "
			 "interval from each to the next, no waiting"),
		OPT_STRING(0, "prometheus", &an.o.prometheus, "URL", "a Prometheus server that scrapes the agents "
			   "(http://HOST:9090): increase() of their counters over each interval"),
		OPT_NUMBER(0, "at", &an.o.at, "TIME", "--prometheus: the first interval ends at this unix time, the "
			   "next --interval after, no waiting (history); default: now, live"),
		OPT_FILE(0, "paths", &an.o.paths, "FILE", "traced paths of 5-tuples, JSON lines {node, peer, rail, plane, "
			 "sport, fwd: [switches], rev: [switches]}; without: the design's candidates"),
		OPT_INT(0, "sport-base", &an.o.sport_base, "PORT", "the first source port of bucket 0 (default 49152)", 1, 65535),
		OPT_INT(0, "sport-width", &an.o.sport_width, "W", "source ports a bucket: bucket b is [base + b W, "
			"base + (b + 1) W) (default 1: the agent's default range of 16 ports in 16 buckets)", 1, 65535),
		OPT_GROUP("judging"),
		OPT_INT('K', "persist", &an.o.k, "K", "intervals in a row before a suspect is named, and without "
			"before it is cleared (default 3)", 1, 1000),
		OPT_SECONDS0(0, "slow", &an.o.slow_s, "SECONDS", "count probes slower than this as bad (the next RTT "
			     "bucket bound up; default 0: loss only)"),
		OPT_NUMBER(0, "base-loss", &an.o.base_loss, "P", "the least baseline loss assumed (default 0.00001)"),
		OPT_NUMBER(0, "min-rate", &an.o.min_rate, "P", "a suspect's least rate of bad probes (default 0.002)"),
		OPT_NUMBER(0, "min-score", &an.o.min_score, "S", "a suspect's least log-likelihood ratio (default 20)"),
		OPT_INT(0, "max-traces", &an.o.max_traces, "N", "groups newly traced an interval (default 256)", 0, 1 << 20),
		OPT_GROUP("running"),
		OPT_SECONDS(0, "interval", &an.o.interval_s, "SECONDS", "--metrics: between scrapes; --prometheus: the "
			    "increase()'s range (default 10)"),
		OPT_INT(0, "count", &an.o.count, "N", "--metrics, --prometheus: stop after N intervals (default 0: run "
			"until SIGINT/SIGTERM)", 0, 1 << 30),
		OPT_INT(0, "timeout", &an.o.timeout_ms, "MS", "each scrape and webhook POST (default 5000)", 1, 600000),
		OPT_SIZE(0, "max-body", &an.o.max_body, "SIZE", "the most read of one scrape or file (default 64M)", 1024,
			 1ll << 34),
		OPT_COUNT(0, "max-groups", &an.o.max_groups, "N", "probe groups kept (default 4M; 80 bytes each)", 1,
			  1ll << 32),
		OPT_GROUP("output"),
		OPT_FILE(0, "json", &an.o.json, "FILE", "the JSON lines (default: stdout; never through a symlink)"),
		OPT_FILE(0, "verdicts", &an.o.verdicts, "FILE", "the named links and NICs as Prometheus text, replaced "
			 "every interval (node_exporter's textfile collector reads such files)"),
		OPT_STRING(0, "webhook", &an.o.webhook, "URL", "POST each change (a JSON object) here"),
		OPT_VERBOSE(&an.o.verbose),
		OPT_END(),
	};
	int nargs = 0, rc;

	rc = opts_parse(argc, argv, tab, an_usage, an_about, &nargs);
	if (rc == OPTS_HELP)
		return 0;
	if (rc)
		return -rc;
	if ((nargs && !an.o.replaying) || (an.o.replaying && !nargs))
		free(an.o.metrics.v);
	if (nargs && !an.o.replaying)
		return -fs_err_usage("monitor analyze: '%s': saved scrapes are read with --replay (usage: %s)", argv[0],
				     an_usage[0]);
	if (an.o.replaying && !nargs)
		return -fs_err_usage("monitor analyze --replay: give the saved scrapes, in order (usage: %s)", an_usage[0]);
	an.o.replay.v = argv;
	an.o.replay.n = an.o.replaying ? nargs : 0;
	fs_set_verbosity(an.o.verbose);
	if ((rc = an_check(&an))) {
		free(an.o.metrics.v);
		return -rc;
	}
	net_stop_on_signals();
	rc = an_setup(&an);
	if (!rc)
		rc = run(&an);
	an_release(&an);
	free(an.o.metrics.v);	/* opts_parse's list (the replay's is argv) */
	return -rc;
}
