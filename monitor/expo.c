/* SPDX-License-Identifier: BSD-2-Clause */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/clock.h"
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

/* {node="N",peer="P",rail="R",plane="L",sport_bucket="K" (no closing brace) */
static void cell_labels(struct mon_buf *b, struct mon_engine *e, int p, int l, int k)
{
	mon_buf_printf(b, "{node=\"");
	mon_buf_label(b, e->peers.self);
	mon_buf_printf(b, "\",peer=\"");
	mon_buf_label(b, e->peers.p[p].name);
	mon_buf_printf(b, "\",rail=\"%d\",plane=\"%d\",sport_bucket=\"%d\"", e->peers.lane[l].rail,
		       e->peers.lane[l].plane, k);
}

/* which: 0 sent, 1 lost */
static void counter_cells(struct mon_buf *b, struct mon_engine *e, int which)
{
	for (int p = 0; p < e->peers.n; p++)
		for (int l = 0; l < e->peers.nlanes; l++) {
			if (!e->peers.p[p].ip[l].s_addr)
				continue;
			for (int k = 0; k < e->o.buckets; k++) {
				const struct mon_cell *c = mon_cell(e, p, l, k);

				mon_buf_printf(b, "fabscope_probe_%s_total", which ? "lost" : "sent");
				cell_labels(b, e, p, l, k);
				mon_buf_printf(b, "} %llu\n", (unsigned long long)(which ? c->lost : c->sent));
			}
		}
}

static void hist_cells(struct mon_buf *b, struct mon_engine *e)
{
	char le[32];

	for (int p = 0; p < e->peers.n; p++)
		for (int l = 0; l < e->peers.nlanes; l++) {
			if (!e->peers.p[p].ip[l].s_addr)
				continue;
			for (int k = 0; k < e->o.buckets; k++) {
				const struct mon_hist *h = &mon_cell(e, p, l, k)->rtt;
				uint64_t cum = 0;

				for (int i = 0; i < MON_HIST_BUCKETS; i++) {
					cum += h->b[i];
					mon_buf_printf(b, "fabscope_probe_rtt_seconds_bucket");
					cell_labels(b, e, p, l, k);
					mon_buf_printf(b, ",le=\"%s\"} %llu\n", mon_hist_le_str(i, le, sizeof(le)),
						       (unsigned long long)cum);
				}
				mon_buf_printf(b, "fabscope_probe_rtt_seconds_sum");
				cell_labels(b, e, p, l, k);
				mon_buf_printf(b, "} %.9g\n", h->sum);
				mon_buf_printf(b, "fabscope_probe_rtt_seconds_count");
				cell_labels(b, e, p, l, k);
				mon_buf_printf(b, "} %llu\n", (unsigned long long)h->count);
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

void mon_expo_probes(struct mon_buf *b, struct mon_engine *e)
{
	engine_series(b, e);
	head(b, "fabscope_probe_sent_total", "counter", "UDP probes sent, per peer, lane and source-port bucket");
	counter_cells(b, e, 0);
	head(b, "fabscope_probe_lost_total", "counter", "probes not answered within the probe timeout");
	counter_cells(b, e, 1);
	head(b, "fabscope_probe_rtt_seconds", "histogram", "round-trip time of the answered probes (software time)");
	hist_cells(b, e);
}

static json_t *cell_json(struct mon_engine *e, int p, int l, int k, const struct mon_cell *d, double interval_s,
			 const char *now)
{
	json_t *o = json_object(), *bk = json_array();

	for (int i = 0; i < MON_HIST_BUCKETS; i++)
		json_array_append_new(bk, json_integer((json_int_t)d->rtt.b[i]));
	json_object_set_new(o, "schema", json_string("fabscope.monitor/1"));
	json_object_set_new(o, "time", json_string(now));
	json_object_set_new(o, "node", json_string(e->peers.self));
	json_object_set_new(o, "peer", json_string(e->peers.p[p].name));
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

void mon_expo_jsonl(struct mon_buf *b, struct mon_engine *e, const struct mon_cell *prev, double interval_s)
{
	char now[40];

	clock_iso8601(now, sizeof(now));
	for (int p = 0; p < e->peers.n; p++)
		for (int l = 0; l < e->peers.nlanes; l++)
			for (int k = 0; k < e->o.buckets; k++) {
				const struct mon_cell *c = mon_cell(e, p, l, k);
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
					continue;
				o = cell_json(e, p, l, k, &d, interval_s, now);
				s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(9));
				if (s)
					mon_buf_printf(b, "%s\n", s);
				free(s);
				json_decref(o);
			}
}
