/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope probe polarization HOST`: K concurrent flows to a bw server,
 * each with its own entropy value (TCP source port, or the verbs flow label
 * that sets the RoCE UDP source port), S entropy sets one after another;
 * per-flow rates into the verdict of polar.h.  The flows are the bw
 * engine's own (run in a child process, its records read as JSON lines), so
 * the probe measures exactly what `fabscope bw -q K --sport BASE` measures.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/net.h"
#include "../core/options.h"
#include "../core/output.h"
#include "../core/record.h"
#include "../transport/transport.h"
#include "../topology/intent.h"
#include "polar-judge.h"
#include "polar.h"
#include "probe.h"
#include "trace.h"

/* --label's a polarization probe passes on to its bw runs */
#define POLAR_MAX_LABELS 32

static const char *const polar_usage[] = {
	"fabscope probe polarization HOST [options]",
	NULL,
};

static const char polar_about[] =
	"Hash-polarization probe.  Runs K concurrent flows to 'fabscope bw --server' on HOST,\n"
	"each with its own entropy value (TCP source port; with -t verbs the flow label, which\n"
	"sets the RoCEv2 UDP source port), and judges whether ECMP spread them as uniform\n"
	"random hashing does: \"polarized\" when they used so few of the P equal paths that\n"
	"uniform hashing gives so few with probability under 0.01 (its false-positive rate on\n"
	"a fabric that hashes uniformly), else the collisions are random and more entropy\n"
	"(flows, QPs) is the remedy.  A verdict only on evidence, and it says which:\n"
	"  traces   --trace: every flow's 5-tuple traced hop by hop, the paths used counted\n"
	"           (exactly with the design's switch addresses, --topology; else by address,\n"
	"           an upper bound that can show \"polarized\" only);\n"
	"  rates    a flow sharing its bottleneck with k-1 others gets C/k, so the paths used\n"
	"           are the sum of 1/k: only where the paths were the bottleneck, by design\n"
	"           (--host-rate >= --paths x --link-rate) or measured (the flows under 80% of\n"
	"           the host's link, the paths they used full), and beyond the rates' noise.\n"
	"Otherwise \"inconclusive\": why, and what to give.  Exit 0: not polarized (or, without\n"
	"--paths, the count); 1: polarized, or no verdict.  --sweep S repeats it with S sets.";

struct popts {
	int flows, sport, sweep, paths, json, verbose, flow_label, trace, gbits;
	double link_rate, host_rate, duration, timeout;
	const char *transport, *bind, *node, *output, *device, *topology;
	uint64_t size;
	int port, tclass, rail, plane;
	struct opt_list labels;
	struct topo *design;	/* --topology, read */
};

/* Run the bw client with these arguments, at most wait_s seconds; its records into recs. */
static int run_bw(const char **argv, int argc, double wait_s, json_t *recs, char *err, size_t errlen)
{
	struct probe_child ch;
	int rc = probe_child_start(&ch, argv, argc, 1, "fabscope probe polarization");

	if (rc) {
		snprintf(err, errlen, "cannot start the flows");
		return rc;
	}
	rc = probe_child_finish(&ch, wait_s, recs);
	if (rc)
		snprintf(err, errlen, "the flows failed (see the message above)");
	return rc;
}

/* The set's record of what was measured and given (polar-judge.c judges it). */
static json_t *polar_record(const struct popts *o, const struct polar_flow *f, int n, json_t *agg, int set,
			    int base)
{
	json_t *rec = record_new("polarization"), *ent = json_array(), *params;
	int i;

	json_object_set_new(rec, "transport", json_string(o->transport ? o->transport : "tcp"));
	if (agg) {
		json_object_set(rec, "src", json_object_get(agg, "src"));
		json_object_set(rec, "dst", json_object_get(agg, "dst"));
		json_object_set(rec, "labels", json_object_get(agg, "labels"));
		json_object_set(rec, "msg_size_bytes", json_object_get(agg, "msg_size_bytes"));
	}
	if (o->rail >= 0 && json_is_object(json_object_get(rec, "src"))) {	/* the lane in the design */
		json_t *src = json_deep_copy(json_object_get(rec, "src"));

		json_object_set_new(src, "rail", json_integer(o->rail));
		json_object_set_new(src, "plane", json_integer(o->plane > 0 ? o->plane : 0));
		json_object_set_new(rec, "src", src);
	}
	json_object_set_new(rec, "scope", json_string(set < 0 ? "sweep" : "set"));
	/* every rate of this record: params.*_gbps, metrics.*_gbps, entropy[].gbps */
	json_object_set_new(rec, "units", json_pack("{ss}", "gbps", "Gb/s (10^9 bit/s)"));
	json_object_set_new(rec, "flows", json_integer(n));
	params = json_pack("{si,si,si,ss}", "set", set, "entropy_base", base, "paths", o->paths, "entropy",
			   o->transport && !strcmp(o->transport, "verbs") ? "flow_label" : "sport");
	if (o->link_rate > 0)
		json_object_set_new(params, "link_rate_gbps", json_real(o->link_rate));
	if (o->host_rate > 0)
		json_object_set_new(params, "host_rate_gbps", json_real(o->host_rate));
	json_object_set_new(rec, "params", params);
	for (i = 0; f && i < n; i++)
		json_array_append_new(ent, json_pack("{si,sf}", "value", f[i].entropy, "gbps", f[i].gbps));
	json_object_set_new(rec, "entropy", ent);
	json_object_set_new(rec, "status", json_string("ok"));
	return rec;
}

/* Paris-traceroute of every flow's 5-tuple, after the flows ended (a trace
 * of a live 5-tuple could disturb it): each entropy entry gets its path
 * (the address that answered each TTL, "*" for none) and path_complete,
 * the record "trace" (polar-judge.c counts the paths).  Patient with routers
 * that limit their ICMP answers: a TTL is asked again while answers still
 * come.  A trace that cannot run (no CAP_NET_RAW) is a warning: the
 * measurement stands without it. */
static void add_traces(const struct popts *o, json_t *rec, json_t *agg, const struct polar_flow *f, int n,
		       int dport)
{
	const char *src = record_str(agg, "src.ip", o->bind), *dst = record_str(agg, "dst.ip", NULL);
	struct trace_opts to = { .max_ttl = 8, .timeout_ms = 1000, .probes_per_hop = TRACE_MAX_PROBES,
				 .patient = 1, .settle_ms = 5000 };
	struct trace_result *tr = calloc((size_t)n, sizeof(*tr));
	int *sports = malloc((size_t)n * sizeof(*sports)), i, h;
	json_t *ent = json_object_get(rec, "entropy");
	char err[256] = "";

	if (!tr || !sports) {
		fs_warn("no path traces: out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		sports[i] = f[i].entropy;
	if (!dst || trace_tcp_many(src, sports, n, dst, dport, &to, tr, err, sizeof(err))) {
		fs_warn("no path traces: %s", dst ? err : "the peer's address is not in the records");
		goto out;
	}
	for (i = 0; i < n; i++) {
		json_t *path = json_array();

		for (h = 0; h < tr[i].nhops; h++)
			json_array_append_new(path, json_string(tr[i].hop[h].addr[0] ? tr[i].hop[h].addr : "*"));
		json_object_set_new(json_array_get(ent, (size_t)i), "path", path);
		json_object_set_new(json_array_get(ent, (size_t)i), "path_complete", json_boolean(tr[i].reached));
	}
	json_object_set_new(rec, "trace", json_object());
out:
	free(tr);
	free(sports);
}

/* The checks of the options, in the order they are said. */
static int polar_check_opts(const struct popts *o, int nargs)
{
	json_t *l;
	const char *bad;
	int rc;

	if (nargs != 1)
		return fs_err_usage(nargs ? "give one HOST" : "missing HOST: the address of a 'fabscope bw --server'");
	if (o->sport + o->flows * o->sweep - 1 > 65535)
		return fs_err_usage("--sport %d with %d flows x %d sets runs past port 65535", o->sport, o->flows,
				    o->sweep);
	if (o->flow_label && o->flow_label + o->flows * o->sweep - 1 > 0xFFFFF)
		return fs_err_usage("--flow-label %d with %d flows x %d sets runs past the largest label, %d",
				    o->flow_label, o->flows, o->sweep, 0xFFFFF);
	if (o->transport && (rc = xport_check(o->transport)))	/* not seconds later, in the bw */
		return rc;
	if (record_labels(&o->labels, &l, &bad))
		return fs_err_usage(RECORD_LABEL_ERR, bad);
	json_decref(l);
	if (o->labels.n > POLAR_MAX_LABELS)
		return fs_err_usage("%d labels: at most %d", o->labels.n, POLAR_MAX_LABELS);
	return 0;
}

/* The bw run of set s: its flows' records into recs. */
static int polar_run_bw(const struct popts *o, const char *host, int s, json_t *recs)
{
	const char *bargv[16 + POLAR_MAX_LABELS + 4];
	char b[16 + POLAR_MAX_LABELS][128], err[256];
	int bargc = 0, nb = 0, i;

#define ARG(...) do { snprintf(b[nb], sizeof(b[nb]), __VA_ARGS__); bargv[bargc++] = b[nb++]; } while (0)
	bargv[bargc++] = "bw";
	bargv[bargc++] = host;
	ARG("--port=%d", o->port);
	ARG("--flows=%d", o->flows);
	ARG("--duration=%g", o->duration);
	ARG("--timeout=%g", o->timeout);
	ARG("--size=%llu", (unsigned long long)(o->size ? o->size : 65536));
	ARG("--tx-depth=16");	/* 1 MiB in flight per flow: slow flows drain fast */
	ARG("--transport=%s", o->transport ? o->transport : "tcp");
	if (o->transport && !strcmp(o->transport, "verbs"))
		ARG("--flow-label=%d", (o->flow_label ? o->flow_label : o->sport) + s * o->flows);
	else
		ARG("--sport=%d", o->sport + s * o->flows);
	if (o->bind)
		ARG("--bind=%s", o->bind);
	if (o->device)
		ARG("--device=%s", o->device);
	if (o->tclass >= 0)
		ARG("--tclass=%d", o->tclass);
	if (o->node)
		ARG("--node=%s", o->node);
	for (i = 0; i < o->labels.n; i++)	/* (at most POLAR_MAX_LABELS) */
		ARG("--label=%s", o->labels.v[i]);
	bargv[bargc] = NULL;
#undef ARG
	return run_bw(bargv, bargc, o->duration + 3 * o->timeout + 30, recs, err, sizeof(err));
}

/* Set s's judgment for a person: the verdict, the flows' rates and sharing, the traces' line */
static void polar_set_text(const struct popts *o, struct out *out, const struct polar_judgment *jd, json_t *pr,
			   int s)
{
	json_t *ent = json_object_get(pr, "entropy"), *e;
	int base = o->sport + s * o->flows;
	const char *v = record_str(pr, "verdict_text", "");
	size_t i;

	if (!o->json) {
		out_comment(out, "set %d (entropy from %d): %s", s + 1, base, v);
		out_comment(out, "rates (%s) by entropy, sharing:", o->gbits ? "Gb/s" : "MB/s");
		json_array_foreach(ent, i, e)	/* the unit of the table above: MB/s = 10^6 bytes/s */
			out_comment(out, "  %5d  %10.*f  %d", record_int(e, "value", 0, 0, INT_MAX), o->gbits ? 4 : 2,
				    record_num(e, "gbps", 0) * (o->gbits ? 1 : 1000.0 / 8),
				    record_int(e, "sharing", 0, 0, INT_MAX));
		if (jd->trace_line[0])
			out_comment(out, "%s", jd->trace_line);
	}
	/* the JSON has it, and a job's standard output goes nowhere: a person (and the
	 * coordinator, the job's last line) reads the verdict that fails it on stderr */
	if ((o->json || out_sink_set()) && jd->r.verdict != POLAR_NOT && jd->r.verdict != POLAR_UNKNOWN)
		fs_warn("set %d: %s", s + 1, v);
}

/*
 * A set judged on though some of its flows completed no message in their
 * window: the bw run's records are the probe's measurement, not a failed
 * test (a run and its report would count them so, though the probe went on
 * and exits by its verdict).  Each flow measured what it measured; one that
 * completed nothing has metrics.msgs 0, no rate, and the set's record says
 * how many (params.starved_flows) and why its rates give no verdict
 * (flows_starved).
 */
static void polar_starved_records(json_t *recs)
{
	json_t *rec;
	size_t k;

	json_array_foreach(recs, k, rec)
		if (!strcmp(record_str(rec, "status", "ok"), "error") && record_get(rec, "metrics.msgs")) {
			json_object_set_new(rec, "status", json_string("ok"));
			json_object_del(rec, "error");
		}
}

/*
 * Entropy set s: its bw run (every record of it out), then, when the run
 * measured flows, its record (traced with --trace), judged into jd[s] and
 * out; *failed counts the sets that are not "not polarized" (nor without
 * --paths); *agg: the run's aggregate record (its ends), for the sweep's.
 */
static int polar_set(const struct popts *o, const char *host, int s, struct out *out, struct polar_judgment *jd,
		     int *failed, json_t **last)
{
	json_t *recs = json_array(), *rec, *agg = NULL, *pr;
	struct polar_flow *f = calloc((size_t)o->flows, sizeof(*f));
	int n = 0, dport = 0, rc, starved = 0;
	size_t k;

	if (!f || !recs) {
		free(f);
		json_decref(recs);
		return fs_err_env("out of memory for %d flows", o->flows);
	}
	rc = polar_run_bw(o, host, s, recs);
	json_array_foreach(recs, k, rec) {
		const char *scope = record_str(rec, "scope", "");
		/* a flow that completed no message in the window fails the bw run (exit 1, its
		 * records "error"), yet every flow ran: its path can still be traced */
		int ok = !strcmp(record_str(rec, "status", "ok"), "ok") ||
			 (rc == -FS_EXIT_CHECK && record_get(rec, "metrics.msgs"));

		if (!strcmp(scope, "aggregate") && !agg)
			agg = rec;
		if (!strcmp(scope, "flow") && n < o->flows && ok) {
			f[n].entropy = o->transport && !strcmp(o->transport, "verbs") ?
				       record_int(rec, "flow_label", 0, 0, 0xfffff) : record_int(rec, "src.port", 0, 0, 65535);
			f[n].gbps = record_num(rec, "metrics.bw_gbps", 0);
			dport = record_int(rec, "dst.port", 0, 0, 65535);
			starved += record_num(rec, "metrics.msgs", 0) <= 0;
			n++;
		}
	}
	if (rc == -FS_EXIT_CHECK && n == o->flows && starved && agg) {
		rc = 0;	/* judged on: the rates say why they give no verdict */
		polar_starved_records(recs);
	}
	json_array_foreach(recs, k, rec)
		out_record(out, rec);
	if (!rc && n) {
		pr = polar_record(o, f, n, agg, s, o->sport + s * o->flows);
		if (starved)
			json_object_set_new(json_object_get(pr, "params"), "starved_flows", json_integer(starved));
		if (o->trace && agg && !(o->transport && !strcmp(o->transport, "verbs")))
			add_traces(o, pr, agg, f, n, dport);
		else if (o->trace)
			fs_warn("--trace traces TCP 5-tuples; RoCE's UDP paths are not traced yet");
		polar_judge_record(pr, o->design, &jd[s]);
		out_record(out, pr);
		polar_set_text(o, out, &jd[s], pr, s);
		*failed += jd[s].r.verdict != POLAR_NOT && jd[s].r.verdict != POLAR_UNKNOWN;
		json_decref(*last);
		*last = json_incref(agg);
		json_decref(pr);
	}
	free(f);
	json_decref(recs);
	return rc;
}

/* The verdict on all the sets of a --sweep; 1 when it is not "not polarized" */
static int polar_sweep_out(const struct popts *o, struct out *out, const struct polar_judgment *jd, json_t *agg)
{
	json_t *pr = polar_record(o, NULL, 0, agg, -1, o->sport);
	const char *v;
	int s, best = 0, failed;

	for (s = 1; s < o->sweep; s++)
		if (jd[s].r.used > jd[best].r.used)
			best = s;
	polar_judge_sweep(pr, jd, o->sweep);
	json_object_set_new(json_object_get(pr, "metrics"), "best_set_paths_used", json_real(jd[best].r.used));
	out_record(out, pr);
	v = record_str(pr, "verdict_text", "");
	out_comment(out, "%d sets, %s", o->sweep, v);
	out_comment(out, "the best entropy set started at %d: %.1f paths", o->sport + best * o->flows,
		    jd[best].r.used);
	failed = strcmp(record_str(pr, "verdict", ""), "not polarized") != 0;
	if ((o->json || out_sink_set()) && failed)
		fs_warn("%d sets: %s", o->sweep, v);
	json_decref(pr);
	return failed;
}

/* --topology FILE into o->design; 0, or the error said */
static int polar_design(struct popts *o, struct topo *t)
{
	int rc;

	if (!o->topology)
		return 0;
	topo_init(t);
	if ((rc = topo_read(t, o->topology, NULL)))
		return rc;
	o->design = t;
	if (!t->naddr && o->trace)
		fs_warn("%s gives its switches no addresses (addr=): traced hops are named by address, their "
			"count an upper bound", o->topology);
	return 0;
}

int probe_polarization(int argc, const char **argv)
{
	struct popts o = { .flows = 16, .sport = 40000, .sweep = 1, .duration = 3, .timeout = 10, .port = 18520,
			   .tclass = -1, .rail = -1 };
	struct opt tab[] = {
		OPT_GROUP("Probe"),
		OPT_INT('q', "flows", &o.flows, "K", "concurrent flows, one entropy value each (default 16)", 2, 1024),
		OPT_INT(0, "sport", &o.sport, "BASE", "TCP source port of the first flow (default 40000); set s starts at BASE + s*K", 1024, 65535),
		OPT_INT(0, "flow-label", &o.flow_label, "BASE", "-t verbs: flow label of the first flow (default: the source ports' numbers)", 1, 0xFFFFF),
		OPT_INT(0, "sweep", &o.sweep, "S", "entropy sets to try, one after another (default 1)", 1, 1000),
		OPT_SECONDS('D', "duration", &o.duration, "SECONDS", "measure each set this long (default 3)"),
		OPT_SIZE('s', "size", &o.size, "SIZE", "message size (default 64K)", 1, 1ll << 30),
		OPT_GROUP("Evidence"),
		OPT_BOOL(0, "trace", &o.trace, "after each set, trace every flow's path with TCP SYNs of its own 5-tuple (root): the paths used, counted"),
		OPT_INT(0, "paths", &o.paths, "P", "equal paths the flows spread over (at the narrowest tier): needed for a verdict", 1, 4096),
		OPT_NUMBER(0, "link-rate", &o.link_rate, "GBPS", "the rate of one of those paths in Gb/s"),
		OPT_NUMBER(0, "host-rate", &o.host_rate, "GBPS", "the rate of the hosts' own links (the slower end) in Gb/s"),
		OPT_FILE(0, "topology", &o.topology, "FILE", "the design (fabscope-topology(5)): paths and rates not given, the traced hops' names (addr=)"),
		OPT_INT(0, "rail", &o.rail, "R", "with --topology: this port's rail in the design (default 0)", 0, 63),
		OPT_INT(0, "plane", &o.plane, "P", "with --topology: this port's plane (default 0)", 0, 7),
		OPT_GROUP("Connection"),
		OPT_INT('p', "port", &o.port, "PORT", "the bw server's control port (default 18520)", 1, 65535),
		OPT_STRING(0, "bind", &o.bind, "ADDR", "local address (selects the rail)"),
		OPT_STRING('t', "transport", &o.transport, "NAME", "tcp (default) or verbs"),
		OPT_STRING('d', "device", &o.device, "DEV", "-t verbs: the RDMA device"),
		OPT_INT(0, "tclass", &o.tclass, "N", "traffic class (IP TOS byte)", 0, 255),
		OPT_SECONDS(0, "timeout", &o.timeout, "SECONDS", "give up on a silent peer after this long (default 10)"),
		OPT_STRING(0, "node", &o.node, "NAME", "this node's name in records (and in the design)"),
		OPT_GROUP("Output"),
		OPT_BOOL(0, "json", &o.json, "print the records as one JSON array"),
		OPT_BOOL(0, "report-gbits", &o.gbits, "text: rates in Gb/s instead of MB/s (10^6 bytes/s), as bw"),
		OPT_FILE('o', "output", &o.output, "FILE", "also write the records to FILE, a JSON line each (as results.jsonl)"),
		OPT_LIST(0, "label", &o.labels, "K=V", "label every record (repeatable)"),
		OPT_VERBOSE(&o.verbose),
		OPT_END(),
	};
	struct polar_judgment *jd = NULL;
	struct topo design;
	json_t *last = NULL;
	struct out out;
	int nargs, rc, wrc, s, failed = 0;

	fs_set_progname("fabscope probe polarization");
	rc = opts_parse(argc, argv, tab, polar_usage, polar_about, &nargs);
	if (rc)
		return rc == OPTS_HELP ? 0 : -rc;
	fs_set_verbosity(o.verbose);
	if ((rc = polar_check_opts(&o, nargs)) || (rc = polar_design(&o, &design)))
		goto out_opts;
	if (!(jd = calloc((size_t)o.sweep, sizeof(*jd)))) {
		rc = fs_err_env("out of memory for %d entropy sets", o.sweep);
		goto out_opts;
	}
	out_init(&out, o.json ? OUT_JSON : OUT_TEXT, stdout);
	out.gbits = o.gbits;	/* the flows' table and the probe's own lines in one unit */
	if (o.output && (rc = out_json_file(&out, o.output)))
		goto out_opts;	/* (said) */
	net_stop_on_signals();
	for (s = 0; s < o.sweep && !net_stop; s++)
		if ((rc = polar_set(&o, argv[0], s, &out, jd, &failed, &last)))
			break;
	if (!rc && o.sweep > 1 && !net_stop)
		failed += polar_sweep_out(&o, &out, jd, last);
	if ((wrc = out_finish(&out)) && !rc)
		rc = wrc;
	if (!rc && failed)	/* measured: polarized, or no verdict; neither is a pass */
		rc = -FS_EXIT_CHECK;
	if (net_stop && !rc)
		rc = -FS_EXIT_INTERRUPTED;
out_opts:
	free(jd);
	json_decref(last);
	if (o.design)
		topo_release(o.design);
	opt_list_release(&o.labels);
	return -rc;
}
