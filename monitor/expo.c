/* SPDX-License-Identifier: BSD-2-Clause */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/clock.h"
#include "../transport/ud.h"
#include "expo.h"

void mon_buf_printf(struct mon_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	for (;;) {
		size_t room = b->alloc - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = 1;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		if (FS_ALLOC_GROW(b->p, b->len + (size_t)n + 1, b->alloc)) {
			b->failed = 1;
			return;
		}
	}
}

void mon_buf_label(struct mon_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			mon_buf_printf(b, "\\%c", *s);
		else if (*s == '\n')
			mon_buf_printf(b, "\\n");
		else
			mon_buf_printf(b, "%c", *s);
	}
}

void mon_buf_release(struct mon_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static void head(struct mon_buf *b, const char *name, const char *type, const char *help)
{
	mon_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* n bytes of s, fast: the exposition is most of a scrape's cost */
static void put(struct mon_buf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->alloc - b->len < n + 1 && FS_ALLOC_GROW(b->p, b->len + n + 1, b->alloc)) {
		b->failed = 1;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void put_u64(struct mon_buf *b, uint64_t v)
{
	char d[24];
	int i = sizeof(d);

	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10));
	put(b, d + i, sizeof(d) - (size_t)i);
}

/* One series line: NAME{LABELS[,EXTRA]} VALUE */
static void line_u64(struct mon_buf *b, const char *name, size_t nlen, const struct mon_buf *labels,
		     const char *extra, size_t elen, uint64_t v)
{
	put(b, name, nlen);
	put(b, "{", 1);
	put(b, labels->p, labels->len);
	put(b, extra, elen);
	put(b, "} ", 2);
	put_u64(b, v);
	put(b, "\n", 1);
}

/* node="N",peer="P",rail="R",plane="L",sport_bucket="K" into lb (emptied first) */
static void cell_labels(struct mon_buf *lb, struct mon_engine *e, int p, int l, int k)
{
	lb->len = 0;
	mon_buf_printf(lb, "node=\"");
	mon_buf_label(lb, e->peers.self);
	mon_buf_printf(lb, "\",peer=\"");
	mon_buf_label(lb, e->peers.p[p].name);
	mon_buf_printf(lb, "\",rail=\"%d\",plane=\"%d\",sport_bucket=\"%d\"", e->peers.lane[l].rail,
		       e->peers.lane[l].plane, k);
}

#define NAME(s) s, sizeof(s) - 1

/* The series of the cells per transport: [x][0 sent, 1 lost, 2 rtt _bucket, 3 _sum{, 4 _count] */
static const struct {
	const char *s;
	size_t len;
} cell_names[MON_NX][5] = {
	{ { NAME("fabscope_probe_sent_total") }, { NAME("fabscope_probe_lost_total") },
	  { NAME("fabscope_probe_rtt_seconds_bucket") }, { NAME("fabscope_probe_rtt_seconds_sum{") },
	  { NAME("fabscope_probe_rtt_seconds_count") } },
	{ { NAME("fabscope_probe_ud_sent_total") }, { NAME("fabscope_probe_ud_lost_total") },
	  { NAME("fabscope_probe_ud_rtt_seconds_bucket") }, { NAME("fabscope_probe_ud_rtt_seconds_sum{") },
	  { NAME("fabscope_probe_ud_rtt_seconds_count") } },
};

/* which: 0 sent, 1 lost; of transport x */
static void counter_cells(struct mon_buf *b, struct mon_engine *e, int x, int which, struct mon_buf *lb)
{
	for (int p = 0; p < e->peers.n; p++)
		for (int l = 0; l < e->peers.nlanes; l++) {
			if (!e->peers.p[p].ip[l].s_addr)
				continue;
			for (int k = 0; k < e->o.buckets; k++) {
				const struct mon_cell *c = mon_xcell(e, x, p, l, k);

				cell_labels(lb, e, p, l, k);
				line_u64(b, cell_names[x][which].s, cell_names[x][which].len, lb, "", 0, which ? c->lost : c->sent);
			}
		}
}

static void hist_cells(struct mon_buf *b, struct mon_engine *e, int x, struct mon_buf *lb)
{
	char le[MON_HIST_BUCKETS][40], sum[40];
	size_t lelen[MON_HIST_BUCKETS];

	for (int i = 0; i < MON_HIST_BUCKETS; i++) {
		char v[32];

		lelen[i] = (size_t)snprintf(le[i], sizeof(le[i]), ",le=\"%s\"", mon_hist_le_str(i, v, sizeof(v)));
	}
	for (int p = 0; p < e->peers.n; p++)
		for (int l = 0; l < e->peers.nlanes; l++) {
			if (!e->peers.p[p].ip[l].s_addr)
				continue;
			for (int k = 0; k < e->o.buckets; k++) {
				const struct mon_hist *h = &mon_xcell(e, x, p, l, k)->rtt;
				uint64_t cum = 0;
				int n;

				cell_labels(lb, e, p, l, k);
				for (int i = 0; i < MON_HIST_BUCKETS; i++) {
					cum += h->b[i];
					line_u64(b, cell_names[x][2].s, cell_names[x][2].len, lb, le[i], lelen[i], cum);
				}
				n = snprintf(sum, sizeof(sum), "%.9g", h->sum);
				put(b, cell_names[x][3].s, cell_names[x][3].len);
				put(b, lb->p, lb->len);
				put(b, "} ", 2);
				put(b, sum, (size_t)n);
				put(b, "\n", 1);
				line_u64(b, cell_names[x][4].s, cell_names[x][4].len, lb, "", 0, h->count);
			}
		}
}

static void node_gauge(struct mon_buf *b, struct mon_engine *e, const char *name, const char *extra, double v)
{
	mon_buf_printf(b, "%s{node=\"", name);
	mon_buf_label(b, e->peers.self);
	mon_buf_printf(b, "\"%s} %.9g\n", extra, v);
}

static void engine_series(struct mon_buf *b, struct mon_engine *e)
{
	int cross = 0;

	for (int p = 0; p < e->peers.n; p++)
		cross += e->peers.p[p].cross;
	head(b, "fabscope_monitor_info", "gauge", "the monitor agent: its version and node");
	node_gauge(b, e, "fabscope_monitor_info", ",version=\"" FABSCOPE_VERSION "\"", 1);
	head(b, "fabscope_monitor_peers", "gauge", "peers probed: of its own leaf (full mesh), sampled across leaves");
	node_gauge(b, e, "fabscope_monitor_peers", ",kind=\"leaf\"", e->peers.n - cross);
	node_gauge(b, e, "fabscope_monitor_peers", ",kind=\"cross\"", cross);
	head(b, "fabscope_monitor_lanes", "gauge", "lanes (rail, plane) this node probes from");
	node_gauge(b, e, "fabscope_monitor_lanes", "", e->peers.nlanes);
	head(b, "fabscope_monitor_rate_per_peer", "gauge", "probes a second to each peer on each lane");
	node_gauge(b, e, "fabscope_monitor_rate_per_peer", "", e->o.rate);
	head(b, "fabscope_monitor_timeout_seconds", "gauge", "a probe unanswered this long counts lost");
	node_gauge(b, e, "fabscope_monitor_timeout_seconds", "", e->o.timeout_s);
	head(b, "fabscope_monitor_sport_buckets", "gauge", "source-port buckets (sport_bucket 0 .. this - 1)");
	node_gauge(b, e, "fabscope_monitor_sport_buckets", "", e->o.buckets);
	head(b, "fabscope_monitor_echoed_total", "counter", "peers' probes this node's responder answered");
	node_gauge(b, e, "fabscope_monitor_echoed_total", "", (double)e->tot.echoed);
	head(b, "fabscope_monitor_refused_total", "counter",
	     "datagrams refused: requests malformed or from no node of the peers file, replies malformed, forged, late or twice");
	node_gauge(b, e, "fabscope_monitor_refused_total", ",what=\"request\"", (double)e->tot.refused_req);
	node_gauge(b, e, "fabscope_monitor_refused_total", ",what=\"reply\"", (double)e->tot.refused_rep);
	head(b, "fabscope_monitor_send_errors_total", "counter", "probes the kernel would not send (counted lost too)");
	node_gauge(b, e, "fabscope_monitor_send_errors_total", "", (double)e->tot.send_errors);
	head(b, "fabscope_monitor_reloads_total", "counter", "reloads of the peers file (SIGHUP or a change of the file)");
	node_gauge(b, e, "fabscope_monitor_reloads_total", ",result=\"ok\"", (double)e->tot.reloads_ok);
	node_gauge(b, e, "fabscope_monitor_reloads_total", ",result=\"error\"", (double)e->tot.reloads_failed);
}

/* which: 0 unreachable (UDP), 1 unresolved (UD) */
static void stream_counts(struct mon_buf *b, struct mon_engine *e, int which, struct mon_buf *lb)
{
	int nl = e->peers.nlanes;

	for (int p = 0; p < e->peers.n; p++)
		for (int l = 0; l < nl; l++) {
			if (!e->peers.p[p].ip[l].s_addr)
				continue;
			lb->len = 0;
			mon_buf_printf(lb, "node=\"");
			mon_buf_label(lb, e->peers.self);
			mon_buf_printf(lb, "\",peer=\"");
			mon_buf_label(lb, e->peers.p[p].name);
			mon_buf_printf(lb, "\",rail=\"%d\",plane=\"%d\"", e->peers.lane[l].rail, e->peers.lane[l].plane);
			if (which)
				line_u64(b, NAME("fabscope_probe_ud_unresolved_total"), lb, "", 0, e->st[p * nl + l].ud_unresolved);
			else
				line_u64(b, NAME("fabscope_probe_unreachable_total"), lb, "", 0, e->st[p * nl + l].unreachable);
		}
}

/* The lanes' UD endpoints: one info series each (its device, QP and clock) */
static void ud_lanes(struct mon_buf *b, struct mon_engine *e)
{
	head(b, "fabscope_monitor_ud_lane_info", "gauge",
	     "a lane's UD endpoint: its RDMA device and port, responder QP, and the clock of its UD RTTs (device or software)");
	for (int l = 0; e->ud && l < e->peers.nlanes; l++) {
		const struct ud_info *u = ud_info(e->ud[l]);

		mon_buf_printf(b, "fabscope_monitor_ud_lane_info{node=\"");
		mon_buf_label(b, e->peers.self);
		mon_buf_printf(b, "\",rail=\"%d\",plane=\"%d\",device=\"", e->peers.lane[l].rail, e->peers.lane[l].plane);
		mon_buf_label(b, u->dev);
		mon_buf_printf(b, "\",port=\"%d\",qpn=\"%u\",clock=\"%s\"} 1\n", u->port, u->resp_qpn,
			       u->clock == UD_CLOCK_DEVICE ? "device" : "software");
	}
	head(b, "fabscope_monitor_ud_address_handles_total", "counter",
	     "a lane's UD address handles (one per destination and flow label, cached): created, and replaced to make room");
	for (int l = 0; e->ud && l < e->peers.nlanes; l++) {
		const struct ud_info *u = ud_info(e->ud[l]);

		for (int r = 0; r < 2; r++) {
			mon_buf_printf(b, "fabscope_monitor_ud_address_handles_total{node=\"");
			mon_buf_label(b, e->peers.self);
			mon_buf_printf(b, "\",rail=\"%d\",plane=\"%d\",event=\"%s\"} %llu\n", e->peers.lane[l].rail,
				       e->peers.lane[l].plane, r ? "replaced" : "created",
				       (unsigned long long)(r ? u->ah_replaced : u->ah_created));
		}
	}
}

static void ud_series(struct mon_buf *b, struct mon_engine *e, struct mon_buf *lb)
{
	ud_lanes(b, e);
	head(b, "fabscope_monitor_ud_echoed_total", "counter", "peers' UD probes this node's responder QPs answered");
	node_gauge(b, e, "fabscope_monitor_ud_echoed_total", "", (double)e->tot.ud_echoed);
	head(b, "fabscope_monitor_ud_refused_total", "counter",
	     "UD messages refused: requests malformed or from no node of the file, replies malformed, forged, late or twice, "
	     "answers about QPs not asked for");
	node_gauge(b, e, "fabscope_monitor_ud_refused_total", ",what=\"request\"", (double)e->tot.ud_refused_req);
	node_gauge(b, e, "fabscope_monitor_ud_refused_total", ",what=\"reply\"", (double)e->tot.ud_refused_rep);
	head(b, "fabscope_monitor_ud_send_errors_total", "counter", "UD sends refused or failed (a probe's counts lost too)");
	node_gauge(b, e, "fabscope_monitor_ud_send_errors_total", "", (double)e->tot.ud_send_errors);
	head(b, "fabscope_monitor_ud_questions_total", "counter", "questions for peers' UD responder QPs (over UDP): asked, answered");
	node_gauge(b, e, "fabscope_monitor_ud_questions_total", ",result=\"asked\"", (double)e->tot.ud_asked);
	node_gauge(b, e, "fabscope_monitor_ud_questions_total", ",result=\"answered\"", (double)e->tot.ud_answered);
	head(b, "fabscope_probe_ud_sent_total", "counter", "verbs UD probes sent, per peer, lane and source-port bucket");
	counter_cells(b, e, MON_UD, 0, lb);
	head(b, "fabscope_probe_ud_lost_total", "counter", "UD probes not answered within the probe timeout");
	counter_cells(b, e, MON_UD, 1, lb);
	head(b, "fabscope_probe_ud_rtt_seconds", "histogram",
	     "round-trip time of the answered UD probes (the clock: fabscope_monitor_ud_lane_info)");
	hist_cells(b, e, MON_UD, lb);
	head(b, "fabscope_probe_ud_unresolved_total", "counter",
	     "UD probes not sent: the peer's responder QP not known (its agent does not answer, or has no verbs)");
	stream_counts(b, e, 1, lb);
}

void mon_expo_probes(struct mon_buf *b, struct mon_engine *e)
{
	struct mon_buf lb = { 0 };
	size_t cells = mon_ncells(e);

	size_t guess = cells * (MON_HIST_BUCKETS + 4) * 112 + 8192;	/* about what a cell takes */

	if (!b->alloc && FS_ALLOC_GROW(b->p, guess < (64u << 20) ? guess : (64u << 20), b->alloc))
		b->failed = 1;	/* (room for it all at once, up to 64 MiB: no copy as it grows) */
	engine_series(b, e);
	if (e->o.transports & MON_T_UDP) {
		head(b, "fabscope_probe_sent_total", "counter", "UDP probes sent, per peer, lane and source-port bucket");
		counter_cells(b, e, MON_UDP, 0, &lb);
		head(b, "fabscope_probe_lost_total", "counter", "probes not answered within the probe timeout");
		counter_cells(b, e, MON_UDP, 1, &lb);
		head(b, "fabscope_probe_rtt_seconds", "histogram", "round-trip time of the answered probes (software time)");
		hist_cells(b, e, MON_UDP, &lb);
		head(b, "fabscope_probe_unreachable_total", "counter",
		     "probes the peer's host refused (ICMP port unreachable: no monitor listens there); they count lost too");
		stream_counts(b, e, 0, &lb);
	}
	if (e->o.transports & MON_T_UD)
		ud_series(b, e, &lb);
	b->failed |= lb.failed;
	mon_buf_release(&lb);
}

static json_t *cell_json(struct mon_engine *e, int x, int p, int l, int k, const struct mon_cell *d,
			 double interval_s, const char *now)
{
	json_t *o = json_object(), *bk = json_array();

	for (int i = 0; i < MON_HIST_BUCKETS; i++)
		json_array_append_new(bk, json_integer((json_int_t)d->rtt.b[i]));
	json_object_set_new(o, "schema", json_string("fabscope.monitor/1"));
	json_object_set_new(o, "time", json_string(now));
	json_object_set_new(o, "node", json_string(e->peers.self));
	json_object_set_new(o, "peer", json_string(e->peers.p[p].name));
	json_object_set_new(o, "transport", json_string(x == MON_UD ? "verbs" : "udp"));
	json_object_set_new(o, "rail", json_integer(e->peers.lane[l].rail));
	json_object_set_new(o, "plane", json_integer(e->peers.lane[l].plane));
	json_object_set_new(o, "sport_bucket", json_integer(k));
	json_object_set_new(o, "interval_s", json_real(interval_s));
	json_object_set_new(o, "sent", json_integer((json_int_t)d->sent));
	json_object_set_new(o, "lost", json_integer((json_int_t)d->lost));
	json_object_set_new(o, "rtt_count", json_integer((json_int_t)d->rtt.count));
	json_object_set_new(o, "rtt_sum_s", json_real(d->rtt.sum));
	json_object_set_new(o, "rtt_buckets", bk);
	return o;
}

/* The line of cell (x, p, l, k) when it sent, lost or timed in the interval */
static void cell_line(struct mon_buf *b, struct mon_engine *e, const struct mon_cell *prev, int x, int p, int l, int k,
		      double interval_s, const char *now)
{
	const struct mon_cell *c = mon_xcell(e, x, p, l, k);
	struct mon_cell d = *c;
	json_t *o;
	char *s;

	if (prev) {
		const struct mon_cell *q = &prev[c - e->cells];

		d.sent -= q->sent;
		d.lost -= q->lost;
		mon_hist_sub(&d.rtt, &c->rtt, &q->rtt);
	}
	if (!d.sent && !d.lost && !d.rtt.count)
		return;
	o = cell_json(e, x, p, l, k, &d, interval_s, now);
	s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(9));
	if (s)
		mon_buf_printf(b, "%s\n", s);
	free(s);
	json_decref(o);
}

void mon_expo_jsonl(struct mon_buf *b, struct mon_engine *e, const struct mon_cell *prev, double interval_s)
{
	char now[40];

	clock_iso8601(now, sizeof(now));
	for (int x = 0; x < e->nx; x++)
		for (int p = 0; p < e->peers.n; p++)
			for (int l = 0; l < e->peers.nlanes; l++)
				for (int k = 0; k < e->o.buckets; k++)
					cell_line(b, e, prev, x, p, l, k, interval_s, now);
}
