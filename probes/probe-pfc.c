/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope probe pfc`: PFC pauses on a port before, during and after an
 * incast load (pfc.h judges the samples; counters.h reads them).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/options.h"
#include "../core/output.h"
#include "../core/record.h"
#include "../transport/transport.h"
#include "counters.h"
#include "pfc.h"
#include "pfcap.h"
#include "probe.h"

/* samples of one PFC probe: a day at the smallest --interval (0.01 s) is 8.64M */
#define PFC_MAX_SAMPLES 10000000

static const char *const pfc_usage[] = {
	"fabscope probe pfc [HOST] [options]",
	"fabscope probe pfc --serve [options]",
	NULL,
};

static const char pfc_about[] =
	"PFC-pause probe.  Samples a port's NIC counters every --interval seconds for --before\n"
	"seconds, while a load runs (--duration), and --after it, then reports per priority: pause\n"
	"frames per second each way (rx: the peer or switch paused us; tx: we paused it), the\n"
	"fraction of each interval paused (from the driver's pause-duration counters, else\n"
	"estimated from frames x quanta at the link rate, and said so), PFC storms (paused over\n"
	"99 % of an interval for 3 intervals in a row, as switch PFC watchdogs judge), and\n"
	"whether ECN marks or CNPs rose before the first pause: congestion control (DCQCN) should\n"
	"slow the senders before the lossless fallback fires.\n"
	"With HOST (a 'fabscope bw --server' on the incast target) this node is one of the senders:\n"
	"it runs -q flows to HOST on --tclass during the load phase.  With --serve it is the target:\n"
	"it runs that bw server (one client, --port 0 picks a free port) and samples its own port.\n"
	"Without either it only watches, e.g. while a job runs.  A plan phase 'kind = pfc' runs\n"
	"the incast N->1 from every node to the target through the coordinator.\n"
	"Counters: ethtool statistics (SIOCETHTOOL) of the interface, the RDMA device's sysfs\n"
	"hw_counters and counters; names are mapped per driver (mlx5, rxe).  --capture also counts\n"
	"the PFC/PAUSE frames libpcap sees on the interface (software links, mirrors: a NIC's MAC\n"
	"consumes them) and fills in the pause counters a driver lacks.  The exit status is 0\n"
	"when the port was measured, whatever the verdict; thresholds belong to 'fabscope report'.";

struct fopts {
	const char *ifname, *device, *bind, *root, *driver, *transport, *node, *output;
	uint64_t size;
	int ib_port, capture, json, verbose, flows, port, tclass, prio, serve, storm_intervals;
	int quanta;
	double interval, before, during, after, link_rate, timeout, storm_fraction;
	struct opt_list labels;
};

/* The interface that holds addr in this network namespace. */
static int ifname_of_addr(const char *addr, char *buf, size_t len)
{
	struct ifaddrs *ifa, *i;
	unsigned char want[16], have[16];
	int fam = strchr(addr, ':') ? AF_INET6 : AF_INET, rc = -1;

	if (inet_pton(fam, addr, want) != 1)
		return fs_err_usage("'%s' is not an IP address", addr);
	if (getifaddrs(&ifa))
		return fs_err_env("getifaddrs: %s", strerror(errno));
	for (i = ifa; i && rc; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != fam)
			continue;
		if (fam == AF_INET)
			memcpy(have, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, 4);
		else
			memcpy(have, &((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr, 16);
		if (!memcmp(want, have, fam == AF_INET ? 4 : 16)) {
			snprintf(buf, len, "%s", i->ifa_name);
			rc = 0;
		}
	}
	freeifaddrs(ifa);
	return rc ? fs_err_env("no interface has the address %s here: give the interface with -i", addr) : 0;
}

struct pfc_run {
	const struct fopts *o;
	const char *host;
	int load_at;		/* sample index that starts the load */
	struct probe_child load;
	int load_started;
	struct pfcap *cap;
	struct pfcap_counts *caps;	/* one per sample */
	int ncaps, have_fin;
	struct pfcap_counts fin;	/* at the end */
};

/* A command line for the bw engine, built an argument at a time. */
struct pfc_argv {
	const char *v[40];
	char b[24][160];
	int n, nb;
};

static void pfc_arg(struct pfc_argv *a, const char *fmt, ...) FS_PRINTF(2, 3);
static void pfc_arg(struct pfc_argv *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->b[a->nb], sizeof(a->b[a->nb]), fmt, ap);
	va_end(ap);
	a->v[a->n++] = a->b[a->nb++];
}

/* What the load and the server are given alike: the rail, the device, the class, the node. */
static void pfc_args_common(const struct fopts *o, struct pfc_argv *a)
{
	if (o->bind)
		pfc_arg(a, "--bind=%s", o->bind);
	if (o->device && o->transport && !strcmp(o->transport, "verbs"))
		pfc_arg(a, "--device=%s", o->device);
	if (o->tclass >= 0)
		pfc_arg(a, "--tclass=%d", o->tclass);
	if (o->node)
		pfc_arg(a, "--node=%s", o->node);
}

static int pfc_start_load(struct pfc_run *r)
{
	const struct fopts *o = r->o;
	struct pfc_argv a = { .n = 0 };
	int i;

	a.v[a.n++] = "bw";
	a.v[a.n++] = r->host;
	pfc_arg(&a, "--port=%d", o->port);
	pfc_arg(&a, "--flows=%d", o->flows);
	pfc_arg(&a, "--duration=%g", o->during);
	pfc_arg(&a, "--timeout=%g", o->timeout);
	pfc_arg(&a, "--size=%llu", (unsigned long long)(o->size ? o->size : 65536));
	pfc_arg(&a, "--transport=%s", o->transport ? o->transport : "tcp");
	pfc_args_common(o, &a);
	for (i = 0; i < o->labels.n && a.nb < 24; i++)
		pfc_arg(&a, "--label=%s", o->labels.v[i]);
	a.v[a.n] = NULL;
	r->load_started = 1;
	return probe_child_start(&r->load, a.v, a.n, 1, "fabscope probe pfc (load)");
}

static int pfc_tick(void *arg, int i, const struct ctr_snapshot *s)
{
	struct pfc_run *r = arg;

	if (r->cap && i < r->ncaps)
		pfcap_read(r->cap, &r->caps[i]);
	if (r->host && i == r->load_at && !r->load_started) {
		int rc = pfc_start_load(r);

		if (rc)
			return rc;
	}
	return 0;
}

static json_t *num_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static const char *storm_dirs(const struct pfc_prio_verdict *pv)
{
	return pv->storm[0] && pv->storm[1] ? "rx+tx" : pv->storm[0] ? "rx" : pv->storm[1] ? "tx" : "none";
}

static int prio_paused(const struct pfc_prio_verdict *pv)
{
	return pv->frames[0] || pv->frames[1] || pv->paused_max[0] > 0 || pv->paused_max[1] > 0;
}

/* What was measured how: role, ends, port, sources, labels, params and the port's totals. */
static void pfc_record_head(json_t *rec, const struct fopts *o, const char *role, const char *host,
			    const char *ifname, const char *sources, double link_gbps, int n,
			    const struct pfc_params *pp, const struct pfc_verdict *v, json_t *labels)
{
	static const struct {
		enum ctr_port_metric m;
		const char *key;
	} port[] = {
		{ CTR_ECN_MARKED, "ecn_marked" }, { CTR_CNP_SENT, "cnp_sent" }, { CTR_CNP_HANDLED, "cnp_handled" },
		{ CTR_OUT_OF_SEQUENCE, "out_of_sequence" }, { CTR_PACKET_SEQ_ERR, "packet_seq_err" },
		{ CTR_STORM_WARN, "storm_warn" }, { CTR_STORM_ERROR, "storm_error" },
		{ CTR_RX_DISCARDS_PHY, "discards_phy" }, { CTR_XMIT_WAIT, "xmit_wait" },
		{ CTR_XMIT_DISCARDS, "xmit_discards" },
	};
	json_t *m, *src = json_object();
	int k;

	json_object_set_new(rec, "role", json_string(role));
	if (o->node)
		json_object_set_new(src, "node", json_string(o->node));
	if (o->bind)
		json_object_set_new(src, "ip", json_string(o->bind));
	json_object_set_new(rec, "src", src);
	if (host)
		json_object_set_new(rec, "dst", json_pack("{ss}", "ip", host));
	json_object_set_new(rec, "iface", ifname ? json_string(ifname) : json_null());
	if (o->device)
		json_object_set_new(rec, "rdma_dev", json_string(o->device));
	json_object_set_new(rec, "sources", json_string(sources));
	if (labels)
		json_object_set(rec, "labels", labels);
	json_object_set_new(rec, "params", json_pack("{sf,sf,sf,sf,so,so,so,si,si,sf,si}",
		"interval_s", o->interval, "before_s", o->before, "during_s", o->during, "after_s", o->after,
		"link_gbps", num_or_null(link_gbps > 0 ? link_gbps : NAN),
		/* not given, not known: null, as the man page has unknown numbers */
		"tclass", o->tclass >= 0 ? json_integer(o->tclass) : json_null(),
		"prio", o->prio >= 0 ? json_integer(o->prio) : json_null(),
		"flows", host ? o->flows : 0, "quanta", pp->quanta, "storm_fraction", pp->storm_fraction,
		"storm_intervals", pp->storm_intervals));
	if (host)
		json_object_set_new(json_object_get(rec, "params"), "load", json_string(host));
	m = json_pack("{si,sf,si}", "intervals", n, "seconds", v->seconds, "resets", v->resets);
	for (k = 0; k < (int)(sizeof(port) / sizeof(port[0])); k++)
		if (v->have[ctr_port_idx(port[k].m)])
			json_object_set_new(m, port[k].key, json_integer((json_int_t)v->total[ctr_port_idx(port[k].m)]));
	json_object_set_new(rec, "metrics", m);
}

/*
 * The priorities the counters have, one entry each; the lines of those that
 * paused or stormed (and the watched one) into text[0..*used), "|" between.
 * *any_present, *any_pause: whether any had counters, any paused.
 */
static json_t *pfc_record_prios(const struct pfc_verdict *v, const struct pfc_params *pp, int watch,
				char *text, size_t len, size_t *used, int *any_present, int *any_pause)
{
	json_t *prios = json_array();
	char buf[1024];
	int p;

	for (p = 0; p < CTR_PRIOS; p++) {
		const struct pfc_prio_verdict *pv = &v->prio[p];

		if (!pv->present)
			continue;
		*any_present = 1;
		*any_pause |= prio_paused(pv);
		json_array_append_new(prios, json_pack("{si,sI,sI,so,so,so,so,so,so,so,so,sb,ss,si,si,si,ss,sI}",
			"prio", p, "rx_frames", (json_int_t)pv->frames[0], "tx_frames", (json_int_t)pv->frames[1],
			"rx_pps_avg", num_or_null(pv->pps_avg[0]), "rx_pps_max", num_or_null(pv->pps_max[0]),
			"tx_pps_avg", num_or_null(pv->pps_avg[1]), "tx_pps_max", num_or_null(pv->pps_max[1]),
			"rx_paused_avg", num_or_null(pv->paused_avg[0]), "rx_paused_max", num_or_null(pv->paused_max[0]),
			"tx_paused_avg", num_or_null(pv->paused_avg[1]), "tx_paused_max", num_or_null(pv->paused_max[1]),
			"estimated", pv->estimated[0] || pv->estimated[1], "storm", storm_dirs(pv),
			"storm_run", pv->storm_run[0] > pv->storm_run[1] ? pv->storm_run[0] : pv->storm_run[1],
			"storm_from", pv->storm[0] ? pv->storm_from[0] : pv->storm[1] ? pv->storm_from[1] :
				      pv->storm_run[0] >= pv->storm_run[1] ? pv->storm_from[0] : pv->storm_from[1],
			"first_pause", pv->first_pause, "ecn_first", pfc_tri_name(pv->ecn_first),
			"discards", (json_int_t)pv->discards));
		if (pv->storm[0] || pv->storm[1] || prio_paused(pv) || p == watch) {
			const char *sep = *used ? " | " : "";

			pfc_prio_text(v, pp, p, buf, sizeof(buf));
			*used += (size_t)snprintf(text + *used, *used < len ? len - *used : 0, "%s%s", sep, buf);
			if (*used >= len)
				*used = len - 1;
		}
	}
	return prios;
}

/* Per interval: ECN and CNP rates, and each paused (or watched) priority's rates and time paused. */
static void pfc_timeline_rates(json_t *tl, const struct pfc_interval *iv, int n, const struct pfc_verdict *v,
			       int watch)
{
	static const struct {
		enum ctr_port_metric m[2];
		const char *key;
	} rates[] = {
		{ { CTR_ECN_MARKED, CTR_ECN_MARKED }, "ecn_ps" },
		{ { CTR_CNP_SENT, CTR_CNP_HANDLED }, "cnp_ps" },
	};
	static const char *const keys[4] = { "rx_pps", "tx_pps", "rx_paused", "tx_paused" };
	json_t *tprio = json_object();
	size_t r;
	int p, k, d;

	for (r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		int a = ctr_port_idx(rates[r].m[0]), b = ctr_port_idx(rates[r].m[1]);
		json_t *arr;

		if (!v->have[a] && !v->have[b])
			continue;
		arr = json_array();
		for (k = 0; k < n; k++) {
			uint64_t x = (iv[k].have[a] ? iv[k].delta[a] : 0) + (a != b && iv[k].have[b] ? iv[k].delta[b] : 0);

			json_array_append_new(arr, json_real((double)x / (iv[k].t1 - iv[k].t0)));
		}
		json_object_set_new(tl, rates[r].key, arr);
	}
	for (p = 0; p < CTR_PRIOS; p++) {
		const struct pfc_prio_verdict *pv = &v->prio[p];
		json_t *o4;
		char name[4];

		if (!pv->present || !(prio_paused(pv) || p == watch))
			continue;
		o4 = json_object();
		for (d = 0; d < 4; d++) {
			json_t *arr = json_array();

			for (k = 0; k < n; k++)
				json_array_append_new(arr, num_or_null(d < 2 ? iv[k].prio[p].pps[d] :
								      iv[k].prio[p].paused[d - 2]));
			json_object_set_new(o4, keys[d], arr);
		}
		snprintf(name, sizeof(name), "%d", p);
		json_object_set_new(tprio, name, o4);
	}
	json_object_set_new(tl, "prio", tprio);
}

/* The timeline: per interval, its end (seconds from the first sample) and the phase it lies in; its rates. */
static json_t *pfc_timeline(const struct fopts *o, const char *role, const char *host, double t0,
			    const struct pfc_interval *iv, int n, const struct pfc_verdict *v)
{
	json_t *tl, *tt = json_array(), *tp = json_array();
	int k;

	for (k = 0; k < n; k++) {
		double mid = (iv[k].t0 + iv[k].t1) / 2 - t0;

		json_array_append_new(tt, json_real(iv[k].t1 - t0));
		json_array_append_new(tp, json_string(!host && !strcmp(role, "monitor") && o->before <= 0 &&
						      o->after <= 0 ? "during" :
						      mid < o->before ? "before" :
						      mid < o->before + o->during ? "during" : "after"));
	}
	tl = json_pack("{so,so}", "t", tt, "phase", tp);
	pfc_timeline_rates(tl, iv, n, v, o->prio);
	return tl;
}

static json_t *pfc_record(const struct fopts *o, const char *role, const char *host, const char *ifname,
			  const char *sources, double link_gbps, const struct pfc_series *ser,
			  const struct pfc_interval *iv, int n, const struct pfc_params *pp,
			  const struct pfc_verdict *v, json_t *labels)
{
	json_t *rec = record_new("pfc");
	int any_present = 0, any_pause = 0;
	char text[2048] = "", buf[1024];
	size_t used = 0;

	pfc_record_head(rec, o, role, host, ifname, sources, link_gbps, n, pp, v, labels);
	json_object_set_new(rec, "priorities", pfc_record_prios(v, pp, o->prio, text, sizeof(text), &used,
								&any_present, &any_pause));
	json_object_set_new(rec, "timeline", pfc_timeline(o, role, host, ser->s[0].t, iv, n, v));
	json_object_set_new(rec, "storm", json_boolean(v->storm));
	json_object_set_new(rec, "first_ecn", json_integer(v->first_ecn));
	json_object_set_new(rec, "first_pause", json_integer(v->first_pause));
	json_object_set_new(rec, "ecn_first", json_string(pfc_tri_name(v->ecn_first)));
	json_object_set_new(rec, "verdict", json_string(v->storm ? "storm" : !any_present ? "unknown" :
							 any_pause ? "paused" : "clean"));
	pfc_port_text(v, buf, sizeof(buf));
	if (!used)
		snprintf(text, sizeof(text), "%s%s", any_present ? "no pauses; " : "no pause counters; ", buf);
	else if (used + 3 < sizeof(text))
		snprintf(text + used, sizeof(text) - used, " | %s", buf);
	json_object_set_new(rec, "verdict_text", json_string(text));
	json_object_set_new(rec, "status", json_string("ok"));
	return rec;
}

/* Pause counters a driver lacks, from the frames the capture saw by each sample. */
static void pfc_fill_from_capture(struct pfc_series *ser, const struct pfcap_counts *caps, int n)
{
	static const enum ctr_prio_metric fr[2] = { CTR_RX_PAUSE, CTR_TX_PAUSE };
	static const enum ctr_prio_metric us[2] = { CTR_RX_PAUSE_US, CTR_TX_PAUSE_US };
	int i, p, d, own[CTR_NMETRICS] = { 0 };

	/* a metric is the capture's when no sample had it from a counter */
	for (p = 0; p < CTR_PRIOS; p++)
		for (d = 0; d < 2; d++) {
			int f = ctr_prio_idx(p, fr[d]), u = ctr_prio_idx(p, us[d]);

			own[f] = own[u] = 1;
			for (i = 0; i < ser->n; i++) {
				own[f] &= !ser->s[i].have[f];
				own[u] &= !ser->s[i].have[u];
			}
		}
	for (i = 0; i < ser->n && i < n; i++)
		for (p = 0; p < CTR_PRIOS; p++)
			for (d = 0; d < 2; d++) {
				int f = ctr_prio_idx(p, fr[d]), u = ctr_prio_idx(p, us[d]);

				if (own[f]) {
					ser->s[i].v[f] = caps[i].prio[p].frames[d];
					ser->s[i].have[f] = 1;
				}
				if (own[u] && isfinite(caps[i].prio[p].paused_s[d])) {
					ser->s[i].v[u] = (uint64_t)llround(caps[i].prio[p].paused_s[d] * 1e6);
					ser->s[i].have[u] = 1;
				}
			}
}

static json_t *pfc_capture_json(const char *ifname, const struct pfcap_counts *c)
{
	json_t *prios = json_array();
	int p;

	for (p = 0; p < CTR_PRIOS; p++) {
		const struct pfcap_prio *q = &c->prio[p];

		if (!q->frames[0] && !q->frames[1])
			continue;
		json_array_append_new(prios, json_pack("{si,sI,sI,sI,sI,sI,sI,sI,sI,so,so}", "prio", p,
			"rx_frames", (json_int_t)q->frames[0], "tx_frames", (json_int_t)q->frames[1],
			"rx_xoff", (json_int_t)q->xoff[0], "rx_xon", (json_int_t)q->xon[0],
			"tx_xoff", (json_int_t)q->xoff[1], "tx_xon", (json_int_t)q->xon[1],
			"rx_quanta", (json_int_t)q->quanta[0], "tx_quanta", (json_int_t)q->quanta[1],
			"rx_paused_s", num_or_null(q->paused_s[0]), "tx_paused_s", num_or_null(q->paused_s[1])));
	}
	return json_pack("{ss,sI,sI,sI,sI,sI,sI,s{sI,sI,sI,sI,so,so},so}", "iface", ifname,
		"frames", (json_int_t)c->frames, "pfc", (json_int_t)c->pfc, "pause", (json_int_t)c->pause,
		"other", (json_int_t)c->other, "truncated", (json_int_t)c->truncated,
		"dropped", (json_int_t)c->dropped, "global",
		"rx_frames", (json_int_t)c->global.frames[0], "tx_frames", (json_int_t)c->global.frames[1],
		"rx_quanta", (json_int_t)c->global.quanta[0], "tx_quanta", (json_int_t)c->global.quanta[1],
		"rx_paused_s", num_or_null(c->global.paused_s[0]), "tx_paused_s", num_or_null(c->global.paused_s[1]),
		"prio", prios);
}

static void pfc_text(struct out *out, json_t *rec)
{
	json_t *tl = json_object_get(rec, "timeline"), *t = json_object_get(tl, "t");
	json_t *ph = json_object_get(tl, "phase"), *pr = json_object_get(tl, "prio"), *ecn = json_object_get(tl, "ecn_ps");
	size_t k;

	out_comment(out, "%-8s %-6s %10s  %s", "t (s)", "phase", ecn ? "ECN/s" : "",
		    json_object_size(pr) ? "per priority: pause frames/s rx tx, paused rx tx" : "(no pause counters)");
	for (k = 0; k < json_array_size(t); k++) {
		char line[512], e[24] = "";
		size_t used = 0;
		const char *key;
		json_t *pv;

		if (ecn)
			snprintf(e, sizeof(e), "%.0f", json_number_value(json_array_get(ecn, k)));
		json_object_foreach(pr, key, pv) {
			json_t *a[4] = { json_object_get(pv, "rx_pps"), json_object_get(pv, "tx_pps"),
					 json_object_get(pv, "rx_paused"), json_object_get(pv, "tx_paused") };
			char f[4][16];
			int d;

			for (d = 0; d < 4; d++) {
				json_t *x = json_array_get(a[d], k);

				if (!json_is_number(x))
					snprintf(f[d], sizeof(f[d]), "-");
				else if (d < 2)
					snprintf(f[d], sizeof(f[d]), "%.0f", json_number_value(x));
				else
					snprintf(f[d], sizeof(f[d]), "%.1f%%", 100 * json_number_value(x));
			}
			if (used < sizeof(line))
				used += (size_t)snprintf(line + used, sizeof(line) - used, "  p%s %s %s %s %s",
							 key, f[0], f[1], f[2], f[3]);
		}
		line[used < sizeof(line) ? used : sizeof(line) - 1] = 0;
		out_comment(out, "%-8.2f %-6s %10s%s", json_number_value(json_array_get(t, k)),
			    json_string_value(json_array_get(ph, k)), e, used ? line : "");
	}
	out_comment(out, "verdict: %s", record_str(rec, "verdict", "?"));
	out_comment(out, "%s", record_str(rec, "verdict_text", ""));
}

/* The checks of the options that need no counters, in the order they are said. */
static int pfc_check_opts(const struct fopts *o, int nargs, const char *host, json_t **labels)
{
	const char *bad;
	int rc;

	if (nargs > 1)
		return fs_err_usage("give at most one HOST, the incast target's bw server");
	if (host && o->serve)
		return fs_err_usage("--serve makes this node the target: give no HOST with it");
	if (host && !o->port)
		return fs_err_usage("-p 0 picks a free port for --serve; a sender needs the server's port");
	if (!(o->interval >= 0.01) || o->before < 0 || o->after < 0 || !(o->during > 0) ||
	    !(o->storm_fraction > 0 && o->storm_fraction <= 1))
		return fs_err_usage(!(o->interval >= 0.01) ? "--interval must be at least 0.01 s" :
				    !(o->during > 0) ? "--duration must be more than 0" :
				    !(o->storm_fraction > 0 && o->storm_fraction <= 1) ? "--storm-fraction must be in (0, 1]" :
				    "--before and --after cannot be negative");
	if (record_labels(&o->labels, labels, &bad))
		return fs_err_usage(RECORD_LABEL_ERR, bad);
	if ((host || o->serve) && o->transport && (rc = xport_check(o->transport)))
		return rc;	/* (a monitor runs no load) */
	if ((o->before + o->during + o->after) / o->interval > PFC_MAX_SAMPLES)
		return fs_err_usage("%g s at --interval %g s is more than %d samples: sample less often or for less long",
				    o->before + o->during + o->after, o->interval, PFC_MAX_SAMPLES);
	return 0;
}

/*
 * The port's counters (its interface found from --bind when not given, into
 * ifbuf), what they are (sources) and the judging parameters; the number of
 * samples and the one the load starts at into r.
 */
static int pfc_open_counters(struct fopts *o, struct pfc_run *r, char *ifbuf, size_t iflen,
			     struct counters **c, char *sources, size_t srclen, struct pfc_params *pp,
			     int *samples)
{
	struct ctr_opts co = { 0 };
	int rc;

	if (!o->ifname && !o->device) {
		if (!o->bind)
			return fs_err_usage("which port? give the interface (-i IF), the RDMA device (-d DEV) or --bind ADDR");
		if ((rc = ifname_of_addr(o->bind, ifbuf, iflen)))
			return rc;
		o->ifname = ifbuf;
	}
	co.root = o->root;
	co.ifname = o->ifname;
	co.rdma_dev = o->device;
	co.port = o->ib_port;
	co.driver = o->driver;
	if ((rc = counters_open(c, &co)))
		return rc;
	counters_describe(*c, sources, srclen);
	pfc_params_init(pp);
	pp->link_gbps = o->link_rate > 0 ? o->link_rate : counters_link_gbps(*c);
	pp->quanta = (unsigned)o->quanta;
	pp->storm_fraction = o->storm_fraction;
	pp->storm_intervals = o->storm_intervals;
	if (o->prio < 0 && o->tclass >= 0)
		o->prio = o->tclass >> 5;	/* DSCP / 8: the common trust-DSCP map */
	*samples = (int)llround((o->before + o->during + o->after) / o->interval) + 1;
	r->load_at = (int)llround(o->before / o->interval);
	if (*samples < 2)
		return fs_err_usage("%g s at --interval %g s is less than one interval", o->before + o->during + o->after,
				    o->interval);
	return 0;
}

/* --capture: the frames seen on the interface, one count per sample. */
static int pfc_start_capture(const struct fopts *o, struct pfc_run *r, int samples, double link,
			     char *sources, size_t srclen)
{
	int rc;

	if (o->capture && (o->root || !o->ifname))
		return fs_err_usage("--capture needs a live interface: give -i IF, without --counters-root");
	if (!o->capture)
		return 0;
	if ((rc = pfcap_start(&r->cap, o->ifname, link)))
		return rc;
	r->caps = calloc((size_t)samples, sizeof(*r->caps));
	if (!r->caps)
		return fs_err_env("out of memory for %d samples", samples);
	r->ncaps = samples;
	snprintf(sources + strlen(sources), srclen - strlen(sources), ", capture %s", o->ifname);
	return 0;
}

/* --serve: the bw server the senders' load goes to, for one client. */
static int pfc_start_server(const struct fopts *o, struct probe_child *server)
{
	struct pfc_argv a = { .n = 0 };

	a.v[a.n++] = "bw";
	a.v[a.n++] = "--server";
	a.v[a.n++] = "--once";
	pfc_arg(&a, "--port=%d", o->port);
	pfc_arg(&a, "--transport=%s", o->transport ? o->transport : "tcp");
	pfc_arg(&a, "--timeout=%g", o->timeout);
	pfc_args_common(o, &a);
	a.v[a.n] = NULL;
	return probe_child_start(server, a.v, a.n, 0, "fabscope probe pfc (server)");
}

/* After the sampling: the load's exit (its rate into *load_gbps), the server's, the capture's counts. */
static int pfc_stop_children(struct pfc_run *r, struct probe_child *server, struct pfc_series *ser,
			     json_t *lrecs, double *load_gbps)
{
	int load_rc = 0;

	if (r->load_started) {
		json_t *rec;
		size_t k;

		load_rc = probe_child_finish(&r->load, r->o->timeout + 5, lrecs);
		json_array_foreach(lrecs, k, rec)
			if (!strcmp(record_str(rec, "scope", ""), "aggregate") &&
			    !strcmp(record_str(rec, "status", "ok"), "ok"))
				*load_gbps = record_num(rec, "metrics.bw_gbps", NAN);
	}
	if (server->pid > 0)
		probe_child_finish(server, 1, NULL);
	if (r->cap) {
		pfcap_stop(r->cap, &r->fin);
		r->cap = NULL;
		r->have_fin = 1;
		pfc_fill_from_capture(ser, r->caps, r->ncaps);
	}
	return load_rc;
}

/* The record, with what the load and the capture add to it, out (and as text). */
static void pfc_emit(struct out *out, const struct pfc_run *r, json_t *rec, double load_gbps, int load_rc,
		     int interrupted)
{
	if (isfinite(load_gbps))
		json_object_set_new(json_object_get(rec, "metrics"), "load_gbps", json_real(load_gbps));
	if (r->load_started && load_rc)
		json_object_set_new(rec, "load_error",
				    json_sprintf("the load to %s failed (exit %d): see its message above",
						 r->host, -load_rc));
	if (r->have_fin)
		json_object_set_new(rec, "capture", pfc_capture_json(r->o->ifname, &r->fin));
	if (interrupted)
		json_object_set_new(rec, "interrupted", json_true());
	out_record(out, rec);
	if (!r->o->json)
		pfc_text(out, rec);
	json_decref(rec);
}

int probe_pfc(int argc, const char **argv)
{
	struct fopts o = { .flows = 4, .port = 18520, .tclass = -1, .prio = -1, .interval = 1, .before = 2,
			   .during = 10, .after = 2, .timeout = 10, .quanta = PFC_XOFF_QUANTA,
			   .storm_fraction = PFC_STORM_FRACTION, .storm_intervals = PFC_STORM_INTERVALS };
	struct opt tab[] = {
		OPT_GROUP("Counters"),
		OPT_STRING('i', "interface", &o.ifname, "IF", "the netdev whose counters to read (ethtool statistics; its RDMA device's too)"),
		OPT_STRING('d', "device", &o.device, "DEV", "the RDMA device: sysfs hw_counters and counters (default: the interface's)"),
		OPT_INT(0, "ib-port", &o.ib_port, "N", "the RDMA device's port (default 1)", 1, 255),
		OPT_STRING(0, "bind", &o.bind, "ADDR", "this node's address on the rail: finds the interface; the load's source"),
		OPT_STRING(0, "driver", &o.driver, "MAP", "counter name map, mlx5 or rxe (default: from the driver)"),
		OPT_FILE(0, "counters-root", &o.root, "DIR", "read the counters from a tree laid out like / (a fixture) instead of this host"),
		OPT_BOOL(0, "capture", &o.capture, "also count the PFC/PAUSE frames seen on the interface (libpcap; root)"),
		OPT_GROUP("Sampling"),
		OPT_SECONDS(0, "interval", &o.interval, "SECONDS", "sample every so often (default 1)"),
		OPT_SECONDS0(0, "before", &o.before, "SECONDS", "sample so long before the load (default 2)"),
		OPT_SECONDS('D', "duration", &o.during, "SECONDS", "the load phase (default 10)"),
		OPT_SECONDS0(0, "after", &o.after, "SECONDS", "sample so long after it (default 2)"),
		OPT_NUMBER(0, "link-rate", &o.link_rate, "GBPS", "link speed for paused time from frames (default: the interface's)"),
		OPT_INT(0, "quanta", &o.quanta, "Q", "quanta each counted frame asks for, for estimates (default 65535)", 1, 65535),
		OPT_NUMBER(0, "storm-fraction", &o.storm_fraction, "F", "an interval paused more than this counts to a storm (default 0.99)"),
		OPT_INT(0, "storm-intervals", &o.storm_intervals, "N", "so many such intervals in a row make a storm (default 3)", 1, 1000000),
		OPT_INT(0, "prio", &o.prio, "P", "the priority to show even when quiet (default: --tclass's DSCP / 8)", 0, 7),
		OPT_GROUP("Load"),
		OPT_BOOL(0, "serve", &o.serve, "be the incast target: run the bw server the senders use"),
		OPT_INT('q', "flows", &o.flows, "K", "flows from this sender (default 4)", 1, 1024),
		OPT_SIZE('s', "size", &o.size, "SIZE", "message size (default 64K)", 1, 1ll << 30),
		OPT_STRING('t', "transport", &o.transport, "NAME", "tcp (default) or verbs"),
		OPT_INT('p', "port", &o.port, "PORT", "the bw server's control port (default 18520; --serve 0: any free one)", 0, 65535),
		OPT_INT(0, "tclass", &o.tclass, "N", "traffic class of the load: the IP TOS byte, DSCP x 4", 0, 255),
		OPT_SECONDS(0, "timeout", &o.timeout, "SECONDS", "give up on a silent peer after this long (default 10)"),
		OPT_STRING(0, "node", &o.node, "NAME", "this node's name in records"),
		OPT_GROUP("Output"),
		OPT_BOOL(0, "json", &o.json, "print the record as JSON"),
		OPT_FILE('o', "output", &o.output, "FILE", "also write the record to FILE, a JSON line (as results.jsonl)"),
		OPT_LIST(0, "label", &o.labels, "K=V", "label the record (repeatable)"),
		OPT_VERBOSE(&o.verbose),
		OPT_END(),
	};
	struct pfc_run run = { .o = &o };
	struct probe_child server = { 0 };
	struct pfc_series ser = { 0 };
	struct pfc_interval *iv = NULL;
	struct pfc_params pp;
	struct pfc_verdict v;
	struct counters *c = NULL;
	struct out out;
	int nargs, rc, wrc, samples = 0, niv = 0, out_open = 0, load_rc = 0;
	char ifbuf[64], sources[512];
	const char *role;
	json_t *labels = NULL, *lrecs = json_array();
	double load_gbps = NAN;

	fs_set_progname("fabscope probe pfc");
	rc = opts_parse(argc, argv, tab, pfc_usage, pfc_about, &nargs);
	if (rc) {
		json_decref(lrecs);
		return rc == OPTS_HELP ? 0 : -rc;
	}
	fs_set_verbosity(o.verbose);
	run.host = nargs ? argv[0] : NULL;
	role = run.host ? "sender" : o.serve ? "target" : "monitor";
	if ((rc = pfc_check_opts(&o, nargs, run.host, &labels)) ||
	    (rc = pfc_open_counters(&o, &run, ifbuf, sizeof(ifbuf), &c, sources, sizeof(sources), &pp,
				    &samples)) ||
	    (rc = pfc_start_capture(&o, &run, samples, pp.link_gbps, sources, sizeof(sources))))
		goto out;
	out_init(&out, o.json ? OUT_JSON : OUT_TEXT, stdout);
	out_open = 1;
	if (o.output && (rc = out_json_file(&out, o.output)))
		goto out;	/* (said) */
	net_stop_on_signals();
	if (o.serve && (rc = pfc_start_server(&o, &server)))
		goto out;
	fs_info("sampling %s every %g s: %g s before, %g s %s, %g s after", sources, o.interval, o.before,
		o.during, run.host ? "of load" : o.serve ? "serving the senders" : "watching", o.after);
	rc = pfc_sample(c, o.interval, samples, &net_stop, pfc_tick, &run, &ser);
	load_rc = pfc_stop_children(&run, &server, &ser, lrecs, &load_gbps);
	if (ser.n < 2) {
		if (!rc)
			rc = fs_err_env("fewer than two samples: nothing to judge");
		goto out;
	}
	if (pfc_series_intervals(&ser, &pp, &iv, &niv) || pfc_judge(iv, niv, &pp, &v)) {
		rc = rc ? rc : -FS_EXIT_USAGE;
		goto out;
	}
	pfc_emit(&out, &run, pfc_record(&o, role, run.host, o.ifname, sources, pp.link_gbps, &ser, iv, niv,
					&pp, &v, labels),
		 load_gbps, load_rc, rc == -FS_EXIT_INTERRUPTED);
	if (!rc && load_rc)
		rc = load_rc;
out:
	if (run.load.pid > 0)
		probe_child_finish(&run.load, 0, NULL);
	if (server.pid > 0)
		probe_child_finish(&server, 0, NULL);
	if (run.cap)
		pfcap_stop(run.cap, NULL);
	free(run.caps);
	if (out_open && (wrc = out_finish(&out)) && !rc)
		rc = wrc;
	if (net_stop && !rc)
		rc = -FS_EXIT_INTERRUPTED;
	free(iv);
	pfc_series_release(&ser);
	counters_free(c);
	json_decref(labels);
	json_decref(lrecs);
	opt_list_release(&o.labels);
	return -rc;
}
