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
	"sets the RoCEv2 UDP source port), and infers from their rates how ECMP spread them: a\n"
	"flow sharing its bottleneck with k-1 others gets C/k, so the paths in use are the sum\n"
	"of 1/k.  With --paths P (the equal-cost paths between the two endpoints) it judges:\n"
	"\"polarized\" when far fewer paths were used than uniform random hashing gives (the\n"
	"balls-into-bins distribution, p < 0.01), else the collisions are random and more\n"
	"entropy (flows, QPs) is the remedy.  --sweep S repeats it with S entropy sets.\n"
	"The flows must be the bottleneck's only traffic, and the paths (not the hosts' own\n"
	"links) the bottleneck: give --link-rate, the rate of one path, when it is known.\n"
	"Rates that infer more paths than --paths, or flows that together fill under half of\n"
	"--link-rate, get no verdict but the likely cause, and exit status 1.";

struct popts {
	int flows, sport, sweep, paths, json, verbose, flow_label, trace, gbits;
	double link_rate, duration, timeout;
	const char *transport, *bind, *node, *output, *device;
	uint64_t size;
	int port, tclass;
	struct opt_list labels;
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

static json_t *polar_record(const struct popts *o, const struct polar_result *r, const struct polar_flow *f,
			    json_t *agg, int set, int base)
{
	json_t *rec = record_new("polarization"), *ent = json_array(), *byk = json_object();
	char verdict[512];
	int i;

	polar_verdict(r, verdict, sizeof(verdict));
	json_object_set_new(rec, "transport", json_string(o->transport ? o->transport : "tcp"));
	if (agg) {
		json_object_set(rec, "src", json_object_get(agg, "src"));
		json_object_set(rec, "dst", json_object_get(agg, "dst"));
		json_object_set(rec, "labels", json_object_get(agg, "labels"));
		json_object_set(rec, "msg_size_bytes", json_object_get(agg, "msg_size_bytes"));
	}
	json_object_set_new(rec, "scope", json_string(set < 0 ? "sweep" : "set"));
	/* every rate of this record: params.link_rate_gbps, metrics.*_gbps, entropy[].gbps */
	json_object_set_new(rec, "units", json_pack("{ss}", "gbps", "Gb/s (10^9 bit/s)"));
	json_object_set_new(rec, "flows", json_integer(r->flows));
	json_object_set_new(rec, "params", json_pack("{si,si,si,sf,ss}", "set", set, "entropy_base", base,
						     "paths", o->paths, "link_rate_gbps", o->link_rate,
						     "entropy", o->transport && !strcmp(o->transport, "verbs") ?
						     "flow_label" : "sport"));
	for (i = 1; i <= 64; i++)
		if (r->by_k[i]) {
			char k[8];

			snprintf(k, sizeof(k), "%d", i);
			json_object_set_new(byk, k, json_integer(r->by_k[i]));
		}
	json_object_set_new(rec, "metrics", json_pack("{sf,sf,sf,sf,sf,sf,sf,sf,sf,sf,so}",
		"paths_used", r->used, "expected_paths", r->expected, "expected_paths_sd", r->sd,
		"p_value", r->p_value, "jain", r->jain, "min_gbps", r->min, "median_gbps", r->median,
		"max_gbps", r->max, "total_gbps", r->total, "capacity_gbps", r->capacity,
		"flows_by_sharing", byk));
	if (r->flows_for_all)
		json_object_set_new(json_object_get(rec, "metrics"), "flows_to_cover_all_paths",
				    json_integer(r->flows_for_all));
	for (i = 0; f && i < r->flows; i++)
		json_array_append_new(ent, json_pack("{si,sf,si}", "value", f[i].entropy, "gbps", f[i].gbps,
						     "sharing", f[i].k));
	json_object_set_new(rec, "entropy", ent);
	if (f && r->flows) {	/* which flows shared a bottleneck, and how many links they filled */
		int *grp = malloc((size_t)r->flows * sizeof(*grp)), ng = polar_groups(f, r->flows, r->capacity, grp), g;
		json_t *groups = json_array();

		for (g = 0; g < ng; g++) {
			json_t *vals = json_array();
			double links = 0;
			int kmin = 0, kmax = 0;

			for (i = 0; i < r->flows; i++)
				if (grp[i] == g) {
					json_array_append_new(vals, json_integer(f[i].entropy));
					links += 1.0 / f[i].k;
					kmin = !kmin || f[i].k < kmin ? f[i].k : kmin;
					kmax = f[i].k > kmax ? f[i].k : kmax;
				}
			json_array_append_new(groups, json_pack("{si,sf,si,si,so}", "flows", (int)json_array_size(vals),
								"links", links, "sharing_min", kmin, "sharing_max", kmax,
								"entropy", vals));
		}
		json_object_set_new(rec, "collision_groups", groups);
		free(grp);
	}
	json_object_set_new(rec, "verdict", json_string(polar_verdict_word(r)));
	if (r->inconclusive) {	/* no verdict was given, and why: no p-value to read one from */
		json_object_set_new(rec, "verdict_reason", json_string(polar_reason_name(r)));
		json_object_set_new(rec, "likely_cause", json_string(polar_cause_name(r->cause)));
		json_object_set_new(json_object_get(rec, "metrics"), "p_value", json_null());
		if (r->cause != POLAR_CAUSE_LINK_RATE_HIGH)	/* the most that would have been possible */
			json_object_set_new(json_object_get(rec, "metrics"), "max_paths_used",
					    json_real(polar_max_used(r->paths)));
	}
	json_object_set_new(rec, "verdict_text", json_string(verdict));
	json_object_set_new(rec, "status", json_string("ok"));
	return rec;
}

/* Paris-traceroute of every flow's 5-tuple, after the flows ended (a trace
 * of a live 5-tuple could disturb it): each entropy entry gets its path,
 * the record gets the router-to-router links and how many flows each
 * carried, and "trace": the routers that answered and one line for a
 * person (also into line: the busiest links, or that there are none to
 * name).  A trace that cannot run (no CAP_NET_RAW) is a warning: the
 * measurement stands without it (line stays empty). */
static void add_traces(const struct popts *o, json_t *rec, json_t *agg, const struct polar_flow *f, int n,
		       int dport, char *line, size_t len)
{
	const char *src = record_str(agg, "src.ip", o->bind), *dst = record_str(agg, "dst.ip", NULL);
	struct trace_opts to = { .max_ttl = 8, .timeout_ms = 1000, .probes_per_hop = 3 };
	struct trace_result *tr = calloc((size_t)n, sizeof(*tr));
	int *sports = malloc((size_t)n * sizeof(*sports)), i, h;
	json_t *ent = json_object_get(rec, "entropy"), *links = json_object(), *la = json_array(), *v;
	char err[256] = "";
	const char *key;

	for (i = 0; i < n; i++)
		sports[i] = f[i].entropy;
	if (!dst || trace_tcp_many(src, sports, n, dst, dport, &to, tr, err, sizeof(err))) {
		fs_warn("no path traces: %s", dst ? err : "the peer's address is not in the records");
		goto out;
	}
	for (i = 0; i < n; i++) {
		json_t *path = json_array();

		for (h = 0; h < tr[i].nhops; h++) {
			json_array_append_new(path, json_string(tr[i].hop[h].addr[0] ? tr[i].hop[h].addr : "*"));
			/* a link between two routers that answered; the last answer
			 * is the destination's, its hop the host link */
			if (h + 1 < tr[i].nhops - tr[i].reached && tr[i].hop[h].addr[0] && tr[i].hop[h + 1].addr[0]) {
				char k[160];
				json_t *c;

				snprintf(k, sizeof(k), "%s>%s", tr[i].hop[h].addr, tr[i].hop[h + 1].addr);
				c = json_object_get(links, k);
				json_object_set_new(links, k, json_integer(c ? json_integer_value(c) + 1 : 1));
			}
		}
		json_object_set_new(json_array_get(ent, (size_t)i), "path", path);
		json_object_set_new(json_array_get(ent, (size_t)i), "path_complete", json_boolean(tr[i].reached));
	}
	json_object_foreach(links, key, v) {
		const char *gt = strchr(key, '>');

		json_array_append_new(la, json_pack("{ss#,ss,sI}", "from", key, (int)(gt - key), "to", gt + 1,
						    "flows", json_integer_value(v)));
	}
	/* the busiest links first */
	for (i = 1; i < (int)json_array_size(la); i++)
		for (h = i; h > 0 && json_integer_value(json_object_get(json_array_get(la, (size_t)h), "flows")) >
				     json_integer_value(json_object_get(json_array_get(la, (size_t)h - 1), "flows")); h--) {
			json_t *a = json_incref(json_array_get(la, (size_t)h)), *b = json_incref(json_array_get(la, (size_t)h - 1));

			json_array_set_new(la, (size_t)h, b);
			json_array_set_new(la, (size_t)h - 1, a);
		}
	json_object_set_new(rec, "links", la);
	{	/* the routers that answered (every hop but the destination's), and the line */
		json_t *seen = json_object();
		int all_reached = 1, first_hop = 1;
		size_t nl = json_array_size(la), off;

		for (i = 0; i < n; i++) {
			all_reached &= tr[i].reached;
			first_hop &= tr[i].reached && tr[i].nhops == 1;
			for (h = 0; h + tr[i].reached < tr[i].nhops; h++)
				if (tr[i].hop[h].addr[0])
					json_object_set_new(seen, tr[i].hop[h].addr, json_true());
		}
		if (first_hop)
			snprintf(line, len, "traced: no routers between %s and %s - every flow reached %s at the "
				 "first hop (one link), so there are no links to name", src ? src : "here", dst, dst);
		else if (!json_object_size(seen))
			snprintf(line, len, "traced: no router between %s and %s answered (ICMP time exceeded "
				 "dropped or rate-limited), %s: no links to name", src ? src : "here", dst,
				 all_reached ? "every flow reached it" : "not every flow reached it");
		else if (!nl)
			snprintf(line, len, "traced: %d router%s between %s and %s, no two answering in a row: no "
				 "links to name", (int)json_object_size(seen), json_object_size(seen) == 1 ? "" : "s",
				 src ? src : "here", dst);
		else {
			off = (size_t)snprintf(line, len, "traced: %d router%s; the busiest links:",
					       (int)json_object_size(seen), json_object_size(seen) == 1 ? "" : "s");
			for (i = 0; i < (int)nl && i < 4 && off < len; i++) {
				json_t *l = json_array_get(la, (size_t)i);

				off += (size_t)snprintf(line + off, len - off, "%s %s -> %s (%lld flows)", i ? "," : "",
							record_str(l, "from", "?"), record_str(l, "to", "?"),
							(long long)json_integer_value(json_object_get(l, "flows")));
			}
		}
		json_object_set_new(rec, "trace", json_pack("{si,sb,ss}", "routers", (int)json_object_size(seen),
							    "all_reached", all_reached, "text", line));
		json_decref(seen);
	}
	la = NULL;
out:
	json_decref(la);
	json_decref(links);
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

/* Set s's verdict from its n flows (their sharing into f[].k): the record, and the lines for a person. */
static void polar_set_out(const struct popts *o, struct out *out, struct polar_result *res, int s,
			  struct polar_flow *f, int n, json_t *agg, int dport)
{
	int i, base = o->sport + s * o->flows;
	char tline[512], v[512];
	json_t *pr;

	polar_analyze(f, n, o->paths, o->link_rate, res);
	pr = polar_record(o, res, f, agg, s, base);
	tline[0] = 0;
	if (o->trace && agg && !(o->transport && !strcmp(o->transport, "verbs")))
		add_traces(o, pr, agg, f, n, dport, tline, sizeof(tline));
	else if (o->trace)
		fs_warn("--trace traces TCP 5-tuples; RoCE's UDP paths are not traced yet");
	out_record(out, pr);
	if (!o->json) {
		polar_verdict(res, v, sizeof(v));
		out_comment(out, "set %d (entropy from %d): %s", s + 1, base, v);
		out_comment(out, "rates (%s) by entropy, sharing:", o->gbits ? "Gb/s" : "MB/s");
		for (i = 0; i < n; i++)	/* the unit of the table above: MB/s = 10^6 bytes/s */
			out_comment(out, "  %5d  %10.*f  %d", f[i].entropy, o->gbits ? 4 : 2,
				    f[i].gbps * (o->gbits ? 1 : 1000.0 / 8), f[i].k);
		if (tline[0])
			out_comment(out, "%s", tline);
	} else if (res->inconclusive) {	/* the JSON has it; a person reads stderr */
		polar_verdict(res, v, sizeof(v));
		fs_warn("set %d: %s", s + 1, v);
	}
	json_decref(pr);
}

/*
 * Entropy set s: its bw run (every record of it out), then its verdict
 * into res[s] when the run measured flows; *best: the set that used the
 * most paths so far; *inconclusive counts the sets without a verdict.
 */
static int polar_set(const struct popts *o, const char *host, int s, struct out *out, struct polar_result *res,
		     int *best, int *inconclusive)
{
	json_t *recs = json_array(), *rec, *agg = NULL;
	struct polar_flow *f = calloc((size_t)o->flows, sizeof(*f));
	int n = 0, dport = 0, rc;
	size_t k;

	rc = polar_run_bw(o, host, s, recs);
	json_array_foreach(recs, k, rec) {
		const char *scope = record_str(rec, "scope", "");

		out_record(out, rec);
		if (!strcmp(scope, "aggregate") && !agg)
			agg = rec;
		if (!strcmp(scope, "flow") && n < o->flows &&
		    !strcmp(record_str(rec, "status", "ok"), "ok")) {
			f[n].entropy = o->transport && !strcmp(o->transport, "verbs") ?
				       record_int(rec, "flow_label", 0, 0, 0xfffff) : record_int(rec, "src.port", 0, 0, 65535);
			f[n].gbps = record_num(rec, "metrics.bw_gbps", 0);
			dport = record_int(rec, "dst.port", 0, 0, 65535);
			n++;
		}
	}
	if (!rc && n) {
		polar_set_out(o, out, &res[s], s, f, n, agg, dport);
		if (res[s].inconclusive)
			(*inconclusive)++;
		if (res[s].used > res[*best].used)
			*best = s;
	}
	free(f);
	json_decref(recs);
	return rc;
}

/* The verdict on all the sets of a --sweep, the best set's paths with it. */
static void polar_sweep_out(const struct popts *o, struct out *out, const struct polar_result *res, int best)
{
	double p = polar_sweep_p_value(res, o->sweep), used = 0;
	struct polar_result sum = res[best];
	json_t *pr;
	char v[512];
	int s;

	for (s = 0; s < o->sweep; s++)
		used += res[s].used;
	sum.used = used / o->sweep;
	sum.p_value = p;
	sum.polarized = o->paths > 0 && p < POLAR_ALPHA;
	polar_check_possible(&sum);
	polar_verdict(&sum, v, sizeof(v));
	for (s = 0; s < o->sweep && !sum.inconclusive; s++)	/* one impossible set: no verdict on them all */
		if (res[s].inconclusive) {
			sum.inconclusive = 1;
			sum.polarized = 0;
			sum.cause = res[s].cause;
			snprintf(v, sizeof(v), "no verdict: set %d gave none (its line says why)", s + 1);
		}
	pr = polar_record(o, &sum, NULL, NULL, -1, o->sport + best * o->flows);
	json_object_set_new(json_object_get(pr, "metrics"), "sets", json_integer(o->sweep));
	json_object_set_new(json_object_get(pr, "metrics"), "best_set_paths_used", json_real(res[best].used));
	json_object_set_new(pr, "verdict_text", json_string(v));
	out_record(out, pr);
	out_comment(out, "%d sets, %s%s", o->sweep, sum.inconclusive ? "" : "mean ", v);
	out_comment(out, "the best entropy set started at %d: %.1f paths", o->sport + best * o->flows,
		    res[best].used);
	json_decref(pr);
}

int probe_polarization(int argc, const char **argv)
{
	struct popts o = { .flows = 16, .sport = 40000, .sweep = 1, .duration = 3, .timeout = 10, .port = 18520,
			   .tclass = -1 };
	struct opt tab[] = {
		OPT_GROUP("Probe"),
		OPT_INT('q', "flows", &o.flows, "K", "concurrent flows, one entropy value each (default 16)", 2, 1024),
		OPT_INT(0, "sport", &o.sport, "BASE", "TCP source port of the first flow (default 40000); set s starts at BASE + s*K", 1024, 65535),
		OPT_INT(0, "flow-label", &o.flow_label, "BASE", "-t verbs: flow label of the first flow (default: the source ports' numbers)", 1, 0xFFFFF),
		OPT_INT(0, "sweep", &o.sweep, "S", "entropy sets to try, one after another (default 1)", 1, 1000),
		OPT_INT(0, "paths", &o.paths, "P", "equal-cost paths between the endpoints: needed for the verdict", 1, 4096),
		OPT_NUMBER(0, "link-rate", &o.link_rate, "GBPS", "capacity of one path in Gb/s (default: the fastest flow's rate)"),
		OPT_BOOL(0, "trace", &o.trace, "after each set, trace every flow's path with TCP SYNs of its own 5-tuple (root): names the links that carried the most flows"),
		OPT_SECONDS('D', "duration", &o.duration, "SECONDS", "measure each set this long (default 3)"),
		OPT_SIZE('s', "size", &o.size, "SIZE", "message size (default 64K)", 1, 1ll << 30),
		OPT_GROUP("Connection"),
		OPT_INT('p', "port", &o.port, "PORT", "the bw server's control port (default 18520)", 1, 65535),
		OPT_STRING(0, "bind", &o.bind, "ADDR", "local address (selects the rail)"),
		OPT_STRING('t', "transport", &o.transport, "NAME", "tcp (default) or verbs"),
		OPT_STRING('d', "device", &o.device, "DEV", "-t verbs: the RDMA device"),
		OPT_INT(0, "tclass", &o.tclass, "N", "traffic class (IP TOS byte)", 0, 255),
		OPT_SECONDS(0, "timeout", &o.timeout, "SECONDS", "give up on a silent peer after this long (default 10)"),
		OPT_STRING(0, "node", &o.node, "NAME", "this node's name in records"),
		OPT_GROUP("Output"),
		OPT_BOOL(0, "json", &o.json, "print the records as one JSON array"),
		OPT_BOOL(0, "report-gbits", &o.gbits, "text: rates in Gb/s instead of MB/s (10^6 bytes/s), as bw"),
		OPT_FILE('o', "output", &o.output, "FILE", "also write the records to FILE (JSON array)"),
		OPT_LIST(0, "label", &o.labels, "K=V", "label every record (repeatable)"),
		OPT_VERBOSE(&o.verbose),
		OPT_END(),
	};
	struct polar_result *res = NULL;
	struct out out;
	int nargs, rc, wrc, s, best = 0, inconclusive = 0;

	fs_set_progname("fabscope probe polarization");
	rc = opts_parse(argc, argv, tab, polar_usage, polar_about, &nargs);
	if (rc)
		return rc == OPTS_HELP ? 0 : -rc;
	fs_set_verbosity(o.verbose);
	if ((rc = polar_check_opts(&o, nargs)))
		goto out_opts;
	out_init(&out, o.json ? OUT_JSON : OUT_TEXT, stdout);
	out.gbits = o.gbits;	/* the flows' table and the probe's own lines in one unit */
	if (o.output && (rc = out_json_file(&out, o.output)))
		goto out_opts;	/* (said) */
	res = calloc((size_t)o.sweep, sizeof(*res));
	net_stop_on_signals();
	for (s = 0; s < o.sweep && !net_stop; s++)
		if ((rc = polar_set(&o, argv[0], s, &out, res, &best, &inconclusive)))
			break;
	if (!rc && o.sweep > 1 && !net_stop)
		polar_sweep_out(&o, &out, res, best);
	if ((wrc = out_finish(&out)) && !rc)
		rc = wrc;
	if (!rc && inconclusive)	/* measured, but no verdict: not a pass */
		rc = -FS_EXIT_CHECK;
	if (net_stop && !rc)
		rc = -FS_EXIT_INTERRUPTED;
out_opts:
	free(res);
	opt_list_release(&o.labels);
	return -rc;
}
